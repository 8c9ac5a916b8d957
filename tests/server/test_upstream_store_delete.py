"""Upstream rows of the generic registry's DELETE (staging/src/k8s.io/apiserver/pkg/registry/generic/registry/
store_test.go, rest/delete.go, endpoints/handlers/delete.go) and test/integration/garbagecollector's
TestDoubleDeletionWithFinalizer, driven through kjobs' ApiService (docs/upstream-gc-ttl.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
import pytest

from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.client.resources import CONFIG_MAPS, JOBS, PODS
from kjobs.clock import FakeClock
from kjobs.server.registry import lookup
from kjobs.server.service import DeleteOptions
from tests.support import local_api


def run(body: Callable[[FakeClock, Any], Awaitable[None]]) -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        await body(clock, client)

    asyncio.run(scenario())


def pod(name: str, finalizers: list[str] | None = None, node: str | None = None) -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    meta: Obj = {"name": name, "namespace": "default"}
    if finalizers:
        meta["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def config_map(name: str, finalizers: list[str]) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "finalizers": finalizers}}


def job(name: str, finalizers: list[str] | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": "default"}
    if finalizers:
        meta["finalizers"] = finalizers
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
    }


async def held_by_a_dependent(client: Any, owner: Obj) -> None:
    """A ConfigMap that blocks `owner`'s foreground deletion (no garbage collector runs here to delete it), so
    `foregroundDeletion` stays to be seen."""
    ref = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "blockOwnerDeletion": True,
    }
    dependent = config_map("dependent", ["x/y"])
    dependent["metadata"]["ownerReferences"] = [ref]
    await client.create(CONFIG_MAPS, "default", dependent)


async def delete(client: Any, plural: str, name: str, options: DeleteOptions) -> Any:
    r = lookup("batch" if plural == "jobs" else "", "v1", plural)
    assert r is not None
    return await client.service.delete(r, "default", name, options)


def test_TestDoubleDeletionWithFinalizer() -> None:
    """Foreground, then Background: the second DELETE takes `foregroundDeletion` away; the pod keeps only the
    finalizer its owner put there."""

    async def body(clock: FakeClock, client: Any) -> None:
        owner = await client.create(PODS, "default", pod("p", ["x/y"]))
        await held_by_a_dependent(client, owner)
        await delete(client, "pods", "p", DeleteOptions(propagation="Foreground"))
        assert (await client.get(PODS, "default", "p"))["metadata"]["finalizers"] == ["x/y", "foregroundDeletion"]
        await delete(client, "pods", "p", DeleteOptions(propagation="Background"))
        assert (await client.get(PODS, "default", "p"))["metadata"]["finalizers"] == ["x/y"]

    run(body)


@pytest.mark.parametrize(
    ("finalizers", "propagation", "expected"),
    [
        # TestStoreDeleteWithOrphanDependents / TestStoreDeletionPropagation rows, for an object with a
        # finalizer of its own so that it stays to be read
        (["x/y", "orphan"], "Background", ["x/y"]),
        (["x/y", "foregroundDeletion"], "Background", ["x/y"]),
        (["x/y", "foregroundDeletion"], "Orphan", ["x/y", "orphan"]),
        (["x/y", "orphan"], "Foreground", ["x/y", "foregroundDeletion"]),
        (["x/y", "orphan"], "Orphan", ["x/y", "orphan"]),
        (["x/y"], "Background", ["x/y"]),
    ],
)
def test_TestStoreDeleteWithOrphanDependents_finalizers_follow_the_policy(
    finalizers: list[str], propagation: str, expected: list[str]
) -> None:
    async def body(clock: FakeClock, client: Any) -> None:
        owner = await client.create(CONFIG_MAPS, "default", config_map("c", finalizers))
        await held_by_a_dependent(client, owner)
        answer = (await delete(client, "configmaps", "c", DeleteOptions(propagation=propagation))).obj
        assert answer["metadata"]["finalizers"] == expected  # what the DELETE wrote and answered
        assert answer["metadata"]["deletionTimestamp"]
        got = await client.get(CONFIG_MAPS, "default", "c")
        # then the orphaning is done (the garbage collector's part, in process): `orphan` goes, the rest stays
        assert got["metadata"]["finalizers"] == [f for f in expected if f != "orphan"]
        assert got["metadata"]["deletionTimestamp"]

    run(body)


def test_TestStoreDeleteWithOrphanDependents_gc_finalizer_removed_object_goes() -> None:
    """A Background DELETE of an object whose only finalizer is `foregroundDeletion`: with it taken away nothing
    holds the object, which is deleted at once (`pendingFinalizers` false)."""

    async def body(clock: FakeClock, client: Any) -> None:
        await client.create(CONFIG_MAPS, "default", config_map("c", ["foregroundDeletion"]))
        await delete(client, "configmaps", "c", DeleteOptions(propagation="Background"))
        assert client.service.store.get("configmaps", "default", "c") is None

    run(body)


def test_TestStoreDeletionPropagation_finalizer_overrides_the_default() -> None:
    """A Job created with `foregroundDeletion` and deleted without a policy is deleted in the foreground (the
    finalizer overrides batch/v1's default, orphaning): its pod is deleted, not orphaned."""

    async def body(clock: FakeClock, client: Any) -> None:
        owner = await client.create(JOBS, "default", job("j", ["foregroundDeletion"]))
        dependent = pod("p")
        dependent["metadata"]["ownerReferences"] = [
            {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": owner["metadata"]["uid"]}
        ]
        await client.create(PODS, "default", dependent)
        await delete(client, "jobs", "j", DeleteOptions())
        assert client.service.store.get("pods", "default", "p") is None
        assert client.service.store.get("jobs", "default", "j") is None

    run(body)


def test_TestGracefulStoreHandleFinalizers_shorter_grace_moves_the_deletion_timestamp_back() -> None:
    """rest.BeforeDelete: a pod being deleted with 30s, deleted again 10s later with 20s, keeps its original
    deadline minus the 10s saved (deletionTimestamp - 30 + 20), not now + 20; a longer grace changes nothing."""

    async def body(clock: FakeClock, client: Any) -> None:
        await client.create(PODS, "default", pod("p", node="n1"))
        first = (await delete(client, "pods", "p", DeleteOptions(grace_period=30))).obj
        deadline = parse_time(first["metadata"]["deletionTimestamp"])
        clock.advance(10)
        longer = (await delete(client, "pods", "p", DeleteOptions(grace_period=60))).obj
        assert longer["metadata"]["deletionGracePeriodSeconds"] == 30
        assert parse_time(longer["metadata"]["deletionTimestamp"]) == deadline
        shorter = (await delete(client, "pods", "p", DeleteOptions(grace_period=20))).obj
        assert shorter["metadata"]["deletionGracePeriodSeconds"] == 20
        assert parse_time(shorter["metadata"]["deletionTimestamp"]) == deadline - 10

    run(body)


def test_BeforeDelete_negative_grace_period_counts_as_one_second() -> None:
    async def body(clock: FakeClock, client: Any) -> None:
        await client.create(PODS, "default", pod("p", node="n1"))
        got = (await delete(client, "pods", "p", DeleteOptions(grace_period=-5))).obj
        assert got["metadata"]["deletionGracePeriodSeconds"] == 1
        assert parse_time(got["metadata"]["deletionTimestamp"]) == clock.now() + 1

    run(body)


def test_TestGracefulStoreHandleFinalizers_pending_graceful_deletion_keeps_finalizers() -> None:
    """A DELETE while a graceful deletion is pending changes nothing, finalizers neither ("finalizers cannot be
    updated via DeleteOptions if a deletion is already pending", store.go)."""

    async def body(clock: FakeClock, client: Any) -> None:
        await client.create(PODS, "default", pod("p", ["x/y"], node="n1"))
        await delete(client, "pods", "p", DeleteOptions(grace_period=30))
        got = (await delete(client, "pods", "p", DeleteOptions(propagation="Foreground"))).obj
        assert got["metadata"]["finalizers"] == ["x/y"]

    run(body)


@pytest.mark.parametrize(("orphan", "code"), [("false", 202), ("true", 200), (None, 200)])
def test_delete_handler_answers_202_for_orphanDependents_false_not_yet_deleted(orphan: str | None, code: int) -> None:
    """endpoints/handlers/delete.go: 202 Accepted when the object was not deleted at once and the request sent
    `orphanDependents=false`; 200 otherwise."""

    async def body(clock: FakeClock, client: Any) -> None:
        await client.create(CONFIG_MAPS, "default", config_map("c", ["x/y"]))
        query = {} if orphan is None else {"orphanDependents": orphan}
        result = await delete(client, "configmaps", "c", DeleteOptions.parse(None, query))
        assert result.code == code

    run(body)


def test_delete_handler_answers_200_for_orphanDependents_false_deleted_at_once() -> None:
    async def body(clock: FakeClock, client: Any) -> None:
        await client.create(CONFIG_MAPS, "default", config_map("c", []))
        result = await delete(client, "configmaps", "c", DeleteOptions.parse(None, {"orphanDependents": "false"}))
        assert result.code == 200

    run(body)


@pytest.mark.parametrize(("block", "held"), [(True, True), (False, False), (None, False)])
def test_TestNonBlockingOwnerRefDoesNotBlock_in_the_api_cascade(block: bool | None, held: bool) -> None:
    """The API's own foreground cascade (no garbage collector running) keeps the Job only for a dependent with
    blockOwnerDeletion: true, as the collector's `blockingDependents` does; the pod is marked for deletion
    either way."""

    async def body(clock: FakeClock, client: Any) -> None:
        owner = await client.create(JOBS, "default", job("j"))
        reference: Obj = {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": owner["metadata"]["uid"]}
        if block is not None:
            reference["blockOwnerDeletion"] = block
        dependent = pod("p", ["x/y"])
        dependent["metadata"]["ownerReferences"] = [reference]
        await client.create(PODS, "default", dependent)
        await delete(client, "jobs", "j", DeleteOptions(propagation="Foreground"))
        assert (client.service.store.get("jobs.batch", "default", "j") is not None) is held
        assert client.service.store.get("pods", "default", "p")["metadata"]["deletionTimestamp"]

    run(body)


@pytest.mark.parametrize(
    ("node", "grace", "expected"),
    [
        pytest.param("n1", None, 30, id="scheduled: the pod's grace"),
        pytest.param("n1", 5, 5, id="scheduled: the DELETE's grace"),
        pytest.param(None, None, 0, id="unscheduled: at once"),
    ],
)
def test_TestGracefulStoreHandleFinalizers_foreground_keeps_the_pods_grace_period(
    node: str | None, grace: int | None, expected: int
) -> None:
    """A Foreground DELETE of a pod is graceful as any other (store.go `updateForGracefulDeletionAndFinalizers`:
    `BeforeDelete`'s grace beside the `foregroundDeletion` finalizer); without dependents the finalizer then goes,
    and the pod stays for its node to finish, deleted only when its grace is 0."""

    async def body(clock: FakeClock, client: Any) -> None:
        await client.create(PODS, "default", pod("p", node=node))
        got = (await delete(client, "pods", "p", DeleteOptions(propagation="Foreground", grace_period=grace))).obj
        assert got["metadata"]["finalizers"] == ["foregroundDeletion"]
        assert got["metadata"]["deletionGracePeriodSeconds"] == expected
        assert parse_time(got["metadata"]["deletionTimestamp"]) == clock.now() + expected
        left = client.service.store.get("pods", "default", "p")
        if expected:
            assert left["metadata"]["deletionGracePeriodSeconds"] == expected and "finalizers" not in left["metadata"]
        else:
            assert left is None

    run(body)


@pytest.mark.parametrize("plural", ["pods", "configmaps"])
def test_a_gc_finalizer_removed_by_the_delete_is_gone_from_the_deleted_event(plural: str) -> None:
    """A grace-0 Background DELETE of an object held only by `foregroundDeletion` deletes the object this DELETE
    changed (the finalizer taken away): the DELETED event's bytes are that object's, not the stored bytes with
    the new revision (docs/gcbytes48.md)."""

    async def body(clock: FakeClock, client: Any) -> None:
        made = pod("x", ["foregroundDeletion"]) if plural == "pods" else config_map("x", ["foregroundDeletion"])
        await client.create(PODS if plural == "pods" else CONFIG_MAPS, "default", made)
        store = client.service.store.store
        w = store.watch(plural, "default", since=store.revision)
        await delete(client, plural, "x", DeleteOptions(grace_period=0, propagation="Background"))
        event = w.next(0)
        assert event is not None and event.type == "DELETED"
        assert "finalizers" not in orjson.loads(event.raw)["metadata"]
        assert orjson.loads(event.raw) == event.object

    run(body)


def test_a_pod_gc_delete_publishes_the_stored_pod_at_the_new_revision() -> None:
    """Pod GC's grace-0 DELETE of a pod as its informer holds it (`known`): the DELETED event is the stored pod,
    byte for byte, with the deletion's resourceVersion."""

    async def body(clock: FakeClock, client: Any) -> None:
        await client.create(PODS, "default", pod("x", node="n1"))
        store = client.service.store.store
        held = store.get("pods", "default", "x")
        before = store.revision
        expected = dict(held, metadata={**held["metadata"], "resourceVersion": str(before + 1)})
        w = store.watch("pods", "default", since=before)
        await client.delete(PODS, "default", "x", grace_period_seconds=0, known=held)
        event = w.next(0)
        assert event is not None and event.type == "DELETED"
        assert event.raw == orjson.dumps(expected)

    run(body)
