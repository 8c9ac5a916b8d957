"""Stop 59: the strategic merge's general walk tests a key for a directive only when it starts with `$` and
collects the `$setElementOrder/…` keys as it goes (no second pass); its lists go without the calls it made an
element or a list (`_idents`, `_all_maps`, `_stripped_flat`, a `_strip` an element of a list that is replaced), and
a replaced list whose JSON holds no directive and no null is taken as it is. Stop 58's `_merge_map`, `_merge_list`,
`_merge_keyed` and `_set_order` are kept here as they were; each merge is run with them patched in and without: the
same merged object or the same error, and the stored elements kept in the same places
(`test_patch_order52.same`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.server import patch as P
from kjobs.server.schema import strategies_for
from tests.hypothesis_budget import examples
from tests.server.test_patch_order52 import KUBELET_ORDER, NAME, ODD_CONDITION, same
from tests.server.test_patch_rewrites import CONTAINER, PATCH, SCALAR, STATUS, outcome

POD = strategies_for("io.k8s.api.core.v1.Pod")


def old_merge_map(
    original: dict[str, Any], patch: dict[str, Any], path: P.Path, lookup: P.StrategyLookup, mode: int = P._GENERAL
) -> Any:
    if mode != P._GENERAL:
        result = dict(original)
        orders = None
        for key, value in patch.items():
            if key[:1] == "$":  # in this mode, only `$setElementOrder/…` (see `_mode`): applied once merged
                orders = [*(orders or ()), key]
            elif value is None:
                result.pop(key, None)
            else:
                kind = type(value)  # asked once a key
                if kind is dict:
                    current = result.get(key)
                    if lookup((*path, key))[0] == "replace":  # `patchStrategy:"replace"` on a struct field
                        current = None
                    child = (*path, key)
                    result[key] = P._merge_map(current if type(current) is dict else {}, value, child, lookup, mode)
                elif kind is list:
                    current = result.get(key)
                    child = (*path, key)
                    result[key] = P._merge_list(current if type(current) is list else [], value, child, lookup, mode)
                else:
                    result[key] = value
        for key in orders or ():
            P._set_order(original, result, patch, key, patch[key], path, lookup)
        return result
    directive = patch.get(P._DIRECTIVE)
    if directive is not None:
        if directive == "replace":
            return P._strip({k: v for k, v in patch.items() if k != P._DIRECTIVE}, path, lookup)
        if directive == "delete":
            return None
        raise P.PatchError(f"Unknown patch type: {directive}")
    result = dict(original)
    retain = patch.get(P._RETAIN)
    deletions: dict[str, list[Any]] = {}
    for key, value in patch.items():
        if key == P._RETAIN or key.startswith(P._ORDER):
            continue
        if key.startswith(P._DELETE_PRIMITIVE):
            if not isinstance(value, list):  # ErrBadPatchFormatForPrimitiveList (400)
                raise P.MalformedPatch("invalid patch format of primitive list")
            deletions[key[len(P._DELETE_PRIMITIVE) :]] = value
            continue
        child = (*path, key)
        if value is None:
            result.pop(key, None)
            continue
        current = result.get(key)
        if isinstance(value, dict):
            if lookup(child)[0] == "replace":
                current = None  # mergeMapHandler: a field whose patchStrategy is replace takes the patch's map
            merged = P._merge_map(current if isinstance(current, dict) else {}, value, child, lookup)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            result[key] = P._merge_list(current if isinstance(current, list) else [], value, child, lookup)
        else:
            result[key] = value
    for key, values in deletions.items():
        if isinstance(result.get(key), list):
            result[key] = [v for v in result[key] if v not in values]
    for key, order in patch.items():
        if key.startswith(P._ORDER):
            P._set_order(original, result, patch, key, order, path, lookup)
    if retain is not None:
        # apimachinery's applyRetainKeysDirective: a list of keys, else ErrBadPatchFormatForRetainKeys (400). Its
        # keys go into a Go map, where a map or list element panics (a 500); kjobs answers that as a non-list.
        if not isinstance(retain, list) or any(isinstance(k, (dict, list)) for k in retain):
            raise P.MalformedPatch("invalid patch format of retainKeys")
        keep = set(retain)
        for key, value in patch.items():  # every key the patch sets must be one it retains
            is_directive = key == P._RETAIN or key.startswith((P._ORDER, P._DELETE_PRIMITIVE))
            if value is not None and not is_directive and key not in keep:
                raise P.MalformedPatch("invalid patch format of retainKeys")
        result = {k: v for k, v in result.items() if k in keep or k in patch}
    return result


def old_merge_list(
    original: list[Any], patch: list[Any], path: P.Path, lookup: P.StrategyLookup, mode: int = P._GENERAL
) -> list[Any]:
    strategy, merge_key = lookup(path)
    general = mode == P._GENERAL
    if general and any(isinstance(e, dict) and e.get(P._DIRECTIVE) == "replace" and len(e) == 1 for e in patch):
        return [P._strip(e, path, lookup) for e in patch if not (isinstance(e, dict) and P._DIRECTIVE in e)]
    if strategy != "merge" and "merge" not in strategy.split(","):
        return list(patch) if mode == P._PLAIN else [P._strip(e, path, lookup, mode) for e in patch]
    if not merge_key or not (P._all_maps(original) and P._all_maps(patch)):
        # merge of primitives: a set union that keeps the original order
        merged = list(original)
        for element in patch:
            if general and isinstance(element, dict) and element.get(P._DIRECTIVE) == "delete":
                continue
            if element not in merged:
                merged.append(element)
        return merged
    if not general:
        return old_merge_keyed(original, patch, path, lookup, mode, merge_key)
    result = list(original)
    for element in patch:
        if merge_key not in element:
            raise P.PatchError(f"map: {element} does not contain declared merge key: {merge_key}")
        key_value = element[merge_key]
        if element.get(P._DIRECTIVE) == "delete":
            result = [e for e in result if e.get(merge_key) != key_value]
            continue
        at = P._position(result, merge_key, key_value)
        if at is None:
            stripped = P._strip(element, path, lookup, mode)
            if stripped is not None:
                result.append(stripped)
        else:
            # not `merged`, a list above: mypyc holds a name to the type it was first given (docs/mypyc.md)
            merged_element = P._merge_map(result[at], element, path, lookup, mode)
            if merged_element is None:
                del result[at]
            else:
                result[at] = merged_element
    return result


def old_merge_keyed(
    original: list[dict[str, Any]],
    patch: list[dict[str, Any]],
    path: P.Path,
    lookup: P.StrategyLookup,
    mode: int,
    key: str,
) -> list[Any]:
    """`_merge_list`'s merge of maps by their merge key `key` outside the general walk, where no element is deleted
    (no `$patch`, and `P._merge_map` returns a map there): each patch element merges into the first element of the
    same key, found by a scan in this loop, or is added — as it is (`P._PLAIN`), or, holding nulls to drop, copied
    without them in one pass when it is flat (the kubelet's conditions, its IPs), else through the merge."""
    result = list(original)
    for element in patch:
        if key not in element:
            raise P.PatchError(f"map: {element} does not contain declared merge key: {key}")
        key_value = element[key]
        for at, existing in enumerate(result):
            if existing.get(key) == key_value:
                result[at] = P._merge_map(existing, element, path, lookup, mode)
                break
        else:
            if mode == P._PLAIN:
                result.append(element)
                continue
            flat = P._stripped_flat(element)
            if flat is None:  # `P._strip` of a map that nests, outside the general walk
                flat = element if P._mode(element) == P._PLAIN else P._merge_map({}, element, path, lookup, mode)
            result.append(flat)
    return result


def old_set_order(
    original: dict[str, Any],
    result: dict[str, Any],
    patch: dict[str, Any],
    key: str,
    order: Any,
    path: P.Path,
    lookup: P.StrategyLookup,
) -> None:
    """`$setElementOrder/<field>`: the merged list's elements that the order names come in its order, and the
    others (the server's only) keep theirs, interleaved by where they stood in the original list
    (apimachinery's `mergePatchIntoOriginal` and `normalizeElementOrder`)."""
    if not isinstance(order, list):
        raise P.PatchError(f"{key} must be a list")
    field = key[len(P._ORDER) :]
    merged = result.get(field)
    if not isinstance(merged, list):
        return
    merge_key = lookup((*path, field))[1]
    wanted = P._idents(order, merge_key)
    patch_list = patch.get(field)
    try:
        table = dict(zip(wanted, range(len(wanted))))  # noqa: B905 (equal lengths)
    except TypeError:  # a name that does not hash (a map, a list)
        table = None
    if table is None or len(table) != len(wanted):  # or a name the order repeats: the scans
        if isinstance(patch_list, list):
            P._check_order(patch_list, order, wanted, merge_key)
        idents = P._idents(merged, merge_key)
        ranks = P._ranks(wanted, idents)
    else:
        # Each name once in the order (the kubelet's conditions by type): one table gives every place. The patch's
        # own elements are in the order's relative order when their places rise (the scan's subsequence), and a
        # name that does not hash is in no place (it equals none of the order's, which all hash).
        if isinstance(patch_list, list):
            last = -1
            for element in patch_list:
                if isinstance(element, dict):
                    if P._DIRECTIVE in element:
                        continue
                    if merge_key:
                        element = element.get(merge_key)
                try:
                    at = table.get(element, -1)
                except TypeError:
                    at = -1
                if at <= last:
                    raise P.PatchError(
                        f"The order in patch list:\n{patch_list}\n doesn't match $setElementOrder list:\n{order}\n"
                    )
                last = at
        idents = P._idents(merged, merge_key)
        try:
            by_place: dict[Any, Any] = dict(zip(map(table.get, idents), merged))  # noqa: B905 (equal lengths)
        except TypeError:  # a merged element named by a map or a list: `P._first_positions`' answers
            ranks = P._ranks(wanted, idents)
        else:
            if None not in by_place and len(by_place) == len(merged):
                # each merged element in a place of its own (the kubelet's conditions): placed by its place, in C
                result[field] = list(map(by_place.__getitem__, sorted(by_place)))
                return
            ranks = [table.get(ident, -1) for ident in idents]
    if -1 not in ranks:
        # Every merged element is named by the order (a kubelet's status patch, which moves `PodScheduled` last):
        # no element of the server's own to interleave, so the order alone places them, stably: the pairs
        # (rank, index) sort in C with no key function (a keyword argument to a builtin is parsed the slow way).
        result[field] = [merged[at] for _, at in sorted(zip(ranks, range(len(merged))))]  # noqa: B905 (equal lengths)
        return
    before = original.get(field)
    rank_server = P._first_positions(P._idents(before, merge_key) if isinstance(before, list) else [])
    # each merged element's place in the order and in the original list, looked up once
    placed = [(rank, rank_server(i), e) for rank, i, e in zip(ranks, idents, merged, strict=True)]
    ordered = sorted((p for p in placed if p[0] >= 0), key=lambda p: p[0])
    server_only = sorted((p for p in placed if p[0] < 0), key=lambda p: p[1])
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(ordered):
        if j >= len(ordered) or (i < len(server_only) and 0 <= server_only[i][1] < ordered[j][1]):
            out.append(server_only[i][2])
            i += 1
        else:
            out.append(ordered[j][2])
            j += 1
    result[field] = out


def outcome_any(merge: Callable[[], Any]) -> tuple[str, Any]:
    """`outcome`, with any exception's type and text (a key that is no string raises no `PatchError`)."""
    try:
        return outcome(merge)
    except Exception as err:
        return type(err).__name__, str(err)


def both(original: Any, body: Any) -> tuple[tuple[str, Any], tuple[str, Any]]:
    new = outcome_any(lambda: P.strategic_merge(original, body, strategies=POD))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(P, "_merge_map", old_merge_map)
        m.setattr(P, "_merge_list", old_merge_list)
        m.setattr(P, "_set_order", old_set_order)
        old = outcome_any(lambda: P.strategic_merge(original, body, strategies=POD))
    return new, old


@settings(max_examples=examples(1500), deadline=None)
@given(status=STATUS, body=PATCH)
def test_status_patches_merge_as_before(status: dict[str, Any], body: dict[str, Any]) -> None:
    original = {"metadata": {"name": "p"}, "status": status}
    same(original, *both(original, {"status": body}))


@settings(max_examples=examples(1500), deadline=None)
@given(
    before=st.lists(ODD_CONDITION, max_size=5),
    conditions=st.lists(st.one_of(ODD_CONDITION, st.just({"$patch": "delete", "type": "Ready"})), max_size=5),
    order=st.lists(st.one_of(st.fixed_dictionaries({"type": NAME}), NAME), max_size=6),
    nulls=st.booleans(),
)
def test_odd_names_merge_as_before(before: list[Any], conditions: list[Any], order: list[Any], nulls: bool) -> None:
    """Names that repeat in the order, that do not hash, that are equal across types (`1`, `True`, `7.0`), a
    `$patch` element (the general walk), elements with no merge key or not maps at all."""
    body: dict[str, Any] = {"conditions": conditions, "$setElementOrder/conditions": order}
    if nulls:
        body["phase"] = None
    original = {"status": {"conditions": before}}
    same(original, *both(original, {"status": body}))


ODD_VALUE = st.one_of(
    SCALAR,
    st.sampled_from(["$patch", "null", '"$', "$setElementOrder/x", math.nan, 2**70]),
    st.lists(SCALAR, max_size=2),
    st.fixed_dictionaries({}, optional={"x": SCALAR, "$patch": st.sampled_from(["delete", "replace"])}),
)
REPLACED = st.lists(
    st.one_of(CONTAINER, st.dictionaries(st.sampled_from(["name", "a", "$retainKeys"]), ODD_VALUE, max_size=3), SCALAR),
    max_size=3,
)


@settings(max_examples=examples(1500), deadline=None)
@given(
    stored=st.lists(CONTAINER, max_size=2),
    replaced=REPLACED,
    nulls=st.booleans(),
    order=st.booleans(),
)
def test_replaced_lists_merge_as_before(stored: list[Any], replaced: list[Any], nulls: bool, order: bool) -> None:
    """A list whose strategy replaces it (`containerStatuses`, `hostIPs`' neighbours), in each mode of the walk:
    elements holding nulls, directives, strings that read like them, a NaN (which JSON writes as null), an integer
    too large for JSON, maps that nest or not."""
    body: dict[str, Any] = {"containerStatuses": replaced}
    if nulls:
        body["phase"] = None
    if order:
        body["$setElementOrder/conditions"] = [{"type": "Ready"}]
    original = {"status": {"containerStatuses": stored, "conditions": [{"type": "Ready"}]}}
    new, old = both(original, {"status": body})
    assert repr(new) == repr(old)  # NaN is not equal to itself: compared as written


@pytest.mark.parametrize(
    ("stored", "patched"),
    [
        (["PodScheduled"], KUBELET_ORDER[:4]),  # the first status write: PodScheduled moves last
        (KUBELET_ORDER, ["Ready", "ContainersReady"]),
        (["PodScheduled", "DisruptionTarget"], KUBELET_ORDER[:4]),  # a condition of the server's own
        (["PodScheduled"], ["Ready", "Initialized"]),  # out of the order's order: refused
    ],
)
def test_kubelet_status_patches_merge_as_before(stored: list[str], patched: list[str]) -> None:
    status = {"conditions": [{"type": t, "status": "True"} for t in stored]}
    body = {
        "$setElementOrder/conditions": [{"type": t} for t in KUBELET_ORDER],
        "conditions": [{"type": t, "status": "False", "lastProbeTime": None} for t in patched],
        "hostIPs": [{"ip": "127.0.0.1"}],
        "containerStatuses": [{"name": "main", "state": {"terminated": {"exitCode": 0}}, "lastState": {}}],
    }
    new, old = both({"status": status}, {"status": body})
    same({"status": status}, new, old)
    assert new[0] == ("PatchError" if patched == ["Ready", "Initialized"] else "ok")


FINALIZERS = st.lists(st.sampled_from(["a", "b", "batch.kubernetes.io/job-tracking", 1]), max_size=3)
META_KEY = st.sampled_from(
    ["labels", "finalizers", "$deleteFromPrimitiveList/finalizers", "$retainKeys", "$setElementOrder/finalizers",
     "$patch", "$other", "name", "ownerReferences", "$setElementOrder/ownerReferences", "$deleteFromPrimitiveList/x"]
)  # fmt: skip
META_VALUE = st.one_of(
    SCALAR,
    FINALIZERS,
    st.just(["labels", "name", "finalizers"]),
    st.dictionaries(st.sampled_from(["a", "b"]), st.one_of(SCALAR, st.just({"c": None})), max_size=2),
    st.lists(st.fixed_dictionaries({"uid": st.sampled_from(["u", "v"])}, optional={"name": SCALAR}), max_size=2),
)


@settings(max_examples=examples(1500), deadline=None)
@given(
    finalizers=FINALIZERS,
    meta=st.dictionaries(META_KEY, META_VALUE, max_size=4),
    top=st.dictionaries(st.sampled_from(["spec", "$retainKeys", "$patch", "status"]), META_VALUE, max_size=2),
    odd_key=st.booleans(),
)
def test_metadata_patches_merge_as_before(
    finalizers: list[Any], meta: dict[str, Any], top: dict[str, Any], odd_key: bool
) -> None:
    """The Job controller's finalizer removal and patches like it, with every directive the general walk reads, at
    the root and in the metadata, valid or not, and keys that are no strings: the same object or the same error."""
    original = {
        "metadata": {"name": "p", "finalizers": finalizers, "labels": {"a": "1"}, "ownerReferences": [{"uid": "u"}]},
        "spec": {"x": 1},
    }
    body: dict[Any, Any] = {"metadata": meta, **top}
    if odd_key:
        body[7] = "seven"
    new, old = both(original, body)
    assert new == old


def test_finalizer_removal_merges_as_before() -> None:
    original = {"metadata": {"name": "p", "finalizers": ["batch.kubernetes.io/job-tracking", "x"]}, "status": {}}
    body = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["batch.kubernetes.io/job-tracking"]}}
    new, old = both(original, body)
    assert new == old == ("ok", {"metadata": {"name": "p", "finalizers": ["x"]}, "status": {}})
