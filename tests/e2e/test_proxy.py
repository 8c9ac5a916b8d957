"""The proxy subresources on `kjobs up`, through the real kubectl: `kubectl get --raw` of each kubelet endpoint
of `nodes/{name}/proxy`, `kubectl proxy` then httpx to a pod's HTTP server (`pods/{name}[:port]/proxy`) and to a
Service in front of it (`services/[https:]{name}[:port]/proxy`), every proxied method, the errors a cluster gives
(a port nobody listens on, a pod with no IP yet, a pod that does not exist, a Service without ready endpoints or
without the port), and RBAC's refusal for a user without the subresource (docs/proxy.md)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import websocket

import kjobs
from tests.e2e.test_config_objects import Up, kubectl_on_up
from tests.e2e.test_python_clients import _until
from tests.support import free_port

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

PORT = free_port()
UNUSED = free_port()
NODE = "kjobs-node"

ECHO = """
import http.server, json, sys
class Echo(http.server.BaseHTTPRequestHandler):
    def answer(self):
        size = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(size).decode() if size else ""
        if self.path.startswith("/moved"):
            self.send_response(302)
            self.send_header("Location", "/elsewhere/")
            self.end_headers()
            return
        if self.path.startswith("/page"):
            page = b'<html><body><a href="/next/">next</a> <img src="logo.png"></body></html>'
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
            return
        data = json.dumps({"method": self.command, "path": self.path, "body": body,
                           "headers": {k.lower(): v for k, v in self.headers.items()}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = answer
    def log_message(self, *args):
        pass
print("echo serving", flush=True)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Echo).serve_forever()
"""


def _manifests() -> str:
    echo = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "echo", "labels": {"app": "echo"}},
        "spec": {
            "containers": [
                {
                    "name": "echo",
                    "image": "python",
                    "command": ["python3", "-c", ECHO, str(PORT)],
                    "ports": [{"name": "http", "containerPort": PORT}],
                    "readinessProbe": {"tcpSocket": {"port": PORT}, "periodSeconds": 1},
                }
            ]
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "echo"},
        "spec": {"selector": {"app": "echo"}, "ports": [{"name": "web", "port": 80, "targetPort": "http"}]},
    }
    lonely = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "lonely"},
        "spec": {"selector": {"app": "nobody"}, "ports": [{"name": "web", "port": 80}]},
    }
    stuck = {  # never scheduled: no node has this label, so it never gets an IP
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "stuck"},
        "spec": {"nodeSelector": {"kjobs.test/none": "x"}, "containers": [{"name": "c", "image": "python"}]},
    }
    done = {  # ends at once: not running any more
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "done"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "python", "command": ["true"]}]},
    }
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [echo, service, lonely, stuck, done]})


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("proxy")) as kubectl:
        kubectl.ok("apply", "-f", "-", stdin=_manifests())
        kubectl.ok("wait", "--for=condition=Ready", "pod/echo", "--timeout=60s", timeout=70)
        kubectl.ok("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/done", "--timeout=60s", timeout=70)
        _until(
            lambda: kubectl.ok("get", "endpoints", "echo", "-o", "jsonpath={.subsets[0].addresses[0].ip}") or None,
            "the echo Service's endpoint",
        )
        yield kubectl


@pytest.fixture(scope="module")
def http(up: Up) -> Iterator[httpx.Client]:
    """`kubectl proxy` on a free port, and an httpx client to it."""
    port = free_port()
    env = {"HOME": str(up.home), "KUBECONFIG": str(up.config), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    proc = subprocess.Popen(
        ["kubectl", "proxy", f"--port={port}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "Starting to serve" in line, line
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            yield client
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)


POD = f"/api/v1/namespaces/default/pods/echo:{PORT}/proxy"


# ------------------------------------------------------------------------------------------ nodes/proxy


def test_node_healthz_and_unserved_endpoints(up: Up) -> None:
    assert up.ok("get", "--raw", f"/api/v1/nodes/{NODE}/proxy/healthz") == "ok"
    assert up.ok("get", "--raw", f"/api/v1/nodes/{NODE}/proxy/healthz/syncloop") == "ok"
    for path in ("spec", "metrics/cadvisor", "logs/", "debug/pprof/"):  # what v1.32's kubelet or kjobs has not
        code, out = up("get", "--raw", f"/api/v1/nodes/{NODE}/proxy/{path}")
        assert code == 1 and "(NotFound)" in out, (path, out)


def test_node_pods_and_configz(up: Up) -> None:
    pods = json.loads(up.ok("get", "--raw", f"/api/v1/nodes/{NODE}/proxy/pods"))
    assert pods["kind"] == "PodList"
    assert "echo" in [p["metadata"]["name"] for p in pods["items"]]
    assert "stuck" not in [p["metadata"]["name"] for p in pods["items"]]
    config = json.loads(up.ok("get", "--raw", f"/api/v1/nodes/{NODE}/proxy/configz"))["kubeletconfig"]
    assert config["kind"] == "KubeletConfiguration"
    assert config["apiVersion"] == "kubelet.config.k8s.io/v1beta1"
    assert config["maxPods"] == 110
    assert config["nodeLeaseDurationSeconds"] == 40


def test_node_stats_summary(up: Up) -> None:
    summary = json.loads(up.ok("get", "--raw", f"/api/v1/nodes/{NODE}/proxy/stats/summary"))
    node = summary["node"]
    assert node["nodeName"] == NODE
    assert node["cpu"]["usageCoreNanoSeconds"] > 0 and node["memory"]["workingSetBytes"] > 0
    (echo,) = [p for p in summary["pods"] if p["podRef"]["name"] == "echo"]
    assert echo["podRef"]["namespace"] == "default"
    (container,) = echo["containers"]
    assert container["name"] == "echo"
    assert container["memory"]["workingSetBytes"] > 1_000_000  # a Python interpreter's resident set
    assert echo["memory"]["workingSetBytes"] == container["memory"]["workingSetBytes"]


def test_node_resource_metrics(up: Up) -> None:
    text = up.ok("get", "--raw", f"/api/v1/nodes/{NODE}/proxy/metrics/resource")
    assert "# TYPE container_cpu_usage_seconds_total counter" in text
    assert re.search(r'^container_memory_working_set_bytes\{container="echo",namespace="default",pod="echo"\} \d+ \d+$',
                     text, re.M), text  # fmt: skip
    assert re.search(r'^pod_cpu_usage_seconds_total\{namespace="default",pod="echo"\} [\d.e-]+ \d+$', text, re.M)
    assert re.search(r"^node_memory_working_set_bytes \d+ \d+$", text, re.M)
    assert text.endswith("resource_scrape_error 0")


def test_node_container_logs(up: Up) -> None:
    assert up.ok("get", "--raw", f"/api/v1/nodes/{NODE}/proxy/containerLogs/default/echo/echo") == "echo serving"


def test_node_errors(up: Up) -> None:
    code, out = up("get", "--raw", "/api/v1/nodes/nowhere/proxy/healthz")
    assert code == 1 and 'nodes "nowhere" not found' in out
    code, out = up("get", "--raw", f"/api/v1/nodes/{NODE}:22/proxy/healthz")
    assert code == 1 and "(ServiceUnavailable)" in out and "not to port 22" in out


# ------------------------------------------------------------------------------------------ pods/proxy


def test_pod_proxy_passes_path_query_and_headers_without_credentials(http: httpx.Client) -> None:
    answer = http.get(f"{POD}/a/b/?x=1&y=2", headers={"X-Custom": "kept"})
    assert answer.status_code == 200
    assert "access-control-allow-origin" not in answer.headers  # removeCORSHeaders
    echoed = answer.json()
    assert (echoed["method"], echoed["path"]) == ("GET", "/a/b/?x=1&y=2")
    headers = echoed["headers"]
    assert headers["x-custom"] == "kept"
    assert "authorization" not in headers  # kubectl proxy's credential stops at the API server
    assert headers["x-forwarded-uri"] == f"{POD}/a/b/"
    assert headers["x-forwarded-for"]


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
def test_pod_proxy_methods_carry_their_bodies(http: httpx.Client, method: str) -> None:
    answer = http.request(method, f"{POD}/items", content=b"payload=1")
    assert answer.status_code == 200, answer.text
    assert answer.json()["method"] == method
    assert answer.json()["body"] == "payload=1"


def test_pod_proxy_head_and_default_port(http: httpx.Client) -> None:
    head = http.head(f"{POD}/x")
    assert head.status_code == 200 and head.content == b""
    named = http.get("/api/v1/namespaces/default/pods/echo/proxy/first-port")  # the first declared port
    assert named.json()["path"] == "/first-port"


def test_pod_proxy_redirects_an_empty_path_and_rewrites_a_backends_location(http: httpx.Client) -> None:
    moved = http.get(f"{POD}?q=1")
    assert moved.status_code == 301
    assert moved.headers["location"] == f"{POD}/?q=1"
    redirected = http.get(f"{POD}/moved")
    assert redirected.status_code == 302
    assert redirected.headers["location"] == f"{POD}/elsewhere/"


def test_service_proxy_rewrites_absolute_links_of_html(http: httpx.Client) -> None:
    base = "/api/v1/namespaces/default/services/echo:web/proxy"
    page = http.get(f"{base}/page")
    assert page.status_code == 200
    assert page.text == f'<html><body><a href="{base}/next/">next</a> <img src="logo.png"></body></html>'


def test_pod_proxy_errors(up: Up, http: httpx.Client) -> None:
    refused = http.get(f"/api/v1/namespaces/default/pods/echo:{UNUSED}/proxy/")
    assert refused.status_code == 503
    assert refused.json()["message"] == (
        f"error trying to reach service: dial tcp 127.0.0.1:{UNUSED}: connect: connection refused"
    )
    no_ip = http.get("/api/v1/namespaces/default/pods/stuck:80/proxy/")
    assert (no_ip.status_code, no_ip.json()["message"]) == (400, "address not allowed")
    ended = http.get("/api/v1/namespaces/default/pods/done:80/proxy/")  # keeps its IP; nothing listens any more
    assert (ended.status_code, ended.json()["message"]) == (
        503,
        "error trying to reach service: dial tcp 127.0.0.1:80: connect: connection refused",
    )
    missing = http.get("/api/v1/namespaces/default/pods/ghost/proxy/")
    assert (missing.status_code, missing.json()["message"]) == (404, 'pods "ghost" not found')
    assert http.request("TRACE", f"{POD}/").status_code == 405
    code, out = up("get", "--raw", f"/api/v1/namespaces/default/pods/echo:{UNUSED}/proxy/")
    assert code == 1
    assert f"Error from server (ServiceUnavailable): error trying to reach service: dial tcp 127.0.0.1:{UNUSED}" in out


def test_pod_proxy_refuses_a_websocket_upgrade(http: httpx.Client) -> None:
    """kubectl proxy passes the upgrade on; kjobs answers it with a Status instead of proxying it."""
    url = str(http.base_url).rstrip("/").replace("http://", "ws://") + f"{POD}/ws"
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        websocket.create_connection(url, timeout=10)
    assert refused.value.status_code == 400
    assert b"pods/proxy does not serve upgrades (websocket) on kjobs" in (refused.value.resp_body or b"")


# ------------------------------------------------------------------------------------------ services/proxy


def test_service_proxy_by_port_name_and_number(http: httpx.Client) -> None:
    for port in ("web", "80"):
        answer = http.post(f"/api/v1/namespaces/default/services/echo:{port}/proxy/svc?z=9", content=b"hi")
        assert answer.status_code == 200, answer.text
        assert (answer.json()["path"], answer.json()["body"]) == ("/svc?z=9", "hi")


def test_the_official_python_clients_proxy_calls(up: Up) -> None:
    """`CoreV1Api.connect_*_proxy_with_path` and `connect_get_node_proxy_with_path`, as scripts call them."""
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config

    core = k8s_client.CoreV1Api(k8s_config.new_client_from_config(str(up.config)))
    echoed = core.connect_post_namespaced_service_proxy_with_path("echo:web", "default", "from-python", path2="q")
    # `path2` is sent as `?path=q`, and the query goes to the backend as sent
    assert json.loads(echoed.replace("'", '"'))["path"] == "/from-python?path=q"
    pod = json.loads(core.connect_get_namespaced_pod_proxy_with_path(f"echo:{PORT}", "default", "x").replace("'", '"'))
    assert pod["method"] == "GET" and pod["path"] == "/x"
    assert core.connect_get_node_proxy_with_path(NODE, "healthz") == "ok"


def test_service_proxy_errors(up: Up, http: httpx.Client) -> None:
    cases = {
        "/api/v1/namespaces/default/services/lonely:web/proxy/": (503, 'no endpoints available for service "lonely"'),
        "/api/v1/namespaces/default/services/echo/proxy/": (503, 'no endpoints available for service "echo"'),
        "/api/v1/namespaces/default/services/echo:81/proxy/": (503, 'no service port 81 found for service "echo"'),
        "/api/v1/namespaces/default/services/ghost:web/proxy/": (404, 'endpoints "ghost" not found'),
        "/api/v1/namespaces/default/services/https:echo:web/proxy/": (
            503,
            "error trying to reach service: tls: first record does not look like a TLS handshake",
        ),
    }
    for path, (code, message) in cases.items():
        answer = http.get(path)
        assert (answer.status_code, answer.json()["message"]) == (code, message), path
    code, out = up("get", "--raw", "/api/v1/namespaces/default/services/lonely:web/proxy/")
    assert code == 1 and 'Error from server (ServiceUnavailable): no endpoints available for service "lonely"' in out


# ------------------------------------------------------------------------------------------ a joined node


def test_a_joined_agents_kubelet_endpoints(up: Up, tmp_path: Path) -> None:
    """`kjobs node join`: the API server asks the agent's HTTPS endpoint with its kubelet client certificate."""
    env = {**os.environ, "PYTHONPATH": str(Path(kjobs.__file__).parent.parent)}
    argv = [sys.executable, "-m", "kjobs", "node", "join", "--kubeconfig", str(up.config), "--name", "joined",
            "--root-dir", str(tmp_path / "joined")]  # fmt: skip
    agent = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        _until(lambda: up("get", "--raw", "/api/v1/nodes/joined/proxy/healthz") == (0, "ok") or None, "the agent")
        pods = json.loads(up.ok("get", "--raw", "/api/v1/nodes/joined/proxy/pods"))
        assert pods["kind"] == "PodList" and pods["items"] == []
        config = json.loads(up.ok("get", "--raw", "/api/v1/nodes/joined/proxy/configz"))["kubeletconfig"]
        assert config["kind"] == "KubeletConfiguration" and config["port"] > 0
        code, out = up("get", "--raw", "/api/v1/nodes/joined/proxy/spec")
        assert code == 1 and "(NotFound)" in out
    finally:
        agent.terminate()
        agent.wait(30)


# ------------------------------------------------------------------------------------------ RBAC, discovery


def test_rbac_refuses_a_user_without_the_subresource(up: Up) -> None:
    paths = {
        f"/api/v1/nodes/{NODE}/proxy/healthz": f'nodes "{NODE}" is forbidden: User "jane" cannot get resource '
        '"nodes/proxy" in API group "" at the cluster scope',
        f"/api/v1/namespaces/default/pods/echo:{PORT}/proxy/": f'pods "echo:{PORT}" is forbidden: User "jane" '
        'cannot get resource "pods/proxy" in API group "" in the namespace "default"',
        "/api/v1/namespaces/default/services/echo:web/proxy/": 'services "echo:web" is forbidden: User "jane" '
        'cannot get resource "services/proxy" in API group "" in the namespace "default"',
    }
    for path, message in paths.items():
        code, out = up("get", "--raw", path, "--as=jane")
        assert code == 1 and f"Error from server (Forbidden): {message}" in out, out
    up.ok("create", "clusterrolebinding", "jane-kubelet-api", "--clusterrole=system:kubelet-api-admin", "--user=jane")
    deadline = time.monotonic() + 10
    while up("get", "--raw", f"/api/v1/nodes/{NODE}/proxy/healthz", "--as=jane")[0] != 0:
        assert time.monotonic() < deadline, "the binding did not take effect"
        time.sleep(0.2)
    code, out = up("get", "--raw", f"/api/v1/namespaces/default/pods/echo:{PORT}/proxy/", "--as=jane")
    assert code == 1 and "(Forbidden)" in out  # the kubelet API admin has nodes/proxy, not pods/proxy


def test_discovery_lists_the_proxy_subresources(up: Up) -> None:
    resources = json.loads(up.ok("get", "--raw", "/api/v1"))["resources"]
    found = {r["name"]: (r["kind"], r["verbs"]) for r in resources if r["name"].endswith("/proxy")}
    verbs = ["create", "delete", "get", "patch", "update"]
    assert found == {
        "nodes/proxy": ("NodeProxyOptions", verbs),
        "pods/proxy": ("PodProxyOptions", verbs),
        "services/proxy": ("ServiceProxyOptions", verbs),
    }
