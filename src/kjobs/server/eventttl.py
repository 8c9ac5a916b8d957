"""Events expire `--event-ttl` after their last write, as kube-apiserver's do.

kube-apiserver stores an Event under an etcd lease of `--event-ttl` (1h by default,
cmd/kube-apiserver/app/options/options.go), granted again at every create and update of it (the events
registry's `TTLFunc`, pkg/registry/core/event/storage/storage.go; the generic store asks it on both): an Event
nobody writes for an hour is deleted by etcd, and its watchers see it DELETED. Without this a server left
running keeps every Event it was ever sent: about ten per Job.

kjobs has no leases; the store knows each object's last revision, not its time. So the expiry keeps marks,
`(time, store revision)`, one a sweep: an Event whose last write is at or below the revision marked at least
`ttl` ago was last written at least `ttl` ago, and is deleted (with its revision as a precondition, so a write
in between keeps it). An Event lives between `ttl` and `ttl` plus one period, as etcd's lease manager reuses a
lease for the writes of up to a minute (`defaultLeaseReuseDurationSeconds`,
staging/src/k8s.io/apiserver/pkg/storage/etcd3/lease_manager.go), and etcd's lessor checks expiry every 500 ms.

An Event already stored when the server starts has no mark: its last write is taken as the newest time it
carries (`lastTimestamp`, `eventTime`, `series.lastObservedTime`, `creationTimestamp`, managedFields' times),
as etcd's lease would have kept counting while the server was down. The `events.k8s.io/v1` view reads the same
stored core Events (docs/events-v1-and-root-ca.md), so it expires with them.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable

from kjobs.api.errors import ApiError
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.store.base import Store

log = logging.getLogger(__name__)

EVENT_TTL = 3600.0
"""kube-apiserver's `--event-ttl` default (1h)."""
SWEEP_PERIOD = 10.0
"""Seconds between sweeps: how much longer than the TTL an Event may live."""
RESOURCE = "events"
LOAD_CHUNK = 500
"""Stored Events decoded between two yields to the event loop at the first sweep."""
DELETE_BATCH = 500
"""Deletes in flight at once, so that a long-stopped server's first sweep does not queue thousands of writes."""


def last_written(event: Obj) -> float | None:
    """The newest time an Event carries: what its last write is taken to be when no mark covers it."""
    meta = event.get("metadata") or {}
    series = event.get("series") or {}
    texts: list[object] = [
        meta.get("creationTimestamp"),
        event.get("lastTimestamp"),
        event.get("firstTimestamp"),
        event.get("eventTime"),
        series.get("lastObservedTime") if isinstance(series, dict) else None,
    ]
    texts += [entry.get("time") for entry in meta.get("managedFields") or () if isinstance(entry, dict)]
    times = []
    for text in texts:
        if isinstance(text, str) and text:
            try:
                times.append(parse_time(text))
            except ValueError:
                continue
    return max(times) if times else None


class EventExpiry:
    """Deletes Events `ttl` seconds after their last write: `sweep` runs every `period` seconds (the
    application's upkeep, `App.start_upkeep`)."""

    def __init__(
        self, store: Store, clock: Callable[[], float], *, ttl: float = EVENT_TTL, period: float = SWEEP_PERIOD
    ) -> None:
        self.store = store
        self.clock = clock
        self.ttl = ttl
        self.period = period
        self._marks: deque[tuple[float, int]] = deque()
        """`(time, revision)`, oldest first: every write at or below the revision was done by the time."""
        self._loaded: dict[str, tuple[int, float]] | None = None
        """Events stored before the first sweep: `(revision, expiry)` from their own times (None: not read yet;
        `due` alone counts by marks only)."""
        self.expired = 0
        """Events deleted so far (for tests and the log)."""

    async def _load(self, now: float) -> None:
        """Take the expiry of every stored Event from its own times, yielding to the loop every `LOAD_CHUNK`
        decodes (an hour of a busy server's Events is tens of thousands)."""
        loaded: dict[str, tuple[int, float]] = {}
        for n, (path, revision) in enumerate(self.store.revisions(RESOURCE)):
            if n and n % LOAD_CHUNK == 0:
                await asyncio.sleep(0)
            namespace, _, name = path.partition("/")
            try:
                written = last_written(self.store.get(RESOURCE, namespace, name))
            except ApiError:  # gone meanwhile, or damaged (served as a 500 until written again): left to marks
                continue
            loaded[path] = (revision, (now if written is None else min(written, now)) + self.ttl)
        self._loaded = loaded

    def due(self, now: float) -> list[tuple[str, str, int]]:
        """`(namespace, name, revision)` of the Events whose last write is `ttl` or more before `now`; marks
        the store's revision at `now` for later sweeps."""
        self._marks.append((now, self.store.revision))
        horizon: tuple[float, int] | None = None
        while self._marks and self._marks[0][0] <= now - self.ttl:
            horizon = self._marks.popleft()
        if horizon is not None:  # the newest mark old enough stays: later sweeps still need its revision
            self._marks.appendleft(horizon)
        below = horizon[1] if horizon is not None else 0
        items = self.store.revisions(RESOURCE)
        loaded = self._loaded
        if not loaded:  # the steady state: by marks alone
            paths = [(path, revision) for path, revision in items if revision <= below]
        else:
            paths = []
            kept: dict[str, tuple[int, float]] = {}
            for path, revision in items:
                known = loaded.get(path)
                if known is not None and known[0] == revision:
                    kept[path] = known  # until deleted or written again, even if its delete fails
                    if known[1] <= now:
                        paths.append((path, revision))
                elif revision <= below:
                    paths.append((path, revision))
            self._loaded = kept  # what was written again since the start is counted by the marks from then on
        out = []
        for path, revision in paths:
            namespace, _, name = path.partition("/")
            out.append((namespace, name, revision))
        return out

    async def sweep(self) -> None:
        """Delete every Event due now (counted in `expired`)."""
        if self._loaded is None:
            await self._load(self.clock())
        due = self.due(self.clock())
        deleted = 0
        for start in range(0, len(due), DELETE_BATCH):
            done = await asyncio.gather(*(self._delete(*item) for item in due[start : start + DELETE_BATCH]))
            deleted += sum(done)
        self.expired += deleted
        if deleted:
            log.debug("expired %d events (--event-ttl %ss)", deleted, self.ttl)

    async def _delete(self, namespace: str, name: str, revision: int) -> bool:
        try:
            await self.store.adelete(RESOURCE, namespace, name, expected_rv=str(revision))
        except ApiError:  # written again (409) or deleted (404) since: its next write counts from then
            return False
        return True
