"""`kjobs validate FILE...`: validate manifests exactly as a Kubernetes API server would on create.

Unknown fields are handled as `kubectl apply --validate=...` has the server handle them (`kjobs.validate.decode`):
strict by default, the same message the API server of `kjobs up` returns.
"""

from __future__ import annotations

import sys

import click
import orjson

from kjobs.api.errors import ApiError
from kjobs.api.features import DEFAULT, KNOWN, FeatureGates
from kjobs.api.manifest import ManifestError, load_manifests
from kjobs.api.types import Obj
from kjobs.cli.features import feature_gates_option
from kjobs.validate import FIELD_VALIDATION, decode, invalid_status, validate_manifest

validate_option = click.option(
    "--validate",
    "field_validation",
    type=click.Choice(list(FIELD_VALIDATION), case_sensitive=False),
    default="strict",
    show_default=True,
    help="Unknown fields: strict (or true) rejects them, warn prints a warning, ignore (or false) drops them.",
)
"""kubectl's `--validate`, for every command that reads a manifest."""


def decode_or_status(obj: Obj, field_validation: str, features: FeatureGates = DEFAULT) -> tuple[Obj, Obj | None]:
    """`decode` with the `--validate` value; prints its warnings to stderr as kubectl does and returns the
    decoded object, or the original and the 400 `Status` when strict decoding rejects it."""
    try:
        decoded, warnings = decode(obj, FIELD_VALIDATION[field_validation.lower()], features)
    except ApiError as exc:
        return obj, exc.status()
    for warning in warnings:
        click.echo(f"Warning: {warning}", err=True)
    return decoded, None


def _unknown_fields(obj: Obj, features: FeatureGates) -> str | None:
    try:
        decode(obj, FIELD_VALIDATION["strict"], features)
    except ApiError as exc:
        return str(exc.status().get("message"))
    return None


def gated_field_hint(obj: Obj, features: FeatureGates) -> str | None:
    """When strict decoding refused `obj` for fields that a feature gate now off would serve, a line naming the
    gates to turn on: Kubernetes' message alone ("unknown field") does not say the field exists behind a gate."""
    refused = _unknown_fields(obj, features)
    if refused is None:
        return None
    gates = []
    for name, spec in KNOWN.items():
        if spec.locked or features.enabled(name):
            continue
        on = FeatureGates.from_map({**features.overrides, name: True})
        if _unknown_fields(obj, on) != refused:
            gates.append(name)
    if not gates:
        return None
    setting = ",".join(f"{name}=true" for name in gates)
    return f"hint: feature gates that are off serve some of these fields: try --feature-gates {setting}"


def _describe(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return f'{obj.get("kind") or "object"} "{meta.get("name") or meta.get("generateName") or ""}"'


@click.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True)
@validate_option
@feature_gates_option
def validate_command(files: tuple[str, ...], output: str, field_validation: str, features: FeatureGates) -> None:
    """Validate Job (and Pod) manifests; exit 1 if any object is invalid, 2 if a file cannot be read or is empty."""
    statuses: list[Obj] = []
    any_invalid = False
    for path in files:
        try:
            objects = load_manifests(path)
        except ManifestError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        if not objects:
            # An empty file validated nothing: say so and fail, as `kubectl apply` does ("no objects passed").
            click.echo(f"error: {path}: no objects to validate", err=True)
            sys.exit(2)
        for original in objects:
            obj, rejected = decode_or_status(original, field_validation, features)
            if rejected is not None:
                any_invalid = True
                statuses.append(rejected)
                if output == "text":
                    click.echo(f"{path}: {rejected['message']}")
                    hint = gated_field_hint(original, features)
                    if hint is not None:
                        click.echo(hint, err=True)
                continue
            errors = validate_manifest(obj, features=features)
            if errors:
                any_invalid = True
                status = invalid_status(obj, errors)
                statuses.append(status)
                if output == "text":
                    click.echo(f"{path}: The {_describe(obj)} is invalid:")
                    for err in errors:
                        click.echo(f"* {err}")
            else:
                statuses.append(
                    {
                        "kind": "Status",
                        "apiVersion": "v1",
                        "metadata": {},
                        "status": "Success",
                        "message": f"{_describe(obj)} is valid",
                    }
                )
                if output == "text":
                    click.echo(f"{path}: {_describe(obj)} is valid")
    if output == "json":
        body: Obj = statuses[0] if len(statuses) == 1 else {"kind": "List", "apiVersion": "v1", "items": statuses}
        click.echo(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode())
    sys.exit(1 if any_invalid else 0)
