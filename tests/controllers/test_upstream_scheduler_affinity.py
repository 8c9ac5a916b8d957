"""Upstream filter rows for the filters that read other pods — NodePorts, PodTopologySpread, InterPodAffinity — run
through kjobs' scheduler filtering (`prefilter` once per pod, then `filter_node` per node, as the scheduler does).

One test per upstream Test function; rows keep their upstream names as ids. Upstream runs one plugin's PreFilter
and Filter on a snapshot; here every kjobs filter runs, in Kubernetes' order, so a row's node that another filter
rejects first (upstream's comments say "in real case, it's false") reports that filter's reason. Each row checks
the node's reasons and whether preemption may resolve them (Unschedulable vs UnschedulableAndUnresolvable), and the
InterPodAffinity rows also whether PreFilter skips the plugin. Sources, commits and rows left out:
docs/upstream-scheduler.md. The last test runs an Indexed Job with pod anti-affinity through the real scheduler.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.client.resources import EVENTS, JOBS, NODES
from kjobs.clock import FakeClock
from kjobs.controllers.interpod import (
    REASON_AFFINITY_RULES,
    REASON_ANTI_AFFINITY_RULES,
    REASON_EXISTING_ANTI_AFFINITY,
    REASON_SPREAD,
    REASON_SPREAD_MISSING_LABEL,
    prefilter,
)
from kjobs.controllers.job import JobController
from kjobs.controllers.preemption import preempt
from kjobs.controllers.scheduler import Scheduler
from kjobs.controllers.scheduling import REASON_AFFINITY, REASON_PORTS, NodeInfo, PodInfo, filter_node, pod_info
from tests.support import local_api, settle

ROOMY = {"cpu": "64", "memory": "64Gi", "pods": "110"}
_UIDS = itertools.count()

Want = tuple[tuple[str, ...], bool] | None
"""A node's expected verdict: None (fits) or (reasons, resolvable by preemption)."""

OK: Want = None
AFF: Want = ((REASON_AFFINITY_RULES,), False)  # UnschedulableAndUnresolvable
ANTI: Want = ((REASON_ANTI_AFFINITY_RULES,), True)  # Unschedulable
EXIST: Want = ((REASON_EXISTING_ANTI_AFFINITY,), True)  # Unschedulable
SKEW: Want = ((REASON_SPREAD,), True)  # Unschedulable
NOLABEL: Want = ((REASON_SPREAD_MISSING_LABEL,), False)  # UnschedulableAndUnresolvable
NODE_AFFINITY: Want = ((REASON_AFFINITY,), False)
PORTS: Want = ((REASON_PORTS,), True)


def make_node(name: str, labels: dict[str, str] | None = None, taints: list[Obj] | None = None) -> NodeInfo:
    info = NodeInfo(name)
    info.set_node(
        {
            "metadata": {"name": name, "labels": labels or {}},
            "spec": {"taints": taints or []},
            "status": {"allocatable": ROOMY, "conditions": [{"type": "Ready", "status": "True"}]},
        }
    )
    return info


def make_pod(
    name: str = "",
    *,
    namespace: str = "",
    labels: dict[str, str] | None = None,
    node: str = "",
    affinity: Sequence[Obj] = (),
    anti: Sequence[Obj] = (),
    spread: Sequence[Obj] = (),
    node_affinity: Obj | None = None,
    terminating: bool = False,
    **spec: Any,
) -> PodInfo:
    """`st.MakePod()`: namespace and name empty unless given; `node_affinity` is one required match expression."""
    full: Obj = {"containers": [{"name": "c", "image": "busybox"}], **spec}
    if affinity or anti:
        full["affinity"] = {
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(affinity)},
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(anti)},
        }
    if node_affinity is not None:
        required = {"nodeSelectorTerms": [{"matchExpressions": [node_affinity]}]}
        full.setdefault("affinity", {})["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": required}
    if spread:
        full["topologySpreadConstraints"] = list(spread)
    if node:
        full["nodeName"] = node
    meta: Obj = {"name": name, "namespace": namespace, "uid": f"uid-{next(_UIDS)}", "labels": labels or {}}
    if terminating:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return pod_info({"metadata": meta, "spec": full}, priority=0, preempt_never=False)


def term(key: str, operator: str, topology: str, values: list[str] | None = None, **extra: Any) -> Obj:
    """One PodAffinityTerm with a single match expression (`st.PodAffinityIn/NotIn/Exists`)."""
    expression: Obj = {"key": key, "operator": operator}
    if values is not None:
        expression["values"] = values
    return {"labelSelector": {"matchExpressions": [expression]}, "topologyKey": topology, **extra}


def exists(key: str, topology: str) -> Obj:
    return term(key, "Exists", topology)


def run(
    pod: PodInfo,
    pods: Sequence[PodInfo],
    nodes: Sequence[NodeInfo],
    namespaces: dict[str, dict[str, str]] | None = None,
) -> tuple[bool, list[Want]]:
    """PreFilter (skipped?), then each node's verdict. Pods on nodes not in the snapshot are not counted."""
    by_name = {n.name: n for n in nodes}
    for other in pods:
        if other.node_name in by_name:
            by_name[other.node_name].add_pod(other)
    cycle = prefilter(pod, nodes, namespaces or {})
    verdicts: list[Want] = []
    for n in nodes:
        status = filter_node(pod, n, (), cycle)
        verdicts.append(None if status is None else (status.reasons, status.resolvable))
    return cycle is None, verdicts


# ------------------------------------------------------------------------------------------------ InterPodAffinity
# pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1_LABELS = {"region": "r1", "zone": "z11"}
NAMESPACES = {
    "subteam1.team1": {"team": "team1"},
    "subteam2.team1": {"team": "team1"},
    "subteam1.team2": {"team": "team2"},
    "subteam2.team2": {"team": "team2"},
}
SCAN = ["securityscan", "value2"]
TEAM1 = {"matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]}


def _existing() -> PodInfo:
    return make_pod(labels=POD_LABEL, node="node1")


SINGLE_NODE: list[Any] = [
    pytest.param(
        lambda: make_pod(),
        lambda: [],
        True,
        OK,
        id="A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
    ),
    pytest.param(
        lambda: make_pod(labels=POD_LABEL2, affinity=[term("service", "In", "region", SCAN)]),
        lambda: [_existing()],
        False,
        OK,
        id="satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that "
        "matches the existing pod",
    ),
    pytest.param(
        lambda: make_pod(labels=POD_LABEL2, affinity=[term("service", "NotIn", "region", ["securityscan3", "value3"])]),
        lambda: [_existing()],
        False,
        OK,
        id="satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in "
        "operator in labelSelector that matches the existing pod",
    ),
    pytest.param(
        lambda: make_pod(labels=POD_LABEL2, affinity=[term("service", "In", "", SCAN, namespaces=["DiffNameSpace"])]),
        lambda: [make_pod(namespace="ns", labels=POD_LABEL, node="node1")],
        False,
        AFF,
        id="Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
    ),
    pytest.param(
        lambda: make_pod(labels=POD_LABEL, affinity=[term("service", "In", "", ["antivirusscan", "value2"])]),
        lambda: [_existing()],
        False,
        AFF,
        id="Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
    ),
    pytest.param(
        lambda: make_pod(
            labels=POD_LABEL2,
            affinity=[
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "service", "operator": "Exists"},
                            {"key": "wrongkey", "operator": "DoesNotExist"},
                        ]
                    },
                    "topologyKey": "region",
                },
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "service", "operator": "In", "values": ["securityscan"]},
                            {"key": "service", "operator": "NotIn", "values": ["WrongValue"]},
                        ]
                    },
                    "topologyKey": "region",
                },
            ],
        ),
        lambda: [_existing()],
        False,
        OK,
        id="satisfies the PodAffinity with different label Operators in multiple "
        "RequiredDuringSchedulingIgnoredDuringExecution ",
    ),
    pytest.param(
        lambda: make_pod(
            labels=POD_LABEL2,
            affinity=[
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "service", "operator": "Exists"},
                            {"key": "wrongkey", "operator": "DoesNotExist"},
                        ]
                    },
                    "topologyKey": "region",
                },
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "service", "operator": "In", "values": ["securityscan2"]},
                            {"key": "service", "operator": "NotIn", "values": ["WrongValue"]},
                        ]
                    },
                    "topologyKey": "region",
                },
            ],
        ),
        lambda: [_existing()],
        False,
        AFF,
        id="The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the "
        "node because one of the matchExpression item don't match.",
    ),
    pytest.param(
        lambda: make_pod(
            labels=POD_LABEL2,
            affinity=[term("service", "In", "region", SCAN)],
            anti=[term("service", "In", "node", ["antivirusscan", "value2"])],
        ),
        lambda: [_existing()],
        False,
        OK,
        id="satisfies the PodAffinity and PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        lambda: make_pod(
            labels=POD_LABEL2,
            affinity=[term("service", "In", "region", SCAN)],
            anti=[term("service", "In", "node", ["antivirusscan", "value2"])],
        ),
        lambda: [
            make_pod(node="node1", labels=POD_LABEL, anti=[term("service", "In", "node", ["antivirusscan", "value2"])])
        ],
        False,
        OK,
        id="satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        lambda: make_pod(
            labels=POD_LABEL2,
            affinity=[term("service", "In", "region", SCAN)],
            anti=[term("service", "In", "zone", SCAN)],
        ),
        lambda: [_existing()],
        False,
        ANTI,
        id="satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        lambda: make_pod(
            labels=POD_LABEL,
            affinity=[term("service", "In", "region", SCAN)],
            anti=[term("service", "In", "node", ["antivirusscan", "value2"])],
        ),
        lambda: [make_pod(labels=POD_LABEL, node="node1", anti=[term("service", "In", "zone", SCAN)])],
        False,
        EXIST,
        id="satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the "
        "existing pod",
    ),
    pytest.param(
        lambda: make_pod(labels=POD_LABEL, affinity=[term("service", "NotIn", "region", SCAN)]),
        lambda: [make_pod(labels={"service": "securityscan"}, node="node2")],
        False,
        AFF,
        id="pod matches its own Label in PodAffinity and that matches the existing pod Labels",
    ),
    pytest.param(
        lambda: make_pod(labels=POD_LABEL),
        lambda: [make_pod(node="node1", labels=POD_LABEL, anti=[term("service", "In", "zone", SCAN)])],
        False,
        EXIST,
        id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
        "doesn't satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        lambda: make_pod(labels=POD_LABEL),
        lambda: [make_pod(node="node1", labels=POD_LABEL, anti=[term("service", "NotIn", "zone", SCAN)])],
        True,
        OK,
        id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
        "satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        lambda: make_pod(labels=POD_LABEL, anti=[exists("service", "region"), exists("security", "region")]),
        lambda: [make_pod(node="node1", labels=POD_LABEL2, anti=[exists("security", "zone")])],
        False,
        ANTI,
        id="satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with "
        "incoming pod",
    ),
    pytest.param(
        lambda: make_pod(labels=POD_LABEL, anti=[exists("service", "zone"), exists("security", "zone")]),
        lambda: [make_pod(node="node1", labels=POD_LABEL2, anti=[exists("security", "zone")])],
        False,
        ANTI,
        id="PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
    ),
    pytest.param(
        lambda: make_pod(labels=POD_LABEL2, anti=[exists("security", "zone")]),
        lambda: [
            make_pod(node="node1", labels=POD_LABEL, anti=[exists("service", "zone"), exists("security", "zone")])
        ],
        False,
        EXIST,
        id="PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
    ),
    pytest.param(
        lambda: make_pod(labels={"abc": "", "xyz": ""}, anti=[exists("abc", "zone"), exists("def", "zone")]),
        lambda: [
            make_pod(node="node1", labels={"def": "", "xyz": ""}, anti=[exists("abc", "zone"), exists("def", "zone")])
        ],
        False,
        ANTI,
        id="PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
    ),
    pytest.param(
        lambda: make_pod(labels={"def": "", "xyz": ""}, anti=[exists("abc", "zone"), exists("def", "zone")]),
        lambda: [
            make_pod(node="node1", labels={"abc": "", "xyz": ""}, anti=[exists("abc", "zone"), exists("def", "zone")])
        ],
        False,
        ANTI,
        id="PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
    ),
    pytest.param(
        lambda: make_pod(labels=POD_LABEL2, affinity=[term("service", "In", "region", SCAN, namespaceSelector=TEAM1)]),
        lambda: [make_pod(namespace="subteam1.team1", labels=POD_LABEL, node="node1")],
        False,
        OK,
        id="affinity with NamespaceSelector",
    ),
    pytest.param(
        lambda: make_pod(labels=POD_LABEL2, affinity=[term("service", "In", "region", SCAN, namespaceSelector=TEAM1)]),
        lambda: [make_pod(namespace="subteam1.team2", labels=POD_LABEL, node="node1")],
        False,
        AFF,
        id="affinity with non-matching NamespaceSelector",
    ),
    pytest.param(
        lambda: make_pod(
            namespace="subteam1.team1",
            labels=POD_LABEL2,
            anti=[term("service", "In", "zone", SCAN, namespaceSelector=TEAM1)],
        ),
        lambda: [make_pod(namespace="subteam2.team1", labels=POD_LABEL, node="node1")],
        False,
        ANTI,
        id="anti-affinity with matching NamespaceSelector",
    ),
    pytest.param(
        lambda: make_pod(
            namespace="subteam1.team1",
            labels=POD_LABEL2,
            anti=[term("service", "In", "zone", SCAN, namespaceSelector={})],
        ),
        lambda: [make_pod(namespace="subteam2.team1", labels=POD_LABEL, node="node1")],
        False,
        ANTI,
        id="anti-affinity with matching all NamespaceSelector",
    ),
    pytest.param(
        lambda: make_pod(
            namespace="subteam1.team1",
            labels=POD_LABEL2,
            anti=[term("service", "In", "zone", SCAN, namespaceSelector=TEAM1)],
        ),
        lambda: [make_pod(namespace="subteam1.team2", labels=POD_LABEL, node="node1")],
        False,
        OK,
        id="anti-affinity with non-matching NamespaceSelector",
    ),
]


@pytest.mark.parametrize(("pod", "pods", "skip", "want"), SINGLE_NODE)
def test_required_affinity_single_node(pod: Any, pods: Any, skip: bool, want: Want) -> None:
    skipped, verdicts = run(pod(), pods(), [make_node("node1", NODE1_LABELS)], NAMESPACES)
    assert skipped == skip
    assert verdicts == [want]


CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}


def _abc(zone_a: str = "z1", zone_b: str = "z2", *more: str) -> list[NodeInfo]:
    """Nodes nodeA, nodeB (, nodeC...) in region r1 with the given zones and hostname labels."""
    names = ["nodeA", "nodeB", "nodeC"]
    zones = [zone_a, zone_b, *more]
    return [make_node(n, {"region": "r1", "zone": z, "hostname": n}) for n, z in zip(names, zones, strict=False)]


MULTIPLE_NODES: list[Any] = [
    pytest.param(
        lambda: make_pod(affinity=[term("foo", "In", "region", ["bar"])]),
        lambda: [make_pod("p1", node="node1", labels={"foo": "bar"})],
        lambda: [make_node("node1", CHINA), make_node("node2", CHINA_AZ1), make_node("node3", INDIA)],
        False,
        [OK, OK, AFF],
        id="A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them "
        "has an existing pod that matches the affinity rules",
    ),
    pytest.param(
        lambda: make_pod(
            labels={"foo": "bar", "service": "securityscan"},
            affinity=[term("foo", "In", "zone", ["bar"]), term("service", "In", "zone", ["securityscan"])],
        ),
        lambda: [make_pod("p1", node="nodeA", labels={"foo": "bar"})],
        lambda: [
            make_node("nodeA", {"zone": "az1", "hostname": "h1"}),
            make_node("nodeB", {"zone": "az2", "hostname": "h2"}),
        ],
        False,
        [OK, OK],
        id="The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the "
        "collection should not be blocked from being scheduled onto any node, even there's no existing pod that "
        "matches the rule anywhere.",
    ),
    pytest.param(
        lambda: make_pod(
            labels={"foo": "bar", "service": "securityscan"},
            affinity=[term("foo", "In", "zone", ["bar"]), term("service", "In", "zone", ["securityscan"])],
        ),
        lambda: [make_pod("p1", node="nodeA", labels={"foo": "bar"})],
        lambda: [
            make_node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}),
            make_node("nodeB", {"zoneLabel": "az2", "hostname": "h2"}),
        ],
        False,
        [AFF, AFF],
        id="The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
    ),
    pytest.param(
        lambda: make_pod(anti=[term("foo", "In", "region", ["abc"])]),
        lambda: [make_pod(node="nodeA", labels={"foo": "abc"})],
        lambda: [
            make_node("nodeA", {"region": "r1", "hostname": "nodeA"}),
            make_node("nodeB", {"region": "r1", "hostname": "nodeB"}),
        ],
        False,
        [ANTI, ANTI],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
    ),
    pytest.param(
        lambda: make_pod(anti=[term("foo", "In", "region", ["abc"]), term("service", "In", "zone", ["securityscan"])]),
        lambda: [make_pod(node="nodeA", labels={"foo": "abc", "service": "securityscan"})],
        lambda: _abc(),
        False,
        [ANTI, ANTI],
        id="This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
    ),
    pytest.param(
        lambda: make_pod(anti=[term("foo", "In", "region", ["abc"])]),
        lambda: [make_pod(node="nodeA", labels={"foo": "abc"})],
        lambda: [make_node("nodeA", CHINA), make_node("nodeB", CHINA_AZ1), make_node("nodeC", INDIA)],
        False,
        [ANTI, ANTI, OK],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
    ),
    pytest.param(
        lambda: make_pod(namespace="NS1", labels={"foo": "123"}, anti=[term("foo", "In", "region", ["bar"])]),
        lambda: [
            make_pod(node="nodeA", namespace="NS1", labels={"foo": "bar"}),
            make_pod(node="nodeC", namespace="NS2", anti=[term("foo", "In", "region", ["123"])]),
        ],
        lambda: [make_node("nodeA", CHINA), make_node("nodeB", CHINA_AZ1), make_node("nodeC", INDIA)],
        False,
        [ANTI, ANTI, OK],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC "
        "has an existing pod that match the inter pod affinity rule but in different namespace)",
    ),
    pytest.param(
        lambda: make_pod(labels={"foo": ""}),
        lambda: [make_pod(node="nodeA", anti=[exists("foo", "invalid-node-label")])],
        lambda: _abc("z1", "z1"),
        True,
        [OK, OK],
        id="Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector "
        "of the term is firstly checked, and then topologyKey of the term is also checked",
    ),
    pytest.param(
        lambda: make_pod(node="", anti=[exists("foo", "invalid-node-label")]),
        lambda: [make_pod(node="nodeA", labels={"foo": ""})],
        lambda: _abc("z1", "z1"),
        False,
        [OK, OK],
        id="Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
    ),
    pytest.param(
        lambda: make_pod(labels={"foo": "", "bar": ""}),
        lambda: [
            make_pod(node="nodeA", anti=[exists("foo", "zone")]),
            make_pod(node="nodeA", anti=[exists("bar", "region")]),
        ],
        lambda: _abc(),
        False,
        [EXIST, EXIST],
        id="Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each "
        "existingPod's terms on all nodes",
    ),
    pytest.param(
        lambda: make_pod(anti=[exists("foo", "zone"), exists("bar", "region")]),
        lambda: [make_pod(node="nodeA", labels={"foo": ""}), make_pod(node="nodeB", labels={"bar": ""})],
        lambda: _abc(),
        False,
        [ANTI, ANTI],
        id="Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one "
        "anti-affinity rule of existingPod",
    ),
    pytest.param(
        lambda: make_pod(labels={"foo": "", "bar": ""}),
        lambda: [make_pod(node="nodeA", anti=[exists("foo", "invalid-node-label"), exists("bar", "zone")])],
        lambda: _abc(),
        False,
        [EXIST, OK],
        id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when one term has invalid topologyKey",
    ),
    pytest.param(
        lambda: make_pod(anti=[exists("foo", "invalid-node-label"), exists("bar", "zone")]),
        lambda: [make_pod("podA", node="nodeA", labels={"foo": "", "bar": ""})],
        lambda: _abc(),
        False,
        [ANTI, OK],
        id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when one term has invalid topologyKey",
    ),
    pytest.param(
        lambda: make_pod(labels={"foo": "", "bar": ""}),
        lambda: [make_pod(node="nodeA", anti=[exists("foo", "region"), exists("bar", "zone")])],
        lambda: _abc(),
        False,
        [EXIST, EXIST],
        id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when all terms have valid topologyKey",
    ),
    pytest.param(
        lambda: make_pod(anti=[exists("foo", "region"), exists("bar", "zone")]),
        lambda: [make_pod(node="nodeA", labels={"foo": "", "bar": ""})],
        lambda: _abc(),
        False,
        [ANTI, ANTI],
        id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when all terms have valid topologyKey",
    ),
    pytest.param(
        lambda: make_pod(labels={"foo": "", "bar": ""}),
        lambda: [
            make_pod(node="nodeA", anti=[exists("foo", "zone"), exists("labelA", "zone")]),
            make_pod(node="nodeB", anti=[exists("bar", "zone"), exists("labelB", "zone")]),
        ],
        lambda: _abc("z1", "z2", "z3"),
        False,
        [EXIST, EXIST, OK],
        id="Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term "
        "matches incoming pod, so incoming pod can only be scheduled to nodeC",
    ),
    pytest.param(
        lambda: make_pod(affinity=[exists("foo", "region"), exists("bar", "zone")]),
        lambda: [make_pod("pod1", labels={"foo": "", "bar": ""}, node="nodeA")],
        lambda: _abc("z1", "z1"),
        False,
        [OK, OK],
        id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
        "topologyKeys match",
    ),
    pytest.param(
        lambda: make_pod(affinity=[exists("foo", "region"), exists("bar", "zone")]),
        lambda: [
            make_pod("pod1", node="nodeA", labels={"foo": ""}),
            make_pod("pod2", node="nodeB", labels={"bar": ""}),
        ],
        lambda: _abc(),
        False,
        [AFF, AFF],
        id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
        "topologyKeys match, and the match logic should be satisfied on the same pod",
    ),
]


@pytest.mark.parametrize(("pod", "pods", "nodes", "skip", "want"), MULTIPLE_NODES)
def test_required_affinity_multiple_nodes(pod: Any, pods: Any, nodes: Any, skip: bool, want: list[Want]) -> None:
    skipped, verdicts = run(pod(), pods(), nodes(), {"NS1": {}})
    assert skipped == skip
    assert verdicts == want


# ------------------------------------------------------------------------------------------------ PodTopologySpread
# pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go

FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
FOO_IN_EMPTY = {"key": "foo", "operator": "In", "values": [""]}
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
TAINTED: Want = (("node(s) had untolerated taint {node.kubernetes.io/unschedulable: }",), False)


def constraint(skew: int, key: str, selector: Obj | None, **extra: Any) -> Obj:
    """`SpreadConstraint(maxSkew, topologyKey, DoNotSchedule, selector, minDomains, affinityPolicy, taintsPolicy)`."""
    c: Obj = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", **extra}
    if selector is not None:
        c["labelSelector"] = selector
    return c


def zones4(**labels: dict[str, str]) -> list[NodeInfo]:
    """node-a, node-b in zone1 and node-x, node-y in zone2, each with a `node` label."""
    zone = {"node-a": "zone1", "node-b": "zone1", "node-x": "zone2", "node-y": "zone2"}
    return [make_node(n, {"zone": z, "node": n, **labels.get(n.replace("-", "_"), {})}) for n, z in zone.items()]


def foo_pods(*placements: str, labels: dict[str, str] | None = None) -> list[PodInfo]:
    """Pods labelled foo on the given nodes ("node-a", ...), named after their node."""
    return [make_pod(f"p-{n}-{i}", node=n, labels=labels or {"foo": ""}) for i, n in enumerate(placements)]


SPREAD_2103 = ("node-a", "node-a", "node-b", "node-y", "node-y", "node-y")

SINGLE_CONSTRAINT: list[Any] = [
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(1, "zone", FOO)]),
        zones4,
        lambda: [],
        [OK, OK, OK, OK],
        id="no existing pods",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(1, "zone", BAR)]),
        zones4,
        lambda: [],
        [OK, OK, OK, OK],
        id="no existing pods, incoming pod doesn't match itself",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(1, "zone", FOO)]),
        zones4,
        lambda: [
            make_pod("p-a1", namespace="ns1", node="node-a", labels={"foo": ""}),
            make_pod("p-b1", namespace="ns2", node="node-a", labels={"foo": ""}),
            *foo_pods("node-x", "node-y"),
        ],
        [OK, OK, SKEW, SKEW],
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(1, "zone", None)]),
        zones4,
        lambda: foo_pods("node-x", "node-y"),
        [OK, OK, OK, OK],
        id="existing pods do not match null selector",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(1, "zone", {})]),
        zones4,
        lambda: foo_pods("node-x", "node-y"),
        [OK, OK, OK, OK],
        id="kjobs: an empty selector counts no existing pod (countPodsMatchSelector)",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(1, "zone", FOO)]),
        zones4,
        lambda: foo_pods(*SPREAD_2103),
        [OK, OK, OK, OK],
        id="pods spread across zones as 3/3, all nodes fit",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(1, "zone", FOO)]),
        lambda: [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zon": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        lambda: foo_pods("node-a", "node-b", "node-x", "node-y"),
        [OK, NOLABEL, SKEW, SKEW],
        id="pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(1, "rack", FOO)]),
        lambda: [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
        ],
        lambda: [],
        [NOLABEL, NOLABEL],
        id="pod cannot be scheduled as all nodes don't have label 'rack'",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(1, "node", FOO)]),
        zones4,
        lambda: foo_pods(*SPREAD_2103),
        [SKEW, SKEW, OK, SKEW],
        id="pods spread across nodes as 2/1/0/3, only node-x fits",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(2, "node", FOO)]),
        zones4,
        lambda: foo_pods(*SPREAD_2103),
        [SKEW, OK, OK, SKEW],
        id="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"bar": ""}, spread=[constraint(1, "node", FOO)]),
        zones4,
        lambda: foo_pods(*SPREAD_2103),
        [SKEW, OK, OK, SKEW],
        id="pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
    ),
    pytest.param(
        lambda: make_pod(
            "p",
            labels={"foo": ""},
            spread=[constraint(1, "node", FOO)],
            node_affinity={"key": "node", "operator": "In", "values": ["node-a", "node-y"]},
        ),
        zones4,
        lambda: foo_pods(*SPREAD_2103),
        # upstream runs PodTopologySpread alone: node-b and node-x "in real case" fail NodeAffinity first
        [OK, NODE_AFFINITY, NODE_AFFINITY, SKEW],
        id="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(1, "node", FOO)]),
        lambda: [make_node("node-a", {"node": "node-a"}), make_node("node-b", {"node": "node-b"})],
        lambda: [
            make_pod("p-a", node="node-a", labels={"foo": ""}, terminating=True),
            make_pod("p-b", node="node-b", labels={"foo": ""}),
        ],
        [OK, SKEW],
        id="terminating Pods should be excluded",
    ),
    pytest.param(
        lambda: make_pod(
            "p",
            labels={"foo": ""},
            spread=[constraint(1, "zone", FOO)],
            node_affinity={"key": "node", "operator": "NotIn", "values": ["node-b"]},
        ),
        zones4,
        lambda: foo_pods("node-b", "node-b", "node-y"),
        [OK, NODE_AFFINITY, SKEW, SKEW],
        id="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(2, "node", FOO, minDomains=4)]),
        lambda: [make_node(n, {"node": n}) for n in ("node-a", "node-b", "node-c")],
        lambda: foo_pods("node-a", "node-a", "node-b", "node-b", "node-c"),
        [SKEW, SKEW, OK],
        id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third "
        "node fits",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(2, "node", FOO, minDomains=2)]),
        lambda: [make_node(n, {"node": n}) for n in ("node-a", "node-b", "node-c")],
        lambda: foo_pods("node-a", "node-a", "node-b", "node-b", "node-c"),
        [OK, OK, OK],
        id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all "
        "nodes fit",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(2, "zone", FOO, minDomains=3)]),
        zones4,
        lambda: foo_pods("node-a", "node-b", "node-y"),
        [SKEW, SKEW, OK, OK],
        id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and "
        "fourth nodes fit",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(2, "zone", FOO, minDomains=1)]),
        zones4,
        lambda: foo_pods("node-a", "node-b", "node-y"),
        [OK, OK, OK, OK],
        id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes "
        "fit",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, nodeSelector={"foo": ""}, spread=[constraint(1, "node", FOO)]),
        lambda: _foo_nodes(),
        lambda: foo_pods("node-a", "node-b", "node-y"),
        [SKEW, SKEW, OK, NODE_AFFINITY],
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        lambda: make_pod(
            "p",
            labels={"foo": ""},
            nodeSelector={"foo": ""},
            spread=[constraint(1, "node", FOO, nodeAffinityPolicy="Ignore")],
        ),
        lambda: _foo_nodes(),
        lambda: foo_pods("node-a", "node-b", "node-y"),
        [SKEW, SKEW, OK, NODE_AFFINITY],
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(1, "node", FOO)], node_affinity=FOO_IN_EMPTY),
        lambda: _foo_nodes(),
        lambda: foo_pods("node-a", "node-b", "node-y"),
        [SKEW, SKEW, OK, NODE_AFFINITY],
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(  # upstream reuses the previous name for this row
        lambda: make_pod(
            "p",
            labels={"foo": ""},
            spread=[constraint(1, "node", FOO, nodeAffinityPolicy="Ignore")],
            node_affinity=FOO_IN_EMPTY,
        ),
        lambda: _foo_nodes(),
        lambda: foo_pods("node-a", "node-b", "node-y"),
        [SKEW, SKEW, OK, NODE_AFFINITY],
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(1, "node", FOO)]),
        lambda: _foo_nodes(taint_y=True),
        lambda: foo_pods("node-a", "node-b", "node-y"),
        [SKEW, SKEW, OK, TAINTED],
        id="NodeTaintsPolicy ignored",
    ),
    pytest.param(
        lambda: make_pod("p", labels={"foo": ""}, spread=[constraint(1, "node", FOO, nodeTaintsPolicy="Honor")]),
        lambda: _foo_nodes(taint_y=True),
        lambda: foo_pods("node-a", "node-b", "node-y"),
        [SKEW, SKEW, OK, TAINTED],
        id="NodeTaintsPolicy honored",
    ),
]


def _foo_nodes(*, taint_y: bool = False) -> list[NodeInfo]:
    """node-a, node-b, node-x labelled foo; node-y not (with `taint_y`, tainted unschedulable too)."""
    nodes = [make_node(n, {"node": n, "foo": ""}) for n in ("node-a", "node-b", "node-x")]
    nodes.append(make_node("node-y", {"node": "node-y"}, taints=[UNSCHEDULABLE_TAINT] if taint_y else None))
    return nodes


@pytest.mark.parametrize(("pod", "nodes", "pods", "want"), SINGLE_CONSTRAINT)
def test_single_constraint(pod: Any, nodes: Any, pods: Any, want: list[Want]) -> None:
    assert run(pod(), pods(), nodes())[1] == want


MULTIPLE_CONSTRAINTS: list[Any] = [
    pytest.param(
        {"foo": ""},
        [constraint(1, "zone", FOO), constraint(1, "node", FOO)],
        zones4,
        lambda: foo_pods(*SPREAD_2103),
        [SKEW, SKEW, OK, SKEW],
        id="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
    ),
    pytest.param(
        {"foo": ""},
        [constraint(1, "zone", FOO), constraint(1, "node", FOO)],
        zones4,
        lambda: foo_pods(*SPREAD_2103, "node-y"),
        [SKEW, SKEW, SKEW, SKEW],
        id="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
    ),
    pytest.param(
        {"foo": "", "bar": ""},
        [constraint(1, "zone", FOO), constraint(1, "node", BAR)],
        zones4,
        lambda: [*foo_pods("node-a"), *foo_pods("node-y", labels={"bar": ""})],
        [SKEW, SKEW, OK, SKEW],
        id="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
    ),
    pytest.param(
        {"foo": "", "bar": ""},
        [constraint(1, "zone", FOO), constraint(1, "node", BAR)],
        zones4,
        lambda: [*foo_pods("node-a"), *foo_pods("node-x", "node-y", labels={"bar": ""})],
        [SKEW, SKEW, SKEW, SKEW],
        id="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
    ),
    pytest.param(
        {"foo": "", "bar": ""},
        [constraint(1, "zone", FOO), constraint(1, "node", BAR)],
        zones4,
        lambda: [
            *foo_pods("node-a", "node-y", "node-y"),
            *foo_pods("node-a", "node-y", labels={"foo": "", "bar": ""}),
        ],
        [SKEW, OK, SKEW, SKEW],
        id="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
    ),
    pytest.param(
        {"bar": ""},
        [constraint(1, "zone", FOO), constraint(1, "node", BAR)],
        zones4,
        lambda: [*foo_pods("node-a"), *foo_pods("node-x", "node-y", labels={"bar": ""})],
        [OK, OK, SKEW, SKEW],
        id="Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
    ),
    pytest.param(
        {"foo": ""},
        [constraint(1, "zone", FOO), constraint(1, "node", FOO)],
        lambda: [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        lambda: foo_pods("node-a", "node-y"),
        [SKEW, OK, NOLABEL, SKEW],
        id="two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
    ),
]


def _inclusion_nodes(*, b_foo: bool) -> list[NodeInfo]:
    """node-a/node-b in zone1, node-x/node-y in zone2; foo on node-a, node-x (and node-b with `b_foo`); node-y
    tainted unschedulable, labelled foo unless node-b is."""
    return [
        make_node("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}),
        make_node("node-b", {"zone": "zone1", "node": "node-b", **({"foo": ""} if b_foo else {})}),
        make_node("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}),
        make_node(
            "node-y",
            {"zone": "zone2", "node": "node-y", **({} if b_foo else {"foo": ""})},
            taints=[UNSCHEDULABLE_TAINT],
        ),
    ]


FOO_ONLY = {"foo": ""}
MULTIPLE_CONSTRAINTS += [
    pytest.param(
        (FOO_ONLY, FOO_ONLY),
        [constraint(1, "zone", FOO), constraint(1, "node", FOO, nodeAffinityPolicy="Ignore")],
        lambda: [*_foo_zone_nodes()],
        lambda: foo_pods("node-a", "node-b", "node-y"),
        # node-y lacks foo: NodeAffinity rejects it before PodTopologySpread (upstream: Unschedulable)
        [SKEW, SKEW, OK, NODE_AFFINITY],
        id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
    ),
    pytest.param(
        (FOO_ONLY, None),
        [constraint(1, "zone", FOO, nodeTaintsPolicy="Honor"), constraint(1, "node", FOO)],
        lambda: [*_foo_zone_nodes(taint_y=True)],
        lambda: foo_pods("node-a", "node-b", "node-y"),
        # node-y is tainted: TaintToleration rejects it first (upstream: Unschedulable)
        [SKEW, SKEW, OK, TAINTED],
        id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
    ),
    pytest.param(
        (FOO_ONLY, FOO_ONLY),
        [constraint(1, "zone", FOO), constraint(1, "node", FOO)],
        lambda: _inclusion_nodes(b_foo=False),
        lambda: foo_pods("node-a", "node-b", "node-y"),
        # node-b lacks foo (upstream: Success, NodeAffinity not run); node-y tainted (upstream: Unschedulable)
        [SKEW, NODE_AFFINITY, OK, TAINTED],
        id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
    ),
    pytest.param(
        (FOO_ONLY, FOO_ONLY),
        [constraint(1, "zone", FOO, nodeTaintsPolicy="Honor"), constraint(1, "node", FOO, nodeAffinityPolicy="Ignore")],
        lambda: _inclusion_nodes(b_foo=False),
        lambda: foo_pods("node-a", "node-b", "node-y"),
        # upstream: node-b Unschedulable, node-y Unschedulable; here NodeAffinity and TaintToleration come first
        [SKEW, NODE_AFFINITY, OK, TAINTED],
        id="two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
    ),
]


def _foo_zone_nodes(*, taint_y: bool = False) -> list[NodeInfo]:
    """`zones4` with foo on node-a, node-b, node-x; node-y without it (tainted unschedulable with `taint_y`)."""
    nodes = zones4(node_a={"foo": ""}, node_b={"foo": ""}, node_x={"foo": ""})
    if taint_y:
        nodes[3] = make_node("node-y", {"zone": "zone2", "node": "node-y"}, taints=[UNSCHEDULABLE_TAINT])
    return nodes


@pytest.mark.parametrize(("labels", "constraints", "nodes", "pods", "want"), MULTIPLE_CONSTRAINTS)
def test_multiple_constraints(labels: Any, constraints: list[Obj], nodes: Any, pods: Any, want: list[Want]) -> None:
    """`labels` is the pod's labels, or (labels, nodeSelector)."""
    pod_labels, selector = labels if isinstance(labels, tuple) else (labels, None)
    extra = {"nodeSelector": selector} if selector else {}
    assert run(make_pod("p", labels=pod_labels, spread=constraints, **extra), pods(), nodes())[1] == want


def test_match_label_keys_narrow_the_selector_to_the_pods_own_values() -> None:
    """kjobs row: `matchLabelKeys` (v1.32's scheduler merges the pod's values into the selector) makes each Job's
    pods spread on their own — pods of another Job do not count."""
    spread = [constraint(1, "node", FOO, matchLabelKeys=["job"])]
    pod = make_pod("p", labels={"foo": "", "job": "one"}, spread=spread)
    pods = foo_pods("node-a", "node-a", labels={"foo": "", "job": "two"}) + foo_pods(
        "node-b", labels={"foo": "", "job": "one"}
    )
    nodes = [make_node(n, {"node": n}) for n in ("node-a", "node-b")]
    assert run(pod, pods, nodes)[1] == [OK, SKEW]


# ------------------------------------------------------------------------------------------------ NodePorts
# pkg/scheduler/framework/plugins/nodeports/node_ports_test.go


def port_pod(*ports: str, init: bool | None = None) -> PodInfo:
    """`newPod(host, "PROTO/IP/PORT", ...)`; `init` puts them on an init container (True: a sidecar)."""
    parsed = []
    for text in ports:
        protocol, ip, port = text.split("/")
        parsed.append({"containerPort": int(port), "hostIP": ip, "hostPort": int(port), "protocol": protocol})
    if init is None:
        return make_pod(containers=[{"name": "c", "image": "busybox", "ports": parsed}])
    init_container: Obj = {"name": "i", "image": "busybox", "ports": parsed}
    if init:
        init_container["restartPolicy"] = "Always"
    return make_pod(initContainers=[init_container])


NODE_PORTS: list[Any] = [
    pytest.param((), (), OK, id="skip filter"),
    pytest.param(("UDP/127.0.0.1/8080",), ("UDP/127.0.0.1/9090",), OK, id="other port"),
    pytest.param(("UDP/127.0.0.1/8080",), ("UDP/127.0.0.1/8080",), PORTS, id="same udp port"),
    pytest.param(("TCP/127.0.0.1/8080",), ("TCP/127.0.0.1/8080",), PORTS, id="same tcp port"),
    pytest.param(("TCP/127.0.0.1/8080",), ("TCP/127.0.0.2/8080",), OK, id="different host ip"),
    pytest.param(("UDP/127.0.0.1/8080",), ("TCP/127.0.0.1/8080",), OK, id="different protocol"),
    pytest.param(
        ("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"), ("UDP/127.0.0.1/8080",), PORTS, id="second udp port conflict"
    ),
    pytest.param(
        ("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
        ("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"),
        PORTS,
        id="first tcp port conflict",
    ),
    pytest.param(
        ("TCP/0.0.0.0/8001",), ("TCP/127.0.0.1/8001",), PORTS, id="first tcp port conflict due to 0.0.0.0 hostIP"
    ),
    pytest.param(
        ("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
        ("TCP/127.0.0.1/8001",),
        PORTS,
        id="TCP hostPort conflict due to 0.0.0.0 hostIP",
    ),
    pytest.param(
        ("TCP/127.0.0.1/8001",), ("TCP/0.0.0.0/8001",), PORTS, id="second tcp port conflict to 0.0.0.0 hostIP"
    ),
    pytest.param(("UDP/127.0.0.1/8001",), ("TCP/0.0.0.0/8001",), OK, id="second different protocol"),
    pytest.param(
        ("UDP/127.0.0.1/8001",),
        ("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"),
        PORTS,
        id="UDP hostPort conflict due to 0.0.0.0 hostIP",
    ),
    pytest.param(
        ("init", "TCP/0.0.0.0/8001"), ("TCP/0.0.0.0/8001",), OK, id="non-sidecar initContainer using hostPort"
    ),
    pytest.param(
        ("sidecar", "TCP/0.0.0.0/8001"),
        ("TCP/0.0.0.0/8001",),
        PORTS,
        id="TCP hostPort conflict from sidecar initContainer",
    ),
]


@pytest.mark.parametrize(("wanted", "used", "want"), NODE_PORTS)
def test_node_ports(wanted: tuple[str, ...], used: tuple[str, ...], want: Want) -> None:
    node = make_node("m1")
    if used:
        existing = port_pod(*used)
        existing.node_name = "m1"
        node.add_pod(existing)
    if wanted and wanted[0] in ("init", "sidecar"):
        pod = port_pod(*wanted[1:], init=wanted[0] == "sidecar")
    else:
        pod = port_pod(*wanted)
    status = filter_node(pod, node, (), prefilter(pod, [node], {}))
    assert (None if status is None else (status.reasons, status.resolvable)) == want


# ------------------------------------------------------------------------------------------------ end to end


def test_indexed_job_with_hostname_anti_affinity_runs_one_pod_per_node() -> None:
    """`kjobs up --nodes 4` and an Indexed Job of parallelism 5 whose pods must not share a host: four run, one on
    each node, and the fifth stays Pending with kube-scheduler's FailedScheduling message."""

    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        for i in range(4):
            name = f"node-{i}"
            await client.create(
                NODES,
                None,
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                    "status": {
                        "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                        "conditions": [{"type": "Ready", "status": "True"}],
                    },
                },
            )
        sched = Scheduler(client, clock=clock)
        jobs = JobController(client, clock=clock)
        await sched.start()
        await jobs.start()
        anti = {"labelSelector": {"matchLabels": {"app": "solo"}}, "topologyKey": "kubernetes.io/hostname"}
        template = {
            "metadata": {"labels": {"app": "solo"}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "main", "image": "busybox"}],
                "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [anti]}},
            },
        }
        await client.create(
            JOBS,
            "default",
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "solo", "namespace": "default"},
                "spec": {"completionMode": "Indexed", "completions": 5, "parallelism": 5, "template": template},
            },
        )

        def pending() -> list[Obj]:
            return [p for p in sched.pods.list() if not p["spec"].get("nodeName")]

        await settle(
            clock,
            lambda: (
                len(sched.pods.list()) == 5
                and len(pending()) == 1
                and any(
                    c.get("reason") == "Unschedulable"
                    for c in (pending()[0].get("status") or {}).get("conditions") or ()
                )
            ),
        )
        bound = sorted(p["spec"]["nodeName"] for p in sched.pods.list() if p["spec"].get("nodeName"))
        assert bound == ["node-0", "node-1", "node-2", "node-3"]
        waiting = pending()[0]["metadata"]["name"]
        await sched.events.flush()
        events, _ = await client.list(EVENTS, "default")
        messages = [
            e["message"] for e in events if e["reason"] == "FailedScheduling" and e["involvedObject"]["name"] == waiting
        ]
        assert messages == [
            "0/4 nodes are available: 4 node(s) didn't match pod anti-affinity rules. "
            "preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
        ]
        await jobs.stop()
        await sched.stop()

    asyncio.run(scenario())


def test_preemption_removes_the_lower_priority_pod_that_anti_affinity_rejects() -> None:
    """kjobs row (the plugins' RemovePod/AddPod in preemption): anti-affinity failures are Unschedulable, so a
    higher-priority pod preempts the lower-priority pod its anti-affinity term matches, and only that one; an unmet
    pod affinity is UnschedulableAndUnresolvable and preempts nothing."""
    nodes = [make_node("a", {"kubernetes.io/hostname": "a"})]
    clash = make_pod("clash", labels={"app": "web"}, node="a")
    other = make_pod("other", labels={"app": "db"}, node="a")
    for p in (clash, other):
        p.priority = -1
        nodes[0].add_pod(p)
    hostname = "kubernetes.io/hostname"
    incoming = make_pod("in", anti=[term("app", "In", hostname, ["web"])])
    incoming.priority = 10
    cycle = prefilter(incoming, nodes, {})
    status = filter_node(incoming, nodes[0], (), cycle)
    assert status is not None and status.resolvable
    result = preempt(incoming, nodes, {"a": status}, nominated={}, pdbs=[], now=0.0, cycle=cycle)
    assert result.candidate is not None and [v.name for v in result.candidate.victims] == ["clash"]

    needy = make_pod("needy", affinity=[term("app", "In", hostname, ["cache"])])
    needy.priority = 10
    cycle = prefilter(needy, nodes, {})
    status = filter_node(needy, nodes[0], (), cycle)
    assert status is not None and (status.reasons, status.resolvable) == AFF
    result = preempt(needy, nodes, {"a": status}, nominated={}, pdbs=[], now=0.0, cycle=cycle)
    assert result.candidate is None
    assert result.message == "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
