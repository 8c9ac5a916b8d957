"""Upstream filter-plugin rows run against kjobs' scheduler filtering (`filter_node`, `fit_error`).

One test per upstream Test function; the rows keep their upstream names as ids. Upstream calls one plugin's
`Filter` on a `NodeInfo`; here the pod goes through all of kjobs' filters (`filter_node`, which the scheduler
runs for every node), so a node built only to fail one plugin fails with that plugin's reason and passes the
others. Nodes are Ready (kjobs, like the node lifecycle controller, treats a node without a Ready condition as
not-ready and tainted) and have room for the pods of rows that do not test resources. Sources, commits, and the
rows left out: docs/upstream-scheduler.md.
"""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.controllers.scheduling import NodeInfo, PodInfo, filter_node, fit_error, pod_info

AFFINITY_REASON = "node(s) didn't match Pod's node affinity/selector"
ROOMY = {"cpu": "64", "memory": "64Gi", "pods": "110"}


def make_node(
    name: str = "node",
    *,
    labels: dict[str, str] | None = None,
    spec: Obj | None = None,
    allocatable: dict[str, str] | None = None,
) -> NodeInfo:
    info = NodeInfo(name)
    info.set_node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": spec or {},
            "status": {
                "allocatable": allocatable if allocatable is not None else ROOMY,
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
    )
    return info


def make_pod(spec: Obj | None = None, name: str = "pod1", node: str = "") -> PodInfo:
    full: Obj = {"containers": [{"name": "c", "image": "busybox"}], **(spec or {})}
    if node:
        full["nodeName"] = node
    manifest = {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": full}
    return pod_info(manifest, priority=0, preempt_never=False)


def reasons(pod: PodInfo, node: NodeInfo) -> tuple[str, ...]:
    """The node's rejection reasons for the pod; () when it fits."""
    status = filter_node(pod, node)
    return () if status is None else status.reasons


# ------------------------------------------------------------------------------------------------ nodeunschedulable
# pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go


@pytest.mark.parametrize(
    ("tolerations", "unschedulable", "want"),
    [
        pytest.param(
            [],
            True,
            ("node(s) were unschedulable",),
            id="Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        pytest.param([], False, (), id="Schedule pod to normal node"),
        pytest.param(
            [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}],
            True,
            (),
            id="Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
        ),
    ],
)
def test_node_unschedulable(tolerations: list[Obj], unschedulable: bool, want: tuple[str, ...]) -> None:
    """`kubectl cordon` keeps pods off unless they tolerate `node.kubernetes.io/unschedulable:NoSchedule`."""
    node = make_node(spec={"unschedulable": unschedulable})
    assert reasons(make_pod({"tolerations": tolerations}), node) == want


# ------------------------------------------------------------------------------------------------ tainttoleration
# pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go


def _taint(key: str, value: str, effect: str) -> Obj:
    return {"key": key, "value": value, "effect": effect}


@pytest.mark.parametrize(
    ("tolerations", "taints", "want"),
    [
        pytest.param(
            [],
            [_taint("dedicated", "user1", "NoSchedule")],
            "node(s) had untolerated taint {dedicated: user1}",
            id="A pod having no tolerations can't be scheduled onto a node with nonempty taints",
        ),
        pytest.param(
            [{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}],
            [_taint("dedicated", "user1", "NoSchedule")],
            None,
            id="A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
        ),
        pytest.param(
            [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}],
            [_taint("dedicated", "user1", "NoSchedule")],
            "node(s) had untolerated taint {dedicated: user1}",
            id="A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
        ),
        pytest.param(
            [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}],
            [_taint("foo", "bar", "NoSchedule")],
            None,
            id="A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the "
            "taints on the node",
        ),
        pytest.param(
            [
                {"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"},
                {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
            ],
            [_taint("dedicated", "user2", "NoSchedule"), _taint("foo", "bar", "NoSchedule")],
            None,
            id="A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be "
            "scheduled onto the node",
        ),
        pytest.param(
            [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}],
            [_taint("foo", "bar", "NoSchedule")],
            "node(s) had untolerated taint {foo: bar}",
            id="A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect "
            "doesn't match, can't be scheduled onto the node",
        ),
        pytest.param(
            [{"key": "foo", "operator": "Equal", "value": "bar"}],
            [_taint("foo", "bar", "NoSchedule")],
            None,
            id="The pod has a toleration that keys and values match the taint on the node, the effect of toleration "
            "is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
        ),
        pytest.param(
            [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}],
            [_taint("dedicated", "user1", "PreferNoSchedule")],
            None,
            id="The pod has a toleration that key and value don't match the taint on the node, but the effect of "
            "taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
        ),
        pytest.param(
            [],
            [_taint("dedicated", "user1", "PreferNoSchedule")],
            None,
            id="The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled "
            "onto the node",
        ),
    ],
)
def test_taint_toleration_filter(tolerations: list[Obj], taints: list[Obj], want: str | None) -> None:
    """`kubectl taint` repels pods without a matching toleration; the reason names the first untolerated taint."""
    node = make_node("nodeA", spec={"taints": taints})
    got = reasons(make_pod({"tolerations": tolerations}), node)
    assert got == ((want,) if want else ())
    if want:  # as `kubectl describe pod` shows it
        assert fit_error(1, {"nodeA": got}) == f"0/1 nodes are available: 1 {want}."


# ------------------------------------------------------------------------------------------------ nodeaffinity
# pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go


def _expr(key: str, operator: str, *values: str) -> Obj:
    return {"key": key, "operator": operator, **({"values": list(values)} if values else {})}


def _name_in(*names: str) -> Obj:
    return _expr("metadata.name", "In", *names)


def _required(*terms: Obj) -> Obj:
    return {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
        }
    }


def _term(expressions: list[Obj] | None = None, fields: list[Obj] | None = None) -> Obj:
    term: Obj = {}
    if expressions is not None:
        term["matchExpressions"] = expressions
    if fields is not None:
        term["matchFields"] = fields
    return term


_NODE_AFFINITY_ROWS: list[Any] = [
    ("missing labels", {"nodeSelector": {"foo": "bar"}}, {}, "", False),
    ("same labels", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar"}, "", True),
    ("node labels are superset", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar", "baz": "blah"}, "", True),
    ("node labels are subset", {"nodeSelector": {"foo": "bar", "baz": "blah"}}, {"foo": "bar"}, "", False),
    (
        "Pod with matchExpressions using In operator that matches the existing node",
        _required(_term([_expr("foo", "In", "bar", "value2")])),
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "Pod with matchExpressions using Gt operator that matches the existing node",
        _required(_term([_expr("kernel-version", "Gt", "0204")])),
        {"kernel-version": "0206"},
        "",
        True,
    ),
    (
        "Pod with matchExpressions using NotIn operator that matches the existing node",
        _required(_term([_expr("mem-type", "NotIn", "DDR", "DDR2")])),
        {"mem-type": "DDR3"},
        "",
        True,
    ),
    (
        "Pod with matchExpressions using Exists operator that matches the existing node",
        _required(_term([_expr("GPU", "Exists")])),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        True,
    ),
    (
        "Pod with affinity that don't match node's labels won't schedule onto the node",
        _required(_term([_expr("foo", "In", "value1", "value2")])),
        {"foo": "bar"},
        "",
        False,
    ),
    (
        "Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
        _required(_term([])),
        {"foo": "bar"},
        "",
        False,
    ),
    ("Pod with no Affinity will schedule onto a node", {}, {"foo": "bar"}, "", True),
    (
        "Pod with Affinity but nil NodeSelector will schedule onto a node",
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}},
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "Pod with multiple matchExpressions ANDed that matches the existing node",
        _required(_term([_expr("GPU", "Exists"), _expr("GPU", "NotIn", "AMD", "INTER")])),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        True,
    ),
    (
        "Pod with multiple matchExpressions ANDed that doesn't match the existing node",
        _required(_term([_expr("GPU", "Exists"), _expr("GPU", "In", "AMD", "INTER")])),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        False,
    ),
    (
        "Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the "
        "node",
        _required(_term([_expr("foo", "In", "bar", "value2")]), _term([_expr("diffkey", "In", "wrong", "value2")])),
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, "
        "will schedule onto the node",
        {"nodeSelector": {"foo": "bar"}, **_required(_term([_expr("foo", "Exists")]))},
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are "
        "deprecating) is not satisfied, won't schedule onto the node",
        {"nodeSelector": {"foo": "bar"}, **_required(_term([_expr("foo", "Exists")]))},
        {"foo": "barrrrrr"},
        "",
        False,
    ),
    (
        "Pod with an invalid value in Affinity term won't be scheduled onto the node",
        _required(_term([_expr("foo", "NotIn", "invalid value: ___@#$%^")])),
        {"foo": "bar"},
        "",
        False,
    ),
    (
        "Pod with matchFields using In operator that matches the existing node",
        _required(_term(fields=[_name_in("node1")])),
        {},
        "node1",
        True,
    ),
    (
        "Pod with matchFields using In operator that does not match the existing node",
        _required(_term(fields=[_name_in("node1")])),
        {},
        "node2",
        False,
    ),
    (
        "Pod with two terms: matchFields does not match, but matchExpressions matches",
        _required(_term(fields=[_name_in("node1"), _name_in("node2")]), _term([_expr("foo", "In", "bar")])),
        {"foo": "bar"},
        "node2",
        True,
    ),
    (
        "Pod with one term: matchFields does not match, but matchExpressions matches",
        _required(_term([_expr("foo", "In", "bar")], [_name_in("node1")])),
        {"foo": "bar"},
        "node2",
        False,
    ),
    (
        "Pod with one term: both matchFields and matchExpressions match",
        _required(_term([_expr("foo", "In", "bar")], [_name_in("node1")])),
        {"foo": "bar"},
        "node1",
        True,
    ),
    (
        "Pod with two terms: both matchFields and matchExpressions do not match",
        _required(_term(fields=[_name_in("node1")]), _term([_expr("foo", "In", "not-match-to-bar")])),
        {"foo": "bar"},
        "node2",
        False,
    ),
    (
        "Pod with two terms of node.Name affinity",
        _required(_term(fields=[_name_in("node1")]), _term(fields=[_name_in("node2")])),
        {},
        "node2",
        True,
    ),
    (
        "Pod with two conflicting mach field requirements",
        _required(_term(fields=[_name_in("node1"), _name_in("node2")])),
        {"foo": "bar"},
        "node2",
        False,
    ),
    (
        "Matches node selector correctly even if PreFilter is not called",
        {"nodeSelector": {"foo": "bar"}},
        {"foo": "bar", "baz": "blah"},
        "",
        True,
    ),
    (
        "Matches node affinity correctly even if PreFilter is not called",
        _required(_term([_expr("GPU", "Exists"), _expr("GPU", "NotIn", "AMD", "INTER")])),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        True,
    ),
]


@pytest.mark.parametrize(
    ("spec", "labels", "node_name", "fits"),
    [pytest.param(spec, labels, name, fits, id=row) for row, spec, labels, name, fits in _NODE_AFFINITY_ROWS],
)
def test_node_affinity(spec: Obj, labels: dict[str, str], node_name: str, fits: bool) -> None:
    """`nodeSelector` and required node affinity (In/NotIn/Exists/Gt, matchFields `metadata.name`) decide which
    nodes a pod may go to; every other node gets the one NodeAffinity reason."""
    node = make_node(node_name or "node", labels=labels)
    assert reasons(make_pod(spec), node) == (() if fits else (AFFINITY_REASON,))
