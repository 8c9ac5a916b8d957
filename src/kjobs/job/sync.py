"""One reconcile of one Job, as a plan (Kubernetes' `syncJob` and `manageJob`).

`plan_sync(job, pods, now=..., bookkeeping=..., config=...)` decides, without I/O:
  1. whether the Job is finishing (sticky SuccessCriteriaMet/FailureTarget, FailJob rule, backoffLimit,
     OnFailure restarts, activeDeadlineSeconds, per-index failures, successPolicy) — `syncJob` in
     pkg/controller/job/job_controller.go;
  2. the pod deletions (finishing, suspension, surplus, bad indexes) or creations (slots, back-off, indexes);
  3. via `SyncPlan.after_pod_actions(...)`, told how many creations/deletions succeeded, the completion check,
     the Suspended condition and the tracking step (`tracking.plan_tracking`).
The executor (`kjobs.job.execute`) carries the plan out against the API.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import orjson

from kjobs.api.names import (
    COND_FAILURE_TARGET,
    COND_SUCCESS_CRITERIA_MET,
    COND_SUSPENDED,
    JOB_COMPLETION_INDEX_ANNOTATION,
    JOB_COMPLETION_INDEX_ENV,
    JOB_INDEX_FAILURE_COUNT_ANNOTATION,
    JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION,
    JOB_TRACKING_FINALIZER,
)
from kjobs.api.timeutil import format_time, parse_time
from kjobs.api.types import Obj
from kjobs.job import conditions as C
from kjobs.job import pods as P
from kjobs.job.backoff import next_backoff_record, remaining_time, remaining_time_per_index
from kjobs.job.config import Bookkeeping, SyncConfig
from kjobs.job.context import (
    FinishingPod,
    SyncContext,
    backoff_limit,
    completion_mode,
    completions,
    external_controller,
    has_backoff_limit_per_index,
    has_restart_limit,
    is_finished,
    is_index_failed,
    is_indexed,
    is_pod_failed,
    is_suspended,
    match_policy,
    only_replace_failed_pods,
    restart_policy,
    spec_of,
)
from kjobs.job.intervals import Intervals
from kjobs.job.status import copy_status, counter
from kjobs.job.success_policy import match_success_policy
from kjobs.job.tracking import TrackingPlan, plan_tracking

# Values of the `action` label of job_controller_job_sync_* metrics.
ACTION_RECONCILING = "reconciling"
ACTION_TRACKING = "tracking"
ACTION_PODS_CREATED = "pods_created"
ACTION_PODS_DELETED = "pods_deleted"

MAX_GENERATED_NAME_LENGTH = 58


@dataclass(frozen=True, slots=True)
class Event:
    """A Kubernetes Event about the Job (type Normal/Warning, reason, message)."""

    type: str
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class PodDeletion:
    """A pod to delete; `strip_finalizer` first patches the tracking finalizer away (pod management deletions
    are never counted), while pods deleted because the Job is finishing keep it (and are counted)."""

    pod: Obj
    strip_finalizer: bool


@dataclass(frozen=True, slots=True)
class PodActionsOutcome:
    """How the executor's pod creations and deletions went."""

    created: int = 0
    deleted: int = 0
    deleted_ready: int = 0


@dataclass
class SyncPlan:
    """The decisions of one sync. `skip` set means: nothing to do for this Job (and why)."""

    key: str
    skip: str | None = None
    creations: list[Obj] = field(default_factory=list)
    deletions: list[PodDeletion] = field(default_factory=list)
    action: str = ACTION_RECONCILING
    creation_reason: str = "new"
    requeue_after: float | None = None
    events: list[Event] = field(default_factory=list)
    ctx: SyncContext | None = None
    _finishing: bool = False
    _manage_called: bool = False
    _satisfied: bool = True
    _config: SyncConfig = field(default_factory=SyncConfig)

    def after_pod_actions(self, outcome: PodActionsOutcome | None = None) -> TrackingPlan:
        """Complete the sync once pod actions are done: success check, Suspended condition, tracking plan.

        Without an outcome, every planned creation and deletion is taken as successful.
        """
        ctx = self.ctx
        assert ctx is not None, "a skipped sync has no tracking step"
        if outcome is None:
            outcome = PodActionsOutcome(
                created=len(self.creations),
                deleted=len(self.deletions),
                deleted_ready=sum(1 for d in self.deletions if P.is_ready(d.pod)),
            )
        job, status = ctx.job, ctx.status
        active = len(ctx.active_pods)
        suspend_changed = False
        if self._finishing:
            if outcome.deleted != active or not self._satisfied:
                ctx.finished_condition = None
            active -= outcome.deleted
            ctx.terminating += outcome.deleted
            ctx.ready -= outcome.deleted_ready
        else:
            if self._manage_called:
                active += outcome.created - outcome.deleted
                ctx.terminating += outcome.deleted
                ctx.ready -= outcome.deleted_ready
            wanted = completions(job)
            complete = ctx.succeeded > 0 and active == 0 if wanted is None else ctx.succeeded >= wanted and active == 0
            if complete:
                ctx.finished_condition = C.new_condition(
                    COND_SUCCESS_CRITERIA_MET, "True", C.REASON_COMPLETIONS_REACHED, C.MSG_COMPLETIONS_REACHED, ctx.now
                )
            elif self._manage_called:
                if is_suspended(job):
                    status["conditions"], changed = C.ensure_status(
                        status["conditions"], COND_SUSPENDED, "True", "JobSuspended", "Job suspended", ctx.now
                    )
                    if changed:
                        suspend_changed = True
                        self.events.append(Event("Normal", "Suspended", "Job suspended"))
                        status["startTime"] = None
                else:
                    status["conditions"], changed = C.ensure_status(
                        status["conditions"], COND_SUSPENDED, "False", "JobResumed", "Job resumed", ctx.now
                    )
                    if changed:
                        suspend_changed = True
                        self.events.append(Event("Normal", "Resumed", "Job resumed"))
                        status["startTime"] = format_time(ctx.now)
        old = job.get("status") or {}
        needs_update = (
            suspend_changed
            or active != counter(old, "active")
            or ctx.ready != old.get("ready")
            or ctx.terminating != old.get("terminating")
        )
        status["active"] = active
        status["ready"] = ctx.ready
        status["terminating"] = ctx.terminating
        return plan_tracking(ctx, needs_flush=needs_update, max_uncounted=self._config.max_uncounted_pods)


def job_key(job: Obj) -> str:
    """`namespace/name`, the work-queue key."""
    meta = job.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


_NO_FACTS: Mapping[int, P.SyncFacts] = {}


def new_context(
    job: Obj,
    pods: Sequence[Obj],
    *,
    now: float,
    expected_rm_finalizers: frozenset[str],
    unsettled: Sequence[Obj] | None = None,
    facts: Mapping[int, P.SyncFacts] | None = None,
) -> SyncContext:
    """Classify the pods and copy the status: the starting point of a sync (and of a lone tracking step).

    `unsettled`, when the caller keeps them apart, holds the pods that are not in a terminal phase or still
    carry the tracking finalizer, in `pods` order. Only those can be active, terminating or tracked; the rest,
    finished and counted, are most of a long Job's pods, and the classifying pass then skips them.

    `facts`: `P.sync_facts` of pods, by the `id` of the pod object, which the caller keeps alive while it is in
    the mapping (so an `id` there is that object's); a pod not found there is read here. The pass then does
    not touch thousands of active pods on each sync, and the active pods' indexes come with it."""
    remembered: Mapping[int, P.SyncFacts] = facts if facts is not None else _NO_FACTS
    status = copy_status(job.get("status"))
    active_pods: list[Obj] = []
    active_indexes: list[int] = []
    tracked_pods: list[Obj] = []
    tracked_uids: list[str] = []
    finished_tracked: list[Obj] = []
    finishing: list[FinishingPod] = []
    terminating = ready = 0
    for pod in pods if unsettled is None else unsettled:
        fact = remembered.get(id(pod))
        if fact is None:
            fact = P.sync_facts(pod)
        running, deleting, is_ready, tracked, index, pod_uid = fact
        active = running and not deleting
        if active:
            active_pods.append(pod)
            active_indexes.append(index)
            ready += is_ready
        elif running:
            terminating += 1
        if tracked:
            tracked_pods.append(pod)
            tracked_uids.append(pod_uid)
            if not active:
                finished_tracked.append(pod)
                finishing.append((pod, pod_uid, index))
    uncounted = status["uncountedTerminatedPods"]
    return SyncContext(
        job=job,
        pods=pods,
        status=status,
        now=now,
        active_pods=active_pods,
        ready=ready,
        terminating=terminating,
        uncounted_succeeded=frozenset(uncounted["succeeded"]),
        uncounted_failed=frozenset(uncounted["failed"]),
        expected_rm_finalizers=expected_rm_finalizers,
        tracked_pods=tracked_pods,
        finished_tracked=finished_tracked,
        _active_indexes=active_indexes,
        _tracked_uids=tracked_uids,
        _finishing=finishing,
    )


def plan_sync(
    job: Obj,
    pods: Sequence[Obj],
    *,
    now: float,
    bookkeeping: Bookkeeping | None = None,
    config: SyncConfig | None = None,
    unsettled: Sequence[Obj] | None = None,
    facts: Mapping[int, P.SyncFacts] | None = None,
) -> SyncPlan:
    """Decide one reconcile of `job` given the pods it owns (see the module note); `unsettled` and `facts` as for
    `new_context`."""
    book = bookkeeping or Bookkeeping()
    cfg = config or SyncConfig()
    key = job_key(job)
    if is_finished(job):
        return SyncPlan(key=key, skip="finished")
    foreign = external_controller(job, cfg.controller_name)
    if foreign is not None:
        return SyncPlan(key=key, skip=f"managed by {foreign}")
    mode = spec_of(job).get("completionMode")
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        return SyncPlan(
            key=key,
            skip="unknown completion mode",
            events=[Event("Warning", "UnknownCompletionMode", "Skipped Job sync because completion mode is unknown")],
        )
    ctx = new_context(
        job, pods, now=now, expected_rm_finalizers=book.expected_rm_finalizers, unsettled=unsettled, facts=facts
    )
    plan = SyncPlan(key=key, ctx=ctx, _satisfied=book.expectations_satisfied, _config=cfg)
    status, spec = ctx.status, spec_of(job)
    new_succeeded, new_failed = _new_finished_pods(ctx)
    ctx.succeeded = counter(status, "succeeded") + len(new_succeeded) + len(ctx.uncounted_succeeded)
    ctx.failed = counter(status, "failed") + _counted_failures(job, new_failed) + len(ctx.uncounted_failed)
    if not status.get("startTime") and not is_suspended(job):
        status["startTime"] = format_time(now)
    ctx.new_backoff = next_backoff_record(book.backoff, new_succeeded, new_failed)

    _decide_finish(ctx, plan)

    if ctx.finished_condition is not None:
        plan._finishing = True
        plan.deletions = [PodDeletion(p, strip_finalizer=False) for p in ctx.active_pods]
        return plan
    if book.expectations_satisfied and not (job.get("metadata") or {}).get("deletionTimestamp"):
        plan._manage_called = True
        _manage_pods(ctx, plan, cfg)
    del spec
    return plan


def _new_finished_pods(ctx: SyncContext) -> tuple[list[Obj], list[Obj]]:
    """Finished pods not yet accounted for: with finalizer, not uncounted, not in flight, valid index
    (`getNewFinishedPods`, pkg/controller/job/job_controller.go); each pod's UID and index as `new_context`
    handed them over (`SyncContext.finishing`)."""
    succeeded: list[Obj] = []
    failed: list[Obj] = []
    indexed = is_indexed(ctx.job)
    total = completions(ctx.job)
    for pod, pod_uid, index in ctx.finishing():  # an active pod is neither Succeeded nor failed
        if pod_uid in ctx.expected_rm_finalizers:
            continue
        if indexed and (index == P.UNKNOWN_INDEX or total is None or index >= total):  # `index_within`, inline
            continue
        if (pod.get("status") or {}).get("phase") == "Succeeded":  # `P.phase`, inline (`is_pod_failed` says why)
            if pod_uid not in ctx.uncounted_succeeded:
                succeeded.append(pod)
        elif is_pod_failed(pod, ctx.job) and pod_uid not in ctx.uncounted_failed:
            failed.append(pod)
    return succeeded, failed


def _counted_failures(job: Obj, failed: list[Obj]) -> int:
    policy = spec_of(job).get("podFailurePolicy")
    if policy is None:
        return len(failed)
    return sum(1 for p in failed if match_policy(job, p).count_failed)


def _fail_job_message(ctx: SyncContext) -> str | None:
    """The first FailJob message among all failed pods, in list order (`getFailJobMessage`,
    pkg/controller/job/job_controller.go); with a restart limit, then among the active pods whose containers'
    last termination matches a FailJob rule (they restart in place; docs/onfailure-pod-failure-policy.md)."""
    if ctx.spec.get("podFailurePolicy") is None:
        return None
    for pod in ctx.pods:
        if is_pod_failed(pod, ctx.job):
            decision = match_policy(ctx.job, pod)
            if decision.message is not None:
                return decision.message
    if has_restart_limit(ctx.job):
        for pod in ctx.active_pods:
            decision = match_policy(ctx.job, pod)
            if decision.message is not None:
                return decision.message
    return None


def _past_backoff_limit_on_failure(job: Obj, pods: Sequence[Obj]) -> bool:
    """OnFailure Jobs: restarts of running/pending pods' containers reach the backoff limit
    (`pastBackoffLimitOnFailure`). Not with a restart limit: then failed pods count, not restarts."""
    if restart_policy(job) != "OnFailure" or has_restart_limit(job):
        return False
    restarts = sum(P.total_restarts(pod) for pod in pods if P.phase(pod) in ("Running", "Pending"))
    limit = backoff_limit(job)
    return restarts > 0 if limit == 0 else restarts >= limit


def _decide_finish(ctx: SyncContext, plan: SyncPlan) -> None:
    """Set `ctx.finished_condition` in the order `syncJob` evaluates them (pkg/controller/job/job_controller.go)."""
    job, status, now = ctx.job, ctx.status, ctx.now
    conds = status["conditions"]
    met = C.find(conds, COND_SUCCESS_CRITERIA_MET)
    if met is not None and met.get("status") == "True":
        # Written by someone else, it may lack the optional reason and message; Kubernetes reads them as "" (Go's
        # zero value) and copies them onto Complete (`trackJobStatusAndRemoveFinalizers`).
        if "reason" not in met or "message" not in met:
            met = {**met, "reason": met.get("reason") or "", "message": met.get("message") or ""}
        ctx.finished_condition = met
    else:
        target = C.find(conds, COND_FAILURE_TARGET)
        if target is not None and target.get("status") == "True":
            ctx.finished_condition = C.new_condition(
                "Failed", "True", target.get("reason") or "", target.get("message") or "", now
            )
        else:
            message = _fail_job_message(ctx)
            if message is not None:
                ctx.finished_condition = C.new_condition(
                    COND_FAILURE_TARGET, "True", C.REASON_POD_FAILURE_POLICY, message, now
                )
    if ctx.finished_condition is None:
        deadline = ctx.spec.get("activeDeadlineSeconds")
        if ctx.failed > backoff_limit(job) or _past_backoff_limit_on_failure(job, ctx.pods):
            ctx.finished_condition = _failure(C.REASON_BACKOFF_LIMIT_EXCEEDED, C.MSG_BACKOFF_LIMIT_EXCEEDED, now)
        elif deadline is not None and not is_suspended(job) and status.get("startTime"):
            elapsed = now - parse_time(status["startTime"])
            if elapsed >= float(deadline):
                ctx.finished_condition = _failure(C.REASON_DEADLINE_EXCEEDED, C.MSG_DEADLINE_EXCEEDED, now)
            else:
                plan.requeue_after = _earliest(plan.requeue_after, float(deadline) - elapsed)
    if is_indexed(job):
        total = completions(job) or 0
        compute_index_state(ctx)
        ctx.succeeded = ctx.succeeded_indexes.total()
        if ctx.failed_indexes is not None and ctx.finished_condition is None:
            max_failed = ctx.spec.get("maxFailedIndexes")
            failed_total = ctx.failed_indexes.total()
            if max_failed is not None and failed_total > int(max_failed):
                ctx.finished_condition = _failure(
                    C.REASON_MAX_FAILED_INDEXES_EXCEEDED, C.MSG_MAX_FAILED_INDEXES_EXCEEDED, now
                )
            elif failed_total > 0 and failed_total + ctx.succeeded_indexes.total() >= total:
                ctx.finished_condition = _failure(C.REASON_FAILED_INDEXES, C.MSG_FAILED_INDEXES, now)
        if ctx.finished_condition is None:
            message = match_success_policy(ctx.spec.get("successPolicy"), total, ctx.succeeded_indexes)
            if message is not None:
                ctx.finished_condition = C.new_condition(
                    COND_SUCCESS_CRITERIA_MET, "True", C.REASON_SUCCESS_POLICY, message, now
                )


def compute_index_state(ctx: SyncContext) -> None:
    """Succeeded indexes (before and with this sync's pods) and, for per-index Jobs, failed indexes and the
    failed pods whose finalizer is held until their index is replaced."""
    job = ctx.job
    total = completions(job) or 0
    ctx.prev_succeeded_indexes, ctx.succeeded_indexes = _succeeded_indexes(job, ctx.finishing(), total)
    compute_failed_index_state(ctx)


def compute_failed_index_state(ctx: SyncContext) -> None:
    """For per-index Jobs, the failed indexes and the held-back failed pods, given the succeeded indexes (a failed
    pod of a succeeded index is not held back)."""
    job = ctx.job
    if has_backoff_limit_per_index(job):
        # Only a pod still carrying the tracking finalizer adds an index (the others are in status.failedIndexes
        # already), so the tracked pods are enough: a long Job's counted pods are not read on every sync. Of those,
        # an active pod's index is not failed (`is_index_failed` needs `is_pod_failed`): the finished ones suffice.
        ctx.failed_indexes = _failed_indexes(job, ctx.finishing(), completions(job) or 0)
        ctx.pods_with_delayed_deletion = _pods_with_delayed_deletion(ctx)


def _failure(reason: str, message: str, now: float) -> Obj:
    return C.new_condition(COND_FAILURE_TARGET, "True", reason, message, now)


def _earliest(current: float | None, candidate: float) -> float:
    return candidate if current is None else min(current, candidate)


def _succeeded_indexes(job: Obj, finishing: list[FinishingPod], total: int) -> tuple[Intervals, Intervals]:
    """The succeeded indexes before and with `finishing`'s Succeeded pods (`calculateSucceededIndexes`,
    pkg/controller/job/indexed_job_utils.go). Every finishing pod carries the tracking finalizer (`new_context`
    picks them from the tracked ones), which Kubernetes' loop tests; its index comes read (`SyncContext.finishing`)."""
    prev = Intervals.parse((job.get("status") or {}).get("completedIndexes"), total)
    # `P.phase` and `index_within` inline (a call each a finishing pod a sync; `is_pod_failed` says why they agree)
    new = [
        index
        for pod, _, index in finishing
        if (pod.get("status") or {}).get("phase") == "Succeeded" and index != P.UNKNOWN_INDEX and index < total
    ]
    return prev, prev.with_indexes(new)


def _failed_indexes(job: Obj, finishing: list[FinishingPod], total: int) -> Intervals:
    """The failed indexes with `finishing`'s failed ones (`calculateFailedIndexes`, pkg/controller/job/
    indexed_job_utils.go); tracked pods with their indexes read, as for `_succeeded_indexes`."""
    text = (job.get("status") or {}).get("failedIndexes")
    prev = Intervals.parse(text, total) if text is not None else Intervals()
    # `index_within`, inline; a Succeeded pod's index never fails (`is_pod_failed` is False for it): no call for it
    new = [
        index
        for pod, _, index in finishing
        if index != P.UNKNOWN_INDEX
        and index < total
        and (pod.get("status") or {}).get("phase") != "Succeeded"
        and is_index_failed(job, pod)
    ]
    return prev.with_indexes(new)


def _pods_with_delayed_deletion(ctx: SyncContext) -> dict[int, Obj]:
    """Per index without an active pod, the last failed pod: its finalizer stays until it is replaced
    (`getPodsWithDelayedDeletionPerIndex`, pkg/controller/job/indexed_job_utils.go)."""
    active_indexes: set[int] | None = None  # made only when a failed pod gets that far: most syncs have none
    failed_indexes = ctx.failed_indexes or Intervals()
    total = completions(ctx.job)
    held: dict[int, Obj] = {}
    for pod, pod_uid, pod_index in ctx.finishing():  # an active pod is not failed
        if pod_uid in ctx.expected_rm_finalizers:
            continue
        if pod_index == P.UNKNOWN_INDEX or total is None or pod_index >= total:  # `index_within`, inline
            continue
        index = pod_index
        # a Succeeded pod is never failed (`is_pod_failed`): most finishing pods, without the call
        if (pod.get("status") or {}).get("phase") == "Succeeded" or not is_pod_failed(pod, ctx.job):
            continue
        if ctx.succeeded_indexes.has(index) or failed_indexes.has(index):
            continue
        if active_indexes is None:
            active_indexes = set(ctx.active_indexes()) - {P.UNKNOWN_INDEX}
        if index in active_indexes:
            continue
        last = held.get(index)
        if last is None or (
            P.index_absolute_failure_count(last) <= P.index_absolute_failure_count(pod)
            and not P.finish_time(pod) < P.finish_time(last)
        ):
            held[index] = pod
    return held


def _manage_pods(ctx: SyncContext, plan: SyncPlan, cfg: SyncConfig) -> None:
    """Plan deletions or creations so that the right number of pods is active (`manageJob`)."""
    job, spec = ctx.job, ctx.spec
    active = len(ctx.active_pods)
    parallelism = int(spec.get("parallelism") or 0) if spec.get("parallelism") is not None else 1
    if is_suspended(job):
        plan.action = ACTION_PODS_DELETED
        plan.deletions = [PodDeletion(p, strip_finalizer=True) for p in _pods_for_removal(ctx, active)]
        return
    wanted_total = completions(job)
    if wanted_total is None:
        want = active if ctx.succeeded > 0 else parallelism
    else:
        want = max(0, min(wanted_total - ctx.succeeded, parallelism))
    surplus = _pods_for_removal(ctx, max(0, active - want))[: cfg.max_pod_create_delete_per_sync]
    if surplus:
        plan.action = ACTION_PODS_DELETED
        plan.deletions = [PodDeletion(p, strip_finalizer=True) for p in surplus]
        return
    terminating = ctx.terminating if only_replace_failed_pods(job) else 0
    diff = want - terminating - active
    if diff <= 0:
        plan.action = ACTION_TRACKING
        return
    plan.action = ACTION_PODS_CREATED
    per_index = has_backoff_limit_per_index(job)
    if not per_index:
        global_wait = remaining_time(
            ctx.new_backoff.failures_after_last_success,
            ctx.new_backoff.last_failure_time,
            now=ctx.now,
            base=cfg.pod_failure_backoff,
            cap=cfg.max_pod_failure_backoff,
        )
        if global_wait > 0:
            plan.requeue_after = _earliest(plan.requeue_after, global_wait)
            return
    diff = min(diff, cfg.max_pod_create_delete_per_sync)
    indexes: list[int | None]
    if is_indexed(job):
        pending = first_pending_indexes(ctx, diff, wanted_total or 0)
        if per_index:
            ready_now: list[int] = []
            wait: float | None = None
            held = ctx.pods_with_delayed_deletion
            for index in pending:
                last_failed = held.get(index)
                # an index with no failed pod held has no back-off (`remaining_time_per_index` of None): no call
                left = (
                    0.0
                    if last_failed is None
                    else remaining_time_per_index(
                        last_failed, now=ctx.now, base=cfg.pod_failure_backoff, cap=cfg.max_pod_failure_backoff
                    )
                )
                if left == 0:
                    ready_now.append(index)
                elif wait is None or left < wait:
                    wait = left
            if not ready_now and wait:
                plan.requeue_after = _earliest(plan.requeue_after, wait)
                return
            pending = ready_now
        indexes = list(pending)
    else:
        indexes = [None] * diff
    if indexes:
        template_spec = _spec_copier(
            (ctx.spec.get("template") or {}).get("spec") or {}, index_env=indexes[0] is not None
        )
        plan.creations = [_pod_from_template(ctx, index, template_spec) for index in indexes]
    if only_replace_failed_pods(job) and ctx.failed > 0:
        plan.creation_reason = "recreate_failed"
    elif ctx.failed > 0 or ctx.terminating > 0:
        plan.creation_reason = "recreate_terminating_or_failed"


def _pods_for_removal(ctx: SyncContext, at_least: int) -> list[Obj]:
    """Active pods to delete: for Indexed Jobs every bad or duplicate index first, then the cheapest to lose."""
    job, active_pods = ctx.job, ctx.active_pods
    remove: list[Obj] = []
    left: list[Obj] = active_pods
    if is_indexed(job):
        total = completions(job) or 0
        if at_least <= 0 and _distinct_valid_indexes(ctx.active_indexes(), total):
            return []  # nothing to remove and no index to sort by: what nearly every sync of a running Job asks
        remove, left = duplicate_index_pods(active_pods, total)
    if len(remove) < at_least:
        left = sorted(left, key=P.removal_order_key)
        remove = remove + left[: at_least - len(remove)]
    return remove


def _distinct_valid_indexes(indexes: list[int], total: int) -> bool:
    """Whether the pods of these indexes each have one in [0, total) of its own: then `duplicate_index_pods`
    removes none of them."""
    distinct = set(indexes)
    return len(distinct) == len(indexes) and (not distinct or (min(distinct) >= 0 and max(distinct) < total))


def duplicate_index_pods(pods: list[Obj], total: int) -> tuple[list[Obj], list[Obj]]:
    """(to remove, to keep): pods without a valid index, and all but the dearest pod of a repeated index
    (`appendDuplicatedIndexPodsForRemoval`, pkg/controller/job/indexed_job_utils.go).

    In Go's order, which decides which pods a capped sync deletes first: by index, the pods without one first;
    the pods at or past `total` are added when reached, before the group just before them is settled."""
    remove: list[Obj] = []
    keep: list[Obj] = []
    ordered = sorted(pods, key=P.completion_index)
    group: list[Obj] = []
    group_index = P.UNKNOWN_INDEX
    for pos, pod in enumerate(ordered):
        index = P.completion_index(pod)
        if index >= total:
            remove.extend(ordered[pos:])
            break
        if index != group_index:
            _settle_index_group(group, group_index, remove, keep)
            group, group_index = [], index
        group.append(pod)
    _settle_index_group(group, group_index, remove, keep)
    return remove, keep


def _settle_index_group(group: list[Obj], index: int, remove: list[Obj], keep: list[Obj]) -> None:
    """Pods without an index all go; of one index's pods the dearest stays (`controller.ActivePods` order)."""
    if not group:
        return
    if index == P.UNKNOWN_INDEX:
        remove.extend(group)
        return
    if len(group) > 1:
        group = sorted(group, key=P.removal_order_key)
    remove.extend(group[:-1])
    keep.append(group[-1])


def first_pending_indexes(ctx: SyncContext, count: int, total: int) -> list[int]:
    """The lowest `count` indexes that are neither succeeded, active, failed nor (policy Failed) terminating
    (`firstPendingIndexes`, pkg/controller/job/indexed_job_utils.go)."""
    if count == 0:
        return []
    taken = ctx.succeeded_indexes.with_indexes(ctx.active_indexes())
    if only_replace_failed_pods(ctx.job):
        taken = taken.with_indexes(P.completion_index(p) for p in ctx.pods if P.is_terminating(p))
    if ctx.failed_indexes is not None:
        taken = taken.merge(ctx.failed_indexes)
    result: list[int] = []
    candidate = 0
    for first, last in taken.spans:
        while candidate < total and len(result) < count and candidate < first:
            result.append(candidate)
            candidate += 1
        candidate = max(candidate, last + 1)
    while candidate < total and len(result) < count:
        result.append(candidate)
        candidate += 1
    return result


def _pod_from_template(ctx: SyncContext, index: int | None, template_spec: Callable[[], Obj]) -> Obj:
    """The pod a Job creates: template copy, tracking finalizer, controller reference, index wiring.

    The pod shares nothing with the Job (its spec is a fresh copy from `template_spec`), so whoever creates it
    may hand it over to the API as it is."""
    job = ctx.job
    meta = job.get("metadata") or {}
    name = str(meta.get("name") or "")
    spec = job.get("spec") or {}  # `ctx.spec` and `has_backoff_limit_per_index`, inline: once a pod created
    template = spec.get("template") or {}
    tmeta = template.get("metadata") or {}
    pod_spec = template_spec()  # an Indexed Job's with the index's env var already (`_spec_copier`)
    labels = dict(tmeta.get("labels") or {})
    annotations = dict(tmeta.get("annotations") or {})
    finalizers = list(tmeta.get("finalizers") or ())
    if JOB_TRACKING_FINALIZER not in finalizers:
        finalizers.append(JOB_TRACKING_FINALIZER)
    generate_name = f"{name}-"
    if index is not None:
        annotations[JOB_COMPLETION_INDEX_ANNOTATION] = str(index)
        labels[JOB_COMPLETION_INDEX_ANNOTATION] = str(index)
        pod_spec["hostname"] = f"{name}-{index}"
        generate_name = generate_name_with_index(name, index)
        if spec.get("backoffLimitPerIndex") is not None:
            replaced = ctx.pods_with_delayed_deletion.get(index)  # none for most: no call then
            failures, ignored = (0, 0) if replaced is None else new_index_failure_counts(job, replaced)
            annotations[JOB_INDEX_FAILURE_COUNT_ANNOTATION] = str(failures)
            if ignored > 0:
                annotations[JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION] = str(ignored)
    pod_meta: Obj = {
        "generateName": generate_name,
        "namespace": meta.get("namespace") or "default",
        "labels": labels,
        "annotations": annotations,
        "finalizers": finalizers,
        "ownerReferences": [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": name,
                "uid": meta.get("uid") or "",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    if not annotations:
        del pod_meta["annotations"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": pod_spec}


def _spec_copier(spec: Obj, *, index_env: bool) -> Callable[[], Obj]:
    """Fresh deep copies of a pod template's spec: decoded from its JSON, encoded once for all the pods of a sync.
    `index_env`: an Indexed Job's pods, whose containers get `JOB_COMPLETION_INDEX` (`_add_index_env`); it names
    no index, so it is added once, to the copy that is encoded, not to each pod (docs/jobctl54.md)."""
    try:
        raw = orjson.dumps(spec)
    except TypeError:  # not JSON (a Job built in process): copied the slow way

        def deep_copy() -> Obj:
            fresh: Obj = copy.deepcopy(spec)
            if index_env:
                _add_index_env(fresh)
            return fresh

        return deep_copy
    if index_env:
        with_env: Obj = orjson.loads(raw)
        _add_index_env(with_env)
        raw = orjson.dumps(with_env)

    def decode() -> Obj:
        fresh: Obj = orjson.loads(raw)
        return fresh

    return decode


def _add_index_env(pod_spec: Obj) -> None:
    field_path = f"metadata.labels['{JOB_COMPLETION_INDEX_ANNOTATION}']"
    for key in ("initContainers", "containers"):
        for container in pod_spec.get(key) or ():
            env = list(container.get("env") or ())
            defined = False  # a loop, not `any` over a generator (a call on this Python): once a pod created
            for v in env:
                if v.get("name") == JOB_COMPLETION_INDEX_ENV:
                    defined = True
                    break
            if defined:
                continue
            env.append({"name": JOB_COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {"fieldPath": field_path}}})
            container["env"] = env


def generate_name_with_index(name: str, index: int) -> str:
    """`<job>-<index>-`, the Job name cut so the prefix fits `MaxGeneratedNameLength` (58)
    (`podGenerateNameWithIndex`, pkg/controller/job/indexed_job_utils.go)."""
    suffix = f"-{index}-"
    prefix = name + suffix
    if len(prefix) > MAX_GENERATED_NAME_LENGTH:
        prefix = prefix[: MAX_GENERATED_NAME_LENGTH - len(suffix)] + suffix
    return prefix


def new_index_failure_counts(job: Obj, replaced: Obj | None) -> tuple[int, int]:
    """Failure/ignored-failure annotations for the replacement of `replaced` (its index's last failed pod)
    (`getNewIndexFailureCounts`, pkg/controller/job/indexed_job_utils.go)."""
    if replaced is None:
        return 0, 0
    failures, ignored = P.index_failure_count(replaced), P.index_ignored_failure_count(replaced)
    if spec_of(job).get("podFailurePolicy") is not None and not match_policy(job, replaced).count_failed:
        return failures, ignored + 1
    return failures + 1, ignored


def completion_mode_label(job: Obj) -> str:
    """The `completion_mode` metrics label."""
    return completion_mode(job)
