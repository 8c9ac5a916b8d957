"""Upstream's CronJob utility tables (pkg/controller/cronjob/utils_test.go), ported row by row: the Job made for a
scheduled time, the most recent due time and the "too many missed" count, the next due time, the requeue delay,
and the order history limits delete in. Test ids are the upstream rows' names (docs/upstream-cronjob.md).

Upstream parses schedules with the test machine's `time.Local` (UTC in its CI); these rows say `TZ=UTC` so that
they hold on any machine.
"""

from __future__ import annotations

import pytest

from kjobs.api.cron import parse_standard
from kjobs.api.timeutil import format_time, parse_time
from kjobs.api.types import Obj
from kjobs.cronjob.jobs import SCHEDULED_TIMESTAMP_ANNOTATION, job_from_template, jobs_over_history
from kjobs.cronjob.timing import (
    NEXT_SCHEDULE_DELTA,
    Missed,
    ScheduleError,
    most_recent_schedule_time,
    next_schedule_time,
    requeue_after,
)

TOP = parse_time("2016-05-19T10:00:00Z")  # a Thursday
MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0


def after(seconds: float) -> float:
    """`deltaTimeAfterTopOfTheHour`."""
    return TOP + seconds


def schedule_of(spec: str) -> object:
    return parse_standard(spec if spec.startswith("@") else "TZ=UTC " + spec)


# ------------------------------------------------------------------------------------------ TestGetJobFromTemplate2


def template_cronjob(time_zone: str | None, annotations: dict[str, str]) -> Obj:
    spec: Obj = {
        "schedule": "* * * * ?",
        "concurrencyPolicy": "Allow",
        "jobTemplate": {
            "metadata": {"creationTimestamp": format_time(TOP), "labels": {"a": "b"}, "annotations": annotations},
            "spec": {
                "activeDeadlineSeconds": 1,
                "manualSelector": False,
                "template": {
                    "metadata": {"labels": {"foo": "bar"}},
                    "spec": {"containers": [{"image": "foo/bar"}]},
                },
            },
        },
    }
    if time_zone is not None:
        spec["timeZone"] = time_zone
    return {"metadata": {"name": "mycronjob", "namespace": "snazzycats", "uid": "1a2b3c"}, "spec": spec}


@pytest.mark.parametrize(
    ("name", "time_zone", "annotations", "stamp", "count"),
    [
        ("UTC timezone and one annotation", "UTC", {"x": "y"}, "2016-05-19T10:00:00Z", 2),
        ("nil timezone and one annotation", None, {"x": "y"}, "2016-05-19T10:00:00Z", 2),
        (
            "correct timezone and multiple annotation",
            "Europe/Rome",
            {"x": "y", "z": "x"},
            "2016-05-19T12:00:00+02:00",
            3,
        ),
    ],
)
def test_get_job_from_template2(
    name: str, time_zone: str | None, annotations: dict[str, str], stamp: str, count: int
) -> None:
    """TestGetJobFromTemplate2 (plus what the v1 test checked: the name, the owner, the template's spec)."""
    job = job_from_template(template_cronjob(time_zone, annotations), TOP)
    meta = job["metadata"]
    assert meta["name"] == f"mycronjob-{int(TOP) // 60}"
    assert meta["labels"] == {"a": "b"}
    assert len(meta["annotations"]) == count
    assert meta["annotations"][SCHEDULED_TIMESTAMP_ANNOTATION] == stamp
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "name": "mycronjob",
            "uid": "1a2b3c",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert job["spec"]["activeDeadlineSeconds"] == 1 and job["spec"]["manualSelector"] is False


@pytest.mark.parametrize(
    ("zone", "moment", "stamp"),
    [
        ("Europe/London", parse_time("2016-01-19T10:00:00Z"), "2016-01-19T10:00:00Z"),
        ("Etc/GMT", TOP, "2016-05-19T10:00:00Z"),
        ("Europe/London", TOP, "2016-05-19T11:00:00+01:00"),
    ],
)
def test_the_scheduled_timestamp_says_z_for_any_zone_at_offset_zero(zone: str, moment: float, stamp: str) -> None:
    """Go's RFC 3339 layout (`Z07:00`) writes `Z` whenever the offset is zero, whatever the zone is called:
    London in winter is `Z`, as on a cluster (kjobs wrote `+00:00`)."""
    job = job_from_template(template_cronjob(zone, {}), moment)
    assert job["metadata"]["annotations"][SCHEDULED_TIMESTAMP_ANNOTATION] == stamp


# ---------------------------------------------------------------------------------------------- TestNextScheduleTime


def hourly(created: float, last: float | None = None, deadline: int | None = None) -> Obj:
    spec: Obj = {"schedule": "0 * * * ?", "concurrencyPolicy": "Allow", "jobTemplate": {}}
    if deadline is not None:
        spec["startingDeadlineSeconds"] = deadline
    status = {"lastScheduleTime": format_time(last)} if last is not None else {}
    return {
        "metadata": {
            "name": "mycronjob",
            "namespace": "default",
            "uid": "1a2b3c",
            "creationTimestamp": format_time(created),
        },
        "spec": spec,
        "status": status,
    }


T1, T2 = TOP, TOP + HOUR
HOURLY = schedule_of("0 * * * ?")

NEXT_ROWS: dict[str, tuple[Obj, float, float | None]] = {
    "Case 1: no known start times, and none needed yet": (hourly(T1 - 10 * MINUTE), T1 - 7 * MINUTE, None),
    "Case 2: no known start times, and one needed": (hourly(T1 - 10 * MINUTE), T1 + 2, T1),
    "Case 3: known LastScheduleTime, no start needed": (hourly(T1 - 10 * MINUTE, T1), T1 + 2 * MINUTE, None),
    "Case 4: known LastScheduleTime, a start needed": (hourly(T1 - 10 * MINUTE, T1), T2 + 5 * MINUTE, T2),
    "Case 5: known LastScheduleTime, two starts needed": (hourly(T1 - 2 * HOUR, T1 - HOUR), T2 + 5 * MINUTE, T2),
    # upstream asks only for "more than 0 missed times"; the most recent is the hour before now
    "Case 6: now is way way ahead of last start time, and there is no deadline": (
        hourly(T1 - 2 * HOUR, T1 - HOUR),
        T2 + 10 * DAY,
        T2 + 10 * DAY,
    ),
    "Case 7: now is way way ahead of last start time, but there is a short deadline": (
        hourly(T1 - 2 * HOUR, T1 - HOUR, deadline=2 * 60 * 60),
        T2 + 10 * DAY,
        T2 + 10 * DAY,
    ),
}


@pytest.mark.parametrize("name", list(NEXT_ROWS))
def test_next_schedule_time(name: str) -> None:
    """TestNextScheduleTime, cases 1-7."""
    cronjob, now, expected = NEXT_ROWS[name]
    scheduled, missed = next_schedule_time(cronjob, now, HOURLY)  # type: ignore[arg-type]
    assert scheduled == expected
    if name.startswith("Case 6"):
        assert missed is Missed.MANY  # the controller's TooManyMissedTimes warning
    if name.startswith("Case 7"):
        assert missed is Missed.FEW  # the deadline bounds how far back it counts


def test_next_schedule_time_case_8_ensure_the_error_from_most_recent_schedule_time_gets_populated_up() -> None:
    """TestNextScheduleTime, case 8: a schedule that never fires (February 31st) is an error, not a time."""
    with pytest.raises(ScheduleError, match="time difference between two schedules is less than 1 second"):
        next_schedule_time(hourly(T1 + 10), after(HOUR), schedule_of("59 23 31 2 *"))  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------ TestByJobStartTime

NOW = "2018-01-01T02:03:04Z"
LATER = "2019-01-01T02:03:04Z"


def finished(name: str, start: str | None) -> Obj:
    status: Obj = {"conditions": [{"type": "Complete", "status": "True"}]}
    if start:
        status["startTime"] = start
    return {"metadata": {"name": name}, "status": status}


@pytest.mark.parametrize(
    ("name", "given", "expected"),
    [
        ("both have nil start times", [("b", None), ("a", None)], ["a", "b"]),
        ("only the first has a nil start time", [("a", None), ("b", NOW)], ["b", "a"]),
        ("only the second has a nil start time", [("a", NOW), ("b", None)], ["a", "b"]),
        ("both have non-nil, equal start time", [("b", NOW), ("a", NOW)], ["a", "b"]),
        ("both have non-nil, different start time", [("a", LATER), ("b", NOW)], ["b", "a"]),
    ],
)
def test_by_job_start_time(name: str, given: list[tuple[str, str | None]], expected: list[str]) -> None:
    """TestByJobStartTime, through the history limit that sorts by it (a limit of 0 deletes all, oldest first)."""
    cronjob: Obj = {"spec": {"successfulJobsHistoryLimit": 0}}
    doomed = jobs_over_history(cronjob, [finished(n, s) for n, s in given])
    assert [j["metadata"]["name"] for j in doomed] == expected


# ------------------------------------------------------------------------------------------ TestMostRecentScheduleTime


def cronjob(schedule: str, created: float, last: float | None = None, deadline: int | None = None) -> Obj:
    spec: Obj = {"schedule": schedule}
    if deadline is not None:
        spec["startingDeadlineSeconds"] = deadline
    status = {"lastScheduleTime": format_time(last)} if last is not None else {}
    return {"metadata": {"creationTimestamp": format_time(created)}, "spec": spec, "status": status}


RECENT_ROWS: dict[str, tuple[Obj, bool, float, float, float | None, Missed]] = {
    # name: (cronjob, includeSDS, now, expected earliest, expected most recent, expected missed)
    "now before next schedule": (cronjob("0 * * * *", TOP), False, TOP + 30, TOP, None, Missed.NONE),
    "now just after next schedule": (
        cronjob("0 * * * *", TOP),
        False,
        after(61 * MINUTE),
        TOP,
        after(HOUR),
        Missed.NONE,
    ),
    "missed 5 schedules": (
        cronjob("0 * * * *", after(10)),
        False,
        after(301 * MINUTE),
        after(10),
        after(300 * MINUTE),
        Missed.FEW,
    ),
    "complex schedule": (
        cronjob("30 6-16/4 * * 1-5", TOP, after(30 * MINUTE)),
        False,
        after(DAY + 31 * MINUTE),
        after(30 * MINUTE),
        after(DAY + 30 * MINUTE),
        Missed.FEW,
    ),
    "another complex schedule": (
        cronjob("30 10,11,12 * * 1-5", TOP, after(30 * MINUTE)),
        False,
        after(30 * HOUR + 30 * MINUTE),
        after(30 * MINUTE),
        None,
        Missed.FEW,
    ),
    "complex schedule with longer diff between executions": (
        cronjob("30 6-16/4 * * 1-5", TOP, after(30 * MINUTE)),
        False,
        after(96 * HOUR + 31 * MINUTE),
        after(30 * MINUTE),
        after(96 * HOUR + 30 * MINUTE),
        Missed.FEW,
    ),
    "complex schedule with shorter diff between executions": (
        cronjob("30 6-16/4 * * 1-5", TOP),
        False,
        after(DAY + 31 * MINUTE),
        TOP,
        after(DAY + 30 * MINUTE),
        Missed.FEW,
    ),
    "@every schedule": (
        cronjob("@every 1h", after(-59 * MINUTE), after(MINUTE), deadline=10),
        False,
        after(7 * DAY),
        after(MINUTE),
        after(6 * DAY + 23 * HOUR + MINUTE),
        Missed.MANY,
    ),
    "earliestTime being CreationTimestamp and LastScheduleTime": (
        cronjob("0 * * * *", TOP, TOP),
        False,
        after(30),
        TOP,
        None,
        Missed.NONE,
    ),
    "earliestTime being LastScheduleTime": (
        cronjob("*/5 * * * *", TOP, after(30 * MINUTE)),
        False,
        after(31 * MINUTE),
        after(30 * MINUTE),
        None,
        Missed.NONE,
    ),
    "earliestTime being LastScheduleTime (within StartingDeadlineSeconds)": (
        cronjob("*/5 * * * *", TOP, after(30 * MINUTE), deadline=60),
        False,
        after(31 * MINUTE),
        after(30 * MINUTE),
        None,
        Missed.NONE,
    ),
    "earliestTime being LastScheduleTime (outside StartingDeadlineSeconds)": (
        cronjob("*/5 * * * *", TOP, after(30 * MINUTE), deadline=60),
        True,
        after(32 * MINUTE),
        after(31 * MINUTE),
        None,
        Missed.NONE,
    ),
}


@pytest.mark.parametrize("name", list(RECENT_ROWS))
def test_most_recent_schedule_time(name: str) -> None:
    """TestMostRecentScheduleTime."""
    cj, include, now, earliest, most_recent, missed = RECENT_ROWS[name]
    recent = most_recent_schedule_time(cj, now, schedule_of(cj["spec"]["schedule"]), include_deadline=include)  # type: ignore[arg-type]
    assert (recent.earliest, recent.most_recent, recent.missed) == (earliest, most_recent, missed)


def test_most_recent_schedule_time_rogue_cronjob() -> None:
    """TestMostRecentScheduleTime, "rogue cronjob"."""
    with pytest.raises(ScheduleError):
        most_recent_schedule_time(
            cronjob("59 23 31 2 *", after(10)),
            after(HOUR),
            schedule_of("59 23 31 2 *"),
            include_deadline=False,  # type: ignore[arg-type]
        )


# ---------------------------------------------------------------------------------------- TestNextScheduleTimeDuration

DURATION_ROWS: dict[str, tuple[Obj, float, float]] = {
    "complex schedule skipping weekend": (
        cronjob("30 6-16/4 * * 1-5", TOP, after(30 * MINUTE)),
        after(DAY + 31 * MINUTE),
        3 * HOUR + 59 * MINUTE,
    ),
    "another complex schedule skipping weekend": (
        cronjob("30 10,11,12 * * 1-5", TOP, after(30 * MINUTE)),
        after(30 * HOUR + 30 * MINUTE),
        66 * HOUR,
    ),
    "once a week cronjob, missed two runs": (
        cronjob("0 12 * * 4", TOP, after(2 * HOUR)),
        after(19 * DAY + HOUR + 30 * MINUTE),
        48 * HOUR + 30 * MINUTE,
    ),
    "no previous run of a cronjob": (cronjob("0 12 * * 5", TOP), after(6 * HOUR), 20 * HOUR),
}


@pytest.mark.parametrize("name", list(DURATION_ROWS))
def test_next_schedule_time_duration(name: str) -> None:
    """TestNextScheduleTimeDuration: the requeue delay, never negative, with the 100 ms delta."""
    cj, now, expected = DURATION_ROWS[name]
    got = requeue_after(cj, now, schedule_of(cj["spec"]["schedule"]))  # type: ignore[arg-type]
    assert got >= 0
    assert got == pytest.approx(expected + NEXT_SCHEDULE_DELTA, abs=1e-6)
