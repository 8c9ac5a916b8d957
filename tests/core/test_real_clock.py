"""`RealClock.sleep` against a wall clock that trails asyncio's monotonic clock: the caller that compares `now()`
with the deadline it slept towards finds it reached (the agent's ConfigMap retry hung when it did not), and a
wall clock stepped far back does not hold a sleeper for long."""

from __future__ import annotations

import asyncio
import time
import types

import pytest

from kjobs import clock as clock_module
from kjobs.clock import RealClock, ScaledClock


def _lagging_wall_clock(monkeypatch: pytest.MonkeyPatch, lag: float) -> types.SimpleNamespace:
    """A `time` module for kjobs.clock whose `time()` falls `lag` seconds behind 10 ms from now (a sleep of
    50 ms that begins at once is under way then)."""
    step = time.monotonic() + 0.01

    def wall() -> float:
        return time.time() - (lag if time.monotonic() >= step else 0.0)

    fake = types.SimpleNamespace(time=wall)
    monkeypatch.setattr(clock_module, "time", fake)
    return fake


def test_a_sleep_ends_once_the_wall_clock_has_reached_its_target(monkeypatch: pytest.MonkeyPatch) -> None:
    wall = _lagging_wall_clock(monkeypatch, lag=0.03)
    clock = RealClock()

    async def sleep_and_read() -> tuple[float, float]:
        start = clock.now()
        await clock.sleep(0.05)
        return start, wall.time()

    start, after = asyncio.run(sleep_and_read())
    assert after >= start + 0.05


def test_a_wall_clock_stepped_far_back_adds_at_most_the_sleep_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    _lagging_wall_clock(monkeypatch, lag=3600.0)
    began = time.monotonic()
    asyncio.run(RealClock().sleep(0.05))
    assert time.monotonic() - began < 1.0


def test_a_scaled_clock_runs_rate_times_faster_and_sleeps_its_own_seconds() -> None:
    """`kjobs up --cronjob-clock-rate 60`: a minute of the CronJob controller's time passes in a second."""
    clock = ScaledClock(60.0)

    async def sleep_a_minute() -> tuple[float, float, float]:
        began, start = time.monotonic(), clock.now()
        await clock.sleep(60.0)
        return start, clock.now(), time.monotonic() - began

    start, after, wall = asyncio.run(sleep_a_minute())
    assert after >= start + 60.0
    assert 0.9 <= wall < 3.0
    assert ScaledClock(1.0).now() == pytest.approx(time.time(), abs=0.5)
    with pytest.raises(ValueError):
        ScaledClock(0.0)
