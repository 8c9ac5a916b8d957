"""The pod garbage collector (`pkg/controller/podgc`): pods nobody else will ever clean up.

Every `period` (20 s) it force-deletes (grace 0), after setting phase `Failed` on pods that are not terminal yet:
* terminated pods beyond `terminated_pod_threshold` (12500; 0 disables), evicted ones first, then oldest;
* terminating pods on a node that is not Ready and carries the `node.kubernetes.io/out-of-service` taint;
* orphaned pods, bound to a node that is gone: a missing node is quarantined for 40 s, then confirmed with a
  live GET; these pods also get `DisruptionTarget` (`DeletionByPodGC`, "PodGC: node no longer exists");
* unscheduled pods that are terminating.
The phase and condition go in one status patch before the delete, so a Job's pod failure policy sees them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field

from prometheus_client import Counter

from kjobs.api.conditions import DELETION_BY_POD_GC, disruption_target, update_pod_condition
from kjobs.api.errors import ApiError
from kjobs.api.taints import TAINT_OUT_OF_SERVICE, taints_of
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.informer import InformerFactory, key_of
from kjobs.client.resources import NODES, PODS
from kjobs.clock import Clock, tick
from kjobs.controllers.disruption_metrics import PodGCMetrics
from kjobs.controllers.nodehealth import is_ready
from kjobs.job import pods as P

log = logging.getLogger(__name__)

REASON_TERMINATED = "terminated"
REASON_ORPHANED = "orphaned"
REASON_TERMINATING_OUT_OF_SERVICE = "out-of-service"
REASON_TERMINATING_UNSCHEDULED = "unscheduled"


@dataclass(frozen=True)
class PodGCSettings:
    """kube-controller-manager's pod GC knobs, with their defaults."""

    period: float = 20.0
    quarantine: float = 40.0
    terminated_pod_threshold: int = 12500


_NOT_TERMINATED = ("Pending", "Running", "Unknown")


def is_terminated(pod: Obj) -> bool:
    """`isPodTerminated`: any phase but Pending, Running and Unknown."""
    return P.phase(pod) not in _NOT_TERMINATED


def _evicted(pod: Obj) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Failed" and status.get("reason") == "Evicted"


def collection_order(pod: Obj) -> tuple[bool, float, str]:
    """`byEvictionAndCreationTimestamp`: evicted pods first, then oldest, then by name."""
    return (not _evicted(pod), P.creation_time(pod), str((pod.get("metadata") or {}).get("name") or ""))


def _node_name(pod: Obj) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


@dataclass(eq=False, repr=False)
class _Sorted:
    """What the steps of one pass read of the listed pods, each list in the pods' order."""

    terminated: list[Obj]
    """`is_terminated`: for `gcTerminated`."""
    deleting: list[tuple[Obj, str]]
    """The pods being deleted (`P.is_deleting`), with their node's name ("" unscheduled): for `gcTerminating`
    and `gcUnscheduledTerminating`."""
    node_names: dict[str, None]
    """Every node a pod is bound to, in the order first seen: for `gcOrphaned`'s quarantine."""


def _sort(pods: list[Obj]) -> _Sorted:
    """`is_terminated`, `P.is_deleting` and the node's name of every pod, read in one walk (inline: a call each
    was most of a pass's cost)."""
    terminated: list[Obj] = []
    deleting: list[tuple[Obj, str]] = []
    node_names: dict[str, None] = {}
    live = _NOT_TERMINATED
    for pod in pods:
        if str((pod.get("status") or {}).get("phase") or "") not in live:
            terminated.append(pod)
        node_name = str((pod.get("spec") or {}).get("nodeName") or "")
        if node_name:
            node_names[node_name] = None
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            deleting.append((pod, node_name))
    return _Sorted(terminated, deleting, node_names)


@dataclass(eq=False, repr=False)
class PodGCController:
    """Periodic force-deletion of terminated, orphaned and stuck terminating pods."""

    client: Client
    clock: Clock
    settings: PodGCSettings = field(default_factory=PodGCSettings)
    metrics: PodGCMetrics = field(default_factory=PodGCMetrics)
    shared: InformerFactory | None = None
    """Informers shared with other controllers (a private set when None)."""

    def __post_init__(self) -> None:
        factory = self.shared or InformerFactory(self.client, clock=self.clock)
        self.nodes = factory.informer(NODES)
        self.pods = factory.informer(PODS)
        self.quarantined: dict[str, float] = {}
        self._deleting: dict[tuple[str, str], Counter] = {}
        """`metrics.deleting`'s child by (namespace, reason), as `labels` hands it out."""
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start informers, wait for their first list, then collect every `period`."""
        self.nodes.start()
        self.pods.start()
        await asyncio.gather(self.nodes.synced.wait(), self.pods.synced.wait())
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="pod-gc")

    async def stop(self) -> None:
        """Stop the loop and informers."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.nodes.stop()
        await self.pods.stop()

    async def _loop(self) -> None:
        while True:
            try:
                await self.gc()
            except Exception:
                log.exception("pod GC pass")
            await tick(self.clock, self.settings.period)

    async def gc(self) -> None:
        """One pass, in Kubernetes' order (`gcTerminated`, `gcTerminating`, `gcOrphaned`,
        `gcUnscheduledTerminating`, pkg/controller/podgc/gc_controller.go), each over the pods listed at its start.

        The pods are sorted into what each step reads in one walk before the first delete (`_sort`): the informer's
        objects are read-only, so a step reads the same facts of the same listed objects as a walk of its own would
        after the deletes before it; 17,500 pods every 20 s at 100,000 completions (docs/perf47.md)."""
        pods = self.pods.list()
        nodes = {key_of(n)[1]: n for n in self.nodes.list()}
        sorted_pods = _sort(pods)
        if self.settings.terminated_pod_threshold > 0:
            await self._gc_terminated(sorted_pods.terminated)
        await self._gc_terminating(sorted_pods.deleting, nodes)
        await self._gc_orphaned(pods, sorted_pods.node_names, nodes)
        await self._gc_unscheduled_terminating(sorted_pods.deleting)

    async def _gc_terminated(self, terminated: list[Obj]) -> None:
        excess = len(terminated) - self.settings.terminated_pod_threshold
        if excess <= 0:
            return
        log.info("garbage collecting %d terminated pods", excess)
        terminated.sort(key=collection_order)
        await asyncio.gather(*(self._collect(p, REASON_TERMINATED) for p in terminated[:excess]))

    async def _gc_terminating(self, deleting: list[tuple[Obj, str]], nodes: dict[str, Obj]) -> None:
        chosen = []
        for pod, node_name in deleting:
            node = nodes.get(node_name)
            if node is None:
                continue
            if not is_ready(node) and any(t.get("key") == TAINT_OUT_OF_SERVICE for t in taints_of(node)):
                chosen.append(pod)
        chosen.sort(key=collection_order)
        await asyncio.gather(*(self._collect(p, REASON_TERMINATING_OUT_OF_SERVICE) for p in chosen))

    async def _gc_orphaned(self, pods: list[Obj], node_names: dict[str, None], nodes: dict[str, Obj]) -> None:
        now = self.clock.now()
        for node_name in node_names:
            if node_name not in nodes:
                self.quarantined.setdefault(node_name, now + self.settings.quarantine)
        deleted: set[str] = set()
        for name, due in sorted(self.quarantined.items()):
            if due > now:
                continue
            del self.quarantined[name]
            if name in nodes:
                continue
            try:
                await self.client.get(NODES, None, name)
            except ApiError as exc:
                if exc.code == 404:
                    deleted.add(name)
                else:
                    log.info("checking node %s: %s", name, exc)
        if not deleted:
            return
        for pod in pods:
            if _node_name(pod) in deleted:
                log.info("found orphaned pod %s assigned to a deleted node, deleting", key_of(pod))
                await self._collect(pod, REASON_ORPHANED, disruption_target(DELETION_BY_POD_GC))

    async def _gc_unscheduled_terminating(self, deleting: list[tuple[Obj, str]]) -> None:
        for pod, node_name in deleting:
            if not node_name:
                await self._collect(pod, REASON_TERMINATING_UNSCHEDULED)

    async def _collect(self, pod: Obj, reason: str, condition: Obj | None = None) -> None:
        """Force-delete one pod, counted in `pod_gc_collector_force_delete_pods_total`; any error of the patch or
        the delete, a pod already gone (404) included, counts in `..._force_delete_pod_errors_total`, as
        pkg/controller/podgc/gc_controller.go counts them (its "ignore not founds" comment ignores them only in
        the log)."""
        namespace, name = key_of(pod)
        counted = (namespace, reason)
        deleting = self._deleting.get(counted)
        if deleting is None:  # the labelled child, once: `labels` the same child again on every delete
            deleting = self._deleting[counted] = self.metrics.deleting.labels(namespace, reason)
        deleting.inc()
        try:
            if P.is_terminal(pod):  # `mark_failed_and_delete`'s delete of a terminal pod, without its frame
                await self.client.delete(PODS, namespace, name, grace_period_seconds=0, known=pod)
            else:
                await self._mark_failed_and_delete(pod, namespace, name, condition)
        except ApiError as exc:
            self.metrics.errors.labels(namespace, reason).inc()
            if exc.code != 404:
                log.info("force deleting pod %s/%s: %s", namespace, name, exc)

    async def mark_failed_and_delete(self, pod: Obj, condition: Obj | None = None) -> None:
        """`markFailedAndDeletePodWithCondition`: phase Failed (+ condition) unless terminal, then grace-0 delete."""
        namespace, name = key_of(pod)
        await self._mark_failed_and_delete(pod, namespace, name, condition)

    async def _mark_failed_and_delete(self, pod: Obj, namespace: str, name: str, condition: Obj | None) -> None:
        """`mark_failed_and_delete` of a pod whose key `_collect` has read already."""
        if not P.is_terminal(pod):
            status: Obj = dict(pod.get("status") or {})
            patch_status: Obj = {"phase": "Failed"}
            if condition is not None and update_pod_condition(status, condition, self.clock.now()):
                patch_status["conditions"] = [c for c in status["conditions"] if c.get("type") == condition["type"]]
            patch: Obj = {"metadata": {"uid": (pod.get("metadata") or {}).get("uid")}, "status": patch_status}
            await self.client.patch(PODS, namespace, name, patch, subresource="status")
            await self.client.delete(PODS, namespace, name, grace_period_seconds=0)
            return
        # A terminal pod is deleted as its informer holds it: the API server reads that object rather than
        # decode the stored pod, when it is still the stored revision (docs/perf45.md).
        await self.client.delete(PODS, namespace, name, grace_period_seconds=0, known=pod)
