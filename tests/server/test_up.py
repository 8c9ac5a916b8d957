"""`kjobs up` as a user runs it: kubeconfig written, export line printed quickly, resumable, TLS beyond loopback."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import yaml

pytestmark = pytest.mark.e2e

READY_LIMIT = 2.0
KJOBS = [sys.executable, "-c", "from kjobs.cli import main; main()"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


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


def _server(kubeconfig: Path) -> str:
    doc = yaml.safe_load(kubeconfig.read_text())
    assert doc["current-context"] == "kjobs"
    server: str = doc["clusters"][0]["cluster"]["server"]
    return server


def test_up_writes_kubeconfig_is_ready_fast_and_resumes(tmp_path: Path) -> None:
    port, data, config = _free_port(), tmp_path / "data", tmp_path / "kc.yaml"
    args = ("--port", str(port), "--data-dir", str(data), "--kubeconfig", str(config))
    with _up(tmp_path, *args) as (proc, line, elapsed):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        assert elapsed < READY_LIMIT
        url = _server(config)
        assert url == f"http://127.0.0.1:{port}"
        created = httpx.post(f"{url}/api/v1/nodes", json={"metadata": {"name": "kept"}})
        assert created.status_code == 201
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0  # graceful shutdown
    with _up(tmp_path, *args) as (_, line, _elapsed):
        assert line.startswith("export KUBECONFIG=")
        names = [n["metadata"]["name"] for n in httpx.get(f"{url}/api/v1/nodes").json()["items"]]
        assert names == ["kept", "kjobs-node"]  # the resumed object, and the local node agent's Node
        assert {n["metadata"]["name"] for n in httpx.get(f"{url}/api/v1/namespaces").json()["items"]} >= {
            "default",
            "kube-system",
            "kube-node-lease",
        }


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


def test_up_beyond_loopback_serves_tls_and_requires_the_token(tmp_path: Path) -> None:
    port, config = _free_port(), tmp_path / "kc.yaml"
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
        token = doc["users"][0]["user"]["token"]
        url = f"https://127.0.0.1:{port}"
        with httpx.Client(verify=False) as http:
            assert http.get(f"{url}/api/v1/pods").status_code == 401
            ok = http.get(f"{url}/api/v1/pods", headers={"Authorization": f"Bearer {token}"})
            assert ok.status_code == 200 and ok.json()["kind"] == "PodList"
        if shutil.which("kubectl"):  # kubectl verifies the certificate from the kubeconfig and sends the token
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
    port, config = _free_port(), tmp_path / "kc.yaml"
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
        metrics = httpx.get(f"http://127.0.0.1:{port}/metrics").text
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
    port, config = _free_port(), tmp_path / "kc.yaml"
    flags = ("--default-not-ready-toleration-seconds", "10", "--default-unreachable-toleration-seconds", "20")
    args = ("--port", str(port), "--data-dir", str(tmp_path / "d"), "--kubeconfig", str(config), "--nodes", "0")
    with _up(tmp_path, *args, *flags) as (proc, line, _elapsed):
        assert line.startswith("export KUBECONFIG="), proc.stderr.read() if proc.stderr else ""
        pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
        created = httpx.post(f"{_server(config)}/api/v1/namespaces/default/pods", json=pod)
        assert created.status_code == 201
        assert [(t["key"], t["tolerationSeconds"]) for t in created.json()["spec"]["tolerations"]] == [
            ("node.kubernetes.io/not-ready", 10),
            ("node.kubernetes.io/unreachable", 20),
        ]
