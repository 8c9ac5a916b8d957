"""`kjobs up` as a user runs it: kubeconfig written, export line printed quickly, resumable, TLS and credentials on
every address (plain http only with --insecure-http-loopback)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from kjobs.client.kubeconfig import load
from kjobs.server import tls
from tests.support import free_port

pytestmark = pytest.mark.e2e

READY_BOUND = 30.0
"""Seconds `kjobs up` may take to say it is ready: a bound that catches a hang, not a speed figure (speed is
measured by the benchmarks, and a loaded 2-core CI machine is slow to start processes)."""
KJOBS = [sys.executable, "-c", "from kjobs.cli import main; main()"]


@contextmanager
def _up(tmp: Path, *args: str) -> Iterator[tuple[subprocess.Popen[str], str, float]]:
    env = {**os.environ, "HOME": str(tmp / "home")}
    start = time.monotonic()
    proc = subprocess.Popen([*KJOBS, "up", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # blocks until the server is ready (or the process died)
        elapsed = time.monotonic() - start
        yield proc, line.strip(), elapsed
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _client(kubeconfig: Path) -> httpx.Client:
    """An HTTP client with what the kubeconfig carries (read by kjobs' own kubeconfig loader)."""
    connection = load(kubeconfig)
    headers = {"Authorization": f"Bearer {connection.token}"} if connection.token else {}
    return httpx.Client(base_url=connection.server, verify=connection.ssl_context or False, headers=headers)


def _server(kubeconfig: Path) -> str:
    doc = yaml.safe_load(kubeconfig.read_text())
    assert doc["current-context"] == "kjobs"
    server: str = doc["clusters"][0]["cluster"]["server"]
    return server


def test_up_writes_kubeconfig_is_ready_and_resumes(tmp_path: Path) -> None:
    port, data, config = free_port(), tmp_path / "data", tmp_path / "kc.yaml"
    args = ("--port", str(port), "--data-dir", str(data), "--kubeconfig", str(config))
    with _up(tmp_path, *args) as (proc, line, elapsed):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        assert elapsed < READY_BOUND
        url = _server(config)
        assert url == f"https://127.0.0.1:{port}"
        assert oct(config.stat().st_mode & 0o777) == "0o600"
        with httpx.Client(verify=ssl.create_default_context(cafile=data / "pki" / "ca.crt")) as anonymous:
            refused = anonymous.post(f"{url}/api/v1/nodes", json={"metadata": {"name": "intruder"}})
            assert refused.status_code == 401 and refused.json()["reason"] == "Unauthorized"
            assert anonymous.get(f"{url}/readyz").status_code == 200
        with _client(config) as http:
            created = http.post("/api/v1/nodes", json={"metadata": {"name": "kept"}})
        assert created.status_code == 201
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0  # graceful shutdown
    with _up(tmp_path, *args) as (_, line, _elapsed):
        assert line.startswith("export KUBECONFIG=")
        # the official Python client, through the kubeconfig (the same CA and certificate: the PKI was reused)
        with k8s.ApiClient(_python_config(config)) as api:
            core = k8s.CoreV1Api(api)
            names = [n.metadata.name for n in core.list_node().items]
            assert names == ["kept", "kjobs-node"]  # the resumed object, and the local node agent's Node
            assert {n.metadata.name for n in core.list_namespace().items} >= {
                "default",
                "kube-system",
                "kube-node-lease",
            }


def _python_config(kubeconfig: Path) -> k8s.Configuration:
    configuration = k8s.Configuration()
    k8s_config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
    return configuration


def test_up_refuses_a_busy_port(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run(
            [*KJOBS, "up", "--port", str(port), "--data-dir", str(tmp_path / "d"), "--kubeconfig", str(tmp_path / "k")],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert proc.returncode == 1
    assert f"Error: cannot listen on 127.0.0.1:{port}" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_up_beyond_loopback_serves_tls_and_refuses_other_servers_credentials(tmp_path: Path) -> None:
    port, config = free_port(), tmp_path / "kc.yaml"
    other = tls.ensure(tmp_path / "other" / "pki", "127.0.0.1")  # another server's data directory
    # 0.0.0.0 is "elsewhere"; the test only ever connects to 127.0.0.1
    with _up(
        tmp_path,
        "--host",
        "0.0.0.0",
        "--port",
        str(port),
        "--data-dir",
        str(tmp_path / "d"),
        "--kubeconfig",
        str(config),
    ) as (_, line, _elapsed):
        assert line.startswith("export KUBECONFIG=")
        doc = yaml.safe_load(config.read_text())
        assert doc["clusters"][0]["cluster"]["server"] == f"https://0.0.0.0:{port}"
        assert doc["clusters"][0]["cluster"]["certificate-authority-data"]
        assert doc["users"][0]["user"]["client-certificate-data"] and doc["users"][0]["user"]["client-key-data"]
        token = (tmp_path / "d" / "pki" / "token").read_text().strip()
        url = f"https://127.0.0.1:{port}"
        with httpx.Client(verify=ssl.create_default_context(cafile=tmp_path / "d" / "pki" / "ca.crt")) as http:
            pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
            for headers in ({}, {"content-type": "text/plain"}, {"Authorization": f"Bearer {other.token}"}):
                refused = http.post(f"{url}/api/v1/namespaces/default/pods", json=pod, headers=headers)
                assert refused.status_code == 401, headers
            assert http.get(f"{url}/api/v1/namespaces/default/pods/p").status_code == 401
            ok = http.get(f"{url}/api/v1/pods", headers={"Authorization": f"Bearer {token}"})
            assert ok.status_code == 200 and ok.json()["items"] == []
        if shutil.which("kubectl"):  # kubectl verifies the server and presents the admin certificate
            env = {"HOME": str(tmp_path / "home"), "KUBECONFIG": str(config), "PATH": "/usr/local/bin:/usr/bin:/bin"}
            out = subprocess.run(
                ["kubectl", "get", "namespace", "default", "-o", "name"],
                capture_output=True,
                text=True,
                env=env,
                timeout=30,
            )
            assert out.returncode == 0 and out.stdout.strip() == "namespace/default", out.stderr


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_up_runs_a_job_to_completion_for_kubectl(tmp_path: Path) -> None:
    port, config = free_port(), tmp_path / "kc.yaml"
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "hello"},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", "echo hello-from-up"]}
                    ],
                }
            },
        },
    }
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    env = {"HOME": str(tmp_path / "home"), "KUBECONFIG": str(config), "PATH": "/usr/local/bin:/usr/bin:/bin"}

    def kubectl(*args: str) -> str:
        proc = subprocess.run(["kubectl", *args], capture_output=True, text=True, env=env, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout.strip()

    with _up(tmp_path, "--port", str(port), "--data-dir", str(tmp_path / "d"), "--kubeconfig", str(config)) as (
        _,
        line,
        _elapsed,
    ):
        assert line.startswith("export KUBECONFIG=")
        assert kubectl("create", "-f", str(tmp_path / "job.yaml")) == "job.batch/hello created"
        assert kubectl("wait", "--for=condition=Complete", "job/hello", "--timeout=30s") == (
            "job.batch/hello condition met"
        )
        assert kubectl("logs", "job/hello") == "hello-from-up"
        with _client(config) as http:
            metrics = http.get("/metrics").text
        assert "job_controller_job_syncs_total" in metrics


def test_a_second_up_on_a_data_dir_in_use_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "d"
    with _up(tmp_path, "--port", "0", "--data-dir", str(data), "--kubeconfig", str(tmp_path / "k1")) as (_, line, _e):
        assert line.startswith("export KUBECONFIG=")
        second = subprocess.run(
            [*KJOBS, "up", "--port", "0", "--data-dir", str(data), "--kubeconfig", str(tmp_path / "k2")],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert second.returncode == 1
    assert f"Error: cannot open the data directory {data}: " in second.stderr and "in use" in second.stderr


def test_up_takes_the_default_toleration_seconds_flags(tmp_path: Path) -> None:
    port, config = free_port(), tmp_path / "kc.yaml"
    flags = ("--default-not-ready-toleration-seconds", "10", "--default-unreachable-toleration-seconds", "20")
    args = ("--port", str(port), "--data-dir", str(tmp_path / "d"), "--kubeconfig", str(config), "--nodes", "0")
    with _up(tmp_path, *args, *flags) as (proc, line, _elapsed):
        assert line.startswith("export KUBECONFIG="), proc.stderr.read() if proc.stderr else ""
        pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
        with _client(config) as http:
            created = http.post("/api/v1/namespaces/default/pods", json=pod)
        assert created.status_code == 201
        assert [(t["key"], t["tolerationSeconds"]) for t in created.json()["spec"]["tolerations"]] == [
            ("node.kubernetes.io/not-ready", 10),
            ("node.kubernetes.io/unreachable", 20),
        ]


def test_insecure_http_loopback_serves_plain_http_with_a_warning(tmp_path: Path) -> None:
    port, config = free_port(), tmp_path / "kc.yaml"
    args = ("--port", str(port), "--data-dir", str(tmp_path / "d"), "--kubeconfig", str(config), "--nodes", "0")
    with _up(tmp_path, *args, "--insecure-http-loopback") as (proc, line, _elapsed):
        assert line.startswith("export KUBECONFIG=")
        assert _server(config) == f"http://127.0.0.1:{port}"
        assert httpx.get(f"http://127.0.0.1:{port}/api/v1/pods").status_code == 200  # no credentials needed
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert proc.stderr is not None
        assert "WARNING: --insecure-http-loopback: plain http, no authentication" in proc.stderr.read()
    assert not (tmp_path / "d" / "pki").exists()


def test_insecure_http_is_refused_beyond_loopback(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*KJOBS, "up", "--host", "0.0.0.0", "--insecure-http-loopback", "--data-dir", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert proc.returncode == 2
    assert "0.0.0.0 is not a loopback address; plain http is only served on loopback" in proc.stderr


def test_up_takes_min_request_timeout_for_watches_without_timeout_seconds(tmp_path: Path) -> None:
    """`--min-request-timeout` (kube-apiserver's flag, 1800 s by default): a watch that names no `timeoutSeconds`
    ends after one to two times it (1 s here; the bound is generous for a loaded machine)."""
    port, config = free_port(), tmp_path / "kc.yaml"
    args = ("--port", str(port), "--data-dir", str(tmp_path / "d"), "--kubeconfig", str(config), "--nodes", "0")
    with _up(tmp_path, *args, "--min-request-timeout", "1") as (proc, line, _elapsed):
        assert line.startswith("export KUBECONFIG="), proc.stderr.read() if proc.stderr else ""
        with _client(config) as http:
            started = time.monotonic()
            with http.stream("GET", "/api/v1/namespaces/default/pods?watch=true", timeout=60) as response:
                assert response.status_code == 200
                assert [line for line in response.iter_lines() if line] == []
            assert 1.0 <= time.monotonic() - started < 30


def test_up_min_request_timeout_flag_says_what_kube_apiserver_says(tmp_path: Path) -> None:
    """The flag's help is kube-apiserver's; a negative value is refused as its options validation refuses it."""
    env = {**os.environ, "HOME": str(tmp_path)}
    shown = subprocess.run([*KJOBS, "up", "--help"], capture_output=True, text=True, timeout=60, env=env)
    assert "--min-request-timeout INTEGER" in shown.stdout
    assert " ".join(shown.stdout.split()).count(
        "An optional field indicating the minimum number of seconds a handler must keep a request open before "
        "timing it out. Currently only honored by the watch request handler, which picks a randomized value above "
        "this number as the connection timeout, to spread out load. [default: 1800]"
    )
    refused = subprocess.run(
        [*KJOBS, "up", "--min-request-timeout", "-1", "--data-dir", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert refused.returncode == 2
    assert "Error: --min-request-timeout can not be negative value" in refused.stderr


@pytest.mark.parametrize(("flag", "threshold"), [(None, 12500), (100, 100), (0, 0), (-5, 0)])
def test_up_terminated_pod_gc_threshold_reaches_the_pod_gc(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: int | None, threshold: int
) -> None:
    """kube-controller-manager's `--terminated-pod-gc-threshold` (12500 by default; <= 0 disables the terminated
    pod GC): the pod GC `kjobs up` runs keeps that many terminated pods."""
    import kjobs.cluster
    import kjobs.job.metrics
    from kjobs.cli.up import _assemble
    from kjobs.store import MemoryStore

    class Assembled:  # the cluster as assembled, not started (its metrics would go in the process's registry)
        def __init__(self, service: object, *, settings: object, **_: object) -> None:
            self.settings, self.controllers = settings, []

    monkeypatch.setattr(kjobs.cluster, "LocalCluster", Assembled)
    monkeypatch.setattr(kjobs.job.metrics, "JobMetrics", lambda registry: None)
    extra = {} if flag is None else {"terminated_pod_gc_threshold": flag}
    cluster, _app = _assemble(MemoryStore(), authenticator=None, nodes=0, data=tmp_path, **extra)
    assert cluster.settings.pod_gc.terminated_pod_threshold == threshold
