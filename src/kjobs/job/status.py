"""JobStatus helpers: copying without deepcopy, and the JSON shape Kubernetes writes (Go's omitempty rules)."""

from __future__ import annotations

from typing import Any

from kjobs.api.types import Obj


def copy_status(status: Obj | None) -> Obj:
    """A copy safe to mutate: top-level fields, the conditions list and the uncounted UID lists are new."""
    out: Obj = dict(status or {})
    out["conditions"] = [dict(c) for c in out.get("conditions") or ()]
    uncounted = out.get("uncountedTerminatedPods") or {}
    out["uncountedTerminatedPods"] = {
        "succeeded": list(uncounted.get("succeeded") or ()),
        "failed": list(uncounted.get("failed") or ()),
    }
    return out


def to_api(status: Obj) -> Obj:
    """The status as Kubernetes serialises it: zero counters, empty strings and empty lists omitted.

    `ready`, `terminating` and `failedIndexes` are pointers in Go and stay when set, even to 0 or "";
    `uncountedTerminatedPods` is always written by the controller (as `{}` when empty).
    """
    out: Obj = {}
    for key, value in status.items():
        if key in ("active", "succeeded", "failed") and not value:
            continue
        if key in ("conditions",) and not value:
            continue
        if key in ("completedIndexes",) and not value:
            continue
        if key in ("startTime", "completionTime", "ready", "terminating", "failedIndexes") and value is None:
            continue
        if key == "uncountedTerminatedPods":
            value = {k: list(v) for k, v in (value or {}).items() if v}
        out[key] = value
    return out


def counter(status: Obj, key: str) -> int:
    """An int32 counter of the status (0 when absent)."""
    value: Any = status.get(key)
    return int(value) if isinstance(value, int) else 0
