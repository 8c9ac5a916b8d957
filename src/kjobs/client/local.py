"""`LocalClient`: the `Client` interface straight onto kjobs' API service, in process, with no HTTP.

Writes go through `kjobs.server.service.ApiService`, so defaulting, validation, graceful deletion, finalizers,
the status-subresource split and eviction behave exactly as over HTTP; watches read the store's event stream.
Reads return fresh objects; watch events carry the object the store shares with all in-process watchers
(read-only, as an informer's). Bodies passed to writes are copied at the boundary, unless the caller hands
the body over (`handover`); what a write returns is a copy too, unless the client was made
with `shared_results` for kjobs' own components.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson

from kjobs.api.errors import bad_request, raise_failure_status
from kjobs.api.selectors import parse_field_selector, parse_label_selector
from kjobs.api.types import Obj
from kjobs.client.base import PATCH_CONTENT_TYPES, WatchEvent
from kjobs.client.resources import ResourceRef
from kjobs.server.registry import Resource, lookup
from kjobs.server.service import ApiService, DeleteOptions
from kjobs.store.watch import Watch


def _copy(obj: Obj) -> Obj:
    result: Obj = orjson.loads(orjson.dumps(obj))
    return result


def _same(obj: Obj) -> Obj:
    return obj


class LocalClient:
    """A client bound to an in-process `ApiService`.

    `typed` (the default) is for kjobs' own components, whose bodies are built by code that knows the API's
    fields: the server skips its unknown-field walk, as Kubernetes does for protobuf. Objects from outside
    (a user's manifest) go through a client with `typed=False`, checked like any JSON request.

    `shared_results` is for the same components: a write returns the stored object itself, the one its watchers
    share, so it is read-only like an informer's objects (the cache mutation detector checks that). Otherwise
    a write returns a private copy the caller may change, as over HTTP.

    A write's `Warning` headers have nowhere to go (the methods return the object alone), so the server is asked
    not to compute the object's warnings (`ApiService.create`'s `warn`): a pod create's cost about 10 µs."""

    warn = False
    """Whether writes have the server compute the objects' warnings, which these methods drop (True: as before,
    for tests/client/test_local_warnings.py's comparison)."""

    def __init__(
        self, service: ApiService, *, manager: str = "kjobs", typed: bool = True, shared_results: bool = False
    ) -> None:
        self.service = service
        self.completes_inline = service.store.store.writes_inline
        self.records_events = service.record_events
        """False: this cluster's components write no Events (`ClusterSettings.events`, for `kjobs simulate`)."""
        self._manager = manager
        self._typed = typed
        self._own = _copy if not shared_results else _same

    def _resource(self, ref: ResourceRef) -> Resource:
        resource = lookup(ref.group, ref.version, ref.plural)
        if resource is None:
            raise bad_request(f"the server could not find the requested resource ({ref.plural})")
        return resource

    async def close(self) -> None:
        """Nothing to release."""

    async def get(self, resource: ResourceRef, namespace: str | None, name: str) -> Obj:
        """GET one object."""
        return self.service.get(self._resource(resource), namespace or "", name)

    async def list(
        self,
        resource: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> tuple[list[Obj], str]:
        """LIST."""
        items, revision = self.service.list(
            self._resource(resource),
            namespace,
            parse_label_selector(label_selector),
            parse_field_selector(field_selector),
        )
        return items, str(revision)

    async def watch(
        self,
        resource: ResourceRef,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
    ) -> AsyncIterator[WatchEvent]:
        """Stream the store's events after `resource_version`."""
        stream = LocalClient.watch_stream(
            self,
            resource,
            namespace,
            resource_version=resource_version,
            label_selector=label_selector,
            field_selector=field_selector,
        )
        try:
            async for event in stream:
                yield WatchEvent(str(event.type), event.object)
        finally:
            stream.close()

    plain_watch = watch
    """`watch` as this class defines it: an informer reads `watch_stream` instead only while a subclass has not
    replaced `watch` (`kjobs.client.informer`)."""

    def watch_stream(
        self,
        resource: ResourceRef,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Watch:
        """`watch`'s stream itself: the store's events (their `type` an `EventType`, equal to `watch`'s strings;
        their `object` the same shared dict), to be closed by the caller. For `Informer`, which reads each
        event's `type` and `object` only."""
        r = self._resource(resource)
        since = int(resource_version) if resource_version else None
        return self.service.store.watch(  # through `Storage`: a view's events come converted
            r.store_key,
            namespace,
            since=since,
            label_selector=parse_label_selector(label_selector),
            field_selector=parse_field_selector(field_selector),
        )

    async def create(self, resource: ResourceRef, namespace: str | None, obj: Obj, *, handover: bool = False) -> Obj:
        """POST (a body handed over is not copied: see `Client.create`)."""
        body = obj if handover else _copy(obj)
        result = await self.service.create(
            self._resource(resource), namespace or "", body, manager=self._manager, typed=self._typed, warn=self.warn
        )
        return self._own(result.obj)

    async def update(
        self,
        resource: ResourceRef,
        namespace: str | None,
        obj: Obj,
        *,
        subresource: str | None = None,
        handover: bool = False,
    ) -> Obj:
        """PUT (a body handed over is not copied: see `Client.create`)."""
        result = await self.service.update(
            self._resource(resource),
            namespace or "",
            str(obj["metadata"]["name"]),
            obj if handover else _copy(obj),
            subresource=subresource or "",
            manager=self._manager,
            typed=self._typed,
            warn=self.warn,
        )
        return self._own(result.obj)

    async def patch(
        self,
        resource: ResourceRef,
        namespace: str | None,
        name: str,
        patch: Any,
        *,
        patch_type: str = "strategic",
        subresource: str | None = None,
        handover: bool = False,
        discard: bool = False,
    ) -> Obj:
        """PATCH (a body handed over is not copied; a result discarded is not copied either: see `Client.patch`)."""
        if not handover:
            patch = _copy(patch) if isinstance(patch, dict) else orjson.loads(orjson.dumps(patch))
        result = await self.service.patch(
            self._resource(resource),
            namespace or "",
            name,
            PATCH_CONTENT_TYPES[patch_type],
            patch,
            subresource=subresource or "",
            manager=self._manager,
            typed=self._typed,
            warn=self.warn,
        )
        return {} if discard else self._own(result.obj)

    async def delete(
        self,
        resource: ResourceRef,
        namespace: str | None,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
        preconditions: Obj | None = None,
        known: Obj | None = None,
    ) -> Obj:
        """DELETE (`known`: see `Client.delete`)."""
        pre = preconditions or {}
        options = DeleteOptions(grace_period_seconds, propagation_policy, pre.get("uid"), pre.get("resourceVersion"))
        result = await self.service.delete(self._resource(resource), namespace or "", name, options, known=known)
        return self._own(result.obj)

    async def post_subresource(
        self,
        resource: ResourceRef,
        namespace: str | None,
        name: str,
        subresource: str,
        body: Obj,
        *,
        handover: bool = False,
    ) -> Obj:
        """POST to `eviction` or `binding` (a body handed over is not copied)."""
        if resource.plural != "pods" or subresource not in ("eviction", "binding"):
            raise bad_request(f"the server does not allow this method on the requested resource ({subresource})")
        if not handover:
            body = _copy(body)
        if subresource == "eviction":
            result = await self.service.evict(namespace or "", name, body)
        else:
            result = await self.service.bind(namespace or "", name, body, typed=self._typed)
        raise_failure_status(result.obj)
        return self._own(result.obj)
