"""Sidecars stop last, in reverse order (pkg/kubelet/kuberuntime/kuberuntime_termination_order.go).

The rule itself (`termination.stop_turns`), then whole pods in the simulated runtime, in virtual time: the
scenarios of test/e2e_node/container_lifecycle_test.go "A pod with restartable init containers is terminating"
(tests/e2e/test_k8s_node_e2e.py runs them on local processes). Before, kjobs sent SIGTERM to every container of
a stopping pod at once, so sidecars could stop before the main containers or each other.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.node.sim_runtime import Outcome, SimulatedRuntime
from kjobs.node.termination import stop_turns
from tests.node.helpers import T0, make_pod


def _sidecar(name: str) -> Obj:
    return {"name": name, "image": "busybox", "restartPolicy": "Always"}


def _init(name: str) -> Obj:
    return {"name": name, "image": "busybox"}


S1, S2, S3 = _sidecar("s1"), _sidecar("s2"), _sidecar("s3")
POD = make_pod(init=[S1, S2, S3])


def test_regular_containers_go_first() -> None:
    assert stop_turns(POD, {"s1", "s2", "s3", "main"}) == {"main"}


def test_then_the_sidecars_from_the_last_one() -> None:
    assert stop_turns(POD, {"s1", "s2", "s3"}) == {"s3"}
    assert stop_turns(POD, {"s1", "s2"}) == {"s2"}
    assert stop_turns(POD, {"s1"}) == {"s1"}


def test_a_sidecar_waits_only_for_the_next_sidecar() -> None:
    """The next sidecar not running closes its channel at once: the one before it does not wait for a later one
    (`newTerminationOrdering` chains each sidecar to the next only)."""
    assert stop_turns(POD, {"s1", "s3"}) == {"s1", "s3"}


def test_ordinary_init_containers_do_not_wait() -> None:
    pod = make_pod(init=[S1, _init("setup"), S2])
    assert stop_turns(pod, {"s1", "setup", "s2"}) == {"setup", "s2"}


def _run(
    pod: Obj, term_delays: dict[str, float], *, grace: float, stop_at: float | None = None, exact: bool = False
) -> dict[str, Any]:
    """Run `pod` in the simulated runtime: every container runs for ever and exits `term_delays[name]` seconds
    after SIGTERM, except `main`, which exits 0 at `stop_at` when given (else the pod is deleted at T0 + 1 with
    `grace`). Returns the final statuses by name: (exit code, seconds after T0 it finished)."""
    clock = FakeClock(T0)

    def outcome(p: Obj, container: Obj, n: int) -> Outcome:
        name = container["name"]
        if name == "main" and stop_at is not None:
            return Outcome(duration=stop_at - T0)
        return Outcome(duration=10_000, term_delay=term_delays.get(name, 0.0))

    runtime = SimulatedRuntime(clock=clock, outcome=outcome, minimum_grace_seconds=2)
    handle = asyncio.run(runtime.run_pod(pod))
    if stop_at is None:
        clock.advance(1)
        runtime.run_due()
        runtime.request_kill(handle.uid, grace_seconds=grace, exact=exact)
    runtime.run_until_idle(clock)
    statuses = [*handle.status.get("initContainerStatuses", []), *handle.status["containerStatuses"]]
    out = {}
    for status in statuses:
        terminated = status["state"]["terminated"]
        out[status["name"]] = (terminated["exitCode"], parse_time(terminated["finishedAt"]) - T0)
    return {"phase": handle.phase, **out}


def test_sidecars_stop_in_reverse_order_after_the_main_container_exits() -> None:
    """ "should terminate sidecars in reverse order after all main containers have exited": each sidecar takes
    1 s to exit after SIGTERM and gets it once the one after it has exited."""
    pod = make_pod(init=[S1, S2, S3], terminationGracePeriodSeconds=30)
    got = _run(pod, {"s1": 1, "s2": 1, "s3": 1}, grace=30, stop_at=T0 + 1)
    assert got["phase"] == "Succeeded"
    assert got["main"] == (0, 1)
    assert [got[name][1] for name in ("s3", "s2", "s1")] == [2, 3, 4]


def test_a_regular_container_past_the_grace_period_holds_the_sidecars_until_it() -> None:
    """ "should mark pod as failed if regular container has exceeded its termination grace period seconds":
    grace 5 s; main and two sidecars take 20 s. At the deadline main is SIGKILLed and every waiting sidecar gets
    its turn with the minimum 2 s: s2 (1 s) exits, s1 and s3 are SIGKILLed 2 s later."""
    pod = make_pod(init=[S1, S2, S3], terminationGracePeriodSeconds=5)
    got = _run(pod, {"main": 20, "s1": 20, "s2": 1, "s3": 20}, grace=5)
    assert got["phase"] == "Failed"
    assert got["main"] == (137, 6)
    assert got["s3"] == (137, 8)
    assert got["s2"] == (143, 7)
    assert got["s1"] == (137, 8)


def test_a_sidecar_past_its_share_of_the_grace_period_is_killed_at_the_deadline() -> None:
    """ "should mark pod as succeeded if any of the restartable init containers have exceeded its termination
    grace period seconds": grace 5 s; s2 takes 20 s, the others 1 s. main exits at 1 s, s3 at 2 s; s2 gets the
    rest (3 s) and is SIGKILLed at the deadline, when s1's wait ends too: it gets 2 s and exits in 1."""
    pod = make_pod(init=[S1, S2, S3], terminationGracePeriodSeconds=5)
    got = _run(pod, {"main": 1, "s1": 1, "s2": 20, "s3": 1}, grace=5)
    assert got["main"] == (143, 2)
    assert got["s3"] == (143, 3)
    assert got["s2"] == (137, 6)
    assert got["s1"] == (143, 7)


def test_an_exact_kill_without_grace_stops_everything_at_once() -> None:
    """A pod the agent forgets (`Supervisor.forget`): SIGKILL to every container, no turns."""
    pod = make_pod(init=[S1, S2, S3])
    got = _run(pod, {"main": 20, "s1": 20, "s2": 20, "s3": 20}, grace=0, exact=True)
    assert {got[name] for name in ("main", "s1", "s2", "s3")} == {(137, 1)}


def _phases(pod: Obj, outcomes: dict[str, Outcome]) -> tuple[list[tuple[float, str]], str]:
    clock = FakeClock(T0)
    seen: list[tuple[float, str]] = []
    runtime = SimulatedRuntime(
        clock=clock,
        outcome=lambda p, c, n: outcomes[c["name"]],
        on_status=lambda uid, status: seen.append((clock.now() - T0, status["phase"])),
    )
    handle = asyncio.run(runtime.run_pod(pod))
    runtime.run_until_idle(clock)
    return seen, handle.phase


def test_a_failed_init_container_fails_the_pod_only_once_its_sidecar_has_stopped() -> None:
    """mergePodStatus: no terminal phase while containers could run. The init container fails at 1 s; the
    sidecar before it takes 1 s to stop: the pod reads Pending until 2 s, then Failed."""
    pod = make_pod(init=[S1, _init("setup")], policy="Never")
    outcomes = {"s1": Outcome(duration=10_000, term_delay=1), "setup": Outcome(duration=1, exit_code=1)}
    seen, phase = _phases(pod, outcomes)
    assert phase == "Failed"
    assert next(t for t, p in seen if p == "Failed") == 2
    assert all(p == "Pending" for t, p in seen if t < 2)


def test_a_pod_succeeds_only_once_its_sidecar_has_stopped() -> None:
    pod = make_pod(init=[S1], policy="Never")
    outcomes = {"s1": Outcome(duration=10_000, term_delay=1), "main": Outcome(duration=1)}
    seen, phase = _phases(pod, outcomes)
    assert phase == "Succeeded"
    assert next(t for t, p in seen if p == "Succeeded") == 2
    assert all(p in ("Pending", "Running") for t, p in seen if t < 2)
