"""Which volume mounts a pod's containers would find elsewhere than on a cluster (`kjobs.node.volumes`)."""

from __future__ import annotations

from kjobs.api.types import Obj
from kjobs.node.volumes import unmounted
from tests.node.helpers import make_pod


def mounting(volume: Obj, mount_path: str) -> Obj:
    container = {"name": "main", "image": "x", "volumeMounts": [{"name": volume["name"], "mountPath": mount_path}]}
    return make_pod([container], volumes=[volume])


def test_an_empty_dir_is_named_a_container_writing_to_it_writes_to_this_machine() -> None:
    """An init container writing `/work/input.txt` for the main container wrote this machine's /work (kjobs runs
    as root in CI) or failed, in silence."""
    assert unmounted(mounting({"name": "scratch", "emptyDir": {}}, "/work")) == [
        'emptyDir "scratch" at /work (container main)'
    ]


def test_a_host_path_is_named_only_when_mounted_elsewhere() -> None:
    assert unmounted(mounting({"name": "data", "hostPath": {"path": "/srv/data"}}, "/srv/data/")) == []
    assert unmounted(mounting({"name": "data", "hostPath": {"path": "/srv/data"}}, "/data")) == [
        'hostPath "/srv/data" at /data (container main)'
    ]
