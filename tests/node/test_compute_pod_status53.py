"""Stop 53: `compute_pod_status` makes a comprehension only over something (no init, ephemeral or foreign
conditions: none), tests whether a regular container ran in a loop, and `get_phase` reads a stopped container's
exit code once and asks `container_should_restart` without `_restarts`; `get_phase` and `_carry_transition_times`
index the statuses and conditions in loops, not comprehensions (docs/node53.md).

Stop 52's `compute_pod_status`, `get_phase` and `_carry_transition_times` are kept here (with its
`_kubelet_conditions`, kept in test_kubelet_conditions53.py); hypothesis makes pods with and without init containers
(sidecars or not), one or two regular containers, every restart policy, their attempts (running, exited 0 or 1),
back-off entries, config errors, kill requests with and without a disruption condition and a fixed phase, and the
API's and the last reported statuses (foreign and kubelet conditions, terminal phases, reasons): the same status,
key order included."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.node.observations import NODE_SHUTDOWN, BackoffEntry, KillRequest, PodRecord, eviction
from kjobs.node.podstatus import (
    FAILED,
    KUBELET_CONDITIONS,
    PENDING,
    RUNNING,
    SUCCEEDED,
    TERMINAL_PHASES,
    _condition,
    _container_status,
    _ephemeral_status,
    _exit_code,
    _mark_unknown,
    _restarts,
    _status_name,
    _trim_termination_messages,
    compute_pod_status,
)
from kjobs.node.resources import qos_class
from kjobs.node.restart import DEFAULT_BACKOFF_CAP, Plan, is_sidecar, plan
from tests.hypothesis_budget import examples
from tests.node.helpers import T0, attempt, make_pod
from tests.node.test_kubelet_conditions53 import old_kubelet_conditions
from tests.node.test_restart_plan_init import HISTORY, SPEC


# fmt: off
def old_carry_transition_times(conditions: list[Obj], previous: list[Obj], now: float) -> None:
    before = {c.get("type"): c for c in previous}
    stamp = None  # `now` formatted once, for the conditions that change (each status has four or five)
    for cond in conditions:
        old = before.get(cond["type"])
        if old is not None and old.get("status") == cond["status"] and old.get("lastTransitionTime"):
            cond["lastTransitionTime"] = old["lastTransitionTime"]
        elif not cond.get("lastTransitionTime"):
            if stamp is None:
                stamp = format_time(now)
            cond["lastTransitionTime"] = stamp


def old_get_phase(
    pod: Obj, init_statuses: list[Obj], statuses: list[Obj], *, pod_is_terminal: bool, pod_has_initialized: bool
) -> str:
    """The kubelet's getPhase with ContainerRestartRules on (pkg/kubelet/kubelet_pods.go).

    Statuses are found by container name in both lists, and every container of the spec counts: one without a
    status is unknown (the pod stays Pending), as upstream. A regular init container that runs or waits without
    having exited is pending; one that failed and will not restart (`container_should_restart`) fails the pod.
    A sidecar (an init container with `restartPolicy: Always`) counts as running while it runs, and as pending
    while it waits for its first start or runs without having `started`; once it has stopped it does not
    count, so its exit code (143 when the kubelet stops it) never decides whether the pod Succeeded. Pending
    sidecars keep the pod Pending only until a regular container has run (`pod_has_initialized`, upstream
    `HasAnyActiveRegularContainerStarted`). Then: Pending while a container waits, Running while one runs,
    else (all stopped) Running while a stopped container will restart, Succeeded when all exited 0, Failed.
    For a pod whose containers have no restartPolicy of their own this is the classic Always / OnFailure /
    Never table.
    """
    spec = pod.get("spec", {})
    policy = spec.get("restartPolicy") or "Always"
    by_name = {cs.get("name"): cs for cs in [*init_statuses, *statuses]}

    pending_init = pending_sidecars = failed_init = 0
    unknown = running = waiting = stopped = not_restarting = succeeded = 0
    for container in spec.get("initContainers") or []:
        cs = by_name.get(container.get("name"))
        state = (cs or {}).get("state") or {}
        last = (cs or {}).get("lastState") or {}
        if is_sidecar(container):
            if cs is None:
                unknown += 1
            elif "running" in state:
                running += 1
                pending_sidecars += not cs.get("started")
            elif "terminated" in state or ("waiting" in state and "terminated" in last):
                pass  # a stopped sidecar does not count for the phase
            elif "waiting" in state:
                pending_sidecars += 1
                waiting += 1
            else:
                pending_sidecars += 1
                unknown += 1
            continue
        if "terminated" in state:
            terminated = state["terminated"]
        elif "waiting" in state and "terminated" in last:
            terminated = last["terminated"]
        else:  # absent, running, waiting for its first run
            pending_init += 1
            continue
        failed_init += _exit_code(terminated) != 0 and not _restarts(container, policy, terminated)
    for container in spec.get("containers") or []:
        cs = by_name.get(container.get("name"))
        if cs is None:
            unknown += 1
            continue
        state, last = cs.get("state") or {}, cs.get("lastState") or {}
        if "running" in state:
            running += 1
        elif "terminated" in state:
            stopped += 1
            succeeded += _exit_code(state["terminated"]) == 0
            not_restarting += not _restarts(container, policy, state["terminated"])
        elif "waiting" in state and "terminated" in last:
            stopped += 1
            not_restarting += not _restarts(container, policy, last["terminated"])
        elif "waiting" in state:
            waiting += 1
        else:
            unknown += 1
    if failed_init:
        return FAILED
    if pending_init or (pending_sidecars and not pod_has_initialized) or waiting:
        return PENDING
    if running and not unknown:
        return RUNNING
    if not running and stopped and not unknown:
        if not pod_is_terminal and stopped != not_restarting:
            return RUNNING  # a stopped container is in the process of restarting
        return SUCCEEDED if stopped == succeeded else FAILED
    return PENDING


def old_compute_pod_status(
    record: PodRecord,
    now: float,
    *,
    previous: Obj | None = None,
    host_ip: str = "127.0.0.1",
    pod_ip: str = "127.0.0.1",
    backoff_cap: float = DEFAULT_BACKOFF_CAP,
    recursive_read_only: bool = False,
    decisions: Plan | None = None,
) -> Obj:
    """The pod's status as the kubelet would report it now; `previous` is the status last reported;
    `recursive_read_only`: whether the pod's runtime handler supports recursive read-only mounts; `decisions`:
    `restart.plan(record, now, cap=backoff_cap)` when the caller has just made it (the supervisor's sync, which
    plans before every status it publishes: twice a pod's plans otherwise), else it is made here."""
    pod = record.pod
    spec = pod.get("spec", {})
    api_status = pod.get("status") or {}
    before = previous if previous is not None else api_status
    if decisions is None:
        decisions = plan(record, now, cap=backoff_cap)
    init_specs = spec.get("initContainers") or []
    has_init = bool(init_specs)
    rro = recursive_read_only
    init_statuses = [
        _container_status(record, c, init=True, has_init=has_init, decisions=decisions, rro=rro) for c in init_specs
    ]
    statuses = [
        _container_status(record, c, init=False, has_init=has_init, decisions=decisions, rro=rro)
        for c in spec.get("containers") or []
    ]
    if len(statuses) > 1:  # by name (one status: nothing to sort, no key function called)
        statuses.sort(key=_status_name)
    ephemeral = [_ephemeral_status(record, c, has_init, decisions, rro) for c in spec.get("ephemeralContainers") or ()]
    killing = record.kill is not None
    pod_is_terminal = killing and decisions.done
    if pod_is_terminal:
        # TerminatePod: once initialized, a container with no terminated state is reported as unknown/failed.
        initialized = all(s["ready"] for s in init_statuses)
        if initialized:
            for cs in statuses:
                if "terminated" not in cs["state"]:
                    _mark_unknown(cs)
    # HasAnyActiveRegularContainerStarted: kjobs never recreates a sandbox, so any regular container created
    has_run = any(record.attempts.get(c["name"]) for c in spec.get("containers") or [])
    phase = old_get_phase(pod, init_statuses, statuses, pod_is_terminal=pod_is_terminal, pod_has_initialized=has_run)
    if pod_is_terminal and phase not in TERMINAL_PHASES:
        phase = FAILED
    if record.killed_phase is not None and pod_is_terminal:
        # Not before: the status manager never reports a terminal phase (nor the reason and message that come
        # with it) while containers could still run (mergePodStatus, couldHaveRunningContainers).
        phase = record.killed_phase
    previous_phase = before.get("phase")
    if previous_phase in TERMINAL_PHASES and phase not in TERMINAL_PHASES:
        phase = previous_phase
    if phase in TERMINAL_PHASES and previous_phase not in TERMINAL_PHASES and record.any_running():
        # Whatever made the phase terminal (a failed init container, the regular containers done beside
        # sidecars), the pod keeps its phase until nothing of it runs (mergePodStatus: a transition to a
        # terminal phase waits while couldHaveRunningContainers).
        phase = previous_phase or PENDING

    others = [c for c in api_status.get("conditions") or [] if c.get("type") not in KUBELET_CONDITIONS]
    kill_reason = record.kill.reason if record.kill is not None else None
    if kill_reason is not None and kill_reason.disruption and pod_is_terminal:
        # With the terminal phase, not before (mergePodStatus: DisruptionTarget is sent once the pod is terminal
        # and no container could run); it then replaces one set by others (EvictedByEvictionAPI).
        ctype = kill_reason.condition_type
        others = [c for c in others if c.get("type") != ctype]
        message = kill_reason.condition_message or kill_reason.message
        others.append(_condition(ctype, True, kill_reason.condition_reason, message))
    sandbox_ready = not (decisions.done and not record.any_running())
    conditions = [dict(c) for c in others] + old_kubelet_conditions(
        pod, init_statuses, statuses, phase, sandbox_ready, others
    )
    old_carry_transition_times(conditions, before.get("conditions") or [], now)

    status: Obj = {
        "phase": phase,
        "conditions": conditions,
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "startTime": format_time(record.admitted_at),
        "qosClass": qos_class(pod),
        "containerStatuses": statuses,
    }
    if init_statuses:
        status["initContainerStatuses"] = init_statuses
    if ephemeral:
        status["ephemeralContainerStatuses"] = ephemeral
    _trim_termination_messages(pod, [*init_statuses, *statuses, *ephemeral])
    if kill_reason is not None and pod_is_terminal:
        status["reason"] = kill_reason.reason
        status["message"] = kill_reason.message
    elif phase == previous_phase:
        for key in ("reason", "message"):
            if before.get(key):
                status[key] = before[key]
    return status


# fmt: on


_KILLS = st.sampled_from([None, "delete", "evict", "shutdown"])
_API_CONDITIONS = st.lists(
    st.builds(
        lambda t, s, when: {"type": t, "status": s, "lastTransitionTime": when},
        st.sampled_from(["DisruptionTarget", "Ready", "PodScheduled", "Initialized", "Custom"]),
        st.sampled_from(["True", "False"]),
        st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-01T00:00:07Z", ""]),
    ),
    max_size=4,
)


@settings(max_examples=examples(800), deadline=None)
@given(
    spec=SPEC,
    history=HISTORY,
    backoff=st.dictionaries(st.sampled_from(["i1", "i2", "a", "b"]), st.floats(0, 40), max_size=2),
    errors=st.sets(st.sampled_from(["i1", "i2", "a", "b"]), max_size=1),
    kill=_KILLS,
    killed_phase=st.sampled_from([None, "Failed", "Succeeded"]),
    api_phase=st.sampled_from([None, "Pending", "Running", "Succeeded", "Failed"]),
    api_conditions=st.one_of(st.none(), _API_CONDITIONS),
    previous=st.one_of(
        st.none(),
        st.builds(
            lambda phase, reason, conditions: {
                "phase": phase,
                **({"reason": reason, "message": "m"} if reason else {}),
                "conditions": conditions,
            },
            st.sampled_from(["Pending", "Running", "Succeeded", "Failed"]),
            st.sampled_from([None, "Evicted"]),
            _API_CONDITIONS,  # types repeat: the last of a type counts, as in a dict made of them
        ),
    ),
    later=st.floats(0, 200),
)
def test_compute_pod_status_is_stop_52s(
    spec: tuple[Any, Any, str, int | None],
    history: dict[str, list[tuple[bool, int, float, float]]],
    backoff: dict[str, float],
    errors: set[str],
    kill: str | None,
    killed_phase: str | None,
    api_phase: str | None,
    api_conditions: list[Obj] | None,
    previous: Obj | None,
    later: float,
) -> None:
    init, containers, policy, limit = spec
    extra = {} if limit is None else {"maxRestartTimes": limit}
    pod = make_pod(list(containers), init=list(init), policy=policy, **extra)
    status: Obj = {}
    if api_phase is not None:
        status["phase"] = api_phase
    if api_conditions is not None:
        status["conditions"] = api_conditions
    if status:
        pod["status"] = status
    record = PodRecord(pod=pod, admitted_at=T0)
    for name, runs in history.items():
        at = T0
        for number, (running, code, length, gap) in enumerate(runs):
            ends = not running or number < len(runs) - 1
            record.attempts.setdefault(name, []).append(
                attempt(name, number, start=at, end=at + length if ends else None, code=code if ends else None)
            )
            at += length + gap
    record.backoff = {name: BackoffEntry(duration=d, last_update=T0 + d) for name, d in backoff.items()}
    record.config_errors = {name: ("CreateContainerConfigError", "x") for name in errors}
    for name in errors:  # as `Supervisor._start` leaves a container whose first start could not be configured
        record.attempts.setdefault(name, [])
    if kill is not None:
        reason = {"delete": None, "evict": eviction("low on memory"), "shutdown": NODE_SHUTDOWN}[kill]
        record.kill = KillRequest(requested_at=T0, grace_seconds=30, reason=reason)
        record.killed_phase = killed_phase
    now = T0 + later
    for decisions in (None, plan(record, now)):
        new = compute_pod_status(record, now, previous=previous, decisions=decisions)
        old = old_compute_pod_status(record, now, previous=previous, decisions=decisions)
        assert repr(new) == repr(old)  # the same keys in the same order, all the way down
