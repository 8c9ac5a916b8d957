"""Node-pressure eviction for memory: the threshold, the kubelet's ranking and message, the memory seam.

Design note: the kubelet's eviction manager (`pkg/kubelet/eviction`) observes `memory.available`, compares it
with a hard threshold (default `memory.available<100Mi`) and an optional soft one (`evictionSoft`, acted on only
once it has been met for its `evictionSoftGracePeriod`; MemoryPressure is reported as soon as it is met), and
while a threshold is met evicts one pod per monitoring interval (grace period 1 s for the hard threshold,
min(`evictionMaxPodGracePeriod`, the pod's terminationGracePeriodSeconds) for the soft one), ranked by
`rankMemoryPressure`: pods whose usage exceeds their memory requests first, then lower priority first, then by
usage above requests, largest first. The pod's status says why in a message built from fixed fragments
(`helpers.go`: `nodeLowMessageFmt`, `thresholdMetMessageFmt`, `containerMessageFmt`, each with its trailing
space). Those rules are pure functions here; what memory is available and used comes through `MemoryMonitor` —
`/proc/meminfo` plus the runtime's process groups for real, `FakeMemoryMonitor` for tests — so tests trigger
pressure without exhausting the machine.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Protocol

from kjobs.api.quantity import Format, QuantityError, format_quantity, parse_quantity
from kjobs.api.timeutil import parse_duration
from kjobs.api.types import Obj

MEMORY_AVAILABLE = "memory.available"
DEFAULT_THRESHOLD = "memory.available<100Mi"
IMMEDIATE_EVICTION_GRACE_SECONDS = 1.0
"""The kubelet's grace period for hard-threshold evictions (`immediateEvictionGracePeriodSeconds`)."""
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
"""Pods at or above this priority are critical and never evicted (`kubelettypes.IsCriticalPod`)."""
EVICTED = "Evicted"


class ThresholdError(ValueError):
    """An eviction threshold that does not parse (the kubelet's ParseThresholdConfig errors)."""


@dataclass(frozen=True)
class Threshold:
    """A hard `memory.available<...` threshold: an absolute quantity or a fraction of capacity."""

    quantity: str | None = None
    """The quantity as written, canonical (`100Mi`)."""
    percentage: float | None = None
    grace_period: float = 0.0
    """Seconds the threshold must stay met before pods are evicted for it: 0 for a hard threshold
    (`isHardEvictionThreshold`), the soft threshold's `evictionSoftGracePeriod` otherwise."""

    @classmethod
    def parse_soft(cls, statement: str, grace_period: str) -> Threshold:
        """A soft threshold (`memory.available<1Gi`) with its grace period (`memory.available=1m30s`)."""
        threshold = cls.parse(statement)
        signal, _, value = grace_period.strip().partition("=")
        if signal.strip() != MEMORY_AVAILABLE or not value.strip():
            raise ThresholdError(f"grace period must be specified for the soft eviction threshold {MEMORY_AVAILABLE}")
        try:
            seconds = parse_duration(value.strip())
        except ValueError as exc:
            raise ThresholdError(str(exc)) from None
        if seconds < 0:
            raise ThresholdError(f"invalid eviction grace period {value.strip()}: must not be negative")
        return replace(threshold, grace_period=seconds)

    @classmethod
    def parse(cls, statement: str) -> Threshold:
        """Parse `memory.available<100Mi` or `memory.available<5%`."""
        parts = statement.strip().split("<")
        if len(parts) != 2:
            raise ThresholdError(f"invalid eviction threshold syntax {statement}, expected <signal><operator><value>")
        signal, value = parts[0].strip(), parts[1].strip()
        if signal != MEMORY_AVAILABLE:
            raise ThresholdError(f"unsupported eviction signal {signal}")
        if value.endswith("%"):
            try:
                percentage = float(value[:-1]) / 100
            except ValueError:
                raise ThresholdError(f"invalid eviction threshold percentage {value}") from None
            if percentage <= 0:
                raise ThresholdError(f"eviction percentage threshold {signal} must be positive: {value}")
            return cls(percentage=percentage)
        try:
            quantity = parse_quantity(value)
        except QuantityError as exc:
            raise ThresholdError(str(exc)) from None
        if quantity.value <= 0:
            raise ThresholdError(f"eviction threshold {signal} must be positive: {quantity}")
        return cls(quantity=str(quantity))

    def bytes_for(self, capacity_bytes: int) -> int:
        """The threshold in bytes for a node of `capacity_bytes` memory."""
        if self.quantity is not None:
            return parse_quantity(self.quantity).int_value()
        return int(capacity_bytes * (self.percentage or 0.0))

    def text_for(self, capacity_bytes: int) -> str:
        """The threshold quantity as the eviction message prints it."""
        if self.quantity is not None:
            return self.quantity
        return binary_si(self.bytes_for(capacity_bytes))


def binary_si(value: int) -> str:
    """Bytes as `resource.NewQuantity(v, BinarySI).String()`: `100Mi`, `51200Ki`, `1234567`."""
    return format_quantity(Fraction(value), Format.BINARY_SI)


@dataclass(frozen=True)
class MemoryObservation:
    """One observation: node memory available and capacity, and each pod's containers' working set."""

    available_bytes: int
    capacity_bytes: int
    pods: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """pod uid -> container name -> bytes in use (pods without stats are absent)."""


class MemoryMonitor(Protocol):
    """Where memory observations come from."""

    def observe(self) -> MemoryObservation:
        """Measure now."""
        ...


def read_mem_available(path: str = "/proc/meminfo") -> tuple[int, int]:
    """(MemAvailable, MemTotal) in bytes from /proc/meminfo; (0, 0) where there is none."""
    available = total = 0
    try:
        with open(path, encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
                elif line.startswith("MemTotal:"):
                    total = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return 0, 0
    return available, total


class ProcMemoryMonitor:
    """The real monitor: `/proc/meminfo` MemAvailable and per-container usage from a callable (the runtime)."""

    def __init__(self, *, usage: Callable[[], Mapping[str, Mapping[str, int]]] | None = None) -> None:
        self._usage = usage

    def observe(self) -> MemoryObservation:
        """MemAvailable/MemTotal now, and the runtime's per-container resident memory."""
        available, total = read_mem_available()
        pods = self._usage() if self._usage is not None else {}
        return MemoryObservation(available_bytes=available, capacity_bytes=total, pods=pods)


class FakeMemoryMonitor:
    """A monitor whose numbers tests set."""

    def __init__(self, *, available_bytes: int, capacity_bytes: int = 8 << 30) -> None:
        self.available_bytes = available_bytes
        self.capacity_bytes = capacity_bytes
        self.pods: dict[str, dict[str, int]] = {}

    def observe(self) -> MemoryObservation:
        """The values set on this object."""
        return MemoryObservation(
            available_bytes=self.available_bytes,
            capacity_bytes=self.capacity_bytes,
            pods={uid: dict(usage) for uid, usage in self.pods.items()},
        )


# -- the kubelet's rules ------------------------------------------------------------------------------------


def threshold_met(threshold: Threshold, observation: MemoryObservation) -> bool:
    """`memory.available` below the threshold."""
    return observation.available_bytes < threshold.bytes_for(observation.capacity_bytes)


def eviction_grace_seconds(pod: Obj, threshold: Threshold, max_pod_grace_period: float) -> float:
    """The grace period an eviction for `threshold` gives `pod` (`managerImpl.synchronize`): 1 s for a hard
    threshold; for a soft one `evictionMaxPodGracePeriod`, or the pod's terminationGracePeriodSeconds when shorter."""
    if threshold.grace_period == 0:
        return IMMEDIATE_EVICTION_GRACE_SECONDS
    own = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    if isinstance(own, int | float) and not isinstance(own, bool):
        return float(min(max_pod_grace_period, own))
    return float(max_pod_grace_period)


def _bytes(raw: object) -> int:
    if raw is None:
        return 0
    try:
        return parse_quantity(raw if isinstance(raw, str | int | float) else str(raw)).int_value()
    except QuantityError:
        return 0


def _request_text(container: Obj) -> str:
    raw = ((container.get("resources") or {}).get("requests") or {}).get("memory")
    if raw is None:
        return "0"
    try:
        return str(parse_quantity(raw))
    except QuantityError:
        return "0"


def pod_memory_request(pod: Obj) -> int:
    """The pod's memory request (`GetResourceRequestQuantity`): sum of containers, at least the largest init's."""
    spec = pod.get("spec") or {}
    total = sum(
        _bytes(((c.get("resources") or {}).get("requests") or {}).get("memory")) for c in spec.get("containers") or []
    )
    for init in spec.get("initContainers") or []:
        total = max(total, _bytes(((init.get("resources") or {}).get("requests") or {}).get("memory")))
    overhead = (spec.get("overhead") or {}).get("memory")
    if overhead is not None and total:
        total += _bytes(overhead)
    return total


def pod_priority(pod: Obj) -> int:
    """`spec.priority`, 0 when unset."""
    value = (pod.get("spec") or {}).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def is_critical(pod: Obj) -> bool:
    """Critical pods (system-critical priority) are never evicted."""
    return pod_priority(pod) >= SYSTEM_CRITICAL_PRIORITY


def _uid(pod: Obj) -> str:
    return str((pod.get("metadata") or {}).get("uid") or "")


def rank_for_memory_pressure(pods: list[Obj], observation: MemoryObservation) -> list[Obj]:
    """`rankMemoryPressure`: exceeding requests first, then lower priority, then larger usage above requests.

    Pods without stats rank first at every step, as in the kubelet. The sort is stable, like Go's on equal keys
    only by accident; callers pass pods in a deterministic order.
    """

    def usage(pod: Obj) -> int | None:
        stats = observation.pods.get(_uid(pod))
        return None if stats is None else sum(stats.values())

    def exceeds(p1: Obj, p2: Obj) -> int:
        u1, u2 = usage(p1), usage(p2)
        if u1 is None or u2 is None:
            return _cmp_bool(u1 is None, u2 is None)
        return _cmp_bool(u1 > pod_memory_request(p1), u2 > pod_memory_request(p2))

    def priority(p1: Obj, p2: Obj) -> int:
        a, b = pod_priority(p1), pod_priority(p2)
        return 0 if a == b else (1 if a > b else -1)

    def memory(p1: Obj, p2: Obj) -> int:
        u1, u2 = usage(p1), usage(p2)
        if u1 is None or u2 is None:
            return _cmp_bool(u1 is None, u2 is None)
        above1, above2 = u1 - pod_memory_request(p1), u2 - pod_memory_request(p2)
        return 0 if above1 == above2 else (-1 if above1 > above2 else 1)

    def compare(p1: Obj, p2: Obj) -> int:
        for rule in (exceeds, priority, memory):
            result = rule(p1, p2)
            if result:
                return result
        return 0

    return sorted(pods, key=functools.cmp_to_key(compare))


def _cmp_bool(a: bool, b: bool) -> int:
    """True before False (the kubelet's cmpBool)."""
    if a == b:
        return 0
    return -1 if a else 1


def eviction_message(pod: Obj, threshold: Threshold, observation: MemoryObservation) -> str:
    """The kubelet's `evictionMessage` for memory, trailing space included."""
    message = "The node was low on resource: memory. "
    message += (
        f"Threshold quantity: {threshold.text_for(observation.capacity_bytes)}, "
        f"available: {binary_si(observation.available_bytes)}. "
    )
    stats = observation.pods.get(_uid(pod))
    if stats is None:
        return message
    for container in (pod.get("spec") or {}).get("containers") or []:
        name = str(container.get("name") or "")
        if name not in stats:
            continue
        used = stats[name]
        request = _request_text(container)
        if used > _bytes(request):
            message += (
                f"Container {name} was using {binary_si(used)}, request is {request}, "
                "has larger consumption of memory. "
            )
    return message
