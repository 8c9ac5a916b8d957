"""Conformance: pod failure policy matching (`policy.json`), through the public matcher."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.defaults import default_job
from kjobs.api.validation import validate_job
from kjobs.policy import match_pod_failure_policy
from tests.conformance.corpus import params
from tests.conformance.gates import FEATURES

# The wrapper Job has no selector: the API server would generate it, so its absence is not the policy's fault.
_GENERATED = {"spec.selector", "spec.template.metadata.labels"}


@pytest.mark.parametrize("case", params("policy"))
def test_policy_case(case: dict[str, Any]) -> None:
    errors = validate_job(default_job(case["job"]), require_prefixed_labels=False, features=FEATURES)
    rejected = [str(e) for e in errors if e.field not in _GENERATED]
    assert (not rejected) == case["jobIsApiValid"], f"jobIsApiValid={case['jobIsApiValid']}: {rejected}"
    policy = case["job"]["spec"].get("podFailurePolicy")
    decision = match_pod_failure_policy(policy, case["pod"])
    expect = case["expect"]
    assert (decision.action, decision.count_failed, decision.message) == (
        expect["action"],
        expect["countFailed"],
        expect["message"],
    )
