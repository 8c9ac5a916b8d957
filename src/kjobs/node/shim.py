"""The process shim: a small helper process that starts, signals and reaps a node's container processes.

Design note: a kubelet does not fork containers itself; containerd and its shims do, in other processes.
kjobs does the same for the same reason: starting a process costs its parent CPU time (measured here about
0.5 ms per Popen), and on the node agent's own thread that time is taken from the control plane. The shim
runs on another core. It is started by `kjobs.node.spawner.Spawner` as `python -E -s -S shim.py` (standard
library only, so it is up in milliseconds) and speaks JSON lines over its stdin/stdout:

    → ["b", base_env, procs_dir]                    once, first: every container's base environment
    → ["s", id, argv, env, cwd, log_path]           start a container process (env on top of base_env) in cwd,
                                                    created if missing, output appended to log_path
    → ["k", id, signum]                             signal its process group (ignored once reaped)
    ← ["p", id, pid]                                started
    ← ["e", id, message]                            could not start (message as containerd words it)
    ← ["x", id, returncode]                         exited and reaped (negative: killed by that signal)

Each container is its own session and process group; when its main process exits, the rest of its group
is SIGKILLed while the leader is still an unreaped zombie (so the group id cannot have been reused), then
it is reaped. Requests are taken one at a time, with a look for exits in between, so that in a burst of
starts an exit is reported at once. Running groups are recorded for `leftovers` in the agent's directory.
When its stdin closes (the agent exited or was killed) the shim exits and leaves running containers to
`leftovers`, exactly as an agent killed without a shim would.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
from collections import deque

TYPE_CHECKING = False  # `typing` is not imported at run time: every import delays the first container
if TYPE_CHECKING:
    from typing import Any

if __package__:
    from kjobs.node import leftovers
else:  # run by path, light: this directory is sys.path[0]
    import leftovers  # type: ignore[import-not-found, no-redef]


class Shim:
    """The shim's state: running children by id, and the pending output."""

    def __init__(self, out_fd: int) -> None:
        self.out_fd = out_fd
        self.base_env: dict[str, str] = {}
        self.procs_dir = ""
        self.running: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
        self.by_pidfd: dict[int, str] = {}
        self.selector = selectors.DefaultSelector()
        self.devnull = os.open(os.devnull, os.O_RDONLY)
        self.replies: list[Any] = []

    def handle(self, message: list[Any]) -> None:
        """Act on one request."""
        kind = message[0]
        if kind == "s":
            self.spawn(*message[1:6])
        elif kind == "k":
            self.kill(message[1], message[2])
        elif kind == "b":
            self.base_env, self.procs_dir = dict(message[1]), str(message[2])

    def spawn(self, cid: str, argv: list[str], env: dict[str, str], cwd: str, log_path: str) -> None:
        """Start one container process in `cwd` (created if missing) with its output appended to its log file."""
        try:
            os.makedirs(cwd, exist_ok=True)
        except OSError as exc:
            self.replies.append(["e", cid, f"failed to start container process: {exc.strerror or exc}"])
            return
        try:
            fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as exc:
            self.replies.append(["e", cid, f"failed to create container log {log_path}: {exc.strerror or exc}"])
            return
        try:
            proc = subprocess.Popen(
                argv,
                stdin=self.devnull,
                stdout=fd,
                stderr=fd,
                cwd=cwd,
                env={**self.base_env, **env},
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            self.replies.append(["e", cid, f"failed to start container process: {exc.strerror or exc}"])
            return
        finally:
            os.close(fd)
        if self.procs_dir:
            leftovers.record(self.procs_dir, proc.pid)
        pidfd = os.pidfd_open(proc.pid)
        self.running[cid] = (proc, pidfd)
        self.by_pidfd[pidfd] = cid
        self.selector.register(pidfd, selectors.EVENT_READ, "child")
        self.replies.append(["p", cid, proc.pid])

    def kill(self, cid: str, signum: int) -> None:
        """Signal a running container's process group."""
        entry = self.running.get(cid)
        if entry is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(entry[0].pid, signum)

    def reap(self, pidfd: int) -> None:
        """A container's main process exited: end its group, reap it, report its status."""
        cid = self.by_pidfd.pop(pidfd)
        proc, _ = self.running.pop(cid)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        returncode = proc.wait()
        if self.procs_dir:
            leftovers.forget(self.procs_dir, proc.pid)
        self.replies.append(["x", cid, returncode])

    def flush(self) -> None:
        """Write the pending replies (blocking: the agent reads them promptly)."""
        if not self.replies:
            return
        data = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in self.replies).encode()
        self.replies.clear()
        view = memoryview(data)
        while view:
            view = view[os.write(self.out_fd, view) :]


def main() -> None:
    """Serve requests from stdin until it closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is for the agent, which stops us
    shim = Shim(sys.stdout.fileno())
    in_fd = sys.stdin.fileno()
    os.set_blocking(in_fd, False)
    shim.selector.register(in_fd, selectors.EVENT_READ, "requests")
    pending = b""
    requests: deque[bytes] = deque()
    while True:
        # One request at a time, looking for exits in between (select with no wait): in a burst of starts, a
        # container that ended is reaped and reported at once, not after the whole burst.
        for key, _ in shim.selector.select(0 if requests else None):
            if key.data == "child":
                shim.reap(int(key.fd))
                continue
            try:
                chunk = os.read(in_fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                shim.flush()
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            requests.extend(line for line in lines if line)
        if requests:
            shim.handle(json.loads(requests.popleft()))
        shim.flush()


if __name__ == "__main__":
    main()
