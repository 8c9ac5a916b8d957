"""Properties of the pure scheduling rules over random nodes and pods (hypothesis): placements never overcommit
a node, and preemption removes only lower-priority pods, enough of them, and none needlessly."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.controllers.preemption import Candidate, budgets, preempt, select_victims
from kjobs.controllers.scheduling import (
    NodeInfo,
    PodInfo,
    Resources,
    filter_node,
    insufficient,
    node_scores,
    pod_info,
    select_host,
    shared_spec_info,
)
from tests.hypothesis_budget import examples

NOW = 1_767_225_600.0

cpus = st.integers(min_value=0, max_value=4000)
mems = st.integers(min_value=0, max_value=4096)


def make_pod(i: int, cpu: int, mem: int, priority: int, node: str = "", app: str = "") -> PodInfo:
    body: Obj = {
        "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}", "labels": {"app": app} if app else {}},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{mem}Mi"}}}],
        },
        "status": {"startTime": "2026-01-01T00:00:00Z"} if node else {},
    }
    return pod_info(body, priority=priority, preempt_never=False)


def make_node(name: str, cpu: int, mem: int, pods: int) -> NodeInfo:
    info = NodeInfo(name)
    info.set_node(
        {
            "metadata": {"name": name},
            "status": {
                "allocatable": {"cpu": f"{cpu}m", "memory": f"{mem}Mi", "pods": str(pods)},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
    )
    return info


def fits(pod: PodInfo, node: NodeInfo, without: set[str]) -> bool:
    requested = Resources()
    count = 0
    for other in node.pods.values():
        if other.uid not in without:
            requested.add(other.requests)
            count += 1
    return not insufficient(pod.requests, node.allocatable, node.allowed_pods, requested, count)


@settings(max_examples=examples(150), deadline=None)
@given(
    nodes=st.lists(st.tuples(cpus, mems, st.integers(min_value=1, max_value=6)), min_size=1, max_size=4),
    pods=st.lists(st.tuples(cpus, mems), min_size=1, max_size=25),
)
def test_assumed_placements_never_exceed_allocatable(
    nodes: list[tuple[int, int, int]], pods: list[tuple[int, int]]
) -> None:
    cluster = [make_node(f"n{i}", cpu, mem, count) for i, (cpu, mem, count) in enumerate(nodes)]
    for i, (cpu, mem) in enumerate(pods):
        p = make_pod(i, cpu, mem, 0)
        feasible = [n for n in cluster if filter_node(p, n) is None]
        if not feasible:
            continue
        chosen = next(n for n in cluster if n.name == select_host(p, feasible))
        chosen.add_pod(p)
    for n in cluster:
        assert len(n.pods) <= n.allowed_pods
        total = Resources()
        for p in n.pods.values():
            total.add(p.requests)
        assert total.milli_cpu <= n.allocatable.milli_cpu and total.memory <= n.allocatable.memory


@settings(max_examples=examples(200), deadline=None)
@given(
    bound=st.lists(
        st.tuples(cpus, mems, st.integers(min_value=0, max_value=5), st.sampled_from(["", "db"])), max_size=8
    ),
    want=st.tuples(cpus, mems, st.integers(min_value=0, max_value=6)),
    allowed=st.integers(min_value=0, max_value=2),
)
def test_victims_are_lower_priority_sufficient_and_each_necessary(
    bound: list[tuple[int, int, int, str]], want: tuple[int, int, int], allowed: int
) -> None:
    node = make_node("n", 4000, 4096, 10)
    for i, (cpu, mem, prio, app) in enumerate(bound):
        node.add_pod(make_pod(i, cpu, mem, prio, node="n", app=app))
    preemptor = make_pod(999, *want)
    pdbs = budgets(
        [
            {
                "metadata": {"namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": "db"}}},
                "status": {"disruptionsAllowed": allowed},
            }
        ]
    )
    outcome = select_victims(preemptor, node, reserved=[], pdbs=pdbs, now=NOW)
    if not isinstance(outcome, Candidate):
        lower = {p.uid for p in node.pods.values() if p.priority < preemptor.priority}
        # Either nothing can be removed, or even removing every lower-priority pod does not help, or it already fits.
        assert not lower or not fits(preemptor, node, lower) or fits(preemptor, node, set())
        return
    victims = {v.uid for v in outcome.victims}
    assert all(v.priority < preemptor.priority for v in outcome.victims)
    assert fits(preemptor, node, victims)
    for v in victims:
        assert not fits(preemptor, node, victims - {v}), "a victim could have stayed"
    assert outcome.pdb_violations <= sum(1 for v in outcome.victims if v.labels.get("app") == "db")


@settings(max_examples=examples(100), deadline=None)
@given(
    layout=st.lists(
        st.lists(st.tuples(cpus, st.integers(min_value=0, max_value=5)), max_size=5), min_size=1, max_size=4
    ),
    want=st.tuples(cpus, st.integers(min_value=0, max_value=6)),
)
def test_preempt_picks_a_node_where_the_pod_then_fits(
    layout: list[list[tuple[int, int]]], want: tuple[int, int]
) -> None:
    cluster = []
    uid = 0
    for i, pods in enumerate(layout):
        n = make_node(f"n{i}", 4000, 4096, 10)
        for cpu, prio in pods:
            uid += 1
            n.add_pod(make_pod(uid, cpu, 0, prio, node=n.name))
        cluster.append(n)
    preemptor = make_pod(999, want[0], 0, want[1])
    statuses = {n.name: s for n in cluster if (s := filter_node(preemptor, n)) is not None}
    if len(statuses) < len(cluster):
        return  # it fits somewhere: no preemption
    result = preempt(preemptor, cluster, statuses, nominated={}, pdbs=[], now=NOW)
    if result.candidate is None:
        assert result.message.startswith("preemption: 0/")
        return
    target = next(n for n in cluster if n.name == result.candidate.node)
    assert fits(preemptor, target, {v.uid for v in result.candidate.victims})


@settings(max_examples=examples(150), deadline=None)
@given(
    nodes=st.lists(st.tuples(cpus, mems, st.integers(min_value=1, max_value=6)), min_size=2, max_size=5),
    steps=st.lists(
        st.tuples(st.integers(min_value=0, max_value=2), st.booleans(), st.integers(min_value=0, max_value=30)),
        min_size=1,
        max_size=40,
    ),
)
def test_memoised_node_answers_equal_fresh_ones(
    nodes: list[tuple[int, int, int]], steps: list[tuple[int, bool, int]]
) -> None:
    """Pods of three templates (one shared `SpecInfo` each) placed and removed at random: every filter status,
    score and chosen node equals what the same pod without a memo (`spec=None`) gets."""
    cluster = [make_node(f"n{i}", cpu, mem, count) for i, (cpu, mem, count) in enumerate(nodes)]
    shapes = [(100, 64), (700, 900), (0, 0)]
    placed: list[tuple[NodeInfo, str]] = []
    for i, (shape, remove, which) in enumerate(steps):
        if remove and placed:
            node, uid = placed.pop(which % len(placed))
            node.remove_pod(uid)
            continue
        cpu, mem = shapes[shape]
        body: Obj = {
            "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
            "spec": {
                "containers": [{"name": "c", "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{mem}Mi"}}}]
            },
        }
        pod = pod_info(body, priority=0, preempt_never=False, spec=shared_spec_info(body["spec"]))
        bare = dataclasses.replace(pod, spec=None)
        for _ in range(2):  # the second round answers from the memo
            assert [filter_node(pod, n) for n in cluster] == [filter_node(bare, n) for n in cluster]
            feasible = [n for n in cluster if filter_node(pod, n) is None]
            assert node_scores(pod, feasible) == node_scores(bare, feasible)
        if feasible:
            chosen = next(n for n in cluster if n.name == select_host(pod, feasible))
            assert chosen.name == select_host(bare, feasible)
            chosen.add_pod(dataclasses.replace(pod, node_name=chosen.name))
            placed.append((chosen, pod.uid))
