"""What a runtime has observed about one pod: the facts the kubelet's status and restart logic read.

Design note: runtimes (real processes or simulated) only record facts here — a container attempt started,
exited with a code or a signal, was OOM-killed, could not be created; the node asked to kill the pod.
Everything a user sees (phase, conditions, container states, restart decisions) is derived from these
records by pure functions in `restart` and `podstatus`, so both runtimes behave identically.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kjobs.api.names import DISRUPTION_TARGET
from kjobs.api.types import Obj


@dataclass(slots=True)
class Attempt:
    """One run of one container (Kubernetes keeps one container ID per attempt)."""

    container: str
    number: int
    """The container's restartCount when this attempt started (0 for the first run)."""
    container_id: str
    started_at: float
    finished_at: float | None = None
    exit_code: int | None = None
    signal: int | None = None
    """Signal number when the process died of a signal (exit code is then 128 + signal)."""
    oom: bool = False
    """The memory limit's enforcer killed the container (from the cgroup's OOM counter or the watchdog)."""
    reason: str = ""
    """A reason the runtime forces (e.g. `StartError`); else derived: Completed / Error / OOMKilled."""
    message: str = ""
    image: str = ""
    """The image the container spec named when this attempt started (`status.image` while it is shown; empty
    for an attempt adopted from a journal, which then shows the spec's)."""
    started: bool = True
    """The runtime has confirmed the process exists. Until then the container reads as being created: a
    runtime that starts processes elsewhere (the process shim) must not report one running that is not."""
    probe_started: bool = True
    """Its `startupProbe` has succeeded (True when it has none, or the runtime runs no probes): the kubelet's
    `started`; until then its liveness and readiness probes do not run and it is not ready."""
    probe_ready: bool = True
    """Its `readinessProbe` says it is ready (False from its start until the probe first succeeds)."""

    @property
    def running(self) -> bool:
        return self.finished_at is None

    def terminated_reason(self) -> str:
        """The kubelet's `state.terminated.reason` for this attempt."""
        if self.reason:
            return self.reason
        if self.oom:
            return "OOMKilled"
        return "Completed" if self.exit_code == 0 else "Error"


@dataclass(frozen=True, slots=True)
class BackoffEntry:
    """Crash-loop back-off state of one container (client-go flowcontrol.Backoff entry)."""

    duration: float
    last_update: float


@dataclass(frozen=True, slots=True)
class KillReason:
    """Why the node itself kills a pod (eviction, node shutdown, preemption); None for an API deletion."""

    reason: str
    """The pod's `status.reason`: `Evicted`, `Terminated`, `Preempting`."""
    message: str
    keep_succeeded: bool = False
    """Node shutdown: the phase becomes Failed unless the pod already Succeeded. Eviction: always Failed."""
    disruption: bool = True
    """Add a condition with this message: `condition_type` (by default `DisruptionTarget`, reason
    `TerminationByKubelet`, as the kubelet adds it)."""
    condition_type: str = DISRUPTION_TARGET
    condition_reason: str = "TerminationByKubelet"
    overrides_grace: bool = True
    """The grace period given is the kubelet's override, used as is (no 2 s minimum)."""
    condition_message: str = ""
    """The condition's message when it differs from the pod's (critical-pod preemption)."""


NODE_SHUTDOWN = KillReason(
    reason="Terminated",
    message="Pod was terminated in response to imminent node shutdown.",
    keep_succeeded=True,
)
"""The kubelet's graceful node shutdown (`pkg/kubelet/nodeshutdown`)."""

CRITICAL_POD_PREEMPTION = KillReason(
    reason="Preempting",
    message="Preempted in order to admit critical pod",
    condition_message="Pod was preempted by Kubelet to accommodate a critical pod.",
    overrides_grace=False,
)
"""The kubelet's critical-pod preemption (`pkg/kubelet/preemption`)."""


ACTIVE_DEADLINE_EXCEEDED = KillReason(
    reason="DeadlineExceeded",
    message="Pod was active on the node longer than the specified deadline",
    disruption=False,
    overrides_grace=False,
)
"""The kubelet's activeDeadlineSeconds handler (`pkg/kubelet/active_deadline.go`): Failed, no DisruptionTarget."""


RESTART_LIMIT_REASON = "ExceedMaxRestartTimes"
"""`status.reason` of a pod that reached its `maxRestartTimes` (the reason KEP-3322 proposed,
kubernetes/enhancements#3339)."""
RESTART_LIMIT_CONDITION = "MaxRestartTimesExceeded"
"""The condition such a pod gets, so a Job's podFailurePolicy can match it with `onPodConditions` (as the
KEP's review asked); kjobs' own name, since the KEP was never merged."""


def restart_limit_exceeded(limit: int) -> KillReason:
    """The pod's containers failed once more after `limit` restarts (KEP-3322): the pod fails, what still
    runs is stopped with the pod's grace period, and the containers' last states stay as they ended."""
    return KillReason(
        reason=RESTART_LIMIT_REASON,
        message=f"Pod exceeded its maxRestartTimes of {limit}: a container failed again after {limit} restarts",
        condition_type=RESTART_LIMIT_CONDITION,
        condition_reason=RESTART_LIMIT_REASON,
        overrides_grace=False,
    )


def eviction(message: str) -> KillReason:
    """Node-pressure eviction (`pkg/kubelet/eviction`): phase Failed, reason Evicted, the eviction message."""
    return KillReason(reason="Evicted", message=message)


@dataclass(frozen=True, slots=True)
class KillRequest:
    """The node asked to stop the pod at `requested_at` with `grace_seconds` before SIGKILL."""

    requested_at: float
    grace_seconds: float
    reason: KillReason | None = None


@dataclass(slots=True)
class PodRecord:
    """Everything observed about one pod on this node."""

    pod: Obj
    admitted_at: float
    attempts: dict[str, list[Attempt]] = field(default_factory=dict)
    backoff: dict[str, BackoffEntry] = field(default_factory=dict)
    config_errors: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Containers that cannot be created: name -> (waiting reason, message)."""
    kill: KillRequest | None = None
    killed_phase: str | None = None
    replace: set[str] = field(default_factory=set)
    """Running containers stopped because their image changed: each starts again at once, with the new image,
    whatever the restart policy (the kubelet's `computePodActions`: "Container spec hash changed")."""
    """The phase fixed when a KillReason asked for one (eviction/shutdown), so it never changes later."""

    @property
    def uid(self) -> str:
        return str(self.pod.get("metadata", {}).get("uid", ""))

    def any_running(self) -> bool:
        # a loop, not `any(...)` over a generator (SIM110): a generator costs a frame a call, and the supervisor
        # asks this several times a status
        for attempts in self.attempts.values():  # noqa: SIM110
            if attempts and attempts[-1].finished_at is None:  # `running`, without the property's call
                return True
        return False

    def last(self, container: str) -> Attempt | None:
        attempts = self.attempts.get(container)
        return attempts[-1] if attempts else None
