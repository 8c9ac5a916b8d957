"""A body with text Go's JSON decoder takes and orjson does not (`kjobs.server.gojson`): invalid UTF-8 and lone
UTF-16 surrogates are stored as U+FFFD, as kube-apiserver stores them; what Go refuses is still a 400."""

from __future__ import annotations

import json

import httpx
import pytest

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
JSON = {"Content-Type": "application/json"}
MERGE = {"Content-Type": "application/merge-patch+json"}


def _configmap(name: str, data: str) -> bytes:
    """A ConfigMap body whose `data` is the JSON text `data`, put in as it is (bytes no encoder writes)."""
    head = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
    return (head[:-1] + ', "data": ' + data + "}").encode("utf-8", "surrogatepass")


@pytest.mark.parametrize(
    ("data", "stored"),
    [
        ('{"k": "a\\ud800b"}', {"k": "a\ufffdb"}),  # a lone high surrogate, as Python's json.dumps escapes one
        ('{"k": "a\\udc80\\ud800"}', {"k": "a\ufffd\ufffd"}),  # a low one, then a high one: no pair
        ('{"k": "\\ud83d\\ude00"}', {"k": "\U0001f600"}),  # a pair is one character, as before
    ],
)
def test_a_lone_surrogate_is_stored_as_a_replacement_character(
    http: httpx.Client, data: str, stored: dict[str, str]
) -> None:
    name = f"gj{abs(hash(data)) % 100000}"
    answer = http.post(CONFIGMAPS, content=_configmap(name, data), headers=JSON)
    assert answer.status_code == 201, answer.text
    assert answer.json()["data"] == stored
    assert http.get(f"{CONFIGMAPS}/{name}").json()["data"] == stored


def test_a_key_with_a_lone_surrogate_is_decoded_then_validated(http: httpx.Client) -> None:
    """In a key too: a ConfigMap's key must be a config key, so the 422 names the key Go decoded (a 400 before)."""
    answer = http.post(CONFIGMAPS, content=_configmap("gjkey", '{"k\\udcff": "v"}'), headers=JSON)
    assert answer.status_code == 422, answer.text
    assert answer.json()["details"]["causes"][0]["field"] == "data[k\ufffd]"


def test_bytes_that_are_not_utf8_are_each_a_replacement_character(http: httpx.Client) -> None:
    """Go's `utf8.DecodeRune` reads a bad sequence a byte at a time: a truncated three-byte sequence is two
    replacement characters, an encoded surrogate three."""
    body = _configmap("gjbytes", '{"a": "@A@", "b": "@B@", "c": "@C@"}')
    body = body.replace(b"@A@", b"x\xffy").replace(b"@B@", b"\xe2\x82A").replace(b"@C@", b"\xed\xa0\x80")
    answer = http.post(CONFIGMAPS, content=body, headers=JSON)
    assert answer.status_code == 201, answer.text
    assert answer.json()["data"] == {"a": "x\ufffdy", "b": "\ufffd\ufffdA", "c": "\ufffd\ufffd\ufffd"}


def test_a_merge_patch_with_a_lone_surrogate_is_applied(http: httpx.Client) -> None:
    assert http.post(CONFIGMAPS, json={"metadata": {"name": "gjpatch"}, "data": {"k": "v"}}).status_code == 201
    answer = http.patch(f"{CONFIGMAPS}/gjpatch", content=b'{"data": {"k": "\\udc00"}}', headers=MERGE)
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"] == {"k": "\ufffd"}


@pytest.mark.parametrize(
    "data",
    ['{"k": NaN}', '{"k": 1e400}', '{"k": "\xff"', '{"k": "\\ud800"', "\xff"],
    ids=["nan", "infinity", "unterminated", "unterminated-surrogate", "outside-a-string"],
)
def test_what_go_refuses_is_still_refused(http: httpx.Client, data: str) -> None:
    body = _configmap("gjbad", data).replace(b"\xc3\xbf", b"\xff")  # the raw byte, not its UTF-8 encoding
    answer = http.post(CONFIGMAPS, content=body, headers=JSON)
    assert answer.status_code == 400, answer.text
    assert answer.json()["kind"] == "Status"
