"""The query options of writes, checked as the apiserver checks them before it reads the body or the object.

apimachinery `ValidateCreateOptions`, `ValidateUpdateOptions`, `ValidatePatchOptions`
(staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go): `dryRun` may only be `All`,
`fieldValidation` only `Ignore`, `Warn` or `Strict` (or unset), `fieldManager` at most 128 bytes, all printable;
an apply patch needs a `fieldManager`, any other patch may not send `force`. Each failure is a 422 Invalid of
`CreateOptions.meta.k8s.io` (or Update/Patch), as the handlers in handlers/create.go, update.go and patch.go
answer.
"""

from __future__ import annotations

from kjobs.api.errors import ErrorType, FieldError, invalid, not_supported, too_long

APPLY = "application/apply-patch+yaml"
FIELD_MANAGER_MAX_LENGTH = 128
_FIELD_VALIDATIONS = ["", "Ignore", "Strict", "Warn"]


def check(query: dict[str, str], kind: str, *, patch_type: str | None = None) -> None:
    """422 for the options `kind` (`CreateOptions`, `UpdateOptions`, `PatchOptions`) does not allow; `patch_type`:
    the base content type of a PATCH."""
    errors: list[FieldError] = []
    manager = query.get("fieldManager", "")
    if patch_type is not None:
        if patch_type != APPLY:
            if "force" in query:
                errors.append(
                    FieldError("force", ErrorType.FieldValueForbidden, "may not be specified for non-apply patch")
                )
        elif not manager:
            errors.append(FieldError("fieldManager", ErrorType.FieldValueRequired, "is required for apply patch"))
    if len(manager.encode()) > FIELD_MANAGER_MAX_LENGTH:
        errors.append(too_long("fieldManager", FIELD_MANAGER_MAX_LENGTH))
    errors.extend(unprintable("fieldManager", manager))
    dry_run = query.get("dryRun")
    if dry_run is not None and dry_run != "All":
        errors.append(not_supported("dryRun", [dry_run], ["All"]))
    validation = query.get("fieldValidation", "")
    if validation not in _FIELD_VALIDATIONS:
        errors.append(not_supported("fieldValidation", validation, _FIELD_VALIDATIONS))
    if errors:
        raise invalid(kind, "", errors, group="meta.k8s.io")


def unprintable(path: str, text: str) -> list[FieldError]:
    """`ValidateFieldManager`'s check that every character is printable (Go's `unicode.IsPrint`): one Invalid per
    other character, `invalid character U+0007 (at position 3)`, the position a byte offset as Go's `range` has it."""
    errors: list[FieldError] = []
    offset = 0
    for char in text:
        if not char.isprintable():
            detail = f"invalid character U+{ord(char):04X} (at position {offset})"
            errors.append(FieldError(path, ErrorType.FieldValueInvalid, detail, text))
        offset += len(char.encode("utf-8", "surrogatepass"))
    return errors
