"""Benchmark of `kjobs run` as a user runs it, beside `xargs -P`: an Indexed Job of 5,000 pods running
`sh -c true`, parallelism 50, started as the `kjobs` console script (process start, imports, the embedded
cluster, live progress and shutdown included), against `seq 5000 | xargs -P 50 -I{} sh -c true` — the same 5,000
process starts, 50 at a time, with no control plane — in alternating rounds of the same run (issue #15).

Run: python bench/bench_run_xargs.py [--pods 5000] [--parallelism 50] [--rounds 3] [--kjobs PATH] [--compare PATH]

`--compare PATH` also times another `kjobs` executable (e.g. a checkout of the previous release) in every round,
so a before/after is measured in the same run. Each round also prints the CPU time (user + system) of the whole
process tree of each command: `kjobs run` with its process shim and pods, `xargs` with its `sh`s.

Each `kjobs run` writes its manifest's pods' scratch dirs and logs under its node's root; the benchmark gives
every run a fresh `XDG_RUNTIME_DIR` (on /dev/shm when there is one, as a user's runtime dir is a tmpfs) so no
run sees another's files. `kjobs run`'s progress goes to a pipe (plain lines, as when a user pipes it); the
benchmark reads it all, checks the exit status is 0 and the summary says Complete with every pod succeeded.
A user's kjobs has its modules' bytecode cached (pip compiles it at install; a source checkout writes it at the
first run), so `PYTHONDONTWRITEBYTECODE` is dropped from its environment and one untimed 1-pod run comes first.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_jobs import indexed_job


def manifest(pods: int, parallelism: int) -> str:
    """The Job as YAML (JSON is YAML): Indexed, `pods` completions, restartPolicy Never, `sh -c true`."""
    import json

    job = indexed_job(pods, parallelism, name="bench-xargs", command=["sh", "-c", "true"])
    return json.dumps(job, indent=2) + "\n"


def kjobs_executable(explicit: str | None) -> str:
    """The console script a user runs: `--kjobs`, else the one beside this Python (the venv's), else PATH's."""
    if explicit:
        return explicit
    beside = Path(sys.executable).with_name("kjobs")
    if beside.exists():
        return str(beside)
    found = shutil.which("kjobs")
    if found is None:
        raise SystemExit("no `kjobs` console script found: install kjobs or pass --kjobs PATH")
    return found


def runtime_parent() -> str | None:
    """Where the fresh runtime dirs go: /dev/shm if writable (a tmpfs, like /run/user/UID), else the temp dir."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _children_cpu() -> float:
    """CPU seconds of every waited-for descendant so far (a child's own children included once it reaped them)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_kjobs(kjobs: str, path: Path, pods: int) -> tuple[float, float, int]:
    """Seconds for `kjobs run PATH` from exec to exit, the CPU seconds of its process tree, and the bytes of
    output it wrote; fails unless it exited 0 with the Job Complete and every pod succeeded."""
    runtime = tempfile.mkdtemp(prefix="kjobs-bench-", dir=runtime_parent())
    env = {**os.environ, "XDG_RUNTIME_DIR": runtime}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        cpu, start = _children_cpu(), time.perf_counter()
        proc = subprocess.run([kjobs, "run", str(path)], capture_output=True, env=env)
        elapsed, cpu = time.perf_counter() - start, _children_cpu() - cpu
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0 or "Job default/bench-xargs: Complete" not in out or f"succeeded: {pods} " not in out:
        tail = "\n".join(out.splitlines()[-8:])
        raise SystemExit(f"kjobs run failed (exit {proc.returncode}):\n{tail}\n{proc.stderr.decode()[-2000:]}")
    return elapsed, cpu, len(proc.stdout)


def time_xargs(pods: int, parallelism: int) -> tuple[float, float]:
    """Seconds for `seq N | xargs -P P -I{} sh -c true`, run through `sh -c` as a user's shell runs it, and the
    CPU seconds of its process tree."""
    command = f"seq {pods} | xargs -P {parallelism} -I{{}} sh -c true"
    cpu, start = _children_cpu(), time.perf_counter()
    subprocess.run(["sh", "-c", command], check=True)
    return time.perf_counter() - start, _children_cpu() - cpu


def spread(values: list[float]) -> str:
    """min / median / max."""
    return f"min {min(values):.0f}  median {statistics.median(values):.0f}  max {max(values):.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--parallelism", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kjobs", default=None, help="the kjobs executable [default: the venv's console script]")
    parser.add_argument("--compare", default=None, help="another kjobs executable, timed in the same rounds")
    args = parser.parse_args()
    kjobs = {"kjobs run": kjobs_executable(args.kjobs)}
    if args.compare:
        kjobs["compared"] = args.compare
    print(
        f"{args.pods} pods running `sh -c true`, {args.parallelism} at a time; "
        + "; ".join(f"{name}: {path}" for name, path in kjobs.items())
    )
    rates: dict[str, list[float]] = {"xargs": []}
    ratios: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="kjobs-bench-job-") as tmp:
        path, warmup = Path(tmp) / "job.yaml", Path(tmp) / "warmup.yaml"
        path.write_text(manifest(args.pods, args.parallelism))
        warmup.write_text(manifest(1, 1))
        for executable in kjobs.values():
            time_kjobs(executable, warmup, 1)
        for r in range(args.rounds):
            seconds, cpu = time_xargs(args.pods, args.parallelism)
            xargs = args.pods / seconds
            rates["xargs"].append(xargs)
            parts = [f"xargs -P {args.parallelism} {xargs:5.0f}/s ({cpu / args.pods * 1e3:.2f} ms CPU/pod)"]
            for name, executable in kjobs.items():
                seconds, cpu, output = time_kjobs(executable, path, args.pods)
                rate = args.pods / seconds
                rates.setdefault(name, []).append(rate)
                ratios.setdefault(name, []).append(rate / xargs)
                parts.append(
                    f"{name} {rate:5.0f} pods/s ({seconds:.2f} s, {cpu / args.pods * 1e3:.2f} ms CPU/pod, "
                    f"{output / 1024:.0f} KiB out) ratio {rate / xargs:.2f}"
                )
            if "compared" in rates:
                parts.append(f"kjobs run / compared {rates['kjobs run'][-1] / rates['compared'][-1]:.2f}")
            print(f"round {r + 1}: " + " | ".join(parts), flush=True)
    for name, values in rates.items():
        print(f"{name + ':':11} {spread(values)} {'processes' if name == 'xargs' else 'pods'}/s")
    if "compared" in rates:
        ratios["kjobs run / compared"] = [a / b for a, b in zip(rates["kjobs run"], rates["compared"], strict=True)]
    for name, values in ratios.items():
        label = name if "/" in name else f"{name} / xargs"
        print(f"{label}: min {min(values):.2f}  median {statistics.median(values):.2f}  max {max(values):.2f}")


if __name__ == "__main__":
    main()
