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
client sends is read and dropped.

Whether the attach is a terminal's is the container's to say, not the request's: the kubelet passes the
container spec's `tty` to the runtime whatever the client asked (`GetAttach` in pkg/kubelet/kubelet_pods.go: "The
TTY setting for attach must match the TTY setting in the initial container configuration"); kubectl itself drops
`-t` for a container without one, warning `Unable to use a TTY - container c did not allocate one`. A container
with `tty: true` runs on a terminal (`kjobs.node.shim`): the client's resizes size it, the first one (sent
before the stream began, `initial_size`) at once; and when the client's input ends, the attach ends with
`Success` while the container runs on with its stdin open, as containerd's CRI does under a tty (its `Attach`
closes the container's stdin only `if opts.StdinOnce && !opts.Tty`, and otherwise drops that attach's output).

One departure, where Kubernetes leaves a race: the first attach to a container with `stdin` and `stdinOnce` (what
`kubectl run -i`/`-it` creates, for one session) starts at the beginning of its log, so `kubectl run -it -- sh -c
tty` shows what the container wrote before kubectl's attach arrived. On a cluster such a short container has
usually ended before the kubelet's relist reports it Running, and kubectl then prints its logs instead
(`handleAttachPod` in staging/src/k8s.io/kubectl/pkg/cmd/run/run.go); kjobs reports a start within
`START_REPORT_DELAY`, so kubectl attaches more often, and without this it showed nothing when the container
wrote before the attach. Later attaches start at the attach, as the kubelet's do.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

from kjobs.node.logs import FOLLOW_POLL_SECONDS, LogReader, streams
from kjobs.node.stdin import AttachStdin
from kjobs.server.remotecommand import STDERR, STDOUT


class Attached:
    """An `ExecProcess` (`kjobs.server.remotecommand`) for an attach: the container's new output, then its end."""

    def __init__(
        self,
        log: Path,
        ended: Callable[[], bool],
        *,
        tty: bool = False,
        stdin: AttachStdin | None = None,
        resize: Callable[[int, int], None] | None = None,
        size: tuple[int, int] | None = None,
        replay: bool = False,
    ) -> None:
        """`tty`: the container's own (its spec's `tty`); `resize` sizes its terminal, to `size` at once;
        `replay`: start at the log's beginning (the first attach to a `stdinOnce` container, see the module note)."""
        self.output: asyncio.Queue[tuple[int, bytes] | None] = asyncio.Queue()
        self._stdin = stdin
        self._log, self._ended, self._tty = log, ended, tty
        self._resize = resize
        self._detached = False  # the client's input ended under a tty: the attach ends
        if resize is not None and size is not None:
            self.resize(*size)
        self._reader = LogReader(log, 0 if replay else None)  # from now on: what was written before is the log's
        self._task = asyncio.ensure_future(self._follow())

    async def _follow(self) -> None:
        torn = b""  # an entry still being written
        try:
            while not self._detached:
                done = self._ended()  # read first, so what was written before the exit is still sent
                chunk = self._reader.read()
                if chunk:
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
            self._reader.close()
            self.output.put_nowait(None)

    async def write(self, data: bytes) -> None:
        """Stdin: to the container's, if it has one; else dropped (its stdin is /dev/null)."""
        if self._stdin is not None:
            self._stdin.write(data)

    def close_stdin(self) -> None:
        """The client's input ended: the container's stdin closes if it is `stdinOnce` (and no tty); under a tty
        this attach ends instead (see the module note)."""
        if self._stdin is None:
            return
        self._stdin.end_of_input()
        if self._tty:
            self._detached = True

    def resize(self, width: int, height: int) -> None:
        """Size the container's terminal (a zero dimension is no size); nothing without one."""
        if self._resize is not None and width > 0 and height > 0:
            self._resize(width, height)

    async def wait(self) -> int:
        """0 once the container has exited and its output was sent: the attach succeeded."""
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        return 0

    def kill(self) -> None:
        """The client went away: stop following (the container runs on)."""
        self._task.cancel()
