"""A de-duplicating, delaying, rate-limited work queue (client-go's workqueue, on an injected clock).

A key is queued at most once; a key being processed that is added again is queued once more after `done`, so
one Job is never reconciled concurrently and a burst of pod events becomes one sync. `add_after` delays (the
Job controller's 1 s batching, back-off requeues, deadlines); `add_rate_limited` retries failed keys with
per-key exponential back-off (1 s doubling to 60 s, Kubernetes' Job API back-off), `forget` resets it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from kjobs.clock import Clock, tick

K = TypeVar("K", bound=Hashable)
log = logging.getLogger(__name__)


class WorkQueue(Generic[K]):
    """Keys to reconcile; `get` waits for one, `done` releases it."""

    def __init__(self, *, clock: Clock, base_delay: float = 1.0, max_delay: float = 60.0) -> None:
        self._clock = clock
        self._queue: deque[K] = deque()
        self._queued: set[K] = set()
        self._processing: set[K] = set()
        self._dirty: set[K] = set()
        self._failures: dict[K, int] = {}
        self._waiting: dict[K, float] = {}
        self._timers: dict[K, asyncio.Task[None]] = {}
        self._base, self._max = base_delay, max_delay
        self._ready = asyncio.Event()
        self._shut = False

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: K) -> None:
        """Queue `key` now (no-op if already queued; re-queued after `done` if being processed)."""
        if self._shut:
            return
        if key in self._processing:
            self._dirty.add(key)
            return
        if key in self._queued:
            return
        self._queued.add(key)
        self._queue.append(key)
        self._ready.set()

    def add_after(self, key: K, delay: float, *, periodic: bool = False) -> None:
        """Queue `key` once `delay` seconds of the clock have passed; an earlier pending add wins. `periodic`:
        a resync's wait, which a simulation does not count as something due (`kjobs.clock.tick`)."""
        if delay <= 0:
            self.add(key)
            return
        due = self._clock.now() + delay
        current = self._waiting.get(key)
        if current is not None and current <= due:
            return
        self._waiting[key] = due
        old = self._timers.pop(key, None)
        if old is not None:
            old.cancel()
        self._timers[key] = asyncio.get_running_loop().create_task(self._fire(key, delay, due, periodic))

    async def _fire(self, key: K, delay: float, due: float, periodic: bool) -> None:
        await (tick(self._clock, delay) if periodic else self._clock.sleep(delay))
        if self._waiting.get(key) == due:
            del self._waiting[key]
            self._timers.pop(key, None)
            self.add(key)

    def add_rate_limited(self, key: K) -> None:
        """Retry `key` after its per-key exponential back-off."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        self.add_after(key, min(self._base * (2**failures), self._max))

    def forget(self, key: K) -> None:
        """The key succeeded: reset its back-off."""
        self._failures.pop(key, None)

    def pending_delayed(self) -> int:
        """How many keys wait on a timer (for idleness checks)."""
        return len(self._waiting)

    async def get(self) -> K | None:
        """The next key (None once shut down); mark it processing until `done`."""
        while not self._queue:
            if self._shut:
                return None
            self._ready.clear()
            await self._ready.wait()
        key = self._queue.popleft()
        self._queued.discard(key)
        self._processing.add(key)
        return key

    def done(self, key: K) -> None:
        """Processing of `key` finished; re-queue it if it was added meanwhile."""
        self._processing.discard(key)
        if key in self._dirty:
            self._dirty.discard(key)
            self.add(key)

    def idle(self) -> bool:
        """Nothing queued or being processed (timers may still be pending)."""
        return not self._queue and not self._processing

    def shutdown(self) -> None:
        """Stop handing out keys and cancel timers."""
        self._shut = True
        for task in self._timers.values():
            task.cancel()
        self._timers.clear()
        self._ready.set()


class WorkerPool(Generic[K]):
    """`workers` tasks draining a `WorkQueue` into `handle`: success forgets the key's back-off, an exception
    is logged and retried with it. Every controller's worker loop, in one place."""

    def __init__(
        self,
        queue: WorkQueue[K],
        handle: Callable[[K], Awaitable[None]],
        *,
        name: str,
        workers: int,
    ) -> None:
        self.queue = queue
        self._handle = handle
        self._name = name
        self._count = workers
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        """Start the workers on the running loop."""
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._work(), name=f"{self._name}-{i}") for i in range(self._count)]

    async def stop(self) -> None:
        """Shut the queue down and wait for the workers to end."""
        self.queue.shutdown()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    async def _work(self) -> None:
        while True:
            key = await self.queue.get()
            if key is None:
                return
            try:
                await self._handle(key)
                self.queue.forget(key)
            except Exception as exc:
                log.info("%s: %r failed, will retry: %s", self._name, key, exc)
                self.queue.add_rate_limited(key)
            finally:
                self.queue.done(key)
