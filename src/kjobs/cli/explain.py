"""`kjobs explain`: what a Job's podFailurePolicy does with failed pods.

Two forms: `kjobs explain --job JOB.yaml --pod POD.yaml` reasons about manifests offline (`kjobs.explanation`);
`kjobs explain job NAME` lists every failed pod of a Job on a cluster (`kjobs.explain_job`).
"""

from __future__ import annotations

import sys
from typing import Any

import click
import orjson

from kjobs.api.errors import ApiError, ErrorType, FieldError
from kjobs.api.manifest import ManifestError, load_manifests
from kjobs.api.types import Obj
from kjobs.cli.validate import kubectl_invalid
from kjobs.explain_job import JobFailures, explain_job
from kjobs.explanation import explain


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


def _policy_errors(job: Obj) -> list[FieldError]:
    """The API server's errors for the Job's podFailurePolicy (every gate on: a Job read from a cluster may use
    what kjobs' gates serve): a policy the API would refuse (an unknown action, `values: "42"`) would otherwise
    be explained as though it matched nothing. A rule's containerName is checked only when the manifest has a
    pod template with containers (a Job written for `explain` alone may have none)."""
    from kjobs.api.defaults import default_job
    from kjobs.api.features import FeatureGates
    from kjobs.api.validation import _validate_pod_failure_policy

    spec = default_job(job).get("spec")  # as the API server validates: defaults first (a condition's status)
    if not isinstance(spec, dict) or spec.get("podFailurePolicy") is None:
        return []
    policy = spec["podFailurePolicy"]
    if not isinstance(policy, dict):
        return [FieldError("spec.podFailurePolicy", ErrorType.FieldValueInvalid, "must be of type object", policy)]
    errs: list[FieldError] = []
    _validate_pod_failure_policy(spec, policy, "spec.podFailurePolicy", errs, FeatureGates.from_map({"AllAlpha": True}))
    template = spec.get("template")
    template_spec = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(template_spec, dict) or not template_spec.get("containers"):
        errs = [e for e in errs if not e.field.endswith(".containerName")]
    return errs


@click.group("explain", invoke_without_command=True)
@click.option(
    "--job",
    "job_path",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Job manifest (YAML or JSON; - for stdin).",
)
@click.option(
    "--pod",
    "pod_path",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Failed pod, e.g. from `kubectl get pod -o yaml`.",
)
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def explain_command(ctx: click.Context, job_path: str | None, pod_path: str | None, output: str) -> None:
    """Say what a Job's podFailurePolicy does with a failed pod, and why.

    \b
    kjobs explain --job JOB.yaml --pod POD.yaml   one pod, from manifests
    kjobs explain job NAME [-n NAMESPACE]        every failed pod of a Job on a cluster
    """
    if ctx.invoked_subcommand is not None:
        if job_path or pod_path:
            raise click.UsageError("--job/--pod explain manifests; `explain job NAME` reads the cluster: use one")
        return
    if not job_path or not pod_path:
        raise click.UsageError("give --job and --pod, or use `kjobs explain job NAME`")
    try:
        job = _single(job_path, "Job")
        pods = _pods(pod_path)
    except ManifestError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    errors = _policy_errors(job)
    if errors:
        name = (job.get("metadata") or {}).get("name") or ""
        described = f'Job "{name}"'
        click.echo(f"error: {job_path}: {kubectl_invalid(described, errors)}", err=True)
        sys.exit(2)
    results = [explain(job, pod) for pod in pods]
    if output == "json":
        body = [r.to_dict() for r in results]
        click.echo(orjson.dumps(body[0] if len(body) == 1 else body, option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo("\n\n".join(r.render() for r in results))


@explain_command.command("job")
@click.argument("name")
@click.option("-n", "--namespace", default=None, help="Namespace (default: the kubeconfig context's).")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None, help="Kubeconfig (default: $KUBECONFIG).")
@click.option("--context", default=None, help="Kubeconfig context (default: current-context).")
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True)
def explain_job_command(
    name: str, namespace: str | None, kubeconfig: str | None, context: str | None, output: str
) -> None:
    """List a Job's failed pods: exit codes or conditions, the rule that matched, its action and effect."""
    import asyncio  # only this subcommand runs a loop: `kjobs explain --job --pod` starts without asyncio

    from kjobs.client.kubeconfig import KubeconfigError, load

    try:
        connection = load(kubeconfig, context=context)
    except KubeconfigError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    try:
        failures = asyncio.run(_explain_job(connection, namespace or connection.namespace, name))
    except ApiError as exc:
        click.echo(f"Error from server ({exc.reason}): {exc.message}", err=True)
        sys.exit(1)
    except OSError as exc:  # aiohttp's connection errors are OSErrors
        click.echo(f"error: cannot reach {connection.server}: {exc}", err=True)
        sys.exit(1)
    if output == "json":
        click.echo(orjson.dumps(failures.to_dict(), option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(failures.render())


async def _explain_job(connection: Any, namespace: str, name: str) -> JobFailures:
    from kjobs.client.http import HttpClient

    client = HttpClient(connection, user_agent="kjobs-explain")
    try:
        return await explain_job(client, namespace, name)
    finally:
        await client.close()
