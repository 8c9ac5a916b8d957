"""The third kubectl trial on `kjobs up` (docs/kubectl-trial-3.md): what a user does beyond the first two trials
(debug, cp, events, auth, set, label selectors, prune, waits, node debugging). Each test is the command as a user
types it and what a cluster prints."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.test_config_objects import Up, kubectl_on_up
from tests.e2e.test_python_clients import _until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("kubectl-trial-3")) as kubectl:
        yield kubectl


def _pod(name: str, command: str = "sleep 300") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  restartPolicy: Never\n"
        f"  terminationGracePeriodSeconds: 1\n  containers:\n  - name: main\n    image: busybox\n"
        f"    command: [sh, -c, '{command}']\n"
    )


def _events(up: Up, pod: str) -> list[str]:
    columns = "-o=custom-columns=REASON:.reason,SUBOBJECT:.involvedObject.fieldPath,MESSAGE:.message"
    out = up.ok("get", "events", "--field-selector", f"involvedObject.name={pod}", columns, "--no-headers")
    return [" ".join(line.split()) for line in out.splitlines()]


def test_kubectl_debug_records_the_ephemeral_containers_events(up: Up) -> None:
    # The kubelet starts an ephemeral container with the same startContainer as any other, so `kubectl events
    # --for pod/P` shows Pulled, Created and Started for `kubectl debug`'s container, naming it
    # spec.ephemeralContainers{NAME}; and killContainer's `Killing` when the pod is deleted while it runs.
    # kjobs recorded none of them.
    assert up.ok("apply", "-f", "-", stdin=_pod("target")) == "pod/target created"
    up.ok("wait", "--for=condition=Ready", "pod/target", "--timeout=60s")
    up.ok("debug", "target", "--image=busybox", "--container=dbg", "--profile=general", "--", "sleep", "300")
    up.ok("wait", "--for=jsonpath={.status.ephemeralContainerStatuses[0].state.running}", "pod/target")
    where = "spec.ephemeralContainers{dbg}"
    want = [
        f'Pulled {where} Container image "busybox" already present on machine',
        f"Created {where} Created container: dbg",
        f"Started {where} Started container dbg",
    ]

    def announced() -> list[str] | None:
        found = _events(up, "target")
        return found if set(want) <= set(found) else None

    found = _until(announced, "the debugger's events")
    assert [line for line in found if where in line] == want
    table = up.ok("events", "--for", "pod/target")
    assert "Started container dbg" in table
    up.ok("delete", "pod", "target", "--wait=false")
    killing = f"Killing {where} Stopping container dbg"
    _until(lambda: killing in _events(up, "target") or None, "the debugger's Killing event")


TYPO_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: typo
spec:
  backofLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        command: ['true']
        imagePullPolice: Always
"""


@pytest.mark.parametrize("validate", ["--validate=strict", "--validate=warn", "--validate=false"])
def test_server_side_apply_of_an_undeclared_field_fails_whatever_the_validation(up: Up, validate: str) -> None:
    # The field manager makes a typed object of an apply configuration before anything else, and that fails on
    # a field the schema does not declare, whatever `fieldValidation` says; kjobs answered Strict's decoding
    # error, and with `--validate=false` dropped the field and created the Job.
    code, out = up("apply", "--server-side", validate, "-f", "-", stdin=TYPO_JOB)
    assert code == 1, out
    assert out == (
        "Error from server (BadRequest): failed to create typed patch object (default/typo; batch/v1, Kind=Job): "
        ".spec.backofLimit: field not declared in schema"
    )
    fixed = TYPO_JOB.replace("backofLimit", "backoffLimit")
    code, out = up("apply", "--server-side", validate, "-f", "-", stdin=fixed)
    assert code == 1
    assert out.endswith(': .spec.template.spec.containers[name="c"].imagePullPolice: field not declared in schema'), out
    code, out = up("get", "job", "typo")
    assert code == 1 and 'jobs.batch "typo" not found' in out
    # a client-side apply is decoded, not typed: Strict's error, as on a cluster
    code, out = up("apply", "-f", "-", stdin=TYPO_JOB)
    assert code == 1 and 'strict decoding error: unknown field "spec.backofLimit"' in out


def test_a_debug_container_that_cannot_start_says_why_after_its_image(up: Up) -> None:
    # `kubectl debug --profile=restricted` asks runAsNonRoot of an image that runs as root: the kubelet's
    # startContainer makes sure of the image (`Pulled`), then its container config fails (`Failed`, `Error: ...`),
    # both about spec.ephemeralContainers{rr}. kjobs recorded neither for an ephemeral container, and no
    # `Pulled` before a config error for any container.
    assert up.ok("apply", "-f", "-", stdin=_pod("strict")) == "pod/strict created"
    up.ok("wait", "--for=condition=Ready", "pod/strict", "--timeout=60s")
    up.ok("debug", "strict", "--image=busybox", "--profile=restricted", "-c", "rr", "--", "true")
    uid = up.ok("get", "pod", "strict", "-o", "jsonpath={.metadata.uid}")
    where = "spec.ephemeralContainers{rr}"
    failed = (
        f"Failed {where} Error: container has runAsNonRoot and image will run as root "
        f'(pod: "strict_default({uid})", container: rr)'
    )
    found = _until(lambda: (e := _events(up, "strict")) and (e if failed in e else None), "the Failed event")
    assert [line for line in found if where in line] == [
        f'Pulled {where} Container image "busybox" already present on machine',
        failed,
    ]
    code, out = up("logs", "strict", "-c", "rr")
    assert code == 1 and out.endswith('container "rr" in pod "strict" is waiting to start: CreateContainerConfigError')
    up.ok("delete", "pod", "strict", "--wait=false")


WIDGETS = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              parts:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  properties:
                    name: {type: string}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
"""


def test_server_side_apply_of_a_custom_resource_types_it_by_its_crd_schema(up: Up) -> None:
    # A custom resource's apply configuration is typed by the CRD's structural schema: a field it does not
    # declare fails the same way (`(rook-ceph/myfs; ceph.rook.io/v1, Kind=CephFilesystem): .spec.dataPools[0]...`
    # as users report it); kjobs pruned it (or gave Strict's decoding error) and applied the rest.
    assert up.ok("apply", "-f", "-", stdin=WIDGETS).endswith("created")
    _until(lambda: up("get", "widgets")[0] == 0 or None, "the widgets resource")
    widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  labels: {a: b}\nspec:\n"
    code, out = up("apply", "--server-side", "--validate=false", "-f", "-", stdin=widget + "  size: 1\n  colour: red\n")
    assert code == 1
    assert out == (
        "Error from server (BadRequest): failed to create typed patch object (default/w1; example.com/v1, "
        "Kind=Widget): .spec.colour: field not declared in schema"
    )
    parts = "  parts:\n  - {name: a, weight: 2}\n"
    code, out = up("apply", "--server-side", "-f", "-", stdin=widget + parts)
    assert code == 1 and out.endswith(': .spec.parts[name="a"].weight: field not declared in schema'), out
    fine = widget + "  size: 1\n  parts: [{name: a}]\n  extra: {anything: [1, 2]}\n"
    assert up.ok("apply", "--server-side", "-f", "-", stdin=fine) == "widget.example.com/w1 serverside-applied"


def test_curl_through_kubectl_proxy_gets_indented_json(up: Up) -> None:
    # kubernetes.io's "Access Clusters Using the Kubernetes API": `kubectl proxy --port=8080` then `curl
    # http://localhost:8080/api/` prints the APIVersions indented, because kube-apiserver pretty-prints for a
    # curl, Wget or browser User-Agent (and `?pretty=true`); kjobs answered compact JSON to everyone.
    env = {"HOME": str(up.home), "KUBECONFIG": str(up.config), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    proxy = subprocess.Popen(
        ["kubectl", "proxy", "--port=0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    try:
        assert proxy.stdout is not None
        line = proxy.stdout.readline()  # Starting to serve on 127.0.0.1:PORT
        base = "http://" + line.split()[-1]
        curl = {"User-Agent": "curl/8.5.0"}
        answer = httpx.get(base + "/api/", headers=curl).text
        assert answer.startswith('{\n  "kind": "APIVersions",\n  "versions": [\n    "v1"\n  ],\n'), answer
        assert not answer.endswith("\n")  # json.MarshalIndent writes no final newline
        missing = httpx.get(base + "/api/v1/namespaces/default/pods/nope", headers=curl)
        assert missing.status_code == 404 and '\n  "reason": "NotFound",\n' in missing.text
        assert httpx.get(base + "/api/?pretty=false", headers=curl).text.startswith('{"kind":"APIVersions"')
        assert httpx.get(base + "/api/?pretty=1", headers={"User-Agent": "x"}).text.startswith('{\n  "kind"')
        assert httpx.get(base + "/api/", headers={"User-Agent": "x"}).text.startswith('{"kind":"APIVersions"')
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)
    # kubectl's own requests are not a person's: `get --raw` stays compact, as on a cluster
    assert up.ok("get", "--raw", "/api").startswith('{"kind":"APIVersions"')
