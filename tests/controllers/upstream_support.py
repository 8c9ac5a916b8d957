"""Test support for the ported upstream component tables (docs/upstream-components.md).

Upstream's unit tests drive a controller against client-go's fake clientset and read back the actions it
recorded (`client.Actions()`: verb, resource, name). `Recording` is that for kjobs: a real in-process API on
virtual time, with each write a component makes noted before it is passed on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kjobs.api.types import Obj
from kjobs.client.resources import ResourceRef


@dataclass(frozen=True)
class Action:
    """One write: `verb` (create, update, patch, delete, post), resource plural, name, subresource, details."""

    verb: str
    resource: str
    name: str
    subresource: str | None = None
    body: Any = None
    options: dict[str, Any] = field(default_factory=dict)


class Recording:
    """A client that records the writes made through it (as the fake clientset's `Actions()`), then makes them."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.actions: list[Action] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def clear(self) -> None:
        """`ClearActions()`."""
        self.actions.clear()

    def names(self, verb: str, resource: str = "pods") -> set[str]:
        """Names of the objects a `verb` was sent for (`getDeletedPodNames`, `getPatchedPodNames`)."""
        return {a.name for a in self.actions if a.verb == verb and a.resource == resource}

    def of(self, verb: str, resource: str = "pods") -> list[Action]:
        """The recorded actions of one verb on one resource, in order."""
        return [a for a in self.actions if a.verb == verb and a.resource == resource]

    async def create(self, resource: ResourceRef, namespace: str | None, obj: Obj, **kw: Any) -> Obj:
        self.actions.append(Action("create", resource.plural, str((obj.get("metadata") or {}).get("name")), None, obj))
        result: Obj = await self.client.create(resource, namespace, obj, **kw)
        return result

    async def update(
        self, resource: ResourceRef, namespace: str | None, obj: Obj, *, subresource: str | None = None, **kw: Any
    ) -> Obj:
        name = str((obj.get("metadata") or {}).get("name"))
        self.actions.append(Action("update", resource.plural, name, subresource, obj))
        result: Obj = await self.client.update(resource, namespace, obj, subresource=subresource, **kw)
        return result

    async def patch(
        self,
        resource: ResourceRef,
        namespace: str | None,
        name: str,
        patch: Any,
        *,
        subresource: str | None = None,
        **kw: Any,
    ) -> Obj:
        self.actions.append(Action("patch", resource.plural, name, subresource, patch, dict(kw)))
        result: Obj = await self.client.patch(resource, namespace, name, patch, subresource=subresource, **kw)
        return result

    async def delete(self, resource: ResourceRef, namespace: str | None, name: str, **kw: Any) -> Obj:
        self.actions.append(Action("delete", resource.plural, name, None, None, dict(kw)))
        result: Obj = await self.client.delete(resource, namespace, name, **kw)
        return result

    async def post_subresource(
        self, resource: ResourceRef, namespace: str | None, name: str, subresource: str, body: Obj, **kw: Any
    ) -> Obj:
        self.actions.append(Action("post", resource.plural, name, subresource, body))
        result: Obj = await self.client.post_subresource(resource, namespace, name, subresource, body, **kw)
        return result


async def run_for(clock: Any, seconds: float) -> None:
    """Let the event loop run while virtual time moves `seconds` on, stopping at every sleeper's deadline on the
    way (as `tests.support.settle`, for rows that assert what did not happen by some time)."""
    import asyncio

    end = clock.now() + seconds
    while True:
        for _ in range(200):
            await asyncio.sleep(0)
        deadline = clock.next_deadline()
        if deadline is None or deadline > end:
            clock.set(end)
            for _ in range(200):
                await asyncio.sleep(0)
            return
        clock.set(deadline)


async def poll_until(clock: Any, probe: Any, *, window: float, what: str = "the condition") -> Any:
    """Upstream's `wait.PollUntilContextTimeout(..., window, ...)` on virtual time: `await probe()` (a read
    through the API, returning a falsy value until done) after the event loop has run, then again at each
    sleeper's deadline, until it returns something truthy; AssertionError once `window` virtual seconds pass."""
    import asyncio

    end = clock.now() + window
    while True:
        for _ in range(100):
            await asyncio.sleep(0)
        result = await probe()
        if result:
            return result
        deadline = clock.next_deadline()
        assert deadline is not None and deadline <= end, f"{what} not reached within {window}s"
        clock.set(deadline)
