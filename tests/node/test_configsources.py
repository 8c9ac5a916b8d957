"""`ConfigSources`, the kubelet's watch-based ConfigMap and Secret manager (pkg/kubelet/util/manager/
watch_based_manager.go): an object found immutable at a read has its watch stopped and its copy kept for every
later read, until the last pod that reads it is released (`DeleteReference`); a mutable one is read as watched."""

from __future__ import annotations

import asyncio
import base64

import pytest

from kjobs.client.resources import CONFIG_MAPS, SECRETS
from kjobs.clock import FakeClock
from kjobs.node.configsources import ConfigSources, is_immutable
from kjobs.node.envvars import CONFIG_MAP, SECRET
from tests.support import local_api, settle


@pytest.mark.parametrize(
    ("obj", "immutable"),
    [({"immutable": True}, True), ({"immutable": False}, False), ({}, False), ({"immutable": None}, False)],
    ids=["true", "false", "unset", "null"],
)
def test_is_immutable(obj: dict[str, object], immutable: bool) -> None:
    assert is_immutable(obj) is immutable


def _secret(value: str, *, immutable: bool = False) -> dict[str, object]:
    data = {"password": base64.b64encode(value.encode()).decode()}
    return {"metadata": {"name": "creds"}, "data": data, **({"immutable": True} if immutable else {})}


def test_an_immutable_secret_is_kept_for_every_reader_until_the_last_one_goes() -> None:
    async def body() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        await client.create(SECRETS, "default", _secret("one", immutable=True))
        await client.create(CONFIG_MAPS, "default", {"metadata": {"name": "app"}, "data": {"mode": "a"}})
        sources = ConfigSources(client, clock=clock)
        refs = frozenset({(SECRET, "creds"), (CONFIG_MAP, "app")})
        first = sources.register("pod-1", "default", refs)
        await sources.synced("pod-1")
        assert sources.kept() == []  # nothing read yet: both are watched
        assert len(sources.watched()) == 2
        assert (first[(SECRET, "creds")] or {})["data"] == _secret("one")["data"]
        assert sources.kept() == [("secret", "default", "creds")]
        assert sources.watched() == [("configmap", "default", "app")]
        await client.delete(SECRETS, "default", "creds")
        await client.create(SECRETS, "default", _secret("two"))
        await client.update(CONFIG_MAPS, "default", {"metadata": {"name": "app"}, "data": {"mode": "b"}})
        await settle(clock, lambda: (first[(CONFIG_MAP, "app")] or {}).get("data") == {"mode": "b"})
        assert (first[(SECRET, "creds")] or {})["data"] == _secret("one")["data"]  # the kept copy
        second = sources.register("pod-2", "default", frozenset({(SECRET, "creds")}))
        await sources.synced("pod-2")  # nothing to wait for: the kept copy answers
        assert (second[(SECRET, "creds")] or {})["data"] == _secret("one")["data"]
        sources.release("pod-1")
        assert sources.kept() == [("secret", "default", "creds")]  # pod-2 still reads it
        sources.release("pod-2")
        assert sources.kept() == sources.watched() == []
        third = sources.register("pod-3", "default", frozenset({(SECRET, "creds")}))
        await sources.synced("pod-3")
        assert (third[(SECRET, "creds")] or {})["data"] == _secret("two")["data"]  # watched afresh
        assert sources.watched() == [("secret", "default", "creds")]  # the new one is mutable: still watched
        await sources.stop()

    asyncio.run(body())


def test_an_object_made_immutable_later_is_kept_from_the_next_read() -> None:
    """The reflector is stopped at the first read that finds the object immutable, not at its creation."""

    async def body() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        await client.create(CONFIG_MAPS, "default", {"metadata": {"name": "app"}, "data": {"mode": "a"}})
        sources = ConfigSources(client, clock=clock)
        view = sources.register("pod-1", "default", frozenset({(CONFIG_MAP, "app")}))
        await sources.synced("pod-1")
        assert (view[(CONFIG_MAP, "app")] or {})["data"] == {"mode": "a"}
        body = {"metadata": {"name": "app"}, "data": {"mode": "b"}, "immutable": True}
        await client.update(CONFIG_MAPS, "default", body)
        await settle(clock, lambda: (view[(CONFIG_MAP, "app")] or {}).get("data") == {"mode": "b"})
        assert sources.kept() == [("configmap", "default", "app")]
        await client.delete(CONFIG_MAPS, "default", "app")
        assert (view[(CONFIG_MAP, "app")] or {})["data"] == {"mode": "b"}
        assert list(view) == [(CONFIG_MAP, "app")]
        await sources.stop()

    asyncio.run(body())
