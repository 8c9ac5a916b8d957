"""Running the API server: uvicorn (uvloop + httptools) in the foreground or in a background thread.

`serve()` is for tests and for embedding: it binds the socket first (port 0 picks a free one), runs
uvicorn in a daemon thread and returns once the server has started (a threading event set by the server's
startup, so no sleeping), yielding the base URL; leaving the block closes open watch streams and stops the
server. `run_forever()` is what `kjobs up` uses: the main thread, where uvicorn turns SIGINT/SIGTERM into a
graceful shutdown.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from kjobs.server.app import App, create_app
from kjobs.server.logs import LogSource
from kjobs.store import Store

STARTUP_TIMEOUT = 10.0


class _Server(uvicorn.Server):
    """uvicorn's server with a readiness event."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self.ready.set()


def _config(app: App, *, ssl_certfile: str | None, ssl_keyfile: str | None, **extra: Any) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        loop="uvloop",
        http="httptools",
        lifespan="on",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
        ssl_certfile=ssl_certfile,
        ssl_keyfile=ssl_keyfile,
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
    token: str | None = None,
    app: App | None = None,
    ssl_certfile: str | None = None,
    ssl_keyfile: str | None = None,
) -> Iterator[str]:
    """Run the API server over `store` in a background thread; yields its base URL (`http://127.0.0.1:PORT`)."""
    app = app or create_app(store, clock=clock, logs=logs, token=token)
    sock = bind(host, port)
    server = _Server(_config(app, ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile))
    thread = threading.Thread(
        target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True, name="kjobs-apiserver"
    )
    thread.start()
    try:
        if not server.ready.wait(STARTUP_TIMEOUT):
            raise RuntimeError("the API server did not start")
        bound_port = sock.getsockname()[1]
        scheme = "https" if ssl_certfile else "http"
        shown = f"[{host}]" if ":" in host else host
        yield f"{scheme}://{shown}:{bound_port}"
    finally:
        app.close_streams()
        server.should_exit = True
        thread.join(STARTUP_TIMEOUT)
        sock.close()


def run_forever(
    app: App,
    sock: socket.socket,
    *,
    ssl_certfile: str | None = None,
    ssl_keyfile: str | None = None,
    on_ready: Callable[[], None] | None = None,
) -> None:
    """Serve in the calling (main) thread until SIGINT/SIGTERM, then shut down gracefully."""
    server = _Server(_config(app, ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile))
    if on_ready is not None:
        threading.Thread(target=lambda: server.ready.wait() and on_ready(), daemon=True).start()

    original = server.handle_exit

    def handle_exit(sig: int, frame: Any) -> None:
        app.close_streams()
        original(sig, frame)
        # a requested stop is a normal exit (status 0): do not let uvicorn re-raise the signal afterwards
        server._captured_signals.clear()

    server.handle_exit = handle_exit  # type: ignore[method-assign]
    server.run(sockets=[sock])
