"""When kube-apiserver indents its JSON (negotiation/negotiate.go `isPrettyPrint`): `kjobs.server.pretty`."""

from __future__ import annotations

import asyncio

import pytest

from kjobs.server import pretty


@pytest.mark.parametrize(
    ("path", "query", "agent", "expected"),
    [
        ("/api/v1/pods", {}, "curl/8.5.0", True),
        ("/apis", {}, "Wget/1.21", True),
        ("/apis/batch/v1/jobs", {}, "Mozilla/5.0 (X11; Linux x86_64)", True),
        ("/api/v1/pods", {}, "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07", False),
        ("/api/v1/pods", {}, "OpenAPI-Generator/31.0.0/python", False),
        ("/api/v1/pods", {"pretty": "true"}, "x", True),
        ("/api/v1/pods", {"pretty": "T"}, "x", True),
        ("/api/v1/pods", {"pretty": "1"}, "x", True),
        ("/api/v1/pods", {"pretty": "false"}, "curl/8.5.0", False),
        # ParseBool refuses it: false, without a look at the User-Agent
        ("/api/v1/pods", {"pretty": "yes"}, "curl/8.5.0", False),
        ("/api/v1/pods", {"pretty": ""}, "curl/8.5.0", True),  # empty: as if absent
        ("/version", {}, "curl/8.5.0", False),  # written by its own handler (always indented)
        ("/openapi/v2", {}, "curl/8.5.0", False),
        ("/healthz", {"pretty": "true"}, "curl/8.5.0", False),
    ],
)
def test_who_gets_indented_json(path: str, query: dict[str, str], agent: str, expected: bool) -> None:
    assert pretty.wanted(path, query, agent) is expected


def test_a_stream_passes_through_and_a_json_answer_is_indented() -> None:
    asyncio.run(_stream_and_answer())


async def _stream_and_answer() -> None:
    sent: list[dict[str, object]] = []

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    indented = pretty.indenting(send)
    head = [(b"content-type", b"application/json"), (b"content-length", b"12")]
    await indented({"type": "http.response.start", "status": 200, "headers": head})
    assert sent == []  # held until the body is complete
    await indented({"type": "http.response.body", "body": b'{"a":', "more_body": True})
    await indented({"type": "http.response.body", "body": b"[1]}"})
    assert sent[0]["headers"] == [(b"content-type", b"application/json"), (b"content-length", b"22")]
    assert sent[1] == {"type": "http.response.body", "body": b'{\n  "a": [\n    1\n  ]\n}'}
    sent.clear()
    stream = pretty.indenting(send)  # a watch: no length, chunks as they come
    await stream({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await stream({"type": "http.response.body", "body": b'{"type":"ADDED"}\n', "more_body": True})
    assert sent[1]["body"] == b'{"type":"ADDED"}\n'
