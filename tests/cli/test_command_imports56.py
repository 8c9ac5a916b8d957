"""`kjobs validate` and `kjobs explain --job --pod` start without the event loop, the store or a cluster.

Neither runs a loop: they read manifests and answer from the API's validation and the failure policy. Importing
asyncio (with ssl, socket, subprocess, logging and concurrent.futures) cost `kjobs validate` about 115 M of its
541 M instructions (docs/startup56.md); it came in through the served views' table, which imported the store
for a watch event's class, and through `kjobs explain`'s module, for its `job` subcommand's loop.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

NOT_NEEDED = (
    "asyncio",
    "ssl",
    "uvloop",
    "kjobs.store",
    "kjobs.cluster",
    "kjobs.client.local",
    "kjobs.server.service",
    "kjobs.server.app",
    "kjobs.node.agent",
    "kjobs.node.process_runtime",
    "kjobs.controllers",
)


def _imported(*args: str) -> tuple[str, set[str]]:
    """Run the console script's `kjobs ARGS` in a fresh interpreter: its output and which of `NOT_NEEDED` it
    imported (printed at its exit)."""
    code = (
        "import atexit, runpy, sys\n"
        f"atexit.register(lambda: print('LOADED', *sorted(set(sys.modules).intersection({NOT_NEEDED!r}))))\n"
        "sys.argv = ['kjobs', *sys.argv[1:]]\n"
        "runpy.run_module('kjobs', run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, env=os.environ
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("LOADED")]
    assert done.returncode == 0 and lines, (done.returncode, done.stdout, done.stderr)
    return done.stdout, set(lines[-1].split()[1:])


def test_validate_imports_no_loop_store_or_cluster() -> None:
    out, loaded = _imported("validate", str(EXAMPLES / "failjob-exit-42.yaml"))
    assert 'Job "job-pod-failure-policy-failjob" is valid' in out
    assert loaded == set()


def test_explain_of_manifests_imports_no_loop_store_or_cluster() -> None:
    out, loaded = _imported(
        "explain",
        "--job",
        str(EXAMPLES / "failjob-exit-42.yaml"),
        "--pod",
        str(EXAMPLES / "pods" / "failed-exit-42.yaml"),
    )
    assert "FailJob" in out
    assert loaded == set()
