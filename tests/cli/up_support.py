"""What `kjobs up` hands `_assemble` for a command line: the flag tests stop it there, before anything serves."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from kjobs.cli.up import up


def assembled_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...]) -> dict[str, Any]:
    """The keyword arguments `kjobs up --port 0 ... FLAGS` passes to `_assemble`."""
    seen: dict[str, Any] = {}

    def assemble(store: Any, **kwargs: Any) -> Any:
        seen.update(kwargs)
        raise click.ClickException("stopped before serving")

    monkeypatch.setattr(importlib.import_module("kjobs.cli.up"), "_assemble", assemble)
    args = ["--port", "0", "--data-dir", str(tmp_path / "data"), "--kubeconfig", str(tmp_path / "kc"), *flags]
    result = CliRunner().invoke(up, args)
    assert "stopped before serving" in result.output
    return seen
