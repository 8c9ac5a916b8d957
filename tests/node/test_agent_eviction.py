"""Node-pressure eviction rules: threshold parsing, the kubelet's ranking and its exact message."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.node.eviction import (
    FakeMemoryMonitor,
    MemoryObservation,
    Threshold,
    ThresholdError,
    binary_si,
    eviction_message,
    is_critical,
    pod_memory_request,
    rank_for_memory_pressure,
    read_mem_available,
    threshold_met,
)

MI = 1 << 20


def pod(name: str, *, request: str | None = None, priority: int | None = None, containers: int = 1) -> Obj:
    def container(i: int) -> Obj:
        c: Obj = {"name": "main" if i == 0 else f"side{i}", "image": "busybox"}
        if request is not None:
            c["resources"] = {"requests": {"memory": request}}
        return c

    spec: dict[str, Any] = {"containers": [container(i) for i in range(containers)]}
    if priority is not None:
        spec["priority"] = priority
    return {"metadata": {"name": name, "uid": f"uid-{name}"}, "spec": spec}


def observe(available: int, **usage: int) -> MemoryObservation:
    return MemoryObservation(
        available_bytes=available,
        capacity_bytes=8 << 30,
        pods={f"uid-{name}": {"main": used} for name, used in usage.items()},
    )


@pytest.mark.parametrize(
    ("statement", "capacity", "expected_bytes", "text"),
    [
        pytest.param("memory.available<100Mi", 8 << 30, 100 * MI, "100Mi", id="binary"),
        pytest.param("memory.available<1Gi", 8 << 30, 1 << 30, "1Gi", id="gibibytes"),
        pytest.param("memory.available<500M", 8 << 30, 500_000_000, "500M", id="decimal"),
        pytest.param("memory.available<10%", 1000 * MI, 100 * MI, "100Mi", id="percentage"),
    ],
)
def test_thresholds_parse_and_print_like_the_kubelet(
    statement: str, capacity: int, expected_bytes: int, text: str
) -> None:
    threshold = Threshold.parse(statement)
    assert threshold.bytes_for(capacity) == expected_bytes
    assert threshold.text_for(capacity) == text


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        pytest.param("memory.available>100Mi", "invalid eviction threshold syntax", id="operator"),
        pytest.param("nodefs.available<10%", "unsupported eviction signal nodefs.available", id="signal"),
        pytest.param("memory.available<0", "must be positive", id="zero"),
        pytest.param("memory.available<-5%", "must be positive", id="negative-percent"),
        pytest.param("memory.available<lots", "quantities must match", id="quantity"),
    ],
)
def test_bad_thresholds_are_errors_with_the_kubelet_wording(statement: str, message: str) -> None:
    with pytest.raises(ThresholdError, match=message):
        Threshold.parse(statement)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (100 * MI, "100Mi"),
        (51200 * 1024, "50Mi"),
        (1536 * 1024, "1536Ki"),
        (1234567, "1234567"),
        (1 << 30, "1Gi"),
    ],
)
def test_binary_si_matches_quantity_string(value: int, text: str) -> None:
    assert binary_si(value) == text


def test_threshold_is_met_strictly_below() -> None:
    threshold = Threshold.parse("memory.available<100Mi")
    assert threshold_met(threshold, observe(100 * MI - 1))
    assert not threshold_met(threshold, observe(100 * MI))


def test_ranking_puts_pods_exceeding_requests_first_then_low_priority_then_largest_excess() -> None:
    within = pod("within", request="512Mi")
    small_excess = pod("small-excess", request="100Mi")
    big_excess = pod("big-excess", request="100Mi")
    important = pod("important", priority=1000)
    ranked = rank_for_memory_pressure(
        [within, important, small_excess, big_excess],
        observe(0, within=200 * MI, important=900 * MI, **{"small-excess": 150 * MI, "big-excess": 400 * MI}),
    )
    assert [p["metadata"]["name"] for p in ranked] == ["big-excess", "small-excess", "important", "within"]


def test_ranking_puts_pods_without_stats_first() -> None:
    measured, unmeasured = pod("measured"), pod("unmeasured")
    ranked = rank_for_memory_pressure([measured, unmeasured], observe(0, measured=900 * MI))
    assert [p["metadata"]["name"] for p in ranked] == ["unmeasured", "measured"]


def test_message_names_only_containers_over_their_request() -> None:
    victim = pod("v", request="64Mi", containers=2)
    observation = MemoryObservation(
        available_bytes=50 * MI, capacity_bytes=8 << 30, pods={"uid-v": {"main": 200 * MI, "side1": 10 * MI}}
    )
    message = eviction_message(victim, Threshold.parse("memory.available<100Mi"), observation)
    assert message == (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "
        "Container main was using 200Mi, request is 64Mi, has larger consumption of memory. "
    )


def test_message_without_stats_has_only_the_node_part() -> None:
    message = eviction_message(pod("v"), Threshold.parse("memory.available<100Mi"), observe(1536 * 1024))
    assert message == "The node was low on resource: memory. Threshold quantity: 100Mi, available: 1536Ki. "


def test_pod_request_counts_init_containers_and_overhead() -> None:
    p: Obj = {
        "spec": {
            "initContainers": [{"name": "i", "resources": {"requests": {"memory": "1Gi"}}}],
            "containers": [
                {"name": "a", "resources": {"requests": {"memory": "100Mi"}}},
                {"name": "b", "resources": {"requests": {"memory": "200Mi"}}},
            ],
            "overhead": {"memory": "10Mi"},
        }
    }
    assert pod_memory_request(p) == (1 << 30) + 10 * MI


def test_critical_pods_are_recognised_by_priority() -> None:
    assert is_critical(pod("c", priority=2_000_000_000))
    assert not is_critical(pod("n", priority=1_000_000_000))


def test_fake_monitor_reports_what_is_set() -> None:
    monitor = FakeMemoryMonitor(available_bytes=5, capacity_bytes=10)
    monitor.pods["u"] = {"main": 3}
    observed = monitor.observe()
    assert (observed.available_bytes, observed.capacity_bytes, dict(observed.pods)) == (5, 10, {"u": {"main": 3}})


def test_meminfo_is_read(tmp_path: Any) -> None:
    path = tmp_path / "meminfo"
    path.write_text("MemTotal:       16000000 kB\nMemFree: 1 kB\nMemAvailable:    8000000 kB\n")
    assert read_mem_available(str(path)) == (8000000 * 1024, 16000000 * 1024)
    assert read_mem_available(str(tmp_path / "missing")) == (0, 0)
