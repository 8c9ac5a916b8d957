"""Shared by the ported validation tables of Nodes, PriorityClasses, Leases and Namespaces
(docs/upstream-core-validation.md): a fresh in-process API on virtual time, and a 422's causes as the rows write
them (field, reason, message)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from kjobs.api.errors import ApiError
from kjobs.clock import FakeClock
from tests.support import local_api

Cause = tuple[str, str, str]


def run(scenario: Callable[[Any], Awaitable[None]]) -> None:
    """`scenario(client)` against a fresh API."""

    async def main() -> None:
        await scenario(await local_api(FakeClock()))

    asyncio.run(main())


def causes(exc: ApiError) -> list[Cause]:
    """The causes of a 422 Invalid, as `(field, reason, message)`; anything else fails the test."""
    assert exc.code == 422 and exc.reason == "Invalid", exc.message
    return [(c["field"], c["reason"], c["message"]) for c in (exc.details or {}).get("causes") or []]
