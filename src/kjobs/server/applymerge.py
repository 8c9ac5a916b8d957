"""Server-side apply's merge of an applied configuration into the live object, by each field's type.

structured-merge-diff v4.4.2 (`ccf7a061f165`, Kubernetes v1.32's) merges with typed/merge.go's `mergingWalker`
and the rule `ruleKeepRHS` (merge/update.go `Updater.Apply` calls `liveObject.Merge(configObject)`): the types
are SMD's, read from `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and `x-kubernetes-map-type`, never
from the strategic-merge patch strategy. Where the two disagree the merged object differs: Job
`status.conditions` and Pod `status.hostIPs` are atomic though they have a patch merge key (an applier
replaces the whole list), container and Service `ports` are keyed by port *and* protocol (80/UDP is another
element than 80/TCP, not the same one changed), `set` lists without a patch strategy (a Job's
`status.uncountedTerminatedPods`) and `map` lists without one (`resources.claims`) are merged, not replaced.

The rules (`doMap`, `doList`, `visitMapItems`, `visitListItems`):

* A scalar, an atomic map or list (`x-kubernetes-map-type: atomic`, a list whose type is `atomic` or absent),
  and a map or list that is empty or null on both sides is a leaf: the configuration's value wins whole.
* A granular map merges key by key; a key only one side has is that side's.
* A `map` list (elements named by all their keys) or `set` list (scalars named by value) merges element by
  element. The order: the live elements the configuration does not name keep their places, those both have
  come in the configuration's order, each configuration element not live comes where the configuration puts it
  relative to the shared ones. A live key that repeats (`allowDuplicates` for the live side) is replaced by the
  configuration's element when the configuration names it (the repeats are then one), kept as is otherwise.
* A null in the configuration keeps a granular map or list that is live and not empty (it is merged with
  nothing); elsewhere a null is the value, which the apiserver's conversion back to the Go type drops.

What the applier stopped applying is pruned afterwards by the caller (`Updater.prune`), as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from kjobs.api.types import Obj
from kjobs.server.apply import key_segment, keyed
from kjobs.server.patch import StrategyLookup
from kjobs.server.schema import shape_at

Names = tuple[str, ...]


class _Absent:
    """No value on that side (SMD's nil `value.Value`), unlike a JSON null."""


ABSENT = _Absent()
_DUPLICATE_NULL = None
"""A live element whose key repeats merges as a null (`indexListPathElements` stores `NewValueInterface(nil)`)."""


def merge(live: Obj, config: Obj, lookup: StrategyLookup) -> Obj:
    """`config` merged into `live` as `TypedValue.Merge` does it, for objects of the schema `lookup` belongs to.
    Neither argument is changed; the result may share unchanged values with either."""
    merged = _merge(live, config, (), lookup)
    return merged if isinstance(merged, dict) else {}


def _merge(lhs: Any, rhs: Any, names: Names, lookup: StrategyLookup) -> Any:
    """The merge of one field (`names`: the field names from the root, list elements not counted, as
    `schema.shape_at` takes them); ABSENT when the merge has no output (`w.out` left nil)."""
    if rhs is ABSENT:
        return lhs
    if isinstance(rhs, dict):
        if shape_at(lookup, names).atomic:
            return rhs
        return _merge_map(lhs, rhs, names, lookup)
    if isinstance(rhs, list):
        return _merge_list(lhs, rhs, names, lookup)
    if rhs is None:  # null is a map or a list of no items: a granular one that is live is merged with nothing
        if isinstance(lhs, dict) and lhs and not shape_at(lookup, names).atomic:
            return _merge_map(lhs, {}, names, lookup)
        if isinstance(lhs, list) and lhs and _associative(lhs, [], names, lookup) is not None:
            return _merge_list(lhs, [], names, lookup)
    return rhs


def _merge_map(lhs: Any, rhs: Obj, names: Names, lookup: StrategyLookup) -> Any:
    """`doMap` of a granular map (a struct or a map of values)."""
    live = lhs if isinstance(lhs, dict) else {}
    if not live and not rhs:  # empty or null on both sides: a leaf, the configuration's
        return rhs
    out: Obj = {}
    for key, value in live.items():
        merged = _merge(value, rhs.get(key, ABSENT), (*names, key), lookup)
        if merged is not ABSENT and merged is not None:
            out[key] = merged
    for key, value in rhs.items():
        if key not in live:
            merged = _merge(ABSENT, value, (*names, key), lookup)
            if merged is not ABSENT and merged is not None:
                out[key] = merged
    return out if out else ABSENT


Segmenter = Callable[[Any], str]


def _associative(lhs: Any, rhs: list[Any], names: Names, lookup: StrategyLookup) -> Segmenter | None:
    """How the elements of a `map` or `set` list are named (their FieldsV1 segment); None for a list that is
    one leaf: atomic by its type, or with elements its type cannot name (which the typed patch object refuses
    before any merge; a live list of them is taken as a leaf)."""
    shape = shape_at(lookup, names)
    live = lhs if isinstance(lhs, list) else []
    if shape.list_type == "map":
        keys = shape.keys
        if (not rhs or keyed(rhs, keys)) and (not live or keyed(live, keys)):
            return lambda element: key_segment(element, keys)
    elif shape.list_type == "set" and all(not isinstance(e, dict | list) for e in (*rhs, *live)):
        return lambda element: "v:" + orjson.dumps(element).decode()
    return None


def _merge_list(lhs: Any, rhs: list[Any], names: Names, lookup: StrategyLookup) -> Any:
    """`doList`: a leaf, or `visitListItems` of an associative list."""
    live = lhs if isinstance(lhs, list) else []
    if not live and not rhs:  # empty or null on both sides: a leaf, the configuration's
        return rhs
    segment = _associative(lhs, rhs, names, lookup)
    if segment is None:
        return rhs
    shape = shape_at(lookup, names)
    element_atomic = shape.element_atomic or shape.list_type == "set"

    def item(left: Any, right: Any) -> Any:
        """`mergeListItem`: an element of an atomic type is a leaf, a map element merges as a map."""
        if right is ABSENT:
            return left
        if element_atomic or not isinstance(right, dict):
            return right
        return _merge_map(left, right, names, lookup)

    r_segments = [segment(e) for e in rhs]
    r_elements: dict[str, Any] = {}
    for name, element in zip(r_segments, rhs, strict=True):
        r_elements.setdefault(name, element)  # a repeat is refused with the typed patch object
    l_segments = [segment(e) for e in live]
    l_elements: dict[str, Any] = {}
    for name, element in zip(l_segments, live, strict=True):
        l_elements[name] = _DUPLICATE_NULL if name in l_elements else element
    shared = iter([name for name in r_segments if name in l_elements])
    next_shared = next(shared, None)
    merged_rhs: set[str] = set()
    out: list[Any] = []

    def add(value: Any) -> None:
        if value is not ABSENT:
            out.append(value)

    li = ri = 0
    while li < len(l_segments) or ri < len(r_segments):
        if li < len(l_segments) and ri < len(r_segments):
            name = l_segments[li]
            if name == r_segments[ri]:  # the same element on both sides, in step
                merged_rhs.add(name)
                add(item(l_elements[name], r_elements[name]))
                li += 1
                ri += 1
                next_shared = next(shared, None)
                continue
            if name in r_elements and next_shared is not None and next_shared != name:
                li += 1  # shared, but the configuration puts it later: it comes then
                continue
        if li < len(l_segments):
            name = l_segments[li]
            if name not in r_elements:  # live only: it keeps its place (the element itself, repeats included)
                add(item(live[li], ABSENT))
                li += 1
                continue
            if name in merged_rhs:  # already merged with the configuration's
                li += 1
        if ri < len(r_segments):
            name = r_segments[ri]
            merged_rhs.add(name)
            add(item(l_elements.get(name, ABSENT), r_elements[name]))
            ri += 1
            if next_shared is not None and next_shared == name:
                next_shared = next(shared, None)
    return out if out else ABSENT
