"""`kjobs validate`: Kubernetes-exact validation of manifests, as an API server would answer a create.

Jobs and CronJobs are defaulted (batch/v1) then validated; Pods likewise with core/v1 rules, and the ConfigMaps
and Secrets a Job reads (`kjobs.api.config_objects`: a Secret's `stringData` merged into `data` first) and the
ServiceAccounts it runs as (`kjobs.api.service_accounts`), and RBAC's roles and bindings (`kjobs.api.rbac`); every
other kind `kjobs up` stores (Services, Endpoints, EndpointSlices, Namespaces, ...) through the API server's own
registry hooks (`_validate_served`). The result
is the list of `FieldError`s Kubernetes would put in the `Status` causes of a 422 Invalid. Before that, `decode`
applies the server's field validation (`kjobs.server.decoding`), as a create with `fieldValidation` would.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

import orjson

from kjobs.api.config_objects import check_bytes
from kjobs.api.errors import ApiError, ErrorType, FieldError, bad_request, invalid
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj

SUPPORTED_KINDS = (
    "Job",
    "CronJob",
    "Pod",
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "Namespace",
    "Node",
    "Event",
    "Service",
    "Endpoints",
    "EndpointSlice",
    "Lease",
    "PodDisruptionBudget",
    "PriorityClass",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
)
"""The kinds `kjobs up` stores when this was written (the reviews it answers are not objects to validate); a kind
added to the registry since is validated too (`_resource_of`)."""
_RESOURCES = {
    "Job": ("batch", "v1", "jobs"),
    "CronJob": ("batch", "v1", "cronjobs"),
    "Pod": ("", "v1", "pods"),
    "ConfigMap": ("", "v1", "configmaps"),
    "Secret": ("", "v1", "secrets"),
    "ServiceAccount": ("", "v1", "serviceaccounts"),
    "Role": ("rbac.authorization.k8s.io", "v1", "roles"),
    "ClusterRole": ("rbac.authorization.k8s.io", "v1", "clusterroles"),
    "RoleBinding": ("rbac.authorization.k8s.io", "v1", "rolebindings"),
    "ClusterRoleBinding": ("rbac.authorization.k8s.io", "v1", "clusterrolebindings"),
    "PersistentVolumeClaim": ("", "v1", "persistentvolumeclaims"),
    "PersistentVolume": ("", "v1", "persistentvolumes"),
    "StorageClass": ("storage.k8s.io", "v1", "storageclasses"),
}
RBAC_VALIDATORS = {
    "Role": "validate_role",
    "ClusterRole": "validate_cluster_role",
    "RoleBinding": "validate_role_binding",
    "ClusterRoleBinding": "validate_cluster_role_binding",
}
"""`kjobs.api.rbac`'s validation of each RBAC kind (its bindings defaulted first)."""
STORAGE_VALIDATORS = {
    "PersistentVolumeClaim": ("default_persistent_volume_claim_in_place", "validate_persistent_volume_claim"),
    "PersistentVolume": ("default_persistent_volume_in_place", "validate_persistent_volume"),
    "StorageClass": ("default_storage_class_in_place", "validate_storage_class"),
}
"""`kjobs.api.storage`'s defaulting and validation of each storage kind."""
CONFIG_KINDS = (
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "Service",
)
"""What a Job's pods read, mount or run as, what their ServiceAccounts may do, and the (headless) Services that
name them in cluster DNS, which `kjobs run` creates before the Job (a manifest that carries its RBAC, its claims
or its Services beside the Job runs as written)."""

FIELD_VALIDATION = {"strict": "Strict", "true": "Strict", "warn": "Warn", "ignore": "Ignore", "false": "Ignore"}
"""kubectl's `--validate` values and the `fieldValidation` each sends (kubectl/pkg/cmd/util/helpers.go,
`GetValidationDirective`: true means strict, false means ignore)."""


def decode(obj: Obj, field_validation: str, features: FeatureGates = DEFAULT) -> tuple[Obj, list[str]]:
    """The object as the API server decodes it on create: unknown fields (with `features`' gates) rejected
    (`Strict`: raises the 400 `ApiError`), or dropped from a copy with a warning each (`Warn`) or silently
    (`Ignore`). An `apiVersion` other than the kind's is the server's 400 too."""
    from kjobs.server.decoding import check_unknown_fields
    from kjobs.server.gotypes import first_type_error
    from kjobs.server.registry import lookup

    where = _RESOURCES.get(str(obj.get("kind")))
    r = lookup(*where) if where is not None else _resource_of(obj)
    if r is None:
        return obj, []
    api_version = obj.get("apiVersion")
    if api_version not in (None, "", r.api_version):
        # The API server's check of a body against the URL it was sent to (`kjobs up` makes the same).
        raise bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version ({r.api_version})"
        )
    copy = deepcopy(obj)
    mistyped = first_type_error(copy, r.kind, group=r.group)
    if mistyped is not None:  # Go's decoder stops here, before the strict field check reports anything
        raise bad_request(f'{r.kind} in version "{r.version}" cannot be handled as a {r.kind}: {mistyped}')
    warnings = check_unknown_fields(copy, r.schema_name, r.kind, r.version, field_validation, features)
    check_bytes(copy)
    return copy, warnings


STOP_VALIDATE = "if you choose to ignore these errors, turn validation off with --validate=false"
"""cli-runtime pkg/resource/visitor.go `stopValidateMessage`."""


def _object_kind_errors(obj: Obj) -> list[str]:
    """kubectl's own check of apiVersion and kind before anything else (kubectl pkg/validation/validation.go,
    `getObjectKind`), made unless `--validate=false`."""
    errors = []
    api_version = obj.get("apiVersion")
    if api_version is None:
        errors.append("apiVersion not set")
    elif not isinstance(api_version, str):
        errors.append("apiVersion isn't string type")
    elif api_version.count("/") > 1:
        errors.append(f"unexpected GroupVersion string: {api_version}")
    kind = obj.get("kind")
    if kind is None:
        errors.append("kind not set")
    elif not isinstance(kind, str):
        errors.append("kind isn't string type")
    return errors


def mapping_error(obj: Obj, source: str, field_validation: str = "strict") -> str | None:
    """What kubectl says before it sends anything (`field_validation`: its `--validate`): no apiVersion or kind
    (`error validating data: apiVersion not set`), or a kind the API server does not serve at its apiVersion
    (cli-runtime pkg/resource/mapper.go `infoForData`; apimachinery pkg/api/meta/errors.go `NoKindMatchError`):
    `apiVersion: v1` on a Job, `batch/v1beta1` on a CronJob (removed in 1.25), or a kind served by no API server
    kjobs runs. None when the object maps to a resource."""
    from kjobs.server.gotypes import metadata_type_error
    from kjobs.server.registry import RESOURCES

    source = "STDIN" if source == "-" else source  # cli-runtime's name for standard input (`constSTDINstr`)

    if FIELD_VALIDATION.get(field_validation.lower()) != "Ignore":
        errors = _object_kind_errors(obj)
        if errors:
            # utilerrors.NewAggregate: one error as is, several in brackets.
            text = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
            return f"error validating {_quote(source)}: error validating data: {text}; {STOP_VALIDATE}"
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    if not isinstance(kind, str) or not kind:
        # The unstructured decoder's `NewMissingKindErr`, with the JSON kubectl made from the YAML (keys sorted).
        data = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS, default=str).decode()
        return f"unable to decode {_quote(source)}: Object 'Kind' is missing in '{data}'"
    mistyped = metadata_type_error(obj)
    if mistyped is not None:
        return f"unable to decode {_quote(source)}: {mistyped}"
    version = api_version if isinstance(api_version, str) else ""
    if any(r.kind == kind and r.api_version == version for r in RESOURCES):
        return None
    meta = metadata_of(obj)
    name, namespace = meta.get("name"), meta.get("namespace")
    return (
        f"resource mapping not found for name: {_quote(name if isinstance(name, str) else '')} namespace: "
        f"{_quote(namespace if isinstance(namespace, str) else '')} from {_quote(source)}: "
        f"no matches for kind {_quote(kind)} in version {_quote(version)}\nensure CRDs are installed first"
    )


def metadata_of(obj: Obj) -> Obj:
    """The object's metadata, or an empty one where it has none or it is not an object."""
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _resource_of(obj: Obj) -> Any:
    """The served resource of a manifest's kind at its apiVersion (the first of that kind when it names none,
    as core's `Event` before `events.k8s.io`'s); None for a kind `kjobs up` does not store."""
    from kjobs.server.registry import RESOURCES

    kind, version = obj.get("kind"), obj.get("apiVersion")
    if not isinstance(kind, str) or kind.endswith("Review"):  # answered, never stored: nothing to validate
        return None
    matches = [r for r in RESOURCES if r.kind == kind and (not version or r.api_version == version)]
    return matches[0] if matches else None


def _quote(text: str) -> str:
    """Go's `%q` of a string."""
    return orjson.dumps(text).decode()


def validate_manifest(obj: Obj, *, apply_defaults: bool = True, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """Validate one manifest as a create request (disabled fields dropped and defaulting first, as the API
    server does)."""
    from kjobs.api import config_objects, defaults, validation
    from kjobs.api.disabled_fields import drop_disabled_job_fields, drop_disabled_pod_fields

    kind = obj.get("kind")
    if kind not in SUPPORTED_KINDS and _resource_of(obj) is None:
        supported = ", ".join(f'"{k}"' for k in SUPPORTED_KINDS)
        return [FieldError("kind", ErrorType.FieldValueNotSupported, f"supported values: {supported}", kind)]
    if kind == "ConfigMap":
        return config_objects.validate_config_map(deepcopy(_as_created(obj)) if apply_defaults else obj)
    if kind == "Secret":
        secret = config_objects.default_secret_in_place(deepcopy(_as_created(obj))) if apply_defaults else obj
        return config_objects.validate_secret(secret)
    if kind == "ServiceAccount":
        from kjobs.api.service_accounts import default_service_account_in_place, validate_service_account

        account = default_service_account_in_place(deepcopy(_as_created(obj))) if apply_defaults else obj
        return validate_service_account(account)
    if kind in RBAC_VALIDATORS:
        from kjobs.api import rbac

        created = deepcopy(_as_created(obj)) if apply_defaults else obj
        if apply_defaults and kind.startswith("Cluster") and isinstance(created.get("metadata"), dict):
            created["metadata"].pop("namespace", None)  # cluster-scoped: a create keeps no namespace
        if apply_defaults and kind.endswith("Binding"):
            rbac.default_binding_in_place(created)
        errors: list[FieldError] = getattr(rbac, RBAC_VALIDATORS[kind])(created)
        return errors
    if kind in STORAGE_VALIDATORS:
        from kjobs.api import storage

        default_hook, validate_hook = STORAGE_VALIDATORS[kind]
        created = deepcopy(_as_created(obj)) if apply_defaults else obj
        if apply_defaults:
            if kind != "PersistentVolumeClaim" and isinstance(created.get("metadata"), dict):
                created["metadata"].pop("namespace", None)  # cluster-scoped: a create keeps no namespace
            getattr(storage, default_hook)(created)
        found: list[FieldError] = getattr(storage, validate_hook)(created)
        return found
    if kind == "CronJob":
        from kjobs.api import validation_cronjob  # imported by the first CronJob validated

        cronjob = defaults.default_cronjob_in_place(deepcopy(_as_created(obj))) if apply_defaults else obj
        return validation_cronjob.validate_cronjob(cronjob, features=features)
    if kind not in ("Job", "Pod"):
        return _validate_served(obj, apply_defaults=apply_defaults, features=features)
    if apply_defaults:
        obj = deepcopy(_as_created(obj))
        (drop_disabled_job_fields if kind == "Job" else drop_disabled_pod_fields)(obj, None, features)
    if kind == "Job":
        if apply_defaults:
            aliased = defaults.labels_from_template(obj)
            job = defaults.prepare_job_for_create(
                defaults.default_job(obj), uid=PLACEHOLDER_UID, labels_from_template=aliased
            )
        else:
            job = obj
        return validation.validate_job(job, features=features)
    pod = defaults.default_pod(obj) if apply_defaults else obj
    return validation.validate_pod(pod, features=features)


def _validate_served(obj: Obj, *, apply_defaults: bool, features: FeatureGates) -> list[FieldError]:
    """Any other kind `kjobs up` stores, as its create runs in the API service (`ApiService.create`): the
    registry's `drop_disabled` and `default` hooks, then its `validate` hook (or the object meta checks of a kind
    without one). A Service is validated before an IP is allocated to it: the allocation only fills what the
    manifest leaves empty (a clusterIP, node ports), and an address the manifest sets is checked as written."""
    from kjobs.api.validation_meta import validate_object_meta

    r = _resource_of(obj)
    if r is None:
        kind = obj.get("kind")
        supported = ", ".join(f'"{k}"' for k in SUPPORTED_KINDS)
        return [FieldError("kind", ErrorType.FieldValueNotSupported, f"supported values: {supported}", kind)]
    created = obj
    if apply_defaults:
        created = deepcopy(_as_created(obj))
        meta = created.get("metadata")
        if not r.namespaced and isinstance(meta, dict):
            meta.pop("namespace", None)  # cluster-scoped: a create keeps no namespace
        drop = r.hook("drop_disabled")
        if drop is not None:
            drop(created, None, features)
        default = r.hook("default")
        if default is not None:
            defaulted = default(created)
            created = defaulted if isinstance(defaulted, dict) else created
        if r.kind == "Service":
            allocation_errors = _allocate_service(created)
            if allocation_errors:
                return allocation_errors
    validate = r.hook("validate")
    if validate is not None:
        errors: list[FieldError] = validate(created, features=features)
        return errors
    meta = created.get("metadata")
    return validate_object_meta(meta if isinstance(meta, dict) else {}, namespaced=r.namespaced)


def _allocate_service(svc: Obj) -> list[FieldError]:
    """The Service storage's `beginCreate` before validation (`ApiService._begin_service_write`): cluster IP and
    node ports allocated on an empty cluster, so a node port out of range or an address outside the service CIDR
    is refused as `kjobs up` refuses it, before (and instead of) validation."""
    from kjobs.api import services
    from kjobs.server.serviceips import ServiceAllocator

    try:
        services.normalize_cluster_ips(svc, None)
        ServiceAllocator(lambda: ((), 0), lambda: 0).allocate(svc, None).release()
    except ApiError as exc:
        if exc.field_errors is None:
            raise
        return exc.field_errors
    return []


PLACEHOLDER_UID = "00000000-0000-0000-0000-000000000000"
"""The uid a create would assign; the selector and labels generated from it are then validated as usual."""


GENERATED_SUFFIX = "xxxxx"
"""Stands for the five random characters a create appends to `generateName` before it validates the object."""


def _as_created(obj: Obj) -> Obj:
    """The object as the API server sees it in a create: namespace from the request (kubectl's default), and a
    name made from `generateName` when it has none (as the API server makes one before validating)."""
    meta = obj.get("metadata")
    if meta is None:  # no metadata: the request's namespace still applies; the name is then required
        meta = {}
    if not isinstance(meta, dict):
        return obj
    changes: Obj = {}
    if not meta.get("namespace"):
        changes["namespace"] = "default"
    prefix = meta.get("generateName")
    if not meta.get("name") and isinstance(prefix, str) and prefix:
        changes["name"] = prefix + GENERATED_SUFFIX
    return dict(obj, metadata=dict(meta, **changes)) if changes else obj


def invalid_status(obj: Obj, errors: list[FieldError]) -> Obj:
    """The 422 `Status` an API server returns for these errors."""
    kind = str(obj.get("kind") or "")
    served = _resource_of(obj)
    group = served.group if served is not None else ""
    meta = metadata_of(obj)
    name = str(meta.get("name") or meta.get("generateName") or "")
    return invalid(kind, name, errors, group=group).status()
