"""`kjobs run` on manifests written as Kubernetes users write them (docs/run-trial.md): each found a place where
kjobs did not do what a cluster does."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

TRIAL = Path(__file__).resolve().parent / "trial"
pytestmark = pytest.mark.e2e


def kjobs(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kjobs", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def test_a_pod_with_a_sidecar_completes_when_its_main_container_does() -> None:
    """It stayed Pending for ever: the sidecar was run as an init container that had to exit first."""
    result = kjobs("run", str(TRIAL / "sidecar.yaml"), "--plain", "--timeout", "30")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Job default/with-sidecar: Complete\n" in result.stdout
    assert "succeeded: 1  failed: 0" in result.stdout


def test_a_failing_main_container_beside_a_sidecar_fails_the_job_by_its_rule() -> None:
    result = kjobs("run", str(TRIAL / "sidecar-main-fails.yaml"), "--plain", "--timeout", "30")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "failed: container main exited with code 3 → FailJob by rule 0: the Job fails\n" in result.stdout
    assert "  reason: PodFailurePolicy\n" in result.stdout


def test_logs_show_init_containers_and_pods_the_job_deleted() -> None:
    """`--logs` printed regular containers only, and `(no log: pods "..." not found)` for a pod the Job controller
    had deleted (here the workers, once the successPolicy is met): their logs are read from the node."""
    result = kjobs("run", str(TRIAL / "init-fails.yaml"), "--plain", "--logs", "--backoff", "0.2")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.count("/wait-for-db] waiting for db\n") == 2
    result = kjobs("run", str(TRIAL / "leader-success-policy.yaml"), "--plain", "--logs", "--timeout", "30")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "  reason: SuccessPolicy\n" in result.stdout
    # The workers the Job controller deleted show what they printed; none is `(no log: pods "..." not found)`.
    # A worker counts as Running once its process is spawned, so on a loaded machine one may be killed before its
    # `sh` got to the echo: the log of at least one is asserted, not of each.
    ran = re.findall(r"^pod (leader-worker-(\d)-\w+) Running$", result.stdout, flags=re.M)
    workers = [(name, index) for name, index in ran if index != "0"]
    assert workers, "no worker ran"
    shown = [
        name for name, index in workers if f"[{name}/main] worker {index} waiting for the leader\n" in result.stdout
    ]
    assert shown, result.stdout
    assert "(no log:" not in result.stdout


def test_a_job_with_parallelism_0_is_said_to_start_no_pod() -> None:
    """It waited in silence until --timeout (for ever without one), as a suspended Job did before its warning."""
    result = kjobs("run", str(TRIAL / "parallelism-0.yaml"), "--plain", "--timeout", "1")
    assert result.returncode == 1
    assert "warning: the Job has spec.parallelism: 0: it starts no pod until parallelism is raised" in result.stderr
    assert "Job default/paused: Unfinished\n" in result.stdout


def test_environment_from_every_source_including_the_service_account() -> None:
    """`fieldRef: spec.serviceAccountName` read '': no pod had the `default` ServiceAccount the ServiceAccount
    admission plugin gives every pod on a cluster."""
    result = kjobs("run", str(TRIAL / "env-refs.yaml"), "--plain", "--logs")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert " ns=default ip=127.0.0.1 node=kjobs-node sa=default team=data\n" in out
    assert "] level=debug user=admin pass=s3cr3t\n" in out
    assert "] cpu=1 mem=128 memreq=67108864\n" in out  # limits.cpu 500m rounds up to 1; divisor 1Mi
    assert "] CFG_LOG_LEVEL=debug\n" in out
    assert "] greeting=hello env-refs-" in out and " costs $5 and $(UNDEFINED)\n" in out


def test_a_pod_too_big_for_the_node_says_it_is_unschedulable() -> None:
    result = kjobs("run", str(TRIAL / "too-big.yaml"), "--plain", "--timeout", "2")
    assert result.returncode == 1
    assert (
        " unschedulable: 0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 Insufficient "
        "nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.\n"
    ) in result.stdout


def test_a_job_in_its_own_namespace_runs_there() -> None:
    """It was refused (exit 2, `namespaces "analytics" not found`): the run's fresh cluster has only `default`
    and the system namespaces, and its user has no moment to create another, as they would on a cluster."""
    result = kjobs("run", str(TRIAL / "namespace.yaml"), "--plain", "--logs")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("namespace/analytics created\n")
    assert "Job analytics/in-namespace: Complete\n" in result.stdout
    assert "/main] hi\n" in result.stdout
    simulated = kjobs("simulate", str(TRIAL / "namespace.yaml"))
    assert simulated.returncode == 0, simulated.stdout + simulated.stderr
    assert simulated.stdout.startswith("Job analytics/in-namespace: Complete\n")


def test_a_rendered_chart_with_its_namespace_runs() -> None:
    """A Namespace document was refused (`document 1 is Namespace "reports": kjobs run takes one Job`)."""
    result = kjobs("run", str(TRIAL / "helm-namespace.yaml"), "--plain", "--logs")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "namespace/" not in result.stdout  # the manifest's own, not one made for want of it
    assert "/report] report as csv in reports\n" in result.stdout
    assert "Job reports/monthly-report: Complete\n" in result.stdout


def _processes_running(argv: str) -> list[str]:
    """The pids of this machine's processes whose command line is `argv` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            except OSError:
                continue
            if cmdline == argv:
                found.append(entry.name)
    return found


def test_sigterm_stops_the_run_its_containers_and_removes_their_files(tmp_path: Path) -> None:
    """`timeout 60 kjobs run ...` or a CI job's timeout sends SIGTERM: the run died at once, leaving the container
    (`sleep 19.25`) running and its files in $XDG_RUNTIME_DIR. It now ends as on Ctrl-C, with exit status 143."""
    import os
    import signal

    job = tmp_path / "sleeper.yaml"
    job.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: sleeper}\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers: [{name: main, image: busybox, command: [sleep, '19.25']}]\n"
    )
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    proc = subprocess.Popen(
        [sys.executable, "-m", "kjobs", "run", str(job), "--plain"], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.endswith(" Running\n"):
            break
    assert _processes_running("sleep 19.25"), "the container did not start"
    proc.send_signal(signal.SIGTERM)
    proc.stdout.read()
    assert proc.wait(timeout=60) == 143
    assert not _processes_running("sleep 19.25")
    for root in (tmp_path / "kjobs").iterdir():
        assert not any((root / "pods").iterdir())
        assert not any((root / "logs").iterdir())
