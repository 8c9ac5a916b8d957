"""A server that goes away in the middle of a request is unreachable to `HttpClient`'s callers: they get an
`OSError`, as for a refused connection, and retry it as such (the node agent's sync, its token requests). Before,
aiohttp's `ServerDisconnectedError` escaped as something else: the agent's token request for a pod it adopted
failed half-way through adopting it (chaos seed 135, docs/chaos.md)."""

from __future__ import annotations

import asyncio

import pytest

from kjobs.client.http import HttpClient
from kjobs.client.kubeconfig import Connection
from kjobs.client.resources import PODS


async def _serve(respond: bytes) -> tuple[asyncio.Server, str]:
    """A plain-HTTP server that reads a request's head, writes `respond` and closes the connection."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(respond)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}"


@pytest.mark.parametrize(
    "respond",
    [
        pytest.param(b"", id="closed-before-answering"),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", id="cut-off-body"
        ),
    ],
)
def test_a_server_gone_mid_request_is_an_oserror(respond: bytes) -> None:
    async def body() -> None:
        server, url = await _serve(respond)
        client = HttpClient(Connection(url))
        try:
            with pytest.raises(OSError) as caught:
                await client.get(PODS, "default", "p")
            assert "GET /api/v1/namespaces/default/pods/p" in str(caught.value)
        finally:
            await client.close()
            server.close()
            await server.wait_closed()

    asyncio.run(body())


def test_a_refused_connection_stays_an_oserror() -> None:
    async def body() -> None:
        server, url = await _serve(b"")
        server.close()
        await server.wait_closed()
        client = HttpClient(Connection(url))
        try:
            with pytest.raises(OSError):
                await client.get(PODS, "default", "p")
        finally:
            await client.close()

    asyncio.run(body())
