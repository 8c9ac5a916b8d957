"""PersistentVolumes, PersistentVolumeClaims and StorageClasses: their defaults and validation.

Design note: pure, like the rest of `kjobs.api`. Defaults follow pkg/apis/core/v1/defaults.go
(`SetDefaults_PersistentVolume`, `SetDefaults_PersistentVolumeClaim`, `SetDefaults_PersistentVolumeClaimSpec`,
`SetDefaults_HostPathVolumeSource`) and pkg/apis/storage/v1/defaults.go (`SetDefaults_StorageClass`). Validation
follows pkg/apis/core/validation/validation.go (`ValidatePersistentVolume*`, `ValidatePersistentVolumeClaim*`)
and pkg/apis/storage/validation/validation.go (`ValidateStorageClass*`), with Kubernetes' paths and messages
(note upstream's `spec.persistentvolumesource`, `volumeMode` without `spec.`, and `Spec.accessModes`). A claim's
spec reuses the ephemeral volume's claim-spec check (`kjobs.api.validation_volumes`). The diff Go's `cmp.Diff`
appends to "is immutable after creation" is rendered here as one `-`/`+` line per changed field, not Go's text.
The persistent volume sources a laptop can have (`hostPath`, `local`, `nfs`, `csi`) are checked by their own
rules; the cloud and network ones share the pod volume source's rules.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any

from kjobs.api.errors import ErrorType, FieldError, not_supported, too_long
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.quantity import Quantity, QuantityError, parse_quantity
from kjobs.api.types import Obj
from kjobs.api.validation_access import Errors, get_list, get_obj, get_str, get_str_map, items_of, strings_of
from kjobs.api.validation_affinity import _node_selector_term
from kjobs.api.validation_formats import is_qualified_name, name_is_dns_subdomain, quantity_field
from kjobs.api.validation_meta import (
    IMMUTABLE_MSG,
    semantic_equal,
    validate_label_name,
    validate_object_meta,
    validate_object_meta_update,
)
from kjobs.api.validation_volumes import _VALIDATORS, _claim_spec, validate_path_no_backsteps

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Forbidden = ErrorType.FieldValueForbidden
Duplicate = ErrorType.FieldValueDuplicate

# ------------------------------------------------------------------------------------------------- names

DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
BETA_DEFAULT_CLASS_ANNOTATION = "storageclass.beta.kubernetes.io/is-default-class"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"
SELECTED_NODE_ANNOTATION = "volume.kubernetes.io/selected-node"
BIND_COMPLETED_ANNOTATION = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER_ANNOTATION = "pv.kubernetes.io/bound-by-controller"
PROVISIONED_BY_ANNOTATION = "pv.kubernetes.io/provisioned-by"
STORAGE_PROVISIONER_ANNOTATION = "volume.kubernetes.io/storage-provisioner"
BETA_STORAGE_PROVISIONER_ANNOTATION = "volume.beta.kubernetes.io/storage-provisioner"

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
CLASS_RECLAIM_POLICIES = ("Delete", "Retain")
VOLUME_MODES = ("Block", "Filesystem")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

MAX_PROVISIONER_PARAMETER_SIZE = 256 * (1 << 10)
MAX_PROVISIONER_PARAMETER_LEN = 512

_NOT_POSITIVE = "must be greater than zero"
_MORE_THAN_ONE = "may not specify more than 1 volume type"

# The persistent volume sources in `ValidatePersistentVolumeSpec`'s order: JSON key, the child its "more than 1"
# error names, the child its own errors sit under (upstream's `persistentDisk` for a GCE disk, `cephfs`).
PV_SOURCES: tuple[tuple[str, str, str], ...] = (
    ("hostPath", "hostPath", "hostPath"),
    ("gcePersistentDisk", "gcePersistentDisk", "persistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs", "glusterfs"),
    ("flocker", "flocker", "flocker"),
    ("nfs", "nfs", "nfs"),
    ("rbd", "rbd", "rbd"),
    ("quobyte", "quobyte", "quobyte"),
    ("cephfs", "cephFS", "cephfs"),
    ("iscsi", "iscsi", "iscsi"),
    ("cinder", "cinder", "cinder"),
    ("fc", "fc", "fc"),
    ("flexVolume", "", "flexVolume"),  # counted, never refused as a second source (as upstream)
    ("azureFile", "azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk", "azureDisk"),
    ("scaleIO", "scaleIO", "scaleIO"),
    ("local", "local", "local"),
    ("storageos", "storageos", "storageos"),
    ("csi", "csi", "csi"),
)
PV_SOURCE_KEYS = tuple(key for key, _, _ in PV_SOURCES)


# ---------------------------------------------------------------------------------------------- defaults


def _dict(parent: Obj, key: str) -> Obj | None:
    value = parent.get(key)
    return value if type(value) is dict else None


def default_persistent_volume_in_place(pv: Obj) -> Obj:
    """`SetDefaults_PersistentVolume` (phase Pending, reclaim policy Retain, volumeMode Filesystem) and
    `SetDefaults_HostPathVolumeSource` (type `""`)."""
    spec = _dict(pv, "spec")
    if spec is not None:
        if not spec.get("persistentVolumeReclaimPolicy"):
            spec["persistentVolumeReclaimPolicy"] = "Retain"
        if spec.get("volumeMode") is None:
            spec["volumeMode"] = "Filesystem"
        host_path = _dict(spec, "hostPath")
        if host_path is not None and host_path.get("type") is None:
            host_path["type"] = ""
    status = _dict(pv, "status")
    if status is not None and not status.get("phase"):
        status["phase"] = "Pending"
    return pv


def default_persistent_volume_claim_in_place(pvc: Obj) -> Obj:
    """`SetDefaults_PersistentVolumeClaim` (phase Pending) and `SetDefaults_PersistentVolumeClaimSpec`
    (volumeMode Filesystem)."""
    spec = _dict(pvc, "spec")
    if spec is not None and spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"
    status = _dict(pvc, "status")
    if status is not None and not status.get("phase"):
        status["phase"] = "Pending"
    return pvc


def default_storage_class_in_place(sc: Obj) -> Obj:
    """`SetDefaults_StorageClass`: reclaim policy Delete, binding mode Immediate."""
    if sc.get("reclaimPolicy") is None:
        sc["reclaimPolicy"] = "Delete"
    if sc.get("volumeBindingMode") is None:
        sc["volumeBindingMode"] = "Immediate"
    return sc


# ------------------------------------------------------------------------------------------- quantities


def storage_of(resources: Any) -> Quantity | None:
    """The `storage` quantity of a resource list (capacity, requests), or None when absent or unreadable."""
    if type(resources) is not dict or "storage" not in resources:
        return None
    try:
        return parse_quantity(resources["storage"])
    except (QuantityError, TypeError, ValueError):
        return None


def _access_modes(spec: Obj, path: str, errs: Errors) -> list[str]:
    """The access-mode rules both specs share: each supported, ReadWriteOncePod alone."""
    at = f"{path}.accessModes"
    modes = strings_of(get_list(spec, "accessModes", at, errs), at, errs)
    once_pod = other = False
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(not_supported(at, mode, ACCESS_MODES))
        if mode == "ReadWriteOncePod":
            once_pod = True
        elif mode in ACCESS_MODES:
            other = True
    if once_pod and other:
        errs.append(FieldError(at, Forbidden, "may not use ReadWriteOncePod with other access modes"))
    return modes


def _class_name(value: str, path: str, errs: Errors) -> None:
    for msg in name_is_dns_subdomain(value, False):
        errs.append(FieldError(path, Invalid, msg, value))


# --------------------------------------------------------------------------------------- PersistentVolume


def _local(source: Obj, path: str, errs: Errors) -> None:
    """`validateLocalVolumeSource`: a path, without `..`."""
    target = get_str(source, "path", f"{path}.path", errs) or ""
    if not target:
        errs.append(FieldError(f"{path}.path", Required))
        return
    validate_path_no_backsteps(target, f"{path}.path", errs)


def _csi_pv(source: Obj, path: str, errs: Errors) -> None:
    """`validateCSIPersistentVolumeSource`: the driver's name and a volume handle."""
    driver = get_str(source, "driver", f"{path}.driver", errs) or ""
    if not driver:
        errs.append(FieldError(f"{path}.driver", Required))
    if len(driver) > 63:
        errs.append(too_long(f"{path}.driver", 63))
    for msg in name_is_dns_subdomain(driver.lower(), False) if driver else ():
        errs.append(FieldError(f"{path}.driver", Invalid, msg, driver))
    if not get_str(source, "volumeHandle", f"{path}.volumeHandle", errs):
        errs.append(FieldError(f"{path}.volumeHandle", Required))


def _volume_node_affinity(affinity: Obj, path: str, errs: Errors) -> None:
    """`validateVolumeNodeAffinity`: a required node selector, with at least one term."""
    required_path = f"{path}.required"
    required = get_obj(affinity, "required", required_path, errs)
    if required is None:
        errs.append(FieldError(required_path, Required, "must specify required node constraints"))
        return
    terms_path = f"{required_path}.nodeSelectorTerms"
    terms = get_list(required, "nodeSelectorTerms", terms_path, errs)
    if not terms:
        errs.append(FieldError(terms_path, Required, "must have at least one node selector term"))
        return
    for i, term in items_of(terms, terms_path, errs):
        _node_selector_term(term, True, f"{terms_path}[{i}]", errs)


def _pv_source(spec: Obj, path: str, errs: Errors, node_affinity: bool) -> None:
    count = 0
    for key, child, errors_child in PV_SOURCES:
        source = spec.get(key)
        if source is None:
            continue
        if count and child:
            errs.append(FieldError(f"{path}.{child}", Forbidden, _MORE_THAN_ONE))
            continue
        count += 1
        if type(source) is not dict:
            errs.append(FieldError(f"{path}.{key}", Invalid, "must be of type object", source))
            continue
        at = f"{path}.{errors_child}"
        if key == "local":
            _local(source, at, errs)
            if not node_affinity:
                errs.append(FieldError(f"{path}.nodeAffinity", Required, "Local volume requires node affinity"))
        elif key == "csi":
            _csi_pv(source, at, errs)
        elif key in _VALIDATORS:
            _VALIDATORS[key](source, at, errs)
    if count == 0:
        errs.append(FieldError(path, Required, "must specify a volume type"))


def validate_persistent_volume_spec(spec: Obj, path: str = "spec") -> list[FieldError]:
    """`ValidatePersistentVolumeSpec` for a PersistentVolume (not an inline one)."""
    errs: Errors = []
    modes = _access_modes(spec, path, errs)
    if not modes:
        errs.insert(0, FieldError(f"{path}.accessModes", Required))
    capacity = get_str_map_any(spec, "capacity", f"{path}.capacity", errs)
    if not capacity:
        errs.append(FieldError(f"{path}.capacity", Required))
    if "storage" not in capacity or len(capacity) > 1:
        errs.append(not_supported(f"{path}.capacity", capacity, ("storage",)))
    for name in sorted(capacity):
        at = f"{path}.capacity[{name}]"
        quantity = quantity_field(capacity[name], at, errs)
        if quantity is None:
            continue
        if quantity.value < 0:
            errs.append(FieldError(at, Invalid, "must be a valid resource quantity", int(quantity.value)))
        if quantity.value <= 0:
            errs.append(FieldError(at, Invalid, _NOT_POSITIVE, str(quantity)))
    policy = get_str(spec, "persistentVolumeReclaimPolicy", f"{path}.persistentVolumeReclaimPolicy", errs) or ""
    if policy and policy not in RECLAIM_POLICIES:
        errs.append(not_supported(f"{path}.persistentVolumeReclaimPolicy", policy, RECLAIM_POLICIES))
    affinity = get_obj(spec, "nodeAffinity", f"{path}.nodeAffinity", errs)
    if affinity is not None:
        _volume_node_affinity(affinity, f"{path}.nodeAffinity", errs)
    _pv_source(spec, path, errs, affinity is not None)
    source = spec.get("hostPath")
    path_text = source.get("path") if type(source) is dict else None
    root = type(path_text) is str and posixpath.normpath(path_text) in ("/", "//")
    if root and policy == "Recycle":
        detail = "may not be 'recycle' for a hostPath mount of '/'"
        errs.append(FieldError(f"{path}.persistentVolumeReclaimPolicy", Forbidden, detail))
    class_name = get_str(spec, "storageClassName", f"{path}.storageClassName", errs) or ""
    if class_name:
        _class_name(class_name, f"{path}.storageClassName", errs)
    mode = get_str(spec, "volumeMode", f"{path}.volumeMode", errs)
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(not_supported(f"{path}.volumeMode", mode, VOLUME_MODES))
    attributes_class = get_str(spec, "volumeAttributesClassName", f"{path}.volumeAttributesClassName", errs)
    if attributes_class is not None:
        if not attributes_class:
            errs.append(FieldError(f"{path}.volumeAttributesClassName", Required, "an empty string is disallowed"))
        else:
            _class_name(attributes_class, f"{path}.volumeAttributesClassName", errs)
        if spec.get("csi") is None:
            errs.append(FieldError(f"{path}.csi", Required, "has to be specified when using volumeAttributesClassName"))
    return errs


def get_str_map_any(parent: Obj, key: str, path: str, errs: Errors) -> dict[str, Any]:
    """A map of names to quantities (a `ResourceList`), {} when absent or not an object."""
    value = get_obj(parent, key, path, errs)
    return value if value is not None else {}


def validate_persistent_volume(pv: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidatePersistentVolume`: cluster-scoped metadata, then the spec."""
    errs = validate_object_meta(pv.get("metadata") or {}, namespaced=False)
    spec = get_obj(pv, "spec", "spec", errs) or {}
    return errs + validate_persistent_volume_spec(spec)


def _diff(old: Obj, new: Obj, keys: tuple[str, ...] | None = None) -> str:
    """A short rendering of what changed: one `-`/`+` pair per differing field."""
    lines: list[str] = []
    for key in keys if keys is not None else sorted(set(old) | set(new)):
        if not semantic_equal(old.get(key), new.get(key)):
            lines.append(f"-\t{key}: {json.dumps(old.get(key), sort_keys=True)}")
            lines.append(f"+\t{key}: {json.dumps(new.get(key), sort_keys=True)}")
    return "\n".join(lines)


def validate_persistent_volume_update(pv: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidatePersistentVolumeUpdate`: the new volume is valid, its source and volumeMode unchanged, its node
    affinity unchanged once set (a CSI `controllerExpandSecretRef` may be added)."""
    errs = validate_object_meta_update(pv.get("metadata") or {}, old.get("metadata") or {})
    errs += validate_persistent_volume(pv, features=features)
    spec = pv.get("spec") if type(pv.get("spec")) is dict else {}
    old_spec = old.get("spec") if type(old.get("spec")) is dict else {}
    assert isinstance(spec, dict) and isinstance(old_spec, dict)
    new_sources = {k: spec.get(k) for k in PV_SOURCE_KEYS if spec.get(k) is not None}
    old_sources = {k: old_spec.get(k) for k in PV_SOURCE_KEYS if old_spec.get(k) is not None}
    new_csi, old_csi = new_sources.get("csi"), old_sources.get("csi")
    if type(new_csi) is dict and type(old_csi) is dict and old_csi.get("controllerExpandSecretRef") is None:
        new_sources["csi"] = {k: v for k, v in new_csi.items() if k != "controllerExpandSecretRef"}
    if not semantic_equal(new_sources, old_sources):
        detail = "spec.persistentvolumesource is immutable after creation\n" + _diff(old_sources, new_sources)
        errs.append(FieldError("spec.persistentvolumesource", Forbidden, detail))
    if spec.get("volumeMode") != old_spec.get("volumeMode"):
        errs.append(FieldError("volumeMode", Invalid, IMMUTABLE_MSG, spec.get("volumeMode")))
    if old_spec.get("nodeAffinity") is not None and not semantic_equal(
        spec.get("nodeAffinity"), old_spec.get("nodeAffinity")
    ):
        errs.append(FieldError("nodeAffinity", Invalid, IMMUTABLE_MSG, spec.get("nodeAffinity")))
    if old_spec.get("volumeAttributesClassName") is not None and spec.get("volumeAttributesClassName") is None:
        errs.append(
            FieldError("spec.volumeAttributesClassName", Forbidden, "update from non-nil value to nil is forbidden")
        )
    return errs


def validate_persistent_volume_status_update(
    pv: Obj, old: Obj, *, features: FeatureGates = DEFAULT
) -> list[FieldError]:
    """`ValidatePersistentVolumeStatusUpdate`: only the metadata rules."""
    return validate_object_meta_update(pv.get("metadata") or {}, old.get("metadata") or {})


# ---------------------------------------------------------------------------------- PersistentVolumeClaim


def validate_persistent_volume_claim(pvc: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidatePersistentVolumeClaim`: namespaced metadata, then `ValidatePersistentVolumeClaimSpec`."""
    errs = validate_object_meta(pvc.get("metadata") or {}, namespaced=True)
    spec = get_obj(pvc, "spec", "spec", errs) or {}
    _claim_spec(spec, "spec", errs)
    return errs


def _annotations(obj: Obj) -> dict[str, Any]:
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if type(meta) is dict else None
    return annotations if type(annotations) is dict else {}


def _phase(obj: Obj) -> str:
    status = obj.get("status")
    return str(status.get("phase") or "") if type(status) is dict else ""


def validate_persistent_volume_claim_update(
    pvc: Obj, old: Obj, *, features: FeatureGates = DEFAULT
) -> list[FieldError]:
    """`ValidatePersistentVolumeClaimUpdate`: a claim's spec is immutable, except that `volumeName` may be set
    once (the PV controller binds it), `storageClassName` may be set where it was nil (matching the beta
    annotation, if any), and a bound claim's storage request may grow (never shrink)."""
    errs = validate_object_meta_update(pvc.get("metadata") or {}, old.get("metadata") or {})
    errs += validate_persistent_volume_claim(pvc, features=features)
    raw_new, raw_old = pvc.get("spec"), old.get("spec")
    new_spec: Obj = dict(raw_new) if type(raw_new) is dict else {}
    old_spec: Obj = dict(raw_old) if type(raw_old) is dict else {}
    if not old_spec.get("volumeName"):
        old_spec["volumeName"] = new_spec.get("volumeName")
    old_ann, new_ann = _annotations(old), _annotations(pvc)
    new_class, old_class = new_spec.get("storageClassName"), old_spec.get("storageClassName")
    if (
        BETA_STORAGE_CLASS_ANNOTATION in old_ann
        and old_class is None
        and new_class is not None
        and new_class == old_ann[BETA_STORAGE_CLASS_ANNOTATION]
        and new_ann.get(BETA_STORAGE_CLASS_ANNOTATION, old_ann[BETA_STORAGE_CLASS_ANNOTATION])
        == old_ann[BETA_STORAGE_CLASS_ANNOTATION]
    ):
        new_spec.pop("storageClassName", None)
    else:
        new_value = new_ann.get(BETA_STORAGE_CLASS_ANNOTATION, "")
        old_value = old_ann.get(BETA_STORAGE_CLASS_ANNOTATION, "")
        if new_value != old_value:
            at = f"metadata.annotations.{BETA_STORAGE_CLASS_ANNOTATION}"
            errs.append(FieldError(at, Invalid, IMMUTABLE_MSG, new_value))
        upgrade_from_nil = (
            new_class is not None
            and old_class is None
            and (BETA_STORAGE_CLASS_ANNOTATION not in old_ann or new_class == old_ann[BETA_STORAGE_CLASS_ANNOTATION])
        )
        if upgrade_from_nil:
            new_spec.pop("storageClassName", None)
    bound = _phase(pvc) == "Bound"
    new_resources = new_spec.get("resources")
    if bound and type(new_resources) is dict and type(new_resources.get("requests")) is dict:
        old_requests = _requests(old)
        old_requests = old_requests if type(old_requests) is dict else {}
        requests = dict(new_resources["requests"])
        if "storage" in old_requests:
            requests["storage"] = old_requests["storage"]
        else:
            requests.pop("storage", None)
        new_spec["resources"] = {**new_resources, "requests": requests}
    if bound and new_spec.get("volumeAttributesClassName") is not None:
        new_spec["volumeAttributesClassName"] = old_spec.get("volumeAttributesClassName")
    if not semantic_equal(new_spec, old_spec):
        detail = (
            "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound "
            "claims\n" + _diff(old_spec, new_spec)
        )
        errs.append(FieldError("spec", Forbidden, detail))
    old_size = storage_of(_requests(old))
    new_size = storage_of(_requests(pvc))
    if (new_size.value if new_size else 0) < (old_size.value if old_size else 0):
        errs.append(
            FieldError("spec.resources.requests.storage", Forbidden, "field can not be less than previous value")
        )
    old_mode, new_mode = (old.get("spec") or {}).get("volumeMode"), (pvc.get("spec") or {}).get("volumeMode")
    if new_mode != old_mode:
        errs.append(FieldError("volumeMode", Invalid, IMMUTABLE_MSG, new_mode))
    old_vac = (old.get("spec") or {}).get("volumeAttributesClassName")
    new_vac = (pvc.get("spec") or {}).get("volumeAttributesClassName")
    if old_vac is not None and new_vac != old_vac:
        if new_vac is None:
            errs.append(
                FieldError("spec.volumeAttributesClassName", Forbidden, "update from non-nil value to nil is forbidden")
            )
        elif not new_vac:
            errs.append(
                FieldError(
                    "spec.volumeAttributesClassName",
                    Forbidden,
                    "update from non-nil value to an empty string is forbidden",
                )
            )
    return errs


def _requests(pvc: Obj) -> Any:
    spec = pvc.get("spec")
    resources = spec.get("resources") if type(spec) is dict else None
    return resources.get("requests") if type(resources) is dict else None


def validate_persistent_volume_claim_status_update(
    pvc: Obj, old: Obj, *, features: FeatureGates = DEFAULT
) -> list[FieldError]:
    """`ValidatePersistentVolumeClaimStatusUpdate`: the metadata rules, access modes present (at upstream's
    `Spec.accessModes`), each capacity a valid quantity."""
    errs = validate_object_meta_update(pvc.get("metadata") or {}, old.get("metadata") or {})
    spec = pvc.get("spec") if type(pvc.get("spec")) is dict else {}
    assert isinstance(spec, dict)
    if not spec.get("accessModes"):
        errs.append(FieldError("Spec.accessModes", Required))
    status = get_obj(pvc, "status", "status", errs) or {}
    capacity = get_obj(status, "capacity", "status.capacity", errs) or {}
    for name in sorted(capacity):
        at = f"status.capacity[{name}]"
        quantity = quantity_field(capacity[name], at, errs)
        if quantity is not None and quantity.value < 0:
            errs.append(FieldError(at, Invalid, "must be a valid resource quantity", int(quantity.value)))
    return errs


# ------------------------------------------------------------------------------------------- StorageClass


def _provisioner(sc: Obj, errs: Errors) -> None:
    provisioner = get_str(sc, "provisioner", "provisioner", errs) or ""
    if not provisioner:
        errs.append(FieldError("provisioner", Required))
        return
    lowered = provisioner.lower()
    for msg in is_qualified_name(lowered):
        errs.append(FieldError("provisioner", Invalid, msg, lowered))


def _parameters(sc: Obj, errs: Errors) -> None:
    params = get_str_map(sc, "parameters", "parameters", errs) or {}
    if len(params) > MAX_PROVISIONER_PARAMETER_LEN:
        errs.append(too_long("parameters", MAX_PROVISIONER_PARAMETER_LEN))
        return
    total = 0
    for key, value in params.items():
        if not key:
            errs.append(FieldError("parameters", Invalid, "field can not be empty.", key))
        total += len(key.encode()) + len(value.encode())
    if total > MAX_PROVISIONER_PARAMETER_SIZE:
        errs.append(too_long("parameters", MAX_PROVISIONER_PARAMETER_SIZE))


def _allowed_topologies(sc: Obj, errs: Errors) -> None:
    """`validateAllowedTopologies` with `ValidateTopologySelectorTerm`; like upstream, the terms are compared
    with as many empty ones as there are terms, so a term without expressions is reported as a duplicate."""
    path = "allowedTopologies"
    terms = items_of(get_list(sc, path, path, errs), path, errs)
    seen: list[dict[str, frozenset[str]]] = [{} for _ in terms]
    for i, term in terms:
        exprs_path = f"{path}[{i}].matchLabelExpressions"
        found: dict[str, frozenset[str]] = {}
        for j, req in items_of(get_list(term, "matchLabelExpressions", exprs_path, errs), exprs_path, errs):
            at = f"{exprs_path}[{j}]"
            values = strings_of(get_list(req, "values", f"{at}.values", errs), f"{at}.values", errs)
            if not values:
                errs.append(FieldError(f"{at}.values", Required, "must specify as least one value"))
            value_set: set[str] = set()
            for value in values:
                if value in value_set:
                    errs.append(FieldError(f"{at}.values", Duplicate, "", value))
                value_set.add(value)
            key = get_str(req, "key", f"{at}.key", errs) or ""
            validate_label_name(key, f"{at}.key", errs)
            if key in found:
                errs.append(FieldError(f"{at}.key", Duplicate, "", key))
            found[key] = frozenset(value_set)
        for earlier in seen:
            if earlier == found:
                errs.append(FieldError(exprs_path, Duplicate, "", ""))
        seen.append(found)


def validate_storage_class(sc: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateStorageClass`."""
    errs = validate_object_meta(sc.get("metadata") or {}, namespaced=False)
    _provisioner(sc, errs)
    _parameters(sc, errs)
    policy = get_str(sc, "reclaimPolicy", "reclaimPolicy", errs)
    if policy and policy not in CLASS_RECLAIM_POLICIES:
        errs.append(not_supported("reclaimPolicy", policy, CLASS_RECLAIM_POLICIES))
    mode = get_str(sc, "volumeBindingMode", "volumeBindingMode", errs)
    if mode is None:
        errs.append(FieldError("volumeBindingMode", Required))
    elif mode not in BINDING_MODES:
        errs.append(not_supported("volumeBindingMode", mode, BINDING_MODES))
    _allowed_topologies(sc, errs)
    return errs


def validate_storage_class_update(sc: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateStorageClassUpdate`: parameters, provisioner, reclaim policy and binding mode are fixed."""
    errs = validate_object_meta_update(sc.get("metadata") or {}, old.get("metadata") or {})
    if (sc.get("parameters") or {}) != (old.get("parameters") or {}):
        errs.append(FieldError("parameters", Forbidden, "updates to parameters are forbidden."))
    if (sc.get("provisioner") or "") != (old.get("provisioner") or ""):
        errs.append(FieldError("provisioner", Forbidden, "updates to provisioner are forbidden."))
    if sc.get("reclaimPolicy") != old.get("reclaimPolicy"):
        errs.append(FieldError("reclaimPolicy", Forbidden, "updates to reclaimPolicy are forbidden."))
    if sc.get("volumeBindingMode") != old.get("volumeBindingMode"):
        errs.append(FieldError("volumeBindingMode", Invalid, IMMUTABLE_MSG, sc.get("volumeBindingMode")))
    return errs + validate_storage_class(sc, features=features)


def host_path(pv: Obj) -> str | None:
    """The host directory a pod's `persistentVolumeClaim` volume bound to `pv` mounts: its `hostPath.path` or
    `local.path`; None for any other source (nothing on this machine to mount)."""
    spec = pv.get("spec")
    if type(spec) is not dict:
        return None
    for key in ("hostPath", "local"):
        source = spec.get(key)
        if type(source) is dict and type(source.get("path")) is str and source["path"]:
            return str(source["path"])
    return None


def pod_claim_names(pod: Obj) -> list[str]:
    """The claims a pod's volumes name (`persistentVolumeClaim.claimName`), in order, without repeats."""
    spec = pod.get("spec")
    volumes = spec.get("volumes") if type(spec) is dict else None
    names: list[str] = []
    for volume in volumes if type(volumes) is list else ():
        source = volume.get("persistentVolumeClaim") if type(volume) is dict else None
        name = source.get("claimName") if type(source) is dict else None
        if type(name) is str and name and name not in names:
            names.append(name)
    return names


def is_default_class(sc: Obj) -> bool:
    """`IsDefaultAnnotation` (pkg/volume/util/storageclass.go): either annotation, "true"."""
    annotations = _annotations(sc)
    return (
        annotations.get(DEFAULT_CLASS_ANNOTATION) == "true" or annotations.get(BETA_DEFAULT_CLASS_ANNOTATION) == "true"
    )
