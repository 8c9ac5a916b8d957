"""Unset times read back as `null`, as Go writes a zero `metav1.Time`.

In k8s.io/api a condition's `lastProbeTime` and `lastTransitionTime` (PodCondition, JobCondition, NodeCondition's
`lastHeartbeatTime`, ...), a container state's `startedAt`/`finishedAt` and an Event's `firstTimestamp` are
`metav1.Time` values, not pointers. `omitempty` never omits a struct, and a zero Time marshals as `null`
(apimachinery pkg/apis/meta/v1/time.go, `MarshalJSON`), so a kube-apiserver, which stores and answers what it
decoded, shows every such field of a present struct: a `DisruptionTarget` condition a client adds without
`lastProbeTime`, or a kubelet status patch that sends `lastProbeTime: null` (a deletion, in a strategic merge
patch), reads back with `lastProbeTime: null`. `fill` puts those nulls in an object about to be stored.

The fields come from the Go types (`data/gotypes-v1.32.json`, through `kjobs.server.gotypes`). An embedded
`ObjectMeta` (a pod template's, a CronJob's job template's, a claim template's) has a non-pointer
`creationTimestamp` too, and a template is a non-pointer struct: kube-apiserver 1.32 shows `metadata:
{creationTimestamp: null}` there even when the manifest has no `metadata` (Go 1.23 has no `omitzero`; 1.33's
apimachinery tags it so). An absent non-pointer struct is made only when it would hold such a null. The object's
own `metadata` is the server's to fill.

Called on every object written (`ApiService._create_checked`, `_write_checked`) before it is validated, as Go
fills the zero values when it decodes; the walk follows only fields that hold such times, precomputed per kind.
"""

from __future__ import annotations

import functools
from typing import Any

from kjobs.api.types import Obj
from kjobs.server.gotypes import ROOTS, resolve_type

_TIME = "meta/v1.Time"
_SKIPPED = {"core/v1.Event", "events/v1.Event"}
"""Not walked: Events, whose two versions `kjobs.api.events_v1` writes in full."""

Plan = dict[str, Any]
"""Per field of a struct: None (a non-pointer Time: null when absent), or (steps, plan, made): the plan of the
struct beneath it, reached through `steps`, one character per slice (`l`) or map (`m`) on the way; `made`: the
field is a non-pointer struct holding a non-pointer Time itself, so Go writes it (with that null) when absent."""


@functools.cache
def _plan(struct: str) -> Plan | None:
    """Where the non-pointer Times are beneath objects of Go struct `struct`; None where there are none."""
    return _build(struct, frozenset())


def _build(struct: str, seen: frozenset[str]) -> Plan | None:
    category, underlying, detail = resolve_type(struct)
    if category != "struct" or underlying in seen or underlying in _SKIPPED:
        return None
    plan: Plan = {}
    for field, go_type in detail[1].items():
        if go_type == _TIME:
            plan[field] = None
            continue
        inner, steps = go_type, ""
        while True:  # through slices and maps to their elements
            kind, _, element = resolve_type(inner)
            if kind not in ("list", "map"):
                break
            inner, steps = element, steps + kind[0]
        sub = _build(inner, seen | {underlying})
        if sub is not None:
            made = not steps and not go_type.startswith("*") and None in sub.values()
            plan[field] = (steps, sub, made)
    return plan or None


def _fill(value: Any, steps: str, plan: Plan) -> Any:
    """`value` (reached through `steps`) with its plan's absent Times as None: the same object when nothing is
    missing, else copies along the way (`value` may be shared with the store)."""
    if steps:
        if steps[0] == "l" and type(value) is list:
            pairs: Any = enumerate(value)
        elif steps[0] == "m" and type(value) is dict:
            pairs = value.items()
        else:
            return value
        out: Any = None
        for key, item in pairs:
            filled = _fill(item, steps[1:], plan)
            if filled is not item:
                if out is None:
                    out = type(value)(value)
                out[key] = filled
        return value if out is None else out
    if type(value) is not dict:
        return value
    copy: Obj | None = None
    for field, sub in plan.items():
        if sub is None:
            if field not in value:
                if copy is None:
                    copy = dict(value)
                copy[field] = None
            continue
        item = value.get(field)
        if item is None:
            if not sub[2]:
                continue
            item = {}  # absent or null: Go decodes the zero struct and writes it
        filled = _fill(item, sub[0], sub[1])
        if filled is not item:
            if copy is None:
                copy = dict(value)
            copy[field] = filled
    return value if copy is None else copy


def fill(obj: Obj, group: str, kind: str) -> Obj:
    """`obj` of (API group, kind) with `null` in every absent non-pointer Time of its present structs, as Go's
    decode-then-encode gives it; `obj` itself when nothing is missing (kinds the Go types do not know included)."""
    root = ROOTS.get((group, kind))
    plan = _root_plan(root) if root is not None else None
    if plan is None:
        return obj
    filled: Obj = _fill(obj, "", plan)
    return filled


@functools.cache
def _root_plan(root: str) -> Plan | None:
    """`_plan` of a stored kind without its own `metadata`: the server sets `creationTimestamp` itself."""
    plan = {field: sub for field, sub in (_plan(root) or {}).items() if field != "metadata"}
    return plan or None
