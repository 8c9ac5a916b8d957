"""RBAC's bootstrap policy: the ClusterRoles and ClusterRoleBindings kube-apiserver creates at start (pure data).

kube-apiserver's `rbac/bootstrap-roles` post-start hook (pkg/registry/rbac/rest/storage_rbac.go) creates, when
missing, the roles and bindings of plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go; their content here
is that of its testdata/cluster-roles.yaml (kubernetes/kubernetes at 025f2834a128798cef30018a5e6a6ae82b5ad885),
every one labelled `kubernetes.io/bootstrapping: rbac-defaults` and annotated
`rbac.authorization.kubernetes.io/autoupdate: "true"` (`addDefaultMetadata`).

Kept: the user-facing roles (`cluster-admin`, `admin`, `edit`, `view`, whose rules the aggregate-to roles give
them through their `aggregationRule`), the roles of what every user may do (`system:basic-user`,
`system:discovery`, `system:public-info-viewer`), `system:monitoring` and `system:auth-delegator`, with their
bindings. Left out: the roles of components kjobs does not run as separate users (`system:node`,
`system:kube-scheduler`, `system:kube-controller-manager`, the controllers' `system:controller:*` roles, kube-dns,
kube-proxy, the certificate approvers, the volume and heapster roles): kjobs' own components hold
`system:masters` credentials.
"""

from __future__ import annotations

from typing import Any

from kjobs.api.rbac import GROUP
from kjobs.api.types import Obj

BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE_ANNOTATION = "rbac.authorization.kubernetes.io/autoupdate"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"

_READ = ["get", "list", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]
_READ_WRITE = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def _rule(verbs: list[str], groups: list[str], resources: list[str]) -> Obj:
    return {"verbs": verbs, "apiGroups": groups, "resources": resources}


def _urls(*urls: str) -> Obj:
    return {"verbs": ["get"], "nonResourceURLs": list(urls)}


def _role(name: str, rules: list[Obj] | None, *, labels: dict[str, str] | None = None, **extra: Any) -> Obj:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": name,
            "labels": {**BOOTSTRAP_LABELS, **(labels or {})},
            "annotations": {AUTOUPDATE_ANNOTATION: "true"},
        },
        **extra,
        "rules": rules,
    }


def _aggregated(name: str, into: str | None = None) -> Obj:
    """One of `admin`/`edit`/`view`: rules made by aggregation of the roles labelled `aggregate-to-NAME`."""
    labels = {f"{GROUP}/aggregate-to-{into}": "true"} if into else None
    rule = {"clusterRoleSelectors": [{"matchLabels": {f"{GROUP}/aggregate-to-{name}": "true"}}]}
    return _role(name, None, labels=labels, aggregationRule=rule)


_VIEW_RULES = [
    _rule(_READ, [""], [
        "configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods",
        "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services", "services/status",
    ]),
    _rule(_READ, [""], [
        "bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status",
        "replicationcontrollers/status", "resourcequotas", "resourcequotas/status",
    ]),
    _rule(_READ, [""], ["namespaces"]),
    _rule(_READ, ["discovery.k8s.io"], ["endpointslices"]),
    _rule(_READ, ["apps"], [
        "controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale",
        "deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets",
        "statefulsets/scale", "statefulsets/status",
    ]),
    _rule(_READ, ["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
    _rule(_READ, ["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
    _rule(_READ, ["extensions"], [
        "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status", "ingresses",
        "ingresses/status", "networkpolicies", "replicasets", "replicasets/scale", "replicasets/status",
        "replicationcontrollers/scale",
    ]),
    _rule(_READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
    _rule(_READ, ["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"]),
]  # fmt: skip

_EDIT_RULES = [
    _rule(_READ, [""], [
        "pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy",
    ]),
    _rule(["impersonate"], [""], ["serviceaccounts"]),
    _rule(_WRITE, [""], ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"]),
    _rule(["create"], [""], ["pods/eviction"]),
    _rule(_WRITE, [""], [
        "configmaps", "events", "persistentvolumeclaims", "replicationcontrollers", "replicationcontrollers/scale",
        "secrets", "serviceaccounts", "services", "services/proxy",
    ]),
    _rule(["create"], [""], ["serviceaccounts/token"]),
    _rule(_WRITE, ["apps"], [
        "daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets",
        "replicasets/scale", "statefulsets", "statefulsets/scale",
    ]),
    _rule(_WRITE, ["autoscaling"], ["horizontalpodautoscalers"]),
    _rule(_WRITE, ["batch"], ["cronjobs", "jobs"]),
    _rule(_WRITE, ["extensions"], [
        "daemonsets", "deployments", "deployments/rollback", "deployments/scale", "ingresses", "networkpolicies",
        "replicasets", "replicasets/scale", "replicationcontrollers/scale",
    ]),
    _rule(_WRITE, ["policy"], ["poddisruptionbudgets"]),
    _rule(_WRITE, ["networking.k8s.io"], ["ingresses", "networkpolicies"]),
    _rule(_READ_WRITE, ["coordination.k8s.io"], ["leases"]),
]  # fmt: skip

_ADMIN_RULES = [
    _rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
    _rule(_READ_WRITE, [GROUP], ["rolebindings", "roles"]),
]

CLUSTER_ROLES: list[Obj] = [
    _aggregated("admin"),
    _role("cluster-admin", [_rule(["*"], ["*"], ["*"]), {"verbs": ["*"], "nonResourceURLs": ["*"]}]),
    _aggregated("edit", into="admin"),
    _role("system:aggregate-to-admin", _ADMIN_RULES, labels={f"{GROUP}/aggregate-to-admin": "true"}),
    _role("system:aggregate-to-edit", _EDIT_RULES, labels={f"{GROUP}/aggregate-to-edit": "true"}),
    _role("system:aggregate-to-view", _VIEW_RULES, labels={f"{GROUP}/aggregate-to-view": "true"}),
    _role(
        "system:auth-delegator",
        [
            _rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
            _rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
        ],
    ),
    _role(
        "system:basic-user",
        [
            _rule(["create"], ["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
            _rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"]),
        ],
    ),
    _role(
        "system:discovery",
        [
            _urls(
                "/api",
                "/api/*",
                "/apis",
                "/apis/*",
                "/healthz",
                "/livez",
                "/openapi",
                "/openapi/*",
                "/readyz",
                "/version",
                "/version/",
            )
        ],
    ),
    _role(
        "system:monitoring",
        [_urls("/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis", "/readyz", "/readyz/*")],
    ),
    _role("system:public-info-viewer", [_urls("/healthz", "/livez", "/readyz", "/version", "/version/")]),
    _aggregated("view", into="edit"),
]
"""The bootstrap ClusterRoles kjobs creates, in testdata/cluster-roles.yaml's order."""


def _binding(role: str, *groups: str) -> Obj:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": role,
            "labels": dict(BOOTSTRAP_LABELS),
            "annotations": {AUTOUPDATE_ANNOTATION: "true"},
        },
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": GROUP, "kind": "Group", "name": g} for g in groups],
    }


CLUSTER_ROLE_BINDINGS: list[Obj] = [
    _binding("cluster-admin", "system:masters"),
    _binding("system:basic-user", AUTHENTICATED),
    _binding("system:discovery", AUTHENTICATED),
    _binding("system:monitoring", "system:monitoring"),
    _binding("system:public-info-viewer", AUTHENTICATED, UNAUTHENTICATED),
]
"""policy.go `ClusterRoleBindings()`, for the roles above (a binding to a left-out role is left out too)."""
