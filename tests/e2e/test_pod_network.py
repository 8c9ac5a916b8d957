"""Named pods on `kjobs up`, as kubectl users see them: the docs' "Job with Pod-to-Pod Communication" applied with
kubectl completes; a running pod resolves a pod of its headless Service that started after it (its bind-mounted
/etc/hosts is rewritten in place); `kubectl exec` sees the pod's hostname and hosts file."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kjobs.node.process_runtime import mounting_enabled
from tests.cli.test_run_podnet import PING
from tests.e2e.test_config_objects import Up, kubectl_on_up
from tests.e2e.test_python_clients import _until

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
    pytest.mark.skipif(not mounting_enabled(), reason="no mount namespace can be made here"),
]


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("podnet")) as kubectl:
        yield kubectl


def test_the_pod_to_pod_docs_example_completes_with_kubectl(up: Up, tmp_path: Path) -> None:
    documents = list(yaml.safe_load_all((EXAMPLES / "job-pod-to-pod.yaml").read_text()))
    if shutil.which("ping") is None:  # this machine has none: one that resolves the name, on the pods' PATH
        ping = tmp_path / "bin" / "ping"
        ping.parent.mkdir()
        ping.write_text(PING)
        ping.chmod(0o755)
        container = documents[1]["spec"]["template"]["spec"]["containers"][0]
        container["env"] = [{"name": "PATH", "value": f"{ping.parent}:/usr/local/bin:/usr/bin:/bin"}]
    applied = up.ok("apply", "-f", "-", stdin=yaml.safe_dump_all(documents))
    assert applied == "service/headless-svc created\njob.batch/example-job created"
    up.ok("wait", "--for=condition=Complete", "job/example-job", "--timeout=60s", timeout=70)
    assert up.ok("get", "job", "example-job", "-o", "jsonpath={.status.succeeded}") == "3"
    logs = up.ok("logs", "job/example-job")
    pinged = [line for line in logs.splitlines() if line.startswith("Successfully")]
    assert pinged == [f"Successfully pinged pod: example-job-{i}.headless-svc" for i in range(3)]
    up.ok("delete", "-f", "-", stdin=yaml.safe_dump_all(documents))


def _pod(name: str, command: str) -> str:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "mesh"}},
        "spec": {
            "hostname": name,
            "subdomain": "mesh",
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", command]}],
        },
    }
    return json.dumps(body)


def test_a_running_pod_resolves_a_pod_that_started_after_it(up: Up) -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "mesh"},
        "spec": {"clusterIP": "None", "selector": {"app": "mesh"}},
    }
    up.ok("apply", "-f", "-", stdin=json.dumps(service))
    waiting = "until getent hosts late.mesh >/dev/null; do sleep 0.1; done; echo found late; sleep 600"
    up.ok("apply", "-f", "-", stdin=_pod("early", waiting))
    up.ok("wait", "--for=condition=Ready", "pod/early", "--timeout=60s", timeout=70)
    assert up.ok("exec", "early", "--", "hostname") == "early"
    hosts = up.ok("exec", "early", "--", "cat", "/etc/hosts").splitlines()
    assert hosts[0] == "# Kubernetes-managed hosts file."
    assert "127.0.0.1\tearly.mesh.default.svc.cluster.local\tearly" in hosts
    assert up.ok("logs", "early") == ""
    up.ok("apply", "-f", "-", stdin=_pod("late", "sleep 600"))
    assert _until(lambda: up.ok("logs", "early") or None, "early's log") == "found late"
    resolved = up.ok("exec", "early", "--", "getent", "hosts", "late.mesh.default.svc.cluster.local")
    assert resolved.split()[0] == "127.0.0.1"
    assert up.ok("exec", "early", "--", "getent", "hosts", "mesh").split()[0] == "127.0.0.1"
    up.ok("delete", "pod", "early", "late", "--grace-period=0", "--force")
    up.ok("delete", "svc", "mesh")
