"""The failure model: parsed strictly (a bad field is named), drawn deterministically per seed and attempt."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from kjobs.simulate import Model, ModelError, SimulationOptions, load_model, parse_model, simulate
from kjobs.simulate.model import ContainerModel, ExitCode, parse_duration


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"container": {}}, "model.container: unknown field"),
        ({"containers": {"runTme": {"constant": "5s"}}}, "model.containers.runTme: unknown field"),
        ({"containers": {"runTime": {"constant": "5 parsecs"}}}, "model.containers.runTime.constant: expected a"),
        ({"containers": {"runTime": {"gamma": "5s"}}}, "model.containers.runTime.gamma: unknown field"),
        ({"containers": {"runTime": {}}}, "model.containers.runTime: expected exactly one of"),
        ({"containers": {"runTime": {"uniform": {"min": "5s"}}}}, "model.containers.runTime.uniform.max: required"),
        (
            {"containers": {"runTime": {"lognormal": {"median": 3, "sigma": -1}}}},
            "model.containers.runTime.lognormal.sigma",
        ),
        ({"containers": {"oomKillProbability": 2}}, "model.containers.oomKillProbability: expected a probability"),
        ({"containers": {"sigterm": "ignore"}}, 'model.containers.sigterm: expected "Ignore" or "Exit"'),
        ({"overrides": [{"sigterm": True}]}, 'model.overrides[0].sigterm: expected "Ignore" or "Exit"'),
        ({"overrides": [{"indexes": "3-1"}]}, "model.overrides[0].indexes: interval 3-1 runs backwards"),
        ({"overrides": [{"contianer": "a"}]}, "model.overrides[0].contianer: unknown field"),
        ({"disruptions": [{"kind": "meteor", "ratePerHour": 1}]}, "model.disruptions[0].kind: expected one of"),
        ({"disruptions": [{"kind": "drain"}]}, "model.disruptions[0]: expected exactly one of: ratePerHour"),
        ({"disruptions": [{"kind": "drain", "ratePerPodHour": "x"}]}, "model.disruptions[0].ratePerPodHour"),
        ({"disruptions": [{"kind": "drain", "at": "10x"}]}, "model.disruptions[0].at: expected a duration"),
        ({"disruptions": [{"kind": "drain", "at": "1s", "ratePerHour": 1}]}, "model.disruptions[0]: expected exactly"),
        ({"containers": {"exitCodes": [{"code": 256}]}}, "model.containers.exitCodes[0].code: expected an exit"),
        ({"containers": {"exitCodes": [{"code": 0, "weight": -1}]}}, "model.containers.exitCodes[0].weight"),
        ({"containers": {"exitCodes": [{"code": 1, "weight": 0}]}}, "model.containers.exitCodes: the weights"),
        ({"containers": {"exitCodes": []}}, "model.containers.exitCodes: expected a non-empty list"),
        ({"containers": []}, "model.containers: expected a mapping"),
    ],
)
def test_a_bad_model_is_rejected_naming_the_field(doc: Any, field: str) -> None:
    with pytest.raises(ModelError) as caught:
        parse_model(doc)
    assert str(caught.value).startswith(field)


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"containers": {"runTime": {"constant": math.inf}}}, "model.containers.runTime.constant: expected a finite"),
        ({"containers": {"runTime": {"exponential": {"mean": math.nan}}}}, "model.containers.runTime.exponential"),
        ({"containers": {"runTime": {"lognormal": {"median": 3, "sigma": math.inf}}}}, "model.containers.runTime."),
        ({"containers": {"exitCodes": [{"code": 1, "weight": math.nan}]}}, "model.containers.exitCodes[0].weight"),
        ({"containers": {"exitCodes": [{"code": 1, "weight": math.inf}]}}, "model.containers.exitCodes[0].weight"),
        ({"disruptions": [{"kind": "drain", "ratePerHour": math.nan}]}, "model.disruptions[0].ratePerHour"),
    ],
)
def test_yaml_inf_and_nan_are_refused(doc: Any, field: str) -> None:
    """`.inf` and `.nan` are YAML floats: a run time of .inf ran the Job to --time-limit (minutes of wall time),
    a nan weight or rate silently drew nonsense."""
    with pytest.raises(ModelError) as caught:
        parse_model(doc)
    assert str(caught.value).startswith(field)


def test_a_model_file_error_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text("containers:\n  exitCodes:\n  - code: one\n")
    with pytest.raises(ModelError, match=r"m\.yaml: model\.containers\.exitCodes\[0\]\.code: expected an exit code"):
        load_model(path)


def test_the_documented_example_parses() -> None:
    doc = {
        "containers": {
            "runTime": {"constant": "5s"},
            "exitCodes": [{"code": 0, "weight": 0.95}, {"code": 1, "weight": 0.05}],
        }
    }
    assert parse_model(doc) == Model(ContainerModel(5.0, (ExitCode(0, 0.95), ExitCode(1, 0.05))))
    assert parse_model(None) == Model()


@pytest.mark.parametrize(("text", "seconds"), [("5s", 5.0), ("1m30s", 90.0), ("250ms", 0.25), ("2h", 7200.0), (3, 3.0)])
def test_durations_use_go_units(text: Any, seconds: float) -> None:
    assert parse_duration(text, "x") == seconds


def flaky_indexed_job() -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "flaky"},
        "spec": {
            "completionMode": "Indexed",
            "completions": 20,
            "parallelism": 5,
            "backoffLimitPerIndex": 1,
            "maxFailedIndexes": 10,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}},
        },
    }


FLAKY = parse_model(
    {
        "containers": {
            "runTime": {"constant": "30s"},
            "exitCodes": [{"code": 0, "weight": 0.7}, {"code": 1, "weight": 0.3}],
        }
    }
)


def test_the_same_seed_gives_the_same_trace() -> None:
    first = simulate(flaky_indexed_job(), SimulationOptions(model=FLAKY, seed=7))
    second = simulate(flaky_indexed_job(), SimulationOptions(model=FLAKY, seed=7))
    assert first.trace == second.trace
    assert first.to_dict() | {"wallSeconds": 0} == second.to_dict() | {"wallSeconds": 0}
    assert first.failures_by_action.get("Count", 0) > 0  # the model did fail some containers
    other = simulate(flaky_indexed_job(), SimulationOptions(model=FLAKY, seed=8))
    assert other.trace != first.trace


def test_an_override_applies_to_its_indexes_only() -> None:
    model = parse_model(
        {
            "containers": {"runTime": {"uniform": {"min": "1s", "max": "2s"}}},
            "overrides": [{"indexes": "1,3", "container": "main", "exitCodes": [{"code": 3}]}],
        }
    )
    result = simulate(flaky_indexed_job(), SimulationOptions(model=model, seed=2))
    status = result.job["status"]
    assert (status["failedIndexes"], result.retries_per_index) == ("1,3", {1: 1, 3: 1})
    assert result.failures_by_reason == {"Error 3": 4}
    assert 4.0 <= result.wasted_pod_seconds <= 8.0


def test_pods_the_finished_job_ended_are_not_reported_as_counted_failures() -> None:
    """A successPolicy met by index 0 ends the other indexes' pods: containers that die of SIGTERM (`sigterm:
    Exit`) end Failed (exit 143) but count toward nothing (status.failed stays 0), so they are not `Count`; after a
    failure the ended pods are counted in status.failed, yet no rule weighed them either. With the default
    (`Ignore`, a PID 1 without a handler) they run on and finish their 10 s within the grace period."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "ended", "namespace": "default"},
        "spec": {
            "completionMode": "Indexed",
            "completions": 5,
            "parallelism": 5,
            "successPolicy": {"rules": [{"succeededIndexes": "0"}]},
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}},
        },
    }
    overrides = [{"indexes": "0", "runTime": {"constant": "1s"}}]
    ignoring = parse_model({"containers": {"runTime": {"constant": "10s"}}, "overrides": overrides})
    result = simulate(job, SimulationOptions(model=ignoring))
    assert (result.outcome, result.reason, result.failures_by_action) == ("Complete", "SuccessPolicy", {})
    model = parse_model({"containers": {"runTime": {"constant": "10s"}, "sigterm": "Exit"}, "overrides": overrides})
    result = simulate(job, SimulationOptions(model=model))
    assert (result.outcome, result.reason, result.job["status"].get("failed", 0)) == ("Complete", "SuccessPolicy", 0)
    assert result.failures_by_action == {"EndedByJobSuccess": 4}
    assert result.failures_by_reason == {"Error 143": 4}
    job["spec"] = dict(job["spec"], backoffLimit=0)
    del job["spec"]["successPolicy"]
    failing = parse_model(
        {
            "containers": {"runTime": {"constant": "10s"}, "sigterm": "Exit"},
            "overrides": [{"indexes": "0", "runTime": {"constant": "1s"}, "exitCodes": [{"code": 1}]}],
        }
    )
    result = simulate(job, SimulationOptions(model=failing))
    assert (result.outcome, result.job["status"]["failed"]) == ("Failed", 5)
    assert result.failures_by_action == {"Count": 1, "EndedByJobFailure": 4}


@pytest.mark.parametrize("spec", [{"suspend": True}, {"parallelism": 0}])
def test_a_job_that_never_starts_ends_at_the_time_limit_without_running_to_it(spec: dict[str, Any]) -> None:
    """A suspended Job (nothing resumes it) or one of parallelism 0 creates no pod, ever: the run reports what
    it would at --time-limit (Unfinished, 0 pods) but stops once the controller has synced it; running the
    cluster's heartbeats to the default 720 h took minutes of wall time."""
    from kjobs.clock import FakeClock
    from kjobs.simulate.session import simulate_on_loop
    from kjobs.virtualtime import run

    job: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "idle", "namespace": "default"},
        "spec": {**spec, "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}},
    }
    clock = FakeClock()
    start = clock.now()
    result = run(simulate_on_loop(job, SimulationOptions(time_limit=3600)), clock)
    assert (result.outcome, result.pods_created, result.virtual_seconds) == ("Unfinished", 0, 3600)
    assert clock.now() - start < 60


def test_parallelism_0_with_a_deadline_still_fails_at_the_deadline() -> None:
    """With parallelism 0 the Job's activeDeadlineSeconds still runs (it is not suspended): DeadlineExceeded."""
    job: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "idle", "namespace": "default"},
        "spec": {
            "parallelism": 0,
            "activeDeadlineSeconds": 60,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}},
        },
    }
    result = simulate(job, SimulationOptions(time_limit=3600))
    assert (result.outcome, result.reason) == ("Failed", "DeadlineExceeded")


def _one_pod_job(restart_policy: str, **pod_spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "one", "namespace": "default"},
        "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": restart_policy, **pod_spec}}},
    }


def test_failures_by_reason_names_the_init_container_or_sidecar_that_failed_the_pod() -> None:
    """A pod failed by its init container counts under that container's exit (its regular containers never ran),
    and one failed by its sidecar's restart limit under the sidecar's exit, not the main container's 143 from the
    stop that followed: what `kjobs run` names (`exit init setup=3`)."""
    from kjobs.api.features import FeatureGates

    init = _one_pod_job(
        "Never", initContainers=[{"name": "setup", "image": "x"}], containers=[{"name": "main", "image": "x"}]
    )
    setup_fails = [{"container": "setup", "exitCodes": [{"code": 3}]}]
    model = parse_model({"containers": {"runTime": {"constant": "5s"}}, "overrides": setup_fails})
    result = simulate(init, SimulationOptions(model=model))
    assert (result.outcome, result.failures_by_reason) == ("Failed", {"Error 3": 1})

    sidecar = _one_pod_job(
        "OnFailure",
        maxRestartTimes=1,
        initContainers=[{"name": "side", "image": "x", "restartPolicy": "Always"}],
        containers=[{"name": "main", "image": "x"}],
    )
    model = parse_model(
        {
            "containers": {"runTime": {"constant": "30s"}},
            "overrides": [{"container": "side", "runTime": {"constant": "1s"}, "exitCodes": [{"code": 5}]}],
        }
    )
    result = simulate(sidecar, SimulationOptions(model=model, features=FeatureGates.parse("AllAlpha=true")))
    assert (result.outcome, result.failures_by_reason) == ("Failed", {"Error 5": 1})
