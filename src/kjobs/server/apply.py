"""Field ownership for server-side apply, in `managedFields` (`FieldsV1`), as pure functions.

A field set is a set of paths; a path is a tuple of FieldsV1 segments: `f:<name>` for an object field or map
key, `k:{"name":"main"}` for a list element identified by its merge key(s), `v:<json>` for an element of a set
of scalars. Leaves are scalars, atomic lists and empty objects; an element also owns its `.` marker.

What this module answers: the fields an object (or an applied configuration) sets; the value at a path;
the conflicts an apply would have with other managers (same field, different value); and the fields an
apply stopped mentioning (removed unless another manager still owns them). That is a simplified version
of structured-merge-diff: enough for `kubectl apply --server-side` ownership, conflicts and removals.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import orjson

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.memo import Memo
from kjobs.server.patch import StrategyLookup
from kjobs.server.schema import CONTAINERS, shape_at

Segment = str
FieldPath = tuple[Segment, ...]
IGNORED_TOP = {"apiVersion", "kind"}
IGNORED_META = {
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
}


def key_segment(element: Obj, keys: tuple[tuple[str, Any], ...]) -> Segment:
    """`k:{"type":"Ready"}`: the segment of a keyed list's element, by every list-map key, sorted by name (a key it
    omits by its default, typed/helpers.go `keyedAssociativeListItemToPathElement`)."""
    if len(keys) == 1:
        value = element.get(keys[0][0], keys[0][1])
        if type(value) is str:  # a condition type, a container name, an IP: the same few, over and over
            return _str_key_segment(keys[0][0], value)
    named = {}
    for key, default in keys:
        value = element.get(key, default)
        if value is not None or key in element:
            named[key] = value
    return "k:" + orjson.dumps(named, option=orjson.OPT_SORT_KEYS).decode()


def keyed(value: list[Any], keys: tuple[tuple[str, Any], ...]) -> bool:
    """Whether every element of a keyed list can be named by its keys (a map with the first key)."""
    return bool(keys) and all(isinstance(e, dict) and keys[0][0] in e for e in value)


@lru_cache(maxsize=4096)
def _str_key_segment(merge_key: str, value: str) -> Segment:
    return "k:" + orjson.dumps({merge_key: value}).decode()


def field_set(obj: Obj, strategies: StrategyLookup, *, include_status: bool = False) -> set[FieldPath]:
    """The leaf paths `obj` sets (server-owned metadata, apiVersion/kind and, unless asked, status excluded)."""
    found: set[FieldPath] = set()
    for key, value in obj.items():
        if key in IGNORED_TOP or (key == "status" and not include_status):
            continue
        if key == "metadata" and isinstance(value, dict):
            for mkey, mvalue in value.items():
                if mkey not in IGNORED_META:
                    collect(mvalue, ("f:metadata", f"f:{mkey}"), ("metadata", mkey), strategies, found)
            continue
        collect(value, (f"f:{key}",), (key,), strategies, found)
    return found


def fields_v1_of(obj: Obj, strategies: StrategyLookup, *, include_status: bool = False) -> Obj:
    """`to_fields_v1(field_set(obj))` in one walk: the FieldsV1 tree of everything `obj` sets (for creates)."""
    root: Obj = {}
    for key in sorted(obj):
        value = obj[key]
        if key in IGNORED_TOP or (key == "status" and not include_status):
            continue
        if key == "metadata" and isinstance(value, dict):
            meta: Obj = {}
            for mkey in sorted(value):
                if mkey in _REPEATED_META:  # the same owner and finalizers on every pod of a Job
                    meta[f"f:{mkey}"] = _spec_tree(value[mkey], ("metadata", mkey), strategies, present=False)
                elif mkey in _STRING_MAPS:
                    meta[f"f:{mkey}"] = _string_map_tree(value[mkey], ("metadata", mkey), strategies)
                elif mkey not in IGNORED_META:
                    meta[f"f:{mkey}"] = _tree(value[mkey], ("metadata", mkey), strategies)
            if meta:
                root["f:metadata"] = meta
            continue
        present = key in shape_at(strategies, ()).always
        if key == "spec" and isinstance(value, dict) and value and present:
            spec = _whole_spec_tree(value, strategies)
            if spec:
                root["f:spec"] = spec
            continue
        tree = _tree(value, (key,), strategies, present=present)
        if tree or not (present and (value == {} or value is None)):  # as in the zero value: no change
            root[f"f:{key}"] = tree
    return {k: root[k] for k in sorted(root)}


_REPEATED_META = frozenset({"ownerReferences", "finalizers"})
"""Metadata fields whose tree is remembered like a spec field's (labels and annotations vary per object)."""

_STRING_MAPS = frozenset({"labels", "annotations"})
_MAP_TREES: Memo[tuple[str, ...], Obj] = Memo(512)


def _string_map_tree(value: Any, names: tuple[str, ...], lookup: StrategyLookup) -> Obj:
    """`_tree` of labels or annotations: a leaf per key whatever its value, so objects that differ only in values
    (a Job's pods, in their completion index) share one tree, remembered by the keys."""
    if type(value) is not dict or not value or not all(type(v) is str for v in value.values()):
        return _tree(value, names, lookup)
    keys = tuple(value)
    tree = _MAP_TREES.get(keys)
    return tree if tree is not None else _MAP_TREES.put(keys, _tree(value, names, lookup))


_SPEC_TREES: Memo[tuple[tuple[str, ...], bytes, StrategyLookup], Obj] = Memo(512)


def _whole_spec_tree(spec: Obj, lookup: StrategyLookup) -> Obj:
    """The tree of a whole spec, remembered by its JSON with the scalar fields blanked: a scalar's subtree is a
    leaf whatever its value, so the pods of one template, which differ in `hostname`, share one entry."""
    shape = {k: v if isinstance(v, CONTAINERS) or v is None else 0 for k, v in spec.items()}  # null: no change
    try:
        key = (("spec",), orjson.dumps(shape), lookup)
    except TypeError:
        key = None
    tree = _SPEC_TREES.get(key) if key is not None else None
    if tree is None:
        always = shape_at(lookup, ("spec",)).always
        tree = {}
        for k in sorted(spec):
            present = k in always
            subtree = _spec_tree(spec[k], ("spec", k), lookup, present=present)
            if subtree or not (present and (spec[k] == {} or spec[k] is None)):  # as in the zero value
                tree[f"f:{k}"] = subtree
        if key is not None:
            _SPEC_TREES.put(key, tree)
    return tree


def _spec_tree(value: Any, names: tuple[str, ...], lookup: StrategyLookup, *, present: bool) -> Obj:
    """`_tree` of one field of a spec (or of `_REPEATED_META`), remembered by its JSON: the objects a controller
    creates from one template (a Job's pods) repeat the same containers, volumes, tolerations, owner and finalizers,
    and a tree depends only on the JSON (keys, merge keys, list values). A remembered tree is shared by the objects
    that use it, which, like all stored objects, are read-only."""
    if not isinstance(value, CONTAINERS) or not value:
        return _tree(value, names, lookup, present=present)
    try:
        key = (names, orjson.dumps(value), lookup)  # `present` follows from `names`
    except TypeError:
        return _tree(value, names, lookup, present=present)
    tree = _SPEC_TREES.get(key)
    return tree if tree is not None else _SPEC_TREES.put(key, _tree(value, names, lookup, present=present))


def _tree(value: Any, names: tuple[str, ...], lookup: StrategyLookup, *, present: bool = False) -> Obj:
    """The FieldsV1 subtree under a field holding `value`, as `TypedValue.Compare` against the kind's Go zero
    value gives it on create (typed/compare.go): `present` says the field is in the zero value (a non-pointer
    struct, a slice without omitempty). A granular map or list that is not there gets its own `.` member, an
    atomic map (`x-kubernetes-map-type: atomic`) or list is one leaf, and so is an empty map or list."""
    if isinstance(value, dict) and value:
        shape = shape_at(lookup, names)
        if shape.atomic:
            return {}
        always = shape.always
        node: Obj = {} if present else {".": {}}
        for key in value:
            item = value[key]
            if isinstance(item, CONTAINERS):
                child = _tree(item, (*names, key), lookup, present=present and key in always)
                if child or not (present and key in always and item == {}):
                    node[f"f:{key}"] = child
            elif item is not None or not (present and key in always):
                node[f"f:{key}"] = {}
        if not present:  # a map new to the object: Go renders its structs even when unset
            for key in always:
                if key not in value:
                    node[f"f:{key}"] = {}
        return {k: node[k] for k in sorted(node)}
    if isinstance(value, list) and value:
        shape = shape_at(lookup, names)
        if shape.list_type:
            if shape.list_type == "map" and keyed(value, shape.keys):
                elements: Obj = {}
                for element in value:
                    segment = key_segment(element, shape.keys)
                    if segment in elements:  # a repeated key: compare.go takes the first element alone
                        continue
                    if shape.element_atomic:
                        elements[segment] = {}
                        continue
                    node = elements[segment] = {".": {}}
                    for key, item in element.items():
                        node[f"f:{key}"] = _tree(item, (*names, key), lookup)
                    for key in shape.always:
                        if key not in element:
                            node.setdefault(f"f:{key}", {})
                tree = {k: {s: elements[k][s] for s in sorted(elements[k])} for k in sorted(elements)}
                return tree if present else {".": {}, **tree}
            if shape.list_type == "set" and all(not isinstance(e, (dict, list)) for e in value):
                tree = {s: {} for s in sorted({"v:" + orjson.dumps(e).decode() for e in value})}
                return tree if present else {".": {}, **tree}
    return {}


def collect(value: Any, path: FieldPath, names: tuple[str, ...], lookup: StrategyLookup, found: set[FieldPath]) -> None:
    """Add to `found` the paths `value` sets under `path` (`names`: the field names, for strategies), as
    `TypedValue.ToFieldSet` lists an applied configuration's (typed/tofieldset.go): the leaves, every list
    element (its `.`), an atomic map or list as one leaf, a null or an empty map as a leaf, and nothing for an
    empty granular list."""
    if isinstance(value, dict):
        if not value or shape_at(lookup, names).atomic:  # an empty map is owned too (visitMapItems)
            found.add(path)
            return
        for key, item in value.items():
            collect(item, (*path, f"f:{key}"), (*names, key), lookup, found)
        return
    if isinstance(value, list):
        shape = shape_at(lookup, names)
        if shape.list_type:
            if shape.list_type == "map" and keyed(value, shape.keys):
                element_atomic = shape.element_atomic
                for element in value:
                    element_path = (*path, key_segment(element, shape.keys))
                    if element_atomic:
                        found.add(element_path)
                        continue
                    found.add((*element_path, "."))
                    for key, item in element.items():
                        collect(item, (*element_path, f"f:{key}"), (*names, key), lookup, found)
                return
            if shape.list_type == "set" and all(not isinstance(e, (dict, list)) for e in value):
                for element in value:
                    found.add((*path, "v:" + orjson.dumps(element).decode()))
                return
    found.add(path)


def differs(a: Any, b: Any, path: FieldPath) -> bool:
    """Whether `path` reads differently in `a` and `b` (an element's `.` marker compares existence only)."""
    if path and path[-1] == ".":
        return (value_at(a, path) is None) != (value_at(b, path) is None)
    return bool(value_at(a, path) != value_at(b, path))


def value_at(obj: Any, path: FieldPath) -> Any:
    """The value at `path` (None when absent); an element's `.` marker reads as the element."""
    node = obj
    for segment in path:
        if segment == ".":
            return node
        if node is None:
            return None
        kind, _, rest = segment.partition(":")
        if kind == "f":
            node = node.get(rest) if isinstance(node, dict) else None
        elif kind == "k":
            want = orjson.loads(rest)
            node = (
                next((e for e in node if isinstance(e, dict) and all(e.get(k) == v for k, v in want.items())), None)
                if isinstance(node, list)
                else None
            )
        elif kind == "v":
            want = orjson.loads(rest)
            node = want if isinstance(node, list) and want in node else None
    return node


def remove_at(obj: Obj, path: FieldPath) -> None:
    """Delete the field (or list element) at `path` from `obj` in place, if present."""
    parents: list[Any] = [obj]
    node: Any = obj
    trimmed = path[:-1] if path and path[-1] == "." else path
    for segment in trimmed[:-1]:
        node = value_at(node, (segment,))
        if node is None:
            return
        parents.append(node)
    last = trimmed[-1] if trimmed else None
    if last is None:
        return
    kind, _, rest = last.partition(":")
    if kind == "f" and isinstance(node, dict):
        node.pop(rest, None)
    elif kind in ("k", "v") and isinstance(node, list):
        target = value_at(node, (last,))
        if target is not None:
            node.remove(target)


def set_at(obj: Obj, path: FieldPath, value: Any) -> None:
    """Put `value` at the field `path` names in `obj`, in place, where its parent is present."""
    parent = value_at(obj, path[:-1])
    kind, _, rest = path[-1].partition(":")
    if kind == "f" and isinstance(parent, dict):
        parent[rest] = value


def to_fields_v1(paths: set[FieldPath]) -> Obj:
    """Encode a field set as the FieldsV1 JSON tree."""
    root: Obj = {}
    for path in sorted(paths):
        node = root
        for segment in path:
            node = node.setdefault(segment, {})
    return root


def from_fields_v1(tree: Any) -> set[FieldPath]:
    """Decode a FieldsV1 tree to its leaf paths."""
    found: set[FieldPath] = set()

    def walk(node: Any, prefix: FieldPath) -> None:
        if not isinstance(node, dict) or not node:
            if prefix:
                found.add(prefix)
            return
        for segment, child in node.items():
            walk(child, (*prefix, segment))

    walk(tree, ())
    return found


def format_path(path: FieldPath) -> str:
    """The path as Kubernetes prints it in conflicts: `.spec.template.spec.containers[name="main"].image`."""
    text = ""
    for segment in path:
        kind, _, rest = segment.partition(":")
        if kind == "f":
            text += f".{rest}"
        elif kind == "k":
            keys = orjson.loads(rest)
            text += "[" + ",".join(f"{k}={orjson.dumps(v).decode()}" for k, v in keys.items()) + "]"
        elif kind == "v":
            text += f"[={rest}]"
    return text


def conflicts(
    current: Obj, config: Obj, applied: set[FieldPath], others: list[tuple[Obj, set[FieldPath]]]
) -> list[tuple[Obj, FieldPath]]:
    """(manager entry, path) for every applied field another manager owns with a different current value."""
    found = []
    for entry, owned in others:
        for path in sorted(applied & owned):
            if path[-1] == ".":  # owning an element's existence never conflicts: both sides want it there
                continue
            if value_at(current, path) != value_at(config, path):
                found.append((entry, path))
    return found


def conflict_error(found: list[tuple[Obj, FieldPath]]) -> ApiError:
    """The apiserver's 409 for apply conflicts (`FieldManagerConflict` causes)."""

    def who(entry: Obj) -> str:
        """The manager as `printManager` names it: an Update manager with the version it wrote through (its
        identifier carries no time), an applier by name alone (its identifier carries no version)."""
        text = f'"{entry.get("manager", "")}"'
        if entry.get("subresource"):
            text += f' with subresource "{entry["subresource"]}"'
        if entry.get("operation") == "Apply":
            return text
        return f"{text} using {entry.get('apiVersion', '')}"

    causes = [  # a StatusCause's type is `reason` in JSON (metav1 types.go: `Type CauseType json:"reason"`)
        {"reason": "FieldManagerConflict", "message": f"conflict with {who(e)}", "field": format_path(p)}
        for e, p in found
    ]
    if len(found) == 1:
        entry, path = found[0]
        message = f"Apply failed with 1 conflict: conflict with {who(entry)}: {format_path(path)}"
    else:
        lines: list[str] = []
        by_manager: dict[str, list[str]] = {}
        for entry, path in found:
            by_manager.setdefault(who(entry), []).append(format_path(path))
        for manager in sorted(by_manager):
            lines.append(f"conflicts with {manager}:")
            lines.extend(f"- {p}" for p in by_manager[manager])
        message = f"Apply failed with {len(found)} conflicts: " + "\n".join(lines)
    return ApiError(409, "Conflict", message, details={"causes": causes})
