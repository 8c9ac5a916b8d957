"""One watcher's view of a resource: filtering of committed changes and a private, unbounded-ish queue.

The store pushes changes into every watcher of a resource while it publishes a commit; a push only appends
to this watcher's own deque under the watcher's own lock, so a slow consumer never blocks writers or other
watchers. A watcher that falls more than `max_queue` events behind is closed (as Kubernetes' watch cache
terminates slow watchers); its consumer sees the end of the stream and re-watches from its last revision.

Selector semantics are Kubernetes' (the watch cache's `convertToWatchEvent`): a modification that moves an
object into the selection is sent as ADDED, one that moves it out as DELETED carrying the previous state at
the event's revision. Consumers read synchronously (`next(timeout)`) or with `async for`; an asyncio
consumer is woken from the writer thread with `loop.call_soon_threadsafe`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable

import orjson

from kjobs.api.selectors import FieldSelector, LabelSelector
from kjobs.store.events import ADDED, DELETED, MODIFIED, Change, Event, EventType, Record
from kjobs.store.mutation import SharedDecode

DEFAULT_MAX_QUEUE = 100_000


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class Watch:
    """A stream of events for one resource (optionally one namespace and selectors); close it when done."""

    def __init__(
        self,
        *,
        resource: str,
        namespace: str | None,
        label_selector: LabelSelector,
        field_selector: FieldSelector,
        on_close: Callable[[Watch], None] | None = None,
        max_queue: int = DEFAULT_MAX_QUEUE,
    ) -> None:
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.max_queue = max_queue
        self.overflowed = False
        self._on_close = on_close
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._queue: deque[Event] = deque()
        self._closed = False
        self._waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = None
        self._close_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._filtered = not (label_selector.empty and field_selector.empty)
        self.every = namespace is None and not self._filtered
        """Whether this watcher sees every change of its resource as it is (no namespace, no selector): the store
        then makes its event as `filter` would, without the call."""
        self._any_labels = label_selector.empty  # a node agent's watch selects by field only
        # The fields the selector compares: when a record holds them all, `_selects` reads nothing but its
        # labels and fields dicts (no decode), so two records sharing both dicts are selected alike.
        self._terms_fields = frozenset(term.field for term in field_selector.terms)
        # A selector of one `field=value` term and no labels (a kubelet's `spec.nodeName=NODE`): `_selects` compares
        # the record's precomputed value itself when it has one, as `matches_fields` would, without the call.
        terms = field_selector.terms
        self._one_term: tuple[str, str] | None = (
            (terms[0].field, terms[0].value)
            if label_selector.empty and len(terms) == 1 and not terms[0].negate
            else None
        )
        self._backlog = 0  # initial events, allowed on top of max_queue
        self.initial_count = 0
        """How many ADDED events of the state at the start open a watch from no revision (set by the store)."""
        self.initial_revision = 0
        """The revision of that state (what a `k8s.io/initial-events-end` bookmark carries)."""
        self._sleepers = 0  # threads blocked in `next` (most watches are consumed by asyncio, never blocking)
        self.convert: Callable[[Event], Event] | None = None
        """What a consumer gets instead of each event, if set: the event of another version of the same object
        (`kjobs.server.views`: an `events.k8s.io/v1` watch over the stored core Events)."""

    # --- producer side (called by the store while it publishes) ---------------------------------------------

    def _selects(self, record: Record) -> bool:
        one = self._one_term
        if one is not None:
            value = record.fields.get(one[0])
            if value is not None:
                return value == one[1]
        return (self._any_labels or self.label_selector.matches_labels(record.labels)) and (
            self.field_selector.matches_fields(record.fields, record.decode)
        )

    def filter(
        self, change: Change, shared: SharedDecode | None = None, made: dict[EventType, Event] | None = None
    ) -> Event | None:
        """The event this watcher should see for a committed change, or None if it is outside its view.

        `shared` decodes the change's object once for all the watchers that receive it; `made`, the events of
        that change already built for other watchers, by type: an event is read-only, so the watchers that see the
        change as the same type share one (an event built here is added to it). Kept apart from `shared`, which
        each event refers to: a dict of events there would make every change a reference cycle."""
        if self.namespace is not None and change.namespace != self.namespace:
            return None
        record = change.record
        if not self._filtered:
            kind = change.type
        elif change.type is DELETED:
            if not self._selects(record):
                return None
            kind = DELETED
        else:
            one = self._one_term  # `_selects`' one-term case, inline (a node agent's `spec.nodeName` watch)
            if one is not None and (value := record.fields.get(one[0])) is not None:
                now = value == one[1]
            else:
                now = self._selects(record)
            prev = change.prev
            if prev is None:
                before = False
            elif (
                prev.fields is record.fields
                and (self._any_labels or prev.labels is record.labels)
                and self._terms_fields <= record.fields.keys()
            ):
                before = now  # the same dicts, and nothing else read (see `_terms_fields`)
            elif one is not None and (value := prev.fields.get(one[0])) is not None:
                before = value == one[1]  # the one-term case again, for the previous state
            else:
                before = self._selects(prev)
            if now:
                kind = MODIFIED if before else ADDED
            elif before and prev is not None:
                return Event(DELETED, _at_revision(prev, record.revision), record.revision)
            else:
                return None
        raw = record.raw if shared is None else shared.raw  # the record's bytes, read once for every watcher
        if made is None:
            return Event(kind, raw, record.revision, shared)
        event = made.get(kind)
        if event is None:
            event = made[kind] = Event(kind, raw, record.revision, shared)
        return event

    def push(self, events: list[Event], *, bounded: bool = True) -> None:
        """Append events to this watcher's queue and wake its consumer; never blocks on the consumer.

        The initial state of a new watch is pushed unbounded: only falling behind live changes ends a watch.
        """
        if not events:
            return
        with self._lock:
            if self._closed:
                return
            queue = self._queue
            queue.extend(events)
            if not bounded:
                self._backlog += len(events)
            elif len(queue) > self.max_queue + self._backlog:
                self.overflowed = True
                queue.clear()
                self._closed = True
            if self._sleepers:
                self._cond.notify_all()
            waiter = self._waiter
            if waiter is not None:
                self._waiter = None
            overflowed = self.overflowed  # set under this lock only: read once
            closing = self._take_close_waiters() if overflowed else None
        if waiter is not None:
            _call_threadsafe(*waiter)
        if overflowed:
            for close_waiter in closing or ():
                _call_threadsafe(*close_waiter)
            if self._on_close is not None:
                self._on_close(self)

    def push_one(self, event: Event) -> None:
        """`push([event])`, bounded, without the list (a commit of one change: nearly every write)."""
        with self._lock:
            if self._closed:
                return
            queue = self._queue
            queue.append(event)
            if len(queue) <= self.max_queue + self._backlog:
                if self._sleepers:
                    self._cond.notify_all()
                waiter = self._waiter
                if waiter is None:
                    return  # no consumer waits (the usual push: it is busy elsewhere, or takes batches)
                self._waiter = None
                closing = None
            else:  # fallen too far behind: the watch ends
                self.overflowed = True
                queue.clear()
                self._closed = True
                if self._sleepers:
                    self._cond.notify_all()
                waiter, self._waiter = self._waiter, None
                closing = self._take_close_waiters()
        if waiter is not None:
            _call_threadsafe(*waiter)
        if closing is not None:
            for close_waiter in closing:
                _call_threadsafe(*close_waiter)
            if self._on_close is not None:
                self._on_close(self)

    # --- consumer side --------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once the watch has ended (closed by its consumer, by the store, or for falling behind)."""
        return self._closed

    def next(self, timeout: float | None = None) -> Event | None:
        """The next event; None when `timeout` seconds pass first or the watch has ended and is drained."""
        with self._cond:
            if not self._queue and not self._closed:
                self._sleepers += 1
                try:
                    self._cond.wait_for(lambda: bool(self._queue) or self._closed, timeout)
                finally:
                    self._sleepers -= 1
            if self._queue:
                event = self._queue.popleft()
                return event if self.convert is None else self.convert(event)
            return None

    def drain(self) -> list[Event]:
        """All events queued right now, without waiting."""
        with self._lock:
            events = list(self._queue)
            self._queue.clear()
        return events if self.convert is None else [self.convert(e) for e in events]

    def __aiter__(self) -> Watch:
        return self

    async def __anext__(self) -> Event:
        while True:
            with self._lock:
                if self._queue:
                    event = self._queue.popleft()
                    return event if self.convert is None else self.convert(event)
                if self._closed:
                    raise StopAsyncIteration
                loop = asyncio.get_running_loop()
                fut: asyncio.Future[None] = loop.create_future()
                self._waiter = (loop, fut)
            await fut

    async def next_batch(self) -> list[Event]:
        """Every event queued now, in order, waiting for one when none is; [] once the watch has ended and is
        drained. What `async for` hands out one at a time, taken together, for a consumer that handles each event
        without suspending in between (an informer): one lock and one call a batch, not a coroutine an event.
        A wait wakes exactly as `__anext__`'s does."""
        while True:
            with self._lock:
                queue = self._queue
                if queue:
                    events = list(queue)
                    queue.clear()
                    return events if self.convert is None else [self.convert(e) for e in events]
                if self._closed:
                    return []
                loop = asyncio.get_running_loop()
                fut: asyncio.Future[None] = loop.create_future()
                self._waiter = (loop, fut)
            await fut

    def when_closed(self) -> asyncio.Future[None]:
        """A future of the running loop, done once the watch has ended (closed, or dropped for falling behind):
        what a consumer busy elsewhere (writing to a client that does not read) waits on beside its work."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if not self._closed:
                self._close_waiters.append((loop, fut))
                return fut
        fut.set_result(None)
        return fut

    def _take_close_waiters(self) -> list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]:
        waiters, self._close_waiters = self._close_waiters, []
        return waiters

    def close(self) -> None:
        """End the watch: the store stops feeding it and consumers see the end of the stream."""
        with self._lock:
            already = self._closed
            self._closed = True
            self._cond.notify_all()
            waiter, self._waiter = self._waiter, None
            closing = self._take_close_waiters()
        if waiter is not None:
            _call_threadsafe(*waiter)
        for close_waiter in closing:
            _call_threadsafe(*close_waiter)
        if not already and self._on_close is not None:
            self._on_close(self)

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _call_threadsafe(loop: asyncio.AbstractEventLoop, fut: asyncio.Future[None]) -> None:
    try:
        same_thread = asyncio.get_running_loop() is loop
    except RuntimeError:
        same_thread = False
    if same_thread:  # a write made on the consumer's own loop (in-process clients): no self-pipe wake-up
        loop.call_soon(_wake, fut)
        return
    with contextlib.suppress(RuntimeError):  # the consumer's loop is closed: nobody is waiting any more
        loop.call_soon_threadsafe(_wake, fut)


def _at_revision(record: Record, revision: int) -> bytes:
    """The previous state re-stamped with the event's revision (a DELETED for an object leaving the selection)."""
    obj = record.decode()
    obj["metadata"] = {**(obj.get("metadata") or {}), "resourceVersion": str(revision)}
    return orjson.dumps(obj)
