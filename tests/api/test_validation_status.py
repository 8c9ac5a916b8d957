"""Job status-subresource validation (`ValidateJobStatusUpdate`, pkg/apis/batch/validation/validation.go), including
the ratcheting of the strengthened rules."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.api.validation import validate_job_status_update
from tests.api.job_fixtures import stored_job

T0 = "2025-01-01T00:00:00Z"
T1 = "2025-01-01T00:01:00Z"


def _cond(kind: str, status: str = "True") -> dict[str, str]:
    return {"type": kind, "status": status, "reason": "R", "message": "m"}


def _job(status: dict[str, Any] | None = None, **spec: Any) -> Obj:
    job = stored_job(**spec)
    job["status"] = status or {}
    return job


def _errors(new_status: dict[str, Any], old_status: dict[str, Any] | None = None, **spec: Any) -> list[str]:
    old = _job(old_status, **spec)
    new = copy.deepcopy(old)
    new["status"] = new_status
    return [str(e) for e in validate_job_status_update(new, old)]


SUCCEEDED = {
    "conditions": [_cond("SuccessCriteriaMet"), _cond("Complete")],
    "startTime": T0,
    "completionTime": T1,
    "succeeded": 1,
}
FAILED = {"conditions": [_cond("FailureTarget"), _cond("Failed")], "startTime": T0, "failed": 1}

CASES = [
    pytest.param({"active": 1, "startTime": T0}, {}, [], id="ordinary progress"),
    pytest.param(SUCCEEDED, {"active": 1, "startTime": T0}, [], id="complete the right way"),
    pytest.param(FAILED, {"active": 1, "startTime": T0}, [], id="fail the right way"),
    pytest.param(
        {"active": -1, "succeeded": -1, "failed": -1, "ready": -1, "terminating": -1},
        {},
        [
            "status.active: Invalid value: -1: must be greater than or equal to 0",
            "status.succeeded: Invalid value: -1: must be greater than or equal to 0",
            "status.failed: Invalid value: -1: must be greater than or equal to 0",
            "status.ready: Invalid value: -1: must be greater than or equal to 0",
            "status.terminating: Invalid value: -1: must be greater than or equal to 0",
            "status.failed: Invalid value: -1: cannot decrease the failed counter",
            "status.succeeded: Invalid value: -1: cannot decrease the succeeded counter",
        ],
        id="negative counters",
    ),
    pytest.param(
        {"uncountedTerminatedPods": {"succeeded": ["a", ""], "failed": ["a"]}},
        {},
        [
            'status.uncountedTerminatedPods.succeeded[1]: Invalid value: "": must not be empty',
            'status.uncountedTerminatedPods.failed[0]: Duplicate value: "a"',
        ],
        id="uncounted uids",
    ),
    pytest.param(
        {**SUCCEEDED, "conditions": [*SUCCEEDED["conditions"], _cond("FailureTarget"), _cond("Failed")]},
        {"startTime": T0},
        [
            "status.conditions: Invalid value: cannot set Complete=True and Failed=true conditions",
            "status.conditions: Invalid value: cannot set Complete=True and FailureTarget=true conditions",
            "status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and Failed=true conditions",
            "status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
        ],
        id="success and failure together",
    ),
    pytest.param(
        {"startTime": T0, "completionTime": T1},
        {"startTime": T0},
        [
            "status.completionTime: Invalid value: 2025-01-01 00:01:00 +0000 UTC: cannot set completionTime when "
            "there is no Complete=True condition"
        ],
        id="completionTime without Complete",
    ),
    pytest.param(
        {**SUCCEEDED, "completionTime": None},
        {"startTime": T0},
        ["status.completionTime: Required value: completionTime is required for Complete jobs"],
        id="Complete without completionTime",
    ),
    pytest.param(
        {**SUCCEEDED, "startTime": T1, "completionTime": T0},
        {"startTime": T1},
        [
            "status.completionTime: Invalid value: 2025-01-01 00:00:00 +0000 UTC: completionTime cannot be set "
            "before startTime"
        ],
        id="completion before start",
    ),
    pytest.param(
        {"conditions": [_cond("Failed")], "startTime": T0},
        {"startTime": T0},
        ["status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition"],
        id="Failed without FailureTarget",
    ),
    pytest.param(
        {"conditions": [_cond("Complete")], "startTime": T0, "completionTime": T1},
        {"startTime": T0},
        [
            "status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true "
            "condition"
        ],
        id="Complete without SuccessCriteriaMet",
    ),
    pytest.param(
        {**FAILED, "active": 1, "terminating": 1, "uncountedTerminatedPods": {"failed": ["x"]}, "startTime": None},
        {"active": 1, "startTime": T0},
        [
            "status.active: Invalid value: 1: active>0 is invalid for finished job",
            "status.startTime: Required value: startTime is required for finished job",
            'status.uncountedTerminatedPods: Invalid value: {"Succeeded":null,"Failed":["x"]}: '
            "uncountedTerminatedPods needs to be empty for finished job",
            "status.terminating: Invalid value: 1: terminating>0 is invalid for finished job",
            "status.startTime: Required value: startTime cannot be removed for unsuspended job",
        ],
        id="finished job leftovers",
    ),
    pytest.param(
        {"active": 1, "ready": 2},
        {},
        ["status.ready: Invalid value: 2: cannot set more ready pods than active"],
        id="more ready than active",
    ),
    pytest.param(
        {"failed": 1, "succeeded": 1},
        {"failed": 2, "succeeded": 2},
        [
            "status.failed: Invalid value: 1: cannot decrease the failed counter",
            "status.succeeded: Invalid value: 1: cannot decrease the succeeded counter",
        ],
        id="decreasing counters",
    ),
    pytest.param(
        {"startTime": T0, "conditions": [_cond("FailureTarget")], "failed": 1},
        FAILED,
        [
            "status.conditions: Invalid value: cannot disable the terminal Failed=True condition",
        ],
        id="terminal condition removed",
    ),
    pytest.param(
        {"startTime": T0},
        {"startTime": T0, "conditions": [_cond("SuccessCriteriaMet")]},
        ["status.conditions: Invalid value: cannot disable the SuccessCriteriaMet=True condition"],
        id="SuccessCriteriaMet removed",
    ),
    pytest.param(
        {**SUCCEEDED, "completionTime": "2025-01-01T00:02:00Z"},
        SUCCEEDED,
        ["status.completionTime: Invalid value: 2025-01-01 00:02:00 +0000 UTC: completionTime cannot be mutated"],
        id="completionTime mutated",
    ),
    pytest.param(
        {"startTime": T1},
        {"startTime": T0},
        ["status.startTime: Required value: startTime cannot be removed for unsuspended job"],
        id="startTime changed while running",
    ),
    pytest.param(
        {"completedIndexes": "0"},
        {},
        [
            'status.completedIndexes: Invalid value: "0": cannot set non-empty completedIndexes when '
            "non-indexed completion mode"
        ],
        id="completedIndexes on NonIndexed",
    ),
    pytest.param(
        {"failedIndexes": ""},
        {},
        [
            'status.failedIndexes: Invalid value: "": cannot set non-null failedIndexes when '
            "backoffLimitPerIndex is null"
        ],
        id="failedIndexes without per-index",
    ),
]


@pytest.mark.parametrize(("new", "old", "expected"), CASES)
def test_status_rules(new: dict[str, Any], old: dict[str, Any], expected: list[str]) -> None:
    assert _errors(new, old) == expected


def test_indexed_status_rules() -> None:
    spec = {"completionMode": "Indexed", "completions": 5, "parallelism": 5, "backoffLimitPerIndex": 1}
    assert _errors({"completedIndexes": "0-2", "failedIndexes": "4"}, {}, **spec) == []
    assert _errors({"completedIndexes": "0-5"}, {}, **spec) == [
        'status.completedIndexes: Invalid value: "0-5": error parsing completedIndexes: too large index: "5"'
    ]
    assert _errors({"failedIndexes": "3,1"}, {}, **spec) == [
        'status.failedIndexes: Invalid value: "3,1": error parsing failedIndexes: non-increasing order, previous: 3, '
        "current: 1"
    ]
    assert _errors({"completedIndexes": "0-2", "failedIndexes": "2-3"}, {}, **spec) == [
        'status.failedIndexes: Invalid value: "2-3": failedIndexes and completedIndexes overlap at index: 2'
    ]
    # scaled-down elastic Indexed Job (completions == parallelism) may decrease succeeded
    assert _errors({"succeeded": 1}, {"succeeded": 3}, **spec) == []


def test_ratcheting_keeps_stored_violations_updatable() -> None:
    broken = {"conditions": [_cond("Complete")], "startTime": T0, "completionTime": T1, "active": 2, "ready": 3}
    # the stored status already breaks several rules; an unrelated change must still be accepted
    assert _errors({**broken, "failed": 1}, broken) == []
    # but touching a field a rule looks at re-enables that rule
    assert _errors({**broken, "active": 1}, broken) == [
        "status.active: Invalid value: 1: active>0 is invalid for finished job",
        "status.ready: Invalid value: 3: cannot set more ready pods than active",
    ]


def test_suspended_job_may_reset_start_time() -> None:
    assert _errors({"startTime": None}, {"startTime": T0}, suspend=True) == []


def test_status_wrong_types() -> None:
    rendered = _errors({"active": "1", "conditions": "none", "startTime": "yesterday"}, {})
    assert 'status.active: Invalid value: "1": must be of type int32' in rendered
    assert 'status.conditions: Invalid value: "none": must be of type array' in rendered
    assert 'status.startTime: Invalid value: "yesterday": must be an RFC 3339 timestamp' in rendered
