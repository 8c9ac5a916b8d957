"""Stop 51: an informer over the in-process store takes a watch's events a batch at a time (`Watch.next_batch`)
rather than one `__anext__` coroutine an event. A batch must be exactly the events `async for` hands out before it
would next suspend, converted alike, the end of the watch seen at the same point, and a waiting consumer woken in
the same turn of the event loop as one waiting in `__anext__` (a turn earlier or later would reorder controllers'
work)."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.selectors import EVERYTHING, FieldSelector
from kjobs.store.events import Event, EventType
from kjobs.store.watch import Watch
from tests.hypothesis_budget import examples


def _watch(convert: bool) -> Watch:
    w = Watch(resource="pods", namespace=None, label_selector=EVERYTHING, field_selector=FieldSelector())
    if convert:
        w.convert = lambda e: Event(e.type, e.raw + b" ", e.revision)
    return w


def _events(start: int, n: int) -> list[Event]:
    return [Event(EventType.MODIFIED, b'{"n":%d}' % i, i) for i in range(start, start + n)]


STEP = st.one_of(st.tuples(st.just("push"), st.integers(1, 4)), st.just(("read",)), st.just(("close",)))


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(STEP, max_size=20), st.booleans())
def test_a_batch_is_what_anext_hands_out_before_it_would_wait(steps: list[tuple[Any, ...]], convert: bool) -> None:
    async def scenario() -> None:
        one, batched = _watch(convert), _watch(convert)
        revision = 0
        for step in steps:
            if step[0] == "push":
                for w in (one, batched):
                    w.push(_events(revision, step[1]))
                revision += step[1]
            elif step[0] == "close":
                one.close()
                batched.close()
            elif one._queue or one.closed:  # a read that would not wait
                seen: list[tuple[Any, ...]] = []
                ended = False
                while one._queue or one.closed:
                    try:
                        event = await one.__anext__()
                    except StopAsyncIteration:
                        ended = True
                        break
                    seen.append((event.type, event.raw, event.revision))
                batch = await batched.next_batch()
                assert [(e.type, e.raw, e.revision) for e in batch] == seen
                if ended and batch:  # the events still queued at the close, then the end
                    batch = await batched.next_batch()
                assert ended == (batch == [])

    asyncio.run(scenario())


def test_a_waiting_batch_is_woken_in_the_turn_anext_is() -> None:
    async def scenario() -> list[Any]:
        log: list[Any] = []
        one, batched = _watch(False), _watch(False)

        async def by_event() -> None:
            async for event in one:
                log.append(("event", event.revision))

        async def by_batch() -> None:
            while events := await batched.next_batch():
                log.append(("batch", [e.revision for e in events]))

        loop = asyncio.get_running_loop()

        def tick(i: int) -> None:
            log.append(("tick", i))
            if i < 6:
                loop.call_soon(tick, i + 1)

        tasks = [asyncio.create_task(by_event()), asyncio.create_task(by_batch())]
        await asyncio.sleep(0)  # both wait now
        for w in (one, batched):
            w.push(_events(1, 2))
        tick(0)
        for _ in range(8):
            await asyncio.sleep(0)
        one.close()
        batched.close()
        await asyncio.gather(*tasks)
        return log

    log = asyncio.run(scenario())
    turn = {entry[0]: i for i, entry in enumerate(log) if entry[0] in ("event", "batch")}
    ticks_before = {kind: sum(1 for entry in log[:at] if entry[0] == "tick") for kind, at in turn.items()}
    assert ticks_before["event"] == ticks_before["batch"]
    assert [entry for entry in log if entry[0] != "tick"] == [("event", 1), ("event", 2), ("batch", [1, 2])]
