"""Mutating admission the API server applies to writes before validation.

Only the plugins whose effect a user sees in kjobs are here. ServiceAccount
(plugin/pkg/admission/serviceaccount/admission.go), on create only: a pod without `spec.serviceAccountName` runs as
the namespace's `default` ServiceAccount (what `fieldRef: spec.serviceAccountName` and `kubectl describe pod` show);
kjobs serves no ServiceAccounts and mounts no token, so the plugin's lookup of the account and its token volume are
not done. With it, the v1 conversion's mirror of the name in the deprecated `spec.serviceAccount`
(pkg/apis/core/v1/conversion.go: the old field is read when the new one is empty, and always written). And
DefaultTolerationSeconds
(plugin/pkg/admission/defaulttolerationseconds/admission.go). It gives every pod that does not already
tolerate the `node.kubernetes.io/not-ready` and `node.kubernetes.io/unreachable` NoExecute taints an
`Exists` toleration for each, bounded by `tolerationSeconds` (300 unless kube-apiserver's
`--default-not-ready-toleration-seconds` / `--default-unreachable-toleration-seconds` say otherwise), so a
pod outlives a short node outage instead of being evicted by the taint-eviction controller at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from kjobs.api.taints import NO_EXECUTE, TAINT_NOT_READY, TAINT_UNREACHABLE
from kjobs.api.types import Obj

DEFAULT_TOLERATION_SECONDS = 300
"""kube-apiserver's default for both `--default-*-toleration-seconds` flags."""


@dataclass(frozen=True)
class AdmissionSettings:
    """The kube-apiserver flags that configure admission (names as the flags, without the dashes)."""

    default_not_ready_toleration_seconds: int = DEFAULT_TOLERATION_SECONDS
    default_unreachable_toleration_seconds: int = DEFAULT_TOLERATION_SECONDS


def _covers(toleration: Obj, key: str) -> bool:
    """Whether an existing toleration counts as one for `key`: that key or no key, NoExecute or no effect.

    The plugin does not look at the operator, value or tolerationSeconds of the existing toleration."""
    return (toleration.get("key") or "") in ("", key) and (toleration.get("effect") or "") in ("", NO_EXECUTE)


def default_tolerations(tolerations: list[Obj], settings: AdmissionSettings) -> list[Obj]:
    """A pod's `spec.tolerations` after DefaultTolerationSeconds: the given ones, then not-ready's and
    unreachable's (in that order) for the keys none of them covers."""
    result = list(tolerations)
    for key, seconds in (
        (TAINT_NOT_READY, settings.default_not_ready_toleration_seconds),
        (TAINT_UNREACHABLE, settings.default_unreachable_toleration_seconds),
    ):
        if not any(_covers(t, key) for t in tolerations if isinstance(t, dict)):
            result.append({"key": key, "operator": "Exists", "effect": NO_EXECUTE, "tolerationSeconds": seconds})
    return result


DEFAULT_SERVICE_ACCOUNT = "default"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


def service_account(spec: Obj, *, create: bool, mirror: bool) -> str | None:
    """The pod's `serviceAccountName` after conversion and the ServiceAccount plugin (None: leave it as it is)."""
    name = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if not name and create and not mirror:
        name = DEFAULT_SERVICE_ACCOUNT
    return name if isinstance(name, str) and name else None


def admit_pod(pod: Obj, settings: AdmissionSettings, *, create: bool = True) -> Obj:
    """The pod with its ServiceAccount and the default tolerations (for a create or update of the pod itself,
    never a subresource).

    Copy on write: `spec` is replaced, not changed, so a pod that shares parts with a stored object can be
    passed. Malformed tolerations are left for validation to report."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return pod
    changes: Obj = {}
    mirror = MIRROR_POD_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {})
    account = service_account(spec, create=create, mirror=mirror)
    if account is not None and (spec.get("serviceAccountName"), spec.get("serviceAccount")) != (account, account):
        changes["serviceAccountName"] = changes["serviceAccount"] = account
    tolerations = spec.get("tolerations")
    if tolerations is None:
        tolerations = []
    if isinstance(tolerations, list):
        defaulted = default_tolerations(tolerations, settings)
        if len(defaulted) != len(tolerations):
            changes["tolerations"] = defaulted
    if not changes:
        return pod
    return {**pod, "spec": {**spec, **changes}}
