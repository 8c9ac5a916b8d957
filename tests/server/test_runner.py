"""Embedding the server in a running event loop (as `kjobs up` does beside controllers and node agents), over TLS."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import socket
import ssl
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from kjobs.server.app import App, create_app
from kjobs.server.runner import Served, bind, serve, server_config, start_in_loop
from kjobs.store import MemoryStore
from tests.support import client_tls, shared_pki


@contextlib.asynccontextmanager
async def served_in_loop() -> AsyncIterator[tuple[App, Served, httpx.AsyncClient]]:
    """A TLS server started in this loop over a fresh store, and a client of it with the admin's token."""
    store = MemoryStore()
    app = create_app(store)
    sock = bind("127.0.0.1", 0)
    pki = shared_pki()
    served = await start_in_loop(app, sock, pki=pki)
    url = f"https://127.0.0.1:{sock.getsockname()[1]}"
    trust = ssl.create_default_context(cafile=str(pki.ca_file))
    headers = {"Authorization": f"Bearer {pki.token}"}
    try:
        async with httpx.AsyncClient(base_url=url, headers=headers, verify=trust) as client:
            yield app, served, client
    finally:
        sock.close()
        store.close()


def test_start_in_loop_serves_until_stopped_and_ends_open_watches() -> None:
    async def main() -> None:
        async with served_in_loop() as (_app, served, client):
            assert (await client.get("/version")).json()["minor"] == "32"
            namespaces = (await client.get("/api/v1/namespaces")).json()["items"]
            assert "default" in {n["metadata"]["name"] for n in namespaces}  # lifespan startup ran
            async with client.stream("GET", "/api/v1/pods?watch=true") as watch:
                assert watch.status_code == 200
                await served.stop()  # ends the stream cleanly instead of waiting for the client
                assert [line async for line in watch.aiter_lines()] == []
        assert served.task.done()

    asyncio.run(asyncio.wait_for(main(), 20))


def test_a_watch_opened_while_the_server_stops_ends_at_once() -> None:
    # An informer whose watch ended watches again at once: during shutdown that watch must end too, or the
    # server's graceful stop waits for it. Once the server serves anew, watches stay open again.
    async def main() -> None:
        async with served_in_loop() as (app, served, client):
            app.close_streams()  # what a stop does first
            async with client.stream("GET", "/api/v1/pods?watch=true") as watch:
                assert watch.status_code == 200
                assert [line async for line in watch.aiter_lines()] == []  # ended, not held open
            app.open_streams()
            async with client.stream("GET", "/api/v1/namespaces?watch=true") as watch:
                lines = watch.aiter_lines()
                assert '"ADDED"' in await asyncio.wait_for(lines.__anext__(), 5)  # open: it streams
                await served.stop()

    asyncio.run(asyncio.wait_for(main(), 20))


def test_a_tls_server_stops_promptly_with_an_idle_keep_alive_client() -> None:
    store = MemoryStore()
    with serve(store, pki=shared_pki()) as url:
        port = int(url.rsplit(":", 1)[1])
        raw = socket.create_connection(("127.0.0.1", port))
        idle = client_tls().wrap_socket(raw, server_hostname="127.0.0.1")
        idle.sendall(b"GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert idle.recv(4096).startswith(b"HTTP/1.1 200")  # answered; the connection stays open, unread
        stopping = time.monotonic()
    assert time.monotonic() - stopping < 1.0  # not the 2 s grace a TLS close waiting for the client would take
    idle.close()
    store.close()


def test_tls_responses_are_not_held_back_by_nagle() -> None:
    store = MemoryStore()
    with serve(store, pki=shared_pki()) as url, httpx.Client(base_url=url, verify=client_tls()) as http:
        http.get("/version")  # the handshake
        times = []
        for _ in range(10):
            started = time.monotonic()
            assert http.get("/api/v1/namespaces").status_code == 200
            times.append(time.monotonic() - started)
    store.close()
    # A delayed ACK holding back the body record costs 40 ms on every request; the fastest of ten shows it whatever
    # else a loaded machine makes a few of them wait for.
    assert min(times) < 0.035


@pytest.mark.slow
def test_an_idle_connection_stays_open_for_the_next_request() -> None:
    # A client reuses a kept-alive connection after a pause (aiohttp keeps one 15 s, Go 90 s): the apiserver keeps
    # it 90 s, so the next request on it is answered instead of meeting a closed connection.
    with serve(MemoryStore()) as url:
        connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=10)
        try:
            for pause in (0.0, 6.0):
                time.sleep(pause)
                connection.request("GET", "/version")
                response = connection.getresponse()
                assert (response.status, json.loads(response.read())["minor"]) == (200, "32")
        finally:
            connection.close()


def test_requests_reach_the_app_with_no_proxy_headers_layer_between() -> None:
    """uvicorn wraps an app in `ProxyHeadersMiddleware` unless told not to: a layer a request that rewrote the
    scope's `client`/`scheme` from `X-Forwarded-*`, which nothing here reads (a cost with no effect on answers)."""
    app = create_app(MemoryStore())
    config = server_config(app, pki=None, lifespan="off")
    config.load()
    assert config.loaded_app is app


def test_responses_name_no_server_as_kube_apiservers_do() -> None:
    """Go's net/http adds `Date` but no `Server` header; uvicorn would send `server: uvicorn` on every answer."""

    async def scenario() -> None:
        async with served_in_loop() as (_, _, client):
            response = await client.get("/version")
            assert response.status_code == 200
            assert "server" not in response.headers
            assert "date" in response.headers

    asyncio.run(scenario())
