"""Rows of the kubelet's graceful node shutdown tests, on a kjobs node agent (virtual time, simulated runtime).

Upstream: pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux_test.go (TestManager, Test_migrateConfig,
Test_groupByPriority, Test_managerImpl_processShutdownEvent). docs/upstream-kubelet.md lists the rows.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.client.resources import PODS
from kjobs.node.observations import KillReason
from kjobs.node.shutdown import PriorityGrace, group_by_priority, migrate_config, shutdown_groups
from kjobs.node.sim_runtime import Outcome
from tests.node.test_agent import Node, condition, shut_down, start_node
from tests.support import settle

CRITICAL = 2_000_000_000  # scheduling.SystemCriticalPriority
HIGHEST_USER_DEFINABLE = 1_000_000_000  # scheduling.HighestUserDefinablePriority
MESSAGE = "Pod was terminated in response to imminent node shutdown."


def make_pod(name: str, priority: int, grace: int | None = None) -> Obj:
    spec: Obj = {"priority": priority}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"metadata": {"name": name, "uid": name}, "spec": spec}


# ------------------------------------------------------------------------------------------ Test_migrateConfig


@pytest.mark.parametrize(
    ("requested", "critical", "want"),
    [
        pytest.param(300, 120, [(0, 180), (CRITICAL, 120)], id="both shutdownGracePeriodRequested and CriticalPods"),
        pytest.param(100, 0, [(0, 100), (CRITICAL, 0)], id="only shutdownGracePeriodRequested"),
        pytest.param(0, 0, None, id="empty configuration"),
        pytest.param(1, 100, None, id="wrong configuration"),
    ],
)
def test_migrate_config(requested: float, critical: float, want: list[tuple[int, int]] | None) -> None:
    got = migrate_config(requested, critical)
    assert (None if got is None else [(g.priority, g.seconds) for g in got]) == want


# ---------------------------------------------------------------------------------------- Test_groupByPriority


def names(groups: list[tuple[PriorityGrace, list[Obj]]]) -> list[tuple[int, float, list[str]]]:
    return [(group.priority, group.seconds, [p["metadata"]["name"] for p in pods]) for group, pods in groups]


def test_group_by_priority_migrate_config() -> None:
    periods = shutdown_groups(300, 120)
    pods = [make_pod("normal-pod", 0), make_pod("highest-user-definable-pod", HIGHEST_USER_DEFINABLE)]
    pods.append(make_pod("critical-pod", CRITICAL))
    assert names(group_by_priority(periods, pods)) == [
        (0, 180, ["normal-pod", "highest-user-definable-pod"]),
        (CRITICAL, 120, ["critical-pod"]),
    ]


def test_group_by_priority_pod_priority() -> None:
    periods = [PriorityGrace(p, 10 * p) for p in (1, 2, 3, 4)]
    pods = [make_pod(f"pod-{p}", p) for p in range(6)]
    assert names(group_by_priority(periods, pods)) == [
        (1, 10, ["pod-0", "pod-1"]),
        (2, 20, ["pod-2"]),
        (3, 30, ["pod-3"]),
        (4, 40, ["pod-4", "pod-5"]),
    ]


def test_shutdown_groups_are_sorted_low_priority_first_and_given_ones_replace_the_migrated() -> None:
    given = (PriorityGrace(100, 5), PriorityGrace(-10, 7))
    assert [(g.priority, g.seconds) for g in shutdown_groups(30, 10, given)] == [(-10, 7), (100, 5)]


# ------------------------------------------------------------------------------------------------- TestManager


POD_SETS: dict[str, list[tuple[str, int, int | None]]] = {
    "nil": [("normal-pod-nil-grace-period", 0, None), ("critical-pod-nil-grace-period", CRITICAL, None)],
    "short": [("normal-pod-grace-period", 0, 2), ("critical-pod-grace-period", CRITICAL, 2)],
    "long": [("normal-pod-long-grace-period", 0, 1000)],
}


async def _shutdown(pods: list[tuple[str, int, int | None]], **settings: Any) -> tuple[Node, dict[str, float]]:
    node = await start_node({name: Outcome(duration=3600) for name, _, _ in pods}, **settings)
    for name, priority, grace in pods:
        extra: Obj = {"priority": priority}
        if grace is not None:
            extra["terminationGracePeriodSeconds"] = grace
        await node.create_pod(name, **extra)
    await settle(node.clock, lambda: all(node.phase(name) == "Running" for name, _, _ in pods))
    uid_names = {node.pod(name)["metadata"]["uid"]: name for name, _, _ in pods}  # type: ignore[index]
    graces: dict[str, float] = {}
    kill = node.runtime.kill_pod

    async def recording(uid: str, *, grace_seconds: float, reason: KillReason | None = None) -> None:
        graces[uid_names[uid]] = grace_seconds
        await kill(uid, grace_seconds=grace_seconds, reason=reason)

    node.runtime.kill_pod = recording  # type: ignore[method-assign]
    await shut_down(node)
    return node, graces


@pytest.mark.parametrize(
    ("requested", "critical", "sets", "want"),
    [
        pytest.param(
            30,
            10,
            ["nil"],
            {"normal-pod-nil-grace-period": 20, "critical-pod-nil-grace-period": 10},
            id="no override (total=30s, critical=10s)",
        ),
        pytest.param(
            30,
            10,
            ["nil", "short"],
            {
                "normal-pod-nil-grace-period": 20,
                "critical-pod-nil-grace-period": 10,
                "normal-pod-grace-period": 2,
                "critical-pod-grace-period": 2,
            },
            id="no override (total=30s, critical=10s) pods with terminationGracePeriod and without",
        ),
        pytest.param(
            30,
            10,
            ["nil", "short", "long"],
            {
                "normal-pod-nil-grace-period": 20,
                "critical-pod-nil-grace-period": 10,
                "normal-pod-grace-period": 2,
                "critical-pod-grace-period": 2,
                "normal-pod-long-grace-period": 20,
            },
            id="no override (total=30s, critical=10s) pod with long terminationGracePeriod is overridden",
        ),
        pytest.param(
            30,
            0,
            ["nil"],
            {"normal-pod-nil-grace-period": 30, "critical-pod-nil-grace-period": 0},
            id="no override (total=30, critical=0)",
        ),
        pytest.param(
            5,
            5,
            ["nil"],
            {"normal-pod-nil-grace-period": 0, "critical-pod-nil-grace-period": 5},
            id="no override, all time to critical pods",
        ),
    ],
)
def test_manager(requested: float, critical: float, sets: list[str], want: dict[str, float]) -> None:
    pods = [pod for name in sets for pod in POD_SETS[name]]

    async def scenario() -> None:
        node, graces = await _shutdown(
            pods, shutdown_grace_period=requested, shutdown_grace_period_critical_pods=critical
        )
        try:
            assert graces == want
        finally:
            await node.agent.stop()

    asyncio.run(scenario())


def test_manager_verify_pod_status() -> None:
    async def scenario() -> None:
        node, _ = await _shutdown(
            [("running-pod", 0, None)], shutdown_grace_period=30, shutdown_grace_period_critical_pods=10
        )
        try:
            pod = await node.client.get(PODS, "default", "running-pod")
            status = pod["status"]
            assert (status["phase"], status["reason"], status["message"]) == ("Failed", "Terminated", MESSAGE)
            target = condition(pod, "DisruptionTarget")
            assert (target["status"], target["reason"], target["message"]) == ("True", "TerminationByKubelet", MESSAGE)
        finally:
            await node.agent.stop()

    asyncio.run(scenario())


# ------------------------------------------------------------------- Test_managerImpl_processShutdownEvent


def test_process_shutdown_event_kill_pod_func_take_too_long() -> None:
    """A group whose pods outlast its period does not hold the next group back: the critical pods are killed
    when the ordinary group's period is over, not before."""

    async def scenario() -> None:
        pods = [("normal-pod", 1, None), ("critical-pod", 2, None)]
        node = await start_node(
            {"normal-pod": Outcome(duration=3600, term_delay=3600), "critical-pod": Outcome(duration=3600)},
            shutdown_grace_period_by_pod_priority=(PriorityGrace(1, 10), PriorityGrace(2, 20)),
        )
        try:
            for name, priority, _ in pods:
                await node.create_pod(name, priority=priority, terminationGracePeriodSeconds=60)
            await settle(node.clock, lambda: all(node.phase(name) == "Running" for name, _, _ in pods))
            kills: dict[str, tuple[float, float]] = {}
            kill = node.runtime.kill_pod
            uid_names = {node.pod(n)["metadata"]["uid"]: n for n, _, _ in pods}  # type: ignore[index]

            async def recording(uid: str, *, grace_seconds: float, reason: KillReason | None = None) -> None:
                kills[uid_names[uid]] = (node.clock.now(), grace_seconds)
                await kill(uid, grace_seconds=grace_seconds, reason=reason)

            node.runtime.kill_pod = recording  # type: ignore[method-assign]
            start = node.clock.now()
            await shut_down(node)
            assert kills["normal-pod"] == (start, 10)
            critical_at, critical_grace = kills["critical-pod"]
            assert critical_grace == 20
            assert critical_at - start == pytest.approx(10, abs=1.0)  # after the first group's period, not at once
            assert node.phase("normal-pod") == "Failed" and node.phase("critical-pod") == "Failed"
        finally:
            await node.agent.stop()

    asyncio.run(scenario())
