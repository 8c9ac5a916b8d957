"""Integers from query parameters, read as the apiserver's Go types read them.

Query parameters decode with `strconv.ParseInt(text, 10, 64)` (apimachinery `runtime.Convert_Slice_string_To_int64`,
used by `DecodeParameters`): an optional sign and decimal digits, nothing else (Python's `int` also takes spaces,
underscores and non-ASCII digits), within int64; the handlers answer a failure 400 BadRequest with Go's error text.
A resourceVersion is a uint64 (storage `APIObjectVersioner.ParseResourceVersion`, `strconv.ParseUint`). The values
of a JSON body are typed by `kjobs.server.gotypes`, as Go's decoder types them.
"""

from __future__ import annotations

import re

from kjobs.api.errors import bad_request, go_quote

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1

_SIGNED = re.compile(r"[+-]?[0-9]+")
_UNSIGNED = re.compile(r"[0-9]+")


def parse_int64(text: str) -> int:
    """`strconv.ParseInt(text, 10, 64)`; 400 BadRequest with its error (`invalid syntax`, `value out of range`)."""
    if _SIGNED.fullmatch(text) is None:
        raise bad_request(f"strconv.ParseInt: parsing {go_quote(text)}: invalid syntax")
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise bad_request(f"strconv.ParseInt: parsing {go_quote(text)}: value out of range")
    return value


def parse_uint64(text: str) -> int | None:
    """`strconv.ParseUint(text, 10, 64)`: the value, or None when `text` is not one (the caller words the error)."""
    if _UNSIGNED.fullmatch(text) is None:
        return None
    value = int(text)
    return value if value <= UINT64_MAX else None
