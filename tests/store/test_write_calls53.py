"""Stop 53: calls a store write no longer makes. `_write` takes a handed-over object whose metadata is a dict
without calling `_adopted`; `acreate`, `aupdate` and `adelete` return the stored object without calling
`Op.outcome` when it is the op's own; `aupdate` and `get_shared` look the record up inline. Against the forms of
stop 52 kept here: the same ops (or the same error) from `_write`, and the same answers, errors and returned
objects (the very object handed over, or an equal one) from the store, a failing `_persist` included."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.errors import ApiError, bad_request, not_found
from kjobs.api.types import Obj
from kjobs.store import MemoryStore
from kjobs.store.base import Key, Op, OpKind, _adopted, _private_copy, _read_at, _write, split_resource
from kjobs.store.events import Record, index_of
from tests.hypothesis_budget import examples


def _old_write(
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
    copy = _adopted(obj) if adopt else _private_copy(obj)
    op = Op(kind, resource, namespace, name, copy, expected_rv, expected_uid, index_of(resource, copy, like, prev))
    op.adopted = adopt
    return op


class Stop52Store(MemoryStore):
    """`acreate`, `aupdate`, `adelete` and `get_shared` as stop 52 left them (through `_old_write`), and a
    `_persist` that fails when told to."""

    failing = False

    def _persist(self, final: dict[Key, Record | None], revision: int) -> None:
        if self.failing:
            raise OSError(28, "database or disk is full")

    async def acreate(self, resource: str, namespace: str, name: str, obj: Obj, *, adopt: bool = False) -> Obj:
        """`create` for asyncio callers: awaits durability without blocking the event loop. With `adopt` the
        store takes `obj` itself rather than a copy and shares it with in-process watchers; the object returned may be
        that same one, so it is read-only for the caller too."""
        op = _old_write("create", resource, namespace, name, obj, adopt=adopt)
        if self.writes_inline:
            self._submit([op])  # what `_asubmit` does there, without a coroutine a write
        else:
            await self._asubmit(op)
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
        like = self._lookup(key)
        # The object the store shares for that record, if it still has it (as `get_shared` finds it): a handed-over
        # object that keeps its members (a status write keeps the spec) is indexed from what they were.
        prev = None
        if adopt and like is not None:
            known = self._latest.get(key)
            if known is not None and known[0] == like.revision:
                prev = known[1]
        op = _old_write(
            "update", resource, namespace, name, obj, expected_rv, expected_uid, adopt=adopt, like=like, prev=prev
        )
        if self.writes_inline:
            self._submit([op])  # what `_asubmit` does there, without a coroutine a write
        else:
            await self._asubmit(op)
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
        return op.outcome()

    def get_shared(self, resource: str, namespace: str, name: str, *, known: Obj | None = None) -> Obj:
        """The current object, read-only: when it was written recently by a writer that handed it over, the
        very object its watchers share (no decode), else a fresh decode; 404 NotFound if absent. `known`: the
        caller's read-only copy of the object (an informer's), returned if it is at the stored revision.

        For a read-modify-write that builds its new object without changing the old one (a patch merged copy
        on write), as the apiserver's patcher reads the watch cache's object rather than decoding etcd's bytes.
        """
        key = (resource, namespace, name)
        record = self._lookup(key)
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


class FailingStore(MemoryStore):
    """Today's store, with the same failing `_persist`."""

    failing = False

    def _persist(self, final: dict[Key, Record | None], revision: int) -> None:
        if self.failing:
            raise OSError(28, "database or disk is full")


class Meta(dict[str, Any]):
    """A dict subclass: `_adopted` accepts it, the inline check leaves it to `_adopted`."""


METADATA = st.sampled_from(["dict", "missing", "none", "list", "subclass"])
OBJECTS = st.sampled_from(["dict", "subclass", "list", "str"])


def _object(shape: str, metadata: str, name: str, n: int) -> Any:
    meta: Any = {"name": name, "namespace": "ns", "uid": f"u-{name}", "labels": {"n": str(n % 2)}}
    if metadata == "missing":
        obj: dict[str, Any] = {"spec": {"n": n}}
    else:
        meta = {"none": None, "list": [1], "subclass": Meta(meta), "dict": meta}[metadata]
        obj = {"metadata": meta, "spec": {"n": n}}
    if shape == "subclass":
        return Meta(obj)
    return {"list": [obj], "str": "pod", "dict": obj}[shape]


def _op_view(op: Op) -> Any:
    return (op.kind, op.resource, op.namespace, op.name, op.obj, op.expected_rv, op.expected_uid, op.index, op.adopted)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.sampled_from(["create", "update"]),
    OBJECTS,
    METADATA,
    st.sampled_from(["p", "", "a/b"]),
    st.booleans(),
    st.booleans(),
)
def test_write_makes_the_op_stop_52_made(
    kind: OpKind, shape: str, metadata: str, name: str, adopt: bool, with_like: bool
) -> None:
    like = Record(b"{}", 3, {"n": "0"}, {}, "u-p") if with_like else None
    answers = []
    for write in (_old_write, _write):
        obj = _object(shape, metadata, name or "p", 1)
        try:
            op = write(kind, "things", "ns", name, obj, "3", None, adopt=adopt, like=like)
        except ApiError as err:
            answers.append(("error", err.code, str(err)))
            continue
        answers.append(("ok", _op_view(op), op.obj is obj))
    assert answers[1] == answers[0]


WRITES = st.lists(
    st.tuples(
        st.sampled_from(["create", "update", "update", "delete", "delete-last", "get"]),
        st.sampled_from(["a", "b"]),
        st.sampled_from([None, "current", "stale"]),  # a resourceVersion precondition
        st.integers(0, 3),
        st.booleans(),  # adopt
        st.booleans(),  # the store's `_persist` fails
    ),
    max_size=14,
)


async def _run(store: Any, writes: list[tuple[Any, ...]]) -> list[Any]:
    out: list[Any] = []
    for kind, name, rv, n, adopt, failing in writes:
        store.failing = failing
        record = store._lookup(("things", "ns", name))
        expected_rv = {None: None, "current": None if record is None else str(record.revision), "stale": "1"}[rv]
        obj = _object("dict", "dict", name, n)
        try:
            if kind == "create":
                result = await store.acreate("things", "ns", name, obj, adopt=adopt)
            elif kind == "update":
                result = await store.aupdate("things", "ns", name, obj, expected_rv=expected_rv, adopt=adopt)
            elif kind == "get":
                result = store.get_shared("things", "ns", name)
            else:
                last = None
                if kind == "delete-last" and record is not None:
                    last = store.get_shared("things", "ns", name)
                result = await store.adelete("things", "ns", name, expected_rv=expected_rv, last=last)
            out.append(("ok", orjson.dumps(result), result is obj))
            now = store._lookup(("things", "ns", name))
            if record is not None and now is not None and now is not record:  # the index shared with the record
                out.append((now.labels is record.labels, now.fields is record.fields))
        except ApiError as err:
            out.append(("error", err.code, str(err)))
    return out


@settings(max_examples=examples(300), deadline=None)
@given(WRITES)
def test_async_writes_answer_as_stop_52(writes: list[tuple[Any, ...]]) -> None:
    assert asyncio.run(_run(FailingStore(), writes)) == asyncio.run(_run(Stop52Store(), writes))
