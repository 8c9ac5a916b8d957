"""kubernetes/kubernetes' kubectl command tests (test/cmd/*.sh, run by hack/make-rules/test-cmd.sh, and their
txtar form test/cmd/testdata/*.txtar) ported for what kjobs serves, run with the real kubectl against one
`kjobs up` (docs/upstream-kubectl-cmd.md). Each test is one script function, its asserts in the script's order;
`Cmd.get_object_assert` is hack/lib/test.sh's `kube::test::get_object_assert` (a go-template on `kubectl get`,
matched whole as a regular expression), `Cmd.wait_object_assert` its retrying form."""

from __future__ import annotations

import base64
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count
from pathlib import Path

import pytest

from tests.e2e.test_config_objects import Up, kubectl_on_up

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,  # some 600 kubectl runs: about 90 s on two shared cores
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

ID_FIELD = ".metadata.name"
"""legacy-script.sh's `id_field`."""
NODE = "kjobs-node"
"""The node `kjobs up` runs; test-cmd's cluster has one node named 127.0.0.1 (a kubelet-less apiserver)."""
IMAGE_PERL = "registry.k8s.io/perl"
"""legacy-script.sh's `IMAGE_PERL`; the CronJobs of these tests never run (their schedule is Feb 31)."""

_namespaces = count(1)


@dataclass
class Cmd:
    """A kubectl bound to one `kjobs up` with a kubeconfig of the test's own, its context's namespace being the
    test's (legacy-script.sh's `create_and_use_new_namespace`)."""

    up: Up
    config: Path
    namespace: str

    def run(
        self, *args: str, stdin: str | None = None, timeout: float = 60, editor: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        env = {"HOME": str(self.up.home), "KUBECONFIG": str(self.config), "PATH": "/usr/local/bin:/usr/bin:/bin"}
        if editor is not None:
            env["EDITOR"] = editor
        return subprocess.run(
            ["kubectl", *args], capture_output=True, text=True, env=env, input=stdin, timeout=timeout, cwd=self.up.home
        )

    def __call__(self, *args: str, stdin: str | None = None) -> str:
        """`kubectl ARGS` under the scripts' `set -o errexit`: it must succeed; its stdout."""
        proc = self.run(*args, stdin=stdin)
        assert proc.returncode == 0, f"kubectl {shlex.join(args)}: {proc.stdout}{proc.stderr}"
        return proc.stdout.rstrip("\n")

    def both(self, *args: str, stdin: str | None = None) -> str:
        """`$(kubectl ARGS 2>&1)` that must succeed."""
        proc = self.run(*args, stdin=stdin)
        assert proc.returncode == 0, f"kubectl {shlex.join(args)}: {proc.stdout}{proc.stderr}"
        return (proc.stdout + proc.stderr).rstrip("\n")

    def fails(self, *args: str, stdin: str | None = None) -> str:
        """`$(! kubectl ARGS 2>&1)`: it must fail; what it printed."""
        proc = self.run(*args, stdin=stdin)
        assert proc.returncode != 0, f"kubectl {shlex.join(args)} succeeded: {proc.stdout}"
        return (proc.stdout + proc.stderr).rstrip("\n")

    def new_namespace(self) -> str:
        """`create_and_use_new_namespace` again, as run_pod_tests does between its parts."""
        self.namespace = f"namespace-{int(time.time())}-{next(_namespaces)}"
        self("create", "namespace", self.namespace)
        self("config", "set-context", "--current", f"--namespace={self.namespace}")
        return self.namespace

    def get(self, obj: str, template: str, args: str = "") -> str:
        return self("get", *shlex.split(args), *shlex.split(obj), "-o", f"go-template={template}")

    def get_object_assert(self, obj: str, template: str, expected: str, args: str = "") -> None:
        """kube::test::get_object_assert: `kubectl get ARGS OBJ -o go-template=T` matches `^EXPECTED$`."""
        res = self.get(obj, template, args)
        assert re.fullmatch(expected, res), f"get {obj} {template}: expected {expected!r}, got {res!r}"

    def wait_object_assert(self, obj: str, template: str, expected: str, args: str = "", timeout: float = 30) -> None:
        """kube::test::wait_object_assert: the same, until it matches (upstream: 10 tries, 45 s in all)."""
        deadline = time.monotonic() + timeout
        while True:
            res = self.get(obj, template, args)
            if re.fullmatch(expected, res):
                return
            assert time.monotonic() < deadline, f"get {obj} {template}: expected {expected!r}, got {res!r}"
            time.sleep(0.1)


def if_has_string(message: str, match: str) -> None:
    """kube::test::if_has_string: `grep MATCH` (a basic regular expression) finds a line of the message."""
    assert re.search(_bre(match), message, re.M), f"{message!r} has not {match!r}"


def if_has_not_string(message: str, match: str) -> None:
    assert not re.search(_bre(match), message, re.M), f"{message!r} has {match!r}"


_GET_200 = r'\("Response" verb="GET" url=".*/v1/{0}" status="200 OK"\|GET .*/v1/{0} 200 OK\)'
"""A GET answered 200 in kubectl's -v=6 log: structured (`"Response" verb="GET" url=...`, client-go 1.33+, what
the script greps) or as kubectl 1.32 writes it (`GET URL 200 OK in N milliseconds`)."""


def _bre(pattern: str) -> str:
    """A grep basic regular expression as Python's: `\\:` is `:`, `\\|` and `\\( \\)` are alternation and group,
    `?`, `+`, `|`, `(`, `)` are literal."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(nxt if nxt in "|()" else re.escape(nxt) if not nxt.isalnum() else "\\" + nxt)
            i += 2
            continue
        out.append(re.escape(c) if c in "?+|(){}" else c)
        i += 1
    return "".join(out)


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("upstream-kubectl-cmd")) as kubectl:
        yield kubectl


@pytest.fixture
def kubectl(up: Up, tmp_path: Path) -> Cmd:
    """legacy-script.sh's `create_and_use_new_namespace`: a new namespace, the context's default."""
    config = tmp_path / "kubeconfig"
    shutil.copy(up.config, config)
    cmd = Cmd(up, config, "")
    cmd.new_namespace()
    return cmd


# test/cmd/batch.sh


def test_run_job_tests(kubectl: Cmd) -> None:
    k, ident = kubectl, "{{" + ID_FIELD + "}}"
    ### Create a new namespace
    k.get_object_assert("namespaces", '{{range.items}}{{ if eq .metadata.name "test-jobs" }}found{{end}}{{end}}:', ":")
    k("create", "namespace", "test-jobs")
    k.get_object_assert("namespaces/test-jobs", ident, "test-jobs")

    # Pre-condition: cronjob does not exist
    k.get_object_assert(
        "cronjob --namespace=test-jobs", '{{range.items}}{{ if eq .metadata.name "pi" }}found{{end}}{{end}}:', ":"
    )
    # Dry-run create CronJob
    pi = ("--schedule=59 23 31 2 *", "--namespace=test-jobs", f"--image={IMAGE_PERL}")
    pi_cmd = ("--", "perl", "-Mbignum=bpi", "-wle", "print bpi(20)")
    out = k("create", "cronjob", "pi", "--dry-run=client", *pi, *pi_cmd)
    assert out == "cronjob.batch/pi created (dry run)"  # batch.txtar
    out = k("create", "cronjob", "pi", "--dry-run=server", *pi, *pi_cmd)
    assert out == "cronjob.batch/pi created (server dry run)"
    k.get_object_assert("cronjob", '{{range.items}}{{ if eq .metadata.name "pi" }}found{{end}}{{end}}:', ":")
    ### Create a cronjob in a specific namespace
    assert k("create", "cronjob", "pi", *pi, *pi_cmd) == "cronjob.batch/pi created"
    k.get_object_assert("cronjob/pi --namespace=test-jobs", ident, "pi")
    if_has_string(k("get", "cronjob/pi", "--namespace=test-jobs"), "pi")
    described = k("describe", "cronjob/pi", "--namespace=test-jobs")
    for match in ("Name:", "pi", "Schedule:"):  # batch.txtar
        if_has_string(described, match)
    # Describe command should respect the chunk size parameter
    describe_resource_chunk_size_assert(k, "cronjobs", "events", "--namespace=test-jobs")

    ### Create a job in dry-run mode
    output_message = k(
        "create", "job", "test-job", "--from=cronjob/pi", "--dry-run=true", "--namespace=test-jobs", "-o", "name"
    )
    if_has_string(output_message, "job.batch/test-job")
    # The test-job wasn't created actually (in the context's namespace as upstream, and in test-jobs: batch.txtar)
    k.get_object_assert("jobs", "{{range.items}}{{.metadata.name}}{{end}}", "")
    k.get_object_assert("jobs --namespace=test-jobs", "{{range.items}}{{.metadata.name}}{{end}}", "")

    # Pre-condition: job does not exist
    no_job = '{{range.items}}{{ if eq .metadata.name "test-jobs" }}found{{end}}{{end}}:'
    k.get_object_assert("job --namespace=test-jobs", no_job, ":")
    ### Dry-run create a job in a specific namespace
    from_pi = ("--from=cronjob/pi", "--namespace=test-jobs")
    assert k("create", "job", "test-job", *from_pi, "--dry-run=client") == "job.batch/test-job created (dry run)"
    out = k("create", "job", "test-job", *from_pi, "--dry-run=server")
    assert out == "job.batch/test-job created (server dry run)"
    k.get_object_assert("job --namespace=test-jobs", no_job, ":")
    k.get_object_assert("job --namespace=test-jobs", "{{range.items}}{{.metadata.name}}{{end}}", "")  # batch.txtar
    ### Create a job in a specific namespace
    assert k("create", "job", "test-job", *from_pi) == "job.batch/test-job created"
    k.get_object_assert("job/test-job --namespace=test-jobs", ident, "test-job")
    if_has_string(k("get", "job/test-job", "--namespace=test-jobs"), "test-job")
    described = k("describe", "job/test-job", "--namespace=test-jobs")
    for match in ("Name:", "test-job"):
        if_has_string(described, match)
    # Describe command should respect the chunk size parameter
    describe_resource_chunk_size_assert(k, "jobs", "events", "--namespace=test-jobs")
    # Clean up
    assert k("delete", "job", "test-job", "--namespace=test-jobs") == 'job.batch "test-job" deleted'
    assert k("delete", "cronjob", "pi", "--namespace=test-jobs") == 'cronjob.batch "pi" deleted'
    assert k("delete", "namespace", "test-jobs") == 'namespace "test-jobs" deleted'


def describe_resource_chunk_size_assert(k: Cmd, resource: str, additional: str, args: str) -> None:
    """kube::test::describe_resource_chunk_size_assert: `describe RESOURCE` lists it and its events 500 at a
    time by default, `--chunk-size=10` ten at a time (kubectl's -v=6 request log)."""
    default = k.run("describe", resource, "--show-events=true", "-v=6", *shlex.split(args))
    assert default.returncode == 0, default.stderr
    for r in [resource, *additional.split(",")]:
        if_has_string(default.stderr, f"{r}?.*limit=500")
    custom = k.run("describe", resource, "--show-events=false", "--chunk-size=10", "-v=6", *shlex.split(args))
    assert custom.returncode == 0, custom.stderr
    if_has_string(custom.stderr, f"{resource}?limit=10")


# test/cmd/node-management.sh


def _test_pod(name: str, labels: dict[str, str]) -> str:
    """create_test_pods' pods: bound to the node by name, image `test-image` (no command: kjobs runs no image's
    entrypoint, so they wait in CrashLoopBackOff as upstream's wait on a node without a kubelet)."""
    label_text = ", ".join(f'"{key}": "{value}"' for key, value in labels.items())
    return (
        f'{{"kind": "Pod", "apiVersion": "v1", "metadata": {{"name": "{name}", "labels": {{{label_text}}}}}, '
        f'"spec": {{"nodeName": "{NODE}", "containers": [{{"name": "container-1", "resources": {{}}, '
        '"image": "test-image"}]}}'
    )


def _create_test_pods(k: Cmd) -> None:
    k("create", "-f", "-", stdin=_test_pod("test-pod-1", {"e": "f", "type": "test-pod"}))
    k("create", "-f", "-", stdin=_test_pod("test-pod-2", {"c": "d", "type": "test-pod"}))


def _delete_test_pods(k: Cmd) -> None:
    k("delete", "pod/test-pod-1", "--force", "--ignore-not-found")
    k("delete", "pod/test-pod-2", "--force", "--ignore-not-found")


def test_run_cluster_management_tests(kubectl: Cmd) -> None:
    k = kubectl
    try:
        _cluster_management(k)
    finally:  # the node is the module's: leave it as it was (upstream leaves it cordoned and labelled)
        k("uncordon", NODE)
        k("label", "node", NODE, "test-")
        if "dedicated" in k("get", "node", NODE, "-o", "jsonpath={.spec.taints}"):
            k("taint", "node", NODE, "dedicated-")


def _cluster_management(k: Cmd) -> None:
    node = f"nodes {NODE}"
    k.get_object_assert("nodes", "{{range.items}}{{.metadata.name}}:{{end}}", f"{NODE}:")

    _create_test_pods(k)

    # taint/untaint
    dedicated = '{{range .spec.taints}}{{if eq .key "dedicated"}}{{.key}}={{.value}}:{{.effect}}{{end}}{{end}}'
    k.get_object_assert(node, dedicated, "")
    # Dry-run
    k("taint", "node", NODE, "--dry-run=client", "dedicated=foo:PreferNoSchedule")
    k("taint", "node", NODE, "--dry-run=server", "dedicated=foo:PreferNoSchedule")
    k.get_object_assert(node, dedicated, "")
    # taint can add a taint (<key>=<value>:<effect>)
    k("taint", "node", NODE, "dedicated=foo:PreferNoSchedule")
    k.get_object_assert(node, dedicated, "dedicated=foo:PreferNoSchedule")
    # taint can remove a taint
    k("taint", "node", NODE, "dedicated-")
    # taint can add a taint (<key>:<effect>)
    k("taint", "node", NODE, "dedicated:PreferNoSchedule")
    k.get_object_assert(node, dedicated, "dedicated=<no value>:PreferNoSchedule")
    # Node has field manager for kubectl taint
    managers = "jsonpath={.metadata.managedFields[*].manager}"
    output_message = k.both("get", "node", NODE, "--show-managed-fields", f"-o={managers}")
    if_has_string(output_message, "kubectl-taint")
    # Dry-run remove a taint
    k("taint", "node", NODE, "--dry-run=client", "dedicated-")
    k("taint", "node", NODE, "--dry-run=server", "dedicated-")
    k.get_object_assert(node, dedicated, "dedicated=<no value>:PreferNoSchedule")
    # taint can remove a taint
    k("taint", "node", NODE, "dedicated-")
    k.get_object_assert(node, dedicated, "")

    ### kubectl cordon update with --dry-run does not mark node unschedulable
    k.get_object_assert(node, "{{.spec.unschedulable}}", "<no value>")
    k("cordon", NODE, "--dry-run=client")
    k("cordon", NODE, "--dry-run=server")
    k.get_object_assert(node, "{{.spec.unschedulable}}", "<no value>")

    ### kubectl drain update with --dry-run does not mark node unschedulable
    k.get_object_assert(node, "{{.spec.unschedulable}}", "<no value>")
    k("drain", NODE, "--dry-run=client", "--force")
    k("drain", NODE, "--dry-run=server", "--force")
    k.get_object_assert("nodes", "{{range.items}}{{.metadata.name}}:{{end}}", f"{NODE}:")
    k.get_object_assert(node, "{{.spec.unschedulable}}", "<no value>")

    ### kubectl drain with --pod-selector only evicts pods that match the given selector
    k.get_object_assert(node, "{{.spec.unschedulable}}", "<no value>")
    k.get_object_assert("pods", "{{range .items}}{{.metadata.name}},{{end}}", "test-pod-1,test-pod-2,")
    k("drain", NODE, "--pod-selector", "e in (f)", "--dry-run=client", "--force")
    k("drain", NODE, "--pod-selector", "e in (f)", "--dry-run=server", "--force")
    k.get_object_assert("pods", "{{range .items}}{{.metadata.name}},{{end}}", "test-pod-1,test-pod-2,")
    response = k("drain", NODE, "--force", "--pod-selector", "e in (f)", "--skip-wait-for-delete-timeout=1")
    if_has_string(response, "evicting pod .*/test-pod-1")
    # only test-pod-1 matched and was deleted: test-pod-2 has no deletion timestamp
    k.get_object_assert("pods/test-pod-2", "{{.metadata.deletionTimestamp}}", "<no value>")
    _delete_test_pods(k)
    _create_test_pods(k)
    k("uncordon", NODE)
    k.get_object_assert(node, "{{.spec.unschedulable}}", "<no value>")

    ### kubectl uncordon update with --dry-run is a no-op
    k.get_object_assert(node, "{{.spec.unschedulable}}", "<no value>")
    if_has_string(k("uncordon", NODE, "--dry-run=client"), "already uncordoned")
    if_has_string(k("uncordon", NODE, "--dry-run=server"), "already uncordoned")
    k.get_object_assert(node, "{{.spec.unschedulable}}", "<no value>")

    ### kubectl drain command fails when both --selector and a node argument are given
    k("label", "node", NODE, "test=label")
    k.get_object_assert(node, "{{.metadata.labels.test}}", "label")
    response = k.fails("drain", NODE, "--selector", "test=label")
    if_has_string(response, "cannot specify both a node name")

    ### Test kubectl drain chunk size
    k.get_object_assert(node, "{{.metadata.labels.test}}", "label")
    k.get_object_assert(node, "{{.spec.unschedulable}}", "<no value>")
    k.get_object_assert("pods", "{{range .items}}{{.metadata.name}},{{end}}", "test-pod-1,test-pod-2,")
    output_message = k.both(
        "--v=6", "drain", "--force", "--pod-selector", "type=test-pod", "--selector", "test=label", "--chunk-size=1",
        "--dry-run=client",
    )  # fmt: skip
    response_line = _GET_200
    if_has_string(output_message, response_line.format("nodes?labelSelector=test%3Dlabel&limit=1"))
    pods = f"fieldSelector=spec.nodeName%3D{NODE}&labelSelector=type%3Dtest-pod&limit=1"
    if_has_string(output_message, response_line.format(f"pods?{pods}"))
    if_has_string(output_message, response_line.format(f"pods?continue=.*&{pods}"))
    # Check we evict multiple pages worth of pods
    if_has_string(output_message, "evicting pod .*/test-pod-1")
    if_has_string(output_message, "evicting pod .*/test-pod-2")
    k("uncordon", NODE)
    k.get_object_assert(node, "{{.spec.unschedulable}}", "<no value>")

    ### Test kubectl drain chunk size defaults to 500
    output_message = k.both("--v=6", "drain", "--force", "--selector", "test=label", "--dry-run=client")
    if_has_string(output_message, response_line.format("nodes?labelSelector=test%3Dlabel&limit=500"))
    if_has_string(output_message, response_line.format(f"pods?fieldSelector=spec.nodeName%3D{NODE}&limit=500"))

    ### kubectl cordon command fails when no arguments are passed
    if_has_string(k.fails("cordon"), r"error\: USAGE\: cordon NODE")

    ### kubectl cordon selects no nodes with an empty --selector=
    k("uncordon", NODE)
    if_has_string(k.fails("cordon", "--selector="), "must provide one or more resources")
    if_has_string(k("cordon", "--selector", "test=label"), f"node/{NODE} cordoned")
    if_has_not_string(k("cordon", "--selector", "invalid=label"), "cordoned")
    k.get_object_assert(node, "{{.spec.unschedulable}}", "true")

    _delete_test_pods(k)


# test/cmd/events.sh


def _has_pi_event(message: str) -> None:
    """The script's `if_has_string "$out" "Warning" "InvalidSchedule" "Cronjob/pi"` greps only `Warning` (the
    function reads two arguments); here the line must be the CronJob's InvalidSchedule warning, as meant."""
    assert re.search(r"Warning\s+InvalidSchedule\s+CronJob/pi\s", message), message


def _has_no_pi_event(message: str) -> None:
    """The script's pre-condition (no `Warning` at all) holds on its fresh cluster; on the module's shared one
    other tests' pods warn, so it is the CronJob's warning that must be absent."""
    assert not re.search(r"InvalidSchedule\s+CronJob/pi\s", message), message


def test_run_kubectl_events_tests(kubectl: Cmd) -> None:
    k, ident = kubectl, "{{" + ID_FIELD + "}}"
    ### Create a new namespace
    no_ns = '{{range.items}}{{ if eq .metadata.name "test-events" }}found{{end}}{{end}}:'
    k.get_object_assert("namespaces", no_ns, ":")
    k("create", "namespace", "test-events")
    k.get_object_assert("namespaces/test-events", ident, "test-events")

    # Pre-condition: event does not exist for Cronjob/pi in any namespace
    _has_no_pi_event(k.both("events", "-A"))
    # Pre-condition: cronjob does not exist in test-events namespace
    no_pi = '{{range.items}}{{ if eq .metadata.name "pi" }}found{{end}}{{end}}:'
    k.get_object_assert("cronjob --namespace=test-events", no_pi, ":")
    ### Create a cronjob in a specific namespace
    k("create", "cronjob", "pi", "--schedule=59 23 31 2 *", "--namespace=test-events", f"--image={IMAGE_PERL}",
      "--", "perl", "-Mbignum=bpi", "-wle", "print bpi(20)")  # fmt: skip
    k.get_object_assert("cronjob/pi --namespace=test-events", ident, "pi")

    # events --all-namespaces returns the event for Cronjob/pi (the CronJob controller's first sync records it:
    # upstream's assert runs right after the create too, the controller being as quick there)
    deadline = time.monotonic() + 30
    while not re.search(r"InvalidSchedule\s+CronJob/pi\s", out := k.both("events", "-A")):
        assert time.monotonic() < deadline, out
        time.sleep(0.1)
    _has_pi_event(out)
    _has_pi_event(k.both("events", "-n", "test-events"))
    _has_pi_event(k.both("events", "-n", "test-events", "--for=Cronjob/pi"))
    # with watch: the list is printed, then the request times out after 1 s
    proc = k.run("events", "-n", "test-events", "--for=Cronjob/pi", "--watch", "--request-timeout=1")
    _has_pi_event(proc.stdout + proc.stderr)
    _has_pi_event(k.both("events", "-n", "test-events", "--for=Cronjob/pi", "--types=Warning"))
    _has_no_pi_event(k.both("events", "-n", "test-events", "--for=Cronjob/pi", "--types=Normal"))
    output_message = k.both("events", "-n", "test-events", "--for=Cronjob/pi", "--no-headers")
    if_has_not_string(output_message, "LAST SEEN")
    _has_pi_event(output_message)
    # json and yaml: the event's fields
    for output in ("json", "yaml"):
        output_message = k.both("events", "-n", "test-events", "--for=Cronjob/pi", f"--output={output}")
        for match in ("Warning", "InvalidSchedule", "CronJob", '"pi"' if output == "json" else "name: pi"):
            if_has_string(output_message, match)

    # Clean up
    k("delete", "cronjob", "pi", "--namespace=test-events")
    k("delete", "namespace", "test-events")


# test/cmd/wait.sh: its Deployments are Jobs here (kjobs serves no apps/v1), and the three replicas of `dtest`
# three bare pods; each assert is the same one on the Job's or the pods' fields.


def test_run_wait_tests(kubectl: Cmd) -> None:
    k = kubectl
    ### Wait for deletion using --all flag
    # test data: busybox crashes in a Deployment; a container kjobs cannot start (no command) never gets ready
    k("create", "job", "test-1", "--image=busybox")
    k("create", "job", "test-2", "--image=busybox")
    k.get_object_assert("jobs", "{{range .items}}{{.metadata.name}},{{end}}", "test-1,test-2,")

    # Wait with jsonpath on a field that does not exist yet times out (upstream waits the default 30 s)
    proc = k.run("wait", "--for=jsonpath=.status.ready=1", "job/test-1", "--timeout=2s")
    assert proc.returncode != 0
    if_has_string(proc.stdout + proc.stderr, "timed out")

    # Delete all jobs while kubectl waits for them to go (upstream: `( sleep 2 && kubectl delete ... ) &`; here
    # the delete starts once kubectl's -v=6 log shows it has listed them)
    env = {"HOME": str(k.up.home), "KUBECONFIG": str(k.config), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    waiting = subprocess.Popen(
        ["kubectl", "wait", "job", "--for=delete", "--all", "-v=6"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert waiting.stderr is not None
        for line in waiting.stderr:
            if re.search(r"GET \S+/jobs\S* 200 OK|\"Response\" verb=\"GET\" url=\"\S+/jobs", line):
                break
        k("delete", "job", "--all")
        output_message, _ = waiting.communicate(timeout=60)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait()
    assert waiting.returncode == 0
    if_has_string(output_message, "test-1 condition met")
    if_has_string(output_message, "test-2 condition met")

    # test data to check that a timeout ends in time: Deployment dtest's three replicas of `sleep infinity`
    for replica in ("dtest-1", "dtest-2", "dtest-3"):
        k("apply", "-f", "-", stdin=(
            f"apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n    app: dtest\n  name: {replica}\nspec:\n"
            "  containers:\n  - name: bb\n    image: busybox\n    command: [\"/bin/sh\", \"-c\", \"sleep infinity\"]\n"
        ))  # fmt: skip
    k.wait_object_assert("pods -l app=dtest", "{{range.items}}{{.metadata.name}}{{end}}", "dtest-1dtest-2dtest-3")

    # wait times out because the condition is invalid, in 1 to 2 s (whole seconds of `date +%s`)
    start = time.monotonic()
    proc = k.run("wait", "pod", "--selector=app=dtest", "--for=condition=InvalidCondition", "--timeout=1s")
    elapsed = time.monotonic() - start
    assert proc.returncode != 0
    if_has_string(proc.stdout + proc.stderr, "timed out waiting for the condition ")
    assert 1 <= elapsed < 3, elapsed

    k("delete", "pods", "-l", "app=dtest", "--grace-period=0", "--force")

    # wait with jsonpath without value succeeds (a Deployment's .status.replicas: a Job's .status.active)
    k("create", "job", "test-3", "--image=busybox", "--", "sleep", "1000")
    output_message = k.both("wait", "--for=jsonpath={.status.active}", "job/test-3")
    if_has_string(output_message, "job.batch/test-3 condition met")
    k("delete", "job", "test-3", "--cascade=foreground")


# test/cmd/delete.sh and testdata/delete.txtar


def test_run_kubectl_delete_allnamespaces_tests(kubectl: Cmd) -> None:
    k, stamp = kubectl, int(time.time())
    ns_one, ns_two = f"namespace-{stamp}-one", f"namespace-{stamp}-two"
    assert k("create", "namespace", ns_one) == f"namespace/{ns_one} created"
    assert k("create", "namespace", ns_two) == f"namespace/{ns_two} created"
    assert k("create", "configmap", "one", f"--namespace={ns_one}") == "configmap/one created"
    assert k("create", "configmap", "two", f"--namespace={ns_two}") == "configmap/two created"
    assert k("label", "configmap", "one", f"--namespace={ns_one}", "deletetest=true") == "configmap/one labeled"
    assert k("label", "configmap", "two", f"--namespace={ns_two}", "deletetest=true") == "configmap/two labeled"

    # dry-run
    if_has_string(k("delete", "configmap", "--dry-run=client", "-l", "deletetest=true", "--all-namespaces"), "dry run")
    out = k("delete", "configmap", "--dry-run=server", "-l", "deletetest=true", "--all-namespaces")
    if_has_string(out, "server dry run")
    k("config", "set-context", "--current", f"--namespace={ns_one}")
    k.get_object_assert("configmap -l deletetest", "{{range.items}}{{.metadata.name}}:{{end}}", "one:")
    k("config", "set-context", "--current", f"--namespace={ns_two}")
    k.get_object_assert("configmap -l deletetest", "{{range.items}}{{.metadata.name}}:{{end}}", "two:")

    out = k("delete", "configmap", "-l", "deletetest=true", "--all-namespaces")
    assert out.splitlines() == ['configmap "one" deleted', 'configmap "two" deleted']

    # no configmaps should be in either of those namespaces with label deletetest
    k("config", "set-context", "--current", f"--namespace={ns_one}")
    k.get_object_assert("configmap -l deletetest", "{{range.items}}{{.metadata.name}}:{{end}}", "")
    k("config", "set-context", "--current", f"--namespace={ns_two}")
    k.get_object_assert("configmap -l deletetest", "{{range.items}}{{.metadata.name}}:{{end}}", "")
    k("delete", "namespace", ns_one, ns_two, "--wait=false")


def test_delete_txtar_interactive_section(kubectl: Cmd) -> None:
    # testdata/delete.txtar's second part (it tests the non-interactive behaviour, as it says)
    k, one, two = kubectl, "delete-interactive-one", "delete-interactive-two"
    assert k("create", "namespace", one) == f"namespace/{one} created"
    assert k("create", "namespace", two) == f"namespace/{two} created"
    k("create", "configmap", "cm-one", f"--namespace={one}")
    k("create", "configmap", "cm-two", f"--namespace={two}")
    k("label", "configmap", "cm-one", f"--namespace={one}", "deletetest=true")
    k("label", "configmap", "cm-two", f"--namespace={two}", "deletetest=true")
    out = k("delete", "configmap", "--dry-run=server", "-l", "deletetest=true", "--all-namespaces")
    for match in ("cm-one", "cm-two", "server dry run"):
        if_has_string(out, match)
    assert k("get", "configmap", "cm-one", f"--namespace={one}", "-o", "jsonpath={.metadata.name}") == "cm-one"
    assert k("get", "configmap", "cm-two", f"--namespace={two}", "-o", "jsonpath={.metadata.name}") == "cm-two"
    if_has_string(k("delete", "configmap", "-l", "deletetest=true", "--all-namespaces"), "deleted")
    names = "jsonpath={range.items}{.metadata.name}{end}"
    if_has_not_string(k("get", "configmap", "-l", "deletetest=true", f"--namespace={one}", "-o", names), "cm-one")
    if_has_not_string(k("get", "configmap", "-l", "deletetest=true", f"--namespace={two}", "-o", names), "cm-two")
    # --wait
    k("create", "configmap", "cm-three", f"--namespace={one}")
    k("label", "configmap", "cm-three", f"--namespace={one}", "deletetest2=true")
    if_has_string(k("delete", "configmap", "-l", "deletetest2=true", f"--namespace={one}", "--wait"), "deleted")
    if_has_not_string(k("get", "configmap", "-l", "deletetest2=true", f"--namespace={one}", "-o", names), "cm-three")
    # --force
    k("create", "configmap", "cm-four", f"--namespace={one}")
    k("label", "configmap", "cm-four", f"--namespace={one}", "deletetest3=true")
    out = k("delete", "configmap", "-l", "deletetest3=true", f"--namespace={one}", "--force", "--wait")
    if_has_string(out, "deleted")
    if_has_not_string(k("get", "configmap", "-l", "deletetest3=true", f"--namespace={one}", "-o", names), "cm-four")
    k("delete", "namespace", one)
    k("delete", "namespace", two)


# test/cmd/core.sh; its fixture files (test/fixtures/..., hack/testdata/...) as they are upstream

VALID_POD = """apiVersion: v1
kind: Pod
metadata:
  name: valid-pod
  labels:
    name: valid-pod
spec:
  containers:
  - name: kubernetes-serve-hostname
    image: registry.k8s.io/serve_hostname
    resources:
      limits:
        cpu: "1"
        memory: 512Mi
"""
"""test/fixtures/doc-yaml/admin/limitrange/valid-pod.yaml"""
POD_YAML = """apiVersion: v1
kind: Pod
metadata:
  name: test-pod
  labels:
    name: test-pod-label
spec:
  containers:
  - name: kubernetes-pause
    image: k8s.gcr.io/pause:2.0
"""
"""hack/testdata/pod.yaml"""
POD_APPLY_YAML = POD_YAML.replace("test-pod-label", "test-pod-applied").replace("pause:2.0", "pause:3.4.1")
"""hack/testdata/pod-apply.yaml"""
POD_WITH_API_ENV = """apiVersion: v1
kind: Pod
metadata:
  name: env-test-pod
spec:
  containers:
    - name: test-container
      image: k8s.gcr.io/busybox
      command: [ "/bin/sh", "-c", "env" ]
      env:
        - name: TEST_CMD_1
          valueFrom:
            secretKeyRef:
              name: test-secret
              key: key-1
        - name: TEST_CMD_2
          valueFrom:
            configMapKeyRef:
              name: test-configmap
              key: key-2
        - name: TEST_CMD_3
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
  restartPolicy: Never
"""
"""hack/testdata/pod-with-api-env.yaml"""
POD_WITH_PRECISION = """{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod-with-precision"},
 "spec": {"activeDeadlineSeconds": 2147483647,
  "containers": [{"name": "kubernetes-pause", "image": "registry.k8s.io/pause:3.5"}],
  "restartPolicy": "Never", "securityContext": {"supplementalGroups": [0, 1000030003, 2147483647]}}}"""
"""hack/testdata/pod-with-precision.json"""
MULTI_POD = """---
apiVersion: v1
kind: Pod
metadata:
  labels:
    name: redis
    redis-sentinel: "true"
    role: master
  name: redis-master
spec:
  containers:
    - name: master
      image: k8s.gcr.io/e2e-test-images/redis:1.0
      env:
        - name: MASTER
          value: "true"
      ports:
        - containerPort: 6379
      resources:
        limits:
          cpu: "0.5"
      volumeMounts:
        - mountPath: /redis-master-data
          name: data
    - name: sentinel
      image: k8s.gcr.io/e2e-test-images/redis:1.0
      env:
        - name: SENTINEL
          value: "true"
      ports:
        - containerPort: 26379
  volumes:
    - name: data
      emptyDir: {}
---
""" + VALID_POD.replace("registry.k8s.io/serve_hostname", "k8s.gcr.io/e2e-test-images/serve-hostname:1.0")
"""test/fixtures/doc-yaml/user-guide/multi-pod.yaml"""
AGNHOST_PRIMARY_POD = """apiVersion: v1
kind: Pod
metadata:
  name: agnhost-primary
  labels:
    app: agnhost
    role: primary
spec:
  containers:
  - name: primary
    image: registry.k8s.io/e2e-test-images/agnhost:2.40
    ports:
    - containerPort: 6379
"""
"""test/e2e/testing-manifests/kubectl/agnhost-primary-pod.yaml (its name is what the asserts read)"""
PODS = "{{range.items}}{{.metadata.name}}:{{end}}"


def _file(k: Cmd, name: str, text: str) -> str:
    path = k.config.parent / name
    path.write_text(text)
    return str(path)


def _stdout_bytes(k: Cmd, *args: str, editor: str) -> bytes:
    """kubectl's stdout as bytes (text mode would turn CRLF into LF: `file -` reads the bytes upstream)."""
    env = {"HOME": str(k.up.home), "KUBECONFIG": str(k.config), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    proc = subprocess.run(["kubectl", *args], capture_output=True, env={**env, "EDITOR": editor}, timeout=60)
    return proc.stdout


def describe_object_assert(k: Cmd, resource: str, obj: str, *matches: str) -> None:
    """kube::test::describe_object_assert (and describe_resource_assert without `obj`): each match greps."""
    result = k("describe", *shlex.split(resource), *([obj] if obj else []))
    for match in matches:
        if_has_string(result, match)


def describe_events_assert(k: Cmd, resource: str, obj: str, show_events: str | None = None) -> None:
    """kube::test::describe_object_events_assert / describe_resource_events_assert: an events section
    (`Events:` or `No events.`) is printed unless --show-events=false."""
    flags = [f"--show-events={show_events}"] if show_events is not None else []
    result = k("describe", *flags, *shlex.split(resource), *([obj] if obj else []))
    has_events = bool(re.search(r"No events\.|Events:", result))
    assert has_events == (show_events != "false"), result


def test_run_configmap_tests(kubectl: Cmd) -> None:
    k, ident = kubectl, "{{.metadata.name}}"
    configmap = (  # test/fixtures/doc-yaml/user-guide/configmap/configmap.yaml
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: test-configmap\n"
        "data:\n  data-1: value-1\n  data-2: value-2\n"
    )
    k("create", "-f", _file(k, "configmap.yaml", configmap))
    k.get_object_assert("configmap/test-configmap", ident, "test-configmap")
    k("delete", "configmap", "test-configmap")

    ### Create a new namespace
    k.get_object_assert(
        "namespaces", '{{range.items}}{{ if eq .metadata.name "test-configmaps" }}found{{end}}{{end}}:', ":"
    )
    k("create", "namespace", "test-configmaps")
    k.get_object_assert("namespaces/test-configmaps", ident, "test-configmaps")

    ### Create a generic configmap in a specific namespace
    found = '{{range.items}}{{ if eq .metadata.name "%s" }}found{{end}}{{end}}:'
    k.get_object_assert("configmaps", found % "test-configmap", ":")
    k.get_object_assert("configmaps", found % "test-binary-configmap", ":")
    k(
        "create",
        "configmap",
        "test-configmap",
        "--dry-run=client",
        "--from-literal=key1=value1",
        "--namespace=test-configmaps",
    )
    k(
        "create",
        "configmap",
        "test-configmap",
        "--dry-run=server",
        "--from-literal=key1=value1",
        "--namespace=test-configmaps",
    )
    k.get_object_assert("configmaps", found % "test-configmap", ":")
    k("create", "configmap", "test-configmap", "--from-literal=key1=value1", "--namespace=test-configmaps")
    binary = k.config.parent / "63"  # `--from-file <( head -c 256 /dev/urandom )`: a file named by its fd
    binary.write_bytes(bytes(range(256)))
    k("create", "configmap", "test-binary-configmap", f"--from-file={binary}", "--namespace=test-configmaps")
    k.get_object_assert("configmap/test-configmap --namespace=test-configmaps", ident, "test-configmap")
    k.get_object_assert("configmap/test-binary-configmap --namespace=test-configmaps", ident, "test-binary-configmap")
    assert "key1: value1" in k("get", "configmap/test-configmap", "--namespace=test-configmaps", "-o", "yaml")
    assert "binaryData" in k("get", "configmap/test-binary-configmap", "--namespace=test-configmaps", "-o", "yaml")
    describe_resource_chunk_size_assert(k, "configmaps", "events", "--namespace=test-configmaps")
    k("delete", "configmap", "test-configmap", "--namespace=test-configmaps")
    k("delete", "configmap", "test-binary-configmap", "--namespace=test-configmaps")
    k("delete", "namespace", "test-configmaps")


def test_run_pod_tests_create_describe_delete(kubectl: Cmd) -> None:
    # run_pod_tests, from "Create POD valid-pod from JSON" to "Delete all PODs"
    k, ident = kubectl, "{{.metadata.name}}"
    valid_pod = _file(k, "valid-pod.yaml", VALID_POD)
    k.get_object_assert("pods", PODS, "")
    k("create", "-f", valid_pod)
    k("get", "pods", "-o", "json")
    k.get_object_assert("pods", PODS, "valid-pod:")
    k.get_object_assert("pod valid-pod", ident, "valid-pod")
    k.get_object_assert("pod/valid-pod", ident, "valid-pod")
    k.get_object_assert("pods/valid-pod", ident, "valid-pod")
    # pod has field manager for kubectl create
    output_message = k.both(
        "get", "--show-managed-fields", "-f", valid_pod, "-o=jsonpath={.metadata.managedFields[*].manager}"
    )
    if_has_string(output_message, "kubectl-create")
    # the same with jsonpath (kube::test::get_object_jsonpath_assert)
    assert k("get", "pods", "-o", "jsonpath={.items[*].metadata.name}") == "valid-pod"
    for obj in (["pod", "valid-pod"], ["pod/valid-pod"], ["pods/valid-pod"]):
        assert k("get", *obj, "-o", "jsonpath={.metadata.name}") == "valid-pod"
    # Describe
    describe_object_assert(k, "pods", "valid-pod", "Name:", "Image:", "Node:", "Labels:", "Status:")
    describe_events_assert(k, "pods", "valid-pod")
    describe_events_assert(k, "pods", "valid-pod", "false")
    describe_events_assert(k, "pods", "valid-pod", "true")
    describe_object_assert(k, "pods", "", "Name:", "Image:", "Node:", "Labels:", "Status:")
    describe_events_assert(k, "pods", "", "true")  # describe_resource_events_assert passes --show-events=true
    describe_events_assert(k, "pods", "", "false")
    describe_events_assert(k, "pods", "", "true")
    describe_resource_chunk_size_assert(k, "pods", "events", "")

    ### Dump current valid-pod POD
    output_pod = k("get", "pod", "valid-pod", "-o", "yaml")

    ### Delete POD valid-pod by id
    k.get_object_assert("pods", PODS, "valid-pod:")
    k("delete", "pod", "valid-pod", "--grace-period=0", "--force")
    k.get_object_assert("pods", PODS, "")

    ### Delete POD valid-pod by id with --now
    k("create", "-f", valid_pod)
    k.get_object_assert("pods", PODS, "valid-pod:")
    k("delete", "pod", "valid-pod", "--now")
    k.get_object_assert("pods", PODS, "")

    ### Delete POD valid-pod by id with --grace-period=0 (succeeds without --force by waiting)
    k("create", "-f", valid_pod)
    k.get_object_assert("pods", PODS, "valid-pod:")
    k("delete", "pod", "valid-pod", "--grace-period=0")
    k.get_object_assert("pods", PODS, "")

    ### Create POD valid-pod from dumped YAML
    k.new_namespace()
    k.get_object_assert("pods", PODS, "")
    dumped = "\n".join(line for line in output_pod.splitlines() if "namespace:" not in line)
    k("create", "-f", "-", stdin=dumped)
    k.get_object_assert("pods", PODS, "valid-pod:")

    ### Delete POD valid-pod from JSON
    k.get_object_assert("pods", PODS, "valid-pod:")
    k("delete", "-f", valid_pod, "--grace-period=0", "--force")
    k.get_object_assert("pods", PODS, "")

    ### Create POD valid-pod from JSON
    k.new_namespace()
    k.get_object_assert("pods", PODS, "")
    k("create", "-f", valid_pod)
    k.get_object_assert("pods", PODS, "valid-pod:")

    ### Delete POD valid-pod with label
    k.get_object_assert("pods -l'name in (valid-pod)'", PODS, "valid-pod:")
    k("delete", "pods", "-lname in (valid-pod)", "--grace-period=0", "--force")
    k.get_object_assert("pods -l'name in (valid-pod)'", PODS, "")

    ### Create POD valid-pod from YAML
    k.new_namespace()
    k.get_object_assert("pods", PODS, "")
    k("create", "-f", valid_pod)
    k.get_object_assert("pods", PODS, "valid-pod:")
    if_has_string(k("get", "pods", "--field-selector", "metadata.name=valid-pod"), "valid-pod")
    phase = k("get", "pod", "valid-pod", "-o", "go-template={{ .status.phase }}")
    if_has_string(k("get", "pods", "--field-selector", f"status.phase={phase}"), "valid-pod")

    ### Delete PODs with no parameter mustn't kill everything
    k.get_object_assert("pods", PODS, "valid-pod:")
    k.fails("delete", "pods")
    k.get_object_assert("pods", PODS, "valid-pod:")

    ### Delete PODs with --all and a label selector is not permitted
    k.get_object_assert("pods", PODS, "valid-pod:")
    k.fails("delete", "--all", "pods", "-lname in (valid-pod)")
    k.get_object_assert("pods", PODS, "valid-pod:")

    ### Delete all PODs
    k.get_object_assert("pods", PODS, "valid-pod:")
    k("delete", "--all", "pods", "--grace-period=0", "--force")
    k.get_object_assert("pods -l'name in (valid-pod)'", PODS, "")


def test_run_pod_tests_describe_pod_env_secret_configmap_pdb(kubectl: Cmd) -> None:
    # run_pod_tests' "Detailed tests for describe pod output"
    k, ident, ns = kubectl, "{{.metadata.name}}", "--namespace=test-kubectl-describe-pod"
    found = '{{range.items}}{{ if eq .metadata.name "%s" }}found{{end}}{{end}}:'
    k.get_object_assert("namespaces", found % "test-kubectl-describe-pod", ":")
    k("create", "namespace", "test-kubectl-describe-pod")
    k.get_object_assert("namespaces/test-kubectl-describe-pod", ident, "test-kubectl-describe-pod")

    ### Create a generic secret
    k.get_object_assert(f"secrets {ns}", PODS, "")
    secret = ("generic", "test-secret", "--from-literal=key-1=value1", "--type=test-type", ns)
    k("create", "secret", *secret[:2], "--dry-run=client", *secret[2:])
    k("create", "secret", *secret[:2], "--dry-run=server", *secret[2:])
    k.get_object_assert(f"secrets {ns}", PODS, "")
    k("create", "secret", *secret)
    k.get_object_assert(f"secret/test-secret {ns}", ident, "test-secret")
    k.get_object_assert(f"secret/test-secret {ns}", "{{.type}}", "test-type")

    ### Create a generic configmap
    k.get_object_assert(f"configmaps {ns}", found % "test-configmap", ":")
    k("create", "configmap", "test-configmap", "--from-literal=key-2=value2", ns)
    k.get_object_assert(f"configmap/test-configmap {ns}", ident, "test-configmap")

    ### Create a pod disruption budget with minAvailable
    k.get_object_assert(f"pdb {ns}", found % "test-pdb-1", ":")
    k("create", "pdb", "test-pdb-1", "--dry-run=client", "--selector=app=rails", "--min-available=2", ns)
    k("create", "pdb", "test-pdb-1", "--dry-run=server", "--selector=app=rails", "--min-available=2", ns)
    k.get_object_assert(f"pdb {ns}", found % "test-pdb-1", ":")
    k("create", "pdb", "test-pdb-1", "--selector=app=rails", "--min-available=2", ns)
    k.get_object_assert(f"pdb/test-pdb-1 {ns}", "{{.spec.minAvailable}}", "2")
    k("create", "pdb", "test-pdb-2", "--selector=app=rails", "--min-available=50%", ns)
    k.get_object_assert(f"pdb/test-pdb-2 {ns}", "{{.spec.minAvailable}}", "50%")
    describe_resource_chunk_size_assert(k, "poddisruptionbudgets", "events", ns)

    ### Create a pod disruption budget with maxUnavailable
    k("create", "pdb", "test-pdb-3", "--selector=app=rails", "--max-unavailable=2", ns)
    k.get_object_assert(f"pdb/test-pdb-3 {ns}", "{{.spec.maxUnavailable}}", "2")
    k("create", "pdb", "test-pdb-4", "--selector=app=rails", "--max-unavailable=50%", ns)
    k.get_object_assert(f"pdb/test-pdb-4 {ns}", "{{.spec.maxUnavailable}}", "50%")

    ### Fail creating a pod disruption budget if both maxUnavailable and minAvailable specified
    k.fails("create", "pdb", "test-pdb", "--selector=app=rails", "--min-available=2", "--max-unavailable=3", ns)

    # A pod that consumes secret, configmap, and downward API keys as envs
    k.get_object_assert(f"pods {ns}", PODS, "")
    k("create", "-f", _file(k, "pod-with-api-env.yaml", POD_WITH_API_ENV), ns)
    env = (
        "TEST_CMD_1", "<set to the key 'key-1' in secret 'test-secret'>",
        "TEST_CMD_2", "<set to the key 'key-2' of config map 'test-configmap'>",
        "TEST_CMD_3", "env-test-pod (v1:metadata.name)",
    )  # fmt: skip
    describe_object_assert(k, f"pods {ns}", "env-test-pod", *env)
    describe_object_assert(k, f"pods {ns}", "", *env)

    k("delete", "pod", "env-test-pod", ns)
    k("delete", "secret", "test-secret", ns)
    k("delete", "configmap", "test-configmap", ns)
    k("delete", "pdb/test-pdb-1", "pdb/test-pdb-2", "pdb/test-pdb-3", "pdb/test-pdb-4", ns)
    k("delete", "namespace", "test-kubectl-describe-pod")


def test_run_pod_tests_priority_class(kubectl: Cmd) -> None:
    k = kubectl
    found = '{{range.items}}{{ if eq .metadata.name "test-priorityclass" }}found{{end}}{{end}}:'
    k.get_object_assert("priorityclasses", found, ":")
    k("create", "priorityclass", "test-priorityclass", "--dry-run=client")
    k("create", "priorityclass", "test-priorityclass", "--dry-run=server")
    k.get_object_assert("priorityclasses", found, ":")
    k("create", "priorityclass", "test-priorityclass")
    k.get_object_assert("priorityclasses", found, "found:")
    describe_resource_chunk_size_assert(k, "priorityclasses", "events", "")
    k("delete", "priorityclass", "test-priorityclass")


def test_run_pod_tests_label_annotate_record(kubectl: Cmd) -> None:
    # run_pod_tests, from "Create two PODs" to "Annotate POD YAML file locally"
    k = kubectl
    valid_pod = _file(k, "valid-pod.yaml", VALID_POD)
    k.new_namespace()
    k.get_object_assert("pods", PODS, "")
    k("create", "-f", valid_pod)
    k("create", "-f", _file(k, "agnhost-primary-pod.yaml", AGNHOST_PRIMARY_POD))
    k.get_object_assert("pods", PODS, "agnhost-primary:valid-pod:")

    ### Delete multiple PODs at once
    k("delete", "pods", "valid-pod", "agnhost-primary", "--grace-period=0", "--force")
    k.get_object_assert("pods", PODS, "")

    ### Create valid-pod POD
    k.new_namespace()
    k.get_object_assert("pods", PODS, "")
    k("create", "-f", valid_pod)
    k.get_object_assert("pods", PODS, "valid-pod:")

    labels = "{{range.metadata.labels}}{{.}}:{{end}}"
    ### Dry-run label the valid-pod POD
    k.get_object_assert("pod valid-pod", labels, "valid-pod:")
    k("label", "pods", "valid-pod", "new-name=new-valid-pod", "--dry-run=client")
    k("label", "pods", "valid-pod", "new-name=new-valid-pod", "--dry-run=server")
    k.get_object_assert("pod valid-pod", labels, "valid-pod:")

    ### Label the valid-pod POD
    k("label", "pods", "valid-pod", "new-name=new-valid-pod")
    k.get_object_assert("pod valid-pod", labels, "valid-pod:new-valid-pod:")

    ### Label the valid-pod POD with empty label value
    k("label", "pods", "valid-pod", "emptylabel=")
    k.get_object_assert("pod valid-pod", "{{.metadata.labels.emptylabel}}", "")

    ### Dry-run annotate the valid-pod POD with empty annotation value
    empty = "{{.metadata.annotations.emptyannotation}}"
    k.get_object_assert("pod valid-pod", empty, "<no value>")
    k("annotate", "pods", "valid-pod", "emptyannotation=", "--dry-run=client")
    k("annotate", "pods", "valid-pod", "emptyannotation=", "--dry-run=server")
    k.get_object_assert("pod valid-pod", empty, "<no value>")

    ### Annotate the valid-pod POD with empty annotation value
    k("annotate", "pods", "valid-pod", "emptyannotation=")
    k.get_object_assert("pod valid-pod", empty, "")
    managers = "-o=jsonpath={.metadata.managedFields[*].manager}"
    if_has_string(k.both("get", "pod", "valid-pod", managers), "kubectl-annotate")

    ### Record label change
    annotations = "{{range.metadata.annotations}}{{.}}:{{end}}"
    k.get_object_assert("pod valid-pod", "{{range.items}}{{.metadata.annotations}}:{{end}}", "")
    k("label", "pods", "valid-pod", "record-change=true", "--record=true")
    k.get_object_assert("pod valid-pod", annotations, ".*--record=true.*")
    if_has_string(k.both("get", "pod", "valid-pod", managers), "kubectl-label")

    ### Do not record label change
    k("label", "pods", "valid-pod", "no-record-change=true", "--record=false")
    k.get_object_assert("pod valid-pod", annotations, ".*--record=true.*")

    ### Record label change with specified flag and previous change already recorded
    k("label", "pods", "valid-pod", "new-record-change=true", "--record=true")
    k.get_object_assert("pod valid-pod", annotations, ".*new-record-change=true.*")

    ### Delete POD by label
    k.get_object_assert("pods", PODS, "valid-pod:")
    k("delete", "pods", "-lnew-name=new-valid-pod", "--grace-period=0", "--force")
    k.get_object_assert("pods", PODS, "")

    ### Create pod-with-precision POD
    k.get_object_assert("pods", PODS, "")
    k("create", "-f", _file(k, "pod-with-precision.json", POD_WITH_PRECISION))
    k.get_object_assert("pods", PODS, "pod-with-precision:")

    ## Patch preserves precision
    k("patch", "pod", "pod-with-precision", '-p={"metadata":{"annotations":{"patchkey": "patchvalue"}}}')
    k.get_object_assert("pod pod-with-precision", "{{.metadata.annotations.patchkey}}", "patchvalue")
    k("label", "pods", "pod-with-precision", "labelkey=labelvalue")
    k.get_object_assert("pod pod-with-precision", "{{.metadata.labels.labelkey}}", "labelvalue")
    k("annotate", "pods", "pod-with-precision", "annotatekey=annotatevalue")
    k.get_object_assert("pod pod-with-precision", "{{.metadata.annotations.annotatekey}}", "annotatevalue")
    # (the values kept their precision: the supplemental groups as written)
    groups = "{{range .spec.securityContext.supplementalGroups}}{{.}},{{end}}"
    k.get_object_assert("pod pod-with-precision", groups, "0,1000030003,2147483647,")
    k("delete", "pod", "pod-with-precision")

    ### Annotate POD YAML file locally without effecting the live pod.
    pod_yaml = _file(k, "pod.yaml", POD_YAML)
    k("create", "-f", pod_yaml)
    k("annotate", "-f", pod_yaml, "annotatekey=annotatevalue")
    k.get_object_assert("pod test-pod", "{{.metadata.annotations.annotatekey}}", "annotatevalue")
    output_message = k("annotate", "--local", "-f", pod_yaml, "annotatekey=localvalue", "-o", "yaml")
    k.get_object_assert("pod test-pod", "{{.metadata.annotations.annotatekey}}", "annotatevalue")
    if_has_string(output_message, "localvalue")
    k("delete", "-f", pod_yaml)


def test_run_pod_tests_patch_replace_edit(kubectl: Cmd) -> None:
    # run_pod_tests, from "Create valid-pod POD" (after `create --edit`) to "Delete POD by label"
    k = kubectl
    valid_pod = _file(k, "valid-pod.yaml", VALID_POD)
    images = "{{range.items}}{{(index .spec.containers 0).image}}:{{end}}"
    container = '{"spec":{"containers":[{"name": "kubernetes-serve-hostname", "image": "%s"}]}}'
    k.wait_object_assert("pods", PODS, "")
    k("create", "-f", valid_pod)
    k.get_object_assert("pods", PODS, "valid-pod:")

    ## Patch can modify a local object
    out = k("patch", "--local", "-f", valid_pod, '--patch={"spec": {"restartPolicy":"Never"}}', "-o", "yaml")
    assert "Never" in out

    ## Patch fails with type restore error and exit code 1
    output_message = k.fails("patch", "pod", "valid-pod", '-p={"metadata":{"labels":"invalid"}}')
    if_has_string(output_message, "cannot restore map from string")

    ## Patch exits with error message "patched (no change)" and exit code 0 when no-op occurs
    output_message = k.both("patch", "pod", "valid-pod", '-p={"metadata":{"labels":{"name":"valid-pod"}}}')
    if_has_string(output_message, r"patched (no change)")

    ## Patch pod can change image
    k("patch", "pod", "valid-pod", "--record", f"-p={container % 'nginx'}")
    k.get_object_assert("pods", images, "nginx:")
    k.get_object_assert("pods", "{{range.items}}{{.metadata.annotations}}:{{end}}", ".*kubernetes.io/change-cause.*")
    json_patch = '[{"op": "replace", "path": "/spec/containers/0/image", "value":"%s"}]'
    k("patch", "pod", "valid-pod", "--type=json", f"-p={json_patch % 'nginx2'}")
    k.get_object_assert("pods", images, "nginx2:")
    k("patch", "pod", "valid-pod", "--type=json", f"-p={json_patch % 'nginx'}")
    k.get_object_assert("pods", images, "nginx:")
    # Dry-run change image
    k("patch", "pod", "valid-pod", "--record", "--dry-run=client", f"-p={container % 'not-nginx'}")
    k("patch", "pod", "valid-pod", "--record", "--dry-run=server", f"-p={container % 'not-nginx'}")
    k.get_object_assert("pods", images, "nginx:")
    # yaml input
    yaml_patch = "spec:\n  containers:\n  - name: kubernetes-serve-hostname\n    image: changed-with-yaml\n"
    k("patch", "pod", "valid-pod", f"-p={yaml_patch}")
    k.get_object_assert("pods", images, "changed-with-yaml:")
    ## Patch pod from JSON can change image
    k("patch", "-f", valid_pod, f"-p={container % 'k8s.gcr.io/pause:3.5'}")
    k.get_object_assert("pods", images, "k8s.gcr.io/pause:3.5:")
    managers = "-o=jsonpath={.metadata.managedFields[*].manager}"
    if_has_string(k.both("get", "pod", "valid-pod", managers), "kubectl-patch")

    ## resourceVersion in a patch is a precondition: the current one applies (upstream retries a conflict with
    ## another writer: the node agent writes the pod's status here too)
    rv_patch = '{"spec":{"containers":[{"name": "kubernetes-serve-hostname", "image": "nginx"}]},'
    rv_patch += '"metadata":{"resourceVersion":"%s"}}'
    for _attempt in range(4):
        rv = k("get", "pod", "valid-pod", "-o", "go-template={{ .metadata.resourceVersion }}")
        proc = k.run("patch", "pod", "valid-pod", f"-p={rv_patch % rv}")
        if "the object has been modified" not in proc.stderr:
            assert proc.returncode == 0, proc.stderr
            k.get_object_assert("pods", images, "nginx:")
            break
    else:
        raise AssertionError("the patch with the current resourceVersion conflicted four times")
    ## a different one is rejected
    rv = str(int(k("get", "pod", "valid-pod", "-o", "go-template={{ .metadata.resourceVersion }}")) + 100)
    proc = k.run("patch", "pod", "valid-pod", f"-p={rv_patch % rv}")
    assert "please apply your changes to the latest version and try again" in proc.stderr, proc.stderr

    ## --force replace pod can change other field, e.g., spec.container.name
    dumped = k("get", "pod", "valid-pod", "-o", "json").replace(
        '"kubernetes-serve-hostname"', '"replaced-k8s-serve-hostname"'
    )
    replaced = _file(k, "tmp-valid-pod.json", dumped)
    k("replace", "--force", "-f", replaced)
    k.get_object_assert("pod valid-pod", "{{(index .spec.containers 0).name}}", "replaced-k8s-serve-hostname")
    if_has_string(k.both("get", "pod", "valid-pod", managers), "kubectl-replace")
    ## replace --grace-period and --timeout require --force
    if_has_string(
        k.fails("replace", "--grace-period=1", "-f", replaced), r"\-\-grace-period must have \-\-force specified"
    )
    if_has_string(k.fails("replace", "--timeout=1s", "-f", replaced), r"\-\-timeout must have \-\-force specified")

    ## replace of a cluster scoped resource can succeed
    k("create", "-f", "-", stdin='{"kind": "Node", "apiVersion": "v1", "metadata": {"name": "node-v1-test"}}')
    try:
        has_a = "{{range.items}}{{if .metadata.annotations.a}}found{{end}}{{end}}:"
        k.get_object_assert("node node-v1-test", has_a, ":")
        node = '{"kind": "Node", "apiVersion": "v1", "metadata": {"name": "node-v1-test", "annotations": {"a":"b"},'
        node += ' "resourceVersion": "0"}}'
        k("replace", "--dry-run=server", "-f", "-", stdin=node)
        k("replace", "--dry-run=client", "-f", "-", stdin=node)
        k.get_object_assert("node node-v1-test", has_a, ":")
        k("replace", "-f", "-", stdin=node)
        k.get_object_assert("node node-v1-test", "{{.metadata.annotations.a}}", "b")
    finally:
        k("delete", "node", "node-v1-test")

    ## kubectl edit can update the image field of a POD (a fake editor)
    editor = k.config.parent / "tmp-editor.sh"
    editor.write_text('#!/usr/bin/env bash\nsed -i "s/nginx/k8s.gcr.io\\/serve_hostname/g" $1\n')
    editor.chmod(0o755)
    k(
        "patch",
        "pod",
        "valid-pod",
        f"-p={container.replace('kubernetes-serve-hostname', 'replaced-k8s-serve-hostname') % 'nginx'}",
    )
    k.get_object_assert("pods", images, "nginx:")
    proc = k.run("edit", "pods/valid-pod", "--output-patch=true", editor=str(editor))
    assert "Patch:" in proc.stdout, proc.stdout + proc.stderr
    k.get_object_assert("pods", images, "k8s.gcr.io/serve_hostname:")
    if_has_string(k.both("get", "pod", "valid-pod", managers), "kubectl-edit")

    ## kubectl edit should work on Windows
    proc = k.run("edit", "pod/valid-pod", editor="cat")
    assert "Edit cancelled" in proc.stdout + proc.stderr
    assert "name: valid-pod" in k.run("edit", "pod/valid-pod", editor="cat").stdout
    assert b"\r\n" in _stdout_bytes(k, "edit", "--windows-line-endings", "pod/valid-pod", editor="cat")
    assert b"\r\n" not in _stdout_bytes(k, "edit", "--windows-line-endings=false", "pod/valid-pod", editor="cat")
    assert "kind: List" in k.run("edit", "ns", editor="cat").stdout

    ### Label POD YAML file locally without effecting the live pod.
    name = "{{.metadata.labels.name}}"
    k.get_object_assert("pod valid-pod", name, "valid-pod")
    pod_yaml = _file(k, "pod.yaml", POD_YAML)
    output_message = k("label", "--local", "--overwrite", "-f", pod_yaml, "name=localonlyvalue", "-o", "yaml")
    k.get_object_assert("pod valid-pod", name, "valid-pod")
    if_has_string(output_message, "localonlyvalue")

    ### Overwriting an existing label is not permitted
    k.get_object_assert("pod valid-pod", name, "valid-pod")
    k.fails("label", "pods", "valid-pod", "name=valid-pod-super-sayan")
    k.get_object_assert("pod valid-pod", name, "valid-pod")

    ### --overwrite must be used to overwrite existing label, can be applied to all resources
    k("label", "--overwrite", "pods", "--all", "name=valid-pod-super-sayan")
    k.get_object_assert("pod valid-pod", name, "valid-pod-super-sayan")

    ### Delete POD by label
    k.get_object_assert("pods", PODS, "valid-pod:")
    k("delete", "pods", "-lname in (valid-pod-super-sayan)", "--grace-period=0", "--force")
    k.get_object_assert("pods", PODS, "")


def test_run_pod_tests_multi_pod_file_and_apply_annotation(kubectl: Cmd) -> None:
    # run_pod_tests, "Create two PODs from 1 yaml file" to the end
    k = kubectl
    k.new_namespace()
    k.get_object_assert("pods", PODS, "")
    multi_pod = _file(k, "multi-pod.yaml", MULTI_POD)
    k("create", "-f", multi_pod)
    k.get_object_assert("pods", PODS, "redis-master:valid-pod:")
    k("delete", "-f", multi_pod)
    k.get_object_assert("pods", PODS, "")

    last_applied = "kubectl.kubernetes.io/last-applied-configuration"
    ## 1. kubectl create doesn't set the annotation
    k.new_namespace()
    k.get_object_assert("pods", PODS, "")
    k("create", "-f", _file(k, "pod.yaml", POD_YAML))
    k.get_object_assert("pods test-pod", "{{.metadata.labels.name}}", "test-pod-label")
    assert last_applied not in k("get", "pods", "test-pod", "-o", "yaml")
    ## 2. kubectl replace doesn't set the annotation
    replace = _file(
        k,
        "test-pod-replace.yaml",
        k("get", "pods", "test-pod", "-o", "yaml").replace("test-pod-label", "test-pod-replaced"),
    )
    k("replace", "-f", replace)
    k.get_object_assert("pods test-pod", "{{.metadata.labels.name}}", "test-pod-replaced")
    assert last_applied not in k("get", "pods", "test-pod", "-o", "yaml")
    ## 3. kubectl apply does set the annotation
    k("apply", "-f", _file(k, "pod-apply.yaml", POD_APPLY_YAML))
    k.get_object_assert("pods test-pod", "{{.metadata.labels.name}}", "test-pod-applied")
    annotation = "jsonpath={.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration}"
    applied = k("get", "pods", "test-pod", "-o", annotation)
    assert applied and last_applied in k("get", "pods", "test-pod", "-o", "yaml")
    ## 4. kubectl replace updates an existing annotation
    replace = _file(
        k,
        "test-pod-replace.yaml",
        k("get", "pods", "test-pod", "-o", "yaml").replace("test-pod-applied", "test-pod-replaced"),
    )
    k("replace", "-f", replace)
    k.get_object_assert("pods test-pod", "{{.metadata.labels.name}}", "test-pod-replaced")
    # (upstream's `! [[ $(diff -q A B > /dev/null) ]]` cannot fail; the annotation did change: the sed edited it)
    replaced = k("get", "pods", "test-pod", "-o", annotation)
    assert replaced and replaced != applied and "test-pod-replaced" in replaced
    k("delete", "pods", "test-pod")


def test_run_create_secret_tests(kubectl: Cmd) -> None:
    k = kubectl
    ### Create generic secret with explicit namespace
    if_has_string(k.fails("get", "secrets", "mysecret"), 'secrets "mysecret" not found')
    output_message = k(
        "create", "secret", "generic", "mysecret", "--dry-run=client", "--from-literal=foo=bar",
        "-o", "jsonpath={.metadata.namespace}", "--namespace=user-specified",
    )  # fmt: skip
    if_has_string(output_message, "user-specified")
    if_has_string(k.fails("get", "secrets", "mysecret"), 'secrets "mysecret" not found')
    output_message = k(
        "create", "secret", "generic", "mysecret", "--dry-run=client", "--from-literal=foo=bar",
        "-o", "jsonpath={.metadata.namespace}",
    )  # fmt: skip
    assert output_message == ""

    # replace --raw PUTs to the URL given
    configmaps = "/api/v1/namespaces/default/configmaps"
    cm = k("create", "configmap", "tester-update-cm", "-o", "json", "--dry-run=client")
    k("create", "--raw", configmaps, "-f", "-", stdin=cm)
    cm = k("create", "configmap", "tester-update-cm", "--from-literal=key1=config1", "-o", "json", "--dry-run=client")
    output_message = k("replace", "--raw", f"{configmaps}/tester-update-cm", "-f", "-", stdin=cm)
    if_has_string(output_message, "uid")
    if_has_string(k.both("get", "--raw", f"{configmaps}/tester-update-cm"), "config1")
    # delete --raw
    k("delete", "--raw", f"{configmaps}/tester-update-cm")
    if_has_string(k.fails("get", "configmap", "tester-update-cm"), 'configmaps "tester-update-cm" not found')


DOCKERCONFIG_JSON = """{
    "auths":{
        "http://foo.example.com":{
            "username":"foo",
            "password":"bar",
            "email":"foo@example.com"
        },
        "http://bar.example.com":{
            "username":"bar",
            "password":"baz",
            "email":"bar@example.com"
        }
    }
}
"""
"""hack/testdata/dockerconfig.json (as the script's expected base64 decodes)"""


def test_run_secrets_test(kubectl: Cmd) -> None:
    k, ns = kubectl, "--namespace=test-secrets"
    # Ensure dry run succeeds and includes kind, apiVersion and data, and doesn't require a server connection
    output_message = k(
        "create", "secret", "generic", "test", "--from-literal=key1=value1", "--dry-run=client", "-o", "yaml",
        "--server=example.com", "--v=6",
    )  # fmt: skip
    for match in ("kind: Secret", "apiVersion: v1", "key1: dmFsdWUx"):
        if_has_string(output_message, match)
    if_has_not_string(output_message, "example.com")

    ### Create a new namespace
    k.get_object_assert(
        "namespaces", '{{range.items}}{{ if eq .metadata.name "test-secrets" }}found{{end}}{{end}}:', ":"
    )
    k("create", "namespace", "test-secrets")
    k.get_object_assert("namespaces/test-secrets", "{{.metadata.name}}", "test-secrets")

    ### Create a generic secret in a specific namespace
    k.get_object_assert(f"secrets {ns}", PODS, "")
    k("create", "secret", "generic", "test-secret", "--from-literal=key1=value1", "--type=test-type", ns)
    k.get_object_assert(f"secret/test-secret {ns}", "{{.metadata.name}}", "test-secret")
    k.get_object_assert(f"secret/test-secret {ns}", "{{.type}}", "test-type")
    assert "key1: dmFsdWUx" in k("get", "secret/test-secret", ns, "-o", "yaml")
    describe_resource_chunk_size_assert(k, "secrets", "", ns)
    k("delete", "secret", "test-secret", ns)

    ### Create a docker-registry secret in a specific namespace
    k.get_object_assert(f"secrets {ns}", PODS, "")
    k(
        "create", "secret", "docker-registry", "test-secret", "--docker-username=test-user",
        "--docker-password=test-password", "--docker-email=test-user@test.com", ns,
    )  # fmt: skip
    k.get_object_assert(f"secret/test-secret {ns}", "{{.metadata.name}}", "test-secret")
    k.get_object_assert(f"secret/test-secret {ns}", "{{.type}}", "kubernetes.io/dockerconfigjson")
    assert (
        ".dockerconfigjson: eyJhdXRocyI6eyJodHRwczovL2luZGV4LmRvY2tlci5pby92MS8iOnsidXNlcm5hbWUiOiJ0ZXN0LXVzZXIiLCJwYX"
        "Nzd29yZCI6InRlc3QtcGFzc3dvcmQiLCJlbWFpbCI6InRlc3QtdXNlckB0ZXN0LmNvbSIsImF1dGgiOiJkR1Z6ZEMxMWMyVnlPblJsYzNRdGNHR"
        "npjM2R2Y21RPSJ9fX0="
    ) in k("get", "secret/test-secret", ns, "-o", "yaml")
    k("delete", "secret", "test-secret", ns)

    ### Create a docker-registry secret in a specific namespace with docker config file
    k.get_object_assert(f"secrets {ns}", PODS, "")
    config = _file(k, "dockerconfig.json", DOCKERCONFIG_JSON)
    k("create", "secret", "docker-registry", "test-secret", f"--from-file=.dockerconfigjson={config}", ns)
    k.get_object_assert(f"secret/test-secret {ns}", "{{.metadata.name}}", "test-secret")
    k.get_object_assert(f"secret/test-secret {ns}", "{{.type}}", "kubernetes.io/dockerconfigjson")
    encoded = base64.b64encode(DOCKERCONFIG_JSON.encode()).decode()
    assert f".dockerconfigjson: {encoded}" in k("get", "secret/test-secret", ns, "-o", "yaml")
    k("delete", "secret", "test-secret", ns)

    ### Create a tls secret (hack/testdata/tls.key, tls.crt: a key pair made here)
    key, crt = k.config.parent / "tls.key", k.config.parent / "tls.crt"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=test", "-days", "1",
         "-keyout", str(key), "-out", str(crt)],
        check=True, capture_output=True,
    )  # fmt: skip
    k.get_object_assert(f"secrets {ns}", PODS, "")
    k("create", "secret", "tls", "test-secret", ns, f"--key={key}", f"--cert={crt}")
    k.get_object_assert(f"secret/test-secret {ns}", "{{.metadata.name}}", "test-secret")
    k.get_object_assert(f"secret/test-secret {ns}", "{{.type}}", "kubernetes.io/tls")
    k("delete", "secret", "test-secret", ns)
    # (`--key <(cat tls.key)`: process substitution gives kubectl a path too; the same call)

    # Create a secret using stringData
    k("create", ns, "-f", "-", stdin=(
        '{"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "secret-string-data"},'
        ' "data": {"k1":"djE=", "k2":""}, "stringData": {"k2":"v2"}}'
    ))  # fmt: skip
    k.get_object_assert(f"secret/secret-string-data {ns} ", "{{.data}}", ".*k1:djE=.*")
    k.get_object_assert(f"secret/secret-string-data {ns} ", "{{.data}}", ".*k2:djI=.*")
    k.get_object_assert(f"secret/secret-string-data {ns} ", "{{.stringData}}", "<no value>")
    k("delete", "secret", "secret-string-data", ns)

    ### Create a secret using output flags
    k.get_object_assert(f"secrets {ns}", PODS, "")
    out = k(
        "create", "secret", "generic", "test-secret", ns, "--from-literal=key1=value1", "--output=go-template",
        "--template={{.metadata.name}}:",
    )  # fmt: skip
    assert "test-secret:" in out
    k("delete", "secret", "test-secret", ns)
    k("delete", "namespace", "test-secrets")


def test_run_namespace_tests(kubectl: Cmd) -> None:
    k = kubectl
    ### Create a new namespace
    if_has_string(k.fails("get", "ns/my-namespace"), " not found")
    k("create", "namespace", "my-namespace", "--dry-run=client")
    k("create", "namespace", "my-namespace", "--dry-run=server")
    if_has_string(k.fails("get", "ns/my-namespace"), " not found")
    k("create", "namespace", "my-namespace")
    k.get_object_assert("namespaces/my-namespace", "{{.metadata.name}}", "my-namespace")
    describe_resource_chunk_size_assert(k, "namespaces", "resourcequotas,limitranges", "")
    k("delete", "namespace", "my-namespace", "--wait=false")
    # make sure that wait properly waits for finalization
    k("wait", "--for=delete", "ns/my-namespace")
    if_has_string(k.fails("get", "ns/my-namespace"), " not found")
    # (`kubectl delete namespace -n my-namespace --all` is left out: see the doc)

    ### Quota
    k("create", "namespace", "quotas")
    k.get_object_assert("namespaces/quotas", "{{.metadata.name}}", "quotas")
    found = '{{range.items}}{{ if eq .metadata.name "test-quota" }}found{{end}}{{end}}:'
    k.get_object_assert("quota --namespace=quotas", found, ":")
    k("create", "quota", "test-quota", "--dry-run=client", "--namespace=quotas")
    k("create", "quota", "test-quota", "--dry-run=server", "--namespace=quotas")
    k.get_object_assert("quota --namespace=quotas", found, ":")
    k("create", "quota", "test-quota", "--namespace=quotas")
    k.get_object_assert("quota --namespace=quotas", found, "found:")
    describe_resource_chunk_size_assert(k, "resourcequotas", "", "--namespace=quotas")
    k("delete", "quota", "test-quota", "--namespace=quotas")
    k("delete", "namespace", "quotas")

    ### Pods in Namespaces
    k.get_object_assert("namespaces", '{{range.items}}{{ if eq .metadata.name "other" }}found{{end}}{{end}}:', ":")
    k("create", "namespace", "other")
    k.get_object_assert("namespaces/other", "{{.metadata.name}}", "other")
    k.get_object_assert("pods --namespace=other", PODS, "")
    k("create", "--namespace=other", "-f", _file(k, "valid-pod.yaml", VALID_POD))
    k.get_object_assert("pods --namespace=other", PODS, "valid-pod:")
    k.get_object_assert("pods -n other", PODS, "valid-pod:")
    output_message = k.fails("get", "pod", "valid-pod", "--all-namespaces")
    if_has_string(output_message, "a resource cannot be retrieved by name across all namespaces")
    k.get_object_assert("pods --namespace=other", PODS, "valid-pod:")
    k("delete", "pod", "--namespace=other", "valid-pod", "--grace-period=0", "--force")
    k.get_object_assert("pods --namespace=other", PODS, "")
    k("delete", "namespace", "other")


def test_run_nodes_tests(kubectl: Cmd) -> None:
    k, node = kubectl, f"nodes {NODE}"
    k.get_object_assert("nodes", PODS, f"{NODE}:")
    fields = ("Name:", "Labels:", "CreationTimestamp:", "Conditions:", "Addresses:", "Capacity:", "Pods:")
    describe_object_assert(k, "nodes", NODE, *fields)
    describe_events_assert(k, "nodes", NODE)
    describe_events_assert(k, "nodes", NODE, "false")
    describe_events_assert(k, "nodes", NODE, "true")
    describe_object_assert(k, "nodes", "", *fields)
    describe_events_assert(k, "nodes", "", "true")
    describe_events_assert(k, "nodes", "", "false")
    describe_events_assert(k, "nodes", "", "true")
    describe_resource_chunk_size_assert(k, "nodes", "pods,events", "")

    ### kubectl patch update can mark node unschedulable
    k.get_object_assert(node, "{{.spec.unschedulable}}", "<no value>")
    try:
        k("patch", "nodes", NODE, '-p={"spec":{"unschedulable":true}}')
        k.get_object_assert(node, "{{.spec.unschedulable}}", "true")
    finally:
        k("patch", "nodes", NODE, '-p={"spec":{"unschedulable":null}}')
    k.get_object_assert(node, "{{.spec.unschedulable}}", "<no value>")
    # (the TokenReview create that follows is left out: kjobs serves no authentication.k8s.io TokenReview)


# test/cmd/get.sh


def test_run_kubectl_get_tests(kubectl: Cmd) -> None:
    k = kubectl
    ### Test retrieval of non-existing pods
    k.get_object_assert("pods", PODS, "")
    if_has_string(k.fails("get", "pods", "abc"), 'pods "abc" not found')
    k.get_object_assert("pods", PODS, "")
    if_has_string(k.fails("get", "pods", "abc", "-o", "name"), 'pods "abc" not found')

    ### Retrieval of pods when none exist with non-human readable output format flag specified
    k.get_object_assert("pods", PODS, "")
    for output in (
        "json",
        "yaml",
        "name",
        "jsonpath={.items}",
        "go-template={{.items}}",
        "custom-columns=NAME:.metadata.name",
    ):
        if_has_not_string(k.both("get", "pods", "-o", output), "No resources found")

    ### Retrieval of pods when none exist, with human-readable output format flag specified
    k.get_object_assert("pods", PODS, "")
    if_has_not_string(k.fails("get", "foobar"), "No resources found")
    if_has_string(k.both("get", "pods"), "No resources found")
    if_has_not_string(k.both("get", "pods", "--ignore-not-found"), "No resources found")
    if_has_string(k.both("get", "pods", "-o", "wide"), "No resources found")

    ### Retrieval of non-existing POD with json output flag specified
    k.get_object_assert("pods", PODS, "")
    output_message = k.fails("get", "pods", "abc", "-o", "json")
    if_has_string(output_message, 'pods "abc" not found')
    if_has_not_string(output_message, "List")

    ### kubectl get all: 200 OK from each kind of the `all` category kjobs serves (pods, jobs; the script also
    ### names replicationcontrollers, services, daemonsets, deployments, replicasets, statefulsets and HPAs)
    output_message = k.both("--v=6", "--namespace", "default", "get", "all", "--chunk-size=0")
    if_has_string(output_message, "/api/v1/namespaces/default/pods 200 OK")
    if_has_string(output_message, "/apis/batch/v1/namespaces/default/jobs 200 OK")
    for gone in ("daemonsets", "deployments", "replicasets"):
        if_has_not_string(output_message, f"/apis/extensions/v1beta1/namespaces/default/{gone} 200 OK")

    ### kubectl get chunk size: the bootstrap ClusterRoles (12 on kjobs) are more than one chunk of 10
    output_message = k.both("--v=6", "get", "clusterrole", "--chunk-size=10")
    if_has_string(output_message, "/clusterroles?limit=10 200 OK")
    if_has_string(output_message, "/v1/clusterroles?continue=")

    ### kubectl get chunk size defaults to 500
    output_message = k.both("--v=6", "get", "clusterrole")
    if_has_string(output_message, "/clusterroles?limit=500 200 OK")

    ### kubectl get accumulates pages
    output_message = k("get", "namespaces", "--chunk-size=1", "--no-headers")
    for name in ("default", "kube-public", "kube-system"):
        if_has_string(output_message, name)

    ### chunk size does not result in a --watch error when the list is served in multiple chunks
    found = '{{range.items}}{{ if eq .metadata.name "%s" }}found{{end}}{{end}}:'
    for name in ("one", "two", "three"):
        k.get_object_assert("configmaps", found % name, ":")
    for name in ("one", "two", "three"):
        k("create", "cm", name)
    for watch in ("--watch", "--watch-only"):
        proc = k.run("get", "configmap", "--chunk-size=1", watch, "--request-timeout=1s")
        if_has_not_string(proc.stdout + proc.stderr, "watch is only supported on individual resources")

    ### --allow-missing-template-keys
    k.new_namespace()
    k.get_object_assert("pods", PODS, "")
    k("create", "-f", _file(k, "valid-pod.yaml", VALID_POD))
    k("get", "pods", "-o", "json")
    k.get_object_assert("pods", PODS, "valid-pod:")
    k("get", "pod", "valid-pod", "-o", "jsonpath={.missing}")
    k("get", "pod", "valid-pod", "-o", "go-template={{.missing}}")
    if_has_string(k("get", "pod", "valid-pod", "--template={{.metadata.name}}:"), "valid-pod:")
    output_message = k.fails(
        "get", "pod", "valid-pod", "--allow-missing-template-keys=false", "-o", "jsonpath={.missing}"
    )
    if_has_string(output_message, "missing is not found")
    output_message = k.fails(
        "get", "pod", "valid-pod", "--allow-missing-template-keys=false", "-o", "go-template={{.missing}}"
    )
    if_has_string(output_message, 'map has no entry for key "missing"')
    # --subresource=status prints the pod (the script greps `valid-pod:`, which no table row holds)
    if_has_string(k("get", "pod", "valid-pod", "--subresource=status"), "valid-pod")
    # pods have no scale subresource
    if_has_string(
        k.fails("get", "pod", "valid-pod", "--subresource=scale"), "the server could not find the requested resource"
    )

    ### kubectl get watch (each ends when its 1 s request timeout does)
    output_message = k.run("get", "pods", "-w", "--request-timeout=1").stdout
    if_has_string(output_message, "STATUS")
    if_has_string(output_message, "valid-pod")
    output_message = k.run("get", "pods/valid-pod", "-o", "name", "-w", "--request-timeout=1").stdout
    if_has_not_string(output_message, "STATUS")
    if_has_string(output_message, "pod/valid-pod")
    output_message = k.run("get", "pods/valid-pod", "-o", "yaml", "-w", "--request-timeout=1").stdout
    if_has_not_string(output_message, "STATUS")
    if_has_string(output_message, "name: valid-pod")
    if_has_string(k.fails("get", "pods/invalid-pod", "-w", "--request-timeout=1"), '"invalid-pod" not found')
    k("delete", "pods", "valid-pod", "--grace-period=0", "--force")

    ### 'kubectl get -f <file> -o <non default printer>' prints all the items in the file's list
    k.wait_object_assert("pods", PODS, "")
    multi_pod = _file(k, "multi-pod.yaml", MULTI_POD)
    k("create", "-f", multi_pod)
    if_has_string(k("get", "-f", multi_pod, "-o", "jsonpath={..metadata.name}"), "redis-master valid-pod")
    k("delete", "pods", "redis-master", "valid-pod", "--grace-period=0", "--force")
    # (`get -k hack/testdata/kustomize`: a Deployment and a Service besides its ConfigMap; left out)


SORTED_POD = """apiVersion: v1
kind: Pod
metadata:
  name: sorted-pod{n}
  creationTimestamp: "2018-08-30T14:10:5{second}Z"
  labels:
    name: sorted-pod{label}-label
spec:
  containers:
  - name: kubernetes-pause{container}
    image: registry.k8s.io/pause:3.5
{resources}"""
"""hack/testdata/sorted-pods/sorted-pod{1,2,3}.yaml"""
SORTED_PODS = [
    SORTED_POD.format(n=1, second=8, label=3, container=2, resources=(
        "    resources:\n      requests:\n        memory: \"64Mi\"\n        cpu: \"250m\"\n"
        "      limits:\n        memory: \"128Mi\"\n        cpu: \"500m\"\n"
    )),
    SORTED_POD.format(n=2, second=5, label=2, container=1, resources=(
        "    resources:\n      requests:\n        memory: \"1G\"\n        cpu: \"0.5\"\n"
        "      limits:\n        memory: \"2G\"\n        cpu: \"1\"\n"
    )),
    SORTED_POD.format(n=3, second=3, label=1, container=3, resources="").replace(
        "registry.k8s.io/pause:3.5", "k8s.gcr.io/pause:2.0"
    ),
]  # fmt: skip


def if_sort_by_has_correct_order(output: str, expected: str) -> None:
    """kube::test::if_sort_by_has_correct_order: the first column of each line after the first, `:`-joined."""
    names = "".join(line.split()[0] + ":" for line in output.splitlines()[1:] if line.split())
    if_has_string(names, expected)


def test_run_kubectl_sort_by_tests(kubectl: Cmd) -> None:
    k = kubectl
    ### sort-by should not panic if no pod exists
    k.get_object_assert("pods", PODS, "")
    k("get", "pods", "--sort-by={metadata.name}")
    k("get", "pods", "--sort-by={metadata.creationTimestamp}")

    ### sort-by should work if pod exists
    k("create", "-f", _file(k, "valid-pod.yaml", VALID_POD))
    k.get_object_assert("pods", PODS, "valid-pod:")
    if_has_string(k("get", "pods", "--sort-by={metadata.name}"), "valid-pod")
    output_message = k.both("get", "pods", "--v=8", "--sort-by={metadata.name}")
    if_has_string(output_message, "as=Table")
    if_has_string(output_message, "includeObject=Object")
    k.get_object_assert("pods", PODS, "valid-pod:")
    k("delete", "pod", "valid-pod", "--grace-period=0", "--force")
    k.get_object_assert("pods", PODS, "")

    ### sort-by should work by sorting by name
    k.get_object_assert("pods", PODS, "")
    created = ""
    for n, pod in enumerate(SORTED_PODS, 1):
        k("create", "-f", _file(k, f"sorted-pod{n}.yaml", pod))
        created += f"sorted-pod{n}:"
        k.get_object_assert("pods", PODS, created)

    def order(sort_by: str, expected: str, *flags: str) -> str:
        output = (
            k.both("get", "pods", f"--sort-by={sort_by}", *flags) if flags else k("get", "pods", f"--sort-by={sort_by}")
        )
        if_sort_by_has_correct_order(output, expected)
        return output

    order("{metadata.name}", "sorted-pod1:sorted-pod2:sorted-pod3:")
    order("{metadata.labels.name}", "sorted-pod3:sorted-pod2:sorted-pod1:")
    order("{spec.containers[0].name}", "sorted-pod2:sorted-pod1:sorted-pod3:")
    order("{metadata.creationTimestamp}", "sorted-pod1:sorted-pod2:sorted-pod3:")
    for field in ("requests.memory", "requests.cpu", "limits.memory", "limits.cpu"):
        order(f"{{.spec.containers[0].resources.{field}}}", "sorted-pod3:sorted-pod1:sorted-pod2:")
    # the fallback codepath (no server-side printing)
    output_message = order(
        "{spec.containers[0].name}", "sorted-pod2:sorted-pod1:sorted-pod3:", "--server-print=false", "--v=8"
    )
    if_has_not_string(output_message, "Table")

    k.get_object_assert("pods", PODS, "sorted-pod1:sorted-pod2:sorted-pod3:")
    k("delete", "pod", "--grace-period=0", "--force", "--all")
    k.get_object_assert("pods", PODS, "")


def test_run_kubectl_all_namespace_tests(kubectl: Cmd) -> None:
    k = kubectl
    k.get_object_assert(
        "namespaces", '{{range.items}}{{if eq .metadata.name "default"}}{{.metadata.name}}:{{end}}{{end}}', "default:"
    )
    k.get_object_assert("pods", PODS, "")
    k("create", "-f", _file(k, "valid-pod.yaml", VALID_POD))
    k.get_object_assert("pods", PODS, "valid-pod:")
    ### a specific namespace is ignored when all-namespaces is provided
    k("get", "pods", "--all-namespaces", "--namespace=default")
    ### --all-namespaces shows namespaces
    for ns in ("all-ns-test-1", "all-ns-test-2"):
        k("create", "namespace", ns)
        k("create", "serviceaccount", "test", "-n", ns)
    for flag in ("--all-namespaces", "-A"):
        output_message = k("get", "serviceaccounts", flag)
        if_has_string(output_message, "all-ns-test-1")
        if_has_string(output_message, "all-ns-test-2")
    k("delete", "namespace", "all-ns-test-1")
    k("delete", "namespace", "all-ns-test-2")

    k.get_object_assert("pods", PODS, "valid-pod:")
    k("delete", "pod", "valid-pod", "--grace-period=0", "--force")
    k.get_object_assert("pods", PODS, "")
    ### all-namespaces is ignored for root-scoped resources
    k.get_object_assert("nodes", PODS, f"{NODE}:")
    if_has_not_string(k.both("get", "nodes", "--all-namespaces"), "NAMESPACE")


def test_run_retrieve_multiple_tests(kubectl: Cmd) -> None:
    # `nodes/127.0.0.1 service/kubernetes` in the default namespace (kjobs' node has its own name)
    k = kubectl
    k("config", "set-context", "--current", "--namespace=")
    k.get_object_assert(f"nodes/{NODE} service/kubernetes", PODS, f"{NODE}:kubernetes:")


# test/cmd/create.sh


def test_run_kubectl_create_dry_run_tests(kubectl: Cmd) -> None:
    k = kubectl
    k.get_object_assert("pods", PODS, "")
    pod_yaml = _file(k, "pod.yaml", POD_YAML)
    k("create", "--dry-run=client", "-f", pod_yaml)
    k("create", "--dry-run=server", "-f", pod_yaml)
    k.get_object_assert("pods", PODS, "")


def test_run_kubectl_create_filter_tests(kubectl: Cmd) -> None:
    k = kubectl
    k.get_object_assert("pods", PODS, "")
    directory = k.config.parent / "filter"  # hack/testdata/filter
    directory.mkdir()
    for name, label in (("pod-apply-selector", "bingbang"), ("pod-dont-apply", "biz")):
        pod = "selector-test-pod" + ("-dont-apply" if label == "biz" else "")
        (directory / f"{name}.yaml").write_text(
            f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {pod}\n  labels:\n    name: {pod}\n"
            f"    unique-label: {label}\nspec:\n  containers:\n  - name: kubernetes-pause\n"
            "    image: k8s.gcr.io/pause:3.5\n"
        )
    k("create", "-l", "unique-label=bingbang", "-f", str(directory))
    k.get_object_assert("pods selector-test-pod", "{{.metadata.labels.name}}", "selector-test-pod")
    output_message = k.fails("get", "pods", "selector-test-pod-dont-apply")
    if_has_string(output_message, 'pods "selector-test-pod-dont-apply" not found')
    k("delete", "pods", "selector-test-pod", "--grace-period=0", "--force")


def test_run_kubectl_create_error_tests(kubectl: Cmd) -> None:
    k = kubectl
    k.fails("create")
    # Posting a pod to namespaces fails; --raw forces the post location
    valid_pod = _file(k, "valid-pod.yaml", VALID_POD)
    proc = k.run("create", "--raw", "/api/v1/namespaces", "-f", valid_pod, "--v=8")
    assert "the object provided is unrecognized (must be of type Namespace)" in proc.stdout + proc.stderr
    proc = k.run("create", "--raw", "/api/v1/namespaces", "-f", valid_pod, "--edit")
    assert "raw and --edit are mutually exclusive" in proc.stdout + proc.stderr


def test_run_create_job_tests(kubectl: Cmd) -> None:
    k, image = kubectl, "{{(index .spec.template.spec.containers 0).image}}"
    k("create", "job", "test-job", "--image=k8s.gcr.io/nginx:test-cmd")
    k.get_object_assert("job test-job", image, "k8s.gcr.io/nginx:test-cmd")
    k("delete", "job", "test-job")
    # with a command
    k("create", "job", "test-job-pi", f"--image={IMAGE_PERL}", "--", "perl", "-Mbignum=bpi", "-wle", "print bpi(20)")
    k.get_object_assert("job test-job-pi", image, IMAGE_PERL)
    k("delete", "job", "test-job-pi")
    # from a cronjob: the container's command is the cronjob's
    k("create", "cronjob", "test-pi", "--schedule=* */5 * * *", f"--image={IMAGE_PERL}",
      "--", "perl", "-Mbignum=bpi", "-wle", "print bpi(10)")  # fmt: skip
    k("create", "job", "my-pi", "--from=cronjob/test-pi")
    output_message = k("get", "job", "my-pi", "-o", "go-template={{(index .spec.template.spec.containers 0).command}}")
    if_has_string(output_message, "perl -Mbignum=bpi -wle print bpi(10)")
    k("delete", "job", "my-pi")
    k("delete", "cronjob", "test-pi")


# test/cmd/testdata/apply.txtar (apply.sh's txtar form)

PRUNE_A = """apiVersion: v1
kind: Pod
metadata:
  name: a
  labels:
    prune-group: "true"
spec:
  containers:
  - name: kubernetes-pause
    image: registry.k8s.io/pause:3.5
"""
"""hack/testdata/prune/a.yaml"""
PRUNE_B = PRUNE_A.replace("name: a\n", "name: b\n  namespace: nsb\n")
"""hack/testdata/prune/b.yaml"""
PRUNE_ALLOWLIST = "--prune-allowlist=core/v1/Pod"
"""kubectl's default prune list names Endpoints, PVCs, PVs, RCs, Services, Ingresses and apps/v1 kinds as well,
and `apply --prune` stops at the first it cannot map (`no matches for kind "Endpoints"`): the pods are listed."""
PODS_JSONPATH = "jsonpath={range .items[*]}{.metadata.name}:{end}"


def test_apply_txtar_basic_set_last_applied_selector_and_dry_run(kubectl: Cmd) -> None:
    k = kubectl
    pod_yaml, pod_apply = _file(k, "pod.yaml", POD_YAML), _file(k, "pod-apply.yaml", POD_APPLY_YAML)
    last_applied = "kubectl.kubernetes.io/last-applied-configuration"
    ## kubectl apply creates the resource that doesn't exist yet
    assert k("get", "pods", "-o", PODS_JSONPATH) == ""
    assert k("apply", "-f", pod_yaml) == "pod/test-pod created"
    assert k("get", "pods", "test-pod", "-o", "jsonpath={.metadata.labels.name}") == "test-pod-label"
    assert last_applied in k("get", "pods", "test-pod", "-o", "yaml")
    managers = "jsonpath={.metadata.managedFields[*].manager}"
    if_has_string(k("get", "--show-managed-fields", "-f", pod_yaml, "-o", managers), "kubectl-client-side-apply")
    k("delete", "pods", "test-pod", "--grace-period=0", "--force")

    ## set-last-applied
    k.wait_object_assert("pods", PODS, "")
    assert k("create", "-f", pod_yaml) == "pod/test-pod created"
    assert k("get", "pods", "test-pod", "-o", "jsonpath={.metadata.labels.name}") == "test-pod-label"
    assert last_applied not in k("get", "pods", "test-pod", "-o", "yaml")
    for dry_run in ("--dry-run=client", "--dry-run=server"):
        k("apply", "set-last-applied", dry_run, "-f", pod_yaml, "--create-annotation=true")
        assert last_applied not in k("get", "pods", "test-pod", "-o", "yaml")
    k("apply", "set-last-applied", "-f", pod_yaml, "--create-annotation=true")
    assert last_applied in k("get", "pods", "test-pod", "-o", "yaml")
    k("delete", "pods", "test-pod", "--grace-period=0", "--force")

    ## apply -l: only the objects the selector matches (hack/testdata/filter)
    k.wait_object_assert("pods", PODS, "")
    directory = k.config.parent / "filter"
    directory.mkdir()
    for name, label in (("selector-test-pod", "bingbang"), ("selector-test-pod-dont-apply", "biz")):
        (directory / f"{name}.yaml").write_text(
            f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  labels:\n    name: {name}\n"
            f"    unique-label: {label}\nspec:\n  containers:\n  - name: kubernetes-pause\n"
            "    image: k8s.gcr.io/pause:3.5\n"
        )
    k("apply", "-l", "unique-label=bingbang", "-f", str(directory))
    assert k("get", "pods", "selector-test-pod", "-o", "jsonpath={.metadata.labels.name}") == "selector-test-pod"
    k.fails("get", "pods", "selector-test-pod-dont-apply")
    k("delete", "pods", "selector-test-pod", "--grace-period=0", "--force")

    ## apply --dry-run
    k.wait_object_assert("pods", PODS, "")
    assert k("apply", "--dry-run=client", "-f", pod_yaml) == "pod/test-pod created (dry run)"
    assert k("get", "pods", "-o", PODS_JSONPATH) == ""
    assert k("apply", "--dry-run=server", "-f", pod_yaml) == "pod/test-pod created (server dry run)"
    assert k("get", "pods", "-o", PODS_JSONPATH) == ""
    assert k("apply", "-f", pod_yaml) == "pod/test-pod created"
    # (the script compares the resourceVersion before and after; the node agent writes the pod's status
    # meanwhile, so it is the client-side apply annotation, which a dry run would change, that is compared)
    annotation = "jsonpath={.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration}"
    initial = k("get", "-f", pod_yaml, "-o", annotation)
    assert k("apply", "--dry-run=client", "-f", pod_apply) == "pod/test-pod configured (dry run)"
    assert k("get", "pods", "test-pod", "-o", "jsonpath={.metadata.labels.name}") == "test-pod-label"
    assert k("apply", "--dry-run=server", "-f", pod_apply) == "pod/test-pod configured (server dry run)"
    assert k("get", "pods", "test-pod", "-o", "jsonpath={.metadata.labels.name}") == "test-pod-label"
    assert k("get", "-f", pod_yaml, "-o", annotation) == initial
    k("delete", "-f", pod_yaml, "--grace-period=0", "--force")


def test_apply_txtar_prune(kubectl: Cmd) -> None:
    k = kubectl
    a, b = _file(k, "a.yaml", PRUNE_A), _file(k, "b.yaml", PRUNE_B)
    k("create", "ns", "nsb")  # (and a ServiceAccount `default` in it: kjobs serves none, and needs none)
    try:
        assert k("get", "pods", "-o", PODS_JSONPATH) == ""
        k("apply", "--namespace", "nsb", "-l", "prune-group=true", "-f", a)
        assert k("get", "pods", "a", "-n", "nsb", "-o", "jsonpath={.metadata.name}") == "a"
        out = k.both("apply", "--namespace", "nsb", "--prune", PRUNE_ALLOWLIST, "-l", "prune-group=true", "-f", b)
        if_has_string(out, "pod/b created")
        if_has_string(out, "pod/a pruned")
        k.wait_object_assert("pods -n nsb", "{{range .items}}{{.metadata.name}}:{{end}}", "b:")
        k("delete", "pods", "b", "-n", "nsb", "--grace-period=0", "--force")
        # the same without prune
        assert k("get", "pods", "-o", PODS_JSONPATH) == ""
        k("apply", "-l", "prune-group=true", "-f", a)
        assert k("get", "pods", "a", "-o", "jsonpath={.metadata.name}") == "a"
        k.wait_object_assert("pods -n nsb", "{{range .items}}{{.metadata.name}}:{{end}}", "")
        k("apply", "-l", "prune-group=true", "-f", b)
        assert k("get", "pods", "a", "-o", "jsonpath={.metadata.name}") == "a"
        assert k("get", "pods", "b", "-n", "nsb", "-o", "jsonpath={.metadata.name}") == "b"
        k("delete", "pod/a", "--grace-period=0", "--force")
        k("delete", "pod/b", "-n", "nsb", "--grace-period=0", "--force")

        ## --prune requires --all (or a selector) to select everything
        prune_dir = k.config.parent / "prune"
        prune_dir.mkdir()
        (prune_dir / "a.yaml").write_text(PRUNE_A)
        (prune_dir / "b.yaml").write_text(PRUNE_B)
        proc = k.run("apply", "--prune", "-f", str(prune_dir))
        assert proc.returncode != 0
        assert "all resources selected for prune without explicitly passing --all" in proc.stderr
        k("apply", "--all", "--prune", PRUNE_ALLOWLIST, "-f", str(prune_dir))
        assert k("get", "pods", "a", "-o", "jsonpath={.metadata.name}") == "a"
        assert k("get", "pods", "b", "-n", "nsb", "-o", "jsonpath={.metadata.name}") == "b"
        k("delete", "pod/a", "--grace-period=0", "--force")
        k("delete", "pod/b", "-n", "nsb", "--grace-period=0", "--force")

        ## --prune-allowlist: a Service in the script; here a ConfigMap keeps pod a as the Service did
        k.wait_object_assert("pods", PODS, "")
        k("apply", "--prune", PRUNE_ALLOWLIST, "-l", "prune-group=true", "-f", a)
        assert k("get", "pods", "a", "-o", "jsonpath={.metadata.name}") == "a"
        cm = _file(
            k,
            "cm.yaml",
            'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: prune-cm\n  labels:\n    prune-group: "true"\n',
        )
        k("apply", "--prune", "-l", "prune-group=true", "-f", cm, "--prune-allowlist", "core/v1/ConfigMap")
        assert k("get", "configmap", "prune-cm", "-o", "jsonpath={.metadata.name}") == "prune-cm"
        assert k("get", "pods", "a", "-o", "jsonpath={.metadata.name}") == "a"
        out = k(
            "apply",
            "--prune",
            "-l",
            "prune-group=true",
            "-f",
            cm,
            PRUNE_ALLOWLIST,
            "--prune-allowlist",
            "core/v1/ConfigMap",
        )
        if_has_string(out, "pod/a pruned")
        assert k("get", "configmap", "prune-cm", "-o", "jsonpath={.metadata.name}") == "prune-cm"
        k.wait_object_assert("pods", PODS, "")
        k("delete", "configmap", "prune-cm")

        ## --prune across namespaces
        k.wait_object_assert("pods -n nsb", "{{range .items}}{{.metadata.name}}:{{end}}", "")
        k("apply", "--namespace", "nsb", "-f", a)
        assert k("get", "pods", "a", "-n", "nsb", "-o", "jsonpath={.metadata.name}") == "a"
        k("apply", "--namespace", "nsb", "-f", b)
        assert k("get", "pods", "b", "-n", "nsb", "-o", "jsonpath={.metadata.name}") == "b"
        k("apply", "--prune", "--all", PRUNE_ALLOWLIST, "-f", b)
        k.wait_object_assert("pods -n nsb", "{{range .items}}{{.metadata.name}}:{{end}}", "b:")
    finally:
        k("delete", "ns", "nsb", "--wait=false")

    ## apply -n fails when the file names another namespace
    proc = k.run("apply", "-n", "foo", "-f", b)
    assert proc.returncode != 0
    assert 'the namespace from the provided object "nsb" does not match the namespace "foo"' in proc.stderr


def test_apply_txtar_server_side(kubectl: Cmd) -> None:
    k = kubectl
    pod_yaml, pod_apply = _file(k, "pod.yaml", POD_YAML), _file(k, "pod-apply.yaml", POD_APPLY_YAML)
    managers = "jsonpath={.metadata.managedFields[*].manager}"
    ## --server-side creates
    assert k("get", "pods", "-o", PODS_JSONPATH) == ""
    assert k("apply", "--server-side", "-f", pod_yaml) == "pod/test-pod serverside-applied"
    assert k("get", "pods", "test-pod", "-o", "jsonpath={.metadata.labels.name}") == "test-pod-label"
    if_has_string(k("get", "--show-managed-fields", "-f", pod_yaml, "-o", managers), "kubectl")
    k("apply", "--server-side", "--field-manager=my-field-manager", "--force-conflicts", "-f", pod_yaml)
    if_has_string(k("get", "-f", pod_yaml, "-o", managers), "my-field-manager")
    # a pod condition through the status subresource (hack/testdata/pod-apply-status.yaml)
    status = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: test-pod\nstatus:\n  conditions:\n  - type: example.io/Foo\n"
        '    status: "True"\n    message: message\n    reason: reason\n'
    )
    k(
        "apply",
        "--server-side",
        "--subresource=status",
        "--field-manager=my-field-manager",
        "-f",
        _file(k, "s.yaml", status),
    )
    if_has_string(k("get", "-f", pod_yaml, "-o", "jsonpath={.status.conditions[*].type}"), "example.io/Foo")
    k("delete", "pods", "test-pod", "--grace-period=0", "--force")

    ## --server-side --dry-run
    k.wait_object_assert("pods", PODS, "")
    assert k("apply", "--server-side", "--dry-run=server", "-f", pod_yaml) == (
        "pod/test-pod serverside-applied (server dry run)"
    )
    assert k("get", "pods", "-o", PODS_JSONPATH) == ""
    assert k("apply", "--server-side", "-f", pod_yaml) == "pod/test-pod serverside-applied"
    owned = 'jsonpath={.metadata.managedFields[?(@.manager=="kubectl")].fieldsV1}'  # (the script: resourceVersion)
    initial = k("get", "-f", pod_yaml, "-o", owned)
    assert k("apply", "--server-side", "--dry-run=server", "-f", pod_apply) == (
        "pod/test-pod serverside-applied (server dry run)"
    )
    assert k("get", "pods", "test-pod", "-o", "jsonpath={.metadata.labels.name}") == "test-pod-label"
    assert k("get", "-f", pod_yaml, "-o", owned) == initial
    k("delete", "-f", pod_yaml, "--grace-period=0", "--force")

    ## upgrade client-side apply -> server-side apply
    k.wait_object_assert("pods", PODS, "")
    assert k("apply", "-f", pod_yaml) == "pod/test-pod created"
    proc = k.run("apply", "--server-side", "--field-manager=not-kubectl", "-f", pod_apply)
    assert proc.returncode != 0 and "conflict" in proc.stderr, proc.stderr
    assert k("apply", "--server-side", "-f", pod_apply) == "pod/test-pod serverside-applied"
    assert "kubectl.kubernetes.io/last-applied-configuration" in k("get", "pods", "test-pod", "-o", "yaml")
    if_has_string(k("apply", "view-last-applied", "pod/test-pod", "-o", "json"), "test-pod-applied")
    ## and down again
    assert k("apply", "--server-side", "-f", pod_yaml) == "pod/test-pod serverside-applied"
    assert "kubectl.kubernetes.io/last-applied-configuration" in k("get", "pods", "test-pod", "-o", "yaml")
    if_has_string(k("apply", "view-last-applied", "pod/test-pod", "-o", "json"), "test-pod-label")
    assert k("apply", "-f", pod_apply) == "pod/test-pod configured"
    k("delete", "-f", pod_yaml, "--grace-period=0", "--force")


def test_apply_txtar_migration_and_multi_resource(kubectl: Cmd) -> None:
    k = kubectl

    def cm(name: str, data: dict[str, str], annotations: str = "") -> str:
        body = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{annotations}data:\n"
        return _file(
            k, f"{name}-{len(data)}-{'-'.join(data)}.yaml", body + "".join(f"  {a}: {b}\n" for a, b in data.items())
        )

    def data(name: str, key: str) -> str:
        return k("get", "configmap", name, "-o", f"jsonpath={{.data.{key}}}")

    ## CSA -> SSA migration with a ConfigMap
    assert k("get", "configmaps", "--field-selector=metadata.name=test", "-o", PODS_JSONPATH) == ""
    csa_1 = cm("test", {"key": "value", "legacy": "unused"})
    ssa_2 = cm("test", {"key": "value", "ssaKey": "ssaValue"})
    csa_3 = cm("test", {"key": "value", "newKey": "newValue"})
    assert k("apply", "--server-side=false", "-f", csa_1) == "configmap/test created"
    assert k("apply", "--server-side", "-f", csa_1) == "configmap/test serverside-applied"
    assert k("apply", "--server-side", "-f", ssa_2) == "configmap/test serverside-applied"
    assert (data("test", "key"), data("test", "legacy"), data("test", "ssaKey")) == ("value", "", "ssaValue")
    assert k("apply", "--server-side=false", "-f", csa_3) == "configmap/test configured"
    assert (data("test", "key"), data("test", "newKey"), data("test", "ssaKey")) == ("value", "newValue", "")
    assert k("apply", "--server-side", "-f", ssa_2) == "configmap/test serverside-applied"
    assert (data("test", "key"), data("test", "newKey"), data("test", "ssaKey")) == ("value", "", "ssaValue")
    # kubectl diff --server-side after a migration (exit 1: there are differences)
    diff = cm("test", {"key": "value", "newKey": "newValue"}, "  annotations:\n    newAnnotation: newValue\n")
    proc = k.run("diff", "--server-side", "-f", diff)
    assert proc.returncode == 1, proc.stderr
    if_has_string(proc.stdout, r"+  newKey: newValue")
    if_has_string(proc.stdout, r"+    newAnnotation: newValue")
    k("delete", "configmap", "test")

    ## a custom field manager does not prevent the migration
    fm_1 = cm("ssa-test", {"key": "value1", "legacy": "value2"})
    fm_2 = cm("ssa-test", {"key": "value2"})
    assert k("apply", "--server-side=false", "--field-manager=myfm", "-f", fm_1) == "configmap/ssa-test created"
    assert data("ssa-test", "key") == "value1"
    assert "kubectl.kubernetes.io/last-applied-configuration" in k("get", "configmap", "ssa-test", "-o", "yaml")
    assert (
        k("apply", "--server-side=true", "--field-manager=myfm", "-f", fm_1) == "configmap/ssa-test serverside-applied"
    )
    assert data("ssa-test", "key") == "value1"
    assert "kubectl.kubernetes.io/last-applied-configuration" not in k("get", "configmap", "ssa-test", "-o", "yaml")
    assert (
        k("apply", "--server-side=true", "--field-manager=myfm", "-f", fm_2) == "configmap/ssa-test serverside-applied"
    )
    assert (data("ssa-test", "key"), data("ssa-test", "legacy")) == ("value2", "")
    k("delete", "configmap", "ssa-test")

    ## multiple resources with failures: the valid ones are applied
    k.fails("get", "namespace", "multi-resource-ns")
    assert k("get", "pods", "-o", PODS_JSONPATH) == ""
    multi_1 = _file(k, "multi-resource-1.yaml", (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: test-pod\n  namespace: multi-resource-ns\n  labels:\n"
        "    name: test-pod-label\nspec:\n  containers:\n  - name: kubernetes-pause\n"
        "    image: registry.k8s.io/pause:3.7\n"
        "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: multi-resource-ns\n"
    ))  # fmt: skip
    proc = k.run("apply", "-f", multi_1)
    assert proc.returncode != 0 and 'namespaces "multi-resource-ns" not found' in proc.stderr, proc.stderr
    k.fails("get", "pods", "test-pod", "-n", "multi-resource-ns")
    k("apply", "-f", multi_1)  # (after a ServiceAccount `default` in the script: kjobs needs none)
    assert k("get", "pods", "test-pod", "-n", "multi-resource-ns", "-o", "jsonpath={.metadata.name}") == "test-pod"
    k("delete", "-f", multi_1, "--wait=false")

    assert k("get", "configmaps", "--field-selector=metadata.name=foo", "-o", PODS_JSONPATH) == ""
    multi_2 = _file(k, "multi-resource-2.yaml", (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: foo\n---\n"
        "apiVersion: example.com/v1\nkind: Bogus\nmetadata:\n  name: foo\n"
    ))  # fmt: skip
    # (kubectl validates an unknown kind against /openapi/v2 first: served, so the mapping error is the answer)
    proc = k.run("apply", "-f", multi_2)
    assert proc.returncode != 0 and 'no matches for kind "Bogus" in version "example.com/v1"' in proc.stderr
    assert k("get", "configmaps", "foo", "-o", "jsonpath={.metadata.name}") == "foo"
    k("delete", "configmaps", "foo")

    assert k("get", "pods", "-o", PODS_JSONPATH) == ""
    pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {}\nspec:\n  containers:\n  - name: kubernetes-pause\n"
    pod += "    image: registry.k8s.io/pause:3.7\n"
    multi_3 = _file(k, "multi-resource-3.yaml", "---\n".join(pod.format(n) for n in ("pod-a", "POD-B", "pod-c")))
    proc = k.run("apply", "-f", multi_3)
    assert proc.returncode != 0 and 'The Pod "POD-B" is invalid' in proc.stderr, proc.stderr
    assert k("get", "pods", "pod-a", "-o", "jsonpath={.metadata.name}") == "pod-a"
    assert k("get", "pods", "pod-c", "-o", "jsonpath={.metadata.name}") == "pod-c"
    k("delete", "pod", "pod-a", "pod-c", "--grace-period=0", "--force")
    assert k("get", "pods", "-o", PODS_JSONPATH) == ""
