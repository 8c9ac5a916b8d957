"""Stop 51: a commit's watch fan-out (`Store._publish`, `Watch.filter`, `Watch.push`) shares one event per type
among the watchers of a change, pushes a single change's events as they are made, skips a filtered watcher's
second selector match when the previous record holds the very same labels and fields dicts (and the selector reads
nothing else), and hands the writer's object to each event at once. Every watcher must receive what the forms
kept here delivered: the same events (type, bytes, revision, object) in the same order, the same ends of watch."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.store import MemoryStore
from kjobs.store.base import Key, Op, _write
from kjobs.store.events import Change, Event, EventType, Record
from kjobs.store.mutation import SharedDecode
from kjobs.store.watch import Watch, _at_revision, _call_threadsafe
from tests.hypothesis_budget import examples


class PlainWatch(Watch):
    """`filter` and `push` as they were before stop 51."""

    def filter(
        self, change: Change, shared: SharedDecode | None = None, made: dict[EventType, Event] | None = None
    ) -> Event | None:
        if self.namespace is not None and change.namespace != self.namespace:
            return None
        record = change.record
        raw = record.raw if shared is None else shared.raw
        if not self._filtered:
            return Event(change.type, raw, record.revision, shared)
        if change.type is EventType.DELETED:
            return Event(EventType.DELETED, raw, record.revision, shared) if self._selects(record) else None
        now = self._selects(record)
        before = change.prev is not None and self._selects(change.prev)
        if now:
            kind = EventType.MODIFIED if before else EventType.ADDED
            return Event(kind, raw, record.revision, shared)
        if before and change.prev is not None:
            return Event(EventType.DELETED, _at_revision(change.prev, record.revision), record.revision)
        return None

    def push(self, events: list[Event], *, bounded: bool = True) -> None:
        if not events:
            return
        waiter = None
        with self._lock:
            if self._closed:
                return
            self._queue.extend(events)
            if not bounded:
                self._backlog += len(events)
            elif len(self._queue) > self.max_queue + self._backlog:
                self.overflowed = True
                self._queue.clear()
                self._closed = True
            if self._sleepers:
                self._cond.notify_all()
            waiter, self._waiter = self._waiter, None
            closing = self._take_close_waiters() if self.overflowed else []
        if waiter is not None:
            _call_threadsafe(*waiter)
        for close_waiter in closing:
            _call_threadsafe(*close_waiter)
        if self.overflowed and self._on_close is not None:
            self._on_close(self)


class PlainStore(MemoryStore):
    """`_publish` as it was before stop 51; its watches are `PlainWatch`es."""

    def watch(self, *args: Any, **kwargs: Any) -> Watch:
        w = super().watch(*args, **kwargs)
        w.__class__ = PlainWatch
        return w

    def _publish(
        self, final: dict[Key, Record | None], changes: list[tuple[str, Change, Obj | None]], revision: int
    ) -> None:
        with self._lock:
            for (resource, namespace, name), record in final.items():
                bucket = self._bucket(resource)
                path = f"{namespace}/{name}"
                if record is None:
                    bucket.remove(path)
                else:
                    bucket.put(path, record)
            self._revision = revision
            per_watcher: dict[int, tuple[Watch, list[Event]]] = {}
            broken: list[Watch] = []
            latest = self._latest
            for resource, change, obj in changes:
                history = self._history(resource)
                if len(history.changes) == history.changes.maxlen:
                    history.compacted = history.changes[0].record.revision
                history.changes.append(change)
                shared = SharedDecode(change.record.raw, obj)
                key = (resource, change.namespace, change.name)
                latest.pop(key, None)
                if obj is not None and change.type is not EventType.DELETED:
                    latest[key] = (change.revision, obj)
                watchers = self._watchers.get(resource)
                for w in watchers.for_change(change) if watchers is not None else ():
                    try:
                        event = PlainWatch.filter(w, change, shared)
                    except Exception:
                        broken.append(w)
                        continue
                    if event is not None:
                        entry = per_watcher.get(id(w))
                        if entry is None:
                            per_watcher[id(w)] = (w, [event])
                        else:
                            entry[1].append(event)
            for w, events in per_watcher.values():
                w.push(events)
            for w in broken:
                w.close()


NODES = st.sampled_from(["", "n1", "n2"])
LABELS = st.sampled_from([None, {"app": "a"}, {"app": "b"}, {"app": "a", "tier": "x"}])
PHASES = st.sampled_from(["Pending", "Running", "Failed"])
NAMES = st.sampled_from(["p0", "p1", "p2"])
NAMESPACES = st.sampled_from(["ns", "other"])

WATCHES = [
    ("pods", None, "", ""),
    ("pods", None, "", ""),
    ("pods", "ns", "", ""),
    ("pods", None, "", "spec.nodeName=n1"),
    ("pods", None, "", "spec.nodeName=n2"),
    ("pods", None, "", "spec.nodeName!=n1"),
    ("pods", None, "app=a", ""),
    ("pods", "ns", "app=a", "status.phase=Running"),
    ("pods", None, "tier", "spec.nodeName=n1,status.phase!=Failed"),
    # a field the store does not index: each record's object is decoded to match it
    ("widgets", None, "", "spec.size=2"),
    ("widgets", None, "app=a", "spec.size!=1"),
    ("widgets", None, "", ""),
]


def _pod(name: str, namespace: str, node: str, phase: str, labels: dict[str, str] | None, n: int) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace, "uid": f"u-{name}"}
    if labels is not None:
        meta["labels"] = dict(labels)
    spec: Obj = {"containers": [{"name": "c"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": phase, "n": n}}


def _widget(name: str, namespace: str, size: int, labels: dict[str, str] | None) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace}
    if labels is not None:
        meta["labels"] = dict(labels)
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": {"size": size}}


WRITE = st.tuples(
    st.sampled_from(["put", "put", "put", "delete"]),
    st.sampled_from(["pods", "pods", "widgets"]),
    NAMES,
    NAMESPACES,
    NODES,
    PHASES,
    LABELS,
    st.integers(0, 3),
)


def _op(store: MemoryStore, write: tuple[Any, ...]) -> Op:
    kind, resource, name, namespace, node, phase, labels, n = write
    key = (resource, namespace, name)
    current = store._lookup(key)
    if kind == "delete":
        return Op("delete", resource, namespace, name)
    obj = (
        _widget(name, namespace, n % 3, labels)
        if resource == "widgets"
        else _pod(name, namespace, node, phase, labels, n)
    )
    if current is None:
        return _write("create", resource, namespace, name, obj, adopt=True)
    # an update indexed against the stored record, as `aupdate` does: equal labels and fields reuse its dicts
    prev = store._latest.get(key)
    return _write(
        "update", resource, namespace, name, obj, adopt=True, like=current, prev=None if prev is None else prev[1]
    )


def _delivered(w: Watch) -> list[tuple[str, bytes, int, Obj]]:
    return [(e.type.value, e.raw, e.revision, copy.deepcopy(e.object)) for e in w.drain()]


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.lists(WRITE, min_size=1, max_size=3), max_size=14), st.integers(1, 40), st.integers(1, 8))
def test_watchers_receive_what_the_plain_fan_out_delivered(
    batches: list[list[tuple[Any, ...]]], bound: int, history: int
) -> None:
    stores = [PlainStore(watch_queue=bound, history_size=history), MemoryStore(watch_queue=bound, history_size=history)]
    watches = [
        [s.watch(r, ns, since=None, label_selector=ls, field_selector=fs) for r, ns, ls, fs in WATCHES] for s in stores
    ]
    try:
        for batch in batches:
            for store in stores:
                ops = [_op(store, write) for write in batch]
                store._submit(ops)
            for old, new in zip(watches[0], watches[1], strict=True):
                assert _delivered(new) == _delivered(old)
                assert (new.closed, new.overflowed) == (old.closed, old.overflowed)
        # watches resumed from each past revision: the histories kept (or the 410 of one compacted) alike
        for since in range(1, stores[0].revision + 1):
            for resource, namespace, labels, fields in WATCHES:
                seen = []
                for store in stores:
                    try:
                        w = store.watch(resource, namespace, since=since, label_selector=labels, field_selector=fields)
                    except ApiError as err:
                        seen.append(("error", err.code, str(err)))
                        continue
                    seen.append(_delivered(w))
                    w.close()
                assert seen[0] == seen[1]
    finally:
        for store in stores:
            store.close()


def test_a_change_seen_alike_shares_one_event() -> None:
    """Two unfiltered watchers and a node's watcher that sees a status write as MODIFIED get the same event."""
    store = MemoryStore()
    a, b = store.watch("pods", since=None), store.watch("pods", since=None)
    node = store.watch("pods", since=None, field_selector="spec.nodeName=n1")
    store._submit([_write("create", "pods", "ns", "p", _pod("p", "ns", "n1", "Pending", None, 0), adopt=True)])
    current = store._lookup(("pods", "ns", "p"))
    store._submit(
        [_write("update", "pods", "ns", "p", _pod("p", "ns", "n1", "Running", None, 0), adopt=True, like=current)]
    )
    first, second, third = a.drain(), b.drain(), node.drain()
    assert [e.type for e in first] == [EventType.ADDED, EventType.MODIFIED]
    assert first[0] is second[0] is third[0] and first[1] is second[1] is third[1]
    store.close()
