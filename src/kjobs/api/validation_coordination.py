"""Lease validation (coordination.k8s.io/v1), as kube-apiserver's lease registry runs it.

Leader election and node heartbeats read a Lease's duration and transition count; a lease of zero seconds
would be expired as soon as it is renewed, so kube-apiserver refuses it. Sources:
pkg/apis/coordination/validation/validation.go (`ValidateLease`, `ValidateLeaseUpdate`, `ValidateLeaseSpec`,
`ValidateCoordinatedLeaseStrategy`) and pkg/registry/coordination/lease/strategy.go (`spec.strategy` and
`spec.preferredHolder` are dropped while the alpha gate CoordinatedLeaderElection is off, as it is by
default in v1.32).
"""

from __future__ import annotations

from typing import Any

from kjobs.api.errors import ErrorType, FieldError, not_supported
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj
from kjobs.api.validation_access import type_error
from kjobs.api.validation_formats import is_qualified_name
from kjobs.api.validation_meta import validate_metadata_update, validate_object_meta

LEASE_STRATEGIES = ("OldestEmulationVersion",)
_GATED = ("strategy", "preferredHolder")


def drop_disabled_lease_fields(lease: Obj, old: Obj | None, features: FeatureGates = DEFAULT) -> None:
    """`PrepareForCreate` / `PrepareForUpdate` with CoordinatedLeaderElection off: the coordinated-election
    fields are not stored."""
    spec = lease.get("spec") if type(lease) is dict else None
    if type(spec) is dict:
        for key in _GATED:
            spec.pop(key, None)


def validate_lease(lease: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """Create: `ValidateLease`."""
    if type(lease) is not dict:
        return [type_error("", lease, "object")]
    meta = lease.get("metadata")
    errs = validate_object_meta(meta if type(meta) is dict else {}, namespaced=True)
    _validate_spec(lease.get("spec"), errs)
    return errs


def validate_lease_update(lease: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """Update: `ValidateLeaseUpdate` (metadata update rules, then the spec as on create)."""
    if type(lease) is not dict:
        return [type_error("", lease, "object")]
    old = old if type(old) is dict else {}
    errs = list(validate_metadata_update(lease, old))
    _validate_spec(lease.get("spec"), errs)
    return errs


def _validate_spec(spec: Any, errs: list[FieldError]) -> None:
    """`ValidateLeaseSpec`."""
    if type(spec) is not dict:
        return
    duration, transitions = spec.get("leaseDurationSeconds"), spec.get("leaseTransitions")
    if type(duration) is int and duration <= 0:
        errs.append(
            FieldError("spec.leaseDurationSeconds", ErrorType.FieldValueInvalid, "must be greater than 0", duration)
        )
    if type(transitions) is int and transitions < 0:
        errs.append(
            FieldError(
                "spec.leaseTransitions", ErrorType.FieldValueInvalid, "must be greater than or equal to 0", transitions
            )
        )
    strategy = spec.get("strategy")
    if type(strategy) is str:
        validate_coordinated_lease_strategy(strategy, "spec.strategy", errs)
    if spec.get("preferredHolder") and not strategy:
        errs.append(
            FieldError(
                "spec.preferredHolder", ErrorType.FieldValueForbidden, "may only be specified if `strategy` is defined"
            )
        )


def validate_coordinated_lease_strategy(strategy: str, path: str, errs: list[FieldError]) -> None:
    """`ValidateCoordinatedLeaseStrategy`: a Kubernetes strategy, or a qualified `domain/name`. Upstream adds
    `.strategy` to the path it is given, so a Lease's error is reported at `spec.strategy.strategy`."""
    path = f"{path}.strategy"
    if "/" not in strategy:
        if strategy not in LEASE_STRATEGIES:
            errs.append(not_supported(path, strategy, LEASE_STRATEGIES))
        return
    for msg in is_qualified_name(strategy):
        errs.append(FieldError(path, ErrorType.FieldValueInvalid, msg, strategy))
