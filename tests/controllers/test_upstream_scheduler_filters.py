"""Upstream filter-plugin rows run against kjobs' scheduler filtering (`filter_node`, `fit_error`).

One test per upstream Test function; the rows keep their upstream names as ids. Upstream calls one plugin's
`Filter` on a `NodeInfo`; here the pod goes through all of kjobs' filters (`filter_node`, which the scheduler
runs for every node), so a node built only to fail one plugin fails with that plugin's reason and passes the
others. Nodes are Ready (kjobs, like the node lifecycle controller, treats a node without a Ready condition as
not-ready and tainted) and have room for the pods of rows that do not test resources. Sources, commits, and the
rows left out: docs/upstream-scheduler.md.
"""

from __future__ import annotations

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
