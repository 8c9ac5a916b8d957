"""Events expire `--event-ttl` after their last write (kube-apiserver's etcd lease, `kjobs.server.eventttl`), on
virtual time: a server left running keeps an hour of Events, not every Event it was ever sent."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kjobs.api.timeutil import format_time
from kjobs.cli.up import up
from kjobs.clock import FakeClock
from kjobs.server.app import create_app
from kjobs.server.eventttl import EventExpiry
from kjobs.store import MemoryStore, SqliteStore
from kjobs.store.base import Store
from kjobs.store.events import EventType
from tests.cli.up_support import assembled_with

TTL = 3600.0
PERIOD = 10.0


def event(name: str, at: float, namespace: str = "soak") -> dict[str, Any]:
    """A core Event as a recorder writes it at `at`."""
    stamp = format_time(at)
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": stamp},
        "involvedObject": {"kind": "Job", "namespace": namespace, "name": name.split(".")[0]},
        "reason": "SuccessfulCreate",
        "message": "Created pod",
        "type": "Normal",
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }


def names(store: Store) -> set[str]:
    return {path.partition("/")[2] for path, _ in store.revisions("events")}


def sweeping(store: Store, clock: FakeClock) -> EventExpiry:
    return EventExpiry(store, clock.now, ttl=TTL, period=PERIOD)


def test_an_event_goes_one_ttl_after_its_last_write_and_a_write_renews_it() -> None:
    store, clock = MemoryStore(), FakeClock()
    expiry = sweeping(store, clock)
    start = clock.now()
    store.create("events", "soak", "a.1", event("a.1", start))
    store.create("events", "soak", "b.1", event("b.1", start))
    gone_at: dict[str, float] = {}

    async def run() -> None:
        while clock.now() < start + 2 * TTL:
            if clock.now() == start + 1800:  # a recorder counts a repeat of b.1: its lease starts again
                renewed = store.get("events", "soak", "b.1")
                renewed["count"] = 2
                store.update("events", "soak", "b.1", renewed)
            before = names(store)
            await expiry.sweep()
            for name in before - names(store):
                gone_at[name] = clock.now() - start
            clock.advance(PERIOD)

    asyncio.run(run())
    assert TTL <= gone_at["a.1"] <= TTL + PERIOD
    assert 1800 + TTL <= gone_at["b.1"] <= 1800 + TTL + PERIOD
    assert expiry.expired == 2


def test_a_steady_stream_of_events_stays_at_one_ttl_of_them() -> None:
    """Six Events a minute for five virtual hours: the store holds at most an hour (and a period) of them."""
    store, clock = MemoryStore(), FakeClock()
    expiry = sweeping(store, clock)
    start, counts = clock.now(), []

    async def run() -> None:
        n = 0
        while clock.now() < start + 5 * TTL:
            store.create("events", "soak", f"e.{n}", event(f"e.{n}", clock.now()))
            n += 1
            await expiry.sweep()
            counts.append(len(store.revisions("events")))
            clock.advance(PERIOD)

    asyncio.run(run())
    assert max(counts) <= (TTL + PERIOD) / PERIOD + 1
    assert counts[-1] >= TTL / PERIOD  # what is younger than the TTL is all still there
    assert len(expiry._marks) <= TTL / PERIOD + 2  # the marks are bounded by the TTL too


def test_watchers_see_an_expired_event_deleted() -> None:
    store, clock = MemoryStore(), FakeClock()
    expiry = sweeping(store, clock)
    store.create("events", "soak", "a.1", event("a.1", clock.now()))
    watch = store.watch("events", "soak", since=store.revision)

    async def run() -> None:
        for _ in range(int(TTL / PERIOD) + 2):
            await expiry.sweep()
            clock.advance(PERIOD)

    asyncio.run(run())
    seen = watch.next(timeout=0)
    assert seen is not None and seen.type == EventType.DELETED and seen.object["metadata"]["name"] == "a.1"


def test_events_stored_before_a_restart_keep_counting_from_their_own_times(tmp_path: Path) -> None:
    """etcd's lease runs on while the server is down: an Event written 50 minutes before the start goes 10
    minutes after it, one from two hours before at the first sweep, a fresh one an hour after."""
    clock = FakeClock()
    start = clock.now()
    path = str(tmp_path / "kjobs.db")
    with SqliteStore(path) as before:
        before.create("events", "soak", "old.1", event("old.1", start - 2 * TTL))
        before.create("events", "soak", "recent.1", event("recent.1", start - 3000))
        before.create("events", "soak", "fresh.1", event("fresh.1", start))
    store = SqliteStore(path)
    try:
        expiry = sweeping(store, clock)

        async def sweep_at(offset: float) -> set[str]:
            clock.set(start + offset)
            await expiry.sweep()
            return names(store)

        assert asyncio.run(sweep_at(PERIOD)) == {"recent.1", "fresh.1"}
        assert asyncio.run(sweep_at(590)) == {"recent.1", "fresh.1"}
        assert asyncio.run(sweep_at(610)) == {"fresh.1"}
        assert asyncio.run(sweep_at(TTL - PERIOD)) == {"fresh.1"}
        assert asyncio.run(sweep_at(TTL + 2 * PERIOD)) == set()
    finally:
        store.close()


def test_an_event_stored_without_any_time_gets_one_ttl_from_the_start() -> None:
    store, clock = MemoryStore(), FakeClock()
    timeless = event("timeless.1", clock.now())
    for field in ("firstTimestamp", "lastTimestamp"):
        del timeless[field]
    del timeless["metadata"]["creationTimestamp"]
    store.create("events", "soak", "timeless.1", timeless)
    expiry = sweeping(store, clock)
    start = clock.now()

    async def sweep_at(offset: float) -> set[str]:
        clock.set(start + offset)
        await expiry.sweep()
        return names(store)

    assert asyncio.run(sweep_at(0)) == {"timeless.1"}
    assert asyncio.run(sweep_at(TTL - PERIOD)) == {"timeless.1"}
    assert asyncio.run(sweep_at(TTL)) == set()


def test_an_event_written_during_a_sweep_is_kept() -> None:
    """A sweep deletes with the revision it saw as a precondition: an Event written in between stays."""
    store, clock = MemoryStore(), FakeClock()
    expiry = sweeping(store, clock)
    store.create("events", "soak", "a.1", event("a.1", clock.now()))
    asyncio.run(expiry.sweep())
    clock.advance(TTL + PERIOD)
    [(namespace, name, revision)] = expiry.due(clock.now())
    renewed = store.get("events", namespace, name)
    renewed["count"] = 2
    store.update("events", namespace, name, renewed)
    assert asyncio.run(expiry._delete(namespace, name, revision)) is False
    assert names(store) == {"a.1"}


def test_the_app_sweeps_while_served_and_event_ttl_0_keeps_events_for_ever() -> None:
    clock = FakeClock()
    app = create_app(MemoryStore(), clock=clock.now, event_ttl=120.0)
    assert app.event_expiry is not None and app.event_expiry.ttl == 120.0
    assert create_app(MemoryStore(), clock=clock.now, event_ttl=0).event_expiry is None

    async def served() -> int:
        assert app.event_expiry is not None
        app.event_expiry.period = 0.01
        app.start_upkeep()
        try:
            for _ in range(500):
                await asyncio.sleep(0.01)
                if app.event_expiry._marks:
                    return len(app.event_expiry._marks)
            return 0
        finally:
            app.shutdown()

    assert asyncio.run(served()) >= 1


@pytest.mark.parametrize(
    ("flags", "seconds"),
    [((), 3600.0), (("--event-ttl", "2h"), 7200.0), (("--event-ttl=90s",), 90.0), (("--event-ttl", "0s"), 0.0)],
    ids=["default-1h", "2h", "90s", "0-never"],
)
def test_event_ttl_flag_takes_go_durations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...], seconds: float
) -> None:
    assert assembled_with(tmp_path, monkeypatch, flags)["event_ttl"] == seconds


@pytest.mark.parametrize(
    ("value", "message"),
    [("1", 'time: missing unit in duration "1"'), ("-1m", "-1m must not be negative")],
)
def test_a_bad_event_ttl_is_a_usage_error(tmp_path: Path, value: str, message: str) -> None:
    result = CliRunner().invoke(up, [f"--event-ttl={value}", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 2
    assert f"Error: Invalid value for '--event-ttl': {message}" in result.output
