"""Stop 51: outside the general walk `_merge_list` merges maps by key in `_merge_keyed` (the scan for the element
of the same key in its loop, no call for it), and `_set_order` ranks through `_ranks` (a table of first positions
built in C) and places a fully ranked list by sorting (rank, index) pairs, without `min(..., default=)` and
`zip(..., strict=)` (a builtin's keyword arguments are parsed the slow way). The forms they replaced are kept here
as stop 50 left them; the merge is run with each pair patched in, on stop 39's hypothesis statuses and patches
and on ones whose merge keys do not hash: the same merged object, or the same error. `_merge_map` outside the
general walk asks a value's type once, and `_set_order` names the patch's elements in one comprehension
(`_named`): the old walk is patched in too."""

from __future__ import annotations

from operator import itemgetter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.server import patch as P
from kjobs.server.schema import strategies_for
from tests.hypothesis_budget import examples
from tests.server.test_patch_rewrites import PATCH, STATUS, outcome

POD = strategies_for("io.k8s.api.core.v1.Pod")
_FIRST = itemgetter(0)


def old_merge_list(
    original: list[Any], patch: list[Any], path: tuple[str, ...], lookup: Any, mode: int = P._GENERAL
) -> list[Any]:
    strategy, merge_key = lookup(path)
    general = mode == P._GENERAL
    if general and any(isinstance(e, dict) and e.get(P._DIRECTIVE) == "replace" and len(e) == 1 for e in patch):
        return [P._strip(e, path, lookup) for e in patch if not (isinstance(e, dict) and P._DIRECTIVE in e)]
    if strategy != "merge" and "merge" not in strategy.split(","):
        return list(patch) if mode == P._PLAIN else [P._strip(e, path, lookup, mode) for e in patch]
    if not merge_key or not (P._all_maps(original) and P._all_maps(patch)):
        merged = list(original)
        for element in patch:
            if general and isinstance(element, dict) and element.get(P._DIRECTIVE) == "delete":
                continue
            if element not in merged:
                merged.append(element)
        return merged
    result = list(original)
    for element in patch:
        if merge_key not in element:
            raise P.PatchError(f"map: {element} does not contain declared merge key: {merge_key}")
        key_value = element[merge_key]
        if general and element.get(P._DIRECTIVE) == "delete":
            result = [e for e in result if e.get(merge_key) != key_value]
            continue
        at = P._position(result, merge_key, key_value)
        if at is None:
            if mode == P._PLAIN:
                stripped = element
            else:
                stripped = P._stripped_flat(element) if mode == P._NO_DIRECTIVES else None
                if stripped is None:
                    stripped = P._strip(element, path, lookup, mode)
            if stripped is not None:
                result.append(stripped)
        else:
            merged_element = P._merge_map(result[at], element, path, lookup, mode)
            if merged_element is None:
                del result[at]
            else:
                result[at] = merged_element
    return result


def old_set_order(
    original: dict[str, Any],
    result: dict[str, Any],
    patch: dict[str, Any],
    key: str,
    order: Any,
    path: tuple[str, ...],
    lookup: Any,
) -> None:
    if not isinstance(order, list):
        raise P.PatchError(f"{key} must be a list")
    field = key[len(P._ORDER) :]
    merged = result.get(field)
    if not isinstance(merged, list):
        return
    merge_key = lookup((*path, field))[1]
    wanted = P._idents(order, merge_key)
    patch_list = patch.get(field)
    if isinstance(patch_list, list):
        named = P._idents([e for e in patch_list if not (isinstance(e, dict) and P._DIRECTIVE in e)], merge_key)
        at = 0
        for value in named:
            while at < len(wanted) and wanted[at] != value:
                at += 1
            if at == len(wanted):
                raise P.PatchError(
                    f"The order in patch list:\n{patch_list}\n doesn't match $setElementOrder list:\n{order}\n"
                )
            at += 1
    rank_wanted = P._first_positions(wanted)
    ranks = [rank_wanted(i) for i in P._idents(merged, merge_key)]
    if min(ranks, default=0) >= 0:
        result[field] = [e for _, e in sorted(zip(ranks, merged, strict=True), key=_FIRST)]
        return
    before = original.get(field)
    rank_server = P._first_positions(P._idents(before, merge_key) if isinstance(before, list) else [])
    placed = [(rank, rank_server(i), e) for rank, i, e in zip(ranks, P._idents(merged, merge_key), merged, strict=True)]
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


MERGE_MAP = P._merge_map


def old_merge_map(
    original: dict[str, Any], patch: dict[str, Any], path: tuple[str, ...], lookup: Any, mode: int = P._GENERAL
) -> Any:
    """Stop 50's walk outside the general one (a value's type asked once a test); the general walk as it is."""
    if mode == P._GENERAL:
        return MERGE_MAP(original, patch, path, lookup, mode)
    result = dict(original)
    orders = None
    for key, value in patch.items():
        if key[:1] == "$":
            orders = [*(orders or ()), key]
        elif value is None:
            result.pop(key, None)
        elif type(value) is dict:
            current = result.get(key)
            if lookup((*path, key))[0] == "replace":
                current = None
            result[key] = P._merge_map(current if type(current) is dict else {}, value, (*path, key), lookup, mode)
        elif type(value) is list:
            current = result.get(key)
            result[key] = P._merge_list(current if type(current) is list else [], value, (*path, key), lookup, mode)
        else:
            result[key] = value
    for key in orders or ():
        P._set_order(original, result, patch, key, patch[key], path, lookup)
    return result


def both(original: Any, body: Any) -> tuple[tuple[str, Any], tuple[str, Any]]:
    new = outcome(lambda: P.strategic_merge(original, body, strategies=POD))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(P, "_merge_map", old_merge_map)
        m.setattr(P, "_merge_list", old_merge_list)
        m.setattr(P, "_set_order", old_set_order)
        old = outcome(lambda: P.strategic_merge(original, body, strategies=POD))
    return new, old


@settings(max_examples=examples(1500), deadline=None)
@given(status=STATUS, body=PATCH)
def test_status_patches_merge_as_before(status: dict[str, Any], body: dict[str, Any]) -> None:
    new, old = both({"metadata": {"name": "p"}, "status": status}, {"status": body})
    assert new == old
    if new[0] == "ok":  # the same elements, not copies made differently
        assert [type(c) for c in new[1]["status"].get("conditions") or []] == [
            type(c) for c in old[1]["status"].get("conditions") or []
        ]


UNHASHABLE = st.sampled_from([["Ready"], {"a": 1}, "Ready", "PodScheduled", 7])
ODD_CONDITION = st.fixed_dictionaries({"type": UNHASHABLE}, optional={"status": st.sampled_from(["True", None])})


@settings(max_examples=examples(800), deadline=None)
@given(
    before=st.lists(ODD_CONDITION, max_size=4),
    conditions=st.lists(ODD_CONDITION, max_size=4),
    order=st.lists(st.one_of(st.fixed_dictionaries({"type": UNHASHABLE}), UNHASHABLE), max_size=5),
    nulls=st.booleans(),
)
def test_merge_keys_that_do_not_hash_merge_as_before(
    before: list[Any], conditions: list[Any], order: list[Any], nulls: bool
) -> None:
    """A list or map as a condition's type: `_ranks` falls back to `_first_positions`' scan."""
    body: dict[str, Any] = {"conditions": conditions, "$setElementOrder/conditions": order}
    if nulls:
        body["phase"] = None
    new, old = both({"status": {"conditions": before}}, {"status": body})
    assert new == old


@pytest.mark.parametrize(
    ("wanted", "idents"),
    [
        (["a", "b", "a"], ["a", "b", "c", "a"]),
        ([], ["a"]),
        (["a", ["x"]], ["a", ["x"], "b"]),
        ([1, True, 1.0], [True, 1, 2]),
        ([{"k": 1}], [{"k": 1}, "s"]),
    ],
)
def test_ranks_are_first_positions(wanted: list[Any], idents: list[Any]) -> None:
    rank = P._first_positions(wanted)
    assert P._ranks(wanted, idents) == [rank(i) for i in idents]
