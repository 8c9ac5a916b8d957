"""`changed_fields_v1` skips unchanged subtrees, and must encode exactly the paths the plain definition names:
the leaves of the new object whose value reads differently in the old one. The tree operations that move
ownership must equal the set operations on decoded trees."""

from __future__ import annotations

import copy
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.server import apply, fieldtrees, schema
from tests.hypothesis_budget import examples

POD_STRATEGIES = schema.strategies_for(schema.schema_name("", "v1", "Pod"))

BASE_POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p",
        "namespace": "default",
        "labels": {"app": "x", "batch.kubernetes.io/job-completion-index": "0"},
        "finalizers": ["batch.kubernetes.io/job-tracking"],
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u1"}],
    },
    "spec": {
        "restartPolicy": "Never",
        "containers": [
            {"name": "main", "image": "busybox", "command": ["true"], "env": [{"name": "A", "value": "1"}]},
            {"name": "side", "image": "busybox", "ports": [{"containerPort": 80, "protocol": "TCP"}]},
        ],
        "tolerations": [{"key": "k", "operator": "Exists"}],
    },
    "status": {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "True"}],
        "containerStatuses": [{"name": "main", "ready": False, "state": {"waiting": {"reason": "ContainerCreating"}}}],
    },
}

_PATHS = [
    ("metadata", "labels", "app"),
    ("metadata", "labels", "new"),
    ("metadata", "finalizers"),
    ("metadata", "annotations"),
    ("spec", "containers"),
    ("spec", "nodeName"),
    ("spec", "tolerations"),
    ("status", "phase"),
    ("status", "conditions"),
    ("status", "containerStatuses"),
    ("status", "startTime"),
    ("status",),
]

_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["a", "main", "side", "Ready", "True"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["name", "type", "status", "image", "x"]), inner, max_size=3)
    ),
    max_leaves=6,
)
_lists = st.lists(
    st.fixed_dictionaries(
        {"name": st.sampled_from(["main", "side", "third"]), "type": st.sampled_from(["Ready", "PodScheduled"])},
        optional={
            "image": st.sampled_from(["a", "b"]),
            "status": st.sampled_from(["True", "False"]),
            "lastProbeTime": st.none(),  # the kubelet's conditions carry it null
            "reason": st.none() | st.just("PodCompleted"),
        },
    ),
    max_size=3,
)


def _mutate(pod: dict[str, Any], edits: list[tuple[tuple[str, ...], Any]]) -> dict[str, Any]:
    result = copy.deepcopy(pod)
    for path, value in edits:
        node = result
        for key in path[:-1]:
            node = node.setdefault(key, {}) if isinstance(node, dict) else {}
        if not isinstance(node, dict):
            continue
        if value == "<delete>":
            node.pop(path[-1], None)
        else:
            node[path[-1]] = value
    return result


_edits = st.lists(
    st.tuples(
        st.sampled_from(_PATHS), _values | _lists | st.just("<delete>") | st.lists(st.sampled_from(["f1", "f2"]))
    ),
    max_size=4,
)


def _reference(old: dict[str, Any] | None, new: dict[str, Any], include_status: bool) -> set[apply.FieldPath]:
    """`TypedValue.Compare(old, new)`'s Added and Modified (structured-merge-diff typed/compare.go), written
    plainly: a path per member, `.` for a granular map or list the old object lacks; Go's rendering of unset
    structs (`schema.Shape.always`); an atomic map or list, or an empty one, is a leaf; a repeated list key is
    compared through its first element."""
    found: set[apply.FieldPath] = set()
    always = schema.shape_at(POD_STRATEGIES, ()).always
    base = old or {}
    for key, value in new.items():
        if key in apply.IGNORED_TOP or (key == "status" and not include_status):
            continue
        if key == "metadata" and isinstance(value, dict):
            old_meta = base.get("metadata") if isinstance(base.get("metadata"), dict) else {}
            for mkey, mvalue in value.items():
                if mkey not in apply.IGNORED_META:
                    there = mkey in old_meta
                    _compare(old_meta.get(mkey), there, mvalue, ("metadata", mkey), ("f:metadata", f"f:{mkey}"), found)
            continue
        there = key in base or key in always
        _compare(base.get(key), there, value, (key,), (f"f:{key}",), found)
    return found


def _compare(lhs: Any, there: bool, rhs: Any, names: tuple[str, ...], path: apply.FieldPath, out: set[Any]) -> None:
    shape = schema.shape_at(POD_STRATEGIES, names)
    granular = shape.list_type in ("map", "set")
    if isinstance(rhs, dict) and rhs and not shape.atomic:
        old = lhs if there and isinstance(lhs, dict) else {}
        if not there:
            out.add((*path, "."))
            out.update((*path, f"f:{key}") for key in shape.always - rhs.keys())
        for key, item in rhs.items():
            child_there = there and (key in old or key in shape.always)
            _compare(old.get(key), child_there, item, (*names, key), (*path, f"f:{key}"), out)
        return
    if isinstance(rhs, list) and rhs and shape.list_type == "map" and apply.keyed(rhs, shape.keys):
        olds = lhs if there and isinstance(lhs, list) else []
        if not there:
            out.add((*path, "."))
        seen = set()
        for element in rhs:
            segment = apply.key_segment(element, shape.keys)
            if segment in seen:
                continue
            seen.add(segment)
            match = next(
                (e for e in olds if apply.keyed([e], shape.keys) and apply.key_segment(e, shape.keys) == segment), None
            )
            if shape.element_atomic:
                if match != element:
                    out.add((*path, segment))
                continue
            _compare(match, match is not None, element, names, (*path, segment), out)
        return
    if isinstance(rhs, list) and rhs and shape.list_type == "set" and all(not isinstance(e, dict | list) for e in rhs):
        olds = lhs if there and isinstance(lhs, list) else []
        if not there:
            out.add((*path, "."))
        out.update((*path, "v:" + orjson.dumps(e).decode()) for e in rhs if e not in olds)
        return
    if not there:
        out.add(path)
        return
    # An unset struct, or a granular map or list emptied (its items are Removed), is no change here.
    emptied_map = rhs == {} and (lhs is None or (isinstance(lhs, dict) and bool(lhs) and not shape.atomic))
    emptied_list = rhs == [] and isinstance(lhs, list) and bool(lhs) and granular
    if not emptied_map and not emptied_list and lhs != rhs:
        out.add(path)


def _scope(paths: set[apply.FieldPath], status: bool | None) -> set[apply.FieldPath]:
    return {p for p in paths if status is None or (p[0] == "f:status") == status}


@settings(max_examples=examples(400), deadline=None)
@given(before=_edits, after=_edits, status=st.sampled_from([True, False, None]))
def test_changed_fields_v1_encodes_the_definition(before: Any, after: Any, status: bool | None) -> None:
    old = _mutate(BASE_POD, before)
    new = _mutate(old, after)
    expected = apply.to_fields_v1(_scope(_reference(old, new, include_status=True), status))
    got = fieldtrees.changed_fields_v1(old, new, POD_STRATEGIES, status=status)
    assert orjson.dumps(got) == orjson.dumps(expected)  # the same tree, keys in the same order


def _changed_paths(old: dict[str, Any], new: dict[str, Any]) -> set[str]:
    tree = fieldtrees.changed_fields_v1(old, new, POD_STRATEGIES)
    return {apply.format_path(p) for p in apply.from_fields_v1(tree)}


def test_a_status_write_names_only_what_it_changed() -> None:
    new = copy.deepcopy(BASE_POD)
    new["status"]["phase"] = "Running"
    new["status"]["conditions"].append({"type": "Ready", "status": "True"})
    assert _changed_paths(BASE_POD, new) == {
        ".status.phase",
        '.status.conditions[type="Ready"]',
        '.status.conditions[type="Ready"].type',
        '.status.conditions[type="Ready"].status',
    }


def test_new_conditions_with_null_fields_own_every_field() -> None:
    """The node agent's write of a finished pod: four new conditions, each with `lastProbeTime: null`, whose trees
    `_flat_tree` remembers by their field names. A null field of a new element is Added like any scalar."""
    old = copy.deepcopy(BASE_POD)
    new = copy.deepcopy(BASE_POD)
    new["status"]["phase"] = "Succeeded"
    for kind in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady"):
        new["status"]["conditions"].insert(
            0,
            {
                "type": kind,
                "status": "False",
                "reason": "PodCompleted",
                "lastProbeTime": None,
                "lastTransitionTime": "t",
            },
        )
    for _ in range(2):  # built, then taken from the memo
        got = fieldtrees.changed_fields_v1(old, new, POD_STRATEGIES, status=True)
        expected = apply.to_fields_v1(_scope(_reference(old, new, include_status=True), True))
        assert orjson.dumps(got) == orjson.dumps(expected)
    ready = got["f:status"]["f:conditions"]['k:{"type":"Ready"}']
    assert list(ready) == [".", "f:lastProbeTime", "f:lastTransitionTime", "f:reason", "f:status", "f:type"]


def test_a_null_struct_field_in_a_map_the_old_object_has_is_no_change() -> None:
    """Unlike a new element's, a null field Go renders always (`containers`) of a map the old object has (an
    empty `spec`) reads as unset on both sides: such a map is not given a remembered flat tree."""
    old: dict[str, Any] = {"spec": {}}
    new: dict[str, Any] = {"spec": {"containers": None}}
    expected = apply.to_fields_v1(_reference(old, new, include_status=True))
    assert expected == {}
    assert fieldtrees.changed_fields_v1(old, new, POD_STRATEGIES) == expected


def test_a_removed_key_is_no_change_to_own() -> None:
    new = copy.deepcopy(BASE_POD)
    del new["metadata"]["labels"]["app"]
    del new["spec"]["tolerations"]
    assert _changed_paths(BASE_POD, new) == set()


@settings(max_examples=examples(400), deadline=None)
@given(edits=_edits, include_status=st.booleans())
def test_fields_v1_of_is_the_comparison_with_the_zero_value(edits: Any, include_status: bool) -> None:
    pod = _mutate(BASE_POD, edits)
    expected = apply.to_fields_v1(_reference({}, pod, include_status=include_status))
    got = apply.fields_v1_of(pod, POD_STRATEGIES, include_status=include_status)
    assert got == expected
    assert orjson.dumps(got) == orjson.dumps(expected)  # the same key order too


def _smd_tree(paths: set[apply.FieldPath]) -> Any:
    """A set of paths as SMD's `fieldpath.Set` serializes it (fieldpath/serialize.go): a member in the set with
    children in it too writes its own path as `.`, one without children is `{}`."""
    marked: dict[str, Any] = {}
    for path in paths:
        node = marked
        for segment in path:
            node = node.setdefault(segment, {})
        node[None] = True  # the path itself is in the set

    def encode(node: dict[Any, Any]) -> Any:
        children = {key: encode(node[key]) for key in sorted(k for k in node if k is not None)}
        if not children:
            return {}
        return {".": {}, **children} if None in node else children

    return encode(marked)


def _smd_paths(tree: Any, prefix: apply.FieldPath = ()) -> set[apply.FieldPath]:
    """The paths a FieldsV1 tree names, as SMD reads it: `{}` and a `.` member both name the member itself."""
    if not tree:
        return {prefix} if prefix else set()
    found = {prefix} if "." in tree and prefix else set()
    for segment, child in tree.items():
        if segment != ".":
            found |= _smd_paths(child, (*prefix, segment))
    return found


_path_sets = st.sets(
    st.lists(st.sampled_from(["f:a", "f:b", 'k:{"name":"main"}', "v:1"]), min_size=1, max_size=3).map(tuple),
    max_size=6,
)


@settings(max_examples=examples(400), deadline=None)
@given(owned=_path_sets, change=_path_sets)
def test_tree_operations_are_the_set_operations(owned: set[apply.FieldPath], change: set[apply.FieldPath]) -> None:
    """A member owned with nothing below it (`{}`) and one owned with children (`.`) are one path, as in SMD: a
    manager that owned an empty map and sets a key in it owns both, and keeps the map when the key goes."""
    tree, change_tree = _smd_tree(owned), _smd_tree(change)
    assert _smd_paths(tree) == owned
    assert fieldtrees.overlaps(tree, change_tree) == bool(owned & change)
    assert fieldtrees.covers(tree, change_tree) == (change <= owned)
    without = fieldtrees.without(tree, change_tree)
    assert orjson.dumps(without) == orjson.dumps(_smd_tree(owned - change))
    union = fieldtrees.union(tree, change_tree)
    assert orjson.dumps(union) == orjson.dumps(_smd_tree(owned | change))
    assert tree == _smd_tree(owned)  # the trees given are left as they were


def test_an_owned_empty_map_stays_owned_when_a_key_is_set_and_removed_again() -> None:
    """The Job controller's status writes: `uncountedTerminatedPods: {}`, then a failed pod's uid in it, then
    `{}` again once counted. merge/update.go keeps `.status.uncountedTerminatedPods` in the manager's set
    throughout (only `failed` is Removed), so a cluster shows `f:uncountedTerminatedPods: {}` at the end; the
    owned `{}` used to be replaced by the key's tree and then dropped with it."""
    job = schema.strategies_for(schema.schema_name("batch", "v1", "Job"))
    first: dict[str, Any] = {"status": {"active": 1, "uncountedTerminatedPods": {}}}
    second: dict[str, Any] = {"status": {"active": 1, "uncountedTerminatedPods": {"failed": ["u1"]}}}
    third: dict[str, Any] = {"status": {"failed": 1, "uncountedTerminatedPods": {}}}
    owned = fieldtrees.changed_fields_v1({"status": {}}, first, job, status=True)
    assert owned == {"f:status": {"f:active": {}, "f:uncountedTerminatedPods": {}}}
    owned = fieldtrees.union(owned, fieldtrees.changed_fields_v1(first, second, job, status=True))
    assert owned == {
        "f:status": {"f:active": {}, "f:uncountedTerminatedPods": {".": {}, "f:failed": {".": {}, 'v:"u1"': {}}}}
    }
    lost = fieldtrees.changed_fields_v1(third, second, job, status=True)
    assert fieldtrees.overlaps(owned, lost)
    owned = fieldtrees.union(
        fieldtrees.without(owned, lost), fieldtrees.changed_fields_v1(second, third, job, status=True)
    )
    assert owned == {"f:status": {"f:failed": {}, "f:uncountedTerminatedPods": {}}}


def test_pods_from_one_template_share_their_containers_tree_and_others_do_not() -> None:
    first, second = copy.deepcopy(BASE_POD), copy.deepcopy(BASE_POD)
    second["metadata"]["name"] = "another"
    other = copy.deepcopy(BASE_POD)
    other["spec"]["containers"][0]["name"] = "renamed"
    trees = [apply.fields_v1_of(p, POD_STRATEGIES)["f:spec"]["f:containers"] for p in (first, second, other)]
    assert trees[0] is trees[1]  # remembered by the containers' JSON
    assert trees[2] != trees[0] and 'k:{"name":"renamed"}' in trees[2]


def test_pods_that_differ_in_a_scalar_spec_field_share_the_spec_tree() -> None:
    first, second = copy.deepcopy(BASE_POD), copy.deepcopy(BASE_POD)
    first["spec"]["hostname"], second["spec"]["hostname"] = "job-0", "job-1"
    trees = [apply.fields_v1_of(p, POD_STRATEGIES)["f:spec"] for p in (first, second)]
    assert trees[0] is trees[1] and "f:hostname" in trees[0]
    third = copy.deepcopy(first)
    del third["spec"]["hostname"]
    assert "f:hostname" not in apply.fields_v1_of(third, POD_STRATEGIES)["f:spec"]


def test_label_trees_depend_on_the_keys_alone() -> None:
    first, second, other = (copy.deepcopy(BASE_POD) for _ in range(3))
    first["metadata"]["labels"] = {"job-name": "j", "batch.kubernetes.io/job-completion-index": "0"}
    second["metadata"]["labels"] = {"job-name": "j", "batch.kubernetes.io/job-completion-index": "7"}
    other["metadata"]["labels"] = {"job-name": "j"}
    trees = [apply.fields_v1_of(p, POD_STRATEGIES)["f:metadata"]["f:labels"] for p in (first, second, other)]
    assert trees[0] is trees[1]
    assert trees[0] == {".": {}, "f:batch.kubernetes.io/job-completion-index": {}, "f:job-name": {}}
    assert trees[2] == {".": {}, "f:job-name": {}}


def test_new_conditions_of_one_shape_share_their_tree_whatever_their_values() -> None:
    def status(when: str, reason: str) -> Obj:
        condition = {"type": "Ready", "status": "False", "reason": reason, "lastTransitionTime": when}
        return {"status": {"phase": "Succeeded", "conditions": [condition]}}

    before: Obj = {"status": {"phase": "Pending"}}
    first = fieldtrees.changed_fields_v1(before, status("2026-01-01T00:00:00Z", "PodCompleted"), POD_STRATEGIES)
    second = fieldtrees.changed_fields_v1(before, status("2026-01-02T00:00:00Z", "Other"), POD_STRATEGIES)
    ready = 'k:{"type":"Ready"}'
    one, two = first["f:status"]["f:conditions"][ready], second["f:status"]["f:conditions"][ready]
    assert one is two
    assert one == {".": {}, "f:lastTransitionTime": {}, "f:reason": {}, "f:status": {}, "f:type": {}}
