"""Pod admission on the node: the kubelet's checks before it starts a pod bound to it, pure.

Design note: the scheduler already placed the pod, but the kubelet checks again with what it knows (a pod
bound by `spec.nodeName` skips the scheduler entirely). In the kubelet's order: the eviction manager refuses
BestEffort pods while the node is under memory pressure (reason `Evicted`, `The node had condition:
[MemoryPressure]. `), unless they are critical or tolerate the memory-pressure taint;
the predicate handler refuses pods whose requests do not fit the allocatable room left by
the pods already admitted (`OutOfpods`, `OutOfcpu`, `OutOfmemory`, `OutOfephemeral-storage` with
`Node didn't have enough resource: cpu, requested: 1000, used: 3500, capacity: 4000`, cpu in millicores,
the rest in units), then pods whose nodeSelector or required node affinity this node's labels do not match
(`NodeAffinity`, `Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector`), then
pods that do not tolerate one of the node's NoExecute taints (`TaintToleration`, `Predicate TaintToleration
failed: node(s) had taints that the pod didn't tolerate`; both pkg/kubelet/lifecycle/predicate.go,
generalFilter, which keeps the first reason); the shutdown manager refuses every pod once the node is
shutting down. A refusal makes the pod Failed with the reason and `Pod was rejected: <message>` (`rejectPod`).
A critical pod refused for resources only is not refused: the node agent stops other pods to make room
(`kjobs.node.preemption`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from kjobs.api.nodeaffinity import pod_matches_node
from kjobs.api.quantity import QuantityError, parse_quantity
from kjobs.api.taints import no_execute_taints, tolerates
from kjobs.api.types import Obj
from kjobs.node.resources import qos_class
from kjobs.node.shutdown import NOT_ADMITTED_MESSAGE, NOT_ADMITTED_REASON

MEMORY_PRESSURE_MESSAGE = "The node had condition: [MemoryPressure]. "
NODE_AFFINITY_MESSAGE = "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
"""PredicateFailureError's `Predicate <name> failed: <reason>` with nodeaffinity.ErrReasonPod."""
TAINT_TOLERATION_MESSAGE = "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"
"""The same with tainttoleration.ErrReasonNotMatch: the kubelet checks NoExecute taints only."""
_FIT_ORDER = ("cpu", "memory", "ephemeral-storage")


@dataclass(frozen=True)
class Rejection:
    """Why a pod is not admitted: the pod's `status.reason` and the message (before the `rejectPod` prefix)."""

    reason: str
    message: str


def _amount(raw: object, resource: str) -> int:
    return _amount_of(raw if isinstance(raw, str | int | float) else str(raw), resource)


@lru_cache(maxsize=4096, typed=True)
def _amount_of(raw: str | int | float, resource: str) -> int:
    """Remembered: admission reads the node's allocatable and each pod's requests for every pod it admits."""
    try:
        quantity = parse_quantity(raw)
    except QuantityError:
        return 0
    return quantity.milli_value() if resource == "cpu" else quantity.int_value()


def pod_requests(pod: Obj) -> dict[str, int]:
    """The pod's effective requests: per resource, max(sum of containers and sidecars, largest init container
    with the sidecars started before it) + overhead (component-helpers' resource `PodRequests`: a sidecar, an init
    container with `restartPolicy: Always`, runs on beside everything after it)."""
    spec = pod.get("spec") or {}
    total: dict[str, int] = {}
    for container in spec.get("containers") or []:
        for name, raw in ((container.get("resources") or {}).get("requests") or {}).items():
            total[name] = total.get(name, 0) + _amount(raw, name)
    sidecars: dict[str, int] = {}
    peak: dict[str, int] = {}
    for init in spec.get("initContainers") or []:
        requests = {n: _amount(raw, n) for n, raw in ((init.get("resources") or {}).get("requests") or {}).items()}
        if init.get("restartPolicy") == "Always":
            for name, amount in requests.items():
                sidecars[name] = sidecars.get(name, 0) + amount
                total[name] = total.get(name, 0) + amount
            moment = dict(sidecars)
        else:
            moment = {n: requests.get(n, 0) + sidecars.get(n, 0) for n in requests.keys() | sidecars.keys()}
        for name, amount in moment.items():
            peak[name] = max(peak.get(name, 0), amount)
    for name, amount in peak.items():
        total[name] = max(total.get(name, 0), amount)
    for name, raw in (spec.get("overhead") or {}).items():
        total[name] = total.get(name, 0) + _amount(raw, name)
    return total


@dataclass(frozen=True)
class Load:
    """What the pods already admitted take: how many they are, and their requests summed per resource."""

    count: int
    used: dict[str, int]


class LoadBook:
    """The `Load` of the pods admitted and not yet final, kept as they come and go, so that admitting a pod
    costs the same next to 5,000 pods as next to 5 (a sum over every live pod per admission is quadratic)."""

    def __init__(self) -> None:
        self._requests: dict[str, dict[str, int]] = {}
        self._used: dict[str, int] = {}

    def add(self, uid: str, requests: dict[str, int]) -> None:
        """Count pod `uid` (once) with its requests (`pod_requests`)."""
        if uid in self._requests:
            return
        self._requests[uid] = requests
        for name, amount in requests.items():
            self._used[name] = self._used.get(name, 0) + amount

    def remove(self, uid: str) -> None:
        """Stop counting pod `uid` (it reached its final phase or is gone); nothing if it is not counted."""
        requests = self._requests.pop(uid, None)
        for name, amount in (requests or {}).items():
            self._used[name] -= amount

    def without(self, uid: str) -> Load:
        """The load of every counted pod but `uid`."""
        own = self._requests.get(uid)
        if own is None:
            return Load(len(self._requests), dict(self._used))
        used = dict(self._used)
        for name, amount in own.items():
            used[name] -= amount
        return Load(len(self._requests) - 1, used)


def load_of(requests: Iterable[dict[str, int]]) -> Load:
    """The `Load` of pods with these requests (each a `pod_requests`)."""
    count = 0
    used: dict[str, int] = {}
    for each in requests:
        count += 1
        for name, amount in each.items():
            used[name] = used.get(name, 0) + amount
    return Load(count, used)


def admit(
    pod: Obj,
    admitted: Iterable[Obj] | Load,
    allocatable: Obj,
    *,
    memory_pressure: bool = False,
    shutting_down: bool = False,
    requests_of: Callable[[Obj], dict[str, int]] = pod_requests,
    node_labels: Mapping[str, str] | None = None,
    node_name: str = "",
    node_taints: Sequence[Obj] = (),
    check_resources: bool = True,
) -> Rejection | None:
    """None when the kubelet would start `pod` next to the `admitted` (active) pods, else why not.

    `admitted`: the pods, or their `Load` when the caller keeps their requests (the node agent does: it
    admits every pod next to the fifty it runs). `requests_of` gives a pod's requests (`pod_requests`; a
    caller may remember them per pod, since a pod's container resources never change). `node_labels`: this
    node's labels, to check the pod's node affinity against (None: not checked); `node_taints`: its taints."""
    if memory_pressure and _refused_under_memory_pressure(pod):
        return Rejection("Evicted", MEMORY_PRESSURE_MESSAGE)
    load = admitted if isinstance(admitted, Load) else load_of(requests_of(other) for other in admitted)
    if check_resources:
        for name, requested, used, capacity in _shortfalls(pod, load, allocatable, requests_of)[:1]:
            return Rejection(f"OutOf{name}", _insufficient(name, requested, used, capacity))
    if node_labels is not None and not pod_matches_node(pod.get("spec") or {}, node_labels, node_name):
        return Rejection("NodeAffinity", NODE_AFFINITY_MESSAGE)
    if node_taints:
        tolerations = [t for t in (pod.get("spec") or {}).get("tolerations") or [] if isinstance(t, dict)]
        if any(not any(tolerates(t, taint) for t in tolerations) for taint in no_execute_taints(node_taints)):
            return Rejection("TaintToleration", TAINT_TOLERATION_MESSAGE)
    if shutting_down:
        return Rejection(NOT_ADMITTED_REASON, NOT_ADMITTED_MESSAGE)
    return None


def _shortfalls(
    pod: Obj, load: Load, allocatable: Obj, requests_of: Callable[[Obj], dict[str, int]]
) -> list[tuple[str, int, int, int]]:
    """Every resource the pod does not fit in, in the order `noderesources.Fits` lists them: (name, requested,
    used, capacity)."""
    found: list[tuple[str, int, int, int]] = []
    max_pods = _amount(allocatable.get("pods", "110"), "pods")
    if load.count + 1 > max_pods:
        found.append(("pods", 1, load.count, max_pods))
    wanted = requests_of(pod)
    used = load.used
    for name in _FIT_ORDER:
        requested = wanted.get(name, 0)
        if requested == 0 or name not in allocatable:
            continue
        capacity = _amount(allocatable[name], name)
        if requested > capacity - used.get(name, 0):
            found.append((name, requested, used.get(name, 0), capacity))
    return found


def shortfalls(
    pod: Obj, admitted: Load, allocatable: Obj, requests_of: Callable[[Obj], dict[str, int]] = pod_requests
) -> list[tuple[str, int]]:
    """What the pod lacks, per resource (`InsufficientResourceError.GetInsufficientAmount`: requested minus what
    is free), for the kubelet's critical-pod preemption."""
    return [
        (name, requested - (capacity - used))
        for name, requested, used, capacity in _shortfalls(pod, admitted, allocatable, requests_of)
    ]


MEMORY_PRESSURE_TAINT: Obj = {"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule"}
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000


def _refused_under_memory_pressure(pod: Obj) -> bool:
    """The eviction manager's `Admit` on a node whose only pressure is memory: a critical pod (priority
    2000000000 and up; kjobs has no static or mirror pods) is always admitted, "since they are required for system
    stability"; any pod not BestEffort is; a BestEffort pod only when it tolerates the
    `node.kubernetes.io/memory-pressure` NoSchedule taint (pkg/kubelet/eviction/eviction_manager.go)."""
    spec = pod.get("spec") or {}
    priority = spec.get("priority")
    if isinstance(priority, int) and not isinstance(priority, bool) and priority >= SYSTEM_CRITICAL_PRIORITY:
        return False
    if qos_class(pod) != "BestEffort":
        return False
    tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, dict)]
    return not any(tolerates(t, MEMORY_PRESSURE_TAINT) for t in tolerations)


def _insufficient(name: str, requested: int, used: int, capacity: int) -> str:
    return f"Node didn't have enough resource: {name}, requested: {requested}, used: {used}, capacity: {capacity}"
