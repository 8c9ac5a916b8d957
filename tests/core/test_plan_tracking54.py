"""Stop 54: the tracking step's walk over finished pods calls neither `is_pod_failed` nor `can_remove_finalizer`
for a Succeeded pod (the one is False and the other True for any such pod: docs/jobctl54.md), and neither do the
failed-index and held-pod passes (`is_index_failed`, `is_pod_failed`). Stop 53's `plan_tracking`,
`_failed_indexes` and `_pods_with_delayed_deletion` are kept here; on test_sync_finished_tracked.py's hypothesis
Jobs and pods (Indexed or not, per-index limits, a pod failure policy, `podReplacementPolicy: Failed`, a Job
being deleted, removals in flight, pods already uncounted), a sync plans the same with either, and its tracking
step is the same."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.names import COND_COMPLETE, COND_FAILED, COND_FAILURE_TARGET, COND_SUCCESS_CRITERIA_MET
from kjobs.api.types import Obj
from kjobs.job import conditions as C
from kjobs.job import pods as P
from kjobs.job import sync
from kjobs.job.context import (
    FinishingPod,
    SyncContext,
    completions,
    is_index_failed,
    is_indexed,
    is_pod_failed,
    match_policy,
)
from kjobs.job.decisions import FailureDecision, decide
from kjobs.job.intervals import Intervals
from kjobs.job.status import copy_status, to_api
from kjobs.job.tracking import TrackingPlan, _index_of, _move_uncounted, can_remove_finalizer
from tests.core.test_sync_finished_tracked import NOW, _job, _plans, _pod, _pods, _uncounted


def old_plan_tracking(ctx: SyncContext, *, needs_flush: bool, max_uncounted: int) -> TrackingPlan:
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
        considered_failed = is_pod_failed(pod, job)
        if not can_remove_finalizer(ctx, pod, considered_failed, pod_uid, pod_index):
            continue
        to_remove.append(pod)
        # `P.phase` and `index_within`, inline: a call each a finished pod (`is_pod_failed` says why they agree)
        within = pod_index != P.UNKNOWN_INDEX and total is not None and pod_index < total
        if (pod.get("status") or {}).get("phase") == "Succeeded" and pod_uid not in ctx.uncounted_failed:
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


def old_failed_indexes(job: Obj, finishing: list[FinishingPod], total: int) -> Intervals:
    """The failed indexes with `finishing`'s failed ones (`calculateFailedIndexes`, pkg/controller/job/
    indexed_job_utils.go); tracked pods with their indexes read, as for `_succeeded_indexes`."""
    text = (job.get("status") or {}).get("failedIndexes")
    prev = Intervals.parse(text, total) if text is not None else Intervals()
    new = [  # `index_within`, inline
        index for pod, _, index in finishing if index != P.UNKNOWN_INDEX and index < total and is_index_failed(job, pod)
    ]
    return prev.with_indexes(new)


def old_pods_with_delayed_deletion(ctx: SyncContext) -> dict[int, Obj]:
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
        if not is_pod_failed(pod, ctx.job):
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


@settings(max_examples=80, deadline=None)
@given(
    rows=_pods,
    indexed=st.booleans(),
    per_index=st.booleans(),
    policy=st.booleans(),
    failed_only=st.booleans(),
    deleting=st.booleans(),
    parallelism=st.integers(0, 10),
    expected=st.sets(st.integers(0, 23), max_size=4),
    uncounted=st.sets(st.integers(0, 23), max_size=4),
)
def test_a_sync_tracks_as_stop_53s_did(
    rows: list[tuple[str, Any, bool, bool, bool, int, int]],
    indexed: bool,
    per_index: bool,
    policy: bool,
    failed_only: bool,
    deleting: bool,
    parallelism: int,
    expected: set[int],
    uncounted: set[int],
) -> None:
    pods = [_pod(n, *row) for n, row in enumerate(rows)]
    job = _job(indexed, per_index, policy, failed_only, deleting, parallelism)
    job["status"]["uncountedTerminatedPods"] = _uncounted(uncounted)
    rm = frozenset(f"uid-{n}" for n in expected)
    fast = _plans(job, pods, rm)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(sync, "plan_tracking", old_plan_tracking)
        m.setattr(sync, "_failed_indexes", old_failed_indexes)
        m.setattr(sync, "_pods_with_delayed_deletion", old_pods_with_delayed_deletion)
        slow = _plans(job, pods, rm)
    assert fast == slow


@settings(max_examples=80, deadline=None)
@given(rows=_pods, policy=st.booleans(), failed_only=st.booleans(), expected=st.sets(st.integers(0, 23), max_size=4))
def test_the_held_failed_pods_are_stop_53s(
    rows: list[tuple[str, Any, bool, bool, bool, int, int]], policy: bool, failed_only: bool, expected: set[int]
) -> None:
    pods = [_pod(n, *row) for n, row in enumerate(rows)]
    job = _job(True, True, policy, failed_only, False, 3)
    rm = frozenset(f"uid-{n}" for n in expected)
    ctx = sync.new_context(job, pods, now=NOW, expected_rm_finalizers=rm)
    assert sync._pods_with_delayed_deletion(ctx) == old_pods_with_delayed_deletion(ctx)
