"""When the node agent looks at a running pod again: the kubelet's resync period and token refresh, with its jitter.

Design note: the kubelet spreads its periodic work so that pods started together do not come back together.
- The pod worker requeues a pod after each successful sync at `wait.Jitter(resyncInterval,
  workerResyncIntervalJitterFactor)` (pkg/kubelet/pod_workers.go `completeWork`, factor 0.5;
  k8s.io/apimachinery/pkg/util/wait `Jitter`: `duration + rand.Float64() * factor * duration`), so with the
  default `--sync-frequency` of 1 minute a pod is synced again 60 to 90 s later; each sync remounts its
  configMap, secret, downwardAPI and projected volumes.
- The token manager (pkg/kubelet/token/token_manager.go `requiresRefresh`) asks for a token again once it is older
  than 24 hours (`maxTTL`) or within 20 % of its lifetime of its expiry (the percentage in whole seconds:
  `expirationSeconds * 20 / 100` in integer arithmetic), each brought forward by a jitter of whole seconds below
  10 (`maxJitter`: `time.Duration(rand.Float64() * 10) * time.Second` truncates to 0..9 s), or when it was issued
  after now (the clock stepped back). It asks when a sync of the pod remounts its projected volume
  (`GetServiceAccountToken`), drawing the jitter afresh each time: a token is refreshed at the first sync past
  that point, not at the point.
The random source is injected (`random.Random`) so that a test in virtual time can fix it.
"""

from __future__ import annotations

import random

WORKER_RESYNC_INTERVAL_JITTER_FACTOR = 0.5
"""pod_workers.go `workerResyncIntervalJitterFactor`."""
TOKEN_MAX_TTL = 24 * 3600.0
"""token_manager.go `maxTTL`: a token is asked for again after a day at most."""
TOKEN_MAX_JITTER = 10
"""token_manager.go `maxJitter` (10 s), of which whole seconds are taken."""


def jitter(duration: float, max_factor: float, rng: random.Random) -> float:
    """`wait.Jitter`: `duration` plus a random part of up to `max_factor` times it (a factor of 0 or less is 1)."""
    if max_factor <= 0.0:
        max_factor = 1.0
    return duration + rng.random() * max_factor * duration


def resync_delay(sync_frequency: float, rng: random.Random) -> float:
    """Seconds until a pod that synced now is synced again (the pod worker's `completeWork` after success)."""
    return jitter(sync_frequency, WORKER_RESYNC_INTERVAL_JITTER_FACTOR, rng)


def token_jitter(rng: random.Random) -> int:
    """`requiresRefresh`'s jitter: whole seconds, 0 to `TOKEN_MAX_JITTER - 1`."""
    return int(rng.random() * TOKEN_MAX_JITTER)


def token_refresh_at(expires: float, expiration_seconds: int, jitter_seconds: int) -> float:
    """When `requiresRefresh` first says yes for a token expiring at `expires` (epoch seconds) that was asked for
    `expiration_seconds`: past `maxTTL` minus the jitter after it was issued, or past 20 % of its lifetime plus the
    jitter before its expiry, whichever comes first."""
    issued = expires - expiration_seconds
    return min(issued + TOKEN_MAX_TTL - jitter_seconds, expires - (expiration_seconds * 20) // 100 - jitter_seconds)


def requires_refresh(now: float, expires: float, expiration_seconds: int, jitter_seconds: int) -> bool:
    """`requiresRefresh` for a token expiring at `expires` that was asked for `expiration_seconds`, checked at
    `now` with a jitter drawn for this check: past `token_refresh_at` (each bound is `now.After`, strict), or
    issued after `now`."""
    issued = expires - expiration_seconds
    return now > token_refresh_at(expires, expiration_seconds, jitter_seconds) or now < issued
