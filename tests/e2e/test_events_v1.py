"""`events.k8s.io/v1` and `kube-root-ca.crt` on `kjobs up`, as a cluster's users meet them: the official client's
`EventsV1Api` (create, list, watch, patch, delete) with the core view of the same Event, and the real kubectl
(`get events.events.k8s.io`, `get events`, `get configmap kube-root-ca.crt -o yaml` in a new namespace)."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import watch as k8s_watch

from tests.e2e.test_config_objects import Up
from tests.e2e.test_python_clients import _until
from tests.server.test_up import _up
from tests.support import free_port

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    tmp = tmp_path_factory.mktemp("events-v1")
    config = tmp / "kc.yaml"
    args = ("--port", str(free_port()), "--data-dir", str(tmp / "data"), "--kubeconfig", str(config))
    with _up(tmp, *args) as (proc, line, _elapsed):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        home = tmp / "kubectl-home"
        home.mkdir()
        yield Up(config, home)


@pytest.fixture(scope="module")
def api(up: Up) -> k8s.ApiClient:
    return k8s_config.new_client_from_config(config_file=str(up.config))


def _event(name: str, namespace: str) -> k8s.EventsV1Event:
    return k8s.EventsV1Event(
        metadata=k8s.V1ObjectMeta(name=name, namespace=namespace),
        # with microseconds, as `datetime.now()` has them: isoformat() then writes the six digits RFC3339Micro
        # wants; a whole-second datetime is `...05+00:00`, which a cluster refuses (400, docs/clients-stop39.md)
        event_time=datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
        reporting_controller="example.com/operator",
        reporting_instance="operator-0",
        action="Reconcile",
        reason="Reconciled",
        type="Normal",
        note="all replicas ready",
        regarding=k8s.V1ObjectReference(kind="ConfigMap", namespace=namespace, name="settings", api_version="v1"),
    )


def test_events_v1_api_and_the_core_view_of_the_same_event(up: Up, api: k8s.ApiClient) -> None:
    core_api, events = k8s.CoreV1Api(api), k8s.EventsV1Api(api)
    core_api.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name="ev-py")))
    seen: list[tuple[str, str]] = []
    first = threading.Event()

    def watch() -> None:
        stream = k8s_watch.Watch()
        for item in stream.stream(events.list_namespaced_event, "ev-py", timeout_seconds=20):
            obj: Any = item["object"]
            seen.append((item["type"], obj.note))
            first.set()
            if item["type"] == "DELETED":
                stream.stop()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    created = events.create_namespaced_event("ev-py", _event("reconciled", "ev-py"))
    assert created.reporting_controller == "example.com/operator"
    # The watch's request may reach the server after the create (it then lists the event as ADDED): wait for
    # its first event, so that the patch below is seen as MODIFIED whichever came first.
    assert first.wait(20)
    assert created.deprecated_count is None

    listed = events.list_namespaced_event("ev-py", field_selector="regarding.name=settings")
    assert [e.metadata.name for e in listed.items] == ["reconciled"]

    core = core_api.read_namespaced_event("reconciled", "ev-py")
    assert core.message == "all replicas ready"
    assert core.involved_object.kind == "ConfigMap" and core.reporting_component == "example.com/operator"
    assert core.metadata.resource_version == created.metadata.resource_version

    patched = events.patch_namespaced_event("reconciled", "ev-py", {"metadata": {"labels": {"tier": "ops"}}})
    assert patched.metadata.labels == {"tier": "ops"}
    with pytest.raises(k8s.ApiException) as refused:
        events.patch_namespaced_event("reconciled", "ev-py", {"note": "changed"})
    assert refused.value.status == 422 and "field is immutable" in refused.value.body

    events.delete_namespaced_event("reconciled", "ev-py")
    thread.join(20)
    assert seen[0] == ("ADDED", "all replicas ready")
    assert seen[-1] == ("DELETED", "all replicas ready")
    assert ("MODIFIED", "all replicas ready") in seen
    assert core_api.list_namespaced_event("ev-py").items == []


def test_kubectl_gets_events_in_both_versions_and_the_root_ca_in_a_new_namespace(up: Up, api: k8s.ApiClient) -> None:
    up.ok("create", "namespace", "ev-kubectl")
    k8s.EventsV1Api(api).create_namespaced_event("ev-kubectl", _event("from-v1", "ev-kubectl"))

    rows = up.ok("get", "events.events.k8s.io", "-n", "ev-kubectl").splitlines()
    assert rows[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert rows[1].split()[1:] == ["Normal", "Reconciled", "configmap/settings", "all", "replicas", "ready"]
    core_rows = up.ok("get", "events", "-n", "ev-kubectl").splitlines()
    assert core_rows[1].split()[1:] == rows[1].split()[1:]
    as_v1 = yaml.safe_load(up.ok("get", "events.v1.events.k8s.io", "from-v1", "-n", "ev-kubectl", "-o", "yaml"))
    assert (as_v1["apiVersion"], as_v1["note"]) == ("events.k8s.io/v1", "all replicas ready")

    published = _until(
        lambda: (lambda code_out: code_out[1] if code_out[0] == 0 else None)(
            up("get", "configmap", "kube-root-ca.crt", "-n", "ev-kubectl", "-o", "yaml")
        ),
        "kube-root-ca.crt in ev-kubectl",
    )
    cm = yaml.safe_load(published)
    ca = (up.config.parent / "data" / "pki" / "ca.crt").read_text()
    assert cm["data"] == {"ca.crt": ca}
    assert cm["metadata"]["annotations"]["kubernetes.io/description"].startswith("Contains a CA bundle")

    up.ok("delete", "configmap", "kube-root-ca.crt", "-n", "ev-kubectl")
    again = _until(
        lambda: (lambda code_out: code_out[1] if code_out[0] == 0 else None)(
            up("get", "configmap", "kube-root-ca.crt", "-n", "ev-kubectl", "-o", "jsonpath={.data.ca\\.crt}")
        ),
        "kube-root-ca.crt recreated",
    )
    assert again == ca.rstrip("\n") or again == ca
