"""Rows of the kubelet's restart decision and crash-loop back-off, on kjobs' `restart` module.

Upstream: pkg/kubelet/container/helpers_test.go (TestShouldContainerBeRestarted) and the back-off the kubelet keys
per container (`flowcontrol.NewBackOff(backOffPeriod, MaxContainerBackOff)`, used by kuberuntime's `doBackOff`),
whose rows are client-go's util/flowcontrol/backoff_test.go; the container states that follow from them,
pkg/kubelet/kubelet_pods_test.go (TestGenerateAPIPodStatusWithDifferentRestartPolicies).
kjobs answers "should it restart now?" with `restart.plan` (a container is restarted when it is in
`plan.start`) and keeps the back-off entry in `restart_due` / `next_backoff`. docs/upstream-kubelet.md lists the rows.
"""

from __future__ import annotations

import pytest

from kjobs.api.types import Obj
from kjobs.node.observations import Attempt, BackoffEntry, KillRequest
from kjobs.node.podstatus import compute_pod_status
from kjobs.node.restart import next_backoff, plan, restart_due
from tests.node.helpers import T0, attempt, make_pod, record

CRASH_LOOP = "CrashLoopBackOff"
CONTAINERS = ("no-history", "alive", "succeed", "failed")
POLICIES = ("Never", "OnFailure", "Always")
EXPECTED = {
    "no-history": (True, True, True),
    "alive": (False, False, False),
    "succeed": (False, False, True),
    "failed": (False, True, True),
}


def restarted(container: str, policy: str, *, deleted: bool) -> bool:
    """Upstream's pod status as kjobs' record: `alive` ran (exit 2) and runs again, `failed` exited 3 then 1."""
    pod = make_pod([{"name": name, "image": "x"} for name in CONTAINERS], policy=policy)
    rec = record(
        pod,
        attempt("alive", 0, end=T0 + 1, code=2),
        attempt("alive", 1, start=T0 + 1),
        attempt("succeed", 0, end=T0 + 1, code=0),
        attempt("failed", 0, end=T0 + 1, code=3),
        attempt("failed", 1, start=T0 + 1, end=T0 + 2, code=1),
    )
    if deleted:  # the pod's deletionTimestamp: kjobs' agent kills a deleted pod
        rec.kill = KillRequest(requested_at=T0 + 2, grace_seconds=30)
    return container in plan(rec, T0 + 3).start


@pytest.mark.parametrize("deleted", [pytest.param(False, id="test policies"), pytest.param(True, id="deleted pod")])
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("container", CONTAINERS)
def test_should_container_be_restarted(container: str, policy: str, deleted: bool) -> None:
    expected = EXPECTED[container][POLICIES.index(policy)] and not deleted
    assert restarted(container, policy, deleted=deleted) is expected


STEP = 1.0


def test_slow_backoff() -> None:
    """Each update doubles the delay from the initial one up to the cap (client-go TestSlowBackoff)."""
    cap = 50 * STEP
    entry: BackoffEntry | None = None
    now = T0
    seen = []
    for _ in range(10):
        now += STEP
        seen.append(entry.duration if entry is not None else 0)
        entry = next_backoff(entry, now, now, base=STEP, cap=cap)
    assert seen == [0, 1, 2, 4, 8, 16, 32, 50, 50, 50]


def _to_cap(cap: float) -> tuple[BackoffEntry, float]:
    entry: BackoffEntry | None = None
    now = T0
    for _ in range(int(cap / STEP) + 1):
        now += STEP
        entry = next_backoff(entry, now, now, base=STEP, cap=cap)
    assert entry is not None
    return entry, now


def test_backoff_reset() -> None:
    """In back-off at the cap; an exit older than the back-off no longer waits (client-go TestBackoffReset)."""
    cap = 5 * STEP
    entry, now = _to_cap(cap)
    assert restart_due(entry, now, cap=cap) > now
    last_update = now
    now += 2 * cap + STEP
    assert restart_due(entry, last_update, cap=cap) <= now


def test_backoff_hight_water_mark() -> None:
    """At the cap, an update within 2×cap keeps the cap (client-go TestBackoffHightWaterMark)."""
    cap = 5 * STEP
    entry, now = _to_cap(cap)
    now += cap + STEP
    assert next_backoff(entry, now, now, base=STEP, cap=cap).duration == cap


def test_backoff_gc() -> None:
    """An entry survives cap + step, and is forgotten after 2×cap (client-go TestBackoffGC). kjobs has no GC
    pass: an entry whose last update is older than 2×cap before the exit counts as gone when next read."""
    cap = 5 * STEP
    entry, now = _to_cap(cap)
    last_update = now
    now += cap + STEP
    assert next_backoff(entry, now, now, base=STEP, cap=cap).duration == cap  # kept: still at the cap
    assert restart_due(entry, now, cap=cap) == now + cap
    now += cap + STEP
    assert now - last_update > 2 * cap
    assert restart_due(entry, now, cap=cap) == now  # forgotten: the restart is immediate
    assert next_backoff(entry, now, now, base=STEP, cap=cap).duration == STEP


def _state(status: Obj) -> tuple[str, object]:
    """A container state as (kind, waiting reason or terminated exit code)."""
    (kind, body), *_ = status.items()
    return kind, body.get("reason") if kind == "waiting" else body.get("exitCode")


@pytest.mark.parametrize(
    ("policy", "state", "last_state", "init_state", "init_last_state"),
    [
        pytest.param(
            "Never",
            {"succeed": ("terminated", 0), "failed": ("terminated", 1)},
            {"succeed": ("terminated", 2), "failed": ("terminated", 3)},
            None,
            None,
            id="case 0",  # Never
        ),
        pytest.param(
            "OnFailure",
            {"succeed": ("terminated", 0), "failed": ("waiting", CRASH_LOOP)},
            {"succeed": ("terminated", 2), "failed": ("terminated", 1)},
            None,
            None,
            id="case 1",  # OnFailure
        ),
        pytest.param(
            "Always",
            {"succeed": ("waiting", CRASH_LOOP), "failed": ("waiting", CRASH_LOOP)},
            {"succeed": ("terminated", 0), "failed": ("terminated", 1)},
            # an init container that exited 0 is not restarted even under Always
            {"succeed": ("terminated", 0), "failed": ("waiting", CRASH_LOOP)},
            {"succeed": ("terminated", 2), "failed": ("terminated", 1)},
            id="case 2",  # Always
        ),
    ],
)
def test_generate_api_pod_status_with_different_restart_policies(
    policy: str,
    state: dict[str, tuple[str, object]],
    last_state: dict[str, tuple[str, object]],
    init_state: dict[str, tuple[str, object]] | None,
    init_last_state: dict[str, tuple[str, object]] | None,
) -> None:
    """Upstream's reason cache holds a sync error for both containers; in kjobs a container whose restart waits
    has the kubelet's CrashLoopBackOff, so both are in back-off here (an entry of 10 s from their last exit)."""
    containers = [{"name": "succeed", "image": "x"}, {"name": "failed", "image": "x"}]

    def status_of(pod: Obj, key: str) -> dict[str, Obj]:
        rec = record(
            pod,
            attempt("succeed", 0, end=T0 + 1, code=2),
            attempt("succeed", 1, start=T0 + 1, end=T0 + 2, code=0),
            attempt("failed", 0, end=T0 + 1, code=3),
            attempt("failed", 1, start=T0 + 1, end=T0 + 2, code=1),
        )
        for name in ("succeed", "failed"):
            rec.backoff[name] = BackoffEntry(duration=10, last_update=T0 + 1)
        return {cs["name"]: cs for cs in compute_pod_status(rec, T0 + 3)[key]}

    regular = status_of(make_pod(containers, policy=policy), "containerStatuses")
    assert {name: _state(cs["state"]) for name, cs in regular.items()} == state
    assert {name: _state(cs["lastState"]) for name, cs in regular.items()} == last_state

    init_pod = make_pod([{"name": "main", "image": "x"}], init=containers, policy=policy)
    init = status_of(init_pod, "initContainerStatuses")
    assert {name: _state(cs["state"]) for name, cs in init.items()} == (init_state or state)
    assert {name: _state(cs["lastState"]) for name, cs in init.items()} == (init_last_state or last_state)


@pytest.mark.parametrize("init", [pytest.param(False, id="containers"), pytest.param(True, id="init containers")])
@pytest.mark.parametrize(
    ("attempts", "backing_off", "state", "last_state"),
    [
        pytest.param(
            [attempt("running", 0, end=T0 + 1, code=1), attempt("running", 1, start=T0 + 1)],
            (),
            {"running": ("running", None)},
            {"running": ("terminated", 1)},
            id="case 1",
        ),
        pytest.param(
            [
                attempt("without-reason", 0, end=T0 + 1, code=3),
                attempt("without-reason", 1, start=T0 + 1, end=T0 + 2, code=1),
                attempt("with-reason", 0, end=T0 + 1, code=4),
                attempt("with-reason", 1, start=T0 + 1, end=T0 + 2, code=2),
                attempt("succeed", 0, end=T0 + 1, code=5),
                attempt("succeed", 1, start=T0 + 1, end=T0 + 2, code=0),
            ],
            ("with-reason", "succeed"),
            {"without-reason": ("terminated", 1), "with-reason": ("waiting", CRASH_LOOP), "succeed": ("terminated", 0)},
            {"without-reason": ("terminated", 3), "with-reason": ("terminated", 2), "succeed": ("terminated", 5)},
            id="case 2",
        ),
    ],
)
def test_generate_api_pod_status_with_reason_cache(
    attempts: list[Attempt],
    backing_off: tuple[str, ...],
    state: dict[str, tuple[str, object]],
    last_state: dict[str, tuple[str, object]],
    init: bool,
) -> None:
    """restartPolicy OnFailure. Upstream's "recent start error" (the reason cache) is, in kjobs, a restart that
    waits for its back-off: such a container waits in CrashLoopBackOff with its last exit as lastState; one whose
    restart is due now, or that will not restart (exit 0 under OnFailure), shows its exit. As init containers,
    each row's containers are checked alone (kjobs looks at init containers in order, as they run)."""
    names = list(dict.fromkeys(a.container for a in attempts))
    for name in names:
        mine = [a for a in attempts if a.container == name]
        spec = [{"name": name, "image": "x"}]
        pod = (
            make_pod([{"name": "main", "image": "x"}], init=spec, policy="OnFailure")
            if init
            else make_pod(spec, policy="OnFailure")
        )
        rec = record(pod, *mine)
        if name in backing_off:
            rec.backoff[name] = BackoffEntry(duration=10, last_update=T0 + 1)
        status = compute_pod_status(rec, T0 + 3)
        (cs,) = status["initContainerStatuses" if init else "containerStatuses"]
        assert (_state(cs["state"]), _state(cs["lastState"])) == (state[name], last_state[name])


INITS = ("init1", "init2", "init3")
MAINS = ("foo1", "foo2", "foo3")


@pytest.mark.parametrize(
    ("policy", "init3", "drop", "start", "done"),
    [
        pytest.param("Always", "exited 0", (), MAINS, False, id="initialization completed; start all containers"),
        pytest.param(
            "Always", "none", INITS, ("init1",), False, id="no init containers have been started; start the first one"
        ),
        pytest.param("Always", "running", (), (), False, id="initialization in progress; do nothing"),
        pytest.param(
            "Always",
            "exited 137",
            (),
            ("init3",),
            False,
            id="initialization failed; restart the last init container if RestartPolicy == Always",
        ),
        pytest.param(
            "OnFailure",
            "exited 137",
            (),
            ("init3",),
            False,
            id="initialization failed; restart the last init container if RestartPolicy == OnFailure",
        ),
        pytest.param(
            "Never", "exited 137", (), (), True, id="initialization failed; kill pod if RestartPolicy == Never"
        ),
        pytest.param(
            "Always",
            "running",
            ("init1", "init2"),
            (),
            False,
            id="some of the init container statuses are missing but the last init container is running, "
            "don't restart preceding ones",
        ),
    ],
)
def test_compute_pod_actions_with_init_containers(
    policy: str, init3: str, drop: tuple[str, ...], start: tuple[str, ...], done: bool
) -> None:
    """pkg/kubelet/kuberuntime/kuberuntime_manager_test.go, through `restart.plan`: init1..init3 exited 0 unless the
    row changes init3 or drops statuses (the runtime removed those containers). Sandbox, unknown-state and
    created-state rows are left out (docs/upstream-kubelet.md)."""
    pod = make_pod(
        [{"name": name, "image": "x"} for name in MAINS],
        init=[{"name": name, "image": "x"} for name in INITS],
        policy=policy,
    )
    attempts = [attempt(name, 0, end=T0 + 1, code=0) for name in INITS[:2]]
    if init3 == "running":
        attempts.append(attempt("init3", 0, start=T0 + 1))
    elif init3.startswith("exited"):
        attempts.append(attempt("init3", 0, start=T0 + 1, end=T0 + 2, code=int(init3.split()[1])))
    rec = record(pod, *[a for a in attempts if a.container not in drop])
    decided = plan(rec, T0 + 3)
    assert (decided.start, decided.done) == (start, done)


SIDECARS = ("restartable-init-1", "restartable-init-2", "restartable-init-3")


@pytest.mark.parametrize(
    ("policy", "states", "mains", "start", "done"),
    [
        pytest.param(
            "Always",
            ("running", "running", "running"),
            None,
            MAINS,
            False,
            id="initialization completed; start all containers",
        ),
        pytest.param(
            "Always",
            (None, None, None),
            None,
            SIDECARS[:1],
            False,
            id="no init containers have been started; start the first one",
        ),
        pytest.param(
            "Always",
            ("running", None, None),
            None,
            SIDECARS[1:2],
            False,
            id="restartable init container has started; start the next",
        ),
        pytest.param(
            "Always",
            ("running", "running", None),
            None,
            SIDECARS[2:],
            False,
            id="startupProbe has completed; start the next",
        ),
        pytest.param(
            "Always",
            ("exited 0", "running", "exited 0"),
            None,
            (SIDECARS[0], SIDECARS[2]),
            False,
            id="restart terminated restartable init container and next init container",
        ),
        pytest.param(
            "Always",
            ("exited 0", "running", "running"),
            None,
            (*MAINS, SIDECARS[0]),
            False,
            id="restart terminated restartable init container and regular containers",
        ),
        pytest.param(
            "Never",
            ("running", "running", "exited 137"),
            None,
            SIDECARS[2:],
            False,
            id="initialization failed; restart the last restartable init container even if pod's "
            "RestartPolicy == Never",
        ),
        pytest.param(
            "Never",
            ("running", "running", "exited 137"),
            "running",
            SIDECARS[2:],
            False,
            id="restart restartable init container if regular containers are running even if pod's "
            "RestartPolicy == Never",
        ),
        pytest.param(
            "Never",
            ("running", "running", "running"),
            "exited 0",
            (),
            False,
            id="kill the pod if all main containers succeeded if pod's RestartPolicy == Never",
        ),
        pytest.param(
            "Always",
            (None, None, "running"),
            None,
            (*MAINS, *SIDECARS[:2]),
            False,
            id="some of the init container statuses are missing but the last init container is running, "
            "restart restartable init and regular containers",
        ),
    ],
)
def test_compute_pod_actions_with_restartable_init_containers(
    policy: str, states: tuple[str | None, ...], mains: str | None, start: tuple[str, ...], done: bool
) -> None:
    """kuberuntime_manager_test.go, through `restart.plan`: three sidecars, each running (no startup probe here: a
    running sidecar has started), exited, or without a status. Where upstream kills the pod ("kill the pod if all
    main containers succeeded ...") kjobs' plan says `stop` (its sidecars are terminated, then the pod is done).
    Probe-failure, definition-change, sandbox and unknown-state rows are left out (docs/upstream-kubelet.md)."""
    pod = make_pod(
        [{"name": name, "image": "x"} for name in MAINS],
        init=[{"name": name, "image": "x", "restartPolicy": "Always"} for name in SIDECARS],
        policy=policy,
    )
    attempts = []
    for name, state in zip(SIDECARS, states, strict=True):
        if state == "running":
            attempts.append(attempt(name, 0))
        elif state is not None:
            attempts.append(attempt(name, 0, end=T0 + 1, code=int(state.split()[1])))
    for name in MAINS if mains else ():
        attempts.append(attempt(name, 0, start=T0 + 1, end=None if mains == "running" else T0 + 2, code=0))
    decided = plan(record(pod, *attempts), T0 + 3)
    assert (sorted(decided.start), decided.done) == (sorted(start), done)
    if mains == "exited 0":
        assert decided.stop
