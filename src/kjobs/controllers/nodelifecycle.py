"""The node lifecycle controller (`pkg/controller/nodelifecycle`): node health, NotReady/Unknown, node taints.

Every `monitor_period` (5 s) it checks each node's heartbeats (`kjobs.controllers.nodehealth.observe`): a
node silent for the grace period gets its conditions set to Unknown (`NodeStatusUnknown`, "Kubelet stopped
posting node status."), an Event `NodeNotReady` and its pods' Ready condition set False. A node whose Ready
condition is False or Unknown is queued, per zone, for the `node.kubernetes.io/not-ready` or
`node.kubernetes.io/unreachable` NoExecute taint (with `timeAdded`); the queue is rate limited (0.1 node/s)
and stops entirely when a zone has no Ready node at all (full disruption: Kubernetes then removes those
taints, assuming the control plane, not the nodes, is cut off) or is partially disrupted in a small cluster.
A Ready node loses both taints. Node updates also reconcile the NoSchedule taints that mirror conditions,
and the beta OS/arch labels with the stable ones.
What happens to pods on a tainted node is the taint-eviction controller's business.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field

import orjson

from kjobs.api.conditions import update_pod_condition
from kjobs.api.errors import ApiError
from kjobs.api.taints import (
    NO_EXECUTE,
    NO_SCHEDULE,
    TAINT_NOT_READY,
    TAINT_UNREACHABLE,
    same_taint,
    taint_exists,
    taints_of,
    with_taints,
)
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.events import EventRecorder
from kjobs.client.flowcontrol import TokenBucket
from kjobs.client.informer import InformerFactory, Key, key_of
from kjobs.client.resources import LEASES, NODES, PODS
from kjobs.client.workqueue import WorkQueue
from kjobs.clock import Clock, tick
from kjobs.controllers.disruption_metrics import NodeLifecycleMetrics
from kjobs.controllers.nodehealth import (
    CONDITION_TAINT_KEYS,
    READY,
    STATE_FULL_DISRUPTION,
    STATE_INITIAL,
    STATE_NORMAL,
    STATE_PARTIAL_DISRUPTION,
    NodeHealth,
    condition_of,
    desired_no_schedule_taints,
    excluded_from_disruption,
    lease_renew_time,
    observe,
    zone_key,
    zone_state,
)
from kjobs.controllers.ratelimitedqueue import RateLimitedTimedQueue, TimedValue

log = logging.getLogger(__name__)

NODE_LEASE_NAMESPACE = "kube-node-lease"
UNREACHABLE_TAINT: Obj = {"key": TAINT_UNREACHABLE, "effect": NO_EXECUTE}
NOT_READY_TAINT: Obj = {"key": TAINT_NOT_READY, "effect": NO_EXECUTE}
_WRITE_RETRIES = 5
LABEL_RECONCILE = (("kubernetes.io/os", "beta.kubernetes.io/os"), ("kubernetes.io/arch", "beta.kubernetes.io/arch"))
"""`labelReconcileInfo`: (stable label, beta label); the stable one is the truth and the beta one always follows."""


@dataclass(frozen=True)
class NodeLifecycleSettings:
    """kube-controller-manager's node lifecycle flags, with their defaults.

    `grace_period` is `--node-monitor-grace-period`: 50 s since Kubernetes 1.32 (kubernetes#126287; 40 s before).
    """

    monitor_period: float = 5.0
    grace_period: float = 50.0
    startup_grace_period: float = 60.0
    eviction_qps: float = 0.1
    secondary_eviction_qps: float = 0.01
    large_cluster_threshold: int = 50
    unhealthy_zone_threshold: float = 0.55


def _copy(obj: Obj) -> Obj:
    result: Obj = orjson.loads(orjson.dumps(obj))
    return result


def _node_ref(node: Obj) -> Obj:
    meta = node.get("metadata") or {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": meta.get("name"), "uid": meta.get("uid", "")}}


def _pod_ref(pod: Obj) -> Obj:
    meta = pod.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace"), "uid": meta.get("uid", "")},
    }


@dataclass(eq=False, repr=False)
class _ZoneEvictor:
    """A zone's NoExecute tainting queue and its state (`zoneNoExecuteTainter`, `zoneStates`).

    `state` is None once no node of the zone counts for disruption (all of them carry
    `node.kubernetes.io/exclude-disruption`): Kubernetes then drops the zone's state but keeps its tainter, so such
    nodes are still tainted (pkg/controller/nodelifecycle/node_lifecycle_controller.go, `handleDisruption`)."""

    state: str | None
    tainter: RateLimitedTimedQueue


@dataclass(eq=False, repr=False)
class NodeLifecycleController:
    """Watches Nodes, Leases and Pods; writes node conditions and taints, pods' Ready condition, Events."""

    client: Client
    clock: Clock
    settings: NodeLifecycleSettings = field(default_factory=NodeLifecycleSettings)
    metrics: NodeLifecycleMetrics = field(default_factory=NodeLifecycleMetrics)
    shared: InformerFactory | None = None
    """Informers shared with other controllers (a private set when None)."""

    def __post_init__(self) -> None:
        factory = self.shared or InformerFactory(self.client, clock=self.clock)
        self.nodes = factory.informer(NODES)
        self.pods = factory.informer(PODS)
        self.leases = factory.informer(LEASES, namespace=NODE_LEASE_NAMESPACE)
        self.events = EventRecorder(self.client, component="node-controller", clock=self.clock)
        self.health: dict[str, NodeHealth] = {}
        self.known: dict[str, Obj] = {}
        self.zones: dict[str, _ZoneEvictor] = {}
        self._retry_pods: set[str] = set()
        self._pods_by_node: dict[str, set[Key]] = {}
        self._no_schedule: WorkQueue[str] = WorkQueue(clock=self.clock)
        self._taint_wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    # ----------------------------------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Start informers, wait for their first list, then the monitor, tainting and NoSchedule loops."""
        self.nodes.add_handler(self._on_node)
        self.pods.add_handler(self._on_pod, unless_same="spec")  # `_on_pod` reads an update's spec alone
        for informer in (self.nodes, self.pods, self.leases):
            informer.start()
        await asyncio.gather(self.nodes.synced.wait(), self.pods.synced.wait(), self.leases.synced.wait())
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._monitor_loop(), name="node-lifecycle-monitor"),
            loop.create_task(self._tainting_loop(), name="node-lifecycle-tainter"),
            loop.create_task(self._no_schedule_worker(), name="node-lifecycle-noschedule"),
        ]

    async def stop(self) -> None:
        """Stop loops and informers."""
        self._no_schedule.shutdown()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for informer in (self.nodes, self.pods, self.leases):
            await informer.stop()
        await self.events.flush()

    # ------------------------------------------------------------------------------------------ handlers

    def _on_node(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None:
            self._no_schedule.add(key_of(new)[1])

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        if (
            old is not None
            and new is not None
            and (old.get("spec") or {}).get("nodeName") == (new.get("spec") or {}).get("nodeName")
        ):
            return  # the same node (read raw: equal values are equal once made strings too), as below
        old_node = str(((old or {}).get("spec") or {}).get("nodeName") or "")
        new_node = str(((new or {}).get("spec") or {}).get("nodeName") or "")
        if old is not None and new is not None and old_node == new_node:
            return  # most updates (status, metadata) leave the pod where it was indexed
        if not old_node and (new is None or not new_node):
            return  # on no node before or after (a new pod, not yet bound): nothing to index, no key to make
        key = key_of(new or old or {})
        if old_node and (new is None or old_node != new_node):
            self._pods_by_node.get(old_node, set()).discard(key)
        if new is not None and new_node:
            self._pods_by_node.setdefault(new_node, set()).add(key)
            if new_node != old_node and self._not_ready(new_node):
                asyncio.get_running_loop().create_task(self._process_pod(key, new_node))

    def _not_ready(self, node_name: str) -> bool:
        """Whether this controller sees the node as not Ready (a pod bound to a Ready one needs nothing)."""
        health = self.health.get(node_name)
        if health is None or health.ready is None or self.nodes.get("", node_name) is None:
            return False
        return bool(health.ready.get("status") != "True")

    async def _process_pod(self, key: Key, node_name: str) -> None:
        """A pod newly bound to a node this controller sees as not Ready is marked not ready too."""
        if self._not_ready(node_name):
            pod = self.pods.get(*key)
            if pod is not None:
                await self._mark_pods_not_ready([pod], node_name)

    # ------------------------------------------------------------------------------------------- monitor

    async def _monitor_loop(self) -> None:
        while True:
            try:
                await self.monitor_node_health()
            except Exception:
                log.exception("monitoring node health")
            await tick(self.clock, self.settings.monitor_period)

    def _zone(self, node: Obj) -> _ZoneEvictor:
        zone = zone_key(node)
        evictor = self.zones.get(zone)
        if evictor is None or evictor.state is None:  # `addPodEvictorForNewZone`: a zone without a state
            bucket = TokenBucket(self.settings.eviction_qps, 1, now=self.clock.now())
            evictor = self.zones[zone] = _ZoneEvictor(STATE_INITIAL, RateLimitedTimedQueue(bucket))
            self.metrics.evictions.labels(zone)
        return evictor

    async def monitor_node_health(self) -> None:
        """One pass over all nodes (`monitorNodeHealth`)."""
        with self.metrics.update_all_nodes_health.time():
            await self._monitor_node_health()

    async def _monitor_node_health(self) -> None:
        nodes = sorted(self.nodes.list(), key=lambda n: key_of(n)[1])
        names = {key_of(n)[1] for n in nodes}
        for node in nodes:
            name = key_of(node)[1]
            self._zone(node)
            if name not in self.known:
                self.known[name] = node
                self._node_event(node, "RegisteredNode", f"Registered Node {name} in Controller")
                await self._mark_node_as_reachable(node)
        for name in [n for n in self.known if n not in names]:
            self._node_event(self.known.pop(name), "RemovingNode", f"Removing Node {name} from Controller")

        zone_conditions: dict[str, list[Obj | None]] = {}
        for cached in nodes:
            node = _copy(cached)
            name = key_of(node)[1]
            started = time.perf_counter()
            outcome = await self._update_node_health(node)
            self.metrics.update_node_health.observe(time.perf_counter() - started)
            if outcome is None:
                continue
            node, observed, current = outcome
            if not excluded_from_disruption(node):
                zone_conditions.setdefault(zone_key(node), []).append(current)
            if current is None:
                self._retry_pods.discard(name)
                continue
            await self._process_taint_based_eviction(node, observed)
            became_not_ready = current.get("status") != "True" and observed.get("status") == "True"
            if became_not_ready:
                self.events.event(_node_ref(node), "Normal", "NodeNotReady", f"Node {name} status is now: NodeNotReady")
            retry = name in self._retry_pods and observed.get("status") != "True"
            # The node's pods are listed only when they are marked (a Ready node's are not read at all).
            if (became_not_ready or retry) and not await self._mark_pods_not_ready(self._pods_on(name), name):
                self._retry_pods.add(name)
                continue
            self._retry_pods.discard(name)
        await self._handle_disruption(zone_conditions, nodes)
        self._taint_wake.set()

    async def _update_node_health(self, node: Obj) -> tuple[Obj, Obj, Obj | None] | None:
        """Observe the node and write Unknown conditions if needed, re-reading it on a failed write."""
        name = key_of(node)[1]
        for _ in range(_WRITE_RETRIES):
            lease = self.leases.get(NODE_LEASE_NAMESPACE, name)
            seen = observe(
                node,
                self.health.get(name),
                lease_renew_time(lease),
                now=self.clock.now(),
                grace_period=self.settings.grace_period,
                startup_grace_period=self.settings.startup_grace_period,
            )
            if seen.new_status is None:
                self.health[name] = seen.health
                return node, seen.observed_ready, seen.current_ready
            try:
                body = dict(node, status=seen.new_status)
                written = await self.client.update(NODES, None, body, subresource="status")
            except ApiError as exc:
                log.info("updating node %s status: %s", name, exc)
                try:
                    node = await self.client.get(NODES, None, name)
                except ApiError:
                    return None
                continue
            self.health[name] = seen.health
            return written, seen.observed_ready, seen.current_ready
        return None

    def _pods_on(self, node_name: str) -> list[Obj]:
        pods = [self.pods.get(*k) for k in sorted(self._pods_by_node.get(node_name, ()))]
        return [p for p in pods if p is not None]

    async def _mark_pods_not_ready(self, pods: list[Obj], node_name: str) -> bool:
        """`MarkPodsNotReady`: the pods' Ready condition becomes False, with a `NodeNotReady` Event each."""
        ok = True
        for cached in pods:
            if (cached.get("spec") or {}).get("nodeName") != node_name:
                continue
            pod = _copy(cached)
            status = pod.setdefault("status", {})
            ready = next((c for c in status.get("conditions") or [] if c.get("type") == READY), None)
            if ready is None:
                continue
            if not update_pod_condition(status, dict(ready, status="False"), self.clock.now()):
                continue
            try:
                await self.client.update(PODS, pod["metadata"]["namespace"], pod, subresource="status")
            except ApiError as exc:
                if exc.code == 404:
                    continue
                log.info("marking pod %s not ready: %s", pod["metadata"]["name"], exc)
                ok = False
                continue
            self.events.event(_pod_ref(pod), "Warning", "NodeNotReady", "Node is not ready")
        return ok

    async def _process_taint_based_eviction(self, node: Obj, observed: Obj) -> None:
        status = observed.get("status")
        taints = taints_of(node)
        if status == "False":
            if taint_exists(taints, UNREACHABLE_TAINT):
                await self.swap_taints(key_of(node)[1], [NOT_READY_TAINT], [UNREACHABLE_TAINT])
            else:
                self._mark_for_tainting(node, "False")
        elif status == "Unknown":
            if taint_exists(taints, NOT_READY_TAINT):
                await self.swap_taints(key_of(node)[1], [UNREACHABLE_TAINT], [NOT_READY_TAINT])
            else:
                self._mark_for_tainting(node, "Unknown")
        elif status == "True":
            await self._mark_node_as_reachable(node)

    def _mark_for_tainting(self, node: Obj, status: str) -> bool:
        tainter = self._zone(node).tainter
        name = key_of(node)[1]
        wanted = NOT_READY_TAINT if status == "False" else UNREACHABLE_TAINT
        if not taint_exists(taints_of(node), wanted):
            tainter.remove(name)
        return tainter.add(name, str((node.get("metadata") or {}).get("uid") or ""), self.clock.now())

    async def _mark_node_as_reachable(self, node: Obj) -> bool:
        name = key_of(node)[1]
        if not await self.swap_taints(name, [], [UNREACHABLE_TAINT, NOT_READY_TAINT]):
            return False
        return self._zone(node).tainter.remove(name)

    async def _handle_disruption(self, zone_conditions: dict[str, list[Obj | None]], nodes: list[Obj]) -> None:
        now = self.clock.now()
        new_states: dict[str, str] = {}
        all_fully = True
        for zone, conditions in zone_conditions.items():
            unhealthy, state = zone_state(conditions, self.settings.unhealthy_zone_threshold)
            self.metrics.zone_size.labels(zone).set(len(conditions))
            self.metrics.zone_health.labels(zone).set(100 * (len(conditions) - unhealthy) / len(conditions))
            self.metrics.unhealthy_nodes.labels(zone).set(unhealthy)
            all_fully = all_fully and state == STATE_FULL_DISRUPTION
            new_states[zone] = state
        for zone, evictor in self.zones.items():
            if evictor.state is not None and zone not in zone_conditions:
                self.metrics.zone_size.labels(zone).set(0)
                self.metrics.zone_health.labels(zone).set(100)
                self.metrics.unhealthy_nodes.labels(zone).set(0)
                evictor.state = None  # the state goes, the tainter stays
        stated = {zone: evictor for zone, evictor in self.zones.items() if evictor.state is not None}
        all_were_fully = all(z.state == STATE_FULL_DISRUPTION for z in stated.values())
        if all_fully and all_were_fully:
            return
        if all_fully:
            log.info("all nodes are not Ready: entering master disruption mode, no taint-based evictions")
            for node in nodes:
                await self._mark_node_as_reachable(node)
            for evictor in stated.values():
                evictor.tainter.swap_limiter(0.0, now)
                evictor.state = STATE_FULL_DISRUPTION
            return
        if all_were_fully:
            log.info("some nodes are Ready again: exiting master disruption mode")
            for node in nodes:
                health = self.health.get(key_of(node)[1])
                if health is not None:
                    health.probe_timestamp = now
                    health.ready_transition_timestamp = now
            for zone, evictor in stated.items():
                self._set_limiter(evictor, len(zone_conditions.get(zone, [])), new_states.get(zone, STATE_NORMAL))
            return
        for zone, evictor in stated.items():
            state = new_states.get(zone, STATE_NORMAL)  # every stated zone has nodes counted this pass
            if state != evictor.state:
                self._set_limiter(evictor, len(zone_conditions.get(zone, [])), state)

    def _set_limiter(self, evictor: _ZoneEvictor, size: int, state: str) -> None:
        now = self.clock.now()
        if state == STATE_NORMAL:
            evictor.tainter.swap_limiter(self.settings.eviction_qps, now)
        elif state == STATE_PARTIAL_DISRUPTION:
            qps = self.settings.secondary_eviction_qps if size > self.settings.large_cluster_threshold else 0.0
            evictor.tainter.swap_limiter(qps, now)
        elif state == STATE_FULL_DISRUPTION:
            evictor.tainter.swap_limiter(self.settings.eviction_qps, now)
        evictor.state = state

    # ------------------------------------------------------------------------------------------ tainting

    async def _tainting_loop(self) -> None:
        while True:
            try:
                await self.no_execute_tainting_pass()
            except Exception:
                log.exception("tainting nodes")
            self._taint_wake.clear()
            now = self.clock.now()
            due = [t for z in self.zones.values() if (t := z.tainter.next_attempt_at(now)) is not None]
            waker = asyncio.get_running_loop().create_task(self._taint_wake.wait())
            waiters: set[asyncio.Task[object]] = {waker}
            if due:
                waiters.add(asyncio.get_running_loop().create_task(self.clock.sleep(max(0.0, min(due) - now))))
            try:
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in waiters:
                    task.cancel()

    async def no_execute_tainting_pass(self) -> None:
        """Taint the queued nodes the rate limiter lets through (`doNoExecuteTaintingPass`)."""
        for evictor in list(self.zones.values()):
            now = self.clock.now()
            for item in evictor.tainter.take_due(now):
                done, retry = await self._taint_one(item)
                if not done:
                    evictor.tainter.retry(item, self.clock.now() + retry)

    async def _taint_one(self, item: TimedValue) -> tuple[bool, float]:
        node = self.nodes.get("", item.value)
        if node is None:
            return True, 0.0
        ready = condition_of(node, READY)
        if ready is None:
            return False, 0.05
        if ready.get("status") == "False":
            add, opposite = NOT_READY_TAINT, UNREACHABLE_TAINT
        elif ready.get("status") == "Unknown":
            add, opposite = UNREACHABLE_TAINT, NOT_READY_TAINT
        else:
            return True, 0.0
        done = await self.swap_taints(item.value, [add], [opposite])
        if done:
            self.metrics.evictions.labels(zone_key(node)).inc()
        return done, 0.0

    async def swap_taints(self, name: str, add: list[Obj], remove: list[Obj]) -> bool:
        """`SwapNodeControllerTaint`: add (stamped with `timeAdded`) and remove taints, retrying conflicts."""
        stamped = [dict(t, timeAdded=format_time(self.clock.now())) for t in add]
        cached = self.nodes.get("", name)
        if cached is not None and not stamped and not any(taint_exists(taints_of(cached), t) for t in remove):
            return True
        for _ in range(_WRITE_RETRIES):
            try:
                node = await self.client.get(NODES, None, name)
            except ApiError as exc:
                return exc.code == 404
            taints = taints_of(node)
            unchanged = [t for t in stamped if any(same_taint(t, e) and _same_value(t, e) for e in taints)]
            wanted = with_taints(taints, [t for t in stamped if t not in unchanged], remove)
            if wanted == taints:
                return True
            spec = dict(node.get("spec") or {})
            if wanted:
                spec["taints"] = wanted
            else:
                spec.pop("taints", None)
            try:
                await self.client.update(NODES, None, dict(node, spec=spec))
                return True
            except ApiError as exc:
                if exc.code == 409:
                    continue
                log.info("tainting node %s: %s", name, exc)
                return False
        return False

    # ----------------------------------------------------------------------------------------- NoSchedule

    async def _no_schedule_worker(self) -> None:
        while True:
            name = await self._no_schedule.get()
            if name is None:
                return
            try:
                await self.no_schedule_tainting_pass(name)
            except Exception:
                log.exception("NoSchedule taints of node %s", name)
            try:
                await self.reconcile_node_labels(name)
            except Exception:
                log.exception("labels of node %s", name)
            finally:
                self._no_schedule.done(name)

    async def no_schedule_tainting_pass(self, name: str) -> None:
        """Make the node's condition NoSchedule taints match its conditions (`doNoScheduleTaintingPass`)."""
        node = self.nodes.get("", name)
        if node is None:
            return
        desired = desired_no_schedule_taints(node)
        existing = [
            t for t in taints_of(node) if t.get("effect") == NO_SCHEDULE and t.get("key") in CONDITION_TAINT_KEYS
        ]
        to_add = [t for t in desired if not taint_exists(existing, t)]
        to_remove = [t for t in existing if not taint_exists(desired, t)]
        if to_add or to_remove:
            await self.swap_taints(name, to_add, to_remove)

    async def reconcile_node_labels(self, name: str) -> None:
        """`reconcileNodeLabels`: the beta OS/arch labels are set to the stable ones' values (added when missing),
        for clients still selecting on `beta.kubernetes.io/os` / `arch`; after the NoSchedule pass in
        `doNodeProcessingPassWorker` (pkg/controller/nodelifecycle/node_lifecycle_controller.go)."""
        node = self.nodes.get("", name)
        labels = ((node or {}).get("metadata") or {}).get("labels") or {}
        wanted = {beta: labels[stable] for stable, beta in LABEL_RECONCILE if stable in labels}
        update = {key: value for key, value in wanted.items() if labels.get(key) != value}
        if update:
            await self.client.patch(NODES, None, name, {"metadata": {"labels": update}})

    def _node_event(self, node: Obj, reason: str, message: str) -> None:
        name = key_of(node)[1]
        self.events.event(_node_ref(node), "Normal", reason, f"Node {name} event: {message}")


def _same_value(a: Obj, b: Obj) -> bool:
    return (a.get("value") or "") == (b.get("value") or "")
