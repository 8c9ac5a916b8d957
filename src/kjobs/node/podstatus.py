"""The Kubernetes `PodStatus` of a pod, computed from what the runtime observed (the kubelet's view).

Design note: pure and total. Given a `PodRecord` (attempts with exit codes, OOM flags and times, back-off
state, a kill request), the time and the status last reported, it returns the status object the kubelet
would write: phase by `getPhase` (kubelet_pods.go), container states as `convertToAPIContainerStatuses`,
conditions as `pkg/kubelet/status/generate.go`, terminal handling as the status manager's `TerminatePod`.
Runtimes call it after every observation and publish the result when it changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.node.observations import Attempt, PodRecord
from kjobs.node.recursive_read_only import mount_statuses
from kjobs.node.resources import qos_class
from kjobs.node.restart import DEFAULT_BACKOFF_CAP, Plan, is_sidecar, plan
from kjobs.node.restart_rules import container_should_restart

PENDING, RUNNING, SUCCEEDED, FAILED = "Pending", "Running", "Succeeded", "Failed"
TERMINAL_PHASES = (SUCCEEDED, FAILED)

# Conditions the kubelet owns (kubetypes.PodConditionByKubelet); every other condition is preserved.
KUBELET_CONDITIONS = ("PodScheduled", "Ready", "Initialized", "ContainersReady", "PodReadyToStartContainers")


def equal_by_kubelet(old: Obj, new: Obj) -> bool:
    """Whether two statuses the agent computed differ in nothing the kubelet owns: the conditions others own
    (copied from the API's status, as `DisruptionTarget` the Eviction API adds) are left out and the kubelet's
    own are compared by status, reason and message. A kubelet writes no status then, so another writer's
    precondition on the pod is not broken by a write that only reorders conditions (pkg/kubelet/status/
    status_manager.go `isPodStatusByKubeletEqual`, consulted by `updateStatusInternal`)."""

    def owned(status: Obj) -> dict[str, tuple[Any, Any, Any]]:
        conditions = [c for c in status.get("conditions") or [] if c.get("type") in KUBELET_CONDITIONS]
        return {str(c.get("type")): (c.get("status"), c.get("reason"), c.get("message")) for c in conditions}

    if owned(old) != owned(new):
        return False
    rest = ({k: v for k, v in status.items() if k != "conditions"} for status in (old, new))
    return next(rest) == next(rest)


CONTAINER_STATUS_UNKNOWN = "ContainerStatusUnknown"
_UNKNOWN_MESSAGE = "The container could not be located when the pod was terminated"


def go_duration(seconds: float) -> str:
    """Format seconds like Go's `time.Duration.String` (`10s`, `1m20s`, `5m0s`, `50ms`)."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _trim(ns, size) + unit
    hours, rest = divmod(ns, 3600 * 10**9)
    minutes, rest = divmod(rest, 60 * 10**9)
    text = _trim(rest, 10**9) + "s"
    if hours or minutes:
        text = f"{minutes}m" + text
    if hours:
        text = f"{hours}h" + text
    return sign + text


def _trim(value: int, size: int) -> str:
    whole, frac = divmod(value, size)
    if not frac:
        return str(whole)
    digits = len(str(size)) - 1
    return f"{whole}.{str(frac).rjust(digits, '0').rstrip('0')}"


def crash_loop_message(duration: float, container: str, pod: Obj) -> str:
    """The kubelet's CrashLoopBackOff waiting message."""
    meta = pod.get("metadata", {})
    return (
        f"back-off {go_duration(duration)} restarting failed container={container} "
        f"pod={meta.get('name', '')}_{meta.get('namespace', '')}({meta.get('uid', '')})"
    )


def _terminated(attempt: Attempt) -> Obj:
    state: Obj = {
        "exitCode": attempt.exit_code if attempt.exit_code is not None else 0,
        "reason": attempt.terminated_reason(),
        "startedAt": format_time(attempt.started_at),
        "finishedAt": format_time(attempt.finished_at if attempt.finished_at is not None else attempt.started_at),
        "containerID": attempt.container_id,
    }
    if attempt.signal:
        state["signal"] = attempt.signal
    if attempt.message:
        state["message"] = attempt.message
    return state


def _container_status(
    record: PodRecord, container: Obj, *, init: bool, has_init: bool, decisions: Plan, rro: bool = False
) -> Obj:
    status = _state_status(record, container, init=init, has_init=has_init, decisions=decisions)
    if container.get("volumeMounts"):  # the spec's mounts, whatever the state (kjobs.node.recursive_read_only)
        status["volumeMounts"] = mount_statuses(container, rro)
    return status


def _state_status(record: PodRecord, container: Obj, *, init: bool, has_init: bool, decisions: Plan) -> Obj:
    name = container["name"]
    attempts = record.attempts.get(name) or []
    if attempts and not attempts[-1].started:  # still being created: reported as it was before this attempt
        attempts = attempts[:-1]
    status: Obj = {
        "name": name,
        "image": container.get("image", ""),
        "imageID": "",
        "ready": False,
        "restartCount": 0,
        "started": False,
        "state": {},
        "lastState": {},
    }
    if not attempts:
        if name in record.config_errors:
            reason, message = record.config_errors[name]
            status["state"] = {"waiting": {"reason": reason, "message": message}}
        else:
            status["state"] = {"waiting": {"reason": "PodInitializing" if has_init else "ContainerCreating"}}
        return status
    last = attempts[-1]
    if last.image:  # the kubelet shows the image of the container that ran, not of a spec updated since
        status["image"] = last.image
    status["containerID"] = last.container_id
    status["restartCount"] = last.number
    previous = _terminated(attempts[-2]) if len(attempts) > 1 else None
    if last.running:
        status["state"] = {"running": {"startedAt": format_time(last.started_at)}}
        status["started"] = last.probe_started
        # Ready once started and its readinessProbe says so (a sidecar too; an ordinary init container never is
        # while it runs): pkg/kubelet/prober/prober_manager.go `UpdatePodStatus`.
        status["ready"] = (not init or is_sidecar(container)) and last.probe_started and last.probe_ready
        if previous:
            status["lastState"] = {"terminated": previous}
        return status
    if name in record.config_errors and record.kill is None:
        # A restart whose configuration failed (kubelet convertToAPIContainerStatuses: a container to restart
        # with a start-failure reason waits with it, the terminated attempt moving to lastState).
        reason, message = record.config_errors[name]
        status["state"] = {"waiting": {"reason": reason, "message": message}}
        status["lastState"] = {"terminated": _terminated(last)}
        return status
    if name in decisions.backing_off:
        entry = record.backoff.get(name)
        duration = entry.duration if entry is not None else 0.0
        status["state"] = {
            "waiting": {"reason": "CrashLoopBackOff", "message": crash_loop_message(duration, name, record.pod)}
        }
        status["lastState"] = {"terminated": _terminated(last)}
        return status
    status["state"] = {"terminated": _terminated(last)}
    if previous:
        status["lastState"] = {"terminated": previous}
    status["ready"] = init and last.exit_code == 0 and not is_sidecar(container)
    return status


def _ephemeral_status(record: PodRecord, container: Obj, has_init: bool, decisions: Plan, rro: bool) -> Obj:
    """An ephemeral container's status, in spec order: like a container's, but never ready, and with no
    `started` (the prober, which sets both, skips ephemeral containers: pkg/kubelet/prober/prober_manager.go
    `UpdatePodStatus`); it runs once, so it never backs off nor restarts."""
    status = _container_status(record, container, init=False, has_init=has_init, decisions=decisions, rro=rro)
    status["ready"] = False
    status.pop("started", None)
    return status


def _mark_unknown(status: Obj) -> None:
    status["state"] = {"terminated": {"exitCode": 137, "reason": CONTAINER_STATUS_UNKNOWN, "message": _UNKNOWN_MESSAGE}}


def _exit_code(terminated: Obj) -> int:
    code = terminated.get("exitCode", 0)
    return code if isinstance(code, int) else 0


def get_phase(
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
    by_name: dict[Any, Obj] = {}  # a loop, not a comprehension (a call on this Python) over a status or two
    for known in init_statuses:
        by_name[known.get("name")] = known
    for known in statuses:
        by_name[known.get("name")] = known

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
            code = _exit_code(state["terminated"])  # read once for both (`_restarts` without its call)
            succeeded += code == 0
            not_restarting += not container_should_restart(container, policy, code)
        elif "waiting" in state and "terminated" in last:
            stopped += 1
            not_restarting += not container_should_restart(container, policy, _exit_code(last["terminated"]))
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


def _restarts(container: Obj, policy: str, terminated: Obj) -> bool:
    """Whether the container that ended as `terminated` says will restart (a module function: not a closure made
    at every `get_phase`)."""
    return container_should_restart(container, policy, _exit_code(terminated))


def _names(values: Iterable[str]) -> str:
    return "[" + " ".join(values) + "]"


def _condition(ctype: str, ok: bool, reason: str = "", message: str = "") -> Obj:
    cond: Obj = {"type": ctype, "status": "True" if ok else "False", "lastProbeTime": None}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    return cond


def _kubelet_conditions(
    pod: Obj, init_statuses: list[Obj], statuses: list[Obj], phase: str, sandbox_ready: bool, others: list[Obj]
) -> list[Obj]:
    # Each status has five of these: the usual ones are written as `_condition` makes them, without its call, and
    # the init containers' sidecars are looked for only in a pod that has init containers (docs/node53.md).
    conditions: list[Obj] = [
        {"type": "PodReadyToStartContainers", "status": "True" if sandbox_ready else "False", "lastProbeTime": None}
    ]
    # Initialized
    incomplete = [s["name"] for s in init_statuses if not s["ready"]] if init_statuses else []
    regular_started = False
    for s in statuses:
        state = s["state"]
        if "running" in state or "terminated" in state:
            regular_started = True
            break
    if phase == SUCCEEDED:
        conditions.append({"type": "Initialized", "status": "True", "lastProbeTime": None, "reason": "PodCompleted"})
    elif regular_started or not incomplete:
        conditions.append({"type": "Initialized", "status": "True", "lastProbeTime": None})
    else:
        conditions.append(
            _condition(
                "Initialized",
                False,
                "ContainersNotInitialized",
                f"containers with incomplete status: {_names(incomplete)}",
            )
        )
    # ContainersReady, then Ready derived from it and the readiness gates.
    # sidecars first, as generate.go's GenerateContainersReadyCondition lists restartable init containers
    init_specs = pod.get("spec", {}).get("initContainers")
    sidecars = {c.get("name") for c in init_specs if is_sidecar(c)} if init_specs else None
    unready = [s["name"] for s in init_statuses if s["name"] in sidecars and not s["ready"]] if sidecars else []
    unready += [s["name"] for s in statuses if not s["ready"]]
    containers_ready: Obj
    if phase in TERMINAL_PHASES:
        reason = "PodCompleted" if phase == SUCCEEDED else "PodFailed"
        containers_ready = {"type": "ContainersReady", "status": "False", "lastProbeTime": None, "reason": reason}
    elif unready:
        containers_ready = _condition(
            "ContainersReady", False, "ContainersNotReady", f"containers with unready status: {_names(unready)}"
        )
    else:
        containers_ready = {"type": "ContainersReady", "status": "True", "lastProbeTime": None}
    if containers_ready["status"] != "True":
        ready = dict(containers_ready, type="Ready")
    else:
        gate_messages = []
        gates = pod.get("spec", {}).get("readinessGates")
        if gates:
            by_type = {c.get("type"): c for c in others}
            for gate in gates:
                ctype = gate.get("conditionType", "")
                found = by_type.get(ctype)
                if found is None:
                    gate_messages.append(f'corresponding condition of pod readiness gate "{ctype}" does not exist.')
                elif found.get("status") != "True":
                    gate_messages.append(
                        f'the status of pod readiness gate "{ctype}" is not "True", but {found.get("status")}'
                    )
        ready = (
            _condition("Ready", False, "ReadinessGatesNotReady", ", ".join(gate_messages))
            if gate_messages
            else {"type": "Ready", "status": "True", "lastProbeTime": None}
        )
    conditions += [ready, containers_ready, {"type": "PodScheduled", "status": "True", "lastProbeTime": None}]
    return conditions


def _carry_transition_times(conditions: list[Obj], previous: list[Obj], now: float) -> None:
    before: dict[Any, Obj] = {}  # a loop, not a comprehension: a call on this Python, five conditions a status
    for c in previous:
        before[c.get("type")] = c
    stamp = None  # `now` formatted once, for the conditions that change (each status has four or five)
    for cond in conditions:
        old = before.get(cond["type"])
        if old is not None and old.get("status") == cond["status"] and old.get("lastTransitionTime"):
            cond["lastTransitionTime"] = old["lastTransitionTime"]
        elif not cond.get("lastTransitionTime"):
            if stamp is None:
                stamp = format_time(now)
            cond["lastTransitionTime"] = stamp


def _status_name(status: Obj) -> str:
    return str(status["name"])


def compute_pod_status(
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
    # (each comprehension is a call on this Python: one over nothing is made only when there is something)
    init_statuses = (
        [_container_status(record, c, init=True, has_init=has_init, decisions=decisions, rro=rro) for c in init_specs]
        if init_specs
        else []
    )
    statuses = [
        _container_status(record, c, init=False, has_init=has_init, decisions=decisions, rro=rro)
        for c in spec.get("containers") or []
    ]
    if len(statuses) > 1:  # by name (one status: nothing to sort, no key function called)
        statuses.sort(key=_status_name)
    ephemeral_specs = spec.get("ephemeralContainers")
    ephemeral = (
        [_ephemeral_status(record, c, has_init, decisions, rro) for c in ephemeral_specs] if ephemeral_specs else []
    )
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
    has_run = False
    for c in spec.get("containers") or []:
        if record.attempts.get(c["name"]):
            has_run = True
            break
    phase = get_phase(pod, init_statuses, statuses, pod_is_terminal=pod_is_terminal, pod_has_initialized=has_run)
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

    api_conditions = api_status.get("conditions")
    others = [c for c in api_conditions if c.get("type") not in KUBELET_CONDITIONS] if api_conditions else []
    kill_reason = record.kill.reason if record.kill is not None else None
    if kill_reason is not None and kill_reason.disruption and pod_is_terminal:
        # With the terminal phase, not before (mergePodStatus: DisruptionTarget is sent once the pod is terminal
        # and no container could run); it then replaces one set by others (EvictedByEvictionAPI).
        ctype = kill_reason.condition_type
        others = [c for c in others if c.get("type") != ctype]
        message = kill_reason.condition_message or kill_reason.message
        others.append(_condition(ctype, True, kill_reason.condition_reason, message))
    sandbox_ready = not (decisions.done and not record.any_running())
    conditions = _kubelet_conditions(pod, init_statuses, statuses, phase, sandbox_ready, others)
    if others:
        conditions = [dict(c) for c in others] + conditions
    _carry_transition_times(conditions, before.get("conditions") or [], now)

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


MAX_POD_TERMINATION_MESSAGE_BYTES = 12 * 1024
"""The kubelet's MaxPodTerminationMessageLogLength: what all of a pod's termination messages may hold."""


def _trim_termination_messages(pod: Obj, statuses: list[Obj]) -> None:
    """Keep the first 12 KiB / (containers + init containers) bytes of each terminated state's message, as the
    status manager does before it writes a status (pkg/kubelet/status/status_manager.go `normalizeStatus`): a
    container's own message may hold 4 KiB, but a pod of four or more containers gets less per container."""
    spec = pod.get("spec") or {}
    count = len(spec.get("containers") or ()) + len(spec.get("initContainers") or ())
    budget = MAX_POD_TERMINATION_MESSAGE_BYTES // count if count else MAX_POD_TERMINATION_MESSAGE_BYTES
    for cs in statuses:
        for key in ("state", "lastState"):
            terminated = (cs.get(key) or {}).get("terminated")
            if not isinstance(terminated, dict):
                continue
            message = terminated.get("message")
            if (
                isinstance(message, str) and len(message) * 4 > budget
            ):  # only a long message can be over (4 bytes a character)
                data = message.encode("utf-8")
                if len(data) > budget:  # Go cuts bytes; its JSON writes a cut character as U+FFFD
                    terminated["message"] = data[:budget].decode("utf-8", "replace")
