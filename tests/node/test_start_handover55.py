"""A container behind kjobs' wrappers (the cgroup trampoline of a memory limit, `kjobs.node.mountns` for its
volumes) is reported started once the last wrapper hands over to its command (`kjobs.node.shim`, `HANDOVER_FD`),
as a runtime reports a container started once its own process runs; a stop that comes before is held until
then. The wrappers are made slow by a `sleep` injected into the trampoline's script."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.node import adoption, cgroups
from kjobs.node.logs import render
from kjobs.node.observations import Attempt
from kjobs.node.process_runtime import ProcessRuntime
from tests.node.helpers import make_pod
from tests.node.test_process_runtime import eventually, sh, state, with_runtime

pytestmark = pytest.mark.e2e

WRAPPER_DELAY = 0.4
"""Seconds the injected sleep holds the trampoline before its exec."""

LIMIT = {"limits": {"memory": "64Mi"}}


@pytest.fixture
def slow_trampoline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both trampolines (closing the handover pipe, and keeping it for `mountns`) sleep before they exec."""
    if not cgroups.probe_memory_guard().mechanism.startswith("cgroup"):
        pytest.skip("no writable cgroup memory controller: a memory limit has no trampoline here")
    pause = f"sleep {WRAPPER_DELAY}; "
    monkeypatch.setattr(cgroups, "_TRAMPOLINE", pause + cgroups._TRAMPOLINE)
    monkeypatch.setattr(cgroups, "_TRAMPOLINE_KEEPING", pause + cgroups._TRAMPOLINE_KEEPING)


def _volume(container: Obj) -> Obj:
    return {**container, "volumeMounts": [{"name": "data", "mountPath": "/data"}]}


VOLUMES = [{"name": "data", "emptyDir": {}}]


def _log(runtime: ProcessRuntime, name: str = "main") -> bytes:
    path = runtime.log_dir / f"uid-1_{name}_0.log"
    return render(path.read_bytes()) if path.exists() else b""


async def _warm(runtime: ProcessRuntime) -> None:
    """Run a pod first: the shims are up, so that what follows measures the wrappers, not a shim's start."""
    await (await runtime.run_pod(make_pod([sh("true")], uid="uid-0", name="warm"))).wait()


def _attempts(runtime: ProcessRuntime, name: str) -> list[Attempt]:
    record = runtime.records.get("uid-1")
    return record.attempts.get(name, []) if record is not None else []


@pytest.mark.usefixtures("slow_trampoline")
def test_the_next_init_container_waits_for_the_sidecars_command_not_its_trampoline(tmp_path: Path) -> None:
    """Upstream's `should begin initializing the pod` (tests/e2e/test_k8s_node_e2e.py) under load: an init
    container after a sidecar must not start before the sidecar's command does."""

    async def body(runtime: ProcessRuntime) -> None:
        script = "trap 'exit 0' TERM; date +%s.%N > side; sleep 30 & wait"
        side = sh(script, "side", restartPolicy="Always", resources=LIMIT)
        pod = make_pod([sh("true")], init=[side, sh("date +%s.%N > next", "next")])
        await _warm(runtime)
        began = time.time()
        handle = await runtime.run_pod(pod)
        await asyncio.sleep(WRAPPER_DELAY / 2)
        attempt = _attempts(runtime, "side")[-1]
        assert not attempt.started, "reported started while its trampoline still sleeps"
        assert not _attempts(runtime, "next"), "the next init container was launched before the sidecar's command"
        status = await handle.wait()
        assert status["phase"] == "Succeeded"
        workdir = runtime.pod_dir("uid-1")
        side_ran, next_ran = (float((workdir / name).read_text()) for name in ("side", "next"))
        assert side_ran < next_ran
        assert attempt.started_at >= began + WRAPPER_DELAY  # startedAt: the handover, not the spawn

    with_runtime(tmp_path, body)


@pytest.mark.usefixtures("slow_trampoline")
def test_a_container_in_a_mount_namespace_is_started_once_mountns_execs_its_command(tmp_path: Path) -> None:
    """Trampoline, then `mountns`: the trampoline hands the pipe on, `mountns` closes it at its exec (the command
    holds no copy of it, else it would read started only at its exit)."""

    async def body(runtime: ProcessRuntime) -> None:
        script = "trap 'exit 3' TERM; [ -e /proc/self/fd/3 ] && echo leaked; echo up; sleep 30 & wait"
        pod = make_pod([_volume(sh(script, resources=LIMIT))], volumes=VOLUMES)
        runtime.prepare_volumes(pod, None)
        await _warm(runtime)
        handle = await runtime.run_pod(pod)
        await asyncio.sleep(WRAPPER_DELAY / 2)
        assert not _attempts(runtime, "main")[-1].started
        await eventually(lambda: _attempts(runtime, "main")[-1].started, "Running while its command runs")
        await eventually(lambda: _log(runtime) == b"up\n", "its first line")
        await runtime.kill_pod(handle.uid, grace_seconds=5)
        terminated = state(await handle.wait())["state"]["terminated"]
        assert terminated["exitCode"] == 3

    with_runtime(tmp_path, body)


@pytest.mark.usefixtures("slow_trampoline")
def test_a_command_missing_in_a_volume_fails_as_before(tmp_path: Path) -> None:
    """`mountns` cannot exec it: it says why in the log and exits 128 before any handover, reported once, ended."""

    async def body(runtime: ProcessRuntime) -> None:
        container = _volume({"name": "main", "image": "x", "command": ["/data/missing"], "resources": LIMIT})
        pod = make_pod([container], volumes=VOLUMES)
        runtime.prepare_volumes(pod, None)
        handle = await runtime.run_pod(pod)
        status = await handle.wait()
        terminated = state(status)["state"]["terminated"]
        assert (terminated["exitCode"], terminated["reason"]) == (128, "Error")
        assert status["phase"] == "Failed"
        message = b'failed to start container process: exec: "/data/missing": no such file or directory\n'
        assert _log(runtime) == message

    with_runtime(tmp_path, body)


def test_a_stop_during_the_wrappers_is_held_until_the_handover(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SIGTERM sent while the trampoline sleeps reaches the container's command, not the trampoline: in a pod
    sharing its PID namespace (the stop signal goes to the first process whatever its disposition,
    `kjobs.node.stopsignal`) it would end the trampoline, without handler. Here the trampoline's last step
    ignores SIGTERM for its command, so a held signal is ignored and the command ends by itself."""
    if not cgroups.probe_memory_guard().mechanism.startswith("cgroup"):
        pytest.skip("no writable cgroup memory controller: a memory limit has no trampoline here")
    monkeypatch.setattr(cgroups, "_TRAMPOLINE", f"sleep {WRAPPER_DELAY}; trap '' TERM; " + cgroups._TRAMPOLINE)

    async def body(runtime: ProcessRuntime) -> None:
        pod = make_pod([sh("echo ran; sleep 0.2; exit 7", resources=LIMIT)], shareProcessNamespace=True)
        handle = await runtime.run_pod(pod)
        await asyncio.sleep(0.05)
        await runtime.kill_pod(handle.uid, grace_seconds=5)
        terminated = state(await handle.wait())["state"]["terminated"]
        assert terminated["exitCode"] == 7
        assert _log(runtime) == b"ran\n"

    with_runtime(tmp_path, body)


@pytest.mark.usefixtures("slow_trampoline")
def test_a_stop_during_the_wrappers_reaches_the_command_at_the_handover(tmp_path: Path) -> None:
    """Held, the SIGTERM is sent once the command runs (not lost): it ends by it, well within its grace period
    (a pod sharing its PID namespace: the signal is sent whatever the command's disposition)."""

    async def body(runtime: ProcessRuntime) -> None:
        handle = await runtime.run_pod(make_pod([sh("exec sleep 30", resources=LIMIT)], shareProcessNamespace=True))
        await asyncio.sleep(0.05)
        stopped = time.monotonic()
        await runtime.kill_pod(handle.uid, grace_seconds=5)
        terminated = state(await handle.wait())["state"]["terminated"]
        assert (terminated["exitCode"], terminated["signal"]) == (143, 15)
        assert WRAPPER_DELAY / 2 < time.monotonic() - stopped < 4

    with_runtime(tmp_path, body)


@pytest.mark.usefixtures("slow_trampoline")
def test_an_adopting_agent_reads_the_start_time_reported_at_the_handover(tmp_path: Path) -> None:
    """The journal's start entry holds the spawn's time (`leftovers.still_container` checks the process against
    it); the time the agent reported at the handover is journaled after it ("h"), and what an adopting agent
    reads (`adoption.Recorded.reported_start`) is that one: a restarted agent reports the `startedAt` the first
    one did, where it read the spawn's, a second earlier when the wrappers straddled one (stop 56's CI run)."""
    spawned = 1_000_000_000.25
    clock = FakeClock(spawned)

    async def body(runtime: ProcessRuntime) -> None:
        handle = await runtime.run_pod(make_pod([sh("echo up; exec sleep 30", resources=LIMIT)], uid="uid-1"))
        clock.set(spawned + 7)  # the wrappers sleep WRAPPER_DELAY before the handover: it reads this time
        await eventually(lambda: "running" in state(handle.status)["state"], "the container to run")
        assert state(handle.status)["state"]["running"]["startedAt"] == "2001-09-09T01:46:47Z"
        journal = tmp_path / "journal"
        await eventually(
            lambda: any(b'["h",' in path.read_bytes() for path in journal.iterdir() if path.is_file()),
            "the handover's time journaled",
        )
        (path,) = [path for path in journal.iterdir() if b'"uid-1"' in path.read_bytes()]
        (recorded,) = [r for r in _read(path).values() if r.uid == "uid-1"]
        assert (recorded.started_at, recorded.reported_start) == (spawned, spawned + 7)
        await runtime.kill_pod("uid-1", grace_seconds=0)

    with_runtime(tmp_path, body, clock=clock)


def _read(path: Path) -> dict[str, adoption.Recorded]:
    journal = adoption.Journal(path, "0-0")
    adoption.read_new(journal)
    return journal.containers
