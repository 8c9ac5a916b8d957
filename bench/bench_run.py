"""Benchmark of `kjobs run`: an Indexed Job of 1,000 pods running `true` with parallelism 50, end to end
(API, Job controller, scheduler, node agent, real processes), beside the raw spawn ceiling — the same 1,000
process starts with the same concurrency and no control plane — measured in the same run.

Run: python bench/bench_run.py [--pods 1000] [--parallelism 50] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_spawn import raw_spawn_ceiling

from kjobs.run import RunOptions, run_job


def job(pods: int, parallelism: int) -> dict[str, object]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "bench", "namespace": "default"},
        "spec": {
            "completionMode": "Indexed",
            "completions": pods,
            "parallelism": parallelism,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox", "command": ["true"]}],
                }
            },
        },
    }


async def kjobs_run_rate(pods: int, parallelism: int) -> tuple[float, str]:
    out = io.StringIO()
    start = time.perf_counter()
    code = await run_job(job(pods, parallelism), RunOptions(out=out, batch_period=0.05))
    elapsed = time.perf_counter() - start
    summary = [line for line in out.getvalue().splitlines() if line.startswith("Job default/")]
    return pods / elapsed, (summary[-1] if summary else f"exit {code}")


async def main(pods: int, parallelism: int, rounds: int) -> None:
    print(f"{pods} pods running `true`, {parallelism} at a time")
    for r in range(rounds):
        ceiling = await raw_spawn_ceiling(pods, parallelism, ["true"])
        rate, outcome = await kjobs_run_rate(pods, parallelism)
        print(
            f"round {r + 1}: raw spawn ceiling {ceiling:8.0f} processes/s | kjobs run {rate:7.0f} pods/s "
            f"({rate / ceiling:.0%} of ceiling) — {outcome}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--parallelism", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=2)
    a = parser.parse_args()
    asyncio.run(main(a.pods, a.parallelism, a.rounds))
