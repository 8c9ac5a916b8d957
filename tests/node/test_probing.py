"""Probe and hook actions (`kjobs.node.probing`): what each returns and the text the kubelet shows for it
(pkg/probe/http, pkg/probe/tcp, pkg/kubelet/lifecycle/handlers.go)."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from pathlib import Path

from kjobs.node.execution import ExecSpec
from kjobs.node.probing import Timing, resolve_port, run_exec, run_hook, run_http, run_tcp, timing

CONTAINER = {"name": "main", "ports": [{"name": "http", "containerPort": 8080}]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_timing_takes_the_api_defaults() -> None:
    assert timing({}) == Timing(0.0, 10.0, 1.0, 1, 3, None)
    custom = timing({"periodSeconds": 2, "failureThreshold": 1, "terminationGracePeriodSeconds": 5})
    assert (custom.period, custom.failure_threshold, custom.grace) == (2.0, 1, 5.0)


def test_ports_by_number_text_or_container_port_name() -> None:
    assert [resolve_port(p, CONTAINER) for p in (80, "81", "http", "nope", 0)] == [80, 81, 8080, None, None]


def test_http_status_decides_and_a_refused_connection_says_so() -> None:
    async def body() -> None:
        codes = iter([500, 302])

        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:  # the TCP probe: connected, then closed
                writer.close()
                return
            writer.write(f"HTTP/1.1 {next(codes)} X\r\nContent-Length: 0\r\n\r\n".encode())
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        action = {"path": "/healthz", "port": port}
        async with server:
            assert await run_http(action, CONTAINER, "127.0.0.1", 1.0) == (
                "failure",
                "HTTP probe failed with statuscode: 500",
            )
            assert await run_http(action, CONTAINER, "127.0.0.1", 1.0) == ("success", "")
            assert await run_tcp({"port": port}, CONTAINER, "127.0.0.1", 1.0) == ("success", "")
        closed = free_port()
        refused = f"dial tcp 127.0.0.1:{closed}: connect: connection refused"
        assert await run_tcp({"port": closed}, CONTAINER, "127.0.0.1", 1.0) == ("failure", refused)
        result, output = await run_http({"port": closed}, CONTAINER, "127.0.0.1", 1.0)
        assert (result, output) == ("failure", f'Get "http://127.0.0.1:{closed}/": {refused}')
        # A hook's HTTP GET fails only when it cannot be made (handlers.go does not read the status).
        message = await run_hook({"httpGet": {"path": "/x", "port": closed}}, CONTAINER, _no_exec, "127.0.0.1", "p")
        hook_error = f'Get "http://127.0.0.1:{closed}/x": {refused}'
        assert message == f'HTTP lifecycle hook (/x) for Container "main" in Pod "p" failed - error: {hook_error}'
        slept: list[float] = []

        async def sleep(seconds: float) -> None:
            slept.append(seconds)

        assert await run_hook({"sleep": {"seconds": 3}}, CONTAINER, _no_exec, "127.0.0.1", "p", sleep) == ""
        assert slept == [3.0]

    asyncio.run(body())


def _no_exec(command: list[str]) -> object:
    raise AssertionError("no exec expected")


def test_an_exec_probe_out_of_time_fails_and_its_command_is_killed(tmp_path: Path) -> None:
    """pkg/probe/exec with the ExecProbeTimeout behaviour: `command "sh -c sleep 5" timed out` (a failure)."""
    spec = ExecSpec(argv=["sh", "-c", "sleep 5"], env={"PATH": os.defpath}, cwd=str(tmp_path), command=["sh"])
    began = time.monotonic()
    result = asyncio.run(run_exec(lambda command: spec, ["sh", "-c", "sleep 5"], 0.3))
    assert result == ("failure", 'command "sh -c sleep 5" timed out', None)
    assert time.monotonic() - began < 3
