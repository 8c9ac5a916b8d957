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


# ------------------------------------------------------------------------------------------------ noderesources
# pkg/scheduler/framework/plugins/noderesources/fit_test.go

A, B = "example.com/aaa", "example.com/bbb"
K8S_A, K8S_B = "kubernetes.io/something", "subdomain.kubernetes.io/something"
HUGE = "hugepages-2Mi"


def _allocatable(milli_cpu: int, memory: int, pods: int, a: int, storage: int, huge: int) -> dict[str, str]:
    """Upstream's `makeAllocatableResources`."""
    return {
        "cpu": f"{milli_cpu}m",
        "memory": str(memory),
        "pods": str(pods),
        A: str(a),
        "ephemeral-storage": str(storage),
        HUGE: str(huge),
    }


def res(cpu: int = 0, memory: int = 0, storage: int = 0, **scalars: int) -> Obj:
    """One container's requests, as upstream's `newResourcePod` writes them (milli-CPU, bytes); scalar resources
    by short name: a, b, k8s_a, k8s_b, huge."""
    requests: Obj = {"cpu": f"{cpu}m", "memory": str(memory), "pods": "0", "ephemeral-storage": str(storage)}
    requests.update({_scalar(name): str(value) for name, value in scalars.items()})
    return requests


def _scalar(name: str) -> str:
    return {"a": A, "b": B, "k8s_a": K8S_A, "k8s_b": K8S_B, "huge": HUGE}[name]


def resource_pod(*usage: Obj, init: tuple[Obj, ...] = (), overhead: Obj | None = None) -> Obj:
    """Upstream's `newResourcePod` (+ `newResourceInitPod`, `newResourceOverheadPod`) as a pod spec."""
    spec: Obj = {"containers": [{"name": f"c{i}", "resources": {"requests": r}} for i, r in enumerate(usage)]}
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "resources": {"requests": r}} for i, r in enumerate(init)]
    if overhead:
        spec["overhead"] = overhead
    return spec


def _fit(pod: Obj, existing: Obj, allocatable: dict[str, str]) -> tuple[str, ...]:
    node = make_node("node", allocatable=allocatable)
    node.add_pod(make_pod(existing, name="existing", node="node"))
    return reasons(make_pod(pod), node)


def _insufficient(*names: str) -> tuple[str, ...]:
    return tuple(f"Insufficient {n}" for n in names)


_ENOUGH_ROWS: list[Any] = [
    ("no resources requested always fits", {}, resource_pod(res(10, 20)), ()),
    ("too many resources fails", resource_pod(res(1, 1)), resource_pod(res(10, 20)), _insufficient("cpu", "memory")),
    (
        "too many resources fails due to init container cpu",
        resource_pod(res(1, 1), init=(res(3, 1),)),
        resource_pod(res(8, 19)),
        _insufficient("cpu"),
    ),
    (
        "too many resources fails due to highest init container cpu",
        resource_pod(res(1, 1), init=(res(3, 1), res(2, 1))),
        resource_pod(res(8, 19)),
        _insufficient("cpu"),
    ),
    (
        "too many resources fails due to init container memory",
        resource_pod(res(1, 1), init=(res(1, 3),)),
        resource_pod(res(9, 19)),
        _insufficient("memory"),
    ),
    (
        "too many resources fails due to highest init container memory",
        resource_pod(res(1, 1), init=(res(1, 3), res(1, 2))),
        resource_pod(res(9, 19)),
        _insufficient("memory"),
    ),
    (
        "init container fits because it's the max, not sum, of containers and init containers",
        resource_pod(res(1, 1), init=(res(1, 1),)),
        resource_pod(res(9, 19)),
        (),
    ),
    (
        "multiple init containers fit because it's the max, not sum, of containers and init containers",
        resource_pod(res(1, 1), init=(res(1, 1), res(1, 1))),
        resource_pod(res(9, 19)),
        (),
    ),
    ("both resources fit", resource_pod(res(1, 1)), resource_pod(res(5, 5)), ()),
    ("one resource memory fits", resource_pod(res(2, 1)), resource_pod(res(9, 5)), _insufficient("cpu")),
    ("one resource cpu fits", resource_pod(res(1, 2)), resource_pod(res(5, 19)), _insufficient("memory")),
    ("equal edge case", resource_pod(res(5, 1)), resource_pod(res(5, 19)), ()),
    (
        "equal edge case for init container",
        resource_pod(res(4, 1), init=(res(5, 1),)),
        resource_pod(res(5, 19)),
        (),
    ),
    ("extended resource fits", resource_pod(res(a=1)), resource_pod(res()), ()),
    (
        "extended resource fits for init container",
        resource_pod(res(), init=(res(a=1),)),
        resource_pod(res()),
        (),
    ),
    (
        "extended resource capacity enforced",
        resource_pod(res(1, 1, a=10)),
        resource_pod(res(a=0)),
        _insufficient(A),
    ),
    (
        "extended resource capacity enforced for init container",
        resource_pod(res(), init=(res(1, 1, a=10),)),
        resource_pod(res(a=0)),
        _insufficient(A),
    ),
    (
        "extended resource allocatable enforced",
        resource_pod(res(1, 1, a=1)),
        resource_pod(res(a=5)),
        _insufficient(A),
    ),
    (
        "extended resource allocatable enforced for init container",
        resource_pod(res(), init=(res(1, 1, a=1),)),
        resource_pod(res(a=5)),
        _insufficient(A),
    ),
    (
        "extended resource allocatable enforced for multiple containers",
        resource_pod(res(1, 1, a=3), res(1, 1, a=3)),
        resource_pod(res(a=2)),
        _insufficient(A),
    ),
    (
        "extended resource allocatable admits multiple init containers",
        resource_pod(res(), init=(res(1, 1, a=3), res(1, 1, a=3))),
        resource_pod(res(a=2)),
        (),
    ),
    (
        "extended resource allocatable enforced for multiple init containers",
        resource_pod(res(), init=(res(1, 1, a=6), res(1, 1, a=3))),
        resource_pod(res(a=2)),
        _insufficient(A),
    ),
    (
        "extended resource allocatable enforced for unknown resource",
        resource_pod(res(1, 1, b=1)),
        resource_pod(res()),
        _insufficient(B),
    ),
    (
        "extended resource allocatable enforced for unknown resource for init container",
        resource_pod(res(), init=(res(1, 1, b=1),)),
        resource_pod(res()),
        _insufficient(B),
    ),
    (
        "kubernetes.io resource capacity enforced",
        resource_pod(res(1, 1, k8s_a=10)),
        resource_pod(res()),
        _insufficient(K8S_A),
    ),
    (
        "kubernetes.io resource capacity enforced for init container",
        resource_pod(res(), init=(res(1, 1, k8s_b=10),)),
        resource_pod(res()),
        _insufficient(K8S_B),
    ),
    (
        "hugepages resource capacity enforced",
        resource_pod(res(1, 1, huge=10)),
        resource_pod(res(huge=0)),
        _insufficient(HUGE),
    ),
    (
        "hugepages resource capacity enforced for init container",
        resource_pod(res(), init=(res(1, 1, huge=10),)),
        resource_pod(res(huge=0)),
        _insufficient(HUGE),
    ),
    (
        "hugepages resource allocatable enforced for multiple containers",
        resource_pod(res(1, 1, huge=3), res(1, 1, huge=3)),
        resource_pod(res(huge=2)),
        _insufficient(HUGE),
    ),
    (
        "resources + pod overhead fits",
        resource_pod(res(1, 1), overhead={"cpu": "3m", "memory": "13"}),
        resource_pod(res(5, 5)),
        (),
    ),
    (
        "requests + overhead does not fit for memory",
        resource_pod(res(1, 1), overhead={"cpu": "1m", "memory": "15"}),
        resource_pod(res(5, 5)),
        _insufficient("memory"),
    ),
    (
        "skip checking extended resource request with quantity zero via resource groups",
        resource_pod(res(1, 1, a=0)),
        resource_pod(res(a=6)),
        (),
    ),
    ("skip checking resource request with quantity zero", resource_pod(res(a=1)), resource_pod(res(20, 30, a=1)), ()),
]


@pytest.mark.parametrize(
    ("pod", "existing", "want"), [pytest.param(p, e, w, id=name) for name, p, e, w in _ENOUGH_ROWS]
)
def test_enough_requests(pod: Obj, existing: Obj, want: tuple[str, ...]) -> None:
    """Requests (the largest init container or the sum of the others, plus overhead) must fit in what the
    node's allocatable leaves; each short resource is one `Insufficient <name>` reason."""
    assert _fit(pod, existing, _allocatable(10, 20, 32, 5, 20, 5)) == want


@pytest.mark.parametrize(
    ("pod", "existing"),
    [
        pytest.param(
            {},
            resource_pod(res(10, 20)),
            id="even without specified resources, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            resource_pod(res(1, 1)),
            resource_pod(res(5, 5)),
            id="even if both resources fit, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            resource_pod(res(5, 1)),
            resource_pod(res(5, 19)),
            id="even for equal edge case, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            resource_pod(res(5, 1), init=(res(5, 1),)),
            resource_pod(res(5, 19)),
            id="even for equal edge case, predicate fails when there's no space for additional pod due to init "
            "container",
        ),
    ],
)
def test_not_enough_requests(pod: Obj, existing: Obj) -> None:
    """A node's `pods` allocatable caps how many pods it takes, whatever they request."""
    assert _fit(pod, existing, _allocatable(10, 20, 1, 0, 0, 0)) == ("Too many pods",)


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        pytest.param(resource_pod(res(1, 1)), resource_pod(res(2, 10)), (), id="empty storage requested, and pod fits"),
        pytest.param(
            resource_pod(res(storage=25)),
            resource_pod(res(2, 2)),
            _insufficient("ephemeral-storage"),
            id="storage ephemeral local storage request exceeds allocatable",
        ),
        pytest.param(
            resource_pod(res(storage=5)),
            resource_pod(res(2, 2, storage=10)),
            (),
            id="ephemeral local storage is sufficient",
        ),
        pytest.param(resource_pod(res(storage=10)), resource_pod(res(2, 2)), (), id="pod fits"),
    ],
)
def test_storage_requests(pod: Obj, existing: Obj, want: tuple[str, ...]) -> None:
    """`ephemeral-storage` requests are checked like cpu and memory."""
    assert _fit(pod, existing, _allocatable(10, 20, 32, 5, 20, 5)) == want


@pytest.mark.parametrize(
    "init",
    [
        pytest.param([], id="allow pod without restartable init containers if sidecar containers is enabled"),
        pytest.param(
            [{"name": "restartable-init", "restartPolicy": "Always"}],
            id="allow pod with restartable init containers if sidecar containers is enabled",
        ),
    ],
)
def test_restartable_init_containers(init: list[Obj]) -> None:
    """Sidecars (SidecarContainers, on in v1.32) do not keep a pod off a node."""
    node = make_node("node", allocatable=_allocatable(0, 0, 1, 0, 0, 0))
    pod = make_pod({"containers": [{"name": "regular"}], "initContainers": init})
    assert reasons(pod, node) == ()


# ------------------------------------------------------------------------------------------------ nodename
# pkg/scheduler/framework/plugins/nodename/node_name_test.go


@pytest.mark.parametrize(
    ("pod_node", "node_name", "fits"),
    [
        pytest.param("", "", True, id="no host specified"),
        pytest.param("foo", "foo", True, id="host matches"),
        pytest.param("bar", "foo", False, id="host doesn't match"),
    ],
)
def test_node_name(pod_node: str, node_name: str, fits: bool) -> None:
    """A pod without `nodeName` may go to any node. A pod with one is never the scheduler's to place
    (kube-scheduler queues only unassigned pods: pkg/scheduler/eventhandlers.go `assignedPod`), so kjobs has no
    NodeName filter: upstream's two `nodeName` rows are the pod being left alone, and it runs, or is rejected by
    the kubelet, on the node it names, never on another."""
    pod = make_pod(node=pod_node)
    if not pod_node:
        assert pod.wants_scheduling() and reasons(pod, make_node(node_name or "node")) == ()
        return
    assert not pod.wants_scheduling()
    assert (pod.node_name == node_name) is fits


# ------------------------------------------------------------------------------------------------ FitError
# pkg/scheduler/framework/types_test.go


@pytest.mark.parametrize(
    ("num_nodes", "statuses", "post_filter", "want"),
    [
        pytest.param(
            3,
            {f"node{i}": ("Node(s) failed Filter plugin FalseFilter-1",) for i in (1, 2, 3)},
            "",
            "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1.",
            id="nodes failed one Filter plugin with an empty PostFilterMsg",
        ),
        pytest.param(
            3,
            {f"node{i}": ("Node(s) failed Filter plugin FalseFilter-1",) for i in (1, 2, 3)},
            "Error running PostFilter plugin FailedPostFilter",
            "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1. "
            "Error running PostFilter plugin FailedPostFilter",
            id="nodes failed one Filter plugin with a non-empty PostFilterMsg",
        ),
        pytest.param(
            3,
            {
                "node1": ("Node(s) failed Filter plugin FalseFilter-1",),
                "node2": ("Node(s) failed Filter plugin FalseFilter-1",),
                "node3": ("Node(s) failed Filter plugin FalseFilter-2",),
            },
            "",
            "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, "
            "2 Node(s) failed Filter plugin FalseFilter-1.",
            id="nodes failed two Filter plugins with an empty PostFilterMsg",
        ),
        pytest.param(
            3,
            {
                "node1": ("Node(s) failed Filter plugin FalseFilter-1",),
                "node2": ("Node(s) failed Filter plugin FalseFilter-1",),
                "node3": ("Node(s) failed Filter plugin FalseFilter-2",),
            },
            "Error running PostFilter plugin FailedPostFilter",
            "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, "
            "2 Node(s) failed Filter plugin FalseFilter-1. Error running PostFilter plugin FailedPostFilter",
            id="nodes failed two Filter plugins with a non-empty PostFilterMsg",
        ),
        pytest.param(
            1,
            {"node1": ("Node failed Permit plugin Permit-1",)},
            "",
            "0/1 nodes are available: 1 Node failed Permit plugin Permit-1.",
            id="failed to Permit on node",
        ),
        pytest.param(
            1,
            {"node1": ("Node failed Reserve plugin Reserve-1",)},
            "",
            "0/1 nodes are available: 1 Node failed Reserve plugin Reserve-1.",
            id="failed to Reserve on node",
        ),
    ],
)
def test_fit_error_error(num_nodes: int, statuses: dict[str, tuple[str, ...]], post_filter: str, want: str) -> None:
    """The FailedScheduling message: `0/N nodes are available: ` + reason counts sorted as strings + `.`, then
    the post-filter (preemption) message."""
    assert fit_error(num_nodes, statuses, post_filter=post_filter) == want


def test_fit_error_counts_filter_reasons_across_nodes() -> None:
    """The ported filters' reasons, aggregated over a cluster as `kubectl describe pod` shows them: one entry per
    distinct reason (each untolerated taint its own), counts first, sorted as strings."""
    pod = make_pod(resource_pod(res(2000, 1)) | {"nodeSelector": {"pool": "batch"}})
    batch = {"pool": "batch"}
    nodes = [
        make_node("cordoned", labels=batch, spec={"unschedulable": True}),
        make_node("gpu1", labels=batch, spec={"taints": [_taint("gpu", "true", "NoSchedule")]}),
        make_node("gpu2", labels=batch, spec={"taints": [_taint("gpu", "true", "NoExecute")]}),
        make_node("infra", labels=batch, spec={"taints": [_taint("dedicated", "infra", "NoSchedule")]}),
        make_node("web", labels={"pool": "web"}),
        make_node("small1", labels=batch, allocatable={"cpu": "1", "memory": "1Gi", "pods": "110"}),
        make_node("small2", labels=batch, allocatable={"cpu": "1", "memory": "1Gi", "pods": "110"}),
    ]
    statuses = {n.name: reasons(pod, n) for n in nodes}
    assert fit_error(len(nodes), statuses) == (
        "0/7 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) had untolerated taint {dedicated: infra}, 1 node(s) were unschedulable, "
        "2 Insufficient cpu, 2 node(s) had untolerated taint {gpu: true}."
    )
