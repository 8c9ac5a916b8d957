"""Facts about one pod as the Job controller sees it: phase, readiness, index, finish time, failure counts.

All functions read a pod in its JSON form and never mutate it.
"""

from __future__ import annotations

from typing import Any

from kjobs.api.goints import go_atoi
from kjobs.api.names import (
    JOB_COMPLETION_INDEX_ANNOTATION,
    JOB_INDEX_FAILURE_COUNT_ANNOTATION,
    JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION,
    JOB_TRACKING_FINALIZER,
    MAX_INT32,
)
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj

UNKNOWN_INDEX = -1
TERMINAL_PHASES = ("Succeeded", "Failed")
GO_ZERO_TIME = parse_time("0001-01-01T00:00:00Z")


def meta(pod: Obj) -> Obj:
    """The pod's metadata (empty dict when absent)."""
    value: Obj = pod.get("metadata") or {}
    return value


def status(pod: Obj) -> Obj:
    """The pod's status (empty dict when absent)."""
    value: Obj = pod.get("status") or {}
    return value


# The helpers below read `metadata` and `status` themselves rather than through `meta` and `status`: they run
# for every event of every pod (the Job controller, pod GC, `kjobs run`'s view), and a call is most of their cost.


def uid(pod: Obj) -> str:
    """The pod's UID."""
    return str((pod.get("metadata") or {}).get("uid") or "")


def phase(pod: Obj) -> str:
    """The pod's phase (`""` when unset). A str phase is returned as it is, without a call to `str` (called about
    sixteen times a pod in `kjobs simulate`: by the Job controller's syncs and the simulation's follower)."""
    value = (pod.get("status") or {}).get("phase")
    return value if type(value) is str else str(value or "")


def is_terminal(pod: Obj) -> bool:
    """Succeeded or Failed."""
    return str((pod.get("status") or {}).get("phase") or "") in TERMINAL_PHASES


def is_deleting(pod: Obj) -> bool:
    """Has a deletionTimestamp."""
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def is_active(pod: Obj) -> bool:
    """Not terminal and not being deleted (`controller.FilterActivePods`)."""
    return not is_terminal(pod) and not is_deleting(pod)


def is_terminating(pod: Obj) -> bool:
    """Being deleted but not yet terminal: counted in `status.terminating`."""
    return is_deleting(pod) and not is_terminal(pod)


def has_tracking_finalizer(pod: Obj) -> bool:
    """Carries `batch.kubernetes.io/job-tracking`, i.e. not yet counted in the Job status."""
    return JOB_TRACKING_FINALIZER in ((pod.get("metadata") or {}).get("finalizers") or ())


def condition(pod: Obj, cond_type: str) -> Obj | None:
    """The pod condition of a type, if present."""
    for cond in status(pod).get("conditions") or ():
        if isinstance(cond, dict) and cond.get("type") == cond_type:
            return cond
    return None


def is_ready(pod: Obj) -> bool:
    """Ready=True (`podutil.IsPodReady`)."""
    cond = condition(pod, "Ready")
    return cond is not None and cond.get("status") == "True"


def completion_index(pod: Obj) -> int:
    """The completion index annotation as an int, or UNKNOWN_INDEX when absent, unparsable or negative."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(JOB_COMPLETION_INDEX_ANNOTATION)
    if value is None:
        return UNKNOWN_INDEX
    text = str(value)
    if text.isdigit() and text.isascii() and len(text) < 19:  # what the controller writes: go_atoi's fast path
        return int(text)
    index = go_atoi(text)
    return index if index is not None and index >= 0 else UNKNOWN_INDEX


SyncFacts = tuple[bool, bool, bool, bool, int, str]
"""What a sync's classifying pass reads of a pod (`sync_facts`)."""


def sync_facts(pod: Obj, earlier: Obj | None = None, earlier_facts: SyncFacts | None = None) -> SyncFacts:
    """(not in a terminal phase, being deleted, active and its first Ready condition True, carrying the tracking
    finalizer, `completion_index`, `uid`): what `kjobs.job.sync.new_context` reads of each unsettled pod on every
    sync, which counts the readiness of active pods only. A pod object is never changed once stored, so a controller
    may read them once a version, when the pod arrives, rather than on each of the many syncs (ten a second) that
    see the pod active (docs/http47.md).

    `earlier`, another version of the pod with its `earlier_facts`: the index is carried over when both hold the
    very same `annotations` object (a status or finalizer write keeps it, docs/perf48.md), or the very same string
    as the index annotation's value (the binding copies the map, not its values: docs/jobctl54.md), rather than
    parsed again."""
    meta = pod.get("metadata") or {}
    pod_status = pod.get("status") or {}
    running = pod_status.get("phase") not in TERMINAL_PHASES
    deleting = bool(meta.get("deletionTimestamp"))
    ready = False
    if running and not deleting:  # only an active pod's readiness is counted: half a pod's versions are terminal
        for cond in pod_status.get("conditions") or ():  # `is_ready`: the first Ready condition
            if isinstance(cond, dict) and cond.get("type") == "Ready":
                ready = cond.get("status") == "True"
                break
    annotations = meta.get("annotations")
    if earlier_facts is not None and earlier is not None and annotations is not None:
        earlier_annotations = (earlier.get("metadata") or {}).get("annotations")
        if annotations is earlier_annotations:
            index = earlier_facts[4]
        elif (
            type(annotations) is dict
            and type(earlier_annotations) is dict
            and (value := annotations.get(JOB_COMPLETION_INDEX_ANNOTATION)) is not None
            and value is earlier_annotations.get(JOB_COMPLETION_INDEX_ANNOTATION)
        ):
            index = earlier_facts[4]  # `completion_index` is a function of the value alone
        else:
            index = completion_index(pod)
    else:
        index = completion_index(pod)
    return (
        running,
        deleting,
        ready,
        JOB_TRACKING_FINALIZER in (meta.get("finalizers") or ()),
        index,
        str(meta.get("uid") or ""),
    )


def _annotation_int32(pod: Obj, key: str) -> int:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(key)
    if value is None:
        return 0
    number = go_atoi(str(value))
    return number if number is not None and 0 <= number <= MAX_INT32 else 0


def index_failure_count(pod: Obj) -> int:
    """`batch.kubernetes.io/job-index-failure-count` (0 when absent or invalid)."""
    return _annotation_int32(pod, JOB_INDEX_FAILURE_COUNT_ANNOTATION)


def index_ignored_failure_count(pod: Obj) -> int:
    """`batch.kubernetes.io/job-index-ignored-failure-count` (0 when absent or invalid)."""
    return _annotation_int32(pod, JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION)


def index_absolute_failure_count(pod: Obj) -> int:
    """Counted plus ignored failures of the pod's index before this pod."""
    return index_failure_count(pod) + index_ignored_failure_count(pod)


def _time(value: Any) -> float | None:
    if not value:
        return None
    try:
        return parse_time(str(value))
    except ValueError:
        return None


def creation_time(pod: Obj) -> float:
    """creationTimestamp, or Go's zero time when absent."""
    return _time(meta(pod).get("creationTimestamp")) or GO_ZERO_TIME


def finish_time(pod: Obj) -> float:
    """When the pod finished, as the Job controller's back-off estimates it (`getFinishedTime`,
    pkg/controller/job/backoff_utils.go): its containers' (and sidecars') last finish, else when Ready turned
    False, else its deletion less the grace period, else its creation. For a pod with no init containers the
    containers' finish is read here (`_containers_finish_time` without its calls: the back-off reads each pod
    that finished, docs/node53.md)."""
    latest = (
        _latest_finish(None, (pod.get("status") or {}).get("containerStatuses") or (), None)
        if not (pod.get("spec") or {}).get("initContainers")
        else _containers_finish_time(pod)
    )
    if latest is not None:
        return latest
    ready = condition(pod, "Ready")
    if ready is not None and ready.get("status") == "False":
        changed = _time(ready.get("lastTransitionTime"))
        if changed is not None and changed != GO_ZERO_TIME:
            return changed
    deleted = _time(meta(pod).get("deletionTimestamp"))
    if deleted is not None:
        return deleted - float(meta(pod).get("deletionGracePeriodSeconds") or 0)
    return creation_time(pod)


def _containers_finish_time(pod: Obj) -> float | None:
    """`getFinishTimeFromContainers`: the latest finish of the containers, None unless all have finished; then
    of the sidecars (init containers with `restartPolicy: Always`, which stop after the others), if any, whose
    statuses are read the same way, from the containers' result (kept even when that is None, as in Go)."""
    pod_status = status(pod)
    latest = _latest_finish(None, pod_status.get("containerStatuses") or (), None)
    init_specs = (pod.get("spec") or {}).get("initContainers")
    if init_specs:
        sidecars = {c.get("name") for c in init_specs if isinstance(c, dict) and c.get("restartPolicy") == "Always"}
        if sidecars:
            latest = _latest_finish(latest, pod_status.get("initContainerStatuses") or (), sidecars)
    return latest


def _latest_finish(previous: float | None, statuses: Any, names: set[Any] | None) -> float | None:
    """`latestFinishTime`: None as soon as a (named) container has not finished, else the latest finish."""
    latest = previous
    for cstatus in statuses:
        cstatus = cstatus or {}
        if names is not None and cstatus.get("name") not in names:
            continue
        terminated = (cstatus.get("state") or {}).get("terminated")
        finished = _time(terminated.get("finishedAt")) if isinstance(terminated, dict) else None
        if finished is None or finished == GO_ZERO_TIME:
            return None
        if latest is None or finished > latest:
            latest = finished
    return latest


def total_restarts(pod: Obj) -> int:
    """The restartCounts of the pod's init and regular containers, summed: what an OnFailure Job counts toward its
    backoffLimit (`pastBackoffLimitOnFailure`, pkg/controller/job/job_controller.go)."""
    st = status(pod)
    return sum(
        int((c or {}).get("restartCount") or 0)
        for key in ("initContainerStatuses", "containerStatuses")
        for c in st.get(key) or ()
    )


def restarts_in_place(pod_spec: Obj) -> bool:
    """Whether containers of a pod of this spec can restart in place although its restartPolicy is not OnFailure:
    a sidecar (an init container with `restartPolicy: Always`), or a container with its own `restartPolicy` or
    `restartPolicyRules` (KEP-5307, gate ContainerRestartRules). Their restarts are in the pod's restartCounts,
    but the Job controller counts restartCounts toward backoffLimit only for `restartPolicy: OnFailure` pods."""
    for key in ("initContainers", "containers"):
        for container in pod_spec.get(key) or ():
            if isinstance(container, dict) and (container.get("restartPolicyRules") or container.get("restartPolicy")):
                return True
    return False


def max_restarts(pod: Obj) -> int:
    """The highest container restartCount."""
    return max((int((c or {}).get("restartCount") or 0) for c in status(pod).get("containerStatuses") or ()), default=0)


def ready_time(pod: Obj) -> float | None:
    """When the pod became Ready, if it is."""
    cond = condition(pod, "Ready")
    if cond is None or cond.get("status") != "True":
        return None
    return _time(cond.get("lastTransitionTime"))


_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def removal_order_key(pod: Obj) -> tuple[Any, ...]:
    """Sort key putting the pods cheapest to delete first (`controller.ActivePods`).

    Unscheduled before scheduled, Pending < Unknown < Running, not ready before ready, more recently ready
    first, more restarts first, newer before older.
    """
    node = (pod.get("spec") or {}).get("nodeName") or ""
    ready = is_ready(pod)
    rtime = ready_time(pod) if ready else None
    created = meta(pod).get("creationTimestamp")
    return (
        1 if node else 0,
        _PHASE_ORDINAL.get(phase(pod), 0),
        1 if ready else 0,
        -(rtime if rtime is not None else float("inf")) if ready else 0.0,
        -max_restarts(pod),
        -(creation_time(pod) if created else float("inf")),
    )
