"""The `kjobs` command line: one module per command, registered on the group here.

`entry` is what the `kjobs` console script and `python -m kjobs` run: `main`, then an exit that does not make
the interpreter collect what the command left. A `kjobs run` of 5,000 pods leaves its whole cluster (store,
informer caches, tasks) in reference cycles, and the interpreter's last collection walked and freed it for
0.8-1.2 s after the summary was printed; the operating system takes the memory back at once.
"""

from __future__ import annotations

import gc

import click

from kjobs import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kjobs")
def main() -> None:
    """kjobs: Kubernetes batch Jobs, with their failure-handling semantics, on one machine."""
    from kjobs.rlimits import raise_open_files_limit

    raise_open_files_limit()


def entry() -> None:
    """Run the command line as a program; on the way out, what is left is frozen rather than collected.

    `gc.freeze` moves every tracked object to the permanent generation, which the interpreter's collections at
    exit skip; `atexit` handlers, the flush of `sys.stdout`/`sys.stderr` and the exit status are unchanged.
    Only for a whole process: `main` itself (as click's test runner calls it) leaves the collector alone.
    """
    from kjobs.files import NotOwned
    from kjobs.node.rootlock import RootInUse

    try:
        main(prog_name="kjobs")
    except (NotOwned, RootInUse) as exc:  # a node's root another user made first (`kjobs.files.owned_dir`), or
        # one another process owns (`kjobs.node.rootlock`): no traceback
        raise SystemExit(f"Error: {exc}") from None
    finally:
        gc.freeze()


# Commands register themselves below (one line each).
from kjobs.cli.explain import explain_command  # noqa: E402

main.add_command(explain_command)
from kjobs.cli.validate import validate_command  # noqa: E402

main.add_command(validate_command)
from kjobs.cli.up import up  # noqa: E402

main.add_command(up)
from kjobs.cli.run import run_command  # noqa: E402

main.add_command(run_command)
from kjobs.cli.node import node_group  # noqa: E402

main.add_command(node_group)
from kjobs.cli.controller import controller_command  # noqa: E402

main.add_command(controller_command)
from kjobs.cli.completion import completion_command  # noqa: E402

main.add_command(completion_command)
from kjobs.cli.simulate import simulate_command  # noqa: E402

main.add_command(simulate_command)
