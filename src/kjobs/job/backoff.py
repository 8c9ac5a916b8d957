"""Pod-creation back-off after failures (Kubernetes' `backoff_utils.go`).

A Job's global record counts the failures since its last success; the delay before creating replacements is
base · 2^(n−1), capped. Per-index Jobs use the failure counts carried on the index's last failed pod instead.
Ignored failures count here too: they delay recreation even though they do not count toward backoffLimit.
"""

from __future__ import annotations

from dataclasses import dataclass

from kjobs.api.types import Obj
from kjobs.job import pods as P


@dataclass(frozen=True, slots=True)
class BackoffRecord:
    """Failures since the Job's last success and when the latest of them finished."""

    failures_after_last_success: int = 0
    last_failure_time: float | None = None


def next_backoff_record(record: BackoffRecord, new_succeeded: list[Obj], new_failed: list[Obj]) -> BackoffRecord:
    """The record after this sync's newly finished pods (not yet counted ones)."""
    if not new_failed:
        return BackoffRecord() if new_succeeded else record
    failed_times = sorted(P.finish_time(p) for p in new_failed)
    if not new_succeeded:
        return BackoffRecord(record.failures_after_last_success + len(new_failed), failed_times[-1])
    last_success = max(P.finish_time(p) for p in new_succeeded)
    after = [t for t in failed_times if t > last_success]
    return BackoffRecord(len(after), after[-1] if after else None)


def backoff_delay(failures: int, *, base: float, cap: float) -> float:
    """min(base · 2^(failures−1), cap); 0 without failures."""
    if failures <= 0:
        return 0.0
    delay = base
    for _ in range(1, failures):
        delay *= 2
        if delay >= cap:
            return cap
    return delay


def remaining_time(failures: int, last_failure: float | None, *, now: float, base: float, cap: float) -> float:
    """How long creations must still wait; 0 when the back-off has expired."""
    if failures <= 0 or last_failure is None:
        return 0.0
    delay = backoff_delay(failures, base=base, cap=cap)
    elapsed = now - last_failure
    return 0.0 if delay < elapsed else delay - elapsed


def remaining_time_per_index(last_failed_pod: Obj | None, *, now: float, base: float, cap: float) -> float:
    """Back-off left for an index whose last failed pod is given (None: no failure, no wait)."""
    if last_failed_pod is None:
        return 0.0
    failures = P.index_absolute_failure_count(last_failed_pod) + 1
    return remaining_time(failures, P.finish_time(last_failed_pod), now=now, base=base, cap=cap)
