"""`kjobs run --disrupt KIND@TIME`: what it accepts, and what it refuses before any cluster starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kjobs.cli import main
from kjobs.disrupt import Disruption, parse, parse_duration

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "ignore-disruptions.yaml")
NO_REQUESTS = str(Path(__file__).resolve().parents[2] / "examples" / "failjob-exit-42.yaml")


@pytest.mark.parametrize(
    ("text", "seconds"), [("1s", 1.0), ("500ms", 0.5), ("1m30s", 90.0), ("2", 2.0), ("0.25", 0.25), ("1.5s", 1.5)]
)
def test_times_are_go_durations_or_seconds(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_a_disruption_is_kind_at_time() -> None:
    assert parse("drain@1s") == Disruption("drain", 1.0, "drain@1s")
    assert parse("node-shutdown") == Disruption("node-shutdown", 0.0, "node-shutdown")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--disrupt", "reboot@1s"),
            "unknown disruption 'reboot': choose from drain, evict, taint, preempt, node-shutdown",
        ),
        (("--disrupt", "drain@soon"), "invalid time 'soon': use a duration such as 1s, 500ms or 1m30s"),
        (("--disrupt", "drain@-1"), "invalid time '-1': must not be negative"),
        (("--disrupt", "node-shutdown@1s"), "node-shutdown needs --nodes 2 or more"),
        (("--keep-serving",), "--keep-serving needs --serve PORT"),
    ],
    ids=["kind", "time", "negative", "one-node", "keep-serving"],
)
def test_bad_disruptions_are_usage_errors(args: tuple[str, ...], message: str) -> None:
    result = CliRunner().invoke(main, ["run", EXAMPLE, *args])
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_preempt_needs_pods_that_request_cpu() -> None:
    result = CliRunner().invoke(main, ["run", NO_REQUESTS, "--disrupt", "preempt@1s"])
    assert result.exit_code == 2
    assert "preempt needs the Job's containers to request cpu (resources.requests.cpu)" in result.stderr
