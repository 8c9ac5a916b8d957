"""Upstream rows of pkg/controller/job/job_controller_test.go that are not conformance-corpus tables.

Three kinds of port (docs/upstream-job-controller.md lists every upstream test, the rows left out and why):

* unit rows run kjobs' pure core (`kjobs.job.*`, `kjobs.controllers.podclaims`) on the row's inputs;
* handler rows ("the Job is queued / not queued") feed the pod or Job change to the controller's informer
  handler, as upstream calls `addPod`/`updatePod`/`deletePod`/`updateJob`, and read kjobs' work queue, which
  delays a key by the 1 s batch period as upstream's does (`verifyEmptyQueueAndAwaitForQueueLen`);
* sync rows run the real controller against an in-process API on virtual time, with Jobs and pods made through
  the API; where upstream fills an informer cache by hand, the same object is put into kjobs' cache.
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.resources import JOBS, PODS
from kjobs.clock import FakeClock
from kjobs.controllers import podclaims
from kjobs.controllers.job import JobController, JobControllerSettings
from kjobs.job import conditions as C
from kjobs.job.config import Bookkeeping, SyncConfig
from kjobs.job.sync import plan_sync
from tests.controllers.upstream_support import Recording, run_for
from tests.support import local_api, settle

NOW = 1_767_225_600.0
FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
BATCH = 1.0  # SyncJobBatchPeriod


# ------------------------------------------------------------------------------------------- object builders


def new_job(
    name: str = "foobar",
    parallelism: int | None = 1,
    completions: int | None = 1,
    backoff_limit: int = 6,
    mode: str | None = None,
    *,
    namespace: str = "default",
) -> Obj:
    """Upstream's `newJobWithName`: selector and template labels `foo: bar`, a uid of its own."""
    spec: Obj = {
        "selector": {"matchLabels": {"foo": "bar"}},
        "manualSelector": True,
        "template": {
            "metadata": {"labels": {"foo": "bar"}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "foo/bar"}]},
        },
        "backoffLimit": backoff_limit,
    }
    if parallelism is not None:
        spec["parallelism"] = parallelism
    if completions is not None:
        spec["completions"] = completions
    if mode is not None:
        spec["completionMode"] = mode
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "generation": 1},
        "spec": spec,
        "status": {},
    }


def controller_ref(job: Obj) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": job["metadata"]["name"],
        "uid": job["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def new_pod(name: str, job: Obj | None = None, *, uid: str | None = None, phase: str | None = None) -> Obj:
    """Upstream's `newPod` / `buildPod().name(..).job(..)`: the Job's labels and controller reference."""
    meta: Obj = {"name": name, "namespace": "default", "uid": uid or name, "resourceVersion": "1"}
    if job is not None:
        meta["labels"] = dict(job["spec"]["selector"]["matchLabels"])
        meta["ownerReferences"] = [controller_ref(job)]
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "foo/bar"}]},
    }
    if phase is not None:
        pod["status"] = {"phase": phase}
    return pod


def tracked(pod: Obj) -> Obj:
    pod["metadata"]["finalizers"] = [JOB_TRACKING_FINALIZER]
    return pod


def deleting(pod: Obj, when: float = NOW) -> Obj:
    pod["metadata"]["deletionTimestamp"] = format_time(when)
    return pod


def uncounted(succeeded: list[str] | None = None, failed: list[str] | None = None) -> Obj:
    return {"succeeded": succeeded or [], "failed": failed or []}


# ------------------------------------------------------------------------------------ TestGetNewFinshedPods


@dataclass(frozen=True)
class FinishedRow:
    status: Obj
    pods: list[Obj]
    want_succeeded: int
    want_failed: int
    expected_rm_finalizers: frozenset[str] = frozenset()


def _pod(uid: str, phase: str, *, finalizer: bool = False, deleted: bool = False) -> Obj:
    pod = new_pod(f"pod-{uid}", uid=uid, phase=phase)
    if finalizer:
        tracked(pod)
    if deleted:
        deleting(pod)
    return pod


NEW_FINISHED = [
    pytest.param(
        FinishedRow(
            {"succeeded": 2, "failed": 1, "uncountedTerminatedPods": uncounted()},
            [
                _pod("a", "Succeeded"),
                _pod("b", "Succeeded", finalizer=True),
                _pod("c", "Succeeded", finalizer=True),
                _pod("d", "Failed"),
                _pod("e", "Failed", finalizer=True),
                _pod("f", "Running"),
            ],
            4,
            2,
        ),
        id="some counted",
    ),
    pytest.param(
        FinishedRow(
            {"succeeded": 1, "failed": 1, "uncountedTerminatedPods": uncounted(["a", "c"], ["e", "f"])},
            [
                _pod("a", "Succeeded"),
                _pod("b", "Succeeded"),
                _pod("c", "Succeeded", finalizer=True),
                _pod("d", "Succeeded", finalizer=True),
                _pod("e", "Failed"),
                _pod("f", "Failed", finalizer=True),
                _pod("g", "Failed", finalizer=True),
            ],
            4,
            4,
        ),
        id="some uncounted",
    ),
    pytest.param(
        FinishedRow(
            {"succeeded": 2, "failed": 2, "uncountedTerminatedPods": uncounted(["a"], ["d"])},
            [
                _pod("a", "Succeeded"),
                _pod("b", "Succeeded", finalizer=True),
                _pod("c", "Succeeded", finalizer=True),
                _pod("d", "Failed"),
                _pod("e", "Failed", finalizer=True),
                _pod("f", "Failed", finalizer=True),
                _pod("g", "Failed", finalizer=True),
            ],
            4,
            5,
            frozenset({"b", "f"}),
        ),
        id="with expected removed finalizers",
    ),
    pytest.param(
        FinishedRow(
            {"succeeded": 1, "failed": 1, "uncountedTerminatedPods": uncounted()},
            [
                _pod("a", "Succeeded", finalizer=True, deleted=True),
                _pod("b", "Failed", finalizer=True, deleted=True),
                _pod("c", "Running", finalizer=True, deleted=True),
                _pod("d", "Pending", finalizer=True, deleted=True),
                _pod("e", "Running", deleted=True),
                _pod("f", "Pending", deleted=True),
            ],
            2,
            4,
        ),
        id="deleted pods",
    ),
]


@pytest.mark.parametrize("row", NEW_FINISHED)
def test_get_new_finished_pods(row: FinishedRow) -> None:
    """`getNewFinishedPods` plus the counted and uncounted pods: kjobs adds them up the same way in `plan_sync`
    (`SyncContext.succeeded` / `.failed`), the counts the sync then writes."""
    job = new_job(parallelism=None, completions=None)
    job["status"] = copy.deepcopy(row.status)
    plan = plan_sync(job, row.pods, now=NOW, bookkeeping=Bookkeeping(expected_rm_finalizers=row.expected_rm_finalizers))
    assert plan.ctx is not None
    assert (plan.ctx.succeeded, plan.ctx.failed) == (row.want_succeeded, row.want_failed)


# ---------------------------------------------------------------------------------- TestEnsureJobConditions


def _cond(status: str, reason: str) -> Obj:
    return C.new_condition("Suspended", status, reason, "", NOW)


ENSURE_CONDITIONS = [
    pytest.param([], "True", "foo", [_cond("True", "foo")], True, id="append true condition"),
    pytest.param([], "False", "foo", [], False, id="append false condition"),
    pytest.param(
        [_cond("True", "foo")], "True", "bar", [_cond("True", "bar")], True, id="update true condition reason"
    ),
    pytest.param(
        [_cond("True", "foo")], "False", "foo", [_cond("False", "foo")], True, id="update true condition status"
    ),
    pytest.param(
        [_cond("False", "foo")], "True", "foo", [_cond("True", "foo")], True, id="update false condition status"
    ),
    pytest.param([_cond("True", "foo")], "True", "foo", [_cond("True", "foo")], False, id="condition already exists"),
]


def _without_times(conds: list[Obj]) -> list[Obj]:
    return [{k: v for k, v in c.items() if k not in ("lastProbeTime", "lastTransitionTime")} for c in conds]


@pytest.mark.parametrize(("have", "status", "reason", "expect", "updated"), ENSURE_CONDITIONS)
def test_ensure_job_conditions(have: list[Obj], status: str, reason: str, expect: list[Obj], updated: bool) -> None:
    """`ensureJobConditionStatus` is kjobs' `conditions.ensure_status`."""
    got, is_updated = C.ensure_status(have, "Suspended", status, reason, "", NOW + 5)
    assert is_updated == updated
    assert _without_times(got) == _without_times(expect)


# ------------------------------------------------------------------- TestGetPodCreationInfoForIndependentIndexes


def _index_pod(index: int, failures: int, deleted_at: float) -> Obj:
    """`buildPod().indexFailureCount(..).customDeletionTimestamp(..)`: the index's last failed pod, kept (with
    its finalizer) until replaced; its deletion time stands for its finish time (`getFinishedTime`)."""
    pod = tracked(new_pod(f"failed-{index}", new_job(), phase="Failed"))
    pod["metadata"]["annotations"] = {JOB_COMPLETION_INDEX_ANNOTATION: str(index), FAILURE_COUNT: str(failures)}
    return deleting(pod, deleted_at)


CREATION_INFO = [
    pytest.param([1, 3], {}, [1, 3], None, id="simple index creation"),
    pytest.param([1, 3], {1: (0, NOW)}, [3], None, id="subset of indexes can be recreated now"),
    pytest.param(
        [1, 3],
        {1: (0, NOW), 3: (0, NOW - 10)},
        [3],
        None,
        id="subset of indexes can be recreated now as the pods failed long time ago",
    ),
    pytest.param(
        [1, 2, 3],
        {1: (1, NOW), 2: (0, NOW), 3: (2, NOW)},
        [],
        10.0,
        id="no indexes can be recreated now, need to wait default pod failure backoff",
    ),
    pytest.param(
        [1, 2, 3],
        {1: (1, NOW - 1), 2: (0, NOW - 1), 3: (2, NOW - 1)},
        [],
        9.0,
        id="no indexes can be recreated now, need to wait but 1s already passed",
    ),
]


@pytest.mark.parametrize(("to_add", "delayed", "want", "want_wait"), CREATION_INFO)
def test_get_pod_creation_info_for_independent_indexes(
    to_add: list[int], delayed: dict[int, tuple[int, float]], want: list[int], want_wait: float | None
) -> None:
    """kjobs decides this inside `plan_sync`: an Indexed Job with a per-index limit whose other indexes are
    running, and whose `to_add` indexes are missing, some with a failed pod held back; the indexes it creates
    now and the wait it asks for are the upstream function's two results."""
    total = 4
    job = new_job(parallelism=total, completions=total, backoff_limit=2**31 - 1, mode="Indexed")
    job["spec"]["backoffLimitPerIndex"] = 6
    job["status"] = {"startTime": format_time(NOW - 60)}
    pods: list[Obj] = []
    for index in range(total):
        if index in to_add:
            if index in delayed:
                pods.append(_index_pod(index, *delayed[index]))
            continue
        running = tracked(new_pod(f"running-{index}", job, phase="Running"))
        running["metadata"]["annotations"] = {JOB_COMPLETION_INDEX_ANNOTATION: str(index)}
        pods.append(running)
    plan = plan_sync(job, pods, now=NOW, config=SyncConfig())
    created = sorted(int(p["metadata"]["annotations"][JOB_COMPLETION_INDEX_ANNOTATION]) for p in plan.creations)
    assert created == want
    assert plan.requeue_after == want_wait


# --------------------------------------------------------------------------------------------- TestJobPodLookup


LOOKUP = [
    pytest.param(
        {"metadata": {"name": "basic", "namespace": ""}},
        {"metadata": {"name": "foo1", "namespace": ""}},
        False,
        id="pods without labels don't match any job",
    ),
    pytest.param(
        {"metadata": {"name": "foo", "namespace": ""}, "spec": {"selector": {"matchLabels": {"foo": "bar"}}}},
        {"metadata": {"name": "foo2", "namespace": "ns", "labels": {"foo": "bar"}}},
        False,
        id="matching labels, different namespace",
    ),
    pytest.param(
        {
            "metadata": {"name": "bar", "namespace": "ns"},
            "spec": {"selector": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}},
        },
        {"metadata": {"name": "foo3", "namespace": "ns", "labels": {"foo": "bar"}}},
        True,
        id="matching ns and labels returns",
    ),
]


@pytest.mark.parametrize(("job", "pod", "matches"), LOOKUP)
def test_job_pod_lookup(job: Obj, pod: Obj, matches: bool) -> None:
    """`getPodJobs` (the Jobs an orphan could belong to) is kjobs' `podclaims.may_adopt`, asked of each Job of
    the pod's namespace."""
    assert podclaims.may_adopt(job, pod) is matches


# --------------------------------------------------------------------------------------------- handler rows


async def idle_controller(*jobs: Obj, batch: float = BATCH) -> JobController:
    """A controller whose informers never run (upstream's `alwaysReady` with the caches filled by hand)."""
    clock = FakeClock(NOW)
    client = await local_api(clock)
    controller = JobController(client, clock=clock, settings=JobControllerSettings(batch_period=batch))
    for job in jobs:
        controller.jobs.cache[("default", job["metadata"]["name"])] = job
    return controller


async def queued_after_batch(controller: JobController, wait: float = BATCH) -> list[str]:
    """`verifyEmptyQueueAndAwaitForQueueLen`: nothing is queued at once; after the batch period, the keys."""
    assert len(controller.queue) == 0
    await run_for(controller.clock, wait)
    keys: list[str] = []
    while len(controller.queue):
        key = await controller.queue.get()
        assert key is not None
        controller.queue.done(key)
        keys.append(key)
    return sorted(keys)


def two_jobs() -> tuple[Obj, Obj]:
    return new_job("job1"), new_job("job2")


def test_add_pod() -> None:
    async def scenario() -> None:
        job1, job2 = two_jobs()
        controller = await idle_controller(job1, job2)
        controller._on_pod(None, new_pod("pod1", job1))
        assert await queued_after_batch(controller) == ["default/job1"]
        controller._on_pod(None, new_pod("pod2", job2))
        assert await queued_after_batch(controller) == ["default/job2"]

    asyncio.run(scenario())


def test_add_pod_orphan() -> None:
    async def scenario() -> None:
        job1, job2 = two_jobs()
        job3 = new_job("job3")
        job3["spec"]["selector"] = {"matchLabels": {"other": "labels"}}
        controller = await idle_controller(job1, job2, job3)
        pod = new_pod("pod1", job1)
        del pod["metadata"]["ownerReferences"]  # an orphan: every Job whose selector matches may adopt it
        controller._on_pod(None, pod)
        assert await queued_after_batch(controller) == ["default/job1", "default/job2"]

    asyncio.run(scenario())


def _bumped(pod: Obj) -> Obj:
    new = copy.deepcopy(pod)
    new["metadata"]["resourceVersion"] = str(int(pod["metadata"]["resourceVersion"]) + 1)
    return new


def test_update_pod() -> None:
    async def scenario() -> None:
        job1, job2 = two_jobs()
        controller = await idle_controller(job1, job2)
        pod1, pod2 = new_pod("pod1", job1), new_pod("pod2", job2)
        controller._on_pod(pod1, _bumped(pod1))
        assert await queued_after_batch(controller) == ["default/job1"]
        controller._on_pod(pod2, _bumped(pod2))
        assert await queued_after_batch(controller) == ["default/job2"]

    asyncio.run(scenario())


def test_update_pod_orphan_with_new_labels() -> None:
    async def scenario() -> None:
        job1, job2 = two_jobs()
        controller = await idle_controller(job1, job2)
        pod = new_pod("pod1", job1)
        del pod["metadata"]["ownerReferences"]
        prev = copy.deepcopy(pod)
        prev["metadata"]["labels"] = {"foo2": "bar2"}
        controller._on_pod(prev, _bumped(pod))
        assert await queued_after_batch(controller) == ["default/job1", "default/job2"]

    asyncio.run(scenario())


def test_update_pod_change_controller_ref() -> None:
    async def scenario() -> None:
        job1, job2 = two_jobs()
        controller = await idle_controller(job1, job2)
        pod = new_pod("pod1", job1)
        prev = copy.deepcopy(pod)
        prev["metadata"]["ownerReferences"] = [controller_ref(job2)]
        controller._on_pod(prev, _bumped(pod))
        assert await queued_after_batch(controller) == ["default/job1", "default/job2"]

    asyncio.run(scenario())


def test_update_pod_release() -> None:
    async def scenario() -> None:
        job1, job2 = two_jobs()
        controller = await idle_controller(job1, job2)
        pod = new_pod("pod1", job1)
        new = _bumped(pod)
        del new["metadata"]["ownerReferences"]
        controller._on_pod(pod, new)
        assert await queued_after_batch(controller) == ["default/job1", "default/job2"]

    asyncio.run(scenario())


def test_delete_pod() -> None:
    async def scenario() -> None:
        job1, job2 = two_jobs()
        controller = await idle_controller(job1, job2)
        controller._on_pod(new_pod("pod1", job1), None)
        assert await queued_after_batch(controller) == ["default/job1"]
        controller._on_pod(new_pod("pod2", job2), None)
        assert await queued_after_batch(controller) == ["default/job2"]

    asyncio.run(scenario())


def test_delete_pod_orphan() -> None:
    async def scenario() -> None:
        job1, job2 = two_jobs()
        job3 = new_job("job3")
        job3["spec"]["selector"] = {"matchLabels": {"other": "labels"}}
        controller = await idle_controller(job1, job2, job3)
        pod = new_pod("pod1", job1)
        del pod["metadata"]["ownerReferences"]
        controller._on_pod(pod, None)
        assert await queued_after_batch(controller) == []
        assert controller.queue.pending_delayed() == 0

    asyncio.run(scenario())


def test_job_backoff() -> None:
    """Row "failure with pod updates batching": a pod turning Failed queues its Job after the batch period."""

    async def scenario() -> None:
        job = new_job("foobar", 1, 1, 1)
        controller = await idle_controller(job)
        old = new_pod("pod-x", job, phase="Running")
        new = _bumped(old)
        new["status"]["phase"] = "Failed"
        controller._on_pod(old, new)
        await run_for(controller.clock, BATCH - 0.01)
        assert len(controller.queue) == 0
        assert await queued_after_batch(controller, 0.01) == ["default/foobar"]

    asyncio.run(scenario())


UPDATE_JOB = [
    pytest.param("spec update", True, id="spec update"),
    pytest.param("status update", False, id="status update"),
]


@pytest.mark.parametrize(("change", "immediately"), UPDATE_JOB)
def test_update_job_requeue(change: str, immediately: bool) -> None:
    """A spec change (a new generation) syncs the Job at once; a status-only change waits for the batch."""

    async def scenario() -> None:
        old = new_job("foobar", 1, 1, 1, "Indexed")
        controller = await idle_controller(old)
        new = copy.deepcopy(old)
        if change == "spec update":
            new["spec"]["suspend"] = False
            new["metadata"]["generation"] += 1
        else:
            new["status"]["startTime"] = format_time(NOW)
        controller._on_job(old, new)
        assert (len(controller.queue) > 0) is immediately

    asyncio.run(scenario())


def test_delete_job_clears_pod_expectations() -> None:
    """A deleted Job's unobserved creations no longer hold back a new Job of the same name."""

    async def scenario() -> None:
        job = new_job("foobar", 1, 1, 1)
        controller = await idle_controller(job)
        key = "default/foobar"
        controller.book.expect(key, adds=1, now=controller.clock.now())
        assert not controller.book.satisfied(key, now=controller.clock.now())
        controller._on_job(job, None)
        assert controller.book.satisfied(key, now=controller.clock.now())
        # What a user sees: the Job recreated under that name before the next sync gets its pod at once.
        again = await controller.client.create(JOBS, "default", api_job(new_job("foobar", 1, 1, 1)))
        controller.jobs.cache[("default", "foobar")] = again
        await controller.sync(key)
        pods, _ = await controller.client.list(PODS, "default")
        assert len(pods) == 1

    asyncio.run(scenario())


# ------------------------------------------------------------------------------------------ sync rows


class FlakyClient(Recording):
    """`Recording`, with the writes upstream's fakes fail on demand: pod creations (`FakePodControl.Err`),
    finalizer patches, and the Job status write (`updateStatusHandler` returning an error)."""

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.create_error: ApiError | None = None
        self.patch_error: ApiError | None = None
        self.status_errors: list[ApiError] = []
        self.patch_attempts = 0
        self.patch_attempts_by_name: set[str] = set()

    async def create(self, resource: Any, namespace: str | None, obj: Obj, **kw: Any) -> Obj:
        if resource is PODS and self.create_error is not None:
            self.actions.append(_failed("create", obj))
            raise self.create_error
        return await super().create(resource, namespace, obj, **kw)

    async def update(
        self, resource: Any, namespace: str | None, obj: Obj, *, subresource: str | None = None, **kw: Any
    ) -> Obj:
        if resource is JOBS and subresource == "status" and self.status_errors:
            self.actions.append(_failed("update", obj, "jobs", "status"))
            raise self.status_errors.pop(0)
        return await super().update(resource, namespace, obj, subresource=subresource, **kw)

    async def patch(self, resource: Any, namespace: str | None, name: str, patch: Any, **kw: Any) -> Obj:
        if resource is PODS and self.patch_error is not None:
            self.patch_attempts += 1
            self.patch_attempts_by_name.add(name)
            raise self.patch_error
        return await super().patch(resource, namespace, name, patch, **kw)


def _failed(verb: str, obj: Obj, resource: str = "pods", subresource: str | None = None) -> Any:
    from tests.controllers.upstream_support import Action

    return Action(verb, resource, str((obj.get("metadata") or {}).get("name")), subresource, obj, {"failed": True})


class WatchedController(JobController):
    """Records each sync (virtual time, key): upstream's injected `syncHandler`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.synced: list[tuple[float, str]] = []

    async def sync(self, key: str) -> None:
        self.synced.append((self.clock.now(), key))
        await super().sync(key)


@dataclass
class Cluster:
    clock: FakeClock
    client: FlakyClient
    controller: WatchedController
    created: dict[str, Obj] = field(default_factory=dict)

    async def job(self, name: str = "foobar") -> Obj:
        got: Obj = await self.client.client.get(JOBS, "default", name)
        return got

    def status_writes(self) -> list[Obj]:
        return [a.body for a in self.client.of("update", "jobs") if a.subresource == "status"]


async def cluster(*, batch: float = BATCH, start: bool = True) -> Cluster:
    clock = FakeClock(NOW)
    raw = await local_api(clock)
    client = FlakyClient(raw)
    controller = WatchedController(client, clock=clock, settings=JobControllerSettings(batch_period=batch))  # type: ignore[arg-type]
    made = Cluster(clock, client, controller)
    if start:
        await controller.start()
    return made


def api_job(job: Obj) -> Obj:
    """A Job as a user sends it: no uid, generation or status (the API sets them)."""
    out = copy.deepcopy(job)
    for key in ("uid", "generation"):
        out["metadata"].pop(key, None)
    out.pop("status", None)
    return out


async def set_status(made: Cluster, name: str, **status: Any) -> Obj:
    job = await made.job(name)
    job["status"].update(status)
    updated: Obj = await made.client.client.update(JOBS, "default", job, subresource="status")
    return updated


async def cached(made: Cluster, name: str = "foobar") -> Obj:
    """The API's Job, put into the controller's cache by hand (the informer is not running)."""
    job = await made.job(name)
    made.controller.jobs.cache[("default", name)] = job
    return job


def test_sync_job_deleted() -> None:
    async def scenario() -> None:
        made = await cluster(start=False)
        await made.controller.sync("default/foobar")
        assert made.client.actions == []

    asyncio.run(scenario())


def test_sync_job_complete() -> None:
    """Syncing a Job that is already Complete leaves its conditions as they are."""

    async def scenario() -> None:
        made = await cluster(start=False)
        job = new_job("foobar", 1, 1, 6)
        job["status"] = {"conditions": [C.new_condition("Complete", "True", "", "", NOW)]}
        made.controller.jobs.cache[("default", "foobar")] = job
        await made.controller.sync("default/foobar")
        assert made.client.actions == []
        cached_job = made.controller.jobs.get("default", "foobar")
        assert cached_job is not None and len(cached_job["status"]["conditions"]) == 1

    asyncio.run(scenario())


def test_single_job_failed_condition() -> None:
    """A Job past its deadline that has a `Failed=False` condition ends with one `Failed=True` condition."""

    async def scenario() -> None:
        made = await cluster(start=False)
        job = new_job("foobar", 1, 1, 6)
        job["spec"]["activeDeadlineSeconds"] = 10
        await made.client.client.create(JOBS, "default", api_job(job))
        failed = C.new_condition("Failed", "False", "DeadlineExceeded", C.MSG_DEADLINE_EXCEEDED, NOW)
        await set_status(made, "foobar", startTime=format_time(NOW - 15), conditions=[failed])
        await cached(made)
        await made.controller.sync("default/foobar")
        assert made.client.of("delete") == []
        written = made.status_writes()
        assert written, "expected a Job status write"
        failed_conditions = [c for c in written[-1]["status"]["conditions"] if c["type"] == "Failed"]
        assert [c["status"] for c in failed_conditions] == ["True"]

    asyncio.run(scenario())


MANAGED_BY = [
    pytest.param(
        "example.com/custom-managed-by", False, id="job with custom value of managedBy; the status is unchanged"
    ),
    pytest.param(
        "kubernetes.io/job-controller", True, id="job with well known value of the managedBy; the status is updated"
    ),
    pytest.param(None, True, id="job without the managedBy; the status is updated"),
]


@pytest.mark.parametrize(("managed_by", "updated"), MANAGED_BY)
def test_sync_job_when_managed_by(managed_by: str | None, updated: bool) -> None:
    async def scenario() -> None:
        made = await cluster(start=False)
        job = new_job("foobar", 2, 2, 6)
        if managed_by is not None:
            job["spec"]["managedBy"] = managed_by
        await made.client.client.create(JOBS, "default", api_job(job))
        start = format_time(NOW)
        base = await set_status(made, "foobar", active=1, ready=1, startTime=start)
        await cached(made)
        await made.controller.sync("default/foobar")
        status = (await made.job())["status"]
        if not updated:
            assert made.client.actions == []
            assert status == base["status"]
            return
        assert len(made.client.of("create")) == 2
        assert status == {
            "active": 2,
            "ready": 0,
            "startTime": start,
            "terminating": 0,
            "uncountedTerminatedPods": {},
        }

    asyncio.run(scenario())


# ------------------------------------------------------------------------------- rows on a running controller


def _failed_with(reason: str, job: Obj) -> bool:
    return any(
        c["type"] == "Failed" and c["status"] == "True" and c.get("reason") == reason
        for c in job.get("status", {}).get("conditions", [])
    )


PAST_DEADLINE = [
    pytest.param(False, "job1", id="New job created without start time being set"),
    pytest.param(True, "job2", id="New job created with start time being set"),
]


@pytest.mark.parametrize(("set_start_time", "name"), PAST_DEADLINE)
def test_past_deadline_job_finished(set_start_time: bool, name: str) -> None:
    """A Job gets its start time, then `Failed` with `DeadlineExceeded`, and not before the deadline."""

    async def scenario() -> None:
        made = await cluster(start=False)
        job = new_job(name, 1, 1, 6)
        job["spec"]["activeDeadlineSeconds"] = 1
        await made.client.client.create(JOBS, "default", api_job(job))
        if set_start_time:  # the API drops a new object's status: it is written before the controller starts
            await set_status(made, name, startTime=format_time(NOW))
        await made.controller.start()
        seen: dict[str, Obj] = {}

        def started() -> bool:
            current = made.controller.jobs.get("default", name)
            return current is not None and bool(current.get("status", {}).get("startTime"))

        await settle(made.clock, started)
        current = made.controller.jobs.get("default", name)
        assert current is not None
        seen["job"] = current

        def failed() -> bool:
            latest = made.controller.jobs.get("default", name)
            return latest is not None and _failed_with("DeadlineExceeded", latest)

        await settle(made.clock, failed)
        from kjobs.api.timeutil import parse_time

        start = parse_time(seen["job"]["status"]["startTime"])
        assert made.clock.now() - start >= 1
        await made.controller.stop()

    asyncio.run(scenario())


UPDATE_REQUEUE = [
    pytest.param(None, False, id="no error"),
    pytest.param(ApiError(500, "InternalError", "update error"), True, id="generic error"),
    pytest.param(ApiError(409, "Conflict", "conflict"), True, id="conflict error"),
]


@pytest.mark.parametrize(("error", "requeued"), UPDATE_REQUEUE)
def test_sync_job_update_requeue(error: ApiError | None, requeued: bool) -> None:
    """A failed status write makes the Job sync again after the API back-off (1 s); a good one does not.
    The pod-event batch period is set to 10 s so that a retry cannot be taken for a batched sync."""

    async def scenario() -> None:
        made = await cluster(batch=10.0, start=False)
        if error is not None:
            made.client.status_errors.append(error)
        await made.client.client.create(JOBS, "default", api_job(new_job("foobar", 2, 2, 6)))
        await made.controller.start()
        await settle(made.clock, lambda: len(made.controller.synced) >= 1)
        first = made.controller.synced[0][0]
        await run_for(made.clock, 5.0)
        again = [t - first for t, key in made.controller.synced[1:] if key == "default/foobar" and t - first < 5]
        assert (again == [1.0]) if requeued else (again == [])
        await made.controller.stop()

    asyncio.run(scenario())


def test_job_api_backoff_reset() -> None:
    """A sync that fails is retried with the API back-off; a sync that succeeds resets it. Seen as the times
    of the syncs: failures at 0 s and 1 s are retried 1 s and 2 s later; after the success at 3 s, a new failure
    is retried 1 s later again, not 4 s."""

    async def scenario() -> None:
        made = await cluster(batch=30.0, start=False)
        made.client.create_error = ApiError(500, "InternalError", "Controller error")
        await made.client.client.create(JOBS, "default", api_job(new_job("foobar", 1, 3, 2)))
        await made.controller.start()
        await settle(made.clock, lambda: len(made.controller.synced) >= 2)
        made.client.create_error = None  # the retry after 2 s succeeds
        await settle(made.clock, lambda: len(made.controller.synced) >= 3)
        await run_for(made.clock, 0.5)
        times = [t - NOW for t, _ in made.controller.synced]
        assert times == [0.0, 1.0, 3.0]
        assert len([a for a in made.client.of("create") if not a.options.get("failed")]) == 1
        made.client.create_error = ApiError(500, "InternalError", "Controller error")
        job = await made.job()
        job["spec"]["parallelism"] = 2  # a spec change: an immediate sync, which fails to create the pod
        await made.client.client.update(JOBS, "default", job)
        await settle(made.clock, lambda: len(made.controller.synced) >= 5)
        times = [t - NOW for t, _ in made.controller.synced]
        assert times[4] - times[3] == 1.0
        made.client.create_error = None
        await made.controller.stop()

    asyncio.run(scenario())


def test_watch_jobs() -> None:
    """A Job created through the API reaches the sync, as the cache holds it."""

    async def scenario() -> None:
        made = await cluster()
        created = await made.client.client.create(JOBS, "default", api_job(new_job("foo", 1, 1, 6)))
        await settle(made.clock, lambda: bool(made.controller.synced))
        assert made.controller.synced[0][1] == "default/foo"
        cached_job = made.controller.jobs.get("default", "foo")
        assert cached_job is not None and cached_job["metadata"]["uid"] == created["metadata"]["uid"]
        await made.controller.stop()

    asyncio.run(scenario())


def test_watch_pods() -> None:
    """A failed pod of a Job, seen on the pod watch, syncs that Job."""

    async def scenario() -> None:
        made = await cluster(start=False)
        job = await made.client.client.create(JOBS, "default", api_job(new_job("foobar", 2, 2, 6)))
        made.controller.jobs.cache[("default", "foobar")] = job  # only the pod informer runs, as upstream
        made.controller.pods.add_handler(made.controller._on_pod)
        made.controller.pods.start()
        made.controller._workers.start()
        pod = tracked(new_pod("pod-a", job))
        del pod["metadata"]["uid"], pod["metadata"]["resourceVersion"]
        pod = await made.client.client.create(PODS, "default", pod)
        pod["status"] = {"phase": "Failed"}
        await made.client.client.update(PODS, "default", pod, subresource="status")
        await settle(made.clock, lambda: bool(made.controller.synced))
        assert made.controller.synced[0][1] == "default/foobar"
        await made.controller.stop()

    asyncio.run(scenario())


def _orphan_candidate(name: str, owner: Obj | None, labels: dict[str, str] | None = None) -> Obj:
    pod = tracked(new_pod(name))
    del pod["metadata"]["uid"], pod["metadata"]["resourceVersion"]
    if owner is not None:
        pod["metadata"]["ownerReferences"] = [owner]
    if labels:
        pod["metadata"]["labels"] = labels
    return pod


WATCH_ORPHANS = [
    pytest.param("job_does_not_exist", True, False, id="job_does_not_exist"),
    pytest.param("orphan", False, False, id="orphan"),
    pytest.param("job_finished", True, True, id="job_finished"),
]


@pytest.mark.parametrize(("name", "owned", "in_cache"), WATCH_ORPHANS)
def test_watch_orphan_pods(name: str, owned: bool, in_cache: bool) -> None:
    """A terminating pod holding the tracking finalizer for no live Job loses the finalizer (and is gone)."""

    async def scenario() -> None:
        made = await cluster()
        job = new_job("foobar", 2, 2, 6)
        if in_cache:
            job["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
            made.controller.jobs.cache[("default", "foobar")] = job
        pod = await made.client.client.create(
            PODS, "default", _orphan_candidate(name.replace("_", "-"), controller_ref(job) if owned else None)
        )
        await made.client.client.delete(PODS, "default", pod["metadata"]["name"])  # the finalizer holds it

        def terminating() -> bool:
            current = made.controller.pods.get("default", pod["metadata"]["name"])
            return current is not None and bool(current["metadata"].get("deletionTimestamp"))

        def finalizer_gone() -> bool:
            current = made.controller.pods.get("default", pod["metadata"]["name"])
            return current is None or JOB_TRACKING_FINALIZER not in current["metadata"].get("finalizers", [])

        await settle(made.clock, terminating)
        await settle(made.clock, finalizer_gone)
        assert pod["metadata"]["name"] in made.client.names("patch")
        await made.controller.stop()

    asyncio.run(scenario())


def _owner(api_version: str, kind: str, name: str, *, controller: bool) -> Obj:
    ref: Obj = {"apiVersion": api_version, "kind": kind, "name": name, "uid": "111"}
    if controller:
        ref.update(controller=True, blockOwnerDeletion=True)
    return ref


SYNC_ORPHAN = [
    pytest.param(
        _owner("batch/v1", "Job", "j", controller=True), "running", False, id="controlled_by_existing_running_job"
    ),
    pytest.param(
        _owner("batch/v1", "Job", "j", controller=True), "finished", True, id="controlled_by_existing_finished_job"
    ),
    pytest.param(_owner("batch/v1", "Job", "j", controller=True), None, True, id="controlled_by_non_existing_job"),
    pytest.param(_owner("batch/v1", "CronJob", "cj", controller=True), None, False, id="controlled_by_cronjob"),
    pytest.param(None, None, True, id="not_controlled"),
    pytest.param(_owner("example/v1", "Job", "job", controller=True), None, False, id="controlled_by_custom_crd"),
    pytest.param(_owner("batch/v1", "Job", "j", controller=False), "running", True, id="owned_by_existing_running_job"),
    pytest.param(_owner("example/v1", "Job", "job", controller=False), None, True, id="owned_by_custom_crd"),
    pytest.param({"labels": {"app": "test"}}, None, True, id="orphan_pods_by_label_selector"),
]


@pytest.mark.parametrize(("owner", "job_state", "removed"), SYNC_ORPHAN)
def test_sync_orphan_pod(owner: Obj | None, job_state: str | None, removed: bool) -> None:
    """`syncOrphanPod` is kjobs' `JobController.sync_orphan_pod`, on a terminating pod with the finalizer.
    Jobs are only in the controller's cache, as upstream; "non existing" Jobs are in neither cache nor API.
    The label-selector row's pod (no owner, labels `app: test`) is synced by name: kjobs keys orphans by name."""

    async def scenario() -> None:
        made = await cluster(start=False)
        if job_state is not None:
            job = new_job("j", 2, 2, 6)
            job["metadata"]["uid"] = "111"
            if job_state == "finished":
                job["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
            made.controller.jobs.cache[("default", "j")] = job
        labels = owner.get("labels") if owner is not None and "labels" in owner else None
        ref = owner if owner is not None and "labels" not in owner else None
        pod = await made.client.client.create(PODS, "default", _orphan_candidate("orphan", ref, labels))
        await made.client.client.delete(PODS, "default", "orphan")
        pod = await made.client.client.get(PODS, "default", "orphan")
        made.controller.pods.cache[("default", "orphan")] = pod
        await made.controller.sync_orphan_pod("default/orphan")
        try:
            latest = await made.client.client.get(PODS, "default", "orphan")
            has_finalizer = JOB_TRACKING_FINALIZER in latest["metadata"].get("finalizers", [])
        except ApiError as exc:
            assert exc.code == 404
            has_finalizer = False
        assert has_finalizer is not removed

    asyncio.run(scenario())


def test_finalizer_cleanup() -> None:
    """A Job marked Complete from outside: its pod loses the tracking finalizer."""

    async def scenario() -> None:
        made = await cluster()
        await made.client.client.create(JOBS, "default", api_job(new_job("foobar", 1, 1, 1)))
        await settle(made.clock, lambda: bool(made.controller.pods.list("default")))
        (pod,) = made.controller.pods.list("default")
        job = await made.job()
        # Upstream's fake clientset takes a bare Complete condition; a real API asks what validation asks of a
        # finished Job's status (pkg/apis/batch/validation ValidateJobStatusUpdate): no active pods, a
        # completion time and SuccessCriteriaMet before Complete.
        now = format_time(made.clock.now())
        job["status"].update(active=0, ready=0, succeeded=1, completionTime=now)
        job["status"].setdefault("conditions", []).extend(
            [C.new_condition(kind, "True", "", "", made.clock.now()) for kind in ("SuccessCriteriaMet", "Complete")]
        )
        await made.client.client.update(JOBS, "default", job, subresource="status")

        def finalizer_gone() -> bool:
            current = made.controller.pods.get("default", pod["metadata"]["name"])
            return current is not None and JOB_TRACKING_FINALIZER not in current["metadata"].get("finalizers", [])

        await settle(made.clock, finalizer_gone)
        await made.controller.stop()

    asyncio.run(scenario())


class _NoPatchPodControl:
    """Upstream's `FakePodControl`: finalizer patches are counted, not sent."""

    inline = True

    def __init__(self) -> None:
        self.patched: list[str] = []

    async def remove_tracking_finalizer(self, namespace: str, name: str) -> None:
        self.patched.append(name)


def test_finalizers_removed_expectations() -> None:
    """The pods whose finalizer removal is in flight (kjobs' `BookkeepingStore.finalizers`, upstream's
    `finalizerExpectations`): none after a sync whose patches failed, all four after one whose patches were
    sent, then only the pod whose removal has not been seen (deleted but still holding the finalizer)."""

    async def scenario() -> None:
        made = await cluster(start=False)
        controller, key = made.controller, "default/foobar"
        job = await made.client.client.create(JOBS, "default", api_job(new_job("foobar", 2, 2, 6)))
        controller.jobs.cache[("default", "foobar")] = job
        pods: list[Obj] = []
        for i, phase in enumerate(("Succeeded", "Succeeded", "Failed", "Failed")):
            pod = tracked(new_pod(f"pod-{i}", job, uid=f"uid-{i}", phase=phase))
            pod["status"]["containerStatuses"] = [
                {"name": "c", "state": {"terminated": {"exitCode": 0, "finishedAt": "0001-01-01T00:00:01Z"}}}
            ]
            pods.append(pod)
            controller.pods.cache[("default", pod["metadata"]["name"])] = pod
            controller._on_pod(None, pod)
        made.client.patch_error = ApiError(500, "InternalError", "fake pod controller error")
        with pytest.raises(ApiError):
            await controller.sync(key)
        assert controller.book.finalizers.get(key, set()) == set()

        made.client.patch_error = None
        controller.jobs.cache[("default", "foobar")] = await made.job()  # the first sync's status write, seen
        fake = _NoPatchPodControl()
        controller._pod_control = fake  # type: ignore[assignment]
        await controller.sync(key)
        assert sorted(fake.patched) == ["pod-0", "pod-1", "pod-2", "pod-3"]
        assert controller.book.finalizers[key] == {"uid-0", "uid-1", "uid-2", "uid-3"}

        def changed(pod: Obj, *, finalizer: bool, deleted: bool) -> Obj:
            new = _bumped(pod)
            if not finalizer:
                new["metadata"]["finalizers"] = []
            if deleted:
                deleting(new, made.clock.now())
            return new

        controller._on_pod(pods[0], changed(pods[0], finalizer=False, deleted=False))
        controller._on_pod(pods[1], changed(pods[1], finalizer=False, deleted=True))
        controller._on_pod(pods[2], changed(pods[2], finalizer=True, deleted=True))  # the finalizer stays
        controller._on_pod(pods[3], None)
        assert controller.book.finalizers[key] == {"uid-2"}

    asyncio.run(scenario())


@dataclass(frozen=True)
class PodSpec:
    """A pod of a TestGetPodsForJob row: its owner ("job", "other" or None), labels kept, the finalizer."""

    name: str
    owner: str | None = "job"
    labels: bool = True
    finalizer: bool = False


GET_PODS_FOR_JOB = [
    pytest.param(
        False,
        False,
        [
            PodSpec("pod1", finalizer=True),
            PodSpec("pod2", "other"),
            PodSpec("pod3", None, labels=False),
            PodSpec("pod4"),
        ],
        ["pod1", "pod4"],
        ["pod1"],
        id="only matching",
    ),
    pytest.param(
        False,
        False,
        [PodSpec("pod1"), PodSpec("pod2", None), PodSpec("pod3", "other")],
        ["pod1", "pod2"],
        ["pod2"],
        id="adopt",
    ),
    pytest.param(True, True, [PodSpec("pod1"), PodSpec("pod2", None)], ["pod1"], [], id="no adopt when deleting"),
    pytest.param(True, False, [PodSpec("pod1"), PodSpec("pod2", None)], ["pod1"], [], id="no adopt when deleting race"),
    pytest.param(False, False, [PodSpec("pod1"), PodSpec("pod2", labels=False)], ["pod1"], [], id="release"),
]


@pytest.mark.parametrize(("deleted", "deleted_in_cache", "pods", "want", "want_finalizer"), GET_PODS_FOR_JOB)
def test_get_pods_for_job(
    deleted: bool, deleted_in_cache: bool, pods: list[PodSpec], want: list[str], want_finalizer: list[str]
) -> None:
    """`getPodsForJob`'s claims (adopt, release, no adoption by a Job being deleted, also when only a live
    read knows it) are kjobs' `_claim_pods`, for the pods its pod events noted. The pods are made through the
    API and fed to the pod handler as the informer would; which pods the Job then controls, and which of those
    hold the finalizer, are read back from the API. Upstream's `test_job` / `other_job` are `test-job` /
    `other-job` here (a real API checks names)."""

    async def scenario() -> None:
        made = await cluster(start=False)
        controller = made.controller
        spec = api_job(new_job("test-job", 1, 1, 6))
        if deleted:
            spec["metadata"]["finalizers"] = ["example.com/hold"]  # keeps the deleted Job, with its timestamp
        job = await made.client.client.create(JOBS, "default", spec)
        other = await made.client.client.create(JOBS, "default", api_job(new_job("other-job", 1, 1, 6)))
        if deleted:
            await made.client.client.delete(JOBS, "default", "test-job")
        cached_job = copy.deepcopy(await made.job("test-job")) if deleted_in_cache else job
        controller.jobs.cache[("default", "test-job")] = cached_job
        controller.jobs.cache[("default", "other-job")] = other
        for row in pods:
            owner = {"job": job, "other": other, None: None}[row.owner]
            pod = new_pod(row.name, owner if owner is not None else job)
            if owner is None:
                del pod["metadata"]["ownerReferences"]
            if not row.labels:
                del pod["metadata"]["labels"]
            if row.finalizer:
                tracked(pod)
            del pod["metadata"]["uid"], pod["metadata"]["resourceVersion"]
            created = await made.client.client.create(PODS, "default", pod)
            controller.pods.cache[("default", row.name)] = created
            controller._on_pod(None, created)
        await controller._claim_pods("default/test-job", cached_job)
        items, _ = await made.client.client.list(PODS, "default")
        uid = job["metadata"]["uid"]
        mine = [
            p
            for p in items
            if any(r.get("uid") == uid and r.get("controller") for r in p["metadata"].get("ownerReferences", []))
        ]
        assert sorted(p["metadata"]["name"] for p in mine) == want
        held = [p["metadata"]["name"] for p in mine if JOB_TRACKING_FINALIZER in p["metadata"].get("finalizers", [])]
        assert sorted(held) == want_finalizer

    asyncio.run(scenario())


def test_sync_job_expectations() -> None:
    """Upstream makes a second pod appear while the sync checks its expectations; kjobs reads its expectations
    and the Job's pods without yielding, so that race cannot happen. What the row asks: a Job of parallelism 2
    whose second pod arrives just before the sync creates and deletes nothing."""

    async def scenario() -> None:
        made = await cluster(start=False)
        controller = made.controller
        job = await made.client.client.create(JOBS, "default", api_job(new_job("foobar", 2, 2, 6)))
        controller.jobs.cache[("default", "foobar")] = job
        for name in ("pod-a", "pod-b"):
            pod = tracked(new_pod(name, job, uid=f"uid-{name}", phase="Pending"))
            controller.pods.cache[("default", name)] = pod
            controller._on_pod(None, pod)
        await controller.sync("default/foobar")
        assert made.client.of("create") == []
        assert made.client.of("delete") == []

    asyncio.run(scenario())


def test_sync_orphan_pods_by_selector_retry_on_failure() -> None:
    """Orphans whose finalizer patch fails are retried one by one, and then lose it. Upstream reaches them by
    the deleted Job's label selector; kjobs enqueues each orphan by name (its pod events, or the deleted Job's
    pods), so the three pods are made orphans of a deleted Job here."""

    async def scenario() -> None:
        made = await cluster()
        made.client.patch_error = ApiError(503, "ServiceUnavailable", "server temporarily unavailable")
        for i in range(1, 4):
            pod = _orphan_candidate(f"pod{i}", None, {"app": "test"})
            await made.client.client.create(PODS, "default", pod)
            await made.client.client.delete(PODS, "default", f"pod{i}")
        await settle(made.clock, lambda: made.client.patch_attempts >= 3)
        assert sorted(made.client.patch_attempts_by_name) == ["pod1", "pod2", "pod3"]
        made.client.patch_error = None
        await settle(made.clock, lambda: not made.controller.pods.list("default"))
        assert made.client.names("patch") == {"pod1", "pod2", "pod3"}
        await made.controller.stop()

    asyncio.run(scenario())


# ------------------------------------------------------- TestControllerSyncJob: the rows the corpus does not hold


class FakePodControl:
    """pkg/controller's `FakePodControl`: with `err`, every call fails (a creation and a finalizer patch are
    still recorded, a deletion is not); with `create_limit`, creations past the limit fail unrecorded."""

    inline = False

    def __init__(self, err: ApiError | None = None, create_limit: int = 0) -> None:
        self.err, self.create_limit = err, create_limit
        self.create_calls = 0
        self.templates: list[Obj] = []
        self.deleted: list[str] = []
        self.patches: list[str] = []

    async def create_pod(self, namespace: str, pod: Obj) -> Obj:
        self.create_calls += 1
        if self.create_limit and self.create_calls > self.create_limit:
            raise ApiError(500, "InternalError", f"not creating pod, limit {self.create_limit} already reached")
        self.templates.append(pod)
        if self.err is not None:
            raise self.err
        created = copy.deepcopy(pod)
        created["metadata"]["name"] = f"{pod['metadata'].get('generateName', '')}{len(self.templates)}"
        return created

    async def delete_pod(self, namespace: str, name: str) -> None:
        if self.err is not None:
            raise self.err
        self.deleted.append(name)

    async def remove_tracking_finalizer(self, namespace: str, name: str) -> None:
        self.patches.append(name)
        if self.err is not None:
            raise self.err


class _StatusWrites:
    def __init__(self) -> None:
        self.writes: list[Obj] = []

    async def update_job_status(self, job: Obj, status: Obj) -> Obj:
        self.writes.append(status)
        return dict(job, status=status)


class _NoEvents:
    def event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        return None


def _pod_list(job: Obj, count: int, phase: str, prefix: str) -> list[Obj]:
    """`newPodList`: pods of the Job with the finalizer and a container finished long ago."""
    pods = []
    for i in range(count):
        pod = tracked(new_pod(f"{prefix}-{i}", job, uid=f"{prefix}-{i}", phase=phase))
        pod["status"]["containerStatuses"] = [
            {"name": "c", "state": {"terminated": {"exitCode": 0, "finishedAt": "0001-01-01T00:00:01Z"}}}
        ]
        pods.append(pod)
    return pods


@dataclass(frozen=True)
class SyncRow:
    parallelism: int
    completions: int
    active: int = 0
    succeeded: int = 0
    failed: int = 0
    error: bool = False
    pod_limit: int = 0
    want_creations: int = 0
    want_deletions: int = 0
    want_active: int = 0
    want_succeeded: int = 0
    want_failed: int = 0
    want_patches: int = 0
    want_terminating: int = 0


CONTROLLER_SYNC_JOB = [
    pytest.param(
        SyncRow(2, 5, active=1, succeeded=1, error=True, want_creations=1, want_active=1, want_patches=1),
        id="too few active pods, with controller error",
    ),
    pytest.param(
        SyncRow(2, 5, active=3, error=True, want_active=3, want_patches=1),
        id="too many active pods, with controller error",
    ),
    pytest.param(
        SyncRow(2, 5, active=1, failed=1, error=True, want_creations=1, want_active=1, want_patches=1),
        id="only new failed pod with controller error",
    ),
    pytest.param(SyncRow(100, 200, pod_limit=10, want_creations=10, want_active=10), id="limited pods"),
]


@pytest.mark.parametrize("row", CONTROLLER_SYNC_JOB)
def test_controller_sync_job(row: SyncRow) -> None:
    """The TestControllerSyncJob rows that fail the pod control (`podControllerError`, `podLimit`), which the
    corpus' scenarios cannot say; the others run in tests/conformance. One sync (`sync_job`) with upstream's
    fake pod control: the calls it made, the status it wrote, and that it reports the error (to be retried)."""

    async def scenario() -> None:
        job = new_job("foobar", row.parallelism, row.completions, 6)
        pods = (
            _pod_list(job, row.active, "Running", "active")
            + _pod_list(job, row.succeeded, "Succeeded", "succeeded")
            + _pod_list(job, row.failed, "Failed", "failed")
        )
        control = FakePodControl(ApiError(500, "InternalError", "fake error") if row.error else None, row.pod_limit)
        writer = _StatusWrites()
        from kjobs.job.bookkeeping import BookkeepingStore
        from kjobs.job.execute import sync_job
        from kjobs.job.metrics import JobMetrics

        outcome = await sync_job(
            job,
            pods,
            now=NOW,
            book=BookkeepingStore(),
            config=SyncConfig(),
            pod_control=control,
            status_writer=writer,
            events=_NoEvents(),
            metrics=JobMetrics(),
        )
        assert (outcome.error is not None) is (row.error or row.pod_limit > 0)
        assert len(control.templates) == row.want_creations
        assert len(control.deleted) == row.want_deletions
        assert len(control.patches) == row.want_patches
        status = writer.writes[-1]
        assert status.get("active", 0) == row.want_active
        assert status.get("succeeded", 0) == row.want_succeeded
        assert status.get("failed", 0) == row.want_failed
        assert status.get("ready") == 0
        assert status.get("terminating") == row.want_terminating
        assert status.get("startTime")
        if row.pod_limit:
            assert control.create_calls <= 1 + 2 + 4 + 8  # slow start stops after the batch that failed

    asyncio.run(scenario())


# ------------------------------------------------------------ pkg/controller/job/metrics/metrics_test.go


def _exposition(metrics: Any, name: str) -> list[str]:
    """The metric's lines in the text exposition (HELP, TYPE, samples), as `GatherAndCompare` reads them."""
    from prometheus_client import generate_latest

    text = generate_latest(metrics.registry).decode()
    return [line for line in text.splitlines() if name in line and "_created" not in line]


def test_pod_failures_handled_by_failure_policy() -> None:
    from kjobs.job.metrics import JobMetrics

    metrics = JobMetrics()
    for action in ("FailJob", "Ignore", "Count"):
        metrics.pod_failures_handled.labels(action).inc()
    name = "job_controller_pod_failures_handled_by_failure_policy_total"
    assert _exposition(metrics, name) == [
        f"# HELP {name} [BETA] The number of failed Pods handled by failure policy with respect to the failure "
        "policy action applied based on the matched rule. Possible values of the action label correspond to the "
        'possible values for the failure policy rule action, which are: "FailJob", "Ignore" and "Count".',
        f"# TYPE {name} counter",
        f'{name}{{action="FailJob"}} 1.0',
        f'{name}{{action="Ignore"}} 1.0',
        f'{name}{{action="Count"}} 1.0',
    ]


def test_terminated_pods_tracking_finalizer_total() -> None:
    from kjobs.job.metrics import JobMetrics

    metrics = JobMetrics()
    metrics.tracking_finalizer.labels("add").inc()
    metrics.tracking_finalizer.labels("add").inc()
    metrics.tracking_finalizer.labels("delete").inc()
    name = "job_controller_terminated_pods_tracking_finalizer_total"
    assert _exposition(metrics, name) == [
        f"# HELP {name} [BETA] The number of terminated pods (phase=Failed|Succeeded) that have the finalizer "
        'batch.kubernetes.io/job-tracking. The event label can be "add" or "delete".',
        f"# TYPE {name} counter",
        f'{name}{{event="add"}} 2.0',
        f'{name}{{event="delete"}} 1.0',
    ]
