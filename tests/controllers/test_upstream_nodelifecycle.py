"""Upstream rows of pkg/controller/nodelifecycle/node_lifecycle_controller_test.go, run against kjobs' node
lifecycle controller.

As upstream, the controller's informer caches (nodes, leases, pods) are filled by hand before each
`monitor_node_health()` pass, with the nodes also in a real in-process API so the controller's writes land; what
it wrote is read from the recorded client actions (upstream: `FakeNodeHandler.UpdatedNodeStatuses`,
`Actions()`), zone states from the controller. Time is virtual: upstream's `fakeNow` is the FakeClock's start.
Upstream's grace periods and rate limits (`testNodeMonitorGracePeriod` 50 s, startup 60 s, 100000 qps) are the
settings. Rows, and those left out: docs/upstream-components.md.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.timeutil import format_time, parse_time
from kjobs.api.types import Obj
from kjobs.client.resources import EVENTS, NODES, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.nodehealth import NodeHealth, excluded_from_disruption
from kjobs.controllers.nodelifecycle import NodeLifecycleController, NodeLifecycleSettings
from tests.controllers.upstream_support import Action, Recording
from tests.support import local_api

FAKE_NOW = parse_time("2015-01-01T12:00:00Z")
CREATED_LONG_AGO = "2012-01-01T00:00:00Z"
HOUR = 3600.0
SETTINGS = NodeLifecycleSettings(
    monitor_period=5.0,
    grace_period=50.0,  # testNodeMonitorGracePeriod
    startup_grace_period=60.0,  # testNodeStartupGracePeriod
    eviction_qps=100000.0,  # testRateLimiterQPS
    secondary_eviction_qps=100000.0,
    large_cluster_threshold=20,  # testLargeClusterThreshold
    unhealthy_zone_threshold=0.55,  # testUnhealthyThreshold
)

NORMAL, FULL, PARTIAL = "Normal", "FullDisruption", "PartialDisruption"


def at(offset: float = 0.0) -> str:
    """`fakeNow` + offset seconds, as the API writes times."""
    return format_time(FAKE_NOW + offset)


def ready(status: str, heartbeat: str, transition: str | None = None, **extra: str) -> Obj:
    return {
        "type": "Ready",
        "status": status,
        "lastHeartbeatTime": heartbeat,
        "lastTransitionTime": transition or heartbeat,
        **extra,
    }


def cond(cond_type: str, status: str, heartbeat: str, transition: str | None = None, **extra: str) -> Obj:
    return dict(ready(status, heartbeat, transition, **extra), type=cond_type)


def zone_labels(region: str, zone: str) -> dict[str, str]:
    return {
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": zone,
        "failure-domain.beta.kubernetes.io/region": region,
        "failure-domain.beta.kubernetes.io/zone": zone,
    }


def zone_id(region: str, zone: str) -> str:
    """`testutil.CreateZoneID`."""
    return f"{region}:\x00:{zone}"


@dataclass
class N:
    """A node of a row: name, creation time, conditions (None: no status at all), labels, taints."""

    name: str
    created: str = CREATED_LONG_AGO
    conditions: list[Obj] | None = None
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[Obj] = field(default_factory=list)


@dataclass
class Cluster:
    clock: FakeClock
    raw: Any
    client: Recording
    controller: NodeLifecycleController

    async def sync_node_store(self, nodes: list[N]) -> None:
        """`syncNodeStore`: the controller's node cache becomes these nodes, with the API's resourceVersion and
        spec (taints are the controller's writes, in the API)."""
        self.controller.nodes.cache.clear()
        for spec in nodes:
            stored = await self.raw.get(NODES, None, spec.name)
            node = copy.deepcopy(stored)
            node["metadata"]["creationTimestamp"] = spec.created
            node["metadata"]["labels"] = dict(spec.labels)
            node["status"] = {} if spec.conditions is None else {"conditions": copy.deepcopy(spec.conditions)}
            self.controller.nodes.cache[("", spec.name)] = node

    def sync_lease_store(self, node: str, renew: float | None) -> None:
        """`syncLeaseStore`: the node's Lease, renewed at `renew` (None: no lease)."""
        self.controller.leases.cache.clear()
        if renew is not None:
            self.controller.leases.cache[("kube-node-lease", node)] = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": node, "namespace": "kube-node-lease"},
                "spec": {"holderIdentity": node, "renewTime": format_time(renew).replace("Z", ".000000Z")},
            }

    def node_status_writes(self) -> list[Obj]:
        """`UpdatedNodeStatuses`: the statuses written, in order."""
        return [a.body["status"] for a in self.client.of("update", "nodes") if a.subresource == "status"]

    def pod_status_updated(self) -> bool:
        return any(a.subresource == "status" for a in self.client.of("update", "pods"))

    async def taint_pass(self) -> None:
        """`doNoExecuteTaintingPass`. The limiter (burst 1) lets one node through per instant; upstream's real
        clock moves between takes, so virtual time moves a millisecond until nothing more is taken."""
        for _ in range(20):
            before = len(self.client.of("update", "nodes"))
            await self.controller.no_execute_tainting_pass()
            if len(self.client.of("update", "nodes")) == before and not any(
                z.tainter.next_attempt_at(self.clock.now()) is not None for z in self.controller.zones.values()
            ):
                return
            self.clock.advance(0.001)

    async def taints(self, name: str) -> list[Obj]:
        node = await self.raw.get(NODES, None, name)
        return list((node.get("spec") or {}).get("taints") or [])

    def zone_states(self) -> dict[str, str]:
        """`nodeController.zoneStates`."""
        return {zone: ev.state for zone, ev in self.controller.zones.items() if ev.state is not None}


async def cluster(
    nodes: list[N], *, pods: dict[str, str] | None = None, start: float = FAKE_NOW, client_type: type = Recording
) -> Cluster:
    """An API holding the nodes (with their taints) and `pods` (name → node, Ready as `testutil.NewPod`), a
    controller on it; virtual time starts at `start`."""
    clock = FakeClock(start=start)
    raw = await local_api(clock)
    for spec in nodes:
        body: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": spec.name}}
        if spec.taints:
            body["spec"] = {"taints": copy.deepcopy(spec.taints)}
        await raw.create(NODES, None, body)
    client = client_type(raw)
    controller = NodeLifecycleController(client, clock=clock, settings=SETTINGS)  # type: ignore[arg-type]
    for name, node in (pods or {}).items():
        await raw.create(
            PODS,
            "default",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]},
            },
        )
        pod = await raw.get(PODS, "default", name)
        pod["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
        pod = await raw.update(PODS, "default", pod, subresource="status")
        controller.pods.cache[("default", name)] = pod
        controller._on_pod(None, pod)
    return Cluster(clock, raw, client, controller)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------ TestMonitorNodeHealth

Z1, Z2, Z22 = zone_labels("region1", "zone1"), zone_labels("region1", "zone2"), zone_labels("region2", "zone2")
EXCLUDED = dict(Z1, **{"node.kubernetes.io/exclude-disruption": ""})
HEALTHY_NEW = [ready("True", at(HOUR), at())]  # healthyNodeNewStatus
UNHEALTHY_NEW = [ready("Unknown", at(), at())]  # unhealthyNodeNewStatus


def fresh(name: str, status: str | None, labels: dict[str, str]) -> N:
    """A node created at `fakeNow`, its Ready condition (if any) last heard of then."""
    return N(name, at(), None if status is None else [ready(status, at())], labels)


MONITOR_NODE_HEALTH = [
    pytest.param(
        [fresh("node0", "True", {})],
        [HEALTHY_NEW],
        {"": NORMAL},
        {"": NORMAL},
        id="No Disruption: Node created recently without failure domain labels (happens only at cluster startup)",
    ),
    pytest.param(
        [fresh("node0", "Unknown", Z1), fresh("node1", "Unknown", Z2)],
        [UNHEALTHY_NEW, HEALTHY_NEW],
        {zone_id("region1", "zone1"): FULL, zone_id("region1", "zone2"): FULL},
        {zone_id("region1", "zone1"): FULL, zone_id("region1", "zone2"): NORMAL},
        id="No Disruption: Initially both zones down, one comes back",
    ),
    pytest.param(
        [fresh(f"node{i}", None, Z1) for i in range(4)],
        [UNHEALTHY_NEW, UNHEALTHY_NEW, UNHEALTHY_NEW, HEALTHY_NEW],
        {zone_id("region1", "zone1"): FULL},
        {zone_id("region1", "zone1"): PARTIAL},
        id="Partial Disruption: Nodes created recently without status conditions (happens only at cluster startup)",
    ),
    pytest.param(
        [fresh(f"node{i}", "Unknown" if i < 2 else "True", Z1) for i in range(5)],
        [UNHEALTHY_NEW, UNHEALTHY_NEW, UNHEALTHY_NEW, HEALTHY_NEW, HEALTHY_NEW],
        {zone_id("region1", "zone1"): NORMAL},
        {zone_id("region1", "zone1"): PARTIAL},
        id="Partial Disruption: one Node failed leading to the number of healthy Nodes to exceed the configured "
        "threshold",
    ),
    pytest.param(
        [fresh("node0", "Unknown", Z1), fresh("node1", "Unknown", Z1), fresh("node2", "True", Z1)],
        [UNHEALTHY_NEW, UNHEALTHY_NEW, UNHEALTHY_NEW],
        {zone_id("region1", "zone1"): NORMAL},
        {zone_id("region1", "zone1"): FULL},
        id="Full Disruption: the zone has less than 2 Nodes down, the last healthy Node has failed",
    ),
    pytest.param(
        [fresh("node0", "Unknown", Z1), fresh("node1", "True", Z2)],
        [UNHEALTHY_NEW, HEALTHY_NEW],
        {zone_id("region1", "zone1"): FULL, zone_id("region1", "zone2"): NORMAL},
        {zone_id("region1", "zone1"): FULL, zone_id("region1", "zone2"): NORMAL},
        id="Full Disruption: all the Nodes in one zone are down",
    ),
    pytest.param(
        [fresh("node0", "Unknown", Z1), fresh("node1", "Unknown", Z22)],
        [UNHEALTHY_NEW, UNHEALTHY_NEW],
        {zone_id("region1", "zone1"): FULL, zone_id("region2", "zone2"): FULL},
        {zone_id("region1", "zone1"): FULL, zone_id("region2", "zone2"): FULL},
        id="Full Disruption: all the Nodes in both the zones are down",
    ),
    pytest.param(
        [fresh("node0", "True", Z1)],
        [[]],
        {zone_id("region1", "zone1"): NORMAL},
        {zone_id("region1", "zone1"): FULL},
        id="Full Disruption: Ready condition removed from the Node",
    ),
    pytest.param(
        [fresh("node0", "Unknown", Z1), fresh("node-master", "True", EXCLUDED)],
        [UNHEALTHY_NEW, HEALTHY_NEW],
        {zone_id("region1", "zone1"): FULL},
        {zone_id("region1", "zone1"): FULL},
        id="Full Disruption: the only available Node has the node.kubernetes.io/exclude-disruption label",
    ),
]


@pytest.mark.parametrize(("nodes", "updated", "initial", "following"), MONITOR_NODE_HEALTH)
def test_monitor_node_health(
    nodes: list[N], updated: list[list[Obj]], initial: dict[str, str], following: dict[str, str]
) -> None:
    """Zone states after a pass at `fakeNow`, then after the nodes' new statuses an hour later."""

    async def scenario() -> None:
        made = await cluster(nodes)
        await made.sync_node_store(nodes)
        await made.controller.monitor_node_health()
        assert made.zone_states() == initial
        made.clock.set(FAKE_NOW + HOUR)
        for spec, conditions in zip(nodes, updated, strict=False):
            spec.conditions = conditions
        await made.sync_node_store(nodes)
        await made.controller.monitor_node_health()
        assert made.zone_states() == following

    run(scenario)


# -------------------------------------------------------------------------- TestMonitorNodeHealthUpdateStatus


def never_updated(created: str, transition: str, types: tuple[str, ...]) -> list[Obj]:
    """The conditions the controller adds for a kubelet that never posted them (`NodeStatusNeverUpdated`)."""
    return [
        cond(
            t,
            "Unknown",
            created,
            transition,
            reason="NodeStatusNeverUpdated",
            message="Kubelet never posted node status.",
        )
        for t in types
    ]


ALL_MONITORED = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
PRESSURES = ("MemoryPressure", "DiskPressure", "PIDPressure")
STOPPED = {"reason": "NodeStatusUnknown", "message": "Kubelet stopped posting node status."}


@dataclass
class StatusRow:
    """A row of the UpdateStatus / WithLease tables: the node before; after `time_to_pass` its new conditions
    (and lease); the node statuses written (their conditions) and whether a pod's status was written."""

    node: N
    written: list[list[Obj]]
    pod_update: bool
    time_to_pass: float = 0.0
    new_conditions: list[Obj] | None = None
    lease: float | None = None
    new_lease: float | None = None


UPDATE_STATUS = [
    pytest.param(
        StatusRow(N("node0"), [never_updated(CREATED_LONG_AGO, at(), ALL_MONITORED)], False),
        id="Node created long time ago, without status",
    ),
    pytest.param(StatusRow(N("node0", at()), [], False), id="Node created recently, without status"),
    pytest.param(
        StatusRow(
            N("node0", conditions=[ready("True", at())]),
            [[ready("Unknown", at(), at(HOUR), **STOPPED), *never_updated(CREATED_LONG_AGO, at(HOUR), PRESSURES)]],
            True,
            HOUR,
            [ready("True", at())],
        ),
        id="Node created long time ago, with status updated by kubelet exceeds grace period",
    ),
    pytest.param(
        StatusRow(N("node0", conditions=[ready("True", at())]), [], False),
        id="Node created long time ago, with status updated recently",
    ),
]


async def _status_row(row: StatusRow) -> Cluster:
    made = await cluster([row.node], pods={"pod0": "node0"})
    await made.sync_node_store([row.node])
    made.sync_lease_store("node0", row.lease)
    await made.controller.monitor_node_health()
    if row.time_to_pass > 0:
        made.clock.set(FAKE_NOW + row.time_to_pass)
        row.node.conditions = row.new_conditions
        await made.sync_node_store([row.node])
        made.sync_lease_store("node0", row.new_lease)
        await made.controller.monitor_node_health()
    return made


@pytest.mark.parametrize("row", UPDATE_STATUS)
def test_monitor_node_health_update_status(row: StatusRow) -> None:
    """Past the grace period (startup grace for a node that never posted status), the conditions become Unknown
    with upstream's reasons, messages and times; the node's pods are marked not ready only if it had been Ready."""

    async def scenario() -> None:
        made = await _status_row(row)
        assert [s["conditions"] for s in made.node_status_writes()] == row.written
        assert made.pod_status_updated() == row.pod_update

    run(scenario)


# ------------------------------------------------------------ TestMonitorNodeHealthUpdateNodeAndPodStatusWithLease

READY_AND_DISK = [ready("True", at()), cond("DiskPressure", "False", at())]

WITH_LEASE = [
    pytest.param(
        StatusRow(N("node0", at()), [], False), id="Node created recently, without status. Node lease is missing."
    ),
    pytest.param(
        StatusRow(N("node0", at()), [], False, lease=FAKE_NOW),
        id="Node created recently, without status. Node lease is renewed recently.",
    ),
    pytest.param(
        StatusRow(N("node0"), [never_updated(CREATED_LONG_AGO, at(), ALL_MONITORED)], False),
        id="Node created long time ago, without status. Node lease is missing.",
    ),
    pytest.param(
        StatusRow(N("node0"), [], False, HOUR, None, FAKE_NOW, FAKE_NOW + HOUR),
        id="Node created long time ago, without status. Node lease is renewed recently.",
    ),
    pytest.param(
        StatusRow(
            N("node0"),
            [never_updated(CREATED_LONG_AGO, at(HOUR), ALL_MONITORED)],
            False,
            HOUR,
            None,
            FAKE_NOW,
            FAKE_NOW,
        ),
        id="Node created long time ago, without status. Node lease is expired.",
    ),
    pytest.param(
        StatusRow(N("node0", conditions=READY_AND_DISK), [], False, HOUR, READY_AND_DISK, FAKE_NOW, FAKE_NOW + HOUR),
        id="Node created long time ago, with status updated by kubelet exceeds grace period. Node lease is renewed.",
    ),
    pytest.param(
        StatusRow(
            N("node0", conditions=READY_AND_DISK),
            [],
            False,
            HOUR,
            [ready("True", at(HOUR), at()), cond("DiskPressure", "False", at(HOUR), at())],
            FAKE_NOW,
            FAKE_NOW,
        ),
        id="Node created long time ago, with status updated by kubelet recently. Node lease is expired.",
    ),
    pytest.param(
        StatusRow(
            N("node0", conditions=[ready("True", at())]),
            [[ready("Unknown", at(), at(HOUR), **STOPPED), *never_updated(CREATED_LONG_AGO, at(HOUR), PRESSURES)]],
            True,
            HOUR,
            [ready("True", at())],
            FAKE_NOW,
            FAKE_NOW,
        ),
        id="Node created long time ago, with status updated by kubelet exceeds grace period. Node lease is also "
        "expired.",
    ),
]


@pytest.mark.parametrize("row", WITH_LEASE)
def test_monitor_node_health_update_node_and_pod_status_with_lease(row: StatusRow) -> None:
    """A renewed Lease keeps a node healthy though its status is stale, and a fresh status though the Lease is
    not renewed; only both stale (past the grace period) make it Unknown and its pods not ready."""

    async def scenario() -> None:
        made = await _status_row(row)
        assert [s["conditions"] for s in made.node_status_writes()] == row.written
        assert made.pod_status_updated() == row.pod_update

    run(scenario)


# ------------------------------------------------------------------------ TestMonitorNodeHealthMarkPodsNotReady

MARK_PODS_NOT_READY = [
    pytest.param(StatusRow(N("node0", at()), [], False), id="Node created recently, without status."),
    pytest.param(
        StatusRow(N("node0", conditions=[ready("True", at())]), [], False),
        id="Node created long time ago, with status updated recently.",
    ),
    pytest.param(
        StatusRow(N("node0", conditions=[ready("True", at())]), [], True, 60.0, [ready("True", at())]),
        id="Node created long time ago, with status updated by kubelet exceeds grace period.",
    ),
]


@pytest.mark.parametrize("row", MARK_PODS_NOT_READY)
def test_monitor_node_health_mark_pods_not_ready(row: StatusRow) -> None:
    """A node going from Ready to Unknown has its pods' Ready condition set False (a pod status update)."""

    async def scenario() -> None:
        made = await _status_row(row)
        assert made.pod_status_updated() == row.pod_update
        pod = await made.raw.get(PODS, "default", "pod0")
        assert pod["status"]["conditions"][0]["status"] == ("False" if row.pod_update else "True")

    run(scenario)


# ------------------------------------------------------------------- TestMonitorNodeHealthMarkPodsNotReadyRetry


class FailFirstPodStatusUpdate(Recording):
    """The row's `updateReactor`: the first pod status update fails ("fake error"), later ones succeed."""

    failed = False

    async def update(self, resource: Any, namespace: str | None, obj: Obj, **kw: Any) -> Obj:
        if resource.plural == "pods" and kw.get("subresource") == "status" and not self.failed:
            self.failed = True
            self.actions.append(Action("update", "pods", obj["metadata"]["name"], "status", obj))
            raise ApiError(500, "InternalError", "fake error")
        return await super().update(resource, namespace, obj, **kw)


MARK_PODS_NOT_READY_RETRY = [
    pytest.param(Recording, 1, id="successful pod status update, no retry required"),
    pytest.param(FailFirstPodStatusUpdate, 2, id="unsuccessful pod status update, retry required"),
]


@pytest.mark.parametrize(("client_type", "updates"), MARK_PODS_NOT_READY_RETRY)
def test_monitor_node_health_mark_pods_not_ready_retry(client_type: type, updates: int) -> None:
    """Pods that could not be marked not ready when their node went Unknown are marked on a later pass, while
    the node stays not Ready; marked once, they are not marked again."""

    async def scenario() -> None:
        node = N("node0", at())
        made = await cluster([node], pods={"pod0": "node0"}, client_type=client_type)
        for time_to_pass, status, stamp in ((0.0, "True", at()), (60.0, "True", at()), (60.0, "False", at(2))):
            made.clock.set(FAKE_NOW + time_to_pass)
            node.conditions = [ready(status, stamp)]
            await made.sync_node_store([node])
            await made.controller.monitor_node_health()
        assert len([a for a in made.client.of("update", "pods") if a.subresource == "status"]) == updates

    run(scenario)


# ------------------------------------------------------------------------------------- TestApplyNoExecuteTaints

UNREACHABLE_NO_EXECUTE = ("node.kubernetes.io/unreachable", "NoExecute")
NOT_READY_NO_EXECUTE = ("node.kubernetes.io/not-ready", "NoExecute")


def keys(taints: list[Obj]) -> set[tuple[str, str]]:
    return {(t["key"], t["effect"]) for t in taints}


def test_apply_no_execute_taints() -> None:
    """An Unknown node gets the unreachable NoExecute taint, a NotReady one the not-ready taint; a node Ready
    again loses it; a node whose Ready condition vanished before the tainting pass is not tainted."""

    async def scenario() -> None:
        now = parse_time("2017-01-01T12:00:00Z")
        old = "2015-01-01T12:00:00Z"
        nodes = [
            N("node0", conditions=[ready("Unknown", old)], labels=Z1),
            N("node1", conditions=[ready("True", format_time(now))], labels=Z1),
            N("node2", conditions=[ready("False", old)], labels=Z1),
            N("node3", conditions=[ready("True", "2016-01-01T12:00:00Z")], labels=Z1),
        ]
        made = await cluster(nodes, pods={"pod0": "node0"}, start=now)
        await made.sync_node_store(nodes)
        await made.controller.monitor_node_health()
        await made.taint_pass()
        assert UNREACHABLE_NO_EXECUTE in keys(await made.taints("node0"))
        assert NOT_READY_NO_EXECUTE in keys(await made.taints("node2"))

        nodes[2].conditions = [ready("True", format_time(now + 600), format_time(now))]  # healthyNodeNewStatus
        await made.sync_node_store(nodes)
        await made.controller.monitor_node_health()
        await made.taint_pass()
        assert await made.taints("node2") == []

        nodes[3].conditions = [ready("False", format_time(now + 600), format_time(now))]  # unhealthyNodeNewStatus
        await made.sync_node_store(nodes)
        await made.controller.monitor_node_health()
        # Before the tainting pass the status is replaced: no Ready condition any more.
        nodes[3].conditions = [cond("MemoryPressure", "Unknown", format_time(now + 600), format_time(now))]
        await made.sync_node_store(nodes)
        await made.taint_pass()
        assert await made.taints("node3") == []

    run(scenario)


# ------------------------------------------------------------------------ TestApplyNoExecuteTaintsToNodesEnqueueTwice


def test_apply_no_execute_taints_to_nodes_enqueue_twice() -> None:
    """A node queued for tainting then Ready again is dropped from the queue without blocking it: nodes queued
    after it are still tainted."""

    async def scenario() -> None:
        now = parse_time("2017-01-01T12:00:00Z")
        old = "2015-01-01T12:00:00Z"
        nodes = [
            N("node0", conditions=[ready("Unknown", old)], labels=Z1),
            N("node1", conditions=[ready("True", format_time(now))], labels=Z1),
            N("node2", conditions=[ready("False", old)], labels=Z1),
        ]
        later = [
            N("node3", conditions=[ready("Unknown", old)], labels=Z1),
            N("node4", conditions=[ready("True", format_time(now))], labels=Z1),
            N("node5", conditions=[ready("False", old)], labels=Z1),
        ]
        made = await cluster(nodes + later, pods={"pod0": "node0"}, start=now)
        await made.sync_node_store(nodes)
        await made.controller.monitor_node_health()
        await made.controller.monitor_node_health()
        nodes[0].conditions = [ready("True", format_time(now + 600), format_time(now))]  # healthyNodeNewStatus
        await made.sync_node_store(nodes + later)
        await made.controller.monitor_node_health()
        await made.taint_pass()
        assert UNREACHABLE_NO_EXECUTE in keys(await made.taints("node3"))
        assert NOT_READY_NO_EXECUTE in keys(await made.taints("node5"))

    run(scenario)


# ------------------------------------------------------------------------------ TestSwapUnreachableNotReadyTaints


def test_swap_unreachable_not_ready_taints() -> None:
    """A node tainted unreachable that reports NotReady has the taint swapped for not-ready."""

    async def scenario() -> None:
        now = parse_time("2017-01-01T12:00:00Z")
        nodes = [
            N("node0", conditions=[ready("Unknown", "2015-01-01T12:00:00Z")], labels=Z1),
            N("node1", conditions=[ready("True", format_time(now))], labels=Z1),
        ]
        made = await cluster(nodes, pods={"pod0": "node0"}, start=now)
        await made.sync_node_store(nodes)
        await made.controller.monitor_node_health()
        await made.taint_pass()
        assert UNREACHABLE_NO_EXECUTE in keys(await made.taints("node0"))

        nodes[0].conditions = [ready("False", format_time(now + 540), format_time(now))]  # newNodeStatus
        nodes[1].conditions = [ready("True", format_time(now + 600), format_time(now))]  # healthyNodeNewStatus
        await made.sync_node_store(nodes)
        await made.controller.monitor_node_health()
        await made.taint_pass()
        taints = keys(await made.taints("node0"))
        assert NOT_READY_NO_EXECUTE in taints and UNREACHABLE_NO_EXECUTE not in taints

    run(scenario)


# ------------------------------------------------------------------------------------- TestTaintsNodeByCondition

OLD = "2015-01-01T12:00:00Z"

TAINTS_NODE_BY_CONDITION = [
    pytest.param(
        [ready("True", OLD), cond("NetworkUnavailable", "True", OLD)],
        [("node.kubernetes.io/network-unavailable", "NoSchedule")],
        id="NetworkUnavailable is true",
    ),
    pytest.param([ready("False", OLD)], [("node.kubernetes.io/not-ready", "NoSchedule")], id="Ready is false"),
    pytest.param([ready("Unknown", OLD)], [("node.kubernetes.io/unreachable", "NoSchedule")], id="Ready is unknown"),
]


def test_taints_node_by_condition() -> None:
    """`doNoScheduleTaintingPass`: the node's NoSchedule taints follow its conditions, one row after the other on
    the same node (upstream's rows share it; its first row is listed twice there, run once here)."""

    async def scenario() -> None:
        node = N("node0", conditions=[ready("True", OLD)], labels=Z1)
        made = await cluster([node], pods={"pod0": "node0"}, start=parse_time("2017-01-01T12:00:00Z"))
        for row in TAINTS_NODE_BY_CONDITION:
            conditions, expected = row.values
            node.conditions = conditions  # type: ignore[assignment]
            await made.sync_node_store([node])
            await made.controller.no_schedule_tainting_pass("node0")
            taints = await made.taints("node0")
            assert sorted(keys(taints)) == sorted(expected), row.id  # type: ignore[arg-type]
            assert all("timeAdded" in t for t in taints)

    run(scenario)


# ------------------------------------------------------------------------------------- TestNodeEventGeneration


def test_node_event_generation() -> None:
    """A node seen for the first time gets exactly one Event, `RegisteredNode`, about the node's UID."""

    async def scenario() -> None:
        node = N("node0", "2015-08-10T00:00:00Z", [ready("Unknown", "2015-08-10T00:00:00Z")])
        made = await cluster([node], pods={"pod0": "node0"}, start=parse_time("2016-09-10T12:00:00Z"))
        await made.sync_node_store([node])
        await made.controller.monitor_node_health()
        await made.controller.events.flush()
        uid = (await made.raw.get(NODES, None, "node0"))["metadata"]["uid"]
        items, _ = await made.raw.list(EVENTS, None)
        assert [e["reason"] for e in items] == ["RegisteredNode"]
        assert items[0]["involvedObject"]["uid"] == uid
        assert items[0]["message"] == "Node node0 event: Registered Node node0 in Controller"

    run(scenario)


# ------------------------------------------------------------------------------------- TestReconcileNodeLabels

STABLE_OS, STABLE_ARCH = "kubernetes.io/os", "kubernetes.io/arch"
BETA_OS, BETA_ARCH = "beta.kubernetes.io/os", "beta.kubernetes.io/arch"

RECONCILE_NODE_LABELS = [
    pytest.param({}, {}, id="No-op if node has no labels"),
    pytest.param(
        {"topology.kubernetes.io/region": "region1"},
        {"topology.kubernetes.io/region": "region1"},
        id="No-op if no target labels present",
    ),
    pytest.param(
        {STABLE_OS: "linux", STABLE_ARCH: "amd64"},
        {BETA_OS: "linux", BETA_ARCH: "amd64", STABLE_OS: "linux", STABLE_ARCH: "amd64"},
        id="Create OS/arch beta labels when they don't exist",
    ),
    pytest.param(
        {BETA_OS: "windows", BETA_ARCH: "arm", STABLE_OS: "linux", STABLE_ARCH: "amd64"},
        {BETA_OS: "linux", BETA_ARCH: "amd64", STABLE_OS: "linux", STABLE_ARCH: "amd64"},
        id="Reconcile OS/arch beta labels to match stable labels",
    ),
]


@pytest.mark.parametrize(("labels", "expected"), RECONCILE_NODE_LABELS)
def test_reconcile_node_labels(labels: dict[str, str], expected: dict[str, str]) -> None:
    """The beta OS/arch labels are made to match the stable ones (added when missing); other labels untouched."""

    async def scenario() -> None:
        node = N("node0", conditions=[ready("True", OLD)], labels=labels)
        made = await cluster([node], start=parse_time("2017-01-01T12:00:00Z"))
        stored = await made.raw.get(NODES, None, "node0")
        stored["metadata"]["labels"] = dict(labels)
        await made.raw.update(NODES, None, stored)
        await made.sync_node_store([node])
        await made.controller.reconcile_node_labels("node0")
        assert ((await made.raw.get(NODES, None, "node0"))["metadata"].get("labels") or {}) == expected

    run(scenario)


# -------------------------------------------------------------------------------------- TestTryUpdateNodeHealth

FAKE_OLD = "2016-01-01T12:00:00Z"
TRY_NOW = "2017-01-01T12:00:00Z"

TRY_UPDATE_NODE_HEALTH = [
    pytest.param(TRY_NOW, [ready("True", TRY_NOW)], id="Status true"),
    pytest.param(TRY_NOW, [ready("False", TRY_NOW)], id="Status false"),
    pytest.param(TRY_NOW, [ready("Unknown", TRY_NOW)], id="Status unknown"),
    pytest.param(TRY_NOW, [], id="Status nil"),
    pytest.param(FAKE_OLD, [ready("True", FAKE_OLD)], id="Status true - after grace period"),
    pytest.param(FAKE_OLD, [ready("False", FAKE_OLD)], id="Status false - after grace period"),
    pytest.param(FAKE_OLD, [ready("Unknown", FAKE_OLD)], id="Status unknown - after grace period"),
    pytest.param(FAKE_OLD, [], id="Status nil - after grace period"),
]


@pytest.mark.parametrize(("created", "conditions"), TRY_UPDATE_NODE_HEALTH)
def test_try_update_node_health(created: str, conditions: list[Obj]) -> None:
    """What the controller remembers of a node's Ready condition is what it just concluded (Unknown once it wrote
    Unknown), so the next pass compares against it. The remembered health starts, as upstream, with the node's
    own status probed at its creation time."""

    async def scenario() -> None:
        node = N("node0", created, conditions)
        made = await cluster([node], start=parse_time(TRY_NOW))
        await made.sync_node_store([node])
        cached = copy.deepcopy(made.controller.nodes.get("", "node0"))
        assert cached is not None
        stamp = parse_time(created)
        saved = copy.deepcopy(conditions[0]) if conditions else None
        made.controller.health["node0"] = NodeHealth(stamp, stamp, saved)
        outcome = await made.controller._update_node_health(cached)
        assert outcome is not None
        _, _, current = outcome
        remembered = made.controller.health["node0"].ready
        assert (None if remembered is None else remembered["status"]) == (
            None if current is None else current["status"]
        )

    run(scenario)


# ----------------------------------------------------------------------------- Test_isNodeExcludedFromDisruptionChecks

EXCLUDED_FROM_DISRUPTION = [
    pytest.param({"metadata": {"labels": {}}}, False, id="no labels"),
    pytest.param({"metadata": {"name": "master-abc"}}, False, id="named master"),
    pytest.param({"metadata": {"labels": {"node.kubernetes.io/exclude-disruption": ""}}}, True, id="labelled"),
]


@pytest.mark.parametrize(("node", "want"), EXCLUDED_FROM_DISRUPTION)
def test_is_node_excluded_from_disruption_checks(node: Obj, want: bool) -> None:
    """Only the `node.kubernetes.io/exclude-disruption` label excludes a node, not a name. (Upstream's rows are
    unnamed; the ids say what each holds.)"""
    assert excluded_from_disruption(dict(node, status={"conditions": [{"type": "Test"}]})) is want


# ----------------------------------------------------------------------------------- TestProcessPodMarkPodNotReady

PROCESS_POD_MARK_POD_NOT_READY = [
    pytest.param(
        "False", False, False, id="Do not mark pod as NotReady when the scheduled node's healthy is not gathered yet"
    ),
    pytest.param("True", True, False, id="Do not mark pod as NotReady when the scheduled node is ready"),
    pytest.param("False", True, True, id="Pod marked as NotReady when the scheduled node is not ready"),
]


@pytest.mark.parametrize(("status", "monitor", "updated"), PROCESS_POD_MARK_POD_NOT_READY)
def test_process_pod_mark_pod_not_ready(status: str, monitor: bool, updated: bool) -> None:
    """A pod newly bound to a node the controller has seen not Ready is marked not ready at once."""

    async def scenario() -> None:
        node = N("node0", at(), [ready(status, at())])
        made = await cluster([node])
        await made.sync_node_store([node])
        if monitor:
            await made.controller.monitor_node_health()
        await made.raw.create(
            PODS,
            "default",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "pod0", "namespace": "default"},
                "spec": {"nodeName": "node0", "containers": [{"name": "c", "image": "busybox"}]},
            },
        )
        pod = await made.raw.get(PODS, "default", "pod0")
        pod["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
        pod = await made.raw.update(PODS, "default", pod, subresource="status")
        made.controller.pods.cache[("default", "pod0")] = pod
        made.controller._on_pod(None, pod)  # podUpdated(nil, pod), then processPod
        for _ in range(50):
            await asyncio.sleep(0)
        assert made.pod_status_updated() == updated

    run(scenario)


# ------------------------------------------------------------ TestMonitorNodeHealthMarkPodsNotReadyWithWorkerSize


@pytest.mark.slow
def test_monitor_node_health_mark_pods_not_ready_with_worker_size() -> None:
    """50 nodes silent past the grace period, 100 pods each: every pod is marked not ready in one pass. (Upstream
    runs it for 0 and 1 workers; kjobs marks pods serially, so one run stands for both rows.)"""

    async def scenario() -> None:
        nodes = [N(f"node{i}", conditions=[ready("True", at())]) for i in range(50)]
        made = await cluster(nodes, pods={f"pod{i}": f"node{i % 50}" for i in range(5000)})
        await made.sync_node_store(nodes)
        await made.controller.monitor_node_health()
        made.clock.set(FAKE_NOW + 60)
        await made.sync_node_store(nodes)
        await made.controller.monitor_node_health()
        assert len([a for a in made.client.of("update", "pods") if a.subresource == "status"]) == 5000

    run(scenario)
