"""Affinity and topology spread constraints of a pod spec, as kube-apiserver validates them.

Follows `pkg/apis/core/validation/validation.go` (v1.32): `validateAffinity` (`validateNodeAffinity`,
`ValidateNodeSelector`, `ValidatePreferredSchedulingTerms`, `validatePodAffinity`, `validatePodAntiAffinity`,
`validatePodAffinityTerm`, `validateMatchLabelKeysAndMismatchLabelKeys`) and `validateTopologySpreadConstraints`,
with their paths, error types, details and order. On create the options that relax label values
(`AllowInvalidLabelValueInSelector`, `AllowInvalidLabelValueInRequiredNodeAffinity`,
`AllowInvalidTopologySpreadConstraintLabelSelector`) are off; a preferred node term's values are never checked.
A Pod's own terms are validated after the API merged its `matchLabelKeys`/`mismatchLabelKeys` into the selector
(`_merge_affinity_label_keys` in kjobs/server/service.py), as upstream does; a template's as written.
"""

from __future__ import annotations

import re
from typing import Any

from kjobs.api.errors import ErrorType, FieldError, not_supported
from kjobs.api.types import Obj
from kjobs.api.validation_access import (
    Errors,
    get_int,
    get_list,
    get_obj,
    get_str,
    items_of,
    strings_of,
)
from kjobs.api.validation_formats import is_label_value, name_is_dns_label, name_is_dns_subdomain
from kjobs.api.validation_meta import validate_label_name, validate_label_selector

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Forbidden = ErrorType.FieldValueForbidden
Duplicate = ErrorType.FieldValueDuplicate

NOT_POSITIVE_MSG = "must be greater than zero"  # isNotPositiveErrorMsg
_WEIGHT_MSG = "must be in the range 1-100"
_NO_SELECTOR_MSG = "must not be specified when labelSelector is not set"
_IN_SELECTOR_MSG = "exists in both matchLabelKeys and labelSelector"
_REQUIRED_KEYS = ("requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution")


# --- node affinity ---------------------------------------------------------------------------------------------


def _node_requirement(req: Obj, check_values: bool, path: str, errs: Errors) -> None:
    """`ValidateNodeSelectorRequirement`: the operator's rule for `values`, the key a label name, and (for
    required terms) every value a label value."""
    operator = get_str(req, "operator", f"{path}.operator", errs) or ""
    values = strings_of(get_list(req, "values", f"{path}.values", errs), f"{path}.values", errs)
    if operator in ("In", "NotIn"):
        if not values:
            errs.append(FieldError(f"{path}.values", Required, "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                FieldError(
                    f"{path}.values", Forbidden, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                )
            )
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(
                FieldError(f"{path}.values", Required, "must be specified single value when `operator` is 'Lt' or 'Gt'")
            )
    else:
        errs.append(FieldError(f"{path}.operator", Invalid, "not a valid selector operator", operator))
    validate_label_name(get_str(req, "key", f"{path}.key", errs) or "", f"{path}.key", errs)
    if check_values:
        for i, value in enumerate(values):
            for msg in is_label_value(value):
                errs.append(FieldError(f"{path}.values[{i}]", Invalid, msg, value))


def _node_field_requirement(req: Obj, path: str, errs: Errors) -> None:
    """`ValidateNodeFieldSelectorRequirement`: In/NotIn with exactly one value, and only `metadata.name`, whose
    values are node names."""
    operator = get_str(req, "operator", f"{path}.operator", errs) or ""
    values = strings_of(get_list(req, "values", f"{path}.values", errs), f"{path}.values", errs)
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(
                FieldError(
                    f"{path}.values",
                    Required,
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
    else:
        errs.append(FieldError(f"{path}.operator", Invalid, "not a valid selector operator", operator))
    key = get_str(req, "key", f"{path}.key", errs) or ""
    if key != "metadata.name":
        errs.append(FieldError(f"{path}.key", Invalid, "not a valid field selector key", key))
        return
    for i, value in enumerate(values):
        for msg in name_is_dns_subdomain(value, False):
            errs.append(FieldError(f"{path}.values[{i}]", Invalid, msg, value))


def _node_selector_term(term: Obj, check_values: bool, path: str, errs: Errors) -> None:
    """`ValidateNodeSelectorTerm`: its matchExpressions, then its matchFields."""
    for key, check in (("matchExpressions", True), ("matchFields", False)):
        reqs_path = f"{path}.{key}"
        for j, req in items_of(get_list(term, key, reqs_path, errs), reqs_path, errs):
            if check:
                _node_requirement(req, check_values, f"{reqs_path}[{j}]", errs)
            else:
                _node_field_requirement(req, f"{reqs_path}[{j}]", errs)


def _node_affinity(node: Obj, path: str, errs: Errors) -> None:
    """`validateNodeAffinity`: a required selector needs at least one term; preferred terms weigh 1–100 and may
    name any value (they can still match on a one-node cluster, says upstream)."""
    required_path = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    required = get_obj(node, "requiredDuringSchedulingIgnoredDuringExecution", required_path, errs)
    if required is not None:
        terms_path = f"{required_path}.nodeSelectorTerms"
        terms = get_list(required, "nodeSelectorTerms", terms_path, errs)
        if not terms:
            errs.append(FieldError(terms_path, Required, "must have at least one node selector term"))
        else:
            for i, term in items_of(terms, terms_path, errs):
                _node_selector_term(term, True, f"{terms_path}[{i}]", errs)
    preferred_path = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, weighted in items_of(
        get_list(node, "preferredDuringSchedulingIgnoredDuringExecution", preferred_path, errs), preferred_path, errs
    ):
        _weight(weighted, f"{preferred_path}[{i}].weight", errs)
        preference_path = f"{preferred_path}[{i}].preference"
        _node_selector_term(get_obj(weighted, "preference", preference_path, errs) or {}, False, preference_path, errs)


def _weight(weighted: Obj, path: str, errs: Errors) -> None:
    """A preferred term's weight, 1–100; absent is Go's zero value."""
    weight = get_int(weighted, "weight", path, errs)
    if weight is None and weighted.get("weight") is not None:
        return  # not an int32: already an error
    if not 1 <= (weight or 0) <= 100:
        errs.append(FieldError(path, Invalid, _WEIGHT_MSG, weight or 0))


# --- pod (anti-)affinity ---------------------------------------------------------------------------------------


def _label_selector_keys(selector: Obj) -> tuple[list[str], list[str]]:
    """The keys of a (validated) selector's matchLabels and, in order, of its matchExpressions."""
    labels = selector.get("matchLabels")
    exprs = selector.get("matchExpressions")
    label_keys = list(labels) if type(labels) is dict else []
    expr_keys = (
        [e["key"] for e in exprs if type(e) is dict and type(e.get("key")) is str] if type(exprs) is list else []
    )
    return label_keys, expr_keys


def _label_keys(keys: list[str], selector: Obj | None, path: str, errs: Errors) -> None:
    """`validateLabelKeys`: keys need a labelSelector, and each is a label name."""
    if not keys:
        return
    if selector is None:
        errs.append(FieldError(path, Forbidden, _NO_SELECTOR_MSG))
        return
    for i, key in enumerate(keys):
        validate_label_name(key, f"{path}[{i}]", errs)


def _match_and_mismatch_label_keys(term: Obj, selector: Obj | None, path: str, errs: Errors) -> None:
    """`validateMatchLabelKeysAndMismatchLabelKeys`. Runs after the create-time merge, so a matchLabelKeys key is
    refused only when the selector names it before its merged `In` requirement. Upstream's quirks kept: that
    error's path is the *term* indexed by the key's position (`…[0][0]`), and the last of repeated keys wins."""
    match = strings_of(get_list(term, "matchLabelKeys", f"{path}.matchLabelKeys", errs), f"{path}.matchLabelKeys", errs)
    mismatch_path = f"{path}.mismatchLabelKeys"
    mismatch = strings_of(get_list(term, "mismatchLabelKeys", mismatch_path, errs), mismatch_path, errs)
    _label_keys(match, selector, f"{path}.matchLabelKeys", errs)
    _label_keys(mismatch, selector, mismatch_path, errs)
    if selector is not None:
        positions = {key: i for i, key in enumerate(match)}
        label_keys, expr_keys = _label_selector_keys(selector)
        seen = set(label_keys)
        for key in expr_keys:
            if key in positions and key in seen:
                errs.append(FieldError(f"{path}[{positions[key]}]", Invalid, _IN_SELECTOR_MSG, key))
            seen.add(key)
    mismatched = set(mismatch)
    for i, key in enumerate(match):
        if key in mismatched:
            errs.append(
                FieldError(
                    f"{path}.matchLabelKeys[{i}]", Invalid, "exists in both matchLabelKeys and mismatchLabelKeys", key
                )
            )


def _pod_affinity_term(term: Obj, path: str, errs: Errors) -> None:
    """`validatePodAffinityTerm`: both selectors, namespaces (errors at `.namespace`, singular, as upstream),
    the label keys, and a non-empty topologyKey that is a label name."""
    selector = get_obj(term, "labelSelector", f"{path}.labelSelector", errs)
    validate_label_selector(selector, f"{path}.labelSelector", errs)
    ns_selector = get_obj(term, "namespaceSelector", f"{path}.namespaceSelector", errs)
    validate_label_selector(ns_selector, f"{path}.namespaceSelector", errs)
    for name in strings_of(get_list(term, "namespaces", f"{path}.namespaces", errs), f"{path}.namespaces", errs):
        for msg in name_is_dns_label(name, False):
            errs.append(FieldError(f"{path}.namespace", Invalid, msg, name))
    _match_and_mismatch_label_keys(term, selector, path, errs)
    topology_key = get_str(term, "topologyKey", f"{path}.topologyKey", errs) or ""
    if not topology_key:
        errs.append(FieldError(f"{path}.topologyKey", Required, "can not be empty"))
    validate_label_name(topology_key, f"{path}.topologyKey", errs)


def _pod_affinity(affinity: Obj, path: str, errs: Errors) -> None:
    """`validatePodAffinity` / `validatePodAntiAffinity` (the same rules): required terms, then weighted ones."""
    required_path, preferred_path = (f"{path}.{key}" for key in _REQUIRED_KEYS)
    for i, term in items_of(get_list(affinity, _REQUIRED_KEYS[0], required_path, errs), required_path, errs):
        _pod_affinity_term(term, f"{required_path}[{i}]", errs)
    for i, weighted in items_of(get_list(affinity, _REQUIRED_KEYS[1], preferred_path, errs), preferred_path, errs):
        _weight(weighted, f"{preferred_path}[{i}].weight", errs)
        term_path = f"{preferred_path}[{i}].podAffinityTerm"
        _pod_affinity_term(get_obj(weighted, "podAffinityTerm", term_path, errs) or {}, term_path, errs)


def has_invalid_required_node_label_value(spec: Any) -> bool:
    """`hasInvalidLabelValueInRequiredNodeAffinity` (pkg/api/pod/util.go): a required node selector term of the
    stored pod names a value that is no label value, so an update may keep it
    (`AllowInvalidLabelValueInRequiredNodeAffinity`)."""
    if type(spec) is not dict:
        return False
    node = ((spec.get("affinity") or {}) if type(spec.get("affinity")) is dict else {}).get("nodeAffinity")
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution") if type(node) is dict else None
    terms = required.get("nodeSelectorTerms") if type(required) is dict else None
    for term in terms if type(terms) is list else []:
        expressions = term.get("matchExpressions") if type(term) is dict else None
        for req in expressions if type(expressions) is list else []:
            values = req.get("values") if type(req) is dict else None
            if any(type(v) is str and is_label_value(v) for v in (values if type(values) is list else [])):
                return True
    return False


REQUIRED_NODE_VALUE_PATH = re.compile(
    r"spec\.affinity\.nodeAffinity\.requiredDuringSchedulingIgnoredDuringExecution\.nodeSelectorTerms\[\d+\]"
    r"\.matchExpressions\[\d+\]\.values\[\d+\]"
)
"""Where the label-value check of a required node term reports (`_node_requirement`): only it is Invalid there."""


def validate_affinity(spec: Obj, path: str, errs: Errors) -> None:
    """`validateAffinity` for `spec.affinity` (`path` is the pod spec's): node affinity, pod affinity, pod
    anti-affinity, in that order."""
    affinity_path = f"{path}.affinity"
    affinity = get_obj(spec, "affinity", affinity_path, errs)
    if not affinity:
        return
    node = get_obj(affinity, "nodeAffinity", f"{affinity_path}.nodeAffinity", errs)
    if node is not None:
        _node_affinity(node, f"{affinity_path}.nodeAffinity", errs)
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = get_obj(affinity, kind, f"{affinity_path}.{kind}", errs)
        if terms is not None:
            _pod_affinity(terms, f"{affinity_path}.{kind}", errs)


# --- topology spread -------------------------------------------------------------------------------------------

_SCHEDULE_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")  # sorted, as sets.List gives them
_NODE_INCLUSION_POLICIES = ("Honor", "Ignore")


def _spread_match_label_keys(constraint: Obj, selector: Obj | None, path: str, errs: Errors) -> None:
    """`validateMatchLabelKeysInTopologySpread`: keys need a labelSelector (still checked as label names without
    one) and may not be keys the selector already names."""
    keys = strings_of(get_list(constraint, "matchLabelKeys", path, errs), path, errs)
    if not keys:
        return
    selector_keys: set[str] = set()
    if selector is not None:
        label_keys, expr_keys = _label_selector_keys(selector)
        selector_keys.update(label_keys, expr_keys)
    else:
        errs.append(FieldError(path, Forbidden, _NO_SELECTOR_MSG))
    for i, key in enumerate(keys):
        validate_label_name(key, f"{path}[{i}]", errs)
        if key in selector_keys:
            errs.append(FieldError(f"{path}[{i}]", Invalid, _IN_SELECTOR_MSG, key))


def _spread_pair(constraint: Obj) -> tuple[Any, Any]:
    return constraint.get("topologyKey") or "", constraint.get("whenUnsatisfiable") or ""


def validate_topology_spread_constraints(spec: Obj, path: str, errs: Errors) -> None:
    """`validateTopologySpreadConstraints` for `spec.topologySpreadConstraints` (`path` is the pod spec's)."""
    list_path = f"{path}.topologySpreadConstraints"
    constraints = items_of(get_list(spec, "topologySpreadConstraints", list_path, errs), list_path, errs)
    for n, (i, constraint) in enumerate(constraints):
        item = f"{list_path}[{i}]"
        max_skew = get_int(constraint, "maxSkew", f"{item}.maxSkew", errs)
        if (max_skew or 0) <= 0 and (max_skew is not None or constraint.get("maxSkew") is None):  # absent is 0
            errs.append(FieldError(f"{item}.maxSkew", Invalid, NOT_POSITIVE_MSG, max_skew or 0))
        topology_key = get_str(constraint, "topologyKey", f"{item}.topologyKey", errs) or ""
        if not topology_key:
            errs.append(FieldError(f"{item}.topologyKey", Required, "can not be empty"))
        action = get_str(constraint, "whenUnsatisfiable", f"{item}.whenUnsatisfiable", errs) or ""
        if action not in _SCHEDULE_ACTIONS:
            errs.append(not_supported(f"{item}.whenUnsatisfiable", action, _SCHEDULE_ACTIONS))
        pair = (topology_key, action)
        if any(_spread_pair(rest) == pair for _, rest in constraints[n + 1 :]):
            errs.append(
                FieldError(f"{item}.{{topologyKey, whenUnsatisfiable}}", Duplicate, "", f"{{{topology_key}, {action}}}")
            )
        min_domains = get_int(constraint, "minDomains", f"{item}.minDomains", errs)
        if min_domains is not None:
            if min_domains <= 0:
                errs.append(FieldError(f"{item}.minDomains", Invalid, NOT_POSITIVE_MSG, min_domains))
            if action != "DoNotSchedule":
                detail = f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
                errs.append(FieldError(f"{item}.minDomains", Invalid, detail, min_domains))
        for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = get_str(constraint, key, f"{item}.{key}", errs)
            if policy is not None and policy not in _NODE_INCLUSION_POLICIES:
                errs.append(not_supported(f"{item}.{key}", policy, _NODE_INCLUSION_POLICIES))
        selector = get_obj(constraint, "labelSelector", f"{item}.labelSelector", errs)
        _spread_match_label_keys(constraint, selector, f"{item}.matchLabelKeys", errs)
        validate_label_selector(selector, f"{item}.labelSelector", errs)
