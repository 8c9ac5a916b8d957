"""The command group loads a command's module when the command line names it (`kjobs.cli.CommandGroup`).

The oracle is the group as it was: every command module imported and its command registered with
`add_command` when `kjobs.cli` was imported. The lazy group must list the same names, resolve each to the same
command object, print the same help and reject an unknown command the same way; and `kjobs run` must not import
the other commands' modules, which is what the laziness is for.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import click
from click.testing import CliRunner

from kjobs.cli import COMMANDS, CommandGroup, main

# The registration order of the eager group (`kjobs.cli` before stop 51).
EAGER = (
    ("kjobs.cli.explain", "explain_command"),
    ("kjobs.cli.validate", "validate_command"),
    ("kjobs.cli.up", "up"),
    ("kjobs.cli.run", "run_command"),
    ("kjobs.cli.node", "node_group"),
    ("kjobs.cli.controller", "controller_command"),
    ("kjobs.cli.completion", "completion_command"),
    ("kjobs.cli.simulate", "simulate_command"),
)


def eager_group() -> click.Group:
    """`main` as a plain `click.Group` with every command added at once, as `kjobs.cli` registered them."""
    group = click.Group(name=main.name, callback=main.callback, params=main.params, help=main.help)
    group.context_settings = main.context_settings
    for module, attribute in EAGER:
        group.add_command(getattr(importlib.import_module(module), attribute))
    return group


def test_the_same_names_resolve_to_the_same_commands() -> None:
    eager, ctx = eager_group(), click.Context(main)
    assert main.list_commands(ctx) == eager.list_commands(click.Context(eager))
    for name in eager.list_commands(click.Context(eager)):
        assert main.get_command(ctx, name) is eager.get_command(click.Context(eager), name)
    assert main.get_command(ctx, "rn") is None
    assert isinstance(main, CommandGroup) and set(COMMANDS) == set(eager.commands)


def test_help_and_an_unknown_command_read_as_before() -> None:
    runner, eager = CliRunner(), eager_group()
    for args in (["--help"], ["rn"], [], ["run", "--help"], ["node", "--help"]):
        new, old = runner.invoke(main, args, prog_name="kjobs"), runner.invoke(eager, args, prog_name="kjobs")
        assert (new.exit_code, new.output) == (old.exit_code, old.output), args


def test_kjobs_run_imports_no_other_commands_module() -> None:
    """`kjobs run --help` in a fresh interpreter: of the command modules, only `run`'s and what it imports."""
    code = (
        "import sys\n"
        "from kjobs.cli import main\n"
        "main(['run', '--help'], prog_name='kjobs', standalone_mode=False)\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('kjobs.cli.') or m == 'kjobs.explain_job')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = out.splitlines()[-1].split()
    assert loaded == ["kjobs.cli.features", "kjobs.cli.params", "kjobs.cli.run", "kjobs.cli.validate"]
