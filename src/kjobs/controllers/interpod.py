"""The filters that read other nodes' pods: PodTopologySpread (DoNotSchedule constraints) and InterPodAffinity
(required terms), as kube-scheduler v1.32 runs them — a PreFilter that counts matching pods per topology domain
once per scheduling cycle, then a Filter per node that only looks the node's domains up in those counts.

* InterPodAffinity (pkg/scheduler/framework/plugins/interpodaffinity/filtering.go). PreFilter counts, per
  (topology key, value): the existing pods whose required anti-affinity terms match the incoming pod; the existing
  pods matching *all* of the incoming pod's affinity terms (once per term); the existing pods matching each of its
  anti-affinity terms. A node fails, in this order: an affinity term's topology key missing on the node or no
  matching pod in its domain (`node(s) didn't match pod affinity rules`, UnschedulableAndUnresolvable: preemption
  cannot help) — unless no pod anywhere matches and the pod matches its own terms (the first pod of a group); a
  matching pod in the domain of an anti-affinity term (`node(s) didn't match pod anti-affinity rules`,
  Unschedulable); the node in the domain of an existing pod whose anti-affinity matches the incoming pod
  (`node(s) didn't satisfy existing pods anti-affinity rules`, Unschedulable). The incoming pod's namespace
  selectors are resolved to namespaces at PreFilter; existing pods' selectors are matched against the incoming
  pod's namespace labels. PreFilter skips the plugin when the pod has no terms and no existing pod's
  anti-affinity matches it.
* PodTopologySpread (pkg/scheduler/framework/plugins/podtopologyspread/filtering.go, common.go). PreFilter counts,
  per constraint and topology value, the pods in the incoming pod's namespace, not terminating, that match the
  constraint's selector, on nodes that carry every constraint's topology key and that the constraint's inclusion
  policies admit (nodeAffinityPolicy Honor: the pod's nodeSelector and required node affinity; nodeTaintsPolicy
  Honor: its tolerations). A node without a constraint's key fails with `... (missing required label)`
  (UnschedulableAndUnresolvable); otherwise `matching in the node's domain + 1 if the pod matches itself − the
  smallest count of any domain` must not exceed maxSkew (`minDomains`: fewer domains than that count the minimum as
  0), else `node(s) didn't match pod topology spread constraints` (Unschedulable). No system default constraint is
  DoNotSchedule, so pods without constraints skip the plugin.

Preemption updates the same counts as it removes and gives back victims (the plugins' AddPod/RemovePod
extensions), so a pod blocked by anti-affinity or skew can preempt lower-priority pods that cause it. Counts are
kept per constraint rather than per topology key (two constraints on one key with different selectors stay apart).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kjobs.api.podaffinity import AffinityTerm, SpreadConstraint, merge_namespaces
from kjobs.api.selectors import EQUALS, LabelSelector, Requirement
from kjobs.controllers.scheduling import (
    MAX_NODE_SCORE,
    SCORE_WEIGHTS,
    ClusterScores,
    FilterStatus,
    NodeInfo,
    PodInfo,
    first_untolerated,
    matches_node_affinity,
)

REASON_AFFINITY_RULES = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY_RULES = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
REASON_SPREAD = "node(s) didn't match pod topology spread constraints"
REASON_SPREAD_MISSING_LABEL = REASON_SPREAD + " (missing required label)"

_AFFINITY = FilterStatus((REASON_AFFINITY_RULES,), False)
_ANTI_AFFINITY = FilterStatus((REASON_ANTI_AFFINITY_RULES,), True)
_EXISTING_ANTI_AFFINITY = FilterStatus((REASON_EXISTING_ANTI_AFFINITY,), True)
_SPREAD = FilterStatus((REASON_SPREAD,), True)
_SPREAD_MISSING_LABEL = FilterStatus((REASON_SPREAD_MISSING_LABEL,), False)
_NO_LABELS: Mapping[str, str] = {}

Pair = tuple[str, str]


def _bump(counts: dict[Pair, int], labels: Mapping[str, str], key: str, delta: int) -> None:
    value = labels.get(key)
    if value is None:
        return
    pair = (key, value)
    left = counts.get(pair, 0) + delta
    if left:
        counts[pair] = left
    else:
        counts.pop(pair, None)


def _matches_all(terms: Sequence[AffinityTerm], pod: PodInfo) -> bool:
    """`podMatchesAllAffinityTerms`: the incoming pod's (namespace-merged) terms, all of them; none is no match."""
    if not terms:
        return False
    return all(t.matches(pod.namespace, pod.labels, _NO_LABELS) for t in terms)


# ------------------------------------------------------------------------------------------------ InterPodAffinity


@dataclass(slots=True)
class AffinityState:
    """InterPodAffinity's preFilterState for one incoming pod."""

    pod: PodInfo
    affinity_terms: tuple[AffinityTerm, ...]
    anti_terms: tuple[AffinityTerm, ...]
    namespace_labels: Mapping[str, str]
    existing_anti: dict[Pair, int]
    affinity_counts: dict[Pair, int]
    anti_counts: dict[Pair, int]

    @classmethod
    def build(
        cls, pod: PodInfo, nodes: Sequence[NodeInfo], namespaces: Mapping[str, Mapping[str, str]]
    ) -> AffinityState | None:
        """PreFilter; None when the plugin is skipped (nothing in the cluster concerns the pod)."""
        state = cls(
            pod,
            merge_namespaces(pod.affinity_terms, namespaces) if pod.affinity_terms else (),
            merge_namespaces(pod.anti_terms, namespaces) if pod.anti_terms else (),
            namespaces.get(pod.namespace) or _NO_LABELS,
            {},
            {},
            {},
        )
        for node in nodes:
            for other in node.anti_pods.values():
                state._existing(other, node.labels, 1)
        if not state.existing_anti and not state.affinity_terms and not state.anti_terms:
            return None
        if state.affinity_terms or state.anti_terms:
            for node in nodes:
                for other in node.pods.values():
                    state._incoming(other, node.labels, 1)
        return state

    def copy(self) -> AffinityState:
        """An independent copy of the counts (`Clone`)."""
        return AffinityState(
            self.pod,
            self.affinity_terms,
            self.anti_terms,
            self.namespace_labels,
            dict(self.existing_anti),
            dict(self.affinity_counts),
            dict(self.anti_counts),
        )

    def _existing(self, other: PodInfo, labels: Mapping[str, str], delta: int) -> None:
        pod = self.pod
        for term in other.anti_terms:
            if term.matches(pod.namespace, pod.labels, self.namespace_labels):
                _bump(self.existing_anti, labels, term.topology_key, delta)

    def _incoming(self, other: PodInfo, labels: Mapping[str, str], delta: int) -> None:
        if self.affinity_terms and _matches_all(self.affinity_terms, other):
            for term in self.affinity_terms:
                _bump(self.affinity_counts, labels, term.topology_key, delta)
        for term in self.anti_terms:
            if term.matches(other.namespace, other.labels, _NO_LABELS):
                _bump(self.anti_counts, labels, term.topology_key, delta)

    def update(self, other: PodInfo, node: NodeInfo, delta: int) -> None:
        """`updateWithPod`: count `other` on `node` in (delta 1) or out (delta −1)."""
        if other.anti_terms:
            self._existing(other, node.labels, delta)
        self._incoming(other, node.labels, delta)

    def filter(self, node: NodeInfo) -> FilterStatus | None:
        """InterPodAffinity's Filter."""
        labels = node.labels
        if self.affinity_terms:
            found = True
            for term in self.affinity_terms:
                value = labels.get(term.topology_key)
                if value is None:
                    return _AFFINITY  # every topology key must be on the node
                if self.affinity_counts.get((term.topology_key, value), 0) <= 0:
                    found = False
            if not found and (self.affinity_counts or not _matches_all(self.affinity_terms, self.pod)):
                return _AFFINITY
        if self.anti_counts:
            for term in self.anti_terms:
                value = labels.get(term.topology_key)
                if value is not None and self.anti_counts.get((term.topology_key, value), 0) > 0:
                    return _ANTI_AFFINITY
        if self.existing_anti:
            for pair in labels.items():
                if self.existing_anti.get(pair, 0) > 0:
                    return _EXISTING_ANTI_AFFINITY
        return None


# ------------------------------------------------------------------------------------------------ PodTopologySpread


@dataclass(slots=True)
class SpreadState:
    """PodTopologySpread's preFilterState: per constraint, matching pods per topology value."""

    pod: PodInfo
    constraints: tuple[SpreadConstraint, ...]
    counts: list[dict[str, int]]
    minimums: list[int] | None = None

    @classmethod
    def build(cls, pod: PodInfo, nodes: Sequence[NodeInfo]) -> SpreadState | None:
        """PreFilter; None when the pod has no DoNotSchedule constraint (the plugin is skipped)."""
        if not pod.spread:
            return None
        state = cls(pod, pod.spread, [{} for _ in pod.spread])
        for node in nodes:
            if not state._counted_node(node):
                continue
            for i, constraint in enumerate(state.constraints):
                if not state._included(constraint, node):
                    continue
                value = node.labels[constraint.topology_key]
                count = _count_matching(node, constraint.selector, pod.namespace)
                state.counts[i][value] = state.counts[i].get(value, 0) + count
        return state

    def copy(self) -> SpreadState:
        """An independent copy of the counts."""
        return SpreadState(self.pod, self.constraints, [dict(c) for c in self.counts], self.minimums)

    def _counted_node(self, node: NodeInfo) -> bool:
        """`nodeLabelsMatchSpreadConstraints`: a node lacking any constraint's key counts for none of them."""
        return all(c.topology_key in node.labels for c in self.constraints)

    def _included(self, constraint: SpreadConstraint, node: NodeInfo) -> bool:
        """`matchNodeInclusionPolicies`."""
        if constraint.honor_node_affinity and not matches_node_affinity(self.pod, node):
            return False
        return not (constraint.honor_node_taints and first_untolerated(self.pod.tolerations, node.taints) is not None)

    def update(self, other: PodInfo, node: NodeInfo, delta: int) -> None:
        """`updateWithPod`: count `other` (same namespace only) on `node` in or out."""
        if other.namespace != self.pod.namespace or not self._counted_node(node):
            return
        for i, constraint in enumerate(self.constraints):
            if not constraint.selector.matches_labels(other.labels) or not self._included(constraint, node):
                continue
            value = node.labels[constraint.topology_key]
            self.counts[i][value] = self.counts[i].get(value, 0) + delta
            self.minimums = None

    def _minimum(self, i: int) -> int:
        if self.minimums is None:
            self.minimums = [min(c.values(), default=sys.maxsize) for c in self.counts]
        if len(self.counts[i]) < self.constraints[i].min_domains:
            return 0  # fewer eligible domains than minDomains: the global minimum is 0
        return self.minimums[i]

    def filter(self, node: NodeInfo) -> FilterStatus | None:
        """PodTopologySpread's Filter."""
        labels = self.pod.labels
        for i, constraint in enumerate(self.constraints):
            value = node.labels.get(constraint.topology_key)
            if value is None:
                return _SPREAD_MISSING_LABEL
            self_match = 1 if constraint.selector.matches_labels(labels) else 0
            if self.counts[i].get(value, 0) + self_match - self._minimum(i) > constraint.max_skew:
                return _SPREAD
        return None


# ------------------------------------------------------------------------------------------------ one cycle


@dataclass(slots=True)
class CycleState:
    """Both plugins' PreFilter results for one pod in one scheduling cycle (`scheduling.ClusterFilters`)."""

    spread: SpreadState | None
    affinity: AffinityState | None

    def copy(self) -> CycleState:
        """Independent counts, for preemption's what-ifs on one node."""
        return CycleState(
            self.spread.copy() if self.spread is not None else None,
            self.affinity.copy() if self.affinity is not None else None,
        )

    def add_pod(self, other: PodInfo, node: NodeInfo) -> None:
        """AddPod: `other` counted as on `node`."""
        if self.spread is not None:
            self.spread.update(other, node, 1)
        if self.affinity is not None:
            self.affinity.update(other, node, 1)

    def remove_pod(self, other: PodInfo, node: NodeInfo) -> None:
        """RemovePod: `other` no longer counted on `node`."""
        if self.spread is not None:
            self.spread.update(other, node, -1)
        if self.affinity is not None:
            self.affinity.update(other, node, -1)

    def _filter(self, node: NodeInfo) -> FilterStatus | None:
        if self.spread is not None:
            status = self.spread.filter(node)
            if status is not None:
                return status
        if self.affinity is not None:
            return self.affinity.filter(node)
        return None

    def filter(self, pod: PodInfo, node: NodeInfo, nominated: Sequence[PodInfo] = ()) -> FilterStatus | None:
        """PodTopologySpread then InterPodAffinity on `node`. With nominated pods, as
        `RunFilterPluginsWithNominatedPods`: the node must pass both with them counted and without them."""
        if nominated:
            state = self.copy()
            for other in nominated:
                state.add_pod(other, node)
            status = state._filter(node)
            if status is not None:
                return status
        return self._filter(node)


def _any_anti_pods(nodes: Sequence[NodeInfo]) -> bool:
    """`any(node.anti_pods for node in nodes)` as a loop: a generator costs a frame and a resumption per node, and
    every scheduling attempt asks this (docs/sched54.md)."""
    for node in nodes:  # noqa: SIM110
        if node.anti_pods:
            return True
    return False


def _any_affinity_pods(nodes: Sequence[NodeInfo]) -> bool:
    """`any(node.affinity_pods for node in nodes)` as a loop (as `_any_anti_pods`)."""
    for node in nodes:  # noqa: SIM110
        if node.affinity_pods:
            return True
    return False


def prefilter(
    pod: PodInfo, nodes: Sequence[NodeInfo], namespaces: Mapping[str, Mapping[str, str]]
) -> CycleState | None:
    """Both PreFilters for `pod` over `nodes` (`namespaces`: labels by namespace name, for namespace selectors).
    None when both skip — the common case, costing a look at each node's anti-affinity pods."""
    spread = SpreadState.build(pod, nodes) if pod.spread else None
    affinity = None
    if pod.affinity_terms or pod.anti_terms or _any_anti_pods(nodes):
        affinity = AffinityState.build(pod, nodes, namespaces)
    if spread is None and affinity is None:
        return None
    return CycleState(spread, affinity)


# ------------------------------------------------------------------------------------------------ scores
# pkg/scheduler/framework/plugins/interpodaffinity/scoring.go, podtopologyspread/scoring.go (v1.32)

HARD_POD_AFFINITY_WEIGHT = 1
"""`InterPodAffinityArgs.hardPodAffinityWeight` default: an existing pod's required affinity term that the incoming
pod matches counts as a preferred term of this weight."""
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
SYSTEM_DEFAULT_SPREAD = ((LABEL_HOSTNAME, 3), (LABEL_ZONE, 5))
"""PodTopologySpread's system default constraints (`defaultingType: System`): ScheduleAnyway, maxSkew 3 on the
hostname and 5 on the zone, for pods without constraints of their own that a Service (or RC, RS, StatefulSet —
kjobs serves none of those) selects; the selector is the owners' (`helper.DefaultSelector`)."""


def _add_weighted(
    scores: dict[Pair, int],
    terms: Sequence[tuple[int, AffinityTerm]],
    namespace: str,
    labels: Mapping[str, str],
    namespace_labels: Mapping[str, str],
    node_labels: Mapping[str, str],
    sign: int,
) -> bool:
    """`scoreMap.processTerms`: each term the pod (`namespace`, `labels`) matches adds sign × weight to the
    domain of the node the term's topology key names. True when any term counted."""
    touched = False
    for weight, term in terms:
        if term.matches(namespace, labels, namespace_labels):
            value = node_labels.get(term.topology_key)
            if value is not None:
                pair = (term.topology_key, value)
                scores[pair] = scores.get(pair, 0) + sign * weight
                touched = True
    return touched


def inter_pod_affinity_scores(
    pod: PodInfo,
    feasible: Sequence[NodeInfo],
    nodes: Sequence[NodeInfo],
    namespaces: Mapping[str, Mapping[str, str]],
    *,
    hard_pod_affinity_weight: int = HARD_POD_AFFINITY_WEIGHT,
    ignore_preferred_terms_of_existing_pods: bool = False,
) -> list[int] | None:
    """InterPodAffinity's PreScore, Score and NormalizeScore for `feasible` (pods counted on `nodes`): the
    normalised score per feasible node, or None when PreScore skips (nothing in the cluster scores the pod).

    Per topology domain: + weight for each existing pod a preferred affinity term of the pod matches, − weight for
    each its preferred anti-affinity terms match; + `hard_pod_affinity_weight` for each existing pod's required
    affinity term the pod matches, ± weight for its preferred (anti-)affinity terms the pod matches. A node scores
    the sum over its domains; the scores are then scaled min-max to 0–100 (all equal: all 0)."""
    preferred = pod.preferred_affinity or pod.preferred_anti
    if not preferred and ignore_preferred_terms_of_existing_pods:
        return None
    if not nodes or not (preferred or any(node.affinity_pods for node in nodes)):
        return None
    own_affinity = merge_namespaces(tuple(t for _, t in pod.preferred_affinity), namespaces)
    own_anti = merge_namespaces(tuple(t for _, t in pod.preferred_anti), namespaces)
    affinity = tuple((w, t) for (w, _), t in zip(pod.preferred_affinity, own_affinity, strict=True))
    anti = tuple((w, t) for (w, _), t in zip(pod.preferred_anti, own_anti, strict=True))
    namespace_labels = namespaces.get(pod.namespace) or _NO_LABELS
    scores: dict[Pair, int] = {}
    touched = False
    for node in nodes:
        labels = node.labels
        if node.node is None or not labels:
            continue
        for other in (node.pods if preferred else node.affinity_pods).values():
            if affinity:
                touched |= _add_weighted(scores, affinity, other.namespace, other.labels, _NO_LABELS, labels, 1)
            if anti:
                touched |= _add_weighted(scores, anti, other.namespace, other.labels, _NO_LABELS, labels, -1)
            if hard_pod_affinity_weight > 0 and other.affinity_terms:
                hard = tuple((hard_pod_affinity_weight, t) for t in other.affinity_terms)
                touched |= _add_weighted(scores, hard, pod.namespace, pod.labels, namespace_labels, labels, 1)
            if other.preferred_affinity:
                touched |= _add_weighted(
                    scores, other.preferred_affinity, pod.namespace, pod.labels, namespace_labels, labels, 1
                )
            if other.preferred_anti:
                touched |= _add_weighted(
                    scores, other.preferred_anti, pod.namespace, pod.labels, namespace_labels, labels, -1
                )
    if not touched:
        return None
    raw = [sum(scores.get(pair, 0) for pair in node.labels.items()) for node in feasible]
    if not raw:
        return raw
    low, high = min(raw), max(raw)
    if high == low:
        return [0] * len(raw)
    return [int(MAX_NODE_SCORE * ((s - low) / (high - low))) for s in raw]


def default_spread_selector(
    pod: PodInfo, service_selectors: Mapping[str, Mapping[str, Mapping[str, str]]]
) -> LabelSelector | None:
    """`helper.DefaultSelector`: the union of the selectors of the Services in the pod's namespace whose selector
    matches the pod (RCs, ReplicaSets and StatefulSets would add theirs; kjobs serves none, and a Job is not among
    them). None when that is empty: then no system default constraint applies.
    `service_selectors`: namespace → service name → `spec.selector`."""
    merged: dict[str, str] = {}
    labels = pod.labels
    for selector in (service_selectors.get(pod.namespace) or {}).values():
        if selector and all(labels.get(k) == v for k, v in selector.items()):
            merged.update(selector)
    if not merged:
        return None
    return LabelSelector(tuple(Requirement(k, EQUALS, (merged[k],)) for k in sorted(merged)))


def _count_matching(node: NodeInfo, selector: LabelSelector, namespace: str) -> int:
    """`countPodsMatchSelector`: not terminating, same namespace, labels match; an empty selector counts none."""
    if selector.empty:
        return 0
    return sum(
        1
        for other in node.pods.values()
        if not other.deleting and other.namespace == namespace and selector.matches_labels(other.labels)
    )


def _included(pod: PodInfo, constraint: SpreadConstraint, node: NodeInfo) -> bool:
    """`matchNodeInclusionPolicies`."""
    if constraint.honor_node_affinity and not matches_node_affinity(pod, node):
        return False
    return not (constraint.honor_node_taints and first_untolerated(pod.tolerations, node.taints) is not None)


def spread_constraints_for_score(
    pod: PodInfo, default_selector: LabelSelector | None
) -> tuple[tuple[SpreadConstraint, ...], bool]:
    """The constraints PodTopologySpread scores with, and whether they are the system defaults: the pod's
    ScheduleAnyway constraints if it has any constraints at all; else the system defaults with
    `default_selector` (none without one)."""
    if pod.any_spread:
        return pod.soft_spread, False
    if default_selector is None:
        return (), False
    return tuple(SpreadConstraint(skew, key, default_selector) for key, skew in SYSTEM_DEFAULT_SPREAD), True


def topology_spread_scores(
    pod: PodInfo,
    feasible: Sequence[NodeInfo],
    nodes: Sequence[NodeInfo],
    default_selector: LabelSelector | None = None,
) -> list[int] | None:
    """PodTopologySpread's PreScore, Score and NormalizeScore for `feasible` (pods counted on `nodes`): the
    normalised score per feasible node, or None when PreScore skips (no ScheduleAnyway constraint applies).

    A node's raw score sums, over the constraints whose key it has, `matching pods in its domain × log(domains + 2)
    + maxSkew − 1` (domains: of the feasible nodes; for the hostname, the feasible nodes that are not ignored),
    rounded; fewer is better, so NormalizeScore reverses it: `100 × (max + min − score) / max`, 100 for all when
    the maximum is 0. With the pod's own constraints a feasible node lacking any constraint's key is ignored (score
    0); with the system defaults it is not (a node without a zone still spreads by hostname)."""
    constraints, system_defaulted = spread_constraints_for_score(pod, default_selector)
    if not nodes or not constraints:
        return None
    require_all = not system_defaulted
    keys = [c.topology_key for c in constraints]
    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for node in feasible:
        if require_all and not all(k in node.labels for k in keys):
            ignored.add(node.name)
            continue
        for i, key in enumerate(keys):
            if key != LABEL_HOSTNAME:
                counts[i].setdefault(node.labels.get(key, ""), 0)
    weights = [
        math.log((len(feasible) - len(ignored) if key == LABEL_HOSTNAME else len(counts[i])) + 2)
        for i, key in enumerate(keys)
    ]
    for node in nodes:
        if node.node is None or (require_all and not all(k in node.labels for k in keys)):
            continue
        for i, constraint in enumerate(constraints):
            if constraint.topology_key == LABEL_HOSTNAME or not _included(pod, constraint, node):
                continue
            value = node.labels.get(constraint.topology_key, "")
            if value in counts[i]:
                counts[i][value] += _count_matching(node, constraint.selector, pod.namespace)
    raw: list[int | None] = []
    for node in feasible:
        if node.name in ignored:
            raw.append(None)
            continue
        total = 0.0
        for i, constraint in enumerate(constraints):
            domain = node.labels.get(constraint.topology_key)
            if domain is None:
                continue
            if constraint.topology_key == LABEL_HOSTNAME:
                count = _count_matching(node, constraint.selector, pod.namespace)
            else:
                count = counts[i][domain]
            total += count * weights[i] + constraint.max_skew - 1
        raw.append(math.floor(total + 0.5))  # Go's math.Round (the total is never negative)
    valid = [s for s in raw if s is not None]
    high, low = max(valid, default=0), min(valid, default=0)
    return [0 if s is None else MAX_NODE_SCORE if high == 0 else MAX_NODE_SCORE * (high + low - s) // high for s in raw]


def cluster_scorer(
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    namespaces: Mapping[str, Mapping[str, str]],
    default_selector: LabelSelector | None = None,
) -> ClusterScores | None:
    """InterPodAffinity and PodTopologySpread, weighted (2 each), as one scorer for `select_host`; None when both
    PreScores would skip — a pod with no preferred pod (anti-)affinity and no ScheduleAnyway constraint (nor a
    Service selecting it), in a cluster where no placed pod has pod affinity or preferred terms."""
    spread = pod.soft_spread if pod.any_spread else default_selector is not None
    affinity = bool(pod.preferred_affinity or pod.preferred_anti) or _any_affinity_pods(nodes)
    if not spread and not affinity:
        return None
    w_affinity, w_spread = SCORE_WEIGHTS["InterPodAffinity"], SCORE_WEIGHTS["PodTopologySpread"]

    def scores(feasible: Sequence[NodeInfo]) -> list[int] | None:
        totals = [0] * len(feasible)
        found = False
        if affinity:
            part = inter_pod_affinity_scores(pod, feasible, nodes, namespaces)
            if part is not None:
                found = True
                totals = [t + w_affinity * x for t, x in zip(totals, part, strict=True)]
        if spread:
            part = topology_spread_scores(pod, feasible, nodes, default_selector)
            if part is not None:
                found = True
                totals = [t + w_spread * x for t, x in zip(totals, part, strict=True)]
        return totals if found else None

    return scores
