"""`kjobs run`'s view model: states, one explanation per failed pod, and the final summary."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.explanation import explain
from kjobs.job.context import has_restart_limit
from kjobs.progress import RunView, exit_summary, pod_state
from tests.core.test_onfailure_restart_limit import FAIL_JOB_42
from tests.core.test_onfailure_restart_limit import job as restart_limit_job
from tests.core.test_onfailure_restart_limit import pod as restarting_pod


def job(**status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "demo", "namespace": "default", "uid": "u"},
        "spec": {
            "backoffLimit": 6,
            "podReplacementPolicy": "Failed",
            "podFailurePolicy": {
                "rules": [
                    {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}},
                    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
                ]
            },
        },
        "status": status,
    }


def pod(
    name: str, phase: str, code: int | None = None, *, deleting: bool = False, disrupted: bool = False
) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if code is not None:
        status["containerStatuses"] = [{"name": "main", "state": {"terminated": {"exitCode": code}}}]
    if disrupted:
        status["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}]
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": name}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": status}


def test_states() -> None:
    assert pod_state(pod("a", "Running", deleting=True)) == "Terminating"
    assert pod_state(pod("a", "Failed", 1, deleting=True)) == "Failed"
    assert pod_state({"metadata": {"name": "x"}}) == "Pending"


def test_each_failed_pod_is_explained_once() -> None:
    view = RunView(job())
    assert view.update_pod(pod("a", "Running")) == ["pod a Running"]
    lines = view.update_pod(pod("a", "Failed", 42))
    assert lines[0] == "pod a Failed"
    assert lines[1] == "pod a failed: container main exited with code 42 → FailJob by rule 0: the Job fails"
    assert view.update_pod(pod("a", "Failed", 42)) == []
    lines = view.update_pod(pod("b", "Failed", 143, disrupted=True))
    assert (
        lines[-1]
        == "pod b failed: DisruptionTarget (EvictionByEvictionAPI) → Ignore by rule 1: not counted, the pod is replaced"
    )
    assert len(view.decisions) == 2


def test_summary_reports_outcome_counts_and_decisions() -> None:
    view = RunView(job())
    view.update_pod(pod("a", "Failed", 1))
    finished = job(
        failed=1,
        conditions=[
            {
                "type": "FailureTarget",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
            },
            {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
            },
        ],
    )
    assert view.update_job(finished) == [
        "job condition FailureTarget=True (BackoffLimitExceeded: Job has reached the specified backoff limit)",
        "job condition Failed=True (BackoffLimitExceeded: Job has reached the specified backoff limit)",
    ]
    assert view.finished() == "Failed"
    summary = view.summary().splitlines()
    assert summary[0] == "Job default/demo: Failed"
    assert summary[1] == "  reason: BackoffLimitExceeded"
    assert "  failures: 1 pod(s) failed, 0 ignored by the policy" in summary
    assert (
        "  - pod a failed: container main exited with code 1, no rule matched → counts toward backoffLimit (6)"
        in summary
    )


FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
"""The index's failures before this pod's, as the Job controller annotates a replacement."""
DISRUPTED = {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}
LIMIT = {"type": "MaxRestartTimesExceeded", "status": "True", "reason": "ExceedMaxRestartTimes"}


def failed(code: int, **terminated: Any) -> dict[str, Any]:
    state = {"terminated": {"exitCode": code, **terminated}}
    meta = {"name": "p", "namespace": "default", "uid": "p", "annotations": {}}
    return {"metadata": meta, "status": {"phase": "Failed", "containerStatuses": [{"name": "main", "state": state}]}}


def spec(**fields: Any) -> dict[str, Any]:
    return {"metadata": {"name": "demo", "namespace": "default", "uid": "u"}, "spec": fields, "status": {}}


def rule(action: str, *codes: int) -> dict[str, Any]:
    return {"action": action, "onExitCodes": {"operator": "In", "values": list(codes)}}


@pytest.mark.parametrize(
    ("job_spec", "pod", "line"),
    [
        (
            {"backoffLimit": 2},
            failed(128, reason="StartError", message='exec: "/app/bin/train": no such file or directory'),
            'pod p failed: container main exited with code 128 (StartError: exec: "/app/bin/train": no such file '
            "or directory) → counts toward backoffLimit (2)",
        ),
        (
            {},
            failed(137, reason="OOMKilled"),
            "pod p failed: container main exited with code 137 (OOMKilled) → counts toward backoffLimit (6)",
        ),
        (
            {},
            {**failed(143), "status": {**failed(143)["status"], "conditions": [DISRUPTED]}},
            "pod p failed: DisruptionTarget (EvictionByEvictionAPI) → counts toward backoffLimit (6)",
        ),
        (
            {"backoffLimit": 1, "podFailurePolicy": {"rules": [rule("Count", 3)]}},
            failed(3),
            "pod p failed: container main exited with code 3 → Count by rule 0: counts toward backoffLimit (1)",
        ),
        (
            {"podFailurePolicy": {"rules": [rule("Ignore", 4)]}},
            failed(3),
            "pod p failed: container main exited with code 3, no rule matched → counts toward backoffLimit (6)",
        ),
        (
            {"podFailurePolicy": {"rules": [rule("Ignore", 4)]}},
            failed(4),
            "pod p failed: container main exited with code 4 → Ignore by rule 0: not counted, the pod is replaced",
        ),
        (
            {"podFailurePolicy": {"rules": [rule("FailJob", 42)]}},
            failed(42),
            "pod p failed: container main exited with code 42 → FailJob by rule 0: the Job fails",
        ),
        (
            {"completionMode": "Indexed", "backoffLimitPerIndex": 1},
            failed(1),
            "pod p (index 5) failed: container main exited with code 1 → counts toward backoffLimitPerIndex (1)",
        ),
        (
            {"completionMode": "Indexed", "backoffLimitPerIndex": 1},
            {**failed(1), "metadata": {**failed(1)["metadata"], "annotations": {FAILURE_COUNT: "1"}}},
            "pod p (index 5) failed: container main exited with code 1 → counts toward backoffLimitPerIndex (1): "
            "the index fails",
        ),
        (
            {"completionMode": "Indexed", "backoffLimitPerIndex": 1, "podFailurePolicy": {"rules": [rule("Count", 1)]}},
            failed(1),
            "pod p (index 5) failed: container main exited with code 1 → Count by rule 0: counts toward "
            "backoffLimitPerIndex (1)",
        ),
        (
            {
                "completionMode": "Indexed",
                "backoffLimitPerIndex": 1,
                "podFailurePolicy": {"rules": [rule("FailIndex", 42)]},
            },
            failed(42),
            "pod p (index 5) failed: container main exited with code 42 → FailIndex by rule 0: the index fails, "
            "without retries",
        ),
        (
            # a rule on the restart limit's condition: the line names it, as the Job's Event does
            {"podFailurePolicy": {"rules": [{"action": "FailJob", "onPodConditions": [{"type": LIMIT["type"]}]}]}},
            {**failed(3), "status": {**failed(3)["status"], "conditions": [LIMIT, DISRUPTED | {"status": "False"}]}},
            "pod p failed: container main exited with code 3, condition MaxRestartTimesExceeded "
            "(ExceedMaxRestartTimes) → FailJob by rule 0: the Job fails",
        ),
    ],
    ids=[
        "start-error",
        "no-policy",
        "disrupted-no-policy",
        "count",
        "no-match",
        "ignore",
        "failjob",
        "per-index",
        "per-index-exhausted",
        "per-index-count",
        "failindex",
        "condition-rule",
    ],
)
def test_each_decision_is_said_once(job_spec: dict[str, Any], pod: dict[str, Any], line: str) -> None:
    if job_spec.get("completionMode") == "Indexed":
        pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] = "5"
    view = RunView(spec(podReplacementPolicy="Failed", **job_spec))
    assert view.update_pod(pod)[-1] == line


def test_live_line_names_the_rule() -> None:
    named = job()
    named["spec"]["podFailurePolicy"]["rules"][0]["name"] = "bad-input"
    lines = RunView(named).update_pod(pod("a", "Failed", 42))
    assert (
        lines[-1] == 'pod a failed: container main exited with code 42 → FailJob by rule 0 "bad-input": the Job fails'
    )


def test_failjob_in_place_is_shown_while_the_pod_runs() -> None:
    """OnFailure with a restart limit: the termination with 42 fails the Job although the pod keeps running."""
    limited = job()
    limited["spec"]["template"] = {"spec": {"restartPolicy": "OnFailure", "maxRestartTimes": 3}}
    running = pod("a", "Running")
    running["status"]["containerStatuses"] = [
        {"name": "main", "restartCount": 1, "state": {"running": {}}, "lastState": {"terminated": {"exitCode": 1}}}
    ]
    view = RunView(limited)
    assert view.update_pod(running) == ["pod a Running"]
    running["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] = 42
    assert view.update_pod(running) == [
        "pod a failed: container main exited with code 42 → FailJob by rule 0: the Job fails"
    ]


@pytest.mark.parametrize(
    ("terminated", "said"),
    [
        ({"exitCode": 3, "reason": "Error"}, "container main exited with code 3"),
        (
            {"exitCode": 3, "reason": "Error", "message": "starting\nTraceback: boom\nValueError: bad input\n"},
            "container main exited with code 3 (Error: ValueError: bad input)",
        ),
        ({"exitCode": 137, "reason": "OOMKilled", "message": "a\nallocating 2 GiB\n"}, "(OOMKilled: allocating 2 GiB)"),
        (
            {"exitCode": 128, "reason": "StartError", "message": 'exec: "x": not found\nmore'},
            '(StartError: exec: "x": not found)',
        ),
    ],
)
def test_an_exit_is_said_with_the_line_of_its_message_that_explains_it(terminated: dict[str, Any], said: str) -> None:
    """A FallbackToLogsOnError message is the end of the log: its last line is shown; a runtime's message
    (StartError) starts with what went wrong."""
    pod = {"status": {"containerStatuses": [{"name": "main", "state": {"terminated": terminated}}]}}
    assert exit_summary(pod).endswith(said)


def test_a_pod_ended_because_the_job_failed_is_not_said_to_count_toward_a_limit() -> None:
    failing = job()
    failing["status"] = {"conditions": [{"type": "FailureTarget", "status": "True", "reason": "PodFailurePolicy"}]}
    view = RunView(failing)
    line = view.update_pod(pod("b", "Failed", 143, deleting=True))[-1]
    assert line == (
        "pod b failed: container main exited with code 143 → the Job had failed and ended the pod: counted as "
        "failed, not retried"
    )
    assert (
        RunView(job()).update_pod(pod("c", "Failed", 143, deleting=True))[-1].endswith("counts toward backoffLimit (6)")
    )


def test_a_pod_ended_because_the_job_succeeded_is_said_not_to_count() -> None:
    """A successPolicy met (SuccessCriteriaMet) deletes the other indexes' pods; Kubernetes removes their
    finalizers uncounted (status.failed stays 0), so their line names no backoff limit."""
    succeeded = job()
    succeeded["status"] = {"conditions": [{"type": "SuccessCriteriaMet", "status": "True", "reason": "SuccessPolicy"}]}
    view = RunView(succeeded)
    line = view.update_pod(pod("d", "Failed", 143, deleting=True))[-1]
    assert line == (
        "pod d failed: container main exited with code 143 → the Job had succeeded and ended the pod: not counted "
        "as failed"
    )


def test_an_in_place_restart_is_said_with_what_it_counts_toward() -> None:
    """Under `restartPolicy: OnFailure` the Job fails on its running pods' restarts (pastBackoffLimitOnFailure),
    so `kjobs run` says each, with the exit it followed: lastState while the restarted container runs, else the
    exit of the run before, when an earlier status showed it (lastState is then a newer exit, not restarted yet)."""
    on_failure = job()
    on_failure["spec"]["template"] = {"spec": {"restartPolicy": "OnFailure"}}
    view = RunView(on_failure, show_restarts=True)
    running = pod("a", "Running")
    running["status"]["containerStatuses"] = [
        {"name": "main", "restartCount": 1, "state": {"running": {}}, "lastState": {"terminated": {"exitCode": 3}}}
    ]
    assert view.update_pod(running) == [
        "pod a container main restarted (after exit code 3, restartCount 1) → restarts count toward backoffLimit (6)",
        "pod a Running",
    ]
    assert view.update_pod(running) == []
    running["status"]["containerStatuses"][0].update(
        restartCount=2, state={"waiting": {"reason": "CrashLoopBackOff"}}, lastState={"terminated": {"exitCode": 4}}
    )
    assert view.update_pod(running) == [
        "pod a container main restarted (restartCount 2) → restarts count toward backoffLimit (6)"
    ]
    # A container that exits as it starts (`sh -c 'exit 3'`) is seen waiting, never running: the exit its next
    # restart followed is the one an earlier status showed (run 2's 4 here), not the newest (run 3's 5).
    running["status"]["containerStatuses"][0].update(restartCount=3, lastState={"terminated": {"exitCode": 5}})
    assert view.update_pod(running) == [
        "pod a container main restarted (after exit code 4, restartCount 3) → restarts count toward backoffLimit (6)"
    ]
    never = job()
    never["spec"]["template"] = {"spec": {"restartPolicy": "Never"}}
    assert RunView(never, show_restarts=True).update_pod(running)[0].endswith("restarted in place: not a pod failure")
    limited = job()
    limited["spec"]["template"] = {"spec": {"restartPolicy": "OnFailure", "maxRestartTimes": 3}}
    assert (
        RunView(limited, show_restarts=True)
        .update_pod(running)[0]
        .endswith("counts toward the pod's maxRestartTimes (3)")
    )
    assert RunView(on_failure).update_pod(running) == ["pod a Running"]


def test_a_deleted_pod_counted_failed_before_it_ended_is_explained_even_if_it_then_exits_0() -> None:
    """Without a podFailurePolicy Kubernetes counts a terminating pod as failed at once (status.failed), and it
    stays counted if it then exits 0: `kjobs run` explains it when the Job counts it, judged as it was then, even
    when the pod's deletion is seen before the Job's status that counted it."""
    plain = {"metadata": {"name": "demo", "namespace": "default", "uid": "u"}, "spec": {"backoffLimit": 6}}
    view = RunView({**plain, "status": {}})
    deleting = pod("e", "Running", deleting=True)
    deleting["metadata"]["resourceVersion"] = "10"
    view.update_pod(pod("e", "Running"))
    assert view.update_pod(deleting) == ["pod e Terminating"]
    succeeded = pod("e", "Succeeded", 0, deleting=True)
    succeeded["metadata"]["resourceVersion"] = "12"
    assert view.update_pod(succeeded) == ["pod e Succeeded"]
    assert view.update_pod(None, deleted=succeeded) == []
    counted = {**plain, "metadata": {**plain["metadata"], "resourceVersion": "11"}}
    counted["status"] = {"uncountedTerminatedPods": {"failed": ["e"]}}
    assert view.update_job(counted) == ["pod e failed: deleted while Running → counts toward backoffLimit (6)"]
    assert view.update_job({**counted, "status": {"failed": 1}}) == []
    assert len(view.decisions) == 1


def test_a_gone_pod_the_job_did_not_count_is_forgotten() -> None:
    view = RunView(job())
    gone = pod("f", "Running", deleting=True)
    gone["metadata"]["resourceVersion"] = "5"
    view.update_pod(gone)
    view.update_pod(None, deleted=gone)
    newer = job()
    newer["metadata"]["resourceVersion"] = "6"
    assert view.update_job(newer) == []
    assert not view._terminating and not view._gone


def test_a_pod_the_failed_job_ended_is_not_counted_as_ignored_by_the_policy() -> None:
    """Under a podFailurePolicy a terminating pod is not failed yet (podReplacementPolicy Failed), so its
    explanation counts toward no limit; that does not make it one the policy ignored."""
    failing = job()
    failing["status"] = {
        "conditions": [{"type": "FailureTarget", "status": "True", "reason": "MaxFailedIndexesExceeded"}],
        "uncountedTerminatedPods": {"failed": ["g"]},
    }
    view = RunView(job())
    view.update_pod(pod("g", "Running", deleting=True))
    assert view.update_job(failing)[-1] == (
        "pod g failed: deleted while Running → the Job had failed and ended the pod: counted as failed, not retried"
    )
    assert "  failures: 1 pod(s) failed, 0 ignored by the policy, 1 ended by the Job\n" in view.summary() + "\n"


UNSCHEDULABLE = (
    "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims "
    "found for incoming pod."
)


def test_a_pending_pod_says_once_why_it_does_not_start() -> None:
    """`kjobs run` shows no Events: a pod too big for the node, or waiting for a missing ConfigMap, stayed
    `Pending` in silence until --timeout (for ever without one)."""
    view = RunView(job(), show_blocked=True)
    big = pod("big", "Pending")
    big["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": UNSCHEDULABLE}
    ]
    assert view.update_pod(big) == ["pod big Pending", f"pod big unschedulable: {UNSCHEDULABLE}"]
    assert view.update_pod(big) == []
    waiting = pod("cfg", "Pending")
    waiting["status"]["containerStatuses"] = [
        {"name": "main", "state": {"waiting": {"reason": "ContainerCreating"}}},
    ]
    assert view.update_pod(waiting) == ["pod cfg Pending"]
    waiting["status"]["containerStatuses"][0]["state"]["waiting"] = {
        "reason": "CreateContainerConfigError",
        "message": 'configmap "app" not found',
    }
    assert view.update_pod(waiting) == [
        'pod cfg container main waiting: CreateContainerConfigError: configmap "app" not found'
    ]


def test_a_pod_counted_while_deleted_before_its_status_was_seen_is_said_to_be_what_it_was() -> None:
    """A FailJob deletes the Job's other pods; one whose container had exited 9 and was restarting, with no status
    published yet, is counted failed while `Pending`. Its final status shows the exit 9 (the restarted run then
    stopped by the deletion's SIGTERM): `kjobs run` says so, as the Job controller's Event does on `kjobs up`."""
    limited = job()
    limited["spec"]["template"] = {"spec": {"restartPolicy": "OnFailure", "maxRestartTimes": 2}}
    failing = dict(limited)
    failing["status"] = {
        "conditions": [{"type": "FailureTarget", "status": "True", "reason": "PodFailurePolicy"}],
        "uncountedTerminatedPods": {"failed": ["h"]},
    }
    view = RunView(limited)
    view.update_pod(pod("h", "Pending", deleting=True))
    assert view.update_job(failing)[-1].startswith("pod h failed: deleted while Pending → ")
    ended = pod("h", "Failed", deleting=True)
    ended["status"]["containerStatuses"] = [
        {
            "name": "main",
            "restartCount": 1,
            "state": {"terminated": {"exitCode": 143, "reason": "Error", "signal": 15}},
            "lastState": {"terminated": {"exitCode": 9, "reason": "Error"}},
        }
    ]
    lines = view.update_pod(ended)
    assert "pod h had failed before its deletion stopped it: container main exited with code 9" in lines
    assert [d.line() for d in view.decisions] == [
        f"pod h failed: container main exited with code 9 → {view.decisions[0].verdict}"
    ]
    assert len(view.decisions) == 1


def test_a_pod_counted_while_deleted_that_only_the_deletion_stopped_stays_deleted_while_running() -> None:
    failing = job()
    failing["status"] = {
        "conditions": [{"type": "FailureTarget", "status": "True", "reason": "MaxFailedIndexesExceeded"}],
        "uncountedTerminatedPods": {"failed": ["k"]},
    }
    view = RunView(job())
    view.update_pod(pod("k", "Running", deleting=True))
    view.update_job(failing)
    stopped = pod("k", "Failed", deleting=True)
    stopped["status"]["containerStatuses"] = [
        {"name": "main", "state": {"terminated": {"exitCode": 143, "reason": "Error", "signal": 15}}}
    ]
    assert view.update_pod(stopped) == ["pod k Failed"]
    assert view.decisions[0].cause == "deleted while Running"


def test_the_view_asks_each_new_job_state_whether_it_has_a_restart_limit() -> None:
    """`_fails_job_in_place` remembers `has_restart_limit` for the Job state it was asked of (docs/perf48.md):
    a Job state that gains or loses the limit (`update_job`) is asked again, as the plain form asked on every pod
    event, so a running pod whose last exit matches a FailJob rule is explained exactly when the Job has it."""
    limited = restart_limit_job(rules=FAIL_JOB_42)
    unlimited = restart_limit_job(limit=None, rules=FAIL_JOB_42)
    for states in ([unlimited, limited], [limited], [unlimited, unlimited, limited], [limited, unlimited]):
        view = RunView(states[0])
        explained = []
        for n, state in enumerate(states):
            view.update_job(state)
            running = restarting_pod(f"p{n}", restarts=1, last=42)
            plain = has_restart_limit(view.job) and explain(view.job, running).action == "FailJob"
            before = len(view.decisions)
            view.update_pod(running)
            explained.append(len(view.decisions) > before)
            assert explained[-1] == plain == (state is limited)
