"""Upstream test/integration/job/job_test.go, its second half (TestManagedBy_UsingReservedJobFinalizers on),
run against kjobs' Job controller on an in-process API in virtual time.

The harness (the API, the controller started, stopped and restarted against the same store, metrics that
outlive a controller until `resetMetrics`, upstream's helpers) is tests/controllers/upstream_job_env.py, shared
with the first half. Rows already in the conformance corpus, and rows left out: docs/upstream-job-integration.md
(second half).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.names import JOB_TRACKING_FINALIZER
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.resources import JOBS, PODS
from kjobs.controllers.garbagecollector import GarbageCollector, GarbageCollectorSettings
from tests.controllers.upstream_job_env import (
    CUSTOM_CONTROLLER,
    FAST_POD_FAILURE_BACKOFF,
    NS,
    Env,
    finalizers,
    run,
)

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

        await env.sleep_for_controller_latency()
        pod = await env.client.get(PODS, NS, pod["metadata"]["name"])
        assert finalizers(pod) == [JOB_TRACKING_FINALIZER]

    run(body)


# ------------------------------------------------------------------------------------------ TestNonParallelJob


def test_TestNonParallelJob() -> None:
    """One pod at a time, the controller restarted between steps: a failed pod is replaced, a succeeded one
    completes the Job, and the counts and metrics carry across the restarts."""

    async def body(env: Env) -> None:
        job = await env.create_job()
        await env.validate_job_pods_status(job, active=1)

        await env.restart_controller()
        await env.set_job_pods_phase(job, "Failed", 1)
        await env.validate_job_pods_status(job, active=1, failed=1)
        await env.validate_counter_metric(
            "job_controller_job_pods_finished", 1, completion_mode="NonIndexed", result="failed"
        )

        await env.restart_controller()
        await env.set_job_pods_phase(job, "Succeeded", 1)
        await env.validate_job_condition(job, "Complete")
        await env.validate_job_pods_status(job, failed=1, succeeded=1)
        await env.validate_finished_pods_no_finalizer(job)
        await validate_completed_metrics(env, succeeded=1)

    run(body, backoff=FAST_POD_FAILURE_BACKOFF)


async def validate_completed_metrics(env: Env, *, succeeded: int, failed: int | None = None) -> None:
    """The `validateCounterMetric` calls that end TestNonParallelJob, TestParallelJob and
    TestParallelJobWithCompletions: one NonIndexed Job finished (succeeded, CompletionsReached), and its pods
    counted in `job_pods_finished_total` by result (the failed ones where the test checks them)."""
    await env.validate_counter_metric(
        "job_controller_jobs_finished", 1, completion_mode="NonIndexed", result="succeeded", reason="CompletionsReached"
    )
    pods_finished = "job_controller_job_pods_finished"
    await env.validate_counter_metric(pods_finished, succeeded, completion_mode="NonIndexed", result="succeeded")
    if failed is not None:
        await env.validate_counter_metric(pods_finished, failed, completion_mode="NonIndexed", result="failed")


# --------------------------------------------------------------------------------------------- TestParallelJob


def test_TestParallelJob() -> None:
    """A work queue of parallelism 5: ready pods counted, failed pods replaced, no new pod once one succeeded."""

    async def body(env: Env) -> None:
        job = await env.create_job({"parallelism": 5})
        await env.validate_job_pods_status(job, active=5)
        await env.set_job_pods_ready(job, 2)
        await env.validate_job_pods_status(job, active=5, ready=2)
        await env.set_job_pods_phase(job, "Failed", 2)
        await env.validate_job_pods_status(job, active=5, failed=2)
        await env.set_job_pods_phase(job, "Succeeded", 1)
        await env.validate_job_pods_status(job, active=4, failed=2, succeeded=1)
        await env.set_job_pods_phase(job, "Failed", 2)
        await env.validate_job_pods_status(job, active=2, failed=4, succeeded=1)
        await env.set_job_pods_phase(job, "Succeeded", 2)
        await env.validate_job_condition(job, "Complete")
        await env.validate_job_pods_status(job, failed=4, succeeded=3)
        await env.validate_finished_pods_no_finalizer(job)
        await env.validate_terminated_pods_tracking_finalizer_metric(7)
        await validate_completed_metrics(env, succeeded=3, failed=4)

    run(body, backoff=FAST_POD_FAILURE_BACKOFF)


# ---------------------------------------------------------------------------- TestParallelJobChangingParallelism


def test_TestParallelJobChangingParallelism() -> None:
    """Parallelism 5 → 2 (more than backoffLimit 2 pods removed, none counted failed) → 4, then all succeed."""

    async def body(env: Env) -> None:
        job = await env.create_job({"backoffLimit": 2, "parallelism": 5})
        await env.validate_job_pods_status(job, active=5)
        await env.client.patch(JOBS, NS, job["metadata"]["name"], {"spec": {"parallelism": 2}})
        await env.validate_job_pods_status(job, active=2)
        await env.client.patch(JOBS, NS, job["metadata"]["name"], {"spec": {"parallelism": 4}})
        await env.validate_job_pods_status(job, active=4)
        await env.set_job_pods_phase(job, "Succeeded", 4)
        await env.validate_job_condition(job, "Complete")
        await env.validate_job_pods_status(job, succeeded=4)
        await env.validate_finished_pods_no_finalizer(job)

    run(body)


# ------------------------------------------------------------------------------- TestParallelJobWithCompletions


def test_TestParallelJobWithCompletions() -> None:
    """Parallelism 54 of 56 completions with the per-sync caps at 10 (`MaxUncountedPods`,
    `MaxPodCreateDeletePerSync`): pods are created, and finished ones counted, in steps of 10."""

    async def body(env: Env) -> None:
        job = await env.create_job({"parallelism": 54, "completions": 56})
        await env.validate_job_pods_status(job, active=54)
        await env.set_job_pods_ready(job, 52)
        await env.validate_job_pods_status(job, active=54, ready=52)
        await env.set_job_pods_phase(job, "Failed", 2)
        await env.validate_job_pods_status(job, active=54, failed=2, ready=50)
        await env.set_job_pods_phase(job, "Succeeded", 53)
        await env.validate_job_pods_status(job, active=3, failed=2, succeeded=53)
        await env.set_job_pods_phase(job, "Succeeded", 3)
        await env.validate_job_condition(job, "Complete")
        await env.validate_job_pods_status(job, failed=2, succeeded=56)
        await env.validate_finished_pods_no_finalizer(job)
        await validate_completed_metrics(env, succeeded=56, failed=2)

    run(body, backoff=FAST_POD_FAILURE_BACKOFF, max_uncounted_pods=10, max_pod_create_delete_per_sync=10)


# ----------------------------------------------------------------------- TestJobPodReplacementPolicyFeatureToggling


def test_TestJobPodReplacementPolicyFeatureToggling() -> None:
    """podReplacementPolicy Failed across controller restarts: deleted pods are terminating, not failed, and not
    replaced; once they fail they are counted and replaced; deleting the replacements makes them terminating
    again. Upstream turns the JobPodReplacementPolicy gate off for the middle restart (the deleted pods are then
    counted failed and replaced at once); kjobs has the gate locked on, so there the kubelet fails them."""

    async def body(env: Env) -> None:
        job = await env.create_job(
            {"parallelism": 2, "completions": 2, "completionMode": "NonIndexed", "podReplacementPolicy": "Failed"}
        )
        await env.wait_for_pods_to_be_active(job, 2)
        await env.delete_pods()
        await env.validate_job_pods_status_only(job, terminating=2)

        await env.restart_controller()
        await env.validate_job_pods_status_only(job, terminating=2)
        await env.fail_terminating_pods()
        await env.validate_job_pods_status_only(job, failed=2, active=2)

        await env.restart_controller()
        await env.wait_for_pods_to_be_active(job, 2)
        await env.delete_pods()
        await env.validate_job_pods_status_only(job, terminating=2, failed=2)

    run(body, backoff=FAST_POD_FAILURE_BACKOFF)


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

        await env.wait_for_pods_to_be_active(job, 3)
        for update in updates:
            if update.completions is not None:
                n = update.completions

                def scale(j: Obj, n: int = n) -> None:
                    j["spec"]["completions"] = n
                    j["spec"]["parallelism"] = n

                job = await env.update_job(job, scale)
            for ix in update.succeed:
                await env.set_job_phase_for_index(job, "Succeeded", ix)
            for ix in update.fail:
                await env.set_job_phase_for_index(job, "Failed", ix)
            await env.validate_job_pods_status(
                job,
                active=update.want_active,
                succeeded=len(update.succeed),
                failed=update.want_failed,
                terminating=update.want_terminating,
            )
            await env.validate_indexed_job_pods(job, set(update.want_remaining), update.want_succeeded_indexes)
        await env.validate_job_condition(job, "Complete")

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
            await env.validate_job_pods_status(job, active=2)
            await env.client.delete(JOBS, NS, job["metadata"]["name"], propagation_policy=policy)
            await env.validate_no_orphan_pods_with_finalizers(job)
            await env.validate_terminated_pods_tracking_finalizer_metric(0)
        finally:
            await gc.stop()

    run(body)


# ----------------------------------------------------------------------------- TestOrphanPodsFinalizersClearedOnRestart


def test_TestOrphanPodsFinalizersClearedOnRestart() -> None:
    """The Job is deleted (its pods orphaned, the default for batch/v1) while the controller is stopped; the
    restarted controller removes the tracking finalizer from the orphans."""

    async def body(env: Env) -> None:
        job = await env.create_job({"parallelism": 1})
        await env.validate_job_pods_status(job, active=1)
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
        await env.validate_job_pods_status(job, active=0)

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

        async def a_pod() -> Obj:
            pods = await env.pods()
            assert pods, "no pod"
            return pods[0]

        pod = await env.until(a_pod, "a pod")
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
        await env.validate_job_pods_status(job, active=1)
        job = await env.get_job(job)
        job["status"].setdefault("conditions", []).append({"type": "SuccessCriteriaMet", "status": "True"})
        await env.client.update(JOBS, NS, job, subresource="status")
        await env.validate_job_condition(job, "Complete")
        complete = next(c for c in (await env.get_job(job))["status"]["conditions"] if c["type"] == "Complete")
        assert complete.get("reason", "") == "" and complete.get("message", "") == ""
        await env.validate_no_orphan_pods_with_finalizers(job)
        await env.validate_counter_metric(
            "job_controller_jobs_finished", 1, completion_mode="NonIndexed", result="succeeded", reason=""
        )

    run(body)
