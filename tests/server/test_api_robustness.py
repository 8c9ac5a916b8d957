"""Hostile requests against the REST surface, in process (ASGI, no sockets): every refusal is a Kubernetes `Status`
with the code kube-apiserver gives, never a 500; a refused request writes nothing; the server keeps serving.

See docs/api-robustness.md for what was tried and what kube-apiserver answers.
"""

from __future__ import annotations

import asyncio
import base64
import gc
import logging
import os
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjobs.server.app import App, create_app
from kjobs.server.auth import Authenticator
from kjobs.store import MemoryStore
from tests.server.conftest import job_manifest, pod_manifest

TOKEN = "s3cret"
PODS = "/api/v1/namespaces/default/pods"
JOBS = "/apis/batch/v1/namespaces/default/jobs"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


class Asgi:
    """An app over a MemoryStore, called in process through httpx's ASGI transport on a loop of its own."""

    def __init__(self, *, token: str | None = None) -> None:
        self.store = MemoryStore()
        authenticator = Authenticator(token=token, client_certs=False) if token else None
        self.app: App = create_app(self.store, authenticator=authenticator, resource_version_wait=0.05)
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self.app.startup())
        self.client = httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url="http://kjobs")
        self.auth = {"authorization": f"Bearer {token}"} if token else {}

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        headers = {**self.auth, **(kwargs.pop("headers", None) or {})}
        call = self.client.request(method, url, headers=headers, timeout=30, **kwargs)
        return self.loop.run_until_complete(asyncio.wait_for(call, 30))

    def close(self) -> None:
        self.loop.run_until_complete(self.client.aclose())
        self.loop.close()
        self.store.close()


@pytest.fixture
def api() -> Iterator[Asgi]:
    server = Asgi()
    server.request("POST", JOBS, json=job_manifest("j"))
    server.request("POST", PODS, json=pod_manifest("p", node="n"))
    yield server
    server.close()


def _status(response: httpx.Response, code: int, reason: str) -> dict[str, Any]:
    assert response.status_code == code, response.text
    body: dict[str, Any] = response.json()
    assert (body["kind"], body["code"], body["reason"]) == ("Status", code, reason), body
    return body


# ------------------------------------------------------------------------------------------- DeleteOptions


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"preconditions": 5},
            "json: cannot unmarshal number into Go struct field DeleteOptions.preconditions of type v1.Preconditions",
        ),
        (
            {"preconditions": {"uid": 7}},
            "json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid of type types.UID",
        ),
        (
            {"gracePeriodSeconds": 1.5},
            "json: cannot unmarshal number 1.5 into Go struct field DeleteOptions.gracePeriodSeconds of type int64",
        ),
        (
            {"gracePeriodSeconds": 2**63},
            f"json: cannot unmarshal number {2**63} into Go struct field "
            "DeleteOptions.gracePeriodSeconds of type int64",
        ),
        ({"dryRun": "All"}, "json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string"),
    ],
)
def test_delete_options_of_the_wrong_type_are_400_and_delete_nothing(
    api: Asgi, body: dict[str, Any], message: str
) -> None:
    response = api.request("DELETE", PODS + "/p", content=orjson.dumps(body))
    assert _status(response, 400, "BadRequest")["message"] == message
    assert api.request("GET", PODS + "/p").status_code == 200


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"metadata": 5}, "number into Go struct field Eviction.metadata of type v1.ObjectMeta"),
        ({"metadata": {"name": ["p"]}}, "array into Go struct field ObjectMeta.metadata.name of type string"),
        ({"deleteOptions": [1]}, "array into Go struct field Eviction.deleteOptions of type v1.DeleteOptions"),
        (
            {"deleteOptions": {"preconditions": {"uid": 1}}},
            "number into Go struct field Preconditions.deleteOptions.preconditions.uid of type types.UID",
        ),
    ],
)
def test_an_eviction_with_a_field_of_the_wrong_type_is_400_and_evicts_nothing(
    api: Asgi, fields: dict[str, Any], error: str
) -> None:
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", **fields}
    response = api.request("POST", PODS + "/p/eviction", json=eviction)
    message = _status(response, 400, "BadRequest")["message"]
    assert message == 'Eviction in version "v1" cannot be handled as a Eviction: json: cannot unmarshal ' + error
    assert "deletionTimestamp" not in api.request("GET", PODS + "/p").json()["metadata"]


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"target": 5}, "number into Go struct field Binding.target of type v1.ObjectReference"),
        ({"target": {"name": 5}}, "number into Go struct field ObjectReference.target.name of type string"),
        (
            {"metadata": [1], "target": {"name": "n"}},
            "array into Go struct field Binding.metadata of type v1.ObjectMeta",
        ),
    ],
)
def test_a_binding_with_a_field_of_the_wrong_type_is_400_and_binds_nothing(
    api: Asgi, fields: dict[str, Any], error: str
) -> None:
    """A `target.name` of 5 once became the pod's `spec.nodeName` 5; a `target` of 5 was a 500."""
    api.request("POST", PODS, json=pod_manifest("unbound"))
    binding = {"apiVersion": "v1", "kind": "Binding", **fields}
    response = api.request("POST", PODS + "/unbound/binding", json=binding)
    message = _status(response, 400, "BadRequest")["message"]
    assert message == 'Binding in version "v1" cannot be handled as a Binding: json: cannot unmarshal ' + error
    assert "nodeName" not in api.request("GET", PODS + "/unbound").json()["spec"]


def test_a_delete_with_a_dry_run_other_than_all_is_422_not_a_dry_run(api: Asgi) -> None:
    """`ValidateDeleteOptions`: dryRun may only be `All`; the object is neither deleted nor reported deleted."""
    response = api.request("DELETE", JOBS + "/j", params={"dryRun": "bogus"})
    body = _status(response, 422, "Invalid")
    assert (
        body["message"] == 'DeleteOptions "" is invalid: dryRun: Unsupported value: ["bogus"]: supported values: "All"'
    )
    assert "deletionTimestamp" not in api.request("GET", JOBS + "/j").json()["metadata"]


def test_orphan_dependents_beside_a_propagation_policy_is_422(api: Asgi) -> None:
    body = {"orphanDependents": True, "propagationPolicy": "Background"}
    response = api.request("DELETE", JOBS + "/j", content=orjson.dumps(body))
    assert _status(response, 422, "Invalid")["message"] == (
        'DeleteOptions "" is invalid: propagationPolicy: Invalid value: "Background": '
        "orphanDependents and deletionPropagation cannot be both set"
    )
    assert api.request("GET", JOBS + "/j").status_code == 200


def test_a_delete_collection_body_that_is_no_object_is_400(api: Asgi) -> None:
    response = api.request("DELETE", JOBS, content=b"[1, 2]")
    _status(response, 400, "BadRequest")
    assert len(api.request("GET", JOBS).json()["items"]) == 1


def test_a_dry_run_binding_binds_nothing(api: Asgi) -> None:
    """`BindingREST.Create` hands `dryRun` to `assignPod`: every check, no write (a dry run once bound the pod)."""
    api.request("POST", PODS, json=pod_manifest("unbound"))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "unbound"}, "target": {"name": "n"}}
    response = api.request("POST", PODS + "/unbound/binding", params={"dryRun": "All"}, json=binding)
    assert response.status_code == 201, response.text
    assert "nodeName" not in api.request("GET", PODS + "/unbound").json()["spec"]
    again = api.request("POST", PODS + "/unbound/binding", json=binding)
    assert again.status_code == 201 and api.request("GET", PODS + "/unbound").json()["spec"]["nodeName"] == "n"


@pytest.mark.parametrize(
    ("path", "method"),
    [("/version", "POST"), ("/version", "DELETE"), (PODS + "/p/exec", "PUT"), (PODS + "/p/attach", "DELETE")],
)
def test_methods_a_route_does_not_serve_are_405(api: Asgi, path: str, method: str) -> None:
    _status(api.request(method, path), 405, "MethodNotAllowed")


@pytest.mark.parametrize(
    ("patch", "error"),
    [
        (
            {"status": {"conditions": ["x"]}},
            "string into Go struct field PodStatus.status.conditions of type v1.PodCondition",
        ),
        ({"status": {"phase": 5}}, "number into Go struct field PodStatus.status.phase of type v1.PodPhase"),
        ({"status": {"hostIP": ["a"]}}, "array into Go struct field PodStatus.status.hostIP of type string"),
    ],
)
def test_a_status_patch_whose_result_does_not_decode_is_422_and_stores_nothing(
    api: Asgi, patch: dict[str, Any], error: str
) -> None:
    """Pod status had no check of its types: a condition of "x" was stored, and every later eviction of the pod
    was a 500. Kubernetes' patch handler refuses a result that does not decode (422 against `patch`)."""
    before = api.request("GET", PODS + "/p").json()
    response = api.request(
        "PATCH",
        PODS + "/p/status",
        content=orjson.dumps(patch),
        headers={"content-type": "application/merge-patch+json"},
    )
    message = _status(response, 422, "Invalid")["message"]
    assert message.startswith(' "" is invalid: patch: Invalid value: "{') and message.endswith(
        "json: cannot unmarshal " + error
    )
    assert api.request("GET", PODS + "/p").json() == before
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}}
    evicted = api.request("POST", PODS + "/p/eviction", json=eviction)
    assert evicted.status_code == 201, evicted.text


def test_a_json_patch_whose_result_does_not_decode_is_422_too(api: Asgi) -> None:
    """handlers/patch.go decodes a JSON patch's result as it does a merge patch's: 422 against `patch`."""
    before = api.request("GET", PODS + "/p").json()
    response = api.request(
        "PATCH",
        PODS + "/p/status",
        content=orjson.dumps([{"op": "add", "path": "/status/phase", "value": 5}]),
        headers={"content-type": "application/json-patch+json"},
    )
    message = _status(response, 422, "Invalid")["message"]
    assert message.endswith(
        "json: cannot unmarshal number into Go struct field PodStatus.status.phase of type v1.PodPhase"
    )
    assert api.request("GET", PODS + "/p").json() == before


@pytest.mark.parametrize(
    ("patch", "shown", "error"),
    [
        ({"metadata": {"labels": "invalid"}}, "map[metadata:map[labels:invalid]]", "cannot restore map from string"),
        ({"spec": {"containers": {"a": 1}}}, "map[spec:map[containers:map[a:1]]]", "cannot restore slice from map"),
        ({"spec": "x"}, "map[spec:x]", "cannot restore struct from: string"),
        (
            {"spec": {"activeDeadlineSeconds": 1.5}},
            "map[spec:map[activeDeadlineSeconds:1.5]]",
            "cannot convert float64 to int64",
        ),
        ({"spec": {"restartPolicy": True}}, "map[spec:map[restartPolicy:true]]", "unrecognized type: string"),
    ],
)
def test_a_strategic_merge_patch_whose_result_does_not_convert_is_422_with_the_converters_text(
    api: Asgi, patch: dict[str, Any], shown: str, error: str
) -> None:
    """A strategic merge patch's result is converted from its map, not decoded (handlers/patch.go,
    `applyPatchToObject`): the unstructured converter's text against `patch`, its value the patch as Go's `%+v`
    prints it. test/cmd/core.sh greps `cannot restore map from string`; kjobs gave encoding/json's text."""
    before = api.request("GET", PODS + "/p").json()
    response = api.request(
        "PATCH",
        PODS + "/p",
        content=orjson.dumps(patch),
        headers={"content-type": "application/strategic-merge-patch+json"},
    )
    message = _status(response, 422, "Invalid")["message"]
    assert message == f' "" is invalid: patch: Invalid value: "{shown}": {error}'
    assert api.request("GET", PODS + "/p").json() == before


@pytest.mark.parametrize(
    ("method", "url", "body", "message"),
    [
        (
            "POST",
            "/api/v1/namespaces",
            b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: valid-pod\n",
            "the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse "
            "error: invalid character 'a' looking for beginning of value "
            "(61706956657273696f6e3a2076310a6b696e643a20506f640a6d65746164 ...)",
        ),
        (
            "PUT",
            CONFIGMAPS + "/cm",
            b'{"metadata": {"name": "cm"} "data": {}}',
            "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse "
            'error: invalid character \'"\' after object key:value pair ({"metadata": {"name": "cm"} "d ...)',
        ),
    ],
)
def test_a_create_or_update_whose_body_is_not_json_is_400_unrecognized(
    api: Asgi, method: str, url: str, body: bytes, message: str
) -> None:
    """The create and update handlers wrap a body whose kind cannot be read (`transformDecodeError`): test/cmd/
    core.sh greps `the object provided is unrecognized (must be of type Namespace)` after `kubectl create --raw`
    of a YAML file (sent with no Content-Type: JSON). kjobs answered orjson's parse error alone."""
    response = api.request(method, url, content=body)
    assert _status(response, 400, "BadRequest")["message"] == message


def test_a_create_whose_body_does_not_decode_is_400(api: Asgi) -> None:
    pod = {**pod_manifest("z"), "status": {"conditions": [5]}}
    response = api.request("POST", PODS, json=pod)
    assert _status(response, 400, "BadRequest")["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field '
        "PodStatus.status.conditions of type v1.PodCondition"
    )


# ------------------------------------------------------------------------------------------- integers


@pytest.mark.parametrize(
    ("method", "path", "param"),
    [
        ("GET", JOBS, "limit"),
        ("GET", JOBS, "timeoutSeconds"),
        ("DELETE", PODS + "/p", "gracePeriodSeconds"),
        ("GET", PODS + "/p/log", "tailLines"),
        ("GET", PODS + "/p/log", "limitBytes"),
    ],
)
def test_integer_parameters_beyond_int64_are_400_as_strconv_says(api: Asgi, method: str, path: str, param: str) -> None:
    response = api.request(method, path, params={param: "9223372036854775808"})
    message = _status(response, 400, "BadRequest")["message"]
    assert message == 'strconv.ParseInt: parsing "9223372036854775808": value out of range'
    assert api.request("GET", PODS + "/p").status_code == 200


@pytest.mark.parametrize("value", ["1_0", " 1", "+1", "-1", "\u0661", "18446744073709551616"])
def test_resource_versions_go_would_not_parse_are_400(api: Asgi, value: str) -> None:
    """`ParseResourceVersion` is `strconv.ParseUint`: no underscores, spaces, signs, non-ASCII digits, overflow."""
    response = api.request("GET", JOBS, params={"resourceVersion": value})
    assert _status(response, 400, "BadRequest")["message"].startswith("resourceVersion: Invalid value")


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        (
            {"v": "meta.k8s.io/v1", "rv": 0, "start": "default/j"},
            "incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ),
        ({"v": "meta.k8s.io/v1", "rv": 5, "start": ""}, "encoded start key empty (version meta.k8s.io/v1)"),
        ({"v": "meta.k8s.io/v1", "rv": 5, "start": "../../x"}, "../../x"),
        ({"v": "v9", "rv": 5, "start": "default/j"}, "server does not recognize this encoded version v9"),
    ],
)
def test_continue_tokens_decode_continue_refuses_are_400(api: Asgi, token: dict[str, Any], reason: str) -> None:
    """storage `DecodeContinue`'s checks (a revision of 0 once listed the empty state at revision 0)."""
    text = base64.urlsafe_b64encode(orjson.dumps(token)).decode().rstrip("=")
    response = api.request("GET", JOBS, params={"continue": text, "limit": "1"})
    assert (
        _status(response, 400, "BadRequest")["message"]
        == "invalid continue token: continue key is not valid: " + reason
    )


def test_a_field_manager_with_an_unprintable_character_is_422(api: Asgi) -> None:
    response = api.request("POST", CONFIGMAPS, params={"fieldManager": "me\x07"}, json={"metadata": {"name": "c"}})
    body = _status(response, 422, "Invalid")
    assert 'fieldManager: Invalid value: "me\\a": invalid character U+0007 (at position 2)' in body["message"]
    assert api.request("GET", CONFIGMAPS + "/c").status_code == 404


# ------------------------------------------------------------------------------------------- YAML


@pytest.mark.parametrize(
    ("data", "stored"),
    [
        ("{1: one, true: two, 2.5: three}", {"1": "one", "true": "two", "2.5": "three"}),
        (
            "{day: 2001-12-14, at: 2001-12-14t21:59:43.10-05:00}",
            {"day": "2001-12-14", "at": "2001-12-14t21:59:43.10-05:00"},
        ),
        ("{a: !!binary aGVsbG8=}", {"a": "hello"}),
    ],
)
def test_yaml_values_json_cannot_hold_are_read_as_kubernetes_reads_them(
    api: Asgi, data: str, stored: dict[str, str]
) -> None:
    """apimachinery turns YAML into JSON (sigs.k8s.io/yaml): keys become strings, timestamps stay strings."""
    body = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata: {data}\n".encode()
    response = api.request("POST", CONFIGMAPS, content=body, headers={"content-type": "application/yaml"})
    assert response.status_code == 201, response.text
    assert response.json()["data"] == stored


@pytest.mark.parametrize("data", ["{null: a}", "{a: .nan}", "{a: [.inf]}"])
def test_yaml_values_json_has_no_form_for_are_400(api: Asgi, data: str) -> None:
    body = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata: {data}\n".encode()
    response = api.request("POST", CONFIGMAPS, content=body, headers={"content-type": "application/yaml"})
    _status(response, 400, "BadRequest")
    assert api.request("GET", CONFIGMAPS + "/c").status_code == 404


def test_the_server_answers_others_while_it_reads_a_large_yaml_body(api: Asgi) -> None:
    """A megabyte of YAML takes seconds to read; other requests are answered meanwhile, not after it."""
    big = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\nx: [" + b"1," * 400_000 + b"1]\n"
    finished: list[str] = []

    async def call(name: str, method: str, url: str, **kwargs: Any) -> None:
        await api.client.request(method, url, timeout=60, **kwargs)
        finished.append(name)

    async def race() -> None:
        yaml_post = asyncio.ensure_future(
            call("yaml", "POST", CONFIGMAPS, content=big, headers={"content-type": "application/yaml"})
        )
        await asyncio.sleep(0.05)  # the YAML request is being read
        await call("get", "GET", "/version")
        await yaml_post

    api.loop.run_until_complete(race())
    assert finished == ["get", "yaml"]


# ------------------------------------------------------------------------------------------- watches


def test_a_watch_cancelled_mid_wait_leaves_no_task_error_in_the_log(
    api: Asgi, caplog: pytest.LogCaptureFixture
) -> None:
    """A watch handler cancelled while it waits (as a server shutting down cancels it) logs no
    `Task exception was never retrieved` traceback for the event it was waiting for."""

    async def cancelled_watch() -> None:
        call = asyncio.ensure_future(api.client.get(JOBS, params={"watch": "1"}, timeout=60))
        await asyncio.sleep(0.1)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.sleep(0.05)

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        api.loop.run_until_complete(cancelled_watch())
        gc.collect()
        api.loop.run_until_complete(asyncio.sleep(0.05))
    assert "never retrieved" not in caplog.text


# ------------------------------------------------------------------------------------------- property

RESOURCE_PATHS = [
    "/api/v1/namespaces",
    "/api/v1/namespaces/default",
    "/api/v1/namespaces/default/status",
    "/api/v1/namespaces/default/finalize",
    "/api/v1/nodes",
    "/api/v1/nodes/n",
    "/api/v1/nodes/n/status",
    PODS,
    PODS + "/p",
    PODS + "/p/status",
    PODS + "/p/log",
    PODS + "/p/exec",
    PODS + "/p/attach",
    PODS + "/p/eviction",
    PODS + "/p/binding",
    PODS + "/p/nope",
    "/api/v1/pods",
    "/api/v1/namespaces/default/events",
    "/api/v1/namespaces/default/services",
    CONFIGMAPS,
    CONFIGMAPS + "/c",
    "/api/v1/namespaces/default/secrets/s",
    JOBS,
    JOBS + "/j",
    JOBS + "/j/status",
    "/apis/batch/v1/jobs",
    "/apis/batch/v1/namespaces/default/cronjobs/c",
    "/apis/events.k8s.io/v1/namespaces/default/events",
    "/apis/coordination.k8s.io/v1/namespaces/default/leases/l",
    "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
    "/apis/scheduling.k8s.io/v1/priorityclasses/x",
    "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
    "/apis/batch/v1/namespaces/default/jobs/A..B",
    "/apis/batch/v1/namespaces/Default/jobs",
    "/apis/batch/v1/namespaces/default/jobs/" + "x" * 300,
    "/apis/batch/v1/namespaces/default/jobs/%C3%A9",
    "/apis/batch/v9/jobs",
    "/apis/nope/v1/things",
    "/api",
    "/apis",
    "/apis/batch",
    "/apis/batch/v1",
    "/api/v1",
    "/openapi/v3",
    "/openapi/v3/apis/batch/v1",
    "/openapi/v2",
    "/version",
    "/metrics",
    "/healthz",
    "/",
]
CONTENT_TYPES = [
    None,
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/json-patch+json",
    "application/apply-patch+yaml",
    "text/plain",
    "application/json; charset=utf-16",
    ";",
]
HOSTILE_VALUES = [
    "",
    "-1",
    "0",
    "abc",
    "1.5",
    "9223372036854775808",
    "-9223372036854775809",
    "1_0",
    " 1",
    "\u0661",
    "All",
    "bogus",
    "Strict",
    "Exact",
    "NotOlderThan",
    "Orphan",
    "true",
    "a in (",
    "metadata.name=x,",
    "spec.foo=bar",
    "!",
    "../x",
    "0001-01-01T00:00:00Z",
    "junk",
    "x" * 200,
    "\x07",
]
QUERY_KEYS = [
    "limit",
    "continue",
    "resourceVersion",
    "resourceVersionMatch",
    "labelSelector",
    "fieldSelector",
    "propagationPolicy",
    "orphanDependents",
    "dryRun",
    "fieldManager",
    "fieldValidation",
    "gracePeriodSeconds",
    "force",
    "includeObject",
    "sendInitialEvents",
    "allowWatchBookmarks",
    "container",
    "tailLines",
    "limitBytes",
    "sinceSeconds",
    "sinceTime",
    "command",
    "stdout",
]
_DEEP = b"[" * 10_000 + b"]" * 10_000
BODIES = [
    b"",
    b"{",
    b"null",
    b"42",
    b'"x"',
    b"[1, 2]",
    b"[]",
    b"{}",
    _DEEP,
    b'{"a":' * 5_000 + b"1" + b"}" * 5_000,
    b'{"metadata":{"name":"' + b"a" * 70_000 + b'"}}',
    b'{"metadata":{"name":"a","name":"b"}}',
    b'{"metadata":{"name":"\xff\xfe"}}',
    b'{"spec":{"parallelism":NaN}}',
    b'{"spec":{"parallelism":123456789012345678901234567890}}',
    b'{"spec":{"parallelism":1.5}}',
    b'{"metadata":5}',
    b'{"metadata":{"name":["j"]}}',
    b'{"apiVersion":"v9","kind":"Nope","metadata":{"name":"j"}}',
    b'{"metadata":{"name":"other","namespace":"kube-system"}}',
    b'[{"op":"test","path":"/spec","value":1}]',
    b'[{"op":"remove","path":"/no/such/path"}]',
    b'[{"op":"copy","from":"/spec","path":"/spec/x/y"}]',
    b'[{"op":"bogus"}]',
    b'{"spec":{"$patch":"delete"}}',
    b'{"$patch":"replace"}',
    b'{"spec":{"$retainKeys":5}}',
    b'{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"x":1}],"containers":[{"name":"main"}]}}}}',
    b'{"spec":{"template":{"spec":{"containers":[{"$patch":"delete"}]}}}}',
    b"a: [",
    b"a: &x [1]\nb: *x",
    b"{1: a, null: b}",
    b"metadata: {name: j}\nspec: {parallelism: .nan}",
    b"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: [1]}",
    b"k8s\x00\n\x00",
    b"\x00\x01\x02",
    b'{"preconditions":{"uid":5},"gracePeriodSeconds":"x","dryRun":[1]}',
    b'{"kind":"Eviction","apiVersion":"policy/v1","metadata":{"name":"p"},"deleteOptions":5}',
    b'{"kind":"Binding","apiVersion":"v1","metadata":{"name":"p"},"target":{"name":5}}',
    b'{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":5}',
]


def _check(response: httpx.Response) -> None:
    """A refusal is a Kubernetes Status with its code; 504 is the one deliberate server-side code (a wait)."""
    assert response.status_code < 500 or response.status_code == 504, response.text
    if response.status_code >= 400 and response.request.method != "HEAD":
        body = orjson.loads(response.content)
        assert isinstance(body, dict) and body.get("kind") == "Status", response.text
        assert body["code"] == response.status_code and body["status"] == "Failure", response.text
        assert isinstance(body.get("reason"), str) and isinstance(body.get("message"), str), response.text


@pytest.fixture(scope="module")
def shared() -> Iterator[Asgi]:
    server = Asgi(token=TOKEN)
    server.request("POST", JOBS, json=job_manifest("j"))
    server.request("POST", PODS, json=pod_manifest("p", node="n"))
    server.request("POST", "/api/v1/nodes", json={"metadata": {"name": "n"}})
    yield server
    server.close()


@settings(
    max_examples=int(os.environ.get("KJOBS_FUZZ_EXAMPLES", "400")),  # more to explore locally; CI keeps 400
    deadline=None,
    derandomize=not os.environ.get("KJOBS_FUZZ_EXAMPLES"),
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "FOO"]),
    path=st.sampled_from(RESOURCE_PATHS),
    content_type=st.sampled_from(CONTENT_TYPES),
    body=st.sampled_from(BODIES),
    query=st.dictionaries(st.sampled_from(QUERY_KEYS), st.sampled_from(HOSTILE_VALUES), max_size=3),
    watch=st.booleans(),
    credential=st.sampled_from(["token", "none", "wrong", "Basic eA==", "Bearer \u00e9"]),
)
def test_hostile_requests_get_a_status_and_change_nothing(
    shared: Asgi,
    method: str,
    path: str,
    content_type: str | None,
    body: bytes,
    query: dict[str, str],
    watch: bool,
    credential: str,
) -> None:
    """No 5xx, every refusal a Status, a refused request writes nothing, nothing without credentials but the
    `system:public-info-viewer` paths; the store's objects stay whole JSON objects."""
    params = dict(query)
    if watch:
        params.update(watch="true", timeoutSeconds="-1")  # a watch that ends at once (a negative timeout)
    headers: dict[str, str | bytes] = {"content-type": content_type} if content_type else {}
    if credential != "token":
        auth = {"none": "", "wrong": "Bearer nope"}.get(credential, credential)
        headers["authorization"] = auth.encode("utf-8")  # raw bytes: a header need not be ASCII
    before = shared.app.storage.revision
    response = shared.request(method, path, params=params, content=body if method != "GET" else None, headers=headers)
    _check(response)
    if credential != "token" and path.rstrip("/") not in ("/version", "/healthz"):
        assert response.status_code == 401, response.text
    if response.status_code >= 400:
        assert shared.app.storage.revision == before, (response.status_code, response.text)
    # the server keeps serving, and what it stores reads back whole
    for listed in ("/api/v1/pods", "/apis/batch/v1/jobs"):
        page = shared.request("GET", listed)
        assert page.status_code == 200 and all(isinstance(i["metadata"]["name"], str) for i in page.json()["items"])


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, -1, 1.5, 2**63, -(2**63) - 1, 10**30, 1e308]),
    st.sampled_from(["", "x", "Never", "All", "default", "A..B", "n/../x", "\u00e9", "x" * 300]),
)
_hostile_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6,
)
_BASES: list[tuple[str, str, str | None, dict[str, Any]]] = [
    (
        "POST",
        PODS + "/p/eviction",
        None,
        {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": "p"},
            "deleteOptions": {"gracePeriodSeconds": 0, "preconditions": {"uid": "u"}, "dryRun": ["All"]},
        },
    ),
    (
        "POST",
        PODS + "/q/binding",
        None,
        {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "q", "uid": "u"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "n"},
        },
    ),
    (
        "DELETE",
        PODS + "/p",
        None,
        {
            "gracePeriodSeconds": 30,
            "propagationPolicy": "Background",
            "dryRun": ["All"],
            "preconditions": {"uid": "u", "resourceVersion": "1"},
            "orphanDependents": False,
        },
    ),
    ("DELETE", JOBS, None, {"propagationPolicy": "Foreground", "dryRun": ["All"], "gracePeriodSeconds": 1}),
    (
        "POST",
        CONFIGMAPS,
        None,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "m", "labels": {"a": "b"}},
            "data": {"k": "v"},
            "binaryData": {"b": "aGk="},
            "immutable": False,
        },
    ),
    (
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        None,
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "default"}},
        },
    ),
    (
        "PATCH",
        JOBS + "/j",
        "application/merge-patch+json",
        {"metadata": {"labels": {"x": "y"}}, "spec": {"suspend": True}},
    ),
    (
        "PATCH",
        JOBS + "/j",
        "application/strategic-merge-patch+json",
        {
            "spec": {
                "template": {
                    "spec": {
                        "$setElementOrder/containers": [{"name": "main"}],
                        "containers": [{"name": "main", "image": "b"}],
                    }
                }
            }
        },
    ),
    (
        "PATCH",
        PODS + "/p/status",
        "application/merge-patch+json",
        {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}},
    ),
    (
        "PATCH",
        CONFIGMAPS + "/m0",
        "application/apply-patch+yaml",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m0"}, "data": {"k": "v"}},
    ),
    (
        "PUT",
        "/api/v1/nodes/n",
        None,
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "spec": {"unschedulable": True}},
    ),
    (
        "POST",
        "/api/v1/namespaces/default/events",
        None,
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "e"},
            "involvedObject": {"kind": "Pod", "name": "p"},
            "reason": "R",
            "count": 1,
        },
    ),
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _paths(item, (*prefix, i))
    return out


@pytest.fixture(scope="module")
def typed() -> Iterator[Asgi]:
    server = Asgi()
    server.request("POST", JOBS, json=job_manifest("j"))
    server.request("POST", PODS, json=pod_manifest("p", node="n"))
    server.request("POST", PODS, json=pod_manifest("q"))
    server.request("POST", "/api/v1/nodes", json={"metadata": {"name": "n"}})
    yield server
    server.close()


@settings(
    max_examples=int(os.environ.get("KJOBS_FUZZ_EXAMPLES", "300")),
    deadline=None,
    derandomize=not os.environ.get("KJOBS_FUZZ_EXAMPLES"),
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(base=st.sampled_from(_BASES), data=st.data(), dry_run=st.booleans())
def test_bodies_with_a_field_of_a_wrong_type_are_refused_cleanly(
    typed: Asgi, base: tuple[str, str, str | None, dict[str, Any]], data: st.DataObject, dry_run: bool
) -> None:
    """A well-formed body with one value replaced by any JSON value: never a 5xx, a refusal writes nothing, and
    whatever is written keeps the types Kubernetes' would (no `spec.nodeName` of 5)."""
    method, path, content_type, template = base
    body = orjson.loads(orjson.dumps(template))
    where = data.draw(st.sampled_from(_paths(body)), label="where")
    value = data.draw(_hostile_json, label="value")
    if where:
        node = body
        for key in where[:-1]:
            node = node[key]
        node[where[-1]] = value
    else:
        body = value
    params = {"fieldManager": "fz"} if content_type == "application/apply-patch+yaml" else {}
    if dry_run and method != "DELETE":
        params["dryRun"] = "All"
    headers = {"content-type": content_type} if content_type else {}
    try:
        content = orjson.dumps(body)
    except orjson.JSONEncodeError:
        return  # an integer beyond 64 bits: no client can send it as orjson would; sent as text below
    before = typed.app.storage.revision
    response = typed.request(method, path, params=params, content=content, headers=headers)
    _check(response)
    if response.status_code >= 400 or (dry_run and method != "DELETE"):
        assert typed.app.storage.revision == before, (response.status_code, response.text)
    for pod in typed.request("GET", "/api/v1/pods").json()["items"]:
        assert isinstance(pod["spec"].get("nodeName", ""), str), pod
