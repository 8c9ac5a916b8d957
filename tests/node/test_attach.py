"""`kubectl attach`'s stream over a container's log (`kjobs.node.attach`): only what is written after the attach,
each entry on the channel of the stream it came from, until the container has exited."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kjobs.node.attach import Attached
from kjobs.node.logs import log_time
from kjobs.server.remotecommand import STDERR, STDOUT

T = log_time(1796198401.5)


def _entry(stream: bytes, text: bytes, *, partial: bool = False) -> bytes:
    return T + b" " + stream + (b" P " if partial else b" F ") + text + b"\n"


def test_an_attach_streams_new_output_by_stream_until_the_container_exits(tmp_path: Path) -> None:
    log = tmp_path / "uid_main_0.log"
    log.write_bytes(_entry(b"stdout", b"before the attach"))
    state = {"ended": False}

    async def scenario() -> tuple[list[tuple[int, bytes]], int]:
        attached = Attached(log, lambda: state["ended"])
        with log.open("ab") as out:
            out.write(_entry(b"stdout", b"progress ", partial=True) + _entry(b"stdout", b"50%"))
            out.write(_entry(b"stderr", b"warning"))
        received = [await asyncio.wait_for(attached.output.get(), 5) for _ in range(3)]
        with log.open("ab") as out:
            out.write(_entry(b"stdout", b"last words"))
        state["ended"] = True  # exited: what it wrote before is still sent, then the stream ends
        while (item := await asyncio.wait_for(attached.output.get(), 5)) is not None:
            received.append(item)
        return received, await attached.wait()

    received, code = asyncio.run(scenario())
    assert received == [
        (STDOUT, b"progress "),
        (STDOUT, b"50%\n"),
        (STDERR, b"warning\n"),
        (STDOUT, b"last words\n"),
    ]
    assert code == 0


def test_under_a_tty_everything_is_stdout_and_stdin_is_dropped(tmp_path: Path) -> None:
    log = tmp_path / "uid_main_0.log"

    async def scenario() -> list[tuple[int, bytes] | None]:
        attached = Attached(log, lambda: log.exists(), tty=True)
        await attached.write(b"ignored\n")
        attached.close_stdin()
        log.write_bytes(_entry(b"stderr", b"to the terminal"))
        return [await asyncio.wait_for(attached.output.get(), 5) for _ in range(2)]

    assert asyncio.run(scenario()) == [(STDOUT, b"to the terminal\n"), None]
