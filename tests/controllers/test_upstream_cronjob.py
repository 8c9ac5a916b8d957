"""Upstream's CronJob controller tables (pkg/controller/cronjob/cronjob_controllerv2_test.go), ported row by row.

Upstream calls `syncCronJob` with a fake job control (`fakeJobControl`: records creates and deletes, answers GETs
with one Job or an error), a fake CronJob control (`fakeCJControl`: answers GETs with the "real" CronJob) and a
`FakeRecorder`, at a fixed `now`. `FakeApi` and `FakeRecorder` here are those; the controller reads the
injected `FakeClock`. Each test id is the upstream row's name (docs/upstream-cronjob.md).
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from kjobs.api import errors
from kjobs.api.timeutil import format_time, parse_time
from kjobs.api.types import Obj
from kjobs.client.resources import CRONJOBS, ResourceRef
from kjobs.clock import FakeClock
from kjobs.controllers.cronjob import CronJobController
from kjobs.cronjob.jobs import job_from_template
from kjobs.cronjob.timing import NEXT_SCHEDULE_DELTA

SHORT_DEAD = 10
MEDIUM_DEAD = 2 * 60 * 60
LONG_DEAD = 1000000
ERROR_SCHEDULE = "obvious error schedule"
ON_THE_HOUR = "0 * * * ?"
EVERY_HOUR = "@every 1h"
NEW_YORK = "America/New_York"

TOP_OF_THE_HOUR = parse_time("2016-05-19T10:00:00Z")
JUST_A_SECOND_BEFORE_THE_HOUR = TOP_OF_THE_HOUR - 1
JUST_AFTER_THE_PRIOR_HOUR = parse_time("2016-05-19T09:01:00Z")
JUST_BEFORE_THE_PRIOR_HOUR = parse_time("2016-05-19T08:59:00Z")
JUST_AFTER_THE_HOUR = parse_time("2016-05-19T10:01:00Z")
JUST_BEFORE_THE_HOUR = parse_time("2016-05-19T09:59:00Z")
JUST_BEFORE_THE_NEXT_HOUR = parse_time("2016-05-19T10:59:00Z")
WEEK_AFTER_THE_HOUR = parse_time("2016-05-26T10:00:00Z")
MINUTE, HOUR = 60.0, 3600.0


def cron_job() -> Obj:
    """Upstream's `cronJob()`."""
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {
            "name": "mycronjob",
            "namespace": "snazzycats",
            "uid": "1a2b3c",
            "creationTimestamp": format_time(JUST_BEFORE_THE_HOUR),
        },
        "spec": {
            "schedule": "* * * * ?",
            "concurrencyPolicy": "Allow",
            "jobTemplate": {
                "metadata": {"labels": {"a": "b"}, "annotations": {"x": "y"}},
                "spec": {
                    "parallelism": 1,
                    "completions": 1,
                    "template": {
                        "metadata": {"labels": {"foo": "bar"}},
                        "spec": {"containers": [{"image": "foo/bar"}]},
                    },
                },
            },
        },
    }


class FakeRecorder:
    """client-go's `record.FakeRecorder`: the events, as (type, reason, message)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Obj, type_: str, reason: str, message: str, *, field_path: str = "") -> None:
        self.events.append((type_, reason, message))

    async def flush(self) -> None:
        return None


@dataclass
class FakeApi:
    """`fakeJobControl` and `fakeCJControl` in one client: GET of a Job answers `job` (or `get_error`), GET of the
    CronJob answers `cronjob`; creates (unless `create_error`), deletes and status updates are recorded."""

    cronjob: Obj | None = None
    job: Obj | None = None
    create_error: errors.ApiError | None = None
    get_error: errors.ApiError | None = None
    created: list[Obj] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    updates: list[Obj] = field(default_factory=list)

    async def get(self, resource: ResourceRef, namespace: str | None, name: str, **kw: Any) -> Obj:
        if resource is CRONJOBS:
            if self.cronjob is None:
                raise errors.not_found("cronjobs", name, group="batch")
            return copy.deepcopy(self.cronjob)
        if self.get_error is not None:
            raise self.get_error
        if self.job is None:
            raise errors.not_found("jobs", name, group="batch")
        return copy.deepcopy(self.job)

    async def create(self, resource: ResourceRef, namespace: str | None, obj: Obj, **kw: Any) -> Obj:
        if self.create_error is not None:
            raise self.create_error
        self.created.append(copy.deepcopy(obj))
        made = copy.deepcopy(obj)
        made["metadata"].update(namespace=namespace, uid="test-uid", creationTimestamp=format_time(0))
        return made

    async def delete(self, resource: ResourceRef, namespace: str | None, name: str, **kw: Any) -> Obj:
        if self.get_error is not None:
            raise self.get_error
        self.deleted.append(name)
        return {}

    async def update(self, resource: ResourceRef, namespace: str | None, obj: Obj, **kw: Any) -> Obj:
        self.updates.append(copy.deepcopy(obj))
        return obj


def controller(api: FakeApi, now: float) -> tuple[CronJobController, FakeRecorder]:
    """A controller on `api` at `now`, with a `FakeRecorder` (informers built, never started)."""
    cronjobs = CronJobController(api, FakeClock(now))  # type: ignore[arg-type]
    recorder = FakeRecorder()
    cronjobs.events = recorder  # type: ignore[assignment]
    return cronjobs, recorder


def job_ref(job: Obj) -> Obj:
    """`getRef(job)`."""
    meta = job["metadata"]
    return {"kind": "Job", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]}


@dataclass(frozen=True)
class Row:
    """One row of TestControllerV2SyncCronJob (its fields, with upstream's zero values as defaults)."""

    policy: str = "Allow"
    suspend: bool = False
    schedule: str = ON_THE_HOUR
    time_zone: str | None = None
    deadline: int | None = None
    ran_previously: bool = False
    still_active: bool = False
    cronjob_creation_time: float | None = None
    job_creation_time: float = JUST_AFTER_THE_PRIOR_HOUR
    last_schedule_time: float | None = None
    now: float = JUST_BEFORE_THE_HOUR
    job_create_error: errors.ApiError | None = None
    job_get_error: errors.ApiError | None = None
    expect_create: bool = False
    expect_delete: bool = False
    expect_active: int = 0
    expected_warnings: tuple[str, ...] = ()
    """The warnings' reasons (upstream counts them, `expectedWarnings`)."""
    expect_err: bool = False
    expected_requeue: float | None = None
    """`expectedRequeueDuration` in seconds, for rows with `expectRequeueAfter`."""
    expect_update_status: bool = False
    job_still_not_found_in_lister: bool = False
    job_present_in_cj_active_status: bool = True


def namespace_terminating() -> errors.ApiError:
    """A create refused in a terminating namespace: a cause's `Type` is `reason` on the wire (metav1.StatusCause)."""
    cause = {"reason": "NamespaceTerminating", "message": "namespace default is being terminated"}
    return errors.ApiError(403, "Forbidden", "", details={"causes": [{**cause, "field": "metadata.namespace"}]})


def already_exists() -> errors.ApiError:
    return errors.already_exists("job", "", group="batch")


D = NEXT_SCHEDULE_DELTA
NOT_TIME = MINUTE + D
IS_TIME = HOUR - MINUTE + D

ROWS: dict[str, Row] = {
    "never ran, not valid schedule, A": Row(schedule=ERROR_SCHEDULE, expected_warnings=("UnparseableSchedule",)),
    "never ran, not valid schedule, F": Row(
        policy="Forbid", schedule=ERROR_SCHEDULE, expected_warnings=("UnparseableSchedule",)
    ),
    "never ran, not valid schedule, R": Row(
        policy="Forbid", schedule=ERROR_SCHEDULE, expected_warnings=("UnparseableSchedule",)
    ),
    "never ran, not valid time zone": Row(time_zone="bad timezone", expected_warnings=("UnknownTimeZone",)),
    "never ran, not time, A": Row(expected_requeue=NOT_TIME),
    "never ran, not time, F": Row(policy="Forbid", expected_requeue=NOT_TIME),
    "never ran, not time, R": Row(policy="Replace", expected_requeue=NOT_TIME),
    "never ran, not time in zone": Row(time_zone=NEW_YORK, expected_requeue=NOT_TIME),
    "never ran, is time, A": Row(
        now=JUST_AFTER_THE_HOUR,
        expect_create=True,
        expect_active=1,
        expected_requeue=IS_TIME,
        expect_update_status=True,
    ),
    "never ran, is time, F": Row(
        policy="Forbid",
        now=JUST_AFTER_THE_HOUR,
        expect_create=True,
        expect_active=1,
        expected_requeue=IS_TIME,
        expect_update_status=True,
    ),
    "never ran, is time, R": Row(
        policy="Replace",
        now=JUST_AFTER_THE_HOUR,
        expect_create=True,
        expect_active=1,
        expected_requeue=IS_TIME,
        expect_update_status=True,
    ),
    # the CronJobTimeZone gate is GA (always on) in kjobs: the row's answer is the gate-on one, as upstream's
    "never ran, is time in zone, but time zone disabled": Row(
        time_zone=NEW_YORK,
        now=JUST_AFTER_THE_HOUR,
        expect_create=True,
        expect_active=1,
        expected_requeue=IS_TIME,
        expect_update_status=True,
    ),
    "never ran, is time in zone": Row(
        time_zone=NEW_YORK,
        now=JUST_AFTER_THE_HOUR,
        expect_create=True,
        expect_active=1,
        expected_requeue=IS_TIME,
        expect_update_status=True,
    ),
    "never ran, is time in zone, but TZ is also set in schedule": Row(
        schedule="TZ=UTC " + ON_THE_HOUR,
        time_zone=NEW_YORK,
        now=JUST_AFTER_THE_HOUR,
        expect_create=True,
        expect_active=1,  # upstream leaves expectActive 0 but never checks it (no UpdateStatus in syncCronJob)
        expected_warnings=("UnsupportedSchedule",),
        expected_requeue=IS_TIME,
        expect_update_status=True,
    ),
    "never ran, is time, suspended": Row(suspend=True, now=JUST_AFTER_THE_HOUR),
    "never ran, is time, past deadline": Row(
        deadline=SHORT_DEAD,
        now=JUST_AFTER_THE_HOUR + MINUTE * (SHORT_DEAD + 1),
        expected_requeue=HOUR - MINUTE - MINUTE * (SHORT_DEAD + 1) + D,
    ),
    "never ran, is time, not past deadline": Row(
        deadline=LONG_DEAD,
        now=JUST_AFTER_THE_HOUR,
        expect_create=True,
        expect_active=1,
        expected_requeue=IS_TIME,
        expect_update_status=True,
    ),
    "prev ran but done, not time, A": Row(ran_previously=True, expected_requeue=NOT_TIME, expect_update_status=True),
    "prev ran but done, not time, F": Row(
        policy="Forbid", ran_previously=True, expected_requeue=NOT_TIME, expect_update_status=True
    ),
    "prev ran but done, not time, R": Row(
        policy="Replace", ran_previously=True, expected_requeue=NOT_TIME, expect_update_status=True
    ),
    "prev ran but done, is time, A": Row(
        ran_previously=True,
        now=JUST_AFTER_THE_HOUR,
        expect_create=True,
        expect_active=1,
        expected_requeue=IS_TIME,
        expect_update_status=True,
    ),
    # the Job of that name exists and this CronJob controls it: it is listed in `active` (so 1, where upstream's
    # unchecked expectActive says 0), without a create or an event
    "prev ran but done, is time, create job failed, A": Row(
        ran_previously=True,
        now=JUST_AFTER_THE_HOUR,
        job_create_error=already_exists(),
        expect_active=1,
        expect_update_status=True,
    ),
    "prev ran but done, is time, job not present in CJ active status, create job failed, A": Row(
        ran_previously=True,
        now=JUST_AFTER_THE_HOUR,
        job_create_error=already_exists(),
        expect_active=1,
        expect_update_status=True,
        job_present_in_cj_active_status=False,
    ),
    "prev ran but done, is time, F": Row(
        policy="Forbid",
        ran_previously=True,
        now=JUST_AFTER_THE_HOUR,
        expect_create=True,
        expect_active=1,
        expected_requeue=IS_TIME,
        expect_update_status=True,
    ),
    "prev ran but done, is time, R": Row(
        policy="Replace",
        ran_previously=True,
        now=JUST_AFTER_THE_HOUR,
        expect_create=True,
        expect_active=1,
        expected_requeue=IS_TIME,
        expect_update_status=True,
    ),
    "prev ran but done, is time, suspended": Row(
        suspend=True, ran_previously=True, now=JUST_AFTER_THE_HOUR, expect_update_status=True
    ),
    "prev ran but done, is time, past deadline": Row(
        deadline=SHORT_DEAD,
        ran_previously=True,
        now=JUST_AFTER_THE_HOUR,
        expected_requeue=IS_TIME,
        expect_update_status=True,
    ),
    "prev ran but done, is time, not past deadline": Row(
        deadline=LONG_DEAD,
        ran_previously=True,
        now=JUST_AFTER_THE_HOUR,
        expect_create=True,
        expect_active=1,
        expected_requeue=IS_TIME,
        expect_update_status=True,
    ),
    "still active, not time, A": Row(
        ran_previously=True, still_active=True, expect_active=1, expected_requeue=NOT_TIME
    ),
    "still active, not time, F": Row(
        policy="Forbid", ran_previously=True, still_active=True, expect_active=1, expected_requeue=NOT_TIME
    ),
    "still active, not time, R": Row(
        policy="Replace", ran_previously=True, still_active=True, expect_active=1, expected_requeue=NOT_TIME
    ),
    "still active, is time, A": Row(
        ran_previously=True,
        still_active=True,
        now=JUST_AFTER_THE_HOUR,
        expect_create=True,
        expect_active=2,
        expected_requeue=IS_TIME,
        expect_update_status=True,
    ),
    "still active, is time, F": Row(
        policy="Forbid",
        ran_previously=True,
        still_active=True,
        now=JUST_AFTER_THE_HOUR,
        expect_active=1,
        expected_requeue=IS_TIME,
    ),
    "still active, is time, R": Row(
        policy="Replace",
        ran_previously=True,
        still_active=True,
        now=JUST_AFTER_THE_HOUR,
        expect_create=True,
        expect_delete=True,
        expect_active=1,
        expected_requeue=IS_TIME,
        expect_update_status=True,
    ),
    "still active, is time, get job failed, R": Row(
        policy="Replace",
        ran_previously=True,
        still_active=True,
        now=JUST_AFTER_THE_HOUR,
        job_get_error=errors.bad_request("request is invalid"),
        expect_active=1,
        expected_warnings=("FailedGet",),
        expect_err=True,  # upstream does not set expectErr, but syncCronJob returns the GET's error
    ),
    "still active, is time, suspended": Row(
        suspend=True, ran_previously=True, still_active=True, now=JUST_AFTER_THE_HOUR, expect_active=1
    ),
    "still active, is time, past deadline": Row(
        deadline=SHORT_DEAD,
        ran_previously=True,
        still_active=True,
        now=JUST_AFTER_THE_HOUR,
        expect_active=1,
        expected_requeue=IS_TIME,
    ),
    "still active, is time, not past deadline": Row(
        deadline=LONG_DEAD,
        ran_previously=True,
        still_active=True,
        now=JUST_AFTER_THE_HOUR,
        expect_create=True,
        expect_active=2,
        expected_requeue=IS_TIME,
        expect_update_status=True,
    ),
    **{
        f"prev ran but done, long overdue, {which}, {short}": Row(
            policy=policy,
            deadline=deadline,
            ran_previously=True,
            now=WEEK_AFTER_THE_HOUR,
            expect_create=True,
            expect_active=1,
            expected_warnings=warnings,
            expected_requeue=HOUR + D,
            expect_update_status=True,
        )
        for which, deadline, warnings in (
            ("not past deadline", LONG_DEAD, ("TooManyMissedTimes",)),
            ("no deadline", None, ("TooManyMissedTimes",)),
            ("past medium deadline", MEDIUM_DEAD, ()),
            ("past short deadline", SHORT_DEAD, ()),
        )
        for short, policy in (("A", "Allow"), ("R", "Replace"), ("F", "Forbid"))
    },
    "this ran but done, time drifted back, F": Row(
        policy="Forbid",
        ran_previously=True,
        job_creation_time=JUST_AFTER_THE_HOUR,
        now=JUST_BEFORE_THE_HOUR,
        job_create_error=errors.already_exists("jobs", "", group="batch"),
        expected_requeue=NOT_TIME,
        expect_update_status=True,
        job_present_in_cj_active_status=False,
    ),
    **{
        f"this started but went missing, not past deadline, {short}": Row(
            policy=policy,
            deadline=LONG_DEAD,
            ran_previously=True,
            still_active=True,
            job_creation_time=TOP_OF_THE_HOUR + 0.1,
            now=JUST_AFTER_THE_HOUR + 0.1,
            expect_active=1,
            expected_requeue=HOUR - MINUTE - 0.1 + D,
            job_still_not_found_in_lister=True,
        )
        for short, policy in (("A", "Allow"), ("f", "Forbid"), ("R", "Replace"))
    },
    **{
        f"this started but is not present in cronjob active list, not past deadline, {short}": Row(
            policy=policy,
            deadline=LONG_DEAD,
            ran_previously=True,
            still_active=True,
            job_creation_time=TOP_OF_THE_HOUR + 0.1,
            now=JUST_AFTER_THE_HOUR + 0.1,
            expect_active=1,
            expected_requeue=HOUR - MINUTE - 0.1 + D,
            job_present_in_cj_active_status=False,
        )
        for short, policy in (("A", "Allow"), ("f", "Forbid"), ("R", "Replace"))
    },
    "with @every schedule, never ran, not time": Row(
        schedule=EVERY_HOUR,
        cronjob_creation_time=JUST_BEFORE_THE_HOUR,
        job_creation_time=JUST_BEFORE_THE_HOUR,
        now=TOP_OF_THE_HOUR,
        expected_requeue=HOUR - MINUTE + D,
    ),
    "with @every schedule, never ran, is time": Row(
        schedule=EVERY_HOUR,
        cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        now=JUST_BEFORE_THE_HOUR,
        expected_requeue=HOUR + D,
        expect_create=True,
        expect_active=1,
        expect_update_status=True,
    ),
    "with @every schedule, never ran, is time, past deadline": Row(
        schedule=EVERY_HOUR,
        deadline=SHORT_DEAD,
        cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        now=JUST_BEFORE_THE_HOUR + SHORT_DEAD + 1,
        expected_requeue=HOUR - (SHORT_DEAD + 1) + D,
    ),
    "with @every schedule, never ran, is time, not past deadline": Row(
        schedule=EVERY_HOUR,
        deadline=LONG_DEAD,
        cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        now=JUST_BEFORE_THE_HOUR + SHORT_DEAD - 1,
        expect_create=True,
        expect_active=1,
        expected_requeue=HOUR - (SHORT_DEAD - 1) + D,
        expect_update_status=True,
    ),
    "with @every schedule, prev ran but done, not time": Row(
        schedule=EVERY_HOUR,
        ran_previously=True,
        cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        last_schedule_time=JUST_BEFORE_THE_HOUR,
        now=TOP_OF_THE_HOUR,
        expected_requeue=HOUR - MINUTE + D,
        expect_update_status=True,
    ),
    "with @every schedule, prev ran but done, is time": Row(
        schedule=EVERY_HOUR,
        ran_previously=True,
        cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        last_schedule_time=JUST_BEFORE_THE_HOUR,
        now=TOP_OF_THE_HOUR + HOUR,
        expect_create=True,
        expect_active=1,
        expected_requeue=HOUR - MINUTE + D,
        expect_update_status=True,
    ),
    "with @every schedule, prev ran but done, is time, past deadline": Row(
        schedule=EVERY_HOUR,
        deadline=SHORT_DEAD,
        ran_previously=True,
        cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        last_schedule_time=JUST_BEFORE_THE_HOUR,
        now=JUST_BEFORE_THE_NEXT_HOUR + SHORT_DEAD + 1,
        expected_requeue=HOUR - (SHORT_DEAD + 1) + D,
        expect_update_status=True,
    ),
    "with @every schedule, still active, not time": Row(
        schedule=EVERY_HOUR,
        ran_previously=True,
        still_active=True,
        cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_HOUR,
        last_schedule_time=JUST_BEFORE_THE_HOUR,
        now=TOP_OF_THE_HOUR,
        expect_active=1,
        expected_requeue=HOUR - MINUTE + D,
    ),
    "with @every schedule, still active, is time": Row(
        schedule=EVERY_HOUR,
        ran_previously=True,
        still_active=True,
        cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        last_schedule_time=JUST_BEFORE_THE_PRIOR_HOUR,
        now=JUST_AFTER_THE_HOUR,
        expect_create=True,
        expect_active=2,
        expected_requeue=HOUR - 2 * MINUTE + D,
        expect_update_status=True,
    ),
    "with @every schedule, still active, is time, past deadline": Row(
        schedule=EVERY_HOUR,
        deadline=SHORT_DEAD,
        ran_previously=True,
        still_active=True,
        cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_HOUR,
        last_schedule_time=JUST_BEFORE_THE_HOUR,
        now=JUST_BEFORE_THE_NEXT_HOUR + SHORT_DEAD + 1,
        expect_active=1,
        expected_requeue=HOUR - (SHORT_DEAD + 1) + D,
    ),
    "with @every schedule, still active, is time, not past deadline": Row(
        schedule=EVERY_HOUR,
        deadline=LONG_DEAD,
        ran_previously=True,
        still_active=True,
        cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_HOUR,
        last_schedule_time=JUST_BEFORE_THE_HOUR,
        now=JUST_BEFORE_THE_NEXT_HOUR + SHORT_DEAD - 1,
        expect_create=True,
        expect_active=2,
        expected_requeue=HOUR - (SHORT_DEAD - 1) + D,
        expect_update_status=True,
    ),
    "with @every schedule, prev ran but done, long overdue, no deadline": Row(
        schedule=EVERY_HOUR,
        ran_previously=True,
        cronjob_creation_time=JUST_AFTER_THE_PRIOR_HOUR,
        last_schedule_time=JUST_AFTER_THE_HOUR,
        job_creation_time=JUST_AFTER_THE_PRIOR_HOUR,
        now=WEEK_AFTER_THE_HOUR,
        expect_create=True,
        expect_active=1,
        expected_warnings=("TooManyMissedTimes",),
        expected_requeue=MINUTE + D,
        expect_update_status=True,
    ),
    "with @every schedule, prev ran but done, long overdue, past deadline": Row(
        schedule=EVERY_HOUR,
        deadline=SHORT_DEAD,
        ran_previously=True,
        cronjob_creation_time=JUST_AFTER_THE_PRIOR_HOUR,
        last_schedule_time=JUST_AFTER_THE_HOUR,
        job_creation_time=JUST_AFTER_THE_PRIOR_HOUR,
        now=WEEK_AFTER_THE_HOUR + MINUTE + SHORT_DEAD + 1,
        expect_active=0,  # upstream's unchecked expectActive says 1; the only Job is finished
        expected_requeue=HOUR - (SHORT_DEAD + 1) + D,
        expect_update_status=True,
    ),
    # the namespace is going: no create, no event, no status write; the live CronJob's active list is kept (1,
    # where upstream's unchecked expectActive says 0)
    "do nothing if the namespace is terminating": Row(
        job_create_error=namespace_terminating(),
        ran_previously=True,
        still_active=True,
        now=JUST_AFTER_THE_HOUR,
        expect_active=1,
        expect_err=True,
        job_present_in_cj_active_status=False,
    ),
}


def setup(row: Row) -> tuple[Obj, Obj, Obj | None, list[Obj]]:
    """Upstream's per-row setup: (the CronJob synced, the "real" one `GetCronJob` answers, the Job, the lister's
    Jobs)."""
    cj = cron_job()
    spec = cj["spec"]
    spec.update(concurrencyPolicy=row.policy, suspend=row.suspend, schedule=row.schedule)
    if row.time_zone is not None:
        spec["timeZone"] = row.time_zone
    if row.deadline is not None:
        spec["startingDeadlineSeconds"] = row.deadline
    real = copy.deepcopy(cj)
    job: Obj | None = None
    lister: list[Obj] = []
    if row.ran_previously:
        created = row.cronjob_creation_time or JUST_BEFORE_THE_PRIOR_HOUR
        cj["metadata"]["creationTimestamp"] = format_time(created)
        last = row.last_schedule_time or JUST_AFTER_THE_PRIOR_HOUR
        cj["status"] = {"lastScheduleTime": format_time(last)}
        job = job_from_template(cj, row.job_creation_time)
        job["metadata"].update(uid="1234", namespace="snazzycats")
        if row.still_active:
            if row.job_present_in_cj_active_status:
                cj["status"]["active"] = [job_ref(job)]
            real["status"] = {"active": [job_ref(job)]}
        else:
            job["status"] = {
                "completionTime": format_time(row.job_creation_time + 10),
                "conditions": [{"type": "Complete", "status": "True"}],
            }
        if not row.job_still_not_found_in_lister:
            lister.append(job)
    else:
        created = row.cronjob_creation_time or JUST_BEFORE_THE_HOUR
        cj["metadata"]["creationTimestamp"] = format_time(created)
    return cj, real, job, lister


@pytest.mark.parametrize("name", list(ROWS))
def test_controller_v2_sync_cronjob(name: str) -> None:
    """TestControllerV2SyncCronJob."""
    row = ROWS[name]
    cj, real, job, lister = setup(row)
    api = FakeApi(cronjob=real, job=job, create_error=row.job_create_error, get_error=row.job_get_error)
    cronjobs, recorder = controller(api, row.now)
    result = asyncio.run(cronjobs.sync_cronjob(cj, lister))

    assert (result.error is not None) == row.expect_err, result.error
    if row.expected_requeue is not None:
        assert result.requeue_after == pytest.approx(row.expected_requeue, abs=1e-6)
    assert result.update_status == row.expect_update_status
    if row.ran_previously and not row.still_active:
        assert cj["status"]["lastSuccessfulTime"] == format_time(row.job_creation_time + 10)
    assert len(api.created) == (1 if row.expect_create else 0)
    for created in api.created:
        [owner] = created["metadata"]["ownerReferences"]
        assert (owner["apiVersion"], owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
            "batch/v1",
            "CronJob",
            "mycronjob",
            "1a2b3c",
            True,
        )
    assert len(api.deleted) == (1 if row.expect_delete else 0)
    expected_events = int(row.expect_create) + int(row.expect_delete) + len(row.expected_warnings)
    if name == "still active, is time, F":
        expected_events += 1  # JobAlreadyActive, upstream's one Normal event for not starting
    assert len(recorder.events) == expected_events, recorder.events
    assert sorted(r for t, r, _ in recorder.events if t == "Warning") == sorted(row.expected_warnings)
    assert len((cj.get("status") or {}).get("active") or []) == row.expect_active
    assert api.updates == []  # syncCronJob writes nothing itself; `sync` writes the status once


def test_event_messages_are_kube_controller_managers() -> None:
    """The rows' warnings, word for word as cronjob_controllerv2.go and utils.go format them."""
    messages = {}
    for name in (
        "never ran, not valid schedule, A",
        "never ran, not valid time zone",
        "never ran, is time in zone, but TZ is also set in schedule",
        "still active, is time, get job failed, R",
        "prev ran but done, long overdue, no deadline, A",
    ):
        row = ROWS[name]
        cj, real, job, lister = setup(row)
        api = FakeApi(cronjob=real, job=job, create_error=row.job_create_error, get_error=row.job_get_error)
        cronjobs, recorder = controller(api, row.now)
        asyncio.run(cronjobs.sync_cronjob(cj, lister))
        messages.update({reason: message for _, reason, message in recorder.events})
    assert messages["UnparseableSchedule"] == (
        'unparseable schedule: "obvious error schedule" : expected exactly 5 fields, found 3: [obvious error schedule]'
    )
    assert messages["UnknownTimeZone"] == 'invalid timeZone: "bad timezone": unknown time zone bad timezone'
    assert messages["UnsupportedSchedule"] == (
        'CRON_TZ or TZ used in schedule "TZ=UTC 0 * * * ?" is not officially supported, see '
        "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"
    )
    assert messages["FailedGet"] == "Get job: request is invalid"
    assert messages["TooManyMissedTimes"] == (
        "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew"
    )
    assert messages["SuccessfulCreate"] == f"Created job mycronjob-{int(WEEK_AFTER_THE_HOUR) // 60}"


def sync(api: FakeApi, now: float, cronjob: Obj, jobs: list[Obj]) -> tuple[CronJobController, Exception | None]:
    """`enqueueController` + `processNextWorkItem`: one `sync` of `cronjob` with the informers holding it and
    `jobs` (the error `sync` raised, if any)."""
    cronjobs, _ = controller(api, now)
    cronjobs.cronjobs.cache[(cronjob["metadata"]["namespace"], cronjob["metadata"]["name"])] = cronjob
    for job in jobs:
        cronjobs.jobs.cache[(job["metadata"]["namespace"], job["metadata"]["name"])] = job

    async def main() -> Exception | None:
        try:
            await cronjobs.sync((cronjob["metadata"]["namespace"], cronjob["metadata"]["name"]))
        except Exception as exc:
            return exc
        return None

    return cronjobs, asyncio.run(main())


def finished_job(name: str, started: float) -> Obj:
    return {
        "metadata": {
            "namespace": "foo-ns",
            "name": name,
            "ownerReferences": [{"name": "fooer", "controller": True}],
        },
        "status": {"startTime": format_time(started), "conditions": [{"type": "Complete", "status": "True"}]},
    }


def fooer(limit: int) -> Obj:
    return {
        "metadata": {"namespace": "foo-ns", "name": "fooer"},
        "spec": {
            "schedule": ON_THE_HOUR,
            "successfulJobsHistoryLimit": limit,
            "jobTemplate": {"metadata": {"labels": {"key": "value"}}},
        },
        "status": {"lastScheduleTime": format_time(JUST_AFTER_THE_PRIOR_HOUR)},
    }


def test_jobs_are_still_deleted_when_a_cronjob_cant_create_jobs_due_to_jobs_quota_being_reached() -> None:
    """TestControllerV2CleanupFinishedJobs: "jobs are still deleted when a cronjob can't create jobs due to jobs
    quota being reached (avoiding a deadlock)" — and, as `sync` does, the status is written before the error is
    returned (kjobs raised past the write)."""
    jobs = [
        finished_job("finished-job-started-hour-ago", JUST_BEFORE_THE_PRIOR_HOUR),
        finished_job("finished-job-started-minute-ago", JUST_BEFORE_THE_HOUR),
    ]
    quota = errors.ApiError(500, "InternalError", "Internal error occurred: quota for # of jobs reached")
    api = FakeApi(create_error=quota)
    _, error = sync(api, JUST_AFTER_THE_HOUR, fooer(1), jobs)
    assert api.deleted == ["finished-job-started-hour-ago"]
    assert error is quota
    assert len(api.updates) == 1


def test_jobs_are_not_deleted_if_history_limit_not_reached() -> None:
    """TestControllerV2CleanupFinishedJobs: "jobs are not deleted if history limit not reached"."""
    api = FakeApi()
    _, error = sync(api, JUST_BEFORE_THE_HOUR, fooer(2), [finished_job("finished-job-started-hour-ago", 0)])
    assert error is None
    assert api.deleted == []


def test_a_replaced_job_leaves_active_even_when_the_new_create_fails() -> None:
    """`Replace` deleted the running Job, then the create failed: as `sync` writes the status whatever
    `syncCronJob` returned, `status.active` no longer lists the deleted Job (kjobs kept it until MissingJob)."""
    row = ROWS["still active, is time, R"]
    cj, real, job, lister = setup(row)
    quota = errors.ApiError(500, "InternalError", "Internal error occurred: quota for # of jobs reached")
    api = FakeApi(cronjob=real, job=job, create_error=quota)
    _, error = sync(api, row.now, cj, lister)
    assert error is quota
    assert job is not None and api.deleted == [job["metadata"]["name"]]
    [written] = api.updates
    assert "active" not in written["status"]


def test_controller_v2_job_already_exists_but_not_in_active_status() -> None:
    """TestControllerV2JobAlreadyExistsButNotInActiveStatus: a Job created before a lost status write is listed
    on the next sync, with one status write."""
    cj = cron_job()
    cj["spec"].update(concurrencyPolicy="Forbid", schedule=EVERY_HOUR)
    cj["status"] = {"lastScheduleTime": format_time(JUST_BEFORE_THE_PRIOR_HOUR), "active": []}
    job = job_from_template(cj, JUST_AFTER_THE_PRIOR_HOUR)
    job["metadata"].update(uid="1234", namespace="snazzycats")
    api = FakeApi(cronjob=copy.deepcopy(cj), job=job, create_error=already_exists())
    _, error = sync(api, JUST_BEFORE_THE_HOUR, cj, [])
    assert error is None
    [written] = api.updates
    [ref] = written["status"]["active"]
    assert {k: ref[k] for k in ("kind", "apiVersion", "namespace", "name", "uid")} == {
        "kind": "Job",
        "apiVersion": "batch/v1",
        "namespace": "snazzycats",
        "name": job["metadata"]["name"],
        "uid": "1234",
    }


def test_controller_v2_job_already_exists_but_different_owner() -> None:
    """TestControllerV2JobAlreadyExistsButDifferentOwner: a Job of that name another controller owns is left
    alone, and the CronJob's status is not written."""
    cj = cron_job()
    cj["spec"].update(concurrencyPolicy="Forbid", schedule=EVERY_HOUR)
    cj["status"] = {"lastScheduleTime": format_time(JUST_BEFORE_THE_PRIOR_HOUR), "active": []}
    job = job_from_template(cj, JUST_AFTER_THE_PRIOR_HOUR)
    job["metadata"].update(uid="1234", namespace="snazzycats", ownerReferences=[])
    api = FakeApi(cronjob=copy.deepcopy(cj), job=job, create_error=already_exists())
    _, error = sync(api, JUST_BEFORE_THE_HOUR, cj, [])
    assert error is None
    assert api.updates == []


def owned(namespace: str, name: str, owner: str | None = None, labels: dict[str, str] | None = None) -> Obj:
    meta: Obj = {"namespace": namespace, "name": name}
    if owner is not None:
        meta["ownerReferences"] = [{"name": owner, "controller": True}]
    if labels is not None:
        meta["labels"] = labels
    return {"metadata": meta}


GET_JOBS_ROWS: dict[str, tuple[Obj, list[Obj], list[str]]] = {
    "test getting jobs in namespace without controller reference": (
        {"metadata": {"namespace": "foo-ns", "name": "fooer"}},
        [owned("foo-ns", "foo"), owned("foo-ns", "foo1"), owned("foo-ns", "foo2")],
        [],
    ),
    "test getting jobs in namespace with a controller reference": (
        {"metadata": {"namespace": "foo-ns", "name": "fooer"}},
        [owned("foo-ns", "foo"), owned("foo-ns", "foo1", "fooer"), owned("foo-ns", "foo2")],
        ["foo1"],
    ),
    "test getting jobs in other namespaces": (
        {"metadata": {"namespace": "foo-ns", "name": "fooer"}},
        [owned("bar-ns", "foo"), owned("bar-ns", "foo1"), owned("bar-ns", "foo2")],
        [],
    ),
    "test getting jobs whose labels do not match job template": (
        {
            "metadata": {"namespace": "foo-ns", "name": "fooer"},
            "spec": {"jobTemplate": {"metadata": {"labels": {"key": "value"}}}},
        },
        [
            owned("foo-ns", "foo-fooer-owner-ref", "fooer", {"key": "different-value"}),
            owned("foo-ns", "foo-other-owner-ref", "another-cronjob", {"key": "different-value"}),
        ],
        ["foo-fooer-owner-ref"],
    ),
}


@pytest.mark.parametrize("name", list(GET_JOBS_ROWS))
def test_controller_v2_get_jobs_to_be_reconciled(name: str) -> None:
    """TestControllerV2GetJobsToBeReconciled."""
    cronjob, jobs, expected = GET_JOBS_ROWS[name]
    cronjobs, _ = controller(FakeApi(), JUST_BEFORE_THE_HOUR)
    for job in jobs:
        cronjobs.jobs.cache[(job["metadata"]["namespace"], job["metadata"]["name"])] = job
    assert [j["metadata"]["name"] for j in cronjobs.jobs_to_be_reconciled(cronjob)] == expected


class FakeQueue:
    """Upstream's `fakeQueue`: the delay of the last `AddAfter` (an `Add` is a delay of 0)."""

    def __init__(self) -> None:
        self.delay: float | None = None

    def add(self, key: Any) -> None:
        self.delay = 0.0

    def add_after(self, key: Any, delay: float) -> None:
        self.delay = delay


def with_template(labels: dict[str, str], **spec: Any) -> Obj:
    template = {"metadata": {"labels": labels, "annotations": {"x": "y"}}, "spec": cron_job()["spec"]["jobTemplate"]}
    return {"spec": {"jobTemplate": template, **spec}}


def scheduled(cronjob: Obj) -> Obj:
    cronjob["status"] = {"lastScheduleTime": format_time(JUST_BEFORE_THE_HOUR)}
    return cronjob


UPDATE_ROWS: dict[str, tuple[Obj, Obj, float]] = {
    "spec.template changed": (with_template({"a": "b"}), with_template({"a": "foo"}), 0.0),
    "spec.schedule changed": (
        scheduled(with_template({"a": "b"}, schedule="30 * * * *")),
        scheduled(with_template({"a": "foo"}, schedule="*/1 * * * *")),
        1 + D,
    ),
    "spec.schedule with @every changed - cadence decrease": (
        scheduled(with_template({"a": "b"}, schedule="@every 1m")),
        scheduled(with_template({"a": "foo"}, schedule="@every 3m")),
        2 * MINUTE + 1 + D,
    ),
    "spec.schedule with @every changed - cadence increase": (
        scheduled(with_template({"a": "b"}, schedule="@every 3m")),
        scheduled(with_template({"a": "foo"}, schedule="@every 1m")),
        1 + D,
    ),
    "spec.timeZone not changed": (
        with_template({"a": "b"}, timeZone=NEW_YORK),
        with_template({"a": "foo"}, timeZone=NEW_YORK),
        0.0,
    ),
    # the new schedule is "" (unparseable): UnParseableCronJobSchedule, and nothing queued
    "spec.timeZone changed": (with_template({"a": "b"}, timeZone=NEW_YORK), with_template({"a": "foo"}), 0.0),
}


@pytest.mark.parametrize("name", list(UPDATE_ROWS))
def test_controller_v2_update_cronjob(name: str) -> None:
    """TestControllerV2UpdateCronJob: the delay an update of the CronJob queues it with, at 09:59:59."""
    old, new, delay = UPDATE_ROWS[name]
    cronjobs, recorder = controller(FakeApi(), JUST_A_SECOND_BEFORE_THE_HOUR)
    queue = FakeQueue()
    cronjobs.queue = queue  # type: ignore[assignment]
    cronjobs._on_cronjob(old, new)
    assert (queue.delay or 0.0) == pytest.approx(delay, abs=1e-6)
    if name == "spec.timeZone changed":
        assert queue.delay is None
        assert recorder.events == [("Warning", "UnParseableCronJobSchedule", "unparseable schedule for cronjob: ")]
