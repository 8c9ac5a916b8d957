"""`kjobs simulate`: the same final Job status as `kjobs run` on the same small Jobs (the model injects the exit
codes the examples' commands produce), deterministic output across processes, and clear errors for bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kjobs.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def kjobs(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kjobs", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def final_status(summary: str) -> dict[str, str]:
    """Outcome, reason and counters from the summary `kjobs run` and `kjobs simulate` both print."""
    tail = summary[summary.rindex("\nJob default/") :] if "\nJob default/" in summary else summary
    lines = tail.strip().splitlines()
    status = {"outcome": lines[0].rsplit(": ", 1)[1]}
    for line in lines[1:]:
        line = line.strip()
        if line.startswith("reason: "):
            status["reason"] = line.removeprefix("reason: ")
        if line.startswith("succeeded: "):
            words = line.replace(":", "").split()
            status.update(zip(words[::2], words[1::2], strict=True))
    return status


@pytest.mark.parametrize(
    ("example", "exit_code", "run_args", "expected"),
    [
        ("failjob-exit-42.yaml", 42, (), {"outcome": "Failed", "reason": "PodFailurePolicy", "succeeded": "0"}),
        ("count-with-backoff-limit.yaml", 1, ("--backoff", "0.2"), {"outcome": "Failed", "failed": "3"}),
        ("ignore-disruptions.yaml", 0, (), {"outcome": "Complete", "succeeded": "4", "failed": "0"}),
    ],
)
def test_simulate_ends_a_job_as_kjobs_run_does(
    tmp_path: Path, example: str, exit_code: int, run_args: tuple[str, ...], expected: dict[str, str]
) -> None:
    model = tmp_path / "model.yaml"
    model.write_text(f"containers:\n  runTime: {{constant: 1s}}\n  exitCodes:\n  - code: {exit_code}\n")
    simulated = kjobs("simulate", str(EXAMPLES / example), "--model", str(model))
    real = kjobs("run", str(EXAMPLES / example), "--plain", *run_args)
    assert simulated.returncode == real.returncode, simulated.stderr + real.stderr
    sim_status, run_status = final_status(simulated.stdout), final_status(real.stdout)
    assert expected.items() <= sim_status.items()
    assert {k: run_status.get(k) for k in sim_status} == sim_status


def test_json_output_is_the_same_for_the_same_seed_in_another_process(tmp_path: Path) -> None:
    model = tmp_path / "model.yaml"
    model.write_text(
        "containers:\n  runTime: {constant: 5s}\n  exitCodes: [{code: 0, weight: 0.7}, {code: 1, weight: 0.3}]\n"
    )
    job = EXAMPLES / "failindex-per-index.yaml"
    runs = [kjobs("simulate", str(job), "--model", str(model), "--seed", "3", "-o", "json") for _ in range(2)]
    first, second = (json.loads(r.stdout) | {"wallSeconds": 0} for r in runs)
    assert first == second
    assert first["podsCreated"] >= 6 and first["outcome"] in ("Complete", "Failed")
    assert set(first["failuresByAction"]) <= {"Count", "FailIndex", "FailJob", "Ignore"}


def test_without_a_model_every_container_succeeds_at_once() -> None:
    result = kjobs("simulate", str(EXAMPLES / "failjob-exit-42.yaml"))
    assert result.returncode == 0, result.stderr
    assert "Job default/job-pod-failure-policy-failjob: Complete\n" in result.stdout
    assert "  pods created: 8\n" in result.stdout
    assert "  failures by action: none" in result.stdout


def test_a_bad_model_file_exits_2_naming_the_field(tmp_path: Path) -> None:
    model = tmp_path / "bad.yaml"
    model.write_text("containers:\n  runTime: {constant: soon}\n")
    result = kjobs("simulate", str(EXAMPLES / "failjob-exit-42.yaml"), "--model", str(model))
    assert result.returncode == 2
    assert "bad.yaml: model.containers.runTime.constant: expected a duration" in result.stderr


@pytest.mark.parametrize("command", ["simulate", "run"])
def test_a_backoff_that_is_not_a_number_is_refused(command: str) -> None:
    """Click's bounds let NaN through (every comparison with it is false): `--backoff nan` ran as 0."""
    result = CliRunner().invoke(main, [command, str(EXAMPLES / "failjob-exit-42.yaml"), "--backoff", "nan"])
    assert result.exit_code == 2
    assert "Invalid value for '--backoff': 'nan' is not a number." in result.stderr


def test_a_time_limit_of_0_is_refused() -> None:
    """`--time-limit 0s` reported the Job Unfinished with no pod created, exit 1: nothing a user can mean."""
    result = CliRunner().invoke(main, ["simulate", str(EXAMPLES / "failjob-exit-42.yaml"), "--time-limit", "0s"])
    assert result.exit_code == 2
    assert "--time-limit: must be more than 0, got '0s'" in result.stderr


def test_a_preempt_model_names_the_compared_job_whose_containers_request_no_cpu() -> None:
    """With --compare, "the Job's containers" alone does not say which of the two Jobs lacks cpu requests."""
    args = [
        "simulate",
        str(EXAMPLES / "ignore-disruptions.yaml"),
        "--compare",
        str(EXAMPLES / "count-with-backoff-limit.yaml"),
    ]
    result = CliRunner().invoke(main, [*args, "--model", str(EXAMPLES / "models" / "spot-preemptions.yaml")])
    assert result.exit_code == 2
    assert "Job job-backoff-limit's do not" in result.stderr


def test_compare_with_a_manifest_that_is_not_a_job_names_the_command(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    result = kjobs("simulate", str(EXAMPLES / "failjob-exit-42.yaml"), "--compare", str(pod))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f'error: {pod}: document 1 is Pod "p": kjobs simulate takes one Job, and the ConfigMaps and Secrets its '
        "pods read, the ServiceAccounts they run as, their RBAC roles and bindings, the PersistentVolumeClaims "
        "they mount, with their PersistentVolumes and StorageClasses, the Services that name them (and their "
        "Namespaces)\n"
    )


def test_a_model_file_that_is_not_yaml_gets_one_line_naming_where(tmp_path: Path) -> None:
    model = tmp_path / "broken.yaml"
    model.write_text("containers: {runTime: [\n")
    result = kjobs("simulate", str(EXAMPLES / "failjob-exit-42.yaml"), "--model", str(model))
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {model}: invalid YAML (line 2, column 1): ")
    assert result.stderr.count("\n") == 1
    assert "<unicode string>" not in result.stderr


def test_feature_gates_reach_the_simulated_cluster() -> None:
    """A manifest with a kjobs-gated field is refused at the default gates and simulated with them on."""
    example = str(EXAMPLES / "onfailure-failjob.yaml")
    refused = kjobs("simulate", example)
    assert refused.returncode == 2
    assert 'unknown field "spec.template.spec.maxRestartTimes"' in refused.stderr
    ran = kjobs("simulate", "--feature-gates", "AllAlpha=true", example, "-o", "json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["outcome"] == "Complete"


def test_a_failure_reason_with_its_exit_code_reads_apart_from_its_count(tmp_path: Path) -> None:
    """The JSON key `Error 1` followed by its count read `Error 1 2`; the text says `Error (exit 1) 2`."""
    model = tmp_path / "model.yaml"
    model.write_text("containers:\n  runTime: {constant: 1s}\n  exitCodes: [{code: 1}]\n")
    result = kjobs("simulate", str(EXAMPLES / "count-with-backoff-limit.yaml"), "--model", str(model))
    assert result.returncode == 1, result.stderr
    assert "  failures by reason: Error (exit 1) 3\n" in result.stdout
    data = json.loads(
        kjobs("simulate", str(EXAMPLES / "count-with-backoff-limit.yaml"), "--model", str(model), "-o", "json").stdout
    )
    assert data["failuresByReason"] == {"Error 1": 3}
    runs = kjobs("simulate", str(EXAMPLES / "count-with-backoff-limit.yaml"), "--model", str(model), "--runs", "2")
    assert "Error (exit 1) 3" in runs.stdout


def test_the_config_maps_and_secrets_of_the_manifest_are_created_before_the_job() -> None:
    result = kjobs("simulate", str(EXAMPLES / "settings-from-configmap.yaml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert final_status(result.stdout) == {
        "outcome": "Complete",
        "reason": "CompletionsReached",
        "succeeded": "2",
        "failed": "0",
    }


EVICTED_WHILE_IT_FINISHES = """\
apiVersion: batch/v1
kind: Job
metadata: {name: evicted}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, command: [sh, -c, "sleep 4"]}
"""


def test_a_disruption_at_a_time_ends_a_job_as_kjobs_run_disrupt_does(tmp_path: Path) -> None:
    """The same eviction at 1 s, in a model (`at: 1s`) and on real processes (`--disrupt evict@1s`): `sh -c` takes
    no SIGTERM, so the container finishes (exit 0) within its grace period, but the Job, with no podFailurePolicy,
    counted the pod as failed when it was deleted: backoffLimit 0 is exceeded either way."""
    manifest = tmp_path / "job.yaml"
    manifest.write_text(EVICTED_WHILE_IT_FINISHES)
    model = tmp_path / "model.yaml"
    model.write_text("containers: {runTime: {constant: 4s}}\ndisruptions: [{kind: evict, at: 1s}]\n")
    simulated = kjobs("simulate", str(manifest), "--model", str(model))
    real = kjobs("run", str(manifest), "--plain", "--disrupt", "evict@1s")
    assert simulated.returncode == real.returncode == 1, simulated.stderr + real.stderr
    expected = {"outcome": "Failed", "reason": "BackoffLimitExceeded", "succeeded": "0", "failed": "1"}
    assert final_status(simulated.stdout) == expected
    assert {k: final_status(real.stdout).get(k) for k in expected} == expected
    assert "failures by action: Count 1" in simulated.stdout
    assert "failures by reason: EvictionByEvictionAPI 1" in simulated.stdout
    assert "disruptions: evict 1" in simulated.stdout


def test_compare_of_one_run_prints_the_two_runs_side_by_side() -> None:
    """One run of each: no p50/p90/p99 of a single value, but each run's summary in two columns (seed 0)."""
    args = ["simulate", str(EXAMPLES / "failjob-exit-42.yaml"), "--compare", str(EXAMPLES / "ignore-disruptions.yaml")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["default/job-pod-failure-policy-failjob", "default/job-pod-failure-policy-ignore"]
    rows = {cells[0]: cells[1:] for cells in (re.split(r"\s{2,}", line.strip()) for line in lines[1:])}
    assert rows["outcome"] == ["Complete (CompletionsReached)", "Complete (CompletionsReached)"]
    assert rows["pods created"] == ["8", "4"]
    assert rows["succeeded / failed"] == ["8 / 0", "4 / 0"]
    assert rows["seed"] == ["0", "0"]
    assert "p50" not in result.stdout
