"""Exit-code ranges (`onExitCodes.valueRanges`, gate ExitCodeRanges) and last-termination matching in the matcher."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.explanation import explain
from kjobs.policy import match_pod_failure_policy


def failed_pod(code: int, *, name: str = "main") -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns"},
        "status": {
            "phase": "Failed",
            "containerStatuses": [{"name": name, "state": {"terminated": {"exitCode": code}}}],
        },
    }


def range_rule(op: str, values: list[int], ranges: list[tuple[int, int]], action: str = "FailJob") -> dict[str, Any]:
    req = {"operator": op, "values": values, "valueRanges": [{"from": a, "to": b} for a, b in ranges]}
    return {"action": action, "onExitCodes": req}


@pytest.mark.parametrize(
    ("op", "values", "ranges", "code", "matches", "matched_range"),
    [
        ("In", [], [(40, 49)], 40, True, (40, 49)),
        ("In", [], [(40, 49)], 49, True, (40, 49)),
        ("In", [], [(40, 49)], 45, True, (40, 49)),
        ("In", [], [(40, 49)], 39, False, None),
        ("In", [], [(40, 49)], 50, False, None),
        ("In", [1], [(40, 49)], 1, True, None),
        ("In", [1], [(10, 19), (40, 49)], 42, True, (40, 49)),
        ("In", [], [(-5, -1)], -3, True, (-5, -1)),
        ("NotIn", [], [(40, 49)], 42, False, None),
        ("NotIn", [], [(40, 49)], 50, True, None),
        ("NotIn", [1], [(40, 49)], 1, False, None),
        ("NotIn", [1], [(40, 49)], 2, True, None),
        ("NotIn", [], [(1, 255)], 0, False, None),
    ],
)
def test_range_tables(
    op: str, values: list[int], ranges: list[tuple[int, int]], code: int, matches: bool, matched_range: Any
) -> None:
    decision = match_pod_failure_policy({"rules": [range_rule(op, values, ranges)]}, failed_pod(code))
    assert (decision.action == "FailJob") is matches
    assert decision.value_range == matched_range


def test_malformed_range_items_are_skipped() -> None:
    rule = {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [], "valueRanges": [{"from": 5}, "x"]}}
    assert match_pod_failure_policy({"rules": [rule]}, failed_pod(5)).action is None


def test_explain_names_the_matched_range_in_both_forms() -> None:
    job = {"spec": {"podFailurePolicy": {"rules": [range_rule("In", [3], [(40, 49)], "Ignore")]}}}
    e = explain(job, failed_pod(42))
    assert e.matched == "container main exited with code 42 (in range 40-49)"
    assert "exit code In [3] or 40-49 in any container" in e.render()
    assert e.to_dict()["matched"] == "container main exited with code 42 (in range 40-49)"


def test_rule_name_is_part_of_the_decision_and_of_explain() -> None:
    rule = dict(range_rule("In", [], [(40, 49)], "Count"), name="retriable")
    job = {"spec": {"podFailurePolicy": {"rules": [rule]}}}
    assert match_pod_failure_policy(job["spec"]["podFailurePolicy"], failed_pod(41)).rule_name == "retriable"
    e = explain(job, failed_pod(41))
    assert 'Decision: Count (rule 0 "retriable")' in e.render()
    assert e.to_dict()["ruleName"] == "retriable"
    assert '[0 "retriable"] Count' in e.render()


def running_restarted_pod(last_code: int) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns"},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {
                    "name": "main",
                    "restartCount": 1,
                    "state": {"running": {}},
                    "lastState": {"terminated": {"exitCode": last_code}},
                }
            ],
        },
    }


def test_last_termination_reads_last_state_only_when_asked() -> None:
    policy = {"rules": [range_rule("In", [42], [])]}
    assert match_pod_failure_policy(policy, running_restarted_pod(42)).action is None
    decision = match_pod_failure_policy(policy, running_restarted_pod(42), last_termination=True)
    assert (decision.action, decision.exit_code) == ("FailJob", 42)
    assert match_pod_failure_policy(policy, running_restarted_pod(1), last_termination=True).action is None


def test_explain_a_running_pod_of_a_restart_limited_job() -> None:
    """OnFailure + maxRestartTimes: a FailJob match on the last termination is explained although the pod runs;
    any other last exit is said to be restarted in place."""
    job = {
        "spec": {
            "template": {"spec": {"restartPolicy": "OnFailure", "maxRestartTimes": 3}},
            "podFailurePolicy": {"rules": [range_rule("In", [42], [])]},
        }
    }
    e = explain(job, running_restarted_pod(42))
    assert (e.pod_failed, e.action, e.matched) == (True, "FailJob", "container main exited with code 42")
    other = explain(job, running_restarted_pod(1))
    assert other.action is None
    assert "restart in place, and only a FailJob rule is applied to their terminations" in other.effect
