"""`kubectl debug` against `kjobs up` with the real kubectl: an ephemeral container added to a running pod through
`pods/{name}/ephemeralcontainers` runs on the node, its logs and status are served, and `-i` attaches to it.
Before, kubectl said the cluster had ephemeral containers disabled (the subresource was not served)."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from tests.e2e.test_config_objects import Up, kubectl_on_up

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

POD = """apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["sleep", "300"]
"""


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("debug")) as kubectl:
        yield kubectl


def _running_pod(up: Up, name: str) -> None:
    up.ok("apply", "-f", "-", stdin=POD.format(name=name))
    up.ok("wait", "--for=condition=Ready", f"pod/{name}", "--timeout=30s")


def _ephemeral_statuses(up: Up, name: str) -> dict[str, dict[str, object]]:
    pod = json.loads(up.ok("get", "pod", name, "-o", "json"))
    return {s["name"]: s for s in pod["status"].get("ephemeralContainerStatuses") or []}


def _wait_terminated(up: Up, name: str, container: str) -> dict[str, object]:
    deadline = time.monotonic() + 30
    while True:
        status = _ephemeral_statuses(up, name).get(container)
        state = status["state"] if status else {}
        if isinstance(state, dict) and "terminated" in state:
            return state["terminated"]  # type: ignore[no-any-return]
        assert time.monotonic() < deadline, status
        time.sleep(0.1)


def test_kubectl_debug_runs_a_container_whose_logs_and_status_are_served(up: Up) -> None:
    _running_pod(up, "web")
    up.ok("debug", "web", "--profile=general", "--image=busybox", "-c", "dbg", "--", "sh", "-c", "echo hi")
    _wait_terminated(up, "web", "dbg")
    assert up.ok("logs", "web", "-c", "dbg") == "hi"
    template = '{.status.ephemeralContainerStatuses[?(@.name=="dbg")].state.terminated.exitCode}'
    assert up.ok("get", "pod", "web", "-o", f"jsonpath={template}") == "0"
    # a second debug container beside the first; the pod still runs, and is still ready
    up.ok("debug", "web", "--profile=general", "--image=busybox", "-c", "dbg2", "--", "sh", "-c", "exit 4")
    assert _wait_terminated(up, "web", "dbg2")["exitCode"] == 4
    pod = json.loads(up.ok("get", "pod", "web", "-o", "json"))
    assert [c["name"] for c in pod["spec"]["ephemeralContainers"]] == ["dbg", "dbg2"]
    assert pod["status"]["phase"] == "Running"
    assert {c["type"]: c["status"] for c in pod["status"]["conditions"]}["Ready"] == "True"


def test_kubectl_debug_i_attaches_to_the_container_stdin(up: Up) -> None:
    _running_pod(up, "shell")
    out = up.ok(
        "debug",
        "-i",
        "shell",
        "--profile=general",
        "--image=busybox",
        "-c",
        "sh1",
        "--",
        "sh",
        stdin="echo from-stdin\nexit 0\n",
    )
    assert "from-stdin" in out, out
    assert _wait_terminated(up, "shell", "sh1")["exitCode"] == 0


def test_the_python_client_adds_an_ephemeral_container_and_validation_answers_422(up: Up) -> None:
    _running_pod(up, "pyc")
    api = k8s_config.new_client_from_config(str(up.config))
    try:
        core = k8s.CoreV1Api(api)
        debugger = {"name": "py", "image": "busybox", "command": ["sh", "-c", "echo py"], "targetContainerName": "main"}
        patched = core.patch_namespaced_pod_ephemeralcontainers(
            "pyc", "default", {"spec": {"ephemeralContainers": [debugger]}}
        )
        assert [c.name for c in patched.spec.ephemeral_containers] == ["py"]
        read = core.read_namespaced_pod_ephemeralcontainers("pyc", "default")
        assert read.spec.ephemeral_containers[0].target_container_name == "main"
        bad = {"name": "main", "image": "busybox", "ports": [{"containerPort": 80}]}
        with pytest.raises(k8s.ApiException) as invalid:
            core.patch_namespaced_pod_ephemeralcontainers("pyc", "default", {"spec": {"ephemeralContainers": [bad]}})
        assert invalid.value.status == 422
        causes = {(c["field"], c["reason"]) for c in json.loads(invalid.value.body)["details"]["causes"]}
        assert causes == {
            ("spec.ephemeralContainers[1].name", "FieldValueDuplicate"),
            ("spec.ephemeralContainers[1].ports", "FieldValueForbidden"),
        }
    finally:
        api.close()
    assert _wait_terminated(up, "pyc", "py")["exitCode"] == 0
    assert up.ok("logs", "pyc", "-c", "py") == "py"


def test_discovery_and_openapi_list_the_subresource(up: Up) -> None:
    resources = json.loads(up.ok("get", "--raw", "/api/v1"))["resources"]
    entry = next(r for r in resources if r["name"] == "pods/ephemeralcontainers")
    assert (entry["kind"], entry["verbs"]) == ("Pod", ["get", "patch", "update"])
    paths = json.loads(up.ok("get", "--raw", "/openapi/v3/api/v1"))["paths"]
    assert {"get", "put", "patch"} <= set(paths["/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers"])
