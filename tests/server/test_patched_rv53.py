"""Stop 53: a patch's resourceVersion (`_patched_rv`) is the stored string when the patch left it in place.

The oracle is stop 52's expression, `_requested_rv(patched) or old_rv`, kept here. Hypothesis makes patched
metadata of every shape (absent, null, not a map, a dict subclass) holding the stored string itself, an equal
copy, zeros, empties, numbers and other strings, against stored versions of the same kinds."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.server.service import _patched_rv, _requested_rv
from tests.hypothesis_budget import examples


class Meta(dict[str, Any]):
    pass


def patched_rv52(patched: dict[str, Any], old_rv: Any) -> Any:
    return _requested_rv(patched) or old_rv


VERSIONS = st.one_of(
    st.sampled_from(["12345", "0", "00", "", "1", "x7", " 1"]),
    st.none(),
    st.integers(-1, 3),
    st.text(max_size=4),
)


@settings(max_examples=examples(400), deadline=None)
@given(
    old_rv=VERSIONS,
    given_rv=st.one_of(st.just("same"), st.just("copy"), st.just("absent"), VERSIONS),
    shape=st.sampled_from(["dict", "subclass", "none", "absent", "list"]),
)
def test_the_same_version_as_before(old_rv: Any, given_rv: Any, shape: str) -> None:
    meta: dict[str, Any] = {"name": "p"}
    if given_rv == "same":
        meta["resourceVersion"] = old_rv
    elif given_rv == "copy":
        meta["resourceVersion"] = "".join(list(old_rv)) if isinstance(old_rv, str) else old_rv
    elif given_rv != "absent":
        meta["resourceVersion"] = given_rv
    patched: dict[str, Any] = {"kind": "Pod"}
    if shape == "dict":
        patched["metadata"] = meta
    elif shape == "subclass":
        patched["metadata"] = Meta(meta)
    elif shape == "none":
        patched["metadata"] = None
    elif shape == "list":
        patched["metadata"] = [meta]
    assert _patched_rv(patched, old_rv) == patched_rv52(patched, old_rv)
    assert type(_patched_rv(patched, old_rv)) is type(patched_rv52(patched, old_rv))


def test_a_stored_zero_left_in_place() -> None:
    zero = "".join(["0"])
    assert _patched_rv({"metadata": {"resourceVersion": zero}}, zero) is zero
    assert patched_rv52({"metadata": {"resourceVersion": zero}}, zero) is zero
