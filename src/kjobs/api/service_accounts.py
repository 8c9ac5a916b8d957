"""ServiceAccounts: what the API server does to one on a write, and its validation.

Design note: pure, like the rest of `kjobs.api`. The registry's strategy (pkg/registry/core/serviceaccount/
strategy.go) keeps only the `name` of each `secrets` reference on create and update (`cleanSecretReferences`);
validation is `ValidateServiceAccount` / `ValidateServiceAccountUpdate` (pkg/apis/core/validation/
validation.go): the object metadata, the name a DNS subdomain (`ValidateServiceAccountName`), nothing else. A
write carrying the `kubernetes.io/enforce-mountable-secrets` annotation gets the strategy's 1.32 deprecation
warning. An account is what a pod runs as, checked to exist when the pod is created (`kjobs.server.admission`),
and whose tokens `serviceaccounts/NAME/token` issues (`kjobs.server.tokenrest`).
"""

from __future__ import annotations

from typing import Any

from kjobs.api.errors import FieldError
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj
from kjobs.api.validation_meta import validate_object_meta, validate_object_meta_update

ENFORCE_MOUNTABLE_SECRETS_ANNOTATION = "kubernetes.io/enforce-mountable-secrets"
"""plugin/pkg/admission/serviceaccount/admission.go `EnforceMountableSecretsAnnotation` (deprecated in 1.32)."""


def _clean_secret_references(sa: Obj) -> Obj:
    """`cleanSecretReferences`: each `secrets` entry reduced to its name (a new list: the one read may be shared
    with the stored object)."""
    secrets = sa.get("secrets")
    if isinstance(secrets, list):
        sa["secrets"] = [_name_only(ref) for ref in secrets]
    return sa


def _name_only(ref: Any) -> Any:
    if not isinstance(ref, dict):
        return ref  # left for the decoder's type check to report
    name = ref.get("name")
    return {"name": name} if name else {}


def default_service_account_in_place(sa: Obj) -> Obj:
    """The strategy's `PrepareForCreate`."""
    return _clean_secret_references(sa)


def default_service_account_update_in_place(sa: Obj, old: Obj) -> Obj:
    """The strategy's `PrepareForUpdate`."""
    return _clean_secret_references(sa)


def validate_service_account(sa: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateServiceAccount`: the metadata, with a DNS-subdomain name."""
    return validate_object_meta(sa.get("metadata") or {}, namespaced=True)


def validate_service_account_update(sa: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateServiceAccountUpdate`: the metadata update rules, then `ValidateServiceAccount`."""
    errs = validate_object_meta_update(sa.get("metadata") or {}, old.get("metadata") or {})
    return errs + validate_service_account(sa, features=features)


def warnings_for_service_account(sa: Obj, old: Obj | None = None) -> list[str]:
    """The strategy's `WarningsOnCreate` / `WarningsOnUpdate`: the mountable-secrets annotation is deprecated."""
    annotations = (sa.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict) and ENFORCE_MOUNTABLE_SECRETS_ANNOTATION in annotations:
        return [
            f"metadata.annotations[{ENFORCE_MOUNTABLE_SECRETS_ANNOTATION}]: deprecated in v1.32+; prefer separate "
            "namespaces to isolate access to mounted secrets"
        ]
    return []
