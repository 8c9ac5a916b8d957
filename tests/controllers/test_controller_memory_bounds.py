"""What a controller keeps per Job goes with the Job: a `kjobs up` running Jobs all day holds state for the
Jobs that exist, not for every Job it ever saw (docs/soak41.md)."""

from __future__ import annotations

import asyncio

from kjobs.client.resources import JOBS, LEASES, PODS
from kjobs.controllers.job import JobController, JobControllerSettings
from kjobs.job.config import SyncConfig
from tests.controllers.test_garbagecollector import make_job, make_lease, owned_by
from tests.controllers.test_garbagecollector import start as start_gc
from tests.controllers.test_job_controller import Cluster, job_manifest
from tests.support import local_api, settle

JOBS_RUN = 12


def test_the_job_controller_forgets_a_job_once_it_and_its_pods_are_gone() -> None:
    """Its pod index per Job uid and its last sync outcome per Job key were kept for ever (one each per Job the
    server ever ran): they go with the Job's last pod and with the Job."""

    async def scenario() -> None:
        from kjobs.clock import FakeClock

        clock = FakeClock()
        client = await local_api(clock)
        controller = JobController(
            client, clock=clock, settings=JobControllerSettings(sync=SyncConfig(pod_failure_backoff=1), batch_period=1)
        )
        await controller.start()
        c = Cluster(clock, client, controller)
        for n in range(JOBS_RUN):
            manifest = job_manifest()
            manifest["metadata"]["name"] = f"work-{n}"
            await client.create(JOBS, "default", manifest)
        await settle(clock, lambda: len(c.active()) == JOBS_RUN)
        for pod in c.active():
            await c.bind(pod, "node-1")
            await c.finish(pod, "Succeeded", 0)

        def complete() -> bool:
            jobs = controller.jobs.list("default")
            return len(jobs) == JOBS_RUN and all(
                any(x["type"] == "Complete" for x in j.get("status", {}).get("conditions", [])) for j in jobs
            )

        await settle(clock, complete)
        assert len(controller._pods_by_owner) == JOBS_RUN and len(controller.last_outcome) == JOBS_RUN
        for n in range(JOBS_RUN):  # as the garbage collector would: the Job, then its pods
            await client.delete(JOBS, "default", f"work-{n}", propagation_policy="Orphan")
        for pod in c.pods():
            await client.delete(PODS, "default", pod["metadata"]["name"], grace_period_seconds=0)
        await settle(clock, lambda: not controller.pods.list("default") and not controller.jobs.list("default"))
        await settle(clock, lambda: not controller.last_outcome, max_virtual=10)
        assert controller._pods_by_owner == {}
        assert controller.last_outcome == {}
        await controller.stop()

    asyncio.run(scenario())


def test_the_garbage_collector_keeps_no_empty_dependent_set_per_owner() -> None:
    async def scenario() -> None:
        clock, client, gc = await start_gc()
        owners = [await make_job(client, f"owner-{n}") for n in range(JOBS_RUN)]
        for n, owner in enumerate(owners):
            await make_lease(client, f"dependent-{n}", owned_by(owner))
        await gc.start()
        await settle(clock, lambda: len(gc.dependents) == JOBS_RUN, max_virtual=5)
        for n in range(JOBS_RUN):
            await client.delete(LEASES, "default", f"dependent-{n}")
            await client.delete(JOBS, "default", f"owner-{n}", propagation_policy="Background")
        await settle(clock, lambda: not gc.informers[JOBS].list("default"), max_virtual=5)
        assert gc.dependents == {}
        await gc.stop()

    asyncio.run(scenario())
