"""Benchmark of the scheduler: the pure decisions (PodInfo build, filter + score per pod, one preemption search)
and a pending Job of 1,000 pods bound end to end through the in-process API.

Run: python bench/bench_scheduler.py   (prints a table; no assertions — figures go to the report/README)
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from kjobs.client.resources import NODES, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.interpod import cluster_scorer, default_spread_selector
from kjobs.controllers.preemption import nominated_on, preempt
from kjobs.controllers.scheduler import Scheduler, SchedulerSettings
from kjobs.controllers.scheduling import NodeInfo, PodInfo, filter_node, pod_info, select_host
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore


def node_obj(name: str, cpu: str = "64") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {
            "allocatable": {"cpu": cpu, "memory": "256Gi", "pods": "500"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod_obj(i: int, cpu: str = "100m") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"big-{i:05d}",
            "namespace": "default",
            "uid": f"uid-{i}",
            "labels": {"job-name": "big"},
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {
            "restartPolicy": "Never",
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}],
            "containers": [
                {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}
            ],
        },
    }


def nodes(n: int) -> list[NodeInfo]:
    result = []
    for i in range(n):
        info = NodeInfo(f"node-{i:03d}")
        info.set_node(node_obj(info.name))
        result.append(info)
    return result


def decide(pods: list[PodInfo], cluster: list[NodeInfo]) -> None:
    for p in pods:
        feasible = [n for n in cluster if filter_node(p, n) is None]
        host = select_host(p, feasible, cluster_scorer(p, cluster, {}, default_spread_selector(p, {})))
        target = next(n for n in cluster if n.name == host)
        target.add_pod(p)


def pure() -> None:
    raw = [pod_obj(i) for i in range(1000)]
    t0 = time.perf_counter()
    infos = [pod_info(r, priority=0, preempt_never=False) for r in raw]
    t1 = time.perf_counter()
    print(f"PodInfo build            1000 pods        {(t1 - t0) * 1e3:8.1f} ms  ({(t1 - t0) * 1e6 / 1000:.1f} µs/pod)")
    for n in (4, 100):
        cluster = nodes(n)
        t0 = time.perf_counter()
        decide(infos, cluster)
        t1 = time.perf_counter()
        per_pod = (t1 - t0) * 1e6 / 1000
        print(f"filter+score+assume      1000 pods {n:3d} nodes {(t1 - t0) * 1e3:8.1f} ms  ({per_pod:.1f} µs/pod)")
    cluster = nodes(100)
    for i, n in enumerate(cluster):
        for j in range(10):
            bound = pod_obj(i * 10 + j, cpu="6400m")
            bound["spec"]["nodeName"] = n.name
            n.add_pod(pod_info(bound, priority=j, preempt_never=False))
    high = pod_info(pod_obj(99999, cpu="13"), priority=100, preempt_never=False)
    statuses = {n.name: s for n in cluster if (s := filter_node(high, n)) is not None}
    t0 = time.perf_counter()
    result = preempt(high, cluster, statuses, nominated={}, pdbs=[], now=0.0)
    t1 = time.perf_counter()
    assert result.candidate is not None and nominated_on(result.candidate.node, high, {}) == []
    victims = len(result.candidate.victims)
    print(f"preemption search        1 pod  100 nodes x 10 pods {(t1 - t0) * 1e3:5.1f} ms  ({victims} victims)")


async def end_to_end(n_nodes: int = 4, n_pods: int = 1000) -> None:
    clock = FakeClock()
    service = ApiService(Storage(MemoryStore()), clock=clock.now)
    await service.ensure_namespaces()
    from kjobs.client.local import LocalClient

    client = LocalClient(service)
    for i in range(n_nodes):
        await client.create(NODES, None, node_obj(f"node-{i}"))
    for i in range(n_pods):
        body = pod_obj(i)
        del body["metadata"]["uid"], body["metadata"]["creationTimestamp"]
        await client.create(PODS, "default", body)
    # Events unthrottled: the virtual clock does not move here, so a rate-limited recorder would never drain.
    sched = Scheduler(client, clock=clock, settings=SchedulerSettings(event_qps=0))
    wall0, cpu0 = time.perf_counter(), time.process_time()
    await sched.start()
    while sched._pending or sched._background:  # scanning 1,000 pods a turn would cost more than scheduling them
        await asyncio.sleep(0)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    await sched.events.flush()
    await sched.stop()
    print(
        f"end to end (LocalClient) {n_pods} pods {n_nodes:3d} nodes  {wall * 1e3:8.1f} ms wall, {cpu * 1e3:.1f} ms CPU "
        "(informer list, decisions, Binding writes, Scheduled events)"
    )


async def settle(clock: FakeClock, until: Any) -> None:
    """Run the loop until `until()` holds, advancing virtual time only when idle (as tests/support.settle)."""
    while True:
        for _ in range(200):
            if until():
                return
            await asyncio.sleep(0)
        deadline = clock.next_deadline()
        assert deadline is not None, "stuck"
        clock.set(deadline)


async def retry_storm(completions: int = 50) -> None:
    """4 nodes x 25 CPUs, 1,000 one-CPU pods: 100 run, 900 wait; each completion frees one slot, which retries
    every waiting pod (as in Kubernetes). Reports CPU per completion and the Events written meanwhile."""
    from kjobs.client.local import LocalClient
    from kjobs.client.resources import EVENTS

    clock = FakeClock()
    service = ApiService(Storage(MemoryStore()), clock=clock.now)
    await service.ensure_namespaces()
    client = LocalClient(service)
    for i in range(4):
        await client.create(NODES, None, node_obj(f"node-{i}", cpu="25"))
    for i in range(1000):
        body = pod_obj(i, cpu="1")
        del body["metadata"]["uid"], body["metadata"]["creationTimestamp"]
        body["spec"]["terminationGracePeriodSeconds"] = 0
        await client.create(PODS, "default", body)
    sched = Scheduler(client, clock=clock)
    await sched.start()

    def quiet() -> bool:
        return sched.queue.idle() and not sched._background and len(sched._parked) == len(sched._pending)

    await settle(clock, lambda: len(sched.pending()) == 900 and quiet())
    await sched.events.flush()
    before = len((await client.list(EVENTS, "default"))[0])
    cpu0 = time.process_time()
    for _ in range(completions):
        name = next(p["metadata"]["name"] for p in sched.pods.list() if p["spec"].get("nodeName"))
        await client.delete(PODS, "default", name)
        await settle(clock, lambda n=name: sched.pods.get("default", n) is None and quiet())  # type: ignore[misc]
    cpu = (time.process_time() - cpu0) / completions
    await sched.events.flush()
    written = len((await client.list(EVENTS, "default"))[0]) - before
    await sched.stop()
    print(f"retry storm: 900 waiting, per completion {cpu * 1e3:6.1f} ms CPU, {written / completions:.1f} events")


if __name__ == "__main__":
    pure()
    asyncio.run(end_to_end())
    asyncio.run(retry_storm())
