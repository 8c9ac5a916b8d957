"""Answers over 128 KiB gzipped as kube-apiserver gzips them (`kjobs.server.compression`): what kubectl, client-go
and the JavaScript client 2.x (undici's fetch sends `Accept-Encoding: gzip, deflate`) get from a cluster."""

from __future__ import annotations

import gzip

import httpx
import orjson
import pytest

from kjobs.server import compression
from tests.server.conftest import Server

BIG = "x" * 40_000  # four ConfigMaps of it list to over 128 KiB


def _body(http: httpx.Client, path: str, accept_encoding: str, **headers: str) -> tuple[httpx.Headers, bytes]:
    with http.stream("GET", path, headers={"Accept-Encoding": accept_encoding, **headers}) as response:
        return response.headers, b"".join(response.iter_raw())


@pytest.fixture
def big(server: Server, http: httpx.Client) -> None:
    for i in range(4):
        body = {"metadata": {"name": f"big-{i}"}, "data": {"v": BIG}}
        assert http.post("/api/v1/namespaces/default/configmaps", json=body).status_code == 201


@pytest.mark.parametrize(
    ("accept_encoding", "expected"),
    [
        ("gzip", True),
        ("gzip, deflate", True),  # undici's fetch
        ("deflate, gzip", True),
        (" gzip ", True),
        ("gzip;q=1", False),  # negotiateContentEncoding compares whole tokens
        ("*", False),
        ("identity", False),
        ("", False),
    ],
)
def test_which_accept_encoding_gets_gzip(accept_encoding: str, expected: bool) -> None:
    assert compression.accepts_gzip(accept_encoding) is expected


@pytest.mark.usefixtures("big")
def test_a_list_over_128_kib_is_gzipped_when_asked(http: httpx.Client) -> None:
    headers, raw = _body(http, "/api/v1/namespaces/default/configmaps", "gzip, deflate")
    assert headers["content-encoding"] == "gzip"
    assert headers["vary"] == "Accept-Encoding"
    assert headers["content-type"] == "application/json"
    assert int(headers["content-length"]) == len(raw) < compression.THRESHOLD
    listed = orjson.loads(gzip.decompress(raw))
    assert [item["metadata"]["name"] for item in listed["items"]] == [f"big-{i}" for i in range(4)]

    # not asked (or not in Go's words): as it is
    for accept_encoding in ("identity", "gzip;q=1"):
        headers, raw = _body(http, "/api/v1/namespaces/default/configmaps", accept_encoding)
        assert "content-encoding" not in headers
        assert len(raw) > compression.THRESHOLD
        assert orjson.loads(raw)["kind"] == "ConfigMapList"


@pytest.mark.usefixtures("big")
def test_small_answers_streams_and_yaml(http: httpx.Client) -> None:
    # one ConfigMap: under the threshold
    headers, raw = _body(http, "/api/v1/namespaces/default/configmaps/big-0", "gzip")
    assert "content-encoding" not in headers and orjson.loads(raw)["metadata"]["name"] == "big-0"
    # a watch is the streaming serializer's: never gzipped
    headers, raw = _body(http, "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1", "gzip")
    assert "content-encoding" not in headers and raw.count(b'"ADDED"') == 4
    # YAML and indented JSON are gzipped as written
    headers, raw = _body(http, "/api/v1/namespaces/default/configmaps", "gzip", Accept="application/yaml")
    assert headers["content-encoding"] == "gzip" and headers["content-type"] == "application/yaml"
    assert gzip.decompress(raw).startswith(b"apiVersion: v1\nitems:\n")
    headers, raw = _body(http, "/api/v1/namespaces/default/configmaps?pretty=true", "gzip")
    assert headers["content-encoding"] == "gzip" and gzip.decompress(raw).startswith(b'{\n  "kind": "ConfigMapList"')
