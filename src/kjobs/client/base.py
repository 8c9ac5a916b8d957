"""The client seam (see the package note)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from kjobs.api.types import Obj
from kjobs.client.resources import ResourceRef


@dataclass(slots=True)
class WatchEvent:
    """One watch event: ADDED, MODIFIED, DELETED, BOOKMARK (or ERROR with a Status as object).

    Read-only by convention, not `frozen` (a frozen dataclass's `__init__` costs several times more, and one is
    built for every event every watcher sees)."""

    type: str
    object: Obj


class Client(Protocol):
    """Kubernetes API operations; every failure is an ApiError carrying the server's Status."""

    completes_inline: bool
    """Whether a write completes without suspending its caller (an in-process API over a memory store): then
    issuing writes concurrently gains nothing, and awaiting them in turn saves the event-loop turns between."""

    async def get(self, resource: ResourceRef, namespace: str | None, name: str) -> Obj:
        """GET one object."""

    async def list(
        self,
        resource: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> tuple[list[Obj], str]:
        """LIST objects; returns the items and the list's resourceVersion."""

    def watch(
        self,
        resource: ResourceRef,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
    ) -> AsyncIterator[WatchEvent]:
        """WATCH from a resourceVersion; raises ApiError 410 when it is too old."""

    async def create(self, resource: ResourceRef, namespace: str | None, obj: Obj, *, handover: bool = False) -> Obj:
        """POST a new object.

        `handover`: the caller gives `obj` up, sharing no part of it with anything else and never touching it
        again (a body built for this call): an in-process client passes it on without a copy, and the server
        may complete it in place."""

    async def update(
        self,
        resource: ResourceRef,
        namespace: str | None,
        obj: Obj,
        *,
        subresource: str | None = None,
        handover: bool = False,
    ) -> Obj:
        """PUT an object (compare-and-swap on its resourceVersion), or its `status` subresource (`handover`: as
        for `create`)."""

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
        """PATCH (`strategic`, `merge` or `json`).

        `handover`: the caller hands `patch` over, keeping no reference it will change (a body built for this
        call from values it never mutates): an in-process client passes it on without a copy. `discard`: the
        caller does not read the result, which may then be an empty dict (an HTTP client skips decoding the
        response); failures are raised all the same."""

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
        """DELETE; returns the object as it is after the call (or a Status for an immediate removal).

        `known`: the caller's read-only copy of the object (its informer's, left as it is): an in-process client
        reads it instead of the stored object when it is at the stored revision; an HTTP client ignores it."""

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
        """POST to a subresource (`eviction`, `binding`); `handover` as for `patch`."""

    async def close(self) -> None:
        """Release connections."""


PATCH_CONTENT_TYPES = {
    "strategic": "application/strategic-merge-patch+json",
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
}
