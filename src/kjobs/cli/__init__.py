"""The `kjobs` command line: one module per command, registered on the group here.

`entry` is what the `kjobs` console script and `python -m kjobs` run: `main`, then an exit that does not make
the interpreter collect what the command left. A `kjobs run` of 5,000 pods leaves its whole cluster (store,
informer caches, tasks) in reference cycles, and the interpreter's last collection walked and freed it for
0.8-1.2 s after the summary was printed; the operating system takes the memory back at once.
"""

from __future__ import annotations

import gc
import importlib

import click

from kjobs import __version__

COMMANDS: dict[str, tuple[str, str]] = {
    "explain": ("kjobs.cli.explain", "explain_command"),
    "validate": ("kjobs.cli.validate", "validate_command"),
    "up": ("kjobs.cli.up", "up"),
    "run": ("kjobs.cli.run", "run_command"),
    "node": ("kjobs.cli.node", "node_group"),
    "controller": ("kjobs.cli.controller", "controller_command"),
    "completion": ("kjobs.cli.completion", "completion_command"),
    "simulate": ("kjobs.cli.simulate", "simulate_command"),
}
"""Each command's name, and the module and attribute that define it: a module is imported when the command line
names its command (or the commands are listed: `kjobs --help`, completion), so `kjobs run` does not import
`kjobs explain`'s, `kjobs up`'s or `kjobs node`'s modules (about 23 M instructions of its start-up, docs/run51.md)."""


class CommandGroup(click.Group):
    """A `click.Group` whose commands are `COMMANDS`, each added on first use: click's own listing and lookup
    (`list_commands`, `get_command`) over the same names and command objects as when every module registered
    its command at import."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name]
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return self.commands.get(cmd_name)


@click.group(cls=CommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kjobs")
def main() -> None:
    """kjobs: Kubernetes batch Jobs, with their failure-handling semantics, on one machine."""
    from kjobs.rlimits import raise_open_files_limit

    raise_open_files_limit()


def entry() -> None:
    """Run the command line as a program, under `tune_gc`'s thresholds from the start; on the way out, what is
    left is frozen rather than collected.

    A command's start-up (its modules, classes, functions and the cluster it builds) is nearly all objects that
    live as long as the process, so the young-generation passes at the interpreter's default threshold (700) only
    scanned them again: about 100 young and 9 generation-1 passes before `kjobs up` was ready, some 50 ms of
    CPU (docs/upstart57.md). The long-lived commands (`up`, `run`, `node join`, `controller`, `simulate`)
    set the same thresholds once built; here they hold from the command's first import.
    `gc.freeze` moves every tracked object to the permanent generation, which the interpreter's collections at
    exit skip; `atexit` handlers, the flush of `sys.stdout`/`sys.stderr` and the exit status are unchanged.
    Only for a whole process: `main` itself (as click's test runner calls it) leaves the collector alone.
    """
    from kjobs.files import NotOwned
    from kjobs.gctuning import tune_gc
    from kjobs.node.rootlock import RootInUse

    tune_gc()
    try:
        main(prog_name="kjobs")
    except (NotOwned, RootInUse) as exc:  # a node's root another user made first (`kjobs.files.owned_dir`), or
        # one another process owns (`kjobs.node.rootlock`): no traceback
        raise SystemExit(f"Error: {exc}") from None
    finally:
        gc.freeze()
