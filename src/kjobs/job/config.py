"""Tunables of the Job controller and the in-memory bookkeeping it carries between syncs of one Job."""

from __future__ import annotations

from dataclasses import dataclass, field

from kjobs.api.names import JOB_CONTROLLER_NAME
from kjobs.job.backoff import BackoffRecord


@dataclass(frozen=True, slots=True)
class SyncConfig:
    """Kubernetes' exported knobs, with its defaults (pod-failure back-off 10 s doubling to 10 min, 500 caps)."""

    controller_name: str = JOB_CONTROLLER_NAME
    """The `spec.managedBy` value this controller owns (unset managedBy means the built-in controller's)."""
    pod_failure_backoff: float = 10.0
    max_pod_failure_backoff: float = 600.0
    max_uncounted_pods: int = 500
    max_pod_create_delete_per_sync: int = 500


@dataclass(frozen=True, slots=True)
class Bookkeeping:
    """What the controller remembers about a Job between syncs, handed to the pure sync.

    `expectations_satisfied` is false while pod creations/deletions the controller issued have not been observed
    in its cache yet; `expected_rm_finalizers` are pod UIDs whose finalizer removal is in flight.
    """

    backoff: BackoffRecord = field(default_factory=BackoffRecord)
    expectations_satisfied: bool = True
    expected_rm_finalizers: frozenset[str] = frozenset()
