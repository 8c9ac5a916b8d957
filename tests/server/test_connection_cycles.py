"""A WebSocket connection's protocols are freed by reference counting once the connection ends, not left to the
cyclic GC: `kjobs up` runs that GC's young pass only every 100,000 objects (`kjobs.cluster.tune_gc`), so each
closed `kubectl exec` connection (with its TLS buffers, some 100 KB) stayed in memory until then (docs/soak41.md)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import Any

from uvicorn.config import Config
from uvicorn.server import ServerState

from kjobs.server.protocol import BoundedHttpToolsProtocol
from kjobs.server.wsprotocol import TlsWSProtocol as _TlsWSProtocol
from kjobs.server.wsprotocol import WSProtocol as _WSProtocol


async def _app(scope: Any, receive: Any, send: Any) -> None:
    return None


def _freed_without_the_gc(make: Any) -> bool:
    async def body() -> bool:
        config = Config(app=_app, lifespan="off")
        config.load()
        protocol = make(config=config, server_state=ServerState(), app_state={})
        ref = weakref.ref(protocol)
        del protocol
        return ref() is None

    gc.disable()
    try:
        return asyncio.run(body())
    finally:
        gc.enable()


def test_a_websocket_protocol_is_freed_without_the_cyclic_gc() -> None:
    assert _freed_without_the_gc(_WSProtocol)
    assert _freed_without_the_gc(_TlsWSProtocol)


class _Transport(asyncio.Transport):
    """Just enough of a socket transport for an HTTP protocol to parse a request and upgrade it."""

    def __init__(self) -> None:
        super().__init__()
        self.protocol: Any = None
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 40000), "sockname": ("127.0.0.1", 6443)}.get(name, default)

    def set_protocol(self, protocol: Any) -> None:
        self.protocol = protocol

    def write(self, data: Any) -> None:
        pass

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


UPGRADE = (
    b"GET /api/v1/namespaces/default/pods/p/exec HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
    b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


def test_an_http_protocol_that_handed_its_connection_over_is_freed_without_the_cyclic_gc() -> None:
    """After a WebSocket upgrade the HTTP protocol lets its parser (which holds its callbacks) go: uvicorn's own
    `HttpToolsProtocol` and its parser otherwise stay a cycle, with the TLS transport it holds."""

    async def body() -> tuple[bool, bool]:
        config = Config(app=_app, lifespan="off", ws="wsproto")
        config.load()
        config.ws_protocol_class = _WSProtocol
        protocol = BoundedHttpToolsProtocol(config=config, server_state=ServerState(), app_state={})
        transport = _Transport()
        protocol.connection_made(transport)
        protocol.data_received(UPGRADE)
        upgraded = isinstance(transport.protocol, _WSProtocol)
        ref = weakref.ref(protocol)
        del protocol
        return upgraded, ref() is None

    gc.disable()
    try:
        upgraded, freed = asyncio.run(body())
    finally:
        gc.enable()
    assert upgraded
    assert freed
