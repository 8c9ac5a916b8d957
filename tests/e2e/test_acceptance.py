"""The kubectl acceptance script against `kjobs up`, with the real kubectl, optional checks required.

The script runs exactly as shipped: the copy in `tests/e2e/kubectl/acceptance.sh`, kept identical to
`../shared/kubectl/acceptance.sh` (see `tests/conformance/test_shared_copies.py`), so a fresh clone runs it too.

One failure is the script's own, not the server's: its `has` check is `printf '%s\\n' "$OUT" | grep -Eq` under
`set -o pipefail`. bash's `printf` writes line by line, so when `grep -q` finds its line and exits before the
lines after it are written, `printf` dies of SIGPIPE and the pipeline fails although the output matched — on a
loaded machine, now and then. Such a failure shows the output it printed, and that output matches the check's
pattern (`grep -E`, as the script's); only then is the script run once more, on a new server. The script shows
only the first 60 lines of that output: when the line it looked for lies further down (`status.succeeded` of a
`get -o yaml`), the failed command, if it is a read-only `kubectl get`, is run again on the same server and its
whole output is matched instead.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SCRIPT = Path(__file__).resolve().parent / "kubectl" / "acceptance.sh"


SHOWN_LINES = 60  # the script's `fail` shows `head -60` of the failed command's output


def _run_script(tmp_path: Path) -> tuple[str, str, bool]:
    """Start `kjobs up` in `tmp_path`, run the script against it; its exit status, its output, and whether a
    failure was the pipe race (judged while the server still runs)."""
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
        output = result.stdout + result.stderr
        status = str(result.returncode)
        return status, output, status != "0" and matched_before_the_pipe_broke(output, env)
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()


def _matches(pattern: str, text: str) -> bool:
    """`grep -Eq`, as the script's `has` matches."""
    return subprocess.run(["grep", "-Eq", "--", pattern], input=text, text=True, check=False).returncode == 0


def matched_before_the_pipe_broke(output: str, env: dict[str, str] | None = None) -> bool:
    """Whether the script failed a `has` check whose output matches its pattern: the pipe race above. With `env`
    (the server still up), a read-only `kubectl get` whose shown output was cut at 60 lines is run again."""
    failed = re.search(r"^FAIL: expected output to match /(.*)/(?: \(.*\))?$", output, re.MULTILINE)
    shown = re.search(r"^---- its output:\n(.*?)(?:^---- context|\Z)", output, re.MULTILINE | re.DOTALL)
    if failed is None or shown is None:
        return False
    if _matches(failed.group(1), shown.group(1)):
        return True
    command = re.search(r"^---- last command \(exit 0\): (\S+) (.*)$", output, re.MULTILINE)
    if env is None or command is None or len(shown.group(1).splitlines()) < SHOWN_LINES:
        return False
    args = shlex.split(command.group(2))
    if "get" not in args or any(a in ("-w", "--watch", "--watch-only") for a in args):
        return False
    again = subprocess.run([command.group(1), *args], capture_output=True, text=True, env=env, timeout=30, check=False)
    return again.returncode == 0 and _matches(failed.group(1), again.stdout + again.stderr)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed on this machine")
def test_kubectl_acceptance_script_passes(tmp_path: Path) -> None:
    first = tmp_path / "first"
    first.mkdir()
    status, output, raced = _run_script(first)
    if raced:
        again = tmp_path / "again"
        again.mkdir()
        status, output, _ = _run_script(again)
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


def test_a_check_cut_from_the_shown_output_is_judged_by_running_the_get_again(tmp_path: Path) -> None:
    yaml = "".join(f"  field{i}: {i}\n" for i in range(70)) + "  succeeded: 1\n"
    kubectl = tmp_path / "kubectl"
    kubectl.write_text(f"#!/bin/sh\ncat <<'END'\n{yaml}END\n")
    kubectl.chmod(0o755)
    shown = "".join(yaml.splitlines(keepends=True)[:SHOWN_LINES])
    output = (
        "FAIL: expected output to match /^  succeeded: 1$/ (status.succeeded)\n"
        f"---- last command (exit 0): {kubectl} -n default get job x -o yaml\n---- its output:\n{shown}"
        "---- context (kubectl get jobs,pods -o wide in default) ----\n"
    )
    assert matched_before_the_pipe_broke(output, dict(os.environ))
    assert not matched_before_the_pipe_broke(output)  # without a server to ask, a cut output is no evidence
    missing = output.replace("succeeded: 1", "succeeded: 2", 1)
    assert not matched_before_the_pipe_broke(missing, dict(os.environ))
    mutating = output.replace(" get job x", " delete job x")
    assert not matched_before_the_pipe_broke(mutating, dict(os.environ))
    short = output.replace(shown, "".join(yaml.splitlines(keepends=True)[:10]))
    assert not matched_before_the_pipe_broke(short, dict(os.environ))
