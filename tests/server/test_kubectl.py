"""The real kubectl (1.32 via the dispatcher) against the server; outputs compared with a real cluster's.

Expected texts come from the measured protocol spec and the kubectl acceptance script. Each test uses its
own object names on one module-wide server; kubectl gets a private HOME (discovery cache) and KUBECONFIG.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import yaml

from kjobs.api.timeutil import format_time
from kjobs.server import kubeconfig
from kjobs.server.app import create_app
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.server.conftest import job_manifest, pod_manifest
from tests.support import client_tls, shared_pki

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


class Kubectl:
    """Runs kubectl against the test server and returns (exit status, combined output)."""

    def __init__(self, url: str, home: Path) -> None:
        self.url = url
        self.home = home
        self.config = home / "kubeconfig"
        kubeconfig.write(self.config, url, pki=shared_pki())
        self.http = httpx.Client(base_url=url, timeout=10, verify=client_tls())

    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "KUBECONFIG": str(self.config), "PATH": "/usr/local/bin:/usr/bin:/bin"}

    def __call__(self, *args: str, stdin: str | None = None, timeout: float = 30) -> tuple[int, str]:
        proc = subprocess.run(
            ["kubectl", *args],
            capture_output=True,
            text=True,
            env=self.env(),
            input=stdin,
            timeout=timeout,
            cwd=self.home,
        )
        return proc.returncode, (proc.stdout + proc.stderr).rstrip()

    def ok(self, *args: str, stdin: str | None = None) -> str:
        code, out = self(*args, stdin=stdin)
        assert code == 0, out
        return out

    def bad(self, *args: str, stdin: str | None = None) -> str:
        code, out = self(*args, stdin=stdin)
        assert code != 0, out
        return out

    def file(self, name: str, doc: Any) -> str:
        path = self.home / name
        path.write_text(yaml.safe_dump(doc) if not isinstance(doc, str) else doc)
        return str(path)


@contextlib.contextmanager
def kubectl_on_memory_store(home: Path) -> Iterator[Kubectl]:
    """A real kubectl against an API server over HTTPS on a fresh memory store (no node), closed after."""
    store = MemoryStore()
    with serve(store, app=create_app(store), pki=shared_pki()) as url:
        k = Kubectl(url, home)
        yield k
        k.http.close()
    store.close()


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    with kubectl_on_memory_store(tmp_path_factory.mktemp("kubectl-home")) as k:
        _add_node(k, "node-1")
        yield k


def _now() -> str:
    import time

    return format_time(time.time())


def _add_node(k: Kubectl, name: str) -> None:
    now = _now()
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "ready",
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                }
            ],
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": name}],
            "nodeInfo": {
                "machineID": "m",
                "systemUUID": "s",
                "bootID": "b",
                "kernelVersion": "6.1.0",
                "osImage": "Debian GNU/Linux 13",
                "containerRuntimeVersion": "kjobs://0.1.0",
                "kubeletVersion": "v1.32.0",
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }
    assert k.http.post("/api/v1/nodes", json=node).status_code == 201


def _complete(k: Kubectl, name: str) -> None:
    now = _now()
    status = {
        "status": {
            "startTime": now,
            "completionTime": now,
            "succeeded": 1,
            "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True", "lastProbeTime": now, "lastTransitionTime": now},
                {"type": "Complete", "status": "True", "lastProbeTime": now, "lastTransitionTime": now},
            ],
        }
    }
    r = k.http.patch(
        f"/apis/batch/v1/namespaces/default/jobs/{name}/status",
        content=orjson.dumps(status),
        headers={"content-type": "application/merge-patch+json"},
    )
    assert r.status_code == 200, r.text


def _pod_of(k: Kubectl, job: str, pod: str, *, exit_code: int | None = None, node: str = "node-1") -> None:
    owner = k.http.get(f"/apis/batch/v1/namespaces/default/jobs/{job}").json()
    uid = owner["metadata"]["uid"]
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod,
            "labels": {"batch.kubernetes.io/job-name": job, "job-name": job, "batch.kubernetes.io/controller-uid": uid},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": job,
                    "uid": uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"nodeName": node, "restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox:1.36"}]},
    }
    assert k.http.post("/api/v1/namespaces/default/pods", json=body).status_code == 201
    if exit_code is None:
        return
    now = _now()
    status = {
        "status": {
            "phase": "Succeeded" if exit_code == 0 else "Failed",
            "startTime": now,
            "containerStatuses": [
                {
                    "name": "main",
                    "image": "busybox:1.36",
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "started": False,
                    "state": {
                        "terminated": {
                            "exitCode": exit_code,
                            "reason": "Completed" if exit_code == 0 else "Error",
                            "startedAt": now,
                            "finishedAt": now,
                        }
                    },
                }
            ],
        }
    }
    r = k.http.patch(
        f"/api/v1/namespaces/default/pods/{pod}/status",
        content=orjson.dumps(status),
        headers={"content-type": "application/merge-patch+json"},
    )
    assert r.status_code == 200, r.text


def test_version_discovery_and_node_tables(kubectl: Kubectl) -> None:
    out = kubectl.ok("version")
    assert re.search(r"^Server Version: v1\.32\.", out, re.M)
    out = kubectl.ok("api-resources")
    for pattern in (
        r"^jobs\s+batch/v1\s+true\s+Job$",
        r"^pods\s+po\s+v1\s+true\s+Pod$",
        r"^nodes\s+no\s+v1\s+false\s+Node$",
        r"^events\s+ev\s+v1\s+true\s+Event$",
    ):
        assert re.search(pattern, out, re.M), pattern
    out = kubectl.ok("get", "nodes")
    assert re.match(r"NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\nnode-1\s+Ready\s+<none>\s+\d+s\s+v1\.32\.0$", out)
    out = kubectl.ok("get", "no", "node-1", "-o", "wide")
    assert re.search(r"INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE\s+KERNEL-VERSION\s+CONTAINER-RUNTIME$", out, re.M)
    assert re.search(r"127\.0\.0\.1\s+<none>\s+Debian GNU/Linux 13\s+6\.1\.0\s+kjobs://0\.1\.0$", out, re.M)
    assert kubectl.ok("get", "namespace", "default", "-o", "jsonpath={.status.phase}") == "Active"


def test_auth_whoami_and_can_i(kubectl: Kubectl) -> None:
    """kubectl sends these reviews as protobuf; the answers are those of a kind cluster's admin."""
    out = kubectl.ok("auth", "whoami")
    assert re.match(
        r"ATTRIBUTE\s+VALUE\nUsername\s+kjobs-admin\nGroups\s+\[system:masters system:authenticated\]$", out
    )
    assert kubectl.ok("auth", "can-i", "create", "jobs") == "yes"
    assert kubectl.ok("auth", "can-i", "delete", "nodes", "--all-namespaces") == "yes"
    assert kubectl.ok("auth", "can-i", "get", "/healthz") == "yes"
    out = kubectl.ok("auth", "can-i", "--list")
    assert re.search(r"^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$", out, re.M)
    assert re.search(r"^selfsubjectreviews\.authentication\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$", out, re.M)
    out = kubectl.ok("api-resources", "--api-group", "authorization.k8s.io")
    assert re.search(
        r"^selfsubjectaccessreviews\s+authorization\.k8s\.io/v1\s+false\s+SelfSubjectAccessReview$", out, re.M
    )


def test_impersonation_with_as(kubectl: Kubectl) -> None:
    assert kubectl.bad("auth", "can-i", "list", "pods", "--as=bob") == "no"
    assert kubectl.ok("auth", "can-i", "list", "pods", "--as=bob", "--as-group=system:masters") == "yes"
    out = kubectl.bad("get", "pods", "--as=bob")
    assert out == (
        'Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" '
        'in the namespace "default"'
    )
    assert "Username    bob" in kubectl.ok("auth", "whoami", "--as=bob")


HEADLESS_SERVICE_AND_INDEXED_JOB = """\
apiVersion: v1
kind: Service
metadata:
  name: headless-svc
spec:
  clusterIP: None # clusterIP must be None to create a headless service
  selector:
    job-name: example-job # must match Job name
---
apiVersion: batch/v1
kind: Job
metadata:
  name: example-job
spec:
  completions: 3
  parallelism: 3
  completionMode: Indexed
  template:
    spec:
      subdomain: headless-svc # has to match Service name
      restartPolicy: Never
      containers:
      - name: example-workload
        image: bash:latest
        command: ["bash", "-c", "ping -c 1 example-job-0.headless-svc"]
"""
"""The manifest of https://kubernetes.io/docs/tasks/job/job-with-pod-to-pod-communication/ (its long script
shortened: kjobs has no cluster DNS, so the pods' pings would fail; the manifest is what is checked)."""


def test_cluster_info_and_services(kubectl: Kubectl) -> None:
    out = kubectl.ok("cluster-info")
    assert out.startswith(f"Kubernetes control plane is running at {kubectl.url}")
    rows = kubectl.ok("get", "svc", "kubernetes").splitlines()
    assert rows[0].split() == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert rows[1].split()[:5] == ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]

    path = kubectl.file("pod-to-pod.yaml", HEADLESS_SERVICE_AND_INDEXED_JOB)
    assert kubectl.ok("apply", "-f", path) == "service/headless-svc created\njob.batch/example-job created"
    assert kubectl.ok("apply", "-f", path) == "service/headless-svc unchanged\njob.batch/example-job unchanged"
    row = kubectl.ok("get", "svc", "headless-svc", "--no-headers", "-o", "wide").split()
    assert row[:5] + row[6:] == ["headless-svc", "ClusterIP", "None", "<none>", "<none>", "job-name=example-job"]
    described = kubectl.ok("describe", "svc", "headless-svc")
    for line in ("Selector:                 job-name=example-job", "IP Families:              IPv4",
                 "IP:                       None", "Session Affinity:         None"):  # fmt: skip
        assert line in described.splitlines()

    assert kubectl.ok("create", "service", "nodeport", "web", "--tcp=80:8080") == "service/web created"
    web = kubectl.ok("get", "svc", "web", "-o", "jsonpath={.spec.clusterIP} {.spec.ports[0].nodePort}").split()
    assert ipaddress.ip_address(web[0]) in ipaddress.ip_network("10.96.0.0/12")
    assert 30000 <= int(web[1]) <= 32767
    out = kubectl.bad("create", "service", "clusterip", "taken", "--tcp=80:80", f"--clusterip={web[0]}")
    assert out == (
        f'error: failed to create ClusterIP service: Service "taken" is invalid: spec.clusterIPs: Invalid value: '
        f'["{web[0]}"]: failed to allocate IP {web[0]}: provided IP is already allocated'
    )
    assert kubectl.ok("delete", "svc", "web") == 'service "web" deleted'
    assert kubectl.ok("delete", "-f", path) == 'service "headless-svc" deleted\njob.batch "example-job" deleted'


def test_apply_create_unchanged_configured_and_already_exists(kubectl: Kubectl) -> None:
    manifest = job_manifest("applied")
    path = kubectl.file("applied.yaml", manifest)
    assert kubectl.ok("apply", "-f", path) == "job.batch/applied created"
    assert kubectl.ok("apply", "-f", path) == "job.batch/applied unchanged"
    manifest["metadata"]["labels"]["tier"] = "batch"  # type: ignore[index]
    kubectl.file("applied.yaml", manifest)
    assert kubectl.ok("apply", "-f", path) == "job.batch/applied configured"
    assert kubectl.ok("get", "job", "applied", "-o", "jsonpath={.metadata.labels.tier}") == "batch"
    annotation = kubectl.ok(
        "get",
        "job",
        "applied",
        "-o",
        r"jsonpath={.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}",
    )
    assert '"tier":"batch"' in annotation

    created = kubectl.file("created.yaml", job_manifest("created"))
    assert kubectl.ok("create", "-f", created) == "job.batch/created created"
    out = kubectl.bad("create", "-f", created)
    assert out == (
        f'Error from server (AlreadyExists): error when creating "{created}": jobs.batch "created" already exists'
    )


def test_get_outputs(kubectl: Kubectl) -> None:
    kubectl.ok("create", "-f", kubectl.file("out.yaml", job_manifest("out")))
    _complete(kubectl, "out")
    _pod_of(kubectl, "out", "out-abcde", exit_code=0)
    out = kubectl.ok("get", "jobs", "-l", "app=t", "--field-selector", "metadata.name=out")
    assert re.match(r"NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\nout\s+Complete\s+1/1\s+0s\s+\d+s$", out)
    out = kubectl.ok("get", "job", "out", "-o", "wide")
    assert re.search(r"^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$", out, re.M)
    assert re.search(r"\smain\s+busybox:1\.36\s+batch\.kubernetes\.io/controller-uid=[0-9a-f-]{36}$", out, re.M)
    assert kubectl.ok("get", "job.batch/out", "-o", "name") == "job.batch/out"
    out = kubectl.ok("get", "pods", "-l", "batch.kubernetes.io/job-name=out")
    assert re.match(r"NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\nout-abcde\s+0/1\s+Completed\s+0\s+\d+s$", out)
    out = kubectl.ok("get", "pods", "-l", "job-name in (out)", "-o", "wide")
    assert re.search(r"^out-abcde\s.*\snode-1\s+<none>\s+<none>$", out, re.M)
    assert (
        kubectl.ok("get", "pods", "--field-selector", "status.phase=Succeeded", "-l", "job-name=out", "-o", "name")
        == "pod/out-abcde"
    )
    out = kubectl.ok("get", "all", "-l", "job-name=out")
    assert re.search(r"^pod/out-abcde\s", out, re.M)
    yaml_out = kubectl.ok("get", "job", "out", "-o", "yaml")
    for pattern in (
        r"^apiVersion: batch/v1$",
        r"^kind: Job$",
        r"^  name: out$",
        r"^  uid: [0-9a-f-]{36}$",
        r'^  creationTimestamp: "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"$',
        r"^  completions: 1$",
        r"^  parallelism: 1$",
        r"^  succeeded: 1$",
        r"^    type: Complete$",
    ):
        assert re.search(pattern, yaml_out, re.M), pattern
    assert '"kind": "List",' in kubectl.ok("get", "jobs", "-o", "json")
    out = kubectl.ok("get", "pods", "--sort-by=.metadata.creationTimestamp", "-o", "name", "-l", "job-name=out")
    assert out == "pod/out-abcde"
    out = kubectl.ok(
        "get", "jobs", "-l", "app=t", "-L", "app", "--show-labels", "--field-selector", "metadata.name=out"
    )
    assert re.search(r"^out\s.*\st\s+.*app=t", out, re.M)


def test_events_table_and_describe(kubectl: Kubectl) -> None:
    kubectl.ok("create", "-f", kubectl.file("desc.yaml", job_manifest("desc")))
    _complete(kubectl, "desc")
    _pod_of(kubectl, "desc", "desc-fghij", exit_code=42)
    job = kubectl.http.get("/apis/batch/v1/namespaces/default/jobs/desc").json()
    now = _now()
    event = {
        "metadata": {"name": "desc.1"},
        "involvedObject": {
            "kind": "Job",
            "name": "desc",
            "namespace": "default",
            "uid": job["metadata"]["uid"],
            "apiVersion": "batch/v1",
        },
        "reason": "SuccessfulCreate",
        "message": "Created pod: desc-fghij",
        "source": {"component": "job-controller"},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": "Normal",
    }
    assert kubectl.http.post("/api/v1/namespaces/default/events", json=event).status_code == 201
    out = kubectl.ok("get", "events", "--field-selector", "involvedObject.kind=Job,involvedObject.name=desc")
    assert re.match(
        r"LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n\d+s\s+Normal\s+SuccessfulCreate\s+job/desc\s+"
        r"Created pod: desc-fghij$",
        out,
    )
    out = kubectl.ok("get", "events", "-o", "wide", "--field-selector", "involvedObject.name=desc")
    assert re.search(
        r"^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+SUBOBJECT\s+SOURCE\s+MESSAGE\s+FIRST SEEN\s+COUNT\s+NAME$", out, re.M
    )
    out = kubectl.ok("describe", "job", "desc")
    for pattern in (
        r"^Name:\s+desc$",
        r"^Namespace:\s+default$",
        r"^Selector:\s+batch\.kubernetes\.io/controller-uid=",
        r"^Completions:\s+1$",
        r"^Start Time:\s+[A-Z][a-z]{2}, ",
        r"^Completed At:\s+[A-Z][a-z]{2}, ",
        r"^Pods Statuses:\s+0 Active (\(0 Ready\) )?/ 1 Succeeded / 0 Failed$",
        r"^  Normal\s+SuccessfulCreate\s+\d+s\s+job-controller\s+Created pod: desc-fghij$",
    ):
        assert re.search(pattern, out, re.M), pattern
    out = kubectl.ok("describe", "pod", "desc-fghij")
    for pattern in (
        r"^Name:\s+desc-fghij$",
        r"^Node:\s+node-1(/.*)?$",
        r"^Status:\s+Failed$",
        r"^Controlled By:\s+Job/desc$",
        r"^    State:\s+Terminated$",
        r"^      Exit Code:\s+42$",
        r"^    Restart Count:\s+0$",
    ):
        assert re.search(pattern, out, re.M), pattern
    out = kubectl.ok("describe", "node", "node-1")
    for pattern in (r"^Name:\s+node-1$", r"^Unschedulable:\s+false$", r"^  Ready\s+True\s", r"^Non-terminated Pods:"):
        assert re.search(pattern, out, re.M), pattern


def test_watch_and_wait(kubectl: Kubectl) -> None:
    kubectl.ok("create", "-f", kubectl.file("w.yaml", job_manifest("watched")))
    proc = subprocess.Popen(
        ["kubectl", "get", "jobs", "--field-selector", "metadata.name=watched", "-w", "--output-watch-events"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=kubectl.env(),
    )
    assert proc.stdout is not None
    lines: list[str] = []
    done = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip())
            if "Complete" in line:
                done.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        waiter = subprocess.Popen(
            ["kubectl", "wait", "--for=condition=complete", "job/watched", "--timeout=20s"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=kubectl.env(),
        )
        # kubectl wait has done its GET + list + watch once it has printed nothing and is still running;
        # completing the job at any point must end it with "condition met"
        _complete(kubectl, "watched")
        out, _ = waiter.communicate(timeout=30)
        assert waiter.returncode == 0 and out.strip() == "job.batch/watched condition met"
        assert done.wait(20), lines
    finally:
        proc.terminate()
        proc.wait(10)
    assert re.match(r"EVENT\s+NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE$", lines[0])
    assert any(re.match(r"(ADDED|MODIFIED)\s+watched\s+Complete\s+1/1", line) for line in lines), lines
    assert kubectl.ok("wait", "--for=jsonpath={.status.succeeded}=1", "job/watched", "--timeout=10s") == (
        "job.batch/watched condition met"
    )
    out = kubectl.bad("wait", "--for=condition=Failed", "job/watched", "--timeout=1s")
    assert "timed out waiting for the condition on jobs/watched" in out
    out = kubectl.bad("wait", "--for=condition=Complete", "job/nowhere", "--timeout=1s")
    assert out == 'Error from server (NotFound): jobs.batch "nowhere" not found'


def test_patch_status_label_replace_conflict(kubectl: Kubectl) -> None:
    kubectl.ok("create", "-f", kubectl.file("p.yaml", job_manifest("patched")))
    _complete(kubectl, "patched")
    cond = (
        '{"status":{"conditions":[{"type":"AcceptanceChecked","status":"True","reason":"Acceptance","message":"m"}]}}'
    )
    assert kubectl.ok("patch", "job", "patched", "--subresource=status", "-p", cond) == "job.batch/patched patched"
    assert kubectl.ok("patch", "job", "patched", "--subresource=status", "-p", cond) == (
        "job.batch/patched patched (no change)"
    )
    assert (
        kubectl.ok("get", "job", "patched", "-o", 'jsonpath={.status.conditions[?(@.type=="Complete")].status}')
        == "True"
    )
    assert kubectl.ok("patch", "job", "patched", "--type=merge", "-p", '{"status":{"succeeded":7}}').startswith(
        "job.batch/patched patched"
    )
    assert kubectl.ok("get", "job", "patched", "-o", "jsonpath={.status.succeeded}") == "1"
    stale = kubectl.file("stale.json", kubectl.ok("get", "job", "patched", "-o", "json"))
    assert kubectl.ok("label", "job", "patched", "touched=yes") == "job.batch/patched labeled"
    out = kubectl.bad("replace", "-f", stale)
    assert out == (
        f'Error from server (Conflict): error when replacing "{stale}": Operation cannot be fulfilled on '
        'jobs.batch "patched": the object has been modified; please apply your changes to the latest '
        "version and try again"
    )


def test_error_wording(kubectl: Kubectl) -> None:
    assert kubectl.bad("get", "job", "missing") == 'Error from server (NotFound): jobs.batch "missing" not found'
    assert kubectl.bad("get", "pod", "missing") == 'Error from server (NotFound): pods "missing" not found'
    assert kubectl.bad("get", "jobs.batch", "x", "-n", "no-such-ns") == (
        'Error from server (NotFound): namespaces "no-such-ns" not found'
    )
    invalid = job_manifest("invalid")
    invalid["spec"]["template"]["spec"]["restartPolicy"] = "Always"  # type: ignore[index]
    out = kubectl.bad("create", "-f", kubectl.file("invalid.yaml", invalid))
    assert out.startswith('The Job "invalid" is invalid: spec.template.spec.restartPolicy: ')
    unknown = job_manifest("unknown", bogusField=1)
    path = kubectl.file("unknown.yaml", unknown)
    out = kubectl.bad("create", "-f", path)
    assert out == (
        f'Error from server (BadRequest): error when creating "{path}": Job in version "v1" cannot be '
        'handled as a Job: strict decoding error: unknown field "spec.bogusField"'
    )
    # --validate=false sends fieldValidation=Ignore: the unknown field is dropped
    assert kubectl.ok("create", "--validate=false", "-f", path) == "job.batch/unknown created"
    assert "bogusField" not in kubectl.ok("get", "job", "unknown", "-o", "json")


def test_delete_cascade_and_foreground(kubectl: Kubectl) -> None:
    for name in ("gone", "fg"):
        kubectl.ok("create", "-f", kubectl.file(f"{name}.yaml", job_manifest(name)))
        _pod_of(kubectl, name, f"{name}-pod", exit_code=0)
    assert kubectl.ok("delete", "job", "gone", "--timeout=10s") == 'job.batch "gone" deleted'
    assert kubectl.ok("get", "pods", "-l", "job-name=gone", "-o", "name") == ""
    assert kubectl.bad("delete", "job", "gone") == 'Error from server (NotFound): jobs.batch "gone" not found'
    assert kubectl.ok("delete", "job", "fg", "--cascade=foreground", "--timeout=10s") == 'job.batch "fg" deleted'
    assert kubectl.ok("get", "pods", "-l", "job-name=fg", "-o", "name") == ""


def test_cordon_drain_taint(kubectl: Kubectl) -> None:
    _add_node(kubectl, "node-2")
    assert kubectl.ok("cordon", "node-2") == "node/node-2 cordoned"
    assert re.search(r"^node-2\s+Ready,SchedulingDisabled\s", kubectl.ok("get", "nodes", "node-2"), re.M)
    assert kubectl.ok("cordon", "node-2") == "node/node-2 already cordoned"
    assert kubectl.ok("uncordon", "node-2") == "node/node-2 uncordoned"
    assert kubectl.ok("get", "node", "node-2", "-o", "jsonpath={.spec.unschedulable}") == ""
    assert kubectl.ok("taint", "nodes", "node-2", "k=true:NoSchedule") == "node/node-2 tainted"
    out = kubectl.bad("taint", "nodes", "node-2", "k=true:NoSchedule")
    assert "already has k taint(s) with same effect(s) and --overwrite is false" in out
    assert re.search(r"^Taints:\s+k=true:NoSchedule$", kubectl.ok("describe", "node", "node-2"), re.M)
    assert kubectl.ok("taint", "nodes", "node-2", "k2=v:NoExecute") == "node/node-2 tainted"
    assert kubectl.ok("taint", "nodes", "node-2", "k=true:NoSchedule-") == "node/node-2 untainted"
    assert kubectl.ok("get", "node", "node-2", "-o", "jsonpath={.spec.taints[*].key}") == "k2"
    assert kubectl.ok("taint", "nodes", "node-2", "k2-") == "node/node-2 untainted"
    # drain evicts a finished pod (removed at once); the eviction is what a real drain sends
    kubectl.ok("create", "-f", kubectl.file("dr.yaml", job_manifest("drained")))
    _pod_of(kubectl, "drained", "drained-pod", exit_code=0, node="node-2")
    out = kubectl.ok("drain", "node-2", "--ignore-daemonsets", "--timeout=20s")
    for line in (
        "node/node-2 cordoned",
        "evicting pod default/drained-pod",
        "pod/drained-pod evicted",
        "node/node-2 drained",
    ):
        assert line in out.splitlines(), out


def test_explain_and_server_side_apply(kubectl: Kubectl) -> None:
    out = kubectl.ok("explain", "job.spec.podFailurePolicy")
    assert re.search(r"^KIND:\s+Job$", out, re.M) and re.search(r"^FIELD:\s+podFailurePolicy", out, re.M)
    assert "rules" in out
    path = kubectl.file("ssa.yaml", job_manifest("ssa"))
    assert kubectl.ok("apply", "--server-side", "-f", path) == "job.batch/ssa serverside-applied"
    assert kubectl.ok("apply", "--server-side", "-f", path) == "job.batch/ssa serverside-applied"
    managers = kubectl.ok(
        "get",
        "job",
        "ssa",
        "--show-managed-fields",
        "-o",
        r'jsonpath={range .metadata.managedFields[*]}{.manager}:{.operation}{"\n"}{end}',
    )
    assert "kubectl:Apply" in managers.splitlines()


def test_server_side_apply_conflict_with_kubectl_create(kubectl: Kubectl) -> None:
    path = kubectl.file("ssa-conflict.yaml", job_manifest("ssac", backoffLimit=2))
    assert kubectl.ok("create", "-f", path) == "job.batch/ssac created"
    assert kubectl.ok("apply", "--server-side", "-f", path) == "job.batch/ssac serverside-applied"
    kubectl.file("ssa-conflict.yaml", job_manifest("ssac", backoffLimit=4))
    out = kubectl.bad("apply", "--server-side", "-f", path)
    assert 'Apply failed with 1 conflict: conflict with "kubectl-create" using batch/v1: .spec.backoffLimit' in out
    assert "--force-conflicts" in out  # kubectl's help text for FieldManagerConflict causes
    assert kubectl.ok("apply", "--server-side", "--force-conflicts", "-f", path) == "job.batch/ssac serverside-applied"
    assert kubectl.ok("get", "job", "ssac", "-o", "jsonpath={.spec.backoffLimit}") == "4"


def test_get_single_object_watch_starts_with_its_row(kubectl: Kubectl) -> None:
    kubectl.ok("create", "-f", kubectl.file("single.yaml", job_manifest("single")))
    proc = subprocess.Popen(
        ["kubectl", "get", "job", "single", "-w", "-v=6"],  # -v=6 logs the watch request once it is answered
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=kubectl.env(),
    )
    lines: list[str] = []
    first_row, watching, complete = threading.Event(), threading.Event(), threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip())
            if line.startswith("single"):
                first_row.set()
            if "Complete" in line:
                complete.set()

    def read_log() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "watch=true" in line and "200 OK" in line:
                watching.set()

    threading.Thread(target=read, daemon=True).start()
    threading.Thread(target=read_log, daemon=True).start()
    try:
        assert first_row.wait(20), lines
        # kubectl watches one object from resourceVersion 0 and skips the watch's first event, the object it has
        # already printed: a change made before the watch is answered arrives inside that skipped event, on a
        # real cluster as here. So the change is made once kubectl is watching.
        assert watching.wait(20), lines
        _complete(kubectl, "single")
        assert complete.wait(20), lines
    finally:
        proc.terminate()
        proc.wait(10)
    assert re.match(r"NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE$", lines[0])
    rows = [line.split()[:2] for line in lines[1:]]
    assert rows[-1] == ["single", "Complete"]
    assert rows[0] == ["single", "Running"] and len(rows) == 2, lines  # its row once, then the change


def test_kubectl_create_job_with_the_typed_protobuf_client(kubectl: Kubectl) -> None:
    out = kubectl.ok("create", "job", "typed", "--image=busybox:1.36", "--", "sh", "-c", "echo hi")
    assert out == "job.batch/typed created"
    assert kubectl.ok("get", "job", "typed", "-o", "jsonpath={.spec.template.spec.containers[0].command}") == (
        '["sh","-c","echo hi"]'
    )
    assert kubectl.ok("get", "job", "typed", "-o", "jsonpath={.spec.backoffLimit}") == "6"  # defaulted


def test_kubectl_typed_creates_of_other_kinds_send_protobuf(kubectl: Kubectl) -> None:
    assert kubectl.ok("create", "namespace", "typed-ns") == "namespace/typed-ns created"
    assert kubectl.ok("get", "namespace", "typed-ns", "-o", "jsonpath={.status.phase}") == "Active"
    out = kubectl.ok("create", "priorityclass", "typed-pc", "--value=1000", "--description=typed")
    assert out == "priorityclass.scheduling.k8s.io/typed-pc created"
    assert kubectl.ok("get", "priorityclass", "typed-pc", "-o", "jsonpath={.value} {.description}") == "1000 typed"
    out = kubectl.ok("create", "poddisruptionbudget", "typed-pdb", "--selector=app=typed", "--min-available=50%")
    assert out == "poddisruptionbudget.policy/typed-pdb created"
    assert kubectl.ok("get", "pdb", "typed-pdb", "-o", "jsonpath={.spec.minAvailable}") == "50%"


def test_kubectl_debug_copy_to_sends_the_copy_as_protobuf(kubectl: Kubectl) -> None:
    pod = pod_manifest("dbg-src")
    kubectl.ok("create", "-f", kubectl.file("dbg.yaml", pod))
    kubectl.ok(
        "debug",
        "dbg-src",
        "--copy-to=dbg-copy",
        "--image=busybox:1.36",
        "--container=dbg",
        "--profile=general",
        "--",
        "sleep",
        "5",
    )
    names = kubectl.ok("get", "pod", "dbg-copy", "-o", "jsonpath={.spec.containers[*].name}")
    assert names == "main dbg"


KUBECTL_DIR = Path("/usr/lib/google-cloud-sdk/bin")


@pytest.mark.parametrize("minor", [29, 30, 31, 33])
def test_other_kubectl_minors_apply_and_get(kubectl: Kubectl, minor: int, tmp_path: Path) -> None:
    binary = KUBECTL_DIR / f"kubectl.1.{minor}"
    if not binary.exists():
        pytest.skip(f"{binary} is not installed")
    env = {"HOME": str(tmp_path), "KUBECONFIG": str(kubectl.config), "PATH": "/usr/local/bin:/usr/bin:/bin"}

    def run(*args: str) -> str:
        proc = subprocess.run([str(binary), *args], capture_output=True, text=True, env=env, timeout=30)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout.strip()

    path = kubectl.file(f"minor-{minor}.yaml", job_manifest(f"minor-{minor}"))
    assert run("apply", "-f", path) == f"job.batch/minor-{minor} created"  # discovery + OpenAPI v3 + strict
    assert run("apply", "-f", path) == f"job.batch/minor-{minor} unchanged"
    assert re.match(r"NAME\s+STATUS\s+COMPLETIONS", run("get", "job", f"minor-{minor}"))
