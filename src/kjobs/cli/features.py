"""`--feature-gates Name=true,...`, shared by `kjobs up`, `run`, `validate` and `controller`.

The value is parsed by `kjobs.api.features` exactly as Kubernetes components parse theirs; a bad value is
reported with the pflag wording Kubernetes prints (`invalid argument "X" for "--feature-gates" flag: ...`).
"""

from __future__ import annotations

import click

from kjobs.api.features import KNOWN, FeatureGateError, FeatureGates, setting_warnings


def _parse(_ctx: click.Context, _param: click.Parameter, value: str) -> FeatureGates:
    try:
        gates = FeatureGates.parse(value or "")
    except FeatureGateError as exc:
        raise click.BadParameter(f'invalid argument "{value}" for "--feature-gates" flag: {exc}') from None
    for warning in setting_warnings(value or ""):
        click.echo(f"Warning: {warning}", err=True)
    return gates


def _help() -> str:
    lines = ", ".join(f"{name}={str(spec.default).lower()}" for name, spec in sorted(KNOWN.items()))
    return (
        "Comma-separated Name=true|false pairs, as Kubernetes components take them; AllAlpha=true turns every "
        f"kjobs extension on (README: Feature gates). Gates and defaults: {lines}."
    )


feature_gates_option = click.option(
    "--feature-gates", "features", default="", metavar="NAME=BOOL,...", callback=_parse, help=_help()
)
"""The option; the command receives a frozen `FeatureGates` as `features`."""
