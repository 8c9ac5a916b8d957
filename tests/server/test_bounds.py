"""Bounded work per request: what a hostile or broken request gets instead of a frozen server or a 500.

Each bound is Kubernetes' (see src/kjobs/server/limits.py for where each comes from): copy bombs, operation
counts, nesting depth, content types, headers, disconnects, slow watchers and `resourceVersionMatch`.
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import httpx
import orjson
import pytest

from kjobs.server import limits
from kjobs.server.app import App, create_app
from kjobs.server.patch import PatchError, json_patch
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.server.conftest import Server, job_manifest, pod_manifest
from tests.support import client_tls

PODS = "/api/v1/namespaces/default/pods"
JOBS = "/apis/batch/v1/namespaces/default/jobs"
JSON_PATCH = {"content-type": "application/json-patch+json"}


def _nested(levels: int, leaf: Any = "x") -> Any:
    """A value nesting `levels` maps deep."""
    value = leaf
    for _ in range(levels):
        value = {"a": value}
    return value


def _status(response: httpx.Response, code: int, reason: str) -> dict[str, Any]:
    assert response.status_code == code, response.text
    body: dict[str, Any] = response.json()
    assert (body["kind"], body["status"], body["code"], body["reason"]) == ("Status", "Failure", code, reason)
    return body


@contextmanager
def logged() -> Iterator[list[logging.LogRecord]]:
    """The records the server and uvicorn log meanwhile (enter it once the server runs: uvicorn's logging
    configuration replaces the handlers of its loggers)."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(logging.DEBUG)
    loggers = [logging.getLogger(name) for name in ("uvicorn.error", "kjobs.server")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield records
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


# ------------------------------------------------------------------------------------------- JSON patch


def _copy_bomb(copies: int) -> list[dict[str, Any]]:
    """One `add` of a map and `copies` copies of it into itself: each copy doubles the document."""
    ops: list[dict[str, Any]] = [
        {"op": "add", "path": "/metadata/annotations", "value": {"k" * 60: "v" * 60}},
        {"op": "add", "path": "/metadata/annotations/b0", "value": {"k" * 60: "v" * 60}},
    ]
    ops += [
        {"op": "copy", "from": "/metadata/annotations", "path": f"/metadata/annotations/b{i}"}
        for i in range(1, copies + 1)
    ]
    return ops


def test_json_patch_copy_bomb_is_422_at_once_while_other_requests_are_served(server: Server) -> None:
    tls = client_tls(server.pki)
    with httpx.Client(base_url=server.url, timeout=30, verify=tls) as http:
        assert http.post(PODS, json=pod_manifest("bomb")).status_code == 201
    bomb = orjson.dumps(_copy_bomb(24))
    assert len(bomb) < 4096
    answers: dict[str, Any] = {}

    def patch() -> None:
        with httpx.Client(base_url=server.url, timeout=30, verify=tls) as client:
            start = time.monotonic()
            answers["bomb"] = client.patch(PODS + "/bomb", content=bomb, headers=JSON_PATCH)
            answers["elapsed"] = time.monotonic() - start

    thread = threading.Thread(target=patch)
    thread.start()
    with httpx.Client(base_url=server.url, timeout=5, verify=tls) as other:
        assert other.get(PODS + "/bomb").status_code == 200
    thread.join(30)
    body = _status(answers["bomb"], 422, "Invalid")
    # json-patch's AccumulatedCopySizeError, answered as every failed JSON patch is (NewGenericServerResponse)
    assert body["message"] == "the server rejected our request due to an error in our request"
    with pytest.raises(PatchError, match=f", exceeding the limit {limits.MAX_COPY_BYTES}$"):
        json_patch(pod_manifest("bomb"), _copy_bomb(24))
    assert answers["elapsed"] < 1.0


def test_json_patch_with_too_many_operations_is_413(http: httpx.Client) -> None:
    http.post(PODS, json=pod_manifest("ops"))
    ops = [{"op": "test", "path": "/kind", "value": "Pod"}] * (limits.MAX_JSON_PATCH_OPERATIONS + 1)
    response = http.patch(PODS + "/ops", content=orjson.dumps(ops), headers=JSON_PATCH)
    body = _status(response, 413, "RequestEntityTooLarge")
    assert body["message"] == (
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    )


def test_json_patch_that_nests_the_object_too_deep_is_refused(http: httpx.Client) -> None:
    http.post(PODS, json=pod_manifest("deep"))
    value = _nested(limits.MAX_DEPTH - 3)
    ops = [{"op": "add", "path": "/metadata/labels", "value": {}}]
    path = "/metadata/labels"
    ops.append({"op": "add", "path": path + "/a", "value": value})
    path += "/a" + "/a" * (limits.MAX_DEPTH - 4)
    ops.append({"op": "add", "path": path, "value": value})  # twice as deep as one body may be
    response = http.patch(PODS + "/deep", content=orjson.dumps(ops), headers=JSON_PATCH)
    assert "exceeded max depth" in _status(response, 400, "BadRequest")["message"]
    assert http.get(PODS + "/deep").status_code == 200


# ------------------------------------------------------------------------------------------- depth


def test_yaml_nested_too_deep_is_400(http: httpx.Client) -> None:
    deep = "a: " + "[" * 500 + "]" * 500 + "\n"
    response = http.post(PODS, content=deep.encode(), headers={"content-type": "application/yaml"})
    assert "exceeded max depth" in _status(response, 400, "BadRequest")["message"]
    block = "".join("  " * i + "a:\n" for i in range(450)) + "  " * 450 + "x\n"
    response = http.post(PODS, content=block.encode(), headers={"content-type": "application/yaml"})
    assert "exceeded max depth" in _status(response, 400, "BadRequest")["message"]


@pytest.mark.parametrize("levels", [limits.MAX_DEPTH + 1, 1000])
def test_json_nested_too_deep_is_400(http: httpx.Client, levels: int) -> None:
    pod = orjson.dumps({**pod_manifest("j"), "extra": "DEEP"}).replace(b'"DEEP"', b"[" * levels + b"]" * levels)
    response = http.post(PODS, content=pod, headers={"content-type": "application/json"})
    assert "exceeded max depth" in _status(response, 400, "BadRequest")["message"]


def test_managed_fields_nested_deep_are_400_never_500(http: httpx.Client) -> None:
    pod = pod_manifest("mf")
    entry = {"manager": "m", "operation": "Update", "fieldsType": "FieldsV1", "apiVersion": "v1"}
    pod["metadata"]["managedFields"] = [{**entry, "fieldsV1": _nested(300, {})}]  # type: ignore[index]
    response = http.post(PODS, json=pod)
    assert "exceeded max depth" in _status(response, 400, "BadRequest")["message"]
    pod["metadata"]["managedFields"] = [{**entry, "fieldsV1": {"f:metadata": _nested(limits.MAX_DEPTH - 8, {})}}]  # type: ignore[index]
    assert http.post(PODS, json=pod).status_code < 500


def test_server_side_apply_with_an_unknown_field_nested_deep_is_400(http: httpx.Client) -> None:
    job = job_manifest("ssa")
    job["spec"] = {**job["spec"], "unknown": "DEEP"}  # type: ignore[dict-item]
    deep = b'{"a":' * 450 + b'"x"' + b"}" * 450  # deeper than orjson writes
    headers = {"content-type": "application/apply-patch+yaml"}
    body = orjson.dumps(job).replace(b'"DEEP"', deep)
    response = http.patch(JOBS + "/ssa?fieldManager=me", content=body, headers=headers)
    assert "exceeded max depth" in _status(response, 400, "BadRequest")["message"]
    job["spec"] = {**job["spec"], "unknown": _nested(limits.MAX_DEPTH - 4)}  # type: ignore[dict-item]
    response = http.patch(JOBS + "/ssa?fieldManager=me", content=orjson.dumps(job), headers=headers)
    # within the depth limit: a field the Job schema lacks cannot be typed, however deep its value
    assert _status(response, 400, "BadRequest")["message"].endswith(": .spec.unknown: field not declared in schema")


# ------------------------------------------------------------------------------------------- content types


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", "text/plain; charset=utf-8"])
def test_bodies_of_a_type_the_resource_does_not_accept_are_415(http: httpx.Client, content_type: str) -> None:
    response = http.post(PODS, content=orjson.dumps(pod_manifest("t")), headers={"content-type": content_type})
    body = _status(response, 415, "UnsupportedMediaType")
    assert body["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )
    assert http.get(PODS + "/t").status_code == 404


def test_a_body_without_content_type_is_json_as_on_kubernetes(http: httpx.Client) -> None:
    """`NegotiateInputSerializerForMediaType` takes the first serializer, JSON (the Python client relies on it)."""
    assert http.post(PODS, content=orjson.dumps(pod_manifest("none"))).status_code == 201


def test_patch_of_a_type_that_is_no_patch_type_is_415_before_parsing(http: httpx.Client) -> None:
    http.post(PODS, json=pod_manifest("p"))
    response = http.patch(PODS + "/p", content=b"<xml/>", headers={"content-type": "application/xml"})
    assert "application/json-patch+json" in _status(response, 415, "UnsupportedMediaType")["message"]


def test_body_beyond_three_mebibytes_is_413(http: httpx.Client) -> None:
    response = http.post(PODS, content=b" " * (limits.MAX_BODY + 1), headers={"content-type": "application/json"})
    assert _status(response, 413, "RequestEntityTooLarge")["message"] == ("Request entity too large: limit is 3145728")


# ------------------------------------------------------------------------------------------- connections


class _Finished(App):
    """An App that says when it has finished each request."""

    finished: threading.Event

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            if scope["type"] == "http":
                self.finished.set()


def test_a_client_that_leaves_mid_body_leaves_no_traceback() -> None:
    store = MemoryStore()
    app = _Finished(store, clock=time.time, logs=None, authenticator=None)
    app.finished = threading.Event()
    with serve(store, app=app) as url, logged() as records:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(
                b"POST " + PODS.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b'Content-Length: 1000\r\n\r\n{"kind":'
            )
        assert app.finished.wait(5)
        with httpx.Client(base_url=url) as http:  # served after the failed request's task has finished logging
            assert http.get("/version").status_code == 200
        assert [r.getMessage() for r in records if r.exc_info or r.levelno >= logging.ERROR] == []
    store.close()


def _head(url: str, header: bytes) -> bytes:
    """Send a raw request head to the TLS test server and read the whole reply."""
    host, port = url.removeprefix("https://").split(":")
    with (
        socket.create_connection((host, int(port))) as raw,
        client_tls().wrap_socket(raw, server_hostname=host) as sock,
    ):
        sock.settimeout(10)
        with suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + header + b"\r\n")
        reply = b""
        try:
            while chunk := sock.recv(65536):
                reply += chunk
        except (ConnectionResetError, ssl.SSLError):
            pass
    return reply


def test_request_headers_beyond_one_mebibyte_are_431(server: Server) -> None:
    big = b"X-Big: " + b"a" * (limits.MAX_HEADER_BYTES + 8192) + b"\r\n"
    reply = _head(server.url, big)
    assert reply.startswith(b"HTTP/1.0 431 Request Header Fields Too Large\r\n")
    assert b"\r\nConnection: close\r\n" in reply
    assert _head(server.url, b"X-Small: " + b"a" * 100_000 + b"\r\n").startswith(b"HTTP/1.1 200 ")


# ------------------------------------------------------------------------------------------- resourceVersionMatch


@pytest.fixture
def short_history() -> Iterator[httpx.Client]:
    """A server whose store keeps the last 10 changes of each resource."""
    store = MemoryStore(history_size=10)
    with serve(store, app=create_app(store)) as url, httpx.Client(base_url=url, timeout=10) as http:
        yield http
    store.close()


def _names(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [item["metadata"]["name"] for item in response.json()["items"]]


def test_exact_lists_the_objects_as_they_were(short_history: httpx.Client) -> None:
    http = short_history
    first = http.post(PODS, json=pod_manifest("a", labels={"v": "1"})).json()["metadata"]["resourceVersion"]
    http.post(PODS, json=pod_manifest("b"))
    http.patch(
        PODS + "/a", json={"metadata": {"labels": {"v": "2"}}}, headers={"content-type": "application/merge-patch+json"}
    )
    exact = http.get(PODS, params={"resourceVersion": first, "resourceVersionMatch": "Exact"})
    assert _names(exact) == ["a"]
    assert exact.json()["metadata"]["resourceVersion"] == first
    assert exact.json()["items"][0]["metadata"]["labels"] == {"v": "1"}
    for params in ({"resourceVersion": first, "resourceVersionMatch": "NotOlderThan"}, {"resourceVersion": first}):
        assert _names(http.get(PODS, params=params)) == ["a", "b"]  # the current state, as new as asked or newer
    assert _names(http.get(PODS, params={"resourceVersion": "0"})) == ["a", "b"]


def test_exact_list_older_than_the_history_is_410(short_history: httpx.Client) -> None:
    http = short_history
    first = http.post(PODS, json=pod_manifest("old")).json()["metadata"]["resourceVersion"]
    for i in range(12):
        http.post(PODS, json=pod_manifest(f"p{i}"))
    response = http.get(PODS, params={"resourceVersion": first, "resourceVersionMatch": "Exact"})
    assert _status(response, 410, "Expired")["message"] == "The resourceVersion for the provided list is too old."


@pytest.mark.parametrize("match", ["Exact", "NotOlderThan", None])
def test_list_newer_than_the_store_is_504_too_large_resource_version(http: httpx.Client, match: str | None) -> None:
    """After the watch cache's wait (3 s; 0.5 s here) with a retry advice of 1 s; an Exact list goes to etcd, which
    refuses a future revision at once, with none (etcd3 `GetList`, `ErrFutureRev`)."""
    current = int(http.get(PODS).json()["metadata"]["resourceVersion"])
    params = {"resourceVersion": str(current + 100)} | ({"resourceVersionMatch": match} if match else {})
    started = time.monotonic()
    body = _status(http.get(PODS, params=params), 504, "Timeout")
    waited = time.monotonic() - started
    assert body["message"] == f"Timeout: Too large resource version: {current + 100}, current: {current}"
    assert body["details"]["causes"] == [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]
    if match == "Exact":
        assert "retryAfterSeconds" not in body["details"]
    else:
        assert body["details"]["retryAfterSeconds"] == 1
        assert waited >= 0.5


@pytest.mark.parametrize(
    ("params", "message"),
    [
        pytest.param(
            {"resourceVersionMatch": "Exact"},
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            id="no-resourceVersion",
        ),
        pytest.param(
            {"resourceVersion": "0", "resourceVersionMatch": "Exact"},
            'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
            id="exact-0",
        ),
        pytest.param(
            {"resourceVersion": "1", "resourceVersionMatch": "Newest"},
            'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
            id="unsupported",
        ),
        pytest.param(
            {"resourceVersion": "1", "resourceVersionMatch": "Exact", "continue": "x"},
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided",
            id="continue",
        ),
    ],
)
def test_invalid_list_options_are_422_as_validate_list_options_says(
    http: httpx.Client, params: dict[str, str], message: str
) -> None:
    body = _status(http.get(PODS, params=params), 422, "Invalid")
    assert body["message"] == f'ListOptions.meta.k8s.io "" is invalid: {message}'
    assert body["details"]["kind"] == "ListOptions" and body["details"]["group"] == "meta.k8s.io"


# ------------------------------------------------------------------------------------------- slow watchers


def _read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a socket timeout fails the test)."""
    received = b""
    while chunk := sock.recv(1 << 20):
        received += chunk
    return received


def test_a_watcher_that_does_not_read_is_dropped_while_others_keep_receiving() -> None:
    store = MemoryStore()
    app = create_app(store, watch_buffer=20)
    count, size = 80, 150_000  # 12 MB of events: far more than the kernel buffers between server and client
    with serve(store, app=app) as url, logged() as records:
        host, port = url.removeprefix("http://").split(":")
        slow = socket.socket()
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.settimeout(20)
        slow.connect((host, int(port)))
        slow.sendall(f"GET {PODS}?watch=true HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert slow.recv(12) == b"HTTP/1.1 200"
        seen: list[str] = []

        def follow() -> None:
            with httpx.Client(base_url=url, timeout=20) as fast, fast.stream("GET", PODS + "?watch=true") as stream:
                for line in stream.iter_lines():
                    if line:
                        seen.append(orjson.loads(line)["object"]["metadata"]["name"])
                    if len(seen) == count:
                        return

        with httpx.Client(base_url=url, timeout=20) as http:
            follower = threading.Thread(target=follow)
            follower.start()
            for i in range(count):
                pod = pod_manifest(f"p{i}")
                pod["metadata"]["annotations"] = {"pad": "x" * size}  # type: ignore[index]
                assert http.post(PODS, json=pod).status_code == 201
            follower.join(30)
        assert sorted(seen) == sorted(f"p{i}" for i in range(count))  # the reading watcher got every pod once
        received = _read_until_closed(slow)  # ends: the server dropped the watcher that did not read
        slow.close()
        assert received.count(b'"type":"ADDED"') < count
        assert not received.endswith(b"0\r\n\r\n")  # the stream broke; the client lists and watches again
        assert any("dropped a watch of pods" in r.getMessage() for r in records)
    store.close()


def test_a_reading_watcher_is_not_dropped_while_this_server_is_busy_elsewhere() -> None:
    """More than `watch_buffer` events committed while the server's loop does other work (the controllers share
    it) are all delivered: only a client that does not read is dropped."""
    import asyncio

    store = MemoryStore()
    app = create_app(store, watch_buffer=20)
    count = 100
    received: list[bytes] = []
    done = asyncio.Event()

    async def go() -> None:
        async def receive() -> dict[str, Any]:
            await done.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                assert message["status"] == 200
                for i in range(count):  # written while the watch's coroutine waits on this send: 100 behind
                    store.create("pods", "default", f"p{i}", pod_manifest(f"p{i}"))
                return
            received.append(message.get("body", b""))
            if b"".join(received).count(b'"type":"ADDED"') == count or not message.get("more_body"):
                done.set()

        scope = {"type": "http", "method": "GET", "path": PODS, "query_string": b"watch=true", "headers": []}
        with logged() as records:
            await asyncio.wait_for(app(scope, receive, send), 20)
        assert not any("dropped a watch" in r.getMessage() for r in records)

    asyncio.run(go())
    lines = [orjson.loads(line) for line in b"".join(received).splitlines() if line]
    assert [e["object"]["metadata"]["name"] for e in lines] == [f"p{i}" for i in range(count)]
    store.close()
