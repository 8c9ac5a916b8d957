"""Every failed pod's decision, explained: which podFailurePolicy rule matched, its action, and the effect on the
Job's counters.

The Job controller records one `FailureDecision` per failed pod at the moment it accounts for the pod (its tracking
finalizer is removed, `kjobs.job.execute.run_tracking`): an Event on the Job and the
`kjobs_job_pod_failure_policy_decisions_total{action,rule}` counter. `kjobs explain job` recomputes the same
decision from a pod that still exists, and parses the Event (`parse_event_message`) for a pod that is gone. The
matching itself is `kjobs.policy` (Kubernetes' `matchPodFailurePolicy`, pkg/controller/job/pod_failure_policy.go);
the event reasons are kjobs' own, documented in README.md ("kjobs explain").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kjobs.api.types import Obj
from kjobs.job import pods as P
from kjobs.job.context import has_backoff_limit_per_index, has_restart_limit, is_indexed, match_policy, spec_of
from kjobs.policy import COUNT, FAIL_INDEX, FAIL_JOB, IGNORE, PolicyDecision, terminated_state

NO_RULE_MATCHED = "NoRuleMatched"
"""`action` when the Job has a podFailurePolicy and none of its rules matched the pod."""
NO_POLICY = "NoPolicy"
"""`action` when the Job has no podFailurePolicy."""

REASONS = {
    IGNORE: "PodFailurePolicyIgnore",
    COUNT: "PodFailurePolicyCount",
    FAIL_INDEX: "PodFailurePolicyFailIndex",
    FAIL_JOB: "PodFailurePolicyFailJob",
    NO_RULE_MATCHED: "PodFailurePolicyNoMatch",
    NO_POLICY: "PodFailureCounted",
}
"""Event reason per action (CamelCase, as Kubernetes' Job controller words its reasons)."""

NOT_COUNTED = "not counted toward any backoff limit"
COUNTED = "counted toward backoffLimit"
JOB_FAILED = "Job failed"
JOB_FAILING = "counted in status.failed: the Job is failing"


@dataclass(frozen=True, slots=True)
class FailureDecision:
    """What the Job controller decided for one failed pod, in the words the Event, the metric and
    `kjobs explain job` share."""

    pod: str
    index: int | None
    failure: str
    action: str
    rule: int | None
    rule_name: str | None
    effect: str

    @property
    def rule_label(self) -> str:
        """The metric's `rule` label: the rule's name, else its index, else `none`."""
        if self.rule_name:
            return self.rule_name
        return str(self.rule) if self.rule is not None else "none"

    @property
    def event_type(self) -> str:
        """Warning when the decision failed an index or the Job, Normal otherwise."""
        return "Warning" if self.effect == JOB_FAILED or self.effect.startswith("index ") else "Normal"

    @property
    def reason(self) -> str:
        """The Event reason (see `REASONS`)."""
        return REASONS.get(self.action, REASONS[NO_POLICY])

    def message(self) -> str:
        """The Event message; `parse_event_message` reads it back."""
        where = f" (index {self.index})" if self.index is not None else ""
        if self.rule is None:
            which = "no rule matched" if self.action == NO_RULE_MATCHED else "no podFailurePolicy"
        else:
            name = f' "{self.rule_name}"' if self.rule_name else ""
            which = f"rule {self.rule}{name} ({self.action})"
        return f"Pod {self.pod}{where} failed ({self.failure}): {which}: {self.effect}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (camelCase keys)."""
        return {
            "pod": self.pod,
            "index": self.index,
            "failure": self.failure,
            "rule": self.rule,
            "ruleName": self.rule_name,
            "action": self.action,
            "effect": self.effect,
        }


def decide(job: Obj, pod: Obj, *, failing: bool = False, decision: PolicyDecision | None = None) -> FailureDecision:
    """The decision for a failed `pod` of `job`; `failing` when the pod only counts as failed because the Job is
    finishing with a failure (its running pods are counted failed, `trackJobStatusAndRemoveFinalizers`).
    `decision` is the policy match when the caller already has it."""
    policy = spec_of(job).get("podFailurePolicy")
    if decision is None:
        decision = match_policy(job, pod)
    index = P.completion_index(pod) if is_indexed(job) else None
    if index == P.UNKNOWN_INDEX:
        index = None
    if decision.action is not None:
        action = decision.action
    else:
        action = NO_RULE_MATCHED if isinstance(policy, dict) else NO_POLICY
    return FailureDecision(
        pod=str(P.meta(pod).get("name") or ""),
        index=index,
        failure=describe_failure(pod, decision, last_termination=has_restart_limit(job)),
        action=action,
        rule=decision.rule_index,
        rule_name=decision.rule_name,
        effect=_effect(job, pod, decision, index, failing=failing),
    )


def _effect(job: Obj, pod: Obj, decision: PolicyDecision, index: int | None, *, failing: bool) -> str:
    if decision.action == FAIL_JOB:
        return JOB_FAILED
    if decision.action == IGNORE:
        return NOT_COUNTED
    if decision.action == FAIL_INDEX:
        return f"index {index} failed"
    if failing and P.phase(pod) != "Failed":
        return JOB_FAILING
    if has_backoff_limit_per_index(job) and index is not None:
        limit = int(spec_of(job).get("backoffLimitPerIndex") or 0)
        if P.index_failure_count(pod) >= limit:
            return f"index {index} failed: backoffLimitPerIndex ({limit}) reached"
        return f"counted toward backoffLimitPerIndex of index {index}"
    return COUNTED


def describe_failure(pod: Obj, decision: PolicyDecision | None = None, *, last_termination: bool = False) -> str:
    """The pod's failure in a few words: the matched condition, else its containers' non-zero exit codes (their
    last terminations with `last_termination`, `kjobs.policy`), else its status reason."""
    if decision is not None and decision.condition_type is not None:
        return f"condition {decision.condition_type}={decision.condition_status}"
    status = P.status(pod)
    codes = []
    for key, prefix in (("initContainerStatuses", "init "), ("containerStatuses", "")):
        for cstatus in status.get(key) or ():
            if not isinstance(cstatus, dict):
                continue
            terminated = terminated_state(cstatus, last_termination)
            if terminated is not None and terminated.get("exitCode"):
                name, code = cstatus.get("name") or "<unnamed>", terminated.get("exitCode")
                codes.append(f"{prefix}{name}={code}{_in_range(decision, name, code, bool(prefix))}")
    if codes:
        return "exit " + ", ".join(codes)
    for cond in status.get("conditions") or ():
        if isinstance(cond, dict) and cond.get("type") == "DisruptionTarget" and cond.get("status") == "True":
            return "condition DisruptionTarget=True"
    if status.get("reason"):
        return f"reason {status['reason']}"
    if P.phase(pod) == "Failed":
        return "no exit code"
    # A pod counted failed before it ended: deleted (`kubectl delete pod`, a drain without a policy: Kubernetes
    # counts a terminating pod as failed unless podReplacementPolicy is Failed), or running while the Job fails.
    phase = P.phase(pod) or "Pending"
    return f"deleted while {phase}" if P.meta(pod).get("deletionTimestamp") else f"phase {phase}"


def _in_range(decision: PolicyDecision | None, name: str, code: Any, init: bool) -> str:
    """` in 40-49` after the exit code an `In` rule matched by its range (gate ExitCodeRanges)."""
    if decision is None or decision.value_range is None:
        return ""
    if (decision.container_name, decision.exit_code, decision.init_container) != (name, code, init):
        return ""
    return f" in {decision.value_range[0]}-{decision.value_range[1]}"


_MESSAGE = re.compile(
    r"^Pod (?P<pod>\S+)(?: \(index (?P<index>\d+)\))? failed \((?P<failure>.*)\): "
    r'(?:rule (?P<rule>\d+)(?: "(?P<name>[^"]*)")? \((?P<action>\w+)\)|(?P<none>no rule matched|no podFailurePolicy))'
    r": (?P<effect>.+)$"
)


def parse_event_message(message: str) -> FailureDecision | None:
    """The decision an Event message (`FailureDecision.message`) records, or None for any other message (an
    aggregated one, "(combined from similar events): ...", names only its latest pod)."""
    found = _MESSAGE.match(message)
    if found is None:
        return None
    rule = found["rule"]
    if rule is not None:
        action = found["action"]
    else:
        action = NO_RULE_MATCHED if found["none"] == "no rule matched" else NO_POLICY
    return FailureDecision(
        pod=found["pod"],
        index=int(found["index"]) if found["index"] is not None else None,
        failure=found["failure"],
        action=action,
        rule=int(rule) if rule is not None else None,
        rule_name=found["name"] or None,
        effect=found["effect"],
    )
