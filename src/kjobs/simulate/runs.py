"""`kjobs simulate --runs N` and `--compare`: a Job simulated with seeds S..S+N-1, and what the runs came to.

One run's summary is `SimulationResult.to_dict()`; `distribution` folds N of them into the success probability,
nearest-rank percentiles (p50/p90/p99) of virtual time to finish, pods created and wasted pod-seconds, and the
mean failures per run by action and by reason. `--compare` simulates two Jobs with the same seeds: their
containers' draws are keyed by completion index and attempt, and the disruption schedules by seed
(`kjobs.simulate.model`, `kjobs.simulate.disruptions`), so both meet the same failure trace.
"""

from __future__ import annotations

import math
import multiprocessing
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from typing import Any

from kjobs.api.types import Obj
from kjobs.simulate.session import SimulationOptions, SimulationResult, reason_label, simulate

PERCENTILES = (50, 90, 99)


def simulate_runs(
    job: Obj,
    options: SimulationOptions,
    runs: int,
    progress: Callable[[], None] | None = None,
    *,
    workers: int = 1,
) -> list[SimulationResult]:
    """`runs` simulations of `job` with seeds `options.seed` .. `options.seed + runs - 1`, in seed order.

    With `workers` > 1, once a run has taken `WORKER_WORTH` seconds or more, the runs left are spread over that
    many worker processes (a run is CPU-bound Python, so threads would not help). Each run is the same function
    of its seed wherever it runs, so the results are those of the runs made one after another; a worker's
    result comes back without the final pod objects of its view (`RunView.pods`), which no report reads."""
    seeds = [options.seed + number for number in range(runs)]
    results: list[SimulationResult] = []
    for seed in seeds:
        results.append(simulate(job, replace(options, seed=seed)))
        if progress is not None:
            progress()
        rest = seeds[len(results) :]
        if workers > 1 and len(rest) > 1 and results[-1].wall_seconds >= WORKER_WORTH:
            return results + _in_workers(job, options, rest, progress, min(workers, len(rest)))
    return results


WORKER_WORTH = 0.25
"""Wall seconds a run must take for the rest to go to worker processes: a worker starts in about half a second
(a fresh interpreter importing kjobs), which shorter runs would not pay back."""


def _in_workers(
    job: Obj, options: SimulationOptions, seeds: list[int], progress: Callable[[], None] | None, workers: int
) -> list[SimulationResult]:
    # `spawn`: a fresh interpreter per worker, whatever threads this process has (a progress bar runs one).
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = [pool.submit(_run_in_worker, job, replace(options, seed=seed)) for seed in seeds]
        if progress is not None:
            for _ in as_completed(futures):
                progress()
        return [future.result() for future in futures]


def _run_in_worker(job: Obj, options: SimulationOptions) -> SimulationResult:
    """One run in a worker process, made light to send back: the view keeps its decisions and Job, not its pods."""
    result = simulate(job, options)
    result.view.forget_pods()
    return result


def percentile(values: Sequence[float], p: float) -> float:
    """The nearest-rank `p`th percentile of `values` (0 for none)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def _spread(values: Sequence[float]) -> dict[str, float]:
    spread = {f"p{p}": round(percentile(values, p), 3) for p in PERCENTILES}
    spread["mean"] = round(sum(values) / len(values), 3) if values else 0.0
    return spread


def _mean_counts(counts: Sequence[dict[str, int]], runs: int) -> dict[str, float]:
    total: Counter[str] = Counter()
    for each in counts:
        total.update(each)
    return {key: round(total[key] / runs, 3) for key in sorted(total)}


def distribution(results: Sequence[SimulationResult], seed: int) -> dict[str, Any]:
    """What N runs came to (`kjobs simulate --runs N -o json`)."""
    runs = len(results)
    outcomes = Counter(r.outcome for r in results)
    finished = [r.virtual_seconds for r in results if r.outcome != "Unfinished"]
    return {
        "job": results[0].to_dict()["job"] if results else "",
        "runs": runs,
        "seeds": [seed, seed + runs - 1],
        "successProbability": round(outcomes["Complete"] / runs, 4) if runs else 0.0,
        "outcomes": dict(sorted(outcomes.items())),
        "reasons": dict(sorted(Counter(r.reason for r in results if r.reason).items())),
        "virtualSeconds": _spread(finished),
        "podsCreated": _spread([r.pods_created for r in results]),
        "wastedPodSeconds": _spread([r.wasted_pod_seconds for r in results]),
        "retriesPerRun": _spread([sum(r.retries_per_index.values()) for r in results]),
        "containerRestartsPerRun": _spread([r.container_restarts for r in results]),
        "restartPolicy": results[0].restart_policy if results else "Never",
        "indexed": bool(results) and (results[0].job.get("spec") or {}).get("completionMode") == "Indexed",
        "failuresByActionPerRun": _mean_counts([r.failures_by_action for r in results], runs),
        "failuresByReasonPerRun": _mean_counts([r.failures_by_reason for r in results], runs),
        "disruptionsPerRun": _mean_counts([r.disruptions for r in results], runs),
        "wallSeconds": round(sum(r.wall_seconds for r in results), 3),
    }


def _not_counted(summary: dict[str, Any]) -> str:
    """Said after a count of restarts that no backoffLimit counts (a Never pod's: restartPolicyRules, sidecars)."""
    return "" if summary.get("restartPolicy", "OnFailure") == "OnFailure" else " (Never: not toward backoffLimit)"


def _restarted(summary: dict[str, Any]) -> bool:
    return bool(summary.get("containerRestartsPerRun", {}).get("mean"))


def distribution_rows(summary: dict[str, Any], *, restarts: bool | None = None) -> list[tuple[str, str]]:
    """(label, value) lines of a `distribution`, for one column or two side by side; the container restarts row
    when `restarts` (by default: when the Job's containers restarted)."""

    def spread(key: str) -> str:
        s = summary[key]
        return f"p50 {s['p50']:g}  p90 {s['p90']:g}  p99 {s['p99']:g}  mean {s['mean']:g}"

    def counts(key: str) -> str:
        return ", ".join(f"{reason_label(k)} {v:g}" for k, v in summary[key].items()) or "none"

    outcomes = ", ".join(f"{k} {v}" for k, v in summary["outcomes"].items())
    return [
        ("runs", f"{summary['runs']} (seeds {summary['seeds'][0]}..{summary['seeds'][1]})"),
        ("success probability", f"{summary['successProbability']:.1%}"),
        ("outcomes", outcomes),
        ("reasons", ", ".join(f"{k} {v}" for k, v in summary["reasons"].items()) or "none"),
        # Finished runs only: with none, zeros would read as "finished at once".
        (
            "virtual time (s)",
            spread("virtualSeconds") if set(summary["outcomes"]) - {"Unfinished"} else "none finished",
        ),
        ("pods created", spread("podsCreated")),
        ("wasted pod-seconds", spread("wastedPodSeconds")),
        # Retries are pods created beyond the first of a completion index: a NonIndexed Job has no index.
        (
            "retries per run",
            spread("retriesPerRun")
            if summary.get("indexed", True)
            else "not counted: a NonIndexed Job (see pods created)",
        ),
        *(
            [("container restarts", spread("containerRestartsPerRun") + _not_counted(summary))]
            if (_restarted(summary) if restarts is None else restarts)
            else []
        ),
        ("failures by action / run", counts("failuresByActionPerRun")),
        ("failures by reason / run", counts("failuresByReasonPerRun")),
        ("disruptions / run", counts("disruptionsPerRun")),
    ]


def render_distribution(summary: dict[str, Any]) -> str:
    """The text report of N runs."""
    rows = distribution_rows(summary)
    width = max(len(label) for label, _ in rows)
    return "\n".join([f"Job {summary['job']}: {summary['runs']} runs"] + [f"  {k:<{width}}  {v}" for k, v in rows])


def render_comparison(left: dict[str, Any], right: dict[str, Any]) -> str:
    """Two distributions side by side, on the same seeds (`kjobs simulate --compare`)."""
    restarts = _restarted(left) or _restarted(right)
    rows = zip(distribution_rows(left, restarts=restarts), distribution_rows(right, restarts=restarts), strict=True)
    return _columns(str(left["job"]), str(right["job"]), [(label, a, b) for (label, a), (_, b) in rows])


def run_rows(run: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) lines of one run's summary (`SimulationResult.to_dict`), for two runs side by side."""

    def counts(key: str, label: Any = str) -> str:
        return ", ".join(f"{label(k)} {v:g}" for k, v in (run.get(key) or {}).items()) or "none"

    retries = ", ".join(f"{i}: {n}" for i, n in (run.get("retriesPerIndex") or {}).items())
    return [
        ("seed", str(run.get("seed", ""))),
        ("outcome", f"{run['outcome']}" + (f" ({run['reason']})" if run["reason"] else "")),
        ("virtual time (s)", f"{run['virtualSeconds']:g}"),
        ("pods created", str(run["podsCreated"])),
        ("succeeded / failed", f"{run['succeeded']} / {run['failed']}"),
        ("completedIndexes", str(run["completedIndexes"] or "-")),
        ("failedIndexes", str(run["failedIndexes"] or "-")),
        ("failures by action", counts("failuresByAction")),
        ("failures by reason", counts("failuresByReason", reason_label)),
        (
            "container restarts",
            f"{run.get('containerRestarts', 0)}{_not_counted(run) if run.get('containerRestarts') else ''}",
        ),
        ("wasted pod-seconds", f"{run['wastedPodSeconds']:g}"),
        ("retries per index", retries or "none"),
        ("disruptions", counts("disruptions")),
    ]


def render_run_comparison(left: dict[str, Any], right: dict[str, Any]) -> str:
    """Two single runs side by side, on the same seed (`kjobs simulate --compare` without `--runs`): each run's
    summary, not percentiles of one value."""
    rows = zip(run_rows(left), run_rows(right), strict=True)
    return _columns(str(left["job"]), str(right["job"]), [(label, a, b) for (label, a), (_, b) in rows])


def _columns(left: str, right: str, rows: list[tuple[str, str, str]]) -> str:
    width = max(len(label) for label, _, _ in rows)
    column = max([len(left)] + [len(a) for _, a, _ in rows])
    lines = [f"  {'':<{width}}  {left:<{column}}  {right}"]
    lines += [f"  {label:<{width}}  {a:<{column}}  {b}" for label, a, b in rows]
    return "\n".join(lines)
