"""Upstream test/integration/job/job_test.go's two metric tests, `TestMetricsOnSuccesses` and
`TestJobFinishedNumReasonMetric`, run against kjobs' Job controller on an in-process API in virtual time.

They open the older versions of the file (the indexed one with `waitInterval` and `k8s.io/utils/pointer`); the
newer versions the first and second half ports read (docs/upstream-job-integration.md) fold their checks into
TestNonParallelJob, TestIndexedJob and TestJobPodFailurePolicy. Same harness as those ports
(tests/controllers/upstream_job_env.py): `resetMetrics`, `createJobWithDefaults`, `validateJobPodsStatus`, the
test playing the kubelet, `validateCounterMetric`.
"""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.types import Obj
from tests.controllers.upstream_job_env import Env, run

FINISHED = "job_controller_jobs_finished"
PODS_FINISHED = "job_controller_job_pods_finished"


@pytest.mark.parametrize(
    "mode", [pytest.param("NonIndexed", id="non-indexed job"), pytest.param("Indexed", id="indexed job")]
)
def test_TestMetricsOnSuccesses(mode: str) -> None:
    """A Job of two completions whose two pods succeed: one Job finished `succeeded` for its completion mode, two
    pods finished `succeeded`, and both pods got and lost the tracking finalizer.

    The old test expects the finished Job's reason label "" (JobSuccessPolicy off then); with it on, as in the
    Kubernetes kjobs follows, a Job that reaches its completions finishes with `CompletionsReached`
    (`trackJobStatusAndRemoveFinalizers`, as TestSuccessPolicy's "job without successPolicy" row expects)."""

    async def body(env: Env) -> None:
        env.reset_metrics()
        job = await env.create_job({"completions": 2, "parallelism": 2, "completionMode": mode}, name="job-0")
        await env.validate_job_pods_status(job, active=2, ready=0)
        await env.set_job_pods_phase(job, "Succeeded", 2)
        await env.validate_job_condition(job, "Complete")  # validateJobSucceeded
        await env.validate_counter_metric(
            FINISHED, 1, completion_mode=mode, result="succeeded", reason="CompletionsReached"
        )
        await env.validate_counter_metric(PODS_FINISHED, 2, completion_mode=mode, result="succeeded")
        await env.validate_terminated_pods_tracking_finalizer_metric(2)

    run(body)


def _exit_code(code: int) -> Obj:
    """A failed pod's status with one container terminated with `code` (Go's zero values elsewhere)."""
    return {"phase": "Failed", "containerStatuses": [{"name": "", "state": {"terminated": {"exitCode": code}}}]}


def _policy(action: str) -> Obj:
    return {"rules": [{"action": action, "onExitCodes": {"operator": "In", "values": [5]}}]}


@pytest.mark.parametrize(
    ("spec", "pod_status", "reason"),
    [
        pytest.param(
            {"completions": 1, "parallelism": 1, "backoffLimit": 1, "podFailurePolicy": _policy("FailJob")},
            _exit_code(5),
            "PodFailurePolicy",
            id="non-indexed job; failed pod handled by FailJob action; JobPodFailurePolicy enabled",
        ),
        pytest.param(
            {"completions": 1, "parallelism": 1, "backoffLimit": 0, "podFailurePolicy": _policy("Count")},
            _exit_code(5),
            "BackoffLimitExceeded",
            id="non-indexed job; failed pod handled by Count action; JobPodFailurePolicy enabled",
        ),
        pytest.param(
            {"completions": 1, "parallelism": 1, "backoffLimit": 0},
            {"phase": "Failed"},
            "BackoffLimitExceeded",
            id="non-indexed job; failed",
        ),
    ],
)
def test_TestJobFinishedNumReasonMetric(spec: Obj, pod_status: Obj, reason: str) -> None:
    """The Job's one pod fails (its whole status replaced, as `updateJobPodsStatus` does): the Job fails, and
    `jobs_finished_total{NonIndexed, failed, reason}` counts it with the reason of its Failed condition."""

    async def body(env: Env) -> None:
        env.reset_metrics()
        job = await env.create_job(spec, name="job-0")
        await env.validate_job_pods_status(job, active=1, ready=0)
        pod = (await env.job_pods(job))[0]

        def replace(status: Obj) -> None:
            status.clear()
            status.update(pod_status)

        await env.change_pod_status(pod, replace)
        await env.validate_job_condition(job, "Failed")  # validateJobFailed
        await env.validate_counter_metric(FINISHED, 1, completion_mode="NonIndexed", result="failed", reason=reason)
        failed: Any = next(c for c in (await env.get_job(job))["status"]["conditions"] if c["type"] == "Failed")
        assert failed["reason"] == reason

    run(body)
