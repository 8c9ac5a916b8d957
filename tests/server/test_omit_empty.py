"""Stop 50: `_omit_empty` reads each key once and builds no `[]` or `{}` to compare with; it must drop exactly the
keys the plain version dropped (kept here), for any metadata values."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.server.service import _ABSENT, _OMITTED_WHEN_EMPTY, _omit_empty
from tests.hypothesis_budget import examples

SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-1, 1), st.floats(0, 0), st.sampled_from(["", "a"]))
VALUE = st.one_of(
    SCALAR,
    st.lists(SCALAR, max_size=2),
    st.dictionaries(st.sampled_from(["a", "b"]), SCALAR, max_size=2),
    st.tuples(),  # a value no decode makes: equal to neither `[]` nor `{}`
)
META = st.dictionaries(st.sampled_from([*_OMITTED_WHEN_EMPTY, "name", "generation"]), VALUE)


def plain_omit_empty(meta: dict[str, Any]) -> None:
    for key in _OMITTED_WHEN_EMPTY:
        if key in meta and (meta[key] is None or meta[key] == [] or meta[key] == {}):
            del meta[key]


@settings(max_examples=examples(500), deadline=None)
@given(META)
def test_omit_empty_drops_what_it_dropped(meta: dict[str, Any]) -> None:
    plain = copy.deepcopy(meta)
    plain_omit_empty(plain)
    _omit_empty(meta)
    assert meta == plain
    assert list(meta) == list(plain)


def stop51_omit_empty(meta: dict[str, Any]) -> None:
    """Stop 51's form (stop 52 asks a value's type only when it is falsy)."""
    for key in _OMITTED_WHEN_EMPTY:
        value = meta.get(key, _ABSENT)
        if value is None or (isinstance(value, (list, dict)) and not value):
            del meta[key]


@settings(max_examples=examples(500), deadline=None)
@given(META)
def test_omit_empty_drops_what_stop_51_dropped(meta: dict[str, Any]) -> None:
    old = copy.deepcopy(meta)
    stop51_omit_empty(old)
    _omit_empty(meta)
    assert list(meta.items()) == list(old.items())
