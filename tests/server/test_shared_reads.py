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
                PODS, "default", "p", "binding", {"target": {"kind": "Node", "name": "n1"}}
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
