"""`kjobs run`'s view model: states, one explanation per failed pod, and the final summary."""

from __future__ import annotations

from typing import Any

from kjobs.progress import RunView, pod_state


def job(**status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "demo", "namespace": "default", "uid": "u"},
        "spec": {
            "backoffLimit": 6,
            "podReplacementPolicy": "Failed",
            "podFailurePolicy": {
                "rules": [
                    {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}},
                    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
                ]
            },
        },
        "status": status,
    }


def pod(
    name: str, phase: str, code: int | None = None, *, deleting: bool = False, disrupted: bool = False
) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if code is not None:
        status["containerStatuses"] = [{"name": "main", "state": {"terminated": {"exitCode": code}}}]
    if disrupted:
        status["conditions"] = [{"type": "DisruptionTarget", "status": "True"}]
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": name}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": status}


def test_states() -> None:
    assert pod_state(pod("a", "Running", deleting=True)) == "Terminating"
    assert pod_state(pod("a", "Failed", 1, deleting=True)) == "Failed"
    assert pod_state({"metadata": {"name": "x"}}) == "Pending"


def test_each_failed_pod_is_explained_once() -> None:
    view = RunView(job())
    assert view.update_pod(pod("a", "Running")) == ["pod a Running"]
    lines = view.update_pod(pod("a", "Failed", 42))
    assert lines[0] == "pod a Failed"
    assert (
        lines[1]
        == "pod a failed: container main exited with code 42 → FailJob by rule 0; counts toward the backoff limit"
    )
    assert view.update_pod(pod("a", "Failed", 42)) == []
    lines = view.update_pod(pod("b", "Failed", 143, disrupted=True))
    assert lines[-1] == "pod b failed: pod condition DisruptionTarget=True → Ignore by rule 1; not counted"
    assert len(view.decisions) == 2


def test_summary_reports_outcome_counts_and_decisions() -> None:
    view = RunView(job())
    view.update_pod(pod("a", "Failed", 1))
    finished = job(
        failed=1,
        conditions=[
            {
                "type": "FailureTarget",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
            },
            {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
            },
        ],
    )
    assert view.update_job(finished) == [
        "job condition FailureTarget=True (BackoffLimitExceeded: Job has reached the specified backoff limit)",
        "job condition Failed=True (BackoffLimitExceeded: Job has reached the specified backoff limit)",
    ]
    assert view.finished() == "Failed"
    summary = view.summary().splitlines()
    assert summary[0] == "Job default/demo: Failed"
    assert summary[1] == "  reason: BackoffLimitExceeded"
    assert "  failures: 1 pod(s) failed, 0 ignored by the policy" in summary
    assert (
        "  - pod a failed: container main exited with code 1, no rule matched → counted; "
        "counts toward the backoff limit" in summary
    )
