"""`kjobs simulate --runs N` (a distribution that matches known probabilities) and `--compare` (two policies on
the same failure trace), with the example models."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kjobs.cli.simulate import simulate_command

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

ONE_SHOT = """\
apiVersion: batch/v1
kind: Job
metadata: {name: one-shot}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: x}]
"""


def _policy_job(name: str, action: str) -> str:
    return f"""\
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}}}
spec:
  completionMode: Indexed
  completions: 4
  parallelism: 4
  backoffLimit: 30
  podFailurePolicy:
    rules:
    - action: {action}
      onPodConditions: [{{type: DisruptionTarget}}]
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: main, image: x, resources: {{requests: {{cpu: 100m}}}}}}]
"""


def invoke(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(simulate_command, [*args, "-o", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


def test_runs_estimate_a_known_success_probability(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(ONE_SHOT)
    (tmp_path / "half.yaml").write_text("containers:\n  exitCodes: [{code: 0}, {code: 1}]\n")
    summary = invoke(str(tmp_path / "job.yaml"), "--model", str(tmp_path / "half.yaml"), "--runs", "40")
    assert summary["runs"] == 40 and summary["seeds"] == [0, 39]
    assert 0.25 <= float(summary["successProbability"]) <= 0.75  # type: ignore[arg-type]
    outcomes = summary["outcomes"]
    assert isinstance(outcomes, dict) and outcomes["Complete"] + outcomes["Failed"] == 40
    expected = {"BackoffLimitExceeded": outcomes["Failed"], "CompletionsReached": outcomes["Complete"]}
    assert summary["reasons"] == expected


def test_compare_runs_two_policies_on_the_same_trace(tmp_path: Path) -> None:
    (tmp_path / "ignore.yaml").write_text(_policy_job("ignore", "Ignore"))
    (tmp_path / "count.yaml").write_text(_policy_job("count", "Count"))
    (tmp_path / "model.yaml").write_text(
        "containers: {runTime: {constant: 30m}}\ndisruptions: [{kind: evict, ratePerPodHour: 0.5}]\n"
    )
    both = invoke(
        str(tmp_path / "ignore.yaml"),
        "--compare",
        str(tmp_path / "count.yaml"),
        "--model",
        str(tmp_path / "model.yaml"),
        "--runs",
        "3",
    )
    ignore, count = both["runs"]  # type: ignore[misc]
    assert ignore["disruptionsPerRun"] == count["disruptionsPerRun"] != {}  # the same schedule met both Jobs
    assert set(ignore["failuresByActionPerRun"]) == {"Ignore"}
    assert set(count["failuresByActionPerRun"]) == {"Count"}
    text = CliRunner().invoke(
        simulate_command,
        [
            str(tmp_path / "ignore.yaml"),
            "--compare",
            str(tmp_path / "count.yaml"),
            "--model",
            str(tmp_path / "model.yaml"),
        ],
    )
    # one run each: the two runs' summaries side by side (docs/simtrial43.md), not a distribution of one value
    assert "default/ignore" in text.output and "default/count" in text.output and "  outcome  " in text.output


def test_each_example_model_gives_a_readable_summary() -> None:
    job = EXAMPLES / "ignore-disruptions.yaml"
    for model in sorted((EXAMPLES / "models").glob("*.yaml")):
        result = CliRunner().invoke(simulate_command, [str(job), "--model", str(model), "--runs", "2"])
        assert result.exit_code == 0, (model, result.output)
        assert "success probability" in result.output


def test_runs_with_a_report_write_every_run_into_it(tmp_path: Path) -> None:
    from tests.simulate.test_report import read_data

    (tmp_path / "job.yaml").write_text(ONE_SHOT)
    (tmp_path / "half.yaml").write_text("containers:\n  exitCodes: [{code: 0}, {code: 1}]\n")
    page = tmp_path / "report.html"
    job, model = str(tmp_path / "job.yaml"), str(tmp_path / "half.yaml")
    summary = invoke(job, "--model", model, "--runs", "5", "--report", str(page))
    data = read_data(page.read_text())
    assert len(data["runs"]) == 5
    assert data["distribution"]["runs"] == 5
    assert sum(run["outcome"] == "Complete" for run in data["runs"]) == summary["outcomes"].get("Complete", 0)
