"""`kjobs up --cronjob-clock-rate` (hidden, testing only): the CronJob controller's clock, and only its, runs faster."""

from __future__ import annotations

from pathlib import Path

import prometheus_client
import pytest
from click.testing import CliRunner

from kjobs.cli.up import _assemble, up
from kjobs.clock import ScaledClock
from kjobs.controllers.cronjob import CronJobController
from kjobs.store import MemoryStore
from tests.cli.up_support import assembled_with


def _cronjob_controller(rate: float | None, monkeypatch: pytest.MonkeyPatch) -> tuple[CronJobController, object]:
    monkeypatch.setattr(prometheus_client, "REGISTRY", prometheus_client.CollectorRegistry())  # metrics: once each
    options = {} if rate is None else {"cronjob_clock_rate": rate}
    cluster, _ = _assemble(MemoryStore(), authenticator=None, nodes=0, data=Path("unused"), **options)
    found = next(c for c in cluster.controllers if isinstance(c, CronJobController))
    return found, cluster.clock


def test_the_rate_reaches_the_cronjob_controller_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    controller, cluster_clock = _cronjob_controller(30.0, monkeypatch)
    assert isinstance(controller.clock, ScaledClock) and controller.clock.rate == 30.0
    assert not isinstance(cluster_clock, ScaledClock)


def test_by_default_the_cronjob_controller_reads_the_clusters_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    controller, cluster_clock = _cronjob_controller(None, monkeypatch)
    assert controller.clock is cluster_clock


def test_the_flag_is_hidden_and_a_rate_of_zero_is_a_usage_error(tmp_path: Path) -> None:
    assert "--cronjob-clock-rate" not in CliRunner().invoke(up, ["--help"]).output
    result = CliRunner().invoke(up, ["--cronjob-clock-rate", "0", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 2
    assert "--cronjob-clock-rate" in result.output


@pytest.mark.parametrize(("flag", "rate"), [((), 1.0), (("--cronjob-clock-rate", "30"), 30.0)])
def test_up_passes_the_rate_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: tuple[str, ...], rate: float
) -> None:
    assert assembled_with(tmp_path, monkeypatch, flag)["cronjob_clock_rate"] == rate
