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
    if not isinstance(rules, list):
        return NO_MATCH
    status = pod.get("status")
    if not isinstance(status, dict):
        status = {}
    for index, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue
        action = rule.get("action")
        if type(action) is not str or action not in KNOWN_ACTIONS:
            continue
        on_exit_codes = rule.get("onExitCodes")
        if on_exit_codes is not None:
            found = _match_exit_codes(on_exit_codes, status) if isinstance(on_exit_codes, dict) else None
            if found is None:
                continue
            name, code, is_init = found
            return _decide(action, index, pod, name, code, is_init, None, None)
        patterns = rule.get("onPodConditions")
        cond = _match_pod_conditions(patterns if isinstance(patterns, list) else (), status)
        if cond is None:
            continue
        return _decide(action, index, pod, None, None, False, cond[0], cond[1])
    return NO_MATCH


def _decide(
    action: str,
    index: int,
    pod: Obj,
    container: str | None,
    code: int | None,
    is_init: bool,
    cond_type: str | None,
    cond_status: str | None,
) -> PolicyDecision:
    message = None
    if action == FAIL_JOB:
        meta = pod.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        where = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
        if cond_type is not None:
            message = f"Pod {where} has condition {cond_type} matching FailJob rule at index {index}"
        else:
            message = (
                f"Container {container} for pod {where} failed with exit code {code} "
                f"matching FailJob rule at index {index}"
            )
    return PolicyDecision(action, action != IGNORE, message, index, container, code, is_init, cond_type, cond_status)


def _match_exit_codes(requirement: Obj, status: Obj) -> tuple[str, int, bool] | None:
    """First terminated, non-zero container status (containers, then init containers) the requirement matches."""
    wanted_name = requirement.get("containerName")
    operator = requirement.get("operator")
    if operator == "In":
        want_in = True
    elif operator == "NotIn":
        want_in = False
    else:
        return None
    values = requirement.get("values")
    if not isinstance(values, list):
        values = []
    for key, is_init in _STATUS_KEYS:
        statuses = status.get(key)
        if not statuses or not isinstance(statuses, list):
            continue
        for cstatus in statuses:
            if not isinstance(cstatus, dict):
                continue
            state = cstatus.get("state")
            terminated = state.get("terminated") if isinstance(state, dict) else None
            if not isinstance(terminated, dict):
                continue
            name = cstatus.get("name") or ""
            if wanted_name is not None and name != wanted_name:
                continue
            code = terminated.get("exitCode") or 0
            if code == 0 or type(code) is not int:
                continue
            if (code in values) is want_in:
                return name, code, is_init
    return None


_STATUS_KEYS = (("containerStatuses", False), ("initContainerStatuses", True))


def _match_pod_conditions(patterns: Any, status: Obj) -> tuple[str, str] | None:
    """First pod condition (in pod order) equal in type and status to one of the patterns."""
    conditions = status.get("conditions")
    for cond in conditions if isinstance(conditions, list) else ():
        if not isinstance(cond, dict):
            continue
        for pattern in patterns:
            if not isinstance(pattern, dict):
                continue
            if cond.get("type") == pattern.get("type") and cond.get("status") == pattern.get("status", "True"):
                return str(cond.get("type")), str(cond.get("status"))
    return None
