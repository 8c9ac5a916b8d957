"""Store throughput: creates/s and CAS updates/s of ~3.3 KB pods, reads/s, watch events/s.

Plain script: `python bench/bench_store.py [--n 5000] [--backend sqlite|memory|both]`. Prints one table row
per measurement. Writers: sequential (one thread), 32 threads, and 32 asyncio tasks on one loop. SQLite runs
with `synchronous=FULL` in a temporary directory (on the disk `TMPDIR` points at).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import threading
import time
from collections.abc import Callable

import orjson

from kjobs.api.types import Obj
from kjobs.store import MemoryStore, SqliteStore, Store

CONCURRENCY = 32


def make_pod(i: int) -> Obj:
    """A Pod shaped like what the job controller creates (about 3.3 KB of JSON)."""
    name = f"job-{i // 10}-{i:06d}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"{i:08x}-1111-2222-3333-444455556666",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {
                "batch.kubernetes.io/controller-uid": f"{i // 10:08x}-aaaa-bbbb-cccc-ddddeeeeffff",
                "batch.kubernetes.io/job-name": f"job-{i // 10}",
                "controller-uid": f"{i // 10:08x}-aaaa-bbbb-cccc-ddddeeeeffff",
                "job-name": f"job-{i // 10}",
            },
            "annotations": {"batch.kubernetes.io/job-completion-index": str(i % 10)},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": f"job-{i // 10}",
                    "uid": f"{i // 10:08x}-aaaa-bbbb-cccc-ddddeeeeffff",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "finalizers": ["batch.kubernetes.io/job-tracking"],
        },
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "busybox:1.36",
                    "command": ["sh", "-c", "echo working; sleep 1; exit 0"],
                    "env": [{"name": f"VAR_{k}", "value": "v" * 40} for k in range(12)],
                    "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "nodeName": f"node-{i % 4}",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
            ],
        },
        "status": {
            "phase": "Running",
            "hostIP": "10.0.0.1",
            "podIP": f"10.1.{i // 250 % 250}.{i % 250}",
            "startTime": "2026-01-01T00:00:01Z",
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": "2026-01-01T00:00:02Z"}
                for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "containerStatuses": [
                {
                    "name": "main",
                    "ready": True,
                    "restartCount": 0,
                    "image": "busybox:1.36",
                    "imageID": "docker-pullable://busybox@sha256:" + "0" * 64,
                    "containerID": "kjobs://" + "f" * 64,
                    "started": True,
                    "state": {"running": {"startedAt": "2026-01-01T00:00:02Z"}},
                }
            ],
        },
    }


def row(backend: str, what: str, count: int, seconds: float) -> None:
    print(f"| {backend:<7} | {what:<48} | {count:>7} | {count / seconds:>12,.0f} |", flush=True)


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def in_threads(n: int, work: Callable[[int], None]) -> float:
    """Run `work(t)` for t in range(CONCURRENCY) on as many threads; return wall time."""

    def run() -> None:
        threads = [threading.Thread(target=work, args=(t,)) for t in range(CONCURRENCY)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    return timed(run)


def bench(backend: str, make: Callable[[], Store], n: int) -> None:
    pods = [make_pod(i) for i in range(n)]
    store = make()
    names = [p["metadata"]["name"] for p in pods]

    def create_all() -> None:
        for i in range(n):
            store.create("pods", "default", names[i], pods[i])

    row(backend, "create, sequential", n, timed(create_all))

    def update_all(start: int, stop: int, step: int = 1) -> None:
        for i in range(start, stop, step):
            cur = store.get("pods", "default", names[i])
            cur["status"]["phase"] = "Succeeded" if cur["status"]["phase"] == "Running" else "Running"
            store.update("pods", "default", names[i], cur, expected_rv=cur["metadata"]["resourceVersion"])

    row(backend, "CAS update (get + update), sequential", n, timed(lambda: update_all(0, n)))

    store.close()
    store = make()
    per = n // CONCURRENCY
    total = per * CONCURRENCY

    def create_slice(t: int) -> None:
        for i in range(t * per, (t + 1) * per):
            store.create("pods", "default", names[i], pods[i])

    row(backend, f"create, {CONCURRENCY} threads", total, in_threads(total, create_slice))
    t = in_threads(total, lambda t: update_all(t * per, (t + 1) * per))
    row(backend, f"CAS update, {CONCURRENCY} threads", total, t)

    store.close()
    store = make()

    async def async_creates() -> None:
        sem = asyncio.Semaphore(CONCURRENCY)

        async def one(i: int) -> None:
            async with sem:
                await store.acreate("pods", "default", names[i], pods[i])

        await asyncio.gather(*(one(i) for i in range(n)))

    async def async_updates() -> None:
        sem = asyncio.Semaphore(CONCURRENCY)

        async def one(i: int) -> None:
            async with sem:
                cur = store.get("pods", "default", names[i])
                cur["status"]["phase"] = "Failed"
                await store.aupdate("pods", "default", names[i], cur, expected_rv=cur["metadata"]["resourceVersion"])

        await asyncio.gather(*(one(i) for i in range(n)))

    row(backend, f"acreate, {CONCURRENCY} asyncio tasks", n, timed(lambda: asyncio.run(async_creates())))
    row(backend, f"aupdate (CAS), {CONCURRENCY} asyncio tasks", n, timed(lambda: asyncio.run(async_updates())))

    def repeat(k: int, fn: Callable[[int], object]) -> Callable[[], None]:
        def run() -> None:
            for i in range(k):
                fn(i)

        return run

    reads = min(n, 20000)
    row(backend, "get (decoded dict)", reads, timed(repeat(reads, lambda i: store.get("pods", "default", names[i]))))
    row(backend, "get_raw (bytes)", reads, timed(repeat(reads, lambda i: store.get_raw("pods", "default", names[i]))))
    lists = 50
    sel = f"batch.kubernetes.io/controller-uid={7:08x}-aaaa-bbbb-cccc-ddddeeeeffff"
    t = timed(repeat(lists, lambda i: store.list("pods", "default", label_selector=sel)))
    row(backend, f"list 10 of {n} pods by controller-uid label", lists, t)
    t = timed(repeat(lists, lambda i: store.list("pods", field_selector="spec.nodeName=node-1,status.phase!=Failed")))
    row(backend, f"list {n // 4} of {n} pods by field selector", lists, t)
    t = timed(repeat(lists, lambda i: store.list_raw("pods", "default")))
    row(backend, f"list_raw, all {n} pods", lists, t)

    # watch fan-out: 4 watchers, one of them filtered, consume while a writer updates
    watchers = [store.watch("pods", since=store.revision) for _ in range(3)]
    watchers.append(store.watch("pods", since=store.revision, field_selector="spec.nodeName=node-1"))
    received = [0] * len(watchers)

    def consume(k: int) -> None:
        w = watchers[k]
        while w.next(5.0) is not None:
            received[k] += 1

    consumers = [threading.Thread(target=consume, args=(k,)) for k in range(len(watchers))]
    for c in consumers:
        c.start()
    t = in_threads(total, lambda t: update_all(t * per, (t + 1) * per))
    for w in watchers:
        while w.next(0.5) is not None:
            pass
    for w in watchers:
        w.close()
    for c in consumers:
        c.join()
    delivered = sum(received)
    row(backend, f"watch events delivered during {CONCURRENCY}-thread CAS", delivered, t)
    initial = store.watch("pods", since=None)
    row(backend, "watch from 0: initial ADDED, decoded", n, timed(lambda: [e.object for e in initial.drain()]))
    initial.close()
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--backend", choices=["sqlite", "memory", "both"], default="both")
    args = parser.parse_args()
    size = len(orjson.dumps(make_pod(0)))
    print(f"pod size {size} bytes, n={args.n}, cpus={os.cpu_count()}")
    print(f"| {'backend':<7} | {'operation':<48} | {'count':>7} | {'per second':>12} |")
    print(f"|{'-' * 9}|{'-' * 50}|{'-' * 9}|{'-' * 14}|")
    with tempfile.TemporaryDirectory() as tmp:
        counter = iter(range(1000))
        if args.backend in ("memory", "both"):
            bench("memory", MemoryStore, args.n)
        if args.backend in ("sqlite", "both"):
            bench("sqlite", lambda: SqliteStore(os.path.join(tmp, f"db{next(counter)}")), args.n)


if __name__ == "__main__":
    main()
