"""Upstream rows of test/integration/node/lifecycle_test.go, run against kjobs' node lifecycle and taint eviction
(and of test/integration/scheduler/taint/taint_test.go, against node lifecycle and the scheduler).

Upstream starts kube-apiserver, the node lifecycle controller (monitor grace 1 s, startup grace 1 min, monitor
period 1 ms, eviction QPS 100 / 100, large cluster 50, unhealthy zone 0.55) and, per row, the taint eviction
controller, then writes nodes and pods by hand; here the in-process API and kjobs' real controllers run on
virtual time with those settings. Upstream's poll windows are virtual seconds.

`SeparateTaintEvictionController` (beta and on in v1.32): with it off, kube-controller-manager's node lifecycle
controller runs the taint manager itself; kjobs has the separate controller only, so a "disabled" row runs the
node lifecycle controller together with the taint eviction controller, which is what the gate changes into.
Rows, and those left out: docs/upstream-components.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.client.resources import NODES, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.nodelifecycle import NodeLifecycleController, NodeLifecycleSettings
from kjobs.controllers.scheduler import Scheduler
from kjobs.controllers.tainteviction import TaintEvictionController
from tests.controllers.disruption_support import condition, get_or_none
from tests.controllers.upstream_support import poll_until, run_for
from tests.support import local_api

NODE_COUNT = 3  # we need at least 2 nodes to prevent lifecycle manager from entering "fully-disrupted" mode
NODE_INDEX = 1  # the exact node doesn't matter, pick one
EXCLUDE_DISRUPTION = "node.kubernetes.io/exclude-disruption"
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
LIFECYCLE = NodeLifecycleSettings(
    grace_period=1.0,
    startup_grace_period=60.0,
    monitor_period=0.01,
    eviction_qps=100.0,
    secondary_eviction_qps=100.0,
    large_cluster_threshold=50,
    unhealthy_zone_threshold=0.55,
)


@dataclass
class Env:
    clock: FakeClock
    client: Any

    async def pod(self, name: str) -> Obj | None:
        return await get_or_none(self.client, PODS, "default", name)


@asynccontextmanager
async def controllers(*, taint_eviction: bool) -> AsyncIterator[Env]:
    """The API, the node lifecycle controller and, when asked, the taint eviction controller, started."""
    clock = FakeClock()
    client = await local_api(clock)
    running: list[Any] = [NodeLifecycleController(client, clock=clock, settings=LIFECYCLE)]
    if taint_eviction:
        running.append(TaintEvictionController(client, clock=clock))
    for controller in running:
        await controller.start()
    try:
        yield Env(clock, client)
    finally:
        for controller in running:
            await controller.stop()


def node_body(name: str, ready: str, labels: dict[str, str], **status: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {},
        "status": {"conditions": [{"type": "Ready", "status": ready}], **status},
    }


def getting_evicted(pod: Obj | None) -> bool:
    """`testutils.PodIsGettingEvicted`: the pod has a deletionTimestamp."""
    return pod is not None and bool((pod.get("metadata") or {}).get("deletionTimestamp"))


# ------------------------------------------------------------------ TestEvictionForNoExecuteTaintAddedByUser


@pytest.mark.parametrize(
    ("start_taint_eviction", "want_evicted"),
    [
        pytest.param(
            True,
            True,
            id="Test eviction for NoExecute taint added by user; pod condition added; separate taint eviction "
            "controller disabled",
        ),
        pytest.param(
            False,
            False,
            id="Test eviction for NoExecute taint added by user; separate taint eviction controller enabled but not "
            "started",
        ),
        pytest.param(
            True,
            True,
            id="Test eviction for NoExecute taint added by user; separate taint eviction controller enabled and "
            "started",
        ),
    ],
)
def test_eviction_for_no_execute_taint_added_by_user(start_taint_eviction: bool, want_evicted: bool) -> None:
    """A NoExecute taint a user puts on a node evicts the pod that does not tolerate it, marked DisruptionTarget
    (`DeletionByTaintManager`) — by the taint eviction controller: the node lifecycle controller alone does not."""

    async def scenario() -> None:
        async with controllers(taint_eviction=start_taint_eviction) as env:
            names = [f"testnode-{i}" for i in range(NODE_COUNT)]
            for name in names:
                await env.client.create(NODES, None, node_body(name, "True", {EXCLUDE_DISRUPTION: "true"}))
            body: Obj = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "testpod", "namespace": "default"},
                "spec": {"nodeName": names[NODE_INDEX], "containers": [{"name": "container", "image": "pause"}]},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
            }
            await env.client.create(PODS, "default", body)
            node = await env.client.get(NODES, None, names[NODE_INDEX])
            node["spec"].setdefault("taints", []).append({"key": "CustomTaintByUser", "effect": "NoExecute"})
            await env.client.update(NODES, None, node)

            async def evicted() -> bool:
                return getting_evicted(await env.pod("testpod"))

            if want_evicted:
                await poll_until(env.clock, evicted, window=20, what="the eviction of testpod")
            else:
                await run_for(env.clock, 20)
                assert not await evicted(), "unexpected eviction of testpod"
            pod = await env.pod("testpod")
            assert pod is not None
            target = condition(pod, "DisruptionTarget")
            if want_evicted:
                assert target is not None
                assert (target["status"], target["reason"], target["message"]) == (
                    "True",
                    "DeletionByTaintManager",
                    "Taint manager: deleting due to NoExecute taint",
                )
            else:
                assert target is None

    asyncio.run(scenario())


# ----------------------------------------------------------------------------------- TestTaintBasedEvictions

NOT_READY_TAINTS = [{"key": NOT_READY, "effect": "NoExecute"}]
UNREACHABLE_TAINTS = [{"key": UNREACHABLE, "effect": "NoExecute"}]


def tolerating_pod(seconds: int) -> Obj:
    """Upstream's `testPod`, with `tolerations[0].tolerationSeconds` set to the row's value."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "testpod", "namespace": "default", "deletionGracePeriodSeconds": 0},
        "spec": {
            "containers": [{"name": "container", "image": "pause"}],
            "tolerations": [
                {"key": NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}
            ],
            "terminationGracePeriodSeconds": 1,
        },
    }


def plain_pod() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "testpod", "namespace": "default"},
        "spec": {"containers": [{"name": "container", "image": "pause"}]},
    }


def toleration_seconds(pod: Obj) -> int | None:
    """`testutils.GetTolerationSeconds`: the first `Exists` NoExecute toleration of not-ready's seconds."""
    for tol in (pod.get("spec") or {}).get("tolerations") or []:
        if tol.get("key") == NOT_READY and tol.get("effect") == "NoExecute" and tol.get("operator") == "Exists":
            seconds = tol.get("tolerationSeconds")
            return int(seconds) if seconds is not None else None
    return None


def _taint_rows() -> list[Any]:
    rows = []
    for gate in ("disabled", "enabled"):
        rows += [
            pytest.param(
                NOT_READY_TAINTS,
                "False",
                tolerating_pod(200),
                200,
                id=f"Taint based evictions for NodeNotReady and 200 tolerationseconds; separate taint eviction "
                f"controller {gate}",
            ),
            pytest.param(
                NOT_READY_TAINTS,
                "False",
                plain_pod(),
                300,
                id=f"Taint based evictions for NodeNotReady with no pod tolerations; separate taint eviction "
                f"controller {gate}",
            ),
            pytest.param(
                NOT_READY_TAINTS,
                "False",
                tolerating_pod(0),
                0,
                id=f"Taint based evictions for NodeNotReady and 0 tolerationseconds; separate taint eviction "
                f"controller {gate}",
            ),
            pytest.param(
                UNREACHABLE_TAINTS,
                "Unknown",
                None,
                0,
                id=f"Taint based evictions for NodeUnreachable; separate taint eviction controller {gate}",
            ),
        ]
    order = [0, 4, 1, 5, 2, 6, 3, 7]  # upstream lists each row's disabled and enabled twins together
    return [rows[i] for i in order]


@pytest.mark.parametrize(("node_taints", "ready", "pod", "seconds"), _taint_rows())
def test_taint_based_evictions(node_taints: list[Obj], ready: str, pod: Obj | None, seconds: int) -> None:
    """A node whose Ready condition is False (Unknown) gets the not-ready (unreachable) NoExecute taint; a pod
    on it that tolerates it for 200 s, or for DefaultTolerationSeconds' 300 s, stays, with those seconds; one
    that tolerates it for 0 s is evicted at once."""

    async def scenario() -> None:
        async with controllers(taint_eviction=True) as env:
            resources = {"cpu": "4000m", "memory": "16Gi", "pods": "110"}
            labels = {
                "topology.kubernetes.io/region": "region1",
                "topology.kubernetes.io/zone": "zone1",
                EXCLUDE_DISRUPTION: "true",
            }
            names = [f"node-{i}" for i in range(NODE_COUNT)]
            for i, name in enumerate(names):
                status = ready if i == NODE_INDEX else "True"
                body = node_body(name, status, labels, capacity=resources, allocatable=resources)
                await env.client.create(NODES, None, body)
            if pod is not None:
                pod["spec"]["nodeName"] = names[NODE_INDEX]
                await env.client.create(PODS, "default", pod)

            async def tainted() -> bool:  # testutils.WaitForNodeTaints: the node has (at least) these taints
                node = await env.client.get(NODES, None, names[NODE_INDEX])
                have = {(t["key"], t["effect"]) for t in (node.get("spec") or {}).get("taints") or []}
                return all((t["key"], t["effect"]) in have for t in node_taints)

            await poll_until(env.clock, tainted, window=30, what=f"taints {node_taints}")
            if pod is None:
                return

            async def as_expected() -> bool:
                got = await env.pod("testpod")
                assert got is not None
                if seconds == 0:  # as the node is not ready, the pod is Terminating rather than gone
                    return getting_evicted(got)
                return toleration_seconds(got) == seconds and not getting_evicted(got)

            await poll_until(env.clock, as_expected, window=15, what="the pod's expected state")

    asyncio.run(scenario())


# ---------------------------------------------------------- TestTaintNodeByCondition (scheduler/taint/taint_test.go)

MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
PID_PRESSURE = "node.kubernetes.io/pid-pressure"
NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
BEST_EFFORT, BURSTABLE, GUARANTEED = "besteffort-pod", "burstable-pod", "guarantee-pod"


def tolerate(key: str) -> Obj:
    return {"key": key, "operator": "Exists", "effect": "NoSchedule"}


def qos_pod(kind: str, index: int, tolerations: list[Obj]) -> Obj:
    """`newPod`: BestEffort (no resources), Burstable (requests 100m/100Mi) or Guaranteed (limits too).

    Upstream's API runs PodTolerationRestriction, which gives every pod that is not BestEffort a memory-pressure
    NoSchedule toleration; kjobs' API does not have that (optional) plugin, so the port adds the toleration
    that the plugin would."""
    resources: Obj = {}
    if kind != BEST_EFFORT:
        resources["requests"] = {"cpu": "100m", "memory": "100Mi"}
        tolerations = [*tolerations, tolerate(MEMORY_PRESSURE)]
    if kind == GUARANTEED:
        resources["limits"] = {"cpu": "100m", "memory": "100Mi"}
    spec: Obj = {"containers": [{"name": "busybox", "image": "busybox", "resources": resources}]}
    if tolerations:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{kind}-{index}", "namespace": "default"}} | {
        "spec": spec
    }


def _conditions(**statuses: str) -> list[Obj]:
    return [{"type": kind, "status": status} for kind, status in statuses.items()]


NOT_SCHEDULABLE_WITHOUT = [(BEST_EFFORT, [], False), (BURSTABLE, [], False), (GUARANTEED, [], False)]

TAINT_NODE_BY_CONDITION = [
    pytest.param(
        _conditions(Ready="False"),
        False,
        [NOT_READY],
        [*NOT_SCHEDULABLE_WITHOUT, (BEST_EFFORT, [NOT_READY], True)],
        id="not-ready node",
    ),
    pytest.param(
        _conditions(Ready="True"),
        True,
        [UNSCHEDULABLE],
        [*NOT_SCHEDULABLE_WITHOUT, (BEST_EFFORT, [UNSCHEDULABLE], True)],
        id="unschedulable node",
    ),
    pytest.param(
        _conditions(MemoryPressure="True", Ready="True"),
        False,
        [MEMORY_PRESSURE],
        [
            (BEST_EFFORT, [], False),
            (BEST_EFFORT, [MEMORY_PRESSURE], True),
            (BEST_EFFORT, [DISK_PRESSURE], False),
            (BURSTABLE, [], True),
            (GUARANTEED, [], True),
        ],
        id="memory pressure node",
    ),
    pytest.param(
        _conditions(DiskPressure="True", Ready="True"),
        False,
        [DISK_PRESSURE],
        [*NOT_SCHEDULABLE_WITHOUT, (BEST_EFFORT, [DISK_PRESSURE], True), (BEST_EFFORT, [MEMORY_PRESSURE], False)],
        id="disk pressure node",
    ),
    pytest.param(
        _conditions(NetworkUnavailable="True", Ready="True"),
        False,
        [NETWORK_UNAVAILABLE],
        [*NOT_SCHEDULABLE_WITHOUT, (BURSTABLE, [NETWORK_UNAVAILABLE], True)],
        id="network unavailable and node is ready",
    ),
    pytest.param(
        _conditions(NetworkUnavailable="True", Ready="False"),
        False,
        [NETWORK_UNAVAILABLE, NOT_READY],
        [
            *NOT_SCHEDULABLE_WITHOUT,
            (BURSTABLE, [NETWORK_UNAVAILABLE], False),
            (BURSTABLE, [NETWORK_UNAVAILABLE, NOT_READY], True),
        ],
        id="network unavailable and node is not ready",
    ),
    pytest.param(
        _conditions(PIDPressure="True", Ready="True"),
        False,
        [PID_PRESSURE],
        [*NOT_SCHEDULABLE_WITHOUT, (BEST_EFFORT, [PID_PRESSURE], True)],
        id="pid pressure node",
    ),
    pytest.param(
        _conditions(PIDPressure="True", MemoryPressure="True", DiskPressure="True", Ready="True"),
        False,
        [DISK_PRESSURE, MEMORY_PRESSURE, PID_PRESSURE],
        [],
        id="multi taints on node",
    ),
]


@pytest.mark.parametrize(("conditions", "unschedulable", "taint_keys", "pods"), TAINT_NODE_BY_CONDITION)
def test_taint_node_by_condition(
    conditions: list[Obj], unschedulable: bool, taint_keys: list[str], pods: list[tuple[str, list[str], bool]]
) -> None:
    """The node lifecycle controller mirrors a node's conditions (and `spec.unschedulable`) as NoSchedule taints;
    the scheduler places a pod there only if it tolerates them all, else marks it Unschedulable."""

    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        # monitor grace 1 h, startup grace 1 s, monitor period 1 s, QPS 100/100, large cluster 100, threshold 100
        settings = NodeLifecycleSettings(
            grace_period=3600.0,
            startup_grace_period=1.0,
            monitor_period=1.0,
            eviction_qps=100.0,
            secondary_eviction_qps=100.0,
            large_cluster_threshold=100,
            unhealthy_zone_threshold=100.0,
        )
        lifecycle = NodeLifecycleController(client, clock=clock, settings=settings)
        sched = Scheduler(client, clock=clock)
        await lifecycle.start()
        await sched.start()
        try:
            resources = {"cpu": "4000m", "memory": "16Gi", "pods": "110"}
            node: Obj = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": "node-1"},
                "spec": {"unschedulable": unschedulable},
                "status": {"capacity": resources, "allocatable": resources, "conditions": conditions},
            }
            await client.create(NODES, None, node)

            async def tainted() -> bool:  # testutils.WaitForNodeTaints (30 s)
                got = await client.get(NODES, None, "node-1")
                have = {(t["key"], t["effect"]) for t in (got.get("spec") or {}).get("taints") or []}
                return all((key, "NoSchedule") in have for key in taint_keys)

            await poll_until(clock, tainted, window=30, what=f"NoSchedule taints {taint_keys}")
            for i, (kind, keys, fits) in enumerate(pods):
                body = qos_pod(kind, i, [tolerate(k) for k in keys])
                name = body["metadata"]["name"]
                await client.create(PODS, "default", body)

                async def placed(name: str = name, fits: bool = fits) -> bool:
                    got = await get_or_none(client, PODS, "default", name) or {}
                    if fits:  # testutils.WaitForPodToSchedule
                        return bool(got["spec"].get("nodeName"))
                    cond = condition(got, "PodScheduled")  # testutils.WaitForPodUnschedulable
                    return bool(cond and cond["status"] == "False" and cond.get("reason") == "Unschedulable")

                await poll_until(clock, placed, window=30, what=f"{name} {'scheduled' if fits else 'unschedulable'}")
                if not fits:
                    got = await get_or_none(client, PODS, "default", name)
                    assert got is not None and not got["spec"].get("nodeName"), name
        finally:
            await sched.stop()
            await lifecycle.stop()

    asyncio.run(scenario())
