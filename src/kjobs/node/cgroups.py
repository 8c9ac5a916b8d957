"""Memory limits for container processes: cgroup v2, else cgroup v1, else an RSS watchdog.

Design note: `probe_memory_guard()` picks the mechanism once at start, most faithful first (each
probed on this kind of machine): a writable cgroup v2 memory controller, a writable cgroup v1 memory hierarchy,
or a watchdog that polls the resident memory of each limited container's process group. (RLIMIT_AS is
never used: it turns an OOM kill into an ordinary `MemoryError`, exit 1.)

A limited container gets its own cgroup below `kjobs-<pid>` in this process's own cgroup. The process
enters it before the command runs, through a tiny trampoline (`sh -c 'echo $$ > cgroup.procs; exec
"$@"'`): no `preexec_fn` (which slows every spawn 4×), and no window in which the command allocates
outside its limit (cgroup v1 does not move charges with a process). OOMKilled is read from the cgroup's
`oom_kill` counter (`memory.oom_control` on v1, `memory.events` on v2) — never inferred from exit 137.
The watchdog marks the kill itself, so its OOMKilled is equally explicit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from kjobs.node.shim import HANDOVER_FD

CGROUP_ROOT = Path("/sys/fs/cgroup")
WATCHDOG_INTERVAL = 0.05
_TRAMPOLINE = f'echo $$ > "$0" && exec "$@" {HANDOVER_FD}>&-'
"""Puts the container in its cgroup, then execs its command closing the handover pipe (`kjobs.node.shim`): its
command runs from here on."""
_TRAMPOLINE_KEEPING = 'echo $$ > "$0" && exec "$@"'
"""The same, handing the handover pipe on to the next kjobs wrapper (`kjobs.node.mountns`)."""


@dataclass(slots=True)
class Placement:
    """Where one limited container runs and how it is watched."""

    key: str
    limit: int
    path: Path | None = None
    argv_prefix: list[str] = field(default_factory=list)
    pgid: int | None = None
    oom: bool = False

    def argv_prefix_before_wrapper(self) -> list[str]:
        """`argv_prefix` for a container whose next program is another kjobs wrapper, which closes the handover
        pipe itself at its exec (`kjobs.node.shim`, `HANDOVER_FD`)."""
        return [_TRAMPOLINE_KEEPING if arg == _TRAMPOLINE else arg for arg in self.argv_prefix]


class MemoryGuard(Protocol):
    """Enforces per-container memory limits and tells whether a container was OOM-killed."""

    mechanism: str

    def place(self, key: str, limit: int) -> Placement:
        """Prepare a limited container before it is spawned (argv prefix to run it through)."""
        ...

    def attach(self, placement: Placement, pid: int) -> None:
        """Note the spawned process (its process group id equals its pid)."""
        ...

    def oom_killed(self, placement: Placement) -> bool:
        """Whether the limit killed the container (read after it exited)."""
        ...

    def release(self, placement: Placement) -> None:
        """Forget the container and remove its cgroup."""
        ...

    def close(self) -> None:
        """Remove everything the guard created."""
        ...


def _own_cgroup(controller: str | None) -> str | None:
    """This process's cgroup path for a v1 controller, or the v2 path when `controller` is None."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if controller is None and parts[0] == "0" and parts[1] == "":
            return parts[2]
        if controller is not None and controller in parts[1].split(","):
            return parts[2]
    return None


def _oom_count(path: Path, name: str) -> int:
    try:
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
    except (OSError, ValueError):
        return 0
    return 0


def _kill_members(path: Path) -> None:
    try:
        pids = (path / "cgroup.procs").read_text().split()
    except OSError:
        return
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError, PermissionError):
            os.kill(int(pid), signal.SIGKILL)


def _remove_cgroup(path: Path) -> bool:
    for _ in range(50):
        try:
            path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            _kill_members(path)
    return False


class _CgroupGuard:
    """Shared logic of the v1 and v2 guards: one child cgroup per limited container."""

    mechanism = "cgroup"
    limit_file = ""
    events_file = ""

    def __init__(self, parent: Path) -> None:
        self.parent = parent

    def _configure(self, path: Path, limit: int) -> None:
        raise NotImplementedError

    def place(self, key: str, limit: int) -> Placement:
        path = self.parent / key
        path.mkdir(exist_ok=True)
        self._configure(path, limit)
        return Placement(
            key=key,
            limit=limit,
            path=path,
            argv_prefix=["/bin/sh", "-c", _TRAMPOLINE, str(path / "cgroup.procs")],
        )

    def attach(self, placement: Placement, pid: int) -> None:
        placement.pgid = pid

    def oom_killed(self, placement: Placement) -> bool:
        if placement.path is None:
            return False
        return _oom_count(placement.path / self.events_file, "oom_kill") > 0

    def release(self, placement: Placement) -> None:
        if placement.path is not None:
            _remove_cgroup(placement.path)

    def close(self) -> None:
        if self.parent.exists():
            for child in self.parent.iterdir():
                if child.is_dir():
                    _remove_cgroup(child)
            _remove_cgroup(self.parent)


class CgroupV1Guard(_CgroupGuard):
    """cgroup v1 memory hierarchy: `memory.limit_in_bytes`, OOM kills counted in `memory.oom_control`."""

    mechanism = "cgroup-v1"
    events_file = "memory.oom_control"

    def _configure(self, path: Path, limit: int) -> None:
        (path / "memory.limit_in_bytes").write_text(str(limit))
        memsw = path / "memory.memsw.limit_in_bytes"
        if memsw.exists():
            with contextlib.suppress(OSError):
                memsw.write_text(str(limit))


class CgroupV2Guard(_CgroupGuard):
    """cgroup v2: `memory.max`, no swap, the whole cgroup killed together; OOM kills in `memory.events`."""

    mechanism = "cgroup-v2"
    events_file = "memory.events"

    def _configure(self, path: Path, limit: int) -> None:
        (path / "memory.max").write_text(str(limit))
        for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
            with contextlib.suppress(OSError):
                (path / name).write_text(value)


def _read_group_rss(pgids: set[int]) -> dict[int, int]:
    page = os.sysconf("SC_PAGE_SIZE")
    totals = dict.fromkeys(pgids, 0)
    try:
        entries = list(os.scandir("/proc"))
    except OSError:  # pragma: no cover - no procfs (not Linux): nothing can be measured
        return totals
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        # fields[0] is the state (stat field 3): pgrp is field 5, rss (pages) field 24.
        pgrp = int(fields[2])
        if pgrp in totals:
            totals[pgrp] += int(fields[21]) * page
    return totals


def read_group_rss(pgids: set[int]) -> dict[int, int]:
    """Resident bytes of every process in each of the process groups `pgids` (node-pressure eviction stats)."""
    return _read_group_rss(pgids)


class RssWatchdog:
    """Polls the resident memory of each limited container's process group; SIGKILLs it past the limit."""

    mechanism = "rss-watchdog"

    def __init__(self, *, interval: float = WATCHDOG_INTERVAL) -> None:
        self.interval = interval
        self._watched: dict[int, Placement] = {}
        self._task: asyncio.Task[None] | None = None

    def place(self, key: str, limit: int) -> Placement:
        return Placement(key=key, limit=limit)

    def attach(self, placement: Placement, pid: int) -> None:
        placement.pgid = pid
        self._watched[pid] = placement
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    def check(self) -> None:
        """One watchdog pass (public so tests and the loop share it)."""
        if not self._watched:
            return
        usage = _read_group_rss(set(self._watched))
        for pgid, used in usage.items():
            placement = self._watched.get(pgid)
            if placement is not None and used > placement.limit and not placement.oom:
                placement.oom = True
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pgid, signal.SIGKILL)

    async def _run(self) -> None:
        while self._watched:
            self.check()
            await asyncio.sleep(self.interval)

    def oom_killed(self, placement: Placement) -> bool:
        return placement.oom

    def release(self, placement: Placement) -> None:
        if placement.pgid is not None:
            self._watched.pop(placement.pgid, None)

    def close(self) -> None:
        self._watched.clear()
        if self._task is not None:
            self._task.cancel()


def _unique_name() -> str:
    """A parent cgroup name owned by one guard (several runtimes may live in one process)."""
    return f"kjobs-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def remove_dead_parents(directory: Path) -> list[str]:
    """Remove the empty parent cgroups (`_unique_name`) that kjobs processes now gone left in `directory`; return
    their names. A process killed (SIGKILL, the OOM killer) never removes its own, and each left behind holds one
    of the kernel's memory cgroup ids (at most 65,535: then no cgroup can be made at all). `rmdir` removes only
    an empty cgroup, so one that still holds a container (adopted by the next agent) stays."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        pid = entry.name.split("-")[1] if entry.name.startswith("kjobs-") and entry.name.count("-") == 2 else ""
        if not pid.isdigit() or _alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            os.rmdir(entry.path)
            removed.append(entry.name)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _try_v2(root: Path) -> MemoryGuard | None:
    mount = root if (root / "cgroup.controllers").exists() else root / "unified"
    own = _own_cgroup(None)
    if own is None or not (mount / "cgroup.controllers").exists():
        return None
    here = mount / own.lstrip("/")
    remove_dead_parents(here)
    parent = here / _unique_name()
    try:
        if "memory" not in (here / "cgroup.controllers").read_text().split():
            return None
        parent.mkdir()
        # Only our own child is configured: the memory controller must already be delegated to it.
        if "memory" not in (parent / "cgroup.controllers").read_text().split():
            raise OSError("memory controller not delegated")
        (parent / "cgroup.subtree_control").write_text("+memory")
        guard = CgroupV2Guard(parent)
        _self_test(guard)
        return guard
    except OSError:
        with contextlib.suppress(OSError):
            parent.rmdir()
        return None


def _try_v1(root: Path) -> MemoryGuard | None:
    own = _own_cgroup("memory")
    mount = root / "memory"
    if own is None or not (mount / "memory.limit_in_bytes").exists():
        return None
    remove_dead_parents(mount / own.lstrip("/"))
    parent = mount / own.lstrip("/") / _unique_name()
    try:
        parent.mkdir()
        guard = CgroupV1Guard(parent)
        _self_test(guard)
        return guard
    except OSError:
        with contextlib.suppress(OSError):
            parent.rmdir()
        return None


def _self_test(guard: _CgroupGuard) -> None:
    placement = guard.place("probe", 64 * 1024 * 1024)
    guard.release(placement)


def probe_memory_guard(*, root: Path = CGROUP_ROOT, allow_cgroups: bool = True) -> MemoryGuard:
    """Pick the memory-limit mechanism: cgroup v2, else v1, else the RSS watchdog."""
    if allow_cgroups:
        for attempt in (_try_v2, _try_v1):
            guard = attempt(root)
            if guard is not None:
                return guard
    return RssWatchdog()
