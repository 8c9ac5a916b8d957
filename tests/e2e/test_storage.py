"""PersistentVolumeClaims on `kjobs up`, read with a real kubectl, as on a kind cluster: the default class
`standard` (rancher.io/local-path, WaitForFirstConsumer), a Job and its claim applied together end with the claim
Bound to a provisioned hostPath volume under the data directory and the pod run; `describe pvc` shows the
provisioning events; a claim in use is held by `kubernetes.io/pvc-protection` until its pod finishes, and its
volume (reclaim Delete) and directory go with it; a pod naming a missing claim is unschedulable with the
scheduler's message; bad claims get Kubernetes' 422 (docs/storage.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.k8s_up import Cluster, core_cluster

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

JOB_AND_CLAIM = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: ["ReadWriteOnce"]
  resources:
    requests:
      storage: 1Gi
---
apiVersion: batch/v1
kind: Job
metadata:
  name: writer
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: w
        image: busybox
        command: ["sh", "-c", "echo written"]
        volumeMounts:
        - name: data
          mountPath: /data
      volumes:
      - name: data
        persistentVolumeClaim:
          claimName: data
"""

HOLDER = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: held
spec:
  accessModes: ["ReadWriteOnce"]
  resources:
    requests:
      storage: 100Mi
---
apiVersion: v1
kind: Pod
metadata:
  name: holder
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox
    command: ["sleep", "300"]
    volumeMounts:
    - name: d
      mountPath: /d
  volumes:
  - name: d
    persistentVolumeClaim:
      claimName: held
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, Path]]:
    tmp = tmp_path_factory.mktemp("storage")
    with core_cluster(tmp) as up:
        yield up, tmp / "kc.yaml"


def _run(config: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(config.parent), "KUBECONFIG": str(config), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    return subprocess.run(["kubectl", *args], capture_output=True, text=True, env=env, input=stdin, timeout=60)


def _kubectl(config: Path, *args: str, stdin: str | None = None) -> str:
    proc = _run(config, *args, stdin=stdin)
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


def test_the_default_class_is_kinds_standard(cluster: tuple[Cluster, Path]) -> None:
    _, config = cluster
    rows = _kubectl(config, "get", "sc").splitlines()
    assert rows[0].split() == [
        "NAME",
        "PROVISIONER",
        "RECLAIMPOLICY",
        "VOLUMEBINDINGMODE",
        "ALLOWVOLUMEEXPANSION",
        "AGE",
    ]
    assert rows[1].split()[:6] == [
        "standard",
        "(default)",
        "rancher.io/local-path",
        "Delete",
        "WaitForFirstConsumer",
        "false",
    ]
    resources = _kubectl(config, "api-resources", "--no-headers")
    found = {line.split()[0]: line.split() for line in resources.splitlines()}
    assert found["persistentvolumeclaims"][1:] == ["pvc", "v1", "true", "PersistentVolumeClaim"]
    assert found["persistentvolumes"][1:] == ["pv", "v1", "false", "PersistentVolume"]
    assert found["storageclasses"][1:] == ["sc", "storage.k8s.io/v1", "false", "StorageClass"]


def test_a_job_and_its_claim_end_bound_and_run(cluster: tuple[Cluster, Path]) -> None:
    _, config = cluster
    assert _kubectl(config, "apply", "-f", "-", stdin=JOB_AND_CLAIM) == (
        "persistentvolumeclaim/data created\njob.batch/writer created"
    )
    _until(lambda: _kubectl(config, "get", "job", "writer", "-o", "jsonpath={.status.succeeded}"), lambda s: s == "1")
    claim = json.loads(_kubectl(config, "get", "pvc", "data", "-o", "json"))
    volume = claim["spec"]["volumeName"]
    assert volume == f"pvc-{claim['metadata']['uid']}"
    assert claim["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
    assert claim["spec"]["storageClassName"] == "standard"  # DefaultStorageClass
    assert claim["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    annotations = claim["metadata"]["annotations"]
    assert annotations["pv.kubernetes.io/bind-completed"] == "yes"
    assert annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert annotations["volume.kubernetes.io/selected-node"] == "kjobs-node"
    assert annotations["volume.kubernetes.io/storage-provisioner"] == "rancher.io/local-path"
    pv = json.loads(_kubectl(config, "get", "pv", volume, "-o", "json"))
    directory = Path(config.parent / "data" / "storage" / volume)
    assert pv["spec"]["hostPath"] == {"path": str(directory), "type": "DirectoryOrCreate"}
    assert directory.is_dir()
    assert pv["spec"]["claimRef"]["uid"] == claim["metadata"]["uid"]
    assert pv["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    assert pv["status"]["phase"] == "Bound"

    rows = _kubectl(config, "get", "pvc", "data", "-o", "wide").splitlines()
    assert rows[0].split() == [
        "NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE",
        "VOLUMEMODE",
    ]  # fmt: skip
    assert rows[1].split()[:7] == ["data", "Bound", volume, "1Gi", "RWO", "standard", "<unset>"]
    assert rows[1].split()[-1] == "Filesystem"
    rows = _kubectl(config, "get", "pv").splitlines()
    assert rows[0].split() == [
        "NAME", "CAPACITY", "ACCESS", "MODES", "RECLAIM", "POLICY", "STATUS", "CLAIM", "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS", "REASON", "AGE",
    ]  # fmt: skip
    assert rows[1].split()[:8] == [volume, "1Gi", "RWO", "Delete", "Bound", "default/data", "standard", "<unset>"]

    described = _kubectl(config, "describe", "pvc", "data")
    assert "Status:        Bound" in described
    assert "Finalizers:    [kubernetes.io/pvc-protection]" in described
    for reason in ("WaitForFirstConsumer", "ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"):
        assert f"  {reason} " in described, described
    assert "waiting for first consumer to be created before binding" in described
    assert f"Successfully provisioned volume {volume}" in described


def test_a_claim_in_use_is_protected_until_its_pod_is_gone(cluster: tuple[Cluster, Path]) -> None:
    _, config = cluster
    _kubectl(config, "apply", "-f", "-", stdin=HOLDER)
    _until(lambda: _kubectl(config, "get", "pod", "holder", "-o", "jsonpath={.status.phase}"), lambda s: s == "Running")
    volume = _kubectl(config, "get", "pvc", "held", "-o", "jsonpath={.spec.volumeName}")
    directory = config.parent / "data" / "storage" / volume
    assert directory.is_dir()
    _kubectl(config, "delete", "pvc", "held", "--wait=false")
    time.sleep(1.0)  # the protection controller has had time to act; the claim must still be there
    rows = _kubectl(config, "get", "pvc", "held").splitlines()
    assert rows[1].split()[:2] == ["held", "Terminating"]
    _kubectl(config, "delete", "pod", "holder")
    _until(lambda: _run(config, "get", "pvc", "held").stderr, lambda s: "NotFound" in s)
    _until(lambda: _run(config, "get", "pv", volume).stderr, lambda s: "NotFound" in s)
    assert not directory.exists()


def test_a_pod_naming_a_missing_claim_is_unschedulable(cluster: tuple[Cluster, Path]) -> None:
    _, config = cluster
    overrides = {
        "spec": {
            "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "missing"}}],
            "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
        }
    }
    _kubectl(config, "run", "nopvc", "--image=busybox", "--restart=Never", f"--overrides={json.dumps(overrides)}")
    message = _until(
        lambda: _kubectl(config, "get", "pod", "nopvc", "-o", "jsonpath={.status.conditions[0].message}"), bool
    )
    assert message == (
        '0/1 nodes are available: persistentvolumeclaim "missing" not found. preemption: 0/1 nodes are available: '
        "1 Preemption is not helpful for scheduling."
    )
    _kubectl(config, "delete", "pod", "nopvc", "--wait=false")


def test_a_bad_claim_gets_kubernetes_422(cluster: tuple[Cluster, Path]) -> None:
    _, config = cluster
    bad = JOB_AND_CLAIM.split("---")[0].replace("name: data", "name: bad").replace("1Gi", "0")
    proc = _run(config, "apply", "-f", "-", stdin=bad)
    assert proc.returncode == 1
    assert proc.stderr.strip().endswith(
        'PersistentVolumeClaim "bad" is invalid: spec.resources[storage]: Invalid value: "0": must be greater than zero'
    ), proc.stderr
