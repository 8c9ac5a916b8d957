"""The server's view of the store: the few operations request handling needs, in one place.

`kjobs.store.Store` is the durable, watchable object store. The handlers reach it only through `Storage`,
which speaks in whole objects (namespace and name read from `metadata`), returns None for a missing object
on reads, and uses the store's async writes so durability never blocks the event loop. The raw-bytes
reads are passed through for the GET/LIST fast paths that stream stored JSON without decoding it.
"""

from __future__ import annotations

from kjobs.api.errors import ApiError
from kjobs.api.selectors import FieldSelector, LabelSelector
from kjobs.api.types import Obj
from kjobs.store import Store, Watch

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

    def exists(self, resource: str, namespace: str, name: str) -> bool:
        """Whether the object exists (no decode)."""
        return self.store.exists(resource, namespace, name)

    def get(self, resource: str, namespace: str, name: str, *, shared: bool = False) -> Obj | None:
        """The object, or None; with `shared`, possibly the read-only object the store shares with watchers."""
        try:
            if shared:
                return self.store.get_shared(resource, namespace, name)
            return self.store.get(resource, namespace, name)
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise

    def get_raw(self, resource: str, namespace: str, name: str) -> bytes:
        """The stored JSON bytes (404 ApiError if absent)."""
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
    ) -> tuple[Raws, int, str | None]:
        """One page (at most `limit` objects, 0: all) after key `continue_after`, as of `at_revision` (None: now);
        the last key if more remain. 410 when the store's history no longer reaches `at_revision`."""
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
        return await self.store.acreate(resource, namespace, name, obj, adopt=True)

    async def update(self, resource: str, obj: Obj, *, expected_rv: str | None) -> Obj:
        """Compare-and-swap update; 409 Conflict if stale, 404 if gone."""
        namespace, name = _key(obj)
        return await self.store.aupdate(resource, namespace, name, obj, expected_rv=expected_rv, adopt=True)

    async def delete(
        self, resource: str, namespace: str, name: str, *, expected_rv: str | None = None, last: Obj | None = None
    ) -> Obj:
        """Remove; the last state with the deletion's resourceVersion. `last`: the caller's fresh read of the
        object, handed over (the store stamps it instead of decoding the record again; see `Store.adelete`)."""
        return await self.store.adelete(resource, namespace, name, expected_rv=expected_rv, last=last)

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
        return self.store.watch(
            resource,
            namespace,
            since=since,
            label_selector=label_selector,
            field_selector=field_selector,
            max_queue=max_queue,
        )
