"""In-process watchers of one change share one decoded object, and the mutation detector catches a change to it."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from kjobs.api.errors import ApiError
from kjobs.store import MemoryStore, mutation


def _pod(name: str) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": "default", "labels": {"app": "x"}}, "spec": {"nodeName": "n1"}}


def test_watchers_of_one_change_share_one_decoded_object() -> None:
    store = MemoryStore()
    first = store.watch("pods", None, since=store.revision)
    second = store.watch("pods", "default", since=store.revision, label_selector="app=x")
    store.create("pods", "default", "a", _pod("a"))
    one, two = first.next(timeout=1), second.next(timeout=1)
    assert one is not None and two is not None
    assert one.object is two.object
    assert one.object["metadata"]["name"] == "a"


def test_a_changed_shared_object_is_reported_with_its_name() -> None:
    mutation.check()
    store = MemoryStore()
    w = store.watch("pods", None, since=store.revision)
    store.create("pods", "default", "a", _pod("a"))
    event = w.next(timeout=1)
    assert event is not None
    event.object["spec"]["nodeName"] = "elsewhere"
    with pytest.raises(mutation.CacheMutationError, match="default/a"):
        mutation.check()
    mutation.check()  # reported once, then forgotten


def test_an_adopted_write_is_the_object_its_watchers_receive_and_a_copied_one_is_not() -> None:
    store = MemoryStore()
    w = store.watch("pods", None, since=store.revision)
    handed_over = _pod("a")
    adopted = asyncio.run(store.acreate("pods", "default", "a", handed_over, adopt=True))
    mine = _pod("b")
    copied = store.create("pods", "default", "b", mine)
    first, second = w.next(timeout=1), w.next(timeout=1)
    assert first is not None and second is not None
    assert first.object is adopted is handed_over  # no decode: the writer handed it over and reads it only
    assert second.object is not copied and second.object is not mine and second.object == copied
    copied["spec"]["nodeName"] = "mine to change"  # a plain write's result is the caller's own
    mutation.check()


def test_an_update_is_a_no_op_exactly_when_only_key_order_differs() -> None:
    store = MemoryStore()
    created = store.create("pods", "default", "a", _pod("a"))
    rv = created["metadata"]["resourceVersion"]
    reordered = {"spec": dict(created["spec"]), "metadata": dict(reversed(list(created["metadata"].items())))}
    assert store.update("pods", "default", "a", reordered)["metadata"]["resourceVersion"] == rv
    same_width = {**_pod("a"), "spec": {"nodeName": "n2"}}  # same encoded length, another value
    changed = store.update("pods", "default", "a", same_width)
    assert changed["metadata"]["resourceVersion"] != rv
    assert store.get("pods", "default", "a")["spec"]["nodeName"] == "n2"


def test_get_shared_returns_the_shared_object_of_the_current_revision_only() -> None:
    store = MemoryStore()
    written = asyncio.run(store.acreate("pods", "default", "a", _pod("a"), adopt=True))
    assert store.get_shared("pods", "default", "a") is written  # no decode
    assert store.get("pods", "default", "a") is not written  # a plain read is the caller's own
    store.update("pods", "default", "a", {**_pod("a"), "spec": {"nodeName": "n2"}})  # not handed over
    fresh = store.get_shared("pods", "default", "a")
    assert fresh is not written and fresh["spec"]["nodeName"] == "n2"
    store.delete("pods", "default", "a")
    with pytest.raises(ApiError) as gone:
        store.get_shared("pods", "default", "a")
    assert gone.value.code == 404


def test_watchers_of_a_deletion_share_the_last_state_the_store_stamped_and_the_deleter_gets_its_own() -> None:
    store = MemoryStore()
    store.create("pods", "default", "a", _pod("a"))
    first = store.watch("pods", None, since=store.revision)
    second = store.watch("pods", "default", since=store.revision, label_selector="app=x")
    gone = store.delete("pods", "default", "a")
    one, two = first.next(timeout=1), second.next(timeout=1)
    assert one is not None and two is not None
    assert str(one.type) == str(two.type) == "DELETED"
    assert one.object is two.object  # decoded once, to be stamped, and shared
    assert one.object == gone == orjson.loads(one.raw)
    assert one.object["metadata"]["resourceVersion"] == str(store.revision)
    assert gone is not one.object
    gone["spec"]["nodeName"] = "mine to change"  # the deleter's copy is its own
    mutation.check()


def test_a_deleter_handing_over_its_read_gets_it_back_stamped_and_shared_with_no_decode() -> None:
    store = MemoryStore()
    store.create("pods", "default", "a", _pod("a"))
    w = store.watch("pods", None, since=store.revision)
    read = store.get("pods", "default", "a")
    gone = asyncio.run(store.adelete("pods", "default", "a", last=read))
    event = w.next(timeout=1)
    assert event is not None and str(event.type) == "DELETED"
    assert gone is event.object  # the deleter's read, stamped at the deletion's revision on a copy of its top
    assert gone["spec"] is read["spec"] and gone["metadata"] is not read["metadata"]
    assert gone["metadata"]["resourceVersion"] == str(store.revision)
    assert orjson.loads(event.raw) == gone
    mutation.check()


def test_a_deleter_read_at_an_older_revision_is_not_what_the_store_stamps() -> None:
    store = MemoryStore()
    store.create("pods", "default", "a", _pod("a"))
    stale = store.get("pods", "default", "a")
    store.update("pods", "default", "a", {**_pod("a"), "spec": {"nodeName": "n2"}})
    w = store.watch("pods", None, since=store.revision)
    gone = asyncio.run(store.adelete("pods", "default", "a", last=stale))
    event = w.next(timeout=1)
    assert event is not None
    assert gone is not stale and stale["spec"]["nodeName"] == "n1"  # left as it was read
    assert gone["spec"]["nodeName"] == event.object["spec"]["nodeName"] == "n2"
    assert gone["metadata"]["resourceVersion"] == str(store.revision)


def test_get_shared_keeps_the_most_recently_written_objects_up_to_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `_LATEST_KEPT` handed-over objects, the one written longest ago is dropped (read again by a decode);
    writing an object again makes it the newest."""
    from kjobs.store import base

    monkeypatch.setattr(base, "_LATEST_KEPT", 3)
    store = MemoryStore()

    def write(name: str) -> dict[str, object]:
        return asyncio.run(store.acreate("pods", "default", name, _pod(name), adopt=True))

    a, b, c = write("a"), write("b"), write("c")
    store.delete("pods", "default", "b")
    b = write("b")  # a new object under an old key: the newest
    d = write("d")  # four kept would be one too many: `a`, the oldest, goes
    assert store.get_shared("pods", "default", "a") is not a
    assert store.get_shared("pods", "default", "a") == store.get("pods", "default", "a")
    assert [store.get_shared("pods", "default", n) for n in "bcd"] == [b, c, d]
    assert all(store.get_shared("pods", "default", n) is o for n, o in zip("bcd", (b, c, d), strict=True))
    e = write("e")  # then `c`, written before `b` came back
    assert store.get_shared("pods", "default", "c") is not c
    assert all(store.get_shared("pods", "default", n) is o for n, o in zip("bde", (b, d, e), strict=True))


def test_a_check_while_another_thread_shares_objects_does_not_fail() -> None:
    """A cluster of an earlier test may still run on a thread while the suite's fixture checks: the check reads
    what was remembered up to then, and a decode on the other thread meanwhile is kept for the next check."""
    import sys
    import threading

    mutation.check()
    raw = orjson.dumps(_pod("a"))
    stop = threading.Event()

    def share() -> None:
        while not stop.is_set():
            mutation.SharedDecode(raw).get()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    thread = threading.Thread(target=share)
    thread.start()
    try:
        for _ in range(300):
            for _ in range(200):
                mutation.SharedDecode(raw).get()
            mutation.check()
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    mutation.check()


def test_a_pod_written_20000_writes_ago_is_still_shared() -> None:
    """At issue #15's parallelism (5,000 pods in flight, about four writes each) some 20,000 writes of other pods
    fall between a pod's binding and its node's status patch: the patch must still read the object its watchers
    share rather than decode the pod again (docs/perf44.md)."""
    store = MemoryStore()
    first = asyncio.run(store.acreate("pods", "default", "first", _pod("first"), adopt=True))

    async def others() -> None:
        for n in range(20_000):
            await store.acreate("pods", "default", f"p{n}", _pod(f"p{n}"), adopt=True)

    asyncio.run(others())
    assert store.get_shared("pods", "default", "first") is first


def test_a_delete_handed_a_shared_read_stamps_a_copy_and_leaves_the_read_as_it_was() -> None:
    """A deleter may hand over a read others share (an informer's object, `get_shared`'s): the store stamps the
    deletion's revision on a copy of its top level and metadata, sharing the rest (docs/perf45.md)."""
    mutation.check()
    store = MemoryStore()
    asyncio.run(store.acreate("pods", "default", "a", _pod("a"), adopt=True))
    shared = store.get_shared("pods", "default", "a")
    read_at = shared["metadata"]["resourceVersion"]
    w = store.watch("pods", None, since=store.revision)
    gone = asyncio.run(store.adelete("pods", "default", "a", last=shared))
    assert shared["metadata"]["resourceVersion"] == read_at
    assert gone["metadata"]["resourceVersion"] == str(store.revision) != read_at
    assert gone["spec"] is shared["spec"]
    event = w.next(timeout=1)
    assert event is not None and event.object is gone
    assert orjson.loads(event.raw) == gone
    mutation.check()  # nothing shared was changed


def test_get_shared_returns_a_known_copy_only_at_the_stored_revision() -> None:
    store = MemoryStore()
    store.create("pods", "default", "a", _pod("a"))
    known = store.get("pods", "default", "a")
    assert store.get_shared("pods", "default", "a", known=known) is known
    store.update("pods", "default", "a", {**known, "spec": {"nodeName": "n2"}})
    fresh = store.get_shared("pods", "default", "a", known=known)
    assert fresh is not known
    assert fresh["spec"] == {"nodeName": "n2"}
