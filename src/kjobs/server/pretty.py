"""Indented JSON for people: what kube-apiserver answers `curl` (and `kubectl proxy` then `curl`).

An API answer is written with the negotiated serializer's pretty variant — `json.MarshalIndent` with two
spaces, no final newline — when the request asks `?pretty=` a value Go's `strconv.ParseBool` takes as true, or
when it leaves `pretty` out (or empty) and its User-Agent starts with `curl`, `Wget` or `Mozilla/5.0`
(staging/src/k8s.io/apiserver/pkg/endpoints/handlers/negotiation/negotiate.go `isPrettyPrint`, used by
`NegotiateOutputMediaType`). That covers objects, lists, tables, Status errors and discovery under `/api` and
`/apis`; watch streams use the streaming serializer, which has no pretty variant, and `/version`, health checks,
logs and OpenAPI documents are written by handlers of their own. kubectl and the client libraries send none of
these User-Agents, so their answers stay compact and cost nothing more.
"""

from __future__ import annotations

import contextlib

import orjson

from kjobs.server.held_answer import Headers, Send, holding

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_HUMAN_AGENTS = ("curl", "Wget", "Mozilla/5.0")


def wanted(path: str, query: dict[str, str], user_agent: str) -> bool:
    """Whether the answer to a request for `path` is to be indented (`isPrettyPrint`; a `pretty` value that
    does not parse as a boolean is false, not a reason to look at the User-Agent)."""
    if not path.startswith("/api"):
        return False
    value = query.get("pretty", "")
    if value:
        return value in _TRUE
    return user_agent.startswith(_HUMAN_AGENTS)


def indenting(send: Send) -> Send:
    """`send`, with a JSON answer of known length indented (its head held until its body is complete);
    anything else — a stream, YAML, protobuf, text — passed on as it comes."""
    return holding(send, _json_of_known_length, _indented)


def _json_of_known_length(headers: dict[bytes, bytes]) -> bool:
    media = headers.get(b"content-type", b"").split(b";", 1)[0].strip()
    return media == b"application/json" and b"content-length" in headers


async def _indented(body: bytes) -> tuple[bytes, Headers]:
    with contextlib.suppress(orjson.JSONDecodeError):  # not JSON after all: as written
        body = orjson.dumps(orjson.loads(body), option=orjson.OPT_INDENT_2)
    return body, []
