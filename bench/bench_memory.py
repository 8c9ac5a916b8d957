"""Benchmark of memory per stored pod (issue #15: 100,000 pods stored; aim ≤ 6 KB a pod), two figures:

(a) the store: bytes per pod that 100,000 finished pods of an Indexed Job add to a `MemoryStore` and to the
    `SqliteStore` `kjobs up` uses, by tracemalloc and by RSS (before/after, divided by the pod count). The pods
    are real: those a small embedded-cluster run leaves (created by the Job controller, bound, a terminal
    status written by the node agent, the tracking finalizer removed), cloned with distinct names, uids and
    completion indexes, and written the way the API server writes (`acreate(..., adopt=True)`). With and
    without `managedFields` (`kjobs up` records them; `kjobs simulate` does not).
(b) the whole process: RSS per pod of a `kjobs simulate`-style embedded cluster (store, every informer cache,
    the controllers' and node agents' own state) that has just run an Indexed Job of `--process-pods` instant
    pods to completion and still holds them, against the same process before the cluster started.

`--top N` prints the N tracemalloc lines (file:line) that hold most of the store's bytes; `--trace-process N`
traces (b) too (slower) and prints its N top lines.

Run: python bench/bench_memory.py [--pods 100000] [--process-pods 100000] [--parallelism 5000] [--top 12]
     [--skip-process] [--skip-store] [--trace-process 15]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_jobs import indexed_job

from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import JOBS
from kjobs.clock import FakeClock
from kjobs.cluster import ClusterSettings, tune_gc
from kjobs.simulate.session import default_nodes, virtual_cluster
from kjobs.store import MemoryStore, SqliteStore, Store
from kjobs.virtualtime import run

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    """Resident bytes of this process now."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


async def _run_job(
    settings: ClusterSettings, pods: int, parallelism: int, measure: Callable[[Store], object] | None = None
) -> tuple[list[bytes], object]:
    """Run an Indexed Job to completion on a virtual-time embedded cluster; its pods' JSON as stored, and what
    `measure` returns when called with the cluster still up."""
    async with virtual_cluster(settings) as cluster:
        user = LocalClient(cluster.service, manager="bench", typed=False)
        await user.create(JOBS, "default", indexed_job(pods, parallelism))
        while True:
            await asyncio.sleep(1.0)
            status = (await user.get(JOBS, "default", "bench")).get("status") or {}
            if any(c.get("type") in ("Complete", "Failed") for c in status.get("conditions") or ()):
                break
        store = cluster.service.store.store
        raws, _ = store.list_raw("pods")
        return raws, measure(store) if measure is not None else None


def real_pods(count: int, field_managers: bool) -> list[Obj]:
    """The pods a `count`-pod Indexed Job leaves in an embedded cluster's store."""
    settings = ClusterSettings(nodes=1, runtime="sim", field_managers=field_managers, events=False)
    raws, _ = run(_run_job(settings, count, min(count, 100)), FakeClock())
    return [orjson.loads(r) for r in raws]


def clones(templates: list[Obj], count: int) -> Iterator[Obj]:
    """`count` pods like `templates`, each with its own name, uid, completion index and container id."""
    rng = random.Random(0)
    for i in range(count):
        pod = orjson.loads(orjson.dumps(templates[i % len(templates)]))
        meta = pod["metadata"]
        index = str(i)
        suffix = "".join(rng.choices("bcdfghjklmnpqrstvwxz2456789", k=5))
        meta["name"] = f"bench-{index}-{suffix}"
        meta["generateName"] = f"bench-{index}-"
        meta["uid"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        meta.pop("resourceVersion", None)
        meta["labels"][JOB_COMPLETION_INDEX_ANNOTATION] = index
        meta["annotations"][JOB_COMPLETION_INDEX_ANNOTATION] = index
        pod["spec"]["hostname"] = f"bench-{index}"
        for cs in pod["status"].get("containerStatuses") or ():
            cid = f"sim://{rng.getrandbits(128):032x}"
            cs["containerID"] = cid
            terminated = (cs.get("state") or {}).get("terminated")
            if terminated:
                terminated["containerID"] = cid
        yield pod


async def _fill(store: Store, pods: Iterator[Obj]) -> None:
    """Write the pods as the API server does (`adopt`), 200 in flight (one at a time, SQLite would fsync each)."""

    async def one(pod: Obj) -> None:
        meta = pod["metadata"]
        await store.acreate("pods", meta["namespace"], meta["name"], pod, adopt=True)

    while batch := list(itertools.islice(pods, 200)):
        await asyncio.gather(*(one(pod) for pod in batch))


def store_figure(kind: str, field_managers: bool, pods: int, templates: int, top: int, tmp: str) -> dict[str, Any]:
    """Bytes a fresh store holds once `pods` cloned pods were written to it: by RSS, then (a second store) by
    tracemalloc, with the share of the store's bounded cache of recently written objects (`Store._latest`)."""
    real = real_pods(templates, field_managers)

    def make() -> Store:
        return MemoryStore() if kind == "memory" else SqliteStore(f"{tmp}/{uuid.uuid4().hex}.db")

    gc.collect()
    before = rss()
    store = make()
    asyncio.run(_fill(store, clones(real, pods)))
    gc.collect()
    grown = rss() - before
    store.close()
    del store
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.take_snapshot()
    traced0 = tracemalloc.get_traced_memory()[0]
    store = make()
    asyncio.run(_fill(store, clones(real, pods)))
    gc.collect()
    traced = tracemalloc.get_traced_memory()[0] - traced0
    snap = tracemalloc.take_snapshot()
    store._latest.clear()  # what the bounded cache of decoded objects held
    gc.collect()
    cache = traced0 + traced - tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    lines = [(_where(s.traceback[0]), s.size_diff) for s in snap.compare_to(base, "lineno")[:top]]
    store.close()
    size = sum(len(orjson.dumps(p)) for p in real) / len(real)
    return {"json": size, "rss": grown, "traced": traced, "cache": cache, "top": lines}


def process_figure(pods: int, parallelism: int, top: int = 0) -> tuple[int, int, int, list[tuple[str, int]]]:
    """(RSS before the cluster, RSS with the finished Job's pods held, max RSS, and with `top` the tracemalloc
    lines holding most of the difference) of a `kjobs simulate`-style run."""
    gc.collect()
    if top:
        tracemalloc.start()
        base = tracemalloc.take_snapshot()
    before = rss()
    settings = ClusterSettings(
        nodes=default_nodes(indexed_job(pods, parallelism)), runtime="sim", field_managers=False, events=False
    )
    lines: list[tuple[str, int]] = []

    def measure(_store: Store) -> int:
        gc.collect()
        if top:
            stats = tracemalloc.take_snapshot().compare_to(base, "lineno")[:top]
            lines.extend((_where(s.traceback[0]), s.size_diff) for s in stats)
        return rss()

    _, held = run(_run_job(settings, pods, parallelism, measure), FakeClock())
    assert isinstance(held, int)
    return before, held, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, lines


def _where(frame: tracemalloc.Frame) -> str:
    return f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=100_000, help="pods stored for figure (a)")
    parser.add_argument("--templates", type=int, default=200, help="real pods cloned for figure (a)")
    parser.add_argument("--process-pods", type=int, default=100_000, help="pods of the Job run for figure (b)")
    parser.add_argument("--parallelism", type=int, default=5_000)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument(
        "--trace-process", type=int, default=0, metavar="N", help="trace (b) with tracemalloc (slower): top N lines"
    )
    parser.add_argument("--skip-store", action="store_true")
    parser.add_argument("--skip-process", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    tune_gc()  # as `kjobs run`, `kjobs up` and `kjobs simulate` do
    if not args.skip_process:  # first, on a fresh process: RSS is a high-water mark
        t = time.perf_counter()
        before, held, peak, lines = process_figure(args.process_pods, args.parallelism, args.trace_process)
        n = args.process_pods
        print(
            f"(b) whole process, kjobs simulate of {n} pods (parallelism {args.parallelism}), finished, cluster up: "
            f"{(held - before) / n:,.0f} B/pod (RSS {before / 2**20:.0f} -> {held / 2**20:.0f} MB, "
            f"max RSS {peak / 2**20:.0f} MB, {time.perf_counter() - t:.0f} s)"
        )
        for line, size_diff in lines:
            print(f"        {size_diff / n:8,.0f} B/pod  {line}")
    if args.skip_store:
        return
    with tempfile.TemporaryDirectory() as tmp:
        for field_managers in (True, False):
            what = "with managedFields (kjobs up)" if field_managers else "without managedFields (kjobs simulate)"
            for kind in ("memory", "sqlite"):
                spec = f"{kind},{int(field_managers)},{args.pods},{args.templates},{args.top},{tmp}"
                out = subprocess.run(
                    [sys.executable, __file__, "--child", spec], check=True, capture_output=True, text=True
                ).stdout
                fig = orjson.loads(out.splitlines()[-1])
                n = args.pods
                name = "MemoryStore" if kind == "memory" else "SqliteStore"
                print(
                    f"(a) {name}, {n} pods {what}, JSON {fig['json']:,.0f} B/pod: "
                    f"{fig['traced'] / n:,.0f} B/pod traced ({(fig['traced'] - fig['cache']) / n:,.0f} without the "
                    f"{fig['cache'] / 2**20:.0f} MB cache of the 4,096 newest objects), {fig['rss'] / n:,.0f} B/pod RSS"
                )
                for line, size_diff in fig["top"]:
                    print(f"        {size_diff / n:8,.0f} B/pod  {line}")


def child(spec: str) -> None:
    """One store measurement in a process of its own (RSS only grows), printed as one JSON line."""
    kind, fm, pods, templates, top, tmp = spec.split(",", 5)
    tune_gc()
    fig = store_figure(kind, fm == "1", int(pods), int(templates), int(top), tmp)
    print(orjson.dumps(fig).decode())


if __name__ == "__main__":
    main()
