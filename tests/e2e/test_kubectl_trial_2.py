"""The second kubectl trial on `kjobs up` (docs/kubectl-trial-2.md): drain, taints, watches, waits, health
endpoints, raw requests. Each test is the command as a user types it and what a cluster prints."""

from __future__ import annotations

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
    with kubectl_on_up(tmp_path_factory.mktemp("kubectl-trial-2")) as kubectl:
        yield kubectl


def test_container_events_name_their_container(up: Up) -> None:
    # The kubelet's events about a container (Pulled, Created, Started, Killing, BackOff, Failed) refer to it as
    # `involvedObject.fieldPath: spec.containers{NAME}` (spec.initContainers{NAME} for an init container), which
    # `kubectl get events -o wide` shows as SUBOBJECT and a field selector can pick; kjobs left the field out.
    manifest = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: subobject\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      initContainers:\n      - name: setup\n        image: busybox\n"
        "        command: ['true']\n      containers:\n      - name: work\n        image: busybox\n"
        "        command: ['true']\n"
    )
    assert up.ok("apply", "-f", "-", stdin=manifest) == "job.batch/subobject created"
    up.ok("wait", "--for=condition=Complete", "job/subobject", "--timeout=60s")
    pod = up.ok("get", "pods", "-l", "job-name=subobject", "-o", "jsonpath={.items[0].metadata.name}")
    columns = "-o=custom-columns=REASON:.reason,SUBOBJECT:.involvedObject.fieldPath"

    def rows() -> list[str] | None:
        out = up.ok("get", "events", "--field-selector", f"involvedObject.name={pod}", columns, "--no-headers")
        found = [" ".join(line.split()) for line in out.splitlines()]
        return found if "Started spec.containers{work}" in found else None

    found = _until(rows, "the Started event of the container")
    for reason in ("Pulled", "Created", "Started"):
        assert f"{reason} spec.initContainers{{setup}}" in found
        assert f"{reason} spec.containers{{work}}" in found
    assert "Scheduled <none>" in found  # about the pod itself: no field path
    picked = up.ok("get", "events", "--field-selector", "involvedObject.fieldPath=spec.containers{work}", columns)
    assert "Started" in picked and "setup" not in picked


def test_health_endpoints_list_their_checks(up: Up) -> None:
    # `kubectl get --raw '/readyz?verbose'` lists kube-apiserver's checks one per line and ends with
    # `readyz check passed`; kjobs printed `ok` for it, and `ok` for any path under /readyz.
    ready = up.ok("get", "--raw", "/readyz?verbose").splitlines()
    assert ready[0] == "[+]ping ok" and ready[-1] == "readyz check passed"
    assert {"[+]log ok", "[+]etcd ok", "[+]shutdown ok"} <= set(ready)
    live = up.ok("get", "--raw", "/livez?verbose").splitlines()
    assert live[-1] == "livez check passed" and "[+]shutdown ok" not in live
    excluded = up.ok("get", "--raw", "/readyz?verbose&exclude=etcd&exclude=nope").splitlines()
    assert "[+]etcd excluded: ok" in excluded
    assert 'warn: some health checks cannot be excluded: no matches for "nope"' in excluded
    assert up.ok("get", "--raw", "/livez") == "ok"
    assert up.ok("get", "--raw", "/readyz/etcd") == "ok"
    code, out = up("get", "--raw", "/readyz/nope")
    assert code == 1 and out == "Error from server (NotFound): the server could not find the requested resource"


def test_version_is_indented_as_the_apiserver_writes_it(up: Up) -> None:
    # kube-apiserver writes /version with WriteRawJSON (json.MarshalIndent, two spaces): `kubectl get --raw
    # /version` prints it over several lines; kjobs wrote one line.
    lines = up.ok("get", "--raw", "/version").splitlines()
    assert lines[0] == "{" and lines[1] == '  "major": "1",' and lines[-1] == "}"


def test_deleting_every_job_warns_that_their_pods_stay(up: Up) -> None:
    # A DELETE of the jobs collection without a propagation policy orphans the pods, and the Job registry's
    # DeleteCollection says so as its Delete does; kjobs said nothing.
    up.ok("create", "job", "swept", "--image=busybox", "--", "true")
    code, out = up("delete", "--raw", "/apis/batch/v1/namespaces/default/jobs")
    assert code == 0
    assert "Warning: child pods are preserved by default when jobs are deleted" in out
    code, out = up("delete", "--raw", "/apis/batch/v1/namespaces/default/jobs?propagationPolicy=Background")
    assert code == 0 and "Warning" not in out
    up.ok("delete", "pods", "-l", "job-name=swept", "--wait=false")


def test_namespaces_cannot_be_deleted_as_a_collection(up: Up) -> None:
    # The namespace registry has no DeleteCollection: discovery does not list the verb and the request is 405.
    # kjobs listed it and served it: the request failed on `default` (403 Forbidden, it may not be deleted).
    up.ok("create", "namespace", "kept")
    code, out = up("delete", "--raw", "/api/v1/namespaces")
    assert code == 1
    assert (
        out
        == "Error from server (MethodNotAllowed): " + "the server does not allow this method on the requested resource"
    )
    assert up.ok("get", "namespace", "kept", "-o", "name") == "namespace/kept"
    wide = up.ok("api-resources", "-o", "wide")
    verbs = next(line.split()[5] for line in wide.splitlines() if line.startswith("namespaces "))
    assert verbs == "create,delete,get,list,patch,update,watch"


def test_describe_node_shows_the_kubelet_events_of_a_cordon(up: Up) -> None:
    # `kubectl describe node` after `kubectl cordon` (or drain) lists the kubelet's `NodeNotSchedulable` event,
    # after those of its start (`Starting`, one per condition, `NodeReady`); kjobs showed only RegisteredNode.
    assert up.ok("cordon", "kjobs-node") == "node/kjobs-node cordoned"
    try:

        def events() -> str | None:
            described = up.ok("describe", "node", "kjobs-node")
            return described if "NodeNotSchedulable" in described else None

        described = _until(events, "the NodeNotSchedulable event", timeout=60)
    finally:
        up.ok("uncordon", "kjobs-node")
    rows = [" ".join(line.split()) for line in described.split("Events:", 1)[1].splitlines()]
    for reason in ("NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeReady", "NodeNotSchedulable"):
        assert any(row.startswith(f"Normal {reason} ") and row.endswith(f"is now: {reason}") for row in rows), rows
    assert any(row.startswith("Normal Starting ") and row.endswith("kubelet Starting kubelet.") for row in rows)
