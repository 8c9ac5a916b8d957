"""Cron schedules as robfig/cron v3's `ParseStandard` reads them: what fires when, and the refusals' messages."""

from __future__ import annotations

import pytest

from kjobs.api.cron import CronError, EverySchedule, load_zone, parse_go_duration, parse_standard
from kjobs.api.timeutil import format_time, parse_time


def next_after(spec: str, after: str) -> str | None:
    moment = parse_standard(spec).next(parse_time(after))
    return None if moment is None else format_time(moment)


@pytest.mark.parametrize(
    ("spec", "after", "expected"),
    [
        ("*/15 * * * *", "2012-07-09T14:45:00Z", "2012-07-09T15:00:00Z"),
        ("*/15 * * * *", "2012-07-09T14:59:59Z", "2012-07-09T15:00:00Z"),
        ("* * * * *", "2012-07-09T14:45:30Z", "2012-07-09T14:46:00Z"),
        ("0 * * * *", "2012-07-09T23:30:00Z", "2012-07-10T00:00:00Z"),
        ("30 2 * * *", "2012-12-31T03:00:00Z", "2013-01-01T02:30:00Z"),
        ("0 0 29 2 *", "2013-01-01T00:00:00Z", "2016-02-29T00:00:00Z"),
        ("0 0 31 * *", "2024-04-01T00:00:00Z", "2024-05-31T00:00:00Z"),
        ("0 0 * JAN-MAR sun", "2024-03-31T00:00:00Z", "2025-01-05T00:00:00Z"),
        ("5-10/5 1 * * *", "2024-01-01T01:05:00Z", "2024-01-01T01:10:00Z"),
        ("55/2 1 * * *", "2024-01-01T01:57:00Z", "2024-01-01T01:59:00Z"),
        ("55/2 1 * * *", "2024-01-01T01:59:00Z", "2024-01-02T01:55:00Z"),
        ("0 12 1,15 * *", "2024-01-02T00:00:00Z", "2024-01-15T12:00:00Z"),
        ("@hourly", "2024-01-01T10:30:00Z", "2024-01-01T11:00:00Z"),
        ("@daily", "2024-01-01T10:30:00Z", "2024-01-02T00:00:00Z"),
        ("@weekly", "2024-01-01T10:30:00Z", "2024-01-07T00:00:00Z"),
        ("@monthly", "2024-01-31T10:30:00Z", "2024-02-01T00:00:00Z"),
        ("@yearly", "2024-01-31T10:30:00Z", "2025-01-01T00:00:00Z"),
        ("? ? ? ? ?", "2024-01-01T10:30:00Z", "2024-01-01T10:31:00Z"),
    ],
)
def test_next_time_in_utc(spec: str, after: str, expected: str) -> None:
    assert next_after(f"TZ=UTC {spec}", after) == expected


def test_both_day_fields_restricted_means_either_day() -> None:
    # Friday 13th: with both fields given a day matches either (Friday 5 January 2024 comes first) ...
    assert next_after("TZ=UTC 0 9 13 * FRI", "2024-01-01T00:00:00Z") == "2024-01-05T09:00:00Z"
    # ... with one of them `*` both must match.
    assert next_after("TZ=UTC 0 9 * * FRI", "2024-01-01T00:00:00Z") == "2024-01-05T09:00:00Z"
    assert next_after("TZ=UTC 0 9 13 * *", "2024-01-01T00:00:00Z") == "2024-01-13T09:00:00Z"


def test_a_star_with_a_step_above_one_no_longer_counts_as_star() -> None:
    # `*/2` (days 1, 3, 5, ...) is a restriction: either day field matches; `*/1` still counts as `*`.
    assert next_after("TZ=UTC 0 9 */2 * FRI", "2024-01-01T10:00:00Z") == "2024-01-03T09:00:00Z"
    assert next_after("TZ=UTC 0 9 */1 * FRI", "2024-01-01T10:00:00Z") == "2024-01-05T09:00:00Z"


def test_a_date_that_never_comes_gives_none_after_five_years() -> None:
    assert next_after("TZ=UTC 0 0 30 2 *", "2024-01-01T00:00:00Z") is None


def test_a_time_zone_prefix_is_honoured_across_daylight_saving() -> None:
    assert next_after("TZ=America/New_York 0 9 * * *", "2024-01-01T00:00:00Z") == "2024-01-01T14:00:00Z"
    assert next_after("CRON_TZ=America/New_York 0 9 * * *", "2024-07-01T00:00:00Z") == "2024-07-01T13:00:00Z"


def test_every_rounds_down_to_whole_seconds_and_counts_from_the_moment_given() -> None:
    assert parse_standard("@every 90s") == EverySchedule(90)
    assert parse_standard("@every 1h30m") == EverySchedule(5400)
    assert parse_standard("@every 500ms") == EverySchedule(1)
    assert parse_standard("@every 2.7s").next(100.5) == 102


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty spec string"),
        ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
        ("* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]"),
        ("60 * * * *", "end of range (60) above maximum (59): 60"),
        ("* 24 * * *", "end of range (24) above maximum (23): 24"),
        ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("* * * 13 *", "end of range (13) above maximum (12): 13"),
        ("* * * * 7", "end of range (7) above maximum (6): 7"),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("a * * * *", 'failed to parse int from a: strconv.Atoi: parsing "a": invalid syntax'),
        ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
        ("1/2/3 * * * *", "too many slashes: 1/2/3"),
        ("@fortnightly", "unrecognized descriptor: @fortnightly"),
        ("@every 1x", 'failed to parse duration @every 1x: time: unknown unit "x" in duration "1x"'),
        ("@every 5", 'failed to parse duration @every 5: time: missing unit in duration "5"'),
        ("TZ=Mars/Olympus * * * * *", "provided bad location Mars/Olympus: unknown time zone Mars/Olympus"),
    ],
)
def test_refusals_carry_robfig_cron_messages(spec: str, message: str) -> None:
    with pytest.raises(CronError) as caught:
        parse_standard(spec)
    assert str(caught.value) == message


def test_go_durations_and_zones() -> None:
    assert parse_go_duration("1h2m3.5s") == pytest.approx(3723.5)
    assert parse_go_duration("0") == 0.0
    assert parse_go_duration("-2m") == -120.0
    with pytest.raises(CronError, match='time: invalid duration ""'):
        parse_go_duration("")
    assert load_zone("") is load_zone("UTC")
    with pytest.raises(CronError, match="unknown time zone Nowhere/Place"):
        load_zone("Nowhere/Place")
