"""One failed pod's decision in words: the rule (and its optional name), the action, the effect on the counters;
and the Event message that `kjobs explain job` reads back once the pod is gone."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import generate_latest

from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION, JOB_INDEX_FAILURE_COUNT_ANNOTATION
from kjobs.api.types import Obj
from kjobs.job.decisions import FailureDecision, decide, parse_event_message
from kjobs.job.metrics import JobMetrics


def job(**spec: Any) -> Obj:
    return {"metadata": {"name": "work", "namespace": "default"}, "spec": spec}


def failed_pod(code: int, *, index: int | None = None, failures: int = 0, conditions: list[Obj] | None = None) -> Obj:
    annotations = {JOB_INDEX_FAILURE_COUNT_ANNOTATION: str(failures)}
    if index is not None:
        annotations[JOB_COMPLETION_INDEX_ANNOTATION] = str(index)
    return {
        "metadata": {"name": "work-abc", "namespace": "default", "annotations": annotations},
        "status": {
            "phase": "Failed",
            "conditions": conditions or [],
            "containerStatuses": [{"name": "main", "state": {"terminated": {"exitCode": code}}}],
        },
    }


def test_a_named_rule_labels_the_metric_with_its_name_and_shows_in_the_message() -> None:
    policy = {"rules": [{"name": "retriable", "action": "Ignore", "onExitCodes": {"operator": "In", "values": [3]}}]}
    decision = decide(job(podFailurePolicy=policy), failed_pod(3))
    assert (decision.action, decision.rule, decision.rule_name, decision.rule_label) == (
        "Ignore",
        0,
        "retriable",
        "retriable",
    )
    assert decision.message() == (
        'Pod work-abc failed (exit main=3): rule 0 "retriable" (Ignore): not counted toward any backoff limit'
    )
    assert (decision.event_type, decision.reason) == ("Normal", "PodFailurePolicyIgnore")


@pytest.mark.parametrize("name", [None, "", 7, ["x"]])
def test_a_rule_without_a_usable_name_is_labelled_by_its_index(name: Any) -> None:
    rule: Obj = {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [0]}}
    if name is not None:
        rule["name"] = name
    decision = decide(job(podFailurePolicy={"rules": [rule]}), failed_pod(1))
    assert (decision.rule_name, decision.rule_label) == (None, "0")


def test_no_policy_and_no_match_are_told_apart() -> None:
    plain = decide(job(), failed_pod(1))
    assert (plain.action, plain.rule_label, plain.effect, plain.reason) == (
        "NoPolicy",
        "none",
        "counted toward backoffLimit",
        "PodFailureCounted",
    )
    policy = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}
    unmatched = decide(job(podFailurePolicy=policy), failed_pod(1))
    assert (unmatched.action, unmatched.reason) == ("NoRuleMatched", "PodFailurePolicyNoMatch")


def test_the_last_allowed_failure_of_an_index_fails_it() -> None:
    spec = {"completionMode": "Indexed", "completions": 3, "backoffLimitPerIndex": 1}
    retried = decide(job(**spec), failed_pod(1, index=2, failures=0))
    assert (retried.effect, retried.event_type) == ("counted toward backoffLimitPerIndex of index 2", "Normal")
    exhausted = decide(job(**spec), failed_pod(1, index=2, failures=1))
    assert (exhausted.effect, exhausted.event_type) == ("index 2 failed: backoffLimitPerIndex (1) reached", "Warning")


def test_a_running_pod_counted_because_the_job_fails_says_so() -> None:
    pod = failed_pod(0)
    pod["status"] = {"phase": "Running"}
    decision = decide(job(), pod, failing=True)
    assert (decision.failure, decision.effect) == ("phase Running", "counted in status.failed: the Job is failing")


def test_a_matched_condition_is_the_failure() -> None:
    policy = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
    pod = failed_pod(137, conditions=[{"type": "DisruptionTarget", "status": "True"}])
    assert decide(job(podFailurePolicy=policy), pod).failure == "condition DisruptionTarget=True"


@pytest.mark.parametrize(
    "decision",
    [
        FailureDecision("p-1", 3, "exit main=42, side=1", "FailJob", 2, "fatal", "Job failed"),
        FailureDecision("p-2", None, "condition DisruptionTarget=True", "Ignore", 0, None, "not counted"),
        FailureDecision("p-3", 0, "reason DeadlineExceeded", "NoRuleMatched", None, None, "counted toward x"),
        FailureDecision("p-4", None, "no exit code", "NoPolicy", None, None, "counted toward backoffLimit"),
    ],
)
def test_event_messages_read_back(decision: FailureDecision) -> None:
    assert parse_event_message(decision.message()) == decision


def test_other_messages_are_not_decisions() -> None:
    assert parse_event_message("Created pod: work-abc") is None


def test_kubernetes_metric_keeps_its_whole_help_text() -> None:
    """pkg/controller/job/metrics/metrics.go: `PodFailuresHandledByFailurePolicy`'s help, newlines folded, after
    its stability level (component-base's `annotateStabilityLevel`)."""
    exposition = generate_latest(JobMetrics().registry).decode()
    assert (
        "# HELP job_controller_pod_failures_handled_by_failure_policy_total [BETA] The number of failed Pods handled "
        "by failure policy with respect to the failure policy action applied based on the matched rule. Possible "
        "values of the action label correspond to the possible values for the failure policy rule action, which are: "
        '"FailJob", "Ignore" and "Count".\n' in exposition
    )


def test_a_range_match_is_named_in_the_event_and_read_back() -> None:
    """`kjobs explain job` on a gone pod reads the range from the Event message."""
    rule = {"action": "Count", "onExitCodes": {"operator": "In", "values": [], "valueRanges": [{"from": 40, "to": 49}]}}
    decision = decide(job(podFailurePolicy={"rules": [rule]}), failed_pod(42))
    assert decision.failure == "exit main=42 in 40-49"
    parsed = parse_event_message(decision.message())
    assert parsed is not None and parsed.failure == "exit main=42 in 40-49" and parsed.rule == 0


def test_restart_limit_decision_reads_the_last_termination() -> None:
    """OnFailure with maxRestartTimes: a running pod whose container last exited 42 is judged by that exit."""
    spec = {
        "podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]},
        "template": {"spec": {"restartPolicy": "OnFailure", "maxRestartTimes": 3}},
    }
    running = failed_pod(1)
    running["status"] = {
        "phase": "Running",
        "containerStatuses": [
            {"name": "main", "state": {"running": {}}, "lastState": {"terminated": {"exitCode": 42}}}
        ],
    }
    decision = decide(job(**spec), running, failing=True)
    assert (decision.failure, decision.action, decision.effect) == ("exit main=42", "FailJob", "Job failed")


def test_a_deleted_pod_counted_before_it_ended_says_it_was_deleted() -> None:
    """Without a podFailurePolicy a terminating pod counts as failed at once (podReplacementPolicy
    TerminatingOrFailed): its Event says it was deleted, not only that it was Running."""
    pod = failed_pod(0)
    pod["status"] = {"phase": "Running"}
    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert decide(job(), pod).failure == "deleted while Running"
