"""Seccomp and AppArmor profile fields of pod and container security contexts, their agreement with the
deprecated annotations on a Pod's create, sysctls, and the pod OS rules.

Follows `pkg/apis/core/validation/validation.go` (v1.32): `validateSeccompProfileField`,
`ValidateAppArmorProfileField`, the container `ValidateSecurityContext` (ids, procMount, the two profiles), and
`ValidatePodCreate`'s `validateSeccompAnnotationsAndFields` / `validateAppArmorAnnotationsAndFieldsMatchOnCreate`,
`validateSysctls` (`ValidateHostSysctl`), `validateHostUsers` and `validateOS` / `validateLinux` /
`validateWindows`, the two `allowPrivilegeEscalation: false` conflicts, `validateWindowsSecurityContextOptions`
and `validateWindowsHostProcessPod`, with their paths, types, details and order. Not ported: a container's
`privileged` and host-process containers under `--allow-privileged=false` (kjobs has no such flag: both are
allowed). The conflicts' bad value is the whole internal `core.SecurityContext`, which kjobs renders as Go's JSON
of it (field names as declared, `null` for unset pointers), as apimachinery renders composite values; Go's
`%v` of the pointer would print an address instead.
"""

from __future__ import annotations

import re

from kjobs.api.errors import ErrorType, FieldError, go_json, go_json_struct, not_supported, too_long
from kjobs.api.types import Obj
from kjobs.api.validation_access import Errors, get_bool, get_int, get_list, get_obj, get_str, items_of
from kjobs.api.validation_formats import inclusive_range_error, is_dns1123_subdomain

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
    if context.get("allowPrivilegeEscalation") is False:
        _privilege_escalation_conflicts(context, sc_path, errs)
    if "windowsOptions" in context:
        validate_windows_options(context, sc_path, errs)
    validate_apparmor_profile(context, sc_path, errs)


_ESCALATION_PRIVILEGED = "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"
_ESCALATION_SYS_ADMIN = "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"


def _privilege_escalation_conflicts(context: Obj, path: str, errs: Errors) -> None:
    """`ValidateSecurityContext`: without privilege escalation a container may be neither privileged nor add
    CAP_SYS_ADMIN (once per listed CAP_SYS_ADMIN). The error names the security context itself."""
    if context.get("privileged") is True:
        errs.append(FieldError(path, Invalid, _ESCALATION_PRIVILEGED, _GoStruct(security_context_json(context))))
    capabilities = context.get("capabilities")
    added = capabilities.get("add") if type(capabilities) is dict else None
    for cap in added if type(added) is list else ():
        if cap == "CAP_SYS_ADMIN":
            errs.append(FieldError(path, Invalid, _ESCALATION_SYS_ADMIN, _GoStruct(security_context_json(context))))


def _json_field(holder: object, key: str) -> str:
    value = holder.get(key) if type(holder) is dict else None
    return go_json(value)


def _json_object(holder: Obj, key: str, fields: tuple[tuple[str, str], ...], zero: str = "null") -> str:
    """A nested struct (Go name, v1 key per field), or `null` when the pointer is unset."""
    value = holder.get(key)
    if type(value) is not dict:
        return "null"
    return go_json_struct([(name, _json_field(value, child) if child else zero) for name, child in fields])


def security_context_json(context: Obj) -> str:
    """The internal `core.SecurityContext` as `encoding/json` writes it (no JSON tags: Go field names in
    declaration order; unset pointers and empty lists `null`, SELinux options' unset strings `""`)."""
    se_linux = context.get("seLinuxOptions")
    se_linux_json = "null"
    if type(se_linux) is dict:
        se_linux_json = go_json_struct([(name, go_json(se_linux.get(key) or "")) for name, key in _SELINUX_FIELDS])
    return go_json_struct(
        [
            ("Capabilities", _json_object(context, "capabilities", (("Add", "add"), ("Drop", "drop")))),
            ("Privileged", _json_field(context, "privileged")),
            ("SELinuxOptions", se_linux_json),
            ("WindowsOptions", _json_object(context, "windowsOptions", _WINDOWS_FIELDS)),
            ("RunAsUser", _json_field(context, "runAsUser")),
            ("RunAsGroup", _json_field(context, "runAsGroup")),
            ("RunAsNonRoot", _json_field(context, "runAsNonRoot")),
            ("ReadOnlyRootFilesystem", _json_field(context, "readOnlyRootFilesystem")),
            ("AllowPrivilegeEscalation", _json_field(context, "allowPrivilegeEscalation")),
            ("ProcMount", _json_field(context, "procMount")),
            ("SeccompProfile", _profile_json(context, "seccompProfile")),
            ("AppArmorProfile", _profile_json(context, "appArmorProfile")),
        ]
    )


_SELINUX_FIELDS = (("User", "user"), ("Role", "role"), ("Type", "type"), ("Level", "level"))
_WINDOWS_FIELDS = (
    ("GMSACredentialSpecName", "gmsaCredentialSpecName"),
    ("GMSACredentialSpec", "gmsaCredentialSpec"),
    ("RunAsUserName", "runAsUserName"),
    ("HostProcess", "hostProcess"),
)


def _profile_json(context: Obj, key: str) -> str:
    profile = context.get(key)
    if type(profile) is not dict:
        return "null"
    return go_json_struct(
        [("Type", go_json(profile.get("type") or "")), ("LocalhostProfile", _json_field(profile, "localhostProfile"))]
    )


# --- Windows options -------------------------------------------------------------------------------------------

MAX_GMSA_CREDENTIAL_SPEC_KIB = 64
MAX_RUN_AS_USER_NAME_DOMAIN = 256
MAX_RUN_AS_USER_NAME_USER = 104
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")  # Go's [[:cntrl:]] (ASCII)
_NETBIOS_RE = re.compile(r'[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}\Z')
_DNS_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
_WINDOWS_DOMAIN_DNS_RE = re.compile(rf"{_DNS_LABEL}(?:\.{_DNS_LABEL})*\Z")
_USER_BAD_CHARS_RE = re.compile(r'["/\\:;|=,+*?<>@\[\]]')
_USER_DOTS_SPACES_RE = re.compile(r"[. ]+\Z")


def validate_windows_options(holder: Obj, path: str, errs: Errors) -> None:
    """`validateWindowsSecurityContextOptions` for `holder.windowsOptions` (`path` is the holder's): the GMSA
    credential spec name a DNS subdomain, the spec itself non-empty and under 64 KiB, and `runAsUserName` a
    `DOMAIN\\USER` or `USER` Windows accepts."""
    wo_path = f"{path}.windowsOptions"
    options = get_obj(holder, "windowsOptions", wo_path, errs)
    if options is None:
        return
    spec_name = get_str(options, "gmsaCredentialSpecName", f"{wo_path}.gmsaCredentialSpecName", errs)
    if spec_name is not None:
        for msg in is_dns1123_subdomain(spec_name):
            errs.append(FieldError(f"{wo_path}.gmsaCredentialSpecName", Invalid, msg, spec_name))
    spec = get_str(options, "gmsaCredentialSpec", f"{wo_path}.gmsaCredentialSpec", errs)
    if spec is not None:
        size = len(spec.encode())
        if size == 0:
            msg = "gmsaCredentialSpec cannot be an empty string"
            errs.append(FieldError(f"{wo_path}.gmsaCredentialSpec", Invalid, msg, spec))
        elif size > MAX_GMSA_CREDENTIAL_SPEC_KIB * 1024:
            msg = f"gmsaCredentialSpec size must be under {MAX_GMSA_CREDENTIAL_SPEC_KIB} KiB"
            errs.append(FieldError(f"{wo_path}.gmsaCredentialSpec", Invalid, msg, spec))
    user_name = get_str(options, "runAsUserName", f"{wo_path}.runAsUserName", errs)
    if user_name is not None:
        for msg in _run_as_user_name_errors(user_name):
            errs.append(FieldError(f"{wo_path}.runAsUserName", Invalid, msg, user_name))
    get_bool(options, "hostProcess", f"{wo_path}.hostProcess", errs)


def _run_as_user_name_errors(name: str) -> list[str]:
    if not name:
        return ["runAsUserName cannot be an empty string"]
    if _CONTROL_RE.search(name):
        return ["runAsUserName cannot contain control characters"]
    parts = name.split("\\")
    if len(parts) > 2:
        return ["runAsUserName cannot contain more than one backslash"]
    domain, user = ("", parts[0]) if len(parts) == 1 else (parts[0], parts[1])
    msgs = []
    if len(domain.encode()) >= MAX_RUN_AS_USER_NAME_DOMAIN:
        msgs.append(f"runAsUserName's Domain length must be under {MAX_RUN_AS_USER_NAME_DOMAIN} characters")
    if len(parts) == 2 and not (_NETBIOS_RE.match(domain) or _WINDOWS_DOMAIN_DNS_RE.match(domain)):
        msgs.append("runAsUserName's Domain doesn't match the NetBios nor the DNS format")
    user_length = len(user.encode())
    if user_length == 0:
        msgs.append("runAsUserName's User cannot be empty")
    elif user_length > MAX_RUN_AS_USER_NAME_USER:
        msgs.append(f"runAsUserName's User length must not be longer than {MAX_RUN_AS_USER_NAME_USER} characters")
    if _USER_DOTS_SPACES_RE.match(user):
        msgs.append("runAsUserName's User cannot contain only periods or spaces")
    if _USER_BAD_CHARS_RE.search(user):
        msgs.append("runAsUserName's User cannot contain the following characters: \"/\\:;|=,+*?<>@[]")
    return msgs


def _host_process(holder: object) -> bool | None:
    context = holder.get("securityContext") if type(holder) is dict else None
    options = context.get("windowsOptions") if type(context) is dict else None
    value = options.get("hostProcess") if type(options) is dict else None
    return value if type(value) is bool else None


def _any_windows_options(spec: Obj) -> bool:
    """Whether the pod or any container has `windowsOptions` (a Linux pod's: none, one look per container)."""
    context = spec.get("securityContext")
    if type(context) is dict and "windowsOptions" in context:
        return True
    for key in ("initContainers", "containers", "ephemeralContainers"):
        listed = spec.get(key)
        for container in listed if type(listed) is list else ():
            context = container.get("securityContext") if type(container) is dict else None
            if type(context) is dict and "windowsOptions" in context:
                return True
    return False


def validate_windows_host_process(spec: Obj, path: str, errs: Errors) -> None:
    """`validateWindowsHostProcessPod`: a container's `hostProcess` agrees with the pod's where both say; if any
    container is a host-process one (its own or the pod's setting), all are, and the pod uses the host network.
    (Upstream's third rule, `--allow-privileged=false`, has no kjobs counterpart.)"""
    if not _any_windows_options(spec):
        return  # every Linux pod: no rule can fail
    pod_value = _host_process(spec)
    containers = [(c, f"{path}{p.removeprefix('spec')}") for c, p in _containers_with_paths(spec)]
    count = 0
    for container, cpath in containers:
        value = _host_process(container)
        if pod_value is not None and value is not None and pod_value != value:
            msg = f"pod hostProcess value must be identical if both are specified, was {str(pod_value).lower()}"
            errs.append(FieldError(f"{cpath}.securityContext.windowsOptions.hostProcess", Invalid, msg, value))
        if value is True or (value is None and pod_value is True):
            count += 1
    if count == 0:
        return
    if count != len(containers):
        msg = "If pod contains any hostProcess containers then all containers must be HostProcess containers"
        errs.append(FieldError(path, Invalid, msg, ""))
    if spec.get("hostNetwork") is not True:
        msg = "hostNetwork must be true if pod contains any hostProcess containers"
        errs.append(FieldError(f"{path}.hostNetwork", Invalid, msg, False))


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


_RUNTIME_DEFAULT_ANNOTATIONS = {"seccomp": ("runtime/default", "docker/default"), "apparmor": ("runtime/default",)}


def _profile_mismatch(what: str, annotation: str, profile: Obj, path: str, errs: Errors) -> None:
    """`validateSeccompAnnotationsAndFieldsMatch` / `validateAppArmorAnnotationsAndFieldsMatch` (`what`:
    `seccomp` or `apparmor`): the annotation names the field's profile type, and a Localhost one its file."""
    kind = profile.get("type")
    if kind == "Unconfined":
        matches = annotation == "unconfined"
    elif kind == "RuntimeDefault":
        matches = annotation in _RUNTIME_DEFAULT_ANNOTATIONS[what]
    elif kind == "Localhost":
        if not annotation.startswith("localhost/"):
            matches = False
        elif annotation.removeprefix("localhost/") != profile.get("localhostProfile"):
            errs.append(
                FieldError(f"{path}.localhostProfile", Forbidden, f"{what} profile in annotation and field must match")
            )
            return
        else:
            matches = True
    else:
        matches = True
    if not matches:
        errs.append(FieldError(f"{path}.type", Forbidden, f"{what} type in annotation and field must match"))


def validate_profile_annotations_match(annotations: dict[str, str] | None, spec: Obj, errs: Errors) -> None:
    """`ValidatePodCreate`'s last two checks: where a seccomp or AppArmor annotation and the field both say
    something for the pod or a container, they agree (called only when the pod has such an annotation). AppArmor
    is skipped for Windows pods; a container without its own AppArmor field is held to the pod's."""
    if not annotations:
        return
    pod_seccomp = _profile(spec, "seccompProfile")
    if pod_seccomp is not None and SECCOMP_POD in annotations:
        _profile_mismatch("seccomp", annotations[SECCOMP_POD], pod_seccomp, "spec.securityContext.seccompProfile", errs)
    containers = _containers_with_paths(spec)
    for container, path in containers:
        profile = _profile(container, "seccompProfile")
        key = f"{SECCOMP_CONTAINER}{container.get('name')}"
        if profile is not None and key in annotations:
            _profile_mismatch("seccomp", annotations[key], profile, f"{path}.securityContext.seccompProfile", errs)
    pod_os = spec.get("os")
    if type(pod_os) is dict and pod_os.get("name") == "windows":
        return
    pod_apparmor = _profile(spec, "appArmorProfile")
    for container, path in containers:
        profile = _profile(container, "appArmorProfile") or pod_apparmor
        key = f"{APPARMOR_CONTAINER}{container.get('name')}"
        if profile is not None and key in annotations:
            _profile_mismatch("apparmor", annotations[key], profile, f"{path}.securityContext.appArmorProfile", errs)


# --- sysctls ---------------------------------------------------------------------------------------------------

SYSCTL_MAX_LENGTH = 253
_SYSCTL_SEGMENT = r"[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_SYSCTL_PATTERN = rf"^({_SYSCTL_SEGMENT}[\./])*{_SYSCTL_SEGMENT}$"  # SysctlContainSlashFmt, anchored
_SYSCTL_RE = re.compile(_SYSCTL_PATTERN)
_SYSCTL_MSG = f"must have at most {SYSCTL_MAX_LENGTH} characters and match regex {_SYSCTL_PATTERN}"
# k8s.io/component-helpers/node/util/sysctl (namespace.go): the sysctls a pod's IPC or network namespace holds.
_IPC_SYSCTLS = frozenset(
    {
        "kernel.sem",
        "kernel.shmall",
        "kernel.shmmax",
        "kernel.shmmni",
        "kernel.shm_rmid_forced",
        "kernel.shm",
        "kernel.msgmax",
        "kernel.msgmnb",
        "kernel.msgmni",
        "kernel.msg",
    }
)


def _normalize_sysctl(name: str) -> str:
    """`NormalizeName`: a name whose first separator is `/` has its `.` and `/` swapped."""
    for ch in name:
        if ch == ".":
            return name
        if ch == "/":
            return name.translate(str.maketrans("./", "/."))
    return name


def sysctl_namespace(name: str) -> str:
    """`GetNamespace`'s namespace: "IPC", "Net" or "" (unknown); a `*` ends the name (a prefix)."""
    normalized = _normalize_sysctl(name).split("*", 1)[0]
    if normalized in _IPC_SYSCTLS:
        return "IPC"
    if normalized.startswith("net."):
        return "Net"
    if normalized.startswith("fs.mqueue."):
        return "IPC"
    return ""


def validate_sysctls(spec: Obj, context: Obj, path: str, errs: Errors) -> None:
    """`validateSysctls` for `securityContext.sysctls` (`path` is the list's): names required, well formed and
    unique; a network sysctl is refused with `hostNetwork`, an IPC one with `hostIPC` (`ValidateHostSysctl`; on
    create `AllowNamespacedSysctlsForHostNetAndHostIPC` is off)."""
    sysctls = items_of(get_list(context, "sysctls", path, errs), path, errs)
    host_network = spec.get("hostNetwork") is True
    host_ipc = spec.get("hostIPC") is True
    names: set[str] = set()
    for i, sysctl in sysctls:
        name_path = f"{path}[{i}].name"
        name = get_str(sysctl, "name", name_path, errs) or ""
        if not name:
            errs.append(FieldError(name_path, Required))
        elif len(name) > SYSCTL_MAX_LENGTH or not _SYSCTL_RE.match(name):
            errs.append(FieldError(name_path, Invalid, _SYSCTL_MSG, name))
        elif name in names:
            errs.append(FieldError(name_path, ErrorType.FieldValueDuplicate, "", name))
        namespace = sysctl_namespace(name)
        if host_network and namespace == "Net":
            errs.append(FieldError(name_path, Invalid, "may not be specified when 'hostNetwork' is true", name))
        elif host_ipc and namespace == "IPC":
            errs.append(FieldError(name_path, Invalid, "may not be specified when 'hostIPC' is true", name))
        names.add(name)


# --- pod OS ----------------------------------------------------------------------------------------------------

_WINDOWS_MSG = "cannot be set for a windows pod"
_LINUX_MSG = "windows options cannot be set for a linux pod"
# validateWindows: pod security-context fields (path child of securityContext) and, for the fields the internal
# PodSecurityContext holds but v1 puts on the pod spec, their spec-level paths (`hostUsers`, `hostPID`, …).
_WINDOWS_POD_FIELDS = (
    ("securityContext", "appArmorProfile"),
    ("securityContext", "seLinuxOptions"),
    ("", "hostUsers"),
    ("", "hostPID"),
    ("", "hostIPC"),
    ("securityContext", "seccompProfile"),
    ("securityContext", "fsGroup"),
    ("securityContext", "fsGroupChangePolicy"),
    ("securityContext", "sysctls"),
    ("", "shareProcessNamespace"),
    ("securityContext", "runAsUser"),
    ("securityContext", "runAsGroup"),
    ("securityContext", "supplementalGroups"),
    ("securityContext", "supplementalGroupsPolicy"),
    ("securityContext", "seLinuxChangePolicy"),
)
_WINDOWS_CONTAINER_FIELDS = (
    "appArmorProfile",
    "seLinuxOptions",
    "seccompProfile",
    "capabilities",
    "readOnlyRootFilesystem",
    "privileged",
    "allowPrivilegeEscalation",
    "procMount",
    "runAsUser",
    "runAsGroup",
)


def _windows_pod_field_set(spec: Obj, context: Obj, holder: str, key: str) -> bool:
    if holder:
        value = context.get(key)
        return bool(value) if key == "sysctls" else value is not None
    value = spec.get(key)
    return value is True if key in ("hostPID", "hostIPC") else value is not None


def validate_pod_os(spec: Obj, path: str, errs: Errors) -> None:
    """`validateOS`, then `validateLinux` or `validateWindows` (v1.32): `spec.os.name` is linux or windows (the
    NotSupported error names `spec.os`, as upstream); a Linux pod may not carry Windows options, a Windows pod
    none of the Linux-only security fields."""
    os_path = f"{path}.os"
    pod_os = get_obj(spec, "os", os_path, errs)
    if pod_os is None:
        return
    name = get_str(pod_os, "name", f"{os_path}.name", errs) or ""
    if not name:
        errs.append(FieldError(f"{os_path}.name", Required, "cannot be empty"))
        return
    if name not in ("linux", "windows"):
        errs.append(not_supported(os_path, name, ("linux", "windows")))
        return
    context = spec.get("securityContext")
    context = context if type(context) is dict else {}
    containers = [(c, f"{path}{p.removeprefix('spec')}") for c, p in _containers_with_paths(spec)]
    if name == "linux":
        if context.get("windowsOptions") is not None:
            errs.append(FieldError(f"{path}.securityContext.windowsOptions", Forbidden, _LINUX_MSG))
        for container, cpath in containers:
            sc = container.get("securityContext")
            if type(sc) is dict and sc.get("windowsOptions") is not None:
                errs.append(FieldError(f"{cpath}.securityContext.windowsOptions", Forbidden, _LINUX_MSG))
        return
    for holder, key in _WINDOWS_POD_FIELDS:
        if _windows_pod_field_set(spec, context, holder, key):
            field_path = f"{path}.{holder}.{key}" if holder else f"{path}.{key}"
            errs.append(FieldError(field_path, Forbidden, _WINDOWS_MSG))
    for container, cpath in containers:
        sc = container.get("securityContext")
        if type(sc) is not dict:
            continue
        for key in _WINDOWS_CONTAINER_FIELDS:
            if sc.get(key) is not None:
                errs.append(FieldError(f"{cpath}.securityContext.{key}", Forbidden, _WINDOWS_MSG))


def validate_host_users(spec: Obj, path: str, errs: Errors) -> None:
    """`validateHostUsers`: a pod in its own user namespace (`hostUsers: false`) may not share the host's
    network, PID or IPC namespace. Upstream's paths kept: `hostNetwork`, but `HostPID` and `HostIPC`."""
    if spec.get("hostUsers") is not False:
        return
    for key, child in (("hostNetwork", "hostNetwork"), ("hostPID", "HostPID"), ("hostIPC", "HostIPC")):
        if spec.get(key) is True:
            errs.append(FieldError(f"{path}.{child}", Forbidden, "when `pod.Spec.HostUsers` is false"))
