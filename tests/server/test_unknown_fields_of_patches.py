"""Strict field validation of a merge patch walks only what the patch names: the stored object it applies to has
no unknown field (every write prunes them), so the findings are those of a walk of the whole patched object, in
the same order — and a user sees the same warnings and errors."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.server import schema
from kjobs.server.patch import apply_patch
from kjobs.server.registry import lookup
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore
from tests.server.conftest import pod_manifest

PODS = lookup("", "v1", "pods")
SMP = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"


def _pod() -> dict[str, Any]:
    pod = pod_manifest("p", labels={"app": "a"})
    spec: Any = pod["spec"]
    spec["containers"] = [{"name": "a", "image": "busybox"}, {"name": "b", "image": "busybox"}]
    pod["status"] = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}],
        "containerStatuses": [
            {"name": "a", "ready": False, "restartCount": 0, "image": "busybox", "imageID": ""},
            {"name": "b", "ready": False, "restartCount": 0, "image": "busybox", "imageID": ""},
        ],
    }
    return pod


CASES: list[tuple[str, str, Any, list[str]]] = [
    (
        "an item merged by key lands at its index in the result",
        SMP,
        {
            "status": {
                "conditions": [{"type": "PodScheduled", "bogus": 1}],
                "containerStatuses": [{"name": "b", "y": 2}],
            }
        },
        ["status.conditions[1].bogus", "status.containerStatuses[0].y"],
    ),
    (
        "directives are consumed, not reported",
        SMP,
        {
            "$setElementOrder/conditions": [{"type": "PodScheduled"}, {"type": "Ready"}],
            "status": {"conditions": [{"type": "Ready", "status": "True", "why": "x"}], "nope": True},
            "metadata": {"$deleteFromPrimitiveList/finalizers": ["f"], "labels": {"b": "c"}, "colour": "red"},
        },
        ["metadata.colour", "status.conditions[0].why", "status.nope"],
    ),
    (
        "a map replaced whole",
        SMP,
        {"spec": {"securityContext": {"$patch": "replace", "runAsUser": 1, "hat": "fedora"}}},
        ["spec.securityContext.hat"],
    ),
    (
        "a JSON merge patch: nulls delete, new keys and whole lists are walked",
        MERGE,
        {"metadata": {"labels": None, "extra": {"deep": 1}}, "status": {"hostIP": None, "weird": [1, {"a": 1}]}},
        ["metadata.extra", "status.weird"],
    ),
    (
        "an unknown field deleted by the patch is not reported",
        MERGE,
        {"status": {"ghost": None, "phase": "Succeeded"}, "kindly": 1},
        ["kindly"],
    ),
    ("nothing unknown", SMP, {"status": {"phase": "Succeeded", "conditions": [{"type": "Ready"}]}}, []),
]


@pytest.mark.parametrize(("why", "content_type", "patch", "expected"), CASES, ids=[c[0] for c in CASES])
def test_walking_what_the_patch_names_finds_what_a_walk_of_the_whole_object_finds(
    why: str, content_type: str, patch: Any, expected: list[str]
) -> None:
    assert PODS is not None
    root = PODS.schema_name
    patched = apply_patch(content_type, _pod(), copy.deepcopy(patch), strategies=schema.strategies_for(root))
    whole = schema.unknown_fields(patched, root)
    within = schema.unknown_fields(patched, root, within=patch)
    assert within == whole
    assert [schema.format_path(p) for p in within] == expected


def _status_patch(field_validation: str) -> Any:
    async def go() -> Any:
        service = ApiService(Storage(MemoryStore()), clock=lambda: 0.0)
        await service.ensure_namespaces()
        assert PODS is not None
        await service.create(PODS, "default", _pod())  # a create resets the status: the agent's write sets it
        await service.patch(PODS, "default", "p", SMP, {"status": _pod()["status"]}, subresource="status")
        body = {"status": {"conditions": [{"type": "PodScheduled", "status": "False", "bogus": 1}]}}
        result = await service.patch(
            PODS, "default", "p", SMP, body, subresource="status", field_validation=field_validation
        )
        return result, service.get(PODS, "default", "p")

    return asyncio.run(go())


def test_a_status_patch_with_an_unknown_field_warns_and_stores_the_rest() -> None:
    result, stored = _status_patch("Warn")
    assert result.warnings == ['unknown field "status.conditions[1].bogus"']
    conditions = stored["status"]["conditions"]
    assert conditions[1] == {
        "type": "PodScheduled",
        "status": "False",
        "lastProbeTime": None,
        "lastTransitionTime": None,
    }


def test_a_strict_status_patch_with_an_unknown_field_is_refused() -> None:
    with pytest.raises(ApiError) as info:
        _status_patch("Strict")
    assert info.value.code == 400
    assert info.value.message == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
        'unknown field "status.conditions[1].bogus"'
    )
