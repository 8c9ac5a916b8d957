"""Volumes whose contents a container would read at its `mountPath`, where no mount namespace can be made.

Design note: pure. Where this machine lets a process have its own mount namespace, the runtime mounts a pod's
volumes (`kjobs.node.volumesetup`, `kjobs.node.mountns`, docs/volumes.md) and this module is not used. Elsewhere
(or with `KJOBS_MOUNT_VOLUMES=0`) each container runs as a plain host process, so nothing is mounted:
a `configMap`, `secret`, `projected` or `downwardAPI` volume is not at its `mountPath`, and faking it (writing
files into a path on the host) would be neither isolated nor where the container looks. The container starts
anyway, as with the other things the runtime cannot do (`kjobs.node.security`), and the node agent says so in a
Warning event on the pod (kjobs' own reason: a kubelet mounts them). ConfigMaps and Secrets reach a process
through `env` and `envFrom` (`kjobs.node.envvars`). An `emptyDir` is named too: a container that writes to its
mountPath writes to this machine's directory of that name (or fails where there is none), not to a scratch
directory its pod shares (the container's working directory, the pod's own directory, is that); so is a
`hostPath` mounted at another path than its own (at its own path, the container sees just what it would).
The ServiceAccount admission plugin's `kube-api-access-*` volume is not named: nearly every pod has it, so the
warning would say nothing (docs/service-account-tokens.md says where in-cluster config needs mount namespaces).
"""

from __future__ import annotations

from kjobs.api.token_requests import is_api_access_volume
from kjobs.api.types import Obj

NOT_MOUNTED = "VolumesNotMounted"

_SOURCES = {"configMap": "ConfigMap", "secret": "Secret", "projected": "projected", "downwardAPI": "downwardAPI"}


def _describe(volume: Obj, mount_path: str) -> str | None:
    if volume.get("emptyDir") is not None:
        return f'emptyDir "{volume.get("name", "")}"'
    host = volume.get("hostPath")
    if host is not None:
        path = str(host.get("path") or "")
        same = path.rstrip("/") == mount_path.rstrip("/")
        return None if same else f'hostPath "{path}"'
    for key, what in _SOURCES.items():
        source = volume.get(key)
        if source is None:
            continue
        if key == "configMap":
            return f'ConfigMap "{source.get("name", "")}"'
        if key == "secret":
            return f'Secret "{source.get("secretName", "")}"'
        return f'{what} volume "{volume.get("name", "")}"'
    return None


def unmounted(pod: Obj) -> list[str]:
    """What the pod's containers would find at a mounted ConfigMap, Secret, projected, downwardAPI or emptyDir
    volume, or a hostPath mounted elsewhere: `ConfigMap "app" at /etc/app (container main)`, in spec order (empty
    for a pod without volumes)."""
    spec = pod.get("spec") or {}
    volumes = spec.get("volumes")
    if not volumes:
        return []
    sources = {v.get("name"): v for v in volumes if isinstance(v, dict)}
    found: list[str] = []
    for group in ("initContainers", "containers"):
        for container in spec.get(group) or ():
            for mount in container.get("volumeMounts") or ():
                volume = sources.get(mount.get("name"))
                if volume is None or is_api_access_volume(volume):  # the token volume is never worth a warning
                    continue
                what = _describe(volume, str(mount.get("mountPath", "")))
                if what is not None:
                    found.append(f"{what} at {mount.get('mountPath', '')} (container {container.get('name', '')})")
    return found


def unmounted_message(found: list[str]) -> str:
    """The Warning event's message for what `unmounted` found."""
    return (
        "kjobs runs containers as host processes and mounts no volumes: "
        + ", ".join(found)
        + " not mounted; the containers start without them (read ConfigMaps and Secrets through env or envFrom)"
    )
