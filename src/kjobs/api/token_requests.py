"""ServiceAccount tokens: the TokenRequest's defaults and validation, and the token volume admission adds to pods.

Design note: pure. A TokenRequest (`authentication.k8s.io/v1`, created on `serviceaccounts/NAME/token`) is
defaulted as pkg/apis/authentication/v1/defaults.go does (`expirationSeconds` 3600) and validated by
pkg/apis/authentication/validation/validation.go `ValidateTokenRequest` (at least 10 minutes, at most 2^32
seconds). The ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount/admission.go) gives a created
pod, unless it or its account sets `automountServiceAccountToken: false`, the projected volume
`kube-api-access-<5 random>` (`TokenVolumeSource`: a bound token expiring after 3607 s, the namespace's
`kube-root-ca.crt` CA and the pod's namespace) and a read-only mount of it at
`/var/run/secrets/kubernetes.io/serviceaccount` in every init container and container that does not already
mount something there; ephemeral containers are left alone (the plugin mutates creates only, and they are added
by an update of `pods/ephemeralcontainers`).
"""

from __future__ import annotations

import random
from typing import Any

from kjobs.api.errors import ErrorType, FieldError
from kjobs.api.types import Obj

DEFAULT_EXPIRATION_SECONDS = 3600
"""pkg/apis/authentication/v1/defaults.go `SetDefaults_TokenRequestSpec`."""
MIN_EXPIRATION_SECONDS = 10 * 60
MAX_EXPIRATION_SECONDS = 1 << 32
WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 60 * 60 + 7
"""pkg/serviceaccount/claims.go `WarnOnlyBoundTokenExpirationSeconds`: what the token volume asks for."""
EXPIRATION_EXTENSION_SECONDS = 24 * 365 * 60 * 60
"""pkg/serviceaccount/claims.go `ExpirationExtensionSeconds`: a pod-bound 3607 s token with the API's audiences
is valid this long (kube-apiserver's `--service-account-extend-token-expiration`, on by default), and only warned
about after 3607 s (`warnafter`)."""

API_AUDIENCE = "https://kubernetes.default.svc.cluster.local"
"""kubeadm's `--service-account-issuer` and so the API's audience (`--api-audiences` defaults to the issuer)."""

VOLUME_PREFIX = "kube-api-access-"
"""admission.go `ServiceAccountVolumeName` + "-": the token volume's name before its random suffix."""
MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
"""admission.go `DefaultAPITokenMountPath`."""
ROOT_CA_CONFIG_MAP = "kube-root-ca.crt"
PROJECTED_DEFAULT_MODE = 0o644
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_NAMESPACE_FIELD = {"apiVersion": "v1", "fieldPath": "metadata.namespace"}
_NAMES = random.Random()
"""The volume names' own generator: drawing from the global one would shift what a seeded simulation draws after
(its pods' names and every choice that follows), depending on whether its pods get the volume."""


def default_token_request(body: Obj) -> Obj:
    """The request with `spec.expirationSeconds` defaulted (copy on write)."""
    spec = body.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    if spec.get("expirationSeconds") is None:
        return {**body, "spec": {**spec, "expirationSeconds": DEFAULT_EXPIRATION_SECONDS}}
    return body


def validate_token_request(body: Obj) -> list[FieldError]:
    """`ValidateTokenRequest`: the requested lifetime within [10 minutes, 2^32 seconds]."""
    spec = body.get("spec") or {}
    seconds: Any = spec.get("expirationSeconds") if isinstance(spec, dict) else None
    if not isinstance(seconds, int) or isinstance(seconds, bool):
        return []
    errors: list[FieldError] = []
    if seconds < MIN_EXPIRATION_SECONDS:
        errors.append(
            FieldError(
                "spec.expirationSeconds",
                ErrorType.FieldValueInvalid,
                "may not specify a duration less than 10 minutes",
                seconds,
            )
        )
    if seconds > MAX_EXPIRATION_SECONDS:
        errors.append(
            FieldError(
                "spec.expirationSeconds",
                ErrorType.FieldValueInvalid,
                "may not specify a duration larger than 2^32 seconds",
                seconds,
            )
        )
    return errors


def token_volume_source() -> Obj:
    """admission.go `TokenVolumeSource`: the projected source of the `kube-api-access-*` volume, with
    `defaultMode` set explicitly (kubernetes/kubernetes#104464)."""
    return {
        "defaultMode": PROJECTED_DEFAULT_MODE,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS, "path": "token"}},
            {"configMap": {"name": ROOT_CA_CONFIG_MAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": _NAMESPACE_FIELD}]}},
        ],
    }


def should_automount(pod_spec: Obj, account: Obj | None) -> bool:
    """admission.go `shouldAutomount`: the pod's preference, else its account's, else true."""
    pod_choice = pod_spec.get("automountServiceAccountToken")
    if isinstance(pod_choice, bool):
        return pod_choice
    account_choice = (account or {}).get("automountServiceAccountToken")
    if isinstance(account_choice, bool):
        return account_choice
    return True


def is_api_access_volume(volume: Obj) -> bool:
    """Whether a volume is the one the plugin adds (by its name, as the plugin itself finds it again)."""
    return str(volume.get("name") or "").startswith(VOLUME_PREFIX) and isinstance(volume.get("projected"), dict)


def mount_service_account_token(spec: Obj) -> Obj | None:
    """admission.go `mountServiceAccountToken`: the spec changes (`volumes`, `initContainers`, `containers`)
    that give every init container and container the token volume at `MOUNT_PATH` (one already mounting
    something there keeps it), or None when nothing changes. A `kube-api-access-*` volume the pod has is
    reused; otherwise one is named with five random characters and added when a container needs it."""
    volumes = spec.get("volumes")
    volumes = volumes if isinstance(volumes, list) else []
    name = next(
        (str(v["name"]) for v in volumes if isinstance(v, dict) and str(v.get("name") or "").startswith(VOLUME_PREFIX)),
        "",
    )
    has_volume = bool(name)
    if not name:
        name = VOLUME_PREFIX + "".join(_NAMES.choices(_NAME_ALPHABET, k=5))
    mount = {"name": name, "readOnly": True, "mountPath": MOUNT_PATH}
    changes: Obj = {}
    for group in ("initContainers", "containers"):
        containers = spec.get(group)
        if not isinstance(containers, list) or not containers:
            continue
        updated: list[Any] = []
        changed = False
        for container in containers:
            if not isinstance(container, dict):
                updated.append(container)
                continue
            mounts = container.get("volumeMounts")
            mounts = mounts if isinstance(mounts, list) else []
            if any(isinstance(m, dict) and m.get("mountPath") == MOUNT_PATH for m in mounts):
                updated.append(container)
                continue
            updated.append({**container, "volumeMounts": [*mounts, dict(mount)]})
            changed = True
        if changed:
            changes[group] = updated
    if not changes:
        return None
    if not has_volume:
        changes["volumes"] = [*volumes, {"name": name, "projected": token_volume_source()}]
    return changes
