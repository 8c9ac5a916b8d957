"""Stop 46: `unchanged` answers `==` (an update's spec compared with the stored one, twice a pod update: the
generation's check and the update validation's) without walking a member the update kept as the very object.

Hypothesis makes JSON values (NaN floats among them, the same object or not) and pairs of them that are the same
object, an equal copy or another value: `unchanged` is `==` on every pair.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import unchanged
from tests.hypothesis_budget import examples

NAN = float("nan")

values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["a", ""]), st.just(NAN), st.floats()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["x", "y"]), inner, max_size=2)
    ),
    max_leaves=6,
)


@settings(max_examples=examples(800), deadline=None)
@given(values, values, st.sampled_from(["same", "copy", "other"]))
def test_unchanged_is_equality(value: Any, other: Any, how: str) -> None:
    new = value if how == "same" else copy.deepcopy(value) if how == "copy" else other
    assert unchanged(new, value) == (new == value)


def test_a_nan_is_changed_even_as_the_same_object_and_a_container_holding_it_is_not() -> None:
    assert unchanged(NAN, NAN) is False
    spec = {"x": [NAN]}
    assert unchanged(spec, spec) is True
    assert unchanged(spec, {"x": [float("nan")]}) is False  # another NaN object: not equal, as `==` says
