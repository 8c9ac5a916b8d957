"""Pods and Jobs as the upstream Job-controller helper tables build them (docs/upstream-job-utils.md).

Upstream builds in-memory Go objects (`buildPod()`, `hollowPodsWithIndexPhase`, `newJob`); kjobs' pure core
reads the same objects in their JSON form, so these builders write the fields the Go builders set and nothing
else (a hollow pod has no name, uid or creation time unless the row gives one).
"""

from __future__ import annotations

import itertools
from typing import Any

from kjobs.api.names import (
    JOB_COMPLETION_INDEX_ANNOTATION,
    JOB_INDEX_FAILURE_COUNT_ANNOTATION,
    JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION,
    JOB_TRACKING_FINALIZER,
)
from kjobs.api.types import Obj

NO_INDEX = "-"
"""Upstream's `noIndex`: the pod has no completion-index annotation at all."""

_uids = itertools.count()


def build_pod(
    *,
    uid: str | None = None,
    phase: str | None = None,
    index: str | None = None,
    failure_count: str | None = None,
    ignored_failure_count: str | None = None,
    tracking_finalizer: bool = False,
    deletion_timestamp: str | None = None,
    status: Obj | None = None,
) -> Obj:
    """`buildPod()` with its chained setters; `status` replaces the whole status (`.status(...)`), as there."""
    annotations: dict[str, str] = {}
    if index is not None:
        annotations[JOB_COMPLETION_INDEX_ANNOTATION] = index
    if failure_count is not None:
        annotations[JOB_INDEX_FAILURE_COUNT_ANNOTATION] = failure_count
    if ignored_failure_count is not None:
        annotations[JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION] = ignored_failure_count
    meta: dict[str, Any] = {"uid": uid if uid is not None else f"pod-{next(_uids)}"}
    if annotations:
        meta["annotations"] = annotations
    if tracking_finalizer:
        meta["finalizers"] = [JOB_TRACKING_FINALIZER]
    if deletion_timestamp is not None:
        meta["deletionTimestamp"] = deletion_timestamp
    pod_status: Obj = dict(status) if status is not None else {}
    if phase is not None:
        pod_status["phase"] = phase
    return {"metadata": meta, "status": pod_status}


def hollow_pods(descs: list[tuple[str, str]], *, tracking_finalizer: bool = False) -> list[Obj]:
    """`hollowPodsWithIndexPhase`: one pod per (index, phase), the index annotation left out for `NO_INDEX`."""
    pods = []
    for index, phase in descs:
        meta: dict[str, Any] = {"uid": f"pod-{next(_uids)}"}
        if index != NO_INDEX:
            meta["annotations"] = {JOB_COMPLETION_INDEX_ANNOTATION: index}
        if tracking_finalizer:
            meta["finalizers"] = [JOB_TRACKING_FINALIZER]
        pods.append({"metadata": meta, "status": {"phase": phase}})
    return pods


def index_phases(pods: list[Obj]) -> list[tuple[str, str]]:
    """`toIndexPhases`: each pod back as (index annotation or `NO_INDEX`, phase)."""
    result = []
    for pod in pods:
        annotations = (pod.get("metadata") or {}).get("annotations")
        index = annotations.get(JOB_COMPLETION_INDEX_ANNOTATION, "") if annotations is not None else NO_INDEX
        result.append((index, (pod.get("status") or {}).get("phase") or ""))
    return result


def job(*, status: Obj | None = None, **spec: Any) -> Obj:
    """A `batch.Job` with only the given spec (and status) fields set, as the tables' literals are."""
    return {"metadata": {"name": "job", "namespace": "default"}, "spec": spec, "status": status or {}}
