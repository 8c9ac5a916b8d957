"""Recording Kubernetes Events (core/v1) about objects, as client-go's tools/record does, fire-and-forget.

`EventRecorder.event` builds the Event as client-go's recorder makes it (makeEvent: name
`<involvedObject.name>.<UnixNano hex>`, count 1, first = last timestamp, source and reporting component), runs it
through the `EventCorrelator` (aggregation, deduplication, spam filter; see `eventcorrelator`) at once, in call
order, and writes the outcome in the background: a create, or a strategic-merge patch of the Event already
written (a patch that finds the Event gone creates it instead, as recordEvent does). The server's answer goes back
into the correlator. Writes of one Event are chained so that its create lands before its patches; different
Events are written concurrently. Failures are logged, never raised; client-go's retries of transport errors
(12 tries, 10 s apart) are left out, an unreachable server loses the event.

With `qps` (the kubelet's `eventRecordQPS`, 50, and `eventBurst`, 100), the recorder behaves as a component
whose event client is rate limited: events wait in a queue of at most 1,000 (client-go's `maxQueuedEvents`;
more are dropped, as its broadcaster drops when full), and one writer correlates and writes them in order,
each write taking a token of a bucket refilled at `qps` and holding at most `burst`.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque

from kjobs.api.errors import ApiError
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.eventcorrelator import EventCorrelateResult, EventCorrelator, EventNamer
from kjobs.client.flowcontrol import TokenBucket
from kjobs.client.resources import EVENTS
from kjobs.clock import Clock

log = logging.getLogger(__name__)

EVENT_TYPES = frozenset({"Normal", "Warning"})
MAX_QUEUED_EVENTS = 1000
"""client-go's `maxQueuedEvents`: what a rate-limited recorder holds before it drops new events."""

_Pending = tuple[Obj, str, str, str, float, str]
"""An event waiting in a rate-limited recorder's queue: (object, type, reason, message, time, field path), built
when written."""

# One namer per process: two recorders stamping events about one object at one (virtual) instant still get
# different names.
_NAMES = EventNamer()


class EventRecorder:
    """Writes Events with `source.component` = the controller's name (what `kubectl describe` shows as From)."""

    def __init__(
        self,
        client: Client,
        *,
        component: str,
        clock: Clock,
        host: str = "",
        qps: float = 0.0,
        burst: int = 0,
        queue_limit: int = MAX_QUEUED_EVENTS,
    ) -> None:
        self._client = client
        self._off = not getattr(client, "records_events", True)  # a simulation's LocalClient: nobody reads them
        self._component = component
        self._clock = clock
        self._host = host
        self._source: Obj = {"component": component, **({"host": host} if host else {})}
        self.correlator = EventCorrelator(namer=_NAMES)
        self._pending: set[asyncio.Task[None]] = set()
        self._tails: dict[tuple[str, str], asyncio.Task[None]] = {}  # the last write queued per Event
        self._limiter = TokenBucketLimiter(qps, burst, clock) if qps > 0 else None
        self._queue: deque[_Pending] = deque()
        self._queue_limit = queue_limit
        self._writer: asyncio.Task[None] | None = None
        self.dropped = 0
        """Events dropped because the queue of a rate-limited recorder was full."""

    @property
    def recording(self) -> bool:
        """Whether events are written at all (not for a simulation's LocalClient): a caller may skip working out
        events that would be dropped."""
        return not self._off

    def event(self, obj: Obj, type_: str, reason: str, message: str, *, field_path: str = "") -> None:
        """Record an Event about `obj` in the background (failures are logged, never raised). `field_path` names
        the part of `obj` the event is about (`involvedObject.fieldPath`: the kubelet's `spec.containers{NAME}`
        for a container's events, pkg/kubelet/container/ref.go `GenerateContainerRef`)."""
        if self._off:
            return
        if type_ not in EVENT_TYPES:
            log.error("unsupported event type %r (reason %s), not recorded", type_, reason)
            return
        now = self._clock.now()
        if self._limiter is not None:
            if len(self._queue) >= self._queue_limit:  # dropped, as client-go's full channel drops: nothing to build
                self.dropped += 1
                log.debug("event queue full, dropping %s about %s", reason, (obj.get("metadata") or {}).get("name"))
                return
            # Built when its turn to be written comes: most of a busy component's queue is dropped at its stop, and
            # the object (an informer's, read-only) and the time are those of this call either way.
            self._enqueue((obj, type_, reason, message, now, field_path))
            return
        result = self.correlator.event_correlate(self._make_event(obj, type_, reason, message, now, field_path), now)
        if result.event is None:
            log.debug("event %s about %s dropped by the spam filter", reason, (obj.get("metadata") or {}).get("name"))
            return
        meta = result.event["metadata"]
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        task = asyncio.get_running_loop().create_task(self._record(result, after=self._tails.get(key)))
        self._tails[key] = task
        self._pending.add(task)
        task.add_done_callback(lambda done: self._finished(key, done))

    def _make_event(self, obj: Obj, type_: str, reason: str, message: str, now: float, field_path: str = "") -> Obj:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "")
        ref_namespace = str(meta.get("namespace") or "")
        reference: Obj = {"kind": obj.get("kind") or ""}
        for field, value in (
            ("namespace", ref_namespace),
            ("name", name),
            ("uid", meta.get("uid")),
            ("apiVersion", obj.get("apiVersion")),
            ("resourceVersion", meta.get("resourceVersion")),
            ("fieldPath", field_path),
        ):
            if value:
                reference[field] = value
        stamp = format_time(now)
        return {
            "apiVersion": "v1",
            "kind": "Event",
            # An event about a cluster-scoped object (a Node) lives in `default`; its reference has no namespace.
            "metadata": {"name": _NAMES.name(name, now), "namespace": ref_namespace or "default"},
            "involvedObject": reference,
            "reason": reason,
            "message": message,
            "source": self._source,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "eventTime": None,  # a zero MicroTime, as client-go's Event encodes it
            "count": 1,
            "type": type_,
            "reportingComponent": self._component,
            "reportingInstance": self._host,
        }

    def _finished(self, key: tuple[str, str], task: asyncio.Task[None]) -> None:
        self._pending.discard(task)
        if self._tails.get(key) is task:
            del self._tails[key]

    async def _record(self, result: EventCorrelateResult, *, after: asyncio.Task[None] | None) -> None:
        if after is not None:
            await asyncio.wait([after])
        event = result.event
        assert event is not None
        namespace = str(event["metadata"].get("namespace") or "default")
        try:
            written: Obj | None = None
            if result.action == "patch" and result.patch is not None:
                try:
                    written = await self._client.patch(
                        EVENTS, namespace, str(event["metadata"]["name"]), result.patch, patch_type="strategic"
                    )
                except ApiError as exc:
                    if exc.code != 404:
                        raise
            if written is None:
                body = dict(event)
                body["metadata"] = {k: v for k, v in event["metadata"].items() if k != "resourceVersion"}
                written = await self._client.create(EVENTS, namespace, body)
            self.correlator.update_state(written)
        except ApiError as exc:
            log.debug("server rejected event %s (will not retry): %s", event.get("reason"), exc.message)
        except Exception as exc:
            log.debug("event %s not recorded: %s", event.get("reason"), exc)

    def _enqueue(self, pending: _Pending) -> None:
        if len(self._queue) >= self._queue_limit:
            self.dropped += 1
            about = (pending[0].get("metadata") or {}).get("name")
            log.debug("event queue full, dropping %s about %s", pending[2], about)
            return
        self._queue.append(pending)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write_queued())

    async def _write_queued(self) -> None:
        """The rate-limited writer: correlate each queued event now, then write it once a token is free."""
        assert self._limiter is not None
        while self._queue:
            event = self._make_event(*self._queue.popleft())
            result = self.correlator.event_correlate(event, self._clock.now())
            if result.event is None:
                continue
            try:
                await self._limiter.wait()
            except asyncio.CancelledError:
                self.dropped += 1  # taken from the queue, never written
                raise
            await self._record(result, after=None)

    async def flush(self) -> None:
        """Wait for events in flight and queued (tests, shutdown)."""
        while self._pending or (self._writer is not None and not self._writer.done()):
            waiting = [*self._pending, *([self._writer] if self._writer is not None else [])]
            await asyncio.gather(*waiting, return_exceptions=True)

    async def shutdown(self) -> None:
        """Stop: events still queued are dropped (as a stopping component's broadcaster drops them), writes
        already under way finish."""
        self.dropped += len(self._queue)
        self._queue.clear()
        if self._writer is not None and not self._writer.done():
            self._writer.cancel()
            await asyncio.gather(self._writer, return_exceptions=True)
        await self.flush()


class TokenBucketLimiter:
    """client-go's token-bucket rate limiter on the injected clock: `qps` tokens a second, at most `burst`,
    starting full; `wait` returns once a token is taken."""

    def __init__(self, qps: float, burst: int, clock: Clock) -> None:
        self._bucket = TokenBucket(qps, max(burst, 1), now=clock.now())
        self._clock = clock

    async def wait(self) -> None:
        """Take a token, sleeping until one is there."""
        while True:
            now = self._clock.now()
            if self._bucket.try_accept(now):
                return
            at = self._bucket.next_token_at(now)
            assert at is not None  # the recorder builds a limiter only for qps > 0
            await self._clock.sleep(at - now)
