"""Kubernetes' test/integration/cronjob/cronjob_test.go, run against kjobs' CronJob and Job controllers.

Upstream starts kube-apiserver, `cronjob.NewControllerV2` and `job.NewController` over shared informers (no
scheduler, no kubelet: pods stay Pending), creates a CronJob that runs every minute and polls (every second, for
120 s) until a Job the CronJob owns has made exactly one pod the Job owns. Here the API is kjobs' in-process one,
the controllers the real `CronJobController` and `JobController`, and time virtual (`FakeClock`, which starts on
a minute boundary), so the minute until the first scheduled time passes at once (docs/upstream-cronjob.md).
"""

from __future__ import annotations

import asyncio

from kjobs.api.types import Obj
from kjobs.client.informer import InformerFactory
from kjobs.client.resources import CRONJOBS, JOBS, NAMESPACES, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.cronjob import CronJobController, CronJobSettings
from kjobs.controllers.job import JobController
from tests.controllers.upstream_support import poll_until
from tests.support import local_api

POLL_WINDOW = 120.0
"""validateJobAndPod's `wait.PollImmediate(1*time.Second, 120*time.Second, …)`, in virtual seconds."""


def new_cron_job(name: str, namespace: str, schedule: str) -> Obj:
    """newCronJob: successfulJobsHistoryLimit 0, one `foo`/`bar` container, grace 0, restartPolicy Never."""
    pod_spec = {
        "containers": [{"name": "foo", "image": "bar"}],
        "terminationGracePeriodSeconds": 0,
        "restartPolicy": "Never",
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"namespace": namespace, "name": name},
        "spec": {
            "schedule": schedule,
            "successfulJobsHistoryLimit": 0,
            "jobTemplate": {"spec": {"template": {"spec": pod_spec}}},
        },
    }


def _owner_kinds(obj: Obj) -> list[str]:
    return [str(ref.get("kind")) for ref in obj["metadata"].get("ownerReferences") or []]


def test_cron_job_launches_pod_and_cleans_up() -> None:
    """TestCronJobLaunchesPodAndCleansUp."""

    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        shared = InformerFactory(client, clock=clock)  # informerSet, shared by both controllers
        cronjobs = CronJobController(client, clock, CronJobSettings(workers=1), shared=shared)
        jobs = JobController(client, clock=clock, shared=shared)
        namespace = "simple-cronjob-test"
        await client.create(NAMESPACES, None, {"metadata": {"name": namespace}})
        await cronjobs.start()
        await jobs.start()
        try:
            await client.create(CRONJOBS, namespace, new_cron_job("foo", namespace, "* * * * ?"))

            async def job_and_pod() -> bool:
                """validateJobAndPod: every Job has one owner, a CronJob; once there is exactly one pod, it has
                one owner, a Job."""
                listed, _ = await client.list(JOBS, namespace)
                if not listed:
                    return False
                for job in listed:
                    kinds = _owner_kinds(job)
                    assert len(kinds) == 1, f"job {job['metadata']['name']} has {len(kinds)} OwnerReferences"
                    assert kinds == ["CronJob"], f"job {job['metadata']['name']} has an owner of kind {kinds[0]}"
                pods, _ = await client.list(PODS, namespace)
                if len(pods) != 1:
                    return False
                kinds = _owner_kinds(pods[0])
                assert len(kinds) == 1, f"pod {pods[0]['metadata']['name']} has {len(kinds)} OwnerReferences"
                assert kinds == ["Job"], f"pod {pods[0]['metadata']['name']} has an owner of kind {kinds[0]}"
                return True

            await poll_until(clock, job_and_pod, window=POLL_WINDOW, what="a job of the cronjob and its one pod")
            # cleanupCronJobs: deleted with foreground propagation (no garbage collector runs, as upstream).
            await client.delete(CRONJOBS, namespace, "foo", propagation_policy="Foreground")
        finally:
            await jobs.stop()
            await cronjobs.stop()

    asyncio.run(asyncio.wait_for(scenario(), 30))
