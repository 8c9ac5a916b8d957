"""Upstream's PodDisruptionBudget validation and registry-strategy tables, through kjobs' API.

pkg/apis/policy/validation/validation_test.go and pkg/registry/policy/poddisruptionbudget/strategy_test.go
(versions and rows left out: docs/upstream-pdb.md). Upstream calls the validation functions and strategy
methods directly and checks only whether there were errors; these ports send the row's budget to kjobs'
in-process API (create, update, status update) and check the answer a client gets: 422 Invalid with each
cause's field, reason and message, or the stored object.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.resources import PDBS
from kjobs.clock import FakeClock
from tests.support import local_api

PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)
NEGATIVE = "must be greater than or equal to 0"


def pdb(spec: Obj, name: str = "abc") -> Obj:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": copy.deepcopy(spec),
    }


def run(scenario: Callable[[Any], Awaitable[None]]) -> None:
    async def main() -> None:
        await scenario(await local_api(FakeClock()))

    asyncio.run(main())


def causes(exc: ApiError) -> list[tuple[str, str, str]]:
    assert exc.code == 422 and exc.reason == "Invalid", exc.message
    return [(c["field"], c["reason"], c["message"]) for c in (exc.details or {}).get("causes") or []]


async def create_errors(client: Any, spec: Obj) -> list[tuple[str, str, str]]:
    """The causes of a refused create, or [] after checking the budget was stored as sent."""
    try:
        created = await client.create(PDBS, "default", pdb(spec))
    except ApiError as exc:
        return causes(exc)
    assert created["spec"] == spec
    return []


# --- pkg/apis/policy/validation/validation_test.go ---------------------------------------------------------


def test_validate_pod_disruption_budget_spec() -> None:
    """TestValidatePodDisruptionBudgetSpec: minAvailable 0% with maxUnavailable 10%."""

    async def scenario(client: Any) -> None:
        assert await create_errors(client, {"minAvailable": "0%", "maxUnavailable": "10%"}) == [
            (
                "spec",
                "FieldValueInvalid",
                'Invalid value: {"MinAvailable":"0%","Selector":null,"MaxUnavailable":"10%",'
                '"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set',
            )
        ]

    run(scenario)


MIN_AVAILABLE = [
    *(pytest.param(v, [], id=f"success: {v!r}") for v in ("0%", "1%", "100%", 0, 1, 100)),
    pytest.param("1.1%", [("FieldValueInvalid", f'Invalid value: "1.1%": {PERCENT_MSG}')], id="failure: '1.1%'"),
    pytest.param("nope", [("FieldValueInvalid", f'Invalid value: "nope": {PERCENT_MSG}')], id="failure: 'nope'"),
    pytest.param("-1%", [("FieldValueInvalid", f'Invalid value: "-1%": {PERCENT_MSG}')], id="failure: '-1%'"),
    pytest.param(
        "101%", [("FieldValueInvalid", 'Invalid value: "101%": must not be greater than 100%')], id="failure: '101%'"
    ),
    pytest.param(-1, [("FieldValueInvalid", f"Invalid value: -1: {NEGATIVE}")], id="failure: -1"),
]


@pytest.mark.parametrize(("value", "want"), MIN_AVAILABLE)
def test_validate_min_available_pod_disruption_budget_spec(value: Any, want: list[tuple[str, str]]) -> None:
    """TestValidateMinAvailablePodDisruptionBudgetSpec (its successCases and failureCases); maxUnavailable is
    checked by the same two functions, so each row runs for it too."""

    async def scenario(client: Any) -> None:
        for key in ("minAvailable", "maxUnavailable"):
            got = await create_errors(client, {key: value})
            assert got == [(f"spec.{key}", reason, message) for reason, message in want]
            if not want:
                await client.delete(PDBS, "default", "abc")

    run(scenario)


def test_validate_min_available_pod_and_max_unavailable_disruption_budget_spec() -> None:
    """TestValidateMinAvailablePodAndMaxUnavailableDisruptionBudgetSpec: 10% and 1 together."""

    async def scenario(client: Any) -> None:
        assert await create_errors(client, {"minAvailable": "10%", "maxUnavailable": 1}) == [
            (
                "spec",
                "FieldValueInvalid",
                'Invalid value: {"MinAvailable":"10%","Selector":null,"MaxUnavailable":1,'
                '"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set',
            )
        ]

    run(scenario)


UNSUPPORTED = 'supported values: "AlwaysAllow", "IfHealthyBudget"'
UNHEALTHY_POLICY = [
    pytest.param(None, [], id="valid nil UnhealthyPodEvictionPolicy"),
    pytest.param("AlwaysAllow", [], id="valid UnhealthyPodEvictionPolicy"),
    pytest.param("", [f'Unsupported value: "": {UNSUPPORTED}'], id="empty UnhealthyPodEvictionPolicy"),
    pytest.param("Invalid", [f'Unsupported value: "Invalid": {UNSUPPORTED}'], id="invalid UnhealthyPodEvictionPolicy"),
]


@pytest.mark.parametrize(("policy", "want"), UNHEALTHY_POLICY)
def test_validate_unhealthy_pod_eviction_policy_disruption_budget_spec(policy: str | None, want: list[str]) -> None:
    """TestValidateUnhealthyPodEvictionPolicyDisruptionBudgetSpec."""

    async def scenario(client: Any) -> None:
        spec: Obj = {"minAvailable": "10%"}
        if policy is not None:
            spec["unhealthyPodEvictionPolicy"] = policy
        got = await create_errors(client, spec)
        assert got == [("spec.unhealthyPodEvictionPolicy", "FieldValueNotSupported", m) for m in want]

    run(scenario)


CONDITION_VALID: Obj = {
    "type": "DisruptionAllowed",
    "status": "True",
    "lastTransitionTime": "2016-05-19T09:55:00Z",
    "reason": "SufficientPods",
    "message": "message",
    "observedGeneration": 3,
}
STATUS_ROWS = [
    pytest.param({"disruptionsAllowed": 10}, [], id="apiVersion: policy/v1, DisruptionsAllowed: 10"),
    pytest.param({"currentHealthy": 5}, [], id="apiVersion: policy/v1, CurrentHealthy: 5"),
    pytest.param({"desiredHealthy": 3}, [], id="apiVersion: policy/v1, DesiredHealthy: 3"),
    pytest.param({"expectedPods": 2}, [], id="apiVersion: policy/v1, ExpectedPods: 2"),
    *(
        pytest.param(
            {key: value},
            [(f"status.{key}", "FieldValueInvalid", f"Invalid value: {value}: {NEGATIVE}")],
            id=f"apiVersion: policy/v1, {name}: {value}",
        )
        for key, name, value in (
            ("disruptionsAllowed", "DisruptionsAllowed", -10),
            ("currentHealthy", "CurrentHealthy", -5),
            ("desiredHealthy", "DesiredHealthy", -3),
            ("expectedPods", "ExpectedPods", -2),
        )
    ),
    pytest.param({"conditions": [CONDITION_VALID]}, [], id="apiVersion: policy/v1, Conditions valid"),
    pytest.param(
        {
            "conditions": [
                {"type": "DisruptionAllowed", "status": "True"},
                {"type": "DisruptionAllowed", "status": "False"},
            ]
        },
        [
            ("status.conditions[0].lastTransitionTime", "FieldValueRequired", "Required value: must be set"),
            ("status.conditions[0].reason", "FieldValueRequired", "Required value: must be set"),
            ("status.conditions[1].type", "FieldValueDuplicate", 'Duplicate value: "DisruptionAllowed"'),
            ("status.conditions[1].lastTransitionTime", "FieldValueRequired", "Required value: must be set"),
            ("status.conditions[1].reason", "FieldValueRequired", "Required value: must be set"),
        ],
        id="apiVersion: policy/v1, Conditions not valid",
    ),
]


@pytest.mark.parametrize(("status", "want"), STATUS_ROWS)
def test_validate_pod_disruption_budget_status(status: Obj, want: list[tuple[str, str, str]]) -> None:
    """TestValidatePodDisruptionBudgetStatus (its policy/v1 half): the row's status written to /status."""

    async def scenario(client: Any) -> None:
        stored = await client.create(PDBS, "default", pdb({"minAvailable": 1}))
        try:
            written = await client.update(PDBS, "default", dict(stored, status=status), subresource="status")
        except ApiError as exc:
            assert causes(exc) == want
            return
        assert want == []
        assert {k: written["status"].get(k) for k in status} == status

    run(scenario)


# --- pkg/registry/policy/poddisruptionbudget/strategy_test.go ----------------------------------------------

VALID: Obj = {"minAvailable": 3, "selector": {"matchLabels": {"a": "b"}}}


def test_pod_disruption_budget_strategy() -> None:
    """TestPodDisruptionBudgetStrategy "... feature gate enabled" (testPodDisruptionBudgetStrategy): create clears
    status and sets generation 1; an update may not set status; the selector, minAvailable, and minAvailable
    for maxUnavailable may all change, each change a new generation."""

    async def scenario(client: Any) -> None:
        body = pdb(VALID)
        body["status"] = {"disruptionsAllowed": 5}
        created = await client.create(PDBS, "default", body)
        # the cleared status as Go writes it: the four counters have no omitempty (docs/zerovalues43.md)
        cleared = {"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0}
        assert (created["status"], created["metadata"]["generation"]) == (cleared, 1)
        new = dict(
            created, status={"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 3, "expectedPods": 3}
        )
        same = await client.update(PDBS, "default", new)  # Nothing in Spec changes: OK
        assert (same["status"], same["metadata"]["generation"]) == (cleared, 1)
        changes: list[Obj] = [
            {"minAvailable": 3, "selector": {"matchLabels": {"a": "bar"}}},  # Changing the selector?  OK
            {"minAvailable": "28%", "selector": {"matchLabels": {"a": "b"}}},  # Changing MinAvailable?  OK
            {"maxUnavailable": "28%", "selector": {"matchLabels": {"a": "b"}}},  # MinAvailable to MaxUnavailable
        ]
        current = same
        for generation, spec in enumerate(changes, start=2):
            current = await client.update(PDBS, "default", dict(current, spec=spec))
            assert (current["spec"], current["metadata"]["generation"]) == (spec, generation)

    run(scenario)


def ptr(policy: str | None) -> Obj:
    return {} if policy is None else {"unhealthyPodEvictionPolicy": policy}


STRATEGY_POLICY = [
    pytest.param(None, None, None, None, None, id="PodDisruptionBudget strategy with FeatureGate enabled"),
    pytest.param(
        "AlwaysAllow",
        "AlwaysAllow",
        "IfHealthyBudget",
        "IfHealthyBudget",
        None,
        id="PodDisruptionBudget strategy with FeatureGate enabled should respect unhealthyPodEvictionPolicy",
    ),
    pytest.param(
        "Invalid",
        None,
        None,
        None,
        "create",
        id="PodDisruptionBudget strategy with FeatureGate enabled should fail invalid unhealthyPodEvictionPolicy",
    ),
    pytest.param(
        None,
        None,
        "Invalid",
        None,
        "update",
        id="PodDisruptionBudget strategy with FeatureGate enabled should fail invalid unhealthyPodEvictionPolicy "
        "when updated",
    ),
]


@pytest.mark.parametrize(("policy", "expected", "update", "expected_update", "fails"), STRATEGY_POLICY)
def test_pod_disruption_budget_strategy_with_unhealthy_pod_eviction_policy(
    policy: str | None, expected: str | None, update: str | None, expected_update: str | None, fails: str | None
) -> None:
    """TestPodDisruptionBudgetStrategy's healthyPolicyTests (testPodDisruptionBudgetStrategyWithUnhealthy...)."""

    async def scenario(client: Any) -> None:
        refused = [
            (
                "spec.unhealthyPodEvictionPolicy",
                "FieldValueNotSupported",
                f'Unsupported value: "Invalid": {UNSUPPORTED}',
            )
        ]
        try:
            created = await client.create(PDBS, "default", pdb({**VALID, **ptr(policy)}))
        except ApiError as exc:
            assert fails == "create" and causes(exc) == refused
            return
        assert fails != "create"
        assert created["spec"].get("unhealthyPodEvictionPolicy") == expected
        spec = dict(created["spec"])
        if update is not None:
            spec["unhealthyPodEvictionPolicy"] = update
        try:
            updated = await client.update(PDBS, "default", dict(created, spec=spec))
        except ApiError as exc:
            assert fails == "update" and causes(exc) == refused
            return
        assert fails is None
        assert updated["spec"].get("unhealthyPodEvictionPolicy") == expected_update

    run(scenario)


def test_pod_disruption_budget_status_strategy() -> None:
    """TestPodDisruptionBudgetStatusStrategy: a status update changes currentHealthy and leaves the spec."""

    async def scenario(client: Any) -> None:
        created = await client.create(PDBS, "default", pdb(VALID))
        old = await client.update(
            PDBS,
            "default",
            dict(
                created, status={"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 3, "expectedPods": 3}
            ),
            subresource="status",
        )
        new = dict(
            old,
            spec={**VALID, "minAvailable": 2},
            status={"disruptionsAllowed": 0, "currentHealthy": 2, "desiredHealthy": 3, "expectedPods": 3},
        )
        written = await client.update(PDBS, "default", new, subresource="status")
        assert written["status"]["currentHealthy"] == 2
        assert written["spec"]["minAvailable"] == 3
        assert written["metadata"]["generation"] == 1

    run(scenario)


def test_pod_disruption_budget_status_validation_by_api_version() -> None:
    """TestPodDisruptionBudgetStatusValidationByApiVersion "policy/v1 should do update validation"."""

    async def scenario(client: Any) -> None:
        created = await client.create(
            PDBS, "default", pdb({"maxUnavailable": 2, "selector": {"matchLabels": {"a": "b"}}})
        )
        old = await client.update(
            PDBS, "default", dict(created, status={"disruptionsAllowed": 1}), subresource="status"
        )
        with pytest.raises(ApiError) as caught:
            await client.update(
                PDBS,
                "default",
                dict(
                    old,
                    spec={"minAvailable": 3, "selector": {"matchLabels": {"a": "b"}}},
                    status={"disruptionsAllowed": -1},
                ),
                subresource="status",
            )
        assert causes(caught.value) == [
            ("status.disruptionsAllowed", "FieldValueInvalid", f"Invalid value: -1: {NEGATIVE}")
        ]

    run(scenario)


DROP_DISABLED = [
    pytest.param(None, "IfHealthyBudget", id="enabled preserve unhealthyPodEvictionPolicy"),
    pytest.param({}, "IfHealthyBudget", id="enabled allows updating unhealthyPodEvictionPolicy"),
    pytest.param(
        "IfHealthyBudget",
        "IfHealthyBudget",
        id="enabled preserve unhealthyPodEvictionPolicy when both old and new have it",
    ),
    pytest.param("IfHealthyBudget", "AlwaysAllow", id="enabled updates unhealthyPodEvictionPolicy"),
]


@pytest.mark.parametrize(("old", "new"), DROP_DISABLED)
def test_drop_disabled_fields(old: str | dict[str, Any] | None, new: str) -> None:
    """TestDropDisabledFields (gate on): the policy is kept on create (no old spec) and on update."""

    async def scenario(client: Any) -> None:
        if old is None:
            created = await client.create(PDBS, "default", pdb({**VALID, **ptr(new)}))
            assert created["spec"]["unhealthyPodEvictionPolicy"] == new
            return
        created = await client.create(PDBS, "default", pdb({**VALID, **(ptr(old) if isinstance(old, str) else {})}))
        updated = await client.update(PDBS, "default", dict(created, spec={**created["spec"], **ptr(new)}))
        assert updated["spec"]["unhealthyPodEvictionPolicy"] == new

    run(scenario)


def test_update_keeps_allowing_invalid_label_values_an_old_selector_has() -> None:
    """strategy.go `ValidateUpdate`: a selector value that is no label value is refused on create, and allowed on
    update only while the stored selector fails validation (`hasInvalidLabelValueInLabelSelector`)."""

    async def scenario(client: Any) -> None:
        bad = {"matchExpressions": [{"key": "a", "operator": "In", "values": ["-bad-"]}]}
        errs = await create_errors(client, {"minAvailable": 1, "selector": bad})
        assert [(f, r) for f, r, _ in errs] == [("spec.selector.matchExpressions[0].values[0]", "FieldValueInvalid")]
        created = await client.create(
            PDBS, "default", pdb({"minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}})
        )
        with pytest.raises(ApiError) as caught:
            await client.update(PDBS, "default", dict(created, spec={"minAvailable": 1, "selector": bad}))
        assert causes(caught.value)[0][0] == "spec.selector.matchExpressions[0].values[0]"

    run(scenario)


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("My_Budget", [], id="any path segment"),
        pytest.param("..", [("metadata.name", "FieldValueInvalid", "Invalid value: \"..\": may not be '..'")], id=".."),
        pytest.param(
            "a%b", [("metadata.name", "FieldValueInvalid", "Invalid value: \"a%b\": may not contain '%'")], id="%"
        ),
    ],
)
def test_budget_names_are_path_segment_names(name: str, want: list[tuple[str, str, str]]) -> None:
    """rest.BeforeCreate: a budget's name need only be a path segment (`ValidatePodDisruptionBudget` checks no
    metadata), and the spec's errors are answered before the metadata is looked at."""

    async def scenario(client: Any) -> None:
        try:
            created = await client.create(PDBS, "default", pdb({"minAvailable": 1}, name=name))
        except ApiError as exc:
            assert causes(exc) == want
        else:
            assert (
                want == []
                and (await client.get(PDBS, "default", name))["metadata"]["uid"] == created["metadata"]["uid"]
            )
        with pytest.raises(ApiError) as caught:
            await client.create(PDBS, "default", pdb({"minAvailable": -1}, name="Bad_Name"))
        assert [c[0] for c in causes(caught.value)] == ["spec.minAvailable"]

    run(scenario)
