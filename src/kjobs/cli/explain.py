"""`kjobs explain --job JOB.yaml --pod POD.yaml`: what the Job's podFailurePolicy does with that pod."""

from __future__ import annotations

import sys

import click
import orjson

from kjobs.api.manifest import ManifestError, load_manifests
from kjobs.api.types import Obj
from kjobs.explain import explain


def _single(path: str, kind: str) -> Obj:
    objects = [o for o in load_manifests(path) if o.get("kind") in (kind, None)]
    if not objects:
        raise ManifestError(f"{path}: no {kind} object found")
    return objects[0]


def _pods(path: str) -> list[Obj]:
    objects = [o for o in load_manifests(path) if o.get("kind") in ("Pod", None)]
    if not objects:
        raise ManifestError(f"{path}: no Pod object found")
    return objects


@click.command("explain")
@click.option(
    "--job",
    "job_path",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Job manifest (YAML or JSON; - for stdin).",
)
@click.option(
    "--pod",
    "pod_path",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Failed pod, e.g. from `kubectl get pod -o yaml`.",
)
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True)
def explain_command(job_path: str, pod_path: str, output: str) -> None:
    """Say what a Job's podFailurePolicy does with a failed pod, and why."""
    try:
        job = _single(job_path, "Job")
        pods = _pods(pod_path)
    except ManifestError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    results = [explain(job, pod) for pod in pods]
    if output == "json":
        body = [r.to_dict() for r in results]
        click.echo(orjson.dumps(body[0] if len(body) == 1 else body, option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo("\n\n".join(r.render() for r in results))
