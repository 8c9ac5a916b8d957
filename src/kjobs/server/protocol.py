"""uvicorn's httptools protocol with a bound on a request's head, as Go's `net/http` server has, and which sends a
response's head and the start of its body as one write.

httptools (llhttp) sets no limit on a request line and headers, and gathers a header's value across reads: a
client sending a 50 MB header made the server hold all of it. Go reads at most `DefaultMaxHeaderBytes` (1 MiB,
`limits.MAX_HEADER_BYTES`) plus 4096 bytes of slack, then writes `431 Request Header Fields Too Large` and hangs
up (net/http `server.go`, `errTooLarge`); this protocol counts the bytes it receives until a request's headers are
complete and does the same.

uvicorn writes a response's head and its body separately: over TLS each write is a record of its own, encrypted and
sent apart (two `SSLObject.write`s and two socket sends a request, a tenth of a busy server's loop in a profile of
`bench/bench_http.py`). Go's server buffers the head with the body (`bufio.Writer` under `response.w`, flushed when
the handler returns); `_CoalescingTransport` holds the head until the body's first write and sends them together.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from kjobs.server import limits

_SLACK = 4096
_TOO_LARGE = (
    b"HTTP/1.0 431 Request Header Fields Too Large\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"431 Request Header Fields Too Large"
)


_JOIN_LIMIT = 64 * 1024
"""A held head is joined with a body of up to this many bytes; a larger body follows it as a write of its own."""

_HEAD = b"HTTP/1.1 "


class _CoalescingTransport:
    """A transport that holds a response's head (uvicorn writes it alone, first) until the next write, the first of
    its body, and sends both as one; a head with no body write in the same turn of the event loop (a watch's, a
    stream's) is sent at the end of that turn. Every other write goes straight through, so no response waits for the
    rest of the loop's turn; `close` sends a held head first, `abort` drops it (as it drops the transport's buffer).
    """

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._loop = asyncio.get_running_loop()
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if len(data) <= _JOIN_LIMIT:
                self._transport.write(held + data)
                return
            self._transport.write(held)
        elif data.startswith(_HEAD):
            self._held = data
            self._loop.call_soon(self._release)
            return
        if data:
            self._transport.write(data)

    def _release(self) -> None:
        held = self._held
        if held is None:
            return
        self._held = None
        if not self._transport.is_closing():  # the connection was lost meanwhile: dropped, as a lost one drops writes
            self._transport.write(held)

    def close(self) -> None:
        self._release()
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """`HttpToolsProtocol` that refuses a request head beyond `limits.MAX_HEADER_BYTES`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_bytes = 0
        self._in_head = True
        self._refused = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.transport = cast(asyncio.Transport, _CoalescingTransport(transport))

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._in_head:
            self._head_bytes += len(data)
            if self._head_bytes > limits.MAX_HEADER_BYTES + _SLACK:
                self._refused = True
                self.transport.write(_TOO_LARGE)
                self.transport.close()
                return
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._head_bytes = 0
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head = True
