"""Pod failure policy matching: what a Job's `spec.podFailurePolicy` does with one failed pod.

Mirrors Kubernetes' `matchPodFailurePolicy`: rules are tried in order; the first whose exit-code or pod-condition
requirement matches decides. The result also records *what* matched (container, exit code, condition), so that
`kjobs explain` and `kjobs run` can say why, not only what.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kjobs.api.types import Obj

FAIL_JOB = "FailJob"
FAIL_INDEX = "FailIndex"
IGNORE = "Ignore"
COUNT = "Count"
KNOWN_ACTIONS = frozenset((FAIL_JOB, FAIL_INDEX, IGNORE, COUNT))


@dataclass(frozen=True, slots=True)
class PolicyDecision:
    """The outcome of matching one failed pod against a pod failure policy.

    `action` is None when no rule matched (an ordinary failure). `count_failed` says whether the failure counts
    toward `status.failed` and the back-off limits. `message` is the FailJob condition message (FailJob only).
    """

    action: str | None
    count_failed: bool
    message: str | None = None
    rule_index: int | None = None
    container_name: str | None = None
    exit_code: int | None = None
    init_container: bool = False
    condition_type: str | None = None
    condition_status: str | None = None


NO_MATCH = PolicyDecision(action=None, count_failed=True)


def match_pod_failure_policy(policy: Obj | None, pod: Obj) -> PolicyDecision:
    """Decide what `policy` (a `spec.podFailurePolicy`, or None) does with the failed `pod`."""
    if not policy:
        return NO_MATCH
    rules = policy.get("rules") or ()
    for index, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue
        action = rule.get("action")
        if action not in KNOWN_ACTIONS:
            continue
        on_exit_codes = rule.get("onExitCodes")
        if on_exit_codes is not None:
            found = _match_exit_codes(on_exit_codes, pod)
            if found is None:
                continue
            name, code, is_init = found
            return _decide(action, index, pod, container_name=name, exit_code=code, init_container=is_init)
        cond = _match_pod_conditions(rule.get("onPodConditions") or (), pod)
        if cond is None:
            continue
        return _decide(action, index, pod, condition_type=cond[0], condition_status=cond[1])
    return NO_MATCH


def _decide(action: str, index: int, pod: Obj, **what: Any) -> PolicyDecision:
    message = None
    if action == FAIL_JOB:
        meta = pod.get("metadata") or {}
        where = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
        if what.get("condition_type") is not None:
            message = f"Pod {where} has condition {what['condition_type']} matching FailJob rule at index {index}"
        else:
            message = (
                f"Container {what['container_name']} for pod {where} failed with exit code "
                f"{what['exit_code']} matching FailJob rule at index {index}"
            )
    return PolicyDecision(action=action, count_failed=action != IGNORE, message=message, rule_index=index, **what)


def _match_exit_codes(requirement: Obj, pod: Obj) -> tuple[str, int, bool] | None:
    """First terminated, non-zero container status (containers, then init containers) the requirement matches."""
    status = pod.get("status") or {}
    wanted_name = requirement.get("containerName")
    operator = requirement.get("operator")
    values = requirement.get("values") or ()
    for key, is_init in (("containerStatuses", False), ("initContainerStatuses", True)):
        for cstatus in status.get(key) or ():
            if not isinstance(cstatus, dict):
                continue
            terminated = (cstatus.get("state") or {}).get("terminated")
            if not isinstance(terminated, dict):
                continue
            name = cstatus.get("name") or ""
            if wanted_name is not None and name != wanted_name:
                continue
            code = terminated.get("exitCode") or 0
            if not isinstance(code, int) or code == 0:
                continue
            if operator == "In" and code in values:
                return name, code, is_init
            if operator == "NotIn" and code not in values:
                return name, code, is_init
    return None


def _match_pod_conditions(patterns: Any, pod: Obj) -> tuple[str, str] | None:
    """First pod condition (in pod order) equal in type and status to one of the patterns."""
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if not isinstance(cond, dict):
            continue
        for pattern in patterns:
            if not isinstance(pattern, dict):
                continue
            if cond.get("type") == pattern.get("type") and cond.get("status") == pattern.get("status", "True"):
                return str(cond.get("type")), str(cond.get("status"))
    return None
