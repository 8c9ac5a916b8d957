"""Upstream pkg/controller/job/utils_test.go, run against kjobs' Job core (docs/upstream-job-validation.md).

`IsJobFinished` (pkg/controller/job/utils.go) is `kjobs.job.context.is_finished`: what the Job controller asks
before syncing a Job, and what tells its handlers to leave a finished Job's pods alone.
"""

from __future__ import annotations

from kjobs.api.types import Obj
from kjobs.job.context import is_finished


def _job(condition_type: str, status: str) -> Obj:
    return {"status": {"conditions": [{"type": condition_type, "status": status}]}}


def test_is_job_finished() -> None:
    """TestIsJobFinished: a Complete condition finishes the Job only while True (False and Unknown do not)."""
    assert is_finished(_job("Complete", "True"))
    assert not is_finished(_job("Complete", "False"))
    assert not is_finished(_job("Complete", "Unknown"))
    # IsJobFinished treats Failed the same way (the same loop); the upstream test only flips Complete.
    assert is_finished(_job("Failed", "True"))
    assert not is_finished(_job("Failed", "False"))
    assert not is_finished(_job("Failed", "Unknown"))
    # No other condition finishes a Job, not even the interim ones the terminal conditions follow.
    assert not is_finished(_job("FailureTarget", "True"))
    assert not is_finished(_job("SuccessCriteriaMet", "True"))
    assert not is_finished({"status": {}})
