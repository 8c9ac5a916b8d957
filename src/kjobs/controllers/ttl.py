"""The TTL-after-finished controller (`pkg/controller/ttlafterfinished`): finished Jobs deleted after their TTL.

A Job with `spec.ttlSecondsAfterFinished` whose `Complete` or `Failed` condition is True expires
`ttlSecondsAfterFinished` seconds after that condition's lastTransitionTime. Until then it is requeued for the
moment it expires; then the Job is read again from the API (the TTL may have been changed) and, if still
expired, deleted with propagationPolicy Foreground and a uid precondition, so its pods go first. Jobs being
deleted, or without a TTL, are ignored.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kjobs.api.errors import ApiError
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.informer import InformerFactory, Key, key_of
from kjobs.client.resources import JOBS
from kjobs.client.workqueue import WorkerPool, WorkQueue
from kjobs.clock import Clock
from kjobs.controllers.disruption_metrics import TTLMetrics

log = logging.getLogger(__name__)


class TTLError(Exception):
    """A finished Job whose finish time cannot be found (Kubernetes' message)."""


@dataclass(frozen=True)
class TTLSettings:
    """Workers (kube-controller-manager's `--concurrent-ttl-after-finished-syncs`, 5)."""

    workers: int = 5


def needs_cleanup(job: Obj) -> bool:
    """A TTL is set and the Job has finished (Complete or Failed is True)."""
    if (job.get("spec") or {}).get("ttlSecondsAfterFinished") is None:
        return False
    return any(
        c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
        for c in (job.get("status") or {}).get("conditions") or []
    )


def finish_time(job: Obj) -> float:
    """`jobFinishTime`: lastTransitionTime of the True Complete/Failed condition."""
    meta = job.get("metadata") or {}
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond.get("type") in ("Complete", "Failed") and cond.get("status") == "True":
            stamp = cond.get("lastTransitionTime")
            if not stamp:
                raise TTLError(
                    f"unable to find the time when the Job {meta.get('namespace')}/{meta.get('name')} finished"
                )
            return parse_time(str(stamp))
    raise TTLError(f"unable to find the status of the finished Job {meta.get('namespace')}/{meta.get('name')}")


def time_left(job: Obj, now: float) -> tuple[float, float] | None:
    """(seconds until expiry, expiry time) for a Job that needs cleanup and is not being deleted; else None."""
    if (job.get("metadata") or {}).get("deletionTimestamp") or not needs_cleanup(job):
        return None
    finished = finish_time(job)
    if finished > now:
        # upstream's words (`timeLeft`, pkg/controller/ttlafterfinished/ttlafterfinished_controller.go)
        log.info(
            "Warning: Found Job finished in the future. This is likely due to time skew in the cluster. "
            "Job cleanup will be deferred. job=%s/%s",
            *key_of(job),
        )
    expires = finished + float((job.get("spec") or {})["ttlSecondsAfterFinished"])
    return expires - now, expires


@dataclass(eq=False, repr=False)
class TTLAfterFinishedController:
    """Deletes finished Jobs once their `ttlSecondsAfterFinished` has passed."""

    client: Client
    clock: Clock
    settings: TTLSettings = field(default_factory=TTLSettings)
    metrics: TTLMetrics = field(default_factory=TTLMetrics)
    shared: InformerFactory | None = None
    """Informers shared with other controllers (a private set when None)."""

    def __post_init__(self) -> None:
        factory = self.shared or InformerFactory(self.client, clock=self.clock)
        self.jobs = factory.informer(JOBS)
        self.queue: WorkQueue[Key] = WorkQueue(clock=self.clock)
        self._workers = WorkerPool(self.queue, self.process, name="ttl", workers=self.settings.workers)

    async def start(self) -> None:
        """Start the Job informer, then the workers."""
        self.jobs.add_handler(self._on_job)
        self.jobs.start()
        await self.jobs.synced.wait()
        self._workers.start()

    async def stop(self) -> None:
        """Stop workers and the informer."""
        await self._workers.stop()
        await self.jobs.stop()

    def _on_job(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None and not (new.get("metadata") or {}).get("deletionTimestamp") and needs_cleanup(new):
            self.queue.add(key_of(new))

    def _expired(self, job: Obj, key: Key) -> float | None:
        """The expiry time if the TTL has passed (else requeue for when it will)."""
        left = time_left(job, self.clock.now())
        if left is None:
            return None
        if left[0] > 0:
            self.queue.add_after(key, left[0])
            return None
        return left[1]

    async def process(self, key: Key) -> None:
        """`processJob`: check the cached Job, re-check the live one, delete it in the foreground."""
        job = self.jobs.get(*key)
        if job is None or self._expired(job, key) is None:
            return
        try:
            fresh = await self.client.get(JOBS, key[0], key[1])
        except ApiError as exc:
            if exc.code == 404:
                return
            raise
        expired_at = self._expired(fresh, key)
        if expired_at is None:
            return
        log.info("cleaning up job %s/%s", *key)
        await self.client.delete(
            JOBS,
            key[0],
            key[1],
            propagation_policy="Foreground",
            preconditions={"uid": (fresh.get("metadata") or {}).get("uid")},
        )
        self.metrics.deletion_duration.observe(max(0.0, self.clock.now() - expired_at))
