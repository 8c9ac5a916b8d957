"""Upstream rows of pkg/controller/ttlafterfinished/ttlafterfinished_controller_test.go (TestTimeLeft) and the
controller's `processJob`/`processTTL`/`needsCleanup` (ttlafterfinished_controller.go), driven through kjobs' API
and Job controller on virtual time (docs/upstream-gc-ttl.md)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.resources import JOBS
from kjobs.clock import FakeClock
from kjobs.controllers.job import JobController
from kjobs.controllers.ttl import TTLAfterFinishedController, needs_cleanup, time_left
from tests.controllers.test_ttl import finish_pod, job_manifest
from tests.controllers.upstream_support import Recording, run_for
from tests.support import local_api, settle

NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def new_job(completed: float | None, failed: float | None, ttl: int | None) -> Obj:
    """`newJob`: a Job with a True Complete and/or Failed condition at the given times."""
    conditions = []
    if completed is not None:
        conditions.append({"type": "Complete", "status": "True", "lastTransitionTime": format_time(completed)})
    if failed is not None:
        conditions.append({"type": "Failed", "status": "True", "lastTransitionTime": format_time(failed)})
    spec: Obj = {} if ttl is None else {"ttlSecondsAfterFinished": ttl}
    return {"metadata": {"name": "foobar", "namespace": "default"}, "spec": spec, "status": {"conditions": conditions}}


@pytest.mark.parametrize(
    ("completed", "failed", "ttl", "expected"),
    [
        pytest.param(None, None, 100, None, id="Error case: Job unfinished"),
        pytest.param(NOW, None, None, None, id="Error case: Job completed now, no TTL"),
        pytest.param(NOW, None, 0, (0.0, NOW), id="Job completed now, 0s TTL"),
        pytest.param(NOW, None, 10, (10.0, NOW + 10), id="Job completed now, 10s TTL"),
        pytest.param(NOW - 10, None, 15, (5.0, NOW + 5), id="Job completed 10s ago, 15s TTL"),
        pytest.param(None, NOW, None, None, id="Error case: Job failed now, no TTL"),
        pytest.param(None, NOW, 0, (0.0, NOW), id="Job failed now, 0s TTL"),
        pytest.param(None, NOW, 10, (10.0, NOW + 10), id="Job failed now, 10s TTL"),
        pytest.param(None, NOW - 10, 15, (5.0, NOW + 5), id="Job failed 10s ago, 15s TTL"),
    ],
)
def test_TestTimeLeft(
    completed: float | None, failed: float | None, ttl: int | None, expected: tuple[float, float] | None
) -> None:
    """The "should not be cleaned up" error rows are None here: kjobs' `time_left` answers None for a Job that
    needs no cleanup instead of an error its only caller (`processTTL`) never reaches."""
    assert time_left(new_job(completed, failed, ttl), NOW) == expected


@pytest.mark.parametrize(
    ("conditions", "finished"),
    [
        ([{"type": "Complete", "status": "True"}], True),
        ([{"type": "Failed", "status": "True"}], True),
        ([{"type": "Complete", "status": "False"}], False),
        ([{"type": "FailureTarget", "status": "True"}], False),
        ([{"type": "SuccessCriteriaMet", "status": "True"}], False),
        ([{"type": "Suspended", "status": "True"}], False),
        ([], False),
    ],
)
def test_needsCleanup_only_a_finished_job(conditions: list[Obj], finished: bool) -> None:
    """`needsCleanup`: a TTL and `jobutil.IsJobFinished` (Complete or Failed True; the interim FailureTarget and
    SuccessCriteriaMet are not finished)."""
    job: Obj = {"spec": {"ttlSecondsAfterFinished": 0}, "status": {"conditions": conditions}}
    assert needs_cleanup(job) is finished


def test_timeLeft_finished_in_the_future_warns_and_defers(caplog: pytest.LogCaptureFixture) -> None:
    """Clock skew: a Job whose finish time is ahead of the controller's clock expires at finish + TTL by that
    clock, so cleanup waits the skew out; the controller logs upstream's warning."""
    with caplog.at_level(logging.INFO, logger="kjobs.controllers.ttl"):
        assert time_left(new_job(NOW + 60, None, 10), NOW) == (70.0, NOW + 70)
    assert "Found Job finished in the future. This is likely due to time skew in the cluster." in caplog.text
    assert "Job cleanup will be deferred" in caplog.text


def run(
    body: Callable[[FakeClock, Any, Recording, JobController, TTLAfterFinishedController], Awaitable[None]],
) -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        recording = Recording(client)
        jobs = JobController(client, clock=clock)
        ttl = TTLAfterFinishedController(recording, clock=clock)
        await jobs.start()
        await ttl.start()
        try:
            await body(clock, client, recording, jobs, ttl)
        finally:
            await ttl.stop()
            await jobs.stop()

    asyncio.run(scenario())


async def finish(clock: FakeClock, client: Any, jobs: JobController, ttl_seconds: int) -> Obj:
    await client.create(JOBS, "default", job_manifest(ttl_seconds))
    await settle(clock, lambda: len(jobs.pods.list("default")) == 1)
    await finish_pod(client, jobs.pods.list("default")[0]["metadata"]["name"], clock)

    def complete() -> bool:
        job = jobs.jobs.get("default", "done")
        return job is not None and any(c["type"] == "Complete" for c in job["status"].get("conditions", []))

    await settle(clock, complete)
    done: Obj = await client.get(JOBS, "default", "done")
    return done


def test_processJob_deletes_in_the_foreground_with_a_uid_precondition() -> None:
    """The expired Job is deleted with propagationPolicy Foreground and its uid as a precondition, once."""

    async def body(clock: FakeClock, client: Any, rec: Recording, jobs: JobController, ttl: Any) -> None:
        job = await finish(clock, client, jobs, 30)
        await run_for(clock, 60)
        deletes = rec.of("delete", "jobs")
        assert [(a.name, a.options) for a in deletes] == [
            ("done", {"propagation_policy": "Foreground", "preconditions": {"uid": job["metadata"]["uid"]}})
        ]

    run(body)


def test_processJob_rechecks_the_ttl_on_the_live_job() -> None:
    """ "The Job's TTL is assumed to have expired, but the Job TTL might be stale": a TTL raised after the cached
    Job expired is read from the API before deleting, and the Job is kept until the new expiry."""

    async def body(clock: FakeClock, client: Any, rec: Recording, jobs: JobController, ttl: Any) -> None:
        await finish(clock, client, jobs, 3600)
        await ttl.stop()  # the cache keeps the old TTL; the live Job gets a longer one
        live = await client.get(JOBS, "default", "done")
        live["spec"]["ttlSecondsAfterFinished"] = 7200
        await client.update(JOBS, "default", live)
        clock.advance(3600)
        await ttl.process(("default", "done"))
        assert not rec.of("delete", "jobs")
        assert await client.get(JOBS, "default", "done")

    run(body)


def test_processJob_ignores_a_job_being_deleted() -> None:
    """`processTTL`: a Job with a deletionTimestamp is not deleted again (held here by a finalizer)."""

    async def body(clock: FakeClock, client: Any, rec: Recording, jobs: JobController, ttl: Any) -> None:
        await finish(clock, client, jobs, 30)
        await client.patch(JOBS, "default", "done", {"metadata": {"finalizers": ["x/y"]}}, patch_type="merge")
        await client.delete(JOBS, "default", "done", propagation_policy="Background")
        await run_for(clock, 60)
        assert not rec.of("delete", "jobs")

    run(body)
