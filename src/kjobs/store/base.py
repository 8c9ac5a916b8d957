"""The versioned object store: in-memory index, compare-and-swap writes, bounded history, watch fan-out.

`Store` owns everything both backends share. Objects are JSON dicts keyed by `(resource, namespace, name)`;
one global revision counter stamps every write into `metadata.resourceVersion`. The whole data set lives in
memory, so reads never touch the disk; a backend only has to make a batch of writes durable (`_persist`).

Write pipeline (`_apply`), run by one writer at a time:
  1. evaluate each op in order against the index plus the batch's own earlier ops (an overlay), checking
     existence and preconditions and assigning consecutive revisions; a failing op does not stop the batch;
  2. `_persist` the final state of every touched key and the new revision in one transaction;
  3. only then publish: update the index, append to per-resource histories, feed watchers, acknowledge.
If step 2 fails nothing is published and every op in the batch fails, so nothing is ever acknowledged or
shown to a reader or watcher that is not durable. An update that changes nothing keeps its revision (as
Kubernetes' storage does), so `kubectl apply` can report `unchanged`.

Watch history is kept per resource (as Kubernetes keeps one watch cache per resource), so churn in events
does not expire a watch on jobs. A `since` older than what a resource's history still holds raises 410.
"""

from __future__ import annotations

import bisect
import builtins
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Literal

import orjson

from kjobs.api.errors import ApiError, already_exists, bad_request, conflict, gone, not_found
from kjobs.api.selectors import (
    DOUBLE_EQUALS,
    EQUALS,
    IN,
    FieldSelector,
    LabelSelector,
    parse_field_selector,
    parse_label_selector,
)
from kjobs.api.types import Obj
from kjobs.store.events import ADDED, DELETED, MODIFIED, Change, Event, EventType, Index, Record, index_of
from kjobs.store.mutation import SharedDecode
from kjobs.store.packing import MARK, Packer
from kjobs.store.triggers import Watchers
from kjobs.store.watch import DEFAULT_MAX_QUEUE, Watch

DEFAULT_HISTORY = 5000
"""Changes kept per resource for watches that resume from a revision."""

OpKind = Literal["create", "update", "delete"]
Key = tuple[str, str, str]


def split_resource(resource: str) -> tuple[str, str]:
    """`"jobs.batch"` → `("jobs", "batch")`; `"pods"` → `("pods", "")` (for Kubernetes-worded errors)."""
    plural, _, group = resource.partition(".")
    return plural, group


def precondition_failed(resource: str, name: str, detail: str) -> ApiError:
    """409 Conflict for a failed delete/update precondition, worded as Kubernetes' storage layer words it."""
    plural, group = split_resource(resource)
    qualified = f"{plural}.{group}" if group else plural
    details: Obj = {"name": name, "kind": plural}
    if group:
        details["group"] = group
    return ApiError(
        409, "Conflict", f'Operation cannot be fulfilled on {qualified} "{name}": {detail}', details=details
    )


def internal_error(message: str) -> ApiError:
    """500 InternalError (a write could not be made durable)."""
    return ApiError(500, "InternalError", f"Internal error occurred: {message}")


def corrupt_object(key: Key, problem: str) -> ApiError:
    """500 for an object whose stored copy is damaged, worded as the apiserver words etcd3's corrupt object
    (`storage.NewCorruptObjError`, k8s.io/apiserver/pkg/storage/errors.go; turned into an InternalError)."""
    resource, namespace, name = key
    path = f"/registry/{resource}/{namespace}/{name}" if namespace else f"/registry/{resource}/{name}"
    return internal_error(
        f"StorageError: corrupt object, Code: 7, Key: {path}, ResourceVersion: 0, AdditionalErrorMsg: {problem}"
    )


_NO_INDEX: Index = ({}, {}, "")


@dataclass(frozen=True)
class StoreStats:
    """A snapshot of the store's size and activity."""

    revision: int
    objects: dict[str, int]
    watchers: dict[str, int]
    commits: int
    committed_changes: int


@dataclass(slots=True, eq=False)
class Op:
    """One requested write and, once applied, its outcome (`result` or `error`)."""

    kind: OpKind
    resource: str
    namespace: str
    name: str
    obj: Obj | None = None
    expected_rv: str | None = None
    expected_uid: str | None = None
    index: Index = _NO_INDEX
    result: Record | None = None
    error: ApiError | None = None
    waiter: builtins.object = field(default=None)  # spelled out: mypyc looks a bare `object` up in this module
    from_obj: bool = False  # `result` was cut from `obj`, so `obj` is the stored object, free to hand out
    adopted: bool = False  # `obj` was handed over by a writer that treats the outcome as read-only
    untouched: bool = False  # a delete's `obj` is its deleter's read of the stored object, left as read

    @property
    def key(self) -> Key:
        return (self.resource, self.namespace, self.name)

    def outcome(self) -> Obj:
        """The stored object (a fresh dict), or raise the op's error."""
        if self.error is not None:
            raise self.error
        assert self.result is not None
        if self.from_obj and self.obj is not None:
            return self.obj  # the private copy the record was encoded from; the store keeps only the bytes
        obj: Obj = orjson.loads(self.result.raw)
        return obj


class _History:
    """The last `size` changes of one resource; `compacted` is the newest revision no longer fully covered (the
    store appends to `changes` itself, setting `compacted` to the revision of the change a full deque drops)."""

    __slots__ = ("changes", "compacted")

    def __init__(self, size: int, compacted: int) -> None:
        self.changes: deque[Change] = deque(maxlen=size)
        self.compacted = compacted

    def after(self, revision: int, current: int) -> list[Change]:
        if revision < self.compacted:
            raise gone(f"too old resource version: {revision} ({self.compacted})")
        out: list[Change] = []
        for change in reversed(self.changes):
            if change.revision <= revision:
                break
            out.append(change)
        out.reverse()
        return out


class _Bucket:
    """The objects of one resource: records by `"ns/name"`, the keys in Kubernetes' list order, and an
    inverted index label → keys so `job-name=x`-style lists do not scan every object.

    A label value only one object carries (a completion index, a pod-template hash of one pod) maps to that
    object's key itself rather than to a set of one: a set costs 216 bytes, and most objects have such a label.

    The keys are put in order when a list reads them (`sorted_keys`), not at each create and delete: a sorted list
    kept up to date moved half its entries (17,000 pods at 100,000 completions) twice a pod, for lists that a
    running cluster makes rarely (an informer's relist, a user's `kubectl get`)."""

    __slots__ = ("_added", "_keys", "_removed", "by_label", "records")

    def __init__(self) -> None:
        self.records: dict[str, Record] = {}
        self.by_label: dict[str, dict[str, set[str] | str]] = {}  # label key -> value -> keys (or the one key)
        self._keys: list[str] = []  # sorted, as of the last read
        self._added: dict[str, None] = {}  # keys created since
        self._removed = False  # whether a key in `_keys` may have gone since

    def put(self, path: str, record: Record) -> None:
        old = self.records.get(path)
        if old is None:
            self._added[path] = None
            self._index(path, record.labels)
        elif old.labels is not record.labels and old.labels != record.labels:  # most writes share the dict
            self._unindex(path, old.labels)
            self._index(path, record.labels)
        self.records[path] = record

    def remove(self, path: str) -> None:
        old = self.records.pop(path, None)
        if old is not None:
            if path in self._added:
                del self._added[path]
            else:
                self._removed = True
            self._unindex(path, old.labels)

    def sorted_keys(self) -> list[str]:
        """Every key, in list order (the caller holds the store's lock and does not change the list)."""
        keys, added = self._keys, self._added
        if self._removed:
            # A key in `added` may also be in `keys` (deleted, then created again before this read): listed once.
            records = self.records
            keys = [path for path in keys if path in records and path not in added]
            self._removed = False
        if added:
            keys.extend(added)
            keys.sort()  # one sorted run and a tail: a merge, not a full sort
            added.clear()
        self._keys = keys
        return keys

    def _index(self, path: str, labels: dict[str, str]) -> None:
        by_label = self.by_label
        for key, value in labels.items():
            values = by_label.get(key)
            if values is None:
                by_label[key] = {value: path}
                continue
            paths = values.get(value)
            if paths is None:
                values[value] = path
            elif isinstance(paths, str):
                if paths != path:
                    values[value] = {paths, path}
            else:
                paths.add(path)

    def _unindex(self, path: str, labels: dict[str, str]) -> None:
        by_label = self.by_label
        for key, value in labels.items():
            values = by_label.get(key)
            paths = None if values is None else values.get(value)
            if values is None or paths is None:
                continue
            if isinstance(paths, str):
                if paths == path:
                    del values[value]
                    if not values:
                        del by_label[key]
                continue
            paths.discard(path)
            if len(paths) == 1:
                values[value] = next(iter(paths))

    def labelled(self, key: str, value: str) -> set[str] | tuple[str, ...]:
        """The keys of the objects whose label `key` is `value`."""
        values = self.by_label.get(key)
        paths = None if values is None else values.get(value)
        if paths is None:
            return ()
        return (paths,) if isinstance(paths, str) else paths

    def paths(self, namespace: str | None, labels: LabelSelector) -> list[str]:
        """Keys in list order, narrowed by namespace and, when `labels` pins a label value, by the index."""
        narrowest: set[str] | tuple[str, ...] | None = None
        for r in labels.requirements:
            if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                found = self.labelled(r.key, r.values[0])
                if narrowest is None or len(found) < len(narrowest):
                    narrowest = found
        if narrowest is not None:
            prefix = None if namespace is None else namespace + "/"
            return sorted(p for p in narrowest if prefix is None or p.startswith(prefix))
        keys = self.sorted_keys()
        if namespace is None:
            return keys
        lo = bisect.bisect_left(keys, namespace + "/")
        hi = bisect.bisect_left(keys, namespace + "0")  # '0' sorts right after '/'
        return keys[lo:hi]


def _count_from(paths: list[str], index: int, before: dict[str, Record | None]) -> int:
    """How many of the sorted `paths` from `index` on name an object (those absent at an earlier revision are
    None in `before`)."""
    absent = 0
    for path, record in before.items():
        if record is None:
            at = bisect.bisect_left(paths, path, index)
            absent += at < len(paths) and paths[at] == path
    return len(paths) - index - absent


def _path(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def _as_label_selector(sel: LabelSelector | str | None) -> LabelSelector:
    return sel if isinstance(sel, LabelSelector) else parse_label_selector(sel)


def _as_field_selector(sel: FieldSelector | str | None) -> FieldSelector:
    return sel if isinstance(sel, FieldSelector) else parse_field_selector(sel)


def _private_copy(obj: Obj) -> Obj:
    """An independent copy of a caller's object (JSON round trip: cheaper than deepcopy, validates JSON-ness)."""
    if not isinstance(obj, dict):
        raise bad_request("the object to store must be a JSON object")
    try:
        copy: Obj = orjson.loads(orjson.dumps(obj))
    except TypeError as err:
        raise bad_request(f"object is not representable as JSON: {err}") from None
    return _adopted(copy)


def _adopted(obj: Obj) -> Obj:
    """`obj` itself, checked to be an object with object metadata (its JSON-ness is checked when it is encoded)."""
    if not isinstance(obj, dict):
        raise bad_request("the object to store must be a JSON object")
    meta = obj.get("metadata")
    if meta is None:
        obj["metadata"] = {}
    elif not isinstance(meta, dict):
        raise bad_request("metadata must be a JSON object")
    return obj


def _write(
    kind: OpKind,
    resource: str,
    namespace: str,
    name: str,
    obj: Obj,
    expected_rv: str | None = None,
    expected_uid: str | None = None,
    adopt: bool = False,
    like: Record | None = None,
    prev: Obj | None = None,
) -> Op:
    """A create/update op carrying a private copy of `obj` and its index, both computed on the caller's thread.

    With `adopt` the caller hands `obj` over (it keeps no reference and will not change it): no copy is made,
    and the object goes to in-process watchers as is. `like`: the stored record an update replaces, if any,
    and `prev` the shared object of that record (see `index_of`; a stale one only shares less)."""
    if not name or "/" in name or "/" in namespace:
        raise bad_request(f"invalid object key: namespace {namespace!r}, name {name!r}")
    if not adopt:
        copy = _private_copy(obj)
    elif type(obj) is dict and type(obj.get("metadata")) is dict:
        copy = obj  # what `_adopted` returns for an object whose metadata is a dict, without the call
    else:
        copy = _adopted(obj)
    op = Op(kind, resource, namespace, name, copy, expected_rv, expected_uid, index_of(resource, copy, like, prev))
    op.adopted = adopt
    return op


def _trimmed(raw: bytes) -> bytes:
    """`raw` in a bytes object of its own size, to keep: orjson hands back its whole growing buffer (a 4.6 KB pod
    comes in an 8 KB allocation, a 2 KB one in 16 KB), which a stored record would hold for as long as it lives."""
    return memoryview(raw).tobytes()


def _stamp(obj: Obj, revision: int, index: Index) -> Record:
    obj["metadata"]["resourceVersion"] = str(revision)
    return Record(_trimmed(orjson.dumps(obj)), revision, *index)


def _stamp_update(obj: Obj, revision: int, index: Index, current: Record) -> Record | None:
    """The record of an update at `revision`, or None if `obj` equals the stored object but for the revision.

    One encode settles it: a change of length beyond the revision's own digits means a change (orjson renders
    equal values alike); only a length that fits (e.g. the same keys in another order, or a timestamp changed
    for one of the same width) needs the stored object decoded and compared.
    """
    meta = obj["metadata"]
    meta["resourceVersion"] = stamp = str(revision)
    raw = orjson.dumps(obj)
    held = current.data  # the stored JSON itself unless packed: its length without `raw`'s call (every update)
    before = str(current.revision)
    if len(raw) - len(stamp) == (len(held) if held[0] != MARK else len(current.raw)) - len(before):
        meta["resourceVersion"] = before
        if obj == current.decode():
            return None
        meta["resourceVersion"] = stamp
    return Record(memoryview(raw).tobytes(), revision, *index)  # `_trimmed`, inline


def _restamped_record(raw: bytes, current: Record, revision: int) -> Record | None:
    """The record of `current`'s object at `revision`, cut from its stored JSON `raw` (a delete's last state)
    rather than encoded again, or None when the bytes do not hold `"resourceVersion":"<revision>"` exactly once.

    The same bytes as encoding the stored object stamped with `revision`: orjson writes `metadata.resourceVersion`
    as that exact key and string, and the pattern cannot start inside a string (a quote there is escaped as `\\"`)
    unless a key ends in it (`a\\"resourceVersion`), or occur elsewhere but as a key of another object: either
    shows it twice, which falls back to the encode. Only for an object known to be the stored one (see `_apply`)."""
    stamp = b'"resourceVersion":"%d"' % current.revision
    at = raw.find(stamp)
    end = at + len(stamp)
    if at < 0 or raw.find(stamp, end) >= 0:
        return None
    view = memoryview(raw)
    data = b"".join((view[:at], b'"resourceVersion":"%d"' % revision, view[end:]))
    return Record(data, revision, current.labels, current.fields, current.uid)


def _restamped(obj: Obj) -> Obj:
    """`obj` with its top level and `metadata` copied, the rest shared: a read-only object, ready to be stamped."""
    copy = dict(obj)
    copy["metadata"] = dict(copy["metadata"])
    return copy


def _read_at(obj: Obj, current: Record) -> bool:
    """Whether `obj` says it was read at `current`'s revision (the stored object, if its reader left it as read)."""
    meta = obj.get("metadata")
    return isinstance(meta, dict) and meta.get("resourceVersion") == str(current.revision)


_LATEST_KEPT = 32_768
"""How many recently written objects `get_shared` can return without a decode. Enough for a pod's writes to find
the object its previous write handed over at issue #15's parallelism of 5,000 (some 20,000 writes of the other
pods fall between a pod's binding and its node's status patch; with 4,096 nearly every patch and finalizer removal
decoded the pod again, docs/perf44.md). Most of the objects are held anyway, by the informers that share them."""


class Store(ABC):
    """Versioned JSON objects with CAS writes, lists at the current or a recent revision, and watches from a revision.

    Every method is thread-safe. Writes return only once durable; `acreate`/`aupdate`/`adelete` do the same
    without blocking an asyncio event loop. Objects returned are fresh dicts the caller may modify.
    """

    writes_inline = False
    """Whether the async writes complete without suspending the caller (nothing to wait for: no disk). Such a
    store's async writes call `_submit` themselves: its `_asubmit` would only wrap that in a coroutine."""

    def __init__(
        self,
        *,
        history_size: int = DEFAULT_HISTORY,
        watch_queue: int = DEFAULT_MAX_QUEUE,
        cold_after: int = 0,
        pack_above: int = 0,
    ) -> None:
        self._lock = threading.RLock()  # guards the index, histories and watcher lists
        self._write_lock = threading.Lock()  # one writer applies a batch at a time
        self._buckets: dict[str, _Bucket] = {}
        self._histories: dict[str, _History] = {}
        self._watchers: dict[str, Watchers] = {}
        self._revision = 0
        self._compacted_at_open = 0
        self._history_size = history_size
        self._watch_queue = watch_queue
        self._commits = 0
        self._committed_changes = 0
        # Recent handed-over objects, by key (see `get_shared`), oldest first. An OrderedDict, not a dict: dropping
        # a dict's first entry with `next(iter(...))` walks over every slot freed before it (4.5 µs a write when
        # full, against 0.7), as the dict's entry table only compacts when it grows.
        self._latest: OrderedDict[Key, tuple[int, Obj]] = OrderedDict()
        self._corrupt: dict[Key, str] = {}  # objects whose stored copy was found damaged: read as 500 until rewritten
        # With `cold_after`, a record still stored `cold_after` writes later is packed (`kjobs.store.packing`),
        # while its resource holds at least `pack_above` objects.
        self._packer = Packer(cold_after, pack_above) if cold_after > 0 else None

    # --- backend hooks --------------------------------------------------------------------------------------

    @abstractmethod
    def _persist(self, final: dict[Key, Record | None], revision: int) -> None:
        """Make a batch durable: the final state of each touched key (None = deleted) and the revision."""

    @abstractmethod
    def _submit(self, ops: list[Op]) -> None:
        """Apply ops and return once they are durable (or failed)."""

    @abstractmethod
    async def _asubmit(self, op: Op) -> None:
        """Apply an op without blocking the running event loop; return once it is durable (or failed). Not
        called by a store whose `writes_inline` is set."""

    def close(self) -> None:
        """Release resources; ends every open watch."""
        with self._lock:
            watchers = [w for ws in self._watchers.values() for w in ws.all]
        for w in watchers:
            w.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- loading (backends restoring from disk) -------------------------------------------------------------

    def _load(self, records: list[tuple[str, str, str, Record]], revision: int) -> None:
        packer = self._packer
        for resource, namespace, name, record in records:
            bucket, path = self._bucket(resource), _path(namespace, name)
            bucket.put(path, record)
            if packer is not None:
                packer.written(bucket.records, resource, path, record)
            revision = max(revision, record.revision)
        self._revision = revision
        self._compacted_at_open = revision

    def _bucket(self, resource: str) -> _Bucket:
        bucket = self._buckets.get(resource)
        if bucket is None:
            bucket = self._buckets[resource] = _Bucket()
        return bucket

    def _history(self, resource: str) -> _History:
        history = self._histories.get(resource)
        if history is None:
            history = self._histories[resource] = _History(self._history_size, self._compacted_at_open)
        return history

    # --- the write pipeline ---------------------------------------------------------------------------------

    def _lookup(self, key: Key) -> Record | None:
        bucket = self._buckets.get(key[0])
        return None if bucket is None else bucket.records.get(f"{key[1]}/{key[2]}")  # `_path`, inline

    def _check(self, op: Op, current: Record) -> None:
        uid = current.uid
        if op.expected_uid is not None and op.expected_uid != uid:
            raise precondition_failed(
                op.resource,
                op.name,
                f"Precondition failed: UID in precondition: {op.expected_uid}, UID in object meta: {uid}",
            )
        if op.expected_rv and op.expected_rv != str(current.revision):
            if op.kind == "update":
                plural, group = split_resource(op.resource)
                raise conflict(plural, op.name, group=group)
            raise precondition_failed(
                op.resource,
                op.name,
                "Precondition failed: ResourceVersion in precondition: "
                f"{op.expected_rv}, ResourceVersion in object meta: {current.revision}",
            )

    def _apply(self, ops: list[Op]) -> None:
        """Evaluate, persist and publish a batch (caller holds `_write_lock`); sets each op's outcome."""
        overlay: dict[Key, Record | None] = {}
        changes: list[tuple[str, Change, Obj | None]] = []
        revision = self._revision
        buckets = self._buckets
        for op in ops:
            key = (op.resource, op.namespace, op.name)
            if key in overlay:
                current = overlay[key]
            else:  # `_lookup`, inline
                bucket = buckets.get(op.resource)
                current = None if bucket is None else bucket.records.get(f"{op.namespace}/{op.name}")
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
                    changes.append((op.resource, Change(ADDED, op.namespace, op.name, record, None), shareable))
                    continue
                if current is None:
                    plural, group = split_resource(op.resource)
                    raise not_found(plural, op.name, group=group)
                expected_uid, expected_rv = op.expected_uid, op.expected_rv
                if (expected_uid is not None and expected_uid != current.uid) or (
                    expected_rv and expected_rv != str(current.revision)
                ):
                    self._check(op, current)  # a precondition that fails: `_check` raises its error
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
                    change = Change(MODIFIED, op.namespace, op.name, record, current)
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
                    changes.append((op.resource, Change(DELETED, op.namespace, op.name, record, current), last))
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
                    records = bucket.records
                    old = records.get(path)
                    if old is not None and old.labels is record.labels:
                        records[path] = record  # `put` of a write that kept the labels' dict: nothing to index
                    else:
                        bucket.put(path, record)
                    if packer is not None:
                        packer.written(bucket.records, resource, path, record)
            self._revision = revision
            # One change (nearly every commit: a single write) gives each watcher one event at most, pushed as it
            # is made; several are gathered per watcher first, to be pushed in one go.
            per_watcher: dict[int, tuple[Watch, list[Event]]] | None = {} if len(changes) > 1 else None
            broken: list[Watch] | None = None  # made for a watcher whose filter fails (never, but for a bad selector)
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
                data = change.record.data  # `Record.raw` without the call: a record just made is not packed
                shared = SharedDecode(data if data[0] != MARK else change.record.raw, obj)
                key = (resource, change.namespace, change.name)
                latest.pop(key, None)
                if obj is not None and change.type is not DELETED:
                    latest[key] = (change.record.revision, obj)  # `Change.revision`, without a property call
                    if len(latest) > _LATEST_KEPT:
                        latest.popitem(last=False)
                watchers = self._watchers.get(resource)
                if watchers is None:
                    continue
                made: dict[EventType, Event] = {}  # the change's events by type, shared by its watchers
                for w in watchers.for_change(change):
                    if w.every:
                        # `filter`'s answer for a watcher of every object (a shared informer's), without the call:
                        # the change as its own type, in the event its other such watchers share.
                        kind = change.type
                        event = made.get(kind)
                        if event is None:
                            event = made[kind] = Event(kind, shared.raw, change.record.revision, shared)
                    else:
                        try:
                            event = w.filter(change, shared, made)
                        except Exception:  # one watcher's selector must not fail a committed write: end that watch
                            if broken is None:
                                broken = []
                            broken.append(w)
                            continue
                        if event is None:
                            continue
                    if per_watcher is None:
                        w.push_one(event)
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
            for w in broken or ():
                w.close()

    # --- writes ---------------------------------------------------------------------------------------------

    def create(self, resource: str, namespace: str, name: str, obj: Obj) -> Obj:
        """Store a new object; 409 AlreadyExists if the key is taken. Returns it with its resourceVersion."""
        op = _write("create", resource, namespace, name, obj)
        self._submit([op])
        return op.outcome()

    def update(
        self,
        resource: str,
        namespace: str,
        name: str,
        obj: Obj,
        *,
        expected_rv: str | None = None,
        expected_uid: str | None = None,
    ) -> Obj:
        """Replace an object; with `expected_rv`, only if it is still at that revision (else 409 Conflict).

        404 if it does not exist. An update that changes nothing returns the object at its current revision.
        """
        like = self._lookup((resource, namespace, name))
        op = _write("update", resource, namespace, name, obj, expected_rv, expected_uid, like=like)
        self._submit([op])
        return op.outcome()

    def delete(
        self,
        resource: str,
        namespace: str,
        name: str,
        *,
        expected_rv: str | None = None,
        expected_uid: str | None = None,
    ) -> Obj:
        """Remove an object and return its last state stamped with the deletion's new resourceVersion."""
        op = Op("delete", resource, namespace, name, None, expected_rv, expected_uid)
        self._submit([op])
        return op.outcome()

    async def acreate(self, resource: str, namespace: str, name: str, obj: Obj, *, adopt: bool = False) -> Obj:
        """`create` for asyncio callers: awaits durability without blocking the event loop. With `adopt` the
        store takes `obj` itself rather than a copy and shares it with in-process watchers; the object returned may be
        that same one, so it is read-only for the caller too."""
        op = _write("create", resource, namespace, name, obj, adopt=adopt)
        if self.writes_inline:
            self._submit([op])  # what `_asubmit` does there, without a coroutine a write
        else:
            await self._asubmit(op)
        if op.from_obj and op.error is None and op.obj is not None:
            return op.obj  # `outcome`, without the call
        return op.outcome()

    async def aupdate(
        self,
        resource: str,
        namespace: str,
        name: str,
        obj: Obj,
        *,
        expected_rv: str | None = None,
        expected_uid: str | None = None,
        adopt: bool = False,
    ) -> Obj:
        """`update` for asyncio callers (`adopt`: see `acreate`)."""
        key = (resource, namespace, name)
        bucket = self._buckets.get(resource)  # `_lookup`, inline
        like = None if bucket is None else bucket.records.get(f"{namespace}/{name}")
        # The object the store shares for that record, if it still has it (as `get_shared` finds it): a handed-over
        # object that keeps its members (a status write keeps the spec) is indexed from what they were.
        prev = None
        if adopt and like is not None:
            known = self._latest.get(key)
            if known is not None and known[0] == like.revision:
                prev = known[1]
        op = _write(
            "update", resource, namespace, name, obj, expected_rv, expected_uid, adopt=adopt, like=like, prev=prev
        )
        if self.writes_inline:
            self._submit([op])  # what `_asubmit` does there, without a coroutine a write
        else:
            await self._asubmit(op)
        if op.from_obj and op.error is None and op.obj is not None:
            return op.obj  # `outcome`, without the call
        return op.outcome()

    async def adelete(
        self,
        resource: str,
        namespace: str,
        name: str,
        *,
        expected_rv: str | None = None,
        expected_uid: str | None = None,
        last: Obj | None = None,
        untouched: bool = False,
    ) -> Obj:
        """`delete` for asyncio callers. `last`, when given, is the caller's read of the object, unchanged (the
        deleter read it to check preconditions and grace; its own decode, or a read-only object shared with
        others): if the object is still at the revision in its `metadata.resourceVersion`, the store stamps a
        copy of its top level and metadata rather than decode the record again, shares that with in-process
        watchers and returns it; its other members are `last`'s, so `last` is read-only from then on.

        `untouched`: the caller vouches that `last` is a read of the stored object left exactly as read (not a
        copy it changed): the deleted object's bytes are then the stored bytes with the new revision spliced in,
        not a fresh encode (a pod GC delete's, of a pod last written minutes before: docs/gcbytes48.md)."""
        op = Op("delete", resource, namespace, name, last, expected_rv, expected_uid)
        op.untouched = untouched
        if self.writes_inline:
            self._submit([op])  # what `_asubmit` does there, without a coroutine a write
        else:
            await self._asubmit(op)
        if op.from_obj and op.error is None and op.obj is not None:
            return op.obj  # `outcome`, without the call
        return op.outcome()

    # --- reads ----------------------------------------------------------------------------------------------

    @property
    def revision(self) -> int:
        """The revision of the last committed write."""
        return self._revision

    def delivered_revision(self) -> int:
        """The last committed revision, read once every watcher has been handed its events up to it (a publish
        sets the revision before it pushes, under the lock taken here): a watch's queue then holds every event
        of it and before, so a bookmark at that revision, sent after them, skips nothing."""
        with self._lock:
            return self._revision

    def exists(self, resource: str, namespace: str, name: str) -> bool:
        """Whether the object is stored now (nothing decoded)."""
        return self._lookup((resource, namespace, name)) is not None

    def get_raw(self, resource: str, namespace: str, name: str) -> bytes:
        """The stored JSON bytes of an object (404 if absent); for servers that stream without decoding."""
        record = self._lookup((resource, namespace, name))
        if record is None:
            plural, group = split_resource(resource)
            raise not_found(plural, name, group=group)
        if self._corrupt:
            self._refuse_corrupt(resource, namespace, name)
        return record.raw

    def get(self, resource: str, namespace: str, name: str) -> Obj:
        """The current object (a fresh dict); 404 NotFound if absent."""
        obj: Obj = orjson.loads(self.get_raw(resource, namespace, name))
        return obj

    def get_shared(self, resource: str, namespace: str, name: str, *, known: Obj | None = None) -> Obj:
        """The current object, read-only: when it was written recently by a writer that handed it over, the
        very object its watchers share (no decode), else a fresh decode; 404 NotFound if absent. `known`: the
        caller's read-only copy of the object (an informer's), returned if it is at the stored revision.

        For a read-modify-write that builds its new object without changing the old one (a patch merged copy
        on write), as the apiserver's patcher reads the watch cache's object rather than decoding etcd's bytes.
        """
        key = (resource, namespace, name)
        bucket = self._buckets.get(resource)  # `_lookup`, inline
        record = None if bucket is None else bucket.records.get(f"{namespace}/{name}")
        if record is None:
            plural, group = split_resource(resource)
            raise not_found(plural, name, group=group)
        if self._corrupt:
            self._refuse_corrupt(resource, namespace, name)
        latest = self._latest.get(key)
        if latest is not None and latest[0] == record.revision:
            return latest[1]
        if known is not None and _read_at(known, record):
            return known
        obj: Obj = orjson.loads(record.raw)
        return obj

    def _refuse_corrupt(self, resource: str, namespace: str | None, name: str | None = None) -> None:
        """Raise for a damaged object this read would return; a list fails whole, as a list over etcd fails on
        any corrupt object under its prefix."""
        for key, problem in self._corrupt.items():
            if key[0] == resource and namespace in (None, key[1]) and name in (None, key[2]):
                raise corrupt_object(key, problem)

    def _select(
        self,
        resource: str,
        namespace: str | None,
        label_selector: LabelSelector,
        field_selector: FieldSelector,
    ) -> list[Record]:
        bucket = self._buckets.get(resource)
        if bucket is None:
            return []
        if self._corrupt:
            self._refuse_corrupt(resource, namespace)
        records = bucket.records
        selected = [records[p] for p in bucket.paths(namespace, label_selector)]
        if not label_selector.empty:
            selected = [r for r in selected if label_selector.matches_labels(r.labels)]
        if not field_selector.empty:
            selected = [r for r in selected if field_selector.matches_fields(r.fields, r.decode)]
        return selected

    def list_raw(
        self,
        resource: str,
        namespace: str | None = None,
        *,
        label_selector: LabelSelector | str | None = None,
        field_selector: FieldSelector | str | None = None,
    ) -> tuple[list[bytes], int]:
        """Like `list`, but the objects' JSON bytes (for servers that stream without decoding)."""
        labels, fields = _as_label_selector(label_selector), _as_field_selector(field_selector)
        with self._lock:
            records = self._select(resource, namespace, labels, fields)
            revision = self._revision
        return [r.raw for r in records], revision

    def list(
        self,
        resource: str,
        namespace: str | None = None,
        *,
        label_selector: LabelSelector | str | None = None,
        field_selector: FieldSelector | str | None = None,
    ) -> tuple[list[Obj], int]:
        """Matching objects sorted by namespace/name (Kubernetes' order) and the revision they were read at."""
        raws, revision = self.list_raw(
            resource, namespace, label_selector=label_selector, field_selector=field_selector
        )
        return [orjson.loads(raw) for raw in raws], revision

    def list_page(
        self,
        resource: str,
        namespace: str | None = None,
        *,
        label_selector: LabelSelector | str | None = None,
        field_selector: FieldSelector | str | None = None,
        limit: int = 0,
        continue_after: str | None = None,
        at_revision: int | None = None,
    ) -> tuple[builtins.list[bytes], int, str | None, int | None]:
        """One page of `list_raw`: at most `limit` objects after the key `continue_after` (`"ns/name"`).

        Returns `(raws, revision, last_key, remaining)`; `last_key` is None when no objects remain; `remaining`,
        how many objects follow the page, only when more remain and neither selector restricts anything (etcd3's
        `GetList` counts keys, not matches: `remainingItemCount`, nil with a selector). With `at_revision` the
        page shows the objects as they were at that revision (every page of a paged list is read at its first
        page's revision, as etcd3's `GetList` reads at the continue token's revision); 410 Expired when the
        resource's bounded history no longer reaches back to it (`_History.compacted`) or it is in the future.
        """
        labels, fields = _as_label_selector(label_selector), _as_field_selector(field_selector)
        with self._lock:
            if self._corrupt:
                self._refuse_corrupt(resource, namespace)
            bucket = self._buckets.get(resource)
            records: dict[str, Record] = bucket.records if bucket is not None else {}
            paths = bucket.paths(namespace, labels) if bucket is not None else []
            revision = self._revision
            before: dict[str, Record | None] = {}
            if at_revision is not None and at_revision != revision:
                before, paths = self._as_of(resource, namespace, at_revision, paths)
                revision = at_revision
            if continue_after is not None:
                paths = paths[bisect.bisect_right(paths, continue_after) :]
            page: builtins.list[bytes] = []
            last: str | None = None
            for index, path in enumerate(paths):
                record = before[path] if path in before else records.get(path)
                if record is None or not (
                    labels.matches_labels(record.labels) and fields.matches_fields(record.fields, record.decode)
                ):
                    continue
                if limit > 0 and len(page) == limit:
                    remaining = _count_from(paths, index, before) if labels.empty and fields.empty else None
                    return page, revision, last, remaining
                page.append(record.raw)
                last = path
        return page, revision, None, None

    def _as_of(
        self, resource: str, namespace: str | None, revision: int, paths: builtins.list[str]
    ) -> tuple[dict[str, Record | None], builtins.list[str]]:
        """What differs at an earlier `revision` (path -> its record then, None: absent), and the candidate
        paths then: every change after `revision` undone, the oldest one's `prev` being the state at `revision`.
        Costs the changes since `revision`, at most the history's bound. Caller holds `_lock`."""
        history = self._history(resource)
        if revision > self._revision or revision < history.compacted:
            raise gone(f"too old resource version: {revision} ({history.compacted})")
        before: dict[str, Record | None] = {}
        for change in reversed(history.changes):
            if change.revision <= revision:
                break
            before[_path(change.namespace, change.name)] = change.prev
        if not before:
            return before, paths
        prefix = None if namespace is None else namespace + "/"
        extra = [p for p, r in before.items() if r is not None and (prefix is None or p.startswith(prefix))]
        return before, sorted(set(paths).union(extra))

    def revisions(self, resource: str) -> builtins.list[tuple[str, int]]:
        """`("namespace/name", revision of its last write)` of every object of `resource` (`"/name"` for a
        cluster-scoped one), nothing decoded: what an expiry by write time (`kjobs.server.eventttl`) needs, as
        etcd keeps a lease per key."""
        with self._lock:
            bucket = self._buckets.get(resource)
            return [] if bucket is None else [(path, record.revision) for path, record in bucket.records.items()]

    def stats(self) -> StoreStats:
        """Counts for metrics (`apiserver_storage_objects` per resource) and for checking group commit."""
        with self._lock:
            return StoreStats(
                revision=self._revision,
                objects={r: len(b.records) for r, b in self._buckets.items() if b.records},
                watchers={r: len(ws) for r, ws in self._watchers.items() if ws},
                commits=self._commits,
                committed_changes=self._committed_changes,
            )

    # --- watches --------------------------------------------------------------------------------------------

    def watch(
        self,
        resource: str,
        namespace: str | None = None,
        *,
        since: int | None,
        label_selector: LabelSelector | str | None = None,
        field_selector: FieldSelector | str | None = None,
        max_queue: int | None = None,
    ) -> Watch:
        """Watch a resource. `since` None or 0: an ADDED per current matching object, then every change;
        `since=N`: the changes after revision N (410 Gone if the history no longer reaches back to N).
        `max_queue`: how far the watcher may fall behind before it is dropped (default: the store's bound)."""
        labels, fields = _as_label_selector(label_selector), _as_field_selector(field_selector)
        w = Watch(
            resource=resource,
            namespace=namespace,
            label_selector=labels,
            field_selector=fields,
            on_close=self._forget,
            max_queue=self._watch_queue if max_queue is None else max_queue,
        )
        with self._lock:
            if not since:
                initial = [
                    Event(EventType.ADDED, r.raw, r.revision) for r in self._select(resource, namespace, labels, fields)
                ]
                w.initial_count, w.initial_revision = len(initial), self._revision
            else:
                changes = self._history(resource).after(since, self._revision)
                initial = [e for e in (w.filter(c) for c in changes) if e is not None]
            w.push(initial, bounded=False)
            watchers = self._watchers.get(resource)
            if watchers is None:
                watchers = self._watchers[resource] = Watchers(resource)
            watchers.add(w)
        return w

    def _forget(self, w: Watch) -> None:
        with self._lock:
            watchers = self._watchers.get(w.resource)
            if watchers is not None:
                watchers.remove(w)  # copy-on-write: a publish may be iterating over the current watchers
