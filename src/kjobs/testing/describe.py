"""What a failed wait tells the test's author: the Job's conditions and counts and each of its pods' states, in
a few lines (as `kubectl describe` would, shortened), and whether the object can still reach what was asked.

A finished Job never changes again: the Job controller returns early for a Job with a `Complete` or `Failed`
condition (`IsJobFinished`, pkg/controller/job/util/utils.go), and a pod in phase `Succeeded` or `Failed` never
leaves it (the kubelet refuses to move a pod out of a terminal phase, `checkPodStatusUpdateIsAllowed` in
pkg/kubelet/status/status_manager.go). A wait for anything else from them can only time out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kjobs.api.types import Obj

MAX_PODS = 6
"""Pods listed under a Job; the rest are counted."""


def _true_conditions(obj: Obj) -> list[Obj]:
    return [c for c in (obj.get("status") or {}).get("conditions") or () if c.get("status") == "True"]


def job_finished(job: Obj) -> Obj | None:
    """The Job's `Complete` or `Failed` condition when it has finished (it never changes after), else None."""
    return next((c for c in _true_conditions(job) if c.get("type") in ("Complete", "Failed")), None)


def pod_finished(pod: Obj) -> bool:
    """Whether the pod is in a terminal phase."""
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _condition(c: Obj) -> str:
    text = f"{c.get('type')}"
    if c.get("reason"):
        text += f" {c['reason']}"
    if c.get("message"):
        text += f" ({c['message']})"
    return text


_FINAL_OF = {"FailureTarget": "Failed", "SuccessCriteriaMet": "Complete"}
"""The interim condition each terminal one follows with the same reason (shown once)."""


def describe_job(job: Obj) -> str:
    """One line: its True conditions with reasons and messages, then its counts (and indexes)."""
    status = job.get("status") or {}
    true = _true_conditions(job)
    final = {(c.get("type"), c.get("reason")) for c in true}
    shown = [c for c in true if (_FINAL_OF.get(str(c.get("type"))), c.get("reason")) not in final]
    conditions = "; ".join(_condition(c) for c in shown) or "no condition yet"
    if (job.get("spec") or {}).get("suspend"):
        conditions += " (suspended)"
    counts = ", ".join(f"{key} {status.get(key) or 0}" for key in ("active", "ready", "succeeded", "failed"))
    for key in ("completedIndexes", "failedIndexes"):
        if status.get(key):
            counts += f", {key} {status[key]}"
    return f"{conditions}; {counts}"


def _container(state: Obj) -> str:
    if "terminated" in state:
        ended = state["terminated"] or {}
        text = f"exited {ended.get('exitCode')}"
        if ended.get("reason"):
            text += f" ({ended['reason']})"
        message = str(ended.get("message") or "").strip()
        return f"{text}: {message}" if message else text
    if "waiting" in state:
        waiting = state["waiting"] or {}
        text = f"waiting {waiting.get('reason') or ''}".rstrip()
        return f"{text}: {waiting['message']}" if waiting.get("message") else text
    return "running" if "running" in state else "not started"


def describe_pod(pod: Obj) -> str:
    """One line: name, phase (and reason), each container's state, the conditions that explain a pod stuck in
    Pending or ended by a disruption."""
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    text = f"pod {meta.get('name')} {status.get('phase') or 'Pending'}"
    if status.get("reason"):
        text += f" ({status['reason']})"
    if meta.get("deletionTimestamp"):
        text += ", deleting"
    parts = [f"{s.get('name')} {_container(s.get('state') or {})}" for s in status.get("containerStatuses") or ()]
    for c in status.get("conditions") or ():
        if c.get("type") == "DisruptionTarget" and c.get("status") == "True":
            parts.append(_condition(c))
        elif c.get("type") == "PodScheduled" and c.get("status") == "False":
            parts.append(f"not scheduled: {c.get('reason')} ({c.get('message')})")
    return f"{text}: {'; '.join(parts)}" if parts else text


def describe_pods(pods: Iterable[Obj]) -> list[str]:
    """A line per pod (by creation), at most `MAX_PODS`, then how many more."""
    ordered = sorted(pods, key=lambda p: (str(p["metadata"].get("creationTimestamp")), str(p["metadata"]["name"])))
    lines = [describe_pod(p) for p in ordered[:MAX_PODS]]
    if len(ordered) > MAX_PODS:
        lines.append(f"... and {len(ordered) - MAX_PODS} more pods")
    return lines


def describe(kind: str, obj: Obj | None, pods: Iterable[Obj] = ()) -> str:
    """The object's state for a failure message: a Job with its pods, a pod, or another object's status."""
    if obj is None:
        return "there is no such object"
    if kind == "Job":
        return "\n  ".join([describe_job(obj), *describe_pods(pods)])
    if kind == "Pod":
        return describe_pod(obj)
    status: Any = obj.get("status")
    return f"status {status}" if status else "no status"


def elapsed(seconds: float) -> str:
    """`1h 2m 3s`: how long virtual time ran while a test waited."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes else "", f"{secs}s" if secs or not whole else ""]
    return " ".join(p for p in parts if p)
