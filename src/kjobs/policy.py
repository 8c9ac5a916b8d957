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
    if not isinstance(policy, dict) or not policy:
        return NO_MATCH
    rules = policy.get("rules")
    for index, rule in enumerate(rules if isinstance(rules, list) else ()):
        if not isinstance(rule, dict):
            continue
        action = rule.get("action")
        if not isinstance(action, str) or action not in KNOWN_ACTIONS:
            continue
        on_exit_codes = rule.get("onExitCodes")
        if on_exit_codes is not None:
            found = _match_exit_codes(on_exit_codes, pod) if isinstance(on_exit_codes, dict) else None
            if found is None:
                continue
            name, code, is_init = found
            return _decide(action, index, pod, container_name=name, exit_code=code, init_container=is_init)
        patterns = rule.get("onPodConditions")
        cond = _match_pod_conditions(patterns if isinstance(patterns, list) else (), pod)
        if cond is None:
            continue
        return _decide(action, index, pod, condition_type=cond[0], condition_status=cond[1])
    return NO_MATCH


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _decide(action: str, index: int, pod: Obj, **what: Any) -> PolicyDecision:
    message = None
    if action == FAIL_JOB:
        meta = _dict(pod.get("metadata"))
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
    status = _dict(pod.get("status"))
    wanted_name = requirement.get("containerName")
    operator = requirement.get("operator")
    raw_values = requirement.get("values")
    values = [v for v in raw_values if isinstance(v, int)] if isinstance(raw_values, list) else []
    for key, is_init in (("containerStatuses", False), ("initContainerStatuses", True)):
        statuses = status.get(key)
        for cstatus in statuses if isinstance(statuses, list) else ():
            if not isinstance(cstatus, dict):
                continue
            terminated = _dict(cstatus.get("state")).get("terminated")
            if not isinstance(terminated, dict):
                continue
            name = cstatus.get("name") or ""
            if wanted_name is not None and name != wanted_name:
                continue
            code = terminated.get("exitCode") or 0
            if not isinstance(code, int) or isinstance(code, bool) or code == 0:
                continue
            if operator == "In" and code in values:
                return name, code, is_init
            if operator == "NotIn" and code not in values:
                return name, code, is_init
    return None


def _match_pod_conditions(patterns: Any, pod: Obj) -> tuple[str, str] | None:
    """First pod condition (in pod order) equal in type and status to one of the patterns."""
    conditions = _dict(pod.get("status")).get("conditions")
    for cond in conditions if isinstance(conditions, list) else ():
        if not isinstance(cond, dict):
            continue
        for pattern in patterns:
            if not isinstance(pattern, dict):
                continue
            if cond.get("type") == pattern.get("type") and cond.get("status") == pattern.get("status", "True"):
                return str(cond.get("type")), str(cond.get("status"))
    return None
