"""RBAC validation and defaulting (`kjobs.api.rbac`): the rows of Kubernetes' pkg/apis/rbac/validation/
validation_test.go (v1.32), each asserting, as upstream does, that every error has the row's type and field; then
the messages and the defaults a user sees."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api import rbac
from kjobs.api.errors import ErrorType
from kjobs.api.types import Obj

G = rbac.GROUP
NotSupported = ErrorType.FieldValueNotSupported
Required = ErrorType.FieldValueRequired
Invalid = ErrorType.FieldValueInvalid


def _binding(name: str | None, ref: Obj, subjects: list[Obj] | None = None, namespace: str | None = None) -> Obj:
    meta: Obj = {}
    if name:
        meta["name"] = name
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta, "roleRef": ref, "subjects": subjects or []}


def _ref(kind: str, name: str = "valid", group: str = G) -> Obj:
    return {"apiGroup": group, "kind": kind, "name": name}


def _assert_all(errors: list[Any], etype: ErrorType, field: str) -> None:
    assert errors, "expected failure"
    for error in errors:
        assert (error.type, error.field) == (etype, field), str(error)


def test_validate_cluster_role_binding_success() -> None:
    subjects = [
        {"name": "validsaname", "apiGroup": "", "namespace": "foo", "kind": "ServiceAccount"},
        {"name": "valid@username", "apiGroup": G, "kind": "User"},
        {"name": "valid@groupname", "apiGroup": G, "kind": "Group"},
    ]
    assert rbac.validate_cluster_role_binding(_binding("master", _ref("ClusterRole"), subjects)) == []


CLUSTER_ROLE_BINDING_ERRORS = {
    "bad group": (_binding("default", _ref("ClusterRole", group="rbac.GroupName")), NotSupported, "roleRef.apiGroup"),
    "bad kind": (_binding("default", _ref("Type")), NotSupported, "roleRef.kind"),
    "reference role": (_binding("default", _ref("Role")), NotSupported, "roleRef.kind"),
    "zero-length name": (_binding(None, _ref("ClusterRole")), Required, "metadata.name"),
    "bad role": (_binding("default", {"apiGroup": G, "kind": "ClusterRole"}), Required, "roleRef.name"),
    "bad subject kind": (
        _binding("master", _ref("ClusterRole"), [{"name": "subject"}]),
        NotSupported,
        "subjects[0].kind",
    ),
    "bad subject name": (
        _binding(
            "master", _ref("ClusterRole"), [{"namespace": "foo", "name": "subject:bad", "kind": "ServiceAccount"}]
        ),
        Invalid,
        "subjects[0].name",
    ),
    "missing SA namespace": (
        _binding("master", _ref("ClusterRole"), [{"name": "good", "kind": "ServiceAccount"}]),
        Required,
        "subjects[0].namespace",
    ),
    "missing subject name": (
        _binding("master", _ref("ClusterRole"), [{"namespace": "foo", "kind": "ServiceAccount"}]),
        Required,
        "subjects[0].name",
    ),
}


@pytest.mark.parametrize(
    ("obj", "etype", "field"), CLUSTER_ROLE_BINDING_ERRORS.values(), ids=CLUSTER_ROLE_BINDING_ERRORS
)
def test_validate_cluster_role_binding(obj: Obj, etype: ErrorType, field: str) -> None:
    _assert_all(rbac.validate_cluster_role_binding(obj), etype, field)


def test_validate_role_binding_success() -> None:
    subjects = [
        {"name": "validsaname", "apiGroup": "", "kind": "ServiceAccount"},
        {"name": "valid@username", "apiGroup": G, "kind": "User"},
        {"name": "valid@groupname", "apiGroup": G, "kind": "Group"},
    ]
    assert rbac.validate_role_binding(_binding("master", _ref("Role"), subjects, "default")) == []


ROLE_BINDING_ERRORS = {
    "bad group": (
        _binding("default", _ref("ClusterRole", group="rbac.GroupName"), namespace="default"),
        NotSupported,
        "roleRef.apiGroup",
    ),
    "bad kind": (_binding("default", _ref("Type"), namespace="default"), NotSupported, "roleRef.kind"),
    "zero-length namespace": (_binding("default", _ref("Role")), Required, "metadata.namespace"),
    "zero-length name": (_binding(None, _ref("Role"), namespace="default"), Required, "metadata.name"),
    "bad role": (_binding("default", {"apiGroup": G, "kind": "Role"}, namespace="default"), Required, "roleRef.name"),
    "bad subject kind": (
        _binding("master", _ref("Role"), [{"name": "subject"}], "default"),
        NotSupported,
        "subjects[0].kind",
    ),
    "bad subject name": (
        _binding("master", _ref("Role"), [{"name": "subject:bad", "kind": "ServiceAccount"}], "default"),
        Invalid,
        "subjects[0].name",
    ),
    "missing subject name": (
        _binding("master", _ref("Role"), [{"kind": "ServiceAccount"}], "default"),
        Required,
        "subjects[0].name",
    ),
}


@pytest.mark.parametrize(("obj", "etype", "field"), ROLE_BINDING_ERRORS.values(), ids=ROLE_BINDING_ERRORS)
def test_validate_role_binding(obj: Obj, etype: ErrorType, field: str) -> None:
    _assert_all(rbac.validate_role_binding(obj), etype, field)


def _stored_binding(ref_name: str) -> Obj:
    binding = _binding("master", _ref("Role", ref_name), namespace="default")
    binding["metadata"]["resourceVersion"] = "1"
    return binding


def test_validate_role_binding_update() -> None:
    old = _stored_binding("valid")
    assert rbac.validate_role_binding_update(_stored_binding("valid"), old) == []
    errors = rbac.validate_role_binding_update(_stored_binding("changed"), old)  # row "changedRef"
    _assert_all(errors, Invalid, "roleRef")
    assert str(errors[0]) == (
        'roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"Role","Name":"changed"}: '
        "cannot change roleRef"
    )


def _role(rules: list[Obj] | None = None, *, name: str | None = "default", namespace: str | None = "default") -> Obj:
    meta: Obj = {}
    if name:
        meta["name"] = name
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta, "rules": rules or []}


# (role or cluster role, object, expected (type, field) or None)
ROLE_CASES: dict[str, tuple[str, Obj, tuple[ErrorType, str] | None]] = {
    "TestValidateRoleZeroLengthNamespace": ("Role", _role(namespace=None), (Required, "metadata.namespace")),
    "TestValidateRoleZeroLengthName": ("Role", _role(name=None), (Required, "metadata.name")),
    "TestValidateRoleValidRole": ("Role", _role(), None),
    "TestValidateRoleValidRoleNoNamespace": ("ClusterRole", _role(namespace=None), None),
    "TestValidateRoleNonResourceURL": (
        "ClusterRole",
        _role([{"verbs": ["get"], "nonResourceURLs": ["/*"]}], namespace=None),
        None,
    ),
    "TestValidateRoleNamespacedNonResourceURL": (
        "Role",
        _role([{"verbs": ["get"], "nonResourceURLs": ["/*"]}]),
        (Invalid, "rules[0].nonResourceURLs"),
    ),
    "TestValidateRoleNonResourceURLNoVerbs": (
        "ClusterRole",
        _role([{"verbs": [], "nonResourceURLs": ["/*"]}], namespace=None),
        (Required, "rules[0].verbs"),
    ),
    "TestValidateRoleMixedNonResourceAndResource": (
        "Role",
        _role([{"verbs": ["get"], "nonResourceURLs": ["/*"], "apiGroups": ["v1"], "resources": ["pods"]}]),
        (Invalid, "rules[0].nonResourceURLs"),
    ),
    "TestValidateRoleValidResource": (
        "Role",
        _role([{"verbs": ["get"], "apiGroups": ["v1"], "resources": ["pods"]}]),
        None,
    ),
    "TestValidateRoleNoAPIGroup": (
        "Role",
        _role([{"verbs": ["get"], "resources": ["pods"]}]),
        (Required, "rules[0].apiGroups"),
    ),
    "TestValidateRoleNoResources": (
        "Role",
        _role([{"verbs": ["get"], "apiGroups": ["v1"]}]),
        (Required, "rules[0].resources"),
    ),
}


@pytest.mark.parametrize(("kind", "obj", "want"), ROLE_CASES.values(), ids=ROLE_CASES)
def test_validate_role(kind: str, obj: Obj, want: tuple[ErrorType, str] | None) -> None:
    errors = rbac.validate_role(obj) if kind == "Role" else rbac.validate_cluster_role(obj)
    if want is None:
        assert errors == []
    else:
        _assert_all(errors, *want)


def test_messages_are_kubernetes_own() -> None:
    role = _role([{"verbs": [], "nonResourceURLs": ["/healthz"]}, {"verbs": ["get"]}])
    assert [str(e) for e in rbac.validate_role(role)] == [
        "rules[0].verbs: Required value: verbs must contain at least one value",
        'rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs',
        "rules[1].apiGroups: Required value: resource rules must supply at least one api group",
        "rules[1].resources: Required value: resource rules must supply at least one resource",
    ]
    binding = _binding("b", _ref("Role", group="x"), [{"kind": "Robot", "name": "r"}, {"kind": "User", "name": "u"}])
    assert [str(e) for e in rbac.validate_cluster_role_binding(binding)] == [
        'roleRef.apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io"',
        'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
        'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
        'subjects[1].apiGroup: Unsupported value: "": supported values: "rbac.authorization.k8s.io"',
    ]


def test_rbac_names_are_path_segments_only() -> None:
    assert rbac.validate_cluster_role(_role(name="system:basic-user", namespace=None)) == []
    assert rbac.validate_cluster_role(_role(name="Mixed_Case", namespace=None)) == []
    assert [str(e) for e in rbac.validate_cluster_role(_role(name="a/b%", namespace=None))] == [
        "metadata.name: Invalid value: \"a/b%\": may not contain '/'",
        "metadata.name: Invalid value: \"a/b%\": may not contain '%'",
    ]
    assert [str(e) for e in rbac.validate_cluster_role(_role(name="..", namespace=None))] == [
        "metadata.name: Invalid value: \"..\": may not be '..'"
    ]


def test_aggregation_rule_needs_valid_selectors() -> None:
    role = _role(namespace=None)
    role["aggregationRule"] = {}
    assert [str(e) for e in rbac.validate_cluster_role(role)] == [
        "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if "
        "aggregationRule is non-nil"
    ]
    role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/aggregate-to-x": "true"}}]}
    assert rbac.validate_cluster_role(role) == []
    role["aggregationRule"] = {"clusterRoleSelectors": [{"matchExpressions": [{"key": "a", "operator": "In"}]}]}
    assert [str(e) for e in rbac.validate_cluster_role(role)] == [
        "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values: Required value: must be specified "
        "when `operator` is 'In' or 'NotIn'",
        "aggregationRule.clusterRoleSelectors[0]: Invalid value: null: invalid label selector.",
    ]


def test_an_update_keeps_an_already_invalid_selector_value() -> None:
    role = _role(namespace=None)
    role["aggregationRule"] = {
        "clusterRoleSelectors": [{"matchExpressions": [{"key": "a", "operator": "In", "values": ["-bad-"]}]}]
    }
    fields = [e.field for e in rbac.validate_cluster_role(role)]
    assert "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values[0]" in fields
    updated = [e.field for e in rbac.validate_cluster_role_update(role, role)]
    assert "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values[0]" not in updated


def test_defaults_fill_the_api_groups_of_the_role_ref_and_of_users_and_groups() -> None:
    binding = _binding(
        "b",
        {"kind": "ClusterRole", "name": "view"},
        [{"kind": "User", "name": "jane"}, {"kind": "Group", "name": "devs"}, {"kind": "ServiceAccount", "name": "sa"}],
    )
    rbac.default_binding_in_place(binding)
    assert binding["roleRef"]["apiGroup"] == G
    assert [s.get("apiGroup") for s in binding["subjects"]] == [G, G, None]
