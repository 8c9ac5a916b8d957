"""Stop 37's hostile inputs, in process (the ASGI app, no sockets): every served kind's body with a wrong value at
every field path, each patch type's directives and pointers in the wrong places, list and watch parameters at
their syntax edges, forged and foreign continue tokens, hostile paths and subresource parameters. Every answer is
below 500 (504 allowed: a wait the client asked for), every refusal a `Status` with its code, no request takes more
than `BOUND` seconds, a refused request writes nothing (the store's revision and the target object are unchanged)
and the server keeps serving.

Fixed seeds and bounded example counts here (about 30 s); `KJOBS_FUZZ_EXAMPLES=N` runs N examples of each property
with random seeds (docs/api-robustness.md, "Stop 37", says how many were run).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjobs.api.timeutil import parse_time
from kjobs.server.app import App, create_app
from kjobs.store import MemoryStore
from tests.hypothesis_budget import examples
from tests.server.fuzz37_support import (
    FIELD_SELECTORS,
    KINDS,
    LABEL_SELECTORS,
    QUERY_VALUES,
    RAW_NUMBERS,
    Answer,
    Kind,
    call,
    check_status,
    continue_token,
    encode,
    gzipped,
    hostile_json,
    paths_of,
    pointer,
    q,
    replaced,
)

BOUND = 10.0
"""Seconds any one request may take in process (most take milliseconds; a 3 MiB YAML body takes seconds)."""

EXAMPLES = int(os.environ.get("KJOBS_FUZZ_EXAMPLES", "0"))


def _settings(default: int) -> settings:
    return settings(
        max_examples=EXAMPLES or examples(default),
        deadline=None,
        derandomize=not EXAMPLES,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    )


class Server:
    """The app over a MemoryStore on a loop of its own, with one object of every kind in KINDS."""

    def __init__(self) -> None:
        self.store = MemoryStore()
        self.app: App = create_app(self.store, resource_version_wait=0.05, min_request_timeout=5)
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self.app.startup())
        for kind in KINDS:
            self.seed(kind)

    def seed(self, kind: Kind) -> None:
        if kind.plural == "widgets":  # served once the CRD is Established
            for _ in range(200):
                if self.request("GET", kind.collection()).status == 200:
                    break
                self.loop.run_until_complete(asyncio.sleep(0.02))
        if self.request("GET", kind.item()).status == 200:
            return
        created = self.request("POST", kind.collection(), body=orjson.dumps(kind.body))
        assert created.status == 201, (kind.plural, created.status, created.body)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: bytes = b"",
        headers: dict[str, str | bytes] | None = None,
        body: bytes = b"",
        stream_for: float = 0.02,  # a watch that started: its status is what is checked
    ) -> Answer:
        headers = {"content-type": "application/json", **(headers or {})}
        return self.loop.run_until_complete(
            call(self.app, method, path, query=query, headers=headers, body=body, stream_for=stream_for, budget=60)
        )

    def get(self, path: str) -> Any:
        answer = self.request("GET", path)
        return answer.json() if answer.status == 200 else answer.status

    def close(self) -> None:
        self.app.shutdown()
        self.loop.close()
        self.store.close()


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


def _attempt(
    server: Server,
    method: str,
    path: str,
    *,
    query: bytes = b"",
    headers: dict[str, str | bytes] | None = None,
    body: bytes = b"",
    watched: str | None = None,
) -> Answer:
    """Send one hostile request and check the promise; `watched` is an object path that a refusal must leave as
    it was."""
    before_rv = server.app.storage.revision
    before = server.get(watched) if watched else None
    answer = server.request(method, path, query=query, headers=headers, body=body)
    check_status(answer, method, path)
    assert answer.seconds < BOUND, (method, path, answer.seconds)
    if answer.status >= 400 or b"dryRun=All" in query:
        assert server.app.storage.revision == before_rv, (method, path, answer.status, answer.body[:500])
        if watched:
            assert server.get(watched) == before
    return answer


def _restore(server: Server, kind: Kind) -> None:
    """Put back a seed an accepted request deleted or renamed away."""
    server.seed(kind)


# ---------------------------------------------------------------------------------------------- bodies

OPERATIONS = ["create", "create-yaml", "update", "merge", "strategic", "apply", "apply-yaml", "json-patch"]


@_settings(400)
@given(
    kind=st.sampled_from(KINDS),
    operation=st.sampled_from(OPERATIONS),
    data=st.data(),
    dry_run=st.booleans(),
    raw=st.one_of(st.none(), st.sampled_from(RAW_NUMBERS)),
    gzip=st.integers(0, 15),
)
def test_every_kind_with_a_wrong_value_at_any_field_path(
    server: Server, kind: Kind, operation: str, data: st.DataObject, dry_run: bool, raw: bytes | None, gzip: int
) -> None:
    body = kind.body
    where = data.draw(st.sampled_from(paths_of(body)), label="where")
    value = "@RAW@" if raw is not None else data.draw(hostile_json(), label="value")
    if operation == "create":
        spoiled = replaced(body, where, value)
        if (
            isinstance(spoiled, dict)
            and isinstance(spoiled.get("metadata"), dict)
            and where[:2] != ("metadata", "name")
        ):
            spoiled["metadata"]["name"] = "fzcopy"
        method, path, ctype, content = "POST", kind.collection(), "application/json", encode(spoiled, raw)
    elif operation == "create-yaml":
        spoiled = replaced(body, where, value if raw is None else 1)
        method, path, ctype = "POST", kind.collection(), "application/yaml"
        content = yaml.safe_dump(spoiled, allow_unicode=True).encode() if raw is None else encode(spoiled, raw)
    elif operation == "update":
        spoiled = replaced(body, where, value)
        method, path, ctype, content = "PUT", kind.item(), "application/json", encode(spoiled, raw)
    elif operation in ("merge", "strategic", "apply"):
        spoiled = replaced(body, where, value)
        ctype = {
            "merge": "application/merge-patch+json",
            "strategic": "application/strategic-merge-patch+json",
            "apply": "application/apply-patch+yaml",
        }[operation]
        method, path, content = "PATCH", kind.item(), encode(spoiled, raw)
    elif operation == "apply-yaml":
        spoiled = replaced(body, where, value if raw is None else 1)
        method, path, ctype = "PATCH", kind.item(), "application/apply-patch+yaml"
        content = yaml.safe_dump(spoiled, allow_unicode=True).encode()
    else:
        op = data.draw(st.sampled_from(["replace", "add", "test"]), label="op")
        patch = [{"op": op, "path": pointer(where), "value": value}]
        method, path, ctype, content = "PATCH", kind.item(), "application/json-patch+json", encode(patch, raw)
    params = {"fieldManager": "fz"} if "apply" in operation else {}
    if dry_run:
        params["dryRun"] = "All"
    validation = data.draw(st.sampled_from([None, "Strict", "Warn", "Ignore", "strict", ""]), label="fieldValidation")
    if validation is not None:
        params["fieldValidation"] = validation
    headers: dict[str, str | bytes] = {"content-type": ctype}
    if gzip == 0:
        headers["content-encoding"] = "gzip"
        content = gzipped(content)
    _attempt(server, method, path, query=q(params), headers=headers, body=content, watched=kind.item())
    _restore(server, kind)


# ---------------------------------------------------------------------------------------------- patches

BAD_POINTERS = [
    "",
    "/",
    "metadata",
    "/metadata/",
    "/metadata/labels/~2",
    "/metadata/labels/~",
    "/metadata/labels/a~1b",
    "/spec/template/spec/containers/-",
    "/spec/template/spec/containers/-1",
    "/spec/template/spec/containers/01",
    "/spec/template/spec/containers/99",
    "/spec/template/spec/containers/9223372036854775808",
    "/spec/template/spec/containers/0/name/x",
    "/metadata/name/0",
    "/data/k/x",
    "/nope/deeper/still",
    "/metadata/managedFields/0/fieldsV1",
    "/metadata/resourceVersion",
    "/metadata/uid",
    "/" + "/".join(["a"] * 200),
]


@_settings(300)
@given(kind=st.sampled_from(KINDS), data=st.data(), dry_run=st.booleans())
def test_json_patches_with_any_op_and_pointer(server: Server, kind: Kind, data: st.DataObject, dry_run: bool) -> None:
    pointers = st.one_of(st.sampled_from(BAD_POINTERS), st.sampled_from(paths_of(kind.body)).map(pointer))
    op = st.fixed_dictionaries(
        {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus", "", "ADD"])},
        optional={
            "path": st.one_of(pointers, hostile_json(2)),
            "from": st.one_of(pointers, hostile_json(2)),
            "value": hostile_json(3),
        },
    )
    patch = data.draw(st.one_of(st.lists(op, max_size=4), hostile_json(3)), label="patch")
    query = q({"dryRun": "All"} if dry_run else {})
    headers: dict[str, str | bytes] = {"content-type": "application/json-patch+json"}
    _attempt(server, "PATCH", kind.item(), query=query, headers=headers, body=encode(patch), watched=kind.item())
    _restore(server, kind)


DIRECTIVE_KEYS = [
    "$patch",
    "$retainKeys",
    "$deleteFromPrimitiveList/finalizers",
    "$deleteFromPrimitiveList/command",
    "$deleteFromPrimitiveList/containers",
    "$deleteFromPrimitiveList/labels",
    "$setElementOrder/containers",
    "$setElementOrder/env",
    "$setElementOrder/labels",
    "$setElementOrder/command",
    "$setElementOrder/",
    "$deleteFromPrimitiveList/",
    "$bogus",
]
DIRECTIVE_VALUES: list[Any] = [
    "replace",
    "delete",
    "merge",
    "bogus",
    5,
    None,
    [],
    ["name"],
    [{"name": "main"}],
    [{"name": 5}],
    [{"x": 1}],
    {"name": "main"},
    ["a", 1, None],
]


@_settings(300)
@given(kind=st.sampled_from(KINDS), data=st.data(), dry_run=st.booleans())
def test_strategic_merge_directives_anywhere(server: Server, kind: Kind, data: st.DataObject, dry_run: bool) -> None:
    body = orjson.loads(orjson.dumps(kind.body))
    places = [p for p in paths_of(body) if isinstance(_at(body, p), (dict, list))]
    for _ in range(data.draw(st.integers(1, 3), label="count")):
        where = data.draw(st.sampled_from(places), label="where")
        node = _at(body, where)
        key = data.draw(st.sampled_from(DIRECTIVE_KEYS), label="key")
        value = data.draw(st.sampled_from(DIRECTIVE_VALUES), label="directive")
        if isinstance(node, dict):
            node[key] = value
        else:
            node.append({key: value})
    query = q({"dryRun": "All"} if dry_run else {})
    headers: dict[str, str | bytes] = {"content-type": "application/strategic-merge-patch+json"}
    _attempt(server, "PATCH", kind.item(), query=query, headers=headers, body=encode(body), watched=kind.item())
    _restore(server, kind)


def _at(body: Any, where: tuple[Any, ...]) -> Any:
    for key in where:
        body = body[key]
    return body


MANAGED_FIELDS: list[Any] = [
    [],
    [{}],
    5,
    [{"manager": "x", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:a": {}}}],
    [{"manager": "x", "operation": "Bogus", "fieldsType": "FieldsV2"}],
    [{"manager": 5, "fieldsV1": "x"}],
    [{"manager": "x", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:x": 5}}}],
    [{"manager": "x", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"bad key": {}}}],
    [{"manager": "x", "time": "yesterday"}],
]
FIELD_MANAGERS = ["fz", "", "x" * 128, "x" * 129, "a\x07", "\u00e9", "a b", "kubectl", "x" * 10_000]


@_settings(250)
@given(
    kind=st.sampled_from(KINDS),
    managed=st.sampled_from(MANAGED_FIELDS),
    manager=st.one_of(st.none(), st.sampled_from(FIELD_MANAGERS)),
    force=st.sampled_from([None, "true", "false", "1", "yes", ""]),
    as_yaml=st.booleans(),
    dry_run=st.booleans(),
    method=st.sampled_from(["apply", "create", "update", "merge"]),
)
def test_apply_and_writes_with_managed_fields_force_and_field_managers(
    server: Server,
    kind: Kind,
    managed: Any,
    manager: str | None,
    force: str | None,
    as_yaml: bool,
    dry_run: bool,
    method: str,
) -> None:
    body = orjson.loads(orjson.dumps(kind.body))
    body["metadata"]["managedFields"] = managed
    params: list[tuple[str, str]] = []
    if manager is not None:
        params.append(("fieldManager", manager))
    if force is not None:
        params.append(("force", force))
    if dry_run:
        params.append(("dryRun", "All"))
    content = yaml.safe_dump(body).encode() if as_yaml else orjson.dumps(body)
    verb, path, ctype = {
        "apply": ("PATCH", kind.item(), "application/apply-patch+yaml"),
        "create": ("POST", kind.collection(), "application/yaml" if as_yaml else "application/json"),
        "update": ("PUT", kind.item(), "application/yaml" if as_yaml else "application/json"),
        "merge": ("PATCH", kind.item(), "application/merge-patch+json"),
    }[method]
    if method == "merge":
        content = orjson.dumps({"metadata": {"managedFields": managed}})
    _attempt(server, verb, path, query=q(params), headers={"content-type": ctype}, body=content, watched=kind.item())
    _restore(server, kind)


# ---------------------------------------------------------------------------------------------- deletes

DELETE_BODIES: list[Any] = [
    None,
    {},
    {"gracePeriodSeconds": -1},
    {"gracePeriodSeconds": 2**63 - 1},
    {"gracePeriodSeconds": "30"},
    {"propagationPolicy": "bogus"},
    {"propagationPolicy": "Foreground", "dryRun": ["All"]},
    {"preconditions": {"uid": "not-the-uid"}},
    {"preconditions": {"resourceVersion": "1"}},
    {"preconditions": {"uid": None, "resourceVersion": 5}},
    {"apiVersion": "v1", "kind": "DeleteOptions", "dryRun": ["All", "All"]},
    {"kind": "Pod"},
    {"orphanDependents": "yes"},
    {"ignoreStoreReadErrorWithClusterBreakingPotential": True},
]


@_settings(250)
@given(
    kind=st.sampled_from(KINDS),
    body=st.sampled_from(DELETE_BODIES),
    params=st.lists(
        st.tuples(
            st.sampled_from(["gracePeriodSeconds", "propagationPolicy", "orphanDependents", "dryRun", "labelSelector"]),
            st.sampled_from(["-1", "0", "-9223372036854775808", "9223372036854775807", "1.5", "Orphan", "bogus"]),
        ),
        max_size=3,
    ),
    collection=st.booleans(),
)
def test_deletes_with_hostile_options(
    server: Server, kind: Kind, body: Any, params: list[tuple[str, str]], collection: bool
) -> None:
    content = b"" if body is None else orjson.dumps(body)
    path = kind.collection() if collection else kind.item()
    _attempt(server, "DELETE", path, query=q(params), body=content, watched=None if collection else kind.item())
    for k in KINDS:
        _restore(server, k)


# ---------------------------------------------------------------------------------------------- queries


@_settings(400)
@given(
    kind=st.sampled_from(KINDS),
    data=st.data(),
    watch=st.booleans(),
    all_namespaces=st.booleans(),
)
def test_list_and_watch_parameters_at_their_edges(
    server: Server, kind: Kind, data: st.DataObject, watch: bool, all_namespaces: bool
) -> None:
    params: list[tuple[str, str]] = []
    draws: dict[str, st.SearchStrategy[str]] = {
        "labelSelector": LABEL_SELECTORS,
        "fieldSelector": FIELD_SELECTORS,
        "limit": st.sampled_from(["1", "0", "-1", "500", "1.5", "x", "9223372036854775807"]),
        "continue": st.one_of(
            st.sampled_from(["", "x", "%%%", "e30", "bnVsbA", "W10", "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ"]),
            st.builds(
                continue_token,
                st.sampled_from([1, 2, 10**12, 2**63, -5]),
                st.sampled_from(["default/fzjob", "fzjob", "kube-system/x", "/", "\u00e9", "default/" + "x" * 500]),
                st.sampled_from(["meta.k8s.io/v1", "v9", ""]),
            ),
        ),
        "resourceVersion": st.sampled_from(["", "0", "1", "5", "999999999", "x", "-1", "18446744073709551615"]),
        "resourceVersionMatch": st.sampled_from(["", "Exact", "NotOlderThan", "MostRecent", "bogus"]),
        "allowWatchBookmarks": st.sampled_from(["true", "false", "x", ""]),
        "sendInitialEvents": st.sampled_from(["true", "false", "x", ""]),
        "timeoutSeconds": st.sampled_from(["0", "1", "-1", "-9223372036854775808", "9223372036854775807", "1.5"]),
        "includeObject": st.sampled_from(["None", "Metadata", "Object", "x"]),
        "pretty": st.sampled_from(["true", "x"]),
        "watch": st.sampled_from(["true", "1", "false", "x", ""]),
    }
    chosen = data.draw(st.lists(st.sampled_from(sorted(draws)), max_size=5, unique=True), label="keys")
    for key in chosen:
        params.append((key, data.draw(draws[key], label=key)))
    if watch:
        params.append(("watch", "true"))
    accept = data.draw(
        st.sampled_from(
            [
                "application/json",
                "application/json;as=Table;v=v1;g=meta.k8s.io",
                "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
                "application/yaml",
                "application/vnd.kubernetes.protobuf",
                "text/html",
                "*/*",
            ]
        ),
        label="accept",
    )
    path = kind.collection() if kind.namespaced and not all_namespaces else f"{kind.prefix}/{kind.plural}"
    _attempt(server, "GET", path, query=q(params), headers={"accept": accept})


def test_a_continue_token_of_another_resource_lists_from_its_key_not_500(server: Server) -> None:
    """A token is a store key and a revision; one from the jobs list used on pods starts at that key (kube's etcd
    store checks only the key's form)."""
    first = server.request("GET", KINDS[0].collection(), query=q({"limit": "1"}))
    token = first.json()["metadata"].get("continue") or continue_token(server.app.storage.revision, "default/fzjob")
    for kind in KINDS:
        _attempt(server, "GET", kind.collection(), query=q({"limit": "1", "continue": token}))


# ---------------------------------------------------------------------------------------------- paths

SEGMENTS = [
    "",
    ".",
    "..",
    "%2e%2e",
    "%2E",
    "%2F",
    "a%2Fb",
    "%00",
    "%ZZ",
    "%",
    "%C3%A9",
    "%ff",
    "A",
    "a.b",
    "a..b",
    "-a",
    "a-",
    "x" * 254,
    "x" * 5000,
    "fzjob",
    "default",
    "kube-system",
    "status",
    "scale",
    "log",
    "v1",
    "v9",
    "namespaces",
    "api",
    "apis",
    "batch",
    ";a=b",
    "a?b",
    "*",
    "~",
]


@_settings(400)
@given(
    kind=st.sampled_from(KINDS),
    data=st.data(),
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]),
)
def test_paths_with_encoded_slashes_dot_segments_and_bad_names(
    server: Server, kind: Kind, data: st.DataObject, method: str
) -> None:
    shape = data.draw(st.integers(0, 3), label="shape")
    segs = st.sampled_from(SEGMENTS)
    if shape == 0:  # collection/<bad>[/<bad>]
        tail = data.draw(st.lists(segs, min_size=1, max_size=2), label="tail")
        path = kind.collection() + "/" + "/".join(tail)
    elif shape == 1:  # a bad namespace
        path = f"{kind.prefix}/namespaces/{data.draw(segs, label='ns')}/{kind.plural}"
    elif shape == 2:  # unknown group/version/kind pieces
        path = "/" + "/".join(data.draw(st.lists(segs, min_size=1, max_size=6), label="parts"))
    else:  # a prefix of a real path with a bad piece spliced in
        parts = kind.item().split("/")
        at = data.draw(st.integers(1, len(parts) - 1), label="at")
        parts[at] = data.draw(segs, label="piece")
        path = "/".join(parts)
    body = orjson.dumps(kind.body) if method in ("POST", "PUT") else b"{}"
    ctype = "application/merge-patch+json" if method == "PATCH" else "application/json"
    answer = _attempt(server, method, path, headers={"content-type": ctype}, body=body)
    if method == "DELETE" or answer.status < 300:
        for k in KINDS:
            _restore(server, k)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: f"{k.prefix.split('/')[-2]}.{k.plural}")
def test_a_body_whose_namespace_or_name_differs_from_the_path_is_refused(server: Server, kind: Kind) -> None:
    """kube-apiserver: `the namespace of the provided object does not match the namespace sent on the request`
    (400) and `the name of the object (x) does not match the name on the URL (y)` (400, update)."""
    other_ns = {**kind.body, "metadata": {**kind.body["metadata"], "name": "fzcopy", "namespace": "kube-system"}}
    answer = _attempt(server, "POST", kind.collection(), body=orjson.dumps(other_ns))
    if kind.namespaced:
        assert answer.status == 400, answer.body
        assert orjson.loads(answer.body)["message"] == (
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    other_name = {**kind.body, "metadata": {**kind.body["metadata"], "name": "someone-else"}}
    answer = _attempt(server, "PUT", kind.item(), body=orjson.dumps(other_name), watched=kind.item())
    assert answer.status == 400, answer.body
    name = kind.body["metadata"]["name"]
    assert orjson.loads(answer.body)["message"] == (
        f"the name of the object (someone-else) does not match the name on the URL ({name})"
    )
    if answer.status < 300:
        server.request("DELETE", kind.item("fzcopy"))


# ---------------------------------------------------------------------------------------------- subresources


@_settings(300)
@given(
    sub=st.sampled_from(["log", "exec", "attach", "portforward", "proxy", "eviction", "binding", "status", "scale"]),
    kind=st.sampled_from([k for k in KINDS if k.plural in ("pods", "widgets", "jobs", "nodes", "services")]),
    data=st.data(),
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH"]),
)
def test_subresource_parameters_and_bodies_at_their_edges(
    server: Server, sub: str, kind: Kind, data: st.DataObject, method: str
) -> None:
    keys = [
        "container",
        "follow",
        "previous",
        "timestamps",
        "tailLines",
        "limitBytes",
        "sinceSeconds",
        "sinceTime",
        "insecureSkipTLSVerifyBackend",
        "command",
        "stdin",
        "stdout",
        "stderr",
        "tty",
        "ports",
        "dryRun",
        "fieldManager",
    ]
    values = st.one_of(
        st.sampled_from(QUERY_VALUES),
        st.sampled_from(["main", "nope", "0001-01-01T00:00:00Z", "2026-13-01T00:00:00Z", "65536", "80,x", "0"]),
    )
    params = data.draw(st.lists(st.tuples(st.sampled_from(keys), values), max_size=5), label="params")
    body = data.draw(
        st.one_of(
            st.just(b""),
            hostile_json(5).map(encode),
            st.sampled_from(
                [
                    b'{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"fzwidget"},"spec":{"replicas":-1}}',
                    b'{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"fzwidget"},"spec":{"replicas":2.5}}',
                    b'{"apiVersion":"autoscaling/v1","kind":"Scale","spec":{"replicas":"3"}}',
                    b'{"spec":{"replicas":1e400}}',
                    b'{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"other"}}',
                    b'{"apiVersion":"v1","kind":"Binding","metadata":{"name":"fzpod"},"target":{"kind":"Pod","name":"x"}}',
                ]
            ),
        ),
        label="body",
    )
    ctype = "application/merge-patch+json" if method == "PATCH" else "application/json"
    path = kind.item() + "/" + sub + data.draw(st.sampled_from(["", "/", "/x", "/%2e%2e/%2e%2e"]), label="tail")
    _attempt(server, method, path, query=q(params), headers={"content-type": ctype}, body=body, watched=kind.item())
    _restore(server, kind)


# ---------------------------------------------------------------------------------------------- encodings

_NESTED_YAML = b"a:\n" + b"".join(b"  " * i + b"- \n" for i in range(1, 300))
BODIES = [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    b"a: " + b"[" * 50_000 + b"]" * 50_000,
    b"a: " + b"{b: " * 20_000 + b"1" + b"}" * 20_000,
    _NESTED_YAML,
    b"- " * 20_000 + b"x",
    b'{"metadata":{"name":"a"},"metadata":{"name":"b"}}',
    b'{"metadata":{"name":"fzcopy","name":"fzcopy"}}',
    b"metadata: {name: a}\nmetadata: {name: b}\n",
    b'{"metadata":{"name":"\xc3\x28"}}',
    b'{"metadata":{"name":"\xed\xa0\x80"}}',
    b'{"metadata":{"name":"\\ud800"}}',
    b"\xef\xbb\xbf{}",
    b"\xff\xfe{\x00}\x00",
    b"1e400",
    b"-0",
    b'"NaN"',
    b"true",
    b"NaN",
    b"Infinity",
    b"",
    b" ",
    b"\x1f\x8b\x08\x00\x00\x00\x00\x00",
    gzipped(b'{"metadata":{"name":"fzcopy"}}'),
    b"---\n---\n",
    b"a: 1\n---\nb: 2\n",
    b"%YAML 1.1\n---\na: 1",
    b"!!python/object:os.system {}",
    b"a: !!python/name:os.system",
    b"a: &a [*a]",
    b"k8s\x00" + b"\x0a\x00" * 10,
]


@_settings(300)
@given(
    kind=st.sampled_from(KINDS),
    body=st.sampled_from(BODIES),
    ctype=st.sampled_from(
        [
            "application/json",
            "application/yaml",
            "application/vnd.kubernetes.protobuf",
            "application/json;charset=latin-1",
            "application/json;stream=watch",
            "application/cbor",
            "text/plain",
            "multipart/form-data; boundary=x",
            "",
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
            "application/json-patch+json",
            "application/apply-patch+yaml",
            "application/apply-patch+cbor",
        ]
    ),
    method=st.sampled_from(["POST", "PUT", "PATCH"]),
    encoding=st.sampled_from([None, "gzip", "deflate", "br", "x"]),
)
def test_bodies_that_are_not_what_they_claim(
    server: Server, kind: Kind, body: bytes, ctype: str, method: str, encoding: str | None
) -> None:
    path = kind.collection() if method == "POST" else kind.item()
    headers: dict[str, str | bytes] = {"content-type": ctype}
    if encoding:
        headers["content-encoding"] = encoding
    params = {"fieldManager": "fz"} if "apply" in ctype else {}
    _attempt(server, method, path, query=q(params), headers=headers, body=body, watched=kind.item())
    _restore(server, kind)


def test_the_server_still_serves_and_every_seed_reads_back(server: Server) -> None:
    for kind in KINDS:
        assert server.request("GET", kind.item()).status == 200, kind.plural
    assert server.request("GET", "/version").status == 200


# ---------------------------------------------------------------------------------------------- defects found

JOB = KINDS[0]


@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 20_000 + b"1" + b"}" * 20_000],
    ids=["arrays", "objects"],
)
def test_a_create_nested_past_go_s_max_depth_is_400_with_the_scanner_s_text(server: Server, body: bytes) -> None:
    """encoding/json's scanner stops at its 10001st open bracket (`maxNestingDepth`); kjobs' emulation of its
    error text recursed once per level, so 100,000 levels were a RecursionError and a 500."""
    answer = _attempt(server, "POST", JOB.collection(), body=body)
    assert answer.status == 400, answer.body
    opener = body[:1].decode()
    message = orjson.loads(answer.body)["message"]
    assert message.startswith(
        "the object provided is unrecognized (must be of type Job): couldn't get version/kind; json parse error: "
        f"invalid character '{opener}' exceeded max depth ("
    ), message


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"spec": {"$retainKeys": [{"name": "main"}], "parallelism": 2}}, "invalid patch format of retainKeys"),
        ({"spec": {"$retainKeys": 5}}, "invalid patch format of retainKeys"),
        ({"spec": {"$retainKeys": ["suspend"], "parallelism": 2}}, "invalid patch format of retainKeys"),
        ({"metadata": {"$deleteFromPrimitiveList/finalizers": 5}}, "invalid patch format of primitive list"),
    ],
    ids=["retain-keys-of-maps", "retain-keys-not-a-list", "retain-keys-missing-a-patched-key", "primitive-list"],
)
def test_strategic_merge_directives_of_the_wrong_form_are_400_as_apimachinery_says(
    server: Server, patch: dict[str, Any], message: str
) -> None:
    """apimachinery's `applyRetainKeysDirective` and `preprocessDeletionListForMerging` errors, which
    handlers/patch.go `interpretStrategicMergePatchError` answers 400 BadRequest. A `$retainKeys` of maps was a
    500 (`unhashable type: 'dict'`); one that left out a key the patch sets was applied; a non-list was 422."""
    answer = _attempt(
        server,
        "PATCH",
        JOB.item(),
        headers={"content-type": "application/strategic-merge-patch+json"},
        body=orjson.dumps(patch),
        watched=JOB.item(),
    )
    assert (answer.status, orjson.loads(answer.body)["message"]) == (400, message)


@pytest.mark.parametrize("grace", [2**63 - 1, -(2**63), 2**62])
def test_a_pod_delete_with_a_grace_beyond_a_duration_is_stamped_as_go_wraps_it(server: Server, grace: int) -> None:
    """`rest.BeforeDelete` stamps `now + time.Second * time.Duration(grace)`: an int64 of nanoseconds that wraps
    (2^63-1 s is -1 s). kjobs added the seconds as a float and failed to format a year past 9999 (a 500)."""
    pod = next(k for k in KINDS if k.plural == "pods")
    name = f"fzgrace{abs(grace) % 1000}"
    body = {**pod.body, "metadata": {"name": name}}
    assert server.request("POST", pod.collection(), body=orjson.dumps(body)).status == 201
    answer = _attempt(server, "DELETE", pod.item(name), query=q({"gracePeriodSeconds": str(grace)}))
    assert answer.status == 200, answer.body
    meta = answer.json()["metadata"]
    nanos = (max(grace, 1) * 10**9) % 2**64  # a negative grace counts as 1 s (CheckGracefulDelete)
    wrapped = (nanos - 2**64 if nanos >= 2**63 else nanos) / 1e9
    assert abs(parse_time(meta["deletionTimestamp"]) - (time.time() + wrapped)) < 5, meta
    assert meta["deletionGracePeriodSeconds"] == max(grace, 1)


@pytest.mark.parametrize("metadata", [{"$patch": True}, {"$retainKeys": 5}], ids=["patch", "retain-keys"])
def test_an_apply_to_a_crd_with_a_dollar_key_is_400_as_for_every_typed_kind(
    server: Server, metadata: dict[str, Any]
) -> None:
    """No Kubernetes type declares a `$`-key, so the field manager's typed patch object refuses it (400, as for a
    Job or a ConfigMap). kjobs holds no schema of CustomResourceDefinition and merged the configuration as a
    strategic merge patch, reading `$patch: true` as a directive: a 500 `Unknown patch type: True`."""
    crd = next(k for k in KINDS if k.plural == "customresourcedefinitions")
    config = {**crd.body, "metadata": {"name": crd.body["metadata"]["name"], **metadata}}
    answer = _attempt(
        server,
        "PATCH",
        crd.item(),
        query=q({"fieldManager": "fz"}),
        headers={"content-type": "application/apply-patch+yaml"},
        body=orjson.dumps(config),
        watched=crd.item(),
    )
    assert answer.status == 400, answer.body
    key = next(iter(metadata))
    assert orjson.loads(answer.body)["message"] == (
        "failed to create typed patch object (/widgets.fz.example.com; apiextensions.k8s.io/v1, "
        f"Kind=CustomResourceDefinition): .metadata.{key}: field not declared in schema"
    )


@pytest.mark.parametrize(
    ("where", "item", "error"),
    [
        (("spec", "containers", 0), {}, '.spec.containers: element 0: ... "name"'),
        (
            ("spec", "containers", 0, "env", 0),
            {"value": "b"},
            '.spec.containers[name="main"].env: element 0: ... "name"',
        ),
        (
            ("spec", "containers", 0, "ports", 0),
            {"protocol": "TCP"},
            '.spec.containers[name="main"].ports: element 0: ... "containerPort"',
        ),
    ],
    ids=["containers", "env", "ports"],
)
def test_an_apply_whose_keyed_list_item_omits_its_key_is_400_as_the_field_manager_says(
    server: Server, where: tuple[Any, ...], item: dict[str, Any], error: str
) -> None:
    """structured-merge-diff refuses to make a typed object of a `map` list item without its key (validate.go
    `visitListItems`, helpers.go `keyedAssociativeListItemToPathElement`). kjobs skipped such an item in its
    typed check and merged it as a strategic merge patch: a 500 `map: {} does not contain declared merge key`."""
    pod = next(k for k in KINDS if k.plural == "pods")
    answer = _attempt(
        server,
        "PATCH",
        pod.item(),
        query=q({"fieldManager": "fz"}),
        headers={"content-type": "application/apply-patch+yaml"},
        body=encode(replaced(pod.body, where, item)),
        watched=pod.item(),
    )
    assert answer.status == 400, answer.body
    expected = "failed to create typed patch object (/fzpod; /v1, Kind=Pod): " + error.replace(
        "...", "associative list with keys has an element that omits key field"
    )
    assert orjson.loads(answer.body)["message"] == expected + " (and doesn't have default value)"


@pytest.mark.parametrize(
    ("plural", "where", "message"),
    [
        ("events", ("eventTime",), "(/fzevent2; events.k8s.io/v1, Kind=Event): .eventTime.$patch"),
        ("configmaps", ("metadata", "labels"), "(/fzcm; /v1, Kind=ConfigMap): .metadata.labels.$patch"),
    ],
    ids=["micro-time", "labels"],
)
def test_an_apply_with_a_dollar_key_where_the_schema_names_no_fields_is_400(
    server: Server, plural: str, where: tuple[str, ...], message: str
) -> None:
    """A `$patch` in a place whose schema lists no fields (a MicroTime given a map, a map of labels) passed the
    typed check and reached the strategic merge as a directive: a 500 `Unknown patch type: True`."""
    kind = next(k for k in KINDS if k.plural == plural and f"/{k.body['metadata']['name']};" in message)
    answer = _attempt(
        server,
        "PATCH",
        kind.item(),
        query=q({"fieldManager": "fz"}),
        headers={"content-type": "application/apply-patch+yaml"},
        body=encode(replaced(kind.body, where, {"$patch": True})),
        watched=kind.item(),
    )
    assert answer.status == 400, answer.body
    expected = f"failed to create typed patch object {message}: field not declared in schema"
    assert orjson.loads(answer.body)["message"] == expected


@pytest.mark.parametrize("version", ["¹", "٠", "0¹", "abc", "0"])
@pytest.mark.parametrize(
    "kind", [k for k in KINDS if k.plural in ("configmaps", "pods", "jobs")], ids=lambda k: k.plural
)
def test_an_update_whose_resource_version_has_non_ascii_digits_is_not_a_500(
    server: Server, kind: Kind, version: str
) -> None:
    """Python's `str.isdigit` is true of '¹' and '٠', which Go's `strconv.ParseUint` refuses: such a
    resourceVersion is a version that is not the stored one, like 'abc' (409 Conflict), never a crash, and only
    an ASCII "0" asks for an unconditional write."""
    stored = server.get(kind.item())
    body = {**stored, "metadata": {**stored["metadata"], "resourceVersion": version}}
    answer = _attempt(
        server, "PUT", kind.item(), body=orjson.dumps(body), watched=None if version == "0" else kind.item()
    )
    if version == "0":
        assert answer.status == 200, answer.body
    else:
        assert answer.status == 409, answer.body


@pytest.mark.parametrize("port", ["¹", "+¹", "-٣", "٨٠"])
def test_a_service_proxy_port_of_non_ascii_digits_is_not_a_500(server: Server, port: str) -> None:
    """A service proxy's port is a number only in ASCII digits (Go's `strconv.Atoi`); otherwise it is a port name."""
    kind = next(k for k in KINDS if k.plural == "services")
    name = kind.body["metadata"]["name"]
    path = kind.item().rsplit("/", 1)[0] + f"/{name}:{port}/proxy/"
    _attempt(server, "GET", path)
