"""Cost of the pytest plugin: a function-scoped `kjobs_cluster` beside a bare test, in one pytest run.

    python bench/bench_pytest_plugin.py [--tests 100]

Writes a test file of `--tests` bare tests, `--tests` tests taking `kjobs_cluster` on the process runtime and
`--tests` on the simulated runtime (each reads its Node through the cluster, so it has really started), runs
it in one `pytest` process, and prints per kind: the first test's setup + teardown (it pays the session's PKI
and the imports), then the median, p95 and max of the others, and the sum over all of them. The issue's bar:
a cluster starts and stops in ≤ 0.2 s; 100 such tests run in under 30 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = """
import pytest

N = {n}


@pytest.mark.parametrize("i", range(N))
def test_bare(i):
    assert i >= 0


@pytest.mark.parametrize("i", range(N))
def test_process(kjobs_cluster, i):
    assert kjobs_cluster.get("node", "kjobs-node")["metadata"]["name"] == "kjobs-node"


@pytest.mark.kjobs(runtime="simulated")
@pytest.mark.parametrize("i", range(N))
def test_simulated(kjobs_cluster, i):
    assert kjobs_cluster.get("node", "kjobs-node")["metadata"]["name"] == "kjobs-node"
"""

RECORDER = """
import json, os


def pytest_runtest_logreport(report):
    with open(os.environ["BENCH_OUT"], "a") as out:
        out.write(json.dumps([report.nodeid, report.when, report.duration, report.outcome]) + "\\n")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "test_bench.py").write_text(TESTS.format(n=args.tests))
        (root / "conftest.py").write_text(RECORDER)
        out = root / "reports.jsonl"
        began = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", tmp, "test_bench.py"],
            cwd=tmp,
            capture_output=True,
            text=True,
            env={**os.environ, "BENCH_OUT": str(out)},
        )
        wall = time.perf_counter() - began
        if result.returncode != 0:
            sys.exit(result.stdout + result.stderr)
        per_test: dict[str, dict[str, float]] = {}
        for line in out.read_text().splitlines():
            nodeid, when, duration, _ = json.loads(line)
            per_test.setdefault(nodeid, {})[when] = duration
    print(f"{3 * args.tests} tests in one pytest run: {wall:.2f} s wall (interpreter start and collection included)")
    for kind in ("bare", "process", "simulated"):
        tests = [t for nodeid, t in per_test.items() if f"test_{kind}[" in nodeid]
        lifecycle = [t["setup"] + t["teardown"] for t in tests]
        total = sum(t["setup"] + t["call"] + t["teardown"] for t in tests)
        rest = sorted(lifecycle[1:])
        p95 = rest[int(0.95 * (len(rest) - 1))]
        print(
            f"  {kind:9s} setup+teardown: first {lifecycle[0] * 1000:6.1f} ms, then median "
            f"{statistics.median(rest) * 1000:6.1f} ms, p95 {p95 * 1000:6.1f} ms, max {rest[-1] * 1000:6.1f} ms; "
            f"{len(tests)} tests take {total:.2f} s"
        )


if __name__ == "__main__":
    main()
