"""`kjobs validate FILE...`: validate manifests exactly as a Kubernetes API server would on create."""

from __future__ import annotations

import sys

import click
import orjson

from kjobs.api.manifest import ManifestError, load_manifests
from kjobs.api.types import Obj
from kjobs.validate import invalid_status, validate_manifest


def _describe(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return f'{obj.get("kind") or "object"} "{meta.get("name") or meta.get("generateName") or ""}"'


@click.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True)
def validate_command(files: tuple[str, ...], output: str) -> None:
    """Validate Job (and Pod) manifests; exit 1 if any object is invalid, 2 if a file cannot be read."""
    statuses: list[Obj] = []
    any_invalid = False
    for path in files:
        try:
            objects = load_manifests(path)
        except ManifestError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        for obj in objects:
            errors = validate_manifest(obj)
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
