"""Probes and lifecycle hooks of a process runtime's containers, run as the kubelet runs them.

Design note: per started container attempt, one asyncio task per probe (pkg/kubelet/prober/worker.go: the first
probe after `initialDelaySeconds`, then every `periodSeconds`; `successThreshold` / `failureThreshold`
consecutive results change the state; liveness and readiness wait for the startup probe; liveness and startup
are not run once the pod is being stopped) and one for `postStart` (pkg/kubelet/kuberuntime/
kuberuntime_container.go `startContainer`: a failed hook is a `FailedPostStartHook` event and the container is
killed). A liveness or startup failure kills the container with the probe's `terminationGracePeriodSeconds`
or the pod's (`computePodActions`, `killContainer`); its restart policy then decides. `preStop` runs before
SIGTERM, within the grace period (`executePreStopHook`); its failure is a `FailedPreStopHook` event. The
decisions that change a status (started, ready, killed) go through the `Supervisor`'s records, so the status
is computed in one place (`kjobs.node.podstatus`). The actions themselves are `kjobs.node.probing`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from kjobs.api.types import Obj
from kjobs.node.execution import ExecSpec
from kjobs.node.observations import Attempt, PodRecord
from kjobs.node.probing import (
    PROBE_NAMES,
    PROBES,
    RUNNABLE_HOOK_ACTIONS,
    RUNNABLE_PROBE_ACTIONS,
    action_of,
    run_hook,
    run_probe,
    timing,
)
from kjobs.node.restart import is_sidecar
from kjobs.node.supervisor import deletion_grace_seconds, find_container

if TYPE_CHECKING:
    from kjobs.node.process_runtime import ProcessRuntime


def pod_full_name(pod: Obj) -> str:
    """The kubelet's `format.Pod`: `NAME_NAMESPACE(UID)`."""
    meta = pod.get("metadata") or {}
    return f"{meta.get('name', '')}_{meta.get('namespace', '')}({meta.get('uid', '')})"


def will_restart(pod: Obj, container: Obj) -> bool:
    """`shouldRestartOnFailure`: whether a container killed for a failed probe is started again."""
    return is_sidecar(container) or (pod.get("spec") or {}).get("restartPolicy", "Always") != "Never"


class HandlerRunner:
    """The probe and hook tasks of one `ProcessRuntime`, per container attempt."""

    def __init__(self, runtime: ProcessRuntime) -> None:
        self.runtime = runtime
        self._tasks: dict[str, set[asyncio.Task[None]]] = {}
        self._stopping: set[asyncio.Task[None]] = set()
        """preStop hooks running (held here: the loop keeps only weak references to its tasks)."""

    # -- what the runtime calls ------------------------------------------------------------------------------
    def post_start(self, record: PodRecord, attempt: Attempt, then: Callable[[], None]) -> bool:
        """Start the container's postStart hook; `then` once it succeeded. False when there is none to run.

        The kubelet runs the hook within `startContainer`, before its pod worker writes another status or starts
        the next container, so until the hook ends the container reads as being created (`ContainerCreating`,
        as Kubernetes' container-lifecycle-hooks page says) and nothing after it starts."""
        container = _regular_or_init(record.pod, attempt.container)
        if container is None:
            return False
        hook = (container.get("lifecycle") or {}).get("postStart")
        if not isinstance(hook, dict) or not action_of(hook, RUNNABLE_HOOK_ACTIONS):
            return False
        self._spawn(attempt, self._post_start(record, attempt, container, hook, then))
        return True

    def started(self, record: PodRecord, attempt: Attempt) -> None:
        """A container attempt runs (its postStart hook, if any, done): start its probes."""
        container = _regular_or_init(record.pod, attempt.container)
        if container is None:
            return
        for kind in PROBES:
            probe = container.get(kind)
            if isinstance(probe, dict) and action_of(probe, RUNNABLE_PROBE_ACTIONS):
                self._spawn(attempt, self._probe_loop(record, attempt, container, kind, probe))

    def ended(self, attempt: Attempt) -> None:
        """The attempt ended: its probes and postStart stop (a preStop hook ends on its own, bounded)."""
        for task in self._tasks.pop(attempt.container_id, ()):
            task.cancel()

    def close(self) -> None:
        """Cancel everything (the runtime shuts down)."""
        for tasks in [*self._tasks.values(), self._stopping]:
            for task in tasks:
                task.cancel()
        self._tasks.clear()
        self._stopping.clear()

    def pre_stop(self, record: PodRecord, attempt: Attempt, timeout: float, done: Callable[[], None]) -> bool:
        """Start the container's preStop hook, bounded by `timeout`; `done` is called when it is over. False when
        it has none (or none kjobs runs), or no loop runs to run it."""
        container = find_container(record.pod, attempt.container)
        hook = ((container or {}).get("lifecycle") or {}).get("preStop")
        if container is None or not isinstance(hook, dict) or not action_of(hook, RUNNABLE_HOOK_ACTIONS):
            return False
        if timeout <= 0 or self.runtime.loop is None:
            return False

        async def run() -> None:
            try:
                message = await asyncio.wait_for(self._hook(record, attempt, container, hook), timeout)
                if message:  # the message stays out of the event: it may hold secrets (executePreStopHook)
                    self._event(record, "Warning", "FailedPreStopHook", "PreStopHook failed", attempt.container)
            except TimeoutError:
                pass
            finally:
                done()

        task = self.runtime.loop.create_task(run())
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)
        return True

    # -- the tasks -------------------------------------------------------------------------------------------
    def _spawn(self, attempt: Attempt, work: Coroutine[Any, Any, None]) -> None:
        loop = self.runtime.loop
        if loop is None:  # pragma: no cover - containers start from the loop
            work.close()
            return
        task = loop.create_task(work)
        tasks = self._tasks.setdefault(attempt.container_id, set())
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def _hook(self, record: PodRecord, attempt: Attempt, container: Obj, hook: Obj) -> Coroutine[Any, Any, str]:
        return run_hook(hook, container, self._exec_in(record, attempt), self.runtime.pod_ip, pod_full_name(record.pod))

    async def _post_start(
        self, record: PodRecord, attempt: Attempt, container: Obj, hook: Obj, then: Callable[[], None]
    ) -> None:
        message = await self._hook(record, attempt, container, hook)
        if not attempt.running:
            return
        if not message:
            then()
            return
        self._event(record, "Warning", "FailedPostStartHook", message, attempt.container)
        self._event(record, "Normal", "Killing", "FailedPostStartHook", attempt.container)
        self.runtime.kill_container(record, attempt, deletion_grace_seconds(record.pod))

    async def _probe_loop(self, record: PodRecord, attempt: Attempt, container: Obj, kind: str, probe: Obj) -> None:
        schedule = timing(probe)
        name = PROBE_NAMES[kind]
        await asyncio.sleep(schedule.initial_delay)
        successes = failures = 0
        while attempt.running and self.runtime.records.get(record.uid) is record:
            if kind != "readinessProbe" and record.kill is not None:
                return  # liveness and startup are not probed on a pod being stopped (worker.go `doProbe`)
            if kind == "startupProbe" and attempt.probe_started:
                return
            if kind != "startupProbe" and not attempt.probe_started:
                await asyncio.sleep(min(schedule.period, 0.1))
                continue
            result, output = await run_probe(
                probe, container, self._exec_in(record, attempt), self.runtime.pod_ip, schedule.timeout
            )
            if not attempt.running:
                return
            if result == "error":
                # The prober could not run it (a command that cannot be started, a port it cannot resolve): an
                # event, and the result is thrown away (worker.go `doProbe`), so it never kills the container.
                text = f"{name} probe errored and resulted in unknown state: {output}"
                self._event(record, "Warning", "Unhealthy", text, attempt.container)
                await asyncio.sleep(schedule.period)
                continue
            if result == "success":
                successes, failures = successes + 1, 0
            else:
                successes, failures = 0, failures + 1
                self._event(record, "Warning", "Unhealthy", f"{name} probe failed: {output}", attempt.container)
            if kind == "readinessProbe":
                ready = attempt.probe_ready
                if successes >= schedule.success_threshold:
                    ready = True
                elif failures >= schedule.failure_threshold:
                    ready = False
                if ready != attempt.probe_ready:
                    attempt.probe_ready = ready
                    self.runtime.sync(record.uid)
            elif kind == "startupProbe" and successes >= 1:
                attempt.probe_started = True
                self.runtime.sync(record.uid)
                return
            elif failures >= schedule.failure_threshold:
                self._probe_kill(record, attempt, container, "liveness" if kind == "livenessProbe" else "startup")
                return
            await asyncio.sleep(schedule.period)

    def _probe_kill(self, record: PodRecord, attempt: Attempt, container: Obj, which: str) -> None:
        """`computePodActions`: a container that failed its liveness or startup probe is killed, and restarted
        as its restart policy says, with a `Killing` event saying which."""
        message = f"Container {attempt.container} failed {which} probe"
        if will_restart(record.pod, container):
            message += ", will be restarted"
        self._event(record, "Normal", "Killing", message, attempt.container)
        probe = container.get(f"{which}Probe") or {}
        grace = timing(probe).grace
        self.runtime.kill_container(record, attempt, deletion_grace_seconds(record.pod) if grace is None else grace)

    # -- helpers ---------------------------------------------------------------------------------------------
    def _exec_in(self, record: PodRecord, attempt: Attempt) -> Callable[[list[str]], ExecSpec]:
        return lambda command: self.runtime.exec_spec(record.uid, attempt.container, command)

    def _event(self, record: PodRecord, kind: str, reason: str, message: str, container: str) -> None:
        with contextlib.suppress(Exception):  # an event is best effort; it never stops a probe
            self.runtime.record_event(record, kind, reason, message, container)


def _regular_or_init(pod: Obj, name: str) -> Obj | None:
    """The spec of the pod's container or init container `name`, as it is (read, not copied: this runs at every
    start); None for an ephemeral container (probes and hooks are not allowed there)."""
    spec = pod.get("spec") or {}
    for group in ("containers", "initContainers"):
        for container in spec.get(group) or ():
            if container.get("name") == name:
                found: Obj = container
                return found
    return None
