"""`kubectl exec`'s process on the node: a command run beside a running container, as the container runs.

Design note: a kubelet asks its runtime to start the command in the container's namespaces and cgroup, with the
container's environment, user and working directory (CRI `Exec`; containerd runs it through runc exec). Here a
container is a process group on this machine, so `ProcessRuntime.exec_spec` gives what the container was started
with — its environment as it got it (env, envFrom, the Kubernetes-provided variables, the base environment), its
working directory, the `setpriv` prefix of its securityContext (`kjobs.node.security`) and, under a cgroup memory
guard, the prefix that puts it into the container's cgroup (`kjobs.node.cgroups`), and for a container in a mount
namespace of its own (`kjobs.node.mountns`) an `nsenter` prefix that joins it — and `start` runs the command
that way, in a new session (its own process group, which the runtime kills when the container ends: processes
in a container die with its PID 1). With `tty` the command gets a new pseudo-terminal as its controlling terminal
(stderr goes to it too, as with a container runtime), resized on the client's resize messages.

A command that cannot be started (not found, not executable) fails as containerd reports it, an error of the
exec call rather than an exit code (`kjobs.server.remotecommand` turns it into the kubelet's 500).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import shutil
import signal
import struct
import termios
from collections.abc import Callable
from dataclasses import dataclass, field

from kjobs.api.uids import random_uuid
from kjobs.server.remotecommand import ExecFailed

READ_SIZE = 32 * 1024
"""Bytes read from the command's output at a time (one frame each)."""


@dataclass(frozen=True)
class ExecSpec:
    """How to run a command as a container runs: the full argv (prefixes first), environment and directory."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    command: list[str]
    groups: set[int] = field(default_factory=set)
    """Where the command's process group id is kept while it runs (the runtime kills them with the container)."""
    in_view: bool = False
    """It runs in the container's own mount namespace (`nsenter`): a program named by its path is found there."""


STDOUT, STDERR = 1, 2


class ExecProcess:
    """A started command: its output as (channel, bytes) items, stdin, resize and its exit code."""

    def __init__(self, proc: asyncio.subprocess.Process, master: int | None, groups: set[int]) -> None:
        self._proc = proc
        self._groups = groups
        groups.add(proc.pid)
        self._master = master
        self.output: asyncio.Queue[tuple[int, bytes] | None] = asyncio.Queue(maxsize=64)
        """Output chunks in order; None once every output stream has ended."""
        self._readers: list[asyncio.Task[None]] = []
        if master is not None:
            self._readers.append(asyncio.ensure_future(self._read_master(master)))
        else:
            for channel, stream in ((STDOUT, proc.stdout), (STDERR, proc.stderr)):
                if stream is not None:
                    self._readers.append(asyncio.ensure_future(self._read_pipe(channel, stream)))
        self._done = asyncio.ensure_future(self._finish())

    async def _read_pipe(self, channel: int, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(READ_SIZE):
            await self.output.put((channel, chunk))

    async def _read_master(self, master: int) -> None:
        loop = asyncio.get_running_loop()
        readable = asyncio.Event()
        loop.add_reader(master, readable.set)
        try:
            while True:
                await readable.wait()
                readable.clear()
                try:
                    chunk = os.read(master, READ_SIZE)
                except BlockingIOError:
                    continue
                except OSError:  # EIO: every holder of the terminal's other side has closed it
                    return
                if not chunk:
                    return
                await self.output.put((STDOUT, chunk))
        finally:
            loop.remove_reader(master)

    async def _finish(self) -> None:
        await asyncio.gather(*self._readers, return_exceptions=True)
        await self.output.put(None)

    async def write(self, data: bytes) -> None:
        """Pass stdin on (ignored once the command closed its end)."""
        if self._master is not None:
            with contextlib.suppress(OSError):
                os.write(self._master, data)  # a terminal takes a line at a time: small writes
            return
        stdin = self._proc.stdin
        if stdin is None or stdin.is_closing():
            return
        stdin.write(data)
        with contextlib.suppress(ConnectionError):
            await stdin.drain()

    def close_stdin(self) -> None:
        """End of stdin (v5's close signal): the command reads EOF (a terminal gets its EOF character)."""
        if self._master is not None:
            with contextlib.suppress(OSError, TypeError, IndexError):  # VEOF is a byte unless the terminal is raw
                os.write(self._master, bytes([termios.tcgetattr(self._master)[6][termios.VEOF][0]]))
            return
        if self._proc.stdin is not None and not self._proc.stdin.is_closing():
            self._proc.stdin.close()

    def resize(self, width: int, height: int) -> None:
        """Set the terminal's size (the command gets SIGWINCH)."""
        if self._master is not None:
            _set_size(self._master, width, height)

    async def wait(self) -> int:
        """The exit code once the command has exited and its output is read (128 + N after signal N)."""
        code = await self._proc.wait()
        self._groups.discard(self._proc.pid)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._done), 1.0)  # a background child may hold the output open
        if self._master is not None:
            with contextlib.suppress(OSError):
                os.close(self._master)
            self._master = None
        return 128 - code if code < 0 else code

    def kill(self) -> None:
        """Stop the command's process group (the client went away)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)


def _set_size(master: int, width: int, height: int) -> None:
    """Size a terminal (a zero dimension is no size: left as it was)."""
    if width > 0 and height > 0:
        with contextlib.suppress(OSError):
            fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))


def _login_tty(fd: int) -> Callable[[], None]:
    return lambda: os.login_tty(fd)


def _missing(spec: ExecSpec) -> str:
    """containerd's message for a command that cannot be started ('' when it can)."""
    program = spec.command[0]
    path = spec.env.get("PATH", os.defpath)
    if "/" in program and spec.in_view:
        return ""  # looked up in the container's view by nsenter's exec
    if "/" in program:
        target = os.path.join(spec.cwd, program)
        if os.access(target, os.X_OK) and not os.path.isdir(target):
            return ""
        where = "no such file or directory" if not os.path.exists(target) else "permission denied"
    else:
        if shutil.which(program, path=path) is not None:
            return ""
        where = "executable file not found in $PATH"
    return (
        f'failed to exec in container: failed to start exec "{random_uuid().replace("-", "")}": OCI runtime exec '
        f'failed: exec failed: unable to start container process: exec: "{program}": {where}: unknown'
    )


async def start(spec: ExecSpec, *, stdin: bool, tty: bool, size: tuple[int, int] | None = None) -> ExecProcess:
    """Start the command; `ExecFailed` when it cannot be. With `tty`, the terminal has `size` (width, height)
    from the start."""
    if not spec.command:
        raise ExecFailed("failed to exec in container: no command specified")
    problem = _missing(spec)
    if problem:
        raise ExecFailed(problem)
    master: int | None = None
    try:
        if tty:
            master, child = os.openpty()
            os.set_blocking(master, False)
            if size is not None:
                _set_size(master, *size)
            try:
                proc = await asyncio.create_subprocess_exec(
                    *spec.argv,
                    stdin=child,
                    stdout=child,
                    stderr=child,
                    env=spec.env,
                    cwd=spec.cwd,
                    preexec_fn=_login_tty(child),  # its own session, the terminal its controlling one
                )
            finally:
                os.close(child)
        else:
            proc = await asyncio.create_subprocess_exec(
                *spec.argv,
                stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=spec.env,
                cwd=spec.cwd,
                start_new_session=True,
            )
    except OSError as exc:
        if master is not None:
            os.close(master)
        raise ExecFailed(f"failed to exec in container: {exc.strerror or exc}") from None
    return ExecProcess(proc, master, spec.groups)
