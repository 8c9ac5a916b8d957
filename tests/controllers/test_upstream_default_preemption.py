"""Upstream rows of DefaultPreemption (pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go),
run through kjobs' pure preemption (`kjobs.controllers.preemption`).

Upstream builds a scheduler framework over a snapshot of nodes and pods and calls one step of the plugin:
`PostFilter` (the whole post-filter: eligibility, dry run, choice, the status message), `DryRunPreemption` (each
node's victims), `SelectCandidate` (the node chosen), `PodEligibleToPreemptOthers`, `Preempt`. kjobs' steps are
`preempt` (PostFilter / Preempt), `select_victims` per node (DryRunPreemption's per-node `SelectVictimsOnNode`) and
`pick_candidate` inside `preempt` (SelectCandidate); the rows give them the same nodes and pods (`st.MakeNode()`,
`st.MakePod()`: capacity and allocatable alike, 32 pods unless the row says otherwise). Each row's id is its upstream
name. Rows left out (test plugins, extenders, the candidate-count arguments, alpha PodGroup rows) and why:
docs/upstream-scheduler.md, "DefaultPreemption".
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.controllers.interpod import prefilter
from kjobs.controllers.preemption import Candidate, budgets, preempt, select_victims
from kjobs.controllers.scheduling import FilterStatus, NodeInfo, PodInfo, filter_node, pod_info

NOW = 1_767_225_600.0
"""The scheduler's clock: pods without a start time count as started now (`util.GetPodStartTime`)."""

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}
MAX_INT32 = 2**31 - 1
LABEL_VIOLATING = "test.kubernetes.io/is-violating-pdb"

_UIDS = itertools.count()


def epoch(n: int) -> str:
    """Upstream's `epochTimeN` is `time.Unix(0, N)`, N nanoseconds apart; a pod's startTime travels in whole
    seconds, so here they are N seconds apart — the same order."""
    return format_time(float(n))


def mk_pod(
    name: str,
    *,
    namespace: str = "",
    node: str = "",
    priority: int = 0,
    req: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    start: str | None = None,
    anti_exists: tuple[str, str] | None = None,
    spread: Sequence[tuple[int, str]] = (),
    never: bool = False,
    nominated: str = "",
    terminating: bool = False,
    preemption_target: bool = False,
) -> PodInfo:
    """`st.MakePod()`: `req` is one container's requests; `anti_exists` a required anti-affinity term
    (`PodAntiAffinityExists(key, topologyKey)`); `spread` DoNotSchedule constraints (maxSkew, topologyKey)
    selecting pods that have the `foo` label."""
    container: Obj = {"name": "c", "image": "pause"}
    if req is not None:
        container["resources"] = {"requests": dict(req)}
    spec: Obj = {"containers": [container], "priority": priority}
    if node:
        spec["nodeName"] = node
    if never:
        spec["preemptionPolicy"] = "Never"
    if anti_exists is not None:
        key, topology = anti_exists
        term = {"labelSelector": {"matchExpressions": [{"key": key, "operator": "Exists"}]}, "topologyKey": topology}
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    if spread:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": skew,
                "topologyKey": key,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
            }
            for skew, key in spread
        ]
    meta: Obj = {"name": name, "namespace": namespace, "uid": f"uid-{next(_UIDS)}", "labels": dict(labels or {})}
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:30Z"
    status: Obj = {}
    if start is not None:
        status["startTime"] = start
    if nominated:
        status["nominatedNodeName"] = nominated
    if preemption_target:
        status["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    return pod_info({"metadata": meta, "spec": spec, "status": status}, priority=priority, preempt_never=never)


def mk_node(name: str, capacity: Mapping[str, str] | None = None) -> NodeInfo:
    """`st.MakeNode().Name(...).Capacity(...)`: 32 pods unless `capacity` says otherwise. A name `a/zone1/region1`
    is the node `a` with labels hostname=a, zone=zone1, region=region1, as the DryRun and Preempt rows build them."""
    parts = name.split("/")
    labels = dict(zip(("hostname", "zone", "region"), parts, strict=False)) if "/" in name else {}
    allocatable = {"pods": "32", **(capacity or {})}
    info = NodeInfo(parts[0])
    info.set_node(
        {
            "metadata": {"name": parts[0], "labels": labels},
            "spec": {},
            "status": {
                "allocatable": allocatable,
                "capacity": allocatable,
                # kjobs' scheduler reads a node that is not Ready as tainted not-ready (the taint the node
                # lifecycle controller would add); upstream's snapshot nodes carry no conditions and no taints.
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
    )
    return info


def snapshot(nodes: Sequence[NodeInfo], pods: Sequence[PodInfo]) -> list[NodeInfo]:
    """`internalcache.NewSnapshot(pods, nodes)`: each pod counted on its node."""
    by_name = {n.name: n for n in nodes}
    for p in pods:
        by_name[p.node_name].add_pod(p)
    return list(nodes)


def pdb(name: str, namespace: str, match: Mapping[str, str], allowed: int = 0, disrupted: Sequence[str] = ()) -> Obj:
    status: Obj = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = {p: "2026-01-01T00:00:00Z" for p in disrupted}
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": dict(match)}},
        "status": status,
    }


def filtered(preemptor: PodInfo, nodes: Sequence[NodeInfo]) -> dict[str, FilterStatus]:
    """What the scheduling cycle's Filter phase hands PostFilter: every node's failure."""
    cycle = prefilter(preemptor, nodes, {})
    statuses: dict[str, FilterStatus] = {}
    for n in nodes:
        status = filter_node(preemptor, n, (), cycle)
        assert status is not None, f"{preemptor.name} fits {n.name}: nothing to preempt"
        statuses[n.name] = status
    return statuses


# ------------------------------------------------------------------------------------------------ TestPostFilter

UNSCHED = FilterStatus((), True)  # fwk.NewStatus(fwk.Unschedulable)
UNRESOLVABLE = FilterStatus((), False)  # fwk.NewStatus(fwk.UnschedulableAndUnresolvable)

POST_FILTER: list[Any] = [
    pytest.param(
        mk_pod("p", namespace="default", priority=HIGH),
        [mk_pod("p1", namespace="default", node="node1")],
        [],
        [mk_node("node1", ONE_POD)],
        {"node1": UNSCHED},
        "node1",
        "",
        id="pod with higher priority can be made schedulable",
    ),
    pytest.param(
        mk_pod("p", namespace="default"),
        [mk_pod("p1", namespace="default", node="node1")],
        [],
        [mk_node("node1", ONE_POD)],
        {"node1": UNSCHED},
        "",
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
        id="pod with tied priority is still unschedulable",
    ),
    pytest.param(
        mk_pod("p", namespace="default", priority=HIGH),
        [mk_pod("p1", namespace="default", node="node1")],
        [],
        [mk_node("node1", ONE_POD)],
        {"node1": UNRESOLVABLE},
        "",
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        id="preemption should respect filteredNodesStatuses",
    ),
    pytest.param(
        mk_pod("p", namespace="default", priority=HIGH),
        [mk_pod("p1", namespace="default", node="node1")],
        [],
        [mk_node("node1", ONE_POD)],
        {},
        "",
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        id="preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
    ),
    pytest.param(
        mk_pod("p", namespace="default", priority=MID),
        [
            mk_pod("p1", namespace="default", node="node1", priority=HIGH),
            mk_pod("p2", namespace="default", node="node2", priority=LOW),
        ],
        [],
        [mk_node("node1", ONE_POD), mk_node("node2", ONE_POD)],
        {"node1": UNSCHED, "node2": UNSCHED},
        "node2",
        "",
        id="pod can be made schedulable on one node",
    ),
    pytest.param(
        mk_pod("p", namespace="default", priority=VERY_HIGH),
        [
            mk_pod("p1", namespace="default", node="node1", priority=HIGH, labels={LABEL_VIOLATING: "non-violating"}),
            mk_pod("p2", namespace="default", node="node1", priority=LOW, labels={LABEL_VIOLATING: "violating"}),
            mk_pod("p3", namespace="default", node="node2", priority=MID, labels={LABEL_VIOLATING: "violating"}),
        ],
        [
            pdb("violating-pdb", "default", {LABEL_VIOLATING: "violating"}),  # minAvailable 100%
            pdb("non-violating-pdb", "default", {LABEL_VIOLATING: "non-violating"}, allowed=MAX_INT32),
        ],
        [mk_node("node1", ONE_POD), mk_node("node2", ONE_POD)],
        {"node1": UNSCHED, "node2": UNSCHED},
        "node2",
        "",
        id="pod can be made schedulable on minHighestPriority node",
    ),
    pytest.param(
        mk_pod("p", namespace="default", priority=HIGH, req=LARGE),
        [mk_pod("p1", namespace="default", node="node1"), mk_pod("p2", namespace="default", node="node2")],
        [],
        [mk_node("node1", NODE_RES), mk_node("node2", NODE_RES)],
        {"node1": UNSCHED, "node2": UNSCHED},
        "",
        "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
        id="no candidate nodes found, no enough resource after removing low priority pods",
    ),
    pytest.param(
        mk_pod("p", namespace="default", priority=HIGH, req=LARGE),
        [
            mk_pod("p1", namespace="default", node="node1", priority=HIGH),
            mk_pod("p2", namespace="default", node="node2"),
            mk_pod("p3", namespace="default", node="node3", priority=HIGH),
        ],
        [],
        [mk_node("node1", ONE_POD), mk_node("node2", NODE_RES), mk_node("node3", ONE_POD)],
        {"node1": UNSCHED, "node2": UNSCHED, "node3": UNSCHED},
        "",
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod.",
        id="no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
    ),
    pytest.param(
        mk_pod("p", namespace="default", priority=HIGH, req=LARGE),
        [mk_pod("p1", namespace="default", node="node1"), mk_pod("p2", namespace="default", node="node2")],
        [],
        [
            mk_node("node1", NODE_RES),
            mk_node("node2", NODE_RES),
            mk_node("node3", NODE_RES),
            mk_node("node4", NODE_RES),
        ],
        {"node1": UNSCHED, "node2": UNSCHED, "node4": UNRESOLVABLE},
        "",
        "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling.",
        id=(
            "no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes "
            "and 2 nodes don't have enough CPU resource"
        ),
    ),
]


@pytest.mark.parametrize(("pod", "pods", "pdbs", "nodes", "statuses", "nominated", "message"), POST_FILTER)
def test_post_filter(
    pod: PodInfo,
    pods: list[PodInfo],
    pdbs: list[Obj],
    nodes: list[NodeInfo],
    statuses: dict[str, FilterStatus],
    nominated: str,
    message: str,
) -> None:
    """`PostFilter`: Success with the nominated node, or Unschedulable with the message kube-scheduler puts after
    the Filter failures in the pod's PodScheduled condition (and the FailedScheduling event)."""
    nodes = snapshot(nodes, pods)
    result = preempt(pod, nodes, statuses, nominated={}, pdbs=budgets(pdbs), now=NOW)
    got = result.candidate.node if result.candidate is not None else ""
    assert (got, result.message) == (nominated, message)
    # A pod with no candidate anywhere loses a nomination it has (NewPostFilterResultWithNominatedNode("")).
    assert result.clear_nomination == (result.candidate is None)


# ------------------------------------------------------------------------------------------------ TestDryRunPreemption


def dry_run(preemptor: PodInfo, nodes: Sequence[NodeInfo], pdb_objects: Sequence[Obj] = ()) -> dict[str, Any]:
    """`DryRunPreemption` over every node of the snapshot: node → (victims sorted by name, PDB violations)."""
    cycle = prefilter(preemptor, nodes, {})
    pdbs = budgets(pdb_objects)
    found: dict[str, Any] = {}
    for n in nodes:
        outcome = select_victims(preemptor, n, reserved=(), pdbs=pdbs, now=NOW, cycle=cycle)
        if isinstance(outcome, Candidate):
            found[n.name] = (sorted(p.name for p in outcome.victims), outcome.pdb_violations)
    return found


APP_FOO = {"app": "foo"}

DRY_RUN: list[Any] = [
    pytest.param(
        ["node1", "node2"],
        mk_pod("p", priority=HIGH, req=LARGE),
        [mk_pod("p1", node="node1", priority=MID, req=LARGE), mk_pod("p2", node="node2", priority=MID, req=LARGE)],
        [],
        {"node1": (["p1"], 0), "node2": (["p2"], 0)},
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2"],
        mk_pod("p", priority=LOW, req=LARGE),
        [mk_pod("p1", node="node1", priority=MID, req=LARGE), mk_pod("p2", node="node2", priority=MID, req=LARGE)],
        [],
        {},
        id="a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
    ),
    pytest.param(
        ["node1", "node2"],
        mk_pod("p", priority=HIGH, req=LARGE),
        [
            mk_pod("p1.1", node="node1", priority=LOW, req=SMALL),
            mk_pod("p1.2", node="node1", priority=MID, req=LARGE),
            mk_pod("p2", node="node2", priority=MID, req=LARGE),
        ],
        [],
        {"node1": (["p1.2"], 0), "node2": (["p2"], 0)},
        id="medium priority pod is preempted, but lower priority one stays as it is small",
    ),
    pytest.param(
        ["node1", "node2"],
        mk_pod("p", priority=HIGH, req=LARGE),
        [
            mk_pod("p1.1", node="node1", priority=MID, req=SMALL),
            mk_pod("p1.2", node="node1", priority=LOW, req=SMALL),
            mk_pod("p1.3", node="node1", priority=MID, req=MEDIUM),
            mk_pod("p1.4", node="node1", priority=HIGH, req=SMALL),
            mk_pod("p2", node="node2", priority=HIGH, req=LARGE),
        ],
        [],
        {"node1": (["p1.2", "p1.3"], 0)},
        id="mixed priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2"],
        mk_pod("p", priority=HIGH, req=LARGE),
        [
            mk_pod("p1.1", node="node1", priority=LOW, req=SMALL, start=epoch(5)),
            mk_pod("p1.2", node="node1", priority=LOW, req=SMALL, start=epoch(4)),
            mk_pod("p1.3", node="node1", priority=MID, req=MEDIUM, start=epoch(3)),
            mk_pod("p1.4", node="node1", priority=HIGH, req=SMALL, start=epoch(2)),
            mk_pod("p2", node="node2", priority=HIGH, req=LARGE, start=epoch(1)),
        ],
        [],
        {"node1": (["p1.1", "p1.3"], 0)},
        id="mixed priority pods are preempted, pick later StartTime one when priorities are equal",
    ),
    pytest.param(
        ["node1/zone1", "node2/zone1"],
        mk_pod("p", labels={"foo": ""}, priority=HIGH, req=SMALL),
        [
            mk_pod("p1.1", node="node1", labels={"foo": ""}, priority=LOW, req=SMALL, anti_exists=("foo", "hostname")),
            mk_pod("p1.2", node="node1", priority=MID, req=SMALL),
            mk_pod("p1.3", node="node1", priority=HIGH, req=SMALL),
            mk_pod("p2", node="node2", priority=HIGH, req=SMALL),
        ],
        [],
        {"node1": (["p1.1"], 0)},
        id="pod with anti-affinity is preempted",
    ),
    pytest.param(
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        mk_pod("p", labels={"foo": ""}, priority=HIGH, spread=[(1, "zone"), (1, "hostname")]),
        [
            mk_pod("pod-a1", node="node-a", labels={"foo": ""}, priority=MID),
            mk_pod("pod-a2", node="node-a", labels={"foo": ""}, priority=LOW),
            mk_pod("pod-b1", node="node-b", labels={"foo": ""}, priority=LOW),
            mk_pod("pod-x1", node="node-x", labels={"foo": ""}, priority=HIGH),
            mk_pod("pod-x2", node="node-x", labels={"foo": ""}, priority=HIGH),
        ],
        [],
        {"node-a": (["pod-a2"], 0), "node-b": (["pod-b1"], 0)},
        id="preemption to resolve pod topology spread filter failure",
    ),
    pytest.param(
        ["node1"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            mk_pod("p1.1", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM),
            mk_pod("p1.2", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM),
        ],
        [pdb("", "", APP_FOO, allowed=1)],
        {"node1": (["p1.1", "p1.2"], 1)},
        id="preemption with violation of same pdb",
    ),
    pytest.param(
        ["node1"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            mk_pod("p1.1", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM),
            mk_pod("p1.2", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM),
        ],
        [pdb("", "", APP_FOO, allowed=1, disrupted=["p2"])],
        {"node1": (["p1.1", "p1.2"], 1)},
        id=(
            "preemption with violation of the pdb with pod whose eviction was processed, "
            "the victim doesn't belong to DisruptedPods"
        ),
    ),
    pytest.param(
        ["node1"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            mk_pod("p1.1", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM),
            mk_pod("p1.2", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM),
        ],
        [pdb("", "", APP_FOO, allowed=1, disrupted=["p1.2"])],
        {"node1": (["p1.1", "p1.2"], 0)},
        id=(
            "preemption with violation of the pdb with pod whose eviction was processed, "
            "the victim belongs to DisruptedPods"
        ),
    ),
    pytest.param(
        ["node1"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            mk_pod("p1.1", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM),
            mk_pod("p1.2", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM),
            mk_pod("p1.3", node="node1", labels=APP_FOO, priority=MID, req=MEDIUM),
        ],
        [pdb("", "", APP_FOO, allowed=1, disrupted=["p1.3"])],
        {"node1": (["p1.1", "p1.2", "p1.3"], 1)},
        id=(
            "preemption with violation of the pdb with pod whose eviction was processed, "
            "the victim which belongs to DisruptedPods is treated as 'nonViolating'"
        ),
    ),
]


@pytest.mark.parametrize(("node_names", "pod", "pods", "pdbs", "expected"), DRY_RUN)
def test_dry_run_preemption(
    node_names: list[str], pod: PodInfo, pods: list[PodInfo], pdbs: list[Obj], expected: dict[str, Any]
) -> None:
    """Nodes of 500m CPU / 500 bytes; each candidate's victims (sorted by name, as upstream compares them) and
    its count of PDB violations."""
    nodes = snapshot([mk_node(name, VERY_LARGE) for name in node_names], pods)
    assert dry_run(pod, nodes, pdbs) == expected


# ---------------------------------------------------------------------------------------- TestSelectBestCandidate


def e(name: str, node: str, priority: int, req: Mapping[str, str], start: int = 0) -> PodInfo:
    return mk_pod(name, node=node, priority=priority, req=req, start=epoch(start))


SELECT_BEST: list[Any] = [
    pytest.param(
        ["node1", "node2"],
        mk_pod("p", priority=HIGH, req=LARGE),
        [e("p1", "node1", MID, LARGE), e("p2", "node2", MID, LARGE)],
        {"node1", "node2"},
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            e("p1.1", "node1", MID, MEDIUM),
            e("p1.2", "node1", MID, LARGE),
            e("p2.1", "node2", MID, MEDIUM),
            e("p2.2", "node2", LOW, MEDIUM),
            e("p3.1", "node3", LOW, MEDIUM),
            e("p3.2", "node3", LOW, MEDIUM),
        ],
        {"node3"},
        id="node with min highest priority pod is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            e("p1.1", "node1", MID, MEDIUM),
            e("p1.2", "node1", MID, LARGE),
            e("p2.1", "node2", MID, LARGE),
            e("p2.2", "node2", LOW, MEDIUM),
            e("p3.1", "node3", MID, MEDIUM),
            e("p3.2", "node3", MID, MEDIUM),
        ],
        {"node2"},
        id="when highest priorities are the same, minimum sum of priorities is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            e("p1.1", "node1", MID, SMALL),
            e("p1.2", "node1", NEG, SMALL),
            e("p1.3", "node1", MID, SMALL),
            e("p1.4", "node1", NEG, SMALL),
            e("p2.1", "node2", MID, LARGE),
            e("p2.2", "node2", NEG, MEDIUM),
            e("p3.1", "node3", MID, MEDIUM),
            e("p3.2", "node3", NEG, SMALL),
            e("p3.3", "node3", LOW, SMALL),
        ],
        {"node2"},
        id="when highest priority and sum are the same, minimum number of pods is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            e("p1.1", "node1", MID, SMALL),
            e("p1.2", "node1", NEG, SMALL),
            e("p1.3", "node1", NEG, SMALL),
            e("p2.1", "node2", MID, LARGE),
            e("p2.2", "node2", NEG, MEDIUM),
            e("p3.1", "node3", MID, MEDIUM),
            e("p3.2", "node3", NEG, SMALL),
            e("p3.3", "node3", LOW, SMALL),
        ],
        {"node2"},
        id="sum of adjusted priorities is considered",
    ),
    pytest.param(
        ["node1", "node2", "node3", "node4"],
        mk_pod("p", priority=VERY_HIGH, req=VERY_LARGE),
        [
            e("p1.1", "node1", MID, SMALL),
            e("p1.2", "node1", LOW, SMALL),
            e("p1.3", "node1", LOW, SMALL),
            e("p2.1", "node2", HIGH, LARGE),
            e("p3.1", "node3", MID, MEDIUM),
            e("p3.2", "node3", LOW, SMALL),
            e("p3.3", "node3", LOW, SMALL),
            e("p3.4", "node3", LOW, MEDIUM),
            e("p4.1", "node4", MID, MEDIUM),
            e("p4.2", "node4", MID, SMALL),
            e("p4.3", "node4", MID, SMALL),
            e("p4.4", "node4", NEG, SMALL),
        ],
        {"node1"},
        id="non-overlapping lowest high priority, sum priorities, and number of pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            e("p1.1", "node1", MID, MEDIUM, 2),
            e("p1.2", "node1", MID, MEDIUM, 2),
            e("p2.1", "node2", MID, MEDIUM, 3),
            e("p2.2", "node2", MID, MEDIUM, 3),
            e("p3.1", "node3", MID, MEDIUM, 1),
            e("p3.2", "node3", MID, MEDIUM, 1),
        ],
        {"node2"},
        id="same priority, same number of victims, different start time for each node's pod",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            e("p1.1", "node1", MID, MEDIUM, 4),
            e("p1.2", "node1", MID, MEDIUM, 2),
            e("p2.1", "node2", MID, MEDIUM, 5),
            e("p2.2", "node2", MID, MEDIUM, 1),
            e("p3.1", "node3", MID, MEDIUM, 3),
            e("p3.2", "node3", MID, MEDIUM, 6),
        ],
        {"node3"},
        id="same priority, same number of victims, different start time for all pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            e("p1.1", "node1", LOW, MEDIUM, 4),
            e("p1.2", "node1", MID, MEDIUM, 2),
            e("p2.1", "node2", MID, MEDIUM, 6),
            e("p2.2", "node2", LOW, MEDIUM, 1),
            e("p3.1", "node3", LOW, MEDIUM, 3),
            e("p3.2", "node3", MID, MEDIUM, 5),
        ],
        {"node2"},
        id="different priority, same number of victims, different start time for all pods",
    ),
]


@pytest.mark.parametrize(("node_names", "pod", "pods", "expected"), SELECT_BEST)
def test_select_best_candidate(node_names: list[str], pod: PodInfo, pods: list[PodInfo], expected: set[str]) -> None:
    """The node preemption picks (any of `expected`), after the Filter phase found the pod fits nowhere."""
    nodes = snapshot([mk_node(name, VERY_LARGE) for name in node_names], pods)
    result = preempt(pod, nodes, filtered(pod, nodes), nominated={}, pdbs=[], now=NOW)
    assert result.candidate is not None, result.message
    assert result.candidate.node in expected


# --------------------------------------------------------------------------------- TestPodEligibleToPreemptOthers

TAINT_NOT_MATCH = FilterStatus(("node(s) had untolerated taint {k: v}",), False)

ELIGIBLE: list[Any] = [
    pytest.param(
        mk_pod("p_with_nominated_node", priority=HIGH, nominated="node1"),
        [mk_pod("p1", priority=LOW, node="node1", terminating=True)],
        ["node1"],
        TAINT_NOT_MATCH,
        True,
        id="Pod with nominated node",
    ),
    pytest.param(
        mk_pod("p_without_nominated_node", priority=HIGH), [], [], None, True, id="Pod without nominated node"
    ),
    pytest.param(
        mk_pod("p_with_preempt_never_policy", priority=HIGH, never=True),
        [],
        [],
        None,
        False,
        id="Pod with 'PreemptNever' preemption policy",
    ),
    pytest.param(
        mk_pod("p_with_nominated_node", priority=HIGH, nominated="node1"),
        [mk_pod("p1", priority=LOW, node="node1", terminating=True, preemption_target=True)],
        ["node1"],
        None,
        False,
        id="preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
    ),
    pytest.param(
        mk_pod("p_with_nominated_node", priority=HIGH, nominated="node1"),
        [mk_pod("p1", priority=LOW, node="node1", terminating=True)],
        ["node1"],
        None,
        True,
        id="non-victim Pods terminating",
    ),
]


@pytest.mark.parametrize(("pod", "pods", "node_names", "nominated_status", "eligible"), ELIGIBLE)
def test_pod_eligible_to_preempt_others(
    pod: PodInfo,
    pods: list[PodInfo],
    node_names: list[str],
    nominated_status: FilterStatus | None,
    eligible: bool,
) -> None:
    """`PodEligibleToPreemptOthers`, read from `preempt`: an ineligible pod gets "preemption: not eligible due to
    ..." and keeps its nomination; an eligible one goes on to look for victims."""
    nodes = snapshot([mk_node(name) for name in node_names], pods)
    statuses = {"node1": nominated_status} if nominated_status is not None else {}
    result = preempt(pod, nodes, statuses, nominated={}, pdbs=[], now=NOW)
    assert result.message.startswith("preemption: not eligible due to") is not eligible, result.message
    if not eligible:
        assert result.candidate is None and not result.clear_nomination
        assert result.message in (
            "preemption: not eligible due to preemptionPolicy=Never.",
            "preemption: not eligible due to a terminating pod on the nominated node.",
        )


# ------------------------------------------------------------------------------------------------ TestPreempt


def d(name: str, node: str, priority: int, req: Mapping[str, str] | None = None, **kw: Any) -> PodInfo:
    return mk_pod(name, namespace="default", node=node, priority=priority, req=req, **kw)


PREEMPT: list[Any] = [
    pytest.param(
        mk_pod("p", namespace="default", priority=HIGH, req=VERY_LARGE),
        [
            d("p1.1", "node1", LOW, SMALL),
            d("p1.2", "node1", LOW, SMALL),
            d("p2.1", "node2", HIGH, LARGE),
            d("p3.1", "node3", MID, MEDIUM),
        ],
        ["node1", "node2", "node3"],
        "node1",
        ["p1.1", "p1.2"],
        id="basic preemption logic",
    ),
    pytest.param(
        mk_pod("p", namespace="default", labels={"foo": ""}, priority=HIGH, spread=[(1, "zone"), (1, "hostname")]),
        [
            d("p-a1", "node-a", HIGH, labels={"foo": ""}),
            d("p-a2", "node-a", HIGH, labels={"foo": ""}),
            d("p-b1", "node-b", LOW, labels={"foo": ""}),
            d("p-x1", "node-x", HIGH, labels={"foo": ""}),
            d("p-x2", "node-x", HIGH, labels={"foo": ""}),
        ],
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        "node-b",
        ["p-b1"],
        id="preemption for topology spread constraints",
    ),
    pytest.param(
        mk_pod("p", namespace="default", priority=HIGH, req=VERY_LARGE, never=True),
        [
            d("p1.1", "node1", LOW, SMALL),
            d("p1.2", "node1", LOW, SMALL),
            d("p2.1", "node2", HIGH, LARGE),
            d("p3.1", "node3", MID, MEDIUM),
        ],
        ["node1", "node2", "node3"],
        "",
        [],
        id="no preempting in pod",
    ),
    pytest.param(
        mk_pod("p", namespace="default", priority=HIGH, req=VERY_LARGE),
        [
            d("p1.1", "node1", LOW, SMALL),
            d("p1.2", "node1", LOW, SMALL),
            d("p2.1", "node2", HIGH, LARGE),
            d("p3.1", "node3", MID, MEDIUM),
        ],
        ["node1", "node2", "node3"],
        "node1",
        ["p1.1", "p1.2"],
        id="PreemptionPolicy is nil",
    ),
]


@pytest.mark.parametrize(("pod", "pods", "node_names", "nominated", "victims"), PREEMPT)
def test_preempt(pod: PodInfo, pods: list[PodInfo], node_names: list[str], nominated: str, victims: list[str]) -> None:
    """`Evaluator.Preempt` with every node Unschedulable: the nominated node and the pods preempted there (the
    scheduler then marks each with DisruptionTarget and deletes it: tests/controllers/test_upstream_preemption.py)."""
    nodes = snapshot([mk_node(name, VERY_LARGE) for name in node_names], pods)
    statuses = {n.name: UNSCHED for n in nodes}
    result = preempt(pod, nodes, statuses, nominated={}, pdbs=[], now=NOW, cycle=prefilter(pod, nodes, {}))
    got = result.candidate.node if result.candidate is not None else ""
    preempted = sorted(p.name for p in result.candidate.victims) if result.candidate is not None else []
    assert (got, preempted) == (nominated, victims)


# ------------------------------------------------------------------------------------------------ preemption_test.go
# pkg/scheduler/framework/preemption/preemption_test.go TestNodesWherePreemptionMightHelp (the NodeToStatus version:
# every node has a status). Upstream calls `nodesWherePreemptionMightHelp` with made-up statuses; here `preempt` gets
# them for four empty nodes and a preemptor of priority 1000. A node it tries has no lower-priority pod ("No
# preemption victims found for incoming pod"); a node it does not try counts as "Preemption is not helpful for
# scheduling". The reasons are the filters' texts (kjobs' own constants where kjobs has the filter).

NODE_NAME = "node(s) didn't match the requested node name"  # nodename.ErrReason
UNKNOWN_CONDITION = "node(s) had unknown conditions"  # nodeunschedulable.ErrReasonUnknownCondition
DISK_CONFLICT = "node(s) had no available disk"  # volumerestrictions.ErrReasonDiskConflict
VOLUME_ZONE = "node(s) had no available volume zone"  # volumezone.ErrReasonConflict


def _might_help_rows() -> list[Any]:
    from kjobs.controllers.interpod import (
        REASON_AFFINITY_RULES,
        REASON_ANTI_AFFINITY_RULES,
        REASON_SPREAD,
        REASON_SPREAD_MISSING_LABEL,
    )
    from kjobs.controllers.scheduling import REASON_AFFINITY, REASON_TAINT_FORMAT, REASON_UNSCHEDULABLE
    from kjobs.controllers.volumebinding import ERR_REASON_BIND_CONFLICT, ERR_REASON_NODE_CONFLICT

    taint = REASON_TAINT_FORMAT.format(key="k", value="v")

    def u(reason: str) -> FilterStatus:  # fwk.Unschedulable
        return FilterStatus((reason,) if reason else (), True)

    def uu(reason: str) -> FilterStatus:  # fwk.UnschedulableAndUnresolvable
        return FilterStatus((reason,) if reason else (), False)

    return [
        pytest.param(
            {
                "node1": uu(REASON_AFFINITY),
                "node2": uu(NODE_NAME),
                "node3": uu(taint),
                "node4": uu(REASON_AFFINITY_RULES),
            },
            set(),
            id="No node should be attempted",
        ),
        pytest.param(
            {
                "node1": u(REASON_ANTI_AFFINITY_RULES),
                "node2": uu(NODE_NAME),
                "node3": uu(REASON_UNSCHEDULABLE),
                "node4": u("Unschedulable"),
            },
            {"node1", "node4"},
            id="ErrReasonAntiAffinityRulesNotMatch should be tried as it indicates that the pod is unschedulable due "
            "to inter-pod anti-affinity",
        ),
        pytest.param(
            {
                "node1": uu(REASON_AFFINITY_RULES),
                "node2": u(REASON_ANTI_AFFINITY_RULES),
                "node3": u("Unschedulable"),
                "node4": u("Unschedulable"),
            },
            {"node2", "node3", "node4"},
            id="ErrReasonAffinityRulesNotMatch should not be tried as it indicates that the pod is unschedulable due "
            "to inter-pod affinity, but ErrReasonAntiAffinityRulesNotMatch should be tried as it indicates that the "
            "pod is unschedulable due to inter-pod anti-affinity",
        ),
        pytest.param(
            {
                "node1": uu(DISK_CONFLICT),
                "node2": u("Insufficient memory"),
                "node3": u("Unschedulable"),
                "node4": u("Unschedulable"),
            },
            {"node2", "node3", "node4"},
            id="Mix of failed predicates works fine",
        ),
        pytest.param(
            {
                "node1": uu(UNKNOWN_CONDITION),
                "node2": u("Unschedulable"),
                "node3": u("Unschedulable"),
                "node4": u("Unschedulable"),
            },
            {"node2", "node3", "node4"},
            id="Node condition errors should be considered unresolvable",
        ),
        pytest.param(
            {
                "node1": uu(VOLUME_ZONE),
                "node2": uu(ERR_REASON_NODE_CONFLICT),
                "node3": uu(ERR_REASON_BIND_CONFLICT),
                "node4": u("Unschedulable"),
            },
            {"node4"},
            id="ErrVolume... errors should not be tried as it indicates that the pod is unschedulable due to no "
            "matching volumes for pod on node",
        ),
        pytest.param(
            {
                "node1": u(REASON_SPREAD),
                "node2": uu(NODE_NAME),
                "node3": u(REASON_SPREAD),
                "node4": u("Unschedulable"),
            },
            {"node1", "node3", "node4"},
            id="ErrReasonConstraintsNotMatch should be tried as it indicates that the pod is unschedulable due to "
            "topology spread constraints",
        ),
        pytest.param(
            {"node1": u(""), "node2": uu(""), "node3": u(""), "node4": uu("")},
            {"node1", "node3"},
            id="UnschedulableAndUnresolvable status should be skipped but Unschedulable should be tried",
        ),
        pytest.param(
            {"node1": u(""), "node2": uu(REASON_SPREAD_MISSING_LABEL), "node3": u(""), "node4": uu("")},
            {"node1", "node3"},
            id="ErrReasonNodeLabelNotMatch should not be tried as it indicates that the pod is unschedulable due to "
            "node doesn't have the required label",
        ),
    ]


@pytest.mark.parametrize(("statuses", "tried"), _might_help_rows())
def test_nodes_where_preemption_might_help(statuses: dict[str, FilterStatus], tried: set[str]) -> None:
    nodes = [mk_node(f"node{i}") for i in range(1, 5)]
    result = preempt(mk_pod("p", priority=HIGH), nodes, statuses, nominated={}, pdbs=[], now=NOW)
    counts = [f"{len(tried)} No preemption victims found for incoming pod"] if tried else []
    if len(tried) < 4:
        counts.append(f"{4 - len(tried)} Preemption is not helpful for scheduling")
    assert result.candidate is None
    assert result.message == f"preemption: 0/4 nodes are available: {', '.join(sorted(counts))}."


@pytest.mark.parametrize(
    ("violations", "expected"),
    [pytest.param(0, 0, id="no pdb violation"), pytest.param(1, 1, id="pdb violation on each node")],
)
def test_preemption_dry_run_preemption(violations: int, expected: int) -> None:
    """preemption_test.go TestDryRunPreemption: p (priority 1000, no requests) against p1 / p2 (100) on two nodes.
    Upstream's fake plugin names the node's first pod as the victim and reports `numViolatingVictim` PDB
    violations; here a node of one pod makes p1 / p2 the victims, and a budget over them that allows no
    disruption (or a large one) gives the violations."""
    nodes = [mk_node("node1", {**VERY_LARGE, "pods": "1"}), mk_node("node2", {**VERY_LARGE, "pods": "1"})]
    pods = [
        mk_pod("p1", node="node1", priority=MID, labels=APP_FOO),
        mk_pod("p2", node="node2", priority=MID, labels=APP_FOO),
    ]
    nodes = snapshot(nodes, pods)
    pdbs = [pdb("pdb", "", APP_FOO, allowed=0 if violations else MAX_INT32)]
    assert dry_run(mk_pod("p", priority=HIGH), nodes, pdbs) == {
        "node1": (["p1"], expected),
        "node2": (["p2"], expected),
    }
