"""Ephemeral containers (`kubectl debug`): a running pod that gains one starts it at once, reports it in
`status.ephemeralContainerStatuses`, never restarts it, and stops it with the pod; it changes neither the pod's
phase nor its readiness (pkg/kubelet/kuberuntime/kuberuntime_manager.go `computePodActions`)."""

from __future__ import annotations

import asyncio
import copy

from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.node.sim_runtime import Outcome, SimulatedRuntime
from tests.node.helpers import T0, make_pod


def _with_debugger(pod: Obj, name: str = "dbg", version: str = "2") -> Obj:
    updated = copy.deepcopy(pod)
    debuggers = updated["spec"].setdefault("ephemeralContainers", [])
    debuggers.append({"name": name, "image": "busybox", "command": ["sh"]})
    updated["metadata"]["resourceVersion"] = version
    return updated


def _ephemeral(handle: object, name: str = "dbg") -> Obj:
    statuses: list[Obj] = handle.status.get("ephemeralContainerStatuses", [])  # type: ignore[attr-defined]
    return next(s for s in statuses if s["name"] == name)


def _ready(handle: object) -> str:
    conditions: list[Obj] = handle.status["conditions"]  # type: ignore[attr-defined]
    return str(next(c for c in conditions if c["type"] == "Ready")["status"])


def test_an_ephemeral_container_runs_once_and_leaves_phase_and_readiness_alone() -> None:
    clock = FakeClock(T0)
    runtime = SimulatedRuntime(
        clock=clock,
        outcome=lambda pod, c, n: Outcome(duration=5, exit_code=3) if c["name"] == "dbg" else Outcome(duration=1e6),
    )
    pod = make_pod(policy="Always")
    handle = asyncio.run(runtime.run_pod(pod))
    runtime.run_until_idle(clock, limit=T0 + 1)
    assert (handle.phase, _ready(handle)) == ("Running", "True")
    runtime.update_pod(_with_debugger(pod))
    runtime.run_until_idle(clock, limit=T0 + 2)
    running = _ephemeral(handle)
    assert "running" in running["state"] and running["ready"] is False and "started" not in running
    assert (handle.phase, _ready(handle)) == ("Running", "True")
    runtime.run_until_idle(clock, limit=T0 + 60)
    ended = _ephemeral(handle)
    assert ended["state"]["terminated"]["exitCode"] == 3
    assert ended["restartCount"] == 0  # whatever the pod's restartPolicy (Always): never restarted
    assert (handle.phase, _ready(handle)) == ("Running", "True")
    assert [s["name"] for s in handle.status["containerStatuses"]] == ["main"]


def test_an_ephemeral_container_is_stopped_with_the_pod() -> None:
    clock = FakeClock(T0)
    runtime = SimulatedRuntime(clock=clock, outcome=lambda pod, c, n: Outcome(duration=1e6, term_delay=1))
    pod = make_pod(policy="Never", terminationGracePeriodSeconds=30)
    handle = asyncio.run(runtime.run_pod(pod))
    runtime.run_until_idle(clock, limit=T0 + 1)
    runtime.update_pod(_with_debugger(pod))
    runtime.run_until_idle(clock, limit=T0 + 2)
    asyncio.run(runtime.kill_pod(handle.uid, grace_seconds=30))
    runtime.run_until_idle(clock, limit=T0 + 10)
    assert handle.terminal
    assert _ephemeral(handle)["state"]["terminated"]["exitCode"] == 143  # SIGTERMed with the regular container


def test_a_pod_whose_work_is_done_stops_its_running_ephemeral_container() -> None:
    """A Job's pod succeeds when its main container does, a debugger still running in it or not."""
    clock = FakeClock(T0)
    runtime = SimulatedRuntime(
        clock=clock,
        outcome=lambda pod, c, n: Outcome(duration=1e6, term_delay=1) if c["name"] == "dbg" else Outcome(duration=10),
    )
    pod = make_pod(policy="Never")
    handle = asyncio.run(runtime.run_pod(pod))
    runtime.run_until_idle(clock, limit=T0 + 1)
    runtime.update_pod(_with_debugger(pod))
    runtime.run_until_idle(clock, limit=T0 + 60)
    assert handle.terminal and handle.phase == "Succeeded"
    assert "terminated" in _ephemeral(handle)["state"]


def test_the_simulated_runtime_runs_a_second_debugger_beside_the_first() -> None:
    clock = FakeClock(T0)
    runtime = SimulatedRuntime(
        clock=clock, outcome=lambda pod, c, n: Outcome(duration=0) if c["name"] != "main" else Outcome(duration=1e6)
    )
    pod = make_pod(policy="Always")
    handle = asyncio.run(runtime.run_pod(pod))
    first = _with_debugger(pod)
    runtime.update_pod(first)
    runtime.run_until_idle(clock, limit=T0 + 1)
    runtime.update_pod(_with_debugger(first, "dbg2", "3"))
    runtime.run_until_idle(clock, limit=T0 + 2)
    assert [s["name"] for s in handle.status["ephemeralContainerStatuses"]] == ["dbg", "dbg2"]
    assert all(s["state"]["terminated"]["exitCode"] == 0 for s in handle.status["ephemeralContainerStatuses"])
