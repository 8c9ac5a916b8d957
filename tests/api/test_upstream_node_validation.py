"""Upstream's Node validation tables, through kjobs' API.

pkg/apis/core/validation/validation_test.go (`TestValidateNode`, `TestValidateNodeUpdate`; rows left out:
docs/upstream-core-validation.md). Upstream calls `ValidateNode` / `ValidateNodeUpdate` directly and checks only
whether there were errors; these ports send the row's node to kjobs' in-process API, with the write
kube-apiserver's node strategy would run (create: `ValidateNode`; update: `ValidateNode` + `ValidateNodeUpdate`;
status: `ValidateNodeUpdate`), and check the answer: 422 Invalid with each cause, or the stored object.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.resources import NODES
from tests.api.upstream_validation_support import Cause, causes, run

NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
POD_CIDR_CHANGE = 'Forbidden: node updates may not change podCIDR except from "" to valid'
AVOID = "scheduler.alpha.kubernetes.io/preferAvoidPods"
VALID_AVOID = (
    '{"preferAvoidPods": [{"podSignature": {"podController": {"apiVersion": "v1", "kind": "ReplicationController",'
    ' "name": "foo", "uid": "abcdef123456", "controller": true}}, "reason": "some reason", "message": "some message"}]}'
)
NO_SIGNATURE = '{"preferAvoidPods": [{"reason": "some reason", "message": "some message"}]}'
NOT_CONTROLLER = VALID_AVOID.replace('"controller": true', '"controller": false')
ADDRESSES = {"addresses": [{"type": "ExternalIP", "address": "something"}]}


def node(name: str, spec: Obj | None = None, status: Obj | None = None, **meta: Any) -> Obj:
    body: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, **meta}}
    if spec is not None:
        body["spec"] = copy.deepcopy(spec)
    if status is not None:
        body["status"] = copy.deepcopy(status)
    return body


async def create_errors(client: Any, body: Obj) -> list[Cause]:
    try:
        created = await client.create(NODES, None, body)
    except ApiError as exc:
        return causes(exc)
    assert created.get("spec", {}) == body.get("spec", {})
    return []


# --- TestValidateNode ------------------------------------------------------------------------------------------

CAPACITY = {"capacity": {"cpu": "10", "memory": "0"}, **ADDRESSES}
SUCCESS = [
    node(
        "abc",
        status={
            **ADDRESSES,
            "capacity": {
                "cpu": "10",
                "memory": "10G",
                "my.org/gpu": "10",
                "hugepages-2Mi": "10Gi",
                "hugepages-1Gi": "0",
            },
        },
        labels={"a": "b"},
    ),
    node("abc", status=CAPACITY),
    node(
        "abc",
        status={
            **ADDRESSES,
            "capacity": {
                "cpu": "10",
                "memory": "10G",
                "my.org/gpu": "10",
                "hugepages-2Mi": "10Gi",
                "hugepages-1Gi": "10Gi",
            },
        },
        labels={"a": "b"},
    ),
    node("dedicated-node1", {"taints": [{"key": "GPU", "value": "true", "effect": "NoSchedule"}]}, CAPACITY),
    node("abc", status=CAPACITY, annotations={AVOID: VALID_AVOID}),
    node("abc", {"podCIDRs": ["192.168.0.0/16"]}, CAPACITY),
]


@pytest.mark.parametrize("body", [pytest.param(b, id=f"successCases[{i}]") for i, b in enumerate(SUCCESS)])
def test_validate_node_success(body: Obj) -> None:
    """TestValidateNode's successCases (unnamed upstream: ids are their indexes), each stored as sent."""

    async def scenario(client: Any) -> None:
        assert await create_errors(client, body) == []
        stored = await client.get(NODES, None, body["metadata"]["name"])
        assert stored["status"]["capacity"] == body["status"]["capacity"]

    run(scenario)


def taint(key: str, value: str, effect: str) -> Obj:
    return {"key": key, "value": value, "effect": effect}


ERRORS = [
    pytest.param(
        node("", status={"capacity": {"cpu": "10", "memory": "10G"}}, labels={"a": "b"}),
        [("metadata.name", "FieldValueRequired", "Required value: name or generateName is required")],
        id="zero-length Name",
    ),
    pytest.param(
        node("abc-123", labels={"NoUppercaseOrSpecialCharsLike=Equals": "b"}),
        [
            (
                "metadata.labels",
                "FieldValueInvalid",
                f'Invalid value: "NoUppercaseOrSpecialCharsLike=Equals": {NAME_PART}',
            )
        ],
        id="invalid-labels",
    ),
    pytest.param(
        node("dedicated-node1", {"taints": [taint("", "special-user-1", "NoSchedule")]}),
        [
            ("metadata.taints[0].key", "FieldValueInvalid", 'Invalid value: "": name part must be non-empty'),
            ("metadata.taints[0].key", "FieldValueInvalid", f'Invalid value: "": {NAME_PART}'),
        ],
        id="missing-taint-key",
    ),
    pytest.param(
        node(
            "dedicated-node1",
            {"taints": [taint("NoUppercaseOrSpecialCharsLike=Equals", "special-user-1", "NoSchedule")]},
        ),
        [
            (
                "metadata.taints[0].key",
                "FieldValueInvalid",
                f'Invalid value: "NoUppercaseOrSpecialCharsLike=Equals": {NAME_PART}',
            )
        ],
        id="bad-taint-key",
    ),
    pytest.param(
        node("dedicated-node2", {"taints": [taint("dedicated", "some\\bad\\value", "NoSchedule")]}, CAPACITY),
        [("metadata.taints[0].value", "FieldValueInvalid", f'Invalid value: "some\\\\bad\\\\value": {LABEL_VALUE}')],
        id="bad-taint-value",
    ),
    pytest.param(
        node("dedicated-node3", {"taints": [taint("dedicated", "special-user-3", "")]}, CAPACITY),
        [("metadata.taints[0].effect", "FieldValueRequired", "Required value")],
        id="missing-taint-effect",
    ),
    pytest.param(
        node("dedicated-node3", {"taints": [taint("dedicated", "special-user-3", "NoScheduleNoAdmit")]}, CAPACITY),
        [
            (
                "metadata.taints[0].effect",
                "FieldValueNotSupported",
                'Unsupported value: "NoScheduleNoAdmit": supported values: "NoSchedule", "PreferNoSchedule", '
                '"NoExecute"',
            )
        ],
        id="invalid-taint-effect",
    ),
    pytest.param(
        node(
            "dedicated-node1",
            {
                "taints": [
                    taint("dedicated", "special-user-1", "NoSchedule"),
                    taint("dedicated", "special-user-2", "NoSchedule"),
                ]
            },
        ),
        [
            (
                "metadata.taints[1]",
                "FieldValueDuplicate",
                'Duplicate value: core.Taint{Key:"dedicated", Value:"special-user-2", Effect:"NoSchedule", '
                "TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair",
            )
        ],
        id="duplicated-taints-with-same-key-effect",
    ),
    pytest.param(
        node("abc-123", status={"capacity": {"cpu": "10", "memory": "0"}}, annotations={AVOID: NO_SIGNATURE}),
        [(f"metadata.annotations.{AVOID}[0].PodSignature", "FieldValueRequired", "Required value")],
        id="missing-podSignature",
    ),
    pytest.param(
        node("abc-123", status={"capacity": {"cpu": "10", "memory": "0"}}, annotations={AVOID: NOT_CONTROLLER}),
        [
            (
                f"metadata.annotations.{AVOID}[0].PodSignature.PodController.Controller",
                "FieldValueInvalid",
                "Invalid value: false: must point to a controller",
            )
        ],
        id="invalid-podController",
    ),
    pytest.param(
        node("abc", {"podCIDRs": ["192.168.0.0"]}, CAPACITY),
        [("spec.podCIDRs[0]", "FieldValueInvalid", f'Invalid value: "192.168.0.0": {CIDR}')],
        id="invalid-pod-cidr",
    ),
    pytest.param(
        node("abc", {"podCIDRs": ["10.0.0.1/16", "10.0.0.1/16"]}, CAPACITY),
        [
            (
                "spec.podCIDRs",
                "FieldValueInvalid",
                'Invalid value: []string{"10.0.0.1/16", "10.0.0.1/16"}: may specify no more than one CIDR for each '
                "IP family",
            ),
            ("spec.podCIDRs[1]", "FieldValueDuplicate", 'Duplicate value: "10.0.0.1/16"'),
        ],
        id="duplicate-pod-cidr",
    ),
]


@pytest.mark.parametrize(("body", "want"), ERRORS)
def test_validate_node_errors(body: Obj, want: list[Cause]) -> None:
    """TestValidateNode's errorCases. Upstream's path for a taint is `metadata.taints[i]` (`ValidateNode` hands
    `validateNodeTaints` the metadata's path), and kube-apiserver answers with it."""

    async def scenario(client: Any) -> None:
        assert await create_errors(client, body) == want

    run(scenario)


# --- TestValidateNodeUpdate ------------------------------------------------------------------------------------
# Upstream's rows are unnamed: ids are their indexes. A row whose new node changes `status` is sent to /status
# (the node strategy keeps the stored status on a plain update: pkg/registry/core/node/strategy.go).

UPDATE = [
    (node("foo", labels={"foo": "bar"}), node("foo", labels={"foo": "baz"}), []),
    (node("foo"), node("foo", labels={"foo": "baz"}), []),
    (node("foo", labels={"bar": "foo"}), node("foo", labels={"foo": "baz"}), []),
    (node("foo", {"podCIDRs": []}), node("foo", {"podCIDRs": ["192.168.0.0/16"]}), []),
    (
        node("foo", {"podCIDRs": ["192.123.0.0/16"]}),
        node("foo", {"podCIDRs": ["192.168.0.0/16"]}),
        [("spec.podCIDRs", "FieldValueForbidden", POD_CIDR_CHANGE)],
    ),
    (
        node("foo", status={"capacity": {"cpu": "10000", "memory": "100"}}),
        node("foo", status={"capacity": {"cpu": "100", "memory": "10000"}}),
        [],
    ),
    (
        node("foo", status={"capacity": {"cpu": "10000", "memory": "100"}}, labels={"bar": "foo"}),
        node("foo", status={"capacity": {"cpu": "100", "memory": "10000"}}, labels={"bar": "fooobaz"}),
        [],
    ),
    (
        node("foo", status={"addresses": [{"type": "ExternalIP", "address": "1.2.3.4"}]}, labels={"bar": "foo"}),
        node("foo", status={}, labels={"bar": "fooobaz"}),
        [],
    ),
    (node("foo", labels={"foo": "baz"}), node("foo", labels={"Foo": "baz"}), []),
    (node("foo", {"unschedulable": False}), node("foo", {"unschedulable": True}), []),
    (
        node("foo", {"unschedulable": False}),
        node(
            "foo",
            {"unschedulable": False},
            {"addresses": [{"type": "ExternalIP", "address": "1.1.1.1"}, {"type": "ExternalIP", "address": "1.1.1.1"}]},
        ),
        [
            (
                "status.addresses[1]",
                "FieldValueDuplicate",
                'Duplicate value: core.NodeAddress{Type:"ExternalIP", Address:"1.1.1.1"}',
            )
        ],
    ),
    (
        node("foo", {"unschedulable": False}),
        node(
            "foo",
            {"unschedulable": False},
            {
                "addresses": [
                    {"type": "ExternalIP", "address": "1.1.1.1"},
                    {"type": "InternalIP", "address": "10.1.1.1"},
                ]
            },
        ),
        [],
    ),
    (node("foo"), node("foo", {"unschedulable": False}, annotations={AVOID: VALID_AVOID}), []),
    (
        node("foo"),
        node("foo", annotations={AVOID: NO_SIGNATURE}),
        # ValidateNode and ValidateNodeUpdate both check the annotation: kube-apiserver reports it twice
        [(f"metadata.annotations.{AVOID}[0].PodSignature", "FieldValueRequired", "Required value")] * 2,
    ),
    (
        node("foo"),
        node("foo", annotations={AVOID: NOT_CONTROLLER}),
        [
            (
                f"metadata.annotations.{AVOID}[0].PodSignature.PodController.Controller",
                "FieldValueInvalid",
                "Invalid value: false: must point to a controller",
            )
        ]
        * 2,
    ),
    (
        node("valid-extended-resources"),
        node(
            "valid-extended-resources",
            status={"capacity": {"cpu": "10", "memory": "10G", "example.com/a": "5", "example.com/b": "10"}},
        ),
        [],
    ),
    (
        node("invalid-fractional-extended-capacity"),
        node(
            "invalid-fractional-extended-capacity",
            status={"capacity": {"cpu": "10", "memory": "10G", "example.com/a": "500m"}},
        ),
        [("status.capacity.example.com/a", "FieldValueInvalid", "Invalid value: 500m: must be an integer")],
    ),
    (
        node("invalid-fractional-extended-allocatable"),
        node(
            "invalid-fractional-extended-allocatable",
            status={
                "capacity": {"cpu": "10", "memory": "10G", "example.com/a": "5"},
                "allocatable": {"cpu": "10", "memory": "10G", "example.com/a": "4.5"},
            },
        ),
        [("status.allocatable.example.com/a", "FieldValueInvalid", "Invalid value: 4500m: must be an integer")],
    ),
    (
        node("update-provider-id-when-not-set"),
        node("update-provider-id-when-not-set", {"providerID": "provider:///new"}),
        [],
    ),
    (
        node("update-provider-id-when-set", {"providerID": "provider:///old"}),
        node("update-provider-id-when-set", {"providerID": "provider:///new"}),
        [
            (
                "spec.providerID",
                "FieldValueForbidden",
                'Forbidden: node updates may not change providerID except from "" to valid',
            )
        ],
    ),
    (
        node("pod-cidrs-as-is", {"podCIDRs": ["192.168.0.0/16"]}),
        node("pod-cidrs-as-is", {"podCIDRs": ["192.168.0.0/16"]}),
        [],
    ),
    (
        node("pod-cidrs-as-is-2", {"podCIDRs": ["192.168.0.0/16", "2000::/10"]}),
        node("pod-cidrs-as-is-2", {"podCIDRs": ["192.168.0.0/16", "2000::/10"]}),
        [],
    ),
    # upstream's old node holds three CIDRs, which no create accepts (ValidateNode): the port stores two and
    # writes three, which both functions refuse
    (
        node("pod-cidrs-not-same-length", {"podCIDRs": ["192.168.0.0/16", "2000::/10"]}),
        node("pod-cidrs-not-same-length", {"podCIDRs": ["192.168.0.0/16", "192.167.0.0/16", "2000::/10"]}),
        [
            (
                "spec.podCIDRs",
                "FieldValueInvalid",
                'Invalid value: []string{"192.168.0.0/16", "192.167.0.0/16", "2000::/10"}: may specify no more '
                "than one CIDR for each IP family",
            ),
            ("spec.podCIDRs", "FieldValueForbidden", POD_CIDR_CHANGE),
        ],
    ),
    (
        node("pod-cidrs-not-same", {"podCIDRs": ["192.168.0.0/16", "2000::/10"]}),
        node("pod-cidrs-not-same", {"podCIDRs": ["2000::/10", "192.168.0.0/16"]}),
        [("spec.podCIDRs", "FieldValueForbidden", POD_CIDR_CHANGE)] * 2,
    ),
]
"""Upstream rows 2-13 and 14-25 (row 0, two empty nodes, and row 1, a rename, are tested below)."""


@pytest.mark.parametrize(
    ("old", "new", "want"), [pytest.param(o, n, w, id=f"tests[{i}]") for i, (o, n, w) in enumerate(UPDATE, start=2)]
)
def test_validate_node_update(old: Obj, new: Obj, want: list[Cause]) -> None:
    """TestValidateNodeUpdate: the row's old node is stored, then its new node written over it (a status change
    through /status, which `ValidateNodeUpdate` alone checks)."""

    async def scenario(client: Any) -> None:
        stored = await client.create(NODES, None, copy.deepcopy(old))
        body = copy.deepcopy(new)
        body["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
        status_write = "status" in new
        if status_write:
            body["spec"] = stored.get("spec", {})
        try:
            written = await client.update(NODES, None, body, subresource="status" if status_write else None)
        except ApiError as exc:
            assert causes(exc) == want
            return
        assert want == []
        if status_write:
            assert written["status"] == {**stored.get("status", {}), **new["status"]} or not new["status"]
        else:
            assert written.get("spec", {}) == {**stored.get("spec", {}), **new.get("spec", {})}

    run(scenario)


def test_validate_node_update_same_node() -> None:
    """TestValidateNodeUpdate row 0 (an unchanged node is a valid update) and row 1 (a rename: refused, here by
    the API before validation, as kube-apiserver refuses a body whose name is not the URL's)."""

    async def scenario(client: Any) -> None:
        stored = await client.create(NODES, None, node("foo"))
        assert (await client.update(NODES, None, stored))["metadata"]["name"] == "foo"
        renamed = copy.deepcopy(stored)
        renamed["metadata"]["name"] = "bar"
        with pytest.raises(ApiError) as info:
            await client.update(NODES, None, renamed)
        assert info.value.code in (400, 404, 422)

    run(scenario)


# --- through the API: what `kubectl taint` and `kubectl cordon` send ---------------------------------------------


def test_patch_adding_a_duplicate_taint_is_refused_twice() -> None:
    """A strategic-merge patch adding a second `NoSchedule` taint with the same key (taints merge by key and
    effect, so both stay) is refused with the duplicate reported by `ValidateNode` and again by
    `ValidateNodeUpdate`, as kube-apiserver answers; a cordon patch on the same node is accepted."""

    async def scenario(client: Any) -> None:
        await client.create(NODES, None, node("n1", {"taints": [taint("dedicated", "a", "NoSchedule")]}))
        patch = {"spec": {"taints": [taint("dedicated", "a", "NoSchedule"), taint("dedicated", "b", "NoSchedule")]}}
        with pytest.raises(ApiError) as info:
            await client.patch(NODES, None, "n1", patch, patch_type="merge")
        duplicate = (
            "metadata.taints[1]",
            "FieldValueDuplicate",
            'Duplicate value: core.Taint{Key:"dedicated", Value:"b", Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: '
            "taints must be unique by key and effect pair",
        )
        assert causes(info.value) == [duplicate, duplicate]
        assert info.value.message.startswith('Node "n1" is invalid: ')
        cordoned = await client.patch(NODES, None, "n1", {"spec": {"unschedulable": True}})
        assert cordoned["spec"]["unschedulable"] is True

    run(scenario)


def test_deprecated_config_source_is_not_stored() -> None:
    """The v1.32 node strategy drops the dynamic kubelet config: `spec.configSource` and `status.config` sent on
    create, and a `spec.configSource` added by an update, are not stored."""

    async def scenario(client: Any) -> None:
        source = {"configMap": {"namespace": "kube-system", "name": "cfg", "kubeletConfigKey": "kubelet"}}
        created = await client.create(NODES, None, node("n1", {"configSource": source}, {"config": {"error": "x"}}))
        assert "configSource" not in created.get("spec", {}) and "config" not in created.get("status", {})
        updated = await client.update(NODES, None, dict(created, spec={"configSource": source, "unschedulable": True}))
        assert updated["spec"] == {"unschedulable": True}

    run(scenario)
