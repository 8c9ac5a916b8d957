"""`kjobs up` as a user starts and stops it: it says what it serves, and says when it stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_up_says_what_it_serves_and_when_it_stops(tmp_path: Path, signum: int) -> None:
    data, config = tmp_path / "data", tmp_path / "kc.yaml"
    args = ["up", "--port", "0", "--data-dir", str(data), "--kubeconfig", str(config), "--nodes", "2"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kjobs", *args, "--backoff", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline() == f"export KUBECONFIG={config}\n"  # once everything runs
        url = yaml.safe_load(config.read_text())["clusters"][0]["cluster"]["server"]
        proc.send_signal(signum)
        assert proc.wait(20) == 0
        assert proc.stderr.read().splitlines() == [
            f"kjobs API server listening on {url}",
            f"  kubeconfig: {config} (context kjobs)",
            f"  data:       {data}",
            f"  pki:        {data / 'pki'} (CA ca.crt, admin certificate, bearer token)",
            "  nodes:      kjobs-node, kjobs-node-2",
            f"kjobs API server on {url} stopped",
        ]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_up_backoff_sets_the_delay_before_a_failed_pod_is_replaced(tmp_path: Path) -> None:
    """With `--backoff 0.1` three failures take well under a second of back-off, not 10 s + 20 s."""
    import json
    import time

    import httpx

    from kjobs.client.kubeconfig import load

    config = tmp_path / "kc.yaml"
    args = ["up", "--port", "0", "--data-dir", str(tmp_path / "data"), "--kubeconfig", str(config), "--backoff", "0.1"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kjobs", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        connection = load(config)  # HTTPS, the CA and the admin certificate
        container = {"name": "main", "image": "x", "command": ["false"]}
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "flaky"},
            "spec": {"backoffLimit": 2, "template": {"spec": {"restartPolicy": "Never", "containers": [container]}}},
        }
        jobs = f"{connection.server}/apis/batch/v1/namespaces/default/jobs"
        http = httpx.Client(verify=connection.ssl_context or False, timeout=30)
        start = time.monotonic()
        assert http.post(jobs, json=job).status_code == 201
        watch = {"watch": "true", "fieldSelector": "metadata.name=flaky", "timeoutSeconds": "20"}
        failed = None
        with http.stream("GET", jobs, params=watch) as events:
            for line in events.iter_lines():
                status = json.loads(line)["object"].get("status") or {}
                if any(c["type"] == "Failed" for c in status.get("conditions") or ()):
                    failed = status
                    break
        assert failed is not None and failed["failed"] == 3
        assert time.monotonic() - start < 10
        http.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)


def test_up_that_cannot_write_its_kubeconfig_says_so_without_a_traceback(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    config = blocker / "kc.yaml"
    args = ["up", "--port", "0", "--data-dir", str(tmp_path / "data"), "--kubeconfig", str(config), "--nodes", "0"]
    result = subprocess.run(
        [sys.executable, "-m", "kjobs", *args], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 1
    assert result.stderr.startswith(f"Error: cannot write the kubeconfig {config}: ")
    assert "Traceback" not in result.stderr
