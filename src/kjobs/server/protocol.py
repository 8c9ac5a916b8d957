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

import httptools
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


SPDY_UPGRADE = b"spdy/3.1"
HIJACK = "kjobs.hijack"
"""The scope extension of a request asking `Upgrade: SPDY/3.1` (pods/portforward): a callable that answers 101
with the given headers and hands the connection over as an asyncio (reader, writer) pair."""
_HELD_LIMIT = 1 << 20


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """`HttpToolsProtocol` that refuses a request head beyond `limits.MAX_HEADER_BYTES`, and hands a connection
    upgraded to SPDY/3.1 over to the application (`HIJACK`), which uvicorn does not do for anything but WebSocket:
    the app checks the request as any other (401, 403, 404 answered as HTTP responses, after which the connection
    closes) and, once it accepts, owns the connection's bytes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_bytes = 0
        self._in_head = True
        self._refused = False
        self._held: bytearray | None = None
        """Bytes after the head of a request asking for SPDY, kept until the app takes the connection."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.transport = cast(asyncio.Transport, _CoalescingTransport(transport))

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._held is not None:  # an SPDY upgrade waits for the app: hold what follows for it
            if len(self._held) + len(data) > _HELD_LIMIT:
                self._refused = True
                self.transport.close()
                return
            self._held += data
            return
        if self._in_head:
            self._head_bytes += len(data)
            if self._head_bytes > limits.MAX_HEADER_BYTES + _SLACK:
                self._refused = True
                self.transport.write(_TOO_LARGE)
                self.transport.close()
                return
        self._unset_keepalive_if_required()  # uvicorn's data_received, with SPDY's upgrade held for the app
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self.logger.warning("Invalid HTTP request received.")
            self.send_400_response("Invalid HTTP request received.")
        except httptools.HttpParserUpgrade as exc:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            elif self._get_upgrade() == SPDY_UPGRADE and self.cycle is not None:
                self._held = bytearray(data[exc.args[0] :] if exc.args else b"")
            else:
                self._unsupported_upgrade_warning()

    def handle_websocket_upgrade(self) -> None:
        """uvicorn's upgrade, after which this protocol is done with the connection: its parser, which holds
        this protocol's callbacks, is let go, so that the protocol (and the TLS transport it holds) is freed when
        the WebSocket ends rather than left to the cyclic GC (docs/soak41.md)."""
        super().handle_websocket_upgrade()
        self.parser = None  # type: ignore[assignment]

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._head_bytes = 0
        super().on_headers_complete()
        if self.parser.should_upgrade() and self.cycle is not None and self._get_upgrade() == SPDY_UPGRADE:
            extensions = cast(dict[str, Any], self.scope.setdefault("extensions", {}))
            extensions[HIJACK] = self._hijack

    def on_response_complete(self) -> None:
        if self._held is not None:  # an SPDY upgrade refused (401, 404...): the connection is done
            self._held = None
            self.transport.close()
            return
        super().on_response_complete()

    def _hijack(self, headers: list[tuple[bytes, bytes]]) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Answer 101 Switching Protocols and give the connection to the caller (see the class note)."""
        cycle = self.cycle
        held = bytes(self._held or b"")
        self._held = None
        cycle.disconnected = True  # uvicorn writes nothing more on this request
        cycle.response_complete = True
        self.connections.discard(self)
        self._unset_keepalive_if_required()
        raw = cast(Any, self.transport)
        transport = cast(asyncio.Transport, getattr(raw, "_transport", raw))
        head = [b"HTTP/1.1 101 Switching Protocols\r\n"]
        head += [name + b": " + value + b"\r\n" for name, value in headers]
        transport.write(b"".join(head) + b"\r\n")
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_HELD_LIMIT, loop=loop)
        protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
        transport.set_protocol(protocol)
        protocol.connection_made(transport)
        if held:
            reader.feed_data(held)
        transport.resume_reading()
        return reader, asyncio.StreamWriter(transport, protocol, reader, loop)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head = True


def tls_extension(transport: asyncio.BaseTransport) -> dict[str, Any] | None:
    """The ASGI TLS extension's `client_cert_name` (an RFC 4514-style subject; None without a certificate)."""
    sslobj = transport.get_extra_info("ssl_object")
    if sslobj is None:
        return None
    peer = sslobj.getpeercert() or {}
    parts = [f"{key}={value}" for rdn in reversed(peer.get("subject", ())) for key, value in rdn]
    return {"client_cert_name": ",".join(parts) or None}
