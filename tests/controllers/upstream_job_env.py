"""The harness of Kubernetes' test/integration/job/job_test.go, for its ported tests
(tests/controllers/test_upstream_job_integration_1.py and _2.py; docs/upstream-job-integration.md).

Upstream starts a kube-apiserver and the Job controller, plays the kubelet through the API (pod phases, the
`Ready` condition) and polls the Job's status. Here the API is kjobs' in-process one (`tests.support.local_api`),
the controller the real `JobController`, and time virtual (`FakeClock`): `Env` is upstream's `setup` +
`startJobControllerAndWaitForCaches`, and each of its methods stands for the helper of job_test.go its docstring
names. Upstream's polls (`wait.PollUntilContextTimeout`) are `Env.until`, which moves virtual time only when
nothing else can run, so no test sleeps.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from kjobs.api.errors import ApiError
from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import JOBS, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.job import JobController, JobControllerSettings
from kjobs.job.config import SyncConfig
from kjobs.job.metrics import JobMetrics
from tests.controllers.upstream_support import run_for
from tests.support import local_api, settle

T = TypeVar("T")

NS = "default"
FOREVER = 30.0
"""`wait.ForeverTestTimeout`, in virtual seconds."""
FAST_POD_FAILURE_BACKOFF = 0.1
"""`fastPodFailureBackoff` (100 ms), which most tests set as `DefaultJobPodFailureBackOff`."""
CONTROLLER_LATENCY = 10.0
"""How long a test waits to see that the controller did nothing. Upstream's `sleepDurationForControllerLatency`
is 100 ms of wall time, "more than the typical time for a couple of controller syncs"; in virtual time a longer
wait costs nothing, and 10 s covers ten of the syncs the controller batches (pod and status events: 1 s)."""
CUSTOM_CONTROLLER = "example.com/custom-job-controller"
"""The `spec.managedBy` of the TestManagedBy* tests' Jobs that another controller manages."""
TRACKING_FINALIZER_METRIC = "job_controller_terminated_pods_tracking_finalizer"


def phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def terminal(pod: Obj) -> bool:
    """`podutil.IsPodTerminal`."""
    return phase(pod) in ("Succeeded", "Failed")


def ready(pod: Obj) -> bool:
    """`podutil.IsPodReady`."""
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def finalizers(obj: Obj) -> list[str]:
    return list(obj["metadata"].get("finalizers") or ())


def controlled_by(pod: Obj, job: Obj) -> bool:
    """`metav1.IsControlledBy(pod, job)`."""
    uid = job["metadata"]["uid"]
    return any(r.get("uid") == uid and r.get("controller") for r in pod["metadata"].get("ownerReferences") or ())


def index_of(pod: Obj) -> int:
    """`getCompletionIndex(pod.Annotations)`, -1 when there is none."""
    value = (pod["metadata"].get("annotations") or {}).get(JOB_COMPLETION_INDEX_ANNOTATION)
    return int(value) if value is not None else -1


def go_status(status: Obj) -> Obj:
    """A JobStatus as Go's struct holds it, less what `validateJobStatus` ignores: counters absent = 0,
    `ready`/`terminating`/`failedIndexes` pointers (absent = nil), conditions as type/status/reason."""
    known = {"conditions", "startTime", "completionTime", "active", "succeeded", "failed", "terminating", "ready"}
    known |= {"completedIndexes", "failedIndexes", "uncountedTerminatedPods"}
    assert set(status) <= known, f"unknown status fields {set(status) - known}"
    return {
        "active": status.get("active", 0),
        "succeeded": status.get("succeeded", 0),
        "failed": status.get("failed", 0),
        "ready": status.get("ready"),
        "terminating": status.get("terminating"),
        "completedIndexes": status.get("completedIndexes") or "",
        "failedIndexes": status.get("failedIndexes"),
        "conditions": [(c["type"], c["status"], c.get("reason") or "") for c in status.get("conditions") or ()],
    }


class Env:
    """`setup` + `startJobControllerAndWaitForCaches` (test/integration/job/job_test.go): one API on virtual time
    and the Job controller(s) a test starts and stops against it. A restart is a new `JobController` on the same
    store: fresh informer caches, queue and bookkeeping.

    Upstream's metrics are process-wide and outlive a controller; here one `JobMetrics` is handed to each
    controller the test starts, so counts carry across restarts, until `reset_metrics` (`resetMetrics`)."""

    def __init__(self, clock: FakeClock, client: LocalClient, sync: SyncConfig) -> None:
        self.clock = clock
        self.client = client
        self.settings = JobControllerSettings(sync=sync, batch_period=1.0)
        self.metrics = JobMetrics()
        self.controller: JobController | None = None

    # ---------------------------------------------------------------------------------- the controller

    async def start_controller(self) -> None:
        """`startJobControllerAndWaitForCaches`: a new controller, started once its caches have synced."""
        self.controller = JobController(self.client, clock=self.clock, settings=self.settings, metrics=self.metrics)
        await self.controller.start()

    async def stop_controller(self) -> None:
        """`cancel()` of the controller's context."""
        if self.controller is not None:
            await self.controller.stop()
            self.controller = None

    async def restart_controller(self) -> None:
        """`cancel()`, then `startJobControllerAndWaitForCaches` again."""
        await self.stop_controller()
        await self.start_controller()

    def reset_metrics(self) -> None:
        """`resetMetrics`: the counters start again from zero, for the running controller (if any) and later ones."""
        self.metrics = JobMetrics()
        if self.controller is not None:
            self.controller.metrics = self.metrics

    def metric(self, name: str, **labels: str) -> float:
        """A counter's value (`testutil.GetCounterMetricValue`); a series never written reads 0."""
        return self.metrics.value(name, labels)

    # ---------------------------------------------------------------------------------------- waiting

    async def until(self, check: Callable[[], Awaitable[T]], what: str, timeout: float = FOREVER) -> T:
        """`wait.PollUntilContextTimeout(..., timeout, ...)`: run `check` (it raises AssertionError until the
        condition holds) until it returns, letting the cluster run and moving virtual time to each next deadline
        only when nothing else can run, for up to `timeout` virtual seconds (0: virtual time stands still).
        Returns what `check` returned."""
        last: list[AssertionError] = []

        async def poll() -> T:
            while True:
                try:
                    return await check()
                except AssertionError as exc:
                    last[:] = [exc]
                await asyncio.sleep(0)

        task = asyncio.get_running_loop().create_task(poll())
        try:
            await settle(self.clock, task.done, max_virtual=timeout)
        except AssertionError:
            task.cancel()
            seen = last[0] if last else "nothing"
            raise AssertionError(f"{what}: not within {timeout:g} s of virtual time; last saw: {seen}") from None
        return task.result()

    async def sleep_for_controller_latency(self, seconds: float = CONTROLLER_LATENCY) -> None:
        """`time.Sleep(sleepDurationForControllerLatency)`: the cluster runs on for `seconds` of virtual time."""
        await run_for(self.clock, seconds)

    # ---------------------------------------------------------------------------------------- the Job

    async def create_job(self, spec: Obj | None = None, *, name: str | None = None) -> Obj:
        """`createJobWithDefaults`: generateName `test-job` unless named, a `foo`/`bar` container when the template
        has none, restartPolicy Never when unset."""
        spec = copy.deepcopy(spec or {})
        pod_spec = spec.setdefault("template", {}).setdefault("spec", {})
        if not pod_spec.get("containers"):
            pod_spec["containers"] = [{"name": "foo", "image": "bar"}]
        pod_spec.setdefault("restartPolicy", "Never")
        metadata: Obj = {"name": name} if name else {"generateName": "test-job"}
        job: Obj = await self.client.create(
            JOBS, NS, {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": spec}
        )
        return job

    async def get_job(self, job: Obj) -> Obj:
        """The Job as the API has it now."""
        got: Obj = await self.client.get(JOBS, NS, job["metadata"]["name"])
        return got

    async def update_job(self, job: Obj, change: Callable[[Obj], None]) -> Obj:
        """`updateJob`: read, change, PUT (`retry.RetryOnConflict`)."""
        for _ in range(10):
            current = await self.get_job(job)
            change(current)
            try:
                updated: Obj = await self.client.update(JOBS, NS, current)
                return updated
            except ApiError as exc:
                if exc.code != 409:
                    raise
        raise AssertionError("could not update the Job: conflicts")

    async def wait_for_pods_to_be_active(self, job: Obj, count: int) -> None:
        """`waitForPodsToBeActive`: the Job's `status.active` reaches `count`."""

        async def check() -> None:
            active = ((await self.get_job(job)).get("status") or {}).get("active", 0)
            assert active == count, f"active {active}"

        await self.until(check, f"{count} active pods")

    # ---------------------------------------------------------------------------------------- its pods

    async def pods(self) -> list[Obj]:
        """Every pod of the namespace, in name order (as etcd lists them)."""
        items, _ = await self.client.list(PODS, NS)
        return sorted(items, key=lambda p: p["metadata"]["name"])

    async def job_pods(self, job: Obj, keep: Callable[[Obj], bool] = lambda p: True) -> list[Obj]:
        """`getJobPods`: the pods `job` controls that `keep` lets through, in name order."""
        return [p for p in await self.pods() if controlled_by(p, job) and keep(p)]

    async def job_pods_for_index(self, job: Obj, ix: int, keep: Callable[[Obj], bool] = lambda p: True) -> list[Obj]:
        """`getJobPodsForIndex`."""
        return [p for p in await self.job_pods(job, keep) if index_of(p) == ix]

    async def active_pod_for_index(self, job: Obj, ix: int) -> Obj:
        """`getActivePodForIndex`: the first non-terminal pod of index `ix`."""
        pods = await self.job_pods_for_index(job, ix, lambda p: not terminal(p))
        assert pods, f"Pod not found for index: {ix}"
        return pods[0]

    async def delete_pods(self) -> None:
        """`deletePods`: every pod of the namespace deleted (upstream: one DeleteCollection)."""
        for pod in await self.pods():
            await self.client.delete(PODS, NS, pod["metadata"]["name"])

    # ------------------------------------------------------------------------------ playing the kubelet

    async def update_pod_status(self, pod: Obj) -> Obj:
        """`updatePodStatuses` of one pod: UpdateStatus of `pod` as given."""
        updated: Obj = await self.client.update(PODS, NS, pod, subresource="status")
        return updated

    async def change_pod_status(self, pod: Obj, change: Callable[[Obj], None]) -> None:
        """`updateJobPodsStatus`' write of one pod: `change` applied to the pod's status as the API has it now
        (re-read, so a finalizer the controller just removed does not make the write conflict)."""
        fresh = await self.client.get(PODS, NS, pod["metadata"]["name"])
        fresh.setdefault("status", {})
        change(fresh["status"])
        await self.update_pod_status(fresh)

    def finish(self, to: str) -> Callable[[Obj], None]:
        """What `setJobPodsPhase` and `setJobPhaseForIndex` write: the phase and, for a terminal one, one
        container status (Go's zero values) terminated now."""

        def change(status: Obj) -> None:
            status["phase"] = to
            if to in ("Failed", "Succeeded"):
                finished = {"terminated": {"exitCode": 0, "finishedAt": format_time(self.clock.now())}}
                status["containerStatuses"] = [
                    {"name": "", "image": "", "imageID": "", "ready": False, "restartCount": 0, "state": finished}
                ]

        return change

    async def set_job_pods_phase(self, job: Obj, to: str, count: int) -> None:
        """`setJobPodsPhase`: the first `count` non-terminal pods of the Job (name order) get phase `to`."""
        chosen = (await self.job_pods(job, lambda p: not terminal(p)))[:count]
        assert len(chosen) == count, f"couldn't set phase on {count - len(chosen)} Job pods"
        for pod in chosen:
            await self.change_pod_status(pod, self.finish(to))

    async def set_job_pods_ready(self, job: Obj, count: int) -> None:
        """`setJobPodsReady`: the first `count` non-terminal, not yet ready pods get `Ready` True."""
        chosen = [p for p in await self.job_pods(job, lambda p: not terminal(p)) if not ready(p)][:count]
        assert len(chosen) == count, f"couldn't set ready on {count - len(chosen)} Job pods"

        def make_ready(status: Obj) -> None:
            status.setdefault("conditions", []).append({"type": "Ready", "status": "True"})

        for pod in chosen:
            await self.change_pod_status(pod, make_ready)

    async def set_job_phase_for_index(self, job: Obj, to: str, ix: int) -> None:
        """`setJobPhaseForIndex`: the non-terminal pod of index `ix` gets phase `to`. Upstream's controller runs
        beside the test's requests, each of which takes time; here a request takes none, so the controller is
        let run (virtual time standing still) until the pod is there, as it is by then upstream."""
        pod = await self.until(lambda: self.active_pod_for_index(job, ix), f"the pod of index {ix}", timeout=0.0)
        await self.change_pod_status(pod, self.finish(to))

    async def fail_terminating_pods(self) -> None:
        """`failTerminatingPods`: the kubelet's last word on each pod being deleted, phase Failed."""
        for pod in await self.pods():
            if pod["metadata"].get("deletionTimestamp"):
                pod["status"]["phase"] = "Failed"
                await self.update_pod_status(pod)

    # ---------------------------------------------------------------------------------------- checks

    async def validate_job_pods_status_only(
        self,
        job: Obj,
        *,
        active: int = 0,
        ready: int | None = 0,
        failed: int = 0,
        succeeded: int = 0,
        terminating: int | None = 0,
        timeout: float = FOREVER,
    ) -> None:
        """`validateJobsPodsStatusOnly` (`podsByStatus`): the Job's counters; `ready` and `terminating` are Go
        pointers (None = absent), so a 0 must be written, not left out."""
        want = {"active": active, "ready": ready, "succeeded": succeeded, "failed": failed, "terminating": terminating}

        async def check() -> None:
            status = (await self.get_job(job)).get("status") or {}
            got = {
                "active": status.get("active", 0),
                "ready": status.get("ready"),
                "succeeded": status.get("succeeded", 0),
                "failed": status.get("failed", 0),
                "terminating": status.get("terminating"),
            }
            assert got == want, f"Job status {got}, want {want}"

        await self.until(check, "Job status", timeout)

    async def validate_job_pods_status(self, job: Obj, **want: Any) -> None:
        """`validateJobPodsStatus`: the counters `want` (those of `validate_job_pods_status_only`), then, within
        5 s, as many Pending or Running pods as `active`, each with the tracking finalizer."""
        await self.validate_job_pods_status_only(job, **want)
        active = want.get("active", 0)

        async def running() -> list[Obj]:
            pods = await self.job_pods(job, lambda p: phase(p) in ("Pending", "Running"))
            assert len(pods) == active, f"Found {len(pods)} active Pods, want {active}"
            return pods

        for pod in await self.until(running, "active pods", timeout=5.0):
            assert JOB_TRACKING_FINALIZER in finalizers(pod), f"Active pod {pod['metadata']['name']} has no finalizer"

    async def validate_indexed_job_pods(
        self, job: Obj, active: set[int], completed: str, failed: str | None = None
    ) -> None:
        """`validateIndexedJobPods`: completedIndexes, failedIndexes (None = absent), and the indexes (annotation
        = label) and hostnames of the Pending or Running pods."""
        status = (await self.get_job(job)).get("status") or {}
        assert (status.get("completedIndexes") or "") == completed
        assert status.get("failedIndexes") == failed
        got = set()
        for pod in await self.job_pods(job, lambda p: phase(p) in ("Pending", "Running")):
            ix = index_of(pod)
            assert (pod["metadata"].get("labels") or {}).get(JOB_COMPLETION_INDEX_ANNOTATION) == str(ix)
            assert pod["spec"].get("hostname") == f"{job['metadata']['name']}-{ix}"
            got.add(ix)
        assert got == active

    async def validate_job_condition(self, job: Obj, ctype: str) -> None:
        """`validateJobCondition` (and `validateJobComplete`, `validateJobFailed`): the Job gets condition
        `ctype` True."""

        async def check() -> None:
            conditions = (await self.get_job(job)).get("status", {}).get("conditions") or []
            assert any(c["type"] == ctype and c["status"] == "True" for c in conditions), conditions

        await self.until(check, f"condition {ctype}")

    async def validate_job_status(self, job: Obj, want: Obj) -> None:
        """`validateJobStatus`: the whole status but startTime, completionTime, uncountedTerminatedPods and the
        conditions' times and messages (absent = empty, as `cmpopts.EquateEmpty`)."""

        async def check() -> None:
            got = go_status((await self.get_job(job)).get("status") or {})
            assert got == go_status(want), f"status {got}, want {go_status(want)}"

        await self.until(check, "Job status")

    async def validate_status_untouched(self, job: Obj) -> None:
        """`time.Sleep(sleepDurationForControllerLatency)` then `cmp.Diff(batchv1.JobStatus{}, job.Status)`: the
        controller left the Job's status empty."""
        await self.sleep_for_controller_latency()
        assert (await self.get_job(job)).get("status") in (None, {})

    async def validate_finished_pods_no_finalizer(self, job: Obj) -> None:
        """`validateFinishedPodsNoFinalizer`, called once the Job finished: no pod of it keeps the tracking
        finalizer. Upstream's loop tests the Pending or Running pods, while its comment and message speak of
        finished ones; every pod is checked here, which covers both."""
        for pod in await self.job_pods(job):
            assert JOB_TRACKING_FINALIZER not in finalizers(pod), f"pod {pod['metadata']['name']} kept the finalizer"

    async def validate_no_orphan_pods_with_finalizers(self, job: Obj) -> None:
        """`validateNoOrphanPodsWithFinalizers`: no pod of the Job's selector keeps the tracking finalizer."""
        selector = job["spec"]["selector"]["matchLabels"]

        async def check() -> None:
            held = [
                p["metadata"]["name"]
                for p in await self.pods()
                if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in selector.items())
                and JOB_TRACKING_FINALIZER in finalizers(p)
            ]
            assert not held, f"pods with the tracking finalizer: {held}"

        await self.until(check, "no pod with the tracking finalizer")

    async def validate_counter_metric(self, name: str, want: float, **labels: str) -> None:
        """`validateCounterMetric`: the counter reads `want` within 10 s (a series never written reads 0)."""

        async def check() -> None:
            got = self.metric(name, **labels)
            assert got == want, f"{name}{labels} = {got}, want {want}"

        await self.until(check, name, timeout=10.0)

    async def validate_terminated_pods_tracking_finalizer_metric(self, want: float) -> None:
        """`validateTerminatedPodsTrackingFinalizerMetric`: as many finished pods got the finalizer as lost it."""
        await self.validate_counter_metric(TRACKING_FINALIZER_METRIC, want, event="add")
        await self.validate_counter_metric(TRACKING_FINALIZER_METRIC, want, event="delete")


def run(body: Callable[[Env], Coroutine[Any, Any, None]], *, backoff: float | None = None, **sync_config: Any) -> None:
    """`setup` + `startJobControllerAndWaitForCaches` + `resetMetrics`: a fresh API on virtual time and a started
    Job controller with fresh metrics; then `body`; then the controller stopped. `backoff` is
    `DefaultJobPodFailureBackOff` (None: kjobs' default, 10 s as upstream's; most tests set
    `FAST_POD_FAILURE_BACKOFF`), `sync_config` the other `SyncConfig` knobs (`max_uncounted_pods`,
    `max_pod_create_delete_per_sync`: upstream's `MaxUncountedPods`, `MaxPodCreateDeletePerSync`)."""
    if backoff is not None:
        sync_config["pod_failure_backoff"] = backoff

    async def scenario() -> None:
        clock = FakeClock()
        env = Env(clock, await local_api(clock), SyncConfig(**sync_config))
        await env.start_controller()
        try:
            await body(env)
        finally:
            await env.stop_controller()

    asyncio.run(scenario())
