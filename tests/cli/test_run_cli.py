"""`kjobs run` end to end: real processes, the embedded control plane, outcome, explanation and exit code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
pytestmark = pytest.mark.e2e


def kjobs(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kjobs", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def test_failjob_on_exit_42() -> None:
    result = kjobs("run", str(EXAMPLES / "failjob-exit-42.yaml"), "--plain")
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert "Job default/job-pod-failure-policy-failjob: Failed\n  reason: PodFailurePolicy\n" in out
    assert "failed with exit code 42 matching FailJob rule at index 0" in out
    assert "container main exited with code 42 → FailJob by rule 0" in out


def test_completes_and_exits_0() -> None:
    result = kjobs("run", str(EXAMPLES / "ignore-disruptions.yaml"), "--plain")
    assert result.returncode == 0, result.stderr
    assert "Job default/job-pod-failure-policy-ignore: Complete\n  reason: CompletionsReached\n" in result.stdout
    assert "succeeded: 4  failed: 0" in result.stdout


def test_failindex_with_backoff_limit_per_index() -> None:
    result = kjobs("run", str(EXAMPLES / "failindex-per-index.yaml"), "--plain", "--backoff", "0.2")
    assert result.returncode == 1, result.stderr
    out = result.stdout.split("\nJob default/", 1)[1]  # the final summary
    assert "  reason: FailedIndexes\n" in out
    assert "completedIndexes: 0-2,4  failedIndexes: 3,5" in out
    assert "(index 3) failed: container main exited with code 42 → FailIndex by rule 0" in out
    assert out.count("(index 5) failed: container main exited with code 1, no rule matched") == 2


def test_count_against_backoff_limit_with_logs() -> None:
    result = kjobs("run", str(EXAMPLES / "count-with-backoff-limit.yaml"), "--plain", "--backoff", "0.2", "--logs")
    assert result.returncode == 1, result.stderr
    assert "  reason: BackoffLimitExceeded\n" in result.stdout
    assert "succeeded: 0  failed: 3" in result.stdout
    assert "/main] flaky" in result.stdout


def test_a_job_reads_its_settings_from_a_config_map_and_a_secret() -> None:
    result = kjobs("run", str(EXAMPLES / "settings-from-configmap.yaml"), "--plain", "--logs")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Job default/settings-from-configmap: Complete\n" in result.stdout
    assert result.stdout.count("mode=fast items=3 token-length=12") == 2


def test_a_missing_config_map_keeps_the_pod_waiting(tmp_path: Path) -> None:
    job = (EXAMPLES / "settings-from-configmap.yaml").read_text().split("---\n")[2]
    path = tmp_path / "job.yaml"
    path.write_text(job)
    result = kjobs("run", str(path), "--plain", "--timeout", "3")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "Complete" not in result.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: apps/v1\nkind: Deployment\n"
            "metadata: {name: web}\n",
            'document 2 is Deployment "web": kjobs run takes one Job, and the ConfigMaps and Secrets its pods read, '
            "the ServiceAccounts they run as, their RBAC roles and bindings, the PersistentVolumeClaims they mount, "
            "with their PersistentVolumes and StorageClasses, the Services that name them (and their Namespaces)",
        ),
        (
            "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: kubernetes.io/tls\n---\n"
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
            "      restartPolicy: Never\n      containers: [{name: main, image: x}]\n",
            'The Secret "s" is invalid: \n* data[tls.crt]: Required value',
        ),
        ("kind: Job\nspec: [unclosed\n", "invalid YAML"),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", 'document 1 is Pod "p": kjobs run takes one Job'),
        ("hello: world\n", "document 1 is an object without kind: kjobs run takes one Job"),
        (
            "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\n",
            'document 1 is CronJob "nightly": kjobs run takes one Job, and the ConfigMaps and Secrets its pods read, '
            "the ServiceAccounts they run as, their RBAC roles and bindings, the PersistentVolumeClaims they mount, "
            "with their PersistentVolumes and StorageClasses, the Services that name them (and their Namespaces)\n"
            "hint: a CronJob runs on a cluster: start `kjobs up`, then `kubectl apply -f",
        ),
        (
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
            "      restartPolicy: Always\n      containers: [{name: main, image: x}]\n",
            'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
        ),
    ],
    ids=["missing-file", "other-kind", "invalid-secret", "invalid-yaml", "no-job", "no-kind", "cronjob", "invalid-job"],
)
def test_bad_input_exits_2_with_a_clear_error(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "job.yaml"
    if content is not None:
        path.write_text(content)
    result = kjobs("run", str(path))
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_run_leaves_no_pod_files_behind(tmp_path: Path) -> None:
    """Its API lives in memory and ends with it: the node removes its pods' scratch directories and logs (they
    used to pile up in /dev/shm, a thousand per 1,000-pod run, until the filesystem ran out of inodes)."""
    import os

    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    result = subprocess.run(
        [sys.executable, "-m", "kjobs", "run", str(EXAMPLES / "ignore-disruptions.yaml"), "--plain", "--logs"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "succeeded: 4  failed: 0" in result.stdout
    node_roots = [p for p in (tmp_path / "kjobs").iterdir() if p.is_dir()]
    assert node_roots, "the node kept its files elsewhere"
    for root in node_roots:
        assert not any((root / "pods").iterdir())
        assert not any((root / "logs").iterdir())


TYPO = """\
apiVersion: batch/v1
kind: Job
metadata: {name: typo}
spec:
  backofLimit: 2
  template:
    spec:
      restartPolicy: Always
      containers: [{name: main, image: busybox}]
"""


def test_run_rejects_unknown_fields_unless_told_otherwise(tmp_path: Path) -> None:
    """A typo such as `backofLimit` must not run silently with the default backoffLimit, as `kubectl apply`
    would not; with --validate=ignore the field is dropped and the rest is validated as usual."""
    from click.testing import CliRunner

    from kjobs.cli import main

    path = tmp_path / "typo.yaml"
    path.write_text(TYPO)
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 2
    assert result.stderr == (
        f'error: {path}: Job in version "v1" cannot be handled as a Job: strict decoding error: '
        'unknown field "spec.backofLimit"\n'
    )
    result = CliRunner().invoke(main, ["run", "--validate=ignore", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f'error: {path}: The Job "typo" is invalid: spec.template.spec.restartPolicy: ')
    assert "backofLimit" not in result.stderr


def test_run_refuses_a_job_at_a_version_that_does_not_serve_jobs(tmp_path: Path) -> None:
    """`apiVersion: v1` on a Job: kubectl finds no Job at v1 and sends nothing; kjobs run says the same."""
    from click.testing import CliRunner

    from kjobs.cli import main

    path = tmp_path / "v1.yaml"
    path.write_text(TYPO.replace("batch/v1", "v1"))
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 2
    assert result.stderr == (
        f'error: resource mapping not found for name: "typo" namespace: "" from "{path}": '
        'no matches for kind "Job" in version "v1"\nensure CRDs are installed first\n'
    )


def test_a_container_that_cannot_start_says_why(tmp_path: Path) -> None:
    path = tmp_path / "missing.yaml"
    path.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: missing}\nspec:\n  backoffLimit: 0\n  template:\n"
        "    spec:\n      restartPolicy: Never\n      containers: [{name: main, image: x, command: [/app/bin/train]}]\n"
    )
    result = kjobs("run", str(path), "--plain")
    assert result.returncode == 1, result.stderr
    assert (
        "failed: container main exited with code 128 (StartError: failed to start container process: exec: "
        '"/app/bin/train": no such file or directory) → counts toward backoffLimit (0)\n'
    ) in result.stdout


def decisions(out: str) -> list[str]:
    """The live lines of disruptions and failure decisions (pod names replaced by `P`), before the summary."""
    live = out.split("\n\nJob default/", 1)[0]
    wanted = [line for line in live.splitlines() if line.startswith("disrupt ") or " failed: " in line]
    return [re.sub(r"job-pod-failure-policy-ignore-\w{5}", "P", line) for line in wanted]


IGNORED = "pod P failed: DisruptionTarget ({}) → Ignore by rule 0: not counted, the pod is replaced"


def test_quick_start_drain_is_ignored_and_the_job_completes() -> None:
    """The README's first command: both running pods are evicted by the drain, ignored, replaced once the node
    is uncordoned, and the Job completes with nothing counted."""
    result = kjobs("run", str(EXAMPLES / "ignore-disruptions.yaml"), "--disrupt", "drain@1s", "--backoff", "1")
    assert result.returncode == 0, result.stderr
    lines = decisions(result.stdout)
    assert lines[:3] == [
        "disrupt drain@1s: node/kjobs-node cordoned",
        "disrupt drain@1s: evicting pod default/P",
        "disrupt drain@1s: evicting pod default/P",
    ]
    assert sorted(lines[3:]) == sorted(
        [IGNORED.format("EvictionByEvictionAPI")] * 2
        + ["disrupt drain@1s: pod/P evicted"] * 2
        + ["disrupt drain@1s: node/kjobs-node drained", "disrupt drain@1s: node/kjobs-node uncordoned"]
    )
    assert lines[-2:] == ["disrupt drain@1s: node/kjobs-node drained", "disrupt drain@1s: node/kjobs-node uncordoned"]
    # As kubectl's waitForDelete: a pod is `evicted` once it is gone, after the Job controller counted it.
    live = result.stdout.split("\n\nJob default/", 1)[0].splitlines()
    for name in sorted(set(re.findall(r"evicting pod default/(\S+)", result.stdout))):
        decided = live.index(IGNORED.format("EvictionByEvictionAPI").replace("pod P ", f"pod {name} "))
        assert decided < live.index(f"disrupt drain@1s: pod/{name} evicted")
    assert "Job default/job-pod-failure-policy-ignore: Complete\n" in result.stdout
    assert "succeeded: 4  failed: 0\n  failures: 2 pod(s) failed, 2 ignored by the policy\n" in result.stdout


@pytest.mark.parametrize(
    ("disruption", "nodes", "applied", "reason"),
    [
        ("evict@1s", "1", [r"evicting pod default/P"], "EvictionByEvictionAPI"),
        (
            "taint@1s",
            "1",
            [r"node/kjobs-node tainted kjobs\.io/disruption=taint:NoExecute", r"node/kjobs-node untainted"],
            "DeletionByTaintManager",
        ),
        (
            "preempt@1s",
            "1",
            [r"pod/kjobs-preemptor-1 created \(priority 1000000, cpu \d+m? on node/kjobs-node\)"],
            "PreemptionByScheduler",
        ),
        (
            "node-shutdown@1s",
            "2",
            [r"node/kjobs-node(-2)? shutdown requested \(graceful node shutdown\)"],
            "TerminationByKubelet",
        ),
    ],
    ids=["evict", "taint", "preempt", "node-shutdown"],
)
def test_each_disruption_goes_through_the_cluster_and_is_ignored(
    disruption: str, nodes: str, applied: list[str], reason: str
) -> None:
    args = ("--disrupt", disruption, "--backoff", "0.2", "--nodes", nodes)
    result = kjobs("run", str(EXAMPLES / "ignore-disruptions.yaml"), *args)
    assert result.returncode == 0, result.stderr
    lines = decisions(result.stdout)
    ours = [line.split(": ", 1)[1] for line in lines if line.startswith(f"disrupt {disruption}: ")]
    assert len(ours) == len(applied), lines
    assert all(re.fullmatch(pattern, line) for pattern, line in zip(applied, ours, strict=True)), ours
    failed = [line for line in lines if " failed: " in line]
    assert failed and set(failed) == {IGNORED.format(reason)}
    assert "Job default/job-pod-failure-policy-ignore: Complete\n" in result.stdout
    assert "succeeded: 4  failed: 0\n" in result.stdout


def test_keep_serving_answers_after_the_job_ended_until_interrupted(tmp_path: Path) -> None:
    import signal

    import httpx

    from kjobs.client.kubeconfig import load

    path = tmp_path / "quick.yaml"
    path.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: quick}\nspec:\n  template:\n    spec:\n"
        '      restartPolicy: Never\n      containers: [{name: main, image: x, command: ["true"]}]\n'
    )
    args = ["run", str(path), "--serve", "0", "--keep-serving", "--kubeconfig", str(tmp_path / "kc")]
    proc = subprocess.Popen([sys.executable, "-m", "kjobs", *args], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:  # blocks until the run says it keeps serving (or the process ends)
            seen.append(line)
            if line.startswith("still serving the API on "):
                break
        assert "Job default/quick: Complete\n" in seen, seen
        url = seen[-1].removeprefix("still serving the API on ").split(";")[0]
        assert url.startswith("https://127.0.0.1:")
        connection = load(tmp_path / "kc")  # what the run wrote: its CA and admin certificate
        with httpx.Client(base_url=url, verify=connection.ssl_context or False) as http:
            job = http.get("/apis/batch/v1/namespaces/default/jobs/quick").json()
            assert [c["type"] for c in job["status"]["conditions"]] == ["SuccessCriteriaMet", "Complete"]
        with httpx.Client(base_url=url, verify=False) as anonymous:
            assert anonymous.get("/apis/batch/v1/namespaces/default/jobs").status_code == 401
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0
        assert proc.stdout.read() == "stopped serving the API\n"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_disruption_the_job_outlives_is_reported_not_applied(tmp_path: Path) -> None:
    path = tmp_path / "quick.yaml"
    path.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: quick}\nspec:\n  template:\n    spec:\n"
        '      restartPolicy: Never\n      containers: [{name: main, image: x, command: ["true"]}]\n'
    )
    result = kjobs("run", str(path), "--disrupt", "evict@30s")
    assert result.returncode == 0, result.stderr
    assert "disrupt evict@30s: not applied, the Job ended first\n" in result.stdout


def test_restart_rules_example_completes_with_every_kjobs_gate_on() -> None:
    """Each pod's container exits 42 once and is restarted in place by its rule: no pod fails, the Job
    completes; with the default gates the manifest's exit-code range is an unknown field."""
    example = str(EXAMPLES / "restart-rules.yaml")
    result = kjobs("run", "--feature-gates", "AllAlpha=true", example, "--plain", "--logs")
    assert result.returncode == 0, result.stderr
    assert "Job default/restart-rules: Complete\n" in result.stdout
    assert "succeeded: 2  failed: 0" in result.stdout
    assert result.stdout.count("resumed from the checkpoint") == 2
    refused = kjobs("run", example)
    assert refused.returncode == 2
    assert 'unknown field "spec.template.spec.containers[0].restartPolicyRules[0].exitCodes.valueRanges"' in (
        refused.stderr
    )


def test_onfailure_failjob_example_with_all_alpha_gates() -> None:
    """The README's OnFailure example: exit 1 restarted in place, then 42 fails the Job by the named rule."""
    result = kjobs("run", "--feature-gates", "AllAlpha=true", str(EXAMPLES / "onfailure-failjob.yaml"), "--plain")
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert "Job default/onfailure-failjob: Failed\n  reason: PodFailurePolicy\n" in out
    assert "succeeded: 0  failed: 1" in out
    assert 'container main exited with code 42 → FailJob by rule 0 "bad-input": the Job fails' in out


def test_onfailure_failjob_example_needs_its_gates() -> None:
    result = kjobs("run", str(EXAMPLES / "onfailure-failjob.yaml"), "--plain")
    assert result.returncode != 0
    assert 'unknown field "spec.template.spec.maxRestartTimes"' in result.stderr
    assert "try --feature-gates JobPodRestartLimit=true,PodFailurePolicyRuleName=true" in result.stderr


def test_a_served_run_removes_its_credentials_and_kubeconfig_when_it_ends(tmp_path: Path) -> None:
    import os

    path = tmp_path / "quick.yaml"
    path.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: quick}\nspec:\n  template:\n    spec:\n"
        '      restartPolicy: Never\n      containers: [{name: main, image: x, command: ["true"]}]\n'
    )
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "kjobs", "run", str(path), "--serve", "0", "--plain"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "TMPDIR": str(private_tmp)},
    )
    assert result.returncode == 0, result.stderr
    assert f"export KUBECONFIG={private_tmp}/kjobs-run-" in result.stdout
    assert list(private_tmp.iterdir()) == []


def test_a_suspended_job_without_serve_is_warned_about(tmp_path: Path) -> None:
    """Nothing but an API client can resume a suspended Job, so without --serve the run says how, not waits mute."""
    manifest = tmp_path / "suspended.yaml"
    manifest.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: later}\nspec:\n  suspend: true\n  template:\n"
        '    spec:\n      restartPolicy: Never\n      containers: [{name: main, image: x, command: ["true"]}]\n'
    )
    result = kjobs("run", str(manifest), "--plain", "--timeout", "0.5")
    assert result.returncode == 1
    assert "warning: the Job is suspended (spec.suspend: true)" in result.stderr
    assert 'kubectl patch job later -p \'{"spec":{"suspend":false}}\'' in result.stderr
    assert "job condition Suspended=True (JobSuspended: Job suspended)" in result.stdout


CLAIM_AND_JOB = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: uses-a-claim}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, command: [sh, -c, "true"], volumeMounts: [{name: d, mountPath: /data}]}
      volumes:
      - {name: d, persistentVolumeClaim: {claimName: data}}
"""


def test_a_job_with_its_claim_in_the_same_file_runs_and_leaves_no_volume_behind(tmp_path: Path) -> None:
    """The claim is created before the Job, bound by kjobs' local-path provisioner once the pod is scheduled
    (the default class `standard`, WaitForFirstConsumer), and its directory goes with the run (docs/storage.md)."""
    import os

    manifest = tmp_path / "job.yaml"
    manifest.write_text(CLAIM_AND_JOB)
    env = dict(os.environ, TMPDIR=str(tmp_path))
    result = subprocess.run(
        [sys.executable, "-m", "kjobs", "run", str(manifest), "--plain"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "Job default/uses-a-claim: Complete" in result.stdout
    assert not list(tmp_path.glob("kjobs-run-storage-*"))


def test_a_bad_claim_beside_the_job_is_refused_as_the_api_server_would(tmp_path: Path) -> None:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(CLAIM_AND_JOB.replace("storage: 1Gi", "storage: 0"))
    result = kjobs("run", str(manifest))
    assert result.returncode == 2
    assert result.stderr == (
        f'error: {manifest}: The PersistentVolumeClaim "data" is invalid: '
        'spec.resources[storage]: Invalid value: "0": must be greater than zero\n'
    )
