"""podFailurePolicy with `restartPolicy: OnFailure` and a restart limit (`maxRestartTimes`), through `plan_sync`.

The semantics are docs/onfailure-pod-failure-policy.md: with a restart limit the Job counts failed pods, not
container restarts, and its policy judges each pod's last termination; without one, Kubernetes' behaviour.
"""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER
from kjobs.job.sync import plan_sync

NOW = 1_767_225_600.0


def job(
    *,
    limit: int | None = 3,
    rules: list[dict[str, Any]] | None = None,
    backoff_limit: int = 1,
    per_index: int | None = None,
) -> dict[str, Any]:
    template_spec: dict[str, Any] = {"restartPolicy": "OnFailure", "containers": [{"name": "main", "image": "x"}]}
    if limit is not None:
        template_spec["maxRestartTimes"] = limit
    spec: dict[str, Any] = {
        "parallelism": 1,
        "completions": 1,
        "backoffLimit": backoff_limit,
        "template": {"spec": template_spec},
    }
    if rules is not None:
        spec["podFailurePolicy"] = {"rules": rules}
    if per_index is not None:
        spec.update(completionMode="Indexed", backoffLimitPerIndex=per_index, backoffLimit=None)
        del spec["backoffLimit"]
    return {
        "metadata": {"name": "j", "namespace": "default", "uid": "ju"},
        "spec": spec,
        "status": {"startTime": "2026-01-01T00:00:00Z"},
    }


def pod(
    name: str,
    *,
    phase: str = "Running",
    restarts: int = 0,
    now: str = "running",
    code: int | None = None,
    last: int | None = None,
    index: int | None = None,
) -> dict[str, Any]:
    """A pod whose container `main` restarted `restarts` times: `now` is its state (running, waiting, or terminated
    with `code`), `last` the exit code in `lastState.terminated`."""
    state: dict[str, Any] = {"terminated": {"exitCode": code}} if now == "terminated" else {now: {}}
    cstatus: dict[str, Any] = {"name": "main", "restartCount": restarts, "state": state}
    if last is not None:
        cstatus["lastState"] = {"terminated": {"exitCode": last}}
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "uid": f"uid-{name}",
        "finalizers": [JOB_TRACKING_FINALIZER],
    }
    if index is not None:
        meta["annotations"] = {JOB_COMPLETION_INDEX_ANNOTATION: str(index)}
    return {"metadata": meta, "status": {"phase": phase, "containerStatuses": [cstatus]}}


def failed(name: str, code: int, *, restarts: int = 4, index: int | None = None) -> dict[str, Any]:
    """A pod the node agent ended after its restarts exceeded the limit, its last run exiting `code`."""
    return pod(name, phase="Failed", restarts=restarts, now="terminated", code=code, last=1, index=index)


FAIL_JOB_42 = [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]
MESSAGE_42 = "Container main for pod default/{} failed with exit code 42 matching FailJob rule at index 0"


@pytest.mark.parametrize(
    ("the_job", "pods", "reason", "failed_count", "deleted", "created"),
    [
        pytest.param(
            job(limit=None),
            [pod("a", restarts=1, last=1)],
            "BackoffLimitExceeded",
            0,
            ["a"],
            0,
            id="no-limit-restarts-count-as-kubernetes",
        ),
        pytest.param(job(), [pod("a", restarts=3, last=1)], None, 0, [], 0, id="limit-restarts-do-not-count"),
        pytest.param(job(), [failed("a", 1)], None, 1, [], 1, id="limit-one-failed-pod-counted-and-replaced"),
        pytest.param(
            job(),
            [failed("a", 1), failed("b", 1)],
            "BackoffLimitExceeded",
            2,
            [],
            0,
            id="limit-failed-pods-exceed-backoffLimit",
        ),
        pytest.param(
            job(rules=FAIL_JOB_42),
            [pod("a", restarts=1, last=42)],
            "PodFailurePolicy",
            0,
            ["a"],
            0,
            id="failjob-42-running-after-restart",
        ),
        pytest.param(
            job(rules=FAIL_JOB_42),
            [pod("a", restarts=1, now="waiting", last=42)],
            "PodFailurePolicy",
            0,
            ["a"],
            0,
            id="failjob-42-in-back-off",
        ),
        pytest.param(
            job(rules=FAIL_JOB_42),
            [pod("a", now="terminated", code=42)],
            "PodFailurePolicy",
            0,
            ["a"],
            0,
            id="failjob-42-just-terminated",
        ),
        pytest.param(
            job(rules=FAIL_JOB_42), [pod("a", restarts=1, last=1)], None, 0, [], 0, id="exit-1-restarted-in-place"
        ),
        pytest.param(
            job(rules=FAIL_JOB_42, limit=None),
            [pod("a", restarts=1, last=42)],
            "BackoffLimitExceeded",
            0,
            ["a"],
            0,
            id="no-limit-last-state-not-judged",
        ),
        pytest.param(
            job(rules=FAIL_JOB_42), [failed("a", 42)], "PodFailurePolicy", 1, [], 0, id="failjob-42-failed-pod"
        ),
        pytest.param(
            job(rules=[{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]}}]),
            [failed("a", 1), failed("b", 1)],
            None,
            0,
            [],
            1,
            id="ignore-failed-pods-not-counted",
        ),
        pytest.param(
            job(rules=[{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]}}]),
            [pod("a", restarts=2, last=1)],
            None,
            0,
            [],
            0,
            id="ignore-restart-no-effect",
        ),
        pytest.param(
            job(rules=[{"action": "Count", "onExitCodes": {"operator": "In", "values": [1]}}]),
            [failed("a", 1), failed("b", 1)],
            "BackoffLimitExceeded",
            2,
            [],
            0,
            id="count-failed-pods",
        ),
    ],
)
def test_onfailure_with_restart_limit(
    the_job: dict[str, Any],
    pods: list[dict[str, Any]],
    reason: str | None,
    failed_count: int,
    deleted: list[str],
    created: int,
) -> None:
    plan = plan_sync(the_job, pods, now=NOW)
    assert plan.ctx is not None
    finished = plan.ctx.finished_condition
    assert (finished or {}).get("reason") == reason
    assert plan.ctx.failed == failed_count
    assert [d.pod["metadata"]["name"] for d in plan.deletions] == deleted
    assert len(plan.creations) == created
    if reason == "PodFailurePolicy":
        assert finished is not None and finished["type"] == "FailureTarget"
        assert finished["message"] == MESSAGE_42.format("a")


def test_failjob_while_running_counts_the_pod_once_it_is_deleted() -> None:
    """The Job fails at the first termination with 42: the running pod is deleted and counted failed, the
    FailJob rule recorded as its decision."""
    plan = plan_sync(job(rules=FAIL_JOB_42), [pod("a", restarts=1, last=42)], now=NOW)
    tracking = plan.after_pod_actions()
    assert tracking.decisions["uid-a"].action == "FailJob"
    assert tracking.decisions["uid-a"].failure == "exit main=42"
    assert tracking.policy_actions == {"FailJob": 1}


@pytest.mark.parametrize(
    ("pods", "failed_indexes"),
    [
        pytest.param([pod("a", restarts=5, last=1, index=0)], None, id="restarts-do-not-fail-the-index"),
        pytest.param([failed("a", 1, index=0)], None, id="first-failed-pod-within-per-index-limit"),
        pytest.param([failed("a", 3, index=0)], "0", id="failindex-on-failed-pod"),
    ],
)
def test_backoff_limit_per_index_counts_failed_pods(pods: list[dict[str, Any]], failed_indexes: str | None) -> None:
    rules = [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [3]}}]
    plan = plan_sync(job(rules=rules, per_index=1), pods, now=NOW)
    assert plan.ctx is not None
    assert (str(plan.ctx.failed_indexes) or None) == failed_indexes
