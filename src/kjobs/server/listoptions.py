"""Which revision a LIST reads at: `resourceVersion` and `resourceVersionMatch`, as the apiserver reads them.

* no `resourceVersion`: the current state (a consistent read);
* `resourceVersion=0`, or N with `resourceVersionMatch` unset or `NotOlderThan`: any state at least as new as N;
  this store is never behind, so the current one. When N is newer than anything written the server waits up to
  3 s for a write to reach it (the watch cache's `waitUntilFreshAndBlock`, `blockTimeout`; `fresh_from` says
  which revision), then answers 504 Timeout `Too large resource version` (storage
  `NewTooLargeResourceVersionError`, `retryAfterSeconds` 1);
* `resourceVersionMatch=Exact` with N: the objects as they were at revision N (the store undoes later changes),
  410 Expired `The resourceVersion for the provided list is too old.` when its history no longer reaches N
  (etcd3 `errors.go`, `interpretListError`); a revision newer than the store's is that 504 at once (etcd3
  `store.go` `GetList` on `ErrFutureRev`, which the watch cache does not wait for).

Invalid combinations are 422 Invalid against `ListOptions.meta.k8s.io`, exactly as apimachinery's
`ValidateListOptions` (pkg/apis/meta/internalversion/validation/validation.go) reports them.
"""

from __future__ import annotations

from typing import NamedTuple

from kjobs.api.errors import ApiError, ErrorType, FieldError, bad_request, gone, invalid, not_supported
from kjobs.server.params import parse_uint64

EXACT = "Exact"
NOT_OLDER_THAN = "NotOlderThan"

_FIELD = "resourceVersionMatch"


def validate(query: dict[str, str]) -> None:
    """422 for the combinations `ValidateListOptions` refuses on a list (not a watch)."""
    match = query.get(_FIELD, "")
    rv = query.get("resourceVersion", "")
    errors: list[FieldError] = []
    if match:
        if not rv:
            errors.append(
                FieldError(
                    _FIELD,
                    ErrorType.FieldValueForbidden,
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                )
            )
        if query.get("continue"):
            errors.append(
                FieldError(
                    _FIELD, ErrorType.FieldValueForbidden, "resourceVersionMatch is forbidden when continue is provided"
                )
            )
        if match not in (EXACT, NOT_OLDER_THAN):
            errors.append(not_supported(_FIELD, match, [EXACT, NOT_OLDER_THAN, ""]))
        if match == EXACT and rv == "0":
            errors.append(
                FieldError(
                    _FIELD,
                    ErrorType.FieldValueForbidden,
                    'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            )
    if "sendInitialEvents" in query:
        errors.append(
            FieldError("sendInitialEvents", ErrorType.FieldValueForbidden, "sendInitialEvents is forbidden for list")
        )
    if errors:
        raise invalid("ListOptions", "", errors, group="meta.k8s.io")


class WatchStart(NamedTuple):
    """Where a watch starts: after revision `since` (0: an ADDED event per current object first); whether those
    initial events end with a `k8s.io/initial-events-end` bookmark; `fresh_from`, the revision the state must have
    reached before a `sendInitialEvents=true` watch starts (0: any)."""

    since: int
    initial_end: bool
    fresh_from: int = 0


def watch_from(query: dict[str, str], current: int) -> WatchStart:
    """Where a watch starts (`WatchStart`): `sendInitialEvents` (the WatchList feature, on by default since 1.32)
    with `resourceVersionMatch=NotOlderThan`, checked as `validateWatchOptions` does. A `resourceVersion` newer
    than `current` is no error here: a plain watch waits for it (cacher `Watch`), a `sendInitialEvents=true` one
    is refused only after waiting (`fresh_from`)."""
    match = query.get(_FIELD, "")
    raw = query.get("sendInitialEvents")
    errors: list[FieldError] = []
    if raw is not None and match != NOT_OLDER_THAN:
        errors.append(
            FieldError(
                _FIELD,
                ErrorType.FieldValueForbidden,
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )
        )
    if match:
        if raw is None:
            errors.append(
                FieldError(
                    _FIELD,
                    ErrorType.FieldValueForbidden,
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                )
            )
        if match != NOT_OLDER_THAN:
            errors.append(not_supported(_FIELD, match, [NOT_OLDER_THAN]))
        if query.get("continue"):
            errors.append(
                FieldError(
                    _FIELD, ErrorType.FieldValueForbidden, "resourceVersionMatch is forbidden when continue is provided"
                )
            )
    if errors:
        raise invalid("ListOptions", "", errors, group="meta.k8s.io")
    text = query.get("resourceVersion", "")
    since = _revision(text) if text else 0
    if raw is None:
        return WatchStart(since, False)
    if _parse_bool(raw):  # the state at least as new as `since`, then what follows
        return WatchStart(0, True, since)
    return WatchStart(since or current, False)  # no initial events: from the given revision, or from now


def _parse_bool(text: str) -> bool:
    """A `*bool` query parameter as apimachinery decodes it (`Convert_Slice_string_To_Pointer_bool`): `false` or
    `0` (any case) is false, anything else true."""
    return text.lower() not in ("false", "0")


def fresh_from(query: dict[str, str]) -> int:
    """The revision a LIST's state must be at least as new as, for a list the watch cache serves after waiting
    (`resourceVersion` N, `resourceVersionMatch` unset or `NotOlderThan`, no `continue`); 0 for any other list.
    Checks the options first (`validate`), so an invalid list is refused before any wait."""
    validate(query)
    text = query.get("resourceVersion", "")
    if not text or query.get("continue") or query.get(_FIELD) == EXACT:
        return 0
    return _revision(text)


def read_at(query: dict[str, str], current: int) -> int | None:
    """The revision a list without a continue token reads at (None: the current one); see the module notes."""
    validate(query)
    text = query.get("resourceVersion", "")
    if not text:
        return None
    wanted = _revision(text)
    if query.get("continue") and wanted:
        raise bad_request("specifying resource version is not allowed when using continue")
    if query.get(_FIELD) == EXACT:
        if wanted > current:  # etcd's ErrFutureRev: no wait, no retry advice
            raise too_large_resource_version(wanted, current, retry_after=0)
        return wanted
    if wanted > current:
        raise too_large_resource_version(wanted, current)
    return None


def _revision(text: str) -> int:
    """A `resourceVersion` as the storage versioner parses one (`ParseResourceVersion`: `strconv.ParseUint`, so no
    sign, space or underscore, and within uint64); 400 BadRequest otherwise."""
    value = parse_uint64(text)
    if value is None:
        raise bad_request(f'resourceVersion: Invalid value: "{text}": must be an integer')
    return value


def too_large_resource_version(wanted: int, current: int, retry_after: int = 1) -> ApiError:
    """504 Timeout for a revision newer than the store's (storage `NewTooLargeResourceVersionError`): the HTTP
    answer to a LIST, the `ERROR` event of a `sendInitialEvents` watch (cacher `newErrWatcher`)."""
    details: dict[str, object] = {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]
    }
    if retry_after:  # 0 is omitted (`retryAfterSeconds,omitempty`)
        details["retryAfterSeconds"] = retry_after
    message = f"Timeout: Too large resource version: {wanted}, current: {current}"
    return ApiError(504, "Timeout", message, details=details)


def list_too_old() -> ApiError:
    """410 Expired for an Exact list at a revision the store's history no longer reaches."""
    return gone("The resourceVersion for the provided list is too old.")
