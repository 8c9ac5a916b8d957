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

Beside the times, a body's absent top-level fields that Go writes at a flat zero value (`_top_level`: a Lease's
`spec: {}`, a core Event's `eventTime: null`) are set, found once per kind from `kjobs.server.gozero`.

Called on every object written (`ApiService._create_checked`, `_write_checked`) before it is validated, as Go
fills the zero values when it decodes; the walk follows only fields that hold such times, made into code per kind.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from kjobs.api.types import Obj
from kjobs.server import gozero
from kjobs.server.gotypes import ROOTS, resolve_type

_TIME = "meta/v1.Time"
_SKIPPED = {"core/v1.Event", "events/v1.Event"}
"""Not walked: Events, whose two versions `kjobs.api.events_v1` writes in full (a core Event written through core
`v1` gets its absent top-level fields, `_top_level`)."""

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


Filler = Callable[[Any], Any]
"""A plan made into code: the value with its absent Times as None, the same object when nothing is missing, else
copies along the way (the value may be shared with the store)."""


_INLINE_DEPTH = 40
"""Indentation beyond which a struct's code becomes a function of its own: Python's tokenizer allows 100 levels and
its compiler 20 nested loops, and a recursive Go type's plan may nest deeper than either."""


class _Source:
    """Python source of the filler of one kind's plan, made once per kind as `dataclasses` makes its methods: the
    structs, slices and maps are walked inline (a deep plan's inner structs in functions of their own), with no
    interpretation of the plan per write; interpreted, the walk took about 3 % of a simulated pod's instructions
    (docs/perf43.md). A struct is copied only when something beneath it is missing."""

    def __init__(self, inline_depth: int = _INLINE_DEPTH) -> None:
        self.inline_depth = inline_depth
        self.lines: list[str] = []
        self.names: dict[str, str] = {}  # by the plan's repr: equal plans beneath other fields share one
        self.serial = 0

    def function(self, plan: Plan) -> str:
        """The name of the function filling a struct of `plan`, its source added once."""
        name = self.names.get(repr(plan))
        if name is None:
            name = self.names[repr(plan)] = f"_fill_{len(self.names)}"
            body: list[str] = []
            self._struct("value", plan, body, 1, lambda new, pad: [f"{pad}value = {new}"])
            self.lines += [f"def {name}(value):", *body, "    return value", ""]
        return name

    def _var(self, stem: str) -> str:
        self.serial += 1
        return f"{stem}{self.serial}"

    def _struct(self, var: str, plan: Plan, out: list[str], depth: int, changed: _Changed) -> None:
        """Lines that, when `var` (a struct of `plan`) misses a Time beneath it, run `changed` with its filled copy.
        The fields in the plan's order, as a copy appends the missing ones: a Time absent gets its null; a struct
        beneath is filled, and one that Go writes when absent (`made`) is filled from `{}` when absent or null."""
        pad = "    " * depth
        if depth > self.inline_depth:
            new = self._var("filled")
            out.append(f"{pad}{new} = {self.function(plan)}({var})")
            out.append(f"{pad}if {new} is not {var}:")
            out += changed(new, pad + "    ")
            return
        if all(sub is None for sub in plan.values()):  # Times alone (a condition): test first, copy only if one lacks
            new = self._var("copy")
            test = " or ".join(f"{field!r} not in {var}" for field in plan)
            out.append(f"{pad}if type({var}) is dict and ({test}):")
            out.append(f"{pad}    {new} = dict({var})")
            for field in plan:
                out.append(f"{pad}    if {field!r} not in {new}:")
                out.append(f"{pad}        {new}[{field!r}] = None")
            out += changed(new, pad + "    ")
            return
        copy = self._var("copy")
        out.append(f"{pad}if type({var}) is dict:")
        out.append(f"{pad}    {copy} = None")
        for field, sub in plan.items():
            if sub is None:
                out.append(f"{pad}    if {field!r} not in {var}:")
                out.append(f"{pad}        if {copy} is None:")
                out.append(f"{pad}            {copy} = dict({var})")
                out.append(f"{pad}        {copy}[{field!r}] = None")
                continue
            steps, inner, made = sub
            item = self._var("item")
            out.append(f"{pad}    {item} = {var}.get({field!r})")
            if made:  # absent or null: Go decodes the zero struct and writes it, with its null Times
                out.append(f"{pad}    if {item} is None:")
                out.append(f"{pad}        {item} = {{}}")
                self._through(item, steps, inner, out, depth + 1, self._store(copy, var, repr(field)))
            else:
                out.append(f"{pad}    if {item} is not None:")
                self._through(item, steps, inner, out, depth + 2, self._store(copy, var, repr(field)))
        out.append(f"{pad}    if {copy} is not None:")
        out += changed(copy, pad + "        ")

    @staticmethod
    def _store(copy: str, original: str, key: str, container: str = "dict") -> _Changed:
        """What a changed element does: copy its container once, then replace the element in the copy."""
        return lambda new, pad: [
            f"{pad}if {copy} is None:",
            f"{pad}    {copy} = {container}({original})",
            f"{pad}{copy}[{key}] = {new}",
        ]

    def _through(self, var: str, steps: str, plan: Plan, out: list[str], depth: int, changed: _Changed) -> None:
        """Lines filling `var`, a value reaching `plan`'s struct through `steps` (slices `l`, maps `m`)."""
        if not steps:
            self._struct(var, plan, out, depth, changed)
            return
        pad = "    " * depth
        container = "list" if steps[0] == "l" else "dict"
        copy, key, item = self._var("copy"), self._var("key"), self._var("item")
        walk = f"enumerate({var})" if container == "list" else f"{var}.items()"
        out.append(f"{pad}if type({var}) is {container}:")
        out.append(f"{pad}    {copy} = None")
        out.append(f"{pad}    for {key}, {item} in {walk}:")
        self._through(item, steps[1:], plan, out, depth + 2, self._store(copy, var, key, container))
        out.append(f"{pad}    if {copy} is not None:")
        out += changed(copy, pad + "        ")


_Changed = Callable[[str, str], list[str]]
"""Given the variable holding a filled copy and the indentation, the lines that put it in its place."""


def _compile(plan: Plan, inline_depth: int = _INLINE_DEPTH) -> Filler:
    """The filler of a root struct's plan (see `_Source`)."""
    source = _Source(inline_depth)
    name = source.function(plan)
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(source.lines), f"<zerotimes {name}>", "exec"), namespace)  # source made from the Go types
    filler: Filler = namespace[name]
    return filler


_FILLERS: dict[tuple[str, str], Filler | None] = {}
"""Per (API group, kind): its filler, None for a kind without Times or absent top-level zeros (or that the Go types
do not know)."""


def _top_level(group: str, kind: str) -> tuple[tuple[str, Any], ...]:
    """The top-level fields Go writes at a flat zero value (`null`, `""`, `0`, `false`, `{}`) when a body lacks
    them: a Lease's `spec: {}`, an EndpointSlice's `ports: null`, a core Event's `eventTime: null`,
    `reportingComponent: ""`, ... (`gozero.zero_object`). Not `metadata` (the server's) nor `status` (each
    strategy's: `_initial_status`); a zero holding more (a Pod's `spec: {containers: null}`) belongs to a body
    that is refused without it."""
    zero = gozero.zero_object(group, kind) or {}
    return tuple(
        (field, value)
        for field, value in zero.items()
        if field not in ("metadata", "status") and (value == {} or not isinstance(value, dict | list))
    )


def _with_top_level(fields: tuple[tuple[str, Any], ...], times: Filler | None) -> Filler:
    """`times` (or nothing) after the absent `fields` are set, and those null whose zero is not (Go's decoder
    leaves a struct or scalar at its zero on a JSON null): a copy of the object only when one is set."""

    def lacks(value: Obj, field: str, zero: Any) -> bool:  # absent; or null where Go decodes null as no change
        return field not in value or (zero is not None and value[field] is None)

    def filler(value: Any) -> Any:
        if type(value) is dict and any(lacks(value, field, zero) for field, zero in fields):
            value = dict(value)
            for field, zero in fields:
                if lacks(value, field, zero):
                    value[field] = {} if zero == {} else zero
        return times(value) if times is not None else value

    return filler


def fill(obj: Obj, group: str, kind: str) -> Obj:
    """`obj` of (API group, kind) with `null` in every absent non-pointer Time of its present structs, and its
    absent top-level fields at their flat zero values (`_top_level`), as Go's decode-then-encode gives it; `obj`
    itself when nothing is missing (kinds the Go types do not know included)."""
    try:
        filler = _FILLERS[group, kind]
    except KeyError:
        root = ROOTS.get((group, kind))
        plan = _root_plan(root) if root is not None else None
        filler = _compile(plan) if plan is not None else None
        top = _top_level(group, kind)
        filler = _FILLERS[group, kind] = _with_top_level(top, filler) if top else filler
    if filler is None:
        return obj
    filled: Obj = filler(obj)
    return filled


@functools.cache
def _root_plan(root: str) -> Plan | None:
    """`_plan` of a stored kind without its own `metadata`: the server sets `creationTimestamp` itself."""
    plan = {field: sub for field, sub in (_plan(root) or {}).items() if field != "metadata"}
    return plan or None
