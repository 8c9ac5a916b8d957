"""Services as kube-apiserver stores them: defaults, cluster IPs and node ports allocated from the default ranges
(and freed when a Service goes), upstream's allocation errors, the `kubernetes` Service, field selectors, the
status subresource, the table kubectl prints."""

from __future__ import annotations

import ipaddress
import random

import httpx

from kjobs.server.app import create_app
from kjobs.server.runner import serve
from kjobs.server.serviceips import ServiceAllocator
from kjobs.server.tables import service_cells, to_table
from kjobs.store import MemoryStore
from tests.server.conftest import Server

SERVICES = "/api/v1/namespaces/default/services"
RANGE = ipaddress.ip_network("10.96.0.0/12")


def svc(name: str, **spec: object) -> dict[str, object]:
    body: dict[str, object] = {"ports": [{"port": 80}], **spec}
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": body}


def created(http: httpx.Client, body: dict[str, object]) -> dict[str, object]:
    response = http.post(SERVICES, json=body)
    assert response.status_code == 201, response.text
    result: dict[str, object] = response.json()
    return result


def test_a_cluster_ip_service_is_defaulted_and_gets_an_ip_in_range(http: httpx.Client) -> None:
    got = created(http, svc("web", selector={"app": "web"}, ports=[{"port": 80, "targetPort": 8080}]))
    spec = got["spec"]
    assert isinstance(spec, dict)
    ip = spec["clusterIP"]
    assert ipaddress.ip_address(ip) in RANGE
    assert spec == {
        "ports": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}],
        "selector": {"app": "web"},
        "clusterIP": ip,
        "clusterIPs": [ip],
        "type": "ClusterIP",
        "sessionAffinity": "None",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "internalTrafficPolicy": "Cluster",
    }
    assert got["status"] == {"loadBalancer": {}}
    # nobody owns what the server allocated: a later server-side apply cannot drop it
    (entry,) = got["metadata"]["managedFields"]  # type: ignore[index]
    assert set(entry["fieldsV1"]["f:spec"]) == {
        "f:internalTrafficPolicy", "f:ports", "f:selector", "f:sessionAffinity", "f:type",
    }  # fmt: skip
    assert http.get(f"{SERVICES}/web").json()["spec"]["clusterIP"] == ip


def test_no_two_services_share_an_ip_and_a_taken_ip_is_refused_as_upstream(http: httpx.Client) -> None:
    ips = {created(http, svc(f"s{i}"))["spec"]["clusterIP"] for i in range(20)}  # type: ignore[index]
    assert len(ips) == 20
    taken = sorted(ips)[0]
    refused = http.post(SERVICES, json=svc("again", clusterIP=taken))
    assert refused.status_code == 422
    assert refused.json()["message"] == (
        f'Service "again" is invalid: spec.clusterIPs: Invalid value: ["{taken}"]: '
        f"failed to allocate IP {taken}: provided IP is already allocated"
    )
    outside = http.post(SERVICES, json=svc("outside", clusterIP="10.0.0.7"))
    assert outside.status_code == 422
    assert outside.json()["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: ["10.0.0.7"]: failed to allocate IP 10.0.0.7: provided IP is not in the '
            "valid range. The range of valid IPs is 10.96.0.0/12",
            "field": "spec.clusterIPs",
        }
    ]
    assert http.delete(f"{SERVICES}/s0").status_code == 200
    freed = http.get(SERVICES).json()["items"]
    assert len(freed) == 20  # the kubernetes Service and 19 left
    mine = created(http, svc("mine", clusterIP="10.96.100.100"))
    assert mine["spec"]["clusterIPs"] == ["10.96.100.100"]  # type: ignore[index]


def test_a_deleted_services_ip_can_be_named_again(http: httpx.Client) -> None:
    created(http, svc("first", clusterIP="10.96.7.7"))
    assert http.post(SERVICES, json=svc("second", clusterIP="10.96.7.7")).status_code == 422
    deleted = http.delete(f"{SERVICES}/first")
    assert (deleted.status_code, deleted.json()["kind"]) == (200, "Service")  # ReturnDeletedObject
    assert created(http, svc("second", clusterIP="10.96.7.7"))["spec"]["clusterIP"] == "10.96.7.7"  # type: ignore[index]


def test_headless_and_external_name_services_get_no_ip(http: httpx.Client) -> None:
    headless = created(http, svc("headless", clusterIP="None", selector={"job-name": "example-job"}))["spec"]
    assert headless["clusterIPs"] == ["None"]  # type: ignore[index]
    assert (headless["ipFamilies"], headless["ipFamilyPolicy"]) == (["IPv4"], "SingleStack")  # type: ignore[index]
    selectorless = created(http, svc("bare", clusterIP="None"))["spec"]
    # alloc.go: a headless Service without selector defaults to RequireDualStack, with both families
    assert (selectorless["ipFamilies"], selectorless["ipFamilyPolicy"]) == (["IPv4", "IPv6"], "RequireDualStack")  # type: ignore[index]
    body = svc("ext", type="ExternalName", externalName="example.com")
    del body["spec"]["ports"]  # type: ignore[attr-defined]
    external = created(http, body)["spec"]
    assert external == {"type": "ExternalName", "externalName": "example.com", "sessionAffinity": "None"}


def test_node_ports_are_allocated_in_range_and_a_duplicate_is_refused(http: httpx.Client) -> None:
    spec = created(http, svc("np", type="NodePort", ports=[{"name": "a", "port": 80}, {"name": "b", "port": 81}]))
    ports = [p["nodePort"] for p in spec["spec"]["ports"]]  # type: ignore[index]
    assert len(set(ports)) == 2 and all(30000 <= p <= 32767 for p in ports)
    assert spec["spec"]["externalTrafficPolicy"] == "Cluster"  # type: ignore[index]
    refused = http.post(SERVICES, json=svc("np2", type="NodePort", ports=[{"port": 80, "nodePort": ports[0]}]))
    assert refused.status_code == 422
    assert refused.json()["message"] == (
        f'Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: {ports[0]}: provided port is already '
        "allocated"
    )
    low = http.post(SERVICES, json=svc("np3", type="NodePort", ports=[{"port": 80, "nodePort": 8080}]))
    assert low.json()["message"] == (
        'Service "np3" is invalid: spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid '
        "range. The range of valid ports is 30000-32767"
    )
    # back to ClusterIP: the node ports are dropped (dropTypeDependentFields) and free again
    back = http.put(f"{SERVICES}/np", json={**spec, "spec": {**spec["spec"], "type": "ClusterIP"}})  # type: ignore[dict-item]
    assert back.status_code == 200, back.text
    assert [p.get("nodePort") for p in back.json()["spec"]["ports"]] == [None, None]
    assert "externalTrafficPolicy" not in back.json()["spec"]
    again = created(http, svc("np4", type="NodePort", ports=[{"port": 80, "nodePort": ports[0]}]))
    assert again["spec"]["ports"][0]["nodePort"] == ports[0]  # type: ignore[index]


def test_a_reapplied_manifest_keeps_the_allocated_ip_and_ports(http: httpx.Client) -> None:
    manifest = svc("kept", type="NodePort", ports=[{"port": 80}])
    first = created(http, manifest)
    again = http.put(f"{SERVICES}/kept", json=manifest)
    assert again.status_code == 200, again.text
    assert again.json()["spec"]["clusterIP"] == first["spec"]["clusterIP"]  # type: ignore[index]
    assert again.json()["spec"]["ports"] == first["spec"]["ports"]  # type: ignore[index]
    changed = http.patch(
        f"{SERVICES}/kept",
        json={"spec": {"clusterIP": "10.96.9.9"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert changed.status_code == 422
    assert "spec.clusterIPs[0]: Invalid value: " in changed.json()["message"]
    assert "may not change once set" in changed.json()["message"]


def test_validation_errors_are_upstreams(http: httpx.Client) -> None:
    bad = http.post(SERVICES, json=svc("Bad_Name", ports=[{"port": 0, "protocol": "HTTP"}], sessionAffinity="Sticky"))
    assert bad.status_code == 422
    fields = [(c["field"], c["reason"]) for c in bad.json()["details"]["causes"]]
    assert fields == [
        ("metadata.name", "FieldValueInvalid"),
        ("spec.ports[0].port", "FieldValueInvalid"),
        ("spec.ports[0].protocol", "FieldValueNotSupported"),
        ("spec.ports[0].targetPort", "FieldValueInvalid"),
        ("spec.sessionAffinity", "FieldValueNotSupported"),
    ]
    no_ports = http.post(SERVICES, json=svc("noports", ports=[]))
    assert no_ports.json()["message"] == 'Service "noports" is invalid: spec.ports: Required value'


def test_status_is_written_only_through_the_subresource(http: httpx.Client) -> None:
    spec = created(http, svc("lb", type="LoadBalancer"))
    assert spec["spec"]["allocateLoadBalancerNodePorts"] is True  # type: ignore[index]
    assert 30000 <= spec["spec"]["ports"][0]["nodePort"] <= 32767  # type: ignore[index]
    ingress = {"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}}
    ignored = http.patch(f"{SERVICES}/lb", json=ingress, headers={"Content-Type": "application/merge-patch+json"})
    assert ignored.json()["status"] == {"loadBalancer": {}}
    written = http.patch(
        f"{SERVICES}/lb/status", json=ingress, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert written.status_code == 200, written.text
    assert written.json()["status"] == {"loadBalancer": {"ingress": [{"ip": "192.0.2.10", "ipMode": "VIP"}]}}
    created(http, svc("plain"))
    refused = http.patch(
        f"{SERVICES}/plain/status", json=ingress, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert refused.status_code == 422
    assert refused.json()["message"] == (
        'Service "plain" is invalid: status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is '
        "'LoadBalancer'"
    )


def test_the_kubernetes_service_and_field_selectors(server: Server, http: httpx.Client) -> None:
    kubernetes = http.get(f"{SERVICES}/kubernetes").json()
    port = int(server.url.rsplit(":", 1)[1])
    assert kubernetes["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert kubernetes["spec"]["clusterIP"] == "10.96.0.1"
    assert kubernetes["spec"]["ports"] == [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}]
    created(http, svc("np", type="NodePort"))
    by_type = http.get("/api/v1/services", params={"fieldSelector": "spec.type=NodePort"}).json()["items"]
    assert [s["metadata"]["name"] for s in by_type] == ["np"]
    by_ip = http.get("/api/v1/services", params={"fieldSelector": "spec.clusterIP=10.96.0.1"}).json()["items"]
    assert [s["metadata"]["name"] for s in by_ip] == ["kubernetes"]
    entry = {r["name"]: r for r in http.get("/api/v1").json()["resources"]}["services"]
    assert (entry["shortNames"], entry["categories"]) == (["svc"], ["all"])
    assert "create" in entry["verbs"] and "deletecollection" in entry["verbs"]


def test_allocations_survive_a_restart_over_the_same_store() -> None:
    store = MemoryStore()
    app = create_app(store)
    with serve(store, app=app) as url, httpx.Client(base_url=url, timeout=10) as http:
        ip = created(http, svc("kept"))["spec"]["clusterIP"]  # type: ignore[index]
    again = create_app(store)
    with serve(store, app=again) as url, httpx.Client(base_url=url, timeout=10) as http:
        refused = http.post(SERVICES, json=svc("other", clusterIP=ip))
        assert refused.status_code == 422
        assert "provided IP is already allocated" in refused.json()["message"]
        # the kubernetes Service followed the server to its new port
        port = int(url.rsplit(":", 1)[1])
        assert http.get(f"{SERVICES}/kubernetes").json()["spec"]["ports"][0]["targetPort"] == port
    store.close()


def test_dynamic_picks_prefer_the_upper_band_and_fall_back() -> None:
    """ServiceIPStaticSubrange: random picks leave the first 256 addresses to Services that name theirs."""
    allocator = ServiceAllocator(lambda: ([], 0), lambda: 0, rng=random.Random(1))
    picks = {allocator._next(set(), 0, 1000, 256) for _ in range(200)}
    assert min(picks) >= 256
    assert allocator._next(set(range(256, 1000)), 0, 1000, 256) in range(256)
    assert allocator._next(set(range(1000)), 0, 1000, 256) is None


def test_the_service_table_prints_as_kubectl_shows_it() -> None:
    row = {
        "metadata": {"name": "web", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {
            "type": "NodePort",
            "clusterIPs": ["10.96.0.10"],
            "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
            "selector": {"b": "2", "a": "1"},
        },
    }
    assert service_cells(row, now=1767225661.0) == [
        "web", "NodePort", "10.96.0.10", "<none>", "80:30080/TCP,53/UDP", "61s", "a=1,b=2",
    ]  # fmt: skip
    pending = {"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer"}}
    assert service_cells(pending, now=0)[1:5] == ["LoadBalancer", "<none>", "<pending>", "<none>"]
    columns = [c["name"] for c in to_table([], kind="Service", api_version="v1", now=0)["columnDefinitions"]]
    assert columns == ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"]


def test_namespace_deletion_removes_services(http: httpx.Client) -> None:
    assert http.post("/api/v1/namespaces", json={"metadata": {"name": "gone"}}).status_code == 201
    path = "/api/v1/namespaces/gone/services"
    ip = http.post(path, json=svc("s", clusterIP="10.96.5.5")).json()["spec"]["clusterIP"]
    assert http.delete("/api/v1/namespaces/gone").status_code == 200
    assert http.get(path).json()["items"] == []
    assert created(http, svc("reuse", clusterIP=ip))["spec"]["clusterIP"] == ip  # type: ignore[index]


def test_deletecollection_removes_the_selected_services_and_frees_their_ips(http: httpx.Client) -> None:
    for name in ("a", "b"):
        body = svc(name, clusterIP=f"10.96.3.{ord(name)}")
        body["metadata"]["labels"] = {"tier": "web"}  # type: ignore[index]
        created(http, body)
    assert http.delete(SERVICES, params={"labelSelector": "tier=web"}).status_code == 200
    assert [s["metadata"]["name"] for s in http.get(SERVICES).json()["items"]] == ["kubernetes"]
    assert created(http, svc("again", clusterIP="10.96.3.97"))["spec"]["clusterIP"] == "10.96.3.97"  # type: ignore[index]


def test_one_node_port_serves_one_service_port_number_on_create(http: httpx.Client) -> None:
    """initNodePorts: TCP and UDP of port 53 may share a node port; two port numbers may not (the second is
    refused as allocated, before validation)."""
    dns = [{"name": "tcp", "port": 53, "nodePort": 30053}, {"name": "udp", "port": 53, "protocol": "UDP"}]
    got = created(http, svc("dns", type="NodePort", ports=dns))
    assert [p["nodePort"] for p in got["spec"]["ports"]] == [30053, 30053]  # type: ignore[index]
    two = [
        {"name": "a", "port": 80, "nodePort": 30080},
        {"name": "b", "port": 81, "protocol": "UDP", "nodePort": 30080},
    ]
    refused = http.post(SERVICES, json=svc("two", type="NodePort", ports=two))
    assert refused.json()["message"] == (
        'Service "two" is invalid: spec.ports[1].nodePort: Invalid value: 30080: provided port is already allocated'
    )


def test_the_openapi_document_has_the_service_writes_kubectl_validates_against(http: httpx.Client) -> None:
    """kubectl's client-side validation looks for the kind's PATCH with a `fieldValidation` parameter in
    /openapi/v3; without it kubectl fell back to /openapi/v2 and `apply` failed with `failed to download openapi`."""
    paths = http.get("/openapi/v3/api/v1").json()["paths"]
    item = paths["/api/v1/namespaces/{namespace}/services/{name}"]
    assert {"get", "put", "patch", "delete"} <= set(item)
    assert "fieldValidation" in {p.get("name") for p in item["patch"].get("parameters", [])}
    assert "post" in paths["/api/v1/namespaces/{namespace}/services"]
    assert "patch" in paths["/api/v1/namespaces/{namespace}/services/{name}/status"]
