"""`kjobs run` of Jobs that read their volumes, as Kubernetes' own docs write them: each container sees its
emptyDir, downwardAPI, configMap and secret volumes at their mountPaths (`kjobs.node.mountns`), or, where no mount
namespace can be made (here: turned off), starts without them after the `VolumesNotMounted` warning."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kjobs.node.process_runtime import mounting_enabled

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
pytestmark = pytest.mark.e2e
needs_mounts = pytest.mark.skipif(not mounting_enabled(), reason="no mount namespace can be made here")


def kjobs_run(manifest: Path, *, mount: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("KJOBS_MOUNT_VOLUMES", None)
    if not mount:
        env["KJOBS_MOUNT_VOLUMES"] = "0"
    argv = [sys.executable, "-m", "kjobs", "run", str(manifest), "--plain", "--logs", "--timeout", "60"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=90, check=False, env=env)


def worker_lines(out: str) -> list[str]:
    return sorted(line.split("] ", 1)[1] for line in out.splitlines() if "/worker] " in line)


@needs_mounts
def test_the_indexed_job_docs_example_passes_its_input_through_an_empty_dir() -> None:
    result = kjobs_run(EXAMPLES / "indexed-job-emptydir.yaml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warning:" not in result.stderr + result.stdout
    assert worker_lines(result.stdout) == ["oof", "rab", "xuq", "zab", "zyx"]
    assert "succeeded: 5  failed: 0  completedIndexes: 0-4" in result.stdout
    assert not os.path.exists("/input")


@needs_mounts
def test_the_indexed_job_reads_its_index_from_a_downward_api_volume() -> None:
    result = kjobs_run(EXAMPLES / "indexed-job-vol.yaml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert worker_lines(result.stdout) == ["0", "1", "2", "3", "4"]


@needs_mounts
def test_a_config_map_secret_sub_path_and_labels_are_read_as_files() -> None:
    result = kjobs_run(EXAMPLES / "config-volume.yaml")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line.split("] ", 1)[1] for line in result.stdout.splitlines() if "/main] " in line]
    assert lines[:5] == ["mode=fast", "items=3", 'tier="batch"', "token-length=12", "done"]
    assert lines[5].endswith("/etc/app/new: Read-only file system")  # the shell's own words before it
    assert lines[6:] == ["config is read-only"]


def test_without_mount_namespaces_the_warning_stays_and_the_init_container_finds_no_input(tmp_path: Path) -> None:
    manifest = tmp_path / "job.yaml"
    text = (EXAMPLES / "indexed-job-emptydir.yaml").read_text()
    manifest.write_text(text.replace("  completions: 5\n", "  completions: 1\n  backoffLimit: 0\n"))
    result = kjobs_run(manifest, mount=False)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "/input/data.txt: No such file or directory" in result.stdout  # the init container could not write it
    assert (
        'warning: kjobs runs containers as host processes and mounts no volumes: emptyDir "input" at /input '
        '(container input), emptyDir "input" at /input (container worker) not mounted' in result.stderr
    )
    assert "Complete" not in result.stdout


SHARED_CLAIM = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: shared}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: hand-over}
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: [sh, -c, 'if [ "$JOB_COMPLETION_INDEX" = 0 ]; then echo from-0 >/data/x; else cat /data/x; fi']
        volumeMounts: [{name: d, mountPath: /data}]
      volumes:
      - {name: d, persistentVolumeClaim: {claimName: shared}}
"""


@needs_mounts
def test_a_claims_volume_is_mounted_and_outlives_the_pod_that_wrote_it(tmp_path: Path) -> None:
    """Index 1 reads at /data what index 0 wrote there: the claim's provisioned directory, mounted in each pod."""
    manifest = tmp_path / "job.yaml"
    manifest.write_text(SHARED_CLAIM)
    result = kjobs_run(manifest)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warning:" not in result.stderr + result.stdout
    lines = [line.split("] ", 1)[1] for line in result.stdout.splitlines() if "/main] " in line]
    assert lines == ["from-0"]
    assert not os.path.exists("/data/x")
