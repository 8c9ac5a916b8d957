"""`kjobs explain` as a user runs it: example manifests, JSON output, and clear errors on bad input."""

from __future__ import annotations

from pathlib import Path

import orjson
from click.testing import CliRunner

from kjobs.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_failjob_on_exit_42_explained() -> None:
    code, out, _ = run(
        "explain", "--job", str(EXAMPLES / "failjob-exit-42.yaml"), "--pod", str(EXAMPLES / "pods/failed-exit-42.yaml")
    )
    assert code == 0
    assert "Decision: FailJob (rule 0)" in out
    assert "container main exited with code 42" in out
    assert (
        "Container main for pod default/job-pod-failure-policy-failjob-8f6vd failed with exit code 42 "
        "matching FailJob rule at index 0" in out
    )


def test_disruption_ignored_json() -> None:
    code, out, _ = run(
        "explain",
        "--job",
        str(EXAMPLES / "ignore-disruptions.yaml"),
        "--pod",
        str(EXAMPLES / "pods/evicted-by-drain.yaml"),
        "-o",
        "json",
    )
    assert code == 0
    body = orjson.loads(out)
    assert body["action"] == "Ignore"
    assert body["countsTowardBackoffLimit"] is False
    assert body["ruleIndex"] == 0
    assert body["ruleName"] is None
    assert body["matched"] == "pod condition DisruptionTarget=True"
    assert body["rules"] == [
        {
            "index": 0,
            "name": None,
            "action": "Ignore",
            "matched": True,
            "reason": "pod condition DisruptionTarget=True: the pod has it",
        }
    ]


def test_running_pod_is_not_evaluated(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: Running}\n")
    code, out, _ = run("explain", "--job", str(EXAMPLES / "failjob-exit-42.yaml"), "--pod", str(pod))
    assert code == 0
    assert "not failed (phase Running)" in out


def test_a_running_pod_of_a_job_without_a_policy_is_not_said_to_be_evaluated_by_one(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: Running}\n")
    code, out, _ = run("explain", "--job", str(EXAMPLES / "count-with-backoff-limit.yaml"), "--pod", str(pod))
    assert code == 0
    assert out == "Pod default/p:\n  not failed (phase Running): the Job controller counts only failed pods\n"


def test_a_job_without_a_policy_says_so_rather_than_no_rule_matched() -> None:
    code, out, _ = run(
        "explain",
        "--job",
        str(EXAMPLES / "count-with-backoff-limit.yaml"),
        "--pod",
        str(EXAMPLES / "pods/failed-exit-42.yaml"),
    )
    assert code == 0
    assert "  Decision: no podFailurePolicy\n" in out
    assert "no rule matched" not in out
    assert "Counts toward backoffLimit: yes" in out


_INDEXED_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default, annotations: {batch.kubernetes.io/job-completion-index: "3"}}
spec: {restartPolicy: Never, containers: [{name: main, image: x}]}
status:
  phase: Failed
  containerStatuses:
  - {name: main, image: x, imageID: "", ready: false, restartCount: 0, state: {terminated: {exitCode: CODE}}}
"""


def test_a_failindex_pod_is_said_to_fail_its_index_at_once_not_to_count_toward_backoff_limit(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    job = str(EXAMPLES / "failindex-per-index.yaml")
    pod.write_text(_INDEXED_POD.replace("CODE", "42"))
    code, out, _ = run("explain", "--job", job, "--pod", str(pod))
    assert code == 0
    assert "Decision: FailIndex (rule 0)" in out
    assert "backoffLimit:" not in out
    assert (
        "  Counts toward backoffLimitPerIndex: no: FailIndex fails the index at once"
        " (the pod is counted in status.failed)\n" in out
    )
    assert (
        orjson.loads(run("explain", "--job", job, "--pod", str(pod), "-o", "json")[1])[
            "countsTowardBackoffLimitPerIndex"
        ]
        is False
    )
    pod.write_text(_INDEXED_POD.replace("CODE", "1"))
    code, out, _ = run("explain", "--job", job, "--pod", str(pod))
    assert "  Counts toward backoffLimitPerIndex: yes\n" in out


def test_bad_yaml_is_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("spec:\n  template: [unclosed\n")
    code, out, err = run("explain", "--job", str(bad), "--pod", str(EXAMPLES / "pods/failed-exit-42.yaml"))
    assert code == 2
    assert err.startswith(f"error: {bad}: invalid YAML (line ")
    assert "Traceback" not in out + err


def test_missing_file(tmp_path: Path) -> None:
    code, _, err = run("explain", "--job", str(tmp_path / "nope.yaml"), "--pod", str(tmp_path / "nope.yaml"))
    assert code == 2
    assert "does not exist" in err


def test_explain_without_a_form_is_a_usage_error() -> None:
    code, _, err = run("explain")
    assert code == 2
    assert "give --job and --pod, or use `kjobs explain job NAME`" in err


def test_the_two_forms_do_not_mix() -> None:
    code, _, err = run("explain", "--job", str(EXAMPLES / "failjob-exit-42.yaml"), "job", "work")
    assert code == 2
    assert "use one" in err


def test_explain_job_without_a_kubeconfig_says_so(tmp_path: Path) -> None:
    code, _, err = run("explain", "job", "work", "--kubeconfig", str(tmp_path / "missing"))
    assert code == 2
    assert f"error: kubeconfig {tmp_path / 'missing'} does not exist" in err


def test_help_shows_both_forms() -> None:
    code, out, _ = run("explain", "--help")
    assert code == 0
    assert "kjobs explain job NAME [-n NAMESPACE]" in out
    assert "job  List a Job's failed pods" in out


def test_a_condition_present_with_another_status_is_named_not_said_missing(tmp_path: Path) -> None:
    """`DisruptionTarget=False` on the pod is why a `DisruptionTarget` (True) rule did not match: the trace says so
    rather than that the pod has no such condition."""
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nstatus:\n  phase: Failed\n"
        "  conditions: [{type: DisruptionTarget, status: 'False'}]\n"
        "  containerStatuses: [{name: main, state: {terminated: {exitCode: 143}}}]\n"
    )
    code, out, _ = run("explain", "--job", str(EXAMPLES / "ignore-disruptions.yaml"), "--pod", str(pod))
    assert code == 0
    assert "· [0] Ignore: pod condition DisruptionTarget=True: the pod has DisruptionTarget=False\n" in out
    code, out, _ = run(
        "explain",
        "--job",
        str(EXAMPLES / "ignore-disruptions.yaml"),
        "--pod",
        str(EXAMPLES / "pods/failed-exit-42.yaml"),
    )
    assert "pod condition DisruptionTarget=True: the pod has no such condition" in out


def test_a_policy_the_api_would_refuse_is_an_error_not_a_rule_that_matched_nothing(tmp_path: Path) -> None:
    """`values: "42"` (a string) would be explained as `exit code In 42 ... no match`; the API server refuses
    the Job, and so does explain, with `kjobs validate`'s messages (after defaulting: a pattern's status is True;
    a containerName is not checked without a template)."""
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  podFailurePolicy:\n    rules:\n"
        "    - {action: FailJob, onExitCodes: {containerName: nope, operator: In, values: '42'}}\n"
        "    - {action: Ignore, onPodConditions: [{type: DisruptionTarget}]}\n"
    )
    code, _, err = run("explain", "--job", str(job), "--pod", str(EXAMPLES / "pods/failed-exit-42.yaml"))
    assert code == 2
    assert err == (
        f'error: {job}: The Job "x" is invalid: \n'
        '* spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: "42": must be of type array\n'
        "* spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []: at least one value is required\n"
    )


def test_a_failed_containers_termination_message_is_shown(tmp_path: Path) -> None:
    """The failure line of `kjobs run` (its exit code, reason and the last line of its termination message, e.g.
    from `terminationMessagePolicy: FallbackToLogsOnError`) in `kjobs explain`; before, only the decision."""
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
        "spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}\n"
        "status:\n  phase: Failed\n  containerStatuses:\n  - name: main\n    state:\n      terminated:\n"
        '        exitCode: 3\n        reason: Error\n        message: "loading\\nerror: model file missing\\n"\n'
    )
    code, out, _ = run("explain", "--job", str(EXAMPLES / "failjob-exit-42.yaml"), "--pod", str(pod))
    assert code == 0, out
    assert "  Failure:  container main exited with code 3 (Error: error: model file missing)\n" in out
    code, out, _ = run("explain", "--job", str(EXAMPLES / "failjob-exit-42.yaml"), "--pod", str(pod), "-o", "json")
    assert orjson.loads(out)["failure"] == "container main exited with code 3 (Error: error: model file missing)"
