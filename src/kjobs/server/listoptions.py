"""Which revision a LIST reads at: `resourceVersion` and `resourceVersionMatch`, as the apiserver reads them.

* no `resourceVersion`: the current state (a consistent read);
* `resourceVersion=0`, or N with `resourceVersionMatch` unset or `NotOlderThan`: any state at least as new as N;
  this store is never behind, so the current one, unless N is newer than anything written: then 504 Timeout
  `Too large resource version` (storage `NewTooLargeResourceVersionError`; the watch cache answers so after
  waiting for N, and nothing here will reach it sooner);
* `resourceVersionMatch=Exact` with N: the objects as they were at revision N (the store undoes later changes),
  410 Expired `The resourceVersion for the provided list is too old.` when its history no longer reaches N
  (etcd3 `errors.go`, `interpretListError`).

Invalid combinations are 422 Invalid against `ListOptions.meta.k8s.io`, exactly as apimachinery's
`ValidateListOptions` (pkg/apis/meta/internalversion/validation/validation.go) reports them.
"""

from __future__ import annotations

from kjobs.api.errors import ApiError, ErrorType, FieldError, bad_request, gone, invalid, not_supported

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


def watch_from(query: dict[str, str], current: int) -> tuple[int, bool]:
    """The revision a watch starts after (0: an ADDED event per current object first) and whether those initial
    events end with a `k8s.io/initial-events-end` bookmark: `sendInitialEvents` (the WatchList feature, on by
    default since 1.32) with `resourceVersionMatch=NotOlderThan`, checked as `validateWatchOptions` does."""
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
    try:
        since = int(text) if text else 0
    except ValueError:
        raise bad_request(f'resourceVersion: Invalid value: "{text}": must be an integer') from None
    if raw is None:
        return since, False
    if _parse_bool(raw):  # the state at least as new as `since`, then what follows
        if since > current:
            raise too_large_resource_version(since, current)
        return 0, True
    return since or current, False  # no initial events: from the given revision, or from now


def _parse_bool(text: str) -> bool:
    """A `*bool` query parameter as apimachinery decodes it (`Convert_Slice_string_To_Pointer_bool`): `false` or
    `0` (any case) is false, anything else true."""
    return text.lower() not in ("false", "0")


def read_at(query: dict[str, str], current: int) -> int | None:
    """The revision a list without a continue token reads at (None: the current one); see the module notes."""
    validate(query)
    text = query.get("resourceVersion", "")
    if not text:
        return None
    try:
        wanted = int(text)
    except ValueError:
        raise bad_request(f'resourceVersion: Invalid value: "{text}": must be an integer') from None
    if query.get("continue") and wanted:
        raise bad_request("specifying resource version is not allowed when using continue")
    if wanted > current:
        raise too_large_resource_version(wanted, current)
    if query.get(_FIELD) == EXACT:
        return wanted
    return None


def too_large_resource_version(wanted: int, current: int) -> ApiError:
    """504 Timeout for a revision newer than the store's (storage `NewTooLargeResourceVersionError`)."""
    return ApiError(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {wanted}, current: {current}",
        details={
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1,
        },
    )


def list_too_old() -> ApiError:
    """410 Expired for an Exact list at a revision the store's history no longer reaches."""
    return gone("The resourceVersion for the provided list is too old.")
