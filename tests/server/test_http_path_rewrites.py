"""Stop 40 made the two walks every JSON body over HTTP goes through cheaper: the unknown-field walk
(`schema.unknown_fields`, which the Warn default of `fieldValidation` needs) first asks a walk that builds no path
(`schema._declared`), and `gotypes.well_typed` answers most strings, booleans and integers from a table instead of a
call each. Each must answer exactly what the plain version answers, for any body: the plain walks are kept here
(`schema._walk` still gives the paths; the old `_plain` is spelled out below), and both are fed the same bodies —
every field of real objects with an unknown key put in, every value replaced by values of every JSON kind, and
hypothesis-made schemas and values."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.server import gotypes, schema
from kjobs.server.gotypes import _INTS, _PLAIN_SCALARS, _part, _quantity, well_typed
from kjobs.server.patch import PatchError, strategic_merge
from tests.hypothesis_budget import examples
from tests.server.test_gotypes_plain import POD, REPLACEMENTS, STATUS_PATCH, STRATEGIES

JOB: Obj = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "j", "labels": {"a": "b"}, "annotations": {"x": "y"}},
    "spec": {
        "completions": 3,
        "parallelism": 2,
        "completionMode": "Indexed",
        "backoffLimitPerIndex": 1,
        "podFailurePolicy": {
            "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
        },
        "selector": {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]},
        "template": {
            "metadata": {"labels": {"a": "b"}},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "busybox",
                        "env": [{"name": "E", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                        "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Mi"}},
                        "livenessProbe": {"httpGet": {"port": 8080, "path": "/"}, "periodSeconds": 5},
                        "readinessProbe": {"tcpSocket": {"port": "http"}},
                    }
                ],
                "nodeSelector": {"disk": "ssd"},
                "volumes": [{"name": "v", "configMap": {"name": "cm", "items": [{"key": "k", "path": "p"}]}}],
                "restartPolicy": "Never",
            },
        },
    },
}

CONFIG_MAP: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"k": "v"}}

OBJECTS = [
    ("Pod", POD),
    ("Job", JOB),
    ("ConfigMap", CONFIG_MAP),
    ("PodStatusPatched", strategic_merge(copy.deepcopy(POD), copy.deepcopy(STATUS_PATCH), strategies=STRATEGIES)),
]
SCHEMAS = {
    "Pod": schema.schema_name("", "v1", "Pod"),
    "PodStatusPatched": schema.schema_name("", "v1", "Pod"),
    "Job": schema.schema_name("batch", "v1", "Job"),
    "ConfigMap": schema.schema_name("", "v1", "ConfigMap"),
}


def _plain_unknown(obj: Any, root: str | None, within: Obj | None = None) -> list[schema.FieldPath2]:
    """`schema.unknown_fields` as it was: always the walk that builds every path."""
    if root is None:
        return []
    found: list[schema.FieldPath2] = []
    defs = schema.schemas()
    if within is None:
        schema._walk(obj, defs[root], (), found, defs)
    else:
        schema._walk_within(obj, within, defs[root], (), found, defs)
    return found


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _nodes(item, (*path, i))


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _with_unknown_keys(obj: Obj) -> Iterator[Obj]:
    """`obj` with an unknown key put in each of its maps in turn (a label map takes any key: none found there),
    and each of its values replaced by a map and a list holding an unknown key."""
    for path, node in _nodes(obj):
        if isinstance(node, dict):
            out = copy.deepcopy(obj)
            _at(out, path)["zzUnknown"] = 1
            yield out
        if path:
            for new in ({"zzUnknown": {"a": 1}}, [{"zzUnknown": 1}], [[{"zzUnknown": 1}]]):
                out = copy.deepcopy(obj)
                _at(out, path[:-1])[path[-1]] = copy.deepcopy(new)
                yield out


def test_unknown_fields_of_real_objects_with_unknown_keys_anywhere() -> None:
    """Every map of a pod, a Job, a ConfigMap and a pod with a status patch merged in, given an unknown key, and
    every value replaced by one that holds an unknown key: the same paths as the plain walk, in the same order."""
    found = clean = 0
    for kind, obj in OBJECTS:
        root = SCHEMAS[kind]
        assert schema.unknown_fields(obj, root) == [] == _plain_unknown(obj, root)
        for body in _with_unknown_keys(obj):
            expected = _plain_unknown(body, root)
            assert schema.unknown_fields(copy.deepcopy(body), root) == expected
            found += bool(expected)
            clean += not expected
    assert found > 100 and clean > 100, (found, clean)


def test_unknown_fields_within_a_status_patch() -> None:
    """An agent's status patch with an unknown key put in each of its maps, or a value replaced by every value of
    REPLACEMENTS and by containers holding unknown keys, merged into the pod: walked within the patch, the same
    findings as the plain walk within the patch."""
    root = SCHEMAS["Pod"]
    patches = list(_with_unknown_keys(STATUS_PATCH))
    for path, _ in _nodes(STATUS_PATCH):
        if len(path) >= 2 and path[0] == "status" and not str(path[1]).startswith("$"):
            for new in REPLACEMENTS:
                patch = copy.deepcopy(STATUS_PATCH)
                _at(patch, path[:-1])[path[-1]] = copy.deepcopy(new)
                patches.append(patch)
    found = 0
    for patch in patches:
        try:
            merged = strategic_merge(copy.deepcopy(POD), copy.deepcopy(patch), strategies=STRATEGIES)
        except PatchError:
            continue
        expected = _plain_unknown(merged, root, patch)
        assert schema.unknown_fields(merged, root, within=patch) == expected
        found += bool(expected)
    assert found > 20, found


# Hypothesis-made schemas (maps with properties, maps of values, lists, `$ref`s, nodes that keep unknown fields)
# and values of every JSON kind over a few keys, so that declared and undeclared keys both come up at every depth.
_KEYS = st.sampled_from(["a", "b", "c"])
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["", "x"]))
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3), max_leaves=12
)
_LEAF_SCHEMAS = st.sampled_from(
    [
        {},
        {"type": "string"},
        {"x-kubernetes-preserve-unknown-fields": True},
        {"additionalProperties": True},
        {"$ref": "#/components/schemas/R"},
    ]
)
_SCHEMAS = st.recursive(
    _LEAF_SCHEMAS,
    lambda inner: st.one_of(
        st.dictionaries(_KEYS, inner, max_size=3).map(lambda props: {"properties": props}),
        inner.map(lambda sub: {"additionalProperties": sub}),
        inner.map(lambda sub: {"items": sub}),
        inner.map(lambda sub: {"allOf": [sub]}),
        st.tuples(st.dictionaries(_KEYS, inner, max_size=2), inner).map(
            lambda pair: {"properties": pair[0], "items": pair[1], "x-kubernetes-preserve-unknown-fields": False}
        ),
        st.dictionaries(_KEYS, inner, max_size=2).map(
            lambda props: {"properties": props, "x-kubernetes-preserve-unknown-fields": True}
        ),
    ),
    max_leaves=8,
)
_REFERRED = _SCHEMAS.filter(lambda node: "$ref" not in node and "allOf" not in node)
"""What `R` is: a definition that is not itself a reference (a `$ref` to itself would never resolve)."""
_KEPT: list[Any] = []
"""Every made schema stays alive: both walks remember resolved nodes by `id`, which a freed node's successor reuses
(the served schemas live as long as the process)."""


def _value_for(node: Any, defs: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values shaped by `node` (its properties, map values, list items), with now and then a key it does not
    declare or a value of any JSON kind, so that both walks go deep before they find something, or find nothing."""
    resolved = schema._resolve(node, defs)
    shaped: list[st.SearchStrategy[Any]] = []
    if depth < 4:
        props = resolved.get("properties")
        if props is not None:
            shaped.append(
                st.fixed_dictionaries(
                    {}, optional={**{k: _value_for(v, defs, depth + 1) for k, v in props.items()}, "zz": _SCALARS}
                )
            )
        extra = resolved.get("additionalProperties")
        if isinstance(extra, dict):
            shaped.append(st.dictionaries(_KEYS, _value_for(extra, defs, depth + 1), max_size=2))
        items = resolved.get("items")
        if items is not None:
            shaped.append(st.lists(_value_for(items, defs, depth + 1), max_size=3))
    return st.one_of(*shaped, *shaped, _VALUES) if shaped else _VALUES


@settings(max_examples=examples(500), deadline=None)
@given(data=st.data())
def test_declared_answers_as_the_plain_walk_on_made_schemas(data: st.DataObject) -> None:
    """`_declared` (and `_declared_within`, for a patch that is a map) is True exactly when the plain walk finds
    nothing, for any schema and value."""
    node, referred = data.draw(_SCHEMAS), data.draw(_REFERRED)
    defs = {"R": referred}
    _KEPT.append((node, defs))
    value, patch = data.draw(_value_for(node, defs)), data.draw(_value_for(node, defs))
    checker = schema._checker(node, defs)
    found: list[schema.FieldPath2] = []
    schema._walk(value, node, (), found, defs)
    assert schema._declared(value, checker) == (not found)
    if isinstance(patch, dict):
        within: list[schema.FieldPath2] = []
        schema._walk_within(value, patch, node, (), within, defs)
        assert schema._declared_within(value, patch, checker) == (not within)


def _old_plain(value: Any, go_type: str, within: Obj | None) -> bool:
    """`gotypes._plain` before stop 40: a call for every value."""
    if value is None:
        return True
    category, underlying, detail = gotypes._resolve(go_type)
    kind = type(value)
    if category == "struct" or category == "map":
        if kind is not dict:
            return False
        fields = detail[1] if category == "struct" else None
        for key, item in value.items():
            if within is not None and key not in within:
                continue
            field = detail if fields is None else fields.get(key)
            if field is not None and item is not None and not _old_plain(item, field, _part(within, key)):
                return False
        return True
    if category == "scalar":
        if kind not in _PLAIN_SCALARS.get(underlying, ()):
            return False
        if kind is int and underlying in _INTS:
            low, high = _INTS[underlying]
            return bool(low <= value <= high)
        return True
    if category == "list":
        if kind is not list:
            return False
        return all(item is None or _old_plain(item, detail, None) for item in value)
    if category == "skip":
        return True
    if category == "quantity":
        try:
            _quantity(value)
        except gotypes._Abort:
            return False
        return True
    if category == "intorstring":
        return kind is str or (kind is int and -(2**31) <= value <= 2**31 - 1)
    if category in gotypes._CANONICAL:
        return kind is str and bool(gotypes._CANONICAL[category].match(value))
    return kind is str


def _old_well_typed(obj: Obj, kind: str, group: str, within: Obj | None = None) -> bool:
    root = gotypes.ROOTS.get((group, kind))
    return root is None or _old_plain(obj, root, within)


INT_EDGES = [2**31 - 1, -(2**31), -(2**31) - 1, 2**32 - 1, 2**32, 2**64 - 1, 2**64, -1.0]
TEXT_EDGES = ["2026-12-05T02:00:01Z", "2026-12-05T02:00:01.000000Z", "2026-12-05 02:00:01", "1Gi", " 1", "-1"]
EDGES = [*REPLACEMENTS, *INT_EDGES, *TEXT_EDGES]
"""REPLACEMENTS and the edges of the other integer types, times as Go writes them and not, and quantities."""


def test_well_typed_answers_as_before_on_every_value_of_pods_and_jobs() -> None:
    """Every value of a pod, a Job and a status patch merged into a pod replaced by every value of EDGES (and
    each object's maps given an unknown key): `well_typed` says what it said with a call for every value."""
    plain = refused = 0
    cases: list[tuple[str, str, Obj, Obj | None]] = []
    for kind, group, obj in (("Pod", "", POD), ("Job", "batch", JOB)):
        for path, _ in _nodes(obj):
            if path:
                for new in EDGES:
                    out = copy.deepcopy(obj)
                    _at(out, path[:-1])[path[-1]] = copy.deepcopy(new)
                    cases.append((kind, group, out, None))
        cases += [(kind, group, body, None) for body in _with_unknown_keys(obj)]
    for path, _ in _nodes(STATUS_PATCH):
        if len(path) >= 2 and path[0] == "status" and not str(path[1]).startswith("$"):
            for new in EDGES:
                patch = copy.deepcopy(STATUS_PATCH)
                _at(patch, path[:-1])[path[-1]] = copy.deepcopy(new)
                try:
                    merged = strategic_merge(copy.deepcopy(POD), copy.deepcopy(patch), strategies=STRATEGIES)
                except PatchError:
                    continue
                cases.append(("Pod", "", merged, patch))
    for kind, group, body, patch in cases:
        expected = _old_well_typed(body, kind, group, patch)
        assert well_typed(body, kind, group=group, within=patch) == expected, (kind, body, patch)
        plain += expected
        refused += not expected
    assert plain > 500 and refused > 500, (plain, refused)


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_well_typed_answers_as_before_on_made_values(data: st.DataObject) -> None:
    """A value of any JSON kind (hypothesis-made, with the integer edges) at a random place of a pod or a Job."""
    kind, group, obj = data.draw(st.sampled_from([("Pod", "", POD), ("Job", "batch", JOB)]))
    paths = [path for path, _ in _nodes(obj) if path]
    path = data.draw(st.sampled_from(paths))
    keys = st.sampled_from(["name", "image", "a", "cpu"])
    leaves = st.one_of(_SCALARS, st.sampled_from(INT_EDGES + TEXT_EDGES))
    new = data.draw(st.recursive(leaves, lambda v: st.lists(v, max_size=2) | st.dictionaries(keys, v, max_size=2)))
    out = copy.deepcopy(obj)
    _at(out, path[:-1])[path[-1]] = new
    assert well_typed(out, kind, group=group) == _old_well_typed(out, kind, group)
