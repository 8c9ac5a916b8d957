"""SimulatedRuntime: the shared restart/termination/status rules, driven in virtual time."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.node.observations import NODE_SHUTDOWN, eviction
from kjobs.node.sim_runtime import Outcome, SimulatedRuntime
from kjobs.node.supervisor import NotRunning
from tests.node.helpers import T0, make_pod


def sim(outcome: object = None, **kwargs: object) -> tuple[SimulatedRuntime, FakeClock, list[Obj]]:
    clock = FakeClock(T0)
    seen: list[Obj] = []
    runtime = SimulatedRuntime(
        clock=clock,
        outcome=outcome or (lambda pod, c, n: Outcome()),  # type: ignore[arg-type]
        on_status=lambda uid, status: seen.append(status),
        **kwargs,  # type: ignore[arg-type]
    )
    return runtime, clock, seen


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


def main_state(status: Obj) -> Obj:
    return status["containerStatuses"][0]["state"]


def test_succeeds_after_duration() -> None:
    runtime, clock, seen = sim(lambda pod, c, n: Outcome(duration=5, output=b"done\n"))
    handle = run(runtime.run_pod(make_pod()))
    assert handle.phase == "Running"
    clock.advance(4.9)
    runtime.run_due()
    assert handle.phase == "Running"
    clock.advance(0.1)
    runtime.run_due()
    assert handle.phase == "Succeeded"
    assert handle.terminal
    terminated = main_state(handle.status)["terminated"]
    assert terminated["finishedAt"] == "2023-11-14T22:13:25Z"
    assert [s["phase"] for s in seen] == ["Running", "Succeeded"]

    async def read(**options: Any) -> bytes:
        return b"".join([c async for c in runtime.logs(handle.uid, "main", **options)])

    assert run(read()) == b"done\n"
    # A simulated container writes its output as it starts: its lines carry that (virtual) time.
    assert run(read(timestamps=True)) == b"2023-11-14T22:13:20.000000000Z done\n"
    assert run(read(since_seconds=5)) == b"done\n"  # started exactly 5 s ago
    assert run(read(since_seconds=4)) == b""
    assert run(read(since_time=clock.now() - 5.5)) == b"done\n"


def test_on_failure_crash_loop_timing() -> None:
    """Each attempt fails after 1s; restarts come after 0, 10, 20, 40 s of back-off (kubelet's defaults)."""
    starts: list[float] = []

    def outcome(pod: Obj, container: Obj, attempt: int) -> Outcome:
        starts.append(clock.now())
        return Outcome(duration=1, exit_code=1 if attempt < 4 else 0)

    runtime, clock, _ = sim(outcome)
    handle = run(runtime.run_pod(make_pod(policy="OnFailure")))
    clock.advance(1)
    runtime.run_due()  # first failure: immediate restart
    clock.advance(1)
    runtime.run_due()  # second failure: back-off 10 s
    main = handle.status["containerStatuses"][0]
    assert main["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert main["state"]["waiting"]["message"].startswith("back-off 10s restarting failed container=main")
    assert main["restartCount"] == 1
    assert handle.phase == "Running"
    runtime.run_until_idle(clock)
    assert [s - T0 for s in starts] == [0, 1, 12, 33, 74]
    assert handle.phase == "Succeeded"
    assert handle.status["containerStatuses"][0]["restartCount"] == 4


def test_back_off_base_is_configurable() -> None:
    starts: list[float] = []

    def outcome(pod: Obj, container: Obj, attempt: int) -> Outcome:
        starts.append(clock.now())
        return Outcome(duration=0, exit_code=1 if attempt < 3 else 0)

    runtime, clock, _ = sim(outcome, backoff_base=0.5, backoff_cap=1.0)
    run(runtime.run_pod(make_pod(policy="OnFailure")))
    runtime.run_until_idle(clock)
    assert [s - T0 for s in starts] == [0, 0, 0.5, 1.5]


def test_init_containers_in_order_then_main() -> None:
    order: list[tuple[str, float]] = []

    def outcome(pod: Obj, container: Obj, attempt: int) -> Outcome:
        order.append((container["name"], clock.now() - T0))
        return Outcome(duration=2)

    runtime, clock, _ = sim(outcome)
    pod = make_pod(init=[{"name": "i1", "image": "x"}, {"name": "i2", "image": "x"}])
    handle = run(runtime.run_pod(pod))
    assert handle.phase == "Pending"
    runtime.run_until_idle(clock)
    assert order == [("i1", 0), ("i2", 2), ("main", 4)]
    assert handle.phase == "Succeeded"


def test_init_failure_never_fails_without_running_main() -> None:
    started: list[str] = []

    def outcome(pod: Obj, container: Obj, attempt: int) -> Outcome:
        started.append(container["name"])
        return Outcome(duration=1, exit_code=5)

    runtime, clock, _ = sim(outcome)
    handle = run(runtime.run_pod(make_pod(init=[{"name": "i1", "image": "x"}])))
    runtime.run_until_idle(clock)
    assert started == ["i1"]
    assert handle.phase == "Failed"


def test_graceful_termination_within_grace() -> None:
    runtime, clock, _ = sim(lambda pod, c, n: Outcome(duration=1000, term_delay=3))
    handle = run(runtime.run_pod(make_pod()))
    run(runtime.kill_pod(handle.uid, grace_seconds=30))
    runtime.run_until_idle(clock)
    assert clock.now() - T0 == 3
    terminated = main_state(handle.status)["terminated"]
    assert (terminated["exitCode"], terminated["signal"]) == (143, 15)
    assert handle.phase == "Failed"


def test_sigkill_after_grace() -> None:
    runtime, clock, _ = sim(lambda pod, c, n: Outcome(duration=1000, term_delay=100))
    handle = run(runtime.run_pod(make_pod()))
    run(runtime.kill_pod(handle.uid, grace_seconds=5))
    runtime.run_until_idle(clock)
    assert clock.now() - T0 == 5
    terminated = main_state(handle.status)["terminated"]
    assert (terminated["exitCode"], terminated["signal"], terminated["reason"]) == (137, 9, "Error")


def test_kill_during_back_off_ends_the_pod() -> None:
    runtime, clock, _ = sim(
        lambda pod, c, n: Outcome(duration=1, exit_code=1),
    )
    handle = run(runtime.run_pod(make_pod(policy="Always")))
    clock.advance(1)
    runtime.run_due()
    clock.advance(1)
    runtime.run_due()
    assert "waiting" in main_state(handle.status)
    run(runtime.kill_pod(handle.uid, grace_seconds=30))
    assert handle.terminal
    assert handle.phase == "Failed"
    assert runtime.next_wakeup() is None


def test_eviction_is_failed_with_disruption_target() -> None:
    runtime, clock, _ = sim(lambda pod, c, n: Outcome(duration=1000))
    handle = run(runtime.run_pod(make_pod()))
    run(runtime.kill_pod(handle.uid, grace_seconds=0, reason=eviction("The node was low on resource: memory.")))
    assert handle.phase == "Running"  # not terminal while a container could run (the kubelet's mergePodStatus)
    runtime.run_until_idle(clock)
    assert handle.terminal and handle.phase == "Failed"
    assert handle.status["reason"] == "Evicted"
    target = next(c for c in handle.status["conditions"] if c["type"] == "DisruptionTarget")
    assert (target["reason"], target["status"]) == ("TerminationByKubelet", "True")


def test_node_shutdown_keeps_succeeded_pods_succeeded() -> None:
    runtime, clock, _ = sim(lambda pod, c, n: Outcome(duration=1))
    handle = run(runtime.run_pod(make_pod(policy="Never")))
    runtime.run_until_idle(clock)
    assert handle.phase == "Succeeded"
    run(runtime.kill_pod(handle.uid, grace_seconds=10, reason=NODE_SHUTDOWN))
    assert handle.phase == "Succeeded"


def test_oom_outcome() -> None:
    runtime, clock, _ = sim(lambda pod, c, n: Outcome(duration=2, oom=True))
    handle = run(runtime.run_pod(make_pod()))
    runtime.run_until_idle(clock)
    terminated = main_state(handle.status)["terminated"]
    assert (terminated["reason"], terminated["exitCode"], terminated["signal"]) == ("OOMKilled", 137, 9)


def test_logs_errors_like_kubelet() -> None:
    runtime, _clock, _ = sim(lambda pod, c, n: Outcome(duration=1))
    pod = make_pod(init=[{"name": "init", "image": "x"}])
    handle = run(runtime.run_pod(pod))
    with pytest.raises(ApiError) as waiting:
        runtime.logs(handle.uid, "main")
    assert (waiting.value.code, waiting.value.message) == (
        400,
        'container "main" in pod "job-0-abcde" is waiting to start: PodInitializing',
    )
    with pytest.raises(ApiError, match="container other is not valid for pod job-0-abcde"):
        runtime.logs(handle.uid, "other")
    with pytest.raises(ApiError, match='previous terminated container "init" in pod "job-0-abcde" not found'):
        runtime.logs(handle.uid, "init", previous=True)


def test_pod_without_uid_is_rejected() -> None:
    runtime, _, _ = sim()
    pod = make_pod()
    del pod["metadata"]["uid"]
    with pytest.raises(ApiError):
        run(runtime.run_pod(pod))


def test_run_pod_is_idempotent() -> None:
    runtime, _clock, _ = sim(lambda pod, c, n: Outcome(duration=10))
    first = run(runtime.run_pod(make_pod()))
    second = run(runtime.run_pod(make_pod()))
    assert first is second
    assert len(runtime.records[first.uid].attempts["main"]) == 1


def test_active_deadline_fails_pod_without_disruption_condition() -> None:
    runtime, clock, _ = sim(lambda pod, c, n: Outcome(duration=1000, term_delay=2))
    handle = run(runtime.run_pod(make_pod(activeDeadlineSeconds=60, terminationGracePeriodSeconds=5)))
    clock.advance(59)
    runtime.run_due()
    assert handle.phase == "Running"
    clock.advance(1)
    runtime.run_due()
    assert handle.phase == "Running"  # not terminal while its container stops (the kubelet's mergePodStatus)
    runtime.run_until_idle(clock)
    assert handle.terminal
    assert (handle.phase, handle.status["reason"]) == ("Failed", "DeadlineExceeded")
    assert handle.status["message"] == "Pod was active on the node longer than the specified deadline"
    assert all(c["type"] != "DisruptionTarget" for c in handle.status["conditions"])
    assert clock.now() - T0 == 62
    assert handle.status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 143


def test_drive_runs_events_as_a_fake_clock_advances() -> None:
    """With drive(), the runtime's next event is the clock's next deadline: a simulator advances one clock."""

    async def scenario() -> list[tuple[float, str]]:
        clock = FakeClock(T0)
        runtime = SimulatedRuntime(
            clock=clock, outcome=lambda pod, c, n: Outcome(duration=5, exit_code=1 if n < 2 else 0), backoff_base=10
        )
        driver = asyncio.ensure_future(runtime.drive())
        handle = await runtime.run_pod(make_pod(policy="OnFailure"))
        timeline: list[tuple[float, str]] = []
        for _ in range(100):
            for _ in range(5):
                await asyncio.sleep(0)
            timeline.append((clock.now() - T0, handle.phase))
            if handle.terminal:
                break
            deadline = clock.next_deadline()
            assert deadline is not None
            clock.set(deadline)
        driver.cancel()
        return timeline

    timeline = asyncio.run(scenario())
    # Attempts fail at 5 and 10 (immediate restart, then 10 s back-off), the third succeeds at 25.
    assert [t for t, _ in timeline] == [0, 5, 10, 20, 25]
    assert timeline[-1] == (25, "Succeeded")


@pytest.mark.parametrize(
    ("reason", "killed_after"),
    [
        pytest.param(None, 2.0, id="api-deletion-gets-kubelet-minimum"),
        pytest.param(eviction("memory pressure"), 0.0, id="eviction-override-is-exact"),
    ],
)
def test_minimum_grace_period(reason: object, killed_after: float) -> None:
    runtime, clock, _ = sim(lambda pod, c, n: Outcome(duration=1000, term_delay=100))
    handle = run(runtime.run_pod(make_pod()))
    run(runtime.kill_pod(handle.uid, grace_seconds=0, reason=reason))  # type: ignore[arg-type]
    runtime.run_until_idle(clock)
    assert clock.now() - T0 == killed_after
    assert handle.status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 137


def test_update_pod_carries_conditions_set_by_others() -> None:
    runtime, _clock, seen = sim(lambda pod, c, n: Outcome(duration=100))
    pod = make_pod()
    handle = run(runtime.run_pod(pod))
    newer = {**pod, "status": {"conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "X"}]}}
    runtime.update_pod(newer)
    assert handle.status["conditions"][0]["type"] == "DisruptionTarget"
    assert seen[-1] is handle.status


@pytest.mark.parametrize(
    ("meta", "spec", "grace"),
    [
        pytest.param({"deletionGracePeriodSeconds": 5}, {"terminationGracePeriodSeconds": 60}, 5.0, id="deletion"),
        pytest.param({}, {"terminationGracePeriodSeconds": 60}, 60.0, id="spec"),
        pytest.param({}, {}, 30.0, id="default"),
    ],
)
def test_deletion_grace_seconds(meta: dict, spec: dict, grace: float) -> None:
    from kjobs.node.supervisor import deletion_grace_seconds

    assert deletion_grace_seconds({"metadata": meta, "spec": spec}) == grace


def test_fail_ends_a_running_container_at_once_and_its_scheduled_exit_never_comes() -> None:
    runtime, clock, seen = sim(lambda pod, c, n: Outcome(duration=60))
    handle = run(runtime.run_pod(make_pod()))
    runtime.fail(handle.uid, "main", 3)
    assert (handle.phase, main_state(handle.status)["terminated"]["exitCode"]) == ("Failed", 3)
    clock.advance(60)
    runtime.run_due()
    assert [s["phase"] for s in seen] == ["Running", "Failed"]
    with pytest.raises(NotRunning):
        runtime.fail(handle.uid, "main", 1)


@pytest.mark.parametrize(
    ("duration", "phases"),
    [
        pytest.param(0.01, ["Succeeded"], id="ended-before-the-report-delay: one status, ended"),
        pytest.param(5.0, ["Running", "Succeeded"], id="running-past-the-report-delay: Running, then ended"),
    ],
)
def test_start_report_delay_reports_a_short_container_once(duration: float, phases: list[str]) -> None:
    """With `start_report_delay` (what `kjobs node join --runtime sim` uses, as the process runtime's PLEG delay)
    a container reads Running only once it has run that long; one that ended sooner is reported once, ended."""
    runtime, clock, seen = sim(lambda pod, c, n: Outcome(duration=duration), start_report_delay=0.02)
    handle = run(runtime.run_pod(make_pod()))
    assert runtime.starting(handle.uid)
    runtime.run_until_idle(clock)
    assert handle.phase == "Succeeded"
    assert [s["phase"] for s in seen if s["phase"] in ("Running", "Succeeded")] == phases
    assert not runtime.starting(handle.uid)
    state = main_state(handle.status)["terminated"]
    assert (state["exitCode"], state["reason"]) == (0, "Completed")


def test_fallback_to_logs_on_error_takes_the_simulated_output() -> None:
    output = b"".join(b"line %d\n" % i for i in range(100))
    runtime, clock, _ = sim(lambda pod, c, n: Outcome(duration=1, exit_code=2, output=output))
    container = {"name": "main", "image": "x", "terminationMessagePolicy": "FallbackToLogsOnError"}
    failed = run(runtime.run_pod(make_pod([container])))
    plain = run(runtime.run_pod(make_pod([{"name": "main", "image": "x"}], uid="uid-2", name="other")))
    clock.advance(1)
    runtime.run_due()
    assert main_state(failed.status)["terminated"]["message"] == "".join(f"line {i}\n" for i in range(20, 100))
    assert "message" not in main_state(plain.status)["terminated"]
