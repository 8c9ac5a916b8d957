"""Counting finished pods through the tracking finalizer (`trackJobStatusAndRemoveFinalizers`).

A finished pod is first recorded in `status.uncountedTerminatedPods` (write 1), then its finalizer is removed,
then it moves into the `succeeded`/`failed` counters (write 2). Because a UID only moves once its finalizer is
gone, a crash between the steps never counts a pod twice nor loses it. The interim condition (FailureTarget /
SuccessCriteriaMet) rides on write 1; the terminal one (Failed / Complete) is added only when nothing is left
uncounted or terminating.

`plan_tracking` returns a `TrackingPlan`: the first write and the pods to patch, plus `after_finalizers`, a pure
continuation that, told which removals succeeded, yields the last write.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kjobs.api.names import COND_COMPLETE, COND_FAILED, COND_FAILURE_TARGET, COND_SUCCESS_CRITERIA_MET
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.job import conditions as C
from kjobs.job import pods as P
from kjobs.job.backoff import BackoffRecord
from kjobs.job.context import (
    FinishingPod,
    SyncContext,
    completions,
    has_backoff_limit_per_index,
    is_indexed,
    is_pod_failed,
    match_policy,
)
from kjobs.job.decisions import FailureDecision, decide
from kjobs.job.status import copy_status, counter, to_api


@dataclass
class FinalStep:
    """The tail of a tracking step once finalizer removals are done.

    `write` is the status to write (None: nothing changed). `finished` is the terminal condition that `write`
    adds (for the event and the finished metric). `error` is true when some removal failed: the caller reports
    the sync as failed so that it is retried.
    """

    write: Obj | None
    finished: Obj | None = None
    error: bool = False


@dataclass
class TrackingPlan:
    """Write 1, the finalizer removals, and the continuation to write 2."""

    first_write: Obj | None
    backoff_record: BackoffRecord
    finalizer_removals: list[Obj]
    policy_actions: dict[str, int] = field(default_factory=dict)
    decisions: dict[str, FailureDecision] = field(default_factory=dict)
    """The decision for each failed pod in `finalizer_removals`, by UID: recorded once its finalizer is gone."""
    _status: Obj = field(default_factory=dict, repr=False)
    _with_finalizer: set[str] = field(default_factory=set, repr=False)
    _finished_condition: Obj | None = field(default=None, repr=False)
    _reached_max: bool = False
    _terminating: int = 0
    _now: float = 0.0

    def after_finalizers(self, removed: set[str], *, failed: bool = False) -> FinalStep:
        """The final write, given the UIDs whose finalizer removal succeeded and whether any removal failed."""
        status = copy_status(self._status)
        with_finalizer = self._with_finalizer - removed
        needs_flush = False  # write 1, if any, already carried everything decided before the removals
        if _move_uncounted(status, with_finalizer):
            needs_flush = True
        if failed:
            return FinalStep(to_api(status) if needs_flush else None, error=True)
        finished = None
        if not self._reached_max and self._finished_condition is not None:
            uncounted = status.get("uncountedTerminatedPods") or {}
            if not uncounted.get("succeeded") and not uncounted.get("failed") and self._terminating <= 0:
                cond = self._finished_condition
                status["conditions"], _ = C.ensure_status(
                    status["conditions"], cond["type"], cond["status"], cond["reason"], cond["message"], self._now
                )
                if cond["type"] == COND_COMPLETE:
                    status["completionTime"] = format_time(self._now)
                finished = cond
                needs_flush = True
        return FinalStep(to_api(status) if needs_flush else None, finished=finished)


def _move_uncounted(status: Obj, with_finalizer: set[str]) -> bool:
    """Move UIDs whose pods no longer carry the finalizer from the uncounted lists into the counters."""
    changed = False
    uncounted = status["uncountedTerminatedPods"]
    for key in ("succeeded", "failed"):
        before = uncounted[key]
        kept = [u for u in before if u in with_finalizer]
        if len(kept) != len(before):
            changed = True
            status[key] = counter(status, key) + len(before) - len(kept)
            uncounted[key] = kept
    return changed


def _index_of(entry: FinishingPod) -> int:
    """The sort key of the tracking step's pods: their `completion_index`."""
    return entry[2]


def can_remove_finalizer(
    ctx: SyncContext, pod: Obj, considered_failed: bool, pod_uid: str | None = None, index: int | None = None
) -> bool:
    """Finalizer may go when the Job is deleted or finishing, the pod succeeded, or it failed and is not held
    back for its index's replacement (backoffLimitPerIndex; `canRemoveFinalizer`, pkg/controller/job/
    job_controller.go). `pod_uid` and `index`: the pod's, when read already (`SyncContext.finishing`)."""
    if ctx.job.get("metadata", {}).get("deletionTimestamp") or ctx.finished_condition is not None:
        return True
    if (pod.get("status") or {}).get("phase") == "Succeeded":  # `P.phase`, inline (`is_pod_failed` says why)
        return True
    if not considered_failed:
        return False
    if has_backoff_limit_per_index(ctx.job):
        if index is None:
            index = P.completion_index(pod)
        if index != P.UNKNOWN_INDEX:
            held = ctx.pods_with_delayed_deletion.get(index)
            if held is not None and P.uid(held) == (P.uid(pod) if pod_uid is None else pod_uid):
                return False
    return True


def plan_tracking(ctx: SyncContext, *, needs_flush: bool, max_uncounted: int) -> TrackingPlan:
    """Decide write 1 and the finalizer removals for this sync (mutates `ctx.status` into the post-state;
    `trackJobStatusAndRemoveFinalizers`, pkg/controller/job/job_controller.go)."""
    job, status = ctx.job, ctx.status
    indexed = is_indexed(job)
    total = completions(job)
    expected_rm = ctx.expected_rm_finalizers
    # Only pods still carrying the finalizer (and not already being stripped of it) take part; they are few
    # next to the pods already counted, so they are picked out before the index sort.
    with_finalizer = {pod_uid for pod_uid in ctx.tracked_uids() if pod_uid not in expected_rm}
    # Unless every finalizer may go (`can_remove_finalizer`'s first test), an active pod's stays (it is neither
    # Succeeded nor failed) and the loop below would only skip it: it walks the finished ones, in the same order
    # (a stable sort of a subsequence), not the thousands running at a high parallelism (docs/perf44.md). Each
    # comes with its UID and index, as `new_context` read them (`SyncContext.finishing`).
    every = ctx.job.get("metadata", {}).get("deletionTimestamp") or ctx.finished_condition is not None
    pods = [entry for entry in (ctx.tracked() if every else ctx.finishing()) if entry[1] not in expected_rm]
    if indexed:
        pods.sort(key=_index_of)
    if _move_uncounted(status, with_finalizer):
        needs_flush = True
    uncounted = status["uncountedTerminatedPods"]
    policy = (job.get("spec") or {}).get("podFailurePolicy")
    policy_actions: dict[str, int] = {}
    decisions: dict[str, FailureDecision] = {}
    to_remove: list[Obj] = []
    new_succeeded_indexes: list[int] = []
    reached_max = False
    failing = ctx.finished_condition is not None and ctx.finished_condition.get("type") != COND_SUCCESS_CRITERIA_MET
    for pod, pod_uid, pod_index in pods:
        # `P.phase` and `index_within`, inline: a call each a finished pod (`is_pod_failed` says why they agree)
        succeeded = (pod.get("status") or {}).get("phase") == "Succeeded"
        if succeeded:
            # most finished pods: `is_pod_failed` is False for a Succeeded pod and `can_remove_finalizer` True,
            # whatever else the pod or the Job says, so neither is called (docs/jobctl54.md)
            considered_failed = False
        else:
            considered_failed = is_pod_failed(pod, job)
            if not can_remove_finalizer(ctx, pod, considered_failed, pod_uid, pod_index):
                continue
        to_remove.append(pod)
        within = pod_index != P.UNKNOWN_INDEX and total is not None and pod_index < total
        if succeeded and pod_uid not in ctx.uncounted_failed:
            if indexed:
                if within and not ctx.prev_succeeded_indexes.has(pod_index):
                    new_succeeded_indexes.append(pod_index)
                    needs_flush = True
            elif pod_uid not in ctx.uncounted_succeeded:
                needs_flush = True
                uncounted["succeeded"].append(pod_uid)
        elif considered_failed or failing:
            counts_index = not indexed or within
            decision = match_policy(job, pod) if counts_index and policy is not None else None
            if counts_index:
                # Also for a pod counted by an earlier sync whose finalizer removal did not finish: its decision
                # is recorded when the removal succeeds, and only then (`run_tracking`).
                decisions[pod_uid] = decide(job, pod, failing=not considered_failed, decision=decision)
            if pod_uid not in ctx.uncounted_failed and counts_index:
                if decision is not None:
                    if decision.action is not None:
                        policy_actions[decision.action] = policy_actions.get(decision.action, 0) + 1
                    if decision.count_failed:
                        needs_flush = True
                        uncounted["failed"].append(pod_uid)
                else:
                    needs_flush = True
                    uncounted["failed"].append(pod_uid)
        if len(new_succeeded_indexes) + len(uncounted["succeeded"]) + len(uncounted["failed"]) >= max_uncounted:
            reached_max = True
            break
    if indexed:
        ctx.succeeded_indexes = ctx.succeeded_indexes.with_indexes(new_succeeded_indexes)
        completed = str(ctx.succeeded_indexes)
        if completed != (status.get("completedIndexes") or ""):
            needs_flush = True
        status["succeeded"] = ctx.succeeded_indexes.total()
        status["completedIndexes"] = completed
        failed_text = str(ctx.failed_indexes) if ctx.failed_indexes is not None else None
        if status.get("failedIndexes") != failed_text:
            status["failedIndexes"] = failed_text
            needs_flush = True
    finished = ctx.finished_condition
    if finished is not None and finished.get("type") == COND_FAILURE_TARGET:
        status["conditions"].append(finished)
        needs_flush = True
        finished = C.new_condition(COND_FAILED, "True", finished["reason"], finished["message"], ctx.now)
    if finished is not None and finished.get("type") == COND_SUCCESS_CRITERIA_MET:
        if not C.is_true(status["conditions"], COND_SUCCESS_CRITERIA_MET):
            status["conditions"].append(finished)
            needs_flush = True
        finished = C.new_condition(COND_COMPLETE, "True", finished["reason"], finished["message"], ctx.now)
    first_write = to_api(status) if needs_flush else None
    return TrackingPlan(
        first_write=first_write,
        backoff_record=ctx.new_backoff,
        finalizer_removals=to_remove,
        policy_actions=policy_actions,
        decisions=decisions,
        _status=copy_status(status),
        _with_finalizer=with_finalizer,
        _finished_condition=finished,
        _reached_max=reached_max,
        _terminating=ctx.terminating,
        _now=ctx.now,
    )
