"""An idle simulated cluster ends its run once nothing can change any more, instead of running heartbeats, the
node monitor and resyncs to `--time-limit` (720 h took ~2.5 min of wall time), while every timed decision that
can still change the Job stays exact (docs/sim2-43.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kjobs.api.types import Obj
from kjobs.cli import main
from kjobs.clock import FakeClock
from kjobs.simulate import SimulationOptions, parse_model
from kjobs.simulate.session import DEFAULT_TIME_LIMIT, SimulationResult, simulate_on_loop
from kjobs.virtualtime import run

NO_NODE = {"nodeSelector": {"no-such": "node"}}


def job(pod_spec: dict[str, Any] | None = None, **spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "stuck", "namespace": "default"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}], **(pod_spec or {})}
            },
            **spec,
        },
    }


def simulate_timed(manifest: Obj, options: SimulationOptions) -> tuple[SimulationResult, float]:
    """The result and how far the virtual clock really went (what costs wall time)."""
    clock = FakeClock()
    start = clock.now()
    result = run(simulate_on_loop(manifest, options), clock)
    return result, clock.now() - start


def test_an_unschedulable_pod_ends_the_run_as_the_time_limit_would_without_running_to_it() -> None:
    result, went = simulate_timed(job(NO_NODE), SimulationOptions())
    assert (result.outcome, result.pods_created, result.virtual_seconds) == ("Unfinished", 1, DEFAULT_TIME_LIMIT)
    assert went < 60 and result.settled_after is not None and result.settled_after < 60
    assert result.settled.startswith("no node for pod stuck-")
    assert "didn't match Pod's node affinity/selector" in result.settled


def test_scheduling_gates_nobody_removes_end_the_run() -> None:
    result, went = simulate_timed(job({"schedulingGates": [{"name": "example.com/wait"}]}), SimulationOptions())
    assert (result.outcome, went < 60) == ("Unfinished", True)
    assert "waits for its spec.schedulingGates" in result.settled


def test_an_unschedulable_pod_with_active_deadline_of_an_hour_still_fails_at_the_deadline() -> None:
    """activeDeadlineSeconds is a timer that can still change the Job: the run goes on to it. An hour is far past
    the 1 s at which the run would otherwise settle; every virtual hour costs the node loops' CPU."""
    result, _ = simulate_timed(job(NO_NODE, activeDeadlineSeconds=3600), SimulationOptions())
    failure_target = [t for t, what, _, d in result.trace if what == "job" and d.startswith("FailureTarget=True")]
    assert failure_target == [3600.0]
    assert (result.outcome, result.reason, result.settled_after) == ("Failed", "DeadlineExceeded", None)


def test_a_pod_waiting_for_memory_pressure_to_clear_is_not_taken_for_idle() -> None:
    """After a node-pressure eviction the only node keeps MemoryPressure (and its NoSchedule taint) for its 5 min
    transition period, which only the kubelet's periodic status decides: the replacement waits and then runs."""
    model = parse_model(
        {
            "containers": {"runTime": {"constant": "60s"}},
            "disruptions": [{"kind": "node-pressure", "at": "10s"}],
        }
    )
    result, _ = simulate_timed(job(backoffLimit=2), SimulationOptions(model=model, nodes=1))
    assert (result.outcome, result.pods_created, result.settled_after) == ("Complete", 2, None)
    running = [t for t, what, _, d in result.trace if what == "pod-phase" and d == "Running"]
    assert running[1] > 300  # scheduled once MemoryPressure cleared, not as soon as the back-off ended


def test_the_reports_say_why_the_run_stopped(tmp_path: Path) -> None:
    manifest = tmp_path / "job.json"
    manifest.write_text(json.dumps(job(NO_NODE)))
    runner = CliRunner()
    text = runner.invoke(main, ["simulate", str(manifest)])
    out = runner.invoke(main, ["simulate", str(manifest), "-o", "json"])
    assert text.exit_code == 1, text.output  # not Complete
    assert "virtual time: 720h" in text.output
    assert "  nothing left to happen after 1s: no node for pod stuck-" in text.output
    summary = json.loads(out.output)
    assert (summary["outcome"], summary["settledAfter"]) == ("Unfinished", 1.0)
    assert summary["settled"].startswith("no node for pod")
