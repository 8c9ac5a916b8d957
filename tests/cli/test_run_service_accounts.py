"""`kjobs run` and `kjobs simulate` with ServiceAccounts: a manifest may carry the accounts its pods run as, and
a Job naming one that neither the manifest nor the fresh cluster has is refused once, with the 403 its pods would
get, instead of waiting for ever on pods that cannot be created."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.cli.test_run_cli import kjobs

pytestmark = pytest.mark.e2e

JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: needs-sa, namespace: team}
spec:
  template:
    spec:
      serviceAccountName: builder
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: ["sh", "-c", "echo ran"]}]
"""
ACCOUNT = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: builder, namespace: team}\n---\n"
REFUSAL = (
    'pods "needs-sa-" is forbidden: error looking up service account team/builder: serviceaccount "builder" not '
    "found\nthe Job's pods cannot be created: add a ServiceAccount named builder (namespace team) to the manifest, "
    "or remove serviceAccountName from the pod template\n"
)


@pytest.mark.parametrize("command", ["run", "simulate"])
def test_a_job_naming_a_missing_account_is_refused_once(tmp_path: Path, command: str) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(JOB)
    result = kjobs(command, str(path), timeout=60)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"error: {path}: {REFUSAL}"


def test_run_creates_the_manifest_account_and_the_pod_runs_as_it(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(ACCOUNT + JOB)
    result = kjobs("run", str(path), "--plain", "--logs", timeout=60)
    assert result.returncode == 0, result.stderr
    assert "namespace/team created" in result.stdout
    assert "Job team/needs-sa: Complete" in result.stdout
    assert "ran" in result.stdout


def test_simulate_takes_the_manifest_account(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(ACCOUNT + JOB)
    result = kjobs("simulate", str(path), timeout=60)
    assert result.returncode == 0, result.stderr
    assert "failures by reason: none" in result.stdout


def test_the_run_api_refuses_what_the_cluster_lacks(capsys: pytest.CaptureFixture[str]) -> None:
    """`kjobs.run.run` (no manifest loader in front of it) checks the started cluster itself."""
    import yaml

    from kjobs.run import RunOptions, run

    job = yaml.safe_load(JOB)
    code = run(job, RunOptions(out=io.StringIO()))
    assert code == 2
    assert capsys.readouterr().err == f"error: {REFUSAL}"


@pytest.mark.parametrize("command", ["run", "simulate"])
def test_a_manifest_may_carry_the_default_account(tmp_path: Path, command: str) -> None:
    """The ServiceAccounts controller has made `default` before the manifest's objects are created: the manifest's
    `default` configures it (as `kubectl apply` would) rather than failing with AlreadyExists."""
    path = tmp_path / "job.yaml"
    account = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, labels: {from: manifest}}\n---\n"
    job = JOB.replace("serviceAccountName: builder", "serviceAccountName: default").replace("namespace: team", "")
    path.write_text(account + job)
    result = kjobs(command, str(path), timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Complete" in result.stdout
