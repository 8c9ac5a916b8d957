"""The endpoints controller and the EndpointSlice controller, as kube-controller-manager runs them (`kjobs up`).

For every Service with a selector they write what its selected pods offer: the endpoints controller
(pkg/controller/endpoint/endpoints_controller.go) one `Endpoints` of the Service's name, the EndpointSlice
controller (pkg/controller/endpointslice/endpointslice_controller.go and the reconciler of
staging/src/k8s.io/endpointslice) `EndpointSlice`s of at most 100 endpoints each, labelled
`kubernetes.io/service-name` and `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io` and
owned by the Service. Both are informers → work queue keyed `namespace/name` → sync → write, with batch period 0
(`EndpointUpdatesBatchPeriod`, `EndpointSliceUpdatesBatchPeriod`): a Service is queued when it changes and when a
pod its selector matches (before or after the change) changes.

Shared rules (staging/src/k8s.io/endpointslice/util: `ShouldPodBeInEndpoints`, `ShouldSetHostname`,
`podToEndpoint`; pkg/api/v1/pod `FindPort`): a pod with no IP or in a terminal phase is left out; a terminating
pod is left out of Endpoints unless `publishNotReadyAddresses`, and is in a slice with `terminating: true`,
`ready: false`; an address is ready when the pod is Ready (or the Service publishes not-ready addresses); it
carries the pod's `hostname` when the pod names the Service as its `subdomain`; a named `targetPort` is looked
up among the pod's container ports (a pod without it is left out of that port).

`endpoints.kubernetes.io/last-change-trigger-time` is upstream's `TriggerTimeTracker`'s: the earliest trigger time
(a pod's Ready transition, the Service's creation) among those changed since the Service's last sync.

Simplified, and why: subsets and ports are sorted
by value (upstream orders them by hash), so an Endpoints over 1,000 addresses (`maxCapacity`) keeps the first
ones in that order, cut as `truncateEndpoints` cuts them and annotated `endpoints.kubernetes.io/over-capacity:
truncated` (the annotation goes when it is back within); the topology zone of a slice's endpoint (nodes carry
no zone here) is left out; slices are filled in order rather than by upstream's placement
heuristics, still at most 100 endpoints each, and a slice whose content did not change is not written. A
deleted Service's slices are deleted by this controller: upstream leaves them to the garbage collector (their
owner reference), which in kjobs watches only the kinds an embedded cluster has, so `kjobs run` pays for no
EndpointSlice informer.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from kjobs.api.errors import ApiError
from kjobs.api.timeutil import format_time, parse_time
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.informer import InformerFactory
from kjobs.client.resources import ENDPOINT_SLICES, ENDPOINTS, PODS, SERVICES
from kjobs.client.workqueue import WorkerPool, WorkQueue
from kjobs.clock import Clock
from kjobs.job.pods import is_ready

log = logging.getLogger(__name__)

ENDPOINTS_NAME = "endpoint-controller"
SLICES_NAME = "endpointslice-controller"
"""kube-controller-manager's names (cmd/kube-controller-manager/names)."""

TRIGGER_TIME_ANNOTATION = "endpoints.kubernetes.io/last-change-trigger-time"
OVER_CAPACITY_ANNOTATION = "endpoints.kubernetes.io/over-capacity"
TRUNCATED = "truncated"
MAX_CAPACITY = 1000
"""The most addresses the endpoints controller stores in one Endpoints (`maxCapacity`)."""
HEADLESS_LABEL = "service.kubernetes.io/headless"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
MANAGED_BY = "endpointslice-controller.k8s.io"
MAX_ENDPOINTS_PER_SLICE = 100
"""`--max-endpoints-per-slice`'s default."""


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def selects(service: Obj, pod: Obj) -> bool:
    """Whether `service`'s selector (a non-empty map) matches `pod`'s labels in the same namespace."""
    selector = (service.get("spec") or {}).get("selector") or {}
    if not selector or _meta(service).get("namespace") != _meta(pod).get("namespace"):
        return False
    labels = _meta(pod).get("labels") or {}
    return all(labels.get(k) == v for k, v in selector.items())


def should_be_in_endpoints(pod: Obj, include_terminating: bool) -> bool:
    """`ShouldPodBeInEndpoints`."""
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed") or not status.get("podIP"):
        return False
    return include_terminating or not _meta(pod).get("deletionTimestamp")


def should_set_hostname(pod: Obj, service: Obj) -> bool:
    """`ShouldSetHostname`: the pod names a hostname and the Service (same namespace) as its subdomain."""
    spec = pod.get("spec") or {}
    return (
        bool(spec.get("hostname"))
        and spec.get("subdomain") == _meta(service).get("name")
        and _meta(service).get("namespace") == _meta(pod).get("namespace")
    )


def find_port(pod: Obj, service_port: Obj) -> int | None:
    """`FindPort`: a numeric targetPort as it is (the port when unset), a named one from the containers' ports
    with the Service port's protocol; None when no container has it."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    protocol = service_port.get("protocol") or "TCP"
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                return int(port.get("containerPort") or 0)
    return None


def _target_ref(pod: Obj) -> Obj:
    meta = _meta(pod)
    return {
        "kind": "Pod",
        "namespace": meta.get("namespace", ""),
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
    }


def _stamp(value: Any) -> float | None:
    return parse_time(value) if isinstance(value, str) and value else None


def _after(stamp: float, last: float | None) -> bool:
    """Go's `t.After(last)`, None being the zero time (before every time; a zero `t` is after nothing)."""
    return last is None or stamp > last


@dataclass(eq=False, repr=False)
class TriggerTimeTracker:
    """pkg/controller/util/endpoint/trigger_time_tracker.go: per Service, the trigger time of each pod (its Ready
    condition's lastTransitionTime) and of the Service (its creation) seen at the last sync; a sync's
    `endpoints.kubernetes.io/last-change-trigger-time` is the earliest among those that changed since (None:
    nothing changed, the annotation is not written)."""

    states: dict[str, tuple[dict[str, float | None], float | None]] = field(default_factory=dict)

    def compute(self, key: str, service: Obj, pods: list[Obj]) -> str | None:
        """`ComputeEndpointLastChangeTriggerTime` over the pods the Service selects."""
        known, last_service = self.states.get(key, ({}, None))
        changed: list[float] = []
        seen: dict[str, float | None] = {}
        for pod in pods:
            name = str(_meta(pod).get("name") or "")
            ready = next(
                (c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), None
            )
            stamp = seen[name] = _stamp(ready.get("lastTransitionTime")) if ready is not None else None
            if stamp is not None and _after(stamp, known.get(name)):
                changed.append(stamp)
        service_stamp = _stamp(_meta(service).get("creationTimestamp"))
        if service_stamp is not None and _after(service_stamp, last_service):
            changed.append(service_stamp)
        self.states[key] = (seen, service_stamp)
        return format_time(min(changed)) if changed else None

    def forget(self, key: str) -> None:
        """`DeleteService`."""
        self.states.pop(key, None)


def _service_labels(service: Obj) -> dict[str, str]:
    """The Service's labels, with the headless label set or cleared (`v1.IsHeadlessService`)."""
    labels = dict(_meta(service).get("labels") or {})
    if (service.get("spec") or {}).get("clusterIP") == "None":
        labels[HEADLESS_LABEL] = ""
    else:
        labels.pop(HEADLESS_LABEL, None)
    return labels


def endpoint_ports(service: Obj, pod: Obj, *, discovery: bool) -> list[Obj]:
    """`GetEndpointPorts` / the endpoints controller's `podToEndpointAddressForService` ports: each Service port
    the pod has, by the Service port's name and protocol."""
    ports: list[Obj] = []
    for sp in (service.get("spec") or {}).get("ports") or []:
        number = find_port(pod, sp)
        if number is None:
            continue
        port: Obj = {"name": sp.get("name") or "", "port": number, "protocol": sp.get("protocol") or "TCP"}
        if sp.get("appProtocol") is not None:
            port["appProtocol"] = sp["appProtocol"]
        if not discovery and not port["name"]:
            del port["name"]  # core/v1 EndpointPort's name is omitempty
        ports.append(port)
    return ports


def desired_subsets(service: Obj, pods: list[Obj]) -> list[Obj]:
    """The endpoints controller's subsets (`addEndpointSubset`, then `RepackSubsets`): addresses grouped by the
    ports they share, ready and not ready apart, sorted."""
    spec = service.get("spec") or {}
    publish = bool(spec.get("publishNotReadyAddresses"))
    headless_without_ports = not spec.get("ports") and spec.get("clusterIP") == "None"
    by_port: dict[tuple[Any, ...], dict[tuple[str, str], tuple[Obj, bool]]] = {}
    for pod in pods:
        if not should_be_in_endpoints(pod, publish):
            continue
        address: Obj = {"ip": pod["status"]["podIP"]}
        if should_set_hostname(pod, service):
            address["hostname"] = pod["spec"]["hostname"]
        if (pod.get("spec") or {}).get("nodeName"):
            address["nodeName"] = pod["spec"]["nodeName"]
        address["targetRef"] = _target_ref(pod)
        ready = publish or is_ready(pod)
        key = (address["ip"], address["targetRef"]["uid"])
        ports = (
            [()]
            if headless_without_ports
            else [tuple(sorted(p.items())) for p in endpoint_ports(service, pod, discovery=False)]
        )
        for port in ports:
            by_port.setdefault(port, {})[key] = (address, ready)
    groups: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    members: dict[tuple[Any, ...], dict[tuple[str, str], tuple[Obj, bool]]] = {}
    for port, addresses in by_port.items():
        group = tuple(sorted((k, ready) for k, (_, ready) in addresses.items()))
        groups.setdefault(group, []).append(port)
        members[group] = addresses
    subsets: list[Obj] = []
    for group, ports in groups.items():
        subset: Obj = {}
        entries = sorted(members[group].items())
        ready_addresses = [a for _, (a, ready) in entries if ready]
        not_ready = [a for _, (a, ready) in entries if not ready]
        if ready_addresses:
            subset["addresses"] = ready_addresses
        if not_ready:
            subset["notReadyAddresses"] = not_ready
        port_list = [dict(p) for p in sorted(ports) if p]
        if port_list:
            subset["ports"] = port_list
        subsets.append(subset)
    subsets.sort(key=repr)
    return subsets


def truncate_subsets(subsets: list[Obj]) -> bool:
    """Cut subsets holding more than `MAX_CAPACITY` addresses down to it, in place; True if they were
    (`truncateEndpoints`, pkg/controller/endpoint/endpoints_controller.go). Ready addresses go first: when the
    ready ones alone fit, only not-ready ones are cut; otherwise every not-ready one goes and the ready ones are
    cut. Each subset keeps a share proportional to its count, rounded up, the last ones taking what is left; the
    subsets are the sorted ones of `desired_subsets`, so which addresses stay follows that order."""
    ready = sum(len(s.get("addresses") or []) for s in subsets)
    not_ready = sum(len(s.get("notReadyAddresses") or []) for s in subsets)
    if ready + not_ready <= MAX_CAPACITY:
        return False
    cut_ready = ready > MAX_CAPACITY
    room, total = (MAX_CAPACITY, ready) if cut_ready else (MAX_CAPACITY - ready, not_ready)
    left = room
    field = "addresses" if cut_ready else "notReadyAddresses"
    for subset in subsets:
        addresses = subset.get(field) or []
        share = min(-(-len(addresses) * room // total), left)  # math.Ceil of the proportion, in integers
        kept = addresses[:share]
        if kept:
            subset[field] = kept
        else:
            subset.pop(field, None)
        if cut_ready:
            subset.pop("notReadyAddresses", None)
        left -= len(kept)
    # A subset left with no address at all (only not-ready ones, all cut) would fail validation ("must specify
    # `addresses` or `notReadyAddresses`"), which upstream's in-place cut can run into: it is dropped here.
    subsets[:] = [s for s in subsets if s.get("addresses") or s.get("notReadyAddresses")]
    return True


def desired_slice_endpoints(service: Obj, pods: list[Obj]) -> dict[tuple[Any, ...], list[Obj]]:
    """The EndpointSlice reconciler's endpoints (`podToEndpoint`), grouped by their ports."""
    publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    groups: dict[tuple[Any, ...], list[Obj]] = {}
    for pod in sorted(pods, key=lambda p: _meta(p).get("name") or ""):
        if not should_be_in_endpoints(pod, True):
            continue
        serving = is_ready(pod)
        terminating = bool(_meta(pod).get("deletionTimestamp"))
        ready = publish or serving
        if terminating and not publish:
            ready = False
        endpoint: Obj = {
            "addresses": [pod["status"]["podIP"]],
            "conditions": {"ready": ready, "serving": serving, "terminating": terminating},
        }
        if should_set_hostname(pod, service):
            endpoint["hostname"] = pod["spec"]["hostname"]
        endpoint["targetRef"] = _target_ref(pod)
        if (pod.get("spec") or {}).get("nodeName"):
            endpoint["nodeName"] = pod["spec"]["nodeName"]
        ports = tuple(tuple(sorted(p.items())) for p in endpoint_ports(service, pod, discovery=True))
        groups.setdefault(ports, []).append(endpoint)
    return groups


@dataclass(eq=False, repr=False)
class _ServiceController:
    """What both controllers share: informers on Services, pods and their own kind; a queue of Service keys."""

    client: Client
    clock: Clock
    shared: InformerFactory | None = None
    workers: int = 1
    queue: WorkQueue[str] = field(init=False)

    OWN: Any = None
    QUEUE_NAME = ""
    tracker: TriggerTimeTracker = field(default_factory=TriggerTimeTracker)

    def __post_init__(self) -> None:
        factory = self.shared or InformerFactory(self.client, clock=self.clock)
        self.services = factory.informer(SERVICES)
        self.pods = factory.informer(PODS)
        self.own = factory.informer(self.OWN)
        self.queue = WorkQueue(clock=self.clock)
        self._workers = WorkerPool(self.queue, self.sync, name=self.QUEUE_NAME, workers=self.workers)
        self._selectors: dict[str, dict[str, dict[str, str]]] = {}
        """namespace → Service name → its non-empty `spec.selector`: what a pod event is matched against (a
        namespace whose Services select nothing, as a fresh cluster's `kubernetes`, costs a pod event one lookup)."""

    async def start(self) -> None:
        """Start the informers, then the workers once the caches have synced."""
        self.services.add_handler(self._on_service)
        self.pods.add_handler(self._on_pod)
        self.own.add_handler(self._on_own)
        for informer in (self.services, self.pods, self.own):
            informer.start()
        for informer in (self.services, self.pods, self.own):
            await informer.synced.wait()
        self._workers.start()

    async def stop(self) -> None:
        """Stop the workers and the informers."""
        await self._workers.stop()
        for informer in (self.own, self.pods, self.services):
            await informer.stop()

    def _on_service(self, old: Obj | None, new: Obj | None) -> None:
        obj = new if new is not None else old
        if obj is None:
            return
        namespace, name = _meta(obj).get("namespace", ""), _meta(obj).get("name", "")
        selector = ((new or {}).get("spec") or {}).get("selector") or {}
        in_namespace = self._selectors.setdefault(namespace, {})
        if selector:
            in_namespace[name] = dict(selector)
        else:
            in_namespace.pop(name, None)
        self.queue.add(_key(namespace, name))

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        """`addPod` / `updatePod` / `deletePod`: every Service selecting the pod before or after the change."""
        namespace = _meta(new if new is not None else old or {}).get("namespace", "")
        selectors = self._selectors.get(namespace)
        if not selectors:
            return
        new_labels = _meta(new).get("labels") or {} if new is not None else None
        old_labels = _meta(old).get("labels") or {} if old is not None else None
        for name, selector in selectors.items():
            if any(
                labels is not None and all(labels.get(k) == v for k, v in selector.items())
                for labels in (new_labels, old_labels)
            ):
                self.queue.add(_key(namespace, name))

    def _on_own(self, old: Obj | None, new: Obj | None) -> None:
        """`onEndpointsUpdate` / `onEndpointsDelete`: an Endpoints changed or deleted by someone else is put back by
        the next sync of its Service (the controller's own writes sync to no change)."""
        if old is not None:
            obj = new if new is not None else old
            self.queue.add(_key(_meta(obj).get("namespace", ""), self._service_of(obj)))

    def _service_of(self, obj: Obj) -> str:
        return str(_meta(obj).get("name") or "")

    def _selected(self, service: Obj) -> list[Obj]:
        return [p for p in self.pods.list(_meta(service).get("namespace", "")) if selects(service, p)]

    async def sync(self, key: str) -> None:
        raise NotImplementedError


@dataclass(eq=False, repr=False)
class EndpointsController(_ServiceController):
    """Keeps one `Endpoints` per Service with a selector (`syncService`)."""

    OWN: Any = ENDPOINTS
    QUEUE_NAME = "endpoint"

    async def sync(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        service = self.services.get(namespace, name)
        if service is None:
            self.tracker.forget(key)
            try:  # the Service is gone: so is its Endpoints (`syncService`'s delete)
                await self.client.delete(ENDPOINTS, namespace, name)
            except ApiError as exc:
                if exc.code != 404:
                    raise
            return
        if not (service.get("spec") or {}).get("selector"):
            return  # a Service without a selector has Endpoints its user writes
        pods = self._selected(service)
        trigger = self.tracker.compute(key, service, pods)
        subsets = desired_subsets(service, pods)
        truncated = truncate_subsets(subsets)
        labels = _service_labels(service)
        current = self.own.get(namespace, name)
        if (
            current is not None
            and (current.get("subsets") or []) == subsets
            and (_meta(current).get("labels") or {}) == labels
            and (_meta(current).get("annotations") or {}).get(OVER_CAPACITY_ANNOTATION)
            == (TRUNCATED if truncated else None)
        ):
            return  # (upstream compares the untruncated subsets, so rewrites an over-capacity Endpoints unchanged)
        annotations = dict(_meta(current).get("annotations") or {}) if current is not None else {}
        if trigger:
            annotations[TRIGGER_TIME_ANNOTATION] = trigger
        else:
            annotations.pop(TRIGGER_TIME_ANNOTATION, None)
        if truncated:  # `syncService`: over `maxCapacity` addresses, marked as truncated; within, unmarked
            annotations[OVER_CAPACITY_ANNOTATION] = TRUNCATED
        else:
            annotations.pop(OVER_CAPACITY_ANNOTATION, None)
        body: Obj = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": name, "namespace": namespace, "labels": labels, "annotations": annotations},
        }
        if subsets:  # `subsets` is omitempty: an Endpoints without addresses has none
            body["subsets"] = subsets
        if current is None:
            try:
                await self.client.create(ENDPOINTS, namespace, body, handover=True)
            except ApiError as exc:
                if exc.reason != "AlreadyExists" and not exc.has_cause("NamespaceTerminating"):
                    raise
            return
        body["metadata"]["resourceVersion"] = _meta(current).get("resourceVersion")
        await self.client.update(ENDPOINTS, namespace, body, handover=True)


@dataclass(eq=False, repr=False)
class EndpointSliceController(_ServiceController):
    """Keeps the EndpointSlices of each Service with a selector (`syncService` and the reconciler)."""

    OWN: Any = ENDPOINT_SLICES
    QUEUE_NAME = "endpoint_slice"

    def _service_of(self, obj: Obj) -> str:
        return str((_meta(obj).get("labels") or {}).get(SERVICE_NAME_LABEL) or "")

    def _on_own(self, old: Obj | None, new: Obj | None) -> None:
        obj = new if new is not None else old
        if obj is not None and (_meta(obj).get("labels") or {}).get(MANAGED_BY_LABEL) == MANAGED_BY:
            self.queue.add(_key(_meta(obj).get("namespace", ""), self._service_of(obj)))

    def _owned(self, namespace: str, name: str) -> list[Obj]:
        return sorted(
            (
                s
                for s in self.own.list(namespace)
                if (_meta(s).get("labels") or {}).get(SERVICE_NAME_LABEL) == name
                and (_meta(s).get("labels") or {}).get(MANAGED_BY_LABEL) == MANAGED_BY
            ),
            key=lambda s: str(_meta(s).get("name")),
        )

    async def sync(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        service = self.services.get(namespace, name)
        if service is None:
            self.tracker.forget(key)
            for eps in self._owned(namespace, name):  # see the module's note on the garbage collector
                await self._delete(namespace, eps)
            return
        if not (service.get("spec") or {}).get("selector"):
            return  # a Service without a selector has the slices its user writes
        pods = self._selected(service)
        trigger = self.tracker.compute(key, service, pods)
        groups = desired_slice_endpoints(service, pods)
        if not groups:
            groups = {(): []}  # `placeholderSliceCompare`: a Service always has a slice, even an empty one
        labels = {**_service_labels(service), SERVICE_NAME_LABEL: name, MANAGED_BY_LABEL: MANAGED_BY}
        families = (service.get("spec") or {}).get("ipFamilies") or ["IPv4"]
        meta = _meta(service)
        owner = {
            "apiVersion": "v1",
            "kind": "Service",
            "name": name,
            "uid": meta.get("uid", ""),
            "controller": True,
            "blockOwnerDeletion": True,
        }
        desired: list[tuple[list[Obj] | None, list[Obj]]] = []
        for ports, endpoints in sorted(groups.items(), key=repr):
            port_list = [dict(p) for p in ports] or None
            chunks = [
                endpoints[i : i + MAX_ENDPOINTS_PER_SLICE] for i in range(0, len(endpoints), MAX_ENDPOINTS_PER_SLICE)
            ]
            desired += [(port_list, chunk) for chunk in chunks or [[]]]
        existing = self._owned(namespace, name)
        for i, (slice_ports, endpoints) in enumerate(desired):
            current = existing[i] if i < len(existing) else None
            body: Obj = {
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {"namespace": namespace, "labels": labels, "ownerReferences": [owner]},
                "addressType": families[0],
                "endpoints": endpoints or None,  # as etcd's protobuf gives back an empty list: null
                "ports": slice_ports,
            }
            if current is not None:
                same = (
                    (current.get("endpoints") or []) == endpoints
                    and current.get("ports") == slice_ports
                    and (_meta(current).get("labels") or {}) == labels
                    and current.get("addressType") == families[0]
                )
                if same:
                    continue
                if current.get("addressType") != families[0]:
                    await self._delete(namespace, current)
                    current = None
            annotations = dict(_meta(current).get("annotations") or {}) if current is not None else {}
            if trigger:
                annotations[TRIGGER_TIME_ANNOTATION] = trigger
            body["metadata"]["annotations"] = annotations
            if current is None:
                body["metadata"]["generateName"] = f"{name[:57]}-"
                try:
                    await self.client.create(ENDPOINT_SLICES, namespace, body, handover=True)
                except ApiError as exc:
                    if not exc.has_cause("NamespaceTerminating"):
                        raise
            else:
                body["metadata"]["name"] = _meta(current).get("name")
                body["metadata"]["resourceVersion"] = _meta(current).get("resourceVersion")
                await self.client.update(ENDPOINT_SLICES, namespace, body, handover=True)
        for extra in existing[len(desired) :]:
            await self._delete(namespace, extra)

    async def _delete(self, namespace: str, eps: Obj) -> None:
        try:
            await self.client.delete(ENDPOINT_SLICES, namespace, str(_meta(eps).get("name")))
        except ApiError as exc:
            if exc.code != 404:
                raise
