"""A pod's volumes made on the node, as the kubelet's volume plugins set them up, and each container's mount plan.

Design note: the kubelet sets up every volume of a pod before it starts any of its containers
(pkg/kubelet/kubelet.go `SyncPod` → volumemanager `WaitForAttachAndMount`), each under
`/var/lib/kubelet/pods/<uid>/volumes/<plugin>/<name>`; here `<pod_dir>/volumes/kubernetes.io~<plugin>/<name>`.
- `emptyDir` (pkg/volume/emptydir/empty_dir.go): a directory, mode 0777; `medium: Memory` is a plain directory too
  (a node's root is RAM-backed where it can be, `process_runtime.default_root_dir`), `sizeLimit` is not enforced.
- `configMap`, `secret`, `downwardAPI`, `projected` (pkg/volume/configmap/configmap.go, secret/secret.go,
  downwardapi/downwardapi.go, projected/projected.go): their payload (`items` key→path, `mode` over
  `defaultMode`, 0644 when neither is set — `ConfigMapVolumeSourceDefaultMode`, `SecretVolumeSourceDefaultMode`,
  `DownwardAPIVolumeSourceDefaultMode`, `ProjectedVolumeSourceDefaultMode` are all 0644) written as
  pkg/volume/util/atomic_writer.go writes it: a `..<UTC timestamp>.<random>` directory holding the files, a
  `..data` symlink to it, and each top-level path a symlink `path -> ..data/path`. They are mounted read-only
  (the kubelet has mounted these read-only since 1.10). A missing object that is not `optional` fails the
  set-up with the watch-based cache's NotFound text (`configmap "X" not found`), a missing `items` key with the
  plugin's own text; the pod waits (ContainerCreating) and the set-up is retried.
- `hostPath` (pkg/volume/hostpath/host_path.go): the host path itself after the `type` check (`checkType`,
  `typeMatchedOrError`: DirectoryOrCreate makes it 0755, FileOrCreate makes an empty 0644 file).
- `persistentVolumeClaim`: the directory of the PersistentVolume bound to the claim (`kjobs.storage.host_path`:
  a `hostPath` or `local` volume, as kjobs' local-path provisioner makes them), which the node agent hands over
  with the ConfigMaps and Secrets as `(CLAIM, claimName)` → the PersistentVolume; read-only when the volume
  source or the mount says so. The agent starts no pod before its claims are Bound.
A failure is the kubelet's `FailedMount` event text: `MountVolume.SetUp failed for volume "NAME" : <error>`
(pkg/volume/util/operationexecutor `GenerateError`). A running pod's API-data volumes are written again at each
of the node agent's remounts (`remount`: its periodic resync and pod updates, as the kubelet's volume manager
remounts the volumes whose plugin `RequiresRemount`); the atomic writer writes only a payload that changed
(`shouldWritePayload`), so an unchanged volume keeps its `..data` (docs/volumes.md).

`container_mounts` turns a container's `volumeMounts` into (host source, mountPath, readOnly) binds, `subPath`
and `subPathExpr` resolved as pkg/kubelet/kubelet_pods.go `makeMounts` does (a missing subPath directory is
made in the volume, which must not be left by `..` or a symlink), for `kjobs.node.mountns` to bind.
"""

from __future__ import annotations

import base64
import binascii
import os
import random
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kjobs.api.storage import host_path
from kjobs.api.token_requests import VOLUME_PREFIX, is_api_access_volume
from kjobs.api.types import Obj
from kjobs.node.envvars import CONFIG_MAP, SECRET, ConfigError, EnvSources, expand, field_ref_value
from kjobs.node.envvars import _resource_field as resource_field  # the env var's rule, divisor and rounding
from kjobs.node.recursive_read_only import recursive

FAILED_MOUNT = "FailedMount"
DEFAULT_MODE = 0o644
EMPTY_DIR_MODE = 0o777

PLUGINS = {
    "emptyDir": "kubernetes.io~empty-dir",
    "configMap": "kubernetes.io~configmap",
    "secret": "kubernetes.io~secret",
    "downwardAPI": "kubernetes.io~downward-api",
    "projected": "kubernetes.io~projected",
}
"""Volume source field -> the kubelet plugin directory its volumes live in."""

CLAIM = "PersistentVolumeClaim"
"""The `EnvSources` kind under which the agent gives a claim's bound PersistentVolume (None: not bound)."""

TOKEN = "ServiceAccountToken"
"""The `EnvSources` kind under which the agent gives the token of a `serviceAccountToken` projection, keyed
`VOLUME/PATH`: `{"token": ...}`, or `{"error": ...}` when the TokenRequest failed (the kubelet's token manager,
pkg/kubelet/token). No entry: no API server is reachable by this node's pods, so no token is made."""

TMPFS_ROOT_MODE = 0o1777
"""A fresh tmpfs's root (`drwxrwxrwt`): what a `medium: Memory` emptyDir is, as the kubelet mounts it with no
`mode=` option (empty_dir.go `setupTmpfs`)."""

WRAPPER_MODES = {"configMap": 0o777, "secret": 0o1777, "downwardAPI": 0o1777, "projected": 0o1777}
"""The mode of the directory each API-data volume is mounted from. The kubelet sets them up inside an emptyDir
(each plugin's `wrappedVolumeSpec`): a configMap's on disk, made 0777 (empty_dir.go `setupDir`); a secret's,
downwardAPI's and projected's with `medium: Memory`, a fresh tmpfs whose root is 1777 (`drwxrwxrwt`). kjobs
writes all four to disk and gives the directory the mode a container would see there."""

API_DATA = frozenset(("configMap", "secret", "downwardAPI", "projected"))
"""Sources written by the atomic writer and mounted read-only."""

DATA_DIR = "..data"


class MountFailed(Exception):
    """A volume could not be set up: the message is the FailedMount event's."""


@dataclass(frozen=True)
class Bind:
    """One bind a container's mount namespace gets: host `source` at `target`, read-only or not."""

    source: str
    target: str
    read_only: bool
    within: str = ""
    """For a subPath: the volume's directory (symlinks resolved), which `kjobs.node.mountns` walks down to `source`
    without following a symlink, binding what it opened (the kubelet's `doSafeOpen`): a container that swaps a
    directory of its volume for a symlink between this check and the bind reaches nothing outside it."""
    recursive_read_only: bool = False
    """Read-only with every mount below it too (`kjobs.node.recursive_read_only`); else only the top mount is."""


def mounting_containers(pod: Obj, api_access: bool = False) -> bool:
    """Whether any container of the pod has `volumeMounts` (found without allocating). Without `api_access` (no
    API server this node's pods can reach) the ServiceAccount admission plugin's `kube-api-access-*` mount does
    not count: that volume is not mounted, so a pod with nothing else to mount starts without a mount namespace."""
    spec = pod.get("spec") or {}
    for group in ("initContainers", "containers"):
        for container in spec.get(group) or ():
            if has_mounts(container, api_access):
                return True
    return False


def has_mounts(container: Obj, api_access: bool) -> bool:
    """Whether the container mounts a volume kjobs sets up (see `mounting_containers`)."""
    mounts = container.get("volumeMounts")
    if not mounts:
        return False
    if api_access:
        return True
    return any(not str(m.get("name") or "").startswith(VOLUME_PREFIX) for m in mounts if isinstance(m, dict))


def api_data_volumes(pod: Obj) -> bool:
    """Whether the pod has a configMap, secret, downwardAPI or projected volume (one a remount may rewrite)."""
    return any(source_of(v) in API_DATA for v in (pod.get("spec") or {}).get("volumes") or () if isinstance(v, dict))


def token_keys(pod: Obj) -> list[tuple[str, Obj]]:
    """The `VOLUME/PATH` key and the projection of every `serviceAccountToken` projection of the pod's volumes."""
    found: list[tuple[str, Obj]] = []
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        for projection in (volume.get("projected") or {}).get("sources") or ():
            token = projection.get("serviceAccountToken")
            if isinstance(token, dict):
                found.append((f"{volume.get('name', '')}/{token.get('path', '')}", token))
    return found


def _skipped(volume: Obj, sources: EnvSources | None) -> bool:
    """Whether the volume is the `kube-api-access-*` one and this node makes no tokens (no API to reach)."""
    if not is_api_access_volume(volume):
        return False
    name = volume.get("name", "")
    for projection in volume["projected"].get("sources") or ():
        token = projection.get("serviceAccountToken")
        if isinstance(token, dict):
            return sources is None or (TOKEN, f"{name}/{token.get('path', '')}") not in sources
    return False


def source_of(volume: Obj) -> str | None:
    """The volume's source field when kjobs sets it up (`emptyDir`, `hostPath`, `configMap`, ...), else None."""
    for key in ("emptyDir", "hostPath", "configMap", "secret", "downwardAPI", "projected", "persistentVolumeClaim"):
        if volume.get(key) is not None:
            return key
    return None


def volume_references(pod: Obj, api_access: bool = False) -> frozenset[tuple[str, str]]:
    """The ConfigMaps and Secrets the pod's configMap, secret and projected volumes read, as
    `envvars.env_references` names them (so one set of watches serves both); without `api_access` not the
    `kube-api-access-*` volume's `kube-root-ca.crt`, since that volume is not set up."""
    found: set[tuple[str, str]] = set()
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        if not api_access and is_api_access_volume(volume):
            continue
        if volume.get("configMap") is not None:
            found.add((CONFIG_MAP, str(volume["configMap"].get("name") or "")))
        if volume.get("secret") is not None:
            found.add((SECRET, str(volume["secret"].get("secretName") or "")))
        for projection in (volume.get("projected") or {}).get("sources") or ():
            if projection.get("configMap") is not None:
                found.add((CONFIG_MAP, str(projection["configMap"].get("name") or "")))
            if projection.get("secret") is not None:
                found.add((SECRET, str(projection["secret"].get("name") or "")))
    return frozenset(found)


def unsupported(pod: Obj, api_access: bool = False) -> list[str]:
    """What a mounting runtime leaves out of the pod's containers, for the `VolumesNotMounted` warning: volume
    types it does not set up (CSI, image, ...), `volumeDevices`, `clusterTrustBundle` projections, and, without
    `api_access`, `serviceAccountToken` projections (but the `kube-api-access-*` volume's, left out silently)."""
    spec = pod.get("spec") or {}
    volumes = {v.get("name"): v for v in spec.get("volumes") or () if isinstance(v, dict)}
    found: list[str] = []
    for group in ("initContainers", "containers"):
        for container in spec.get(group) or ():
            where = f"(container {container.get('name', '')})"
            for mount in container.get("volumeMounts") or ():
                volume = volumes.get(mount.get("name")) or {}
                kind = source_of(volume)
                path = mount.get("mountPath", "")
                if kind is None:
                    other = next((k for k in volume if k != "name"), "unknown")
                    found.append(f'{other} volume "{mount.get("name", "")}" at {path} {where}')
                if not api_access and is_api_access_volume(volume):
                    continue
                projections = ("clusterTrustBundle",) if api_access else ("serviceAccountToken", "clusterTrustBundle")
                for projection in (volume.get("projected") or {}).get("sources") or ():
                    for token in projections:
                        if projection.get(token) is not None:
                            found.append(f'{token} projection of volume "{volume.get("name", "")}" at {path} {where}')
            for device in container.get("volumeDevices") or ():
                found.append(f'volumeDevice "{device.get("name", "")}" at {device.get("devicePath", "")} {where}')
    return found


def unsupported_message(found: list[str]) -> str:
    """The `VolumesNotMounted` Warning's message for what a mounting runtime leaves out."""
    return (
        "kjobs mounts emptyDir, hostPath, configMap, secret, downwardAPI, projected and persistentVolumeClaim "
        "volumes only, and issues service account tokens only to pods that can reach its API server (kjobs up): "
        + ", ".join(found)
        + " not mounted; the containers start without them"
    )


def volume_dir(pod_dir: Path, volume: Obj, sources: EnvSources | None = None) -> Path:
    """Where a volume's contents live on this machine (a hostPath: the host path itself; a claim: its bound
    volume's directory). `ConfigError` for a claim whose volume has no directory here."""
    kind = source_of(volume)
    if kind == "hostPath":  # a relative path names what `check_host_path` checked: from the agent's directory
        return Path(str(volume["hostPath"].get("path") or "")).absolute()
    if kind == "persistentVolumeClaim":
        return claim_dir(volume, sources)
    return pod_dir / "volumes" / PLUGINS.get(kind or "", "kubernetes.io~unsupported") / str(volume.get("name", ""))


def claim_dir(volume: Obj, sources: EnvSources | None) -> Path:
    """The host directory of the PersistentVolume bound to the volume's claim; `ConfigError` (the FailedMount
    text) when the claim is not bound yet or its volume is not one kjobs can mount."""
    claim = str(volume["persistentVolumeClaim"].get("claimName") or "")
    pv = sources.get((CLAIM, claim)) if sources is not None else None
    if pv is None:
        raise ConfigError(f'persistentvolumeclaim "{claim}" is not bound')
    path = host_path(pv)
    if path is None:
        name = (pv.get("metadata") or {}).get("name", "")
        raise ConfigError(f'kjobs mounts hostPath and local PersistentVolumes only, and "{name}" is neither')
    return Path(path)


# -- payloads ---------------------------------------------------------------------------------------------------

Payload = dict[str, tuple[bytes, int]]
"""Relative path -> (content, mode)."""

Lookup = Callable[[str, str], Obj | None]
"""(kind, name) -> the ConfigMap or Secret as the watches see it, None when it does not exist."""


def _not_found(kind: str, name: str) -> str:
    return f'{kind} "{name}" not found'


def _object_data(kind: str, obj: Obj) -> dict[str, bytes]:
    """A ConfigMap's data and binaryData, or a Secret's data, as bytes."""
    out: dict[str, bytes] = {}
    if kind == CONFIG_MAP:
        for key, value in (obj.get("data") or {}).items():
            out[str(key)] = str(value).encode()
    encoded = obj.get("binaryData") if kind == CONFIG_MAP else obj.get("data")
    for key, value in (encoded or {}).items():
        try:
            out[str(key)] = base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError):
            out[str(key)] = b""
    return out


def _mode(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 0o777 else default


def _keyed_payload(kind: str, obj: Obj | None, items: list[Obj] | None, default_mode: int, optional: bool) -> Payload:
    """configmap.go / secret.go `MakePayload`: every key, or just `items` (a missing key fails unless optional)."""
    if obj is None:
        return {}
    data = _object_data(kind, obj)
    payload: Payload = {}
    if not items:
        for key, content in data.items():
            payload[key] = (content, default_mode)
        return payload
    for item in items:
        key = str(item.get("key") or "")
        if key not in data:
            if optional:
                continue
            if kind == CONFIG_MAP:
                raise ConfigError(f"configmap references non-existent config key: {key}")
            raise ConfigError(f"references non-existent secret key: {key}")
        payload[str(item.get("path") or key)] = (data[key], _mode(item.get("mode"), default_mode))
    return payload


def _downward_payload(pod: Obj, items: list[Obj], default_mode: int, *, host_ip: str, pod_ip: str) -> Payload:
    """downwardapi.go `CollectData`: each item's fieldRef or resourceFieldRef value."""
    payload: Payload = {}
    errors: list[str] = []
    containers = {c.get("name"): c for c in (pod.get("spec") or {}).get("containers") or ()}
    for item in items:
        path = str(item.get("path") or "")
        mode = _mode(item.get("mode"), default_mode)
        try:
            field_ref = item.get("fieldRef")
            resource_ref = item.get("resourceFieldRef")
            if field_ref is not None:
                value = field_ref_value(pod, str(field_ref.get("fieldPath") or ""), host_ip=host_ip, pod_ip=pod_ip)
            elif resource_ref is not None:
                container = containers.get(resource_ref.get("containerName"))
                if container is None:
                    raise ConfigError(f"container {resource_ref.get('containerName', '')} not found")
                value = resource_field(container, resource_ref)
            else:
                continue
        except ConfigError as exc:
            errors.append(str(exc))
            continue
        payload[path] = (value.encode(), mode)
    if errors:
        raise ConfigError(_aggregate(errors))
    return payload


def _aggregate(errors: list[str]) -> str:
    """k8s.io/apimachinery/pkg/util/errors `Aggregate.Error`: one error as itself, several in brackets."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def _token_payload(volume: Obj, token: Obj, lookup: Lookup, mode: int) -> Payload:
    """A `serviceAccountToken` projection's file: the token the agent requested (projected.go
    `collectData`'s `GetServiceAccountToken`), at the projection's `mode` or the volume's default; nothing when
    no token was made (no API server reachable: the `VolumesNotMounted` warning names it)."""
    path = str(token.get("path") or "")
    found = lookup(TOKEN, f"{volume.get('name', '')}/{path}")
    if found is None:
        return {}
    if found.get("error"):
        raise ConfigError(f"failed to fetch token: {found['error']}")
    return {path: (str(found.get("token") or "").encode(), mode)}


def payload(pod: Obj, volume: Obj, lookup: Lookup, *, host_ip: str, pod_ip: str) -> Payload:
    """The files of a configMap, secret, downwardAPI or projected volume; `ConfigError` with the set-up's error."""
    if volume.get("configMap") is not None:
        source = volume["configMap"]
        name, optional = str(source.get("name") or ""), source.get("optional") is True
        obj = lookup(CONFIG_MAP, name)
        if obj is None and not optional:
            raise ConfigError(_not_found("configmap", name))
        mode = _mode(source.get("defaultMode"), DEFAULT_MODE)
        return _keyed_payload(CONFIG_MAP, obj, source.get("items"), mode, optional)
    if volume.get("secret") is not None:
        source = volume["secret"]
        name, optional = str(source.get("secretName") or ""), source.get("optional") is True
        obj = lookup(SECRET, name)
        if obj is None and not optional:
            raise ConfigError(_not_found("secret", name))
        mode = _mode(source.get("defaultMode"), DEFAULT_MODE)
        return _keyed_payload(SECRET, obj, source.get("items"), mode, optional)
    if volume.get("downwardAPI") is not None:
        source = volume["downwardAPI"]
        mode = _mode(source.get("defaultMode"), DEFAULT_MODE)
        return _downward_payload(pod, source.get("items") or [], mode, host_ip=host_ip, pod_ip=pod_ip)
    source = volume.get("projected") or {}
    mode = _mode(source.get("defaultMode"), DEFAULT_MODE)
    merged: Payload = {}
    errors: list[str] = []
    for projection in source.get("sources") or ():
        try:
            if projection.get("configMap") is not None or projection.get("secret") is not None:
                kind = CONFIG_MAP if projection.get("configMap") is not None else SECRET
                ref = projection["configMap"] if kind == CONFIG_MAP else projection["secret"]
                name, optional = str(ref.get("name") or ""), ref.get("optional") is True
                obj = lookup(kind, name)
                if obj is None and not optional:
                    raise ConfigError(_not_found("configmap" if kind == CONFIG_MAP else "secret", name))
                merged.update(_keyed_payload(kind, obj, ref.get("items"), mode, optional))
            elif projection.get("downwardAPI") is not None:
                items = projection["downwardAPI"].get("items") or []
                merged.update(_downward_payload(pod, items, mode, host_ip=host_ip, pod_ip=pod_ip))
            elif isinstance(projection.get("serviceAccountToken"), dict):
                merged.update(_token_payload(volume, projection["serviceAccountToken"], lookup, mode))
        except ConfigError as exc:
            errors.append(str(exc))
    if errors:
        raise ConfigError(_aggregate(errors))
    return merged


def _timestamp_dir(target: Path) -> Path:
    """atomic_writer.go `newTimestampDir`: `..2006_01_02_15_04_05.<random>`, mode 0755."""
    stamp = time.strftime("..%Y_%m_%d_%H_%M_%S.", time.gmtime())
    while True:
        path = target / f"{stamp}{random.randrange(10**9)}"
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        path.chmod(0o755)
        return path


def _unchanged(target: Path, files: Payload) -> bool:
    """atomic_writer.go `shouldWritePayload` and `pathsToRemove`: the `..data` in place holds exactly the
    payload's paths with the payload's contents (modes are not compared, as upstream compares bytes only)."""
    data = target / DATA_DIR
    if not data.is_symlink():
        return False
    found: set[str] = set()
    for root, _dirs, names in os.walk(data):
        for name in names:
            found.add(os.path.relpath(os.path.join(root, name), data))
    if found != {os.path.normpath(rel) for rel in files}:
        return False
    for rel, (content, _mode) in files.items():
        try:
            with open(data / rel, "rb") as current:
                if current.read(len(content) + 1) != content:
                    return False
        except OSError:
            return False
    return all((target / Path(rel).parts[0]).is_symlink() for rel in files)


def write_atomic(target: Path, files: Payload) -> bool:
    """Write `files` into `target` as the kubelet's atomic writer does (see the module note): the payload in a
    new timestamped directory, `..data` swapped to it by a rename, a `path -> ..data/path` symlink per top-level
    path, and what an earlier payload had and this one has not removed. A payload the volume holds already is
    not written again (`shouldWritePayload`): False."""
    target.mkdir(parents=True, exist_ok=True)
    for rel in files:
        parts = Path(rel).parts
        if Path(rel).is_absolute() or ".." in parts or not parts or parts[0].startswith(".."):
            raise ConfigError(f"invalid path {rel!r}")
    if _unchanged(target, files):
        return False
    previous = os.readlink(target / DATA_DIR) if (target / DATA_DIR).is_symlink() else None
    ts_dir = _timestamp_dir(target)
    for rel, (content, mode) in files.items():
        path = ts_dir / rel
        path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        with open(path, "wb") as out:
            out.write(content)
        os.chmod(path, mode)
    tmp_link = target / "..data_tmp"
    tmp_link.unlink(missing_ok=True)
    os.symlink(ts_dir.name, tmp_link)
    os.rename(tmp_link, target / DATA_DIR)
    wanted = {Path(rel).parts[0] for rel in files}
    for name in os.listdir(target):
        if name.startswith(".."):
            continue
        if name not in wanted and (target / name).is_symlink():
            (target / name).unlink()
    for name in sorted(wanted):
        link = target / name
        if not link.is_symlink():
            os.symlink(f"{DATA_DIR}/{name}", link)
    # not a symlink: one a container put there would have its target's files removed
    if previous and previous != ts_dir.name and previous.startswith("..") and "/" not in previous:
        old = target / previous
        if not old.is_symlink():
            _remove_tree(old)
    return True


def _remove_tree(path: Path) -> None:
    for root, dirs, files in os.walk(path, topdown=False):
        for name in files:
            os.unlink(os.path.join(root, name))
        for name in dirs:
            os.rmdir(os.path.join(root, name))
    os.rmdir(path)


# -- hostPath -------------------------------------------------------------------------------------------------

_FILE_TYPES = (
    (stat.S_ISDIR, "Directory"),
    (stat.S_ISREG, "File"),
    (stat.S_ISSOCK, "Socket"),
    (stat.S_ISCHR, "CharDevice"),
    (stat.S_ISBLK, "BlockDevice"),
)
_EXPECTED = {
    "Directory": "directory",
    "File": "file",
    "Socket": "socket file",
    "CharDevice": "character device",
    "BlockDevice": "block device",
}


def _file_type(path: str) -> str:
    """pkg/volume/util/hostutil `GetFileType` (follows symlinks, as `os.Stat` does)."""
    mode = os.stat(path).st_mode
    for test, name in _FILE_TYPES:
        if test(mode):
            return name
    raise ConfigError(f"only recognise file, directory, socket, block device and character device: {path}")


def check_host_path(path: str, path_type: str) -> None:
    """host_path.go `checkType`; `ConfigError` with upstream's text when the path is not of the type."""
    if ".." in Path(path).parts:
        raise ConfigError(f"invalid HostPath `{path}`: must not contain '..'")
    if not path_type:
        return
    exists = os.path.exists(path)
    if path_type == "DirectoryOrCreate":
        if not exists:
            try:
                os.makedirs(path, mode=0o755, exist_ok=True)
            except OSError as exc:
                raise ConfigError(f"mkdir {path}: {(exc.strerror or str(exc)).lower()}") from None
            return
        path_type = "Directory"
    elif path_type == "FileOrCreate":
        if not exists:
            try:
                os.close(os.open(path, os.O_CREAT | os.O_RDONLY, 0o644))
            except OSError as exc:
                raise ConfigError(f"open {path}: {(exc.strerror or str(exc)).lower()}") from None
            return
        path_type = "File"
    expected = _EXPECTED.get(path_type)
    if expected is None:
        raise ConfigError(f"{path_type} is an invalid volume type")
    if not os.path.exists(path):
        raise ConfigError(f"hostPath {path} doesn't exist")
    actual = _file_type(path)
    if actual != path_type:
        raise ConfigError(f"hostPath type check failed: {path} is not a {expected}, it's a {actual}")


# -- set-up -----------------------------------------------------------------------------------------------------


def set_up(
    pod: Obj, pod_dir: Path, sources: EnvSources | None, *, host_ip: str, pod_ip: str, remount: bool = False
) -> list[str]:
    """Set up every volume of the pod the runtime mounts; the FailedMount message of each that failed (empty when
    all are ready). Idempotent: a volume set up before is set up again (an API-data payload written only where it
    changed). `remount`: only the configMap, secret, downwardAPI and projected volumes, those whose kubelet plugin
    `RequiresRemount` (a running pod's periodic remount); one that fails keeps what it holds."""

    def lookup(kind: str, name: str) -> Obj | None:
        if sources is None:
            return None
        try:
            return sources[(kind, name)]
        except KeyError:
            return None

    failures: list[str] = []
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        kind = source_of(volume)
        if kind is None or _skipped(volume, sources) or (remount and kind not in API_DATA):
            continue
        name = str(volume.get("name") or "")
        try:
            if kind == "emptyDir":
                path = volume_dir(pod_dir, volume)
                if not path.is_dir():
                    path.mkdir(parents=True, exist_ok=True)
                    memory = (volume.get("emptyDir") or {}).get("medium") == "Memory"
                    path.chmod(TMPFS_ROOT_MODE if memory else EMPTY_DIR_MODE)
            elif kind == "hostPath":
                host = volume["hostPath"]
                check_host_path(str(host.get("path") or ""), str(host.get("type") or ""))
            elif kind == "persistentVolumeClaim":
                path = claim_dir(volume, sources)
                if not path.is_dir():
                    raise ConfigError(f"volume directory {str(path)!r} does not exist")
            else:
                files = payload(pod, volume, lookup, host_ip=host_ip, pod_ip=pod_ip)
                target = volume_dir(pod_dir, volume)
                write_atomic(target, files)
                target.chmod(WRAPPER_MODES[kind])
        except ConfigError as exc:
            failures.append(f'MountVolume.SetUp failed for volume "{name}" : {exc}')
        except OSError as exc:
            failures.append(f'MountVolume.SetUp failed for volume "{name}" : {exc.strerror or exc}')
    return failures


def container_mounts(
    pod: Obj,
    container: Obj,
    pod_dir: Path,
    env: Mapping[str, str],
    sources: EnvSources | None = None,
    *,
    recursive_read_only: bool = False,
) -> list[Bind]:
    """The binds of the container's `volumeMounts` whose volumes are set up here, shallowest mountPath first (as
    containerd orders them); `ConfigError` for a subPath that leaves its volume, or a `recursiveReadOnly` that
    cannot be had (`recursive_read_only`: whether the runtime supports it), each mount in turn as `makeMounts`."""
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or () if isinstance(v, dict)}
    binds: list[Bind] = []
    for mount in container.get("volumeMounts") or ():
        volume = volumes.get(mount.get("name"))
        kind = source_of(volume) if volume is not None else None
        if volume is None or kind is None or _skipped(volume, sources):
            recursive(mount, recursive_read_only)
            continue
        base = volume_dir(pod_dir, volume, sources)
        source = base
        sub = str(mount.get("subPath") or "")
        if not sub and mount.get("subPathExpr"):
            sub = expand(str(mount["subPathExpr"]), env.get)
        if sub:
            if Path(sub).is_absolute() or ".." in Path(sub).parts:
                raise ConfigError(f"subPath {sub!r} must be a relative path without '..'")
            source = base / sub
            real_base = os.path.realpath(base)
            for _ in ("before making it", "after"):  # nothing is made through a symlink that leaves the volume
                real = os.path.realpath(source)
                if real != real_base and not real.startswith(real_base + "/"):
                    raise ConfigError(f"subpath {real!r} not within volume path {real_base!r}")
                if not os.path.lexists(source):
                    os.makedirs(source, mode=stat.S_IMODE(os.stat(base).st_mode), exist_ok=True)
            source, within = Path(real), real_base
        else:
            within = ""
            if not os.path.exists(source):  # containerd's CRI makes a missing bind source a directory (parseMount)
                try:
                    os.makedirs(source, mode=0o755, exist_ok=True)
                except OSError as exc:
                    raise ConfigError(f'failed to mkdir "{source}": {exc.strerror or exc}') from None
        read_only = mount.get("readOnly") is True or kind in API_DATA
        if kind == "persistentVolumeClaim" and volume["persistentVolumeClaim"].get("readOnly") is True:
            read_only = True
        rro = recursive(mount, recursive_read_only)
        target = os.path.normpath(str(mount.get("mountPath") or "/"))
        binds.append(
            Bind(source=str(source), target=target, read_only=read_only, within=within, recursive_read_only=rro)
        )
    binds.sort(key=lambda b: len(Path(b.target).parts))
    return binds
