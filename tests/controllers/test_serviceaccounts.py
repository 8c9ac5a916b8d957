"""The ServiceAccounts controller: TestServiceAccountCreation's rows (pkg/controller/serviceaccount/
serviceaccounts_controller_test.go), then the controller running against an API on virtual time."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import NAMESPACES, SERVICE_ACCOUNTS, ResourceRef
from kjobs.clock import FakeClock
from kjobs.controllers.serviceaccounts import ServiceAccountsController
from tests.support import local_api, settle

NS = "default"
DEFAULT, MANAGED = "default", "managed"


def _namespace(phase: str) -> Obj:
    return {"metadata": {"name": NS}, "status": {"phase": phase}}


def _account(name: str) -> Obj:
    return {"metadata": {"name": name, "namespace": NS, "resourceVersion": "1"}}


ACTIVE, TERMINATING = _namespace("Active"), _namespace("Terminating")

# name: (existing namespace, existing accounts, added namespace, updated namespace, deleted account, created)
ROWS: dict[str, tuple[Obj | None, list[str], Obj | None, Obj | None, str | None, list[str]]] = {
    "new active namespace missing serviceaccounts": (None, [], ACTIVE, None, None, [DEFAULT, MANAGED]),
    "new active namespace missing serviceaccount": (None, [MANAGED], ACTIVE, None, None, [DEFAULT]),
    "new active namespace with serviceaccounts": (None, [DEFAULT, MANAGED], ACTIVE, None, None, []),
    "new terminating namespace": (None, [], TERMINATING, None, None, []),
    "updated active namespace missing serviceaccounts": (None, [], None, ACTIVE, None, [DEFAULT, MANAGED]),
    "updated active namespace missing serviceaccount": (None, [DEFAULT], None, ACTIVE, None, [MANAGED]),
    "updated active namespace with serviceaccounts": (None, [DEFAULT, MANAGED], None, ACTIVE, None, []),
    "updated terminating namespace": (None, [], None, TERMINATING, None, []),
    "deleted serviceaccount without namespace": (None, [], None, None, DEFAULT, []),
    "deleted serviceaccount with active namespace": (ACTIVE, [MANAGED], None, None, DEFAULT, [DEFAULT]),
    "deleted serviceaccount with terminating namespace": (TERMINATING, [], None, None, DEFAULT, []),
    "deleted unmanaged serviceaccount with active namespace": (
        ACTIVE,
        [DEFAULT, MANAGED],
        None,
        None,
        "other-unmanaged",
        [],
    ),
    "deleted unmanaged serviceaccount with terminating namespace": (TERMINATING, [], None, None, "other-unmanaged", []),
}


class Recording(LocalClient):
    """A client that records the accounts created through it (and creates nothing)."""

    def __init__(self, base: LocalClient) -> None:
        super().__init__(base.service)
        self.created: list[str] = []

    async def create(self, resource: ResourceRef, namespace: str | None, obj: Obj, **kw: Any) -> Obj:
        assert resource == SERVICE_ACCOUNTS and namespace == NS
        self.created.append(obj["metadata"]["name"])
        return obj


@pytest.mark.parametrize("row", list(ROWS))
def test_service_account_creation(row: str) -> None:
    existing_ns, existing, added, updated, deleted, expected = ROWS[row]

    async def scenario() -> None:
        clock = FakeClock()
        client = Recording(await local_api(clock))
        controller = ServiceAccountsController(client, clock, accounts=(DEFAULT, MANAGED))
        # the listers, filled by hand as the upstream test fills its indexers (no informer runs)
        if existing_ns is not None:
            controller.namespaces.cache[("", NS)] = existing_ns
        for name in existing:
            controller.service_accounts.cache[(NS, name)] = _account(name)
        if added is not None:
            controller.namespaces.cache[("", NS)] = added
            controller._on_namespace(None, added)
        if updated is not None:
            controller.namespaces.cache[("", NS)] = updated
            controller._on_namespace(updated, updated)
        if deleted is not None:
            controller._on_service_account(_account(deleted), None)
        assert len(controller.queue) == 1
        key = await controller.queue.get()
        assert key == NS
        await controller.sync(key)
        assert client.created == expected

    asyncio.run(scenario())


async def _account_of(client: LocalClient, namespace: str) -> Obj | None:
    try:
        return await client.get(SERVICE_ACCOUNTS, namespace, "default")
    except ApiError:
        return None


def test_every_active_namespace_gets_default_recreated_when_deleted() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        controller = ServiceAccountsController(client, clock)
        await controller.start()
        every = ("default", "kube-system", "kube-public", "kube-node-lease")
        await settle(clock, lambda: all(controller.service_accounts.get(ns, "default") for ns in every))

        await client.create(NAMESPACES, None, {"metadata": {"name": "team-a"}})
        await settle(clock, lambda: controller.service_accounts.get("team-a", "default") is not None)
        made = await _account_of(client, "team-a")
        assert made is not None and made["metadata"]["name"] == "default"

        # deleted: recreated, as a new object
        await client.delete(SERVICE_ACCOUNTS, "team-a", "default")
        await settle(clock, lambda: controller.service_accounts.get("team-a", "default") is None)
        await settle(clock, lambda: controller.service_accounts.get("team-a", "default") is not None)
        again = await _account_of(client, "team-a")
        assert again is not None and again["metadata"]["uid"] != made["metadata"]["uid"]

        # a terminating namespace gets none: its account, deleted, is not made again
        await client.create(SERVICE_ACCOUNTS, "team-a", {"metadata": {"name": "keep"}})
        await client.create(NAMESPACES, None, {"metadata": {"name": "team-b"}})
        await settle(clock, lambda: controller.service_accounts.get("team-b", "default") is not None)
        await client.create(
            SERVICE_ACCOUNTS, "team-b", {"metadata": {"name": "holder", "finalizers": ["example.com/hold"]}}
        )
        await client.delete(NAMESPACES, None, "team-b")
        await settle(clock, lambda: controller.service_accounts.get("team-b", "default") is None)
        for _ in range(50):
            await asyncio.sleep(0)
        clock.advance(5)
        await settle(clock, lambda: len(controller.queue) == 0)
        assert await _account_of(client, "team-b") is None
        await controller.stop()

    asyncio.run(scenario())


def test_ensure_makes_default_at_once_and_only_while_running() -> None:
    """kjobs' `ensure`: a one-shot run's namespace gets `default` before its Job is created (no wait on the queue);
    a controller that is not running (waiting for its Lease) writes nothing."""

    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        controller = ServiceAccountsController(client, clock)
        await client.create(NAMESPACES, None, {"metadata": {"name": "early"}})
        await controller.ensure(["early"])
        assert await _account_of(client, "early") is None
        await controller.start()
        await client.create(NAMESPACES, None, {"metadata": {"name": "run-ns"}})
        await controller.ensure(["run-ns", "run-ns", "no-such-namespace"])
        assert await _account_of(client, "run-ns") is not None
        await controller.stop()

    asyncio.run(scenario())
