"""Stop 52: `_stamp_update` reads the stored JSON's length from the record's bytes when they are not packed
(no call of `Record.raw`), the stored revision's text once, and trims the encoded bytes inline. Stop 51's form
is kept here; on hypothesis objects stored as they are, packed against a dictionary, or packed against
themselves, and updates equal to them (but for the revision, with keys in another order, with a value of the same
width changed) or not: the same record (bytes, revision, index) or None, and the object left as it left it."""

from __future__ import annotations

import copy
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.store import base
from kjobs.store.events import Record
from kjobs.store.packing import Dictionary, pack
from tests.hypothesis_budget import examples


def old_stamp_update(obj: dict[str, Any], revision: int, index: Any, current: Record) -> Record | None:
    """Stop 51's `_stamp_update`."""
    meta = obj["metadata"]
    meta["resourceVersion"] = stamp = str(revision)
    raw = orjson.dumps(obj)
    if len(raw) - len(stamp) == len(current.raw) - len(str(current.revision)):
        meta["resourceVersion"] = str(current.revision)
        if obj == current.decode():
            return None
        meta["resourceVersion"] = stamp
    return Record(base._trimmed(raw), revision, *index)


VALUE = st.one_of(st.sampled_from(["a", "b", "ab", ""]), st.integers(0, 12), st.booleans(), st.none())
OBJECT = st.dictionaries(st.sampled_from(["spec", "status", "data", "kind"]), st.one_of(
    VALUE, st.dictionaries(st.sampled_from(["x", "y", "z"]), VALUE, max_size=3)), max_size=4)  # fmt: skip


def _stored(obj: dict[str, Any], revision: int, how: str) -> Record:
    stored = {**obj, "metadata": {"name": "o", "resourceVersion": str(revision)}}
    raw = orjson.dumps(stored)
    record = Record(raw, revision, {}, {}, "")
    if how == "packed":
        dictionary = Dictionary(orjson.dumps({"metadata": {"name": "o"}, "spec": {"x": "a"}}))
        record.dictionary = dictionary
        record.data = pack(raw, dictionary)
    elif how == "dictionary":  # a group's dictionary: its own JSON, unpacked
        record.dictionary = Dictionary(raw)
    return record


@settings(max_examples=examples(800), deadline=None)
@given(
    OBJECT,
    OBJECT,
    st.sampled_from(["same", "reordered", "other"]),
    st.sampled_from(["plain", "packed", "dictionary"]),
    st.sampled_from([(9, 10), (99, 100), (5, 6), (10, 12)]),
)
def test_an_update_is_stamped_as_stop_51_stamped_it(
    stored: dict[str, Any], other: dict[str, Any], how: str, packing: str, revisions: tuple[int, int]
) -> None:
    before, after = revisions
    current = _stored(stored, before, packing)
    if how == "same":
        obj = {**copy.deepcopy(stored), "metadata": {"name": "o", "resourceVersion": "1"}}
    elif how == "reordered":
        obj = {"metadata": {"resourceVersion": "1", "name": "o"}, **dict(reversed(list(stored.items())))}
    else:
        obj = {**other, "metadata": {"name": "o", "resourceVersion": "1"}}
    index = ({"app": "a"}, {"metadata.name": "o"}, "u")
    mine, theirs = copy.deepcopy(obj), copy.deepcopy(obj)
    new = base._stamp_update(mine, after, index, current)
    old = old_stamp_update(theirs, after, index, current)
    assert new == old
    assert mine == theirs
    if new is not None:
        assert type(new.data) is bytes and new.data == orjson.dumps(mine)
