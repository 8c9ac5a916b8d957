"""The API server's WebSocket protocols (pods/exec, attach, port-forward: `kjobs.server.remotecommand`), uvicorn's
wsproto protocol with kube-apiserver's refusals; imported at the first upgrade (`kjobs.server.runner`)."""

from __future__ import annotations

import asyncio
import http
from collections.abc import Callable
from typing import Any

import wsproto
from uvicorn.protocols.websockets.wsproto_impl import WSProtocol as UvicornWSProtocol
from wsproto.connection import ConnectionType
from wsproto.events import Event, RejectConnection

from kjobs.server.protocol import tls_extension


class _GoRejectingConnection(wsproto.WSConnection):
    """wsproto's server side, refusing an upgrade with the status line and `Date` that Go's net/http writes.

    A WebSocket request kube-apiserver refuses before the upgrade (a wrong container, a pod without a node, a
    missing permission) is an ordinary HTTP response written by net/http: `HTTP/1.1 400 Bad Request` (the
    reason phrase is `http.StatusText`, or `status code N` for a code it does not know) and a `Date` header.
    wsproto sends h11's default empty phrase (`HTTP/1.1 400 `) and no date, which clients show: the official
    Python client raised `Handshake status 400 None`, lightkube's httpx-ws `<Response [400 ]>`."""

    def __init__(self, date: Callable[[], list[tuple[bytes, bytes]]]) -> None:
        super().__init__(ConnectionType.SERVER)
        self._date = date

    def send(self, event: Event) -> bytes:
        if not isinstance(event, RejectConnection):
            return super().send(event)
        headers = list(event.headers)
        if not any(name.lower() == b"date" for name, _ in headers):
            headers = [*self._date(), *headers]
        data = super().send(RejectConnection(status_code=event.status_code, headers=headers, has_body=event.has_body))
        line, crlf, rest = data.partition(b"\r\n")
        if line.endswith(b" "):  # h11's status line without a reason phrase
            line += _reason_phrase(event.status_code).encode()
        return line + crlf + rest


def _reason_phrase(code: int) -> str:
    try:
        return http.HTTPStatus(code).phrase
    except ValueError:
        return f"status code {code}"  # Go's net/http for a code StatusText does not know


class WSProtocol(UvicornWSProtocol):
    """uvicorn's wsproto WebSocket protocol whose refusals are written as Go's net/http writes them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        state = kwargs.get("server_state")
        headers: list[tuple[bytes, bytes]] = self.default_headers
        # The Date header is read from the server's state, never through `self`: a closure over the protocol,
        # held by its own connection, made each upgraded connection a reference cycle that only the cyclic GC
        # frees, with its TLS buffers (`kjobs up`'s young-generation threshold is 100,000 objects: some 90 MB of
        # closed `kubectl exec` connections before a pass; docs/soak41.md).
        self.conn = _GoRejectingConnection(
            lambda: [(k, v) for k, v in (headers if state is None else state.default_headers) if k == b"date"]
        )


class TlsWSProtocol(WSProtocol):
    """uvicorn's wsproto WebSocket protocol that reports the connection's verified client certificate too (a
    connection upgraded from HTTP is handed over with its transport; the HTTP scope's extension is not)."""

    _tls: dict[str, Any] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._tls = tls_extension(transport)

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        if self._tls is not None:
            extensions: dict[str, Any] = {**(self.scope.get("extensions") or {}), "tls": self._tls}
            self.scope["extensions"] = extensions
