"""Memory-limit mechanism probing and cgroup placement."""

from __future__ import annotations

from pathlib import Path

import pytest

from kjobs.node.cgroups import CgroupV1Guard, CgroupV2Guard, probe_memory_guard


def test_probe_falls_back_to_watchdog_without_cgroups(tmp_path: Path) -> None:
    assert probe_memory_guard(root=tmp_path).mechanism == "rss-watchdog"
    assert probe_memory_guard(allow_cgroups=False).mechanism == "rss-watchdog"


@pytest.mark.e2e
def test_probed_cgroup_sets_limit_and_cleans_up() -> None:
    guard = probe_memory_guard()
    if not isinstance(guard, CgroupV1Guard | CgroupV2Guard):
        pytest.skip(f"no writable memory cgroup here ({guard.mechanism})")
    try:
        placement = guard.place("limit-test", 50 * 1024 * 1024)
        assert placement.path is not None
        limit_file = "memory.limit_in_bytes" if isinstance(guard, CgroupV1Guard) else "memory.max"
        assert (placement.path / limit_file).read_text().strip() == str(50 * 1024 * 1024)
        assert placement.argv_prefix[:2] == ["/bin/sh", "-c"]
        assert guard.oom_killed(placement) is False
        guard.release(placement)
        assert not placement.path.exists()
    finally:
        guard.close()
    assert not guard.parent.exists()


def _dead_pid() -> int:
    import subprocess

    gone = subprocess.Popen(["true"])
    gone.wait()
    return gone.pid


@pytest.mark.e2e
def test_a_killed_processs_parent_cgroup_is_removed_by_the_next_guard() -> None:
    """A kjobs killed with SIGKILL leaves its empty `kjobs-<pid>-<id>` memory cgroup (36 of them after an hour of
    stop 41's tests, each chaos run leaving some); each holds one of the kernel's 65,535 memory cgroup ids. The next
    guard made in the same cgroup removes those of processes gone, and only empty ones."""
    first = probe_memory_guard()
    if not isinstance(first, CgroupV1Guard | CgroupV2Guard):
        pytest.skip(f"no writable memory cgroup here ({first.mechanism})")
    here = first.parent.parent
    first.close()
    dead = _dead_pid()
    left = here / f"kjobs-{dead}-0badc0de"
    busy = here / f"kjobs-{dead}-0000beef"
    left.mkdir()
    busy.mkdir()
    (busy / "container").mkdir()  # a container's cgroup inside: an adopted container may still run there
    try:
        second = probe_memory_guard()
        second.close()
        assert not left.exists()
        assert busy.exists()
    finally:
        for path in (busy / "container", busy, left):
            if path.exists():
                path.rmdir()


def test_only_empty_parents_of_processes_gone_are_removed(tmp_path: Path) -> None:
    import os

    from kjobs.node.cgroups import remove_dead_parents

    dead = _dead_pid()
    names = [f"kjobs-{dead}-aaaa1111", f"kjobs-{os.getpid()}-bbbb2222", f"kjobs-{dead}-cccc3333", "kjobs-x-y", "other"]
    for name in names:
        (tmp_path / name).mkdir()
    (tmp_path / names[2] / "child").mkdir()
    assert remove_dead_parents(tmp_path) == [names[0]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names[1:])
