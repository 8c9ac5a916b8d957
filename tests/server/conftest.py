"""Fixtures: an in-process API server over a MemoryStore, served over TLS with the test PKI, and clients for it
(presenting the admin client certificate, as the kubeconfig `kjobs up` writes does)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from kjobs.server.app import App, create_app
from kjobs.server.runner import serve
from kjobs.server.tls import Pki
from kjobs.store import MemoryStore
from tests.support import client_tls, shared_pki


@dataclass
class Server:
    """A running server: its URL, app (for the service) and store."""

    url: str
    app: App
    store: MemoryStore
    pki: Pki


@pytest.fixture
def server() -> Iterator[Server]:
    store = MemoryStore()
    app = create_app(store, bookmark_interval=0.2, resource_version_wait=0.5)
    pki = shared_pki()
    with serve(store, app=app, pki=pki) as url:
        yield Server(url, app, store, pki)
    store.close()


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10, verify=client_tls(server.pki)) as client:
        yield client


def job_manifest(name: str, **spec: object) -> dict[str, object]:
    """A small valid Job."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {"app": "t"}},
        "spec": {
            **spec,
            "template": {
                "metadata": {"labels": {"app": "t"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox:1.36", "command": ["true"]}],
                },
            },
        },
    }


def pod_manifest(name: str, *, labels: dict[str, str] | None = None, node: str | None = None) -> dict[str, object]:
    """A small valid Pod."""
    spec: dict[str, object] = {"containers": [{"name": "main", "image": "busybox:1.36"}], "restartPolicy": "Never"}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}}, "spec": spec}
