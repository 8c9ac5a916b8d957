"""`$setElementOrder` when the order names every merged element (stop 45: a kubelet's status patch, which moves
`PodScheduled` last): the order alone places them. Held against the general placement it skips (the server's own
elements interleaved by their place in the original), kept here as it was (kjobs.server.patch at ba32f66), on
lists with and without a merge key, repeated and missing names, unhashable elements, server-only elements,
directives and orders the patch's list contradicts."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.server.patch import _DIRECTIVE, _ORDER, PatchError, _first_positions, _idents, _set_order


def _general_set_order(
    original: dict[str, Any], result: dict[str, Any], patch: dict[str, Any], key: str, order: Any, merge_key: str
) -> None:
    """`_set_order` before stop 45: every merged element placed by its rank in the order or the original."""
    if not isinstance(order, list):
        raise PatchError(f"{key} must be a list")
    field = key[len(_ORDER) :]
    merged = result.get(field)
    if not isinstance(merged, list):
        return
    wanted = _idents(order, merge_key)
    patch_list = patch.get(field)
    if isinstance(patch_list, list):
        named = _idents([e for e in patch_list if not (isinstance(e, dict) and _DIRECTIVE in e)], merge_key)
        at = 0
        for value in named:
            while at < len(wanted) and wanted[at] != value:
                at += 1
            if at == len(wanted):
                raise PatchError(
                    f"The order in patch list:\n{patch_list}\n doesn't match $setElementOrder list:\n{order}\n"
                )
            at += 1
    before = original.get(field)
    rank_wanted = _first_positions(wanted)
    rank_server = _first_positions(_idents(before, merge_key) if isinstance(before, list) else [])
    placed = [(rank_wanted(i), rank_server(i), e) for i, e in zip(_idents(merged, merge_key), merged, strict=True)]
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


_names = st.sampled_from(["a", "b", "c", "d"])
_element = st.one_of(
    st.builds(lambda n, v: {"type": n, "v": v}, _names, st.integers(0, 2)),
    st.fixed_dictionaries({"v": st.integers(0, 2)}),  # no merge key
    st.builds(lambda n: {"type": n, _DIRECTIVE: "delete"}, _names),
    _names,
    st.lists(_names, max_size=1),  # unhashable without a merge key
)


@st.composite
def _case(draw: Any) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], Any, str]:
    merge_key = draw(st.sampled_from(["type", ""]))
    merged = draw(st.lists(_element, max_size=5))
    if draw(st.booleans()):  # the usual case: the order names each merged element, in some order, and perhaps more
        order: Any = [{"type": e.get("type")} if isinstance(e, dict) else e for e in merged]
        order = draw(st.permutations(order)) + draw(st.lists(st.builds(lambda n: {"type": n}, _names), max_size=2))
    else:
        order = draw(st.one_of(st.lists(st.one_of(st.builds(lambda n: {"type": n}, _names), _names), max_size=5)))
        if draw(st.booleans()):
            order = draw(st.permutations(order))
    original = {"conditions": draw(st.lists(_element, max_size=5))} if draw(st.booleans()) else {}
    patch: dict[str, Any] = {}
    if draw(st.booleans()):
        patch["conditions"] = draw(st.one_of(st.just(list(merged)), st.lists(_element, max_size=4)))
    if draw(st.booleans()):
        order = draw(st.sampled_from([None, "x", 3]))  # not a list: an error
    return original, {"conditions": merged}, patch, order, merge_key


@settings(max_examples=600, deadline=None)
@given(case=_case())
def test_an_order_naming_every_merged_element_places_them_as_the_general_rule(
    case: tuple[dict[str, Any], dict[str, Any], dict[str, Any], Any, str],
) -> None:
    original, result, patch, order, merge_key = case
    merged = result["conditions"]
    key = _ORDER + "conditions"
    expected_result = {"conditions": list(result["conditions"])}
    try:
        _general_set_order(original, expected_result, patch, key, order, merge_key)
        expected: Any = expected_result
    except PatchError as exc:
        expected = ("error", str(exc))
    try:
        _set_order(original, result, patch, key, order, (), lambda path: ("merge", merge_key))
        got: Any = result
    except PatchError as exc:
        got = ("error", str(exc))
    assert got == expected
    if isinstance(got, dict):  # the same elements, in a list of the result's own
        assert [id(e) for e in got["conditions"]] == [id(e) for e in expected["conditions"]]
        assert got["conditions"] is not merged
