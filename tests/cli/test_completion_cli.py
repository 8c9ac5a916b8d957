"""Shell completion as a user gets it: `kjobs completion SHELL` prints a script that, loaded in that shell,
completes kjobs' commands, options, choices and file arguments."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.shell_completion import BashComplete
from click.testing import CliRunner

from kjobs.cli import main


@pytest.fixture
def kjobs_on_path(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH has a `kjobs` command (this interpreter's `python -m kjobs`), as an install has."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "kjobs"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kjobs "$@"\n')
    exe.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def _bash_complete(env: dict[str, str], *words: str) -> list[str]:
    """What bash offers after `words` (the last one being completed), with the printed script sourced."""
    script = (
        "source <(kjobs completion bash)\n"
        f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
        "_kjobs_completion kjobs\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_bash_script_registers_kjobs(kjobs_on_path: dict[str, str]) -> None:
    out = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", "source <(kjobs completion bash); complete -p kjobs"],
        env=kjobs_on_path,
        capture_output=True,
        text=True,
    )
    assert out.stdout.strip() == "complete -o nosort -F _kjobs_completion kjobs"


def test_bash_completes_a_command(kjobs_on_path: dict[str, str]) -> None:
    assert _bash_complete(kjobs_on_path, "kjobs", "r") == ["run"]


def test_bash_completes_options_and_shells(kjobs_on_path: dict[str, str]) -> None:
    assert _bash_complete(kjobs_on_path, "kjobs", "up", "--data") == ["--data-dir"]
    assert _bash_complete(kjobs_on_path, "kjobs", "completion", "") == ["bash", "zsh", "fish"]


@pytest.mark.parametrize(
    "args",
    [["run"], ["validate"], ["validate", "a.yaml"], ["explain", "--job"], ["explain", "--job", "j.yaml", "--pod"]],
)
def test_manifest_arguments_complete_as_files(args: list[str]) -> None:
    """A manifest argument hands completion to the shell's file names (type `file`), not to nothing."""
    items = BashComplete(main, {}, "kjobs", "_KJOBS_COMPLETE").get_completions(args, "")
    assert [item.type for item in items] == ["file"]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_a_command(kjobs_on_path: dict[str, str]) -> None:
    out = subprocess.run(
        ["fish", "--no-config", "-c", 'kjobs completion fish | source; complete -C "kjobs r"'],
        env=kjobs_on_path,
        capture_output=True,
        text=True,
    )
    assert [line.split("\t")[0] for line in out.stdout.splitlines()] == ["run"], out.stderr


def test_zsh_script_registers_kjobs() -> None:
    result = CliRunner().invoke(main, ["completion", "zsh"])
    assert result.exit_code == 0
    assert result.stdout.startswith("#compdef kjobs\n")
    assert "_KJOBS_COMPLETE=zsh_complete kjobs" in result.stdout


def test_unknown_shell_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["completion", "powershell"])
    assert result.exit_code == 2
    assert "'powershell' is not one of 'bash', 'zsh', 'fish'" in result.stderr
