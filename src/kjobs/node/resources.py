"""What the node reads from a container's `resources`: its memory limit in bytes and the pod's QoS class.

Design note: quantities are parsed by `kjobs.api.quantity` (Kubernetes' exact grammar); this module only
applies the kubelet's two uses of them. A quantity the API somehow let through but that does not parse is
a `ConfigError`, shown as the container's `CreateContainerConfigError`, never a traceback.
"""

from __future__ import annotations

from fractions import Fraction

from kjobs.api.quantity import QuantityError, parse_quantity
from kjobs.api.types import Obj
from kjobs.node.envvars import ConfigError


def _value(raw: str | int | float, what: str) -> Fraction:
    try:
        return parse_quantity(raw).value
    except QuantityError as exc:
        raise ConfigError(f"invalid {what} {raw!r}: {exc}") from exc


def memory_limit_bytes(container: Obj) -> int | None:
    """The container's `resources.limits.memory` in bytes (rounded up, like Quantity.Value), or None."""
    limit = (container.get("resources") or {}).get("limits", {}).get("memory")
    if limit is None:
        return None
    try:
        whole = parse_quantity(limit).int_value()
    except QuantityError as exc:
        raise ConfigError(f"invalid memory limit {limit!r}: {exc}") from exc
    return whole if whole > 0 else None


def qos_class(pod: Obj) -> str:
    """The pod's QoS class (`Guaranteed`, `Burstable`, `BestEffort`): `status.qosClass` when the API server has
    set it (as `GetPodQOS` reads it: resources are fixed at creation), else from its containers' requests/limits."""
    known = (pod.get("status") or {}).get("qosClass")
    if known in ("Guaranteed", "Burstable", "BestEffort"):
        return str(known)
    spec = pod.get("spec", {})
    containers = list(spec.get("initContainers") or []) + list(spec.get("containers") or [])
    any_set = False
    guaranteed = True
    for container in containers:
        resources = container.get("resources") or {}
        try:
            limits = {k: _value(v, k) for k, v in (resources.get("limits") or {}).items() if k in ("cpu", "memory")}
            requests = {k: _value(v, k) for k, v in (resources.get("requests") or {}).items() if k in ("cpu", "memory")}
        except ConfigError:
            return "BestEffort"
        if any(v != 0 for v in limits.values()) or any(v != 0 for v in requests.values()):
            any_set = True
        for name in ("cpu", "memory"):
            limit = limits.get(name)
            request = requests.get(name, limit)
            if limit is None or limit == 0 or request != limit:
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"
