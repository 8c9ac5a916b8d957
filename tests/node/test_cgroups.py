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
