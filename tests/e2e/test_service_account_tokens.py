"""ServiceAccount tokens on `kjobs up`, as a cluster's users and pods meet them: a Job's pod using the official
client's `load_incluster_config()` lists pods when a RoleBinding lets its account and is refused (403, logged)
when none does; `kubectl create token` (with `--duration` and `--bound-object-kind Pod`), `kubectl auth whoami`
and `kubectl auth can-i` with the token alone, a TokenReview; a deleted pod's token is refused."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kjobs.node.process_runtime import mounting_enabled
from tests.e2e.test_config_objects import Up, kubectl_on_up
from tests.e2e.test_python_clients import _until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

SCRIPT = """
import os, sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_incluster_config()
print("host", os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"])
ns = open("/var/run/secrets/kubernetes.io/serviceaccount/namespace").read()
try:
    pods = client.CoreV1Api().list_namespaced_pod(ns, label_selector="app=incluster")
except ApiException as exc:
    print("refused", exc.status, exc.reason)
    sys.exit(3)
print("pods", sorted(p.metadata.name for p in pods.items))
"""


def _job(name: str, account: str) -> str:
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "metadata": {"labels": {"app": "incluster"}},
                "spec": {
                    "serviceAccountName": account,
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "python", "command": [sys.executable, "-c", SCRIPT]}],
                },
            },
        },
    }
    return json.dumps(body)


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("sa-tokens")) as kubectl:
        yield kubectl


def _as_token(up: Up, token: str, *args: str) -> tuple[int, str]:
    """kubectl with nothing but the server, its CA and `token` (no client certificate)."""
    config = json.loads(up.ok("config", "view", "--raw", "-o", "json"))
    cluster = config["clusters"][0]["cluster"]
    ca = up.home / "ca.crt"
    if not ca.exists():
        import base64

        ca.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
    return up(
        "--kubeconfig",
        "/dev/null",
        "--server",
        cluster["server"],
        "--certificate-authority",
        str(ca),
        "--token",
        token,
        *args,
    )


def _finished(up: Up, job: str) -> str:
    def done() -> str | None:
        conditions = up.ok("get", "job", job, "-o", "jsonpath={.status.conditions[*].type}")
        return conditions if ("Complete" in conditions or "Failed" in conditions) else None

    return str(_until(done, f"job {job} finished"))


@pytest.mark.skipif(not mounting_enabled(), reason="no mount namespace can be made here")
def test_in_cluster_config_reaches_the_api_as_the_pods_account(up: Up) -> None:
    up.ok("create", "serviceaccount", "lister")
    up.ok("create", "serviceaccount", "nobody")
    up.ok("create", "role", "pod-reader", "--verb=get,list,watch", "--resource=pods")
    up.ok("create", "rolebinding", "lister-reads", "--role=pod-reader", "--serviceaccount=default:lister")
    up.ok("apply", "-f", "-", stdin=_job("allowed", "lister"))
    up.ok("apply", "-f", "-", stdin=_job("refused", "nobody"))
    assert "Complete" in _finished(up, "allowed")
    logs = up.ok("logs", "job/allowed")
    port = up.ok("config", "view", "-o", "jsonpath={.clusters[0].cluster.server}").rsplit(":", 1)[1]
    assert f"host 127.0.0.1 {port}" in logs
    pod = up.ok("get", "pods", "-l", "job-name=allowed", "-o", "jsonpath={.items[0].metadata.name}")
    assert f"'{pod}'" in logs.split("pods ", 1)[1]
    assert "Failed" in _finished(up, "refused")
    assert "refused 403 Forbidden" in up.ok("logs", "job/refused")
    spec = json.loads(up.ok("get", "pod", pod, "-o", "json"))["spec"]
    [volume] = [v for v in spec["volumes"] if v["name"].startswith("kube-api-access-")]
    assert spec["containers"][0]["volumeMounts"] == [
        {"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": volume["name"], "readOnly": True}
    ]
    described = up.ok("describe", "pod", pod)
    assert f"/var/run/secrets/kubernetes.io/serviceaccount from {volume['name']} (ro)" in described
    assert "TokenExpirationSeconds:  3607" in described


def test_kubectl_creates_tokens_that_authenticate_the_account(up: Up) -> None:
    token = up.ok("create", "token", "default", "--duration", "20m")
    code, who = _as_token(up, token, "auth", "whoami", "-o", "json")
    assert code == 0, who
    user = json.loads(who)["status"]["userInfo"]
    assert user["username"] == "system:serviceaccount:default:default"
    assert user["groups"] == ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]
    assert _as_token(up, token, "auth", "can-i", "create", "pods") == (1, "no")
    code, out = _as_token(up, token, "get", "pods", "-n", "kube-system")
    denied = 'User "system:serviceaccount:default:default" cannot list resource "pods" in API group ""'
    assert code == 1 and f'pods is forbidden: {denied} in the namespace "kube-system"' in out
    code, out = up("create", "token", "default", "--duration", "5m")
    assert code == 1 and "may not specify a duration less than 10 minutes" in out
    code, out = up("create", "token", "nosuch")
    assert code == 1 and 'serviceaccounts "nosuch" not found' in out
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
    answered = json.loads(up.ok("create", "-f", "-", "-o", "json", stdin=json.dumps(review)))
    assert answered["status"]["authenticated"] is True
    assert answered["status"]["user"]["username"] == "system:serviceaccount:default:default"


def test_a_deleted_pods_token_is_refused(up: Up, tmp_path: Path) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "holder"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox", "command": ["true"]}]},
    }
    up.ok("apply", "-f", "-", stdin=json.dumps(pod))
    token = up.ok("create", "token", "default", "--bound-object-kind", "Pod", "--bound-object-name", "holder")
    code, who = _as_token(up, token, "auth", "whoami", "-o", "json")
    assert code == 0, who
    extra = json.loads(who)["status"]["userInfo"]["extra"]
    assert extra["authentication.kubernetes.io/pod-name"] == ["holder"]
    assert extra["authentication.kubernetes.io/node-name"] == ["kjobs-node"]
    up.ok("delete", "pod", "holder", "--grace-period=0", "--force")
    _until(lambda: up("get", "pod", "holder")[0] == 1 or None, "holder gone")
    code, out = _as_token(up, token, "auth", "whoami")
    assert code == 1 and "Unauthorized" in out


JOINED_SCRIPT = """
import os
from kubernetes import client, config
config.load_incluster_config()
print("host", os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"])
print("backend", os.environ.get("BACKEND_SERVICE_HOST"), os.environ.get("BACKEND_SERVICE_PORT"))
me = client.CoreV1Api().read_namespaced_pod(os.environ["HOSTNAME"], "default")
print("on", me.spec.node_name)
"""


@pytest.mark.skipif(not mounting_enabled(), reason="no mount namespace can be made here")
def test_a_joined_nodes_pod_reaches_the_api_with_a_token_the_agent_requested(up: Up, tmp_path: Path) -> None:
    """`kjobs node join`: the agent requests its pods' tokens with its own credentials and points
    `KUBERNETES_SERVICE_HOST`/`PORT` at the server it reaches; its Services informer gives the service links."""
    up.ok("create", "serviceaccount", "self-reader")
    up.ok("create", "role", "self-reader", "--verb=get", "--resource=pods")
    up.ok("create", "rolebinding", "self-reader", "--role=self-reader", "--serviceaccount=default:self-reader")
    up.ok("create", "service", "clusterip", "backend", "--tcp=80:8080")
    backend_ip = up.ok("get", "service", "backend", "-o", "jsonpath={.spec.clusterIP}")
    argv = [sys.executable, "-m", "kjobs", "node", "join", "--kubeconfig", str(up.config), "--name", "joined-1"]
    log = (tmp_path / "agent.log").open("wb")
    agent = subprocess.Popen([*argv, "--root-dir", str(tmp_path / "joined-1")], stderr=log)
    try:
        _until(lambda: "True" in up("get", "node", "joined-1", "-o", _READY)[1] or None, "joined-1 ready")
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "joined-reader"},
            "spec": {
                "nodeName": "joined-1",
                "serviceAccountName": "self-reader",
                "restartPolicy": "Never",
                "containers": [{"name": "main", "image": "python", "command": [sys.executable, "-c", JOINED_SCRIPT]}],
            },
        }
        up.ok("apply", "-f", "-", stdin=json.dumps(pod))

        def ended() -> str | None:
            phase = up.ok("get", "pod", "joined-reader", "-o", "jsonpath={.status.phase}")
            return phase if phase in ("Succeeded", "Failed") else None

        assert _until(ended, "joined-reader ended") == "Succeeded", up.ok("logs", "joined-reader")
        server = up.ok("config", "view", "-o", "jsonpath={.clusters[0].cluster.server}")
        host, port = server.removeprefix("https://").rsplit(":", 1)
        logs = up.ok("logs", "joined-reader")
        assert f"host {host} {port}" in logs
        assert f"backend {backend_ip} 80" in logs
        assert "on joined-1" in logs
    finally:
        agent.terminate()
        try:
            agent.wait(timeout=30)
        except subprocess.TimeoutExpired:
            agent.kill()
            agent.wait()
        log.close()
        up("delete", "node", "joined-1", "--wait=false")


_READY = "jsonpath={.status.conditions[?(@.type=='Ready')].status}"
