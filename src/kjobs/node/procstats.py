"""CPU and memory of a container's processes, read from /proc when a Metrics API request asks (never per pod write).

A kubelet reads a container's usage from its cgroup (cAdvisor: `cpuacct`/`cpu.stat` usage, and the memory working
set `memory.usage - inactive_file`). kjobs' containers are process groups, not cgroups, so a container's figures are
those of its processes: the main process, every process of its process group, and their descendants (a child that
left the group with `setsid` still counts). CPU is the cumulative user+system time of the live processes plus what
their waited-for children used (`cutime`/`cstime`, proc(5)); memory is the resident set size (`rss`), the nearest
per-process measure of a working set. A node's figures are the machine's, as a kubelet's node stats are its root
cgroup's (`pkg/kubelet/stats`): busy time of `/proc/stat`'s `cpu` line and `MemTotal - MemFree - Inactive(file)`.

`CpuRates` turns cumulative CPU into the usage rate metrics-server reports: the rate between the previous reading
(at least `MIN_WINDOW` old) and now, over that window; on the first reading of a container the rate since it
started, of the node since the machine booted.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
MIN_WINDOW = 1.0
"""Seconds a reading must be old to be the start of a window (metrics-server's windows are its scrape interval)."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Cumulative CPU seconds and resident bytes of a process tree, with its root's start (epoch seconds)."""

    cpu_seconds: float
    memory_bytes: int
    started: float


@dataclass(frozen=True, slots=True)
class _Proc:
    ppid: int
    pgrp: int
    cpu_ticks: int
    rss_pages: int
    start_ticks: int


def _read_procs() -> dict[int, _Proc]:
    procs: dict[int, _Proc] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:  # pragma: no cover - no procfs (not Linux)
        return procs
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        # After the command's ")": state (field 3), ppid 4, pgrp 5, utime 14, stime 15, cutime 16, cstime 17,
        # starttime 22, rss 24 (proc(5)); fields[0] is field 3.
        f = data[data.rfind(b")") + 2 :].split()
        try:
            procs[int(name)] = _Proc(
                ppid=int(f[1]),
                pgrp=int(f[2]),
                cpu_ticks=int(f[11]) + int(f[12]) + int(f[13]) + int(f[14]),
                rss_pages=int(f[21]),
                start_ticks=int(f[19]),
            )
        except (IndexError, ValueError):
            continue
    return procs


def boot_time() -> float:
    """The machine's boot time in epoch seconds (`btime` of /proc/stat)."""
    try:
        with open("/proc/stat", "rb") as handle:
            for line in handle:
                if line.startswith(b"btime "):
                    return float(line.split()[1])
    except OSError:  # pragma: no cover - no procfs
        pass
    return 0.0


def tree_usage(roots: Iterable[int]) -> dict[int, Usage]:
    """Usage of each root pid's processes (its process group and its descendants), one pass over /proc. A root
    that has exited is absent from the answer."""
    wanted = set(roots)
    procs = _read_procs()
    owner: dict[int, int | None] = {}

    def owner_of(pid: int) -> int | None:
        chain: list[int] = []
        found: int | None = None
        while True:
            if pid in owner:
                found = owner[pid]
                break
            proc = procs.get(pid)
            if proc is None:
                break
            if pid in wanted or proc.pgrp in wanted:
                found = pid if pid in wanted else proc.pgrp
                break
            chain.append(pid)
            pid = proc.ppid
        for seen in chain:
            owner[seen] = found
        return found

    boot = boot_time()
    cpu: dict[int, int] = {}
    rss: dict[int, int] = {}
    for pid in procs:
        root = owner_of(pid)
        if root is None:
            continue
        proc = procs[pid]
        cpu[root] = cpu.get(root, 0) + proc.cpu_ticks
        rss[root] = rss.get(root, 0) + proc.rss_pages
    return {
        root: Usage(cpu[root] / TICKS, rss[root] * PAGE, boot + procs[root].start_ticks / TICKS)
        for root in wanted
        if root in procs and root in cpu
    }


def machine_usage() -> Usage:
    """The machine's cumulative busy CPU seconds (all CPUs) and its working set of memory."""
    busy = 0
    with open("/proc/stat", "rb") as handle:
        for line in handle:
            if line.startswith(b"cpu "):
                # user nice system idle iowait irq softirq steal (guest time is already in user and nice)
                values = [int(v) for v in line.split()[1:9]]
                busy = sum(values) - values[3] - values[4]
                break
    meminfo: dict[bytes, int] = {}
    with open("/proc/meminfo", "rb") as handle:
        for line in handle:
            key, _, rest = line.partition(b":")
            meminfo[key] = int(rest.split()[0]) * 1024
    memory = meminfo.get(b"MemTotal", 0) - meminfo.get(b"MemFree", 0) - meminfo.get(b"Inactive(file)", 0)
    return Usage(busy / TICKS, max(memory, 0), boot_time())


@dataclass(frozen=True, slots=True)
class Rate:
    """A CPU usage rate (cores) over `window` seconds ending at `timestamp` (epoch seconds)."""

    cores: float
    window: float
    timestamp: float


class CpuRates:
    """Cumulative CPU readings per key, turned into rates over a window (see the module note)."""

    def __init__(self) -> None:
        self._readings: dict[object, list[tuple[float, float]]] = {}

    def rate(self, key: object, now: float, usage: Usage) -> Rate:
        """The rate since the newest reading of `key` at least `MIN_WINDOW` old (else since `usage.started`)."""
        readings = self._readings.setdefault(key, [])
        start, before = usage.started, 0.0
        for t, cpu in reversed(readings):
            if now - t >= MIN_WINDOW:
                start, before = t, cpu
                break
        readings[:] = [(t, c) for t, c in readings if t >= start] + [(now, usage.cpu_seconds)]
        window = max(now - start, 1e-3)
        return Rate(max(usage.cpu_seconds - before, 0.0) / window, window, now)

    def keep(self, keys: Iterable[object]) -> None:
        """Forget the readings of every key not in `keys` (containers that ended)."""
        alive = set(keys)
        for key in [k for k in self._readings if k not in alive]:
            del self._readings[key]
