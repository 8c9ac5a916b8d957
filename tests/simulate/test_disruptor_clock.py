"""`kjobs.disrupt.Disruptor` on virtual time: its bounded wait for drained pods is the clock's, not the wall's."""

from __future__ import annotations

from typing import Any

from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.disrupt import STOP_TIMEOUT, Disruptor
from kjobs.virtualtime import run

POD: Obj = {
    "metadata": {"name": "stuck", "namespace": "default", "uid": "u1"},
    "spec": {"nodeName": "n1"},
    "status": {"phase": "Running"},
}


class NeverStops:
    """A client whose pod keeps running whatever is asked of it."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def patch(self, *args: Any, **kwargs: Any) -> Obj:
        self.calls.append("patch")
        return {}

    async def list(self, *args: Any, **kwargs: Any) -> tuple[list[Obj], str]:
        return [POD], "1"

    async def post_subresource(self, *args: Any, **kwargs: Any) -> Obj:
        self.calls.append("evict")
        return {}

    async def get(self, *args: Any, **kwargs: Any) -> Obj:
        return POD


def test_a_drain_gives_up_waiting_after_its_timeout_of_virtual_time() -> None:
    clock = FakeClock()
    start = clock.now()
    client = NeverStops()
    said: list[str] = []

    async def drain() -> None:
        await Disruptor(client, list, said.append, clock).drain("n1")  # type: ignore[arg-type]

    run(drain(), clock)
    assert STOP_TIMEOUT <= clock.now() - start <= STOP_TIMEOUT + 1
    assert client.calls == ["patch", "evict", "patch"] and said[-1] == "node/n1 uncordoned"
