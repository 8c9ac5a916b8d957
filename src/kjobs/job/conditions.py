"""Job conditions: construction and the ensure-status rule Kubernetes uses for Suspended.

Condition types, reasons and messages are Kubernetes' exact strings (pkg/apis/batch/types.go,
pkg/controller/job/job_controller.go).
"""

from __future__ import annotations

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj

REASON_POD_FAILURE_POLICY = "PodFailurePolicy"
REASON_BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
REASON_DEADLINE_EXCEEDED = "DeadlineExceeded"
REASON_MAX_FAILED_INDEXES_EXCEEDED = "MaxFailedIndexesExceeded"
REASON_FAILED_INDEXES = "FailedIndexes"
REASON_COMPLETIONS_REACHED = "CompletionsReached"
REASON_SUCCESS_POLICY = "SuccessPolicy"

MSG_BACKOFF_LIMIT_EXCEEDED = "Job has reached the specified backoff limit"
MSG_DEADLINE_EXCEEDED = "Job was active longer than specified deadline"
MSG_MAX_FAILED_INDEXES_EXCEEDED = "Job has exceeded the specified maximal number of failed indexes"
MSG_FAILED_INDEXES = "Job has failed indexes"
MSG_COMPLETIONS_REACHED = "Reached expected number of succeeded pods"


def new_condition(cond_type: str, status: str, reason: str, message: str, now: float) -> Obj:
    """A JobCondition with both timestamps at `now`."""
    stamp = format_time(now)
    return {
        "type": cond_type,
        "status": status,
        "lastProbeTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def find(conditions: list[Obj] | None, cond_type: str) -> Obj | None:
    """The first condition of a type."""
    for cond in conditions or ():
        if cond.get("type") == cond_type:
            return cond
    return None


def is_true(conditions: list[Obj] | None, cond_type: str) -> bool:
    """Whether a condition of that type exists with status True."""
    cond = find(conditions, cond_type)
    return cond is not None and cond.get("status") == "True"


def ensure_status(
    conditions: list[Obj], cond_type: str, status: str, reason: str, message: str, now: float
) -> tuple[list[Obj], bool]:
    """Set a condition's status/reason/message, appending it unless it would be a new False condition."""
    out = list(conditions)
    for i, cond in enumerate(out):
        if cond.get("type") == cond_type:
            if cond.get("status") != status or cond.get("reason") != reason or cond.get("message") != message:
                out[i] = new_condition(cond_type, status, reason, message, now)
                return out, True
            return out, False
    if status != "False":
        out.append(new_condition(cond_type, status, reason, message, now))
        return out, True
    return out, False
