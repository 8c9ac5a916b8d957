"""Containers with `tty: true` on the process runtime: a new pseudo-terminal as controlling terminal and stdio,
its output logged as `stdout`, attach input through its line discipline, resizes, and a fresh terminal per start
with nothing left open (`kjobs.node.shim`, `kjobs.node.attach`)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from kjobs.api.types import Obj
from kjobs.node.attach import Attached
from kjobs.node.logs import render
from kjobs.node.logsource import AgentLogs
from kjobs.node.process_runtime import ProcessRuntime
from kjobs.server.remotecommand import STDOUT, exec_options
from tests.node.helpers import make_pod
from tests.node.test_exec import _running
from tests.node.test_process_runtime import eventually, finish, sh, with_runtime

pytestmark = pytest.mark.e2e


def _log(runtime: ProcessRuntime, number: int = 0) -> bytes:
    return (runtime.log_dir / f"uid-1_main_{number}.log").read_bytes()


def _attach(runtime: ProcessRuntime, size: tuple[int, int] | None = None) -> Attached:
    log, ended = runtime.attach_log("uid-1", "main")
    return Attached(
        log,
        ended,
        tty=True,
        stdin=runtime.attach_stdin("uid-1", "main"),
        resize=runtime.attach_terminal("uid-1", "main"),
        size=size,
    )


async def _until(attached: Attached, pattern: bytes, seen: bytearray) -> bytes:
    """What the attach sent until `pattern` shows (searched in all it sent)."""
    while not re.search(pattern, seen):
        item = await asyncio.wait_for(attached.output.get(), 5)
        assert item is not None, f"the attach ended before {pattern!r}: {bytes(seen)!r}"
        assert item[0] == STDOUT
        seen += item[1]
    return bytes(seen)


def test_a_tty_container_runs_on_its_own_controlling_terminal_and_logs_it_as_stdout(tmp_path: Path) -> None:
    script = "tty; exec </dev/tty && echo controlling; echo to-stderr >&2"

    async def body(runtime: ProcessRuntime) -> None:
        status = await finish(runtime, make_pod([sh(script, tty=True)]))
        assert status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
        log = _log(runtime)
        assert b" stderr " not in log  # one stream, as containerd logs a tty container's
        assert re.fullmatch(rb"/dev/pts/\d+\r\ncontrolling\r\nto-stderr\r\n", render(log)), log

    with_runtime(tmp_path, body)


def test_without_tty_a_container_has_no_terminal(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        await finish(runtime, make_pod([sh("tty; true", stdin=True)]))
        assert render(_log(runtime)) == b"not a tty\n"
        assert runtime.attach_terminal("uid-1", "main") is None

    with_runtime(tmp_path, body)


def test_an_attached_shell_echoes_computes_resizes_and_exits(tmp_path: Path) -> None:
    shell: Obj = {"name": "main", "image": "busybox", "command": ["sh"], "stdin": True, "stdinOnce": True, "tty": True}

    async def body(runtime: ProcessRuntime) -> None:
        await _running(runtime, make_pod([shell]))
        attached = _attach(runtime, size=(100, 30))  # the client's first size, before any output
        seen = bytearray()
        await attached.write(b"stty size\r")  # Enter in a raw terminal: the line discipline makes it a newline
        await _until(attached, rb"30 100\r\n", seen)
        attached.resize(120, 40)
        await attached.write(b"echo $((6*7)); stty size\r")
        out = await _until(attached, rb"40 120\r\n", seen)
        # echoed by the terminal, then run; the shell's prompt for it comes after the echo when the line was typed
        # before the shell had printed it (typed ahead, as a user may)
        assert re.search(rb"echo \$\(\(6\*7\)\); stty size\r\n([#$] )?42\r\n", out), out
        await attached.write(b"exit\r")
        while await asyncio.wait_for(attached.output.get(), 5) is not None:
            pass
        assert await attached.wait() == 0

    with_runtime(tmp_path, body)


def test_under_a_tty_the_end_of_an_attachs_input_ends_the_attach_and_not_the_containers_stdin(
    tmp_path: Path,
) -> None:
    shell: Obj = {"name": "main", "image": "busybox", "command": ["sh"], "stdin": True, "stdinOnce": True, "tty": True}

    async def body(runtime: ProcessRuntime) -> None:
        await _running(runtime, make_pod([shell]))
        first = _attach(runtime)
        first.close_stdin()
        while await asyncio.wait_for(first.output.get(), 5) is not None:
            pass
        assert await first.wait() == 0
        second = _attach(runtime)  # the shell still reads its terminal: containerd keeps a tty's stdin open
        await second.write(b"echo again-$((1+1))\r")
        await _until(second, rb"again-2\r\n", bytearray())
        await second.write(b"exit 3\r")
        while await asyncio.wait_for(second.output.get(), 5) is not None:
            pass
        handle = runtime.get("uid-1")
        assert handle is not None
        status = await handle.wait()
        assert status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3

    with_runtime(tmp_path, body)


def test_every_start_gets_a_fresh_terminal_and_nothing_stays_open(tmp_path: Path) -> None:
    script = "tty; [ -f again ] && exit 0; touch again; exit 1"

    async def body(runtime: ProcessRuntime) -> None:
        await finish(runtime, make_pod([sh("true")], uid="uid-warm"))  # the shims are up
        shims = runtime._spawner.processes()

        def terminals_and_fifos() -> list[str]:
            """What the shims hold open of terminals (their masters are /dev/ptmx) and stdin FIFOs."""
            links = [os.readlink(f"/proc/{p.pid}/fd/{fd}") for p in shims for fd in os.listdir(f"/proc/{p.pid}/fd")]
            return [link for link in links if link == "/dev/ptmx" or ".stdin" in link]

        container = sh(script, stdin=True, tty=True)
        status = await finish(runtime, make_pod([container], policy="OnFailure"))
        assert status["containerStatuses"][0]["restartCount"] == 1
        for number in (0, 1):
            assert re.match(rb"/dev/pts/\d+\r\n", render(_log(runtime, number)))
        await eventually(lambda: not terminals_and_fifos(), "the shims to close the terminals and FIFOs")

    with_runtime(tmp_path, body)


def test_the_containers_tty_decides_the_attach_not_the_requests(tmp_path: Path) -> None:
    """The kubelet's `GetAttach` passes the container spec's `tty` to the runtime: a client asking for a terminal
    to a container without one is attached to it as it is, without a terminal (no line discipline, no size)."""
    script = "read line; echo out-$line; echo err >&2; tty"

    async def body(runtime: ProcessRuntime) -> None:
        pod = make_pod([sh(script, stdin=True)], nodeName="node-1")
        await _running(runtime, pod)
        logs = AgentLogs([SimpleNamespace(name="node-1", runtime=runtime)])  # type: ignore[list-item]
        options = exec_options(b"container=main&stdin=true&stdout=true&stderr=true&tty=true", pod)
        assert (options.tty, options.stderr) == (True, False)  # the kubelet's NewOptions drops stderr under a tty
        attached = await logs.start_attach(pod, dataclasses.replace(options, size=(100, 30)))
        await attached.write(b"x\r\n")  # no terminal: no line discipline either, what is sent is what is read
        received = []
        while (item := await asyncio.wait_for(attached.output.get(), 5)) is not None:
            received.append(item)
        # a process container's stdout and stderr are one pipe, logged as stdout (`kjobs.node.shim`)
        assert received == [(STDOUT, b"out-x\r\n"), (STDOUT, b"err\n"), (STDOUT, b"not a tty\n")]

    with_runtime(tmp_path, body)


def test_the_first_attach_to_a_stdin_once_container_gets_what_it_wrote_before_and_later_ones_do_not(
    tmp_path: Path,
) -> None:
    """`kubectl run -it` creates a `stdin`+`stdinOnce` container and attaches once it runs; what the container
    wrote before the attach arrived is sent first (`kjobs.node.attach`), a later attach starts at the attach."""
    script = "tty; echo before; read a; echo first-$a; read b; echo second-$b"

    async def body(runtime: ProcessRuntime) -> None:
        pod = make_pod([sh(script, stdin=True, stdinOnce=True, tty=True)], nodeName="node-1")
        await _running(runtime, pod)
        await eventually(lambda: b"before" in _log(runtime), "the container to write before any attach")
        logs = AgentLogs([SimpleNamespace(name="node-1", runtime=runtime)])  # type: ignore[list-item]
        options = exec_options(b"container=main&stdin=true&stdout=true&tty=true", pod)
        first = await logs.start_attach(pod, options)
        await first.write(b"1\r")
        seen = await _until(first, rb"first-1\r\n", bytearray())
        assert re.match(rb"/dev/pts/\d+\r\nbefore\r\n", seen), seen
        first.close_stdin()
        while await asyncio.wait_for(first.output.get(), 5) is not None:
            pass
        second = await logs.start_attach(pod, options)
        await second.write(b"2\r")
        again = await _until(second, rb"second-2\r\n", bytearray())
        assert b"before" not in again and b"first-1" not in again, again

    with_runtime(tmp_path, body)
