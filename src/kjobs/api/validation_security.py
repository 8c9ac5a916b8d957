"""Seccomp and AppArmor profile fields of pod and container security contexts, and their agreement with the
deprecated annotations on a Pod's create.

Follows `pkg/apis/core/validation/validation.go` (v1.32): `validateSeccompProfileField`,
`ValidateAppArmorProfileField`, the container `ValidateSecurityContext` (ids, procMount, the two profiles), and
`ValidatePodCreate`'s `validateSeccompAnnotationsAndFields` / `validateAppArmorAnnotationsAndFieldsMatchOnCreate`,
with their paths, types, details and order. Not ported: a container's `privileged` under
`--allow-privileged=false` (kjobs has no such flag) and the two `allowPrivilegeEscalation: false` conflicts, whose
bad value is the whole Go struct with its pointers' addresses.
"""

from __future__ import annotations

from kjobs.api.errors import ErrorType, FieldError, not_supported, too_long
from kjobs.api.types import Obj
from kjobs.api.validation_access import Errors, get_int, get_obj, get_str
from kjobs.api.validation_formats import inclusive_range_error

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Forbidden = ErrorType.FieldValueForbidden

MAX_INT32 = 2**31 - 1
PROFILE_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")  # as upstream lists them
MAX_LOCALHOST_PROFILE = 4095  # PATH_MAX - 1
SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER = "container.seccomp.security.alpha.kubernetes.io/"
APPARMOR_CONTAINER = "container.apparmor.security.beta.kubernetes.io/"
# Go's strings.TrimSpace: Unicode white space.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" + (
    "\u2028\u2029\u202f\u205f\u3000"
)


class _GoStruct:
    """A bad value Kubernetes prints with `%#v` (a struct holding a pointer, whose address is not reproducible)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


def _local_descending_path(value: str, path: str, errs: Errors) -> None:
    """`validateLocalDescendingPath` (as for volume subPaths; `filepath.ToSlash` is the identity on Linux)."""
    if value.startswith("/"):
        errs.append(FieldError(path, Invalid, "must be a relative path", value))
    if ".." in value.split("/"):
        errs.append(FieldError(path, Invalid, "must not contain '..'", value))


def validate_seccomp_profile(holder: Obj, path: str, errs: Errors) -> None:
    """`validateSeccompProfileField` for `holder.seccompProfile` (`path` is the holder's)."""
    sp_path = f"{path}.seccompProfile"
    profile = get_obj(holder, "seccompProfile", sp_path, errs)
    if profile is None:
        return
    kind = get_str(profile, "type", f"{sp_path}.type", errs) or ""
    if not kind:
        errs.append(FieldError(f"{sp_path}.type", Required, "type is required when seccompProfile is set"))
    elif kind not in PROFILE_TYPES:
        errs.append(not_supported(f"{sp_path}.type", kind, PROFILE_TYPES))
    local = get_str(profile, "localhostProfile", f"{sp_path}.localhostProfile", errs)
    if kind == "Localhost":
        if local is None:
            errs.append(
                FieldError(f"{sp_path}.localhostProfile", Required, "must be set when seccomp type is Localhost")
            )
        else:
            _local_descending_path(local, f"{sp_path}.localhostProfile", errs)
    elif local is not None:
        shown = _GoStruct(f'core.SeccompProfile{{Type:"{kind}", LocalhostProfile:(*string)(0x...)}}')
        errs.append(
            FieldError(f"{sp_path}.localhostProfile", Invalid, "can only be set when seccomp type is Localhost", shown)
        )


def validate_apparmor_profile(holder: Obj, path: str, errs: Errors) -> None:
    """`ValidateAppArmorProfileField` for `holder.appArmorProfile` (`path` is the holder's)."""
    ap_path = f"{path}.appArmorProfile"
    profile = get_obj(holder, "appArmorProfile", ap_path, errs)
    if profile is None:
        return
    kind = get_str(profile, "type", f"{ap_path}.type", errs) or ""
    local = get_str(profile, "localhostProfile", f"{ap_path}.localhostProfile", errs)
    local_path = f"{ap_path}.localhostProfile"
    if kind == "Localhost":
        if local is None:
            errs.append(FieldError(local_path, Required, "must be set when AppArmor type is Localhost"))
        else:
            trimmed = local.strip(_GO_SPACE)
            if trimmed != local:
                errs.append(FieldError(local_path, Invalid, "must not be padded with whitespace", local))
            elif not trimmed:
                errs.append(FieldError(local_path, Required, "must be set when AppArmor type is Localhost"))
            if len(local.encode()) > MAX_LOCALHOST_PROFILE:
                errs.append(too_long(local_path, MAX_LOCALHOST_PROFILE))
    elif kind in ("RuntimeDefault", "Unconfined"):
        if local is not None:
            errs.append(FieldError(local_path, Invalid, "can only be set when AppArmor type is Localhost", local))
    elif not kind:
        errs.append(FieldError(f"{ap_path}.type", Required, "type is required when appArmorProfile is set"))
    else:
        errs.append(not_supported(f"{ap_path}.type", kind, PROFILE_TYPES))


def validate_container_security_context(container: Obj, host_users: bool, path: str, errs: Errors) -> None:
    """`ValidateSecurityContext` for `container.securityContext` (`path` is the container's), as listed in the
    module note: ids within 0..MaxInt32, procMount Default or Unmasked (Unmasked needs `hostUsers: false`), the
    seccomp and AppArmor profiles."""
    sc_path = f"{path}.securityContext"
    context = get_obj(container, "securityContext", sc_path, errs)
    if context is None:
        return
    for key in ("runAsUser", "runAsGroup"):
        value = get_int(context, key, f"{sc_path}.{key}", errs, bits=64)
        if value is not None and not 0 <= value <= MAX_INT32:
            errs.append(FieldError(f"{sc_path}.{key}", Invalid, inclusive_range_error(0, MAX_INT32), value))
    proc_mount = get_str(context, "procMount", f"{sc_path}.procMount", errs)
    if proc_mount is not None:
        if proc_mount not in ("Default", "Unmasked"):
            errs.append(not_supported(f"{sc_path}.procMount", proc_mount, ("Default", "Unmasked")))
        if host_users and proc_mount == "Unmasked":
            errs.append(
                FieldError(f"{sc_path}.procMount", Invalid, "`hostUsers` must be false to use `Unmasked`", proc_mount)
            )
    validate_seccomp_profile(context, sc_path, errs)
    validate_apparmor_profile(context, sc_path, errs)


def _containers_with_paths(spec: Obj) -> list[tuple[Obj, str]]:
    """`podshelper.VisitContainersWithPath`: init containers, containers, ephemeral containers."""
    out = []
    for key in ("initContainers", "containers", "ephemeralContainers"):
        listed = spec.get(key)
        for i, container in enumerate(listed if type(listed) is list else ()):
            if type(container) is dict:
                out.append((container, f"spec.{key}[{i}]"))
    return out


def _profile(holder: object, key: str) -> Obj | None:
    context = holder.get("securityContext") if type(holder) is dict else None
    profile = context.get(key) if type(context) is dict else None
    return profile if type(profile) is dict else None


def _seccomp_mismatch(annotation: str, profile: Obj, path: str, errs: Errors) -> None:
    """`validateSeccompAnnotationsAndFieldsMatch`."""
    kind = profile.get("type")
    if kind == "Unconfined":
        matches = annotation == "unconfined"
    elif kind == "RuntimeDefault":
        matches = annotation in ("runtime/default", "docker/default")
    elif kind == "Localhost":
        if not annotation.startswith("localhost/"):
            matches = False
        elif annotation.removeprefix("localhost/") != profile.get("localhostProfile"):
            errs.append(
                FieldError(f"{path}.localhostProfile", Forbidden, "seccomp profile in annotation and field must match")
            )
            return
        else:
            matches = True
    else:
        matches = True
    if not matches:
        errs.append(FieldError(f"{path}.type", Forbidden, "seccomp type in annotation and field must match"))


def _apparmor_mismatch(annotation: str, profile: Obj, path: str, errs: Errors) -> None:
    kind = profile.get("type")
    if kind == "Unconfined":
        matches = annotation == "unconfined"
    elif kind == "RuntimeDefault":
        matches = annotation == "runtime/default"
    elif kind == "Localhost":
        if not annotation.startswith("localhost/"):
            matches = False
        elif annotation.removeprefix("localhost/") != profile.get("localhostProfile"):
            errs.append(
                FieldError(f"{path}.localhostProfile", Forbidden, "apparmor profile in annotation and field must match")
            )
            return
        else:
            matches = True
    else:
        matches = True
    if not matches:
        errs.append(FieldError(f"{path}.type", Forbidden, "apparmor type in annotation and field must match"))


def validate_profile_annotations_match(annotations: dict[str, str] | None, spec: Obj, errs: Errors) -> None:
    """`ValidatePodCreate`'s last two checks: where a seccomp or AppArmor annotation and the field both say
    something for the pod or a container, they agree. AppArmor is skipped for Windows pods; a container without
    its own AppArmor field is held to the pod's."""
    if not annotations:
        return
    pod_seccomp = _profile(spec, "seccompProfile")
    if pod_seccomp is not None and SECCOMP_POD in annotations:
        _seccomp_mismatch(annotations[SECCOMP_POD], pod_seccomp, "spec.securityContext.seccompProfile", errs)
    containers = _containers_with_paths(spec)
    for container, path in containers:
        profile = _profile(container, "seccompProfile")
        key = f"{SECCOMP_CONTAINER}{container.get('name')}"
        if profile is not None and key in annotations:
            _seccomp_mismatch(annotations[key], profile, f"{path}.securityContext.seccompProfile", errs)
    pod_os = spec.get("os")
    if type(pod_os) is dict and pod_os.get("name") == "windows":
        return
    pod_apparmor = _profile(spec, "appArmorProfile")
    for container, path in containers:
        profile = _profile(container, "appArmorProfile") or pod_apparmor
        key = f"{APPARMOR_CONTAINER}{container.get('name')}"
        if profile is not None and key in annotations:
            _apparmor_mismatch(annotations[key], profile, f"{path}.securityContext.appArmorProfile", errs)
