"""PodDisruptionBudget validation (policy/v1), as kube-apiserver's registry runs it.

A budget guards every eviction of the pods it selects, so a budget the disruption controller cannot read
(`minAvailable: "nope"`, both bounds, an operator that is no operator) must be refused when written, as
Kubernetes does, not discovered later as a `SyncFailed` condition. Sources:
pkg/apis/policy/validation/validation.go (`ValidatePodDisruptionBudget`, `...StatusUpdate`),
pkg/apis/apps/validation/validation.go (`ValidatePositiveIntOrPercent`, `IsNotMoreThan100Percent`),
staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation (`ValidateLabelSelector`, `ValidateConditions`) and
pkg/registry/policy/poddisruptionbudget/strategy.go (which options each write uses).
"""

from __future__ import annotations

import re
from typing import Any

from kjobs.api.errors import ErrorType, FieldError, Raw, go_json, go_json_struct, not_supported, too_long
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj
from kjobs.api.validation_access import Errors, get_obj, type_error
from kjobs.api.validation_formats import regex_error
from kjobs.api.validation_meta import (
    validate_label_name,
    validate_label_selector,
    validate_metadata_update,
    validate_nonnegative,
    validate_object_meta,
)

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired

UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")
"""`supportedUnhealthyPodEvictionPolicies`, in the sorted order its NotSupported error lists them."""

_PERCENT = re.compile(r"[0-9]+%")
_PERCENT_MSG = regex_error(
    "a valid percent string must be a numeric string followed by an ending '%'", "[0-9]+%", "1%", "93%"
)
_CONDITION_STATUSES = ("False", "True", "Unknown")
_REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_REASON = re.compile(_REASON_FMT)
_REASON_MSG = regex_error(
    "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric "
    "characters or '_,:', and must end with an alphanumeric character or '_'",
    _REASON_FMT,
    "my_name",
    "MY_NAME",
    "MyName",
    "ReasonA,ReasonB",
    "ReasonA:ReasonB",
)
_MAX_REASON = 1024
_MAX_MESSAGE = 32 * 1024


def validate_pdb(pdb: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """Create: metadata and `ValidatePodDisruptionBudget` with strict selector values (`Strategy.Validate`)."""
    if type(pdb) is not dict:
        return [type_error("", pdb, "object")]
    errs: Errors = []
    _validate_spec(get_obj(pdb, "spec", "spec", errs) or {}, "spec", errs, allow_invalid_label_value=False)
    if errs:
        return errs  # rest.BeforeCreate answers the strategy's errors before it looks at the metadata
    meta = pdb.get("metadata")
    return validate_object_meta(meta if type(meta) is dict else {}, namespaced=True, name_fn=path_segment_name)


def path_segment_name(name: str, prefix: bool) -> list[str]:
    """`path.ValidatePathSegmentName`: the only rule for a budget's name, which `ValidatePodDisruptionBudget`
    leaves to the generic registry (staging/src/k8s.io/apiserver/pkg/registry/rest/create.go `BeforeCreate`),
    so `My_Budget` is a valid name where a Job's would not be."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


def validate_pdb_update(pdb: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """Update: metadata update rules and the whole spec again (every field may change since v1.15); selector
    values that are no label values stay allowed when the stored selector already fails validation
    (`hasInvalidLabelValueInLabelSelector`), so such an old budget can still be edited."""
    if type(pdb) is not dict:
        return [type_error("", pdb, "object")]
    old = old if type(old) is dict else {}
    errs: Errors = list(validate_metadata_update(pdb, old))
    old_spec = old.get("spec") if type(old.get("spec")) is dict else {}
    old_selector = (old_spec or {}).get("selector")
    old_errs: Errors = []
    if old_selector is not None:
        validate_label_selector(old_selector, "", old_errs)
    spec = get_obj(pdb, "spec", "spec", errs) or {}
    _validate_spec(spec, "spec", errs, allow_invalid_label_value=bool(old_errs))
    return errs


def validate_pdb_status_update(pdb: Obj, old: Obj) -> list[FieldError]:
    """Status update (`StatusStrategy.ValidateUpdate` for policy/v1): metadata update rules, the conditions,
    and no negative count."""
    if type(pdb) is not dict:
        return [type_error("", pdb, "object")]
    old = old if type(old) is dict else {}
    errs: Errors = list(validate_metadata_update(pdb, old))
    status = get_obj(pdb, "status", "status", errs) or {}
    conditions = status.get("conditions")
    if conditions is not None and type(conditions) is not list:
        errs.append(type_error("status.conditions", conditions, "array"))
    else:
        validate_conditions(conditions or [], "status.conditions", errs)
    for key in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        value = status.get(key)
        if value is not None and (type(value) is not int):
            errs.append(type_error(f"status.{key}", value, "integer"))
            continue
        validate_nonnegative(value, f"status.{key}", errs)
    return errs


def _validate_spec(spec: Obj, path: str, errs: Errors, *, allow_invalid_label_value: bool) -> None:
    """`ValidatePodDisruptionBudgetSpec`."""
    min_available, max_unavailable = spec.get("minAvailable"), spec.get("maxUnavailable")
    if min_available is not None and max_unavailable is not None:
        errs.append(FieldError(path, Invalid, "minAvailable and maxUnavailable cannot be both set", _go_spec(spec)))
    for key, value in (("minAvailable", min_available), ("maxUnavailable", max_unavailable)):
        if value is not None:
            _validate_int_or_percent(value, f"{path}.{key}", errs)
    selector = spec.get("selector")
    if selector is not None and type(selector) is not dict:
        errs.append(type_error(f"{path}.selector", selector, "object"))
    else:
        validate_label_selector(selector, f"{path}.selector", errs, allow_invalid_label_value=allow_invalid_label_value)
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        errs.append(not_supported(f"{path}.unhealthyPodEvictionPolicy", policy, list(UNHEALTHY_POD_EVICTION_POLICIES)))


def _validate_int_or_percent(value: Any, path: str, errs: Errors) -> None:
    """`ValidatePositiveIntOrPercent` then `IsNotMoreThan100Percent`: an integer ≥ 0 or `N%` with N ≤ 100."""
    if type(value) is int:
        validate_nonnegative(value, path, errs)
    elif type(value) is str:
        if not _PERCENT.fullmatch(value):
            errs.append(FieldError(path, Invalid, _PERCENT_MSG, value))
        elif int(value[:-1]) > 100:
            errs.append(FieldError(path, Invalid, "must not be greater than 100%", value))
    else:
        errs.append(type_error(path, value, "integer or string"))


def validate_conditions(conditions: list[Any], path: str, errs: Errors) -> None:
    """`metav1validation.ValidateConditions`: unique types, each a valid `metav1.Condition`."""
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        item = f"{path}[{i}]"
        if type(condition) is not dict:
            errs.append(type_error(item, condition, "object"))
            continue
        raw_type = condition.get("type")
        cond_type: str = raw_type if type(raw_type) is str else ""
        if cond_type in seen:
            errs.append(FieldError(f"{item}.type", ErrorType.FieldValueDuplicate, "", cond_type))
        seen.add(cond_type)
        validate_label_name(cond_type, f"{item}.type", errs)
        status = condition.get("status")
        if status not in _CONDITION_STATUSES:
            errs.append(
                not_supported(f"{item}.status", status if status is not None else "", list(_CONDITION_STATUSES))
            )
        generation = condition.get("observedGeneration")
        if type(generation) is int and generation < 0:
            errs.append(
                FieldError(f"{item}.observedGeneration", Invalid, "must be greater than or equal to zero", generation)
            )
        if not condition.get("lastTransitionTime"):
            errs.append(FieldError(f"{item}.lastTransitionTime", Required, "must be set"))
        reason = condition.get("reason") if type(condition.get("reason")) is str else ""
        if not reason:
            errs.append(FieldError(f"{item}.reason", Required, "must be set"))
        else:
            if not _REASON.fullmatch(reason):
                errs.append(FieldError(f"{item}.reason", Invalid, _REASON_MSG, reason))
            if len(reason.encode()) > _MAX_REASON:
                errs.append(too_long(f"{item}.reason", _MAX_REASON))
        message = condition.get("message")
        if type(message) is str and len(message.encode()) > _MAX_MESSAGE:
            errs.append(too_long(f"{item}.message", _MAX_MESSAGE))


def _go_selector(selector: Any) -> str:
    """A `metav1.LabelSelector`'s JSON in declaration order (`matchLabels`, `matchExpressions`, omitempty)."""
    if type(selector) is not dict:
        return "null"
    fields: list[tuple[str, str]] = []
    if selector.get("matchLabels"):
        fields.append(("matchLabels", go_json(selector["matchLabels"])))
    exprs = selector.get("matchExpressions")
    if type(exprs) is list and exprs:
        items = []
        for expr in exprs:
            expr = expr if type(expr) is dict else {}
            parts = [
                ("key", go_json(str(expr.get("key") or ""))),
                ("operator", go_json(str(expr.get("operator") or ""))),
            ]
            if expr.get("values"):
                parts.append(("values", go_json(expr["values"])))
            items.append(go_json_struct(parts))
        fields.append(("matchExpressions", "[" + ",".join(items) + "]"))
    return go_json_struct(fields)


def _go_spec(spec: Obj) -> Raw:
    """The internal `policy.PodDisruptionBudgetSpec` (no json tags: Go field names in declaration order, nil
    pointers as null), the bad value kube-apiserver prints when both bounds are set."""

    def opt(value: Any) -> str:
        return "null" if value is None else go_json(value)

    return Raw(
        go_json_struct(
            [
                ("MinAvailable", opt(spec.get("minAvailable"))),
                ("Selector", _go_selector(spec.get("selector"))),
                ("MaxUnavailable", opt(spec.get("maxUnavailable"))),
                ("UnhealthyPodEvictionPolicy", opt(spec.get("unhealthyPodEvictionPolicy"))),
            ]
        )
    )


PDB_V1BETA1_LABEL = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"
"""`policy.PDBV1beta1Label`: the key of the stand-in selectors for v1beta1's empty selector (pkg/apis/policy)."""


def convert_pdb_in_place(pdb: Obj) -> Obj:
    """What decoding a policy/v1 budget into the internal version does to its selector
    (pkg/apis/policy/v1/conversion.go `Convert_v1_PodDisruptionBudget_To_policy_PodDisruptionBudget`): the
    match-none stand-in (`NonV1beta1MatchNoneSelector`, one `Exists` expression on `PDB_V1BETA1_LABEL`) and the
    empty selector are kept; from any other selector every expression on that key is removed
    (`StripPDBV1beta1Label`), so the stand-in's key is never combined with a user's terms."""
    spec = pdb.get("spec")
    selector = spec.get("selector") if isinstance(spec, dict) else None
    if not isinstance(selector, dict):
        return pdb
    expressions = selector.get("matchExpressions")
    if not isinstance(expressions, list) or not expressions:
        return pdb
    if not selector.get("matchLabels") and len(expressions) == 1:
        only = expressions[0]
        if (
            isinstance(only, dict)
            and only.get("key") == PDB_V1BETA1_LABEL
            and only.get("operator") == "Exists"
            and not only.get("values")
        ):
            return pdb  # the match-none stand-in, preserved
    kept = [e for e in expressions if not (isinstance(e, dict) and e.get("key") == PDB_V1BETA1_LABEL)]
    if len(kept) != len(expressions):
        if kept:
            selector["matchExpressions"] = kept
        else:
            del selector["matchExpressions"]  # an emptied slice is left out of the stored JSON (omitempty)
    return pdb
