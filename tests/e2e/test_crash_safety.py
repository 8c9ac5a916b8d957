"""Crash safety: `kjobs up` killed with SIGKILL mid-job and restarted on its data directory.

The control plane (`kjobs up --nodes 0`: API, controllers, SQLite data dir) and a node agent (`kjobs node join`)
run as separate processes, so the pods outlive the server. An Indexed Job with `backoffLimitPerIndex: 0` runs six
pods, each blocked on its own gate file: two finish (one fails) before the kill, two while the server is dead,
two after the restart. The Job must end exactly as if nothing had happened: `FailedIndexes`, succeeded 4,
failed 2 (what the pods' final phases say — nothing counted twice), six pods in all (none lost, none recreated),
every tracking finalizer removed.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.names import CONTROLLER_UID_LABEL
from kjobs.api.types import Obj
from kjobs.client.http import HttpClient
from kjobs.client.kubeconfig import load
from kjobs.client.resources import JOBS, NODES, PODS
from tests.e2e.processes import KjobsProcesses, free_port
from tests.e2e.support import condition, eventually, job_manifest, phase, terminal_condition, terminated

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
NODE = "crash-node"
FAILING = {1, 4}
"""Indexes whose pod exits 1 (a counted failure: with backoffLimitPerIndex 0 the index fails)."""


class Processes(KjobsProcesses):
    """`kjobs up` and `kjobs node join` subprocesses of one test, with output in files."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.port = free_port()
        self.server: subprocess.Popen[bytes] | None = None

    def start_server(self, *, nodes: int = 0, backoff: float = 10.0) -> None:
        self.server = self.spawn(
            "up",
            "up",
            "--nodes",
            str(nodes),
            "--backoff",
            str(backoff),
            "--port",
            str(self.port),
            "--data-dir",
            str(self.root / "data"),
            "--kubeconfig",
            str(self.kubeconfig),
        )

    def kill_server(self) -> None:
        assert self.server is not None
        self.server.send_signal(signal.SIGKILL)
        self.server.wait(10)

    def join_node(self) -> subprocess.Popen[bytes]:
        return self.spawn(
            "node",
            "node",
            "join",
            "--name",
            NODE,
            "--kubeconfig",
            str(self.kubeconfig),
            "--root-dir",
            str(self.root / "node"),
            "--shutdown-grace-period",
            "2",
        )


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    procs = Processes(tmp_path)
    try:
        yield procs
    finally:
        procs.stop_all(grace=10)


async def _answers(client: HttpClient) -> bool:
    try:
        await client.list(NODES, None)
    except (ApiError, OSError, Exception):  # refused while the server is down or starting
        return False
    return True


async def _node_ready(client: HttpClient, name: str = NODE) -> bool:
    try:
        node = await client.get(NODES, None, name)
    except Exception:
        return False
    return bool(condition(node, "Ready").get("status") == "True")


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def _index(pod: Obj) -> int:
    return int(pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"])


async def _pods(client: HttpClient, job: Obj) -> list[Obj]:
    pods, _ = await client.list(PODS, "default", label_selector=f"{CONTROLLER_UID_LABEL}={job['metadata']['uid']}")
    return list(pods)


@pytest.mark.parametrize(
    ("kill_at", "delay"),
    [("creating", 0.05), ("finishing", None), ("finishing", 0.0), ("finishing", 0.15), ("completing", 0.1)],
    ids=[
        "while-the-pods-are-created",
        "after-the-statuses-are-written",
        "as-the-pods-finish",
        "while-the-controller-counts",
        "while-the-job-completes",
    ],
)
def test_server_killed_mid_job_and_restarted_counts_exactly(
    tmp_path: Path, processes: Processes, kill_at: str, delay: float | None
) -> None:
    """The server is killed `delay` seconds after the Job is created (`creating`), after gates 0 and 1 open
    (`finishing`; None: once both pods are terminal in the API; 0 races their exit against the agent's status
    write, 0.15 against the Job controller's accounting), or after the last gates open (`completing`)."""
    gates = tmp_path / "gates"
    gates.mkdir()
    command = (
        f"while [ ! -e {gates}/$JOB_COMPLETION_INDEX ]; do sleep 0.05; done; "
        f'case "$JOB_COMPLETION_INDEX" in {"|".join(str(i) for i in sorted(FAILING))}) exit 1;; esac; exit 0'
    )
    manifest = job_manifest(
        "survivor", command, completionMode="Indexed", completions=6, parallelism=6, backoffLimitPerIndex=0
    )

    def open_gates(*indexes: int) -> None:
        for index in indexes:
            (gates / str(index)).touch()

    async def scenario() -> None:
        processes.start_server()
        await eventually(lambda: processes.kubeconfig.exists(), what="kubeconfig written")
        client = HttpClient(load(processes.kubeconfig))

        async def crash_and_restart(*, while_down: tuple[int, ...] = ()) -> None:
            processes.kill_server()
            open_gates(*while_down)  # these finish while no API server is there to hear about it
            processes.start_server()
            await eventually(lambda: _answers(client), what="API back")
            assert node.poll() is None, "the node agent must survive the server's death"

        try:
            await eventually(lambda: _answers(client), what="API up")
            node = processes.join_node()
            await eventually(lambda: _node_ready(client), what="node Ready")
            job = await client.create(JOBS, "default", manifest)
            if kill_at == "creating":
                await asyncio.sleep(delay or 0)
                await crash_and_restart()

            async def all_running() -> bool:
                pods = await _pods(client, job)
                return len(pods) == 6 and all(phase(p) == "Running" for p in pods)

            await eventually(all_running, what="six pods running")
            open_gates(0, 1)

            async def reported(indexes: tuple[int, ...]) -> bool:
                pods = {_index(p): p for p in await _pods(client, job)}
                return all(i in pods and phase(pods[i]) in ("Succeeded", "Failed") for i in indexes)

            if kill_at == "finishing":
                if delay is None:
                    await eventually(lambda: reported((0, 1)), what="indexes 0 and 1 finished")
                else:
                    await asyncio.sleep(delay)
                await crash_and_restart(while_down=(2, 3))
            else:
                open_gates(2, 3)
            await eventually(lambda: reported((0, 1, 2, 3)), what="indexes 0-3 reported")
            open_gates(4, 5)
            if kill_at == "completing":
                await asyncio.sleep(delay or 0)
                await crash_and_restart()

            async def finished() -> Obj | None:
                current: Obj = await client.get(JOBS, "default", "survivor")
                return current if terminal_condition(current) else None

            done: Obj = await eventually(finished, timeout=30, what="job finished")
            pods = await _pods(client, job)
            assert sorted(_index(p) for p in pods) == [0, 1, 2, 3, 4, 5]  # none lost, none recreated
            phases = {_index(p): phase(p) for p in pods}
            assert phases == {i: "Failed" if i in FAILING else "Succeeded" for i in range(6)}
            # every pod kept its process through the restart: its own exit code, not a lost container's 137
            exit_codes = {_index(p): terminated(p).get("exitCode") for p in pods}
            assert exit_codes == {i: 1 if i in FAILING else 0 for i in range(6)}
            status = done["status"]
            assert terminal_condition(done)["type"] == "Failed"
            assert terminal_condition(done)["reason"] == "FailedIndexes"
            assert (status.get("succeeded"), status.get("failed")) == (4, 2)  # each pod counted exactly once
            assert status["failedIndexes"] == "1,4"
            assert status["completedIndexes"] == "0,2,3,5"  # Kubernetes writes two adjacent indexes as "2,3"
            assert status.get("active", 0) == 0
            assert status.get("uncountedTerminatedPods") in (None, {}, {"succeeded": [], "failed": []})

            async def finalizers_removed() -> bool:
                return all(
                    TRACKING_FINALIZER not in (p["metadata"].get("finalizers") or []) for p in await _pods(client, job)
                )

            await eventually(finalizers_removed, what="tracking finalizers removed")
        finally:
            await client.close()

    try:
        asyncio.run(asyncio.wait_for(scenario(), 90))
    finally:
        print(processes.logs())


def test_node_agent_killed_and_restarted_adopts_the_running_pod(tmp_path: Path, processes: Processes) -> None:
    """`kjobs node join` killed with SIGKILL mid-job, then started again: the pod's process runs on (its shim
    outlives the agent), the new agent reports it Running as it was and then its real exit, and the Job counts
    it once (succeeded 1, failed 0, no replacement pod)."""
    pids = tmp_path / "pids"
    gate = tmp_path / "gate"
    command = f"echo $$$$ >> {pids}; while [ ! -e {gate} ]; do sleep 0.05; done; exit 0"
    manifest = job_manifest("agentloss", command, backoffLimit=2)

    async def scenario() -> None:
        processes.start_server()
        await eventually(lambda: processes.kubeconfig.exists(), what="kubeconfig written")
        client = HttpClient(load(processes.kubeconfig))
        try:
            await eventually(lambda: _answers(client), what="API up")
            node = processes.join_node()
            await eventually(lambda: _node_ready(client), what="node Ready")
            job = await client.create(JOBS, "default", manifest)

            async def running() -> Obj | None:
                pods = await _pods(client, job)
                return pods[0] if len(pods) == 1 and phase(pods[0]) == "Running" and pids.exists() else None

            victim: Obj = await eventually(running, what="the pod running")
            original = int(pids.read_text().split()[0])
            node.send_signal(signal.SIGKILL)
            node.wait(10)
            assert _alive(original), "the container outlives a killed agent"
            processes.join_node()
            await eventually(lambda: _node_ready(client), what="node Ready again")
            gate.touch()

            async def succeeded() -> Obj | None:
                current: Obj = await client.get(PODS, "default", victim["metadata"]["name"])
                return current if phase(current) in ("Succeeded", "Failed") else None

            ended: Obj = await eventually(succeeded, what="the adopted pod's end reported")
            state = terminated(ended)
            assert (phase(ended), state["exitCode"], state["reason"]) == ("Succeeded", 0, "Completed")
            started = victim["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]
            assert state["startedAt"] == started  # the same container, not a new one
            assert pids.read_text().split() == [str(original)]  # it ran once

            async def finished() -> Obj | None:
                current: Obj = await client.get(JOBS, "default", "agentloss")
                return current if terminal_condition(current) else None

            done: Obj = await eventually(finished, timeout=30, what="job finished")
            assert (terminal_condition(done)["type"], terminal_condition(done)["reason"]) == (
                "Complete",
                "CompletionsReached",
            )
            assert (done["status"].get("succeeded"), done["status"].get("failed", 0)) == (1, 0)
            assert len(await _pods(client, job)) == 1
        finally:
            await client.close()
            for line in pids.read_text().split() if pids.exists() else []:
                if _alive(int(line)):  # never leave the test's own process behind
                    os.killpg(int(line), signal.SIGKILL)

    try:
        asyncio.run(asyncio.wait_for(scenario(), 90))
    finally:
        print(processes.logs())
