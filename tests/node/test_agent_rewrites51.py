"""Stop 51: repeated reads of the same pod folded into one, each beside the form it replaced.

`NodeAgent._settled` reads the new version's metadata once (it called `_uid` twice, `_key` and `_deleting`);
`PodRecord.any_running` is a loop (it was `any()` over a generator); `compute_pod_status` sorts the container
statuses by name only when there are two or more (it was `sorted` with a key function always), and `get_phase`
asks `container_should_restart` through a module function (it made a closure every call: the upstream phase table,
tests/node/test_upstream_kubelet_phase.py, holds it); `Supervisor.update_pod` calls `sync` only for a pod that is
not over (`sync` returned at once for the others)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.clock import FakeClock
from kjobs.node.agent import NodeAgent, _deleting, _key, _uid
from kjobs.node.observations import Attempt, PodRecord
from kjobs.node.podstatus import compute_pod_status
from kjobs.node.sim_runtime import Outcome, SimulatedRuntime
from tests.hypothesis_budget import examples
from tests.node.helpers import T0, attempt, make_pod


def old_settled(agent: Any, old: dict[str, Any], new: dict[str, Any]) -> bool:
    uid = _uid(new)
    if _uid(old) != uid or agent._uid_of.get(_key(new)) != uid or _deleting(new):
        return False
    handle = agent.runtime.get(uid)
    if handle is None or not handle.terminal or uid in agent._env_refs:
        return False
    written = agent._written.get(uid)
    return written is not None and (written is handle.status or written == handle.status)


TEXT = st.one_of(st.none(), st.sampled_from(["", "u1", "u2", "ns", "p"]), st.integers(0, 2))
META = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "uid": TEXT,
            "namespace": TEXT,
            "name": TEXT,
            "deletionTimestamp": st.sampled_from([None, "", "2026-01-01T00:00:00Z"]),
        },
    ),
)
STATUS = st.sampled_from([{"phase": "Succeeded"}, {"phase": "Failed"}, {}])


@settings(max_examples=examples(1500), deadline=None)
@given(
    old=META,
    new=META,
    tracked=st.sampled_from(["right", "other", "none"]),
    handle=st.one_of(st.none(), st.tuples(st.booleans(), STATUS)),
    written=st.sampled_from(["same", "equal", "other", "none"]),
    env=st.booleans(),
)
def test_settled_answers_as_before(old: Any, new: Any, tracked: str, handle: Any, written: str, env: bool) -> None:
    pods = [{} if meta is None else {"metadata": meta} for meta in (old, new)]
    uid = _uid(pods[1])
    uid_of = {"right": {_key(pods[1]): uid}, "other": {_key(pods[1]): uid + "x"}, "none": {}}[tracked]
    runtime_handle = None if handle is None else SimpleNamespace(terminal=handle[0], status=handle[1])
    status = {} if handle is None else handle[1]
    last = {"same": status, "equal": dict(status), "other": {"phase": "Running"}, "none": None}[written]
    agent = SimpleNamespace(
        _uid_of=uid_of,
        runtime=SimpleNamespace(get=lambda u: runtime_handle if u == uid else None),
        _env_refs={uid} if env else set(),
        _written={} if last is None else {uid: last},
    )
    assert NodeAgent._settled(agent, *pods) is old_settled(agent, *pods)  # type: ignore[arg-type]


@settings(max_examples=examples(500), deadline=None)
@given(ends=st.lists(st.lists(st.one_of(st.none(), st.floats(0, 5)), max_size=3), max_size=4))
def test_any_running_as_before(ends: list[list[float | None]]) -> None:
    record = PodRecord(pod=make_pod(), admitted_at=T0)
    for i, runs in enumerate(ends):
        record.attempts[f"c{i}"] = [
            Attempt(container=f"c{i}", number=n, container_id=f"x{i}{n}", started_at=T0, finished_at=end)
            for n, end in enumerate(runs)
        ]
    assert record.any_running() is any(a[-1].running for a in record.attempts.values() if a)


def test_container_statuses_come_sorted_by_name() -> None:
    names = ["zeta", "alpha", "mid"]
    pod = make_pod([{"name": n, "image": "busybox"} for n in names])
    record = PodRecord(pod=pod, admitted_at=T0)
    for n in names:
        record.attempts[n] = [attempt(n, end=T0 + 1, code=0)]
    status = compute_pod_status(record, T0 + 2)
    assert [s["name"] for s in status["containerStatuses"]] == sorted(names)
    one = PodRecord(pod=make_pod(), admitted_at=T0)
    assert [s["name"] for s in compute_pod_status(one, T0)["containerStatuses"]] == ["main"]


@pytest.mark.parametrize("duration", [0.0, 5.0])
def test_update_pod_syncs_a_live_pod_and_leaves_one_that_is_over(duration: float) -> None:
    """`Supervisor.update_pod` calls `sync` only for a pod that is not over: `sync` returns at once for a terminal
    handle, so the pod that ended (here, a container of 0 s) gets nothing more either way; a running one is planned
    and published again with the new version."""
    clock = FakeClock(T0)
    runtime = SimulatedRuntime(clock=clock, outcome=lambda pod, container, n: Outcome(duration=duration))
    pod = make_pod()
    handle = runtime.admit(pod)
    assert handle.terminal is (duration == 0.0)
    synced: list[str] = []
    plain_sync = runtime.sync

    def spy(uid: str) -> None:
        synced.append(uid)
        plain_sync(uid)

    runtime.sync = spy  # type: ignore[method-assign]
    status = handle.status
    newer = {**pod, "metadata": {**pod["metadata"], "labels": {"a": "b"}}}
    runtime.update_pod(newer)
    assert runtime.records["uid-1"].pod is newer
    assert synced == ([] if handle.terminal else ["uid-1"])
    assert handle.status == status
