"""The imperative core both runtimes share: turn restart plans into starts, exits into statuses.

Design note: `Supervisor` owns the per-pod records and the loop "observe → plan → act → publish":
after every observation (a container started or exited, a back-off expired, a kill was requested) it
asks `restart.plan` what to start (or, when the pod's `maxRestartTimes` is spent, fails the pod through
the kill path with `observations.restart_limit_exceeded`), starts it through the subclass, schedules the
next wake-up, computes the status with `podstatus.compute_pod_status` and publishes it when it changed.
Subclasses only say how to spawn a container, deliver a signal and schedule a timer — real processes and
asyncio timers in `ProcessRuntime`, virtual ones in `SimulatedRuntime` — so restart, termination and status
rules exist once.
"""

from __future__ import annotations

import functools
import math
import signal as signals
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Mapping

from kjobs.api.errors import ApiError, bad_request
from kjobs.api.types import Obj
from kjobs.clock import Clock
from kjobs.node.envvars import ConfigError, EnvSources, container_command, container_env
from kjobs.node.observations import (
    ACTIVE_DEADLINE_EXCEEDED,
    Attempt,
    KillReason,
    KillRequest,
    PodRecord,
    restart_limit_exceeded,
)
from kjobs.node.podstatus import SUCCEEDED, TERMINAL_PHASES, compute_pod_status
from kjobs.node.probing import runnable_hook, runnable_probe
from kjobs.node.recursive_read_only import depends_on_support
from kjobs.node.restart import (
    DEFAULT_BACKOFF_BASE,
    DEFAULT_BACKOFF_CAP,
    Plan,
    is_sidecar,
    next_backoff,
    plan,
    restart_limit,
)
from kjobs.node.runtime import PodHandle, StatusCallback
from kjobs.node.termination import stop_turns

Cancel = Callable[[], None]
DEFAULT_GRACE_SECONDS = 30.0
"""The API default of `terminationGracePeriodSeconds`."""
MINIMUM_GRACE_SECONDS = 2.0
"""The kubelet's minimumGracePeriodInSeconds: the least time between SIGTERM and SIGKILL without an override."""
_MAX_STARTS_PER_SYNC = 64


def ignore_status(uid: str, status: Obj) -> None:
    """The default status callback: statuses are still kept on each PodHandle."""


def deletion_grace_seconds(pod: Obj) -> float:
    """The grace period for stopping `pod`: its deletionGracePeriodSeconds, else terminationGracePeriodSeconds."""
    meta, spec = pod.get("metadata", {}), pod.get("spec", {})
    for value in (meta.get("deletionGracePeriodSeconds"), spec.get("terminationGracePeriodSeconds")):
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return DEFAULT_GRACE_SECONDS


def find_container(pod: Obj, name: str) -> Obj | None:
    """The init, regular or ephemeral container spec called `name` (names are unique across the three)."""
    spec = pod.get("spec", {})
    for container in (
        *(spec.get("initContainers") or ()),
        *(spec.get("containers") or ()),
        *(spec.get("ephemeralContainers") or ()),
    ):
        if container.get("name") == name:
            return dict(container)
    return None


class NotRunning(LookupError):
    """`Supervisor.fail` asked of a pod or container that does not run (here, or yet)."""


EventSink = Callable[[Obj, str, str, str, str], None]
"""Records an event about a container: (pod, type, reason, message, container name)."""


class Supervisor(ABC):
    """Per-pod bookkeeping and the observe → plan → act → publish loop."""

    runs_handlers = False
    """The runtime runs probes and lifecycle hooks (`kjobs.node.probing`); one that does not reads every
    container started and ready while it runs, and stops it without `preStop`."""

    def __init__(
        self,
        *,
        clock: Clock,
        on_status: StatusCallback = ignore_status,
        backoff_base: float = DEFAULT_BACKOFF_BASE,
        backoff_cap: float = DEFAULT_BACKOFF_CAP,
        host_ip: str = "127.0.0.1",
        pod_ip: str = "127.0.0.1",
        minimum_grace_seconds: float = MINIMUM_GRACE_SECONDS,
    ) -> None:
        self.clock = clock
        self.minimum_grace_seconds = minimum_grace_seconds
        self.on_status = on_status
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.host_ip = host_ip
        self.pod_ip = pod_ip
        self.records: dict[str, PodRecord] = {}
        self.handles: dict[str, PodHandle] = {}
        self._wakeups: dict[str, Cancel] = {}
        self._kill_timers: dict[str, Cancel] = {}
        self._stop_at: dict[str, dict[str, float]] = {}
        """Per stopping pod, the time each container signalled to stop is SIGKILLed (inf once it was)."""
        self._deadlines: dict[str, Cancel] = {}
        self._pre_stopping: dict[str, dict[str, float]] = {}
        """Per stopping pod, the containers whose `preStop` hook runs, with the time they were due to be killed
        when it started: SIGTERM waits for the hook's end (`_after_pre_stop`)."""
        self._container_kills: set[str] = set()
        """Container ids stopped on their own (a failed liveness probe, a new image): not hooked twice."""
        self.on_event: EventSink | None = None
        """Set by the node agent: where the runtime's own events (probes, hooks) go."""
        self._env_sources: dict[str, EnvSources] = {}
        """Per pod uid, the ConfigMaps and Secrets its containers read (only pods that read any)."""
        self.service_env: Callable[[Obj], Mapping[str, str]] | None = None
        """Set by the node agent: the Services' variables a container of the pod gets where its own `env` has none
        (the kubelet's `getServiceEnvVarMap`), read at each container start."""

    # -- what subclasses provide -------------------------------------------------------------------------
    @abstractmethod
    def _spawn(self, record: PodRecord, container: Obj, number: int, env: dict[str, str], argv: list[str]) -> Attempt:
        """Start one container attempt; return it (already finished when it could not start)."""

    @abstractmethod
    def _signal(self, record: PodRecord, attempt: Attempt, signum: int) -> None:
        """Deliver a signal to a running attempt: SIGKILL to all its processes, the stop signal as a container's
        first process gets it (`kjobs.node.stopsignal`: only with a handler, unless the pod shares a PID namespace)."""

    @abstractmethod
    def _call_later(self, delay: float, callback: Callable[[], None]) -> Cancel:
        """Run `callback` after `delay` seconds of this runtime's time; returns a cancel function."""

    def _abandon(self, attempt: Attempt) -> None:
        """Hook for `fail`: stop what runs `attempt` so that its own end is never reported (kill the process,
        drop a scheduled exit); raise `NotRunning` when it has not really started yet."""
        return None

    def _pre_stop(self, record: PodRecord, attempt: Attempt, timeout: float, done: Callable[[], None]) -> bool:
        """Hook: start the container's `preStop` hook, calling `done` once it ended or ran out of `timeout`;
        False when there is none to run (then SIGTERM goes at once)."""
        return False

    def record_event(self, record: PodRecord, kind: str, reason: str, message: str, container: str) -> None:
        """An event about one of the pod's containers (through `on_event`, when the node agent set it)."""
        if self.on_event is not None:
            self.on_event(record.pod, kind, reason, message, container)

    def supports_recursive_read_only(self) -> bool:
        """Hook: whether this runtime makes read-only mounts read-only with their sub-mounts (the Node's
        `runtimeHandlers`, `kjobs.node.recursive_read_only`); by default it does not."""
        return False

    def recursive_read_only_mounts(self, pod: Obj) -> bool:
        """Whether the pod's runtime handler supports recursive read-only mounts (the kubelet's
        `runtimeClassSupportsRecursiveReadOnlyMounts`; every pod has the default handler here), asked of the runtime
        only when a mount of the pod resolves differently with and without."""
        return depends_on_support(pod) and self.supports_recursive_read_only()

    def _prepare(self, record: PodRecord) -> None:
        """Hook: set up per-pod resources (directories) when a pod is admitted."""
        return None

    def _finished(self, record: PodRecord) -> None:
        """Hook: the pod reached its final phase and nothing of it runs."""
        return None

    # -- the loop ------------------------------------------------------------------------------------------
    def admit(self, pod: Obj, *, attempts: dict[str, list[Attempt]] | None = None) -> PodHandle:
        """Admit a pod and start what its plan says; a pod already admitted keeps its handle. `attempts` are
        what ran of it before (adopted after an agent restart): the plan continues from them."""
        uid = str(pod.get("metadata", {}).get("uid", ""))
        if not uid:
            raise bad_request("pod has no metadata.uid")
        existing = self.handles.get(uid)
        if existing is not None:
            return existing
        handle = PodHandle(pod)
        record = PodRecord(pod=pod, admitted_at=self.clock.now(), attempts=dict(attempts or {}))
        self.records[uid] = record
        self.handles[uid] = handle
        self._prepare(record)
        deadline = pod.get("spec", {}).get("activeDeadlineSeconds")
        if isinstance(deadline, int | float) and not isinstance(deadline, bool) and deadline >= 0:
            self._deadlines[uid] = self._call_later(float(deadline), lambda: self._deadline_exceeded(uid))
        self.sync(uid)
        return handle

    def _announce_stops(self, record: PodRecord) -> None:
        """The kubelet's `Killing` "Stopping container NAME" event for each running container it kills on its own
        (`killContainer`); kills the node agent asks for (deletions, evictions, shutdown) it records itself."""
        for name, runs in record.attempts.items():
            if runs and runs[-1].running:
                self.record_event(record, "Normal", "Killing", f"Stopping container {name}", name)

    def _deadline_exceeded(self, uid: str) -> None:
        self._deadlines.pop(uid, None)
        record = self.records.get(uid)
        if record is None:
            return
        if record.kill is None:
            self._announce_stops(record)
        self.request_kill(uid, grace_seconds=deletion_grace_seconds(record.pod), reason=ACTIVE_DEADLINE_EXCEEDED)

    def update_pod(self, pod: Obj) -> None:
        """Take a newer version of an admitted pod (labels, annotations, conditions others set), re-publish.

        The kubelet keeps every condition it does not own from the API's copy of the pod, so the node agent
        passes each update it sees; container specs are immutable, so running containers are unaffected.
        """
        uid = str(pod.get("metadata", {}).get("uid", ""))
        record = self.records.get(uid)
        if record is None or record.pod is pod:  # the same version: nothing new to plan or publish
            return
        same_spec = record.pod.get("spec") is pod.get("spec")  # shared by a patch that left it (read-only)
        record.pod = pod
        if record.kill is None and not same_spec:
            self._replace_changed(record)
        handle = self.handles.get(uid)
        if handle is not None and not handle.terminal:  # `sync` does nothing for a pod that is over
            self.sync(uid)

    def _replace_changed(self, record: PodRecord) -> None:
        """Stop each running regular container or sidecar whose image the pod's spec changed, to start it again
        with the new one (`restart.plan`, `PodRecord.replace`): the kubelet kills a running container whose spec
        hash changed, with the pod's grace period, and starts it anew whatever the restart policy
        (pkg/kubelet/kuberuntime/kuberuntime_manager.go `computePodActions`). A running ordinary init container
        finishes its work; a container not started yet starts with the new image anyway."""
        spec = record.pod.get("spec", {})
        candidates = [*(c for c in spec.get("initContainers") or () if is_sidecar(c)), *(spec.get("containers") or ())]
        grace = None  # worked out for the first container replaced (most updates of a pod replace none)
        for container in candidates:
            name = container["name"]
            last = record.last(name)
            if last is None or not last.running or not last.image or name in record.replace:
                continue
            if container.get("image", "") == last.image:
                continue
            record.replace.add(name)
            if grace is None:
                grace = deletion_grace_seconds({"spec": spec})
            self.kill_container(record, last, grace)

    def kill_container(self, record: PodRecord, attempt: Attempt, grace_seconds: float) -> None:
        """Stop one running container as the kubelet's `killContainer` does (pkg/kubelet/kuberuntime/
        kuberuntime_container.go): its `preStop` hook first, for at most the grace period, then SIGTERM, then
        SIGKILL once the grace period is over, but never sooner than `minimum_grace_seconds` after SIGTERM."""
        if not attempt.running or attempt.container_id in self._container_kills:
            return
        self._container_kills.add(attempt.container_id)
        grace = max(grace_seconds, self.minimum_grace_seconds)
        begun = self.clock.now()

        def terminate() -> None:
            if not attempt.running or self.records.get(record.uid) is not record:
                return
            self._signal(record, attempt, signals.SIGTERM)
            left = max(grace - (self.clock.now() - begun), self.minimum_grace_seconds)
            self._call_later(left, functools.partial(self._kill_if_running, record, attempt))

        if not self._pre_stop(record, attempt, grace, terminate):
            terminate()

    def _kill_if_running(self, record: PodRecord, attempt: Attempt) -> None:
        if attempt.running and self.records.get(record.uid) is record:
            self._signal(record, attempt, signals.SIGKILL)

    def sync(self, uid: str) -> None:
        """Plan, act and publish for one pod."""
        record = self.records.get(uid)
        handle = self.handles.get(uid)
        if record is None or handle is None or handle.terminal:
            return
        now = self.clock.now()
        limit = restart_limit(record.pod)
        debugged = False
        for round_ in range(_MAX_STARTS_PER_SYNC):
            decisions = plan(record, now, cap=self.backoff_cap)
            if decisions.limit_exceeded and limit is not None and record.kill is None:
                # The pod's restart limit is spent (also by an attempt that ended as it started): it fails, like
                # a pod the node stops (request_kill syncs again).
                reason = restart_limit_exceeded(limit)
                self._announce_stops(record)
                self.request_kill(uid, grace_seconds=deletion_grace_seconds(record.pod), reason=reason)
                return
            debuggers = not round_ and record.kill is None and record.pod.get("spec", {}).get("ephemeralContainers")
            if debuggers and not (decisions.done or decisions.stop):
                self._start_ephemeral(record, now)
                debugged = True  # the record changed after `decisions`: the status plans it afresh
            if decisions.stop and record.kill is None:
                # The regular containers are done (or an init container failed the pod) while sidecars run: the
                # kubelet kills the pod, its sidecars with the pod's grace period (request_kill syncs again).
                self._announce_stops(record)
                self.request_kill(uid, grace_seconds=deletion_grace_seconds(record.pod))
                return
            if not decisions.start:
                wake_at = decisions.wake_at
                break
            if round_:
                # An attempt of the round before ended as it started: its exit is reported before the restart,
                # as the kubelet's sync that sees it reports it (state terminated) and only then starts anew.
                self._publish(record, handle, now, done=False, decisions=decisions)
            started = 0
            for name in decisions.start:
                # A regular container waits for the postStart hook of one before it (its end syncs the pod again).
                if not self._behind_post_start(record, name):
                    self._start(record, name, now)
                    started += 1
            if not started:
                wake_at = decisions.wake_at
                break
        else:
            # `_MAX_STARTS_PER_SYNC` starts (attempts that ended as they started): the pod is planned again at
            # once, in a sync of its own, rather than never.
            decisions = plan(record, now, cap=self.backoff_cap)
            wake_at = now
        cancel = self._wakeups.pop(uid, None)
        if cancel is not None:
            cancel()
        if wake_at is not None:
            self._wakeups[uid] = self._call_later(max(wake_at - now, 0.0), lambda: self.sync(uid))
        done = decisions.done and not record.any_running()
        self._publish(record, handle, now, done=done, decisions=None if debugged else decisions)

    def _behind_post_start(self, record: PodRecord, name: str) -> bool:
        """Whether a regular container before `name` in the spec runs its postStart hook still: the kubelet starts
        the regular containers one after another, each `startContainer` returning once its hook has run
        (kuberuntime_manager.go `SyncPod`), so `name` starts after it (the end of the hook syncs the pod again)."""
        if not self.runs_handlers:
            return False
        for container in record.pod.get("spec", {}).get("containers") or ():
            if container.get("name") == name:
                return False
            last = record.last(str(container.get("name")))
            hook = (container.get("lifecycle") or {}).get("postStart")
            if last is not None and last.running and not last.started and runnable_hook(hook):
                return True
        return False

    def _start_ephemeral(self, record: PodRecord, now: float) -> None:
        """Start each ephemeral container that never ran, as soon as the pod lists it, whatever its init
        containers do; one that ended is never started again (pkg/kubelet/kuberuntime/kuberuntime_manager.go
        `computePodActions`: `EphemeralContainersToStart` holds those without a status)."""
        for container in record.pod.get("spec", {}).get("ephemeralContainers") or ():
            name = container.get("name")
            if isinstance(name, str) and not record.attempts.get(name) and name not in record.config_errors:
                self._start(record, name, now)

    def _publish(self, record: PodRecord, handle: PodHandle, now: float, *, done: bool, decisions: Plan | None) -> None:
        """Compute the pod's status from `decisions`, the plan `sync` just made for `record` as it is at `now`
        (nothing of the record changed since; None: the record changed, so it is planned again), and publish it
        if it changed."""
        status = compute_pod_status(
            record,
            now,
            previous=handle.status or None,
            host_ip=self.host_ip,
            pod_ip=self.pod_ip,
            backoff_cap=self.backoff_cap,
            recursive_read_only=self.recursive_read_only_mounts(record.pod),
            decisions=decisions,
        )
        terminal = done and status.get("phase") in TERMINAL_PHASES
        if status != handle.status:
            handle.publish(status, terminal=terminal)
            self.on_status(handle.uid, status)
        elif terminal:
            handle.publish(status, terminal=True)
        if terminal:
            for timers in (self._wakeups, self._kill_timers, self._deadlines):
                cancel = timers.pop(handle.uid, None)
                if cancel is not None:
                    cancel()
            self._stop_at.pop(handle.uid, None)
            self._pre_stopping.pop(handle.uid, None)
            self._finished(record)

    def _start(self, record: PodRecord, name: str, now: float) -> None:
        container = find_container(record.pod, name)
        if container is None:  # pragma: no cover - plan only names containers of the spec
            return
        attempts = record.attempts.setdefault(name, [])
        number = len(attempts)
        replacing = name in record.replace
        record.replace.discard(name)
        if attempts and not replacing:  # a container replaced for its new image did not crash: no back-off
            last = attempts[-1]
            finished = last.finished_at if last.finished_at is not None else now
            record.backoff[name] = next_backoff(
                record.backoff.get(name), finished, now, base=self.backoff_base, cap=self.backoff_cap
            )
        try:
            services = self.service_env(record.pod) if self.service_env is not None else None
            env = container_env(
                record.pod,
                container,
                host_ip=self.host_ip,
                pod_ip=self.pod_ip,
                sources=self._env_sources.get(record.uid),
                services=services,
            )
            if services:  # below the container's own, as the kubelet appends only those it does not define
                env = {**services, **env}
            argv = container_command(container, env)
            attempt = self._spawn(record, container, number, env, argv)
            attempt.image = str(container.get("image", ""))
            if self.runs_handlers and attempt.running:  # not started, nor ready, until its probes say so
                attempt.probe_started = not runnable_probe(container.get("startupProbe"))
                attempt.probe_ready = not runnable_probe(container.get("readinessProbe"))
            attempts.append(attempt)
            if record.config_errors:
                record.config_errors.pop(name, None)
        except ConfigError as exc:
            record.config_errors[name] = ("CreateContainerConfigError", str(exc))

    def exited(
        self,
        uid: str,
        attempt: Attempt,
        *,
        exit_code: int,
        signal: int | None,
        oom: bool,
        finished_at: float | None = None,
    ) -> None:
        """Record that an attempt ended (now, unless the runtime knows when), then re-plan the pod."""
        attempt.finished_at = self.clock.now() if finished_at is None else finished_at
        attempt.exit_code = exit_code
        attempt.signal = signal
        attempt.oom = oom
        self._container_kills.discard(attempt.container_id)
        record = self.records.get(uid)
        if record is not None and record.kill is not None:
            self._terminate(uid)  # a container that stopped may be the one a sidecar waits for
        self.sync(uid)

    def fail(self, uid: str, container: str, exit_code: int) -> None:
        """End the running attempt of `container` of pod `uid` now with `exit_code`, as if it had exited so
        (fault injection: `kjobs_cluster.fail_container`). The kubelet's status, restart policy and the Job's
        podFailurePolicy then see an ordinary container exit. `NotRunning` when there is no such running attempt."""
        record = self.records.get(uid)
        if record is None:
            raise NotRunning(f"pod {uid} does not run here")
        attempts = record.attempts.get(container) or []
        if not attempts or not attempts[-1].running:
            raise NotRunning(f"container {container!r} of pod {record.pod['metadata'].get('name')} is not running")
        attempt = attempts[-1]
        self._abandon(attempt)
        self.exited(uid, attempt, exit_code=exit_code, signal=None, oom=False)

    # -- termination ---------------------------------------------------------------------------------------
    def request_kill(
        self, uid: str, *, grace_seconds: float, reason: KillReason | None = None, exact: bool = False
    ) -> None:
        """SIGTERM the pod's running containers, sidecars last (`kjobs.node.termination`), and SIGKILL each at
        the end of its grace period.

        Like the kubelet, a grace period that is not an override (API deletions, the active deadline) is at
        least `minimum_grace_seconds`; node-initiated kills (eviction, shutdown) and `exact` use it as given.
        """
        record = self.records.get(uid)
        handle = self.handles.get(uid)
        if record is None or handle is None or handle.terminal:
            return
        if not exact and (reason is None or not reason.overrides_grace):
            grace_seconds = max(grace_seconds, self.minimum_grace_seconds)
        now = self.clock.now()
        if record.kill is None:
            if reason is not None:
                keep = reason.keep_succeeded and handle.status.get("phase") == SUCCEEDED
                record.killed_phase = SUCCEEDED if keep else "Failed"
            record.kill = KillRequest(requested_at=now, grace_seconds=grace_seconds, reason=reason)
            self._stop_at[uid] = {}
        else:
            # A second request may only shorten the grace period (like a force delete).
            deadline = record.kill.requested_at + record.kill.grace_seconds
            if now + grace_seconds >= deadline:
                self.sync(uid)
                return
            record.kill = KillRequest(requested_at=now, grace_seconds=grace_seconds, reason=record.kill.reason)
            stops = self._stop_at.setdefault(uid, {})
            for name, at in stops.items():
                stops[name] = min(at, now + grace_seconds)
        self._terminate(uid)
        self.sync(uid)

    def _terminate(self, uid: str) -> None:
        """One step of a pod's termination: SIGTERM the running containers whose turn has come (all of them once
        the grace period is over), SIGKILL those whose own deadline has passed, and wake up for the next step.

        A container signalled when the kill was asked has until the pod's deadline; a sidecar whose turn comes
        later has what is left of it, but at least `minimum_grace_seconds` (or the whole grace period when that
        is shorter), as the kubelet's `killContainer` gives after `waitForTurn`."""
        record = self.records.get(uid)
        if record is None or record.kill is None:
            return
        cancel = self._kill_timers.pop(uid, None)
        if cancel is not None:
            cancel()
        kill = record.kill
        now = self.clock.now()
        stops = self._stop_at.setdefault(uid, {})
        running = {name: runs[-1] for name, runs in record.attempts.items() if runs and runs[-1].running}
        deadline = kill.requested_at + kill.grace_seconds
        turns = set(running) if now >= deadline else stop_turns(record.pod, running)
        floor = min(self.minimum_grace_seconds, kill.grace_seconds)
        for name, attempt in running.items():
            at = stops.get(name)
            hooked = self._pre_stopping.setdefault(uid, {})
            if at is None:
                if name not in turns:
                    continue
                at = now if kill.grace_seconds <= 0 else now + max(deadline - now, floor)
                stops[name] = at
                if at > now and attempt.container_id not in self._container_kills:
                    done = functools.partial(self._after_pre_stop, uid, name, attempt)
                    if self._pre_stop(record, attempt, at - now, done):
                        hooked[name] = at
                    else:
                        self._signal(record, attempt, signals.SIGTERM)
                elif at > now:
                    self._signal(record, attempt, signals.SIGTERM)
            if at <= now:
                if hooked.get(name) == at:
                    continue  # its preStop hook is being cut short: SIGTERM first, then `floor` (_after_pre_stop)
                self._signal(record, attempt, signals.SIGKILL)
                stops[name] = math.inf
        pending = [stops[name] for name in running if name in stops and now < stops[name] < math.inf]
        if any(name not in stops for name in running) and deadline > now:
            pending.append(deadline)
        if pending:
            self._kill_timers[uid] = self._call_later(min(pending) - now, lambda: self._terminate(uid))

    def _after_pre_stop(self, uid: str, name: str, attempt: Attempt) -> None:
        """A container's `preStop` hook ended (or its time ran out): SIGTERM now, and SIGKILL at the end of the
        grace period but at least `minimum_grace_seconds` from now (`killContainer`: the grace period less the
        hook's time, raised to the minimum)."""
        hooked = self._pre_stopping.get(uid, {})
        hooked.pop(name, None)
        record = self.records.get(uid)
        if record is None or record.kill is None or not attempt.running:
            return
        stops = self._stop_at.setdefault(uid, {})
        now = self.clock.now()
        self._signal(record, attempt, signals.SIGTERM)
        at = stops.get(name, now)
        if at < math.inf:
            stops[name] = max(at, now + min(self.minimum_grace_seconds, record.kill.grace_seconds))
        self._terminate(uid)

    # -- logs ----------------------------------------------------------------------------------------------
    def log_since(self, since_seconds: int | None, since_time: float | None) -> float | None:
        """The time (epoch seconds) before which `kubectl logs --since/--since-time` leaves lines out."""
        if since_seconds is not None:
            return self.clock.now() - since_seconds
        return since_time

    def log_attempt(self, uid: str, container: str, *, previous: bool) -> Attempt:
        """The attempt whose output `kubectl logs` shows, or the kubelet's 400 error when there is none."""
        record = self.records.get(uid)
        handle = self.handles.get(uid)
        if record is None or handle is None:
            raise ApiError(404, "NotFound", f'pod with uid "{uid}" is not running on this node')
        if find_container(record.pod, container) is None:
            raise bad_request(f"container {container} is not valid for pod {handle.name}")
        attempts = record.attempts.get(container) or []
        statuses = [
            *(handle.status.get("initContainerStatuses") or ()),
            *(handle.status.get("containerStatuses") or ()),
            *(handle.status.get("ephemeralContainerStatuses") or ()),
        ]
        status: Obj = next((s for s in statuses if s.get("name") == container), {})
        state, last_state = status.get("state", {}), status.get("lastState", {})
        if previous:
            if "terminated" not in last_state or not attempts:
                raise bad_request(f'previous terminated container "{container}" in pod "{handle.name}" not found')
            return attempts[-1] if "waiting" in state else attempts[-2]
        if ("running" in state or "terminated" in state) and not attempts:
            raise bad_request(f'container "{container}" in pod "{handle.name}" is terminated')
        if not attempts:
            reason = state.get("waiting", {}).get("reason", "ContainerCreating")
            raise bad_request(f'container "{container}" in pod "{handle.name}" is waiting to start: {reason}')
        return attempts[-1]

    @abstractmethod
    def logs(
        self,
        uid: str,
        container: str,
        *,
        follow: bool = False,
        tail_lines: int | None = None,
        previous: bool = False,
        limit_bytes: int | None = None,
    ) -> AsyncIterator[bytes]:
        """See `ContainerRuntime.logs`."""

    # -- bookkeeping ---------------------------------------------------------------------------------------
    def adopt(self, pod: Obj) -> PodHandle | None:
        """Admit a pod whose containers a previous agent on this node started, if this runtime found any;
        None when it knows nothing of it (a runtime that keeps nothing across restarts never does)."""
        return None

    def release_unclaimed(self, uids: set[str]) -> None:
        """Stop what a previous agent started for pods other than `uids` (the pods bound to this node now)."""
        return None

    def stop_recovered(self, uid: str, grace_seconds: float) -> None:
        """Stop what a previous agent started for the pod, which will not run here (a runtime that keeps nothing
        across restarts has nothing to stop)."""
        return None

    def get(self, uid: str) -> PodHandle | None:
        """The handle of an admitted pod."""
        return self.handles.get(uid)

    def starting(self, uid: str) -> bool:
        """Whether a container start of the pod awaits the runtime's answer (its status is published then)."""
        record = self.records.get(uid)
        return record is not None and any(a and not a[-1].started for a in record.attempts.values())

    def provide_env_sources(self, uid: str, sources: EnvSources | None) -> None:
        """The ConfigMaps and Secrets the pod's containers read, as the node agent fetched them (before the pod
        is admitted, and again while a container waits on one). Containers that could not be created are tried
        again now, as the kubelet's next sync of the pod tries them. None: forget them (the pod will not run)."""
        if sources is None:
            self._env_sources.pop(uid, None)
            return
        self._env_sources[uid] = sources
        record = self.records.get(uid)
        if record is not None and record.config_errors:
            record.config_errors.clear()
            self.sync(uid)

    def forget(self, uid: str) -> None:
        """Drop a pod's records; running containers are killed first."""
        record = self.records.get(uid)
        if record is not None and record.any_running():
            self.request_kill(uid, grace_seconds=0, exact=True)
        for timers in (self._wakeups, self._kill_timers, self._deadlines):
            cancel = timers.pop(uid, None)
            if cancel is not None:
                cancel()
        self._stop_at.pop(uid, None)
        self._pre_stopping.pop(uid, None)
        self.records.pop(uid, None)
        self.handles.pop(uid, None)
        self._env_sources.pop(uid, None)
