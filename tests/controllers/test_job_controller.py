"""The Job controller against the in-process API, on virtual time: pods created, failures decided, counted."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.client.resources import JOBS, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.job import JobController, JobControllerSettings
from kjobs.job.config import SyncConfig
from tests.support import local_api, settle


def job_manifest(**spec: Any) -> Obj:
    base: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "work", "namespace": "default"},
        "spec": {
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}},
        },
    }
    base["spec"].update(spec)
    return base


def terminated(phase: str, code: int, clock: FakeClock) -> Obj:
    from kjobs.api.timeutil import format_time

    return {
        "phase": phase,
        "containerStatuses": [
            {
                "name": "main",
                "image": "busybox",
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": code, "finishedAt": format_time(clock.now())}},
            }
        ],
    }


class Cluster:
    def __init__(self, clock: FakeClock, client: Any, controller: JobController) -> None:
        self.clock, self.client, self.controller = clock, client, controller
        self.job: Obj = {}

    async def refresh(self) -> Obj:
        self.job = await self.client.get(JOBS, "default", "work")
        return self.job

    def pods(self) -> list[Obj]:
        return sorted(self.controller.pods.list("default"), key=lambda p: p["metadata"]["name"])

    def active(self) -> list[Obj]:
        return [
            p
            for p in self.pods()
            if p.get("status", {}).get("phase") in (None, "", "Pending", "Running")
            and not p["metadata"].get("deletionTimestamp")
        ]

    async def bind(self, pod: Obj, node: str) -> None:
        name = pod["metadata"]["name"]
        await self.client.post_subresource(
            PODS,
            "default",
            name,
            "binding",
            {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": name},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node},
            },
        )

    async def finish(self, pod: Obj, phase: str, code: int) -> None:
        pod = await self.client.get(PODS, "default", pod["metadata"]["name"])
        pod["status"] = terminated(phase, code, self.clock)
        await self.client.update(PODS, "default", pod, subresource="status")

    def condition(self, cond_type: str) -> Obj | None:
        return next((c for c in self.job.get("status", {}).get("conditions", []) if c["type"] == cond_type), None)


async def start(spec: dict[str, Any], *, backoff: float = 10.0) -> Cluster:
    clock = FakeClock()
    client = await local_api(clock)
    controller = JobController(
        client,
        clock=clock,
        settings=JobControllerSettings(sync=SyncConfig(pod_failure_backoff=backoff), batch_period=1.0),
    )
    await controller.start()
    await client.create(JOBS, "default", job_manifest(**spec))
    return Cluster(clock, client, controller)


async def wait_status(c: Cluster, predicate: Any) -> Obj:
    box: dict[str, Obj] = {}

    async def poll() -> None:
        while True:
            box["job"] = await c.refresh()
            if predicate(box["job"]):
                return
            await asyncio.sleep(0)

    task = asyncio.get_running_loop().create_task(poll())
    await settle(c.clock, task.done)
    return box["job"]


def test_failjob_on_exit_42_fails_the_job_and_counts_the_deleted_pod() -> None:
    async def scenario() -> None:
        policy = {
            "rules": [{"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}}]
        }
        c = await start({"completions": 4, "parallelism": 2, "podFailurePolicy": policy})
        await settle(c.clock, lambda: len(c.active()) == 2)
        first, second = c.active()
        for pod in (first, second):  # bound pods terminate gracefully (unbound ones vanish at once)
            await c.bind(pod, "node-1")
        await c.finish(first, "Failed", 42)
        job = await wait_status(
            c,
            lambda j: (
                any(x["type"] == "FailureTarget" for x in j["status"].get("conditions", []))
                and j["status"].get("failed") == 2
            ),
        )
        target = c.condition("FailureTarget")
        assert target is not None and target["reason"] == "PodFailurePolicy"
        assert target["message"] == (
            f"Container main for pod default/{first['metadata']['name']} failed with exit code 42 "
            "matching FailJob rule at index 0"
        )
        assert job["status"]["failed"] == 2  # the running pod was deleted and counted
        # The deleted pod must reach a terminal phase before the Job is Failed (podReplacementPolicy Failed).
        assert c.condition("Failed") is None
        assert job["status"]["terminating"] == 1
        deleted = await c.client.get(PODS, "default", second["metadata"]["name"])
        assert deleted["metadata"]["deletionTimestamp"]
        await c.finish(second, "Failed", 143)
        job = await wait_status(c, lambda j: any(x["type"] == "Failed" for x in j["status"].get("conditions", [])))
        assert c.condition("Failed")["reason"] == "PodFailurePolicy"  # type: ignore[index]
        assert job["status"]["failed"] == 2
        assert job["status"].get("terminating", 0) == 0
        await c.controller.stop()

    asyncio.run(scenario())


def test_ignored_disruption_is_replaced_not_counted() -> None:
    async def scenario() -> None:
        policy = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
        c = await start({"completions": 1, "parallelism": 1, "backoffLimit": 0, "podFailurePolicy": policy})
        await settle(c.clock, lambda: len(c.active()) == 1)
        (pod,) = c.active()
        fresh = await c.client.get(PODS, "default", pod["metadata"]["name"])
        fresh["status"] = terminated("Failed", 143, c.clock)
        fresh["status"]["conditions"] = [
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "EvictionByEvictionAPI",
                "message": "Eviction API: evicting",
            }
        ]
        await c.client.update(PODS, "default", fresh, subresource="status")
        await settle(
            c.clock, lambda: len(c.active()) == 1 and c.active()[0]["metadata"]["name"] != pod["metadata"]["name"]
        )
        (replacement,) = c.active()
        await c.finish(replacement, "Succeeded", 0)
        job = await wait_status(c, lambda j: any(x["type"] == "Complete" for x in j["status"].get("conditions", [])))
        assert job["status"].get("failed", 0) == 0
        assert job["status"]["succeeded"] == 1
        assert c.condition("Complete")["reason"] == "CompletionsReached"  # type: ignore[index]
        await c.controller.stop()

    asyncio.run(scenario())


@pytest.mark.parametrize("limit", [0, 2])
def test_count_failures_until_backoff_limit_with_pod_creation_backoff(limit: int) -> None:
    async def scenario() -> None:
        c = await start({"backoffLimit": limit}, backoff=10.0)
        failed_at: list[float] = []
        created_at: list[float] = []
        for attempt in range(limit + 1):
            await settle(c.clock, lambda: len(c.active()) == 1)
            created_at.append(c.clock.now())
            await c.finish(c.active()[0], "Failed", 1)
            failed_at.append(c.clock.now())
            if attempt < limit:
                await settle(c.clock, lambda: not c.active())
        job = await wait_status(c, lambda j: any(x["type"] == "Failed" for x in j["status"].get("conditions", [])))
        assert job["status"]["failed"] == limit + 1
        assert c.condition("Failed")["reason"] == "BackoffLimitExceeded"  # type: ignore[index]
        # replacements waited for the pod-failure back-off: 10 s, then 20 s
        for k in range(1, limit + 1):
            assert created_at[k] - failed_at[k - 1] >= 10.0 * 2 ** (k - 1)
        await c.controller.stop()

    asyncio.run(scenario())
