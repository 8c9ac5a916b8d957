"""`kjobs explain job NAME`: every failed pod of a Job on a cluster, with the podFailurePolicy decision about it.

A pod that still exists is decided again from the Job's policy (`kjobs.job.decisions.decide`, the same function
the Job controller records with); a pod that is gone is read back from the Event the controller recorded when it
counted the pod (`parse_event_message`). Events the event correlator combined ("(combined from similar events):",
client-go's tools/record/events_cache.go) name only their latest pod: they are listed apart, with their count.
Works against any API server the `Client` protocol reaches (`kjobs up`, or a Kubernetes cluster running
`kjobs controller`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kjobs.api.names import CONTROLLER_UID_LABEL
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.eventcorrelator import AGGREGATE_MESSAGE_PREFIX
from kjobs.client.resources import EVENTS, JOBS, PODS
from kjobs.explanation import with_policy_default
from kjobs.job import pods as P
from kjobs.job.context import is_indexed, is_pod_failed
from kjobs.job.decisions import REASONS, FailureDecision, decide, parse_event_message

DECISION_REASONS = frozenset(REASONS.values())


@dataclass(frozen=True)
class FailedPod:
    """One row: a failed pod's decision, and where it was read (`pod`: recomputed; `event`: the pod is gone)."""

    decision: FailureDecision
    source: str


@dataclass(frozen=True)
class CombinedEvents:
    """An aggregated decision Event: `count` decisions, of which only the latest's message is kept."""

    reason: str
    count: int
    message: str


@dataclass
class JobFailures:
    """What `kjobs explain job` prints."""

    job: str
    indexed: bool
    pods: list[FailedPod] = field(default_factory=list)
    combined: list[CombinedEvents] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (camelCase keys)."""
        return {
            "job": self.job,
            "failedPods": [dict(p.decision.to_dict(), source=p.source) for p in self.pods],
            "combinedEvents": [{"reason": c.reason, "count": c.count, "message": c.message} for c in self.combined],
        }

    def render(self) -> str:
        """A kubectl-style table, then notes on gone pods and combined Events."""
        if not self.pods and not self.combined:
            return f"Job {self.job} has no failed pods."
        header = ["POD", *(["INDEX"] if self.indexed else []), "FAILURE", "RULE", "ACTION", "EFFECT"]
        rows = [header]
        for row in self.pods:
            d = row.decision
            rule = "-" if d.rule is None else (f"{d.rule} ({d.rule_name})" if d.rule_name else str(d.rule))
            pod = d.pod + ("*" if row.source == "event" else "")
            index = [str(d.index) if d.index is not None else "-"] if self.indexed else []
            rows.append([pod, *index, d.failure, rule, d.action, d.effect])
        widths = [max(len(r[i]) for r in rows) for i in range(len(header) - 1)]
        lines = ["   ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "   " + r[-1] for r in rows]
        if any(p.source == "event" for p in self.pods):
            lines.append("")
            lines.append("* the pod is gone: its decision is read from the Job's Events")
        for c in self.combined:
            lines.append("")
            lines.append(f"{c.count} {c.reason} decisions were combined into one Event; the latest: {c.message}")
        return "\n".join(lines)


async def explain_job(client: Client, namespace: str, name: str) -> JobFailures:
    """Read the Job, its pods and its Events, and decide each failed pod (raises ApiError, e.g. 404)."""
    job = await client.get(JOBS, namespace, name)
    uid = str((job.get("metadata") or {}).get("uid") or "")
    pods, _ = await client.list(PODS, namespace, label_selector=f"{CONTROLLER_UID_LABEL}={uid}")
    events, _ = await client.list(EVENTS, namespace, field_selector=f"involvedObject.uid={uid}")
    result = JobFailures(job=f"{namespace}/{name}", indexed=is_indexed(job))
    judged = with_policy_default(job)
    present: set[str] = set()
    for pod in pods:
        if not _controlled_by(pod, uid):
            continue
        present.add(str(P.meta(pod).get("name") or ""))
        if is_pod_failed(pod, judged):
            result.pods.append(FailedPod(decide(job, pod), "pod"))
    for event in sorted(events, key=_event_time):
        reason = str(event.get("reason") or "")
        if reason not in DECISION_REASONS:
            continue
        message = str(event.get("message") or "")
        if message.startswith(AGGREGATE_MESSAGE_PREFIX):
            count = int(event.get("count") or 1)
            result.combined.append(CombinedEvents(reason, count, message[len(AGGREGATE_MESSAGE_PREFIX) :]))
            continue
        decision = parse_event_message(message)
        if decision is not None and decision.pod not in present:
            present.add(decision.pod)
            result.pods.append(FailedPod(decision, "event"))
    result.pods.sort(key=lambda p: (p.decision.index if p.decision.index is not None else -1, p.decision.pod))
    return result


def _controlled_by(pod: Obj, uid: str) -> bool:
    return any(ref.get("controller") and ref.get("uid") == uid for ref in P.meta(pod).get("ownerReferences") or ())


def _event_time(event: Obj) -> str:
    return str(event.get("lastTimestamp") or event.get("eventTime") or "")
