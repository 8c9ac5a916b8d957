"""Every pod the Job counts as failed is in `failures by reason` and its run time in wasted pod-seconds, also
when it never reaches phase Failed: Kubernetes counts a pod that is deleted while it runs as failed at once (the
Job failed and ended it; or, with no podFailurePolicy, an eviction), and keeps it counted if it then exits 0
within its grace period, or if its object is gone before any end was written (pkg/controller/job/
job_controller.go, `isPodFailed` and `trackJobStatusAndRemoveFinalizers`). Found by docs/simtrial43.md."""

from __future__ import annotations

from typing import Any

from kjobs.api.types import Obj
from kjobs.cli.simulate import render
from kjobs.simulate import SimulationOptions, parse_model, simulate
from kjobs.simulate.report import attempts, pod_ends, report_data
from kjobs.simulate.report import render as report_page
from kjobs.simulate.runs import distribution, render_comparison, render_distribution, simulate_runs


def job(grace: int, **spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "default"},
        "spec": {
            "activeDeadlineSeconds": 60,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": grace,
                    "containers": [{"name": "main", "image": "x"}],
                }
            },
            **spec,
        },
    }


def run_for(seconds: str) -> SimulationOptions:
    return SimulationOptions(model=parse_model({"containers": {"runTime": {"constant": seconds}}}))


def test_a_pod_that_exits_0_within_its_grace_period_after_the_deadline_is_a_counted_failure() -> None:
    # deleted at 60 s (the deadline), it runs out its 62 s within the 5 s grace period and exits 0
    result = simulate(job(5), run_for("62s"))
    assert result.job["status"]["failed"] == 1
    assert result.failures_by_action == {"EndedByJobFailure": 1}
    assert result.failures_by_reason == {"Completed 0": 1}
    assert result.wasted_pod_seconds == 62.0
    (attempt,) = attempts(result)
    assert (attempt["outcome"], attempt["action"], attempt["end"]) == ("Succeeded", "EndedByJobFailure", 62.0)
    assert attempt["category"] == "Succeeded · counted failed: EndedByJobFailure"


def test_a_pod_gone_before_it_ended_is_a_counted_failure() -> None:
    # grace period 0: the Job removes the finalizer of the pod it deleted and the object goes at once
    result = simulate(job(0), run_for("1h"))
    assert result.job["status"]["failed"] == 1
    assert result.failures_by_action == {"EndedByJobFailure": 1}
    assert result.failures_by_reason == {"Deleted": 1}
    assert result.wasted_pod_seconds == 60.0


def test_failures_by_reason_add_up_to_failures_by_action_under_drains() -> None:
    # no podFailurePolicy: a drained pod counts as failed when it is deleted, and most of these 30 s-2 min
    # containers, which take no SIGTERM, finish within the 30 s grace period
    model = parse_model(
        {
            "containers": {"runTime": {"uniform": {"min": "30s", "max": "2m"}}},
            "disruptions": [{"kind": "drain", "ratePerHour": 20}],
        }
    )
    manifest = job(30, backoffLimit=6, completions=4, parallelism=2)
    del manifest["spec"]["activeDeadlineSeconds"]
    counted = by_reason = succeeded_but_counted = 0
    for seed in range(6):
        result = simulate(manifest, SimulationOptions(model=model, seed=seed))
        counted += result.job["status"].get("failed", 0)
        assert sum(result.failures_by_action.values()) == result.job["status"].get("failed", 0)
        by_reason += sum(result.failures_by_reason.values())
        succeeded_but_counted += sum(1 for a in attempts(result) if a["outcome"] == "Succeeded" and a["action"])
    assert by_reason == counted
    assert succeeded_but_counted > 0  # the case this test is about happened


def test_an_eviction_that_exceeds_the_backoff_limit_counts_and_is_not_ended_by_the_job() -> None:
    # no podFailurePolicy, backoffLimit 0: the drained pod is counted as failed as it is deleted, which fails the
    # Job; the Job did not end it (it was evicted), so it is a Count failure with its eviction's reason
    model = parse_model(
        {"containers": {"runTime": {"constant": "1h"}}, "disruptions": [{"kind": "drain", "ratePerHour": 3600}]}
    )
    manifest = job(30, backoffLimit=0)
    del manifest["spec"]["activeDeadlineSeconds"]
    result = simulate(manifest, SimulationOptions(model=model))
    assert (result.outcome, result.reason) == ("Failed", "BackoffLimitExceeded")
    assert result.failures_by_action == {"Count": 1}
    assert result.failures_by_reason == {"EvictionByEvictionAPI": 1}
    (decision,) = result.view.decisions
    assert "the Job had failed and ended the pod" not in decision.verdict


def test_the_report_counts_such_a_pod_failed_and_says_why_and_what_it_wasted() -> None:
    result = simulate(job(5), run_for("62s"))
    succeeded, failed = pod_ends(report_data([result])["timeline"]["attempts"])
    assert (succeeded, failed) == ([], [62.0])  # as status.failed counts it, not as its phase reads
    page = report_page(report_data([result]))
    assert "<tr><th>Failures by reason</th><td>Completed (exit 0) 1</td></tr>" in page
    assert "<tr><th>Wasted pod-seconds</th><td>62</td></tr>" in page


def on_failure(backoff_limit: int) -> Obj:
    manifest = job(30, backoffLimit=backoff_limit)
    del manifest["spec"]["activeDeadlineSeconds"]
    manifest["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    return manifest


def test_in_place_restarts_under_on_failure_are_counted_and_their_time_wasted() -> None:
    """restartPolicy OnFailure: a failed container restarts in its pod, which the Job does not count as failed,
    but the restarts count toward backoffLimit, and the pod's time until its last restart went on failed runs and
    their back-off. The summary said `failures: none`, `wasted pod-seconds: 0` after 8 minutes of crash loop."""
    model = parse_model({"containers": {"runTime": {"constant": "30s"}, "exitCodes": [{"code": 0}, {"code": 1}]}})
    result = simulate(on_failure(10), SimulationOptions(model=model, seed=1))
    # seed 1 draws exit 1 six times, then 0: runs of 30 s, restarted at once, then after 10, 20, 40, 80, 160 s
    assert (result.outcome, result.job["status"].get("failed", 0)) == ("Complete", 0)
    assert result.container_restarts == 6
    assert result.wasted_pod_seconds == 490.0  # the last run started at 490 s and succeeded at 520 s
    assert (result.to_dict()["containerRestarts"], result.to_dict()["wastedPodSeconds"]) == (6, 490.0)


def test_restarts_that_exceed_the_backoff_limit_are_counted_once() -> None:
    model = parse_model({"containers": {"runTime": {"constant": "30s"}, "exitCodes": [{"code": 1}]}})
    result = simulate(on_failure(3), SimulationOptions(model=model))
    assert (result.outcome, result.reason) == ("Failed", "BackoffLimitExceeded")
    assert result.container_restarts == 3
    # the pod the failed Job ended: its whole run, restarts included, counted once
    (attempt,) = attempts(result)
    assert result.wasted_pod_seconds == attempt["end"] - attempt["running"]


def test_the_text_reports_say_the_restarts_also_beside_a_job_without_any() -> None:
    model = parse_model({"containers": {"runTime": {"constant": "30s"}, "exitCodes": [{"code": 0}, {"code": 1}]}})
    restarting = simulate_runs(on_failure(10), SimulationOptions(model=model, seed=1), 1)
    assert "  container restarts: 6 (in place)" in render(restarting[0].to_dict())
    never = simulate_runs(job(30), SimulationOptions(model=model, seed=1), 1)
    table = render_comparison(distribution(restarting, 1), distribution(never, 1))
    assert any(line.split()[:5] == ["container", "restarts", "p50", "6", "p90"] for line in table.splitlines())
    assert "container restarts" not in render_distribution(distribution(never, 1))
