"""Regular expressions as Go's `regexp` reads them, for the `pattern` of a custom resource's schema.

Why not `re`: kube-apiserver compiles a CRD's `pattern` with Go's `regexp` (RE2 syntax, matching in time linear
in the value), and Python's `re` reads another syntax and backtracks: `(a+)+$` against a long value would hold a
request for minutes, and no request may do unbounded work. google-re2 is RE2 itself. Its compile errors are put
in Go's words, regexp/syntax's `ErrorCode` strings as `error parsing regexp: <code>: `<expr>``
(staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/validation.go quotes them after "must be a
valid regular expression, but isn't: ").
"""

from __future__ import annotations

import functools
from typing import Any

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would log each bad pattern to stderr; the error is returned instead

_GO_CODES = {
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid repetition size": "invalid repeat count",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "invalid escape sequence": "invalid escape sequence",
    "no argument for repetition operator": "missing argument to repetition operator",
    "missing ]": "missing closing ]",
    "invalid named capture group": "invalid named capture",
    "invalid UTF-8": "invalid UTF-8",
}
"""RE2's error texts (re2/re2.cc `CodeText`) -> Go's regexp/syntax `ErrorCode` strings; the two libraries share
one list of codes."""


class RegexpError(ValueError):
    """A pattern Go's `regexp` would not compile; the message is Go's `error parsing regexp: ...`."""


def _go_message(error: object) -> str:
    text = error.decode(errors="replace") if isinstance(error, bytes) else str(error)
    if text.startswith("trailing \\"):
        return "error parsing regexp: trailing backslash at end of expression: ``"
    code, sep, expr = text.partition(": ")
    go = _GO_CODES.get(code)
    if go is None:
        return f"error parsing regexp: {text}"
    return f"error parsing regexp: {go}: `{expr}`" if sep else f"error parsing regexp: {go}"


@functools.lru_cache(maxsize=1024)
def compile_go(pattern: str) -> Any:
    """The compiled pattern (an RE2 object with `search`); `RegexpError` in Go's words when it does not compile."""
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        raise RegexpError(_go_message(exc.args[0] if exc.args else exc)) from None


def search(pattern: str, value: str) -> bool:
    """Whether `pattern` matches somewhere in `value` (Go's `MatchString`), in linear time."""
    return compile_go(pattern).search(value) is not None
