"""Stop 49: `patch._mode` finds each `"$` through a one-byte search for `$` and uses `find`, not `in`.

The strategic merge reads a patch's JSON once to know how much of the walk it needs (`_GENERAL`,
`_NO_DIRECTIVES`, `_PLAIN`); the node agent's status patch is read so twice (the patch, its container status).
The form it replaced searched for the two bytes `"$` and counted both patterns over the whole JSON. It is kept
here as it was; hypothesis makes JSON values whose keys and strings carry every near miss (a `$` with no quote
before it, `"$` inside a string, a directive's name without its `$`, `null` inside a string, a `$` at the very
start or end) and each value must get the same mode from both.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.server import patch as P
from tests.hypothesis_budget import examples


def plain_mode(value: dict[str, Any] | list[Any]) -> int:
    try:
        raw = orjson.dumps(value)
    except TypeError:
        return P._GENERAL
    if b'"$' in raw:
        ordering = raw.count(b'"$setElementOrder/')
        if not ordering or raw.count(b'"$') != ordering:
            return P._GENERAL
        return P._NO_DIRECTIVES
    return P._NO_DIRECTIVES if b"null" in raw else P._PLAIN


WORDS = st.sampled_from(
    [
        "$setElementOrder/conditions",
        "$setElementOrder/",
        "$setElementOrder",
        "$setElementOrde",
        "$patch",
        "$retainKeys",
        "$deleteFromPrimitiveList/finalizers",
        "setElementOrder/x",
        "$",
        "$$",
        'a"$b',
        '"$setElementOrder/x',
        "x$setElementOrder/",
        "null",
        "nul",
        "type",
        "",
        "é$",
    ]
)
TEXT = st.one_of(WORDS, st.text(alphabet='$"nul/\\esS', max_size=8))
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), TEXT)
VALUE = st.recursive(
    SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=12,
)
TOP = st.one_of(st.lists(VALUE, max_size=4), st.dictionaries(TEXT, VALUE, max_size=5))


@settings(max_examples=examples(1500), deadline=None)
@given(value=TOP)
def test_mode_as_before(value: dict[str, Any] | list[Any]) -> None:
    assert P._mode(value) == plain_mode(value)


@pytest.mark.parametrize(
    ("value", "mode"),
    [
        ({"status": {"phase": "Running"}}, P._PLAIN),
        ({"status": {"conditions": [{"type": "Ready", "lastProbeTime": None}]}}, P._NO_DIRECTIVES),
        ({"status": {"$setElementOrder/conditions": [{"type": "Ready"}]}}, P._NO_DIRECTIVES),
        ({"$setElementOrder/a": [], "$patch": "replace"}, P._GENERAL),
        ({"metadata": {"$deleteFromPrimitiveList/finalizers": ["f"]}}, P._GENERAL),
        ({"a": "$setElementOrder/"}, P._NO_DIRECTIVES),  # `"$` in a string: the slower way, as before
        ({"a": "x$patch"}, P._PLAIN),
        ({"a": "null"}, P._NO_DIRECTIVES),
        ({"a": {1, 2}}, P._GENERAL),  # not JSON
        (["$"], P._GENERAL),
    ],
)
def test_modes(value: Any, mode: int) -> None:
    assert P._mode(value) == mode == plain_mode(value)
