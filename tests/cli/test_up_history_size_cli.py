"""`kjobs up --history-size` (hidden, testing only): how many changes of each resource the store keeps, past which
an older resourceVersion (a watch's, a continue token's) answers 410 Expired."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

import kjobs.store
from kjobs.cli.up import up
from kjobs.store.base import DEFAULT_HISTORY


def test_the_flag_is_hidden_and_zero_is_a_usage_error(tmp_path: Path) -> None:
    assert "--history-size" not in CliRunner().invoke(up, ["--help"]).output
    result = CliRunner().invoke(up, ["--history-size", "0", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 2
    assert "--history-size" in result.output


@pytest.mark.parametrize(("flag", "size"), [((), DEFAULT_HISTORY), (("--history-size", "300"), 300)])
def test_up_opens_the_store_with_the_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: tuple[str, ...], size: int
) -> None:
    seen: dict[str, Any] = {}

    def open_store(data_dir: str, *, history_size: int = DEFAULT_HISTORY, repair: bool = False, **_: Any) -> Any:
        seen["history_size"] = history_size
        raise click.ClickException("stopped before serving")

    monkeypatch.setattr(kjobs.store, "open_store", open_store)
    args = ["--port", "0", "--data-dir", str(tmp_path / "data"), "--kubeconfig", str(tmp_path / "kc"), *flag]
    result = CliRunner().invoke(up, args)
    assert "stopped before serving" in result.output
    assert seen["history_size"] == size
