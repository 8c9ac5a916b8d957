"""Stop 53: a write's fan-out without repeated work. `_apply` looks a record up inline and calls `_check` only for
a precondition that fails; `_publish` gives a watcher of every object (no namespace, no selector: a shared
informer's) the change's event without calling its `filter`, pushes a single change's event without a list
(`Watch.push_one`), and makes the list of broken watchers only when one breaks. Against stop 52's `_apply` and
`_publish` kept here: the same results and errors, the same events (type, bytes, revision, object) in the same
order to every watcher, the same ends of watch, stored records, histories and shared objects."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.errors import ApiError, already_exists, not_found
from kjobs.api.types import Obj
from kjobs.store import MemoryStore
from kjobs.store.base import (
    _LATEST_KEPT,
    Key,
    Op,
    _read_at,
    _restamped,
    _restamped_record,
    _stamp,
    _stamp_update,
    _write,
    internal_error,
    split_resource,
)
from kjobs.store.events import Change, Event, EventType, Record
from kjobs.store.mutation import SharedDecode
from kjobs.store.watch import Watch
from tests.hypothesis_budget import examples
from tests.store.test_fanout_shared_events import LABELS, NAMES, NAMESPACES, NODES, PHASES, WATCHES, _pod, _widget


class Stop52Store(MemoryStore):
    """`_apply` and `_publish` as stop 52 left them."""

    def _apply(self, ops: list[Op]) -> None:
        """Evaluate, persist and publish a batch (caller holds `_write_lock`); sets each op's outcome."""
        overlay: dict[Key, Record | None] = {}
        changes: list[tuple[str, Change, Obj | None]] = []
        revision = self._revision
        for op in ops:
            key = (op.resource, op.namespace, op.name)
            current = overlay[key] if key in overlay else self._lookup(key)
            try:
                if op.kind == "create":
                    if current is not None:
                        plural, group = split_resource(op.resource)
                        raise already_exists(plural, op.name, group=group)
                    assert op.obj is not None
                    revision += 1
                    record = _stamp(op.obj, revision, op.index)
                    overlay[key] = op.result = record
                    op.from_obj = True
                    # The written object itself, for in-process watchers, when its writer handed it over (`adopt`):
                    # the writer reads the outcome only, so the watchers share it with no decode (`mutation`).
                    shareable = op.obj if op.adopted else None
                    changes.append(
                        (op.resource, Change(EventType.ADDED, op.namespace, op.name, record, None), shareable)
                    )
                    continue
                if current is None:
                    plural, group = split_resource(op.resource)
                    raise not_found(plural, op.name, group=group)
                if op.expected_uid is not None or op.expected_rv:  # a precondition to check
                    self._check(op, current)
                if op.kind == "update":
                    assert op.obj is not None
                    stamped = _stamp_update(op.obj, revision + 1, op.index, current)
                    if stamped is None:
                        op.result = current
                        op.from_obj = True  # equal to the stored object, resourceVersion included
                        continue
                    revision += 1
                    overlay[key] = op.result = record = stamped
                    op.from_obj = True
                    change = Change(EventType.MODIFIED, op.namespace, op.name, record, current)
                    changes.append((op.resource, change, op.obj if op.adopted else None))  # as a create's
                else:
                    revision += 1
                    last = op.obj if op.obj is not None and _read_at(op.obj, current) else None
                    # The deleted object's bytes at the new revision are the stored bytes with the revision
                    # replaced when the object published is the stored one: a decode of the record, a read its
                    # deleter vouches it left untouched, or the very object the store shares for the record.
                    # Any other object (a copy whose finalizers the DELETE changed) is encoded.
                    cut: Record | None = None
                    if last is None:
                        op.obj = None  # read at another revision: not the stored object
                        raw = current.raw
                        last = orjson.loads(raw)
                        cut = _restamped_record(raw, current, revision)
                    else:
                        if op.untouched or self._shares(key, current, last):
                            cut = _restamped_record(current.raw, current, revision)
                        # Stamped in a copy of its top and its metadata: the deleter's read may be an object
                        # others share read-only (an informer's, `get_shared`'s), whose members it keeps.
                        last = op.obj = _restamped(last)
                        op.from_obj = True
                    if cut is None:
                        record = _stamp(last, revision, (current.labels, current.fields, current.uid))
                    else:
                        record = cut
                        last["metadata"]["resourceVersion"] = str(revision)
                    overlay[key] = None
                    op.result = record
                    # The last state was decoded to be stamped (here, or by the deleter when it read the object):
                    # the watchers share it rather than decode the record again. A deleter that handed its read
                    # over gets that same stamped object back, read-only.
                    changes.append(
                        (op.resource, Change(EventType.DELETED, op.namespace, op.name, record, current), last)
                    )
            except ApiError as err:
                op.error = err
            except Exception as err:  # a malformed object must not take the rest of the batch down
                op.error = internal_error(f"cannot store {op.resource} {op.namespace}/{op.name}: {err!r}")
        if changes:
            try:
                self._persist(overlay, revision)
            except Exception as err:  # nothing was published: fail the whole batch
                failure = internal_error(f"storage write failed: {err}")
                for op in ops:
                    op.result = None
                    op.error = op.error or failure
                return
            self._commits += 1
            self._committed_changes += len(changes)
            self._publish(overlay, changes, revision)

    def _shares(self, key: Key, current: Record, obj: Obj) -> bool:
        """Whether `obj` is the very object the store shares for `current` (`get_shared`'s: its bytes were encoded
        from it, and its holders treat it as read-only)."""
        latest = self._latest.get(key)
        return latest is not None and latest[0] == current.revision and latest[1] is obj

    def _publish(
        self, final: dict[Key, Record | None], changes: list[tuple[str, Change, Obj | None]], revision: int
    ) -> None:
        with self._lock:
            packer = self._packer
            for (resource, namespace, name), record in final.items():
                if self._corrupt:
                    self._corrupt.pop((resource, namespace, name), None)  # written whole again: sound
                bucket = self._buckets.get(resource) or self._bucket(resource)
                path = f"{namespace}/{name}"  # `_path`, inline
                if record is None:
                    bucket.remove(path)
                else:
                    bucket.put(path, record)
                    if packer is not None:
                        packer.written(bucket.records, resource, path, record)
            self._revision = revision
            # One change (nearly every commit: a single write) gives each watcher one event at most, pushed as it
            # is made; several are gathered per watcher first, to be pushed in one go.
            per_watcher: dict[int, tuple[Watch, list[Event]]] | None = {} if len(changes) > 1 else None
            broken: list[Watch] = []
            latest = self._latest
            histories = self._histories
            for resource, change, obj in changes:
                history = histories.get(resource)
                if history is None:
                    history = self._history(resource)
                kept = history.changes
                if len(kept) == kept.maxlen:  # never, without a bound
                    history.compacted = kept[0].record.revision  # `Change.revision`, without a property call
                kept.append(change)
                shared = SharedDecode(change.record.raw, obj)
                key = (resource, change.namespace, change.name)
                latest.pop(key, None)
                if obj is not None and change.type is not EventType.DELETED:
                    latest[key] = (change.revision, obj)
                    if len(latest) > _LATEST_KEPT:
                        latest.popitem(last=False)
                watchers = self._watchers.get(resource)
                if watchers is None:
                    continue
                made: dict[EventType, Event] = {}  # the change's events by type, shared by its watchers
                for w in watchers.for_change(change):
                    try:
                        event = w.filter(change, shared, made)
                    except Exception:  # one watcher's selector must not fail a committed write: end that watch
                        broken.append(w)
                        continue
                    if event is None:
                        continue
                    if per_watcher is None:
                        w.push([event])
                        continue
                    # not `setdefault(id(w), (w, []))`, which builds a pair and a list for every event
                    entry = per_watcher.get(id(w))
                    if entry is None:
                        per_watcher[id(w)] = (w, [event])
                    else:
                        entry[1].append(event)
            if per_watcher is not None:
                for w, events in per_watcher.values():
                    w.push(events)
            for w in broken:
                w.close()


WRITE = st.tuples(
    st.sampled_from(["put", "put", "put", "delete"]),
    st.sampled_from(["pods", "pods", "widgets"]),
    NAMES,
    NAMESPACES,
    NODES,
    PHASES,
    LABELS,
    st.integers(0, 3),
    st.sampled_from([None, None, "current", "stale", "empty"]),  # a resourceVersion precondition
    st.sampled_from([None, None, "right", "wrong"]),  # a uid precondition
    st.booleans(),  # create rather than update a stored object (409), update rather than create one absent (404)
)

# every watch of the stop 51 test, and more watchers of every object (some namespaced), so a change reaches several
MORE_WATCHES = [*WATCHES, ("pods", None, "", ""), ("widgets", None, "", ""), ("widgets", "ns", "", "")]


def _op(store: MemoryStore, write: tuple[Any, ...]) -> Op:
    kind, resource, name, namespace, node, phase, labels, n, rv, uid, wrong_kind = write
    key = (resource, namespace, name)
    current = store._lookup(key)
    expected_rv = {
        None: None,
        "current": None if current is None else str(current.revision),
        "stale": "1",
        "empty": "",
    }[rv]
    expected_uid = {None: None, "right": f"u-{name}", "wrong": "nope"}[uid]
    if kind == "delete":
        return Op("delete", resource, namespace, name, None, expected_rv, expected_uid)
    obj = (
        _widget(name, namespace, n % 3, labels)
        if resource == "widgets"
        else _pod(name, namespace, node, phase, labels, n)
    )
    obj["metadata"]["uid"] = f"u-{name}"
    if (current is None) != wrong_kind:
        return _write("create", resource, namespace, name, obj, adopt=True)
    prev = store._latest.get(key)
    return _write(
        "update",
        resource,
        namespace,
        name,
        obj,
        expected_rv,
        expected_uid,
        adopt=True,
        like=current,
        prev=None if prev is None else prev[1],
    )


def _delivered(w: Watch) -> list[tuple[str, bytes, int, Obj]]:
    return [(e.type.value, e.raw, e.revision, copy.deepcopy(e.object)) for e in w.drain()]


def _outcome(op: Op) -> Any:
    if op.error is not None:
        return ("error", op.error.code, str(op.error))
    assert op.result is not None
    return ("ok", op.result.raw, op.result.revision, op.outcome())


def _state(store: MemoryStore) -> Any:
    buckets = {
        r: (
            {p: (rec.raw, rec.revision, rec.labels, rec.fields, rec.uid) for p, rec in b.records.items()},
            b.by_label,
            b.sorted_keys(),
        )
        for r, b in store._buckets.items()
    }
    histories = {
        r: (h.compacted, [(c.type, c.namespace, c.name, c.record.raw, c.prev and c.prev.raw) for c in h.changes])
        for r, h in store._histories.items()
    }
    latest = [(k, rev, orjson_of(obj)) for k, (rev, obj) in store._latest.items()]
    return store.revision, buckets, histories, latest


def orjson_of(obj: Obj) -> bytes:
    return orjson.dumps(obj)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.lists(WRITE, min_size=1, max_size=3), max_size=14), st.integers(1, 40), st.integers(1, 8))
def test_writes_and_watchers_as_stop_52(batches: list[list[tuple[Any, ...]]], bound: int, history: int) -> None:
    stores = [
        Stop52Store(watch_queue=bound, history_size=history),
        MemoryStore(watch_queue=bound, history_size=history),
    ]
    watches = [
        [s.watch(r, ns, since=None, label_selector=ls, field_selector=fs) for r, ns, ls, fs in MORE_WATCHES]
        for s in stores
    ]
    try:
        for batch in batches:
            outcomes = []
            for store in stores:
                ops = [_op(store, write) for write in batch]
                store._submit(ops)
                outcomes.append([_outcome(op) for op in ops])
            assert outcomes[1] == outcomes[0]
            for i, (old, new) in enumerate(zip(watches[0], watches[1], strict=True)):
                if i % 2 == 0:  # the others are read at the end only, so their queues may overflow
                    assert _delivered(new) == _delivered(old)
                assert (new.closed, new.overflowed) == (old.closed, old.overflowed)
            assert _state(stores[1]) == _state(stores[0])
        for old, new in zip(watches[0], watches[1], strict=True):
            assert _delivered(new) == _delivered(old)
    finally:
        for store in stores:
            store.close()


@pytest.mark.parametrize("namespace", [None, "ns"])
def test_a_watcher_of_every_object_shares_the_event_a_filtering_one_made(namespace: str | None) -> None:
    """An unfiltered watcher gets the very event that a namespaced one (asked through `filter`) sees the change as."""
    store = MemoryStore()
    first = store.watch("pods", namespace, since=None)
    every = store.watch("pods", since=None)
    assert every.every and first.every is (namespace is None)
    store._submit([_write("create", "pods", "ns", "p", _pod("p", "ns", "n1", "Pending", None, 0), adopt=True)])
    (a,), (b,) = first.drain(), every.drain()
    assert a is b and a.type is EventType.ADDED
    store.close()
