"""`kjobs simulate --report out.html`: one self-contained HTML page about one or more simulated runs (issue 15).

The page has no external resource (inline CSS and SVG from `kjobs.simulate.plots`, no script to run) and carries
its data as JSON in `<script type="application/json" id="kjobs-data">`, so a script can read the numbers back
from the file. It shows, for the first run: a timeline of every attempt per completion index (per pod for a
NonIndexed Job) coloured by its outcome and, for a failed pod, the podFailurePolicy action and rule that applied
(`kjobs.progress.RunView.decisions`, the same decisions `kjobs run` prints); succeeded, failed and running pods
over virtual time; and, for several runs, the distribution of time to finish and pods created over the runs.

Attempts come from the run's `trace` (`kjobs.simulate.session.SimulationResult`): `pod-created` carries the
completion index, `pod-phase` the phases, `pod-deleted` the deletion.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

import orjson

from kjobs.simulate import plots
from kjobs.simulate.session import ENDED_BY_JOB, SimulationResult, reason_label

MAX_ATTEMPTS = 20_000
"""Attempts carried in the data block (the first, by creation); more are counted in `attemptsOmitted`."""
MAX_ROWS = 200
"""Timeline rows drawn (the first indexes, or pods); the page says how many more there are."""

SUCCEEDED, DELETED, UNFINISHED = "Succeeded", "Deleted before finishing", "Still running at the end"
FIXED_COLOURS = {SUCCEEDED: "#2f9e44", DELETED: "#868e96", UNFINISHED: "#74c0fc"}
ACTION_SHADES = {
    "FailJob": ("#c92a2a", "#e64980", "#a61e4d"),
    "FailIndex": ("#e8590c", "#f59f00", "#d9480f"),
    "Ignore": ("#7048e8", "#4263eb", "#9c36b5"),
    "Count": ("#f08c00", "#fab005", "#e67700"),
    "EndedByJobFailure": ("#5c5f66",),
    "EndedByJobSuccess": ("#a6a7ab",),
}
OUTCOME_COLOURS = {"Complete": "#2f9e44", "Failed": "#e03131", "Unfinished": "#74c0fc"}


def attempts(result: SimulationResult) -> list[dict[str, Any]]:
    """Every pod of the run, in creation order: index, created / running / end virtual seconds, outcome, and for a
    failed pod the action, rule and cause its decision gave."""
    decisions = {d.pod: d for d in result.view.decisions}
    by_pod: dict[str, dict[str, Any]] = {}
    for at, what, name, detail in result.trace:
        if what == "pod-created" and name not in by_pod:
            by_pod[name] = {
                "pod": name,
                "index": int(detail) if detail.isdigit() else None,
                "created": at,
                "running": None,
                "end": None,
                "outcome": None,
            }
            continue
        pod = by_pod.get(name)
        if pod is None or pod["outcome"] is not None:
            continue
        if what == "pod-phase" and detail == "Running":
            pod["running"] = at
        elif what == "pod-phase" and detail.split(" ")[0] in ("Succeeded", "Failed"):
            pod["end"], pod["outcome"] = at, detail.split(" ")[0]
        elif what == "pod-deleted":
            pod["end"], pod["outcome"] = at, "Deleted"
    for pod in by_pod.values():
        if pod["outcome"] is None:
            pod["end"], pod["outcome"] = result.virtual_seconds, "Unfinished"
        # A pod the Job counted as failed as it was deleted has a decision whatever its end (the summary's
        # failures count it): one that then exited 0 within its grace period, or whose object went first.
        decision = decisions.get(pod["pod"])
        e = decision.explanation if decision is not None else None
        failed = pod["outcome"] == "Failed" or decision is not None
        pod["action"] = ((e.action if e is not None else None) or "Count") if failed else None
        if decision is not None and decision.ended_by_job:  # as the summary counts it: weighed by no rule
            pod["action"] = ENDED_BY_JOB[decision.ended_by_job]
        pod["rule"] = e.rule_index if e is not None else None
        pod["ruleName"] = e.rule_name if e is not None else None
        pod["cause"] = decision.cause if decision is not None else None
        pod["category"] = category(pod)
    return list(by_pod.values())


def category(attempt: dict[str, Any]) -> str:
    """The legend entry of an attempt: its outcome, and for a failure the action and the rule that chose it; a
    pod that did not end Failed but that the Job counted as failed says both."""
    plain = {"Succeeded": SUCCEEDED, "Deleted": DELETED, "Unfinished": UNFINISHED}.get(attempt["outcome"])
    if plain is not None:
        return f"{plain} · counted failed: {attempt['action']}" if attempt["action"] else plain
    if attempt["action"] in ENDED_BY_JOB.values():
        return f"Failed · {attempt['action']}"
    if attempt["rule"] is None:
        return f"Failed · {attempt['action']} (no rule matched)"
    name = f' "{attempt["ruleName"]}"' if attempt["ruleName"] else ""
    return f"Failed · {attempt['action']} by rule {attempt['rule']}{name}"


def colours(categories: Sequence[str], actions: dict[str, str]) -> dict[str, str]:
    """A colour per category: fixed for non-failures, a shade of the action's hue per rule for failures."""
    used: dict[str, int] = {}
    out: dict[str, str] = {}
    for cat in categories:
        if cat in FIXED_COLOURS:
            out[cat] = FIXED_COLOURS[cat]
            continue
        shades = ACTION_SHADES.get(actions[cat], ("#495057",))
        out[cat] = shades[used.get(actions[cat], 0) % len(shades)]
        used[actions[cat]] = used.get(actions[cat], 0) + 1
    return out


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0–100) of a non-empty sequence."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def distribution(summaries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Over runs: how many ended each way, the success probability, and p50/p90/p99/max of the numbers."""
    outcomes: dict[str, int] = {}
    for s in summaries:
        outcomes[s["outcome"]] = outcomes.get(s["outcome"], 0) + 1
    stats = {}
    for key in ("virtualSeconds", "podsCreated", "failed"):
        values = [float(s[key]) for s in summaries]
        stats[key] = {f"p{p}": percentile(values, p) for p in (50, 90, 99)} | {"max": max(values)}
    return {
        "runs": len(summaries),
        "outcomes": outcomes,
        "successProbability": outcomes.get("Complete", 0) / len(summaries),
        **stats,
    }


def report_data(results: Sequence[SimulationResult], compared: Sequence[SimulationResult] = ()) -> dict[str, Any]:
    """The JSON the page carries: each run's summary, the first run's attempts, the distribution over runs; and
    with `compared` (`--compare`: another Job on the same seeds), the same of that Job under `compared`."""
    if not results:
        raise ValueError("a report needs at least one simulated run")
    if compared:
        return {**report_data(results), "compared": report_data(compared)}
    summaries = [r.to_dict() for r in results]
    first = attempts(results[0])
    conditions = [{"at": at, "condition": detail} for at, what, _, detail in results[0].trace if what == "job"]
    return {
        "kind": "KjobsSimulationReport",
        "runs": summaries,
        "timeline": {
            "run": 0,
            "attempts": first[:MAX_ATTEMPTS],
            "attemptsOmitted": max(0, len(first) - MAX_ATTEMPTS),
            "conditions": conditions,
        },
        "distribution": distribution(summaries),
    }


def write_report(
    path: str | Path,
    results: Sequence[SimulationResult],
    *,
    title: str = "",
    compared: Sequence[SimulationResult] = (),
) -> None:
    """Write the report of `results` (one run, or several of the same Job), and of the `compared` Job's, to
    `path`."""
    Path(path).write_text(render(report_data(results, compared), title=title), encoding="utf-8")


def render(data: dict[str, Any], *, title: str = "") -> str:
    """The whole HTML page of `report_data`'s `data`: its Job's sections, then the compared Job's."""
    first = data["runs"][0]
    other = data.get("compared")
    against = f" compared with {other['runs'][0]['job']}" if other else ""
    heading = title or f"kjobs simulate: {first['job']}{against}"
    body = [f"<h1>{escape(heading)}</h1>"]
    for each in (data, other) if other else (data,):
        if other:
            body.append(f"<h1>{escape(str(each['runs'][0]['job']))}</h1>")
        body.append(_summary(each["runs"][0], len(each["runs"])))
        body += _timeline_sections(each)
        body.append(_distribution_section(each))
    payload = orjson.dumps(data).decode().replace("</", "<\\/")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(heading)}</title><style>{CSS}</style></head><body>"
        + "\n".join(body)
        + f'\n<script type="application/json" id="kjobs-data">{payload}</script>\n</body></html>\n'
    )


def _summary(run: dict[str, Any], runs: int) -> str:
    rows = [
        ("Outcome", f"{run['outcome']}" + (f" ({run['reason']})" if run["reason"] else "")),
        ("Message", run["message"]),
        ("Virtual time to finish", plots.human(float(run["virtualSeconds"]))),
        ("Pods created", str(run["podsCreated"])),
        ("Succeeded / failed", f"{run['succeeded']} / {run['failed']}"),
        ("Failed indexes", run["failedIndexes"]),
        ("Failures by action", ", ".join(f"{a} {n}" for a, n in run["failuresByAction"].items()) or "none"),
        ("Failures by reason", ", ".join(f"{reason_label(r)} {n}" for r, n in run["failuresByReason"].items())),
        ("Wasted pod-seconds", f"{run['wastedPodSeconds']:g}" if run["failuresByAction"] else ""),
        ("Retries per index", ", ".join(f"{i}: {n}" for i, n in run["retriesPerIndex"].items())),
        ("Disruptions", ", ".join(f"{k} {n}" for k, n in run["disruptions"].items())),
    ]
    cells = "".join(f"<tr><th>{escape(k)}</th><td>{escape(_clip(str(v)))}</td></tr>" for k, v in rows if v)
    of = f"run 1 of {runs}" if runs > 1 else "one run"
    return f"<h2>Outcome ({of})</h2><table class='summary'>{cells}</table>"


def _clip(text: str, limit: int = 240) -> str:
    """Long values (a Job's failedIndexes) cut for the page; the data block keeps them whole."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _timeline_sections(data: dict[str, Any]) -> list[str]:
    timeline = data["timeline"]
    runs: list[dict[str, Any]] = timeline["attempts"]
    span = max([float(data["runs"][0]["virtualSeconds"])] + [a["end"] for a in runs])
    indexed = any(a["index"] is not None for a in runs)
    keys = sorted({a["index"] for a in runs if a["index"] is not None}) if indexed else [a["pod"] for a in runs]
    shown = keys[:MAX_ROWS]
    row_of = {key: i for i, key in enumerate(shown)}
    actions = {a["category"]: a["action"] for a in runs}
    palette = colours(list(dict.fromkeys(a["category"] for a in sorted(runs, key=_legend_order))), actions)
    bars = [
        plots.Bar(
            row_of[key],
            a["created"],
            a["running"],
            a["end"],
            palette[a["category"]],
            _tooltip(a),
        )
        for a in runs
        if (key := a["index"] if indexed else a["pod"]) in row_of
    ]
    labels = [f"index {k}" for k in shown] if indexed else [str(k) for k in shown]
    more = len(keys) - len(shown) + (1 if timeline["attemptsOmitted"] else 0)
    note = f"<p class='note'>Showing the first {len(shown)} of {len(keys)} rows.</p>" if more > 0 else ""
    per = "completion index" if indexed else "pod"
    legend = "".join(
        f"<span class='key'><i style='background:{c}'></i>{escape(cat)}</span>" for cat, c in palette.items()
    )
    timeline_html = (
        f"<h2>Attempts per {per}</h2><p class='note'>Each bar is a pod, from its creation (pale: pending) to its "
        f"end; hover for details.</p><div class='legend'>{legend}</div>{note}" + plots.timeline(bars, labels, span)
    )
    return [timeline_html, _over_time(runs, timeline["conditions"], span)]


def _legend_order(attempt: dict[str, Any]) -> tuple[int, str]:
    order = {"Succeeded": 0, "Failed": 1, "Deleted": 2, "Unfinished": 3}
    return order.get(attempt["outcome"], 4), attempt["category"]


def _tooltip(a: dict[str, Any]) -> str:
    where = f" (index {a['index']})" if a["index"] is not None else ""
    text = f"pod {a['pod']}{where}: {a['category']}, created {a['created']:g}s, ended {a['end']:g}s"
    return text + (f"; {a['cause']}" if a["cause"] else "")


def pod_ends(attempts: list[dict[str, Any]]) -> tuple[list[float], list[float]]:
    """When pods succeeded and failed, in order: a pod the Job counted as failed as it was deleted is a failure
    even if it then exited 0 (`action` set: it has a decision), as in the summary and `status.failed`."""
    succeeded = sorted(a["end"] for a in attempts if a["outcome"] == "Succeeded" and not a["action"])
    failed = sorted(a["end"] for a in attempts if a["action"])
    return succeeded, failed


def _over_time(runs: list[dict[str, Any]], conditions: list[dict[str, Any]], span: float) -> str:
    succeeded, failed = pod_ends(runs)
    changes = sorted(
        [(a["running"], 1) for a in runs if a["running"] is not None]
        + [(a["end"], -1) for a in runs if a["running"] is not None]
    )
    running, level = [(0.0, 0.0)], 0
    for at, delta in changes:
        level += delta
        running.append((at, float(level)))
    lines = [
        plots.Line("Succeeded pods (total)", FIXED_COLOURS[SUCCEEDED], _cumulative(succeeded)),
        plots.Line("Failed pods (total)", OUTCOME_COLOURS["Failed"], _cumulative(failed)),
        plots.Line("Running pods", "#1c7ed6", running),
    ]
    marks = [(c["at"], c["condition"].split(" ")[0]) for c in conditions if c["condition"].endswith("=True")][-2:]
    legend = "".join(
        f"<span class='key'><i style='background:{line.colour}'></i>{escape(line.label)}</span>" for line in lines
    )
    return f"<h2>Over virtual time</h2><div class='legend'>{legend}</div>" + plots.step_lines(lines, span, marks)


def _cumulative(times: list[float]) -> list[tuple[float, float]]:
    return [(0.0, 0.0)] + [(t, float(i + 1)) for i, t in enumerate(times)]


def _distribution_section(data: dict[str, Any]) -> str:
    dist, runs = data["distribution"], data["runs"]
    if dist["runs"] < 2:
        return "<h2>Over runs</h2><p class='note'>One run; distributions appear when several runs are reported.</p>"
    outcomes = ", ".join(f"{k} {v}" for k, v in dist["outcomes"].items())
    head = "<tr><th></th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>"
    rows = "".join(
        f"<tr><th>{label}</th>"
        + "".join(f"<td>{fmt(dist[key][p])}</td>" for p in ("p50", "p90", "p99", "max"))
        + "</tr>"
        for label, key, fmt in (
            ("Virtual time", "virtualSeconds", plots.human),
            ("Pods created", "podsCreated", lambda v: f"{v:g}"),
            ("Failed (status.failed)", "failed", lambda v: f"{v:g}"),
        )
    )
    by_outcome: dict[str, list[float]] = {}
    pods: dict[str, list[float]] = {}
    for run in runs:
        by_outcome.setdefault(run["outcome"], []).append(float(run["virtualSeconds"]))
        pods.setdefault(run["outcome"], []).append(float(run["podsCreated"]))
    legend = "".join(
        f"<span class='key'><i style='background:{OUTCOME_COLOURS.get(k, '#888')}'></i>{escape(k)}</span>"
        for k in by_outcome
    )
    return (
        f"<h2>Over {dist['runs']} runs</h2><p>Success probability <b>{dist['successProbability']:.1%}</b> "
        f"({escape(outcomes)}).</p><table class='summary'>{head}{rows}</table>"
        f"<h3>Virtual time to finish</h3><div class='legend'>{legend}</div>"
        + plots.histogram(by_outcome, OUTCOME_COLOURS, time_axis=True)
        + "<h3>Pods created</h3>"
        + plots.histogram(pods, OUTCOME_COLOURS, time_axis=False)
    )


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#212529;background:#fff;
max-width:1120px}
h1{font-size:22px;margin:0 0 12px}h2{font-size:17px;margin:24px 0 6px}h3{font-size:14px;margin:14px 0 4px}
table.summary{border-collapse:collapse;font-size:13px}table.summary th,table.summary td{padding:3px 10px;
text-align:left;border-bottom:1px solid #e9ecef}table.summary th{color:#495057;font-weight:600;
white-space:nowrap}table.summary td{overflow-wrap:anywhere}
.note{color:#868e96;font-size:12px;margin:2px 0}.legend{font-size:12px;margin:4px 0}
.key{display:inline-block;margin-right:14px}.key i{display:inline-block;width:12px;height:12px;margin-right:5px;
vertical-align:-2px;border-radius:2px}svg{display:block}svg .grid{stroke:#e9ecef;stroke-width:1}
svg .mark{stroke:#495057;stroke-dasharray:4 3}svg .tick{font-size:11px;fill:#495057;font-family:inherit}
"""
