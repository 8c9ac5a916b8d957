"""`kjobs run` says, before the Job starts, what the node will not do for its pods (it shows no Events)."""

from __future__ import annotations

import pytest

from kjobs.api.types import Obj
from kjobs.cli.run import template_warnings
from kjobs.node.process_runtime import mounting_enabled


def job(spec: Obj) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": spec}}}


def test_probes_hooks_and_volumes_of_the_template_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the nodes mount no volumes (here: turned off with KJOBS_MOUNT_VOLUMES=0)."""
    monkeypatch.setenv("KJOBS_MOUNT_VOLUMES", "0")
    container = {
        "name": "main",
        "image": "busybox",
        "command": ["true"],
        "startupProbe": {"grpc": {"port": 9000}},
        "volumeMounts": [{"name": "scratch", "mountPath": "/data"}],
    }
    warnings = template_warnings(job({"containers": [container], "volumes": [{"name": "scratch", "emptyDir": {}}]}))
    assert warnings == [
        'kjobs runs containers as host processes and mounts no volumes: emptyDir "scratch" at /data (container main) '
        "not mounted; the containers start without them (read ConfigMaps and Secrets through env or envFrom)",
        "kjobs runs no grpc probes or tcpSocket lifecycle hooks: startupProbe (container main) not run; the "
        "containers count as started and ready while they run",
    ]


@pytest.mark.skipif(not mounting_enabled(), reason="no mount namespace can be made here")
def test_where_nodes_mount_volumes_only_what_they_leave_out_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KJOBS_MOUNT_VOLUMES", raising=False)
    container = {
        "name": "main",
        "image": "busybox",
        "command": ["true"],
        "volumeMounts": [{"name": "scratch", "mountPath": "/data"}, {"name": "claim", "mountPath": "/claim"}],
    }
    volumes = [{"name": "scratch", "emptyDir": {}}, {"name": "claim", "csi": {"driver": "example.com/csi"}}]
    assert template_warnings(job({"containers": [container], "volumes": volumes})) == [
        "kjobs mounts emptyDir, hostPath, configMap, secret, downwardAPI, projected and persistentVolumeClaim volumes "
        "only, and issues service account tokens only to pods that can reach its API server (kjobs up): "
        'csi volume "claim" at /claim (container main) not mounted; the '
        "containers start without them"
    ]


def test_a_plain_template_gets_no_warning() -> None:
    assert template_warnings(job({"containers": [{"name": "main", "image": "busybox", "command": ["true"]}]})) == []
