"""`gotypes.well_typed`, the one-walk answer for a body that decodes, never says "plain" where the decoder's or the
converter's walk would find something or change something: the API server then skips both (docs/performance.md,
stop 37), so every answer a client sees must stay theirs. Checked on a node agent's status patch and on a whole
pod, with every value replaced in turn by values of every JSON kind, within the patch and without it."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from kjobs.api.types import Obj
from kjobs.server import schema
from kjobs.server.gotypes import converter_type_error, first_type_error, well_typed
from kjobs.server.patch import PatchError, strategic_merge

STRATEGIES = schema.strategies_for(schema.schema_name("", "v1", "Pod"))

POD: Obj = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "bench-3-abcde",
        "namespace": "default",
        "uid": "0b4f3c2e-1111-2222-3333-444455556666",
        "labels": {"batch.kubernetes.io/job-completion-index": "3", "job-name": "bench"},
        "annotations": {"batch.kubernetes.io/job-completion-index": "3"},
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "bench", "uid": "u", "controller": True}],
        "finalizers": ["batch.kubernetes.io/job-tracking"],
        "resourceVersion": "123",
        "creationTimestamp": "2026-12-05T02:00:00Z",
    },
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "busybox",
                "command": ["sh", "-c", "true"],
                "resources": {"requests": {"cpu": "100m", "memory": "1Mi"}},
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "volumeMounts": [{"name": "kube-api-access-abcde", "readOnly": True, "mountPath": "/var/run/x"}],
            }
        ],
        "volumes": [
            {
                "name": "kube-api-access-abcde",
                "projected": {"defaultMode": 420, "sources": [{"serviceAccountToken": {"expirationSeconds": 3607}}]},
            }
        ],
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 30,
        "activeDeadlineSeconds": 100,
        "nodeName": "sim-node",
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
        "priority": 0,
        "enableServiceLinks": True,
        "overhead": {"cpu": "1m"},
    },
    "status": {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-12-05T02:00:00Z"}],
        "qosClass": "Burstable",
    },
}

STATUS_PATCH: Obj = {
    "metadata": {"uid": "0b4f3c2e-1111-2222-3333-444455556666"},
    "status": {
        "$setElementOrder/conditions": [{"type": "Ready"}, {"type": "PodScheduled"}],
        "conditions": [
            {
                "type": "Ready",
                "status": "False",
                "lastProbeTime": None,
                "lastTransitionTime": "2026-12-05T02:00:01Z",
                "reason": "PodCompleted",
            }
        ],
        "phase": "Succeeded",
        "hostIPs": [{"ip": "127.0.0.1"}],
        "podIP": "127.0.0.1",
        "startTime": "2026-12-05T02:00:01Z",
        "containerStatuses": [
            {
                "name": "c",
                "state": {"terminated": {"exitCode": 0, "reason": "Completed", "containerID": "sim://abc"}},
                "lastState": {},
                "ready": False,
                "restartCount": 0,
                "image": "busybox",
                "started": False,
                "allocatedResources": {"cpu": "100m"},
                "volumeMounts": [{"name": "kube-api-access-abcde", "mountPath": "/var/run/x", "readOnly": True}],
            }
        ],
    },
}

REPLACEMENTS: list[Any] = [
    "x",
    "12",
    "100m",
    "",
    0,
    7,
    -1,
    2**31,
    2**63,
    -(2**63) - 1,
    2.0,
    1.5,
    float("inf"),
    True,
    False,
    None,
    [],
    ["a"],
    [1],
    {},
    {"a": "b"},
    {"a": 1},
]
"""Values of every JSON kind, each at the edges of the checks: numbers in and out of int32/int64, integral and
fractional floats, strings that parse as quantities and that do not."""


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*path, i))


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    out = copy.deepcopy(value)
    if not path:
        return copy.deepcopy(new)
    holder = out
    for part in path[:-1]:
        holder = holder[part]
    holder[path[-1]] = copy.deepcopy(new)
    return out


def _typed_dump(value: Any) -> bytes:
    """The value with each number's Python type kept (`2.0` and `2` differ): what the decoder's normalizing changes."""
    return repr(value).encode()


def _assert_agrees(body: Obj, patch: Obj | None) -> bool:
    """When `well_typed` says plain, both walks find nothing and change nothing; returns its answer."""
    plain = well_typed(copy.deepcopy(body), "Pod", group="", within=patch)
    if plain:
        before = _typed_dump(body)
        walked = copy.deepcopy(body)
        assert converter_type_error(walked, "Pod", group="", within=patch) is None
        assert first_type_error(walked, "Pod", group="", within=patch) is None
        assert _typed_dump(walked) == before
    return plain


def test_an_agents_status_patch_and_a_whole_pod_are_plain() -> None:
    """The bodies the fast path is for are answered by it (else it would save nothing)."""
    merged = strategic_merge(copy.deepcopy(POD), copy.deepcopy(STATUS_PATCH), strategies=STRATEGIES)
    assert well_typed(merged, "Pod", group="", within=STATUS_PATCH)
    assert well_typed(merged, "Pod", group="")
    assert well_typed(POD, "Pod", group="")
    assert well_typed({"anything": 1}, "NoSuchKind")


@pytest.mark.parametrize("within_patch", [True, False], ids=["within-patch", "whole-body"])
def test_plain_only_where_both_walks_find_nothing(within_patch: bool) -> None:
    """Every value of the patch (and, for the whole body, of the pod) replaced by every value of REPLACEMENTS:
    where `well_typed` is True, neither walk reports or normalizes anything; where either does, it is False."""
    refused = plain = 0
    cases: list[tuple[Obj, Obj | None]] = []
    if within_patch:
        for path in _paths(STATUS_PATCH):
            if len(path) < 2 or path[0] != "status" or str(path[1]).startswith("$"):
                continue  # the patch's own shape: a merge refuses it before any type check
            for new in REPLACEMENTS:
                patch = _replaced(STATUS_PATCH, path, new)
                try:
                    cases.append((strategic_merge(copy.deepcopy(POD), patch, strategies=STRATEGIES), patch))
                except PatchError:
                    continue
    else:
        cases = [(_replaced(POD, path, new), None) for path in _paths(POD) if path for new in REPLACEMENTS]
    for body, patch in cases:
        if _assert_agrees(body, patch):
            plain += 1
        else:
            refused += 1
    assert plain > 100 and refused > 100, (plain, refused)


def test_a_status_patch_of_the_wrong_type_is_still_the_converters_422(http: httpx.Client) -> None:
    """Over HTTP the answers the walks gave are unchanged: a status patch whose exit code is a string is refused
    with the converter's text, one whose restart count is `2.0` is taken and stored as the integer 2."""
    pods = "/api/v1/namespaces/default/pods"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "plain"},
        "spec": {"containers": [{"name": "c", "image": "x"}], "nodeName": "nowhere"},
    }
    assert http.post(pods, json=pod).status_code == 201, "create"
    smp = {"Content-Type": "application/strategic-merge-patch+json"}
    bad = {"status": {"containerStatuses": [{"name": "c", "restartCount": "2", "image": "x", "imageID": "",
                                            "ready": False}]}}  # fmt: skip
    response = http.patch(f"{pods}/plain/status", content=orjson.dumps(bad), headers=smp)
    assert response.status_code == 422, response.text
    assert response.json()["details"]["causes"][0]["message"].startswith("Invalid value: ")
    assert "unrecognized type: int32" in response.json()["message"]
    good = {"status": {"containerStatuses": [{"name": "c", "restartCount": 2.0, "image": "x", "imageID": "",
                                             "ready": False}]}}  # fmt: skip
    response = http.patch(f"{pods}/plain/status", content=orjson.dumps(good), headers=smp)
    assert response.status_code == 200, response.text
    assert b'"restartCount":2,' in response.content
    assert http.delete(f"{pods}/plain").status_code == 200
