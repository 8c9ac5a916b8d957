"""Failure models in simulation: OOM kills and each disruption kind through the real component, by seed."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.features import FeatureGates
from kjobs.simulate import ModelError, SimulationOptions, parse_model, simulate


def job(*, completions: int = 4, parallelism: int = 2, policy: list[Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "completionMode": "Indexed",
        "completions": completions,
        "parallelism": parallelism,
        "backoffLimit": 100,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "main", "image": "x", "resources": {"requests": {"cpu": "100m"}}}],
            }
        },
    }
    if policy is not None:
        spec["podFailurePolicy"] = {"rules": policy}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "work"}, "spec": spec}


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("preempt", "PreemptionByScheduler"),
        ("drain", "EvictionByEvictionAPI"),
        ("evict", "EvictionByEvictionAPI"),
        ("taint", "DeletionByTaintManager"),
        ("node-loss", "DeletionByPodGC"),
        ("node-pressure", "TerminationByKubelet"),
        ("node-shutdown", "TerminationByKubelet"),
    ],
)
def test_each_disruption_leaves_its_disruption_target_reason(kind: str, reason: str) -> None:
    """Each pod runs 10 min at 3 disruptions per pod-hour: the same half a disruption per pod as 1 h at 0.5, in a
    sixth of the virtual time (whose node heartbeats and leases are most of a run's CPU)."""
    model = parse_model(
        {"containers": {"runTime": {"constant": "10m"}}, "disruptions": [{"kind": kind, "ratePerPodHour": 3}]}
    )
    result = simulate(job(), SimulationOptions(model=model, seed=1))
    assert result.outcome == "Complete", result.to_dict()
    assert result.disruptions.get(kind, 0) > 0
    assert result.failures_by_reason.get(reason, 0) > 0, result.failures_by_reason


def test_oom_kills_are_reported_as_the_kubelet_does() -> None:
    model = parse_model({"containers": {"runTime": {"constant": "10s"}, "oomKillProbability": 0.5}})
    result = simulate(job(completions=10, parallelism=5), SimulationOptions(model=model, seed=3))
    assert set(result.failures_by_reason) == {"OOMKilled 137"}
    assert result.wasted_pod_seconds == pytest.approx(10.0 * result.failures_by_reason["OOMKilled 137"], abs=0.01)
    assert sum(result.retries_per_index.values()) == result.failures_by_reason["OOMKilled 137"]


def test_the_same_seed_gives_the_same_disruptions() -> None:
    """Runs of 5 min on average at four times 20 min's rates: as many disruptions per pod, a quarter of the
    virtual time."""
    model = parse_model(
        {
            "containers": {"runTime": {"exponential": {"mean": "5m"}}},
            "disruptions": [{"kind": "evict", "ratePerHour": 12}, {"kind": "taint", "ratePerPodHour": 2}],
        }
    )
    first = simulate(job(completions=6), SimulationOptions(model=model, seed=5))
    second = simulate(job(completions=6), SimulationOptions(model=model, seed=5))
    assert first.trace == second.trace
    assert first.disruptions == second.disruptions and sum(first.disruptions.values()) > 0


def test_preemption_needs_cpu_requests_and_says_so() -> None:
    bare = job()
    del bare["spec"]["template"]["spec"]["containers"][0]["resources"]
    model = parse_model({"disruptions": [{"kind": "preempt", "ratePerHour": 1}]})
    with pytest.raises(ModelError, match=r"model\.disruptions\[0\]\.kind: preempt needs"):
        simulate(bare, SimulationOptions(model=model))


def test_a_failjob_at_a_restarting_pods_oom_kill_reports_the_oom_kill() -> None:
    """Under a restart limit a FailJob rule acts at the first termination it matches, while the pod restarts
    (docs/onfailure-pod-failure-policy.md); the pod then ends killed for the Job's failure (143). Its failure is
    the OOM kill the rule matched, as `kjobs run` and the Job's condition say, not the kill."""
    limited = job(
        completions=1, parallelism=1, policy=[{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [137]}}]
    )
    limited["spec"]["template"]["spec"].update(restartPolicy="OnFailure", maxRestartTimes=2)
    model = parse_model({"containers": {"runTime": {"constant": "5s"}, "oomKillProbability": 1}})
    result = simulate(limited, SimulationOptions(model=model, features=FeatureGates.parse("AllAlpha=true")))
    assert (result.outcome, result.reason) == ("Failed", "PodFailurePolicy")
    assert result.failures_by_action == {"FailJob": 1}
    assert result.failures_by_reason == {"OOMKilled 137": 1}


def test_a_disruption_at_a_time_waits_for_a_running_pod_and_happens_once() -> None:
    """`at: 500ms` as `kjobs run --disrupt evict@500ms`: index 0 ends at once and index 1 only starts at 1 s (the
    Job controller's 1 s batch), so the eviction waits for a running pod; then it happens once."""
    model = parse_model(
        {
            "containers": {"runTime": {"constant": "5m"}, "sigterm": "Exit"},
            "overrides": [{"indexes": "0", "runTime": {"constant": "0s"}}],
            "disruptions": [{"kind": "evict", "at": "500ms"}],
        }
    )
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "at", "namespace": "default"},
        "spec": {
            "completionMode": "Indexed",
            "completions": 2,
            "parallelism": 1,
            "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}},
        },
    }
    result = simulate(job, SimulationOptions(model=model))
    assert result.disruptions == {"evict": 1}
    running = [t for t, what, _, detail in result.trace if what == "pod-phase" and detail == "Running"]
    failed = [t for t, what, _, detail in result.trace if what == "pod-phase" and detail.startswith("Failed")]
    assert running[0] == 1.0
    assert failed == [1.0]  # evicted as it started; with `sigterm: Exit` it ends at once
    assert result.failures_by_action == {"Ignore": 1}
    assert result.outcome == "Complete"
