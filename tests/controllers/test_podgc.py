"""Pod GC on virtual time: orphans after the quarantine, out-of-service terminating pods, thresholds."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.resources import NODES, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.podgc import PodGCController, PodGCSettings, collection_order
from kjobs.store import base as store_base
from tests.controllers.disruption_support import condition, get_or_none, node_manifest, pod_manifest
from tests.support import local_api, settle


async def setup(**settings: Any) -> tuple[FakeClock, Any, PodGCController]:
    clock = FakeClock()
    client = await local_api(clock)
    await client.create(NODES, None, node_manifest("n1", clock))
    controller = PodGCController(client, clock=clock, settings=PodGCSettings(**settings))
    return clock, client, controller


async def run_pod(client: Any, name: str, node: str | None, *, finalizer: bool = False) -> Obj:
    body = pod_manifest(name, node)
    if finalizer:
        body["metadata"]["finalizers"] = ["batch.kubernetes.io/job-tracking"]
    await client.create(PODS, "default", body)
    pod: Obj = await client.get(PODS, "default", name)
    pod["status"]["phase"] = "Running"
    updated: Obj = await client.update(PODS, "default", pod, subresource="status")
    return updated


def test_pod_of_a_deleted_node_becomes_failed_with_disruption_target_after_quarantine() -> None:
    async def scenario() -> None:
        clock, client, controller = await setup()
        await client.create(NODES, None, node_manifest("gone", clock))
        await run_pod(client, "orphan", "gone", finalizer=True)
        await run_pod(client, "plain-orphan", "gone")
        await run_pod(client, "fine", "n1")
        await controller.start()
        start = clock.now()
        await client.delete(NODES, None, "gone")

        def collected() -> bool:
            pod = controller.pods.get("default", "orphan")
            return pod is not None and bool(pod["metadata"].get("deletionTimestamp"))

        await settle(clock, collected)
        assert 40 <= clock.now() - start <= 60  # quarantine 40 s, checked on the 20 s period
        pod = await client.get(PODS, "default", "orphan")
        assert pod["status"]["phase"] == "Failed"
        target = condition(pod, "DisruptionTarget")
        assert target is not None
        assert (target["status"], target["reason"], target["message"]) == (
            "True",
            "DeletionByPodGC",
            "PodGC: node no longer exists",
        )
        assert pod["metadata"]["deletionGracePeriodSeconds"] == 0  # forced; the finalizer keeps it for now
        assert await get_or_none(client, PODS, "default", "plain-orphan") is None  # forced and removed
        assert (await client.get(PODS, "default", "fine"))["status"]["phase"] == "Running"
        sample = controller.metrics.registry.get_sample_value(
            "pod_gc_collector_force_delete_pods_total", {"namespace": "default", "reason": "orphaned"}
        )
        assert sample == 2.0
        await controller.stop()

    asyncio.run(scenario())


def test_node_back_within_quarantine_saves_its_pods() -> None:
    async def scenario() -> None:
        clock, client, controller = await setup()
        await run_pod(client, "early", "late-node")
        await controller.start()
        await settle(clock, lambda: clock.now() - 1_767_225_600.0 >= 21)
        await client.create(NODES, None, node_manifest("late-node", clock))
        await settle(clock, lambda: clock.now() - 1_767_225_600.0 >= 100)
        pod = await get_or_none(client, PODS, "default", "early")
        assert pod is not None and not pod["metadata"].get("deletionTimestamp")
        await controller.stop()

    asyncio.run(scenario())


def test_terminating_pod_on_out_of_service_node_is_failed_and_force_deleted() -> None:
    async def scenario() -> None:
        clock, client, controller = await setup()
        node = await client.create(NODES, None, node_manifest("down", clock, ready="False"))
        node["spec"] = {"taints": [{"key": "node.kubernetes.io/out-of-service", "effect": "NoExecute"}]}
        await client.update(NODES, None, node)
        await run_pod(client, "stuck", "down")
        await run_pod(client, "stuck-ready-node", "n1")
        await client.delete(PODS, "default", "stuck")
        await client.delete(PODS, "default", "stuck-ready-node")
        await controller.start()
        await settle(clock, lambda: controller.pods.get("default", "stuck") is None, max_virtual=30)
        still = await client.get(PODS, "default", "stuck-ready-node")
        assert still["metadata"]["deletionGracePeriodSeconds"] == 30
        await controller.stop()

    asyncio.run(scenario())


def test_unscheduled_terminating_pod_is_removed() -> None:
    async def scenario() -> None:
        clock, client, controller = await setup()
        body = pod_manifest("pending", None)
        body["metadata"]["finalizers"] = ["example.com/hold"]
        await client.create(PODS, "default", body)
        await client.delete(PODS, "default", "pending")
        await controller.start()

        def failed() -> bool:
            pod = controller.pods.get("default", "pending")
            return pod is not None and pod["status"].get("phase") == "Failed"

        await settle(clock, failed, max_virtual=30)
        pod = await client.get(PODS, "default", "pending")
        assert condition(pod, "DisruptionTarget") is None
        await controller.stop()

    asyncio.run(scenario())


def test_terminated_pods_over_the_threshold_go_oldest_and_evicted_first() -> None:
    async def scenario() -> None:
        clock, client, controller = await setup(terminated_pod_threshold=2)
        for i, name in enumerate(["a", "b", "c", "d"]):
            await client.create(PODS, "default", pod_manifest(name, "n1"))
            pod = await client.get(PODS, "default", name)
            pod["status"]["phase"] = "Succeeded"
            if name == "d":
                pod["status"].update(phase="Failed", reason="Evicted")
            await client.update(PODS, "default", pod, subresource="status")
            clock.advance(1 + i)
        await controller.start()
        await settle(clock, lambda: len(controller.pods.list("default")) == 2, max_virtual=30)
        assert sorted(p["metadata"]["name"] for p in controller.pods.list("default")) == ["b", "c"]
        await controller.stop()

    asyncio.run(scenario())


def test_a_terminated_pod_is_deleted_as_its_informer_holds_it_which_stays_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pod GC hands its informer's pod to the delete (`known`): the API server reads that object rather than
    decode the stored pod again, and the deleted object it answers and sends watchers shares its members, the
    informer's copy left at its own resourceVersion (docs/perf45.md). The store keeps no object of its own, as
    for a pod written tens of thousands of writes before pod GC deletes it."""
    monkeypatch.setattr(store_base, "_LATEST_KEPT", 0)

    async def scenario() -> None:
        clock, client, controller = await setup(terminated_pod_threshold=1)
        for i, name in enumerate(["a", "b"]):
            await client.create(PODS, "default", pod_manifest(name, "n1"))
            pod = await client.get(PODS, "default", name)
            pod["status"]["phase"] = "Succeeded"
            await client.update(PODS, "default", pod, subresource="status")
            clock.advance(1 + i)
        store = client.service.store.store
        watch = store.watch("pods", "default", since=store.revision)
        await controller.start()
        await settle(clock, lambda: controller.pods.get("default", "b") is not None, max_virtual=5)
        held = controller.pods.get("default", "a")
        assert held is not None
        read_at = held["metadata"]["resourceVersion"]
        decoded = orjson.loads(store.get_raw("pods", "default", "a"))  # what the delete read before
        await settle(clock, lambda: controller.pods.get("default", "a") is None, max_virtual=30)
        event = watch.next(timeout=1)
        assert event is not None and str(event.type) == "DELETED"
        assert event.object["spec"] is held["spec"]  # the informer's object, not a decode of the stored pod
        assert held["metadata"]["resourceVersion"] == read_at
        assert event.object["metadata"]["resourceVersion"] == str(event.revision) != read_at
        decoded["metadata"]["resourceVersion"] = str(event.revision)
        assert event.raw == orjson.dumps(decoded)  # the bytes a fresh decode gave, byte for byte
        await controller.stop()

    asyncio.run(scenario())


def test_collection_order() -> None:
    def pod(name: str, created: float, evicted: bool = False) -> Obj:
        status: Obj = {"phase": "Failed", "reason": "Evicted"} if evicted else {"phase": "Succeeded"}
        return {"metadata": {"name": name, "creationTimestamp": format_time(created)}, "status": status}

    pods = [pod("new", 200), pod("old", 100), pod("evicted", 300, True), pod("also-old", 100)]
    assert [p["metadata"]["name"] for p in sorted(pods, key=collection_order)] == ["evicted", "also-old", "old", "new"]


def test_job_pod_on_a_deleted_node_fails_with_disruption_target_and_the_job_ignores_it() -> None:
    async def scenario() -> None:
        from kjobs.client.resources import JOBS
        from kjobs.controllers.job import JobController

        clock, client, controller = await setup()
        jobs = JobController(client, clock=clock)
        await jobs.start()
        await controller.start()
        await client.create(NODES, None, node_manifest("doomed", clock))
        policy = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
        template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}
        await client.create(
            JOBS,
            "default",
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "work", "namespace": "default"},
                "spec": {"podFailurePolicy": policy, "template": template},
            },
        )
        await settle(clock, lambda: len(jobs.pods.list("default")) == 1)
        first = jobs.pods.list("default")[0]["metadata"]["name"]
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": first}, "target": {"name": "doomed"}}
        await client.post_subresource(PODS, "default", first, "binding", binding)
        await client.delete(NODES, None, "doomed")

        def failed() -> bool:
            pod = jobs.pods.get("default", first)
            return pod is None or pod["status"].get("phase") == "Failed"

        await settle(clock, failed, max_virtual=120)
        await settle(clock, lambda: len([p for p in jobs.pods.list("default") if p["metadata"]["name"] != first]) == 1)
        job = await client.get(JOBS, "default", "work")
        assert job["status"].get("failed", 0) == 0
        pod = await get_or_none(client, PODS, "default", first)
        if pod is not None:  # still held by the tracking finalizer, already marked for removal
            assert pod["metadata"]["deletionGracePeriodSeconds"] == 0
            assert condition(pod, "DisruptionTarget")["reason"] == "DeletionByPodGC"  # type: ignore[index]
        await controller.stop()
        await jobs.stop()

    asyncio.run(scenario())


def test_a_pod_already_gone_counts_as_a_force_delete_error() -> None:
    """gc_controller.go counts every error of markFailedAndDeletePod in
    `pod_gc_collector_force_delete_pod_errors_total`, a NotFound included (a pod deleted between the pod GC's list
    and its delete), beside the attempt itself."""

    async def scenario() -> None:
        _, client, controller = await setup()
        gone = await run_pod(client, "gone-meanwhile", "n1")
        await client.delete(PODS, "default", "gone-meanwhile", grace_period_seconds=0)
        await controller._collect(gone, "terminated")  # as listed from the cache just before the delete
        labels = {"namespace": "default", "reason": "terminated"}
        registry = controller.metrics.registry
        assert registry.get_sample_value("pod_gc_collector_force_delete_pods_total", labels) == 1.0
        assert registry.get_sample_value("pod_gc_collector_force_delete_pod_errors_total", labels) == 1.0

    asyncio.run(scenario())
