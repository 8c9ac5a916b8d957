"""Kubernetes resource quantities (`50Mi`, `0.5`, `100m`, `1e3`) and the pod QoS class.

Design note: the node needs two facts from `resources`: a container's memory limit in bytes (to enforce
it) and the pod's `qosClass` (reported in its status). Parsing follows apimachinery's `resource.Quantity`
suffixes; values are exact `Decimal`s so `1Gi` and `1073741824` compare equal.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from kjobs.api.types import Obj

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$")


def parse_quantity(value: str | int | float) -> Decimal:
    """Parse a quantity to its exact value; ValueError names the bad text (quantities-must-match message)."""
    if isinstance(value, int | float):
        return Decimal(str(value))
    text = value.strip()
    match = _QUANTITY.match(text)
    if not match:
        raise ValueError(
            f"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {value!r}"
        )
    number, suffix, exponent = match.groups()
    try:
        base = Decimal(number)
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only decimals
        raise ValueError(f"invalid quantity {value!r}") from exc
    if exponent is not None:
        return base * (Decimal(10) ** int(exponent))
    if suffix in _BINARY:
        return base * _BINARY[suffix]
    return base * _DECIMAL[suffix or ""]


def memory_limit_bytes(container: Obj) -> int | None:
    """The container's `resources.limits.memory` in bytes (rounded up, like the kubelet), or None."""
    limit = (container.get("resources") or {}).get("limits", {}).get("memory")
    if limit is None:
        return None
    value = parse_quantity(limit)
    whole = int(value.to_integral_value(rounding="ROUND_CEILING"))
    return whole if whole > 0 else None


def qos_class(pod: Obj) -> str:
    """The pod's QoS class (`Guaranteed`, `Burstable`, `BestEffort`) from its containers' requests/limits."""
    spec = pod.get("spec", {})
    containers = list(spec.get("initContainers") or []) + list(spec.get("containers") or [])
    any_set = False
    guaranteed = True
    for container in containers:
        resources = container.get("resources") or {}
        limits = {k: parse_quantity(v) for k, v in (resources.get("limits") or {}).items() if k in ("cpu", "memory")}
        requests = {
            k: parse_quantity(v) for k, v in (resources.get("requests") or {}).items() if k in ("cpu", "memory")
        }
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
