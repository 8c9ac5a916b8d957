"""Stop 35's trial (docs/trial-stop35.md): Jobs written from kubernetes.io's pages and the KEPs, run through
`kjobs validate`, `run`, `explain` and `simulate` as a new user would, each test failing before its fix."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kjobs.cli import main

LONG = "long-name-for-the-job-that-is-more-than-sixty-three-characters-long-x"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def job(name: str, spec: str = "", restart: str = "Never") -> str:
    return f"""\
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
spec:
{spec}
  template:
    spec:
      restartPolicy: {restart}
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "exit 0"]
"""


WRONG_CONTAINER = job(
    "wrong-container",
    """  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {containerName: mian, operator: In, values: [42]}""",
)
WRONG_CONTAINER_ERROR = (
    'The Job "wrong-container" is invalid: spec.podFailurePolicy.rules[0].onExitCodes.containerName: '
    'Invalid value: "mian": must be one of the container or initContainer names in the pod template'
)


def test_one_error_is_printed_on_the_line_of_its_object_as_kubectl_prints_it(tmp_path: Path) -> None:
    """kubectl's `MultilineError` puts a single cause after `The Job "x" is invalid: ` (helpers.go); it was
    printed as a `* ` list of one."""
    manifest = tmp_path / "wrong.yaml"
    manifest.write_text(WRONG_CONTAINER)
    code, out, _ = run("validate", str(manifest))
    assert (code, out) == (1, f"{manifest}: {WRONG_CONTAINER_ERROR}\n")
    code, _, err = run("run", str(manifest))
    assert (code, err) == (2, f"error: {manifest}: {WRONG_CONTAINER_ERROR}\n")
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: main}]}\n")
    code, _, err = run("explain", "--job", str(manifest), "--pod", str(pod))
    assert (code, err) == (2, f"error: {manifest}: {WRONG_CONTAINER_ERROR}\n")


def test_an_error_repeated_among_the_causes_is_printed_once(tmp_path: Path) -> None:
    """A Job name over 63 characters breaks both `job-name` labels of the pod template: two causes with the same
    field and message, which kubectl's `statusCausesToAggrError` prints once (kubernetes/kubernetes#50850 shows
    the one line)."""
    manifest = tmp_path / "long.yaml"
    manifest.write_text(job(LONG))
    code, out, _ = run("validate", str(manifest))
    assert (code, out) == (
        1,
        f'{manifest}: The Job "{LONG}" is invalid: spec.template.labels: Invalid value: "{LONG}": '
        "must be no more than 63 bytes\n",
    )


def test_several_errors_follow_the_prefix_with_its_trailing_space(tmp_path: Path) -> None:
    manifest = tmp_path / "neg.yaml"
    manifest.write_text(job("neg", "  parallelism: -1\n  completions: -2"))
    code, out, _ = run("validate", str(manifest))
    assert (code, out) == (
        1,
        f'{manifest}: The Job "neg" is invalid: \n'
        "* spec.parallelism: Invalid value: -1: must be greater than or equal to 0\n"
        "* spec.completions: Invalid value: -2: must be greater than or equal to 0\n",
    )


def test_a_served_run_ends_a_watch_still_open_without_a_traceback(tmp_path: Path) -> None:
    """`kubectl get pods -w` against `kjobs run --serve` as the README shows it: when the Job ended, uvicorn's
    shutdown waited 2 s for the open watch, then cancelled it and printed `Exception in ASGI application` with a
    traceback on the run's stderr. The run now ends its watches first, as `kjobs up` does."""
    import subprocess
    import sys
    import threading

    import httpx

    from kjobs.client.kubeconfig import load

    manifest = tmp_path / "sleepy.yaml"
    manifest.write_text(job("sleepy").replace('["sh", "-c", "exit 0"]', '["sleep", "1.5"]'))
    kubeconfig = tmp_path / "kc"
    args = ["run", str(manifest), "--plain", "--serve", "0", "--kubeconfig", str(kubeconfig)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kjobs", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    events: list[bytes] = []
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        assert first.startswith("serving the API on "), first
        url = first.removeprefix("serving the API on ").split(";")[0]
        connection = load(kubeconfig)

        def watch() -> None:
            with (
                httpx.Client(base_url=url, verify=connection.ssl_context or False, timeout=30) as http,
                http.stream("GET", "/api/v1/namespaces/default/pods?watch=1") as response,
            ):
                for chunk in response.iter_bytes():
                    events.append(chunk)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        out, err = proc.communicate(timeout=60)
        watcher.join(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "Job default/sleepy: Complete\n" in out
    assert events, "the watch saw the pod"
    assert not watcher.is_alive(), "the watch stream was ended by the server"
    assert "Traceback" not in err and "Exception in ASGI application" not in err, err


MANAGED = job("managed", "  managedBy: example.com/custom-controller")


def test_run_of_a_job_another_controller_manages_says_why_no_pod_starts(tmp_path: Path) -> None:
    """The Jobs page's managedBy example: the built-in controller skips the Job, so the run waited in silence
    until --timeout (as it did for `suspend: true` before that got its warning)."""
    manifest = tmp_path / "managed.yaml"
    manifest.write_text(MANAGED)
    code, out, err = run("run", str(manifest), "--plain", "--timeout", "0.5")
    assert code == 1
    assert err.startswith(
        "warning: the Job is managed by example.com/custom-controller (spec.managedBy): the built-in Job "
        "controller leaves it alone, as kube-controller-manager's does, so no pod starts unless that controller "
        "reconciles it (with --serve PORT: `kjobs controller --kubeconfig FILE --managed-by "
        "example.com/custom-controller`); Ctrl-C or --timeout ends the run\n"
    )
    assert "Job default/managed: Unfinished\n" in out
    builtin = tmp_path / "builtin.yaml"
    builtin.write_text(job("builtin", "  managedBy: kubernetes.io/job-controller"))
    code, _, err = run("run", str(builtin), "--plain")
    assert code == 0 and "managed by" not in err


def test_simulate_of_a_job_another_controller_manages_ends_at_once(tmp_path: Path) -> None:
    """It ran virtual heartbeats towards the 720 h time limit for minutes of wall time; now it ends once the
    Job is created, reported as at --time-limit, with the warning `kjobs run` gives."""
    import time

    manifest = tmp_path / "managed.yaml"
    manifest.write_text(MANAGED)
    started = time.monotonic()
    code, out, err = run("simulate", str(manifest))
    assert time.monotonic() - started < 20
    assert code == 1
    assert out.startswith("Job default/managed: Unfinished\n  virtual time: 720h")
    assert "pods created: 0" in out
    assert err.startswith("warning: the Job is managed by example.com/custom-controller (spec.managedBy)")


INDEXED = job("work", "  completions: 4\n  completionMode: Indexed")


def test_a_model_override_no_pod_can_match_is_warned_about_naming_the_field(tmp_path: Path) -> None:
    """A mistyped container name in `overrides` left every container to `containers`, silently: the run
    reported no failures at all. So did indexes on a NonIndexed Job, or past the Job's completions. Warned, not
    refused: a model file may serve several Jobs (the README's unreliable-nodes.yaml beside NonIndexed Jobs)."""
    plain, indexed, model = tmp_path / "plain.yaml", tmp_path / "indexed.yaml", tmp_path / "m.yaml"
    plain.write_text(job("plain"))
    indexed.write_text(INDEXED)
    cases = [
        (plain, "overrides: [{container: mian, exitCodes: [{code: 1}]}]", "model.overrides[0].container: the Job "
         "has no container 'mian' (containers: main): this override never applies"),
        (plain, "overrides: [{indexes: '1', exitCodes: [{code: 1}]}]", "model.overrides[0].indexes: the Job is "
         "not Indexed (spec.completionMode): its pods have no completion index, so this override never applies"),
        (indexed, "overrides: [{indexes: '4-9', exitCodes: [{code: 1}]}]", "model.overrides[0].indexes: every "
         "index is past the Job's completions (4: indexes 0 to 3): this override never applies"),
    ]  # fmt: skip
    for manifest, text, message in cases:
        model.write_text(text + "\n")
        code, out, err = run("simulate", str(manifest), "--model", str(model))
        assert (code, err) == (0, f"warning: {model}: {message}\n")
        assert "failures by action: none" in out
    model.write_text("overrides: [{container: main, indexes: '3-9', exitCodes: [{code: 1}]}]\n")
    code, out, err = run("simulate", str(indexed), "--model", str(model), "--backoff", "0")
    assert (code, err) == (1, "")
    assert "retries per index: 3: 6" in out  # index 3 alone fails, 1 + backoffLimit 6 times


def test_a_model_error_about_the_job_names_the_model_file(tmp_path: Path) -> None:
    """The preempt check's error was the only model error printed without its file."""
    manifest, model = tmp_path / "plain.yaml", tmp_path / "m.yaml"
    manifest.write_text(job("plain"))
    model.write_text("disruptions: [{kind: preempt, ratePerHour: 1}]\n")
    code, _, err = run("simulate", str(manifest), "--model", str(model))
    assert code == 2
    assert err.startswith(f"error: {model}: model.disruptions[0].kind: preempt needs the Job's containers")


def test_a_pod_an_elastic_indexed_job_scaled_down_is_not_said_to_count() -> None:
    """The Jobs page's elastic Indexed Job, completions and parallelism patched from 4 to 2 during `kjobs run
    --serve`: the pods of indexes 2 and 3 were deleted and the run said each `counts toward backoffLimit (6)`,
    while the Job's status.failed stayed 0 (the controller counts only pods of an index below completions)."""
    from kjobs.progress import decide

    job_obj = {
        "metadata": {"name": "elastic", "namespace": "default"},
        "spec": {"completions": 2, "parallelism": 2, "completionMode": "Indexed", "backoffLimit": 6},
        "status": {},
    }
    pod = {
        "metadata": {
            "name": "elastic-3-x",
            "deletionTimestamp": "2026-12-04T20:00:00Z",
            "annotations": {"batch.kubernetes.io/job-completion-index": "3"},
        },
        "spec": {"containers": [{"name": "main"}]},
        "status": {
            "phase": "Failed",
            "containerStatuses": [{"name": "main", "state": {"terminated": {"exitCode": 143, "reason": "Error"}}}],
        },
    }
    assert decide(job_obj, pod, "3").line() == (
        "pod elastic-3-x (index 3) failed: container main exited with code 143 → its index is past the Job's "
        "completions (scaled down): ended by the Job, not counted"
    )
    assert decide(job_obj, pod, "1").verdict == "counts toward backoffLimit (6)"


def test_the_success_policy_example_completes_and_its_summary_tells_ended_pods_apart() -> None:
    """examples/success-policy.yaml, the Jobs page's successPolicy made quick: index 2 succeeds, the Job ends the
    four others. The summary listed them as `4 pod(s) failed` of a Complete Job; it now says the Job ended them."""
    import subprocess
    import sys

    example = Path(__file__).resolve().parents[2] / "examples" / "success-policy.yaml"
    result = subprocess.run(
        [sys.executable, "-m", "kjobs", "run", str(example), "--plain"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert (
        "Job default/job-success-policy: Complete\n  reason: SuccessPolicy\n  message: Matched rules at index 0\n"
        "  succeeded: 1  failed: 0  completedIndexes: 2\n"
    ) in out
    # each of the four others, unless the Job ended it before it ran (a loaded machine): live, then in the summary
    ended = out.count("→ the Job had succeeded and ended the pod: not counted as failed") // 2
    assert 1 <= ended <= 4
    assert f"  failures: {ended} pod(s) failed, 0 ignored by the policy, {ended} ended by the Job\n" in out
