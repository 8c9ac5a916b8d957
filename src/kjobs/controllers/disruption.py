"""The disruption controller (`pkg/controller/disruption`): PDB status and stale `DisruptionTarget` cleanup.

PodDisruptionBudgets are synced from pod and PDB events through a work queue (the numbers are
`kjobs.controllers.pdbstatus`); a PDB whose `disruptedPods` entries are still within their 2-minute window is
rechecked when the first one expires. Separately, a pod carrying `DisruptionTarget=True` that is neither being
deleted nor terminal 2 minutes (`stale_timeout`) after the condition's lastTransitionTime gets the condition
set to False (reason and message cleared), because the deletion it announced never happened; conditions with
reason `TerminationByKubelet` are never stale. Events come from `controllermanager`, as in Kubernetes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import orjson

from kjobs.api.conditions import TERMINATION_BY_KUBELET, update_pod_condition
from kjobs.api.errors import ApiError
from kjobs.api.names import DISRUPTION_TARGET
from kjobs.api.selectors import label_selector_from_object
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.client import resources as R
from kjobs.client.base import Client
from kjobs.client.events import EventRecorder
from kjobs.client.informer import InformerFactory, Key, key_of
from kjobs.client.resources import PDBS, PODS
from kjobs.client.workqueue import WorkQueue
from kjobs.clock import Clock
from kjobs.controllers.pdbstatus import (
    ExpectedCountError,
    count_healthy,
    disrupted_pods,
    expected_and_desired,
    fail_safe_status,
    no_scale,
    status_for,
)
from kjobs.job import pods as P

log = logging.getLogger(__name__)

SERVED: dict[tuple[str, str], str] = {
    (ref.group, ref.kind): ref.plural
    for ref in (R.PODS, R.NODES, R.EVENTS, R.NAMESPACES, R.JOBS, R.LEASES, R.PDBS, R.PRIORITY_CLASSES)
}
"""(group, kind) → resource, for the kinds kjobs serves (none has a scale subresource)."""


@dataclass(frozen=True)
class DisruptionSettings:
    """Knobs: how long a `DisruptionTarget` may stand on a pod that is not being deleted."""

    stale_timeout: float = 120.0


def format_selector(selector: Obj | None) -> str:
    """Go's `%v` of a `*metav1.LabelSelector` (its generated `String()`), as the UnmanagedPods Event shows it."""
    if selector is None:
        return "nil"
    labels = selector.get("matchLabels") or {}
    label_text = "".join(f"{k}: {labels[k]}," for k in sorted(labels))
    exprs = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(str(v) for v in e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or []
    )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{label_text}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"
    )


def stale_wait(pod: Obj, now: float, timeout: float) -> float | None:
    """`nonTerminatingPodHasStaleDisruptionCondition`: seconds until the condition is stale (None: never)."""
    since = stale_since(pod)
    return None if since is None else max(0.0, timeout - (now - since))


def stale_since(pod: Obj) -> float | None:
    """When the condition `stale_wait` waits on turned True (0 for no time), None when there is none: what the pod
    handler asks first, so that it reads the clock only for the rare pod that carries one."""
    # `P.is_deleting`, `P.is_terminal` and `find_condition` inlined: this runs for every pod event, and hardly
    # any pod carries the condition.
    status = pod.get("status") or {}
    if (pod.get("metadata") or {}).get("deletionTimestamp") or status.get("phase") in P.TERMINAL_PHASES:
        return None
    cond = None
    for candidate in status.get("conditions") or ():
        if candidate.get("type") == DISRUPTION_TARGET:
            cond = candidate
            break
    if cond is None or cond.get("status") != "True" or cond.get("reason") == TERMINATION_BY_KUBELET:
        return None
    since = cond.get("lastTransitionTime")
    return parse_time(since) if isinstance(since, str) and since else 0.0


def _copy(obj: Obj) -> Obj:
    result: Obj = orjson.loads(orjson.dumps(obj))
    return result


def _ref(obj: Obj, kind: str, api_version: str) -> Obj:
    meta = obj.get("metadata") or {}
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace"), "uid": meta.get("uid", "")},
    }


@dataclass(eq=False, repr=False)
class DisruptionController:
    """Keeps PDB status current and clears stale DisruptionTarget conditions."""

    client: Client
    clock: Clock
    settings: DisruptionSettings = field(default_factory=DisruptionSettings)
    shared: InformerFactory | None = None
    """Informers shared with other controllers (a private set when None)."""

    def __post_init__(self) -> None:
        factory = self.shared or InformerFactory(self.client, clock=self.clock)
        self.pods = factory.informer(PODS)
        self.pdbs = factory.informer(PDBS)
        self.events = EventRecorder(self.client, component="controllermanager", clock=self.clock)
        self.queue: WorkQueue[Key] = WorkQueue(clock=self.clock)
        self.stale_queue: WorkQueue[Key] = WorkQueue(clock=self.clock)
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Start informers, wait for their first list, then the two workers."""
        self.pods.add_handler(self._on_pod)
        self.pdbs.add_handler(self._on_pdb)
        self.pods.start()
        self.pdbs.start()
        await asyncio.gather(self.pods.synced.wait(), self.pdbs.synced.wait())
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._worker(self.queue, self.sync), name="disruption-pdb"),
            loop.create_task(self._worker(self.stale_queue, self.sync_stale_disruption), name="disruption-stale"),
        ]

    async def stop(self) -> None:
        """Stop workers and informers."""
        self.queue.shutdown()
        self.stale_queue.shutdown()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.pods.stop()
        await self.pdbs.stop()
        await self.events.flush()

    # ------------------------------------------------------------------------------------------ handlers

    def _on_pdb(self, old: Obj | None, new: Obj | None) -> None:
        self.queue.add(key_of(new or old or {}))

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        pod = new or old
        assert pod is not None
        budgets = self._pdbs_for(pod) if self.pdbs.cache else []  # no budget anywhere: nothing to match
        if len(budgets) > 1:
            namespace, name = key_of(pod)
            chosen = key_of(budgets[0])[1]
            self.events.event(
                _ref(pod, "Pod", "v1"),
                "Warning",
                "MultiplePodDisruptionBudgets",
                f'Pod "{namespace}"/"{name}" matches multiple PodDisruptionBudgets.  Chose "{chosen}" arbitrarily.',
            )
        for pdb in budgets:
            self.queue.add(key_of(pdb))
        if new is not None and stale_since(new) is not None:  # hardly any pod: the clock is read only for those
            wait = stale_wait(new, self.clock.now(), self.settings.stale_timeout)
            if wait is not None:
                self.stale_queue.add_after(key_of(new), wait)

    def _pdbs_for(self, pod: Obj) -> list[Obj]:
        """`GetPodPodDisruptionBudgets`: PDBs of the pod's namespace whose selector matches. A pod without labels
        is matched by an empty selector or a DoesNotExist one: the policy/v1 lister asks the selector
        (client-go listers/policy/v1/poddisruptionbudget_expansion.go, "Unlike the v1beta version ...")."""
        if not self.pdbs.cache:
            return []  # no budget anywhere (most clusters, every simulation without one): nothing to list and sort
        found = []
        for pdb in sorted(self.pdbs.list(key_of(pod)[0]), key=lambda p: key_of(p)[1]):
            try:
                selector = label_selector_from_object((pdb.get("spec") or {}).get("selector"))
            except ApiError:
                continue
            if selector.matches(pod):
                found.append(pdb)
        return found

    # ------------------------------------------------------------------------------------------- workers

    async def _worker(self, queue: WorkQueue[Key], sync: Callable[[Key], Awaitable[None]]) -> None:
        while True:
            key = await queue.get()
            if key is None:
                return
            try:
                await sync(key)
                queue.forget(key)
            except Exception as exc:
                log.info("disruption controller: syncing %s/%s: %s", key[0], key[1], exc)
                queue.add_rate_limited(key)
            finally:
                queue.done(key)

    async def sync(self, key: Key) -> None:
        """Recompute one PDB's status (`sync` → `trySync`, with `failSafe` on errors other than conflicts)."""
        pdb = self.pdbs.get(*key)
        if pdb is None:
            return
        try:
            await self._try_sync(pdb)
        except ApiError as exc:
            if exc.code == 409:
                raise
            await self._fail_safe(pdb, exc.message)
        except ExpectedCountError as exc:
            await self._fail_safe(pdb, str(exc))

    async def _try_sync(self, pdb: Obj) -> None:
        namespace, _ = key_of(pdb)
        ref = _ref(pdb, "PodDisruptionBudget", "policy/v1")
        selector_obj = (pdb.get("spec") or {}).get("selector")
        try:
            selector = label_selector_from_object(selector_obj)
        except ApiError as exc:
            self.events.event(ref, "Warning", "NoPods", f"Failed to get pods: {exc.message}")
            raise
        pods = sorted((p for p in self.pods.list(namespace) if selector.matches(p)), key=lambda p: key_of(p)[1])
        if not pods:
            self.events.event(ref, "Normal", "NoPods", "No matching pods found")
        try:
            counts = expected_and_desired(pdb, pods, no_scale(SERVED))
        except ExpectedCountError as exc:
            self.events.event(
                ref,
                "Warning",
                "CalculateExpectedPodCountFailed",
                f"Failed to calculate the number of expected pods: {exc}",
            )
            raise
        if counts.unmanaged:
            self.events.event(
                ref,
                "Warning",
                "UnmanagedPods",
                f"Pods selected by this PodDisruptionBudget (selector: {format_selector(selector_obj)}) were found "
                "to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result "
                'in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB '
                "to an integer value.",
            )
        now = self.clock.now()
        disrupted, recheck, overdue = disrupted_pods(pdb, pods, now)
        for name in overdue:
            pod = next(p for p in pods if key_of(p)[1] == name)
            self.events.event(
                _ref(pod, "Pod", "v1"),
                "Warning",
                "NotDeleted",
                f"Pod was expected by PDB {namespace}/{namespace} to be deleted but it wasn't",
            )
        healthy = count_healthy(pods, disrupted, now)
        status = status_for(pdb, counts, healthy, disrupted, now)
        if status is not None:
            await self.client.update(PDBS, namespace, dict(pdb, status=status), subresource="status")
        if recheck is not None:
            self.queue.add_after(key_of(pdb), recheck - now)

    async def _fail_safe(self, pdb: Obj, message: str) -> None:
        status = fail_safe_status(pdb, message, self.clock.now())
        await self.client.update(PDBS, key_of(pdb)[0], dict(pdb, status=status), subresource="status")

    async def sync_stale_disruption(self, key: Key) -> None:
        """Set a stale `DisruptionTarget` to False (`syncStalePodDisruption`), or wait until it is stale."""
        cached = self.pods.get(*key)
        if cached is None:
            return
        wait = stale_wait(cached, self.clock.now(), self.settings.stale_timeout)
        if wait is None:
            return
        if wait > 0:
            self.stale_queue.add_after(key, wait)
            return
        pod = _copy(cached)
        status = pod.setdefault("status", {})
        if not update_pod_condition(status, {"type": DISRUPTION_TARGET, "status": "False"}, self.clock.now()):
            return
        await self.client.update(PODS, key[0], pod, subresource="status")
        log.info("reset stale DisruptionTarget condition of pod %s/%s to False", *key)
