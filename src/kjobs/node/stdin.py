"""A container's stdin (`stdin: true`, as `kubectl debug -i` and `kubectl run -i` ask): a FIFO the container
reads, written by whoever attaches (`kjobs.node.attach`).

Design note: the node agent makes the FIFO and holds it open, read and write, for the container's life; the shim
opens it as the container's fd 0 and removes its name (`kjobs.node.shim`). The agent's open write end means
the container reads no end of file between attaches, as a container runtime keeps stdin open across them;
with `stdinOnce` the first attach's end of input closes it, and the container reads end of file
(`stdinOnce` in staging/src/k8s.io/api/core/v1/types.go). A container with `tty: true` reads its terminal
instead: the shim copies what the FIFO brings to the terminal's master (`kjobs.node.shim`), whose line
discipline turns Enter into a newline and echoes. Under a tty, an attach's end of input does not close the
container's stdin even with `stdinOnce` — containerd's CRI closes it only `if opts.StdinOnce && !opts.Tty`,
and otherwise ends that attach session alone (internal/cri/io/container_io.go `Attach`).
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
        with contextlib.suppress(BlockingIOError, BrokenPipeError, OSError):
            os.write(self._fd, data)

    def end_of_input(self) -> None:
        """An attach's input ended: with `stdinOnce` and no tty, the container reads end of file from now on."""
        if self._once and not self._tty:
            self.close()

    def close(self) -> None:
        """Release the FIFO (the container ended, or stdinOnce)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
