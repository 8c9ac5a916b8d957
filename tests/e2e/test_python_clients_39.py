"""Third-party Python clients against `kjobs up` where stop 39 found kjobs answering otherwise than a v1.32 API
server (docs/clients-stop39.md): times written back as the official client serializes them, a refused WebSocket
upgrade's status line, and the order of `/apis`. Each test is what a user of the client writes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_python_clients import _job, _until
from tests.e2e.test_python_clients import kubeconfig as kubeconfig  # the fixture: one `kjobs up` for this module

pytestmark = pytest.mark.e2e


def test_kubernetes_job_status_round_trip_through_sanitize_changes_nothing(kubeconfig: Path) -> None:
    """A finished Job read with the typed API, turned back into a dict by `ApiClient.sanitize_for_serialization`
    (its times become `datetime.isoformat()`, `...+00:00`) and written back with `replace_namespaced_job_status`:
    the apiserver decodes them into `metav1.Time` and stores them as Go writes them, so the stored status reads
    back byte for byte as before (read raw with `_preload_content=False`)."""
    from kubernetes import client, config

    with config.new_client_from_config(str(kubeconfig)) as api:
        batch = client.BatchV1Api(api)
        batch.create_namespaced_job("default", _job("py39-status", "exit 0"))

        def finished() -> Any:
            job = batch.read_namespaced_job("py39-status", "default")
            return job if any(c.type == "Complete" for c in job.status.conditions or []) else None

        job = _until(finished, "the Job to complete", timeout=60)
        before = json.loads(batch.read_namespaced_job("py39-status", "default", _preload_content=False).data)
        body = api.sanitize_for_serialization(job)
        assert body["status"]["startTime"].endswith("+00:00")  # what the client sends
        batch.replace_namespaced_job_status("py39-status", "default", body)
        after = json.loads(batch.read_namespaced_job("py39-status", "default", _preload_content=False).data)
        assert after["status"] == before["status"]
        assert after["status"]["completionTime"].endswith("Z")


def test_kubernetes_lease_and_event_times_are_stored_as_go_writes_them(kubeconfig: Path) -> None:
    """A Lease's `renewTime` (a MicroTime: six digits, UTC, `Z`) and an Event's `firstTimestamp` (a Time: whole
    seconds) sent as Python datetimes come back as a cluster writes them; a MicroTime Go cannot parse is 400."""
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    moment = datetime(2026, 12, 5, 7, 28, 56, 123456, tzinfo=UTC)
    with config.new_client_from_config(str(kubeconfig)) as api:
        leases = client.CoordinationV1Api(api)
        spec = client.V1LeaseSpec(holder_identity="me", lease_duration_seconds=15, renew_time=moment)
        lease = client.V1Lease(metadata=client.V1ObjectMeta(name="py39-lease"), spec=spec)
        leases.create_namespaced_lease("default", lease)
        raw = json.loads(leases.read_namespaced_lease("py39-lease", "default", _preload_content=False).data)
        assert raw["spec"]["renewTime"] == "2026-12-05T07:28:56.123456Z"
        # a whole-second datetime is written `...56+00:00`, without the six digits RFC3339Micro wants
        whole = client.V1LeaseSpec(holder_identity="me", renew_time=moment.replace(microsecond=0))
        with pytest.raises(ApiException) as refused:
            leases.create_namespaced_lease("default", client.V1Lease(metadata={"name": "py39-whole"}, spec=whole))
        parse = 'parsing time "2026-12-05T07:28:56+00:00" as "2006-01-02T15:04:05.000000Z07:00"'
        assert refused.value.status == 400
        assert json.loads(refused.value.body)["message"] == (
            f'Lease in version "v1" cannot be handled as a Lease: {parse}: cannot parse "+00:00" as ".000000"'
        )

        core = client.CoreV1Api(api)
        involved = client.V1ObjectReference(kind="Pod", namespace="default", name="somepod")
        event = client.CoreV1Event(
            metadata=client.V1ObjectMeta(name="py39-event"),
            involved_object=involved,
            reason="Tested",
            message="a time with a fraction",
            type="Normal",
            first_timestamp=moment,
            last_timestamp=moment,
            count=1,
        )
        core.create_namespaced_event("default", event)
        raw = json.loads(core.read_namespaced_event("py39-event", "default", _preload_content=False).data)
        assert (raw["firstTimestamp"], raw["lastTimestamp"]) == ("2026-12-05T07:28:56Z", "2026-12-05T07:28:56Z")


def test_a_refused_exec_upgrade_reads_as_an_http_error(kubeconfig: Path) -> None:
    """An exec into a container the pod does not have is refused before the upgrade with 400 and the Status, in
    a response written as Go's net/http writes it: the official client's error says `Handshake status 400 Bad
    Request` and lightkube's `WebSocketUpgradeError` carries a response whose reason phrase is `Bad Request`."""
    from httpx2.websockets import WebSocketUpgradeError  # the httpx fork lightkube 1.0 speaks through
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException
    from kubernetes.stream import stream
    from lightkube import Client, KubeConfig

    with config.new_client_from_config(str(kubeconfig)) as api:
        core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
        batch.create_namespaced_job("default", _job("py39-exec", "sleep 60"))

        def scheduled() -> str | None:
            pods = core.list_namespaced_pod("default", label_selector="job-name=py39-exec").items
            return pods[0].metadata.name if pods and pods[0].spec.node_name else None

        pod = _until(scheduled, "the Job's pod to be scheduled", timeout=60)
        message = f"container nope is not valid for pod {pod}"
        with pytest.raises(ApiException) as refused:
            stream(core.connect_get_namespaced_pod_exec, pod, "default", container="nope", command=["true"])
        assert str(refused.value.reason).startswith("Handshake status 400 Bad Request -+-+- ")
        assert message in str(refused.value.reason)

        lightkube = Client(config=KubeConfig.from_file(str(kubeconfig)))
        with pytest.raises(WebSocketUpgradeError) as upgrade:
            lightkube.exec(pod, namespace="default", container="nope", command=["true"], stdout=True)
        response = upgrade.value.response
        assert (response.status_code, response.reason_phrase) == (400, "Bad Request")
        assert response.headers["date"]  # (lightkube closes the response before its body is read)
        batch.delete_namespaced_job("py39-exec", "default", propagation_policy="Background")


def test_clients_list_api_groups_in_kube_aggregator_order(kubeconfig: Path) -> None:
    """`ApisApi.get_api_versions()` (the official client) sees the groups as a cluster lists them: by APIService
    priority, a custom resource's group (1000) after the built-in ones, metrics.k8s.io (100) last."""
    from kubernetes import client, config, dynamic

    with config.new_client_from_config(str(kubeconfig)) as api:
        crds = dynamic.DynamicClient(api).resources.get(
            api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition"
        )
        names = {"plural": "widgets", "singular": "widget", "kind": "Widget"}
        schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
        version = {"name": "v1", "served": True, "storage": True, "schema": schema}
        crd = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.a.example.com"},
            "spec": {"group": "a.example.com", "scope": "Namespaced", "names": names, "versions": [version]},
        }
        crds.create(body=crd)

        def established() -> list[str] | None:
            groups = [g.name for g in client.ApisApi(api).get_api_versions().groups]
            return groups if "a.example.com" in groups else None

        groups = _until(established, "the custom group to be served")
        assert groups[:4] == ["events.k8s.io", "authentication.k8s.io", "authorization.k8s.io", "batch"]
        assert groups[-3:] == ["discovery.k8s.io", "a.example.com", "metrics.k8s.io"]
