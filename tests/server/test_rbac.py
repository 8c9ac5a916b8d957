"""RBAC through the served API: the bootstrap policy a fresh server holds, the binding tables kubectl prints, and
authorization of an impersonated user by the stored roles and bindings (Forbidden, then allowed once bound, the
self reviews `kubectl auth can-i` sends)."""

from __future__ import annotations

import httpx

from kjobs.server.rbacpolicy import AUTOUPDATE_ANNOTATION, bootstrap_objects
from tests.server.conftest import Server

RBAC = "/apis/rbac.authorization.k8s.io/v1"
TEAM_PODS = "/api/v1/namespaces/team/pods"
JANE = {"Impersonate-User": "jane"}
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
RULES_REVIEW = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
ACCESS_REVIEW = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


def _names(http: httpx.Client, path: str) -> list[str]:
    response = http.get(path)
    assert response.status_code == 200, response.text
    return [item["metadata"]["name"] for item in response.json()["items"]]


def test_a_fresh_server_holds_the_bootstrap_policy(http: httpx.Client) -> None:
    # every bootstrap object, by name (tests/server/test_rbac_bootstrap.py compares them with upstream's testdata)
    objects = list(bootstrap_objects())
    for plural in ("clusterroles", "clusterrolebindings"):
        wanted = sorted(obj["metadata"]["name"] for kind, _, obj in objects if kind == plural)
        assert _names(http, f"{RBAC}/{plural}") == wanted
    assert "system:controller:job-controller" in _names(http, f"{RBAC}/clusterroles")
    assert _names(http, f"{RBAC}/namespaces/kube-public/roles") == ["system:controller:bootstrap-signer"]
    view = http.get(f"{RBAC}/clusterroles/view").json()
    assert view["metadata"]["labels"] == {
        "kubernetes.io/bootstrapping": "rbac-defaults",
        "rbac.authorization.k8s.io/aggregate-to-edit": "true",
    }
    assert view["metadata"]["annotations"] == {AUTOUPDATE_ANNOTATION: "true"}
    assert view["aggregationRule"] == {
        "clusterRoleSelectors": [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}]
    }
    admin_binding = http.get(f"{RBAC}/clusterrolebindings/cluster-admin").json()
    assert admin_binding["subjects"] == [
        {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:masters"}
    ]
    assert http.get(f"{RBAC}/namespaces/default/roles").json()["items"] == []


def test_binding_tables_show_the_role_and_the_subjects(http: httpx.Client) -> None:
    binding = {
        "metadata": {"name": "readers"},
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [
            {"kind": "User", "name": "jane"},
            {"kind": "Group", "name": "devs"},
            {"kind": "ServiceAccount", "name": "ci", "namespace": "default"},
            {"kind": "User", "name": "joe"},
        ],
    }
    created = http.post(f"{RBAC}/namespaces/default/rolebindings", json=binding)
    assert created.status_code == 201, created.text
    assert created.json()["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    table = http.get(f"{RBAC}/namespaces/default/rolebindings", headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Role",
        "Age",
        "Users",
        "Groups",
        "ServiceAccounts",
    ]
    assert [c["priority"] for c in table["columnDefinitions"]] == [0, 0, 0, 1, 1, 1]
    cells = table["rows"][0]["cells"]
    assert cells[:2] + cells[3:] == ["readers", "ClusterRole/view", "jane, joe", "devs", "default/ci"]
    roles = http.get(f"{RBAC}/clusterroles", headers=TABLE).json()
    assert [c["name"] for c in roles["columnDefinitions"]] == ["Name", "Created At"]
    changed = http.patch(
        f"{RBAC}/namespaces/default/rolebindings/readers",
        json={"roleRef": {"name": "edit"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert changed.status_code == 422
    assert changed.json()["message"] == (
        'RoleBinding.rbac.authorization.k8s.io "readers" is invalid: roleRef: Invalid value: '
        '{"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: cannot change roleRef'
    )


def test_an_impersonated_user_is_forbidden_until_bound_then_allowed_in_that_namespace(
    server: Server, http: httpx.Client
) -> None:
    assert http.post("/api/v1/namespaces", json={"metadata": {"name": "team"}}).status_code == 201
    denied = http.get(TEAM_PODS, headers=JANE)
    assert (denied.status_code, denied.json()["message"]) == (
        403,
        'pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "team"',
    )
    role = {
        "metadata": {"name": "pod-reader"},
        "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}],
    }
    assert http.post(f"{RBAC}/namespaces/team/roles", json=role).status_code == 201
    binding = {
        "metadata": {"name": "jane-reads"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
        "subjects": [{"kind": "User", "name": "jane"}],
    }
    assert http.post(f"{RBAC}/namespaces/team/rolebindings", json=binding).status_code == 201
    assert http.get(TEAM_PODS, headers=JANE).status_code == 200
    assert http.get("/api/v1/namespaces/default/pods", headers=JANE).status_code == 403
    assert http.delete(f"{TEAM_PODS}/x", headers=JANE).status_code == 403
    review = http.post(RULES_REVIEW, json={"spec": {"namespace": "team"}}, headers=JANE).json()["status"]
    assert review["incomplete"] is False
    assert {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]} in review["resourceRules"]
    assert {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"]} in (
        review["nonResourceRules"]
    )
    assert http.delete(f"{RBAC}/namespaces/team/roles/pod-reader").status_code == 200
    gone = http.get(TEAM_PODS, headers=JANE)
    assert gone.json()["message"].endswith(
        'in the namespace "team": RBAC: role.rbac.authorization.k8s.io "pod-reader" not found'
    )
    review = http.post(RULES_REVIEW, json={"spec": {"namespace": "team"}}, headers=JANE).json()["status"]
    assert (review["incomplete"], review["evaluationError"]) == (
        True,
        'role.rbac.authorization.k8s.io "pod-reader" not found',
    )
    asked = {"spec": {"resourceAttributes": {"namespace": "team", "verb": "list", "resource": "pods"}}}
    assert http.post(ACCESS_REVIEW, json=asked, headers=JANE).json()["status"] == {
        "allowed": False,
        "reason": 'RBAC: role.rbac.authorization.k8s.io "pod-reader" not found',
    }


def test_groups_and_service_accounts_are_subjects_and_cluster_bindings_reach_every_namespace(
    http: httpx.Client,
) -> None:
    role = {
        "metadata": {"name": "job-reader"},
        "rules": [{"verbs": ["list"], "apiGroups": ["batch"], "resources": ["jobs"]}],
    }
    assert http.post(f"{RBAC}/clusterroles", json=role).status_code == 201
    binding = {
        "metadata": {"name": "job-readers"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "job-reader"},
        "subjects": [
            {"kind": "Group", "name": "auditors"},
            {"kind": "ServiceAccount", "name": "ci", "namespace": "default"},
        ],
    }
    assert http.post(f"{RBAC}/clusterrolebindings", json=binding).status_code == 201
    jobs = "/apis/batch/v1/namespaces/kube-system/jobs"
    assert http.get(jobs, headers={**JANE, "Impersonate-Group": "auditors"}).status_code == 200
    assert http.get(jobs, headers=JANE).status_code == 403
    account = {"Impersonate-User": "system:serviceaccount:default:ci"}
    assert http.get(jobs, headers=account).status_code == 200
    assert http.get(jobs, headers={"Impersonate-User": "system:serviceaccount:other:ci"}).status_code == 403
