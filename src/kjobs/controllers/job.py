"""The Job controller: informers on Jobs and Pods, a work queue keyed by Job, and the core's sync.

Everything Kubernetes' Job controller decides is in `kjobs.job` (pure); this module only moves objects in and
out: it indexes pods by their controlling Job, keeps expectations current from pod events (so a sync never acts
on a cache that has not seen its own writes), batches pod events per Job (1 s by default, like Kubernetes),
executes plans through the client, and removes the tracking finalizer from pods whose Job is gone or finished.

Handlers only index and enqueue; the Job workers and the orphan worker start once both informers have synced
(`Run`'s `WaitForNamedCacheSync` in pkg/controller/job/job_controller.go). A pod counts as an orphan only when its
Job is confirmed gone: not in the cache, and a live GET finds no Job of that name with the reference's uid (a
cache that has not loaded, or lags, must never cost a live Job the finalizers its counting depends on).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

from kjobs.api.errors import ApiError
from kjobs.api.names import JOB_TRACKING_FINALIZER
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.events import EventRecorder
from kjobs.client.informer import InformerFactory
from kjobs.client.resources import JOBS, PODS
from kjobs.client.workqueue import WorkerPool, WorkQueue
from kjobs.clock import Clock
from kjobs.controllers import podclaims
from kjobs.job import pods as P
from kjobs.job.bookkeeping import BookkeepingStore
from kjobs.job.config import SyncConfig
from kjobs.job.context import external_controller, is_finished
from kjobs.job.execute import SyncOutcome, sync_job
from kjobs.job.metrics import JobMetrics
from kjobs.metrictally import Tally

log = logging.getLogger(__name__)

ABSENT_JOBS_KEPT = 500
"""As many confirmed-gone Job uids as Kubernetes' garbage collector remembers (`absentOwnerCache`, 500)."""

REMOVE_FINALIZER_PATCH = {"metadata": {"$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER]}}


@dataclass(frozen=True)
class JobControllerSettings:
    """Controller knobs: the core's `SyncConfig`, pod-event batching and worker count."""

    sync: SyncConfig = field(default_factory=SyncConfig)
    batch_period: float = 1.0
    workers: int = 4


class ClientPodControl:
    """`PodControl` over the API client."""

    def __init__(self, client: Client) -> None:
        self._client = client
        self.inline = client.completes_inline

    async def create_pod(self, namespace: str, pod: Obj) -> Obj:
        return await self._client.create(PODS, namespace, pod, handover=True)  # built for this call, shared with none

    async def delete_pod(self, namespace: str, name: str) -> None:
        await self._client.delete(PODS, namespace, name)

    async def remove_tracking_finalizer(self, namespace: str, name: str) -> None:
        await self._client.patch(PODS, namespace, name, REMOVE_FINALIZER_PATCH, handover=True)  # never changed


class ClientStatusWriter:
    """`StatusWriter` over the API client (PUT /status with the Job's resourceVersion)."""

    def __init__(self, client: Client) -> None:
        self._client = client

    async def update_job_status(self, job: Obj, status: Obj) -> Obj:
        # The Job as the sync read it with its new status, as the Job controller's UpdateStatus sends it: a PUT of
        # /status keeps the spec from the stored Job and takes the metadata it carries (its resourceVersion makes a
        # stale one a conflict). Built for this call and handed over: the status is the sync's own, written once
        # and never changed after; the metadata is a copy of the cached Job's, whose values nothing changes in place.
        meta = job["metadata"]
        body = {"apiVersion": job.get("apiVersion", "batch/v1"), "kind": job.get("kind", "Job"), "metadata": dict(meta)}
        body["status"] = status
        return await self._client.update(JOBS, meta["namespace"], body, subresource="status", handover=True)


class JobController:
    """Reconciles every Job whose `spec.managedBy` is unset or `kubernetes.io/job-controller`."""

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        settings: JobControllerSettings | None = None,
        metrics: JobMetrics | None = None,
        shared: InformerFactory | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.settings = settings or JobControllerSettings()
        self.metrics = metrics or JobMetrics()
        self.book = BookkeepingStore()
        self.events = EventRecorder(client, component="job-controller", clock=clock)
        factory = shared or InformerFactory(client, clock=clock)
        self.jobs = factory.informer(JOBS)
        self.pods = factory.informer(PODS)
        self.queue: WorkQueue[str] = WorkQueue(clock=clock)
        self._workers = WorkerPool(self.queue, self.sync, name="job-worker", workers=self.settings.workers)
        self.orphans: WorkQueue[str] = WorkQueue(clock=clock)
        """Pods (`namespace/name`) whose tracking finalizer may have to go: Kubernetes' `orphanQueue`."""
        self._orphan_workers = WorkerPool(self.orphans, self.sync_orphan_pod, name="job-orphan-worker", workers=1)
        self._pod_control = ClientPodControl(client)
        self._status_writer = ClientStatusWriter(client)
        self._pods_by_owner: dict[str, _OwnedPods] = {}
        self._tracking_finalizer_series: dict[str, Tally] = {}
        self._finished_uids: set[str] = set()
        self._external_seen: set[str] = set()
        self._absent_jobs: dict[str, None] = {}
        """Uids of Jobs confirmed gone (a uid is never reused), newest last, at most `ABSENT_JOBS_KEPT`: the
        garbage collector's `absentOwnerCache`, so a deleted Job's many pods cost one live GET, not one each."""
        self.last_outcome: dict[str, SyncOutcome] = {}
        self._claims: dict[str, dict[str, str]] = {}
        """Per Job key, pods (uid -> `namespace/name`) it may have to adopt or release (`podclaims`), found by
        the pod events that changed a pod's labels or owner; its next sync claims them."""

    # ----------------------------------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Start informers, wait for their first list, then start the workers (Job syncs and orphans): until
        both caches have loaded, events only fill the queues."""
        self.jobs.add_handler(self._on_job)
        self.pods.add_handler(self._on_pod)
        self.jobs.start()
        self.pods.start()
        await asyncio.gather(self.jobs.synced.wait(), self.pods.synced.wait())
        self._workers.start()
        self._orphan_workers.start()

    async def stop(self) -> None:
        """Stop workers and informers."""
        await self._workers.stop()
        await self._orphan_workers.stop()
        await self.jobs.stop()
        await self.pods.stop()
        await self.events.flush()

    # ------------------------------------------------------------------------------------------ handlers

    def _on_job(self, old: Obj | None, new: Obj | None) -> None:
        job = new or old
        assert job is not None
        key = _key(job)
        if new is None:
            self.queue.add(key)
            self.book.job_deleted(key)  # a new Job of this name, seen before the next sync, starts clean
            self._confirmed_gone(str(job["metadata"].get("uid") or ""))  # the watch said so: no GET needed
            self._external_seen.discard(str(job["metadata"].get("uid") or ""))
            self._cleanup_pod_finalizers(job)
            return
        controller = external_controller(new, self.settings.sync.controller_name)
        if controller is not None:
            uid = str(new["metadata"].get("uid") or "")
            if uid not in self._external_seen:
                self._external_seen.add(uid)
                self.metrics.by_external_controller.labels(controller).inc()
            return
        if is_finished(new):
            self._finished_uids.discard(str(new["metadata"].get("uid") or ""))
        elif old is None and (new.get("spec") or {}).get("manualSelector") is True:
            self._note_orphans_for(new)
        if old is not None and _generation(old) == _generation(new):
            # Status-only changes (mostly our own writes) are batched like pod events; spec changes sync now.
            self.queue.add_after(key, self.settings.batch_period)
        else:
            self.queue.add(key)

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        # Runs for every event of every pod (four a pod in `kjobs simulate`): `_flags`, `_job_for`, `_key` and
        # `_claim_relevant` are inlined, each field read once (docs/consume50.md), and `_controller_ref` and the
        # Jobs informer's `get` too (docs/consume52.md).
        pod = new or old
        assert pod is not None
        meta = pod.get("metadata") or {}
        pod_uid = str(meta.get("uid") or "")
        owner: Obj | None = None
        for ref in meta.get("ownerReferences") or ():  # `_controller_ref`, inline
            if ref.get("controller"):
                owner = ref
                break
        owner_uid = str(owner.get("uid") or "") if owner is not None else ""
        owned = self._pods_by_owner.get(owner_uid) if owner is not None else None
        # Each version's facts, read once: the old version's as they were read when it arrived (the index keeps
        # them by the object's id), the new one's once for both this handler and the syncs (`P.sync_facts`).
        remembered = owned.facts if owned is not None else None
        old_facts = None
        if old is not None:
            old_facts = remembered.get(id(old)) if remembered is not None else None
            if old_facts is None:
                old_facts = P.sync_facts(old)
            old_tracked, old_terminal, old_deleting = old_facts[3], not old_facts[0], old_facts[1]  # `_flags`
        else:
            old_tracked = old_terminal = old_deleting = False
        if new is not None:
            new_facts = remembered.get(id(new)) if remembered is not None else None
            if new_facts is None:
                new_facts = P.sync_facts(new, old, old_facts)
            new_tracked, new_terminal, new_deleting = new_facts[3], not new_facts[0], new_facts[1]
            if owner is not None:
                if owned is None:
                    owned = self._owned(owner_uid)
                # `_OwnedPods.observe(pod_uid, new, new_facts)`, inline: a call less an event, the name read once
                # (an empty `new`, which `new or old` passed over, has none)
                known = owned.pods.get(pod_uid)
                if known is None:
                    pod_name = str(meta.get("name") or "") if pod is new else ""
                    owned._added[pod_uid] = pod_name
                elif known is not new:
                    del owned.facts[id(known)]
                owned.pods[pod_uid] = new
                owned.facts[id(new)] = new_facts
                if not new_facts[0] and not new_tracked:  # settled: finished and counted
                    owned.unsettled.pop(pod_uid, None)
                elif pod_uid not in owned.unsettled:
                    if known is not None:
                        pod_name = str(meta.get("name") or "") if pod is new else ""
                    owned.unsettled[pod_uid] = pod_name
        else:
            new_tracked = new_terminal = new_deleting = False
            if owner is not None:
                self._forget_pod(owner_uid, pod_uid)
        # `_job_for`; its key is the cache's (namespace, name), which `_key` of the Job found there spells the same.
        job = None
        if owner is not None and owner.get("kind") == "Job":
            namespace, name = str(meta.get("namespace") or ""), str(owner.get("name") or "")
            job = self.jobs.cache.get((namespace, name))  # `Informer.get`, inline
            if job is not None and job["metadata"].get("uid") != owner.get("uid"):
                job = None
        relevant = False  # labels or owner changed (`_claim_relevant`): read once for both uses below
        if old is not None and new is not None:
            old_meta = old.get("metadata") or {}
            new_meta = meta if pod is new else new.get("metadata") or {}  # `new or old` took an empty `new`'s old
            old_labels, new_labels = old_meta.get("labels"), new_meta.get("labels")
            old_refs, new_refs = old_meta.get("ownerReferences"), new_meta.get("ownerReferences")
            # A write that leaves them as they were hands the very objects on: no walk of equal ones.
            if (old_labels is not new_labels and old_labels != new_labels) or (
                old_refs is not new_refs and old_refs != new_refs
            ):
                relevant = True
                self._owner_changed(old, owner, pod_uid)
        if new is not None and (old is None or relevant):
            self._note_claims(new, job, owner, pod_uid)
        if new_tracked and new_terminal and not (old_tracked and old_terminal):
            self._count_tracking_finalizer("add")
        if old_tracked and old_terminal and not new_tracked:
            self._count_tracking_finalizer("delete")
        if job is None:
            if new is not None and new_tracked:
                self._enqueue_orphan(new)  # checked by `sync_orphan_pod` once the caches have synced
            return
        key = f"{namespace}/{name}"
        if new is None:
            if not old_deleting:
                self.book.deletion_observed(key)
            self.book.finalizer_removal_observed(key, pod_uid)
        else:
            if old is None and not new_deleting:
                self.book.creation_observed(key)
            if new_deleting and not old_deleting:
                self.book.deletion_observed(key)
            if not new_tracked and old_tracked:
                self.book.finalizer_removal_observed(key, pod_uid)
        if (job.get("status") or {}).get("conditions") and is_finished(job):  # a running Job has none
            if new is not None and new_tracked:
                self._enqueue_orphan(new)
            return
        self.queue.add_after(key, self.settings.batch_period)

    def _owner_changed(self, old: Obj, owner: Obj | None, pod_uid: str) -> None:
        """A pod's controller changed: the former owner's index drops it and that Job syncs again
        (`updatePod`'s `controllerRefChanged`)."""
        old_meta = old.get("metadata") or {}
        old_owner = _controller_ref(old_meta)
        if old_owner is None or (owner is not None and owner.get("uid") == old_owner.get("uid")):
            return
        self._forget_pod(str(old_owner.get("uid") or ""), pod_uid)
        former = self._job_for(old_meta, old_owner)
        if former is not None:
            self.queue.add_after(_key(former), self.settings.batch_period)

    def _note_claims(self, pod: Obj, job: Obj | None, owner: Obj | None, pod_uid: str) -> None:
        """Remember what the next sync claims: the pod's Job releases it when the selector does not match it,
        also when first seen (made by someone else with the Job as controller, or relabelled while the
        controller was down: `getPodsForJob` claims every pod the Job controls); an orphan is adopted by the
        Jobs of its namespace whose selector matches it (`getPodJobs`)."""
        if owner is not None:
            if job is None or is_finished(job) or not podclaims.should_release(job, pod):
                return
            if external_controller(job, self.settings.sync.controller_name) is None:  # syncJob skips those first
                self._claim(job, pod_uid, pod)
            return
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            return
        for candidate in self.jobs.list(str(meta.get("namespace") or "")):
            if external_controller(candidate, self.settings.sync.controller_name) is not None:
                continue
            if not is_finished(candidate) and podclaims.may_adopt(candidate, pod):
                self._claim(candidate, pod_uid, pod)

    def _note_orphans_for(self, job: Obj) -> None:
        """A Job first seen claims the orphans of its namespace that its selector matches, as its first sync's
        `getPodsForJob` would (job.md, "Specifying your own Pod selector": `new` adopts the pods `old` left
        running). Only a Job with `manualSelector: true` can match a pod made before it: a generated selector
        names the Job's own new uid, and any pod made later is claimed by its own event (`_note_claims`)."""
        for pod in self.pods.list(str(job["metadata"].get("namespace") or "")):
            meta = pod.get("metadata") or {}
            if _controller_ref(meta) is None and podclaims.may_adopt(job, pod):
                self._claim(job, str(meta.get("uid") or ""), pod)

    def _claim(self, job: Obj, pod_uid: str, pod: Obj) -> None:
        key = _key(job)
        self._claims.setdefault(key, {})[pod_uid] = _key(pod)
        self.queue.add_after(key, self.settings.batch_period)

    async def _claim_pods(self, key: str, job: Obj) -> bool:
        """`ClaimPods` for the pods noted for this Job, each as the cache has it now; True if one was patched
        (its event then syncs the Job again, with the pod counted where it now belongs)."""
        noted = self._claims.pop(key, None)
        if not noted:
            return False
        uid = job["metadata"]["uid"]
        patched = False
        for pod_key in noted.values():
            namespace, name = pod_key.split("/", 1)
            pod = self.pods.get(namespace, name)
            if pod is None:
                continue
            owner = _controller_ref(pod.get("metadata") or {})
            if owner is not None and owner.get("uid") == uid and podclaims.should_release(job, pod):
                patch = podclaims.release_patch(job, pod)
            elif owner is None and podclaims.may_adopt(job, pod) and await self._can_adopt(job):
                patch = podclaims.adopt_patch(job, pod)
            else:
                continue
            try:
                await self.client.patch(PODS, namespace, name, patch)
            except ApiError as exc:
                if exc.code not in (404, 422):  # gone, or the name now belongs to another pod
                    self._claims.setdefault(key, {}).update(noted)  # the retried sync claims them again
                    raise
            patched = True
        return patched

    async def _can_adopt(self, job: Obj) -> bool:
        """`RecheckDeletionTimestamp`: adopt only for a Job read live that is still this one and not being
        deleted (the cache may be behind a deletion)."""
        live = await self._live_job(
            job["metadata"]["namespace"], {"name": job["metadata"]["name"], "uid": job["metadata"]["uid"]}
        )
        return live is not None and not (live.get("metadata") or {}).get("deletionTimestamp")

    def _enqueue_orphan(self, pod: Obj) -> None:
        self.orphans.add(_key(pod))

    def _cleanup_pod_finalizers(self, job: Obj) -> None:
        """`cleanupPodFinalizers`: a deleted Job's pods that still carry the finalizer are checked as orphans."""
        owned = self._pods_by_owner.get(str((job.get("metadata") or {}).get("uid") or ""))
        if owned is None:
            return
        for pod in owned.pods.values():
            if _facts(pod)[0]:
                self._enqueue_orphan(pod)

    def _count_tracking_finalizer(self, event: str) -> None:
        """`terminated_pods_tracking_finalizer_total{event}`: its two series are looked up once, when first
        counted (a series appears only once counted, as Kubernetes' metrics do), and counted in a tally of this
        controller's thread (`kjobs.metrictally`), added to the series when the registry is collected."""
        tally = self._tracking_finalizer_series.get(event)
        if tally is None:
            series = self.metrics.tracking_finalizer.labels(event)
            tally = self._tracking_finalizer_series[event] = self.metrics.tracking_finalizer_counts.tally(series)
        tally.inc()

    def _owned(self, owner: str) -> _OwnedPods:
        owned = self._pods_by_owner.get(owner)
        if owned is None:
            owned = self._pods_by_owner[owner] = _OwnedPods()
        return owned

    def _forget_pod(self, owner: str, pod_uid: str) -> None:
        """A pod left its Job (deleted, or another controller's now); the Job's index goes with its last pod, so
        a server that runs Jobs all day keeps no entry per Job it ever saw (`_owned` makes one again)."""
        owned = self._pods_by_owner.get(owner)
        if owned is not None:
            owned.observe(pod_uid, None)
            if not owned.pods:
                del self._pods_by_owner[owner]

    def _job_for(self, meta: Obj, ref: Obj | None) -> Obj | None:
        """The Job a pod's controller reference names, if it is in the cache with that uid."""
        if ref is None or ref.get("kind") != "Job":
            return None
        job = self.jobs.get(str(meta.get("namespace") or ""), str(ref.get("name") or ""))
        if job is not None and job["metadata"].get("uid") == ref.get("uid"):
            return job
        return None

    async def sync_orphan_pod(self, key: str) -> None:
        """`syncOrphanPod`: remove the tracking finalizer of the pod `key` (`namespace/name`) if no live Job of
        this controller counts it — it has no controller reference, or its Job is finished or confirmed gone.
        A pod controlled by anything but a batch/v1 Job, or by a Job another controller manages, is left alone."""
        namespace, name = key.split("/", 1)
        pod = self.pods.get(namespace, name)
        if pod is None or not _facts(pod)[0]:
            return
        meta = pod.get("metadata") or {}
        ref = _controller_ref(meta)
        if ref is not None:
            if ref.get("kind") != "Job" or ref.get("apiVersion") != "batch/v1":
                return
            job = self._job_for(meta, ref)
            if job is None:
                job = await self._live_job(namespace, ref)
            if job is not None:
                if external_controller(job, self.settings.sync.controller_name) is not None:
                    return
                if not is_finished(job):
                    return  # a live Job counts this pod: its own sync removes the finalizer
        try:
            await self.client.patch(PODS, namespace, name, REMOVE_FINALIZER_PATCH, handover=True)  # never changed
        except ApiError as exc:
            if exc.code != 404:
                raise  # retried with the queue's back-off

    async def _live_job(self, namespace: str, ref: Obj) -> Obj | None:
        """The Job `ref` names, read live (uncached), or None when it is confirmed gone: not found, or the name
        now belongs to another Job (a different uid). Any other error propagates, so the pod is retried later."""
        uid = str(ref.get("uid") or "")
        if uid in self._absent_jobs:
            return None
        try:
            job: Obj = await self.client.get(JOBS, namespace, str(ref.get("name") or ""))
        except ApiError as exc:
            if exc.code != 404:
                raise
            self._confirmed_gone(uid)
            return None
        if (job.get("metadata") or {}).get("uid") != uid:
            self._confirmed_gone(uid)
            return None
        return job

    def _confirmed_gone(self, uid: str) -> None:
        self._absent_jobs[uid] = None
        if len(self._absent_jobs) > ABSENT_JOBS_KEPT:
            del self._absent_jobs[next(iter(self._absent_jobs))]

    async def _remove_orphan_finalizer(self, pod: Obj) -> None:
        try:
            await self.client.patch(PODS, pod["metadata"]["namespace"], pod["metadata"]["name"], REMOVE_FINALIZER_PATCH)
        except ApiError as exc:
            if exc.code != 404:
                log.warning("removing finalizer of orphan pod %s: %s", pod["metadata"]["name"], exc)

    # ----------------------------------------------------------------------------------------- reconcile

    async def sync(self, key: str) -> None:
        """One reconcile of the Job `key` (`namespace/name`)."""
        namespace, name = key.split("/", 1)
        job = self.jobs.get(namespace, name)
        if job is None:
            self.book.forget(key)
            self._claims.pop(key, None)
            self.last_outcome.pop(key, None)
            return
        uid = str(job["metadata"].get("uid") or "")
        if uid in self._finished_uids and not is_finished(job):
            return  # our own terminal write has not reached the cache yet
        owned = self._pods_by_owner.get(uid)
        pods = _InNameOrder(owned)
        unsettled = owned.unsettled_in_name_order() if owned is not None else []
        if is_finished(job):
            self._claims.pop(key, None)
            for pod in unsettled:
                if P.has_tracking_finalizer(pod):
                    await self._remove_orphan_finalizer(pod)
            self.book.forget(key)
            return
        if await self._claim_pods(key, job):
            self.queue.add_after(key, self.settings.batch_period)
            return
        outcome = await sync_job(
            job,
            pods,
            now=self.clock.now(),
            book=self.book,
            config=self.settings.sync,
            pod_control=self._pod_control,
            status_writer=self._status_writer,
            events=self.events,
            metrics=self.metrics,
            unsettled=unsettled,
            facts=owned.facts if owned is not None else None,
        )
        self.last_outcome[key] = outcome
        if outcome.finished is not None:
            self._finished_uids.add(uid)
        if outcome.requeue_after is not None:
            self.queue.add_after(key, outcome.requeue_after)
        if outcome.error is not None:
            raise outcome.error  # the worker pool retries with the Job API back-off (1 s doubling to 60 s)


class _OwnedPods:
    """The pods one Job controls, and which of them are unsettled: not in a terminal phase, or still carrying
    the tracking finalizer (see `new_context`).

    Their name order (a sync reads them in that order; sorting a thousand pods on every sync cost more than all
    the rest of the sync's passes) is brought up to date when it is read, not as pods come and go: keeping a
    list sorted on each event moved half of it (12,500 pods at 100,000 completions) twice a pod, while only
    some policies read every pod (see `_InNameOrder`), and those pass over all of them on each sync anyway."""

    __slots__ = ("_added", "_order", "_removed", "facts", "pods", "unsettled")

    def __init__(self) -> None:
        self.pods: dict[str, Obj] = {}  # by uid
        self.facts: dict[int, P.SyncFacts] = {}
        """`P.sync_facts` of each pod in `pods`, by the pod object's `id` (an entry goes with its object, which
        `pods` keeps alive meanwhile): what every sync would otherwise read again from every active pod."""
        self.unsettled: dict[str, str] = {}  # uid -> name
        self._order: list[tuple[str, str]] = []  # (name, uid), sorted, as of the last read
        self._added: dict[str, str] = {}  # uid -> name, pods that came since
        self._removed = False  # whether a pod in `_order` may have gone since

    def observe(self, uid: str, pod: Obj | None, facts: P.SyncFacts | None = None) -> None:
        """Take a pod's newest version (None: it is gone), with its `P.sync_facts` (read here when not given)."""
        known = self.pods.get(uid)
        if pod is None:
            self.unsettled.pop(uid, None)
            if known is not None:
                del self.pods[uid]
                del self.facts[id(known)]
                if self._added.pop(uid, None) is None:
                    self._removed = True
            return
        if facts is None:
            facts = P.sync_facts(pod)
        if known is None:
            self._added[uid] = _name(pod)
        elif known is not pod:
            del self.facts[id(known)]
        self.pods[uid] = pod
        self.facts[id(pod)] = facts
        if not facts[0] and not facts[3]:  # settled: finished and counted
            self.unsettled.pop(uid, None)
        elif uid not in self.unsettled:
            self.unsettled[uid] = _name(pod)

    def in_name_order(self) -> list[Obj]:
        """The pods, ordered by name."""
        pods, order, added = self.pods, self._order, self._added
        if self._removed:
            # A uid in `added` may also be in `order` (gone, then back before this read): it is listed once.
            order = [entry for entry in order if entry[1] in pods and entry[1] not in added]
            self._removed = False
        if added:
            order.extend((name, uid) for uid, name in added.items())
            order.sort()  # one sorted run and a short tail: a merge, not a full sort
            added.clear()
        self._order = order
        return [pods[uid] for _, uid in order]

    def unsettled_in_name_order(self) -> list[Obj]:
        """The unsettled pods, in the order of `in_name_order` (a few, next to a long Job's many settled)."""
        pods = self.pods
        return [pods[uid] for _, uid in sorted((name, uid) for uid, name in self.unsettled.items())]


class _InNameOrder(Sequence[Obj]):
    """A Job's pods in name order, listed at the first read: a sync plans from its few unsettled pods, and only
    some policies (a podFailurePolicy, OnFailure restarts, per-index limits) read every pod. Read while the sync
    plans, which does not yield, so the pods are those of the sync's start."""

    __slots__ = ("_owned", "_pods")

    def __init__(self, owned: _OwnedPods | None) -> None:
        self._owned = owned
        self._pods: list[Obj] | None = None

    def _listed(self) -> list[Obj]:
        if self._pods is None:
            self._pods = self._owned.in_name_order() if self._owned is not None else []
        return self._pods

    @overload
    def __getitem__(self, index: int) -> Obj: ...

    @overload
    def __getitem__(self, index: slice) -> list[Obj]: ...

    def __getitem__(self, index: int | slice) -> Obj | list[Obj]:
        return self._listed()[index]

    def __len__(self) -> int:
        return len(self._listed())

    def __iter__(self) -> Iterator[Obj]:
        return iter(self._listed())


def _name(pod: Obj) -> str:
    return str((pod.get("metadata") or {}).get("name") or "")


def _generation(job: Obj) -> int:
    return int((job.get("metadata") or {}).get("generation") or 0)


def _facts(pod: Obj | None) -> tuple[bool, bool, bool]:
    """(has the tracking finalizer, is in a terminal phase, is being deleted); all False for no pod."""
    if pod is None:
        return False, False, False
    meta = pod.get("metadata") or {}
    return (
        JOB_TRACKING_FINALIZER in (meta.get("finalizers") or ()),
        (pod.get("status") or {}).get("phase") in P.TERMINAL_PHASES,
        bool(meta.get("deletionTimestamp")),
    )


def _key(job: Obj) -> str:
    meta = job.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


def _controller_ref(meta: Obj) -> Obj | None:
    """The owner reference marked `controller` (the first, as `metav1.GetControllerOf` finds it)."""
    for ref in meta.get("ownerReferences") or ():
        if ref.get("controller"):
            result: Obj = ref
            return result
    return None
