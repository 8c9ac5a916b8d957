"""The CronJob controller (`pkg/controller/cronjob/cronjob_controllerv2.go`): a Job for each scheduled time.

Each sync of a CronJob, as the v2 controller's `sync`:
1. its Jobs are those whose controller reference names it; finished ones beyond the history limits are deleted
   (`SuccessfulDelete`);
2. Jobs are reconciled with `status.active`: a finished active Job leaves it (`SawCompletedJob`), a Complete Job
   sets `status.lastSuccessfulTime`, an unfinished Job it does not list is `UnexpectedJob`, a listed Job that is
   gone (checked with a live GET) is `MissingJob`;
3. unless the CronJob is being deleted, its time zone is unknown (`UnknownTimeZone`), it is suspended or its
   schedule cannot be parsed (`UnparseableSchedule`, `InvalidSchedule`), the most recent due time is started:
   not if past `startingDeadlineSeconds` (`MissSchedule`), already started, or blocked by
   `concurrencyPolicy: Forbid` (`JobAlreadyActive`); `Replace` deletes the active Jobs first; the Job is created
   (`SuccessfulCreate`; an existing one of that name it controls is added to `active`), and `status.active` and
   `status.lastScheduleTime` are written in one status update;
4. the CronJob is queued again for just after its next scheduled time (`kjobs.cronjob.timing.requeue_after`).

A change of the schedule or time zone requeues it for the new schedule's next time; any other change, and every
change of one of its Jobs, syncs it now. The time all of it reads is the injected `Clock`, so a CronJob runs on
virtual time in tests and simulations.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime

from kjobs.api import cron
from kjobs.api.errors import ApiError
from kjobs.api.timeutil import format_time, parse_time
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.events import EventRecorder
from kjobs.client.informer import InformerFactory, Key, key_of
from kjobs.client.resources import CRONJOBS, JOBS
from kjobs.client.workqueue import WorkerPool, WorkQueue
from kjobs.clock import Clock
from kjobs.controllers.disruption_metrics import CronJobMetrics
from kjobs.cronjob import jobs as cjobs
from kjobs.cronjob import timing

log = logging.getLogger(__name__)

COMPONENT = "cronjob-controller"


@dataclass(frozen=True)
class CronJobSettings:
    """Workers (kube-controller-manager's `--concurrent-cron-job-syncs`, 5)."""

    workers: int = 5


@dataclass
class SyncResult:
    """What `syncCronJob` returns: seconds until the CronJob is synced again (None: on its next change only),
    whether its status must be written, and the error that stopped the sync."""

    requeue_after: float | None = None
    update_status: bool = False
    error: Exception | None = None


def _meta(obj: Obj) -> Obj:
    meta: Obj = obj.get("metadata") or {}
    return meta


def _status(cronjob: Obj) -> Obj:
    status = cronjob.get("status")
    if not isinstance(status, dict):
        status = cronjob["status"] = {}
    return status


def _active(cronjob: Obj) -> list[Obj]:
    return list((cronjob.get("status") or {}).get("active") or [])


def _in_active(cronjob: Obj, uid: str) -> bool:
    return any(ref.get("uid") == uid for ref in _active(cronjob))


def _drop_active(cronjob: Obj, uid: str) -> None:
    """`deleteFromActiveList`; an empty list is left out, as Go's `omitempty` leaves it out of the JSON."""
    remaining = [ref for ref in _active(cronjob) if ref.get("uid") != uid]
    if remaining:
        _status(cronjob)["active"] = remaining
    else:
        _status(cronjob).pop("active", None)


def _reference(job: Obj) -> Obj:
    """`ref.GetReference` of a Job, as `status.active` lists it."""
    meta = _meta(job)
    return {
        "kind": "Job",
        "namespace": meta.get("namespace"),
        "name": meta.get("name"),
        "uid": meta.get("uid"),
        "apiVersion": "batch/v1",
        "resourceVersion": meta.get("resourceVersion"),
    }


def _rfc1123z(moment: float) -> str:
    """Go's `time.RFC1123Z` of a UTC time (the MissSchedule event's format)."""
    return datetime.fromtimestamp(moment, UTC).strftime("%a, %d %b %Y %H:%M:%S +0000")


@dataclass(eq=False, repr=False)
class CronJobController:
    """Creates each CronJob's Jobs at their scheduled times and keeps their history to its limits."""

    client: Client
    clock: Clock
    settings: CronJobSettings = field(default_factory=CronJobSettings)
    metrics: CronJobMetrics = field(default_factory=CronJobMetrics)
    shared: InformerFactory | None = None
    """Informers shared with other controllers (a private set when None)."""

    def __post_init__(self) -> None:
        factory = self.shared or InformerFactory(self.client, clock=self.clock)
        self.cronjobs = factory.informer(CRONJOBS)
        self.jobs = factory.informer(JOBS)
        self.events = EventRecorder(self.client, component=COMPONENT, clock=self.clock)
        self.queue: WorkQueue[Key] = WorkQueue(clock=self.clock)
        self._workers = WorkerPool(self.queue, self.sync, name="cronjob", workers=self.settings.workers)

    async def start(self) -> None:
        """Start the informers, then the workers."""
        self.cronjobs.add_handler(self._on_cronjob)
        self.jobs.add_handler(self._on_job)
        self.cronjobs.start()
        self.jobs.start()
        await self.cronjobs.synced.wait()
        await self.jobs.synced.wait()
        self._workers.start()

    async def stop(self) -> None:
        """Stop the workers and informers; write what events are pending."""
        await self._workers.stop()
        await self.cronjobs.stop()
        await self.jobs.stop()
        await self.events.flush()

    # ----------------------------------------------------------------------------------------------- handlers

    def _on_cronjob(self, old: Obj | None, new: Obj | None) -> None:
        """`updateCronJob`: a new schedule or time zone requeues for its next time; anything else syncs now."""
        if old is None or new is None:
            self.queue.add(key_of(new or old or {}))
            return
        old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
        if old_spec.get("schedule") == new_spec.get("schedule") and old_spec.get("timeZone") == new_spec.get(
            "timeZone"
        ):
            self.queue.add(key_of(new))
            return
        try:
            schedule = cron.parse_standard(timing.schedule_text(new))
        except cron.CronError:
            self.events.event(
                new,
                "Warning",
                "UnParseableCronJobSchedule",
                f"unparseable schedule for cronjob: {new_spec.get('schedule') or ''}",
            )
            return
        self.queue.add_after(key_of(new), max(0.0, timing.requeue_after(new, self.clock.now(), schedule)))

    def _owner(self, job: Obj) -> Key | None:
        """`resolveControllerRef`: the CronJob (by name, then uid) that controls `job`."""
        for ref in _meta(job).get("ownerReferences") or []:
            if ref.get("controller") is not True:
                continue
            if ref.get("kind") != "CronJob":
                return None
            namespace = str(_meta(job).get("namespace") or "")
            owner = self.cronjobs.get(namespace, str(ref.get("name")))
            if owner is None or _meta(owner).get("uid") != ref.get("uid"):
                return None
            return namespace, str(ref.get("name"))
        return None

    def _on_job(self, old: Obj | None, new: Obj | None) -> None:
        if old is not None and new is not None:
            if _meta(old).get("resourceVersion") == _meta(new).get("resourceVersion"):
                return
            if _meta(old).get("ownerReferences") != _meta(new).get("ownerReferences"):
                previous = self._owner(old)
                if previous is not None:
                    self.queue.add(previous)
        owner = self._owner(new or old or {})
        if owner is not None:
            self.queue.add(owner)

    # --------------------------------------------------------------------------------------------------- sync

    async def sync(self, key: Key) -> None:
        """One CronJob: clean up, reconcile, start what is due, write the status once, requeue.

        As `sync` (cronjob_controllerv2.go), the status is written even when the sync stopped on an error (a
        Job deleted by the history limits or by `Replace` before a create that failed leaves `status.active`),
        and the error then retries the key with back-off unless a requeue time was set."""
        cached = self.cronjobs.get(*key)
        if cached is None:
            return
        children = self.jobs_to_be_reconciled(cached)
        cronjob = copy.deepcopy(cached)
        cleaned = await self._clean_up(cronjob, children)
        result = await self.sync_cronjob(cronjob, children)
        if result.error is not None:
            log.info("error reconciling cronjob %s/%s: %s", key[0], key[1], result.error)
        if cleaned or result.update_status:
            await self.client.update(CRONJOBS, key[0], cronjob, subresource="status", handover=True)
        if result.requeue_after is not None:
            self.queue.add_after(key, max(0.0, result.requeue_after))
            return
        if result.error is not None:
            raise result.error

    def jobs_to_be_reconciled(self, cronjob: Obj) -> list[Obj]:
        """`getJobsToBeReconciled`: the Jobs in the CronJob's namespace whose controller reference names it,
        whatever their labels (the template's may have changed since)."""
        namespace, name = key_of(cronjob)
        return [j for j in self.jobs.list(namespace) if cjobs.controller_uid(j, name) is not None]

    async def _delete_job(self, cronjob: Obj, job: Obj) -> bool:
        """`deleteJob`: delete in the background, drop from `active`, `SuccessfulDelete` (or `FailedDelete`)."""
        meta = _meta(job)
        try:
            await self.client.delete(
                JOBS, str(meta.get("namespace")), str(meta.get("name")), propagation_policy="Background"
            )
        except ApiError as exc:
            self.events.event(cronjob, "Warning", "FailedDelete", f"Deleted job: {exc.message}")
            log.error("deleting job %s of cronjob %s: %s", meta.get("name"), key_of(cronjob), exc)
            return False
        _drop_active(cronjob, str(meta.get("uid")))
        self.events.event(cronjob, "Normal", "SuccessfulDelete", f"Deleted job {meta.get('name')}")
        return True

    async def _clean_up(self, cronjob: Obj, children: list[Obj]) -> bool:
        """`cleanupFinishedJobs`."""
        changed = False
        for job in cjobs.jobs_over_history(cronjob, children):
            changed = await self._delete_job(cronjob, job) or changed
        return changed

    async def _reconcile_jobs(self, cronjob: Obj, children: list[Obj], result: SyncResult) -> Obj:
        """The first half of `syncCronJob`: `status.active` and `lastSuccessfulTime` against the Jobs."""
        namespace, name = key_of(cronjob)
        uids = set()
        for job in children:
            uid = str(_meta(job).get("uid"))
            uids.add(uid)
            listed = _in_active(cronjob, uid)
            finished = cjobs.finished_condition(job)
            if not listed and finished is None:
                fresh = await self.client.get(CRONJOBS, namespace, name)
                if _in_active(fresh, uid):
                    cronjob = copy.deepcopy(fresh)
                    continue
                self.events.event(
                    cronjob,
                    "Warning",
                    "UnexpectedJob",
                    f"Saw a job that the controller did not create or forgot: {_meta(job).get('name')}",
                )
            elif listed and finished is not None:
                _drop_active(cronjob, uid)
                message = f"Saw completed job: {_meta(job).get('name')}, status: {finished}"
                self.events.event(cronjob, "Normal", "SawCompletedJob", message)
                result.update_status = True
            if finished == "Complete":
                completed = (job.get("status") or {}).get("completionTime")
                last = (cronjob.get("status") or {}).get("lastSuccessfulTime")
                if completed and (not last or _later(str(completed), str(last))):
                    _status(cronjob)["lastSuccessfulTime"] = completed
                    result.update_status = True
        for ref in _active(cronjob):
            if ref.get("uid") in uids:
                continue
            try:
                await self.client.get(JOBS, str(ref.get("namespace") or namespace), str(ref.get("name")))
            except ApiError as exc:
                if exc.code != 404:
                    raise
                self.events.event(cronjob, "Normal", "MissingJob", f"Active job went missing: {ref.get('name')}")
                _drop_active(cronjob, str(ref.get("uid")))
                result.update_status = True
        return cronjob

    async def sync_cronjob(self, cronjob: Obj, jobs: list[Obj]) -> SyncResult:
        """`syncCronJob`: reconcile `cronjob` (changed in place) with `jobs`, its Jobs, and start the Job that is
        due. An error stops it and is returned with what was changed so far, for `sync` to write."""
        result = SyncResult()
        try:
            result.requeue_after = await self._sync_steps(cronjob, jobs, result)
        except Exception as exc:  # returned, as syncCronJob returns its error
            result.error = exc
        return result

    async def _sync_steps(self, cronjob: Obj, children: list[Obj], result: SyncResult) -> float | None:
        """The steps of `syncCronJob`; seconds until the next sync, or None."""
        reconciled = await self._reconcile_jobs(cronjob, children, result)
        if reconciled is not cronjob:  # the live CronJob listed the Job: carry on from it
            cronjob.clear()
            cronjob.update(reconciled)
        now = self.clock.now()
        spec = cronjob.get("spec") or {}
        if _meta(cronjob).get("deletionTimestamp"):
            return None
        zone = spec.get("timeZone")
        if zone is not None:
            try:
                cron.load_zone(str(zone))
            except cron.CronError as exc:
                self.events.event(cronjob, "Warning", "UnknownTimeZone", f'invalid timeZone: "{zone}": {exc}')
                return None
        if spec.get("suspend") is True:
            return None
        text = timing.schedule_text(cronjob)
        if "TZ" in str(spec.get("schedule") or ""):
            self.events.event(
                cronjob,
                "Warning",
                "UnsupportedSchedule",
                f'CRON_TZ or TZ used in schedule "{spec.get("schedule")}" is not officially supported, see '
                "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
            )
        try:
            schedule = cron.parse_standard(text)
        except cron.CronError as exc:
            self.events.event(
                cronjob, "Warning", "UnparseableSchedule", f'unparseable schedule: "{spec.get("schedule")}" : {exc}'
            )
            return None
        try:
            scheduled, missed = timing.next_schedule_time(cronjob, now, schedule)
        except timing.ScheduleError as exc:
            self.events.event(
                cronjob, "Warning", "InvalidSchedule", f"invalid schedule: {spec.get('schedule')} : {exc}"
            )
            return None
        if missed is timing.Missed.MANY and scheduled is not None:
            self.events.event(
                cronjob,
                "Warning",
                "TooManyMissedTimes",
                "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
            )
        if scheduled is None:
            return timing.requeue_after(cronjob, now, schedule)
        deadline = spec.get("startingDeadlineSeconds")
        if isinstance(deadline, int) and scheduled + deadline < now:
            self.events.event(
                cronjob, "Warning", "MissSchedule", f"Missed scheduled time to start a job: {_rfc1123z(scheduled)}"
            )
            return timing.requeue_after(cronjob, now, schedule)
        name = cjobs.job_name(str(_meta(cronjob).get("name")), scheduled)
        last = (cronjob.get("status") or {}).get("lastScheduleTime")
        if any(ref.get("name") == name for ref in _active(cronjob)) or last == format_time(scheduled):
            return timing.requeue_after(cronjob, now, schedule)
        if spec.get("concurrencyPolicy") == "Forbid" and _active(cronjob):
            self.events.event(
                cronjob,
                "Normal",
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is Forbid",
            )
            return timing.requeue_after(cronjob, now, schedule)
        if spec.get("concurrencyPolicy") == "Replace":
            for ref in _active(cronjob):
                namespace = str(ref.get("namespace") or _meta(cronjob).get("namespace"))
                try:
                    job = await self.client.get(JOBS, namespace, str(ref.get("name")))
                except ApiError as exc:
                    self.events.event(cronjob, "Warning", "FailedGet", f"Get job: {exc.message}")
                    raise
                if not await self._delete_job(cronjob, job):
                    raise RuntimeError(f"could not replace job {namespace}/{ref.get('name')}")
                result.update_status = True
        created = await self._create(cronjob, scheduled)
        if created is None:
            return None
        _status(cronjob)["active"] = [*_active(cronjob), _reference(created)]
        _status(cronjob)["lastScheduleTime"] = format_time(scheduled)
        result.update_status = True
        return timing.requeue_after(cronjob, now, schedule)

    async def _create(self, cronjob: Obj, scheduled: float) -> Obj | None:
        """Create the Job for `scheduled`; an existing one of its name that this CronJob controls (a create whose
        status write was lost) is taken as created if `active` lacks it. None: nothing to record."""
        namespace = str(_meta(cronjob).get("namespace"))
        request = cjobs.job_from_template(cronjob, scheduled)
        try:
            created = await self.client.create(JOBS, namespace, request, handover=True)
        except ApiError as exc:
            if exc.reason == "AlreadyExists":
                existing = await self.client.get(JOBS, namespace, str(request["metadata"]["name"]))
                owned = cjobs.controller_uid(existing, str(_meta(cronjob).get("name")))
                if owned != _meta(cronjob).get("uid") or _in_active(cronjob, str(_meta(existing).get("uid"))):
                    return None
                log.info("job %s/%s already exists", namespace, _meta(existing).get("name"))
                return existing
            if not exc.has_cause("NamespaceTerminating"):
                self.events.event(cronjob, "Warning", "FailedCreate", f"Error creating job: {exc.message}")
            raise
        self.metrics.creation_skew.observe(parse_time(str(_meta(created).get("creationTimestamp"))) - scheduled)
        self.events.event(cronjob, "Normal", "SuccessfulCreate", f"Created job {_meta(created).get('name')}")
        return created


def _later(a: str, b: str) -> bool:
    """Whether RFC 3339 time `a` is after `b`."""
    return parse_time(a) > parse_time(b)
