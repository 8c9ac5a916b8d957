"""RBAC's bootstrap policy: the roles and bindings kube-apiserver keeps at every start (pure data).

kube-apiserver's `rbac/bootstrap-roles` post-start hook (pkg/registry/rbac/rest/storage_rbac.go) reconciles the
objects of plugin/pkg/auth/authorizer/rbac/bootstrappolicy/: policy.go (`ClusterRoles()`, the user-facing and
component roles, and `ClusterRoleBindings()`), controller_policy.go (a `system:controller:*` role and binding per
controller of kube-controller-manager) and namespace_policy.go (Roles and RoleBindings of kube-system and
kube-public). Every one is labelled `kubernetes.io/bootstrapping: rbac-defaults` and annotated
`rbac.authorization.kubernetes.io/autoupdate: "true"` (`addDefaultMetadata`). Their content is that of the
package's testdata/*.yaml, at the commits named where each part begins (the search index holds no 1.32 copy of
them; tests/server/test_rbac_bootstrap.py compares these objects with a trimmed copy of those files).
`kjobs.server.rbacreconcile` says what happens to one a user changed.

kjobs' own components hold `system:masters` credentials: the component and controller roles grant nothing to
them; they are here because a cluster has them (`kubectl get clusterroles`, manifests binding to `system:node-
proxier` or `system:auth-delegator`, `kubectl auth can-i --as=system:serviceaccount:kube-system:job-controller`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
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
"""The bootstrap ClusterRoles of policy.go `ClusterRoles()`, in testdata/cluster-roles.yaml's order (by name;
`_COMPONENT_ROLES` below are merged in)."""


def _binding(role: str, *groups: str, users: tuple[str, ...] = (), accounts: tuple[str, ...] = ()) -> Obj:
    """A ClusterRoleBinding named as its ClusterRole, to groups, users and kube-system ServiceAccounts."""
    subjects = [{"apiGroup": GROUP, "kind": "Group", "name": g} for g in groups]
    subjects += [{"apiGroup": GROUP, "kind": "User", "name": u} for u in users]
    subjects += [{"kind": "ServiceAccount", "name": a, "namespace": "kube-system"} for a in accounts]
    binding: Obj = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": role,
            "labels": dict(BOOTSTRAP_LABELS),
            "annotations": {AUTOUPDATE_ANNOTATION: "true"},
        },
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
    }
    if subjects:
        binding["subjects"] = subjects
    return binding


CLUSTER_ROLE_BINDINGS: list[Obj] = [
    _binding("cluster-admin", "system:masters"),
    _binding("system:basic-user", AUTHENTICATED),
    _binding("system:discovery", AUTHENTICATED),
    _binding("system:kube-controller-manager", users=("system:kube-controller-manager",)),
    _binding("system:kube-dns", accounts=("kube-dns",)),
    _binding("system:kube-scheduler", users=("system:kube-scheduler",)),
    _binding("system:monitoring", "system:monitoring"),
    # deprecated since the Node authorizer (1.7): kept without subjects, so that reconciliation adds none
    _binding("system:node"),
    _binding("system:node-proxier", users=("system:kube-proxy",)),
    _binding("system:public-info-viewer", AUTHENTICATED, UNAUTHENTICATED),
    _binding("system:service-account-issuer-discovery", "system:serviceaccounts"),
    _binding("system:volume-scheduler", users=("system:kube-scheduler",)),
]
"""policy.go `ClusterRoleBindings()`, by name as testdata/cluster-role-bindings.yaml lists them."""


# ---------------------------------------------------------------------------------------------- controllers
#
# controller_policy.go: one ClusterRole `system:controller:NAME` per controller of kube-controller-manager, and a
# ClusterRoleBinding of the same name to the ServiceAccount `kube-system/NAME` the controller runs as. The rules
# are testdata/controller-roles.yaml's at 008b3652959ca58af8be3fb5b6ecfe9ae7638282 (a release after 1.32: it
# has `device-taint-eviction-controller`, and `service-cidrs-controller` outside the feature-gated file), written
# compactly: verbs, API groups and resources as space-separated words, `core` for the core group "".


def _r(verbs: str, groups: str, resources: str, names: str = "") -> Obj:
    """A rule from words: `_r("get list", "core apps", "pods")`."""
    rule: Obj = {
        "verbs": verbs.split(),
        "apiGroups": ["" if g == "core" else g for g in groups.split()],
        "resources": resources.split(),
    }
    if names:
        rule["resourceNames"] = names.split()
    return rule


_EVENTS = _r("create patch update", "core events.k8s.io", "events")
_GLW = "get list watch"
_ALL = "create delete get list patch update watch"

CONTROLLER_ROLE_RULES: dict[str, list[Obj]] = {
    "attachdetach-controller": [
        _r("list watch", "core", "persistentvolumeclaims persistentvolumes"),
        _r(_GLW, "core", "nodes"),
        _r("patch update", "core", "nodes/status"),
        _r("list watch", "core", "pods"),
        _EVENTS,
        _r("create delete get list watch", "storage.k8s.io", "volumeattachments"),
        _r(_GLW, "storage.k8s.io", "csidrivers"),
        _r(_GLW, "storage.k8s.io", "csinodes"),
    ],
    "certificate-controller": [
        _r("delete get list watch", "certificates.k8s.io", "certificatesigningrequests"),
        _r("update", "certificates.k8s.io", "certificatesigningrequests/approval certificatesigningrequests/status"),
        _r("approve", "certificates.k8s.io", "signers", "kubernetes.io/kube-apiserver-client-kubelet"),
        _r(
            "sign",
            "certificates.k8s.io",
            "signers",
            "kubernetes.io/kube-apiserver-client kubernetes.io/kube-apiserver-client-kubelet "
            "kubernetes.io/kubelet-serving kubernetes.io/legacy-unknown",
        ),
        _r("create", "authorization.k8s.io", "subjectaccessreviews"),
        _EVENTS,
    ],
    "clusterrole-aggregation-controller": [
        _r("escalate get list patch update watch", GROUP, "clusterroles"),
    ],
    "cronjob-controller": [
        _r("get list update watch", "batch", "cronjobs"),
        _r(_ALL, "batch", "jobs"),
        _r("update", "batch", "cronjobs/status"),
        _r("update", "batch", "cronjobs/finalizers"),
        _r("delete list watch", "core", "pods"),
        _EVENTS,
    ],
    "daemon-set-controller": [
        _r(_GLW, "apps extensions", "daemonsets"),
        _r("update", "apps extensions", "daemonsets/status"),
        _r("update", "apps extensions", "daemonsets/finalizers"),
        _r("list watch", "core", "nodes"),
        _r("create delete list patch watch", "core", "pods"),
        _r("create", "core", "pods/binding"),
        _r(_ALL, "apps", "controllerrevisions"),
        _EVENTS,
    ],
    "deployment-controller": [
        _r("get list update watch", "apps extensions", "deployments"),
        _r("update", "apps extensions", "deployments/status"),
        _r("update", "apps extensions", "deployments/finalizers"),
        _r(_ALL, "apps extensions", "replicasets"),
        _r("get list update watch", "core", "pods"),
        _EVENTS,
    ],
    "device-taint-eviction-controller": [
        _r("delete get list watch", "core", "pods"),
        _r("patch update", "core", "pods/status"),
        _r(_GLW, "resource.k8s.io", "resourceclaims"),
        _r(_GLW, "resource.k8s.io", "resourceslices"),
        _r(_GLW, "resource.k8s.io", "deviceclasses"),
        _EVENTS,
    ],
    "disruption-controller": [
        _r(_GLW, "apps extensions", "deployments"),
        _r(_GLW, "apps extensions", "replicasets"),
        _r(_GLW, "core", "replicationcontrollers"),
        _r(_GLW, "policy", "poddisruptionbudgets"),
        _r(_GLW, "apps", "statefulsets"),
        _r("update", "policy", "poddisruptionbudgets/status"),
        _r("patch update", "core", "pods/status"),
        _r("get", "*", "*/scale"),
        _EVENTS,
    ],
    "endpoint-controller": [
        _r(_GLW, "core", "pods services"),
        _r("create delete get list update watch", "core", "endpoints"),
        _r("create", "core", "endpoints/restricted"),
        _EVENTS,
    ],
    "endpointslice-controller": [
        _r(_GLW, "core", "nodes pods services"),
        _r("update", "core", "services/finalizers"),
        _r("create delete get list update watch", "discovery.k8s.io", "endpointslices"),
        _EVENTS,
    ],
    "endpointslicemirroring-controller": [
        _r(_GLW, "core", "endpoints services"),
        _r("update", "core", "services/finalizers"),
        _r("update", "core", "endpoints/finalizers"),
        _r("create delete get list update watch", "discovery.k8s.io", "endpointslices"),
        _EVENTS,
    ],
    "ephemeral-volume-controller": [
        _r(_GLW, "core", "pods"),
        _r("update", "core", "pods/finalizers"),
        _r("create get list watch", "core", "persistentvolumeclaims"),
        _EVENTS,
    ],
    "expand-controller": [
        _r("get list patch update watch", "core", "persistentvolumes"),
        _r("patch update", "core", "persistentvolumeclaims/status"),
        _r(_GLW, "core", "persistentvolumeclaims"),
        _EVENTS,
    ],
    "generic-garbage-collector": [
        _r("delete get list patch update watch", "*", "*"),
        _EVENTS,
    ],
    "horizontal-pod-autoscaler": [
        _r(_GLW, "autoscaling", "horizontalpodautoscalers"),
        _r("update", "autoscaling", "horizontalpodautoscalers/status"),
        _r("get update", "*", "*/scale"),
        _r("list watch", "core", "pods"),
        _r("list watch", "metrics.k8s.io", "pods"),
        _r(_GLW, "custom.metrics.k8s.io", "*"),
        _r(_GLW, "external.metrics.k8s.io", "*"),
        _EVENTS,
    ],
    "job-controller": [
        _r("get list patch update watch", "batch", "jobs"),
        _r("update", "batch", "jobs/status"),
        _r("update", "batch", "jobs/finalizers"),
        _r("create delete list patch watch", "core", "pods"),
        _EVENTS,
    ],
    "legacy-service-account-token-cleaner": [
        _r("get", "core", "configmaps", "kube-apiserver-legacy-service-account-token-tracking"),
        _r("delete patch", "core", "secrets"),
    ],
    "namespace-controller": [
        _r("delete get list watch", "core", "namespaces"),
        _r("update", "core", "namespaces/finalize namespaces/status"),
        _r("delete deletecollection get list watch", "*", "*"),
    ],
    "node-controller": [
        _r("delete get list patch update watch", "core", "nodes"),
        _r("patch update", "core", "nodes/status"),
        _r("patch update", "core", "pods/status"),
        _r("delete get list watch", "core", "pods"),
        _EVENTS,
    ],
    "persistent-volume-binder": [
        _r("create delete get list update watch", "core", "persistentvolumes"),
        _r("update", "core", "persistentvolumes/status"),
        _r("get list update watch", "core", "persistentvolumeclaims"),
        _r("update", "core", "persistentvolumeclaims/status"),
        _r("create delete get list watch", "core", "pods"),
        _r(_GLW, "storage.k8s.io", "storageclasses"),
        _r("list watch", "core", "nodes"),
        _EVENTS,
        _r("watch", "core", "events"),
    ],
    "pod-garbage-collector": [
        _r("delete list watch", "core", "pods"),
        _r(_GLW, "core", "nodes"),
        _r("patch", "core", "pods/status"),
    ],
    "pv-protection-controller": [
        _r("get list update watch", "core", "persistentvolumes"),
        _EVENTS,
    ],
    "pvc-protection-controller": [
        _r("get list update watch", "core", "persistentvolumeclaims"),
        _r("update", "core", "persistentvolumeclaims/status"),
        _r(_GLW, "core", "pods"),
        _EVENTS,
    ],
    "replicaset-controller": [
        _r("get list update watch", "apps extensions", "replicasets"),
        _r("update", "apps extensions", "replicasets/status"),
        _r("update", "apps extensions", "replicasets/finalizers"),
        _r("create delete list patch watch", "core", "pods"),
        _EVENTS,
    ],
    "replication-controller": [
        _r("get list update watch", "core", "replicationcontrollers"),
        _r("update", "core", "replicationcontrollers/status"),
        _r("update", "core", "replicationcontrollers/finalizers"),
        _r("create delete list patch watch", "core", "pods"),
        _EVENTS,
    ],
    "resource-claim-controller": [
        _r(_GLW, "core", "pods"),
        _r("update", "core", "pods/finalizers"),
        _r("create delete get list watch", "resource.k8s.io", "resourceclaims"),
        _r("patch update", "resource.k8s.io", "resourceclaims resourceclaims/status"),
        _r("patch update", "core", "pods/status"),
        _EVENTS,
        _r("patch update", "resource.k8s.io", "resourceclaims/binding"),
    ],
    "resourcequota-controller": [
        _r("list watch", "*", "*"),
        _r("update", "core", "resourcequotas/status"),
        _EVENTS,
    ],
    "root-ca-cert-publisher": [
        _r("create update", "core", "configmaps"),
        _EVENTS,
    ],
    "route-controller": [
        _r("list watch", "core", "nodes"),
        _r("patch", "core", "nodes/status"),
        _EVENTS,
    ],
    "selinux-warning-controller": [
        _EVENTS,
        _r(_GLW, "core", "persistentvolumes"),
        _r(_GLW, "core", "persistentvolumeclaims"),
        _r(_GLW, "core", "pods"),
        _r(_GLW, "storage.k8s.io", "csidrivers"),
    ],
    "service-account-controller": [
        _r("create", "core", "serviceaccounts"),
        _EVENTS,
    ],
    "service-cidrs-controller": [
        _r("get list patch update watch", "networking.k8s.io", "servicecidrs"),
        _r("patch update", "networking.k8s.io", "servicecidrs/finalizers"),
        _r("patch update", "networking.k8s.io", "servicecidrs/status"),
        _r(_GLW, "networking.k8s.io", "ipaddresses"),
        _EVENTS,
    ],
    "service-controller": [
        _r(_GLW, "core", "services"),
        _r("patch update", "core", "services/status"),
        _r("list watch", "core", "nodes"),
        _EVENTS,
    ],
    "statefulset-controller": [
        _r("list watch", "core", "pods"),
        _r(_GLW, "apps", "statefulsets"),
        _r("update", "apps", "statefulsets/status"),
        _r("update", "apps", "statefulsets/finalizers"),
        _r("create delete get patch update", "core", "pods"),
        _r(_ALL, "apps", "controllerrevisions"),
        _r("create get list watch", "core", "persistentvolumeclaims"),
        _r("delete update", "core", "persistentvolumeclaims"),
        _r("update", "core", "pods/finalizers"),
        _EVENTS,
    ],
    "ttl-after-finished-controller": [
        _r("delete get list watch", "batch", "jobs"),
        _EVENTS,
    ],
    "ttl-controller": [
        _r("list patch update watch", "core", "nodes"),
        _EVENTS,
    ],
    "validatingadmissionpolicy-status-controller": [
        _r(_GLW, "admissionregistration.k8s.io", "validatingadmissionpolicies"),
        _r("get patch update", "admissionregistration.k8s.io", "validatingadmissionpolicies/status"),
        _EVENTS,
    ],
    "volumeattributesclass-protection-controller": [
        _r(_GLW, "core", "persistentvolumeclaims"),
        _r(_GLW, "core", "persistentvolumes"),
        _r("get list update watch", "storage.k8s.io", "volumeattributesclasses"),
        _EVENTS,
    ],
}
"""Each controller's rules, by the name of the ServiceAccount it runs as (testdata/controller-roles.yaml)."""

CONTROLLER_ROLES: list[Obj] = [
    _role(f"system:controller:{name}", copy.deepcopy(rules)) for name, rules in CONTROLLER_ROLE_RULES.items()
]
CONTROLLER_ROLE_BINDINGS: list[Obj] = [
    {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": f"system:controller:{name}",
            "labels": dict(BOOTSTRAP_LABELS),
            "annotations": {AUTOUPDATE_ANNOTATION: "true"},
        },
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": f"system:controller:{name}"},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "kube-system"}],
    }
    for name in CONTROLLER_ROLE_RULES
]
"""controller_policy.go `ControllerRoleBindings()`: each controller's role to its ServiceAccount in kube-system."""


# ---------------------------------------------------------------------------------------------- namespaces
#
# namespace_policy.go: Roles and RoleBindings of kube-system and kube-public (testdata/namespace-roles.yaml and
# namespace-role-bindings.yaml at 008b3652959ca58af8be3fb5b6ecfe9ae7638282), in those files' order.

_LEASES = "create get list update watch"
_SA = "ServiceAccount"
_USER = "User"

NAMESPACE_ROLE_RULES: list[tuple[str, str, list[Obj]]] = [
    (
        "kube-public",
        "system:controller:bootstrap-signer",
        [_r(_GLW, "core", "configmaps"), _r("update", "core", "configmaps", "cluster-info"), _EVENTS],
    ),
    (
        "kube-system",
        "extension-apiserver-authentication-reader",
        [_r(_GLW, "core", "configmaps", "extension-apiserver-authentication")],
    ),
    (
        "kube-system",
        "system::leader-locking-kube-controller-manager",
        [_r(_LEASES, "coordination.k8s.io", "leases"), _r(_LEASES, "coordination.k8s.io", "leasecandidates")],
    ),
    (
        "kube-system",
        "system::leader-locking-kube-scheduler",
        [_r(_LEASES, "coordination.k8s.io", "leases"), _r(_LEASES, "coordination.k8s.io", "leasecandidates")],
    ),
    ("kube-system", "system:controller:bootstrap-signer", [_r(_GLW, "core", "secrets")]),
    ("kube-system", "system:controller:cloud-provider", [_r("create get list watch", "core", "configmaps")]),
    ("kube-system", "system:controller:token-cleaner", [_r("delete get list watch", "core", "secrets"), _EVENTS]),
]

NAMESPACE_ROLE_BINDING_SUBJECTS: list[tuple[str, str, str, list[tuple[str, str]]]] = [
    (
        "kube-public",
        "system:controller:bootstrap-signer",
        "system:controller:bootstrap-signer",
        [(_SA, "bootstrap-signer")],
    ),
    (
        "kube-system",
        "system::extension-apiserver-authentication-reader",
        "extension-apiserver-authentication-reader",
        [(_USER, "system:kube-controller-manager"), (_USER, "system:kube-scheduler")],
    ),
    (
        "kube-system",
        "system::leader-locking-kube-controller-manager",
        "system::leader-locking-kube-controller-manager",
        [
            (_USER, "system:kube-controller-manager"),
            (_SA, "kube-controller-manager"),
            (_SA, "leader-election-controller"),
        ],
    ),
    (
        "kube-system",
        "system::leader-locking-kube-scheduler",
        "system::leader-locking-kube-scheduler",
        [(_USER, "system:kube-scheduler"), (_SA, "kube-scheduler")],
    ),
    (
        "kube-system",
        "system:controller:bootstrap-signer",
        "system:controller:bootstrap-signer",
        [(_SA, "bootstrap-signer")],
    ),
    ("kube-system", "system:controller:cloud-provider", "system:controller:cloud-provider", [(_SA, "cloud-provider")]),
    ("kube-system", "system:controller:token-cleaner", "system:controller:token-cleaner", [(_SA, "token-cleaner")]),
]
"""(namespace, binding, Role, subjects): a ServiceAccount subject is of kube-system, a User one of RBAC's group."""


def _subject(kind: str, name: str) -> Obj:
    if kind == _SA:
        return {"kind": kind, "name": name, "namespace": "kube-system"}
    return {"apiGroup": GROUP, "kind": kind, "name": name}


def _meta(name: str, namespace: str = "") -> Obj:
    meta: Obj = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = dict(BOOTSTRAP_LABELS)
    meta["annotations"] = {AUTOUPDATE_ANNOTATION: "true"}
    return meta


NAMESPACE_ROLES: list[Obj] = [
    {"apiVersion": f"{GROUP}/v1", "kind": "Role", "metadata": _meta(name, ns), "rules": copy.deepcopy(rules)}
    for ns, name, rules in NAMESPACE_ROLE_RULES
]
NAMESPACE_ROLE_BINDINGS: list[Obj] = [
    {
        "apiVersion": f"{GROUP}/v1",
        "kind": "RoleBinding",
        "metadata": _meta(name, ns),
        "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": role},
        "subjects": [_subject(kind, subject) for kind, subject in subjects],
    }
    for ns, name, role, subjects in NAMESPACE_ROLE_BINDING_SUBJECTS
]


# ---------------------------------------------------------------------------------------------- components
#
# policy.go's roles of the components (kubelet, scheduler, controller manager, kube-proxy, kube-dns, the
# certificate approvers, ...), testdata/cluster-roles.yaml at 025f2834a128798cef30018a5e6a6ae82b5ad885 (the
# commit the roles above were taken from). No kjobs component acts as these users; they grant what a cluster's
# would, to whoever is bound to them.

_CSR = "certificates.k8s.io"


def _approver(signer: str) -> list[Obj]:
    return [_r("approve", _CSR, "signers", f"kubernetes.io/{signer}")]


_COMPONENT_ROLES: dict[str, list[Obj]] = {
    "system:certificates.k8s.io:certificatesigningrequests:nodeclient": [
        _r("create", _CSR, "certificatesigningrequests/nodeclient")
    ],
    "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient": [
        _r("create", _CSR, "certificatesigningrequests/selfnodeclient")
    ],
    "system:certificates.k8s.io:kube-apiserver-client-approver": _approver("kube-apiserver-client"),
    "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver": _approver("kube-apiserver-client-kubelet"),
    "system:certificates.k8s.io:kubelet-serving-approver": _approver("kubelet-serving"),
    "system:certificates.k8s.io:legacy-unknown-approver": _approver("legacy-unknown"),
    "system:heapster": [
        _r(_GLW, "core", "events namespaces nodes pods"),
        _r(_GLW, "extensions", "deployments"),
    ],
    "system:kube-aggregator": [_r(_GLW, "core", "endpoints services")],
    "system:kube-controller-manager": [
        _EVENTS,
        _r("create", "coordination.k8s.io", "leases"),
        _r("get update", "coordination.k8s.io", "leases", "kube-controller-manager"),
        _r("create", "core", "secrets serviceaccounts"),
        _r("delete", "core", "secrets"),
        _r("get", "core", "configmaps namespaces secrets serviceaccounts"),
        _r("update", "core", "secrets serviceaccounts"),
        _r("create", "authentication.k8s.io", "tokenreviews"),
        _r("create", "authorization.k8s.io", "subjectaccessreviews"),
        _r("list watch", "*", "*"),
        _r("create", "core", "serviceaccounts/token"),
    ],
    "system:kube-dns": [_r("list watch", "core", "endpoints services")],
    "system:kube-scheduler": [
        _EVENTS,
        _r("create", "coordination.k8s.io", "leases"),
        _r("get update", "coordination.k8s.io", "leases", "kube-scheduler"),
        _r(_GLW, "core", "nodes"),
        _r("delete get list watch", "core", "pods"),
        _r("create", "core", "bindings pods/binding"),
        _r("patch update", "core", "pods/status"),
        _r(_GLW, "core", "replicationcontrollers services"),
        _r(_GLW, "apps extensions", "replicasets"),
        _r(_GLW, "apps", "statefulsets"),
        _r(_GLW, "policy", "poddisruptionbudgets"),
        _r(_GLW, "core", "persistentvolumeclaims persistentvolumes"),
        _r("create", "authentication.k8s.io", "tokenreviews"),
        _r("create", "authorization.k8s.io", "subjectaccessreviews"),
        _r(_GLW, "storage.k8s.io", "csinodes"),
        _r(_GLW, "core", "namespaces"),
        _r(_GLW, "storage.k8s.io", "csidrivers"),
        _r(_GLW, "storage.k8s.io", "csistoragecapacities"),
    ],
    "system:kubelet-api-admin": [
        _r(_GLW, "core", "nodes"),
        _r("proxy", "core", "nodes"),
        _r("*", "core", "nodes/log nodes/metrics nodes/proxy nodes/stats"),
    ],
    "system:node": [
        _r("create", "authentication.k8s.io", "tokenreviews"),
        _r("create", "authorization.k8s.io", "localsubjectaccessreviews subjectaccessreviews"),
        _r(_GLW, "core", "services"),
        _r("create get list watch", "core", "nodes"),
        _r("patch update", "core", "nodes/status"),
        _r("patch update", "core", "nodes"),
        _r("create patch update", "core", "events"),
        _r(_GLW, "core", "pods"),
        _r("create delete", "core", "pods"),
        _r("patch update", "core", "pods/status"),
        _r("create", "core", "pods/eviction"),
        _r(_GLW, "core", "configmaps secrets"),
        _r("get", "core", "persistentvolumeclaims persistentvolumes"),
        _r("get", "core", "endpoints"),
        _r("create get list watch", _CSR, "certificatesigningrequests"),
        _r("create delete get patch update", "coordination.k8s.io", "leases"),
        _r("get", "storage.k8s.io", "volumeattachments"),
        _r("create", "core", "serviceaccounts/token"),
        _r("get patch update", "core", "persistentvolumeclaims/status"),
        _r(_GLW, "storage.k8s.io", "csidrivers"),
        _r("create delete get patch update", "storage.k8s.io", "csinodes"),
        _r(_GLW, "node.k8s.io", "runtimeclasses"),
    ],
    "system:node-bootstrapper": [_r("create get list watch", _CSR, "certificatesigningrequests")],
    "system:node-problem-detector": [
        _r("get", "core", "nodes"),
        _r("patch", "core", "nodes/status"),
        _EVENTS,
    ],
    "system:node-proxier": [
        _r("list watch", "core", "endpoints services"),
        _r(_GLW, "core", "nodes"),
        _EVENTS,
        _r("list watch", "discovery.k8s.io", "endpointslices"),
    ],
    "system:persistent-volume-provisioner": [
        _r("create delete get list watch", "core", "persistentvolumes"),
        _r("get list update watch", "core", "persistentvolumeclaims"),
        _r(_GLW, "storage.k8s.io", "storageclasses"),
        _r("watch", "core", "events"),
        _EVENTS,
    ],
    "system:service-account-issuer-discovery": [_urls("/.well-known/openid-configuration", "/openid/v1/jwks")],
    "system:volume-scheduler": [
        _r("get list patch update watch", "core", "persistentvolumes"),
        _r(_GLW, "storage.k8s.io", "storageclasses"),
        _r("get list patch update watch", "core", "persistentvolumeclaims"),
    ],
}
"""The components' ClusterRoles by name (testdata/cluster-roles.yaml)."""

CLUSTER_ROLES.extend(_role(name, copy.deepcopy(rules)) for name, rules in _COMPONENT_ROLES.items())
CLUSTER_ROLES.sort(key=lambda role: str(role["metadata"]["name"]))


def bootstrap_objects() -> Iterator[tuple[str, str, Obj]]:
    """(plural, namespace, object) of every bootstrap object, in the order the post-start hook reconciles them:
    ClusterRoles, ClusterRoleBindings, then the namespaced Roles and RoleBindings."""
    for role in (*CLUSTER_ROLES, *CONTROLLER_ROLES):
        yield "clusterroles", "", role
    for binding in (*CLUSTER_ROLE_BINDINGS, *CONTROLLER_ROLE_BINDINGS):
        yield "clusterrolebindings", "", binding
    for role in NAMESPACE_ROLES:
        yield "roles", role["metadata"]["namespace"], role
    for binding in NAMESPACE_ROLE_BINDINGS:
        yield "rolebindings", binding["metadata"]["namespace"], binding
