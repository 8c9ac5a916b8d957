"""Integers from query parameters and request bodies, read as the apiserver's Go types read them.

Query parameters decode with `strconv.ParseInt(text, 10, 64)` (apimachinery `runtime.Convert_Slice_string_To_int64`,
used by `DecodeParameters`): an optional sign and decimal digits, nothing else (Python's `int` also takes spaces,
underscores and non-ASCII digits), within int64; the handlers answer a failure 400 BadRequest with Go's error text.
A resourceVersion is a uint64 (storage `APIObjectVersioner.ParseResourceVersion`, `strconv.ParseUint`). A JSON
body's int64 field takes a JSON integer within int64, never a float, a string or a boolean (encoding/json: `cannot
unmarshal number 1.5 into Go struct field ... of type int64`).
"""

from __future__ import annotations

import re
from typing import Any

from kjobs.api.errors import ApiError, bad_request, go_quote

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


def body_int64(value: Any, field: str, struct: str) -> int:
    """A JSON body's int64 field `struct.field` (`struct`: the Go type, `field` the dotted JSON path under it):
    400 BadRequest with encoding/json's error for anything but an integer within int64 (orjson reads `1.0` as a
    float, and Go refuses it)."""
    if isinstance(value, bool) or not isinstance(value, int) or not INT64_MIN <= value <= INT64_MAX:
        raise body_type_error(value, field, struct, "int64")
    return value


def body_object(body: dict[str, Any], field: str, struct: str, go_type: str) -> dict[str, Any]:
    """A JSON body's struct-typed field (`{}` when absent or null): 400 BadRequest for any other JSON type."""
    value = body.get(field.rsplit(".", 1)[-1])
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise body_type_error(value, field, struct, go_type)
    return value


def body_string(body: dict[str, Any], field: str, struct: str) -> str | None:
    """A JSON body's string field (None when absent or null): 400 BadRequest for any other JSON type."""
    value = body.get(field.rsplit(".", 1)[-1])
    if value is not None and not isinstance(value, str):
        raise body_type_error(value, field, struct, "string")
    return value


def body_type_error(value: Any, field: str, struct: str, go_type: str) -> ApiError:
    """encoding/json's `UnmarshalTypeError` for `value` in `struct.field`, as a 400 BadRequest: `json: cannot
    unmarshal number 1.5 into Go struct field DeleteOptions.gracePeriodSeconds of type int64` (a number names its
    text only where it went into a number of the wrong kind, as Go's decoder does)."""
    if isinstance(value, bool):
        what = "bool"
    elif isinstance(value, (int, float)):
        what = f"number {value}" if go_type.startswith(("int", "uint")) else "number"
    elif isinstance(value, str):
        what = "string"
    elif isinstance(value, list):
        what = "array"
    else:
        what = "object"
    return bad_request(f"json: cannot unmarshal {what} into Go struct field {struct}.{field} of type {go_type}")


def cannot_handle(kind: str, version: str, error: ApiError) -> ApiError:
    """A create body's decode error as the create handler words it (handlers/create.go, `transformDecodeError`):
    `Binding in version "v1" cannot be handled as a Binding: json: ...`."""
    return bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: {error.message}')
