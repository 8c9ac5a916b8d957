"""A named pod outlives its node agent: the agent started again adopts it and keeps its hosts file current, so the
pod resolves a pod of its headless Service created after the restart (`ProcessRuntime.adopt`)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.client.http import HttpClient
from kjobs.client.kubeconfig import load
from kjobs.client.resources import PODS, SERVICES
from kjobs.node.process_runtime import mounting_enabled
from tests.e2e.support import eventually, phase
from tests.e2e.test_crash_safety import Processes, _answers, _node_ready

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(not mounting_enabled(), reason="no mount namespace can be made here"),
]


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    procs = Processes(tmp_path)
    try:
        yield procs
    finally:
        procs.stop_all(grace=10)


def _pod(name: str, command: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "mesh"}},
        "spec": {
            "hostname": name,
            "subdomain": "mesh",
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", command]}],
        },
    }


def test_an_adopted_pod_resolves_a_pod_created_after_the_agent_restarted(tmp_path: Path, processes: Processes) -> None:
    found = tmp_path / "found"
    waits = f"until getent hosts late.mesh >/dev/null; do sleep 0.1; done; echo late > {found}; sleep 600"

    async def scenario() -> None:
        processes.start_server()
        await eventually(lambda: processes.kubeconfig.exists(), what="kubeconfig written")
        client = HttpClient(load(processes.kubeconfig))
        try:
            await eventually(lambda: _answers(client), what="API up")
            node = processes.join_node()
            await eventually(lambda: _node_ready(client), what="node Ready")
            service = {"metadata": {"name": "mesh"}, "spec": {"clusterIP": "None", "selector": {"app": "mesh"}}}
            await client.create(SERVICES, "default", service)
            await client.create(PODS, "default", _pod("early", waits))

            async def running(name: str) -> Obj | None:
                pod: Obj = await client.get(PODS, "default", name)
                return pod if phase(pod) == "Running" else None

            await eventually(lambda: running("early"), what="early running")
            node.send_signal(signal.SIGKILL)
            node.wait(10)
            processes.join_node()
            await eventually(lambda: _node_ready(client), what="node Ready again")
            assert not found.exists()
            await client.create(PODS, "default", _pod("late", "sleep 600"))
            await eventually(lambda: found.exists(), what="early resolving late")
            assert found.read_text() == "late\n"
            for name in ("early", "late"):
                await client.delete(PODS, "default", name)
        finally:
            await client.close()

    asyncio.run(scenario())
