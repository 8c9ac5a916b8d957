"""Validation of the gated fields, gate off (dropped, as Kubernetes drops a disabled field) and on."""

from __future__ import annotations

import copy
from typing import Any

from kjobs.api.disabled_fields import drop_disabled_job_fields
from kjobs.api.features import FeatureGates
from kjobs.api.types import Obj
from kjobs.api.validation import validate_job, validate_job_for_update
from tests.api.job_fixtures import api_job, stored_job

ON = FeatureGates.parse("AllAlpha=true")
OFF = FeatureGates.parse("AllAlpha=false,ContainerRestartRules=false")


def _errors(job: Obj, features: FeatureGates) -> list[str]:
    """What the API returns for a create: disabled fields dropped, then validation."""
    job = copy.deepcopy(job)
    drop_disabled_job_fields(job, None, features)
    return [str(e) for e in validate_job(job, features=features)]


def _with_container(**fields: Any) -> Obj:
    job = api_job()
    job["spec"]["template"]["spec"]["containers"][0].update(fields)
    return job


RULE_42 = {"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}


def test_restart_rules_gate_on_accepts_and_gate_off_drops() -> None:
    job = _with_container(restartPolicy="Never", restartPolicyRules=[RULE_42])
    assert _errors(job, ON) == []
    dropped = copy.deepcopy(job)
    drop_disabled_job_fields(dropped, None, OFF)
    assert "restartPolicyRules" not in dropped["spec"]["template"]["spec"]["containers"][0]
    assert _errors(job, OFF) == []


def test_restart_policy_on_regular_container_without_gate_is_forbidden_by_validation() -> None:
    job = _with_container(restartPolicy="Always")
    assert validate_job(job, features=OFF)[0].detail == "may not be set for non-init containers"


def test_restart_rules_rules() -> None:
    rules = [
        {"action": "Restart"},
        {"action": "Kill", "exitCodes": {"operator": "Maybe", "values": [1, 1]}},
        *[RULE_42] * 19,
    ]
    assert _errors(_with_container(restartPolicyRules=rules), ON) == [
        "spec.template.spec.containers[0].restartPolicy: Required value: "
        "must specify restartPolicy when restart rules are used",
        "spec.template.spec.containers[0].restartPolicyRules: Too many: 21: must have at most 20 items",
        "spec.template.spec.containers[0].restartPolicyRules[0].exitCodes: Required value: must be specified",
        'spec.template.spec.containers[0].restartPolicyRules[1].action: Unsupported value: "Kill": '
        'supported values: "Restart"',
        'spec.template.spec.containers[0].restartPolicyRules[1].exitCodes.operator: Unsupported value: "Maybe": '
        'supported values: "In", "NotIn"',
        "spec.template.spec.containers[0].restartPolicyRules[1].exitCodes.values[1]: Duplicate value: 1",
    ]
    too_many = {"action": "Restart", "exitCodes": {"operator": "In", "values": list(range(1, 257))}}
    assert _errors(_with_container(restartPolicy="Never", restartPolicyRules=[too_many]), ON) == [
        "spec.template.spec.containers[0].restartPolicyRules[0].exitCodes.values: Too many: 256: "
        "must have at most 255 items"
    ]


def test_max_restart_times() -> None:
    job = api_job()
    job["spec"]["template"]["spec"].update(restartPolicy="OnFailure", maxRestartTimes=2)
    assert _errors(job, ON) == []
    assert _errors(job, OFF) == []  # dropped
    job["spec"]["template"]["spec"].update(restartPolicy="Never", maxRestartTimes=-1)
    assert _errors(job, ON) == [
        "spec.template.spec.maxRestartTimes: Invalid value: -1: must be greater than or equal to 0",
        'spec.template.spec.maxRestartTimes: Forbidden: may only be set when restartPolicy is "OnFailure"',
    ]


def _policy_job(restart: str = "Never", **on_exit: Any) -> Obj:
    job = api_job(podFailurePolicy={"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", **on_exit}}]})
    job["spec"]["template"]["spec"]["restartPolicy"] = restart
    return job


def test_pod_failure_policy_with_on_failure_needs_gate_and_restart_limit() -> None:
    job = _policy_job("OnFailure", values=[42])
    only_never = (
        'spec.template.spec.restartPolicy: Invalid value: "OnFailure": '
        'only "Never" is supported when podFailurePolicy is specified'
    )
    assert _errors(job, OFF) == [only_never]
    assert _errors(job, ON) == [only_never]  # no restart limit
    job["spec"]["template"]["spec"]["maxRestartTimes"] = 3
    assert _errors(job, ON) == []
    assert _errors(job, OFF) == [only_never]


def test_exit_code_ranges() -> None:
    path = "spec.podFailurePolicy.rules[0].onExitCodes"
    assert _errors(_policy_job(valueRanges=[{"from": 10, "to": 20}]), ON) == []
    assert _errors(_policy_job(valueRanges=[{"from": 10, "to": 20}]), OFF) == [
        f"{path}.values: Invalid value: []: at least one value is required"
    ]
    bad = _policy_job(
        values=[15],
        valueRanges=[{"from": 30, "to": 40}, {"from": 0, "to": 5}, {"from": 35, "to": 50}, {"from": 9, "to": 8}],
    )
    assert _errors(bad, ON) == [
        f'{path}.valueRanges[1]: Invalid value: "0-5": must not contain 0 for the In operator',
        f'{path}.valueRanges[2]: Invalid value: "35-50": must not overlap with {path}.valueRanges[0]',
        f"{path}.valueRanges[3].to: Invalid value: 8: must be greater than or equal to from",
        f'{path}.valueRanges: Invalid value: ["30-40","0-5","35-50"]: must be ordered',
    ]
    overlap = _policy_job(values=[15], valueRanges=[{"from": 10, "to": 20}])
    assert _errors(overlap, ON) == [f"{path}.values[0]: Invalid value: 15: must not be within {path}.valueRanges[0]"]


def test_rule_names() -> None:
    job = api_job(
        podFailurePolicy={
            "rules": [
                {"name": "retriable", "action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]}},
                {"name": "retriable", "action": "Count", "onExitCodes": {"operator": "In", "values": [2]}},
                {"name": "Bad_Name", "action": "Count", "onExitCodes": {"operator": "In", "values": [3]}},
            ]
        }
    )
    errors = _errors(job, ON)
    assert errors[0] == 'spec.podFailurePolicy.rules[1].name: Duplicate value: "retriable"'
    assert errors[1].startswith('spec.podFailurePolicy.rules[2].name: Invalid value: "Bad_Name": a lowercase RFC 1123')
    assert _errors(job, OFF) == []


def test_update_keeps_a_field_the_stored_job_already_uses() -> None:
    old = stored_job()
    old["spec"]["template"]["spec"]["containers"][0].update(restartPolicy="Never", restartPolicyRules=[RULE_42])
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"a": "b"}
    assert validate_job_for_update(new, old, features=OFF) == []
