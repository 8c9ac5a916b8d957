"""A node agent back after its pods were deleted while it was away (docs/chaos.md, "Several nodes").

The taint manager deletes the pods of a node that stopped posting status (gracefully: they stay, terminating,
until their kubelet confirms), and the API server forgets nothing of it. A container that ended in the meantime
ended under its runtime, which keeps its exit: the kubelet that starts again relists the runtime and reports that
exit (pkg/kubelet/kubelet_pods.go `convertToAPIContainerStatuses` from the runtime's `PodStatus`); only a container
the runtime does not know is `ContainerStatusUnknown`. A Job's podFailurePolicy rules on exit codes (FailIndex,
FailJob, Count) see what the container did, not a 137 of kjobs' making.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from kjobs.api.types import Obj
from kjobs.client.http import HttpClient
from kjobs.client.kubeconfig import load
from kjobs.client.resources import PODS
from tests.e2e.support import eventually, phase, terminated
from tests.e2e.test_crash_safety import NODE, Processes, _answers, _node_ready, processes

__all__ = ["processes"]  # the fixture, imported for the test below
pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HOLD = "example.com/hold"
"""A finalizer that keeps the deleted pod readable after its agent confirms its end (as a Job's tracking one)."""


def _pod(name: str, marks: Path) -> Obj:
    command = f"touch {marks}/{name}.started; while [ ! -e {marks}/{name}.go ]; do sleep 0.05; done; exit 3"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "finalizers": [HOLD]},
        "spec": {
            "restartPolicy": "Never",
            "nodeName": NODE,
            "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", command]}],
        },
    }


@pytest.mark.parametrize("deleted", [True, False], ids=["deleted-while-away", "not-deleted"])
def test_a_container_that_ended_while_its_agent_was_away_is_reported_with_its_exit_code(
    tmp_path: Path, processes: Processes, deleted: bool
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()

    async def scenario() -> None:
        processes.start_server()
        await eventually(lambda: processes.kubeconfig.exists(), what="kubeconfig written")
        client = HttpClient(load(processes.kubeconfig))
        try:
            await eventually(lambda: _answers(client), what="API up")
            agent = processes.join_node()
            await eventually(lambda: _node_ready(client), what="node Ready")
            await client.create(PODS, "default", _pod("away", marks))
            await eventually(lambda: (marks / "away.started").exists(), timeout=30, what="the container started")

            async def running() -> bool:
                return phase(await client.get(PODS, "default", "away")) == "Running"

            await eventually(running, timeout=30, what="the pod reported Running")
            agent.send_signal(signal.SIGKILL)
            agent.wait(10)
            if deleted:  # as the taint manager deletes the pods of a node gone NotReady: gracefully
                await client.delete(PODS, "default", "away")
            (marks / "away.go").touch()  # it ends (exit 3) while no agent runs

            async def ended_under_its_shim() -> bool:  # its shell is gone, reaped by the shim that outlived the agent
                out = await asyncio.create_subprocess_exec(
                    "pgrep", "-f", f"{marks}/away.go", stdout=asyncio.subprocess.PIPE
                )
                found, _ = await out.communicate()
                return not found.strip()

            await eventually(ended_under_its_shim, timeout=30, what="the container ended")
            processes.join_node()

            async def reported() -> Obj | None:
                pod = await client.get(PODS, "default", "away")
                return pod if phase(pod) in ("Succeeded", "Failed") else None

            pod = await eventually(reported, timeout=30, what="the pod reported ended")
            state = terminated(pod)
            assert (phase(pod), state.get("exitCode"), state.get("reason")) == ("Failed", 3, "Error"), pod["status"]
            await client.patch(PODS, "default", "away", {"metadata": {"finalizers": None}}, patch_type="merge")
        finally:
            await client.close()

    asyncio.run(asyncio.wait_for(scenario(), 120))
