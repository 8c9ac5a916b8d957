"""Fuzzing the served API with hypothesis: malformed requests and mangled objects never cause a 5xx or a hang.

Every answer that is not a success must be a Kubernetes `Status` with a matching code.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjobs.server.patch import PatchError, json_merge, json_patch, strategic_merge
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.hypothesis_budget import examples
from tests.server.conftest import job_manifest, pod_manifest
from tests.support import client_tls, shared_pki

pytestmark = pytest.mark.slow

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=False), st.text(max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)

PATHS = [
    "/api/v1/namespaces/default/pods",
    "/api/v1/namespaces/default/pods/p",
    "/api/v1/namespaces/default/pods/p/status",
    "/api/v1/namespaces/default/pods/p/log",
    "/api/v1/namespaces/default/pods/p/eviction",
    "/api/v1/namespaces/default/pods/p/binding",
    "/apis/batch/v1/namespaces/default/jobs",
    "/apis/batch/v1/namespaces/default/jobs/j",
    "/apis/batch/v1/namespaces/default/jobs/j/status",
    "/api/v1/nodes",
    "/api/v1/nodes/n",
    "/api/v1/namespaces/default/events",
    "/api/v1/namespaces",
    "/api/v1/namespaces/default",
    "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
    "/apis/coordination.k8s.io/v1/namespaces/x/leases/l",
    "/apis/scheduling.k8s.io/v1/priorityclasses",
    "/api",
    "/apis",
    "/api/v1",
    "/openapi/v3",
    "/openapi/v2",
    "/version",
    "/x/y",
]
CONTENT_TYPES = [
    None,
    "application/json",
    "application/yaml",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/json-patch+json",
    "application/apply-patch+yaml",
    "text/plain",
    "application/vnd.kubernetes.protobuf",
]
QUERY_KEYS = [
    "continue",
    "allowWatchBookmarks",
    "labelSelector",
    "fieldSelector",
    "resourceVersion",
    "fieldValidation",
    "fieldManager",
    "dryRun",
    "propagationPolicy",
    "gracePeriodSeconds",
    "tailLines",
    "container",
    "includeObject",
    "limit",
    "timeoutSeconds",
    "force",
    "follow",
]


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    store = MemoryStore()
    with serve(store, pki=shared_pki()) as url, httpx.Client(base_url=url, timeout=10, verify=client_tls()) as client:
        client.post("/apis/batch/v1/namespaces/default/jobs", json=job_manifest("j"))
        client.post("/api/v1/namespaces/default/pods", json=pod_manifest("p"))
        client.post("/api/v1/nodes", json={"metadata": {"name": "n"}})
        yield client
    store.close()


def _check(response: httpx.Response) -> None:
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        status = response.json()
        assert status["kind"] == "Status" and status["code"] == response.status_code


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    path=st.sampled_from(PATHS),
    content_type=st.sampled_from(CONTENT_TYPES),
    body=st.one_of(json_values.map(orjson.dumps), st.binary(max_size=40)),
    query=st.dictionaries(st.sampled_from(QUERY_KEYS), st.text(max_size=10), max_size=3),
    watch=st.booleans(),
)
def test_raw_requests_never_fail_the_server(
    http: httpx.Client,
    method: str,
    path: str,
    content_type: str | None,
    body: bytes,
    query: dict[str, str],
    watch: bool,
) -> None:
    params = dict(query)
    if watch:
        params.update(watch="true", timeoutSeconds="0.2")
    params.pop("follow", None)
    headers = {"content-type": content_type} if content_type else {}
    response = http.request(method, path, params=params, content=body if method != "GET" else None, headers=headers)
    _check(response)


def _mutations() -> st.SearchStrategy[tuple[list[str], Any]]:
    paths = [
        ["spec", "parallelism"],
        ["spec", "completions"],
        ["spec", "backoffLimit"],
        ["spec", "template"],
        ["spec", "template", "spec", "containers"],
        ["spec", "template", "spec", "restartPolicy"],
        ["metadata", "name"],
        ["metadata", "labels"],
        ["spec", "selector"],
        ["spec", "podFailurePolicy"],
        ["metadata"],
        ["spec"],
        ["status"],
        ["spec", "completionMode"],
        ["spec", "activeDeadlineSeconds"],
    ]
    return st.tuples(st.sampled_from(paths), json_values)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations=st.lists(_mutations(), min_size=1, max_size=3), update=st.booleans())
def test_mangled_jobs_are_rejected_cleanly(
    http: httpx.Client, mutations: list[tuple[list[str], Any]], update: bool
) -> None:
    job: Any = copy.deepcopy(job_manifest("j" if update else "fz"))
    for path, value in mutations:
        node = job
        for key in path[:-1]:
            if not isinstance(node, dict):
                break
            node = node.setdefault(key, {})
        if isinstance(node, dict):
            node[path[-1]] = value
    if update:
        response = http.put("/apis/batch/v1/namespaces/default/jobs/j", content=orjson.dumps(job))
    else:
        response = http.post("/apis/batch/v1/namespaces/default/jobs", content=orjson.dumps(job))
        if response.status_code == 201:
            http.delete("/apis/batch/v1/namespaces/default/jobs/" + response.json()["metadata"]["name"])
    _check(response)


@settings(max_examples=examples(300), deadline=None)
@given(original=json_values, patch=json_values)
def test_patch_functions_only_raise_patch_errors(original: Any, patch: Any) -> None:
    for apply in (json_merge, json_patch, strategic_merge):
        with contextlib.suppress(PatchError):
            apply(original, patch)


@settings(max_examples=examples(500), deadline=None)
@given(payload=st.binary(max_size=200), prefix=st.booleans())
def test_protobuf_decoder_only_raises_api_errors(payload: bytes, prefix: bool) -> None:
    from kjobs.api.errors import ApiError
    from kjobs.server import protobuf

    body = protobuf.MAGIC + payload if prefix else payload
    with contextlib.suppress(ApiError):
        assert isinstance(protobuf.decode(body), dict)


@settings(max_examples=examples(500), deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 169), st.integers(0, 255)), min_size=1, max_size=4))
def test_mutated_kubectl_protobuf_bodies_only_raise_api_errors(edits: list[tuple[int, int]]) -> None:
    from kjobs.api.errors import ApiError
    from kjobs.server import protobuf
    from tests.server.test_protobuf import CREATE_JOB

    body = bytearray(CREATE_JOB)
    for at, value in edits:
        body[at % len(body)] = value
    with contextlib.suppress(ApiError):
        assert isinstance(protobuf.decode(bytes(body)), dict)


def _from_schema(node: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values shaped by a Kubernetes OpenAPI schema (types, nested properties), to depth 6."""
    from kjobs.server import schema as k8s_schema

    resolved = k8s_schema._resolve(node)
    kind = resolved.get("type")
    if depth > 6:
        return st.none()
    if "properties" in resolved:
        props = resolved["properties"]
        keys = sorted(props)
        return st.fixed_dictionaries(
            {}, optional={k: st.deferred(lambda k=k: _from_schema(props[k], depth + 1)) for k in keys}
        )
    if kind == "array":
        return st.lists(_from_schema(resolved.get("items", {}), depth + 1), max_size=2)
    if kind == "object":
        extra = resolved.get("additionalProperties")
        values = _from_schema(extra, depth + 1) if isinstance(extra, dict) else json_scalars
        return st.dictionaries(st.text(max_size=6), values, max_size=2)
    if kind == "integer":
        return st.integers(-3, 2**31)
    if kind == "boolean":
        return st.booleans()
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if "enum" in resolved:
        return st.sampled_from(resolved["enum"])
    return st.one_of(st.text(max_size=8), st.sampled_from(["Never", "OnFailure", "Indexed", "In", "FailJob", "main"]))


def _job_spec_strategy() -> st.SearchStrategy[Any]:
    from kjobs.server import schema as k8s_schema

    return _from_schema(k8s_schema.schemas()["io.k8s.api.batch.v1.JobSpec"])


@settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=st.deferred(_job_spec_strategy))
def test_schema_shaped_jobs_never_fail_the_server(http: httpx.Client, spec: Any) -> None:
    job = job_manifest("sf")
    base_template = job["spec"]["template"]  # type: ignore[index]
    job["spec"] = {"template": base_template, **spec}  # a valid pod template unless the draw replaces it
    response = http.post("/apis/batch/v1/namespaces/default/jobs?fieldValidation=Strict", content=orjson.dumps(job))
    _check(response)
    if response.status_code == 201:
        http.delete("/apis/batch/v1/namespaces/default/jobs/sf")


def _schema_strategy(name: str) -> st.SearchStrategy[Any]:
    from kjobs.server import schema as k8s_schema

    return _from_schema(k8s_schema.schemas()[name])


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    pod_spec=st.deferred(lambda: _schema_strategy("io.k8s.api.core.v1.PodSpec")),
    pod_status=st.deferred(lambda: _schema_strategy("io.k8s.api.core.v1.PodStatus")),
    node_status=st.deferred(lambda: _schema_strategy("io.k8s.api.core.v1.NodeStatus")),
)
def test_schema_shaped_pods_and_statuses_never_fail_the_server(
    http: httpx.Client, pod_spec: Any, pod_status: Any, node_status: Any
) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sp"}, "spec": pod_spec}
    created = http.post("/api/v1/namespaces/default/pods", content=orjson.dumps(pod))
    _check(created)
    if created.status_code == 201:
        http.request("DELETE", "/api/v1/namespaces/default/pods/sp", json={"gracePeriodSeconds": 0})
    _check(
        http.patch(
            "/api/v1/namespaces/default/pods/p/status",
            content=orjson.dumps({"status": pod_status}),
            headers={"content-type": "application/merge-patch+json"},
        )
    )
    _check(
        http.patch(
            "/api/v1/nodes/n/status",
            content=orjson.dumps({"status": node_status}),
            headers={"content-type": "application/strategic-merge-patch+json"},
        )
    )
