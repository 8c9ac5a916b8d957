"""`metav1.Time` and `metav1.MicroTime` as kube-apiserver decodes and re-encodes them.

`Time.UnmarshalJSON` reads a JSON string with Go's `time.Parse(time.RFC3339, s)` and `MarshalJSON` writes
`t.UTC().Format(time.RFC3339)`: whole seconds (the fraction cut), UTC, `Z`. `MicroTime` does the same with
`RFC3339Micro` (`2006-01-02T15:04:05.000000Z07:00`), whose parse wants exactly six fraction digits
(apimachinery pkg/apis/meta/v1/time.go, micro_time.go). A string Go cannot parse fails the whole decode with
`time.ParseError`'s text (Go's src/time/format.go: `parse`, `skip`, `getnum`, `parseNanoseconds`, `quote`), which
the apiserver answers as `<Kind> in version "v1" cannot be handled as a <Kind>: parsing time ...`.

What clients send: the Python client `datetime.isoformat()` (`2026-01-02T03:04:05+00:00`, stored as
`2026-01-02T03:04:05Z`); the JavaScript client `Date.toISOString()` (`...05.123Z`: a Time's fraction is cut, a
MicroTime's three digits are refused unless the caller used the client's `V1MicroTime`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"


class ParseError(ValueError):
    """Go's `*time.ParseError`, its `Error()` as the message."""


def normalize(text: str, micro: bool = False) -> str:
    """`text` as kube-apiserver stores it after decoding it into a Time (`micro`: a MicroTime); ParseError with
    Go's message when Go cannot parse it."""
    year, month, day, hour, minute, second, nanos, offset = _parse(text, micro)
    try:
        moment = datetime(year, month, day, hour, minute, second, nanos // 1000, tzinfo=timezone(offset))
        moment = moment.astimezone(UTC)
    except (ValueError, OverflowError):
        return text  # beyond what Python's datetime holds (year 1 with an east offset, a 24 h offset): as sent
    head = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}"
    head += f":{moment.second:02d}"
    return f"{head}.{moment.microsecond:06d}Z" if micro else f"{head}Z"


def quote(text: str) -> str:
    """Go's time package `quote`: double quotes, `"` and `\\` escaped, a byte of a control or non-ASCII
    character as `\\xhh`."""
    out = ['"']
    for char in text:
        if ord(char) >= 0x80 or char < " ":
            out.extend(f"\\x{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
        else:
            out.append("\\" + char if char in '"\\' else char)
    out.append('"')
    return "".join(out)


class _Bad(Exception):
    """`errBad` (`cannot parse VALUE as ELEMENT`) or, with a message, a range error."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message


def _error(layout: str, value: str, element: str, rest: str, message: str = "") -> ParseError:
    if message:
        return ParseError(f"parsing time {quote(value)}{message}")
    return ParseError(f"parsing time {quote(value)} as {quote(layout)}: cannot parse {quote(rest)} as {quote(element)}")


def _getnum(value: str, fixed: bool) -> tuple[int, str]:
    if not value[:1].isdigit() or not value[:1].isascii():
        raise _Bad
    if len(value) < 2 or not ("0" <= value[1] <= "9"):
        if fixed:
            raise _Bad
        return int(value[0]), value[1:]
    return int(value[:2]), value[2:]


def _nanos(value: str, digits: int) -> int:
    """`parseNanoseconds(value, digits)`: value[0] is the separator, then `digits - 1` digits (at most 9 read)."""
    if value[0] not in ".,":
        raise _Bad
    text = value[1 : min(digits, 10)]
    if not text or not all("0" <= c <= "9" for c in text):
        raise _Bad
    return int(text.ljust(9, "0"))


def _fraction_follows(value: str) -> bool:
    return len(value) >= 2 and value[0] in ".," and "0" <= value[1] <= "9"


def _parse(text: str, micro: bool) -> tuple[int, int, int, int, int, int, int, timedelta]:
    layout = RFC3339_MICRO if micro else RFC3339
    chunks = [("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05")]
    chunks += [("", ".000000")] if micro else []
    chunks.append(("", "Z07:00"))
    value = text
    fields: dict[str, int] = {}
    nanos, offset = 0, timedelta(0)
    for index, (prefix, element) in enumerate(chunks):
        if prefix:
            if not value.startswith(prefix):
                raise _error(layout, text, prefix, value)
            value = value[len(prefix) :]
        hold, range_error = value, ""
        try:
            if element == "2006":
                if len(value) < 4 or not all("0" <= c <= "9" for c in value[:4]):
                    raise _Bad
                fields[element], value = int(value[:4]), value[4:]
            elif element in ("01", "04", "05", "15"):
                number, value = _getnum(value, element != "15")
                fields[element] = number
                limit = {"01": 12, "04": 59, "05": 59, "15": 23}[element]
                if not (1 if element == "01" else 0) <= number <= limit:
                    range_error = {"01": "month", "04": "minute", "05": "second", "15": "hour"}[element]
                elif element == "05" and _fraction_follows(value) and chunks[index + 1][1] != ".000000":
                    digits = 2  # a fraction the layout does not name is read anyway
                    while digits < len(value) and "0" <= value[digits] <= "9":
                        digits += 1
                    nanos, value = _nanos(value, digits), value[digits:]
            elif element == "02":
                fields[element], value = _getnum(value, True)
            elif element == ".000000":
                if len(value) < 7:
                    raise _Bad
                nanos, value = _nanos(value, 7), value[7:]
            else:  # Z07:00
                if value[:1] == "Z":
                    value = value[1:]
                else:
                    if len(value) < 6 or value[3] != ":":
                        raise _Bad
                    sign, hours, minutes, value = value[0], value[1:3], value[4:6], value[6:]
                    bad = False
                    try:
                        hh, _ = _getnum(hours, True)
                        mm, _ = _getnum(minutes, True)
                    except _Bad:
                        hh, mm, bad = 0, 0, True
                    if hh > 24:
                        range_error = "time zone offset hour"
                    if mm > 60:
                        range_error = "time zone offset minute"  # (Go tests both; the later one is reported)
                    if not range_error and (bad or sign not in "+-"):
                        raise _Bad  # a range error is reported first, as Go checks it first
                    offset = (1 if sign == "+" else -1) * timedelta(hours=hh, minutes=mm)
        except _Bad:
            raise _error(layout, text, element, hold) from None
        if range_error:
            raise _error(layout, text, element, value, f": {range_error} out of range")
    if value:
        raise _error(layout, text, "", value, f": extra text: {quote(value)}")
    year, month, day = fields["2006"], fields["01"], fields["02"]
    try:
        datetime(year or 1, month, day)
    except ValueError:
        if not (year == 0 and month == 2 and day == 29):  # year 0 is a leap year in Go, not representable here
            raise _error(layout, text, "", value, ": day out of range") from None
    return year, month, day, fields["15"], fields["04"], fields["05"], nanos, offset
