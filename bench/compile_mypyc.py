"""Compile kjobs' hot modules with mypyc, in place, to measure what that gives issue #15 (docs/mypyc.md).

Run from anywhere: `python bench/compile_mypyc.py` builds the modules in `HOT` into C extensions beside their
sources in `src/kjobs` (plus one shared `*__mypyc*.so` in `src`; git ignores both), so any `python` that imports
kjobs from that tree runs them compiled. `--clean` removes what it built, giving back the pure-Python tree;
`--modules kjobs/store/base.py ...` compiles another set. It needs a C compiler and the Python headers, and mypyc
(the `mypy` package). Nothing here changes how kjobs is packaged or installed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

# The modules with the most self time in `bench/bench_simulate.py --pods 10000 --parallelism 500` under cProfile
# (docs/mypyc.md). A compiled class cannot be subclassed by an interpreted one, so the store's base goes with both
# backends. Left out: mypyc 2.4 cannot compile an async generator (`LocalClient.watch`, the simulated runtime's
# log stream), so client/local.py and node/sim_runtime.py stay interpreted, and with the latter its base class
# node/supervisor.py and the process runtime.
HOT = [
    "kjobs/api/defaults.py",
    "kjobs/api/selectors.py",
    "kjobs/api/validation.py",
    "kjobs/api/validation_access.py",
    "kjobs/api/validation_cronjob.py",
    "kjobs/api/validation_formats.py",
    "kjobs/api/validation_gated.py",
    "kjobs/api/validation_meta.py",
    "kjobs/api/validation_pod.py",
    "kjobs/api/validation_pod_update.py",
    "kjobs/api/validation_warnings.py",
    "kjobs/client/informer.py",
    "kjobs/client/workqueue.py",
    "kjobs/controllers/disruption.py",
    "kjobs/controllers/garbagecollector.py",
    "kjobs/controllers/job.py",
    "kjobs/controllers/nodelifecycle.py",
    "kjobs/controllers/podgc.py",
    "kjobs/controllers/scheduler.py",
    "kjobs/controllers/scheduling.py",
    "kjobs/controllers/tainteviction.py",
    "kjobs/job/backoff.py",
    "kjobs/job/bookkeeping.py",
    "kjobs/job/conditions.py",
    "kjobs/job/config.py",
    "kjobs/job/context.py",
    "kjobs/job/decisions.py",
    "kjobs/job/execute.py",
    "kjobs/job/intervals.py",
    "kjobs/job/metrics.py",
    "kjobs/job/pods.py",
    "kjobs/job/status.py",
    "kjobs/job/success_policy.py",
    "kjobs/job/sync.py",
    "kjobs/job/tracking.py",
    "kjobs/node/admission.py",
    "kjobs/node/agent.py",
    "kjobs/node/envvars.py",
    "kjobs/node/podstatus.py",
    "kjobs/node/restart.py",
    "kjobs/server/admission.py",
    "kjobs/server/patch.py",
    "kjobs/server/registry.py",
    "kjobs/server/service.py",
    "kjobs/server/storage.py",
    "kjobs/store/base.py",
    "kjobs/store/events.py",
    "kjobs/store/memory.py",
    "kjobs/store/sqlite.py",
    "kjobs/store/triggers.py",
    "kjobs/store/watch.py",
]


def built_files() -> list[Path]:
    """The extension modules a build left in the source tree."""
    return sorted(p for p in SRC.rglob("*.so") if "build" not in p.relative_to(SRC).parts)


def clean() -> None:
    for path in built_files():
        path.unlink()
    shutil.rmtree(SRC / "build", ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clean", action="store_true", help="remove the compiled modules and stop")
    parser.add_argument("--modules", nargs="+", default=HOT, help="paths under src/ (default: the hot set)")
    args = parser.parse_args()
    clean()
    if args.clean:
        return
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "mypyc", *args.modules], cwd=SRC, capture_output=True, text=True)
    took = time.monotonic() - started
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-20000:] + done.stderr[-20000:])
        clean()
        sys.exit(f"mypyc failed after {took:.0f} s; the tree is pure Python again")
    shutil.rmtree(SRC / "build", ignore_errors=True)  # the generated C and objects (about 100 MB)
    files = built_files()
    size = sum(p.stat().st_size for p in files)
    for path in files:
        print(f"{path.stat().st_size / 1024:8.0f} KB  {path.relative_to(SRC)}")
    print(f"{len(args.modules)} modules compiled in {took:.0f} s; {len(files)} files, {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
