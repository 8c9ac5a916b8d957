"""client-go's token-bucket rate limiter (`k8s.io/client-go/util/flowcontrol`, over golang.org/x/time/rate).

One bucket serves every rate limit in kjobs: the node lifecycle controller's tainting queue, the event
correlator's spam filter and the event recorders' write rate. It starts full, refills continuously at `qps`
tokens a second up to `burst`, and a refusal leaves it as it was (as `rate.Limiter` does), so a bucket asked
often and refused gives the same answer as one asked once. Clock-free: callers pass `now`; `qps <= 0` never
accepts (flowcontrol's fake never-limiter).
"""

from __future__ import annotations

import math


class TokenBucket:
    """`flowcontrol.NewTokenBucketRateLimiter(qps, burst)`, read and taken at a time the caller gives."""

    __slots__ = ("_last", "_tokens", "burst", "qps")

    def __init__(self, qps: float, burst: int = 1, *, now: float) -> None:
        self.qps = qps
        self.burst = burst
        self._tokens = float(burst)
        self._last = now

    def _available(self, now: float) -> float:
        return min(float(self.burst), self._tokens + max(0.0, now - self._last) * self.qps)

    def try_accept(self, now: float) -> bool:
        """Take a token if one is available at `now`."""
        if self.qps <= 0:
            return False
        tokens = self._available(now)
        if tokens < 1.0:
            return False
        self._tokens = tokens - 1.0
        self._last = max(self._last, now)
        return True

    def next_token_at(self, now: float) -> float | None:
        """When the next token will be available (`now` if one is; None if never)."""
        if self.qps <= 0:
            return None
        tokens = self._available(now)
        if tokens >= 1.0:
            return now
        at = now + (1.0 - tokens) / self.qps
        # Epoch seconds carry ~2.4e-7 s of float spacing: step to the first representable time that really
        # holds a token, so a waiter on a virtual clock (kjobs.virtualtime), which jumps exactly here, gets it.
        while self._available(at) < 1.0:
            at = math.nextafter(at, math.inf)
        return at
