"""The conformance suite with every kjobs gate on (`KJOBS_FEATURE_GATES=AllAlpha=true`): the corpus holds no
gated field, so turning the extensions on must change nothing a Kubernetes manifest sees.

Runs the suite's other modules in a child pytest, since the gate set is read once per process
(`tests/conformance/gates.py`); the e2e integration scenarios over real servers are left to an explicit
`KJOBS_FEATURE_GATES=AllAlpha=true python -m pytest tests/conformance -m e2e`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kjobs.api.features import ENV_VAR

HERE = Path(__file__).resolve().parent
MODULES = ["test_validation.py", "test_policy.py", "test_scenarios.py", "test_integration.py"]


@pytest.mark.e2e
def test_conformance_with_every_kjobs_gate_on() -> None:
    env = {**os.environ, ENV_VAR: "AllAlpha=true"}
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not over_http"]
    result = subprocess.run(
        [*args, *(str(HERE / m) for m in MODULES)],
        cwd=HERE.parents[1],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout
