"""The program's entry (`kjobs.cli.entry`) and what `kjobs run` costs a user beyond its pods: its exit skips the
collection of what the command left, piped progress needs no rich and goes out in one write per wake-up."""

from __future__ import annotations

import gc
import importlib
import io
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from kjobs.cli import COMMANDS, entry, main
from kjobs.cluster import INTERPRETER_FROZEN
from kjobs.gctuning import SERVER_GC_THRESHOLDS
from kjobs.run import _print_lines


def test_entry_freezes_what_is_left_on_the_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["kjobs", "--version"])
    assert gc.get_freeze_count() <= INTERPRETER_FROZEN  # CPython 3.12 starts with some frozen
    before = gc.get_threshold()
    try:
        with pytest.raises(SystemExit) as exited:
            entry()
        assert exited.value.code == 0  # click's exit status goes through unchanged
        assert gc.get_freeze_count() > INTERPRETER_FROZEN
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_entry_imports_the_command_under_the_servers_gc_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    """`tune_gc`'s thresholds hold from before the command's module is imported (its start-up's objects live as
    long as the process: young passes over them at the default threshold were CPU for nothing)."""
    seen: list[tuple[int, int, int]] = []
    real = importlib.import_module

    def recording(name: str, package: str | None = None) -> object:
        if name == COMMANDS["validate"][0]:
            seen.append(gc.get_threshold())
        return real(name, package)

    monkeypatch.setattr(sys, "argv", ["kjobs", "validate", "--help"])
    monkeypatch.setattr(importlib, "import_module", recording)
    monkeypatch.delitem(main.commands, "validate", raising=False)  # added by an earlier test: imported again
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)  # the interpreter's defaults
        with pytest.raises(SystemExit) as exited:
            entry()
        assert exited.value.code == 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
    assert seen == [SERVER_GC_THRESHOLDS]


def test_main_alone_leaves_the_collector_alone() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert gc.get_freeze_count() <= INTERPRETER_FROZEN  # CPython 3.12 starts with some frozen


class _Recorder(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []
        self.flushes = 0

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)

    def flush(self) -> None:
        self.flushes += 1


@pytest.mark.parametrize(
    ("lines", "writes"),
    [
        pytest.param(["pod a Pending", "pod a Running", "pod b Succeeded"], 1, id="a-wake-up-one-write"),
        pytest.param([], 0, id="nothing-nothing"),
    ],
)
def test_plain_lines_are_the_same_text_in_one_write(lines: list[str], writes: int) -> None:
    out = _Recorder()
    _print_lines(lines, out)
    expected = io.StringIO()
    for line in lines:
        print(line, file=expected, flush=True)
    assert out.getvalue() == expected.getvalue()
    assert (len(out.writes), out.flushes) == (writes, writes)


@pytest.mark.e2e
def test_piped_run_does_without_rich() -> None:
    script = textwrap.dedent(
        """
        import io, sys
        from kjobs.run import RunOptions, run
        job = {
            "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "one", "namespace": "default"},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "main", "image": "busybox", "command": ["true"]}]}}},
        }
        out = io.StringIO()
        code = run(job, RunOptions(out=out))
        assert code == 0 and "Job default/one: Complete" in out.getvalue(), out.getvalue()
        print(sorted(m for m in sys.modules if m == "rich" or m.startswith("rich.")))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_python_m_kjobs_imports_the_cli_under_the_servers_gc_thresholds() -> None:
    """`python -m kjobs` sets the thresholds before it imports the CLI (click, the command group)."""
    script = textwrap.dedent(
        """
        import gc, runpy, sys

        class Watch:
            def find_spec(self, name, path=None, target=None):
                if name == "click":
                    print(gc.get_threshold())
                return None

        sys.meta_path.insert(0, Watch())
        sys.argv = ["kjobs", "--version"]
        runpy.run_module("kjobs", run_name="__main__")
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == str(SERVER_GC_THRESHOLDS)
