"""`kubectl attach` to a running container: its output from the moment of the attach, until it exits.

Design note: a kubelet's attach (`ServeAttach`, pkg/kubelet/cri/streaming/remotecommand/attach.go) joins the
container's own streams through the runtime; what the container wrote before is not sent again (that is `kubectl
logs`). A kjobs container's output goes to its attempt's log file (`kjobs.node.logs`, CRI entries that record
the stream of each line), so an attach follows that file from its end at the attach, sending each entry on the
stdout or stderr channel it came from (stdout only under a tty, where the kubelet has one stream; a process
container's stdout and stderr are one pipe, `kjobs.node.shim`, so its output is all stdout), and ends
when the attempt has exited and its last output is read; the stream then ends as the kubelet's does, with
`Success`. A container whose spec asks for stdin (`stdin: true`: `kubectl debug -i`'s ephemeral containers) reads
what the client sends (`kjobs.node.stdin`); any other's stdin is /dev/null (`kjobs.node.shim`), and what the
client sends is read and dropped. Resizes change nothing: kjobs gives a container no terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

from kjobs.node.logs import FOLLOW_POLL_SECONDS, read_from, streams
from kjobs.node.stdin import ContainerStdin
from kjobs.server.remotecommand import STDERR, STDOUT


class Attached:
    """An `ExecProcess` (`kjobs.server.remotecommand`) for an attach: the container's new output, then its end."""

    def __init__(
        self, log: Path, ended: Callable[[], bool], *, tty: bool = False, stdin: ContainerStdin | None = None
    ) -> None:
        self.output: asyncio.Queue[tuple[int, bytes] | None] = asyncio.Queue()
        self._stdin = stdin
        self._log, self._ended, self._tty = log, ended, tty
        try:
            self._offset = log.stat().st_size  # from now on: what was written before is the log's
        except FileNotFoundError:
            self._offset = 0
        self._task = asyncio.ensure_future(self._follow())

    async def _follow(self) -> None:
        torn = b""  # an entry still being written
        try:
            while True:
                done = self._ended()  # read first, so what was written before the exit is still sent
                chunk = read_from(self._log, self._offset)
                if chunk:
                    self._offset += len(chunk)
                    data = torn + chunk
                    end = data.rfind(b"\n") + 1
                    torn = data[end:]
                    for stream, text in streams(data[:end]):
                        channel = STDERR if stream == b"stderr" and not self._tty else STDOUT
                        await self.output.put((channel, text))
                    continue
                if done:
                    return
                await asyncio.sleep(FOLLOW_POLL_SECONDS)
        finally:
            self.output.put_nowait(None)

    async def write(self, data: bytes) -> None:
        """Stdin: to the container's, if it has one; else dropped (its stdin is /dev/null)."""
        if self._stdin is not None:
            self._stdin.write(data)

    def close_stdin(self) -> None:
        """The client's input ended: the container's stdin closes if it is `stdinOnce`."""
        if self._stdin is not None:
            self._stdin.end_of_input()

    def resize(self, width: int, height: int) -> None:
        """No terminal to resize."""

    async def wait(self) -> int:
        """0 once the container has exited and its output was sent: the attach succeeded."""
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        return 0

    def kill(self) -> None:
        """The client went away: stop following (the container runs on)."""
        self._task.cancel()
