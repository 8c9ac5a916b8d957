"""String format checks with Kubernetes' exact messages (apimachinery `util/validation`, `validate/content`).

Each `is_*` function returns the problems Kubernetes reports for a value (empty = valid); callers turn each
message into a `FieldError` at their own path. The texts are Kubernetes' byte for byte, because they end up in
API responses that users and tests compare against. The checks run on every label and name of every request,
so the common ones are memoised (they are pure and return tuples).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from kjobs.api.errors import ErrorType, FieldError
from kjobs.api.quantity import Quantity, QuantityError, parse_quantity

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
LABEL_VALUE_MAX = 63
QUALIFIED_NAME_MAX = 63

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character"
)
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_ENV_VAR_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"
_ENV_VAR_MSG = (
    "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', "
    "and must not start with a digit"
)
_RELAXED_ENV_VAR_MSG = (
    "a valid environment variable name must consist only of printable ASCII characters other than '='"
)
_CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_MAP_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
_HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"

_dns1123_label = re.compile(_DNS1123_LABEL_FMT)
_dns1123_subdomain = re.compile(_DNS1123_SUBDOMAIN_FMT)
dns1123_subdomain_match = _dns1123_subdomain.fullmatch
"""The subdomain regex's `fullmatch`: a value it matches is ASCII, so `is_dns1123_subdomain` finds no problem
with it when it is also at most `DNS1123_SUBDOMAIN_MAX` long. For callers whose values are mostly unique (object
names), which the memoised check would only add to its cache."""
dns1123_label_match = _dns1123_label.fullmatch
"""The label regex's `fullmatch`: a value it matches is ASCII, so `is_dns1123_label` finds no problem with it when it
is also at most `DNS1123_LABEL_MAX` long. For callers whose values are mostly unique (hostnames of a Job's pods)."""
_dns1035_label = re.compile(_DNS1035_LABEL_FMT)
_label_key = re.compile(_LABEL_KEY_FMT)
_label_value = re.compile(_LABEL_VALUE_FMT)
_env_var = re.compile(_ENV_VAR_FMT)
_config_map_key = re.compile(_CONFIG_MAP_KEY_FMT)
_http_path = re.compile(_HTTP_PATH_FMT)
_port_name_charset = re.compile("[-a-z0-9]+")
_port_name_letter = re.compile("[a-z]")


def _blen(value: str) -> int:
    """Length in bytes, as Go's `len` counts it."""
    return len(value) if value.isascii() else len(value.encode())


def max_len_error(length: int) -> str:
    """`MaxLenError` of `util/validation/validation.go` (DNS labels and subdomains, port names, config keys)."""
    return f"must be no more than {length} characters"


def content_max_len_error(length: int) -> str:
    """`MaxLenError` of `api/validate/content/errors.go`: label keys and values, which that package checks.

    Since the checks moved there, a label value or key name too long reads `must be no more than 63 bytes`
    (Go's `len` is bytes), while `util/validation`'s own DNS checks keep `... characters`.
    """
    return f"must be no more than {length} bytes"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Kubernetes' `RegexError` (note its double space before each ` or `)."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    text = msg + " (e.g. "
    for i, example in enumerate(examples):
        if i > 0:
            text += " or "
        text += f"'{example}', "
    return text + f"regex used for validation is '{fmt}')"


def inclusive_range_error(lo: int, hi: int) -> str:
    """Kubernetes' `InclusiveRangeError`."""
    return f"must be between {lo} and {hi}, inclusive"


EMPTY_ERROR = "must be non-empty"


@lru_cache(maxsize=8192)
def is_dns1123_label(value: str) -> tuple[str, ...]:
    """RFC 1123 label: container names, volume names, hostnames."""
    errs = []
    if _blen(value) > DNS1123_LABEL_MAX:
        errs.append(max_len_error(DNS1123_LABEL_MAX))
    if not _dns1123_label.fullmatch(value):
        if _dns1123_subdomain.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return tuple(errs)


@lru_cache(maxsize=8192)
def is_dns1123_subdomain(value: str) -> tuple[str, ...]:
    """RFC 1123 subdomain: most object names."""
    return _subdomain_problems(value, max_len_error)


def _subdomain_problems(value: str, too_long: Callable[[int], str]) -> tuple[str, ...]:
    errs = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(too_long(DNS1123_SUBDOMAIN_MAX))
    if not _dns1123_subdomain.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return tuple(errs)


def is_dns1035_label(value: str) -> list[str]:
    """RFC 1035 label (service names)."""
    errs = []
    if _blen(value) > DNS1123_LABEL_MAX:
        errs.append(max_len_error(DNS1123_LABEL_MAX))
    if not _dns1035_label.fullmatch(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def _mask_trailing_dash(name: str) -> str:
    return name[:-1] + "a" if len(name) > 1 and name.endswith("-") else name


def name_is_dns_subdomain(name: str, prefix: bool) -> tuple[str, ...]:
    """`NameIsDNSSubdomain`: object names; a generateName prefix may end with '-'."""
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> tuple[str, ...]:
    """`NameIsDNSLabel` (namespace names)."""
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


@lru_cache(maxsize=8192)
def is_qualified_name(value: str) -> tuple[str, ...]:
    """Label keys, annotation keys (lower-cased), condition types, finalizers: `content.IsLabelKey`."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + EMPTY_ERROR)
        else:
            errs.extend("prefix part " + m for m in _subdomain_problems(prefix, content_max_len_error))
    else:
        return (
            "a valid label key "
            + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        )
    if not name:
        errs.append("name part " + EMPTY_ERROR)
    elif _blen(name) > QUALIFIED_NAME_MAX:
        errs.append("name part " + content_max_len_error(QUALIFIED_NAME_MAX))
    if not _label_key.fullmatch(name):
        errs.append("name part " + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc"))
    return tuple(errs)


@lru_cache(maxsize=8192)
def is_label_value(value: str) -> tuple[str, ...]:
    """Label values (≤ 63 bytes): `content.IsLabelValue`."""
    errs = []
    if _blen(value) > LABEL_VALUE_MAX:
        errs.append(content_max_len_error(LABEL_VALUE_MAX))
    if not _label_value.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return tuple(errs)


def _chdir_prefix(value: str) -> list[str]:
    if value == ".":
        return ["must not be '.'"]
    if value == "..":
        return ["must not be '..'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


def is_env_var_name(value: str) -> list[str]:
    """Strict environment variable names (clusters with RelaxedEnvironmentVariableValidation off)."""
    errs = []
    if not _env_var.fullmatch(value):
        errs.append(regex_error(_ENV_VAR_MSG, _ENV_VAR_FMT, "my.env-name", "MY_ENV.NAME", "MyEnvName1"))
    return errs + _chdir_prefix(value)


def is_relaxed_env_var_name(value: str) -> list[str]:
    """Environment variable names as current Kubernetes accepts them (printable ASCII except '=')."""
    errs = []
    if not value:
        errs.append("environment variable name " + EMPTY_ERROR)
    for ch in value:
        if ord(ch) > 0x7E or ord(ch) < 0x20 or ch == "=":
            errs.append(_RELAXED_ENV_VAR_MSG)
            break
    return errs


def is_config_map_key(value: str) -> list[str]:
    """ConfigMap / Secret keys."""
    errs = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _config_map_key.fullmatch(value):
        errs.append(regex_error(_CONFIG_MAP_KEY_MSG, _CONFIG_MAP_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    return errs + _chdir_prefix(value)


def is_valid_port_num(port: int) -> list[str]:
    """1..65535."""
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def is_valid_port_name(port: str) -> list[str]:
    """IANA_SVC_NAME: ≤ 15 chars, [-a-z0-9], at least one letter, no leading/trailing/double hyphen."""
    errs = []
    if _blen(port) > 15:
        errs.append(max_len_error(15))
    if not _port_name_charset.fullmatch(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _port_name_letter.search(port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_domain_prefixed_path(value: str) -> list[tuple[str, str]]:
    """`IsDomainPrefixedPath` as (bad value, message) pairs; an empty value is the caller's Required error."""
    segments = value.split("/", 1)
    if len(segments) != 2 or not segments[0] or not segments[1]:
        return [(value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    host, path = segments
    out = [(host, msg) for msg in is_dns1123_subdomain(host)]
    if not _http_path.fullmatch(path):
        out.append((path, regex_error("Invalid path", _HTTP_PATH_FMT)))
    return out


def is_sloppy_ip(value: str) -> bool:
    """Whether k8s.io/utils/net `ParseIPSloppy` (Go's pre-1.17 `net.ParseIP`) accepts `value`: dotted IPv4
    whose octets may carry leading zeros, or IPv6 (with an optional dotted IPv4 tail) without a zone."""
    if "." in value and ":" not in value:
        parts = value.split(".")
        return len(parts) == 4 and all(p.isascii() and p.isdigit() and int(p) <= 255 for p in parts)
    if ":" not in value or "%" in value:
        return False
    head, _, tail = value.rpartition(":")
    if "." in tail:  # the IPv4 tail, leading zeros allowed: rewritten as two hex groups for `ipaddress`
        if not is_sloppy_ip(tail):
            return False
        a, b, c, d = (int(part) for part in tail.split("."))
        value = f"{head}:{a * 256 + b:x}:{c * 256 + d:x}"
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


_HTTP_HEADER_NAME = re.compile(r"[-A-Za-z0-9]+")


def is_http_header_name(value: str) -> list[str]:
    """apimachinery util/validation `IsHTTPHeaderName` (Go's net/http header-name subset)."""
    if _HTTP_HEADER_NAME.fullmatch(value):
        return []
    return [
        regex_error(
            "a valid HTTP header must consist of alphanumeric characters or '-'", "[-A-Za-z0-9]+", "X-Header-Name"
        )
    ]


_DNS1123_LABEL_FMT_UNDERSCORE = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT_UNDERSCORE = _DNS1123_LABEL_FMT_UNDERSCORE + "(\\." + _DNS1123_LABEL_FMT_UNDERSCORE + ")*"
_dns1123_subdomain_underscore = re.compile(_DNS1123_SUBDOMAIN_FMT_UNDERSCORE)


def is_dns1123_subdomain_with_underscore(value: str) -> list[str]:
    """apimachinery `IsDNS1123SubdomainWithUnderscore` (the relaxed DNS search-path rule)."""
    errs = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _dns1123_subdomain_underscore.fullmatch(value):
        errs.append(
            regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', "
                "and must start and end with an alphanumeric character",
                _DNS1123_SUBDOMAIN_FMT_UNDERSCORE,
                "example.com",
            )
        )
    return errs


def quantity_field(raw: Any, path: str, errs: list[FieldError]) -> Quantity | None:
    """A resource.Quantity field as the decoder and validation read it: a string or a number, parsed; otherwise
    an Invalid error at `path` (with the parser's words) is added and None returned."""
    if type(raw) not in (str, int, float):
        errs.append(FieldError(path, ErrorType.FieldValueInvalid, "must be of type quantity (string or number)", raw))
        return None
    try:
        return parse_quantity(raw)
    except QuantityError as exc:
        errs.append(FieldError(path, ErrorType.FieldValueInvalid, str(exc), raw))
        return None
