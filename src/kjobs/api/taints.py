"""Taints and tolerations, as Kubernetes matches them (`core/v1` `ToleratesTaint`, `GetMatchingTolerations`).

Pure functions shared by the node lifecycle controller (which adds and removes the node-condition taints) and
the taint-eviction controller (which decides when a pod on a `NoExecute`-tainted node must go).
"""

from __future__ import annotations

from collections.abc import Iterable

from kjobs.api.types import Obj

NO_EXECUTE = "NoExecute"
NO_SCHEDULE = "NoSchedule"

TAINT_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
TAINT_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
TAINT_DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
TAINT_PID_PRESSURE = "node.kubernetes.io/pid-pressure"
TAINT_NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"
TAINT_OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"

FOREVER = -1.0
"""`min_toleration_seconds` for tolerations that never expire."""


def taints_of(node: Obj | None) -> list[Obj]:
    """The node's `spec.taints` (empty for a missing node)."""
    if node is None:
        return []
    return [t for t in (node.get("spec") or {}).get("taints") or [] if isinstance(t, dict)]


def no_execute_taints(taints: Iterable[Obj]) -> list[Obj]:
    """The `NoExecute` taints, in order."""
    return [t for t in taints if t.get("effect") == NO_EXECUTE]


def same_taint(a: Obj, b: Obj) -> bool:
    """`Taint.MatchTaint`: same key and effect (value and timeAdded do not matter)."""
    return (a.get("key") or "") == (b.get("key") or "") and (a.get("effect") or "") == (b.get("effect") or "")


def taint_exists(taints: Iterable[Obj], taint: Obj) -> bool:
    """Whether a taint with the key and effect of `taint` is present."""
    return any(same_taint(t, taint) for t in taints)


def tolerates(toleration: Obj, taint: Obj) -> bool:
    """`Toleration.ToleratesTaint`: empty effect/key are wildcards; `Exists` ignores the value."""
    effect = toleration.get("effect") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    key = toleration.get("key") or ""
    if key and key != (taint.get("key") or ""):
        return False
    operator = toleration.get("operator") or ""
    if operator in ("", "Equal"):
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


def matching_tolerations(taints: list[Obj], tolerations: list[Obj]) -> tuple[bool, list[Obj]]:
    """`GetMatchingTolerations`: (every taint tolerated?, the first toleration matching each taint)."""
    if not taints:
        return True, []
    used: list[Obj] = []
    for taint in taints:
        match = next((t for t in tolerations if tolerates(t, taint)), None)
        if match is None:
            return False, []
        used.append(match)
    return True, used


def min_toleration_seconds(tolerations: list[Obj]) -> float:
    """`getMinTolerationTime`: 0 with no tolerations or any non-positive value; FOREVER when none is bounded."""
    if not tolerations:
        return 0.0
    least: int | None = None
    for toleration in tolerations:
        seconds = toleration.get("tolerationSeconds")
        if seconds is None or isinstance(seconds, bool) or not isinstance(seconds, int | float):
            continue
        if seconds <= 0:
            return 0.0
        least = int(seconds) if least is None else min(least, int(seconds))
    return FOREVER if least is None else float(least)


def with_taints(taints: list[Obj], add: Iterable[Obj], remove: Iterable[Obj]) -> list[Obj]:
    """`AddOrUpdateTaint` then `RemoveTaint`: replace same key+effect by the added one, drop the removed ones."""
    result = list(taints)
    for taint in add:
        result = [t for t in result if not same_taint(t, taint)] + [taint]
    removals = list(remove)
    return [t for t in result if not any(same_taint(t, r) for r in removals)]
