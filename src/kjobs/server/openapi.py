"""OpenAPI v3 documents: `/openapi/v3` (index) and `/openapi/v3/{api/v1|apis/G/V}` per group version.

kubectl (1.29+) reads them for two reasons: to learn that the server honours `fieldValidation` (then it
sends `fieldValidation=Strict` and skips client-side validation), and for `kubectl explain`. Each operation
therefore carries `x-kubernetes-group-version-kind` and the `fieldValidation` parameter; PATCH lists the
patch media types, and `components.schemas` are Kubernetes' own 1.32 definitions (see `schema`).
Documents are content-addressed: the index links them with `?hash=`, served immutable with an ETag.
"""

from __future__ import annotations

import functools
import hashlib

import orjson

from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj
from kjobs.server import registry, schema
from kjobs.server.customresources import CustomResource, openapi_schemas
from kjobs.server.registry import GROUPS, Resource, resources_of
from kjobs.server.resourcemetrics import GROUP as METRICS_GROUP
from kjobs.server.resourcemetrics import RESOURCES as METRICS_PLURALS
from kjobs.server.resourcemetrics import VERBS as METRICS_VERBS
from kjobs.server.resourcemetrics import VERSION as METRICS_VERSION

METRICS_RESOURCES = [
    Resource(METRICS_GROUP, METRICS_VERSION, plural, "", kind, namespaced, has_status=False, only=tuple(METRICS_VERBS))
    for plural, kind, namespaced in METRICS_PLURALS
]
"""metrics.k8s.io's pods and nodes (`kjobs.server.resourcemetrics`, not registry rows), as OpenAPI describes them:
get and list."""


def _served() -> dict[str, list[str]]:
    """Every group's versions with an OpenAPI document: the registry's, then metrics.k8s.io (an aggregated group
    on a cluster, listed in the index all the same)."""
    return {**GROUPS, METRICS_GROUP: [METRICS_VERSION]}


def _resources(group: str, version: str) -> list[Resource]:
    if group == METRICS_GROUP:
        return METRICS_RESOURCES if version == METRICS_VERSION else []
    return resources_of(group, version)


PATCH_TYPES = [
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
]


def _gv_key(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _ref(r: Resource, *, list_kind: bool = False) -> Obj:
    name = r.openapi_name if isinstance(r, CustomResource) else r.schema_name
    if name is None:
        return {"type": "object"}
    return {"$ref": f"#/components/schemas/{name}List" if list_kind else f"#/components/schemas/{name}"}


def _op(r: Resource, action: str, *, body: bool = False, patch: bool = False, list_kind: bool = False) -> Obj:
    params: list[Obj] = [{"name": "pretty", "in": "query", "schema": {"type": "string", "uniqueItems": True}}]
    if action in ("post", "put", "patch"):
        params += [
            {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
            {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
            {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
        ]
    if patch:
        params.append({"name": "force", "in": "query", "schema": {"type": "boolean", "uniqueItems": True}})
    op: Obj = {
        "tags": [r.group or "core"],
        "operationId": f"{action}{r.kind}",
        "parameters": params,
        "responses": {
            "200": {"description": "OK", "content": {"application/json": {"schema": _ref(r, list_kind=list_kind)}}}
        },
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": r.group, "version": r.version, "kind": r.kind},
    }
    if body:
        op["requestBody"] = {"content": {"*/*": {"schema": _ref(r)}}, "required": True}
    if patch:
        # a custom resource takes no strategic merge patch: kubectl then sends JSON merge patches for it
        types = [t for t in PATCH_TYPES if "strategic" not in t] if isinstance(r, CustomResource) else PATCH_TYPES
        op["requestBody"] = {"content": {t: {"schema": {"type": "object"}} for t in types}, "required": True}
    return op


def _paths(r: Resource) -> Obj:
    base = f"/{_gv_key(r.group, r.version)}"
    if r.review:  # created, never stored: one path, POST only (as kube-apiserver publishes it)
        return {f"{base}/{r.plural}": {"post": _op(r, "post", body=True), "parameters": []}}
    scope = f"{base}/namespaces/{{namespace}}" if r.namespaced else base
    common: list[Obj] = [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}]
    if r.namespaced:
        common.append({"name": "namespace", "in": "path", "required": True, "schema": {"type": "string"}})
    verbs = set(r.verbs)
    item: Obj = {
        method: op
        for method, verb, op in (
            ("get", "get", _op(r, "get")),
            ("put", "update", _op(r, "put", body=True)),
            ("patch", "patch", _op(r, "patch", patch=True)),
            ("delete", "delete", _op(r, "delete")),
        )
        if verb in verbs
    }
    item["parameters"] = common
    collection: Obj = {
        method: op
        for method, verb, op in (
            ("get", "list", _op(r, "list", list_kind=True)),
            ("post", "create", _op(r, "post", body=True)),
            ("delete", "deletecollection", _op(r, "deletecollection")),
        )
        if verb in verbs
    }
    collection["parameters"] = common[1:]
    paths: Obj = {f"{scope}/{r.plural}": collection, f"{scope}/{r.plural}/{{name}}": item}
    for sub in ("status", "ephemeralcontainers"):  # the subresources that read and write the object itself
        if sub not in r.subresources:
            continue
        paths[f"{scope}/{r.plural}/{{name}}/{sub}"] = {
            "get": _op(r, "get"),
            "put": _op(r, "put", body=True),
            "patch": _op(r, "patch", patch=True),
            "parameters": common,
        }
    return paths


@functools.cache
def group_version_document(group: str, version: str, features: FeatureGates = DEFAULT) -> bytes | None:
    """The OpenAPI v3 document of one group version (None if not served), with the fields of the gates that
    are on (`kubectl explain` shows exactly those)."""
    if version not in _served().get(group, ()):
        return None
    paths: Obj = {}
    rows = _resources(group, version)
    for r in rows:
        paths.update(_paths(r))
    custom = openapi_schemas(rows)  # a CRD's kinds: their own schemas (kjobs.server.customresources)
    doc = {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": {**schema.schemas(features), **custom} if custom else schema.schemas(features)},
    }
    return orjson.dumps(doc)


def document_hash(group: str, version: str, features: FeatureGates = DEFAULT) -> str:
    """The content hash the index links a document with (also its ETag)."""
    doc = group_version_document(group, version, features) or b""
    return hashlib.sha512(doc).hexdigest()[:128].upper()


@functools.cache
def index(features: FeatureGates = DEFAULT) -> bytes:
    """`GET /openapi/v3`."""
    paths = {
        _gv_key(g, v): {"serverRelativeURL": f"/openapi/v3/{_gv_key(g, v)}?hash={document_hash(g, v, features)}"}
        for g, versions in _served().items()
        for v in versions
    }
    return orjson.dumps({"paths": paths})


def _forget() -> None:
    group_version_document.cache_clear()
    index.cache_clear()


registry.on_change(_forget)
