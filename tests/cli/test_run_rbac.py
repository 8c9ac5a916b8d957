"""`kjobs run` and `kjobs simulate` with RBAC beside the Job: a manifest that carries the roles and bindings of the
ServiceAccount its pods run as (as many do) runs as written; the objects are created before the Job, namespaced
ones in the Job's namespace unless they name their own, cluster-scoped ones without one."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import yaml

from kjobs.client.local import LocalClient
from kjobs.client.resources import CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, ROLE_BINDINGS, ROLES, SERVICE_ACCOUNTS
from kjobs.cluster import create_configs
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore
from tests.cli.test_run_cli import kjobs

BUNDLE = """\
apiVersion: v1
kind: ServiceAccount
metadata: {name: lister}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list, watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: lister-reads}
subjects: [{kind: ServiceAccount, name: lister, namespace: team}]
roleRef: {kind: Role, name: pod-reader, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: node-reader}
rules: [{apiGroups: [""], resources: [nodes], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: lister-nodes}
subjects: [{kind: ServiceAccount, name: lister, namespace: team}]
roleRef: {kind: ClusterRole, name: node-reader, apiGroup: rbac.authorization.k8s.io}
"""
JOB = """\
---
apiVersion: batch/v1
kind: Job
metadata: {name: lists, namespace: team}
spec:
  template:
    spec:
      serviceAccountName: lister
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: ["sh", "-c", "echo listed"]}]
"""


def test_the_bundle_is_created_where_each_object_belongs() -> None:
    service = ApiService(Storage(MemoryStore()), clock=time.time)
    client = LocalClient(service)
    objects = [o for o in yaml.safe_load_all(BUNDLE) if o]

    async def scenario() -> tuple[list[str], dict[str, object]]:
        created = await create_configs(client, "team", objects)
        got = {
            "sa": (await client.get(SERVICE_ACCOUNTS, "team", "lister"))["metadata"]["namespace"],
            "role": (await client.get(ROLES, "team", "pod-reader"))["rules"],
            "binding": (await client.get(ROLE_BINDINGS, "team", "lister-reads"))["roleRef"]["name"],
            "cluster role": "namespace" in (await client.get(CLUSTER_ROLES, None, "node-reader"))["metadata"],
            "cluster binding": (await client.get(CLUSTER_ROLE_BINDINGS, None, "lister-nodes"))["subjects"],
        }
        return created, got

    created, got = asyncio.run(scenario())
    assert created == ["team"]
    assert got == {
        "sa": "team",
        "role": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}],
        "binding": "pod-reader",
        "cluster role": False,
        "cluster binding": [{"kind": "ServiceAccount", "name": "lister", "namespace": "team"}],
    }


@pytest.mark.e2e
@pytest.mark.parametrize("command", ["run", "simulate"])
def test_a_job_with_its_rbac_runs(tmp_path: Path, command: str) -> None:
    path = tmp_path / "bundle.yaml"
    path.write_text(BUNDLE + JOB)
    result = kjobs(command, str(path), *(["--plain", "--logs"] if command == "run" else []), timeout=60)
    assert result.returncode == 0, result.stderr
    if command == "run":
        assert "Job team/lists: Complete" in result.stdout
        assert "listed" in result.stdout
    else:
        assert "failures by reason: none" in result.stdout


def test_an_invalid_binding_is_refused_with_the_api_servers_words(tmp_path: Path) -> None:
    path = tmp_path / "bundle.yaml"
    path.write_text(BUNDLE.replace("kind: Role, name: pod-reader", "kind: Deployment, name: pod-reader") + JOB)
    result = kjobs("run", str(path), timeout=60)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f'error: {path}: The RoleBinding "lister-reads" is invalid: '
        'roleRef.kind: Unsupported value: "Deployment": supported values: "Role", "ClusterRole"\n'
    )
