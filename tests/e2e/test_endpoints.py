"""Endpoints and EndpointSlices on `kjobs up`, read with a real kubectl: Kubernetes' documented headless Service
beside an Indexed Job (kubernetes.io/docs/tasks/job/job-with-pod-to-pod-communication/), whose pods stay running,
shows them in `kubectl get endpoints`, `kubectl describe svc` and one EndpointSlice; deleting the Job empties
them; the `kubernetes` Service lists the API server."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.k8s_up import Cluster, core_cluster
from tests.server.test_kubectl import HEADLESS_SERVICE_AND_INDEXED_JOB

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

BUNDLE = HEADLESS_SERVICE_AND_INDEXED_JOB.replace(
    # a `sleep` that takes SIGTERM (a trap): the foreground deletion waits for the pods, and PID 1 with no handler
    # would run out its 30 s grace period
    'command: ["bash", "-c", "ping -c 1 example-job-0.headless-svc"]',
    """command: ["sh", "-c", "trap 'exit 143' TERM; sleep 30 & wait"]""",
)


WEB = """\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    job-name: example-job
  ports:
  - port: 80
    targetPort: 8080
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, Path]]:
    tmp = tmp_path_factory.mktemp("endpoints")
    with core_cluster(tmp) as up:
        yield up, tmp / "kc.yaml"


def _kubectl(config: Path, *args: str, stdin: str | None = None) -> str:
    env = {"HOME": str(config.parent), "KUBECONFIG": str(config), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    proc = subprocess.run(["kubectl", *args], capture_output=True, text=True, env=env, input=stdin, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.rstrip()


def _until(check: Callable[[], str], want: Callable[[str], bool], seconds: float = 20.0) -> str:
    deadline = time.monotonic() + seconds
    out = check()
    while not want(out) and time.monotonic() < deadline:
        time.sleep(0.2)
        out = check()
    assert want(out), out
    return out


def test_the_kubernetes_service_lists_the_api_server(cluster: tuple[Cluster, Path]) -> None:
    up, config = cluster
    port = up.api.configuration.host.rsplit(":", 1)[1]
    rows = _kubectl(config, "get", "endpoints", "kubernetes").splitlines()
    assert rows[0].split() == ["NAME", "ENDPOINTS", "AGE"]
    assert rows[1].split()[:2] == ["kubernetes", f"127.0.0.1:{port}"]
    slices = _kubectl(config, "get", "endpointslices", "kubernetes").splitlines()
    assert slices[0].split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert slices[1].split()[:4] == ["kubernetes", "IPv4", port, "127.0.0.1"]


def test_a_headless_service_lists_the_indexed_jobs_pods(cluster: tuple[Cluster, Path]) -> None:
    _, config = cluster
    assert _kubectl(config, "apply", "-f", "-", stdin=BUNDLE) == (
        "service/headless-svc created\njob.batch/example-job created"
    )
    get_ep = lambda: _kubectl(config, "get", "ep", "headless-svc")  # noqa: E731
    out = _until(get_ep, lambda o: "127.0.0.1,127.0.0.1,127.0.0.1" in o)
    assert out.splitlines()[0].split() == ["NAME", "ENDPOINTS", "AGE"]
    # kubectl 1.32 describes a Service's endpoints (from its EndpointSlices) port by port: the docs' Service has
    # none, so a second one with a port selects the same pods
    assert "Endpoints:" not in _kubectl(config, "describe", "svc", "headless-svc")
    _kubectl(config, "create", "-f", "-", stdin=WEB)
    _until(lambda: _kubectl(config, "get", "ep", "web"), lambda o: "127.0.0.1:8080,127.0.0.1:8080,127.0.0.1:8080" in o)
    described = _kubectl(config, "describe", "svc", "web")
    assert "Endpoints:                127.0.0.1:8080,127.0.0.1:8080,127.0.0.1:8080" in described, described
    slices = _kubectl(config, "get", "endpointslices", "-l", "kubernetes.io/service-name=headless-svc")
    rows = [line.split() for line in slices.splitlines()]
    assert len(rows) == 2 and rows[1][0].startswith("headless-svc-")
    assert rows[1][1:4] == ["IPv4", "<unset>", "127.0.0.1,127.0.0.1,127.0.0.1"]
    labels = _kubectl(
        config, "get", "endpointslices", rows[1][0], "-o",
        "jsonpath={.metadata.labels.endpointslice\\.kubernetes\\.io/managed-by} {.metadata.ownerReferences[0].name}",
    )  # fmt: skip
    assert labels == "endpointslice-controller.k8s.io headless-svc"
    targets = _kubectl(config, "get", "ep", "headless-svc", "-o", "jsonpath={.subsets[0].addresses[*].targetRef.name}")
    assert sorted(targets.split()) == sorted(
        _kubectl(config, "get", "pods", "-l", "job-name=example-job", "-o", "name").replace("pod/", "").split()
    )

    _kubectl(config, "delete", "job", "example-job", "--cascade=foreground")
    _until(get_ep, lambda o: o.splitlines()[1].split()[1] == "<none>", 60.0)
    _until(
        lambda: _kubectl(config, "get", "endpointslices", "-l", "kubernetes.io/service-name=headless-svc"),
        lambda o: o.splitlines()[1].split()[3] == "<unset>",
        60.0,
    )
    _kubectl(config, "delete", "svc", "headless-svc", "web")
    _until(
        lambda: _kubectl(config, "get", "ep,endpointslices", "-A"), lambda o: "headless-svc" not in o and "web" not in o
    )


MANUAL = """\
apiVersion: v1
kind: Service
metadata: {name: manual}
spec:
  ports: [{name: a, port: 80}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: manual}
subsets:
- addresses: [{ip: 10.0.0.1}, {ip: 10.0.0.2}, {ip: 10.0.0.3}, {ip: 10.0.0.4}]
  ports: [{name: a, port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: manual-1, labels: {kubernetes.io/service-name: manual}}
addressType: IPv4
ports: [{name: a, port: 80}]
endpoints:
- addresses: [10.0.0.1]
- addresses: [10.0.0.2]
"""


def test_server_side_apply_and_validation(cluster: tuple[Cluster, Path]) -> None:
    _, config = cluster
    out = _kubectl(config, "apply", "--server-side", "-f", "-", stdin=MANUAL)
    assert out.splitlines() == [
        "service/manual serverside-applied",
        "endpoints/manual serverside-applied",
        "endpointslice.discovery.k8s.io/manual-1 serverside-applied",
    ]
    # a Service without a selector: its Endpoints and slices are its user's; kubectl 1.32 describes it from its
    # EndpointSlices (by `kubernetes.io/service-name`), port by port
    assert "Endpoints:                10.0.0.1:80,10.0.0.2:80\n" in _kubectl(config, "describe", "svc", "manual")
    row = _kubectl(config, "get", "ep", "manual").splitlines()[1].split(None, 1)[1]
    assert row.startswith("10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 1 more...")
    assert (
        _kubectl(
            config, "get", "endpointslice", "manual-1", "-o", "jsonpath={.ports[0].protocol} {.metadata.generation}"
        )
        == "TCP 1"
    )
    env = {"HOME": str(config.parent), "KUBECONFIG": str(config), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    bad = "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: bad}\naddressType: IPv9\n"
    proc = subprocess.run(
        ["kubectl", "create", "-f", "-"], capture_output=True, text=True, env=env, input=bad, timeout=60
    )
    assert proc.returncode == 1
    assert 'addressType: Unsupported value: "IPv9": supported values: "FQDN", "IPv4", "IPv6"' in proc.stderr
    _kubectl(config, "delete", "svc", "manual")
    _until(lambda: _kubectl(config, "get", "ep", "-o", "name"), lambda o: "endpoints/manual" not in o)
