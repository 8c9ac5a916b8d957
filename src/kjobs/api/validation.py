"""batch/v1 Job validation: create, spec update and status update, exact to Kubernetes.

Follows `pkg/apis/batch/validation/validation.go` (`ValidateJob`, `ValidateJobUpdate`, `ValidateJobUpdateStatus`)
with the options the registry strategy (`pkg/registry/batch/job/strategy.go`) passes when every Job feature is GA:
elastic Indexed Jobs, mutable scheduling directives for suspended never-started Jobs, and the strengthened status
rules that only fire when the fields they look at change (ratcheting). Paths, error types, details and emission
order are Kubernetes' (pkg/apis/batch/validation/validation.go). Functions never raise on malformed input: a
value of the wrong JSON type becomes a `FieldValueInvalid` error (see `validation_access`).

The API server runs, per request: create → `default_job`, `prepare_job_for_create`, `validate_job`;
update → `default_job`, `prepare_job_for_update`, `validate_job_for_update` (Kubernetes runs the create rules
and the update rules, so spec errors appear twice, as they do in Kubernetes); status → `prepare_job_status_update`,
`validate_job_status_update`. Before defaulting it drops the fields of gates that are off
(`disabled_fields`); the gated fields' own rules live in `validation_gated` (README: Feature gates).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kjobs.api import names
from kjobs.api.defaults import copy_json
from kjobs.api.disabled_fields import features_for_update, job_pod_spec, job_spec
from kjobs.api.errors import (
    OMIT,
    ErrorType,
    FieldError,
    Raw,
    go_json,
    go_json_struct,
    go_quote,
    not_supported,
    too_long,
    too_many,
)
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.goints import go_atoi
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.api.validation_access import (
    Errors,
    check_int,
    get_bool,
    get_int,
    get_list,
    get_obj,
    get_str,
    items_of,
    strings_of,
    type_error,
)
from kjobs.api.validation_formats import is_dns1123_label, is_domain_prefixed_path, is_qualified_name
from kjobs.api.validation_gated import has_value_ranges, on_failure_allowed, validate_rule_names, value_ranges
from kjobs.api.validation_meta import (
    IMMUTABLE_MSG,
    selector_has_invalid_label_value,
    selector_matches,
    semantic_equal,
    validate_label_selector,
    validate_nonnegative,
    validate_object_meta,
    validate_object_meta_update,
)
from kjobs.api.validation_pod import uses_indivisible_hugepages, validate_pod, validate_pod_template_spec
from kjobs.api.validation_pod_update import validate_pod_update

__all__ = [
    "validate_job",
    "validate_job_for_update",
    "validate_job_status_update",
    "validate_job_update",
    "validate_object_meta",
    "validate_pod",
    "validate_pod_update",
]

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Duplicate = ErrorType.FieldValueDuplicate

MAX_PARALLELISM_FOR_INDEXED_JOB = 100_000
MAX_FAILED_INDEXES_FOR_INDEXED_JOB = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS = 10_000
MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS = 10_000
MAX_POD_FAILURE_POLICY_RULES = 20
MAX_ON_EXIT_CODES_VALUES = 255
MAX_ON_POD_CONDITIONS_PATTERNS = 20
MAX_MANAGED_BY_LENGTH = 63
MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024
MAX_SUCCESS_POLICY_RULES = 20

_ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
_OPERATORS = ("In", "NotIn")
_STATUSES = ("False", "True", "Unknown")
_REPLACEMENT_POLICIES = ("Failed", "TerminatingOrFailed")


def _json_opt_str(value: Any) -> str:
    return "null" if value is None else go_json(value if isinstance(value, (str, int, float, bool)) else str(value))


def _go_success_policy(policy: Obj) -> str:
    """The JSON of the internal `batch.SuccessPolicy` (no json tags: Go field names, nil pointers as null), the
    bad value Kubernetes prints for it (`spec.successPolicy: Invalid value: {"Rules":[]}: ...` in
    TestValidateJobCreate, pkg/apis/batch/validation/validation_test.go)."""
    rules = policy.get("rules")
    if not isinstance(rules, list):
        return go_json_struct([("Rules", "null")])
    items = (
        "["
        + ",".join(
            go_json_struct(
                [
                    ("SucceededIndexes", _json_opt_str(_dict_or_empty(r).get("succeededIndexes"))),
                    ("SucceededCount", _json_opt_str(_dict_or_empty(r).get("succeededCount"))),
                ]
            )
            for r in rules
        )
        + "]"
    )
    return go_json_struct([("Rules", items)])


def _go_pod_failure_policy(policy: Obj) -> str:
    """The JSON of the internal `batch.PodFailurePolicy` (Go field names), the bad value Kubernetes prints."""
    rules = policy.get("rules")
    if not isinstance(rules, list):
        return go_json_struct([("Rules", "null")])
    items = []
    for raw in rules:
        rule = _dict_or_empty(raw)
        patterns = rule.get("onPodConditions")
        if isinstance(patterns, list):
            conditions = (
                "["
                + ",".join(
                    go_json_struct(
                        [
                            ("Type", go_json(str(_dict_or_empty(p).get("type") or ""))),
                            ("Status", go_json(str(_dict_or_empty(p).get("status") or ""))),
                        ]
                    )
                    for p in patterns
                )
                + "]"
            )
        else:
            conditions = "null"
        codes = rule.get("onExitCodes")
        if type(codes) is dict:
            values = codes.get("values")
            on_exit = go_json_struct(
                [
                    ("ContainerName", _json_opt_str(codes.get("containerName"))),
                    ("Operator", go_json(str(codes.get("operator") or ""))),
                    ("Values", go_json(values) if isinstance(values, list) else "null"),
                ]
            )
        else:
            on_exit = "null"
        items.append(
            go_json_struct(
                [
                    ("Action", go_json(str(rule.get("action") or ""))),
                    ("OnExitCodes", on_exit),
                    ("OnPodConditions", conditions),
                ]
            )
        )
    return go_json_struct([("Rules", "[" + ",".join(items) + "]")])


def _go_list(values: tuple[str, ...]) -> str:
    """Go's `%q` of a []string: `["a" "b"]`."""
    return "[" + " ".join(f'"{v}"' for v in values) + "]"


# --- index interval strings (completedIndexes, failedIndexes, succeededIndexes) -------------------------------


class IndexFormatError(ValueError):
    """An interval string Kubernetes rejects; `str()` is its message."""


def _parse_interval(text: str, completions: int) -> tuple[int, int]:
    limits = text.split("-")
    if len(limits) > 2:
        raise IndexFormatError(
            f"the fragment {go_quote(text)} violates the requirement that an index interval can have at most "
            "two parts separated by '-'"
        )
    x = go_atoi(limits[0])
    if x is None:
        raise IndexFormatError(f"cannot convert string to integer for index: {go_quote(limits[0])}")
    if x >= completions:
        raise IndexFormatError(f"too large index: {go_quote(limits[0])}")
    if len(limits) > 1:
        y = go_atoi(limits[1])
        if y is None:
            raise IndexFormatError(f"cannot convert string to integer for index: {go_quote(limits[1])}")
        if y >= completions:
            raise IndexFormatError(f"too large index: {go_quote(limits[1])}")
        if x >= y:
            raise IndexFormatError(f"non-increasing order, previous: {x}, current: {y}")
        return x, y
    return x, x


def validate_indexes_format(text: str, completions: int) -> int:
    """Number of indexes in an interval string such as `1,3-5`; raises `IndexFormatError` as Kubernetes would."""
    if not text:
        return 0
    last: int | None = None
    total = 0
    for interval in text.split(","):
        x, y = _parse_interval(interval, completions)
        if last is not None and last >= x:
            raise IndexFormatError(f"non-increasing order, previous: {last}, current: {x}")
        total += y - x + 1
        last = y
    return total


def failed_indexes_overlap(completed: str, failed: str, completions: int) -> str | None:
    """Kubernetes' `validateFailedIndexesNotOverlapCompleted` (pkg/apis/batch/validation/validation.go): the error
    message when an index is in both interval strings, else None; unparsable intervals are skipped."""
    if not completed or not failed:
        return None

    def parse(text: str) -> tuple[int, int] | None:
        try:
            return _parse_interval(text, completions)
        except IndexFormatError:
            return None

    c_list, f_list = completed.split(","), failed.split(",")
    ci = fi = 0
    c, f = parse(c_list[0]), parse(f_list[0])
    while ci < len(c_list) and fi < len(f_list):
        if c is None:
            ci += 1
            c = parse(c_list[ci]) if ci < len(c_list) else None
        elif f is None:
            fi += 1
            f = parse(f_list[fi]) if fi < len(f_list) else None
        else:
            if c[0] <= f[1] and f[0] <= c[1]:
                return f"failedIndexes and completedIndexes overlap at index: {max(c[0], f[0])}"
            if c[0] <= f[0]:
                ci += 1
                c = parse(c_list[ci]) if ci < len(c_list) else None
            else:
                fi += 1
                f = parse(f_list[fi]) if fi < len(f_list) else None
    return None


# --- spec -----------------------------------------------------------------------------------------------------


def _template_container_names(template: Obj | None) -> set[str]:
    spec = template.get("spec") if template else None
    out: set[str] = set()
    if type(spec) is not dict:
        return out
    for key in ("containers", "initContainers"):
        items = spec.get(key)
        for item in items if type(items) is list else []:
            if type(item) is dict and type(item.get("name")) is str:
                out.add(item["name"])
    return out


def _validate_on_exit_codes(
    req: Obj, path: str, container_names: set[str], errs: Errors, features: FeatureGates
) -> None:
    operator = get_str(req, "operator", f"{path}.operator", errs) or ""
    if not operator:
        errs.append(FieldError(f"{path}.operator", Required, f"valid values: {_go_list(_OPERATORS)}"))
    elif operator not in _OPERATORS:
        errs.append(not_supported(f"{path}.operator", operator, _OPERATORS))
    container_name = get_str(req, "containerName", f"{path}.containerName", errs)
    if container_name is not None and container_name not in container_names:
        errs.append(
            FieldError(
                f"{path}.containerName",
                Invalid,
                "must be one of the container or initContainer names in the pod template",
                container_name,
            )
        )
    values_path = f"{path}.values"
    raw_values = get_list(req, "values", values_path, errs) or []
    if not raw_values and not has_value_ranges(req, features):
        errs.append(FieldError(values_path, Invalid, "at least one value is required", []))
    elif len(raw_values) > MAX_ON_EXIT_CODES_VALUES:
        errs.append(too_many(values_path, len(raw_values), MAX_ON_EXIT_CODES_VALUES))
    ordered = True
    seen: set[int] = set()
    previous: int | None = None
    values: list[int] = []
    for j, raw in enumerate(raw_values):
        value = check_int(raw, f"{values_path}[{j}]", errs)
        if value is None:
            previous = None
            continue
        values.append(value)
        if operator == "In" and value == 0:
            errs.append(FieldError(f"{values_path}[{j}]", Invalid, "must not be 0 for the In operator", value))
        if value in seen:
            errs.append(FieldError(f"{values_path}[{j}]", Duplicate, "", value))
        else:
            seen.add(value)
        if previous is not None and previous > value:
            ordered = False
        previous = value
    if not ordered:
        errs.append(FieldError(values_path, Invalid, "must be ordered", raw_values))
    value_ranges(req, path, values, operator, features, errs)


def _validate_on_pod_conditions(patterns: list[Any], path: str, errs: Errors) -> None:
    if len(patterns) > MAX_ON_POD_CONDITIONS_PATTERNS:
        errs.append(too_many(path, len(patterns), MAX_ON_POD_CONDITIONS_PATTERNS))
    for j, pattern in items_of(patterns, path, errs):
        item = f"{path}[{j}]"
        condition_type = get_str(pattern, "type", f"{item}.type", errs) or ""
        for msg in is_qualified_name(condition_type):
            errs.append(FieldError(f"{item}.type", Invalid, msg, condition_type))
        status = get_str(pattern, "status", f"{item}.status", errs) or ""
        if not status:
            errs.append(FieldError(f"{item}.status", Required, f"valid values: {_go_list(_STATUSES)}"))
        elif status not in _STATUSES:
            errs.append(not_supported(f"{item}.status", status, _STATUSES))


def _validate_pod_failure_policy(spec: Obj, policy: Obj, path: str, errs: Errors, features: FeatureGates) -> None:
    rules_path = f"{path}.rules"
    rules = get_list(policy, "rules", rules_path, errs) or []
    if len(rules) > MAX_POD_FAILURE_POLICY_RULES:
        errs.append(too_many(rules_path, len(rules), MAX_POD_FAILURE_POLICY_RULES))
    template = spec.get("template")
    container_names = _template_container_names(template if type(template) is dict else None)
    rule_items = items_of(rules, rules_path, errs)
    validate_rule_names(rule_items, rules_path, features, errs)
    for i, rule in rule_items:
        rule_path = f"{rules_path}[{i}]"
        action = get_str(rule, "action", f"{rule_path}.action", errs) or ""
        if not action:
            errs.append(FieldError(f"{rule_path}.action", Required, f"valid values: {_go_list(_ACTIONS)}"))
        elif action == "FailIndex":
            if spec.get("backoffLimitPerIndex") is None:
                errs.append(
                    FieldError(f"{rule_path}.action", Invalid, "requires the backoffLimitPerIndex to be set", action)
                )
        elif action not in _ACTIONS:
            errs.append(not_supported(f"{rule_path}.action", action, _ACTIONS))
        on_exit_codes = get_obj(rule, "onExitCodes", f"{rule_path}.onExitCodes", errs)
        if on_exit_codes is not None:
            _validate_on_exit_codes(on_exit_codes, f"{rule_path}.onExitCodes", container_names, errs, features)
        patterns = get_list(rule, "onPodConditions", f"{rule_path}.onPodConditions", errs) or []
        if patterns:
            _validate_on_pod_conditions(patterns, f"{rule_path}.onPodConditions", errs)
        if on_exit_codes is not None and patterns:
            errs.append(
                FieldError(rule_path, Invalid, "specifying both OnExitCodes and OnPodConditions is not supported", OMIT)
            )
        if on_exit_codes is None and not patterns:
            errs.append(
                FieldError(rule_path, Invalid, "specifying one of OnExitCodes and OnPodConditions is required", OMIT)
            )


def _validate_success_policy(policy: Obj, completions: int | None, path: str, errs: Errors) -> None:
    rules_path = f"{path}.rules"
    rules = get_list(policy, "rules", rules_path, errs) or []
    if not rules:
        errs.append(
            FieldError(rules_path, Required, "at least one rules must be specified when the successPolicy is specified")
        )
    if len(rules) > MAX_SUCCESS_POLICY_RULES:
        errs.append(too_many(rules_path, len(rules), MAX_SUCCESS_POLICY_RULES))
    for i, rule in items_of(rules, rules_path, errs):
        rule_path = f"{rules_path}[{i}]"
        count = get_int(rule, "succeededCount", f"{rule_path}.succeededCount", errs)
        indexes = get_str(rule, "succeededIndexes", f"{rule_path}.succeededIndexes", errs)
        if count is None and indexes is None:
            errs.append(
                FieldError(rule_path, Required, "at least one of succeededCount or succeededIndexes must be specified")
            )
        total = 0
        if indexes is not None:
            indexes_path = f"{rule_path}.succeededIndexes"
            if len(indexes.encode()) > MAX_SUCCEEDED_INDEXES_LENGTH:
                errs.append(too_long(indexes_path, MAX_SUCCEEDED_INDEXES_LENGTH))
            if completions is not None:
                try:
                    total = validate_indexes_format(indexes, completions)
                except IndexFormatError as exc:
                    errs.append(FieldError(indexes_path, Invalid, f"error parsing succeededIndexes: {exc}", indexes))
        if count is not None:
            count_path = f"{rule_path}.succeededCount"
            validate_nonnegative(count, count_path, errs)
            if completions is not None and count > completions:
                errs.append(
                    FieldError(
                        count_path,
                        Invalid,
                        f"must be less than or equal to {completions} (the number of specified completions)",
                        count,
                    )
                )
            if indexes is not None and count > total:
                errs.append(
                    FieldError(
                        count_path,
                        Invalid,
                        f"must be less than or equal to {total} (the number of indexes in the specified "
                        "succeededIndexes field)",
                        count,
                    )
                )


def validate_job_spec_fields(
    spec: Obj,
    path: str,
    errs: Errors,
    features: FeatureGates,
    *,
    allow_indivisible_hugepages: bool = False,
    template_spec_validated: bool = False,
) -> None:
    """Kubernetes' `validateJobSpec` (everything but the selector); `allow_indivisible_hugepages`: the stored
    template has such an amount (`GetValidationOptionsFromPodTemplate`); `template_spec_validated`: an update
    keeps the stored template's pod spec (see `validate_pod_template_spec`)."""
    parallelism = get_int(spec, "parallelism", f"{path}.parallelism", errs)
    completions = get_int(spec, "completions", f"{path}.completions", errs)
    deadline = get_int(spec, "activeDeadlineSeconds", f"{path}.activeDeadlineSeconds", errs, bits=64)
    backoff_limit = get_int(spec, "backoffLimit", f"{path}.backoffLimit", errs)
    ttl = get_int(spec, "ttlSecondsAfterFinished", f"{path}.ttlSecondsAfterFinished", errs)
    per_index = get_int(spec, "backoffLimitPerIndex", f"{path}.backoffLimitPerIndex", errs)
    max_failed = get_int(spec, "maxFailedIndexes", f"{path}.maxFailedIndexes", errs)
    get_bool(spec, "suspend", f"{path}.suspend", errs)
    get_bool(spec, "manualSelector", f"{path}.manualSelector", errs)
    validate_nonnegative(parallelism, f"{path}.parallelism", errs)
    validate_nonnegative(completions, f"{path}.completions", errs)
    validate_nonnegative(deadline, f"{path}.activeDeadlineSeconds", errs)
    validate_nonnegative(backoff_limit, f"{path}.backoffLimit", errs)
    validate_nonnegative(ttl, f"{path}.ttlSecondsAfterFinished", errs)
    validate_nonnegative(per_index, f"{path}.backoffLimitPerIndex", errs)
    if max_failed is not None:
        validate_nonnegative(max_failed, f"{path}.maxFailedIndexes", errs)
        if spec.get("backoffLimitPerIndex") is None:
            errs.append(FieldError(f"{path}.backoffLimitPerIndex", Required, "when maxFailedIndexes is specified"))
    managed_by = get_str(spec, "managedBy", f"{path}.managedBy", errs)
    if managed_by is not None:
        if not managed_by:
            errs.append(FieldError(f"{path}.managedBy", Required))
        for bad, msg in is_domain_prefixed_path(managed_by) if managed_by else []:
            errs.append(FieldError(f"{path}.managedBy", Invalid, msg, bad))
        if len(managed_by.encode()) > MAX_MANAGED_BY_LENGTH:
            errs.append(too_long(f"{path}.managedBy", MAX_MANAGED_BY_LENGTH))
    mode = get_str(spec, "completionMode", f"{path}.completionMode", errs)
    if mode is not None:
        if mode not in ("NonIndexed", "Indexed"):
            errs.append(not_supported(f"{path}.completionMode", mode, ("NonIndexed", "Indexed")))
        if mode == "Indexed":
            if spec.get("completions") is None:
                errs.append(FieldError(f"{path}.completions", Required, "when completion mode is Indexed"))
            if parallelism is not None and parallelism > MAX_PARALLELISM_FOR_INDEXED_JOB:
                errs.append(
                    FieldError(
                        f"{path}.parallelism",
                        Invalid,
                        f"must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} "
                        "when completion mode is Indexed",
                        parallelism,
                    )
                )
            if completions is not None and max_failed is not None and max_failed > completions:
                errs.append(
                    FieldError(
                        f"{path}.maxFailedIndexes", Invalid, "must be less than or equal to completions", max_failed
                    )
                )
            if max_failed is not None and max_failed > MAX_FAILED_INDEXES_FOR_INDEXED_JOB:
                errs.append(
                    FieldError(
                        f"{path}.maxFailedIndexes",
                        Invalid,
                        f"must be less than or equal to {MAX_FAILED_INDEXES_FOR_INDEXED_JOB}",
                        max_failed,
                    )
                )
            if (
                completions is not None
                and completions > COMPLETIONS_SOFT_LIMIT
                and spec.get("backoffLimitPerIndex") is not None
            ):
                high = f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
                if spec.get("maxFailedIndexes") is None:
                    errs.append(
                        FieldError(
                            f"{path}.maxFailedIndexes",
                            Required,
                            f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}",
                        )
                    )
                if parallelism is not None and parallelism > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS:
                    errs.append(
                        FieldError(
                            f"{path}.parallelism",
                            Invalid,
                            f"must be less than or equal to {PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} {high}",
                            parallelism,
                        )
                    )
                if max_failed is not None and max_failed > MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS:
                    errs.append(
                        FieldError(
                            f"{path}.maxFailedIndexes",
                            Invalid,
                            f"must be less than or equal to {MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS} {high}",
                            max_failed,
                        )
                    )
    if mode is None or mode == "NonIndexed":
        if per_index is not None:
            errs.append(
                FieldError(f"{path}.backoffLimitPerIndex", Invalid, "requires indexed completion mode", per_index)
            )
        if max_failed is not None:
            errs.append(FieldError(f"{path}.maxFailedIndexes", Invalid, "requires indexed completion mode", max_failed))
    policy = get_obj(spec, "podFailurePolicy", f"{path}.podFailurePolicy", errs)
    if policy is not None:
        _validate_pod_failure_policy(spec, policy, f"{path}.podFailurePolicy", errs, features)
    success_policy = get_obj(spec, "successPolicy", f"{path}.successPolicy", errs)
    if success_policy is not None:
        if mode != "Indexed":
            shown = Raw(_go_success_policy(success_policy))
            errs.append(FieldError(f"{path}.successPolicy", Invalid, "requires indexed completion mode", shown))
        else:
            _validate_success_policy(success_policy, completions, f"{path}.successPolicy", errs)
    replacement = get_str(spec, "podReplacementPolicy", f"{path}.podReplacementPolicy", errs)
    if replacement is not None:
        if spec.get("podFailurePolicy") is not None:
            if replacement != "Failed":
                errs.append(not_supported(f"{path}.podReplacementPolicy", replacement, ("Failed",)))
        elif replacement not in _REPLACEMENT_POLICIES:
            errs.append(not_supported(f"{path}.podReplacementPolicy", replacement, _REPLACEMENT_POLICIES))
    template = get_obj(spec, "template", f"{path}.template", errs)
    template_errs: Errors = []
    validate_pod_template_spec(
        template,
        f"{path}.template",
        template_errs,
        features=features,
        allow_indivisible_hugepages=allow_indivisible_hugepages,
        spec_validated=template_spec_validated,
    )
    errs.extend(template_errs)
    template_spec = template.get("spec") if template else None
    restart = template_spec.get("restartPolicy") if type(template_spec) is dict else None
    restart = restart if type(restart) is str else ""
    restart_path = f"{path}.template.spec.restartPolicy"
    if restart in ("Always", ""):
        errs.append(FieldError(restart_path, Required, 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        errs.append(not_supported(restart_path, restart, ("OnFailure", "Never")))
    elif (
        spec.get("podFailurePolicy") is not None
        and restart != "Never"
        and not on_failure_allowed(template_spec if type(template_spec) is dict else {}, features)
    ):
        errs.append(
            FieldError(restart_path, Invalid, 'only "Never" is supported when podFailurePolicy is specified', restart)
        )


def _template_labels(spec: Obj) -> dict[str, str] | None:
    template = spec.get("template")
    meta = template.get("metadata") if type(template) is dict else None
    labels = meta.get("labels") if type(meta) is dict else None
    if type(labels) is not dict:
        return None
    return {k: v for k, v in labels.items() if type(v) is str}


def _selector_usable(selector: Any) -> bool:
    """Whether Kubernetes could turn the selector into a label selector (no validation problems)."""
    if type(selector) is not dict:
        return selector is None
    probe: Errors = []
    validate_label_selector(selector, "", probe)
    return not probe


def _validate_job_spec(
    spec: Obj,
    path: str,
    errs: Errors,
    features: FeatureGates,
    *,
    allow_invalid_label_value: bool = False,
    allow_indivisible_hugepages: bool = False,
    template_spec_validated: bool = False,
) -> None:
    """Kubernetes' `ValidateJobSpec`: the fields, the selector, and selector-matches-template."""
    validate_job_spec_fields(
        spec,
        path,
        errs,
        features,
        allow_indivisible_hugepages=allow_indivisible_hugepages,
        template_spec_validated=template_spec_validated,
    )
    if spec.get("selector") is None:
        errs.append(FieldError(f"{path}.selector", Required))
        selector = None
    else:
        selector = get_obj(spec, "selector", f"{path}.selector", errs)
        validate_label_selector(selector, f"{path}.selector", errs, allow_invalid_label_value=allow_invalid_label_value)
    if spec.get("selector") is None or (selector is not None and _selector_usable(selector)):
        labels = _template_labels(spec)
        if not selector_matches(selector, labels):
            errs.append(
                FieldError(
                    f"{path}.template.metadata.labels", Invalid, "`selector` does not match template `labels`", labels
                )
            )


def _has_label(labels: dict[str, str] | None, key: str, expected: str, errs: Errors) -> None:
    path = f"spec.template.metadata.labels[{key}]"
    if labels is None or key not in labels:
        errs.append(FieldError(path, Required, f"must be '{expected}'"))
    elif labels[key] != expected:
        errs.append(FieldError(path, Invalid, f"must be '{expected}'", labels))


def _str_or_empty(value: Any) -> str:
    return value if type(value) is str else ""


def _validate_generated_selector(meta: Obj, spec: Obj, require_prefixed_labels: bool, errs: Errors) -> None:
    if spec.get("manualSelector") is True or spec.get("selector") is None:
        return
    uid = _str_or_empty(meta.get("uid"))
    name = _str_or_empty(meta.get("name"))
    if not uid:
        errs.append(FieldError("metadata.uid", Required))
    labels = _template_labels(spec)
    _has_label(labels, names.LEGACY_CONTROLLER_UID_LABEL, uid, errs)
    _has_label(labels, names.LEGACY_JOB_NAME_LABEL, name, errs)
    expected: dict[str, str] = {}
    if require_prefixed_labels:
        _has_label(labels, names.CONTROLLER_UID_LABEL, uid, errs)
        _has_label(labels, names.JOB_NAME_LABEL, name, errs)
        expected[names.CONTROLLER_UID_LABEL] = uid
        expected[names.JOB_NAME_LABEL] = name
    expected[names.LEGACY_CONTROLLER_UID_LABEL] = uid
    expected[names.LEGACY_JOB_NAME_LABEL] = name
    selector = spec.get("selector")
    if type(selector) is dict and _selector_usable(selector) and not selector_matches(selector, expected):
        errs.append(
            FieldError("spec.selector", Invalid, "`selector` not auto-generated", Raw(label_selector_json(selector)))
        )


def validate_job(
    job: Obj,
    *,
    require_prefixed_labels: bool = True,
    features: FeatureGates = DEFAULT,
    allow_invalid_label_value: bool = False,
    template_spec_validated: bool = False,
) -> list[FieldError]:
    """Kubernetes' `ValidateJob` for a create (run after defaulting and `prepare_job_for_create`); `features`:
    the cluster's gates (`kjobs.api.features`), which decide the gated fields' rules; `allow_invalid_label_value`
    and `template_spec_validated`: see `validate_job_for_update`."""
    if type(job) is not dict:
        return [type_error("", job, "object")]
    errs: Errors = []
    meta = job.get("metadata")
    errs.extend(validate_object_meta(meta if meta is not None else {}, namespaced=True))
    meta = meta if type(meta) is dict else {}
    spec = get_obj(job, "spec", "spec", errs) or {}
    _validate_generated_selector(meta, spec, require_prefixed_labels, errs)
    _validate_job_spec(
        spec,
        "spec",
        errs,
        features,
        allow_invalid_label_value=allow_invalid_label_value,
        template_spec_validated=template_spec_validated,
    )
    completions = spec.get("completions")
    if spec.get("completionMode") == "Indexed" and type(completions) is int and completions > 0:
        name = meta.get("name") if type(meta.get("name")) is str else ""
        hostname = f"{name}-{completions - 1}"
        if is_dns1123_label(hostname):
            errs.append(
                FieldError(
                    "metadata.name", Invalid, f"will not able to create pod with invalid DNS label: {hostname}", name
                )
            )
    return errs


# --- updates --------------------------------------------------------------------------------------------------


def _immutable(new: Any, old: Any, path: str, errs: Errors, *, shown: Any = None) -> None:
    if not semantic_equal(new, old):
        errs.append(FieldError(path, Invalid, IMMUTABLE_MSG, new if shown is None else shown))


def label_selector_json(selector: Any) -> str:
    """A `*metav1.LabelSelector` as Kubernetes prints it in an error: its JSON (json tags, empty fields omitted),
    e.g. `spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: ...` in TestValidateJobCreate."""
    if type(selector) is not dict:
        return "null"
    fields: list[tuple[str, str]] = []
    labels = selector.get("matchLabels")
    if type(labels) is dict and labels:
        fields.append(
            ("matchLabels", go_json({str(k): v if isinstance(v, str) else str(v) for k, v in labels.items()}))
        )
    exprs = selector.get("matchExpressions")
    if type(exprs) is list and exprs:
        rendered = []
        for raw in exprs:
            expr = _dict_or_empty(raw)
            parts = [
                ("key", go_json(str(expr.get("key") or ""))),
                ("operator", go_json(str(expr.get("operator") or ""))),
            ]
            values = expr.get("values")
            if type(values) is list and values:
                parts.append(("values", go_json([str(v) for v in values])))
            rendered.append(go_json_struct(parts))
        fields.append(("matchExpressions", "[" + ",".join(rendered) + "]"))
    return go_json_struct(fields)


def _dict_or_empty(value: Any) -> Obj:
    return value if type(value) is dict else {}


def _validate_template_update(spec: Obj, old_spec: Obj, allow_scheduling: bool, errs: Errors) -> None:
    template = spec.get("template")
    old_template = old_spec.get("template")
    if allow_scheduling and type(template) is dict and type(old_template) is dict:
        old_template = copy_json(old_template)
        new_pod = _dict_or_empty(template.get("spec"))
        old_pod = old_template.setdefault("spec", {})
        if type(old_pod) is dict:
            new_affinity, old_affinity = new_pod.get("affinity"), old_pod.get("affinity")
            if new_affinity is None and type(old_affinity) is dict:
                old_affinity.pop("nodeAffinity", None)
                if semantic_equal(old_affinity, {}):
                    old_pod.pop("affinity", None)
            elif type(new_affinity) is dict and old_affinity is None:
                old_pod["affinity"] = {"nodeAffinity": new_affinity.get("nodeAffinity")}
            elif type(new_affinity) is dict and type(old_affinity) is dict:
                old_affinity["nodeAffinity"] = new_affinity.get("nodeAffinity")
            for key in ("nodeSelector", "tolerations", "schedulingGates"):
                old_pod[key] = new_pod.get(key)
        new_meta = _dict_or_empty(template.get("metadata"))
        old_meta = old_template.setdefault("metadata", {})
        if type(old_meta) is dict:
            for key in ("annotations", "labels"):
                old_meta[key] = new_meta.get(key)
    _immutable(template, old_template, "spec.template", errs)


def _validate_completions_update(spec: Obj, old_spec: Obj, elastic: bool, errs: Errors) -> None:
    completions, old_completions = spec.get("completions"), old_spec.get("completions")
    if not elastic or spec.get("completionMode") != "Indexed":
        _immutable(completions, old_completions, "spec.completions", errs)
        return
    if semantic_equal(completions, old_completions) or completions is None:
        return
    if completions != spec.get("parallelism"):
        errs.append(
            FieldError("spec.completions", Invalid, "can only be modified in tandem with spec.parallelism", completions)
        )


def validate_job_update(
    job: Obj,
    old: Obj,
    *,
    allow_mutable_scheduling_directives: bool | None = None,
    allow_elastic_indexed_jobs: bool = True,
    features: FeatureGates = DEFAULT,
) -> list[FieldError]:
    """Kubernetes' `ValidateJobUpdate`: metadata update rules, the spec re-validated, immutable fields.

    The options default to what the registry sets with every feature GA: elastic Indexed Jobs (completions may
    change together with parallelism), and scheduling directives of the template (node affinity, node selector,
    tolerations, scheduling gates, template labels and annotations) mutable exactly when the old Job is suspended
    and has never started (`allow_mutable_scheduling_directives=None`); pass a bool to force either way.
    """
    if type(job) is not dict:
        return [type_error("", job, "object")]
    old = _dict_or_empty(old)
    errs: Errors = []
    meta = job.get("metadata")
    errs.extend(validate_object_meta_update(meta if meta is not None else {}, _dict_or_empty(old.get("metadata"))))
    spec = get_obj(job, "spec", "spec", errs) or {}
    old_spec = _dict_or_empty(old.get("spec"))
    # A stored selector with a value that is no longer a valid label value stays updatable
    # (pkg/registry/batch/job/strategy.go validationOptionsForJob: AllowInvalidLabelValueInSelector).
    allow_invalid = selector_has_invalid_label_value(old_spec.get("selector"))
    old_template = _dict_or_empty(old_spec.get("template"))
    _validate_job_spec(
        spec,
        "spec",
        errs,
        features,
        allow_invalid_label_value=allow_invalid,
        allow_indivisible_hugepages=uses_indivisible_hugepages(old_template.get("spec")),
        template_spec_validated=job_pod_spec(job) == job_pod_spec(old),
    )
    _validate_completions_update(spec, old_spec, allow_elastic_indexed_jobs, errs)
    selector = spec.get("selector")
    shown = Raw(label_selector_json(selector)) if selector is not None else None
    _immutable(selector, old_spec.get("selector"), "spec.selector", errs, shown=shown)
    old_status = _dict_or_empty(old.get("status"))
    allow_scheduling = (
        old_spec.get("suspend") is True and old_status.get("startTime") is None
        if allow_mutable_scheduling_directives is None
        else allow_mutable_scheduling_directives
    )
    _validate_template_update(spec, old_spec, allow_scheduling, errs)
    _immutable(spec.get("completionMode"), old_spec.get("completionMode"), "spec.completionMode", errs)
    policy = spec.get("podFailurePolicy")
    shown_policy = Raw(_go_pod_failure_policy(policy)) if type(policy) is dict else None
    _immutable(policy, old_spec.get("podFailurePolicy"), "spec.podFailurePolicy", errs, shown=shown_policy)
    for key in ("backoffLimitPerIndex", "managedBy"):
        _immutable(spec.get(key), old_spec.get(key), f"spec.{key}", errs)
    success = spec.get("successPolicy")
    shown_success = Raw(_go_success_policy(success)) if type(success) is dict else None
    _immutable(success, old_spec.get("successPolicy"), "spec.successPolicy", errs, shown=shown_success)
    return errs


def validate_job_for_update(job: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """What the registry strategy's `ValidateUpdate` returns: `ValidateJob` plus `ValidateJobUpdate`.

    Prefixed selector labels are required only if the old template already had both of them; a gated field
    the old Job already uses stays valid with its gate off (`features_for_update`); selector values that are no
    label values are let through when the old selector already had one (strategy.go validationOptionsForJob,
    `AllowInvalidLabelValueInSelector`); a template pod spec left as stored is not validated again (see
    `validate_pod_template_spec`).
    """
    features = features_for_update(features, job_pod_spec(old), job_spec(old))
    old_spec = _dict_or_empty(_dict_or_empty(old).get("spec"))
    old_labels = _template_labels(old_spec) or {}
    require_prefixed = names.JOB_NAME_LABEL in old_labels and names.CONTROLLER_UID_LABEL in old_labels
    allow_invalid = selector_has_invalid_label_value(old_spec.get("selector"))
    return validate_job(
        job,
        require_prefixed_labels=require_prefixed,
        features=features,
        allow_invalid_label_value=allow_invalid,
        template_spec_validated=job_pod_spec(job) == job_pod_spec(old),
    ) + validate_job_update(job, old, features=features)


# --- status ---------------------------------------------------------------------------------------------------


class _GoTime:
    """A timestamp bad value printed as Go prints a `metav1.Time` (`2024-01-01 00:00:00 +0000 UTC`)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        try:
            moment = datetime.fromtimestamp(parse_time(self.text), tz=UTC)
        except (ValueError, OverflowError, OSError):
            return self.text
        return moment.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def _time(status: Obj, key: str, errs: Errors) -> float | None:
    """An RFC 3339 status timestamp as epoch seconds (None when absent or unparsable, the latter an error)."""
    text = get_str(status, key, f"status.{key}", errs)
    if text is None:
        return None
    try:
        return parse_time(text)
    except (ValueError, OverflowError):
        errs.append(FieldError(f"status.{key}", Invalid, "must be an RFC 3339 timestamp", text))
        return None


def _condition_true(status: Obj, condition_type: str) -> bool:
    conditions = status.get("conditions")
    if type(conditions) is not list:
        return False
    return any(type(c) is dict and c.get("type") == condition_type and c.get("status") == "True" for c in conditions)


class _StatusView:
    """The parts of a Job's status (and spec) the status rules read, type-checked once."""

    def __init__(self, job: Obj, errs: Errors) -> None:
        status = _dict_or_empty(job.get("status"))
        self.raw = status
        self.spec = _dict_or_empty(job.get("spec"))
        check = errs if job.get("status") is status else []
        self.active = get_int(status, "active", "status.active", check) or 0
        self.succeeded = get_int(status, "succeeded", "status.succeeded", check) or 0
        self.failed = get_int(status, "failed", "status.failed", check) or 0
        self.ready = get_int(status, "ready", "status.ready", check)
        self.terminating = get_int(status, "terminating", "status.terminating", check)
        self.completed_indexes = get_str(status, "completedIndexes", "status.completedIndexes", check) or ""
        self.failed_indexes = get_str(status, "failedIndexes", "status.failedIndexes", check)
        self.start_time_text = status.get("startTime")
        self.completion_time_text = status.get("completionTime")
        self.start_time = _time(status, "startTime", check)
        self.completion_time = _time(status, "completionTime", check)
        uncounted = get_obj(status, "uncountedTerminatedPods", "status.uncountedTerminatedPods", check)
        self.uncounted = uncounted
        self.uncounted_succeeded = strings_of(
            get_list(uncounted, "succeeded", "status.uncountedTerminatedPods.succeeded", check) if uncounted else None,
            "status.uncountedTerminatedPods.succeeded",
            check,
        )
        self.uncounted_failed = strings_of(
            get_list(uncounted, "failed", "status.uncountedTerminatedPods.failed", check) if uncounted else None,
            "status.uncountedTerminatedPods.failed",
            check,
        )
        conditions = get_list(status, "conditions", "status.conditions", check)
        for i, condition in items_of(conditions, "status.conditions", check):
            get_str(condition, "type", f"status.conditions[{i}].type", check)
            get_str(condition, "status", f"status.conditions[{i}].status", check)
        self.complete = _condition_true(status, names.COND_COMPLETE)
        self.failed_cond = _condition_true(status, names.COND_FAILED)
        self.failure_target = _condition_true(status, names.COND_FAILURE_TARGET)
        self.success_criteria_met = _condition_true(status, names.COND_SUCCESS_CRITERIA_MET)
        self.finished = self.complete or self.failed_cond


def _uncounted_repr(view: _StatusView) -> str:
    """The JSON of the internal `batch.UncountedTerminatedPods` (Go field names; an absent list is nil: null)."""
    raw = view.uncounted if type(view.uncounted) is dict else {}
    return go_json_struct(
        [
            (name, go_json(list(raw[key])) if type(raw.get(key)) is list else "null")
            for name, key in (("Succeeded", "succeeded"), ("Failed", "failed"))
        ]
    )


def _validate_status(new: _StatusView, old: _StatusView, errs: Errors) -> None:
    """Kubernetes' `validateJobStatus` with the strategy's ratcheting options."""
    spec = new.spec
    validate_nonnegative(new.active, "status.active", errs)
    validate_nonnegative(new.succeeded, "status.succeeded", errs)
    validate_nonnegative(new.failed, "status.failed", errs)
    validate_nonnegative(new.ready, "status.ready", errs)
    validate_nonnegative(new.terminating, "status.terminating", errs)
    if new.uncounted is not None:
        seen: set[str] = set()
        for key, uids in (("succeeded", new.uncounted_succeeded), ("failed", new.uncounted_failed)):
            for i, uid in enumerate(uids):
                path = f"status.uncountedTerminatedPods.{key}[{i}]"
                if not uid:
                    errs.append(FieldError(path, Invalid, "must not be empty", uid))
                elif uid in seen:
                    errs.append(FieldError(path, Duplicate, "", uid))
                else:
                    seen.add(uid)
    finished_changed = old.finished != new.finished
    complete_changed = old.complete != new.complete
    failed_changed = old.failed_cond != new.failed_cond
    target_changed = old.failure_target != new.failure_target
    completed_indexes_changed = old.completed_indexes != new.completed_indexes
    failed_indexes_changed = old.failed_indexes != new.failed_indexes
    active_changed = old.active != new.active
    start_changed = old.start_time != new.start_time
    completion_changed = old.completion_time != new.completion_time
    uncounted_changed = not semantic_equal(old.uncounted, new.uncounted)
    ready_changed = old.ready != new.ready
    terminating_changed = old.terminating != new.terminating
    conditions = "status.conditions"
    completion_value = _GoTime(new.completion_time_text) if type(new.completion_time_text) is str else None
    if (complete_changed or failed_changed) and new.complete and new.failed_cond:
        errs.append(FieldError(conditions, Invalid, "cannot set Complete=True and Failed=true conditions", OMIT))
    if (complete_changed or target_changed) and new.complete and new.failure_target:
        errs.append(FieldError(conditions, Invalid, "cannot set Complete=True and FailureTarget=true conditions", OMIT))
    if (complete_changed or completion_changed) and new.completion_time_text is not None and not new.complete:
        errs.append(
            FieldError(
                "status.completionTime",
                Invalid,
                "cannot set completionTime when there is no Complete=True condition",
                completion_value,
            )
        )
    if (complete_changed or completion_changed) and new.completion_time_text is None and new.complete:
        errs.append(FieldError("status.completionTime", Required, "completionTime is required for Complete jobs"))
    if (
        (start_changed or completion_changed)
        and new.start_time is not None
        and new.completion_time is not None
        and new.completion_time < new.start_time
    ):
        errs.append(
            FieldError(
                "status.completionTime", Invalid, "completionTime cannot be set before startTime", completion_value
            )
        )
    scm_changed = old.success_criteria_met != new.success_criteria_met
    if (failed_changed or target_changed) and new.failed_cond and not new.failure_target:
        errs.append(
            FieldError(
                conditions, Invalid, "cannot set Failed=True condition without the FailureTarget=true condition", OMIT
            )
        )
    if (complete_changed or scm_changed) and new.complete and not new.success_criteria_met:
        errs.append(
            FieldError(
                conditions,
                Invalid,
                "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
                OMIT,
            )
        )
    if (finished_changed or active_changed) and new.active > 0 and new.finished:
        errs.append(FieldError("status.active", Invalid, "active>0 is invalid for finished job", new.active))
    # A suspended Job with completions 0 finishes without ever starting (pkg/registry/batch/job/strategy.go
    # getStatusValidationOptions, kubernetes#132614: `isSuspendedWithZeroCompletions`).
    suspended_with_zero_completions = (
        spec.get("suspend") is True and type(spec.get("completions")) is int and spec.get("completions") == 0
    )
    if (
        (finished_changed or start_changed)
        and new.start_time_text is None
        and new.finished
        and not suspended_with_zero_completions
    ):
        errs.append(FieldError("status.startTime", Required, "startTime is required for finished job"))
    if (finished_changed or uncounted_changed) and new.finished and (new.uncounted_succeeded or new.uncounted_failed):
        errs.append(
            FieldError(
                "status.uncountedTerminatedPods",
                Invalid,
                "uncountedTerminatedPods needs to be empty for finished job",
                Raw(_uncounted_repr(new)),
            )
        )
    completions = spec.get("completions") if type(spec.get("completions")) is int else None
    per_index_set = spec.get("backoffLimitPerIndex") is not None
    if completed_indexes_changed and completions is not None:
        try:
            validate_indexes_format(new.completed_indexes, completions)
        except IndexFormatError as exc:
            errs.append(
                FieldError(
                    "status.completedIndexes", Invalid, f"error parsing completedIndexes: {exc}", new.completed_indexes
                )
            )
    if failed_indexes_changed and completions is not None and per_index_set and new.failed_indexes is not None:
        try:
            validate_indexes_format(new.failed_indexes, completions)
        except IndexFormatError as exc:
            errs.append(
                FieldError("status.failedIndexes", Invalid, f"error parsing failedIndexes: {exc}", new.failed_indexes)
            )
    indexed = spec.get("completionMode") == "Indexed"
    if completed_indexes_changed and new.completed_indexes and not indexed:
        errs.append(
            FieldError(
                "status.completedIndexes",
                Invalid,
                "cannot set non-empty completedIndexes when non-indexed completion mode",
                new.completed_indexes,
            )
        )
    if failed_indexes_changed and not per_index_set and new.failed_indexes is not None:
        errs.append(
            FieldError(
                "status.failedIndexes",
                Invalid,
                "cannot set non-null failedIndexes when backoffLimitPerIndex is null",
                new.failed_indexes,
            )
        )
    if (
        (failed_indexes_changed or completed_indexes_changed)
        and completions is not None
        and new.failed_indexes is not None
    ):
        overlap = failed_indexes_overlap(new.completed_indexes, new.failed_indexes, completions)
        if overlap:
            errs.append(FieldError("status.failedIndexes", Invalid, overlap, new.failed_indexes))
    if (finished_changed or terminating_changed) and (new.terminating or 0) > 0 and new.finished:
        errs.append(
            FieldError("status.terminating", Invalid, "terminating>0 is invalid for finished job", new.terminating)
        )
    if (ready_changed or active_changed) and new.ready is not None and new.ready > new.active:
        errs.append(FieldError("status.ready", Invalid, "cannot set more ready pods than active", new.ready))
    if new.success_criteria_met and new.failed_cond:
        errs.append(
            FieldError(conditions, Invalid, "cannot set SuccessCriteriaMet=True and Failed=true conditions", OMIT)
        )
    if new.success_criteria_met and new.failure_target:
        errs.append(
            FieldError(
                conditions, Invalid, "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions", OMIT
            )
        )
    if spec.get("successPolicy") is not None and not new.success_criteria_met and new.complete:
        errs.append(
            FieldError(
                conditions,
                Invalid,
                "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
                OMIT,
            )
        )


def validate_job_status_update(job: Obj, old: Obj) -> list[FieldError]:
    """Kubernetes' `ValidateJobUpdateStatus` with the registry's status options (rules ratchet: most only fire
    when the status fields they read changed, so a stored Job that already broke a rule can still be updated)."""
    if type(job) is not dict:
        return [type_error("", job, "object")]
    old = _dict_or_empty(old)
    errs: Errors = []
    meta = job.get("metadata")
    errs.extend(validate_object_meta_update(meta if meta is not None else {}, _dict_or_empty(old.get("metadata"))))
    get_obj(job, "status", "status", errs)
    new_view = _StatusView(job, errs)
    old_view = _StatusView(old, [])
    _validate_status(new_view, old_view, errs)
    for condition_type in (names.COND_FAILED, names.COND_COMPLETE, names.COND_FAILURE_TARGET):
        if _condition_true(old_view.raw, condition_type) and not _condition_true(new_view.raw, condition_type):
            errs.append(
                FieldError(
                    "status.conditions", Invalid, f"cannot disable the terminal {condition_type}=True condition", OMIT
                )
            )
    if new_view.failed < old_view.failed:
        errs.append(FieldError("status.failed", Invalid, "cannot decrease the failed counter", new_view.failed))
    spec = new_view.spec
    indexed = spec.get("completionMode") == "Indexed"
    if (not indexed or not semantic_equal(spec.get("completions"), spec.get("parallelism"))) and (
        new_view.succeeded < old_view.succeeded
    ):
        errs.append(
            FieldError("status.succeeded", Invalid, "cannot decrease the succeeded counter", new_view.succeeded)
        )
    if (
        new_view.completion_time_text is not None
        and old_view.completion_time_text is not None
        and new_view.completion_time != old_view.completion_time
    ):
        errs.append(
            FieldError(
                "status.completionTime",
                Invalid,
                "completionTime cannot be mutated",
                _GoTime(str(new_view.completion_time_text)),
            )
        )
    # Resuming (the Suspended condition leaving True) may set a new startTime (kubernetes#134769, in 1.35 and
    # back to 1.32.10): the controller writes both in one status update.
    resuming = _condition_true(old_view.raw, names.COND_SUSPENDED) and not _condition_true(
        new_view.raw, names.COND_SUSPENDED
    )
    if (
        old_view.start_time_text is not None
        and old_view.start_time != new_view.start_time
        and spec.get("suspend") is not True
        and not resuming
    ):
        errs.append(FieldError("status.startTime", Required, "startTime cannot be removed for unsuspended job"))
    if old_view.success_criteria_met and not new_view.success_criteria_met:
        errs.append(
            FieldError("status.conditions", Invalid, "cannot disable the SuccessCriteriaMet=True condition", OMIT)
        )
    if old_view.complete and not old_view.success_criteria_met and new_view.success_criteria_met:
        errs.append(
            FieldError(
                "status.conditions",
                Invalid,
                "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions",
                OMIT,
            )
        )
    return errs
