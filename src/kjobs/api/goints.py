"""Integers as Go's `strconv` reads them, for the strings Kubernetes parses with it.

Python's `int()` also takes blanks, `_` separators and non-ASCII digits (`int(" 2")`, `int("1_000")`,
`int("٣")`), which `strconv.ParseInt(s, 10, 64)` and `strconv.Atoi` (on a 64-bit platform) refuse: a completion
index, an interval string or a `Gt`/`Lt` label value written so is corrupt or no number to Kubernetes.
"""

from __future__ import annotations

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1


def go_atoi(text: str) -> int | None:
    """The number `strconv.Atoi` / `strconv.ParseInt(text, 10, 64)` reads in `text`, or None where it fails: an
    optional sign, then ASCII digits only, within int64."""
    if not text.isascii():
        return None
    if not text.isdigit():
        if text[:1] not in ("+", "-") or not text[1:].isdigit():
            return None
    elif len(text) < 19:  # the usual case, surely within int64
        return int(text)
    sign, digits = (text[0], text[1:]) if text[0] in "+-" else ("", text)
    digits = digits.lstrip("0") or "0"
    if len(digits) > 19:  # out of range: no conversion of thousands of digits (int() refuses past 4,300)
        return None
    value = int(sign + digits)
    return value if INT64_MIN <= value <= INT64_MAX else None


def go_seconds(seconds: int) -> float:
    """`time.Second * time.Duration(seconds)` in seconds: Go's Duration is int64 nanoseconds, and the product
    wraps around past 292 years (a DELETE's `gracePeriodSeconds` of 9223372036854775807 is -1 s to
    `rest.BeforeDelete`), where Python's float would reach a year no timestamp can hold."""
    nanos = (seconds * 1_000_000_000) & 0xFFFF_FFFF_FFFF_FFFF
    if nanos > INT64_MAX:
        nanos -= 1 << 64
    return nanos / 1e9
