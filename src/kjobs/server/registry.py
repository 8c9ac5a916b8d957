"""The table of resources the server serves, with everything that differs between them.

The router and the request handlers are generic; whatever is specific to one resource lives in its
`Resource` row here: names for URLs and discovery (plural, singular, kind, short names, categories), scope,
subresources, the store key, whether writes split spec and status, whether `metadata.generation` tracks
spec changes, the default deletion propagation, graceful deletion, and
the defaulting/validation hooks of the core (`kjobs.api.defaults`, `kjobs.api.validation`).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kjobs.api.errors import FieldError
from kjobs.api.types import Obj, unchanged
from kjobs.server import schema
from kjobs.server.views import VIEWS

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
STATUS_VERBS = ["get", "patch", "update"]

Defaulter = Callable[[Obj], Obj]
Validator = Callable[[Obj], list[FieldError]]
UpdateValidator = Callable[[Obj, Obj], list[FieldError]]


def core_hook(module: str, name: str) -> Any:
    """A hook from the core packages, looked up when first used (None while that module has no such name)."""
    key = (module, name)
    if key in _hooks:
        return _hooks[key]
    try:
        hook = getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None
    if hook is not None:  # found hooks are kept: every request asks for them
        _hooks[key] = hook
    return hook


_hooks: dict[tuple[str, str], Any] = {}


@dataclass(frozen=True)
class Resource:
    """One served resource and its per-resource behaviour."""

    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    has_status: bool = True
    tracks_generation: bool = False
    default_propagation: str = "Background"
    orphan_warning: bool = False
    graceful: bool = False
    review: bool = False
    conditional_update: bool = False
    """An update must name a resourceVersion (the strategy's `AllowUnconditionalUpdate` is false: Lease,
    PodDisruptionBudget); otherwise one without it updates the latest (registry/store.go `Update`)."""
    only: tuple[str, ...] = ()
    hooks: dict[str, tuple[str, str]] = field(default_factory=dict)
    found: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    """`hook`'s answers found so far (`core_hook` keeps every hook it finds, so asking it again gives the same):
    the API service's write path reads a hook here first (`r.found.get(name) or r.hook(name)`), a call fewer."""

    @property
    def verbs(self) -> list[str]:
        """The verbs served (and listed by discovery): all of `VERBS` unless `only` names fewer; a review (a
        question asked by POSTing it, answered and never stored) is created only."""
        if self.review:
            return ["create"]
        return list(self.only) if self.only else VERBS

    @functools.cached_property
    def api_version(self) -> str:
        """`batch/v1` or `v1` (of fields that never change: read on every request, computed once)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @functools.cached_property
    def store_key(self) -> str:
        """The resource string the store uses (`jobs.batch`, `pods`, `leases.coordination.k8s.io`), computed once
        (read several times a write)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def is_view(self) -> bool:
        """Whether this resource serves objects stored as another resource (`kjobs.server.views`): code that
        visits every stored object skips it, having seen them under the other."""
        return self.store_key in VIEWS

    @property
    def list_kind(self) -> str:
        """`JobList`."""
        return self.kind + "List"

    @functools.cached_property
    def schema_name(self) -> str | None:
        """The OpenAPI schema of this kind."""
        return schema.schema_name(self.group, self.version, self.kind)

    def spec_changed(self, new: Obj, old: Obj) -> bool:
        """Whether an update changes what `metadata.generation` counts (for the built-in kinds: `spec`)."""
        return not unchanged(new.get("spec"), old.get("spec"))

    def unknown_fields(self, body: Obj) -> list[str] | None:
        """The unknown fields of a body by this resource's own schema (a custom resource's), or None: the
        built-in schemas decide (`kjobs.server.decoding`)."""
        return None

    def hook(self, name: str) -> Any:
        """The core's function for `name` (`default`, `default_update`, `default_status`, `validate`, `validate_update`,
        `validate_status_update`, `drop_disabled`); `validate`/`validate_update` take `features=`."""
        found = self.found.get(name)
        if found is not None:  # every write asks for two or three: a read here, not two calls
            return found
        target = self.hooks.get(name)
        found = core_hook(*target) if target else None
        if found is not None:
            self.found[name] = found
        return found


_DEFAULTS = "kjobs.api.defaults"
_VALIDATION = "kjobs.api.validation"
_DISABLED = "kjobs.api.disabled_fields"
_CONFIG = "kjobs.api.config_objects"
_EVENTS = "kjobs.api.events_v1"
_SCHEDULING = "kjobs.api.validation_scheduling"
_COORDINATION = "kjobs.api.validation_coordination"
_NAMESPACE = "kjobs.api.validation_namespace"
_RBAC = "kjobs.api.rbac"
_STORAGE = "kjobs.api.storage"

RESOURCES: list[Resource] = [
    Resource(
        "",
        "v1",
        "namespaces",
        "namespace",
        "Namespace",
        False,
        ("ns",),
        subresources=("status", "finalize"),
        # no deletecollection: the namespace registry has no DeleteCollection (pkg/registry/core/namespace/storage)
        only=("create", "delete", "get", "list", "patch", "update", "watch"),
        hooks={
            "default": (_DEFAULTS, "default_namespace_in_place"),
            "default_update": (_DEFAULTS, "default_namespace_update_in_place"),
            "default_status": (_DEFAULTS, "default_namespace_status_in_place"),
            "default_finalize": (_DEFAULTS, "default_namespace_finalize_in_place"),
            "validate": (_NAMESPACE, "validate_namespace"),
            "validate_update": (_NAMESPACE, "validate_namespace_update"),
            "validate_status_update": (_NAMESPACE, "validate_namespace_status_update"),
            "validate_finalize_update": (_NAMESPACE, "validate_namespace_finalize_update"),
        },
    ),
    Resource(
        "",
        "v1",
        "nodes",
        "node",
        "Node",
        False,
        ("no",),
        subresources=("proxy", "status"),
        hooks={
            "validate": ("kjobs.api.validation_node", "validate_node"),
            "validate_update": ("kjobs.api.validation_node", "validate_node_update"),
            "validate_status_update": ("kjobs.api.validation_node", "validate_node_status_update"),
            "drop_disabled": ("kjobs.api.validation_node", "drop_node_config_source"),
        },
    ),
    Resource(
        "",
        "v1",
        "pods",
        "pod",
        "Pod",
        True,
        ("po",),
        ("all",),
        subresources=(
            "status",
            "log",
            "exec",
            "attach",
            "portforward",
            "proxy",
            "eviction",
            "binding",
            "ephemeralcontainers",
        ),
        graceful=True,
        # PodObservedGenerationTracking, GA in 1.35: a pod is created with generation 1 and gets one more per
        # spec change (pkg/registry/core/pod/strategy.go `PrepareForCreate`, `updatePodGeneration`)
        tracks_generation=True,
        hooks={
            "default": (_DEFAULTS, "default_api_pod_in_place"),
            "default_update": (_DEFAULTS, "default_pod_update_in_place"),
            "validate": (_VALIDATION, "validate_pod"),
            "validate_update": (_VALIDATION, "validate_pod_update"),
            "validate_status_update": ("kjobs.api.validation_pod_status", "validate_pod_status_update"),
            "validate_ephemeralcontainers_update": (
                "kjobs.api.validation_pod_update",
                "validate_pod_ephemeral_containers_update",
            ),
            "drop_disabled": (_DISABLED, "drop_disabled_pod_fields"),
            "warnings": ("kjobs.api.validation_warnings", "warnings_for_pod"),
        },
    ),
    Resource(
        "",
        "v1",
        "events",
        "event",
        "Event",
        True,
        ("ev",),
        has_status=False,
        hooks={"validate": (_EVENTS, "validate_event"), "validate_update": (_EVENTS, "validate_event_update")},
    ),
    # stored, listed and validated, with cluster IPs and node ports allocated (kjobs.api.services,
    # kjobs.server.serviceips); nothing routes to them: kjobs runs no kube-proxy and no cluster DNS
    Resource(
        "",
        "v1",
        "services",
        "service",
        "Service",
        True,
        ("svc",),
        ("all",),
        subresources=("proxy", "status"),
        hooks={
            "default": ("kjobs.api.services", "default_service_in_place"),
            "default_status": ("kjobs.api.services", "default_service_status_in_place"),
            "validate": ("kjobs.api.services", "validate_service"),
            "validate_update": ("kjobs.api.services", "validate_service_update"),
            "validate_status_update": ("kjobs.api.services", "validate_service_status_update"),
        },
    ),
    # kept by the endpoint controllers (kjobs.controllers.endpoints; kjobs up) and kube-apiserver's endpoint
    # reconciler for the kubernetes Service: pkg/registry/core/endpoint (short name ep) and
    # pkg/registry/discovery/endpointslice (no short name)
    Resource(
        "",
        "v1",
        "endpoints",
        "endpoints",
        "Endpoints",
        True,
        ("ep",),
        has_status=False,
        hooks={
            "default": ("kjobs.api.endpoints", "default_endpoints_in_place"),
            "default_update": ("kjobs.api.endpoints", "default_endpoints_update_in_place"),
            "validate": ("kjobs.api.endpoints", "validate_endpoints"),
            "validate_update": ("kjobs.api.endpoints", "validate_endpoints_update"),
        },
    ),
    Resource(
        "discovery.k8s.io",
        "v1",
        "endpointslices",
        "endpointslice",
        "EndpointSlice",
        True,
        has_status=False,
        hooks={
            "default": ("kjobs.api.endpoints", "default_endpoint_slice_in_place"),
            "default_update": ("kjobs.api.endpoints", "default_endpoint_slice_update_in_place"),
            "validate": ("kjobs.api.endpoints", "validate_endpoint_slice"),
            "validate_update": ("kjobs.api.endpoints", "validate_endpoint_slice_update"),
        },
    ),
    Resource(
        "",
        "v1",
        "configmaps",
        "configmap",
        "ConfigMap",
        True,
        ("cm",),
        has_status=False,
        hooks={
            "default": (_CONFIG, "default_config_map_in_place"),
            "validate": (_CONFIG, "validate_config_map"),
            "validate_update": (_CONFIG, "validate_config_map_update"),
        },
    ),
    Resource(
        "",
        "v1",
        "secrets",
        "secret",
        "Secret",
        True,
        has_status=False,
        hooks={
            "default": (_CONFIG, "default_secret_in_place"),
            "validate": (_CONFIG, "validate_secret"),
            "validate_update": (_CONFIG, "validate_secret_update"),
        },
    ),
    # pkg/registry/core/resourcequota (short name quota; status written by the quota controller and by quota
    # admission, kjobs.server.quota) and pkg/registry/core/limitrange (short name limits; no status)
    Resource(
        "",
        "v1",
        "resourcequotas",
        "resourcequota",
        "ResourceQuota",
        True,
        ("quota",),
        subresources=("status",),
        hooks={
            "validate": ("kjobs.api.validation_quota", "validate_resource_quota"),
            "validate_update": ("kjobs.api.validation_quota", "validate_resource_quota_update"),
            "validate_status_update": ("kjobs.api.validation_quota", "validate_resource_quota_status_update"),
        },
    ),
    Resource(
        "",
        "v1",
        "limitranges",
        "limitrange",
        "LimitRange",
        True,
        ("limits",),
        has_status=False,
        hooks={
            "default": ("kjobs.api.validation_quota", "default_limit_range_in_place"),
            "validate": ("kjobs.api.validation_quota", "validate_limit_range"),
            "validate_update": ("kjobs.api.validation_quota", "validate_limit_range_update"),
        },
    ),
    # pkg/registry/core/serviceaccount: short name `sa`, no categories; `token` issues a TokenRequest
    # (kjobs.server.satokens)
    Resource(
        "",
        "v1",
        "serviceaccounts",
        "serviceaccount",
        "ServiceAccount",
        True,
        ("sa",),
        subresources=("token",),
        has_status=False,
        hooks={
            "default": ("kjobs.api.service_accounts", "default_service_account_in_place"),
            "default_update": ("kjobs.api.service_accounts", "default_service_account_update_in_place"),
            "validate": ("kjobs.api.service_accounts", "validate_service_account"),
            "validate_update": ("kjobs.api.service_accounts", "validate_service_account_update"),
            "warnings": ("kjobs.api.service_accounts", "warnings_for_service_account"),
        },
    ),
    Resource(
        "batch",
        "v1",
        "jobs",
        "job",
        "Job",
        True,
        (),
        ("all",),
        subresources=("status",),
        tracks_generation=True,
        default_propagation="Orphan",
        orphan_warning=True,
        hooks={
            "default": (_DEFAULTS, "default_job_in_place"),
            "validate": (_VALIDATION, "validate_job"),
            "validate_update": (_VALIDATION, "validate_job_for_update"),
            "validate_status_update": (_VALIDATION, "validate_job_status_update"),
            "drop_disabled": (_DISABLED, "drop_disabled_job_fields"),
            "warnings": ("kjobs.api.validation_warnings", "warnings_for_job"),
        },
    ),
    Resource(
        "batch",
        "v1",
        "cronjobs",
        "cronjob",
        "CronJob",
        True,
        ("cj",),
        ("all",),
        subresources=("status",),
        tracks_generation=True,
        hooks={
            "default": (_DEFAULTS, "default_cronjob_in_place"),
            "validate": ("kjobs.api.validation_cronjob", "validate_cronjob"),
            "validate_update": ("kjobs.api.validation_cronjob", "validate_cronjob_update"),
            "warnings": ("kjobs.api.validation_warnings", "warnings_for_cronjob"),
        },
    ),
    # the core Events again, in events.k8s.io/v1 (a view: kjobs.server.views)
    Resource(
        "events.k8s.io",
        "v1",
        "events",
        "event",
        "Event",
        True,
        ("ev",),
        has_status=False,
        hooks={"validate": (_EVENTS, "validate_event_v1"), "validate_update": (_EVENTS, "validate_event_v1_update")},
    ),
    Resource(
        "coordination.k8s.io",
        "v1",
        "leases",
        "lease",
        "Lease",
        True,
        has_status=False,
        conditional_update=True,
        hooks={
            "validate": (_COORDINATION, "validate_lease"),
            "validate_update": (_COORDINATION, "validate_lease_update"),
            "drop_disabled": (_COORDINATION, "drop_disabled_lease_fields"),
        },
    ),
    Resource(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        "PodDisruptionBudget",
        True,
        ("pdb",),
        subresources=("status",),
        tracks_generation=True,
        conditional_update=True,
        hooks={
            "default": ("kjobs.api.validation_policy", "convert_pdb_in_place"),
            "validate": ("kjobs.api.validation_policy", "validate_pdb"),
            "validate_update": ("kjobs.api.validation_policy", "validate_pdb_update"),
            "validate_status_update": ("kjobs.api.validation_policy", "validate_pdb_status_update"),
        },
    ),
    Resource(
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "priorityclass",
        "PriorityClass",
        False,
        ("pc",),
        has_status=False,
        hooks={
            "default": (_SCHEDULING, "default_priority_class_in_place"),
            "validate": (_SCHEDULING, "validate_priority_class"),
            "validate_update": (_SCHEDULING, "validate_priority_class_update"),
        },
    ),
    # pkg/registry/core/persistentvolume{,claim} and pkg/registry/storage/storageclass (kjobs.api.storage); bound and
    # provisioned by kjobs.controllers.volumes
    *(
        Resource(
            group,
            "v1",
            plural,
            plural[:-1],
            kind,
            namespaced,
            (short,),
            subresources=("status",) if status else (),
            has_status=status,
            hooks={
                "default": (_STORAGE, f"default_{hook}_in_place"),
                "validate": (_STORAGE, f"validate_{hook}"),
                "validate_update": (_STORAGE, f"validate_{hook}_update"),
                **({"validate_status_update": (_STORAGE, f"validate_{hook}_status_update")} if status else {}),
            },
        )
        for group, plural, kind, namespaced, short, status, hook in (
            ("", "persistentvolumeclaims", "PersistentVolumeClaim", True, "pvc", True, "persistent_volume_claim"),
            ("", "persistentvolumes", "PersistentVolume", False, "pv", True, "persistent_volume"),
            ("storage.k8s.io", "storageclasses", "StorageClass", False, "sc", False, "storage_class"),
        )
    ),
    # pkg/registry/rbac: no short names, no categories; the authorizer reads them (kjobs.server.rbac)
    *(
        Resource(
            "rbac.authorization.k8s.io",
            "v1",
            plural,
            plural[:-1],
            kind,
            namespaced,
            has_status=False,
            hooks={
                **({"default": (_RBAC, "default_binding_in_place")} if kind.endswith("Binding") else {}),
                "validate": (_RBAC, f"validate_{hook}"),
                "validate_update": (_RBAC, f"validate_{hook}_update"),
            },
        )
        for plural, kind, namespaced, hook in (
            ("clusterrolebindings", "ClusterRoleBinding", False, "cluster_role_binding"),
            ("clusterroles", "ClusterRole", False, "cluster_role"),
            ("rolebindings", "RoleBinding", True, "role_binding"),
            ("roles", "Role", True, "role"),
        )
    ),
    # apiextensions-apiserver's pkg/registry/customresourcedefinition: short name crd, category api-extensions;
    # the CRDs' own resources are added at run time (`set_custom`, kjobs.server.customresources)
    Resource(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "customresourcedefinition",
        "CustomResourceDefinition",
        False,
        ("crd", "crds"),
        ("api-extensions",),
        subresources=("status",),
        tracks_generation=True,
        hooks={
            "default": ("kjobs.api.crds", "default_crd_in_place"),
            "default_status": ("kjobs.api.crds", "default_crd_status_in_place"),
            "validate": ("kjobs.api.crds", "validate_crd"),
            "validate_update": ("kjobs.api.crds", "validate_crd_update"),
            "validate_status_update": ("kjobs.api.crds", "validate_crd_status_update"),
        },
    ),
    Resource(
        "authentication.k8s.io",
        "v1",
        "tokenreviews",
        "tokenreview",
        "TokenReview",
        False,
        review=True,
    ),
    Resource(
        "authentication.k8s.io",
        "v1",
        "selfsubjectreviews",
        "selfsubjectreview",
        "SelfSubjectReview",
        False,
        review=True,
    ),
    Resource(
        "authorization.k8s.io",
        "v1",
        "localsubjectaccessreviews",
        "localsubjectaccessreview",
        "LocalSubjectAccessReview",
        True,
        review=True,
    ),
    Resource(
        "authorization.k8s.io",
        "v1",
        "selfsubjectaccessreviews",
        "selfsubjectaccessreview",
        "SelfSubjectAccessReview",
        False,
        review=True,
    ),
    Resource(
        "authorization.k8s.io",
        "v1",
        "selfsubjectrulesreviews",
        "selfsubjectrulesreview",
        "SelfSubjectRulesReview",
        False,
        review=True,
    ),
    Resource(
        "authorization.k8s.io",
        "v1",
        "subjectaccessreviews",
        "subjectaccessreview",
        "SubjectAccessReview",
        False,
        review=True,
    ),
]

STORED: list[Resource] = [r for r in RESOURCES if not r.is_view]
"""The resources whose objects the store holds as they are served (every one but the views)."""

BY_PATH: dict[tuple[str, str, str], Resource] = {(r.group, r.version, r.plural): r for r in RESOURCES}
GROUPS: dict[str, list[str]] = {}
for _r in RESOURCES:
    GROUPS.setdefault(_r.group, [])
    if _r.version not in GROUPS[_r.group]:
        GROUPS[_r.group].append(_r.version)

BUILT_IN: list[Resource] = list(RESOURCES)
"""The static rows; `RESOURCES`, `STORED`, `BY_PATH` and `GROUPS` are these plus the custom resources."""

_listeners: list[Callable[[], None]] = []


def on_change(listener: Callable[[], None]) -> None:
    """Call `listener` whenever the served resources change (discovery and OpenAPI drop their cached documents)."""
    _listeners.append(listener)


def set_custom(rows: list[Resource]) -> None:
    """Serve the built-in resources plus `rows` (the Established CRDs' versions), updating the tables in place
    (modules hold references to them). A row whose path a built-in serves is ignored."""
    builtin_paths = {(r.group, r.version, r.plural) for r in BUILT_IN}
    rows = [r for r in rows if (r.group, r.version, r.plural) not in builtin_paths]
    current = RESOURCES[len(BUILT_IN) :]
    if current == rows:
        return
    RESOURCES[:] = [*BUILT_IN, *rows]
    STORED[:] = [r for r in RESOURCES if not r.is_view]
    BY_PATH.clear()
    BY_PATH.update({(r.group, r.version, r.plural): r for r in RESOURCES})
    GROUPS.clear()
    for r in RESOURCES:
        versions = GROUPS.setdefault(r.group, [])
        if r.version not in versions:
            versions.append(r.version)
    for listener in _listeners:
        listener()


def lookup(group: str, version: str, plural: str) -> Resource | None:
    """The resource served at `/apis/{group}/{version}/{plural}` (core: group `""`)."""
    return BY_PATH.get((group, version, plural))


def resources_of(group: str, version: str) -> list[Resource]:
    """The resources of one group version, in discovery order."""
    return [r for r in RESOURCES if r.group == group and r.version == version]


SUBRESOURCE_KINDS: dict[str, tuple[str, str, str]] = {
    "eviction": ("policy", "v1", "Eviction"),
    "binding": ("", "v1", "Binding"),
    "exec": ("", "v1", "PodExecOptions"),
    "attach": ("", "v1", "PodAttachOptions"),
    "portforward": ("", "v1", "PodPortForwardOptions"),
    "scale": ("autoscaling", "v1", "Scale"),  # a custom resource's (kjobs.server.crscale)
    "token": ("authentication.k8s.io", "v1", "TokenRequest"),  # a ServiceAccount's (kjobs.server.satokens)
}
"""Subresources whose request/response kind is not the parent's: (group, version, kind)."""

SUBRESOURCE_VERBS: dict[str, list[str]] = {
    "status": STATUS_VERBS,
    "log": ["get"],
    "exec": ["create", "get"],
    "attach": ["create", "get"],
    "portforward": ["create", "get"],
    "proxy": ["create", "delete", "get", "patch", "update"],  # kjobs.server.proxy: the connect methods' verbs
    "eviction": ["create"],
    "binding": ["create"],
    "scale": ["get", "patch", "update"],
    "finalize": ["update"],  # the namespace registry's FinalizeREST is an Updater only
    "ephemeralcontainers": ["get", "patch", "update"],  # pkg/registry/core/pod/storage EphemeralContainersREST
    "token": ["create"],  # pkg/registry/core/serviceaccount/storage TokenREST is a NamedCreater only
}
