"""`kjobs explain`: what a Job's podFailurePolicy does with one failed pod, and why.

Works on any pod JSON/YAML, including `kubectl get pod -o yaml` from a real cluster. The verdict is the policy
matcher's (`kjobs.policy`); this module adds the reasoning a person wants: whether the pod is failed at all,
each rule's evaluation in order, and the consequence for the Job.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kjobs.api.types import Obj
from kjobs.job.context import backoff_limit, has_restart_limit, is_pod_failed, match_policy
from kjobs.policy import (
    FAIL_INDEX,
    FAIL_JOB,
    IGNORE,
    PolicyDecision,
    exit_code_ranges,
    match_pod_failure_policy,
    terminated_state,
)


@dataclass(frozen=True)
class RuleTrace:
    """One rule's evaluation: did it match this pod, and a sentence saying what it looked at."""

    index: int
    action: str
    matched: bool
    reason: str
    name: str | None = None


@dataclass(frozen=True)
class Explanation:
    """The verdict for one pod, with the rule-by-rule reasoning and the effect on the Job."""

    pod: str
    pod_failed: bool
    action: str | None
    counts_toward_backoff_limit: bool
    rule_index: int | None
    message: str | None
    matched: str | None
    effect: str
    rules: list[RuleTrace] = field(default_factory=list)
    rule_name: str | None = None
    has_policy: bool = True
    """False when the Job has no podFailurePolicy: the verdict then says so rather than "no rule matched"."""
    counts_toward_index_limit: bool | None = None
    """With `backoffLimitPerIndex` (None without): whether the failure adds to its index's failure count. What
    limits an index is that count, not `backoffLimit` (a replacement's count is its predecessor's, plus one when
    that failure counts: `getNewIndexFailureCounts`, pkg/controller/job/indexed_job_utils.go); a FailIndex pod
    fails its index at once and gets no replacement, so the count does not matter to it."""
    failure: str | None = None
    """How the failed pod ended, as `kjobs run` says it (`container main exited with code 3 (Error: <the last line
    of its termination message>)`, `kjobs.progress.exit_summary`)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (camelCase keys, as Kubernetes tools print)."""
        raw = asdict(self)
        return {
            "pod": raw["pod"],
            "podFailed": raw["pod_failed"],
            "action": raw["action"],
            "countsTowardBackoffLimit": raw["counts_toward_backoff_limit"],
            "countsTowardBackoffLimitPerIndex": raw["counts_toward_index_limit"],
            "ruleIndex": raw["rule_index"],
            "ruleName": raw["rule_name"],
            "message": raw["message"],
            "matched": raw["matched"],
            "effect": raw["effect"],
            "failure": raw["failure"],
            "rules": [
                {
                    "index": r["index"],
                    "name": r["name"],
                    "action": r["action"],
                    "matched": r["matched"],
                    "reason": r["reason"],
                }
                for r in raw["rules"]
            ],
        }

    def render(self) -> str:
        """Human-readable text."""
        lines = [f"Pod {self.pod}:"]
        if not self.pod_failed:
            lines.append(f"  {self.effect}")
            return "\n".join(lines)
        verdict = self.action or ("no rule matched" if self.has_policy else "no podFailurePolicy")
        which = "" if self.rule_index is None else f" (rule {self.rule_index}{_quoted(self.rule_name)})"
        if self.failure:
            lines.append(f"  Failure:  {self.failure}")
        lines.append(f"  Decision: {verdict}{which}")
        if self.matched:
            lines.append(f"  Matched:  {self.matched}")
        if self.counts_toward_index_limit is None:
            lines.append(f"  Counts toward backoffLimit: {'yes' if self.counts_toward_backoff_limit else 'no'}")
        elif self.action == FAIL_INDEX:
            lines.append(
                "  Counts toward backoffLimitPerIndex: no: FailIndex fails the index at once"
                " (the pod is counted in status.failed)"
            )
        else:
            lines.append(f"  Counts toward backoffLimitPerIndex: {'yes' if self.counts_toward_index_limit else 'no'}")
        lines.append(f"  Effect:   {self.effect}")
        if self.message:
            lines.append(f"  Message:  {self.message}")
        if self.rules:
            lines.append("  Rules:")
            for rule in self.rules:
                mark = "✔" if rule.matched else "·"
                lines.append(f"    {mark} [{rule.index}{_quoted(rule.name)}] {rule.action}: {rule.reason}")
        return "\n".join(lines)


def explain(job: Obj, pod: Obj) -> Explanation:
    """Explain what `job`'s pod failure policy does with `pod`."""
    meta = pod.get("metadata") or {}
    name = f"{meta.get('namespace') or 'default'}/{meta.get('name') or '<unnamed>'}"
    spec = job.get("spec") or {}
    policy = spec.get("podFailurePolicy")
    phase = (pod.get("status") or {}).get("phase") or "<none>"
    job_for_failure = with_policy_default(job)
    decision = match_policy(job, pod)
    in_place = has_restart_limit(job) and decision.action == FAIL_JOB
    if not in_place and not is_pod_failed(pod, job_for_failure):
        # Without a podFailurePolicy there is nothing to evaluate: the controller counts failed pods.
        weighs, weighed = ("counts only", "counted")
        if policy:
            weighs, weighed = ("evaluates its podFailurePolicy only for", "evaluated")
        effect = f"not failed (phase {phase}): the Job controller {weighs} failed pods"
        if meta.get("deletionTimestamp"):
            effect += f"; a deleted pod is {weighed} once it reaches phase Failed"
        if has_restart_limit(job):
            effect += "; its containers restart in place, and only a FailJob rule is applied to their terminations"
        return Explanation(name, False, None, False, None, None, None, effect)
    from kjobs.progress import exit_summary  # progress renders explanations: imported here, not at the top

    last = has_restart_limit(job)
    traces = [
        _trace(i, rule, pod, last) for i, rule in enumerate((policy or {}).get("rules") or ()) if isinstance(rule, dict)
    ]
    return Explanation(
        pod=name,
        pod_failed=True,
        action=decision.action,
        counts_toward_backoff_limit=decision.count_failed,
        rule_index=decision.rule_index,
        message=decision.message,
        matched=_describe_match(decision),
        effect=_effect(job, decision, policy is not None),
        rules=traces,
        rule_name=decision.rule_name,
        has_policy=policy is not None,
        counts_toward_index_limit=(
            None
            if spec.get("backoffLimitPerIndex") is None
            else decision.count_failed and decision.action != FAIL_INDEX
        ),
        failure=exit_summary(pod),
    )


def _quoted(name: str | None) -> str:
    return f' "{name}"' if name else ""


def with_policy_default(job: Obj) -> Obj:
    """The Job with podReplacementPolicy's default (Failed with a policy) applied when unset: an undefaulted
    manifest, or a Job read from an API server older than the field."""
    spec = job.get("spec") or {}
    if spec.get("podReplacementPolicy"):
        return job
    default = "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"
    return dict(job, spec=dict(spec, podReplacementPolicy=default))


def _describe_match(decision: PolicyDecision) -> str | None:
    if decision.rule_index is None:
        return None
    if decision.condition_type is not None:
        return f"pod condition {decision.condition_type}={decision.condition_status}"
    kind = "init container" if decision.init_container else "container"
    text = f"{kind} {decision.container_name or '<unnamed>'} exited with code {decision.exit_code}"
    if decision.value_range is not None:
        text += f" (in range {decision.value_range[0]}-{decision.value_range[1]})"
    return text


def _effect(job: Obj, decision: PolicyDecision, has_policy: bool) -> str:
    limit = backoff_limit(job)
    per_index = (job.get("spec") or {}).get("backoffLimitPerIndex")
    if decision.action == FAIL_JOB:
        return "the Job fails: FailureTarget (reason PodFailurePolicy), its running pods are deleted, then Failed"
    if decision.action == IGNORE:
        return "ignored: not counted in status.failed nor toward any backoff limit; the pod is replaced"
    if decision.action == FAIL_INDEX:
        return "the pod's index is marked failed at once (status.failedIndexes) and is not retried"
    prefix = (
        "counted (rule action Count)"
        if decision.action
        else ("counted: no rule matched" if has_policy else "counted: the Job has no podFailurePolicy")
    )
    if per_index is not None:
        return f"{prefix}; the index is retried until it has failed backoffLimitPerIndex+1 = {int(per_index) + 1} times"
    return f"{prefix}; the Job fails once status.failed exceeds backoffLimit ({limit})"


def _trace(index: int, rule: Obj, pod: Obj, last_termination: bool) -> RuleTrace:
    action = str(rule.get("action") or "")
    alone = match_pod_failure_policy({"rules": [rule]}, pod, last_termination=last_termination)
    matched = alone.rule_index is not None
    if rule.get("onExitCodes") is not None:
        req = rule["onExitCodes"]
        who = f"container {req['containerName']}" if req.get("containerName") else "any container"
        ranges = "".join(f" or {low}-{high}" for low, high in exit_code_ranges(req))
        what = f"exit code {req.get('operator')} {req.get('values')}{ranges} in {who}"
        reason = f"{what}: " + (f"{_describe_match(alone)}" if matched else _exit_summary(pod, last_termination))
    else:
        patterns = ", ".join(
            f"{p.get('type')}={p.get('status', 'True')}"
            for p in rule.get("onPodConditions") or ()
            if isinstance(p, dict)
        )
        reason = f"pod condition {patterns}: " + ("the pod has it" if matched else _condition_miss(rule, pod))
    name = rule.get("name")
    return RuleTrace(index, action, matched, reason, name if isinstance(name, str) and name else None)


def _condition_miss(rule: Obj, pod: Obj) -> str:
    """Why no pattern of an onPodConditions rule matched: the status the pod has for those types (a condition
    present with another status, such as `DisruptionTarget=False`, is not "no such condition")."""
    have = {
        c.get("type"): c.get("status") for c in (pod.get("status") or {}).get("conditions") or () if isinstance(c, dict)
    }
    wanted = [p.get("type") for p in rule.get("onPodConditions") or () if isinstance(p, dict)]
    found = [f"{t}={have[t]}" for t in dict.fromkeys(wanted) if t in have]
    return f"the pod has {', '.join(found)}" if found else "the pod has no such condition"


def _exit_summary(pod: Obj, last_termination: bool) -> str:
    codes = []
    status = pod.get("status") or {}
    for key in ("containerStatuses", "initContainerStatuses"):
        for cs in status.get(key) or ():
            term = terminated_state(cs, last_termination) if isinstance(cs, dict) else None
            if isinstance(term, dict):
                codes.append(f"{cs.get('name') or '<unnamed>'}={term.get('exitCode', 0)}")
    return (
        "no match (terminated containers: " + (", ".join(codes) if codes else "none") + "; exit code 0 never matches)"
    )
