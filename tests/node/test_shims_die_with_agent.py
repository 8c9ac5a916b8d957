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
