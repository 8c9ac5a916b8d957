"""TTL after finished on virtual time: a finished Job and its pods are deleted once the TTL has passed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kjobs.api.timeutil import format_time, parse_time
from kjobs.api.types import Obj
from kjobs.client.resources import JOBS, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.job import JobController
from kjobs.controllers.ttl import TTLAfterFinishedController, TTLError, finish_time, time_left
from tests.support import local_api, settle


def job_manifest(ttl: int | None) -> Obj:
    spec: Obj = {
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}},
    }
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "done", "namespace": "default"}, "spec": spec}


async def finish_pod(client: Any, name: str, clock: FakeClock) -> None:
    pod = await client.get(PODS, "default", name)
    pod["status"] = {
        "phase": "Succeeded",
        "containerStatuses": [
            {
                "name": "main",
                "image": "busybox",
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": 0, "finishedAt": format_time(clock.now())}},
            }
        ],
    }
    await client.update(PODS, "default", pod, subresource="status")


@pytest.mark.parametrize("ttl", [0, 100])
def test_finished_job_and_its_pods_are_deleted_after_the_ttl(ttl: int) -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        jobs = JobController(client, clock=clock)
        ttl_controller = TTLAfterFinishedController(client, clock=clock)
        await jobs.start()
        await ttl_controller.start()
        await client.create(JOBS, "default", job_manifest(ttl))
        await settle(clock, lambda: len(jobs.pods.list("default")) == 1)
        await finish_pod(client, jobs.pods.list("default")[0]["metadata"]["name"], clock)

        def complete() -> bool:
            job = jobs.jobs.get("default", "done")
            return job is not None and any(c["type"] == "Complete" for c in job["status"].get("conditions", []))

        await settle(clock, complete)
        job = await client.get(JOBS, "default", "done")
        finished = parse_time(
            next(c for c in job["status"]["conditions"] if c["type"] == "Complete")["lastTransitionTime"]
        )
        await settle(clock, lambda: ttl_controller.jobs.get("default", "done") is None)
        assert finished + ttl <= clock.now() <= finished + ttl + 2
        count = "ttl_after_finished_controller_job_deletion_duration_seconds_count"
        assert ttl_controller.metrics.registry.get_sample_value(count) == 1.0
        await settle(clock, lambda: not jobs.pods.list("default"))
        await ttl_controller.stop()
        await jobs.stop()

    asyncio.run(scenario())


def test_unfinished_or_ttl_less_jobs_are_left_alone() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        ttl_controller = TTLAfterFinishedController(client, clock=clock)
        await ttl_controller.start()
        await client.create(JOBS, "default", job_manifest(None))
        clock.advance(3600)
        await settle(clock, lambda: True)
        assert await client.get(JOBS, "default", "done")
        await ttl_controller.stop()

    asyncio.run(scenario())


def test_time_left_and_finish_time() -> None:
    now = parse_time("2026-01-01T00:10:00Z")
    job: Obj = {
        "metadata": {"name": "j", "namespace": "ns"},
        "spec": {"ttlSecondsAfterFinished": 300},
        "status": {
            "completionTime": "2026-01-01T00:09:00Z",
            "conditions": [{"type": "Failed", "status": "True", "lastTransitionTime": "2026-01-01T00:08:00Z"}],
        },
    }
    assert time_left(job, now) == (180.0, parse_time("2026-01-01T00:13:00Z"))
    assert time_left(dict(job, metadata={"deletionTimestamp": "2026-01-01T00:09:00Z"}), now) is None
    job["status"]["conditions"][0].pop("lastTransitionTime")
    with pytest.raises(TTLError, match="unable to find the time when the Job ns/j finished"):
        finish_time(job)
