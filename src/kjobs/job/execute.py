"""Carrying out a sync plan: the imperative shell around `plan_sync`, shared by every way kjobs runs.

The executor talks to the world only through three seams — `PodControl` (create/delete/patch pods),
`StatusWriter` (update the Job status subresource) and `EventSink` — so the same code runs against the
in-process store, a real Kubernetes API server over HTTP, or the recording fake of the conformance tests.
Ordering follows Kubernetes: pod deletions/creations (creations in slow-start batches 1, 2, 4, …, stopping at
the first failed batch), then status write 1, finalizer removals, status write 2.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.job import pods as P
from kjobs.job.bookkeeping import BookkeepingStore
from kjobs.job.config import SyncConfig
from kjobs.job.context import completion_mode
from kjobs.job.metrics import JobMetrics
from kjobs.job.status import counter
from kjobs.job.sync import PodActionsOutcome, SyncPlan, job_key, plan_sync
from kjobs.job.tracking import TrackingPlan

NAMESPACE_TERMINATING = "NamespaceTerminating"
"""`v1.NamespaceTerminatingCause`: the cause of a create refused in a namespace being deleted."""

T = TypeVar("T")


class PodControl(Protocol):
    """Pod writes the Job controller makes."""

    inline: bool
    """Its writes complete without suspending (see `Client.completes_inline`): a batch is then issued in turn."""

    async def create_pod(self, namespace: str, pod: Obj) -> Obj:
        """Create a pod (generateName honoured) from a body built for this call, which the caller gives up;
        returns the created pod."""

    async def delete_pod(self, namespace: str, name: str) -> None:
        """Delete a pod (graceful); raises ApiError (404 is tolerated by callers)."""

    async def remove_tracking_finalizer(self, namespace: str, name: str) -> None:
        """Patch `batch.kubernetes.io/job-tracking` out of the pod's finalizers."""


class StatusWriter(Protocol):
    """Job status writes."""

    async def update_job_status(self, job: Obj, status: Obj) -> Obj:
        """Replace the Job's status (compare-and-swap on the Job's resourceVersion); returns the stored Job."""


class EventSink(Protocol):
    """Where Events about Jobs go."""

    def event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        """Record an Event (type Normal/Warning) about `obj`."""


@dataclass
class SyncOutcome:
    """What one executed sync did: error (retry with API back-off) and when to sync again."""

    plan: SyncPlan
    error: Exception | None = None
    requeue_after: float | None = None
    status_writes: list[Obj] = field(default_factory=list)
    finished: Obj | None = None


async def sync_job(
    job: Obj,
    pods: Sequence[Obj],
    *,
    now: float,
    book: BookkeepingStore,
    config: SyncConfig,
    pod_control: PodControl,
    status_writer: StatusWriter,
    events: EventSink,
    metrics: JobMetrics,
    unsettled: Sequence[Obj] | None = None,
    facts: Mapping[int, P.SyncFacts] | None = None,
) -> SyncOutcome:
    """Plan one sync of `job` and carry it out (Kubernetes' `syncJob`); `unsettled` and `facts` as for
    `plan_sync`."""
    started = time.perf_counter()
    key = job_key(job)
    plan = plan_sync(
        job,
        pods,
        now=now,
        bookkeeping=book.snapshot(key, now=now),
        config=config,
        unsettled=unsettled,
        facts=facts,
    )
    outcome = SyncOutcome(plan=plan, requeue_after=plan.requeue_after)
    for ev in plan.events if plan.skip else ():
        events.event(job, ev.type, ev.reason, ev.message)
    if plan.skip is not None:
        if plan.skip == "finished":
            book.forget(key)
        return outcome
    namespace = str(job["metadata"].get("namespace") or "default")
    errors: list[Exception] = []
    created, deleted, deleted_ready = 0, 0, 0
    if plan.deletions:
        if plan.action == "pods_deleted":
            book.expect(key, dels=len(plan.deletions), now=now)
        results = await _batch(
            [_delete(pod_control, namespace, d.pod, d.strip_finalizer) for d in plan.deletions], pod_control.inline
        )
        for deletion, error in zip(plan.deletions, results, strict=True):
            if error is None:
                deleted += 1
                if P.is_ready(deletion.pod):
                    deleted_ready += 1
                events.event(job, "Normal", "SuccessfulDelete", f"Deleted pod: {deletion.pod['metadata']['name']}")
            else:
                if plan.action == "pods_deleted":
                    book.deletion_observed(key)
                errors.append(error)
                events.event(job, "Warning", "FailedDelete", f"Error deleting: {error}")
    if plan.creations:
        created = await _create_slow_start(
            plan,
            job,
            namespace,
            key,
            book=book,
            now=now,
            pod_control=pod_control,
            events=events,
            metrics=metrics,
            errors=errors,
        )
    tracking = plan.after_pod_actions(PodActionsOutcome(created=created, deleted=deleted, deleted_ready=deleted_ready))
    for ev in plan.events:
        events.event(job, ev.type, ev.reason, ev.message)
    track = await run_tracking(
        job,
        tracking,
        key=key,
        book=book,
        pod_control=pod_control,
        status_writer=status_writer,
        events=events,
        metrics=metrics,
    )
    outcome.status_writes, outcome.finished = track.status_writes, track.finished
    errors.extend(track.errors)
    if errors:
        outcome.error = errors[0]
    result = "error" if outcome.error else "success"
    mode = completion_mode(job)
    metrics.sync_duration.labels(mode, result, plan.action).observe(time.perf_counter() - started)
    metrics.syncs.labels(mode, result, plan.action).inc()
    return outcome


@dataclass
class TrackingOutcome:
    """What the tracking step wrote and whether it finished the Job."""

    status_writes: list[Obj] = field(default_factory=list)
    finished: Obj | None = None
    errors: list[Exception] = field(default_factory=list)


async def run_tracking(
    job: Obj,
    tracking: TrackingPlan,
    *,
    key: str,
    book: BookkeepingStore,
    pod_control: PodControl,
    status_writer: StatusWriter,
    events: EventSink,
    metrics: JobMetrics,
) -> TrackingOutcome:
    """Status write 1, finalizer removals, status write 2 (`flushUncountedAndRemoveFinalizers` and after)."""
    out = TrackingOutcome()
    current = job
    old_status = job.get("status") or {}
    try:
        if tracking.first_write is not None:
            current = await status_writer.update_job_status(current, tracking.first_write)
            out.status_writes.append(tracking.first_write)
            book.backoff[key] = tracking.backoff_record
            metrics.record_pods_finished(job, old_status, tracking.first_write)
            old_status = tracking.first_write
        for action, count in tracking.policy_actions.items():
            metrics.pod_failures_handled.labels(action).inc(count)
        removed, failed = await _remove_finalizers(tracking.finalizer_removals, key, book, pod_control)
        _record_decisions(job, tracking, removed, events, metrics)
        final = tracking.after_finalizers(removed, failed=bool(failed))
        out.errors.extend(failed)
        if final.write is not None:
            await status_writer.update_job_status(current, final.write)
            out.status_writes.append(final.write)
            if final.finished is not None:
                _record_finished(job, final.write, final.finished, events, metrics)
                out.finished = final.finished
            metrics.record_pods_finished(job, old_status, final.write)
    except ApiError as exc:
        out.errors.append(exc)
    return out


async def _delete(pod_control: PodControl, namespace: str, pod: Obj, strip: bool) -> Exception | None:
    name = pod["metadata"]["name"]
    try:
        if strip and P.has_tracking_finalizer(pod):
            await pod_control.remove_tracking_finalizer(namespace, name)
        await pod_control.delete_pod(namespace, name)
    except ApiError as exc:
        if exc.code == 404 and not strip:
            return None
        return exc
    return None


async def _create_slow_start(
    plan: SyncPlan,
    job: Obj,
    namespace: str,
    key: str,
    *,
    book: BookkeepingStore,
    now: float,
    pod_control: PodControl,
    events: EventSink,
    metrics: JobMetrics,
    errors: list[Exception],
) -> int:
    """Create pods in batches of 1, 2, 4, …; stop after a batch with a failure. Returns how many were created."""
    pending = list(plan.creations)
    book.expect(key, adds=len(pending), now=now)
    created = failed = 0
    batch = 1
    while pending:
        group, pending = pending[:batch], pending[batch:]
        results = await _batch([_create(pod_control, namespace, pod) for pod in group], pod_control.inline)
        batch_failed = False
        for result in results:
            if isinstance(result, ApiError) and result.has_cause(NAMESPACE_TERMINATING):
                # The namespace is being deleted: every later create fails too. Upstream's pod control records
                # no event for it and manageJob drops the error (job_controller.go, controller_utils.go).
                batch_failed = True
                book.creation_observed(key)
            elif isinstance(result, Exception):
                failed += 1
                batch_failed = True
                book.creation_observed(key)
                errors.append(result)
                events.event(job, "Warning", "FailedCreate", f"Error creating: {result}")
            else:
                created += 1
                events.event(job, "Normal", "SuccessfulCreate", f"Created pod: {result['metadata']['name']}")
        if batch_failed:
            for _ in pending:
                book.creation_observed(key)
            break
        batch *= 2
    if created:
        metrics.pods_creation.labels(plan.creation_reason, "succeeded").inc(created)
    if failed:
        metrics.pods_creation.labels(plan.creation_reason, "failed").inc(failed)
    return created


async def _batch(calls: list[Coroutine[Any, Any, T]], inline: bool) -> list[T]:
    """A batch of API calls, concurrently as Kubernetes' controller issues them; or, when they complete without
    suspending (in process), in turn within this task: the same results, without the event-loop turns that
    tasks take (a sync that creates 30 pods otherwise lets the rest of the control plane run between its batches,
    and the replacements of finished pods wait for it)."""
    if inline:
        return [await call for call in calls]
    return list(await asyncio.gather(*calls))


async def _create(pod_control: PodControl, namespace: str, pod: Obj) -> Obj | Exception:
    try:
        return await pod_control.create_pod(namespace, pod)
    except ApiError as exc:
        return exc


async def _remove_finalizers(
    pods: list[Obj], key: str, book: BookkeepingStore, pod_control: PodControl
) -> tuple[set[str], list[Exception]]:
    """Patch the finalizer out of each pod; a pod already gone counts as done."""
    if not pods:
        return set(), []
    uids = [P.uid(p) for p in pods]  # read once, for the expectations and the result
    book.expect_finalizers_removed(key, uids)

    async def one(pod: Obj) -> Exception | None:
        try:
            await pod_control.remove_tracking_finalizer(
                str(pod["metadata"].get("namespace") or ""), pod["metadata"]["name"]
            )
        except ApiError as exc:
            book.finalizer_removal_observed(key, P.uid(pod))
            return None if exc.code == 404 else exc
        return None

    results = await _batch([one(p) for p in pods], pod_control.inline)
    removed = {uid for uid, err in zip(uids, results, strict=True) if err is None}
    return removed, [err for err in results if err is not None]


def _record_decisions(
    job: Obj, tracking: TrackingPlan, removed: set[str], events: EventSink, metrics: JobMetrics
) -> None:
    """One Event and one `kjobs_job_pod_failure_policy_decisions_total` sample per failed pod whose finalizer just
    went: a pod loses its finalizer once, so no pod is reported twice, even by a restarted controller (which
    never sees the finalizer again). See `kjobs.job.decisions`."""
    decisions = tracking.decisions
    if not decisions:  # no failed pod among them: nothing to report, no pod to read
        return
    for pod in tracking.finalizer_removals:
        pod_uid = P.uid(pod)
        decision = decisions.get(pod_uid)
        if decision is None or pod_uid not in removed:
            continue
        events.event(job, decision.event_type, decision.reason, decision.message())
        metrics.policy_decisions.labels(decision.action, decision.rule_label).inc()


def _record_finished(job: Obj, status: Obj, cond: Obj, events: EventSink, metrics: JobMetrics) -> None:
    mode = completion_mode(job)
    if cond["type"] == "Complete":
        wanted = (job.get("spec") or {}).get("completions")
        if wanted is not None and counter(status, "succeeded") > int(wanted):
            events.event(
                job, "Warning", "TooManySucceededPods", "Too many succeeded pods running after completion count reached"
            )
        events.event(job, "Normal", "Completed", "Job completed")
        metrics.jobs_finished.labels(mode, "succeeded", cond["reason"]).inc()
    else:
        events.event(job, "Warning", cond["reason"], cond["message"])
        metrics.jobs_finished.labels(mode, "failed", cond["reason"]).inc()
