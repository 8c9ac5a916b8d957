"""A container's stdin (`stdin: true`, as `kubectl debug -i` and `kubectl run -i` ask): a FIFO the container
reads, written by whoever attaches (`kjobs.node.attach`).

Design note: the node agent makes the FIFO and holds it open, read and write, for the container's life; the shim
opens it as the container's fd 0 and removes its name (`kjobs.node.shim`). The agent's open write end means
the container reads no end of file between attaches, as a container runtime keeps stdin open across them;
with `stdinOnce` the first attach's end of input closes it, and the container reads end of file
(`stdinOnce` in staging/src/k8s.io/api/core/v1/types.go).

A container with `tty: true` reads its terminal instead (`kjobs.node.shim`): `TerminalStdin` has the shim write
what attaches send to the terminal's master, whose line discipline echoes it and turns Enter into a newline. Its
stdin is not closed when an attach's input ends, even with `stdinOnce`: containerd's CRI closes it only `if
opts.StdinOnce && !opts.Tty`, and otherwise ends that attach session alone (internal/cri/io/container_io.go
`Attach`; `kjobs.node.attach`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Protocol


class AttachStdin(Protocol):
    """A running container's stdin, as an attach writes to it."""

    @property
    def tty(self) -> bool:
        """Whether it is a terminal's."""
        ...

    def write(self, data: bytes) -> None:
        """Pass input on."""
        ...

    def end_of_input(self) -> None:
        """An attach's input ended."""
        ...


class ContainerStdin:
    """The agent's end of one container attempt's stdin FIFO."""

    tty = False

    def __init__(self, path: str, *, once: bool) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        os.mkfifo(path, 0o600)
        self.path = path
        self._fd: int | None = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        self._once = once

    def write(self, data: bytes) -> None:
        """Pass input on; dropped when the container's stdin was closed or its pipe is full (it does not read)."""
        if self._fd is None:
            return
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


class TerminalStdin:
    """A tty container's stdin: what attaches send, written to its terminal by the shim (`type_in`)."""

    tty = True

    def __init__(self, type_in: Callable[[bytes], None]) -> None:
        self._type_in: Callable[[bytes], None] | None = type_in

    def write(self, data: bytes) -> None:
        """Type it into the terminal (nothing once the container ended)."""
        if self._type_in is not None:
            self._type_in(data)

    def end_of_input(self) -> None:
        """Nothing: under a tty the container's stdin stays open (see the module note)."""

    def close(self) -> None:
        """The container ended."""
        self._type_in = None
