"""Scheduling decisions as pure functions: a pod's effective requests, whether a node fits it, node scores, and
the `FailedScheduling` message — Kubernetes' default plugins, reduced to what kjobs' pods use.

The scheduler shell (`kjobs.controllers.scheduler`) keeps a `NodeInfo` per node (its allocatable resources and
the requests of the pods bound or assumed there) and a `PodInfo` per pod, both built once per object change, so
one scheduling attempt is a few integer comparisons per node. Filters run in Kubernetes' default order
(NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, then PodTopologySpread and
InterPodAffinity from `kjobs.controllers.interpod`) and a node reports the reasons of the first filter that
rejects it, as the framework does; NodePorts, NodeResourcesFit, spread skew and pod anti-affinity failures can
be resolved by preemption.
Scoring is the default profile's weighted sum: TaintToleration (PreferNoSchedule, ×3), NodeAffinity (preferred
terms, ×2), NodeResourcesFit LeastAllocated (cpu and memory, non-zero defaults for containers without requests,
×1) and BalancedAllocation (×1), each normalised as Kubernetes does; ties go to the node whose name sorts first,
so placements are deterministic (Kubernetes picks among ties at random). InterPodAffinity (preferred terms, ×2)
and PodTopologySpread (ScheduleAnyway and system default constraints, ×2) read the whole cluster and are scored in
`kjobs.controllers.interpod`. Not modelled: ImageLocality and the volume/DRA plugins.

Sources (kubernetes/kubernetes): `pkg/scheduler/framework/plugins/{noderesources,nodeaffinity,tainttoleration,
nodeunschedulable}`, `pkg/scheduler/framework/types.go` (`FitError`), `component-helpers/scheduling/corev1`
(`ToleratesTaint`, node selector terms), `component-helpers/resource` (`PodRequests`),
`pkg/controller/nodelifecycle` (condition taints).
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from kjobs.api.names import DISRUPTION_TARGET
from kjobs.api.nodeaffinity import match_term
from kjobs.api.podaffinity import (
    SCHEDULE_ANYWAY,
    AffinityTerm,
    SpreadConstraint,
    hard_spread_constraints,
    preferred_affinity_terms,
    required_affinity_terms,
    resolve_spread,
    resolve_terms,
    resolve_weighted,
)
from kjobs.api.quantity import QuantityError, parse_quantity
from kjobs.api.taints import (
    NO_EXECUTE,
    NO_SCHEDULE,
    TAINT_DISK_PRESSURE,
    TAINT_MEMORY_PRESSURE,
    TAINT_NETWORK_UNAVAILABLE,
    TAINT_NOT_READY,
    TAINT_PID_PRESSURE,
    TAINT_UNREACHABLE,
    TAINT_UNSCHEDULABLE,
)
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.memo import Memo

DEFAULT_SCHEDULER_NAME = "default-scheduler"
MAX_NODE_SCORE = 100
DEFAULT_MILLI_CPU_REQUEST = 100
"""Non-zero CPU a container without a request counts as, for scoring only (`schedutil.DefaultMilliCPURequest`)."""
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
"""Non-zero memory a container without a request counts as, for scoring only (`schedutil.DefaultMemoryRequest`)."""

CONDITION_TAINTS = {
    ("MemoryPressure", "True"): TAINT_MEMORY_PRESSURE,
    ("DiskPressure", "True"): TAINT_DISK_PRESSURE,
    ("PIDPressure", "True"): TAINT_PID_PRESSURE,
    ("NetworkUnavailable", "True"): TAINT_NETWORK_UNAVAILABLE,
}
"""Node conditions the node lifecycle controller turns into NoSchedule taints (TaintNodesByCondition)."""

# Filter reasons, exactly as the plugins word them.
REASON_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_TAINT_FORMAT = "node(s) had untolerated taint {{{key}: {value}}}"
"""TaintToleration names the first untolerated taint (pkg/scheduler/framework/plugins/tainttoleration/
taint_toleration.go `Filter`, v1.32); so two differently tainted nodes are two entries in `FailedScheduling`."""
REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_PORTS = "node(s) didn't have free ports for the requested pod ports"
REASON_TOO_MANY_PODS = "Too many pods"
NO_NODES_AVAILABLE = "no nodes available to schedule pods"
NOTE_LENGTH_LIMIT = 1024

_CPU, _MEMORY, _STORAGE, _PODS = "cpu", "memory", "ephemeral-storage", "pods"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
SCORE_WEIGHTS = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "NodeResourcesFit": 1,
    "NodeResourcesBalancedAllocation": 1,
}
"""The default profile's score plugin weights (pkg/scheduler/apis/config/v1/default_plugins.go; ImageLocality is
not modelled: kjobs knows no images). PodTopologySpread and InterPodAffinity are scored by
`kjobs.controllers.interpod` (`cluster_scorer`)."""


# ------------------------------------------------------------------------------------------------ resources


@dataclass(slots=True)
class Resources:
    """Milli-CPU, bytes of memory and ephemeral storage, and integer scalar (extended) resources."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    scalars: dict[str, int] = field(default_factory=dict)

    def copy(self) -> Resources:
        """An independent copy."""
        return Resources(self.milli_cpu, self.memory, self.ephemeral_storage, dict(self.scalars))

    def add(self, other: Resources, sign: int = 1) -> None:
        """Add (or with `sign=-1` subtract) `other` in place."""
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        for name, value in other.scalars.items():
            self.scalars[name] = self.scalars.get(name, 0) + sign * value

    def set_max(self, other: Resources) -> None:
        """Raise each dimension to at least `other`'s."""
        self.milli_cpu = max(self.milli_cpu, other.milli_cpu)
        self.memory = max(self.memory, other.memory)
        self.ephemeral_storage = max(self.ephemeral_storage, other.ephemeral_storage)
        for name, value in other.scalars.items():
            self.scalars[name] = max(self.scalars.get(name, 0), value)

    def is_zero(self) -> bool:
        """Nothing requested at all."""
        return not (self.milli_cpu or self.memory or self.ephemeral_storage or any(self.scalars.values()))


@functools.lru_cache(maxsize=4096)
def _quantity(raw: str | int | float, milli: bool) -> int:
    try:
        q = parse_quantity(raw)
    except (QuantityError, TypeError, ValueError):
        return 0
    return q.milli_value() if milli else q.int_value()


def resource_list(values: Mapping[str, Any] | None) -> tuple[Resources, int]:
    """A `ResourceList` (`{"cpu": "500m", "memory": "1Gi", ...}`) as `Resources`, plus its `pods` count."""
    result = Resources()
    pods = 0
    for name, raw in (values or {}).items():
        if not isinstance(raw, str | int | float) or isinstance(raw, bool):
            continue
        if name == _CPU:
            result.milli_cpu += _quantity(raw, True)
        elif name == _MEMORY:
            result.memory += _quantity(raw, False)
        elif name == _STORAGE:
            result.ephemeral_storage += _quantity(raw, False)
        elif name == _PODS:
            pods += _quantity(raw, False)
        else:
            result.scalars[name] = result.scalars.get(name, 0) + _quantity(raw, False)
    return result, pods


def _container_requests(container: Obj) -> Resources:
    resources = container.get("resources") or {}
    return resource_list(resources.get("requests") if isinstance(resources, dict) else None)[0]


def pod_requests(spec: Obj) -> Resources:
    """The pod's effective request (Kubernetes' `PodRequests`): regular containers and restartable init
    containers (sidecars) run together and add up; each other init container runs alone next to the sidecars
    started before it, and the pod needs the largest of those moments; `overhead` is added on top.
    """
    total = Resources()
    for container in _dicts(spec.get("containers")):
        total.add(_container_requests(container))
    sidecars = Resources()
    peak_init = Resources()
    for container in _dicts(spec.get("initContainers")):
        request = _container_requests(container)
        if container.get("restartPolicy") == "Always":
            sidecars.add(request)
            peak_init.set_max(sidecars)
        else:
            moment = request.copy()
            moment.add(sidecars)
            peak_init.set_max(moment)
    total.add(sidecars)
    total.set_max(peak_init)
    overhead = spec.get("overhead")
    if isinstance(overhead, dict):
        total.add(resource_list(overhead)[0])
    return total


def non_zero_requests(spec: Obj) -> tuple[int, int]:
    """(milli-CPU, memory) for scoring: containers without a CPU or memory request count the defaults."""
    cpu = memory = 0
    for container in _dicts(spec.get("containers")):
        request = _container_requests(container)
        requests = (container.get("resources") or {}).get("requests") or {}
        cpu += request.milli_cpu if _CPU in requests else DEFAULT_MILLI_CPU_REQUEST
        memory += request.memory if _MEMORY in requests else DEFAULT_MEMORY_REQUEST
    return cpu, memory


def _dicts(value: Any) -> list[Obj]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


# ------------------------------------------------------------------------------------------------ pods and nodes


@dataclass(frozen=True, slots=True)
class Toleration:
    """One `spec.tolerations` entry, typed and hashable for the hot path (same rule as `taints.tolerates`)."""

    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        """Kubernetes' `ToleratesTaint`: effect (empty = all), key (empty with Exists = all), then operator."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False


@dataclass(frozen=True, slots=True)
class Taint:
    """One node taint."""

    key: str
    value: str = ""
    effect: str = NO_SCHEDULE


@dataclass(slots=True)
class PodInfo:
    """What scheduling needs to know about a pod, computed once per pod change. Treated as immutable, but not
    frozen: one is built for every pod change the scheduler sees, and a frozen dataclass of this size takes
    twice as long to build."""

    uid: str
    namespace: str
    name: str
    node_name: str
    scheduler_name: str
    priority: int
    preempt_never: bool
    requests: Resources
    non_zero_cpu: int
    non_zero_memory: int
    labels: Mapping[str, str]
    node_selector: Mapping[str, str]
    required_terms: tuple[Obj, ...] | None
    preferred_terms: tuple[tuple[int, Obj], ...]
    host_ports: tuple[HostPort, ...]
    tolerations: tuple[Toleration, ...]
    created: float
    started: float | None
    deleting: bool
    terminal: bool
    preemption_target: bool
    nominated_node: str
    gated: bool
    pod: Obj
    spec: SpecInfo | None = None
    """The shared `SpecInfo` this pod's scheduling facts were taken from (every filter and score input on the pod's
    side): nodes keep their last answer for it (`NodeInfo.memo`). None: built by hand, never memoised."""
    affinity_terms: tuple[AffinityTerm, ...] = ()
    """Required pod affinity terms (`podAffinity.requiredDuringSchedulingIgnoredDuringExecution`), resolved for the
    pod's namespace."""
    anti_terms: tuple[AffinityTerm, ...] = ()
    """Required pod anti-affinity terms, resolved for the pod's namespace."""
    spread: tuple[SpreadConstraint, ...] = ()
    """DoNotSchedule topology spread constraints, `matchLabelKeys` merged with the pod's labels."""
    preferred_affinity: tuple[tuple[int, AffinityTerm], ...] = ()
    """Preferred pod affinity terms with their weights, resolved for the pod's namespace (InterPodAffinity score)."""
    preferred_anti: tuple[tuple[int, AffinityTerm], ...] = ()
    """Preferred pod anti-affinity terms with their weights."""
    soft_spread: tuple[SpreadConstraint, ...] = ()
    """ScheduleAnyway topology spread constraints (PodTopologySpread score)."""
    any_spread: bool = False
    """The pod has topology spread constraints of either kind: then no system default constraint applies."""

    @property
    def key(self) -> str:
        """`namespace/name`."""
        return f"{self.namespace}/{self.name}"

    def wants_scheduling(self, scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> bool:
        """Ours, not yet bound, not being deleted, not finished, no scheduling gates left."""
        return (
            not self.node_name
            and not self.deleting
            and not self.terminal
            and not self.gated
            and (self.scheduler_name or DEFAULT_SCHEDULER_NAME) == scheduler_name
        )


@dataclass(frozen=True, slots=True)
class SpecInfo:
    """What `PodInfo` takes from the pod's spec alone: the same for every change of a pod whose spec stays."""

    requests: Resources
    non_zero_cpu: int
    non_zero_memory: int
    node_selector: Mapping[str, str]
    required_terms: tuple[Obj, ...] | None
    preferred_terms: tuple[tuple[int, Obj], ...]
    host_ports: tuple[HostPort, ...]
    tolerations: tuple[Toleration, ...]
    pod_affinity: tuple[Obj, ...] = ()
    """Raw required pod affinity terms (resolved per pod: they depend on its namespace)."""
    pod_anti_affinity: tuple[Obj, ...] = ()
    """Raw required pod anti-affinity terms."""
    spread: tuple[Obj, ...] = ()
    """Raw DoNotSchedule topology spread constraints (resolved per pod: `matchLabelKeys` reads its labels)."""
    preferred_pod_affinity: tuple[tuple[int, Obj], ...] = ()
    """Raw preferred pod affinity terms, (weight, term)."""
    preferred_pod_anti_affinity: tuple[tuple[int, Obj], ...] = ()
    """Raw preferred pod anti-affinity terms, (weight, term)."""
    soft_spread: tuple[Obj, ...] = ()
    """Raw ScheduleAnyway topology spread constraints."""
    any_spread: bool = False
    """`topologySpreadConstraints` is not empty."""


def spec_info(spec: Obj) -> SpecInfo:
    """The spec-derived part of a `PodInfo` (requests are parsed quantities: worth keeping per pod)."""
    affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    cpu, memory = non_zero_requests(spec)
    pod_affinity, pod_anti_affinity = required_affinity_terms(spec)
    preferred_affinity, preferred_anti = preferred_affinity_terms(spec)
    constraints = spec.get("topologySpreadConstraints")
    return SpecInfo(
        requests=pod_requests(spec),
        non_zero_cpu=cpu,
        non_zero_memory=memory,
        node_selector=spec.get("nodeSelector") or {},
        required_terms=tuple(_dicts(affinity.get("nodeSelectorTerms"))) if isinstance(affinity, dict) else None,
        preferred_terms=_preferred_terms(spec),
        host_ports=host_ports(spec),
        tolerations=tuple(
            Toleration(*(str(t.get(k) or "") for k in ("key", "operator", "value", "effect")))
            for t in _dicts(spec.get("tolerations"))
        ),
        pod_affinity=pod_affinity,
        pod_anti_affinity=pod_anti_affinity,
        spread=hard_spread_constraints(spec),
        preferred_pod_affinity=preferred_affinity,
        preferred_pod_anti_affinity=preferred_anti,
        soft_spread=hard_spread_constraints(spec, SCHEDULE_ANYWAY),
        any_spread=isinstance(constraints, list) and bool(constraints),
    )


_SPEC_INFOS: Memo[bytes, SpecInfo] = Memo(256)


def shared_spec_info(spec: Obj) -> SpecInfo:
    """`spec_info`, computed once for specs equal in every member it reads: a Job's pods repeat one spec but for
    `hostname` (and `nodeName` once bound) and, on `kjobs up`, the name of the token volume the ServiceAccount
    admission adds (`kube-api-access-` and five random characters, in `volumes` and in each container's
    `volumeMounts`), none of which it reads. The result is shared, so read-only."""
    try:
        key = spec_key(spec)
    except TypeError:  # not JSON (a spec built in process): computed every time
        return spec_info(spec)
    known = _SPEC_INFOS.get(key)
    return known if known is not None else _SPEC_INFOS.put(key, spec_info(spec))


def spec_key(spec: Obj) -> bytes:
    """`shared_spec_info`'s key: the JSON of every member of `spec` that `spec_info` reads, each in its own place:
    `affinity`, `nodeSelector`, `tolerations`, `topologySpreadConstraints`, `overhead`, and of each container and
    init container (those `_dicts` keeps) the three it reads — `resources` (requests), `ports` (host ports) and
    `restartPolicy` (a sidecar) — three places apiece, in one list for the containers and one for the init
    containers (one list for both could not tell `containers: [{}]` from `initContainers: [{}]`).
    JSON tells `1`, `1.0` and `True` apart, as `spec_info`'s `isinstance` tests do (Python's `==` does not), so
    specs with equal keys read alike. Raises `TypeError` for a spec that is not JSON."""
    read: list[list[Any]] = []
    for containers in (spec.get("containers"), spec.get("initContainers")):
        members: list[Any] = []
        if isinstance(containers, list):
            for c in containers:
                if isinstance(c, dict):
                    members += (c.get("resources"), c.get("ports"), c.get("restartPolicy"))
        read.append(members)
    return orjson.dumps(
        (
            spec.get("affinity"),
            spec.get("nodeSelector"),
            spec.get("tolerations"),
            spec.get("topologySpreadConstraints"),
            spec.get("overhead"),
            read,
        )
    )


def pod_info(pod: Obj, *, priority: int, preempt_never: bool, spec: SpecInfo | None = None) -> PodInfo:
    """Build a `PodInfo` (the priority comes from `kjobs.controllers.preemption.resolve_priority`; `spec`, when
    given, is `spec_info` of this pod's spec, computed earlier).

    The scheduler builds one for most events of every pod it has not seen finish, so `PodInfo` is made with its
    fields by position, in their declared order (31 keyword arguments cost CPython about 15,000 instructions to
    match, half this function's cost: docs/sched49.md), and the conditions are scanned in place."""
    meta = pod.get("metadata") or {}
    pod_spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    derived = spec if spec is not None else spec_info(pod_spec)
    target = False
    conditions = status.get("conditions")
    if isinstance(conditions, list):
        for condition in conditions:  # `_dicts`, without its list
            if isinstance(condition, dict) and condition.get("type") == DISRUPTION_TARGET:
                target = condition.get("status") == "True" and condition.get("reason") == "PreemptionByScheduler"
    namespace = str(meta.get("namespace") or "")
    labels = meta.get("labels") or {}
    # `_time` of both timestamps, its frame only for one that is there (a pod starts with no `startTime`)
    created_at, started_at = meta.get("creationTimestamp"), status.get("startTime")
    created = _time(created_at) if created_at else None
    started = _time(started_at) if started_at else None
    return PodInfo(
        str(meta.get("uid") or ""),  # uid
        namespace,
        str(meta.get("name") or ""),  # name
        str(pod_spec.get("nodeName") or ""),  # node_name
        str(pod_spec.get("schedulerName") or ""),  # scheduler_name
        priority,
        preempt_never,
        derived.requests,
        derived.non_zero_cpu,
        derived.non_zero_memory,
        labels,
        derived.node_selector,
        derived.required_terms,
        derived.preferred_terms,
        derived.host_ports,
        derived.tolerations,
        created or 0.0,  # created
        started,  # started
        bool(meta.get("deletionTimestamp")),  # deleting
        status.get("phase") in ("Succeeded", "Failed"),  # terminal
        target,  # preemption_target
        str(status.get("nominatedNodeName") or ""),  # nominated_node
        bool(pod_spec.get("schedulingGates")),  # gated
        pod,
        derived,  # spec
        resolve_terms(derived.pod_affinity, namespace) if derived.pod_affinity else (),  # affinity_terms
        resolve_terms(derived.pod_anti_affinity, namespace) if derived.pod_anti_affinity else (),  # anti_terms
        resolve_spread(derived.spread, labels) if derived.spread else (),  # spread
        (  # preferred_affinity
            resolve_weighted(derived.preferred_pod_affinity, namespace) if derived.preferred_pod_affinity else ()
        ),
        (  # preferred_anti
            resolve_weighted(derived.preferred_pod_anti_affinity, namespace)
            if derived.preferred_pod_anti_affinity
            else ()
        ),
        resolve_spread(derived.soft_spread, labels) if derived.soft_spread else (),  # soft_spread
        derived.any_spread,
    )


HostPort = tuple[str, str, int]
"""(host IP, protocol, port) a container claims on its node; IP `0.0.0.0` means every address."""
BIND_ALL = "0.0.0.0"


def host_ports(spec: Obj) -> tuple[HostPort, ...]:
    """The host ports of the regular containers and sidecars (`hostPort` > 0; IP and protocol defaulted)."""
    containers = _dicts(spec.get("containers")) + [
        c for c in _dicts(spec.get("initContainers")) if c.get("restartPolicy") == "Always"
    ]
    ports: list[HostPort] = []
    for container in containers:
        for port in _dicts(container.get("ports")):
            number = port.get("hostPort")
            if isinstance(number, int) and not isinstance(number, bool) and number > 0:
                ports.append((str(port.get("hostIP") or BIND_ALL), str(port.get("protocol") or "TCP"), number))
    return tuple(ports)


def count_ports(used: dict[HostPort, int], ports: Iterable[HostPort], sign: int = 1) -> None:
    """Add (or remove) claimed host ports to a per-node counter, in place."""
    for port in ports:
        left = used.get(port, 0) + sign
        if left > 0:
            used[port] = left
        else:
            used.pop(port, None)


def port_conflict(wanted: Iterable[HostPort], used: Mapping[HostPort, int]) -> bool:
    """Kubernetes' `HostPortInfo.CheckConflict`: `0.0.0.0` clashes with the port on any address; a specific
    address clashes with itself and with `0.0.0.0`."""
    for ip, protocol, port in wanted:
        if ip == BIND_ALL:
            if any(p == port and proto == protocol for (_, proto, p) in used):
                return True
        elif (ip, protocol, port) in used or (BIND_ALL, protocol, port) in used:
            return True
    return False


def _preferred_terms(spec: Obj) -> tuple[tuple[int, Obj], ...]:
    node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    terms = []
    for item in _dicts(node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution")):
        weight, term = item.get("weight"), item.get("preference")
        if isinstance(weight, int) and not isinstance(weight, bool) and weight > 0 and isinstance(term, dict):
            terms.append((weight, term))
    return tuple(terms)


def _time(value: Any) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None


@dataclass(slots=True)
class NodeMemo:
    """A node's answer for one pod spec at one node generation: the filter status (None: fits) and, once asked,
    the resource score. Both read only the `SpecInfo` on the pod's side and the node's own state, so Job pods of
    one template — which share one `SpecInfo` — reuse it on every node that has not changed since (one pod is
    placed per attempt: at parallelism 5,000, 45 of 46 nodes are unchanged)."""

    spec: SpecInfo
    generation: int
    status: FilterStatus | None
    score: int | None = None


@dataclass(slots=True)
class NodeInfo:
    """A node as the scheduler sees it: labels, effective taints, allocatable, and the pods placed on it.

    `node` is None while pods name a node the cache has not seen (yet); such nodes are never candidates.
    """

    name: str
    node: Obj | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    soft_taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    allocatable: Resources = field(default_factory=Resources)
    allowed_pods: int = 0
    requested: Resources = field(default_factory=Resources)
    non_zero_cpu: int = 0
    non_zero_memory: int = 0
    pods: dict[str, PodInfo] = field(default_factory=dict)
    used_ports: dict[HostPort, int] = field(default_factory=dict)
    anti_pods: dict[str, PodInfo] = field(default_factory=dict)
    """The pods here with required anti-affinity terms (`NodeInfo.PodsWithRequiredAntiAffinity`): every
    incoming pod is checked against them."""
    affinity_pods: dict[str, PodInfo] = field(default_factory=dict)
    """The pods here whose terms InterPodAffinity's score reads for every incoming pod: required pod affinity and
    preferred pod (anti-)affinity (`NodeInfo.PodsWithAffinity`, narrowed to the terms that can score)."""
    generation: int = 0
    """Bumped by every change to what filters and scores read (`set_node`, `add_pod`, `remove_pod`)."""
    memo: NodeMemo | None = None
    """This node's filter result and score for the last pod spec evaluated here, at `generation`."""

    def set_node(self, node: Obj | None) -> None:
        """Take labels, taints (with the condition taints the node lifecycle controller would add),
        `unschedulable` and allocatable from a Node object."""
        self.node = node
        self.generation += 1
        if node is None:
            return
        meta, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
        self.labels = meta.get("labels") or {}
        self.unschedulable = bool(spec.get("unschedulable"))
        self.taints = node_taints(node)
        self.soft_taints = tuple(
            Taint(str(t.get("key") or ""), str(t.get("value") or ""), PREFER_NO_SCHEDULE)
            for t in _dicts(spec.get("taints"))
            if t.get("effect") == PREFER_NO_SCHEDULE
        )
        self.allocatable, self.allowed_pods = resource_list(status.get("allocatable"))

    def add_pod(self, info: PodInfo) -> None:
        """Count a pod bound (or assumed) here."""
        self.pods[info.uid] = info
        self.generation += 1
        self.requested.add(info.requests)
        self.non_zero_cpu += info.non_zero_cpu
        self.non_zero_memory += info.non_zero_memory
        if info.host_ports:
            count_ports(self.used_ports, info.host_ports)
        if info.anti_terms:
            self.anti_pods[info.uid] = info
        if info.affinity_terms or info.preferred_affinity or info.preferred_anti:
            self.affinity_pods[info.uid] = info

    def remove_pod(self, uid: str) -> PodInfo | None:
        """Stop counting a pod; returns what was counted."""
        info = self.pods.pop(uid, None)
        if info is not None:
            self.generation += 1
            self.requested.add(info.requests, -1)
            self.non_zero_cpu -= info.non_zero_cpu
            self.non_zero_memory -= info.non_zero_memory
            if info.host_ports:
                count_ports(self.used_ports, info.host_ports, -1)
            self.anti_pods.pop(uid, None)
            self.affinity_pods.pop(uid, None)
        return info

    def signature(self) -> tuple[Any, ...]:
        """Everything filters read from the Node object: a change here may make pending pods schedulable."""
        alloc = self.allocatable
        return (
            self.node is not None,
            tuple(sorted(self.labels.items())),
            self.taints,
            self.soft_taints,
            self.unschedulable,
            (alloc.milli_cpu, alloc.memory, alloc.ephemeral_storage, tuple(sorted(alloc.scalars.items()))),
            self.allowed_pods,
        )


def node_taints(node: Obj) -> tuple[Taint, ...]:
    """The node's NoSchedule/NoExecute taints, plus those its conditions imply when the node lifecycle
    controller has not added them yet: Ready False or missing → not-ready, Unknown → unreachable, pressure →
    the pressure taint. So a NotReady node is excluded exactly the way Kubernetes excludes it (tolerably)."""
    taints = [
        Taint(str(t.get("key") or ""), str(t.get("value") or ""), str(t.get("effect") or ""))
        for t in _dicts((node.get("spec") or {}).get("taints"))
        if t.get("effect") in (NO_SCHEDULE, NO_EXECUTE)
    ]
    present = {t.key for t in taints}
    ready = None
    implied: list[str] = []
    for condition in _dicts((node.get("status") or {}).get("conditions")):
        kind, value = str(condition.get("type")), str(condition.get("status"))
        if kind == "Ready":
            ready = value
        elif (kind, value) in CONDITION_TAINTS:
            implied.append(CONDITION_TAINTS[(kind, value)])
    if ready != "True":
        implied.append(TAINT_UNREACHABLE if ready == "Unknown" else TAINT_NOT_READY)
    taints.extend(Taint(key, "", NO_SCHEDULE) for key in implied if key not in present)
    return tuple(taints)


# ------------------------------------------------------------------------------------------------ filters


@dataclass(frozen=True, slots=True)
class FilterStatus:
    """Why a node was rejected; `resolvable` = preemption might help (only NodeResourcesFit failures)."""

    reasons: tuple[str, ...]
    resolvable: bool


def tolerates_all(tolerations: Sequence[Toleration], taints: Iterable[Taint]) -> bool:
    """Every NoSchedule/NoExecute taint is tolerated by some toleration."""
    return all(any(t.tolerates(taint) for t in tolerations) for taint in taints)


def first_untolerated(tolerations: Sequence[Toleration], taints: Iterable[Taint]) -> Taint | None:
    """The first taint (in the node's order) no toleration covers: `FindMatchingUntoleratedTaint`
    (component-helpers/scheduling/corev1/helpers.go)."""
    for taint in taints:
        if not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None


_UNSCHEDULABLE_TAINT = Taint(TAINT_UNSCHEDULABLE, "", NO_SCHEDULE)


def matches_node_affinity(pod: PodInfo, node: NodeInfo) -> bool:
    """`nodeSelector` labels all present, and (if any) one of the required node selector terms matches."""
    labels = node.labels
    for key, value in pod.node_selector.items():
        if labels.get(key) != value:
            return False
    if pod.required_terms is None:
        return True
    return any(match_term(term, labels, node.name) for term in pod.required_terms)


def insufficient(
    request: Resources, allocatable: Resources, allowed_pods: int, requested: Resources, pod_count: int
) -> list[str]:
    """NodeResourcesFit's reasons: pod count first, then cpu, memory, ephemeral-storage, scalars by name;
    a dimension the pod does not request never fails."""
    reasons: list[str] = []
    if pod_count + 1 > allowed_pods:
        reasons.append(REASON_TOO_MANY_PODS)
    if request.milli_cpu > 0 and request.milli_cpu > allocatable.milli_cpu - requested.milli_cpu:
        reasons.append("Insufficient cpu")
    if request.memory > 0 and request.memory > allocatable.memory - requested.memory:
        reasons.append("Insufficient memory")
    if request.ephemeral_storage > 0 and (
        request.ephemeral_storage > allocatable.ephemeral_storage - requested.ephemeral_storage
    ):
        reasons.append("Insufficient ephemeral-storage")
    for name in sorted(request.scalars):
        want = request.scalars[name]
        if want > 0 and want > allocatable.scalars.get(name, 0) - requested.scalars.get(name, 0):
            reasons.append(f"Insufficient {name}")
    return reasons


def static_filter(pod: PodInfo, node: NodeInfo) -> FilterStatus | None:
    """The filters that removing pods cannot change (NodeUnschedulable, TaintToleration, NodeAffinity)."""
    if node.unschedulable and not tolerates_all(pod.tolerations, (_UNSCHEDULABLE_TAINT,)):
        return FilterStatus((REASON_UNSCHEDULABLE,), False)
    if node.taints:
        taint = first_untolerated(pod.tolerations, node.taints)
        if taint is not None:
            return FilterStatus((REASON_TAINT_FORMAT.format(key=taint.key, value=taint.value),), False)
    if not matches_node_affinity(pod, node):
        return FilterStatus((REASON_AFFINITY,), False)
    return None


class ClusterFilters(Protocol):
    """The filters that read pods on other nodes too (PodTopologySpread, InterPodAffinity), with what their
    PreFilter computed for one pod in one scheduling cycle (`kjobs.controllers.interpod.CycleState`)."""

    def filter(self, pod: PodInfo, node: NodeInfo, nominated: Sequence[PodInfo] = ()) -> FilterStatus | None:
        """The first of these filters to reject `node`, with `nominated` pods counted there."""
        ...


def filter_node(
    pod: PodInfo, node: NodeInfo, nominated: Sequence[PodInfo] = (), cycle: ClusterFilters | None = None
) -> FilterStatus | None:
    """None when `pod` fits `node`; else the first failing filter's reasons. `nominated` are pods of at least
    the pod's priority waiting for this node (preemptors), counted as if already there. `cycle` runs the filters
    that read the whole cluster (PodTopologySpread, InterPodAffinity: last in Kubernetes' order); None when the
    pod's PreFilter skipped them (no pod in the cluster has terms that concern it).

    Without nominated pods the node-local answer depends on the pod's `SpecInfo` and the node's state only: it is
    kept on the node (`NodeMemo`) and reused while both are the same."""
    spec = pod.spec
    if spec is None or nominated:
        status = _filter_node(pod, node, nominated)
    else:
        memo = node.memo
        if memo is not None and memo.spec is spec and memo.generation == node.generation:
            status = memo.status
        else:
            status = _filter_node(pod, node, ())
            node.memo = NodeMemo(spec, node.generation, status)
    if status is not None or cycle is None:
        return status
    return cycle.filter(pod, node, nominated)


def _filter_node(pod: PodInfo, node: NodeInfo, nominated: Sequence[PodInfo]) -> FilterStatus | None:
    status = static_filter(pod, node)
    if status is not None:
        return status
    if pod.host_ports:
        used = node.used_ports
        if any(other.host_ports for other in nominated):
            used = dict(used)
            for other in nominated:
                count_ports(used, other.host_ports)
        if port_conflict(pod.host_ports, used):
            return FilterStatus((REASON_PORTS,), True)
    requested, count = node.requested, len(node.pods)
    if nominated:
        requested = requested.copy()
        for other in nominated:
            requested.add(other.requests)
        count += len(nominated)
    reasons = insufficient(pod.requests, node.allocatable, node.allowed_pods, requested, count)
    return FilterStatus(tuple(reasons), True) if reasons else None


# ------------------------------------------------------------------------------------------------ scoring


def least_allocated_score(pod: PodInfo, node: NodeInfo) -> int:
    """LeastAllocated: the mean over cpu and memory of the free share (0-100) after placing the pod."""
    return _resource_scores(pod, (node,), 1, 0)[0]


def balanced_allocation_score(pod: PodInfo, node: NodeInfo) -> int:
    """BalancedAllocation: 100 × (1 − |cpu fraction − memory fraction| / 2), on actual requests after placing
    the pod (fractions capped at 1; a resource the node does not have is left out)."""
    return _resource_scores(pod, (node,), 0, 1)[0]


def untolerated_soft_taints(pod: PodInfo, node: NodeInfo) -> int:
    """TaintToleration's raw score: PreferNoSchedule taints no toleration (with no effect or that effect) covers."""
    if not node.soft_taints:
        return 0
    usable = [t for t in pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE)]
    return sum(1 for taint in node.soft_taints if not any(t.tolerates(taint) for t in usable))


def preferred_affinity(pod: PodInfo, node: NodeInfo) -> int:
    """NodeAffinity's raw score: the weights of the preferred terms the node matches."""
    return sum(weight for weight, term in pod.preferred_terms if match_term(term, node.labels, node.name))


def normalize(scores: list[int], *, reverse: bool = False) -> list[int]:
    """Kubernetes' `DefaultNormalizeScore`: scale to 0-100 by the maximum (reversed: 100 minus that)."""
    top = max(scores, default=0)
    if top == 0:
        return [MAX_NODE_SCORE] * len(scores) if reverse else scores
    scaled = [MAX_NODE_SCORE * s // top for s in scores]
    return [MAX_NODE_SCORE - s for s in scaled] if reverse else scaled


def _resource_scores(pod: PodInfo, feasible: Sequence[NodeInfo], fit_weight: int, balance_weight: int) -> list[int]:
    """`fit_weight × least_allocated_score + balance_weight × balanced_allocation_score` per node, in one pass with
    the pod's side read once (it runs for every node, for every pod scheduled). LeastAllocated's free share of a
    resource is 0 when it is over capacity; BalancedAllocation is 100 unless the node has both resources."""
    pod_cpu, pod_memory = pod.non_zero_cpu, pod.non_zero_memory
    req_cpu, req_memory = pod.requests.milli_cpu, pod.requests.memory
    totals = []
    for n in feasible:
        alloc = n.allocatable
        cap_cpu, cap_memory = alloc.milli_cpu, alloc.memory
        used_cpu, used_memory = n.non_zero_cpu + pod_cpu, n.non_zero_memory + pod_memory
        cpu = 0 if cap_cpu <= 0 or used_cpu > cap_cpu else (cap_cpu - used_cpu) * MAX_NODE_SCORE // cap_cpu
        memory = (
            0
            if cap_memory <= 0 or used_memory > cap_memory
            else (cap_memory - used_memory) * MAX_NODE_SCORE // cap_memory
        )
        if cap_cpu > 0 and cap_memory > 0:
            requested = n.requested
            cpu_fraction = min((requested.milli_cpu + req_cpu) / cap_cpu, 1.0)
            memory_fraction = min((requested.memory + req_memory) / cap_memory, 1.0)
            balance = int((1 - abs(cpu_fraction - memory_fraction) / 2) * MAX_NODE_SCORE)
        else:
            balance = MAX_NODE_SCORE
        totals.append(fit_weight * ((cpu + memory) // 2) + balance_weight * balance)
    return totals


_FIT_WEIGHT, _BALANCE_WEIGHT = SCORE_WEIGHTS["NodeResourcesFit"], SCORE_WEIGHTS["NodeResourcesBalancedAllocation"]


def _weighted_resource_scores(pod: PodInfo, feasible: Sequence[NodeInfo]) -> list[int]:
    """`_resource_scores` with the profile's weights, each node's kept in its memo for the pod's `SpecInfo` (the
    score reads the same inputs as the filter: `NodeMemo`); only nodes changed since are scored again."""
    spec = pod.spec
    if spec is None:
        return _resource_scores(pod, feasible, _FIT_WEIGHT, _BALANCE_WEIGHT)
    totals: list[int] = []
    for node in feasible:
        memo = node.memo
        if memo is None or memo.spec is not spec or memo.generation != node.generation:
            # not filtered for this spec at this generation (a caller's own feasible list): no status to keep
            totals.append(_resource_scores(pod, (node,), _FIT_WEIGHT, _BALANCE_WEIGHT)[0])
            continue
        score = memo.score
        if score is None:
            score = memo.score = _resource_scores(pod, (node,), _FIT_WEIGHT, _BALANCE_WEIGHT)[0]
        totals.append(score)
    return totals


ClusterScores = Callable[[Sequence[NodeInfo]], "list[int] | None"]
"""The weighted scores of the plugins that read the whole cluster (InterPodAffinity, PodTopologySpread) for the
feasible nodes, or None when both skip (`kjobs.controllers.interpod.cluster_scorer`)."""


def _any_soft_taints(nodes: Sequence[NodeInfo]) -> bool:
    """`any(n.soft_taints for n in nodes)` as a loop: a generator costs a frame and a resumption per node, and
    every pod with more than one feasible node is scored (docs/sched54.md)."""
    for node in nodes:  # noqa: SIM110
        if node.soft_taints:
            return True
    return False


def node_scores(pod: PodInfo, feasible: Sequence[NodeInfo], cluster: ClusterScores | None = None) -> list[int]:
    """The default profile's weighted sum per feasible node (same order); `cluster` adds InterPodAffinity and
    PodTopologySpread (None: both skipped, as for a pod without such terms in a cluster without them)."""
    w = SCORE_WEIGHTS
    totals = _weighted_resource_scores(pod, feasible)
    if _any_soft_taints(feasible):
        taints = normalize([untolerated_soft_taints(pod, n) for n in feasible], reverse=True)
        totals = [t + w["TaintToleration"] * x for t, x in zip(totals, taints, strict=True)]
    if pod.preferred_terms:
        affinity = normalize([preferred_affinity(pod, n) for n in feasible])
        totals = [t + w["NodeAffinity"] * x for t, x in zip(totals, affinity, strict=True)]
    if cluster is not None:
        extra = cluster(feasible)
        if extra is not None:
            totals = [t + x for t, x in zip(totals, extra, strict=True)]
    return totals


def select_host(pod: PodInfo, feasible: Sequence[NodeInfo], cluster: ClusterScores | None = None) -> str:
    """The feasible node with the highest score; ties go to the name that sorts first (Kubernetes picks among
    ties at random). A single feasible node is taken without scoring, as Kubernetes does."""
    if len(feasible) == 1:
        return feasible[0].name
    best_name, best_score = "", -1
    for node, score in zip(feasible, node_scores(pod, feasible, cluster), strict=True):
        if score > best_score or (score == best_score and node.name < best_name):
            best_name, best_score = node.name, score
    return best_name


# ------------------------------------------------------------------------------------------------ messages


def fit_error(
    num_nodes: int,
    statuses: Mapping[str, Sequence[str]],
    *,
    absent_reason: str = "",
    post_filter: str = "",
) -> str:
    """Kubernetes' `FitError.Error()`: `0/N nodes are available: <count reason, ...>. <post-filter message>`.

    The histogram counts each reason once per node; nodes without a status count `absent_reason`; entries are
    sorted as strings (so `10 x` sorts before `2 y`, as Go's `sort.Strings` does).
    """
    counts: dict[str, int] = {}
    for reasons in statuses.values():
        for reason in reasons:
            counts[reason] = counts.get(reason, 0) + 1
    absent = num_nodes - len(statuses)
    if absent > 0 and absent_reason:
        counts[absent_reason] = counts.get(absent_reason, 0) + absent
    message = f"0/{num_nodes} nodes are available:"
    histogram = sorted(f"{n} {reason}" for reason, n in counts.items())
    if histogram:
        message += f" {', '.join(histogram)}."
    if post_filter:
        message += f" {post_filter}"
    return message


def truncate_message(message: str) -> str:
    """Event notes are cut at 1024 bytes with ` ...` (Kubernetes' `truncateMessage`)."""
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    return message[: NOTE_LENGTH_LIMIT - 4] + " ..."


_POD_INFO_FIELDS = tuple(f.name for f in dataclasses.fields(PodInfo))
_pod_info_values = operator.attrgetter(*_POD_INFO_FIELDS)


def with_field(info: PodInfo, name: str, value: Any) -> PodInfo:
    """`dataclasses.replace(info, name=value)` for one field: the scheduler assumes every pod it places on a
    node, and `replace` looks up and checks each of PodInfo's 31 fields by name each time (4 µs against 1)."""
    values = list(_pod_info_values(info))
    values[_POD_INFO_FIELDS.index(name)] = value
    return PodInfo(*values)


def with_node_name(info: PodInfo, node_name: str) -> PodInfo:
    """`with_field(info, "node_name", node_name)`, written out by position: the scheduler makes one for every pod
    it assumes on a node, and this costs about half of `with_field`'s attribute tuple, list and index
    (docs/sched54.md)."""
    return PodInfo(
        info.uid,
        info.namespace,
        info.name,
        node_name,
        info.scheduler_name,
        info.priority,
        info.preempt_never,
        info.requests,
        info.non_zero_cpu,
        info.non_zero_memory,
        info.labels,
        info.node_selector,
        info.required_terms,
        info.preferred_terms,
        info.host_ports,
        info.tolerations,
        info.created,
        info.started,
        info.deleting,
        info.terminal,
        info.preemption_target,
        info.nominated_node,
        info.gated,
        info.pod,
        info.spec,
        info.affinity_terms,
        info.anti_terms,
        info.spread,
        info.preferred_affinity,
        info.preferred_anti,
        info.soft_spread,
        info.any_spread,
    )
