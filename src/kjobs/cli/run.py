"""`kjobs run JOB.yaml`: run a Job on an embedded cluster whose pods are local processes.

Exit status: 0 when the Job completed, 1 when it failed, 2 on bad input (missing file, invalid YAML, invalid Job,
unknown fields unless `--validate=warn|ignore`); stopped by a signal, 128 + its number as a shell reports it (130
Ctrl-C, 143 SIGTERM, 129 SIGHUP) after stopping the cluster and its pods; 141 (SIGPIPE's) when its output's reader
went away (`kjobs run job.yaml | head -1`), the run stopped the same way.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

import click

from kjobs.api.features import FeatureGates
from kjobs.api.manifest import ManifestError, load_manifests
from kjobs.api.types import Obj
from kjobs.cli.features import feature_gates_option
from kjobs.cli.params import FloatRange
from kjobs.cli.validate import decode_or_status, gated_field_hint, kubectl_invalid, validate_option
from kjobs.disrupt import Disruption, DisruptionError, check, parse


def _parse_disruptions(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> tuple[Disruption, ...]:
    try:
        return tuple(parse(value) for value in values)
    except DisruptionError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command("run")
@click.argument("manifest", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--backoff",
    type=FloatRange(min=0),
    default=10.0,
    show_default=True,
    help="Base pod-failure back-off in seconds (Kubernetes: 10 s, doubling to 10 min).",
)
@click.option("--nodes", type=click.IntRange(1, 64), default=1, show_default=True, help="Local node agents.")
@click.option("--logs", "show_logs", is_flag=True, help="Print each pod's log when it finishes.")
@click.option(
    "--serve",
    "serve_port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Also serve the Kubernetes API on 127.0.0.1:PORT (0: any free port) so kubectl can watch.",
)
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="With --serve: where to write the kubeconfig [default: a temporary file].",
)
@click.option(
    "--keep-serving",
    is_flag=True,
    help="With --serve: keep serving the API after the Job ended, until Ctrl-C.",
)
@click.option(
    "--disrupt",
    "disruptions",
    multiple=True,
    metavar="KIND@TIME",
    callback=_parse_disruptions,
    help="Disrupt the running Job TIME after it is created (repeatable; a bare KIND: as soon as a pod runs); "
    "KIND: drain, evict, taint, preempt, node-shutdown. Example: --disrupt drain@1s.",
)
@click.option("--plain", is_flag=True, help="Plain progress lines even on a terminal.")
@click.option("--timeout", type=FloatRange(min=0), default=None, help="Give up (exit 1) after this many seconds.")
@validate_option
@feature_gates_option
def run_command(
    manifest: str,
    backoff: float,
    nodes: int,
    show_logs: bool,
    serve_port: int | None,
    kubeconfig: str | None,
    plain: bool,
    timeout: float | None,
    field_validation: str,
    keep_serving: bool,
    disruptions: tuple[Disruption, ...],
    features: FeatureGates,
) -> None:
    """Run a Job manifest on an embedded cluster and explain every failure decision."""
    if keep_serving and serve_port is None:
        raise click.UsageError("--keep-serving needs --serve PORT")
    job, configs = _load_job(manifest, field_validation, features)
    try:
        check(list(disruptions), job, nodes)
    except DisruptionError as exc:
        raise click.BadParameter(str(exc), param_hint="--disrupt") from None
    # A suspended Job, or one of parallelism 0, starts no pod until an API client changes it (the Job controller's
    # wantActive is min(parallelism, remaining completions)); without --serve the run would wait in silence.
    spec = job.get("spec") or {}
    idle = [
        (
            "is suspended (spec.suspend: true)",
            "it is resumed",
            '{"spec":{"suspend":false}}',
            spec.get("suspend") is True,
        ),
        (
            "has spec.parallelism: 0",
            "parallelism is raised",
            '{"spec":{"parallelism":1}}',
            spec.get("parallelism") == 0,
        ),
    ]
    name = (job.get("metadata") or {}).get("name") or "NAME"
    for what, until, patch, applies in idle:
        if applies and serve_port is None:
            click.echo(
                f"warning: the Job {what}: it starts no pod until {until}, which needs --serve PORT and "
                f"`kubectl patch job {name} -p '{patch}'`; Ctrl-C or --timeout ends the run",
                err=True,
            )
    managed = managed_elsewhere(job)
    if managed is not None:
        owner = (job.get("spec") or {}).get("managedBy")
        click.echo(
            f"warning: {managed} (with --serve PORT: `kjobs controller --kubeconfig FILE --managed-by {owner}`); "
            "Ctrl-C or --timeout ends the run",
            err=True,
        )
    for line in template_warnings(job):
        click.echo(f"warning: {line}", err=True)
    from kjobs.run import BROKEN_PIPE, RunOptions, run

    options = RunOptions(
        backoff=backoff,
        nodes=nodes,
        show_logs=show_logs,
        serve_port=serve_port,
        kubeconfig=kubeconfig,
        live=not plain and sys.stdout.isatty(),
        timeout=timeout,
        disruptions=disruptions,
        keep_serving=keep_serving,
        features=features,
        configs=configs,
    )
    with contextlib.suppress(KeyboardInterrupt):
        code = run(job, options)
        if code == BROKEN_PIPE:
            _drop_stdout()
        sys.exit(code)
    sys.exit(130)


def _drop_stdout() -> None:
    """Point stdout at /dev/null once its reader is gone, so that the interpreter's last flush of what is left
    in its buffer does not print an `Exception ignored ... BrokenPipeError` (as Python's documentation of
    SIGPIPE advises)."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def template_warnings(job: Obj) -> list[str]:
    """What the node agent will say in a Warning event on each of the Job's pods — volumes it does not mount,
    securityContext fields it does not enforce, probes and hooks it does not run — said once before the run,
    since `kjobs run` shows no Events and the pods behave otherwise than on a cluster."""
    from kjobs.node.handlers import not_run, not_run_message
    from kjobs.node.security import unenforced, unenforced_message
    from kjobs.node.volumes import unmounted, unmounted_message
    from kjobs.node.volumesetup import mounting_containers, unsupported, unsupported_message

    template = (job.get("spec") or {}).get("template") or {}
    pod = {"metadata": template.get("metadata") or {}, "spec": template.get("spec") or {}}
    volumes = (unmounted, unmounted_message)
    if mounting_containers(pod):
        from kjobs.node.process_runtime import mounting_enabled

        if mounting_enabled():  # the node agents mount what they can (`kjobs.node.mountns`)
            volumes = (unsupported, unsupported_message)
    found = [(unenforced, unenforced_message), volumes, (not_run, not_run_message)]
    return [message(what) for find, message in found if (what := find(pod))]


def _load_job(
    path: str, field_validation: str, features: FeatureGates, command: str = "run"
) -> tuple[Obj, tuple[Obj, ...]]:
    """The manifest's one Job, and the Namespaces, ConfigMaps, Secrets, ServiceAccounts and RBAC objects beside it
    (created before it), each decoded and validated as the API server would (a Namespace by the API server as it is
    created); any other kind is refused, naming its document."""
    from kjobs.run import manifest_accounts, missing_service_account
    from kjobs.validate import CONFIG_KINDS, mapping_error, validate_manifest

    try:
        objects = load_manifests(path)
    except ManifestError as exc:
        _fail(str(exc))
    accepted = ("Job", "Namespace", *CONFIG_KINDS)
    others = [(n, o) for n, o in enumerate(objects, start=1) if o.get("kind") not in accepted]
    if others:
        number, obj = others[0]
        # An object without `kind` is named as kubectl names it, not as Python's None.
        kind = str(obj.get("kind") or "an object without kind")
        cron_hint = ""
        if kind == "CronJob":  # it runs Jobs on a schedule, which needs a cluster that stays up
            cron_hint = f"\nhint: a CronJob runs on a cluster: start `kjobs up`, then `kubectl apply -f {path}`"
        _fail(
            f"{path}: document {number} is {kind}{_named(obj)}: kjobs {command} takes one Job, and the ConfigMaps and "
            "Secrets its pods read, the ServiceAccounts they run as, their RBAC roles and bindings, the "
            "PersistentVolumeClaims they mount, with their PersistentVolumes and StorageClasses, the Services that "
            "name them (and their Namespaces)" + cron_hint
        )
    jobs = [o for o in objects if o.get("kind") == "Job"]
    if len(jobs) != 1:
        kinds = ", ".join(str(o.get("kind")) for o in objects) or "nothing"
        _fail(f"{path}: expected exactly one Job, found {kinds}")
    decoded: list[Obj] = []
    for original in objects:
        if original.get("kind") == "Namespace":  # kjobs validates no Namespace: the API server does on create
            decoded.append(original)
            continue
        unmapped = mapping_error(original, path, field_validation)
        if unmapped is not None:  # `apiVersion: v1` on a Job: what kubectl says, as it never sends it
            _fail(unmapped)
        obj, rejected = decode_or_status(original, field_validation, features)
        if rejected is not None:
            hint = gated_field_hint(original, features)
            _fail(f"{path}: {rejected['message']}" + (f"\n{hint}" if hint else ""))
        errors = validate_manifest(obj, features=features)
        if errors:
            name = (obj.get("metadata") or {}).get("name") or ""
            hint = gated_field_hint(original, features)
            described = f'{obj.get("kind")} "{name}"'
            message = f"{path}: {kubectl_invalid(described, errors)}"
            _fail("\n".join([message, *([hint] if hint else [])]))
        decoded.append(obj)
    job = next(o for o in decoded if o.get("kind") == "Job")
    configs = tuple(o for o in decoded if o.get("kind") != "Job")
    namespace = str((job.get("metadata") or {}).get("namespace") or "default")
    refused = missing_service_account(job, namespace, manifest_accounts(job, configs))
    if refused is not None:
        _fail(f"{path}: {refused.message}")
    return job, configs


def managed_elsewhere(job: Obj) -> str | None:
    """What to tell a user whose Job names another controller in `spec.managedBy`: kjobs' Job controller, as
    kube-controller-manager's, leaves such a Job alone (pkg/controller/job/job_controller.go skips it in
    `syncJob`), so nothing creates its pods and the Job never changes unless that controller runs."""
    from kjobs.job.context import external_controller

    owner = external_controller(job)
    if owner is None:
        return None
    return (
        f"the Job is managed by {owner} (spec.managedBy): the built-in Job controller leaves it alone, as "
        "kube-controller-manager's does, so no pod starts unless that controller reconciles it"
    )


def _named(obj: Obj) -> str:
    name = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), dict) else None
    return f' "{name}"' if name else ""


def _fail(message: str) -> Any:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)
