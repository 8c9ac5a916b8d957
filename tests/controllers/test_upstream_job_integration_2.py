"""Upstream test/integration/job/job_test.go, its second half (TestManagedBy_UsingReservedJobFinalizers on),
run against kjobs' Job controller on an in-process API in virtual time.

As upstream, the test plays the kubelet through the API (pod phases, readiness) and the controller is stopped
and started again against the same store where upstream restarts it. Upstream's metrics are process-wide and
outlive a controller; here one `JobMetrics` is handed to each controller instance of a test (`resetMetrics` is a
fresh one). Rows already in the conformance corpus, and rows left out: docs/upstream-job-integration.md (second half).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import JOBS, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.garbagecollector import GarbageCollector, GarbageCollectorSettings
from kjobs.controllers.job import JobController, JobControllerSettings
from kjobs.job.config import SyncConfig
from kjobs.job.metrics import JobMetrics
from tests.controllers.upstream_support import run_for
from tests.support import local_api, settle

NS = "default"
FOREVER = 30.0
"""`wait.ForeverTestTimeout`, in virtual seconds."""
FAST_BACKOFF = 0.1
"""`fastPodFailureBackoff` (100 ms), the `DefaultJobPodFailureBackOff` most of these tests set."""
CONTROLLER_LATENCY = 5.0
"""How long a test waits to see that the controller did nothing. Upstream's `sleepDurationForControllerLatency`
is 100 ms of wall time, "more than the typical time for a couple of controller syncs"; in virtual time a longer
wait costs nothing and also covers syncs the controller batches (pod and status events: 1 s)."""
CUSTOM_CONTROLLER = "example.com/custom-job-controller"


@dataclass
class Want:
    """`podsByStatus`: the Job's status counters, and (Active) its pods in Pending or Running."""

    active: int = 0
    ready: int | None = 0
    failed: int = 0
    succeeded: int = 0
    terminating: int | None = 0


class Env:
    """An API on virtual time, and the Job controller(s) a test starts and stops against it."""

    def __init__(self, clock: FakeClock, client: LocalClient, sync: SyncConfig) -> None:
        self.clock = clock
        self.client = client
        self.sync = sync
        self.metrics = JobMetrics()
        self.controller: JobController | None = None

    async def start_controller(self) -> None:
        """`startJobControllerAndWaitForCaches`: a new controller, started once its caches have synced."""
        self.controller = JobController(
            self.client,
            clock=self.clock,
            settings=JobControllerSettings(sync=self.sync, batch_period=1.0),
            metrics=self.metrics,
        )
        await self.controller.start()

    async def stop_controller(self) -> None:
        """`cancel()` of the controller's context."""
        if self.controller is not None:
            await self.controller.stop()
            self.controller = None

    async def restart_controller(self) -> None:
        await self.stop_controller()
        await self.start_controller()

    def reset_metrics(self) -> None:
        """`resetMetrics`: the counters of controllers started from now on begin at zero."""
        self.metrics = JobMetrics()
        if self.controller is not None:
            self.controller.metrics = self.metrics

    def metric(self, name: str, **labels: str) -> float:
        return self.metrics.value(name, labels)

    # ----------------------------------------------------------------------------------------- the Job

    async def create_job(
        self, spec: Obj | None = None, *, name: str | None = None, template_meta: Obj | None = None
    ) -> Obj:
        """`createJobWithDefaults`: generateName `test-job`, one container `foo` (image `bar`), restartPolicy Never."""
        spec = copy.deepcopy(spec or {})
        template = spec.setdefault("template", {})
        if template_meta:
            template["metadata"] = template_meta
        pod_spec = template.setdefault("spec", {})
        pod_spec.setdefault("containers", [{"name": "foo", "image": "bar"}])
        pod_spec.setdefault("restartPolicy", "Never")
        meta: Obj = {"namespace": NS}
        if name:
            meta["name"] = name
        else:
            meta["generateName"] = "test-job"
        job: Obj = await self.client.create(
            JOBS, NS, {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}
        )
        return job

    async def get_job(self, job: Obj) -> Obj:
        got: Obj = await self.client.get(JOBS, NS, job["metadata"]["name"])
        return got

    async def update_job(self, job: Obj, change: Callable[[Obj], None]) -> Obj:
        """`updateJob`: read, change, PUT (retried on a conflict)."""
        while True:
            current = await self.get_job(job)
            change(current)
            try:
                updated: Obj = await self.client.update(JOBS, NS, current)
                return updated
            except ApiError as exc:
                if exc.code != 409:
                    raise

    # ----------------------------------------------------------------------------------------- waiting

    async def eventually(self, check: Callable[[], Awaitable[Any]], what: str, timeout: float = FOREVER) -> None:
        """`wait.PollUntilContextTimeout`: `check` (None when it holds, else what it saw) until it holds, with
        virtual time moving only while nothing else can run."""
        seen: dict[str, Any] = {}

        async def poll() -> None:
            while True:
                seen["last"] = await check()
                if seen["last"] is None:
                    return
                await asyncio.sleep(0)

        task = asyncio.get_running_loop().create_task(poll())
        try:
            await settle(self.clock, task.done, max_virtual=timeout)
        except AssertionError:
            task.cancel()
            raise AssertionError(f"timed out waiting for {what}; last saw {seen.get('last')}") from None
        task.result()

    async def pods(self) -> list[Obj]:
        """Every pod of the namespace, in name order (as etcd lists them)."""
        items, _ = await self.client.list(PODS, NS)
        return sorted(items, key=lambda p: p["metadata"]["name"])

    async def job_pods(self, job: Obj, keep: Callable[[Obj], bool] = lambda p: True) -> list[Obj]:
        """`getJobPods`: the pods `job` controls that `keep` lets through."""
        return [p for p in await self.pods() if controlled_by(p, job) and keep(p)]

    async def validate_status_only(self, job: Obj, want: Want, timeout: float = FOREVER) -> None:
        """`validateJobsPodsStatusOnly`."""

        async def check() -> Any:
            status = (await self.get_job(job)).get("status") or {}
            got = Want(
                active=status.get("active", 0),
                ready=status.get("ready"),
                failed=status.get("failed", 0),
                succeeded=status.get("succeeded", 0),
                terminating=status.get("terminating"),
            )
            return None if got == want else got

        await self.eventually(check, f"Job status {want}", timeout)

    async def validate_pods_status(self, job: Obj, want: Want) -> None:
        """`validateJobPodsStatus`: the status, then as many Pending or Running pods, each with the tracking
        finalizer."""
        await self.validate_status_only(job, want)

        async def check() -> Any:
            active = await self.job_pods(job, lambda p: phase(p) in ("Pending", "Running"))
            return None if len(active) == want.active else len(active)

        await self.eventually(check, f"{want.active} active pods", 5.0)
        for pod in await self.job_pods(job, lambda p: phase(p) in ("Pending", "Running")):
            assert JOB_TRACKING_FINALIZER in finalizers(pod), (
                f"active pod {pod['metadata']['name']} lacks the finalizer"
            )

    async def validate_condition(self, job: Obj, cond: str) -> None:
        """`validateJobCondition`: the Job gets condition `cond` True."""

        async def check() -> Any:
            conditions = (await self.get_job(job)).get("status", {}).get("conditions") or []
            return None if any(c["type"] == cond and c["status"] == "True" for c in conditions) else conditions

        await self.eventually(check, f"condition {cond}")

    async def validate_finished_pods_no_finalizer(self, job: Obj) -> None:
        """`validateFinishedPodsNoFinalizer`: no finished pod of the Job keeps the tracking finalizer. (Upstream's
        loop tests pods in Pending or Running, which its comment and message call finished; both hold here.)"""
        for pod in await self.job_pods(job):
            if phase(pod) in ("Succeeded", "Failed"):
                assert JOB_TRACKING_FINALIZER not in finalizers(pod), pod["metadata"]["name"]

    async def validate_no_orphan_pods_with_finalizers(self, job: Obj) -> None:
        """`validateNoOrphanPodsWithFinalizers`: no pod of the Job's selector keeps the tracking finalizer."""
        selector = job["spec"]["selector"]["matchLabels"]

        async def check() -> Any:
            held = [
                p["metadata"]["name"]
                for p in await self.pods()
                if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in selector.items())
                and JOB_TRACKING_FINALIZER in finalizers(p)
            ]
            return held or None

        await self.eventually(check, "no pod with the tracking finalizer")

    async def validate_indexed_pods(self, job: Obj, active: set[int], completed: str) -> None:
        """`validateIndexedJobPods`: completedIndexes, and the indexes (annotation = label) and hostnames of the
        Pending or Running pods."""
        status = (await self.get_job(job)).get("status") or {}
        assert status.get("completedIndexes", "") == completed
        assert status.get("failedIndexes") is None
        got: set[int] = set()
        for pod in await self.job_pods(job, lambda p: phase(p) in ("Pending", "Running")):
            meta = pod["metadata"]
            ix = int(meta["annotations"][JOB_COMPLETION_INDEX_ANNOTATION])
            assert int(meta["labels"][JOB_COMPLETION_INDEX_ANNOTATION]) == ix
            assert pod["spec"].get("hostname") == f"{job['metadata']['name']}-{ix}"
            got.add(ix)
        assert got == active

    # ------------------------------------------------------------------------------ playing the kubelet

    async def update_pod_status(self, pod: Obj) -> Obj:
        updated: Obj = await self.client.update(PODS, NS, pod, subresource="status")
        return updated

    def finished_status(self, pod: Obj, to: str) -> None:
        """The phase, and for a terminal one a terminated container finished now (`setJobPodsPhase`'s `op`)."""
        pod["status"]["phase"] = to
        if to in ("Failed", "Succeeded"):
            pod["status"]["containerStatuses"] = [
                {
                    "name": "foo",
                    "image": "bar",
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "state": {"terminated": {"exitCode": 0, "finishedAt": format_time(self.clock.now())}},
                }
            ]

    async def set_pods_phase(self, job: Obj, to: str, count: int) -> None:
        """`setJobPodsPhase`: the first `count` non-terminal pods of the Job (name order) get phase `to`."""
        chosen = (await self.job_pods(job, lambda p: phase(p) not in ("Succeeded", "Failed")))[:count]
        assert len(chosen) == count, f"{len(chosen)} pods to set {to}, want {count}"
        for pod in chosen:
            self.finished_status(pod, to)
            await self.update_pod_status(pod)

    async def set_pods_ready(self, job: Obj, count: int) -> None:
        """`setJobPodsReady`: the first `count` non-terminal, not yet ready pods get `Ready` True."""
        chosen = [
            p for p in await self.job_pods(job, lambda p: phase(p) not in ("Succeeded", "Failed")) if not ready(p)
        ]
        assert len(chosen) >= count
        for pod in chosen[:count]:
            pod["status"].setdefault("conditions", []).append({"type": "Ready", "status": "True"})
            await self.update_pod_status(pod)

    async def set_phase_for_index(self, job: Obj, to: str, ix: int) -> None:
        """`setJobPhaseForIndex`: the non-terminal pod of index `ix` gets phase `to`. Upstream's controller runs
        beside the test's requests, each of which takes time; here a request takes none, so the controller is
        let run (virtual time standing still) until the pod is there, as it is by then upstream."""
        found: list[Obj] = []

        async def the_pod() -> Any:
            found[:] = [
                pod
                for pod in await self.job_pods(job, lambda p: phase(p) not in ("Succeeded", "Failed"))
                if (pod["metadata"].get("annotations") or {}).get(JOB_COMPLETION_INDEX_ANNOTATION) == str(ix)
            ]
            return None if found else f"no pod matching index {ix} found"

        await self.eventually(the_pod, f"the pod of index {ix}", timeout=0.0)
        self.finished_status(found[0], to)
        await self.update_pod_status(found[0])


def phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def ready(pod: Obj) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True" for c in (pod.get("status") or {}).get("conditions") or []
    )


def finalizers(pod: Obj) -> list[str]:
    return list(pod["metadata"].get("finalizers") or [])


def controlled_by(pod: Obj, job: Obj) -> bool:
    uid = job["metadata"]["uid"]
    return any(r.get("uid") == uid and r.get("controller") for r in pod["metadata"].get("ownerReferences") or ())


def run(body: Callable[[Env], Awaitable[None]], *, backoff: float = 10.0, **sync: Any) -> None:
    """`setup` + `startJobControllerAndWaitForCaches` + `resetMetrics`, then the test's body; the controller is
    stopped at the end. `backoff` is `DefaultJobPodFailureBackOff`, `sync` the other `SyncConfig` knobs."""

    async def scenario() -> None:
        clock = FakeClock()
        env = Env(clock, await local_api(clock), SyncConfig(pod_failure_backoff=backoff, **sync))
        await env.start_controller()
        try:
            await body(env)
        finally:
            await env.stop_controller()

    asyncio.run(scenario())


# -------------------------------------------------------------------- TestManagedBy_UsingReservedJobFinalizers


def test_TestManagedBy_UsingReservedJobFinalizers() -> None:
    """A Job another controller manages, whose pod that controller made with the built-in tracking finalizer: the
    built-in controller leaves the finalizer alone, though the pod finished and the Job got SuccessCriteriaMet."""

    async def body(env: Env) -> None:
        job = await env.create_job(
            {
                "completions": 1,
                "parallelism": 1,
                "template": {"spec": {"containers": [{"name": "main-container", "image": "foo"}]}},
                "managedBy": CUSTOM_CONTROLLER,
            },
            name="custom-job-test",
        )
        # the external controller's pod, made as `CreatePodsWithGenerateName` makes it, with the built-in finalizer
        template = copy.deepcopy(job["spec"]["template"])
        meta = template.get("metadata") or {}
        pod_body: Obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "generateName": "pod1",
                "namespace": NS,
                "labels": meta.get("labels") or {},
                "finalizers": [*(meta.get("finalizers") or []), JOB_TRACKING_FINALIZER],
                "ownerReferences": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "Job",
                        "name": job["metadata"]["name"],
                        "uid": job["metadata"]["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": template["spec"],
        }
        await env.client.create(PODS, NS, pod_body)
        pods = await env.job_pods(job)
        assert len(pods) == 1
        pod = pods[0]
        pod["status"]["phase"] = "Succeeded"
        await env.update_pod_status(pod)

        job = await env.get_job(job)
        status = job.setdefault("status", {})
        status.setdefault("conditions", []).append({"type": "SuccessCriteriaMet", "status": "True"})
        status["startTime"] = format_time(env.clock.now())
        await env.client.update(JOBS, NS, job, subresource="status")

        pod = await env.client.get(PODS, NS, pod["metadata"]["name"])
        pod["status"].setdefault("conditions", []).append({"type": "CustomCondition", "status": "True"})
        await env.update_pod_status(pod)

        await run_for(env.clock, CONTROLLER_LATENCY)
        pod = await env.client.get(PODS, NS, pod["metadata"]["name"])
        print(
            "DEBUG",
            env.clock.now(),
            len(await env.pods()),
            (await env.get_job(job)).get("status"),
            env.controller.last_outcome,
        )
        assert finalizers(pod) == [JOB_TRACKING_FINALIZER]

    run(body)


# ------------------------------------------------------------------------------------------ TestNonParallelJob


def test_TestNonParallelJob() -> None:
    """One pod at a time, the controller restarted between steps: a failed pod is replaced, a succeeded one
    completes the Job, and the counts and metrics carry across the restarts."""

    async def body(env: Env) -> None:
        job = await env.create_job()
        await env.validate_pods_status(job, Want(active=1))

        await env.restart_controller()
        await env.set_pods_phase(job, "Failed", 1)
        await env.validate_pods_status(job, Want(active=1, failed=1))
        await env.eventually(
            lambda: metric_is(
                env, 1, "job_controller_job_pods_finished", completion_mode="NonIndexed", result="failed"
            ),
            "metric",
        )

        await env.restart_controller()
        await env.set_pods_phase(job, "Succeeded", 1)
        await env.validate_condition(job, "Complete")
        await env.validate_pods_status(job, Want(failed=1, succeeded=1))
        await env.validate_finished_pods_no_finalizer(job)
        await env.eventually(
            lambda: metric_is(
                env,
                1,
                "job_controller_jobs_finished",
                completion_mode="NonIndexed",
                result="succeeded",
                reason="CompletionsReached",
            ),
            "metric",
        )
        await env.eventually(
            lambda: metric_is(
                env, 1, "job_controller_job_pods_finished", completion_mode="NonIndexed", result="succeeded"
            ),
            "metric",
        )

    run(body, backoff=FAST_BACKOFF)


async def metric_is(env: Env, want: float, name: str, **labels: str) -> Any:
    """`validateCounterMetric`'s check: None when the counter has the value, else the value."""
    got = env.metric(name, **labels)
    return None if got == want else got


async def expect_metric(env: Env, want: float, name: str, **labels: str) -> None:
    """`validateCounterMetric`."""
    await env.eventually(lambda: metric_is(env, want, name, **labels), f"{name}{labels} = {want}", 10.0)


async def expect_tracking_finalizer_metric(env: Env, want: float) -> None:
    """`validateTerminatedPodsTrackingFinalizerMetric`: as many finished pods got the finalizer as lost it."""
    await expect_metric(env, want, "job_controller_terminated_pods_tracking_finalizer", event="add")
    await expect_metric(env, want, "job_controller_terminated_pods_tracking_finalizer", event="delete")


# --------------------------------------------------------------------------------------------- TestParallelJob


def test_TestParallelJob() -> None:
    """A work queue of parallelism 5: ready pods counted, failed pods replaced, no new pod once one succeeded."""

    async def body(env: Env) -> None:
        job = await env.create_job({"parallelism": 5})
        await env.validate_pods_status(job, Want(active=5))
        await env.set_pods_ready(job, 2)
        await env.validate_pods_status(job, Want(active=5, ready=2))
        await env.set_pods_phase(job, "Failed", 2)
        await env.validate_pods_status(job, Want(active=5, failed=2))
        await env.set_pods_phase(job, "Succeeded", 1)
        await env.validate_pods_status(job, Want(active=4, failed=2, succeeded=1))
        await env.set_pods_phase(job, "Failed", 2)
        await env.validate_pods_status(job, Want(active=2, failed=4, succeeded=1))
        await env.set_pods_phase(job, "Succeeded", 2)
        await env.validate_condition(job, "Complete")
        await env.validate_pods_status(job, Want(failed=4, succeeded=3))
        await env.validate_finished_pods_no_finalizer(job)
        await expect_tracking_finalizer_metric(env, 7)
        finished = "job_controller_jobs_finished"
        await expect_metric(
            env, 1, finished, completion_mode="NonIndexed", result="succeeded", reason="CompletionsReached"
        )
        pods_finished = "job_controller_job_pods_finished"
        await expect_metric(env, 3, pods_finished, completion_mode="NonIndexed", result="succeeded")
        await expect_metric(env, 4, pods_finished, completion_mode="NonIndexed", result="failed")

    run(body, backoff=FAST_BACKOFF)


# ---------------------------------------------------------------------------- TestParallelJobChangingParallelism


def test_TestParallelJobChangingParallelism() -> None:
    """Parallelism 5 → 2 (more than backoffLimit 2 pods removed, none counted failed) → 4, then all succeed."""

    async def body(env: Env) -> None:
        job = await env.create_job({"backoffLimit": 2, "parallelism": 5})
        await env.validate_pods_status(job, Want(active=5))
        await env.client.patch(JOBS, NS, job["metadata"]["name"], {"spec": {"parallelism": 2}})
        await env.validate_pods_status(job, Want(active=2))
        await env.client.patch(JOBS, NS, job["metadata"]["name"], {"spec": {"parallelism": 4}})
        await env.validate_pods_status(job, Want(active=4))
        await env.set_pods_phase(job, "Succeeded", 4)
        await env.validate_condition(job, "Complete")
        await env.validate_pods_status(job, Want(succeeded=4))
        await env.validate_finished_pods_no_finalizer(job)

    run(body)


# ------------------------------------------------------------------------------- TestParallelJobWithCompletions


def test_TestParallelJobWithCompletions() -> None:
    """Parallelism 54 of 56 completions with the per-sync caps at 10 (`MaxUncountedPods`,
    `MaxPodCreateDeletePerSync`): pods are created, and finished ones counted, in steps of 10."""

    async def body(env: Env) -> None:
        job = await env.create_job({"parallelism": 54, "completions": 56})
        await env.validate_pods_status(job, Want(active=54))
        await env.set_pods_ready(job, 52)
        await env.validate_pods_status(job, Want(active=54, ready=52))
        await env.set_pods_phase(job, "Failed", 2)
        await env.validate_pods_status(job, Want(active=54, failed=2, ready=50))
        await env.set_pods_phase(job, "Succeeded", 53)
        await env.validate_pods_status(job, Want(active=3, failed=2, succeeded=53))
        await env.set_pods_phase(job, "Succeeded", 3)
        await env.validate_condition(job, "Complete")
        await env.validate_pods_status(job, Want(failed=2, succeeded=56))
        await env.validate_finished_pods_no_finalizer(job)
        finished = "job_controller_jobs_finished"
        await expect_metric(
            env, 1, finished, completion_mode="NonIndexed", result="succeeded", reason="CompletionsReached"
        )
        pods_finished = "job_controller_job_pods_finished"
        await expect_metric(env, 56, pods_finished, completion_mode="NonIndexed", result="succeeded")
        await expect_metric(env, 2, pods_finished, completion_mode="NonIndexed", result="failed")

    run(body, backoff=FAST_BACKOFF, max_uncounted_pods=10, max_pod_create_delete_per_sync=10)


# ----------------------------------------------------------------------- TestJobPodReplacementPolicyFeatureToggling


async def wait_active(env: Env, job: Obj, count: int) -> None:
    """`waitForPodsToBeActive`."""

    async def check() -> Any:
        active = ((await env.get_job(job)).get("status") or {}).get("active", 0)
        return None if active == count else active

    await env.eventually(check, f"{count} active pods")


async def delete_pods(env: Env) -> None:
    """`deletePods`: every pod of the namespace deleted (upstream: one DeleteCollection)."""
    for pod in await env.pods():
        await env.client.delete(PODS, NS, pod["metadata"]["name"])


async def fail_terminating_pods(env: Env) -> None:
    """`failTerminatingPods`: the kubelet's last word on each pod being deleted, phase Failed."""
    for pod in await env.pods():
        if pod["metadata"].get("deletionTimestamp"):
            pod["status"]["phase"] = "Failed"
            await env.update_pod_status(pod)


def test_TestJobPodReplacementPolicyFeatureToggling() -> None:
    """podReplacementPolicy Failed across controller restarts: deleted pods are terminating, not failed, and not
    replaced; once they fail they are counted and replaced; deleting the replacements makes them terminating
    again. Upstream turns the JobPodReplacementPolicy gate off for the middle restart (the deleted pods are then
    counted failed and replaced at once); kjobs has the gate locked on, so there the kubelet fails them."""

    async def body(env: Env) -> None:
        job = await env.create_job(
            {"parallelism": 2, "completions": 2, "completionMode": "NonIndexed", "podReplacementPolicy": "Failed"}
        )
        await wait_active(env, job, 2)
        await delete_pods(env)
        await env.validate_status_only(job, Want(terminating=2))

        await env.restart_controller()
        await env.validate_status_only(job, Want(terminating=2))
        await fail_terminating_pods(env)
        await env.validate_status_only(job, Want(failed=2, active=2))

        await env.restart_controller()
        await wait_active(env, job, 2)
        await delete_pods(env)
        await env.validate_status_only(job, Want(terminating=2, failed=2))

    run(body, backoff=FAST_BACKOFF)


# ------------------------------------------------------------------------------------------ TestElasticIndexedJob


@dataclass(frozen=True)
class JobUpdate:
    """`jobUpdate`: new completions (= parallelism), indexes to succeed and fail, and what follows."""

    completions: int | None = None
    succeed: tuple[int, ...] = ()
    fail: tuple[int, ...] = ()
    want_succeeded_indexes: str = ""
    want_failed: int = 0
    want_remaining: frozenset[int] = frozenset()
    want_active: int = 0
    want_terminating: int | None = 0


ELASTIC = [
    pytest.param([JobUpdate(completions=4, succeed=(0, 1, 2, 3), want_succeeded_indexes="0-3")], id="scale up"),
    pytest.param(
        [
            JobUpdate(
                succeed=(1,),
                fail=(2,),
                want_succeeded_indexes="1",
                want_failed=1,
                want_remaining=frozenset({0, 2}),
                want_active=2,
            ),
            JobUpdate(completions=1, succeed=(0,), want_succeeded_indexes="0", want_failed=1),
        ],
        id="scale down",
    ),
    pytest.param(
        [
            JobUpdate(succeed=(2,), want_succeeded_indexes="2", want_remaining=frozenset({0, 1}), want_active=2),
            JobUpdate(completions=2, want_remaining=frozenset({0, 1}), want_active=2),
            JobUpdate(completions=3, succeed=(0, 1, 2), want_succeeded_indexes="0-2"),
        ],
        id="index finishes successfully, scale down, scale up",
    ),
    pytest.param([JobUpdate(completions=0)], id="scale down to 0, verify that the job succeeds"),
]


@pytest.mark.parametrize("updates", ELASTIC)
def test_TestElasticIndexedJob(updates: list[JobUpdate]) -> None:
    """An Indexed Job of 3 whose completions and parallelism change together: indexes out of range stop counting
    as succeeded (failures stay counted), and come back when the range grows again."""

    async def body(env: Env) -> None:
        job = await env.create_job({"parallelism": 3, "completions": 3, "completionMode": "Indexed"})

        async def three_active() -> Any:
            active = ((await env.get_job(job)).get("status") or {}).get("active", 0)
            return None if active == 3 else active

        await env.eventually(three_active, "3 active pods")
        for update in updates:
            if update.completions is not None:
                n = update.completions

                def scale(j: Obj, n: int = n) -> None:
                    j["spec"]["completions"] = n
                    j["spec"]["parallelism"] = n

                job = await env.update_job(job, scale)
            for ix in update.succeed:
                await env.set_phase_for_index(job, "Succeeded", ix)
            for ix in update.fail:
                await env.set_phase_for_index(job, "Failed", ix)
            want = Want(
                active=update.want_active,
                succeeded=len(update.succeed),
                failed=update.want_failed,
                terminating=update.want_terminating,
            )
            await env.validate_pods_status(job, want)
            await env.validate_indexed_pods(job, set(update.want_remaining), update.want_succeeded_indexes)
        await env.validate_condition(job, "Complete")

    run(body)


# ---------------------------------------------------------------------------- TestOrphanPodsFinalizersClearedWithGC


@pytest.mark.parametrize("policy", ["Orphan", "Background", "Foreground"])
def test_TestOrphanPodsFinalizersClearedWithGC(policy: str) -> None:
    """A Job of two running pods deleted with each propagation policy, the garbage collector running: no pod is
    left holding the tracking finalizer, and as no pod finished, the finalizer metric stays at 0."""

    async def body(env: Env) -> None:
        gc = GarbageCollector(env.client, clock=env.clock, settings=GarbageCollectorSettings(resources=(PODS, JOBS)))
        await gc.start()
        try:
            job = await env.create_job({"parallelism": 2})
            await env.validate_pods_status(job, Want(active=2))
            await env.client.delete(JOBS, NS, job["metadata"]["name"], propagation_policy=policy)
            await env.validate_no_orphan_pods_with_finalizers(job)
            await expect_tracking_finalizer_metric(env, 0)
        finally:
            await gc.stop()

    run(body)


# ----------------------------------------------------------------------------- TestOrphanPodsFinalizersClearedOnRestart


def test_TestOrphanPodsFinalizersClearedOnRestart() -> None:
    """The Job is deleted (its pods orphaned, the default for batch/v1) while the controller is stopped; the
    restarted controller removes the tracking finalizer from the orphans."""

    async def body(env: Env) -> None:
        job = await env.create_job({"parallelism": 1})
        await env.validate_pods_status(job, Want(active=1))
        await env.stop_controller()
        await env.client.delete(JOBS, NS, job["metadata"]["name"])
        await env.start_controller()
        await env.validate_no_orphan_pods_with_finalizers(job)

    run(body)


# ----------------------------------------------------------------------------------- TestSuspendJobControllerRestart


def test_TestSuspendJobControllerRestart() -> None:
    """A Job created suspended gets no pods, and its status says so (active, ready and terminating 0)."""

    async def body(env: Env) -> None:
        job = await env.create_job({"parallelism": 2, "completions": 4, "suspend": True})
        await env.validate_pods_status(job, Want(active=0))

    run(body)


# ------------------------------------------------------------------------------------------ TestNodeSelectorUpdate


def test_TestNodeSelectorUpdate() -> None:
    """A suspended Job's nodeSelector may change in the update that resumes it, and its pod has it; once it runs,
    changing it again is refused with `spec.template: Invalid value`."""

    async def body(env: Env) -> None:
        job = await env.create_job({"parallelism": 1, "suspend": True})

        def resume(j: Obj) -> None:
            j["spec"]["template"]["spec"]["nodeSelector"] = {"foo": "bar"}
            j["spec"]["suspend"] = False

        await env.update_job(job, resume)

        async def a_pod() -> Any:
            return None if await env.pods() else "no pod"

        await env.eventually(a_pod, "a pod")
        pod = (await env.pods())[0]
        assert pod["spec"].get("nodeSelector") == {"foo": "bar"}

        def reselect(j: Obj) -> None:
            j["spec"]["template"]["spec"]["nodeSelector"] = {"foo": "baz"}

        with pytest.raises(ApiError) as refused:
            await env.update_job(job, reselect)
        assert "spec.template: Invalid value" in str(refused.value)

    run(body)


def test_a_SuccessCriteriaMet_written_without_a_reason_completes_a_built_in_Job() -> None:
    """Not an upstream row: TestManagedBy_UsingReservedJobFinalizers' status write (SuccessCriteriaMet True, no
    reason) on a Job the built-in controller manages. The controller finishes the Job Complete with the
    condition's reason and message, empty when absent (`trackJobStatusAndRemoveFinalizers` copies
    `finishedCondition.Reason` and `.Message`, pkg/controller/job/job_controller.go), instead of failing its sync
    on the missing field and retrying for ever."""

    async def body(env: Env) -> None:
        job = await env.create_job({"completions": 1, "parallelism": 1})
        await env.validate_pods_status(job, Want(active=1))
        job = await env.get_job(job)
        job["status"].setdefault("conditions", []).append({"type": "SuccessCriteriaMet", "status": "True"})
        await env.client.update(JOBS, NS, job, subresource="status")
        await env.validate_condition(job, "Complete")
        complete = next(c for c in (await env.get_job(job))["status"]["conditions"] if c["type"] == "Complete")
        assert complete.get("reason", "") == "" and complete.get("message", "") == ""
        await env.validate_no_orphan_pods_with_finalizers(job)
        await expect_metric(
            env, 1, "job_controller_jobs_finished", completion_mode="NonIndexed", result="succeeded", reason=""
        )

    run(body)
