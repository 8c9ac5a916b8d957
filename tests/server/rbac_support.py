"""An RBAC authorizer over a store holding only RBAC's bootstrap policy, for tests of authorization rules."""

from __future__ import annotations

import asyncio
import functools

from kjobs.clock import FakeClock
from kjobs.server.rbac import RbacAuthorizer
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore


async def bootstrapped_service() -> ApiService:
    """An API service over a fresh in-memory store, with the standard namespaces and RBAC's bootstrap policy."""
    service = ApiService(Storage(MemoryStore()), clock=FakeClock().now)
    await service.ensure_namespaces()
    await service.ensure_rbac_bootstrap()
    return service


@functools.cache
def bootstrap_rbac() -> RbacAuthorizer:
    """One shared authorizer over the bootstrap policy (read-only: tests must not write to its store)."""
    return asyncio.run(bootstrapped_service()).rbac
