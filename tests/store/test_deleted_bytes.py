"""A delete's last state at the new revision, cut from the stored bytes (docs/gcbytes48.md), must be the bytes a
fresh encode of the stored object gives, for any object: in the live watch event, in the history a resumed watch
replays, and beside the object the watchers share and the deleter gets back. Objects carry the traps a splice of
`"resourceVersion":"N"` could fall into: another object's `resourceVersion` of the same value, keys that end in
it, strings that hold it."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kjobs.store.base as base
from kjobs.api.types import Obj
from kjobs.store.events import EventType
from kjobs.store.memory import MemoryStore
from tests.core.test_pod_path_rewrites import OBJECTS
from tests.hypothesis_budget import examples

REVISIONS = st.sampled_from(["1", "2", "3", "x"])
TRAPS = st.fixed_dictionaries(
    {},
    optional={
        "spec": st.dictionaries(st.sampled_from(["resourceVersion", "a"]), REVISIONS),
        "status": st.dictionaries(st.sampled_from(['a"resourceVersion', 'resourceVersion"', "b"]), REVISIONS),
        "data": st.sampled_from(['"resourceVersion":"2"', '\\"resourceVersion\\":\\"3\\"', "é\u2028", "x"]),
        "annotations": st.dictionaries(st.sampled_from(["resourceVersion", "k"]), REVISIONS),
    },
)
HOW = st.sampled_from(["none", "read", "untouched", "shared"])


def _pod(obj: Obj, traps: Obj) -> Obj:
    """A pod named `p` holding `obj`'s members and the traps (its metadata a JSON object, as the store keeps)."""
    pod: Obj = {**obj, **traps}
    meta = pod.get("metadata")
    meta = dict(meta) if type(meta) is dict else {}
    if "annotations" in traps:
        meta["annotations"] = pod.pop("annotations")
    meta["name"] = "p"
    pod["metadata"] = meta
    return pod


def _delete(store: MemoryStore, how: str) -> Obj:
    """Delete pod `p` as the store's callers do: with no read, their own decode (vouched for or not), or the
    very object the store shares for the record."""
    last: Obj | None = None
    if how in ("read", "untouched"):
        last = store.get("pods", "ns", "p")
    elif how == "shared":
        last = store.get_shared("pods", "ns", "p")
    untouched = how == "untouched"
    return asyncio.run(store.adelete("pods", "ns", "p", last=last, untouched=untouched))


@settings(max_examples=examples(400), deadline=None)
@given(OBJECTS, TRAPS, st.booleans(), HOW)
def test_the_deleted_bytes_are_the_stored_objects_encode(obj: Obj, traps: Obj, updated: bool, how: str) -> None:
    store = MemoryStore()
    pod = _pod(obj, traps)
    store.create("pods", "ns", "p", pod)
    if updated or how == "shared":  # a handed-over write: the store then shares that object itself
        again: Any = orjson.loads(orjson.dumps(pod))
        again["metadata"]["labels"] = {"x": "y"}
        asyncio.run(store.aupdate("pods", "ns", "p", again, adopt=True))
    before = store.revision
    expected = store.get("pods", "ns", "p")
    expected["metadata"]["resourceVersion"] = str(before + 1)
    live = store.watch("pods", "ns", since=before)
    gone = _delete(store, how)
    event = live.next(0)
    replayed = store.watch("pods", "ns", since=before).next(0)
    assert event is not None and replayed is not None
    assert event.type is EventType.DELETED and replayed.type is EventType.DELETED
    assert event.raw == replayed.raw == orjson.dumps(expected)
    assert event.object == replayed.object == gone == expected


def test_a_copy_the_deleter_changed_is_published_as_changed() -> None:
    """Without `untouched`, a read at the stored revision that its deleter changed (a DELETE's policy dropping a
    finalizer) is what the DELETED event shows, bytes and object alike, not the stored bytes."""
    store = MemoryStore()
    store.create("pods", "ns", "p", {"metadata": {"name": "p", "finalizers": ["orphan"]}})
    changed = store.get("pods", "ns", "p")
    del changed["metadata"]["finalizers"]
    w = store.watch("pods", "ns", since=store.revision)
    gone = asyncio.run(store.adelete("pods", "ns", "p", last=changed))
    event = w.next(0)
    assert event is not None
    assert "finalizers" not in gone["metadata"]
    assert orjson.loads(event.raw) == event.object == gone


@pytest.mark.parametrize(
    ("how", "encodes"), [("none", 0), ("untouched", 0), ("shared", 0), ("read", 1)]
)  # fmt: skip
def test_a_delete_of_the_stored_object_does_not_encode_it_again(
    how: str, encodes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deleted pod's bytes come from the stored bytes whenever the store knows its object is the stored one;
    a read nobody vouched for is encoded (docs/gcbytes48.md)."""
    store = MemoryStore()
    store.create("pods", "ns", "p", {"metadata": {"name": "p"}, "spec": {"nodeName": "n"}})
    asyncio.run(store.aupdate("pods", "ns", "p", {"metadata": {"name": "p"}, "spec": {"nodeName": "m"}}, adopt=True))
    calls: list[int] = []
    stamp = base._stamp

    def counted(obj: Obj, revision: int, index: Any) -> Any:
        calls.append(revision)
        return stamp(obj, revision, index)

    monkeypatch.setattr(base, "_stamp", counted)
    gone = _delete(store, how)
    assert len(calls) == encodes
    assert gone["spec"] == {"nodeName": "m"} and gone["metadata"]["resourceVersion"] == "3"
