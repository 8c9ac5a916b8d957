"""`kubectl apply --server-side` merges lists by their list type, as on a v1.32 cluster (structured-merge-diff
typed/merge.go; docs/leftovers-stop38.md): a Job's `status.conditions` applied through `--subresource=status`
replace the list, and a CronJob container's `ports` are keyed by port and protocol."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator

import pytest

from tests.server.test_kubectl import Kubectl, kubectl_on_memory_store

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    with kubectl_on_memory_store(tmp_path_factory.mktemp("kubectl-home")) as k:
        yield k


def _job(conditions: list[dict[str, str]] | None = None) -> dict[str, object]:
    job: dict[str, object] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "st", "namespace": "default"},
        "spec": {
            "suspend": True,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox:1.36"}]}},
        },
    }
    if conditions is not None:
        job["status"] = {"conditions": conditions}
    return job


def _conditions(out: str) -> list[tuple[str, str]]:
    return [(c["type"], c["status"]) for c in json.loads(out)["status"]["conditions"]]


def test_applied_job_status_conditions_replace_the_list(kubectl: Kubectl) -> None:
    kubectl.ok("create", "-f", kubectl.file("job.yaml", _job()))
    ssa = ("apply", "--server-side", "--subresource=status", "-o", "json")
    first = [{"type": "Suspended", "status": "True"}, {"type": "Example", "status": "False"}]
    out = kubectl.ok(*ssa, "--field-manager=first", "-f", kubectl.file("s1.yaml", _job(first)))
    assert _conditions(out) == [("Suspended", "True"), ("Example", "False")]
    second = kubectl.file("s2.yaml", _job([{"type": "Example", "status": "True"}]))
    refused = kubectl.bad(*ssa, "--field-manager=second", "-f", second)
    assert 'conflict with "first" with subresource "status": .status.conditions' in refused
    out = kubectl.ok(*ssa, "--field-manager=second", "--force-conflicts", "-f", second)
    assert _conditions(out) == [("Example", "True")]


def _cronjob(ports: list[dict[str, object]]) -> dict[str, object]:
    container = {"name": "main", "image": "busybox:1.36", "ports": ports}
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "cj", "namespace": "default"},
        "spec": {
            "schedule": "@hourly",
            "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [container]}}}},
        },
    }


def test_two_appliers_ports_of_one_number_are_two_ports(kubectl: Kubectl) -> None:
    ssa = ("apply", "--server-side", "-o", "json")
    tcp = kubectl.file("tcp.yaml", _cronjob([{"containerPort": 53, "protocol": "TCP", "name": "dns-tcp"}]))
    kubectl.ok(*ssa, "--field-manager=tcp", "-f", tcp)
    udp = kubectl.file("udp.yaml", _cronjob([{"containerPort": 53, "protocol": "UDP", "name": "dns"}]))
    out = json.loads(kubectl.ok(*ssa, "--field-manager=udp", "-f", udp))
    (container,) = out["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert container["ports"] == [
        {"containerPort": 53, "protocol": "TCP", "name": "dns-tcp"},
        {"containerPort": 53, "protocol": "UDP", "name": "dns"},
    ]
