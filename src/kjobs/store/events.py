"""Watch events and the change records they are cut from.

A `Change` is one committed write as the store remembers it in its bounded history: the revision, the new
state and the previous one (needed to tell a watcher with a selector that an object left or entered its
view). An `Event` is what one watcher receives; it carries the object's JSON bytes and decodes them only
when asked, so an HTTP server can stream `raw` without a decode/encode round trip and every consumer that
does decode gets its own dict.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import orjson

from kjobs.api.types import Obj


class EventType(StrEnum):
    """Kubernetes' `watch.EventType` values."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    BOOKMARK = "BOOKMARK"


class Event:
    """One watch event: `type` and the object (`object` decoded lazily from `raw`); unpacks as `(type, obj)`."""

    __slots__ = ("_obj", "raw", "revision", "type")

    def __init__(self, type: EventType, raw: bytes, revision: int) -> None:
        self.type = type
        self.raw = raw
        self.revision = revision
        self._obj: Obj | None = None

    @property
    def object(self) -> Obj:
        """The object at this event's revision (its `metadata.resourceVersion` is the event revision)."""
        if self._obj is None:
            self._obj = orjson.loads(self.raw)
        return self._obj

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


@dataclass(frozen=True, slots=True)
class Record:
    """A stored object: the store's private dict (never handed out), its JSON bytes, and its revision."""

    obj: Obj
    raw: bytes
    revision: int


@dataclass(frozen=True, slots=True)
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
