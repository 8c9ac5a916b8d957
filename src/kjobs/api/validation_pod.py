"""Pod spec and pod template validation: the parts of Kubernetes' core validation a Job manifest touches.

Follows `pkg/apis/core/validation/validation.go` (`ValidatePodTemplateSpec`, `ValidatePodSpec`,
`validateContainers`, `validateInitContainers`, `validateContainerCommon`, ports, env, volume mounts (with
mount propagation and recursive read-only), resources, probes, tolerations, host aliases, restart/DNS policies,
affinity and topology spread (kjobs/api/validation_affinity.py), seccomp/AppArmor profile fields, container
ids/procMount, sysctls, hostUsers and pod OS (kjobs/api/validation_security.py), `ValidatePodCreate`) with
Kubernetes' paths, error types, details and emission order; tests/api/test_upstream_pod_validation.py,
test_upstream_pod_affinity_validation.py and test_upstream_pod_security_validation.py run upstream's table rows
(docs/upstream-pod-validation.md). Volumes and every volume source are kjobs/api/validation_volumes.py's
(tests/api/test_upstream_volume_validation.py). Volume devices (and their clashes with volume mounts), resize
policies, pod resource claims and containers' `resources.claims`, the `allowPrivilegeEscalation: false`
conflicts, Windows options' contents and host-process pods are validated too
(tests/api/test_upstream_pod_validation_more.py). Deliberately not covered (accepted as written): the checks of
an ephemeral volume's claim name against the pod's name (a Pod's, never a template's), a clusterTrustBundle's name
and signer-name formats, the entries of `capabilities.add`/`drop` (upstream checks none either), and the two rules
of `--allow-privileged=false` (privileged and host-process containers; kjobs has no such flag and allows both).
Init containers may carry `resizePolicy`: InPlacePodVerticalScaling is GA and locked on in 1.35
(`AllowSidecarResizePolicy`), so v1.32's `must not be set for init containers` is never given. Map iteration
(resources, labels, annotations, flexVolume options) is in sorted key order, where Go's is random.
"""

from __future__ import annotations

import re
from collections.abc import Set
from contextvars import ContextVar
from typing import Any

import orjson

from kjobs.api.errors import ErrorType, FieldError, Raw, go_json, go_json_struct, go_quote, not_supported
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.quantity import Quantity, QuantityError, parse_quantity
from kjobs.api.types import Obj
from kjobs.api.validation_access import (
    Errors,
    check_int,
    get_bool,
    get_int,
    get_list,
    get_obj,
    get_str,
    get_str_map,
    items_of,
    strings_of,
)
from kjobs.api.validation_affinity import validate_affinity, validate_topology_spread_constraints
from kjobs.api.validation_formats import (
    DNS1123_LABEL_MAX,
    dns1123_label_match,
    inclusive_range_error,
    is_config_map_key,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_dns1123_subdomain_with_underscore,
    is_http_header_name,
    is_label_value,
    is_qualified_name,
    is_relaxed_env_var_name,
    is_sloppy_ip,
    is_valid_port_name,
    is_valid_port_num,
    name_is_dns_subdomain,
    quantity_field,
)
from kjobs.api.validation_gated import validate_container_restart, validate_max_restart_times
from kjobs.api.validation_meta import (
    NEGATIVE_MSG,
    validate_annotations,
    validate_label_name,
    validate_labels,
    validate_nonnegative,
    validate_object_meta,
)
from kjobs.api.validation_security import (
    validate_apparmor_profile,
    validate_container_security_context,
    validate_host_users,
    validate_pod_os,
    validate_profile_annotations_match,
    validate_seccomp_profile,
    validate_sysctls,
    validate_windows_host_process,
    validate_windows_options,
)
from kjobs.api.validation_volumes import (
    ENV_FIELD_PATHS,
    validate_local_descending_path,
    validate_object_field_selector,
    validate_path_no_backsteps,
    validate_resource_field_selector,
    validate_volumes,
)
from kjobs.memo import Memo

_RATCHETED: ContextVar[bool] = ContextVar("kjobs_pod_rules_ratcheted", default=False)
"""True while an update's unchanged stored template is validated again: the rule families kjobs ported after
such a template could have been stored (affinity, topology spread, host users, pod OS, sysctls, seccomp/AppArmor
fields, container security contexts, volume devices, resize policies, resource claims, Windows options and
host-process pods; docs/upstream-pod-validation.md) are skipped for it, as kube-apiserver
ratchets the rules it tightened (`GetValidationOptionsFromPodTemplate`); every older rule is checked again."""

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Forbidden = ErrorType.FieldValueForbidden
Duplicate = ErrorType.FieldValueDuplicate
NotFound = ErrorType.FieldValueNotFound

MAX_INT32 = 2**31 - 1


def _enum(value: str | None, path: str, supported: tuple[str, ...], errs: Errors) -> None:
    """Required when empty, NotSupported when unknown (the pattern most enum fields share)."""
    if not value:
        errs.append(FieldError(path, Required))
    elif value not in supported:
        errs.append(not_supported(path, value, supported))


# --- quantities and resources ---------------------------------------------------------------------------------


STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
"""pkg/apis/core/helper `IsStandardContainerResourceName`."""
STANDARD_RESOURCES = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "requests.storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "services.nodeports",
        "services.loadbalancers",
    }
)


def _is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    return not _is_native(name) and not name.startswith("requests.") and not is_qualified_name("requests." + name)


def _overcommit_allowed(name: str) -> bool:
    return _is_native(name) and not _is_hugepages(name)


def _validate_container_resource_name(name: str, path: str, errs: Errors) -> None:
    msgs = is_qualified_name(name)
    for msg in msgs:
        errs.append(FieldError(path, Invalid, msg, name))
    if not msgs and "/" not in name and name not in STANDARD_RESOURCES and not _is_hugepages(name):
        errs.append(FieldError(path, Invalid, "must be a standard resource type or fully qualified", name))
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not _is_hugepages(name):
            errs.append(FieldError(path, Invalid, "must be a standard resource for containers", name))
    elif not _is_native(name) and not _is_extended(name):
        errs.append(FieldError(path, Invalid, "doesn't follow extended resource name standard", name))


def _resource_quantity(name: str, raw: Any, path: str, errs: Errors) -> Quantity | None:
    """One entry of a resource list: name rules, then quantity rules (`ValidateResourceQuantityValue`)."""
    _validate_container_resource_name(name, path, errs)
    q = quantity_field(raw, path, errs)
    if q is None:
        return None
    if q.value < 0:
        errs.append(FieldError(path, Invalid, NEGATIVE_MSG, str(q)))
    if _is_extended(name) and q.milli_value() % 1000 != 0:
        errs.append(FieldError(path, Invalid, "must be an integer", Raw(str(q))))
    return q


def _validate_resources(resources: Obj | None, path: str, errs: Errors, claim_names: Set[str] | None = None) -> None:
    """`ValidateContainerResourceRequirements` (map entries in sorted key order), then `claims`
    (`validateResourceClaimNames`, skipped when `claim_names` is None: a ratcheted spec)."""
    if resources is None:
        return
    raw_limits = get_obj(resources, "limits", f"{path}.limits", errs) or {}
    raw_requests = get_obj(resources, "requests", f"{path}.requests", errs) or {}
    limits: dict[str, Quantity] = {}
    for name in sorted(raw_limits):
        q = _resource_quantity(name, raw_limits[name], f"{path}.limits[{name}]", errs)
        if q is not None:
            limits[name] = q
    for name in sorted(raw_requests):
        q = _resource_quantity(name, raw_requests[name], f"{path}.requests[{name}]", errs)
        if q is None:
            continue
        limit = limits.get(name)
        if limit is not None:
            if q.value != limit.value and not _overcommit_allowed(name):
                errs.append(
                    FieldError(f"{path}.requests", Invalid, f"must be equal to {name} limit of {limit}", str(q))
                )
            elif q.value > limit.value:
                errs.append(
                    FieldError(
                        f"{path}.requests", Invalid, f"must be less than or equal to {name} limit of {limit}", str(q)
                    )
                )
        elif name not in raw_limits and not _overcommit_allowed(name):
            errs.append(FieldError(f"{path}.limits", Required, "Limit must be set for non overcommitable resources"))
    names = (*raw_limits, *raw_requests)
    if not any(n in ("cpu", "memory") for n in names) and any(_is_hugepages(n) for n in names):
        errs.append(FieldError(path, Forbidden, "HugePages require cpu or memory"))
    claims = get_list(resources, "claims", f"{path}.claims", errs) if "claims" in resources else None
    if claims and claim_names is not None:
        _validate_resource_claim_names(claims, claim_names, f"{path}.claims", errs)


def _validate_resource_claim_names(claims: list[Any], pod_claims: Set[str], path: str, errs: Errors) -> None:
    """`validateResourceClaimNames`: each entry names a `spec.resourceClaims` entry (NotFound, with the pod's
    claim names in sorted order), once; with a `request` (a DNS label), once per claim and request, and a whole
    claim not beside a request of it."""
    seen: set[str] = set()
    for i, claim in items_of(claims, path, errs):
        item = f"{path}[{i}]"
        name = get_str(claim, "name", f"{item}.name", errs) or ""
        request = get_str(claim, "request", f"{item}.request", errs) or ""
        if not name:
            errs.append(FieldError(item, Required))
            continue
        if name in seen:
            errs.append(FieldError(item, Duplicate, "", name))
        else:
            key = name
            if request:
                for msg in is_dns1123_label(request):
                    errs.append(FieldError(f"{item}.request", Invalid, msg, request))
                key = f"{name}/{request}"
            if key in seen:
                errs.append(FieldError(item, Duplicate, "", key))
            elif not request:
                for other in seen:  # Go iterates a set: one error per request of this claim already named
                    if "/" in other and other.split("/", 1)[0] == name:
                        errs.append(FieldError(item, Duplicate, "", name))
            seen.add(key)
        if name not in pod_claims:
            detail = "must be one of the names in pod.spec.resourceClaims"
            detail += ": " + ", ".join(sorted(pod_claims)) if pod_claims else " which is empty"
            errs.append(FieldError(item, NotFound, detail, name))


def _validate_pod_resource_claims(spec: Obj, path: str, errs: Errors) -> set[str]:
    """`validatePodResourceClaims`: names required, unique and DNS labels; exactly one of `resourceClaimName`
    and `resourceClaimTemplateName`, each a DNS subdomain. The bad value of the one-of errors is the internal
    `PodResourceClaim` as Go's JSON. Returns `gatherPodResourceClaimNames`: every non-empty name."""
    gathered: set[str] = set()
    seen: set[str] = set()
    for i, claim in items_of(get_list(spec, "resourceClaims", path, errs), path, errs):
        item = f"{path}[{i}]"
        name = get_str(claim, "name", f"{item}.name", errs) or ""
        claim_name = get_str(claim, "resourceClaimName", f"{item}.resourceClaimName", errs)
        template_name = get_str(claim, "resourceClaimTemplateName", f"{item}.resourceClaimTemplateName", errs)
        if name:
            gathered.add(name)
        if not name:
            errs.append(FieldError(f"{item}.name", Required))
        elif name in seen:
            errs.append(FieldError(f"{item}.name", Duplicate, "", name))
        else:
            for msg in is_dns1123_label(name):
                errs.append(FieldError(f"{item}.name", Invalid, msg, name))
            seen.add(name)
        if (claim_name is None) == (template_name is None):
            shown = Raw(
                go_json_struct(
                    [
                        ("Name", go_json(name)),
                        ("ResourceClaimName", go_json(claim_name)),
                        ("ResourceClaimTemplateName", go_json(template_name)),
                    ]
                )
            )
            if claim_name is not None:
                detail = "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
            else:
                detail = "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
            errs.append(FieldError(item, Invalid, detail, shown))
        for key, value in (("resourceClaimName", claim_name), ("resourceClaimTemplateName", template_name)):
            if value is not None:
                for msg in name_is_dns_subdomain(value, False):
                    errs.append(FieldError(f"{item}.{key}", Invalid, msg, value))
    return gathered


_NO_CLAIMS: frozenset[str] = frozenset()
_RESIZE_RESOURCES = ("cpu", "memory")
_RESIZE_POLICIES = ("NotRequired", "RestartContainer")


def _validate_resize_policy(policies: list[Any] | None, pod_restart: str, path: str, errs: Errors) -> None:
    """`validateResizePolicy`: cpu or memory, each once (Duplicate at the item); NotRequired or RestartContainer
    (errors at the list, as upstream builds them); under a pod's `restartPolicy: Never` only NotRequired."""
    resources: set[str] = set()
    for i, policy in items_of(policies, path, errs):
        name = get_str(policy, "resourceName", f"{path}[{i}].resourceName", errs) or ""
        restart = get_str(policy, "restartPolicy", f"{path}[{i}].restartPolicy", errs) or ""
        if name in resources:
            errs.append(FieldError(f"{path}[{i}]", Duplicate, "", name))
        resources.add(name)
        _enum(name, path, _RESIZE_RESOURCES, errs)
        _enum(restart, path, _RESIZE_POLICIES, errs)
        if pod_restart == "Never" and restart != "NotRequired":
            errs.append(FieldError(path, Invalid, "must be 'NotRequired' when `restartPolicy` is 'Never'", restart))


def _hugepages_divisible(name: str, q: Quantity) -> bool:
    """`IsHugePageResourceValueDivisible` (pkg/apis/core/helper): the amount, rounded up to whole bytes, is a
    multiple of the page size the name gives; an unparsable or fractional page size divides nothing."""
    try:
        page = parse_quantity(name[len("hugepages-") :])
    except QuantityError:
        return False
    if page.value <= 0 or page.milli_value() % 1000 != 0:
        return False
    return q.int_value() % page.int_value() == 0


def _indivisible_hugepages(spec: Obj) -> list[tuple[str, str, Quantity]]:
    """(path, resource name, amount) of every hugepages request or limit no multiple of its page size, in the
    order `ValidatePodSpec` meets them (containers, then init containers)."""
    found: list[tuple[str, str, Quantity]] = []
    for key in ("containers", "initContainers", "ephemeralContainers"):
        containers = spec.get(key)
        for i, container in enumerate(containers if type(containers) is list else []):
            resources = container.get("resources") if type(container) is dict else None
            for part in ("limits", "requests"):
                raw = resources.get(part) if type(resources) is dict else None
                amounts: Obj = raw if type(raw) is dict else {}
                for name in sorted(amounts):
                    if not _is_hugepages(name) or type(amounts[name]) not in (str, int, float):
                        continue
                    try:
                        q = parse_quantity(amounts[name])
                    except QuantityError:
                        continue  # refused as a quantity already
                    if not _hugepages_divisible(name, q):
                        found.append((f"{key}[{i}].resources.{part}[{name}]", name, q))
    return found


def uses_indivisible_hugepages(spec: Any) -> bool:
    """`usesIndivisibleHugePagesValues` (pkg/api/pod/util.go): a stored spec with such an amount (from before
    the check) stays valid on update (`AllowIndivisibleHugePagesValues`)."""
    return type(spec) is dict and bool(_indivisible_hugepages(spec))


def validate_hugepages_values(spec: Any, path: str, errs: Errors) -> None:
    """`validateResourceQuantityHugePageValue` (pkg/apis/core/validation): each hugepages amount must be a
    whole multiple of its page size, e.g. `hugepages-1Mi: 1.1Mi` is refused."""
    if type(spec) is not dict:
        return
    for where, name, q in _indivisible_hugepages(spec):
        errs.append(FieldError(f"{path}.{where}", Invalid, f"{q} is not positive integer multiple of {name}", str(q)))


# --- containers -----------------------------------------------------------------------------------------------


def _validate_ports(ports: list[Any] | None, path: str, errs: Errors) -> None:
    names: set[str] = set()
    for i, port in items_of(ports, path, errs):
        item = f"{path}[{i}]"
        name = get_str(port, "name", f"{item}.name", errs) or ""
        if name:
            msgs = is_valid_port_name(name)
            for msg in msgs:
                errs.append(FieldError(f"{item}.name", Invalid, msg, name))
            if not msgs:
                if name in names:
                    errs.append(FieldError(f"{item}.name", Duplicate, "", name))
                names.add(name)
        container_port = get_int(port, "containerPort", f"{item}.containerPort", errs) or 0
        if container_port == 0:
            errs.append(FieldError(f"{item}.containerPort", Required))
        else:
            for msg in is_valid_port_num(container_port):
                errs.append(FieldError(f"{item}.containerPort", Invalid, msg, container_port))
        host_port = get_int(port, "hostPort", f"{item}.hostPort", errs) or 0
        if host_port:
            for msg in is_valid_port_num(host_port):
                errs.append(FieldError(f"{item}.hostPort", Invalid, msg, host_port))
        protocol = get_str(port, "protocol", f"{item}.protocol", errs) or ""
        if not protocol:
            errs.append(FieldError(f"{item}.protocol", Required))
        elif protocol not in ("SCTP", "TCP", "UDP"):
            errs.append(not_supported(f"{item}.protocol", protocol, ("SCTP", "TCP", "UDP")))


def _host_port_conflicts(containers: list[tuple[int, Obj]], path: str, seen: set[str], errs: Errors) -> None:
    for ci, container in containers:
        ports = container.get("ports")
        if type(ports) is not list:
            continue  # a wrong type is reported where the ports are validated
        for pi, port in enumerate(ports):
            if type(port) is not dict:
                continue
            host_port = port.get("hostPort")
            if not host_port or type(host_port) is not int:
                continue
            key = f"{port.get('protocol') or ''}/{port.get('hostIP') or ''}/{host_port}"
            if key in seen:
                errs.append(FieldError(f"{path}[{ci}].ports[{pi}].hostPort", Duplicate, "", key))
            else:
                seen.add(key)


def _validate_key_selector(ref: Obj, path: str, errs: Errors) -> None:
    name = get_str(ref, "name", f"{path}.name", errs) or ""
    for msg in name_is_dns_subdomain(name, False):
        errs.append(FieldError(f"{path}.name", Invalid, msg, name))
    key = get_str(ref, "key", f"{path}.key", errs) or ""
    if not key:
        errs.append(FieldError(f"{path}.key", Required))
    else:
        for msg in is_config_map_key(key):
            errs.append(FieldError(f"{path}.key", Invalid, msg, key))


def _validate_env(env: list[Any] | None, path: str, errs: Errors) -> None:
    for i, var in items_of(env, path, errs):
        item = f"{path}[{i}]"
        name = get_str(var, "name", f"{item}.name", errs) or ""
        if not name:
            errs.append(FieldError(f"{item}.name", Required))
        else:
            for msg in is_relaxed_env_var_name(name):
                errs.append(FieldError(f"{item}.name", Invalid, msg, name))
        value = get_str(var, "value", f"{item}.value", errs) or ""
        value_from = get_obj(var, "valueFrom", f"{item}.valueFrom", errs)
        if value_from is None:
            continue
        vf = f"{item}.valueFrom"
        sources = 0
        field_ref = get_obj(value_from, "fieldRef", f"{vf}.fieldRef", errs)
        if field_ref is not None:
            sources += 1
            validate_object_field_selector(field_ref, ENV_FIELD_PATHS, f"{vf}.fieldRef", errs)
        resource_ref = get_obj(value_from, "resourceFieldRef", f"{vf}.resourceFieldRef", errs)
        if resource_ref is not None:
            sources += 1
            validate_resource_field_selector(resource_ref, f"{vf}.resourceFieldRef", errs, volume=False)
        for key in ("configMapKeyRef", "secretKeyRef"):
            ref = get_obj(value_from, key, f"{vf}.{key}", errs)
            if ref is not None:
                sources += 1
                _validate_key_selector(ref, f"{vf}.{key}", errs)
        if sources == 0:
            errs.append(
                FieldError(
                    vf,
                    Invalid,
                    "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
                    "",
                )
            )
        elif value:
            errs.append(FieldError(vf, Invalid, "may not be specified when `value` is not empty", ""))
        elif sources > 1:
            errs.append(FieldError(vf, Invalid, "may not have more than one field specified at a time", ""))


def _validate_env_from(env_from: list[Any] | None, path: str, errs: Errors) -> None:
    for i, source in items_of(env_from, path, errs):
        item = f"{path}[{i}]"
        prefix = get_str(source, "prefix", f"{item}.prefix", errs) or ""
        if prefix:
            for msg in is_relaxed_env_var_name(prefix):
                errs.append(FieldError(f"{item}.prefix", Invalid, msg, prefix))
        sources = 0
        for key in ("configMapRef", "secretRef"):
            ref = get_obj(source, key, f"{item}.{key}", errs)
            if ref is None:
                continue
            sources += 1
            name = get_str(ref, "name", f"{item}.{key}.name", errs) or ""
            if not name:
                errs.append(FieldError(f"{item}.{key}.name", Required))
            else:
                for msg in name_is_dns_subdomain(name, True):
                    errs.append(FieldError(f"{item}.{key}.name", Invalid, msg, name))
        if sources == 0:
            errs.append(FieldError(path, Invalid, "must specify one of: `configMapRef` or `secretRef`", ""))
        elif sources > 1:
            errs.append(FieldError(path, Invalid, "may not have more than one field specified at a time", ""))


def _validate_mount_propagation(mode: str, privileged: bool, path: str, errs: Errors) -> None:
    """`validateMountPropagation`: a known mode, and Bidirectional only in a privileged container."""
    if mode not in _MOUNT_PROPAGATIONS:
        errs.append(not_supported(path, mode, _MOUNT_PROPAGATIONS))
    if mode == "Bidirectional" and not privileged:
        errs.append(
            FieldError(path, Forbidden, "Bidirectional mount propagation is available only to privileged containers")
        )


def _validate_recursive_read_only(mount: Obj, mode: str, propagation: str | None, path: str, errs: Errors) -> None:
    """`validateMountRecursiveReadOnly`: Enabled/IfPossible need readOnly and no propagation but None."""
    if mode == "Disabled":
        return
    if mode not in ("Enabled", "IfPossible"):
        errs.append(not_supported(path, mode, ("Disabled", "Enabled", "IfPossible")))
        return
    if mount.get("readOnly") is not True:
        errs.append(FieldError(path, Forbidden, "may only be specified when readOnly is true"))
    if propagation is not None and propagation != "None":
        errs.append(FieldError(path, Forbidden, "may only be specified when mountPropagation is None or not specified"))


_IMAGE_SUB_PATH_MSG = "not allowed in image volume sources"

# Sorted, as `sets.List` gives them in the NotSupported detail.
_MOUNT_PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")


def _validate_volume_mounts(
    mounts: list[Any] | None,
    volumes: dict[str, str],
    privileged: bool,
    path: str,
    errs: Errors,
    devices: dict[str, str] | None = None,
) -> None:
    """`ValidateVolumeMounts`. Its subPath, subPathExpr, mountPropagation and recursiveReadOnly errors name the
    list (`volumeMounts.subPath`), not the item, as upstream builds them from `fldPath`, not `idxPath`.
    `devices`: the container's volume devices, name → device path (`GetVolumeDeviceMap`)."""
    mount_points: set[str] = set()
    for i, mount in items_of(mounts, path, errs):
        item = f"{path}[{i}]"
        name = get_str(mount, "name", f"{item}.name", errs) or ""
        if not name:
            errs.append(FieldError(f"{item}.name", Required))
        if name not in volumes:
            errs.append(FieldError(f"{item}.name", NotFound, "", name))
        mount_path = get_str(mount, "mountPath", f"{item}.mountPath", errs) or ""
        if not mount_path:
            errs.append(FieldError(f"{item}.mountPath", Required))
        if mount_path in mount_points:
            errs.append(FieldError(f"{item}.mountPath", Invalid, "must be unique", mount_path))
        mount_points.add(mount_path)
        if devices:
            if name in devices:
                errs.append(FieldError(f"{item}.name", Invalid, "must not already exist in volumeDevices", name))
            if mount_path in devices.values():
                msg = "must not already exist as a path in volumeDevices"
                errs.append(FieldError(f"{item}.mountPath", Invalid, msg, mount_path))
        sub_path = get_str(mount, "subPath", f"{item}.subPath", errs) or ""
        sub_path_expr = get_str(mount, "subPathExpr", f"{item}.subPathExpr", errs) or ""
        if volumes.get(name) == "image":
            if sub_path:
                errs.append(FieldError(f"{item}.subPath", Invalid, _IMAGE_SUB_PATH_MSG, sub_path))
            if sub_path_expr:
                errs.append(FieldError(f"{item}.subPathExpr", Invalid, _IMAGE_SUB_PATH_MSG, sub_path_expr))
        if sub_path:
            validate_local_descending_path(sub_path, f"{path}.subPath", errs)
        if sub_path_expr:
            if sub_path:
                errs.append(
                    FieldError(
                        f"{item}.subPathExpr", Invalid, "subPathExpr and subPath are mutually exclusive", sub_path_expr
                    )
                )
            validate_local_descending_path(sub_path_expr, f"{path}.subPathExpr", errs)
        propagation = get_str(mount, "mountPropagation", f"{item}.mountPropagation", errs)
        if propagation is not None:
            _validate_mount_propagation(propagation, privileged, f"{path}.mountPropagation", errs)
        rro = get_str(mount, "recursiveReadOnly", f"{item}.recursiveReadOnly", errs)
        if rro is not None:
            _validate_recursive_read_only(mount, rro, propagation, f"{path}.recursiveReadOnly", errs)


def _path_map(items: list[Any] | None, key: str) -> dict[str, str]:
    """`GetVolumeMountMap` / `GetVolumeDeviceMap`: name → mountPath or devicePath (a later entry wins)."""
    out: dict[str, str] = {}
    for item in items if type(items) is list else ():
        if type(item) is dict:
            name, where = item.get("name"), item.get(key)
            out[name if type(name) is str else ""] = where if type(where) is str else ""
    return out


_BLOCK_SOURCES = ("persistentVolumeClaim", "ephemeral")


def _validate_volume_devices(
    devices: list[Any] | None, mounts: dict[str, str], volumes: dict[str, str], path: str, errs: Errors
) -> None:
    """`ValidateVolumeDevices`: each device names a volume of the pod that is a PersistentVolumeClaim or a
    generic ephemeral volume (block mode), once, with a unique device path without `..`, and neither its name
    nor its path is one of the container's volume mounts."""
    paths: set[str] = set()
    names: set[str] = set()
    for i, device in items_of(devices, path, errs):
        item = f"{path}[{i}]"
        name = get_str(device, "name", f"{item}.name", errs) or ""
        device_path = get_str(device, "devicePath", f"{item}.devicePath", errs) or ""
        if not name:
            errs.append(FieldError(f"{item}.name", Required))
        if name in names:
            errs.append(FieldError(f"{item}.name", Invalid, "must be unique", name))
        if name in volumes and volumes[name] not in _BLOCK_SOURCES:
            msg = "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"
            errs.append(FieldError(f"{item}.name", Invalid, msg, name))
        if name not in volumes:
            errs.append(FieldError(f"{item}.name", NotFound, "", name))
        if not device_path:
            errs.append(FieldError(f"{item}.devicePath", Required))
        if device_path in paths:
            errs.append(FieldError(f"{item}.devicePath", Invalid, "must be unique", device_path))
        backsteps: Errors = []
        if device_path:
            validate_path_no_backsteps(device_path, f"{path}.devicePath", backsteps)
        if backsteps:
            errs.append(FieldError(f"{item}.devicePath", Invalid, "can not contain backsteps ('..')", device_path))
        else:
            paths.add(device_path)
        if name in mounts:
            errs.append(FieldError(f"{item}.name", Invalid, "must not already exist in volumeMounts", name))
        if device_path in mounts.values():
            msg = "must not already exist as a path in volumeMounts"
            errs.append(FieldError(f"{item}.devicePath", Invalid, msg, device_path))
        if name:
            names.add(name)


def _validate_port_num_or_name(value: Any, path: str, errs: Errors) -> None:
    """`validatePortNumOrName`. An absent or null port decodes to the int-or-string zero value, port 0."""
    if value is None:
        value = 0
    if type(value) is int:
        for msg in is_valid_port_num(value):
            errs.append(FieldError(path, Invalid, msg, value))
    elif type(value) is str:
        for msg in is_valid_port_name(value):
            errs.append(FieldError(path, Invalid, msg, value))
    else:
        errs.append(FieldError(path, Invalid, "must be of type int-or-string", value))


_HANDLERS_PROBE = ("exec", "httpGet", "tcpSocket", "grpc")
_HANDLERS_LIFECYCLE = ("exec", "httpGet", "tcpSocket", "sleep")


def _validate_handler(handler: Obj, kinds: tuple[str, ...], grace: int | None, path: str, errs: Errors) -> None:
    count = 0
    for kind in kinds:
        action = handler.get(kind)
        if action is None:
            continue
        if count > 0:
            errs.append(FieldError(f"{path}.{kind}", Forbidden, "may not specify more than 1 handler type"))
            continue
        count += 1
        if type(action) is not dict:
            errs.append(FieldError(f"{path}.{kind}", Invalid, "must be of type object", action))
            continue
        sub = f"{path}.{kind}"
        if kind == "exec" and not get_list(action, "command", f"{sub}.command", errs):
            errs.append(FieldError(f"{sub}.command", Required))
        elif kind == "httpGet":
            if not get_str(action, "path", f"{sub}.path", errs):
                errs.append(FieldError(f"{sub}.path", Required))
            _validate_port_num_or_name(action.get("port"), f"{sub}.port", errs)
            scheme = get_str(action, "scheme", f"{sub}.scheme", errs) or ""
            if scheme not in ("HTTP", "HTTPS"):
                errs.append(not_supported(f"{sub}.scheme", scheme, ("HTTP", "HTTPS")))
            # validateHTTPGetAction names the list, not the header, in these errors.
            for j, header in items_of(
                get_list(action, "httpHeaders", f"{sub}.httpHeaders", errs), f"{sub}.httpHeaders", errs
            ):
                name = get_str(header, "name", f"{sub}.httpHeaders[{j}].name", errs) or ""
                for msg in is_http_header_name(name):
                    errs.append(FieldError(f"{sub}.httpHeaders", Invalid, msg, name))
        elif kind == "tcpSocket":
            _validate_port_num_or_name(action.get("port"), f"{sub}.port", errs)
        elif kind == "grpc":
            port = get_int(action, "port", f"{sub}.port", errs) or 0
            for msg in is_valid_port_num(port):
                errs.append(FieldError(f"{sub}.port", Invalid, msg, port))
        elif kind == "sleep":
            seconds = get_int(action, "seconds", f"{sub}.seconds", errs, bits=64) or 0
            if grace is not None and (seconds < 0 or seconds > grace):
                errs.append(
                    FieldError(
                        sub,
                        Invalid,
                        f"must be non-negative and less than terminationGracePeriodSeconds ({grace})",
                        seconds,
                    )
                )
    if count == 0:
        errs.append(FieldError(path, Required, "must specify a handler type"))


def _validate_probe(probe: Obj | None, kind: str, grace: int | None, path: str, errs: Errors) -> None:
    if probe is None:
        return
    _validate_handler(probe, _HANDLERS_PROBE, grace, path, errs)
    for key in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        validate_nonnegative(get_int(probe, key, f"{path}.{key}", errs), f"{path}.{key}", errs)
    probe_grace = get_int(
        probe, "terminationGracePeriodSeconds", f"{path}.terminationGracePeriodSeconds", errs, bits=64
    )
    if probe_grace is not None and probe_grace <= 0:
        errs.append(FieldError(f"{path}.terminationGracePeriodSeconds", Invalid, "must be greater than 0", probe_grace))
    if kind in ("livenessProbe", "startupProbe"):
        success = probe.get("successThreshold")
        if success != 1:
            errs.append(FieldError(f"{path}.successThreshold", Invalid, "must be 1", success if success else 0))
    elif probe_grace is not None:
        errs.append(
            FieldError(
                f"{path}.terminationGracePeriodSeconds", Invalid, "must not be set for readinessProbes", probe_grace
            )
        )


def _validate_lifecycle(lifecycle: Obj, grace: int | None, path: str, errs: Errors) -> None:
    for hook in ("postStart", "preStop"):
        handler = get_obj(lifecycle, hook, f"{path}.{hook}", errs)
        if handler is not None:
            _validate_handler(handler, _HANDLERS_LIFECYCLE, grace, f"{path}.{hook}", errs)


def _validate_container_common(
    container: Obj,
    volumes: dict[str, str],
    path: str,
    errs: Errors,
    host_users: bool = True,
    claim_names: Set[str] | None = None,
    pod_restart: str = "",
) -> None:
    """`validateContainerCommon`. `claim_names`: the pod's resource claim names (None: a ratcheted spec, whose
    rule families ported since it could have been stored are skipped: devices, claims, resize policies)."""
    name = get_str(container, "name", f"{path}.name", errs) or ""
    if not name:
        errs.append(FieldError(f"{path}.name", Required))
    else:
        for msg in is_dns1123_label(name):
            errs.append(FieldError(f"{path}.name", Invalid, msg, name))
    if not get_str(container, "image", f"{path}.image", errs):
        errs.append(FieldError(f"{path}.image", Required))
    policy = get_str(container, "terminationMessagePolicy", f"{path}.terminationMessagePolicy", errs) or ""
    _enum(policy, f"{path}.terminationMessagePolicy", ("File", "FallbackToLogsOnError"), errs)
    _validate_ports(get_list(container, "ports", f"{path}.ports", errs), f"{path}.ports", errs)
    _validate_env(get_list(container, "env", f"{path}.env", errs), f"{path}.env", errs)
    _validate_env_from(get_list(container, "envFrom", f"{path}.envFrom", errs), f"{path}.envFrom", errs)
    mounts = get_list(container, "volumeMounts", f"{path}.volumeMounts", errs)
    context = container.get("securityContext")
    privileged = type(context) is dict and context.get("privileged") is True
    ratcheted = _RATCHETED.get()
    devices = None
    if "volumeDevices" in container and not ratcheted:
        devices = get_list(container, "volumeDevices", f"{path}.volumeDevices", errs)
    device_map = _path_map(devices, "devicePath") if devices else None
    _validate_volume_mounts(mounts, volumes, privileged, f"{path}.volumeMounts", errs, device_map)
    if devices:
        _validate_volume_devices(devices, _path_map(mounts, "mountPath"), volumes, f"{path}.volumeDevices", errs)
    pull = get_str(container, "imagePullPolicy", f"{path}.imagePullPolicy", errs) or ""
    _enum(pull, f"{path}.imagePullPolicy", ("Always", "IfNotPresent", "Never"), errs)
    resources = get_obj(container, "resources", f"{path}.resources", errs)
    _validate_resources(resources, f"{path}.resources", errs, None if ratcheted else claim_names or _NO_CLAIMS)
    if "resizePolicy" in container and not ratcheted:
        resize = get_list(container, "resizePolicy", f"{path}.resizePolicy", errs)
        if resize:
            _validate_resize_policy(resize, pod_restart, f"{path}.resizePolicy", errs)
    if not ratcheted:
        validate_container_security_context(container, host_users, path, errs)
    for key in ("command", "args"):
        strings_of(get_list(container, key, f"{path}.{key}", errs), f"{path}.{key}", errs)


def _validate_containers(
    containers: list[tuple[int, Obj]],
    volumes: dict[str, str],
    grace: int | None,
    path: str,
    errs: Errors,
    features: FeatureGates,
    host_users: bool = True,
    claim_names: Set[str] | None = None,
    pod_restart: str = "",
) -> None:
    names: set[str] = set()
    for i, container in containers:
        item = f"{path}[{i}]"
        _validate_container_common(container, volumes, item, errs, host_users, claim_names, pod_restart)
        raw_name = container.get("name")
        name = raw_name if type(raw_name) is str else ""
        if name in names:
            errs.append(FieldError(f"{item}.name", Duplicate, "", name))
        else:
            names.add(name)
        lifecycle = get_obj(container, "lifecycle", f"{item}.lifecycle", errs)
        if lifecycle is not None:
            _validate_lifecycle(lifecycle, grace, f"{item}.lifecycle", errs)
        for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
            _validate_probe(get_obj(container, kind, f"{item}.{kind}", errs), kind, grace, f"{item}.{kind}", errs)
        validate_container_restart(container, item, init=False, features=features, errs=errs)
    _host_port_conflicts(containers, path, set(), errs)


def _validate_init_containers(
    init: list[tuple[int, Obj]],
    regular: list[tuple[int, Obj]],
    volumes: dict[str, str],
    grace: int | None,
    path: str,
    errs: Errors,
    features: FeatureGates,
    host_users: bool = True,
    claim_names: Set[str] | None = None,
    pod_restart: str = "",
) -> None:
    names = {c.get("name") for _, c in regular if type(c.get("name")) is str}
    for i, container in init:
        item = f"{path}[{i}]"
        _validate_container_common(container, volumes, item, errs, host_users, claim_names, pod_restart)
        validate_container_restart(container, item, init=True, features=features, errs=errs)
        restart_always = container.get("restartPolicy") == "Always"
        raw_name = container.get("name")
        name = raw_name if type(raw_name) is str else ""
        if name in names:
            errs.append(FieldError(f"{item}.name", Duplicate, "", name))
        elif name:
            names.add(name)
        _host_port_conflicts([(i, container)], path, set(), errs)
        if restart_always:
            lifecycle = get_obj(container, "lifecycle", f"{item}.lifecycle", errs)
            if lifecycle is not None:
                _validate_lifecycle(lifecycle, grace, f"{item}.lifecycle", errs)
            for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
                _validate_probe(get_obj(container, kind, f"{item}.{kind}", errs), kind, grace, f"{item}.{kind}", errs)
        else:
            for kind in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
                if container.get(kind) is not None:
                    errs.append(
                        FieldError(
                            f"{item}.{kind}",
                            Forbidden,
                            "may not be set for init containers without restartPolicy=Always",
                        )
                    )


EPHEMERAL_FORBIDDEN = (
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)
"""The `EphemeralContainerCommon` fields outside `allowedEphemeralContainerFields`, in the Go struct's order
(pkg/apis/core/validation/validation.go `validateFieldAllowList`): set, each is Forbidden."""
EPHEMERAL_FORBIDDEN_DETAIL = "cannot be set for an Ephemeral Container"


def _validate_ephemeral_containers(
    ephemeral: list[tuple[int, Obj]],
    others: list[tuple[int, Obj]],
    volumes: dict[str, str],
    path: str,
    errs: Errors,
    host_users: bool = True,
    claim_names: Set[str] | None = None,
    pod_restart: str = "",
) -> None:
    """`validateEphemeralContainers` (validation.go): the common container rules, a name unique across every
    container of the pod, a `targetContainerName` naming a regular or init container, none of the fields
    ephemeral containers may not have (a debugging container is not part of the workload: no ports, probes,
    lifecycle or resources), and no `subPath`/`subPathExpr` mounts (bind mounts that would outlive it)."""
    other_names = {c.get("name") for _, c in others if type(c.get("name")) is str}
    all_names = set(other_names)
    for i, container in ephemeral:
        item = f"{path}[{i}]"
        _validate_container_common(container, volumes, item, errs, host_users, claim_names, pod_restart)
        image = container.get("image")
        if type(image) is str and image != image.strip():  # validateContainerOnlyForPod
            errs.append(FieldError(f"{item}.image", Invalid, "must not have leading or trailing whitespace", image))
        raw_name = container.get("name")
        name = raw_name if type(raw_name) is str else ""
        if name in all_names:
            errs.append(FieldError(f"{item}.name", Duplicate, "", name))
        else:
            all_names.add(name)
        target = container.get("targetContainerName")
        if type(target) is str and target and target not in other_names:
            errs.append(FieldError(f"{item}.targetContainerName", NotFound, "", target))
        for key in EPHEMERAL_FORBIDDEN:
            value = container.get(key)
            if value is None or (key == "resources" and value == {}):  # a zero struct is unset in Go
                continue
            errs.append(FieldError(f"{item}.{key}", Forbidden, EPHEMERAL_FORBIDDEN_DETAIL))
        mounts = container.get("volumeMounts")
        for m, mount in enumerate(mounts if type(mounts) is list else ()):
            if type(mount) is not dict:
                continue
            for key in ("subPath", "subPathExpr"):
                if mount.get(key):
                    errs.append(FieldError(f"{item}.volumeMounts[{m}].{key}", Forbidden, EPHEMERAL_FORBIDDEN_DETAIL))


# --- scheduling -----------------------------------------------------------------------------------------------


def _validate_tolerations(tolerations: list[Any] | None, path: str, errs: Errors) -> None:
    for i, toleration in items_of(tolerations, path, errs):
        item = f"{path}[{i}]"
        key = get_str(toleration, "key", f"{item}.key", errs) or ""
        operator = get_str(toleration, "operator", f"{item}.operator", errs) or ""
        value = get_str(toleration, "value", f"{item}.value", errs) or ""
        effect = get_str(toleration, "effect", f"{item}.effect", errs) or ""
        seconds = get_int(toleration, "tolerationSeconds", f"{item}.tolerationSeconds", errs, bits=64)
        if key:
            validate_label_name(key, f"{item}.key", errs)
        if not key and operator != "Exists":
            errs.append(
                FieldError(
                    f"{item}.operator",
                    Invalid,
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                    operator,
                )
            )
        if seconds is not None and effect != "NoExecute":
            errs.append(
                FieldError(
                    f"{item}.effect", Invalid, "effect must be 'NoExecute' when `tolerationSeconds` is set", effect
                )
            )
        if operator in ("Equal", ""):
            msgs = is_label_value(value)
            if msgs:
                errs.append(FieldError(f"{item}.operator", Invalid, ";".join(msgs), value))
        elif operator == "Exists":
            if value:
                errs.append(
                    FieldError(f"{item}.operator", Invalid, "value must be empty when `operator` is 'Exists'", value)
                )
        else:
            errs.append(not_supported(f"{item}.operator", operator, ("Equal", "Exists")))
        if effect and effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            errs.append(not_supported(f"{item}.effect", effect, ("NoSchedule", "PreferNoSchedule", "NoExecute")))


def _validate_name_field(spec: Obj, key: str, path: str, errs: Errors, *, label: bool = False) -> None:
    value = get_str(spec, key, f"{path}.{key}", errs) or ""
    if value:
        msgs = is_dns1123_label(value) if label else name_is_dns_subdomain(value, False)
        for msg in msgs:
            errs.append(FieldError(f"{path}.{key}", Invalid, msg, value))


def _validate_security_context(spec: Obj, path: str, errs: Errors) -> None:
    """`validatePodSpecSecurityContext` for ids, process-namespace sharing and fsGroupChangePolicy.

    User and group ids run 0..MaxInt32 (apimachinery util/validation `IsValidUserID`/`IsValidGroupID`). The
    v1 `hostPID` and `shareProcessNamespace` live in the internal PodSecurityContext, so their conflict is
    reported at `securityContext.shareProcessNamespace`, as kube-apiserver does."""
    context = get_obj(spec, "securityContext", f"{path}.securityContext", errs)
    sc = f"{path}.securityContext"
    if context is not None:
        for key in ("fsGroup", "runAsUser", "runAsGroup"):
            value = get_int(context, key, f"{sc}.{key}", errs, bits=64)
            if value is not None and not 0 <= value <= MAX_INT32:
                errs.append(FieldError(f"{sc}.{key}", Invalid, inclusive_range_error(0, MAX_INT32), value))
        for j, gid in enumerate(get_list(context, "supplementalGroups", f"{sc}.supplementalGroups", errs) or []):
            gid = check_int(gid, f"{sc}.supplementalGroups[{j}]", errs, bits=64)
            if gid is not None and not 0 <= gid <= MAX_INT32:
                errs.append(
                    FieldError(f"{sc}.supplementalGroups[{j}]", Invalid, inclusive_range_error(0, MAX_INT32), gid)
                )
    share = get_bool(spec, "shareProcessNamespace", f"{path}.shareProcessNamespace", errs)
    if share and get_bool(spec, "hostPID", f"{path}.hostPID", errs):
        errs.append(
            FieldError(
                f"{sc}.shareProcessNamespace", Invalid, "ShareProcessNamespace and HostPID cannot both be enabled", True
            )
        )
    if context is None:
        return
    ratcheted = _RATCHETED.get()
    if context.get("sysctls") and not ratcheted:
        validate_sysctls(spec, context, f"{sc}.sysctls", errs)
    change_policy = get_str(context, "fsGroupChangePolicy", f"{sc}.fsGroupChangePolicy", errs)
    if change_policy is not None and change_policy not in ("Always", "OnRootMismatch"):
        errs.append(not_supported(f"{sc}.fsGroupChangePolicy", change_policy, ("Always", "OnRootMismatch")))
    if not ratcheted:
        validate_seccomp_profile(context, sc, errs)
        if "windowsOptions" in context:
            validate_windows_options(context, sc, errs)
        validate_apparmor_profile(context, sc, errs)


_IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
MAX_DNS_NAMESERVERS = 3
MAX_DNS_SEARCH_PATHS = 32
MAX_DNS_SEARCH_LIST_CHARS = 2048


def _validate_dns_config(spec: Obj, dns_policy: str, path: str, errs: Errors) -> None:
    """`validatePodDNSConfig`: at most 3 nameservers, each an IP; at most 32 search paths of 2048 characters
    in all, each a DNS subdomain once a trailing dot is dropped, with the relaxed rule of
    RelaxedDNSSearchValidation (on since 1.33: '_' allowed, '.' alone accepted); option names required."""
    dns_config = get_obj(spec, "dnsConfig", path, errs)
    if dns_policy == "None":
        if dns_config is None:
            errs.append(FieldError(path, Required, "must provide `dnsConfig` when `dnsPolicy` is None"))
            return
        if not dns_config.get("nameservers"):
            errs.append(
                FieldError(
                    f"{path}.nameservers", Required, "must provide at least one DNS nameserver when `dnsPolicy` is None"
                )
            )
            return
    if dns_config is None:
        return
    nameservers = get_list(dns_config, "nameservers", f"{path}.nameservers", errs) or []
    if len(nameservers) > MAX_DNS_NAMESERVERS:
        errs.append(
            FieldError(
                f"{path}.nameservers",
                Invalid,
                f"must not have more than {MAX_DNS_NAMESERVERS} nameservers",
                nameservers,
            )
        )
    for i, server in enumerate(nameservers):
        if type(server) is not str:
            strings_of([server], f"{path}.nameservers[{i}]", errs)
        elif not is_sloppy_ip(server):
            errs.append(FieldError(f"{path}.nameservers[{i}]", Invalid, _IP_MSG, server))
    searches = get_list(dns_config, "searches", f"{path}.searches", errs) or []
    if len(searches) > MAX_DNS_SEARCH_PATHS:
        errs.append(
            FieldError(
                f"{path}.searches", Invalid, f"must not have more than {MAX_DNS_SEARCH_PATHS} search paths", searches
            )
        )
    names = [s for s in searches if type(s) is str]
    if len(" ".join(names).encode()) > MAX_DNS_SEARCH_LIST_CHARS:
        errs.append(
            FieldError(
                f"{path}.searches",
                Invalid,
                f"must not have more than {MAX_DNS_SEARCH_LIST_CHARS} characters (including spaces) in the search list",
                searches,
            )
        )
    for i, search in enumerate(searches):
        if type(search) is not str:
            strings_of([search], f"{path}.searches[{i}]", errs)
        elif search != ".":
            trimmed = search.removesuffix(".")
            for msg in is_dns1123_subdomain_with_underscore(trimmed):
                errs.append(FieldError(f"{path}.searches[{i}]", Invalid, msg, trimmed))
    for i, option in items_of(get_list(dns_config, "options", f"{path}.options", errs), f"{path}.options", errs):
        if not get_str(option, "name", f"{path}.options[{i}].name", errs):
            errs.append(FieldError(f"{path}.options[{i}]", Required, "must not be empty"))


def _validate_host_aliases(aliases: list[Any] | None, path: str, errs: Errors) -> None:
    """`ValidateHostAliases`: each ip an IP address (`IsValidIPForLegacyField`), each hostname a DNS subdomain."""
    for i, alias in items_of(aliases, path, errs):
        ip = get_str(alias, "ip", f"{path}[{i}].ip", errs) or ""
        if not is_sloppy_ip(ip):
            errs.append(FieldError(f"{path}[{i}].ip", Invalid, _IP_MSG, ip))
        hostnames_path = f"{path}[{i}].hostnames"
        for j, hostname in enumerate(get_list(alias, "hostnames", hostnames_path, errs) or []):
            if type(hostname) is not str:
                strings_of([hostname], f"{hostnames_path}[{j}]", errs)
                continue
            for msg in is_dns1123_subdomain(hostname):
                errs.append(FieldError(f"{hostnames_path}[{j}]", Invalid, msg, hostname))


_VALID_SPECS: Memo[bytes, bool] = Memo(256)


def validate_pod_spec(
    spec: Obj,
    path: str,
    errs: Errors,
    *,
    is_pod: bool = False,
    features: FeatureGates = DEFAULT,
    hugepages: bool = False,
) -> None:
    """Kubernetes' `ValidatePodSpec` for the fields listed in the module note; with `hugepages`, then
    `validate_hugepages_values` (which ValidatePodSpec runs unless `AllowIndivisibleHugePagesValues`).

    Validation is a function of the spec alone, and a Job's pods repeat one spec but for their `hostname`
    (`<job>-<index>`), which only its own rule reads. So a spec found valid is remembered by its JSON with a
    valid hostname blanked, and the same spec with another valid hostname passes without a second walk (the
    hugepages amounts too: a pod create's, 2.4 µs, docs/perf46.md). Invalid specs are not remembered: their errors
    are built afresh, with the request's own values."""
    key = _valid_spec_key(spec, path, is_pod, features, hugepages)
    if key is not None and key in _VALID_SPECS:
        return
    before = len(errs)
    _validate_pod_spec(spec, path, errs, is_pod=is_pod, features=features)
    if hugepages:
        validate_hugepages_values(spec, path, errs)
    if key is not None and len(errs) == before:
        _VALID_SPECS.put(key, True)


def _valid_spec_key(
    spec: Obj, path: str, is_pod: bool, features: FeatureGates, hugepages: bool = False
) -> bytes | None:
    if type(spec) is not dict:
        return None
    hostname = spec.get("hostname")
    # A valid hostname (matched in place: each pod of a Job has its own, which `is_dns1123_label` would format
    # and measure) gives the same result as any other valid one.
    if type(hostname) is str and hostname and len(hostname) <= DNS1123_LABEL_MAX and dns1123_label_match(hostname):
        spec = {**spec, "hostname": ""}
    try:
        key = orjson.dumps([path, is_pod, features.text, _RATCHETED.get(), hugepages, spec])
    except TypeError:  # not JSON (a body built in process): validated every time
        return None
    # The ServiceAccount admission names each pod's token volume `kube-api-access-` and 5 random characters,
    # so no two pods of a Job would share a key. A spec whose JSON holds one such name (as whole strings, in the
    # volume and its mounts) is keyed with that name blanked, marked so that no spec written with the blank
    # itself shares the key: renaming one name of this form to another, everywhere it occurs, changes no rule.
    if key.find(_TOKEN_VOLUME_PREFIX) < 0:  # no such name: a plain search, a fraction of the regex's
        return key
    names = set(_TOKEN_VOLUME_NAME.findall(key))
    if len(names) == 1:
        return b"T" + key.replace(names.pop(), b'"kube-api-access-"')
    return key


_TOKEN_VOLUME_NAME = re.compile(rb'"kube-api-access-[a-z0-9]{5}"')
_TOKEN_VOLUME_PREFIX = b'"kube-api-access-'


def _validate_pod_spec(spec: Obj, path: str, errs: Errors, *, is_pod: bool, features: FeatureGates) -> None:
    # Kubernetes also requires terminationGracePeriodSeconds here; defaulting always sets it, so that error is
    # unreachable through the API, and the conformance corpus validates raw manifests without it.
    grace = get_int(spec, "terminationGracePeriodSeconds", f"{path}.terminationGracePeriodSeconds", errs, bits=64)
    volumes = validate_volumes(
        get_list(spec, "volumes", f"{path}.volumes", errs), f"{path}.volumes", errs, is_pod=is_pod
    )
    host_users = spec.get("hostUsers") is not False  # hostUsers defaults to true
    claims: set[str] | None = None  # a ratcheted spec skips the claim rules
    if not _RATCHETED.get():
        claims = (
            _validate_pod_resource_claims(spec, f"{path}.resourceClaims", errs) if "resourceClaims" in spec else set()
        )
    raw_restart = spec.get("restartPolicy")
    pod_restart = raw_restart if type(raw_restart) is str else ""
    containers = items_of(get_list(spec, "containers", f"{path}.containers", errs), f"{path}.containers", errs)
    extra = (host_users, claims, pod_restart)
    if not spec.get("containers"):
        errs.append(FieldError(f"{path}.containers", Required))
    else:
        _validate_containers(containers, volumes, grace, f"{path}.containers", errs, features, *extra)
    init_path = f"{path}.initContainers"
    init = items_of(get_list(spec, "initContainers", init_path, errs), init_path, errs)
    _validate_init_containers(init, containers, volumes, grace, init_path, errs, features, *extra)
    ephemeral_path = f"{path}.ephemeralContainers"
    ephemeral = items_of(get_list(spec, "ephemeralContainers", ephemeral_path, errs), ephemeral_path, errs)
    if ephemeral:
        _validate_ephemeral_containers(ephemeral, [*containers, *init], volumes, ephemeral_path, errs, *extra)
    if get_bool(spec, "hostNetwork", f"{path}.hostNetwork", errs):
        for ci, container in containers:
            for pi, port in enumerate(container.get("ports") or []):
                if type(port) is not dict:
                    continue
                host_port, container_port = port.get("hostPort") or 0, port.get("containerPort") or 0
                if (is_pod or host_port != 0) and host_port != container_port:
                    errs.append(
                        FieldError(
                            f"{path}.containers[{ci}].ports[{pi}].hostPort",
                            Invalid,
                            "must match `containerPort` when `hostNetwork` is true",
                            host_port,
                        )
                    )
    restart = get_str(spec, "restartPolicy", f"{path}.restartPolicy", errs) or ""
    _enum(restart, f"{path}.restartPolicy", ("Always", "OnFailure", "Never"), errs)
    validate_max_restart_times(spec, path, features, errs)
    dns_policy = get_str(spec, "dnsPolicy", f"{path}.dnsPolicy", errs) or ""
    _enum(dns_policy, f"{path}.dnsPolicy", ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"), errs)
    validate_labels(get_str_map(spec, "nodeSelector", f"{path}.nodeSelector", errs), f"{path}.nodeSelector", errs)
    _validate_security_context(spec, path, errs)
    for i, secret in items_of(
        get_list(spec, "imagePullSecrets", f"{path}.imagePullSecrets", errs), f"{path}.imagePullSecrets", errs
    ):
        if set(secret) - {"name"}:
            errs.append(FieldError(f"{path}.imagePullSecrets[{i}]", Invalid, "only name may be set", secret))
    if not _RATCHETED.get():
        validate_affinity(spec, path, errs)
    _validate_dns_config(spec, dns_policy, f"{path}.dnsConfig", errs)
    gates_path = f"{path}.readinessGates"
    for i, gate in items_of(get_list(spec, "readinessGates", gates_path, errs), gates_path, errs):
        condition_type = get_str(gate, "conditionType", f"{gates_path}[{i}].conditionType", errs) or ""
        for msg in is_qualified_name(condition_type):
            errs.append(FieldError(f"{gates_path}[{i}].conditionType", Invalid, msg, condition_type))
    sched_path = f"{path}.schedulingGates"
    seen_gates: set[str] = set()
    for i, gate in items_of(get_list(spec, "schedulingGates", sched_path, errs), sched_path, errs):
        gate_name = get_str(gate, "name", f"{sched_path}[{i}].name", errs) or ""
        for msg in is_qualified_name(gate_name):
            errs.append(FieldError(f"{sched_path}[{i}]", Invalid, msg, gate_name))
        if gate_name in seen_gates:
            errs.append(FieldError(f"{sched_path}[{i}]", Duplicate, "", gate_name))
        seen_gates.add(gate_name)
    if not _RATCHETED.get():
        validate_topology_spread_constraints(spec, path, errs)
        validate_windows_host_process(spec, path, errs)
        validate_host_users(spec, path, errs)
    _validate_name_field(spec, "serviceAccountName", path, errs)
    _validate_name_field(spec, "nodeName", path, errs)
    deadline = get_int(spec, "activeDeadlineSeconds", f"{path}.activeDeadlineSeconds", errs, bits=64)
    if deadline is not None and not 1 <= deadline <= MAX_INT32:
        errs.append(FieldError(f"{path}.activeDeadlineSeconds", Invalid, inclusive_range_error(1, MAX_INT32), deadline))
    _validate_name_field(spec, "hostname", path, errs, label=True)
    _validate_name_field(spec, "subdomain", path, errs, label=True)
    _validate_tolerations(get_list(spec, "tolerations", f"{path}.tolerations", errs), f"{path}.tolerations", errs)
    _validate_host_aliases(get_list(spec, "hostAliases", f"{path}.hostAliases", errs), f"{path}.hostAliases", errs)
    _validate_name_field(spec, "priorityClassName", path, errs)
    runtime_class = get_str(spec, "runtimeClassName", f"{path}.runtimeClassName", errs)
    if runtime_class is not None:
        for msg in name_is_dns_subdomain(runtime_class, False):
            errs.append(FieldError(f"{path}.runtimeClassName", Invalid, msg, runtime_class))
    preemption = get_str(spec, "preemptionPolicy", f"{path}.preemptionPolicy", errs)
    if preemption is not None:
        _enum(preemption, f"{path}.preemptionPolicy", ("PreemptLowerPriority", "Never"), errs)
    if not _RATCHETED.get():
        validate_pod_os(spec, path, errs)


_SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CONTAINER = "container.seccomp.security.alpha.kubernetes.io/"
_APPARMOR_CONTAINER = "container.apparmor.security.beta.kubernetes.io/"
_SECURITY_PREFIXES = (_SECCOMP_POD, _SECCOMP_CONTAINER, _APPARMOR_CONTAINER)


def _validate_seccomp_annotation(profile: str, path: str, errs: Errors) -> None:
    """`ValidateSeccompProfile`: runtime/default, docker/default, unconfined, or localhost/<relative path>."""
    if profile in ("runtime/default", "docker/default", "unconfined"):
        return
    if profile.startswith("localhost/"):
        validate_local_descending_path(profile.removeprefix("localhost/"), path, errs)
    else:
        errs.append(FieldError(path, Invalid, "must be a valid seccomp profile", profile))


def _container_names(spec: Obj) -> set[str]:
    names: set[str] = set()
    for key in ("containers", "initContainers", "ephemeralContainers"):
        listed = spec.get(key)
        for container in listed if type(listed) is list else ():
            if type(container) is dict and type(container.get("name")) is str:
                names.add(container["name"])
    return names


_MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
_DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
_PLAIN_ANNOTATION_KEYS: set[tuple[str, ...]] = set()
"""The keys (in order) of pod annotation maps' string entries without a mirror, deletion-cost, seccomp or AppArmor
key: only those keys' values are read by `_validate_pod_annotations`, so a map of the same keys, of any values
(strings or not: `get_str_map` only drops entries), adds no error and has no profile annotation. A Job's pods
repeat theirs."""
_PLAIN_ANNOTATION_KEYS_MAX = 1024


def _validate_pod_annotations(annotations: dict[str, str] | None, spec: Obj, path: str, errs: Errors) -> bool:
    """`ValidatePodSpecificAnnotations`: mirror pods need a node; the deletion cost must be an int32; the
    deprecated seccomp annotations name valid profiles (their errors use the key as a path child,
    `annotations.seccomp.security.alpha.kubernetes.io/pod`, as `ValidateSeccompPodAnnotations` does); the
    deprecated AppArmor annotations name a container of the pod and a valid profile. Keys in sorted order.
    Whether there is any seccomp or AppArmor annotation (a Job's pods have none)."""
    if not annotations:
        return False
    mirror = annotations.get(_MIRROR_ANNOTATION)
    if mirror is not None and not spec.get("nodeName"):
        errs.append(
            FieldError(
                f"{path}[kubernetes.io/config.mirror]",
                Invalid,
                "must set spec.nodeName if mirror pod annotation is set",
                mirror,
            )
        )
    cost = annotations.get(_DELETION_COST_ANNOTATION)
    if cost is not None:
        body = cost[1:] if cost[:1] in ("+", "-") else cost
        if not (body.isascii() and body.isdigit() and -(2**31) <= int(cost) <= MAX_INT32):
            errs.append(
                FieldError(
                    f"{path}[controller.kubernetes.io/pod-deletion-cost]", Invalid, "must be a 32bit integer", cost
                )
            )
    security = [key for key in annotations if key.startswith(_SECURITY_PREFIXES)]
    if security:  # rare: a Job's pods carry none, so they pay only the scan above
        _validate_security_annotations(annotations, sorted(security), spec, path, errs)
    return bool(security)


def _validate_security_annotations(
    annotations: dict[str, str], keys: list[str], spec: Obj, path: str, errs: Errors
) -> None:
    if _SECCOMP_POD in annotations:
        _validate_seccomp_annotation(annotations[_SECCOMP_POD], f"{path}.{_SECCOMP_POD}", errs)
    for key in keys:
        if key.startswith(_SECCOMP_CONTAINER):
            _validate_seccomp_annotation(annotations[key], f"{path}.{key}", errs)
    names: set[str] | None = None
    for key in keys:
        if not key.startswith(_APPARMOR_CONTAINER):
            continue
        names = _container_names(spec) if names is None else names
        container = key.removeprefix(_APPARMOR_CONTAINER)
        if container not in names:
            errs.append(FieldError(f"{path}[{key}]", Invalid, "container not found", container))
        profile = annotations[key]
        if profile not in ("", "runtime/default", "unconfined") and not profile.startswith("localhost/"):
            errs.append(
                FieldError(f"{path}[{key}]", Invalid, f"invalid AppArmor profile name: {go_quote(profile)}", profile)
            )


def validate_pod_template_spec(
    template: Obj | None,
    path: str,
    errs: Errors,
    *,
    features: FeatureGates = DEFAULT,
    allow_indivisible_hugepages: bool = False,
    spec_validated: bool = False,
) -> None:
    """Kubernetes' `ValidatePodTemplateSpec` (labels and annotations at `<path>.labels`, then the pod spec).

    `spec_validated`: an update leaves the stored template's pod spec as it was. It is validated again, as
    kube-apiserver does, but without the rules kjobs ported after it could have been stored (`_RATCHETED`), so an
    object stored by an older kjobs stays updatable (labels, finalizers, owner references: the garbage collector
    patches those)."""
    template = template or {}
    meta = get_obj(template, "metadata", f"{path}.metadata", errs) or {}
    validate_labels(get_str_map(meta, "labels", f"{path}.metadata.labels", errs), f"{path}.labels", errs)
    annotations = get_str_map(meta, "annotations", f"{path}.metadata.annotations", errs)
    validate_annotations(annotations, f"{path}.annotations", errs)
    spec = get_obj(template, "spec", f"{path}.spec", errs) or {}
    _validate_pod_annotations(annotations, spec, f"{path}.annotations", errs)
    token = _RATCHETED.set(spec_validated)
    try:
        validate_pod_spec(spec, f"{path}.spec", errs, features=features, hugepages=not allow_indivisible_hugepages)
    finally:
        _RATCHETED.reset(token)
    if spec.get("ephemeralContainers"):
        errs.append(
            FieldError(
                f"{path}.spec.ephemeralContainers", Forbidden, "ephemeral containers not allowed in pod template"
            )
        )


def _validate_image_whitespace(spec: Obj, errs: Errors) -> None:
    """`ValidatePodCreate`'s image check of containers and init containers (entries that are no map are the spec
    validation's to report); read in place, a path made only for an error."""
    for key in ("containers", "initContainers"):
        items = spec.get(key)
        if type(items) is not list:
            continue
        for i, container in enumerate(items):
            image = container.get("image") if type(container) is dict else None
            if type(image) is str and image != image.strip():
                errs.append(
                    FieldError(f"spec.{key}[{i}].image", Invalid, "must not have leading or trailing whitespace", image)
                )


def validate_pod(
    pod: Obj,
    *,
    spec_validated: bool = False,
    stored_meta: Obj | None = None,
    features: FeatureGates = DEFAULT,
    allow_indivisible_hugepages: bool = False,
) -> list[FieldError]:
    """Kubernetes' `ValidatePodCreate` for a core/v1 Pod (metadata and spec) as the API server runs it.

    `spec_validated`: the spec is one that passed this validation before (an update that leaves the stored
    spec as it was), so only what depends on metadata is checked again; `stored_meta`: on an update, the
    stored metadata (see `validate_object_meta`); `allow_indivisible_hugepages`: the stored pod has such an
    amount (`GetValidationOptionsFromPodSpecAndMeta`)."""
    if type(pod) is not dict:
        return [FieldError("", Invalid, "must be of type object", pod)]
    errs: Errors = []
    meta = pod.get("metadata")
    errs.extend(validate_object_meta(meta if meta is not None else {}, namespaced=True, stored=stored_meta))
    spec = get_obj(pod, "spec", "spec", errs) or {}
    shared = (
        stored_meta is not None and type(meta) is dict and meta.get("annotations") is stored_meta.get("annotations")
    )
    if spec_validated and shared:
        return errs  # the annotations' rules read them and the spec: both as they passed when stored
    raw = meta.get("annotations") if type(meta) is dict else None
    annotations: dict[str, str] | None = None
    if type(raw) is dict and tuple(raw) in _PLAIN_ANNOTATION_KEYS:
        has_profile_annotations = False  # no key the pod's annotation rules read: no error, whatever the values
    else:
        annotations = get_str_map(meta, "annotations", "metadata.annotations", []) if type(meta) is dict else None
        has_profile_annotations = _validate_pod_annotations(annotations, spec, "metadata.annotations", errs)
        if (
            annotations is not None
            and not has_profile_annotations
            and _MIRROR_ANNOTATION not in annotations
            and _DELETION_COST_ANNOTATION not in annotations
        ):
            if len(_PLAIN_ANNOTATION_KEYS) >= _PLAIN_ANNOTATION_KEYS_MAX:
                _PLAIN_ANNOTATION_KEYS.clear()
            _PLAIN_ANNOTATION_KEYS.add(tuple(annotations))
    if spec_validated:
        return errs
    validate_pod_spec(spec, "spec", errs, is_pod=True, features=features, hugepages=not allow_indivisible_hugepages)
    _validate_image_whitespace(spec, errs)
    if spec.get("ephemeralContainers"):
        errs.append(FieldError("spec.ephemeralContainers", Forbidden, "cannot be set on create"))
    if spec.get("nodeName") and spec.get("schedulingGates"):
        errs.append(FieldError("spec.nodeName", Forbidden, "cannot be set until all schedulingGates have been cleared"))
    if has_profile_annotations and stored_meta is None:  # ValidatePodCreate's; ValidatePodUpdate does not compare
        validate_profile_annotations_match(annotations, spec, errs)
    return errs
