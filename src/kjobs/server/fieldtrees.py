"""What an update changed, as a FieldsV1 tree, and the ownership operations on such trees.

Every write records in `managedFields` that its manager now owns the fields it changed and that other
managers lose them. Done with path sets, that means building a tuple per changed leaf, encoding the set and
testing every other manager's tree leaf by leaf. Here the change is built as a tree in the walk that finds it,
and ownership is moved by walking trees side by side: a manager whose tree shares no top-level field with the
change (the kubelet's status against the Job controller's metadata and spec) is passed over at the first level.

The results equal the path-set definitions in `kjobs.server.apply` (a leaf is a node with no children):
`changed_fields_v1` is `to_fields_v1` of the leaves of `field_set(new)` that `differs` from `old`, and
`overlaps`, `without`, `covers` and `union` are the set operations on `from_fields_v1` of their trees, with
SMD's reading of a member's `.`: `{}` and `{".": {}}` name the same path (the member itself), so a manager that
owned an empty map and then sets a key in it owns both (`{".": {}, "f:key": {}}`), and keeps the map when the key
goes, as `fieldpath.Set` does (merge/update.go unions Added and Modified into the manager's set).
"""

from __future__ import annotations

from typing import Any

import orjson

from kjobs.api.types import Obj
from kjobs.memo import Memo
from kjobs.server.apply import IGNORED_META, IGNORED_TOP, key_segment, keyed
from kjobs.server.patch import StrategyLookup
from kjobs.server.schema import CONTAINERS, shape_at


def changed_fields_v1(old: Obj, new: Obj, lookup: StrategyLookup, *, status: bool | None = None) -> Obj:
    """The FieldsV1 tree of `TypedValue.Compare(old, new)`'s Added and Modified (typed/compare.go): the leaves
    `new` sets with a value that reads differently in `old`, and the `.` member of every granular map or list
    `old` does not have. Both are read as Go renders them: a non-pointer struct or a slice without omitempty
    is there even when unset (`schema.Shape.always`); an atomic map or list is one leaf.

    `status`: True for the status field alone (a /status write), False for everything but status (a main
    resource write of a kind with a status subresource), None for every field. Subtrees that compare equal are
    skipped whole (a dict comparison runs in C, and a copy-on-write update shares them by identity)."""
    root: Obj = {}
    for key in sorted(new):  # built in key order, as a tree encoded from a sorted path set is
        value = new[key]
        if key in IGNORED_TOP or (status is not None and (key == "status") != status):
            continue
        before = old.get(key)
        present = key in old or key in shape_at(lookup, ()).always
        if before == value and present:
            continue
        if key == "metadata" and isinstance(value, dict):
            old_meta = before if isinstance(before, dict) else {}
            meta: Obj = {}
            for mkey in sorted(value):
                mvalue = value[mkey]
                if mkey not in IGNORED_META and (old_meta.get(mkey) != mvalue or mkey not in old_meta):
                    _changed(
                        old_meta.get(mkey), mvalue, meta, f"f:{mkey}", ("metadata", mkey), lookup, mkey in old_meta
                    )
            if meta:
                root["f:metadata"] = meta
            continue
        _changed(before, value, root, f"f:{key}", (key,), lookup, present)
    return root


def _changed(
    before: Any,
    value: Any,
    parent: Obj,
    segment: str,
    names: tuple[str, ...],
    lookup: StrategyLookup,
    present: bool,
) -> None:
    """Add under `parent[segment]` the changed members of `value` (known to differ from `before`); `present`:
    whether the old object has the field (a granular map or list it lacks gets its `.`)."""
    if isinstance(value, dict) and value:
        shape = shape_at(lookup, names)
        if shape.atomic:
            parent.setdefault(segment, {})
            return
        old = before if isinstance(before, dict) and present else {}
        flat = None if old or (shape.always and not present) else _flat_tree(value, element=not present)
        if flat is not None:
            _attach(parent, segment, flat)
            return
        node: Obj = {} if present else {".": {}}
        _changed_fields(old, value, node, names, lookup, present)
        _attach(parent, segment, node)
        return
    if isinstance(value, list) and value:
        shape = shape_at(lookup, names)
        if shape.list_type:
            old_list = before if isinstance(before, list) and present else None
            if shape.list_type == "map" and keyed(value, shape.keys):
                _changed_elements(old_list, value, parent, segment, names, shape.keys, lookup, present)
                return
            if shape.list_type == "set" and all(not isinstance(e, (dict, list)) for e in value):
                node = {} if present else {".": {}}
                for element in value:
                    if old_list is None or element not in old_list:
                        node["v:" + orjson.dumps(element).decode()] = {}
                _attach(parent, segment, _sorted(node))
                return
    if _changed_leaf(before, value, names, lookup, present):
        parent.setdefault(segment, {})


def _changed_leaf(before: Any, value: Any, names: tuple[str, ...], lookup: StrategyLookup, present: bool) -> bool:
    """Whether a leaf (a scalar, null, an atomic or an empty map or list) is Added or Modified. An empty granular
    map or list that was not empty is neither (compare.go walks its items, which are Removed); an unset struct is
    `{}` on both sides."""
    if not present:
        return True
    if type(value) is dict and not value:
        if before is None or (type(before) is dict and before and not shape_at(lookup, names).atomic):
            return False
    elif type(value) is list and not value and type(before) is list and before:
        return shape_at(lookup, names).list_type not in ("map", "set") and before != value
    return bool(before != value)


def _changed_fields(
    old: Obj, value: Obj, node: Obj, names: tuple[str, ...], lookup: StrategyLookup, present: bool
) -> None:
    """Add to `node`, in key order, the changed members of each field of the object `value` against `old`
    (`present`: whether the old object has this object at all)."""
    for key in sorted(value):
        item, was = value[key], old.get(key)
        there = present and (key in old or key in shape_at(lookup, names).always)
        if was == item and there:
            continue
        if isinstance(item, CONTAINERS):
            if item:
                _changed(was, item, node, f"f:{key}", (*names, key), lookup, there)
            elif _changed_leaf(was, item, (*names, key), lookup, there):
                node[f"f:{key}"] = {}
        elif was != item or not there:  # a scalar leaf, checked here rather than in a call per leaf
            node[f"f:{key}"] = {}
    if not present:  # a new object: Go renders the structs it leaves unset, `{}` where there was nothing
        always = shape_at(lookup, names).always
        for key in always:
            if key not in value:
                node[f"f:{key}"] = {}
        if always:
            node_sorted = _sorted(node)
            node.clear()
            node.update(node_sorted)


def _changed_elements(
    old_list: list[Any] | None,
    value: list[Any],
    parent: Obj,
    segment: str,
    names: tuple[str, ...],
    keys: tuple[tuple[str, Any], ...],
    lookup: StrategyLookup,
    present: bool,
) -> None:
    """The changed members of a list keyed by `keys`: a new element owns its `.` marker and every field
    (an atomic element is one leaf); the list owns its own `.` when the old object lacks it."""
    node: Obj = {}
    shape = shape_at(lookup, names)
    for listed in value:
        # Like `value_at`, a path names the first element with its key, even among duplicates.
        element = _element(value, keys, listed) or listed
        element_segment = key_segment(element, keys)
        match = _element(old_list, keys, element)
        existing = node.get(element_segment)
        if shape.element_atomic:
            if match != element:
                node[element_segment] = {}
            continue
        if match is None and existing is None and listed is element and not shape.always:
            flat = _flat_tree(element, element=True)
            if flat is not None:  # a new condition, a new address: the same tree for every one of its shape
                node[element_segment] = flat
                continue
        element_node: Obj = _sorted(existing) if existing else {}  # a copy: what is attached may be shared
        if match is None:
            element_node["."] = {}
        if listed is not element:  # a repeated key: compare.go compares the first element alone
            continue
        if match != element:
            _changed_fields(match or {}, element, element_node, names, lookup, match is not None)
        _attach(node, element_segment, element_node)
    if node and not present:
        node["."] = {}
    _attach(parent, segment, {key: node[key] for key in sorted(node)})


_FLAT_TREES: Memo[tuple[bool, tuple[str, ...]], Obj] = Memo(1024)


def _flat_tree(value: Obj, *, element: bool) -> Obj | None:
    """The changed-fields tree of a map new to the object whose every field holds a scalar (a condition, an IP
    entry): a leaf per field, and the element's own `.` for a new list element. It depends on the field names
    alone, so it is remembered by them and shared, read-only, by the objects that have one of that shape (the
    status of every pod a kubelet starts). None when some field holds a map or a list, or, in a map that is not
    a new element, null: a new element has no old value, so a null field there is Added as any scalar is (the
    kubelet's conditions carry `lastProbeTime: null`), whereas in a map the old object has, a null struct field
    (`schema.Shape.always`) reads as unset on both sides."""
    for item in value.values():
        if type(item) is dict or type(item) is list or (item is None and not element):
            return None
    key = (element, tuple(value))
    tree = _FLAT_TREES.get(key)
    if tree is None:
        tree = {f"f:{name}": {} for name in sorted(value)}
        if element:
            tree = {".": {}, **tree}
        _FLAT_TREES.put(key, tree)
    return tree


def _element(elements: list[Any] | None, keys: tuple[tuple[str, Any], ...], probe: Obj) -> Obj | None:
    """The first element of `elements` with `probe`'s keys (how `value_at` finds it); a key left out reads as its
    default."""
    if elements is None:
        return None
    first = keys[0][0]
    if len(keys) == 1:
        want = probe.get(first, keys[0][1])
        for e in elements:
            if type(e) is dict and first in e and e[first] == want:
                return e
        return None
    wanted = [(key, probe.get(key, default), default) for key, default in keys]
    for e in elements:
        if type(e) is dict and first in e and all(e.get(key, default) == want for key, want, default in wanted):
            return e
    return None


def _attach(parent: Obj, segment: str, node: Obj) -> None:
    """Put a non-empty `node` under `segment`, merged with what is there (an element met twice)."""
    if not node:
        return
    existing = parent.get(segment)
    parent[segment] = union(existing, node) if existing else node


def _sorted(tree: Obj) -> Obj:
    """Keys in order at every level, as a tree encoded from a sorted path set has them (for the rare trees
    not built in order)."""
    return {key: _sorted(tree[key]) if tree[key] else {} for key in sorted(tree)}


def _inner(node: Any) -> bool:
    """Whether a tree node has children (otherwise it is a leaf)."""
    return isinstance(node, dict) and bool(node)


def overlaps(tree: Any, change: Obj) -> bool:
    """Whether some path of `change` is a path of `tree`: the owner of `tree` loses fields to the change.

    A member's own path is `{}` (no children) or `.` (beside children), as SMD's `fieldpath.Set` serializes it
    (`fieldpath/serialize.go`); where both sides have children, `.` is compared as one more key."""
    if not isinstance(tree, dict):
        return False
    for segment, child in change.items():
        owned = tree.get(segment)
        if owned is None:
            continue
        if not child:
            if not owned or "." in owned:
                return True
        elif not owned:
            if "." in child:
                return True
        elif overlaps(owned, child):
            return True
    return False


def without(tree: Obj, change: Obj) -> Obj:
    """`tree` less the paths of `change` (branches left with no path go too; a member left with its own path
    alone is written `{}`)."""
    result: Obj = {}
    for segment in sorted(tree):
        owned = tree[segment]
        child = change.get(segment)
        if child is None:
            result[segment] = owned
            continue
        if not owned:
            if child and "." not in child:  # `change` has paths below this member only
                result[segment] = {}
            continue
        # a `change` leaf takes the member's own path and leaves its children
        rest = without(owned, child) if child else {key: owned[key] for key in owned if key != "."}
        if rest:
            result[segment] = {} if len(rest) == 1 and "." in rest else rest
    return result


def covers(tree: Any, change: Obj) -> bool:
    """Whether every path of `change` is a path of `tree`: its owner already owns all of the change."""
    if not isinstance(tree, dict):
        return not change
    for segment, child in change.items():
        owned = tree.get(segment)
        if owned is None:
            return False
        if not child:
            if owned and "." not in owned:
                return False
        elif not owned:
            if len(child) != 1 or "." not in child:
                return False
        elif not covers(owned, child):
            return False
    return True


def union(a: Any, b: Obj) -> Obj:
    """The tree of both trees' paths; a branch `b` does not reach is shared with `a`, not copied. A member one
    side owns alone (`{}`) and the other with children keeps its own path (`.`)."""
    if not b:
        return a if isinstance(a, dict) else {}
    if not _inner(a):
        return b
    merged = dict(a)
    for key, child in b.items():
        mine = a.get(key)
        if mine is None:
            merged[key] = child
        elif mine and child:
            merged[key] = union(mine, child)
        elif mine or child:
            inner = mine or child
            merged[key] = inner if "." in inner else {".": {}, **inner}
    return {key: merged[key] for key in sorted(merged)}
