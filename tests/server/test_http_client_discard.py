"""`HttpClient.patch(discard=True)`: the write happens as without it, nothing is decoded or returned, and a
failure is raised exactly as it is when the result is read (the node agent's status patches rely on both)."""

from __future__ import annotations

import asyncio

import pytest

from kjobs.api.errors import ApiError
from kjobs.client.http import HttpClient
from kjobs.client.kubeconfig import Connection
from kjobs.client.resources import PODS
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.server.conftest import pod_manifest
from tests.support import client_tls, shared_pki


@pytest.mark.e2e
def test_a_discarded_patch_result_writes_the_same_and_fails_the_same() -> None:
    with serve(MemoryStore(), pki=shared_pki()) as url:

        async def scenario() -> None:
            client = HttpClient(Connection(url, ssl_context=client_tls()))
            try:
                await client.create(PODS, "default", pod_manifest("p"))
                status = {"status": {"phase": "Running"}}
                assert await client.patch(PODS, "default", "p", status, subresource="status", discard=True) == {}
                stored = await client.get(PODS, "default", "p")
                assert stored["status"]["phase"] == "Running"
                read = await client.patch(PODS, "default", "p", {"metadata": {"labels": {"a": "b"}}})
                assert read["metadata"]["labels"] == {"a": "b"}  # without discard: the object, as before

                errors = []
                for discard in (False, True):
                    with pytest.raises(ApiError) as caught:
                        await client.patch(PODS, "default", "gone", status, subresource="status", discard=discard)
                    errors.append((caught.value.code, caught.value.reason, caught.value.status()))
                    with pytest.raises(ApiError) as malformed:
                        await client.patch(PODS, "default", "p", [1], subresource="status", discard=discard)
                    errors.append((malformed.value.code, malformed.value.reason, malformed.value.status()))
                assert errors[:2] == errors[2:]
                assert [e[:2] for e in errors[:2]] == [(404, "NotFound"), (400, "BadRequest")]  # [1] does not decode
            finally:
                await client.close()

        asyncio.run(scenario())
