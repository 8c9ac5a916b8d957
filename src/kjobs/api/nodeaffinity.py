"""A pod's required node affinity against a node's labels: the scheduler's NodeAffinity filter and the
kubelet's admission both ask it (component-helpers/scheduling/corev1/nodeaffinity: `GetRequiredNodeAffinity`,
`RequiredNodeAffinity.Match`: every `nodeSelector` label, and one of the required node selector terms)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kjobs.api.goints import go_atoi
from kjobs.api.types import Obj
from kjobs.api.validation_formats import is_label_value, is_qualified_name


def _dicts(value: Any) -> list[Obj]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def match_expression(expr: Obj, labels: Mapping[str, str]) -> bool:
    """One node selector requirement (`In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`) against labels."""
    key, op = str(expr.get("key") or ""), expr.get("operator")
    values = [str(v) for v in expr.get("values") or []]
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present or len(values) != 1:
            return False
        have, want = go_atoi(labels[key]), go_atoi(values[0])  # strconv.ParseInt: no blanks, "_" or non-ASCII
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want
    return False


def expression_parses(expr: Obj) -> bool:
    """Whether the scheduler can turn this requirement into a label selector requirement
    (component-helpers/scheduling/corev1/nodeaffinity `nodeSelectorRequirementsAsSelector`, apimachinery
    labels `NewRequirement`): a label-key key, a known operator with the values it needs, and every value a
    valid label value. The API server checks only part of this, so a pod may carry a term that fails here."""
    key, op = expr.get("key"), expr.get("operator")
    raw = expr.get("values") or []
    if not isinstance(key, str) or is_qualified_name(key) or not isinstance(raw, list):
        return False
    values = [v for v in raw if isinstance(v, str)]
    if len(values) != len(raw) or any(is_label_value(v) for v in values):
        return False
    if op in ("In", "NotIn"):
        return bool(values)
    if op in ("Exists", "DoesNotExist"):
        return not values
    if op in ("Gt", "Lt"):
        return len(values) == 1 and go_atoi(values[0]) is not None
    return False


def _field_parses(expr: Obj) -> bool:
    """`nodeSelectorRequirementsAsFieldSelector`: In or NotIn with exactly one value."""
    values = expr.get("values")
    return expr.get("operator") in ("In", "NotIn") and isinstance(values, list) and len(values) == 1


def match_term(term: Obj, labels: Mapping[str, str], node_name: str) -> bool:
    """One node selector term: all its expressions and fields (an empty term matches nothing). A term with a
    requirement the scheduler cannot parse matches no node (`nodeSelectorTerm.match` returns its parse errors)."""
    expressions = _dicts(term.get("matchExpressions"))
    fields = _dicts(term.get("matchFields"))
    if not expressions and not fields:
        return False  # an empty term matches no objects
    if not all(expression_parses(e) for e in expressions) or not all(_field_parses(f) for f in fields):
        return False
    if not all(match_expression(e, labels) for e in expressions):
        return False
    # matchFields supports one field, the node's name.
    return all(f.get("key") == "metadata.name" and match_expression(f, {"metadata.name": node_name}) for f in fields)


def required_terms(spec: Obj) -> tuple[Obj, ...] | None:
    """The pod's required node selector terms; None when it has no required node affinity."""
    affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    return tuple(_dicts(affinity.get("nodeSelectorTerms"))) if isinstance(affinity, dict) else None


def pod_matches_node(spec: Obj, labels: Mapping[str, str], node_name: str) -> bool:
    """`nodeSelector` labels all present, and (if any) one of the required node selector terms matches."""
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    terms = required_terms(spec)
    return terms is None or any(match_term(term, labels, node_name) for term in terms)
