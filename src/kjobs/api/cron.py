"""Cron schedules as Kubernetes reads them: robfig/cron v3's `ParseStandard` and its schedules' `Next`.

The CronJob validation (`pkg/apis/batch/validation`: `validateScheduleFormat`) and controller
(`pkg/controller/cronjob`) both parse `spec.schedule` with `cron.ParseStandard`, so what is valid, the error
messages and the times a schedule fires are that library's:
* five fields — minute (0-59), hour (0-23), day of month (1-31), month (1-12 or JAN-DEC), day of week (0-6 or
  SUN-SAT) — each a comma-separated list of `*`/`?`, `N`, `N-M`, with an optional `/STEP` (`N/STEP` is
  `N-max/STEP`); names are case-insensitive;
* or a descriptor: `@yearly`/`@annually`, `@monthly`, `@weekly`, `@daily`/`@midnight`, `@hourly`, `@every
  DURATION` (a Go duration, at least 1 s, whole seconds);
* an optional `TZ=Zone ` or `CRON_TZ=Zone ` prefix (validation refuses it in new schedules; `spec.timeZone` is
  the field for it);
* when both day of month and day of week are restricted (neither starts with `*` or `?`), a day matches either;
  otherwise both must match;
* `Next` gives the first time strictly after a moment, searching at most five years ahead (none: `None`, Go's zero
  time), in the schedule's zone (the controller's local zone when the schedule names none).

Times are POSIX seconds (floats), zones `zoneinfo` zones; all arithmetic is on absolute seconds as Go's `time.Add`
is, and calendar steps build wall-clock times in the zone as Go's `time.Date` does.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from functools import cache

STAR = 1 << 63
"""Set in a field's bits when it was `*` or `?` (robfig's `starBit`): decides how the two day fields combine."""


class CronError(ValueError):
    """A schedule robfig/cron refuses; the message is the library's."""


@dataclass(frozen=True)
class _Bounds:
    low: int
    high: int
    names: dict[str, int] | None = None


_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTHS = {m: i + 1 for i, m in enumerate(_MONTH_NAMES)}
_DAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_MINUTE = _Bounds(0, 59)
_HOUR = _Bounds(0, 23)
_DOM = _Bounds(1, 31)
_MONTH = _Bounds(1, 12, _MONTHS)
_DOW = _Bounds(0, 6, _DAYS)
_ALL_BITS = (1 << 64) - 1


def load_zone(name: str) -> tzinfo:
    """Go's `time.LoadLocation`: "" and "UTC" are UTC, "Local" the machine's zone, else an IANA zone; raises
    CronError("unknown time zone NAME") as Go does."""
    if name in ("", "UTC"):
        return UTC
    if name == "Local":
        return local_zone()
    if name.startswith("/") or ".." in name.split("/") or "\\" in name:
        raise CronError(f"unknown time zone {name}")
    import zoneinfo  # with sysconfig: imported by the first zone named (a run with no CronJob names none)

    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise CronError(f"unknown time zone {name}") from None


@cache
def local_zone() -> tzinfo:
    """The zone kube-controller-manager would call `time.Local`: `$TZ`, else /etc/localtime, else UTC."""
    name = os.environ.get("TZ", "").lstrip(":")
    if name:
        try:
            return load_zone(name)
        except CronError:
            return UTC
    import zoneinfo

    try:
        with open("/etc/localtime", "rb") as tzfile:
            return zoneinfo.ZoneInfo.from_file(tzfile, key="Local")
    except (OSError, ValueError):
        return UTC


def _atoi(text: str) -> int:
    """`mustParseInt`: a non-negative decimal integer (Go's strconv.Atoi messages)."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise CronError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax')
    value = int(text)
    if not -(1 << 63) <= value < (1 << 63):
        raise CronError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": value out of range')
    if value < 0:
        raise CronError(f"negative number ({value}) not allowed: {text}")
    return value


def _int_or_name(text: str, bounds: _Bounds) -> int:
    if bounds.names is not None and text.lower() in bounds.names:
        return bounds.names[text.lower()]
    return _atoi(text)


def _bits(low: int, high: int, step: int) -> int:
    if step == 1:
        return ~(_ALL_BITS << (high + 1)) & (_ALL_BITS << low) & _ALL_BITS
    return sum(1 << i for i in range(low, high + 1, step))


def _range(expr: str, bounds: _Bounds) -> int:
    """robfig's `getRange`: one `*`, `N`, `N-M`, with an optional `/STEP`."""
    range_and_step = expr.split("/")
    low_high = range_and_step[0].split("-")
    extra = 0
    if low_high[0] in ("*", "?"):
        start, end, extra = bounds.low, bounds.high, STAR
    else:
        start = _int_or_name(low_high[0], bounds)
        if len(low_high) == 1:
            end = start
        elif len(low_high) == 2:
            end = _int_or_name(low_high[1], bounds)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _atoi(range_and_step[1])
        if len(low_high) == 1:
            end = bounds.high
        if step > 1:
            extra = 0
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < bounds.low:
        raise CronError(f"beginning of range ({start}) below minimum ({bounds.low}): {expr}")
    if end > bounds.high:
        raise CronError(f"end of range ({end}) above maximum ({bounds.high}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return _bits(start, end, step) | extra


def _field(text: str, bounds: _Bounds) -> int:
    bits = 0
    for expr in (part for part in text.split(",") if part):
        bits |= _range(expr, bounds)
    return bits


_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)([^0-9.]*)")


def parse_go_duration(text: str) -> float:
    """Go's `time.ParseDuration` (seconds); raises CronError with Go's message."""
    quoted = f'"{text}"'
    rest = text
    sign = 1.0
    if rest[:1] in ("+", "-"):
        sign = -1.0 if rest[0] == "-" else 1.0
        rest = rest[1:]
    if rest == "0":
        return 0.0
    if not rest:
        raise CronError(f"time: invalid duration {quoted}")
    total = 0.0
    while rest:
        match = _DURATION_PART.match(rest)
        number, unit = (match.group(1), match.group(2)) if match else ("", "")
        if number in ("", "."):
            raise CronError(f"time: invalid duration {quoted}")
        if not unit:
            raise CronError(f"time: missing unit in duration {quoted}")
        if unit not in _DURATION_UNITS:
            raise CronError(f'time: unknown unit "{unit}" in duration {quoted}')
        total += float(number) * _DURATION_UNITS[unit]
        rest = rest[len(number) + len(unit) :]
    return sign * total


@dataclass(frozen=True)
class SpecSchedule:
    """A five-field schedule (robfig's `SpecSchedule`; seconds always 0). `zone` None: the local zone."""

    minute: int
    hour: int
    dom: int
    month: int
    dow: int
    zone: tzinfo | None = None

    def _day_matches(self, when: datetime) -> bool:
        dom_match = bool(1 << when.day & self.dom)
        dow_match = bool(1 << ((when.weekday() + 1) % 7) & self.dow)
        if self.dom & STAR or self.dow & STAR:
            return dom_match and dow_match
        return dom_match or dow_match

    def next(self, after: float) -> float | None:
        """The first time this schedule fires strictly after `after` (whole seconds), or None within five years."""
        zone = self.zone or local_zone()

        def at(ts: float) -> datetime:
            return datetime.fromtimestamp(ts, zone)

        def wall(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> float:
            """`time.Date` in the zone, normalising a month or day past its end as Go does."""
            year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
            base = datetime(year, month, 1, tzinfo=zone) + timedelta(days=day - 1)
            return datetime(base.year, base.month, base.day, hour, minute, tzinfo=zone).timestamp()

        ts = float(math.floor(after) + 1)
        added = False
        year_limit = at(ts).year + 5
        while True:
            now = at(ts)
            if now.year > year_limit:
                return None
            wrapped = False
            while not 1 << now.month & self.month:
                if not added:
                    added = True
                    ts = wall(now.year, now.month, 1)
                    now = at(ts)
                ts = wall(now.year, now.month + 1, now.day, now.hour, now.minute)
                now = at(ts)
                if now.month == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not self._day_matches(now):
                if not added:
                    added = True
                    ts = wall(now.year, now.month, now.day)
                    now = at(ts)
                ts = wall(now.year, now.month, now.day + 1, now.hour, now.minute)
                now = at(ts)
                if now.hour != 0:  # a DST change moved midnight
                    ts += (24 - now.hour) * 3600 if now.hour > 12 else -now.hour * 3600
                    now = at(ts)
                if now.day == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not 1 << now.hour & self.hour:
                if not added:
                    added = True
                    ts = wall(now.year, now.month, now.day, now.hour)
                ts += 3600
                now = at(ts)
                if now.hour == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not 1 << now.minute & self.minute:
                if not added:
                    added = True
                    ts -= ts % 60
                ts += 60
                now = at(ts)
                if now.minute == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            if now.second != 0:  # the seconds field is always 0
                if not added:
                    added = True
                ts += 60 - now.second
                continue
            return ts


@dataclass(frozen=True)
class EverySchedule:
    """`@every DURATION` (robfig's `ConstantDelaySchedule`): `delay` whole seconds after the moment given."""

    delay: int

    def next(self, after: float) -> float | None:
        """`after` plus the delay, less `after`'s fraction of a second."""
        return math.floor(after) + self.delay


Schedule = SpecSchedule | EverySchedule

_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


def _go_fields(fields: list[str]) -> str:
    """How Go's `%s` prints a []string."""
    return "[" + " ".join(fields) + "]"


def parse_standard(spec: str) -> Schedule:
    """robfig/cron v3 `ParseStandard`; raises CronError with the library's message."""
    if not spec:
        raise CronError("empty spec string")
    zone: tzinfo | None = None
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space = spec.find(" ")
        eq = spec.find("=")
        name = spec[eq + 1 : space] if space >= 0 else spec[eq + 1 :]
        try:
            zone = load_zone(name)
        except CronError as exc:
            raise CronError(f"provided bad location {name}: {exc}") from None
        spec = spec[space:].strip() if space >= 0 else ""
    if spec.startswith("@"):
        if spec in _DESCRIPTORS:
            return _spec(_DESCRIPTORS[spec].split(), zone)
        if spec.startswith("@every "):
            try:
                seconds = parse_go_duration(spec[len("@every ") :])
            except CronError as exc:
                raise CronError(f"failed to parse duration {spec}: {exc}") from None
            return EverySchedule(max(1, int(seconds)) if seconds >= 1 else 1)
        raise CronError(f"unrecognized descriptor: {spec}")
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: {_go_fields(fields)}")
    return _spec(fields, zone)


def _spec(fields: list[str], zone: tzinfo | None) -> SpecSchedule:
    return SpecSchedule(
        minute=_field(fields[0], _MINUTE),
        hour=_field(fields[1], _HOUR),
        dom=_field(fields[2], _DOM),
        month=_field(fields[3], _MONTH),
        dow=_field(fields[4], _DOW),
        zone=zone,
    )
