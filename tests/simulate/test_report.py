"""`kjobs simulate --report`: the HTML report carries its data (read back here from the page's JSON block), with
every attempt per index coloured by the podFailurePolicy rule that decided it, and distributions over runs."""

from __future__ import annotations

import html.parser
from pathlib import Path
from typing import Any

import orjson
import yaml
from click.testing import CliRunner

from kjobs.api.types import Obj
from kjobs.cli import main
from kjobs.simulate import SimulationOptions, parse_model, simulate
from kjobs.simulate.report import render, report_data, write_report


class _DataBlock(html.parser.HTMLParser):
    """The text of `<script type="application/json" id="kjobs-data">`, as a browser would hand it to a script."""

    def __init__(self) -> None:
        super().__init__()
        self.inside, self.text = False, ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.inside = tag == "script" and ("id", "kjobs-data") in attrs and ("type", "application/json") in attrs

    def handle_endtag(self, tag: str) -> None:
        self.inside = False

    def handle_data(self, data: str) -> None:
        if self.inside:
            self.text += data


def read_data(page: str) -> Any:
    parser = _DataBlock()
    parser.feed(page)
    return orjson.loads(parser.text)


def job(**spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "r", "namespace": "default"},
        "spec": {
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}},
            **spec,
        },
    }


FAIL_INDEX_ON_42 = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [42]}}]}


def test_each_attempt_of_an_indexed_job_carries_its_index_times_and_the_rule_that_decided_it(tmp_path: Path) -> None:
    spec = {"completionMode": "Indexed", "completions": 2, "parallelism": 2, "backoffLimitPerIndex": 1}
    model = parse_model({"containers": {"runTime": {"constant": "5s"}, "exitCodes": [{"code": 42}]}})
    result = simulate(job(**spec, podFailurePolicy=FAIL_INDEX_ON_42), SimulationOptions(model=model))
    out = tmp_path / "r.html"
    write_report(out, [result])
    data = read_data(out.read_text())
    attempts = data["timeline"]["attempts"]
    assert [(a["index"], a["created"], a["end"], a["outcome"]) for a in attempts] == [
        (0, 0.0, 5.0, "Failed"),
        (1, 0.0, 5.0, "Failed"),
    ]
    assert {(a["action"], a["rule"], a["category"]) for a in attempts} == {
        ("FailIndex", 0, "Failed · FailIndex by rule 0")
    }
    assert "container main exited with code 42" in attempts[0]["cause"]
    assert data["runs"][0]["outcome"] == "Failed" and data["runs"][0]["failedIndexes"] == "0,1"
    # The legend names the rule, and a bar's tooltip says which pod and why.
    assert "Failed · FailIndex by rule 0" in out.read_text()
    assert f"<title>pod {attempts[0]['pod']} (index 0): Failed · FailIndex by rule 0" in out.read_text()


def test_unmatched_failures_count_and_retries_are_separate_attempts_of_the_same_index() -> None:
    model = parse_model({"containers": {"exitCodes": [{"code": 1}]}})
    spec = {"completionMode": "Indexed", "completions": 1, "backoffLimitPerIndex": 1}
    result = simulate(job(**spec, podFailurePolicy=FAIL_INDEX_ON_42), SimulationOptions(model=model))
    attempts = report_data([result])["timeline"]["attempts"]
    # The 10 s pod-failure back-off separates the two attempts of index 0 (pkg/controller/job/backoff_utils.go).
    assert [(a["index"], a["created"], a["category"]) for a in attempts] == [
        (0, 0.0, "Failed · Count (no rule matched)"),
        (0, 10.0, "Failed · Count (no rule matched)"),
    ]


def test_a_nonindexed_job_has_one_timeline_row_per_pod_and_succeeded_pods_end_green() -> None:
    model = parse_model({"containers": {"runTime": {"constant": "1m"}}})
    result = simulate(job(completions=3, parallelism=3), SimulationOptions(model=model))
    data = report_data([result])
    attempts = data["timeline"]["attempts"]
    assert [(a["index"], a["end"], a["category"], a["action"]) for a in attempts] == [
        (None, 60.0, "Succeeded", None)
    ] * 3
    page = render(data)
    for attempt in attempts:
        assert f">{attempt['pod']}</text>" in page  # the row label
    assert "Attempts per pod" in page
    assert data["timeline"]["conditions"][-1]["condition"].startswith("Complete=True")


def test_several_runs_give_the_success_probability_and_percentiles_over_runs() -> None:
    model = parse_model({"containers": {"exitCodes": [{"code": 0}, {"code": 1}]}})
    runs = [simulate(job(backoffLimit=0), SimulationOptions(model=model, seed=seed)) for seed in range(8)]
    data = report_data(runs)
    outcomes = [r.outcome for r in runs]
    assert data["distribution"]["runs"] == 8
    assert data["distribution"]["successProbability"] == outcomes.count("Complete") / 8
    assert data["distribution"]["outcomes"] == {o: outcomes.count(o) for o in set(outcomes)}
    assert data["distribution"]["podsCreated"]["max"] == 1.0
    assert "Over 8 runs" in render(data)


def test_text_that_closes_a_script_tag_stays_inside_the_data_block() -> None:
    result = simulate(job(), SimulationOptions())
    data = report_data([result])
    data["runs"][0]["message"] = "</script><b>x</b>"
    page = render(data)
    assert read_data(page)["runs"][0]["message"] == "</script><b>x</b>"
    assert "<b>x</b>" not in page


def test_kjobs_simulate_report_writes_the_page_with_the_same_summary_as_json_output(tmp_path: Path) -> None:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(yaml.safe_dump(job(completions=2)))
    out = tmp_path / "out.html"
    runner = CliRunner()
    printed = runner.invoke(main, ["simulate", str(manifest), "-o", "json", "--report", str(out)])
    assert printed.exit_code == 0, printed.output
    summary = orjson.loads(printed.stdout)
    assert read_data(out.read_text())["runs"] == [summary]
    bad = runner.invoke(main, ["simulate", str(manifest), "--report", str(tmp_path / "missing" / "out.html")])
    assert bad.exit_code == 2
    assert "error: cannot write the report" in bad.stderr


def test_pods_the_finished_job_ended_are_drawn_as_ended_not_as_counted() -> None:
    """A successPolicy met by index 0 ends index 1's pod (a container that dies of SIGTERM): the timeline says so,
    as the summary does."""
    containers = {"runTime": {"constant": "10s"}, "sigterm": "Exit"}
    model = parse_model({"containers": containers, "overrides": [{"indexes": "0", "runTime": {"constant": "1s"}}]})
    spec = {"completionMode": "Indexed", "completions": 2, "parallelism": 2}
    result = simulate(job(**spec, successPolicy={"rules": [{"succeededIndexes": "0"}]}), SimulationOptions(model=model))
    attempts = report_data([result])["timeline"]["attempts"]
    assert [(a["index"], a["category"]) for a in attempts] == [(0, "Succeeded"), (1, "Failed · EndedByJobSuccess")]


def test_kjobs_simulate_compare_report_carries_both_jobs(tmp_path: Path) -> None:
    """`--compare OTHER --report out.html`: the page had the first Job only, and nothing said the other was left
    out; it now gives both, the other's data under `compared` (docs/simtrial43.md)."""
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(yaml.safe_dump(job(completions=2)))
    other = job(completions=3)
    other["metadata"]["name"] = "other"
    second.write_text(yaml.safe_dump(other))
    out = tmp_path / "out.html"
    args = ["simulate", str(first), "--compare", str(second), "--runs", "2", "-o", "json", "--report", str(out)]
    printed = CliRunner().invoke(main, args)
    assert printed.exit_code == 0, printed.output
    summaries = orjson.loads(printed.stdout)["runs"]
    page = out.read_text()
    data = read_data(page)
    assert data["runs"][0]["job"] == summaries[0]["job"] == "default/r"
    assert data["compared"]["runs"][0]["job"] == summaries[1]["job"] == "default/other"
    assert len(data["compared"]["timeline"]["attempts"]) == 3
    assert "<h1>kjobs simulate: default/r compared with default/other</h1>" in page
    assert page.count("<h2>Attempts per pod</h2>") == 2
