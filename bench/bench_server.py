"""Benchmark: the API server's requests/s over loopback beside a bare uvicorn "hello" app, same run, same stack.

    python bench/bench_server.py [--seconds 3] [--connections 16] [--watch-objects 20000]

Each server runs in its own process (uvicorn + uvloop + httptools, one worker); the load generator is a
small keep-alive HTTP/1.1 client on raw asyncio sockets in this process (so the client is not the
bottleneck the way httpx would be). Measured: bare GET, GET of a Job, POST of Pods (MemoryStore),
merge-PATCH of a Pod's status, and watch events/s (initial ADDED events of a preloaded collection).
Prints one line per figure and the GET/bare ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson

PODS = "/api/v1/namespaces/default/pods"
JOB = "/apis/batch/v1/namespaces/default/jobs/bench"


async def _hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
        return
    body = b"hello"
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/plain"), (b"content-length", b"5")],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _serve(kind: str, sock: socket.socket, preload: int) -> None:
    import uvicorn

    from kjobs.server.app import create_app
    from kjobs.server.runner import run_forever
    from kjobs.store import MemoryStore

    if kind == "hello":
        app: Any = _hello
        config = uvicorn.Config(
            app, loop="uvloop", http="httptools", lifespan="on", log_level="warning", access_log=False
        )
        uvicorn.Server(config).run(sockets=[sock])
    else:
        store = MemoryStore(history_size=max(5000, preload + 10))
        for i in range(preload):
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"w-{i:06d}", "namespace": "watch"},
                "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]},
                "status": {"phase": "Pending"},
            }
            store.create("pods", "watch", pod["metadata"]["name"], pod)  # type: ignore[index]
        run_forever(create_app(store), sock)


class Conn:
    """One keep-alive connection issuing requests one after another."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def request(self, raw: bytes) -> int:
        self.writer.write(raw)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        if length:
            await self.reader.readexactly(length)
        return status


def _raw(method: str, path: str, body: bytes = b"", content_type: str = "application/json") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\nAccept: application/json\r\n"
    if body:
        head += f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


async def _load(port: int, seconds: float, connections: int, make: Callable[[int, int], bytes], expect: int) -> float:
    conns = [Conn(*await asyncio.open_connection("127.0.0.1", port)) for _ in range(connections)]
    deadline = time.perf_counter() + seconds
    counts = [0] * connections

    async def worker(i: int) -> None:
        conn = conns[i]
        n = 0
        while time.perf_counter() < deadline:
            status = await conn.request(make(i, n))
            if status != expect:
                raise RuntimeError(f"unexpected status {status}")
            n += 1
        counts[i] = n

    start = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(connections)))
    elapsed = time.perf_counter() - start
    for c in conns:
        c.writer.close()
    return sum(counts) / elapsed


async def _watch_rate(port: int, expected: int) -> float:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    start = time.perf_counter()
    writer.write(_raw("GET", "/api/v1/namespaces/watch/pods?watch=true&resourceVersion=0"))
    seen = 0
    tail = b""
    while seen < expected:
        chunk = await reader.read(1 << 16)
        if not chunk:
            break
        data = tail + chunk
        seen += data.count(b'{"type":"')
        tail = data[-8:]
        seen -= tail.count(b'{"type":"')
    elapsed = time.perf_counter() - start
    writer.close()
    return seen / elapsed


def _start(kind: str, preload: int) -> tuple[multiprocessing.Process, int]:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    port = sock.getsockname()[1]
    proc = multiprocessing.get_context("fork").Process(target=_serve, args=(kind, sock, preload), daemon=True)
    proc.start()
    sock.close()
    return proc, port


async def _wait_ready(port: int) -> None:
    deadline = time.perf_counter() + 30
    while True:
        try:
            conn = Conn(*await asyncio.open_connection("127.0.0.1", port))
            await conn.request(_raw("GET", "/version"))
            conn.writer.close()
            return
        except (OSError, asyncio.IncompleteReadError):
            if time.perf_counter() > deadline:
                raise
            await asyncio.sleep(0.05)


async def main(seconds: float, connections: int, watch_objects: int) -> dict[str, float]:
    """Run every measurement; returns the figures."""
    results: dict[str, float] = {}
    hello, hello_port = _start("hello", 0)
    try:
        await _wait_ready(hello_port)
        results["bare GET"] = await _load(hello_port, seconds, connections, lambda i, n: _raw("GET", "/"), 200)
    finally:
        hello.terminate()
        hello.join()
    server, port = _start("kjobs", watch_objects)
    try:
        await _wait_ready(port)
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "bench"},
            "spec": {
                "template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox:1.36"}]}
                }
            },
        }
        conn = Conn(*await asyncio.open_connection("127.0.0.1", port))
        assert await conn.request(_raw("POST", "/apis/batch/v1/namespaces/default/jobs", orjson.dumps(job))) == 201
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "status-target"},
            "spec": {"nodeName": "n1", "containers": [{"name": "main", "image": "busybox:1.36"}]},
        }
        assert await conn.request(_raw("POST", PODS, orjson.dumps(pod))) == 201
        conn.writer.close()
        results["GET job"] = await _load(port, seconds, connections, lambda i, n: _raw("GET", JOB), 200)

        def create(i: int, n: int) -> bytes:
            body = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"b-{i}-{n}"},
                "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]},
            }
            return _raw("POST", PODS, orjson.dumps(body))

        results["POST pod"] = await _load(port, seconds, connections, create, 201)

        def patch(i: int, n: int) -> bytes:
            body = orjson.dumps({"status": {"message": f"m-{i}-{n}"}})
            return _raw("PATCH", PODS + "/status-target/status", body, "application/merge-patch+json")

        results["PATCH pod status"] = await _load(port, seconds, connections, patch, 200)
        if watch_objects:
            results["watch events"] = await _watch_rate(port, watch_objects)
    finally:
        server.terminate()
        server.join()
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--watch-objects", type=int, default=20000)
    ns = parser.parse_args()
    import uvloop

    figures = uvloop.run(main(ns.seconds, ns.connections, ns.watch_objects))
    for name, value in figures.items():
        unit = "events/s" if name.startswith("watch") else "req/s"
        print(f"{name:18s} {value:10.0f} {unit}")
    print(f"GET job / bare GET = {figures['GET job'] / figures['bare GET']:.0%}")
    sys.exit(0)
