"""Upstream pkg/kubelet/preemption/preemption_test.go, run against kjobs' critical-pod preemption
(`kjobs.node.preemption`, and the node agent's admission for TestHandleAdmissionFailure's outcome).

Pods are upstream's `getTestPods()` (one container each; cluster-critical priority 2000000000, node-critical
2000000100, the high-priority burstable 100); requirements are `getAdmissionRequirementList(cpu m, memory Mi,
pods)`. Upstream compares pod lists as multisets (`podListEqual`); so do these tests, by name. Rows and those left
out: docs/upstream-kubelet.md.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kjobs.api.quantity import parse_quantity
from kjobs.api.types import Obj
from kjobs.node.admission import pod_requests
from kjobs.node.preemption import NoPodsToPreempt, pods_to_preempt, subtract
from kjobs.node.preemption import _distance as distance
from kjobs.node.preemption import _smaller as smaller
from kjobs.node.sim_runtime import Outcome
from tests.node.test_agent import Node, start_node
from tests.support import settle

Mi = 1 << 20


def _pod(name: str, cpu: str = "", memory: str = "", *, limits: bool = False, priority: int | None = None) -> Obj:
    container: Obj = {"name": f"{name}-container", "image": "busybox"}
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    if requests:
        container["resources"] = {"requests": dict(requests), **({"limits": dict(requests)} if limits else {})}
    spec: Obj = {"containers": [container]}
    if priority is not None:
        spec["priority"] = priority
    return {"metadata": {"name": name, "annotations": {}}, "spec": spec}


PODS = {
    "tiny": _pod("tiny", "1m", "1Mi"),
    "bestEffort": _pod("bestEffort"),
    "cluster-critical": _pod("cluster-critical", "100m", "100Mi", priority=2_000_000_000),
    "node-critical": _pod("node-critical", "100m", "100Mi", priority=2_000_000_100),
    "burstable": _pod("burstable", "100m", "100Mi"),
    "guaranteed": _pod("guaranteed", "100m", "100Mi", limits=True),
    "high-request-burstable": _pod("high-request-burstable", "300m", "300Mi"),
    "high-request-guaranteed": _pod("high-request-guaranteed", "300m", "300Mi", limits=True),
    "high-priority-burstable": _pod("high-priority-burstable", "200m", "200Mi", priority=100),
}


def reqs(cpu: int, memory: int, pods: int) -> list[tuple[str, int]]:
    """`getAdmissionRequirementList`: cpu in millicores, memory in Mi, pods; zero ones left out."""
    found: list[tuple[str, int]] = []
    if cpu > 0:
        found.append(("cpu", cpu))
    if memory > 0:
        found.append(("memory", memory * Mi))
    if pods > 0:
        found.append(("pods", pods))
    return found


@pytest.mark.parametrize(
    ("preemptor", "inputs", "requirements", "expected"),
    [
        pytest.param("cluster-critical", [], reqs(0, 0, 0), [], id="no requirements"),
        pytest.param("cluster-critical", [], reqs(0, 0, 1), None, id="no pods"),
        pytest.param(
            "cluster-critical",
            ["burstable"],
            reqs(100, 100, 1),
            ["burstable"],
            id="equal pods and resources requirements",
        ),
        pytest.param(
            "cluster-critical", ["burstable"], reqs(200, 200, 2), None, id="higher requirements than pod requests"
        ),
        pytest.param(
            "cluster-critical",
            ["burstable", "bestEffort"],
            reqs(0, 0, 1),
            ["bestEffort"],
            id="choose between bestEffort and burstable",
        ),
        pytest.param(
            "cluster-critical",
            ["burstable", "guaranteed"],
            reqs(0, 0, 1),
            ["burstable"],
            id="choose between burstable and guaranteed",
        ),
        pytest.param(
            "cluster-critical",
            ["bestEffort", "high-request-burstable", "burstable"],
            reqs(100, 100, 0),
            ["burstable"],
            id="choose lower request burstable if it meets requirements",
        ),
        pytest.param(
            "cluster-critical",
            ["bestEffort", "burstable", "high-request-burstable"],
            reqs(150, 150, 0),
            ["high-request-burstable"],
            id="choose higher request burstable if lower does not meet requirements",
        ),
        pytest.param(
            "cluster-critical",
            ["bestEffort", "burstable", "high-request-burstable", "guaranteed", "high-request-guaranteed"],
            reqs(350, 350, 0),
            ["burstable", "high-request-burstable"],
            id="multiple pods required",
        ),
        pytest.param(
            "cluster-critical",
            ["bestEffort", "burstable", "high-request-burstable", "guaranteed", "high-request-guaranteed"],
            reqs(0, 550, 0),
            ["high-request-burstable", "high-request-guaranteed"],
            id="evict guaranteed when we have to, and dont evict the extra burstable",
        ),
        pytest.param(
            "cluster-critical",
            ["bestEffort", "high-request-burstable", "guaranteed", "high-request-guaranteed"],
            reqs(0, 350, 0),
            ["high-request-burstable", "guaranteed"],
            id="evict guaranteed when we have to, and dont evict the high request guaranteed pod",
        ),
        pytest.param(
            "node-critical",
            ["cluster-critical"],
            reqs(100, 0, 0),
            ["cluster-critical"],
            id="evict cluster critical pod for node critical pod",
        ),
        pytest.param(
            "cluster-critical",
            ["node-critical"],
            reqs(100, 0, 0),
            None,
            id="can not evict node critical pod for cluster critical pod",
        ),
        pytest.param(
            "cluster-critical",
            ["bestEffort", "guaranteed", "high-request-burstable", "high-priority-burstable"],
            reqs(0, 500, 0),
            ["high-request-burstable", "high-priority-burstable"],
            id="evict the high priority pod when we have to, and dont evict the extra guaranteed",
        ),
    ],
)
def test_get_pods_to_preempt(
    preemptor: str, inputs: list[str], requirements: list[tuple[str, int]], expected: list[str] | None
) -> None:
    pods = [PODS[name] for name in inputs]
    if expected is None:
        with pytest.raises(NoPodsToPreempt, match=r"^no set of running pods found to reclaim resources: "):
            pods_to_preempt(PODS[preemptor], pods, requirements, pod_requests)
        return
    chosen = pods_to_preempt(PODS[preemptor], pods, requirements, pod_requests)
    assert sorted(p["metadata"]["name"] for p in chosen) == sorted(expected)


@pytest.mark.parametrize(
    ("requirements", "pod", "expected"),
    [
        pytest.param(reqs(0, 0, 0), "burstable", 0.0, id="no requirements"),
        pytest.param(reqs(100, 100, 1), "bestEffort", 2.0, id="no requests, some requirements"),
        pytest.param(reqs(100, 100, 1), "burstable", 0.0, id="equal requests and requirements"),
        pytest.param(reqs(50, 50, 0), "burstable", 0.0, id="higher requests than requirements"),
    ],
)
def test_admission_requirements_distance(requirements: list[tuple[str, int]], pod: str, expected: float) -> None:
    assert distance(requirements, PODS[pod], pod_requests) == expected


@pytest.mark.parametrize(
    ("initial", "pod", "expected"),
    [
        pytest.param(reqs(0, 0, 0), "burstable", reqs(0, 0, 0), id="subtract a pod from no requirements"),
        pytest.param(
            reqs(100, 100, 1), "bestEffort", reqs(100, 100, 0), id="subtract no requests from some requirements"
        ),
        pytest.param(reqs(100, 100, 1), "burstable", reqs(0, 0, 0), id="equal requests and requirements"),
        pytest.param(reqs(50, 50, 0), "burstable", reqs(0, 0, 0), id="subtract higher requests than requirements"),
        pytest.param(reqs(200, 200, 1), "burstable", reqs(100, 100, 0), id="subtract lower requests than requirements"),
    ],
)
def test_admission_requirements_subtract(
    initial: list[tuple[str, int]], pod: str, expected: list[tuple[str, int]]
) -> None:
    assert sorted(subtract(initial, [PODS[pod]], pod_requests)) == sorted(expected)


@pytest.mark.parametrize(
    ("pod1", "pod2", "expected"),
    [
        pytest.param(("50Mi", "100m"), (None, None), False, id="some requests vs no requests should return false"),
        pytest.param(("50Mi", "100m"), ("200Mi", "100m"), True, id="lower memory should return true"),
        pytest.param(("200Mi", "100m"), ("50Mi", "200m"), False, id="memory priority over CPU"),
        pytest.param(("50Mi", "100m"), ("50Mi", "100m"), True, id="equal resource request should return true"),
    ],
)
def test_smaller_resource_request(
    pod1: tuple[str | None, str | None], pod2: tuple[str | None, str | None], expected: bool
) -> None:
    a = _pod("a", pod1[1] or "", pod1[0] or "")
    b = _pod("b", pod2[1] or "", pod2[0] or "")
    assert smaller(a, b, pod_requests) is expected


def test_smaller_resource_request_ignores_other_resources() -> None:
    """Row "resource type other than CPU and memory are ignored": requests of another resource compare equal."""
    a, b = _pod("high-storage"), _pod("low-storage")
    a["spec"]["containers"][0]["resources"] = {"requests": {"ephemeral-storage": "300Mi"}}
    b["spec"]["containers"][0]["resources"] = {"requests": {"ephemeral-storage": "200Mi"}}
    assert smaller(a, b, pod_requests) is True


# ------------------------------------------------------------------------------------ TestHandleAdmissionFailure


def _run(scenario: Any) -> None:
    async def main() -> None:
        node = await start_node({})
        node.runtime.outcome = lambda pod, container, attempt: Outcome(duration=36000)
        try:
            await scenario(node)
        finally:
            await node.agent.stop()

    asyncio.run(main())


def _container(cpu: str, memory: str, *, limits: bool = False) -> Obj:
    requests = {"cpu": cpu, "memory": memory}
    return {
        "name": "main",
        "image": "busybox",
        "resources": {"requests": requests, **({"limits": requests} if limits else {})},
    }


def test_handle_admission_failure_multiple_pods_evicted() -> None:
    """TestHandleAdmissionFailure "multiple pods evicted - no other failure reason", on a running node agent
    (4 CPUs): a cluster-critical pod that lacks memory has the high-request burstable and guaranteed pods
    preempted — Failed, reason `Preempting` "Preempted in order to admit critical pod", `DisruptionTarget`
    `TerminationByKubelet` "Pod was preempted by Kubelet to accommodate a critical pod.", a `Preempting` Warning
    event — and then runs; the other pods are left alone."""

    async def scenario(node: Node) -> None:
        memory = parse_quantity(node.agent._allocatable["memory"]).int_value()
        others = {
            "cluster-critical-1": {"priority": 2_000_000_000, "containers": [_container("100m", "100Mi")]},
            "best-effort": {"priority": 0, "containers": [{"name": "main", "image": "busybox"}]},
            "burstable": {"priority": 0, "containers": [_container("100m", "100Mi")]},
            "high-request-burstable": {"priority": 0, "containers": [_container("300m", "300Mi")]},
            "guaranteed": {"priority": 0, "containers": [_container("100m", "100Mi", limits=True)]},
            "high-request-guaranteed": {"priority": 0, "containers": [_container("300m", "300Mi", limits=True)]},
        }
        # a node-critical pod takes the rest but 100Mi: the cluster-critical pod (650Mi) lacks 550Mi, and may not
        # preempt it (Preemptable: both critical, lower priority)
        filler = memory - 900 * Mi - 100 * Mi
        await node.create_pod("filler", priority=2_000_000_100, containers=[_container("100m", str(filler))])
        for name, spec in others.items():
            await node.create_pod(name, **spec)
        await settle(node.clock, lambda: all(node.phase(n) == "Running" for n in ["filler", *others]))
        await node.create_pod("cluster-critical", priority=2_000_000_000, containers=[_container("100m", "650Mi")])
        names = ["filler", *others, "cluster-critical"]
        await settle(node.clock, lambda: node.phase("cluster-critical") == "Running", max_virtual=600)
        preempted = sorted(n for n in names if node.phase(n) == "Failed")
        assert preempted == ["high-request-burstable", "high-request-guaranteed"]
        for name in preempted:
            status = (node.pod(name) or {})["status"]
            assert (status["reason"], status["message"]) == ("Preempting", "Preempted in order to admit critical pod")
            target = next(c for c in status["conditions"] if c["type"] == "DisruptionTarget")
            assert (target["status"], target["reason"], target["message"]) == (
                "True",
                "TerminationByKubelet",
                "Pod was preempted by Kubelet to accommodate a critical pod.",
            )

    _run(scenario)


def test_handle_admission_failure_critical_pods_cannot_be_preempted() -> None:
    """TestHandleAdmissionFailure "critical pods cannot be preempted - no other failure reason", on a running
    agent: the node's memory is held by a critical pod of the same priority, which may not be preempted, so the
    new critical pod is refused with the kubelet's `UnexpectedAdmissionError` and nothing is stopped."""

    async def scenario(node: Node) -> None:
        memory = parse_quantity(node.agent._allocatable["memory"]).int_value()
        holder = memory - 100 * Mi
        await node.create_pod("holder", priority=2_000_000_000, containers=[_container("100m", str(holder))])
        await settle(node.clock, lambda: node.phase("holder") == "Running")
        await node.create_pod("cluster-critical", priority=2_000_000_000, containers=[_container("100m", "300Mi")])
        await settle(node.clock, lambda: node.phase("cluster-critical") == "Failed", max_virtual=60)
        status = (node.pod("cluster-critical") or {})["status"]
        assert (status["reason"], status["message"]) == (
            "UnexpectedAdmissionError",
            "Pod was rejected: Unexpected error while attempting to recover from admission failure: preemption: "
            f"error finding a set of pods to preempt: no set of running pods found to reclaim resources: "
            f"[(res: memory, q: {200 * Mi}), ]",
        )
        assert node.phase("holder") == "Running"

    _run(scenario)
