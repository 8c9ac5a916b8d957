"""The stop signal reaches a container as it reaches a container's first process on a cluster (docs/sigterm42.md).

As PID 1 of its PID namespace, a container's first process ignores SIGTERM unless it has a handler for it, so
`sleep` or a shell script without a trap runs on until SIGKILL at the end of the grace period (137); a trap
gets SIGTERM, the trapping shell's children do not. A pod sharing its PID namespace (`shareProcessNamespace`)
has the pause container as PID 1: its containers' first processes die of SIGTERM at once (143).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kjobs.node import stopsignal
from kjobs.node.process_runtime import ProcessRuntime
from tests.node.helpers import make_pod
from tests.node.test_process_runtime import _alive, _log, eventually, sh, state, with_runtime

pytestmark = pytest.mark.e2e


async def _stop(runtime: ProcessRuntime, pod: dict[str, object], grace: float) -> tuple[dict[str, object], float]:
    """Start `pod`, wait for `up` in its log, delete it with `grace`: its main container's termination and the
    seconds it took to end."""
    handle = await runtime.run_pod(pod)
    await eventually(lambda: _log(runtime).startswith(b"up\n"), "start")
    # and reported started: a container not yet known to run is SIGKILLed at once
    await eventually(
        lambda: "running" in (handle.status.get("containerStatuses") or [{}])[0].get("state", {}), "running"
    )
    started = time.monotonic()
    await runtime.kill_pod(handle.uid, grace_seconds=grace)
    status = await handle.wait()
    assert status["phase"] == "Failed"
    return state(status)["state"]["terminated"], time.monotonic() - started


@pytest.mark.parametrize(
    "container",
    [
        {"name": "main", "image": "busybox", "command": ["sh", "-c", "echo up; exec sleep 30"]},
        sh("echo up; sleep 30"),  # the shell stays, with no trap
        {
            "name": "main",
            "image": "python",
            "command": [sys.executable, "-c", "print('up', flush=True); import time; time.sleep(30)"],
        },  # python, with no handler
    ],
    ids=["sleep", "shell", "python"],
)
def test_a_container_without_a_sigterm_handler_runs_until_sigkill_at_the_grace_end(
    tmp_path: Path, container: dict[str, object]
) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        terminated, took = await _stop(runtime, make_pod([container]), grace=1)
        assert took >= 1, (terminated, _log(runtime))
        assert (terminated["exitCode"], terminated["signal"], terminated["reason"]) == (137, 9, "Error")
        assert b"Terminated" not in _log(runtime)

    with_runtime(tmp_path, body)


def test_a_trap_gets_sigterm_at_once_and_its_children_do_not(tmp_path: Path) -> None:
    """The shell's trap runs (exit 7, well within the grace period); its child, which would write `child-term`
    on SIGTERM, is not signalled, and dies with its parent (SIGKILL, as a namespace's processes die with its
    init)."""
    child = "trap 'echo child >> child-term; exit 1' TERM; sleep 30 & wait"
    script = f"trap 'sleep 0.3; exit 7' TERM; sh -c \"{child}\" & echo $! > child.pid; echo up; wait"

    async def body(runtime: ProcessRuntime) -> None:
        terminated, took = await _stop(runtime, make_pod([sh(script)]), grace=5)
        assert took < 3
        assert (terminated["exitCode"], terminated.get("signal")) == (7, None)
        pod_dir = runtime.pod_dir("uid-1")
        assert not (pod_dir / "child-term").exists()
        pid = int((pod_dir / "child.pid").read_text())
        await eventually(lambda: not _alive(pid), "the child to die with its parent")

    with_runtime(tmp_path, body)


def test_a_blocked_sigterm_is_sent_for_sigwait(tmp_path: Path) -> None:
    """A process that blocks SIGTERM and waits for it (as tini or dumb-init do) gets it: the kernel queues a
    blocked signal even for a namespace's init."""
    program = (
        "import signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}); print('up', flush=True); "
        "signal.sigwait({signal.SIGTERM}); sys.exit(5)"
    )
    container = {"name": "main", "image": "python", "command": [sys.executable, "-c", program]}

    async def body(runtime: ProcessRuntime) -> None:
        terminated, took = await _stop(runtime, make_pod([container]), grace=5)
        assert took < 3
        assert terminated["exitCode"] == 5

    with_runtime(tmp_path, body)


@pytest.mark.parametrize("field", ["shareProcessNamespace", "hostPID"])
def test_a_container_sharing_a_pid_namespace_dies_of_sigterm_at_once(tmp_path: Path, field: str) -> None:
    """Its first process is not PID 1 (the pause container is, or the host's init): SIGTERM kills it (143)."""

    async def body(runtime: ProcessRuntime) -> None:
        terminated, took = await _stop(runtime, make_pod([sh("echo up; sleep 30")], **{field: True}), grace=5)
        assert took < 3
        assert (terminated["exitCode"], terminated["signal"]) == (143, 15)

    with_runtime(tmp_path, body)


def test_a_liveness_kill_of_a_container_without_a_handler_ends_137_after_the_grace_period(tmp_path: Path) -> None:
    container = {
        **sh("echo up; sleep 30"),
        "livenessProbe": {"exec": {"command": ["false"]}, "periodSeconds": 1, "failureThreshold": 1},
    }

    async def body(runtime: ProcessRuntime) -> None:
        handle = await runtime.run_pod(make_pod([container], terminationGracePeriodSeconds=1))
        status = await handle.wait()
        terminated = state(status)["state"]["terminated"]
        assert (status["phase"], terminated["exitCode"], terminated["signal"]) == ("Failed", 137, 9)
        assert terminated["finishedAt"] > terminated["startedAt"]

    with_runtime(tmp_path, body)


def test_takes_reads_the_handler_from_proc() -> None:
    """`takes` is True for a process with a handler (or the signal blocked), False for the default disposition
    and for an ignored signal."""
    then = "; import time; print(1, flush=True); time.sleep(9)"
    handler = (
        "import signal; signal.signal(signal.SIGTERM, lambda *a: None); signal.signal(signal.SIGUSR1, print)" + then
    )
    ignored = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN)" + then
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
        for code in (handler, ignored, then.removeprefix("; "))
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline() == b"1\n"
        assert [stopsignal.takes(p.pid, signal.SIGTERM) for p in procs] == [True, False, False]
        # Another signal's bit (not SIGINT: Python installs no handler for it where it starts ignored, as under
        # a non-interactive shell's `&`).
        assert (stopsignal.takes(procs[0].pid, signal.SIGUSR1), stopsignal.takes(procs[2].pid, signal.SIGUSR1)) == (
            True,
            False,
        )
        assert not stopsignal.send(procs[2].pid, -1, signal.SIGTERM, stopsignal.INIT)
        assert procs[2].poll() is None
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def test_a_process_blocking_every_signal_is_not_read_as_waiting_for_sigterm() -> None:
    """dash blocks every signal for a moment around a fork or exec: a stop read then as "blocked, so it takes it"
    was queued and killed `sh -c "sleep 30"` once it unblocked (143 at once, where an init drops it; seen under
    load). Everything blocked counts only while the process waits in `sigtimedwait` (tini); one signal blocked
    still counts."""
    then = "; import time; print(1, flush=True); time.sleep(9)"
    every = "import signal; signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())" + then
    one = "import signal; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})" + then
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE) for code in (every, one)]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline() == b"1\n"
        assert [stopsignal.takes(p.pid, signal.SIGTERM) for p in procs] == [False, True]
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def test_scope_of_the_stop_signal() -> None:
    assert stopsignal.scope_of({}, signal.SIGTERM) == stopsignal.INIT
    assert stopsignal.scope_of({"shareProcessNamespace": True}, signal.SIGTERM) == stopsignal.MAIN
    assert stopsignal.scope_of({"hostPID": True}, signal.SIGTERM) == stopsignal.MAIN
    assert stopsignal.scope_of({"shareProcessNamespace": True}, signal.SIGKILL) == stopsignal.GROUP


def test_send_drops_sigterm_for_an_init_without_a_handler_and_sends_it_to_a_shared_namespaces_process() -> None:
    """What the shim and an adopted container's `_signal` (no shim: read and sent in the agent) do."""
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert not stopsignal.send(proc.pid, -1, signal.SIGTERM, stopsignal.INIT)
        assert stopsignal.send(proc.pid, -1, signal.SIGTERM, stopsignal.MAIN)
        assert proc.wait(5) == -signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
