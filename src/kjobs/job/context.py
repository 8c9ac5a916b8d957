"""What one sync of one Job knows: the Job, its pods, and everything derived from them (Go's `syncJobCtx`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kjobs.api.names import (
    COND_COMPLETE,
    COND_FAILED,
    JOB_CONTROLLER_NAME,
    JOB_INDEX_FAILURE_COUNT_ANNOTATION,
    MAX_INT32,
)
from kjobs.api.types import Obj
from kjobs.job import conditions as C
from kjobs.job import pods as P
from kjobs.job.backoff import BackoffRecord
from kjobs.job.intervals import Intervals
from kjobs.policy import FAIL_INDEX, PolicyDecision, match_pod_failure_policy

FinishingPod = tuple[Obj, str, int]
"""A finishing pod with its `uid` and `completion_index` (`SyncContext.finishing`)."""


@dataclass
class SyncContext:
    """Mutable working state of one sync; `status` is the JobStatus being built (a private copy)."""

    job: Obj
    pods: Sequence[Obj]
    """Every pod the Job owns (a caller may build it lazily, on first read: most syncs never read it whole)."""
    status: Obj
    now: float
    active_pods: list[Obj]
    ready: int
    terminating: int
    uncounted_succeeded: frozenset[str]
    uncounted_failed: frozenset[str]
    expected_rm_finalizers: frozenset[str]
    tracked_pods: list[Obj]
    """The pods still carrying the tracking finalizer (not yet counted in the status), in `pods` order: the
    few every counting pass looks at, next to the many already counted."""
    finished_tracked: list[Obj] | None = None
    """The tracked pods that are not active (in a terminal phase, or being deleted), in `pods` order; None: not
    kept apart (read `tracked_pods`). Only these can be counted succeeded or failed (`is_pod_failed` is false for
    an active pod), so the counting passes read them alone: at a parallelism of thousands, the thousands of
    running pods every sync would otherwise test again (docs/perf44.md)."""
    succeeded: int = 0
    failed: int = 0
    finished_condition: Obj | None = None
    prev_succeeded_indexes: Intervals = field(default_factory=Intervals)
    succeeded_indexes: Intervals = field(default_factory=Intervals)
    failed_indexes: Intervals | None = None
    pods_with_delayed_deletion: dict[int, Obj] = field(default_factory=dict)
    new_backoff: BackoffRecord = field(default_factory=BackoffRecord)
    _active_indexes: list[int] | None = field(default=None, repr=False, compare=False)
    _tracked_uids: list[str] | None = field(default=None, repr=False, compare=False)
    _finishing: list[FinishingPod] | None = field(default=None, repr=False, compare=False)

    def tracked_uids(self) -> list[str]:
        """`uid` of each tracked pod, in `tracked_pods` order: handed over by `new_context` from the facts the Job
        controller read when each pod arrived, so that a sync does not read thousands of active pods for them."""
        if self._tracked_uids is None:
            self._tracked_uids = [P.uid(p) for p in self.tracked_pods]
        return self._tracked_uids

    def active_indexes(self) -> list[int]:
        """`completion_index` of each active pod, in `active_pods` order: read once a sync, by the passes that
        each needed them (the removal check, the pending indexes, the held failed pods)."""
        if self._active_indexes is None:
            self._active_indexes = [P.completion_index(p) for p in self.active_pods]
        return self._active_indexes

    def tracked(self) -> list[FinishingPod]:
        """(pod, `uid`, `completion_index`) of each of `tracked_pods`, the indexes read here: for the rare sync that
        may strip every tracked pod's finalizer (the Job deleted or finishing)."""
        uids = self.tracked_uids()
        return [(p, uids[i], P.completion_index(p)) for i, p in enumerate(self.tracked_pods)]

    def finishing(self) -> list[FinishingPod]:
        """(pod, `uid`, `completion_index`) of each of `finishing_pods`, in that order: handed over by `new_context`
        from the facts the Job controller read when each pod arrived, so that the counting passes (new finished
        pods, succeeded and failed indexes, held pods, the tracking step) do not read each pod's UID and index
        again, about three times a sync each (docs/finished48.md)."""
        if self.finished_tracked is None:  # not kept apart
            return self.tracked()
        if self._finishing is None:
            self._finishing = [(p, P.uid(p), P.completion_index(p)) for p in self.finished_tracked]
        return self._finishing

    @property
    def finishing_pods(self) -> list[Obj]:
        """`finished_tracked`, or the tracked pods when they were not kept apart."""
        return self.tracked_pods if self.finished_tracked is None else self.finished_tracked

    @property
    def spec(self) -> Obj:
        """The Job spec."""
        value: Obj = self.job.get("spec") or {}
        return value


def spec_of(job: Obj) -> Obj:
    """The Job spec (empty when absent). This module's own readers spell it inline, `(job.get("spec") or {})`:
    they run for every pod of each sync (a call less each)."""
    value: Obj = job.get("spec") or {}
    return value


def is_indexed(job: Obj) -> bool:
    """completionMode Indexed."""
    return (job.get("spec") or {}).get("completionMode") == "Indexed"


def has_backoff_limit_per_index(job: Obj) -> bool:
    """backoffLimitPerIndex is set."""
    return (job.get("spec") or {}).get("backoffLimitPerIndex") is not None


def completions(job: Obj) -> int | None:
    """spec.completions, or None for work-queue Jobs."""
    value = (job.get("spec") or {}).get("completions")
    return int(value) if value is not None else None


def backoff_limit(job: Obj) -> int:
    """spec.backoffLimit (6 when absent, as defaulting would set; MaxInt32 with backoffLimitPerIndex)."""
    value = (job.get("spec") or {}).get("backoffLimit")
    if value is None:
        return MAX_INT32 if has_backoff_limit_per_index(job) else 6
    return int(value)


def is_suspended(job: Obj) -> bool:
    """spec.suspend is true."""
    return (job.get("spec") or {}).get("suspend") is True


def only_replace_failed_pods(job: Obj) -> bool:
    """podReplacementPolicy Failed: terminating pods are not failures and still occupy a slot."""
    return (job.get("spec") or {}).get("podReplacementPolicy") == "Failed"


def restart_policy(job: Obj) -> str:
    """The pod template's restartPolicy."""
    return str((((job.get("spec") or {}).get("template") or {}).get("spec") or {}).get("restartPolicy") or "")


def has_restart_limit(job: Obj) -> bool:
    """`restartPolicy: OnFailure` with a pod restart limit (`maxRestartTimes`, gate JobPodRestartLimit; the API
    drops the field when the gate is off): the Job counts failed pods, not container restarts, and its
    podFailurePolicy judges each pod's last termination (docs/onfailure-pod-failure-policy.md)."""
    template_spec = ((job.get("spec") or {}).get("template") or {}).get("spec") or {}
    return template_spec.get("restartPolicy") == "OnFailure" and template_spec.get("maxRestartTimes") is not None


def match_policy(job: Obj, pod: Obj) -> PolicyDecision:
    """`job`'s podFailurePolicy applied to `pod`, reading last terminations when the Job has a restart limit."""
    return match_pod_failure_policy(
        (job.get("spec") or {}).get("podFailurePolicy"), pod, last_termination=has_restart_limit(job)
    )


def completion_mode(job: Obj) -> str:
    """`Indexed` or `NonIndexed` (the metrics label)."""
    return "Indexed" if is_indexed(job) else "NonIndexed"


def external_controller(job: Obj, controller_name: str = JOB_CONTROLLER_NAME) -> str | None:
    """The controller other than `controller_name` that `spec.managedBy` names (unset means the built-in one)."""
    managed_by = (job.get("spec") or {}).get("managedBy")
    owner = JOB_CONTROLLER_NAME if managed_by is None else str(managed_by)
    return None if owner == controller_name else owner


def is_finished(job: Obj) -> bool:
    """Complete=True or Failed=True: nothing left to reconcile."""
    conds = (job.get("status") or {}).get("conditions")
    if not conds:  # a running Job's usual state: read on every event of each of its pods
        return False
    return C.is_true(conds, COND_COMPLETE) or C.is_true(conds, COND_FAILED)


def is_pod_failed(pod: Obj, job: Obj) -> bool:
    """Failed phase; or, unless only Failed pods are replaced, deleted and not Succeeded (`isPodFailed`,
    pkg/controller/job/job_controller.go). Called several times a finished pod by each sync's passes, so `P.phase`,
    `only_replace_failed_pods` and `P.is_deleting` are read inline (docs/node53.md): a pod's phase is a JSON value,
    and only the string "Failed" (or "Succeeded") equals those names, as `P.phase`'s `str` of it does."""
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Failed":
        return True
    if (job.get("spec") or {}).get("podReplacementPolicy") == "Failed":
        return False
    return bool((pod.get("metadata") or {}).get("deletionTimestamp")) and phase != "Succeeded"


def is_index_failed(job: Obj, pod: Obj) -> bool:
    """Whether this pod's failure makes its index failed (FailIndex rule, or per-index limit reached)."""
    counted = False
    if is_pod_failed(pod, job):
        policy = (job.get("spec") or {}).get("podFailurePolicy")
        if policy is not None:
            decision = match_policy(job, pod)
            if decision.action == FAIL_INDEX:
                return True
            counted = decision.count_failed
        else:
            counted = True
    limit = (job.get("spec") or {}).get("backoffLimitPerIndex")
    # `P.index_failure_count`, without its call
    return counted and limit is not None and P._annotation_int32(pod, JOB_INDEX_FAILURE_COUNT_ANNOTATION) >= int(limit)


def index_within(index: int, total: int | None) -> int | None:
    """`index` (a pod's `completion_index`, read once: `SyncContext.finishing`) if it is within [0, `total`), `total`
    being `completions`, else None (the `ix < completions` tests of pkg/controller/job/indexed_job_utils.go)."""
    if index == P.UNKNOWN_INDEX or total is None or index >= total:
        return None
    return index
