"""RBAC's escalation checks (`kjobs.server.rbac.check_escalation`): the rows of Kubernetes' component-helpers/auth/
rbac/validation/policy_comparator_test.go (`Covers`, `nonResourceURLCovers`), then writes of roles and bindings
by an impersonated user through the served API: refused with kube-apiserver's `attempting to grant RBAC
permissions not currently held` unless the user holds the rules or the `escalate` / `bind` verb."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from kjobs.api.types import Obj
from kjobs.server.rbac import compact_rules, compact_string, covers, non_resource_url_covers


def R(groups: list[str] | None, verbs: list[str], resources: list[str] | None = None, **extra: Any) -> Obj:
    """A PolicyRule (`names`: resourceNames, `urls`: nonResourceURLs), empty lists left out."""
    rule: Obj = {"verbs": verbs}
    if groups:
        rule["apiGroups"] = groups
    if resources:
        rule["resources"] = resources
    if extra.get("names"):
        rule["resourceNames"] = extra["names"]
    if extra.get("urls"):
        rule["nonResourceURLs"] = extra["urls"]
    return rule


BD = ["builds", "deployments"]
# test name: (owner rules, servant rules, uncovered rules (empty: covered))
COVERS: dict[str, tuple[list[Obj], list[Obj], list[Obj]]] = {
    "TestCoversExactMatch": ([R(["v1"], ["get"], ["builds"])], [R(["v1"], ["get"], ["builds"])], []),
    "TestCoversSubresourceWildcard": ([R(["v1"], ["get"], ["*/scale"])], [R(["v1"], ["get"], ["foo/scale"])], []),
    "TestCoversMultipleRulesCoveringSingleRule": (
        [R(["v1"], ["delete"], ["deployments"]), R(["v1"], ["delete"], ["builds"]), R(["v1"], ["update"], BD)],
        [R(["v1"], ["delete", "update"], BD)],
        [],
    ),
    "TestCoversMultipleAPIGroupsCoveringSingleRule": (
        [
            R([g], verbs, resources)
            for g in ("group1", "group2")
            for verbs, resources in ((["delete"], ["deployments"]), (["delete"], ["builds"]), (["update"], BD))
        ],
        [R(["group1", "group2"], ["delete", "update"], BD)],
        [],
    ),
    "TestCoversSingleAPIGroupsCoveringMultiple": (
        [R(["group1", "group2"], ["delete", "update"], BD)],
        [
            R([g], verbs, resources)
            for g in ("group1", "group2")
            for verbs, resources in ((["delete"], ["deployments"]), (["delete"], ["builds"]), (["update"], BD))
        ],
        [],
    ),
    "TestCoversMultipleRulesMissingSingleVerbResourceCombination": (
        [R(["v1"], ["delete", "update"], BD), R(["v1"], ["delete"], ["pods"])],
        [R(["v1"], ["delete", "update"], [*BD, "pods"])],
        [R(["v1"], ["update"], ["pods"])],
    ),
    "TestCoversAPIGroupStarCoveringMultiple": (
        [R(["*"], ["get"], ["roles"])],
        [R(["group1", "group2"], ["get"], ["roles"])],
        [],
    ),
    "TestCoversEnumerationNotCoveringAPIGroupStar": (
        [R(["dummy-group"], ["get"], ["roles"])],
        [R(["*"], ["get"], ["roles"])],
        [R(["*"], ["get"], ["roles"])],
    ),
    "TestCoversAPIGroupStarCoveringStar": ([R(["*"], ["get"], ["roles"])], [R(["*"], ["get"], ["roles"])], []),
    "TestCoversVerbStarCoveringMultiple": (
        [R(["v1"], ["*"], ["roles"])],
        [R(["v1"], ["watch", "list"], ["roles"])],
        [],
    ),
    "TestCoversEnumerationNotCoveringVerbStar": (
        [R(["v1"], ["get", "list", "watch", "create", "update", "delete", "exec"], ["roles"])],
        [R(["v1"], ["*"], ["roles"])],
        [R(["v1"], ["*"], ["roles"])],
    ),
    "TestCoversVerbStarCoveringStar": ([R(["v1"], ["*"], ["roles"])], [R(["v1"], ["*"], ["roles"])], []),
    "TestCoversResourceStarCoveringMultiple": (
        [R(["v1"], ["get"], ["*"])],
        [R(["v1"], ["get"], ["resourcegroup:deployments"])],
        [],
    ),
    "TestCoversEnumerationNotCoveringResourceStar": (
        [R(["v1"], ["get"], ["roles", "resourcegroup:deployments"])],
        [R(["v1"], ["get"], ["*"])],
        [R(["v1"], ["get"], ["*"])],
    ),
    "TestCoversResourceStarCoveringStar": ([R(["v1"], ["get"], ["*"])], [R(["v1"], ["get"], ["*"])], []),
    "TestCoversResourceNameEmptyCoveringMultiple": (
        [R(["v1"], ["get"], ["pods"])],
        [R(["v1"], ["get"], ["pods"], names=["foo", "bar"])],
        [],
    ),
    "TestCoversEnumerationNotCoveringResourceNameEmpty": (
        [R(["v1"], ["get"], ["pods"], names=["foo", "bar"])],
        [R(["v1"], ["get"], ["pods"])],
        [R(["v1"], ["get"], ["pods"])],
    ),
    "TestCoversNonResourceURLs": ([R(None, ["*"], urls=["/apis"])], [R(None, ["*"], urls=["/apis"])], []),
    "TestCoversNonResourceURLsStar": (
        [R(None, ["*"], urls=["*"])],
        [R(None, ["*"], urls=["/apis", "/apis/v1", "/"])],
        [],
    ),
    "TestCoversNonResourceURLsStarAfterPrefixDoesntCover": (
        [R(None, ["*"], urls=["/apis/*"])],
        [R(None, ["get"], urls=["/apis", "/apis/v1"])],
        [R(None, ["get"], urls=["/apis"])],
    ),
    "TestCoversNonResourceURLsStarAfterPrefix": (
        [R(None, ["*"], urls=["/apis/*"])],
        [R(None, ["get"], urls=["/apis/v1/foo", "/apis/v1"])],
        [],
    ),
    "TestCoversNonResourceURLsWithOtherFields": (
        [R(["v1"], ["get"], ["builds"], urls=["/apis"])],
        [R(["v1"], ["get"], ["builds"], urls=["/apis"])],
        [],
    ),
    "TestCoversNonResourceURLsWithOtherFieldsFailure": (
        [R(["v1"], ["get"], ["builds"])],
        [R(["v1"], ["get"], ["builds"], urls=["/apis"])],
        [R(None, ["get"], urls=["/apis"])],
    ),
}


@pytest.mark.parametrize(("owner", "servant", "uncovered"), COVERS.values(), ids=COVERS)
def test_covers(owner: list[Obj], servant: list[Obj], uncovered: list[Obj]) -> None:
    missing = covers(owner, servant)
    assert len(missing) == len(uncovered) and all(rule in missing for rule in uncovered), missing


URL_COVERS = [
    ("*", "", True),
    ("*", "/", True),
    ("*", "/api", True),
    ("/*", "", False),
    ("/*", "/", True),
    ("/*", "/foo", True),
    ("/api", "/api", True),
    ("/apis", "/api", False),
    ("/api/v1", "/api", False),
    ("/api/v1", "/api/v1", True),
    ("/api/*", "/api/v1", True),
    ("/api/*", "/api", False),
    ("/api/*/*", "/api/v1", False),
    ("/*/v1/*", "/api/v1", False),
]


@pytest.mark.parametrize(("owner", "requested", "want"), URL_COVERS, ids=[f"{o} {r}" for o, r, _ in URL_COVERS])
def test_non_resource_url_covers(owner: str, requested: str, want: bool) -> None:
    assert non_resource_url_covers(owner, requested) is want


def test_missing_rules_are_compacted_and_written_as_go_prints_them() -> None:
    missing = covers([], [R(["apps"], ["get", "delete"], ["deployments"]), R(None, ["get"], urls=["/metrics"])])
    assert sorted(compact_string(r) for r in compact_rules(missing)) == [
        '{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "delete"]}',
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
    ]


# ------------------------------------------------------------------------------------------------ served

RBAC = "/apis/rbac.authorization.k8s.io/v1"
JANE = {"Impersonate-User": "jane"}
HELD = "is attempting to grant RBAC permissions not currently held:"


def _grant_jane(http: httpx.Client, name: str, rules: list[Obj], namespace: str = "default") -> None:
    role = {"metadata": {"name": name}, "rules": rules}
    assert http.post(f"{RBAC}/namespaces/{namespace}/roles", json=role).status_code == 201
    binding = {
        "metadata": {"name": name},
        "roleRef": {"kind": "Role", "name": name},
        "subjects": [{"kind": "User", "name": "jane"}],
    }
    assert http.post(f"{RBAC}/namespaces/{namespace}/rolebindings", json=binding).status_code == 201


def test_a_user_writes_roles_only_with_the_rules_it_holds_or_escalate(http: httpx.Client) -> None:
    _grant_jane(
        http,
        "role-writer",
        [R([""], ["get", "list"], ["pods"]), R(["rbac.authorization.k8s.io"], ["create", "update"], ["roles"])],
    )
    roles = f"{RBAC}/namespaces/default/roles"
    within = {"metadata": {"name": "readers"}, "rules": [R([""], ["get"], ["pods"])]}
    assert http.post(roles, json=within, headers=JANE).status_code == 201
    beyond = {"metadata": {"name": "deleters"}, "rules": [R([""], ["get", "delete"], ["pods", "secrets"])]}
    refused = http.post(roles, json=beyond, headers=JANE)
    assert (refused.status_code, refused.json()["reason"]) == (403, "Forbidden")
    assert refused.json()["message"] == (
        'roles.rbac.authorization.k8s.io "deleters" is forbidden: user "jane" (groups=["system:authenticated"]) '
        f"{HELD}\n"
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}'
    )
    assert refused.json()["details"] == {"name": "deleters", "group": "rbac.authorization.k8s.io", "kind": "roles"}
    assert http.post(roles, json=beyond).status_code == 201  # system:masters may grant anything
    _grant_jane(http, "escalator", [R(["rbac.authorization.k8s.io"], ["escalate"], ["roles"])])
    anything = {"metadata": {"name": "anything"}, "rules": [R(["*"], ["*"], ["*"])]}
    assert http.post(roles, json=anything, headers=JANE).status_code == 201


def test_a_user_binds_only_roles_whose_rules_it_holds_or_may_bind(http: httpx.Client) -> None:
    _grant_jane(
        http,
        "binder",
        [R([""], ["get", "list", "watch"], ["pods"]), R(["rbac.authorization.k8s.io"], ["create"], ["rolebindings"])],
    )
    bindings = f"{RBAC}/namespaces/default/rolebindings"

    def binding(name: str, kind: str, role: str) -> Obj:
        return {
            "metadata": {"name": name},
            "roleRef": {"kind": kind, "name": role},
            "subjects": [{"kind": "User", "name": "bob"}],
        }

    assert http.post(bindings, json=binding("bob-reads", "Role", "binder"), headers=JANE).status_code == 201
    refused = http.post(bindings, json=binding("bob-admin", "ClusterRole", "cluster-admin"), headers=JANE)
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'rolebindings.rbac.authorization.k8s.io "bob-admin" is forbidden: user "jane" '
        '(groups=["system:authenticated"]) '
        f'{HELD}\n{{APIGroups:["*"], Resources:["*"], Verbs:["*"]}}\n{{NonResourceURLs:["*"], Verbs:["*"]}}'
    )
    missing = http.post(bindings, json=binding("bob-nothing", "Role", "nope"), headers=JANE)
    assert (missing.status_code, missing.json()["message"]) == (
        400,
        'role.rbac.authorization.k8s.io "nope" not found',
    )
    _grant_jane(
        http, "may-bind", [R(["rbac.authorization.k8s.io"], ["bind"], ["clusterroles"], names=["cluster-admin"])]
    )
    assert (
        http.post(bindings, json=binding("bob-admin", "ClusterRole", "cluster-admin"), headers=JANE).status_code == 201
    )


def test_an_aggregation_rule_takes_cluster_admin(http: httpx.Client) -> None:
    rules = [R(["rbac.authorization.k8s.io"], ["create"], ["clusterroles"])]
    role = {"metadata": {"name": "cr-writer"}, "rules": rules}
    assert http.post(f"{RBAC}/clusterroles", json=role).status_code == 201
    binding = {
        "metadata": {"name": "cr-writer"},
        "roleRef": {"kind": "ClusterRole", "name": "cr-writer"},
        "subjects": [{"kind": "User", "name": "jane"}],
    }
    assert http.post(f"{RBAC}/clusterrolebindings", json=binding).status_code == 201
    aggregating = {
        "metadata": {"name": "mine"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]},
    }
    refused = http.post(f"{RBAC}/clusterroles", json=aggregating, headers=JANE)
    assert (refused.status_code, refused.json()["message"]) == (
        403,
        'clusterroles.rbac.authorization.k8s.io "mine" is forbidden: must have cluster-admin privileges to use the '
        "aggregationRule",
    )
    plain = {"metadata": {"name": "plain"}, "rules": rules}
    assert http.post(f"{RBAC}/clusterroles", json=plain, headers=JANE).status_code == 201


def test_a_role_too_large_to_check_is_refused_for_a_checked_user_only(http: httpx.Client) -> None:
    _grant_jane(http, "writer", [R(["rbac.authorization.k8s.io"], ["create"], ["roles"])])
    many = [f"r{i}" for i in range(150)]
    huge = {"metadata": {"name": "huge"}, "rules": [R(many, ["get", "list"], many)]}  # 45,000 single permissions
    refused = http.post(f"{RBAC}/namespaces/default/roles", json=huge, headers=JANE)
    assert (refused.status_code, refused.json()["message"]) == (
        403,
        'roles.rbac.authorization.k8s.io "huge" is forbidden: the rules break down into more than 20000 single '
        "permissions, too many to check",
    )
    assert http.post(f"{RBAC}/namespaces/default/roles", json=huge).status_code == 201
