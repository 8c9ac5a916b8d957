"""PriorityClass validation and defaulting (scheduling.k8s.io/v1), as kube-apiserver's registry runs them.

A priority class's value orders every pending pod and decides which pods preemption may evict, so the values
above a billion are kept for the two system classes and a class's value and preemption policy never change
once pods may have been admitted with them. Sources: pkg/apis/scheduling/validation/validation.go
(`ValidatePriorityClass`, `ValidatePriorityClassUpdate`), pkg/apis/scheduling/v1/helpers.go
(`IsKnownSystemPriorityClass`, the system classes), pkg/apis/scheduling/types.go (the constants),
pkg/apis/core/validation/validation.go (`ValidatePreemptionPolicy`), pkg/apis/scheduling/v1/defaults.go
(`SetDefaults_PriorityClass`) and pkg/registry/scheduling/priorityclass/strategy.go (an update is checked by
`ValidatePriorityClassUpdate` alone).
"""

from __future__ import annotations

from typing import Any

from kjobs.api.errors import ErrorType, FieldError, not_supported
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj
from kjobs.api.validation_access import type_error
from kjobs.api.validation_meta import IMMUTABLE_MSG, validate_metadata_update, validate_object_meta

HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": SYSTEM_CRITICAL_PRIORITY + 1000,
    "system-cluster-critical": SYSTEM_CRITICAL_PRIORITY,
}
"""The system classes kube-apiserver creates at start (name → value; neither is the global default)."""

PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")


def default_priority_class_in_place(pc: Obj) -> Obj:
    """`SetDefaults_PriorityClass`: `preemptionPolicy: PreemptLowerPriority` when unset."""
    if type(pc) is dict and pc.get("preemptionPolicy") is None:
        pc["preemptionPolicy"] = "PreemptLowerPriority"
    return pc


def validate_priority_class(pc: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """Create: `ValidatePriorityClass`."""
    if type(pc) is not dict:
        return [type_error("", pc, "object")]
    meta = pc.get("metadata")
    meta = meta if type(meta) is dict else {}
    errs = validate_object_meta(meta, namespaced=False)
    raw_name = meta.get("name")
    name: str = raw_name if type(raw_name) is str else ""
    value = _int(pc.get("value"))
    if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        problem = _system_class_problem(name, value, pc.get("globalDefault") is True)
        if problem:
            detail = (
                f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use "
                f"only. error: {problem}"
            )
            errs.append(FieldError("metadata.name", ErrorType.FieldValueForbidden, detail))
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        detail = f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
        errs.append(FieldError("value", ErrorType.FieldValueForbidden, detail))
    policy = pc.get("preemptionPolicy")
    if policy is not None:
        if policy == "":
            errs.append(FieldError("preemptionPolicy", ErrorType.FieldValueRequired))
        elif policy not in PREEMPTION_POLICIES:
            errs.append(not_supported("preemptionPolicy", policy, PREEMPTION_POLICIES))
    return errs


def validate_priority_class_update(pc: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """Update: `ValidatePriorityClassUpdate` (metadata update rules; `value` and `preemptionPolicy` fixed)."""
    if type(pc) is not dict:
        return [type_error("", pc, "object")]
    old = old if type(old) is dict else {}
    errs = list(validate_metadata_update(pc, old))
    if _int(pc.get("value")) != _int(old.get("value")):
        errs.append(FieldError("value", ErrorType.FieldValueForbidden, "may not be changed in an update."))
    policy = pc.get("preemptionPolicy")
    if policy != old.get("preemptionPolicy"):
        errs.append(FieldError("preemptionPolicy", ErrorType.FieldValueInvalid, IMMUTABLE_MSG, policy))
    return errs


def _int(value: Any) -> int:
    return value if type(value) is int else 0


def _system_class_problem(name: str, value: int, global_default: bool) -> str:
    """`IsKnownSystemPriorityClass`'s error text, or "" for a system class as kube-apiserver defines it."""
    if name not in SYSTEM_PRIORITY_CLASSES:
        return f"{name} is not a known system priority class"
    if value != SYSTEM_PRIORITY_CLASSES[name]:
        return f"value of {name} PriorityClass must be {SYSTEM_PRIORITY_CLASSES[name]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""
