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

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kjobs.api.podaffinity import AffinityTerm, SpreadConstraint, merge_namespaces
from kjobs.controllers.scheduling import FilterStatus, NodeInfo, PodInfo, first_untolerated, matches_node_affinity

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
                count = sum(
                    1
                    for other in node.pods.values()
                    if not other.deleting
                    and other.namespace == pod.namespace
                    and constraint.selector.matches_labels(other.labels)
                )
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


def prefilter(
    pod: PodInfo, nodes: Sequence[NodeInfo], namespaces: Mapping[str, Mapping[str, str]]
) -> CycleState | None:
    """Both PreFilters for `pod` over `nodes` (`namespaces`: labels by namespace name, for namespace selectors).
    None when both skip — the common case, costing a look at each node's anti-affinity pods."""
    spread = SpreadState.build(pod, nodes) if pod.spread else None
    affinity = None
    if pod.affinity_terms or pod.anti_terms or any(node.anti_pods for node in nodes):
        affinity = AffinityState.build(pod, nodes, namespaces)
    if spread is None and affinity is None:
        return None
    return CycleState(spread, affinity)
