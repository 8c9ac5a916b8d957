"""Typed reads of untrusted JSON for the validators: a wrong type becomes a `FieldError`, never an exception.

Kubernetes decodes a request into Go structs before validating it, so a string where an int32 belongs is a
decode error there. kjobs validates the JSON dicts directly; every read goes through these helpers, which
return the value when it has the expected JSON type, `None` when it is absent or null (Go's nil / zero value),
and otherwise record `FieldValueInvalid` with detail `must be of type <type>` at the field's path.
"""

from __future__ import annotations

from typing import Any

from kjobs.api.errors import ErrorType, FieldError
from kjobs.api.types import Obj

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

Errors = list[FieldError]


TYPE_ERROR_PREFIX = "must be of type "


def type_error(path: str, value: Any, kind: str) -> FieldError:
    """The error recorded for a value of the wrong JSON type (Kubernetes would reject it at decode time)."""
    return FieldError(path, ErrorType.FieldValueInvalid, TYPE_ERROR_PREFIX + kind, value)


def is_type_error(error: FieldError) -> bool:
    """Whether `error` is a wrong-JSON-type error, which a real API server reports as a 400 decode error."""
    return error.type is ErrorType.FieldValueInvalid and error.detail.startswith(TYPE_ERROR_PREFIX)


def get_obj(parent: Obj, key: str, path: str, errs: Errors) -> Obj | None:
    """A nested object, or None when absent."""
    value = parent.get(key)
    if value is None or type(value) is dict:
        return value
    errs.append(type_error(path, value, "object"))
    return None


def get_list(parent: Obj, key: str, path: str, errs: Errors) -> list[Any] | None:
    """A list, or None when absent."""
    value = parent.get(key)
    if value is None or type(value) is list:
        return value
    errs.append(type_error(path, value, "array"))
    return None


def get_str(parent: Obj, key: str, path: str, errs: Errors) -> str | None:
    """A string, or None when absent."""
    value = parent.get(key)
    if value is None or type(value) is str:
        return value
    errs.append(type_error(path, value, "string"))
    return None


def get_bool(parent: Obj, key: str, path: str, errs: Errors) -> bool | None:
    """A boolean, or None when absent."""
    value = parent.get(key)
    if value is None or type(value) is bool:
        return value
    errs.append(type_error(path, value, "boolean"))
    return None


def check_int(value: Any, path: str, errs: Errors, *, bits: int = 32) -> int | None:
    """`value` itself as an int32/int64 (None stays None); a float, bool or out-of-range number is an error."""
    if value is None:
        return None
    if type(value) is int:
        lo, hi = (INT32_MIN, INT32_MAX) if bits == 32 else (INT64_MIN, INT64_MAX)
        if lo <= value <= hi:
            return value
    errs.append(type_error(path, value, f"int{bits}"))
    return None


def get_int(parent: Obj, key: str, path: str, errs: Errors, *, bits: int = 32) -> int | None:
    """An int32 (or int64 with `bits=64`), or None when absent."""
    return check_int(parent.get(key), path, errs, bits=bits)


def get_str_map(parent: Obj, key: str, path: str, errs: Errors) -> dict[str, str] | None:
    """A map of strings (labels, annotations, nodeSelector); non-string values are errors and dropped."""
    value = get_obj(parent, key, path, errs)
    if value is None:
        return None
    for item in value.values():  # every label and annotation map of every write: no list unless one is bad
        if type(item) is not str:
            break
    else:
        return value
    bad = [k for k, v in value.items() if type(v) is not str]
    for k in bad:
        errs.append(type_error(f"{path}[{k}]", value[k], "string"))
    return {k: v for k, v in value.items() if type(v) is str}


def items_of(values: list[Any] | None, path: str, errs: Errors) -> list[tuple[int, Obj]]:
    """The (index, object) entries of a list of objects; entries of another type are errors."""
    if not values:
        return []
    out = []
    for i, item in enumerate(values):
        if type(item) is dict:
            out.append((i, item))
        else:
            errs.append(type_error(f"{path}[{i}]", item, "object"))
    return out


def strings_of(values: list[Any] | None, path: str, errs: Errors) -> list[str]:
    """The entries of a list of strings; entries of another type are errors and dropped."""
    if not values:
        return []
    out = []
    for i, item in enumerate(values):
        if type(item) is str:
            out.append(item)
        else:
            errs.append(type_error(f"{path}[{i}]", item, "string"))
    return out
