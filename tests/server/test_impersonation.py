"""`kubectl --as`: impersonation, and what a user outside `system:masters` may do (`kjobs.server.authz`)."""

from __future__ import annotations

import httpx
import pytest

from kjobs.server.authz import Attributes, UserInfo, impersonate
from tests.server.conftest import pod_manifest
from tests.server.rbac_support import bootstrap_rbac

PODS = "/api/v1/namespaces/default/pods"
WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
CAN_I = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
BOB = {"Impersonate-User": "bob"}


def test_an_impersonated_user_without_bindings_is_forbidden_as_on_a_fresh_cluster(http: httpx.Client) -> None:
    listed = http.get(PODS, headers=BOB)
    assert listed.status_code == 403
    assert listed.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace '
        '"default"',
        "reason": "Forbidden",
        "details": {"kind": "pods"},
        "code": 403,
    }
    created = http.post(PODS, json=pod_manifest("by-bob"), headers=BOB)
    assert created.status_code == 403
    assert http.get(f"{PODS}/by-bob").status_code == 404  # nothing was written
    deleted = http.delete("/api/v1/nodes/n1", headers=BOB)
    assert deleted.json()["message"] == (
        'nodes "n1" is forbidden: User "bob" cannot delete resource "nodes" in API group "" at the cluster scope'
    )
    job = http.get("/apis/batch/v1/namespaces/default/jobs/x", headers=BOB)
    assert 'cannot get resource "jobs" in API group "batch" in the namespace "default"' in job.json()["message"]
    metrics = http.get("/metrics", headers=BOB)
    assert (metrics.status_code, metrics.json()["message"]) == (403, 'forbidden: User "bob" cannot get path "/metrics"')


def test_discovery_and_self_reviews_stay_open_to_every_authenticated_user(http: httpx.Client) -> None:
    for path in ("/api", "/apis", "/api/v1", "/apis/batch/v1", "/version", "/openapi/v3"):
        assert http.get(path, headers=BOB).status_code == 200, path
    me = http.post(WHOAMI, json={}, headers={**BOB, "Impersonate-Group": "devs"})
    assert me.json()["status"]["userInfo"] == {"username": "bob", "groups": ["devs", "system:authenticated"]}
    review = {"spec": {"resourceAttributes": {"namespace": "default", "verb": "list", "resource": "pods"}}}
    assert http.post(CAN_I, json=review, headers=BOB).json()["status"] == {"allowed": False}
    as_admin = {**BOB, "Impersonate-Group": "system:masters"}
    assert http.post(CAN_I, json=review, headers=as_admin).json()["status"] == {"allowed": True}
    assert http.get(PODS, headers=as_admin).status_code == 200


def test_groups_without_a_user_are_a_bad_request(http: httpx.Client) -> None:
    response = http.get(PODS, headers={"Impersonate-Group": "system:masters"})
    assert response.status_code == 400
    assert "without impersonating a user" in response.json()["message"]


def test_service_accounts_get_their_groups_and_extras_are_kept() -> None:
    admin = UserInfo("kjobs-admin", ("system:masters", "system:authenticated"))
    allowed = bootstrap_rbac().allowed
    sa = impersonate(admin, [("impersonate-user", "system:serviceaccount:ci:runner")], allowed)
    assert sa.groups == ("system:serviceaccounts", "system:serviceaccounts:ci", "system:authenticated")
    extra = impersonate(
        admin,
        [("impersonate-user", "al"), ("impersonate-extra-scopes", "a"), ("impersonate-extra-scopes", "b")],
        allowed,
    )
    assert extra.to_json() == {"username": "al", "groups": ["system:authenticated"], "extra": {"scopes": ["a", "b"]}}
    anonymous = impersonate(admin, [("impersonate-user", "system:anonymous")], allowed)
    assert anonymous.groups == ("system:unauthenticated",)


def test_only_masters_may_impersonate() -> None:
    bob = UserInfo("bob", ("system:authenticated",))
    with pytest.raises(Exception, match='users "alice" is forbidden: User "bob" cannot impersonate resource "users"'):
        impersonate(bob, [("impersonate-user", "alice")], bootstrap_rbac().allowed)


@pytest.mark.parametrize(
    ("attrs", "expected"),
    [
        (Attributes("get", path="/apis/batch/v1", is_resource=False), True),
        (Attributes("post", path="/apis", is_resource=False), False),
        (Attributes("get", path="/metrics", is_resource=False), False),
        (Attributes("create", "selfsubjectaccessreviews", group="authorization.k8s.io"), True),
        (Attributes("create", "selfsubjectreviews", group="authentication.k8s.io"), True),
        (Attributes("create", "selfsubjectreviews", group="authorization.k8s.io"), False),
        (Attributes("get", "pods", subresource="log", namespace="default", name="p"), False),
    ],
)
def test_the_bootstrap_rules_of_an_authenticated_user(attrs: Attributes, expected: bool) -> None:
    rbac = bootstrap_rbac()
    assert rbac.allowed(UserInfo("bob", ("system:authenticated",)), attrs) is expected
    assert rbac.allowed(UserInfo("root", ("system:masters",)), attrs) is True
