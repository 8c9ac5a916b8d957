"""The CronJob controller on virtual time: Jobs at their scheduled times, history limits, concurrency policies,
suspension, a late start, and deletion cascading to the Jobs."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.resources import CRONJOBS, EVENTS, JOBS
from kjobs.clock import FakeClock
from kjobs.controllers.cronjob import CronJobController
from kjobs.controllers.garbagecollector import GarbageCollector
from kjobs.controllers.job import JobController
from kjobs.cronjob.jobs import SCHEDULED_TIMESTAMP_ANNOTATION
from tests.controllers.test_ttl import finish_pod
from tests.support import local_api, settle


def manifest(**spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "every-minute", "namespace": "default"},
        "spec": {
            "schedule": "*/1 * * * *",
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}
                    }
                }
            },
            **spec,
        },
    }


Scenario = Callable[[Any, FakeClock, CronJobController, JobController], Awaitable[None]]


def run(scenario: Scenario, *, late: float = 0.0, collector: bool = False, **spec: Any) -> None:
    async def main() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        jobs = JobController(client, clock=clock)
        cronjobs = CronJobController(client, clock=clock)
        gc = GarbageCollector(client, clock) if collector else None
        await jobs.start()
        await client.create(CRONJOBS, "default", manifest(**spec))
        clock.advance(late)
        await cronjobs.start()
        if gc is not None:
            await gc.start()
        try:
            await scenario(client, clock, cronjobs, jobs)
        finally:
            if gc is not None:
                await gc.stop()
            await cronjobs.stop()
            await jobs.stop()

    asyncio.run(main())


async def run_loop() -> None:
    """Let every task that can run do so (without moving virtual time)."""
    for _ in range(500):
        await asyncio.sleep(0)


def names(controller: CronJobController) -> list[str]:
    return sorted(j["metadata"]["name"] for j in controller.jobs.list("default"))


async def reasons(client: Any) -> list[str]:
    items, _ = await client.list(EVENTS, "default")
    return [e["reason"] for e in items if e["involvedObject"]["kind"] == "CronJob"]


async def finish_job(client: Any, clock: FakeClock, jobs: JobController, name: str) -> None:
    await settle(clock, lambda: any(p["metadata"]["labels"].get("job-name") == name for p in jobs.pods.list("default")))
    pod = next(p for p in jobs.pods.list("default") if p["metadata"]["labels"].get("job-name") == name)
    await finish_pod(client, pod["metadata"]["name"], clock)

    def complete() -> bool:
        job = jobs.jobs.get("default", name)
        return job is not None and any(c["type"] == "Complete" for c in job["status"].get("conditions", []))

    await settle(clock, complete)


def test_a_job_at_each_scheduled_time_tracked_in_status() -> None:
    async def scenario(client: Any, clock: FakeClock, cronjobs: CronJobController, jobs: JobController) -> None:
        start = clock.now()  # 2026-01-01T00:00:00Z, a whole minute: the first Job is due a minute later
        await settle(clock, lambda: bool(names(cronjobs)))
        assert 60 <= clock.now() - start <= 61
        job = cronjobs.jobs.list("default")[0]
        assert job["metadata"]["name"] == f"every-minute-{int(start + 60) // 60}"
        assert job["metadata"]["annotations"][SCHEDULED_TIMESTAMP_ANNOTATION] == format_time(start + 60)
        owner = job["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("CronJob", "every-minute", True)
        await settle(clock, lambda: bool(cronjobs.cronjobs.get("default", "every-minute")["status"].get("active")))
        status = cronjobs.cronjobs.get("default", "every-minute")["status"]
        assert [ref["name"] for ref in status["active"]] == [job["metadata"]["name"]]
        assert status["lastScheduleTime"] == format_time(start + 60)
        await finish_job(client, clock, jobs, job["metadata"]["name"])
        await settle(clock, lambda: "lastSuccessfulTime" in cronjobs.cronjobs.get("default", "every-minute")["status"])
        status = cronjobs.cronjobs.get("default", "every-minute")["status"]
        assert "active" not in status
        await settle(clock, lambda: len(names(cronjobs)) == 2)
        assert 120 <= clock.now() - start <= 121
        assert (await reasons(client))[:3] == ["SuccessfulCreate", "SawCompletedJob", "SuccessfulCreate"]
        skew = "cronjob_controller_job_creation_skew_duration_seconds"
        assert cronjobs.metrics.registry.get_sample_value(f"{skew}_count") == 2.0
        assert cronjobs.metrics.registry.get_sample_value(f"{skew}_bucket", {"le": "1.0"}) == 2.0

    run(scenario)


def test_history_limits_keep_the_newest_finished_jobs() -> None:
    async def scenario(client: Any, clock: FakeClock, cronjobs: CronJobController, jobs: JobController) -> None:
        for count in range(1, 4):
            await settle(clock, lambda count=count: len(jobs.jobs.list("default")) >= min(count, 2))
            newest = max(names(cronjobs))
            await finish_job(client, clock, jobs, newest)
            await settle(clock, lambda newest=newest: max(names(cronjobs)) != newest)
        await settle(clock, lambda: len(names(cronjobs)) == 2)  # one finished Job kept, the running newest
        assert "SuccessfulDelete" in await reasons(client)

    run(scenario, successfulJobsHistoryLimit=1)


def test_forbid_skips_a_time_while_a_job_runs() -> None:
    async def scenario(client: Any, clock: FakeClock, cronjobs: CronJobController, jobs: JobController) -> None:
        await settle(clock, lambda: bool(names(cronjobs)))
        first = names(cronjobs)
        clock.advance(150)
        await run_loop()
        await cronjobs.events.flush()
        assert names(cronjobs) == first
        assert "JobAlreadyActive" in await reasons(client)

    run(scenario, concurrencyPolicy="Forbid")


def test_replace_deletes_the_running_job_for_the_next_one() -> None:
    async def scenario(client: Any, clock: FakeClock, cronjobs: CronJobController, jobs: JobController) -> None:
        await settle(clock, lambda: bool(names(cronjobs)))
        first = names(cronjobs)[0]
        await settle(clock, lambda: bool(names(cronjobs)) and first not in names(cronjobs))

        def active() -> list[str]:
            return [ref["name"] for ref in cronjobs.cronjobs.get("default", "every-minute")["status"].get("active", [])]

        await settle(clock, lambda: active() == names(cronjobs))
        assert len(active()) == 1 and active() != [first]
        await cronjobs.events.flush()
        assert "SuccessfulDelete" in await reasons(client)

    run(scenario, concurrencyPolicy="Replace")


def test_a_suspended_cronjob_starts_nothing_until_resumed() -> None:
    async def scenario(client: Any, clock: FakeClock, cronjobs: CronJobController, jobs: JobController) -> None:
        for _ in range(5):
            clock.advance(60)
            await run_loop()
        assert names(cronjobs) == []
        cj = await client.get(CRONJOBS, "default", "every-minute")
        cj["spec"]["suspend"] = False
        await client.update(CRONJOBS, "default", cj)
        await settle(clock, lambda: len(names(cronjobs)) == 1)

    run(scenario, suspend=True)


def test_a_late_start_creates_one_job_for_the_most_recent_time_only() -> None:
    async def scenario(client: Any, clock: FakeClock, cronjobs: CronJobController, jobs: JobController) -> None:
        await settle(clock, lambda: bool(names(cronjobs)))
        assert names(cronjobs) == [f"every-minute-{int(clock.now()) // 60}"]
        assert clock.now() % 60 < 1  # at once, for the minute just passed (3 were missed)

    run(scenario, late=180.5)


def test_deleting_the_cronjob_deletes_its_jobs() -> None:
    async def scenario(client: Any, clock: FakeClock, cronjobs: CronJobController, jobs: JobController) -> None:
        await settle(clock, lambda: bool(names(cronjobs)))
        await client.delete(CRONJOBS, "default", "every-minute")
        await settle(clock, lambda: not jobs.jobs.list("default"))
        assert (await client.list(JOBS, "default"))[0] == []

    run(scenario, collector=True)


def test_deleting_the_cronjob_with_orphan_propagation_keeps_its_jobs_without_their_owner() -> None:
    # `kubectl delete cronjob --cascade=orphan`: the orphan finalizer's work (the garbage collector's
    # attemptToOrphan) removes the reference from each dependent, so the collector has nothing to delete after
    async def scenario(client: Any, clock: FakeClock, cronjobs: CronJobController, jobs: JobController) -> None:
        await settle(clock, lambda: bool(names(cronjobs)))
        created = names(cronjobs)
        await client.delete(CRONJOBS, "default", "every-minute", propagation_policy="Orphan")

        def released() -> bool:
            cached = jobs.jobs.list("default")
            return names(cronjobs) == created and all(not j["metadata"].get("ownerReferences") for j in cached)

        await settle(clock, released, max_virtual=60)
        for _ in range(1000):  # the collector's turn: nothing it may delete
            await asyncio.sleep(0)
        kept = (await client.list(JOBS, "default"))[0]
        assert sorted(j["metadata"]["name"] for j in kept) == created
        assert [j["metadata"].get("ownerReferences") for j in kept] == [None] * len(created)

    run(scenario, collector=True)


def test_deleting_the_cronjob_in_the_foreground_waits_for_its_jobs() -> None:
    # `kubectl delete cronjob --cascade=foreground`: the CronJob stays (foregroundDeletion) until its Jobs are gone
    async def scenario(client: Any, clock: FakeClock, cronjobs: CronJobController, jobs: JobController) -> None:
        await settle(clock, lambda: bool(names(cronjobs)))
        answer = await client.delete(CRONJOBS, "default", "every-minute", propagation_policy="Foreground")
        assert answer["metadata"]["finalizers"] == ["foregroundDeletion"]
        waiting = await client.get(CRONJOBS, "default", "every-minute")
        assert waiting["metadata"]["deletionTimestamp"] and (await client.list(JOBS, "default"))[0]
        await settle(clock, lambda: not jobs.jobs.list("default"))
        await settle(clock, lambda: not cronjobs.cronjobs.list("default"))

    run(scenario, collector=True)
