"""Pure scheduling rules, table-tested: effective requests, taints and tolerations, node affinity, resource fit,
scoring and Kubernetes' FailedScheduling wording."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api import taints
from kjobs.api.types import Obj
from kjobs.controllers.scheduling import (
    FilterStatus,
    HostPort,
    NodeInfo,
    PodInfo,
    Resources,
    Taint,
    Toleration,
    balanced_allocation_score,
    filter_node,
    fit_error,
    host_ports,
    insufficient,
    least_allocated_score,
    matches_node_affinity,
    node_scores,
    node_taints,
    non_zero_requests,
    normalize,
    pod_info,
    pod_requests,
    port_conflict,
    preferred_affinity,
    select_host,
    shared_spec_info,
    spec_info,
    truncate_message,
    untolerated_soft_taints,
)

GI = 1024**3


def container(name: str = "c", restart: str | None = None, **requests: str) -> Obj:
    c: Obj = {"name": name, "image": "busybox"}
    if requests:
        c["resources"] = {"requests": {k.replace("_", "-"): v for k, v in requests.items()}}
    if restart:
        c["restartPolicy"] = restart
    return c


def pod(
    name: str = "p",
    *,
    containers: list[Obj] | None = None,
    node: str = "",
    priority: int = 0,
    **spec: Any,
) -> PodInfo:
    body: Obj = {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"containers": containers if containers is not None else [container(cpu="1")], **spec},
    }
    if node:
        body["spec"]["nodeName"] = node
    return pod_info(body, priority=priority, preempt_never=False)


def node(
    name: str = "n1",
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    labels: dict[str, str] | None = None,
    taints: list[Obj] | None = None,
    unschedulable: bool = False,
    ready: str | None = "True",
    extra: dict[str, str] | None = None,
) -> NodeInfo:
    body: Obj = {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"taints": taints or [], "unschedulable": unschedulable},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})},
            "conditions": [] if ready is None else [{"type": "Ready", "status": ready}],
        },
    }
    info = NodeInfo(name)
    info.set_node(body)
    return info


# ------------------------------------------------------------------------------------------------ requests


@pytest.mark.parametrize(
    ("spec", "cpu", "memory"),
    [
        pytest.param(
            {"containers": [container(cpu="2", memory="1G"), container(cpu="1", memory="1G")]},
            3000,
            2 * 10**9,
            id="sum",
        ),
        pytest.param(
            {
                "initContainers": [container(cpu="2", memory="1G"), container(cpu="2", memory="3G")],
                "containers": [container(cpu="2", memory="1G"), container(cpu="1", memory="1G")],
            },
            3000,
            3 * 10**9,
            id="init-max-vs-sum-kubernetes-example",
        ),
        pytest.param(
            {
                "initContainers": [container(cpu="500m", restart="Always"), container(cpu="3")],
                "containers": [container(cpu="1")],
            },
            3500,
            0,
            id="sidecar-runs-next-to-later-init-and-adds-to-regular",
        ),
        pytest.param({"containers": [container(cpu="250m")], "overhead": {"cpu": "100m"}}, 350, 0, id="overhead"),
        pytest.param({"containers": [container()]}, 0, 0, id="no-requests"),
        pytest.param({"containers": [container(cpu="0.1", memory="1.5Gi")]}, 100, 1536 * 1024**2, id="decimal-binary"),
    ],
)
def test_effective_pod_requests(spec: Obj, cpu: int, memory: int) -> None:
    request = pod_requests(spec)
    assert (request.milli_cpu, request.memory) == (cpu, memory)


def test_scalar_and_storage_requests_are_counted() -> None:
    request = pod_requests({"containers": [container(**{"nvidia.com/gpu": "2", "ephemeral_storage": "1Gi"})]})
    assert request.scalars == {"nvidia.com/gpu": 2}
    assert request.ephemeral_storage == GI


def test_scoring_counts_defaults_for_containers_without_requests() -> None:
    spec = {"containers": [container(cpu="1"), container()]}
    assert non_zero_requests(spec) == (1100, 2 * 200 * 1024**2)


# ------------------------------------------------------------------------------------------------ taints


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        pytest.param(Toleration("k", "Equal", "v", "NoSchedule"), Taint("k", "v", "NoSchedule"), True, id="equal"),
        pytest.param(
            Toleration("k", "", "v", "NoSchedule"), Taint("k", "v", "NoSchedule"), True, id="empty-op-is-equal"
        ),
        pytest.param(
            Toleration("k", "Equal", "w", "NoSchedule"), Taint("k", "v", "NoSchedule"), False, id="value-differs"
        ),
        pytest.param(Toleration("k", "Exists", "", ""), Taint("k", "v", "NoExecute"), True, id="exists-any-effect"),
        pytest.param(Toleration("", "Exists", "", ""), Taint("any", "v", "NoSchedule"), True, id="exists-no-key-all"),
        pytest.param(
            Toleration("k", "Exists", "", "NoExecute"), Taint("k", "", "NoSchedule"), False, id="effect-differs"
        ),
        pytest.param(Toleration("other", "Exists", "", ""), Taint("k", "", "NoSchedule"), False, id="key-differs"),
        pytest.param(Toleration("k", "Bogus", "v", ""), Taint("k", "v", "NoSchedule"), False, id="unknown-operator"),
    ],
)
def test_toleration_matches_taint_like_kubernetes(toleration: Toleration, taint: Taint, expected: bool) -> None:
    assert toleration.tolerates(taint) is expected
    # The typed hot-path matcher agrees with the shared dict-based rule.
    as_dict = {"key": toleration.key, "operator": toleration.operator, "value": toleration.value}
    assert taints.tolerates(dict(as_dict, effect=toleration.effect), vars_of(taint)) is expected


def vars_of(taint: Taint) -> Obj:
    return {"key": taint.key, "value": taint.value, "effect": taint.effect}


@pytest.mark.parametrize(
    ("conditions", "taints", "expected"),
    [
        pytest.param([{"type": "Ready", "status": "True"}], [], (), id="ready"),
        pytest.param([{"type": "Ready", "status": "False"}], [], ("node.kubernetes.io/not-ready",), id="not-ready"),
        pytest.param([{"type": "Ready", "status": "Unknown"}], [], ("node.kubernetes.io/unreachable",), id="unknown"),
        pytest.param([], [], ("node.kubernetes.io/not-ready",), id="no-ready-condition"),
        pytest.param(
            [{"type": "Ready", "status": "False"}],
            [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}],
            ("node.kubernetes.io/not-ready",),
            id="lifecycle-taint-already-there",
        ),
        pytest.param(
            [{"type": "Ready", "status": "True"}, {"type": "DiskPressure", "status": "True"}],
            [{"key": "soft", "effect": "PreferNoSchedule"}],
            ("node.kubernetes.io/disk-pressure",),
            id="pressure-and-prefer-ignored",
        ),
    ],
)
def test_node_taints_include_condition_taints(
    conditions: list[Obj], taints: list[Obj], expected: tuple[str, ...]
) -> None:
    body = {"metadata": {"name": "n"}, "spec": {"taints": taints}, "status": {"conditions": conditions}}
    assert tuple(t.key for t in node_taints(body)) == expected


# ------------------------------------------------------------------------------------------------ affinity


def affinity(*terms: Obj) -> Obj:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def expr(key: str, op: str, *values: str) -> Obj:
    return {"key": key, "operator": op, "values": list(values)}


LABELS = {"zone": "a", "gpu": "true", "cores": "16"}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({"nodeSelector": {"zone": "a"}}, True, id="selector-match"),
        pytest.param({"nodeSelector": {"zone": "b"}}, False, id="selector-mismatch"),
        pytest.param({"nodeSelector": {"disk": "ssd"}}, False, id="selector-missing-label"),
        pytest.param({"affinity": affinity({"matchExpressions": [expr("zone", "In", "a", "b")]})}, True, id="in"),
        pytest.param({"affinity": affinity({"matchExpressions": [expr("zone", "NotIn", "a")]})}, False, id="notin"),
        pytest.param(
            {"affinity": affinity({"matchExpressions": [expr("disk", "NotIn", "hdd")]})}, True, id="notin-absent"
        ),
        pytest.param({"affinity": affinity({"matchExpressions": [expr("gpu", "Exists")]})}, True, id="exists"),
        pytest.param(
            {"affinity": affinity({"matchExpressions": [expr("gpu", "DoesNotExist")]})}, False, id="doesnotexist"
        ),
        pytest.param({"affinity": affinity({"matchExpressions": [expr("cores", "Gt", "8")]})}, True, id="gt"),
        pytest.param({"affinity": affinity({"matchExpressions": [expr("cores", "Lt", "8")]})}, False, id="lt"),
        pytest.param({"affinity": affinity({"matchExpressions": [expr("zone", "Gt", "8")]})}, False, id="gt-not-int"),
        pytest.param(
            {"affinity": affinity({"matchFields": [expr("metadata.name", "In", "n1")]})}, True, id="fields-name"
        ),
        pytest.param(
            {"affinity": affinity({"matchFields": [expr("metadata.name", "NotIn", "n1")]})}, False, id="fields-notin"
        ),
        pytest.param(
            {
                "affinity": affinity(
                    {"matchExpressions": [expr("zone", "In", "b")]}, {"matchExpressions": [expr("gpu", "Exists")]}
                )
            },
            True,
            id="terms-are-ored",
        ),
        pytest.param(
            {"affinity": affinity({"matchExpressions": [expr("zone", "In", "a"), expr("gpu", "DoesNotExist")]})},
            False,
            id="expressions-are-anded",
        ),
        pytest.param({"affinity": affinity({})}, False, id="empty-term-matches-nothing"),
        pytest.param({"affinity": affinity()}, False, id="no-terms-matches-nothing"),
        pytest.param(
            {"nodeSelector": {"zone": "b"}, "affinity": affinity({"matchExpressions": [expr("gpu", "Exists")]})},
            False,
            id="selector-and-affinity-both-needed",
        ),
    ],
)
def test_node_affinity(spec: Obj, expected: bool) -> None:
    assert matches_node_affinity(pod(**spec), node(labels=LABELS)) is expected


# ------------------------------------------------------------------------------------------------ fit


@pytest.mark.parametrize(
    ("request_", "requested", "count", "allowed", "reasons"),
    [
        pytest.param(Resources(1000, GI), Resources(3000, 7 * GI), 2, 110, [], id="exactly-fits"),
        pytest.param(Resources(1001, GI), Resources(3000, 7 * GI), 2, 110, ["Insufficient cpu"], id="cpu"),
        pytest.param(
            Resources(4001, 9 * GI), Resources(), 0, 110, ["Insufficient cpu", "Insufficient memory"], id="cpu-memory"
        ),
        pytest.param(Resources(), Resources(9000, 9 * GI), 2, 3, [], id="zero-request-fits-overcommitted-node"),
        pytest.param(Resources(), Resources(), 3, 3, ["Too many pods"], id="pod-count"),
        pytest.param(
            Resources(0, 0, 0, {"nvidia.com/gpu": 1}), Resources(), 0, 110, ["Insufficient nvidia.com/gpu"], id="gpu"
        ),
    ],
)
def test_insufficient_resources(
    request_: Resources, requested: Resources, count: int, allowed: int, reasons: list[str]
) -> None:
    assert insufficient(request_, Resources(4000, 8 * GI), allowed, requested, count) == reasons


def test_bound_pods_use_up_the_node() -> None:
    n = node(cpu="2")
    n.add_pod(pod("a", node="n1"))
    assert filter_node(pod("b"), n) is None
    n.add_pod(pod("b", node="n1"))
    status = filter_node(pod("c"), n)
    assert status is not None and status.reasons == ("Insufficient cpu",) and status.resolvable
    n.remove_pod("uid-a")
    assert filter_node(pod("c"), n) is None


def test_nominated_pods_reserve_their_room() -> None:
    n = node(cpu="2")
    n.add_pod(pod("a", node="n1"))
    assert filter_node(pod("b"), n, [pod("waiting", priority=5)]) is not None
    assert filter_node(pod("b"), n) is None


@pytest.mark.parametrize(
    ("n", "spec", "reason"),
    [
        pytest.param(node(unschedulable=True), {}, "node(s) were unschedulable", id="cordoned"),
        pytest.param(
            node(taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
            {},
            "node(s) had untolerated taint {dedicated: gpu}",
            id="taint",
        ),
        pytest.param(
            node(ready="False"), {}, "node(s) had untolerated taint {node.kubernetes.io/not-ready: }", id="not-ready"
        ),
        pytest.param(
            node(), {"nodeSelector": {"zone": "z"}}, "node(s) didn't match Pod's node affinity/selector", id="selector"
        ),
        pytest.param(
            node(unschedulable=True, cpu="0"),
            {"nodeSelector": {"zone": "z"}},
            "node(s) were unschedulable",
            id="first-failing-filter-wins",
        ),
    ],
)
def test_static_filters_report_unresolvable_reasons(n: NodeInfo, spec: Obj, reason: str) -> None:
    status = filter_node(pod(**spec), n)
    assert status is not None and status.reasons == (reason,) and not status.resolvable


@pytest.mark.parametrize(
    ("n", "tolerations"),
    [
        pytest.param(
            node(unschedulable=True),
            [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}],
            id="cordon-tolerated",
        ),
        pytest.param(
            node(taints=[{"key": "dedicated", "value": "gpu", "effect": "NoExecute"}]),
            [{"key": "dedicated", "value": "gpu"}],
            id="taint-tolerated",
        ),
        pytest.param(node(ready="False"), [{"operator": "Exists"}], id="tolerate-everything"),
        pytest.param(node(taints=[{"key": "soft", "effect": "PreferNoSchedule"}]), [], id="prefer-no-schedule-ignored"),
    ],
)
def test_tolerations_let_pods_through(n: NodeInfo, tolerations: list[Obj]) -> None:
    assert filter_node(pod(tolerations=tolerations), n) is None


@pytest.mark.parametrize(
    ("wanted", "used", "conflict"),
    [
        pytest.param(("0.0.0.0", "TCP", 80), ("10.0.0.1", "TCP", 80), True, id="any-vs-specific"),
        pytest.param(("10.0.0.1", "TCP", 80), ("0.0.0.0", "TCP", 80), True, id="specific-vs-any"),
        pytest.param(("10.0.0.1", "TCP", 80), ("10.0.0.2", "TCP", 80), False, id="different-addresses"),
        pytest.param(("0.0.0.0", "UDP", 80), ("0.0.0.0", "TCP", 80), False, id="different-protocols"),
        pytest.param(("0.0.0.0", "TCP", 81), ("0.0.0.0", "TCP", 80), False, id="different-ports"),
    ],
)
def test_host_port_conflicts(wanted: HostPort, used: HostPort, conflict: bool) -> None:
    assert port_conflict([wanted], {used: 1}) is conflict


def test_host_ports_of_containers_and_sidecars_with_defaults() -> None:
    spec = {
        "containers": [{"name": "a", "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 9000}]}],
        "initContainers": [
            {
                "name": "side",
                "restartPolicy": "Always",
                "ports": [{"hostPort": 53, "protocol": "UDP", "hostIP": "127.0.0.1"}],
            },
            {"name": "once", "ports": [{"hostPort": 7}]},
        ],
    }
    assert host_ports(spec) == (("0.0.0.0", "TCP", 8080), ("127.0.0.1", "UDP", 53))


def test_node_ports_filter_counts_bound_and_nominated_pods() -> None:
    ports = [{"containerPort": 8080, "hostPort": 8080}]
    n = node()
    web = pod("web", containers=[container(cpu="1") | {"ports": ports}])
    assert filter_node(web, n) is None
    assert filter_node(web, n, [pod("reserved", containers=[container() | {"ports": ports}], priority=9)]) == (
        FilterStatus(("node(s) didn't have free ports for the requested pod ports",), True)
    )
    n.add_pod(pod("holder", node="n1", containers=[container() | {"ports": ports}]))
    status = filter_node(web, n)
    assert status is not None and status.reasons == ("node(s) didn't have free ports for the requested pod ports",)
    n.remove_pod("uid-holder")
    assert filter_node(web, n) is None and n.used_ports == {}


# ------------------------------------------------------------------------------------------------ score


def test_least_allocated_prefers_the_emptier_node_and_ties_go_to_the_first_name() -> None:
    busy, idle, twin = node("a"), node("b"), node("c")
    busy.add_pod(pod("x", node="a", containers=[container(cpu="2", memory="4Gi")]))
    assert select_host(pod("p"), [busy, idle, twin]) == "b"
    assert select_host(pod("p"), [twin, idle]) == "b"


def test_bigger_node_scores_higher_for_the_same_pod() -> None:
    assert (
        select_host(pod("p"), [node("small", cpu="2", memory="2Gi"), node("large", cpu="8", memory="8Gi")]) == "large"
    )


@pytest.mark.parametrize(
    ("scores", "reverse", "expected"),
    [
        pytest.param([0, 0], False, [0, 0], id="all-zero"),
        pytest.param([0, 0], True, [100, 100], id="all-zero-reversed"),
        pytest.param([1, 3], False, [33, 100], id="scaled-by-max"),
        pytest.param([1, 3], True, [67, 0], id="reversed"),
    ],
)
def test_default_normalize_score(scores: list[int], reverse: bool, expected: list[int]) -> None:
    assert normalize(scores, reverse=reverse) == expected


@pytest.mark.parametrize(
    ("cpu", "memory", "node_cpu", "node_memory", "expected"),
    [
        pytest.param("2", "4Gi", "4", "8Gi", 100, id="balanced"),
        pytest.param("4", "0", "4", "8Gi", 50, id="cpu-only"),
        pytest.param("8", "0", "4", "8Gi", 50, id="fraction-capped-at-one"),
        pytest.param("1", "0", "4", "0", 100, id="resource-without-allocatable-left-out"),
    ],
)
def test_balanced_allocation(cpu: str, memory: str, node_cpu: str, node_memory: str, expected: int) -> None:
    p = pod(containers=[container(cpu=cpu, memory=memory)])
    assert balanced_allocation_score(p, node(cpu=node_cpu, memory=node_memory)) == expected


def preferring(weight: int, *exprs: Obj, **kwargs: Any) -> PodInfo:
    pref = {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": weight, "preference": {"matchExpressions": list(exprs)}}
        ]
    }
    return pod(affinity={"nodeAffinity": pref}, **kwargs)


def test_preferred_node_affinity_outweighs_free_room() -> None:
    busy = node("busy", labels={"disk": "ssd"})
    busy.add_pod(pod("x", node="busy", containers=[container(cpu="2", memory="4Gi")]))
    idle = node("idle")
    assert select_host(pod("p"), [busy, idle]) == "idle"
    assert select_host(preferring(50, expr("disk", "In", "ssd")), [busy, idle]) == "busy"
    assert preferred_affinity(preferring(50, expr("disk", "In", "ssd")), idle) == 0


def test_prefer_no_schedule_taints_are_avoided_unless_tolerated() -> None:
    soft = node("a-soft", taints=[{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}])
    plain = node("b-plain")
    assert select_host(pod("p"), [soft, plain]) == "b-plain"
    tolerant = pod("t", tolerations=[{"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"}])
    assert untolerated_soft_taints(tolerant, soft) == 0
    assert select_host(tolerant, [soft, plain]) == "a-soft"  # equal scores: the first name
    no_execute_only = pod("n", tolerations=[{"key": "spot", "operator": "Exists", "effect": "NoExecute"}])
    assert untolerated_soft_taints(no_execute_only, soft) == 1


def test_scores_add_up_with_the_default_weights() -> None:
    soft = node("soft", taints=[{"key": "spot", "effect": "PreferNoSchedule"}], labels={"disk": "ssd"})
    plain = node("plain")
    p = preferring(10, expr("disk", "Exists"))
    base = [least_allocated_score(p, n) + balanced_allocation_score(p, n) for n in (soft, plain)]
    assert node_scores(p, [soft, plain]) == [base[0] + 3 * 0 + 2 * 100, base[1] + 3 * 100 + 2 * 0]


# ------------------------------------------------------------------------------------------------ messages


@pytest.mark.parametrize(
    ("num", "statuses", "kwargs", "message"),
    [
        pytest.param(
            3,
            {
                "a": ["node(s) didn't match Pod's node affinity/selector"],
                "b": ["Insufficient cpu"],
                "c": ["Insufficient cpu"],
            },
            {},
            "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient cpu.",
            id="histogram",
        ),
        pytest.param(
            2,
            {"a": ["Insufficient cpu", "Insufficient memory"], "b": ["Insufficient cpu"]},
            {},
            "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.",
            id="several-reasons-per-node",
        ),
        pytest.param(
            12,
            {f"n{i}": ["Insufficient cpu"] for i in range(10)} | {"x": ["Too many pods"], "y": ["Too many pods"]},
            {},
            "0/12 nodes are available: 10 Insufficient cpu, 2 Too many pods.",
            id="sorted-as-strings",
        ),
        pytest.param(
            3,
            {"a": ["No preemption victims found for incoming pod"]},
            {"absent_reason": "Preemption is not helpful for scheduling"},
            "0/3 nodes are available: 1 No preemption victims found for incoming pod, "
            "2 Preemption is not helpful for scheduling.",
            id="absent-nodes",
        ),
        pytest.param(
            1,
            {"a": ["Insufficient cpu"]},
            {"post_filter": "preemption: not eligible due to preemptionPolicy=Never."},
            "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.",
            id="post-filter",
        ),
    ],
)
def test_fit_error_message(num: int, statuses: dict[str, list[str]], kwargs: dict[str, str], message: str) -> None:
    assert fit_error(num, statuses, **kwargs) == message


def test_event_messages_are_truncated_like_kubernetes() -> None:
    assert truncate_message("x" * 1024) == "x" * 1024
    long = truncate_message("y" * 2000)
    assert len(long) == 1024 and long.endswith("y ...")


def test_malformed_fields_do_not_raise() -> None:
    info = pod_info(
        {
            "metadata": {"name": "bad", "creationTimestamp": "not a time"},
            "spec": {"containers": [{"resources": {"requests": {"cpu": "lots", "memory": True}}}], "tolerations": "x"},
        },
        priority=0,
        preempt_never=False,
    )
    assert info.requests.is_zero() and info.tolerations == () and info.created == 0.0


def test_specs_that_differ_only_in_hostname_share_their_parsed_requests() -> None:
    """A Job's pods differ in `hostname` (and `nodeName` once bound), which the scheduler does not read."""
    first = {"containers": [container(cpu="1")], "hostname": "job-0"}
    second = {"containers": [container(cpu="1")], "hostname": "job-1", "nodeName": "n1"}
    bigger = {"containers": [container(cpu="2")], "hostname": "job-2"}
    assert shared_spec_info(first) is shared_spec_info(second)
    assert shared_spec_info(bigger).requests.milli_cpu == 2000
    assert shared_spec_info(first).requests.milli_cpu == 1000


def _with_token_volume(spec: Obj, name: str) -> Obj:
    mount = {"name": name, "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
    return {
        **spec,
        "volumes": [{"name": name, "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}],
        "containers": [{**c, "volumeMounts": [mount]} for c in spec["containers"]],
    }


def test_specs_that_differ_only_in_their_token_volume_share_their_parsed_requests() -> None:
    """On `kjobs up` each pod of a Job carries its own `kube-api-access-XXXXX` volume and mounts, which the
    scheduler's spec-derived facts do not read: one computation serves them all, and a spec whose requests,
    ports, tolerations or node selector differ still gets its own (docs/performance.md, stop 37)."""
    base = {"containers": [container(cpu="1")], "hostname": "job-0"}
    first = _with_token_volume(base, "kube-api-access-abcde")
    second = _with_token_volume({**base, "hostname": "job-1"}, "kube-api-access-fghij")
    assert shared_spec_info(first) is shared_spec_info(second)
    assert shared_spec_info(first) == spec_info(first) == spec_info(base)
    others = [
        _with_token_volume({"containers": [container(cpu="2")]}, "kube-api-access-klmno"),
        _with_token_volume({**base, "nodeSelector": {"disk": "ssd"}}, "kube-api-access-pqrst"),
        _with_token_volume({**base, "tolerations": [{"key": "k", "operator": "Exists"}]}, "kube-api-access-uvwxy"),
        _with_token_volume(
            {"containers": [{**container(cpu="1"), "ports": [{"containerPort": 80, "hostPort": 8080}]}]},
            "kube-api-access-zabcd",
        ),
    ]
    for other in others:
        assert shared_spec_info(other) == spec_info(other) != spec_info(first)
