"""Recursive read-only mounts (KEP-3857, feature gate `RecursiveReadOnlyMounts`, on since 1.31): what a
volumeMount's `recursiveReadOnly` resolves to, the `volumeMounts` a container status lists, and the runtime
handlers a Node reports.

Design note: pure. A runtime handler either can make a mount read-only together with every mount below it
(runc's `rro` option, `mount_setattr(2)` with `AT_RECURSIVE`; in kjobs `kjobs.node.mountns`, where a mount
namespace can be made and the kernel has `mount_setattr`, Linux 5.12) or cannot; the Node says which in
`status.runtimeHandlers[].features.recursiveReadOnlyMounts` (pkg/kubelet/nodestatus/setters.go
`RuntimeHandlers`; kjobs has the default handler `""` only, and no user namespaces for pods). Per mount
(pkg/kubelet/kubelet_pods.go `resolveRecursiveReadOnly`): unset or `Disabled` is today's read-only mount, whose
sub-mounts stay writable; `IfPossible` is recursive where the handler supports it; `Enabled` is recursive, or
the container is not created (`makeMounts`: `CreateContainerConfigError`, "failed to resolve recursive
read-only mode: volume "NAME" requested recursive read-only mode, but it is not supported by the runtime").
Every container status lists the spec's mounts (`convertToAPIContainerStatuses`, whatever the volume or the
container's state): name, mountPath, readOnly as the spec says it (a configMap mounted without `readOnly` is
read-only on the node but `false` here), and for a read-only one `recursiveReadOnly` `Enabled` or `Disabled`.
"""

from __future__ import annotations

from kjobs.api.types import Obj
from kjobs.node.envvars import ConfigError

ENABLED, IF_POSSIBLE, DISABLED = "Enabled", "IfPossible", "Disabled"
_PREFIX = "failed to resolve recursive read-only mode: "


def resolve(mount: Obj, supported: bool) -> tuple[bool, str]:
    """Whether the mount is made recursively read-only, and the kubelet's error when it cannot be resolved (then
    it is not): the handler's `supported`, the mount's `recursiveReadOnly`, `readOnly` and `mountPropagation`."""
    mode = mount.get("recursiveReadOnly")
    name = mount.get("name", "")
    if mode is None or mode == DISABLED:
        return False, ""
    if mount.get("readOnly") is not True:
        return False, f'volume "{name}" requested recursive read-only mode, but it is not read-only'
    propagation = mount.get("mountPropagation")
    if propagation is not None and propagation != "None":
        return False, (
            f'volume "{name}" requested recursive read-only mode, but it is not compatible with propagation '
            f'"{propagation}"'
        )
    if mode == IF_POSSIBLE:
        return supported, ""
    if mode == ENABLED:
        if not supported:
            return False, f'volume "{name}" requested recursive read-only mode, but it is not supported by the runtime'
        return True, ""
    return False, f'unknown recursive read-only mode "{mode}"'


def recursive(mount: Obj, supported: bool) -> bool:
    """`resolve` at a container's creation: a mount that cannot be resolved fails it (`ConfigError`, shown as
    `CreateContainerConfigError` with the kubelet's message)."""
    result, error = resolve(mount, supported)
    if error:
        raise ConfigError(_PREFIX + error)
    return result


def check_container(container: Obj, supported: bool) -> None:
    """`recursive` for each of the container's mounts in order: for a runtime that makes none of them (no mount
    namespace here), so an `Enabled` mount still fails the container as a runtime without support does."""
    for mount in container.get("volumeMounts") or ():
        if isinstance(mount, dict):
            recursive(mount, supported)


def depends_on_support(pod: Obj) -> bool:
    """Whether a mount of the pod resolves differently with and without support (`Enabled` or `IfPossible` on a
    read-only mount): only then need a runtime find out whether it has it."""
    spec = pod.get("spec") or {}
    for group in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(group) or ():
            for mount in container.get("volumeMounts") or ():
                if mount.get("readOnly") is True and mount.get("recursiveReadOnly") in (ENABLED, IF_POSSIBLE):
                    return True
    return False


def mount_statuses(container: Obj, supported: bool) -> list[Obj]:
    """The container status's `volumeMounts`: one per spec mount, in order; an unresolvable read-only one is
    `Disabled` (the kubelet logs its error there, and fails the container's creation)."""
    statuses: list[Obj] = []
    for mount in container.get("volumeMounts") or ():
        status: Obj = {"name": mount.get("name", ""), "mountPath": mount.get("mountPath", "")}
        if mount.get("readOnly") is True:
            status["readOnly"] = True
            status["recursiveReadOnly"] = ENABLED if resolve(mount, supported)[0] else DISABLED
        statuses.append(status)
    return statuses


def runtime_handlers(recursive_read_only: bool) -> list[Obj]:
    """The Node's `status.runtimeHandlers`: the default handler (`name: ""`) and what it supports; pods in user
    namespaces (`hostUsers: false`) kjobs does not run."""
    return [{"name": "", "features": {"recursiveReadOnlyMounts": recursive_read_only, "userNamespaces": False}}]
