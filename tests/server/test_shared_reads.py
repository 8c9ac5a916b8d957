"""Patches that read the store's shared object build the new object beside it and leave the old one as it was."""

from __future__ import annotations

import asyncio

import orjson

from kjobs.client.resources import PODS
from kjobs.clock import FakeClock
from tests.support import local_api

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "labels": {"app": "a"}, "finalizers": ["example.com/keep"]},
    "spec": {"containers": [{"name": "main", "image": "busybox"}]},
}


def test_metadata_status_and_binding_writes_leave_the_shared_object_they_read_unchanged() -> None:
    async def scenario() -> None:
        client = await local_api(FakeClock())
        await client.create(PODS, "default", POD)
        store = client.service.store.store
        steps = [
            lambda: client.patch(PODS, "default", "p", {"metadata": {"labels": {"app": "b"}}}),
            lambda: client.patch(
                PODS, "default", "p", {"metadata": {"annotations": {"note": "x"}}}, patch_type="merge"
            ),
            lambda: client.patch(PODS, "default", "p", {"status": {"phase": "Running"}}, subresource="status"),
            lambda: client.post_subresource(
                PODS, "default", "p", "binding", {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}}
            ),
            lambda: client.patch(PODS, "default", "p", {"metadata": {"finalizers": None}}),
        ]
        for step in steps:
            shared = store.get_shared("pods", "default", "p")
            before = orjson.dumps(shared)
            await step()
            assert orjson.dumps(shared) == before  # what the write read is as it was
            assert store.get_shared("pods", "default", "p") is not shared  # and the new object is another
        pod = store.get("pods", "default", "p")
        assert pod["metadata"]["labels"] == {"app": "b"}
        assert pod["status"]["phase"] == "Running" and pod["spec"]["nodeName"] == "n1"
        assert "finalizers" not in pod["metadata"]

    asyncio.run(scenario())


def test_a_handed_over_body_is_used_as_is_and_left_unchanged_and_others_are_copied() -> None:
    """`handover` skips the client's copy: the body is not changed by the write (a constant patch can be
    reused) and its values may become the stored object's; a body not handed over stays the caller's."""

    async def scenario() -> None:
        client = await local_api(FakeClock())
        await client.create(PODS, "default", POD)
        store = client.service.store.store
        # with both its times: one without them is stored as a copy, with Go's nulls (`kjobs.server.zerotimes`)
        stamp = "2026-01-01T00:00:00Z"
        conditions = [{"type": "Example", "status": "True", "lastProbeTime": stamp, "lastTransitionTime": stamp}]
        handed = {"status": {"phase": "Running", "conditions": conditions}}
        before = orjson.dumps(handed)
        await client.patch(PODS, "default", "p", handed, subresource="status", handover=True)
        assert orjson.dumps(handed) == before
        assert store.get_shared("pods", "default", "p")["status"]["conditions"][0] is conditions[0]  # not copied
        remove = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/keep"]}}
        await client.patch(PODS, "default", "p", remove, handover=True)
        assert remove == {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/keep"]}}
        kept = {"metadata": {"labels": {"app": "c"}}}
        await client.patch(PODS, "default", "p", kept)
        kept["metadata"]["labels"]["app"] = "changed later"  # the caller's own: the stored object is a copy
        pod = store.get("pods", "default", "p")
        assert pod["metadata"]["labels"] == {"app": "c"}
        assert "finalizers" not in pod["metadata"]  # the last one removed: omitted, not []

    asyncio.run(scenario())
