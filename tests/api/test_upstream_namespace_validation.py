"""Upstream's Namespace validation tables, through kjobs' API.

pkg/apis/core/validation/validation_test.go (`TestValidateNamespace`, `TestValidateNamespaceUpdate`,
`TestValidateNamespaceStatusUpdate`; `TestValidateNamespaceFinalizeUpdate` is left out, kjobs serving no
`/finalize`: docs/upstream-core-validation.md). Upstream counts errors; these ports send the row's namespace to
kjobs' in-process API and check the 422's causes or the stored namespace.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.resources import NAMESPACES
from tests.api.upstream_validation_support import Cause, causes, run

NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
NOT_STANDARD = "name is neither a standard finalizer name nor is it fully qualified"
ACTIVE_ONLY = "may only be 'Active' if `deletionTimestamp` is empty"


def ns(name: str, spec: Obj | None = None, status: Obj | None = None, **meta: Any) -> Obj:
    body: Obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, **meta}}
    if spec is not None:
        body["spec"] = spec
    if status is not None:
        body["status"] = status
    return body


CREATE = [
    pytest.param(ns("abc", labels={"a": "b"}), [], id="successCases[0]"),
    pytest.param(
        ns("abc-123", {"finalizers": ["example.com/something", "example.com/other"]}), [], id="successCases[1]"
    ),
    pytest.param(
        ns(""),
        [("metadata.name", "FieldValueRequired", "Required value: name or generateName is required")],
        id="zero-length name",
    ),
    # a cluster-scoped object's namespace is cleared before validation (rest.BeforeCreate): stored
    pytest.param(ns("abc-123", namespace="makesnosense"), [], id="defined-namespace"),
    pytest.param(
        ns("abc", labels={"NoUppercaseOrSpecialCharsLike=Equals": "b"}),
        [
            (
                "metadata.labels",
                "FieldValueInvalid",
                f'Invalid value: "NoUppercaseOrSpecialCharsLike=Equals": {NAME_PART}',
            )
        ],
        id="invalid-labels",
    ),
]


@pytest.mark.parametrize(("body", "want"), CREATE)
def test_validate_namespace(body: Obj, want: list[Cause]) -> None:
    """TestValidateNamespace (successCases, then errorCases). A stored namespace gets the `kubernetes`
    finalizer after the row's own."""

    async def scenario(client: Any) -> None:
        try:
            created = await client.create(NAMESPACES, None, body)
        except ApiError as exc:
            assert causes(exc) == want
            return
        assert want == []
        assert created["spec"]["finalizers"] == [*body.get("spec", {}).get("finalizers", []), "kubernetes"]
        assert "namespace" not in created["metadata"]

    run(scenario)


def test_namespace_name_and_finalizers_through_the_api() -> None:
    """What kjobs stored before and refuses now: a dotted name (`ValidateNamespaceName` is a DNS-1123 label,
    not a subdomain) and spec finalizers that are neither standard nor qualified (TestValidateNamespaceFinalize
    Update's "Foo" and "" rows, which `ValidateNamespace` applies on create, at `spec.finalizers` without an
    index as upstream reports them)."""

    async def scenario(client: Any) -> None:
        with pytest.raises(ApiError) as info:
            await client.create(NAMESPACES, None, ns("team.a"))
        assert causes(info.value) == [
            ("metadata.name", "FieldValueInvalid", 'Invalid value: "team.a": must not contain dots')
        ]
        with pytest.raises(ApiError) as info:
            await client.create(NAMESPACES, None, ns("fin", {"finalizers": ["Foo", ""]}))
        assert causes(info.value) == [
            ("spec.finalizers", "FieldValueInvalid", f'Invalid value: "Foo": {NOT_STANDARD}'),
            ("spec.finalizers", "FieldValueInvalid", 'Invalid value: "": name part must be non-empty'),
            ("spec.finalizers", "FieldValueInvalid", f'Invalid value: "": {NAME_PART}'),
            ("spec.finalizers", "FieldValueInvalid", f'Invalid value: "": {NOT_STANDARD}'),
        ]
        assert info.value.message.startswith('Namespace "fin" is invalid: ')

    run(scenario)


UPDATE = [
    pytest.param(ns("foo0"), ns("foo0"), id="tests[0]"),
    pytest.param(ns("foo2", labels={"foo": "bar"}), ns("foo2", labels={"foo": "baz"}), id="tests[2]"),
    pytest.param(ns("foo3"), ns("foo3", labels={"foo": "baz"}), id="tests[3]"),
    pytest.param(ns("foo4", labels={"bar": "foo"}), ns("foo4", labels={"foo": "baz"}), id="tests[4]"),
    pytest.param(ns("foo5", labels={"foo": "baz"}), ns("foo5", labels={"Foo": "baz"}), id="tests[5]"),
    pytest.param(
        ns("foo6", labels={"foo": "baz"}),
        ns("foo6", {"finalizers": ["kubernetes"]}, {"phase": "Terminating"}, labels={"Foo": "baz"}),
        id="tests[6]",
    ),
]


@pytest.mark.parametrize(("old", "new"), UPDATE)
def test_validate_namespace_update(old: Obj, new: Obj) -> None:
    """TestValidateNamespaceUpdate's valid rows (all but row 1, a rename, tested below): the labels are
    written; spec and status stay the stored ones (the namespace strategy's PrepareForUpdate)."""

    async def scenario(client: Any) -> None:
        stored = await client.create(NAMESPACES, None, old)
        body = copy.deepcopy(new)
        body["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
        written = await client.update(NAMESPACES, None, body)
        assert written["metadata"]["labels"] == {
            **new["metadata"].get("labels", {}),
            "kubernetes.io/metadata.name": new["metadata"]["name"],
        }
        assert written["spec"] == stored["spec"] and written["status"] == stored["status"]

    run(scenario)


def test_validate_namespace_update_rename() -> None:
    """TestValidateNamespaceUpdate row 1: foo1 renamed bar1 is refused (here before validation: no bar1)."""

    async def scenario(client: Any) -> None:
        stored = await client.create(NAMESPACES, None, ns("foo1"))
        renamed = copy.deepcopy(stored)
        renamed["metadata"]["name"] = "bar1"
        with pytest.raises(ApiError) as info:
            await client.update(NAMESPACES, None, renamed)
        assert info.value.code in (400, 404, 422)

    run(scenario)


def test_validate_namespace_status_update() -> None:
    """TestValidateNamespaceStatusUpdate: Active is a valid phase while not deleted (row 0); Terminating is not
    (row 3), nor is it with a deletionTimestamp the status write tries to set (row 1: the write cannot set it,
    the stored metadata is kept); once deleted (a finalizer holding it), Terminating is written (row 2) and
    Active refused."""

    async def scenario(client: Any) -> None:
        stored = await client.create(NAMESPACES, None, ns("foo", finalizers=["example.com/hold"]))
        written = await client.update(NAMESPACES, None, dict(stored, status={"phase": "Active"}), subresource="status")
        assert written["status"] == {"phase": "Active"}
        for body in (
            dict(written, status={"phase": "Terminating"}),
            dict(
                written,
                metadata=dict(written["metadata"], deletionTimestamp="2024-01-01T00:00:00Z"),
                status={"phase": "Terminating"},
            ),
        ):
            with pytest.raises(ApiError) as info:
                await client.update(NAMESPACES, None, body, subresource="status")
            assert causes(info.value) == [
                ("status.Phase", "FieldValueInvalid", f'Invalid value: "Terminating": {ACTIVE_ONLY}')
            ]
        await client.delete(NAMESPACES, None, "foo")
        deleting = await client.get(NAMESPACES, None, "foo")
        assert deleting["metadata"]["deletionTimestamp"]
        written = await client.update(
            NAMESPACES, None, dict(deleting, status={"phase": "Terminating"}), subresource="status"
        )
        assert written["status"] == {"phase": "Terminating"}
        with pytest.raises(ApiError) as info:
            await client.update(NAMESPACES, None, dict(written, status={"phase": "Active"}), subresource="status")
        assert causes(info.value) == [
            (
                "status.Phase",
                "FieldValueInvalid",
                "Invalid value: \"Active\": may only be 'Terminating' if `deletionTimestamp` is not empty",
            )
        ]

    run(scenario)


def test_status_write_without_a_phase_stores_active() -> None:
    """`SetDefaults_NamespaceStatus` runs on every decoded Namespace: a status write of `{}` (or none) stores
    `phase: Active`, as `kubectl get ns -o yaml` then shows on a cluster; once deleting, the defaulted Active is
    refused like an explicit one."""

    async def scenario(client: Any) -> None:
        stored = await client.create(NAMESPACES, None, ns("bar", finalizers=["example.com/hold"]))
        written = await client.update(NAMESPACES, None, dict(stored, status={}), subresource="status")
        assert written["status"] == {"phase": "Active"}
        without = {k: v for k, v in written.items() if k != "status"}
        written = await client.update(NAMESPACES, None, without, subresource="status")
        assert (await client.get(NAMESPACES, None, "bar"))["status"] == {"phase": "Active"}
        await client.delete(NAMESPACES, None, "bar")
        deleting = await client.get(NAMESPACES, None, "bar")
        with pytest.raises(ApiError) as info:
            await client.update(NAMESPACES, None, dict(deleting, status={}), subresource="status")
        assert causes(info.value) == [
            (
                "status.Phase",
                "FieldValueInvalid",
                "Invalid value: \"Active\": may only be 'Terminating' if `deletionTimestamp` is not empty",
            )
        ]

    run(scenario)
