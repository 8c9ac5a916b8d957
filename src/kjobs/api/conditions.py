"""Condition bookkeeping shared by the disruption machinery, with Kubernetes' transition-time rules.

`update_pod_condition` is `pkg/api/v1/pod.UpdatePodCondition` (a pod condition's lastTransitionTime moves
only when its status changes); `set_status_condition` is `apimachinery meta.SetStatusCondition` for
`metav1.Condition` lists (PDB status). `disruption_target` builds the `DisruptionTarget` condition every
component adds before it terminates a pod (reasons and messages: pkg/apis/core/types.go, the `DisruptionTarget`
reasons, and each component's source).
"""

from __future__ import annotations

from kjobs.api.names import DISRUPTION_TARGET
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj

DELETION_BY_TAINT_MANAGER = ("DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")
DELETION_BY_POD_GC = ("DeletionByPodGC", "PodGC: node no longer exists")
EVICTION_BY_EVICTION_API = ("EvictionByEvictionAPI", "Eviction API: evicting")
TERMINATION_BY_KUBELET = "TerminationByKubelet"


def disruption_target(reason_message: tuple[str, str]) -> Obj:
    """A `DisruptionTarget=True` condition with the given (reason, message); the time is set on update."""
    reason, message = reason_message
    return {"type": DISRUPTION_TARGET, "status": "True", "reason": reason, "message": message}


def find_condition(conditions: list[Obj] | None, cond_type: str) -> Obj | None:
    """The condition of `cond_type`, if any."""
    return next((c for c in conditions or () if c.get("type") == cond_type), None)


def update_pod_condition(status: Obj, condition: Obj, now: float) -> bool:
    """Put `condition` into `status.conditions` in place; returns whether anything changed.

    The new condition replaces the old one entirely (reason/message it does not carry are cleared); its
    lastTransitionTime is `now` unless the status is unchanged, when the old time is kept.
    """
    new = {k: v for k, v in condition.items() if v not in (None, "")}
    new["type"] = condition["type"]
    new["status"] = condition["status"]
    new["lastTransitionTime"] = format_time(now)
    conditions: list[Obj] = list(status.get("conditions") or [])
    for i, old in enumerate(conditions):
        if old.get("type") != new["type"]:
            continue
        if old.get("status") == new["status"]:
            if old.get("lastTransitionTime"):
                new["lastTransitionTime"] = old["lastTransitionTime"]
            else:
                new.pop("lastTransitionTime")
        unchanged = all(
            (old.get(k) or None) == (new.get(k) or None)
            for k in ("status", "reason", "message", "lastProbeTime", "lastTransitionTime")
        )
        conditions[i] = new
        status["conditions"] = conditions
        return not unchanged
    conditions.append(new)
    status["conditions"] = conditions
    return True


def set_status_condition(conditions: list[Obj], condition: Obj, now: float) -> bool:
    """`meta.SetStatusCondition` on a `metav1.Condition` list, in place; returns whether it changed."""
    for i, old in enumerate(conditions):
        if old.get("type") != condition["type"]:
            continue
        new = dict(old)
        if old.get("status") != condition["status"]:
            new["status"] = condition["status"]
            new["lastTransitionTime"] = format_time(now)
        new["reason"] = condition.get("reason", "")
        new["message"] = condition.get("message", "")
        if condition.get("observedGeneration") is not None:
            new["observedGeneration"] = condition["observedGeneration"]
        else:
            new.pop("observedGeneration", None)
        changed = new != old
        conditions[i] = new
        return changed
    fresh: Obj = {"type": condition["type"], "status": condition["status"]}
    if condition.get("observedGeneration") is not None:
        fresh["observedGeneration"] = condition["observedGeneration"]
    fresh["lastTransitionTime"] = format_time(now)
    fresh["reason"] = condition.get("reason", "")
    fresh["message"] = condition.get("message", "")
    conditions.append(fresh)
    return True
