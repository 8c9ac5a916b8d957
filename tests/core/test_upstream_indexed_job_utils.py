"""pkg/controller/job/indexed_job_utils_test.go at 4a37f009ca61, row by row (docs/upstream-job-utils.md).

Each test runs kjobs' pure Job core with the row's inputs: the sync context (`new_context`, then
`compute_index_state`) where upstream builds a `syncJobCtx` or calls `calculate*Indexes`, and the planner's
helpers (`kjobs.job.sync`) where upstream calls one directly.
"""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.names import MAX_INT32
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.job import pods as P
from kjobs.job.context import is_index_failed
from kjobs.job.intervals import Intervals
from kjobs.job.sync import (
    compute_index_state,
    duplicate_index_pods,
    first_pending_indexes,
    generate_name_with_index,
    new_context,
    new_index_failure_counts,
)
from tests.core.upstream_job_support import NO_INDEX, build_pod, hollow_pods, index_phases, job

NOW = 1_257_894_000.0
"""A fixed `time.Now()` (2009-11-10T23:00:00Z)."""


def _context(the_job: Obj, pods: list[Obj], expected_rm: frozenset[str] = frozenset()) -> Any:
    ctx = new_context(the_job, pods, now=NOW, expected_rm_finalizers=expected_rm)
    compute_index_state(ctx)
    return ctx


# --------------------------------------------------------------------------------- TestCalculateSucceededIndexes

SUCCEEDED_ROWS: dict[str, dict[str, Any]] = {
    "one index": {"pods": [("1", "Succeeded")], "completions": 2, "want": [(1, 1)]},
    "two separate": {
        "pods": [("2", "Failed"), ("5", "Succeeded"), ("5", "Succeeded"), ("10", "Failed"), ("10", "Succeeded")],
        "completions": 11,
        "want": [(5, 5), (10, 10)],
    },
    "two intervals": {
        "pods": [
            ("0", "Running"),
            ("1", "Pending"),
            ("2", "Succeeded"),
            ("3", "Succeeded"),
            ("5", "Succeeded"),
            ("6", "Succeeded"),
            ("7", "Succeeded"),
        ],
        "completions": 8,
        "want": [(2, 3), (5, 7)],
    },
    "one index and one interval": {
        "pods": [
            ("0", "Succeeded"),
            ("1", "Failed"),
            ("2", "Succeeded"),
            ("3", "Succeeded"),
            ("4", "Succeeded"),
            ("5", "Succeeded"),
            (NO_INDEX, "Succeeded"),
            ("-2", "Succeeded"),
        ],
        "completions": 6,
        "want": [(0, 0), (2, 5)],
    },
    "out of range": {
        "pods": [
            ("0", "Succeeded"),
            ("1", "Succeeded"),
            ("2", "Succeeded"),
            ("3", "Failed"),
            ("4", "Succeeded"),
            ("5", "Succeeded"),
            (NO_INDEX, "Succeeded"),
            ("-2", "Succeeded"),
        ],
        "completions": 5,
        "want": [(0, 2), (4, 4)],
    },
    "prev interval out of range": {
        "prev": "0-5,8-10",
        "completions": 8,
        "want_status": [(0, 5)],
        "want": [(0, 5)],
    },
    "prev interval partially out of range": {
        "prev": "0-5,8-10",
        "completions": 10,
        "want_status": [(0, 5), (8, 9)],
        "want": [(0, 5), (8, 9)],
    },
    "prev and new separate": {
        "prev": "0,4,5,10-12",
        "pods": [("2", "Succeeded"), ("7", "Succeeded"), ("8", "Succeeded")],
        "completions": 13,
        "want_status": [(0, 0), (4, 5), (10, 12)],
        "want": [(0, 0), (2, 2), (4, 5), (7, 8), (10, 12)],
    },
    "prev between new": {
        "prev": "3,4,6",
        "pods": [("2", "Succeeded"), ("7", "Succeeded"), ("8", "Succeeded")],
        "completions": 9,
        "want_status": [(3, 4), (6, 6)],
        "want": [(2, 4), (6, 8)],
    },
    "new between prev": {
        "prev": "2,7,8",
        "pods": [("3", "Succeeded"), ("4", "Succeeded"), ("6", "Succeeded")],
        "completions": 9,
        "want_status": [(2, 2), (7, 8)],
        "want": [(2, 4), (6, 8)],
    },
    "new within prev": {
        "prev": "2-7",
        "pods": [("0", "Succeeded"), ("3", "Succeeded"), ("5", "Succeeded"), ("9", "Succeeded")],
        "completions": 10,
        "want_status": [(2, 7)],
        "want": [(0, 0), (2, 7), (9, 9)],
    },
    "corrupted interval": {
        "prev": "0,1-foo,bar",
        "pods": [("3", "Succeeded")],
        "completions": 4,
        "want_status": [(0, 0)],
        "want": [(0, 0), (3, 3)],
    },
}


@pytest.mark.parametrize("row", list(SUCCEEDED_ROWS.values()), ids=list(SUCCEEDED_ROWS))
def test_calculate_succeeded_indexes(row: dict[str, Any]) -> None:
    """`calculateSucceededIndexes`: the completed indexes in the status, and those plus the newly succeeded."""
    the_job = job(status={"completedIndexes": row.get("prev", "")}, completions=row["completions"])
    pods = hollow_pods(row.get("pods", []), tracking_finalizer=True)
    ctx = _context(the_job, pods)
    assert ctx.prev_succeeded_indexes.spans == tuple(row.get("want_status", []))
    assert ctx.succeeded_indexes.spans == tuple(row["want"])


# ----------------------------------------------------------------------------------------- TestIsIndexFailed

FAIL_INDEX_ON_3 = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [3]}}]}

IS_INDEX_FAILED_ROWS: dict[str, tuple[Obj, Obj, bool]] = {
    "failed pod exceeding backoffLimitPerIndex, when backoffLimitPerIndex=0": (
        job(completions=2, backoffLimitPerIndex=0),
        build_pod(failure_count="0", phase="Failed", index="0", tracking_finalizer=True),
        True,
    ),
    "failed pod exceeding backoffLimitPerIndex, when backoffLimitPerIndex=1": (
        job(completions=2, backoffLimitPerIndex=1),
        build_pod(failure_count="1", phase="Failed", index="1", tracking_finalizer=True),
        True,
    ),
    "matching FailIndex pod failure policy": (
        job(completions=2, backoffLimitPerIndex=1, podFailurePolicy=FAIL_INDEX_ON_3),
        build_pod(
            failure_count="0",
            status={"phase": "Failed", "containerStatuses": [{"state": {"terminated": {"exitCode": 3}}}]},
            index="0",
            tracking_finalizer=True,
        ),
        True,
    ),
}


@pytest.mark.parametrize(
    ("the_job", "pod", "want"), list(IS_INDEX_FAILED_ROWS.values()), ids=list(IS_INDEX_FAILED_ROWS)
)
def test_is_index_failed(the_job: Obj, pod: Obj, want: bool) -> None:
    """`isIndexFailed`: the per-index limit is reached, or a FailIndex rule matched."""
    assert is_index_failed(the_job, pod) is want


# ---------------------------------------------------------------------------------- TestCalculateFailedIndexes

FAILED_ROWS: dict[str, tuple[Obj, list[Obj], list[tuple[int, int]]]] = {
    "one new index failed": (
        job(completions=2, backoffLimitPerIndex=1),
        [
            build_pod(failure_count="0", phase="Failed", index="0", tracking_finalizer=True),
            build_pod(failure_count="1", phase="Failed", index="1", tracking_finalizer=True),
        ],
        [(1, 1)],
    ),
    "pod without finalizer is ignored": (
        job(completions=2, backoffLimitPerIndex=0),
        [build_pod(failure_count="0", phase="Failed", index="0")],
        [],
    ),
    "pod outside completions is ignored": (
        job(completions=2, backoffLimitPerIndex=0),
        [build_pod(failure_count="0", phase="Failed", index="3")],
        [],
    ),
    "extend the failed indexes": (
        job(status={"failedIndexes": "0"}, completions=2, backoffLimitPerIndex=0),
        [build_pod(failure_count="0", phase="Failed", index="1", tracking_finalizer=True)],
        [(0, 1)],
    ),
    "prev failed indexes empty": (
        job(status={"failedIndexes": ""}, completions=2, backoffLimitPerIndex=0),
        [build_pod(failure_count="0", phase="Failed", index="1", tracking_finalizer=True)],
        [(1, 1)],
    ),
    "prev failed indexes outside the completions": (
        job(status={"failedIndexes": "9"}, completions=2, backoffLimitPerIndex=0),
        [build_pod(failure_count="0", phase="Failed", index="1", tracking_finalizer=True)],
        [(1, 1)],
    ),
}


@pytest.mark.parametrize(("the_job", "pods", "want"), list(FAILED_ROWS.values()), ids=list(FAILED_ROWS))
def test_calculate_failed_indexes(the_job: Obj, pods: list[Obj], want: list[tuple[int, int]]) -> None:
    """`calculateFailedIndexes`: the status' failed indexes and those of not-yet-counted failed pods; never
    absent (upstream compares against a pointer to the want, so "none" is an empty list, not nil)."""
    ctx = _context(the_job, pods)
    assert ctx.failed_indexes is not None
    assert ctx.failed_indexes.spans == tuple(want)


# ------------------------------------------------------------------------ TestGetPodsWithDelayedDeletionPerIndex

DELAYED_ROWS: dict[str, tuple[Obj, list[Obj], frozenset[str], list[str]]] = {
    "failed pods are kept corresponding to non-failed indexes are kept": (
        job(completions=3, backoffLimitPerIndex=1),
        [
            build_pod(uid="a", failure_count="0", phase="Failed", index="0", tracking_finalizer=True),
            build_pod(uid="b", failure_count="1", phase="Failed", index="1", tracking_finalizer=True),
            build_pod(uid="c", failure_count="0", phase="Failed", index="2", tracking_finalizer=True),
        ],
        frozenset(),
        ["a", "c"],
    ),
    "failed pod without finalizer; the pod's deletion is not delayed as it already started": (
        job(completions=2, backoffLimitPerIndex=0),
        [build_pod(uid="a", failure_count="0", phase="Failed", index="0")],
        frozenset(),
        [],
    ),
    "failed pod with expected finalizer removal; the pod's deletion is not delayed as it already started": (
        job(completions=2, backoffLimitPerIndex=0),
        [build_pod(uid="a", failure_count="0", phase="Failed", index="0", tracking_finalizer=True)],
        frozenset({"a"}),
        [],
    ),
    "failed pod with index outside of completions; the pod's deletion is not delayed": (
        job(completions=2, backoffLimitPerIndex=0),
        [build_pod(uid="a", failure_count="0", phase="Failed", index="4", tracking_finalizer=True)],
        frozenset(),
        [],
    ),
    "failed pod for active index; the pod's deletion is not delayed as it is already replaced": (
        job(completions=2, backoffLimitPerIndex=1),
        [
            build_pod(uid="a1", failure_count="0", phase="Failed", index="0", tracking_finalizer=True),
            build_pod(uid="a2", failure_count="1", phase="Running", index="0", tracking_finalizer=True),
        ],
        frozenset(),
        [],
    ),
    "failed pod for succeeded index; the pod's deletion is not delayed as it is already replaced": (
        job(completions=2, backoffLimitPerIndex=1),
        [
            build_pod(uid="a1", failure_count="0", phase="Failed", index="0", tracking_finalizer=True),
            build_pod(uid="a2", failure_count="1", phase="Succeeded", index="0", tracking_finalizer=True),
        ],
        frozenset(),
        [],
    ),
    "multiple failed pods for index with different failure count; only the pod with highest failure count is kept": (
        job(completions=2, backoffLimitPerIndex=4),
        [
            build_pod(uid="a1", failure_count="0", phase="Failed", index="0", tracking_finalizer=True),
            build_pod(uid="a3", failure_count="2", phase="Failed", index="0", tracking_finalizer=True),
            build_pod(uid="a2", failure_count="1", phase="Failed", index="0", tracking_finalizer=True),
        ],
        frozenset(),
        ["a3"],
    ),
    "multiple failed pods for index with different finish times; only the last failed pod is kept": (
        job(completions=2, backoffLimitPerIndex=4),
        [
            build_pod(
                uid="a1",
                failure_count="1",
                phase="Failed",
                index="0",
                deletion_timestamp=format_time(NOW - 1),
                tracking_finalizer=True,
            ),
            build_pod(
                uid="a3",
                failure_count="1",
                phase="Failed",
                index="0",
                deletion_timestamp=format_time(NOW),
                tracking_finalizer=True,
            ),
            build_pod(
                uid="a2",
                failure_count="1",
                phase="Failed",
                index="0",
                deletion_timestamp=format_time(NOW - 2),
                tracking_finalizer=True,
            ),
        ],
        frozenset(),
        ["a3"],
    ),
}


@pytest.mark.parametrize(
    ("the_job", "pods", "expected_rm", "want"), list(DELAYED_ROWS.values()), ids=list(DELAYED_ROWS)
)
def test_get_pods_with_delayed_deletion_per_index(
    the_job: Obj, pods: list[Obj], expected_rm: frozenset[str], want: list[str]
) -> None:
    """`getPodsWithDelayedDeletionPerIndex`: per index that is neither done nor running, its last failed pod,
    whose finalizer stays until the replacement is created with the failure count."""
    ctx = _context(the_job, pods, expected_rm)
    assert sorted(P.uid(p) for p in ctx.pods_with_delayed_deletion.values()) == want


# ----------------------------------------------------------------------------- TestGetNewIndexFailureCountValue

IGNORE_DISRUPTION = {
    "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
}

NEW_COUNT_ROWS: dict[str, tuple[Obj, Obj | None, int, int]] = {
    "first pod created": (job(), None, 0, 0),
    "failed pod being replaced with 0 index failure count": (
        job(),
        build_pod(uid="a", failure_count="0", phase="Failed", index="0", tracking_finalizer=True),
        1,
        0,
    ),
    "failed pod being replaced with >0 index failure count": (
        job(),
        build_pod(uid="a", failure_count="3", phase="Failed", index="0", tracking_finalizer=True),
        4,
        0,
    ),
    "failed pod being replaced, matching the ignore rule": (
        job(podFailurePolicy=IGNORE_DISRUPTION),
        build_pod(
            uid="a",
            failure_count="3",
            status={"phase": "Failed", "conditions": [{"type": "DisruptionTarget", "status": "True"}]},
            index="3",
            tracking_finalizer=True,
        ),
        3,
        1,
    ),
}


@pytest.mark.parametrize(
    ("the_job", "replaced", "want_failures", "want_ignored"), list(NEW_COUNT_ROWS.values()), ids=list(NEW_COUNT_ROWS)
)
def test_get_new_index_failure_count_value(
    the_job: Obj, replaced: Obj | None, want_failures: int, want_ignored: int
) -> None:
    """`getNewIndexFailureCounts`: the replacement's failure (or, for an ignored failure, ignored-failure) count."""
    assert new_index_failure_counts(the_job, replaced) == (want_failures, want_ignored)


# ---------------------------------------------------------------------------------------- TestIntervalsHaveIndex

HAS_ROWS: dict[str, tuple[list[tuple[int, int]], int, bool]] = {
    "empty": ([], 4, False),
    "before all": ([(2, 4), (5, 7)], 1, False),
    "after all": ([(2, 4), (6, 8)], 9, False),
    "in between": ([(2, 4), (6, 8)], 5, False),
    "in first": ([(2, 4), (6, 8)], 2, True),
    "in second": ([(2, 4), (6, 8)], 8, True),
}


@pytest.mark.parametrize(("spans", "index", "want"), list(HAS_ROWS.values()), ids=list(HAS_ROWS))
def test_intervals_have_index(spans: list[tuple[int, int]], index: int, want: bool) -> None:
    """`orderedIntervals.has`."""
    assert Intervals(spans).has(index) is want


# --------------------------------------------------------------------------------------- TestFirstPendingIndexes

PENDING_ROWS: dict[str, dict[str, Any]] = {
    "cnt greater than completions": {"cnt": 5, "completions": 3, "want": [0, 1, 2]},
    "cnt less than completions": {"cnt": 2, "completions": 5, "want": [0, 1]},
    "first pods active": {
        "active": [("0", "Running"), ("1", "Pending")],
        "cnt": 3,
        "completions": 10,
        "want": [2, 3, 4],
    },
    "last pods active or succeeded": {
        "active": [("6", "Pending")],
        "succeeded": [(4, 5)],
        "cnt": 6,
        "completions": 6,
        "want": [0, 1, 2, 3],
    },
    "mixed": {
        "active": [("3", "Pending"), ("5", "Running"), ("8", "Pending"), (NO_INDEX, "Running"), ("-3", "Running")],
        "succeeded": [(2, 4), (9, 9)],
        "cnt": 5,
        "completions": 20,
        "want": [0, 1, 6, 7, 10],
    },
    "with failed indexes": {
        "active": [("3", "Pending"), ("9", "Pending")],
        "succeeded": [(1, 1), (5, 5), (9, 9)],
        "failed": [(2, 2), (6, 7)],
        "cnt": 5,
        "completions": 20,
        "want": [0, 4, 8, 10, 11],
    },
}


@pytest.mark.parametrize("row", list(PENDING_ROWS.values()), ids=list(PENDING_ROWS))
def test_first_pending_indexes(row: dict[str, Any]) -> None:
    """`firstPendingIndexes`: the lowest indexes neither succeeded, failed nor held by an active pod."""
    the_job = job(parallelism=1, completions=1, backoffLimit=1, completionMode="Indexed")
    ctx = new_context(the_job, hollow_pods(row.get("active", [])), now=NOW, expected_rm_finalizers=frozenset())
    ctx.succeeded_indexes = Intervals(row.get("succeeded", []))
    ctx.failed_indexes = Intervals(row["failed"]) if "failed" in row else None
    assert first_pending_indexes(ctx, row["cnt"], row["completions"]) == row["want"]


# ---------------------------------------------------------------------------- TestAppendDuplicatedIndexPodsForRemoval

DUPLICATE_ROWS: dict[str, dict[str, Any]] = {
    "all unique": {
        "pods": [(NO_INDEX, "Pending"), ("2", "Pending"), ("5", "Running"), ("6", "Running")],
        "rm": [(NO_INDEX, "Pending"), ("6", "Running")],
        "left": [("2", "Pending"), ("5", "Running")],
        "completions": 6,
    },
    "all with index": {
        "pods": [
            ("5", "Pending"),
            ("0", "Running"),
            ("3", "Pending"),
            ("0", "Running"),
            ("3", "Running"),
            ("0", "Pending"),
            ("6", "Running"),
            ("6", "Pending"),
        ],
        "rm": [("0", "Pending"), ("0", "Running"), ("3", "Pending"), ("6", "Running"), ("6", "Pending")],
        "left": [("0", "Running"), ("3", "Running"), ("5", "Pending")],
        "completions": 6,
    },
    "mixed": {
        "pods": [
            (NO_INDEX, "Pending"),
            ("invalid", "Running"),
            ("-2", "Running"),
            ("0", "Pending"),
            ("1", "Pending"),
            ("1", "Pending"),
            ("1", "Running"),
        ],
        "rm": [(NO_INDEX, "Pending"), ("invalid", "Running"), ("-2", "Running"), ("1", "Pending"), ("1", "Pending")],
        "left": [("0", "Pending"), ("1", "Running")],
        "completions": 6,
    },
}


@pytest.mark.parametrize("row", list(DUPLICATE_ROWS.values()), ids=list(DUPLICATE_ROWS))
def test_append_duplicated_index_pods_for_removal(row: dict[str, Any]) -> None:
    """`appendDuplicatedIndexPodsForRemoval`: which active pods go (bad index first, then by index), and in what
    order — the order in which a sync deletes them, at most 500 at a time."""
    rm, left = duplicate_index_pods(hollow_pods(row["pods"]), row["completions"])
    assert index_phases(rm) == row["rm"]
    assert index_phases(left) == row["left"]


# ------------------------------------------------------------------------------------ TestPodGenerateNameWithIndex

GENERATE_NAME_ROWS: dict[str, tuple[str, int, str]] = {
    "short job name": ("indexed-job", 1, "indexed-job-1-"),
    "job name exceeds MaxGeneneratedNameLength": (
        "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooo",
        1,
        "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhh-1-",
    ),
    "job name with index suffix exceeds MaxGeneratedNameLength": (
        "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhoo",
        1,
        "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhh-1-",
    ),
}


@pytest.mark.parametrize(("name", "index", "want"), list(GENERATE_NAME_ROWS.values()), ids=list(GENERATE_NAME_ROWS))
def test_pod_generate_name_with_index(name: str, index: int, want: str) -> None:
    """`podGenerateNameWithIndex`."""
    assert generate_name_with_index(name, index) == want


# ---------------------------------------------------------------------------------------- TestGetIndexFailureCount

FAILURE_COUNT_ROWS: dict[str, tuple[Obj, int]] = {
    "no annotation": ({}, 0),
    "valid value": (build_pod(failure_count="2"), 2),
    "valid maxint32 value": (build_pod(failure_count=str(MAX_INT32)), MAX_INT32),
    "too large value": (build_pod(failure_count=str(MAX_INT32 + 1)), 0),
    "negative value": (build_pod(failure_count="-1"), 0),
    "invalid int value": (build_pod(failure_count="xyz"), 0),
}


@pytest.mark.parametrize(("pod", "want"), list(FAILURE_COUNT_ROWS.values()), ids=list(FAILURE_COUNT_ROWS))
def test_get_index_failure_count(pod: Obj, want: int) -> None:
    """`getIndexFailureCount`: the annotation as an int32, 0 when absent, unparsable or out of range."""
    assert P.index_failure_count(pod) == want


# -------------------------------------------------------------------------- from the source, beside the rows
# The rows' "invalid int value" is `xyz`; Go's `strconv.Atoi` (getCompletionIndex, parseInt32,
# parseIndexesFromString) also refuses what Python's `int()` takes: blanks, digit separators, non-ASCII digits.

ATOI_REFUSED = [" 2", "2 ", "2_0", "\u0662", "0x2", ""]


@pytest.mark.parametrize("text", ATOI_REFUSED)
def test_numbers_go_would_not_parse_are_no_index_and_no_failure_count(text: str) -> None:
    pod = build_pod(index=text, failure_count=text, ignored_failure_count=text)
    assert P.completion_index(pod) == P.UNKNOWN_INDEX
    assert P.index_failure_count(pod) == 0
    assert P.index_absolute_failure_count(pod) == 0


@pytest.mark.parametrize("text", [t for t in ATOI_REFUSED if t])
def test_interval_parts_go_would_not_parse_are_skipped(text: str) -> None:
    assert Intervals.parse(f"0,{text},4", 6).spans == ((0, 0), (4, 4))
    assert Intervals.parse(f"0-{text},4", 6).spans == ((4, 4),)


def test_a_signed_number_parses_as_in_go() -> None:
    pod = build_pod(index="+3", failure_count="+2")
    assert (P.completion_index(pod), P.index_failure_count(pod)) == (3, 2)
    assert Intervals.parse("+1-+2", 6).spans == ((1, 2),)
