"""kube-apiserver's upkeep of its own objects: a deleted `kubernetes` Service or system namespace comes back while
the server runs (kjobs.server.bootstrap), as the kubernetes Service and system namespaces controllers make them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx
import pytest

from kjobs.server import bootstrap
from kjobs.server.app import create_app
from kjobs.server.runner import serve
from kjobs.store import MemoryStore

SERVICE = "/api/v1/namespaces/default/services/kubernetes"


def eventually(check: Callable[[], bool], within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return False


def test_a_deleted_kubernetes_service_and_node_lease_namespace_come_back() -> None:
    store = MemoryStore()
    app = create_app(store, upkeep_intervals=(0.1, 0.2))
    with serve(store, app=app) as url, httpx.Client(base_url=url, timeout=10) as http:
        port = int(url.rsplit(":", 1)[1])
        original = http.get(SERVICE).json()
        assert http.delete(SERVICE).status_code == 200
        assert http.delete("/api/v1/namespaces/kube-node-lease").status_code == 200
        # without the namespace controller here, a namespace that waits on its `kubernetes` finalizer is finalized
        lease_ns = http.get("/api/v1/namespaces/kube-node-lease")
        if lease_ns.status_code == 200:
            body = lease_ns.json()
            body["spec"]["finalizers"] = []
            finalized = http.put("/api/v1/namespaces/kube-node-lease/finalize", json=body)
            assert finalized.status_code == 200, finalized.text
        assert eventually(lambda: http.get(SERVICE).status_code == 200)
        again = http.get(SERVICE).json()
        assert again["metadata"]["uid"] != original["metadata"]["uid"]
        assert again["spec"]["clusterIP"] == "10.96.0.1"
        assert again["spec"]["ports"] == [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}]
        assert eventually(lambda: _phase(http, "kube-node-lease") == "Active")
    store.close()


def _phase(http: httpx.Client, namespace: str) -> str | None:
    response = http.get(f"/api/v1/namespaces/{namespace}")
    return response.json()["status"]["phase"] if response.status_code == 200 else None


def test_the_periodic_run_only_creates_where_the_start_resets_ports() -> None:
    """`UpdateKubernetesService(false)` after the start: an existing Service is left as it is, while a start on
    another port puts its ports back (`getMasterServiceUpdateIfNeeded`)."""
    store = MemoryStore()
    service = create_app(store).service

    async def scenario() -> tuple[object, object]:
        await service.ensure_namespaces()
        await service.ensure_kubernetes_service(6443)
        await service.ensure_kubernetes_service(7000, reconcile=False)
        kept = store.get("services", "default", "kubernetes")["spec"]["ports"][0]["targetPort"]
        await service.ensure_kubernetes_service(7000)
        reset = store.get("services", "default", "kubernetes")["spec"]["ports"][0]["targetPort"]
        return kept, reset

    assert asyncio.run(scenario()) == (6443, 7000)
    store.close()


def test_a_failing_run_is_tried_again_at_the_next() -> None:
    calls: list[int] = []

    async def work() -> None:
        calls.append(len(calls))
        if len(calls) == 1:
            raise RuntimeError("store unavailable")

    async def ticks(_: float) -> None:
        if len(calls) >= 3:
            raise asyncio.CancelledError
        await asyncio.sleep(0)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(bootstrap.every(10.0, work, "test", sleep=ticks))
    assert calls == [0, 1, 2]
