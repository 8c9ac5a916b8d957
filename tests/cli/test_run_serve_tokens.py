"""`kjobs run --serve`: the run's pods reach the API it serves as their ServiceAccount, as on `kjobs up` — a Job
whose pod uses the official Python client's `load_incluster_config()` reads its own Job (a Role in the manifest
lets its account), and is refused what the Role does not grant."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from kjobs.node.process_runtime import mounting_enabled
from tests.cli.test_run_cli import kjobs

pytestmark = [pytest.mark.e2e]

SCRIPT = """
import os
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_incluster_config()
print("host", os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"])
job = client.BatchV1Api().read_namespaced_job("reads-itself", "team")
print("job", job.metadata.name, job.spec.template.spec.service_account_name)
try:
    client.CoreV1Api().list_namespaced_secret("team")
except ApiException as exc:
    print("secrets refused", exc.status)
"""

BUNDLE = """\
apiVersion: v1
kind: ServiceAccount
metadata: {name: reader}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: job-reader}
rules: [{apiGroups: [batch], resources: [jobs], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader-reads-jobs}
subjects: [{kind: ServiceAccount, name: reader, namespace: team}]
roleRef: {kind: Role, name: job-reader, apiGroup: rbac.authorization.k8s.io}
"""


@pytest.mark.skipif(not mounting_enabled(), reason="mount namespaces are not available here")
def test_a_served_runs_pod_reads_its_own_job_in_cluster(tmp_path: Path) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "reads-itself", "namespace": "team"},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "serviceAccountName": "reader",
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "python", "command": [sys.executable, "-c", SCRIPT]}],
                }
            },
        },
    }
    path = tmp_path / "job.yaml"
    path.write_text(BUNDLE + "---\n" + yaml.safe_dump(json.loads(json.dumps(job))))
    result = kjobs("run", str(path), "--serve", "0", "--plain", "--logs", timeout=90)
    assert result.returncode == 0, result.stdout + result.stderr
    served = next(line for line in result.stdout.splitlines() if line.startswith("serving the API on "))
    port = served.split("https://127.0.0.1:")[1].split(";")[0]
    assert f"host 127.0.0.1 {port}" in result.stdout
    assert "job reads-itself reader" in result.stdout
    assert "secrets refused 403" in result.stdout
    assert "Job team/reads-itself: Complete" in result.stdout


PEEK = """
kubeconfig={kubeconfig}
echo "kubeconfig: [$(cat $kubeconfig)]"
echo "token: $(wc -c < /var/run/secrets/kubernetes.io/serviceaccount/token | tr -d ' ')"
"""


@pytest.mark.skipif(not mounting_enabled(), reason="mount namespaces are not available here")
def test_a_served_runs_pod_sees_neither_its_kubeconfig_nor_its_pki(tmp_path: Path) -> None:
    """The run's admin credentials (its PKI directory and the kubeconfig it writes) are hidden from its pods'
    mount namespaces (docs/security.md); the pod's own token is there."""
    kubeconfig = tmp_path / "run-kc.yaml"
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "peek"},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "main", "image": "x", "command": ["sh", "-c", PEEK.format(kubeconfig=kubeconfig)]}
                    ],
                }
            },
        },
    }
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    result = kjobs("run", str(path), "--serve", "0", "--kubeconfig", str(kubeconfig), "--plain", "--logs", timeout=90)
    assert result.returncode == 0, result.stdout + result.stderr
    logged = [line.split("] ", 1)[1] for line in result.stdout.splitlines() if line.startswith("[peek-")]
    assert logged[0] == "kubeconfig: []"
    assert logged[1].startswith("token: ") and int(logged[1].split()[-1]) > 100
    assert "client-key-data" in kubeconfig.read_text()
