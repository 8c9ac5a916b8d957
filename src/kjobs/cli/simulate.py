"""`kjobs simulate JOB.yaml [--model MODEL.yaml] [--seed S] [--runs N] [--compare OTHER.yaml]`: run a Job on the
embedded cluster in virtual time.

The same control plane as `kjobs run` (`kjobs.simulate.session`), with the simulated container runtime and a clock
that jumps to the next due timer, so hours of back-off and run time take well under a second. Without a model
every container succeeds at once; the model format is docs/simulate-model.md.

`--runs N` simulates seeds S..S+N-1 and prints the distribution; `--compare OTHER.yaml` runs a second Job on the
same seeds (the same failure trace) and prints both side by side (`kjobs.simulate.runs`). A progress bar shows on
a terminal for more than one run (never with `-o json`). `--report out.html` also writes a self-contained HTML
report with plots (`kjobs.simulate.report`): of every run with `--runs`, of the first Job with `--compare`.

Exit status: 0 when the Job completed (with `--runs`/`--compare`: when the report was made), 1 when it failed or
did not finish within `--time-limit`, 2 on bad input (Job manifest or model file) or a report that cannot be
written.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import click
import orjson

from kjobs.api.features import FeatureGates
from kjobs.api.types import Obj
from kjobs.cli.features import feature_gates_option
from kjobs.cli.params import FloatRange
from kjobs.cli.run import _load_job, managed_elsewhere
from kjobs.cli.validate import validate_option

if TYPE_CHECKING:
    from kjobs.simulate import SimulationOptions, SimulationResult


def _duration(_ctx: click.Context, _param: click.Parameter, value: str) -> float:
    from kjobs.simulate.model import ModelError, parse_duration

    try:
        seconds = parse_duration(value, "--time-limit")
    except ModelError as exc:
        raise click.BadParameter(str(exc)) from None
    if seconds <= 0:  # the Job would be Unfinished before it was created
        raise click.BadParameter(f"--time-limit: must be more than 0, got {value!r}")
    return seconds


@click.command("simulate")
@click.argument("manifest", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--model", "model_path", type=click.Path(dir_okay=False), default=None, help="Failure model (YAML).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the model's random draws.")
@click.option(
    "--nodes",
    type=click.IntRange(1, 10_000),
    default=None,
    help="Simulated nodes [default: enough for the Job's parallelism, 110 pods each].",
)
@click.option(
    "--backoff", type=FloatRange(min=0), default=10.0, show_default=True, help="Base pod-failure back-off (s)."
)
@click.option(
    "--time-limit",
    type=str,
    default="720h",
    show_default=True,
    callback=_duration,
    help="Give up after this much virtual time (e.g. 90m, 24h).",
)
@click.option("--runs", type=click.IntRange(1, 100_000), default=1, show_default=True, help="Runs, seeds S..S+N-1.")
@click.option(
    "--compare",
    "compare_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="A second Job (another policy) to run on the same failure trace, side by side.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=None,
    help="Processes to spread --runs over [default: the CPUs this process may use].",
)
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Also write a self-contained HTML report with plots (docs: kjobs.simulate.report).",
)
@validate_option
@feature_gates_option
def simulate_command(
    manifest: str,
    model_path: str | None,
    seed: int,
    nodes: int | None,
    backoff: float,
    time_limit: float,
    runs: int,
    compare_path: str | None,
    workers: int | None,
    output: str,
    report_path: str | None,
    field_validation: str,
    features: FeatureGates,
) -> None:
    """Simulate a Job in virtual time and report its outcome, time to finish, pods and failures by action."""
    from kjobs.cluster import tune_gc
    from kjobs.simulate import Model, ModelError, SimulationOptions, load_model, simulate
    from kjobs.simulate.disruptions import check, unused_overrides

    tune_gc()  # a control plane in one process, as `kjobs run` and `kjobs up` tune it

    job, configs = _load_job(manifest, field_validation, features, "simulate")
    other, other_configs = (
        _load_job(compare_path, field_validation, features, "simulate") if compare_path else (None, ())
    )
    for each in (job, other):
        managed = managed_elsewhere(each) if each is not None else None
        if managed is not None:  # it never starts: reported as at --time-limit, at once
            click.echo(f"warning: {managed}", err=True)
    try:
        model = load_model(model_path) if model_path else Model()
    except ModelError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    for line in unused_overrides(model, [each for each in (job, other) if each is not None]):
        click.echo(f"warning: {model_path}: {line}", err=True)
    try:  # what the model says of these Jobs: named with the model's file, as its parse errors are
        for each in (job, other):
            if each is not None:
                check(model, each)
    except ModelError as exc:
        click.echo(f"error: {model_path}: {exc}", err=True)
        sys.exit(2)
    options = SimulationOptions(
        model=model,
        seed=seed,
        nodes=nodes,
        time_limit=time_limit,
        pod_failure_backoff=backoff,
        features=features,
        configs=_union(configs, other_configs),
    )
    if runs > 1 or other is not None:
        _many(job, other, options, runs, output, report_path, workers or _usable_cpus())
        return
    result = simulate(job, options)
    _report(report_path, [result])
    if output == "json":
        click.echo(orjson.dumps(result.to_dict(), option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(render(result.to_dict()))
    sys.exit(0 if result.outcome == "Complete" else 1)


def _report(path: str | None, results: list[SimulationResult], compared: list[SimulationResult] | None = None) -> None:
    """Write the `--report` page of `results` (and of the `--compare` Job's), if one was asked for; exit 2 when it
    cannot be written."""
    if not path:
        return
    from kjobs.simulate.report import write_report

    try:
        write_report(path, results, compared=compared or ())
    except OSError as exc:
        click.echo(f"error: cannot write the report: {exc}", err=True)
        sys.exit(2)


def _union(configs: tuple[Obj, ...], more: tuple[Obj, ...]) -> tuple[Obj, ...]:
    """The ConfigMaps and Secrets of both manifests, one of each kind and name (the first manifest's wins)."""

    def identity(config: Obj) -> tuple[Any, ...]:
        meta = config.get("metadata") or {}
        return config.get("kind"), meta.get("namespace"), meta.get("name")

    seen = {identity(c) for c in configs}
    return configs + tuple(c for c in more if identity(c) not in seen)


def _usable_cpus() -> int:
    """The CPUs this process may run on (its affinity), as `nproc` counts them."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _many(
    job: Obj,
    other: Obj | None,
    options: SimulationOptions,
    runs: int,
    output: str,
    report_path: str | None,
    workers: int,
) -> None:
    """`--runs` and `--compare`: the distribution of each Job over the same seeds, and the report of both."""
    from rich.progress import Progress

    from kjobs.simulate.runs import (
        distribution,
        render_comparison,
        render_distribution,
        render_run_comparison,
        simulate_runs,
    )

    jobs = [job] if other is None else [job, other]
    show = output != "json" and sys.stderr.isatty() and runs * len(jobs) > 1
    with Progress(transient=True, disable=not show) as progress:
        task = progress.add_task("simulating", total=runs * len(jobs))
        results = [simulate_runs(each, options, runs, lambda: progress.advance(task), workers=workers) for each in jobs]
    summaries = [distribution(each, options.seed) for each in results]
    _report(report_path, results[0], results[1] if other is not None else None)
    if output == "json":
        body: object = summaries[0] if other is None else {"runs": summaries}
        click.echo(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode())
    elif other is None:
        click.echo(render_distribution(summaries[0]))
    elif runs == 1:
        one = [{**each[0].to_dict(), "seed": options.seed} for each in results]
        click.echo(render_run_comparison(one[0], one[1]))
    else:
        click.echo(render_comparison(summaries[0], summaries[1]))


def render(summary: dict[str, object]) -> str:
    """The text report of one simulated run."""
    lines = [f"Job {summary['job']}: {summary['outcome']}"]
    if summary["reason"]:
        lines.append(f"  reason: {summary['reason']}")
    if summary["message"]:
        lines.append(f"  message: {summary['message']}")
    seconds = float(summary["virtualSeconds"])  # type: ignore[arg-type]
    lines.append(f"  virtual time: {_human(seconds)} ({seconds:g} s; wall {summary['wallSeconds']} s)")
    if "settledAfter" in summary:  # stopped early: the time limit would have found the same
        settled = float(summary["settledAfter"])  # type: ignore[arg-type]
        lines.append(f"  nothing left to happen after {_human(settled)}: {summary['settled']}")
    lines.append(f"  pods created: {summary['podsCreated']}")
    counts = f"  succeeded: {summary['succeeded']}  failed: {summary['failed']}"
    for key in ("completedIndexes", "failedIndexes"):
        if summary[key]:
            counts += f"  {key}: {summary[key]}"
    lines.append(counts)
    actions = summary["failuresByAction"]
    assert isinstance(actions, dict)
    by_action = ", ".join(f"{action} {count}" for action, count in actions.items()) or "none"
    lines.append(f"  failures by action: {by_action}")
    reasons = summary.get("failuresByReason") or {}
    assert isinstance(reasons, dict)
    from kjobs.simulate.session import reason_label  # imported by the simulation that made `summary`

    by_reason = ", ".join(f"{reason_label(k)} {v}" for k, v in reasons.items()) or "none"
    lines.append(f"  failures by reason: {by_reason}")
    if summary.get("containerRestarts"):  # restarts in place, no pod failure
        lines.append(f"  container restarts: {summary['containerRestarts']} {restarts_label(summary)}")
    lines.append(f"  wasted pod-seconds: {summary.get('wastedPodSeconds', 0):g}")
    retries = summary.get("retriesPerIndex") or {}
    assert isinstance(retries, dict)
    if retries:
        lines.append(f"  retries per index: {', '.join(f'{i}: {n}' for i, n in retries.items())}")
    disruptions = summary.get("disruptions") or {}
    assert isinstance(disruptions, dict)
    if disruptions:
        lines.append(f"  disruptions: {', '.join(f'{k} {v}' for k, v in disruptions.items())}")
    return "\n".join(lines)


def restarts_label(summary: dict[str, object]) -> str:
    """What the container restarts of a run (or of `--runs`) are: under restartPolicy OnFailure they count
    toward backoffLimit (unless the pod has maxRestartTimes); a Never pod's (restartPolicyRules, sidecars) not."""
    if summary.get("restartPolicy", "OnFailure") == "OnFailure":
        return "(in place)"
    return "(in place; restartPolicy Never: not counted toward backoffLimit)"


def _human(seconds: float) -> str:
    """`1h 2m 3s` (Kubernetes' short duration style, to the second)."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes else "", f"{secs}s" if secs or not whole else ""]
    return " ".join(p for p in parts if p)
