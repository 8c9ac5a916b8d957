"""ResourceQuota and LimitRange: defaulting and validation.

`ValidateResourceQuota`, `ValidateResourceQuotaUpdate`, `ValidateResourceQuotaStatusUpdate` and
`ValidateLimitRange` of pkg/apis/core/validation/validation.go (with `validateResourceQuotaScopes`,
`validateScopedResourceSelectorRequirement`, `ValidateResourceQuantityValue`), the resource-name rules of
pkg/apis/core/helper/helpers.go (`IsStandardQuotaResourceName`, `IsResourceQuotaScopeValidForResource`,
`IsIntegerResourceName`), and `SetDefaults_LimitRangeItem` of pkg/apis/core/v1/defaults.go. Map entries are
checked in sorted key order (Go walks maps in random order).
"""

from __future__ import annotations

from typing import Any

from kjobs.api.errors import ErrorType, FieldError, Raw
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.quantity import Quantity
from kjobs.api.types import Obj
from kjobs.api.validation_formats import is_qualified_name, quantity_field
from kjobs.api.validation_meta import IMMUTABLE_MSG, NEGATIVE_MSG, validate_object_meta, validate_object_meta_update
from kjobs.api.validation_pod import STANDARD_CONTAINER_RESOURCES, STANDARD_RESOURCES

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Forbidden = ErrorType.FieldValueForbidden
Duplicate = ErrorType.FieldValueDuplicate

INVALID_QUOTA_RESOURCE = "must be a standard resource for quota"
NOT_INTEGER = "must be an integer"

_STANDARD_QUOTA_RESOURCES = STANDARD_RESOURCES - {"storage"}
_INTEGER_RESOURCES = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
STANDARD_SCOPES = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
                   "CrossNamespacePodAffinity")  # fmt: skip
_POD_COMPUTE = frozenset({"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"})
_EXISTS_ONLY = ("BestEffort", "NotBestEffort", "Terminating", "NotTerminating", "CrossNamespacePodAffinity")
_LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")


def _quota_hugepages(name: str) -> bool:
    return name.startswith(("hugepages-", "requests.hugepages-"))


def _native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _extended(name: str) -> bool:
    return not _native(name) and not name.startswith("requests.") and not is_qualified_name("requests." + name)


def _scope_valid_for(scope: str, name: str) -> bool:
    """`IsResourceQuotaScopeValidForResource`."""
    if scope in ("Terminating", "NotTerminating", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity"):
        return name == "pods" or name in _POD_COMPUTE
    if scope == "BestEffort":
        return name == "pods"
    return True


def _resource_name(name: str, path: str, errs: list[FieldError]) -> bool:
    """`validateResourceName`; False when it is not even a qualified name."""
    msgs = is_qualified_name(name)
    errs.extend(FieldError(path, Invalid, msg, name) for msg in msgs)
    if msgs:
        return False
    if "/" not in name and name not in STANDARD_RESOURCES and not _quota_hugepages(name):
        errs.append(FieldError(path, Invalid, "must be a standard resource type or fully qualified", name))
    return True


def _quota_resource_name(name: str, path: str, errs: list[FieldError]) -> None:
    """`ValidateResourceQuotaResourceName`."""
    before = len(errs)
    _resource_name(name, path, errs)
    if len(errs) == before and "/" not in name and name not in _STANDARD_QUOTA_RESOURCES and not _quota_hugepages(name):
        errs.append(FieldError(path, Invalid, INVALID_QUOTA_RESOURCE, name))


def _quantity_value(name: str, raw: Any, path: str, errs: list[FieldError]) -> None:
    """`ValidateResourceQuantityValue`: not negative; whole for the counted resources and extended ones."""
    q = quantity_field(raw, path, errs)
    if q is None:
        return
    if q.value < 0:
        errs.append(FieldError(path, Invalid, NEGATIVE_MSG, Raw(str(q))))
    if (name in _INTEGER_RESOURCES or _extended(name)) and q.milli_value() % 1000 != 0:
        errs.append(FieldError(path, Invalid, NOT_INTEGER, Raw(str(q))))


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _map(obj: Any, key: str, path: str, errs: list[FieldError]) -> dict[str, Any]:
    value = obj.get(key) if isinstance(obj, dict) else None
    if value is None:
        return {}
    if not isinstance(value, dict):
        errs.append(FieldError(path, Invalid, "must be of type object", value))
        return {}
    return value


def _resource_list(obj: Any, key: str, path: str, errs: list[FieldError]) -> None:
    values = _map(obj, key, path, errs)
    for name in sorted(values):
        entry = f"{path}[{name}]"
        _quota_resource_name(name, entry, errs)
        _quantity_value(name, values[name], entry, errs)


def _scopes(spec: Obj, errs: list[FieldError]) -> None:
    """`validateResourceQuotaScopes`."""
    scopes = spec.get("scopes") or []
    if not isinstance(scopes, list) or not scopes:
        return
    hard = sorted(spec.get("hard") or {}) if isinstance(spec.get("hard"), dict) else []
    for scope in scopes:
        if scope not in STANDARD_SCOPES:
            errs.append(FieldError("spec.scopes", Invalid, "unsupported scope", scopes))
        for name in hard:
            if (name in _STANDARD_QUOTA_RESOURCES or _quota_hugepages(name)) and not _scope_valid_for(scope, name):
                errs.append(FieldError("spec.scopes", Invalid, "unsupported scope applied to resource", scopes))
    for pair in (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating")):
        if all(s in scopes for s in pair):
            errs.append(FieldError("spec.scopes", Invalid, "conflicting scopes", scopes))


def _scope_selector(spec: Obj, errs: list[FieldError]) -> None:
    """`validateScopedResourceSelectorRequirement`."""
    selector = spec.get("scopeSelector")
    if not isinstance(selector, dict):
        return
    path = "spec.scopeSelector.matchExpressions"
    hard = sorted(spec.get("hard") or {}) if isinstance(spec.get("hard"), dict) else []
    seen: set[str] = set()
    for req in selector.get("matchExpressions") or []:
        if not isinstance(req, dict):
            continue
        scope, op, values = req.get("scopeName") or "", req.get("operator") or "", req.get("values") or []
        if scope not in STANDARD_SCOPES:
            errs.append(FieldError(f"{path}.scopeName", Invalid, "unsupported scope", scope))
        for name in hard:
            if (name in _STANDARD_QUOTA_RESOURCES or _quota_hugepages(name)) and not _scope_valid_for(scope, name):
                errs.append(FieldError(path, Invalid, "unsupported scope applied to resource", selector))
        if scope in _EXISTS_ONLY and op != "Exists":
            errs.append(
                FieldError(
                    f"{path}.operator",
                    Invalid,
                    "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, "
                    "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort "
                    "or ResourceQuotaScopeCrossNamespacePodAffinity",
                    op,
                )
            )
        if op in ("In", "NotIn"):
            if not values:
                errs.append(
                    FieldError(
                        f"{path}.values",
                        Required,
                        "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
                    )
                )
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(
                    FieldError(
                        f"{path}.values",
                        Invalid,
                        "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
                        values,
                    )
                )
        else:
            errs.append(FieldError(f"{path}.operator", Invalid, "not a valid selector operator", op))
        seen.add(str(scope))
    for pair in (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating")):
        if all(s in seen for s in pair):
            errs.append(FieldError(path, Invalid, "conflicting scopes", spec.get("scopes")))


def _spec(quota: Obj, errs: list[FieldError]) -> None:
    """`ValidateResourceQuotaSpec`."""
    spec = _dict(quota.get("spec"))
    _resource_list(spec, "hard", "spec.hard", errs)
    _scopes(spec, errs)
    _scope_selector(spec, errs)


def validate_resource_quota(quota: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateResourceQuota`: metadata, `spec` and `status` (a created quota's status is emptied first)."""
    errs = validate_object_meta(quota.get("metadata") or {}, namespaced=True)
    _spec(quota, errs)
    status = quota.get("status") if isinstance(quota.get("status"), dict) else {}
    _resource_list(status, "hard", "status.hard", errs)
    _resource_list(status, "used", "status.used", errs)
    return errs


def validate_resource_quota_update(quota: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateResourceQuotaUpdate`: metadata, `spec`, and `spec.scopes` unchanged (as a set)."""
    errs = validate_object_meta_update(quota.get("metadata") or {}, old.get("metadata") or {})
    _spec(quota, errs)
    new_scopes = (quota.get("spec") or {}).get("scopes") or []
    old_scopes = (old.get("spec") or {}).get("scopes") or []
    if set(map(str, new_scopes)) != set(map(str, old_scopes)):
        errs.append(FieldError("spec.scopes", Invalid, IMMUTABLE_MSG, new_scopes))
    return errs


def validate_resource_quota_status_update(quota: Obj, old: Obj) -> list[FieldError]:
    """`ValidateResourceQuotaStatusUpdate`."""
    errs = validate_object_meta_update(quota.get("metadata") or {}, old.get("metadata") or {})
    if not (quota.get("metadata") or {}).get("resourceVersion"):
        errs.append(FieldError("resourceVersion", Required))
    status = quota.get("status") if isinstance(quota.get("status"), dict) else {}
    _resource_list(status, "hard", "status.hard", errs)
    _resource_list(status, "used", "status.used", errs)
    return errs


# ------------------------------------------------------------------------------------------------ LimitRange


def default_limit_range_in_place(lr: Obj) -> Obj:
    """`SetDefaults_LimitRangeItem`, for each Container item: `default` from `max`, then `defaultRequest` from
    `default`, then from `min`, for the names each lacks."""
    spec = lr.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("limits"), list):
        return lr
    for item in spec["limits"]:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = dict(item.get("default") or {}) if isinstance(item.get("default") or {}, dict) else None
        request = dict(item.get("defaultRequest") or {}) if isinstance(item.get("defaultRequest") or {}, dict) else None
        if default is None or request is None:
            continue
        for source, target in (("max", default), ("default", request), ("min", request)):
            values = default if source == "default" else item.get(source) or {}
            if isinstance(values, dict):
                for name, value in values.items():
                    target.setdefault(name, value)
        for key, values in (("default", default), ("defaultRequest", request)):
            if values:
                item[key] = values
    return lr


def _limit_resource_name(limit_type: str, name: str, path: str, errs: list[FieldError]) -> None:
    """`validateLimitRangeResourceName`: container resource names for Pod and Container items."""
    if limit_type not in ("Pod", "Container"):
        _resource_name(name, path, errs)
        return
    _resource_name(name, path, errs)
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            errs.append(FieldError(path, Invalid, "must be a standard resource for containers", name))
    elif not _native(name) and not _extended(name):
        errs.append(FieldError(path, Invalid, "doesn't follow extended resource name standard", name))


def validate_limit_range(lr: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateLimitRange`."""
    errs = validate_object_meta(lr.get("metadata") or {}, namespaced=True)
    spec = _dict(lr.get("spec"))
    limits = spec.get("limits")
    if not isinstance(limits, list):
        limits = []
    seen_types: set[str] = set()
    for i, item in enumerate(limits):
        path = f"spec.limits[{i}]"
        if not isinstance(item, dict):
            errs.append(FieldError(path, Invalid, "must be of type object", item))
            continue
        limit_type = str(item.get("type") or "")
        msgs = is_qualified_name(limit_type)
        errs.extend(FieldError(f"{path}.type", Invalid, msg, limit_type) for msg in msgs)
        if not msgs and "/" not in limit_type and limit_type not in _LIMIT_TYPES:
            errs.append(
                FieldError(f"{path}.type", Invalid, "must be a standard limit type or fully qualified", limit_type)
            )
        if limit_type in seen_types:
            errs.append(FieldError(f"{path}.type", Duplicate, bad_value=limit_type))
        seen_types.add(limit_type)
        parsed: dict[str, dict[str, Quantity]] = {}
        keys: set[str] = set()
        sections = ["max", "min"]
        if limit_type == "Pod":
            for key in ("default", "defaultRequest"):
                if item.get(key):
                    errs.append(FieldError(f"{path}.{key}", Forbidden, "may not be specified when `type` is 'Pod'"))
        else:
            sections += ["default", "defaultRequest"]
        if (
            limit_type == "PersistentVolumeClaim"
            and "storage" not in (item.get("min") or {})
            and "storage" not in (item.get("max") or {})
        ):
            detail = "either minimum or maximum storage value is required, but neither was provided"
            errs.append(FieldError(f"{path}.limits", Required, detail))
        sections.append("maxLimitRequestRatio")
        for section in sections:
            values = _map(item, section, f"{path}.{section}", errs)
            parsed[section] = {}
            for name in sorted(values):
                entry = f"{path}.{section}[{name}]"
                _limit_resource_name(limit_type, name, entry, errs)
                q = quantity_field(values[name], entry, errs)
                if q is not None:
                    parsed[section][name] = q
                keys.add(name)
        for name in sorted(keys):
            _limit_item_rules(name, parsed, path, errs)
    return errs


def _limit_item_rules(name: str, parsed: dict[str, dict[str, Quantity]], path: str, errs: list[FieldError]) -> None:
    low, high = parsed["min"].get(name), parsed["max"].get(name)
    default, request = parsed.get("default", {}).get(name), parsed.get("defaultRequest", {}).get(name)
    ratio = parsed["maxLimitRequestRatio"].get(name)

    def bad(section: str, value: Quantity, detail: str) -> None:
        errs.append(FieldError(f"{path}.{section}[{name}]", Invalid, detail, Raw(str(value))))

    if low is not None and high is not None and low.value > high.value:
        bad("min", low, f"min value {low} is greater than max value {high}")
    if request is not None and low is not None and low.value > request.value:
        bad("defaultRequest", request, f"min value {low} is greater than default request value {request}")
    if request is not None and high is not None and request.value > high.value:
        bad("defaultRequest", request, f"default request value {request} is greater than max value {high}")
    if request is not None and default is not None and request.value > default.value:
        bad("defaultRequest", request, f"default request value {request} is greater than default limit value {default}")
    if default is not None and low is not None and low.value > default.value:
        bad("default", low, f"min value {low} is greater than default value {default}")
    if default is not None and high is not None and default.value > high.value:
        bad("default", high, f"default value {default} is greater than max value {high}")
    if ratio is not None and ratio.value < 1:
        bad("maxLimitRequestRatio", ratio, f"ratio {ratio} is less than 1")
    if ratio is not None and low is not None and high is not None:
        r_value, low_value, high_value = ratio.int_value(), low.int_value(), high.int_value()
        r_float = float(r_value)
        limit_max = 9223372036854775807 // 1000
        if r_value < limit_max and low_value < limit_max and high_value < limit_max:
            r_float = ratio.milli_value() / 1000
            low_value, high_value = low.milli_value(), high.milli_value()
        bound = high_value / low_value if low_value else float("inf")
        if r_float > bound:
            bad("maxLimitRequestRatio", ratio, f"ratio {ratio} is greater than max/min = {bound:f}")
    overcommit = _native(name) and not name.startswith("hugepages-")
    if not overcommit and default is not None and request is not None and default.value != request.value:
        bad(
            "defaultRequest", request, f"default value {default} must equal to defaultRequest value {request} in {name}"
        )


def validate_limit_range_update(lr: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """The LimitRange strategy's `ValidateUpdate`: `ValidateLimitRange` of the new object (and the metadata rules)."""
    errs = validate_object_meta_update(lr.get("metadata") or {}, old.get("metadata") or {})
    return errs + validate_limit_range(lr, features=features)
