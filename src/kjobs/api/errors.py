"""Field errors and API errors, one to one with Kubernetes' `field.Error` and `metav1.Status`.

Validation returns `FieldError`s; anything that rejects a request raises an `ApiError`, which renders
as the `Status` object a Kubernetes API server sends (the HTTP server and the in-process client share it).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from kjobs.api.types import Obj


class ErrorType(StrEnum):
    """Kubernetes' `field.ErrorType`, named as the Go constants and carrying the cause reason string."""

    FieldValueInvalid = "FieldValueInvalid"
    FieldValueRequired = "FieldValueRequired"
    FieldValueNotSupported = "FieldValueNotSupported"
    FieldValueDuplicate = "FieldValueDuplicate"
    FieldValueTooMany = "FieldValueTooMany"
    FieldValueTooLong = "FieldValueTooLong"
    FieldValueForbidden = "FieldValueForbidden"
    FieldValueNotFound = "FieldValueNotFound"
    InternalError = "InternalError"

    @property
    def text(self) -> str:
        """The phrase Kubernetes prints for this type (`Invalid value`, `Required value`, ...)."""
        return _TYPE_TEXT[self]


_TYPE_TEXT = {
    ErrorType.FieldValueInvalid: "Invalid value",
    ErrorType.FieldValueRequired: "Required value",
    ErrorType.FieldValueNotSupported: "Unsupported value",
    ErrorType.FieldValueDuplicate: "Duplicate value",
    ErrorType.FieldValueTooMany: "Too many",
    ErrorType.FieldValueTooLong: "Too long",
    ErrorType.FieldValueForbidden: "Forbidden",
    ErrorType.FieldValueNotFound: "Not found",
    ErrorType.InternalError: "Internal error",
}

OMIT = object()
"""Sentinel bad value: the error is rendered without a value (Go's `field.Invalid(path, nil, ...)` forms)."""


@dataclass(frozen=True)
class FieldError:
    """One validation error: where (`field`), what kind (`type`), the offending value and why (`detail`)."""

    field: str
    type: ErrorType
    detail: str = ""
    bad_value: Any = dataclasses.field(default=OMIT, compare=False)

    def __str__(self) -> str:
        """Render as Kubernetes' `field.Error.Error()` does, e.g. `spec.x: Invalid value: 1: must be ...`."""
        return f"{self.field}: {self.body()}"

    def body(self) -> str:
        """Kubernetes' `ErrorBody()`: the message without the field path (what a `StatusCause` carries)."""
        if self.type in _VALUELESS or self.bad_value is OMIT:
            head = self.type.text
        else:
            head = f"{self.type.text}: {render_value(self.bad_value)}"
        return f"{head}: {self.detail}" if self.detail else head

    def cause(self) -> Obj:
        """The `StatusCause` an API server sends for this error (message without the field prefix)."""
        text = str(self)
        message = text[len(self.field) + 2 :] if text.startswith(self.field + ": ") else text
        return {"reason": self.type.value, "message": message, "field": self.field}


_VALUELESS = frozenset(
    {ErrorType.FieldValueRequired, ErrorType.FieldValueForbidden, ErrorType.FieldValueTooLong, ErrorType.InternalError}
)


# The constructors below carry the texts of Kubernetes' `field` helpers whose detail Kubernetes writes itself, as
# of the commit the conformance corpus names (`source.commit`), in
# staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go. Build those errors only through them.


def too_long(path: str, max_length: int) -> FieldError:
    """`field.TooLong`: `may not be more than N bytes` (`byte` for 1; `value is too long` without a maximum).

    Kubernetes replaces the value by `<value omitted>`; the rendered message never shows it (a TooLong body is
    valueless), so neither does this error.
    """
    if max_length < 0:
        detail = "value is too long"
    else:
        detail = f"may not be more than {max_length} {'byte' if max_length == 1 else 'bytes'}"
    return FieldError(path, ErrorType.FieldValueTooLong, detail, "<value omitted>")


def too_many(path: str, actual: int, max_quantity: int) -> FieldError:
    """`field.TooMany`: `must have at most N items` (`item` for 1; `has too many items` without a maximum); the
    actual count is the bad value, omitted when negative (unknown)."""
    if max_quantity < 0:
        detail = "has too many items"
    else:
        detail = f"must have at most {max_quantity} {'item' if max_quantity == 1 else 'items'}"
    return FieldError(path, ErrorType.FieldValueTooMany, detail, actual if actual >= 0 else OMIT)


def not_supported(path: str, value: Any, supported: list[str] | tuple[str, ...]) -> FieldError:
    """`field.NotSupported`: `supported values: "a", "b"` (each `strconv.Quote`d; no detail when none given)."""
    detail = "supported values: " + ", ".join(go_quote(v) for v in supported) if supported else ""
    return FieldError(path, ErrorType.FieldValueNotSupported, detail, value)


def go_quote(text: str) -> str:
    """Go's `strconv.Quote` (`%q`): double quotes, printable characters kept, the rest escaped."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_GO_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


class Raw:
    """A bad value printed verbatim: a Go value whose `String()` or `%v` form Kubernetes prints (a
    `resource.Quantity` unquoted, a struct already rendered), where `render_value` would quote or re-encode it."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


_MAX_RENDER_DEPTH = 32


def render_value(value: Any, _depth: int = 0) -> str:
    """Render a bad value as Kubernetes' `field.Error.ErrorBody` does: `%q` strings, `%v` numbers and booleans,
    and any composite value (list, map, struct) as its JSON (Go's `encoding/json`), as apimachinery has since
    "Nicer value rendering in API errors" (2025): `[19,11]`, `{"y":"z"}`, `null` for nil.
    Nesting deeper than 32 levels is elided as `...`.
    """
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, (list, dict)):
        return go_json(value, _depth)
    return str(value)


def go_json(value: Any, _depth: int = 0) -> str:
    """`json.Marshal` as Go writes it: compact, map keys sorted, HTML characters and U+2028/9 escaped."""
    if isinstance(value, (list, dict)) and _depth >= _MAX_RENDER_DEPTH:
        return "..."
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_json_float(value)
    if isinstance(value, str):
        return go_json_string(value)
    if isinstance(value, list):
        return "[" + ",".join(go_json(v, _depth + 1) for v in value) + "]"
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: str(kv[0]))
        return "{" + ",".join(f"{go_json_string(str(k))}:{go_json(v, _depth + 1)}" for k, v in items) + "}"
    return go_json_string(str(value))


def go_json_struct(fields: list[tuple[str, str]]) -> str:
    """A Go struct's JSON: its fields in declaration order (`fields` holds each name and its rendered JSON)."""
    return "{" + ",".join(f"{go_json_string(name)}:{rendered}" for name, rendered in fields) + "}"


_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def go_json_string(text: str) -> str:
    """A JSON string as `encoding/json` writes it (`<`, `>`, `&`, U+2028, U+2029 and control characters as \\u)."""
    out = ['"']
    for ch in text:
        if ch in _JSON_ESCAPES:
            out.append(_JSON_ESCAPES[ch])
        elif ord(ch) < 0x20 or ch in "<>&\u2028\u2029":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _go_json_float(value: float) -> str:
    """`encoding/json`'s float64: `%f`-style between 1e-6 and 1e21, otherwise exponent form (`1e-7`, `1e+21`)."""
    if value != value or value in (float("inf"), float("-inf")):
        return "null"  # Go refuses these; nothing a manifest can carry
    magnitude = abs(value)
    if value == int(value) and magnitude < 1e21:
        return str(int(value))
    if magnitude < 1e-6 or magnitude >= 1e21:
        mantissa, exp = repr(value).split("e") if "e" in repr(value) else f"{value:e}".split("e")
        sign = "-" if exp.startswith("-") else "+"
        return f"{mantissa}e{sign}{exp.lstrip('+-').lstrip('0') or '0'}"
    text = repr(value)
    if "e" in text:
        from decimal import Decimal

        text = format(Decimal(text), "f")
    return text


def _go_float(value: float) -> str:
    """Go's `%v` for a float64 (shortest representation, exponent form from 1e21)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, exp = text.split("e")
        sign = "-" if exp.startswith("-") else "+"
        digits = exp.lstrip("+-").rjust(2, "0")
        return f"{mantissa}e{sign}{digits}"
    return text


class ApiError(Exception):
    """An API request failed; carries the Kubernetes `Status` (reason, code, details) to send or raise."""

    field_errors: list[FieldError] | None = None
    """The field errors of a 422 Invalid made by `invalid` (for `kjobs validate`, which prints them)."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        details: Obj | None = None,
        metadata: Obj | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.metadata = metadata

    def status(self) -> Obj:
        """The `metav1.Status` object for this error."""
        body: Obj = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": dict(self.metadata or {}),
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if self.details is not None:  # before `code`, as metav1.Status declares its fields
            body["details"] = self.details
        body["code"] = self.code
        return body

    def has_cause(self, reason: str) -> bool:
        """Whether `details.causes` names `reason` (apimachinery's `errors.HasStatusCause`; a namespace going away
        answers a create with the cause `NamespaceTerminating`)."""
        return any(cause.get("reason") == reason for cause in (self.details or {}).get("causes") or [])

    @classmethod
    def from_status(cls, status: Obj) -> ApiError:
        """Rebuild the error from a `Status` a server sent (the HTTP client raises what the server said)."""
        return cls(
            int(status.get("code") or 500),
            str(status.get("reason") or "InternalError"),
            str(status.get("message") or ""),
            details=status.get("details"),
        )


def raise_failure_status(obj: Obj) -> None:
    """Raise the error a successful answer carries: client-go's rest client reads a `Status` whose `status` is
    not Success as an error whatever the HTTP code (rest/request.go `transformResponse`). The Eviction API answers
    a pod under two budgets that way, HTTP 201 with a Failure `Status` of code 500."""
    if obj.get("kind") == "Status" and obj.get("status") not in (None, "", "Success"):
        raise ApiError.from_status(obj)


def invalid(kind: str, name: str, errors: list[FieldError], *, group: str = "") -> ApiError:
    """422 Invalid, exactly as Kubernetes' `errors.NewInvalid` builds it: every error is a cause, and the message
    lists each distinct one once (`ErrorList.ToAggregate` drops repeated messages, e.g. a pod update's labels,
    which `ValidatePodUpdate` checks both as metadata and as updated metadata)."""
    qualified = f"{kind}.{group}" if group else kind
    messages = list(dict.fromkeys(str(e) for e in errors))
    summary = messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
    details: Obj = {"name": name, "kind": kind, "causes": [e.cause() for e in errors]}
    if group:
        details["group"] = group
    error = ApiError(422, "Invalid", f'{qualified} "{name}" is invalid: {summary}', details=details)
    error.field_errors = list(errors)
    return error


def not_found(resource: str, name: str, *, group: str = "") -> ApiError:
    """404 NotFound, worded as Kubernetes words it (`jobs.batch "x" not found`)."""
    qualified = f"{resource}.{group}" if group else resource
    details: Obj = {"name": name, "kind": resource}
    if group:
        details["group"] = group
    return ApiError(404, "NotFound", f'{qualified} "{name}" not found', details=details)


def forbidden(resource: str, name: str, why: str, *, group: str = "") -> ApiError:
    """403 Forbidden as `errors.NewForbidden` words it (an admission plugin's refusal, `admission.NewForbidden`):
    `pods "x" is forbidden: <why>`, or without the name when the request had none."""
    qualified = f"{resource}.{group}" if group else resource
    details: Obj = {"name": name, "kind": resource}
    if group:
        details["group"] = group
    subject = f'{qualified} "{name}"' if name else qualified
    return ApiError(403, "Forbidden", f"{subject} is forbidden: {why}", details=details)


def already_exists(resource: str, name: str, *, group: str = "") -> ApiError:
    """409 AlreadyExists."""
    qualified = f"{resource}.{group}" if group else resource
    details: Obj = {"name": name, "kind": resource}
    if group:
        details["group"] = group
    return ApiError(409, "AlreadyExists", f'{qualified} "{name}" already exists', details=details)


def conflict(resource: str, name: str, *, group: str = "") -> ApiError:
    """409 Conflict for a stale resourceVersion, with Kubernetes' exact message."""
    qualified = f"{resource}.{group}" if group else resource
    details: Obj = {"name": name, "kind": resource}
    if group:
        details["group"] = group
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified} "{name}": the object has been modified; '
        "please apply your changes to the latest version and try again",
        details=details,
    )


def bad_request(message: str) -> ApiError:
    """400 BadRequest."""
    return ApiError(400, "BadRequest", message)


def gone(message: str) -> ApiError:
    """410 Expired: a watch or list asked for a revision the store no longer holds."""
    return ApiError(410, "Expired", message)
