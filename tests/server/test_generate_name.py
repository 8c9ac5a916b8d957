"""generateName: a generated name that is already taken is generated again (RetryGenerateName, GA in 1.32)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from kjobs.api.errors import ApiError
from kjobs.client.resources import PODS
from kjobs.clock import FakeClock
from kjobs.server import service
from tests.server.conftest import Server
from tests.support import local_api, python_client_config

POD = {"metadata": {"generateName": "p-"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


@pytest.fixture
def suffixes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    queue: list[str] = []
    monkeypatch.setattr(service, "_random_suffix", lambda: queue.pop(0))
    yield queue


def test_a_taken_generated_name_is_generated_again(suffixes: list[str]) -> None:
    async def run() -> None:
        client = await local_api(FakeClock())
        suffixes.extend(["aaaaa", "aaaaa", "bbbbb"])
        first = await client.create(PODS, "default", POD)
        second = await client.create(PODS, "default", POD)
        assert (first["metadata"]["name"], second["metadata"]["name"]) == ("p-aaaaa", "p-bbbbb")

    asyncio.run(run())


def test_after_eight_taken_names_the_create_is_refused(suffixes: list[str]) -> None:
    async def run() -> None:
        client = await local_api(FakeClock())
        suffixes.extend(["aaaaa"] * 9)
        await client.create(PODS, "default", POD)
        with pytest.raises(ApiError) as err:
            await client.create(PODS, "default", POD)
        assert (err.value.code, err.value.reason) == (409, "AlreadyExists")
        assert suffixes == []  # eight attempts after the first pod's one

    asyncio.run(run())


def test_a_chosen_name_that_is_taken_is_not_changed() -> None:
    async def run() -> None:
        client = await local_api(FakeClock())
        named = {**POD, "metadata": {"name": "fixed", "generateName": "p-"}}
        await client.create(PODS, "default", named)
        with pytest.raises(ApiError) as err:
            await client.create(PODS, "default", named)
        assert err.value.reason == "AlreadyExists"
        assert 'pods "fixed" already exists' in err.value.message

    asyncio.run(run())


def test_a_set_name_matching_generate_name_is_the_name_over_http(http: httpx.Client) -> None:
    """A name that happens to start with generateName is still the caller's name: 409 when it is taken."""
    body = {**POD, "metadata": {"name": "p-taken", "generateName": "p-"}}
    assert http.post("/api/v1/namespaces/default/pods", json=body).status_code == 201
    again = http.post("/api/v1/namespaces/default/pods", json=body)
    assert again.status_code == 409
    status = again.json()
    assert (status["kind"], status["reason"]) == ("Status", "AlreadyExists")
    assert status["message"] == 'pods "p-taken" already exists'
    names = [p["metadata"]["name"] for p in http.get("/api/v1/namespaces/default/pods").json()["items"]]
    assert names == ["p-taken"]


def test_a_set_name_matching_generate_name_with_the_python_client(server: Server) -> None:
    with client.ApiClient(python_client_config(server.url, server.pki)) as api:
        core = client.CoreV1Api(api)
        body = {**POD, "metadata": {"name": "p-mine", "generateName": "p-"}}
        assert core.create_namespaced_pod("default", body).metadata.name == "p-mine"
        with pytest.raises(ApiException) as exists:
            core.create_namespaced_pod("default", body)
        assert exists.value.status == 409
        assert [p.metadata.name for p in core.list_namespaced_pod("default").items] == ["p-mine"]
