"""Stop 49: `restart.plan` makes its init-container state (the `waiting` closure, which init containers ran,
whether a regular container ran) only for a pod with init containers; a pod without any (most: the supervisor
plans each twice a sync) made them for nothing.

The form it replaced is kept here as it was (`plain_plan`); hypothesis makes pods with none, one or two init
containers (sidecars or not, with their own restart policies), one or two regular containers, every pod restart
policy, with and without `maxRestartTimes`, and records of their attempts (running, exited 0 or 1, none), back-off
entries, config errors and replaced images, planned at times before, at and after the back-offs: the same plan.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.node.observations import BackoffEntry, PodRecord
from kjobs.node.restart import (
    DEFAULT_BACKOFF_CAP,
    Plan,
    _finished,
    _sidecars_running,
    container_should_restart,
    is_sidecar,
    plan,
    pod_restarts,
    restart_due,
    restart_limit,
    restart_policy,
)
from tests.hypothesis_budget import examples
from tests.node.helpers import T0, attempt, make_pod


# fmt: off
def plain_plan(record: PodRecord, now: float, *, cap: float = DEFAULT_BACKOFF_CAP) -> Plan:
    """Decide which containers of the pod start now, and when to look again."""
    if record.kill is not None:
        return Plan(done=not record.any_running())
    spec = record.pod.get("spec", {})
    policy = restart_policy(record.pod)
    limit = restart_limit(record.pod)
    budget = None if limit is None else limit - pod_restarts(record)

    sidecar_starts: list[str] = []
    sidecar_backoff: dict[str, float] = {}
    sidecar_limit = False  # a sidecar's restart would exceed the limit: the pod fails, as for any container

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

    init_specs = spec.get("initContainers") or []
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
        if last.running:
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
# fmt: on


def container(name: str) -> Any:
    return st.fixed_dictionaries(
        {"name": st.just(name), "image": st.just("x")},
        optional={"restartPolicy": st.sampled_from(["Always", "Never", "OnFailure"])},
    )


SPEC = st.tuples(
    st.lists(st.sampled_from(["i1", "i2"]), max_size=2, unique=True).flatmap(
        lambda names: st.tuples(*(container(n) for n in names))
    ),
    st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=2, unique=True).flatmap(
        lambda names: st.tuples(*(st.fixed_dictionaries({"name": st.just(n), "image": st.just("x")}) for n in names))
    ),
    st.sampled_from(["Always", "OnFailure", "Never"]),
    st.one_of(st.none(), st.integers(0, 3)),
)
RUN = st.tuples(st.booleans(), st.sampled_from([0, 1]), st.floats(0, 50), st.floats(0, 20))
HISTORY = st.dictionaries(st.sampled_from(["i1", "i2", "a", "b"]), st.lists(RUN, min_size=1, max_size=3), max_size=4)


@settings(max_examples=examples(500), deadline=None)
@given(
    spec=SPEC,
    history=HISTORY,
    backoff=st.dictionaries(st.sampled_from(["i1", "i2", "a", "b"]), st.floats(0, 40), max_size=2),
    errors=st.sets(st.sampled_from(["i1", "i2", "a", "b"]), max_size=2),
    replace=st.sets(st.sampled_from(["i1", "i2", "a", "b"]), max_size=1),
    later=st.floats(0, 200),
)
def test_plan_as_before(
    spec: tuple[Any, Any, str, int | None],
    history: dict[str, list[tuple[bool, int, float, float]]],
    backoff: dict[str, float],
    errors: set[str],
    replace: set[str],
    later: float,
) -> None:
    init, containers, policy, limit = spec
    extra = {} if limit is None else {"maxRestartTimes": limit}
    pod = make_pod(list(containers), init=list(init), policy=policy, **extra)
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
    record.replace = set(replace)
    now = T0 + later
    assert plan(record, now) == plain_plan(record, now)
