"""`kjobs completion bash|zsh|fish`: print a shell completion script, as `kubectl completion SHELL` does.

The script is click's own (click.shell_completion): on <TAB> the shell runs `kjobs` again with
`_KJOBS_COMPLETE=<shell>_complete` and the words typed so far, and click answers with the commands, options and
choices that fit. `_KJOBS_COMPLETE=<shell>_source kjobs` prints the same script; this command only saves the
user from knowing that variable. How to load it is in the README's "Shell completion" section.
"""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

PROG_NAME = "kjobs"
COMPLETE_VAR = "_KJOBS_COMPLETE"
SHELLS = ("bash", "zsh", "fish")


def completion_script(cli: click.Command, shell: str) -> str:
    """The completion script for `shell`, bound to the `kjobs` command and its `_KJOBS_COMPLETE` variable."""
    cls = get_completion_class(shell)
    if cls is None:  # click.Choice keeps this out; a guard for callers of this function
        raise click.BadParameter(f"unsupported shell {shell!r}; supported: {', '.join(SHELLS)}")
    return cls(cli, {}, PROG_NAME, COMPLETE_VAR).source()


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion_command(ctx: click.Context, shell: str) -> None:
    """Print the completion script for SHELL (bash, zsh or fish).

    \b
    bash:  source <(kjobs completion bash)      # add it to ~/.bashrc to keep it
    zsh:   source <(kjobs completion zsh)       # in ~/.zshrc, after compinit
    fish:  kjobs completion fish > ~/.config/fish/completions/kjobs.fish
    """
    click.echo(completion_script(ctx.find_root().command, shell), nl=False)
