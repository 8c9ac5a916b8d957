"""Kubernetes' CronJob and TTLAfterFinished end-to-end tests, run against `kjobs up` through the official client.

Each test is one `It` of kubernetes/kubernetes test/e2e/apps/cronjob.go or ttl_after_finished.go, named after it,
with its steps and its assertions, against one `kjobs up` started for the module and a namespace of its own per
test, as the e2e framework gives each `It` (docs/kubernetes-e2e.md lists what was ported and how).

Time: every CronJob of cronjob.go runs `*/1 * * * ?`, so its `It`s wait for minutes on a cluster (`cronJobTimeout`
is 5 minutes). `kjobs up --cronjob-clock-rate 30` runs the CronJob controller's clock 30 times faster than wall
time (a scheduled minute every 2 s) and every other component on wall time, so Jobs and pods run as on a
cluster; a wait of `cronJobTimeout` here is 5 scheduled minutes (10 s), bounded by `TIMEOUT` where it waits for
pods too. `busybox`'s commands are the local `sleep`, `true` and `false`; a template without a command (busybox's
default `sh`, which exits at once without a terminal) runs `sh -c true`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import watch as k8s_watch
from kubernetes.client.rest import ApiException

from tests.server.test_up import _up
from tests.support import free_port

pytestmark = pytest.mark.e2e

T = TypeVar("T")
POLL = 0.05
RATE = 30
"""`--cronjob-clock-rate`: a scheduled minute every 2 s of wall time."""
MINUTE = 60 / RATE
"""Wall seconds per minute of the CronJob controller's clock."""
CRONJOB_TIMEOUT = 5 * MINUTE
"""`cronJobTimeout` (5 minutes), on the CronJob controller's clock: what the `Consistently` of the suspend test
lasts."""
TIMEOUT = 45.0
"""Wall seconds any one `Eventually`/poll may take (it waits for Jobs and pods too, which run on wall time)."""
SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
"""batchv1.CronJobScheduledTimestampAnnotation."""
SLEEP = ["sleep", "300"]
SUCCESS = ["true"]
FAILURE = ["false"]


@dataclass
class Cluster:
    api: k8s.ApiClient
    batch: k8s.BatchV1Api
    core: k8s.CoreV1Api


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One `kjobs up` (pod-failure back-off 0.2 s, Job batch period 0.1 s, the CronJob controller's clock 30
    times wall time) for every test of the module."""
    tmp = tmp_path_factory.mktemp("k8scron")
    config = tmp / "kc.yaml"
    args = ("--port", str(free_port()), "--data-dir", str(tmp / "data"), "--kubeconfig", str(config))
    timing = ("--backoff", "0.2", "--job-batch-period", "0.1", "--cronjob-clock-rate", str(RATE))
    with _up(tmp, *args, *timing) as (proc, line, _elapsed):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        api = k8s_config.new_client_from_config(str(config))
        yield Cluster(api, k8s.BatchV1Api(api), k8s.CoreV1Api(api))
        api.close()


@pytest.fixture
def ns(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace of the test's own, deleted after it (the e2e framework's f.Namespace: `cronjob-…`, or
    `ttlafterfinished-…` for ttl_after_finished.go's `It`)."""
    base = "ttlafterfinished" if "ttl" in request.node.name else "cronjob"
    name = f"{base}-{secrets.token_hex(4)}"
    cluster.core.create_namespace({"metadata": {"name": name}})
    yield name
    cluster.core.delete_namespace(name)


# --- cronjob.go's helpers -----------------------------------------------------------------------------------------


def until(probe: Callable[[], T | bool | None], what: str, timeout: float = TIMEOUT) -> T:
    """wait.PollUntilContextTimeout / gomega.Eventually: poll `probe` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found  # type: ignore[return-value]
        time.sleep(POLL)
    raise AssertionError(f"timed out waiting for {what}")


def consistently(probe: Callable[[], bool], what: str, duration: float) -> None:
    """gomega.Consistently: `probe` holds at every poll for `duration` wall seconds."""
    deadline = time.monotonic() + duration
    while time.monotonic() < deadline:
        assert probe(), what
        time.sleep(POLL)


def new_test_cron_job(
    name: str,
    schedule: str,
    concurrency_policy: str,
    command: list[str] | None,
    successful_jobs_history_limit: int | None = None,
    failed_jobs_history_limit: int | None = None,
) -> dict[str, Any]:
    """newTestCronJob: one pod (parallelism, completions 1, backoffLimit 1), restartPolicy OnFailure, container
    `c` with an emptyDir `data` at /data; a grace period of 1 s (upstream's is the default 30 s, which a deleted
    Job's `sleep`, PID 1 with no SIGTERM handler, runs out)."""
    container = {
        "name": "c",
        "image": "busybox",
        "command": command if command is not None else ["sh", "-c", "true"],
        "volumeMounts": [{"mountPath": "/data", "name": "data"}],
    }
    job_spec = {
        "parallelism": 1,
        "completions": 1,
        "backoffLimit": 1,
        "template": {
            "spec": {
                "restartPolicy": "OnFailure",
                "terminationGracePeriodSeconds": 1,
                "volumes": [{"name": "data", "emptyDir": {}}],
                "containers": [container],
            }
        },
    }
    spec: dict[str, Any] = {"schedule": schedule, "concurrencyPolicy": concurrency_policy}
    spec["jobTemplate"] = {"spec": job_spec}
    if successful_jobs_history_limit is not None:
        spec["successfulJobsHistoryLimit"] = successful_jobs_history_limit
    if failed_jobs_history_limit is not None:
        spec["failedJobsHistoryLimit"] = failed_jobs_history_limit
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": spec}


def create_cron_job(c: Cluster, ns: str, cron_job: dict[str, Any]) -> k8s.V1CronJob:
    created: k8s.V1CronJob = c.batch.create_namespaced_cron_job(ns, cron_job)
    return created


def get_cron_job(c: Cluster, ns: str, name: str) -> k8s.V1CronJob:
    found: k8s.V1CronJob = c.batch.read_namespaced_cron_job(name, ns)
    return found


def delete_cron_job(c: Cluster, ns: str, name: str) -> None:
    """deleteCronJob: background propagation, so its Jobs and their pods go too."""
    c.batch.delete_namespaced_cron_job(name, ns, propagation_policy="Background")


def list_jobs(c: Cluster, ns: str) -> list[k8s.V1Job]:
    jobs: list[k8s.V1Job] = c.batch.list_namespaced_job(ns).items
    return jobs


def is_job_finished(job: k8s.V1Job) -> bool:
    """jobutil.IsJobFinished: a True Complete or Failed condition."""
    return any(c.type in ("Complete", "Failed") and c.status == "True" for c in job.status.conditions or [])


def filter_active_jobs(jobs: list[k8s.V1Job]) -> tuple[list[k8s.V1Job], list[k8s.V1Job]]:
    """filterActiveJobs: (unfinished, finished)."""
    return [j for j in jobs if not is_job_finished(j)], [j for j in jobs if is_job_finished(j)]


def wait_for_active_jobs(c: Cluster, ns: str, name: str, active: int) -> None:
    """waitForActiveJobs: at least `active` Jobs in the CronJob's `status.active`."""
    until(lambda: len(get_cron_job(c, ns, name).status.active or []) >= active, f"{active} active jobs")


def wait_for_job_not_active(c: Cluster, ns: str, name: str, job_name: str) -> None:
    """waitForJobNotActive."""
    until(
        lambda: all(j.name != job_name for j in get_cron_job(c, ns, name).status.active or []),
        f"job {job_name} not in the active list",
    )


def wait_for_job_to_disappear(c: Cluster, ns: str, target: k8s.V1Job) -> None:
    """waitForJobToDisappear: no finished Job of that name is listed."""
    until(
        lambda: all(j.metadata.name != target.metadata.name for j in filter_active_jobs(list_jobs(c, ns))[1]),
        f"job {target.metadata.name} gone",
    )


def wait_for_jobs_pod_to_disappear(c: Cluster, ns: str, target: k8s.V1Job) -> None:
    """waitForJobsPodToDisappear: no pod labelled `controller-uid=<the Job's uid>`."""
    selector = f"controller-uid={target.metadata.uid}"
    until(lambda: not c.core.list_namespaced_pod(ns, label_selector=selector).items, "the job's pods gone")


def wait_for_job_replaced(c: Cluster, ns: str, previous: str) -> None:
    """waitForJobReplaced: one Job not being deleted, of another name (more than one fails at once)."""

    def replaced() -> bool:
        alive = [j for j in list_jobs(c, ns) if j.metadata.deletion_timestamp is None]
        assert len(alive) <= 1, f"more than one job is running {[j.metadata.name for j in alive]}"
        return bool(alive) and alive[0].metadata.name != previous

    until(replaced, f"job {previous} replaced")


def wait_for_jobs_at_least(c: Cluster, ns: str, at_least: int) -> None:
    until(lambda: len(list_jobs(c, ns)) >= at_least, f"at least {at_least} jobs")


def wait_for_any_finished_job(c: Cluster, ns: str) -> None:
    until(lambda: any(is_job_finished(j) for j in list_jobs(c, ns)), "a finished job")


def cron_job_events(c: Cluster, ns: str, cron_job: k8s.V1CronJob) -> list[k8s.CoreV1Event]:
    """`Events(ns).Search(scheme, cronJob)`: the events whose involvedObject is the CronJob."""
    meta = cron_job.metadata
    selector = (
        f"involvedObject.kind=CronJob,involvedObject.name={meta.name},"
        f"involvedObject.namespace={ns},involvedObject.uid={meta.uid}"
    )
    events: list[k8s.CoreV1Event] = c.core.list_namespaced_event(ns, field_selector=selector).items
    return events


def wait_for_event_with_reason(c: Cluster, ns: str, name: str, reasons: list[str]) -> None:
    """waitForEventWithReason (30 s)."""
    until(
        lambda: any(e.reason in reasons for e in cron_job_events(c, ns, get_cron_job(c, ns, name))),
        f"an event with reason in {reasons}",
        timeout=30.0,
    )


def retry_on_conflict(update: Callable[[], T]) -> T:
    """retry.RetryOnConflict with retry.DefaultRetry (5 steps)."""
    for _ in range(4):
        try:
            return update()
        except ApiException as exc:
            if exc.status != 409:
                raise
            time.sleep(0.01)
    return update()


def ensure_history_limits(c: Cluster, ns: str, cron_job: dict[str, Any]) -> None:
    """ensureHistoryLimits: one finished Job is kept; it goes, with its pods, once the next one has finished."""
    created = create_cron_job(c, ns, cron_job)
    wait_for_any_finished_job(c, ns)
    active, finished = filter_active_jobs(list_jobs(c, ns))
    assert len(finished) == 1, f"active={[j.metadata.name for j in active]} finished={finished}"
    wait_for_job_to_disappear(c, ns, finished[0])
    wait_for_jobs_pod_to_disappear(c, ns, finished[0])
    active, finished = filter_active_jobs(list_jobs(c, ns))
    assert len(finished) == 1, f"active={[j.metadata.name for j in active]} finished={finished}"
    delete_cron_job(c, ns, created.metadata.name)


# --- test/e2e/apps/cronjob.go ---------------------------------------------------------------------------------------


def test_should_schedule_multiple_jobs_concurrently(cluster: Cluster, ns: str) -> None:
    cron_job = create_cron_job(cluster, ns, new_test_cron_job("concurrent", "*/1 * * * ?", "Allow", SLEEP))
    wait_for_active_jobs(cluster, ns, cron_job.metadata.name, 2)
    active, _ = filter_active_jobs(list_jobs(cluster, ns))
    assert len(active) >= 2
    delete_cron_job(cluster, ns, cron_job.metadata.name)


@pytest.mark.slow  # a Consistently of 5 scheduled minutes: 10 s
def test_should_not_schedule_jobs_when_suspended(cluster: Cluster, ns: str) -> None:
    manifest = new_test_cron_job("suspended", "*/1 * * * ?", "Allow", SLEEP)
    manifest["spec"]["suspend"] = True
    cron_job = create_cron_job(cluster, ns, manifest)
    consistently(
        lambda: not get_cron_job(cluster, ns, cron_job.metadata.name).status.active,
        "a suspended CronJob has active jobs",
        CRONJOB_TIMEOUT,
    )
    assert list_jobs(cluster, ns) == []
    delete_cron_job(cluster, ns, cron_job.metadata.name)


def test_should_not_schedule_new_jobs_when_forbid_concurrent(cluster: Cluster, ns: str) -> None:
    cron_job = create_cron_job(cluster, ns, new_test_cron_job("forbid", "*/1 * * * ?", "Forbid", SLEEP))
    name = cron_job.metadata.name
    wait_for_active_jobs(cluster, ns, name, 1)
    assert len(get_cron_job(cluster, ns, name).status.active) == 1
    active, _ = filter_active_jobs(list_jobs(cluster, ns))
    assert len(active) == 1
    # "Ensuring no more jobs are scheduled": upstream's Eventually passes at its first poll; here the CronJob is
    # watched for two more scheduled minutes, so that a Job due meanwhile would have been started.
    consistently(
        lambda: len(get_cron_job(cluster, ns, name).status.active or []) < 2, "unexpected active job number", 2 * MINUTE
    )
    delete_cron_job(cluster, ns, name)


def test_should_replace_jobs_when_replace_concurrent(cluster: Cluster, ns: str) -> None:
    cron_job = create_cron_job(cluster, ns, new_test_cron_job("replace", "*/1 * * * ?", "Replace", SLEEP))
    name = cron_job.metadata.name
    wait_for_active_jobs(cluster, ns, name, 1)
    assert len(get_cron_job(cluster, ns, name).status.active) == 1
    jobs = list_jobs(cluster, ns)
    active, _ = filter_active_jobs(jobs)
    assert len(active) == 1
    wait_for_job_replaced(cluster, ns, jobs[0].metadata.name)
    delete_cron_job(cluster, ns, name)


def test_should_be_able_to_schedule_after_more_than_100_missed_schedule(cluster: Cluster, ns: str) -> None:
    manifest = new_test_cron_job("concurrent", "*/1 * * * ?", "Forbid", SLEEP)
    creation_time = datetime.now(UTC) - timedelta(days=99)
    last_schedule_time = creation_time + timedelta(days=1)
    manifest["metadata"]["creationTimestamp"] = creation_time.strftime("%Y-%m-%dT%H:%M:%SZ")
    manifest["status"] = {"lastScheduleTime": last_schedule_time.strftime("%Y-%m-%dT%H:%M:%SZ")}
    cron_job = create_cron_job(cluster, ns, manifest)
    # Not asserted upstream, but what the test runs on there: kube-apiserver stamps creationTimestamp itself and
    # the CronJob strategy's PrepareForCreate drops the status, so the CronJob starts afresh.
    assert cron_job.metadata.creation_timestamp > datetime.now(UTC) - timedelta(hours=1)
    assert cron_job.status is None or cron_job.status.last_schedule_time is None
    wait_for_active_jobs(cluster, ns, cron_job.metadata.name, 1)
    active, _ = filter_active_jobs(list_jobs(cluster, ns))
    assert active
    delete_cron_job(cluster, ns, cron_job.metadata.name)


def test_should_not_emit_unexpected_warnings(cluster: Cluster, ns: str) -> None:
    cron_job = create_cron_job(cluster, ns, new_test_cron_job("concurrent", "*/1 * * * ?", "Allow", None))
    wait_for_jobs_at_least(cluster, ns, 2)
    wait_for_any_finished_job(cluster, ns)
    # Upstream's Eventually passes at its first poll without MissingJob/UnexpectedJob (events are not withdrawn).
    reasons = [e.reason for e in cron_job_events(cluster, ns, get_cron_job(cluster, ns, cron_job.metadata.name))]
    assert "MissingJob" not in reasons and "UnexpectedJob" not in reasons, reasons
    assert "SuccessfulCreate" in reasons  # the search finds the CronJob's events at all
    delete_cron_job(cluster, ns, cron_job.metadata.name)


def test_should_set_the_cronjob_scheduled_timestamp_annotation_on_a_job(cluster: Cluster, ns: str) -> None:
    cron_job = create_cron_job(cluster, ns, new_test_cron_job("concurrent", "*/1 * * * ?", "Allow", None))
    wait_for_jobs_at_least(cluster, ns, 1)
    jobs = list_jobs(cluster, ns)
    assert SCHEDULED_TIMESTAMP in (jobs[0].metadata.annotations or {}), "missing cronjob-scheduled-timestamp"
    value = jobs[0].metadata.annotations[SCHEDULED_TIMESTAMP]
    datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")  # time.Parse(time.RFC3339, …) of a UTC time
    delete_cron_job(cluster, ns, cron_job.metadata.name)


def test_should_remove_from_active_list_jobs_that_have_been_deleted(cluster: Cluster, ns: str) -> None:
    cron_job = create_cron_job(cluster, ns, new_test_cron_job("forbid", "*/1 * * * ?", "Forbid", SLEEP))
    name = cron_job.metadata.name
    wait_for_active_jobs(cluster, ns, name, 1)
    cron_job = get_cron_job(cluster, ns, name)
    assert len(cron_job.status.active) == 1
    job = cron_job.status.active[0]
    # e2eresource.DeleteResourceAndWaitForGC: background deletion, then the Job and its pods gone.
    cluster.batch.delete_namespaced_job(job.name, ns, propagation_policy="Background")
    until(lambda: not cluster.core.list_namespaced_pod(ns, label_selector=f"controller-uid={job.uid}").items, "GC")
    with pytest.raises(ApiException) as missing:
        cluster.batch.read_namespaced_job(job.name, ns)
    assert missing.value.status == 404
    wait_for_job_not_active(cluster, ns, name, job.name)
    wait_for_event_with_reason(cluster, ns, name, ["MissingJob"])
    delete_cron_job(cluster, ns, name)


def test_should_delete_successful_finished_jobs_with_limit_of_one_successful_job(cluster: Cluster, ns: str) -> None:
    manifest = new_test_cron_job("successful-jobs-history-limit", "*/1 * * * ?", "Allow", SUCCESS, 1, 0)
    ensure_history_limits(cluster, ns, manifest)


def test_should_delete_failed_finished_jobs_with_limit_of_one_job(cluster: Cluster, ns: str) -> None:
    manifest = new_test_cron_job("failed-jobs-history-limit", "*/1 * * * ?", "Allow", FAILURE, 0, 1)
    ensure_history_limits(cluster, ns, manifest)


def test_should_support_timezone(cluster: Cluster, ns: str) -> None:
    manifest = new_test_cron_job("cronjob-with-timezone", "*/1 * * * ?", "Allow", FAILURE)
    manifest["spec"]["timeZone"] = "bad-time-zone"
    with pytest.raises(ApiException) as invalid:
        create_cron_job(cluster, ns, manifest)
    assert invalid.value.status == 422  # apierrors.IsInvalid
    assert '"reason":"Invalid"' in invalid.value.body.replace(" ", "")


def _rfc3339_now() -> datetime:
    """metav1.Now().Rfc3339Copy(): the wire keeps whole seconds."""
    return datetime.now(UTC).replace(microsecond=0)


def _expect_finalizer(cron_job: k8s.V1CronJob, step: str) -> None:
    assert cron_job.metadata.deletion_timestamp is not None, f"expected deletionTimestamp on step {step!r}"
    assert cron_job.metadata.finalizers, f"expected finalizers on cronjob on step {step!r}"


def test_should_support_cronjob_api_operations(cluster: Cluster, ns: str) -> None:
    unique = ns
    template = new_test_cron_job("test-api", "* */1 * * ?", "Allow", SUCCESS, 1, 0)
    template["metadata"]["labels"] = {"special-label": unique}
    selector = f"special-label={unique}"
    batch = cluster.batch

    created = batch.create_namespaced_cron_job(ns, template)
    gotten = batch.read_namespaced_cron_job(created.metadata.name, ns)
    assert gotten.metadata.uid == created.metadata.uid

    cjs = batch.list_namespaced_cron_job(ns, label_selector=selector)
    assert len(cjs.items) == 1, "filtered list should have 1 item"
    watcher = k8s_watch.Watch()
    events = watcher.stream(
        batch.list_namespaced_cron_job,
        ns,
        label_selector=selector,
        resource_version=cjs.metadata.resource_version,
        timeout_seconds=30,
    )

    cluster_cjs = batch.list_cron_job_for_all_namespaces(label_selector=selector)
    assert len(cluster_cjs.items) == 1, "filtered list should have 1 item"
    cluster_watch = batch.list_cron_job_for_all_namespaces(
        label_selector=selector,
        resource_version=cjs.metadata.resource_version,
        watch=True,
        timeout_seconds=1,
        _preload_content=False,
    )
    assert cluster_watch.status == 200  # the watch is open; the Go test does not read it either
    cluster_watch.close()

    patched = batch.patch_namespaced_cron_job(
        created.metadata.name,
        ns,
        {"metadata": {"annotations": {"patched": "true"}}},
        _content_type="application/merge-patch+json",
    )
    assert patched.metadata.annotations.get("patched") == "true", "patched object should have the annotation"

    def update() -> k8s.V1CronJob:
        current = batch.read_namespaced_cron_job(created.metadata.name, ns)
        current.metadata.annotations["updated"] = "true"
        updated: k8s.V1CronJob = batch.replace_namespaced_cron_job(created.metadata.name, ns, current)
        return updated

    updated = retry_on_conflict(update)
    assert updated.metadata.annotations.get("updated") == "true", "updated object should have the annotation"

    for event in events:  # waiting for watch events with expected annotations
        assert event["type"] == "MODIFIED", event["type"]
        assert isinstance(event["object"], k8s.V1CronJob)
        if (event["object"].metadata.annotations or {}).get("patched") == "true":
            watcher.stop()
            break
    else:
        pytest.fail("timed out waiting for watch event")

    now1 = _rfc3339_now()
    patched_status = batch.patch_namespaced_cron_job_status(
        created.metadata.name,
        ns,
        {
            "metadata": {"annotations": {"patchedstatus": "true"}},
            "status": {"lastScheduleTime": now1.strftime("%Y-%m-%dT%H:%M:%SZ")},
        },
        _content_type="application/merge-patch+json",
    )
    assert patched_status.status.last_schedule_time == now1
    assert patched_status.metadata.annotations.get("patchedstatus") == "true"

    now2 = _rfc3339_now()

    def update_status() -> k8s.V1CronJob:
        current = batch.read_namespaced_cron_job(created.metadata.name, ns)
        current.status.last_schedule_time = now2
        written: k8s.V1CronJob = batch.replace_namespaced_cron_job_status(created.metadata.name, ns, current)
        return written

    updated_status = retry_on_conflict(update_status)
    assert updated_status.status.last_schedule_time == now2

    from kubernetes.dynamic import DynamicClient  # f.DynamicClient.Resource(cronjobs).Get(..., "status")

    resource = DynamicClient(cluster.api).resources.get(api_version="batch/v1", kind="CronJob")
    status = resource.subresources["status"].get(name=created.metadata.name, namespace=ns)
    assert status.metadata.uid == created.metadata.uid

    template["metadata"]["name"] = "for-removal"
    for_removal = batch.create_namespaced_cron_job(ns, template)
    batch.delete_namespaced_cron_job(for_removal.metadata.name, ns)
    try:
        _expect_finalizer(batch.read_namespaced_cron_job(for_removal.metadata.name, ns), "deleting cronjob")
    except ApiException as exc:
        assert exc.status == 404, f"expected 404, got {exc}"

    batch.delete_collection_namespaced_cron_job(ns, label_selector=selector)
    cjs = batch.list_namespaced_cron_job(ns, label_selector=selector)
    assert len(cjs.items) <= 2, f"filtered list length should be <= 2, got {cjs.items}"
    for cj in cjs.items:
        _expect_finalizer(cj, "deleting cronjob collection")


# --- test/e2e/apps/ttl_after_finished.go ------------------------------------------------------------------------------

DUMMY_FINALIZER = "k8s.io/dummy-finalizer"
TTL = 2
"""`ttl` (10 s upstream): the seconds the TTL controller waits after the Job finished; 2 s keeps the test short."""
RANDOMLY_SUCCEED_OR_FAIL = "exit $(( $(od -An -N1 -tu1 /dev/urandom) % 2 ))"
"""fixtures.go's `randomlySucceedOrFail` (`exit $(( $RANDOM / 16384 ))`: busybox's sh has $RANDOM, dash does
not)."""


def _finish_time(job: k8s.V1Job) -> datetime | None:
    """finishTime: the lastTransitionTime of the True Complete or Failed condition."""
    for c in job.status.conditions or []:
        if c.type in ("Complete", "Failed") and c.status == "True":
            found: datetime = c.last_transition_time
            return found
    return None


def test_job_should_be_deleted_once_it_finishes_after_ttl_seconds(cluster: Cluster, ns: str) -> None:
    name = "rand-non-local"
    job = {  # e2ejob.NewTestJob("randomlySucceedOrFail", name, Never, 1, 1, nil, 2)
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "finalizers": [DUMMY_FINALIZER]},
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "backoffLimit": 2,
            "manualSelector": False,
            "ttlSecondsAfterFinished": TTL,
            "template": {
                "metadata": {"labels": {"job": name}},
                "spec": {
                    "restartPolicy": "Never",
                    "volumes": [{"name": "data", "emptyDir": {}}],
                    "containers": [
                        {
                            "name": "c",
                            "image": "busybox",
                            "command": ["/bin/sh", "-c", RANDOMLY_SUCCEED_OR_FAIL],
                            "volumeMounts": [{"mountPath": "/data", "name": "data"}],
                        }
                    ],
                },
            },
        },
    }
    batch = cluster.batch
    batch.create_namespaced_job(ns, job)
    try:
        until(lambda: is_job_finished(batch.read_namespaced_job(name, ns)), "the job finished")  # WaitForJobFinish
        until(lambda: batch.read_namespaced_job(name, ns).metadata.deletion_timestamp, "the TTL controller's delete")
        deleting = batch.read_namespaced_job(name, ns)
        finished = _finish_time(deleting)
        assert finished is not None, "Expected job finish time not to be zero."
        delete_at = deleting.metadata.deletion_timestamp
        assert delete_at is not None
        assert delete_at >= finished + timedelta(seconds=TTL), "Expected job's deletion time to be after expiration"
    finally:  # cleanupJob: remove the dummy finalizer; the Job goes, cascading to its pods

        def remove_finalizer() -> None:
            current = batch.read_namespaced_job(name, ns)
            current.metadata.finalizers = [f for f in current.metadata.finalizers or [] if f != DUMMY_FINALIZER]
            batch.replace_namespaced_job(name, ns, current)

        retry_on_conflict(remove_finalizer)

        def job_gone() -> bool:
            try:
                batch.read_namespaced_job(name, ns)
            except ApiException as exc:
                return exc.status == 404
            return False

        until(job_gone, "the job gone", timeout=30.0)  # WaitForJobGone(…, wait.ForeverTestTimeout)
        until(lambda: not cluster.core.list_namespaced_pod(ns, label_selector=f"job={name}").items, "pods gone")
