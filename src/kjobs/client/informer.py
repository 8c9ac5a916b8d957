"""Informers: a local cache of one resource kept current by list + watch, with change handlers.

On start the informer lists (handlers see ADDED for each object), then watches from the list's
resourceVersion. When the watch ends it resumes from the last seen version; a 410 Expired makes it relist
and diff the cache against the fresh list, so handlers still see every add, update and delete exactly once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.resources import ResourceRef
from kjobs.clock import Clock, RealClock

log = logging.getLogger(__name__)

Key = tuple[str, str]
Handler = Callable[[Obj | None, Obj | None], None]
"""Called with (old, new): add = (None, new), update = (old, new), delete = (old, None)."""

_Entry = tuple[Handler, str | None]
"""A registered handler and the member an update must replace for it to be called (None: every update)."""


def _version_of(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def key_of(obj: Obj) -> Key:
    """(namespace, name)."""
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


@dataclass(eq=False, repr=False)
class Informer:
    """Cache of `resource` objects (optionally one namespace / selected), kept by list + watch."""

    client: Client
    resource: ResourceRef
    namespace: str | None = None
    label_selector: str | None = None
    field_selector: str | None = None
    clock: Clock = field(default_factory=RealClock)
    cache: dict[Key, Obj] = field(default_factory=dict)
    handlers: list[_Entry] = field(default_factory=list)
    synced: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None
    _version: str = ""
    _users: int = 0

    def add_handler(self, handler: Handler, *, unless_same: str | None = None) -> None:
        """Register a change handler (also called for objects already cached).

        `unless_same`, a top-level member (`"spec"`): an update whose old and new versions hold the very same
        object there (`is`, not `==`: no walk) is not passed to this handler. Only for a handler that, given
        such an update, returns having changed nothing — it reads nothing else of an update, or reads it only
        to decide what the unchanged member already decides. Cached objects are read-only and a write that
        leaves a member as it was hands the stored one on (the pods' status and finalizer writes keep their
        `spec`), so identity is how an unchanged member shows. Adds, deletes and relists always reach it."""
        self.handlers.append((handler, unless_same))
        for obj in list(self.cache.values()):
            handler(None, obj)

    def remove_handler(self, handler: Handler) -> None:
        """Stop calling a handler added earlier (for a user of a shared informer that is done with it)."""
        for i, (known, _) in enumerate(self.handlers):
            if known == handler:
                del self.handlers[i]
                return

    def get(self, namespace: str, name: str) -> Obj | None:
        """The cached object."""
        return self.cache.get((namespace, name))

    def list(self, namespace: str | None = None) -> list[Obj]:
        """Cached objects, optionally of one namespace."""
        if namespace is None:
            return list(self.cache.values())
        return [o for (ns, _), o in self.cache.items() if ns == namespace]

    def start(self) -> None:
        """Begin listing and watching in the background (a shared informer counts its users)."""
        self._users += 1
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"informer-{self.resource.plural}")

    async def stop(self) -> None:
        """Stop watching once the last user has stopped."""
        self._users = max(0, self._users - 1)
        if self._users == 0 and self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        delay = 0.2
        while True:
            try:
                if not self._version:
                    await self._relist()
                    self.synced.set()
                await self._watch()
                delay = 0.2
            except asyncio.CancelledError:
                raise
            except ApiError as exc:
                if exc.code == 410:
                    self._version = ""
                    continue
                log.warning("watch %s failed: %s", self.resource.plural, exc)
                await self.clock.sleep(delay)
                delay = min(delay * 2, 5.0)
            except Exception as exc:
                log.warning("watch %s interrupted: %s", self.resource.plural, exc)
                await self.clock.sleep(delay)
                delay = min(delay * 2, 5.0)

    async def _relist(self) -> None:
        items, version = await self.client.list(
            self.resource, self.namespace, label_selector=self.label_selector, field_selector=self.field_selector
        )
        fresh = {key_of(o): o for o in items}
        for key, gone in list(self.cache.items()):
            if key not in fresh:
                del self.cache[key]
                self._notify(gone, None)
        for key, obj in fresh.items():
            previous = self.cache.get(key)
            self.cache[key] = obj
            if previous is None or _version_of(previous) != _version_of(obj):
                self._notify(previous, obj)
        self._version = version

    async def _watch(self) -> None:
        client = self.client
        plain = getattr(type(client), "plain_watch", None)  # none on a wrapper that forwards by `__getattr__`
        watch = getattr(client, "watch", None)
        open_stream = getattr(client, "watch_stream", None)
        if (
            plain is not None
            and open_stream is not None
            and getattr(watch, "__func__", None) is plain
            and getattr(watch, "__self__", None) is client
        ):
            # An in-process client whose `watch` is its own (`LocalClient`'s, not replaced by a subclass nor on
            # the instance): the store's stream itself, whose events carry the same `type` and shared `object`,
            # without the client's generator and a `WatchEvent` for each event in between (one step less an event
            # of every informer). Closed here, as that generator's `finally` closed it.
            stream = open_stream(
                self.resource,
                self.namespace,
                resource_version=self._version,
                label_selector=self.label_selector,
                field_selector=self.field_selector,
            )
            try:
                while events := await stream.next_batch():
                    self._deliver(events)
            finally:
                stream.close()
            return
        await self._consume(
            client.watch(
                self.resource,
                self.namespace,
                resource_version=self._version,
                label_selector=self.label_selector,
                field_selector=self.field_selector,
                timeout_seconds=300,
            )
        )

    async def _consume(self, stream: AsyncIterator[Any]) -> None:
        async for event in stream:
            self._deliver((event,))

    def _deliver(self, events: Iterable[Any]) -> None:
        """Apply events (each with a `type` and an `object`) to the cache and call the handlers, in order."""
        for event in events:
            # `_version_of` and `key_of` inlined, their `str()` only for what is not a str already: this loop
            # runs for every event of every informer (ten a pod in `kjobs simulate`).
            obj, kind = event.object, event.type
            meta = obj.get("metadata") or {}
            version, namespace, name = meta.get("resourceVersion"), meta.get("namespace"), meta.get("name")
            if type(version) is not str:
                version = str(version or "")
            if kind == "BOOKMARK":
                self._version = version or self._version
                continue
            key = (
                namespace if type(namespace) is str else str(namespace or ""),
                name if type(name) is str else str(name or ""),
            )
            old = self.cache.get(key)
            before: Obj | None
            after: Obj | None
            if kind == "DELETED":
                self.cache.pop(key, None)
                before, after = old or obj, None
            else:
                self.cache[key] = obj
                before, after = old, obj
            for handler, unless_same in self.handlers:  # `_notify`, inline: one call less an event
                if (
                    unless_same is not None
                    and before is not None
                    and after is not None
                    and before.get(unless_same) is after.get(unless_same)
                ):
                    continue  # see `add_handler`
                try:
                    handler(before, after)
                except Exception:
                    log.exception("informer handler failed")
            if version:
                self._version = version

    def _notify(self, old: Obj | None, new: Obj | None) -> None:
        for handler, _ in self.handlers:  # a relist's updates reach every handler
            try:
                handler(old, new)
            except Exception:
                log.exception("informer handler failed")


def _owner(handler: Handler) -> object:
    """The object a handler is a method of (through a `functools.partial`), if any."""
    func = getattr(handler, "func", handler)
    return getattr(func, "__self__", None)


class InformerFactory:
    """One informer per (resource, namespace, selectors), shared by every component given this factory — as
    client-go's SharedInformerFactory: one watch and one decoded object per change, however many controllers
    look. Objects in a shared cache are read-only by convention: copy before changing anything."""

    def __init__(self, client: Client, *, clock: Clock) -> None:
        self._client = client
        self._clock = clock
        self._informers: dict[tuple[str, str, str | None, str | None, str | None], Informer] = {}

    def remove_handlers_of(self, owner: object) -> None:
        """Remove from every informer the handlers that are methods of `owner` (bound, or in a
        `functools.partial`): a stopped component being replaced must not go on being called."""
        for informer in self._informers.values():
            informer.handlers[:] = [entry for entry in informer.handlers if _owner(entry[0]) is not owner]

    def informer(
        self,
        resource: ResourceRef,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Informer:
        """The shared informer for this view of `resource` (created on first use)."""
        key = (resource.group, resource.plural, namespace, label_selector, field_selector)
        found = self._informers.get(key)
        if found is None:
            found = Informer(
                self._client,
                resource,
                namespace=namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                clock=self._clock,
            )
            self._informers[key] = found
        return found
