"""Stop 46: the no-op-write check (`_same_but_bookkeeping`) without walking members an update shares with the
stored object, and without building the two metadata dicts it compared.

The plain version is kept here as it was. Hypothesis makes a stored object and an update of it that keeps,
copies, changes, adds or drops each member (a shared dict, an equal copy, a different value, NaN floats that
are or are not the same object, metadata with and without `resourceVersion` and `managedFields` entries whose
times differ): both versions give the same answer.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import unchanged
from kjobs.server.service import _same_but_bookkeeping, _untimed
from tests.hypothesis_budget import examples

NAN = float("nan")


def plain_same_but_bookkeeping(new: dict[str, Any], old: dict[str, Any]) -> bool:
    if new.keys() != old.keys():
        return False
    for key, value in new.items():
        if key != "metadata" and value != old[key]:
            return False
    meta, old_meta = new.get("metadata"), old.get("metadata")
    if not isinstance(meta, dict) or not isinstance(old_meta, dict):
        return meta == old_meta
    ignored = ("resourceVersion", "managedFields")
    if {k: v for k, v in meta.items() if k not in ignored} != {k: v for k, v in old_meta.items() if k not in ignored}:
        return False
    return bool(_untimed(meta.get("managedFields")) == _untimed(old_meta.get("managedFields")))


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["a", "b", ""]), st.just(NAN), st.just(1.0)
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["x", "y", "z"]), inner, max_size=3)
    ),
    max_leaves=8,
)
entries = st.lists(
    st.fixed_dictionaries(
        {"manager": st.sampled_from(["m", "n"]), "operation": st.just("Update")},
        optional={"time": st.sampled_from(["2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z"])},
    ),
    max_size=2,
)
metadata = st.dictionaries(
    st.sampled_from(["name", "labels", "finalizers", "uid", "resourceVersion", "generation"]), values, max_size=5
).flatmap(lambda meta: st.one_of(st.just(meta), entries.map(lambda e: {**meta, "managedFields": e})))
stored = st.fixed_dictionaries(
    {"metadata": st.one_of(metadata, values)},
    optional={"apiVersion": st.just("v1"), "spec": values, "status": values, "data": values},
)


@st.composite
def updates(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    old = draw(stored)
    new: dict[str, Any] = {}
    for key, value in old.items():
        how = draw(st.sampled_from(["share", "copy", "copy", "change", "drop"]))
        if how == "share":
            new[key] = value
        elif how == "copy":
            new[key] = copy.deepcopy(value)
        elif how == "change":
            new[key] = draw(metadata) if key == "metadata" else draw(values)
    if isinstance(old.get("metadata"), dict) and isinstance(new.get("metadata"), dict):
        meta = new["metadata"] = dict(new["metadata"])
        for key in list(meta):  # a member of the metadata shared, copied or changed in turn
            how = draw(st.sampled_from(["keep", "share", "copy", "change", "drop"]))
            if how == "share" and key in old["metadata"]:
                meta[key] = old["metadata"][key]
            elif how == "copy":
                meta[key] = copy.deepcopy(meta[key])
            elif how == "change":
                meta[key] = draw(values)
            elif how == "drop":
                del meta[key]
    if draw(st.booleans()):
        new[draw(st.sampled_from(["extra", "spec"]))] = draw(values)
    return new, old


@settings(max_examples=examples(600), deadline=None)
@given(updates())
def test_the_no_op_check_answers_as_the_plain_comparison(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    new, old = pair
    assert _same_but_bookkeeping(new, old) == plain_same_but_bookkeeping(new, old)


def test_a_shared_member_is_equal_and_a_nan_is_not_equal_to_itself_at_the_top() -> None:
    spec = {"containers": [{"name": "a", "x": NAN}]}
    old = {"metadata": {"name": "p", "resourceVersion": "1"}, "spec": spec, "score": NAN}
    kept = {"metadata": {"name": "p", "resourceVersion": "2"}, "spec": spec, "score": old["score"]}
    # a NaN compares unequal to itself outside a container: the plain check called that a change, and so does this
    assert plain_same_but_bookkeeping(kept, old) is False
    assert _same_but_bookkeeping(kept, old) is False
    del old["score"], kept["score"]
    assert _same_but_bookkeeping(kept, old) is True
    # a metadata key the stored object lacks, or one it has that the update dropped, is a change
    assert _same_but_bookkeeping({**kept, "metadata": {"name": "p", "uid": "u"}}, old) is False
    assert _same_but_bookkeeping({**kept, "metadata": {}}, old) is False
    assert _same_but_bookkeeping({**kept, "metadata": {"name": "p"}}, old) is True


def stop51_same_but_bookkeeping(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Stop 51's form: `unchanged` called for each member but the metadata (stop 52 writes it out in the loop)."""
    if new.keys() != old.keys():
        return False
    for key, value in new.items():
        if key != "metadata" and not unchanged(value, old[key]):
            return False
    meta, old_meta = new.get("metadata"), old.get("metadata")
    if not isinstance(meta, dict) or not isinstance(old_meta, dict):
        return meta == old_meta
    kept = 0
    for key, value in meta.items():
        if key == "resourceVersion" or key == "managedFields":
            continue
        if key not in old_meta:
            return False
        other = old_meta[key]
        if value is not other and value != other:
            return False
        kept += 1
    if kept != len(old_meta) - ("resourceVersion" in old_meta) - ("managedFields" in old_meta):
        return False
    return bool(_untimed(meta.get("managedFields")) == _untimed(old_meta.get("managedFields")))


@settings(max_examples=examples(600), deadline=None)
@given(updates())
def test_the_no_op_check_answers_as_stop_51s(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    new, old = pair
    assert _same_but_bookkeeping(new, old) == stop51_same_but_bookkeeping(new, old)
