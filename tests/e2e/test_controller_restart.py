"""Only the Job controller restarted: `kjobs controller` over HTTP, killed with SIGKILL while pods run.

Issue #13, point 7 ("Done when": "the same with only the controllers restarted (`kjobs controller` over HTTP):
no live pod loses its tracking finalizer"). `kjobs up --controllers '*,-job'` serves the API and runs every
other controller and one node; the Job controller runs apart and is killed twice while an Indexed Job's pods run.
Each pod process writes its index and exit code (the ground truth); the Job must count exactly those, and a watch
on the pods must never see a pod that is neither terminal nor being deleted without its tracking finalizer.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kjobs.api.names import JOB_TRACKING_FINALIZER
from kjobs.api.types import Obj
from kjobs.client.http import HttpClient
from kjobs.client.kubeconfig import load
from kjobs.client.resources import JOBS, NODES, PODS
from tests.e2e.processes import KjobsProcesses, free_port
from tests.e2e.support import condition, eventually, job_manifest, phase, terminal_condition

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

COMPLETIONS = 8
BYSTANDERS = 20
"""Suspended Jobs of 200 KB each beside the one that runs: on a cluster with many Jobs the Job list takes longer
than the pod list, so a restarted controller sees its pods before their Job (as the issue saw it)."""


class Processes(KjobsProcesses):
    """`kjobs up` (all but the Job controller) and `kjobs controller --controllers job`, output in files."""

    def up(self) -> None:
        self.spawn(
            "up",
            *("up", "--nodes", "1", "--controllers", "*,-job", "--port", str(free_port())),
            *("--data-dir", str(self.root / "data"), "--kubeconfig", str(self.kubeconfig)),
        )

    def job_controller(self) -> subprocess.Popen[bytes]:
        return self.spawn(
            "controller", "controller", "--controllers", "job", "--kubeconfig", str(self.kubeconfig), "--backoff", "0.2"
        )


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    procs = Processes(tmp_path)
    try:
        yield procs
    finally:
        procs.stop_all()


def _stripped_while_live(pod: Obj) -> bool:
    """A pod neither terminal nor being deleted that no longer carries the tracking finalizer: one the Job may
    never count. (The controller adds the finalizer when it creates the pod.)"""
    meta = pod["metadata"]
    return (
        phase(pod) not in ("Succeeded", "Failed")
        and not meta.get("deletionTimestamp")
        and JOB_TRACKING_FINALIZER not in (meta.get("finalizers") or [])
    )


async def _watch_pods(client: HttpClient, seen: list[Obj]) -> None:
    """Every version of every pod in `default`, from a list and then a watch, resumed where it ended."""
    items, version = await client.list(PODS, "default")
    seen.extend(items)
    while True:
        async for event in client.watch(PODS, "default", resource_version=version, timeout_seconds=60):
            if event.type in ("ADDED", "MODIFIED", "DELETED"):
                seen.append(event.object)
                version = str(event.object["metadata"]["resourceVersion"])


async def _node_ready(client: HttpClient) -> bool:
    try:
        nodes, _ = await client.list(NODES, None)
    except Exception:  # refused while the server starts
        return False
    return any(condition(n, "Ready").get("status") == "True" for n in nodes)


def test_job_controller_killed_and_restarted_while_pods_run_strips_no_live_finalizer(
    tmp_path: Path, processes: Processes
) -> None:
    truth, tries = tmp_path / "truth", tmp_path / "tries"
    tries.mkdir()
    # Odd indexes fail their first attempt (exit 1), every other attempt succeeds; each run writes "index code".
    command = (
        "sleep 1.5; i=$JOB_COMPLETION_INDEX; code=0; "
        f"if [ $((i % 2)) = 1 ] && mkdir {tries}/$i 2>/dev/null; then code=1; fi; "
        f'echo "$i $code" >> {truth}; exit $code'
    )
    manifest = job_manifest(
        "restarts", command, completionMode="Indexed", completions=COMPLETIONS, parallelism=4, backoffLimit=20
    )

    async def scenario() -> None:
        processes.up()
        await eventually(processes.kubeconfig.exists, what="kubeconfig written")
        client = HttpClient(load(processes.kubeconfig))
        seen: list[Obj] = []
        watcher: asyncio.Task[None] | None = None
        try:
            await eventually(lambda: _node_ready(client), timeout=30, what="node Ready")
            for n in range(BYSTANDERS):
                bystander = job_manifest(f"bystander-{n}", "true", suspend=True)
                bystander["metadata"]["annotations"] = {"example.com/payload": "x" * 200_000}
                await client.create(JOBS, "default", bystander)
            watcher = asyncio.get_running_loop().create_task(_watch_pods(client, seen))
            controller = processes.job_controller()
            await client.create(JOBS, "default", manifest)

            async def running(at_least: int) -> bool:
                pods, _ = await client.list(PODS, "default")
                return sum(1 for p in pods if phase(p) == "Running") >= at_least

            for round_ in range(2):  # killed with the first pods running, then again later in the Job
                await eventually(lambda: running(3), timeout=30, what=f"pods running (round {round_})")
                controller.send_signal(signal.SIGKILL)
                controller.wait(10)
                await asyncio.sleep(0.5)
                controller = processes.job_controller()
                await asyncio.sleep(1.0)

            async def finished() -> Obj | None:
                job: Obj = await client.get(JOBS, "default", "restarts")
                return job if terminal_condition(job) else None

            done: Obj = await eventually(finished, timeout=60, what="job finished")
            stripped = sorted({p["metadata"]["name"] for p in seen if _stripped_while_live(p)})
            assert stripped == [], f"live pods lost their tracking finalizer: {stripped}"
            runs = [tuple(map(int, line.split())) for line in truth.read_text().split("\n") if line.strip()]
            successes = sorted(i for i, code in runs if code == 0)
            failures = sum(1 for _, code in runs if code != 0)
            assert successes == list(range(COMPLETIONS))  # every index succeeded exactly once
            status = done["status"]
            assert terminal_condition(done)["type"] == "Complete"
            assert (status.get("succeeded"), status.get("failed", 0)) == (COMPLETIONS, failures)
            assert status["completedIndexes"] == f"0-{COMPLETIONS - 1}"

            async def all_finalizers_removed() -> bool:
                pods, _ = await client.list(PODS, "default")
                return all(JOB_TRACKING_FINALIZER not in (p["metadata"].get("finalizers") or []) for p in pods)

            await eventually(all_finalizers_removed, what="tracking finalizers removed")
            assert len({p["metadata"]["uid"] for p in seen}) == len(runs)  # one pod per run, none unaccounted
        finally:
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await watcher
            await client.close()

    try:
        asyncio.run(asyncio.wait_for(scenario(), 120))
    finally:
        print(processes.logs())
