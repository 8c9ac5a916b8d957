"""`kjobs.disrupt.Disruptor` on virtual time: its bounded wait for drained pods is the clock's, not the wall's, and
a drained pod counts as evicted once it is gone, as kubectl's `waitForDelete` has it."""

from __future__ import annotations

from typing import Any

from kjobs.api.errors import not_found
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


class FailsThenGoes(NeverStops):
    """A pod that fails at once but stays (a Job's tracking finalizer holds it) for `held` more reads, then is gone."""

    def __init__(self, held: int) -> None:
        super().__init__()
        self.held = held

    async def get(self, *args: Any, **kwargs: Any) -> Obj:
        self.calls.append("get")
        if self.held == 0:
            raise not_found("pods", "stuck")
        self.held -= 1
        return {**POD, "status": {"phase": "Failed"}}


def test_a_drained_pod_is_evicted_once_it_is_gone_not_when_it_failed() -> None:
    clock = FakeClock()
    start = clock.now()
    client = FailsThenGoes(held=3)
    said: list[str] = []

    async def drain() -> None:
        await Disruptor(client, list, said.append, clock).drain("n1")  # type: ignore[arg-type]

    run(drain(), clock)
    assert client.calls == ["patch", "evict", "get", "get", "get", "get", "patch"]
    assert said == [
        "node/n1 cordoned",
        "evicting pod default/stuck",
        "pod/stuck evicted",
        "node/n1 drained",
        "node/n1 uncordoned",
    ]
    assert clock.now() - start < 1
