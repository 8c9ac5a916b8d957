"""`--container-log-max-size` (a quantity, 10Mi by default) and `--container-log-max-files` (5, at least 2): the
kubelet's log rotation flags, on `kjobs up` and `kjobs node join`, reach the shims that write the logs; bad
values are usage errors worded as the kubelet's `NewContainerLogManager` words them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import prometheus_client
import pytest
from click.testing import CliRunner

from kjobs.cli import main
from kjobs.cli.up import _assemble, up
from kjobs.store import MemoryStore
from tests.cli.up_support import assembled_with
from tests.node.test_max_pods import _join, unreachable  # noqa: F401 (a fixture)


@pytest.mark.parametrize(
    ("flags", "rotation"),
    [
        ((), (10 * 1024 * 1024, 5)),
        (("--container-log-max-size", "1Mi", "--container-log-max-files", "2"), (1024 * 1024, 2)),
        (("--container-log-max-size=500k",), (500_000, 5)),
        (("--container-log-max-size=1.5Ki",), (1536, 5)),
        (("--container-log-max-size=0",), (0, 5)),
        (("--container-log-max-size=-1",), (-1, 5)),
    ],
    ids=["default", "1Mi-2", "500k", "1.5Ki", "0", "-1"],
)
def test_up_takes_the_kubelets_log_rotation_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...], rotation: tuple[int, int]
) -> None:
    assert assembled_with(tmp_path, monkeypatch, flags)["container_log_rotation"] == rotation


def test_the_log_rotation_reaches_the_node_agents_shims(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prometheus_client, "REGISTRY", prometheus_client.CollectorRegistry())  # metrics: once each
    cluster, _ = _assemble(MemoryStore(), authenticator=None, nodes=1, data=tmp_path, container_log_rotation=(4096, 3))
    [name] = cluster.node_names()
    agent = cluster._make_agent(name)
    assert (agent.settings.container_log_max_size, agent.settings.container_log_max_files) == (4096, 3)
    shim = agent.runtime._spawner._shims[0]  # what its "b" request tells the shim process
    assert shim._log_rotation == [4096, 3]


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--container-log-max-size", "x", "failed to parse container log max size 'x': quantities must match"),
        ("--container-log-max-size", "1.5", "failed to parse container log max size '1.5': invalid max log size"),
        ("--container-log-max-files", "1", "invalid MaxFiles 1, must be > 1"),
        ("--container-log-max-files", "0", "invalid MaxFiles 0, must be > 1"),
    ],
)
def test_bad_log_rotation_flags_are_usage_errors(tmp_path: Path, flag: str, value: str, message: str) -> None:
    result = CliRunner().invoke(up, [f"{flag}={value}", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 2
    assert f"Error: Invalid value for '{flag}': {message}" in result.output
    assert not (tmp_path / "data").exists()


def test_node_join_takes_the_log_rotation_flags(unreachable: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    import kjobs.cli.node as node_cli

    seen: list[tuple[int, int]] = []

    async def joined(connection: object, name: str, runtime: str, root: object, settings: Any, *rest: object) -> None:
        seen.append((settings.container_log_max_size, settings.container_log_max_files))

    monkeypatch.setattr(node_cli, "_join", joined)
    monkeypatch.setattr("kjobs.gctuning.tune_gc", lambda: None)
    flags = ["--container-log-max-size", "2Mi", "--container-log-max-files", "3"]
    assert CliRunner().invoke(main, _join(unreachable)).exit_code == 0
    result = CliRunner().invoke(main, _join(unreachable, *flags))
    assert result.exit_code == 0, result.output
    assert seen == [(10 * 1024 * 1024, 5), (2 * 1024 * 1024, 3)]
    result = CliRunner().invoke(main, _join(unreachable, "--container-log-max-files", "1"))
    assert result.exit_code == 2 and "invalid MaxFiles 1, must be > 1" in result.output
