"""Volumes on `kjobs up`, as kubectl users see them: a pod whose ConfigMap is missing stays ContainerCreating with
the kubelet's `FailedMount` Warning and starts once the ConfigMap is created; `kubectl exec` sees the container's
mounts; a container is the same user inside its mount namespace as outside; kubectl and the Python client read the
containers' `volumeMounts` statuses and the Node's `runtimeHandlers`."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, config

from kjobs.node.process_runtime import mounting_enabled
from tests.e2e.test_config_objects import Up, kubectl_on_up
from tests.e2e.test_python_clients import _until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
    pytest.mark.skipif(not mounting_enabled(), reason="no mount namespace can be made here"),
]


def _pod(name: str, container: dict[str, Any], volumes: list[dict[str, Any]]) -> str:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "vol"}},
        "spec": {"restartPolicy": "Never", "containers": [container], "volumes": volumes},
    }
    return json.dumps(body)


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("volumes")) as kubectl:
        container = {
            "name": "main",
            "image": "busybox",
            "command": ["sh", "-c", "echo started > /scratch/mark; sleep 600"],
            "workingDir": "/scratch",
            "volumeMounts": [
                {"name": "scratch", "mountPath": "/scratch"},
                {"name": "info", "mountPath": "/etc/podinfo", "readOnly": True},
            ],
        }
        volumes = [
            {"name": "scratch", "emptyDir": {}},
            {
                "name": "info",
                "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]},
            },
        ]
        kubectl.ok("apply", "-f", "-", stdin=_pod("mounted", container, volumes))
        kubectl.ok("wait", "--for=condition=Ready", "pod/mounted", "--timeout=60s", timeout=70)
        yield kubectl


def test_a_missing_config_map_fails_the_mount_until_it_is_created(up: Up) -> None:
    container = {
        "name": "main",
        "image": "busybox",
        "command": ["cat", "/etc/app/mode"],
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}],
    }
    up.ok("apply", "-f", "-", stdin=_pod("waits", container, [{"name": "config", "configMap": {"name": "late"}}]))
    events = "jsonpath={range .items[?(@.reason=='FailedMount')]}{.type} {.message}{'\\n'}{end}"
    found = _until(
        lambda: up.ok("get", "events", "--field-selector", "involvedObject.name=waits", "-o", events) or None,
        "the FailedMount event",
    )
    assert found.splitlines()[0] == (
        'Warning MountVolume.SetUp failed for volume "config" : configmap "late" not found'
    )
    waiting = "jsonpath={.status.phase} {.status.containerStatuses[0].state.waiting.reason}"
    assert up.ok("get", "pod", "waits", "-o", waiting) == "Pending ContainerCreating"
    assert "ContainerCreating" in up.ok("get", "pod", "waits")
    up.ok("create", "configmap", "late", "--from-literal=mode=fast")
    phase = "jsonpath={.status.phase}"
    _until(lambda: up.ok("get", "pod", "waits", "-o", phase) == "Succeeded" or None, "the pod to succeed", timeout=30)
    assert up.ok("logs", "waits") == "fast"


def test_exec_sees_the_containers_mounts_and_working_directory(up: Up) -> None:
    out = up.ok("exec", "mounted", "--", "sh", "-c", "pwd; cat mark; cat /etc/podinfo/labels; echo; ls /etc/podinfo")
    assert out.splitlines() == ["/scratch", "started", 'app="vol"', "labels"]
    code, out = up("exec", "mounted", "--", "sh", "-c", "echo x > /etc/podinfo/new")
    assert code != 0
    assert "Read-only file system" in out
    assert not os.path.exists("/scratch") and not os.path.exists("/etc/podinfo")


def test_the_container_is_the_same_user_in_its_mount_namespace(up: Up) -> None:
    assert up.ok("exec", "mounted", "--", "id", "-u") == str(os.getuid())


def test_a_container_in_a_mount_namespace_writes_its_termination_message(up: Up) -> None:
    script = "echo log-line; printf 'done: %s' \"$(cat /s/x 2>/dev/null || echo fresh)\" > /dev/termination-log"
    containers = {
        "name": "main",
        "image": "busybox",
        "command": ["sh", "-c", script],
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "volumeMounts": [{"name": "s", "mountPath": "/s"}],
    }
    up.ok("apply", "-f", "-", stdin=_pod("says", containers, [{"name": "s", "emptyDir": {}}]))
    terminated = "jsonpath={.status.containerStatuses[0].state.terminated.message}"
    message = _until(lambda: up.ok("get", "pod", "says", "-o", terminated) or None, "the termination message")
    assert message == "done: fresh"
    assert not os.path.exists("/dev/termination-log")


def test_a_label_added_with_kubectl_reaches_the_running_containers_downward_api_file(up: Up) -> None:
    """The kubelet remounts a running pod's downwardAPI volume when the pod is updated (docs/volumes.md, "Updates
    reach running pods"): `kubectl label` is in `/etc/podinfo/labels` at once, through a new `..data`."""
    before = up.ok("exec", "mounted", "--", "readlink", "/etc/podinfo/..data")
    up.ok("label", "pod", "mounted", "tier=gold")
    labels = _until(
        lambda: (lambda text: text if 'tier="gold"' in text else None)(
            up.ok("exec", "mounted", "--", "cat", "/etc/podinfo/labels")
        ),
        "the new label in the mounted file",
    )
    assert labels == 'app="vol"\ntier="gold"'
    assert up.ok("exec", "mounted", "--", "readlink", "/etc/podinfo/..data") != before
    assert up.ok("get", "pod", "mounted", "-o", "jsonpath={.status.phase}") == "Running"


def test_kubectl_and_the_python_client_read_the_mounts_status_and_the_nodes_runtime_handlers(up: Up) -> None:
    """As on a 1.32 cluster (RecursiveReadOnlyMounts): each container status lists its spec's mounts (the token's
    too, where the ServiceAccount admission added it), and the Node its default runtime handler's features
    (docs/volumes.md#recursive-read-only-mounts)."""
    mounts = json.loads(up.ok("get", "pod", "mounted", "-o", "jsonpath={.status.containerStatuses[0].volumeMounts}"))
    assert mounts[:2] == [
        {"name": "scratch", "mountPath": "/scratch"},
        {"name": "info", "mountPath": "/etc/podinfo", "readOnly": True, "recursiveReadOnly": "Disabled"},
    ]
    assert [m["mountPath"] for m in mounts[2:]] == ["/var/run/secrets/kubernetes.io/serviceaccount"]
    handlers = json.loads(up.ok("get", "nodes", "-o", "jsonpath={.items[0].status.runtimeHandlers}"))
    assert [h["name"] for h in handlers] == [""]
    assert handlers[0]["features"]["userNamespaces"] is False
    api = client.CoreV1Api(config.new_client_from_config(str(up.config)))
    status = api.read_namespaced_pod("mounted", "default").status.container_statuses[0]
    assert [(m.name, m.read_only, m.recursive_read_only) for m in status.volume_mounts[:2]] == [
        ("scratch", None, None),
        ("info", True, "Disabled"),
    ]
    node = api.list_node().items[0]
    features = node.status.runtime_handlers[0].features
    assert features.recursive_read_only_mounts is handlers[0]["features"]["recursiveReadOnlyMounts"]
