"""The kubelet's critical-pod preemption (pkg/kubelet/preemption/preemption.go), pure.

A critical pod (priority 2000000000 and up; kjobs has no static or mirror pods) that the node refuses only for
resources (`OutOfcpu`, `OutOfmemory`, `OutOfpods`, ...) is not refused: the kubelet picks pods to stop until the
shortfall is covered, kills them (phase Failed, reason `Preempting`, "Preempted in order to admit critical pod",
and `DisruptionTarget` / `TerminationByKubelet` "Pod was preempted by Kubelet to accommodate a critical pod.")
and admits the critical pod. Candidates are the pods it may preempt (`kubetypes.Preemptable`: any non-critical
pod, or a critical one of lower priority), taken BestEffort first, then Burstable, then Guaranteed, and inside a
class by the smallest distance to what is still missing (`getPodsToPreemptByDistance`). When no set of pods can
cover it, the pod is refused with `UnexpectedAdmissionError`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kjobs.api.types import Obj
from kjobs.node.resources import qos_class

SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
PREEMPTING_REASON = "Preempting"
"""`events.PreemptContainer`: the preempted pod's `status.reason` and its Warning event's reason."""
PREEMPTING_MESSAGE = "Preempted in order to admit critical pod"
UNEXPECTED_REASON = "UnexpectedAdmissionError"

Requirement = tuple[str, int]
"""A resource still missing and how much of it (`admissionRequirement`: cpu in millicores, `pods` in pods)."""


class NoPodsToPreempt(Exception):
    """No set of pods covers the shortfall; the message is the admission failure's."""


def _priority(pod: Obj) -> int | None:
    value = (pod.get("spec") or {}).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def is_critical(pod: Obj) -> bool:
    """`kubetypes.IsCriticalPod` for an API pod: its priority is system-critical."""
    priority = _priority(pod)
    return priority is not None and priority >= SYSTEM_CRITICAL_PRIORITY


def preemptable(preemptor: Obj, preemptee: Obj) -> bool:
    """`kubetypes.Preemptable`: a critical pod may stop any non-critical one; otherwise only a pod of lower
    priority, when both have one."""
    if is_critical(preemptor) and not is_critical(preemptee):
        return True
    mine, theirs = _priority(preemptor), _priority(preemptee)
    return mine is not None and theirs is not None and mine > theirs


def _request(requests_of: Callable[[Obj], dict[str, int]], pod: Obj, name: str) -> int:
    """`resource.GetResourceRequest`: 1 for `pods`, else the pod's request (cpu in millicores)."""
    return 1 if name == "pods" else requests_of(pod).get(name, 0)


def subtract(
    requirements: Sequence[Requirement], pods: Sequence[Obj], requests_of: Callable[[Obj], dict[str, int]]
) -> list[Requirement]:
    """What is still missing once `pods` are gone (`admissionRequirementList.subtract`)."""
    left: list[Requirement] = []
    for name, quantity in requirements:
        for pod in pods:
            quantity -= _request(requests_of, pod, name)
            if quantity <= 0:
                break
        if quantity > 0:
            left.append((name, quantity))
    return left


def _distance(requirements: Sequence[Requirement], pod: Obj, requests_of: Callable[[Obj], dict[str, int]]) -> float:
    """The squared fractions of each requirement the pod leaves uncovered (`admissionRequirementList.distance`)."""
    total = 0.0
    for name, quantity in requirements:
        remaining = quantity - _request(requests_of, pod, name)
        if remaining > 0:
            total += (remaining / quantity) ** 2
    return total


def _smaller(a: Obj, b: Obj, requests_of: Callable[[Obj], dict[str, int]]) -> bool:
    """`smallerResourceRequest`: memory first, then cpu; equal counts as smaller."""
    for name in ("memory", "cpu"):
        ra, rb = _request(requests_of, a, name), _request(requests_of, b, name)
        if ra != rb:
            return ra < rb
    return True


def _describe(requirements: Sequence[Requirement]) -> str:
    """`admissionRequirementList.toString`."""
    return "[" + "".join(f"(res: {name}, q: {quantity}), " for name, quantity in requirements) + "]"


def _by_distance(
    pods: Sequence[Obj], requirements: Sequence[Requirement], requests_of: Callable[[Obj], dict[str, int]]
) -> list[Obj]:
    """`getPodsToPreemptByDistance`: the pod nearest to what is missing, again and again (ties: the smaller one;
    a picked pod's place is taken by the last one, as Go's swap-remove does)."""
    pool = list(pods)
    chosen: list[Obj] = []
    left = list(requirements)
    while left:
        if not pool:
            raise NoPodsToPreempt(f"no set of running pods found to reclaim resources: {_describe(left)}")
        best_distance = float(len(left) + 1)
        best = 0
        for i, pod in enumerate(pool):
            distance = _distance(left, pod, requests_of)
            if distance < best_distance or (distance == best_distance and _smaller(pod, pool[best], requests_of)):
                best_distance, best = distance, i
        left = subtract(left, [pool[best]], requests_of)
        chosen.append(pool[best])
        pool[best] = pool[-1]
        pool.pop()
    return chosen


def pods_to_preempt(
    preemptor: Obj,
    pods: Sequence[Obj],
    requirements: Sequence[Requirement],
    requests_of: Callable[[Obj], dict[str, int]],
) -> list[Obj]:
    """`getPodsToPreempt`: the pods to stop so that `preemptor` fits, BestEffort ones first; NoPodsToPreempt (with
    the kubelet's message) when even all of them would not do."""
    classes: dict[str, list[Obj]] = {"BestEffort": [], "Burstable": [], "Guaranteed": []}
    for pod in pods:
        if preemptable(preemptor, pod):
            classes[qos_class(pod)].append(pod)
    best_effort, burstable, guaranteed = classes["BestEffort"], classes["Burstable"], classes["Guaranteed"]
    unmet = subtract(requirements, [*best_effort, *burstable, *guaranteed], requests_of)
    if unmet:
        raise NoPodsToPreempt(f"no set of running pods found to reclaim resources: {_describe(unmet)}")
    guaranteed_out = _by_distance(
        guaranteed, subtract(requirements, [*best_effort, *burstable], requests_of), requests_of
    )
    burstable_out = _by_distance(
        burstable, subtract(requirements, [*best_effort, *guaranteed_out], requests_of), requests_of
    )
    best_effort_out = _by_distance(
        best_effort, subtract(requirements, [*burstable_out, *guaranteed_out], requests_of), requests_of
    )
    return [*best_effort_out, *burstable_out, *guaranteed_out]


def unexpected_admission_message(error: NoPodsToPreempt) -> str:
    """The refusal's message when no pods can be preempted (`predicateAdmitHandler.Admit`)."""
    return (
        "Unexpected error while attempting to recover from admission failure: "
        f"preemption: error finding a set of pods to preempt: {error}"
    )
