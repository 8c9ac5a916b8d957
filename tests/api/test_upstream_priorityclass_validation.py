"""Upstream's PriorityClass validation tables, through kjobs' API.

pkg/apis/scheduling/validation/validation_test.go (`TestValidatePriorityClass`, `TestValidatePriorityClassUpdate`;
docs/upstream-core-validation.md). Upstream checks only whether there were errors (and, on update, their type);
these ports send the row's class to kjobs' in-process API and check the 422's causes or the stored class.
"""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.resources import PRIORITY_CLASSES
from tests.api.upstream_validation_support import Cause, causes, run

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
RESERVED = "Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: "


def pc(name: str, value: int | None, namespace: str = "", **fields: Any) -> Obj:
    body: Obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, **fields}
    if namespace:
        body["metadata"]["namespace"] = namespace
    if value is not None:
        body["value"] = value
    return body


async def create_errors(client: Any, body: Obj) -> list[Cause]:
    try:
        created = await client.create(PRIORITY_CLASSES, None, body)
    except ApiError as exc:
        return causes(exc)
    assert created["value"] == body["value"]
    return []


CREATE = [
    pytest.param(pc("tier1", 100), [], id="no description"),
    pytest.param(
        pc("tier1", 200, globalDefault=False, description="Used for the highest priority pods."),
        [],
        id="with description",
    ),
    pytest.param(
        pc("system-node-critical", 2000001000, globalDefault=False, description="system priority class 0"),
        [],
        id="system node critical",
    ),
    # kube-apiserver clears a cluster-scoped object's namespace before validating it (rest.BeforeCreate), so
    # upstream's "with namespace" error row is a stored class through the API
    pytest.param(pc("tier1", 100, namespace="foo"), [], id="with namespace"),
    pytest.param(
        pc("tier&1", 100),
        [("metadata.name", "FieldValueInvalid", f'Invalid value: "tier&1": {SUBDOMAIN}')],
        id="invalid name",
    ),
    pytest.param(
        pc("system-node-critical", 0, globalDefault=False),
        [
            (
                "metadata.name",
                "FieldValueForbidden",
                RESERVED + "value of system-node-critical PriorityClass must be 2000001000",
            )
        ],
        id="incorrect system class name",
    ),
    pytest.param(
        pc("system-something", 2000001000, globalDefault=False),
        [("metadata.name", "FieldValueForbidden", RESERVED + "system-something is not a known system priority class")],
        id="incorrect system class value",
    ),
]


@pytest.mark.parametrize(("body", "want"), CREATE)
def test_validate_priority_class(body: Obj, want: list[Cause]) -> None:
    """TestValidatePriorityClass (successCases, then errorCases)."""

    async def scenario(client: Any) -> None:
        assert await create_errors(client, body) == want

    run(scenario)


UPDATE = [
    pytest.param(pc("tier1", 100, description="Used for the highest priority pods."), [], id="no change"),
    pytest.param(pc("tier1", 100, description="A different description."), [], id="change description"),
    pytest.param(pc("tier1", 100), [], id="remove description"),
    pytest.param(pc("tier1", 100, globalDefault=True), [], id="change globalDefault"),
    # a namespace on a cluster-scoped update is cleared before validation, as on create (rest.BeforeUpdate)
    pytest.param(pc("tier1", 100, namespace="foo"), [], id="add namespace"),
    pytest.param(
        pc("tier1", None),
        [("value", "FieldValueForbidden", "Forbidden: may not be changed in an update.")],
        id="remove value",
    ),
    pytest.param(
        pc("tier1", 101),
        [("value", "FieldValueForbidden", "Forbidden: may not be changed in an update.")],
        id="change value",
    ),
    pytest.param(
        pc("tier1", 100, preemptionPolicy="Never"),
        [("preemptionPolicy", "FieldValueInvalid", 'Invalid value: "Never": field is immutable')],
        id="change preemptionPolicy",
    ),
]


@pytest.mark.parametrize(("body", "want"), UPDATE)
def test_validate_priority_class_update(body: Obj, want: list[Cause]) -> None:
    """TestValidatePriorityClassUpdate: the old class is tier1, value 100, PreemptLowerPriority. Upstream's
    "change name" row is a PUT to another name's URL here (tested below); a new class without
    `preemptionPolicy` is defaulted to PreemptLowerPriority before the update is validated."""

    async def scenario(client: Any) -> None:
        stored = await client.create(PRIORITY_CLASSES, None, pc("tier1", 100, preemptionPolicy="PreemptLowerPriority"))
        body["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
        try:
            written = await client.update(PRIORITY_CLASSES, None, body)
        except ApiError as exc:
            assert causes(exc) == want
            return
        assert want == []
        assert written["preemptionPolicy"] == "PreemptLowerPriority"
        assert written.get("description") == body.get("description")
        assert "namespace" not in written["metadata"]

    run(scenario)


def test_priority_class_defaults_and_policy_values() -> None:
    """A class without `preemptionPolicy` is stored with PreemptLowerPriority (`SetDefaults_PriorityClass`); a
    user class above 1000000000 and a policy that is none of the two are refused (`ValidatePriorityClass`,
    `ValidatePreemptionPolicy`)."""

    async def scenario(client: Any) -> None:
        created = await client.create(PRIORITY_CLASSES, None, pc("low", -5))
        assert created["preemptionPolicy"] == "PreemptLowerPriority"
        assert await create_errors(client, pc("top", 1_000_000_000)) == []
        assert await create_errors(client, pc("over", 1_000_000_001)) == [
            (
                "value",
                "FieldValueForbidden",
                "Forbidden: maximum allowed value of a user defined priority is 1000000000",
            )
        ]
        assert await create_errors(client, pc("pp", 1, preemptionPolicy="Sometimes")) == [
            (
                "preemptionPolicy",
                "FieldValueNotSupported",
                'Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
            )
        ]
        with pytest.raises(ApiError) as info:
            await client.create(PRIORITY_CLASSES, None, pc("system-cluster-critical", 1))
        assert info.value.message.startswith('PriorityClass.scheduling.k8s.io "system-cluster-critical" is invalid: ')

    run(scenario)


def test_priority_class_rename_is_refused() -> None:
    """TestValidatePriorityClassUpdate's "change name": a PUT of tier2 to tier1's URL is refused."""

    async def scenario(client: Any) -> None:
        stored = await client.create(PRIORITY_CLASSES, None, pc("tier1", 100))
        renamed = dict(stored, metadata=dict(stored["metadata"], name="tier2"))
        with pytest.raises(ApiError) as info:
            await client.update(PRIORITY_CLASSES, None, renamed)
        assert info.value.code in (400, 404, 422)

    run(scenario)
