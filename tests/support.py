"""Test support: an in-process cluster API on virtual time, and a way to let controllers settle."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from kjobs.client.local import LocalClient
from kjobs.clock import FakeClock
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore


async def local_api(clock: FakeClock) -> LocalClient:
    """A LocalClient over a fresh in-memory API service with the standard namespaces."""
    service = ApiService(Storage(MemoryStore()), clock=clock.now)
    await service.ensure_namespaces()
    return LocalClient(service)


async def settle(clock: FakeClock, until: Callable[[], bool], *, max_virtual: float = 3600.0) -> None:
    """Run the event loop until `until()` holds, advancing virtual time only when nothing else can happen.

    Raises AssertionError when virtual time runs past `max_virtual` seconds without the condition holding.
    """
    start = clock.now()
    while True:
        for _ in range(200):
            if until():
                return
            await asyncio.sleep(0)
        deadline = clock.next_deadline()
        if deadline is None or deadline - start > max_virtual:
            raise AssertionError(f"condition not reached within {max_virtual}s of virtual time")
        clock.set(deadline)
