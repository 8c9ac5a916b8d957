"""`/openapi/v2`: the Swagger 2.0 document kube-apiserver 1.32 serves, as JSON and as gnostic protobuf.

Rows are checked against upstream's api/openapi-spec/swagger.json (operation ids, a whole operation, a few
definitions); the protobuf answer is read back with a wire-format reader written here from gnostic's
OpenAPIv2.proto (independent of the server's encoder) and must equal the JSON document; the real kubectl
1.32 reads it for `kubectl explain --output=plaintext-openapiv2`, and the official Python client reads the JSON.
"""

from __future__ import annotations

import gzip
import hashlib
import shutil
import ssl
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import yaml
from kubernetes import client

from kjobs.server import gnostic, kubeconfig, openapiv2, registry
from kjobs.server.app import create_app
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.support import client_tls, python_client_config, shared_pki

PB = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
PB_CURRENT = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    store = MemoryStore()
    with serve(store, app=create_app(store), pki=shared_pki()) as served:
        yield served
    store.close()


@pytest.fixture(scope="module")
def http(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=30, verify=client_tls()) as c:
        yield c


def _doc() -> dict[str, Any]:
    result: dict[str, Any] = orjson.loads(openapiv2.document().json)
    return result


# --------------------------------------------------------------------------------------- upstream rows

# (path, method) → operationId, as api/openapi-spec/swagger.json (v1.32) names them
OPERATIONS = [
    ("/apis/batch/v1/namespaces/{namespace}/jobs", "get", "listBatchV1NamespacedJob"),
    ("/apis/batch/v1/namespaces/{namespace}/jobs", "post", "createBatchV1NamespacedJob"),
    ("/apis/batch/v1/namespaces/{namespace}/jobs", "delete", "deleteBatchV1CollectionNamespacedJob"),
    ("/apis/batch/v1/namespaces/{namespace}/jobs/{name}", "get", "readBatchV1NamespacedJob"),
    ("/apis/batch/v1/namespaces/{namespace}/jobs/{name}", "put", "replaceBatchV1NamespacedJob"),
    ("/apis/batch/v1/namespaces/{namespace}/jobs/{name}", "patch", "patchBatchV1NamespacedJob"),
    ("/apis/batch/v1/namespaces/{namespace}/jobs/{name}", "delete", "deleteBatchV1NamespacedJob"),
    ("/apis/batch/v1/namespaces/{namespace}/jobs/{name}/status", "get", "readBatchV1NamespacedJobStatus"),
    ("/apis/batch/v1/namespaces/{namespace}/jobs/{name}/status", "patch", "patchBatchV1NamespacedJobStatus"),
    ("/apis/batch/v1/jobs", "get", "listBatchV1JobForAllNamespaces"),
    ("/apis/batch/v1/namespaces/{namespace}/cronjobs/{name}/status", "put", "replaceBatchV1NamespacedCronJobStatus"),
    ("/api/v1/namespaces/{namespace}/pods/{name}/log", "get", "readCoreV1NamespacedPodLog"),
    ("/api/v1/namespaces/{namespace}/pods/{name}/exec", "post", "connectCoreV1PostNamespacedPodExec"),
    ("/api/v1/namespaces/{namespace}/pods/{name}/portforward", "get", "connectCoreV1GetNamespacedPodPortforward"),
    ("/api/v1/namespaces/{namespace}/pods/{name}/eviction", "post", "createCoreV1NamespacedPodEviction"),
    ("/api/v1/namespaces/{namespace}/pods/{name}/binding", "post", "createCoreV1NamespacedPodBinding"),
    (
        "/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers",
        "patch",
        "patchCoreV1NamespacedPodEphemeralcontainers",
    ),
    ("/api/v1/namespaces/{name}/finalize", "put", "replaceCoreV1NamespaceFinalize"),
    ("/api/v1/namespaces/{name}/status", "get", "readCoreV1NamespaceStatus"),
    ("/api/v1/nodes", "delete", "deleteCoreV1CollectionNode"),
    ("/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}", "get", "readRbacAuthorizationV1ClusterRole"),
    (
        "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}",
        "patch",
        "patchCoordinationV1NamespacedLease",
    ),
    (
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        "post",
        "createAuthorizationV1SelfSubjectAccessReview",
    ),
    ("/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets", "get", "listPolicyV1NamespacedPodDisruptionBudget"),
]


@pytest.mark.parametrize(("path", "method", "op_id"), OPERATIONS, ids=[o[2] for o in OPERATIONS])
def test_operation_ids_are_upstreams(path: str, method: str, op_id: str) -> None:
    assert _doc()["paths"][path][method]["operationId"] == op_id


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/parameters/{name}"}


def test_delete_collection_of_jobs_is_upstreams_operation() -> None:
    """deleteBatchV1CollectionNamespacedJob as swagger.json has it, plus 1.32's
    ignoreStoreReadErrorWithClusterBreakingPotential (a DeleteOptions field new in 1.32)."""
    op = _doc()["paths"]["/apis/batch/v1/namespaces/{namespace}/jobs"]["delete"]
    names = [p.get("$ref", "").rsplit("/", 1)[-1] or p["name"] for p in op["parameters"]]
    assert names == [
        "body-2Y1dVQaQ",
        "continue-QfD61s0i",
        "dryRun",
        "fieldSelector-xIcQKXFG",
        "gracePeriodSeconds--K5HaBOS",
        "ignoreStoreReadErrorWithClusterBreakingPotential",
        "labelSelector-5Zw57w4C",
        "limit-1NfNmdNH",
        "orphanDependents-uRB25kX5",
        "propagationPolicy-6jk3prlO",
        "resourceVersion-5WAnf1kx",
        "resourceVersionMatch-t8XhRHeC",
        "sendInitialEvents-rLXlEK_k",
        "timeoutSeconds-yvYezaOC",
    ]
    rest = {k: v for k, v in op.items() if k != "parameters"}
    assert rest == {
        "consumes": ["*/*"],
        "description": "delete collection of Job",
        "operationId": "deleteBatchV1CollectionNamespacedJob",
        "produces": ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"],
        "responses": {
            "200": {
                "description": "OK",
                "schema": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status"},
            },
            "401": {"description": "Unauthorized"},
        },
        "schemes": ["https"],
        "tags": ["batch_v1"],
        "x-kubernetes-action": "deletecollection",
        "x-kubernetes-group-version-kind": {"group": "batch", "kind": "Job", "version": "v1"},
    }


def test_status_path_item_is_upstreams() -> None:
    item = _doc()["paths"]["/apis/batch/v1/namespaces/{namespace}/cronjobs/{name}/status"]
    assert item["parameters"] == [
        {
            "description": "name of the CronJob",
            "in": "path",
            "name": "name",
            "required": True,
            "type": "string",
            "uniqueItems": True,
        },
        _ref("namespace-vgWSWtn3"),
        _ref("pretty-tJGM1-ng"),
    ]
    patch = item["patch"]
    assert patch["consumes"] == [
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
    ]
    assert patch["description"] == "partially update status of the specified CronJob"
    assert [p.get("$ref", p.get("name")) for p in patch["parameters"]] == [
        "#/parameters/body-78PwaGsr",
        "dryRun",
        "#/parameters/fieldManager-7c6nTn1T",
        "fieldValidation",
        "#/parameters/force-tOGGb0Yi",
    ]
    assert patch["responses"]["201"] == {
        "description": "Created",
        "schema": {"$ref": "#/definitions/io.k8s.api.batch.v1.CronJob"},
    }
    put = item["put"]
    assert put["parameters"][0] == {
        "in": "body",
        "name": "body",
        "required": True,
        "schema": {"$ref": "#/definitions/io.k8s.api.batch.v1.CronJob"},
    }
    assert put["x-kubernetes-action"] == "put"


# definitions as swagger.json has them (v2 form: a bare $ref beside its description)
UPSTREAM_DEFINITIONS: dict[str, Any] = {
    "io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern": {
        "description": "PodFailurePolicyOnPodConditionsPattern describes a pattern for matching an actual pod "
        "condition type.",
        "properties": {
            "status": {
                "description": "Specifies the required Pod condition status. To match a pod condition it is required "
                "that the specified status equals the pod condition status. Defaults to True.",
                "type": "string",
            },
            "type": {
                "description": "Specifies the required Pod condition type. To match a pod condition it is required "
                "that specified type equals the pod condition type.",
                "type": "string",
            },
        },
        "required": ["type", "status"],
        "type": "object",
    },
    "io.k8s.api.batch.v1.UncountedTerminatedPods": {
        "description": "UncountedTerminatedPods holds UIDs of Pods that have terminated but haven't been accounted "
        "in Job status counters.",
        "properties": {
            "failed": {
                "description": "failed holds UIDs of failed Pods.",
                "items": {"type": "string"},
                "type": "array",
                "x-kubernetes-list-type": "set",
            },
            "succeeded": {
                "description": "succeeded holds UIDs of succeeded Pods.",
                "items": {"type": "string"},
                "type": "array",
                "x-kubernetes-list-type": "set",
            },
        },
        "type": "object",
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch": {
        "description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
        "type": "object",
    },
}


@pytest.mark.parametrize("name", list(UPSTREAM_DEFINITIONS))
def test_definitions_are_upstreams(name: str) -> None:
    assert _doc()["definitions"][name] == UPSTREAM_DEFINITIONS[name]


def test_definitions_use_v2_refs_and_keep_kubernetes_extensions() -> None:
    defs = _doc()["definitions"]
    rule = defs["io.k8s.api.batch.v1.PodFailurePolicyRule"]["properties"]["onExitCodes"]
    assert rule == {
        "$ref": "#/definitions/io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement",
        "description": "Represents the requirement on the container exit codes.",
    }
    job = defs["io.k8s.api.batch.v1.Job"]
    assert job["x-kubernetes-group-version-kind"] == [{"group": "batch", "kind": "Job", "version": "v1"}]
    assert job["properties"]["apiVersion"].keys() == {"description", "type"}  # no strict-mode enum
    containers = defs["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert (containers["x-kubernetes-patch-strategy"], containers["x-kubernetes-patch-merge-key"]) == ("merge", "name")
    assert (containers["x-kubernetes-list-type"], containers["x-kubernetes-list-map-keys"]) == ("map", ["name"])
    assert defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    text = orjson.dumps(_doc()).decode()
    assert "#/components/schemas/" not in text and '"allOf"' not in text and '"oneOf"' not in text


def test_document_header_and_security() -> None:
    doc = _doc()
    assert doc["swagger"] == "2.0"
    assert doc["info"] == {"title": "Kubernetes", "version": "v1.32.0+kjobs"}
    assert doc["security"] == [{"BearerToken": []}]
    assert doc["securityDefinitions"] == {
        "BearerToken": {
            "description": "Bearer Token authentication",
            "in": "header",
            "name": "authorization",
            "type": "apiKey",
        }
    }


def test_every_ref_resolves() -> None:
    doc = _doc()
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                found.add(node["$ref"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    for ref in found:
        section, name = ref.removeprefix("#/").split("/", 1)
        assert name in doc[section], ref


# ------------------------------------------------------------------ an independent protobuf reader

# gnostic-models openapiv2/OpenAPIv2.proto: message → field number → (JSON key, type). Types: s string,
# b bool, i int64, d double, S repeated string, A Any (its yaml), R repeated Any, M:<msg> message, *:<msg>
# repeated message, N:<msg> repeated Named<msg> (a JSON object), and the oneof wrappers by hand below.
_PRIM = ["type", "format", "items", "collectionFormat", "default", "maximum", "exclusiveMaximum", "minimum"]
_PRIM += ["exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "enum"]
_PRIM += ["multipleOf"]
_PRIM_TYPES = {
    "type": "s",
    "format": "s",
    "items": "M:PrimitivesItems",
    "collectionFormat": "s",
    "default": "A",
    "maximum": "d",
    "exclusiveMaximum": "b",
    "minimum": "d",
    "exclusiveMinimum": "b",
    "maxLength": "i",
    "minLength": "i",
    "pattern": "s",
    "maxItems": "i",
    "minItems": "i",
    "uniqueItems": "b",
    "enum": "R",
    "multipleOf": "d",
}


def _seq(names: list[str], types: dict[str, str], first: int = 1) -> dict[int, tuple[str, str]]:
    return {first + i: (n, types[n]) for i, n in enumerate(names)}


MESSAGES: dict[str, dict[int, tuple[str, str]]] = {
    "Document": {
        1: ("swagger", "s"),
        2: ("info", "M:Info"),
        8: ("paths", "M:Paths"),
        9: ("definitions", "M:Definitions"),
        10: ("parameters", "M:ParameterDefinitions"),
        12: ("security", "*:SecurityRequirement"),
        13: ("securityDefinitions", "M:SecurityDefinitions"),
    },
    "Definitions": {1: ("", "N:Schema")},
    "ParameterDefinitions": {1: ("", "N:Parameter")},
    "SecurityDefinitions": {1: ("", "N:SecurityDefinitionsItem")},
    "Info": {1: ("title", "s"), 2: ("version", "s")},
    "Paths": {2: ("", "N:PathItem")},
    "PathItem": {
        2: ("get", "M:Operation"),
        3: ("put", "M:Operation"),
        4: ("post", "M:Operation"),
        5: ("delete", "M:Operation"),
        8: ("patch", "M:Operation"),
        9: ("parameters", "*:ParametersItem"),
    },
    "Operation": {
        1: ("tags", "S"),
        3: ("description", "s"),
        5: ("operationId", "s"),
        6: ("produces", "S"),
        7: ("consumes", "S"),
        8: ("parameters", "*:ParametersItem"),
        9: ("responses", "M:Responses"),
        10: ("schemes", "S"),
        13: ("x-", "X"),
    },
    "Responses": {1: ("", "N:ResponseValue")},
    "Response": {1: ("description", "s"), 2: ("schema", "SchemaItem")},
    "JsonReference": {1: ("$ref", "s")},
    "BodyParameter": {
        1: ("description", "s"),
        2: ("name", "s"),
        3: ("in", "s"),
        4: ("required", "b"),
        5: ("schema", "M:Schema"),
    },
    "QueryParameterSubSchema": _seq(
        ["required", "in", "description", "name", "allowEmptyValue", *_PRIM],
        {"required": "b", "in": "s", "description": "s", "name": "s", "allowEmptyValue": "b", **_PRIM_TYPES},
    ),
    "PathParameterSubSchema": _seq(
        ["required", "in", "description", "name", *_PRIM],
        {"required": "b", "in": "s", "description": "s", "name": "s", **_PRIM_TYPES},
    ),
    "Schema": {
        1: ("$ref", "s"),
        2: ("format", "s"),
        4: ("description", "s"),
        5: ("default", "A"),
        19: ("required", "S"),
        20: ("enum", "R"),
        21: ("additionalProperties", "AdditionalPropertiesItem"),
        22: ("type", "TypeItem"),
        23: ("items", "ItemsItem"),
        25: ("properties", "M:Properties"),
        31: ("x-", "X"),
    },
    "Properties": {1: ("", "N:Schema")},
    "SecurityRequirement": {1: ("", "N:StringArray")},
    "ApiKeySecurity": {1: ("type", "s"), 2: ("name", "s"), 3: ("in", "s"), 4: ("description", "s")},
}


def _wire(data: bytes) -> list[tuple[int, int, Any]]:
    out: list[tuple[int, int, Any]] = []
    i = 0

    def varint() -> int:
        nonlocal i
        shift = result = 0
        while True:
            byte = data[i]
            i += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return result

    while i < len(data):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            out.append((number, wire, varint()))
        elif wire == 1:
            out.append((number, wire, struct.unpack("<d", data[i : i + 8])[0]))
            i += 8
        elif wire == 2:
            size = varint()
            out.append((number, wire, data[i : i + size]))
            i += size
        else:
            raise AssertionError(f"wire type {wire}")
    return out


def _named(data: bytes) -> tuple[str, bytes]:
    fields = dict((n, v) for n, _, v in _wire(data))
    return fields[1].decode(), fields.get(2, b"")


def _any_yaml(data: bytes) -> Any:
    fields = dict((n, v) for n, _, v in _wire(data))
    return yaml.safe_load(fields[2].decode())


def _value(kind: str, raw: Any) -> Any:
    if kind in ("s", "S"):
        return raw.decode()
    if kind == "b":
        return bool(raw)
    if kind in ("i", "d"):
        return raw
    if kind in ("A", "R"):
        return _any_yaml(raw)
    if kind.startswith(("M:", "*:")):
        return _decode(kind[2:], raw)
    if kind == "SchemaItem":
        return _decode("Schema", dict((n, v) for n, _, v in _wire(raw))[1])
    if kind == "TypeItem":
        return [v.decode() for _, _, v in _wire(raw)]
    if kind == "ItemsItem":
        return [_decode("Schema", v) for _, _, v in _wire(raw)]
    if kind == "AdditionalPropertiesItem":
        number, _, inner = _wire(raw)[0]
        return _decode("Schema", inner) if number == 1 else bool(inner)
    raise AssertionError(kind)


def _decode(message: str, data: bytes) -> Any:
    if message == "ParametersItem":
        number, _, inner = _wire(data)[0]
        return _decode("JsonReference", inner) if number == 2 else _decode("Parameter", inner)
    if message == "Parameter":
        number, _, inner = _wire(data)[0]
        if number == 1:
            return _decode("BodyParameter", inner)
        where, _, sub = _wire(inner)[0]
        return _decode({3: "QueryParameterSubSchema", 4: "PathParameterSubSchema"}[where], sub)
    if message == "ResponseValue":
        number, _, inner = _wire(data)[0]
        return _decode("JsonReference" if number == 2 else "Response", inner)
    if message == "SecurityDefinitionsItem":
        number, _, inner = _wire(data)[0]
        assert number == 2  # api_key_security
        return _decode("ApiKeySecurity", inner)
    if message == "StringArray":
        return [v.decode() for _, _, v in _wire(data)]
    table = MESSAGES[message]
    out: dict[str, Any] = {}
    last = 0
    for number, _, raw in _wire(data):
        assert number >= last, f"{message}: field {number} after {last} (Go writes in field order)"
        last = number
        key, kind = table[number]
        if kind == "X":
            name, value = _named(raw)
            out[name] = _any_yaml(value)
        elif kind.startswith("N:"):
            name, value = _named(raw)
            target = out.setdefault(key, {}) if key else out
            target[name] = _decode(kind[2:], value)
        elif kind in ("S", "R") or kind.startswith("*:"):
            out.setdefault(key, []).append(_value(kind, raw))
        else:
            out[key] = _value(kind, raw)
    if message == "Schema":  # JSON writes one type / one items schema bare, not as a one-element list
        for key in ("type", "items"):
            if isinstance(out.get(key), list) and len(out[key]) == 1:
                out[key] = out[key][0]
    return out


@pytest.fixture
def built_in_only() -> Iterator[None]:
    """The built-in resources alone: the served resources are process-wide (`registry.set_custom`), and a test of
    another file run before this one in the same worker may have left its CRDs served."""
    custom = registry.RESOURCES[len(registry.BUILT_IN) :]
    registry.set_custom([])
    try:
        yield
    finally:
        registry.set_custom(custom)


@pytest.mark.usefixtures("built_in_only")
def test_protobuf_form_reads_back_as_the_json_document() -> None:
    doc = openapiv2.document()
    decoded = _decode("Document", doc.protobuf)
    assert decoded == orjson.loads(doc.json)


def test_the_encoder_refuses_what_gnostic_has_no_field_for() -> None:
    """gnostic's ParseDocument refuses a Swagger 2.0 schema with JSON-schema-only keys (`oneOf`); so does the
    encoder, so the shipped schemas' `oneOf`s can never reach a client unconverted."""
    with pytest.raises(gnostic.UnsupportedKey, match="oneOf"):
        gnostic.encode_document({"definitions": {"q": {"oneOf": [{"type": "string"}]}}})
    assert gnostic.encode_document({"swagger": "2.0"}) == b"\n\x032.0"


# ------------------------------------------------------------------------------------ over HTTP


def test_json_answer_carries_the_sha512_etag_and_varies_by_accept(http: httpx.Client) -> None:
    response = http.get("/openapi/v2", headers={"Accept": "application/json"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["etag"] == f'"{hashlib.sha512(response.content).hexdigest().upper()}"'
    assert "Accept" in response.headers.get_list("vary")
    assert response.json()["paths"]["/apis/batch/v1/namespaces/{namespace}/jobs"]["get"]["operationId"] == (
        "listBatchV1NamespacedJob"
    )
    again = http.get("/openapi/v2", headers={"Accept": "application/json", "If-None-Match": response.headers["etag"]})
    assert (again.status_code, again.content) == (304, b"")


def test_gzip_when_the_client_accepts_it(http: httpx.Client) -> None:
    with http.stream("GET", "/openapi/v2", headers={"Accept-Encoding": "gzip"}) as response:
        raw = b"".join(response.iter_raw())
        assert response.headers["content-encoding"] == "gzip"
        assert "Accept-Encoding" in response.headers.get_list("vary")
    assert gzip.decompress(raw) == openapiv2.document().json
    with http.stream("GET", "/openapi/v2", headers={"Accept-Encoding": "identity"}) as response:
        assert "content-encoding" not in response.headers
        assert b"".join(response.iter_raw()) == openapiv2.document().json


@pytest.mark.parametrize("accept", [PB, PB_CURRENT, f"{PB}, application/json", f"application/json;q=0.5, {PB}"])
def test_protobuf_answer(http: httpx.Client, accept: str) -> None:
    response = http.get("/openapi/v2", headers={"Accept": accept})
    assert response.status_code == 200
    assert response.headers["content-type"] == PB_CURRENT  # the deprecated `@` name is answered with the current
    assert response.content == openapiv2.document().protobuf
    assert response.headers["etag"] == f'"{hashlib.sha512(openapiv2.document().json).hexdigest().upper()}"'


@pytest.mark.parametrize(("accept", "code"), [("text/html", 406), ("", 200), ("*/*", 200), ("application/*", 200)])
def test_negotiation(http: httpx.Client, accept: str, code: int) -> None:
    response = http.get("/openapi/v2", headers={"Accept": accept} if accept else {})
    assert response.status_code == code
    if code == 200:
        assert response.headers["content-type"] == "application/json"


def test_write_methods_are_refused(http: httpx.Client) -> None:
    assert http.post("/openapi/v2", content=b"{}").status_code == 405


def test_needs_credentials(url: str) -> None:
    trust = ssl.create_default_context(cafile=str(shared_pki().ca_file))
    with httpx.Client(base_url=url, timeout=10, verify=trust) as anonymous:
        assert anonymous.get("/openapi/v2").status_code == 401


def test_python_client_reads_the_document(url: str) -> None:
    with client.ApiClient(python_client_config(url)) as api:
        method, target, headers, _, _ = api.param_serialize(
            "GET", "/openapi/v2", header_params={"Accept": "application/json"}, auth_settings=["BearerToken"]
        )
        response = api.call_api(method, target, header_params=headers)
        response.read()
        body = api.response_deserialize(response, {"200": "object"}).data
    assert body["swagger"] == "2.0"
    assert body["paths"]["/apis/batch/v1/namespaces/{namespace}/jobs/{name}/status"]["get"]["operationId"] == (
        "readBatchV1NamespacedJobStatus"
    )
    assert "io.k8s.api.batch.v1.Job" in body["definitions"]


# ------------------------------------------------------------------------------------ kubectl explain

EXPLAIN_JOBS = """KIND:     Job
VERSION:  batch/v1

DESCRIPTION:
     Job represents the configuration of a single job.

FIELDS:
   apiVersion\t<string>
     APIVersion defines the versioned schema of this representation of an
     object. Servers should convert recognized schemas to the latest internal
     value, and may reject unrecognized values. More info:
     https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources

   kind\t<string>
     Kind is a string value representing the REST resource this object
     represents. Servers may infer this from the endpoint the client submits
     requests to. Cannot be updated. In CamelCase. More info:
     https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds

   metadata\t<Object>
     Standard object's metadata. More info:
     https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata

   spec\t<Object>
     Specification of the desired behavior of a job. More info:
     https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status

   status\t<Object>
     Current status of a job. More info:
     https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status

"""

EXPLAIN_POD_FAILURE_POLICY = """KIND:     Job
VERSION:  batch/v1

RESOURCE: podFailurePolicy <Object>

DESCRIPTION:
     Specifies the policy of handling failed pods. In particular, it allows to
     specify the set of actions and conditions which need to be satisfied to
     take the associated action. If empty, the default behaviour applies - the
     counter of failed pods, represented by the jobs's .status.failed field, is
     incremented and it is checked against the backoffLimit. This field cannot
     be used in combination with restartPolicy=OnFailure.

     PodFailurePolicy describes how failed pods influence the backoffLimit.

FIELDS:
   rules\t<[]Object> -required-
     A list of pod failure policy rules. The rules are evaluated in order. Once
     a rule matches a Pod failure, the remaining of the rules are ignored. When
     no rule matches the Pod failure, the default handling applies - the counter
     of pod failures is incremented and it is checked against the backoffLimit.
     At most 20 elements are allowed.

"""


@pytest.fixture(scope="module")
def kubectl_env(url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("kubectl-openapiv2")
    kubeconfig.write(home / "kubeconfig", url, pki=shared_pki())
    return {"HOME": str(home), "KUBECONFIG": str(home / "kubeconfig"), "PATH": "/usr/local/bin:/usr/bin:/bin"}


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
@pytest.mark.parametrize(
    ("target", "expected"),
    [("jobs", EXPLAIN_JOBS), ("job.spec.podFailurePolicy", EXPLAIN_POD_FAILURE_POLICY)],
    ids=["jobs", "job.spec.podFailurePolicy"],
)
def test_kubectl_explain_plaintext_openapiv2(kubectl_env: dict[str, str], target: str, expected: str) -> None:
    """kubectl reads /openapi/v2 as protobuf through client-go's OpenAPISchema() (gnostic's proto.Unmarshal) and
    prints with its v2 explain printer, as on a 1.32 cluster."""
    proc = subprocess.run(
        ["kubectl", "explain", target, "--output=plaintext-openapiv2"],
        capture_output=True,
        text=True,
        env=kubectl_env,
        timeout=60,
        cwd=Path(kubectl_env["HOME"]),
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == expected


# ------------------------------------------------------------------------------------ metrics.k8s.io


def test_metrics_group_is_in_the_v3_index_and_in_v2(http: httpx.Client) -> None:
    """On a cluster the aggregator lists metrics-server's group version in /openapi/v3 and merges its paths and
    definitions into /openapi/v2."""
    link = http.get("/openapi/v3").json()["paths"]["apis/metrics.k8s.io/v1beta1"]["serverRelativeURL"]
    v3 = http.get(link).json()
    pod_metrics = v3["components"]["schemas"]["io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics"]
    assert pod_metrics["x-kubernetes-group-version-kind"] == [
        {"group": "metrics.k8s.io", "kind": "PodMetrics", "version": "v1beta1"}
    ]
    assert pod_metrics["required"] == ["timestamp", "window", "containers"]
    assert sorted(v3["paths"]) == [
        "/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods",
        "/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods/{name}",
        "/apis/metrics.k8s.io/v1beta1/nodes",
        "/apis/metrics.k8s.io/v1beta1/nodes/{name}",
    ]
    paths = _doc()["paths"]
    assert paths["/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods"]["get"]["operationId"] == (
        "listMetricsV1beta1NamespacedPodMetrics"
    )
    assert paths["/apis/metrics.k8s.io/v1beta1/nodes/{name}"].keys() == {"get", "parameters"}  # get and list only


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_explain_podmetrics(kubectl_env: dict[str, str]) -> None:
    proc = subprocess.run(
        ["kubectl", "explain", "podmetrics.containers"],
        capture_output=True,
        text=True,
        env=kubectl_env,
        timeout=60,
        cwd=Path(kubectl_env["HOME"]),
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.splitlines()[:6] == [
        "GROUP:      metrics.k8s.io",
        "KIND:       PodMetrics",
        "VERSION:    v1beta1",
        "",
        "FIELD: containers <[]ContainerMetrics>",
        "",
    ]
    assert "  usage\t<map[string]Quantity> -required-" in proc.stdout.splitlines()


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_apply_of_an_unknown_kind_gets_the_clusters_answer(kubectl_env: dict[str, str]) -> None:
    """kubectl validates a kind /openapi/v3 lacks against /openapi/v2 before mapping it; with v2 served the
    answer is the cluster's "no matches for kind" (it was `error validating data: the server could not find the
    requested resource` while v2 was a 404)."""
    manifest = Path(kubectl_env["HOME"]) / "v1beta1.yaml"
    manifest.write_text("apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: old\nspec: {}\n")
    proc = subprocess.run(
        ["kubectl", "apply", "-f", str(manifest)],
        capture_output=True,
        text=True,
        env=kubectl_env,
        timeout=60,
        cwd=Path(kubectl_env["HOME"]),
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f'error: resource mapping not found for name: "old" namespace: "" from "{manifest}": no matches for kind '
        '"CronJob" in version "batch/v1beta1"',
        "ensure CRDs are installed first",
    ]
