"""A pod's volumes as the node agent sets them up (`kjobs.node.volumesetup`): the atomic writer's layout, items and
modes, the downward API's formatting, hostPath type checks and the kubelet's FailedMount texts."""

from __future__ import annotations

import base64
import os
import socket
import stat
from pathlib import Path

import pytest

from kjobs.api.types import Obj
from kjobs.node.envvars import CONFIG_MAP, SECRET, ConfigError
from kjobs.node.volumesetup import (
    CLAIM,
    Bind,
    check_host_path,
    container_mounts,
    set_up,
    unsupported,
    volume_references,
    write_atomic,
)
from tests.node.helpers import make_pod

SETTINGS: Obj = {"kind": "ConfigMap", "metadata": {"name": "app"}, "data": {"mode": "fast", "level": "3"}}
CREDENTIALS: Obj = {
    "kind": "Secret",
    "metadata": {"name": "creds"},
    "data": {"token": base64.b64encode(b"s3cr3t").decode()},
}


def pod_with(*volumes: Obj, mounts: list[Obj] | None = None, **meta: Obj) -> Obj:
    container = {"name": "main", "image": "busybox", "volumeMounts": mounts or []}
    pod = make_pod([container], volumes=list(volumes))
    pod["metadata"].update(meta)
    return pod


def set_up_one(tmp_path: Path, volume: Obj, sources: dict[tuple[str, str], Obj | None] | None = None) -> list[str]:
    return set_up(pod_with(volume), tmp_path, sources or {}, host_ip="10.0.0.1", pod_ip="10.0.0.2")


def listing(path: Path) -> dict[str, str]:
    """Entry -> what it is: `-> target` for a symlink, `dir`, or the file's mode and content."""
    out: dict[str, str] = {}
    for name in sorted(os.listdir(path)):
        entry = path / name
        if entry.is_symlink():
            out[name] = f"-> {os.readlink(entry)}"
        elif entry.is_dir():
            out[name] = "dir"
        else:
            out[name] = f"{stat.S_IMODE(entry.stat().st_mode):o} {entry.read_text()}"
    return out


def test_a_config_map_volume_is_written_as_the_atomic_writer_lays_it_out(tmp_path: Path) -> None:
    failures = set_up_one(tmp_path, {"name": "config", "configMap": {"name": "app"}}, {(CONFIG_MAP, "app"): SETTINGS})
    assert failures == []
    target = tmp_path / "volumes" / "kubernetes.io~configmap" / "config"
    entries = listing(target)
    stamp = os.readlink(target / "..data")
    assert entries == {"..data": f"-> {stamp}", stamp: "dir", "level": "-> ..data/level", "mode": "-> ..data/mode"}
    assert stamp.startswith("..") and len(stamp) == len("..2006_01_02_15_04_05.") + len(stamp.split(".")[-1])
    assert stat.S_IMODE((target / stamp).stat().st_mode) == 0o755
    assert listing(target / stamp) == {"level": "644 3", "mode": "644 fast"}
    assert (target / "mode").read_text() == "fast"


def test_items_choose_keys_and_paths_and_mode_overrides_default_mode(tmp_path: Path) -> None:
    volume = {
        "name": "config",
        "configMap": {
            "name": "app",
            "defaultMode": 0o600,
            "items": [{"key": "mode", "path": "conf/mode.txt", "mode": 0o755}, {"key": "level", "path": "level"}],
        },
    }
    assert set_up_one(tmp_path, volume, {(CONFIG_MAP, "app"): SETTINGS}) == []
    target = tmp_path / "volumes" / "kubernetes.io~configmap" / "config"
    assert listing(target)["conf"] == "-> ..data/conf"
    assert listing(target / "conf") == {"mode.txt": "755 fast"}
    assert listing(target)["level"] == "-> ..data/level"
    assert stat.S_IMODE((target / "level").stat().st_mode) == 0o600


def test_writing_again_swaps_data_and_drops_what_the_new_payload_lacks(tmp_path: Path) -> None:
    write_atomic(tmp_path, {"a": (b"1", 0o644), "b": (b"2", 0o644)})
    first = os.readlink(tmp_path / "..data")
    write_atomic(tmp_path, {"a": (b"3", 0o644)})
    assert (tmp_path / "a").read_text() == "3"
    assert not (tmp_path / "b").exists() and not (tmp_path / first).exists()


@pytest.mark.parametrize(
    ("again", "written"),
    [
        pytest.param({"a": (b"1", 0o644), "d/b": (b"2", 0o644)}, False, id="same payload"),
        pytest.param({"a": (b"1", 0o600), "d/b": (b"2", 0o644)}, False, id="mode only (bytes are compared)"),
        pytest.param({"a": (b"1", 0o644), "d/b": (b"22", 0o644)}, True, id="longer content"),
        pytest.param({"a": (b"1", 0o644)}, True, id="a path removed"),
        pytest.param({"a": (b"1", 0o644), "d/b": (b"2", 0o644), "c": (b"", 0o644)}, True, id="a path added"),
    ],
)
def test_a_payload_already_in_place_is_not_written_again(
    tmp_path: Path, again: dict[str, tuple[bytes, int]], written: bool
) -> None:
    """atomic_writer.go `shouldWritePayload`: a remount whose payload is what `..data` holds swaps nothing."""
    assert write_atomic(tmp_path, {"a": (b"1", 0o644), "d/b": (b"2", 0o644)})
    first = os.readlink(tmp_path / "..data")
    assert write_atomic(tmp_path, again) is written
    assert (os.readlink(tmp_path / "..data") != first) is written
    assert sorted(n for n in os.listdir(tmp_path) if not n.startswith("..")) == sorted({k.split("/")[0] for k in again})


def test_a_secret_volume_decodes_its_data_with_mode_0644(tmp_path: Path) -> None:
    volume = {"name": "creds", "secret": {"secretName": "creds"}}
    assert set_up_one(tmp_path, volume, {(SECRET, "creds"): CREDENTIALS}) == []
    token = tmp_path / "volumes" / "kubernetes.io~secret" / "creds" / "token"
    assert token.read_bytes() == b"s3cr3t"
    assert stat.S_IMODE(token.stat().st_mode) == 0o644


@pytest.mark.parametrize(
    ("volume", "message"),
    [
        (
            {"name": "config", "configMap": {"name": "absent"}},
            'MountVolume.SetUp failed for volume "config" : configmap "absent" not found',
        ),
        (
            {"name": "creds", "secret": {"secretName": "absent"}},
            'MountVolume.SetUp failed for volume "creds" : secret "absent" not found',
        ),
        (
            {"name": "config", "configMap": {"name": "app", "items": [{"key": "nope", "path": "p"}]}},
            'MountVolume.SetUp failed for volume "config" : configmap references non-existent config key: nope',
        ),
        (
            {"name": "creds", "secret": {"secretName": "creds", "items": [{"key": "nope", "path": "p"}]}},
            'MountVolume.SetUp failed for volume "creds" : references non-existent secret key: nope',
        ),
        (
            {
                "name": "all",
                "projected": {
                    "sources": [{"configMap": {"name": "gone1"}}, {"secret": {"name": "gone2"}}],
                },
            },
            'MountVolume.SetUp failed for volume "all" : [configmap "gone1" not found, secret "gone2" not found]',
        ),
    ],
    ids=["configmap-missing", "secret-missing", "configmap-key-missing", "secret-key-missing", "projected-both"],
)
def test_a_volume_that_cannot_be_set_up_gives_the_kubelets_failed_mount_text(
    tmp_path: Path, volume: Obj, message: str
) -> None:
    sources = {(CONFIG_MAP, "app"): SETTINGS, (SECRET, "creds"): CREDENTIALS}
    assert set_up_one(tmp_path, volume, sources) == [message]


def test_optional_sources_and_keys_that_are_missing_leave_them_out(tmp_path: Path) -> None:
    assert set_up_one(tmp_path, {"name": "c", "configMap": {"name": "absent", "optional": True}}) == []
    assert listing(tmp_path / "volumes" / "kubernetes.io~configmap" / "c").keys() == {
        "..data",
        os.readlink(tmp_path / "volumes" / "kubernetes.io~configmap" / "c" / "..data"),
    }
    items = {"name": "app", "optional": True, "items": [{"key": "nope", "path": "p"}, {"key": "mode", "path": "m"}]}
    assert set_up_one(tmp_path, {"name": "d", "configMap": items}, {(CONFIG_MAP, "app"): SETTINGS}) == []
    assert (tmp_path / "volumes" / "kubernetes.io~configmap" / "d" / "m").read_text() == "fast"
    assert not (tmp_path / "volumes" / "kubernetes.io~configmap" / "d" / "p").exists()


def test_downward_api_labels_are_sorted_key_quoted_value_lines(tmp_path: Path) -> None:
    volume = {
        "name": "podinfo",
        "downwardAPI": {
            "items": [
                {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
                {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
                {"path": "index", "fieldRef": {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-index']"}},
            ]
        },
    }
    pod = pod_with(volume, labels={"zone": "b", "app": "web"}, annotations={"batch.kubernetes.io/job-index": "3"})
    assert set_up(pod, tmp_path, None, host_ip="10.0.0.1", pod_ip="10.0.0.2") == []
    target = tmp_path / "volumes" / "kubernetes.io~downward-api" / "podinfo"
    assert (target / "labels").read_text() == 'app="web"\nzone="b"'
    assert (target / "name").read_text() == pod["metadata"]["name"]
    assert (target / "index").read_text() == "3"


def test_downward_api_resource_field_ref_divides_as_env_vars_do(tmp_path: Path) -> None:
    container = {"name": "main", "image": "x", "resources": {"limits": {"memory": "64Mi", "cpu": "250m"}}}
    refs = [
        {"path": "mem", "resourceFieldRef": {"containerName": "main", "resource": "limits.memory", "divisor": "1Mi"}},
        {"path": "cpu", "resourceFieldRef": {"containerName": "main", "resource": "limits.cpu"}},
    ]
    pod = make_pod([container], volumes=[{"name": "res", "downwardAPI": {"items": refs}}])
    assert set_up(pod, tmp_path, None, host_ip="", pod_ip="") == []
    target = tmp_path / "volumes" / "kubernetes.io~downward-api" / "res"
    assert ((target / "mem").read_text(), (target / "cpu").read_text()) == ("64", "1")


def test_a_projected_volume_merges_its_sources_and_leaves_tokens_out(tmp_path: Path) -> None:
    volume = {
        "name": "all",
        "projected": {
            "defaultMode": 0o640,
            "sources": [
                {"configMap": {"name": "app", "items": [{"key": "mode", "path": "mode"}]}},
                {"secret": {"name": "creds"}},
                {"downwardAPI": {"items": [{"path": "ns", "fieldRef": {"fieldPath": "metadata.namespace"}}]}},
                {"serviceAccountToken": {"path": "token-sa"}},
            ],
        },
    }
    sources = {(CONFIG_MAP, "app"): SETTINGS, (SECRET, "creds"): CREDENTIALS}
    pod = pod_with(volume, mounts=[{"name": "all", "mountPath": "/projected"}])
    assert set_up(pod, tmp_path, sources, host_ip="", pod_ip="") == []
    target = tmp_path / "volumes" / "kubernetes.io~projected" / "all"
    assert sorted(n for n in os.listdir(target) if not n.startswith("..")) == ["mode", "ns", "token"]
    assert stat.S_IMODE((target / "token").stat().st_mode) == 0o640
    assert volume_references(pod) == {(CONFIG_MAP, "app"), (SECRET, "creds")}
    assert unsupported(pod) == ['serviceAccountToken projection of volume "all" at /projected (container main)']


def test_an_empty_dir_is_a_world_writable_directory(tmp_path: Path) -> None:
    assert set_up_one(tmp_path, {"name": "scratch", "emptyDir": {}}) == []
    path = tmp_path / "volumes" / "kubernetes.io~empty-dir" / "scratch"
    assert stat.S_IMODE(path.stat().st_mode) == 0o777
    # medium: Memory is a fresh tmpfs upstream, whose root is drwxrwxrwt (trial34)
    assert set_up_one(tmp_path, {"name": "ram", "emptyDir": {"medium": "Memory"}}) == []
    path = tmp_path / "volumes" / "kubernetes.io~empty-dir" / "ram"
    assert stat.S_IMODE(path.stat().st_mode) == 0o1777


@pytest.mark.parametrize(
    ("volume", "plugin", "mode"),
    [
        ({"configMap": {"name": "app"}}, "kubernetes.io~configmap", 0o777),
        ({"secret": {"secretName": "creds"}}, "kubernetes.io~secret", 0o1777),
        ({"downwardAPI": {"items": []}}, "kubernetes.io~downward-api", 0o1777),
        ({"projected": {"sources": []}}, "kubernetes.io~projected", 0o1777),
    ],
    ids=["configMap", "secret", "downwardAPI", "projected"],
)
def test_an_api_data_volume_directory_has_its_emptydir_wrappers_mode(
    tmp_path: Path, volume: Obj, plugin: str, mode: int
) -> None:
    """trial34: `ls -la /etc/app` in a container shows `.` as `drwxrwxrwx` for a configMap (its wrapper emptyDir
    on disk, empty_dir.go `setupDir`) and `drwxrwxrwt` for a secret, downwardAPI or projected volume (a tmpfs),
    not the 0755 of a plain directory."""
    sources = {(CONFIG_MAP, "app"): SETTINGS, (SECRET, "creds"): CREDENTIALS}
    assert set_up_one(tmp_path, {"name": "v", **volume}, sources) == []
    assert stat.S_IMODE((tmp_path / "volumes" / plugin / "v").stat().st_mode) == mode


def test_host_path_or_create_types_make_what_is_missing(tmp_path: Path) -> None:
    check_host_path(str(tmp_path / "made" / "dir"), "DirectoryOrCreate")
    assert stat.S_IMODE((tmp_path / "made" / "dir").stat().st_mode) == 0o755
    check_host_path(str(tmp_path / "file.txt"), "FileOrCreate")
    assert (tmp_path / "file.txt").read_bytes() == b""
    check_host_path(str(tmp_path / "file.txt"), "FileOrCreate")
    check_host_path(str(tmp_path / "anything"), "")


def test_host_path_types_must_match_with_upstreams_messages(tmp_path: Path) -> None:
    file, sock = tmp_path / "f", tmp_path / "s"
    file.write_text("x")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock))
    try:
        check_host_path(str(sock), "Socket")
        check_host_path(str(file), "File")
        check_host_path(str(tmp_path), "Directory")
        check_host_path("/dev/null", "CharDevice")
        cases = [
            (str(file), "Directory", f"hostPath type check failed: {file} is not a directory, it's a File"),
            (str(tmp_path), "File", f"hostPath type check failed: {tmp_path} is not a file, it's a Directory"),
            (str(file), "DirectoryOrCreate", f"hostPath type check failed: {file} is not a directory, it's a File"),
            (str(file), "Socket", f"hostPath type check failed: {file} is not a socket file, it's a File"),
            (str(sock), "CharDevice", f"hostPath type check failed: {sock} is not a character device, it's a Socket"),
            (
                "/dev/null",
                "BlockDevice",
                "hostPath type check failed: /dev/null is not a block device, it's a CharDevice",
            ),
            (str(tmp_path / "no"), "Directory", f"hostPath {tmp_path / 'no'} doesn't exist"),
            (str(tmp_path / "no"), "File", f"hostPath {tmp_path / 'no'} doesn't exist"),
            (str(file), "Pipe", "Pipe is an invalid volume type"),
        ]
        for path, path_type, message in cases:
            with pytest.raises(ConfigError) as failed:
                check_host_path(path, path_type)
            assert str(failed.value) == message, (path, path_type)
    finally:
        server.close()


def test_a_host_path_of_the_wrong_type_fails_the_mount(tmp_path: Path) -> None:
    volume = {"name": "data", "hostPath": {"path": str(tmp_path / "absent"), "type": "Directory"}}
    assert set_up_one(tmp_path, volume) == [
        f'MountVolume.SetUp failed for volume "data" : hostPath {tmp_path / "absent"} doesn\'t exist'
    ]


def test_container_mounts_resolve_sub_paths_read_only_and_order_by_depth(tmp_path: Path) -> None:
    volumes = [
        {"name": "scratch", "emptyDir": {}},
        {"name": "config", "configMap": {"name": "app"}},
        {"name": "host", "hostPath": {"path": str(tmp_path / "host")}},
    ]
    mounts = [
        {"name": "scratch", "mountPath": "/work/out/deep", "subPathExpr": "$(POD)/logs"},
        {"name": "config", "mountPath": "/etc/app"},
        {"name": "host", "mountPath": "/data/", "readOnly": True},
        {"name": "scratch", "mountPath": "/work", "subPath": "shared"},
    ]
    container = {"name": "main", "image": "x", "volumeMounts": mounts}
    pod = make_pod([container], volumes=volumes)
    assert set_up(pod, tmp_path, {(CONFIG_MAP, "app"): SETTINGS}, host_ip="", pod_ip="") == []
    scratch = tmp_path / "volumes" / "kubernetes.io~empty-dir" / "scratch"
    binds = container_mounts(pod, container, tmp_path, {"POD": "p-0"})
    assert binds == [
        Bind(str(tmp_path / "host"), "/data", read_only=True),
        Bind(str(scratch / "shared"), "/work", read_only=False, within=str(scratch)),
        Bind(str(tmp_path / "volumes" / "kubernetes.io~configmap" / "config"), "/etc/app", read_only=True),
        Bind(str(scratch / "p-0" / "logs"), "/work/out/deep", read_only=False, within=str(scratch)),
    ]
    assert (scratch / "p-0" / "logs").is_dir() and (scratch / "shared").is_dir()


@pytest.mark.parametrize("sub_path", ["../escape", "/abs"])
def test_a_sub_path_may_not_leave_its_volume(tmp_path: Path, sub_path: str) -> None:
    container = {"name": "main", "image": "x", "volumeMounts": [{"name": "s", "mountPath": "/s", "subPath": sub_path}]}
    pod = make_pod([container], volumes=[{"name": "s", "emptyDir": {}}])
    assert set_up(pod, tmp_path, None, host_ip="", pod_ip="") == []
    with pytest.raises(ConfigError):
        container_mounts(pod, container, tmp_path, {})


def test_a_sub_path_through_a_symlink_out_of_the_volume_is_refused(tmp_path: Path) -> None:
    container = {"name": "main", "image": "x", "volumeMounts": [{"name": "s", "mountPath": "/s", "subPath": "out"}]}
    pod = make_pod([container], volumes=[{"name": "s", "emptyDir": {}}])
    assert set_up(pod, tmp_path, None, host_ip="", pod_ip="") == []
    os.symlink("/etc", tmp_path / "volumes" / "kubernetes.io~empty-dir" / "s" / "out")
    with pytest.raises(ConfigError, match="not within volume path"):
        container_mounts(pod, container, tmp_path, {})


def test_unsupported_names_other_volume_types_and_devices() -> None:
    container = {
        "name": "main",
        "image": "x",
        "volumeMounts": [{"name": "claim", "mountPath": "/data"}, {"name": "scratch", "mountPath": "/tmp/s"}],
        "volumeDevices": [{"name": "raw", "devicePath": "/dev/xvda"}],
    }
    volumes = [
        {"name": "claim", "csi": {"driver": "example.com/csi"}},
        {"name": "scratch", "emptyDir": {}},
        {"name": "raw", "persistentVolumeClaim": {"claimName": "r"}},
    ]
    assert unsupported(make_pod([container], volumes=volumes)) == [
        'csi volume "claim" at /data (container main)',
        'volumeDevice "raw" at /dev/xvda (container main)',
    ]


def test_a_claims_volume_is_its_bound_persistent_volumes_directory(tmp_path: Path) -> None:
    """The agent hands over each claim's bound PersistentVolume; its hostPath is bound at the mountPath, read-only
    when the claim source says so; an unbound claim or a volume with no directory here fails the set-up."""
    data = tmp_path / "pvc-1"
    data.mkdir()
    container = {"name": "main", "image": "x", "volumeMounts": [{"name": "d", "mountPath": "/data"}]}
    volumes = [{"name": "d", "persistentVolumeClaim": {"claimName": "c", "readOnly": True}}]
    pod = make_pod([container], volumes=volumes)
    pv = {"metadata": {"name": "pvc-1"}, "spec": {"hostPath": {"path": str(data)}}}
    assert set_up(pod, tmp_path, {(CLAIM, "c"): pv}, host_ip="127.0.0.1", pod_ip="127.0.0.1") == []
    assert container_mounts(pod, container, tmp_path, {}, {(CLAIM, "c"): pv}) == [
        Bind(source=str(data), target="/data", read_only=True)
    ]
    assert set_up(pod, tmp_path, {(CLAIM, "c"): None}, host_ip="", pod_ip="") == [
        'MountVolume.SetUp failed for volume "d" : persistentvolumeclaim "c" is not bound'
    ]
    nfs = {"metadata": {"name": "remote"}, "spec": {"nfs": {"server": "s", "path": "/"}}}
    assert set_up(pod, tmp_path, {(CLAIM, "c"): nfs}, host_ip="", pod_ip="") == [
        'MountVolume.SetUp failed for volume "d" : kjobs mounts hostPath and local PersistentVolumes only, and '
        '"remote" is neither'
    ]


def test_a_missing_sub_path_is_not_made_through_a_symlink_leaving_its_volume(tmp_path: Path) -> None:
    container = {"name": "main", "image": "x", "volumeMounts": [{"name": "s", "mountPath": "/s", "subPath": "a/b"}]}
    pod = make_pod([container], volumes=[{"name": "s", "emptyDir": {}}])
    assert set_up(pod, tmp_path, None, host_ip="", pod_ip="") == []
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "volumes" / "kubernetes.io~empty-dir" / "s" / "a").symlink_to(outside)  # the container's doing
    with pytest.raises(ConfigError, match="not within volume path"):
        container_mounts(pod, container, tmp_path, {})
    assert list(outside.iterdir()) == []


def test_a_rewrite_does_not_empty_a_directory_a_planted_data_link_names(tmp_path: Path) -> None:
    """A token refresh rewrites the volume and removes the payload `..data` named before: a `..data` a container
    pointed at a symlink of its own (`..x -> ~/.local/share/kjobs/pki`) must not have that directory emptied."""
    volume = tmp_path / "vol"
    write_atomic(volume, {"token": (b"1", 0o644)})
    victim = tmp_path / "pki"
    victim.mkdir()
    (victim / "sa.key").write_text("key")
    (volume / "..x").symlink_to(victim)
    (volume / "..data").unlink()
    (volume / "..data").symlink_to("..x")
    write_atomic(volume, {"token": (b"2", 0o644)})
    assert (victim / "sa.key").read_text() == "key"
    assert (volume / "token").read_text() == "2"


def test_a_relative_host_path_is_bound_from_where_it_was_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The type check read `data` from the agent's directory; the bind named `data` from the container's working
    directory, so the container failed 128 "mount data on .../mnt/in: No such file or directory"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    volume = {"name": "host", "hostPath": {"path": "data", "type": "Directory"}}
    container = {"name": "main", "image": "x", "volumeMounts": [{"name": "host", "mountPath": "/in"}]}
    pod = make_pod([container], volumes=[volume])
    assert set_up(pod, tmp_path / "pod", {}, host_ip="", pod_ip="") == []
    assert container_mounts(pod, container, tmp_path / "pod", {}) == [Bind(str(tmp_path / "data"), "/in", False)]


def test_a_missing_host_path_without_a_type_is_made_a_directory_as_containerd_makes_it(tmp_path: Path) -> None:
    """containerd's CRI makes a bind's missing source a 0755 directory (parseMount / WithMounts); the container
    then starts with it empty. Before, the container failed 128 at its mount."""
    missing = tmp_path / "absent" / "deeper"
    volume = {"name": "host", "hostPath": {"path": str(missing)}}
    container = {"name": "main", "image": "x", "volumeMounts": [{"name": "host", "mountPath": "/in"}]}
    pod = make_pod([container], volumes=[volume])
    assert set_up(pod, tmp_path / "pod", {}, host_ip="", pod_ip="") == []
    assert container_mounts(pod, container, tmp_path / "pod", {}) == [Bind(str(missing), "/in", False)]
    assert missing.is_dir() and stat.S_IMODE(missing.stat().st_mode) == 0o755 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
