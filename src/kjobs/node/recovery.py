"""What an agent reports for a pod bound to its node that its runtime does not run (after an agent crash).

Design note: a restarted agent relists its pods. A pod whose status shows that containers ran, but that the
fresh runtime knows nothing about, lost its processes with the previous agent: the kubelet's answer for
containers it cannot find is a terminated state with reason `ContainerStatusUnknown`, exit code 137 and
message `The container could not be located when the pod was terminated`, and a terminal phase. Rerunning
it would break `restartPolicy: Never` (a Job counts each pod once), so such pods are reported, never rerun.
A pod deleted before it ever started gets the same treatment for its waiting containers. Pure.
"""

from __future__ import annotations

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.node.podstatus import CONTAINER_STATUS_UNKNOWN, FAILED, SUCCEEDED, TERMINAL_PHASES

UNKNOWN_EXIT_CODE = 137
UNKNOWN_MESSAGE = "The container could not be located when the pod was terminated"


def ran_before(pod: Obj) -> bool:
    """The pod's status shows containers that started (so a runtime that does not know it has lost it)."""
    status = pod.get("status") or {}
    if status.get("phase") == "Running":
        return True
    for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        state = cs.get("state") or {}
        if "running" in state or "terminated" in state or cs.get("restartCount"):
            return True
    return False


def _unknown(status: Obj) -> Obj:
    result = dict(status)
    result["state"] = {
        "terminated": {"exitCode": UNKNOWN_EXIT_CODE, "reason": CONTAINER_STATUS_UNKNOWN, "message": UNKNOWN_MESSAGE}
    }
    result["ready"] = False
    result["started"] = False
    if "running" in (status.get("state") or {}):
        result["lastState"] = status.get("lastState") or {}
    return result


def _base_status(container: Obj) -> Obj:
    return {
        "name": container.get("name", ""),
        "image": container.get("image", ""),
        "imageID": "",
        "ready": False,
        "restartCount": 0,
        "started": False,
        "state": {"waiting": {"reason": "ContainerCreating"}},
        "lastState": {},
    }


def lost_pod_status(pod: Obj, now: float) -> Obj:
    """The terminal status for a pod whose containers this node no longer runs.

    Containers already terminated keep their state; every other container is `ContainerStatusUnknown` (137).
    The phase is Succeeded only if every container had exited 0 (and none is unknown), else Failed.
    """
    spec, status = pod.get("spec") or {}, dict(pod.get("status") or {})
    if status.get("phase") in TERMINAL_PHASES:
        return status
    known = {cs.get("name"): cs for cs in status.get("containerStatuses") or []}
    known_init = {cs.get("name"): cs for cs in status.get("initContainerStatuses") or []}
    statuses = []
    for container in spec.get("containers") or []:
        current = known.get(container.get("name")) or _base_status(container)
        statuses.append(current if "terminated" in (current.get("state") or {}) else _unknown(current))
    init_statuses = []
    for container in spec.get("initContainers") or []:
        current = known_init.get(container.get("name")) or _base_status(container)
        init_statuses.append(current if "terminated" in (current.get("state") or {}) else _unknown(current))
    succeeded = bool(statuses) and all(
        (cs["state"].get("terminated") or {}).get("exitCode") == 0
        and cs["state"]["terminated"].get("reason") != CONTAINER_STATUS_UNKNOWN
        for cs in statuses
    )
    stamp = format_time(now)
    conditions = []
    for condition in status.get("conditions") or []:
        if condition.get("type") in ("Ready", "ContainersReady") and condition.get("status") == "True":
            condition = {
                **condition,
                "status": "False",
                "reason": "PodCompleted" if succeeded else "PodFailed",
                "lastTransitionTime": stamp,
            }
            condition.pop("message", None)
        conditions.append(condition)
    status["phase"] = SUCCEEDED if succeeded else FAILED
    status["containerStatuses"] = statuses
    if init_statuses:
        status["initContainerStatuses"] = init_statuses
    if conditions:
        status["conditions"] = conditions
    return status
