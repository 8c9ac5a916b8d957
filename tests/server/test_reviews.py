"""The self reviews behind `kubectl auth whoami` and `kubectl auth can-i` (`kjobs.server.reviews`), over HTTPS."""

from __future__ import annotations

import ssl

import httpx
import orjson
import pytest

from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.server.conftest import Server

WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
CAN_I = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
RULES = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"


def _sar(spec: dict[str, object], **extra: object) -> dict[str, object]:
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": spec, **extra}


def test_whoami_names_the_certificates_subject(http: httpx.Client) -> None:
    response = http.post(WHOAMI, json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert response.status_code == 201
    review = response.json()
    assert review["kind"] == "SelfSubjectReview"
    assert review["status"] == {
        "userInfo": {"username": "kjobs-admin", "groups": ["system:masters", "system:authenticated"]}
    }
    assert review["metadata"]["creationTimestamp"].endswith("Z")


def test_the_token_is_the_admins_and_no_credential_is_nobody(server: Server) -> None:
    trust = ssl.create_default_context(cafile=str(server.pki.ca_file))
    with httpx.Client(base_url=server.url, verify=trust) as client:
        with_token = client.post(WHOAMI, json={}, headers={"Authorization": f"Bearer {server.pki.token}"})
        assert with_token.json()["status"]["userInfo"]["username"] == "kjobs-admin"
        assert client.post(WHOAMI, json={}).status_code == 401


def test_a_server_without_authentication_answers_as_kube_apiservers_insecure_port() -> None:
    store = MemoryStore()
    with serve(store) as url, httpx.Client(base_url=url) as client:
        user = client.post(WHOAMI, json={}).json()["status"]["userInfo"]
    store.close()
    assert user == {"username": "system:unsecured", "groups": ["system:masters", "system:authenticated"]}


@pytest.mark.parametrize(
    "spec",
    [
        {"resourceAttributes": {"namespace": "default", "verb": "create", "group": "batch", "resource": "jobs"}},
        {"resourceAttributes": {"verb": "delete", "resource": "nodes"}},
        {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}},
    ],
)
def test_the_admin_may_do_anything(http: httpx.Client, spec: dict[str, object]) -> None:
    response = http.post(CAN_I, json=_sar(spec))
    assert response.status_code == 201
    assert response.json() == {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": spec,
        "status": {"allowed": True},
    }


@pytest.mark.parametrize(
    ("body", "message", "field"),
    [
        (
            _sar({}),
            "spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or "
            "resourceAttributes must be specified",
            "spec.resourceAttributes",
        ),
        (
            _sar({"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/x", "verb": "get"}}),
            "spec.nonResourceAttributes: Invalid value: ",
            "spec.nonResourceAttributes",
        ),
        (
            _sar({"resourceAttributes": {"verb": "get"}}, metadata={"name": "mine"}),
            "metadata: Invalid value: ",
            "metadata",
        ),
    ],
)
def test_an_access_review_is_validated_as_kubernetes_does(
    http: httpx.Client, body: dict[str, object], message: str, field: str
) -> None:
    response = http.post(CAN_I, json=body)
    assert response.status_code == 422
    status = response.json()
    assert status["reason"] == "Invalid"
    assert status["message"].startswith(f'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: {message}')
    assert [cause["field"] for cause in status["details"]["causes"]] == [field]


def test_unknown_fields_are_refused_under_strict_validation(http: httpx.Client) -> None:
    body = _sar({"resourceAttributes": {"verb": "get", "colour": "blue"}})
    response = http.post(CAN_I, params={"fieldValidation": "Strict"}, json=body)
    assert response.status_code == 400
    assert 'unknown field "spec.resourceAttributes.colour"' in response.json()["message"]


def test_a_rules_review_needs_a_namespace_and_lists_cluster_admins_rules(http: httpx.Client) -> None:
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {}}
    missing = http.post(RULES, json=body)
    assert (missing.status_code, missing.json()["message"]) == (400, "no namespace on request")
    answer = http.post(RULES, json={**body, "spec": {"namespace": "default"}})
    assert answer.status_code == 201
    status = answer.json()["status"]
    assert {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]} in status["resourceRules"]
    assert {"verbs": ["*"], "nonResourceURLs": ["*"]} in status["nonResourceRules"]
    assert status["incomplete"] is False


def test_reviews_are_only_created(http: httpx.Client) -> None:
    assert http.get(CAN_I).status_code == 405
    assert http.delete(CAN_I).status_code == 405
    assert http.get(f"{CAN_I}/anything").status_code == 404
    resources = {r["name"]: r for r in http.get("/apis/authorization.k8s.io/v1").json()["resources"]}
    assert resources["selfsubjectaccessreviews"]["verbs"] == ["create"]
    assert resources["selfsubjectrulesreviews"]["namespaced"] is False
    groups = [g["name"] for g in http.get("/apis").json()["groups"]]
    assert {"authentication.k8s.io", "authorization.k8s.io"} <= set(groups)


def test_kubectls_protobuf_access_review_is_read(http: httpx.Client) -> None:
    """`kubectl auth can-i create jobs` sends its review as protobuf (the `k8s\\x00` envelope)."""

    def field(number: int, payload: bytes) -> bytes:
        return bytes([number << 3 | 2, len(payload)]) + payload

    attributes = field(1, b"default") + field(2, b"create") + field(3, b"batch") + field(5, b"jobs")
    review = field(2, field(1, attributes))  # SelfSubjectAccessReview.spec.resourceAttributes
    type_meta = field(1, b"authorization.k8s.io/v1") + field(2, b"SelfSubjectAccessReview")
    body = b"k8s\x00" + field(1, type_meta) + field(2, review)
    response = http.post(CAN_I, content=body, headers={"Content-Type": "application/vnd.kubernetes.protobuf"})
    assert response.status_code == 201
    answer = orjson.loads(response.content)
    assert answer["spec"] == {
        "resourceAttributes": {"namespace": "default", "verb": "create", "group": "batch", "resource": "jobs"}
    }
    assert answer["status"] == {"allowed": True}


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_a_review_asked_for_only_as_a_table_is_406(http: httpx.Client, version: str) -> None:
    """A review's storage converts nothing to a Table: with no other range acceptable, 406 (test/e2e/apimachinery/
    table_conversion.go "should return a 406 for a backend which does not implement metadata")."""
    review = _sar({"nonResourceAttributes": {"path": "/", "verb": "get"}})
    table = f"application/json;as=Table;v={version};g=meta.k8s.io"
    answered = http.post(CAN_I, json=review, headers={"Accept": table})
    assert answered.status_code == 406, answered.text
    assert answered.json()["reason"] == "NotAcceptable"
    assert answered.json()["message"] == (
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf"
    )
    with_fallback = http.post(CAN_I, json=review, headers={"Accept": f"{table}, application/json"})
    assert with_fallback.status_code == 201, with_fallback.text
    assert with_fallback.json()["status"]["allowed"] is True
