"""Watches: initial state, resuming from a revision, selector transitions, 410, and consumers (both backends)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from kjobs.api.errors import ApiError
from kjobs.store import Event, EventType, Store, Watch
from tests.store.conftest import StoreFactory, pod, rv

WAIT = 10.0  # generous bound for an event that is already due; never reached when things work


def take(w: Watch, n: int) -> list[Event]:
    events: list[Event] = []
    for _ in range(n):
        ev = w.next(WAIT)
        assert ev is not None, f"expected {n} events, got {len(events)}"
        events.append(ev)
    return events


def summary(events: list[Event]) -> list[tuple[str, str, int]]:
    return [(e.type.value, e.object["metadata"]["name"], rv(e.object)) for e in events]


def test_watch_without_revision_starts_with_current_objects(store: Store) -> None:
    a = store.create("pods", "ns", "a", pod("a", "ns"))
    b = store.create("pods", "ns", "b", pod("b", "ns"))
    with store.watch("pods", since=None) as w:
        assert summary(take(w, 2)) == [("ADDED", "a", rv(a)), ("ADDED", "b", rv(b))]
        c = store.create("pods", "ns", "c", pod("c", "ns"))
        assert summary(take(w, 1)) == [("ADDED", "c", rv(c))]
        assert w.next(0) is None


def test_watch_from_a_revision_replays_only_later_changes_in_order(store: Store) -> None:
    a = store.create("pods", "ns", "a", pod("a", "ns"))
    _, listed_at = store.list("pods")
    a2 = store.update("pods", "ns", "a", pod("a", "ns", x="1"))
    b = store.create("pods", "ns", "b", pod("b", "ns"))
    store.create("nodes", "", "n", {"metadata": {"name": "n"}})  # other resources are not delivered
    gone = store.delete("pods", "ns", "a")
    with store.watch("pods", since=listed_at) as w:
        events = take(w, 3)
        assert w.next(0) is None
    assert summary(events) == [("MODIFIED", "a", rv(a2)), ("ADDED", "b", rv(b)), ("DELETED", "a", rv(gone))]
    assert rv(a) == listed_at
    assert events[2].object["metadata"]["labels"] == {"x": "1"}  # the last state, at the deletion revision


def test_namespace_scoped_watch(store: Store) -> None:
    with store.watch("pods", "ns1", since=store.revision or None) as w:
        store.create("pods", "ns2", "a", pod("a", "ns2"))
        store.create("pods", "ns1", "b", pod("b", "ns1"))
        assert [e.object["metadata"]["name"] for e in take(w, 1)] == ["b"]
        assert w.next(0) is None


def test_label_selector_transitions_become_added_and_deleted(store: Store) -> None:
    store.create("pods", "ns", "a", pod("a", "ns", app="web"))
    with store.watch("pods", since=None, label_selector="app=web") as w:
        assert summary(take(w, 1))[0][0] == "ADDED"
        out = store.update("pods", "ns", "a", pod("a", "ns", app="db"))
        [left] = take(w, 1)
        assert (left.type, rv(left.object)) == (EventType.DELETED, rv(out))
        assert left.object["metadata"]["labels"] == {"app": "web"}  # previous state, stamped with the new revision
        store.update("pods", "ns", "a", pod("a", "ns", app="db", v="2"))  # outside the selection: nothing
        back = store.update("pods", "ns", "a", pod("a", "ns", app="web"))
        changed = store.update("pods", "ns", "a", pod("a", "ns", app="web", v="3"))
        assert summary(take(w, 2)) == [("ADDED", "a", rv(back)), ("MODIFIED", "a", rv(changed))]
        store.create("pods", "ns", "other", pod("other", "ns", app="db"))
        store.delete("pods", "ns", "a")
        assert [e.type for e in take(w, 1)] == [EventType.DELETED]
        assert w.next(0) is None


def test_field_selector_watch_on_one_name_like_kubectl_wait(store: Store) -> None:
    store.create("jobs.batch", "ns", "x", {"metadata": {"name": "x", "namespace": "ns"}})
    store.create("jobs.batch", "ns", "y", {"metadata": {"name": "y", "namespace": "ns"}})
    with store.watch("jobs.batch", "ns", since=0, field_selector="metadata.name=x") as w:
        store.update("jobs.batch", "ns", "y", {"metadata": {"name": "y", "namespace": "ns"}, "status": {}})
        store.delete("jobs.batch", "ns", "x")
        assert [(e.type.value, e.object["metadata"]["name"]) for e in take(w, 2)] == [
            ("ADDED", "x"),
            ("DELETED", "x"),
        ]
        assert w.next(0) is None


def test_watch_from_revision_older_than_history_is_gone(make_store: StoreFactory) -> None:
    store = make_store(history_size=3)
    for i in range(6):
        store.create("pods", "ns", f"p{i}", pod(f"p{i}", "ns"))
    with pytest.raises(ApiError) as info:
        store.watch("pods", since=2)
    assert (info.value.code, info.value.reason) == (410, "Expired")
    assert info.value.message == "too old resource version: 2 (3)"
    with store.watch("pods", since=3) as w:
        assert [rv(e.object) for e in take(w, 3)] == [4, 5, 6]


def test_history_is_per_resource(make_store: StoreFactory) -> None:
    store = make_store(history_size=3)
    store.create("pods", "ns", "p", pod("p", "ns"))
    for i in range(10):
        store.create("events", "ns", f"e{i}", {"metadata": {"name": f"e{i}"}})
    with store.watch("pods", since=1) as w:
        store.update("pods", "ns", "p", pod("p", "ns", x="1"))
        assert [e.type for e in take(w, 1)] == [EventType.MODIFIED]


def test_async_iteration_receives_writes_from_other_threads(store: Store) -> None:
    async def main() -> list[str]:
        w = store.watch("pods", since=store.revision or None)

        def writer() -> None:
            for i in range(5):
                store.create("pods", "ns", f"p{i}", pod(f"p{i}", "ns"))
            store.delete("pods", "ns", "p0")

        thread = threading.Thread(target=writer)
        thread.start()
        seen: list[str] = []
        async with asyncio.timeout(WAIT):
            async for ev in w:
                seen.append(f"{ev.type.value} {ev.object['metadata']['name']}")
                if len(seen) == 6:
                    w.close()
        thread.join()
        return seen

    assert asyncio.run(main()) == [f"ADDED p{i}" for i in range(5)] + ["DELETED p0"]


def test_closing_a_watch_ends_a_waiting_consumer(store: Store) -> None:
    w = store.watch("pods", since=None)

    async def consume() -> list[Event]:
        loop = asyncio.get_running_loop()
        loop.call_later(0.01, w.close)
        return [ev async for ev in w]

    assert asyncio.run(consume()) == []
    assert w.closed
    store.create("pods", "ns", "a", pod("a", "ns"))  # a closed watch is no longer fed
    assert w.next(0) is None


def test_a_watcher_that_falls_behind_is_closed_without_blocking_writers(make_store: StoreFactory) -> None:
    store = make_store(watch_queue=5)
    slow = store.watch("pods", since=None)
    keeping_up = store.watch("pods", since=None)
    for i in range(10):
        store.create("pods", "ns", f"p{i}", pod(f"p{i}", "ns"))
        assert keeping_up.next(WAIT) is not None
    assert slow.closed and slow.overflowed
    assert slow.next(0) is None
    assert not keeping_up.closed


def test_events_unpack_as_type_and_object(store: Store) -> None:
    with store.watch("pods", since=None) as w:
        store.create("pods", "ns", "a", pod("a", "ns"))
        event_type, obj = take(w, 1)[0]
    assert event_type == "ADDED"
    assert obj["metadata"]["name"] == "a"


def test_a_failing_watcher_is_closed_and_the_write_still_succeeds(store: Store) -> None:
    # namespaced, so the store asks its `filter` (a watch of every object gets each change without the call)
    broken = store.watch("pods", "ns", since=None)
    healthy = store.watch("pods", since=None)

    def explode(change: object) -> None:
        raise RuntimeError("selector bug")

    broken.filter = explode  # type: ignore[method-assign]
    created = store.create("pods", "ns", "a", pod("a", "ns"))
    assert store.get("pods", "ns", "a") == created
    assert broken.closed
    ev = healthy.next(WAIT)
    assert ev is not None and ev.object == created
    healthy.close()


def test_initial_state_larger_than_the_queue_bound_is_delivered(make_store: StoreFactory) -> None:
    store = make_store(watch_queue=3)
    for i in range(10):
        store.create("pods", "ns", f"p{i}", pod(f"p{i}", "ns"))
    with store.watch("pods", since=None) as w:
        store.update("pods", "ns", "p0", pod("p0", "ns", live="1"))
        assert len(take(w, 11)) == 11
        assert not w.closed


def test_list_then_watch_from_its_revision_reconstructs_the_state_under_concurrent_writes(
    make_store: StoreFactory,
) -> None:
    """The informer pattern: list at revision R, watch from R; replaying must give the final state exactly."""
    store = make_store()
    threads, rounds = 4, 60

    def churn(t: int) -> None:
        for i in range(rounds):
            name = f"t{t}-{i % 7}"
            try:
                if i % 3 == 0:
                    store.create("pods", "ns", name, pod(name, "ns", round=str(i)))
                elif i % 3 == 1:
                    store.update("pods", "ns", name, pod(name, "ns", round=str(i)))
                else:
                    store.delete("pods", "ns", name)
            except ApiError as err:
                assert err.code in (404, 409)

    writers = [threading.Thread(target=churn, args=(t,)) for t in range(threads)]
    for w in writers:
        w.start()
    snapshots: list[tuple[dict[str, object], Watch]] = []
    for _ in range(3):
        items, revision = store.list("pods")
        snapshots.append(({o["metadata"]["name"]: o for o in items}, store.watch("pods", since=revision or None)))
    for w in writers:
        w.join(timeout=60)
    final = {o["metadata"]["name"]: o for o in store.list("pods")[0]}
    for state, watch in snapshots:
        for event in watch.drain():
            name = event.object["metadata"]["name"]
            if event.type == EventType.DELETED:
                assert name in state
                del state[name]
            else:
                assert (name in state) == (event.type == EventType.MODIFIED)
                state[name] = event.object
        watch.close()
        assert state == final


def _bound(name: str, node: str, **labels: str) -> dict[str, object]:
    obj = pod(name, "ns", **labels)
    obj["spec"] = {"nodeName": node} if node else {}
    return obj


def test_node_watches_see_only_their_pods_through_the_trigger_index(store: Store) -> None:
    """Each kubelet's `spec.nodeName=NODE` watch is filed under its node (the watch cache's trigger index):
    binding (no node → a node) is ADDED for that node's watch only; a change of node (possible for objects the
    store holds, if not for a real pod) is DELETED on the old node's watch and ADDED on the new one's."""
    with (
        store.watch("pods", since=store.revision or None, field_selector="spec.nodeName=a") as on_a,
        store.watch("pods", since=store.revision or None, field_selector="spec.nodeName=b") as on_b,
        store.watch("pods", since=store.revision or None, field_selector="spec.nodeName!=a") as not_a,
        store.watch("pods", since=store.revision or None) as everything,
    ):
        store.create("pods", "ns", "p", _bound("p", ""))
        bound = store.update("pods", "ns", "p", _bound("p", "a"))
        store.create("pods", "ns", "q", _bound("q", "b"))
        moved = store.update("pods", "ns", "p", _bound("p", "b"))
        store.delete("pods", "ns", "q")
        assert summary(take(on_a, 2)) == [("ADDED", "p", rv(bound)), ("DELETED", "p", rv(moved))]
        assert [(e.type.value, e.object["metadata"]["name"]) for e in take(on_b, 3)] == [
            ("ADDED", "q"),
            ("ADDED", "p"),
            ("DELETED", "q"),
        ]
        assert [(e.type.value, e.object["metadata"]["name"]) for e in take(not_a, 5)] == [
            ("ADDED", "p"),  # created without a node: "" != "a"
            ("DELETED", "p"),  # bound to a
            ("ADDED", "q"),
            ("ADDED", "p"),  # moved to b
            ("DELETED", "q"),
        ]
        assert len(take(everything, 5)) == 5
        for w in (on_a, on_b, not_a, everything):
            assert w.next(0) is None
    assert store.stats().watchers == {}  # closed watches are forgotten, indexed or not


def test_a_pod_write_is_offered_only_to_watches_that_can_select_it() -> None:
    """With a watch per node, a pod write is offered to its own node's watch (and unindexed ones), not to all."""
    from kjobs.store import MemoryStore
    from kjobs.store.watch import Watch

    offered: list[str] = []
    original = Watch.filter

    def counting(self: Watch, change, shared=None, made=None):  # type: ignore[no-untyped-def]
        offered.append(str(self.field_selector))
        return original(self, change, shared, made)

    store = MemoryStore()
    watches = [store.watch("pods", since=None, field_selector=f"spec.nodeName=n{i}") for i in range(50)]
    try:
        Watch.filter = counting  # type: ignore[method-assign]
        store.create("pods", "ns", "p", _bound("p", "n7"))
        store.update("pods", "ns", "p", _bound("p", "n7", x="1"))
    finally:
        Watch.filter = original  # type: ignore[method-assign]
        for w in watches:
            w.close()
        store.close()
    assert offered == ["spec.nodeName=n7", "spec.nodeName=n7"]
    assert [e.type.value for e in watches[7].drain()] == ["ADDED", "MODIFIED"]
