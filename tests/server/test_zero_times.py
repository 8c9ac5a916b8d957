"""Unset non-pointer times read back as `null`, as a kube-apiserver writes a zero `metav1.Time`
(`kjobs.server.zerotimes`): a condition a client writes without `lastProbeTime` or `lastTransitionTime`, or with
`lastProbeTime: null` as the kubelet's status patches send it, in JSON and YAML."""

from __future__ import annotations

import httpx

from tests.server.conftest import job_manifest, pod_manifest

PODS = "/api/v1/namespaces/default/pods"
JOBS = "/apis/batch/v1/namespaces/default/jobs"
SMP = {"Content-Type": "application/strategic-merge-patch+json"}
MERGE = {"Content-Type": "application/merge-patch+json"}


def _condition(obj: dict[str, object], kind: str) -> dict[str, object]:
    status = obj["status"]
    assert isinstance(status, dict)
    found = [c for c in status["conditions"] if c["type"] == kind]
    assert len(found) == 1, status
    return dict(found[0])


def test_a_pod_condition_without_times_reads_back_with_nulls(http: httpx.Client) -> None:
    assert http.post(PODS, json=pod_manifest("zt1")).status_code == 201
    patch = {
        "status": {
            "conditions": [
                {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"},
                # the kubelet's way: a null in a strategic merge patch deletes, and Go writes the zero time back
                {
                    "type": "Ready",
                    "status": "False",
                    "lastProbeTime": None,
                    "lastTransitionTime": "2026-01-02T03:04:05Z",
                },
            ],
            "containerStatuses": [
                {
                    "name": "main",
                    "image": "busybox:1.36",
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "state": {"terminated": {"exitCode": 137, "reason": "ContainerStatusUnknown"}},
                    "lastState": {},
                }
            ],
        }
    }
    answer = http.patch(f"{PODS}/zt1/status", json=patch, headers=SMP)
    assert answer.status_code == 200, answer.text
    for pod in (answer.json(), http.get(f"{PODS}/zt1").json()):
        assert _condition(pod, "DisruptionTarget") == {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "EvictionByEvictionAPI",
            "lastProbeTime": None,
            "lastTransitionTime": None,
        }
        assert _condition(pod, "Ready")["lastProbeTime"] is None
        assert _condition(pod, "Ready")["lastTransitionTime"] == "2026-01-02T03:04:05Z"
        terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
        assert "startedAt" in terminated and terminated["startedAt"] is None and terminated["finishedAt"] is None
    as_yaml = http.get(f"{PODS}/zt1", headers={"Accept": "application/yaml"}).text
    assert "  - lastProbeTime: null\n    lastTransitionTime: null\n    reason: EvictionByEvictionAPI\n" in as_yaml


def test_job_and_node_conditions_written_without_times(http: httpx.Client) -> None:
    assert http.post(JOBS, json=job_manifest("zt2", suspend=True)).status_code == 201
    patch = {"status": {"conditions": [{"type": "Suspended", "status": "True", "reason": "JobSuspended"}]}}
    answer = http.patch(f"{JOBS}/zt2/status", json=patch, headers=MERGE)
    assert answer.status_code == 200, answer.text
    job = http.get(f"{JOBS}/zt2").json()
    assert _condition(job, "Suspended")["lastProbeTime"] is None
    assert _condition(job, "Suspended")["lastTransitionTime"] is None

    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "zt-node"}}
    assert http.post("/api/v1/nodes", json=node).status_code == 201
    ready = {"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
    assert http.patch("/api/v1/nodes/zt-node/status", json=ready, headers=SMP).status_code == 200
    condition = _condition(http.get("/api/v1/nodes/zt-node").json(), "Ready")
    assert condition["lastHeartbeatTime"] is None and condition["lastTransitionTime"] is None


def test_a_templates_metadata_reads_back_with_a_null_creation_timestamp(http: httpx.Client) -> None:
    """kube-apiserver 1.32 writes an embedded ObjectMeta's zero `creationTimestamp` as null, and a template's
    `metadata` (a non-pointer struct) even when the manifest has none; the creator owns the field."""
    job = job_manifest("zt3")
    del job["spec"]["template"]["metadata"]  # type: ignore[index]
    created = http.post(JOBS, json=job, headers={"Content-Type": "application/json"}, params={"fieldManager": "me"})
    assert created.status_code == 201, created.text
    read = http.get(f"{JOBS}/zt3").json()
    assert read["spec"]["template"]["metadata"]["creationTimestamp"] is None
    assert read["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "zt3"
    mine = [e for e in read["metadata"]["managedFields"] if e["manager"] == "me"]
    assert mine[0]["fieldsV1"]["f:spec"]["f:template"]["f:metadata"] == {"f:creationTimestamp": {}}
    assert isinstance(read["metadata"]["creationTimestamp"], str)  # the object's own is the server's
    # Removing it changes nothing: Go decodes the zero time again.
    remove = [{"op": "remove", "path": "/spec/template/metadata/creationTimestamp"}]
    patched = http.patch(f"{JOBS}/zt3", json=remove, headers={"Content-Type": "application/json-patch+json"})
    assert patched.status_code == 200, patched.text
    assert patched.json()["metadata"]["resourceVersion"] == read["metadata"]["resourceVersion"]

    cronjob = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "zt4"},
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": job["spec"]["template"]}}},  # type: ignore[index]
    }
    assert http.post("/apis/batch/v1/namespaces/default/cronjobs", json=cronjob).status_code == 201
    spec = http.get("/apis/batch/v1/namespaces/default/cronjobs/zt4").json()["spec"]
    assert spec["jobTemplate"]["metadata"] == {"creationTimestamp": None}
    assert spec["jobTemplate"]["spec"]["template"]["metadata"] == {"creationTimestamp": None}
