"""What `kubectl create ... --show-managed-fields` prints: the Update entry SMD's Compare against the kind's Go zero
value gives (docs/managed-fields.md), as on a v1.32 cluster."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
import yaml

from tests.server.test_kubectl import Kubectl, kubectl_on_memory_store

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    with kubectl_on_memory_store(tmp_path_factory.mktemp("kubectl-home")) as k:
        yield k


def _fields(out: str) -> object:
    [entry] = yaml.safe_load(out)["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"]) == ("kubectl-create", "Update")
    return entry["fieldsV1"]


def test_kubectl_create_job(kubectl: Kubectl) -> None:
    out = kubectl.ok("create", "job", "x", "--image=busybox", "-o", "yaml", "--show-managed-fields")
    assert _fields(out) == {
        "f:spec": {
            "f:backoffLimit": {},
            "f:completionMode": {},
            "f:completions": {},
            "f:manualSelector": {},
            "f:parallelism": {},
            "f:podReplacementPolicy": {},
            "f:suspend": {},
            "f:template": {
                "f:metadata": {"f:creationTimestamp": {}},  # Go's zero time, decoded and written as null
                "f:spec": {
                    "f:containers": {
                        'k:{"name":"x"}': {
                            ".": {},
                            "f:image": {},
                            "f:imagePullPolicy": {},
                            "f:name": {},
                            "f:resources": {},
                            "f:terminationMessagePath": {},
                            "f:terminationMessagePolicy": {},
                        }
                    },
                    "f:dnsPolicy": {},
                    "f:restartPolicy": {},
                    "f:schedulerName": {},
                    "f:securityContext": {},
                    "f:terminationGracePeriodSeconds": {},
                },
            },
        }
    }


def test_kubectl_create_configmap(kubectl: Kubectl) -> None:
    out = kubectl.ok("create", "cm", "x", "--from-literal=a=b", "-o", "yaml", "--show-managed-fields")
    assert _fields(out) == {"f:data": {".": {}, "f:a": {}}}
