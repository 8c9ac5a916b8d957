"""`kjobs up --job-batch-period`: how long the Job controller gathers pod events before a sync (timing only)."""

from __future__ import annotations

from pathlib import Path

import prometheus_client
import pytest
from click.testing import CliRunner

from kjobs.cli.up import _assemble, up
from kjobs.store import MemoryStore
from tests.cli.up_support import assembled_with


def test_job_batch_period_reaches_the_job_controller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prometheus_client, "REGISTRY", prometheus_client.CollectorRegistry())  # metrics: once each
    cluster, _ = _assemble(MemoryStore(), authenticator=None, nodes=0, data=Path("unused"), job_batch_period=0.05)
    assert cluster.job_controller is not None
    assert cluster.job_controller.settings.batch_period == 0.05


@pytest.mark.parametrize(("flag", "period"), [((), 1.0), (("--job-batch-period", "0.1"), 0.1)])
def test_up_batches_for_kubernetes_second_unless_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: tuple[str, ...], period: float
) -> None:
    assert assembled_with(tmp_path, monkeypatch, flag)["job_batch_period"] == period


def test_a_batch_period_of_zero_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(up, ["--job-batch-period", "0", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 2
    assert "--job-batch-period" in result.output
    assert not (tmp_path / "data").exists()
