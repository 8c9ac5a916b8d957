"""`kjobs run` says when a container's liveness or startup probe killed it (`RunView.container_event`): the run
records no Events, and the exit alone (137: SIGKILL at the end of a 1 s grace, as `sleep` takes no SIGTERM) does not
say why, where `kubectl describe pod` on a cluster shows the kubelet's `Unhealthy` and `Killing` events
(docs/lifecycle41.md). Before, the lines read `exited with code ...` only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

JOB = """apiVersion: batch/v1
kind: Job
metadata: {{name: {name}}}
spec:
  backoffLimit: {retries}
  template:
    spec:
      restartPolicy: {restart}
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox
        command: [sh, -c, "sleep 300"]
        {probe}:
          exec: {{command: [sh, -c, "echo no /ready; exit 1"]}}
          periodSeconds: 1
          failureThreshold: 1
"""


def _run(tmp_path: Path, **fields: object) -> str:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(JOB.format(**fields))
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "kjobs", "run", str(manifest), "--plain", "--backoff", "0.2", "--timeout", "60"],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)},
    )
    assert done.returncode == 1, done.stdout + done.stderr  # the Job fails
    return done.stdout


def test_a_pod_its_liveness_probe_killed_says_so(tmp_path: Path) -> None:
    out = _run(tmp_path, name="live", retries=0, restart="Never", probe="livenessProbe")
    failed = [line for line in out.splitlines() if line.startswith("pod live-") and " failed: " in line]
    assert failed, out
    assert failed[0].endswith(
        "failed: container main exited with code 137, killed after its liveness probe failed"
        " (Liveness probe failed: no /ready) → counts toward backoffLimit (0)"
    ), out
    assert "  - " + failed[0] in out  # and in the summary


def test_a_restart_after_a_startup_probe_kill_says_so(tmp_path: Path) -> None:
    out = _run(tmp_path, name="start", retries=1, restart="OnFailure", probe="startupProbe")
    restarted = [line for line in out.splitlines() if " restarted (" in line]
    assert restarted, out
    assert restarted[0].endswith(
        "container main restarted (after exit code 137, restartCount 1): killed after its startup probe failed"
        " (Startup probe failed: no /ready) → restarts count toward backoffLimit (1)"
    ), out
