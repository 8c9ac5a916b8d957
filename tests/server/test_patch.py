"""Strategic merge, JSON merge and JSON patch, table-driven against Kubernetes' documented behaviour."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from kjobs.api.errors import ApiError
from kjobs.server import schema
from kjobs.server.patch import PatchError, apply_patch, json_merge, json_patch, strategic_merge
from tests.server.conftest import job_manifest

JOB = schema.strategies_for(schema.schema_name("batch", "v1", "Job"))
NODE = schema.strategies_for(schema.schema_name("", "v1", "Node"))
POD = schema.strategies_for(schema.schema_name("", "v1", "Pod"))
JOBS = "/apis/batch/v1/namespaces/default/jobs"
GENERIC_422 = "the server rejected our request due to an error in our request"

SMP_CASES = [
    pytest.param(
        JOB,
        {"status": {"conditions": [{"type": "Complete", "status": "True"}]}},
        {"status": {"conditions": [{"type": "Checked", "status": "True", "reason": "R"}]}},
        {
            "status": {
                "conditions": [
                    {"type": "Complete", "status": "True"},
                    {"type": "Checked", "status": "True", "reason": "R"},
                ]
            }
        },
        id="job-conditions-merge-by-type",
    ),
    pytest.param(
        JOB,
        {"status": {"conditions": [{"type": "Complete", "status": "False"}]}},
        {"status": {"conditions": [{"type": "Complete", "status": "True"}]}},
        {"status": {"conditions": [{"type": "Complete", "status": "True"}]}},
        id="job-condition-updated-in-place",
    ),
    pytest.param(
        NODE,
        {"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoSchedule"}]}},
        {"spec": {"taints": [{"key": "b", "effect": "NoSchedule"}]}},
        {"spec": {"taints": [{"key": "b", "effect": "NoSchedule"}]}},
        id="node-taints-replace",
    ),
    pytest.param(
        NODE, {"spec": {"unschedulable": True}}, {"spec": {"unschedulable": None}}, {"spec": {}}, id="null-deletes"
    ),
    pytest.param(
        POD,
        {"spec": {"containers": [{"name": "a", "image": "x", "command": ["a", "b"]}, {"name": "b", "image": "y"}]}},
        {"spec": {"containers": [{"name": "a", "command": ["c"]}]}},
        {"spec": {"containers": [{"name": "a", "image": "x", "command": ["c"]}, {"name": "b", "image": "y"}]}},
        id="containers-merge-by-name-command-replaces",
    ),
    pytest.param(
        POD,
        {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}},
        {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}},
        {"spec": {"containers": [{"name": "b"}]}},
        id="patch-delete-list-element",
    ),
    pytest.param(
        POD,
        {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}},
        {"spec": {"containers": [{"name": "c"}, {"$patch": "replace"}]}},
        {"spec": {"containers": [{"name": "c"}]}},
        id="patch-replace-list",
    ),
    pytest.param(
        POD,
        {"metadata": {"labels": {"a": "1", "b": "2"}}},
        {"metadata": {"labels": {"$patch": "replace", "c": "3"}}},
        {"metadata": {"labels": {"c": "3"}}},
        id="patch-replace-map",
    ),
    pytest.param(
        POD,
        {"metadata": {"finalizers": ["a", "b"]}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}},
        {"metadata": {"finalizers": ["b"]}},
        id="delete-from-primitive-list",
    ),
    pytest.param(
        POD,
        {"metadata": {"finalizers": ["a"]}},
        {"metadata": {"finalizers": ["b", "a"]}},
        {"metadata": {"finalizers": ["a", "b"]}},
        id="primitive-merge-list-union",
    ),
    pytest.param(
        POD,
        {"spec": {"strategy": {"type": "A", "rollingUpdate": {"x": 1}}}},
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "B"}}},
        {"spec": {"strategy": {"type": "B"}}},
        id="retain-keys",
    ),
    pytest.param(
        POD,
        {"spec": {"containers": [{"name": "a"}]}},
        {"$setElementOrder/x": [], "spec": {"$setElementOrder/containers": [{"name": "a"}]}},
        {"spec": {"containers": [{"name": "a"}]}},
        id="set-element-order-of-an-unchanged-list",
    ),
    pytest.param(
        POD,
        {"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}},
        {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]}},
        {"spec": {"containers": [{"name": "b", "image": "y"}, {"name": "a", "image": "x"}]}},
        id="set-element-order-reorders",
    ),
    pytest.param(
        POD,
        {"status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}]}},
        {
            "status": {
                "$setElementOrder/conditions": [{"type": "PodScheduled"}, {"type": "Initialized"}, {"type": "Ready"}],
                "conditions": [{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}],
            }
        },
        {
            "status": {
                "conditions": [
                    {"type": "PodScheduled", "status": "True"},
                    {"type": "Initialized", "status": "True"},
                    {"type": "Ready", "status": "True"},
                ]
            }
        },
        id="set-element-order-with-merged-and-added-elements",
    ),
    pytest.param(
        POD,
        {"spec": {"containers": [{"name": "a"}, {"name": "x"}, {"name": "b"}]}},
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                "containers": [{"name": "b", "image": "2"}],
            }
        },
        {"spec": {"containers": [{"name": "x"}, {"name": "b", "image": "2"}, {"name": "a"}]}},
        id="set-element-order-interleaves-the-servers-own-elements",
    ),
    pytest.param(
        POD,
        {"metadata": {"finalizers": ["a", "b", "c"]}},
        {"metadata": {"$setElementOrder/finalizers": ["c", "a", "b"]}},
        {"metadata": {"finalizers": ["c", "a", "b"]}},
        id="set-element-order-of-primitives",
    ),
    pytest.param(
        POD,
        {"spec": {"containers": [{"name": "a"}, {"name": "x"}, {"name": "b"}]}},
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                "containers": [{"name": "b", "image": "2"}, {"name": "x", "$patch": "delete"}],
            }
        },
        {"spec": {"containers": [{"name": "b", "image": "2"}, {"name": "a"}]}},
        id="set-element-order-beside-other-directives",
    ),
]


def test_a_patch_list_out_of_its_set_element_order_is_refused() -> None:
    original = {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}
    order = [{"name": "a"}, {"name": "b"}]
    patch = {"spec": {"$setElementOrder/containers": order, "containers": [{"name": "b"}, {"name": "a"}]}}
    with pytest.raises(PatchError, match="doesn't match \\$setElementOrder list"):
        strategic_merge(original, patch, strategies=POD)


@pytest.mark.parametrize(("lookup", "original", "patch", "expected"), SMP_CASES)
def test_strategic_merge(lookup: Any, original: Any, patch: Any, expected: Any) -> None:
    before = repr(original)
    assert strategic_merge(original, patch, strategies=lookup) == expected
    assert repr(original) == before  # input untouched


def test_merge_patch_replaces_lists_and_null_deletes() -> None:
    original = {"a": [1, 2], "b": {"c": 1, "d": 2}}
    assert json_merge(original, {"a": [3], "b": {"c": None}}) == {"a": [3], "b": {"d": 2}}


JSON_PATCH_CASES = [
    pytest.param([{"op": "add", "path": "/a/-", "value": 3}], {"a": [1, 2, 3], "b/c": 4}, id="append"),
    pytest.param([{"op": "add", "path": "/a/0", "value": 0}], {"a": [0, 1, 2], "b/c": 4}, id="insert"),
    pytest.param([{"op": "remove", "path": "/a/1"}], {"a": [1], "b/c": 4}, id="remove"),
    pytest.param([{"op": "replace", "path": "/b~1c", "value": 5}], {"a": [1, 2], "b/c": 5}, id="escaped"),
    pytest.param([{"op": "move", "from": "/a", "path": "/m"}], {"b/c": 4, "m": [1, 2]}, id="move"),
    pytest.param([{"op": "copy", "from": "/a/0", "path": "/z"}], {"a": [1, 2], "b/c": 4, "z": 1}, id="copy"),
    pytest.param([{"op": "test", "path": "/b~1c", "value": 4}], {"a": [1, 2], "b/c": 4}, id="test-ok"),
]


@pytest.mark.parametrize(("ops", "expected"), JSON_PATCH_CASES)
def test_json_patch(ops: Any, expected: Any) -> None:
    original = {"a": [1, 2], "b/c": 4}
    assert json_patch(original, ops) == expected
    assert original == {"a": [1, 2], "b/c": 4}


# json-patch v4 (gopkg.in/evanphx/json-patch.v4 v4.12.0, which Kubernetes v1.32's apiserver applies JSON patches
# with) is laxer than RFC 6902, and clients rely on it: `kubectl patch --type=json` replacing a label that is not
# there yet works on a cluster.
JSON_PATCH_V4_CASES = [
    pytest.param(
        [{"op": "replace", "path": "/b/new", "value": 1}],
        {"a": [1, 2], "b": {"c": 4, "new": 1}},
        id="replace-adds-a-member",
    ),
    pytest.param(
        [{"op": "test", "path": "/b/none", "value": None}],
        {"a": [1, 2], "b": {"c": 4}},
        id="test-null-of-a-missing-member",
    ),
    pytest.param(
        [{"op": "test", "path": "/b/none"}], {"a": [1, 2], "b": {"c": 4}}, id="test-without-value-of-a-missing-member"
    ),
    pytest.param([{"op": "remove", "path": "/a/-1"}], {"a": [1], "b": {"c": 4}}, id="remove-negative-index"),
    pytest.param(
        [{"op": "replace", "path": "/a/-2", "value": 9}], {"a": [9, 2], "b": {"c": 4}}, id="replace-negative-index"
    ),
    pytest.param(
        [{"op": "add", "path": "/a/-1", "value": 9}], {"a": [1, 2, 9], "b": {"c": 4}}, id="add-minus-one-appends"
    ),
    pytest.param([{"op": "add", "path": "/a/+01", "value": 9}], {"a": [1, 9, 2], "b": {"c": 4}}, id="atoi-index"),
    pytest.param(
        [{"op": "add", "path": "/b/n"}], {"a": [1, 2], "b": {"c": 4, "n": None}}, id="add-without-value-adds-null"
    ),
    pytest.param(
        [{"op": "copy", "from": "/b/x", "path": "/y"}],
        {"a": [1, 2], "b": {"c": 4}, "y": None},
        id="copy-of-a-missing-member",
    ),
    pytest.param(
        [{"op": "add", "path": "x/z", "value": 1}], {"a": [1, 2], "b": {"c": 4}, "z": 1}, id="first-segment-unread"
    ),
    pytest.param([{"op": "test", "path": "/a/0", "value": 1.0}], None, id="test-int-is-not-float"),
    pytest.param([{"op": "test", "path": "/b/c", "value": True}], None, id="test-bool-is-not-number"),
    pytest.param([{"op": "add", "path": "", "value": {}}], None, id="add-root"),
    pytest.param([{"op": "add", "path": "/a/4", "value": 0}], None, id="add-past-the-end"),
    pytest.param([{"op": "remove", "path": "/a/-3"}], None, id="negative-index-too-far"),
    pytest.param([{"op": "replace", "path": "/a/x", "value": 0}], None, id="index-not-a-number"),
    pytest.param([{"op": "add", "path": "/b/c/d", "value": 0}], None, id="into-a-scalar"),
    pytest.param([{"op": "move", "from": "/b/x", "path": "/y"}], None, id="move-of-a-missing-member"),
    pytest.param([{"path": "/b"}], None, id="no-op"),
    pytest.param([{"op": "add", "value": 1}], None, id="no-path"),
]


@pytest.mark.parametrize(("ops", "expected"), JSON_PATCH_V4_CASES)
def test_json_patch_as_json_patch_v4_applies_it(ops: Any, expected: Any) -> None:
    original = {"a": [1, 2], "b": {"c": 4}}
    if expected is None:
        with pytest.raises(PatchError):
            json_patch(original, ops)
    else:
        assert json_patch(original, ops) == expected
    assert original == {"a": [1, 2], "b": {"c": 4}}


@pytest.mark.parametrize(
    "ops",
    [
        pytest.param([{"op": "test", "path": "/a", "value": 0}], id="test-fails"),
        pytest.param([{"op": "remove", "path": "/nope"}], id="remove-missing"),
        pytest.param([{"op": "add", "path": "/a/9", "value": 0}], id="index-out-of-range"),
        pytest.param([{"op": "frobnicate", "path": "/a"}], id="unknown-op"),
        pytest.param({"op": "add"}, id="not-a-list"),
    ],
)
def test_json_patch_errors(ops: Any) -> None:
    with pytest.raises(PatchError):
        json_patch({"a": 1}, ops)


def test_apply_patch_dispatches_and_reports_errors() -> None:
    assert apply_patch("application/merge-patch+json", {"a": 1}, {"b": 2}) == {"a": 1, "b": 2}
    with pytest.raises(ApiError) as bad:
        apply_patch("application/json-patch+json", {}, [{"op": "remove", "path": "/x"}])
    # handlers/patch.go: NewGenericServerResponse(422, ...), json-patch's text left out, details empty
    assert bad.value.status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": GENERIC_422,
        "reason": "Invalid",
        "details": {},
        "code": 422,
    }
    assert list(bad.value.status())[-2:] == ["details", "code"]  # metav1.Status's field order
    with pytest.raises(ApiError) as unsupported:
        apply_patch("text/plain", {}, {})
    assert unsupported.value.code == 415


@pytest.mark.parametrize(
    ("content_type", "body", "code", "message", "when_ignored"),
    [
        pytest.param(
            "application/json-patch+json",
            {"spec": {"suspend": True}},  # what the JS client sends when not told the merge patch type
            400,
            "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
            id="json-patch-object",
        ),
        pytest.param(
            "application/json-patch+json",
            ["add"],
            400,
            "error decoding patch: json: cannot unmarshal string into Go value of type handlers.jsonPatchOp",
            "json: cannot unmarshal string into Go value of type jsonpatch.Operation",
            id="json-patch-element-not-an-object",
        ),
        pytest.param(
            "application/strategic-merge-patch+json",
            [{"op": "add", "path": "/metadata/labels/a", "value": "b"}],
            400,
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
            id="strategic-merge-list",
        ),
        pytest.param(
            "application/merge-patch+json",
            "suspend",
            400,
            "error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}",
            "Invalid JSON Patch",
            id="merge-string",
        ),
        pytest.param(
            "application/merge-patch+json",
            [],
            400,
            "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}",
            None,  # merged into an array, which does not decode as a Job: 422
            id="merge-list",
        ),
        pytest.param(
            "application/json-patch+json",
            [{"op": "test", "path": "/spec/parallelism", "value": 5}],
            422,
            GENERIC_422,
            GENERIC_422,
            id="json-patch-test-fails",
        ),
    ],
)
def test_malformed_patches_are_bad_requests_and_failing_ones_invalid(
    http: httpx.Client, content_type: str, body: Any, code: int, message: str, when_ignored: str | None
) -> None:
    """A patch that does not decode as its type is 400 BadRequest; one that decodes but cannot be applied is 422.
    Under the default field validation (Warn) the apiserver first decodes JSON and merge patches strictly into its
    own types (`error decoding patch: ...`); with Ignore, json-patch's `DecodePatch` or `MergePatch` decides."""
    assert http.post(JOBS, json=job_manifest("p")).status_code == 201
    for validation, expected in (("", message), ("Strict", message), ("Ignore", when_ignored)):
        response = http.patch(
            f"{JOBS}/p",
            params={"fieldValidation": validation} if validation else {},
            content=orjson.dumps(body),
            headers={"content-type": content_type},
        )
        status = response.json()
        wanted = code if expected is not None else 422
        assert (response.status_code, status["kind"], status["code"]) == (wanted, "Status", wanted), validation
        assert status["reason"] == ("BadRequest" if wanted == 400 else "Invalid")
        if expected is not None:
            assert status["message"] == expected


def test_a_null_json_patch_changes_nothing(http: httpx.Client) -> None:
    created = http.post(JOBS, json=job_manifest("p")).json()
    response = http.patch(f"{JOBS}/p", content=b"null", headers={"content-type": "application/json-patch+json"})
    assert response.status_code == 200
    assert response.json()["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
