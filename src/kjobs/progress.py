"""What `kjobs run` shows: pods per state, each failure decision with its reason, conditions as they appear.

`RunView` is fed the Job and its pods whenever they change; it derives the display (a rich table for a terminal,
plain lines otherwise) and remembers every failure it has explained, so the final summary can list them all.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.explanation import Explanation, explain
from kjobs.job import pods as P
from kjobs.job.context import backoff_limit, has_restart_limit, restart_policy
from kjobs.policy import FAIL_INDEX, FAIL_JOB, IGNORE, terminated_state

if TYPE_CHECKING:
    from rich.console import RenderableType

STATES = ("Pending", "Running", "Terminating", "Succeeded", "Failed")


def pod_state(pod: Obj) -> str:
    """The column a pod counts in."""
    return _state(P.phase(pod), P.is_deleting(pod))


def _state(phase: str, deleting: bool) -> str:
    """`pod_state` of a pod in `phase`, being deleted or not."""
    phase = phase or "Pending"
    if deleting and phase not in ("Succeeded", "Failed"):
        return "Terminating"
    return phase if phase in STATES else "Pending"


_STARTING = frozenset(("ContainerCreating", "PodInitializing"))


def blocked_reason(pod: Obj) -> str:
    """Why a Pending pod does not start, as `kubectl describe pod` would show it: the scheduler's
    `PodScheduled=False` condition (`unschedulable: 0/1 nodes are available: 1 Insufficient cpu. ...`), else the
    first container waiting for another reason than starting (`container main waiting: CreateContainerConfigError:
    configmap "app" not found`); '' when nothing holds it."""
    status = pod.get("status") or {}
    for cond in status.get("conditions") or ():
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            return f"{str(cond.get('reason') or 'unschedulable').lower()}: {cond.get('message', '')}".rstrip(": ")
    for key in ("initContainerStatuses", "containerStatuses"):
        for cs in status.get(key) or ():
            waiting = (cs.get("state") or {}).get("waiting") or {}
            reason = waiting.get("reason")
            if reason and reason not in _STARTING:
                message = f": {waiting['message']}" if waiting.get("message") else ""
                return f"container {cs.get('name', '')} waiting: {reason}{message}"
    return ""


@dataclass
class Decision:
    """One failed pod and what the Job's policy made of it: `cause` (why the pod failed) and `verdict` (what that
    does to the Job), each said once."""

    pod: str
    index: str | None
    explanation: Explanation
    cause: str = "failed"
    verdict: str = ""
    ended_by_job: str | None = None
    """`failed` or `succeeded`: the pod was ended by its Job's terminal state, not weighed by the policy."""

    def line(self) -> str:
        """One line for the log and the summary."""
        where = f" (index {self.index})" if self.index is not None else ""
        unmatched = (
            ", no rule matched"
            if self.explanation.rules and self.explanation.rule_index is None and not self.ended_by_job
            else ""
        )
        return f"pod {self.pod}{where} failed: {self.cause}{unmatched} → {self.verdict}"


def decide(job: Obj, pod: Obj, index: str | None) -> Decision:
    """Explain `pod`'s failure under `job`'s policy and phrase it for the run's log."""
    e = explain(job, pod)
    rules = ((job.get("spec") or {}).get("podFailurePolicy") or {}).get("rules") or []
    rule = (rules[e.rule_index] or {}) if e.rule_index is not None else {}
    exit_rule = rule.get("onExitCodes") is not None
    ended = _ended_by_finished_job(job, pod) or _past_completions(job, index)
    cause = failure_cause(pod, exit_rule=exit_rule, last_termination=has_restart_limit(job))
    matched = _matched_condition(rule, pod)
    if matched is not None and matched.get("type") != "DisruptionTarget":
        # the condition the rule matched (such as MaxRestartTimesExceeded), which the exits alone do not show
        cause += f", condition {matched.get('type')} ({matched.get('reason') or 'no reason'})"
    return Decision(
        str(pod["metadata"].get("name")),
        index,
        e,
        cause,
        ENDED_VERDICTS[ended] if ended else verdict(job, e, pod),
        ended,
    )


ENDED_VERDICTS = {
    "failed": "the Job had failed and ended the pod: counted as failed, not retried",
    "succeeded": "the Job had succeeded and ended the pod: not counted as failed",
    "scaled-down": "its index is past the Job's completions (scaled down): ended by the Job, not counted",
}


def _past_completions(job: Obj, index: str | None) -> str | None:
    """`scaled-down` for a pod of an Indexed Job whose index is no longer below `spec.completions` (an elastic
    Indexed Job scaled down, completions and parallelism together): the Job controller deletes it and removes
    its finalizer without counting it, failed or not (Kubernetes: pkg/controller/job/job_controller.go,
    `trackJobStatusAndRemoveFinalizers` counts only pods of a valid index)."""
    completions = (job.get("spec") or {}).get("completions")
    if index is None or not index.isdigit() or type(completions) is not int:
        return None
    return "scaled-down" if int(index) >= completions else None


def _matched_condition(rule: Obj, pod: Obj) -> Obj | None:
    """The pod's condition that the rule's `onPodConditions` matched (type and status), if any."""
    requirements = rule.get("onPodConditions")
    for req in requirements if isinstance(requirements, list) else ():
        cond = P.condition(pod, str((req or {}).get("type")))
        if cond is not None and cond.get("status") == ((req or {}).get("status") or "True"):
            return cond
    return None


def _ended_by_finished_job(job: Obj, pod: Obj) -> str | None:
    """`failed` for a pod the Job controller deleted because the Job failed (FailureTarget or Failed set, the pod
    terminating): it is counted in `status.failed` as it ends, and no policy rule is weighed for it; `succeeded`
    for one deleted because the Job met its success criteria (SuccessCriteriaMet or Complete, e.g. by a
    successPolicy): its finalizer is removed uncounted, so it counts toward no limit (Kubernetes:
    pkg/controller/job/job_controller.go, trackJobStatusAndRemoveFinalizers once the Job is finished). A pod
    deleted before the Job had ended (its deletion asked for before the condition, or a disruption's, carrying
    `DisruptionTarget`) was not ended by it: counted as it was deleted, it may be the failure that ends the Job."""
    if not pod["metadata"].get("deletionTimestamp"):
        return None
    target = P.condition(pod, "DisruptionTarget")
    if target is not None and target.get("status") == "True":
        return None  # deleted by a disruption (eviction, preemption, taint, pod GC): its failure may end the Job
    conditions = [c for c in (job.get("status") or {}).get("conditions") or [] if c.get("status") == "True"]
    requested = _deletion_requested(pod)
    for ending, types in (("failed", ("FailureTarget", "Failed")), ("succeeded", ("SuccessCriteriaMet", "Complete"))):
        since = [_time_or_none(c.get("lastTransitionTime")) for c in conditions if c.get("type") in types]
        if since and not (requested is not None and all(t is not None and requested < t for t in since)):
            return ending
    return None


def _time_or_none(stamp: object) -> float | None:
    try:
        return parse_time(stamp) if isinstance(stamp, str) else None
    except ValueError:
        return None


def _resource_version(obj: Obj) -> int:
    """An object's resourceVersion as a number (kjobs' store counts one revision for every kind, as etcd does);
    0 when it has none."""
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


def verdict(job: Obj, e: Explanation, pod: Obj | None = None) -> str:
    """What the failure does to the Job: the rule's action and its consequence, or the limit it counts toward
    (backoffLimitPerIndex for a Job that has one; Kubernetes: pkg/controller/job/pod_failure_policy.go). With
    backoffLimitPerIndex, the `pod`'s index failure count says whether this failure is the one that fails its
    index (as the Job's Event and `kjobs explain job` say)."""
    name = f' "{e.rule_name}"' if e.rule_name else ""
    rule = f"{e.action} by rule {e.rule_index}{name}: " if e.action is not None else ""
    if not e.pod_failed:
        return e.effect
    if e.action == FAIL_JOB:
        return f"{rule}the Job fails"
    if e.action == IGNORE:
        return f"{rule}not counted, the pod is replaced"
    if e.action == FAIL_INDEX:
        return f"{rule}the index fails, without retries"
    per_index = (job.get("spec") or {}).get("backoffLimitPerIndex")
    if per_index is not None:
        exhausted = pod is not None and P.index_failure_count(pod) >= per_index
        return f"{rule}counts toward backoffLimitPerIndex ({per_index})" + (": the index fails" if exhausted else "")
    return f"{rule}counts toward backoffLimit ({backoff_limit(job)})"


def restart_verdict(job: Obj) -> str:
    """What an in-place container restart does to the Job: under `restartPolicy: OnFailure` the Job counts the
    restarts of its running pods toward backoffLimit (Kubernetes: `pastBackoffLimitOnFailure`); with a pod
    restart limit it counts failed pods instead; a restart rule under `Never` is not a pod failure."""
    if has_restart_limit(job):
        template_spec = ((job.get("spec") or {}).get("template") or {}).get("spec") or {}
        return f"counts toward the pod's maxRestartTimes ({template_spec.get('maxRestartTimes')})"
    if restart_policy(job) == "OnFailure":
        return f"restarts count toward backoffLimit ({backoff_limit(job)})"
    return "restarted in place: not a pod failure"


def failure_cause(pod: Obj, *, exit_rule: bool = False, last_termination: bool = False) -> str:
    """Why the pod failed: the DisruptionTarget condition that marks a disruption (unless an exit-code rule
    matched, `exit_rule`), else each container's non-zero exit with the runtime's reason and message (its last
    termination with `last_termination`, `kjobs.policy`)."""
    target = P.condition(pod, "DisruptionTarget") if not exit_rule else None
    if target is not None and target.get("status") == "True":
        return f"DisruptionTarget ({target.get('reason') or 'no reason'})"
    return exit_summary(pod, last_termination=last_termination)


def exit_summary(pod: Obj, *, last_termination: bool = False) -> str:
    """`container main exited with code 128 (StartError: exec: "x": no such file or directory)`, or the pod's
    reason when no container terminated. An `Error` or `OOMKilled` exit shows its message's last line: that
    message is the end of the container's log (`terminationMessagePolicy: FallbackToLogsOnError`)."""
    parts = []
    status = P.status(pod)
    for key in ("initContainerStatuses", "containerStatuses"):
        for cs in status.get(key) or ():
            term = terminated_state(cs, last_termination) if isinstance(cs, dict) else None
            if isinstance(term, dict) and term.get("exitCode"):
                reason = str(term.get("reason") or "")
                lines = str(term.get("message") or "").strip().splitlines() or [""]
                message = lines[-1].strip() if reason in ("", "Error", "OOMKilled") else lines[0]
                if reason in ("", "Error"):
                    reason = "Error" if message else ""
                detail = f" ({reason}: {message})" if message else f" ({reason})" if reason else ""
                if not detail and term["exitCode"] == 137 and P.is_deleting(pod):
                    detail = _grace_kill(pod)
                parts.append(f"container {cs.get('name') or '<unnamed>'} exited with code {term['exitCode']}{detail}")
    if parts:
        return ", ".join(parts)
    if P.is_deleting(pod) and P.phase(pod) not in ("Succeeded", "Failed"):
        return f"deleted while {P.phase(pod) or 'Pending'}"
    return f"pod {status.get('reason') or 'failed'}"


def _grace_kill(pod: Obj) -> str:
    """Why a deleted pod's container ended 137 with no other reason: SIGKILLed at the end of its grace period, as
    SIGTERM did not end it (a container's first process ignores a signal it has no handler for, docs/sigterm42.md),
    or at once for a grace period of 0."""
    grace = (pod.get("metadata") or {}).get("deletionGracePeriodSeconds")
    if grace == 0:
        return " (SIGKILL: deleted with a grace period of 0)"
    within = f" of {grace}s" if isinstance(grace, int) and grace > 0 else ""
    return f" (SIGKILL at the end of its grace period{within}: SIGTERM did not end it)"


def _before_stop(pod: Obj) -> Obj:
    """`pod` with each container's termination by a stop signal (the node's SIGTERM or SIGKILL when the pod was
    deleted; `signal` is set, the reason is no OOMKilled) replaced by the termination before it, if any."""
    status = dict(P.status(pod))
    stop_begun = _deletion_requested(pod)
    for key in ("initContainerStatuses", "containerStatuses"):
        statuses = []
        for cs in status.get(key) or ():
            term = (cs.get("state") or {}).get("terminated") if isinstance(cs, dict) else None
            last = (cs.get("lastState") or {}).get("terminated") if isinstance(cs, dict) else None
            stopped = (
                isinstance(term, dict)
                and term.get("reason") != "OOMKilled"
                and (bool(term.get("signal")) or _ended_after(term, stop_begun))
            )
            statuses.append(dict(cs, state={"terminated": last} if last else {}, lastState={}) if stopped else cs)
        if key in status:
            status[key] = statuses
    return dict(pod, status=status)


_ENDING = {"FailureTarget": "Failed", "SuccessCriteriaMet": "Complete"}
"""The Job's interim conditions and the terminal condition each is followed by."""


def _deletion_requested(pod: Obj) -> float | None:
    """When the pod's deletion was asked for, to the second: its `deletionTimestamp` less its grace period."""
    meta = pod.get("metadata") or {}
    stamp, grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
    if not isinstance(stamp, str) or not isinstance(grace, int):
        return None
    try:
        return parse_time(stamp) - grace
    except ValueError:
        return None


def _ended_after(term: Obj, moment: float | None) -> bool:
    """Whether a termination's `finishedAt` is not before `moment` (an exit a SIGTERM handler made, `trap 'exit
    7' TERM`, carries no signal: it is the stop's if the container ended once the deletion was asked for)."""
    finished = term.get("finishedAt")
    if moment is None or not isinstance(finished, str):
        return False
    try:
        return parse_time(finished) >= moment
    except ValueError:
        return False


@dataclass(eq=False, repr=False)
class RunView:
    """The state of one `kjobs run`."""

    job: Obj
    pods: dict[str, Obj] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)
    _explained: set[str] = field(default_factory=set)
    _terminating: dict[str, Obj] = field(default_factory=dict)
    """Deleted pods not yet ended, as last seen so: the Job may count one as failed then (see `update_job`)."""
    _gone: dict[str, int] = field(default_factory=dict)
    """Of those, the ones whose object is gone, with the resourceVersion of their deletion."""
    _states: dict[str, str] = field(default_factory=dict)
    show_restarts: bool = False
    """Say each in-place container restart (`kjobs run`: under OnFailure they are what exceeds backoffLimit);
    `kjobs simulate` reads no lines and skips the look."""
    _restarts: dict[tuple[str, str], int] = field(default_factory=dict)
    _exits: dict[tuple[str, str], tuple[int, object]] = field(default_factory=dict)
    """(pod uid, container) -> (its restartCount, exit code) of the last exit seen, to say what a later
    restart followed when the restarted run has ended too by the time the restart is seen."""
    show_blocked: bool = False
    """Say why a pod does not start (`kjobs run`, which shows no Events): `Unschedulable` with the scheduler's
    message, a container waiting on its configuration (`CreateContainerConfigError`)."""
    _blocked: dict[str, str] = field(default_factory=dict)
    _unseen_end: dict[str, int] = field(default_factory=dict)
    """Pods explained when counted as failed while deleted before any exit of theirs was seen (`deleted while
    Pending`), by their decision's place in `decisions`: their final status may still show what they were."""
    _unhealthy: dict[tuple[str, str], str] = field(default_factory=dict)
    _probe_kills: dict[tuple[str, str], str] = field(default_factory=dict)
    """(pod uid, container) -> the last liveness or startup probe failure, and why the node killed the container
    (`container_event`), until a restart line or the pod's decision says it."""
    pod_lines: bool = True
    """Make `update_pod`'s lines about states and decisions (`kjobs run` prints them); `kjobs simulate` reads none
    (its trace is its own, from the same events) and turns them off: the decisions are kept all the same."""
    _limit_of: Obj | None = field(default=None, repr=False, compare=False)
    _limit: bool = field(default=False, repr=False, compare=False)
    """`has_restart_limit` of `_limit_of`, the Job it was last asked of."""

    def update_job(self, job: Obj) -> list[str]:
        """Take a new Job state; returns lines about conditions that appeared."""
        self.job = job
        lines = []
        for cond in (job.get("status") or {}).get("conditions") or ():
            text = f"{cond.get('type')}={cond.get('status')}"
            if cond.get("reason"):
                text += f" ({cond['reason']}"
                text += f": {cond['message']})" if cond.get("message") else ")"
            if text not in self.conditions:
                self.conditions.append(text)
                lines.append(f"job condition {text}")
                if cond.get("status") == "True" and cond.get("type") in _ENDING:
                    lines.extend(self._waiting_for_terminating(_ENDING[str(cond["type"])]))
        if self._terminating:
            lines.extend(self._counted_while_terminating(job))
        return lines

    def _waiting_for_terminating(self, ending: str) -> list[str]:
        """What the Job waits for after `FailureTarget`/`SuccessCriteriaMet`: since 1.31 its terminal condition
        is added once the pods it deleted have ended (pkg/controller/job/job_controller.go), and a container that
        takes no SIGTERM ends only when its grace period does (docs/sigterm42.md). Empty when none is terminating."""
        graces = [
            int(g) if isinstance(g := pod["metadata"].get("deletionGracePeriodSeconds"), int) else 0
            for uid, pod in self.pods.items()
            if self._states.get(uid) == "Terminating"
        ]
        if not graces:
            return []
        return [
            f"job waits for {len(graces)} terminating pod(s) before it is {ending}"
            f" (grace period up to {max(graces)}s: a container that takes no SIGTERM is SIGKILLed at its end)"
        ]

    def _counted_while_terminating(self, job: Obj) -> list[str]:
        """Decisions for deleted pods the Job counted as failed before they ended: without a podFailurePolicy
        (podReplacementPolicy TerminatingOrFailed) Kubernetes counts a terminating pod as failed at once
        (`isPodFailed`), and keeps it counted even if it then exits 0, so such a pod may never reach phase Failed.
        The pod is judged as it was when it was counted: deleted and not yet ended."""
        uncounted = ((job.get("status") or {}).get("uncountedTerminatedPods") or {}).get("failed") or ()
        lines = []
        for uid in uncounted:
            pod = self._terminating.pop(uid, None)
            self._gone.pop(uid, None)
            if pod is not None and uid not in self._explained:
                self._explained.add(uid)
                index = (pod["metadata"].get("annotations") or {}).get(JOB_COMPLETION_INDEX_ANNOTATION)
                decision = decide(job, pod, index)
                if decision.cause.startswith("deleted while ") and uid not in self._gone:
                    self._unseen_end[uid] = len(self.decisions)
                self.decisions.append(decision)
                lines.append(decision.line())
        if self._gone:
            # The Job's status is written before the finalizer's removal that lets a pod go, but the Job's and
            # the pods' events come apart: a gone pod is forgotten once a Job state newer than its deletion
            # did not count it.
            seen = _resource_version(job)
            for uid in [u for u, deleted_at in self._gone.items() if deleted_at < seen]:
                del self._gone[uid]
                self._terminating.pop(uid, None)
        return lines

    def update_pod(self, pod: Obj | None, *, deleted: Obj | None = None) -> list[str]:
        """Take a pod change; returns lines about state changes and new failure decisions."""
        if pod is None:
            if deleted is not None:
                uid = P.uid(deleted)  # read once: every pod GC delete comes here (docs/delete59.md)
                self.pods.pop(uid, None)
                if self._probe_kills or self._unhealthy:
                    self._forget_probes(uid)
                self._unseen_end.pop(uid, None)
                if uid in self._terminating:
                    self._gone[uid] = _resource_version(deleted)
            return []
        meta = pod["metadata"]
        return self.pod_changed(
            pod, P.uid(pod), str(meta.get("name")), P.phase(pod), bool(meta.get("deletionTimestamp"))
        )

    def pod_changed(self, pod: Obj, uid: str, name: str, phase: str, deleting: bool) -> list[str]:
        """`update_pod` of a pod (not None) whose uid, name, phase (`P.phase`; unset and `Pending` are one state
        here) and deletion (`P.is_deleting`) its caller has read already: `kjobs simulate`'s follower reads them
        for every event of every pod (`simulate/session.py`)."""
        lines: list[str] = []
        self.pods[uid] = pod
        if deleting and phase not in ("Succeeded", "Failed") and uid not in self._explained:
            self._terminating[uid] = pod
        # `_state`, inline
        if deleting and phase not in ("Succeeded", "Failed"):
            state = "Terminating"
        else:
            state = phase if phase in STATES else "Pending"
        if self.show_restarts:
            lines.extend(self._restart_lines(uid, name, pod))
        if self._states.get(uid) != state:
            self._states[uid] = state
            if self.pod_lines:
                grace = pod["metadata"].get("deletionGracePeriodSeconds") if state == "Terminating" else None
                lines.append(f"pod {name} {state}" + (f" (grace period {grace}s)" if isinstance(grace, int) else ""))
        if self.show_blocked and state == "Pending":
            blocked = blocked_reason(pod)
            if blocked and self._blocked.get(uid) != blocked:
                self._blocked[uid] = blocked
                lines.append(f"pod {name} {blocked}")
        if uid in self._unseen_end and phase in ("Succeeded", "Failed"):
            lines.extend(self._seen_end(uid, name, pod))
        if self._limit_of is not self.job:  # asked on every pod event; the Job changes far less often
            self._limit_of, self._limit = self.job, has_restart_limit(self.job)
        if uid not in self._explained and (phase == "Failed" or (self._limit and self._fails_job_in_place(pod))):
            self._explained.add(uid)
            self._terminating.pop(uid, None)
            index = (pod["metadata"].get("annotations") or {}).get(JOB_COMPLETION_INDEX_ANNOTATION)
            decision = decide(self.job, pod, index)
            if self._probe_kills:
                decision = replace(decision, cause=decision.cause + self._probe_kill_notes(uid, pod))
            self.decisions.append(decision)
            if self.pod_lines:
                lines.append(decision.line())
        return lines

    def container_event(self, pod: Obj, kind: str, reason: str, message: str, container: str) -> None:
        """The node agent's events about a container (`NodeAgent.container_events`): a container its liveness or
        startup probe killed ends with a plain exit code (143 or 137), and `kjobs run` shows no Events, so the
        kill is said with the exit: `killed after its liveness probe failed (Liveness probe failed: ...)`, what
        `kubectl describe pod` shows on a cluster as the kubelet's `Unhealthy` and `Killing` events
        (pkg/kubelet/prober/prober.go, pkg/kubelet/kuberuntime/kuberuntime_manager.go `computePodActions`)."""
        key = (P.uid(pod), container)
        if reason == "Unhealthy" and message.startswith(("Liveness probe failed", "Startup probe failed")):
            self._unhealthy[key] = message
        elif reason == "Killing" and message.startswith(f"Container {container} failed "):
            which = message.removeprefix(f"Container {container} failed ").split(",", 1)[0]  # `liveness probe`
            # on one line (a probe's output often ends with a newline); an exec probe that printed nothing: no `: `
            why = " ".join(self._unhealthy.pop(key, "").split()).removesuffix(":")
            self._probe_kills[key] = f"killed after its {which} failed" + (f" ({why})" if why else "")

    def _forget_probes(self, uid: str) -> None:
        for table in (self._probe_kills, self._unhealthy):
            for key in [k for k in table if k[0] == uid]:
                del table[key]

    def _probe_kill_notes(self, uid: str, pod: Obj) -> str:
        """`, killed after its liveness probe failed (...)` for each of the pod's containers a probe killed."""
        notes: list[str] = []
        for key in ("initContainerStatuses", "containerStatuses"):
            for cs in P.status(pod).get(key) or ():
                note = self._probe_kills.pop((uid, str(cs.get("name"))), None)
                if note:
                    notes.append(f", container {cs.get('name')} {note}" if notes else f", {note}")
        return "".join(notes)

    def _seen_end(self, uid: str, name: str, pod: Obj) -> list[str]:
        """The end of a pod explained as `deleted while Pending` (its status not yet published when the Job
        counted it): the exit its final status shows before the deletion's stop, which the Job controller may
        have seen (its Event then says `exit main=9`). The decision stands; its cause is what the pod was."""
        at = self._unseen_end.pop(uid)
        cause = exit_summary(_before_stop(pod), last_termination=True)
        if cause.startswith(("deleted while ", "pod ")):  # no exit of its own: as said
            return []
        self.decisions[at] = replace(self.decisions[at], cause=cause)
        return [f"pod {name} had failed before its deletion stopped it: {cause}"]

    def _restart_lines(self, uid: str, name: str, pod: Obj) -> list[str]:
        """A line for each container whose restartCount grew since the pod was last seen."""
        lines = []
        status = P.status(pod)
        for key in ("initContainerStatuses", "containerStatuses"):
            for cs in status.get(key) or ():
                count = cs.get("restartCount") or 0
                seen = (uid, str(cs.get("name")))
                # lastState is the exit that caused this restart only while the container runs again; once it
                # exited anew (waiting in back-off, or terminated), the newest exit is that of run `count`, and
                # the one this restart followed is the exit of run `count - 1`, if an earlier status showed it.
                term = (cs.get("lastState") or {}).get("terminated") or {}
                state = cs.get("state") or {}
                running = "running" in state
                previous = self._exits.get(seen)
                newest = term if "waiting" in state else state.get("terminated")
                if isinstance(newest, dict) and "exitCode" in newest:
                    self._exits[seen] = (count, newest["exitCode"])
                elif running and "exitCode" in term:
                    self._exits[seen] = (count - 1, term["exitCode"])
                if count <= self._restarts.get(seen, 0):
                    continue
                self._restarts[seen] = count
                index = (pod["metadata"].get("annotations") or {}).get(JOB_COMPLETION_INDEX_ANNOTATION)
                where = f" (index {index})" if index is not None else ""
                code = (
                    term.get("exitCode") if running else previous[1] if previous and previous[0] == count - 1 else None
                )
                exited = f"after exit code {code}, " if code is not None else ""
                killed = self._probe_kills.pop(seen, None) if self._probe_kills else None
                lines.append(
                    f"pod {name}{where} container {cs.get('name')} restarted ({exited}restartCount {count})"
                    + (f": {killed}" if killed else "")
                    + f" → {restart_verdict(self.job)}"
                )
        return lines

    def _fails_job_in_place(self, pod: Obj) -> bool:
        """A pod restarting in place under a restart limit whose last termination matches a FailJob rule
        (docs/onfailure-pod-failure-policy.md): its decision is shown now, not when the pod is gone. Asked only
        under a restart limit (`_limit`, which `pod_changed` keeps for the Job's state)."""
        return explain(self.job, pod).action == FAIL_JOB

    def forget_pods(self) -> None:
        """Drop the pods seen (the Job, its conditions and the decisions stay): for a view kept after its run."""
        self.pods.clear()
        self._states.clear()

    def counts(self) -> Counter[str]:
        """Pods per state."""
        return Counter(pod_state(p) for p in self.pods.values())

    def finished(self) -> str | None:
        """`Complete` or `Failed` once the Job has that condition."""
        for cond in (self.job.get("status") or {}).get("conditions") or ():
            if cond.get("type") in ("Complete", "Failed") and cond.get("status") == "True":
                return str(cond["type"])
        return None

    def renderable(self) -> RenderableType:
        """The live view for a terminal (rich is imported here: plain output, when piped, does without it)."""
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        status = self.job.get("status") or {}
        counts = self.counts()
        table = Table(title=f"Job {self.job['metadata']['namespace']}/{self.job['metadata']['name']}", expand=False)
        for state in STATES:
            table.add_column(state, justify="right")
        table.add_row(*(str(counts.get(s, 0)) for s in STATES))
        totals = Text(
            f"status: active {status.get('active', 0)}  succeeded {status.get('succeeded', 0)}  "
            f"failed {status.get('failed', 0)}  terminating {status.get('terminating', 0)}"
        )
        parts: list[RenderableType] = [table, totals]
        if status.get("completedIndexes") or status.get("failedIndexes"):
            parts.append(
                Text(
                    f"completedIndexes {status.get('completedIndexes') or '-'}  "
                    f"failedIndexes {status.get('failedIndexes') or '-'}"
                )
            )
        for line in self.conditions[-4:]:
            parts.append(Text(f"condition {line}", style="bold"))
        for decision in self.decisions[-6:]:
            parts.append(Text(decision.line(), style="yellow"))
        return Group(*parts)

    def summary(self) -> str:
        """The final report: outcome, counters, and every failure decision explained."""
        status = self.job.get("status") or {}
        meta = self.job["metadata"]
        outcome = self.finished() or "Unfinished"
        cond: Obj = next(
            (c for c in status.get("conditions") or () if c.get("type") == outcome and c.get("status") == "True"),
            {},
        )
        lines = [f"Job {meta['namespace']}/{meta['name']}: {outcome}"]
        if cond:
            lines.append(f"  reason: {cond.get('reason', '')}")
            if cond.get("message"):
                lines.append(f"  message: {cond['message']}")
        lines.append(
            f"  succeeded: {status.get('succeeded', 0)}  failed: {status.get('failed', 0)}"
            + (f"  completedIndexes: {status['completedIndexes']}" if status.get("completedIndexes") else "")
            + (f"  failedIndexes: {status['failedIndexes']}" if status.get("failedIndexes") else "")
        )
        # An Ignore rule's pods only: a pod the finished Job ended was weighed by no rule, whatever it counts.
        ignored = sum(1 for d in self.decisions if d.explanation.action == IGNORE and not d.ended_by_job)
        # Pods the Job itself ended (after it failed or met its success criteria, or past its completions) are
        # Failed pods, but not failures of the workload: said apart, so a Complete Job's summary does not read as
        # a list of failures only.
        ended = sum(1 for d in self.decisions if d.ended_by_job)
        if self.decisions:
            lines.append(
                f"  failures: {len(self.decisions)} pod(s) failed, {ignored} ignored by the policy"
                + (f", {ended} ended by the Job" if ended else "")
            )
            for decision in self.decisions:
                lines.append(f"  - {decision.line()}")
        else:
            lines.append("  failures: none")
        return "\n".join(lines)
