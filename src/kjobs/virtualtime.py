"""An asyncio event loop on virtual time: the clock jumps to the next due timer whenever nothing can run.

`VirtualTimeLoop` reads its `time()` from a `kjobs.clock.FakeClock`, so `asyncio.sleep`, `loop.call_later`,
`asyncio.wait_for` timeouts and every `FakeClock.sleep` wait on the same virtual time. When its ready queue is
empty (every task waits for a timer, or for a future only a timer would complete), the loop's poll does not
block: it sets the clock to the earliest of its own scheduled handles and the clock's sleepers, and those fire
at exactly their due time. So a simulated hour of back-off and container run time costs only the CPU of the
work done in it.

This is Kubernetes' `k8s.io/utils/clock/testing` FakeClock (fake_clock.go: waiters fire as the clock passes them)
with an idle driver that moves the clock itself, as the `looptime` plugin does for asyncio tests. Real
I/O is polled, never waited for: sockets, subprocesses and threads (SQLite writer, store watch threads) have no
place in virtual time; use the memory store and the simulated runtime (`kjobs.node.sim_runtime`).
"""

from __future__ import annotations

import asyncio
import selectors
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from kjobs.clock import FakeClock

T = TypeVar("T")

GATED_REAL_WAIT = 0.05
"""Real seconds a gated loop (`may_advance` said no) waits for I/O before it asks the gate again."""


class VirtualTimeStalled(RuntimeError):
    """Nothing can run and no timer is due: without real I/O, nothing will ever happen again."""


class _IdleSelector(selectors.DefaultSelector):
    """A selector whose blocking poll advances virtual time instead of waiting."""

    def __init__(self) -> None:
        super().__init__()
        self.loop: VirtualTimeLoop | None = None

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready: list[tuple[selectors.SelectorKey, int]] = super().select(0)
        loop = self.loop
        if ready or timeout == 0 or loop is None:
            return ready
        if loop.joining_executor:  # threads end in real time: wait for their wake-up, the clock stands still
            late_join: list[tuple[selectors.SelectorKey, int]] = super().select(GATED_REAL_WAIT)
            return late_join
        if loop.may_advance is None:
            loop.advance_to_next()
            return []
        if loop.may_advance() and loop.next_due() is not None:
            loop.advance_to_next()
            return []
        # time may not move now: wait for real I/O (a socket, or a wake-up from another thread), as a real loop
        late: list[tuple[selectors.SelectorKey, int]] = super().select(GATED_REAL_WAIT)
        return late


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose time is `clock`'s and which never waits in real time.

    With `may_advance`, the clock moves only when nothing can run AND `may_advance()` is true; otherwise the
    loop waits for real I/O as an ordinary loop does (an embedded cluster served to another thread's blocking
    client: `kjobs.testing.virtual.TimeGate`). Without it, nothing to run always means "jump"."""

    def __init__(self, clock: FakeClock | None = None, may_advance: Callable[[], bool] | None = None) -> None:
        selector = _IdleSelector()
        super().__init__(selector)
        selector.loop = self
        self.clock = clock or FakeClock()
        self.may_advance = may_advance
        # Virtual times are epoch seconds (~1.8e9), whose float spacing is ~2.4e-7 s: a handle due at `t` must
        # count as due when the clock reads exactly `t` (asyncio compares against time() + resolution).
        self._clock_resolution = 1e-6
        self.jumps = 0
        """How many times the clock jumped forward (a measure of the simulation's timer traffic)."""
        self.joining_executor = False
        """Whether `shutdown_default_executor` is waiting for the executor's threads (real time, see there)."""
        self.settle: Callable[[], bool] | None = None
        """Asked before a jump when only periodic loops wait (`FakeClock.tick`: heartbeats, resyncs) and no
        event (`FakeClock.sleep`, a handle of this loop) is due: true means nothing will ever change, and the
        callback has made something ready to end the run (the clock does not move). `kjobs.simulate.session`."""

    async def shutdown_default_executor(self, timeout: float | None = None) -> None:
        """Join the default executor's threads with the clock standing still.

        Since Python 3.12, `asyncio.Runner.close` (and `asyncio.run`) give the join a 300 s timeout on the loop's
        clock: here a virtual one, which an idle loop would jump past at once, so the join "timed out" with a
        RuntimeWarning ("The executor did not finishing joining its threads within 300 seconds") that a project
        running its tests with `filterwarnings = error` sees fail; and on 3.11, an ungated loop with no timer
        left would stop with `VirtualTimeStalled` instead of waiting for the threads."""
        self.joining_executor = True
        try:
            if sys.version_info >= (3, 12):
                await super().shutdown_default_executor(timeout)
            else:
                await super().shutdown_default_executor()
        finally:
            self.joining_executor = False

    def time(self) -> float:
        """The virtual clock's now (also asyncio's timer base)."""
        return self.clock.now()

    def next_due(self) -> float | None:
        """The earliest virtual time anything waits for: this loop's scheduled handles or the clock's sleepers."""
        candidates = []
        scheduled: list[asyncio.TimerHandle] = self._scheduled  # type: ignore[attr-defined]
        if scheduled:  # asyncio prunes cancelled handles from the heap's head before it polls
            head = scheduled[0]
            candidates.append(head.when() if not head.cancelled() else min(h.when() for h in scheduled))
        sleeper = self.clock.next_deadline()
        if sleeper is not None:
            candidates.append(sleeper)
        return min(candidates) if candidates else None

    def _no_handle(self) -> bool:
        """Whether no `call_later`/`call_at` handle of this loop (`asyncio.sleep`, a timeout) is pending."""
        scheduled: list[asyncio.TimerHandle] = self._scheduled  # type: ignore[attr-defined]
        return all(handle.cancelled() for handle in scheduled)

    def advance_to_next(self) -> None:
        """Jump the clock to the next due time (waking the clock's sleepers); raise when nothing is due."""
        if self.settle is not None and self.clock.next_event() is None and self._no_handle() and self.settle():
            return
        due = self.next_due()
        if due is None:
            raise VirtualTimeStalled("virtual time stalled: no task can run and no timer is due")
        if due > self.clock.now():
            self.jumps += 1
        self.clock.set(due)


def run(main: Coroutine[Any, Any, T], clock: FakeClock | None = None) -> T:
    """Run `main` to completion on a fresh `VirtualTimeLoop` (as `asyncio.run` does on a real one)."""
    with asyncio.Runner(loop_factory=lambda: VirtualTimeLoop(clock)) as runner:
        return runner.run(main)
