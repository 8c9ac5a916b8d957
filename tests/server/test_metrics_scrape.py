"""A scrape of a kjobs cluster's /metrics reads as one of kube-controller-manager: after Jobs ran, the text
(fetched with the official client, parsed with prometheus_client's parser) has Kubernetes' values, help texts
(with their stability level) and format, as test/integration/job/job_test.go's metric checks expect them."""

from __future__ import annotations

import re
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kjobs.api.types import Obj
from kjobs.node.sim_runtime import Outcome
from kjobs.testing import KjobsCluster

_first_pods: set[str] = set()


def first_pod_exits_10(pod: Obj, container: Obj, attempt: int) -> Outcome:
    """The first pod of Job `count` exits 10 (its Count rule), every other container exits 0 at once."""
    job = (pod["metadata"].get("labels") or {}).get("batch.kubernetes.io/job-name")
    if job == "count" and job not in _first_pods:
        _first_pods.add(job)
        return Outcome(exit_code=10)
    return Outcome()


def job(name: str, **spec: Any) -> Obj:
    container = {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", "true"]}
    template = {"spec": {"restartPolicy": "Never", "containers": [container]}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": {**spec, "template": template}}


# TestJobPodFailurePolicy's rules (test/integration/job/job_test.go)
POLICY = {
    "rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
        {"action": "Count", "onExitCodes": {"operator": "In", "values": [10]}},
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [5, 6, 7]}},
    ]
}


def scrape(cluster: KjobsCluster) -> str:
    """GET /metrics with the official client's credentials (`kubectl get --raw /metrics`)."""
    api = cluster.api_client
    method, url, headers, _, _ = api.param_serialize("GET", "/metrics", auth_settings=["BearerToken"])
    response = api.call_api(method, url, headers)
    response.read()
    assert response.status == 200
    assert response.getheader("Content-Type") == "text/plain; version=0.0.4; charset=utf-8"
    return str(response.data.decode())


@pytest.mark.kjobs(runtime="simulated", outcome=first_pod_exits_10)
def test_a_scrape_after_two_jobs_reads_as_kube_controller_managers(kjobs_cluster: KjobsCluster) -> None:
    kjobs_cluster.apply(job("count", podFailurePolicy=POLICY))
    kjobs_cluster.apply(job("indexed", completionMode="Indexed", completions=2, parallelism=2))
    kjobs_cluster.wait_for("job", "count", "Complete")
    kjobs_cluster.wait_for("job", "indexed", "Complete")
    text = scrape(kjobs_cluster)
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name.startswith("job_controller_")
    }

    def value(name: str, **labels: str) -> float | None:
        return samples.get((name, tuple(sorted(labels.items()))))

    # "pod status matching the configured Count rule on exit codes; pod failure counted"
    assert value("job_controller_jobs_finished_total", completion_mode="NonIndexed", result="succeeded",
                 reason="CompletionsReached") == 1  # fmt: skip
    assert value("job_controller_pod_failures_handled_by_failure_policy_total", action="Count") == 1
    assert value("job_controller_jobs_finished_total", completion_mode="Indexed", result="succeeded",
                 reason="CompletionsReached") == 1  # fmt: skip
    assert value("job_controller_job_finished_indexes_total", status="succeeded", backoffLimit="global") == 2
    # recordJobPodFinished adds to both series on every status write: a Job without failures shows failed 0
    assert value("job_controller_job_pods_finished_total", completion_mode="NonIndexed", result="succeeded") == 1
    assert value("job_controller_job_pods_finished_total", completion_mode="NonIndexed", result="failed") == 1
    assert value("job_controller_job_pods_finished_total", completion_mode="Indexed", result="succeeded") == 2
    assert value("job_controller_job_pods_finished_total", completion_mode="Indexed", result="failed") == 0
    # validateTerminatedPodsTrackingFinalizerMetric: each of the 4 pods finished with the finalizer, which went
    assert value("job_controller_terminated_pods_tracking_finalizer_total", event="add") == 4
    assert value("job_controller_terminated_pods_tracking_finalizer_total", event="delete") == 4
    # a podFailurePolicy defaults podReplacementPolicy to Failed: the replacement is `recreate_failed`
    assert value("job_controller_job_pods_creation_total", reason="new", status="succeeded") == 3
    assert value("job_controller_job_pods_creation_total", reason="recreate_failed", status="succeeded") == 1

    lines = text.splitlines()
    assert "# HELP job_controller_job_syncs_total [STABLE] The number of job syncs" in lines
    assert "# TYPE job_controller_job_syncs_total counter" in lines
    assert (
        "# HELP job_controller_terminated_pods_tracking_finalizer_total [BETA] The number of terminated pods "
        "(phase=Failed|Succeeded) that have the finalizer batch.kubernetes.io/job-tracking. The event label can be "
        '"add" or "delete".'
    ) in lines
    assert (
        "# HELP job_controller_job_finished_indexes_total [ALPHA] The number of finished indexes. Possible values for "
        'the\\n\t\t\tstatus label are: "succeeded", "failed". Possible values for the\\n\t\t\tbackoffLimit label are: '
        '"perIndex" and "global"'
    ) in lines
    # client_golang's text: no _created series, integers without ".0", `le` last, empty families left out
    assert not [line for line in lines if re.match(r"(# (HELP|TYPE) )?\w+_created[ {]", line)]
    assert (
        'job_controller_job_pods_finished_total{completion_mode="Indexed",result="failed"} 0' in lines
        and 'job_controller_job_finished_indexes_total{backoffLimit="global",status="succeeded"} 2' in lines
    )
    assert any(
        line.startswith('job_controller_job_sync_duration_seconds_bucket{action="pods_created",completion_mode="Indexed",'
                        'result="success",le="0.004"} ')
        for line in lines
    )  # fmt: skip
    assert "job_controller_jobs_by_external_controller_total" not in text
    families = [line.split()[2] for line in lines if line.startswith("# TYPE ")]
    assert families == sorted(families)
