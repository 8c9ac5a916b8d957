"""`kjobs simulate --runs N` spread over worker processes gives the runs made one after another."""

from __future__ import annotations

import pytest

from kjobs.api.features import FeatureGates
from kjobs.api.types import Obj
from kjobs.simulate import SimulationOptions, parse_model, runs
from kjobs.simulate.report import attempts
from kjobs.simulate.runs import distribution, simulate_runs


def flaky_job() -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "flaky", "namespace": "default"},
        "spec": {
            "completionMode": "Indexed",
            "completions": 12,
            "parallelism": 4,
            "backoffLimitPerIndex": 1,
            "maxFailedIndexes": 3,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}},
        },
    }


def test_runs_in_worker_processes_equal_the_runs_made_in_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    model = parse_model(
        {
            "containers": {
                "runTime": {"constant": "5s"},
                "exitCodes": [{"code": 0, "weight": 0.7}, {"code": 1, "weight": 0.3}],
            }
        }
    )
    # A gate set on the command line travels to the workers too.
    options = SimulationOptions(model=model, seed=4, features=FeatureGates.from_map({"JobSuccessPolicy": True}))
    in_turn = simulate_runs(flaky_job(), options, 4, workers=1)
    monkeypatch.setattr(runs, "WORKER_WORTH", 0.0)  # these runs are short: send the rest to workers anyway
    advanced: list[int] = []
    spread = simulate_runs(flaky_job(), options, 4, lambda: advanced.append(1), workers=2)
    assert len(advanced) == 4  # the progress bar moves once per run, wherever it ran

    def summary(results: list[runs.SimulationResult]) -> list[dict[str, object]]:
        return [{k: v for k, v in r.to_dict().items() if k != "wallSeconds"} for r in results]

    assert summary(spread) == summary(in_turn)
    assert [r.trace for r in spread] == [r.trace for r in in_turn]
    assert any(r.failures_by_action for r in in_turn)  # the runs had failures to decide
    drop = ("wallSeconds",)
    assert {k: v for k, v in distribution(spread, 4).items() if k not in drop} == {
        k: v for k, v in distribution(in_turn, 4).items() if k not in drop
    }
    # The report reads the decisions a worker sends back, not the pods it drops.
    for worked, made in zip(spread[1:], in_turn[1:], strict=True):
        assert attempts(worked) == attempts(made)
    assert spread[1].view.pods == {} and in_turn[1].view.pods


def test_short_runs_stay_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # "Short" is measured in wall seconds, which a loaded machine stretches: the bar is raised far above what
    # these runs take, and the test checks they took less.
    monkeypatch.setattr(runs, "WORKER_WORTH", 30.0)
    results = simulate_runs(flaky_job(), SimulationOptions(seed=0), 3, workers=8)
    assert all(r.wall_seconds < runs.WORKER_WORTH for r in results)
    assert all(r.view.pods for r in results)  # none went through a worker (which drops the pods)


def test_virtual_time_of_runs_none_of_which_finished_says_so() -> None:
    """Percentiles of virtual time are over finished runs: with none, `p50 0` would read as finishing at once."""
    job = flaky_job()
    job["spec"]["suspend"] = True
    results = simulate_runs(job, SimulationOptions(time_limit=600), 2)
    rows = dict(runs.distribution_rows(distribution(results, 0)))
    assert rows["outcomes"] == "Unfinished 2"
    assert rows["virtual time (s)"] == "none finished"


def test_retries_of_a_non_indexed_job_are_not_said_to_be_zero() -> None:
    """Retries are counted per completion index; a NonIndexed Job has none, so its row must not read `p50 0 ...
    mean 0` while its pods were retried (docs/simtrial43.md)."""
    job = flaky_job()
    del job["spec"]["completionMode"], job["spec"]["backoffLimitPerIndex"], job["spec"]["maxFailedIndexes"]
    job["spec"]["backoffLimit"] = 20
    model = parse_model({"containers": {"exitCodes": [{"code": 0}, {"code": 1}]}})
    results = simulate_runs(job, SimulationOptions(model=model), 2)
    assert all(r.pods_created > 12 for r in results)  # retried
    rows = dict(runs.distribution_rows(distribution(results, 0)))
    assert rows["retries per run"] == "not counted: a NonIndexed Job (see pods created)"
    indexed = dict(runs.distribution_rows(distribution(simulate_runs(flaky_job(), SimulationOptions(), 1), 0)))
    assert indexed["retries per run"].startswith("p50 0")
