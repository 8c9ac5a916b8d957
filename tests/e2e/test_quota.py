"""ResourceQuota and LimitRange on `kjobs up`, as the real kubectl shows them: `kubectl create quota`, `get quota`,
`describe ns`; a Job of parallelism 4 under `pods: 2` that runs two pods at a time, records FailedCreate
events with the quota's words, and completes; a LimitRange's defaults and refusals; and a namespace being
deleted, Terminating, refusing new content."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator

import pytest

from tests.e2e.test_config_objects import Up, kubectl_on_up
from tests.e2e.test_python_clients import _until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("quota")) as kubectl:
        yield kubectl


def _job(name: str, namespace: str, command: str, **spec: object) -> str:
    container = {"name": "main", "image": "busybox", "command": ["sh", "-c", command]}
    return json.dumps(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [container]}}, **spec},
        }
    )


def test_discovery_lists_quotas_and_limit_ranges(up: Up) -> None:
    out = up.ok("api-resources", "--api-group=")
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:]}
    assert rows["resourcequotas"][:4] == ["resourcequotas", "quota", "v1", "true"]
    assert rows["limitranges"][:4] == ["limitranges", "limits", "v1", "true"]


def test_a_job_under_a_pods_quota_runs_two_at_a_time_and_completes(up: Up) -> None:
    up.ok("create", "namespace", "q1")
    assert up.ok("create", "quota", "q", "--hard=pods=2,count/jobs.batch=1", "-n", "q1") == "resourcequota/q created"
    _until(lambda: "pods: 0/2" in up.ok("get", "quota", "q", "-n", "q1") or None, "the quota's status")
    table = up.ok("get", "quota", "-n", "q1")
    assert re.split(r"\s{2,}", table.splitlines()[0]) == ["NAME", "AGE", "REQUEST", "LIMIT"]
    assert table.splitlines()[1].split(None, 2)[2].strip() == "count/jobs.batch: 0/1, pods: 0/2"

    up.ok("create", "-f", "-", stdin=_job("work", "q1", "sleep 1", parallelism=4, completions=4))
    code, out = up("create", "-f", "-", stdin=_job("second", "q1", "true"))
    assert code == 1
    assert out == (
        'Error from server (Forbidden): error when creating "STDIN": jobs.batch "second" is forbidden: '
        "exceeded quota: q, requested: count/jobs.batch=1, used: count/jobs.batch=1, limited: count/jobs.batch=1"
    )

    def complete() -> bool | None:
        status = json.loads(up.ok("get", "job", "work", "-n", "q1", "-o", "json"))["status"]
        return True if status.get("succeeded") == 4 else None

    _until(complete, "the Job to complete under the quota", timeout=90)
    events = up.ok("get", "events", "-n", "q1", "--field-selector=reason=FailedCreate", "-o", "json")
    messages = {e["message"] for e in json.loads(events)["items"]}
    assert messages, "no FailedCreate events"
    pattern = re.compile(
        r'Error creating: pods "work-[a-z0-9]{5}" is forbidden: exceeded quota: q, requested: pods=1, '
        r"used: pods=2, limited: pods=2"
    )
    assert all(pattern.fullmatch(m) for m in messages), messages
    _until(lambda: "pods: 0/2" in up.ok("get", "quota", "q", "-n", "q1") or None, "the pods given back")
    phases = up.ok("get", "pods", "-n", "q1", "-l", "job-name=work", "-o", "jsonpath={.items[*].status.phase}")
    assert phases.split() == ["Succeeded"] * 4  # refused creates are retried, never doubled

    described = up.ok("describe", "quota", "q", "-n", "q1")
    assert re.search(r"pods\s+0\s+2", described), described
    ns = up.ok("describe", "ns", "q1")
    assert "Resource Quotas" in ns and "No LimitRange resource." in ns, ns


def test_quota_on_cpu_wants_requests_and_a_limit_range_gives_them(up: Up) -> None:
    up.ok("create", "namespace", "q2")
    up.ok("create", "quota", "compute", "--hard=requests.cpu=1,limits.memory=1Gi", "-n", "q2")
    _until(lambda: "requests.cpu: 0/1" in up.ok("get", "quota", "-n", "q2") or None, "the quota's status")
    code, out = up("run", "bare", "--image=busybox", "--restart=Never", "-n", "q2", "--", "true")
    assert code == 1
    assert out == (
        'Error from server (Forbidden): pods "bare" is forbidden: failed quota: compute: '
        "must specify limits.memory for: bare; requests.cpu for: bare"
    )
    limits = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "defaults"},
        "spec": {
            "limits": [
                {
                    "type": "Container",
                    "default": {"memory": "64Mi"},
                    "defaultRequest": {"cpu": "100m"},
                    "max": {"cpu": "500m"},
                }
            ]
        },
    }
    up.ok("create", "-n", "q2", "-f", "-", stdin=json.dumps(limits))
    stored = json.loads(up.ok("get", "limitrange", "defaults", "-n", "q2", "-o", "json"))
    assert stored["spec"]["limits"][0]["default"] == {"cpu": "500m", "memory": "64Mi"}  # cpu from max
    assert stored["spec"]["limits"][0]["defaultRequest"] == {"cpu": "100m", "memory": "64Mi"}  # memory from default
    up.ok("run", "ok", "--image=busybox", "--restart=Never", "-n", "q2", "--", "true")
    pod = json.loads(up.ok("get", "pod", "ok", "-n", "q2", "-o", "json"))
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container ok; cpu, memory limit for container ok"
    )
    assert pod["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "500m", "memory": "64Mi"},
        "requests": {"cpu": "100m", "memory": "64Mi"},  # the memory request defaulted from the default limit
    }
    assert pod["status"]["qosClass"] == "Burstable"
    big = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big"},
        "spec": {
            "containers": [
                {"name": "main", "image": "busybox", "command": ["true"], "resources": {"limits": {"cpu": "2"}}}
            ]
        },
    }
    code, out = up("create", "-n", "q2", "-f", "-", stdin=json.dumps(big))
    assert code == 1
    assert out == (
        'Error from server (Forbidden): error when creating "STDIN": pods "big" is forbidden: '
        "maximum cpu usage per Container is 500m, but limit is 2"
    )
    described = up.ok("describe", "limitrange", "defaults", "-n", "q2")
    assert re.search(r"Container\s+cpu\s+-\s+500m\s+100m\s+500m\s+-", described), described
    assert re.search(r"Container\s+memory\s+-\s+-\s+64Mi\s+64Mi\s+-", described), described
    assert "Resource Limits" in up.ok("describe", "ns", "q2")


def test_a_namespace_being_deleted_is_terminating_and_refuses_new_content(up: Up) -> None:
    up.ok("create", "namespace", "q3")
    up.ok("create", "configmap", "held", "-n", "q3")
    up.ok("patch", "configmap", "held", "-n", "q3", "--type=merge", "-p", '{"metadata":{"finalizers":["x.io/hold"]}}')
    up.ok("delete", "namespace", "q3", "--wait=false")
    assert up.ok("get", "namespace", "q3", "-o", "jsonpath={.status.phase}") == "Terminating"
    code, out = up("create", "configmap", "new", "-n", "q3")
    assert code == 1
    assert out == (
        'error: failed to create configmap: configmaps "new" is forbidden: unable to create new content in '
        "namespace q3 because it is being terminated"
    )
    up.ok("patch", "configmap", "held", "-n", "q3", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    _until(lambda: up("get", "namespace", "q3")[0] == 1 or None, "the namespace to go")
