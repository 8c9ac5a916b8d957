"""SubjectAccessReview and LocalSubjectAccessReview (`kjobs.server.reviews`): what another user may do.

The validation rows are pkg/apis/authorization/validation/validation_test.go's (`TestValidateSARSpec`,
`TestValidateSelfSAR`, `TestValidateLocalSAR`; the selector rows as of AuthorizeWithSelectors, 1.31+), each id
the upstream row's name; as upstream, the first error must contain the row's message. The rest is through HTTPS.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from kjobs.api.errors import ApiError
from kjobs.server.authz import UserInfo
from kjobs.server.reviews import review
from tests.server.rbac_support import bootstrap_rbac

SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
LSAR = "/apis/authorization.k8s.io/v1/namespaces/{}/localsubjectaccessreviews"
SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def _first_error(kind: str, body: dict[str, Any], namespace: str = "") -> str:
    """`errs[0].Error()` of the review's validation, or "" when it passes."""
    try:
        review(kind, body, _NOBODY, "2025-01-01T00:00:00Z", bootstrap_rbac(), namespace)
    except ApiError as err:
        assert err.code == 422 and err.reason == "Invalid", err.message
        cause = (err.details or {})["causes"][0]
        return f"{cause['field']}: {cause['message']}"
    return ""


def _field(**requirement: Any) -> dict[str, Any]:
    return {"fieldSelector": {"requirements": [requirement]}}


def _label(**requirement: Any) -> dict[str, Any]:
    return {"labelSelector": {"requirements": [requirement]}}


_NOBODY = UserInfo("nobody", ())

SAR_SUCCESS = [
    {"resourceAttributes": {}, "user": "me"},
    {"nonResourceAttributes": {}, "groups": ["my-group"]},
    {"user": "me", "resourceAttributes": {"fieldSelector": {"rawSelector": "***foo"}}},
    {"user": "me", "resourceAttributes": {"labelSelector": {"rawSelector": "***foo"}}},
    {"user": "me", "resourceAttributes": _field(key="k", operator="fake", values=["val"])},
    {"user": "me", "resourceAttributes": _label(key="k", operator="fake", values=["val"])},
]

VALUES_REQUIRED = "values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
VALUES_FORBIDDEN = "values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
FS = "spec.resourceAttributes.fieldSelector"
LS = "spec.resourceAttributes.labelSelector"
SAR_ERRORS = [
    ("neither request", {"user": "me"}, "exactly one of nonResourceAttributes or resourceAttributes must be specified"),
    # 1.32's row (later releases reword the pair as "exactly one of ...")
    (
        "both requests",
        {"resourceAttributes": {}, "nonResourceAttributes": {}, "user": "me"},
        "cannot be specified in combination with resourceAttributes",
    ),
    (
        "no subject",
        {"resourceAttributes": {}},
        'spec.user: Invalid value: "": at least one of user or group must be specified',
    ),
    (
        "resource attributes: field selector specify both",
        {"user": "me", "resourceAttributes": {"fieldSelector": {"rawSelector": "foo", "requirements": [{}]}}},
        f'{FS}.rawSelector: Invalid value: "foo": may not specified at the same time as requirements',
    ),
    (
        "resource attributes: field selector specify neither",
        {"user": "me", "resourceAttributes": {"fieldSelector": {}}},
        f"{FS}.requirements: Required value: when {FS} is specified, requirements or rawSelector is required",
    ),
    (
        "resource attributes: field selector no key",
        {"user": "me", "resourceAttributes": _field(key="")},
        f"{FS}.requirements[0].key: Required value: must be specified",
    ),
    (
        "resource attributes: field selector no value for in",
        {"user": "me", "resourceAttributes": _field(key="k", operator="In", values=[])},
        f"{FS}.requirements[0].{VALUES_REQUIRED}",
    ),
    (
        "resource attributes: field selector no value for not in",
        {"user": "me", "resourceAttributes": _field(key="k", operator="NotIn", values=[])},
        f"{FS}.requirements[0].{VALUES_REQUIRED}",
    ),
    (
        "resource attributes: field selector values for exists",
        {"user": "me", "resourceAttributes": _field(key="k", operator="Exists", values=["val"])},
        f"{FS}.requirements[0].{VALUES_FORBIDDEN}",
    ),
    (
        "resource attributes: field selector values for not exists",
        {"user": "me", "resourceAttributes": _field(key="k", operator="DoesNotExist", values=["val"])},
        f"{FS}.requirements[0].{VALUES_FORBIDDEN}",
    ),
    (
        "resource attributes: label selector specify both",
        {"user": "me", "resourceAttributes": {"labelSelector": {"rawSelector": "foo", "requirements": [{}]}}},
        f'{LS}.rawSelector: Invalid value: "foo": may not specified at the same time as requirements',
    ),
    (
        "resource attributes: label selector specify neither",
        {"user": "me", "resourceAttributes": {"labelSelector": {}}},
        f"{LS}.requirements: Required value: when {LS} is specified, requirements or rawSelector is required",
    ),
    (
        "resource attributes: label selector no key",
        {"user": "me", "resourceAttributes": _label(key="")},
        f'{LS}.requirements[0].key: Invalid value: "": name part must be non-empty',
    ),
    (
        "resource attributes: label selector invalid label name",
        {"user": "me", "resourceAttributes": _label(key="()foo")},
        f'{LS}.requirements[0].key: Invalid value: "()foo": name part must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
        "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ),
    (
        "resource attributes: label selector no value for in",
        {"user": "me", "resourceAttributes": _label(key="k", operator="In", values=[])},
        f"{LS}.requirements[0].{VALUES_REQUIRED}",
    ),
    (
        "resource attributes: label selector no value for not in",
        {"user": "me", "resourceAttributes": _label(key="k", operator="NotIn", values=[])},
        f"{LS}.requirements[0].{VALUES_REQUIRED}",
    ),
    (
        "resource attributes: label selector values for exists",
        {"user": "me", "resourceAttributes": _label(key="k", operator="Exists", values=["val"])},
        f"{LS}.requirements[0].{VALUES_FORBIDDEN}",
    ),
    (
        "resource attributes: label selector values for not exists",
        {"user": "me", "resourceAttributes": _label(key="k", operator="DoesNotExist", values=["val"])},
        f"{LS}.requirements[0].{VALUES_FORBIDDEN}",
    ),
]


@pytest.mark.parametrize("spec", SAR_SUCCESS)
def test_validate_sar_spec_success(spec: dict[str, Any]) -> None:
    assert _first_error("SubjectAccessReview", {"spec": spec}) == ""


@pytest.mark.parametrize(("spec", "message"), [(s, m) for _, s, m in SAR_ERRORS], ids=[n for n, _, _ in SAR_ERRORS])
def test_validate_sar_spec(spec: dict[str, Any], message: str) -> None:
    """`TestValidateSARSpec`: as a SubjectAccessReview and as a LocalSubjectAccessReview."""
    assert message in _first_error("SubjectAccessReview", {"spec": spec})
    assert message in _first_error("LocalSubjectAccessReview", {"spec": spec})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({}, "exactly one of nonResourceAttributes or resourceAttributes must be specified"),
        ({"resourceAttributes": {}, "nonResourceAttributes": {}}, "cannot be specified in combination"),
        (
            {"resourceAttributes": {"labelSelector": {"rawSelector": "foo", "requirements": [{}]}}},
            f'{LS}.rawSelector: Invalid value: "foo": may not specified at the same time as requirements',
        ),
    ],
    ids=["neither request", "both requests", "resource attributes: label selector specify both"],
)
def test_validate_self_sar(spec: dict[str, Any], message: str) -> None:
    """`TestValidateSelfSAR`."""
    assert message in _first_error("SelfSubjectAccessReview", {"spec": spec})


def test_validate_local_sar_success() -> None:
    assert _first_error("LocalSubjectAccessReview", {"spec": {"resourceAttributes": {}, "user": "user"}}) == ""


@pytest.mark.parametrize(
    ("body", "namespace", "message"),
    [
        (
            {"metadata": {"name": "a"}, "spec": {"resourceAttributes": {}, "user": "user"}},
            "",
            "must be empty except for namespace",
        ),
        (
            {"metadata": {"namespace": "a"}, "spec": {"resourceAttributes": {}, "user": "user"}},
            "a",
            "must match metadata.namespace",
        ),
        (
            {"metadata": {"namespace": "a"}, "spec": {"nonResourceAttributes": {}, "user": "user"}},
            "a",
            "disallowed on this kind of request",
        ),
        (
            {
                "spec": {
                    "user": "user",
                    "resourceAttributes": {"labelSelector": {"rawSelector": "foo", "requirements": [{}]}},
                }
            },
            "",
            f'{LS}.rawSelector: Invalid value: "foo": may not specified at the same time as requirements',
        ),
    ],
    ids=["name", "namespace conflict", "nonresource", "resource attributes: label selector specify both"],
)
def test_validate_local_sar(body: dict[str, Any], namespace: str, message: str) -> None:
    """`TestValidateLocalSAR`."""
    assert message in _first_error("LocalSubjectAccessReview", body, namespace)


# ---------------------------------------------------------------------------------------------- over HTTPS


def _sar(spec: dict[str, Any], kind: str = "SubjectAccessReview") -> dict[str, Any]:
    return {"apiVersion": "authorization.k8s.io/v1", "kind": kind, "spec": spec}


def _bind(http: httpx.Client, name: str, role: str, subject: dict[str, Any], namespace: str = "") -> None:
    if namespace:
        url, kind = f"{RBAC}/namespaces/{namespace}/rolebindings", "RoleBinding"
    else:
        url, kind = f"{RBAC}/clusterrolebindings", "ClusterRoleBinding"
    body = {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [subject],
    }
    response = http.post(url, json={"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, **body})
    assert response.status_code == 201, response.text


PODS = {"namespace": "default", "verb": "list", "resource": "pods"}


def test_a_review_names_the_binding_that_allows_and_none_on_deny(http: httpx.Client) -> None:
    denied = http.post(SAR, json=_sar({"resourceAttributes": PODS, "user": "jane"}))
    assert denied.status_code == 201, denied.text
    assert denied.json() == {
        "kind": "SubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {"resourceAttributes": PODS, "user": "jane"},
        "status": {"allowed": False},
    }
    _bind(
        http, "jane-admin", "cluster-admin", {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "jane"}
    )
    allowed = http.post(SAR, json=_sar({"resourceAttributes": PODS, "user": "jane"})).json()
    assert allowed["status"] == {
        "allowed": True,
        "reason": 'RBAC: allowed by ClusterRoleBinding "jane-admin" of ClusterRole "cluster-admin" to User "jane"',
    }
    # a group of the reviewed user: the subject named is the group
    by_group = http.post(SAR, json=_sar({"resourceAttributes": PODS, "groups": ["system:masters"]})).json()
    assert by_group["status"] == {"allowed": True}  # the privileged group: allowed before RBAC, no reason
    discovery = http.post(
        SAR, json=_sar({"nonResourceAttributes": {"path": "/api", "verb": "get"}, "groups": ["system:authenticated"]})
    ).json()
    assert discovery["status"] == {
        "allowed": True,
        "reason": 'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to '
        'Group "system:authenticated"',
    }


def test_a_local_review_is_of_its_namespace(http: httpx.Client) -> None:
    account = {"kind": "ServiceAccount", "name": "runner"}  # a RoleBinding's account without a namespace
    _bind(http, "runner-admin", "cluster-admin", account, namespace="default")
    spec = {"resourceAttributes": {**PODS, "verb": "create"}, "user": "system:serviceaccount:default:runner"}
    answer = http.post(LSAR.format("default"), json=_sar(spec, "LocalSubjectAccessReview"))
    assert answer.status_code == 201, answer.text
    assert answer.json()["metadata"] == {"namespace": "default", "creationTimestamp": None}
    assert answer.json()["status"] == {
        "allowed": True,
        "reason": 'RBAC: allowed by RoleBinding "runner-admin/default" of ClusterRole "cluster-admin" to '
        'ServiceAccount "runner/default"',
    }
    elsewhere = {**spec, "resourceAttributes": {**spec["resourceAttributes"], "namespace": "kube-system"}}
    mismatch = http.post(LSAR.format("kube-system"), json=_sar(elsewhere, "LocalSubjectAccessReview"))
    assert mismatch.json()["status"] == {"allowed": False}
    wrong = http.post(LSAR.format("default"), json=_sar(elsewhere, "LocalSubjectAccessReview"))
    assert wrong.status_code == 422
    assert wrong.json()["message"] == (
        'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: '
        'Invalid value: "kube-system": must match metadata.namespace'
    )
    other_meta = {**_sar(spec, "LocalSubjectAccessReview"), "metadata": {"namespace": "kube-system"}}
    refused = http.post(LSAR.format("default"), json=other_meta)
    assert refused.status_code == 400
    assert refused.json()["message"] == (
        "the namespace of the provided object does not match the namespace sent on the request"
    )
    assert http.post("/apis/authorization.k8s.io/v1/localsubjectaccessreviews", json=other_meta).status_code == 404


def test_a_selector_the_authorizer_cannot_parse_is_named(http: httpx.Client) -> None:
    attributes = {
        **PODS,
        "fieldSelector": {
            "requirements": [{"key": "a", "operator": "In", "values": ["x"]}, {"key": "b", "operator": "Exists"}]
        },
        "labelSelector": {"rawSelector": "a in (x"},
    }
    answer = http.post(SAR, json=_sar({"resourceAttributes": attributes, "user": "nobody"})).json()
    assert answer["status"] == {
        "allowed": False,
        "evaluationError": "spec.resourceAttributes.fieldSelector partially ignored due to parse error; "
        "spec.resourceAttributes.labelSelector ignored due to parse error",
    }


def test_self_access_review_names_the_binding_too(http: httpx.Client) -> None:
    headers = {"Impersonate-User": "jane"}
    spec = {
        "resourceAttributes": {
            "verb": "create",
            "group": "authorization.k8s.io",
            "resource": "selfsubjectaccessreviews",
        }
    }
    answer = http.post(SSAR, json=_sar(spec, "SelfSubjectAccessReview"), headers=headers).json()
    assert answer["status"] == {
        "allowed": True,
        "reason": 'RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" to '
        'Group "system:authenticated"',
    }


def test_asking_about_others_takes_create_on_the_review(http: httpx.Client) -> None:
    headers = {"Impersonate-User": "jane"}
    body = _sar({"resourceAttributes": PODS, "user": "bob"})
    forbidden = http.post(SAR, json=body, headers=headers)
    assert forbidden.status_code == 403
    assert forbidden.json()["message"] == (
        'subjectaccessreviews.authorization.k8s.io is forbidden: User "jane" cannot create resource '
        '"subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope'
    )
    _bind(
        http,
        "jane-delegator",
        "system:auth-delegator",
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "jane"},
    )
    assert http.post(SAR, json=body, headers=headers).status_code == 201


def test_discovery_lists_the_reviews_as_create_only(http: httpx.Client) -> None:
    resources = {r["name"]: r for r in http.get("/apis/authorization.k8s.io/v1").json()["resources"]}
    assert resources["subjectaccessreviews"]["verbs"] == ["create"]
    assert resources["subjectaccessreviews"]["namespaced"] is False
    assert resources["localsubjectaccessreviews"]["verbs"] == ["create"]
    assert resources["localsubjectaccessreviews"]["namespaced"] is True
    assert resources["localsubjectaccessreviews"]["kind"] == "LocalSubjectAccessReview"


@pytest.mark.parametrize(
    "spec",
    [
        {"user": "jane", "groups": "devs", "resourceAttributes": {}},
        {"user": "jane", "extra": {"scopes": "x"}, "resourceAttributes": {}},
        {"user": "jane", "resourceAttributes": {"fieldSelector": {"requirements": ["k=v"]}}},
        {"user": "jane", "resourceAttributes": {"labelSelector": {"requirements": [{"key": "k", "values": "v"}]}}},
        {"user": 7, "nonResourceAttributes": {"path": "/"}},
        "everything",
    ],
)
def test_a_body_of_the_wrong_types_is_a_bad_request(http: httpx.Client, spec: Any) -> None:
    response = http.post(SAR, json=_sar(spec))
    assert response.status_code == 400, response.text
    assert response.json()["message"].startswith('SubjectAccessReview in version "v1" cannot be handled as a')
