"""Services on `kjobs up`, as a cluster's users handle them: kubectl applies Kubernetes' documented headless
Service beside an Indexed Job (kubernetes.io/docs/tasks/job/job-with-pod-to-pod-communication/), the official
`kubernetes` client and lightkube create ClusterIP Services and read back the cluster IPs the server allocated,
and the allocations and the `kubernetes` Service survive a restart over the same data directory."""

from __future__ import annotations

import ipaddress
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from tests.e2e.k8s_up import Cluster, core_cluster
from tests.server.test_kubectl import HEADLESS_SERVICE_AND_INDEXED_JOB

pytestmark = [pytest.mark.e2e]

RANGE = ipaddress.ip_network("10.96.0.0/12")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, Path]]:
    tmp = tmp_path_factory.mktemp("services")
    with core_cluster(tmp) as up:
        yield up, tmp / "kc.yaml"


def _kubectl(config: Path, *args: str, stdin: str | None = None) -> str:
    env = {"HOME": str(config.parent), "KUBECONFIG": str(config), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    proc = subprocess.run(["kubectl", *args], capture_output=True, text=True, env=env, input=stdin, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.rstrip()


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_applies_the_docs_headless_service_and_indexed_job(cluster: tuple[Cluster, Path]) -> None:
    _, config = cluster
    out = _kubectl(config, "apply", "-f", "-", stdin=HEADLESS_SERVICE_AND_INDEXED_JOB)
    assert out == "service/headless-svc created\njob.batch/example-job created"
    rows = [line.split() for line in _kubectl(config, "get", "svc").splitlines()]
    assert [row[:5] for row in rows] == [
        ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)"],
        ["headless-svc", "ClusterIP", "None", "<none>", "<none>"],
        ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"],
    ]
    assert "Selector:                 job-name=example-job" in _kubectl(config, "describe", "svc", "headless-svc")
    assert _kubectl(config, "delete", "svc", "headless-svc") == 'service "headless-svc" deleted'
    _kubectl(config, "delete", "job", "example-job")


def test_the_official_client_creates_a_cluster_ip_service_and_reads_its_ip(cluster: tuple[Cluster, Path]) -> None:
    core = cluster[0].core
    body = k8s.V1Service(
        metadata=k8s.V1ObjectMeta(name="py-svc"),
        spec=k8s.V1ServiceSpec(selector={"app": "py"}, ports=[k8s.V1ServicePort(port=80, target_port=8080)]),
    )
    made = core.create_namespaced_service("default", body)
    assert ipaddress.ip_address(made.spec.cluster_ip) in RANGE
    assert made.spec.cluster_ips == [made.spec.cluster_ip]
    assert (made.spec.type, made.spec.ip_families, made.spec.ports[0].protocol) == ("ClusterIP", ["IPv4"], "TCP")
    assert core.read_namespaced_service("py-svc", "default").spec.cluster_ip == made.spec.cluster_ip
    with pytest.raises(ApiException) as taken:
        body.metadata.name, body.spec.cluster_ip = "py-svc-2", made.spec.cluster_ip
        core.create_namespaced_service("default", body)
    assert taken.value.status == 422
    core.delete_namespaced_service("py-svc", "default")
    assert core.create_namespaced_service("default", body).spec.cluster_ip == made.spec.cluster_ip  # freed
    core.delete_namespaced_service("py-svc-2", "default")


def test_lightkube_creates_a_cluster_ip_service_and_reads_its_ip(cluster: tuple[Cluster, Path]) -> None:
    from lightkube import Client, KubeConfig
    from lightkube.models.core_v1 import ServicePort, ServiceSpec
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import Service

    c = Client(config=KubeConfig.from_file(str(cluster[1])))
    made = c.create(Service(metadata=ObjectMeta(name="lk-svc"), spec=ServiceSpec(ports=[ServicePort(port=53)])))
    assert made.spec is not None and made.spec.clusterIP is not None
    assert ipaddress.ip_address(made.spec.clusterIP) in RANGE
    assert c.get(Service, "lk-svc").spec.clusterIP == made.spec.clusterIP  # type: ignore[union-attr]
    names = {s.metadata.name for s in c.list(Service, namespace="default")}  # type: ignore[union-attr]
    assert {"kubernetes", "lk-svc"} <= names
    c.delete(Service, "lk-svc")


def test_allocations_and_the_kubernetes_service_survive_a_restart(tmp_path: Path) -> None:
    with core_cluster(tmp_path) as up:
        kept = up.core.create_namespaced_service(
            "default", {"metadata": {"name": "kept"}, "spec": {"type": "NodePort", "ports": [{"port": 80}]}}
        )
    with core_cluster(tmp_path) as up:
        port = int(up.api.configuration.host.rsplit(":", 1)[1])
        kubernetes = up.core.read_namespaced_service("kubernetes", "default")
        assert (kubernetes.spec.cluster_ip, kubernetes.spec.ports[0].target_port) == ("10.96.0.1", port)
        taken = {"metadata": {"name": "again"}, "spec": {"clusterIP": kept.spec.cluster_ip, "ports": [{"port": 80}]}}
        with pytest.raises(ApiException) as refused:
            up.core.create_namespaced_service("default", taken)
        assert "provided IP is already allocated" in refused.value.body
        node_port = kept.spec.ports[0].node_port
        same_port = {
            "metadata": {"name": "np"},
            "spec": {"type": "NodePort", "ports": [{"port": 1, "nodePort": node_port}]},
        }
        with pytest.raises(ApiException) as refused:
            up.core.create_namespaced_service("default", same_port)
        assert "provided port is already allocated" in refused.value.body
