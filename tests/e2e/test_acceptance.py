"""The kubectl acceptance script against `kjobs up`, with the real kubectl, optional checks required.

The script runs exactly as shipped: the copy in `tests/e2e/kubectl/acceptance.sh`, kept identical to
`../shared/kubectl/acceptance.sh` (see `tests/conformance/test_shared_copies.py`), so a fresh clone runs it too.
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


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed on this machine")
def test_kubectl_acceptance_script_passes(tmp_path: Path) -> None:
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
        assert result.returncode == 0, output[-6000:]
        summary = re.search(r"PASS: (\d+) checks passed, (\d+) warnings", output)
        assert summary is not None, output[-3000:]
        assert int(summary.group(2)) == 0, output[-3000:]
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
