"""RFC 3339 timestamps as Kubernetes writes them (seconds precision, UTC, trailing Z).

Times inside kjobs are float seconds since the Unix epoch, so that a `Clock` can be virtual; this module
converts at the edges. Go's zero time (year 1) is representable and sorts before any real time.
"""

import functools
from datetime import UTC, datetime

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@functools.lru_cache(maxsize=4096)
def parse_time(text: str) -> float:
    """Parse an RFC 3339 timestamp (`2025-01-01T00:00:00Z`, fractions and offsets allowed) to epoch seconds.

    Remembered: the same few timestamps (whole seconds) are read from every pod on every change."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return (parsed - _EPOCH).total_seconds()


def format_time(seconds: float) -> str:
    """Format epoch seconds as Kubernetes' metav1.Time JSON (whole seconds, `Z`).

    Every write stamps a time or two and they mostly fall in the same second: the last one is remembered."""
    whole = int(seconds // 1)
    if whole == _last[0]:
        return str(_last[1])
    moment = datetime.fromtimestamp(whole, tz=UTC) if seconds >= 0 else _from_negative(seconds)
    text = moment.strftime("%Y-%m-%dT%H:%M:%SZ").rjust(20, "0")
    _last[:] = [whole, text]
    return text


_last: list[object] = [None, ""]


def _from_negative(seconds: float) -> datetime:
    from datetime import timedelta

    return _EPOCH + timedelta(seconds=int(seconds // 1))


def parse_duration(text: str) -> float:
    """Parse a Go-style duration such as `10s`, `100ms`, `10m`, `1h30m` to seconds."""
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    total, number, i = 0.0, "", 0
    while i < len(text):
        ch = text[i]
        if ch.isdigit() or ch == ".":
            number += ch
            i += 1
            continue
        unit = next((u for u in ("ns", "us", "µs", "ms", "s", "m", "h") if text.startswith(u, i)), None)
        if unit is None or not number:
            raise ValueError(f"invalid duration {text!r}")
        total += float(number) * units[unit]
        number, i = "", i + len(unit)
    if number:
        raise ValueError(f"missing unit in duration {text!r}")
    return total
