"""Running the API server: uvicorn (uvloop + httptools) in the foreground or in a background thread.

`serve()` is for tests: it binds the socket first (port 0 picks a free one), runs uvicorn in a daemon
thread and returns once the server has started (an event set by the server's startup, so no sleeping),
yielding the base URL; leaving the block closes open watch streams and stops the server.
`start_in_loop()` embeds the server in a running event loop (beside controllers and node agents), and
`run_forever()` is what `kjobs up` uses: the main thread, where uvicorn turns SIGINT/SIGTERM into a graceful
shutdown, with components started after the server and stopped after it.

Given a `Pki` (`kjobs.server.tls`), each of them serves TLS with the serving certificate and asks for an
optional client certificate verified against the CA (kube-apiserver's `--client-ca-file`: a certificate the CA
did not sign fails the handshake); `_TlsHttpToolsProtocol` hands the verified subject to the app as the ASGI TLS
extension (`scope["extensions"]["tls"]["client_cert_name"]`), which uvicorn does not fill itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal, Protocol, cast

import uvicorn

from kjobs import stopping
from kjobs.server.app import App, create_app
from kjobs.server.auth import Authenticator
from kjobs.server.logs import LogSource
from kjobs.server.protocol import BoundedHttpToolsProtocol, tls_extension
from kjobs.server.tls import Pki
from kjobs.store import Store

STARTUP_TIMEOUT = 10.0
IDLE_TIMEOUT = 90
"""Seconds an idle keep-alive connection stays open: the apiserver's `IdleTimeout` (Go's `http.DefaultTransport`
keeps idle connections as long; staging/src/k8s.io/apiserver/pkg/server/secure_serving.go). uvicorn's default of
5 s closed connections clients still meant to reuse (aiohttp, so kopf, keeps them 15 s), and a request sent as the
server closed its connection failed (kopf: `ServerDisconnectedError`, retried with an ERROR log line)."""


class _Server(uvicorn.Server):
    """uvicorn's server with a readiness event."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()
        self.on_started: Callable[[], object] | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self.ready.set()
        if self.on_started is not None:
            self.on_started()

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn's, for `kjobs.stopping.STOP_SIGNALS` (SIGHUP too), acting at once on one received while
        `kjobs.stopping.held`, and never raising the signal again afterwards: a requested stop exits 0."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {signum: signal.signal(signum, self.handle_exit) for signum in stopping.STOP_SIGNALS}
        try:
            if stopping.pending():
                self.handle_exit(stopping.pending(), None)
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


class _TlsHttpToolsProtocol(BoundedHttpToolsProtocol):
    """uvicorn's httptools protocol that also reports the connection's verified client certificate."""

    _tls: dict[str, Any] | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        # uvloop leaves Nagle on under TLS: a response's body record then waits for the client's delayed ACK of
        # its header record (40 ms a request) unless TCP_NODELAY is set, as it is for plain connections
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
        self._tls = tls_extension(transport)

    def shutdown(self) -> None:
        """Abort an idle connection at a stop: closing a TLS transport waits for the peer's close_notify, which an
        idle pooled client (the Python client's urllib3) never sends, so the stop would wait out its grace."""
        if self.cycle is None or self.cycle.response_complete:
            self.transport.abort()
        else:
            super().shutdown()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._tls is not None:
            self.scope["extensions"] = {"tls": self._tls}  # type: ignore[dict-item]  # asgiref types it loosely


def _ws_protocol(**kwargs: Any) -> asyncio.Protocol:
    """uvicorn's WebSocket protocol class, as uvicorn calls it for an upgrade (`ws_protocol_class(config=...,
    server_state=..., app_state=...)`), imported then: wsproto and h11 are 30 ms of CPU at every start, and most
    servers never see an upgrade (`kjobs.server.wsprotocol`)."""
    from kjobs.server.wsprotocol import WSProtocol

    return WSProtocol(**kwargs)


def _tls_ws_protocol(**kwargs: Any) -> asyncio.Protocol:
    """`_ws_protocol`'s, reporting the connection's verified client certificate too."""
    from kjobs.server.wsprotocol import TlsWSProtocol

    return TlsWSProtocol(**kwargs)


def server_config(
    app: App, *, pki: Pki | None, lifespan: Literal["auto", "on", "off"] = "on", **extra: Any
) -> uvicorn.Config:
    """uvicorn's settings; with `pki`, TLS, and an `app` without an authenticator gets the PKI's.

    No `ProxyHeadersMiddleware` (uvicorn's default `proxy_headers=True` wraps the app in it): it rewrote the ASGI
    scope's `client` and `scheme` from `X-Forwarded-For`/`-Proto` on every request from loopback, and nothing here
    reads either (authentication is the TLS peer's certificate or a token), so it was a layer of work a request
    with no effect on any answer. No `Server` header either: kube-apiserver's Go `net/http` server sends none,
    where uvicorn would name itself on every response. No WebSocket `permessage-deflate` (uvicorn negotiates it
    when offered, as the JavaScript client's `ws` does): kube-apiserver's WebSocket server (golang.org/x/net/
    websocket, under apimachinery's wsstream) implements no extension, so its frames are never compressed."""
    tls: dict[str, Any] = {}
    if pki is not None:
        if app.authenticator is None:
            app.authenticator = Authenticator(pki.token)
        tls = {
            "ssl_certfile": str(pki.server_cert),
            "ssl_keyfile": str(pki.server_key),
            "ssl_ca_certs": str(pki.ca_file),
            "ssl_cert_reqs": ssl.CERT_OPTIONAL,
        }
    return uvicorn.Config(
        app,
        loop="uvloop",
        http=_TlsHttpToolsProtocol if pki is not None else BoundedHttpToolsProtocol,  # with Go's bound on a head
        ws=cast(Any, _tls_ws_protocol if pki is not None else _ws_protocol),  # pods/exec (kjobs.server.remotecommand)
        lifespan=lifespan,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
        timeout_keep_alive=IDLE_TIMEOUT,
        proxy_headers=False,
        server_header=False,
        ws_per_message_deflate=False,
        **tls,
        **extra,
    )


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket (SO_REUSEADDR, so a restarted server can take the same port at once)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.set_inheritable(True)
    return sock


@contextmanager
def serve(
    store: Store,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    clock: Callable[[], float] = time.time,
    logs: LogSource | None = None,
    app: App | None = None,
    pki: Pki | None = None,
) -> Iterator[str]:
    """Run the API server over `store` in a background thread; yields its base URL: `https://127.0.0.1:PORT`
    with `pki`, whose client certificate or token it then requires (an `app` without an authenticator gets one),
    else `http://127.0.0.1:PORT` open to everyone."""
    app = app or create_app(store, clock=clock, logs=logs)
    app.open_streams()
    sock = bind(host, port)
    app.api_port = sock.getsockname()[1]
    server = _Server(server_config(app, pki=pki))
    thread = threading.Thread(
        target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True, name="kjobs-apiserver"
    )
    thread.start()
    try:
        if not server.ready.wait(STARTUP_TIMEOUT):
            raise RuntimeError("the API server did not start")
        bound_port = sock.getsockname()[1]
        scheme = "https" if pki is not None else "http"
        shown = f"[{host}]" if ":" in host else host
        yield f"{scheme}://{shown}:{bound_port}"
    finally:
        app.close_streams()
        server.should_exit = True
        thread.join(STARTUP_TIMEOUT)
        sock.close()


class Component(Protocol):
    """Something started after the server and stopped before it (controllers, node agents)."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class Served:
    """A server running as a task of the current event loop."""

    def __init__(self, server: _Server, task: asyncio.Task[None], app: App) -> None:
        self.server = server
        self.task = task
        self.app = app

    async def stop(self) -> None:
        """Close the open streams and shut the server down gracefully."""
        self.app.close_streams()
        self.server.should_exit = True
        await self.task


async def start_in_loop(app: App, sock: socket.socket, *, pki: Pki | None = None) -> Served:
    """Start serving `app` on `sock` inside the running event loop (TLS with `pki`, see `serve`); returns once the
    server accepts requests.

    In the main thread uvicorn turns SIGINT/SIGTERM into a graceful stop: `Served.task` then finishes.
    """
    app.open_streams()
    app.api_port = sock.getsockname()[1]
    server = _Server(server_config(app, pki=pki))
    loop = asyncio.get_running_loop()
    started: asyncio.Future[None] = loop.create_future()

    def mark_started() -> None:
        if not started.done():
            started.set_result(None)

    server.on_started = mark_started
    original = server.handle_exit

    def handle_exit(sig: int, frame: Any) -> None:
        app.close_streams()
        original(sig, frame)
        # a requested stop is a normal exit (status 0): do not let uvicorn re-raise the signal afterwards
        server._captured_signals.clear()

    server.handle_exit = handle_exit  # type: ignore[method-assign]
    task = loop.create_task(server.serve(sockets=[sock]))
    done, _ = await asyncio.wait({task, started}, return_when=asyncio.FIRST_COMPLETED)
    if task in done and not started.done():  # it stopped before it started: surface why
        task.result()
        raise RuntimeError("the API server stopped during startup")
    return Served(server, task, app)


def run_forever(
    app: App,
    sock: socket.socket,
    *,
    pki: Pki | None = None,
    on_ready: Callable[[], None] | None = None,
    components: Sequence[Component] = (),
) -> None:
    """Serve in the calling (main) thread until SIGINT/SIGTERM/SIGHUP, then shut down gracefully.

    `components` are started (in order) once the server accepts requests and stopped (in reverse) after
    it stopped; `on_ready` runs when all of them have started.
    """

    async def main() -> None:
        served = await start_in_loop(app, sock, pki=pki)
        started: list[Component] = []
        try:
            for component in components:
                if served.server.should_exit:  # a stop signal came while starting: start no more
                    break
                await component.start()
                started.append(component)
            if on_ready is not None and not served.server.should_exit:
                on_ready()
            await served.task
        finally:
            if not served.task.done():
                await served.stop()
            for component in reversed(started):
                with contextlib.suppress(Exception):
                    await component.stop()

    import uvloop

    uvloop.run(main())
