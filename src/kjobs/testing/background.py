"""An asyncio event loop in a daemon thread, for synchronous callers (pytest tests) of an async cluster.

A test calls the official `kubernetes` client, which blocks; the cluster's components are coroutines. They
cannot share one thread, so the cluster lives on this loop and the test hands it work with `run()`
(`asyncio.run_coroutine_threadsafe`), which waits for the result with a bound.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Background:
    """One event loop (default: uvloop, as `kjobs up`; a test cluster on virtual time passes its
    `VirtualTimeLoop`) running in its own daemon thread until `close()`."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None, name: str = "kjobs-cluster") -> None:
        if loop is None:
            import uvloop

            loop = uvloop.new_event_loop()
        self.loop: asyncio.AbstractEventLoop = loop
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = 60.0) -> T:
        """Run `coro` on the loop and return its result; on timeout the coroutine is cancelled."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    def close(self) -> None:
        """Stop the loop (tasks still pending are cancelled first) and join the thread."""
        if self.loop.is_closed():
            return

        async def cancel_rest() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            self.run(cancel_rest(), timeout=10.0)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10.0)
            self.loop.close()
