"""Upstream test/integration/evictions/evictions_test.go, run against kjobs' Eviction API.

Upstream starts kube-apiserver with the disruption controller and plays the kubelet by hand (pod statuses
written with UpdateStatus). Here: kjobs' in-process API on virtual time, kjobs' real `DisruptionController`,
and the test writing pod statuses through the API; the `wait.PollImmediate` loops become `settle` on virtual
time. `TestEvictionVersions` speaks HTTP to the ASGI app, since it is about the wire (versions, verbs).
Rows, and those left out: docs/upstream-components.md.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import PDBS, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.disruption import DisruptionController
from kjobs.server.app import create_app
from kjobs.store import MemoryStore
from tests.support import local_api, settle

NS = "default"
NUM_OF_EVICTIONS = 10
GRACE_30 = {"gracePeriodSeconds": 30}


def new_pod(name: str) -> Obj:
    """`newPod`: labelled app=test-evictions, not scheduled (so a delete removes it at once)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "test-evictions"}},
        "spec": {"containers": [{"name": "fake-name", "image": "fakeimage"}]},
    }


def new_pdb(policy: str | None = None) -> Obj:
    """`newPDB`: minAvailable 0 over app=test-evictions."""
    spec: Obj = {"minAvailable": 0, "selector": {"matchLabels": {"app": "test-evictions"}}}
    if policy is not None:
        spec["unhealthyPodEvictionPolicy"] = policy
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "test-pdb"}, "spec": spec}


def new_v1_eviction(name: str, delete_options: Obj) -> Obj:
    """`newV1Eviction`."""
    return {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": NS},
        "deleteOptions": delete_options,
    }


@dataclass
class Cluster:
    """`rmSetup`: the API, the disruption controller (whose informers are the test's), virtual time."""

    clock: FakeClock
    client: LocalClient
    controller: DisruptionController

    async def create_pod(
        self, name: str, phase: str, *, ready: bool = True, finalizers: list[str] | None = None
    ) -> Obj:
        """Create `newPod(name)` and write its status as upstream's UpdateStatus does; returns both versions."""
        body = new_pod(name)
        if finalizers:
            body["metadata"]["finalizers"] = finalizers
        created = await self.client.create(PODS, NS, body)
        pod = dict(created, status=dict(created.get("status") or {}, phase=phase))
        if ready:
            pod["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
        updated = await self.client.update(PODS, NS, pod, subresource="status")
        return {"created": created, "updated": updated}

    async def wait_to_observe_pods(self, count: int, phase: str) -> None:
        """`waitToObservePods`: the controller's pod informer holds `count` pods, all in `phase`."""

        def seen() -> bool:
            pods = self.controller.pods.list(NS)
            return len(pods) == count and all((p.get("status") or {}).get("phase") == phase for p in pods)

        await settle(self.clock, seen, max_virtual=60)

    async def wait_pdb(self, check: Callable[[Obj], bool]) -> Obj:
        """`waitPDB`: poll the PDB through the API until `check` holds (60 s of virtual time at most)."""
        found: dict[str, Obj] = {}

        async def poll() -> None:
            while True:
                pdb = await self.client.get(PDBS, NS, "test-pdb")
                if check(pdb):
                    found["pdb"] = pdb
                    return
                await self.clock.sleep(2)

        task = asyncio.get_running_loop().create_task(poll())
        await settle(self.clock, task.done, max_virtual=60)
        task.result()
        return found["pdb"]

    async def wait_pdb_stable(self, healthy: int) -> Obj:
        """`waitPDBStable`: status.currentHealthy == `healthy`."""
        return await self.wait_pdb(lambda pdb: (pdb.get("status") or {}).get("currentHealthy") == healthy)

    async def evict(self, name: str, delete_options: Obj) -> ApiError | None:
        """One POST to pods/{name}/eviction (upstream's no-retries client: one call, its error)."""
        try:
            await self.client.post_subresource(PODS, NS, name, "eviction", new_v1_eviction(name, delete_options))
        except ApiError as exc:
            return exc
        return None

    async def evict_until_allowed(self, name: str, delete_options: Obj) -> None:
        """Upstream's `wait.PollImmediate(5s, 60s)` around Evict: 429 retries, 409 is the failure it guards."""
        for _ in range(13):
            error = await self.evict(name, delete_options)
            if error is None:
                return
            assert error.code == 429, f"Unexpected Conflict (409) or other error: {error.code} {error.message}"
            await self.clock.sleep(5)
        raise AssertionError(f"eviction of {name} still refused after 60s")

    async def get_pod(self, name: str) -> Obj | None:
        try:
            return await self.client.get(PODS, NS, name)
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise


@asynccontextmanager
async def rm_setup() -> AsyncIterator[Cluster]:
    clock = FakeClock()
    client = await local_api(clock)
    controller = DisruptionController(client, clock=clock)
    await controller.start()
    try:
        yield Cluster(clock, client, controller)
    finally:
        await controller.stop()


def run(scenario: Callable[[Cluster], Any]) -> None:
    async def main() -> None:
        async with rm_setup() as cluster:
            await scenario(cluster)

    asyncio.run(main())


# ----------------------------------------------------------------------------------------------------------- tests


def test_concurrent_eviction_requests() -> None:
    """TestConcurrentEvictionRequests (#37605): ten evictions at once against one budget all go through, with
    no 409 from the concurrent updates of the budget's status."""

    async def scenario(c: Cluster) -> None:
        names = [f"test-pod-{i}" for i in range(NUM_OF_EVICTIONS)]
        for name in names:
            await c.create_pod(name, "Running")
        await c.wait_to_observe_pods(NUM_OF_EVICTIONS, "Running")
        await c.client.create(PDBS, NS, new_pdb())
        await c.wait_pdb_stable(NUM_OF_EVICTIONS)

        async def evict(name: str) -> bool:
            await c.evict_until_allowed(name, GRACE_30)
            return await c.get_pod(name) is None

        tasks = [asyncio.get_running_loop().create_task(evict(name)) for name in names]
        await settle(c.clock, lambda: all(t.done() for t in tasks), max_virtual=120)
        assert [t.result() for t in tasks] == [True] * NUM_OF_EVICTIONS  # every pod evicted and gone
        await c.client.delete(PDBS, NS, "test-pdb", grace_period_seconds=30)

    run(scenario)


def test_terminal_pod_eviction() -> None:
    """TestTerminalPodEviction: a terminal pod is evicted without its budget being consulted."""

    async def scenario(c: Cluster) -> None:
        await c.create_pod("test-terminal-pod1", "Succeeded")
        await c.wait_to_observe_pods(1, "Succeeded")
        await c.client.create(PDBS, NS, new_pdb())
        await c.wait_pdb_stable(1)
        old = (await c.client.list(PDBS, NS))[0][0]
        await c.evict_until_allowed("test-terminal-pod1", GRACE_30)
        new = (await c.client.list(PDBS, NS))[0][0]
        assert new["status"]["observedGeneration"] == old["status"]["observedGeneration"]
        assert "disruptedPods" not in new["status"]  # kjobs: the budget was not used up either
        assert await c.get_pod("test-terminal-pod1") is None
        await c.client.delete(PDBS, NS, "test-pdb", grace_period_seconds=30)

    run(scenario)


DRY_RUN_ALL = {"dryRun": ["All"]}


@pytest.fixture
def asgi() -> Any:
    store = MemoryStore()
    app = create_app(store, resource_version_wait=0.05)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(app.startup())
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://kjobs")

    def request(method: str, url: str, **kw: Any) -> httpx.Response:
        return loop.run_until_complete(asyncio.wait_for(client.request(method, url, **kw), 30))

    yield request
    loop.run_until_complete(client.aclose())
    loop.close()
    store.close()


def test_eviction_versions(asgi: Callable[..., httpx.Response]) -> None:
    """TestEvictionVersions: pods/eviction takes only POST, of a policy/v1 or v1beta1 Eviction (or one that
    names no version), answers a v1 Status, and refuses an unknown version naming it."""
    pods = "/api/v1/namespaces/default/pods"
    assert asgi("POST", pods, json=new_pod("test")).status_code == 201
    got = asgi("GET", f"{pods}/test/eviction")
    assert (got.status_code, got.json()["reason"]) == (405, "MethodNotAllowed")  # IsMethodNotSupported
    for patch_type in ("json-patch+json", "merge-patch+json", "strategic-merge-patch+json", "apply-patch+yaml"):
        got = asgi("PATCH", f"{pods}/test/eviction", content=b"", headers={"content-type": f"application/{patch_type}"})
        assert (got.status_code, got.json()["reason"]) == (405, "MethodNotAllowed"), patch_type
    meta = {"name": "test", "creationTimestamp": None}  # as Go marshals an ObjectMeta
    allowed = [  # v1beta1 without and with apiVersion/kind, then v1 without and with (the same JSON untyped)
        {"metadata": meta, "deleteOptions": DRY_RUN_ALL},
        {"apiVersion": "policy/v1beta1", "kind": "Eviction", "metadata": meta, "deleteOptions": DRY_RUN_ALL},
        {"metadata": meta, "deleteOptions": DRY_RUN_ALL},
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": meta, "deleteOptions": DRY_RUN_ALL},
    ]
    for body in allowed:
        got = asgi("POST", f"{pods}/test/eviction", json=body)
        assert got.status_code == 201, got.text
        assert (got.json()["apiVersion"], got.json()["kind"]) == ("v1", "Status")
    unknown = {"metadata": {"name": "test"}, "apiVersion": "policy/v2", "kind": "Eviction"}
    got = asgi("POST", f"{pods}/test/eviction", json=unknown)
    assert got.status_code == 400 and "policy/v2" in got.json()["message"], got.text
    assert got.json()["message"] == (
        'Eviction in version "v2" cannot be handled as a Eviction: no kind "Eviction" is registered for version '
        '"policy/v2" in scheme "pkg/api/legacyscheme/scheme.go:30"'
    )
    assert asgi("GET", f"{pods}/test").status_code == 200  # every accepted one was a dry run


FINALIZERS = [
    pytest.param("Succeeded", False, True, id="terminal pod"),
    pytest.param("Running", False, True, id="running pod"),
    pytest.param("Running", True, False, id="running pod should not update conditions in dry-run mode"),
]


@pytest.mark.parametrize(("phase", "dry_run", "want_disruption_target"), FINALIZERS)
def test_eviction_with_finalizers(phase: str, dry_run: bool, want_disruption_target: bool) -> None:
    """TestEvictionWithFinalizers: the pod a finalizer keeps shows `DisruptionTarget` after its eviction,
    unless the eviction was a dry run."""

    async def scenario(c: Cluster) -> None:
        await c.create_pod("pod", phase, finalizers=["test.k8s.io/finalizer"])
        await c.wait_to_observe_pods(1, phase)
        assert await c.evict("pod", DRY_RUN_ALL if dry_run else {}) is None
        pod = await c.client.get(PODS, NS, "pod")
        target = [x for x in pod["status"].get("conditions") or [] if x["type"] == "DisruptionTarget"]
        if want_disruption_target:
            assert [(x["status"], x["reason"]) for x in target] == [("True", "EvictionByEvictionAPI")]
            assert pod["metadata"].get("deletionTimestamp")
        else:
            assert target == []
            assert not pod["metadata"].get("deletionTimestamp")

    run(scenario)


UNHEALTHY = [
    pytest.param(None, True, id="UnhealthyPodEvictionPolicy enabled but policy not set"),
    pytest.param(
        "IfHealthyBudget",
        True,
        id="UnhealthyPodEvictionPolicy enabled but policy set to IfHealthyBudget with ready pod",
    ),
    pytest.param(
        "AlwaysAllow", True, id="UnhealthyPodEvictionPolicy enabled but policy set to AlwaysAllow with ready pod"
    ),
    pytest.param(
        "AlwaysAllow", False, id="UnhealthyPodEvictionPolicy enabled but policy set to AlwaysAllow with unready pod"
    ),
]


@pytest.mark.parametrize(("policy", "ready"), UNHEALTHY)
def test_eviction_with_unhealthy_pod_eviction_policy(policy: str | None, ready: bool) -> None:
    """TestEvictionWithUnhealthyPodEvictionPolicy: the first eviction succeeds (no 429 to retry), the pod goes
    and the budget then counts no healthy pod."""

    async def scenario(c: Cluster) -> None:
        await c.create_pod("pod", "Running", ready=ready)
        await c.wait_to_observe_pods(1, "Running")
        await c.client.create(PDBS, NS, new_pdb(policy))
        if ready:
            await c.wait_pdb_stable(1)
        else:
            await c.wait_pdb(lambda pdb: (pdb.get("status") or {}).get("expectedPods") == 1)
        assert await c.evict("pod", {}) is None  # a single POST
        await c.wait_to_observe_pods(0, "Running")
        await c.wait_pdb_stable(0)

    run(scenario)


@dataclass(frozen=True)
class Precondition:
    enforce_resource_version: bool = False
    inject_wrong_resource_version: bool = False
    enforce_uid: bool = False
    inject_wrong_uid: bool = False
    should_err: bool = False


PRECONDITIONS = [
    pytest.param(Precondition(enforce_resource_version=True), id="eviction enforcing resource version"),
    pytest.param(Precondition(enforce_uid=True), id="eviction enforcing UID"),
    pytest.param(
        Precondition(enforce_uid=True, enforce_resource_version=True),
        id="eviction enforcing resource version and UID",
    ),
    pytest.param(
        Precondition(enforce_resource_version=True, inject_wrong_resource_version=True, should_err=True),
        id="eviction enforcing wrong resource version should fail",
    ),
    pytest.param(
        Precondition(enforce_uid=True, inject_wrong_uid=True, should_err=True),
        id="eviction enforcing wrong UID should fail",
    ),
]


@pytest.mark.parametrize("row", PRECONDITIONS)
def test_eviction_with_precondition(row: Precondition) -> None:
    """TestEvictionWithPrecondition: `deleteOptions.preconditions` hold the eviction to the pod's uid and
    resourceVersion; a stale resourceVersion or another uid fails it (409, the pod stays)."""

    async def scenario(c: Cluster) -> None:
        versions = await c.create_pod("pod", "Running")
        created, updated = versions["created"], versions["updated"]
        await c.wait_to_observe_pods(1, "Running")
        preconditions: Obj = {}
        if row.enforce_resource_version:
            source = created if row.inject_wrong_resource_version else updated
            preconditions["resourceVersion"] = source["metadata"]["resourceVersion"]
        if row.enforce_uid:
            preconditions["uid"] = str(uuid.uuid4()) if row.inject_wrong_uid else updated["metadata"]["uid"]
        options: Obj = {"preconditions": preconditions} if preconditions else {}
        error = await c.evict("pod", options)
        if row.should_err:
            assert error is not None and (error.code, error.reason) == (409, "Conflict"), error
            assert await c.get_pod("pod") is not None
        else:
            assert error is None, error
            assert await c.get_pod("pod") is None

    run(scenario)
