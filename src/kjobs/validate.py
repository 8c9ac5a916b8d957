"""`kjobs validate`: Kubernetes-exact validation of manifests, as an API server would answer a create.

Jobs are defaulted (batch/v1) then validated; Pods likewise with core/v1 rules. The result is the list of
`FieldError`s Kubernetes would put in the `Status` causes of a 422 Invalid.
"""

from __future__ import annotations

from kjobs.api.errors import ErrorType, FieldError, invalid
from kjobs.api.types import Obj

SUPPORTED_KINDS = ("Job", "Pod")


def validate_manifest(obj: Obj, *, apply_defaults: bool = True) -> list[FieldError]:
    """Validate one manifest as a create request (defaulting first, as the API server does)."""
    from kjobs.api import defaults, validation

    kind = obj.get("kind")
    if kind == "Job":
        job = defaults.default_job(obj) if apply_defaults else obj
        return validation.validate_job(job)
    if kind == "Pod":
        pod = defaults.default_pod(obj) if apply_defaults else obj
        return validation.validate_pod(pod)
    supported = ", ".join(f'"{k}"' for k in SUPPORTED_KINDS)
    return [FieldError("kind", ErrorType.FieldValueNotSupported, f"supported values: {supported}", kind)]


def invalid_status(obj: Obj, errors: list[FieldError]) -> Obj:
    """The 422 `Status` an API server returns for these errors."""
    kind = str(obj.get("kind") or "")
    group = "batch" if kind == "Job" else ""
    name = str((obj.get("metadata") or {}).get("name") or (obj.get("metadata") or {}).get("generateName") or "")
    return invalid(kind, name, errors, group=group).status()
