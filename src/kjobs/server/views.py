"""Resources served as another version of objects stored under a different resource.

Kubernetes stores each object once, in one version, and converts it for a request made through another
(`events.k8s.io/v1` Events are the stored core Events: pkg/registry/events has no storage of its own, the
`events` storage is installed in both groups). A `View` is that for kjobs: the store key it reads and writes,
the conversions both ways and the field labels it accepts; `kjobs.server.storage.Storage` applies it, so the
handlers see a view's objects in its own version and the store holds only the stored one (one resourceVersion,
one watch history).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import orjson

from kjobs.api import events_v1
from kjobs.api.errors import ApiError
from kjobs.api.selectors import FieldSelector, FieldTerm
from kjobs.api.types import Obj

if TYPE_CHECKING:
    from kjobs.store.events import Event

T = TypeVar("T")


@dataclass(frozen=True)
class View:
    """A served resource whose objects are stored under `stored` in another version."""

    stored: str
    to_stored: Callable[[Obj], Obj]
    from_stored: Callable[[Obj], Obj]
    field_labels: Mapping[str, str]
    """Each field label the view accepts → the stored object's field label it selects on."""

    def read(self, obj: Obj) -> Obj:
        """A stored object in the view's version: a private copy (the store's objects are shared, read-only)."""
        return self.from_stored(orjson.loads(orjson.dumps(obj)))

    def write(self, obj: Obj) -> Obj:
        """An object of the view's version as it is stored (a copy: the store takes it over)."""
        return self.to_stored(orjson.loads(orjson.dumps(obj)))

    def read_raw(self, raw: bytes) -> bytes:
        """Stored JSON bytes in the view's version."""
        return orjson.dumps(self.from_stored(orjson.loads(raw)))

    def event(self, event: Event) -> Event:
        """A watch event of the stored resource, as the view's watchers see it."""
        from kjobs.store.events import Event  # `kjobs validate` reads the views' table without the store

        return Event(event.type, self.read_raw(event.raw), event.revision)

    async def named(self, resource: str, write: Awaitable[T]) -> T:
        """A write to the stored resource, whose errors (AlreadyExists, Conflict, NotFound) name the view's
        resource as the apiserver names the one a request addressed (`events.events.k8s.io "x" already exists`)."""
        from kjobs.store.base import split_resource

        try:
            return await write
        except ApiError as exc:
            details = exc.details or {}
            stored, _ = split_resource(self.stored)
            if details.get("kind") != stored or details.get("group"):
                raise
            plural, group = split_resource(resource)
            name = f'"{details.get("name", "")}"'
            message = exc.message.replace(f"{stored} {name}", f"{plural}.{group} {name}", 1)
            raise ApiError(
                exc.code, exc.reason, message, details={**details, "group": group}, metadata=exc.metadata
            ) from None

    def fields(self, selector: FieldSelector | None) -> FieldSelector | None:
        """A field selector in the view's labels (already checked: `FieldSelector.check_supported`) as the
        stored resource's labels."""
        if selector is None or selector.empty:
            return selector
        terms = (FieldTerm(self.field_labels.get(t.field, t.field), t.value, t.negate) for t in selector.terms)
        return FieldSelector(tuple(terms))


VIEWS: dict[str, View] = {
    "events.events.k8s.io": View("events", events_v1.to_core, events_v1.from_core, events_v1.FIELD_LABELS),
}
"""Views by the store key of the resource they serve (`Resource.store_key`)."""
