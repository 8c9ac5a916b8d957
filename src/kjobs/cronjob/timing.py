"""When a CronJob is due: `pkg/controller/cronjob/utils.go` (`mostRecentScheduleTime`, `nextScheduleTime`,
`nextScheduleTimeDuration`) and `formatSchedule`, over `kjobs.api.cron` schedules.

Times are POSIX seconds. A CronJob's schedule counts from its `status.lastScheduleTime`, else its creation; with
`startingDeadlineSeconds`, from no earlier than that long before now. Of the times missed since, only the most
recent is started; more than 100 missed is reported (`TooManyMissedTimes`), since a clock far off would otherwise
start a burst of Jobs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from kjobs.api import cron
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj

NEXT_SCHEDULE_DELTA = 0.1
"""Added to every requeue (`nextScheduleDelta`), so that a sync woken a little early by clock skew still finds
the time passed."""

MANY_MISSED = 100


class Missed(Enum):
    """`missedSchedulesType`."""

    NONE = "none"
    FEW = "few"
    MANY = "many"


class ScheduleError(ValueError):
    """A schedule that parses but never fires sensibly (`59 23 31 2 *`: February 31st)."""


@dataclass(frozen=True)
class Recent:
    """`mostRecentScheduleTime`'s answer."""

    earliest: float
    """The last schedule time, or the creation time."""
    most_recent: float | None
    """The latest time a Job should have been created, not after now (None: none is due)."""
    missed: Missed


def _spec(cronjob: Obj) -> Obj:
    spec = cronjob.get("spec")
    return spec if isinstance(spec, dict) else {}


def _time(value: object) -> float | None:
    return parse_time(str(value)) if value else None


def schedule_text(cronjob: Obj) -> str:
    """`formatSchedule`: the schedule, prefixed `TZ=zone ` when `spec.timeZone` names a known zone (a schedule that
    carries its own `TZ=` is left as it is)."""
    spec = _spec(cronjob)
    schedule = str(spec.get("schedule") or "")
    zone = spec.get("timeZone")
    if "TZ" in schedule or zone is None:
        return schedule
    try:
        cron.load_zone(str(zone))
    except cron.CronError:
        return schedule
    return f"TZ={zone} {schedule}"


def most_recent_schedule_time(cronjob: Obj, now: float, schedule: cron.Schedule, *, include_deadline: bool) -> Recent:
    """`mostRecentScheduleTime`. Raises ScheduleError for a schedule whose two next times are under 1 s apart."""
    meta = cronjob.get("metadata") or {}
    status = cronjob.get("status") or {}
    earliest = _time(status.get("lastScheduleTime")) or _time(meta.get("creationTimestamp")) or 0.0
    deadline = _spec(cronjob).get("startingDeadlineSeconds")
    if include_deadline and isinstance(deadline, int):
        earliest = max(earliest, now - deadline)
    t1 = schedule.next(earliest)
    t2 = schedule.next(t1) if t1 is not None else None
    if t1 is not None and now < t1:
        return Recent(earliest, None, Missed.NONE)
    if t1 is not None and t2 is not None and now < t2:
        return Recent(earliest, t1, Missed.NONE)
    between = int(t2 - t1 + 0.5) if t1 is not None and t2 is not None else 0
    if between < 1:
        raise ScheduleError("time difference between two schedules is less than 1 second")
    assert t1 is not None
    count = int(now - t1) // between + 1
    most_recent: float | None = None
    moment = schedule.next(t1 + (count - 2) * between)
    while moment is not None and moment <= now:
        most_recent = moment
        moment = schedule.next(moment)
    missed = Missed.MANY if count > MANY_MISSED else Missed.FEW if count > 0 else Missed.NONE
    return Recent(earliest, most_recent, missed)


def next_schedule_time(cronjob: Obj, now: float, schedule: cron.Schedule) -> tuple[float | None, Missed]:
    """`nextScheduleTime`: the time a Job is due for now (None: none), with how many were missed. Raises
    ScheduleError as `most_recent_schedule_time`."""
    recent = most_recent_schedule_time(cronjob, now, schedule, include_deadline=True)
    if recent.most_recent is None or recent.most_recent > now:
        return None, recent.missed
    return recent.most_recent, recent.missed


def requeue_after(cronjob: Obj, now: float, schedule: cron.Schedule) -> float:
    """`nextScheduleTimeDuration`: seconds until the sync after the next schedule time (plus the 100 ms delta)."""
    try:
        recent = most_recent_schedule_time(cronjob, now, schedule, include_deadline=False)
    except ScheduleError:
        base = now
    else:
        if recent.most_recent is not None:
            base = recent.most_recent
        elif recent.missed is Missed.NONE:
            base = recent.earliest
        else:
            base = now
    following = schedule.next(base)
    if following is None:  # Go's zero time: a requeue "in the past", at once
        return 0.0
    return following + NEXT_SCHEDULE_DELTA - now
