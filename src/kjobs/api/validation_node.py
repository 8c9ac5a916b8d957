"""Node validation (core/v1), as kube-apiserver's node registry runs it.

A node's taints decide where every pod may run and which are evicted (`NoExecute`), so a taint the scheduler
and the taint manager cannot read (an empty key, `effect: NoScheduleNoAdmit`, two `NoSchedule` taints with the
same key) must be refused when `kubectl taint` or a PATCH writes it, as Kubernetes refuses it. Sources:
pkg/apis/core/validation/validation.go (`ValidateNode`, `validateNodeTaints`, `validateTaintEffect`,
`ValidateNodeResources`, `ValidateNodeUpdate`) and pkg/registry/core/node/strategy.go (create: `ValidateNode`;
update: `ValidateNode` then `ValidateNodeUpdate`; status update: `ValidateNodeUpdate` alone).
"""

from __future__ import annotations

from typing import Any

import orjson

from kjobs.api.errors import ErrorType, FieldError, Raw, go_quote, not_supported
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj
from kjobs.api.validation_access import Errors, type_error
from kjobs.api.validation_formats import is_label_value, is_sloppy_ip, quantity_field
from kjobs.api.validation_meta import (
    NEGATIVE_MSG,
    validate_label_name,
    validate_object_meta,
    validate_object_meta_update,
)
from kjobs.api.validation_pod import _is_extended

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Forbidden = ErrorType.FieldValueForbidden
Duplicate = ErrorType.FieldValueDuplicate

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
"""`validateTaintEffect`'s valid values, in the order its NotSupported error lists them."""

CIDR_MSG = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
_POD_CIDR_CHANGE = 'node updates may not change podCIDR except from "" to valid'
_PROVIDER_ID_CHANGE = 'node updates may not change providerID except from "" to valid'
_INTEGER_RESOURCES = frozenset({"pods"})
"""`helper.IsIntegerResourceName`'s standard names a node reports (extended resources are integers too)."""


def drop_node_config_source(node: Obj, old: Obj | None, features: FeatureGates = DEFAULT) -> None:
    """The v1.32 node strategy's `PrepareForCreate` / `dropDisabledFields`: the deprecated dynamic kubelet
    config (`spec.configSource`, `status.config`) is not stored on create, and a new `spec.configSource` is
    dropped on update unless the stored node already uses one (pkg/registry/core/node/strategy.go)."""
    if type(node) is not dict:
        return
    spec = node.get("spec")
    old_spec = (old or {}).get("spec") if type(old) is dict else None
    in_use = type(old_spec) is dict and old_spec.get("configSource") is not None
    if type(spec) is dict and "configSource" in spec and not in_use:
        del spec["configSource"]
    status = node.get("status")
    if old is None and type(status) is dict:
        status.pop("config", None)


def validate_node(node: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """Create (`Strategy.Validate`): `ValidateNode`."""
    if type(node) is not dict:
        return [type_error("", node, "object")]
    return _validate_node(node)


def validate_node_update(node: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """Update (`Strategy.ValidateUpdate`): `ValidateNode` on the new node, then `ValidateNodeUpdate` (so a bad
    taint is reported twice, as kube-apiserver reports it)."""
    if type(node) is not dict:
        return [type_error("", node, "object")]
    return _validate_node(node) + _validate_node_update(node, old if type(old) is dict else {})


def validate_node_status_update(node: Obj, old: Obj) -> list[FieldError]:
    """Status update (`StatusStrategy.ValidateUpdate`): `ValidateNodeUpdate` alone."""
    if type(node) is not dict:
        return [type_error("", node, "object")]
    return _validate_node_update(node, old if type(old) is dict else {})


def _part(obj: Obj, key: str) -> Obj:
    value = obj.get(key)
    return value if type(value) is dict else {}


def _list(value: Any) -> list[Any]:
    return value if type(value) is list else []


def _validate_node(node: Obj) -> Errors:
    meta = node.get("metadata")
    meta = meta if type(meta) is dict else {}
    errs: Errors = validate_object_meta(meta, namespaced=False)
    validate_node_specific_annotations(meta.get("annotations"), "metadata.annotations", errs)
    spec = _part(node, "spec")
    taints = spec.get("taints")
    if type(taints) is list and taints:
        # upstream's path is metadata.taints, not spec.taints (fldPath is the metadata's in `ValidateNode`)
        validate_node_taints(taints, "metadata.taints", errs)
    _validate_node_resources(node, errs)
    cidrs = spec.get("podCIDRs")
    if type(cidrs) is list and cidrs:
        _validate_pod_cidrs([c if type(c) is str else "" for c in cidrs], "spec.podCIDRs", errs)
    return errs


def _validate_node_update(node: Obj, old: Obj) -> Errors:
    meta, old_meta = node.get("metadata"), old.get("metadata")
    meta = meta if type(meta) is dict else {}
    errs: Errors = list(validate_object_meta_update(meta, old_meta if type(old_meta) is dict else {}))
    validate_node_specific_annotations(meta.get("annotations"), "metadata.annotations", errs)
    _validate_node_resources(node, errs)
    spec, old_spec, status = _part(node, "spec"), _part(old, "spec"), _part(node, "status")
    seen: set[tuple[str, str]] = set()
    addresses = status.get("addresses")
    for i, address in enumerate(addresses if type(addresses) is list else []):
        address = address if type(address) is dict else {}
        key = (str(address.get("type") or ""), str(address.get("address") or ""))
        if key in seen:
            shown = f"core.NodeAddress{{Type:{go_quote(key[0])}, Address:{go_quote(key[1])}}}"
            errs.append(FieldError(f"status.addresses[{i}]", Duplicate, "", Raw(shown)))
        seen.add(key)
    old_cidrs, new_cidrs = _list(old_spec.get("podCIDRs")), _list(spec.get("podCIDRs"))
    if old_cidrs:
        if len(old_cidrs) != len(new_cidrs):
            errs.append(FieldError("spec.podCIDRs", Forbidden, _POD_CIDR_CHANGE))
        else:
            for old_cidr, new_cidr in zip(old_cidrs, new_cidrs, strict=True):
                if old_cidr != new_cidr:
                    errs.append(FieldError("spec.podCIDRs", Forbidden, _POD_CIDR_CHANGE))
    old_provider = old_spec.get("providerID") or ""
    if old_provider and old_provider != (spec.get("providerID") or ""):
        errs.append(FieldError("spec.providerID", Forbidden, _PROVIDER_ID_CHANGE))
    taints = spec.get("taints")
    if type(taints) is list and taints:
        validate_node_taints(taints, "metadata.taints", errs)
    if (spec.get("externalID") or "") != (old_spec.get("externalID") or ""):
        errs.append(FieldError("spec.externalID", Forbidden, "may not be updated"))
    return errs


TAINTS_ANNOTATION = "scheduler.alpha.kubernetes.io/taints"
PREFER_AVOID_PODS_ANNOTATION = "scheduler.alpha.kubernetes.io/preferAvoidPods"


def validate_node_specific_annotations(annotations: Any, path: str, errs: Errors) -> None:
    """`ValidateNodeSpecificAnnotations`: the taints and preferAvoidPods annotations, when set, must hold JSON
    the scheduler's old readers can decode, and what they decode to must be valid (`ValidateTaintsInNodeAnnotations`,
    `ValidateAvoidPodsInNodeAnnotations`). A decoding error's detail is Go's `encoding/json` message upstream;
    kjobs says only that the JSON does not decode."""
    if type(annotations) is not dict:
        return
    raw = annotations.get(TAINTS_ANNOTATION)
    if type(raw) is str and raw:
        taints = _decode(raw, list)
        if taints is None:
            errs.append(
                FieldError(path, Invalid, "cannot unmarshal the annotation as a list of taints", TAINTS_ANNOTATION)
            )
        elif taints:
            validate_node_taints(taints, f"{path}.{TAINTS_ANNOTATION}", errs)
    raw = annotations.get(PREFER_AVOID_PODS_ANNOTATION)
    if type(raw) is str and raw:
        avoid = _decode(raw, dict)
        if avoid is None:
            detail = "cannot unmarshal the annotation as AvoidPods"
            errs.append(FieldError(path, Invalid, detail, PREFER_AVOID_PODS_ANNOTATION))
            return
        entries = avoid.get("preferAvoidPods")
        for i, entry in enumerate(entries if type(entries) is list else []):
            item = f"{path}.{PREFER_AVOID_PODS_ANNOTATION}[{i}]"
            signature = entry.get("podSignature") if type(entry) is dict else None
            controller = signature.get("podController") if type(signature) is dict else None
            if type(controller) is not dict:
                errs.append(FieldError(f"{item}.PodSignature", Required))
            elif controller.get("controller") is not True:
                value = controller.get("controller") is True
                errs.append(
                    FieldError(
                        f"{item}.PodSignature.PodController.Controller", Invalid, "must point to a controller", value
                    )
                )


def _decode(raw: str, kind: type) -> Any:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if value is None:
        return kind()
    return value if type(value) is kind else None


def validate_node_taints(taints: list[Any], path: str, errs: Errors) -> None:
    """`validateNodeTaints`: key a label name, value a label value, effect one of the three, and no two taints
    with the same key and effect (the duplicate's bad value is the internal `core.Taint`, printed `%#v`)."""
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        item = f"{path}[{i}]"
        if type(taint) is not dict:
            errs.append(type_error(item, taint, "object"))
            continue
        key, value, effect = (str(taint.get(k) or "") for k in ("key", "value", "effect"))
        validate_label_name(key, f"{item}.key", errs)
        msgs = is_label_value(value)
        if msgs:
            errs.append(FieldError(f"{item}.value", Invalid, ";".join(msgs), value))
        if not effect:
            errs.append(FieldError(f"{item}.effect", Required))
        elif effect not in TAINT_EFFECTS:
            errs.append(not_supported(f"{item}.effect", effect, TAINT_EFFECTS))
        if (effect, key) in seen:
            errs.append(
                FieldError(item, Duplicate, "taints must be unique by key and effect pair", Raw(_go_taint(taint)))
            )
            continue
        seen.add((effect, key))


def _go_taint(taint: Obj) -> str:
    """`fmt.Sprintf("%#v", core.Taint{...})`; a set `timeAdded` is a pointer Go prints as its address, which no
    port can reproduce, so a fixed one stands for it."""
    added = "(*v1.Time)(nil)" if not taint.get("timeAdded") else "(*v1.Time)(0xc000000000)"
    fields = ", ".join(f"{name}:{go_quote(str(taint.get(key) or ''))}" for name, key in _TAINT_FIELDS)
    return f"core.Taint{{{fields}, TimeAdded:{added}}}"


_TAINT_FIELDS = (("Key", "key"), ("Value", "value"), ("Effect", "effect"))


def _validate_node_resources(node: Obj, errs: Errors) -> None:
    """`ValidateNodeResources`: each capacity and allocatable quantity `ValidateResourceQuantityValue` (not
    negative; an integer for pods and extended resources)."""
    status = _part(node, "status")
    for key in ("capacity", "allocatable"):
        resources = status.get(key)
        if type(resources) is not dict:
            continue
        for name, raw in resources.items():
            path = f"status.{key}.{name}"
            q = quantity_field(raw, path, errs)
            if q is None:
                continue
            if q.value < 0:
                errs.append(FieldError(path, Invalid, NEGATIVE_MSG, str(q)))
            if (name in _INTEGER_RESOURCES or _is_extended(name)) and q.milli_value() % 1000 != 0:
                errs.append(FieldError(path, Invalid, "must be an integer", Raw(str(q))))


def _validate_pod_cidrs(cidrs: list[str], path: str, errs: Errors) -> None:
    """Each a CIDR (k8s.io/utils/net `ParseCIDRSloppy`); more than one must be one IPv4 and one IPv6
    (`IsDualStackCIDRStrings`), without duplicates."""
    families = [_cidr_family(cidr) for cidr in cidrs]
    for i, (cidr, family) in enumerate(zip(cidrs, families, strict=True)):
        if family is None:
            errs.append(FieldError(f"{path}[{i}]", Invalid, CIDR_MSG, cidr))
    if len(cidrs) <= 1:
        return
    bad = next((cidr for cidr, family in zip(cidrs, families, strict=True) if family is None), None)
    if bad is not None:
        detail = f"invalid PodCIDRs. failed to check with dual stack with error:invalid CIDR address: {bad}"
        errs.append(FieldError(path, ErrorType.InternalError, detail))
    dual = bad is None and 4 in families and 6 in families
    if not dual or len(cidrs) > 2:
        shown = "[]string{" + ", ".join(go_quote(c) for c in cidrs) + "}"
        errs.append(FieldError(path, Invalid, "may specify no more than one CIDR for each IP family", Raw(shown)))
    seen: set[str] = set()
    for i, cidr in enumerate(cidrs):
        if cidr in seen:
            errs.append(FieldError(f"{path}[{i}]", Duplicate, "", cidr))
        seen.add(cidr)


def _cidr_family(cidr: str) -> int | None:
    """4 or 6 for a CIDR `ParseCIDRSloppy` accepts (leading zeros allowed in IPv4 octets), else None."""
    address, slash, prefix = cidr.partition("/")
    if not slash or not prefix.isascii() or not prefix.isdigit() or not is_sloppy_ip(address):
        return None
    bits = 128 if ":" in address else 32
    if int(prefix) > bits:
        return None
    return 6 if bits == 128 else 4
