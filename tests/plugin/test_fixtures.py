"""The fixtures as a test uses them: the official client through `kjobs_api_client` and `$KUBECONFIG`, the
`kjobs` marker, `apply`/`wait_for`/`pod_of`/`logs`, and virtual time on the simulated runtime."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client, config, watch

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.testing import ClusterOptions, KjobsCluster


def job(name: str, command: str, **spec: object) -> Obj:
    template = {
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {"name": "main", "image": "docker.io/library/busybox:1.36", "command": ["sh", "-c", command]}
            ],
        }
    }
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": {"template": template, **spec}}


def test_the_api_client_talks_to_the_cluster(kjobs_api_client: client.ApiClient) -> None:
    nodes = client.CoreV1Api(kjobs_api_client).list_node().items
    assert [n.metadata.name for n in nodes] == ["kjobs-node"]
    assert kjobs_api_client.configuration.host.startswith("https://127.0.0.1:")


def test_the_kubeconfig_is_the_official_clients_default(kjobs_kubeconfig: str) -> None:
    assert os.environ["KUBECONFIG"] == kjobs_kubeconfig
    config.load_kube_config()  # what unmodified code under test does
    names = [ns.metadata.name for ns in client.CoreV1Api().list_namespace().items]
    assert "default" in names and "kube-system" in names


@pytest.mark.kjobs(nodes=3)
def test_the_marker_chooses_the_nodes(kjobs_cluster: KjobsCluster) -> None:
    names = [n["metadata"]["name"] for n in kjobs_cluster.objects("node")]
    assert names == ["kjobs-node", "kjobs-node-2", "kjobs-node-3"]


def test_apply_takes_a_file_text_or_dict_and_merges_a_second_apply(kjobs_cluster: KjobsCluster, tmp_path: Path) -> None:
    manifest = tmp_path / "two.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n---\nkind: Deployment\napiVersion: apps/v1\n"
    )
    with pytest.raises(ValueError, match="kjobs does not serve apps/v1/Deployment"):
        kjobs_cluster.apply(manifest)
    text = """
apiVersion: batch/v1
kind: Job
metadata: {name: texty, namespace: team}
spec: {template: {spec: {restartPolicy: Never, containers: [{name: m, image: x, command: ["true"]}]}}}
"""
    kjobs_cluster.apply(text)
    assert kjobs_cluster.wait_for("job", "texty", "condition=Complete", namespace="team")["status"]["succeeded"] == 1
    kjobs_cluster.apply({**job("labelled", "true"), "metadata": {"name": "labelled", "labels": {"a": "1"}}})
    generated = kjobs_cluster.apply({**job("", "true"), "metadata": {"generateName": "gen-"}})
    assert generated["metadata"]["name"].startswith("gen-")
    again = kjobs_cluster.apply(
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "labelled", "labels": {"b": "2"}}}
    )
    assert again["metadata"]["labels"] == {"a": "1", "b": "2"}


def test_wait_for_conditions_logs_and_deletion(kjobs_cluster: KjobsCluster) -> None:
    kjobs_cluster.apply(job("hello", "echo hello from kjobs"))
    done = kjobs_cluster.wait_for("jobs", "hello", "Complete|Failed")
    assert done["status"]["succeeded"] == 1
    pod = kjobs_cluster.pod_of("hello", "phase=Succeeded")
    assert kjobs_cluster.logs(pod) == "hello from kjobs\n"
    client.BatchV1Api(kjobs_cluster.api_client).delete_namespaced_job(
        "hello", "default", propagation_policy="Foreground"
    )
    kjobs_cluster.wait_for("Job", "hello", "delete")
    assert kjobs_cluster.wait_for("Job", "hello", "delete") == {}  # gone at the first look


def test_wait_for_says_what_it_saw_and_refuses_what_it_cannot_read(kjobs_cluster: KjobsCluster) -> None:
    kjobs_cluster.apply(job("slow", "sleep 30"))
    kjobs_cluster.pod_of("slow")
    with pytest.raises(TimeoutError, match=r"Job slow did not reach 'Complete' in 0\.05s: no condition yet; active 1"):
        kjobs_cluster.wait_for("job", "slow", "Complete", timeout=0.05)
    with pytest.raises(ValueError, match="unknown kind 'deployment'"):
        kjobs_cluster.wait_for("deployment", "x", "Available")
    with pytest.raises(ValueError, match="unknown condition 'ready=yes'"):
        kjobs_cluster.wait_for("job", "slow", "ready=yes")
    with pytest.raises(ApiError, match=r'jobs\.batch "nothing" not found'):
        kjobs_cluster.get("job", "nothing")


def test_advance_needs_virtual_time(kjobs_cluster: KjobsCluster) -> None:
    with pytest.raises(TypeError, match="advance\\(\\) needs the simulated runtime"):
        kjobs_cluster.advance(1)


@pytest.mark.kjobs(runtime="simulated")
def test_virtual_time_runs_backoff_and_deadlines_without_waiting_for_them(kjobs_cluster: KjobsCluster) -> None:
    # 10 s then 20 s of pod back-off (the Job controller's default), and a 600 s activeDeadlineSeconds
    start, wall = kjobs_cluster.clock.now(), time.monotonic()
    kjobs_cluster.apply(job("retried", "exit 1", backoffLimit=2))
    kjobs_cluster.apply(job("stuck", "sleep 3600", activeDeadlineSeconds=600))
    failed = kjobs_cluster.wait_for("job", "retried", "Failed")
    assert failed["status"]["failed"] == 3
    assert [c["reason"] for c in failed["status"]["conditions"] if c["type"] == "Failed"] == ["BackoffLimitExceeded"]
    stuck = kjobs_cluster.wait_for("job", "stuck", "Failed")
    assert [c["reason"] for c in stuck["status"]["conditions"] if c["type"] == "Failed"] == ["DeadlineExceeded"]
    assert 600 <= kjobs_cluster.clock.now() - start < 700  # the deadline passed in virtual time ...
    assert time.monotonic() - wall < 30  # ... not in 600 s of wall time (a bound generous for a loaded machine)


@pytest.mark.kjobs(runtime="simulated")
def test_virtual_time_stands_still_until_the_test_waits(
    kjobs_cluster: KjobsCluster, kjobs_api_client: client.ApiClient
) -> None:
    kjobs_cluster.apply(job("minute", "sleep 60"))
    before = kjobs_cluster.clock.now()
    batch, core = client.BatchV1Api(kjobs_api_client), client.CoreV1Api(kjobs_api_client)
    for _ in range(3):  # plain API calls: answered at the instant they arrive
        assert batch.read_namespaced_job("minute", "default").status.succeeded is None
        assert [p.status.phase for p in core.list_namespaced_pod("default").items] in ([], ["Pending"], ["Running"])
    assert kjobs_cluster.clock.now() == before
    # a watch is the test waiting: time runs until the Job completes
    stream = watch.Watch().stream(batch.list_namespaced_job, "default", timeout_seconds=3600)
    for event in stream:
        if event["object"].status.succeeded:
            break
    assert kjobs_cluster.clock.now() - before >= 60


@pytest.mark.kjobs(runtime="simulated", virtual_time="manual")
def test_manual_virtual_time_moves_only_when_the_test_says(kjobs_cluster: KjobsCluster) -> None:
    start = kjobs_cluster.clock.now()
    kjobs_cluster.apply(job("minute", "sleep 60"))
    kjobs_cluster.advance(50)
    assert kjobs_cluster.clock.now() == pytest.approx(start + 50)
    assert kjobs_cluster.pod_of("minute", timeout=1)["status"]["phase"] == "Running"
    assert not kjobs_cluster.get("job", "minute")["status"].get("succeeded")
    kjobs_cluster.advance(30)
    assert kjobs_cluster.wait_for("job", "minute", "Complete", timeout=5)["status"]["succeeded"] == 1


@pytest.fixture(scope="module")
def module_cluster() -> Iterator[KjobsCluster]:
    # kjobs_cluster is function-scoped: a module's own fixture starts its cluster itself, as the README shows
    with KjobsCluster.start(ClusterOptions(runtime="simulated")) as cluster:
        cluster.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"}, "data": {"a": "1"}})
        yield cluster
    assert not cluster.embedded.workdir.exists()  # type: ignore[union-attr]


@pytest.mark.parametrize("run", [1, 2])
def test_a_module_scoped_cluster_is_shared_by_its_tests(module_cluster: KjobsCluster, run: int) -> None:
    assert module_cluster.get("configmap", "shared")["data"] == {"a": "1"}
    module_cluster.apply(job(f"run-{run}", "exit 0"))
    module_cluster.wait_for("job", f"run-{run}", "Complete")
    assert len(module_cluster.objects("job")) == run  # the same cluster: the first test's Job is still there


@pytest.mark.kjobs(runtime="simulated")
def test_a_kubeconfig_naming_the_pki_files_spares_kr8s_its_temporary_files(
    kjobs_cluster: KjobsCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    import kr8s

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where kr8s writes a kubeconfig's inline data
    inline = kr8s.api(kubeconfig=str(kjobs_cluster.kubeconfig))
    assert [n.name for n in kr8s.get("nodes", api=inline)] == ["kjobs-node"]
    assert len(list(tmp_path.iterdir())) == 3  # certificate, key, CA: never removed
    for left in tmp_path.iterdir():
        left.unlink()
    files = kr8s.api(kubeconfig=str(kjobs_cluster.kubeconfig_files))
    assert [n.name for n in kr8s.get("nodes", api=files)] == ["kjobs-node"]
    assert list(tmp_path.iterdir()) == []
    with config.new_client_from_config(config_file=str(kjobs_cluster.kubeconfig_files)) as official:
        assert [n.metadata.name for n in client.CoreV1Api(official).list_node().items] == ["kjobs-node"]
