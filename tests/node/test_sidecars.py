"""Native sidecars (KEP-753): init containers with `restartPolicy: Always` on the node — the restart plan,
the pod phase, and whole pods in the simulated runtime. Before kjobs knew them, a Job whose pod had a
sidecar never got past its init containers: the sidecar runs for ever, and the pod stayed Pending."""

from __future__ import annotations

import asyncio

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.node.podstatus import compute_pod_status
from kjobs.node.restart import plan
from kjobs.node.runtime import PodHandle
from kjobs.node.sim_runtime import Outcome, SimulatedRuntime
from tests.node.helpers import T0, attempt, make_pod, record

SIDECAR = {"name": "proxy", "image": "envoy", "restartPolicy": "Always"}
SETUP = {"name": "setup", "image": "busybox"}


def sidecar_pod(*, init: list[Obj] | None = None, policy: str = "Never") -> Obj:
    return make_pod(init=init if init is not None else [SIDECAR], policy=policy)


def test_the_regular_containers_start_beside_a_running_sidecar() -> None:
    rec = record(sidecar_pod(), attempt("proxy"))
    decided = plan(rec, T0 + 1)
    assert decided.start == ("main",)
    assert not decided.done and not decided.stop


def test_the_next_container_waits_for_the_sidecar_to_have_started() -> None:
    starting = attempt("proxy")
    starting.started = False
    assert plan(record(sidecar_pod(init=[SIDECAR, SETUP]), starting), T0).start == ()
    assert plan(record(sidecar_pod(init=[SIDECAR, SETUP]), attempt("proxy")), T0).start == ("setup",)


def test_a_sidecar_that_exits_is_restarted_while_the_regular_containers_run() -> None:
    rec = record(sidecar_pod(), attempt("proxy", end=T0 + 1, code=0), attempt("main"))
    assert plan(rec, T0 + 2).start == ("proxy",)
    assert compute_pod_status(rec, T0 + 2)["phase"] == "Running"


def test_the_pod_is_stopped_once_its_regular_containers_are_done() -> None:
    rec = record(sidecar_pod(), attempt("proxy"), attempt("main", end=T0 + 1, code=0))
    decided = plan(rec, T0 + 2)
    assert decided.stop and not decided.done and decided.start == ()


def test_a_failed_init_container_stops_the_sidecars_before_it() -> None:
    rec = record(sidecar_pod(init=[SIDECAR, SETUP]), attempt("proxy"), attempt("setup", end=T0 + 1, code=3))
    decided = plan(rec, T0 + 2)
    assert decided.stop and not decided.done


def test_a_running_sidecar_keeps_the_pod_running_and_its_exit_does_not_decide_the_phase() -> None:
    running = record(sidecar_pod(), attempt("proxy"), attempt("main", start=T0 + 1))
    status = compute_pod_status(running, T0 + 2)
    assert status["phase"] == "Running"
    proxy = status["initContainerStatuses"][0]
    assert proxy["started"] and proxy["ready"]
    conditions = {c["type"]: c["status"] for c in status["conditions"]}
    assert conditions["Initialized"] == "True" and conditions["Ready"] == "True"
    stopped = record(sidecar_pod(), attempt("proxy", end=T0 + 3, code=143), attempt("main", end=T0 + 2, code=0))
    assert compute_pod_status(stopped, T0 + 4)["phase"] == "Succeeded"


def simulate(pod: Obj, main_code: int) -> PodHandle:
    """Run `pod` to its end: the sidecar would run for a day, the main container runs 5 s."""
    clock = FakeClock(T0)

    def outcome(_pod: Obj, container: Obj, _number: int) -> Outcome:
        if container["name"] == "proxy":
            return Outcome(duration=86_400, exit_code=0)
        return Outcome(duration=5, exit_code=main_code if container["name"] == "main" else 0)

    runtime = SimulatedRuntime(clock=clock, outcome=outcome)
    handle = asyncio.run(runtime.run_pod(pod))
    runtime.run_until_idle(clock)
    return handle


def test_sim_the_pod_ends_with_its_main_container_and_its_sidecar_is_terminated() -> None:
    handle = simulate(sidecar_pod(init=[SETUP, SIDECAR]), 0)
    assert handle.terminal and handle.phase == "Succeeded"
    proxy = handle.status["initContainerStatuses"][1]
    assert "terminated" in proxy["state"] and proxy["restartCount"] == 0
    assert (
        proxy["state"]["terminated"]["finishedAt"]
        == handle.status["containerStatuses"][0]["state"]["terminated"]["finishedAt"]
    )


def test_sim_a_failed_main_container_fails_the_pod_with_a_sidecar() -> None:
    handle = simulate(sidecar_pod(), 3)
    assert handle.terminal and handle.phase == "Failed"
    main = handle.status["containerStatuses"][0]["state"]["terminated"]
    assert main["exitCode"] == 3 and main["finishedAt"] == format_time(T0 + 5)


def test_sim_a_sidecar_that_crashes_at_once_holds_back_the_main_container() -> None:
    """computeInitContainerActions starts what follows a sidecar only beside it running: a sidecar that exits
    at once crash-loops (10 s, 20 s, ... of back-off) and the pod stays Pending, its main container never run."""
    clock = FakeClock(T0)
    starts: list[tuple[str, float]] = []

    def outcome(_pod: Obj, container: Obj, _number: int) -> Outcome:
        starts.append((container["name"], clock.now() - T0))
        return Outcome(duration=0, exit_code=1)

    runtime = SimulatedRuntime(clock=clock, outcome=outcome)
    handle = asyncio.run(runtime.run_pod(sidecar_pod()))
    runtime.run_until_idle(clock, limit=T0 + 60)
    assert starts == [("proxy", 0), ("proxy", 0), ("proxy", 10), ("proxy", 30)]
    assert handle.phase == "Pending"
    proxy = handle.status["initContainerStatuses"][0]
    assert proxy["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert handle.status["containerStatuses"][0]["state"] == {"waiting": {"reason": "PodInitializing"}}
