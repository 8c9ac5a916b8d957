"""Upstream rows of test/integration/garbagecollector/garbage_collector_test.go and
pkg/controller/garbagecollector/garbagecollector_test.go, with Jobs as owners (upstream's ReplicationControllers)
and pods as dependents, driven through kjobs' API service and its garbage collector on virtual time
(docs/upstream-gc-ttl.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.client.resources import JOBS, LEASES, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.garbagecollector import GarbageCollector, GarbageCollectorSettings
from kjobs.server.registry import lookup
from tests.controllers.disruption_support import get_or_none, pod_manifest
from tests.controllers.test_garbagecollector import make_job, start
from tests.controllers.upstream_support import Recording, run_for
from tests.support import settle


def run(body: Callable[[FakeClock, Any, GarbageCollector], Awaitable[None]]) -> None:
    async def scenario() -> None:
        clock, client, gc = await start()
        await gc.start()
        try:
            await body(clock, client, gc)
        finally:
            await gc.stop()

    asyncio.run(scenario())


def absent(client: Any, resource: Any, name: str) -> bool:
    """Not stored (read off the API's store: the collector's informers may not have seen it created yet)."""
    r = lookup(resource.group, resource.version, resource.plural)
    assert r is not None
    return client.service.store.get(r.store_key, "default", name) is None


def ref(job: Obj, block: bool | None = None) -> Obj:
    out: Obj = {"apiVersion": "batch/v1", "kind": "Job", "name": job["metadata"]["name"], "uid": job["metadata"]["uid"]}
    if block is not None:
        out["blockOwnerDeletion"] = block
    return out


async def make_pod(client: Any, name: str, owners: list[Obj], finalizers: list[str] | None = None) -> None:
    body = pod_manifest(name, None)
    body["metadata"]["ownerReferences"] = owners
    if finalizers:
        body["metadata"]["finalizers"] = finalizers
    await client.create(PODS, "default", body)


async def owner_uids(client: Any, name: str) -> list[str]:
    pod = await client.get(PODS, "default", name)
    return [r["uid"] for r in pod["metadata"].get("ownerReferences") or []]


async def release(client: Any, name: str) -> None:
    """Remove the pod's `x/y` finalizer (what its owner of the finalizer would do)."""
    await client.patch(PODS, "default", name, {"metadata": {"finalizers": None}}, patch_type="merge")


def test_TestCascadingDeletion() -> None:
    """Deleting one of two owners (Background): its only dependent goes; the dependent it shares with a solid
    owner stays, with the deleted owner's reference removed; the other owner's dependent stays."""

    async def body(clock: FakeClock, client: Any, gc: GarbageCollector) -> None:
        doomed = await make_job(client, "to-be-deleted-rc")
        remaining = await make_job(client, "remaining-rc")
        await make_pod(client, "test-pod-1", [ref(doomed)])
        await make_pod(client, "test-pod-2", [ref(doomed), ref(remaining)])
        await make_pod(client, "test-pod-3", [ref(remaining)])
        await client.delete(JOBS, "default", "to-be-deleted-rc", propagation_policy="Background")
        await settle(clock, lambda: absent(client, PODS, "test-pod-1"), max_virtual=60)
        await run_for(clock, 30)
        assert await owner_uids(client, "test-pod-2") == [remaining["metadata"]["uid"]]
        assert await owner_uids(client, "test-pod-3") == [remaining["metadata"]["uid"]]

    run(body)


@pytest.mark.parametrize("uid_mismatch", [False, True], ids=["nonexistent", "owner-uid-mismatch"])
def test_TestCreateWithNonExistentOwner(uid_mismatch: bool) -> None:
    """A pod whose owner does not exist — or exists with another uid (garbagecollector_test.go's dangling
    owner with the same name) — is deleted."""

    async def body(clock: FakeClock, client: Any, gc: GarbageCollector) -> None:
        owner: Obj = {"metadata": {"name": "doesnotexist", "uid": "doesnotexist"}}
        if uid_mismatch:
            await make_job(client, "doesnotexist")
        await make_pod(client, "pod", [ref(owner)])
        await settle(clock, lambda: absent(client, PODS, "pod"), max_virtual=60)
        assert await get_or_none(client, PODS, "default", "pod") is None
        if uid_mismatch:
            assert await client.get(JOBS, "default", "doesnotexist")

    run(body)


def test_TestBlockingOwnerRefDoesBlock() -> None:
    """Foreground deletion waits for a dependent with blockOwnerDeletion: the owner stays while the pod (held
    by a finalizer) exists, and goes once it is gone."""

    async def body(clock: FakeClock, client: Any, gc: GarbageCollector) -> None:
        job = await make_job(client, "foo")
        await make_pod(client, "pod", [ref(job, True)], ["x/y"])
        await client.delete(JOBS, "default", "foo", propagation_policy="Foreground")
        await run_for(clock, 30)
        assert (await client.get(JOBS, "default", "foo"))["metadata"]["deletionTimestamp"]
        assert (await client.get(PODS, "default", "pod"))["metadata"]["deletionTimestamp"]
        await release(client, "pod")
        await settle(clock, lambda: absent(client, JOBS, "foo"), max_virtual=60)
        assert await get_or_none(client, JOBS, "default", "foo") is None

    run(body)


def test_TestNonBlockingOwnerRefDoesNotBlock() -> None:
    """Foreground deletion does not wait for dependents whose blockOwnerDeletion is false or unset: the owner
    goes while they (held by a finalizer) remain."""

    async def body(clock: FakeClock, client: Any, gc: GarbageCollector) -> None:
        job = await make_job(client, "foo")
        await make_pod(client, "pod1", [ref(job, False)], ["x/y"])
        await make_pod(client, "pod2", [ref(job)], ["x/y"])
        await client.delete(JOBS, "default", "foo", propagation_policy="Foreground")
        await settle(clock, lambda: absent(client, JOBS, "foo"), max_virtual=60)
        assert await get_or_none(client, JOBS, "default", "foo") is None
        for name in ("pod1", "pod2"):
            assert (await client.get(PODS, "default", name))["metadata"]["finalizers"] == ["x/y"]

    run(body)


def test_TestOrphaning() -> None:
    """An Orphan deletion: the owner goes, its dependents stay without the reference to it."""

    async def body(clock: FakeClock, client: Any, gc: GarbageCollector) -> None:
        job = await make_job(client, "to-be-deleted")
        for i in range(3):
            await make_pod(client, f"pod-{i}", [ref(job, True)])
        await client.delete(JOBS, "default", "to-be-deleted", propagation_policy="Orphan")
        await settle(clock, lambda: absent(client, JOBS, "to-be-deleted"), max_virtual=60)
        await run_for(clock, 30)
        for i in range(3):
            pod = await client.get(PODS, "default", f"pod-{i}")
            assert not pod["metadata"].get("ownerReferences") and not pod["metadata"].get("deletionTimestamp")

    run(body)


def test_TestSolidOwnerDoesNotBlockWaitingOwner() -> None:
    """A dependent blocking an owner deleted in the foreground but with another, solid owner is not deleted: the
    waiting owner's reference is removed, which releases that owner."""

    async def body(clock: FakeClock, client: Any, gc: GarbageCollector) -> None:
        waiting = await make_job(client, "to-be-deleted")
        solid = await make_job(client, "remaining")
        await make_pod(client, "pod", [ref(waiting, True), ref(solid)])
        await client.delete(JOBS, "default", "to-be-deleted", propagation_policy="Foreground")
        await settle(clock, lambda: absent(client, JOBS, "to-be-deleted"), max_virtual=60)
        pod = await client.get(PODS, "default", "pod")
        assert not pod["metadata"].get("deletionTimestamp")
        assert await owner_uids(client, "pod") == [solid["metadata"]["uid"]]

    run(body)


def test_attemptToDeleteItem_dependent_of_a_dangling_and_a_waiting_owner_goes_in_the_foreground() -> None:
    """garbagecollector.go: with no solid owner, only a waiting one (and dependents of its own), the dependent
    is deleted in the foreground so the chain is honoured (a Lease owning nothing here: plain deletion)."""

    async def body(clock: FakeClock, client: Any, gc: GarbageCollector) -> None:
        waiting = await make_job(client, "waiting")
        await make_pod(client, "holder", [ref(waiting, True)], ["x/y"])
        lease_owner = await client.get(JOBS, "default", "waiting")
        await client.create(
            LEASES,
            "default",
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": "l", "namespace": "default", "ownerReferences": [ref(lease_owner, True)]},
                "spec": {},
            },
        )
        await client.delete(JOBS, "default", "waiting", propagation_policy="Foreground")
        await settle(clock, lambda: absent(client, LEASES, "l"), max_virtual=60)
        assert (await client.get(JOBS, "default", "waiting"))["metadata"]["deletionTimestamp"]
        await release(client, "holder")
        await settle(clock, lambda: absent(client, JOBS, "waiting"), max_virtual=60)

    run(body)


def test_TestUnblockOwnerReference_a_cycle_of_foreground_deletions_ends() -> None:
    """A Job and a Lease owning each other with blockOwnerDeletion: the Job deleted in the foreground waits for
    the Lease, which, deleted in the foreground in turn, would wait for the Job. The collector makes the Lease's
    references non-blocking (`unblockOwnerReferencesStrategicMergePatch`: true becomes false, false and unset
    stay), so both go."""

    async def body(clock: FakeClock, client: Any, gc: GarbageCollector) -> None:
        job = await make_job(client, "a")
        await client.create(
            LEASES,
            "default",
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": "l", "namespace": "default", "ownerReferences": [ref(job, True)]},
                "spec": {},
            },
        )
        lease = await client.get(LEASES, "default", "l")
        back = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "name": "l",
            "uid": lease["metadata"]["uid"],
            "blockOwnerDeletion": True,
        }
        await client.patch(JOBS, "default", "a", {"metadata": {"ownerReferences": [back]}}, patch_type="merge")
        await client.delete(JOBS, "default", "a", propagation_policy="Foreground")
        await settle(clock, lambda: absent(client, JOBS, "a") and absent(client, LEASES, "l"), max_virtual=120)

    run(body)


def event_obj(uid: str, owners: list[str]) -> Obj:
    refs = [{"apiVersion": "v1", "kind": "Pod", "name": f"pod-{o}", "uid": o} for o in owners]
    return {"metadata": {"name": f"pod-{uid}", "namespace": "default", "uid": uid, "ownerReferences": refs}}


@pytest.mark.parametrize(
    "events",
    [
        pytest.param([("add", "1", []), ("add", "2", ["1"]), ("add", "3", ["1", "2"])], id="test1"),
        pytest.param(
            [("add", "1", []), ("add", "2", ["1"]), ("add", "3", ["1", "2"]), ("add", "4", ["2"]), ("delete", "2", [])],
            id="test2",
        ),
        pytest.param(
            [
                ("add", "1", []),
                ("add", "2", ["1"]),
                ("add", "3", ["1", "2"]),
                ("add", "4", ["3"]),
                ("update", "2", ["4"]),
            ],
            id="test3",
        ),
        pytest.param(
            [("add", "4", ["2"]), ("add", "3", ["1", "2"]), ("add", "2", ["1"]), ("add", "1", []), ("delete", "2", [])],
            id="reverse test2",
        ),
    ],
)
def test_TestProcessEvent_graph_invariants(events: list[tuple[str, str, list[str]]]) -> None:
    """`verifyGraphInvariants` after each event: every dependent an owner lists names it among its owners, and
    every owner in the graph lists each object naming it. (A delete carries the object as last seen, as an
    informer gives it; upstream's fake delete events carry made-up owners the graph ignores.)"""

    async def scenario() -> None:
        _, _, gc = await start()
        seen: dict[str, Obj] = {}
        for kind, uid, owners in events:
            old = seen.get(uid)
            new = None if kind == "delete" else event_obj(uid, owners)
            gc._observe(PODS, old, new)
            if new is None:
                seen.pop(uid, None)
            else:
                seen[uid] = new
            for owner, dependents in gc.dependents.items():
                for dependent in dependents:
                    node = gc.nodes.get(dependent)
                    assert node is not None, (owner, dependent)
                    assert owner in {r["uid"] for r in node.obj["metadata"]["ownerReferences"]}
            for uid_, node in gc.nodes.items():
                for r in node.obj["metadata"]["ownerReferences"]:
                    assert uid_ in gc.dependents.get(r["uid"], set())

    asyncio.run(scenario())


def test_TestAttemptToDeleteItem() -> None:
    """A pod whose owner is absent: the collector reads the pod, looks the owner up (404) and deletes the pod, with
    its uid and resourceVersion as preconditions and no other write."""

    async def scenario() -> None:
        clock, client, _ = await start()
        rec = Recording(client)
        gc = GarbageCollector(rec, clock=clock, settings=GarbageCollectorSettings(resources=(PODS, JOBS)))
        await make_pod(client, "to-be-deleted-pod", [ref({"metadata": {"name": "owner1", "uid": "123"}})])
        pod = await client.get(PODS, "default", "to-be-deleted-pod")
        await gc.attempt_to_delete(("delete", PODS, "default", "to-be-deleted-pod", pod["metadata"]["uid"]))
        assert [(a.verb, a.resource, a.name) for a in rec.actions] == [("delete", "pods", "to-be-deleted-pod")]
        assert rec.actions[0].options["preconditions"] == {
            "uid": pod["metadata"]["uid"],
            "resourceVersion": pod["metadata"]["resourceVersion"],
        }
        assert absent(client, PODS, "to-be-deleted-pod")

    asyncio.run(scenario())
