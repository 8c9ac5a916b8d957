"""Time, injected: every component that waits or stamps reads a `Clock` it was given.

`RealClock` is wall time. `FakeClock` is virtual time that only moves when a test (or the simulator) advances
it; sleepers wake in deadline order as it passes them, so back-off, deadlines, TTLs, pod GC and stale
conditions are tested without sleeping. `kjobs.virtualtime.VirtualTimeLoop` moves it by itself whenever nothing
else can run.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import time
from typing import Protocol


class Clock(Protocol):
    """Now, and a way to wait until later."""

    def now(self) -> float:
        """Seconds since the Unix epoch."""

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` of this clock's time."""


class RealClock:
    """Wall-clock time."""

    def now(self) -> float:
        """time.time()."""
        return time.time()

    async def sleep(self, seconds: float) -> None:
        """asyncio.sleep, until `now()` has passed the target as well: asyncio times its sleeps on the monotonic
        clock, which the wall clock trails (it runs a little slower, and can be stepped back), and a timer of a
        busy loop fires microseconds after its monotonic deadline. Callers compare `now()` with a deadline they
        slept towards (a retry `add_after` scheduled); one that woke a hair early would find nothing due. A wall
        clock stepped back further than `seconds` costs at most `seconds` more."""
        target = time.time() + seconds
        await asyncio.sleep(max(0.0, seconds))
        left = target - time.time()
        if left > 0:
            await asyncio.sleep(min(left, seconds))


class FakeClock:
    """Virtual time for tests and simulation: `advance`/`set` move it and wake the sleepers it passes."""

    def __init__(self, start: float = 1_767_225_600.0) -> None:  # 2026-01-01T00:00:00Z
        self._now = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._ticks: list[tuple[float, int, asyncio.Future[None]]] = []
        """`tick` sleepers: periodic housekeeping, apart so that `next_event` need not look at them."""
        self._seq = itertools.count()

    def now(self) -> float:
        """The virtual now."""
        return self._now

    async def sleep(self, seconds: float) -> None:
        """Wait until the virtual clock reaches now + seconds."""
        await self._wait(self._sleepers, seconds)

    async def tick(self, seconds: float) -> None:
        """`sleep`, for a periodic loop's wait (heartbeats, resyncs): the same wake-up, but not an `event`, so a
        simulation can tell an idle cluster from one with something due (`kjobs.simulate.session`)."""
        await self._wait(self._ticks, seconds)

    async def _wait(self, heap: list[tuple[float, int, asyncio.Future[None]]], seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # A positive sleep ends strictly later, even one shorter than the float spacing of epoch seconds
        # (~2.4e-7 s): a caller waiting in a loop for time to pass then never wakes at the same instant forever.
        deadline = max(self._now + seconds, math.nextafter(self._now, math.inf))
        heapq.heappush(heap, (deadline, next(self._seq), fut))
        await fut

    def next_deadline(self) -> float | None:
        """The earliest time a sleeper (`sleep` or `tick`) waits for (None when nobody sleeps)."""
        event, tick = self.next_event(), _head(self._ticks)
        if event is None or tick is None:
            return tick if event is None else event
        return min(event, tick)

    def next_event(self) -> float | None:
        """The earliest time a `sleep` (not a `tick`) waits for: None when only periodic loops wait."""
        return _head(self._sleepers)

    def advance(self, seconds: float) -> None:
        """Move time forward and wake every sleeper whose deadline passed."""
        self.set(self._now + seconds)

    def set(self, moment: float) -> None:
        """Jump to `moment` (never backwards)."""
        self._now = max(self._now, moment)
        sleepers, ticks = self._sleepers, self._ticks
        if not ticks or ticks[0][0] > self._now:  # the common case: no periodic loop due, one heap to pop
            while sleepers and sleepers[0][0] <= self._now:
                _, _, fut = heapq.heappop(sleepers)
                if not fut.done():
                    fut.set_result(None)
            return
        due = []
        for heap in (sleepers, ticks):
            while heap and heap[0][0] <= self._now:
                due.append(heapq.heappop(heap))
        for _, _, fut in sorted(due, key=lambda entry: entry[:2]):  # in (deadline, order of sleeping) as one heap
            if not fut.done():
                fut.set_result(None)


def _head(heap: list[tuple[float, int, asyncio.Future[None]]]) -> float | None:
    """The earliest live deadline of `heap` (dropping the cancelled ones at its head)."""
    while heap and heap[0][2].done():
        heapq.heappop(heap)
    return heap[0][0] if heap else None


async def tick(clock: Clock, seconds: float) -> None:
    """A periodic loop's wait on any clock: `FakeClock.tick` on virtual time, else `sleep`."""
    if isinstance(clock, FakeClock):
        await clock.tick(seconds)
    else:
        await clock.sleep(seconds)


class ScaledClock:
    """Wall time running `rate` times faster from `origin` (default: when it is made), for a test to see a
    minute-granularity schedule (a CronJob's) fire every second of wall time (`kjobs up --cronjob-clock-rate`).
    At rate 1 it reads as `RealClock`."""

    def __init__(self, rate: float, origin: float | None = None) -> None:
        if rate <= 0:
            raise ValueError("a clock's rate must be positive")
        self.rate = rate
        self.origin = time.time() if origin is None else origin

    def now(self) -> float:
        """`origin` plus the wall time since, times `rate`."""
        return self.origin + (time.time() - self.origin) * self.rate

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` of this clock's time (`seconds / rate` of wall time), until `now()` has passed the
        target, as `RealClock.sleep` makes sure of."""
        target = self.now() + seconds
        await asyncio.sleep(max(0.0, seconds) / self.rate)
        left = target - self.now()
        if left > 0:
            await asyncio.sleep(min(left, max(seconds, 0.0)) / self.rate)
