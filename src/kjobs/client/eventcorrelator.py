"""client-go's EventCorrelator (tools/record/events_cache.go): what to write for each recorded Event, if anything.

Every Kubernetes component records Events through client-go, which never writes them one to one. Before a write,
the correlator runs three steps, in this order:

1. `EventAggregator`: events from one source about one object with the same type and reason
   (`event_aggregator_by_reason_func`) but different messages are counted per group; once 10 distinct messages
   are seen within 600 s of each other, the event becomes one aggregate event "(combined from similar events):
   <message>" keyed by the group, so the later ones update that aggregate instead of creating more.
2. `EventLogger.event_observe` (client-go's eventLogger): an event whose key (source, object, type, reason,
   message; or the group key for an aggregate) was already written becomes a strategic-merge patch of that Event
   with `count` + 1, a new `lastTimestamp` and the message; otherwise a create.
3. `EventSourceObjectSpamFilter`: a token bucket per (source, object), burst 25, refilled at 1 per 300 s, drops
   the write once empty (after step 2 has counted it, as client-go does: the next write carries the higher count).

The module is pure: `now` is a parameter and there is no I/O. The state is three LRU caches bounded at 4096
entries each, as client-go's; `EventCorrelator.event_correlate` updates them and returns an
`EventCorrelateResult` (create, patch or drop). The recorder (`events.py`) performs the write and reports the
server's answer back with `update_state`.

Names follow client-go's `<involvedObject.name>.<UnixNano as hex>`; `EventNamer` keeps them unique when many
events share one instant (a virtual clock does that), by moving on to the next free nanosecond.
"""

from __future__ import annotations

import struct
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.flowcontrol import TokenBucket

MAX_LRU_CACHE_ENTRIES = 4096
# A similar event (varying only by message) seen 10 times within 10 minutes is aggregated.
DEFAULT_AGGREGATE_MAX_EVENTS = 10
DEFAULT_AGGREGATE_INTERVAL_IN_SECONDS = 600
# A source may send 25 events about an object, then 1 new event every 5 minutes.
DEFAULT_SPAM_BURST = 25
DEFAULT_SPAM_QPS = 1.0 / 300.0

AGGREGATE_MESSAGE_PREFIX = "(combined from similar events): "

EventAggregatorKeyFunc = Callable[[Obj], tuple[str, str]]
EventAggregatorMessageFunc = Callable[[Obj], str]
EventSpamKeyFunc = Callable[[Obj], str]

K = TypeVar("K")
V = TypeVar("V")


def _source(event: Obj) -> Obj:
    return event.get("source") or {}


def _involved(event: Obj) -> Obj:
    return event.get("involvedObject") or {}


def _source_and_object(event: Obj, *, field_path: bool) -> str:
    """The source and involvedObject parts both keys start with (the spam key leaves out the field path),
    joined as client-go joins them (an absent part adds nothing)."""
    src, ref = _source(event), _involved(event)
    path = (ref.get("fieldPath") or "") if field_path else ""
    return (
        f"{src.get('component') or ''}{src.get('host') or ''}{ref.get('kind') or ''}{ref.get('namespace') or ''}"
        f"{ref.get('name') or ''}{path}{ref.get('uid') or ''}{ref.get('apiVersion') or ''}"
    )


def get_event_key(event: Obj) -> str:
    """The identity of an event for deduplication: source, involvedObject, type, reason and message."""
    return (
        f"{_source_and_object(event, field_path=True)}{event.get('type') or ''}{event.get('reason') or ''}"
        f"{event.get('message') or ''}"
    )


def get_spam_key(event: Obj) -> str:
    """The spam filter's bucket: one per source and involvedObject."""
    return _source_and_object(event, field_path=False)


def event_aggregator_by_reason_func(event: Obj) -> tuple[str, str]:
    """(aggregate key, local key): events match on source, object, type, reason and reporter; the message varies."""
    src, ref = _source(event), _involved(event)
    aggregate = (
        f"{src.get('component') or ''}{src.get('host') or ''}{ref.get('kind') or ''}{ref.get('namespace') or ''}"
        f"{ref.get('name') or ''}{ref.get('uid') or ''}{ref.get('apiVersion') or ''}{event.get('type') or ''}"
        f"{event.get('reason') or ''}{event.get('reportingComponent') or ''}{event.get('reportingInstance') or ''}"
    )
    return aggregate, str(event.get("message") or "")


def event_aggregator_by_reason_message_func(event: Obj) -> str:
    """The aggregate event's message: the latest message, prefixed."""
    return AGGREGATE_MESSAGE_PREFIX + str(event.get("message") or "")


class LRUCache(Generic[K, V]):
    """groupcache's lru.Cache: `get` and `add` make an entry the most recent; adding past the bound drops the oldest."""

    def __init__(self, max_entries: int) -> None:
        if max_entries <= 0:
            raise ValueError("an LRU cache needs room for at least one entry")
        self.max_entries = max_entries
        self._entries: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        """The entry (now the most recent), or None."""
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def add(self, key: K, value: V) -> None:
        """Insert or replace, evicting the least recently used entry beyond the bound."""
        self._entries[key] = value
        self._entries.move_to_end(key)
        if len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


class EventNamer:
    """client-go's Event names, `<name>.<UnixNano in hex>`, never reusing a nanosecond already handed out."""

    def __init__(self) -> None:
        self._last = 0

    def name(self, involved_name: str, now: float) -> str:
        """A fresh name for an event about `involved_name` at `now`."""
        nanos = max(int(now * 1_000_000_000), self._last + 1)
        self._last = nanos
        return f"{involved_name}.{nanos:x}"


class EventSourceObjectSpamFilter:
    """Throttles how many events one source can write about one object."""

    def __init__(
        self,
        *,
        lru_cache_size: int = MAX_LRU_CACHE_ENTRIES,
        burst: int = DEFAULT_SPAM_BURST,
        qps: float = DEFAULT_SPAM_QPS,
        spam_key_func: EventSpamKeyFunc = get_spam_key,
    ) -> None:
        self.cache: LRUCache[str, TokenBucket] = LRUCache(lru_cache_size)
        self.burst = burst
        self.qps = _float32(qps)  # client-go keeps the rate as a float32: 1/300 becomes a hair above it
        self.spam_key_func = spam_key_func

    def filter(self, event: Obj, now: float) -> bool:
        """True when the event must be skipped (its source and object ran out of tokens)."""
        key = self.spam_key_func(event)
        bucket = self.cache.get(key)
        if bucket is None:
            bucket = TokenBucket(self.qps, self.burst, now=now)
        accepted = bucket.try_accept(now)
        self.cache.add(key, bucket)
        return not accepted


@dataclass(slots=True)
class AggregateRecord:
    """The distinct messages (local keys) seen in one group, and when the group last saw an event."""

    local_keys: dict[str, None]  # insertion-ordered set
    last_timestamp: float


@dataclass(frozen=True, slots=True)
class CorrelatorOptions:
    """client-go's `CorrelatorOptions`, with its defaults."""

    lru_cache_size: int = MAX_LRU_CACHE_ENTRIES
    burst: int = DEFAULT_SPAM_BURST
    qps: float = DEFAULT_SPAM_QPS
    max_events: int = DEFAULT_AGGREGATE_MAX_EVENTS
    max_interval_in_seconds: int = DEFAULT_AGGREGATE_INTERVAL_IN_SECONDS
    key_func: EventAggregatorKeyFunc = event_aggregator_by_reason_func
    message_func: EventAggregatorMessageFunc = event_aggregator_by_reason_message_func
    spam_key_func: EventSpamKeyFunc = get_spam_key


class EventAggregator:
    """Turns a group of similar events into one aggregate event once it has seen `max_events` distinct messages."""

    def __init__(self, *, namer: EventNamer, options: CorrelatorOptions | None = None) -> None:
        opts = options or CorrelatorOptions()
        self.cache: LRUCache[str, AggregateRecord] = LRUCache(opts.lru_cache_size)
        self.namer = namer
        self.key_func = opts.key_func
        self.message_func = opts.message_func
        self.max_events = opts.max_events
        self.max_interval_in_seconds = opts.max_interval_in_seconds

    def event_aggregate(self, new_event: Obj, now: float) -> tuple[Obj, str]:
        """The event to write (the incoming one, or a new aggregate) and its cache key for deduplication."""
        event_key = get_event_key(new_event)
        aggregate_key, local_key = self.key_func(new_event)
        record = self.cache.get(aggregate_key)
        # A group not seen for longer than the interval starts over (an unknown group is infinitely old).
        if record is None or now - record.last_timestamp > self.max_interval_in_seconds:
            record = AggregateRecord(local_keys={}, last_timestamp=now)
        record.local_keys[local_key] = None
        record.last_timestamp = now
        self.cache.add(aggregate_key, record)
        if len(record.local_keys) < self.max_events:
            return new_event, event_key
        # Keep the set below the bound. client-go pops an arbitrary key (Go map order); this drops the oldest.
        del record.local_keys[next(iter(record.local_keys))]
        ref = _involved(new_event)
        stamp = format_time(now)
        aggregate: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": self.namer.name(str(ref.get("name") or ""), now),
                "namespace": (new_event.get("metadata") or {}).get("namespace") or "",
            },
            "involvedObject": ref,
            "reason": new_event.get("reason") or "",
            "message": self.message_func(new_event),
            "source": _source(new_event),
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "eventTime": None,  # a zero MicroTime, as client-go's Event encodes it
            "count": 1,
            "type": new_event.get("type") or "",
            # client-go's aggregate copies neither reportingController nor reportingInstance.
            "reportingComponent": "",
            "reportingInstance": "",
        }
        return aggregate, aggregate_key


@dataclass(slots=True)
class EventLog:
    """What was last written for one key: its count, first time, name and resourceVersion."""

    count: int
    first_timestamp: str
    name: str
    resource_version: str


class EventLogger:
    """client-go's eventLogger: counts occurrences per key so a repeated event patches the Event already written."""

    def __init__(self, *, lru_cache_size: int = MAX_LRU_CACHE_ENTRIES) -> None:
        self.cache: LRUCache[str, EventLog] = LRUCache(lru_cache_size)

    def event_observe(self, new_event: Obj, key: str) -> tuple[Obj, Obj | None]:
        """The event as it must be written, and the strategic-merge patch when one was written before under `key`."""
        event = dict(new_event)
        meta = dict(event.get("metadata") or {})
        event["metadata"] = meta
        patch: Obj | None = None
        last = self.cache.get(key)
        if last is not None and last.count > 0:
            meta["name"] = last.name
            if last.resource_version:
                meta["resourceVersion"] = last.resource_version
            else:
                meta.pop("resourceVersion", None)
            event["firstTimestamp"] = last.first_timestamp
            event["count"] = last.count + 1
            # client-go diffs the event against a copy without count, lastTimestamp and message, so the patch
            # holds exactly those three (message only when there is one).
            patch = {"count": event["count"], "lastTimestamp": event.get("lastTimestamp")}
            if event.get("message"):
                patch["message"] = event["message"]
        self.cache.add(key, _log_of(event))
        return event, patch

    def update_state(self, event: Obj) -> None:
        """Remember the server's copy of a written event (its name and resourceVersion), keyed by its full key.

        client-go writes one event at a time, so the answer it remembers is always the newest. Writes of
        different Events run concurrently here; an answer that arrives after a later occurrence was already
        counted keeps that higher count, which is what the sequential order would have left in the cache.
        """
        key = get_event_key(event)
        written = _log_of(event)
        known = self.cache.get(key)
        if known is not None and known.name == written.name and known.count > written.count:
            written = EventLog(known.count, written.first_timestamp, written.name, written.resource_version)
        self.cache.add(key, written)


def _float32(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", value))[0])


def _log_of(event: Obj) -> EventLog:
    meta = event.get("metadata") or {}
    return EventLog(
        count=int(event.get("count") or 0),
        first_timestamp=str(event.get("firstTimestamp") or ""),
        name=str(meta.get("name") or ""),
        resource_version=str(meta.get("resourceVersion") or ""),
    )


@dataclass(frozen=True, slots=True)
class EventCorrelateResult:
    """The outcome for one event: skip it, or write `event` (a patch of an existing Event when `patch` is set)."""

    event: Obj | None
    patch: Obj | None = None
    skip: bool = False

    @property
    def action(self) -> str:
        """`drop`, `patch` or `create` (client-go updates an existing Event when the count is above 1)."""
        if self.skip or self.event is None:
            return "drop"
        return "patch" if int(self.event.get("count") or 0) > 1 else "create"


class EventCorrelator:
    """Filters, aggregates, counts and de-duplicates events before they are written, with client-go's defaults."""

    def __init__(self, *, namer: EventNamer, options: CorrelatorOptions | None = None) -> None:
        opts = options or CorrelatorOptions()
        self.spam_filter = EventSourceObjectSpamFilter(
            lru_cache_size=opts.lru_cache_size, burst=opts.burst, qps=opts.qps, spam_key_func=opts.spam_key_func
        )
        self.aggregator = EventAggregator(namer=namer, options=opts)
        self.logger = EventLogger(lru_cache_size=opts.lru_cache_size)

    def event_correlate(self, new_event: Obj, now: float) -> EventCorrelateResult:
        """Aggregate, then count against what was written, then apply the spam filter."""
        aggregate_event, cache_key = self.aggregator.event_aggregate(new_event, now)
        observed, patch = self.logger.event_observe(aggregate_event, cache_key)
        if self.spam_filter.filter(observed, now):
            return EventCorrelateResult(event=None, skip=True)
        return EventCorrelateResult(event=observed, patch=patch)

    def update_state(self, event: Obj) -> None:
        """Take in the server's copy of an event just written."""
        self.logger.update_state(event)
