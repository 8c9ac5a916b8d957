"""The Job controller's orphan handling: a pod loses its tracking finalizer only when its Job is confirmed gone.

A restarted controller sees pod events before its Job cache has loaded (issue #13, point 7): those events may
only fill queues; the workers start once both informers have synced (`WaitForNamedCacheSync` in
pkg/controller/job/job_controller.go), and `syncOrphanPod` confirms with a live GET that the Job is gone.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kjobs.api.names import JOB_TRACKING_FINALIZER
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import JOBS, PODS, ResourceRef
from kjobs.clock import FakeClock
from kjobs.controllers.job import JobController, JobControllerSettings
from tests.controllers.test_job_controller import job_manifest, terminated
from tests.support import local_api, settle


class JobListHeldBack(LocalClient):
    """A client whose LIST of Jobs waits for `release`: the Job informer of a controller using it cannot sync
    before the test says so, while its pod informer syncs at once (a slow Job list over HTTP, made exact)."""

    def __init__(self, base: LocalClient) -> None:
        super().__init__(base.service)
        self.release = asyncio.Event()

    async def list(
        self, resource: ResourceRef, namespace: str | None = None, **selectors: Any
    ) -> tuple[list[Obj], str]:
        if resource == JOBS:
            await self.release.wait()
        return await super().list(resource, namespace, **selectors)


def controller(client: LocalClient, clock: FakeClock) -> JobController:
    return JobController(client, clock=clock, settings=JobControllerSettings(batch_period=1.0))


def finalizers(pod: Obj) -> list[str]:
    return list(pod["metadata"].get("finalizers") or [])


async def turn(times: int = 500) -> None:
    """Let every ready task run (a removal started from a handler would be done by then)."""
    for _ in range(times):
        await asyncio.sleep(0)


def test_pod_events_before_the_job_cache_has_synced_strip_no_finalizer() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        first = controller(client, clock)
        await first.start()
        await client.create(JOBS, "default", job_manifest(completions=1, parallelism=1))
        await settle(clock, lambda: len(first.pods.list("default")) == 1)
        (pod,) = first.pods.list("default")
        name = pod["metadata"]["name"]
        await first.stop()

        held = JobListHeldBack(client)
        restarted = controller(held, clock)
        starting = asyncio.get_running_loop().create_task(restarted.start())
        await settle(clock, restarted.pods.synced.is_set)
        await turn()
        clock.set(clock.now() + 30)  # any delayed work would be due by now
        await turn()
        assert not restarted.jobs.synced.is_set()
        assert not starting.done()  # workers wait for every informer
        assert JOB_TRACKING_FINALIZER in finalizers(await client.get(PODS, "default", name))
        # The orphan check itself, with the Job still missing from the cache, reads the Job live: it lives.
        await restarted.sync_orphan_pod(f"default/{name}")
        assert JOB_TRACKING_FINALIZER in finalizers(await client.get(PODS, "default", name))

        held.release.set()
        await settle(clock, starting.done)
        fresh = await client.get(PODS, "default", name)
        fresh["status"] = terminated("Succeeded", 0, clock)
        await client.update(PODS, "default", fresh, subresource="status")
        job: Obj = {}

        def complete() -> bool:
            cached = restarted.jobs.get("default", "work") or {}
            job.update(cached)
            return any(c["type"] == "Complete" for c in (cached.get("status") or {}).get("conditions", []))

        await settle(clock, complete)
        assert job["status"]["succeeded"] == 1
        assert job["status"].get("failed", 0) == 0
        await settle(clock, lambda: not finalizers(restarted.pods.get("default", name) or {"metadata": {}}))
        await restarted.stop()

    asyncio.run(scenario())


def pod_manifest(name: str, owner: Obj | None) -> Obj:
    meta: Obj = {"name": name, "namespace": "default", "finalizers": [JOB_TRACKING_FINALIZER]}
    if owner is not None:
        meta["ownerReferences"] = [{**owner, "controller": True, "blockOwnerDeletion": True}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]},
    }


def test_a_pod_whose_job_is_really_gone_loses_its_finalizer_others_keep_it() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        live = await client.create(JOBS, "default", job_manifest(completions=1, parallelism=1))
        job_ref = {"apiVersion": "batch/v1", "kind": "Job", "name": "work"}
        pods = {
            "deleted-job": {**job_ref, "name": "deleted", "uid": "6f0c1a52-0000-4000-8000-000000000001"},
            "replaced-job": {**job_ref, "uid": "6f0c1a52-0000-4000-8000-000000000002"},  # same name, other uid
            "no-controller": None,
            "replica-set": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid"},
            "live-job": {**job_ref, "uid": live["metadata"]["uid"]},
        }
        for name, owner in pods.items():
            pod = pod_manifest(name, owner)
            if name == "live-job":  # the live Job's own pod: its selector matches it (else the Job releases it)
                pod["metadata"]["labels"] = dict(live["spec"]["selector"]["matchLabels"])
            await client.create(PODS, "default", pod)
        jc = controller(client, clock)
        await jc.start()

        async def tracked(name: str) -> bool:
            return JOB_TRACKING_FINALIZER in finalizers(await client.get(PODS, "default", name))

        def removed() -> bool:
            return all(
                JOB_TRACKING_FINALIZER not in finalizers(jc.pods.get("default", n) or {"metadata": {}})
                for n in ("deleted-job", "replaced-job", "no-controller")
            )

        await settle(clock, removed)
        await turn()
        assert await tracked("replica-set")  # not a Job's pod: not this controller's finalizer to remove
        assert await tracked("live-job")  # its Job lives and is not finished

        # The live Job is deleted (in the background): its pod, marked for deletion, loses the finalizer and goes.
        await client.delete(JOBS, "default", "work", propagation_policy="Background")
        await settle(clock, lambda: jc.pods.get("default", "live-job") is None)
        await jc.stop()

    asyncio.run(scenario())


class CountingJobGets(LocalClient):
    """A client that counts its GETs of Jobs."""

    def __init__(self, base: LocalClient) -> None:
        super().__init__(base.service)
        self.job_gets = 0

    async def get(self, resource: ResourceRef, namespace: str | None, name: str) -> Obj:
        if resource == JOBS:
            self.job_gets += 1
        return await super().get(resource, namespace, name)


def test_a_gone_job_is_confirmed_once_for_all_its_pods() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        gone = {"apiVersion": "batch/v1", "kind": "Job", "name": "gone", "uid": "6f0c1a52-0000-4000-8000-00000000000a"}
        for n in range(5):
            await client.create(PODS, "default", pod_manifest(f"left-{n}", gone))
        counting = CountingJobGets(client)
        jc = controller(counting, clock)
        await jc.start()
        await settle(
            clock,
            lambda: all(not finalizers(jc.pods.get("default", f"left-{n}") or {"metadata": {}}) for n in range(5)),
        )
        assert counting.job_gets == 1
        await jc.stop()

    asyncio.run(scenario())
