"""Spawn benchmark: the raw process-start ceiling beside the same starts as pods through ProcessRuntime.

    python bench/bench_spawn.py [--pods 1000] [--concurrency 50] [--cgroup-starts 200]

Prints, measured in the same run on the same machine:
* raw ceiling — N starts of `true`, C in flight, Popen (no preexec_fn, own session) reaped via pidfd;
* ProcessRuntime — N one-container pods running `true` (restartPolicy Never), C in flight, each waited
  to its terminal PodStatus and then forgotten (files removed);
* memory-limited starts — how a process enters its memory cgroup: the `sh` trampoline ProcessRuntime uses
  versus writing the pid into `cgroup.procs` right after spawn (racy; shown for the record), when a
  writable memory cgroup exists.
`raw_spawn_ceiling` is importable so the `kjobs run` benchmark can measure the ceiling in its own run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kjobs.api.types import Obj
from kjobs.node.cgroups import CgroupV1Guard, CgroupV2Guard, probe_memory_guard
from kjobs.node.process_runtime import ProcessRuntime


async def _bounded(n: int, concurrency: int, start: Callable[[Callable[[], None]], None]) -> float:
    """Run `n` starts with `concurrency` in flight; `start(done)` must call `done()` when one ends."""
    loop = asyncio.get_running_loop()
    finished = loop.create_future()
    counts = {"started": 0, "done": 0}

    def done() -> None:
        counts["done"] += 1
        if counts["done"] == n:
            finished.set_result(None)
        elif counts["started"] < n:
            counts["started"] += 1
            start(done)

    began = time.perf_counter()
    for _ in range(min(concurrency, n)):
        counts["started"] += 1
        start(done)
    await finished
    return time.perf_counter() - began


def _popen_reaped(argv: list[str], done: Callable[[], None], after_spawn: Callable[[int], None] | None = None) -> None:
    loop = asyncio.get_running_loop()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    if after_spawn is not None:
        after_spawn(proc.pid)
    pidfd = os.pidfd_open(proc.pid)

    def reap() -> None:
        loop.remove_reader(pidfd)
        os.close(pidfd)
        proc.wait()
        done()

    loop.add_reader(pidfd, reap)


async def raw_spawn_ceiling(n: int = 1000, concurrency: int = 50, argv: list[str] | None = None) -> float:
    """Processes per second: `n` starts of `argv` (default `true`) with `concurrency` in flight."""
    command = argv or ["true"]
    elapsed = await _bounded(n, concurrency, lambda done: _popen_reaped(command, done))
    return n / elapsed


def _pod(i: int) -> Obj:
    return {
        "metadata": {
            "name": f"bench-{i}",
            "namespace": "default",
            "uid": f"bench-uid-{i}",
            "labels": {"batch.kubernetes.io/job-completion-index": str(i)},
        },
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox", "command": ["true"]}]},
    }


async def runtime_pods_per_second(n: int = 1000, concurrency: int = 50, root_parent: str | None = None) -> float:
    """Pods per second through ProcessRuntime: admit, run `true`, terminal status, forget."""
    with tempfile.TemporaryDirectory(prefix="kjobs-bench-", dir=root_parent) as root:
        runtime = ProcessRuntime(root_dir=Path(root))
        waiting: dict[str, Callable[[], None]] = {}
        loop = asyncio.get_running_loop()
        next_index = iter(range(n))
        tasks: set[asyncio.Task[object]] = set()

        def on_status(uid: str, status: Obj) -> None:
            handle = runtime.get(uid)
            if handle is not None and handle.terminal and uid in waiting:
                done = waiting.pop(uid)
                loop.call_soon(runtime.forget, uid)
                done()

        runtime.on_status = on_status

        def start(done: Callable[[], None]) -> None:
            pod = _pod(next(next_index))
            waiting[pod["metadata"]["uid"]] = done
            task = loop.create_task(runtime.run_pod(pod))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

        try:
            elapsed = await _bounded(n, concurrency, start)
        finally:
            await runtime.shutdown()
    return n / elapsed


async def cgroup_entry_rates(n: int = 200, concurrency: int = 50) -> dict[str, float] | None:
    """Limited starts per second: trampoline vs pid written after spawn (None without a writable cgroup)."""
    guard = probe_memory_guard()
    if not isinstance(guard, CgroupV1Guard | CgroupV2Guard):
        return None
    rates: dict[str, float] = {}
    try:
        counter = iter(range(10 * n))

        def trampoline(done: Callable[[], None]) -> None:
            placement = guard.place(f"t{next(counter)}", 64 * 2**20)

            def finish() -> None:
                guard.release(placement)
                done()

            _popen_reaped([*placement.argv_prefix, "true"], finish)

        def write_after(done: Callable[[], None]) -> None:
            placement = guard.place(f"w{next(counter)}", 64 * 2**20)
            assert placement.path is not None
            procs = placement.path / "cgroup.procs"

            def enter(pid: int) -> None:
                with contextlib.suppress(OSError):  # the process may already have exited
                    procs.write_text(str(pid))

            def finish() -> None:
                guard.release(placement)
                done()

            _popen_reaped(["true"], finish, after_spawn=enter)

        rates["trampoline (sh -c 'echo $$ > cgroup.procs; exec')"] = n / await _bounded(n, concurrency, trampoline)
        rates["pid written after spawn (racy)"] = n / await _bounded(n, concurrency, write_after)
        rates["no cgroup (raw)"] = await raw_spawn_ceiling(n, concurrency)
    finally:
        guard.close()
    return rates


async def main(pods: int, concurrency: int, cgroup_starts: int, rounds: int, roots: list[str]) -> None:
    await raw_spawn_ceiling(50, concurrency)  # warm-up
    raws: list[float] = []
    runtimes: dict[str, list[float]] = {root: [] for root in roots}
    for _ in range(rounds):  # interleaved, so background load hits all alike
        raws.append(await raw_spawn_ceiling(pods, concurrency))
        for root in roots:
            runtimes[root].append(await runtime_pods_per_second(pods, concurrency, root))
    raw = statistics.median(raws)
    print(f"raw spawn ceiling   : {raw:8.0f} processes/s  ({pods} x `true`, {concurrency} in flight, Popen + pidfd)")
    for root, values in runtimes.items():
        rate = statistics.median(values)
        print(
            f"ProcessRuntime pods : {rate:8.0f} pods/s       ({pods} pods, {concurrency} in flight, root in {root})"
            f" = {rate / raw:.0%}"
        )
    print(
        f"  (medians of {rounds} interleaved rounds; raw {_rounded(raws)}, runtime "
        + ", ".join(f"{root} {_rounded(v)}" for root, v in runtimes.items())
        + ")"
    )
    if not cgroup_starts:
        return
    samples: dict[str, list[float]] = {}
    for _ in range(rounds):
        rates = await cgroup_entry_rates(cgroup_starts, concurrency)
        if rates is None:
            print("memory cgroup       : none writable here (ProcessRuntime uses the RSS watchdog)")
            return
        for name, rate in rates.items():
            samples.setdefault(name, []).append(rate)
    for name, values in samples.items():
        print(f"limited starts      : {statistics.median(values):8.0f} /s  {name}  {_rounded(values)}")


def _rounded(values: list[float]) -> list[int]:
    return [round(v) for v in values]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--cgroup-starts", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--root",
        action="append",
        help="parent directory of the runtime's root (repeatable; default: /tmp and /dev/shm)",
    )
    args = parser.parse_args()
    roots = args.root or [tempfile.gettempdir()] + (["/dev/shm"] if os.path.isdir("/dev/shm") else [])
    asyncio.run(main(args.pods, args.concurrency, args.cgroup_starts, args.rounds, roots))
