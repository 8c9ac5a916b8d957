"""Pod updates: only images, a lowered activeDeadlineSeconds, added tolerations and a negative grace set to 1."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from kjobs.api.defaults import default_pod
from kjobs.api.errors import ApiError, invalid
from kjobs.api.validation import validate_pod_update
from kjobs.client.resources import PODS
from kjobs.clock import FakeClock
from tests.support import local_api

BASE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "uid": "u", "resourceVersion": "1"},
    "spec": {
        "restartPolicy": "Never",
        "activeDeadlineSeconds": 100,
        "tolerations": [{"key": "a", "operator": "Exists"}],
        "schedulingGates": [{"name": "example.com/wait"}],
        "containers": [{"name": "main", "image": "busybox:1", "env": [{"name": "X", "value": "1"}]}],
    },
}


def updated(change: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    old = default_pod(BASE)
    new = copy.deepcopy(old)
    change(new["spec"])
    return new, old


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda s: s["containers"][0].update(image="busybox:2"), id="image"),
        pytest.param(lambda s: s.update(activeDeadlineSeconds=50), id="lower-deadline"),
        pytest.param(lambda s: s["tolerations"].append({"key": "b", "operator": "Exists"}), id="add-toleration"),
        pytest.param(lambda s: s.update(schedulingGates=[]), id="remove-scheduling-gates"),
    ],
)
def test_allowed_changes(change: Any) -> None:
    assert validate_pod_update(*updated(change)) == []


def test_other_spec_changes_are_forbidden_with_kubernetes_text() -> None:
    errors = validate_pod_update(*updated(lambda s: s["containers"][0]["env"][0].update(value="2")))
    assert [(e.field, e.type.value) for e in errors] == [("spec", "FieldValueForbidden")]
    assert errors[0].detail.startswith(
        "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
        "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"
    )
    assert errors[0].detail.endswith("spec.containers[0].env[0].value")


@pytest.mark.parametrize(
    ("deadline", "detail"),
    [
        (200, "must be less than or equal to previous value"),
        (None, "must not update from a positive integer to nil value"),
    ],
)
def test_active_deadline_rules(deadline: int | None, detail: str) -> None:
    def change(spec: dict[str, Any]) -> None:
        if deadline is None:
            del spec["activeDeadlineSeconds"]
        else:
            spec["activeDeadlineSeconds"] = deadline

    errors = validate_pod_update(*updated(change))
    assert [(e.field, e.detail) for e in errors] == [("spec.activeDeadlineSeconds", detail)]


def test_removing_a_toleration_is_forbidden() -> None:
    """`validateOnlyAddedTolerations`: its own error on spec.tolerations, not the general spec one."""
    errors = validate_pod_update(*updated(lambda s: s.update(tolerations=[])))
    assert [(e.field, e.type.value, e.detail) for e in errors] == [
        (
            "spec.tolerations",
            "FieldValueForbidden",
            "existing toleration can not be modified except its tolerationSeconds",
        )
    ]


def test_changing_an_existing_tolerations_seconds_is_allowed() -> None:
    """An existing toleration may get another `tolerationSeconds` (upstream's taint eviction test changes one)."""
    old = {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 1}

    def change(spec: dict[str, Any]) -> None:
        spec["tolerations"] = [dict(old, tolerationSeconds=100)]

    def start(spec: dict[str, Any]) -> None:
        spec["tolerations"] = [old]

    before, _ = updated(start)
    after = copy.deepcopy(before)
    change(after["spec"])
    assert validate_pod_update(after, before) == []
    after["spec"]["tolerations"][0]["key"] = "other"
    assert [e.field for e in validate_pod_update(after, before)] == ["spec.tolerations"]


def test_the_api_refuses_a_forbidden_pod_update() -> None:
    async def scenario() -> None:
        client = await local_api(FakeClock())
        body = copy.deepcopy(BASE)
        del body["metadata"]["uid"], body["metadata"]["resourceVersion"]
        pod = await client.create(PODS, "default", body)
        pod["spec"]["containers"][0]["env"][0]["value"] = "2"
        with pytest.raises(ApiError) as refused:
            await client.update(PODS, "default", pod)
        assert refused.value.code == 422
        assert (
            'Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than' in refused.value.message
        )
        fresh = await client.get(PODS, "default", "p")
        fresh["spec"]["containers"][0]["image"] = "busybox:2"
        assert (await client.update(PODS, "default", fresh))["spec"]["containers"][0]["image"] == "busybox:2"

    asyncio.run(scenario())


def test_metadata_an_update_shares_with_the_stored_pod_is_not_walked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy-on-write patch of the finalizers shares the stored labels: only what it changed is validated."""
    from kjobs.api import validation_meta

    walked: list[dict[str, str] | None] = []
    real = validation_meta.validate_labels

    def counting(labels: dict[str, str] | None, path: str, errs: list[Any]) -> None:
        walked.append(labels)
        real(labels, path, errs)

    monkeypatch.setattr(validation_meta, "validate_labels", counting)
    old = default_pod(BASE)
    old["metadata"] = {**old["metadata"], "labels": {"app": "x"}, "finalizers": ["example.com/keep"]}
    patched = {**old, "metadata": {**old["metadata"], "finalizers": []}}
    assert validate_pod_update(patched, old) == []
    assert walked == []
    relabelled = {**old, "metadata": {**old["metadata"], "labels": {"app": "-bad-"}}}
    errors = validate_pod_update(relabelled, old)
    assert [e.field for e in errors] == ["metadata.labels", "metadata.labels"]  # as metadata, and as updated
    assert walked and all(labels == {"app": "-bad-"} for labels in walked)
    status = invalid("Pod", "p", errors)
    assert len(status.details["causes"]) == 2  # every error is a cause; the message says it once
    assert status.message == f'Pod "p" is invalid: {errors[0]}'
