"""Pod volumes and their sources, as kube-apiserver validates them.

Follows `pkg/apis/core/validation/validation.go` (kubernetes/kubernetes commit 000f26050b9b, a tree just after v1.32:
`ValidateVolumes`, `validateVolumeSource` and each source's validator, `validateDownwardAPIVolumeFile`,
`validateProjectionSources`, `validateObjectFieldSelector`, `validateContainerResourceFieldSelector`,
`validateContainerResourceDivisor`, `validateEphemeralVolumeSource` with `ValidatePersistentVolumeClaimTemplate`
and `ValidatePersistentVolumeClaimSpec`, `validateImageVolumeSource`) with Kubernetes' paths, error types,
bad values, details and emission order, including its quirks: a downwardAPI item's errors name the source, not
the item (`downwardAPI.path`), a projected token's path errors name the volume (`projected.path`), a CSI
secret's name errors name `csi.name`, a GCE disk's fields sit under `persistentDisk`, an iSCSI initiator under
`initiatorname`. docs/upstream-pod-validation.md lists the upstream rows run against it and what is left out.

Everything here runs inside `validate_pod_spec`'s memo: a Job's pods after its first pay nothing for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kjobs.api.errors import ErrorType, FieldError, Raw, go_json, not_supported, too_long
from kjobs.api.types import Obj
from kjobs.api.validation_access import (
    Errors,
    get_bool,
    get_int,
    get_list,
    get_obj,
    get_str,
    get_str_map,
    items_of,
    strings_of,
)
from kjobs.api.validation_formats import (
    inclusive_range_error,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    name_is_dns_label,
    name_is_dns_subdomain,
    quantity_field,
)
from kjobs.api.validation_meta import validate_annotations, validate_label_selector, validate_labels

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Forbidden = ErrorType.FieldValueForbidden
Duplicate = ErrorType.FieldValueDuplicate

FILE_MODE_MSG = "must be a number between 0 and 0777 (octal), both inclusive"
_MORE_THAN_ONE = "may not specify more than 1 volume type"
_DUPLICATE_PATHS = "conflicting duplicate paths"


# --- paths -----------------------------------------------------------------------------------------------------


def validate_path_no_backsteps(value: str, path: str, errs: Errors) -> None:
    """`validatePathNoBacksteps`: no `..` element. Its `filepath.ToSlash` is the identity on Linux, where
    kube-apiserver runs, so a backslash separates nothing (`a\\..\\b` passes)."""
    if ".." in value.split("/"):
        errs.append(FieldError(path, Invalid, "must not contain '..'", value))


def validate_local_descending_path(value: str, path: str, errs: Errors) -> None:
    """`validateLocalDescendingPath`: relative, without `..` elements."""
    if value.startswith("/"):
        errs.append(FieldError(path, Invalid, "must be a relative path", value))
    validate_path_no_backsteps(value, path, errs)


def validate_local_non_reserved_path(value: str, path: str, errs: Errors) -> None:
    """`ValidateLocalNonReservedPath`: a descending path that does not start with `..` either (the atomic
    writer's own names); not reported twice when a `../` already was."""
    validate_local_descending_path(value, path, errs)
    if value.startswith("..") and not value.startswith("../"):
        errs.append(FieldError(path, Invalid, "must not start with '..'", value))


def _file_mode(holder: Obj, key: str, path: str, errs: Errors) -> None:
    mode = get_int(holder, key, path, errs)
    if mode is not None and not 0 <= mode <= 0o777:
        errs.append(FieldError(path, Invalid, FILE_MODE_MSG, mode))


def _key_to_path(item: Obj, path: str, errs: Errors) -> str:
    """`validateKeyToPath`; returns the item's path (for the projected duplicate check)."""
    if not get_str(item, "key", f"{path}.key", errs):
        errs.append(FieldError(f"{path}.key", Required))
    target = get_str(item, "path", f"{path}.path", errs) or ""
    if not target:
        errs.append(FieldError(f"{path}.path", Required))
    validate_local_non_reserved_path(target, f"{path}.path", errs)
    _file_mode(item, "mode", f"{path}.mode", errs)
    return target


def _items(source: Obj, path: str, errs: Errors) -> list[tuple[int, Obj]]:
    return items_of(get_list(source, "items", f"{path}.items", errs), f"{path}.items", errs)


def _required_str(source: Obj, key: str, path: str, errs: Errors, detail: str = "") -> str:
    value = get_str(source, key, f"{path}.{key}", errs) or ""
    if not value:
        errs.append(FieldError(f"{path}.{key}", Required, detail))
    return value


# --- downward API ----------------------------------------------------------------------------------------------

ENV_FIELD_PATHS = (
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
)
"""`validEnvDownwardAPIFieldPathExpressions`, sorted as `sets.List` gives them."""
VOLUME_FIELD_PATHS = (
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
)
"""`validVolumeDownwardAPIFieldPathExpressions`, sorted."""
_DOWNWARD_CONVERTIBLE = frozenset(
    {
        "metadata.annotations",
        "metadata.labels",
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.serviceAccountName",
        "spec.schedulerName",
        "status.phase",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
    }
)
RESOURCE_FIELD_PATHS = (
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
)
"""`validContainerResourceFieldPathExpressions`, sorted."""
_HUGEPAGES_PREFIXES = ("limits.hugepages-", "requests.hugepages-")
_BYTE_DIVISORS = frozenset({"1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"})
_BYTE_DIVISOR_LIST = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"


def _split_subscript(field_path: str) -> tuple[str, str] | None:
    if not field_path.endswith("']"):
        return None
    start = field_path.find("['")
    if start == -1:
        return None
    return field_path[:start], field_path[start + 2 : -2]


def validate_object_field_selector(ref: Obj, expressions: tuple[str, ...], path: str, errs: Errors) -> None:
    """`validateObjectFieldSelector` with `ConvertDownwardAPIFieldLabel` (pkg/apis/core/pods/helpers.go)."""
    api_version = get_str(ref, "apiVersion", f"{path}.apiVersion", errs) or ""
    if not api_version:
        errs.append(FieldError(f"{path}.apiVersion", Required))
        return
    field_path = get_str(ref, "fieldPath", f"{path}.fieldPath", errs) or ""
    if not field_path:
        errs.append(FieldError(f"{path}.fieldPath", Required))
        return
    if api_version != "v1":
        detail = f"error converting fieldPath: unsupported pod version: {api_version}"
        errs.append(FieldError(f"{path}.fieldPath", Invalid, detail, field_path))
        return
    subscripted = _split_subscript(field_path)
    if subscripted and subscripted[0] not in ("metadata.annotations", "metadata.labels"):
        # The conversion refuses a subscript on any other field before validateObjectFieldSelector's own
        # "does not support subscript" branch can run.
        detail = f"error converting fieldPath: field label does not support subscript: {field_path}"
        errs.append(FieldError(f"{path}.fieldPath", Invalid, detail, field_path))
        return
    base = subscripted[0] if subscripted else field_path
    if base not in _DOWNWARD_CONVERTIBLE:
        detail = f"error converting fieldPath: field label not supported: {field_path}"
        errs.append(FieldError(f"{path}.fieldPath", Invalid, detail, field_path))
        return
    if subscripted:
        key = subscripted[1].lower() if base == "metadata.annotations" else subscripted[1]
        for msg in is_qualified_name(key):
            errs.append(FieldError(path, Invalid, msg, key))
    elif field_path not in expressions:
        errs.append(not_supported(f"{path}.fieldPath", field_path, expressions))


def validate_resource_field_selector(ref: Obj, path: str, errs: Errors, *, volume: bool) -> None:
    """`validateContainerResourceFieldSelector` and `validateContainerResourceDivisor`: in a volume the
    container must be named; the divisor is checked whatever the other errors."""
    container = get_str(ref, "containerName", f"{path}.containerName", errs) or ""
    resource = get_str(ref, "resource", f"{path}.resource", errs) or ""
    if volume and not container:
        errs.append(FieldError(f"{path}.containerName", Required))
    elif not resource:
        errs.append(FieldError(f"{path}.resource", Required))
    elif resource not in RESOURCE_FIELD_PATHS and not resource.startswith(_HUGEPAGES_PREFIXES):
        errs.append(not_supported(f"{path}.resource", resource, RESOURCE_FIELD_PATHS))
    raw = ref.get("divisor")
    if raw is None:
        return
    divisor = quantity_field(raw, f"{path}.divisor", errs)
    if divisor is None or divisor.value == 0:
        return
    text = str(divisor)
    detail = ""
    if resource in ("limits.cpu", "requests.cpu"):
        if text not in ("1m", "1"):
            detail = "only divisor's values 1m and 1 are supported with the cpu resource"
    elif resource in ("limits.memory", "requests.memory"):
        if text not in _BYTE_DIVISORS:
            detail = f"only divisor's values {_BYTE_DIVISOR_LIST} are supported with the memory resource"
    elif resource in ("limits.ephemeral-storage", "requests.ephemeral-storage") and text not in _BYTE_DIVISORS:
        detail = f"only divisor's values {_BYTE_DIVISOR_LIST} are supported with the local ephemeral storage resource"
    if detail:
        errs.append(FieldError(f"{path}.divisor", Invalid, detail, resource))
    if resource.startswith(_HUGEPAGES_PREFIXES) and text not in _BYTE_DIVISORS:
        detail = f"only divisor's values {_BYTE_DIVISOR_LIST} are supported with the hugepages resource"
        errs.append(FieldError(f"{path}.divisor", Invalid, detail, resource))


def _downward_api_file(item: Obj, path: str, errs: Errors) -> str:
    """`validateDownwardAPIVolumeFile`. `path` is the source's, not the item's: upstream passes the source path,
    so every item's errors read `downwardAPI.path`, `downwardAPI.fieldRef`... Returns the item's path."""
    target = get_str(item, "path", f"{path}.path", errs) or ""
    if not target:
        errs.append(FieldError(f"{path}.path", Required))
    validate_local_non_reserved_path(target, f"{path}.path", errs)
    field_ref = get_obj(item, "fieldRef", f"{path}.fieldRef", errs)
    resource_ref = get_obj(item, "resourceFieldRef", f"{path}.resourceFieldRef", errs)
    if field_ref is not None:
        validate_object_field_selector(field_ref, VOLUME_FIELD_PATHS, f"{path}.fieldRef", errs)
        if resource_ref is not None:
            detail = "fieldRef and resourceFieldRef can not be specified simultaneously"
            errs.append(FieldError(path, Invalid, detail, "resource"))
    elif resource_ref is not None:
        validate_resource_field_selector(resource_ref, f"{path}.resourceFieldRef", errs, volume=True)
    else:
        errs.append(FieldError(path, Required, "one of fieldRef and resourceFieldRef is required"))
    _file_mode(item, "mode", f"{path}.mode", errs)
    return target


def _downward_api(source: Obj, path: str, errs: Errors) -> None:
    _file_mode(source, "defaultMode", f"{path}.defaultMode", errs)
    for _, item in _items(source, path, errs):
        _downward_api_file(item, path, errs)


# --- configMap, secret, projected ------------------------------------------------------------------------------


def _config_map_or_secret(source: Obj, name_key: str, path: str, errs: Errors) -> None:
    """`validateConfigMapVolumeSource` / `validateSecretVolumeSource`."""
    _required_str(source, name_key, path, errs)
    _file_mode(source, "defaultMode", f"{path}.defaultMode", errs)
    for i, item in _items(source, path, errs):
        _key_to_path(item, f"{path}.items[{i}]", errs)


def _projected(source: Obj, path: str, errs: Errors) -> None:
    """`validateProjectedVolumeSource` / `validateProjectionSources`. Item paths must be unique across the
    configMap, secret, downwardAPI and clusterTrustBundle sources (the error names the volume, with the secret's
    or configMap's name as its value); token paths are not counted, and their errors name the volume too."""
    _file_mode(source, "defaultMode", f"{path}.defaultMode", errs)
    seen: set[str] = set()
    sources_path = f"{path}.sources"
    for i, projection in items_of(get_list(source, "sources", sources_path, errs), sources_path, errs):
        at = f"{sources_path}[{i}]"
        kinds = 0
        for key in ("secret", "configMap"):
            ref = get_obj(projection, key, f"{at}.{key}", errs)
            if ref is None:
                continue
            kinds += 1
            name = _required_str(ref, "name", f"{at}.{key}", errs)
            for j, item in _items(ref, f"{at}.{key}", errs):
                target = _key_to_path(item, f"{at}.{key}.items[{j}]", errs)
                if target:
                    if target in seen:
                        errs.append(FieldError(path, Invalid, _DUPLICATE_PATHS, name))
                    seen.add(target)
        downward = get_obj(projection, "downwardAPI", f"{at}.downwardAPI", errs)
        if downward is not None:
            kinds += 1
            for _, item in _items(downward, f"{at}.downwardAPI", errs):
                target = _downward_api_file(item, f"{at}.downwardAPI", errs)
                if target:
                    if target in seen:
                        errs.append(FieldError(path, Invalid, _DUPLICATE_PATHS, target))
                    seen.add(target)
        token = get_obj(projection, "serviceAccountToken", f"{at}.serviceAccountToken", errs)
        if token is not None:
            kinds += 1
            _service_account_token(token, f"{at}.serviceAccountToken", path, errs)
        bundle = get_obj(projection, "clusterTrustBundle", f"{at}.clusterTrustBundle", errs)
        if bundle is not None:
            kinds += 1
            target = _cluster_trust_bundle(bundle, f"{at}.clusterTrustBundle", errs)
            if target in seen:
                errs.append(FieldError(path, Invalid, _DUPLICATE_PATHS, target))
            seen.add(target)
        if kinds > 1:
            errs.append(FieldError(at, Forbidden, "may not specify more than 1 volume type per source"))


def _service_account_token(token: Obj, at: str, volume_path: str, errs: Errors) -> None:
    """A projected service account token: 10 minutes to 2^32 seconds (an absent value is Go's zero, as it is
    after defaulting only when the user wrote none); its path must be local (`AllowNonLocalProjectedTokenPath`
    applies only to updates of pods that had one)."""
    seconds = get_int(token, "expirationSeconds", f"{at}.expirationSeconds", errs, bits=64)
    seconds = seconds or 0
    if seconds < 10 * 60:
        detail = "may not specify a duration less than 10 minutes"
        errs.append(FieldError(f"{at}.expirationSeconds", Invalid, detail, seconds))
    if seconds > 1 << 32:
        detail = "may not specify a duration larger than 2^32 seconds"
        errs.append(FieldError(f"{at}.expirationSeconds", Invalid, detail, seconds))
    target = get_str(token, "path", f"{at}.path", errs) or ""
    if not target:
        errs.append(FieldError(f"{volume_path}.path", Required))
    else:
        validate_local_non_reserved_path(target, f"{volume_path}.path", errs)


def _cluster_trust_bundle(bundle: Obj, at: str, errs: Errors) -> str:
    """The structure of a clusterTrustBundle projection (name xor signerName, a label selector only with a
    signer, a local path). Only a stored pod spec that already had one gets here: with the
    ClusterTrustBundleProjection gate off, as on Kubernetes 1.32, new ones are dropped
    (kjobs/api/disabled_fields.py). The name and signer-name formats of pkg/apis/certificates are not checked."""
    name = get_str(bundle, "name", f"{at}.name", errs)
    signer = get_str(bundle, "signerName", f"{at}.signerName", errs)
    selector = get_obj(bundle, "labelSelector", f"{at}.labelSelector", errs)
    if name is not None and signer is not None:
        errs.append(FieldError(at, Invalid, "only one of name and signerName may be used", Raw(go_json(bundle))))
    elif name is not None:
        if not name:
            errs.append(FieldError(f"{at}.name", Required, "must be a valid object name"))
        if selector is not None:
            detail = "labelSelector must be unset if name is specified"
            errs.append(FieldError(f"{at}.labelSelector", Invalid, detail, selector))
    elif signer is not None:
        if not signer:
            errs.append(FieldError(f"{at}.signerName", Required, "must be a valid signer name"))
        validate_label_selector(selector, f"{at}.labelSelector", errs)
    else:
        errs.append(FieldError(at, Required, "either name or signerName must be specified"))
    target = get_str(bundle, "path", f"{at}.path", errs) or ""
    if not target:
        errs.append(FieldError(f"{at}.path", Required))
    validate_local_non_reserved_path(target, f"{at}.path", errs)
    return target


# --- the other sources -----------------------------------------------------------------------------------------

_HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket")
_PD_PARTITION_MSG = inclusive_range_error(1, 255)
_LUN_MSG = inclusive_range_error(0, 255)
_IQN = re.compile(r"iqn\.[0-9]{4}-[0-9]{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\t\n\f\r ]+)\Z")
_EUI = re.compile(r"eui.[A-Za-z0-9]{16}\Z")
_NAA = re.compile(r"naa.[A-Za-z0-9]{32}\Z")
_ISCSI_TOO_LONG = (
    "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is "
    "specified."
)
_QUOBYTE_REGISTRY = "must be a host:port pair or multiple pairs separated by commas"
_AZURE_CACHING_MODES = ("None", "ReadOnly", "ReadWrite")
_AZURE_KINDS = ("Dedicated", "Managed", "Shared")
_AZURE_MANAGED_URI = (
    "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}",
)
_AZURE_BLOB_URI = ("https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd",)
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")


def _host_path(source: Obj, path: str, errs: Errors) -> None:
    target = get_str(source, "path", f"{path}.path", errs) or ""
    if not target:
        errs.append(FieldError(f"{path}.path", Required))
        return
    validate_path_no_backsteps(target, f"{path}.path", errs)
    kind = get_str(source, "type", f"{path}.type", errs)
    if kind is not None and kind not in _HOST_PATH_TYPES:
        errs.append(not_supported(f"{path}.type", kind, _HOST_PATH_TYPES))


def _git_repo(source: Obj, path: str, errs: Errors) -> None:
    _required_str(source, "repository", path, errs)
    validate_local_descending_path(
        get_str(source, "directory", f"{path}.directory", errs) or "", f"{path}.directory", errs
    )


def _partitioned_disk(source: Obj, id_key: str, path: str, errs: Errors) -> None:
    """GCE PD and AWS EBS: the disk is required, a partition (0 meaning the whole disk) at most 255."""
    _required_str(source, id_key, path, errs)
    partition = get_int(source, "partition", f"{path}.partition", errs) or 0
    if not 0 <= partition <= 255:
        errs.append(FieldError(f"{path}.partition", Invalid, _PD_PARTITION_MSG, partition))


def _iscsi_name(value: str, path: str, errs: Errors) -> None:
    """An IQN or initiator name: an iqn, eui or naa name of the right form."""
    if not value.startswith(("iqn", "eui", "naa")):
        errs.append(FieldError(path, Invalid, "must be valid format starting with iqn, eui, or naa", value))
    if (
        (value.startswith("iqn") and not _IQN.search(value))
        or (value.startswith("eui") and not _EUI.match(value))
        or (value.startswith("naa") and not _NAA.match(value))
    ):
        errs.append(FieldError(path, Invalid, "must be valid format", value))


def _iscsi(source: Obj, path: str, errs: Errors) -> None:
    _required_str(source, "targetPortal", path, errs)
    iqn = get_str(source, "iqn", f"{path}.iqn", errs) or ""
    if not iqn:
        errs.append(FieldError(f"{path}.iqn", Required))
    else:
        _iscsi_name(iqn, f"{path}.iqn", errs)
    lun = get_int(source, "lun", f"{path}.lun", errs) or 0
    if not 0 <= lun <= 255:
        errs.append(FieldError(f"{path}.lun", Invalid, _LUN_MSG, lun))
    chap = get_bool(source, "chapAuthDiscovery", f"{path}.chapAuthDiscovery", errs) or get_bool(
        source, "chapAuthSession", f"{path}.chapAuthSession", errs
    )
    if chap and source.get("secretRef") is None:
        errs.append(FieldError(f"{path}.secretRef", Required))
    initiator = get_str(source, "initiatorName", f"{path}.initiatorName", errs)
    if initiator is not None:
        _iscsi_name(initiator, f"{path}.initiatorname", errs)


def _nfs(source: Obj, path: str, errs: Errors) -> None:
    _required_str(source, "server", path, errs)
    target = _required_str(source, "path", path, errs)
    if not target.startswith("/"):
        errs.append(FieldError(f"{path}.path", Invalid, "must be an absolute path", target))


def _glusterfs(source: Obj, path: str, errs: Errors) -> None:
    _required_str(source, "endpoints", path, errs)
    _required_str(source, "path", path, errs)


def _flocker(source: Obj, path: str, errs: Errors) -> None:
    name = get_str(source, "datasetName", f"{path}.datasetName", errs) or ""
    uuid = get_str(source, "datasetUUID", f"{path}.datasetUUID", errs) or ""
    if not name and not uuid:
        errs.append(FieldError(path, Required, "one of datasetName and datasetUUID is required"))
    if name and uuid:
        errs.append(
            FieldError(path, Invalid, "datasetName and datasetUUID can not be specified simultaneously", "resource")
        )
    if "/" in name:
        errs.append(FieldError(f"{path}.datasetName", Invalid, "must not contain '/'", name))


def _monitors(source: Obj, path: str, errs: Errors) -> None:
    if not get_list(source, "monitors", f"{path}.monitors", errs):
        errs.append(FieldError(f"{path}.monitors", Required))


def _rbd(source: Obj, path: str, errs: Errors) -> None:
    _monitors(source, path, errs)
    _required_str(source, "image", path, errs)


def _secret_ref_name(source: Obj, path: str, errs: Errors) -> None:
    ref = get_obj(source, "secretRef", f"{path}.secretRef", errs)
    if ref is not None and not get_str(ref, "name", f"{path}.secretRef.name", errs):
        errs.append(FieldError(f"{path}.secretRef.name", Required))


def _cinder(source: Obj, path: str, errs: Errors) -> None:
    _required_str(source, "volumeID", path, errs)
    _secret_ref_name(source, path, errs)


def _split_host_port_ok(pair: str) -> bool:
    """Whether Go's `net.SplitHostPort` accepts `pair`."""
    last = pair.rfind(":")
    if last < 0:
        return False
    start, end_from = 0, 0
    if pair.startswith("["):
        end = pair.find("]")
        if end < 0 or end + 1 != last:
            return False
        start, end_from = 1, end + 1
    elif ":" in pair[:last]:
        return False
    return "[" not in pair[start:] and "]" not in pair[end_from:]


def _quobyte(source: Obj, path: str, errs: Errors) -> None:
    registry = get_str(source, "registry", f"{path}.registry", errs) or ""
    tenant = get_str(source, "tenant", f"{path}.tenant", errs) or ""
    if not registry:
        errs.append(FieldError(f"{path}.registry", Required, _QUOBYTE_REGISTRY))
    elif len(tenant.encode()) >= 65:
        detail = "must be a UUID and may not exceed a length of 64 characters"
        errs.append(FieldError(f"{path}.tenant", Required, detail))
    else:
        for pair in registry.split(","):
            if not _split_host_port_ok(pair):
                errs.append(FieldError(f"{path}.registry", Invalid, _QUOBYTE_REGISTRY, registry))
    _required_str(source, "volume", path, errs)


def _fc(source: Obj, path: str, errs: Errors) -> None:
    wwns = get_list(source, "targetWWNs", f"{path}.targetWWNs", errs) or []
    wwids = get_list(source, "wwids", f"{path}.wwids", errs) or []
    if not wwns and not wwids:
        detail = "must specify either targetWWNs or wwids, but not both"
        errs.append(FieldError(f"{path}.targetWWNs", Required, detail))
    if wwns and wwids:
        detail = "targetWWNs and wwids can not be specified simultaneously"
        errs.append(FieldError(f"{path}.targetWWNs", Invalid, detail, wwns))
    if wwns:
        lun = get_int(source, "lun", f"{path}.lun", errs)
        if lun is None:
            errs.append(FieldError(f"{path}.lun", Required, "lun is required if targetWWNs is specified"))
        elif not 0 <= lun <= 255:
            errs.append(FieldError(f"{path}.lun", Invalid, _LUN_MSG, lun))


def _flex_volume(source: Obj, path: str, errs: Errors) -> None:
    _required_str(source, "driver", path, errs)
    options = get_str_map(source, "options", f"{path}.options", errs) or {}
    for key in sorted(options):  # Go ranges over the map in random order
        namespace = key.split("/", 1)[0] if "/" in key else key
        normalized = "." + namespace.lower()
        if normalized.endswith((".kubernetes.io", ".k8s.io")):
            detail = "kubernetes.io and k8s.io namespaces are reserved"
            errs.append(FieldError(f"{path}.options[{key}]", Invalid, detail, key))


def _azure_disk(source: Obj, path: str, errs: Errors) -> None:
    _required_str(source, "diskName", path, errs)
    uri = _required_str(source, "diskURI", path, errs)
    caching = get_str(source, "cachingMode", f"{path}.cachingMode", errs)
    if caching is not None and caching not in _AZURE_CACHING_MODES:
        errs.append(not_supported(f"{path}.cachingMode", caching, _AZURE_CACHING_MODES))
    kind = get_str(source, "kind", f"{path}.kind", errs)
    if kind is not None and kind not in _AZURE_KINDS:
        errs.append(not_supported(f"{path}.kind", kind, _AZURE_KINDS))
    if kind == "Managed" and not uri.startswith("/subscriptions/"):
        errs.append(not_supported(f"{path}.diskURI", uri, _AZURE_MANAGED_URI))
    if kind is not None and kind != "Managed" and not uri.startswith("https://"):
        errs.append(not_supported(f"{path}.diskURI", uri, _AZURE_BLOB_URI))


def _dns_label(value: str, path: str, errs: Errors) -> None:
    for msg in is_dns1123_label(value):
        errs.append(FieldError(path, Invalid, msg, value))


def _storage_os(source: Obj, path: str, errs: Errors) -> None:
    name = _required_str(source, "volumeName", path, errs)
    if name:
        _dns_label(name, f"{path}.volumeName", errs)
    namespace = get_str(source, "volumeNamespace", f"{path}.volumeNamespace", errs) or ""
    if namespace:
        _dns_label(namespace, f"{path}.volumeNamespace", errs)
    _secret_ref_name(source, path, errs)


def _csi(source: Obj, path: str, errs: Errors) -> None:
    """`validateCSIVolumeSource` with `ValidateCSIDriverName`; a bad secret name is reported at `csi.name`, as
    upstream builds that path."""
    driver = get_str(source, "driver", f"{path}.driver", errs) or ""
    if not driver:
        errs.append(FieldError(f"{path}.driver", Required))
    if len(driver.encode()) > 63:
        errs.append(too_long(f"{path}.driver", 63))
    for msg in is_dns1123_subdomain(driver.lower()):
        errs.append(FieldError(f"{path}.driver", Invalid, msg, driver))
    ref = get_obj(source, "nodePublishSecretRef", f"{path}.nodePublishSecretRef", errs)
    if ref is not None:
        name = get_str(ref, "name", f"{path}.nodePublishSecretRef.name", errs) or ""
        if not name:
            errs.append(FieldError(f"{path}.nodePublishSecretRef.name", Required))
        for msg in name_is_dns_subdomain(name, False) if name else ():
            errs.append(FieldError(f"{path}.name", Invalid, msg, name))


def _image(source: Obj, path: str, errs: Errors, *, is_pod: bool) -> None:
    """`validateImageVolumeSource`: a pod's reference is required (a template's may be filled in later); the
    pull policy, defaulted from the reference, must be known."""
    reference = get_str(source, "reference", f"{path}.reference", errs) or ""
    if is_pod and not reference:
        errs.append(FieldError(f"{path}.reference", Required))
    policy = get_str(source, "pullPolicy", f"{path}.pullPolicy", errs) or ""
    if not policy:
        errs.append(FieldError(f"{path}.pullPolicy", Required))
    elif policy not in _PULL_POLICIES:
        errs.append(not_supported(f"{path}.pullPolicy", policy, _PULL_POLICIES))


# --- ephemeral volumes: the claim template ---------------------------------------------------------------------

# ObjectMeta's fields in struct order with the name `validateFieldAllowList` prints (the Go name with its first
# letter lowered, hence `uID`); labels and annotations are the only ones a claim template may set.
_TEMPLATE_META_FIELDS = (
    ("name", "name"),
    ("generateName", "generateName"),
    ("namespace", "namespace"),
    ("selfLink", "selfLink"),
    ("uid", "uID"),
    ("resourceVersion", "resourceVersion"),
    ("generation", "generation"),
    ("creationTimestamp", "creationTimestamp"),
    ("deletionTimestamp", "deletionTimestamp"),
    ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"),
    ("ownerReferences", "ownerReferences"),
    ("finalizers", "finalizers"),
    ("managedFields", "managedFields"),
)
_POINTER_OR_SLICE_META_FIELDS = frozenset(
    {"deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences", "finalizers", "managedFields"}
)
_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_VOLUME_MODES = ("Block", "Filesystem")


def _template_meta_field_set(key: str, value: Any) -> bool:
    """Whether a field differs from its Go zero value: a pointer or slice once present (even `0` or `[]`), a
    string or number unless empty or 0."""
    if value is None:
        return False
    if key in _POINTER_OR_SLICE_META_FIELDS:
        return True
    return value not in ("", 0)


def _claim_template(template: Obj, path: str, errs: Errors) -> None:
    """`ValidatePersistentVolumeClaimTemplate`: `ValidateTemplateObjectMeta`, then the claim's spec."""
    meta_path = f"{path}.metadata"
    meta = get_obj(template, "metadata", meta_path, errs) or {}
    validate_annotations(
        get_str_map(meta, "annotations", f"{meta_path}.annotations", errs), f"{meta_path}.annotations", errs
    )
    validate_labels(get_str_map(meta, "labels", f"{meta_path}.labels", errs), f"{meta_path}.labels", errs)
    for key, go_name in _TEMPLATE_META_FIELDS:
        if _template_meta_field_set(key, meta.get(key)):
            errs.append(FieldError(f"{meta_path}.{go_name}", Forbidden, "cannot be set"))
    spec_path = f"{path}.spec"
    _claim_spec(get_obj(template, "spec", spec_path, errs) or {}, spec_path, errs)


def _class_name(value: str, path: str, errs: Errors) -> None:
    for msg in name_is_dns_subdomain(value, False):
        errs.append(FieldError(path, Invalid, msg, value))


def _claim_spec(spec: Obj, path: str, errs: Errors) -> None:
    """`ValidatePersistentVolumeClaimSpec` for a new claim template (label values checked, API groups checked;
    `volumeAttributesClassName` checked, as VolumeAttributesClass is GA from 1.34)."""
    modes = strings_of(get_list(spec, "accessModes", f"{path}.accessModes", errs), f"{path}.accessModes", errs)
    if not modes:
        errs.append(FieldError(f"{path}.accessModes", Required, "at least 1 access mode is required"))
    validate_label_selector(get_obj(spec, "selector", f"{path}.selector", errs), f"{path}.selector", errs)
    once_pod = other = False
    for mode in modes:
        if mode not in _ACCESS_MODES:
            errs.append(not_supported(f"{path}.accessModes", mode, _ACCESS_MODES))
        if mode == "ReadWriteOncePod":
            once_pod = True
        elif mode in _ACCESS_MODES:
            other = True
    if once_pod and other:
        errs.append(
            FieldError(f"{path}.accessModes", Forbidden, "may not use ReadWriteOncePod with other access modes")
        )
    resources = get_obj(spec, "resources", f"{path}.resources", errs) or {}
    requests = get_obj(resources, "requests", f"{path}.resources.requests", errs) or {}
    storage_path = f"{path}.resources[storage]"
    if "storage" not in requests:
        errs.append(FieldError(storage_path, Required))
    else:
        storage = quantity_field(requests["storage"], storage_path, errs)
        if storage is not None and storage.value <= 0:
            errs.append(FieldError(storage_path, Invalid, "must be greater than zero", str(storage)))
    class_name = get_str(spec, "storageClassName", f"{path}.storageClassName", errs) or ""
    if class_name:
        _class_name(class_name, f"{path}.storageClassName", errs)
    volume_mode = get_str(spec, "volumeMode", f"{path}.volumeMode", errs)
    if volume_mode is not None and volume_mode not in _VOLUME_MODES:
        errs.append(not_supported(f"{path}.volumeMode", volume_mode, _VOLUME_MODES))
    source = get_obj(spec, "dataSource", f"{path}.dataSource", errs)
    if source is not None:
        _data_source(source, f"{path}.dataSource", errs)
    ref = get_obj(spec, "dataSourceRef", f"{path}.dataSourceRef", errs)
    if ref is not None:
        _data_source(ref, f"{path}.dataSourceRef", errs)
        namespace = get_str(ref, "namespace", f"{path}.dataSourceRef.namespace", errs) or ""
        for msg in name_is_dns_label(namespace, False) if namespace else ():
            errs.append(FieldError(f"{path}.dataSourceRef.namespace", Invalid, msg, namespace))
    # The bad value is the `*field.Path` of dataSource, which the API prints as its JSON: an empty object.
    if ref is not None and ref.get("namespace"):
        if source is not None:
            detail = "may not be specified when dataSourceRef.namespace is specified"
            errs.append(FieldError(path, Invalid, detail, {}))
    elif source is not None and ref is not None:
        same = source.get("apiGroup") == ref.get("apiGroup") and all(
            (source.get(k) or "") == (ref.get(k) or "") for k in ("kind", "name")
        )
        if not same:
            errs.append(FieldError(path, Invalid, "must match dataSourceRef", {}))
    attributes_class = get_str(spec, "volumeAttributesClassName", f"{path}.volumeAttributesClassName", errs) or ""
    if attributes_class:
        _class_name(attributes_class, f"{path}.volumeAttributesClassName", errs)


def _data_source(ref: Obj, path: str, errs: Errors) -> None:
    """`validateDataSource` / `validateDataSourceRef` (the reference's own fields)."""
    _required_str(ref, "name", path, errs)
    kind = _required_str(ref, "kind", path, errs)
    group = get_str(ref, "apiGroup", f"{path}.apiGroup", errs) or ""
    if not group and kind != "PersistentVolumeClaim":
        errs.append(
            FieldError(path, Invalid, "must be 'PersistentVolumeClaim' when referencing the default apiGroup", kind)
        )
    if group:
        for msg in is_dns1123_subdomain(group):
            errs.append(FieldError(f"{path}.apiGroup", Invalid, msg, group))


def _ephemeral(source: Obj, path: str, errs: Errors) -> None:
    template = get_obj(source, "volumeClaimTemplate", f"{path}.volumeClaimTemplate", errs)
    if template is None:
        errs.append(FieldError(f"{path}.volumeClaimTemplate", Required))
    else:
        _claim_template(template, f"{path}.volumeClaimTemplate", errs)


# --- one volume, all volumes -----------------------------------------------------------------------------------

# JSON key of each source in `validateVolumeSource`'s order, the path child its "more than 1" error names (note
# `cephFS` and upstream's `downwarAPI`), and the child its own errors sit under (`persistentDisk` for a GCE disk).
_SOURCES: tuple[tuple[str, str, str], ...] = (
    ("emptyDir", "emptyDir", "emptyDir"),
    ("hostPath", "hostPath", "hostPath"),
    ("gitRepo", "gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk", "persistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret", "secret"),
    ("nfs", "nfs", "nfs"),
    ("iscsi", "iscsi", "iscsi"),
    ("glusterfs", "glusterfs", "glusterfs"),
    ("flocker", "flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim", "persistentVolumeClaim"),
    ("rbd", "rbd", "rbd"),
    ("cinder", "cinder", "cinder"),
    ("cephfs", "cephFS", "cephfs"),
    ("quobyte", "quobyte", "quobyte"),
    ("downwardAPI", "downwarAPI", "downwardAPI"),
    ("fc", "fc", "fc"),
    ("flexVolume", "flexVolume", "flexVolume"),
    ("configMap", "configMap", "configMap"),
    ("azureFile", "azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk", "azureDisk"),
    ("storageos", "storageos", "storageos"),
    ("projected", "projected", "projected"),
    ("scaleIO", "scaleIO", "scaleIO"),
    ("csi", "csi", "csi"),
    ("ephemeral", "ephemeral", "ephemeral"),
    ("image", "image", "image"),
)


def _empty_dir(source: Obj, path: str, errs: Errors) -> None:
    """Only a negative size limit is refused; any medium is accepted (upstream checks none)."""
    if source.get("sizeLimit") is not None:
        limit = quantity_field(source["sizeLimit"], f"{path}.sizeLimit", errs)
        if limit is not None and limit.value < 0:
            detail = "SizeLimit field must be a valid resource quantity"
            errs.append(FieldError(f"{path}.sizeLimit", Forbidden, detail))


def _gce_disk(source: Obj, path: str, errs: Errors) -> None:
    _partitioned_disk(source, "pdName", path, errs)


def _aws_disk(source: Obj, path: str, errs: Errors) -> None:
    _partitioned_disk(source, "volumeID", path, errs)


def _secret(source: Obj, path: str, errs: Errors) -> None:
    _config_map_or_secret(source, "secretName", path, errs)


def _config_map(source: Obj, path: str, errs: Errors) -> None:
    _config_map_or_secret(source, "name", path, errs)


def _required_fields(*keys: str) -> Callable[[Obj, str, Errors], None]:
    """A source whose only rules are required strings, in upstream's order."""

    def check(source: Obj, path: str, errs: Errors) -> None:
        for key in keys:
            _required_str(source, key, path, errs)

    return check


_VALIDATORS: dict[str, Callable[[Obj, str, Errors], None]] = {
    "emptyDir": _empty_dir,
    "hostPath": _host_path,
    "gitRepo": _git_repo,
    "gcePersistentDisk": _gce_disk,
    "awsElasticBlockStore": _aws_disk,
    "secret": _secret,
    "nfs": _nfs,
    "iscsi": _iscsi,
    "glusterfs": _glusterfs,
    "flocker": _flocker,
    "persistentVolumeClaim": _required_fields("claimName"),
    "rbd": _rbd,
    "cinder": _cinder,
    "cephfs": _monitors,
    "quobyte": _quobyte,
    "downwardAPI": _downward_api,
    "fc": _fc,
    "flexVolume": _flex_volume,
    "configMap": _config_map,
    "azureFile": _required_fields("secretName", "shareName"),
    "vsphereVolume": _required_fields("volumePath"),
    "photonPersistentDisk": _required_fields("pdID"),
    "portworxVolume": _required_fields("volumeID"),
    "azureDisk": _azure_disk,
    "storageos": _storage_os,
    "projected": _projected,
    "scaleIO": _required_fields("gateway", "system", "volumeName"),
    "csi": _csi,
    "ephemeral": _ephemeral,
}


def validate_volume_source(volume: Obj, name: str, path: str, errs: Errors, *, is_pod: bool) -> str:
    """`validateVolumeSource`: exactly one source, checked by its own rules (a second and later one are only
    refused). Returns the key of the source checked ("" when none)."""
    kind = ""
    for key, child, errors_child in _SOURCES:
        source = volume.get(key)
        if source is None:
            continue
        if kind:
            errs.append(FieldError(f"{path}.{child}", Forbidden, _MORE_THAN_ONE))
        elif type(source) is not dict:
            errs.append(FieldError(f"{path}.{key}", Invalid, "must be of type object", source))
            kind = key
        else:
            kind = key
            at = f"{path}.{errors_child}"
            if key == "image":
                _image(source, at, errs, is_pod=is_pod)
            else:
                _VALIDATORS[key](source, at, errs)
        if key == "iscsi" and type(source) is dict and source.get("initiatorName") is not None:
            portal = source.get("targetPortal")
            if len(f"{name}:{portal if type(portal) is str else ''}".encode()) > 64:
                errs.append(FieldError(f"{path}.name", Invalid, _ISCSI_TOO_LONG, name))
    if not kind:
        errs.append(FieldError(path, Required, "must specify a volume type"))
    return kind


def validate_volumes(volumes: list[Any] | None, path: str, errs: Errors, *, is_pod: bool) -> dict[str, str]:
    """`ValidateVolumes`: volume names → the key of their source, for the volumes without errors (mounts of a
    volume with errors are reported as not found, as upstream reports them)."""
    names: dict[str, str] = {}
    for i, volume in items_of(volumes, path, errs):
        item = f"{path}[{i}]"
        local: Errors = []
        name = volume.get("name")
        kind = validate_volume_source(volume, name if type(name) is str else "", item, local, is_pod=is_pod)
        name = get_str(volume, "name", f"{item}.name", local) or ""
        if not name:
            local.append(FieldError(f"{item}.name", Required))
        else:
            for msg in is_dns1123_label(name):
                local.append(FieldError(f"{item}.name", Invalid, msg, name))
        if name in names:
            local.append(FieldError(f"{item}.name", Duplicate, "", name))
        if local:
            errs.extend(local)
        else:
            names[name] = kind
    return names
