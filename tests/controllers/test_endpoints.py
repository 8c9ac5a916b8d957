"""The endpoints and EndpointSlice controllers against an in-process API on virtual time: a Service's selected
pods become its Endpoints' addresses and its slice's endpoints (hostname by subdomain, ready and not ready,
terminating, named target ports), the Service's deletion removes its Endpoints, and slices hold at most 100."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import ENDPOINT_SLICES, ENDPOINTS, PODS, SERVICES
from kjobs.clock import FakeClock
from kjobs.controllers.endpoints import (
    MAX_CAPACITY,
    OVER_CAPACITY_ANNOTATION,
    TRUNCATED,
    EndpointsController,
    EndpointSliceController,
    TriggerTimeTracker,
    truncate_subsets,
)
from tests.support import local_api, settle

NS = "default"


def _service(name: str = "svc", **spec: Any) -> Obj:
    body: Obj = {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "web"}]}
    return {"metadata": {"name": name}, "spec": {**body, **spec}}


def _pod(name: str, *, ready: bool = True, hostname: str = "", subdomain: str = "", port: int = 8080) -> Obj:
    spec: Obj = {
        "nodeName": "kjobs-node",
        "containers": [{"name": "c", "image": "x", "ports": [{"name": "web", "containerPort": port}]}],
    }
    if hostname:
        spec["hostname"] = hostname
    if subdomain:
        spec["subdomain"] = subdomain
    return {"metadata": {"name": name, "labels": {"app": "web"}}, "spec": spec, "_ready": ready}


async def _running(client: LocalClient, pod: Obj) -> Obj:
    ready = pod.pop("_ready")
    made = await client.create(PODS, NS, pod)
    made["status"] = {
        "phase": "Running",
        "podIP": "127.0.0.1",
        "conditions": [
            {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": "2024-01-01T00:00:00Z"}
        ],
    }
    return await client.update(PODS, NS, made, subresource="status")


async def _with(
    run: Callable[[LocalClient, FakeClock, EndpointsController, EndpointSliceController], Awaitable[None]],
) -> None:
    clock = FakeClock()
    client = await local_api(clock)
    endpoints, slices = EndpointsController(client, clock), EndpointSliceController(client, clock)
    await endpoints.start()
    await slices.start()
    try:
        await run(client, clock, endpoints, slices)
    finally:
        await slices.stop()
        await endpoints.stop()


def _slices(controller: EndpointSliceController, service: str = "svc") -> list[Obj]:
    return controller._owned(NS, service)


def test_pods_become_addresses_and_slice_endpoints() -> None:
    async def run(client: LocalClient, clock: FakeClock, ec: EndpointsController, sc: EndpointSliceController) -> None:
        await client.create(SERVICES, NS, _service())
        a = await _running(client, _pod("a", hostname="a", subdomain="svc"))
        b = await _running(client, _pod("b", ready=False))
        await settle(clock, lambda: len((ec.own.get(NS, "svc") or {}).get("subsets") or []) == 1
                     and len(ec.own.get(NS, "svc")["subsets"][0].get("notReadyAddresses") or []) == 1)  # fmt: skip
        (subset,) = ec.own.get(NS, "svc")["subsets"]
        assert subset["addresses"] == [
            {
                "ip": "127.0.0.1",
                "hostname": "a",
                "nodeName": "kjobs-node",
                "targetRef": {"kind": "Pod", "namespace": NS, "name": "a", "uid": a["metadata"]["uid"]},
            }
        ]
        assert [x["targetRef"]["name"] for x in subset["notReadyAddresses"]] == ["b"]
        assert "hostname" not in subset["notReadyAddresses"][0]
        assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
        stored = await client.get(ENDPOINTS, NS, "svc")
        assert "endpoints.kubernetes.io/last-change-trigger-time" in stored["metadata"]["annotations"]

        await settle(clock, lambda: len(_slices(sc)) == 1 and len(_slices(sc)[0].get("endpoints") or []) == 2)
        (eps,) = _slices(sc)
        assert eps["metadata"]["labels"] == {
            "kubernetes.io/service-name": "svc",
            "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
        }
        assert eps["metadata"]["ownerReferences"][0]["kind"] == "Service"
        assert eps["addressType"] == "IPv4" and eps["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
        assert [(e["targetRef"]["name"], e["conditions"]) for e in eps["endpoints"]] == [
            ("a", {"ready": True, "serving": True, "terminating": False}),
            ("b", {"ready": False, "serving": False, "terminating": False}),
        ]
        assert eps["endpoints"][0]["hostname"] == "a" and b["metadata"]["name"] == "b"
        versions = (ec.own.get(NS, "svc")["metadata"]["resourceVersion"], eps["metadata"]["resourceVersion"])
        await ec.sync(f"{NS}/svc")  # nothing changed: nothing written
        await sc.sync(f"{NS}/svc")
        stored = (
            await client.get(ENDPOINTS, NS, "svc"),
            await client.get(ENDPOINT_SLICES, NS, eps["metadata"]["name"]),
        )
        assert tuple(o["metadata"]["resourceVersion"] for o in stored) == versions

        await client.delete(PODS, NS, "b", grace_period_seconds=30)  # terminating: out of Endpoints, in the slice
        await settle(clock, lambda: "notReadyAddresses" not in ec.own.get(NS, "svc")["subsets"][0])
        await settle(clock, lambda: _slices(sc)[0]["endpoints"][1]["conditions"]["terminating"] is True)

        await client.delete(SERVICES, NS, "svc")
        await settle(clock, lambda: ec.own.get(NS, "svc") is None)

    asyncio.run(_with(run))


def test_slices_hold_at_most_100_endpoints() -> None:
    async def run(client: LocalClient, clock: FakeClock, ec: EndpointsController, sc: EndpointSliceController) -> None:
        await client.create(SERVICES, NS, _service())
        for i in range(101):
            await _running(client, _pod(f"p{i}"))
        await settle(clock, lambda: sum(len(s.get("endpoints") or []) for s in _slices(sc)) == 101)
        assert sorted(len(s["endpoints"]) for s in _slices(sc)) == [1, 100]

    asyncio.run(_with(run))


def test_a_service_without_a_selector_is_left_to_its_user() -> None:
    async def run(client: LocalClient, clock: FakeClock, ec: EndpointsController, sc: EndpointSliceController) -> None:
        await client.create(SERVICES, NS, _service("manual", selector=None))
        await client.create(SERVICES, NS, _service())
        await settle(clock, lambda: ec.own.get(NS, "svc") is not None and len(_slices(sc)) == 1)
        assert ec.own.get(NS, "manual") is None and _slices(sc, "manual") == []

    asyncio.run(_with(run))


def test_an_edited_endpoints_is_put_back() -> None:
    async def run(client: LocalClient, clock: FakeClock, ec: EndpointsController, sc: EndpointSliceController) -> None:
        await client.create(SERVICES, NS, _service())
        await _running(client, _pod("a"))
        await settle(clock, lambda: bool((ec.own.get(NS, "svc") or {}).get("subsets")))
        edited = await client.get(ENDPOINTS, NS, "svc")
        edited["subsets"] = [{"addresses": [{"ip": "10.0.0.9"}]}]
        await client.update(ENDPOINTS, NS, edited)
        await settle(clock, lambda: ec.own.get(NS, "svc")["subsets"][0]["addresses"][0].get("targetRef") is not None)
        await client.delete(PODS, NS, "a", grace_period_seconds=0)
        await settle(clock, lambda: "subsets" not in ec.own.get(NS, "svc"))

    asyncio.run(_with(run))


def test_trigger_time_is_the_earliest_change_since_the_last_sync() -> None:
    """TriggerTimeTracker (pkg/controller/util/endpoint/trigger_time_tracker_test.go's idea): a new Service
    exports its creation; then only pods whose Ready transition moved count, the earliest of them."""

    def pod(name: str, when: str | None) -> Obj:
        conditions = [{"type": "Ready", "status": "True", "lastTransitionTime": when}] if when else []
        return {"metadata": {"name": name}, "status": {"conditions": conditions}}

    svc = {"metadata": {"name": "s", "creationTimestamp": "2024-01-01T00:00:10Z"}}
    tracker = TriggerTimeTracker()
    assert tracker.compute("ns/s", svc, [pod("a", "2024-01-01T00:00:05Z")]) == "2024-01-01T00:00:05Z"
    assert tracker.compute("ns/s", svc, [pod("a", "2024-01-01T00:00:05Z")]) is None
    later = [pod("a", "2024-01-01T00:00:30Z"), pod("b", "2024-01-01T00:00:20Z"), pod("c", None)]
    assert tracker.compute("ns/s", svc, later) == "2024-01-01T00:00:20Z"
    tracker.forget("ns/s")
    assert tracker.compute("ns/s", svc, []) == "2024-01-01T00:00:10Z"


def test_publish_not_ready_addresses() -> None:
    async def run(client: LocalClient, clock: FakeClock, ec: EndpointsController, sc: EndpointSliceController) -> None:
        await client.create(SERVICES, NS, _service(publishNotReadyAddresses=True))
        await _running(client, _pod("a", ready=False))
        await settle(clock, lambda: bool((ec.own.get(NS, "svc") or {}).get("subsets")))
        await settle(clock, lambda: bool(_slices(sc) and _slices(sc)[0].get("endpoints")))
        (subset,) = ec.own.get(NS, "svc")["subsets"]
        assert [a["targetRef"]["name"] for a in subset["addresses"]] == ["a"] and "notReadyAddresses" not in subset
        assert _slices(sc)[0]["endpoints"][0]["conditions"] == {"ready": True, "serving": False, "terminating": False}

    asyncio.run(_with(run))


def _counted(ready: list[int], not_ready: list[int]) -> list[Obj]:
    subsets: list[Obj] = []
    for index, (r, n) in enumerate(zip(ready, not_ready, strict=True)):
        subset: Obj = {"ports": [{"port": index}]}
        if r:
            subset["addresses"] = [{"ip": f"10.0.{index}.{i}"} for i in range(r)]
        if n:
            subset["notReadyAddresses"] = [{"ip": f"10.1.{index}.{i}"} for i in range(n)]
        subsets.append(subset)
    return subsets


@pytest.mark.parametrize(
    ("ready", "not_ready", "expected_ready", "expected_not_ready"),
    [
        pytest.param([], [], [], [], id="empty"),
        pytest.param(
            [50, 100, 100, 100, 100],
            [50, 100, 100, 100, 100],
            [50, 100, 100, 100, 100],
            [50, 100, 100, 100, 100],
            id="total endpoints < max capacity",
        ),
        pytest.param([100] * 5, [100] * 5, [100] * 5, [100] * 5, id="total endpoints = max capacity"),
        pytest.param(
            [90, 110, 50, 10, 20],
            [101, 200, 200, 201, 298],
            [90, 110, 50, 10, 20],
            [73, 144, 144, 145, 214],
            id="total ready endpoints < max capacity, but total endpoints > max capacity",
        ),
        pytest.param(
            [205, 400, 402, 400, 693],
            [100, 200, 200, 200, 300],
            [98, 191, 192, 191, 328],
            [0, 0, 0, 0, 0],
            id="total ready endpoints > max capacity",
        ),
    ],
)
def test_TestTruncateEndpoints(
    ready: list[int], not_ready: list[int], expected_ready: list[int], expected_not_ready: list[int]
) -> None:
    """pkg/controller/endpoint/endpoints_controller_test.go `TestTruncateEndpoints`."""
    subsets = _counted(ready, not_ready)
    assert truncate_subsets(subsets) == (sum(ready) + sum(not_ready) > MAX_CAPACITY)
    assert [len(s.get("addresses") or []) for s in subsets] == expected_ready
    assert [len(s.get("notReadyAddresses") or []) for s in subsets] == expected_not_ready


def test_a_subset_left_empty_by_the_cut_is_dropped() -> None:
    subsets = _counted([1001, 0], [0, 5])
    assert truncate_subsets(subsets)
    assert [len(s["addresses"]) for s in subsets] == [1000]


def test_an_endpoints_over_capacity_is_truncated_and_annotated_until_back_within() -> None:
    """`TestSyncServiceOverCapacity`'s point through the controller: 1,001 ready pods give 1,000 addresses and
    `endpoints.kubernetes.io/over-capacity: truncated`; one pod fewer removes the annotation; a wrong value is
    corrected."""

    async def run(client: LocalClient, clock: FakeClock, ec: EndpointsController, sc: EndpointSliceController) -> None:
        await client.create(SERVICES, NS, _service())
        for i in range(MAX_CAPACITY + 1):
            await _running(client, _pod(f"p{i:04}"))

        def addresses() -> int:
            eps = ec.own.get(NS, "svc") or {}
            return sum(len(s.get("addresses") or []) for s in eps.get("subsets") or [])

        def annotation() -> str | None:
            return ((ec.own.get(NS, "svc") or {}).get("metadata", {}).get("annotations") or {}).get(
                OVER_CAPACITY_ANNOTATION
            )

        await settle(clock, lambda: addresses() == MAX_CAPACITY and annotation() == TRUNCATED)
        eps = await client.get(ENDPOINTS, NS, "svc")
        eps["metadata"]["annotations"][OVER_CAPACITY_ANNOTATION] = "warning"
        await client.update(ENDPOINTS, NS, eps)
        await settle(clock, lambda: annotation() == TRUNCATED)
        await client.delete(PODS, NS, "p0000", grace_period_seconds=0)
        await settle(clock, lambda: addresses() == MAX_CAPACITY and annotation() is None)

    asyncio.run(_with(run))
