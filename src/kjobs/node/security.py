"""A container's securityContext, as the process runtime can honour it: who it runs as, with which capabilities.

Design note: pure but for the identity of this process and the host's user database. `effective` merges the pod's
and the container's securityContext as the kubelet does (Kubernetes `pkg/securitycontext/util.go`,
`DetermineEffectiveSecurityContext`: the container's field wins, field by field). `run_as` turns it into a
`RunAs` — uid, gid, groups, capability bounding set, no_new_privs — or raises `ConfigError`, which the runtime
shows as the container's `CreateContainerConfigError`:

- `runAsNonRoot` is checked as `verifyRunAsNonRoot` checks it (`pkg/kubelet/kuberuntime/security_context_others.go`),
  with the kubelet's messages. There is no image: the "image's user" is the user kjobs runs as.
- When kjobs does not run as root it cannot change user: a `runAsUser`/`runAsGroup` other than its own fails the
  container rather than running it as the wrong user.

`RunAs.argv` is a `setpriv` (util-linux) prefix that switches identity and drops capabilities in the container's
own process, after the shim's `posix_spawn`: the shim's cost per start stays that of a plain start (a fork with
`setresuid`/`capset` through ctypes would cost the shim a fork per start). A container without a securityContext
gets no prefix at all. Capabilities start from what a kjobs container has without a securityContext (all of the
server's), minus `drop` (`ALL`: everything), plus `add`, applied as the bounding set; a non-root user's effective
set is empty after exec, as with containerd (no ambient capabilities).

`unenforced` lists the fields the runtime cannot honour (read-only root, SELinux, seccomp, AppArmor, ...); the node
agent reports them in one Warning event per pod, reason `SecurityContextNotEnforced` (kjobs' own: the kubelet
honours these fields and has no such event).
"""

from __future__ import annotations

import os
import pwd
import shutil
from dataclasses import dataclass

from kjobs.api.types import Obj
from kjobs.node.envvars import ConfigError

NOT_ENFORCED = "SecurityContextNotEnforced"
"""The reason of the Warning event naming the securityContext fields kjobs cannot honour."""

_POD_FIELDS = ("runAsUser", "runAsGroup", "runAsNonRoot", "seLinuxOptions", "windowsOptions", "seccompProfile")
"""Fields of a PodSecurityContext that a container's securityContext inherits (`securityContextFromPodSecurityContext`
in Kubernetes `pkg/securitycontext/util.go`); `appArmorProfile` too."""

CAPABILITIES = frozenset(
    (
        "chown",
        "dac_override",
        "dac_read_search",
        "fowner",
        "fsetid",
        "kill",
        "setgid",
        "setuid",
        "setpcap",
        "linux_immutable",
        "net_bind_service",
        "net_broadcast",
        "net_admin",
        "net_raw",
        "ipc_lock",
        "ipc_owner",
        "sys_module",
        "sys_rawio",
        "sys_chroot",
        "sys_ptrace",
        "sys_pacct",
        "sys_admin",
        "sys_boot",
        "sys_nice",
        "sys_resource",
        "sys_time",
        "sys_tty_config",
        "mknod",
        "lease",
        "audit_write",
        "audit_control",
        "setfcap",
        "mac_override",
        "mac_admin",
        "syslog",
        "wake_alarm",
        "block_suspend",
        "audit_read",
        "perfmon",
        "bpf",
        "checkpoint_restore",
    )
)
"""Linux capability names, lower case without `CAP_` as setpriv takes them (`include/uapi/linux/capability.h`)."""


@dataclass(frozen=True, slots=True)
class RunAs:
    """How one container's process is started: the identity and privileges `setpriv` gives it."""

    uid: int | None = None
    gid: int | None = None
    groups: tuple[int, ...] | None = None
    bounding: str | None = None  # setpriv's list, e.g. "-all,+net_bind_service"
    no_new_privs: bool = False
    home: str | None = None  # the user's home directory, for HOME when the pod does not set it

    @property
    def owner(self) -> tuple[int, int] | None:
        """Who must own the pod's scratch directory, when the container runs as someone else than kjobs."""
        if self.uid is None and self.gid is None:
            return None
        return (os.geteuid() if self.uid is None else self.uid, os.getegid() if self.gid is None else self.gid)

    def argv(self, setpriv: str) -> list[str]:
        """The `setpriv` command line that starts the container's command with this identity."""
        argv = [setpriv]
        if self.gid is not None:
            argv.append(f"--regid={self.gid}")
        if self.uid is not None:
            argv.append(f"--reuid={self.uid}")
        if self.groups is not None:
            argv.append(f"--groups={','.join(map(str, self.groups))}" if self.groups else "--clear-groups")
        if self.bounding is not None:
            argv += [f"--bounding-set={self.bounding}", "--inh-caps=-all"]
        if self.no_new_privs:
            argv.append("--no-new-privs")
        argv.append("--")
        return argv


def effective(pod: Obj, container: Obj) -> Obj:
    """The container's effective securityContext: the pod's inheritable fields, overridden by the container's."""
    pod_context = (pod.get("spec") or {}).get("securityContext") or {}
    merged: Obj = {key: pod_context[key] for key in (*_POD_FIELDS, "appArmorProfile") if key in pod_context}
    merged.update(container.get("securityContext") or {})
    return merged


def has_security_context(pod: Obj, container: Obj) -> bool:
    """Whether anything in the pod's or the container's securityContext may change how the container starts
    (the fast check: a pod without one starts as it always did)."""
    return bool(container.get("securityContext") or (pod.get("spec") or {}).get("securityContext"))


def pod_description(pod: Obj) -> str:
    """The kubelet's `format.Pod`: name_namespace(uid)."""
    meta = pod.get("metadata") or {}
    return f"{meta.get('name', '')}_{meta.get('namespace', '')}({meta.get('uid', '')})"


def run_as(pod: Obj, container: Obj) -> RunAs | None:
    """How to start `container`, or None to start it as kjobs runs; raises `ConfigError` when it must not start."""
    if not has_security_context(pod, container):
        return None
    context = effective(pod, container)
    pod_context = (pod.get("spec") or {}).get("securityContext") or {}
    euid, egid = os.geteuid(), os.getegid()
    uid, gid = _int(context.get("runAsUser")), _int(context.get("runAsGroup"))
    name = str(container.get("name", ""))
    _verify_run_as_non_root(pod, name, context, euid)
    if euid != 0:
        for field, wanted, own in (("runAsUser", uid, euid), ("runAsGroup", gid, egid)):
            if wanted is not None and wanted != own:
                raise ConfigError(
                    f"container's {field} {wanted} cannot be honoured: kjobs runs as uid {euid} gid {egid} and can "
                    f"start containers only as itself (run kjobs as root to run containers as other users) "
                    f"(pod: {_quote(pod_description(pod))}, container: {name})"
                )
        uid = gid = None
    home = None
    if uid is not None and uid != euid:
        entry = _passwd(uid)
        home = entry.pw_dir if entry is not None else "/"
        if gid is None:  # containerd: the user's primary group from the passwd file, else 0
            gid = entry.pw_gid if entry is not None else 0
    groups: tuple[int, ...] | None = None
    extra = [_int(g) for g in pod_context.get("supplementalGroups") or []]
    fs_group = _int(pod_context.get("fsGroup"))
    if euid == 0 and (uid is not None or gid is not None or extra or fs_group is not None):
        # The kubelet's order: the primary group, then fsGroup, then supplementalGroups.
        ordered = [gid if gid is not None else egid, fs_group, *extra]
        groups = tuple(dict.fromkeys(g for g in ordered if g is not None))
    bounding = _bounding_set(context.get("capabilities")) if euid == 0 else None
    no_new_privs = context.get("allowPrivilegeEscalation") is False
    if uid is None and gid is None and groups is None and bounding is None and not no_new_privs:
        return None
    return RunAs(uid=uid, gid=gid, groups=groups, bounding=bounding, no_new_privs=no_new_privs, home=home)


def unenforced(pod: Obj) -> list[str]:
    """The securityContext fields of `pod` that the process runtime does not honour, as field paths."""
    spec = pod.get("spec") or {}
    root: bool | None = None  # asked of the kernel only for a pod with a securityContext (most have none)
    found: list[str] = []
    pod_context = spec.get("securityContext") or {}
    if pod_context:
        root = os.geteuid() == 0
        found += [f"spec.securityContext.{key}" for key in _pod_unenforced(pod_context, root)]
    for kind in ("initContainers", "containers"):
        for i, container in enumerate(spec.get(kind) or []):
            context = container.get("securityContext") or {}
            if context:
                if root is None:
                    root = os.geteuid() == 0
                found += [f"spec.{kind}[{i}].securityContext.{key}" for key in _container_unenforced(context, root)]
    return found


def unenforced_message(fields: list[str]) -> str:
    """The Warning event's message for the fields `unenforced` found."""
    return (
        "kjobs runs containers as host processes and does not enforce "
        + ", ".join(fields)
        + "; the containers start without them"
    )


def setpriv_path() -> str | None:
    """Where util-linux's `setpriv` is (needed only by containers with a securityContext)."""
    return shutil.which("setpriv", path=os.defpath + ":/usr/sbin:/sbin")


# -- details ------------------------------------------------------------------------------------------------
def _verify_run_as_non_root(pod: Obj, name: str, context: Obj, euid: int) -> None:
    """Kubernetes' `verifyRunAsNonRoot`, the image's user being the one kjobs runs as."""
    if context.get("runAsNonRoot") is not True:
        return
    where = f"(pod: {_quote(pod_description(pod))}, container: {name})"
    uid = _int(context.get("runAsUser"))
    if uid is not None:
        if uid == 0:
            raise ConfigError(f"container's runAsUser breaks non-root policy {where}")
        return
    if euid == 0:
        raise ConfigError(f"container has runAsNonRoot and image will run as root {where}")


def _bounding_set(capabilities: object) -> str | None:
    """setpriv's bounding-set list for a `capabilities` field, or None when it changes nothing."""
    if not isinstance(capabilities, dict):
        return None
    drop = [_capability(c, "drop") for c in capabilities.get("drop") or []]
    add = [_capability(c, "add") for c in capabilities.get("add") or []]
    if not drop and not add:
        return None
    if "all" in add:
        return "+all"
    if "all" in drop:
        return ",".join(["-all", *(f"+{c}" for c in add)])
    keep = [f"-{c}" for c in drop if c not in add]
    return ",".join(["+all", *keep])


def _capability(value: object, verb: str) -> str:
    name = str(value).lower().removeprefix("cap_")
    if name != "all" and name not in CAPABILITIES:
        raise ConfigError(f'unknown capability "{value}" to {verb}')
    return name


def _pod_unenforced(context: Obj, root: bool) -> list[str]:
    found = _common_unenforced(context)
    if context.get("fsGroup") is not None:
        found.append("fsGroup")  # a supplemental group, as for the kubelet; there are no volumes to chown
    if context.get("sysctls"):
        found.append("sysctls")
    if not root and context.get("supplementalGroups"):
        found.append("supplementalGroups")
    return found


def _container_unenforced(context: Obj, root: bool) -> list[str]:
    found = _common_unenforced(context)
    if context.get("readOnlyRootFilesystem") is True:
        found.append("readOnlyRootFilesystem")
    if context.get("privileged") is True and not root:
        found.append("privileged")  # as root, a container has every capability and device already
    if context.get("procMount") not in (None, "Default"):
        found.append("procMount")
    capabilities = context.get("capabilities") or {}
    if not root and (capabilities.get("add") or capabilities.get("drop")):
        found.append("capabilities")  # changing the bounding set needs CAP_SETPCAP
    return found


def _common_unenforced(context: Obj) -> list[str]:
    found = [key for key in ("seLinuxOptions", "windowsOptions") if context.get(key)]
    for key in ("seccompProfile", "appArmorProfile"):
        profile = context.get(key)
        if isinstance(profile, dict) and profile.get("type") not in (None, "Unconfined"):
            found.append(key)
    return found


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _passwd(uid: int) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwuid(uid)
    except KeyError:
        return None


def _quote(text: str) -> str:
    """Go's %q for the texts the kubelet quotes (pod descriptions: no characters that need escaping)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
