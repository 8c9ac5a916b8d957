"""The scheduler (`default-scheduler`): binds pending pods to nodes, and preempts lower-priority pods for
higher-priority ones that fit nowhere.

It owns a cache of nodes and of the pods counted on them, built from informers on Pods, Nodes, PriorityClasses,
PodDisruptionBudgets and Namespaces (their labels, for pod affinity terms' namespace selectors). Decisions are
the pure functions of `kjobs.controllers.scheduling` (fit, score, messages), `kjobs.controllers.interpod` (pod
affinity, topology spread) and `kjobs.controllers.preemption` (priority, victims); this module only moves objects
in and out:

* Queue. Pending pods are keys in a `WorkQueue`; the worker drains whatever is queued and schedules it highest
  priority first (then oldest), one pod at a time, like Kubernetes' activeQ with PrioritySort.
* Assume, then bind. A chosen node counts the pod at once (assumed), so the next decision already sees it; the
  Binding is POSTed in the background (bounded concurrency) and the `Scheduled` event follows it. A failed
  binding forgets the assumption and retries the pod after its back-off.
* Unschedulable pods get `PodScheduled=False`/`Unschedulable` with Kubernetes' message and a `FailedScheduling`
  event, then wait for a cluster change that may help (a node added or changed, a bound pod gone or finished)
  — but never before their back-off (1 s doubling to 10 s per attempt) — or at most 5 minutes (one sweep every
  30 s, like Kubernetes' leftover flush). A repeated identical message is recorded as an event at most once per
  5 minutes per pod (what Kubernetes' event spam filter and aggregation make visible).
* Metrics: kube-scheduler's `scheduler_schedule_attempts_total`, `scheduler_preemption_attempts_total`,
  `scheduler_preemption_victims`, `scheduler_pod_scheduling_attempts`, `scheduler_pending_pods`
  (`kjobs.controllers.scheduler_metrics`).
* Filters that read the whole cluster (PodTopologySpread, InterPodAffinity: `kjobs.controllers.interpod`) have
  their PreFilter counts computed once per attempt, and only when the pod has such terms or some placed pod has
  required anti-affinity; otherwise the attempt costs what it did without them. A pod waiting for pod affinity or
  spread is retried when a pod is placed, since a new pod can satisfy it. Their scores (preferred terms,
  ScheduleAnyway and the system default spreading of pods a Service selects) are computed the same way, only when
  something in the cluster can score the pod and more than one node fits.
* Failures are reused: while nothing in the cluster changed (placements, nodes, nominations, budgets, classes —
  tracked by a state counter), a pod with the same scheduling signature as one that just failed (Job pods of one
  template) gets the same answer without re-running filters and the preemption search.
* Preemption. If the pod may preempt and some node fits once lower-priority pods are gone, each victim gets
  `DisruptionTarget=True` (`PreemptionByScheduler`), is deleted gracefully and gets a `Preempted` event; the
  preemptor gets `status.nominatedNodeName`, and the room on that node is reserved for it (lower-priority pods
  cannot take it) until the victims are gone and it binds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from kjobs.api.conditions import update_pod_condition
from kjobs.api.errors import ApiError
from kjobs.api.names import DISRUPTION_TARGET
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.events import EventRecorder
from kjobs.client.informer import InformerFactory
from kjobs.client.resources import (
    NAMESPACES,
    NODES,
    PDBS,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    PODS,
    PRIORITY_CLASSES,
    SERVICES,
    STORAGE_CLASSES,
)
from kjobs.client.workqueue import WorkQueue
from kjobs.clock import Clock, tick
from kjobs.controllers import volumebinding
from kjobs.controllers.interpod import cluster_scorer, default_spread_selector, prefilter
from kjobs.controllers.preemption import PREFIX as PREEMPTION_PREFIX
from kjobs.controllers.preemption import (
    REASON_NOT_HELPFUL,
    Budget,
    Candidate,
    PriorityClass,
    budgets,
    nominated_on,
    preempt,
    priority_classes,
    resolve_priority,
)
from kjobs.controllers.scheduler_metrics import SchedulerMetrics
from kjobs.controllers.scheduling import (
    DEFAULT_SCHEDULER_NAME,
    NO_NODES_AVAILABLE,
    FilterStatus,
    NodeInfo,
    PodInfo,
    SpecInfo,
    filter_node,
    fit_error,
    node_scores,
    pod_info,
    select_host,
    shared_spec_info,
    truncate_message,
    with_field,
    with_node_name,
)

log = logging.getLogger(__name__)

POD_SCHEDULED = "PodScheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
PREEMPTION_REASON = "PreemptionByScheduler"

_UNFIT = -(1 << 62)
"""A ranking's score for a node its spec does not fit: below every score `select_host` would take (> -1)."""
_RANKINGS_KEPT = 8
"""Rankings kept, one a pod spec (a Job's pods share one): more distinct specs at once start afresh."""


@dataclass(slots=True, eq=False)
class _Ranking:
    """Each ready node's filter answer and resource score for one pod spec, as of the node's `generation` when it
    was last looked at (`seen`). Filters and scores read only the spec and the node's own state (`NodeMemo`), so
    an attempt re-evaluates only the nodes changed since (one placed pod, one released) and picks the best of the
    kept scores in C (`max`, `index`), instead of calling the filter and the scorer for every node: at
    parallelism 5,000 (46 nodes) that loop was the one cost a pod that grew with the cluster (docs/simscale58.md).
    `flagged` counts the nodes with pods of (anti-)affinity terms or soft taints, with which a plain pod's choice
    also reads other nodes: then the attempt takes the full path."""

    spec: SpecInfo
    nodes: list[NodeInfo]
    seen: list[int]
    scores: list[int]
    marks: list[bool]
    flagged: int = 0


def _plain(pod: PodInfo) -> bool:
    """Whether the pod's own terms leave its filter and score to each node alone: no pod (anti-)affinity, no
    spread constraint, no preferred node affinity (those read the cluster or normalise across nodes)."""
    return not (
        pod.any_spread
        or pod.spread
        or pod.affinity_terms
        or pod.anti_terms
        or pod.preferred_affinity
        or pod.preferred_anti
        or pod.preferred_terms
    )


@dataclass(frozen=True)
class SchedulerSettings:
    """Knobs, with Kubernetes' defaults: podInitialBackoff 1 s, podMaxBackoff 10 s, at most 5 min unschedulable
    before a retry without any cluster change (checked every 30 s); bindings in flight at once."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    initial_backoff: float = 1.0
    max_backoff: float = 10.0
    max_unschedulable_wait: float = 300.0
    unschedulable_flush_period: float = 30.0
    bind_concurrency: int = 32
    event_qps: float = 50.0
    """Event writes a second (0: no limit): kube-scheduler's events client has clientConnection's qps 50 and
    burst 100 (`event_burst`)."""
    event_burst: int = 100
    bind_timeout: float = 600.0
    """Seconds PreBind waits for a pod's claims to be bound (VolumeBinding's `bindTimeoutSeconds`)."""


class Scheduler:
    """Schedules every pod whose `spec.schedulerName` is unset or `settings.scheduler_name`."""

    ranked = True
    """Whether a plain pod's attempt picks its node from a `_Ranking` kept for its spec (False: every node filtered
    and scored each attempt; the same choice, held by tests/controllers/test_scheduler_ranking58.py)."""

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        settings: SchedulerSettings | None = None,
        metrics: SchedulerMetrics | None = None,
        shared: InformerFactory | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.settings = settings or SchedulerSettings()
        self.metrics = metrics or SchedulerMetrics(profile=self.settings.scheduler_name)
        self.events = EventRecorder(
            client,
            component=self.settings.scheduler_name,
            clock=clock,
            qps=self.settings.event_qps,
            burst=self.settings.event_burst,
        )
        factory = shared or InformerFactory(client, clock=clock)
        self.pods = factory.informer(PODS)
        self.nodes = factory.informer(NODES)
        self.priority_classes = factory.informer(PRIORITY_CLASSES)
        self.pdbs = factory.informer(PDBS)
        self.namespaces = factory.informer(NAMESPACES)
        self.services = factory.informer(SERVICES)
        # VolumeBinding (`kjobs.controllers.volumebinding`): claims, their volumes and classes
        self.claims = factory.informer(PERSISTENT_VOLUME_CLAIMS)
        self.volumes = factory.informer(PERSISTENT_VOLUMES)
        self.storage_classes = factory.informer(STORAGE_CLASSES)
        self._claim_changed = asyncio.Event()
        self._selected: dict[str, str] = {}
        """Claim uid -> the node an assumed pod named for it, until the claim's `selected-node` is seen (the
        volume binder's assume cache: the next pod sharing the claim must not pick another node meanwhile)."""
        self.queue: WorkQueue[str] = WorkQueue(
            clock=clock, base_delay=self.settings.initial_backoff, max_delay=self.settings.max_backoff
        )
        self._classes: dict[str, PriorityClass] = {}
        self._default_class: PriorityClass | None = None
        self._budgets: list[Budget] = []
        self._namespace_labels: dict[str, Any] = {}
        self._service_selectors: dict[str, dict[str, dict[str, str]]] = {}  # namespace → name → spec.selector
        self._parked_for_pods: set[str] = set()  # parked pods with pod affinity or spread: a placement may help
        self._node_infos: dict[str, NodeInfo] = {}
        self._ready: list[NodeInfo] | None = None
        self._rankings: dict[int, _Ranking] = {}  # by `id` of the spec, which the ranking keeps alive
        self._placed: dict[str, str] = {}
        self._assumed: set[str] = set()
        self._spec_infos: dict[str, tuple[Obj, SpecInfo]] = {}  # by pod uid, dropped with the pod
        self._pending: dict[str, PodInfo] = {}
        self._nominated_node: dict[str, str] = {}
        self._nominated: dict[str, dict[str, PodInfo]] = {}
        self._attempts: dict[str, int] = {}
        self._backoff_until: dict[str, float] = {}
        self._parked: dict[str, float] = {}
        self._event_seq = 0
        self._state = 0
        self._failures: dict[tuple[Any, ...], tuple[int, str, str | None]] = {}
        self._last_event: dict[str, tuple[str, float]] = {}
        self._bind_slots = asyncio.Semaphore(self.settings.bind_concurrency)
        self._background: set[asyncio.Task[None]] = set()
        self._worker_task: asyncio.Task[None] | None = None
        self._flush_task: asyncio.Task[None] | None = None
        self._gated: set[str] = set()
        self.metrics.bind_queue(self._queue_counts)

    # ----------------------------------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Start informers (priority classes and budgets first, so pods resolve their priority), then the worker."""
        self.priority_classes.add_handler(self._on_priority_class)
        self.pdbs.add_handler(self._on_pdb)
        self.namespaces.add_handler(self._on_namespace)
        self.services.add_handler(self._on_service)
        self.claims.add_handler(self._on_claim)
        self.nodes.add_handler(self._on_node)
        self.pods.add_handler(self._on_pod)
        self.priority_classes.start()
        self.pdbs.start()
        self.namespaces.start()
        self.services.start()
        for informer in (self.claims, self.volumes, self.storage_classes):
            informer.start()
        await asyncio.gather(
            self.priority_classes.synced.wait(),
            self.pdbs.synced.wait(),
            self.namespaces.synced.wait(),
            self.services.synced.wait(),
            self.claims.synced.wait(),
            self.volumes.synced.wait(),
            self.storage_classes.synced.wait(),
        )
        self.nodes.start()
        self.pods.start()
        await asyncio.gather(self.nodes.synced.wait(), self.pods.synced.wait())
        loop = asyncio.get_running_loop()
        self._worker_task = loop.create_task(self._worker(), name="scheduler-worker")
        self._flush_task = loop.create_task(self._flush_leftovers(), name="scheduler-unschedulable-flush")

    async def stop(self) -> None:
        """Stop the worker, pending bindings/writes and the informers."""
        self.queue.shutdown()
        for task in (self._worker_task, self._flush_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._worker_task = self._flush_task = None
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        for informer in (
            self.pods,
            self.nodes,
            self.pdbs,
            self.priority_classes,
            self.namespaces,
            self.services,
            self.claims,
            self.volumes,
            self.storage_classes,
        ):
            await informer.stop()
        await self.events.shutdown()  # rate-limited: what is still queued is dropped, as when kube-scheduler stops

    # ----------------------------------------------------------------------------------------- views

    def node_info(self, name: str) -> NodeInfo | None:
        """The cached view of a node (requests counted there, including assumed pods)."""
        return self._node_infos.get(name)

    def pending(self) -> list[str]:
        """Keys of pods waiting to be scheduled."""
        return sorted(self._pending)

    def _queue_counts(self) -> dict[str, int]:
        active, parked = len(self.queue), len(self._parked)
        in_flight = sum(1 for info in self._pending.values() if info.uid in self._assumed)
        backoff = max(0, len(self._pending) - active - parked - in_flight)
        return {"active": active, "backoff": backoff, "unschedulable": parked, "gated": len(self._gated)}

    # ----------------------------------------------------------------------------------------- handlers

    def _info(self, pod: Obj) -> PodInfo:
        priority, never = resolve_priority(pod, self._classes, self._default_class)
        uid = str((pod.get("metadata") or {}).get("uid") or "")
        spec = pod.get("spec") or {}
        known = self._spec_infos.get(uid)
        # A pod's spec changes only by its binding (nodeName, which `spec_info` does not read) and by the few
        # updates Kubernetes allows: its parsed requests are kept across a binding.
        if known is None or (known[0] != spec and not _same_but_node_name(known[0], spec)):
            known = (spec, shared_spec_info(spec))
        self._spec_infos[uid] = (spec, known[1])
        return pod_info(pod, priority=priority, preempt_never=never, spec=known[1])

    def _on_priority_class(self, old: Obj | None, new: Obj | None) -> None:
        self._state += 1
        self._classes, self._default_class = priority_classes(self.priority_classes.list())
        if self.pods.synced.is_set():
            for pod in self.pods.list():
                self._on_pod(pod, pod)

    def _on_pdb(self, old: Obj | None, new: Obj | None) -> None:
        self._state += 1
        self._budgets = budgets(self.pdbs.list())

    def _on_namespace(self, old: Obj | None, new: Obj | None) -> None:
        obj = new if new is not None else old
        name = str(((obj or {}).get("metadata") or {}).get("name") or "")
        labels = ((new or {}).get("metadata") or {}).get("labels") or {}
        if new is None:
            self._namespace_labels.pop(name, None)
        elif self._namespace_labels.get(name) != labels:
            self._namespace_labels[name] = labels
        else:
            return
        self._state += 1  # namespace selectors of pod affinity terms read these labels
        if self._parked_for_pods:
            self._cluster_changed()

    def _on_service(self, old: Obj | None, new: Obj | None) -> None:
        """Keep each Service's `spec.selector`: a pod a Service selects gets PodTopologySpread's system default
        (ScheduleAnyway) constraints when it has none of its own. Scores only: no pending pod is retried."""
        obj = new if new is not None else old
        meta = (obj or {}).get("metadata") or {}
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        selector = ((new or {}).get("spec") or {}).get("selector")
        in_namespace = self._service_selectors.setdefault(namespace, {})
        if new is not None and isinstance(selector, dict) and selector:
            in_namespace[name] = {str(k): str(v) for k, v in selector.items()}
        else:
            in_namespace.pop(name, None)
            if not in_namespace:
                del self._service_selectors[namespace]

    def _on_node(self, old: Obj | None, new: Obj | None) -> None:
        name = str(((new or old) or {}).get("metadata", {}).get("name") or "")
        info = self._node_infos.get(name)
        if new is None:
            if info is not None:
                info.set_node(None)
                if not info.pods:
                    del self._node_infos[name]
            self._ready = None
            self._state += 1
            return
        before = info.signature() if info is not None else None
        if info is None:
            info = self._node_infos[name] = NodeInfo(name)
        info.set_node(new)
        if info.signature() != before:
            self._ready = None
            self._state += 1
            self._cluster_changed()

    def _on_claim(self, old: Obj | None, new: Obj | None) -> None:
        """A claim added, bound or changed may let pods that wait for it schedule (VolumeBinding's events), and
        wakes bindings waiting in PreBind."""
        self._state += 1
        self._cluster_changed()
        self._claim_changed.set()
        self._claim_changed = asyncio.Event()
        obj = new if new is not None else old
        if obj is not None and (new is None or volumebinding.selected_node(new)):
            self._selected.pop(str((obj.get("metadata") or {}).get("uid") or ""), None)

    def _claim(self, namespace: str, name: str) -> Obj | None:
        return self.claims.get(namespace, name)

    def _claim_assumed(self, namespace: str, name: str) -> Obj | None:
        """The claim as the scheduler assumes it: with the `selected-node` an assumed pod is about to write."""
        claim = self.claims.get(namespace, name)
        if claim is None or volumebinding.selected_node(claim):
            return claim
        node = self._selected.get(str((claim.get("metadata") or {}).get("uid") or ""))
        if node is None:
            return claim
        meta = claim.get("metadata") or {}
        annotations = {**(meta.get("annotations") or {}), volumebinding.SELECTED_NODE_ANNOTATION: node}
        return {**claim, "metadata": {**meta, "annotations": annotations}}

    def _storage_class(self, name: str) -> Obj | None:
        return self.storage_classes.get("", name)

    def _volume(self, name: str) -> Obj | None:
        return self.volumes.get("", name)

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        # `_finished` of each version, inline and read once: this runs for every event of every pod
        new_finished = new is not None and (new.get("status") or {}).get("phase") in _FINISHED
        if new_finished and old is not None and (old.get("status") or {}).get("phase") in _FINISHED:
            return  # a finished pod left the cache and the queue when it finished; later updates change nothing
        obj = new if new is not None else old
        assert obj is not None
        meta = obj.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        key = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
        # A pod that finished is handled as one that is gone: it neither counts on a node nor waits.
        info = self._info(new) if new is not None and not new_finished else None
        if info is None:
            self._spec_infos.pop(uid, None)
        # Placement: bound, unfinished pods count on their node; an assumed pod keeps counting until bound.
        if info is not None and info.node_name and not info.terminal:
            self._assumed.discard(uid)
            self._place(info)
        elif uid in self._assumed and info is not None and info.wants_scheduling(self.settings.scheduler_name):
            pass
        else:
            self._assumed.discard(uid)
            if self._unplace(uid):
                self._cluster_changed()
        # Pending pods.
        if info is not None and info.gated and not info.node_name and not info.deleting and not info.terminal:
            self._gated.add(key)
        else:
            self._gated.discard(key)
        current = self._pending.get(key)
        if info is not None and info.wants_scheduling(self.settings.scheduler_name):
            if current is not None and current.uid != uid:
                # Same name, new pod (an informer relist reports it as an update): nothing carries over.
                self._forget_pending(key, current.uid)
                current = None
            self._pending[key] = info
            if old is not None and (old.get("status") or {}).get("nominatedNodeName") != info.nominated_node:
                self._nominated_node[uid] = info.nominated_node
            self._refresh_nomination(info)
            if current is None or current.uid != uid:
                self.queue.add(key)
            elif old is not None and old.get("spec") != obj.get("spec"):
                self._requeue(key)
        elif current is not None and current.uid == uid:
            self._forget_pending(key, uid)

    def _forget_pending(self, key: str, uid: str) -> None:
        del self._pending[key]
        self._set_nomination(uid, "")
        self._nominated_node.pop(uid, None)
        self._attempts.pop(key, None)
        self._backoff_until.pop(key, None)
        self._parked.pop(key, None)
        self._parked_for_pods.discard(key)
        self._last_event.pop(uid, None)

    # ----------------------------------------------------------------------------------------- cache

    def _place(self, info: PodInfo) -> None:
        previous = self._placed.get(info.uid)
        if previous is not None:
            counted = self._node_infos[previous].remove_pod(info.uid)
            if counted is None or not _same_victim_view(counted, info):
                self._state += 1
        else:
            self._state += 1
        node = self._node_infos.get(info.node_name)
        if node is None:
            node = self._node_infos[info.node_name] = NodeInfo(info.node_name)
        node.add_pod(info)
        self._placed[info.uid] = info.node_name
        if previous is not None and previous != info.node_name:
            self._drop_ghost(previous)
        if previous is None and self._parked_for_pods:
            # InterPodAffinity and PodTopologySpread register for pod additions: a new pod may be the match a
            # waiting pod's affinity needs, or lift a domain's count that held back its spread.
            waiting, self._parked_for_pods = self._parked_for_pods, set()
            for key in waiting:
                if self._parked.pop(key, None) is not None:
                    self._requeue(key)

    def _unplace(self, uid: str) -> bool:
        name = self._placed.pop(uid, None)
        if name is None:
            return False
        self._state += 1
        self._node_infos[name].remove_pod(uid)
        self._drop_ghost(name)
        return True

    def _drop_ghost(self, name: str) -> None:
        node = self._node_infos.get(name)
        if node is not None and node.node is None and not node.pods:
            del self._node_infos[name]

    def _ready_nodes(self) -> list[NodeInfo]:
        if self._ready is None:
            self._ready = sorted((n for n in self._node_infos.values() if n.node is not None), key=lambda n: n.name)
        return self._ready

    def _set_nomination(self, uid: str, node: str, info: PodInfo | None = None) -> None:
        for bucket in self._nominated.values():
            if bucket.pop(uid, None) is not None:
                self._state += 1
        if node and info is not None:
            self._nominated.setdefault(node, {})[uid] = info
            self._state += 1
        if node:
            self._nominated_node[uid] = node

    def _refresh_nomination(self, info: PodInfo) -> None:
        """Index the pending pod under its nomination: ours (set or cleared) until its status shows a change."""
        self._set_nomination(info.uid, self._nominated_node.get(info.uid, info.nominated_node), info)

    # ----------------------------------------------------------------------------------------- queueing

    def _cluster_changed(self) -> None:
        """Something that may make unschedulable pods fit happened: retry them once their back-off ends."""
        self._event_seq += 1
        parked, self._parked = self._parked, {}
        self._parked_for_pods.clear()
        for key in parked:
            self._requeue(key)

    async def _flush_leftovers(self) -> None:
        """Every 30 s, retry pods unschedulable for 5 minutes even without a cluster change (Kubernetes'
        `flushUnschedulablePodsLeftover`): one sweep instead of a timer per pod."""
        while True:
            await tick(self.clock, self.settings.unschedulable_flush_period)
            now = self.clock.now()
            stale = [k for k, since in self._parked.items() if now - since >= self.settings.max_unschedulable_wait]
            for key in stale:
                del self._parked[key]
                self._requeue(key)

    def _requeue(self, key: str) -> None:
        self.queue.add_after(key, max(0.0, self._backoff_until.get(key, 0.0) - self.clock.now()))

    def _back_off(self, key: str) -> float:
        attempts = self._attempts[key] = self._attempts.get(key, 0) + 1
        delay = min(self.settings.initial_backoff * (1 << min(attempts - 1, 30)), self.settings.max_backoff)
        self._backoff_until[key] = self.clock.now() + delay
        return delay

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _worker(self) -> None:
        while True:
            first = await self.queue.get()
            if first is None:
                return
            batch = [first]
            while len(self.queue):
                key = await self.queue.get()
                if key is None:
                    break
                batch.append(key)
            batch.sort(key=self._order)
            for key in batch:
                try:
                    await self.schedule_one(key)
                except Exception:
                    log.exception("scheduling %s", key)
                    self.metrics.errors.inc()
                    if key in self._pending:
                        self.queue.add_after(key, self._back_off(key))
                finally:
                    self.queue.done(key)

    def _order(self, key: str) -> tuple[int, float, str]:
        info = self._pending.get(key)
        return (-info.priority, info.created, key) if info is not None else (0, 0.0, key)

    # ----------------------------------------------------------------------------------------- one attempt

    async def schedule_one(self, key: str) -> None:
        """One scheduling attempt for the pending pod `key` (`namespace/name`)."""
        pod = self._pending.get(key)
        if pod is None or pod.uid in self._assumed:
            return
        seq = self._event_seq
        has_claims = bool(volumebinding.pod_claim_names(pod.pod))
        if has_claims:
            problem = volumebinding.prefilter(pod.pod, self._claim, self._storage_class)
            if problem is not None:
                count = len(self._ready_nodes())
                not_helpful = fit_error(count, {}, absent_reason=REASON_NOT_HELPFUL)
                message = f"0/{count} nodes are available: {problem}. {PREEMPTION_PREFIX}{not_helpful}"
                self._unschedulable(pod, message, seq, None)
                return
        nominated = self._nominated_node.get(pod.uid, pod.nominated_node)
        if nominated != pod.nominated_node:  # our nomination, before its status patch is seen
            pod = with_field(pod, "nominated_node", nominated)
        nodes = self._ready_nodes()
        # The failure cache is keyed by `_signature`, made only when there is a cached failure to find or one to
        # keep: nothing between here and the store below changes the pod or the nodes, so it is the same key.
        cacheable = not nominated and not has_claims
        cached = self._failures.get(_signature(pod, nodes)) if cacheable and self._failures else None
        if cached is not None and cached[0] == self._state:
            self._unschedulable(pod, cached[1], seq, cached[2])  # same pod shape, same cluster: same answer
            return
        if not nodes:
            self._unschedulable(pod, NO_NODES_AVAILABLE, seq, None)
            return
        spec = pod.spec
        if (
            spec is not None
            and cacheable
            and self.ranked
            and _plain(pod)
            and not self._service_selectors.get(pod.namespace)
            and not any(self._nominated.values())
        ):
            chosen = self._ranked_choice(pod, spec, nodes)
            if chosen is not None:
                self._assume(pod, chosen, has_claims)
                return
        cycle = prefilter(pod, nodes, self._namespace_labels)
        feasible: list[NodeInfo] = []
        statuses: dict[str, FilterStatus] = {}
        nominations = self._nominated
        for node in nodes:
            reserved = nominated_on(node.name, pod, nominations) if nominations.get(node.name) else ()
            status = filter_node(pod, node, reserved, cycle)
            if status is None and has_claims:
                labels = dict(node.labels)
                if volumebinding.node_conflict(pod.pod, labels, node.name, self._claim, self._volume):
                    status = FilterStatus((volumebinding.ERR_REASON_NODE_CONFLICT,), False)
                elif volumebinding.selected_elsewhere(pod.pod, node.name, self._claim_assumed, self._storage_class):
                    status = FilterStatus((volumebinding.ERR_REASON_BIND_CONFLICT,), False)
            if status is None:
                feasible.append(node)
            else:
                statuses[node.name] = status
        if feasible:
            # A preemptor whose nominated node now fits goes there (Kubernetes evaluates that node first).
            if nominated and any(n.name == nominated for n in feasible):
                chosen = nominated
            elif len(feasible) == 1:
                chosen = feasible[0].name  # `select_host` scores no single node: its scorer is not made
            else:
                selector = (
                    default_spread_selector(pod, self._service_selectors)
                    if not pod.any_spread and self._service_selectors.get(pod.namespace)
                    else None
                )
                chosen = select_host(pod, feasible, cluster_scorer(pod, nodes, self._namespace_labels, selector))
            self._assume(pod, chosen, has_claims)
            return
        reasons = {name: status.reasons for name, status in statuses.items()}
        self.metrics.preemption_attempts.inc()
        result = preempt(
            pod, nodes, statuses, nominated=self._nominated, pdbs=self._budgets, now=self.clock.now(), cycle=cycle
        )
        nomination: str | None = None
        if result.candidate is not None:
            await self._preempt(pod, result.candidate)
            self.metrics.preemption_victims.observe(len(result.candidate.victims))
            nomination = result.candidate.node
        elif result.clear_nomination:
            nomination = ""
        message = fit_error(len(nodes), reasons, post_filter=result.message)
        if cacheable and result.candidate is None:
            if len(self._failures) > 10_000:
                self._failures.clear()
            self._failures[_signature(pod, nodes)] = (self._state, message, nomination)
        self._unschedulable(pod, message, seq, nomination)

    def _ranked_choice(self, pod: PodInfo, spec: SpecInfo, nodes: list[NodeInfo]) -> str | None:
        """The node the full path would choose for a plain pod (no nomination, claim, or Service in its namespace,
        no pod nominated anywhere), from its spec's ranking; None when the full path must decide (no node fits,
        a node is flagged, or no score above -1)."""
        ranking = self._rankings.get(id(spec))
        if ranking is None or ranking.spec is not spec or ranking.nodes is not nodes:
            if len(self._rankings) >= _RANKINGS_KEPT:
                self._rankings.clear()
            count = len(nodes)
            ranking = self._rankings[id(spec)] = _Ranking(spec, nodes, [-1] * count, [_UNFIT] * count, [False] * count)
        seen = ranking.seen
        for i, node in enumerate(nodes):
            if node.generation != seen[i]:
                self._rank(ranking, i, pod, node)
        if ranking.flagged:
            return None
        scores = ranking.scores
        best = max(scores)
        if best <= -1:
            return None
        return nodes[scores.index(best)].name  # the first of the best in name order: `select_host`'s tie-break

    @staticmethod
    def _rank(ranking: _Ranking, i: int, pod: PodInfo, node: NodeInfo) -> None:
        """Evaluate node `i` of the ranking again for its spec (through the node's memo, as the full path does)."""
        marked = bool(node.anti_pods or node.affinity_pods or node.soft_taints)
        if marked is not ranking.marks[i]:
            ranking.marks[i] = marked
            ranking.flagged += 1 if marked else -1
        fits = not marked and filter_node(pod, node) is None
        ranking.scores[i] = node_scores(pod, (node,))[0] if fits else _UNFIT
        ranking.seen[i] = node.generation

    def _assume(self, pod: PodInfo, host: str, has_claims: bool) -> None:
        """Count the pod on `host` and bind it in the background. `has_claims`: the pod's volumes name claims
        (`pod_claim_names`, read by the attempt): without, there is nothing to provision or wait for."""
        assumed = with_node_name(pod, host)
        self._assumed.add(pod.uid)
        self._place(assumed)
        self._set_nomination(pod.uid, "")
        if has_claims:
            for claim in volumebinding.claims_to_provision(pod.pod, self._claim_assumed, self._storage_class):
                if not volumebinding.selected_node(claim):
                    self._selected[str((claim.get("metadata") or {}).get("uid") or "")] = host
        self._spawn(self._bind(assumed, self._attempts.get(pod.key, 0) + 1, has_claims))

    async def _bind(self, pod: PodInfo, attempts: int, has_claims: bool) -> None:
        body: Obj = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": pod.node_name},
        }
        async with self._bind_slots:
            try:
                if has_claims:
                    await self._bind_volumes(pod)
                await self.client.post_subresource(PODS, pod.namespace, pod.name, "binding", body, handover=True)
            except Exception as exc:
                for claim in volumebinding.claims_to_provision(pod.pod, self._claim, self._storage_class):
                    uid = str((claim.get("metadata") or {}).get("uid") or "")
                    if self._selected.get(uid) == pod.node_name:
                        del self._selected[uid]  # RevertAssumedPodVolumes
                if pod.uid in self._assumed:
                    self._assumed.discard(pod.uid)
                    if self._unplace(pod.uid):
                        self._cluster_changed()
                if isinstance(exc, ApiError) and exc.code in (404, 409):
                    log.info("binding %s/%s: %s", pod.namespace, pod.name, exc)
                    return
                log.warning("binding %s/%s to %s failed: %s", pod.namespace, pod.name, pod.node_name, exc)
                self.metrics.errors.inc()
                if pod.key in self._pending:
                    self.queue.add_after(pod.key, self._back_off(pod.key))
                return
        self.metrics.scheduled.inc()
        self.metrics.scheduling_attempts.observe(attempts)
        if self.events.recording:  # a simulation records no events: its message is not formatted
            self.events.event(
                pod.pod, "Normal", "Scheduled", f"Successfully assigned {pod.namespace}/{pod.name} to {pod.node_name}"
            )

    async def _bind_volumes(self, pod: PodInfo) -> None:
        """VolumeBinding's PreBind: name the chosen node in each unbound WaitForFirstConsumer claim, then wait
        (up to `bind_timeout`) until the PV controller has bound every claim of the pod."""
        for claim in volumebinding.claims_to_provision(pod.pod, self._claim, self._storage_class):
            if volumebinding.selected_node(claim) == pod.node_name:
                continue
            meta = claim.get("metadata") or {}
            patch = {"metadata": {"annotations": {volumebinding.SELECTED_NODE_ANNOTATION: pod.node_name}}}
            await self.client.patch(
                PERSISTENT_VOLUME_CLAIMS, pod.namespace, str(meta.get("name")), patch, patch_type="merge"
            )
        deadline = self.clock.now() + self.settings.bind_timeout
        while not volumebinding.all_bound(pod.pod, self._claim):
            remaining = deadline - self.clock.now()
            if remaining <= 0:
                raise TimeoutError("binding volumes: timed out waiting for the condition")
            changed = self._claim_changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), timeout=min(remaining, 1.0))

    def _unschedulable(self, pod: PodInfo, message: str, seq: int, nomination: str | None) -> None:
        """Record the failure (event, condition, nomination) and park the pod until a change or its back-off."""
        key = pod.key
        current = self._pending.get(key)
        if current is None or current.uid != pod.uid:
            return  # deleted or bound while the attempt awaited the API
        self.metrics.unschedulable.inc()
        delay = self._back_off(key)
        if self._event_seq != seq:
            self.queue.add_after(key, delay)  # the cluster changed during the attempt: just back off
        else:
            self._parked[key] = self.clock.now()
            if pod.affinity_terms or pod.spread:
                self._parked_for_pods.add(key)
        if nomination is not None:
            self._set_nomination(pod.uid, nomination, pod)
            if not nomination:
                self._nominated_node[pod.uid] = ""
        last = self._last_event.get(pod.uid)
        now = self.clock.now()
        if last is None or last[0] != message or now - last[1] >= self.settings.max_unschedulable_wait:
            # Kubernetes' event spam filter and aggregation show a repeated message about once per 5 minutes.
            self._last_event[pod.uid] = (message, now)
            self.events.event(pod.pod, "Warning", "FailedScheduling", truncate_message(message))
        patch = self._status_patch(pod, message, nomination)
        if patch is not None:
            self._spawn(self._patch_status(pod, patch))

    def _status_patch(self, pod: PodInfo, message: str, nomination: str | None) -> Obj | None:
        status: Obj = {}
        existing = next(
            (c for c in (pod.pod.get("status") or {}).get("conditions") or () if c.get("type") == POD_SCHEDULED), None
        )
        condition: Obj = {"type": POD_SCHEDULED, "status": "False", "reason": REASON_UNSCHEDULABLE, "message": message}
        if existing is None or any(existing.get(k) != condition[k] for k in ("status", "reason", "message")):
            if existing is None or existing.get("status") != "False" or not existing.get("lastTransitionTime"):
                condition["lastTransitionTime"] = format_time(self.clock.now())
            status["conditions"] = [condition]
        if nomination is not None and nomination != pod.nominated_node:
            status["nominatedNodeName"] = nomination or None
        return {"status": status} if status else None

    async def _patch_status(self, pod: PodInfo, patch: Obj) -> None:
        try:
            await self.client.patch(PODS, pod.namespace, pod.name, patch, subresource="status")
        except ApiError as exc:
            if exc.code != 404:
                log.warning("updating status of %s: %s", pod.key, exc)
        except Exception as exc:
            log.warning("updating status of %s: %s", pod.key, exc)

    # ----------------------------------------------------------------------------------------- preemption

    async def _preempt(self, preemptor: PodInfo, candidate: Candidate) -> None:
        """Evict the victims (DisruptionTarget, graceful delete, event) and un-nominate lower-priority pods."""
        await asyncio.gather(*(self._evict(preemptor, victim, candidate.node) for victim in candidate.victims))
        for other in list(self._nominated.get(candidate.node, {}).values()):
            if other.uid != preemptor.uid and other.priority < preemptor.priority:
                self._set_nomination(other.uid, "")
                self._nominated_node[other.uid] = ""
                self._spawn(self._patch_status(other, {"status": {"nominatedNodeName": None}}))
                self._requeue(other.key)

    async def _evict(self, preemptor: PodInfo, victim: PodInfo, node: str) -> None:
        """`prepareCandidate` for one victim: `DisruptionTarget` patched in unless `UpdatePodCondition` finds the
        very condition there already (same reason and message; an unchanged status keeps its transition time),
        then a graceful delete (pkg/scheduler/framework/preemption/preemption.go)."""
        wanted: Obj = {
            "type": DISRUPTION_TARGET,
            "status": "True",
            "reason": PREEMPTION_REASON,
            "message": f"{preemptor.scheduler_name or self.settings.scheduler_name}: "
            "preempting to accommodate a higher priority pod",
        }
        status: Obj = {"conditions": (victim.pod.get("status") or {}).get("conditions") or []}
        changed = update_pod_condition(status, wanted, self.clock.now())
        try:
            if changed:
                condition = next(c for c in status["conditions"] if c.get("type") == DISRUPTION_TARGET)
                await self.client.patch(
                    PODS, victim.namespace, victim.name, {"status": {"conditions": [condition]}}, subresource="status"
                )
            if not victim.deleting:
                await self.client.delete(PODS, victim.namespace, victim.name, preconditions={"uid": victim.uid})
        except ApiError as exc:
            if exc.code not in (404, 409):
                raise
            return
        self.events.event(victim.pod, "Normal", "Preempted", f"Preempted by pod {preemptor.uid} on node {node}")


def _same_but_node_name(a: Obj, b: Obj) -> bool:
    """Whether two specs hold the same members but `nodeName`. A binding adds `nodeName` to a spec without one:
    then `a`'s items all in `b`'s answers it, without two copies of each spec (docs/sched54.md)."""
    if "nodeName" not in a and len(b) == len(a) + 1 and "nodeName" in b:
        return a.items() <= b.items()
    return {**a, "nodeName": None} == {**b, "nodeName": None}


_FINISHED = ("Succeeded", "Failed")
"""The phases of a finished pod, which the scheduler handles as gone."""


def _signature(pod: PodInfo, nodes: list[NodeInfo]) -> tuple[Any, ...]:
    """Everything a scheduling attempt reads from the pod (Job pods of one template share it). Pod affinity, spread
    and existing pods' anti-affinity also read the pod's namespace and labels (which differ between a Job's pods:
    the completion index), so then those are part of it too."""
    r = pod.requests
    spec = pod.spec
    cluster_wide = bool(pod.affinity_terms or pod.anti_terms or pod.spread) or any(node.anti_pods for node in nodes)
    terms = (spec.pod_affinity, spec.pod_anti_affinity, spec.spread) if spec is not None else pod
    return (
        (pod.namespace, tuple(sorted(pod.labels.items())), repr(terms)) if cluster_wide else None,
        pod.scheduler_name,
        pod.priority,
        pod.preempt_never,
        (r.milli_cpu, r.memory, r.ephemeral_storage, tuple(sorted(r.scalars.items()))),
        tuple(sorted(pod.node_selector.items())),
        repr(pod.required_terms) if pod.required_terms is not None else None,
        pod.tolerations,
        pod.host_ports,
    )


def _same_victim_view(a: PodInfo, b: PodInfo) -> bool:
    """Whether two versions of a placed pod contribute the same to decisions (fit, victim choice, PDBs): node,
    priority, requests, non-zero requests, start time, deletion, preemption mark, labels and host ports; a
    status-only update leaves them as they were. Compared field by field, the shared parts by identity first (a
    binding keeps the `SpecInfo`'s requests and the labels object): each bound pod is compared once with its
    assumed self, and building both sides' sorted tuples cost more than the rest of the placement."""
    if a is b:
        return True
    ra, rb = a.requests, b.requests
    if not (
        a.node_name == b.node_name
        and a.priority == b.priority
        and a.non_zero_cpu == b.non_zero_cpu
        and a.non_zero_memory == b.non_zero_memory
        and a.started == b.started
        and a.deleting == b.deleting
        and a.preemption_target == b.preemption_target
        and a.host_ports == b.host_ports
    ):
        return False
    if ra is not rb and (
        ra.milli_cpu != rb.milli_cpu
        or ra.memory != rb.memory
        or ra.ephemeral_storage != rb.ephemeral_storage
        or sorted(ra.scalars.items()) != sorted(rb.scalars.items())
    ):
        return False
    return a.labels is b.labels or sorted(a.labels.items()) == sorted(b.labels.items())
