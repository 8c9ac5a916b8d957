"""The Pod Security Standards as the PodSecurity admission plugin checks them (Kubernetes v1.32,
staging/src/k8s.io/pod-security-admission: `api/` for the namespace labels, levels and versions, `policy/check_*.go`
for every baseline and restricted check, `policy/registry.go` for which checks a level and version run, in which
order, and `policy/checks.go` for how their results join into one message).

Pure functions over a pod's (or pod template's) `metadata` and `spec` as JSON dicts; the admission step that calls
them is `kjobs.server.podsecurity`. A check returns None (allowed) or its forbidden reason and detail, worded
exactly as upstream's so that `kubectl` prints the same `would violate PodSecurity "restricted:latest": ...`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kjobs.api.errors import ErrorType, FieldError
from kjobs.api.types import Obj

LABEL_PREFIX = "pod-security.kubernetes.io/"
ENFORCE_LEVEL_LABEL = LABEL_PREFIX + "enforce"
ENFORCE_VERSION_LABEL = LABEL_PREFIX + "enforce-version"
AUDIT_LEVEL_LABEL = LABEL_PREFIX + "audit"
AUDIT_VERSION_LABEL = LABEL_PREFIX + "audit-version"
WARN_LEVEL_LABEL = LABEL_PREFIX + "warn"
WARN_VERSION_LABEL = LABEL_PREFIX + "warn-version"

PRIVILEGED, BASELINE, RESTRICTED = "privileged", "baseline", "restricted"
LEVELS = (PRIVILEGED, BASELINE, RESTRICTED)

Version = tuple[int, int] | None
"""A policy version: (1, minor), or None for `latest` (newer than every numbered version)."""

_VERSION = re.compile(r"v1\.(0|[1-9][0-9]*)")
"""api/helpers.go `versionRegexp` (`^v1\\.([0-9]|[1-9][0-9]*)$`), matched whole."""


@dataclass(frozen=True)
class LevelVersion:
    level: str
    version: Version = None

    def __str__(self) -> str:
        """`restricted:latest`, `baseline:v1.25` (api.LevelVersion.String)."""
        if self.version is None:
            return f"{self.level}:latest"
        return f"{self.level}:v{self.version[0]}.{self.version[1]}"


@dataclass(frozen=True)
class Policy:
    enforce: LevelVersion
    audit: LevelVersion
    warn: LevelVersion


DEFAULT_POLICY = Policy(LevelVersion(PRIVILEGED), LevelVersion(PRIVILEGED), LevelVersion(PRIVILEGED))
"""The defaults of kube-apiserver's PodSecurity configuration when no `--admission-control-config-file` names one
(admission/api/v1 defaults.go): enforce, audit and warn all `privileged:latest`, and no exemptions."""


def parse_level(value: str) -> tuple[str, str | None]:
    """api.ParseLevel: the level, or `restricted` and why the value is not one."""
    if value in LEVELS:
        return value, None
    return RESTRICTED, "must be one of " + ", ".join(LEVELS)


def parse_version(value: str) -> tuple[Version, str | None]:
    """api.ParseVersion: `latest` or `v1.N`; anything else is `latest` and an error."""
    if value == "latest":
        return None, None
    match = _VERSION.fullmatch(value)
    if match is None:
        return None, 'must be "latest" or "v1.x"'
    return (1, int(match.group(1))), None


def _label_error(label: str, value: str, why: str) -> FieldError:
    return FieldError(f"metadata.labels[{label}]", ErrorType.FieldValueInvalid, why, value)


def policy_to_evaluate(labels: Obj | None, defaults: Policy = DEFAULT_POLICY) -> tuple[Policy, list[FieldError]]:
    """api.PolicyToEvaluate: a namespace's labels over the defaults, with one error per label that does not parse.

    A policy is always returned: an unparseable enforce level is `restricted` (fail closed), an unparseable audit or
    warn level `privileged` (fail open), an unparseable version `latest`. Without a warn label, warn follows a
    stricter enforce level (and its version, unless a warn-version label says otherwise)."""
    if not labels:
        return defaults, []
    errors: list[FieldError] = []
    levels = {"enforce": defaults.enforce, "audit": defaults.audit, "warn": defaults.warn}
    set_enforce_level = False
    for mode, level_label, version_label in (
        ("enforce", ENFORCE_LEVEL_LABEL, ENFORCE_VERSION_LABEL),
        ("audit", AUDIT_LEVEL_LABEL, AUDIT_VERSION_LABEL),
        ("warn", WARN_LEVEL_LABEL, WARN_VERSION_LABEL),
    ):
        current = levels[mode]
        value = labels.get(level_label)
        if isinstance(value, str):
            level, why = parse_level(value)
            if why is not None:
                errors.append(_label_error(level_label, value, why))
                if mode != "enforce":
                    level = PRIVILEGED
            elif mode == "enforce":
                set_enforce_level = True
            current = LevelVersion(level, current.version)
        value = labels.get(version_label)
        if isinstance(value, str):
            version, why = parse_version(value)
            if why is not None:
                errors.append(_label_error(version_label, value, why))
            current = LevelVersion(current.level, version)
        levels[mode] = current
    enforce, warn = levels["enforce"], levels["warn"]
    if set_enforce_level and WARN_LEVEL_LABEL not in labels and compare_levels(enforce.level, warn.level) > 0:
        # "Default warn to the enforce level when explicitly set to a more restrictive level" (v1.23+): a Job in a
        # namespace labelled only `enforce=restricted` is warned about as its pods will be refused.
        version = warn.version if WARN_VERSION_LABEL in labels else enforce.version
        warn = LevelVersion(enforce.level, version)
    return Policy(enforce, levels["audit"], warn), errors


def has_policy_labels(labels: Obj | None) -> bool:
    """Whether any label is a PodSecurity one (without one, a namespace has the default policy). A plain loop: this
    is all the plugin costs a pod create in an unlabelled namespace."""
    if labels:
        for key in labels:
            if key.startswith(LABEL_PREFIX):
                return True
    return False


def compare_levels(a: str, b: str) -> int:
    """api.CompareLevels: -1, 0 or 1 as `a` is less strict than, as strict as, or stricter than `b`."""
    if a == b:
        return 0
    if a == PRIVILEGED:
        return -1
    if a == RESTRICTED:
        return 1
    if b == PRIVILEGED:
        return 1
    if b == RESTRICTED:
        return -1
    return 0


# ------------------------------------------------------------------------------------------------ helpers

Result = tuple[str, str] | None
"""A check's verdict: None (allowed), or its forbidden reason and detail."""

CheckFn = Callable[[Obj, Obj], Result]


def _join_quote(items: list[str]) -> str:
    """policy/helpers.go `joinQuote`: `"a", "b"`."""
    return '"' + '", "'.join(items) + '"' if items else ""


def _plural(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def _dict(value: object) -> Obj:
    return value if isinstance(value, dict) else {}


def _containers(spec: Obj) -> Iterator[Obj]:
    """policy/visitor.go `visitContainers`: init containers, containers, then ephemeral containers."""
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        items = spec.get(kind)
        if isinstance(items, list):
            for container in items:
                if isinstance(container, dict):
                    yield container


def _name(container: Obj) -> str:
    return str(container.get("name") or "")


def _security(obj: Obj) -> Obj:
    return _dict(obj.get("securityContext"))


def _windows(spec: Obj) -> bool:
    """`podSpec.OS != nil && podSpec.OS.Name == corev1.Windows`: from v1.25 the Linux-only restricted checks pass a
    pod that says it runs on Windows."""
    return _dict(spec.get("os")).get("name") == "windows"


def _setters(pod: bool, containers: list[str]) -> list[str]:
    """The "pod and containers "a", "b"" subject of the checks that look at both levels."""
    setters = ["pod"] if pod else []
    if containers:
        setters.append(f"{_plural('container', 'containers', len(containers))} {_join_quote(containers)}")
    return setters


# ------------------------------------------------------------------------------------------------ baseline


def _app_armor(meta: Obj, spec: Obj) -> Result:
    """check_appArmorProfile.go: `appArmorProfile.type` only RuntimeDefault or Localhost, and the deprecated
    `container.apparmor.security.beta.kubernetes.io/*` annotations only `runtime/default`, `localhost/*` or empty."""
    allowed = ("RuntimeDefault", "Localhost")
    bad_values: set[str] = set()
    pod_bad = False
    profile = _security(spec).get("appArmorProfile")
    if isinstance(profile, dict) and profile.get("type") not in allowed:
        pod_bad = True
        bad_values.add(str(profile.get("type") or ""))
    bad_containers = []
    for c in _containers(spec):
        profile = _security(c).get("appArmorProfile")
        if isinstance(profile, dict) and profile.get("type") not in allowed:
            bad_containers.append(_name(c))
            bad_values.add(str(profile.get("type") or ""))
    setters = _setters(pod_bad, bad_containers)
    annotations = []
    for key, value in _dict(meta.get("annotations")).items():
        if key.startswith("container.apparmor.security.beta.kubernetes.io/") and not (
            not value or value == "runtime/default" or str(value).startswith("localhost/")
        ):
            annotations.append(f'{key}="{value}"')
    values = sorted(bad_values)
    if annotations:
        values += sorted(annotations)
        setters.append(_plural("annotation", "annotations", len(annotations)))
    if not setters:
        return None
    return (
        _plural("forbidden AppArmor profile", "forbidden AppArmor profiles", len(values)),
        f"{' and '.join(setters)} must not set AppArmor profile type to {_join_quote(values)}",
    )


_BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
"""check_capabilities_baseline.go `capabilities_allowed_1_0`: the container runtime's default set."""


def _capabilities_baseline(meta: Obj, spec: Obj) -> Result:
    """check_capabilities_baseline.go: no capability added beyond the default set."""
    bad, caps = [], set()
    for c in _containers(spec):
        added = [str(cap) for cap in _dict(_security(c).get("capabilities")).get("add") or ()]
        wrong = [cap for cap in added if cap not in _BASELINE_CAPABILITIES]
        if wrong:
            bad.append(_name(c))
            caps.update(wrong)
    if not bad:
        return None
    return (
        "non-default capabilities",
        f"{_plural('container', 'containers', len(bad))} {_join_quote(bad)} must not include "
        f"{_join_quote(sorted(caps))} in securityContext.capabilities.add",
    )


def _host_namespaces(meta: Obj, spec: Obj) -> Result:
    """check_hostNamespaces.go: hostNetwork, hostPID and hostIPC false."""
    used = [f"{key}=true" for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key) is True]
    return ("host namespaces", ", ".join(used)) if used else None


def _host_path_volumes(meta: Obj, spec: Obj) -> Result:
    """check_hostPathVolumes.go: no hostPath volume."""
    names = [
        str(v.get("name") or "")
        for v in spec.get("volumes") or ()
        if isinstance(v, dict) and isinstance(v.get("hostPath"), dict)
    ]
    if not names:
        return None
    return "hostPath volumes", f"{_plural('volume', 'volumes', len(names))} {_join_quote(names)}"


def _host_ports(meta: Obj, spec: Obj) -> Result:
    """check_hostPorts.go: no container port with a hostPort (the ports listed sorted as strings, as Go's
    `sets.String` sorts them)."""
    bad, ports = [], set()
    for c in _containers(spec):
        used = [
            str(p.get("hostPort"))
            for p in c.get("ports") or ()
            if isinstance(p, dict) and p.get("hostPort") not in (None, 0)
        ]
        if used:
            bad.append(_name(c))
            ports.update(used)
    if not bad:
        return None
    return (
        "hostPort",
        f"{_plural('container', 'containers', len(bad))} {_join_quote(bad)} {_plural('uses', 'use', len(bad))} "
        f"{_plural('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}",
    )


def _privileged(meta: Obj, spec: Obj) -> Result:
    """check_privileged.go: no container with `securityContext.privileged=true`."""
    bad = [_name(c) for c in _containers(spec) if _security(c).get("privileged") is True]
    if not bad:
        return None
    return (
        "privileged",
        f"{_plural('container', 'containers', len(bad))} {_join_quote(bad)} must not set "
        "securityContext.privileged=true",
    )


def _proc_mount(meta: Obj, spec: Obj) -> Result:
    """check_procMount.go: `securityContext.procMount` unset or `Default` (the relaxation for user-namespaced
    pods is behind a feature gate that is off in v1.32)."""
    bad, kinds = [], set()
    for c in _containers(spec):
        mount = _security(c).get("procMount")
        if mount is not None and mount != "Default":
            bad.append(_name(c))
            kinds.add(str(mount))
    if not bad:
        return None
    return (
        "procMount",
        f"{_plural('container', 'containers', len(bad))} {_join_quote(bad)} must not set securityContext.procMount to "
        f"{_join_quote(sorted(kinds))}",
    )


def _se_linux(types: frozenset[str], *, fixed: bool) -> CheckFn:
    """check_seLinuxOptions.go: `seLinuxOptions.type` one of `types`, no `user` nor `role`. Before v1.31
    (`fixed` false) a user or role was only named when a type was also wrong, as upstream's 1.0 version words it."""

    def check(meta: Obj, spec: Obj) -> Result:
        bad_types: set[str] = set()
        flags = {"user": False, "role": False}

        def valid(options: Obj) -> bool:
            ok = True
            kind = str(options.get("type") or "")
            if kind not in types:
                ok = False
                bad_types.add(kind)
            for key in ("user", "role"):
                if options.get(key):
                    ok = False
                    flags[key] = True
            return ok

        pod_options = _security(spec).get("seLinuxOptions")
        pod_bad = isinstance(pod_options, dict) and not valid(pod_options)
        bad = []
        for c in _containers(spec):
            options = _security(c).get("seLinuxOptions")
            if isinstance(options, dict) and not valid(options):
                bad.append(_name(c))
        setters = _setters(pod_bad, bad)
        if not setters:
            return None
        data = []
        if bad_types:
            data.append(f"{_plural('type', 'types', len(bad_types))} {_join_quote(sorted(bad_types))}")
        if bad_types or fixed:
            data += [f"{key} may not be set" for key in ("user", "role") if flags[key]]
        return (
            "seLinuxOptions",
            f"{' and '.join(setters)} set forbidden securityContext.seLinuxOptions: {'; '.join(data)}",
        )

    return check


_SE_LINUX_TYPES_1_0 = frozenset({"", "container_t", "container_init_t", "container_kvm_t"})
_SE_LINUX_TYPES_1_31 = _SE_LINUX_TYPES_1_0 | {"container_engine_t"}

_SECCOMP_ANNOTATION_POD = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_ANNOTATION_CONTAINER = "container.seccomp.security.alpha.kubernetes.io/"


def _seccomp_baseline_1_0(meta: Obj, spec: Obj) -> Result:
    """check_seccompProfile_baseline.go v1.0-v1.18: the alpha annotations only `runtime/default`,
    `docker/default` or `localhost/*`."""
    annotations = _dict(meta.get("annotations"))

    def valid(value: object) -> bool:
        text = str(value)
        return text in ("runtime/default", "docker/default") or text.startswith("localhost/")

    forbidden = set()
    if _SECCOMP_ANNOTATION_POD in annotations and not valid(annotations[_SECCOMP_ANNOTATION_POD]):
        forbidden.add(f'{_SECCOMP_ANNOTATION_POD}="{annotations[_SECCOMP_ANNOTATION_POD]}"')
    for c in _containers(spec):
        key = _SECCOMP_ANNOTATION_CONTAINER + _name(c)
        if key in annotations and not valid(annotations[key]):
            forbidden.add(f'{key}="{annotations[key]}"')
    if not forbidden:
        return None
    return (
        "seccompProfile",
        f"forbidden {_plural('annotation', 'annotations', len(forbidden))} {', '.join(sorted(forbidden))}",
    )


_SECCOMP_ALLOWED = ("RuntimeDefault", "Localhost")


def _seccomp_baseline_1_19(meta: Obj, spec: Obj) -> Result:
    """check_seccompProfile_baseline.go v1.19+: a set `seccompProfile.type` only RuntimeDefault or Localhost."""
    bad_values: set[str] = set()
    profile = _security(spec).get("seccompProfile")
    pod_bad = isinstance(profile, dict) and profile.get("type") not in _SECCOMP_ALLOWED
    if pod_bad:
        bad_values.add(str(_dict(profile).get("type") or ""))
    bad = []
    for c in _containers(spec):
        profile = _security(c).get("seccompProfile")
        if isinstance(profile, dict) and profile.get("type") not in _SECCOMP_ALLOWED:
            bad.append(_name(c))
            bad_values.add(str(profile.get("type") or ""))
    setters = _setters(pod_bad, bad)
    if not setters:
        return None
    return (
        "seccompProfile",
        f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to "
        f"{_join_quote(sorted(bad_values))}",
    )


_SYSCTLS_1_0 = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_unprivileged_port_start",
    }
)
_SYSCTLS_1_27 = _SYSCTLS_1_0 | {"net.ipv4.ip_local_reserved_ports"}
_SYSCTLS_1_29 = _SYSCTLS_1_27 | {
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}


def _sysctls(allowed: frozenset[str]) -> CheckFn:
    """check_sysctls.go: only the safe sysctls of the version (listed in the pod's order)."""

    def check(meta: Obj, spec: Obj) -> Result:
        names = [
            str(s.get("name") or "")
            for s in _security(spec).get("sysctls") or ()
            if isinstance(s, dict) and s.get("name") not in allowed
        ]
        return ("forbidden sysctls", ", ".join(names)) if names else None

    return check


def _host_process(meta: Obj, spec: Obj) -> Result:
    """check_windowsHostProcess.go: no `windowsOptions.hostProcess=true`."""
    bad = [_name(c) for c in _containers(spec) if _dict(_security(c).get("windowsOptions")).get("hostProcess") is True]
    pod_bad = _dict(_security(spec).get("windowsOptions")).get("hostProcess") is True
    setters = _setters(pod_bad, bad)
    if not setters:
        return None
    return "hostProcess", f"{' and '.join(setters)} must not set securityContext.windowsOptions.hostProcess=true"


# ------------------------------------------------------------------------------------------------ restricted


def _linux_only(check: CheckFn) -> CheckFn:
    """The v1.25 revision of a Linux-only restricted check: a Windows pod passes."""

    def revised(meta: Obj, spec: Obj) -> Result:
        return None if _windows(spec) else check(meta, spec)

    return revised


def _allow_privilege_escalation(meta: Obj, spec: Obj) -> Result:
    """check_allowPrivilegeEscalation.go: every container sets `allowPrivilegeEscalation=false`."""
    bad = [_name(c) for c in _containers(spec) if _security(c).get("allowPrivilegeEscalation") is not False]
    if not bad:
        return None
    return (
        "allowPrivilegeEscalation != false",
        f"{_plural('container', 'containers', len(bad))} {_join_quote(bad)} must set "
        "securityContext.allowPrivilegeEscalation=false",
    )


def _capabilities_restricted(meta: Obj, spec: Obj) -> Result:
    """check_capabilities_restricted.go: every container drops ALL and adds nothing but NET_BIND_SERVICE."""
    missing_drop, adding, caps = [], [], set()
    for c in _containers(spec):
        capabilities = _security(c).get("capabilities")
        if not isinstance(capabilities, dict):
            missing_drop.append(_name(c))
            continue
        if "ALL" not in (capabilities.get("drop") or ()):
            missing_drop.append(_name(c))
        wrong = [str(cap) for cap in capabilities.get("add") or () if cap != "NET_BIND_SERVICE"]
        if wrong:
            adding.append(_name(c))
            caps.update(wrong)
    details = []
    if missing_drop:
        details.append(
            f"{_plural('container', 'containers', len(missing_drop))} {_join_quote(missing_drop)} must set "
            'securityContext.capabilities.drop=["ALL"]'
        )
    if adding:
        details.append(
            f"{_plural('container', 'containers', len(adding))} {_join_quote(adding)} must not include "
            f"{_join_quote(sorted(caps))} in securityContext.capabilities.add"
        )
    return ("unrestricted capabilities", "; ".join(details)) if details else None


_ALLOWED_VOLUMES = (
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
)
_RESTRICTED_VOLUMES = (
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
)
"""check_restrictedVolumes.go's switch, in its order: the first of these a volume has names its type."""


def _restricted_volumes(meta: Obj, spec: Obj) -> Result:
    """check_restrictedVolumes.go: only configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim,
    projected and secret volumes (any other source, e.g. v1.31's alpha `image`, is `unknown`)."""
    bad, kinds = [], set()
    for volume in spec.get("volumes") or ():
        if not isinstance(volume, dict) or any(volume.get(k) is not None for k in _ALLOWED_VOLUMES):
            continue
        bad.append(str(volume.get("name") or ""))
        kinds.add(next((k for k in _RESTRICTED_VOLUMES if volume.get(k) is not None), "unknown"))
    if not bad:
        return None
    return (
        "restricted volume types",
        f"{_plural('volume', 'volumes', len(bad))} {_join_quote(bad)} {_plural('uses', 'use', len(bad))} "
        f"{_plural('restricted volume type', 'restricted volume types', len(kinds))} {_join_quote(sorted(kinds))}",
    )


def _run_as_non_root(meta: Obj, spec: Obj) -> Result:
    """check_runAsNonRoot.go: `runAsNonRoot=true` on the pod or on every container, and false nowhere."""
    setting = _security(spec).get("runAsNonRoot")
    pod_bad = setting is False
    pod_non_root = setting is True
    explicit, implicit = [], []
    for c in _containers(spec):
        value = _security(c).get("runAsNonRoot")
        if value is not None:
            if value is False:
                explicit.append(_name(c))
        elif not pod_non_root:
            implicit.append(_name(c))
    setters = _setters(pod_bad, explicit)
    if setters:
        return "runAsNonRoot != true", f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false"
    if implicit:
        return (
            "runAsNonRoot != true",
            f"pod or {_plural('container', 'containers', len(implicit))} {_join_quote(implicit)} must set "
            "securityContext.runAsNonRoot=true",
        )
    return None


def _is_zero(value: object) -> bool:
    return type(value) is int and value == 0


def _run_as_user(meta: Obj, spec: Obj) -> Result:
    """check_runAsUser.go: no `runAsUser=0` on the pod or a container."""
    pod_bad = _is_zero(_security(spec).get("runAsUser"))
    bad = [_name(c) for c in _containers(spec) if _is_zero(_security(c).get("runAsUser"))]
    setters = _setters(pod_bad, bad)
    if not setters:
        return None
    return "runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0"


def _seccomp_restricted(meta: Obj, spec: Obj) -> Result:
    """check_seccompProfile_restricted.go: `seccompProfile.type` RuntimeDefault or Localhost on the pod or on every
    container, and nothing else anywhere."""
    bad_values: set[str] = set()
    profile = _security(spec).get("seccompProfile")
    pod_set = pod_bad = False
    if isinstance(profile, dict):
        if profile.get("type") in _SECCOMP_ALLOWED:
            pod_set = True
        else:
            pod_bad = True
            bad_values.add(str(profile.get("type") or ""))
    explicit, implicit = [], []
    for c in _containers(spec):
        profile = _security(c).get("seccompProfile")
        if isinstance(profile, dict):
            if profile.get("type") not in _SECCOMP_ALLOWED:
                explicit.append(_name(c))
                bad_values.add(str(profile.get("type") or ""))
        elif not pod_set:
            implicit.append(_name(c))
    setters = _setters(pod_bad, explicit)
    if setters:
        return (
            "seccompProfile",
            f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to "
            f"{_join_quote(sorted(bad_values))}",
        )
    if implicit:
        return (
            "seccompProfile",
            f"pod or {_plural('container', 'containers', len(implicit))} {_join_quote(implicit)} must set "
            'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"',
        )
    return None


# ------------------------------------------------------------------------------------------------ registry


@dataclass(frozen=True)
class VersionedCheck:
    minimum: int
    """The first v1.N the revision applies to."""
    check: CheckFn
    overrides: tuple[str, ...] = ()
    """The baseline checks this restricted one replaces at the restricted level (`OverrideCheckIDs`)."""


@dataclass(frozen=True)
class Check:
    id: str
    level: str
    versions: tuple[VersionedCheck, ...]

    def at(self, minor: int) -> VersionedCheck | None:
        """The revision for v1.`minor`: the newest whose minimum it reaches (None before the first)."""
        found = None
        for revision in self.versions:
            if revision.minimum <= minor:
                found = revision
        return found


CHECKS = (
    Check(
        "allowPrivilegeEscalation",
        RESTRICTED,
        (VersionedCheck(8, _allow_privilege_escalation), VersionedCheck(25, _linux_only(_allow_privilege_escalation))),
    ),
    Check("appArmorProfile", BASELINE, (VersionedCheck(0, _app_armor),)),
    Check("capabilities_baseline", BASELINE, (VersionedCheck(0, _capabilities_baseline),)),
    Check(
        "capabilities_restricted",
        RESTRICTED,
        (
            VersionedCheck(22, _capabilities_restricted, ("capabilities_baseline",)),
            VersionedCheck(25, _linux_only(_capabilities_restricted), ("capabilities_baseline",)),
        ),
    ),
    Check("hostNamespaces", BASELINE, (VersionedCheck(0, _host_namespaces),)),
    Check("hostPathVolumes", BASELINE, (VersionedCheck(0, _host_path_volumes),)),
    Check("hostPorts", BASELINE, (VersionedCheck(0, _host_ports),)),
    Check("privileged", BASELINE, (VersionedCheck(0, _privileged),)),
    Check("procMount", BASELINE, (VersionedCheck(0, _proc_mount),)),
    Check("restrictedVolumes", RESTRICTED, (VersionedCheck(0, _restricted_volumes, ("hostPathVolumes",)),)),
    Check("runAsNonRoot", RESTRICTED, (VersionedCheck(0, _run_as_non_root),)),
    Check("runAsUser", RESTRICTED, (VersionedCheck(23, _run_as_user),)),
    Check(
        "seLinuxOptions",
        BASELINE,
        (
            VersionedCheck(0, _se_linux(_SE_LINUX_TYPES_1_0, fixed=False)),
            VersionedCheck(31, _se_linux(_SE_LINUX_TYPES_1_31, fixed=True)),
        ),
    ),
    Check(
        "seccompProfile_baseline",
        BASELINE,
        (VersionedCheck(0, _seccomp_baseline_1_0), VersionedCheck(19, _seccomp_baseline_1_19)),
    ),
    Check(
        "seccompProfile_restricted",
        RESTRICTED,
        (
            VersionedCheck(19, _seccomp_restricted, ("seccompProfile_baseline",)),
            VersionedCheck(25, _linux_only(_seccomp_restricted), ("seccompProfile_baseline",)),
        ),
    ),
    Check(
        "sysctls",
        BASELINE,
        (
            VersionedCheck(0, _sysctls(_SYSCTLS_1_0)),
            VersionedCheck(27, _sysctls(_SYSCTLS_1_27)),
            VersionedCheck(29, _sysctls(_SYSCTLS_1_29)),
        ),
    ),
    Check("windowsHostProcess", BASELINE, (VersionedCheck(0, _host_process),)),
)
"""Every check v1.32 registers (policy/check_*.go), with the versions each revision applies from."""

MAX_MINOR = max(revision.minimum for check in CHECKS for revision in check.versions)
"""registry.go `maxVersion`: `latest` and any newer version evaluate as this one."""


def _plan(level: str, minor: int) -> tuple[CheckFn, ...]:
    """registry.go `populate` for one level and version: the baseline checks, then (for restricted) the restricted
    ones, each group sorted by ID, without the baseline checks a restricted revision overrides."""
    baseline = sorted((c for c in CHECKS if c.level == BASELINE), key=lambda c: c.id)
    restricted = sorted((c for c in CHECKS if c.level == RESTRICTED), key=lambda c: c.id)
    chosen = [(c.id, c.at(minor)) for c in baseline]
    if level == RESTRICTED:
        extra = [(c.id, c.at(minor)) for c in restricted]
        overridden = {o for _, r in extra if r is not None for o in r.overrides}
        chosen = [(i, r) for i, r in chosen if i not in overridden] + extra
    return tuple(r.check for _, r in chosen if r is not None)


_PLANS: dict[tuple[str, int], tuple[CheckFn, ...]] = {}


def evaluate(lv: LevelVersion, meta: Obj, spec: Obj) -> list[tuple[str, str]]:
    """registry.go `EvaluatePod` then `AggregateCheckResults`: the (reason, detail) of every failing check, in
    order; empty when the pod is allowed (always at `privileged`)."""
    if lv.level == PRIVILEGED:
        return []
    minor = MAX_MINOR if lv.version is None else min(lv.version[1], MAX_MINOR)
    key = (lv.level, minor)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = _plan(lv.level, minor)
    return [result for check in plan if (result := check(meta, spec)) is not None]


def forbidden_detail(results: list[tuple[str, str]]) -> str:
    """checks.go `ForbiddenDetail`: `reason (detail), reason, reason (detail)`."""
    return ", ".join(f"{reason} ({detail})" if detail else reason for reason, detail in results)


def forbidden_reason(results: list[tuple[str, str]]) -> str:
    """checks.go `ForbiddenReason`: the reasons alone, as the namespace check's warnings list them."""
    return ", ".join(reason for reason, _ in results)
