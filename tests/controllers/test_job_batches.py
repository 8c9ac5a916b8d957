"""How the Job controller issues a batch of pod writes: concurrently over a network, in turn in process."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from kjobs.client.local import LocalClient
from kjobs.client.resources import NAMESPACES
from kjobs.controllers.job import ClientPodControl
from kjobs.job.execute import _batch
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore, SqliteStore


def test_an_in_process_api_over_memory_completes_writes_inline_and_sqlite_does_not(tmp_path: Path) -> None:
    memory = ApiService(Storage(MemoryStore()), clock=time.time)
    durable_store = SqliteStore(str(tmp_path / "db.sqlite"))
    try:
        durable = ApiService(Storage(durable_store), clock=time.time)
        assert ClientPodControl(LocalClient(memory)).inline
        assert not ClientPodControl(LocalClient(durable)).inline
    finally:
        durable_store.close()


def test_an_inline_batch_runs_in_turn_without_letting_other_tasks_in() -> None:
    async def run(inline: bool) -> list[str]:
        order: list[str] = []

        async def call(name: str) -> str:
            order.append(name)
            return name

        asyncio.get_running_loop().call_soon(order.append, "other")
        results = await _batch([call("a"), call("b"), call("c")], inline)
        assert results == ["a", "b", "c"]
        await asyncio.sleep(0)
        return order

    assert asyncio.run(run(inline=True)) == ["a", "b", "c", "other"]
    assert asyncio.run(run(inline=False))[0] == "other"  # tasks: the loop turns before they start


def test_an_inline_write_really_completes_without_suspending() -> None:
    async def run() -> None:
        client = LocalClient(ApiService(Storage(MemoryStore()), clock=time.time))
        step = client.create(NAMESPACES, None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}})
        try:
            step.send(None)
        except StopIteration as done:
            assert done.value["metadata"]["name"] == "x"
        else:  # pragma: no cover - the point of the test
            raise AssertionError("the write suspended")

    asyncio.run(run())
