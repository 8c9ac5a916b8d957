"""When a CronJob is due (`mostRecentScheduleTime`, `nextScheduleTime`, `nextScheduleTimeDuration`)."""

from __future__ import annotations

import pytest

from kjobs.api.cron import parse_standard
from kjobs.api.timeutil import format_time, parse_time
from kjobs.api.types import Obj
from kjobs.cronjob.timing import (
    NEXT_SCHEDULE_DELTA,
    Missed,
    ScheduleError,
    most_recent_schedule_time,
    next_schedule_time,
    requeue_after,
    schedule_text,
)

TOP = parse_time("2024-05-01T10:00:00Z")
HOURLY = parse_standard("TZ=UTC 0 * * * *")
MINUTELY = parse_standard("TZ=UTC * * * * *")


def cronjob(created: float = TOP - 3600 + 60, last: float | None = None, deadline: int | None = None) -> Obj:
    spec: Obj = {"schedule": "0 * * * *"}
    if deadline is not None:
        spec["startingDeadlineSeconds"] = deadline
    status: Obj = {"lastScheduleTime": format_time(last)} if last is not None else {}
    return {"metadata": {"creationTimestamp": format_time(created)}, "spec": spec, "status": status}


def test_nothing_due_before_the_first_time() -> None:
    recent = most_recent_schedule_time(cronjob(), TOP - 10, HOURLY, include_deadline=True)
    assert recent.most_recent is None and recent.missed is Missed.NONE


def test_the_time_just_passed_is_due() -> None:
    assert next_schedule_time(cronjob(), TOP + 5, HOURLY) == (TOP, Missed.NONE)


def test_after_several_missed_only_the_most_recent_is_due() -> None:
    scheduled, missed = next_schedule_time(cronjob(), TOP + 3 * 3600 + 5, HOURLY)
    assert scheduled == TOP + 3 * 3600
    assert missed is Missed.FEW


def test_more_than_100_missed_is_many() -> None:
    created = TOP - 3 * 3600
    scheduled, missed = next_schedule_time(cronjob(created=created), TOP + 30, MINUTELY)
    assert scheduled == TOP and missed is Missed.MANY


def test_the_starting_deadline_bounds_how_far_back_it_looks() -> None:
    created = TOP - 3 * 3600
    scheduled, missed = next_schedule_time(cronjob(created=created, deadline=200), TOP + 30, MINUTELY)
    assert scheduled == TOP and missed is Missed.FEW
    # no due time within the deadline: none
    assert next_schedule_time(cronjob(created=created, deadline=10), TOP + 30.5, HOURLY) == (None, Missed.NONE)


def test_the_last_schedule_time_counts_instead_of_creation() -> None:
    assert next_schedule_time(cronjob(last=TOP), TOP + 30, HOURLY) == (None, Missed.NONE)


def test_a_schedule_that_never_fires_is_an_error() -> None:
    with pytest.raises(ScheduleError, match="time difference between two schedules is less than 1 second"):
        most_recent_schedule_time(cronjob(), TOP, parse_standard("TZ=UTC 59 23 31 2 *"), include_deadline=True)


def test_requeue_is_just_after_the_next_time() -> None:
    assert requeue_after(cronjob(last=TOP), TOP + 30, HOURLY) == pytest.approx(3600 - 30 + NEXT_SCHEDULE_DELTA)
    assert requeue_after(cronjob(), TOP - 10, HOURLY) == pytest.approx(10 + NEXT_SCHEDULE_DELTA)


def test_schedule_text_adds_the_time_zone() -> None:
    cj = cronjob()
    cj["spec"]["timeZone"] = "Europe/Paris"
    assert schedule_text(cj) == "TZ=Europe/Paris 0 * * * *"
    cj["spec"]["timeZone"] = "Nowhere/Place"
    assert schedule_text(cj) == "0 * * * *"
