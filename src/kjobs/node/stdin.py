"""A container's stdin (`stdin: true`, as `kubectl debug -i` and `kubectl run -i` ask): a FIFO the container
reads, written by whoever attaches (`kjobs.node.attach`).

Design note: the node agent makes the FIFO and holds it open, read and write, for the container's life; the shim
opens it as the container's fd 0 and removes its name (`kjobs.node.shim`). The agent's open write end means
the container reads no end of file between attaches, as a container runtime keeps stdin open across them;
with `stdinOnce` the first attach's end of input closes it, and the container reads end of file
(`stdinOnce` in staging/src/k8s.io/api/core/v1/types.go). With `tty`, a carriage return (Enter in the raw
terminal `kubectl attach -t` sends from) becomes a newline, as a terminal's line discipline (ICRNL) would
turn it; kjobs gives the container no terminal of its own.
"""

from __future__ import annotations

import contextlib
import os


class ContainerStdin:
    """The agent's end of one container attempt's stdin FIFO."""

    def __init__(self, path: str, *, once: bool, tty: bool) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        os.mkfifo(path, 0o600)
        self.path = path
        self._fd: int | None = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        self._once, self._tty = once, tty

    def write(self, data: bytes) -> None:
        """Pass input on; dropped when the container's stdin was closed or its pipe is full (it does not read)."""
        if self._fd is None:
            return
        if self._tty:
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        with contextlib.suppress(BlockingIOError, BrokenPipeError, OSError):
            os.write(self._fd, data)

    def end_of_input(self) -> None:
        """An attach's input ended: with `stdinOnce`, the container reads end of file from now on."""
        if self._once:
            self.close()

    def close(self) -> None:
        """Release the FIFO (the container ended, or stdinOnce)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
