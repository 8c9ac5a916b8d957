"""A model's `attempts`: the 1st, 2nd, ... run of a container at a completion index behave differently (a flaky
command that fails once, then succeeds), deterministic per seed; bad input names the field (docs/sim2-43.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kjobs.api.features import FeatureGates
from kjobs.api.types import Obj
from kjobs.simulate import SimulationOptions, parse_model, simulate
from kjobs.simulate.model import ModelError, load_model

ROOT = Path(__file__).resolve().parents[2]
FAILS_ONCE = ROOT / "examples" / "models" / "fails-once.yaml"


def job(pod_spec: dict[str, Any] | None = None, **spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "flaky", "namespace": "default"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}], **(pod_spec or {})}
            },
            **spec,
        },
    }


@pytest.mark.parametrize("seed", [0, 7])
def test_a_command_that_fails_once_then_succeeds(seed: int) -> None:
    result = simulate(job(backoffLimit=1), SimulationOptions(model=load_model(FAILS_ONCE), seed=seed))
    status = result.job["status"]
    assert (result.outcome, result.pods_created, status["succeeded"], status["failed"]) == ("Complete", 2, 1, 1)
    assert result.failures_by_reason == {"Error 1": 1}


def test_attempts_count_per_completion_index() -> None:
    result = simulate(
        job(completionMode="Indexed", completions=3, parallelism=3, backoffLimitPerIndex=1),
        SimulationOptions(model=load_model(FAILS_ONCE)),
    )
    assert (result.outcome, result.job["status"]["failed"]) == ("Complete", 3)
    assert result.retries_per_index == {0: 1, 1: 1, 2: 1}


def test_attempts_count_restarts_in_place_as_runs() -> None:
    """examples/onfailure-failjob.yaml's command exits 1, then 42 on its restart: the FailJob rule ends the Job."""
    manifest = yaml.safe_load((ROOT / "examples" / "onfailure-failjob.yaml").read_text())
    model = parse_model({"containers": {"attempts": [{"exitCodes": [{"code": 1}]}, {"exitCodes": [{"code": 42}]}]}})
    features = FeatureGates.parse("AllAlpha=true")
    result = simulate(manifest, SimulationOptions(model=model, features=features))
    assert (result.outcome, result.reason, result.container_restarts) == ("Failed", "PodFailurePolicy", 1)
    assert result.failures_by_reason == {"Error 42": 1}


def test_an_override_has_its_own_attempts_and_other_indexes_keep_the_containers_model() -> None:
    model = parse_model(
        {
            "containers": {"runTime": {"constant": "3s"}},
            "overrides": [{"indexes": "1", "attempts": [{"exitCodes": [{"code": 1}]}, {}]}],
        }
    )
    result = simulate(
        job(completionMode="Indexed", completions=3, parallelism=3, backoffLimitPerIndex=1),
        SimulationOptions(model=model),
    )
    assert (result.outcome, result.retries_per_index, result.virtual_seconds) == ("Complete", {1: 1}, 17.0)


@pytest.mark.parametrize(
    ("containers", "message"),
    [
        ({"attempts": []}, "model.containers.attempts: expected a non-empty list of container models"),
        ({"attempts": {"exitCodes": []}}, "model.containers.attempts: expected a non-empty list"),
        ({"attempts": [{"attempts": [{}]}]}, "model.containers.attempts[0].attempts: unknown field"),
        ({"attempts": [{}, {"exitCodes": [{"code": 300}]}]}, "model.containers.attempts[1].exitCodes[0].code:"),
        ({"attempts": [{"exitCode": 1}]}, "model.containers.attempts[0].exitCode: unknown field"),
    ],
)
def test_bad_attempts_name_the_field(containers: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelError) as caught:
        parse_model({"containers": containers})
    assert str(caught.value).startswith(message)


def test_a_real_run_of_a_flaky_command_and_its_model_end_alike(tmp_path: Path) -> None:
    """`sh -c '[ -f F ] || { touch F; exit 1; }'` under `kjobs run`, and `kjobs simulate` with fails-once.yaml."""
    marker = tmp_path / "ran-once"
    manifest = job(
        {
            "containers": [
                {
                    "name": "main",
                    "image": "x",
                    "command": ["sh", "-c", f"[ -f {marker} ] || {{ touch {marker}; exit 1; }}"],
                }
            ]
        },
        backoffLimit=1,
    )
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(manifest))

    def kjobs(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "kjobs", *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)

    simulated = kjobs("simulate", str(path), "--model", str(FAILS_ONCE))
    real = kjobs("run", str(path), "--plain", "--backoff", "0.2")
    assert (simulated.returncode, real.returncode) == (0, 0), simulated.stderr + real.stderr
    for out in (simulated.stdout, real.stdout):
        assert "reason: CompletionsReached" in out and "succeeded: 1  failed: 1" in out


def restart_rules_job(**spec: Any) -> Obj:
    rules = [{"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}]
    main = {"name": "main", "image": "x", "restartPolicy": "Never", "restartPolicyRules": rules}
    return job({"containers": [main]}, **spec)


def test_restarts_by_restart_policy_rules_are_counted_and_said_not_to_count_toward_backoff_limit(
    tmp_path: Path,
) -> None:
    """A Never pod's container restarted in place by its restartPolicyRules (gate ContainerRestartRules) has a
    restartCount, which the reports counted only under restartPolicy OnFailure."""
    model = {"containers": {"runTime": {"constant": "2s"}, "attempts": [{"exitCodes": [{"code": 42}]}, {}]}}
    manifest = restart_rules_job(completionMode="Indexed", completions=2, parallelism=2, backoffLimit=0)
    features = FeatureGates.parse("AllAlpha=true")
    result = simulate(manifest, SimulationOptions(model=parse_model(model), features=features))
    assert (result.outcome, result.job["status"].get("failed", 0), result.container_restarts) == ("Complete", 0, 2)
    assert result.to_dict()["restartPolicy"] == "Never"
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(manifest))
    (tmp_path / "model.yaml").write_text(yaml.safe_dump(model))
    args = ["simulate", str(tmp_path / "job.yaml"), "--model", str(tmp_path / "model.yaml")]
    command = [sys.executable, "-m", "kjobs", *args, "--feature-gates", "AllAlpha=true"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert "container restarts: 2 (in place; restartPolicy Never: not counted toward backoffLimit)" in out.stdout


def test_a_sidecars_restarts_are_counted() -> None:
    sidecar = {"name": "proxy", "image": "x", "restartPolicy": "Always"}
    model = parse_model(
        {
            "containers": {"runTime": {"constant": "60s"}},
            "overrides": [
                {
                    "container": "proxy",
                    "attempts": [
                        {"runTime": {"constant": "10s"}, "exitCodes": [{"code": 1}]},
                        {"runTime": {"constant": "1h"}},
                    ],
                }
            ],
        }
    )
    result = simulate(job({"initContainers": [sidecar]}, backoffLimit=0), SimulationOptions(model=model))
    assert (result.outcome, result.container_restarts, result.restart_policy) == ("Complete", 1, "Never")
