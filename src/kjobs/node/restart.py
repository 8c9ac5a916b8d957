"""Restart decisions: which container the node starts next, and when (the kubelet's rules).

Design note: this module is the single place that answers "should this container run (again), and not
before when?". It is pure (observations and a time in, a `Plan` out) so both runtimes, the node agent and
future extensions (a pod-level restart limit, per-container restart rules) share one table-tested rule set.

Rules, as the kubelet applies them (`computePodActions`, `doBackOff`, `ShouldContainerBeRestarted`):
* init containers run one at a time in spec order; a failed init container that will not restart (see
  below) has failed the pod, and nothing else starts; an init container followed by one that has run counts
  as done whatever the runtime still shows of it (`computeInitContainerActions` walks them from the last one),
  except a sidecar, which is started again if it is gone;
* an init container with `restartPolicy: Always` is a sidecar (KEP-753, `podutil.IsRestartableInitContainer`):
  the next init container starts once it has started (and its startupProbe, if any, succeeded); if it exits
  before anything after it has run, it restarts (with back-off) and what follows waits for it again; it runs
  beside the regular containers, restarts with back-off whenever it exits, and once every regular container has
  ended for good the pod is stopped (`stop`: the kubelet's `KillPod` in `computePodActions`), so a Job's pod
  with a sidecar ends when its main container does;
* regular containers start together once every init container succeeded; whether an exited container
  (init or regular) restarts is `restart_rules.container_should_restart`: its own restart rules and
  restartPolicy first, then the pod's (Always; OnFailure when the exit code is not 0; never under Never);
* a pod restart limit (`spec.maxRestartTimes`, kjobs gate JobPodRestartLimit, the field KEP-3322 proposed:
  kubernetes/enhancements#3339): the pod's restarts are the sum of its containers' restart counts, sidecars'
  included (as the Job controller's `pastBackoffLimitOnFailure` sums init and regular containers'); a restart,
  a sidecar's too, that would make them exceed the limit does not happen, and the plan says `limit_exceeded`
  instead (the supervisor then fails the pod, `observations.restart_limit_exceeded`);
* crash-loop back-off per container (client-go `flowcontrol.Backoff` keyed by container): the first restart
  is immediate and records `base`; each later restart waits `entry.duration` after the last exit, the
  duration doubling up to `cap`; an entry whose last update is older than 2×cap before the exit is forgotten.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kjobs.api.types import Obj
from kjobs.node.observations import Attempt, BackoffEntry, PodRecord
from kjobs.node.restart_rules import container_should_restart, policy_restarts

DEFAULT_BACKOFF_BASE = 10.0
"""Seconds: the kubelet's initial crash-loop back-off."""
DEFAULT_BACKOFF_CAP = 300.0
"""Seconds: the kubelet's MaxContainerBackOff (5 min)."""


@dataclass(slots=True)
class Plan:
    """What the runtime should do for one pod now (read-only by convention: not `frozen`, whose `__init__`
    costs several times more, and a pod is planned several times per change)."""

    start: tuple[str, ...] = ()
    """Containers to start now (init containers: at most one)."""
    wake_at: float | None = None
    """When to plan again because a back-off expires."""
    backing_off: dict[str, float] = field(default_factory=dict)
    """Containers waiting in CrashLoopBackOff, with the time their restart becomes due."""
    done: bool = False
    """Nothing runs and nothing will start again: the pod's phase is final."""
    limit_exceeded: bool = False
    """A container should restart but the pod's `maxRestartTimes` forbids it: the pod has failed."""
    stop: bool = False
    """Every regular container has ended for good while sidecars run: the pod is to be stopped (its sidecars
    terminated with its grace period), as the kubelet kills such a pod."""


def is_sidecar(container: Obj) -> bool:
    """An init container with `restartPolicy: Always` (podutil.IsRestartableInitContainer)."""
    return container.get("restartPolicy") == "Always"


def restart_policy(pod: Obj) -> str:
    """The pod's restartPolicy with the API default (Always)."""
    return str(pod.get("spec", {}).get("restartPolicy") or "Always")


def should_restart(policy: str, exit_code: int) -> bool:
    """Whether an exited container without its own restartPolicy runs again under the pod's `policy`."""
    return policy_restarts(policy, exit_code)


def restart_limit(pod: Obj) -> int | None:
    """The pod's `spec.maxRestartTimes` (None: no limit; the API server only accepts it under OnFailure)."""
    value = pod.get("spec", {}).get("maxRestartTimes")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def pod_restarts(record: PodRecord) -> int:
    """The pod's restarts so far: the sum of its containers' restart counts (KEP-3322's measure)."""
    return sum(len(attempts) - 1 for attempts in record.attempts.values() if attempts)


def _expired(event_time: float, entry: BackoffEntry, cap: float) -> bool:
    return event_time - entry.last_update > 2 * cap


def restart_due(entry: BackoffEntry | None, finished_at: float, *, cap: float) -> float:
    """Earliest time an exited container may restart: its exit time, or exit + the current back-off."""
    if entry is None or _expired(finished_at, entry, cap):
        return finished_at
    return finished_at + entry.duration


def next_backoff(
    entry: BackoffEntry | None, finished_at: float, now: float, *, base: float, cap: float
) -> BackoffEntry:
    """The back-off entry after a restart at `now` of a container that exited at `finished_at`."""
    if entry is None or _expired(finished_at, entry, cap):
        return BackoffEntry(duration=min(base, cap), last_update=now)
    return BackoffEntry(duration=min(entry.duration * 2, cap), last_update=now)


def plan(record: PodRecord, now: float, *, cap: float = DEFAULT_BACKOFF_CAP) -> Plan:
    """Decide which containers of the pod start now, and when to look again."""
    if record.kill is not None:
        return Plan(done=not record.any_running())
    spec = record.pod.get("spec", {})
    # `restart_policy` and `restart_limit`, and below `Attempt.running`, read inline: the supervisor plans twice a
    # sync (docs/node53.md)
    policy = str(spec.get("restartPolicy") or "Always")
    limit = spec.get("maxRestartTimes")
    if not isinstance(limit, int) or isinstance(limit, bool):
        limit = None
    budget = None if limit is None else limit - pod_restarts(record)

    sidecar_starts: list[str] = []
    sidecar_backoff: dict[str, float] = {}
    sidecar_limit = False  # a sidecar's restart would exceed the limit: the pod fails, as for any container

    init_specs = spec.get("initContainers") or []
    if init_specs:  # what only the init containers' walk uses (most pods have none: no closure, no reads)

        def waiting(
            start: tuple[str, ...] = (),
            backing_off: dict[str, float] | None = None,
            *,
            done: bool = False,
            limit_exceeded: bool = False,
        ) -> Plan:
            """A plan while initializing: the sidecars' restarts due beside what the init container needs."""
            if done:  # an init container failed the pod: its sidecars stop too
                stop = _sidecars_running(record)
                return Plan(done=not stop, stop=stop, limit_exceeded=limit_exceeded)
            off = {**sidecar_backoff, **(backing_off or {})}
            return Plan(
                start=start + tuple(sidecar_starts),
                wake_at=min(off.values()) if off else None,
                backing_off=off,
                limit_exceeded=sidecar_limit,
            )

        # computeInitContainerActions walks the init containers from the last one: one that ran means every
        # init container before it was initialized, even if the runtime no longer shows it (removed containers).
        seen = [bool(record.attempts.get(c["name"])) for c in init_specs]
        regular_ran = any(record.attempts.get(c["name"]) for c in spec.get("containers") or [])
    for index, container in enumerate(init_specs):
        name = container["name"]
        attempts = record.attempts.get(name)
        previously_initialized = any(seen[index + 1 :])
        if not attempts:
            if previously_initialized:  # only a sidecar is started again; an init container has done its work
                if is_sidecar(container) and name not in record.config_errors:
                    sidecar_starts.append(name)
                continue
            if name in record.config_errors:
                return waiting()
            return waiting((name,))
        if previously_initialized and not is_sidecar(container):
            continue
        last = attempts[-1]
        if is_sidecar(container):
            if last.running and not (last.started and last.probe_started) and len(attempts) == 1:
                return waiting()  # what comes next waits for its first start (and its startupProbe's success)
            if not last.running:
                if name in record.config_errors:
                    pass
                elif name in record.replace:  # stopped for its new image: it starts again at once
                    sidecar_starts.append(name)
                elif budget is not None and budget <= 0:  # its restarts are among the pod's (pod_restarts)
                    sidecar_limit = True
                else:
                    if budget is not None:
                        budget -= 1
                    due = restart_due(record.backoff.get(name), _finished(last), cap=cap)
                    if due <= now:
                        sidecar_starts.append(name)
                    else:
                        sidecar_backoff[name] = due
                if not previously_initialized and not regular_ran:
                    # Nothing after it has run yet: what follows waits until it runs again
                    # (computeInitContainerActions starts the next one only beside a running sidecar).
                    return waiting()
            continue  # it runs, or what follows has run: the next init container does not wait for it
        if last.running:
            return waiting()
        if last.exit_code == 0:
            continue
        if not container_should_restart(container, policy, last.exit_code or 0):
            return waiting(done=True)
        if budget is not None and budget <= 0:
            return waiting(done=True, limit_exceeded=True)
        if name in record.config_errors:  # its restart could not be configured: it waits for the next retry
            return waiting()
        due = restart_due(record.backoff.get(name), _finished(last), cap=cap)
        if due <= now:
            return waiting((name,))
        return waiting(backing_off={name: due})

    starts: list[str] = []
    backing_off: dict[str, float] = {}
    alive = limit_exceeded = False
    for container in spec.get("containers") or []:
        name = container["name"]
        attempts = record.attempts.get(name)
        if not attempts:
            alive = True
            if name not in record.config_errors:
                starts.append(name)
            continue
        last = attempts[-1]
        if last.finished_at is None:  # running
            alive = True
            continue
        if name in record.replace:  # stopped for its new image: it starts again at once, whatever the policy
            alive = True
            if name not in record.config_errors:
                starts.append(name)
            continue
        if not container_should_restart(container, policy, last.exit_code or 0):
            continue
        if budget is not None:
            if budget <= 0:
                limit_exceeded = True
                continue
            budget -= 1  # a restart due now or after its back-off reserves its share of the limit
        alive = True
        if name in record.config_errors:  # its restart could not be configured: it waits for the next retry
            continue
        due = restart_due(record.backoff.get(name), _finished(last), cap=cap)
        if due <= now:
            starts.append(name)
        else:
            backing_off[name] = due
    if not alive:  # the regular containers are done: sidecars stop, and none restarts
        stop = _sidecars_running(record)
        return Plan(done=not stop, stop=stop, limit_exceeded=limit_exceeded)
    starts.extend(sidecar_starts)
    backing_off.update(sidecar_backoff)
    wake = min(backing_off.values()) if backing_off else None
    return Plan(
        start=tuple(starts),
        wake_at=wake,
        backing_off=backing_off,
        done=False,
        limit_exceeded=limit_exceeded or sidecar_limit,
    )


def _sidecars_running(record: PodRecord) -> bool:
    """Whether a sidecar or an ephemeral container runs: the pod is stopped with it once the regular containers
    are done (an ephemeral container does not keep a pod alive, and is stopped with it)."""
    spec = record.pod.get("spec", {})
    for container in spec.get("initContainers") or ():
        if is_sidecar(container):
            last = record.last(container["name"])
            if last is not None and last.running:
                return True
    for container in spec.get("ephemeralContainers") or ():
        last = record.last(str(container.get("name", "")))
        if last is not None and last.running:
            return True
    return False


def _finished(attempt: Attempt) -> float:
    return attempt.finished_at if attempt.finished_at is not None else attempt.started_at
