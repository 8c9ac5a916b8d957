"""The resourcequota controller with quota and LimitRanger admission, over an in-process API service: a new
quota is counted; a pod create is charged or refused with kube-apiserver's words; an ended or deleted pod gives
its quota back; a dry run is never charged; LimitRanger defaults a pod (and its QoS class) and the plugins can be
turned off."""

from __future__ import annotations

import asyncio

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import LIMIT_RANGES, PODS, RESOURCE_QUOTAS
from kjobs.clock import FakeClock
from kjobs.controllers.resourcequota import ResourceQuotaController
from kjobs.server.admission import AdmissionSettings
from tests.support import local_api, settle


def _pod(name: str, cpu: str | None = None) -> Obj:
    container: Obj = {"name": "main", "image": "busybox"}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}
    return {"metadata": {"name": name}, "spec": {"containers": [container]}}


def _used(client: LocalClient, name: str = "q") -> Obj:
    quota = client.service.store.get("resourcequotas", "default", name)
    return (quota or {}).get("status", {}).get("used") or {}


def test_quota_counted_charged_refused_and_given_back() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        controller = ResourceQuotaController(client, clock)
        await controller.start()
        try:
            await client.create(
                RESOURCE_QUOTAS,
                "default",
                {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "2", "requests.cpu": "1"}}},
            )
            await settle(clock, lambda: _used(client) == {"pods": "0", "requests.cpu": "0"})
            await client.create(PODS, "default", _pod("a", "500m"))
            assert _used(client) == {"pods": "1", "requests.cpu": "500m"}  # charged by admission, at once
            with pytest.raises(ApiError) as refused:
                await client.create(PODS, "default", _pod("b"))
            assert refused.value.code == 403
            assert str(refused.value) == 'pods "b" is forbidden: failed quota: q: must specify requests.cpu for: main'
            with pytest.raises(ApiError) as exceeded:
                await client.create(PODS, "default", _pod("c", "600m"))
            assert str(exceeded.value) == (
                'pods "c" is forbidden: exceeded quota: q, requested: requests.cpu=600m, used: requests.cpu=500m, '
                "limited: requests.cpu=1"
            )
            pod = client.service.store.get("pods", "default", "a")
            assert pod is not None
            pod["status"]["phase"] = "Succeeded"
            await client.update(PODS, "default", pod, subresource="status")
            await settle(clock, lambda: _used(client) == {"pods": "0", "requests.cpu": "0"})
            await client.create(PODS, "default", _pod("d", "1"))
            await client.delete(PODS, "default", "d", grace_period_seconds=0)
            await settle(clock, lambda: _used(client) == {"pods": "0", "requests.cpu": "0"})
        finally:
            await controller.stop()

    asyncio.run(scenario())


def test_dry_run_is_not_charged_and_limit_ranges_default_pods() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        service = client.service
        quotas = service.store
        await client.create(RESOURCE_QUOTAS, "default", {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "1"}}})
        quota = quotas.get("resourcequotas", "default", "q")
        assert quota is not None
        quota["status"] = {"hard": {"pods": "1"}, "used": {"pods": "0"}}
        await client.update(RESOURCE_QUOTAS, "default", quota, subresource="status")
        from kjobs.server.registry import lookup

        pods = lookup("", "v1", "pods")
        assert pods is not None
        await service.create(pods, "default", _pod("dry"), dry_run=True)
        assert _used(client) == {"pods": "0"}
        await client.create(
            LIMIT_RANGES,
            "default",
            {
                "metadata": {"name": "lr"},
                "spec": {"limits": [{"type": "Container", "default": {"cpu": "200m", "memory": "64Mi"}}]},
            },
        )
        created = await client.create(PODS, "default", _pod("x"))
        assert created["spec"]["containers"][0]["resources"] == {
            "limits": {"cpu": "200m", "memory": "64Mi"},
            "requests": {"cpu": "200m", "memory": "64Mi"},
        }
        assert created["status"]["qosClass"] == "Guaranteed"
        assert _used(client) == {"pods": "1"}

    asyncio.run(scenario())


def test_the_plugins_can_be_turned_off() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        off = AdmissionSettings(disabled_plugins=frozenset({"LimitRanger", "ResourceQuota"}))
        client = await local_api(clock, admission=off)
        await client.create(RESOURCE_QUOTAS, "default", {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "0"}}})
        quota = client.service.store.get("resourcequotas", "default", "q")
        assert quota is not None
        quota["status"] = {"hard": {"pods": "0"}, "used": {"pods": "0"}}
        await client.update(RESOURCE_QUOTAS, "default", quota, subresource="status")
        await client.create(
            LIMIT_RANGES,
            "default",
            {"metadata": {"name": "lr"}, "spec": {"limits": [{"type": "Container", "max": {"cpu": "1m"}}]}},
        )
        created = await client.create(PODS, "default", _pod("free"))
        assert created["spec"]["containers"][0]["resources"] == {}  # nothing defaulted into it

    asyncio.run(scenario())
