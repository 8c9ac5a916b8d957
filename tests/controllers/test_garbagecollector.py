"""Garbage collector on virtual time, beside the API service's own Job→pod cascade."""

from __future__ import annotations

import asyncio
from typing import Any

from kjobs.api.types import Obj
from kjobs.client.resources import JOBS, LEASES, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.garbagecollector import GarbageCollector, GarbageCollectorSettings
from tests.controllers.disruption_support import get_or_none, pod_manifest
from tests.support import local_api, settle


async def start() -> tuple[FakeClock, Any, GarbageCollector]:
    clock = FakeClock()
    client = await local_api(clock)
    gc = GarbageCollector(client, clock=clock, settings=GarbageCollectorSettings(resources=(PODS, JOBS, LEASES)))
    return clock, client, gc


async def make_job(client: Any, name: str = "owner", finalizers: list[str] | None = None) -> Obj:
    body: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
    }
    if finalizers:
        body["metadata"]["finalizers"] = finalizers
    job: Obj = await client.create(JOBS, "default", body)
    return job


def owned_by(job: Obj, *, block: bool = True) -> list[Obj]:
    return [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": job["metadata"]["name"],
            "uid": job["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": block,
        }
    ]


async def make_lease(client: Any, name: str, owners: list[Obj]) -> None:
    await client.create(
        LEASES,
        "default",
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": name, "namespace": "default", "ownerReferences": owners},
            "spec": {"holderIdentity": name},
        },
    )


def gone(gc: GarbageCollector, resource: Any, name: str) -> bool:
    return gc.informers[resource].get("default", name) is None


def test_background_dependents_of_a_deleted_owner_are_collected() -> None:
    async def scenario() -> None:
        clock, client, gc = await start()
        job = await make_job(client)
        other = await make_job(client, "other")
        await make_lease(client, "dependent", owned_by(job))
        await make_lease(client, "two-owners", [*owned_by(job), dict(owned_by(other)[0], controller=False)])
        await make_lease(client, "unrelated", owned_by(other))
        await gc.start()
        await client.delete(JOBS, "default", "owner", propagation_policy="Background")
        await settle(clock, lambda: gone(gc, LEASES, "dependent"), max_virtual=5)

        def trimmed() -> bool:
            lease = gc.informers[LEASES].get("default", "two-owners")
            return lease is not None and len(lease["metadata"]["ownerReferences"]) == 1

        await settle(clock, trimmed, max_virtual=5)
        lease = await client.get(LEASES, "default", "two-owners")
        assert [r["name"] for r in lease["metadata"]["ownerReferences"]] == ["other"]
        assert await get_or_none(client, LEASES, "default", "unrelated") is not None
        await gc.stop()

    asyncio.run(scenario())


def test_dependent_whose_owner_never_existed_is_deleted_at_startup() -> None:
    async def scenario() -> None:
        clock, client, gc = await start()
        ghost = {"metadata": {"name": "ghost", "uid": "00000000-0000-0000-0000-000000000000"}}
        body = pod_manifest("stray", None)
        body["metadata"]["ownerReferences"] = owned_by(ghost)
        await client.create(PODS, "default", body)
        await client.create(PODS, "default", pod_manifest("free", None))
        await gc.start()
        await settle(clock, lambda: gone(gc, PODS, "stray"), max_virtual=5)
        assert await get_or_none(client, PODS, "default", "free") is not None
        await gc.stop()

    asyncio.run(scenario())


def test_foreground_owner_waits_for_its_pods_and_goes_when_they_are_gone() -> None:
    async def scenario() -> None:
        clock, client, gc = await start()
        job = await make_job(client)
        body = pod_manifest("blocker", "n1")
        body["metadata"]["ownerReferences"] = owned_by(job)
        await client.create(PODS, "default", body)
        pod = await client.get(PODS, "default", "blocker")
        pod["status"]["phase"] = "Running"
        await client.update(PODS, "default", pod, subresource="status")
        await gc.start()
        await client.delete(JOBS, "default", "owner", propagation_policy="Foreground")
        clock.advance(5)
        await settle(clock, lambda: True)
        waiting = await client.get(JOBS, "default", "owner")
        assert "foregroundDeletion" in waiting["metadata"]["finalizers"]
        assert (await client.get(PODS, "default", "blocker"))["metadata"].get("deletionTimestamp")
        # The pod is force-deleted (no node agent finishes it): the collector releases the owner.
        await client.delete(PODS, "default", "blocker", grace_period_seconds=0)
        await settle(clock, lambda: gone(gc, JOBS, "owner"), max_virtual=5)
        assert await get_or_none(client, JOBS, "default", "owner") is None
        await gc.stop()

    asyncio.run(scenario())


def test_orphan_finalizer_strips_references_then_releases_the_owner() -> None:
    async def scenario() -> None:
        clock, client, gc = await start()
        job = await make_job(client, finalizers=["orphan"])
        await make_lease(client, "survivor", owned_by(job))
        await gc.start()
        await client.delete(JOBS, "default", "owner", propagation_policy="Orphan")
        await settle(clock, lambda: gone(gc, JOBS, "owner"), max_virtual=5)
        lease = await client.get(LEASES, "default", "survivor")
        assert not lease["metadata"].get("ownerReferences")
        await gc.stop()

    asyncio.run(scenario())


def test_orphaned_job_pods_survive_the_collector() -> None:
    async def scenario() -> None:
        clock, client, gc = await start()
        job = await make_job(client)
        body = pod_manifest("kept", None)
        body["metadata"]["ownerReferences"] = owned_by(job)
        await client.create(PODS, "default", body)
        await gc.start()
        await client.delete(JOBS, "default", "owner")  # batch/v1 Jobs default to Orphan
        clock.advance(5)
        await settle(clock, lambda: gone(gc, JOBS, "owner"), max_virtual=5)
        clock.advance(5)
        await settle(clock, lambda: True)
        pod = await client.get(PODS, "default", "kept")
        assert not pod["metadata"].get("ownerReferences") and not pod["metadata"].get("deletionTimestamp")
        await gc.stop()

    asyncio.run(scenario())


def test_a_finalizer_the_collector_does_not_act_on_leaves_its_graph_as_it_was() -> None:
    """The Job controller removes each pod's tracking finalizer: the collector keeps the pod's graph node and
    only takes the newer object, as for a status change, instead of filing the pod again (once a pod); its
    own finalizers, `orphan` and `foregroundDeletion`, still count as changes."""

    async def scenario() -> None:
        clock, client, gc = await start()
        job = await make_job(client)
        body = pod_manifest("tracked", "n1")
        body["metadata"]["ownerReferences"] = owned_by(job)
        body["metadata"]["finalizers"] = ["batch.kubernetes.io/job-tracking"]
        pod = await client.create(PODS, "default", body)
        await gc.start()
        await settle(clock, lambda: pod["metadata"]["uid"] in gc.nodes)
        node = gc.nodes[pod["metadata"]["uid"]]
        patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["batch.kubernetes.io/job-tracking"]}}
        untracked = await client.patch(PODS, "default", "tracked", patch)
        await settle(clock, lambda: gc.nodes[pod["metadata"]["uid"]].obj["metadata"].get("finalizers") is None)
        assert gc.nodes[pod["metadata"]["uid"]] is node
        assert node.obj["metadata"]["resourceVersion"] == untracked["metadata"]["resourceVersion"]
        await client.patch(PODS, "default", "tracked", {"metadata": {"finalizers": ["orphan"]}})
        await settle(clock, lambda: gc.nodes[pod["metadata"]["uid"]] is not node)
        assert gc.nodes[pod["metadata"]["uid"]].obj["metadata"]["finalizers"] == ["orphan"]
        await gc.stop()

    asyncio.run(scenario())


def test_a_service_owned_by_a_job_goes_with_it() -> None:
    """A headless Service beside an Indexed Job, owned by it (as JobSet and users' tools make them): the garbage
    collector's default resources include Services, so it goes when its Job does."""
    from kjobs.client.resources import SERVICES
    from kjobs.controllers.garbagecollector import GarbageCollectorSettings as Settings

    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        gc = GarbageCollector(client, clock=clock, settings=Settings())
        job = await make_job(client)
        service = {"metadata": {"name": "headless", "ownerReferences": owned_by(job)}, "spec": {"clusterIP": "None"}}
        await client.create(SERVICES, "default", service)
        await gc.start()
        await client.delete(JOBS, "default", "owner", propagation_policy="Background")
        await settle(clock, lambda: gone(gc, SERVICES, "headless"), max_virtual=5)
        assert await get_or_none(client, SERVICES, "default", "headless") is None
        await gc.stop()

    asyncio.run(scenario())


def test_a_namespace_deleted_with_orphan_or_foreground_is_finished_by_the_collector() -> None:
    """`kubectl delete ns --cascade=orphan|foreground`: the namespace registry adds `orphan`/`foregroundDeletion`
    (pkg/registry/core/namespace/storage/storage.go `Delete`); the collector orphans or deletes the namespace's own
    dependents (here a ConfigMap elsewhere that names it as owner), removes the finalizer, and the namespace goes."""
    from kjobs.client.resources import CONFIG_MAPS, NAMESPACES

    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        gc = GarbageCollector(
            client, clock=clock, settings=GarbageCollectorSettings(resources=(CONFIG_MAPS, NAMESPACES))
        )
        owners = {}
        for name in ("kept-deps", "gone-deps"):
            ns = await client.create(NAMESPACES, None, {"metadata": {"name": name}})
            ref = {"apiVersion": "v1", "kind": "Namespace", "name": name, "uid": ns["metadata"]["uid"]}
            owners[name] = ref
            body = {"metadata": {"name": f"of-{name}", "ownerReferences": [dict(ref, blockOwnerDeletion=True)]}}
            await client.create(CONFIG_MAPS, "default", body)
        await gc.start()
        await client.delete(NAMESPACES, None, "kept-deps", propagation_policy="Orphan")
        await client.delete(NAMESPACES, None, "gone-deps", propagation_policy="Foreground")

        def finished() -> bool:
            return all(gc.informers[NAMESPACES].get("", n) is None for n in owners)

        await settle(clock, finished, max_virtual=5)
        orphaned = await get_or_none(client, CONFIG_MAPS, "default", "of-kept-deps")
        assert orphaned is not None and "ownerReferences" not in orphaned["metadata"]
        assert await get_or_none(client, CONFIG_MAPS, "default", "of-gone-deps") is None
        await gc.stop()

    asyncio.run(scenario())
    assert NAMESPACES in GarbageCollectorSettings().resources  # what `kjobs up` runs
