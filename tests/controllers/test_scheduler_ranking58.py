"""A plain pod's node picked from its spec's ranking (`Scheduler.ranked`, docs/simscale58.md) is the node the full
path picks: every node filtered and scored at each attempt.

Both schedulers see the same steps at random — nodes added, changed (allocatable, a PreferNoSchedule taint) and
removed, pods of a few shared templates (some with pod anti-affinity or a preferred node affinity, which must take
the full path) created, scheduled and deleted, a Service in the namespace — and must leave the same bindings,
events, placements, failure cache, nominations and metrics."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.controllers.scheduler import Scheduler
from kjobs.simulate import SimulationOptions, parse_model
from tests.controllers.test_scheduler_attempt54 import Recording, observed
from tests.hypothesis_budget import examples
from tests.simulate.test_shortcuts import FLAKY, final_pods
from tests.support import local_api


class Full(Recording):
    """The scheduler without rankings: every attempt filters and scores every node."""

    ranked = False


TEMPLATES: list[Obj] = [
    {"containers": [{"name": "main", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]},
    {"containers": [{"name": "main", "resources": {"requests": {"cpu": "700m", "memory": "1Gi"}}}]},
    {"containers": [{"name": "main"}]},  # no requests: scored with the non-zero defaults
    {
        "containers": [{"name": "main", "resources": {"requests": {"cpu": "200m"}}}],
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}
                ]
            }
        },
    },
    {
        "containers": [{"name": "main", "resources": {"requests": {"cpu": "300m"}}}],
        "affinity": {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "preference": {"matchExpressions": [{"key": "fast", "operator": "Exists"}]}}
                ]
            }
        },
    },
]


def node(i: int, cpu: str, pods: str, soft_taint: bool, fast: bool) -> Obj:
    labels = {"kubernetes.io/hostname": f"n{i}"}
    if fast:
        labels["fast"] = "yes"
    return {
        "metadata": {"name": f"n{i}", "labels": labels},
        "spec": {"taints": [{"key": "t", "value": "v", "effect": "PreferNoSchedule"}]} if soft_taint else {},
        "status": {
            "allocatable": {"cpu": cpu, "memory": "4Gi", "pods": pods},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(i: int, template: int) -> Obj:
    return {
        "metadata": {
            "name": f"p{i}",
            "namespace": "default",
            "uid": f"uid-{i}",
            "labels": {"app": "a"},
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": TEMPLATES[template],
        "status": {"phase": "Pending"},
    }


Step = tuple[str, int, int, bool, bool]

steps = st.lists(
    st.tuples(
        st.sampled_from(["pod", "pod", "pod", "pod", "delete", "delete", "node", "unnode", "service"]),
        st.integers(0, 5),
        st.integers(0, 99),
        st.booleans(),
        st.booleans(),
    ),
    min_size=1,
    max_size=40,
)


async def _run(kind: type[Recording], start_nodes: int, plan: list[Step]) -> dict[str, Any]:
    clock = FakeClock()
    sched = kind(await local_api(clock), clock=clock)
    sched.setup()
    for i in range(start_nodes):
        sched._on_node(None, node(i, "2", "110", False, i % 2 == 0))
    made: dict[str, Obj] = {}
    for n, (what, a, b, flag, other) in enumerate(plan):
        if what == "pod":
            body = pod(n, b % (len(TEMPLATES) if flag and other else 3))
            made[body["metadata"]["name"]] = body
            sched._on_pod(None, body)
        elif what == "delete" and made:
            name = sorted(made)[b % len(made)]
            sched._on_pod(made.pop(name), None)
        elif what == "node":
            sched._on_node(None, node(a, ["1", "2", "4"][b % 3], ["2", "110"][b % 2], flag and not other, other))
        elif what == "unnode":
            sched._on_node(node(a, "2", "110", False, False), None)
        elif what == "service":
            selector = {"app": "a"} if flag else {}
            sched._on_service(
                None, {"metadata": {"namespace": "default", "name": "web"}, "spec": {"selector": selector}}
            )
        for key in sorted(sched._pending, key=sched._order):
            await sched.schedule_one(key)
    sched.queue.shutdown()
    return observed(sched)


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(0, 6), steps)
def test_the_ranked_choice_is_the_full_paths(start_nodes: int, plan: list[Step]) -> None:
    ranked = asyncio.run(_run(Recording, start_nodes, plan))
    full = asyncio.run(_run(Full, start_nodes, plan))
    assert ranked == full


def test_a_ranking_answers_from_the_changed_nodes_only() -> None:
    """After the first attempt of a spec only the node that took the pod is filtered again, and the pods spread
    as the scores say (the least allocated node first, ties to the first name)."""
    filtered: list[str] = []

    async def scenario() -> list[str]:
        from kjobs.controllers import scheduler

        real = scheduler.filter_node

        def counted(info: Any, at: Any, *args: Any) -> Any:
            filtered.append(at.name)
            return real(info, at, *args)

        clock = FakeClock()
        sched = Recording(await local_api(clock), clock=clock)
        sched.setup()
        for i in range(4):
            sched._on_node(None, node(i, "2", "110", False, False))
        scheduler.filter_node = counted  # type: ignore[assignment]
        try:
            for i in range(6):
                sched._on_pod(None, pod(i, 0))
                await sched.schedule_one(f"default/p{i}")
        finally:
            scheduler.filter_node = real
        sched.queue.shutdown()
        return [entry[1].node_name for entry in sched.spawned if entry[0] == "bind"]

    bound = asyncio.run(scenario())
    assert bound == ["n0", "n1", "n2", "n3", "n0", "n1"]
    assert filtered == ["n0", "n1", "n2", "n3", "n0", "n1", "n2", "n3", "n0"]


def test_rankings_change_no_simulated_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    """`kjobs simulate` with rankings and without: the same Job status, every pod's final state, the trace."""
    options = SimulationOptions(model=parse_model(FLAKY), seed=9, nodes=4)
    status, pods, trace = final_pods(options)
    assert len({p["spec"].get("nodeName") for p in pods.values()}) > 1  # the choice of node mattered
    monkeypatch.setattr(Scheduler, "ranked", False)
    assert final_pods(options) == (status, pods, trace)
