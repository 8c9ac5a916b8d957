"""Benchmark of the disruption machinery in process (LocalClient over a MemoryStore, virtual time): wall time
for the taint-eviction controller to mark and delete N pods of a newly NoExecute-tainted node, for pod GC to
fail and force-delete N pods of a deleted node, and for the garbage collector to delete N dependents whose
owner never existed. Each figure includes the API writes (status patch + delete per pod).

Run: python bench/bench_disruption.py [N]   (prints a table; no assertions)
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import Any

from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import NODES, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.garbagecollector import GarbageCollector
from kjobs.controllers.podgc import PodGCController
from kjobs.controllers.tainteviction import TaintEvictionController
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore

GHOST_UID = "00000000-0000-0000-0000-000000000000"


def pod(name: str, node: str | None, owner: bool = False) -> Obj:
    body: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
    }
    if node:
        body["spec"]["nodeName"] = node
    if owner:
        body["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "x", "uid": GHOST_UID}]
    return body


async def until(clock: FakeClock, done: Callable[[], bool]) -> None:
    """Run the loop, jumping virtual time only when idle (as tests/support.settle does)."""
    while True:
        for _ in range(200):
            if done():
                return
            await asyncio.sleep(0)
        deadline = clock.next_deadline()
        if deadline is None:
            raise RuntimeError("stuck")
        clock.set(deadline)


async def run(n: int) -> list[tuple[str, float]]:
    clock = FakeClock()
    service = ApiService(Storage(MemoryStore()), clock=clock.now)
    await service.ensure_namespaces()
    client: Any = LocalClient(service)
    rows: list[tuple[str, float]] = []
    await client.create(NODES, None, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    for i in range(n):
        await client.create(PODS, "default", pod(f"p{i}", "n1"))

    evictor = TaintEvictionController(client, clock=clock)
    await evictor.start()
    node = await client.get(NODES, None, "n1")
    # a taint no pod tolerates (every pod tolerates unreachable for 300 s: DefaultTolerationSeconds admission)
    node["spec"] = {"taints": [{"key": "example.com/broken", "effect": "NoExecute"}]}
    start = time.perf_counter()
    await client.update(NODES, None, node)
    await until(clock, lambda: sum(1 for p in evictor.pods.list() if p["metadata"].get("deletionTimestamp")) == n)
    rows.append(("taint eviction: DisruptionTarget + delete", time.perf_counter() - start))
    await evictor.stop()

    gc = PodGCController(client, clock=clock)
    await gc.start()
    start = time.perf_counter()
    await client.delete(NODES, None, "n1")
    await until(clock, lambda: not gc.pods.list())
    rows.append(("pod GC: orphans Failed + DisruptionTarget + force delete", time.perf_counter() - start))
    await gc.stop()

    collector = GarbageCollector(client, clock=clock)
    await collector.start()
    for i in range(n):
        await client.create(PODS, "default", pod(f"d{i}", None, owner=True))
    start = time.perf_counter()
    await until(clock, lambda: len(collector.nodes) >= n)
    await until(clock, lambda: not collector.informers[PODS].list())
    rows.append(("garbage collector: dependents of a missing owner", time.perf_counter() - start))
    await collector.stop()
    return rows


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    for label, seconds in asyncio.run(run(n)):
        print(f"{label:<58} {n} pods  {seconds * 1000:8.1f} ms  {n / seconds:8.0f} pods/s")


if __name__ == "__main__":
    main()
