"""Leftover container processes of a dead agent are killed by the next runtime on the same root."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kjobs.node import leftovers
from kjobs.node.process_runtime import ProcessRuntime

pytestmark = pytest.mark.e2e


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def dead_owner(procs: Path) -> Path:
    """The record directory of an agent process that has exited."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    directory = procs / f"{gone.pid}-{12345}"
    directory.mkdir(parents=True)
    return directory


def running(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def exited_within(proc: subprocess.Popen[bytes], seconds: float = 5.0) -> int | None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            return code
        time.sleep(0.01)
    return None


def test_a_dead_owners_process_groups_are_killed(tmp_path: Path, sleeper: subprocess.Popen[bytes]) -> None:
    owner = dead_owner(tmp_path / "procs")
    leftovers.record(owner, sleeper.pid)
    assert leftovers.kill_leftovers(tmp_path / "procs") == [sleeper.pid]
    assert exited_within(sleeper) == -9
    assert not owner.exists()


def test_a_live_owners_processes_are_left_alone(tmp_path: Path, sleeper: subprocess.Popen[bytes]) -> None:
    mine = leftovers.owner_dir(tmp_path / "procs")
    leftovers.record(mine, sleeper.pid)
    assert leftovers.kill_leftovers(tmp_path / "procs") == []
    assert sleeper.poll() is None


def test_a_reused_pid_is_never_killed(tmp_path: Path, sleeper: subprocess.Popen[bytes]) -> None:
    owner = dead_owner(tmp_path / "procs")
    (owner / str(sleeper.pid)).write_text("1")  # another process once had this pid
    assert leftovers.kill_leftovers(tmp_path / "procs") == []
    assert sleeper.poll() is None


def test_a_new_runtime_kills_what_a_dead_agent_left_running(tmp_path: Path) -> None:
    """An agent killed with SIGKILL leaves its containers running; the next runtime on the root ends them."""
    script = (
        "import sys, asyncio\n"
        "from pathlib import Path\n"
        "from kjobs.node.process_runtime import ProcessRuntime\n"
        "from tests.node.helpers import make_pod\n"
        "async def main():\n"
        "    runtime = ProcessRuntime(root_dir=Path(sys.argv[1]))\n"
        "    command = ['sh', '-c', 'echo $$$$ > pid; exec sleep 30']\n"
        "    pod = make_pod([{'name': 'main', 'image': 'x', 'command': command}])\n"
        "    await runtime.run_pod(pod)\n"
        "    print('started', flush=True)\n"
        "    await asyncio.sleep(60)\n"
        "asyncio.run(main())\n"
    )
    repo = Path(__file__).resolve().parents[2]
    agent = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, cwd=repo)
    try:
        assert agent.stdout is not None and agent.stdout.readline() == b"started\n"
        pid_file = tmp_path / "pods" / "uid-1" / "pid"
        deadline = time.monotonic() + 5
        while not pid_file.exists() or not pid_file.read_text().strip():
            assert time.monotonic() < deadline, "the container never wrote its pid"
            time.sleep(0.01)
        container = int(pid_file.read_text())
    finally:
        agent.kill()
        agent.wait()
    try:
        assert running(container), "the container outlived its agent"
        ProcessRuntime(root_dir=tmp_path)
        deadline = time.monotonic() + 5
        while running(container):
            assert time.monotonic() < deadline, "the leftover container still runs"
            time.sleep(0.01)
    finally:
        if running(container):  # never leave the test's own process behind
            os.killpg(container, signal.SIGKILL)
