"""Benchmark of the node agent: pods bound to a node until they are Succeeded in the API, per second.

Two runtimes behind the same agent over the in-process API (LocalClient): the simulated runtime (what the
agent itself costs: watch, admission, status writes, events) and the process runtime (`true` as the command).
Pods are created already bound (`spec.nodeName`), in batches below the node's 110-pod limit.

Run: python bench/bench_node_agent.py   (prints a table; no assertions)
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import PODS
from kjobs.clock import RealClock
from kjobs.node.agent import NodeAgent, NodeAgentSettings
from kjobs.node.process_runtime import ProcessRuntime
from kjobs.node.runtime import ContainerRuntime, StatusCallback
from kjobs.node.sim_runtime import SimulatedRuntime
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore


def pod(i: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p-{i}", "namespace": "default"},
        "spec": {
            "restartPolicy": "Never",
            "nodeName": "bench",
            "containers": [{"name": "main", "image": "busybox", "command": ["true"]}],
        },
    }


async def run(kind: str, total: int, batch: int = 100) -> float:
    clock = RealClock()
    service = ApiService(Storage(MemoryStore()), clock=clock.now)
    await service.ensure_namespaces()
    client = LocalClient(service)
    root = Path(tempfile.mkdtemp(prefix="kjobs-bench-"))

    def factory(on_status: StatusCallback) -> ContainerRuntime:
        if kind == "sim":
            return SimulatedRuntime(clock=clock, on_status=on_status)
        return ProcessRuntime(root_dir=root, clock=clock, on_status=on_status)

    agent = NodeAgent(client, name="bench", clock=clock, runtime_factory=factory, settings=NodeAgentSettings())
    await agent.start()
    done = 0

    def count(old: Obj | None, new: Obj | None) -> None:
        nonlocal done
        now_done = new is not None and (new.get("status") or {}).get("phase") == "Succeeded"
        if now_done and ((old or {}).get("status") or {}).get("phase") != "Succeeded":
            done += 1

    agent.pods.add_handler(count)
    start = time.perf_counter()
    for first in range(0, total, batch):
        for i in range(first, min(first + batch, total)):
            await client.create(PODS, "default", pod(i))
        while done < min(first + batch, total):
            await asyncio.sleep(0.001)
    elapsed = time.perf_counter() - start
    await agent.stop()
    return total / elapsed


def main() -> None:
    print(f"{'runtime':<10} {'pods':>6} {'pods/s':>9}")
    for kind, total in (("sim", 1000), ("process", 300)):
        rate = asyncio.run(run(kind, total))
        print(f"{kind:<10} {total:>6} {rate:>9.0f}")


if __name__ == "__main__":
    main()
