"""Pod failure policy matching beyond the conformance corpus: edges, orders and exact messages."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.policy import match_pod_failure_policy
from tests.hypothesis_budget import examples


def pod(
    *,
    containers: list[tuple[str, int | None]] = (),
    init: list[tuple[str, int | None]] = (),
    conditions: list[tuple[str, str]] = (),
    name: str = "p",
    namespace: str = "ns",
) -> dict[str, Any]:
    def statuses(items: list[tuple[str, int | None]]) -> list[dict[str, Any]]:
        return [
            {"name": n, "state": {"terminated": {"exitCode": code}} if code is not None else {"running": {}}}
            for n, code in items
        ]

    return {
        "metadata": {"name": name, "namespace": namespace},
        "status": {
            "phase": "Failed",
            "containerStatuses": statuses(list(containers)),
            "initContainerStatuses": statuses(list(init)),
            "conditions": [{"type": t, "status": s} for t, s in conditions],
        },
    }


def exit_rule(action: str, op: str, values: list[int], container: str | None = None) -> dict[str, Any]:
    req: dict[str, Any] = {"operator": op, "values": values}
    if container is not None:
        req["containerName"] = container
    return {"action": action, "onExitCodes": req}


@pytest.mark.parametrize(
    ("rules", "target", "expected"),
    [
        pytest.param(
            [exit_rule("Ignore", "NotIn", [1])],
            pod(containers=[("main", 0)]),
            (None, True),
            id="exit-0-never-matches-NotIn",
        ),
        pytest.param(
            [exit_rule("Count", "NotIn", [1])],
            pod(containers=[("main", 0), ("side", 3)]),
            ("Count", True),
            id="NotIn-skips-0-takes-next",
        ),
        pytest.param(
            [exit_rule("Ignore", "In", [3])], pod(containers=[("main", 3)]), ("Ignore", False), id="ignore-not-counted"
        ),
        pytest.param(
            [exit_rule("FailIndex", "In", [3])],
            pod(containers=[("main", 3)]),
            ("FailIndex", True),
            id="failindex-counted",
        ),
        pytest.param(
            [exit_rule("Ignore", "In", [3], "other")],
            pod(containers=[("main", 3)]),
            (None, True),
            id="container-name-filters",
        ),
        pytest.param(
            [exit_rule("Ignore", "In", [5], "init")],
            pod(containers=[("main", 1)], init=[("init", 5)]),
            ("Ignore", False),
            id="init-container-considered",
        ),
        pytest.param(
            [exit_rule("Ignore", "In", [-1073741510])],
            pod(containers=[("main", -1073741510)]),
            ("Ignore", False),
            id="negative-windows-code",
        ),
        pytest.param(
            [exit_rule("Ignore", "In", [1])],
            pod(containers=[("main", None)]),
            (None, True),
            id="running-container-skipped",
        ),
        pytest.param(
            [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}],
            pod(conditions=[("DisruptionTarget", "True")]),
            ("Ignore", False),
            id="condition-status-defaults-true",
        ),
        pytest.param(
            [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}],
            pod(conditions=[("DisruptionTarget", "False")]),
            (None, True),
            id="stale-disruption-false-no-match",
        ),
        pytest.param(
            [{"action": "Unknown", "onExitCodes": {"operator": "In", "values": [1]}}, exit_rule("Count", "In", [1])],
            pod(containers=[("main", 1)]),
            ("Count", True),
            id="unknown-action-skipped",
        ),
        pytest.param(
            [exit_rule("Ignore", "Between", [1])],
            pod(containers=[("main", 1)]),
            (None, True),
            id="unknown-operator-never-matches",
        ),
        pytest.param(
            [exit_rule("Count", "In", [1]), exit_rule("FailJob", "In", [1])],
            pod(containers=[("main", 1)]),
            ("Count", True),
            id="first-rule-wins",
        ),
    ],
)
def test_decision(rules: list[dict[str, Any]], target: dict[str, Any], expected: tuple[str | None, bool]) -> None:
    decision = match_pod_failure_policy({"rules": rules}, target)
    assert (decision.action, decision.count_failed) == expected


def test_no_policy_counts_every_failure() -> None:
    decision = match_pod_failure_policy(None, pod(containers=[("main", 42)]))
    assert (decision.action, decision.count_failed, decision.message, decision.rule_index) == (None, True, None, None)


def test_failjob_exit_code_message_is_byte_exact() -> None:
    decision = match_pod_failure_policy(
        {"rules": [exit_rule("Count", "In", [7]), exit_rule("FailJob", "In", [42])]},
        pod(containers=[("main", 42)], name="job-x-abc", namespace="team"),
    )
    assert (
        decision.message
        == "Container main for pod team/job-x-abc failed with exit code 42 matching FailJob rule at index 1"
    )
    assert (decision.container_name, decision.exit_code, decision.rule_index) == ("main", 42, 1)


def test_failjob_message_with_unnamed_container_keeps_double_space() -> None:
    decision = match_pod_failure_policy({"rules": [exit_rule("FailJob", "In", [2])]}, pod(containers=[("", 2)]))
    assert decision.message == "Container  for pod ns/p failed with exit code 2 matching FailJob rule at index 0"


def test_failjob_condition_message_names_the_first_matching_pod_condition() -> None:
    rule = {"action": "FailJob", "onPodConditions": [{"type": "ConfigIssue"}, {"type": "DisruptionTarget"}]}
    target = pod(conditions=[("DisruptionTarget", "True"), ("ConfigIssue", "True")])
    decision = match_pod_failure_policy({"rules": [rule]}, target)
    assert decision.message == "Pod ns/p has condition DisruptionTarget matching FailJob rule at index 0"


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-300, 300) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=20,
)
_rule = st.fixed_dictionaries(
    {},
    optional={
        "action": st.sampled_from(["FailJob", "Ignore", "Count", "FailIndex", "", "X"]) | _json,
        "onExitCodes": st.fixed_dictionaries(
            {},
            optional={
                "operator": st.sampled_from(["In", "NotIn"]) | _json,
                "values": st.lists(st.integers()) | _json,
                "containerName": st.text(max_size=4) | _json,
            },
        )
        | _json,
        "onPodConditions": st.lists(st.fixed_dictionaries({}, optional={"type": _json, "status": _json}) | _json)
        | _json,
    },
)


@settings(max_examples=examples(300), deadline=None)
@given(
    rules=st.lists(_rule | _json, max_size=4) | _json,
    status=_json
    | st.fixed_dictionaries(
        {},
        optional={
            "containerStatuses": st.lists(_json),
            "initContainerStatuses": st.lists(_json),
            "conditions": st.lists(_json),
        },
    ),
)
def test_matcher_never_crashes_on_random_input(rules: Any, status: Any) -> None:
    policy = {"rules": rules} if isinstance(rules, list) else None
    decision = match_pod_failure_policy(
        policy, {"metadata": {"name": "p"}, "status": status if isinstance(status, dict) else {}}
    )
    assert decision.count_failed or decision.action == "Ignore"
