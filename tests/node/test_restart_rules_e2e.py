"""Container restart rules and the pod restart limit with real processes: the process runtime alone, and a Job
on the embedded cluster with every kjobs gate on (README "Feature gates")."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest

from kjobs.api.features import FeatureGates
from kjobs.api.types import Obj
from kjobs.client.resources import JOBS, PODS
from kjobs.node.observations import RESTART_LIMIT_CONDITION, RESTART_LIMIT_REASON
from kjobs.node.process_runtime import ProcessRuntime
from tests.e2e.support import Scenario, eventually, fast_settings, job_manifest, run, terminal_condition
from tests.node.helpers import make_pod
from tests.node.test_process_runtime import finish, sh, with_runtime

pytestmark = pytest.mark.e2e


def first_then(marker: Path, first: int, later: int) -> str:
    """A script that exits `first` on its first run and `later` on every run after it."""
    return f"if [ -e {marker} ]; then exit {later}; fi; touch {marker}; exit {first}"


def ruled(script: str, *, operator: str = "In", **exit_codes: object) -> Obj:
    """Container `main` running `script`, restartPolicy Never, one Restart rule (`exit_codes` with `operator`)."""
    return sh(
        script,
        restartPolicy="Never",
        restartPolicyRules=[{"action": "Restart", "exitCodes": {"operator": operator, **exit_codes}}],
    )


def main_status(status: Obj) -> Obj:
    return dict(status["containerStatuses"][0])


def run_pod(tmp_path: Path, pod: Obj) -> Obj:
    result: Obj = {}

    async def body(runtime: ProcessRuntime) -> None:
        result.update(await finish(runtime, pod))

    with_runtime(tmp_path, body)
    return result


def test_rule_on_42_restarts_in_a_never_pod_which_then_succeeds(tmp_path: Path) -> None:
    status = run_pod(tmp_path, make_pod([ruled(first_then(tmp_path / "ran", 42, 0), values=[42])]))
    assert status["phase"] == "Succeeded"
    main = main_status(status)
    assert main["restartCount"] == 1
    assert main["lastState"]["terminated"]["exitCode"] == 42
    assert main["state"]["terminated"]["exitCode"] == 0


def test_exit_no_rule_matches_fails_the_pod(tmp_path: Path) -> None:
    status = run_pod(tmp_path, make_pod([ruled(first_then(tmp_path / "ran", 43, 0), values=[42])]))
    assert status["phase"] == "Failed"
    assert main_status(status)["restartCount"] == 0
    assert main_status(status)["state"]["terminated"]["exitCode"] == 43


@pytest.mark.parametrize(("code", "phase", "restarts"), [(15, "Succeeded", 1), (21, "Failed", 0)])
def test_range_rule_matches_inside_not_outside(tmp_path: Path, code: int, phase: str, restarts: int) -> None:
    container = ruled(first_then(tmp_path / "ran", code, 0), values=[], valueRanges=[{"from": 10, "to": 20}])
    status = run_pod(tmp_path, make_pod([container]))
    assert (status["phase"], main_status(status)["restartCount"]) == (phase, restarts)


def test_max_restart_times_fails_the_pod_after_its_third_failed_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    pod = make_pod([sh(f"echo x >> {runs}; exit 3")], policy="OnFailure", maxRestartTimes=2)
    status = run_pod(tmp_path, pod)
    assert status["phase"] == "Failed"
    assert status["reason"] == RESTART_LIMIT_REASON
    condition = next(c for c in status["conditions"] if c["type"] == RESTART_LIMIT_CONDITION)
    assert (condition["status"], condition["reason"]) == ("True", RESTART_LIMIT_REASON)
    main = main_status(status)
    assert main["restartCount"] == 2
    assert main["state"]["terminated"]["exitCode"] == 3
    assert main["lastState"]["terminated"]["exitCode"] == 3
    assert runs.read_text().count("x") == 3


def run_job(tmp_path: Path, job: Obj) -> tuple[Obj, list[Obj]]:
    """Run `job` to its end on a one-node embedded cluster with every kjobs gate on; the Job and its pods."""
    settings = dataclasses.replace(fast_settings(tmp_path, nodes=1), features=FeatureGates.parse("AllAlpha=true"))
    name = job["metadata"]["name"]

    async def scenario() -> tuple[Obj, list[Obj]]:
        async with Scenario(tmp_path, settings) as s:
            await s.client.create(JOBS, "default", job)

            async def finished() -> Obj | None:
                current = await s.client.get(JOBS, "default", name)
                return current if terminal_condition(current) else None

            done = await eventually(finished, what="the Job finished")
            pods, _ = await s.client.list(PODS, "default")
            return done, pods

    return run(scenario)


def test_job_with_a_restart_rule_completes_without_a_failure(tmp_path: Path) -> None:
    job = job_manifest("rule42", first_then(tmp_path / "ran", 42, 0))
    job["spec"]["template"]["spec"]["containers"][0].update(
        restartPolicy="Never",
        restartPolicyRules=[{"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}],
    )

    done, pods = run_job(tmp_path, job)
    assert terminal_condition(done)["type"] == "Complete"
    assert done["status"].get("failed", 0) == 0 and done["status"]["succeeded"] == 1
    assert [main_status(p["status"])["restartCount"] for p in pods] == [1]


def test_a_job_counts_one_failure_for_a_pod_that_used_up_its_restart_limit(tmp_path: Path) -> None:
    """OnFailure with `maxRestartTimes: 2`: the pod runs three times and fails; the Job counts that one pod, not
    its two restarts, against `backoffLimit: 0` (README "Feature gates": JobPodRestartLimit). The plugin's cluster
    restarts after a 0.1 s crash-loop back-off, where the kubelet's would take 10 s before the second restart."""
    runs = tmp_path / "runs"
    job = job_manifest("limited", f"echo x >> {runs}; exit 3", backoffLimit=0)
    template = job["spec"]["template"]["spec"]
    template.update(restartPolicy="OnFailure", maxRestartTimes=2)

    started = time.monotonic()
    done, pods = run_job(tmp_path, job)
    assert time.monotonic() - started < 8
    condition = terminal_condition(done)
    assert (condition["type"], condition["reason"]) == ("Failed", "BackoffLimitExceeded")
    assert done["status"]["failed"] == 1
    assert done["status"].get("succeeded", 0) == 0
    assert [main_status(p["status"])["restartCount"] for p in pods] == [2]
    assert [p["status"]["reason"] for p in pods] == [RESTART_LIMIT_REASON]
    assert runs.read_text().count("x") == 3
