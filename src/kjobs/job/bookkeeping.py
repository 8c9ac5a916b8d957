"""The Job controller's memory between syncs: pod-failure back-off records and in-flight expectations.

Expectations keep a sync from acting on a stale cache: after issuing n creations the controller waits until it
has observed them (or a TTL passes, as Kubernetes' 5-minute ExpectationsTimeout) before managing pods again.
Finalizer expectations remember pods whose tracking finalizer removal is in flight so they are not counted twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kjobs.job.backoff import BackoffRecord
from kjobs.job.config import Bookkeeping

EXPECTATIONS_TIMEOUT = 300.0


@dataclass
class _Expectations:
    adds: int = 0
    dels: int = 0
    since: float = 0.0


@dataclass
class BookkeepingStore:
    """Per-Job records keyed by `namespace/name`; mutated only by the controller shell."""

    backoff: dict[str, BackoffRecord] = field(default_factory=dict)
    expectations: dict[str, _Expectations] = field(default_factory=dict)
    finalizers: dict[str, set[str]] = field(default_factory=dict)

    def snapshot(self, key: str, *, now: float) -> Bookkeeping:
        """What the pure sync needs to know about `key`."""
        return Bookkeeping(
            backoff=self.backoff.get(key, BackoffRecord()),
            expectations_satisfied=self.satisfied(key, now=now),
            expected_rm_finalizers=frozenset(self.finalizers.get(key, ())),
        )

    def satisfied(self, key: str, *, now: float) -> bool:
        """No creations/deletions in flight, or they have been pending longer than the timeout."""
        exp = self.expectations.get(key)
        if exp is None or (exp.adds <= 0 and exp.dels <= 0):
            return True
        return now - exp.since > EXPECTATIONS_TIMEOUT

    def expect(self, key: str, *, adds: int = 0, dels: int = 0, now: float) -> None:
        """Record that `adds` creations and `dels` deletions were issued (replaces older expectations)."""
        self.expectations[key] = _Expectations(adds=adds, dels=dels, since=now)

    def creation_observed(self, key: str) -> None:
        """A pod creation was seen (or will never be: its create call failed)."""
        exp = self.expectations.get(key)
        if exp is not None:
            exp.adds -= 1

    def deletion_observed(self, key: str) -> None:
        """A pod deletion was seen (or will never be)."""
        exp = self.expectations.get(key)
        if exp is not None:
            exp.dels -= 1

    def expect_finalizers_removed(self, key: str, uids: list[str]) -> None:
        """Finalizer removals for these pods are in flight."""
        self.finalizers.setdefault(key, set()).update(uids)

    def finalizer_removal_observed(self, key: str, uid: str) -> None:
        """The pod no longer has the finalizer (or the patch failed and will not happen)."""
        pending = self.finalizers.get(key)
        if pending is not None:
            pending.discard(uid)

    def job_deleted(self, key: str) -> None:
        """The Job was deleted: a new Job of the same name must not wait on its creations or back-off
        (`deleteJob` drops both, pkg/controller/job/job_controller.go); finalizer expectations stay until the
        deleted Job's sync, which forgets everything."""
        self.backoff.pop(key, None)
        self.expectations.pop(key, None)

    def forget(self, key: str) -> None:
        """The Job is gone or finished: drop everything about it."""
        self.backoff.pop(key, None)
        self.expectations.pop(key, None)
        self.finalizers.pop(key, None)
