"""`kjobs up --sync-frequency` (the kubelet's flag: a Go duration, 1m0s by default) reaches the node agents, and
`--store-pack-above` (`kjobs.store.packing.PACK_ABOVE`, 25,000 by default) the store; bad values are usage errors
(exit 2) before anything is created."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import click
import prometheus_client
import pytest
from click.testing import CliRunner

from kjobs.cli.up import DEFAULT_STORE_PACK_ABOVE, _assemble, up
from kjobs.store import MemoryStore
from kjobs.store.packing import PACK_ABOVE
from tests.cli.up_support import assembled_with


@pytest.mark.parametrize(
    ("flags", "seconds"),
    [
        ((), 60.0),
        (("--sync-frequency", "30s"), 30.0),
        (("--sync-frequency", "1m"), 60.0),
        (("--sync-frequency", "1m30s"), 90.0),
        (("--sync-frequency=1.5h",), 5400.0),
        (("--sync-frequency", "500ms"), 0.5),
    ],
    ids=["default", "30s", "1m", "1m30s", "1.5h", "500ms"],
)
def test_sync_frequency_takes_go_durations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...], seconds: float
) -> None:
    assert assembled_with(tmp_path, monkeypatch, flags)["sync_frequency"] == seconds


def test_the_sync_frequency_reaches_the_node_agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prometheus_client, "REGISTRY", prometheus_client.CollectorRegistry())  # metrics: once each
    cluster, _ = _assemble(MemoryStore(), authenticator=None, nodes=1, data=tmp_path, sync_frequency=30.0)
    [name] = cluster.node_names()
    assert cluster._make_agent(name).settings.sync_frequency == 30.0


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("x", 'time: invalid duration "x"'),
        ("30", 'time: missing unit in duration "30"'),
        ("5d", 'time: unknown unit "d" in duration "5d"'),
        ("0s", "0s must be greater than zero"),
        ("-1m", "-1m must be greater than zero"),
    ],
)
def test_a_bad_sync_frequency_is_a_usage_error(tmp_path: Path, value: str, message: str) -> None:
    result = CliRunner().invoke(up, [f"--sync-frequency={value}", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 2
    assert f"Error: Invalid value for '--sync-frequency': {message}" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (tmp_path / "data").exists()


def _store_packing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...]) -> int:
    """The packing threshold of the store `kjobs up --port 0 FLAGS` opens."""
    seen: list[int] = []

    def assemble(store: Any, **kwargs: Any) -> Any:
        seen.append(store._packer.pack_above)
        store.close()
        raise click.ClickException("stopped before serving")

    monkeypatch.setattr(importlib.import_module("kjobs.cli.up"), "_assemble", assemble)
    args = ["--port", "0", "--data-dir", str(tmp_path / "data"), "--kubeconfig", str(tmp_path / "kc"), *flags]
    result = CliRunner().invoke(up, args)
    assert "stopped before serving" in result.output
    [threshold] = seen
    return threshold


@pytest.mark.parametrize(
    ("flags", "threshold"),
    [((), PACK_ABOVE), (("--store-pack-above", "0"), 0), (("--store-pack-above", "1000"), 1000)],
    ids=["default", "from-the-first", "1000"],
)
def test_store_pack_above_reaches_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...], threshold: int
) -> None:
    assert DEFAULT_STORE_PACK_ABOVE == PACK_ABOVE
    assert _store_packing(tmp_path, monkeypatch, flags) == threshold


@pytest.mark.parametrize(
    ("value", "message"),
    [("-1", "-1 is not in the range x>=0."), ("x", "'x' is not a valid integer range."), ("1.5", "")],
)
def test_a_bad_pack_threshold_is_a_usage_error(tmp_path: Path, value: str, message: str) -> None:
    result = CliRunner().invoke(up, ["--store-pack-above", value, "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 2
    assert f"Error: Invalid value for '--store-pack-above': {message}" in result.output
    assert not (tmp_path / "data").exists()
