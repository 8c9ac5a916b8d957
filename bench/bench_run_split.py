"""Where the CPU of `kjobs run` of issue #15's Job goes, process by process, and whether its control plane waits
for a core: the `kjobs run` process's main thread (on a CPU, waiting on a run queue, its voluntary and
involuntary context switches, from /proc's `schedstat` and `status`), its process shims' own CPU and their
children's (the pods'), each run of `kjobs run` of the Indexed Job `bench_run_xargs` times (N pods of `sh -c true`,
parallelism P), trees alternating in each round.

Run: python bench/bench_run_split.py [--pods 5000] [--parallelism 50] [--rounds 2] KJOBS [KJOBS...]

KJOBS: a `kjobs` executable (a wrapper script `exec env PYTHONPATH=<tree>/src python -m kjobs "$@"` whose `exec`
leaves the Python process as the child). /proc is polled every 10 ms, so each figure misses the last 10 ms of its
process; the shims are the children of the `kjobs run` process whose command line names `shim.py`. The main
thread's run-queue wait is the time it could have run and did not: on a machine with as few cores as busy
processes, that is where a run's wall time goes beyond its CPU (docs/runpath58.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_run_xargs import manifest, runtime_parent

_TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Split:
    """What one `kjobs run` cost, in seconds (CPU times as /proc last showed them)."""

    wall: float = 0.0
    on_cpu: float = 0.0
    waiting: float = 0.0
    voluntary: int = 0
    involuntary: int = 0
    process: float = 0.0
    shims: dict[int, tuple[float, float]] = field(default_factory=dict)
    """pid -> (its own CPU, its reaped children's: the pods')."""


def _stat_times(pid: int) -> tuple[int, float, float]:
    """(parent pid, own user + system CPU, reaped children's user + system CPU) of a process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / _TICK
    children = (int(fields[13]) + int(fields[14])) / _TICK
    return int(fields[1]), own, children


def _poll(pid: int, split: Split) -> None:
    """Read the process's main thread and its shims once (a process that is gone is skipped)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/schedstat") as f:
            on_cpu, waiting = (int(x) / 1e9 for x in f.read().split()[:2])
        with open(f"/proc/{pid}/task/{pid}/status") as f:
            switches = dict(line.split(":", 1) for line in f if "ctxt_switches" in line)
        split.on_cpu, split.waiting = on_cpu, waiting
        split.voluntary = int(switches["voluntary_ctxt_switches"])
        split.involuntary = int(switches["nonvoluntary_ctxt_switches"])
        split.process = _stat_times(pid)[1]
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            children = [int(c) for c in f.read().split()]
    except (OSError, ValueError, KeyError):
        return
    for child in children:
        try:
            with open(f"/proc/{child}/cmdline", "rb") as f:
                if b"shim.py" not in f.read():
                    continue
            parent, own, reaped = _stat_times(child)
        except (OSError, ValueError):
            continue
        if parent == pid:
            split.shims[child] = (own, reaped)


def run_split(kjobs: str, path: Path) -> Split:
    """`kjobs run PATH` in a fresh runtime directory, polled every 10 ms until it exits 0."""
    runtime = tempfile.mkdtemp(prefix="kjobs-bench-", dir=runtime_parent())
    env = {**os.environ, "XDG_RUNTIME_DIR": runtime}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    split = Split()
    try:
        start = time.perf_counter()
        proc = subprocess.Popen([kjobs, "run", str(path)], stdout=subprocess.DEVNULL, env=env)
        while proc.poll() is None:
            _poll(proc.pid, split)
            time.sleep(0.01)
        split.wall = time.perf_counter() - start
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
    if proc.returncode != 0:
        raise SystemExit(f"{kjobs} run exited {proc.returncode}")
    return split


def line(name: str, split: Split, pods: int) -> str:
    """One run's figures, with the per-pod CPU of each part in ms."""
    shims = sum(own for own, _ in split.shims.values())
    pods_cpu = sum(reaped for _, reaped in split.shims.values())
    per = 1e3 / pods
    return (
        f"{name}: wall {split.wall:.2f} s | kjobs run process {split.process:.2f} s ({split.process * per:.2f} ms/pod),"
        f" main thread on a CPU {split.on_cpu:.2f} s, waiting for one {split.waiting:.2f} s"
        f" ({split.waiting / split.wall:.0%} of the wall), switches {split.voluntary} voluntary /"
        f" {split.involuntary} involuntary | {len(split.shims)} shims {shims:.2f} s ({shims * per:.2f} ms/pod)"
        f" | pods {pods_cpu:.2f} s ({pods_cpu * per:.2f} ms/pod)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--parallelism", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("kjobs", nargs="+", help="kjobs executables, run in turn in every round")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kjobs-bench-job-") as tmp:
        path, warmup = Path(tmp) / "job.yaml", Path(tmp) / "warmup.yaml"
        path.write_text(manifest(args.pods, args.parallelism))
        warmup.write_text(manifest(1, 1))
        for executable in args.kjobs:
            run_split(executable, warmup)  # bytecode written, caches warm
        for r in range(args.rounds):
            for executable in args.kjobs:
                print(f"round {r + 1} " + line(executable, run_split(executable, path), args.pods), flush=True)


if __name__ == "__main__":
    main()
