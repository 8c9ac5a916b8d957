"""A sync's counting passes read only the tracked pods that are not active, and a sync with nothing to remove skips
the index sort (docs/perf44.md): every plan is the one a sync walking every tracked pod, and sorting the active
pods by index, makes — for Indexed and NonIndexed Jobs, with and without backoffLimitPerIndex, a pod failure
policy, `podReplacementPolicy: Failed`, a Job being deleted, finalizer removals in flight and pods counted as
uncounted, on pods with duplicate, missing and out-of-range indexes, terminal, running and being deleted."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.names import (
    JOB_COMPLETION_INDEX_ANNOTATION,
    JOB_INDEX_FAILURE_COUNT_ANNOTATION,
    JOB_TRACKING_FINALIZER,
)
from kjobs.api.types import Obj
from kjobs.job import pods as P
from kjobs.job import sync
from kjobs.job.config import Bookkeeping, SyncConfig
from tests.hypothesis_budget import examples

NOW = 1_800_000_000.0
_PHASES = ("Pending", "Running", "Succeeded", "Failed")
_INDEXES = st.one_of(st.none(), st.integers(0, 7), st.sampled_from(["x", "-1", "12"]))


def _pod(n: int, phase: str, index: Any, tracked: bool, deleting: bool, ready: bool, failures: int, code: int) -> Obj:
    annotations: dict[str, str] = {JOB_INDEX_FAILURE_COUNT_ANNOTATION: str(failures)}
    if index is not None:
        annotations[JOB_COMPLETION_INDEX_ANNOTATION] = str(index)
    meta: Obj = {
        "name": f"job-{n}",
        "namespace": "ns",
        "uid": f"uid-{n}",
        "annotations": annotations,
        "creationTimestamp": "2027-01-15T08:00:00Z",
    }
    if tracked:
        meta["finalizers"] = [JOB_TRACKING_FINALIZER]
    if deleting:
        meta["deletionTimestamp"] = "2027-01-15T08:00:05Z"
        meta["deletionGracePeriodSeconds"] = 30
    state: Obj = {"running": {"startedAt": "2027-01-15T08:00:01Z"}}
    if phase in ("Succeeded", "Failed"):
        state = {"terminated": {"exitCode": code, "finishedAt": f"2027-01-15T08:00:{10 + n % 40:02d}Z"}}
    return {
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"},
        "status": {
            "phase": phase,
            # a second Ready condition now and then: the first one counts (`podutil.IsPodReady`)
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]
            + ([{"type": "Ready", "status": "False" if ready else "True"}] if n % 3 == 0 else []),
            "containerStatuses": [{"name": "c", "state": state, "restartCount": 0}],
        },
    }


_pods = st.lists(
    st.tuples(
        st.sampled_from(_PHASES),
        _INDEXES,
        st.booleans(),
        st.booleans(),
        st.booleans(),
        st.integers(0, 3),
        st.sampled_from([0, 1, 42]),
    ),
    max_size=24,
)


def _job(indexed: bool, per_index: bool, policy: bool, failed_only: bool, deleting: bool, parallelism: int) -> Obj:
    spec: Obj = {
        "completions": 8,
        "parallelism": parallelism,
        "backoffLimit": 6,
        "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}},
    }
    if indexed:
        spec["completionMode"] = "Indexed"
        if per_index:
            spec["backoffLimitPerIndex"] = 2
    if policy:
        spec["podFailurePolicy"] = {
            "rules": [
                {"action": "FailIndex" if indexed and per_index else "Ignore",
                 "onExitCodes": {"operator": "In", "values": [42]}},
                {"action": "Count", "onExitCodes": {"operator": "In", "values": [1]}},
            ]
        }  # fmt: skip
    if failed_only:
        spec["podReplacementPolicy"] = "Failed"
    meta: Obj = {"name": "job", "namespace": "ns", "uid": "job-uid"}
    if deleting:
        meta["deletionTimestamp"] = "2027-01-15T08:00:30Z"
    return {"metadata": meta, "spec": spec, "status": {"startTime": "2027-01-15T08:00:00Z"}}


def _uncounted(numbers: set[int]) -> Obj:
    """`status.uncountedTerminatedPods` naming the pods numbered `numbers`: the even ones succeeded, the odd failed."""
    return {
        "succeeded": [f"uid-{n}" for n in sorted(numbers) if n % 2 == 0],
        "failed": [f"uid-{n}" for n in sorted(numbers) if n % 2 == 1],
    }


def _plans(job: Obj, pods: list[Obj], expected: frozenset[str]) -> tuple[Any, Any]:
    plan = sync.plan_sync(
        job,
        pods,
        now=NOW,
        bookkeeping=Bookkeeping(expected_rm_finalizers=expected),
        config=SyncConfig(),
    )
    tracking = plan.after_pod_actions() if plan.ctx is not None else None
    if plan.ctx is not None:
        plan.ctx.finished_tracked = None  # the one field the two ways differ in by construction
    return plan, tracking


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
)
def test_a_sync_plans_the_same_from_the_finished_tracked_pods_alone(
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
    ctx = sync.new_context(job, pods, now=NOW, expected_rm_finalizers=rm)
    assert ctx.ready == sum(1 for p in ctx.active_pods if P.is_ready(p))
    assert ctx.finished_tracked == [p for p in ctx.tracked_pods if p not in ctx.active_pods]
    assert ctx.active_indexes() == [P.completion_index(p) for p in ctx.active_pods]
    fast = _plans(job, pods, rm)

    new_context = sync.new_context

    def walking_every_tracked_pod(*args: Any, **kwargs: Any) -> Any:
        ctx = new_context(*args, **kwargs)
        ctx.finished_tracked = None
        return ctx

    with pytest.MonkeyPatch.context() as m:
        m.setattr(sync, "new_context", walking_every_tracked_pod)
        m.setattr(sync, "_distinct_valid_indexes", lambda indexes, total: False)
        slow = _plans(job, pods, rm)
    assert fast == slow


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
    known=st.sets(st.integers(0, 23)),
    only_unsettled=st.booleans(),
)
def test_a_sync_plans_the_same_from_the_pods_remembered_facts(
    rows: list[tuple[str, Any, bool, bool, bool, int, int]],
    indexed: bool,
    per_index: bool,
    policy: bool,
    failed_only: bool,
    deleting: bool,
    parallelism: int,
    expected: set[int],
    known: set[int],
    only_unsettled: bool,
) -> None:
    """`P.sync_facts` remembered for some of the pods (the Job controller reads them when a pod arrives, docs/
    http47.md): the sync's classification, the active pods' indexes, its plan and its tracking are those read
    from the pods themselves."""
    pods = [_pod(n, *row) for n, row in enumerate(rows)]
    job = _job(indexed, per_index, policy, failed_only, deleting, parallelism)
    rm = frozenset(f"uid-{n}" for n in expected)
    unsettled = (
        [p for p in pods if P.has_tracking_finalizer(p) or P.phase(p) not in P.TERMINAL_PHASES]
        if only_unsettled
        else None
    )
    facts = {id(p): P.sync_facts(p) for n, p in enumerate(pods) if n in known}

    def plans(remembered: dict[int, P.SyncFacts] | None) -> tuple[Any, Any, list[int] | None]:
        plan = sync.plan_sync(
            job,
            pods,
            now=NOW,
            bookkeeping=Bookkeeping(expected_rm_finalizers=rm),
            config=SyncConfig(),
            unsettled=unsettled,
            facts=remembered,
        )
        indexes = plan.ctx.active_indexes() if plan.ctx is not None else None
        tracking = plan.after_pod_actions() if plan.ctx is not None else None
        return plan, tracking, indexes

    assert plans(facts) == plans(None)
    ctx = sync.new_context(job, pods, now=NOW, expected_rm_finalizers=rm, unsettled=unsettled, facts=facts)
    assert ctx == sync.new_context(job, pods, now=NOW, expected_rm_finalizers=rm, unsettled=unsettled)
    assert ctx.active_indexes() == [P.completion_index(p) for p in ctx.active_pods]
