"""Validation of the fields behind feature gates (see `kjobs.api.features` and README "Feature gates").

A gated field whose gate is off never reaches these functions: `kjobs.api.disabled_fields` drops it first,
as Kubernetes' `dropDisabledFields` does (pkg/api/pod/util.go). With the gate on:

* container restart rules (`ContainerRestartRules`, KEP-5307): `containers[].restartPolicy` and
  `restartPolicyRules[]` (`action: Restart`, `exitCodes {operator: In|NotIn, values}`; at most 20 rules of at
  most 255 values), as pkg/apis/core/validation/validation.go validates them;
* exit-code ranges (`ExitCodeRanges`, kjobs): `valueRanges: [{from, to}]` beside `values` in a Job's
  `onExitCodes` and in restart rules — bounds, order, no overlap with each other or with `values`, and no 0
  under `In`, in the style of `validatePodFailurePolicyRuleOnExitCodes` (pkg/apis/batch/validation);
* `maxRestartTimes` (`JobPodRestartLimit`, kjobs; the pod-spec field KEP-3322 proposed): non-negative, and
  only under `restartPolicy: OnFailure`;
* rule names (`PodFailurePolicyRuleName`, kjobs; KEP-4443's optional `name`): a DNS label, unique.
"""

from __future__ import annotations

from typing import Any

from kjobs.api import features as fg
from kjobs.api.errors import ErrorType, FieldError, not_supported, too_many
from kjobs.api.features import FeatureGates
from kjobs.api.types import Obj
from kjobs.api.validation_access import Errors, check_int, get_int, get_list, get_obj, get_str, items_of
from kjobs.api.validation_formats import is_dns1123_label

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Forbidden = ErrorType.FieldValueForbidden
Duplicate = ErrorType.FieldValueDuplicate

MAX_RESTART_RULES = 20
MAX_RESTART_RULE_VALUES = 255
MAX_VALUE_RANGES = 255
_CONTAINER_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_RESTART_ACTIONS = ("Restart",)
_OPERATORS = ("In", "NotIn")


def value_ranges(
    req: Obj, path: str, values: list[int], operator: str, features: FeatureGates, errs: Errors
) -> list[tuple[int, int]]:
    """Validate `req.valueRanges` (gate `ExitCodeRanges`) against each other and `values`; the valid ranges."""
    if not features.enabled(fg.EXIT_CODE_RANGES):
        return []
    ranges_path = f"{path}.valueRanges"
    raw = get_list(req, "valueRanges", ranges_path, errs) or []
    if len(raw) > MAX_VALUE_RANGES:
        errs.append(too_many(ranges_path, len(raw), MAX_VALUE_RANGES))
    good: list[tuple[int, int]] = []
    previous: int | None = None
    ordered = True
    for k, item in items_of(raw, ranges_path, errs):
        item_path = f"{ranges_path}[{k}]"
        low = get_int(item, "from", f"{item_path}.from", errs)
        high = get_int(item, "to", f"{item_path}.to", errs)
        if low is None:
            errs.append(FieldError(f"{item_path}.from", Required))
        if high is None:
            errs.append(FieldError(f"{item_path}.to", Required))
        if low is None or high is None:
            continue
        if high < low:
            errs.append(FieldError(f"{item_path}.to", Invalid, "must be greater than or equal to from", high))
            continue
        if operator == "In" and low <= 0 <= high:
            errs.append(FieldError(item_path, Invalid, "must not contain 0 for the In operator", f"{low}-{high}"))
        for j, (other_low, other_high) in enumerate(good):
            if low <= other_high and other_low <= high:
                errs.append(
                    FieldError(item_path, Invalid, f"must not overlap with {ranges_path}[{j}]", f"{low}-{high}")
                )
        for j, value in enumerate(values):
            if low <= value <= high:
                errs.append(FieldError(f"{path}.values[{j}]", Invalid, f"must not be within {item_path}", value))
        if previous is not None and previous > low:
            ordered = False
        previous = low
        good.append((low, high))
    if not ordered:
        # Shown as the ranges in the order given, in the "from-to" form of the other range errors (Kubernetes'
        # field.Invalid always prints the value; its `values: must be ordered` prints the list).
        errs.append(FieldError(ranges_path, Invalid, "must be ordered", [f"{low}-{high}" for low, high in good]))
    return good


def has_value_ranges(req: Obj, features: FeatureGates) -> bool:
    """Whether `req` names exit codes by range (counts as a value for "at least one value is required")."""
    raw = req.get("valueRanges")
    return features.enabled(fg.EXIT_CODE_RANGES) and isinstance(raw, list) and bool(raw)


def _restart_exit_codes(exit_codes: Obj, path: str, features: FeatureGates, errs: Errors) -> None:
    operator = get_str(exit_codes, "operator", f"{path}.operator", errs) or ""
    if not operator:
        errs.append(FieldError(f"{path}.operator", Required))
    elif operator not in _OPERATORS:
        errs.append(not_supported(f"{path}.operator", operator, _OPERATORS))
    values_path = f"{path}.values"
    raw_values = get_list(exit_codes, "values", values_path, errs) or []
    if len(raw_values) > MAX_RESTART_RULE_VALUES:
        errs.append(too_many(values_path, len(raw_values), MAX_RESTART_RULE_VALUES))
    seen: set[int] = set()
    values: list[int] = []
    for j, raw in enumerate(raw_values):
        value = check_int(raw, f"{values_path}[{j}]", errs)
        if value is None:
            continue
        if value in seen:
            errs.append(FieldError(f"{values_path}[{j}]", Duplicate, "", value))
        seen.add(value)
        values.append(value)
    value_ranges(exit_codes, path, values, "", features, errs)


def _restart_rules(rules: list[Any], path: str, features: FeatureGates, errs: Errors) -> None:
    if len(rules) > MAX_RESTART_RULES:
        errs.append(too_many(path, len(rules), MAX_RESTART_RULES))
    for i, rule in items_of(rules, path, errs):
        item = f"{path}[{i}]"
        action = get_str(rule, "action", f"{item}.action", errs) or ""
        if not action:
            errs.append(FieldError(f"{item}.action", Required))
        elif action not in _RESTART_ACTIONS:
            errs.append(not_supported(f"{item}.action", action, _RESTART_ACTIONS))
        exit_codes = get_obj(rule, "exitCodes", f"{item}.exitCodes", errs)
        if exit_codes is None:
            errs.append(FieldError(f"{item}.exitCodes", Required, "must be specified"))
        else:
            _restart_exit_codes(exit_codes, f"{item}.exitCodes", features, errs)


def validate_container_restart(container: Obj, path: str, *, init: bool, features: FeatureGates, errs: Errors) -> None:
    """`restartPolicy`/`restartPolicyRules` of one container (regular, or `init`), gate on or off.

    With the gate off a regular container's `restartPolicy` is refused as before KEP-5307 (the API path has
    already dropped it, as Kubernetes does); an init container's `Always` (a sidecar) is not this gate's."""
    policy = get_str(container, "restartPolicy", f"{path}.restartPolicy", errs)
    rules = get_list(container, "restartPolicyRules", f"{path}.restartPolicyRules", errs)
    if not features.enabled(fg.CONTAINER_RESTART_RULES):
        if init:
            if policy is not None and policy != "Always":
                errs.append(not_supported(f"{path}.restartPolicy", policy, ("Always",)))
        elif policy is not None:
            errs.append(FieldError(f"{path}.restartPolicy", Forbidden, "may not be set for non-init containers"))
        return
    if policy is not None and policy not in _CONTAINER_RESTART_POLICIES:
        errs.append(not_supported(f"{path}.restartPolicy", policy, _CONTAINER_RESTART_POLICIES))
    if not rules:
        return
    if policy is None:
        errs.append(
            FieldError(f"{path}.restartPolicy", Required, "must specify restartPolicy when restart rules are used")
        )
    elif init and policy == "Always":
        errs.append(
            FieldError(
                f"{path}.restartPolicyRules", Forbidden, "may not be set for init containers with restartPolicy=Always"
            )
        )
        return
    _restart_rules(rules, f"{path}.restartPolicyRules", features, errs)


def validate_max_restart_times(spec: Obj, path: str, features: FeatureGates, errs: Errors) -> None:
    """`spec.maxRestartTimes` (gate `JobPodRestartLimit`): a restart limit only means something under
    `restartPolicy: OnFailure` (KEP-3322)."""
    if not features.enabled(fg.JOB_POD_RESTART_LIMIT):
        return
    limit = get_int(spec, "maxRestartTimes", f"{path}.maxRestartTimes", errs)
    if limit is None:
        return
    if limit < 0:
        errs.append(FieldError(f"{path}.maxRestartTimes", Invalid, "must be greater than or equal to 0", limit))
    if spec.get("restartPolicy") != "OnFailure":
        errs.append(
            FieldError(f"{path}.maxRestartTimes", Forbidden, 'may only be set when restartPolicy is "OnFailure"')
        )


def validate_rule_names(rules: list[tuple[int, Obj]], path: str, features: FeatureGates, errs: Errors) -> None:
    """podFailurePolicy rule `name`s (gate `PodFailurePolicyRuleName`): DNS labels, unique within the policy."""
    if not features.enabled(fg.POD_FAILURE_POLICY_RULE_NAME):
        return
    seen: set[str] = set()
    for i, rule in rules:
        name = get_str(rule, "name", f"{path}[{i}].name", errs)
        if name is None:
            continue
        for msg in is_dns1123_label(name):
            errs.append(FieldError(f"{path}[{i}].name", Invalid, msg, name))
        if name in seen:
            errs.append(FieldError(f"{path}[{i}].name", Duplicate, "", name))
        seen.add(name)


def on_failure_allowed(template_spec: Obj, features: FeatureGates) -> bool:
    """Whether a podFailurePolicy may go with `restartPolicy: OnFailure`: gate `JobPodFailurePolicyOnFailure`
    on and a restart limit set, so that the Job counts failed pods, not container restarts."""
    return features.enabled(fg.JOB_POD_FAILURE_POLICY_ON_FAILURE) and (
        features.enabled(fg.JOB_POD_RESTART_LIMIT) and template_spec.get("maxRestartTimes") is not None
    )
