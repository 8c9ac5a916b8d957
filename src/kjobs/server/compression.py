"""Gzipped API answers, as kube-apiserver writes them (the `APIResponseCompression` feature, on by default).

kube-apiserver's `SerializeObject` (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/
writers.go, `deferredResponseWriter` and `negotiateContentEncoding`) gzips, at level 1
(`defaultGzipContentEncodingLevel`), an object, list, table, Status or discovery document it writes in one
piece when that is more than 128 KiB (`defaultGzipThresholdBytes`) and the request's `Accept-Encoding` has a
token that is exactly `gzip` once trimmed (`gzip;q=0.5` is not): `Content-Encoding: gzip`, `Vary:
Accept-Encoding`. Watch streams, logs, `/version`, health checks and metrics are written by other handlers and
never so; OpenAPI documents are kube-openapi's, gzipped by its own rule (`kjobs.server.app`). kubectl and
client-go (Go's transport), the JavaScript client 2.x (undici's fetch), httpx and aiohttp ask for gzip and inflate
it unseen; the official Python client (urllib3) does not ask (docs/js43.md).
"""

from __future__ import annotations

import asyncio
import gzip

from kjobs.server.held_answer import Headers, Send, holding

THRESHOLD = 128 * 1024
"""Bytes an answer must exceed to be gzipped (`defaultGzipThresholdBytes`)."""
LEVEL = 1
"""`defaultGzipContentEncodingLevel` (kubernetes/kubernetes#112296: level 1 costs least CPU for nearly the
same size)."""
_SERIALIZED = (b"application/json", b"application/yaml", b"application/vnd.kubernetes.protobuf", b"application/cbor")
"""The media types of what `SerializeObject` writes (its negotiated serializers; a Table is `application/json;as=
Table;...`)."""


def accepts_gzip(accept_encoding: str) -> bool:
    """`negotiateContentEncoding`: a comma-separated token that is `gzip` once trimmed (no parameters, no `*`)."""
    return any(token.strip() == "gzip" for token in accept_encoding.split(","))


def gzipping(send: Send) -> Send:
    """`send`, with a serialized answer of known length over `THRESHOLD` gzipped (its head held until its body is
    complete); a stream, text, or an answer already encoded passed on as it comes."""
    return holding(send, _large_serialized, _gzipped)


def _large_serialized(headers: dict[bytes, bytes]) -> bool:
    media = headers.get(b"content-type", b"").split(b";", 1)[0].strip().lower()
    length = headers.get(b"content-length", b"")
    return media in _SERIALIZED and b"content-encoding" not in headers and length.isdigit() and int(length) > THRESHOLD


async def _gzipped(body: bytes) -> tuple[bytes, Headers]:
    compressed = await asyncio.to_thread(gzip.compress, body, LEVEL, mtime=0)
    return compressed, [(b"content-encoding", b"gzip"), (b"vary", b"Accept-Encoding")]
