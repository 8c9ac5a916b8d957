"""The Pod strategy (pkg/registry/core/pod/strategy.go) through kjobs' API service: what a status write keeps and
what a create warns about. Which upstream rows of strategy_test.go are ported: docs/upstream-registry.md."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.server.registry import Resource, lookup
from kjobs.server.service import ApiService
from tests.support import run_on_service

PODS: Resource = lookup("", "v1", "pods")  # type: ignore[assignment]


run = run_on_service


def pod(name: str = "foo", **spec: Any) -> Obj:
    container: Obj = {"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [container], **spec},
    }


@pytest.mark.parametrize("status", [{"phase": "Running"}, None], ids=["without qosClass", "without status"])
def test_status_update_backfills_qos_class(status: Obj | None) -> None:
    """podStatusStrategy.PrepareForUpdate: the QoS class is set on create and immutable; a status write without
    it (old kubelets dropped it for rejected pods) keeps the stored one instead of erasing it."""

    async def body(service: ApiService) -> Obj:
        created = (await service.create(PODS, "default", pod())).obj
        new = copy.deepcopy(created)
        if status is None:
            new.pop("status")
        else:
            new["status"] = status
        return (await service.update(PODS, "default", "foo", new, subresource="status")).obj

    assert run(body)["status"]["qosClass"] == "Burstable"


def test_status_update_keeps_spec_owner_references_and_deletion_timestamp() -> None:
    """podStatusStrategy.PrepareForUpdate: `newPod.Spec = oldPod.Spec`, DeletionTimestamp nil, OwnerReferences
    from the old Pod."""

    async def body(service: ApiService) -> Obj:
        created = pod()
        created["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "u"}]
        old = (await service.create(PODS, "default", created)).obj
        new = copy.deepcopy(old)
        new["spec"]["nodeName"] = "elsewhere"
        new["metadata"]["ownerReferences"] = []
        new["metadata"]["deletionTimestamp"] = "2030-01-01T00:00:00Z"
        new["status"]["phase"] = "Running"
        return (await service.update(PODS, "default", "foo", new, subresource="status")).obj

    written = run(body)
    assert "nodeName" not in written["spec"]
    assert written["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "u"}]
    assert "deletionTimestamp" not in written["metadata"]
    assert written["status"]["phase"] == "Running"


@pytest.mark.parametrize(
    ("name", "spec", "want"),
    [
        pytest.param("foo", {}, [], id="no warnings"),
        pytest.param(
            "foo.bar",
            {},
            [
                "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; "
                "a DNS label is recommended: [must not contain dots]"
            ],
            id="name is no DNS label",
        ),
        pytest.param(
            "foo",
            {"imagePullSecrets": [{"name": "a"}, {"name": "a"}, {"name": ""}]},
            [
                'spec.imagePullSecrets[1].name: duplicate name "a"',
                'spec.imagePullSecrets[2].name: invalid empty name ""',
            ],
            id="imagePullSecrets",
        ),
        pytest.param(
            "foo",
            {"volumes": [{"name": "v", "gitRepo": {"repository": "r"}}], "terminationGracePeriodSeconds": -1},
            [
                "spec.volumes[0].gitRepo: deprecated in v1.11",
                "spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated "
                "as 1",
            ],
            id="deprecated volume and negative grace",
        ),
    ],
)
def test_warnings_on_create(name: str, spec: Obj, want: list[str]) -> None:
    """podStrategy.WarningsOnCreate: the name warning, then `GetWarningsForPod` (pkg/api/pod/warnings.go)."""

    async def body(service: ApiService) -> list[str]:
        return (await service.create(PODS, "default", pod(name, **spec))).warnings

    assert run(body) == want


def test_warnings_on_update_none() -> None:
    """podStrategy.WarningsOnUpdate returns nil: pods are written often, mostly by machines."""

    async def body(service: ApiService) -> list[str]:
        old = (await service.create(PODS, "default", pod("foo.bar"))).obj
        new = copy.deepcopy(old)
        new["spec"]["activeDeadlineSeconds"] = 10
        return (await service.update(PODS, "default", "foo.bar", new)).warnings

    assert run(body) == []
