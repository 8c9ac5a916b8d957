"""Upstream rows of test/integration/scheduler/preemption/preemption_test.go (`TestPreemption`'s DisruptionTarget
and anti-affinity rows, `TestNonPreemption`), run against kjobs' scheduler and API.

Upstream starts kube-apiserver and kube-scheduler (with a token filter plugin of its own), creates a node
(cpu 500m, memory 500, 32 pods), runs the existing pods until scheduled, creates the preemptor, and waits
for the victims to be terminating: each then carries `DisruptionTarget`, and the preemptor gets
`status.nominatedNodeName`. Here kjobs' real `Scheduler` does the same on virtual time; the poll windows
(`wait.ForeverTestTimeout`, 30 s) are virtual seconds. Each upstream row runs twice, with the alpha
`SchedulerAsyncPreemption` gate on and off; kjobs ports the "off" run (the gate is off by default in v1.32).
Rows, and those left out: docs/upstream-components.md.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.resources import NODES, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.scheduler import Scheduler
from tests.controllers.disruption_support import condition, get_or_none
from tests.controllers.upstream_support import poll_until, run_for
from tests.support import INTEGRATION_ADMISSION, local_api

LOW, HIGH = 100, 300  # lowPriority, highPriority
MEDIUM = 200  # mediumPriority
FOREVER_TEST_TIMEOUT = 30.0  # wait.ForeverTestTimeout


def pause_pod(name: str, priority: int, cpu: str, memory: str) -> Obj:
    """`initPausePod` with a priority and resource requests."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "priority": priority,
            "containers": [{"name": name, "image": "pause", "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
        },
    }


def node1() -> Obj:
    """`st.MakeNode().Name("node1").Capacity(nodeRes).Label("node", "node1")`: capacity and allocatable."""
    resources = {"pods": "32", "cpu": "500m", "memory": "500"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node1", "labels": {"node": "node1"}},
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


@pytest.mark.parametrize("row", [pytest.param("basic", id="basic pod preemption (Async preemption enabled: false)")])
def test_preemption(row: str) -> None:
    """A preemptor that fits only without the lower-priority victim has the victim terminating, marked
    DisruptionTarget `PreemptionByScheduler`, and is nominated to the victim's node."""

    async def scenario() -> None:
        clock = FakeClock()
        client: Any = await local_api(clock, admission=INTEGRATION_ADMISSION)
        await client.create(NODES, None, node1())
        sched = Scheduler(client, clock=clock)
        await sched.start()
        try:
            await client.create(PODS, "default", pause_pod("victim-pod", LOW, "400m", "200"))

            async def scheduled() -> bool:  # runPausePod: create, then wait until it is scheduled
                pod = await get_or_none(client, PODS, "default", "victim-pod")
                return bool(pod and pod["spec"].get("nodeName"))

            await poll_until(clock, scheduled, window=FOREVER_TEST_TIMEOUT, what="victim-pod scheduled")
            await client.create(PODS, "default", pause_pod("preemptor-pod", HIGH, "300m", "200"))

            async def evicted() -> Obj | None:  # podIsGettingEvicted
                pod = await get_or_none(client, PODS, "default", "victim-pod")
                return pod if pod and pod["metadata"].get("deletionTimestamp") else None

            victim = await poll_until(clock, evicted, window=FOREVER_TEST_TIMEOUT, what="victim-pod evicted")
            target = condition(victim, "DisruptionTarget")
            assert target is not None, "victim-pod does not have the expected condition DisruptionTarget"
            assert (target["status"], target["reason"]) == ("True", "PreemptionByScheduler")

            async def nominated() -> bool:  # waitForNominatedNodeName
                pod = await get_or_none(client, PODS, "default", "preemptor-pod")
                return bool(pod and (pod.get("status") or {}).get("nominatedNodeName"))

            await poll_until(clock, nominated, window=FOREVER_TEST_TIMEOUT, what="preemptor-pod nominated")
        finally:
            await sched.stop()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    "policy",
    [
        pytest.param(None, id="pod preemption will happen (Async preemption enabled: false)"),
        pytest.param("Never", id="pod preemption will not happen (Async preemption enabled: false)"),
    ],
)
def test_non_preemption(policy: str | None) -> None:
    """TestNonPreemption: a preemptor with `preemptionPolicy: Never` is not nominated within 5 s (and its
    would-be victim is left alone, unmarked); without it, it is."""

    async def scenario() -> None:
        clock = FakeClock()
        client: Any = await local_api(clock, admission=INTEGRATION_ADMISSION)
        await client.create(NODES, None, node1())
        sched = Scheduler(client, clock=clock)
        await sched.start()
        try:
            await client.create(PODS, "default", pause_pod("victim-pod", LOW, "400m", "200"))

            async def scheduled() -> bool:  # waitForPodToScheduleWithTimeout(..., 5*time.Second)
                pod = await get_or_none(client, PODS, "default", "victim-pod")
                return bool(pod and pod["spec"].get("nodeName"))

            await poll_until(clock, scheduled, window=5, what="victim-pod scheduled")
            preemptor = pause_pod("preemptor-pod", HIGH, "300m", "200")
            if policy is not None:
                preemptor["spec"]["preemptionPolicy"] = policy
            await client.create(PODS, "default", preemptor)

            async def nominated() -> bool:
                pod = await get_or_none(client, PODS, "default", "preemptor-pod")
                return bool(pod and (pod.get("status") or {}).get("nominatedNodeName"))

            if policy is None:
                await poll_until(clock, nominated, window=5, what="preemptor-pod nominated")
            else:
                await run_for(clock, 5)
                assert not await nominated(), "preemptor-pod was nominated"
                victim = await get_or_none(client, PODS, "default", "victim-pod")
                assert victim is not None and not victim["metadata"].get("deletionTimestamp")
                assert condition(victim, "DisruptionTarget") is None
        finally:
            await sched.stop()

    asyncio.run(scenario())


def _anti(value: str) -> Obj:
    """A required anti-affinity to pods labelled `pod: <value>` on the same `node` (label)."""
    term = {
        "labelSelector": {"matchExpressions": [{"key": "pod", "operator": "In", "values": [value]}]},
        "topologyKey": "node",
    }
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


@pytest.mark.parametrize(
    ("pod1_priority", "preempted"),
    [
        pytest.param(
            LOW,
            ["pod-0", "pod-1"],
            id="preemption is performed to satisfy anti-affinity (Async preemption enabled: false)",
        ),
        pytest.param(
            HIGH,
            [],
            id="preemption is not performed when anti-affinity is not satisfied (Async preemption enabled: false)",
        ),
    ],
)
def test_preemption_anti_affinity(pod1_priority: int, preempted: list[str]) -> None:
    """TestPreemption's anti-affinity rows: the preemptor (high priority, label `pod: preemptor`) must not share
    the node with `pod: p0`, and pod-1 (`pod: p1`) must not share it with the preemptor; resources fit. With pod-1
    of low priority both existing pods are preempted; with pod-1 as important as the preemptor nothing is, since
    pod-1's anti-affinity cannot be removed."""

    async def scenario() -> None:
        clock = FakeClock()
        client: Any = await local_api(clock, admission=INTEGRATION_ADMISSION)
        await client.create(NODES, None, node1())
        sched = Scheduler(client, clock=clock)
        await sched.start()
        try:
            pod0 = pause_pod("pod-0", MEDIUM, "100m", "100")
            pod0["metadata"]["labels"] = {"pod": "p0"}
            pod1 = pause_pod("pod-1", pod1_priority, "100m", "100")
            pod1["metadata"]["labels"] = {"pod": "p1"}
            pod1["spec"]["affinity"] = _anti("preemptor")
            for body in (pod0, pod1):  # runPausePod: create, then wait until it is scheduled
                await client.create(PODS, "default", body)

                async def scheduled(name: str = body["metadata"]["name"]) -> bool:
                    pod = await get_or_none(client, PODS, "default", name)
                    return bool(pod and pod["spec"].get("nodeName"))

                await poll_until(clock, scheduled, window=FOREVER_TEST_TIMEOUT, what="existing pod scheduled")
            preemptor = pause_pod("preemptor-pod", HIGH, "100m", "100")
            preemptor["metadata"]["labels"] = {"pod": "preemptor"}
            preemptor["spec"]["affinity"] = _anti("p0")
            await client.create(PODS, "default", preemptor)
            for name in preempted:

                async def evicted(name: str = name) -> Obj | None:  # podIsGettingEvicted
                    pod = await get_or_none(client, PODS, "default", name)
                    return pod if pod and pod["metadata"].get("deletionTimestamp") else None

                victim = await poll_until(clock, evicted, window=FOREVER_TEST_TIMEOUT, what=f"{name} evicted")
                assert condition(victim, "DisruptionTarget") is not None, f"{name} has no DisruptionTarget"
            if preempted:

                async def nominated() -> bool:  # WaitForNominatedNodeName
                    pod = await get_or_none(client, PODS, "default", "preemptor-pod")
                    return bool(pod and (pod.get("status") or {}).get("nominatedNodeName"))

                await poll_until(clock, nominated, window=FOREVER_TEST_TIMEOUT, what="preemptor-pod nominated")
            else:
                await run_for(clock, FOREVER_TEST_TIMEOUT)
                for name in ("pod-0", "pod-1"):
                    pod = await get_or_none(client, PODS, "default", name)
                    assert pod is not None and not pod["metadata"].get("deletionTimestamp"), f"{name} was preempted"
        finally:
            await sched.stop()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("existing", "pending"),
    [
        pytest.param(
            10,
            5,
            id="starvation test: higher priority pod is scheduled before the lower priority ones "
            "(Async preemption enabled: false)",
        )
    ],
)
def test_preemption_starvation(existing: int, pending: int) -> None:
    """TestPreemptionStarvation: while the preemptor waits for its victims (grace 0: they go at once), the
    pending lower-priority pods do not take the room; the preemptor is nominated, then scheduled."""

    async def scenario() -> None:
        clock = FakeClock()
        client: Any = await local_api(clock, admission=INTEGRATION_ADMISSION)
        await client.create(NODES, None, node1())
        sched = Scheduler(client, clock=clock)
        await sched.start()

        def graceless(name: str) -> Obj:  # mkPriorityPodWithGrace(..., mediumPriority, 0)
            body = pause_pod(name, MEDIUM, "100m", "100")
            body["spec"]["terminationGracePeriodSeconds"] = 0
            return body

        async def read(name: str) -> Obj | None:
            return await get_or_none(client, PODS, "default", name)

        try:
            running = [f"rpod-{i}" for i in range(existing - pending)]
            for name in running:
                await client.create(PODS, "default", graceless(name))
            for name in running:

                async def scheduled(name: str = name) -> bool:
                    pod = await read(name)
                    return bool(pod and pod["spec"].get("nodeName"))

                await poll_until(clock, scheduled, window=FOREVER_TEST_TIMEOUT, what=f"{name} scheduled")
            waiting = [f"ppod-{i}" for i in range(pending)]
            for name in waiting:
                await client.create(PODS, "default", graceless(name))
            for name in waiting:

                async def unschedulable(name: str = name) -> bool:  # podUnschedulable
                    pod = await read(name) or {}
                    cond = condition(pod, "PodScheduled")
                    return bool(
                        cond and cond["status"] == "False" and cond.get("reason") == "Unschedulable"
                    ) and not pod["spec"].get("nodeName")

                await poll_until(clock, unschedulable, window=FOREVER_TEST_TIMEOUT, what=f"{name} unschedulable")
            await client.create(PODS, "default", pause_pod("preemptor-pod", HIGH, "300m", "200"))

            async def nominated() -> bool:
                pod = await read("preemptor-pod")
                return bool(pod and (pod.get("status") or {}).get("nominatedNodeName"))

            await poll_until(clock, nominated, window=FOREVER_TEST_TIMEOUT, what="preemptor-pod nominated")

            async def preemptor_scheduled() -> bool:
                pod = await read("preemptor-pod")
                return bool(pod and pod["spec"].get("nodeName"))

            await poll_until(clock, preemptor_scheduled, window=60, what="preemptor-pod scheduled")
            for name in waiting:  # none of them took the room made for the preemptor
                pod = await read(name)
                assert pod is not None and not pod["spec"].get("nodeName"), name
        finally:
            await sched.stop()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("priority_class", "name", "expected"),
    [
        pytest.param(
            "system-node-critical",
            "pod1-system-node-critical",
            2_000_001_000,
            id="SystemNodeCritical priority class (Async preemption enabled: false)",
        ),
        pytest.param(
            "system-cluster-critical",
            "pod2-system-cluster-critical",
            2_000_000_000,
            id="SystemClusterCritical priority class (Async preemption enabled: false)",
        ),
        pytest.param(
            "foo",
            "pod3-system-cluster-critical",
            'pods "pod3-system-cluster-critical" is forbidden: no PriorityClass with name foo was found',
            id="Invalid priority class should result in error (Async preemption enabled: false)",
        ),
    ],
)
def test_pod_priority_resolution(priority_class: str, name: str, expected: int | str) -> None:
    """TestPodPriorityResolution: with the Priority admission plugin (this test's API server runs it), the system
    PriorityClasses exist from the start (the bootstrap hook) and a kube-system pod naming one is created with its
    value and scheduled; an unknown class is refused with 403 Forbidden."""

    async def scenario() -> None:
        clock = FakeClock()
        raw: Any = await local_api(clock)  # admission as kube-apiserver's: Priority on
        await raw.service.ensure_system_priority_classes()
        client: Any = raw
        await client.create(NODES, None, node1())
        sched = Scheduler(client, clock=clock)
        await sched.start()
        try:
            body = pause_pod(name, 0, "100m", "100")
            del body["spec"]["priority"]
            body["metadata"]["namespace"] = "kube-system"
            body["spec"]["priorityClassName"] = priority_class
            if isinstance(expected, str):
                with pytest.raises(ApiError) as refused:
                    await client.create(PODS, "kube-system", body)
                assert (refused.value.code, refused.value.reason, refused.value.message) == (
                    403,
                    "Forbidden",
                    expected,
                )
                return
            await client.create(PODS, "kube-system", body)

            async def scheduled() -> Obj | None:  # runPausePod
                pod = await get_or_none(client, PODS, "kube-system", name)
                return pod if pod and pod["spec"].get("nodeName") else None

            pod = await poll_until(clock, scheduled, window=FOREVER_TEST_TIMEOUT, what=f"{name} scheduled")
            assert pod["spec"]["priority"] == expected
        finally:
            await sched.stop()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("initial", "additional", "repetitions"),
    [
        pytest.param(
            2,
            20,
            5,
            id="ensures that other pods are not scheduled while preemptor is being marked as nominated "
            "(issue #72124) (Async preemption enabled: false, ClearingNominatedNodeNameAfterBinding: false)",
        )
    ],
)
def test_preemption_races(initial: int, additional: int, repetitions: int) -> None:
    """TestPreemptionRaces: on a node of 5000m / 5000 / 100 pods, two running medium pods leave too little room
    for a 4900m preemptor; it preempts them, and the twenty medium pods created right after it never take the
    room: the preemptor is nominated and scheduled, each of the twenty is unbound and (if marked) unschedulable.
    Five rounds, each cleaning up its pods."""

    async def scenario() -> None:
        clock = FakeClock()
        client: Any = await local_api(clock, admission=INTEGRATION_ADMISSION)
        big = node1()
        resources = {"pods": "100", "cpu": "5000m", "memory": "5000"}
        big["status"]["capacity"] = big["status"]["allocatable"] = resources
        await client.create(NODES, None, big)
        sched = Scheduler(client, clock=clock)
        await sched.start()

        def graceless(name: str) -> Obj:  # mkPriorityPodWithGrace(..., mediumPriority, 0)
            body = pause_pod(name, MEDIUM, "100m", "100")
            body["spec"]["terminationGracePeriodSeconds"] = 0
            return body

        async def read(name: str) -> Obj | None:
            return await get_or_none(client, PODS, "default", name)

        async def bound(name: str) -> bool:
            pod = await read(name)
            return bool(pod and pod["spec"].get("nodeName"))

        try:
            for _ in range(repetitions):
                running = [f"rpod-{i}" for i in range(initial)]
                for name in running:
                    await client.create(PODS, "default", graceless(name))
                for name in running:
                    await poll_until(
                        clock, lambda name=name: bound(name), window=FOREVER_TEST_TIMEOUT, what=f"{name} scheduled"
                    )
                await client.create(PODS, "default", pause_pod("preemptor-pod", HIGH, "4900m", "4900"))
                waiting = [f"ppod-{i}" for i in range(additional)]
                for name in waiting:
                    await client.create(PODS, "default", graceless(name))
                await poll_until(clock, lambda: bound("preemptor-pod"), window=60, what="preemptor-pod scheduled")
                preemptor = await read("preemptor-pod") or {}
                assert (preemptor.get("status") or {}).get("nominatedNodeName") == "node1"
                for name in waiting:  # none took the room made for the preemptor
                    pod = await read(name)
                    assert pod is not None and not pod["spec"].get("nodeName"), f"{name} is already scheduled"
                    scheduled_cond = condition(pod, "PodScheduled")
                    assert scheduled_cond is None or scheduled_cond["status"] == "False", name
                for name in [*waiting, *running, "preemptor-pod"]:  # testutils.CleanupPods
                    if await read(name) is not None:
                        await client.delete(PODS, "default", name, grace_period_seconds=0)

                    async def gone(name: str = name) -> bool:
                        return await read(name) is None

                    await poll_until(clock, gone, window=FOREVER_TEST_TIMEOUT, what=f"{name} deleted")
        finally:
            await sched.stop()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("low_pod_node", "running_node"),
    [
        pytest.param(
            "node-2",
            "node-1",
            id="nominated node released all resource, preemptor is scheduled to the nominated node "
            "(Async preemption enabled: false)",
        ),
        pytest.param(
            "node-1",
            "node-2",
            id="nominated node cannot pass all the filters, preemptor should find a different node "
            "(Async preemption enabled: false)",
        ),
    ],
)
def test_prefer_nominated_node(low_pod_node: str, running_node: str) -> None:
    """TestPreferNominatedNode: a pod nominated to node-1 (upstream rewrites `nominatedNodeName` as the scheduler
    takes the pod; here its status says so before the scheduler starts) goes to node-1 when it fits there, and
    to another node that fits when node-1 does not."""

    async def scenario() -> None:
        clock = FakeClock()
        client: Any = await local_api(clock, admission=INTEGRATION_ADMISSION)
        for name in ("node-1", "node-2"):
            node = node1()
            node["metadata"] = {"name": name}
            await client.create(NODES, None, node)
        low = pause_pod("low-pod", LOW, "100m", "100")
        low["spec"]["nodeName"] = low_pod_node
        await client.create(PODS, "default", low)
        await client.create(PODS, "default", pause_pod("preemptor-pod", HIGH, "500m", "200"))
        preemptor = await client.get(PODS, "default", "preemptor-pod")
        preemptor["status"]["nominatedNodeName"] = "node-1"
        await client.update(PODS, "default", preemptor, subresource="status")
        sched = Scheduler(client, clock=clock)
        await sched.start()
        try:

            async def scheduled() -> str:
                pod = await get_or_none(client, PODS, "default", "preemptor-pod")
                return str(pod["spec"].get("nodeName") or "") if pod else ""

            got = await poll_until(clock, scheduled, window=FOREVER_TEST_TIMEOUT, what="preemptor-pod scheduled")
            assert got == running_node
            low_now = await client.get(PODS, "default", "low-pod")
            assert not low_now["metadata"].get("deletionTimestamp")  # nothing was preempted
        finally:
            await sched.stop()

    asyncio.run(scenario())
