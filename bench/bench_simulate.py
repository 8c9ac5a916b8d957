"""Benchmark of `kjobs simulate`: an Indexed Job of 10,000 instant pods, parallelism 500, end to end on the
virtual-time cluster (API service, Job controller, scheduler, node lifecycle and the rest, 5 simulated node
agents), in one process: wall time, pods per second of wall time, virtual time, CPU, and the clock's jumps.

Run: python bench/bench_simulate.py [--pods 10000] [--parallelism 500] [--seed 0]
"""

from __future__ import annotations

import argparse
import resource
import time

from kjobs.cluster import tune_gc
from kjobs.simulate import SimulationOptions, simulate


def job(pods: int, parallelism: int) -> dict[str, object]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "bench", "namespace": "default"},
        "spec": {
            "completionMode": "Indexed",
            "completions": pods,
            "parallelism": parallelism,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}},
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--parallelism", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    tune_gc()  # as `kjobs run` and `kjobs up` do
    cpu = time.process_time()
    result = simulate(job(args.pods, args.parallelism), SimulationOptions(seed=args.seed))
    cpu = time.process_time() - cpu
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert result.outcome == "Complete", result.to_dict()
    print(
        f"{args.pods} pods, parallelism {args.parallelism}: {result.outcome} in {result.virtual_seconds:g} s of "
        f"virtual time; wall {result.wall_seconds:.1f} s = {args.pods / result.wall_seconds:.0f} pods/s; "
        f"CPU {cpu:.1f} s ({1000 * cpu / args.pods:.2f} ms/pod); max RSS {rss_mb:.0f} MB; "
        f"pods created {result.pods_created}"
    )


if __name__ == "__main__":
    main()
