"""trial34 (docs/trial-stop34.md): an Indexed Job whose pods share one WaitForFirstConsumer claim, on
`kjobs up --nodes 2`. The scheduler's VolumeBinding must send every pod where the claim's volume is being
provisioned (binder.go `FindPodVolumes`: a node other than the claim's `volume.kubernetes.io/selected-node` is
skipped), so the Job completes with all three indexes written to the one volume — before the fix a second pod
placed on the other node overwrote `selected-node`, and the claim never bound."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.k8s_up import core_cluster

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

SHARED = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: shared
spec:
  accessModes: ["ReadWriteOnce"]
  resources:
    requests:
      storage: 1Gi
---
apiVersion: batch/v1
kind: Job
metadata:
  name: indexes
spec:
  completionMode: Indexed
  completions: 3
  parallelism: 3
  template:
    spec:
      restartPolicy: Never
      topologySpreadConstraints:  # a soft wish to spread, which the claim's selected node must win over
      - maxSkew: 1
        topologyKey: kubernetes.io/hostname
        whenUnsatisfiable: ScheduleAnyway
        labelSelector:
          matchLabels:
            job-name: indexes
      containers:
      - name: c
        image: busybox
        command: ["sh", "-c", "echo $JOB_COMPLETION_INDEX >> /work/out"]
        volumeMounts:
        - name: w
          mountPath: /work
      volumes:
      - name: w
        persistentVolumeClaim:
          claimName: shared
"""


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("trial34")
    with core_cluster(tmp, "--nodes", "2", "--backoff", "1"):
        yield tmp / "kc.yaml"


def _kubectl(config: Path, *args: str, stdin: str | None = None) -> str:
    env = {"HOME": str(config.parent), "KUBECONFIG": str(config), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    proc = subprocess.run(["kubectl", *args], capture_output=True, text=True, env=env, input=stdin, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.rstrip()


def _until(check: Callable[[], str], want: Callable[[str], bool], seconds: float = 25.0) -> str:
    deadline = time.monotonic() + seconds
    out = check()
    while not want(out) and time.monotonic() < deadline:
        time.sleep(0.2)
        out = check()
    assert want(out), out
    return out


def test_pods_sharing_a_wait_for_first_consumer_claim_go_to_its_selected_node(config: Path) -> None:
    _kubectl(config, "apply", "-f", "-", stdin=SHARED)
    _until(lambda: _kubectl(config, "get", "job", "indexes", "-o", "jsonpath={.status.succeeded}"), lambda s: s == "3")
    pods = json.loads(_kubectl(config, "get", "pods", "-l", "job-name=indexes", "-o", "json"))["items"]
    claim = json.loads(_kubectl(config, "get", "pvc", "shared", "-o", "json"))
    selected = claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
    assert {p["spec"]["nodeName"] for p in pods} == {selected}
    assert claim["status"]["phase"] == "Bound"
    pv = json.loads(_kubectl(config, "get", "pv", claim["spec"]["volumeName"], "-o", "json"))
    out = Path(pv["spec"]["hostPath"]["path"]) / "out"
    assert sorted(out.read_text().split()) == ["0", "1", "2"]


def _pod(name: str, prefers: str) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  restartPolicy: Never
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        preference:
          matchExpressions:
          - {{key: kubernetes.io/hostname, operator: In, values: [{prefers}]}}
  containers:
  - name: c
    image: busybox
    command: ["sh", "-c", "echo {name} >> /pair/out"]
    volumeMounts:
    - name: p
      mountPath: /pair
  volumes:
  - name: p
    persistentVolumeClaim:
      claimName: pair
"""


def test_a_pod_preferring_another_node_follows_its_claims_selected_node(config: Path) -> None:
    """Two pods share a claim, each preferring another node: the second must go where the first sent the
    claim's volume (VolumeBinding's Filter refuses the other node with `node(s) didn't find available persistent
    volumes to bind`), whatever its preference, and the claim is provisioned there and Bound."""
    claim_yaml = SHARED.split("---")[0].replace("name: shared", "name: pair")
    manifest = "---\n".join((claim_yaml, _pod("left", "kjobs-node"), _pod("right", "kjobs-node-2")))
    _kubectl(config, "apply", "-f", "-", stdin=manifest)
    for name in ("left", "right"):
        _until(
            lambda name=name: _kubectl(config, "get", "pod", name, "-o", "jsonpath={.status.phase}"),  # type: ignore[misc]
            lambda s: s == "Succeeded",
        )
    claim = json.loads(_kubectl(config, "get", "pvc", "pair", "-o", "json"))
    selected = claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
    nodes = {_kubectl(config, "get", "pod", n, "-o", "jsonpath={.spec.nodeName}") for n in ("left", "right")}
    assert nodes == {selected}
    pv = json.loads(_kubectl(config, "get", "pv", claim["spec"]["volumeName"], "-o", "json"))
    assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == [selected]
