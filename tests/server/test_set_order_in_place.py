"""`$setElementOrder` when the order names every merged element (stop 45: a kubelet's status patch, which moves
`PodScheduled` last): the order alone places them. Held against the general placement it skips (the server's own
elements interleaved by their place in the original), as `tests/server/test_patch_rewrites.py` keeps it, on
lists with and without a merge key, repeated and missing names, unhashable elements, server-only elements,
directives and orders the patch's list contradicts."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.server.patch import _DIRECTIVE, _ORDER, PatchError, _set_order
from tests.hypothesis_budget import examples
from tests.server.test_patch_rewrites import plain_set_order

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


@settings(max_examples=examples(600), deadline=None)
@given(case=_case())
def test_an_order_naming_every_merged_element_places_them_as_the_general_rule(
    case: tuple[dict[str, Any], dict[str, Any], dict[str, Any], Any, str],
) -> None:
    original, result, patch, order, merge_key = case
    merged = result["conditions"]
    key = _ORDER + "conditions"
    expected_result = {"conditions": list(result["conditions"])}
    try:
        plain_set_order(original, expected_result, patch, key, order, (), lambda path: ("merge", merge_key))
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
