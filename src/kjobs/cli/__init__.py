"""The `kjobs` command line: one module per command, registered on the group here."""

from __future__ import annotations

import click

from kjobs import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kjobs")
def main() -> None:
    """kjobs: Kubernetes batch Jobs, with their failure-handling semantics, on one machine."""


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
