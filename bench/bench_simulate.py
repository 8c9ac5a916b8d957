"""Benchmark of `kjobs simulate`, as issue #15 states it: an Indexed Job of 100,000 completions, parallelism 5,000,
`backoffLimitPerIndex: 3`, 5 % of containers failing (exit 1, drawn per attempt from the seed), every container
instant, end to end on the virtual-time cluster (API service, Job controller, scheduler, node lifecycle and the
rest, simulated node agents) in one process: wall time, pods per second of wall time, virtual time, CPU, peak RSS.

Run: python bench/bench_simulate.py [--pods 100000] [--parallelism 5000] [--fail-percent 5] [--seed 0]
(`--pods 10000 --parallelism 500` for a quick look.)
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_jobs import indexed_job

from kjobs.cluster import tune_gc
from kjobs.simulate import SimulationOptions, simulate
from kjobs.simulate.model import parse_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=100_000)
    parser.add_argument("--parallelism", type=int, default=5_000)
    parser.add_argument("--backoff-limit-per-index", type=int, default=3)
    parser.add_argument("--fail-percent", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    fail = args.fail_percent / 100
    model = parse_model({"containers": {"exitCodes": [{"code": 0, "weight": 1 - fail}, {"code": 1, "weight": fail}]}})
    tune_gc()  # as `kjobs run` and `kjobs simulate` do
    cpu = time.process_time()
    result = simulate(
        indexed_job(args.pods, args.parallelism, backoff_limit_per_index=args.backoff_limit_per_index),
        SimulationOptions(model=model, seed=args.seed),
    )
    cpu = time.process_time() - cpu
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    created = result.pods_created
    print(
        f"{args.pods} completions, parallelism {args.parallelism}, {args.fail_percent:g} % failing: {result.outcome} "
        f"in {result.virtual_seconds:g} s of virtual time; {created} pods in {result.wall_seconds:.1f} s of wall "
        f"time = {created / result.wall_seconds:.0f} pods/s; CPU {cpu:.1f} s ({1000 * cpu / created:.2f} ms/pod); "
        f"max RSS {rss_mb:.0f} MB; failed {sum(result.failures_by_action.values())}"
    )


if __name__ == "__main__":
    main()
