"""Pure preemption rules, table-tested: priority resolution, victim selection, PDBs, candidate choice and the
post-filter messages."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.controllers.preemption import (
    Budget,
    Candidate,
    PriorityClass,
    budgets,
    pick_candidate,
    preempt,
    priority_classes,
    resolve_priority,
    select_victims,
    split_by_budget,
)
from kjobs.controllers.scheduling import FilterStatus, NodeInfo, PodInfo, filter_node, pod_info

NOW = 1_767_225_600.0


def pod(
    name: str,
    *,
    cpu: str = "1",
    priority: int = 0,
    node: str = "",
    started: float | None = None,
    labels: dict[str, str] | None = None,
    never: bool = False,
    deleting: bool = False,
    target: bool = False,
    nominated: str = "",
) -> PodInfo:
    body: Obj = {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": labels or {}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
        "status": {},
    }
    if started is not None:
        from kjobs.api.timeutil import format_time

        body["status"]["startTime"] = format_time(started)
    if deleting:
        body["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:30Z"
    if target:
        body["status"]["conditions"] = [
            {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
        ]
    if nominated:
        body["status"]["nominatedNodeName"] = nominated
    return pod_info(body, priority=priority, preempt_never=never)


def node(name: str, *pods: PodInfo, cpu: str = "4", taint: bool = False) -> NodeInfo:
    info = NodeInfo(name)
    info.set_node(
        {
            "metadata": {"name": name},
            "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}] if taint else []},
            "status": {"allocatable": {"cpu": cpu, "pods": "110"}, "conditions": [{"type": "Ready", "status": "True"}]},
        }
    )
    for p in pods:
        info.add_pod(p)
    return info


def names(c: Candidate | FilterStatus) -> list[str]:
    assert isinstance(c, Candidate), c
    return [p.name for p in c.victims]


# ------------------------------------------------------------------------------------------------ priority


CLASSES, DEFAULT = priority_classes(
    [
        {"metadata": {"name": "high"}, "value": 1000},
        {"metadata": {"name": "batch-low"}, "value": -5, "preemptionPolicy": "Never"},
        {"metadata": {"name": "fallback"}, "value": 7, "globalDefault": True},
        {"metadata": {"name": "broken"}, "value": "x"},
    ]
)


@pytest.mark.parametrize(
    ("spec", "default", "expected"),
    [
        pytest.param({"priorityClassName": "high"}, DEFAULT, (1000, False), id="named-class"),
        pytest.param({"priorityClassName": "batch-low"}, DEFAULT, (-5, True), id="class-policy-never"),
        pytest.param({"priority": 0}, DEFAULT, (7, False), id="global-default"),
        pytest.param({"priority": 0}, None, (0, False), id="no-default"),
        pytest.param({"priority": 42}, DEFAULT, (42, False), id="own-priority-kept"),
        pytest.param({"priorityClassName": "missing", "priority": 3}, DEFAULT, (3, False), id="unknown-class"),
        pytest.param({"priorityClassName": "high", "preemptionPolicy": "Never"}, DEFAULT, (1000, True), id="pod-never"),
    ],
)
def test_resolve_priority(spec: Obj, default: PriorityClass | None, expected: tuple[int, bool]) -> None:
    assert resolve_priority({"spec": spec}, CLASSES, default) == expected


def test_priority_classes_ignore_malformed_and_pick_lowest_default() -> None:
    classes, default = priority_classes(
        [
            {"metadata": {"name": "a"}, "value": 10, "globalDefault": True},
            {"metadata": {"name": "b"}, "value": 5, "globalDefault": True},
            {"metadata": {"name": "c"}, "value": True},
        ]
    )
    assert set(classes) == {"a", "b"} and default == PriorityClass(5, False, True)


# ------------------------------------------------------------------------------------------------ victims


def test_fewest_victims_lowest_priority_first() -> None:
    n = node("n", pod("p1", priority=1), pod("p3", priority=3), pod("p2", priority=2), pod("p0", priority=0))
    assert names(select_victims(pod("hi", cpu="2", priority=10), n, reserved=[], pdbs=[], now=NOW)) == ["p1", "p0"]


def test_equal_priority_evicts_the_most_recently_started() -> None:
    n = node("n", pod("old", cpu="2", started=NOW - 100), pod("new", cpu="2", started=NOW - 10))
    assert names(select_victims(pod("hi", cpu="2", priority=1), n, reserved=[], pdbs=[], now=NOW)) == ["new"]


def test_higher_or_equal_priority_pods_are_never_victims() -> None:
    n = node("n", pod("same", cpu="2", priority=5), pod("above", cpu="2", priority=9))
    status = select_victims(pod("p", cpu="1", priority=5), n, reserved=[], pdbs=[], now=NOW)
    assert status == FilterStatus(("No preemption victims found for incoming pod",), False)


def test_node_that_cannot_fit_even_empty_reports_its_reasons() -> None:
    n = node("n", pod("low", cpu="1"), cpu="2")
    status = select_victims(pod("big", cpu="3", priority=5), n, reserved=[], pdbs=[], now=NOW)
    assert status == FilterStatus(("Insufficient cpu",), True)


def test_reserved_room_of_nominated_pods_counts() -> None:
    n = node("n", pod("low", cpu="2"), pod("low2", cpu="2"))
    hi = pod("hi", cpu="2", priority=5)
    assert names(select_victims(hi, n, reserved=[], pdbs=[], now=NOW)) == ["low2"]
    assert names(select_victims(hi, n, reserved=[pod("other", cpu="2", priority=9)], pdbs=[], now=NOW)) == [
        "low",
        "low2",
    ]


def with_port(info: PodInfo, port: int = 8080) -> PodInfo:
    body = info.pod
    body["spec"]["containers"][0]["ports"] = [{"containerPort": port, "hostPort": port}]
    return pod_info(body, priority=info.priority, preempt_never=False)


def test_victims_free_a_host_port() -> None:
    holder = with_port(pod("holder", cpu="100m"))
    n = node("n", holder, pod("busy", cpu="1"))
    assert names(select_victims(with_port(pod("hi", cpu="1", priority=5)), n, reserved=[], pdbs=[], now=NOW)) == [
        "holder"
    ]


def test_a_port_held_by_a_more_important_pod_cannot_be_freed() -> None:
    n = node("n", with_port(pod("holder", cpu="100m", priority=9)), pod("low", cpu="1"))
    status = select_victims(with_port(pod("hi", cpu="1", priority=5)), n, reserved=[], pdbs=[], now=NOW)
    assert status == FilterStatus(("node(s) didn't have free ports for the requested pod ports",), True)


def pdb(allowed: int, disrupted: tuple[str, ...] = (), selector: Obj | None = None) -> Obj:
    return {
        "metadata": {"name": "budget", "namespace": "default"},
        "spec": {"selector": selector if selector is not None else {"matchLabels": {"app": "db"}}},
        "status": {"disruptionsAllowed": allowed, "disruptedPods": {d: "2026-01-01T00:00:00Z" for d in disrupted}},
    }


def test_pdb_protected_pods_are_reprieved_first() -> None:
    protected = pod("db", cpu="2", priority=0, labels={"app": "db"}, started=NOW - 5)
    plain = pod("web", cpu="2", priority=0, started=NOW - 500)
    n = node("n", protected, plain)
    result = select_victims(pod("hi", cpu="2", priority=5), n, reserved=[], pdbs=budgets([pdb(0)]), now=NOW)
    assert isinstance(result, Candidate) and names(result) == ["web"] and result.pdb_violations == 0


def test_pdb_violation_counted_when_unavoidable() -> None:
    n = node("n", pod("db", cpu="4", labels={"app": "db"}))
    result = select_victims(pod("hi", cpu="2", priority=5), n, reserved=[], pdbs=budgets([pdb(0)]), now=NOW)
    assert isinstance(result, Candidate) and names(result) == ["db"] and result.pdb_violations == 1


@pytest.mark.parametrize(
    ("budget", "violating"),
    [
        pytest.param(pdb(1), ["b"], id="one-allowed"),
        pytest.param(pdb(0, disrupted=("a",)), ["b"], id="already-disrupted-not-counted"),
        pytest.param(pdb(0, selector={}), [], id="empty-selector-matches-nothing"),
        pytest.param(pdb(2), [], id="enough"),
    ],
)
def test_split_by_budget(budget: Obj, violating: list[str]) -> None:
    pods = [pod("a", labels={"app": "db"}), pod("b", labels={"app": "db"}), pod("c")]
    bad, good = split_by_budget(pods, budgets([budget]))
    assert [p.name for p in bad] == violating
    assert len(bad) + len(good) == 3


def test_budgets_skip_invalid_selectors() -> None:
    broken = pdb(0, selector={"matchExpressions": [{"key": "a", "operator": "Bogus"}]})
    assert budgets([broken]) == []
    assert isinstance(budgets([pdb(0)])[0], Budget)


# ------------------------------------------------------------------------------------------------ candidate choice


def cand(node_name: str, *victims: PodInfo, violations: int = 0) -> Candidate:
    return Candidate(node_name, victims, violations)


@pytest.mark.parametrize(
    ("candidates", "expected"),
    [
        pytest.param(
            [cand("a", pod("x"), violations=1), cand("b", pod("y"), pod("z"))], "b", id="fewest-pdb-violations"
        ),
        pytest.param(
            [cand("a", pod("x", priority=5)), cand("b", pod("y", priority=3), pod("z", priority=3))],
            "b",
            id="lowest-top-priority",
        ),
        pytest.param(
            [
                cand("a", pod("x", priority=3), pod("w", priority=2)),
                cand("b", pod("y", priority=3), pod("z", priority=1)),
            ],
            "b",
            id="lowest-priority-sum",
        ),
        pytest.param([cand("a", pod("x"), pod("w")), cand("b", pod("y"))], "b", id="fewest-victims"),
        pytest.param(
            [cand("a", pod("x", started=NOW - 100)), cand("b", pod("y", started=NOW - 10))], "b", id="latest-start"
        ),
        pytest.param([cand("b", pod("x")), cand("a", pod("y"))], "a", id="name-breaks-ties"),
    ],
)
def test_pick_candidate(candidates: list[Candidate], expected: str) -> None:
    assert pick_candidate(candidates, NOW).node == expected


# ------------------------------------------------------------------------------------------------ post-filter


def run(preemptor: PodInfo, nodes: list[NodeInfo], nominated: dict[str, dict[str, PodInfo]] | None = None) -> Any:
    statuses = {n.name: s for n in nodes if (s := filter_node(preemptor, n)) is not None}
    return preempt(preemptor, nodes, statuses, nominated=nominated or {}, pdbs=[], now=NOW)


def test_preempts_on_the_best_node() -> None:
    nodes = [node("a", pod("a1", cpu="4", priority=3)), node("b", pod("b1", cpu="4", priority=1))]
    result = run(pod("hi", cpu="2", priority=10), nodes)
    assert result.candidate is not None and result.candidate.node == "b" and result.message == ""


def test_never_policy_is_not_eligible() -> None:
    result = run(pod("hi", cpu="2", priority=10, never=True), [node("a", pod("a1", cpu="4"))])
    assert result.candidate is None and result.message == "preemption: not eligible due to preemptionPolicy=Never."
    assert not result.clear_nomination


def test_waits_for_victims_already_terminating_on_the_nominated_node() -> None:
    victim = pod("a1", cpu="4", deleting=True, target=True)
    result = run(pod("hi", cpu="2", priority=10, nominated="a"), [node("a", victim)])
    assert result.message == "preemption: not eligible due to a terminating pod on the nominated node."


def test_no_helpful_node_clears_the_nomination() -> None:
    nodes = [node("a", taint=True), node("b", pod("b1", cpu="4", priority=50))]
    result = run(pod("hi", cpu="2", priority=10, nominated="b"), nodes)
    assert result.candidate is None and result.clear_nomination
    assert result.message == (
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling."
    )


def test_nothing_resolvable_says_not_helpful_for_every_node() -> None:
    result = run(pod("hi", priority=10), [node("a", taint=True), node("b", taint=True)])
    assert result.message == "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
