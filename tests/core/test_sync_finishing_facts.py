"""The sync's passes over the finishing pods take each pod's UID and completion index from the facts `new_context`
read (`SyncContext.finishing`, docs/finished48.md) rather than from the pod: each pass, and the whole sync, gives
what its plain form reading every pod gives — for Indexed and NonIndexed Jobs, with and without
backoffLimitPerIndex, a pod failure policy, `podReplacementPolicy: Failed`, a Job being deleted or finishing,
finalizer removals in flight, pods counted as uncounted and facts remembered for some pods, on pods with duplicate,
missing and out-of-range indexes, terminal, running and being deleted."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.names import COND_FAILURE_TARGET, COND_SUCCESS_CRITERIA_MET
from kjobs.api.types import Obj
from kjobs.job import conditions as C
from kjobs.job import pods as P
from kjobs.job import sync, tracking
from kjobs.job.config import Bookkeeping, SyncConfig
from kjobs.job.context import (
    SyncContext,
    completions,
    has_backoff_limit_per_index,
    is_index_failed,
    is_indexed,
    is_pod_failed,
)
from kjobs.job.intervals import Intervals
from tests.core.test_sync_finished_tracked import _PHASES, NOW, _job, _pod, _uncounted
from tests.hypothesis_budget import examples

# indexes up to and past `completions` (8), as `_pods` of test_sync_finished_tracked, plus the boundary
_pods = st.lists(
    st.tuples(
        st.sampled_from(_PHASES),
        st.one_of(st.none(), st.integers(0, 9), st.sampled_from(["x", "-1", "12", "007"])),
        st.booleans(),
        st.booleans(),
        st.booleans(),
        st.integers(0, 3),
        st.sampled_from([0, 1, 42]),
    ),
    max_size=24,
)

# --- the passes as they were, each reading the pod's UID and index itself -------------------------------------


def _valid_index(job: Obj, pod: Obj) -> int | None:
    index = P.completion_index(pod)
    total = completions(job)
    if index == P.UNKNOWN_INDEX or total is None or index >= total:
        return None
    return index


def plain_new_finished_pods(ctx: SyncContext) -> tuple[list[Obj], list[Obj]]:
    succeeded: list[Obj] = []
    failed: list[Obj] = []
    indexed = is_indexed(ctx.job)
    for pod in ctx.finishing_pods:
        pod_uid = P.uid(pod)
        if pod_uid in ctx.expected_rm_finalizers:
            continue
        if indexed and _valid_index(ctx.job, pod) is None:
            continue
        if P.phase(pod) == "Succeeded":
            if pod_uid not in ctx.uncounted_succeeded:
                succeeded.append(pod)
        elif is_pod_failed(pod, ctx.job) and pod_uid not in ctx.uncounted_failed:
            failed.append(pod)
    return succeeded, failed


def plain_succeeded_indexes(job: Obj, pods: list[Obj], total: int) -> tuple[Intervals, Intervals]:
    prev = Intervals.parse((job.get("status") or {}).get("completedIndexes"), total)
    new = [
        ix
        for p in pods
        if P.phase(p) == "Succeeded" and P.has_tracking_finalizer(p) and (ix := _valid_index(job, p)) is not None
    ]
    return prev, prev.with_indexes(new)


def plain_failed_indexes(job: Obj, pods: Sequence[Obj], total: int) -> Intervals:
    text = (job.get("status") or {}).get("failedIndexes")
    prev = Intervals.parse(text, total) if text is not None else Intervals()
    new = [
        ix
        for p in pods
        if P.has_tracking_finalizer(p) and (ix := _valid_index(job, p)) is not None and is_index_failed(job, p)
    ]
    return prev.with_indexes(new)


def plain_pods_with_delayed_deletion(ctx: SyncContext) -> dict[int, Obj]:
    active_indexes = {P.completion_index(p) for p in ctx.active_pods} - {P.UNKNOWN_INDEX}
    failed_indexes = ctx.failed_indexes or Intervals()
    held: dict[int, Obj] = {}
    for pod in ctx.finishing_pods:
        if P.uid(pod) in ctx.expected_rm_finalizers:
            continue
        index = _valid_index(ctx.job, pod)
        if index is None or not is_pod_failed(pod, ctx.job):
            continue
        if ctx.succeeded_indexes.has(index) or failed_indexes.has(index) or index in active_indexes:
            continue
        last = held.get(index)
        if last is None or (
            P.index_absolute_failure_count(last) <= P.index_absolute_failure_count(pod)
            and not P.finish_time(pod) < P.finish_time(last)
        ):
            held[index] = pod
    return held


def plain_compute_index_state(ctx: SyncContext) -> None:
    total = completions(ctx.job) or 0
    ctx.prev_succeeded_indexes, ctx.succeeded_indexes = plain_succeeded_indexes(ctx.job, ctx.finishing_pods, total)
    if has_backoff_limit_per_index(ctx.job):
        ctx.failed_indexes = plain_failed_indexes(ctx.job, ctx.finishing_pods, total)
        ctx.pods_with_delayed_deletion = plain_pods_with_delayed_deletion(ctx)


def plain_plan_tracking(ctx: SyncContext, *, needs_flush: bool, max_uncounted: int) -> tracking.TrackingPlan:
    """`plan_tracking` with `ctx.finishing`/`ctx.tracked` read from the pods and `can_remove_finalizer` as it was:
    the loop is the same code, so what this holds is the UIDs and indexes it is handed."""

    def read_from_pods(pods: list[Obj]) -> list[Any]:
        return [(p, P.uid(p), P.completion_index(p)) for p in pods]

    with pytest.MonkeyPatch.context() as m:
        m.setattr(SyncContext, "finishing", lambda self: read_from_pods(self.finishing_pods))
        m.setattr(SyncContext, "tracked", lambda self: read_from_pods(self.tracked_pods))
        m.setattr(tracking, "can_remove_finalizer", plain_can_remove_finalizer)
        return tracking.plan_tracking(ctx, needs_flush=needs_flush, max_uncounted=max_uncounted)


def plain_can_remove_finalizer(ctx: SyncContext, pod: Obj, considered_failed: bool, *_: Any) -> bool:
    if ctx.job.get("metadata", {}).get("deletionTimestamp") or ctx.finished_condition is not None:
        return True
    if P.phase(pod) == "Succeeded":
        return True
    if not considered_failed:
        return False
    if has_backoff_limit_per_index(ctx.job):
        index = P.completion_index(pod)
        if index != P.UNKNOWN_INDEX:
            held = ctx.pods_with_delayed_deletion.get(index)
            if held is not None and P.uid(held) == P.uid(pod):
                return False
    return True


# --- the comparisons ------------------------------------------------------------------------------------------

_FINISHED = st.sampled_from([None, COND_FAILURE_TARGET, COND_SUCCESS_CRITERIA_MET])


def _case(
    rows: list[tuple[str, Any, bool, bool, bool, int, int]],
    shape: tuple[bool, bool, bool, bool, bool, int],
    expected: set[int],
    uncounted: set[int],
    known: set[int],
) -> tuple[Obj, list[Obj], frozenset[str], dict[int, P.SyncFacts]]:
    """The Job (`_job`'s `shape`), its pods, the finalizer removals in flight and the facts remembered for `known`."""
    pods = [_pod(n, *row) for n, row in enumerate(rows)]
    job = _job(*shape)
    job["status"]["uncountedTerminatedPods"] = _uncounted(uncounted)
    facts = {id(p): P.sync_facts(p) for n, p in enumerate(pods) if n in known}
    return job, pods, frozenset(f"uid-{n}" for n in expected), facts


@settings(max_examples=examples(400), deadline=None)
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
    known=st.sets(st.integers(0, 23)),
    kept_apart=st.booleans(),
    finished=_FINISHED,
    max_uncounted=st.integers(1, 30),
)
def test_each_pass_over_the_finishing_pods_is_its_plain_form(
    rows: list[tuple[str, Any, bool, bool, bool, int, int]],
    indexed: bool,
    per_index: bool,
    policy: bool,
    failed_only: bool,
    deleting: bool,
    parallelism: int,
    expected: set[int],
    uncounted: set[int],
    known: set[int],
    kept_apart: bool,
    finished: str | None,
    max_uncounted: int,
) -> None:
    job, pods, rm, facts = _case(
        rows, (indexed, per_index, policy, failed_only, deleting, parallelism), expected, uncounted, known
    )
    ctx = sync.new_context(job, pods, now=NOW, expected_rm_finalizers=rm, facts=facts)
    if not kept_apart:
        ctx.finished_tracked = None
    assert ctx.finishing() == [(p, P.uid(p), P.completion_index(p)) for p in ctx.finishing_pods]
    assert ctx.tracked() == [(p, P.uid(p), P.completion_index(p)) for p in ctx.tracked_pods]

    assert sync._new_finished_pods(ctx) == plain_new_finished_pods(ctx)
    total = completions(job) or 0
    assert sync._succeeded_indexes(job, ctx.finishing(), total) == plain_succeeded_indexes(
        job, ctx.finishing_pods, total
    )
    assert sync._failed_indexes(job, ctx.finishing(), total) == plain_failed_indexes(job, ctx.finishing_pods, total)
    plain = copy.copy(ctx)
    sync.compute_index_state(ctx)
    plain_compute_index_state(plain)
    assert (ctx.prev_succeeded_indexes, ctx.succeeded_indexes) == (
        plain.prev_succeeded_indexes,
        plain.succeeded_indexes,
    )
    assert ctx.failed_indexes == plain.failed_indexes
    assert ctx.pods_with_delayed_deletion == plain.pods_with_delayed_deletion
    assert sync._pods_with_delayed_deletion(ctx) == plain_pods_with_delayed_deletion(ctx)

    if finished is not None:
        ctx.finished_condition = C.new_condition(finished, "True", "Reason", "message", NOW)
    ctx.status.setdefault("conditions", [])
    plain = copy.deepcopy(ctx)
    plain.job, plain.finished_tracked, plain.tracked_pods = ctx.job, ctx.finished_tracked, ctx.tracked_pods
    assert tracking.plan_tracking(ctx, needs_flush=False, max_uncounted=max_uncounted) == plain_plan_tracking(
        plain, needs_flush=False, max_uncounted=max_uncounted
    )
    assert ctx.status == plain.status


@settings(max_examples=examples(300), deadline=None)
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
    known=st.sets(st.integers(0, 23)),
)
def test_a_sync_plans_and_tracks_as_its_plain_passes_do(
    rows: list[tuple[str, Any, bool, bool, bool, int, int]],
    indexed: bool,
    per_index: bool,
    policy: bool,
    failed_only: bool,
    deleting: bool,
    parallelism: int,
    expected: set[int],
    uncounted: set[int],
    known: set[int],
) -> None:
    job, pods, rm, facts = _case(
        rows, (indexed, per_index, policy, failed_only, deleting, parallelism), expected, uncounted, known
    )

    def planned() -> tuple[Any, Any]:
        plan = sync.plan_sync(
            job, pods, now=NOW, bookkeeping=Bookkeeping(expected_rm_finalizers=rm), config=SyncConfig(), facts=facts
        )
        return plan, plan.after_pod_actions() if plan.ctx is not None else None

    fast = planned()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(sync, "_new_finished_pods", plain_new_finished_pods)
        m.setattr(sync, "compute_index_state", plain_compute_index_state)
        m.setattr(sync, "plan_tracking", plain_plan_tracking)
        slow = planned()
    assert fast == slow
