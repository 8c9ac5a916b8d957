"""pkg/controller/job/backoff_utils_test.go at 0bee0bcaa7dd, row by row (docs/upstream-job-utils.md).

kjobs' counterparts are `kjobs.job.backoff` (the record and the remaining time) and `kjobs.job.pods.finish_time`
(`getFinishedTime`). Times are the rows' `defaultTestTime` (2009-11-10T23:00:00Z) as epoch seconds; the pods'
finish times are written with their milliseconds, as the Go objects hold them.
"""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.job import pods as P
from kjobs.job.backoff import BackoffRecord, next_backoff_record, remaining_time, remaining_time_per_index
from tests.core.upstream_job_support import build_pod

T = parse_time("2009-11-10T23:00:00Z")
"""`defaultTestTime`."""


def rfc3339(seconds: float) -> str:
    """A time with its milliseconds, as `metav1.Time` holds it in memory (`FinishedAt`, `DeletionTimestamp`)."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def finished_pod(phase: str, finished_at: float) -> Obj:
    """One container terminated at `finished_at` (the pods `TestNewBackoffRecord` builds)."""
    return {
        "metadata": {},
        "status": {
            "phase": phase,
            "containerStatuses": [{"state": {"terminated": {"finishedAt": rfc3339(finished_at)}}}],
        },
    }


# ------------------------------------------------------------------------------------------- TestNewBackoffRecord

MS = 0.001

NEW_RECORD_ROWS: dict[str, dict[str, Any]] = {
    "Empty backoff store and one new failure": {"failed": [T], "want": BackoffRecord(1, T)},
    "Empty backoff store and two new failures": {"failed": [T, T - MS], "want": BackoffRecord(2, T)},
    "Empty backoff store, two failures followed by success": {
        "succeeded": [T],
        "failed": [T - 2 * MS, T - MS],
        "want": BackoffRecord(0, None),
    },
    "Empty backoff store, two failures, one success and two more failures": {
        "succeeded": [T - 2 * MS],
        "failed": [T, T - 4 * MS, T - 3 * MS, T - MS],
        "want": BackoffRecord(2, T),
    },
    "Backoff store having failure count 2 and one new failure": {
        "store": BackoffRecord(2, None),
        "failed": [T],
        "want": BackoffRecord(3, T),
    },
    "Empty backoff store with success and failure at same timestamp": {
        "succeeded": [T],
        "failed": [T],
        "want": BackoffRecord(0, None),
    },
    "Empty backoff store with no success/failure": {"want": BackoffRecord(0, None)},
    "Empty backoff store with one success": {"succeeded": [T], "want": BackoffRecord(0, None)},
}


@pytest.mark.parametrize("row", list(NEW_RECORD_ROWS.values()), ids=list(NEW_RECORD_ROWS))
def test_new_backoff_record(row: dict[str, Any]) -> None:
    """`backoffStore.newBackoffRecord`: failures since the last success and the latest one's time."""
    succeeded = [finished_pod("Succeeded", t) for t in row.get("succeeded", [])]
    failed = [finished_pod("Failed", t) for t in row.get("failed", [])]
    record = next_backoff_record(row.get("store", BackoffRecord()), succeeded, failed)
    want: BackoffRecord = row["want"]
    assert record.failures_after_last_success == want.failures_after_last_success
    if want.last_failure_time is None:
        assert record.last_failure_time is None
    else:
        assert record.last_failure_time == pytest.approx(want.last_failure_time, abs=1e-6)


# --------------------------------------------------------------------------------------------- TestGetFinishedTime


def terminated(at: float | None) -> Obj:
    """A container status terminated at `at` (None: `Terminated{}`, a zero FinishedAt)."""
    state: Obj = {"finishedAt": rfc3339(at)} if at is not None else {}
    return {"state": {"terminated": state}}


RUNNING: Obj = {"state": {"running": {}}}

FINISHED_TIME_ROWS: dict[str, tuple[Obj, float]] = {
    "Pod with multiple containers and all containers terminated": (
        {"status": {"containerStatuses": [terminated(T - 1), terminated(T), terminated(T - 2)]}},
        T,
    ),
    "Pod with multiple containers; two containers in terminated state and one in running state; fallback to "
    "deletionTimestamp": (
        {
            "metadata": {"deletionTimestamp": rfc3339(T)},
            "status": {"containerStatuses": [terminated(T - 1), RUNNING, terminated(T - 2)]},
        },
        T,
    ),
    "fallback to deletionTimestamp": (
        {"metadata": {"deletionTimestamp": rfc3339(T)}, "status": {"containerStatuses": [RUNNING]}},
        T,
    ),
    "fallback to deletionTimestamp, decremented by grace period": (
        {
            "metadata": {"deletionTimestamp": rfc3339(T), "deletionGracePeriodSeconds": 30},
            "status": {"containerStatuses": [RUNNING]},
        },
        T - 30,
    ),
    "fallback to PodReady.LastTransitionTime when status of the condition is False": (
        {
            "status": {
                "containerStatuses": [terminated(None)],
                "conditions": [
                    {"type": "Ready", "status": "False", "reason": "PodFailed", "lastTransitionTime": rfc3339(T)}
                ],
            }
        },
        T,
    ),
    "skip fallback to PodReady.LastTransitionTime when status of the condition is True": (
        {
            "metadata": {"deletionTimestamp": rfc3339(T)},
            "status": {
                "containerStatuses": [terminated(None)],
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": rfc3339(T - 30)}],
            },
        },
        T,
    ),
    "fallback to creationTimestamp": (
        {"metadata": {"creationTimestamp": rfc3339(T)}, "status": {"containerStatuses": [terminated(None)]}},
        T,
    ),
    "Pod with sidecar container and all containers terminated": (
        {
            "spec": {"initContainers": [{"name": "sidecar", "restartPolicy": "Always"}]},
            "status": {
                "containerStatuses": [terminated(T - 1)],
                "initContainerStatuses": [{"name": "sidecar", **terminated(T)}],
            },
        },
        T,
    ),
}


@pytest.mark.parametrize(("pod", "want"), list(FINISHED_TIME_ROWS.values()), ids=list(FINISHED_TIME_ROWS))
def test_get_finished_time(pod: Obj, want: float) -> None:
    """`getFinishedTime`: when a pod finished, for the back-off's clock."""
    assert P.finish_time(pod) == pytest.approx(want, abs=1e-6)


# --------------------------------------------------------------------------------------- TestGetRemainingBackoffTime

REMAINING_ROWS: dict[str, tuple[BackoffRecord, float, float]] = {
    "no failures": (BackoffRecord(0, None), P.GO_ZERO_TIME, 0),
    "one failure; current time and failure time are same": (BackoffRecord(1, T), T, 5),
    "one failure; current time == 1 second + failure time": (BackoffRecord(1, T), T + 1, 4),
    "one failure; current time == expected backoff time": (BackoffRecord(1, T), T + 5, 0),
    "one failure; current time == expected backoff time + 1 Second": (BackoffRecord(1, T), T + 6, 0),
    "three failures; current time and failure time are same": (BackoffRecord(3, T), T, 20),
    "eight failures; current time and failure time are same; backoff not exceeding maxBackoff": (
        BackoffRecord(8, T),
        T,
        640,
    ),
    "nine failures; current time and failure time are same; backoff exceeding maxBackoff": (
        BackoffRecord(9, T),
        T,
        700,
    ),
}


@pytest.mark.parametrize(("record", "now", "want"), list(REMAINING_ROWS.values()), ids=list(REMAINING_ROWS))
def test_get_remaining_backoff_time(record: BackoffRecord, now: float, want: float) -> None:
    """`backoffRecord.getRemainingTime` with a 5 s default and a 700 s cap."""
    left = remaining_time(record.failures_after_last_success, record.last_failure_time, now=now, base=5, cap=700)
    assert left == want


# ------------------------------------------------------------------------------- TestGetRemainingBackoffTimePerIndex

PER_INDEX_ROWS: dict[str, tuple[Obj | None, float, float]] = {
    "no failures": (None, P.GO_ZERO_TIME, 0),
    "two prev failures; current time and failure time are same": (
        build_pod(phase="Failed", failure_count="2", deletion_timestamp=rfc3339(T)),
        T,
        20,
    ),
    "one prev failure counted and one ignored; current time and failure time are same": (
        build_pod(phase="Failed", failure_count="1", ignored_failure_count="1", deletion_timestamp=rfc3339(T)),
        T,
        20,
    ),
}


@pytest.mark.parametrize(("last_failed", "now", "want"), list(PER_INDEX_ROWS.values()), ids=list(PER_INDEX_ROWS))
def test_get_remaining_backoff_time_per_index(last_failed: Obj | None, now: float, want: float) -> None:
    """`getRemainingTimePerIndex`: the index's counted and ignored failures before its last failed pod, plus it."""
    assert remaining_time_per_index(last_failed, now=now, base=5, cap=700) == want
