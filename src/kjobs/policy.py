"""Pod failure policy matching: what a Job's `spec.podFailurePolicy` does with one failed pod.

Mirrors Kubernetes' `matchPodFailurePolicy` (pkg/controller/job/pod_failure_policy.go): rules are tried in order;
the first whose exit-code or pod-condition requirement matches decides. The result also records *what* matched
(container, exit code, range, condition, the rule's name), so that `kjobs explain` and `kjobs run` can say why.

kjobs' extensions, read from the fields whenever present (their gates are enforced by the API, which drops or
rejects them when off; README "Feature gates"): `onExitCodes.valueRanges` (`ExitCodeRanges`: `In` matches a code
inside any value or range, `NotIn` a code outside all of them), and `last_termination` for Jobs whose pods restart
in place under a restart limit (`JobPodFailurePolicyOnFailure`, docs/onfailure-pod-failure-policy.md): a container
that is not terminated now is judged by its `lastState.terminated`.
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
    value_range: tuple[int, int] | None = None
    """The `valueRanges` item an `In` rule matched the exit code with (None: a listed value, or `NotIn`)."""
    rule_name: str | None = None
    """The matched rule's optional `name` (gate `PodFailurePolicyRuleName`)."""


NO_MATCH = PolicyDecision(action=None, count_failed=True)


def match_pod_failure_policy(policy: Obj | None, pod: Obj, *, last_termination: bool = False) -> PolicyDecision:
    """Decide what `policy` (a `spec.podFailurePolicy`, or None) does with the failed `pod`.

    `last_termination`: also read a container's `lastState.terminated` when its `state` is not terminated (a pod
    whose containers restart in place, see the module note)."""
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
            found = (
                _match_exit_codes(on_exit_codes, status, last_termination) if isinstance(on_exit_codes, dict) else None
            )
            if found is None:
                continue
            return _decide(action, index, rule, pod, found, None)
        patterns = rule.get("onPodConditions")
        cond = _match_pod_conditions(patterns if isinstance(patterns, list) else (), status)
        if cond is None:
            continue
        return _decide(action, index, rule, pod, None, cond)
    return NO_MATCH


@dataclass(frozen=True, slots=True)
class _ExitMatch:
    container: str
    code: int
    init: bool
    value_range: tuple[int, int] | None


def _decide(
    action: str, index: int, rule: Obj, pod: Obj, found: _ExitMatch | None, cond: tuple[str, str] | None
) -> PolicyDecision:
    container = found.container if found else None
    code = found.code if found else None
    cond_type, cond_status = cond if cond else (None, None)
    message = None
    if action == FAIL_JOB:
        meta = pod.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        where = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
        if cond is not None:
            message = f"Pod {where} has condition {cond_type} matching FailJob rule at index {index}"
        else:
            message = (
                f"Container {container} for pod {where} failed with exit code {code} "
                f"matching FailJob rule at index {index}"
            )
    name = rule.get("name")
    return PolicyDecision(
        action,
        action != IGNORE,
        message,
        index,
        container,
        code,
        found.init if found else False,
        cond_type,
        cond_status,
        found.value_range if found else None,
        name if isinstance(name, str) and name else None,
    )


def exit_code_ranges(requirement: Obj) -> list[tuple[int, int]]:
    """The well-formed `valueRanges` items of an `onExitCodes` requirement, as (from, to) pairs."""
    raw = requirement.get("valueRanges")
    ranges = []
    for item in raw if isinstance(raw, list) else ():
        if isinstance(item, dict):
            low, high = item.get("from"), item.get("to")
            if type(low) is int and type(high) is int and low <= high:
                ranges.append((low, high))
    return ranges


def terminated_state(cstatus: Obj, last_termination: bool) -> Obj | None:
    """A container status's `state.terminated`, else (with `last_termination`) its `lastState.terminated`."""
    for key in ("state", "lastState") if last_termination else ("state",):
        state = cstatus.get(key)
        terminated = state.get("terminated") if isinstance(state, dict) else None
        if isinstance(terminated, dict):
            return terminated
    return None


def _match_exit_codes(requirement: Obj, status: Obj, last_termination: bool) -> _ExitMatch | None:
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
    ranges = exit_code_ranges(requirement)
    for key, is_init in _STATUS_KEYS:
        statuses = status.get(key)
        if not statuses or not isinstance(statuses, list):
            continue
        for cstatus in statuses:
            if not isinstance(cstatus, dict):
                continue
            terminated = terminated_state(cstatus, last_termination)
            if terminated is None:
                continue
            name = cstatus.get("name") or ""
            if wanted_name is not None and name != wanted_name:
                continue
            code = terminated.get("exitCode") or 0
            if code == 0 or type(code) is not int:
                continue
            in_range = next((r for r in ranges if r[0] <= code <= r[1]), None)
            if (code in values or in_range is not None) is want_in:
                return _ExitMatch(name, code, is_init, in_range if want_in and code not in values else None)
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
