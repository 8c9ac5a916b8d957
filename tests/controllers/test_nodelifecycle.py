"""Node lifecycle controller on virtual time: heartbeats stop → Unknown conditions, taints, NotReady pods."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.client.resources import NODES, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.nodehealth import NodeHealth, observe, zone_state
from kjobs.controllers.nodelifecycle import NodeLifecycleController, NodeLifecycleSettings
from tests.controllers.disruption_support import (
    Heartbeats,
    condition,
    events_about,
    node_manifest,
    pod_manifest,
)
from tests.support import local_api, settle


def taint_keys(node: Obj) -> set[tuple[str, str]]:
    return {(t["key"], t["effect"]) for t in node.get("spec", {}).get("taints", [])}


async def cluster(*names: str, grace: float = 40.0) -> tuple[FakeClock, Any, NodeLifecycleController, Heartbeats]:
    clock = FakeClock()
    client = await local_api(clock)
    beats = Heartbeats(client, clock)
    for name in names:
        await client.create(NODES, None, node_manifest(name, clock))
        await beats.add(name)
    beats.start()
    controller = NodeLifecycleController(client, clock=clock, settings=NodeLifecycleSettings(grace_period=grace))
    await controller.start()
    return clock, client, controller, beats


def test_silent_node_becomes_unknown_and_unreachable_tainted_while_its_neighbour_stays_ready() -> None:
    async def scenario() -> None:
        clock, client, controller, beats = await cluster("alive", "dead")
        await client.create(PODS, "default", pod_manifest("p", "dead"))
        pod = await client.get(PODS, "default", "p")
        pod["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
        await client.update(PODS, "default", pod, subresource="status")
        await settle(clock, lambda: clock.now() - 1_767_225_600.0 > 30)
        beats.alive.discard("dead")
        stopped = clock.now()

        def tainted() -> bool:
            node = controller.nodes.get("", "dead")
            return node is not None and ("node.kubernetes.io/unreachable", "NoExecute") in taint_keys(node)

        await settle(clock, tainted)
        dead = await client.get(NODES, None, "dead")
        ready = condition(dead, "Ready")
        assert ready is not None
        assert (ready["status"], ready["reason"], ready["message"]) == (
            "Unknown",
            "NodeStatusUnknown",
            "Kubelet stopped posting node status.",
        )
        # The last renewal was at most 10 s before the stop; Unknown comes after the 40 s grace period.
        assert 30 <= parse_time(ready["lastTransitionTime"]) - stopped <= 45
        taint = next(t for t in dead["spec"]["taints"] if t["effect"] == "NoExecute")
        assert taint["key"] == "node.kubernetes.io/unreachable" and "timeAdded" in taint
        await settle(
            clock,
            lambda: (
                ("node.kubernetes.io/unreachable", "NoSchedule") in taint_keys(controller.nodes.get("", "dead") or {})
            ),
        )
        sample = controller.metrics.registry.get_sample_value
        assert sample("node_collector_evictions_total", {"zone": ""}) == 1.0
        assert sample("node_collector_zone_size", {"zone": ""}) == 2.0
        assert sample("node_collector_unhealthy_nodes_in_zone", {"zone": ""}) == 1.0
        assert sample("node_collector_zone_health", {"zone": ""}) == 50.0
        alive = await client.get(NODES, None, "alive")
        assert condition(alive, "Ready")["status"] == "True"
        assert not taint_keys(alive)
        pod = await client.get(PODS, "default", "p")
        assert condition(pod, "Ready")["status"] == "False"
        await controller.events.flush()
        assert await events_about(client, "dead", "NodeNotReady")
        assert await events_about(client, "p", "NodeNotReady")

        # The kubelet comes back: the NoExecute taint goes away.
        beats.alive.add("dead")
        dead = await client.get(NODES, None, "dead")
        dead["status"]["conditions"] = [
            dict(
                c,
                status="True",
                reason="KubeletReady",
                message="kubelet is posting ready status",
                lastHeartbeatTime=c["lastHeartbeatTime"].replace("00Z", "01Z"),
            )
            for c in dead["status"]["conditions"]
            if c["type"] == "Ready"
        ]
        await client.update(NODES, None, dead, subresource="status")
        await settle(clock, lambda: not taint_keys(controller.nodes.get("", "dead") or {}))
        await beats.stop()
        await controller.stop()

    asyncio.run(scenario())


def test_only_node_down_is_full_disruption_and_gets_no_noexecute_taint() -> None:
    async def scenario() -> None:
        clock, client, controller, beats = await cluster("solo")
        beats.alive.clear()
        await settle(
            clock, lambda: (condition(controller.nodes.get("", "solo") or {}, "Ready") or {}).get("status") == "Unknown"
        )
        await settle(clock, lambda: clock.now() >= 1_767_225_600.0 + 200)
        node = await client.get(NODES, None, "solo")
        assert ("node.kubernetes.io/unreachable", "NoExecute") not in taint_keys(node)
        assert ("node.kubernetes.io/unreachable", "NoSchedule") in taint_keys(node)
        await beats.stop()
        await controller.stop()

    asyncio.run(scenario())


def test_not_ready_condition_from_kubelet_gets_not_ready_taint() -> None:
    async def scenario() -> None:
        clock, client, controller, beats = await cluster("a", "b")
        node = await client.get(NODES, None, "b")
        node["status"]["conditions"][0].update(status="False", reason="KubeletNotReady", message="runtime down")
        await client.update(NODES, None, node, subresource="status")

        def has(key: tuple[str, str]) -> bool:
            return key in taint_keys(controller.nodes.get("", "b") or {})

        await settle(clock, lambda: has(("node.kubernetes.io/not-ready", "NoExecute")))
        await settle(clock, lambda: has(("node.kubernetes.io/not-ready", "NoSchedule")))
        assert not has(("node.kubernetes.io/unreachable", "NoExecute"))
        await beats.stop()
        await controller.stop()

    asyncio.run(scenario())


def ready_node(heartbeat: str, status: str = "True") -> Obj:
    return {
        "metadata": {"name": "n", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "status": {
            "conditions": [
                {"type": "Ready", "status": status, "lastHeartbeatTime": heartbeat, "lastTransitionTime": heartbeat}
            ]
        },
    }


T0 = parse_time("2026-01-01T00:00:00Z")


@pytest.mark.parametrize(
    ("elapsed", "expect_write"),
    [pytest.param(40.0, False, id="at-grace"), pytest.param(41.0, True, id="past-grace")],
)
def test_grace_period_boundary(elapsed: float, expect_write: bool) -> None:
    node = ready_node("2026-01-01T00:00:00Z")
    first = observe(node, None, None, now=T0, grace_period=40, startup_grace_period=60)
    later = observe(node, first.health, None, now=T0 + elapsed, grace_period=40, startup_grace_period=60)
    assert (later.new_status is not None) is expect_write
    if expect_write:
        assert later.current_ready is not None and later.current_ready["status"] == "Unknown"
        types = [c["type"] for c in later.new_status["conditions"]]
        assert types == ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"]
        assert later.new_status["conditions"][1]["reason"] == "NodeStatusNeverUpdated"


def test_lease_renewal_keeps_a_node_with_a_stale_heartbeat_healthy() -> None:
    node = ready_node("2026-01-01T00:00:00Z")
    seen = observe(node, None, T0, now=T0, grace_period=40, startup_grace_period=60)
    seen = observe(node, seen.health, T0 + 30, now=T0 + 30, grace_period=40, startup_grace_period=60)
    seen = observe(node, seen.health, T0 + 60, now=T0 + 60, grace_period=40, startup_grace_period=60)
    assert seen.new_status is None
    seen = observe(node, seen.health, T0 + 60, now=T0 + 101, grace_period=40, startup_grace_period=60)
    assert seen.new_status is not None


def test_node_that_never_posted_status_gets_the_startup_grace() -> None:
    node: Obj = {"metadata": {"name": "n", "creationTimestamp": "2026-01-01T00:00:00Z"}, "status": {}}
    assert observe(node, None, None, now=T0 + 60, grace_period=40, startup_grace_period=60).new_status is None
    seen = observe(node, NodeHealth(T0, T0, None), None, now=T0 + 61, grace_period=40, startup_grace_period=60)
    assert seen.new_status is not None
    ready = seen.new_status["conditions"][0]
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "Unknown",
        "NodeStatusNeverUpdated",
        "Kubelet never posted node status.",
    )


@pytest.mark.parametrize(
    ("statuses", "state"),
    [
        pytest.param(["True", "Unknown"], "Normal", id="one-of-two"),
        pytest.param(["Unknown"], "FullDisruption", id="all"),
        pytest.param(["True", "False", "False", "Unknown"], "PartialDisruption", id="three-of-four"),
        pytest.param(["True", "True", "False", "False"], "Normal", id="two-is-not-enough"),
    ],
)
def test_zone_states(statuses: list[str], state: str) -> None:
    conditions: list[Obj | None] = [{"type": "Ready", "status": s} for s in statuses]
    assert zone_state(conditions, 0.55)[1] == state


def test_running_controller_adds_beta_os_arch_labels_from_stable_ones() -> None:
    """A node labelled only with `kubernetes.io/os`/`arch` gets the beta labels too (reconcileNodeLabels)."""

    async def scenario() -> None:
        clock, client, controller, beats = await cluster()
        node = node_manifest("n1", clock, labels={"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"})
        await client.create(NODES, None, node)

        def labelled() -> bool:
            labels = ((controller.nodes.get("", "n1") or {}).get("metadata") or {}).get("labels") or {}
            return labels.get("beta.kubernetes.io/os") == "linux" and labels.get("beta.kubernetes.io/arch") == "amd64"

        await settle(clock, labelled)
        await beats.stop()
        await controller.stop()

    asyncio.run(scenario())
