"""The PodStatus the kubelet would report, computed from runtime observations."""

from __future__ import annotations

import pytest

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.node.observations import NODE_SHUTDOWN, BackoffEntry, KillRequest, eviction
from kjobs.node.podstatus import compute_pod_status, go_duration
from tests.node.helpers import T0, attempt, make_pod, record

INIT = [{"name": "init-a", "image": "x"}, {"name": "init-b", "image": "x"}]


def cond(status: Obj, ctype: str) -> Obj:
    return next(c for c in status["conditions"] if c["type"] == ctype)


def cstatus(status: Obj, name: str = "main", *, init: bool = False) -> Obj:
    key = "initContainerStatuses" if init else "containerStatuses"
    return next(s for s in status[key] if s["name"] == name)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(10, "10s", id="10s"),
        pytest.param(80, "1m20s", id="1m20s"),
        pytest.param(300, "5m0s", id="5m0s"),
        pytest.param(0.05, "50ms", id="50ms"),
        pytest.param(1.5, "1.5s", id="fraction"),
        pytest.param(3600, "1h0m0s", id="hour"),
        pytest.param(0, "0s", id="zero"),
    ],
)
def test_go_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text


def test_not_started_yet_is_pending_container_creating() -> None:
    status = compute_pod_status(record(make_pod()), T0)
    assert status["phase"] == "Pending"
    main = cstatus(status)
    assert main["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert (main["ready"], main["restartCount"], main["started"], main["imageID"], main["image"]) == (
        False,
        0,
        False,
        "",
        "busybox",
    )
    ready = cond(status, "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False",
        "ContainersNotReady",
        "containers with unready status: [main]",
    )
    assert cond(status, "Initialized")["status"] == "True"
    assert cond(status, "PodReadyToStartContainers")["status"] == "True"
    assert status["startTime"] == format_time(T0)
    assert status["podIP"] == "127.0.0.1"
    assert status["qosClass"] == "BestEffort"


def test_init_running_keeps_containers_pod_initializing() -> None:
    status = compute_pod_status(record(make_pod(init=INIT), attempt("init-a")), T0 + 1)
    assert status["phase"] == "Pending"
    assert cstatus(status)["state"] == {"waiting": {"reason": "PodInitializing"}}
    assert cstatus(status, "init-a", init=True)["state"]["running"] == {"startedAt": format_time(T0)}
    assert cstatus(status, "init-b", init=True)["state"] == {"waiting": {"reason": "PodInitializing"}}
    initialized = cond(status, "Initialized")
    assert (initialized["status"], initialized["reason"], initialized["message"]) == (
        "False",
        "ContainersNotInitialized",
        "containers with incomplete status: [init-a init-b]",
    )
    assert [s["name"] for s in status["initContainerStatuses"]] == ["init-a", "init-b"]


def test_running_container_is_ready() -> None:
    status = compute_pod_status(record(make_pod(), attempt()), T0 + 1)
    assert status["phase"] == "Running"
    main = cstatus(status)
    assert (main["ready"], main["started"], main["containerID"]) == (True, True, "kjobs://main-0")
    assert cond(status, "Ready")["status"] == "True"
    assert cond(status, "ContainersReady")["status"] == "True"


def test_exit_zero_completes_and_succeeds() -> None:
    status = compute_pod_status(
        record(
            make_pod(init=INIT),
            attempt("init-a", end=T0, code=0),
            attempt("init-b", end=T0, code=0),
            attempt(start=T0 + 1, end=T0 + 2, code=0),
        ),
        T0 + 3,
    )
    assert status["phase"] == "Succeeded"
    assert cstatus(status)["state"]["terminated"] == {
        "exitCode": 0,
        "reason": "Completed",
        "startedAt": format_time(T0 + 1),
        "finishedAt": format_time(T0 + 2),
        "containerID": "kjobs://main-0",
    }
    assert cstatus(status, "init-a", init=True)["ready"] is True
    assert cond(status, "Ready")["reason"] == "PodCompleted"
    assert cond(status, "ContainersReady")["reason"] == "PodCompleted"
    assert (cond(status, "Initialized")["status"], cond(status, "Initialized")["reason"]) == ("True", "PodCompleted")
    assert cond(status, "PodReadyToStartContainers")["status"] == "False"


@pytest.mark.parametrize(
    ("code", "signal", "oom", "reason"),
    [
        pytest.param(42, None, False, "Error", id="exit-42"),
        pytest.param(137, 9, False, "Error", id="sigkill-without-oom-is-error"),
        pytest.param(137, 9, True, "OOMKilled", id="oom"),
        pytest.param(143, 15, False, "Error", id="sigterm"),
    ],
)
def test_failures_never_fail_the_pod(code: int, signal: int | None, oom: bool, reason: str) -> None:
    status = compute_pod_status(record(make_pod(), attempt(end=T0 + 1, code=code, signal=signal, oom=oom)), T0 + 2)
    assert status["phase"] == "Failed"
    terminated = cstatus(status)["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"], terminated.get("signal")) == (code, reason, signal)
    assert cond(status, "Ready")["reason"] == "PodFailed"


def test_init_failure_with_never_fails_pod() -> None:
    status = compute_pod_status(record(make_pod(init=INIT), attempt("init-a", end=T0, code=3)), T0 + 1)
    assert status["phase"] == "Failed"
    assert cstatus(status, "init-a", init=True)["state"]["terminated"]["reason"] == "Error"
    assert cstatus(status, "init-b", init=True)["state"] == {"waiting": {"reason": "PodInitializing"}}
    assert cstatus(status)["state"] == {"waiting": {"reason": "PodInitializing"}}


def test_crash_loop_back_off_waiting_state() -> None:
    pod = make_pod(policy="OnFailure")
    rec = record(pod, attempt(number=0, end=T0, code=1), attempt(number=1, start=T0, end=T0 + 1, code=1))
    rec.backoff["main"] = BackoffEntry(duration=10, last_update=T0)
    status = compute_pod_status(rec, T0 + 2)
    assert status["phase"] == "Running"
    main = cstatus(status)
    assert main["state"] == {
        "waiting": {
            "reason": "CrashLoopBackOff",
            "message": "back-off 10s restarting failed container=main pod=job-0-abcde_ns(uid-1)",
        }
    }
    assert main["lastState"]["terminated"]["exitCode"] == 1
    assert main["restartCount"] == 1
    assert main["ready"] is False


def test_restarted_container_shows_previous_run_as_last_state() -> None:
    rec = record(make_pod(policy="OnFailure"), attempt(number=0, end=T0, code=7), attempt(number=1, start=T0 + 1))
    main = cstatus(compute_pod_status(rec, T0 + 2))
    assert main["restartCount"] == 1
    assert "running" in main["state"]
    assert main["lastState"]["terminated"]["exitCode"] == 7


def test_statuses_sorted_by_name_and_partial_readiness() -> None:
    pod = make_pod([{"name": "zeta", "image": "x"}, {"name": "alpha", "image": "x"}])
    status = compute_pod_status(record(pod, attempt("zeta"), attempt("alpha", end=T0, code=0)), T0 + 1)
    assert [s["name"] for s in status["containerStatuses"]] == ["alpha", "zeta"]
    assert status["phase"] == "Running"
    assert cond(status, "ContainersReady")["message"] == "containers with unready status: [alpha]"


@pytest.mark.parametrize(
    ("codes", "phase"),
    [
        pytest.param((0, 0), "Succeeded", id="all-zero-succeeded"),
        pytest.param((0, 143), "Failed", id="sigterm-failed"),
    ],
)
def test_deleted_pod_reaches_terminal_phase(codes: tuple[int, int], phase: str) -> None:
    pod = make_pod([{"name": "a", "image": "x"}, {"name": "b", "image": "x"}], policy="Always")
    rec = record(pod, attempt("a", end=T0 + 1, code=codes[0]), attempt("b", end=T0 + 1, code=codes[1]))
    rec.kill = KillRequest(requested_at=T0, grace_seconds=30)
    status = compute_pod_status(rec, T0 + 2)
    assert status["phase"] == phase
    assert "reason" not in status


def test_deleted_pod_with_running_container_keeps_running() -> None:
    rec = record(make_pod(), attempt())
    rec.kill = KillRequest(requested_at=T0, grace_seconds=30)
    assert compute_pod_status(rec, T0 + 1)["phase"] == "Running"


def test_a_restart_whose_configuration_failed_waits_with_the_error() -> None:
    rec = record(make_pod(policy="OnFailure"), attempt(end=T0 + 1, code=1))
    rec.config_errors["main"] = ("CreateContainerConfigError", 'configmap "x" not found')
    status = compute_pod_status(rec, T0 + 2)
    assert cstatus(status)["state"] == {
        "waiting": {"reason": "CreateContainerConfigError", "message": 'configmap "x" not found'}
    }
    assert cstatus(status)["lastState"]["terminated"]["exitCode"] == 1
    assert (cstatus(status)["restartCount"], status["phase"]) == (0, "Running")


def test_deleted_before_start_fails_and_marks_unstarted_containers_unknown() -> None:
    rec = record(make_pod())
    rec.config_errors["main"] = ("CreateContainerConfigError", "x")
    rec.kill = KillRequest(requested_at=T0, grace_seconds=30)
    status = compute_pod_status(rec, T0)
    assert status["phase"] == "Failed"
    assert cstatus(status)["state"]["terminated"] == {
        "exitCode": 137,
        "reason": "ContainerStatusUnknown",
        "message": "The container could not be located when the pod was terminated",
    }


def test_eviction_fails_pod_with_reason_and_disruption_condition() -> None:
    rec = record(make_pod(), attempt(end=T0, code=137, signal=9))
    rec.kill = KillRequest(requested_at=T0, grace_seconds=0, reason=eviction("The node was low on resource: memory."))
    rec.killed_phase = "Failed"
    status = compute_pod_status(rec, T0 + 1)
    assert (status["phase"], status["reason"], status["message"]) == (
        "Failed",
        "Evicted",
        "The node was low on resource: memory.",
    )
    target = cond(status, "DisruptionTarget")
    assert (target["status"], target["reason"], target["message"]) == (
        "True",
        "TerminationByKubelet",
        "The node was low on resource: memory.",
    )


def test_node_shutdown_reason() -> None:
    rec = record(make_pod(), attempt(end=T0 + 1, code=143, signal=15))
    rec.kill = KillRequest(requested_at=T0, grace_seconds=5, reason=NODE_SHUTDOWN)
    rec.killed_phase = "Failed"
    status = compute_pod_status(rec, T0 + 2)
    assert (status["phase"], status["reason"]) == ("Failed", "Terminated")
    assert cond(status, "DisruptionTarget")["message"] == "Pod was terminated in response to imminent node shutdown."


def test_terminal_phase_is_sticky() -> None:
    rec = record(make_pod(policy="OnFailure"), attempt())
    assert compute_pod_status(rec, T0, previous={"phase": "Failed"})["phase"] == "Failed"


def test_non_kubelet_conditions_are_preserved() -> None:
    pod = make_pod()
    pod["status"] = {"conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}]}
    status = compute_pod_status(record(pod, attempt()), T0)
    assert cond(status, "DisruptionTarget")["reason"] == "EvictionByEvictionAPI"
    assert [c["type"] for c in status["conditions"]] == [
        "DisruptionTarget",
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]


def test_transition_times_kept_while_status_unchanged() -> None:
    rec = record(make_pod(), attempt())
    first = compute_pod_status(rec, T0)
    rec.attempts["main"][0].finished_at, rec.attempts["main"][0].exit_code = T0 + 50, 0
    later = compute_pod_status(rec, T0 + 60, previous=first)
    assert cond(later, "PodScheduled")["lastTransitionTime"] == format_time(T0)
    assert cond(later, "Ready")["lastTransitionTime"] == format_time(T0 + 60)


def test_readiness_gate_not_satisfied() -> None:
    pod = make_pod(readinessGates=[{"conditionType": "example.com/ready"}])
    status = compute_pod_status(record(pod, attempt()), T0)
    ready = cond(status, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "ReadinessGatesNotReady")
    assert ready["message"] == 'corresponding condition of pod readiness gate "example.com/ready" does not exist.'
    assert cond(status, "ContainersReady")["status"] == "True"


def test_start_error_attempt() -> None:
    a = attempt(end=T0, code=128)
    a.reason, a.message = "StartError", 'exec: "nope": executable file not found in $PATH'
    status = compute_pod_status(record(make_pod(), a), T0)
    terminated = cstatus(status)["state"]["terminated"]
    assert (terminated["reason"], terminated["exitCode"]) == ("StartError", 128)
    assert "nope" in terminated["message"]
    assert status["phase"] == "Failed"


def test_termination_messages_share_12_kib_across_the_pods_containers() -> None:
    """status_manager.go `normalizeStatus`: each terminated message keeps its first 12 KiB / (containers + init
    containers) bytes; with four containers, 3072 of a 4096-byte message (before, kjobs kept all 4096)."""
    names = ["a", "b", "c", "d"]
    pod = make_pod([{"name": n, "image": "x"} for n in names])
    runs = [attempt(n, end=T0 + 1, code=1) for n in names]
    for run in runs:
        run.message = "é" + "x" * 4094  # 4096 bytes, a two-byte character first
    status = compute_pod_status(record(pod, *runs), T0 + 2)
    for name in names:
        message = cstatus(status, name)["state"]["terminated"]["message"]
        assert len(message.encode()) == 3072 and message.startswith("é")
    alone = record(make_pod(), attempt(end=T0 + 1, code=1))
    alone.attempts["main"][0].message = "y" * 4096
    assert len(cstatus(compute_pod_status(alone, T0 + 2))["state"]["terminated"]["message"]) == 4096


def test_started_and_ready_follow_the_probes() -> None:
    """prober_manager.go `UpdatePodStatus`: `started` waits for the startup probe, `ready` for it and the
    readiness probe; the Ready condition follows."""
    run = attempt()
    run.probe_started, run.probe_ready = False, False
    rec = record(make_pod(), run)
    main = cstatus(compute_pod_status(rec, T0 + 1))
    assert (main["started"], main["ready"]) == (False, False)
    run.probe_started = True
    main = cstatus(compute_pod_status(rec, T0 + 1))
    assert (main["started"], main["ready"]) == (True, False)
    run.probe_ready = True
    status = compute_pod_status(rec, T0 + 1)
    assert cstatus(status)["ready"] is True and cond(status, "Ready")["status"] == "True"
