"""No container outlives its pod across an agent restart: what a killed agent's shim keeps running for a pod this
node will not run is killed by the next agent, and the shim then exits (the kubelet's `HandlePodCleanups`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import PODS
from kjobs.clock import RealClock
from kjobs.node import adoption
from kjobs.node.agent import NodeAgent, NodeAgentSettings
from kjobs.node.process_runtime import ProcessRuntime
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore
from tests.node.test_adoption import (
    _kill_agent_after_start,
    _running,
    _until,
    _until_gone,
    _wait_for,
    _written_journals,
)
from tests.node.test_process_runtime import sh

pytestmark = pytest.mark.e2e

NODE = "local"


def _pod(name: str, node: str, command: str, **spec: object) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", command]}],
            **spec,
        },
    }


def _shim_pids(root: Path) -> list[int]:
    """The shims that started containers (those whose journals have entries)."""
    found = [adoption.owners(path.name) for path in _written_journals(root / "journal")]
    return [int(owner[1].partition("-")[0]) for owner in found if owner is not None]


def _recorded(marks: Path, name: str, *, ignore_term: bool = False) -> Obj:
    """A container that writes its pid to `marks/<name>` and runs on (ignoring SIGTERM if asked)."""
    trap = "trap '' TERM; " if ignore_term else ""
    return sh(f"{trap}echo $$$$ > {marks}/{name}.tmp; mv {marks}/{name}.tmp {marks}/{name}; exec sleep 60")


def test_a_restarted_agent_kills_what_runs_for_pods_it_will_not_run(tmp_path: Path) -> None:
    """(a) a pod gone from the API, (b) one terminal there (as the zombie-agent race left one:
    `ContainerStatusUnknown`), (c) one bound to another node, (d) another pod of the same name: each left running
    under a killed agent's shim, each killed by the next agent; the terminal one after its grace period (it
    ignores SIGTERM), and the shim exits once nothing of it is left."""
    root, marks = tmp_path / "node", tmp_path / "marks"
    marks.mkdir()
    pids: dict[str, int] = {}

    async def body() -> None:
        service = ApiService(Storage(MemoryStore()), clock=RealClock().now)
        await service.ensure_namespaces()
        client = LocalClient(service)
        done = await client.create(PODS, "default", _pod("done", NODE, "exit 0", terminationGracePeriodSeconds=1))
        elsewhere = await client.create(PODS, "default", _pod("elsewhere", "other", "exit 0"))
        same = await client.create(PODS, "default", _pod("same", NODE, "exit 0"))
        uids = {
            "gone": "0b0b0b0b-0000-4000-8000-000000000001",
            "done": done["metadata"]["uid"],
            "elsewhere": elsewhere["metadata"]["uid"],
            "same": "0b0b0b0b-0000-4000-8000-000000000002",  # the old pod called "same"; the API has another
        }
        containers = {name: _recorded(marks, name, ignore_term=name == "done") for name in uids}
        await asyncio.to_thread(_kill_agent_after_start, root, {uids[n]: c for n, c in containers.items()})
        for name in uids:
            await asyncio.to_thread(_wait_for, marks / name)
            pids[name] = int((marks / name).read_text())
        shims = _shim_pids(root)
        status = {
            "phase": "Failed",
            "containerStatuses": [
                {
                    "name": "main",
                    "image": "busybox",
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "started": False,
                    "state": {"terminated": {"exitCode": 137, "reason": "ContainerStatusUnknown"}},
                }
            ],
        }
        await client.patch(PODS, "default", "done", {"status": status}, patch_type="merge", subresource="status")
        clock = RealClock()
        agent = NodeAgent(
            client,
            name=NODE,
            clock=clock,
            settings=NodeAgentSettings(),
            runtime_factory=lambda on_status: ProcessRuntime(root_dir=root, clock=clock, on_status=on_status),
        )
        await agent.start()
        try:
            started = time.monotonic()
            deadline = started + 20  # bounded; generous for a loaded 2-core machine
            while any(_running(pid) for name, pid in pids.items() if name != "done"):
                assert time.monotonic() < deadline, {n: _running(p) for n, p in pids.items()}
                await asyncio.sleep(0.01)
            while _running(pids["done"]):
                assert time.monotonic() < deadline, "the container of the terminal pod still runs"
                await asyncio.sleep(0.01)
            # SIGTERM was ignored: SIGKILL came after the grace period (1 s, raised to the 2 s minimum).
            assert time.monotonic() - started >= 1.5
            while any(_running(shim) for shim in shims):
                assert time.monotonic() < deadline, "a shim with nothing left did not exit"
                await asyncio.sleep(0.01)
            while (await client.get(PODS, "default", "same")).get("status", {}).get("phase") != "Succeeded":
                assert time.monotonic() < deadline, "the new pod of the same name did not run"  # it is not hurt
                await asyncio.sleep(0.05)
            assert (await client.get(PODS, "default", "same"))["metadata"]["uid"] == same["metadata"]["uid"]
            after = await client.get(PODS, "default", "done")
            assert after["status"]["phase"] == "Failed"  # its recorded status stands
            terminated = after["status"]["containerStatuses"][0]["state"]["terminated"]
            assert terminated["reason"] == "ContainerStatusUnknown"
        finally:
            await agent.stop()

    try:
        asyncio.run(body())
    finally:
        for pid in pids.values():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)


def test_a_clean_stop_kills_what_it_neither_adopted_nor_stopped(tmp_path: Path) -> None:
    """A clean stop removes the journals it read: a container they name that this agent never adopted (its pod's
    sync had not reached it) is killed first, or no later agent would know of it."""
    root, marks = tmp_path / "node", tmp_path / "marks"
    marks.mkdir()
    _kill_agent_after_start(root, {"waiting": _recorded(marks, "waiting")})
    _wait_for(marks / "waiting")
    pid = int((marks / "waiting").read_text())

    async def body() -> None:
        runtime = ProcessRuntime(root_dir=root)
        await runtime.shutdown(forget=True)

    try:
        asyncio.run(body())
        _until_gone(pid, "a container the stopped agent left behind still runs")
        # a shim of the killed agent still coming up when it died opens its (empty) journal late, after the stop
        # looked; it removes it as it exits, having nothing to journal
        _until(lambda: not list((root / "journal").iterdir()), f"journals left: {list((root / 'journal').iterdir())}")
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
