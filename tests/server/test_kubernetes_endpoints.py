"""kube-apiserver's endpoint reconciler for its own Service (pkg/controlplane/reconcilers, the `lease` reconciler
through `EndpointsAdapter`): the `kubernetes` Endpoints and EndpointSlice list the API server at its port, follow a
restart on another port, and come back within the upkeep interval when deleted."""

from __future__ import annotations

import asyncio
import time

import httpx

from kjobs.server.app import create_app
from kjobs.server.runner import serve
from kjobs.store import MemoryStore

ENDPOINTS = "/api/v1/namespaces/default/endpoints/kubernetes"
SLICE = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes"


def test_the_kubernetes_endpoints_follow_the_api_servers_port() -> None:
    store = MemoryStore()
    service = create_app(store).service

    async def scenario() -> None:
        await service.ensure_namespaces()
        await service.ensure_kubernetes_service(6443)
        ep = store.get("endpoints", "default", "kubernetes")
        assert ep["subsets"] == [
            {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}
        ]
        assert ep["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}
        eps = store.get("endpointslices.discovery.k8s.io", "default", "kubernetes")
        assert (eps["addressType"], eps["endpoints"], eps["ports"]) == (
            "IPv4",
            [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}],
            [{"name": "https", "port": 6443, "protocol": "TCP"}],
        )
        assert eps["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
        version = ep["metadata"]["resourceVersion"]
        await service.ensure_kubernetes_service(6443, reconcile=False)  # nothing differs: nothing written
        assert store.get("endpoints", "default", "kubernetes")["metadata"]["resourceVersion"] == version
        await service.ensure_kubernetes_service(7000)
        assert store.get("endpoints", "default", "kubernetes")["subsets"][0]["ports"][0]["port"] == 7000
        slice_ports = store.get("endpointslices.discovery.k8s.io", "default", "kubernetes")["ports"]
        assert slice_ports == [{"name": "https", "port": 7000, "protocol": "TCP"}]

    asyncio.run(scenario())
    store.close()


def test_deleted_kubernetes_endpoints_come_back() -> None:
    store = MemoryStore()
    app = create_app(store, upkeep_intervals=(0.1, 0.2))
    with serve(store, app=app) as url, httpx.Client(base_url=url, timeout=10) as http:
        port = int(url.rsplit(":", 1)[1])
        uids = {path: http.get(path).json()["metadata"]["uid"] for path in (ENDPOINTS, SLICE)}
        for path in (ENDPOINTS, SLICE):
            assert http.delete(path).status_code == 200
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(http.get(p).status_code != 200 for p in (ENDPOINTS, SLICE)):
            time.sleep(0.02)
        for path in (ENDPOINTS, SLICE):
            again = http.get(path).json()
            assert again["metadata"]["uid"] != uids[path]
        assert http.get(ENDPOINTS).json()["subsets"][0]["ports"][0]["port"] == port
    store.close()
