"""A joined agent whose API server goes away between its registration and the end of its start-up (`kjobs up`
killed or restarted just as `kjobs node join` joins) outlives the outage, as a kubelet does: start-up's second
status post and first lease are left to the heartbeats. Before, the agent exited 1 (`cannot register node`);
tests/e2e/test_crash_safety.py's `while-the-pods-are-created` case failed that way on a loaded machine."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import aiohttp
import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import LEASES, NODES, ResourceRef
from kjobs.clock import FakeClock
from kjobs.node.agent import NodeAgent, NodeAgentSettings, transient
from kjobs.node.sim_runtime import SimulatedRuntime, succeed_at_once
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore
from tests.node.test_agent import MACHINE, NODE
from tests.support import INTEGRATION_ADMISSION, settle


class Outage(LocalClient):
    """An in-process API whose writes fail while `down` is set as an unreachable server's do: with an OSError
    (or with the ApiError given), the store untouched."""

    down: Exception | None = None
    written: list[str]

    def _check(self, resource: ResourceRef) -> None:
        if self.down is not None:
            raise self.down
        self.written.append(resource.plural)

    async def create(self, resource: ResourceRef, namespace: str | None, obj: Obj, **kw: Any) -> Obj:
        self._check(resource)
        return await super().create(resource, namespace, obj, **kw)

    async def patch(self, resource: ResourceRef, namespace: str | None, name: str, *a: Any, **kw: Any) -> Obj:
        self._check(resource)
        return await super().patch(resource, namespace, name, *a, **kw)


async def _joining(clock: FakeClock) -> tuple[Outage, NodeAgent]:
    service = ApiService(Storage(MemoryStore()), clock=clock.now, admission=INTEGRATION_ADMISSION)
    await service.ensure_namespaces()
    client = Outage(service)
    client.written = []
    runtime = SimulatedRuntime(clock=clock, outcome=succeed_at_once)
    agent = NodeAgent(client, name=NODE, clock=clock, runtime=runtime, settings=NodeAgentSettings(machine=MACHINE))
    return client, agent


UNREACHABLE = [
    pytest.param(ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 6443)"), id="refused"),
    pytest.param(aiohttp.ServerDisconnectedError(), id="killed-mid-answer"),  # not an OSError
    pytest.param(ApiError(503, "ServiceUnavailable", "starting"), id="unavailable"),
]


@pytest.mark.parametrize("error", UNREACHABLE)
def test_an_outage_after_the_registration_is_outlived_and_the_heartbeats_write_status_and_lease(
    error: Exception,
) -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client, agent = await _joining(clock)
        await agent.register()  # what `kjobs node join` does, retrying, before it starts the agent
        client.down = error
        try:
            starting = asyncio.ensure_future(agent.start())
            for _ in range(50):  # the informers read; only the writes fail
                await asyncio.sleep(0)
            client.down = None  # the server is back, after start-up's writes failed
            client.written.clear()
            await settle(clock, starting.done)
            starting.result()  # before: the error, and `kjobs node join` exited 1
            await settle(clock, lambda: {"leases", "nodes"} <= set(client.written))
            lease = await client.get(LEASES, "kube-node-lease", NODE)
            assert lease["spec"]["holderIdentity"] == NODE
            node = await client.get(NODES, None, NODE)
            ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
            assert ready["status"] == "True"
        finally:
            await agent.stop()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    "error",
    [ApiError(403, "Forbidden", 'nodes "node-1" is forbidden'), ApiError(422, "Invalid", "invalid")],
    ids=["forbidden", "invalid"],
)
def test_a_refusal_at_start_up_is_still_the_callers_to_report(error: ApiError) -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client, agent = await _joining(clock)
        await agent.register()
        client.down = error
        try:
            with pytest.raises(ApiError) as raised:
                await asyncio.wait_for(agent.start(), 10)
            assert raised.value is error
        finally:
            await agent.stop()

    asyncio.run(scenario())


@pytest.mark.parametrize("error", [*UNREACHABLE[:2], ssl.SSLCertVerificationError("certificate verify failed")])
def test_transient_errors_are_the_unreachable_servers(error: Exception) -> None:
    # what `kjobs node join` retries its registration on, and start-up outlives (a refused certificate is not)
    assert transient(error) is not isinstance(error, ssl.SSLError)


def test_an_agent_that_never_registered_still_fails_at_once() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client, agent = await _joining(clock)
        client.down = ConnectionRefusedError(111, "Connect call failed")
        try:
            with pytest.raises(ConnectionRefusedError):
                await asyncio.wait_for(agent.start(), 10)
        finally:
            await agent.stop()

    asyncio.run(scenario())
