"""The virtual-time event loop: asyncio timers and `FakeClock` sleepers fire at exact virtual times, with no wall
time spent waiting, and a loop with nothing left to do says so instead of hanging."""

from __future__ import annotations

import asyncio
import threading
import time
import warnings

import pytest

from kjobs import virtualtime
from kjobs.clock import FakeClock


def test_asyncio_timers_and_clock_sleepers_fire_at_exact_virtual_times() -> None:
    clock = FakeClock()
    start = clock.now()
    fired: list[tuple[str, float]] = []

    async def main() -> None:
        async def loop_sleep() -> None:
            await asyncio.sleep(3600)
            fired.append(("asyncio.sleep", clock.now() - start))

        async def clock_sleep() -> None:
            await clock.sleep(10)
            fired.append(("clock.sleep", clock.now() - start))
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(asyncio.Event().wait(), 5)
            fired.append(("wait_for", clock.now() - start))

        asyncio.get_running_loop().call_later(0.25, lambda: fired.append(("call_later", clock.now() - start)))
        await asyncio.gather(loop_sleep(), clock_sleep())

    wall = time.perf_counter()
    virtualtime.run(main(), clock)
    assert fired == [("call_later", 0.25), ("clock.sleep", 10.0), ("wait_for", 15.0), ("asyncio.sleep", 3600.0)]
    assert time.perf_counter() - wall < 10  # an hour of virtual time, not of wall time (a bound for a loaded machine)


def test_time_stands_still_while_anything_can_run() -> None:
    clock = FakeClock()

    async def main() -> float:
        start = clock.now()
        for _ in range(1000):
            await asyncio.sleep(0)
        return clock.now() - start

    assert virtualtime.run(main(), clock) == 0.0


def test_a_loop_with_no_runnable_task_and_no_timer_raises_instead_of_hanging() -> None:
    async def main() -> None:
        await asyncio.Event().wait()

    with pytest.raises(virtualtime.VirtualTimeStalled):
        virtualtime.run(main())


def test_a_sleep_shorter_than_the_float_spacing_of_epoch_seconds_still_moves_time() -> None:
    clock = FakeClock()

    async def main() -> float:
        start = clock.now()
        await clock.sleep(1e-9)
        return clock.now() - start

    assert virtualtime.run(main(), clock) > 0


def test_a_gated_loop_moves_time_only_when_its_gate_allows() -> None:
    allowed = False
    clock = FakeClock()
    start = clock.now()

    async def main() -> None:
        nonlocal allowed
        timer = asyncio.ensure_future(asyncio.sleep(60))
        # idle and gated: the loop waits for real I/O (here another thread's result) and time stands still
        await asyncio.get_running_loop().run_in_executor(None, time.sleep, 2 * virtualtime.GATED_REAL_WAIT)
        assert clock.now() == start and not timer.done()
        allowed = True
        await timer
        assert clock.now() == start + 60

    with asyncio.Runner(loop_factory=lambda: virtualtime.VirtualTimeLoop(clock, may_advance=lambda: allowed)) as r:
        r.run(main())


def test_the_executor_s_threads_join_in_real_time_with_the_clock_standing_still() -> None:
    """A job still running in the default executor when `main` returns: closing the loop waits for it in real
    time. Python 3.12+ would otherwise time the join out on the virtual clock (a RuntimeWarning, an error where
    warnings are errors) and 3.11 would stop with `VirtualTimeStalled`."""
    clock = FakeClock()
    start = clock.now()
    release = threading.Event()
    finished = threading.Event()

    def job() -> None:
        assert release.wait(30)
        finished.set()

    async def main() -> None:
        asyncio.get_running_loop().run_in_executor(None, job)  # not awaited: still running when main returns
        threading.Timer(0.2, release.set).start()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        virtualtime.run(main(), clock)
    assert finished.is_set()
    assert clock.now() == start
