"""Stop 59: a pod update checks its metadata's collections once when `validate_pod` found no error.

`validate_pod_update` runs `validate_object_meta` (through `validate_pod`) and `validate_object_meta_update`,
as Kubernetes' `ValidatePodUpdate` does, and both check the labels, annotations, owner references and
finalizers against the stored metadata. When the first found no error at all, the second is told so
(`collections_passed`) and skips the same check. The oracle is the update validated with that hint ignored:
the same errors, field paths, messages and order, for valid updates and for every kind of bad collection
(whose errors Kubernetes reports twice).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kjobs.api import validation_pod_update as U
from kjobs.api.errors import FieldError
from kjobs.api.validation_meta import validate_object_meta_update

JOB_FINALIZER = "batch.kubernetes.io/job-tracking"


def _stored() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "job-1-abcde",
            "generateName": "job-1-",
            "namespace": "default",
            "uid": "u1",
            "resourceVersion": "7",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"job-name": "job-1", "controller-uid": "c1"},
            "annotations": {"batch.kubernetes.io/job-completion-index": "0"},
            "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": "job-1", "uid": "c1", "controller": True}
            ],
            "finalizers": [JOB_FINALIZER],
        },
        "spec": {"containers": [{"name": "main", "image": "busybox"}], "restartPolicy": "Never"},
    }


CHANGES: dict[str, tuple[str, Any]] = {
    "finalizer removed": ("finalizers", []),
    "finalizers dropped": ("finalizers", None),
    "bad finalizer": ("finalizers", ["not a name!"]),
    "finalizers not a list": ("finalizers", "x"),
    "orphan and foreground": ("finalizers", ["orphan", "foregroundDeletion"]),
    "bad label": ("labels", {"bad key!": "v"}),
    "bad label value": ("labels", {"job-name": "-x-"}),
    "labels not a map": ("labels", ["x"]),
    "bad annotation key": ("annotations", {"bad key!": "v"}),
    "bad owner reference": ("ownerReferences", [{"apiVersion": "batch/v1", "kind": "Job"}]),
    "two controllers": (
        "ownerReferences",
        [
            {"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1", "controller": True},
            {"apiVersion": "v1", "kind": "B", "name": "b", "uid": "2", "controller": True},
        ],
    ),
    "new label": ("labels", {"job-name": "job-1", "controller-uid": "c1", "extra": "y"}),
    "bad name changed": ("name", "Bad_Name"),
    "no resourceVersion": ("resourceVersion", None),
}


def _update(key: str, value: Any, *, shared: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """An update of the stored pod setting `key`; `shared`: the rest of the metadata is the stored one's own
    objects, as a copy-on-write patch leaves it."""
    old = _stored()
    pod = dict(old) if shared else copy.deepcopy(old)
    pod["metadata"] = dict(old["metadata"]) if shared else pod["metadata"]
    if value is None:
        pod["metadata"].pop(key, None)
    else:
        pod["metadata"][key] = value
    return pod, old


def _without_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    def unhinted(meta: Any, old: Any, *, path: str = "metadata", collections_passed: bool = False) -> list[FieldError]:
        return validate_object_meta_update(meta, old, path=path)

    monkeypatch.setattr(U, "validate_object_meta_update", unhinted)


def _shown(errors: list[FieldError]) -> list[tuple[Any, str, str, str]]:
    return [(e.type.value, e.field, e.detail, str(e)) for e in errors]


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("case", sorted(CHANGES))
def test_pod_update_errors_same_with_and_without_the_hint(
    case: str, shared: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    key, value = CHANGES[case]
    pod, old = _update(key, value, shared=shared)
    hinted = _shown(U.validate_pod_update(pod, old))
    _without_hint(monkeypatch)
    pod, old = _update(key, value, shared=shared)
    assert hinted == _shown(U.validate_pod_update(pod, old))


def test_bad_collection_reported_twice_as_kubernetes_does() -> None:
    pod, old = _update("finalizers", ["not a name!"], shared=True)
    fields = [e.field for e in U.validate_pod_update(pod, old)]
    assert fields.count("metadata.finalizers") == 2


def test_finalizer_removal_is_valid() -> None:
    pod, old = _update("finalizers", [], shared=True)
    assert U.validate_pod_update(pod, old) == []
