"""Taint eviction on virtual time: DisruptionTarget then delete, tolerationSeconds, cancellation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kjobs.api.taints import (
    FOREVER,
    matching_tolerations,
    min_toleration_seconds,
    tolerates,
)
from kjobs.api.types import Obj
from kjobs.client.resources import JOBS, NODES, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.job import JobController
from kjobs.controllers.nodelifecycle import NodeLifecycleController
from kjobs.controllers.tainteviction import TaintEvictionController
from tests.controllers.disruption_support import Heartbeats, condition, events_about, node_manifest, pod_manifest
from tests.support import local_api, settle

UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}
BROKEN = {"key": "example.com/broken", "effect": "NoExecute"}
"""A NoExecute taint no pod tolerates (every pod tolerates not-ready and unreachable for 300 s by default)."""


async def taint(client: Any, node: str, *taints: Obj) -> None:
    obj = await client.get(NODES, None, node)
    obj.setdefault("spec", {})["taints"] = list(taints)
    await client.update(NODES, None, obj)


async def setup() -> tuple[FakeClock, Any, TaintEvictionController]:
    clock = FakeClock()
    client = await local_api(clock)
    await client.create(NODES, None, node_manifest("n1", clock))
    controller = TaintEvictionController(client, clock=clock)
    await controller.start()
    return clock, client, controller


def deleting(controller: TaintEvictionController, name: str) -> bool:
    pod = controller.pods.get("default", name)
    return pod is not None and bool(pod["metadata"].get("deletionTimestamp"))


def test_untolerated_noexecute_taint_marks_disruption_target_then_deletes() -> None:
    async def scenario() -> None:
        clock, client, controller = await setup()
        await client.create(PODS, "default", pod_manifest("victim", "n1"))
        await client.create(PODS, "default", pod_manifest("elsewhere", None))
        await taint(client, "n1", BROKEN)
        await settle(clock, lambda: deleting(controller, "victim"), max_virtual=1)
        pod = await client.get(PODS, "default", "victim")
        target = condition(pod, "DisruptionTarget")
        assert target is not None
        assert (target["status"], target["reason"], target["message"]) == (
            "True",
            "DeletionByTaintManager",
            "Taint manager: deleting due to NoExecute taint",
        )
        assert pod["metadata"]["deletionGracePeriodSeconds"] == 30  # a normal graceful delete
        await controller.events.flush()
        events = await events_about(client, "victim", "TaintManagerEviction")
        assert [e["message"] for e in events] == ["Marking for deletion Pod default/victim"]
        assert events[0]["source"]["component"] == "taint-eviction-controller"
        assert not (await client.get(PODS, "default", "elsewhere"))["metadata"].get("deletionTimestamp")
        assert controller.metrics.registry.get_sample_value("taint_eviction_controller_pod_deletions_total") == 1.0
        await controller.stop()

    asyncio.run(scenario())


def test_toleration_seconds_delay_the_eviction_and_untainting_cancels_it() -> None:
    async def scenario() -> None:
        clock, client, controller = await setup()
        start = clock.now()
        tol = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}
        await client.create(PODS, "default", pod_manifest("slow", "n1", tolerations=[dict(tol, tolerationSeconds=300)]))
        await client.create(PODS, "default", pod_manifest("quick", "n1", tolerations=[dict(tol, tolerationSeconds=30)]))
        await client.create(PODS, "default", pod_manifest("forever", "n1", tolerations=[tol]))
        await taint(client, "n1", UNREACHABLE)
        await settle(clock, lambda: deleting(controller, "quick"))
        assert 30 <= clock.now() - start < 31
        assert controller.scheduled("default", "slow") == pytest.approx(start + 300, abs=1)
        assert controller.scheduled("default", "forever") is None
        await taint(client, "n1")
        await settle(clock, lambda: controller.scheduled("default", "slow") is None)
        clock.advance(600)
        await settle(clock, lambda: True)
        for name in ("slow", "forever"):
            pod = await client.get(PODS, "default", name)
            assert not pod["metadata"].get("deletionTimestamp")
            assert condition(pod, "DisruptionTarget") is None
        await controller.events.flush()
        cancelled = await events_about(client, "slow", "TaintManagerEviction")
        assert [e["message"] for e in cancelled] == ["Cancelling deletion of Pod default/slow"]
        await controller.stop()

    asyncio.run(scenario())


def test_an_unreachable_node_keeps_its_pods_for_the_default_300_seconds() -> None:
    """The API server's DefaultTolerationSeconds admission gives each pod `unreachable:NoExecute` for 300 s."""

    async def scenario() -> None:
        clock, client, controller = await setup()
        start = clock.now()
        await client.create(PODS, "default", pod_manifest("patient", "n1"))
        await taint(client, "n1", UNREACHABLE)
        await settle(clock, lambda: controller.scheduled("default", "patient") is not None)
        assert controller.scheduled("default", "patient") == pytest.approx(start + 300, abs=1)
        await settle(clock, lambda: deleting(controller, "patient"), max_virtual=301)
        assert 300 <= clock.now() - start < 301
        await controller.stop()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        pytest.param({"operator": "Exists"}, UNREACHABLE, True, id="wildcard"),
        pytest.param({"key": "node.kubernetes.io/unreachable", "operator": "Exists"}, UNREACHABLE, True, id="key"),
        pytest.param({"key": "a", "value": "x"}, {"key": "a", "value": "x", "effect": "NoExecute"}, True, id="eq"),
        pytest.param({"key": "a", "value": "y"}, {"key": "a", "value": "x", "effect": "NoExecute"}, False, id="ne"),
        pytest.param({"operator": "Exists", "effect": "NoSchedule"}, UNREACHABLE, False, id="effect"),
    ],
)
def test_tolerates(toleration: Obj, taint: Obj, expected: bool) -> None:
    assert tolerates(toleration, taint) is expected


def test_first_matching_toleration_per_taint_and_minimum_seconds() -> None:
    taints = [UNREACHABLE, {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]
    tolerations = [
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 100},
        {"operator": "Exists", "tolerationSeconds": 50},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 5},
    ]
    ok, used = matching_tolerations(taints, tolerations)
    assert ok and min_toleration_seconds(used) == 50
    assert matching_tolerations(taints, tolerations[:1]) == (False, [])
    assert min_toleration_seconds([{"operator": "Exists"}]) == FOREVER
    assert min_toleration_seconds([{"operator": "Exists", "tolerationSeconds": -3}]) == 0


def test_job_pod_on_a_dead_node_is_disrupted_and_the_job_ignores_it() -> None:
    """Heartbeats stop → Unknown + unreachable taint → DisruptionTarget + delete → policy Ignore → replaced."""

    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        beats = Heartbeats(client, clock)
        for name in ("good", "bad"):
            await client.create(NODES, None, node_manifest(name, clock))
            await beats.add(name)
        beats.start()
        nodes = NodeLifecycleController(client, clock=clock)
        evictor = TaintEvictionController(client, clock=clock)
        jobs = JobController(client, clock=clock)
        for controller in (nodes, evictor, jobs):
            await controller.start()
        policy = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
        await client.create(
            JOBS,
            "default",
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "work", "namespace": "default"},
                "spec": {
                    "podFailurePolicy": policy,
                    "template": {
                        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}
                    },
                },
            },
        )
        await settle(clock, lambda: len(jobs.pods.list("default")) == 1)
        first = jobs.pods.list("default")[0]["metadata"]["name"]
        await client.post_subresource(
            PODS,
            "default",
            first,
            "binding",
            {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": first}, "target": {"name": "bad"}},
        )
        beats.alive.discard("bad")
        await settle(clock, lambda: deleting(evictor, first), max_virtual=600)
        pod = await client.get(PODS, "default", first)
        assert condition(pod, "DisruptionTarget")["reason"] == "DeletionByTaintManager"  # type: ignore[index]
        # The kubelet (absent here) would stop the containers; play it: the pod ends Failed.
        pod["status"]["phase"] = "Failed"
        await client.update(PODS, "default", pod, subresource="status")
        await settle(clock, lambda: len(jobs.pods.list("default")) >= 2, max_virtual=600)
        job = await client.get(JOBS, "default", "work")
        assert job["status"].get("failed", 0) == 0
        await beats.stop()
        for controller in (jobs, evictor, nodes):
            await controller.stop()

    asyncio.run(scenario())
