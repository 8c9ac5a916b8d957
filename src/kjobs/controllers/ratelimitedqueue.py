"""The node lifecycle controller's rate-limited tainting queue (`nodelifecycle/scheduler/rate_limited_queue.go`).

A node that must get a `NoExecute` taint waits in its zone's queue; a token bucket (`kjobs.client.flowcontrol`,
burst 1) decides how many are tainted per second (0.1/s by default, 0 when the zone is disrupted so evictions
stop). A name stays in the queue's set after it was processed, so it is not tainted twice, until `remove`
forgets it (node healthy again). Pure and clock-free: callers pass `now`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kjobs.client.flowcontrol import TokenBucket


@dataclass
class TimedValue:
    """A queued node: its name, uid, when it was added and when to process it."""

    value: str
    uid: str
    added_at: float
    process_at: float


@dataclass(eq=False, repr=False)
class RateLimitedTimedQueue:
    """A unique FIFO of node names processed through a token bucket."""

    limiter: TokenBucket
    _queue: list[TimedValue] = field(default_factory=list)
    _set: set[str] = field(default_factory=set)

    def add(self, value: str, uid: str, now: float) -> bool:
        """Queue `value` unless it was queued (or processed) before; True when added."""
        if value in self._set:
            return False
        self._set.add(value)
        self._queue.append(TimedValue(value, uid, now, now))
        self._queue.sort(key=lambda v: v.process_at)
        return True

    def remove(self, value: str) -> bool:
        """Forget `value` entirely (it may be added again); True when it was known."""
        known = value in self._set
        self._set.discard(value)
        self._queue = [v for v in self._queue if v.value != value]
        return known

    def __len__(self) -> int:
        return len(self._queue)

    def take_due(self, now: float) -> list[TimedValue]:
        """Pop the due values the limiter lets through (they stay known); `retry` puts one back."""
        taken: list[TimedValue] = []
        while self._queue:
            if not self.limiter.try_accept(now):
                break
            if now < self._queue[0].process_at:
                break
            taken.append(self._queue.pop(0))
        return taken

    def retry(self, item: TimedValue, at: float) -> None:
        """Queue a taken value again, to be processed at `at`."""
        if item.value in self._set and all(v.value != item.value for v in self._queue):
            item.process_at = at
            self._queue.append(item)
            self._queue.sort(key=lambda v: v.process_at)

    def next_attempt_at(self, now: float) -> float | None:
        """When processing could next make progress (None if empty or never)."""
        if not self._queue:
            return None
        token = self.limiter.next_token_at(now)
        if token is None:
            return None
        return max(token, self._queue[0].process_at)

    def swap_limiter(self, qps: float, now: float) -> None:
        """`SwapLimiter`: a new bucket at `qps`; if the old one was empty, start the new one empty too."""
        if qps == self.limiter.qps:
            return
        new = TokenBucket(qps, self.limiter.burst, now=now)
        if qps > 0 and not self.limiter.try_accept(now):
            new.try_accept(now)
        self.limiter = new
