"""The server's view of the store: the few operations request handling needs, in one place.

`kjobs.store.Store` is the durable, watchable object store. The handlers reach it only through `Storage`,
which speaks in whole objects (namespace and name read from `metadata`), returns None for a missing object
on reads, and uses the store's async writes so durability never blocks the event loop. The raw-bytes
reads are passed through for the GET/LIST fast paths that stream stored JSON without decoding it.

A resource that is a view of another's objects (`kjobs.server.views`: `events.k8s.io/v1` Events) is read and
written here in its own version, converted from and to the stored one on every call.
"""

from __future__ import annotations

import orjson

from kjobs.api.errors import ApiError, not_found
from kjobs.api.selectors import FieldSelector, LabelSelector
from kjobs.api.types import Obj
from kjobs.server.views import VIEWS
from kjobs.store import Store, Watch
from kjobs.store.base import split_resource

Objects = list[Obj]
Raws = list[bytes]


def _key(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class Storage:
    """Adapter from the handlers' calls to `kjobs.store.Store`."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @property
    def revision(self) -> int:
        """The store's current revision."""
        return self.store.revision

    def delivered_revision(self) -> int:
        """The store's current revision, once its watchers have every event up to it (`Store.delivered_revision`)."""
        return self.store.delivered_revision()

    def exists(self, resource: str, namespace: str, name: str) -> bool:
        """Whether the object exists (no decode)."""
        view = VIEWS.get(resource)
        return self.store.exists(view.stored if view else resource, namespace, name)

    def get(
        self, resource: str, namespace: str, name: str, *, shared: bool = False, known: Obj | None = None
    ) -> Obj | None:
        """The object, or None; with `shared`, possibly the read-only object the store shares with watchers, and
        with `known` (the caller's read-only copy, see `Store.get_shared`) that one when it is current."""
        view = VIEWS.get(resource)
        if view is not None:
            stored = self.get(view.stored, namespace, name, shared=True)  # read: `view.read` copies it
            return None if stored is None else view.read(stored)
        try:
            if shared or known is not None:
                return self.store.get_shared(resource, namespace, name, known=known)
            return self.store.get(resource, namespace, name)
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise

    def get_raw(self, resource: str, namespace: str, name: str) -> bytes:
        """The stored JSON bytes (404 ApiError if absent)."""
        view = VIEWS.get(resource)
        if view is not None:
            obj = self.get(resource, namespace, name)
            if obj is None:
                plural, group = split_resource(resource)
                raise not_found(plural, name, group=group)
            return orjson.dumps(obj)
        return self.store.get_raw(resource, namespace, name)

    def stored_raw(self, resource: str, obj: Obj) -> bytes | None:
        """The stored JSON bytes of `obj` when `obj` is the stored object itself (what a write just handed over,
        shared with watchers: its bytes were encoded from it), else None. A write's response can then send the
        bytes the watchers send instead of encoding the object again, as the apiserver serves the watch cache.

        The bytes are read first: a write returns once its record is published, so they are of its revision or a
        later one, and only the current revision's shared object can be `obj` itself; a dry run's object, a
        deletion's last state or a Status is never stored, and falls back (None)."""
        meta = obj.get("metadata")
        if not isinstance(meta, dict) or not meta.get("name") or not meta.get("resourceVersion"):
            return None
        if resource in VIEWS:  # a view's objects are converted, never the stored ones
            return None
        namespace, name = str(meta.get("namespace") or ""), str(meta["name"])
        try:
            raw = self.store.get_raw(resource, namespace, name)
            current = self.store.get_shared(resource, namespace, name)
        except ApiError:
            return None
        return raw if current is obj else None

    def list(
        self,
        resource: str,
        namespace: str | None,
        *,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelector | None = None,
    ) -> tuple[Objects, int]:
        """Matching objects in Kubernetes' order and the revision they were read at."""
        view = VIEWS.get(resource)
        if view is not None:
            items, revision = self.store.list(
                view.stored, namespace, label_selector=label_selector, field_selector=view.fields(field_selector)
            )
            return [view.read(item) for item in items], revision
        return self.store.list(resource, namespace, label_selector=label_selector, field_selector=field_selector)

    def list_raw(
        self,
        resource: str,
        namespace: str | None,
        *,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelector | None = None,
    ) -> tuple[Raws, int]:
        """Like `list`, as stored JSON bytes."""
        view = VIEWS.get(resource)
        if view is not None:
            raws, revision = self.store.list_raw(
                view.stored, namespace, label_selector=label_selector, field_selector=view.fields(field_selector)
            )
            return [view.read_raw(raw) for raw in raws], revision
        return self.store.list_raw(resource, namespace, label_selector=label_selector, field_selector=field_selector)

    def list_page(
        self,
        resource: str,
        namespace: str | None,
        *,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelector | None = None,
        limit: int = 0,
        continue_after: str | None = None,
        at_revision: int | None = None,
    ) -> tuple[Raws, int, str | None, int | None]:
        """One page (at most `limit` objects, 0: all) after key `continue_after`, as of `at_revision` (None: now);
        the last key and, without selectors, how many objects follow, if more remain. 410 when the store's
        history no longer reaches `at_revision`."""
        view = VIEWS.get(resource)
        if view is not None:
            raws, revision, last, remaining = self.store.list_page(
                view.stored,
                namespace,
                label_selector=label_selector,
                field_selector=view.fields(field_selector),
                limit=limit,
                continue_after=continue_after,
                at_revision=at_revision,
            )
            return [view.read_raw(raw) for raw in raws], revision, last, remaining
        return self.store.list_page(
            resource,
            namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            limit=limit,
            continue_after=continue_after,
            at_revision=at_revision,
        )

    async def create(self, resource: str, obj: Obj) -> Obj:
        """Create; 409 AlreadyExists if taken. The store takes `obj` itself (the API service builds a fresh
        object for every write and keeps no reference to it); the result may be that same object."""
        namespace, name = _key(obj)
        view = VIEWS.get(resource)
        if view is not None:
            write = self.store.acreate(view.stored, namespace, name, view.write(obj), adopt=True)
            return view.read(await view.named(resource, write))
        return await self.store.acreate(resource, namespace, name, obj, adopt=True)

    async def update(self, resource: str, obj: Obj, *, expected_rv: str | None) -> Obj:
        """Compare-and-swap update; 409 Conflict if stale, 404 if gone."""
        namespace, name = _key(obj)
        view = VIEWS.get(resource)
        if view is not None:
            write = self.store.aupdate(
                view.stored, namespace, name, view.write(obj), expected_rv=expected_rv, adopt=True
            )
            return view.read(await view.named(resource, write))
        return await self.store.aupdate(resource, namespace, name, obj, expected_rv=expected_rv, adopt=True)

    async def delete(
        self,
        resource: str,
        namespace: str,
        name: str,
        *,
        expected_rv: str | None = None,
        last: Obj | None = None,
        untouched: bool = False,
    ) -> Obj:
        """Remove; the last state with the deletion's resourceVersion. `last`: the caller's fresh read of the
        object, handed over (the store stamps it instead of decoding the record again; see `Store.adelete`), and
        `untouched` that it is left exactly as read (a view's `write` makes another object: never passed on)."""
        view = VIEWS.get(resource)
        if view is not None:
            stored = None if last is None else view.write(last)
            write = self.store.adelete(view.stored, namespace, name, expected_rv=expected_rv, last=stored)
            return view.read(await view.named(resource, write))
        return await self.store.adelete(
            resource, namespace, name, expected_rv=expected_rv, last=last, untouched=untouched
        )

    def watch(
        self,
        resource: str,
        namespace: str | None,
        *,
        since: int | None,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelector | None = None,
        max_queue: int | None = None,
    ) -> Watch:
        """Changes after `since` (None/0: an ADDED per current object first); 410 when `since` is too old;
        dropped once `max_queue` events behind (default: the store's bound)."""
        view = VIEWS.get(resource)
        if view is not None:
            watch = self.store.watch(
                view.stored,
                namespace,
                since=since,
                label_selector=label_selector,
                field_selector=view.fields(field_selector),
                max_queue=max_queue,
            )
            watch.convert = view.event
            return watch
        return self.store.watch(
            resource,
            namespace,
            since=since,
            label_selector=label_selector,
            field_selector=field_selector,
            max_queue=max_queue,
        )
