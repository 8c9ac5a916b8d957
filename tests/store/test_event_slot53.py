"""Stop 53: `Event.object` is a slot, set at once to a handed-over object and otherwise decoded by `__getattr__`
at the first read, rather than a property read on every access. Against stop 52's `Event` kept here (`PropertyEvent`):
for events with no shared decode, with one that holds the writer's object, and with one that decodes (shared by
several events), the same objects (the very same dicts, read once or twice, in any order of events), unpacking,
equality and repr; another missing attribute is an AttributeError."""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.store.events import Event, EventType
from kjobs.store.mutation import SharedDecode
from tests.hypothesis_budget import examples


class PropertyEvent:
    """One watch event: `type` and the object (`object` decoded lazily from `raw`); unpacks as `(type, obj)`."""

    __slots__ = ("_obj", "_shared", "raw", "revision", "type")

    def __init__(self, type: EventType, raw: bytes, revision: int, shared: SharedDecode | None = None) -> None:
        self.type = type
        self.raw = raw
        self.revision = revision
        # The writer's own object when it handed it over (the usual in-process write): `object` then reads it
        # with no call into `shared`, which would return that same dict.
        self._obj: Obj | None = None if shared is None else shared.obj
        self._shared = shared

    @property
    def object(self) -> Obj:
        """The object at this event's revision (its `metadata.resourceVersion` is the event revision).

        Read-only: the watchers of one change share one decoded dict (see `kjobs.store.mutation`)."""
        if self._obj is None:
            self._obj = self._shared.get() if self._shared is not None else orjson.loads(self.raw)
        return self._obj

    def __iter__(self) -> Iterator[Any]:
        yield self.type
        yield self.object

    def __eq__(self, other: builtins.object) -> bool:
        if not isinstance(other, PropertyEvent):
            return NotImplemented
        return bool(self.type == other.type and self.raw == other.raw)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        meta = self.object.get("metadata") or {}
        return f"Event({self.type.value}, {meta.get('namespace', '')}/{meta.get('name', '')}@{self.revision})"


def _obj(n: int) -> Obj:
    return {"metadata": {"name": f"p{n}", "namespace": "ns", "resourceVersion": str(n)}, "spec": {"n": n}}


@settings(max_examples=examples(300), deadline=None)
@given(
    st.sampled_from(["none", "handed", "decoded"]),
    st.lists(st.tuples(st.integers(0, 2), st.sampled_from(["object", "iter", "repr"])), max_size=8),
    st.sampled_from(list(EventType)),
)
def test_event_objects_as_stop_52(shared_kind: str, reads: list[tuple[int, str]], kind: EventType) -> None:
    seen: list[list[Any]] = []
    for cls in (PropertyEvent, Event):
        obj = _obj(7)
        raw = orjson.dumps(obj)
        shared = {"none": None, "handed": SharedDecode(raw, obj), "decoded": SharedDecode(raw)}[shared_kind]
        events = [cls(kind, raw, 7, shared) for _ in range(3)]
        got: list[Any] = []
        objects: list[Obj] = []
        for i, how in reads:
            event = events[i]
            if how == "object":
                value = event.object
            elif how == "iter":
                t, value = event
                got.append(t)
            else:
                got.append(repr(event))
                value = event.object
            got.append(value)
            # which earlier read returned this very dict (or none), and whether it is the writer's own
            got.append(next((j for j, o in enumerate(objects) if o is value), None))
            got.append(value is obj)
            objects.append(value)
        got.append([events[0] == e for e in events])
        seen.append(got)
    assert seen[1] == seen[0]


def test_an_unknown_attribute_is_an_attribute_error() -> None:
    event = Event(EventType.ADDED, b"{}", 1)
    with pytest.raises(AttributeError, match="no attribute 'objects'"):
        event.objects  # noqa: B018
    assert not hasattr(event, "nothing")
    assert event.object == {}
