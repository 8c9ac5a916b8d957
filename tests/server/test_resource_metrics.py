"""The Metrics API (`metrics.k8s.io/v1beta1`) as metrics-server answers it, over a scripted usage source."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import httpx
import pytest

from kjobs.api.types import Obj
from kjobs.server.app import create_app
from kjobs.server.resourcemetrics import ContainerUsage, Sample
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.server.conftest import pod_manifest
from tests.support import client_tls, shared_pki

METRICS = "/apis/metrics.k8s.io/v1beta1"
NOW = 1_800_000_000.0


class Scripted:
    """Figures for the pods named `busy*` and for node `n1`."""

    def pod_usage(self, pods: Sequence[Obj]) -> dict[str, Sample]:
        return {
            p["metadata"]["uid"]: Sample(NOW - 1, 15.0, (ContainerUsage("main", 0.25, 50 << 20),))
            for p in pods
            if p["metadata"]["name"].startswith("busy")
        }

    def node_usage(self, names: Sequence[str]) -> dict[str, Sample]:
        sample = Sample(NOW - 1, 10.5, (ContainerUsage("", 1.000000123, 3 << 30),))
        return {n: sample for n in names if n == "n1"}


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    store = MemoryStore()
    app = create_app(store, clock=lambda: NOW, usage=Scripted())
    pki = shared_pki()
    with serve(store, app=app, pki=pki) as url, httpx.Client(base_url=url, verify=client_tls(pki)) as client:
        for name, labels in (("busy-a", {"app": "a"}), ("busy-b", {"app": "b"}), ("idle", {"app": "a"})):
            created = client.post("/api/v1/namespaces/default/pods", json=pod_manifest(name, labels=labels))
            assert created.status_code == 201, created.text
            running = client.patch(
                f"/api/v1/namespaces/default/pods/{name}/status",
                json={"status": {"phase": "Running"}},
                headers={"content-type": "application/merge-patch+json"},
            )
            assert running.status_code == 200, running.text
        pending = client.post("/api/v1/namespaces/default/pods", json=pod_manifest("busy-pending"))
        assert pending.status_code == 201
        for node in ("n1", "n2"):
            body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": {"role": node}}}
            assert client.post("/api/v1/nodes", json=body).status_code == 201
        yield client
    store.close()


def test_discovery_lists_the_metrics_group(http: httpx.Client) -> None:
    groups = http.get("/apis").json()["groups"]
    assert {
        "name": "metrics.k8s.io",
        "versions": [v := {"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}],
        "preferredVersion": v,
    } in groups
    resources = http.get(METRICS).json()["resources"]
    assert [(r["name"], r["kind"], r["namespaced"], r["verbs"]) for r in resources] == [
        ("nodes", "NodeMetrics", False, ["get", "list"]),
        ("pods", "PodMetrics", True, ["get", "list"]),
    ]
    aggregated = http.get(
        "/apis", headers={"accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}
    )
    names = [g["metadata"]["name"] for g in aggregated.json()["items"]]
    assert names[-1] == "metrics.k8s.io"
    assert http.get("/apis/metrics.k8s.io").json()["preferredVersion"]["groupVersion"] == "metrics.k8s.io/v1beta1"


def test_pods_with_figures_are_listed_as_metrics_server_lists_them(http: httpx.Client) -> None:
    listed = http.get(f"{METRICS}/namespaces/default/pods").json()
    assert (listed["kind"], listed["apiVersion"]) == ("PodMetricsList", "metrics.k8s.io/v1beta1")
    # Running pods with figures only (not `idle`, which has none, nor the Pending one), sorted by name.
    assert [i["metadata"]["name"] for i in listed["items"]] == ["busy-a", "busy-b"]
    item = listed["items"][0]
    assert item == {
        "kind": "PodMetrics",
        "apiVersion": "metrics.k8s.io/v1beta1",
        "metadata": {
            "name": "busy-a",
            "namespace": "default",
            "creationTimestamp": "2027-01-15T08:00:00Z",
            "labels": {"app": "a"},
        },
        "timestamp": "2027-01-15T07:59:59Z",
        "window": "15s",
        "containers": [{"name": "main", "usage": {"cpu": "250m", "memory": "50Mi"}}],
    }
    selected = http.get(f"{METRICS}/pods", params={"labelSelector": "app=a"}).json()
    assert [i["metadata"]["name"] for i in selected["items"]] == ["busy-a"]
    by_field = http.get(f"{METRICS}/pods", params={"fieldSelector": "metadata.name=busy-b"}).json()
    assert [i["metadata"]["name"] for i in by_field["items"]] == ["busy-b"]
    assert http.get(f"{METRICS}/namespaces/default/pods/busy-b").json()["metadata"]["name"] == "busy-b"


def test_a_pod_without_figures_is_not_found(http: httpx.Client) -> None:
    for name in ("idle", "busy-pending"):
        response = http.get(f"{METRICS}/namespaces/default/pods/{name}")
        assert response.status_code == 404
        assert response.json()["message"] == f'pods.metrics.k8s.io "default/{name}" not found'
    missing = http.get(f"{METRICS}/namespaces/default/pods/ghost")
    assert (missing.status_code, missing.json()["message"]) == (404, 'pods "ghost" not found')
    assert http.post(f"{METRICS}/namespaces/default/pods", json={}).status_code == 405


def test_nodes_with_figures_are_listed(http: httpx.Client) -> None:
    listed = http.get(f"{METRICS}/nodes").json()
    assert listed["kind"] == "NodeMetricsList"
    assert [(i["metadata"]["name"], i["usage"], i["window"]) for i in listed["items"]] == [
        ("n1", {"cpu": "1000000123n", "memory": "3Gi"}, "10.5s")
    ]
    assert listed["items"][0]["metadata"]["labels"] == {"role": "n1"}
    response = http.get(f"{METRICS}/nodes/n2")
    assert (response.status_code, response.json()["message"]) == (404, 'nodes.metrics.k8s.io "n2" not found')
