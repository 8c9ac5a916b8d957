"""Conformance: pod failure policy matching (`policy.json`), through the public matcher."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.policy import match_pod_failure_policy
from tests.conformance.corpus import params


@pytest.mark.parametrize("case", params("policy"))
def test_policy_case(case: dict[str, Any]) -> None:
    policy = case["job"]["spec"].get("podFailurePolicy")
    decision = match_pod_failure_policy(policy, case["pod"])
    expect = case["expect"]
    assert (decision.action, decision.count_failed, decision.message) == (
        expect["action"],
        expect["countFailed"],
        expect["message"],
    )
