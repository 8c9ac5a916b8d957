"""`kjobs validate FILE...`: validate manifests exactly as a Kubernetes API server would on create.

Unknown fields are handled as `kubectl apply --validate=...` has the server handle them (`kjobs.validate.decode`):
strict by default, the same message the API server of `kjobs up` returns.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click
import orjson

from kjobs.api import features as fg
from kjobs.api.errors import ApiError, FieldError
from kjobs.api.features import DEFAULT, KNOWN, FeatureGates
from kjobs.api.manifest import ManifestError, load_manifests
from kjobs.api.types import Obj
from kjobs.cli.features import feature_gates_option
from kjobs.validate import FIELD_VALIDATION, decode, invalid_status, mapping_error, metadata_of, validate_manifest

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


def _invalid(obj: Obj, features: FeatureGates) -> set[str] | None:
    """The validation errors of `obj` decoded under `features` (None when strict decoding refuses it)."""
    try:
        decoded, _ = decode(obj, FIELD_VALIDATION["strict"], features)
    except ApiError:
        return None
    return {str(e) for e in validate_manifest(decoded, features=features)}


def gated_field_hint(obj: Obj, features: FeatureGates) -> str | None:
    """When `obj` is refused for fields that a feature gate now off would serve (strict decoding), or for what
    such a gate would allow (validation: a podFailurePolicy under `restartPolicy: OnFailure`), a line naming
    the gates to turn on. Kubernetes' message alone ("unknown field", `only "Never" is supported`) does not say
    that a gate changes the answer; the gates are named together, so that one try gets past both refusals."""
    refused = _unknown_fields(obj, features)
    gates = []
    for name, spec in KNOWN.items():
        if refused is None or spec.locked or features.enabled(name):
            continue
        on = FeatureGates.from_map({**features.overrides, name: True})
        if _unknown_fields(obj, on) != refused:
            gates.append(name)
    if refused is not None and not gates:
        return None
    served = FeatureGates.from_map({**features.overrides, **dict.fromkeys(gates, True)})
    errors = _invalid(obj, served)
    allowed: list[str] = []
    for name, spec in KNOWN.items():
        if not errors or spec.locked or served.enabled(name):
            continue
        more = _invalid(obj, FeatureGates.from_map({**served.overrides, name: True}))
        # A gate that takes errors away without adding as many: the ones left then name what is missing.
        if more is not None and errors - more and len(more - errors) <= len(errors - more):
            allowed.append(name)
    if not gates and not allowed:
        return _restart_limit_hint(obj, errors, served)
    setting = ",".join(f"{name}=true" for name in gates + allowed)
    if gates:
        return f"hint: feature gates that are off serve some of these fields: try --feature-gates {setting}"
    return f"hint: feature gates that are off would change this answer: try --feature-gates {setting}"


ONLY_NEVER = 'only "Never" is supported when podFailurePolicy is specified'
"""Kubernetes' refusal of a podFailurePolicy beside `restartPolicy: OnFailure` (pkg/apis/batch/validation)."""


def _restart_limit_hint(obj: Obj, errors: set[str] | None, features: FeatureGates) -> str | None:
    """Kubernetes' refusal of a podFailurePolicy under OnFailure, for a manifest without `maxRestartTimes`: no gate
    alone lifts it, so the generic hint is silent, and with `JobPodFailurePolicyOnFailure` on the message (kept as
    Kubernetes has it, for Kubernetes manifests read the same with every gate on) does not say what is missing."""
    if not errors or not any(ONLY_NEVER in e for e in errors):
        return None
    spec = obj.get("spec")
    template = spec.get("template") if isinstance(spec, dict) else None
    pod_spec = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(pod_spec, dict) or "maxRestartTimes" in pod_spec:
        return None
    off = [g for g in (fg.JOB_POD_FAILURE_POLICY_ON_FAILURE, fg.JOB_POD_RESTART_LIMIT) if not features.enabled(g)]
    gates = (
        f" (feature gates {' and '.join(off)}, which are off)"
        if len(off) == 2
        else (f" (feature gate {off[0]}, which is off)" if off else "")
    )
    return (
        'hint: kjobs allows a podFailurePolicy with restartPolicy "OnFailure" together with '
        f"spec.template.spec.maxRestartTimes{gates}, so that the Job counts failed pods, not container restarts"
    )


FILE_EXTENSIONS = (".json", ".yaml", ".yml")
"""The files `kubectl apply -f DIR` reads from a directory (cli-runtime pkg/resource/builder.go)."""


def expand_paths(paths: tuple[str, ...]) -> list[str]:
    """Each argument, a directory standing for its `.json`, `.yaml` and `.yml` files in name order (not its
    subdirectories), as `kubectl apply -f DIR` reads it; a directory with none is kubectl's error."""
    expanded: list[str] = []
    for path in paths:
        folder = Path(path)
        if path == "-" or not folder.is_dir():
            expanded.append(path)
            continue
        files = sorted(str(f) for f in folder.iterdir() if f.suffix in FILE_EXTENSIONS and not f.is_dir())
        if not files:
            extensions = " ".join(FILE_EXTENSIONS)
            raise ManifestError(f"error reading [{path}]: recognized file extensions are [{extensions}]")
        expanded.extend(files)
    return expanded


def _describe(obj: Obj) -> str:
    meta = metadata_of(obj)
    return f'{obj.get("kind") or "object"} "{meta.get("name") or meta.get("generateName") or ""}"'


def kubectl_invalid(described: str, errors: Sequence[FieldError]) -> str:
    """What kubectl prints for a 422 Invalid (`described`: `Job "pi"`), without the final newline: each cause once
    (`statusCausesToAggrError` drops a repeated `field: message`, such as the two pod template labels a long Job
    name breaks), one on the same line, several as `* ` lines after the prefix, which keeps its trailing space
    (`MultilineError`, staging/src/k8s.io/kubectl/pkg/cmd/util/helpers.go)."""
    causes = list(dict.fromkeys(str(e) for e in errors))
    prefix = f"The {described} is invalid: "
    if len(causes) == 1:
        return prefix + causes[0]
    return "\n".join([prefix, *(f"* {c}" for c in causes)])


def _not_sent(message: str) -> Obj:
    """The Status for an object kubectl would not send, carrying kubectl's message: for a kind not served, the 404
    an API server answers at a path it does not serve (apiserver pkg/endpoints/handlers/responsewriters
    `NotFound`); for kubectl's own validation, a 400."""
    served = message.startswith("resource mapping not found")
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "NotFound" if served else "BadRequest",
        "details": {},
        "code": 404 if served else 400,
    }


@click.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True)
@validate_option
@feature_gates_option
def validate_command(files: tuple[str, ...], output: str, field_validation: str, features: FeatureGates) -> None:
    """Validate manifests of every kind kjobs up stores (Job, CronJob, Pod, ConfigMap, Secret, Service,
    Endpoints, EndpointSlice, RBAC, ...; a directory: its .yaml, .yml and .json files); exit 1 if any object is
    invalid, 2 if a file cannot be read or is empty."""
    statuses: list[Obj] = []
    any_invalid = False
    try:
        paths = expand_paths(files)
    except ManifestError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    for path in paths:
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
            unmapped = mapping_error(original, path, field_validation)
            if unmapped is not None:
                if unmapped.startswith("unable to decode"):  # no kind: the file cannot be read as objects
                    click.echo(f"error: {unmapped}", err=True)
                    sys.exit(2)
                # kubectl's own refusal: nothing reaches an API server, so there is no Status to print.
                any_invalid = True
                statuses.append(_not_sent(unmapped))
                if output == "text":
                    click.echo(unmapped)
                continue
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
                    click.echo(f"{path}: {kubectl_invalid(_describe(obj), errors)}")
                    hint = gated_field_hint(original, features)
                    if hint is not None:
                        click.echo(hint, err=True)
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
