"""An in-process client's writes have no `Warning` headers to carry, so the server does not compute the objects'
warnings for them (`LocalClient.warn`): the same objects are stored and every decision of a run is the same."""

from __future__ import annotations

import asyncio
import copy

import pytest

from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import PODS
from kjobs.clock import FakeClock
from kjobs.server.registry import lookup
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.simulate import SimulationOptions, parse_model
from kjobs.store import MemoryStore
from tests.simulate.test_shortcuts import MIXED, final_pods


def pod(name: str) -> Obj:
    """A pod whose create warns (a deprecated node label in its nodeSelector, pkg/api/pod/warnings.go)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "w"}},
        "spec": {
            "nodeSelector": {"beta.kubernetes.io/arch": "amd64"},
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox"}],
        },
    }


WARNING = 'spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead'


def comparable(obj: Obj) -> Obj:
    """`obj` without what differs between two creates of the same pod: its name and identity, and the random
    suffix of the ServiceAccount admission's `kube-api-access-XXXXX` volume."""
    out = copy.deepcopy(obj)
    for key in ("name", "uid", "creationTimestamp", "resourceVersion", "managedFields"):
        out["metadata"].pop(key, None)
    spec = out.get("spec") or {}
    mounts = [m for c in spec.get("containers") or [] for m in c.get("volumeMounts") or []]
    named = [*(spec.get("volumes") or []), *mounts]
    for entry in named:
        if entry["name"].startswith("kube-api-access-"):
            entry["name"] = "kube-api-access-"
    return out


def test_the_server_still_warns_a_client_that_asks_and_stores_the_same_pod_for_one_that_does_not() -> None:
    async def scenario() -> None:
        service = ApiService(Storage(MemoryStore()), clock=FakeClock().now)
        await service.ensure_namespaces()
        pods = lookup("", "v1", "pods")
        assert pods is not None
        warned = await service.create(pods, "default", pod("a"))  # as over HTTP: the warnings are answered
        assert warned.warnings == [WARNING]
        quiet = await service.create(pods, "default", pod("b"), warn=False)
        assert quiet.warnings == []  # not computed
        through_client = await LocalClient(service).create(PODS, "default", pod("c"))
        assert comparable(quiet.obj) == comparable(warned.obj) == comparable(through_client)
        # updates and patches with warn=False store what the same write stores with it
        patched = await service.patch(
            pods, "default", "a", "application/strategic-merge-patch+json", {"metadata": {"labels": {"x": "1"}}}
        )
        quiet_patched = await service.patch(
            pods,
            "default",
            "b",
            "application/strategic-merge-patch+json",
            {"metadata": {"labels": {"x": "1"}}},
            warn=False,
        )
        assert comparable(patched.obj) == comparable(quiet_patched.obj)
        body = copy.deepcopy(quiet_patched.obj)
        body["metadata"]["labels"]["y"] = "2"
        updated = await service.update(pods, "default", "b", body, warn=False)
        assert updated.obj["metadata"]["labels"] == {"app": "w", "x": "1", "y": "2"}

    asyncio.run(scenario())


def test_skipping_the_warnings_changes_no_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    """A simulated run with failures, OOM kills, drains and preemptions on two nodes: the same Job status, every
    pod's final state and the same trace whether the in-process writes have their warnings computed or not."""
    options = SimulationOptions(model=parse_model(MIXED), seed=11, nodes=2)
    assert LocalClient.warn is False
    without = final_pods(options)
    monkeypatch.setattr(LocalClient, "warn", True)
    with_warnings = final_pods(options)
    assert without[0].get("failedIndexes") and without[0].get("completedIndexes")
    assert without == with_warnings
