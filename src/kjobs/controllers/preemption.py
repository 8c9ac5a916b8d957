"""Priority and preemption as pure functions: a pod's priority from PriorityClasses, whether it may preempt, the
fewest lower-priority victims per node, and the node to preempt on — Kubernetes' DefaultPreemption plugin.

When a pod fits nowhere, only nodes that failed on resources, host ports, pod anti-affinity (its own or an
existing pod's) or topology spread skew are candidates (removing pods cannot fix taints, selectors, cordons, a
missing topology label or unmet pod affinity). On each, every lower-priority pod is removed; if the pod still does
not fit, the node is out. Otherwise pods are given back, most important first (higher priority, then longer running),
PDB-protected ones before the others, keeping each one that still leaves room: what remains removed are the
victims.
The node is chosen by fewest PDB violations, then lowest highest victim priority, lowest priority sum, fewest
victims, latest start of the most important victims, then node name (Kubernetes picks the first of its random
walk; kjobs is deterministic). The shell executes the choice: `DisruptionTarget`, delete, `Preempted` event,
`nominatedNodeName`.

Sources (kubernetes/kubernetes): `pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go`,
`pkg/scheduler/framework/preemption/preemption.go`, `plugin/pkg/admission/priority/admission.go`,
`pkg/scheduler/util/utils.go` (`MoreImportantPod`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kjobs.api.errors import ApiError
from kjobs.api.selectors import LabelSelector, label_selector_from_object
from kjobs.api.types import Obj
from kjobs.controllers.interpod import CycleState
from kjobs.controllers.scheduling import (
    REASON_PORTS,
    FilterStatus,
    NodeInfo,
    PodInfo,
    count_ports,
    fit_error,
    insufficient,
    port_conflict,
)

REASON_NO_VICTIMS = "No preemption victims found for incoming pod"
REASON_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
PREFIX = "preemption: "
_INT32_SHIFT = 2**31


# ------------------------------------------------------------------------------------------------ priority


@dataclass(frozen=True, slots=True)
class PriorityClass:
    """A PriorityClass's value, preemption policy and whether it is the global default."""

    value: int
    preempt_never: bool = False
    global_default: bool = False


def priority_classes(objects: Iterable[Obj]) -> tuple[dict[str, PriorityClass], PriorityClass | None]:
    """PriorityClasses by name, and the global default (the lowest-valued one if several claim it)."""
    classes: dict[str, PriorityClass] = {}
    default: PriorityClass | None = None
    for obj in objects:
        name = str((obj.get("metadata") or {}).get("name") or "")
        value = obj.get("value")
        if not name or not isinstance(value, int) or isinstance(value, bool):
            continue
        pc = PriorityClass(value, obj.get("preemptionPolicy") == "Never", bool(obj.get("globalDefault")))
        classes[name] = pc
        if pc.global_default and (default is None or pc.value < default.value):
            default = pc
    return classes, default


def resolve_priority(
    pod: Obj, classes: Mapping[str, PriorityClass], global_default: PriorityClass | None
) -> tuple[int, bool]:
    """(priority, preemptionPolicy is Never), as the Priority admission plugin would have set them.

    A named class gives its value and policy; no class name means the global default class if there is one
    (unless the pod carries a non-zero `spec.priority` of its own), else `spec.priority` or 0.
    """
    spec = pod.get("spec") or {}
    raw = spec.get("priority")
    own = raw if isinstance(raw, int) and not isinstance(raw, bool) else 0
    never = spec.get("preemptionPolicy") == "Never"
    name = spec.get("priorityClassName")
    pc = classes.get(name) if isinstance(name, str) and name else None
    if pc is None and not name and not own:
        pc = global_default
    if pc is None:
        return own, never
    return pc.value, never or pc.preempt_never


# ------------------------------------------------------------------------------------------------ budgets


@dataclass(frozen=True, slots=True)
class Budget:
    """A PodDisruptionBudget as preemption reads it."""

    namespace: str
    selector: LabelSelector
    allowed: int
    disrupted: frozenset[str]


def budgets(objects: Iterable[Obj]) -> list[Budget]:
    """PDBs with usable selectors (an empty or invalid selector matches nothing, as in the scheduler)."""
    result: list[Budget] = []
    for pdb in objects:
        try:
            selector = label_selector_from_object((pdb.get("spec") or {}).get("selector"))
        except ApiError:
            continue
        if selector.empty or selector.nothing:
            continue
        status = pdb.get("status") or {}
        allowed = status.get("disruptionsAllowed")
        result.append(
            Budget(
                str((pdb.get("metadata") or {}).get("namespace") or ""),
                selector,
                allowed if isinstance(allowed, int) else 0,
                frozenset((status.get("disruptedPods") or {}).keys()),
            )
        )
    return result


def split_by_budget(pods: Sequence[PodInfo], pdbs: Sequence[Budget]) -> tuple[list[PodInfo], list[PodInfo]]:
    """(violating, non-violating), order kept: a pod violates when some matching budget would go below zero
    counting the pods before it (pods a budget already lists as disrupted are not counted)."""
    allowed = [b.allowed for b in pdbs]
    violating: list[PodInfo] = []
    fine: list[PodInfo] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for i, budget in enumerate(pdbs):
                if budget.namespace != pod.namespace or not budget.selector.matches_labels(pod.labels):
                    continue
                if pod.name in budget.disrupted:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else fine).append(pod)
    return violating, fine


# ------------------------------------------------------------------------------------------------ victims


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node where the preemptor fits once `victims` (most important first) are gone."""

    node: str
    victims: tuple[PodInfo, ...]
    pdb_violations: int


def importance(pod: PodInfo, now: float) -> tuple[int, float, float, str]:
    """Sort key, most important first: higher priority, then earlier start (pods not started count as now);
    creation time and name only make ties deterministic."""
    return -pod.priority, pod.started if pod.started is not None else now, pod.created, pod.key


def nominated_on(node: str, pod: PodInfo, nominated: Mapping[str, Mapping[str, PodInfo]]) -> list[PodInfo]:
    """Other pods nominated to `node` (by uid) whose priority is at least `pod`'s: their room is reserved."""
    bucket = nominated.get(node)
    if not bucket:
        return []
    return [p for p in bucket.values() if p.uid != pod.uid and p.priority >= pod.priority]


def select_victims(
    preemptor: PodInfo,
    node: NodeInfo,
    *,
    reserved: Sequence[PodInfo],
    pdbs: Sequence[Budget],
    now: float,
    cycle: CycleState | None = None,
) -> Candidate | FilterStatus:
    """The fewest, least important lower-priority pods to remove from `node`, or why the node cannot help.

    `reserved` are nominated pods of at least the preemptor's priority, counted as present (see `nominated_on`).
    `cycle` is the preemptor's PodTopologySpread/InterPodAffinity state: a copy follows each pod removed and given
    back (the plugins' RemovePod/AddPod), and those filters run after the node-local ones.
    """
    potential = [p for p in node.pods.values() if p.priority < preemptor.priority]
    if not potential:
        return FilterStatus((REASON_NO_VICTIMS,), False)
    requested = node.requested.copy()
    ports = dict(node.used_ports)
    for p in potential:
        requested.add(p.requests, -1)
        count_ports(ports, p.host_ports, -1)
    for p in reserved:
        requested.add(p.requests)
        count_ports(ports, p.host_ports)
    state = cycle.copy() if cycle is not None else None
    if state is not None:
        for p in potential:
            state.remove_pod(p, node)
        for p in reserved:
            state.add_pod(p, node)
    count = len(node.pods) - len(potential) + len(reserved)

    def misfit() -> list[str]:
        if preemptor.host_ports and port_conflict(preemptor.host_ports, ports):
            return [REASON_PORTS]  # NodePorts runs before NodeResourcesFit
        reasons = insufficient(preemptor.requests, node.allocatable, node.allowed_pods, requested, count)
        if reasons or state is None:
            return reasons
        status = state.filter(preemptor, node)  # PodTopologySpread, InterPodAffinity: last
        return list(status.reasons) if status is not None else []

    reasons = misfit()
    if reasons:
        return FilterStatus(tuple(reasons), True)
    potential.sort(key=lambda p: importance(p, now))
    violating, fine = split_by_budget(potential, pdbs)
    victims: list[PodInfo] = []
    violations = 0
    for group, counts in ((violating, True), (fine, False)):
        for pod in group:
            requested.add(pod.requests)
            count_ports(ports, pod.host_ports)
            if state is not None:
                state.add_pod(pod, node)
            count += 1
            if misfit():
                requested.add(pod.requests, -1)
                count_ports(ports, pod.host_ports, -1)
                if state is not None:
                    state.remove_pod(pod, node)
                count -= 1
                victims.append(pod)
                violations += counts
    if not victims:
        return FilterStatus((f'expected at least one victim pod on node "{node.name}"',), False)
    if violating and fine:
        victims.sort(key=lambda p: importance(p, now))
    return Candidate(node.name, tuple(victims), violations)


def pick_candidate(candidates: Sequence[Candidate], now: float) -> Candidate:
    """Kubernetes' `pickOneNodeForPreemption`, with the node name as the last tie-break."""

    def key(c: Candidate) -> tuple[int, int, int, int, float, str]:
        top = c.victims[0].priority
        earliest = min((p.started if p.started is not None else now) for p in c.victims if p.priority == top)
        total = sum(p.priority + _INT32_SHIFT for p in c.victims)
        return c.pdb_violations, top, total, len(c.victims), -earliest, c.node

    return min(candidates, key=key)


@dataclass(frozen=True, slots=True)
class PreemptionResult:
    """A chosen candidate, or the post-filter message and whether the pod's nomination should be cleared."""

    candidate: Candidate | None
    message: str = ""
    clear_nomination: bool = False


def preempt(
    preemptor: PodInfo,
    nodes: Sequence[NodeInfo],
    statuses: Mapping[str, FilterStatus],
    *,
    nominated: Mapping[str, Mapping[str, PodInfo]],
    pdbs: Sequence[Budget],
    now: float,
    cycle: CycleState | None = None,
) -> PreemptionResult:
    """DefaultPreemption's PostFilter for a pod that fit nowhere (`statuses` has every node's failure; `cycle`
    the pod's PodTopologySpread/InterPodAffinity PreFilter state, if any)."""
    blocked = _not_eligible(preemptor, nodes, statuses)
    if blocked:
        return PreemptionResult(None, PREFIX + blocked)
    failures: dict[str, tuple[str, ...]] = {}
    candidates: list[Candidate] = []
    for node in nodes:
        status = statuses.get(node.name)
        if status is None or not status.resolvable:
            continue
        outcome = select_victims(
            preemptor, node, reserved=nominated_on(node.name, preemptor, nominated), pdbs=pdbs, now=now, cycle=cycle
        )
        if isinstance(outcome, Candidate):
            candidates.append(outcome)
        else:
            failures[node.name] = outcome.reasons
    if not candidates:
        message = fit_error(len(nodes), failures, absent_reason=REASON_NOT_HELPFUL)
        return PreemptionResult(None, PREFIX + message, clear_nomination=True)
    return PreemptionResult(pick_candidate(candidates, now))


def _not_eligible(preemptor: PodInfo, nodes: Sequence[NodeInfo], statuses: Mapping[str, FilterStatus]) -> str:
    if preemptor.preempt_never:
        return NOT_ELIGIBLE_NEVER
    target = preemptor.nominated_node
    if not target:
        return ""
    status = statuses.get(target)
    if status is not None and not status.resolvable:
        return ""  # the nominated node cannot take the pod any more: preempt elsewhere
    node = next((n for n in nodes if n.name == target), None)
    if node is not None and any(
        p.priority < preemptor.priority and p.deleting and p.preemption_target for p in node.pods.values()
    ):
        return NOT_ELIGIBLE_TERMINATING
    return ""
