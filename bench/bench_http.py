"""Benchmark of kjobs over HTTP, in two processes, as issue #15 asks: `kjobs up --nodes 0` (API server over HTTPS
with client certificates, SQLite store, every controller) and one simulated node agent, `kjobs node join --runtime
sim --max-pods P --model M` (5 % of containers exit 1, the rest 0, all at once), run an Indexed Job of --pods
completions, --parallelism, `backoffLimitPerIndex: 3` (and `maxFailedIndexes: 10000` above 100,000 completions,
as Kubernetes requires), created and watched through the official `kubernetes` Python client as a user would.
Prints pods/s of wall time from the Job's creation to its terminal condition, the CPU of each process over that
span (and of this process, the client), and each process's peak RSS.

Beside it, in the same run (`--compare`): `kjobs simulate` of the same Job under the same model, one process in
*virtual* time (its pods/s is pods over its wall time, end to end including its start), for scale.

Run: python bench/bench_http.py [--pods 100000] [--parallelism 5000] [--rounds 1] [--backoff 0.1]
                                [--job-batch-period S] [--compare/--no-compare] [--profile DIR]
A quick run: python bench/bench_http.py --pods 10000 --parallelism 500
`--profile DIR` runs both processes under cProfile (`DIR/up.prof`, `DIR/node.prof`; read with pstats); `--keep DIR`
keeps each round's data directory, kubeconfig and the processes' logs there (`py-spy record -p PID` attaches to them).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_jobs import indexed_job

MODEL = {"containers": {"exitCodes": [{"code": 0, "weight": 0.95}, {"code": 1, "weight": 0.05}]}}
NODE = "sim-node"
_TICKS = os.sysconf("SC_CLK_TCK")


HIGH_COMPLETIONS = 100_000
"""Above this many completions Kubernetes requires `maxFailedIndexes` beside `backoffLimitPerIndex`, at most
10,000 (`MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS`, kjobs.api.validation): a longer round sets 10,000, which
its 5 % of failures (an index fails after four in a row) does not approach."""


def _job(pods: int, parallelism: int) -> dict[str, Any]:
    """The benchmark's Job: Indexed, `backoffLimitPerIndex: 3` (and `maxFailedIndexes` above 100,000 completions)."""
    limit = 10_000 if pods > HIGH_COMPLETIONS else None
    return indexed_job(pods, parallelism, backoff_limit_per_index=3, max_failed_indexes=limit)


def _kjobs(*args: str, profile: Path | None = None) -> list[str]:
    """The command line of `kjobs ARGS` (this interpreter's), under cProfile when `profile` is given."""
    if profile is not None:
        return [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "kjobs", *args]
    return [sys.executable, "-m", "kjobs", *args]


def _cpu(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def _process(argv: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Run `argv` with stdout/stderr to `log`; SIGTERM at the end (both commands stop gracefully on it)."""
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_for(text: str, log: Path, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited {proc.returncode}:\n{log.read_text(errors='replace')}")
        time.sleep(0.05)
    raise RuntimeError(f"{text!r} not seen within {timeout} s:\n{log.read_text(errors='replace')}")


def _terminal(job_obj: Any) -> str | None:
    for condition in (job_obj.status and job_obj.status.conditions) or []:
        if condition.type in ("Complete", "Failed") and condition.status == "True":
            return str(condition.type)
    return None


def http_round(
    pods: int,
    parallelism: int,
    backoff: float,
    work: Path,
    profile: Path | None,
    timeout: float,
    job_batch_period: float | None = None,
) -> dict[str, Any]:
    """One run on fresh processes and a fresh data directory; the figures of the Job's span."""
    from kubernetes import client, config, watch

    work.mkdir(parents=True, exist_ok=True)
    kubeconfig, model = work / "kubeconfig", work / "model.yaml"
    model.write_text(yaml.safe_dump(MODEL))
    up_argv = _kjobs(
        "up", "--nodes", "0", "--port", "0", "--data-dir", str(work / "data"), "--kubeconfig", str(kubeconfig),
        "--backoff", str(backoff),
        *(["--job-batch-period", str(job_batch_period)] if job_batch_period is not None else []),
        profile=profile / "up.prof" if profile else None,
    )  # fmt: skip
    node_argv = _kjobs(
        "node", "join", "--kubeconfig", str(kubeconfig), "--name", NODE, "--runtime", "sim",
        "--max-pods", str(parallelism), "--model", str(model),
        profile=profile / "node.prof" if profile else None,
    )  # fmt: skip
    with _process(up_argv, work / "up.log") as up:
        _wait_for("export KUBECONFIG=", work / "up.log", up)
        with _process(node_argv, work / "node.log") as node:
            _wait_for(f"node {NODE} joined", work / "node.log", node)
            api = client.ApiClient(config.new_client_from_config(str(kubeconfig)).configuration)
            batch = client.BatchV1Api(api)
            _wait_ready(client.CoreV1Api(api))
            cpu = {"up": _cpu(up.pid), "node": _cpu(node.pid), "client": _self_cpu()}
            start = time.perf_counter()
            created = batch.create_namespaced_job("default", _job(pods, parallelism))
            outcome = _terminal(created)
            stream = watch.Watch()
            for event in stream.stream(
                batch.list_namespaced_job,
                "default",
                field_selector="metadata.name=bench",
                resource_version=created.metadata.resource_version,
                timeout_seconds=int(timeout),
            ):
                outcome = _terminal(event["object"])
                if outcome:
                    stream.stop()
            elapsed = time.perf_counter() - start
            final = batch.read_namespaced_job("bench", "default")
            figures = {
                "outcome": outcome or "timeout",
                "seconds": elapsed,
                "pods_per_s": pods / elapsed,
                "succeeded": final.status.succeeded,
                "failed": final.status.failed,
                "cpu_up": _cpu(up.pid) - cpu["up"],
                "cpu_node": _cpu(node.pid) - cpu["node"],
                "cpu_client": _self_cpu() - cpu["client"],
                "rss_up_mb": _peak_rss_mb(up.pid),
                "rss_node_mb": _peak_rss_mb(node.pid),
            }
            api.close()
    return figures


def _wait_ready(core: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            node = core.read_node(NODE)
            ready = [c for c in node.status.conditions or [] if c.type == "Ready"]
            if ready and ready[0].status == "True":
                return
        time.sleep(0.1)
    raise RuntimeError(f"node {NODE} not Ready within {timeout} s")


def simulate_round(pods: int, parallelism: int, work: Path) -> dict[str, Any]:
    """`kjobs simulate` of the same Job and model, as a user runs it (one process, virtual time)."""
    work.mkdir(parents=True, exist_ok=True)
    manifest, model = work / "job.yaml", work / "model.yaml"
    manifest.write_text(yaml.safe_dump(_job(pods, parallelism)))
    model.write_text(yaml.safe_dump(MODEL))
    start = time.perf_counter()
    proc = subprocess.Popen(
        _kjobs("simulate", str(manifest), "--model", str(model), "-o", "json"), stdout=subprocess.PIPE
    )
    stdout = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own CPU and peak RSS
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
    result = json.loads(stdout)
    return {
        "outcome": result.get("outcome"),
        "seconds": elapsed,
        "pods_per_s": pods / elapsed,
        "virtual_seconds": result.get("virtualSeconds", result.get("virtual_seconds")),
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=100_000)
    parser.add_argument("--parallelism", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--backoff", type=float, default=0.1, help="kjobs up --backoff (pod-failure back-off base)")
    parser.add_argument("--compare", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--profile", type=Path, default=None, help="cProfile both processes into this directory")
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument(
        "--job-batch-period",
        type=float,
        default=None,
        help="kjobs up --job-batch-period (default: kjobs up's, Kubernetes' 1 s)",
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep the data and the processes' logs here")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped bench still stops its two processes
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    for number in range(1, args.rounds + 1):
        with tempfile.TemporaryDirectory(prefix="kjobs-bench-http-") as scratch:
            tmp = str(args.keep / f"round{number}") if args.keep else scratch
            r = http_round(
                args.pods,
                args.parallelism,
                args.backoff,
                Path(tmp) / "http",
                args.profile,
                args.timeout,
                args.job_batch_period,
            )
            print(
                f"round {number}: HTTP, 2 processes: {args.pods} pods, parallelism {args.parallelism}: "
                f"{r['outcome']} (succeeded {r['succeeded']}, failed {r['failed']}) in {r['seconds']:.1f} s = "
                f"{r['pods_per_s']:.0f} pods/s; CPU up {r['cpu_up']:.1f} s ({1000 * r['cpu_up'] / args.pods:.2f} "
                f"ms/pod), node {r['cpu_node']:.1f} s ({1000 * r['cpu_node'] / args.pods:.2f} ms/pod), client "
                f"{r['cpu_client']:.1f} s; peak RSS up {r['rss_up_mb']:.0f} MB, node {r['rss_node_mb']:.0f} MB",
                flush=True,
            )
            if args.compare:
                s = simulate_round(args.pods, args.parallelism, Path(tmp) / "simulate")
                print(
                    f"round {number}: kjobs simulate (1 process, virtual time {s['virtual_seconds']} s): "
                    f"{s['outcome']} in {s['seconds']:.1f} s wall = {s['pods_per_s']:.0f} pods/s; CPU "
                    f"{s['cpu']:.1f} s ({1000 * s['cpu'] / args.pods:.2f} ms/pod); peak RSS {s['rss_mb']:.0f} MB",
                    flush=True,
                )


if __name__ == "__main__":
    main()
