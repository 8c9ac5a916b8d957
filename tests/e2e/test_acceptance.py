"""The kubectl acceptance script against `kjobs up`, with the real kubectl, optional checks required.

The script runs exactly as shipped: the copy in `tests/e2e/kubectl/acceptance.sh`, kept identical to
`../shared/kubectl/acceptance.sh` (see `tests/conformance/test_shared_copies.py`), so a fresh clone runs it too.

One failure is the script's own, not the server's: its `has` check is `printf '%s\\n' "$OUT" | grep -Eq` under
`set -o pipefail`. bash's `printf` writes line by line, so when `grep -q` finds its line and exits before the
lines after it are written, `printf` dies of SIGPIPE and the pipeline fails although the output matched — on a
loaded machine, now and then. Such a failure shows the output it printed, and that output matches the check's
pattern (`grep -E`, as the script's); only then is the script run once more, on a new server.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SCRIPT = Path(__file__).resolve().parent / "kubectl" / "acceptance.sh"


def _run_script(tmp_path: Path) -> str:
    """Start `kjobs up` in `tmp_path`, run the script against it; its exit status and output, as one string
    starting with the status."""
    kubeconfig = tmp_path / "kubeconfig"
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(kubeconfig), "ACCEPT_OPTIONAL": "require"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kjobs",
            "up",
            "--port",
            str(free_port()),
            "--data-dir",
            str(tmp_path / "data"),
            "--kubeconfig",
            str(kubeconfig),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        assert server.stdout is not None
        for line in server.stdout:
            if line.startswith("export KUBECONFIG="):
                break
        else:
            pytest.fail("kjobs up exited before it was ready")
        wait_ready = subprocess.run(
            ["kubectl", "wait", "--for=condition=Ready", "node", "--all", "--timeout=30s"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert wait_ready.returncode == 0, wait_ready.stdout + wait_ready.stderr
        result = subprocess.run(
            ["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=600, check=False, cwd=tmp_path
        )
        return f"{result.returncode}\n{result.stdout}{result.stderr}"
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()


def matched_before_the_pipe_broke(output: str) -> bool:
    """Whether the script failed a `has` check whose shown output matches its pattern: the pipe race above."""
    failed = re.search(r"^FAIL: expected output to match /(.*)/(?: \(.*\))?$", output, re.MULTILINE)
    shown = re.search(r"^---- its output:\n(.*?)(?:^---- context|\Z)", output, re.MULTILINE | re.DOTALL)
    if failed is None or shown is None:
        return False
    grep = subprocess.run(["grep", "-Eq", "--", failed.group(1)], input=shown.group(1), text=True, check=False)
    return grep.returncode == 0


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed on this machine")
def test_kubectl_acceptance_script_passes(tmp_path: Path) -> None:
    first = tmp_path / "first"
    first.mkdir()
    status, _, output = _run_script(first).partition("\n")
    if status != "0" and matched_before_the_pipe_broke(output):
        again = tmp_path / "again"
        again.mkdir()
        status, _, output = _run_script(again).partition("\n")
    assert status == "0", output[-6000:]
    summary = re.search(r"PASS: (\d+) checks passed, (\d+) warnings", output)
    assert summary is not None, output[-3000:]
    assert int(summary.group(2)) == 0, output[-3000:]


def test_a_failed_check_whose_output_matched_is_the_pipe_race() -> None:
    race = (
        'FAIL: expected output to match /^  completionTime: "/ (status.completionTime)\n'
        "---- last command (exit 0): kubectl get job x -o yaml\n---- its output:\nstatus:\n"
        '  completionTime: "2026-12-03T10:43:21Z"\n---- context (kubectl get jobs,pods -o wide in default) ----\n'
    )
    assert matched_before_the_pipe_broke(race)
    real = race.replace('  completionTime: "2026', '  startTime: "2026')
    assert not matched_before_the_pipe_broke(real)
    posix = "FAIL: expected output to match /^a[[:space:]]+b$/\n---- its output:\na  b\n"
    assert matched_before_the_pipe_broke(posix)
