"""RBAC's bootstrap policy (`kjobs.server.rbacpolicy`) against upstream's testdata, and its reconciliation at start
(`kjobs.server.rbacreconcile`, `ApiService.ensure_rbac_bootstrap`).

The names and the spot-checked roles below are plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata's, in
kubernetes/kubernetes: cluster-roles.yaml at 025f2834a128798cef30018a5e6a6ae82b5ad885, controller-roles.yaml,
namespace-roles.yaml and namespace-role-bindings.yaml at 008b3652959ca58af8be3fb5b6ecfe9ae7638282 (the
bindings of policy.go `ClusterRoleBindings()` and controller_policy.go `ControllerRoleBindings()`: one per
controller role, to `kube-system/NAME`).
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from kjobs.server.rbacpolicy import AUTOUPDATE_ANNOTATION, bootstrap_objects
from kjobs.server.rbacreconcile import reconcile_binding, reconcile_role
from kjobs.server.registry import lookup
from kjobs.server.service import DeleteOptions
from tests.server.rbac_support import bootstrapped_service

CLUSTER_ROLES = [
    "admin",
    "cluster-admin",
    "edit",
    "system:aggregate-to-admin",
    "system:aggregate-to-edit",
    "system:aggregate-to-view",
    "system:auth-delegator",
    "system:basic-user",
    "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
    "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
    "system:certificates.k8s.io:kube-apiserver-client-approver",
    "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver",
    "system:certificates.k8s.io:kubelet-serving-approver",
    "system:certificates.k8s.io:legacy-unknown-approver",
    "system:discovery",
    "system:heapster",
    "system:kube-aggregator",
    "system:kube-controller-manager",
    "system:kube-dns",
    "system:kube-scheduler",
    "system:kubelet-api-admin",
    "system:monitoring",
    "system:node",
    "system:node-bootstrapper",
    "system:node-problem-detector",
    "system:node-proxier",
    "system:persistent-volume-provisioner",
    "system:public-info-viewer",
    "system:service-account-issuer-discovery",
    "system:volume-scheduler",
    "view",
]

CONTROLLERS = [
    "attachdetach-controller",
    "certificate-controller",
    "clusterrole-aggregation-controller",
    "cronjob-controller",
    "daemon-set-controller",
    "deployment-controller",
    "device-taint-eviction-controller",
    "disruption-controller",
    "endpoint-controller",
    "endpointslice-controller",
    "endpointslicemirroring-controller",
    "ephemeral-volume-controller",
    "expand-controller",
    "generic-garbage-collector",
    "horizontal-pod-autoscaler",
    "job-controller",
    "legacy-service-account-token-cleaner",
    "namespace-controller",
    "node-controller",
    "persistent-volume-binder",
    "pod-garbage-collector",
    "pv-protection-controller",
    "pvc-protection-controller",
    "replicaset-controller",
    "replication-controller",
    "resource-claim-controller",
    "resourcequota-controller",
    "root-ca-cert-publisher",
    "route-controller",
    "selinux-warning-controller",
    "service-account-controller",
    "service-cidrs-controller",
    "service-controller",
    "statefulset-controller",
    "ttl-after-finished-controller",
    "ttl-controller",
    "validatingadmissionpolicy-status-controller",
    "volumeattributesclass-protection-controller",
]

CLUSTER_ROLE_BINDINGS = [
    "cluster-admin",
    "system:basic-user",
    "system:discovery",
    "system:kube-controller-manager",
    "system:kube-dns",
    "system:kube-scheduler",
    "system:monitoring",
    "system:node",
    "system:node-proxier",
    "system:public-info-viewer",
    "system:service-account-issuer-discovery",
    "system:volume-scheduler",
]

NAMESPACED = [
    ("kube-public", "system:controller:bootstrap-signer"),
    ("kube-system", "extension-apiserver-authentication-reader"),
    ("kube-system", "system::leader-locking-kube-controller-manager"),
    ("kube-system", "system::leader-locking-kube-scheduler"),
    ("kube-system", "system:controller:bootstrap-signer"),
    ("kube-system", "system:controller:cloud-provider"),
    ("kube-system", "system:controller:token-cleaner"),
]
NAMESPACED_BINDINGS = [
    ("kube-public", "system:controller:bootstrap-signer"),
    ("kube-system", "system::extension-apiserver-authentication-reader"),
    ("kube-system", "system::leader-locking-kube-controller-manager"),
    ("kube-system", "system::leader-locking-kube-scheduler"),
    ("kube-system", "system:controller:bootstrap-signer"),
    ("kube-system", "system:controller:cloud-provider"),
    ("kube-system", "system:controller:token-cleaner"),
]


def _objects(plural: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(ns, obj["metadata"]["name"]): obj for kind, ns, obj in bootstrap_objects() if kind == plural}


def _rule(verbs: list[str], groups: list[str], resources: list[str], names: list[str] | None = None) -> dict[str, Any]:
    rule: dict[str, Any] = {"verbs": verbs, "apiGroups": groups, "resources": resources}
    if names:
        rule["resourceNames"] = names
    return rule


EVENTS = _rule(["create", "patch", "update"], ["", "events.k8s.io"], ["events"])


def test_the_names_are_upstreams() -> None:
    controllers = [f"system:controller:{name}" for name in CONTROLLERS]
    assert sorted(name for _, name in _objects("clusterroles")) == sorted(CLUSTER_ROLES + controllers)
    assert sorted(name for _, name in _objects("clusterrolebindings")) == sorted(CLUSTER_ROLE_BINDINGS + controllers)
    assert sorted(_objects("roles")) == sorted(NAMESPACED)
    assert sorted(_objects("rolebindings")) == sorted(NAMESPACED_BINDINGS)
    for plural in ("clusterroles", "clusterrolebindings", "roles", "rolebindings"):
        for obj in _objects(plural).values():
            assert obj["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
            assert obj["metadata"]["annotations"] == {AUTOUPDATE_ANNOTATION: "true"}


@pytest.mark.parametrize(
    ("name", "rules"),
    [
        (
            "system:controller:job-controller",
            [
                _rule(["get", "list", "patch", "update", "watch"], ["batch"], ["jobs"]),
                _rule(["update"], ["batch"], ["jobs/status"]),
                _rule(["update"], ["batch"], ["jobs/finalizers"]),
                _rule(["create", "delete", "list", "patch", "watch"], [""], ["pods"]),
                EVENTS,
            ],
        ),
        (
            "system:controller:ttl-after-finished-controller",
            [_rule(["delete", "get", "list", "watch"], ["batch"], ["jobs"]), EVENTS],
        ),
        (
            "system:controller:pod-garbage-collector",
            [
                _rule(["delete", "list", "watch"], [""], ["pods"]),
                _rule(["get", "list", "watch"], [""], ["nodes"]),
                _rule(["patch"], [""], ["pods/status"]),
            ],
        ),
        (
            "system:controller:legacy-service-account-token-cleaner",
            [
                _rule(["get"], [""], ["configmaps"], ["kube-apiserver-legacy-service-account-token-tracking"]),
                _rule(["delete", "patch"], [""], ["secrets"]),
            ],
        ),
        (
            "system:node-proxier",
            [
                _rule(["list", "watch"], [""], ["endpoints", "services"]),
                _rule(["get", "list", "watch"], [""], ["nodes"]),
                EVENTS,
                _rule(["list", "watch"], ["discovery.k8s.io"], ["endpointslices"]),
            ],
        ),
        (
            "system:service-account-issuer-discovery",
            [{"verbs": ["get"], "nonResourceURLs": ["/.well-known/openid-configuration", "/openid/v1/jwks"]}],
        ),
    ],
)
def test_spot_checked_roles_are_upstreams(name: str, rules: list[dict[str, Any]]) -> None:
    assert _objects("clusterroles")[("", name)]["rules"] == rules


def test_bindings_name_upstreams_subjects() -> None:
    bindings = _objects("clusterrolebindings")
    assert bindings[("", "system:controller:job-controller")]["subjects"] == [
        {"kind": "ServiceAccount", "name": "job-controller", "namespace": "kube-system"}
    ]
    assert "subjects" not in bindings[("", "system:node")]  # deprecated: kept without subjects
    assert bindings[("", "system:kube-dns")]["subjects"] == [
        {"kind": "ServiceAccount", "name": "kube-dns", "namespace": "kube-system"}
    ]
    reader = _objects("rolebindings")[("kube-system", "system::extension-apiserver-authentication-reader")]
    assert reader["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "extension-apiserver-authentication-reader",
    }
    assert [s["name"] for s in reader["subjects"]] == ["system:kube-controller-manager", "system:kube-scheduler"]


# ---------------------------------------------------------------------------------------------- reconciliation

JOBS = _objects("clusterroles")[("", "system:controller:job-controller")]


def test_a_role_gets_back_what_it_lacks_and_keeps_its_extras() -> None:
    edited = copy.deepcopy(JOBS)
    edited["rules"] = [_rule(["get", "list"], ["batch"], ["jobs"]), _rule(["get"], ["apps"], ["deployments"])]
    edited["metadata"]["labels"] = {"mine": "yes"}
    out = reconcile_role(edited, JOBS).obj
    assert out is not None
    assert out["rules"][:2] == edited["rules"]
    missing = out["rules"][2:]  # broken down, one verb and resource each, as `Covers` returns them
    assert _rule(["patch"], ["batch"], ["jobs"]) in missing
    assert _rule(["update"], ["batch"], ["jobs/status"]) in missing
    assert _rule(["create"], ["events.k8s.io"], ["events"]) in missing
    assert _rule(["get"], ["batch"], ["jobs"]) not in missing
    assert out["metadata"]["labels"] == {"kubernetes.io/bootstrapping": "rbac-defaults", "mine": "yes"}
    assert reconcile_role(out, JOBS).obj is None  # reconciled: nothing more to do


def test_autoupdate_false_leaves_an_object_alone() -> None:
    edited = copy.deepcopy(JOBS)
    edited["rules"] = []
    edited["metadata"]["annotations"] = {AUTOUPDATE_ANNOTATION: "false"}
    assert reconcile_role(edited, JOBS).obj is None


def test_a_binding_gets_its_subjects_back_and_a_changed_role_ref_is_recreated() -> None:
    expected = _objects("clusterrolebindings")[("", "system:basic-user")]
    edited = copy.deepcopy(expected)
    edited["subjects"] = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "jane"}]
    out = reconcile_binding(edited, expected)
    assert out.obj is not None and not out.recreate
    assert [s["name"] for s in out.obj["subjects"]] == ["jane", "system:authenticated"]
    edited["roleRef"] = {**edited["roleRef"], "name": "view"}
    out = reconcile_binding(edited, expected)
    assert out.recreate and out.obj is not None and out.obj["roleRef"]["name"] == "system:basic-user"


def test_a_start_puts_back_deleted_and_stripped_objects() -> None:
    async def main() -> None:
        service = await bootstrapped_service()
        roles = lookup("rbac.authorization.k8s.io", "v1", "clusterroles")
        bindings = lookup("rbac.authorization.k8s.io", "v1", "clusterrolebindings")
        assert roles is not None and bindings is not None
        name = "system:controller:job-controller"
        stripped = copy.deepcopy(service.get(roles, "", name))
        stripped["rules"] = [_rule(["get"], ["batch"], ["jobs"])]
        await service.update(roles, "", name, stripped)
        kept = copy.deepcopy(service.get(roles, "", "system:kube-dns"))
        kept["rules"] = []
        kept["metadata"]["annotations"] = {AUTOUPDATE_ANNOTATION: "false"}
        await service.update(roles, "", "system:kube-dns", kept)
        await service.delete(bindings, "", "system:discovery", DeleteOptions())
        await service.ensure_rbac_bootstrap()  # the next start
        rules = service.get(roles, "", name)["rules"]
        assert _rule(["create"], [""], ["pods"]) in rules and rules[0] == _rule(["get"], ["batch"], ["jobs"])
        assert service.get(roles, "", "system:kube-dns")["rules"] == []
        assert service.get(bindings, "", "system:discovery")["subjects"][0]["name"] == "system:authenticated"

    asyncio.run(main())
