"""Flags whose negative values mean nothing are refused as click refuses any value out of range, before anything
starts (a negative back-off or timeout used to be taken as it came)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kjobs.cli import main

JOB = str(Path(__file__).resolve().parents[2] / "examples" / "failjob-exit-42.yaml")


@pytest.mark.parametrize(
    "args",
    [
        ["run", JOB, "--backoff", "-1"],
        ["simulate", JOB, "--backoff", "-1"],
        ["up", "--backoff", "-1"],
        ["controller", "--kubeconfig", JOB, "--backoff", "-1"],
        ["run", JOB, "--timeout", "-5"],
    ],
    ids=["run", "simulate", "up", "controller", "run-timeout"],
)
def test_a_negative_duration_is_a_usage_error(args: list[str]) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "is not in the range x>=0" in result.output
    assert "Traceback" not in result.output
