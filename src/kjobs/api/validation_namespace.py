"""Namespace validation (core/v1), as kube-apiserver's namespace registry runs it.

Sources: pkg/apis/core/validation/validation.go (`ValidateNamespace`, `validateFinalizerName`,
`ValidateNamespaceUpdate`, `ValidateNamespaceStatusUpdate`) and pkg/registry/core/namespace/strategy.go (an
update is checked by `ValidateNamespace` then `ValidateNamespaceUpdate`; a status update by
`ValidateNamespaceStatusUpdate`). The name is a DNS-1123 label (`ValidateNamespaceName`), and a namespace's
phase can only be Active until it is deleted and Terminating after, so no status write can revive or hide a
namespace being deleted.
"""

from __future__ import annotations

from typing import Any

from kjobs.api.errors import ErrorType, FieldError
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj
from kjobs.api.validation_access import type_error
from kjobs.api.validation_formats import is_qualified_name, name_is_dns_label
from kjobs.api.validation_meta import _STANDARD_FINALIZERS, validate_metadata_update, validate_object_meta

Invalid = ErrorType.FieldValueInvalid


def validate_namespace(ns: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """Create: `ValidateNamespace` (metadata with a DNS-1123 label name; each of `spec.finalizers` a qualified
    or standard finalizer name, reported at `spec.finalizers` without an index, as upstream reports it)."""
    if type(ns) is not dict:
        return [type_error("", ns, "object")]
    meta = ns.get("metadata")
    errs = validate_object_meta(meta if type(meta) is dict else {}, namespaced=False, name_fn=name_is_dns_label)
    spec = ns.get("spec")
    finalizers = spec.get("finalizers") if type(spec) is dict else None
    for name in finalizers if type(finalizers) is list else []:
        _validate_finalizer_name(name if type(name) is str else "", "spec.finalizers", errs)
    return errs


def validate_namespace_update(ns: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """Update: `ValidateNamespace`, then `ValidateNamespaceUpdate` (the metadata update rules)."""
    if type(ns) is not dict:
        return [type_error("", ns, "object")]
    errs = validate_namespace(ns)
    return errs + validate_metadata_update(ns, old)


def validate_namespace_status_update(ns: Obj, old: Obj) -> list[FieldError]:
    """Status update: `ValidateNamespaceStatusUpdate`. An unset phase is Active (`SetDefaults_NamespaceStatus`
    runs when the body is decoded); the path is `status.Phase`, capitalised, as upstream writes it."""
    if type(ns) is not dict:
        return [type_error("", ns, "object")]
    errs = validate_metadata_update(ns, old)
    meta = ns.get("metadata") if type(ns.get("metadata")) is dict else {}
    status = ns.get("status")
    phase: Any = (status.get("phase") if type(status) is dict else None) or "Active"
    if not (meta or {}).get("deletionTimestamp"):
        if phase != "Active":
            errs.append(
                FieldError("status.Phase", Invalid, "may only be 'Active' if `deletionTimestamp` is empty", phase)
            )
    elif phase != "Terminating":
        errs.append(
            FieldError("status.Phase", Invalid, "may only be 'Terminating' if `deletionTimestamp` is not empty", phase)
        )
    return errs


def validate_namespace_finalize_update(ns: Obj, old: Obj) -> list[FieldError]:
    """`PUT .../finalize`: `ValidateNamespaceFinalizeUpdate` (the metadata update rules, and each of
    `spec.finalizers` a qualified or standard finalizer name, reported at its index)."""
    if type(ns) is not dict:
        return [type_error("", ns, "object")]
    errs = validate_metadata_update(ns, old)
    spec = ns.get("spec")
    finalizers = spec.get("finalizers") if type(spec) is dict else None
    for i, name in enumerate(finalizers if type(finalizers) is list else []):
        _validate_finalizer_name(name if type(name) is str else "", f"spec.finalizers[{i}]", errs)
    return errs


def _validate_finalizer_name(name: str, path: str, errs: list[FieldError]) -> None:
    """`validateFinalizerName`: a qualified name, and one without a `/` must be a standard finalizer."""
    for msg in is_qualified_name(name):
        errs.append(FieldError(path, Invalid, msg, name))
    if "/" not in name and name not in _STANDARD_FINALIZERS:
        errs.append(
            FieldError(path, Invalid, "name is neither a standard finalizer name nor is it fully qualified", name)
        )
