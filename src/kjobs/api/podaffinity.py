"""A pod's required inter-pod (anti-)affinity terms and hard topology spread constraints, parsed for the scheduler.

Kubernetes parses these once per pod (`framework.NewPodInfo`, pkg/scheduler/framework/types.go: `AffinityTerm`,
`newAffinityTerm`, `getNamespacesFromPodAffinityTerm`) and per scheduling cycle (pkg/scheduler/framework/plugins/
podtopologyspread/common.go: `filterTopologySpreadConstraints`). The spec side (which terms, which constraints) is
shared by all pods of one template; what depends on the pod itself (its namespace, and its labels for a spread
constraint's `matchLabelKeys`) is resolved per pod by `resolve_terms` and `resolve_spread`.

`matchLabelKeys`/`mismatchLabelKeys` of affinity terms need nothing here: since v1.31 (`MatchLabelKeysInPodAffinity`,
on by default) the API server merges them into the term's `labelSelector` when the pod is created
(`kjobs.server.service`), and kube-scheduler reads only the merged selector. A spread constraint's
`matchLabelKeys` are still merged by the scheduler in v1.32 (`MatchLabelKeysInPodTopologySpread`, on).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kjobs.api.errors import ApiError
from kjobs.api.selectors import EQUALS, NOTHING, LabelSelector, Requirement, label_selector_from_object
from kjobs.api.types import Obj

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """One `PodAffinityTerm`: which pods (namespaces, or namespaces whose labels match `namespace_selector`, and
    `selector` on the pod's labels) in which topology (`topology_key`, a node label)."""

    namespaces: frozenset[str]
    namespace_selector: LabelSelector
    selector: LabelSelector
    topology_key: str

    def matches(self, namespace: str, labels: Mapping[str, str], namespace_labels: Mapping[str, str]) -> bool:
        """`AffinityTerm.Matches`: the pod's namespace is listed or its labels match the namespace selector, and
        the pod's labels match the selector."""
        if namespace in self.namespaces or self.namespace_selector.matches_labels(namespace_labels):
            return self.selector.matches_labels(labels)
        return False


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """One `whenUnsatisfiable: DoNotSchedule` topology spread constraint, with v1.32's defaults: `minDomains` 1,
    `nodeAffinityPolicy` Honor, `nodeTaintsPolicy` Ignore; `selector` already merged with `matchLabelKeys`."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int = 1
    honor_node_affinity: bool = True
    honor_node_taints: bool = False


def _dicts(value: Any) -> tuple[Obj, ...]:
    return tuple(v for v in value if isinstance(v, dict)) if isinstance(value, list) else ()


def required_affinity_terms(spec: Obj) -> tuple[tuple[Obj, ...], tuple[Obj, ...]]:
    """The raw `requiredDuringSchedulingIgnoredDuringExecution` terms of `podAffinity` and `podAntiAffinity`."""
    affinity = spec.get("affinity")
    if not isinstance(affinity, dict):
        return (), ()
    result = []
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind)
        result.append(
            _dicts(section.get("requiredDuringSchedulingIgnoredDuringExecution")) if isinstance(section, dict) else ()
        )
    return result[0], result[1]


def hard_spread_constraints(spec: Obj, when: str = DO_NOT_SCHEDULE) -> tuple[Obj, ...]:
    """The raw `topologySpreadConstraints` with `whenUnsatisfiable: DoNotSchedule` (only those filter; `when`
    ScheduleAnyway: those the score reads)."""
    return tuple(c for c in _dicts(spec.get("topologySpreadConstraints")) if c.get("whenUnsatisfiable") == when)


def preferred_affinity_terms(spec: Obj) -> tuple[tuple[tuple[int, Obj], ...], tuple[tuple[int, Obj], ...]]:
    """The raw `preferredDuringSchedulingIgnoredDuringExecution` terms of `podAffinity` and `podAntiAffinity`, as
    (weight, podAffinityTerm) pairs (InterPodAffinity's score reads them)."""
    affinity = spec.get("affinity")
    if not isinstance(affinity, dict):
        return (), ()
    result = []
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind)
        items = (
            _dicts(section.get("preferredDuringSchedulingIgnoredDuringExecution")) if isinstance(section, dict) else ()
        )
        result.append(
            tuple(
                (_int(item.get("weight"), 0), item["podAffinityTerm"])
                for item in items
                if isinstance(item.get("podAffinityTerm"), dict)
            )
        )
    return result[0], result[1]


def _selector(raw: Any) -> LabelSelector:
    """`metav1.LabelSelectorAsSelector`; a selector the API would not have accepted matches nothing."""
    if raw is not None and not isinstance(raw, dict):
        return NOTHING
    try:
        return label_selector_from_object(raw)
    except (ApiError, TypeError, ValueError):
        return NOTHING


def resolve_terms(raw_terms: tuple[Obj, ...], namespace: str) -> tuple[AffinityTerm, ...]:
    """`newAffinityTerm` for each term of a pod in `namespace`: no namespaces and no namespace selector mean the
    pod's own namespace; a missing namespace selector matches no namespace, an empty one every namespace."""
    terms = []
    for raw in raw_terms:
        names = [str(n) for n in raw.get("namespaces") or () if isinstance(n, str)]
        ns_raw = raw.get("namespaceSelector")
        namespaces = frozenset((namespace,)) if not names and ns_raw is None else frozenset(names)
        terms.append(
            AffinityTerm(
                namespaces, _selector(ns_raw), _selector(raw.get("labelSelector")), str(raw.get("topologyKey") or "")
            )
        )
    return tuple(terms)


def resolve_weighted(raw_terms: tuple[tuple[int, Obj], ...], namespace: str) -> tuple[tuple[int, AffinityTerm], ...]:
    """`resolve_terms` for weighted (preferred) terms, keeping each weight."""
    terms = resolve_terms(tuple(raw for _, raw in raw_terms), namespace)
    return tuple((weight, term) for (weight, _), term in zip(raw_terms, terms, strict=True))


def merge_namespaces(
    terms: tuple[AffinityTerm, ...], namespaces: Mapping[str, Mapping[str, str]]
) -> tuple[AffinityTerm, ...]:
    """`mergeAffinityTermNamespacesIfNotEmpty` for the incoming pod: a namespace selector that is not empty becomes
    the namespaces whose labels it matches now (an empty selector, matching every namespace, stays)."""
    merged = []
    for term in terms:
        if term.namespace_selector.empty:
            merged.append(term)
            continue
        chosen = {name for name, labels in namespaces.items() if term.namespace_selector.matches_labels(labels)}
        merged.append(AffinityTerm(term.namespaces | chosen, NOTHING, term.selector, term.topology_key))
    return tuple(merged)


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def resolve_spread(raw_constraints: tuple[Obj, ...], labels: Mapping[str, str]) -> tuple[SpreadConstraint, ...]:
    """`filterTopologySpreadConstraints(..., DoNotSchedule)`: the selector, with the pod's values of
    `matchLabelKeys` added as `key=value` requirements (keys the pod lacks are skipped), and the defaults."""
    result = []
    for raw in raw_constraints:
        selector = _selector(raw.get("labelSelector"))
        keys = [k for k in raw.get("matchLabelKeys") or () if isinstance(k, str) and k in labels]
        if keys:
            # mergeLabelSetWithSelector: the pod's `key=value`s plus the selector's requirements (none for Nothing)
            requirements = [Requirement(k, EQUALS, (labels[k],)) for k in keys]
            selector = LabelSelector(tuple(sorted((*requirements, *selector.requirements), key=lambda r: r.key)))
        result.append(
            SpreadConstraint(
                max_skew=_int(raw.get("maxSkew"), 1),
                topology_key=str(raw.get("topologyKey") or ""),
                selector=selector,
                min_domains=_int(raw.get("minDomains"), 1),
                honor_node_affinity=(raw.get("nodeAffinityPolicy") or HONOR) == HONOR,
                honor_node_taints=(raw.get("nodeTaintsPolicy") or IGNORE) == HONOR,
            )
        )
    return tuple(result)
