"""CPU and memory of a container's processes read from /proc (`kjobs.node.procstats`): a test's own process tree."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

import pytest

from kjobs.node import procstats

# The root (its own process group, as a container's main process) starts a child that holds 64 MiB and burns
# 0.3 s of CPU, and a grandchild that leaves the group (setsid): all are the container's.
_TREE = textwrap.dedent(
    """
    import os, subprocess, sys, time
    child = '''
    import os, sys, time
    if sys.argv[1] == "setsid":
        os.setsid()
    held = bytearray(64 << 20)
    held[::4096] = b"x" * len(held[::4096])
    while time.process_time() < 0.3:
        pass
    print("ready", flush=True)
    time.sleep(60)
    '''
    procs = [subprocess.Popen([sys.executable, "-c", child, mode], stdout=subprocess.PIPE, text=True)
             for mode in ("group", "setsid")]
    for p in procs:
        p.stdout.readline()
    print("ready", flush=True)
    time.sleep(60)
    """
)


@pytest.fixture
def tree() -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen([sys.executable, "-c", _TREE], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        yield proc
    finally:
        subprocess.run(["pkill", "-KILL", "-P", str(proc.pid)], check=False)  # its children, by parent id
        proc.kill()
        proc.wait()


def test_a_trees_usage_counts_its_group_and_its_descendants(tree: subprocess.Popen[str]) -> None:
    usage = procstats.tree_usage([tree.pid])[tree.pid]
    assert usage.memory_bytes >= 2 * (64 << 20)  # both children's held memory, the one that left the group too
    assert usage.cpu_seconds >= 0.5  # 0.3 s each (counted in clock ticks)
    assert abs(usage.started - time.time()) < 60  # the root's start, from its starttime since boot


def test_an_ended_root_has_no_usage() -> None:
    proc = subprocess.Popen(["true"])
    proc.wait()
    assert procstats.tree_usage([proc.pid]) == {}


def test_a_rate_is_over_the_window_since_the_previous_reading() -> None:
    rates = procstats.CpuRates()
    first = rates.rate("c", 100.0, procstats.Usage(cpu_seconds=4.0, memory_bytes=0, started=92.0))
    assert (first.cores, first.window) == (0.5, 8.0)  # first look: since the container started
    second = rates.rate("c", 110.0, procstats.Usage(cpu_seconds=9.0, memory_bytes=0, started=92.0))
    assert (second.cores, second.window, second.timestamp) == (0.5, 10.0, 110.0)
    # A reading under MIN_WINDOW after the last one measures from the one before it.
    third = rates.rate("c", 110.5, procstats.Usage(cpu_seconds=10.0, memory_bytes=0, started=92.0))
    assert (third.cores, third.window) == (6.0 / 10.5, 10.5)
    rates.keep([])
    again = rates.rate("c", 120.0, procstats.Usage(cpu_seconds=14.0, memory_bytes=0, started=92.0))
    assert again.window == 28.0  # forgotten: since the start again


def test_the_machine_usage_is_read() -> None:
    usage = procstats.machine_usage()
    assert usage.cpu_seconds > 0 and usage.memory_bytes > 0 and usage.started > 0
