"""The official `kubernetes` Python client (37.0.2) against the server, as a user would drive it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.server.conftest import Server, job_manifest, pod_manifest
from tests.support import python_client_config, shared_pki

NS = "default"


@pytest.fixture
def api(server: Server) -> Iterator[client.ApiClient]:
    config = python_client_config(server.url, server.pki)
    with client.ApiClient(config) as api_client:
        yield api_client


def _status(exc: pytest.ExceptionInfo[ApiException]) -> dict[str, Any]:
    body: dict[str, Any] = orjson.loads(exc.value.body)
    return body


def test_job_lifecycle(api: client.ApiClient) -> None:
    batch = client.BatchV1Api(api)
    created = batch.create_namespaced_job(NS, job_manifest("life"))
    assert created.metadata.uid and created.metadata.creation_timestamp
    assert created.metadata.generation == 1
    assert created.spec.backoff_limit == 6 and created.spec.completions == 1
    assert created.spec.selector.match_labels["batch.kubernetes.io/controller-uid"] == created.metadata.uid

    read = batch.read_namespaced_job("life", NS)
    assert read.metadata.resource_version == created.metadata.resource_version

    listed = batch.list_namespaced_job(NS, label_selector="app=t")
    assert [j.metadata.name for j in listed.items] == ["life"]
    assert batch.list_namespaced_job(NS, label_selector="app!=t").items == []

    read.metadata.labels["extra"] = "yes"
    replaced = batch.replace_namespaced_job("life", NS, read)
    assert replaced.metadata.labels["extra"] == "yes"
    assert replaced.metadata.generation == 1  # labels are not spec

    patched = batch.patch_namespaced_job("life", NS, {"spec": {"backoffLimit": 2}})
    assert patched.spec.backoff_limit == 2 and patched.metadata.generation == 2

    batch.delete_namespaced_job("life", NS, propagation_policy="Background")
    with pytest.raises(ApiException) as gone:
        batch.read_namespaced_job("life", NS)
    assert gone.value.status == 404
    assert _status(gone)["message"] == 'jobs.batch "life" not found'


def test_patch_job_status_merges_conditions_and_main_resource_ignores_status(api: client.ApiClient) -> None:
    batch = client.BatchV1Api(api)
    batch.create_namespaced_job(NS, job_manifest("st"))
    first = {"status": {"conditions": [{"type": "Audited", "status": "True"}], "succeeded": 1}}
    batch.patch_namespaced_job_status("st", NS, first)
    second = {"status": {"conditions": [{"type": "Checked", "status": "True", "reason": "R"}]}}
    job = batch.patch_namespaced_job_status("st", NS, second)
    assert sorted(c.type for c in job.status.conditions) == ["Audited", "Checked"]
    # spec changes through /status are ignored
    job = batch.patch_namespaced_job_status("st", NS, {"spec": {"backoffLimit": 1}})
    assert job.spec.backoff_limit == 6
    # status changes through the main resource are ignored, and nothing is written
    before = job.metadata.resource_version
    job = batch.patch_namespaced_job("st", NS, {"status": {"succeeded": 7}})
    assert job.status.succeeded == 1 and job.metadata.resource_version == before


def test_a_status_write_sets_labels_and_annotations_but_not_a_pods_owner_references(api: client.ApiClient) -> None:
    """test/e2e/apps/job.go "should apply changes to a job status" patches an annotation through /status: the
    status strategies keep the new object's metadata (a pod's ownerReferences excepted)."""
    batch, core = client.BatchV1Api(api), client.CoreV1Api(api)
    batch.create_namespaced_job(NS, job_manifest("meta"))
    patch = {"metadata": {"annotations": {"patchedstatus": "true"}}, "status": {"succeeded": 1}}
    job = batch.patch_namespaced_job_status("meta", NS, patch, _content_type="application/merge-patch+json")
    assert job.metadata.annotations["patchedstatus"] == "true" and job.status.succeeded == 1
    job.metadata.labels["via"] = "status"
    job = batch.replace_namespaced_job_status("meta", NS, job)
    assert job.metadata.labels["via"] == "status"
    assert batch.read_namespaced_job("meta", NS).metadata.annotations["patchedstatus"] == "true"

    pod = pod_manifest("owned")
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "meta", "uid": job.metadata.uid, "controller": True}
    pod["metadata"]["ownerReferences"] = [owner]
    core.create_namespaced_pod(NS, pod)
    patch = {"metadata": {"ownerReferences": None, "labels": {"seen": "yes"}}, "status": {"phase": "Running"}}
    written = core.patch_namespaced_pod_status("owned", NS, patch, _content_type="application/merge-patch+json")
    assert written.metadata.labels["seen"] == "yes"
    assert [r.uid for r in written.metadata.owner_references] == [job.metadata.uid]


def test_replace_with_stale_resource_version_conflicts(api: client.ApiClient) -> None:
    batch = client.BatchV1Api(api)
    batch.create_namespaced_job(NS, job_manifest("cf"))
    stale = batch.read_namespaced_job("cf", NS)
    batch.patch_namespaced_job("cf", NS, {"metadata": {"labels": {"touched": "yes"}}})
    with pytest.raises(ApiException) as conflict:
        batch.replace_namespaced_job("cf", NS, stale)
    assert conflict.value.status == 409
    assert _status(conflict)["message"] == (
        'Operation cannot be fulfilled on jobs.batch "cf": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


def test_replace_and_patch_with_resource_version_zero_are_unconditional(api: client.ApiClient) -> None:
    # The registry store writes unconditionally when the object's resourceVersion parses to 0, as when it is
    # absent (test/cmd/core.sh replaces a Node with `"resourceVersion": "0"`); kjobs answered 409 Conflict.
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map(NS, {"metadata": {"name": "rv0"}, "data": {"a": "1"}})
    core.patch_namespaced_config_map("rv0", NS, {"data": {"a": "2"}})
    replaced = core.replace_namespaced_config_map(
        "rv0", NS, {"metadata": {"name": "rv0", "resourceVersion": "0"}, "data": {"a": "3"}}
    )
    assert replaced.data == {"a": "3"} and replaced.metadata.resource_version not in ("0", None)
    unversioned = core.replace_namespaced_config_map("rv0", NS, {"metadata": {"name": "rv0"}, "data": {"a": "3b"}})
    assert unversioned.data == {"a": "3b"}  # none at all: the same (test/cmd/core.sh's `replace --raw`)
    patched = core.patch_namespaced_config_map("rv0", NS, {"metadata": {"resourceVersion": "0"}, "data": {"a": "4"}})
    assert patched.data == {"a": "4"}
    with pytest.raises(ApiException) as stale:
        core.patch_namespaced_config_map("rv0", NS, {"metadata": {"resourceVersion": "1"}, "data": {"a": "5"}})
    assert stale.value.status == 409


def test_create_twice_and_invalid(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_pod(NS, pod_manifest("twice"))
    with pytest.raises(ApiException) as exists:
        core.create_namespaced_pod(NS, pod_manifest("twice"))
    assert exists.value.status == 409 and _status(exists)["reason"] == "AlreadyExists"
    nameless = pod_manifest("")
    with pytest.raises(ApiException) as bad:
        core.create_namespaced_pod(NS, nameless)
    status = _status(bad)
    assert bad.value.status == 422 and status["reason"] == "Invalid"
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value: name or generateName is required",
            "field": "metadata.name",
        }
    ]


def test_invalid_job_reports_causes_as_kubernetes_does(api: client.ApiClient) -> None:
    job = job_manifest("bad")
    job["spec"]["template"]["spec"]["restartPolicy"] = "Always"  # type: ignore[index]
    with pytest.raises(ApiException) as bad:
        client.BatchV1Api(api).create_namespaced_job(NS, job)
    status = _status(bad)
    assert bad.value.status == 422
    assert status["details"]["kind"] == "Job" and status["details"]["group"] == "batch"
    fields = [c["field"] for c in status["details"]["causes"]]
    assert fields == ["spec.template.spec.restartPolicy"]
    assert status["message"].startswith('Job.batch "bad" is invalid: spec.template.spec.restartPolicy: ')


def test_generate_name_and_missing_namespace(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    body = pod_manifest("")
    body["metadata"] = {"generateName": "gen-"}  # type: ignore[index]
    pod = core.create_namespaced_pod(NS, body)
    assert pod.metadata.name.startswith("gen-") and len(pod.metadata.name) == 9
    assert pod.status.phase == "Pending" and pod.status.qos_class == "BestEffort"
    with pytest.raises(ApiException) as missing:
        core.create_namespaced_pod("nope", pod_manifest("p"))
    assert missing.value.status == 404 and _status(missing)["message"] == 'namespaces "nope" not found'


def test_pods_nodes_events_and_selectors(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    core.create_node(node)
    core.patch_node("n1", {"spec": {"unschedulable": True}})
    assert core.read_node("n1").spec.unschedulable is True
    core.patch_node("n1", {"spec": {"unschedulable": None}})
    assert core.read_node("n1").spec.unschedulable is None
    assert [n.metadata.name for n in core.list_node(field_selector="spec.unschedulable=false").items] == ["n1"]

    core.create_namespaced_pod(NS, pod_manifest("on-node", labels={"tier": "a"}, node="n1"))
    core.create_namespaced_pod(NS, pod_manifest("off-node", labels={"tier": "b"}))
    pod = core.read_namespaced_pod("on-node", NS)
    pod.status.phase = "Running"
    core.replace_namespaced_pod_status("on-node", NS, pod)
    running = core.list_namespaced_pod(NS, field_selector="status.phase=Running")
    assert [p.metadata.name for p in running.items] == ["on-node"]
    everywhere = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=n1,status.phase!=Succeeded")
    assert [p.metadata.name for p in everywhere.items] == ["on-node"]
    assert [p.metadata.name for p in core.list_namespaced_pod(NS, label_selector="tier in (b,c)").items] == ["off-node"]
    with pytest.raises(ApiException) as unsupported:
        core.list_namespaced_pod(NS, field_selector="spec.bogus=1")
    assert unsupported.value.status == 400
    assert _status(unsupported)["message"] == "field label not supported: spec.bogus"

    event = {
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Pod", "name": "on-node", "namespace": NS},
        "reason": "Scheduled",
        "message": "Successfully assigned",
        "type": "Normal",
        "source": {"component": "default-scheduler"},
    }
    core.create_namespaced_event(NS, event)
    found = core.list_namespaced_event(NS, field_selector="involvedObject.name=on-node,source=default-scheduler")
    assert [e.reason for e in found.items] == ["Scheduled"]
    core.delete_namespaced_event("e1", NS)
    assert core.list_namespaced_event(NS).items == []


def test_secrets_are_selected_by_type(api: client.ApiClient) -> None:
    """kube-apiserver indexes a Secret's `type` (pkg/registry/core/secret/strategy.go `SelectableFields`), so
    `kubectl get secrets --field-selector type=kubernetes.io/tls` lists the TLS ones; kjobs answered 400
    `field label not supported: type`. A Secret written without a type is `Opaque`."""
    core = client.CoreV1Api(api)
    core.create_namespaced_secret(NS, {"metadata": {"name": "plain"}, "stringData": {"a": "b"}})
    tls = {"metadata": {"name": "cert"}, "type": "kubernetes.io/tls", "stringData": {"tls.crt": "c", "tls.key": "k"}}
    core.create_namespaced_secret(NS, tls)
    for selector, names in (
        ("type=kubernetes.io/tls", ["cert"]),
        ("type!=kubernetes.io/tls", ["plain"]),
        ("type=Opaque,metadata.name=plain", ["plain"]),
    ):
        assert [s.metadata.name for s in core.list_namespaced_secret(NS, field_selector=selector).items] == names
    with pytest.raises(ApiException) as unsupported:
        core.list_namespaced_config_map(NS, field_selector="type=Opaque")
    assert _status(unsupported)["message"] == "field label not supported: type"


def test_pod_graceful_delete_and_finalize(server: Server, api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_pod(NS, pod_manifest("unbound"))
    core.delete_namespaced_pod("unbound", NS)
    with pytest.raises(ApiException):
        core.read_namespaced_pod("unbound", NS)  # unscheduled pods go at once

    core.create_namespaced_pod(NS, pod_manifest("bound", node="n1"))
    core.delete_namespaced_pod("bound", NS)
    pod = core.read_namespaced_pod("bound", NS)
    assert pod.metadata.deletion_timestamp is not None and pod.metadata.deletion_grace_period_seconds == 30

    core.delete_namespaced_pod("bound", NS, grace_period_seconds=0)
    with pytest.raises(ApiException):
        core.read_namespaced_pod("bound", NS)


def test_job_delete_cascades(server: Server, api: client.ApiClient) -> None:
    batch, core = client.BatchV1Api(api), client.CoreV1Api(api)
    for name, policy in (("bg", "Background"), ("orph", "Orphan")):
        job = batch.create_namespaced_job(NS, job_manifest(name))
        pod = pod_manifest(f"{name}-pod")
        pod["metadata"]["ownerReferences"] = [  # type: ignore[index]
            {"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": job.metadata.uid, "controller": True}
        ]
        core.create_namespaced_pod(NS, pod)
        batch.delete_namespaced_job(name, NS, propagation_policy=policy)
    names = [p.metadata.name for p in core.list_namespaced_pod(NS).items]
    assert names == ["orph-pod"]
    assert core.read_namespaced_pod("orph-pod", NS).metadata.owner_references is None


def test_an_orphaning_delete_answers_the_job_held_by_the_orphan_finalizer(
    server: Server, api: client.ApiClient
) -> None:
    """kube-apiserver answers a DELETE whose object the `orphan` finalizer holds with that object, 200, marked for
    deletion (registry/store.go `Delete` → `updateForGracefulDeletionAndFinalizers`, handlers/delete.go); the
    garbage collector then lets the pods go and removes the finalizer, and the Job is gone."""
    batch, core = client.BatchV1Api(api), client.CoreV1Api(api)
    job = batch.create_namespaced_job(NS, job_manifest("held"))
    pod = pod_manifest("held-pod")
    pod["metadata"]["ownerReferences"] = [  # type: ignore[index]
        {"apiVersion": "batch/v1", "kind": "Job", "name": "held", "uid": job.metadata.uid, "controller": True}
    ]
    core.create_namespaced_pod(NS, pod)
    dry = batch.delete_namespaced_job("held", NS, propagation_policy="Orphan", dry_run="All", _preload_content=False)
    assert orjson.loads(dry.data)["metadata"]["finalizers"] == ["orphan"]  # the answer the DELETE would give
    assert batch.read_namespaced_job("held", NS).metadata.finalizers is None  # nothing written
    response = batch.delete_namespaced_job("held", NS, propagation_policy="Orphan", _preload_content=False)
    answer = orjson.loads(response.data)
    assert (response.status, answer["kind"], answer["apiVersion"]) == (200, "Job", "batch/v1")
    assert answer["metadata"]["finalizers"] == ["orphan"]
    assert answer["metadata"]["deletionTimestamp"] and answer["metadata"]["deletionGracePeriodSeconds"] == 0
    with pytest.raises(ApiException) as gone:
        batch.read_namespaced_job("held", NS)
    assert gone.value.status == 404
    assert core.read_namespaced_pod("held-pod", NS).metadata.owner_references is None
    # the deprecated orphanDependents=true is the same policy; a ConfigMap (default Background) gets it too
    core.create_namespaced_config_map(NS, {"metadata": {"name": "cm"}})
    response = core.delete_namespaced_config_map("cm", NS, orphan_dependents=True, _preload_content=False)
    answer = orjson.loads(response.data)
    assert (response.status, answer["kind"], answer["metadata"]["finalizers"]) == (200, "ConfigMap", ["orphan"])
    # a Background DELETE of an object nothing holds is still answered with the Success Status
    core.create_namespaced_config_map(NS, {"metadata": {"name": "cm2"}})
    response = core.delete_namespaced_config_map("cm2", NS, propagation_policy="Background", _preload_content=False)
    answer = orjson.loads(response.data)
    assert (response.status, answer["kind"], answer["status"], answer["details"]["name"]) == (
        200,
        "Status",
        "Success",
        "cm2",
    )
    # what the client hands back: the Job as a dict (its delete methods return `object`), not an error
    batch.create_namespaced_job(NS, job_manifest("held2"))
    assert batch.delete_namespaced_job("held2", NS, propagation_policy="Orphan")["kind"] == "Job"


def test_eviction_and_binding(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_pod(NS, pod_manifest("ev"))
    # the apiserver answers a binding with a Success Status, which the 37.0.2 models cannot parse as a Binding
    response = core.create_namespaced_pod_binding(
        "ev",
        NS,
        {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "ev"}, "target": {"name": "n1"}},
        _preload_content=False,
    )
    assert response.status == 201 and orjson.loads(response.data)["status"] == "Success"
    assert core.read_namespaced_pod("ev", NS).spec.node_name == "n1"
    with pytest.raises(ApiException) as bound:
        core.create_namespaced_pod_binding(
            "ev", NS, {"metadata": {"name": "ev"}, "target": {"name": "n2"}}, _preload_content=False
        )
    assert bound.value.status == 409
    core.create_namespaced_pod_eviction(
        "ev", NS, {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "ev", "namespace": NS}}
    )
    pod = core.read_namespaced_pod("ev", NS)
    assert pod.metadata.deletion_timestamp is not None
    (target,) = [c for c in pod.status.conditions if c.type == "DisruptionTarget"]
    assert (target.status, target.reason, target.message) == ("True", "EvictionByEvictionAPI", "Eviction API: evicting")


def test_logs_before_start_are_a_kubelet_style_error(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_pod(NS, pod_manifest("lg", node="n1"))
    with pytest.raises(ApiException) as waiting:
        core.read_namespaced_pod_log("lg", NS)
    assert waiting.value.status == 400
    assert _status(waiting)["message"] == 'container "main" in pod "lg" is waiting to start: ContainerCreating'
    core.create_namespaced_pod(NS, pod_manifest("unscheduled"))  # no node: 204, no log
    assert core.read_namespaced_pod_log("unscheduled", NS) is None  # the client reads no body as None


def test_watch_streams_initial_and_later_events(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_pod(NS, pod_manifest("w1", labels={"w": "y"}))
    seen: list[tuple[str, str]] = []
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_pod, NS, label_selector="w=y", timeout_seconds=5):
        seen.append((event["type"], event["object"].metadata.name))
        if len(seen) == 1:
            core.create_namespaced_pod(NS, pod_manifest("w2", labels={"w": "y"}))
            core.patch_namespaced_pod("w2", NS, {"metadata": {"labels": {"w": "n"}}})
        if len(seen) == 3:
            w.stop()
    assert seen == [("ADDED", "w1"), ("ADDED", "w2"), ("DELETED", "w2")]


def test_watch_timeout_closes_the_stream(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    events = list(watch.Watch().stream(core.list_namespaced_pod, NS, timeout_seconds=1))
    assert events == []


def test_watch_after_410_relists_and_continues() -> None:
    store = MemoryStore(history_size=2)
    with serve(store, pki=shared_pki()) as url, client.ApiClient(python_client_config(url)) as api_client:
        core = client.CoreV1Api(api_client)
        listed = core.list_namespaced_pod(NS)
        for i in range(4):
            core.create_namespaced_pod(NS, pod_manifest(f"old-{i}"))
        with pytest.raises(ApiException) as expired:
            list(
                watch.Watch().stream(
                    core.list_namespaced_pod, NS, resource_version=listed.metadata.resource_version, timeout_seconds=2
                )
            )
        assert expired.value.status == 410
        # the client's recovery: list again and watch from the new revision
        fresh = core.list_namespaced_pod(NS)
        assert len(fresh.items) == 4
        core.create_namespaced_pod(NS, pod_manifest("new"))
        w = watch.Watch()
        got = []
        for event in w.stream(
            core.list_namespaced_pod, NS, resource_version=fresh.metadata.resource_version, timeout_seconds=5
        ):
            got.append((event["type"], event["object"].metadata.name))
            w.stop()
        assert got == [("ADDED", "new")]
    store.close()


def test_terminal_pod_with_finalizer_goes_when_the_finalizer_is_removed(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    pod = pod_manifest("tracked", node="n1")
    pod["metadata"]["finalizers"] = ["batch.kubernetes.io/job-tracking"]  # type: ignore[index]
    core.create_namespaced_pod(NS, pod)
    core.patch_namespaced_pod_status("tracked", NS, {"status": {"phase": "Succeeded"}})
    core.delete_namespaced_pod("tracked", NS)
    marked = core.read_namespaced_pod("tracked", NS)
    assert marked.metadata.deletion_timestamp is not None and marked.metadata.deletion_grace_period_seconds == 0
    core.patch_namespaced_pod(
        "tracked", NS, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["batch.kubernetes.io/job-tracking"]}}
    )
    with pytest.raises(ApiException) as gone:
        core.read_namespaced_pod("tracked", NS)
    assert gone.value.status == 404


def test_eviction_blocked_by_a_disruption_budget(api: client.ApiClient) -> None:
    core, policy = client.CoreV1Api(api), client.PolicyV1Api(api)
    core.create_namespaced_pod(NS, pod_manifest("guarded", labels={"app": "db"}, node="n1"))
    _run_ready(core, "guarded")
    policy.create_namespaced_pod_disruption_budget(
        NS,
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "db-pdb"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}},
        },
    )
    policy.patch_namespaced_pod_disruption_budget_status(
        "db-pdb",
        NS,
        {
            "status": {
                "disruptionsAllowed": 0,
                "currentHealthy": 1,
                "desiredHealthy": 1,
                "expectedPods": 1,
                "observedGeneration": 1,
            }
        },
    )
    with pytest.raises(ApiException) as blocked:
        core.create_namespaced_pod_eviction(
            "guarded",
            NS,
            {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "guarded", "namespace": NS}},
        )
    status = _status(blocked)
    assert blocked.value.status == 429 and "retry-after" not in {k.lower() for k in blocked.value.headers}
    assert status["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert status["details"]["causes"] == [
        {
            "reason": "DisruptionBudget",
            "message": "The disruption budget db-pdb needs 1 healthy pods and has 1 currently",
        }
    ]


def test_replace_and_delete_nodes_and_events(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "rn"}})
    node = core.read_node("rn")
    node.metadata.labels = {"zone": "a"}
    assert core.replace_node("rn", node).metadata.labels == {"zone": "a"}
    core.delete_node("rn")
    assert [n.metadata.name for n in core.list_node().items] == []

    event = {
        "metadata": {"name": "ev1"},
        "involvedObject": {"kind": "Job", "name": "j", "namespace": NS},
        "reason": "Started",
        "message": "m",
        "type": "Normal",
        "count": 1,
    }
    core.create_namespaced_event(NS, event)
    read = core.read_namespaced_event("ev1", NS)
    read.count = 2
    assert core.replace_namespaced_event("ev1", NS, read).count == 2
    assert core.patch_namespaced_event("ev1", NS, {"message": "m2"}).message == "m2"
    core.delete_namespaced_event("ev1", NS)
    with pytest.raises(ApiException) as gone:
        core.read_namespaced_event("ev1", NS)
    assert gone.value.status == 404


def test_foreground_delete_finishes_when_the_last_dependent_goes(api: client.ApiClient) -> None:
    batch, core = client.BatchV1Api(api), client.CoreV1Api(api)
    job = batch.create_namespaced_job(NS, job_manifest("fgd"))
    pod = pod_manifest("fgd-pod", node="n1")
    pod["metadata"]["ownerReferences"] = [  # type: ignore[index]
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": "fgd",
            "uid": job.metadata.uid,
            "controller": True,
            "blockOwnerDeletion": True,  # as the Job controller sets it: the pod holds the foreground deletion
        }
    ]
    core.create_namespaced_pod(NS, pod)
    batch.delete_namespaced_job("fgd", NS, propagation_policy="Foreground")
    marked = batch.read_namespaced_job("fgd", NS)
    assert marked.metadata.finalizers == ["foregroundDeletion"] and marked.metadata.deletion_timestamp
    assert core.read_namespaced_pod("fgd-pod", NS).metadata.deletion_timestamp  # dependents are being deleted
    core.delete_namespaced_pod("fgd-pod", NS, grace_period_seconds=0)  # what the node agent does at the end
    with pytest.raises(ApiException) as gone:
        batch.read_namespaced_job("fgd", NS)
    assert gone.value.status == 404


def test_binding_uid_is_a_precondition(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_pod(NS, pod_manifest("bu"))
    with pytest.raises(ApiException) as stale:
        core.create_namespaced_pod_binding(
            "bu", NS, {"metadata": {"name": "bu", "uid": "old-uid"}, "target": {"name": "n1"}}, _preload_content=False
        )
    assert (
        stale.value.status == 409 and "Precondition failed: UID in precondition: old-uid" in _status(stale)["message"]
    )
    assert core.read_namespaced_pod("bu", NS).spec.node_name is None


def test_paging_with_limit_and_continue(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    for i in range(5):
        core.create_namespaced_pod(NS, pod_manifest(f"pg-{i}", labels={"pg": "y"}))
    names: list[str] = []
    token = None
    pages = 0
    while True:
        page = core.list_namespaced_pod(NS, label_selector="pg=y", limit=2, _continue=token)
        names += [p.metadata.name for p in page.items]
        pages += 1
        token = page.metadata._continue
        if not token:
            break
    assert names == [f"pg-{i}" for i in range(5)] and pages == 3
    with pytest.raises(ApiException) as bad:
        core.list_namespaced_pod(NS, limit=2, _continue="not-a-token")
    assert bad.value.status == 400


def _run_ready(core: client.CoreV1Api, name: str, *, ready: bool = True) -> None:
    """Set the pod Running (and Ready), as its node agent would."""
    conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    core.patch_namespaced_pod_status(name, NS, {"status": {"phase": "Running", "conditions": conditions}})


def _budget(policy: client.PolicyV1Api, name: str, app: str, **status: Any) -> None:
    policy.create_namespaced_pod_disruption_budget(
        NS,
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": name},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": app}}},
        },
    )
    policy.patch_namespaced_pod_disruption_budget_status(name, NS, {"status": {"observedGeneration": 1, **status}})


def _evict(core: client.CoreV1Api, name: str) -> Any:
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": NS}}
    return core.create_namespaced_pod_eviction(name, NS, body, _preload_content=False)


def test_eviction_uses_up_the_budget_and_records_the_disrupted_pod(api: client.ApiClient) -> None:
    core, policy = client.CoreV1Api(api), client.PolicyV1Api(api)
    for name in ("w1", "w2"):
        core.create_namespaced_pod(NS, pod_manifest(name, labels={"app": "web"}, node="n1"))
        _run_ready(core, name)
    _budget(policy, "web-pdb", "web", disruptionsAllowed=1, currentHealthy=2, desiredHealthy=1, expectedPods=2)
    assert _evict(core, "w1").status == 201
    pdb = policy.read_namespaced_pod_disruption_budget("web-pdb", NS)
    assert pdb.status.disruptions_allowed == 0 and set(pdb.status.disrupted_pods) == {"w1"}
    with pytest.raises(ApiException) as second:
        _evict(core, "w2")  # the budget is used up until the disruption controller recomputes it
    assert second.value.status == 429


def test_eviction_of_an_unready_pod_and_budget_edge_cases(api: client.ApiClient) -> None:
    core, policy = client.CoreV1Api(api), client.PolicyV1Api(api)
    core.create_namespaced_pod(NS, pod_manifest("sick", labels={"app": "q"}, node="n1"))
    _run_ready(core, "sick", ready=False)
    _budget(policy, "q-pdb", "q", disruptionsAllowed=0, currentHealthy=1, desiredHealthy=1, expectedPods=2)
    assert _evict(core, "sick").status == 201  # unready, and the healthy ones satisfy the budget
    assert policy.read_namespaced_pod_disruption_budget("q-pdb", NS).status.disruptions_allowed == 0

    core.create_namespaced_pod(NS, pod_manifest("fresh", labels={"app": "r"}, node="n1"))
    _run_ready(core, "fresh")
    policy.create_namespaced_pod_disruption_budget(
        NS,
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "r-pdb"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "r"}}},
        },
    )  # never synced
    with pytest.raises(ApiException) as pending:
        _evict(core, "fresh")
    assert pending.value.status == 429 and pending.value.headers["Retry-After"] == "10"
    assert _status(pending)["details"]["causes"][0]["message"] == (
        "The disruption budget r-pdb is still being processed by the server."
    )

    _budget(policy, "r-pdb-2", "r", disruptionsAllowed=1)
    # eviction.go returns this refusal as a Status object, which the create handler writes with HTTP 201: the
    # Python client raises nothing (client-go reads the Status and fails), the body says Failure, code 500
    two = _evict(core, "fresh")
    assert two.status == 201
    assert orjson.loads(two.data) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        "code": 500,
    }
    assert core.read_namespaced_pod("fresh", NS).metadata.deletion_timestamp is None


def test_self_reviews(api: client.ApiClient) -> None:
    """What `kubectl auth whoami` / `can-i` ask, through the official client's typed APIs."""
    review = client.AuthenticationV1Api(api).create_self_subject_review(client.V1SelfSubjectReview())
    assert review.status.user_info.username == "kjobs-admin"
    attributes = client.V1ResourceAttributes(namespace="default", verb="create", group="batch", resource="jobs")
    body = client.V1SelfSubjectAccessReview(spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=attributes))
    answer = client.AuthorizationV1Api(api).create_self_subject_access_review(body)
    assert answer.status.allowed is True
    assert answer.spec.resource_attributes.resource == "jobs"


def test_namespaces_carry_their_name_label_and_the_kubernetes_finalizer(api: client.ApiClient) -> None:
    """Namespaces are selectable by name through `kubernetes.io/metadata.name`, the built-in ones included, and
    hold the `kubernetes` finalizer in their spec, as the apiserver's namespace strategy sets them."""
    core = client.CoreV1Api(api)
    created = core.create_namespace(
        {"metadata": {"generateName": "team-", "labels": {"kubernetes.io/metadata.name": "x"}}}
    )
    name = created.metadata.name
    assert created.metadata.labels == {"kubernetes.io/metadata.name": name}
    assert created.spec.finalizers == ["kubernetes"]
    created.metadata.labels = {"tier": "batch"}
    created.spec.finalizers = []
    replaced = core.replace_namespace(name, created)
    assert replaced.metadata.labels == {"tier": "batch", "kubernetes.io/metadata.name": name}
    assert replaced.spec.finalizers == ["kubernetes"]  # the spec changes only through /finalize
    by_label = core.list_namespace(label_selector="kubernetes.io/metadata.name in (default,kube-system)")
    assert [n.metadata.name for n in by_label.items] == ["default", "kube-system"]


def test_a_deleted_namespace_is_answered_terminating_and_refuses_new_content(api: client.ApiClient) -> None:
    """DELETE answers with the namespace Terminating (its watchers see that, then its removal once it is empty);
    while a finalizer holds it, creating in it is 403 `NamespaceTerminating`, as NamespaceLifecycle answers."""
    core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
    listed = core.list_namespace()
    for name, finalizers in (("short-lived", None), ("held", ["example.com/hold"])):
        core.create_namespace({"metadata": {"name": name, "finalizers": finalizers}})
        batch.create_namespaced_job(name, job_manifest("j"))
        answer = api.call_api("DELETE", f"{api.configuration.host}/api/v1/namespaces/{name}")
        answer.read()
        body = orjson.loads(answer.data)
        assert (answer.status, body["kind"], body["status"]["phase"]) == (200, "Namespace", "Terminating")
        assert body["metadata"]["deletionTimestamp"]
        assert batch.list_namespaced_job(name).items == []  # emptied before the answer
    with pytest.raises(ApiException) as refused:
        batch.create_namespaced_job("held", job_manifest("late"))
    status = _status(refused)
    assert (refused.value.status, status["reason"]) == (403, "Forbidden")
    assert status["message"] == (
        'jobs.batch "late" is forbidden: unable to create new content in namespace held because it is being terminated'
    )
    assert status["details"]["causes"] == [
        {
            "reason": "NamespaceTerminating",
            "message": "namespace held is being terminated",
            "field": "metadata.namespace",
        }
    ]
    events = [
        (e["type"], e["object"].metadata.name, e["object"].status.phase)
        for e in watch.Watch().stream(
            core.list_namespace, resource_version=listed.metadata.resource_version, timeout_seconds=1
        )
    ]
    assert [e for e in events if e[1] == "short-lived"] == [
        ("ADDED", "short-lived", "Active"),
        ("MODIFIED", "short-lived", "Terminating"),
        ("DELETED", "short-lived", "Terminating"),
    ]
    assert core.read_namespace("held").status.phase == "Terminating"


def test_a_file_name_that_is_not_utf8_is_stored_as_a_cluster_stores_it(api: client.ApiClient) -> None:
    """A name `os.listdir` decoded with `surrogateescape` (here the byte 0xff) reaches the API as the escape
    `\\udcff` (the client's `json.dumps`); kube-apiserver's decoder stores U+FFFD for it (`kjobs.server.gojson`)."""
    name = b"report-\xff.csv".decode("utf-8", "surrogateescape")
    core = client.CoreV1Api(api)
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="files", annotations={"source": name}))
    created = core.create_namespaced_config_map("default", body)
    assert created.metadata.annotations == {"source": "report-\ufffd.csv"}
    assert core.read_namespaced_config_map("files", "default").metadata.annotations["source"] == "report-\ufffd.csv"
