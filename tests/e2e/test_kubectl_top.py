"""`kubectl top pod` and `kubectl top node` on `kjobs up` (docs/kubectl-top.md): the Metrics API answers with the
real CPU and memory of a Job's running processes and of the machine."""

from __future__ import annotations

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

BURN = (
    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: burn\nspec:\n  template:\n    metadata:\n"
    "      labels:\n        app: burn\n    spec:\n      restartPolicy: Never\n      containers:\n"
    "      - name: burner\n        image: busybox\n        command: ['sh', '-c', 'end=$(($(date +%s)+20)); "
    "while [ $(date +%s) -lt $end ]; do :; done']\n"
)


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("kubectl-top")) as kubectl:
        yield kubectl


def _millicores(text: str) -> int:
    return int(text[:-1]) if text.endswith("m") else int(text) * 1000


def test_top_pod_and_node_show_a_busy_jobs_usage(up: Up) -> None:
    # Before: `error: Metrics API not available`. A pod running a busy loop is listed with its CPU (about a core)
    # and its memory; `--containers` names the container; the node is the machine.
    assert up.ok("apply", "-f", "-", stdin=BURN) == "job.batch/burn created"
    pod = _until(
        lambda: up.ok("get", "pods", "-l", "app=burn", "--field-selector=status.phase=Running", "-o", "name") or None,
        "the burning pod to run",
    ).removeprefix("pod/")

    def busy() -> list[str] | None:
        code, out = up("top", "pod", "-l", "app=burn", "--no-headers")
        row = out.split()
        return row if code == 0 and row and row[0] == pod and _millicores(row[1]) >= 100 else None

    row = _until(busy, "the pod's CPU in kubectl top", timeout=15)
    assert re.fullmatch(r"\d+Mi", row[2]) and int(row[2][:-2]) > 0, row
    header, line = up.ok("top", "pod", pod, "--containers").splitlines()
    assert header.split() == ["POD", "NAME", "CPU(cores)", "MEMORY(bytes)"]
    assert line.split()[:2] == [pod, "burner"]
    assert pod in up.ok("top", "pod", "-A", "--no-headers")
    nodes = up.ok("top", "node").splitlines()
    assert nodes[0].split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    assert nodes[1].split()[0] == "kjobs-node", nodes
    up.ok("delete", "job", "burn", "--wait=false")


def test_top_of_a_pod_not_running_is_not_found(up: Up) -> None:
    # As metrics-server: only Running pods have metrics; a GET of another pod is 404, which kubectl prints.
    manifest = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: nowhere\nspec:\n  nodeSelector:\n    no: such-node\n"
        "  containers:\n  - name: main\n    image: busybox\n    command: ['true']\n"
    )
    assert up.ok("apply", "-f", "-", stdin=manifest) == "pod/nowhere created"
    code, out = up("top", "pod", "nowhere")
    assert code == 1 and out == 'Error from server (NotFound): pods.metrics.k8s.io "default/nowhere" not found', out
    code, out = up("top", "pod", "-l", "app=none")
    assert code == 0 and out == "No resources found in default namespace.", out
    # A list with pods but no metrics for any (also what pods of the simulated runtime give): kubectl's own words.
    code, out = up("top", "pod", "--field-selector", "metadata.name=nowhere")
    assert code == 1 and out == "error: metrics not available yet", out
    up.ok("delete", "pod", "nowhere", "--wait=false")
