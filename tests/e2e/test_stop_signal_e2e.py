"""A podFailurePolicy rule on exit code 137 decides for a deleted container that takes no SIGTERM, as on a cluster
(docs/sigterm42.md): `sleep`, PID 1 of its container, ignores the deletion's SIGTERM and is SIGKILLed at the end
of its grace period. Through `kjobs up` with kubectl, and through `kjobs run --disrupt evict`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_config_objects import kubectl_on_up
from tests.e2e.test_python_clients import _until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


def job(name: str, flag: Path) -> dict[str, object]:
    """Its first pod sleeps until it is stopped (137 after a 1 s grace period: Ignore), the next exits 0; a 143
    (what a process-group SIGTERM gave) would fail the Job."""
    on_exit = [("FailJob", 143), ("Ignore", 137)]
    rules = [{"action": a, "onExitCodes": {"operator": "In", "values": [c]}} for a, c in on_exit]
    container = {
        "name": "main",
        "image": "busybox",
        "command": ["sh", "-c", f"test -e {flag} && exit 0; touch {flag}; sleep 60"],
    }
    template = {"spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 1, "containers": [container]}}
    spec = {"backoffLimit": 0, "podFailurePolicy": {"rules": rules}, "template": template}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


def test_kjobs_up_a_deleted_pod_that_takes_no_sigterm_ends_137_and_the_policy_ignores_it(tmp_path: Path) -> None:
    with kubectl_on_up(tmp_path) as up:
        up.ok("apply", "-f", "-", stdin=json.dumps(job("deleted", tmp_path / "ran")))
        pod = _until(lambda: up.ok("get", "pods", "-l", "job-name=deleted", "-o", "jsonpath={.items[0].metadata.name}")
                     or None, "the Job's pod")  # fmt: skip
        up.ok("wait", "--for=jsonpath={.status.phase}=Running", f"pod/{pod}", "--timeout=30s")
        up.ok("delete", "pod", pod, "--wait=false")
        up.ok("wait", "--for=condition=Complete", "job/deleted", "--timeout=30s")
        status = json.loads(up.ok("get", "job", "deleted", "-o", "json"))["status"]
        assert (status.get("succeeded"), status.get("failed", 0)) == (1, 0)


def test_kjobs_run_an_evicted_pod_that_takes_no_sigterm_ends_137_and_the_policy_ignores_it(tmp_path: Path) -> None:
    manifest = tmp_path / "job.json"
    manifest.write_text(json.dumps(job("evicted", tmp_path / "ran")))
    args = [
        sys.executable,
        "-m",
        "kjobs",
        "run",
        str(manifest),
        "--plain",
        "--disrupt",
        "evict",
        "--timeout",
        "60",
        "--backoff",
        "0.2",
    ]
    result = subprocess.run(args, capture_output=True, text=True, timeout=90, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Terminating (grace period 1s)\n" in result.stdout
    assert (
        "failed: container main exited with code 137 (SIGKILL at the end of its grace period of 1s: SIGTERM did"
        " not end it) → Ignore by rule 1: not counted, the pod is replaced\n"
    ) in result.stdout
