"""Rows of the kubelet's node-pressure eviction tests, on kjobs' eviction rules and node agent (virtual time).

Upstream: pkg/kubelet/eviction/helpers_test.go (TestOrderedBy*Memory, TestOrderedByPriority) and
eviction_manager_test.go (TestMemoryPressure, TestMemoryPressure_VerifyPodStatus, TestAdmitUnderNodeConditions).
docs/upstream-kubelet.md lists the rows, and those left out.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.client.resources import PODS
from kjobs.node.eviction import MemoryObservation, Threshold, ThresholdError, rank_for_memory_pressure
from kjobs.node.observations import KillReason
from kjobs.node.sim_runtime import Outcome
from tests.node.test_agent import Node, condition, start_node
from tests.support import settle

Mi = 1 << 20
Gi = 1 << 30
LOW, DEFAULT, HIGH = -1, 0, 1  # eviction_manager_test.go's lowPriority, defaultPriority, highPriority


def new_pod(name: str, priority: int, requests: str = "", limits: str = "") -> Obj:
    """helpers_test.go's newPod with one container named after the pod (memory requests and limits only)."""
    resources: Obj = {}
    if requests:
        resources["requests"] = {"memory": requests}
    if limits:
        resources["limits"] = {"memory": limits}
    container = {"name": name, "image": "busybox", "resources": resources}
    return {"metadata": {"name": name, "uid": name}, "spec": {"priority": priority, "containers": [container]}}


def ranked(pods: list[Obj], usage: dict[str, int]) -> list[str]:
    observation = MemoryObservation(
        available_bytes=0, capacity_bytes=8 * Gi, pods={name: {name: used} for name, used in usage.items()}
    )
    return [p["metadata"]["name"] for p in rank_for_memory_pressure(pods, observation)]


# ------------------------------------------------------------------------------------------ helpers_test.go


def test_ordered_by_exceeds_request_memory() -> None:
    below = new_pod("below-requests", -1, "200Mi")
    exceeds = new_pod("exceeds-requests", 1, "100Mi")
    assert ranked([below, exceeds], {"below-requests": 199 * Mi, "exceeds-requests": 101 * Mi}) == [
        "exceeds-requests",
        "below-requests",
    ]


def test_ordered_by_priority() -> None:
    low = new_pod("low-priority", -134)
    medium = new_pod("medium-priority", 1, "100Mi", "200Mi")
    high = new_pod("high-priority", 12534, "200Mi", "200Mi")
    assert ranked([high, medium, low], {}) == ["low-priority", "medium-priority", "high-priority"]


def test_ordered_by_memory() -> None:
    pods = [
        new_pod("best-effort-high", DEFAULT),
        new_pod("best-effort-low", DEFAULT),
        new_pod("burstable-high", DEFAULT, "100Mi", "1Gi"),
        new_pod("burstable-low", DEFAULT, "100Mi", "1Gi"),
        new_pod("guaranteed-high", DEFAULT, "1Gi", "1Gi"),
        new_pod("guaranteed-low", DEFAULT, "1Gi", "1Gi"),
    ]
    usage = {
        "best-effort-high": 500 * Mi,
        "best-effort-low": 300 * Mi,
        "burstable-high": 800 * Mi,
        "burstable-low": 300 * Mi,
        "guaranteed-high": 800 * Mi,
        "guaranteed-low": 200 * Mi,
    }
    assert ranked(pods, usage) == [
        "burstable-high",
        "best-effort-high",
        "best-effort-low",
        "burstable-low",
        "guaranteed-high",
        "guaranteed-low",
    ]


def test_ordered_by_priority_memory() -> None:
    rows = [
        ("above-requests-low-priority-high-usage", LOW, "", 500),
        ("above-requests-low-priority-low-usage", LOW, "", 50),
        ("above-requests-high-priority-high-usage", HIGH, "100Mi", 600),
        ("above-requests-high-priority-low-usage", HIGH, "100Mi", 150),
        ("below-requests-low-priority-high-usage", LOW, "1Gi", 800),
        ("below-requests-low-priority-low-usage", LOW, "1Gi", 200),
        ("below-requests-high-priority-high-usage", HIGH, "1Gi", 800),
        ("below-requests-high-priority-low-usage", HIGH, "1Gi", 200),
    ]
    pods = [new_pod(name, priority, request) for name, priority, request, _ in reversed(rows)]
    assert ranked(pods, {name: used * Mi for name, _, _, used in rows}) == [name for name, *_ in rows]


def test_soft_threshold_needs_its_grace_period() -> None:
    with pytest.raises(ThresholdError, match="grace period must be specified for the soft eviction threshold"):
        Threshold.parse_soft("memory.available<2Gi", "")
    assert Threshold.parse_soft("memory.available<2Gi", "memory.available=2m").grace_period == 120


# ------------------------------------------------------------------------------------ eviction_manager_test.go


async def _running(node: Node, pods: list[tuple[str, int, str, str]]) -> dict[str, str]:
    """Create running pods (name, priority, memory request, limit); returns uid -> name."""
    for name, priority, requests, limits in pods:
        resources: Obj = {}
        if requests:
            resources["requests"] = {"cpu": "100m", "memory": requests}
        if limits:
            resources["limits"] = {"cpu": "200m", "memory": limits}
        container = {"name": name, "image": "busybox", "resources": resources}
        await node.create_pod(name, priority=priority, containers=[container])
    await settle(node.clock, lambda: all(node.phase(name) == "Running" for name, *_ in pods))
    return {node.pod(name)["metadata"]["uid"]: name for name, *_ in pods}  # type: ignore[index]


def _record_kills(node: Node, uid_names: dict[str, str]) -> list[tuple[str, float]]:
    kills: list[tuple[str, float]] = []
    kill = node.runtime.kill_pod

    async def recording(uid: str, *, grace_seconds: float, reason: KillReason | None = None) -> None:
        if reason is not None and reason.reason == "Evicted":
            kills.append((uid_names.get(uid, uid), grace_seconds))
        await kill(uid, grace_seconds=grace_seconds, reason=reason)

    node.runtime.kill_pod = recording  # type: ignore[method-assign]
    return kills


def _run(scenario: Any, **settings: Any) -> None:
    async def main() -> None:
        node = await start_node({}, **settings)
        node.runtime.outcome = lambda pod, container, attempt: Outcome(duration=36000)
        try:
            await scenario(node)
        finally:
            await node.agent.stop()

    asyncio.run(main())


def test_memory_pressure() -> None:
    """TestMemoryPressure: a soft threshold reports MemoryPressure at once but evicts only after its grace period,
    with evictionMaxPodGracePeriod; the hard one evicts at once with 1 s; pressure outlasts the threshold by
    evictionPressureTransitionPeriod; BestEffort pods are refused meanwhile."""
    pods = [
        ("guaranteed-low-priority-high-usage", LOW, "1Gi", "1Gi"),
        ("burstable-below-requests", DEFAULT, "100Mi", "1Gi"),
        ("burstable-above-requests", DEFAULT, "100Mi", "1Gi"),
        ("best-effort-high-priority-high-usage", HIGH, "", ""),
        ("best-effort-low-priority-low-usage", LOW, "", ""),
    ]
    usage = [900 * Mi, 50 * Mi, 400 * Mi, 400 * Mi, 100 * Mi]

    async def scenario(node: Node) -> None:
        node.monitor.available_bytes = 2 * Gi
        uid_names = await _running(node, pods)
        node.monitor.pods = {uid: {name: used} for (uid, name), used in zip(uid_names.items(), usage, strict=True)}
        kills = _record_kills(node, uid_names)
        start = node.clock.now()
        await settle(node.clock, lambda: node.clock.now() - start >= 20)  # two eviction intervals: nothing met
        assert not node.agent.state.memory_pressure and kills == []

        # induce soft threshold
        node.monitor.available_bytes = 1500 * Mi
        induced = node.clock.now()
        await settle(node.clock, lambda: node.agent.state.memory_pressure)
        assert kills == []  # not before the soft threshold's grace period
        await settle(node.clock, lambda: bool(kills))
        assert node.clock.now() - induced >= 120
        assert kills == [("best-effort-low-priority-low-usage", 5)]  # evictionMaxPodGracePeriod

        # remove memory pressure
        node.monitor.available_bytes = 3 * Gi
        await settle(node.clock, lambda: not node.agent.state.memory_pressure)

        # induce memory pressure: the hard threshold evicts at once, with 1 s
        kills.clear()
        node.monitor.available_bytes = 500 * Mi
        await settle(node.clock, lambda: bool(kills))
        # the first victim is gone; the next in rank (exceeds its request, lowest priority of those left)
        assert kills == [("burstable-above-requests", 1)]
        assert node.agent.state.memory_pressure

        # the best-effort pod should not admit, burstable should
        await node.create_pod("best-admit")
        burstable = {"name": "main", "image": "busybox", "resources": {"requests": {"memory": "100Mi"}}}
        await node.create_pod("burst-admit", containers=[burstable])
        await settle(node.clock, lambda: node.phase("best-admit") == "Failed" and node.phase("burst-admit") != "")
        best = node.pod("best-admit")
        assert best is not None
        assert (best["status"]["reason"], best["status"]["message"]) == (
            "Evicted",
            "Pod was rejected: The node had condition: [MemoryPressure]. ",
        )
        assert node.phase("burst-admit") in ("Pending", "Running")

        # reduce memory pressure: still under pressure until the transition period has passed
        relieved = node.clock.now()
        node.monitor.available_bytes = 2 * Gi
        await settle(node.clock, lambda: not node.agent.state.memory_pressure)
        assert node.clock.now() - relieved >= 290

    _run(
        scenario,
        eviction_hard="memory.available<1Gi",
        eviction_soft="memory.available<2Gi",
        eviction_soft_grace_period="memory.available=2m",
        eviction_max_pod_grace_period=5,
    )


def test_memory_pressure_verify_pod_status() -> None:
    """TestMemoryPressure_VerifyPodStatus (with per-container stats, which the upstream row's fake lacks: the
    message then names the container, as helpers.go's containerMessageFmt)."""
    pods = [("below-requests", DEFAULT, "1Gi", "1Gi"), ("above-requests", DEFAULT, "100Mi", "1Gi")]

    async def scenario(node: Node) -> None:
        uid_names = await _running(node, pods)
        usage = {"below-requests": 900 * Mi, "above-requests": 700 * Mi}
        node.monitor.pods = {uid: {name: usage[name]} for uid, name in uid_names.items()}
        node.monitor.available_bytes = 1500 * Mi
        await settle(node.clock, lambda: node.phase("above-requests") == "Failed")
        message = (
            "The node was low on resource: memory. Threshold quantity: 2Gi, available: 1500Mi. "
            "Container above-requests was using 700Mi, request is 100Mi, has larger consumption of memory. "
        )
        pod = await node.client.get(PODS, "default", "above-requests")
        assert (pod["status"]["phase"], pod["status"]["reason"], pod["status"]["message"]) == (
            "Failed",
            "Evicted",
            message,
        )
        target = condition(pod, "DisruptionTarget")
        assert (target["status"], target["reason"], target["message"]) == ("True", "TerminationByKubelet", message)
        assert node.phase("below-requests") == "Running"

    _run(scenario, eviction_hard="memory.available<2Gi")


# ------------------------------------------------------------------------------- TestAdmitUnderNodeConditions


def _qos_pod(name: str, qos: str, **spec: Any) -> Obj:
    """`newPod(name, DefaultPriorityWhenNoDefaultClassExists, makeContainersByQOS(qos), nil)`."""
    container: Obj = {"name": f"{qos.lower()}-container", "image": "busybox"}
    amounts = {"cpu": "100m", "memory": "1Gi"}
    if qos == "Guaranteed":
        container["resources"] = {"requests": dict(amounts), "limits": dict(amounts)}
    elif qos == "Burstable":
        container["resources"] = {"requests": dict(amounts)}
    return {"metadata": {"name": name, "uid": name}, "spec": {"containers": [container], "priority": 0, **spec}}


ALLOCATABLE = {"cpu": "8", "memory": "64Gi", "pods": "110"}


@pytest.mark.parametrize(
    ("pressure", "expected"),
    [
        pytest.param(False, [True, True, True], id="no condition"),
        pytest.param(True, [True, True, False], id="MemoryPressure"),
    ],
)
def test_admit_under_node_conditions(pressure: bool, expected: list[bool]) -> None:
    """TestAdmitUnderNodeConditions, its MemoryPressure steps (kjobs has no DiskPressure): the guaranteed,
    burstable and best-effort pods are admitted, then under memory pressure only the best-effort one is refused."""
    from kjobs.node.admission import admit

    pods = [_qos_pod("guaranteed-pod", "Guaranteed"), _qos_pod("burstable-pod", "Burstable")]
    pods.append(_qos_pod("best-effort-pod", "BestEffort"))
    got = [admit(p, [], ALLOCATABLE, memory_pressure=pressure) is None for p in pods]
    assert got == expected


@pytest.mark.parametrize(
    ("spec", "admitted"),
    [
        pytest.param({"priority": 2_000_000_000}, True, id="critical best-effort pod"),
        pytest.param({"priority": 1_999_999_999}, False, id="best-effort pod just below critical"),
        pytest.param(
            {
                "tolerations": [
                    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"}
                ]
            },
            True,
            id="best-effort pod tolerating the memory-pressure taint",
        ),
        pytest.param({"tolerations": [{"operator": "Exists"}]}, True, id="best-effort pod tolerating every taint"),
        pytest.param(
            {
                "tolerations": [
                    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoExecute"}
                ]
            },
            False,
            id="best-effort pod tolerating it for NoExecute only",
        ),
        pytest.param(
            {"tolerations": [{"key": "node.kubernetes.io/disk-pressure", "operator": "Exists"}]},
            False,
            id="best-effort pod tolerating another taint",
        ),
    ],
)
def test_admit_under_memory_pressure_critical_and_tolerating_pods(spec: Obj, admitted: bool) -> None:
    """From the eviction manager's `Admit` (pkg/kubelet/eviction/eviction_manager.go; no upstream row): under
    memory pressure a critical pod is admitted whatever its QoS, "since they are required for system stability",
    and a BestEffort pod that tolerates the `node.kubernetes.io/memory-pressure` NoSchedule taint is admitted too.
    kjobs refused both with `Evicted` "The node had condition: [MemoryPressure]. "."""
    from kjobs.node.admission import MEMORY_PRESSURE_MESSAGE, admit

    pod = _qos_pod("best-effort-pod", "BestEffort", **spec)
    rejection = admit(pod, [], ALLOCATABLE, memory_pressure=True)
    if admitted:
        assert rejection is None
    else:
        assert rejection is not None and (rejection.reason, rejection.message) == ("Evicted", MEMORY_PRESSURE_MESSAGE)
