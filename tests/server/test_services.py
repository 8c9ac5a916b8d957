"""Services are served read-only and empty (kjobs runs none): discovery, lists, watches and 405 on writes."""

from __future__ import annotations

import httpx

from kjobs.server.tables import service_cells, to_table

SERVICES = "/api/v1/namespaces/default/services"


def test_services_are_listed_empty_and_never_written(http: httpx.Client) -> None:
    listed = http.get(SERVICES)
    assert listed.status_code == 200
    assert (listed.json()["kind"], listed.json()["items"]) == ("ServiceList", [])
    assert (
        http.get("/api/v1/services", params={"labelSelector": "kubernetes.io/cluster-service=true"}).json()["items"]
        == []
    )
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}
    for response in (
        http.post(SERVICES, json=service),
        http.put(f"{SERVICES}/web", json=service),
        http.patch(f"{SERVICES}/web", json={}, headers={"Content-Type": "application/merge-patch+json"}),
        http.delete(f"{SERVICES}/web"),
        http.delete(SERVICES),
    ):
        assert response.status_code == 405
        assert response.json()["reason"] == "MethodNotAllowed"
    assert http.get(f"{SERVICES}/web").status_code == 404
    entry = {r["name"]: r for r in http.get("/api/v1").json()["resources"]}["services"]
    assert (entry["verbs"], entry["shortNames"], entry["categories"]) == (["get", "list", "watch"], ["svc"], ["all"])


def test_the_service_table_prints_as_kubectl_shows_it() -> None:
    svc = {
        "metadata": {"name": "web", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {
            "type": "NodePort",
            "clusterIPs": ["10.96.0.10"],
            "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
            "selector": {"b": "2", "a": "1"},
        },
    }
    assert service_cells(svc, now=1767225661.0) == [
        "web", "NodePort", "10.96.0.10", "<none>", "80:30080/TCP,53/UDP", "61s", "a=1,b=2",
    ]  # fmt: skip
    pending = {"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer"}}
    assert service_cells(pending, now=0)[1:5] == ["LoadBalancer", "<none>", "<pending>", "<none>"]
    columns = [c["name"] for c in to_table([], kind="Service", api_version="v1", now=0)["columnDefinitions"]]
    assert columns == ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"]
