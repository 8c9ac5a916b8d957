"""Upstream Job tables of pkg/apis/batch/validation/validation_test.go not in the conformance corpus.

* TestValidateJobUpdateStatus runs through `validate_job_status_update`, the function a `/status` write runs
  (Kubernetes' `ValidateJobUpdateStatus` with the status strategy's options, pkg/registry/batch/job/strategy.go
  `getStatusValidationOptions`), and a few rows end to end as a `/status` PUT answered by a 422.
* TestValidateIndexesString runs through `validate_indexes_format`, TestValidateFailedIndexesNotOverlapCompleted
  through `failed_indexes_overlap` (`validateIndexesFormat`, `validateFailedIndexesNotOverlapCompleted`).

Rows are named verbatim; where kjobs' answer differs from the row's, the row says why (and
docs/upstream-job-validation.md lists it).
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from kjobs.api.errors import ApiError, FieldError
from kjobs.api.types import Obj
from kjobs.api.validation import (
    IndexFormatError,
    failed_indexes_overlap,
    validate_indexes_format,
    validate_job_status_update,
)
from kjobs.server.registry import Resource, lookup
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore

INVALID, REQUIRED, DUPLICATE = "FieldValueInvalid", "FieldValueRequired", "FieldValueDuplicate"
NOW = "2025-01-01T00:00:00Z"
NOW_PLUS_SECOND = "2025-01-01T00:00:01Z"
NONNEGATIVE = "must be greater than or equal to 0"
STARTTIME_1_35 = "startTime cannot be removed for unsuspended job"
"""kube-apiserver 1.32–1.35's detail; the row (newer upstream) wants Invalid "field is immutable for unsuspended
job once set" instead (the change after 1.35; docs/upstream-job-validation.md)."""


def _job(status: Obj | None = None, *, rv: str = "1", suspend: bool | None = None) -> Obj:
    job: Obj = {"metadata": {"name": "abc", "namespace": "default", "resourceVersion": rv}}
    if suspend is not None:
        job["spec"] = {"suspend": suspend}
    if status is not None:
        job["status"] = status
    return job


# (name, old, update, wanted errors as (type, field, detail)).
UPDATE_STATUS_ROWS: list[tuple[str, Obj, Obj, list[tuple[str, str, str]]]] = [
    (
        "valid",
        _job({"active": 1, "succeeded": 2, "failed": 3, "terminating": 4}),
        _job({"active": 2, "succeeded": 3, "failed": 4, "ready": 1, "terminating": 4}),
        [],
    ),
    (
        "nil ready and terminating",
        _job({"active": 1, "succeeded": 2, "failed": 3}),
        _job({"active": 2, "succeeded": 3, "failed": 4}),
        [],
    ),
    (
        # Upstream runs this row with no options; a /status write has the strategy's, under which the lower
        # counters are also refused (RejectDecreasingFailedCounter, RejectDecreasingSucceededCounter).
        "negative counts",
        _job({"active": 1, "succeeded": 2, "failed": 3, "terminating": 4}, rv="10"),
        _job({"active": -1, "succeeded": -2, "failed": -3, "ready": -1, "terminating": -2}, rv="10"),
        [
            (INVALID, "status.active", NONNEGATIVE),
            (INVALID, "status.succeeded", NONNEGATIVE),
            (INVALID, "status.failed", NONNEGATIVE),
            (INVALID, "status.ready", NONNEGATIVE),
            (INVALID, "status.terminating", NONNEGATIVE),
            (INVALID, "status.failed", "cannot decrease the failed counter"),
            (INVALID, "status.succeeded", "cannot decrease the succeeded counter"),
        ],
    ),
    (
        "empty and duplicated uncounted pods",
        _job(rv="5"),
        _job(
            {"uncountedTerminatedPods": {"succeeded": ["a", "b", "c", "a", ""], "failed": ["c", "d", "e", "d", ""]}},
            rv="5",
        ),
        [
            (DUPLICATE, "status.uncountedTerminatedPods.succeeded[3]", ""),
            (INVALID, "status.uncountedTerminatedPods.succeeded[4]", "must not be empty"),
            (DUPLICATE, "status.uncountedTerminatedPods.failed[0]", ""),
            (DUPLICATE, "status.uncountedTerminatedPods.failed[3]", ""),
            (INVALID, "status.uncountedTerminatedPods.failed[4]", "must not be empty"),
        ],
    ),
    (
        "immutable startTime for unsuspended job: with non-nil startTime",
        _job({"startTime": NOW, "active": 1}, suspend=False),
        _job({"startTime": NOW_PLUS_SECOND, "active": 1}, suspend=False),
        [(REQUIRED, "status.startTime", STARTTIME_1_35)],
    ),
    (
        "immutable startTime for unsuspended job: with nil startTime",
        _job({"startTime": NOW, "active": 1}, suspend=False),
        _job({"active": 1}, suspend=False),
        [(REQUIRED, "status.startTime", STARTTIME_1_35)],
    ),
]


def _triples(errs: list[FieldError]) -> list[tuple[str, str, str]]:
    return [(str(e.type), e.field, e.detail) for e in errs]


@pytest.mark.parametrize(("old", "update", "want"), [pytest.param(*r[1:], id=r[0]) for r in UPDATE_STATUS_ROWS])
def test_validate_job_update_status(old: Obj, update: Obj, want: list[tuple[str, str, str]]) -> None:
    """TestValidateJobUpdateStatus: the errors of a status update, in order, with type, field and detail."""
    assert _triples(validate_job_status_update(update, old)) == want


# --- the same rows as a user meets them: a /status PUT -----------------------------------------------------

JOBS: Resource = lookup("batch", "v1", "jobs")  # type: ignore[assignment]


def _put_status(old_status: Obj, new_status: Obj, **spec: Any) -> tuple[int, list[Obj], Obj | None]:
    """Create a Job, store `old_status` as its status, then PUT `new_status` to `/status`: the answer's code, the
    422's causes and, when accepted, the stored status."""
    body: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "abc"},
        "spec": {
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "abc", "image": "image"}]}},
            **spec,
        },
    }

    async def main() -> tuple[int, list[Obj], Obj | None]:
        service = ApiService(Storage(MemoryStore()), clock=lambda: 1_700_000_000.0)
        await service.ensure_namespaces()
        job = copy.deepcopy((await service.create(JOBS, "default", body)).obj)
        job["status"] = old_status
        job = await service.store.update(JOBS.store_key, job, expected_rv=job["metadata"]["resourceVersion"])
        new = copy.deepcopy(job)
        new["status"] = new_status
        try:
            stored = (await service.update(JOBS, "default", "abc", new, subresource="status")).obj
        except ApiError as exc:
            return exc.code, list((exc.details or {}).get("causes") or []), None
        return 200, [], stored["status"]

    return asyncio.run(main())


def _row(name: str) -> tuple[Obj, Obj, list[tuple[str, str, str]]]:
    _, old, update, want = next(r for r in UPDATE_STATUS_ROWS if r[0] == name)
    return old.get("status", {}), update.get("status", {}), want


@pytest.mark.parametrize(
    "name",
    [
        "negative counts",
        "empty and duplicated uncounted pods",
        "immutable startTime for unsuspended job: with non-nil startTime",
    ],
)
def test_validate_job_update_status_through_the_api(name: str) -> None:
    """The refused rows as a `/status` PUT: 422, one cause per error, each with the error's reason, field and
    message (`Invalid value: -1: must be greater than or equal to 0`)."""
    old_status, new_status, want = _row(name)
    code, causes, _ = _put_status(old_status, new_status, suspend=False)
    assert code == 422
    assert [(c["reason"], c["field"]) for c in causes] == [(t, f) for t, f, _ in want]
    assert all(c["message"].endswith(detail) for c, (_, _, detail) in zip(causes, want, strict=True))
    if name == "negative counts":
        assert causes[0]["message"] == "Invalid value: -1: must be greater than or equal to 0"


def test_validate_job_update_status_valid_through_the_api() -> None:
    """The row "valid" as a `/status` PUT: accepted and stored."""
    old_status, new_status, _ = _row("valid")
    code, _, stored = _put_status(old_status, new_status)
    assert code == 200
    assert stored is not None
    assert {k: stored.get(k) for k in new_status} == new_status


# --- TestValidateIndexesString ------------------------------------------------------------------------------

# (name, indexesString, completions, wantTotal, wantError)
INDEXES_ROWS: list[tuple[str, str, int, int, str | None]] = [
    ("empty is valid", "", 6, 0, None),
    ("single number is valid", "1", 6, 1, None),
    ("single interval is valid", "1-3", 6, 3, None),
    ("mixed intervals valid", "0,1-3,5,7-10", 12, 9, None),
    ("invalid due to extra space", "0,1-3, 5", 6, 0, 'cannot convert string to integer for index: " 5"'),
    ("invalid due to too large index", "0,1-3,5", 5, 0, 'too large index: "5"'),
    (
        "invalid due to non-increasing order of intervals",
        "1-3,0,5",
        6,
        0,
        "non-increasing order, previous: 3, current: 0",
    ),
    (
        "invalid due to non-increasing order between intervals",
        "0,0,5",
        6,
        0,
        "non-increasing order, previous: 0, current: 0",
    ),
    (
        "invalid due to non-increasing order within interval",
        "0,1-1,5",
        6,
        0,
        "non-increasing order, previous: 1, current: 1",
    ),
    ("invalid due to starting with '-'", "-1,0", 6, 0, 'cannot convert string to integer for index: ""'),
    ("invalid due to ending with '-'", "0,1-", 6, 0, 'cannot convert string to integer for index: ""'),
    (
        "invalid due to repeated '-'",
        "0,1--3",
        6,
        0,
        'the fragment "1--3" violates the requirement that an index interval can have at most two parts '
        "separated by '-'",
    ),
    ("invalid due to repeated ','", "0,,1,3", 6, 0, 'cannot convert string to integer for index: ""'),
]


@pytest.mark.parametrize(
    ("text", "completions", "want_total", "want_error"), [pytest.param(*r[1:], id=r[0]) for r in INDEXES_ROWS]
)
def test_validate_indexes_string(text: str, completions: int, want_total: int, want_error: str | None) -> None:
    """TestValidateIndexesString: the number of indexes, or the error (whose total upstream reads as 0)."""
    try:
        total = validate_indexes_format(text, completions)
    except IndexFormatError as exc:
        assert str(exc) == want_error
        assert want_total == 0
        return
    assert want_error is None
    assert total == want_total


# --- TestValidateFailedIndexesNotOverlapCompleted -------------------------------------------------------------

OVERLAP = "failedIndexes and completedIndexes overlap at index: 8"
# (name, completedIndexes, failedIndexes, completions, wantError)
OVERLAP_ROWS: list[tuple[str, str, str, int, str | None]] = [
    ("empty intervals", "", "", 6, None),
    ("empty completed intervals", "", "1-3", 6, None),
    ("empty failed intervals", "1-2", "", 6, None),
    ("non-overlapping intervals", "0,2-4,6-8,12-19", "1,9-10", 20, None),
    ("overlapping intervals", "0,2-4,6-8,12-19", "1,8,9-10", 20, OVERLAP),
    ("overlapping intervals, corrupted completed interval skipped", "0,2-4,x,6-8,12-19", "1,8,9-10", 20, OVERLAP),
    ("overlapping intervals, corrupted failed interval skipped", "0,2-4,6-8,12-19", "1,y,8,9-10", 20, OVERLAP),
    ("overlapping intervals, first corrupted intervals skipped", "x,0,2-4,6-8,12-19", "y,1,8,9-10", 20, OVERLAP),
    ("non-overlapping intervals, last intervals corrupted", "0,2-4,6-8,12-19,x", "1,9-10,y", 20, None),
]


@pytest.mark.parametrize(
    ("completed", "failed", "completions", "want"), [pytest.param(*r[1:], id=r[0]) for r in OVERLAP_ROWS]
)
def test_validate_failed_indexes_not_overlap_completed(
    completed: str, failed: str, completions: int, want: str | None
) -> None:
    """TestValidateFailedIndexesNotOverlapCompleted."""
    assert failed_indexes_overlap(completed, failed, completions) == want


def test_overlapping_indexes_refused_on_a_status_write() -> None:
    """Where a user meets the row "overlapping intervals": a status write of an Indexed Job with
    backoffLimitPerIndex whose failedIndexes share index 8 with completedIndexes is refused on
    `status.failedIndexes` (`RejectFailedIndexesOverlappingCompleted`)."""
    spec = {"completionMode": "Indexed", "completions": 20, "parallelism": 1, "backoffLimitPerIndex": 1}
    old = {"metadata": {"name": "abc", "namespace": "default", "resourceVersion": "1"}, "spec": spec, "status": {}}
    new = copy.deepcopy(old)
    new["status"] = {"completedIndexes": "0,2-4,6-8,12-19", "failedIndexes": "1,8,9-10"}
    assert _triples(validate_job_status_update(new, old)) == [(INVALID, "status.failedIndexes", OVERLAP)]
