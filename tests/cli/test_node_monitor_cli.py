"""`kjobs up --node-monitor-period/--node-monitor-grace-period/--node-startup-grace-period` (kube-controller-manager's
flags: Go durations, 5s, 50s and 1m0s by default) and `--node-eviction-rate` (0.1 nodes a second) reach the node
lifecycle controller, the testing-only `--pod-gc-period` the pod GC (its quarantine twice the period), and `kjobs
node join --node-status-update-frequency` (the kubelet's flag, 10s) the agent's heartbeats: what a several-node chaos
run (tests/e2e/chaos.py) shortens so that a lost node's pods are evicted and collected within seconds. Bad values
are usage errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import prometheus_client
import pytest
from click.testing import CliRunner

from kjobs.cli import main
from kjobs.cli.up import _assemble, up
from kjobs.controllers.nodelifecycle import NodeLifecycleSettings
from kjobs.controllers.podgc import PodGCSettings
from kjobs.server import kubeconfig
from kjobs.store import MemoryStore
from tests.cli.up_support import assembled_with


@pytest.mark.parametrize(
    ("flags", "monitor", "gc"),
    [
        ((), NodeLifecycleSettings(), None),
        (
            ("--node-monitor-period", "500ms", "--node-monitor-grace-period", "6s", "--node-startup-grace-period=1m"),
            NodeLifecycleSettings(monitor_period=0.5, grace_period=6.0, startup_grace_period=60.0),
            None,
        ),
        (
            ("--node-startup-grace-period", "2m30s", "--pod-gc-period", "0.5", "--node-eviction-rate", "2"),
            NodeLifecycleSettings(startup_grace_period=150.0, eviction_qps=2.0),
            0.5,
        ),
    ],
    ids=["defaults", "shortened", "startup-and-gc"],
)
def test_the_node_monitor_flags_take_go_durations(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    flags: tuple[str, ...],
    monitor: NodeLifecycleSettings,
    gc: float | None,
) -> None:
    seen = assembled_with(tmp_path, monkeypatch, flags)
    assert (seen["node_lifecycle"], seen["pod_gc_period"]) == (monitor, gc)


def test_the_node_monitor_flags_reach_the_controllers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prometheus_client, "REGISTRY", prometheus_client.CollectorRegistry())  # metrics: once each
    lifecycle = NodeLifecycleSettings(monitor_period=0.5, grace_period=6.0, startup_grace_period=7.0, eviction_qps=1)
    cluster, _ = _assemble(
        MemoryStore(), authenticator=None, nodes=0, data=tmp_path, node_lifecycle=lifecycle, pod_gc_period=0.5
    )
    assert cluster.settings.node_lifecycle == lifecycle
    assert cluster.settings.pod_gc == PodGCSettings(period=0.5, quarantine=1.0)
    monkeypatch.setattr(prometheus_client, "REGISTRY", prometheus_client.CollectorRegistry())
    default, _ = _assemble(MemoryStore(), authenticator=None, nodes=0, data=tmp_path)
    assert (default.settings.node_lifecycle, default.settings.pod_gc) == (NodeLifecycleSettings(), PodGCSettings())


def test_the_help_names_the_flags_and_hides_the_testing_one() -> None:
    shown = CliRunner().invoke(up, ["--help"]).output
    assert "--node-monitor-grace-period DURATION" in shown
    assert "Amount of time which we allow running Node to be unresponsive before marking it" in " ".join(shown.split())
    assert "--pod-gc-period" not in shown


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--node-monitor-grace-period", "40", 'time: missing unit in duration "40"'),
        ("--node-monitor-period", "0s", "0s must be greater than zero"),
        ("--node-startup-grace-period", "1d", 'time: unknown unit "d" in duration "1d"'),
    ],
)
def test_a_bad_node_monitor_value_is_a_usage_error(tmp_path: Path, flag: str, value: str, message: str) -> None:
    result = CliRunner().invoke(up, [f"{flag}={value}", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 2
    assert f"Error: Invalid value for '{flag}': {message}" in result.output
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize(
    ("flags", "seconds"), [((), 10.0), (("--node-status-update-frequency", "1s"), 1.0)], ids=["10s", "1s"]
)
def test_the_node_status_update_frequency_reaches_the_joined_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...], seconds: float
) -> None:
    import kjobs.cli.node as node_cli

    config = tmp_path / "kubeconfig.yaml"
    kubeconfig.write(config, "http://127.0.0.1:1")
    seen: list[float] = []

    async def joined(connection: object, name: str, runtime: str, root: object, settings: Any, *rest: object) -> None:
        seen.append(settings.node_status_update_frequency)

    monkeypatch.setattr(node_cli, "_join", joined)
    monkeypatch.setattr("kjobs.gctuning.tune_gc", lambda: None)  # the test process keeps its GC settings
    result = CliRunner().invoke(main, ["node", "join", "--kubeconfig", str(config), "--name", "n", *flags])
    assert result.exit_code == 0, result.output
    assert seen == [seconds]
    refused = CliRunner().invoke(
        main, ["node", "join", "--kubeconfig", str(config), "--name", "n", "--node-status-update-frequency", "-1s"]
    )
    assert refused.exit_code == 2
    assert "Invalid value for '--node-status-update-frequency': -1s must be greater than zero" in refused.output
