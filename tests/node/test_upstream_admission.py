"""Rows of the kubelet's admission tests, on a kjobs node agent: pods it refuses end Failed with the predicate's
reason and `Pod was rejected: ` before its message (kubelet.go rejectPod, lifecycle/predicate.go).

Upstream: pkg/kubelet/kubelet_test.go (TestHandleNodeSelector, TestHandleMemExceeded) and
pkg/kubelet/lifecycle/predicate_test.go. docs/upstream-kubelet.md lists the rows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from kjobs.client.resources import NODES
from kjobs.node.sim_runtime import Outcome
from tests.node.test_agent import NODE, Node, start_node
from tests.support import settle

AFFINITY = "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"


def _run(scenario: Callable[[Node], Awaitable[None]]) -> None:
    async def main() -> None:
        node = await start_node({})
        node.runtime.outcome = lambda pod, container, attempt: Outcome(duration=3600)
        try:
            await scenario(node)
        finally:
            await node.agent.stop()

    asyncio.run(main())


async def _label(node: Node, **labels: str) -> None:
    await node.client.patch(NODES, None, NODE, {"metadata": {"labels": labels}})
    await settle(node.clock, lambda: all(node.agent._node_labels().get(k) == v for k, v in labels.items()))


def _required(key: str, *values: str) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def test_handle_node_selector() -> None:
    """TestHandleNodeSelector: a pod bound to a node whose labels its nodeSelector does not match is rejected."""

    async def scenario(node: Node) -> None:
        await _label(node, key="B")
        await node.create_pod("pod-a", nodeSelector={"key": "A"})
        await node.create_pod("pod-b", nodeSelector={"key": "B"})
        await settle(node.clock, lambda: node.phase("pod-a") == "Failed" and node.phase("pod-b") == "Running")
        rejected = node.pod("pod-a")
        assert rejected is not None
        assert (rejected["status"]["reason"], rejected["status"]["message"]) == ("NodeAffinity", AFFINITY)
        assert [e["type"] for e in await node.events("NodeAffinity")] == ["Warning"]

    _run(scenario)


def test_handle_required_node_affinity() -> None:
    """The required node affinity is checked as the nodeSelector is (GeneralPredicates' NodeAffinity)."""

    async def scenario(node: Node) -> None:
        await _label(node, zone="b")
        await node.create_pod("elsewhere", affinity=_required("zone", "a"))
        await node.create_pod("here", affinity=_required("zone", "a", "b"))
        await settle(node.clock, lambda: node.phase("elsewhere") == "Failed" and node.phase("here") == "Running")
        assert node.pod("elsewhere")["status"]["reason"] == "NodeAffinity"  # type: ignore[index]

    _run(scenario)


def test_handle_mem_exceeded_before_node_affinity() -> None:
    """TestHandleMemExceeded: OutOfmemory with the kubelet's message; insufficient resources are the first
    reason when the node affinity fails too (AdmissionCheck checks resources first)."""

    async def scenario(node: Node) -> None:
        big = {"name": "main", "image": "busybox", "resources": {"requests": {"memory": "90Gi"}}}
        await node.create_pod("big", containers=[big], nodeSelector={"key": "A"})
        await settle(node.clock, lambda: node.phase("big") == "Failed")
        status = node.pod("big")["status"]  # type: ignore[index]
        assert status["reason"] == "OutOfmemory"
        assert status["message"].startswith(
            "Pod was rejected: Node didn't have enough resource: memory, requested: 96636764160, used: 0, capacity: "
        )

    _run(scenario)


TAINT = "Pod was rejected: Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"


def test_general_predicates_no_execute_taint() -> None:
    """generalFilter's taint check: a pod that does not tolerate one of the node's NoExecute taints is rejected;
    NoSchedule taints are the scheduler's business, not the kubelet's."""

    async def scenario(node: Node) -> None:
        taints = [
            {"key": "dedicated", "value": "x", "effect": "NoExecute"},
            {"key": "soft", "value": "y", "effect": "NoSchedule"},
        ]
        await node.client.patch(NODES, None, NODE, {"spec": {"taints": taints}})
        await settle(node.clock, lambda: bool(((node.agent._watched_node or {}).get("spec") or {}).get("taints")))
        await node.create_pod("intolerant")
        toleration = {"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoExecute"}
        await node.create_pod("tolerant", tolerations=[toleration])
        await settle(node.clock, lambda: node.phase("intolerant") == "Failed" and node.phase("tolerant") == "Running")
        status = node.pod("intolerant")["status"]  # type: ignore[index]
        assert (status["reason"], status["message"]) == ("TaintToleration", TAINT)

    _run(scenario)
