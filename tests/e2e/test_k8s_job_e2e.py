"""Kubernetes' own Job end-to-end tests (test/e2e/apps/job.go), run against `kjobs up` through the official client.

Each test is one `It` of kubernetes/kubernetes test/e2e/apps/job.go, named after it, with its steps and its
assertions, against one `kjobs up` started for the module and a namespace of its own per test, as the e2e
framework gives each `It` (docs/kubernetes-e2e.md lists what was ported, changed and skipped). The pods'
behaviours are those of test/e2e/framework/job/fixtures.go (`NewTestJob`), as `sh -c` commands of local processes:

- `notTerminate` runs the pause image, which runs until signalled and then exits 0: `trap 'exit 0' TERM` and a
  long sleep it waits for;
- `failOnce` and its kin keep a marker file on a volume: the pod's working directory for an emptyDir (a local
  process's pod directory is shared by its containers and kept across their restarts), an absolute directory of
  the test's own for the hostPath volume the fixtures use when the Job is pinned to one node;
- a process that is PID 1 in a container ignores SIGTERM unless it handles it, so the pod killed at the end of
  its grace period exits 137: `trap '' TERM` gave a local process group the same (kjobs now sends SIGTERM as
  to a PID 1, docs/sigterm42.md; the trap stays, harmless).

Time is scaled as the brief of each timing allows: `kjobs up --backoff 0.2` (Kubernetes' pod-failure back-off is
10 s; the tests only need a failed pod to be replaced) and `--job-batch-period 0.1` (1 s in kube-controller-
manager; timing only). The pod replacement test's SIGTERM handler sleeps 2 s where Kubernetes' sleeps 5 s.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
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
TIMEOUT = 45.0
"""Seconds any one wait may take (Kubernetes' JobTimeout is 15 minutes; every wait here takes seconds)."""
JOB_SELECTOR_KEY = "job"
"""test/e2e/framework/job/const.go JobSelectorKey: the template's label GetJobPods selects on."""
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
BACKOFF = "0.2"


@dataclass
class Cluster:
    api: k8s.ApiClient
    batch: k8s.BatchV1Api
    core: k8s.CoreV1Api
    root: Path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One `kjobs up` (one node, pod-failure back-off 0.2 s, Job batch period 0.1 s) for every test of the module."""
    tmp = tmp_path_factory.mktemp("k8se2e")
    config = tmp / "kc.yaml"
    args = ("--port", str(free_port()), "--data-dir", str(tmp / "data"), "--kubeconfig", str(config))
    with _up(tmp, *args, "--backoff", BACKOFF, "--job-batch-period", "0.1") as (proc, line, _elapsed):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        api = k8s_config.new_client_from_config(str(config))
        yield Cluster(api, k8s.BatchV1Api(api), k8s.CoreV1Api(api), tmp)
        api.close()


@pytest.fixture
def ns(cluster: Cluster) -> Iterator[str]:
    """A namespace of the test's own, deleted after it (the e2e framework's f.Namespace)."""
    name = f"job-{secrets.token_hex(4)}"
    cluster.core.create_namespace({"metadata": {"name": name}})
    yield name
    cluster.core.delete_namespace(name)


# --- test/e2e/framework/job: fixtures and waits -------------------------------------------------------------------

NOT_TERMINATE = "trap 'exit 0' TERM; sleep 1000000 & wait"
BEHAVIOURS = {
    "notTerminate": NOT_TERMINATE,
    "fail": "exit 1",
    "succeed": "exit 0",
    "failOddSucceedEven": "if [ $((JOB_COMPLETION_INDEX % 2)) -ne 0 ]; then exit 1; else exit 0; fi",
    "failOnce": "if [ -r {data}/foo ]; then exit 0; else touch {data}/foo; exit 1; fi",
    "notTerminateOnce": (
        "if [ -r {data}/foo ]; then exit 0; elif [ $JOB_COMPLETION_INDEX -eq 0 ]; then "
        "touch {data}/foo; trap '' TERM; sleep 1000000; else exit 1; fi"
    ),
    "failOncePerIndex": (
        "if [ -r {data}/foo-$JOB_COMPLETION_INDEX ]; then exit 0; "
        "else touch {data}/foo-$JOB_COMPLETION_INDEX; exit 42; fi"
    ),
    "notTerminateOncePerIndex": (
        "if [ -r {data}/foo-$JOB_COMPLETION_INDEX ]; then exit 0; "
        "else touch {data}/foo-$JOB_COMPLETION_INDEX; sleep 1000000 & wait; fi"
    ),
}
"""fixtures.go's behaviours; any other name (Kubernetes' "succeeded", "") runs busybox's default `sh`, which exits 0."""


def new_test_job(
    behaviour: str,
    name: str,
    restart_policy: str,
    parallelism: int,
    completions: int,
    active_deadline_seconds: int | None,
    backoff_limit: int,
    node_name: str = "",
    *,
    host_dir: Path | None = None,
) -> dict[str, Any]:
    """NewTestJobOnNode: container `c`, a `data` volume at /data, the template labelled job=NAME.

    With a node name the volume is a hostPath, so a marker file outlives the pod; here it is `host_dir`, a
    directory of the test's own that the command uses by its absolute path (a local process mounts nothing).
    """
    data = "."
    volume: dict[str, Any] = {"name": "data", "emptyDir": {}}
    spec: dict[str, Any] = {"restartPolicy": restart_policy, "containers": []}
    if node_name:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node_name}
        if behaviour in ("failOnce", "notTerminateOnce", "failOncePerIndex", "notTerminateOncePerIndex"):
            assert host_dir is not None, "a hostPath behaviour needs host_dir"
            host_dir.mkdir(parents=True, exist_ok=True)
            volume = {"name": "data", "hostPath": {"path": str(host_dir), "type": "DirectoryOrCreate"}}
            data = str(host_dir)
    if behaviour in ("notTerminateOnce", "notTerminateOncePerIndex"):
        spec["terminationGracePeriodSeconds"] = 1
    command = BEHAVIOURS.get(behaviour, "exit 0").format(data=data)
    spec["volumes"] = [volume]
    spec["containers"] = [
        {
            "name": "c",
            "image": "busybox",
            "command": ["/bin/sh", "-c", command],
            "volumeMounts": [{"mountPath": "/data", "name": "data"}],
        }
    ]
    job_spec: dict[str, Any] = {
        "parallelism": parallelism,
        "completions": completions,
        "backoffLimit": backoff_limit,
        "manualSelector": False,
        "template": {"metadata": {"labels": {JOB_SELECTOR_KEY: name}}, "spec": spec},
    }
    if active_deadline_seconds is not None:
        job_spec["activeDeadlineSeconds"] = active_deadline_seconds
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": job_spec}


def until(probe: Callable[[], T | bool | None], what: str, timeout: float = TIMEOUT) -> T:
    """wait.PollUntilContextTimeout: poll `probe` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last  # type: ignore[return-value]
        time.sleep(POLL)
    raise AssertionError(f"timed out waiting for {what}")


def get_job(c: Cluster, ns: str, name: str) -> k8s.V1Job:
    job: k8s.V1Job = c.batch.read_namespaced_job(name, ns)
    return job


def get_job_pods(c: Cluster, ns: str, name: str) -> list[k8s.V1Pod]:
    pods: list[k8s.V1Pod] = c.core.list_namespaced_pod(ns, label_selector=f"{JOB_SELECTOR_KEY}={name}").items
    return pods


def running_pods(c: Cluster, ns: str, name: str) -> list[k8s.V1Pod]:
    """GetAllRunningJobPods."""
    return [p for p in get_job_pods(c, ns, name) if p.status.phase == "Running"]


def has_condition(job: k8s.V1Job, kind: str, reason: str | None) -> bool:
    return any(
        c.type == kind and c.status == "True" and (reason is None or c.reason == reason)
        for c in job.status.conditions or []
    )


def wait_for_job_condition(c: Cluster, ns: str, name: str, kind: str, reason: str | None) -> k8s.V1Job:
    """WaitForJobCondition: a True condition of the type, with the reason unless it is None."""

    def probe() -> k8s.V1Job | None:
        job = get_job(c, ns, name)
        return job if has_condition(job, kind, reason) else None

    return until(probe, f"{kind} {reason}")


def wait_for_job_complete(c: Cluster, ns: str, name: str, reason: str, completions: int) -> k8s.V1Job:
    """WaitForJobComplete: status.succeeded reaches `completions`, then Complete with `reason`."""
    until(lambda: get_job(c, ns, name).status.succeeded == completions, f"{completions} succeeded")
    return wait_for_job_condition(c, ns, name, "Complete", reason)


def wait_for_job_failed(c: Cluster, ns: str, name: str) -> k8s.V1Job:
    return wait_for_job_condition(c, ns, name, "Failed", None)


def wait_for_job_pods_running(c: Cluster, ns: str, name: str, count: int) -> None:
    until(lambda: len(running_pods(c, ns, name)) == count, f"{count} running pods")


def wait_for_job_pods_succeeded(c: Cluster, ns: str, name: str, count: int) -> None:
    def succeeded() -> bool:
        return sum(p.status.phase == "Succeeded" for p in get_job_pods(c, ns, name)) == count

    until(succeeded, f"{count} succeeded pods")


def wait_for_job_ready(c: Cluster, ns: str, name: str, ready: int) -> None:
    until(lambda: get_job(c, ns, name).status.ready == ready, f"status.ready {ready}")


def wait_for_all_job_pods_gone(c: Cluster, ns: str, name: str) -> None:
    until(lambda: not get_job_pods(c, ns, name), "every pod of the job gone")


def wait_for_pod_not_found(c: Cluster, ns: str, name: str) -> None:
    def gone() -> bool:
        try:
            c.core.read_namespaced_pod(name, ns)
        except ApiException as exc:
            return exc.status == 404
        return False

    until(gone, f"pod {name} deleted")


def delete_job_and_wait_for_gc(c: Cluster, ns: str, name: str) -> None:
    """e2eresource.DeleteResourceAndWaitForGC: delete in the background, then wait for the Job's pods to go."""
    c.batch.delete_namespaced_job(name, ns, propagation_policy="Background")
    wait_for_all_job_pods_gone(c, ns, name)


def create_job(c: Cluster, ns: str, job: dict[str, Any]) -> k8s.V1Job:
    created: k8s.V1Job = c.batch.create_namespaced_job(ns, job)
    return created


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


def update_job_suspend(c: Cluster, ns: str, name: str, suspend: bool) -> k8s.V1Job:
    def update() -> k8s.V1Job:
        job = get_job(c, ns, name)
        job.spec.suspend = suspend
        updated: k8s.V1Job = c.batch.replace_namespaced_job(name, ns, job)
        return updated

    return retry_on_conflict(update)


def node_name(c: Cluster) -> str:
    """GetRandomReadySchedulableNode."""
    for node in c.core.list_node().items:
        ready = any(x.type == "Ready" and x.status == "True" for x in node.status.conditions or [])
        if ready and not node.spec.unschedulable:
            name: str = node.metadata.name
            return name
    raise AssertionError("no ready schedulable node")


def assert_final_counts(job: k8s.V1Job) -> None:
    """'Verifying the Job status fields to ensure correct final state'."""
    assert job.status.active in (0, None)  # the Go client reads an omitted int32 as 0
    assert job.status.ready == 0
    assert job.status.terminating == 0


def pod_failure_policy(*rules: dict[str, Any]) -> dict[str, Any]:
    return {"rules": list(rules)}


def on_exit_codes(action: str, *values: int, container: str | None = None) -> dict[str, Any]:
    requirement: dict[str, Any] = {"operator": "In", "values": list(values)}
    if container is not None:
        requirement["containerName"] = container
    return {"action": action, "onExitCodes": requirement}


DISRUPTION_TARGET = {"type": "DisruptionTarget", "status": "True"}


# --- the Its of test/e2e/apps/job.go, in its order ----------------------------------------------------------------


def test_should_run_a_job_to_completion_when_tasks_succeed(cluster: Cluster, ns: str) -> None:
    job = create_job(cluster, ns, new_test_job("succeed", "all-succeed", "Never", 2, 4, None, 6))
    wait_for_job_complete(cluster, ns, job.metadata.name, "CompletionsReached", 4)
    pods = get_job_pods(cluster, ns, job.metadata.name)
    assert sum(p.status.phase == "Succeeded" for p in pods) == 4


def test_should_allow_to_use_the_pod_failure_policy_on_exit_code_to_fail_the_job_early(
    cluster: Cluster, ns: str
) -> None:
    node = node_name(cluster)
    manifest = new_test_job("failOnce", "pod-failure-failjob", "Never", 2, 4, None, 6, node, host_dir=cluster.root / ns)
    manifest["spec"]["podFailurePolicy"] = pod_failure_policy(on_exit_codes("FailJob", 1))
    job = create_job(cluster, ns, manifest)
    # job.go before 1.31 also awaited the interim FailureTarget condition with reason PodFailurePolicy
    wait_for_job_condition(cluster, ns, job.metadata.name, "FailureTarget", "PodFailurePolicy")
    wait_for_job_failed(cluster, ns, job.metadata.name)


def test_should_allow_to_use_the_pod_failure_policy_to_not_count_the_failure_towards_the_backoff_limit(
    cluster: Cluster, ns: str
) -> None:
    """An It of job.go up to 1.30 (replaced by the per-index one below)."""
    node = node_name(cluster)
    manifest = new_test_job("failOnce", "pod-failure-ignore", "Never", 2, 4, None, 0, node, host_dir=cluster.root / ns)
    manifest["spec"]["podFailurePolicy"] = pod_failure_policy(on_exit_codes("Ignore", 1))
    job = create_job(cluster, ns, manifest)
    wait_for_job_condition(cluster, ns, job.metadata.name, "SuccessCriteriaMet", "CompletionsReached")
    wait_for_job_complete(cluster, ns, job.metadata.name, "CompletionsReached", 4)


def test_should_allow_to_use_a_pod_failure_policy_to_ignore_failure_matching_on_exit_code(
    cluster: Cluster, ns: str
) -> None:
    node = node_name(cluster)
    name = "fail-pod-ignore-on-exit-code"
    manifest = new_test_job("failOncePerIndex", name, "Never", 3, 3, None, 2, node, host_dir=cluster.root / ns)
    manifest["spec"]["completionMode"] = "Indexed"
    manifest["spec"]["podFailurePolicy"] = pod_failure_policy(on_exit_codes("Ignore", 42))
    job = create_job(cluster, ns, manifest)
    wait_for_job_complete(cluster, ns, job.metadata.name, "CompletionsReached", 3)


def _evict(c: Cluster, pod: k8s.V1Pod) -> None:
    body = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": pod.metadata.name, "namespace": pod.metadata.namespace},
    }
    c.core.create_namespaced_pod_eviction(pod.metadata.name, pod.metadata.namespace, body)
    wait_for_pod_not_found(c, pod.metadata.namespace, pod.metadata.name)


def test_should_allow_to_use_a_pod_failure_policy_to_ignore_failure_matching_on_disruption_target_condition(
    cluster: Cluster, ns: str
) -> None:
    node = node_name(cluster)
    name = "evicted-pod-ignore-on-disruption-condition"
    manifest = new_test_job("notTerminateOncePerIndex", name, "Never", 3, 3, None, 2, node, host_dir=cluster.root / ns)
    manifest["spec"]["completionMode"] = "Indexed"
    manifest["spec"]["podFailurePolicy"] = pod_failure_policy(
        {"action": "Ignore", "onPodConditions": [DISRUPTION_TARGET]}
    )
    job = create_job(cluster, ns, manifest)
    wait_for_job_ready(cluster, ns, name, 3)
    pods = running_pods(cluster, ns, name)
    assert len(pods) == 3, "Number of running pods doesn't match parallelism"
    # A pod is Ready once its process is spawned: on a busy machine its `sh` may not have made its index's marker
    # yet, and evicted before, the index's next pod would run for ever too. Kubernetes' test relies on the
    # container being far along by the time its Ready is seen; here the markers are waited for.
    markers = [cluster.root / ns / f"foo-{index}" for index in range(3)]
    until(lambda: all(marker.exists() for marker in markers), "each index's first pod made its marker")
    for pod in pods:
        _evict(cluster, pod)
    wait_for_job_complete(cluster, ns, job.metadata.name, "CompletionsReached", 3)


@pytest.mark.parametrize("matching", ["exit code", "DisruptionTarget condition"])
def test_should_allow_to_use_a_pod_failure_policy_to_ignore_failure_for_an_evicted_pod(
    cluster: Cluster, ns: str, matching: str
) -> None:
    """The two Its of job.go up to 1.30: '...for an evicted pod; matching on the exit code' and '...; matching
    on the DisruptionTarget condition' (index 0 runs until evicted, the others fail until its marker exists)."""
    node = node_name(cluster)
    name = "evicted-pod-ignore"
    manifest = new_test_job("notTerminateOnce", name, "Never", 2, 4, None, 0, node, host_dir=cluster.root / ns)
    manifest["spec"]["completionMode"] = "Indexed"
    if matching == "exit code":
        rules = [on_exit_codes("Ignore", 1, 137)]  # 137: the pod killed at the end of its grace period
    else:
        rules = [on_exit_codes("Ignore", 1), {"action": "Ignore", "onPodConditions": [DISRUPTION_TARGET]}]
    manifest["spec"]["podFailurePolicy"] = pod_failure_policy(*rules)
    create_job(cluster, ns, manifest)
    wait_for_job_pods_succeeded(cluster, ns, name, 3)
    wait_for_job_pods_running(cluster, ns, name, 1)
    pods = running_pods(cluster, ns, name)
    assert len(pods) == 1, "Exactly one running pod is expected"
    _evict(cluster, pods[0])
    wait_for_job_condition(cluster, ns, name, "SuccessCriteriaMet", "CompletionsReached")
    wait_for_job_complete(cluster, ns, name, "CompletionsReached", 4)


def test_should_not_create_pods_when_created_in_suspend_state(cluster: Cluster, ns: str) -> None:
    manifest = new_test_job("succeed", "suspend-true-to-false", "Never", 2, 4, None, 6)
    manifest["spec"]["suspend"] = True
    job = create_job(cluster, ns, manifest)
    name = job.metadata.name
    wait_for_job_condition(cluster, ns, name, "Suspended", None)
    assert get_job_pods(cluster, ns, name) == []
    job = get_job(cluster, ns, name)
    job.spec.suspend = False
    cluster.batch.replace_namespaced_job(name, ns, job)
    wait_for_job_complete(cluster, ns, name, "CompletionsReached", 4)


def test_should_delete_pods_when_suspended(cluster: Cluster, ns: str) -> None:
    manifest = new_test_job("notTerminate", "suspend-false-to-true", "Never", 2, 4, None, 6)
    manifest["spec"]["suspend"] = False
    # The suspension deletes the pods as soon as they run: a SIGTERM that comes before the shell has set its trap
    # is dropped (PID 1 without a handler), and the pod runs out its grace period (pause has its handler from its
    # first instruction). 1 s, not the default 30 s.
    manifest["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 1
    name = create_job(cluster, ns, manifest).metadata.name
    wait_for_job_pods_running(cluster, ns, name, 2)
    update_job_suspend(cluster, ns, name, True)
    wait_for_all_job_pods_gone(cluster, ns, name)
    job = get_job(cluster, ns, name)
    assert any(c.type == "Suspended" for c in job.status.conditions or []), "Job was expected to be suspended"


def test_should_recreate_pods_only_after_they_have_failed_if_pod_replacement_policy_is_set_to_failed(
    cluster: Cluster, ns: str
) -> None:
    manifest = new_test_job("", "pod-recreate-failed", "Never", 1, 1, None, 1)
    manifest["spec"]["podReplacementPolicy"] = "Failed"
    # Kubernetes' handler sleeps 5 s, the time the test has to see the terminating pod. Here the handler exits
    # once the test has seen it (it makes `released`), and the pod is deleted only once its trap is set (it
    # makes `trapped`: a pod is Running once its process is spawned, and its `sh` may not have got that far on a
    # busy machine, when SIGTERM would end it at once). No time budget races the machine's speed.
    files = cluster.root / ns
    files.mkdir(parents=True, exist_ok=True)
    trapped, released = files / "trapped", files / "released"
    command = (
        f"_term(){{\n\twhile [ ! -e {released} ]; do sleep 0.1; done\n\texit 143\n}}\ntrap _term TERM\n"
        f"touch {trapped}\nwhile true; do\n\tsleep 1\ndone"
    )
    manifest["spec"]["template"]["spec"]["containers"][0]["command"] = ["/bin/sh", "-c", command]
    name = create_job(cluster, ns, manifest).metadata.name
    wait_for_job_pods_running(cluster, ns, name, 1)
    until(trapped.exists, "the pod's TERM trap set")
    for pod in get_job_pods(cluster, ns, name):
        cluster.core.delete_namespaced_pod(pod.metadata.name, ns, grace_period_seconds=30)

    def counts() -> tuple[int, int, int | None]:
        status = get_job(cluster, ns, name).status
        return status.active or 0, status.failed or 0, status.terminating

    until(lambda: counts() == (0, 0, 1), "0 active, 0 failed, 1 terminating")
    released.touch()
    until(lambda: counts() == (1, 1, 0), "1 active, 1 failed, 0 terminating")


def test_should_create_pods_for_an_indexed_job_with_completion_indexes_and_specified_hostname(
    cluster: Cluster, ns: str
) -> None:
    manifest = new_test_job("succeed", "indexed-job", "Never", 2, 4, None, 6)
    manifest["spec"]["completionMode"] = "Indexed"
    name = create_job(cluster, ns, manifest).metadata.name
    wait_for_job_complete(cluster, ns, name, "CompletionsReached", 4)
    indexes = set()
    for pod in get_job_pods(cluster, ns, name):
        if pod.status.phase == "Succeeded" and pod.metadata.annotations:
            index = int(pod.metadata.annotations[COMPLETION_INDEX])
            indexes.add(index)
            assert pod.spec.hostname == f"{name}-{index}"
    assert sorted(indexes) == [0, 1, 2, 3]


def test_should_create_pods_with_completion_indexes_for_an_indexed_job(cluster: Cluster, ns: str) -> None:
    manifest = new_test_job("succeed", "indexed-job", "Never", 2, 4, None, 6)
    manifest["spec"]["completionMode"] = "Indexed"
    name = create_job(cluster, ns, manifest).metadata.name
    wait_for_job_complete(cluster, ns, name, "CompletionsReached", 4)
    indexes = {int(pod.metadata.labels[COMPLETION_INDEX]) for pod in get_job_pods(cluster, ns, name)}
    assert sorted(indexes) == [0, 1, 2, 3]


def test_with_success_policy_should_succeeded_when_all_indexes_succeeded(cluster: Cluster, ns: str) -> None:
    manifest = new_test_job("succeeded", "with-success-policy-all-index-succeeded", "Never", 2, 2, None, 6)
    manifest["spec"]["completionMode"] = "Indexed"
    manifest["spec"]["successPolicy"] = {"rules": [{"succeededCount": 2}]}
    name = create_job(cluster, ns, manifest).metadata.name
    wait_for_job_condition(cluster, ns, name, "SuccessCriteriaMet", "SuccessPolicy")
    wait_for_job_complete(cluster, ns, name, "SuccessPolicy", 2)
    job = get_job(cluster, ns, name)
    assert_final_counts(job)
    assert job.status.failed in (0, None)


@pytest.mark.parametrize(
    "rule", [{"succeededIndexes": "0"}, {"succeededCount": 1}], ids=["succeededIndexes", "succeededCount"]
)
def test_with_success_policy_rule_should_succeeded_even_when_some_indexes_remain_pending(
    cluster: Cluster, ns: str, rule: dict[str, Any]
) -> None:
    """'with successPolicy succeededIndexes rule ...' and 'with successPolicy succeededCount rule ...' (the latter
    with backoffLimit MaxInt32)."""
    backoff_limit = 6 if "succeededIndexes" in rule else 2**31 - 1
    manifest = new_test_job("failOddSucceedEven", "with-success-policy", "Never", 2, 5, None, backoff_limit)
    manifest["spec"]["completionMode"] = "Indexed"
    manifest["spec"]["successPolicy"] = {"rules": [rule]}
    name = create_job(cluster, ns, manifest).metadata.name
    wait_for_job_condition(cluster, ns, name, "SuccessCriteriaMet", "SuccessPolicy")
    wait_for_job_complete(cluster, ns, name, "SuccessPolicy", 1)
    job = get_job(cluster, ns, name)
    assert job.status.completed_indexes == "0"
    assert_final_counts(job)


def test_should_execute_all_indexes_despite_some_failing_when_using_backoff_limit_per_index(
    cluster: Cluster, ns: str
) -> None:
    manifest = new_test_job("failOddSucceedEven", "with-backoff-limit-per-index", "Never", 2, 4, None, 6)
    del manifest["spec"]["backoffLimit"]
    manifest["spec"]["backoffLimitPerIndex"] = 1
    manifest["spec"]["completionMode"] = "Indexed"
    name = create_job(cluster, ns, manifest).metadata.name
    wait_for_job_condition(cluster, ns, name, "FailureTarget", "FailedIndexes")  # job.go before 1.33 awaited it
    wait_for_job_failed(cluster, ns, name)
    job = get_job(cluster, ns, name)
    assert job.status.failed_indexes == "1,3"
    assert job.status.completed_indexes == "0,2"
    assert job.status.failed == 4
    assert job.status.succeeded == 2


def test_should_terminate_job_execution_when_the_number_of_failed_indexes_exceeds_max_failed_indexes(
    cluster: Cluster, ns: str
) -> None:
    manifest = new_test_job("fail", "with-max-failed-indexes", "Never", 1, 4, None, 6)
    del manifest["spec"]["backoffLimit"]
    manifest["spec"].update(backoffLimitPerIndex=0, maxFailedIndexes=0, completionMode="Indexed")
    name = create_job(cluster, ns, manifest).metadata.name
    wait_for_job_condition(cluster, ns, name, "FailureTarget", "MaxFailedIndexesExceeded")
    wait_for_job_failed(cluster, ns, name)
    job = get_job(cluster, ns, name)
    assert job.status.failed_indexes == "0"
    assert job.status.failed == 1


def test_should_record_the_failure_count_in_the_pod_annotation_when_using_backoff_limit_per_index(
    cluster: Cluster, ns: str
) -> None:
    name = f"e2e-backofflimitperindex-{secrets.token_hex(3)[:5]}"
    manifest = new_test_job("fail", name, "Never", 2, 2, None, 6)
    del manifest["spec"]["backoffLimit"]
    manifest["spec"].update(backoffLimitPerIndex=1, completionMode="Indexed")
    # NewIndexedPodAnnotationTracker: every pod seen by a watch, its failure-count annotation by index
    watcher = k8s_watch.Watch()
    seen: dict[str, tuple[int, str]] = {}
    listed = cluster.core.list_namespaced_pod(ns, label_selector=f"batch.kubernetes.io/job-name={name}")
    create_job(cluster, ns, manifest)
    wait_for_job_failed(cluster, ns, name)

    def tracked() -> dict[int, list[str]] | None:
        stream = watcher.stream(
            cluster.core.list_namespaced_pod,
            ns,
            label_selector=f"batch.kubernetes.io/job-name={name}",
            resource_version=listed.metadata.resource_version,
            timeout_seconds=1,
        )
        for event in stream:
            pod = event["object"]
            annotations = pod.metadata.annotations or {}
            seen[pod.metadata.uid] = (int(annotations[COMPLETION_INDEX]), annotations[FAILURE_COUNT])
        by_index: dict[int, list[str]] = {}
        for index, count in seen.values():
            by_index.setdefault(index, []).append(count)
        found = {index: sorted(counts) for index, counts in by_index.items()}
        return found if found == {0: ["0", "1"], 1: ["0", "1"]} else None

    until(tracked, "the failure-count annotations", timeout=15)
    job = get_job(cluster, ns, name)
    assert job.status.failed_indexes == "0,1"
    assert job.status.completed_indexes in ("", None)  # the Go client reads an omitted string as ""
    assert job.status.failed == 4
    assert job.status.succeeded in (0, None)


def test_should_mark_indexes_as_failed_when_the_fail_index_action_is_matched_in_pod_failure_policy(
    cluster: Cluster, ns: str
) -> None:
    manifest = new_test_job("failOddSucceedEven", "matching-fail-index-action", "Never", 2, 2, None, 6)
    del manifest["spec"]["backoffLimit"]
    manifest["spec"]["backoffLimitPerIndex"] = 1
    manifest["spec"]["podFailurePolicy"] = pod_failure_policy(on_exit_codes("FailIndex", 1))
    manifest["spec"]["completionMode"] = "Indexed"
    name = create_job(cluster, ns, manifest).metadata.name
    wait_for_job_condition(cluster, ns, name, "FailureTarget", "FailedIndexes")  # job.go before 1.33 awaited it
    wait_for_job_failed(cluster, ns, name)
    job = get_job(cluster, ns, name)
    assert job.status.failed_indexes == "1"
    assert job.status.completed_indexes == "0"
    assert job.status.failed == 1
    assert job.status.succeeded == 1


def test_should_remove_pods_when_job_is_deleted(cluster: Cluster, ns: str) -> None:
    name = create_job(
        cluster, ns, new_test_job("notTerminate", "all-pods-removed", "Never", 2, 4, None, 6)
    ).metadata.name
    wait_for_job_pods_running(cluster, ns, name, 2)
    delete_job_and_wait_for_gc(cluster, ns, name)
    wait_for_all_job_pods_gone(cluster, ns, name)


def test_should_run_a_job_to_completion_when_tasks_sometimes_fail_and_are_locally_restarted(
    cluster: Cluster, ns: str
) -> None:
    name = create_job(
        cluster, ns, new_test_job("failOnce", "fail-once-local", "OnFailure", 2, 4, None, 6)
    ).metadata.name
    wait_for_job_complete(cluster, ns, name, "CompletionsReached", 4)


def test_should_run_a_job_to_completion_when_tasks_sometimes_fail_and_are_not_locally_restarted(
    cluster: Cluster, ns: str
) -> None:
    node = node_name(cluster)
    manifest = new_test_job("failOnce", "fail-once-non-local", "Never", 2, 4, None, 6, node, host_dir=cluster.root / ns)
    name = create_job(cluster, ns, manifest).metadata.name
    wait_for_job_condition(cluster, ns, name, "SuccessCriteriaMet", "CompletionsReached")
    wait_for_job_complete(cluster, ns, name, "CompletionsReached", 4)
    assert_final_counts(get_job(cluster, ns, name))


def test_should_fail_when_exceeds_active_deadline(cluster: Cluster, ns: str) -> None:
    manifest = new_test_job("notTerminate", "exceed-active-deadline", "Never", 2, 4, 1, 6)
    name = create_job(cluster, ns, manifest).metadata.name
    wait_for_job_condition(cluster, ns, name, "FailureTarget", "DeadlineExceeded")
    wait_for_job_condition(cluster, ns, name, "Failed", "DeadlineExceeded")
    assert_final_counts(get_job(cluster, ns, name))


def test_should_delete_a_job(cluster: Cluster, ns: str) -> None:
    name = create_job(cluster, ns, new_test_job("notTerminate", "foo", "Never", 2, 4, None, 6)).metadata.name
    wait_for_job_pods_running(cluster, ns, name, 2)
    delete_job_and_wait_for_gc(cluster, ns, name)
    with pytest.raises(ApiException) as error:
        get_job(cluster, ns, name)
    assert error.value.status == 404


def _update_pod(c: Cluster, ns: str, name: str, mutate: Callable[[k8s.V1Pod], None]) -> None:
    """e2epod.PodClient.Update: get, mutate, update, retried on conflict."""

    def update() -> None:
        pod = c.core.read_namespaced_pod(name, ns)
        mutate(pod)
        c.core.replace_namespaced_pod(name, ns, pod)

    retry_on_conflict(update)


def test_should_adopt_matching_orphans_and_release_non_matching_pods(cluster: Cluster, ns: str) -> None:
    job = create_job(cluster, ns, new_test_job("notTerminate", "adopt-release", "Never", 2, 4, None, 6))
    name = job.metadata.name
    wait_for_job_pods_running(cluster, ns, name, 2)
    pods = get_job_pods(cluster, ns, name)
    assert len(pods) == 2
    pod_name = pods[0].metadata.name

    def drop_owners(pod: k8s.V1Pod) -> None:
        pod.metadata.owner_references = None

    _update_pod(cluster, ns, pod_name, drop_owners)

    def controller_of(pod: k8s.V1Pod) -> Any:
        return next((ref for ref in pod.metadata.owner_references or [] if ref.controller), None)

    def adopted() -> bool:
        ref = controller_of(cluster.core.read_namespaced_pod(pod_name, ns))
        if ref is None:
            return False
        assert (ref.kind, ref.name, ref.uid) == ("Job", name, job.metadata.uid), f"pod has wrong controllerRef: {ref}"
        return True

    until(adopted, f"pod {pod_name} to be readopted")

    def drop_labels(pod: k8s.V1Pod) -> None:
        pod.metadata.labels = None

    _update_pod(cluster, ns, pod_name, drop_labels)
    until(lambda: controller_of(cluster.core.read_namespaced_pod(pod_name, ns)) is None, f"pod {pod_name} released")


def test_should_fail_to_exceed_backoff_limit(cluster: Cluster, ns: str) -> None:
    backoff = 1
    name = create_job(cluster, ns, new_test_job("fail", "backofflimit", "Never", 1, 1, None, backoff)).metadata.name
    wait_for_job_condition(cluster, ns, name, "FailureTarget", "BackoffLimitExceeded")
    wait_for_job_condition(cluster, ns, name, "Failed", "BackoffLimitExceeded")
    pods = get_job_pods(cluster, ns, name)
    assert len(pods) == backoff + 1
    assert all(p.status.phase == "Failed" for p in pods)
    assert_final_counts(get_job(cluster, ns, name))


def test_should_run_a_job_to_completion_with_cpu_requests(cluster: Cluster, ns: str) -> None:
    """90 pods, each requesting a fifth of the node's allocatable CPU as an integer: on this 2-CPU node, as on any
    node of fewer than 5 CPUs in Kubernetes' run, that is "0"."""
    node = cluster.core.read_node(node_name(cluster))
    cpu = node.status.allocatable["cpu"]
    cores = int(cpu[:-1]) / 1000 if cpu.endswith("m") else float(cpu)
    cpu_request = str(int(0.2 * max(1, int(cores + 0.999))))  # Quantity.Value() rounds up; int64() truncates
    manifest = new_test_job("succeed", "all-succeed", "Never", 90, 90, None, 0)
    manifest["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu_request}}
    manifest["spec"]["template"]["spec"]["nodeSelector"] = {"kubernetes.io/hostname": node.metadata.name}
    name = create_job(cluster, ns, manifest).metadata.name
    wait_for_job_complete(cluster, ns, name, "CompletionsReached", 90)
    assert sum(p.status.phase == "Succeeded" for p in get_job_pods(cluster, ns, name)) == 90


def _rfc3339_now() -> datetime:
    """metav1.Now().Rfc3339Copy(): the wire keeps whole seconds."""
    return datetime.now(UTC).replace(microsecond=0)


def test_should_apply_changes_to_a_job_status(cluster: Cluster, ns: str) -> None:
    name = create_job(
        cluster, ns, new_test_job("notTerminate", "suspend-false-to-true", "Never", 2, 4, None, 6)
    ).metadata.name
    job_uid = get_job(cluster, ns, name).metadata.uid
    wait_for_job_pods_running(cluster, ns, name, 2)
    now1 = _rfc3339_now()
    condition = {
        "type": "CustomConditionType",
        "status": "True",
        "lastTransitionTime": now1.isoformat().replace("+00:00", "Z"),
    }
    patched = cluster.batch.patch_namespaced_job_status(
        name,
        ns,
        {"metadata": {"annotations": {"patchedstatus": "true"}}, "status": {"conditions": [condition]}},
        _content_type="application/merge-patch+json",
    )
    found = next((c for c in patched.status.conditions or [] if c.type == "CustomConditionType"), None)
    assert found is not None, "patched object does not have the required condition"
    assert found.last_transition_time == now1
    assert patched.metadata.annotations.get("patchedstatus") == "true"

    now2 = _rfc3339_now()

    def update() -> k8s.V1Job:
        job = get_job(cluster, ns, name)
        custom = next((c for c in job.status.conditions or [] if c.type == "CustomConditionType"), None)
        assert custom is not None, "patched object does not have the required condition"
        custom.last_transition_time = now2
        updated: k8s.V1Job = cluster.batch.replace_namespaced_job_status(name, ns, job)
        return updated

    updated = retry_on_conflict(update)
    found = next((c for c in updated.status.conditions or [] if c.type == "CustomConditionType"), None)
    assert found is not None and found.last_transition_time == now2

    # f.DynamicClient.Resource(jobs).Get(..., "status")
    from kubernetes.dynamic import DynamicClient

    jobs = DynamicClient(cluster.api).resources.get(api_version="batch/v1", kind="Job")
    status = jobs.subresources["status"].get(name=name, namespace=ns)
    assert status.metadata.uid == job_uid


def _wait_for_job_event(
    c: Cluster, ns: str, selector: str, resource_version: str, kind: str, check: Callable[[Any], bool]
) -> bool:
    """waitForJobEvent: watch from `resource_version` until an event of `kind` whose Job passes `check` (the Go
    test only logs a miss, as event delivery is not guaranteed; here a miss fails, as kjobs' watch delivers)."""
    watcher = k8s_watch.Watch()
    for event in watcher.stream(
        c.batch.list_namespaced_job, ns, label_selector=selector, resource_version=resource_version, timeout_seconds=5
    ):
        if event["type"] == kind and check(event["object"]):
            watcher.stop()
            return True
    return False


def test_should_manage_the_lifecycle_of_a_job(cluster: Cluster, ns: str) -> None:
    job_name = f"e2e-{secrets.token_hex(3)[:5]}"
    selector = f"e2e-job-label={job_name}"
    jobs_list = cluster.batch.list_namespaced_job(ns, label_selector=selector)
    manifest = new_test_job("succeed", job_name, "Never", 2, 4, None, 6)
    manifest["metadata"]["labels"] = {"e2e-job-label": job_name}
    manifest["spec"]["suspend"] = True
    job = create_job(cluster, ns, manifest)
    assert job.metadata.resource_version  # HaveValidResourceVersion

    patched = cluster.batch.patch_namespaced_job(
        job_name,
        ns,
        {"metadata": {"labels": {job_name: "patched"}}},
        _content_type="application/strategic-merge-patch+json",
    )
    assert int(job.metadata.resource_version) < int(patched.metadata.resource_version)
    assert _wait_for_job_event(
        cluster,
        ns,
        selector,
        jobs_list.metadata.resource_version,
        "MODIFIED",
        lambda j: (j.metadata.labels or {}).get(job_name) == "patched",
    )
    assert patched.metadata.labels[job_name] == "patched"

    def update() -> tuple[k8s.V1Job, k8s.V1Job]:
        current = get_job(cluster, ns, job_name)
        current.spec.suspend = False
        current.metadata.annotations = {**(current.metadata.annotations or {}), "updated": "true"}
        return current, cluster.batch.replace_namespaced_job(job_name, ns, current)

    before, updated = retry_on_conflict(update)
    assert _wait_for_job_event(
        cluster,
        ns,
        selector,
        before.metadata.resource_version,
        "MODIFIED",
        lambda j: (j.metadata.annotations or {}).get("updated") == "true",
    )
    assert updated.metadata.annotations["updated"] == "true"

    jobs = cluster.batch.list_job_for_all_namespaces(label_selector=selector)
    assert len(jobs.items) == 1

    wait_for_job_complete(cluster, ns, job_name, "CompletionsReached", 4)
    cluster.batch.delete_collection_namespaced_job(ns, label_selector=selector, propagation_policy="Background")
    assert _wait_for_job_event(
        cluster,
        ns,
        selector,
        updated.metadata.resource_version,
        "DELETED",
        lambda j: (j.metadata.labels or {}).get("e2e-job-label") == job_name,
    )
    assert cluster.batch.list_job_for_all_namespaces(label_selector=selector).items == []


def test_should_update_the_status_ready_field(cluster: Cluster, ns: str) -> None:
    manifest = new_test_job("notTerminate", "all-ready", "Never", 2, 4, None, 6)
    manifest["spec"]["suspend"] = True
    name = create_job(cluster, ns, manifest).metadata.name
    wait_for_job_ready(cluster, ns, name, 0)
    update_job_suspend(cluster, ns, name, False)
    wait_for_job_ready(cluster, ns, name, 2)
    update_job_suspend(cluster, ns, name, True)
    wait_for_job_ready(cluster, ns, name, 0)


def test_should_allow_to_delegate_reconciliation_to_external_controller(cluster: Cluster, ns: str) -> None:
    manifest = new_test_job("succeed", "managed-by", "Never", 2, 4, None, 6)
    manifest["spec"]["managedBy"] = "example.com/custom-job-controller"
    name = create_job(cluster, ns, manifest).metadata.name
    deadline = time.monotonic() + 3  # gomega.Consistently, polling every second for 3 s
    while time.monotonic() < deadline:
        status = get_job(cluster, ns, name).status
        assert status is None or all(value is None for value in status.to_dict().values()), status
        time.sleep(1)


def test_containers_restarted_by_container_restart_policy_should_not_trigger_pod_failure_policy(
    cluster: Cluster, ns: str
) -> None:
    node = node_name(cluster)
    manifest = new_test_job("failOnce", "managed-by", "Never", 1, 1, None, 1, node, host_dir=cluster.root / ns)
    manifest["spec"]["template"]["spec"]["containers"][0]["restartPolicy"] = "OnFailure"
    manifest["spec"]["podFailurePolicy"] = pod_failure_policy(on_exit_codes("FailJob", 1, container="c"))
    name = create_job(cluster, ns, manifest).metadata.name
    wait_for_job_complete(cluster, ns, name, "CompletionsReached", 1)
    job = get_job(cluster, ns, name)
    assert all(c.status == "True" for c in job.status.conditions or [] if c.type == "Complete")
    assert_final_counts(job)
