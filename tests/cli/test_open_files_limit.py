"""kjobs runs with its soft open-files limit raised to the hard one, as Go raises it for every Kubernetes
component (`kjobs.rlimits`): a wide Job under a shell's low soft limit starts all its pods (docs/exhaust41.md),
and its containers start with the soft limit kjobs was given, as a Go parent's children do."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kjobs import rlimits
from kjobs.rlimits import containers_open_files_limit, raise_open_files_limit

PODS = 40


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's record of the limit it started with is the test's own (in-process clusters read it)."""
    monkeypatch.setattr(rlimits, "_started_with", None)


def test_the_soft_limit_is_raised_to_the_hard_one() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
        now = raise_open_files_limit()
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == now > 64
        assert containers_open_files_limit() == 64
        raise_open_files_limit()
        assert containers_open_files_limit() == 64, "a second raise keeps the limit the process started with"
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_limit_with_no_room_is_left_as_it_is() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert raise_open_files_limit() == resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.e2e
def test_a_wide_job_under_a_low_soft_limit_starts_every_pod(tmp_path: Path) -> None:
    """Under `ulimit -Sn 64` the process shims ran out of descriptors at about 20 running containers: before, 44
    of 60 such pods ended `StartError` ("failed to create container log pipe: Too many open files"). Each
    container still sees the 64 it was given (`ulimit -n`), not the raised limit kjobs runs with."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 1024:
        pytest.skip("the hard open-files limit leaves no room to raise")
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "wide"},
        "spec": {
            "completions": PODS,
            "parallelism": PODS,
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", "ulimit -n; sleep 2"]}],
                }
            },
        },
    }
    manifest = tmp_path / "job.yaml"
    manifest.write_text(yaml.safe_dump(job))

    def low() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))

    done = subprocess.run(
        [sys.executable, "-m", "kjobs", "run", str(manifest), "--plain", "--logs"],
        capture_output=True,
        text=True,
        timeout=240,
        preexec_fn=low,
        env={**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)},
    )
    assert "Too many open files" not in done.stdout
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"succeeded: {PODS}  failed: 0" in done.stdout
    limits = [line.rsplit("] ", 1)[1] for line in done.stdout.splitlines() if line.startswith("[wide-")]
    assert limits == ["64"] * PODS
