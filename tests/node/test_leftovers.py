"""Leftover container processes of a dead shim are killed by the next runtime on the same root (the runtime's
side: `tests/node/test_adoption.py`)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kjobs.node import leftovers

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


def test_a_zombie_owner_is_not_alive() -> None:
    """trial34: `kjobs up` killed with SIGKILL and started again at once found its predecessor still in /proc as
    a zombie (not yet reaped), took it for a live agent, skipped its shims' journals and reported every running
    container `ContainerStatusUnknown`. A zombie is dead."""
    child = subprocess.Popen(["true"])
    deadline = time.monotonic() + 5
    while running(child.pid) and time.monotonic() < deadline:
        time.sleep(0.01)  # exited, not reaped: a zombie
    started = leftovers.start_time(child.pid)
    try:
        assert started is not None and not running(child.pid)
        assert not leftovers.alive(f"{child.pid}-{started}")
    finally:
        child.wait()
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        assert leftovers.alive(f"{sleeper.pid}-{leftovers.start_time(sleeper.pid)}")
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_record_the_disk_has_no_room_for_is_skipped_not_raised(
    tmp_path: Path, sleeper: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk under the shim's record directory must not end the shim (an uncaught ENOSPC here killed the
    shim, and with it every container it ran: exit 137 for a pod that had only written too much log), nor leave
    an empty record behind."""
    import errno
    import os

    owner = leftovers.owner_dir(tmp_path / "procs")
    real_write = os.write

    def full(fd: int, data: bytes) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(owner)):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    leftovers.record(owner, sleeper.pid)
    assert list(owner.iterdir()) == []
