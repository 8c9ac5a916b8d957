"""Watch events, and the stored records and change records they are cut from.

A `Record` is one stored object version: its JSON bytes plus a small index (labels, selectable fields,
uid). A `Change` is one committed write as the store remembers it in its bounded history: the new record
and the previous one (needed to tell a watcher with a selector that an object left or entered its view).
An `Event` is what one watcher receives; it carries the object's JSON bytes and decodes them only when
asked, so an HTTP server can stream `raw` without a decode/encode round trip; the in-process watchers of
one change share one decoded, read-only dict.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from sys import intern
from typing import TYPE_CHECKING, Any

import orjson

from kjobs.api.selectors import selectable_fields
from kjobs.api.types import Obj
from kjobs.store.mutation import SharedDecode
from kjobs.store.packing import MARK, Dictionary, unpack


class EventType(StrEnum):
    """Kubernetes' `watch.EventType` values."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    BOOKMARK = "BOOKMARK"


# The members under module names, for the write path: `EventType.DELETED` is a lookup on the enum class (about 900
# instructions on CPython 3.11, measured with cachegrind), a module global about 50; the objects are the same.
ADDED = EventType.ADDED
MODIFIED = EventType.MODIFIED
DELETED = EventType.DELETED


class Event:
    """One watch event: `type` and the object (`object` decoded lazily from `raw`); unpacks as `(type, obj)`."""

    __slots__ = ("_shared", "object", "raw", "revision", "type")

    object: Obj
    """The object at this event's revision (its `metadata.resourceVersion` is the event revision).

    Read-only: the watchers of one change share one decoded dict (see `kjobs.store.mutation`). A plain slot, set at
    once to the writer's own object when it handed it over (the usual in-process write), so a consumer's read is a
    slot's rather than a property's call; otherwise `__getattr__` decodes it at the first read and sets it."""

    def __init__(self, type: EventType, raw: bytes, revision: int, shared: SharedDecode | None = None) -> None:
        self.type = type
        self.raw = raw
        self.revision = revision
        self._shared = shared
        if shared is not None and shared.obj is not None:
            self.object = shared.obj

    if not TYPE_CHECKING:  # for mypy, `object` is the attribute declared above, and no other name resolves

        def __getattr__(self, name: str) -> Obj:
            """`object` while its slot is unset: the change's shared decode (or this event's own), kept."""
            if name != "object":
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            shared = self._shared
            obj = self.object = shared.get() if shared is not None else orjson.loads(self.raw)
            return obj

    def __iter__(self) -> Iterator[Any]:
        yield self.type
        yield self.object

    def __eq__(self, other: builtins.object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return bool(self.type == other.type and self.raw == other.raw)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        meta = self.object.get("metadata") or {}
        return f"Event({self.type.value}, {meta.get('namespace', '')}/{meta.get('name', '')}@{self.revision})"


_NO_LABELS: dict[str, str] = {}

Index = tuple[dict[str, str], dict[str, str], str]
"""What a record keeps besides its bytes: labels, selectable field values, uid."""


def index_of(resource: str, obj: Obj, like: Record | None = None, prev: Obj | None = None) -> Index:
    """The labels, selectable fields and uid of an object (none of which depend on its resourceVersion).

    Label keys and values and field values other than the name are interned: the store keeps them for as long
    as the object is stored, and most repeat across objects (a Job's name and uid on each of its pods, the
    namespace, node, phase), where each decoded object has its own copies of them (about 600 bytes a pod).
    `like`, the record an update replaces: labels or fields equal to its own are its (interned) dicts, shared
    rather than built again (most writes change neither: a status patch, a binding, a finalizer's removal).
    `prev`, when known, the stored object `like` was made from (read-only, as the store shares it): labels that
    are its very dict are `like`'s without a comparison, and fields under a member it shares are `like`'s without
    being read again (`selectable_fields`' `prev`)."""
    meta = obj.get("metadata") or {}
    labels = meta.get("labels")
    if not isinstance(labels, dict) or not labels:
        labels = _NO_LABELS
    elif like is not None and (
        (prev is not None and labels is (prev.get("metadata") or {}).get("labels")) or labels == like.labels
    ):
        labels = like.labels
    else:
        labels = {intern(str(k)): intern(v if type(v) is str else str(v)) for k, v in labels.items()}
    if like is None:
        fields = selectable_fields(resource, obj)
    else:
        fields = selectable_fields(resource, obj, prev, like.fields if prev is not None else None)
    if like is not None and fields == like.fields:
        fields = like.fields  # (`selectable_fields` interns the values it reads)
    uid = meta.get("uid")
    return labels, fields, uid if isinstance(uid, str) else ""


@dataclass(slots=True)
class Record:
    """A stored object: its JSON bytes and revision, plus what selectors and preconditions need (labels,
    precomputed selectable fields, uid). The decoded object is not kept: a few small objects per record
    instead of a hundred keeps memory and the garbage collector's full passes small.

    Read-only, like `Change`, by convention rather than `frozen`: a frozen dataclass sets each field through
    `object.__setattr__`, which made building one (twice per write) 3.7× slower. The one exception is the store
    packing a cold record in place (`dictionary`, then `data`), which leaves `raw` the same bytes."""

    data: bytes  # the JSON, or once the record is cold, the JSON packed (`kjobs.store.packing`): read `raw`
    revision: int
    labels: dict[str, str]
    fields: dict[str, str]
    uid: str
    dictionary: Dictionary | None = None  # what `data` was packed against (or the record is a dictionary itself)

    @property
    def raw(self) -> bytes:
        """The stored object's JSON bytes (inflated if the record is packed: a fresh copy each time)."""
        data = self.data
        if data[0] != MARK:
            return data
        dictionary = self.dictionary  # set before `data` was packed
        assert dictionary is not None
        return unpack(data, dictionary)

    @classmethod
    def of(cls, resource: str, obj: Obj, raw: bytes, revision: int) -> Record:
        """Index an object whose JSON form is `raw`."""
        return cls(raw, revision, *index_of(resource, obj))

    def decode(self) -> Obj:
        """A fresh dict of the stored object."""
        obj: Obj = orjson.loads(self.raw)
        return obj


@dataclass(slots=True)
class Change:
    """One committed write in a resource's history. For DELETED, `record` is the last state at the new revision."""

    type: EventType
    namespace: str
    name: str
    record: Record
    prev: Record | None

    @property
    def revision(self) -> int:
        """The revision this change was committed at."""
        return self.record.revision
