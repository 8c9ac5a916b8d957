"""Upstream score rows for the plugins that read other pods — InterPodAffinity and PodTopologySpread — run through
kjobs' scoring (`inter_pod_affinity_scores`, `topology_spread_scores`: PreScore, Score and NormalizeScore of one
plugin, as upstream's tests call them), plus one Indexed Job spread by preferred anti-affinity through the real
scheduler.

One test per upstream Test function; rows keep their upstream names as ids. Each row checks every node's
normalised plugin score, or that PreScore skips (None). Sources, commits and rows left out:
docs/upstream-scheduler.md.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.client.resources import JOBS, NODES, SERVICES
from kjobs.clock import FakeClock
from kjobs.controllers.interpod import default_spread_selector, inter_pod_affinity_scores, topology_spread_scores
from kjobs.controllers.job import JobController
from kjobs.controllers.scheduler import Scheduler
from kjobs.controllers.scheduling import NodeInfo, PodInfo, pod_info
from tests.controllers.test_upstream_scheduler_affinity import make_node
from tests.support import local_api, settle

MAX = 100
NAMESPACES = {
    "subteam1.team1": {"team": "team1"},
    "subteam2.team1": {"team": "team1"},
    "subteam1.team2": {"team": "team2"},
    "subteam2.team2": {"team": "team2"},
}
_UID = [0]


def pod(
    node: str = "",
    *,
    namespace: str = "",
    labels: dict[str, str] | None = None,
    affinity: Obj | None = None,
    terminating: bool = False,
    **spec: Any,
) -> PodInfo:
    _UID[0] += 1
    full: Obj = {"containers": [{"name": "c", "image": "busybox"}], **spec}
    if affinity is not None:
        full["affinity"] = affinity
    if node:
        full["nodeName"] = node
    meta: Obj = {"name": f"p{_UID[0]}", "namespace": namespace, "uid": f"uid-{_UID[0]}", "labels": labels or {}}
    if terminating:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return pod_info({"metadata": meta, "spec": full}, priority=0, preempt_never=False)


def place(nodes: list[NodeInfo], pods: list[PodInfo]) -> list[NodeInfo]:
    by_name = {n.name: n for n in nodes}
    for p in pods:
        if p.node_name in by_name:
            by_name[p.node_name].add_pod(p)
    return nodes


# ------------------------------------------------------------------------------------------------ InterPodAffinity
# pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go

CHINA = {"region": "China"}
INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}
TEAM1 = {"matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]}


def _in(key: str, *values: str) -> Obj:
    return {"key": key, "operator": "In", "values": list(values)}


def _weighted(weight: int, expressions: list[Obj], topology: str, **extra: Any) -> Obj:
    return {
        "weight": weight,
        "podAffinityTerm": {"labelSelector": {"matchExpressions": expressions}, "topologyKey": topology, **extra},
    }


def _preferred(affinity: list[Obj] | None = None, anti: list[Obj] | None = None) -> Obj:
    result: Obj = {}
    if affinity is not None:
        result["podAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": affinity}
    if anti is not None:
        result["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": anti}
    return result


STAY_S1_REGION = _preferred([_weighted(5, [_in("security", "S1")], "region")])
STAY_S2_REGION = _preferred([_weighted(6, [_in("security", "S2")], "region")])
AFFINITY3 = _preferred(
    [
        _weighted(8, [{"key": "security", "operator": "NotIn", "values": ["S1"]}, _in("security", "S2")], "region"),
        _weighted(
            2,
            [{"key": "security", "operator": "Exists"}, {"key": "wrongkey", "operator": "DoesNotExist"}],
            "region",
        ),
    ]
)
HARD_AFFINITY = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchExpressions": [_in("security", "S1", "value2")]}, "topologyKey": "region"},
            {
                "labelSelector": {
                    "matchExpressions": [
                        {"key": "security", "operator": "Exists"},
                        {"key": "wrongkey", "operator": "DoesNotExist"},
                    ]
                },
                "topologyKey": "region",
            },
        ]
    }
}
AWAY_S1_AZ = _preferred(anti=[_weighted(5, [_in("security", "S1")], "az")])
AWAY_S2_AZ = _preferred(anti=[_weighted(5, [_in("security", "S2")], "az")])
STAY_S1_REGION_AWAY_S2_AZ = _preferred(
    [_weighted(8, [_in("security", "S1")], "region")], [_weighted(5, [_in("security", "S2")], "az")]
)
_NS_TERM = {"namespaces": ["subteam2.team2"], "namespaceSelector": TEAM1}
AFFINITY_NS_SELECTOR = _preferred([_weighted(5, [_in("security", "S1")], "region", **_NS_TERM)])
ANTI_NS_SELECTOR = _preferred(anti=[_weighted(5, [_in("security", "S1")], "region", **_NS_TERM)])


def _n(*labels: dict[str, str]) -> list[NodeInfo]:
    return [make_node(f"node{i + 1}", dict(node_labels)) for i, node_labels in enumerate(labels)]


PREFERRED: list[Any] = [
    pytest.param(
        lambda: pod(labels=S1),
        [],
        _n(CHINA, INDIA, AZ1),
        False,
        None,
        id="all nodes are same priority as Affinity is nil",
    ),
    pytest.param(
        lambda: pod(labels=S1, affinity=STAY_S1_REGION),
        [("node1", S1, None), ("node2", S2, None), ("node3", S1, None)],
        _n(CHINA, INDIA, AZ1),
        False,
        [MAX, 0, 0],
        id="Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
        "which doesn't match either pods in nodes or in topology key",
    ),
    pytest.param(
        lambda: pod(affinity=STAY_S1_REGION),
        [("node1", S1, None)],
        _n(CHINA, CHINA_AZ1, INDIA),
        False,
        [MAX, MAX, 0],
        id="All the nodes that have the same topology key & label value with one of them has an existing pod that "
        "match the affinity rules, have the same score",
    ),
    pytest.param(
        lambda: pod(labels=S1, affinity=STAY_S2_REGION),
        [("node1", S2, None), ("node1", S2, None), *[(f"node{i}", S2, None) for i in range(2, 6)]],
        _n(CHINA, INDIA, CHINA, CHINA, INDIA),
        False,
        [MAX, 0, MAX, MAX, 0],
        id="Affinity: nodes in one region has more matching pods comparing to other region, so the region which has "
        "more matches will get high score",
    ),
    pytest.param(
        lambda: pod(labels=S1, affinity=AFFINITY3),
        [("node1", S1, None), ("node2", S2, None), ("node3", S1, None)],
        _n(CHINA, INDIA, AZ1),
        False,
        [20, MAX, 0],
        id="Affinity: different Label operators and values for pod affinity scheduling preference, including some "
        "match failures ",
    ),
    pytest.param(
        lambda: pod(labels=S2),
        [("node1", S1, STAY_S1_REGION), ("node2", S2, STAY_S2_REGION)],
        _n(CHINA, INDIA, AZ1),
        False,
        [0, MAX, 0],
        id="Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity "
        "symmetry",
    ),
    pytest.param(
        lambda: pod(namespace="subteam1.team1", labels=S1),
        [("node1", S1, AFFINITY_NS_SELECTOR), ("node2", S2, STAY_S2_REGION)],
        _n(CHINA, INDIA, AZ1),
        False,
        [MAX, 0, 0],
        id="Affinity symmetry with namespace selector",
    ),
    pytest.param(
        lambda: pod(namespace="subteam1.team1", labels=S1),
        [("node1", S1, ANTI_NS_SELECTOR), ("node2", S2, STAY_S2_REGION)],
        _n(CHINA, INDIA, AZ1),
        False,
        [0, MAX, MAX],
        id="AntiAffinity symmetry with namespace selector",
    ),
    pytest.param(
        lambda: pod(labels=S1),
        [("node1", S1, HARD_AFFINITY), ("node2", S2, HARD_AFFINITY)],
        _n(CHINA, INDIA, AZ1),
        False,
        [MAX, MAX, 0],
        id="Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
    ),
    pytest.param(
        lambda: pod(labels=S1, affinity=AWAY_S1_AZ),
        [("node1", S1, None), ("node2", S2, None)],
        _n(AZ1, CHINA),
        False,
        [0, MAX],
        id="Anti Affinity: pod that does not match existing pods in node will get high score ",
    ),
    pytest.param(
        lambda: pod(labels=S1, affinity=AWAY_S1_AZ),
        [("node1", S1, None), ("node2", S1, None)],
        _n(AZ1, CHINA),
        False,
        [0, MAX],
        id="Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score "
        "comparing to others ",
    ),
    pytest.param(
        lambda: pod(labels=S1, affinity=AWAY_S1_AZ),
        [("node1", S1, None), ("node1", S1, None), ("node2", S2, None)],
        _n(AZ1, INDIA),
        False,
        [0, MAX],
        id="Anti Affinity: one node has more matching pods comparing to other node, so the node which has more "
        "unmatches will get high score",
    ),
    pytest.param(
        lambda: pod(labels=S2),
        [("node1", S1, AWAY_S2_AZ), ("node2", S2, AWAY_S1_AZ)],
        _n(AZ1, AZ2),
        False,
        [0, MAX],
        id="Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
    ),
    pytest.param(
        lambda: pod(labels=S1, affinity=STAY_S1_REGION_AWAY_S2_AZ),
        [("node1", S1, None), ("node2", S1, None)],
        _n(CHINA, AZ1),
        False,
        [MAX, 0],
        id="Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod "
        "affinity & anti affinity",
    ),
    pytest.param(
        lambda: pod(labels=S1, affinity=STAY_S1_REGION_AWAY_S2_AZ),
        [(n, S1, None) for n in ("node1", "node1", "node2", "node3", "node3", "node4", "node5")],
        _n(CHINA_AZ1, INDIA, CHINA, CHINA, INDIA),
        False,
        [MAX, 0, MAX, MAX, 0],
        id="Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing "
        "pods have the same labels",
    ),
    pytest.param(
        lambda: pod(labels=S1, affinity=STAY_S1_REGION_AWAY_S2_AZ),
        [
            ("node1", S1, None),
            ("node2", S2, None),
            ("node3", None, STAY_S1_REGION_AWAY_S2_AZ),
            ("node4", None, AWAY_S1_AZ),
        ],
        _n(CHINA, AZ1, INDIA, AZ2),
        False,
        [MAX, 0, MAX, 0],
        id="Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution "
        "in both pod affinity & anti affinity & symmetry",
    ),
    pytest.param(
        lambda: pod(labels=S1),
        [("node1", S1, None), ("node2", None, STAY_S1_REGION_AWAY_S2_AZ)],
        _n(CHINA, CHINA),
        False,
        [0, 0],
        id="Avoid panic when partial nodes in a topology don't have pods with affinity",
    ),
    pytest.param(
        lambda: pod(namespace="subteam1.team1", labels=S1, affinity=AFFINITY_NS_SELECTOR),
        [
            ("node1", S1, None, "subteam1.team1"),
            ("node1", S1, None, "subteam1.team1"),
            ("node1", S1, None, "subteam1.team2"),
            ("node2", S1, None, "subteam2.team1"),
        ],
        _n(CHINA, INDIA),
        False,
        [MAX, 0],
        id="Affinity with pods matching NamespaceSelector",
    ),
    pytest.param(
        lambda: pod(namespace="subteam1.team1", labels=S1, affinity=AFFINITY_NS_SELECTOR),
        [
            ("node1", S1, None, "subteam1.team1"),
            ("node1", S1, None, "subteam1.team1"),
            ("node1", S1, None, "subteam2.team2"),
            ("node2", S1, None, "subteam2.team1"),
        ],
        _n(CHINA, INDIA),
        False,
        [MAX, 0],
        id="Affinity with pods matching both NamespaceSelector and Namespaces fields",
    ),
    pytest.param(
        lambda: pod(namespace="subteam1.team1", labels=S1, affinity=ANTI_NS_SELECTOR),
        [
            ("node1", S1, None, "subteam1.team1"),
            ("node1", S1, None, "subteam1.team1"),
            ("node1", S1, None, "subteam1.team2"),
            ("node2", S1, None, "subteam2.team1"),
        ],
        _n(CHINA, INDIA),
        False,
        [0, MAX],
        id="Affinity with pods matching NamespaceSelector (anti-affinity, second row of that name)",
    ),
    pytest.param(
        lambda: pod(namespace="subteam1.team1", labels=S1, affinity=ANTI_NS_SELECTOR),
        [
            ("node1", S1, None, "subteam1.team1"),
            ("node1", S1, None, "subteam1.team1"),
            ("node1", S1, None, "subteam2.team2"),
            ("node2", S1, None, "subteam2.team1"),
        ],
        _n(CHINA, INDIA),
        False,
        [0, MAX],
        id="Affinity with pods matching both NamespaceSelector and Namespaces fields (anti-affinity, second row of "
        "that name)",
    ),
    pytest.param(
        lambda: pod(labels=S2),
        [("node1", S1, STAY_S1_REGION_AWAY_S2_AZ), ("node2", S2, STAY_S2_REGION)],
        _n(CHINA, INDIA),
        True,
        None,
        id="Ignore preferred terms of existing pods",
    ),
    pytest.param(
        lambda: pod(labels=S2),
        [("node1", S1, STAY_S1_REGION_AWAY_S2_AZ), ("node2", S2, STAY_S2_REGION)],
        _n(CHINA, INDIA),
        False,
        [0, MAX],
        id="Do not ignore preferred terms of existing pods",
    ),
    pytest.param(lambda: pod(labels=S2), [], [], False, None, id="No nodes to score"),
]


def _existing(rows: list[tuple[Any, ...]]) -> list[PodInfo]:
    result = []
    for row in rows:
        node, labels, affinity = row[:3]
        namespace = row[3] if len(row) > 3 else ""
        result.append(pod(node, namespace=namespace, labels=labels, affinity=affinity))
    return result


@pytest.mark.parametrize(("incoming", "pods", "nodes", "ignore", "want"), PREFERRED)
def test_preferred_affinity(incoming: Any, pods: Any, nodes: list[NodeInfo], ignore: bool, want: Any) -> None:
    place(nodes, _existing(pods))
    got = inter_pod_affinity_scores(
        incoming(), nodes, nodes, NAMESPACES, ignore_preferred_terms_of_existing_pods=ignore
    )
    assert got == want


HARD_POD_AFFINITY = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {"matchExpressions": [_in("service", "S1")]},
                "namespaces": ["", "subteam2.team2"],
                "namespaceSelector": TEAM1,
                "topologyKey": "region",
            }
        ]
    }
}


@pytest.mark.parametrize(
    ("namespace", "weight", "want"),
    [
        pytest.param("", 1, [MAX, MAX, 0], id="with default weight"),
        pytest.param("", 0, None, id="with zero weight"),
        pytest.param("subteam1.team2", 1, None, id="with no matching namespace"),
        pytest.param("subteam1.team1", 1, [MAX, MAX, 0], id="with matching NamespaceSelector"),
        pytest.param("subteam2.team2", 1, [MAX, MAX, 0], id="with matching Namespaces"),
    ],
)
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(namespace: str, weight: int, want: Any) -> None:
    nodes = place(
        _n(CHINA, INDIA, AZ1), [pod("node1", affinity=HARD_POD_AFFINITY), pod("node2", affinity=HARD_POD_AFFINITY)]
    )
    incoming = pod(namespace=namespace, labels={"service": "S1"})
    assert inter_pod_affinity_scores(incoming, nodes, nodes, NAMESPACES, hard_pod_affinity_weight=weight) == want


# ------------------------------------------------------------------------------------------------ end to end


@pytest.mark.parametrize(
    ("mode", "want"),
    [
        pytest.param(
            "anti-affinity", {"node-0": 2, "node-1": 2, "node-2": 2, "node-3": 2}, id="preferred anti-affinity"
        ),
        pytest.param("service", {"node-0": 2, "node-1": 2, "node-2": 2, "node-3": 2}, id="selected by a Service"),
        pytest.param("plain", {"node-0": 8}, id="neither"),
    ],
)
def test_indexed_job_with_preferred_hostname_anti_affinity_spreads_two_pods_per_node(
    mode: str, want: dict[str, int]
) -> None:
    """`kjobs up --nodes 4` and an Indexed Job of 8 pods that prefer not to share a host: each pod goes where the
    fewest of its siblings run (InterPodAffinity's score, weight 2, outweighs the resource scores), so the Job ends
    with two pods on every node. node-0 has more CPU and memory, so without a spreading score LeastAllocated puts
    all eight there ("neither": a Job is not one of the owners whose pods get the system default spreading). A
    Service selecting the pods gives them the system default constraints (hostname maxSkew 3), which spread them
    too."""

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
                        "allocatable": {
                            "cpu": "64" if i == 0 else "4",
                            "memory": "256Gi" if i == 0 else "8Gi",
                            "pods": "110",
                        },
                        "conditions": [{"type": "Ready", "status": "True"}],
                    },
                },
            )
        if mode == "service":
            await client.create(
                SERVICES,
                "default",
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {"name": "spread", "namespace": "default"},
                    "spec": {"selector": {"app": "spread"}, "ports": [{"port": 80}]},
                },
            )
        sched = Scheduler(client, clock=clock)
        jobs = JobController(client, clock=clock)
        await sched.start()
        await jobs.start()
        anti = {
            "weight": 100,
            "podAffinityTerm": {
                "labelSelector": {"matchLabels": {"app": "spread"}},
                "topologyKey": "kubernetes.io/hostname",
            },
        }
        spec: Obj = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}
        if mode == "anti-affinity":
            spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [anti]}}
        template = {"metadata": {"labels": {"app": "spread"}}, "spec": spec}
        await client.create(
            JOBS,
            "default",
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "spread", "namespace": "default"},
                "spec": {"completionMode": "Indexed", "completions": 8, "parallelism": 8, "template": template},
            },
        )
        await settle(
            clock,
            lambda: len(sched.pods.list()) == 8 and all(p["spec"].get("nodeName") for p in sched.pods.list()),
        )
        placed = Counter(p["spec"]["nodeName"] for p in sched.pods.list())
        assert placed == want
        await jobs.stop()
        await sched.stop()

    asyncio.run(scenario())


# ------------------------------------------------------------------------------------------------ PodTopologySpread
# pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go

HOST = "kubernetes.io/hostname"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}


def _soft(skew: int, key: str, selector: Obj | None = FOO) -> Obj:
    c: Obj = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "ScheduleAnyway"}
    if selector is not None:
        c["labelSelector"] = selector
    return c


def _hosts(*names: str, zones: dict[str, str] | None = None) -> list[NodeInfo]:
    result = []
    for name in names:
        labels = {"n": name} if name.startswith("!") else {HOST: name}
        if zones and name in zones:
            labels["zone"] = zones[name]
        result.append(make_node(name.lstrip("!"), labels))
    return result


def _foo_on(*spec: str) -> list[PodInfo]:
    """`node-a:2` → two pods labelled foo on node-a."""
    pods = []
    for item in spec:
        node, count = item.split(":")
        pods.extend(pod(node, labels={"foo": ""}) for _ in range(int(count)))
    return pods


SPREAD: list[Any] = [
    pytest.param(
        [_soft(1, HOST)],
        [],
        _hosts("node-a", "node-b"),
        0,
        False,
        [100, 100],
        id="one constraint on node, no existing pods",
    ),
    pytest.param(
        [_soft(1, HOST)],
        ["node-a:2", "node-b:1"],
        _hosts("node-a", "node-b"),
        1,
        False,
        [100],
        id="one constraint on node, only one node is candidate",
    ),
    pytest.param(
        [_soft(1, HOST)],
        ["node-a:1", "node-b:1"],
        _hosts("node-a", "node-b"),
        0,
        False,
        [100, 100],
        id="one constraint on node, all nodes have the same number of matching pods",
    ),
    pytest.param(
        [_soft(1, HOST)],
        ["node-a:2", "node-b:1", "node-d:3"],
        _hosts("node-a", "node-b", "node-c", "node-d"),
        0,
        False,
        [20, 60, 100, 0],
        id="one constraint on node, all 4 nodes are candidates",
    ),
    pytest.param(
        [_soft(1, HOST, None)],
        ["node-a:2", "node-b:1", "node-d:3"],
        _hosts("node-a", "node-b", "node-c", "node-d"),
        0,
        False,
        [100, 100, 100, 100],
        id="one constraint on node, null selector",
    ),
    pytest.param(
        [_soft(2, HOST)],
        ["node-a:2", "node-b:1", "node-d:3"],
        _hosts("node-a", "node-b", "node-c", "node-d"),
        0,
        False,
        [33, 66, 100, 16],
        id="one constraint on node, all 4 nodes are candidates, maxSkew=2",
    ),
    pytest.param(
        [_soft(3, HOST)],
        ["node-a:4", "node-b:3", "node-c:2", "node-d:1"],
        _hosts("node-a", "node-b", "node-c", "node-d"),
        0,
        False,
        [44, 66, 77, 100],
        id="one constraint on node, all 4 nodes are candidates, maxSkew=3",
    ),
    pytest.param(
        [],
        ["node-a:4", "node-b:3", "node-c:2", "node-d:1"],
        _hosts("node-a", "node-b", "node-c", "node-d"),
        0,
        True,
        [44, 66, 77, 100],
        id="system defaulting, nodes don't have zone, pods match service",
    ),
    pytest.param(
        [_soft(1, HOST)],
        ["node-a:4", "node-b:2", "node-x:1", "node-y:3"],
        _hosts("node-a", "node-b", "node-x", "node-y"),
        1,
        False,
        [33, 83, 100],
        id="one constraint on node, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        [_soft(1, HOST)],
        ["node-a:4", "node-b:2", "node-x:1", "node-y:3"],
        _hosts("node-a", "!node-b", "node-x", "node-y"),
        1,
        False,
        [16, 0, 100],
        id="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
    ),
    pytest.param(
        [_soft(1, "zone")],
        ["node-a:4", "node-b:2", "node-x:1", "node-y:3"],
        _hosts(
            "node-a",
            "node-b",
            "node-x",
            "node-y",
            zones={"node-a": "zone1", "node-b": "zone1", "node-x": "zone2", "node-y": "zone2"},
        ),
        1,
        False,
        [75, 75, 100],
        id="one constraint on zone, 3 out of 4 nodes are candidates",
    ),
]


@pytest.mark.parametrize(("constraints", "pods", "nodes", "failed", "service", "want"), SPREAD)
def test_pod_topology_spread_score(
    constraints: list[Obj], pods: list[str], nodes: list[NodeInfo], failed: int, service: bool, want: list[int]
) -> None:
    """`failed`: how many of the last nodes failed the filters (their pods still count). `service`: a Service
    in the pod's namespace selects `foo=` (the system default constraints apply)."""
    place(nodes, _foo_on(*pods))
    incoming = (
        pod(labels={"foo": ""}, topologySpreadConstraints=constraints) if constraints else pod(labels={"foo": ""})
    )
    selector = default_spread_selector(incoming, {"": {"svc": {"foo": ""}}}) if service else None
    feasible = nodes[: len(nodes) - failed]
    assert topology_spread_scores(incoming, feasible, nodes, selector) == want


BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
FOO_BAR = {"foo": "", "bar": ""}
UNSCHEDULABLE_TAINT = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]


def _zoned(*names: str) -> list[NodeInfo]:
    """`node-a`, `node-b` in zone1, the others in zone2, each with its hostname label."""
    zone = {"node-a": "zone1", "node-b": "zone1"}
    return [make_node(n, {"zone": zone.get(n, "zone2"), HOST: n}) for n in names]


def _by_node_label(*, taint_c: bool = False) -> list[NodeInfo]:
    """node-a and node-b carry `foo=`; every node has `node=<name>`; node-c may be tainted NoSchedule."""
    return [
        make_node("node-a", {"node": "node-a", "foo": ""}),
        make_node("node-b", {"node": "node-b", "foo": ""}),
        make_node("node-c", {"node": "node-c"}, UNSCHEDULABLE_TAINT if taint_c else None),
    ]


def _labelled(*spec: tuple[str, dict[str, str]]) -> list[PodInfo]:
    return [pod(node, labels=labels) for node, labels in spec]


_NODE_SPREAD_PODS = [("node-a", {"foo": ""}), ("node-a", {"foo": ""}), ("node-b", {"foo": ""}), ("node-c", {"foo": ""})]
_TWO_SELECTOR_PODS = [
    ("node-a", {"foo": ""}),
    ("node-b", FOO_BAR),
    ("node-y", {"foo": ""}),
    ("node-y", {"bar": ""}),
]
_TWO_SELECTORS = [_soft(1, "zone", FOO), _soft(1, HOST, BAR)]
_FOO_IN = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": [""]}]}]}

SPREAD_MORE: list[Any] = [
    pytest.param(
        {"labels": {"foo": ""}, "topologySpreadConstraints": [_soft(1, "zone"), _soft(1, HOST)]},
        _foo_on("node-a:2", "node-b:1", "node-x:2", "node-y:4"),
        _zoned("node-a", "node-x", "node-b", "node-y"),
        2,
        [100, 63],
        id="two Constraints on zone and node, 2 out of 4 nodes are candidates",
    ),
    pytest.param(
        {"labels": FOO_BAR, "topologySpreadConstraints": _TWO_SELECTORS},
        _labelled(*_TWO_SELECTOR_PODS),
        _zoned("node-a", "node-b", "node-x", "node-y"),
        0,
        [60, 20, 100, 60],
        id="two Constraints on zone and node, with different labelSelectors",
    ),
    pytest.param(
        {"labels": FOO_BAR, "topologySpreadConstraints": _TWO_SELECTORS},
        _labelled(("node-b", {"bar": ""}), ("node-x", {"foo": ""}), ("node-y", FOO_BAR)),
        _zoned("node-a", "node-b", "node-x", "node-y"),
        0,
        [100, 60, 40, 0],
        id="two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
    ),
    pytest.param(
        {"labels": FOO_BAR, "topologySpreadConstraints": _TWO_SELECTORS},
        _labelled(*_TWO_SELECTOR_PODS),
        _zoned("node-a", "node-b", "node-x", "node-y"),
        1,
        [50, 25, 100],
        id="two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        {"labels": {"foo": ""}, "topologySpreadConstraints": [_soft(1, HOST)]},
        [pod("node-a", namespace="ns1", labels={"foo": ""}), *_foo_on("node-a:1", "node-b:2")],
        _hosts("node-a", "node-b"),
        0,
        [100, 33],
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        {"labels": {"foo": ""}, "topologySpreadConstraints": [_soft(1, HOST)]},
        [pod("node-a", labels={"foo": ""}, terminating=True), *_foo_on("node-b:1")],
        _hosts("node-a", "node-b"),
        0,
        [100, 0],
        id="terminating Pods should be excluded",
    ),
    pytest.param(
        {"labels": {"foo": ""}, "topologySpreadConstraints": [{**_soft(2, "node"), "minDomains": 10}]},
        _foo_on("node-a:2", "node-b:2", "node-c:1"),
        [make_node(n, {"node": n}) for n in ("node-a", "node-b", "node-c")],
        0,
        [75, 75, 100],
        id="minDomains has no effect when ScheduleAnyway",
    ),
    pytest.param(
        {"labels": {"foo": ""}, "nodeSelector": {"foo": ""}, "topologySpreadConstraints": [_soft(1, "node")]},
        _labelled(*_NODE_SPREAD_PODS),
        _by_node_label(),
        0,
        [0, 33, 100],
        id="NodeAffinityPolicy honoed with labelSelectors",
    ),
    pytest.param(
        {
            "labels": {"foo": ""},
            "nodeSelector": {"foo": ""},
            "topologySpreadConstraints": [{**_soft(1, "node"), "nodeAffinityPolicy": "Ignore"}],
        },
        _labelled(*_NODE_SPREAD_PODS),
        _by_node_label(),
        0,
        [66, 100, 100],
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        {
            "labels": {"foo": ""},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": _FOO_IN}},
            "topologySpreadConstraints": [_soft(1, "node")],
        },
        _labelled(*_NODE_SPREAD_PODS),
        _by_node_label(),
        0,
        [0, 33, 100],
        id="NodeAffinityPolicy honoed with nodeAffinity",
    ),
    pytest.param(
        {
            "labels": {"foo": ""},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": _FOO_IN}},
            "topologySpreadConstraints": [{**_soft(1, "node"), "nodeAffinityPolicy": "Ignore"}],
        },
        _labelled(*_NODE_SPREAD_PODS),
        _by_node_label(),
        0,
        [66, 100, 100],
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        {"labels": {"foo": ""}, "topologySpreadConstraints": [{**_soft(1, "node"), "nodeTaintsPolicy": "Honor"}]},
        _labelled(*_NODE_SPREAD_PODS),
        _by_node_label(taint_c=True),
        0,
        [0, 33, 100],
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        {"labels": {"foo": ""}, "topologySpreadConstraints": [_soft(1, "node")]},
        _labelled(*_NODE_SPREAD_PODS),
        _by_node_label(taint_c=True),
        0,
        [66, 100, 100],
        id="NodeTaintsPolicy ignored",
    ),
    pytest.param(
        {
            "labels": FOO_BAR,
            "topologySpreadConstraints": [
                {**_soft(1, "zone", {}), "matchLabelKeys": ["foo"]},
                {**_soft(1, HOST, {}), "matchLabelKeys": ["bar"]},
            ],
        },
        _labelled(("node-a", {"foo": ""}), ("node-b", FOO_BAR), ("node-c", {"foo": ""}), ("node-c", {"bar": ""})),
        _zoned("node-a", "node-b", "node-c", "node-d"),
        0,
        [60, 20, 60, 100],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
    ),
    pytest.param(
        {
            "labels": {"foo": "", "bar": "", "baz": ""},
            "topologySpreadConstraints": [_soft(1, "zone", FOO), {**_soft(1, HOST, BAR), "matchLabelKeys": ["baz"]}],
        },
        _labelled(
            ("node-a", {"foo": ""}),
            ("node-b", {"foo": "", "bar": "", "baz": ""}),
            ("node-c", {"foo": ""}),
            ("node-c", {"bar": ""}),
            ("node-c", {"bar": "", "baz": ""}),
        ),
        _zoned("node-a", "node-b", "node-c", "node-d"),
        0,
        [60, 20, 60, 100],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
    ),
]


@pytest.mark.parametrize(("incoming", "pods", "nodes", "failed", "want"), SPREAD_MORE)
def test_pod_topology_spread_score_rows_with_specs(
    incoming: Obj, pods: list[PodInfo], nodes: list[NodeInfo], failed: int, want: list[int]
) -> None:
    """The rest of `TestPodTopologySpreadScore` (same test function upstream; rows with node and pod specs that
    need more than `_foo_on`). `failed`: the last nodes, whose pods count but which are not scored."""
    place(nodes, pods)
    spec = dict(incoming)
    labels = spec.pop("labels")
    got = topology_spread_scores(pod(labels=labels, **spec), nodes[: len(nodes) - failed], nodes)
    assert got == want
