"""Cluster IPs and node ports for Services, allocated as kube-apiserver v1.32 allocates them.

Ranges: kube-apiserver's default `--service-cluster-ip-range` 10.96.0.0/12 (single-stack IPv4) and
`--service-node-port-range` 30000-32767. What is in use is read from the stored Services at each allocation
(plus what writes in flight hold), never kept apart: a `kjobs up` restart over its data directory sees what the
stored Services hold, and a deleted Service's IP and ports are free again once it is gone. Upstream keeps bitmaps
in etcd and repairs them from the Services (pkg/registry/core/service/ipallocator/controller/repair.go); deriving
them each time is that repair, always.

An address or port the caller names must be in range and free (pkg/registry/core/service/ipallocator/bitmap.go,
portallocator/allocator.go: `ErrNotInRange`, `ErrAllocated`); others are picked at random, first from the upper
part of the range, leaving the lower part (16 to 256 addresses, 16 to 128 ports) to those who name theirs
(`randomScanStrategyWithOffset`, KEP-3070 and KEP-3668; `calculateRangeOffset`).
"""

from __future__ import annotations

import ipaddress
import itertools
import random
from collections.abc import Callable, Iterable

from kjobs.api import services as svcapi
from kjobs.api.errors import ApiError, ErrorType, FieldError, invalid
from kjobs.api.types import Obj

SERVICE_CIDR = ipaddress.IPv4Network("10.96.0.0/12")
"""kube-apiserver's default `--service-cluster-ip-range` (cmd/kube-apiserver/app/options: `DefaultServiceIPCIDR`)."""
NODE_PORT_RANGE = (30000, 32767)
"""`--service-node-port-range` default (`DefaultServiceNodePortRange`), inclusive."""
KUBERNETES_SERVICE_IP = "10.96.0.1"
"""The first address of the range, the `kubernetes` Service's (`ServiceIPRange` → `GetIndexedIP(cidr, 1)`)."""

_FIRST = int(SERVICE_CIDR.network_address) + 1
_SIZE = SERVICE_CIDR.num_addresses - 2  # network and broadcast addresses are never handed out
_IP_OFFSET = min(max(16, _SIZE // 16), 256)
_PORT_SIZE = NODE_PORT_RANGE[1] - NODE_PORT_RANGE[0] + 1
_PORT_OFFSET = min(max(16, _PORT_SIZE // 32), 128)

Key = tuple[str, str]


def _ip_in_use(spec: Obj) -> Iterable[int]:
    for ip in spec.get("clusterIPs") or [spec.get("clusterIP")]:
        if isinstance(ip, str) and ip not in ("", svcapi.NONE):
            try:
                yield int(ipaddress.IPv4Address(ip))
            except ValueError:
                continue


def _ports_in_use(spec: Obj) -> Iterable[int]:
    for port in spec.get("ports") or []:
        if isinstance(port, dict) and isinstance(port.get("nodePort"), int) and port["nodePort"]:
            yield port["nodePort"]
    if isinstance(spec.get("healthCheckNodePort"), int) and spec["healthCheckNodePort"]:
        yield spec["healthCheckNodePort"]


class Allocation:
    """What one write holds until it is stored (or fails): `release()` in a `finally`."""

    def __init__(self, owner: ServiceAllocator, ips: set[int], ports: set[int]) -> None:
        self.owner, self.ips, self.ports = owner, ips, ports

    def release(self) -> None:
        """Let go of the hold (the stored Service, if any, now holds its values itself)."""
        self.owner.held_ips -= self.ips
        self.owner.held_ports -= self.ports


Uses = dict[Key, tuple[frozenset[int], frozenset[int]]]


def _uses(svc: Obj) -> tuple[Key, tuple[frozenset[int], frozenset[int]]]:
    meta, spec = svc.get("metadata") or {}, svc.get("spec") or {}
    key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
    return key, (frozenset(_ip_in_use(spec)), frozenset(_ports_in_use(spec)))


class ServiceAllocator:
    """Allocation over the stored Services (`services` lists them, every namespace, with the store's revision).

    What each Service holds is read from the store; the reading is kept with the revision it was read at and used
    again while the store is at that revision, or one write past it when that write was this allocator's own
    Service (`written`): a burst of Service creates does not decode every Service again each time, and any other
    write (a delete, a pod) makes the next allocation read them again."""

    def __init__(
        self,
        services: Callable[[], tuple[Iterable[Obj], int]],
        revision: Callable[[], int],
        rng: random.Random | None = None,
    ) -> None:
        self.services = services
        self.revision = revision
        self.rng = rng or random.Random()
        self.held_ips: set[int] = set()
        self.held_ports: set[int] = set()
        self._read: tuple[int, Uses] | None = None

    def _stored(self) -> Uses:
        if self._read is not None and self._read[0] == self.revision():
            return self._read[1]
        items, revision = self.services()
        uses = dict(_uses(svc) for svc in items)
        self._read = (revision, uses)
        return uses

    def written(self, svc: Obj) -> None:
        """`svc` was stored by a write whose allocation this allocator made: the kept reading follows it when
        that write is the only one since the reading."""
        if self._read is None:
            return
        try:
            revision = int((svc.get("metadata") or {}).get("resourceVersion") or 0)
        except ValueError:
            return
        if revision != self._read[0] + 1:
            self._read = None
            return
        key, held = _uses(svc)
        self._read[1][key] = held
        self._read = (revision, self._read[1])

    def _in_use(self, skip: Key | None) -> tuple[set[int], set[int]]:
        ips, ports = set(self.held_ips), set(self.held_ports)
        for key, (held_ips, held_ports) in self._stored().items():
            if key != skip:
                ips |= held_ips
                ports |= held_ports
        return ips, ports

    def allocate(self, svc: Obj, old: Obj | None) -> Allocation:
        """`allocateCreate` / `allocateUpdate`: fill in the family fields, a cluster IP and node ports, or raise
        the 422 kube-apiserver answers (500 when a range is full). The values are held until `release()`."""
        name = str((svc.get("metadata") or {}).get("name") or "")
        errors = svcapi.init_ip_family_fields(svc, old)
        if errors:
            raise invalid("Service", name, errors)
        meta = svc.get("metadata") or {}
        skip = (str(meta.get("namespace") or ""), name) if old is not None else None
        ips, ports = self._in_use(skip)
        allocation = Allocation(self, set(), set())
        try:
            self._cluster_ip(svc, old, ips, allocation, name)
            self._node_ports(svc, old, ports, allocation, name)
        except ApiError:
            allocation.release()
            raise
        return allocation

    def _hold_ip(self, value: int, allocation: Allocation) -> None:
        allocation.ips.add(value)
        self.held_ips.add(value)

    def _hold_port(self, value: int, allocation: Allocation) -> None:
        allocation.ports.add(value)
        self.held_ports.add(value)

    def _cluster_ip(self, svc: Obj, old: Obj | None, used: set[int], allocation: Allocation, name: str) -> None:
        spec = svc["spec"]
        if spec.get("type") == svcapi.EXTERNAL_NAME or svcapi.is_headless(spec):
            return
        old_spec = (old or {}).get("spec") or {}
        if old is not None and old_spec.get("type") != svcapi.EXTERNAL_NAME:
            return  # the cluster IP stays what it was (validation refuses a change)
        ips = list(spec.get("clusterIPs") or [])
        wanted = ips[0] if ips else ""
        if not wanted:
            value = self._next(used, _FIRST, _SIZE, _IP_OFFSET)
            if value is None:
                raise internal_error("failed to allocate a serviceIP: range is full")
            ip = str(ipaddress.IPv4Address(value))
            spec["clusterIP"], spec["clusterIPs"] = ip, [ip, *ips[1:]]
            self._hold_ip(value, allocation)
            return
        problem = None
        address = ipaddress.IPv4Address(_canonical(wanted))
        offset = int(address) - _FIRST
        if not 0 <= offset < _SIZE:
            problem = f"provided IP is not in the valid range. The range of valid IPs is {SERVICE_CIDR}"
        elif int(address) in used:
            problem = "provided IP is already allocated"
        if problem is not None:
            message = f"failed to allocate IP {wanted}: {problem}"
            raise invalid("Service", name, [FieldError("spec.clusterIPs", ErrorType.FieldValueInvalid, message, ips)])
        self._hold_ip(int(address), allocation)

    def _node_ports(self, svc: Obj, old: Obj | None, used: set[int], allocation: Allocation, name: str) -> None:
        """`initNodePorts` (create) / `updateNodePorts` (update): each port of a NodePort or LoadBalancer Service
        gets one (one per service port number on create), unless a LoadBalancer says not to allocate them; a
        port named must be in range and free; and the health check port of an `externalTrafficPolicy: Local`
        LoadBalancer."""
        spec = svc["spec"]
        old_spec = (old or {}).get("spec") or {}
        mine = set(_ports_in_use(old_spec)) if old is not None else set()
        if spec.get("type") in (svcapi.NODE_PORT, svcapi.LOAD_BALANCER):
            allocate_all = (
                spec.get("type") == svcapi.NODE_PORT or spec.get("allocateLoadBalancerNodePorts") is not False
            )
            by_port: dict[object, int] = {}
            for i, port in enumerate(spec.get("ports") or []):
                if not isinstance(port, dict):
                    continue
                requested = port.get("nodePort") or 0
                if not requested and not allocate_all:
                    continue
                if old is None and not requested and port.get("port") in by_port:
                    port["nodePort"] = by_port[port.get("port")]
                    continue
                if requested:
                    # on create a node port serves one service port number (TCP and UDP 53 may share one);
                    # an update may repeat one the Service holds or has just taken (`updateNodePorts`)
                    shared = (
                        by_port.get(port.get("port")) == requested if old is None else requested in allocation.ports
                    )
                    if requested in mine or shared:
                        by_port.setdefault(port.get("port"), requested)
                        continue
                    self._named_port(requested, used, f"spec.ports[{i}].nodePort", allocation, name)
                else:
                    port["nodePort"] = requested = self._next_port(used, allocation, "failed to allocate a nodePort")
                by_port.setdefault(port.get("port"), requested)
        if svcapi.needs_health_check(spec):
            requested = spec.get("healthCheckNodePort") or 0
            if requested and requested not in mine:
                problem = self._port_problem(requested, used, allocation)
                if problem is not None:
                    raise internal_error(f"failed to allocate requested HealthCheck NodePort {requested}: {problem}")
                self._hold_port(requested, allocation)
            elif not requested:
                spec["healthCheckNodePort"] = self._next_port(
                    used, allocation, "failed to allocate a HealthCheck NodePort 0"
                )

    def _port_problem(self, value: int, used: set[int], allocation: Allocation) -> str | None:
        """Why a node port named in the request cannot be had (`ErrNotInRange`, `ErrAllocated`), or None."""
        if not NODE_PORT_RANGE[0] <= value <= NODE_PORT_RANGE[1]:
            low, high = NODE_PORT_RANGE
            return f"provided port is not in the valid range. The range of valid ports is {low}-{high}"
        if value in used or value in allocation.ports:
            return "provided port is already allocated"
        return None

    def _named_port(self, value: int, used: set[int], path: str, allocation: Allocation, name: str) -> None:
        problem = self._port_problem(value, used, allocation)
        if problem is not None:
            raise invalid("Service", name, [FieldError(path, ErrorType.FieldValueInvalid, problem, value)])
        self._hold_port(value, allocation)

    def _next_port(self, used: set[int], allocation: Allocation, what: str) -> int:
        value = self._next(used | allocation.ports, NODE_PORT_RANGE[0], _PORT_SIZE, _PORT_OFFSET)
        if value is None:
            raise internal_error(f"{what}: range is full")
        self._hold_port(value, allocation)
        return value

    def _next(self, used: set[int], first: int, size: int, offset: int) -> int | None:
        """A free value at random: the upper band [first+offset, first+size) first, then the lower one."""
        for low, high in ((first + offset, first + size), (first, first + offset)):
            if high <= low:
                continue
            for _ in range(32):  # the ranges are mostly free: a few random picks find one
                value = self.rng.randrange(low, high)
                if value not in used:
                    return value
            start = self.rng.randrange(low, high)
            for candidate in itertools.chain(range(start, high), range(low, start)):
                if candidate not in used:
                    return int(candidate)
        return None


def internal_error(message: str) -> ApiError:
    """apimachinery `errors.NewInternalError`: 500 InternalError, the error as its one cause."""
    return ApiError(
        500, "InternalError", f"Internal error occurred: {message}", details={"causes": [{"message": message}]}
    )


def _canonical(ip: str) -> str:
    """A dotted IPv4 address whose octets may carry leading zeros (`ParseIPSloppy`), as Python reads it."""
    if ":" in ip:
        return ip
    return ".".join(str(int(part)) for part in ip.split("."))
