"""Properties of the shared runtime rules over random pods and container outcomes (virtual time)."""

from __future__ import annotations

import asyncio
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.node.sim_runtime import Outcome, SimulatedRuntime
from tests.hypothesis_budget import examples
from tests.node.helpers import T0, make_pod

outcomes = st.lists(
    st.builds(
        Outcome,
        duration=st.sampled_from([0.0, 0.5, 3.0, 40.0]),
        exit_code=st.sampled_from([0, 0, 1, 2]),
        oom=st.booleans(),
        term_delay=st.sampled_from([0.0, 1.0, 100.0]),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=examples(100), deadline=None)
@given(
    policy=st.sampled_from(["Never", "OnFailure", "Always"]),
    n_init=st.integers(0, 2),
    n_containers=st.integers(1, 3),
    script=outcomes,
    kill_at=st.one_of(st.none(), st.sampled_from([0.0, 2.0, 30.0, 500.0])),
)
def test_runtime_invariants(
    policy: str, n_init: int, n_containers: int, script: list[Outcome], kill_at: float | None
) -> None:
    clock = FakeClock(T0)
    starts: list[tuple[str, int, float]] = []
    statuses: list[Obj] = []

    def outcome(pod: Obj, container: Obj, attempt: int) -> Outcome:
        starts.append((container["name"], attempt, clock.now()))
        return script[len(starts) % len(script)]

    runtime = SimulatedRuntime(
        clock=clock, outcome=outcome, on_status=lambda uid, s: statuses.append(s), backoff_base=1, backoff_cap=8
    )
    init = [{"name": f"init-{i}", "image": "x"} for i in range(n_init)]
    containers = [{"name": f"c-{i}", "image": "x"} for i in range(n_containers)]
    handle = asyncio.run(runtime.run_pod(make_pod(containers, init=init or None, policy=policy)))
    horizon = T0 + 1000
    if kill_at is not None:
        runtime.run_until_idle(clock, limit=T0 + kill_at)
        clock.set(T0 + kill_at)
        asyncio.run(runtime.kill_pod(handle.uid, grace_seconds=10))
    runtime.run_until_idle(clock, limit=horizon)

    names = {c["name"] for c in containers}
    for status in statuses:
        assert {s["name"] for s in status["containerStatuses"]} == names
        assert status["phase"] in ("Pending", "Running", "Succeeded", "Failed")
    phases = [s["phase"] for s in statuses]
    for earlier, later in itertools.pairwise(phases):
        if earlier in ("Succeeded", "Failed"):
            assert later == earlier, phases
    # Init containers run strictly one after another and before any regular container.
    init_names = [c["name"] for c in init]
    order = [name for name, _, _ in starts]
    first_regular = next((i for i, name in enumerate(order) if name in names), len(order))
    assert all(name in init_names for name in order[:first_regular])
    assert all(name in names for name in order[first_regular:])
    if policy == "Never":
        assert len(order) == len(set(order))
    if kill_at is None and policy == "Always":
        assert not handle.terminal
    if handle.terminal:
        final = handle.status
        assert final["phase"] in ("Succeeded", "Failed")
        for cs in final["containerStatuses"] + final.get("initContainerStatuses", []):
            assert "running" not in cs["state"]
        if final["phase"] == "Succeeded":
            assert all(cs["state"]["terminated"]["exitCode"] == 0 for cs in final["containerStatuses"])
    if kill_at is not None:
        assert handle.terminal
        assert not any(starts_at > T0 + kill_at for _, _, starts_at in starts)
