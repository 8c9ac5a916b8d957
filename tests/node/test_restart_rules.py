"""Container restart rules (KEP-5307) and the pod restart limit (maxRestartTimes, KEP-3322) on the node:
the rule table, the restart plan, the pod phase, and whole pods in the simulated runtime."""

from __future__ import annotations

import asyncio

import pytest

from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.node.observations import RESTART_LIMIT_CONDITION, RESTART_LIMIT_REASON
from kjobs.node.podstatus import compute_pod_status
from kjobs.node.restart import plan
from kjobs.node.restart_rules import container_should_restart, exit_codes_match
from kjobs.node.runtime import PodHandle
from kjobs.node.sim_runtime import Outcome, SimulatedRuntime
from tests.node.helpers import T0, attempt, make_pod, record


def restart_on(*values: int, operator: str = "In", policy: str = "Never", **extra: object) -> Obj:
    """A container with its own restartPolicy and one `Restart` rule on `values` (and `extra` exitCodes)."""
    exit_codes: Obj = {"operator": operator, "values": list(values), **extra}
    return {
        "name": "main",
        "image": "x",
        "restartPolicy": policy,
        "restartPolicyRules": [{"action": "Restart", "exitCodes": exit_codes}],
    }


RANGE = {"valueRanges": [{"from": 10, "to": 20}]}


@pytest.mark.parametrize(
    ("exit_codes", "code", "expected"),
    [
        pytest.param({"operator": "In", "values": [42]}, 42, True, id="in-listed"),
        pytest.param({"operator": "In", "values": [42]}, 43, False, id="in-not-listed"),
        pytest.param({"operator": "NotIn", "values": [0, 1]}, 2, True, id="notin-not-listed"),
        pytest.param({"operator": "NotIn", "values": [0, 1]}, 1, False, id="notin-listed"),
        pytest.param({"operator": "In", "values": [], **RANGE}, 10, True, id="range-lower-bound"),
        pytest.param({"operator": "In", "values": [], **RANGE}, 20, True, id="range-upper-bound"),
        pytest.param({"operator": "In", "values": [], **RANGE}, 21, False, id="range-outside"),
        pytest.param({"operator": "In", "values": [3], **RANGE}, 3, True, id="values-beside-ranges"),
        pytest.param({"operator": "NotIn", "values": [], **RANGE}, 15, False, id="notin-inside-range"),
        pytest.param({"operator": "NotIn", "values": [], **RANGE}, 9, True, id="notin-outside-range"),
        pytest.param({"operator": "Maybe", "values": [42]}, 42, False, id="unknown-operator-never-matches"),
    ],
)
def test_exit_codes_match(exit_codes: Obj, code: int, expected: bool) -> None:
    assert exit_codes_match(exit_codes, code) is expected


PLAIN: Obj = {"name": "main", "image": "x"}


@pytest.mark.parametrize(
    ("container", "pod_policy", "code", "expected"),
    [
        pytest.param(PLAIN, "Never", 1, False, id="pod-never"),
        pytest.param(PLAIN, "OnFailure", 1, True, id="pod-onfailure-failure"),
        pytest.param(PLAIN, "OnFailure", 0, False, id="pod-onfailure-success"),
        pytest.param(PLAIN, "Always", 0, True, id="pod-always"),
        pytest.param(restart_on(42), "Never", 42, True, id="rule-restarts-under-pod-never"),
        pytest.param(restart_on(42), "Never", 43, False, id="no-rule-container-never"),
        pytest.param(restart_on(42), "Always", 43, False, id="container-never-overrides-pod-always"),
        pytest.param(restart_on(42, policy="OnFailure"), "Never", 1, True, id="container-onfailure"),
        pytest.param(restart_on(42, policy="OnFailure"), "Always", 0, False, id="container-onfailure-success"),
        pytest.param(restart_on(0, operator="NotIn"), "Never", 7, True, id="notin-restarts-failures"),
        pytest.param(restart_on(0, operator="NotIn"), "Never", 0, False, id="notin-success-ends"),
        pytest.param(restart_on(**RANGE), "Never", 15, True, id="range-inside"),
        pytest.param(restart_on(**RANGE), "Never", 25, False, id="range-outside"),
        pytest.param({**PLAIN, "restartPolicy": "Never"}, "Always", 1, False, id="container-never-no-rules"),
    ],
)
def test_container_should_restart(container: Obj, pod_policy: str, code: int, expected: bool) -> None:
    assert container_should_restart(container, pod_policy, code) is expected


def test_plan_restarts_by_rule_in_a_never_pod() -> None:
    pod = make_pod([restart_on(42)])
    assert plan(record(pod, attempt(end=T0 + 1, code=42)), T0 + 1).start == ("main",)
    ended = plan(record(pod, attempt(end=T0 + 1, code=43)), T0 + 1)
    assert ended.start == () and ended.done


def test_plan_other_containers_run_on_when_one_ends_for_good() -> None:
    pod = make_pod([restart_on(42), {"name": "side", "image": "x"}], policy="Always")
    decisions = plan(record(pod, attempt(end=T0 + 1, code=1), attempt("side")), T0 + 1)
    assert decisions.start == () and not decisions.done


def onfailure_limited(limit: int, containers: list[Obj] | None = None) -> Obj:
    return make_pod(containers, policy="OnFailure", maxRestartTimes=limit)


def test_plan_restart_limit() -> None:
    pod = onfailure_limited(2)
    runs = [attempt(number=n, start=T0 + n, end=T0 + n + 0.5, code=1) for n in range(3)]
    assert plan(record(pod, *runs[:2]), T0 + 2).start == ("main",)  # 1 restart so far: a 2nd is allowed
    spent = plan(record(pod, *runs), T0 + 3)
    assert spent.limit_exceeded and spent.start == () and spent.done
    assert not plan(record(onfailure_limited(0), attempt(end=T0, code=0)), T0).limit_exceeded


def test_plan_restart_limit_is_shared_by_the_pods_containers() -> None:
    pod = onfailure_limited(1, [{"name": "a", "image": "x"}, {"name": "b", "image": "x"}])
    both_failed = plan(record(pod, attempt("a", end=T0, code=1), attempt("b", end=T0, code=1)), T0)
    assert both_failed.start == ("a",) and both_failed.limit_exceeded


@pytest.mark.parametrize(
    ("containers", "policy", "attempts", "phase"),
    [
        pytest.param([restart_on(42)], "Never", [attempt(end=T0, code=42)], "Running", id="rule-restarting"),
        pytest.param([restart_on(42)], "Never", [attempt(end=T0, code=43)], "Failed", id="no-rule-fails"),
        pytest.param([restart_on(42)], "Always", [attempt(end=T0, code=3)], "Failed", id="container-never-in-always"),
        pytest.param(
            [restart_on(42, policy="OnFailure")], "Always", [attempt(end=T0, code=0)], "Succeeded", id="onfailure-done"
        ),
        pytest.param([PLAIN], "Always", [attempt(end=T0, code=0)], "Running", id="classic-always"),
        pytest.param([PLAIN], "OnFailure", [attempt(end=T0, code=0)], "Succeeded", id="classic-onfailure"),
        pytest.param([PLAIN], "Never", [attempt(end=T0, code=1)], "Failed", id="classic-never"),
    ],
)
def test_phase(containers: list[Obj], policy: str, attempts: list[object], phase: str) -> None:
    rec = record(make_pod(containers, policy=policy), *attempts)  # type: ignore[arg-type]
    assert compute_pod_status(rec, T0 + 1000)["phase"] == phase


def test_init_container_rule_decides_whether_the_pod_fails() -> None:
    init = [{**restart_on(42), "name": "init"}]
    restarting = record(make_pod(init=init), attempt("init", end=T0, code=42))
    assert plan(restarting, T0).start == ("init",)
    failed = record(make_pod(init=init), attempt("init", end=T0, code=1))
    assert plan(failed, T0).done and compute_pod_status(failed, T0)["phase"] == "Failed"


# -- whole pods in the simulated runtime (virtual time, the shared supervisor) --------------------------------


def simulate(pod: Obj, codes: list[int], **kwargs: object) -> PodHandle:
    """Run `pod` to its end; its main container's n-th run lasts 1 s and exits with codes[n]."""
    clock = FakeClock(T0)
    runtime = SimulatedRuntime(
        clock=clock,
        outcome=lambda p, c, n: Outcome(duration=1, exit_code=codes[min(n, len(codes) - 1)]),
        **kwargs,  # type: ignore[arg-type]
    )
    handle = asyncio.run(runtime.run_pod(pod))  # type: ignore[arg-type]
    runtime.run_until_idle(clock)
    return handle


def main_status(handle: PodHandle) -> Obj:
    return dict(handle.status["containerStatuses"][0])


def test_sim_rule_restarts_then_succeeds() -> None:
    handle = simulate(make_pod([restart_on(42)]), [42, 0])
    assert handle.terminal and handle.phase == "Succeeded"
    status = main_status(handle)
    assert status["restartCount"] == 1
    assert status["lastState"]["terminated"]["exitCode"] == 42


def test_sim_unmatched_exit_fails_the_pod() -> None:
    handle = simulate(make_pod([restart_on(42)]), [43])
    assert handle.terminal and handle.phase == "Failed"
    assert main_status(handle)["restartCount"] == 0


def test_sim_range_rule() -> None:
    inside = simulate(make_pod([restart_on(**RANGE)]), [15, 0])
    outside = simulate(make_pod([restart_on(**RANGE)]), [21, 0])
    assert (inside.phase, main_status(inside)["restartCount"]) == ("Succeeded", 1)
    assert (outside.phase, main_status(outside)["restartCount"]) == ("Failed", 0)


def test_sim_restart_limit_fails_the_pod_after_its_third_run() -> None:
    handle = simulate(onfailure_limited(2), [1])
    assert handle.terminal and handle.phase == "Failed"
    assert handle.status["reason"] == RESTART_LIMIT_REASON
    assert "maxRestartTimes" in handle.status["message"]
    conditions = {c["type"]: c for c in handle.status["conditions"]}
    assert conditions[RESTART_LIMIT_CONDITION]["status"] == "True"
    assert conditions[RESTART_LIMIT_CONDITION]["reason"] == RESTART_LIMIT_REASON
    assert "DisruptionTarget" not in conditions
    status = main_status(handle)
    assert status["restartCount"] == 2
    assert status["state"]["terminated"]["exitCode"] == 1
    assert status["lastState"]["terminated"]["exitCode"] == 1


def test_sim_restart_limit_not_reached_when_the_pod_succeeds() -> None:
    handle = simulate(onfailure_limited(2), [1, 1, 0])
    assert handle.phase == "Succeeded" and "reason" not in handle.status
    assert main_status(handle)["restartCount"] == 2


def test_sim_restart_limit_stops_what_still_runs() -> None:
    """Container a fails every second; b would run for 100 s: the pod fails at a's third failure and b is
    stopped then (SIGTERM, exit 143) rather than left to run out a pod that can only fail."""
    clock = FakeClock(T0)

    def outcome(pod: Obj, container: Obj, n: int) -> Outcome:
        return Outcome(duration=1, exit_code=1) if container["name"] == "a" else Outcome(duration=100)

    runtime = SimulatedRuntime(clock=clock, outcome=outcome, backoff_base=0.0)
    pod = onfailure_limited(2, [{"name": "a", "image": "x"}, {"name": "b", "image": "x"}])
    pod["spec"]["terminationGracePeriodSeconds"] = 5
    handle = asyncio.run(runtime.run_pod(pod))  # type: ignore[arg-type]
    runtime.run_until_idle(clock)
    assert handle.terminal and handle.phase == "Failed"
    assert handle.status["reason"] == RESTART_LIMIT_REASON
    assert clock.now() < T0 + 10
    a, b = handle.status["containerStatuses"]
    assert (a["restartCount"], a["state"]["terminated"]["exitCode"]) == (2, 1)
    assert (b["restartCount"], b["state"]["terminated"]["exitCode"]) == (0, 143)


def test_sim_restart_limit_holds_a_sidecars_restarts_too() -> None:
    """A sidecar's restarts are among the pod's (the sum the limit bounds, and the one `kjobs run` says they
    count toward): the one that would exceed the limit does not happen and the pod fails, as for a regular
    container. It used to restart regardless, while its restarts used up the regular containers' share."""
    clock = FakeClock(T0)

    def outcome(pod: Obj, container: Obj, n: int) -> Outcome:
        return Outcome(duration=1, exit_code=7) if container["name"] == "proxy" else Outcome(duration=100)

    runtime = SimulatedRuntime(clock=clock, outcome=outcome, backoff_base=0.0)
    sidecar = {"name": "proxy", "image": "x", "restartPolicy": "Always"}
    pod = make_pod(init=[sidecar], policy="OnFailure", maxRestartTimes=1, terminationGracePeriodSeconds=5)
    handle = asyncio.run(runtime.run_pod(pod))  # type: ignore[arg-type]
    runtime.run_until_idle(clock)
    assert handle.terminal and handle.phase == "Failed"
    assert handle.status["reason"] == RESTART_LIMIT_REASON
    assert clock.now() < T0 + 10
    (proxy,) = handle.status["initContainerStatuses"]
    assert (proxy["restartCount"], proxy["state"]["terminated"]["exitCode"]) == (1, 7)
    assert main_status(handle)["state"]["terminated"]["exitCode"] == 143


def run_instant(pod: Obj, codes: list[int], **kwargs: object) -> PodHandle:
    """Run `pod` to its end; its main container's n-th run ends as it starts, with codes[n]."""
    clock = FakeClock(T0)
    runtime = SimulatedRuntime(
        clock=clock,
        outcome=lambda p, c, n: Outcome(exit_code=codes[min(n, len(codes) - 1)]),
        **kwargs,  # type: ignore[arg-type]
    )
    handle = asyncio.run(runtime.run_pod(pod))  # type: ignore[arg-type]
    runtime.run_until_idle(clock)
    return handle


def test_sim_restart_limit_reached_by_containers_that_end_as_they_start() -> None:
    """Attempts recorded ended at their start (instant containers): the limit is checked after each, as after an
    exit that came later, and the pod fails the same way."""
    handle = run_instant(onfailure_limited(2), [1], backoff_base=0.0)
    assert handle.terminal and handle.phase == "Failed"
    assert handle.status["reason"] == RESTART_LIMIT_REASON
    assert main_status(handle)["restartCount"] == 2


def test_sim_instant_restarts_beyond_one_syncs_worth_go_on() -> None:
    """With no back-off, a container that ends as it starts restarts at once, again and again: past the most
    starts one sync makes, the pod is planned again rather than left as it is."""
    handle = run_instant(make_pod(policy="OnFailure"), [1] * 150 + [0], backoff_base=0.0)
    assert handle.terminal and handle.phase == "Succeeded"
    assert main_status(handle)["restartCount"] == 150
