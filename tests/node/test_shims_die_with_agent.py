"""A throw-away cluster's shims die with its process (`die_with_agent`, docs/orphans.md): an agent process
SIGKILLed while its containers run takes them with it, whole process groups; the same process whose spawning
thread ended (its event loop gone, the process alive) keeps them, which a `PR_SET_PDEATHSIG` shim would not."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

DEADLINE = 60.0

# An agent process: a `SpawnerPool` whose shims die with it starts one container (`sh` and two `sleep`s, its own
# process group), on an event loop of a thread that then ends; the container's group id is printed once it runs.
_AGENT = r"""
import asyncio, os, sys, threading
from kjobs.node.spawner import SpawnerPool

work = sys.argv[1]
started = threading.Event()
pools = []

def loop_thread():
    async def main():
        pool = SpawnerPool(
            base_env={"PATH": os.environ["PATH"]}, procs_dir=None, die_with_agent=True,
            on_started=lambda cid, pid: (print(pid, flush=True), started.set()),
            on_failed=lambda cid, message: (print("failed", message, flush=True), started.set()),
            on_exited=lambda cid, code: None,
        )
        pools.append(pool)  # kept: the pipes to the shims stay open after this thread ends
        pool.spawn("c1", ["sh", "-c", "sleep 300 & sleep 301; wait"], {}, work, os.path.join(work, "log"))
        while not started.is_set():
            await asyncio.sleep(0.01)
    asyncio.run(main())

thread = threading.Thread(target=loop_thread)
thread.start()
thread.join()
print("thread ended", flush=True)
threading.Event().wait()
"""


def _group(pgid: int) -> list[int]:
    """Live processes of process group `pgid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rfind(")") + 2 :].split()
        if fields[0] not in ("Z", "X") and int(fields[2]) == pgid:
            found.append(int(entry))
    return found


def test_a_killed_agent_process_takes_its_containers_but_not_a_finished_thread(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _AGENT, str(tmp_path)], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    pgid = 0
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first.isdigit(), first
        pgid = int(first)
        assert proc.stdout.readline().strip() == "thread ended"
        deadline = time.monotonic() + DEADLINE
        while len(_group(pgid)) < 3:  # sh and both sleeps
            assert time.monotonic() < deadline, f"the container's processes did not all start: {_group(pgid)}"
            time.sleep(0.02)
        # The spawning thread has ended: the shim's pipe is the process's, so the container runs on.
        time.sleep(0.5)
        assert len(_group(pgid)) == 3
        proc.kill()
        proc.wait(timeout=DEADLINE)
        deadline = time.monotonic() + DEADLINE
        while _group(pgid):
            assert time.monotonic() < deadline, f"left running: {_group(pgid)}"
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if pgid:
            for _ in range(3):
                try:
                    os.killpg(pgid, signal.SIGKILL)
                except ProcessLookupError:
                    break


# An agent process that admits a pod (`ProcessRuntime.prepare_volumes`' order: the shim told, then the pod's
# directory made) and is SIGKILLed in the same turn of its event loop, before any queued request could go out.
_ADMITTING_AGENT = r"""
import asyncio, os, signal, sys
from pathlib import Path
from kjobs.node.spawner import SpawnerPool

pods = Path(sys.argv[1])

async def main():
    pool = SpawnerPool(
        base_env={"PATH": os.environ["PATH"]}, procs_dir=None, die_with_agent=True, pods_dir=pods,
        on_started=lambda cid, pid: None, on_failed=lambda cid, message: None, on_exited=lambda cid, code: None,
    )
    pool.admitted("uid-1")
    (pods / "uid-1").mkdir()
    print(" ".join(str(pid) for pid in (p.pid for p in pool.processes())), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""


def test_a_pod_directory_made_just_before_the_agent_is_killed_is_removed(tmp_path: Path) -> None:
    """`kjobs run` SIGKILLed right after it made an admitted pod's directory, in the same turn of its loop: the
    shim already knew of the pod, so the directory goes with the run. Before, the shim was told at the end of the
    turn and the directory stayed (tests/cli/test_run_signals.py met it under load)."""
    pods = tmp_path / "pods"
    pods.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", _ADMITTING_AGENT, str(pods)], capture_output=True, text=True, timeout=DEADLINE
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    shims = [int(pid) for pid in done.stdout.split()]
    assert shims, done.stdout
    deadline = time.monotonic() + DEADLINE
    while any(_state(pid) not in ("Z", "X") for pid in shims):
        assert time.monotonic() < deadline, "the shims did not exit"
        time.sleep(0.02)
    assert os.listdir(pods) == []


def _state(pid: int) -> str:
    """A process's state letter (`/proc/PID/stat`), or "X" once it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "X"
    return raw[raw.rfind(")") + 2 :].split()[0]
