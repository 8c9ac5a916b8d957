"""uvicorn's httptools protocol with a bound on a request's head, as Go's `net/http` server has.

httptools (llhttp) sets no limit on a request line and headers, and gathers a header's value across reads: a
client sending a 50 MB header made the server hold all of it. Go reads at most `DefaultMaxHeaderBytes` (1 MiB,
`limits.MAX_HEADER_BYTES`) plus 4096 bytes of slack, then writes `431 Request Header Fields Too Large` and hangs
up (net/http `server.go`, `errTooLarge`); this protocol counts the bytes it receives until a request's headers are
complete and does the same.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from kjobs.server import limits

_SLACK = 4096
_TOO_LARGE = (
    b"HTTP/1.0 431 Request Header Fields Too Large\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"431 Request Header Fields Too Large"
)


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """`HttpToolsProtocol` that refuses a request head beyond `limits.MAX_HEADER_BYTES`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_bytes = 0
        self._in_head = True
        self._refused = False

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
