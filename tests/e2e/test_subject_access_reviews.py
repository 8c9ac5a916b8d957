"""SubjectAccessReview, LocalSubjectAccessReview and the bootstrap policy on `kjobs up`, with the real kubectl:
discovery lists the reviews as a cluster does, `kubectl create -f sar.yaml -o yaml` answers with RBAC's reason,
a controller's ServiceAccount holds its `system:controller:*` role, and a restart on the same data directory puts
back the bootstrap objects a user stripped or deleted (but not one annotated `autoupdate: "false"`)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.e2e.test_config_objects import Up
from tests.server.test_up import _up
from tests.support import free_port

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

SAR = """\
apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: jane
  resourceAttributes:
    namespace: default
    verb: list
    resource: pods
"""


@contextmanager
def _kjobs_up(tmp: Path, port: int) -> Iterator[Up]:
    config = tmp / "kc.yaml"
    args = ("--port", str(port), "--data-dir", str(tmp / "data"), "--kubeconfig", str(config))
    with _up(tmp, *args) as (proc, line, _elapsed):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        home = tmp / "kubectl-home"
        home.mkdir(exist_ok=True)
        yield Up(config, home)


def test_reviews_of_another_user_with_kubectl(tmp_path: Path) -> None:
    with _kjobs_up(tmp_path, free_port()) as kubectl:
        listed = kubectl.ok("api-resources", "--api-group=authorization.k8s.io", "-o", "wide")
        rows = {re.split(r"\s{2,}", line)[0]: line for line in listed.splitlines()[1:]}
        assert set(rows) == {
            "localsubjectaccessreviews",
            "selfsubjectaccessreviews",
            "selfsubjectrulesreviews",
            "subjectaccessreviews",
        }
        assert re.split(r"\s{2,}", rows["localsubjectaccessreviews"])[2:5] == [
            "true",
            "LocalSubjectAccessReview",
            "create",
        ]
        assert re.split(r"\s{2,}", rows["subjectaccessreviews"])[2:5] == ["false", "SubjectAccessReview", "create"]

        denied = json.loads(kubectl.ok("create", "--validate=false", "-f", "-", "-o", "json", stdin=SAR))
        assert denied["status"] == {"allowed": False}
        kubectl.ok("create", "clusterrolebinding", "jane-admin", "--clusterrole=cluster-admin", "--user=jane")
        allowed = kubectl.ok("create", "--validate=false", "-f", "-", "-o", "yaml", stdin=SAR)
        assert "  allowed: true\n" in allowed
        assert (
            '  reason: \'RBAC: allowed by ClusterRoleBinding "jane-admin" of ClusterRole "cluster-admin"\n'
            '    to User "jane"\''
        ) in allowed
        job_controller = "--as=system:serviceaccount:kube-system:job-controller"
        assert kubectl.ok("auth", "can-i", "patch", "jobs.batch", "-A", job_controller) == "yes"
        assert kubectl("auth", "can-i", "delete", "configmaps", job_controller)[1] == "no"


def test_a_restart_reconciles_the_bootstrap_policy(tmp_path: Path) -> None:
    port = free_port()
    role = "system:controller:job-controller"
    with _kjobs_up(tmp_path, port) as kubectl:
        assert len(kubectl.ok("get", "clusterroles", "-o", "name").splitlines()) == 69
        stripped = '{"rules": [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get"]}]}'
        kubectl.ok("patch", "clusterrole", role, "--type=merge", "-p", stripped)
        kubectl.ok(
            "annotate",
            "--overwrite",
            "clusterrole",
            "system:kube-dns",
            "rbac.authorization.kubernetes.io/autoupdate=false",
        )
        kubectl.ok("patch", "clusterrole", "system:kube-dns", "--type=merge", "-p", '{"rules": []}')
        kubectl.ok("delete", "clusterrolebinding", "system:discovery")
        kubectl.ok("delete", "role", "-n", "kube-system", "extension-apiserver-authentication-reader")
    with _kjobs_up(tmp_path, port) as kubectl:
        rules = json.loads(kubectl.ok("get", "clusterrole", role, "-o", "json"))["rules"]
        assert rules[0] == {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get"]}
        assert {"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]} in rules
        assert json.loads(kubectl.ok("get", "clusterrole", "system:kube-dns", "-o", "json")).get("rules") in (None, [])
        assert kubectl.ok("get", "clusterrolebinding", "system:discovery", "-o", "name") == (
            "clusterrolebinding.rbac.authorization.k8s.io/system:discovery"
        )
        kubectl.ok("get", "role", "-n", "kube-system", "extension-apiserver-authentication-reader")
