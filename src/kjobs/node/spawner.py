"""`Spawner`: the node agent's side of the process shim (`kjobs.node.shim`), on the asyncio loop; `SpawnerPool`:
the runtime's several shims, each container started by one of them (see `SHIMS` for why more than one).

Design note: requests are JSON lines written without blocking (a buffer drained by a writer callback when
the pipe is full); replies are read by a reader callback and dispatched to the three callbacks the runtime
gives: started (pid), failed to start (message), exited (returncode). Everything is synchronous from the
caller's side, so the runtime's `Supervisor` hooks stay synchronous. If the shim dies while containers
run, their groups are SIGKILLed (pids are known, or read from its journal for starts it had not reported yet)
and each is reported exited by SIGKILL; the next start
launches a new shim. The shim is its own session and outlives this process when it is killed (see
`kjobs.node.shim`); `close` tells it the stop is clean, so that it leaves no journal behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from kjobs.node import leftovers, stopsignal
from kjobs.node.shim import DEFAULT_LOG_MAX_FILES, DEFAULT_LOG_MAX_SIZE
from kjobs.rlimits import containers_open_files_limit

log = logging.getLogger(__name__)

_SHIM = str(Path(__file__).with_name("shim.py"))


class Spawner:
    """Starts container processes through a shim process; see the module note."""

    def __init__(
        self,
        *,
        base_env: Mapping[str, str],
        procs_dir: Path | None,
        journal_dir: Path | None = None,
        agent_id: str = "",
        on_started: Callable[[str, int], None],
        on_failed: Callable[[str, str], None],
        on_exited: Callable[[str, int], None],
        die_with_agent: bool = False,
        log_max_size: int = DEFAULT_LOG_MAX_SIZE,
        log_max_files: int = DEFAULT_LOG_MAX_FILES,
        pods_dir: Path | None = None,
    ) -> None:
        self._die_with_agent = die_with_agent
        self._pods_dir = pods_dir
        self._log_rotation = [log_max_size, log_max_files]  # the kubelet's containerLogMaxSize/MaxFiles
        self._base_env = dict(base_env)
        self._procs_dir = procs_dir
        self._journal_dir = journal_dir
        self._agent_id = agent_id
        self._on_started = on_started
        self._on_failed = on_failed
        self._on_exited = on_exited
        self._proc: subprocess.Popen[bytes] | None = None
        self._journal: Path | None = None  # the running shim's journal
        self._shim_started = 0  # its start time (clock ticks since boot, as /proc says)
        self._starting: dict[str, tuple[str, Mapping[str, str]]] = {}  # unreported starts: their cwd, environment
        self._loop: asyncio.AbstractEventLoop | None = None
        self._out = b""
        self._flush_scheduled = False
        self._pending = b""
        self._pids: dict[str, int | None] = {}  # live ids -> pid once started
        self.starting = 0
        """Starts asked for and not yet answered (started or failed)."""
        self._closing: subprocess.Popen[bytes] | None = None  # told to go by `close`, not yet waited for

    def start(self) -> None:
        """Start the shim now (on the running event loop) rather than at the first spawn, so that the first
        container does not wait the shim interpreter's start-up (tens of milliseconds). One that cannot be
        started now (no process or descriptor left) is tried again, and reported, at the first container."""
        with contextlib.suppress(OSError):
            self._ensure_shim()

    def spawn(
        self,
        cid: str,
        argv: list[str],
        env: Mapping[str, str],
        cwd: str,
        log_path: str,
        which: tuple[str, str, int] = ("", "", 0),
        *,
        owner: tuple[int, int] | None = None,
        started_at: float | None = None,
        stdin: str | None = None,
        tty: bool = False,
        handover: bool = False,
    ) -> None:
        """Ask for a container process; `on_started`/`on_failed`, then `on_exited`, follow. `which` (pod uid,
        container name, restart count) is journaled with its start, for an agent that adopts it, and so is
        `started_at` (the start time the agent reports; the shim's own clock if None), so that an adopting agent
        reports the same `startedAt`. With `owner` (uid, gid), `cwd` is given to that user (the container runs
        as it: `kjobs.node.security`). `stdin`: a FIFO the container reads as its stdin (`stdin: true`), which
        the shim removes once opened; else its stdin is /dev/null. `tty`: it runs on a new terminal (`tty: true`)
        instead, whose input `type_in` writes. `handover`: `argv` begins with kjobs' wrappers, and `on_started`
        comes once the last of them has exec'd the next program (`kjobs.node.shim`, `HANDOVER_FD`)."""
        try:
            self._ensure_shim()
        except OSError as exc:  # fork or pipe refused (EAGAIN, ENOMEM, EMFILE): a start error of this container
            self._unstarted(cid, f"failed to create containerd task: failed to start shim: {exc.strerror or exc}")
            return
        self._pids[cid] = None
        self._starting[cid] = (cwd, env)  # (what `_started_unreported` compares is built only if it must)
        self.starting += 1
        message: list[Any] = ["s", cid, argv, dict(env), cwd, log_path, *which, started_at]
        if owner is not None or stdin is not None or tty or handover:
            message.append(list(owner) if owner is not None else None)
        if stdin is not None or tty or handover:
            message.append(stdin)
        if tty or handover:
            message.append(tty)
        if handover:
            message.append(True)
        self._send(message)

    def admitted(self, uid: str) -> None:
        """With die_with_agent: tell the shim that pod `uid` has a scratch directory, so that it removes it too if
        the agent dies without stopping it, though none of the pod's containers started (a pod waiting on a
        missing ConfigMap, or one admitted just before `kjobs run` was killed; docs/orphans.md). Written at once,
        not at the end of the loop's turn as other requests are: the caller makes the directory right after, and
        an agent killed in between must not leave it (tests/cli/test_run_signals.py)."""
        if not self._die_with_agent:
            return
        try:
            self._ensure_shim()
        except OSError:  # no shim now: the pod's first start tells why; its directory may be left, as before
            return
        self._out += orjson.dumps(["a", uid]) + b"\n"
        self._write()

    def _unstarted(self, cid: str, message: str) -> None:
        """Report a container no shim could be started for, as a shim reports one it could not start (after
        `spawn` returned): containerd's CRI plugin gives any failed start exit code 128 and reason `StartError`
        with the error as its message (internal/cri/server/container_start.go), the task's creation included."""
        asyncio.get_running_loop().call_soon(self._on_failed, cid, message)

    def resize(self, cid: str, width: int, height: int) -> None:
        """Size a tty container's terminal (nothing if it has none or has been reaped)."""
        if cid in self._pids and self._proc is not None:
            self._send(["w", cid, width, height])

    def type_in(self, cid: str, data: bytes) -> None:
        """Write to a tty container's terminal, after the resizes asked before (nothing once it is reaped)."""
        if cid in self._pids and self._proc is not None and data:
            self._send(["i", cid, data.decode("latin-1")])

    def started_at(self, cid: str, at: float) -> None:
        """Journal the `startedAt` the agent reports for a container started behind wrappers (its handover's
        time on the agent's clock), so that an agent adopting it reports the same (nothing once it is reaped)."""
        if cid in self._pids and self._proc is not None:
            self._send(["t", cid, at])

    def signal(self, cid: str, signum: int, scope: str = stopsignal.GROUP) -> None:
        """Signal a container's process group, or its first process as `scope` says (`kjobs.node.stopsignal`;
        nothing if it has been reaped)."""
        if cid in self._pids and self._proc is not None:
            self._send(["k", cid, signum] if scope == stopsignal.GROUP else ["k", cid, signum, scope])

    def pid(self, cid: str) -> int | None:
        """The container's main process id, once started."""
        return self._pids.get(cid)

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The shim's process while it runs."""
        return self._proc

    def close(self, *, wait: bool = True) -> None:
        """Stop the shim (containers still running are left to `leftovers`, as after an agent crash).

        With `wait=False` the shim is only told to go (its stdin closed); `wait_closed` then waits for it, so
        that its exit (a few milliseconds of interpreter teardown, on another core) overlaps the caller's work."""
        if self._proc is not None:
            self._send(["q"])
            self._write()  # requests of this turn not yet sent
        proc, self._proc = self._proc, None
        if proc is None:
            return
        self._detach(proc)
        assert proc.stdin is not None
        with contextlib.suppress(OSError):
            proc.stdin.close()
        self._closing = proc
        if wait:
            self.wait_closed()

    def wait_closed(self, timeout: float = 5.0) -> None:
        """Wait (bounded) for a shim told to go by `close` to exit."""
        proc, self._closing = self._closing, None
        if proc is None:
            return
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=timeout)
        if proc.stdout is not None:  # or the pipe's reader is closed by the GC, with a ResourceWarning
            with contextlib.suppress(OSError):
                proc.stdout.close()

    # -- the pipe -----------------------------------------------------------------------------------------
    def _ensure_shim(self) -> None:
        if self._proc is not None:
            return
        self._loop = asyncio.get_running_loop()
        proc = subprocess.Popen(
            [sys.executable, "-E", "-s", "-S", _SHIM],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
            env={},
            start_new_session=True,  # outlives this process, and a terminal's signals are not for it
        )
        assert proc.stdin is not None and proc.stdout is not None
        os.set_blocking(proc.stdin.fileno(), False)
        os.set_blocking(proc.stdout.fileno(), False)
        self._proc = proc
        self._shim_started = int(leftovers.start_time(proc.pid) or 0)
        self._journal = None
        if self._journal_dir is not None:
            self._journal = self._journal_dir / f"{self._agent_id}.{proc.pid}-{self._shim_started}.jsonl"
        self._out = b""
        self._loop.add_reader(proc.stdout.fileno(), self._readable)
        self._send(
            [
                "b",
                self._base_env,
                str(self._procs_dir) if self._procs_dir is not None else "",
                str(self._journal_dir) if self._journal_dir is not None else "",
                self._agent_id,
                self._die_with_agent,
                *self._log_rotation,
                str(self._pods_dir) if self._pods_dir is not None else "",
                containers_open_files_limit(),
            ]
        )

    def _send(self, message: list[Any]) -> None:
        """Queue a request; the requests of one turn of the event loop go out in one write (the agent starts
        the pods it admitted in a burst together, and each write is a system call on the control plane)."""
        self._out += orjson.dumps(message) + b"\n"
        if not self._flush_scheduled:
            self._flush_scheduled = True
            assert self._loop is not None
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        self._write()

    def _write(self) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or not self._out:
            return
        fd = proc.stdin.fileno()
        try:
            written = os.write(fd, self._out)
        except BlockingIOError:
            written = 0
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise
            return  # the shim is gone: the reader sees its end
        self._out = self._out[written:]
        assert self._loop is not None
        if self._out:
            self._loop.add_writer(fd, self._write)
        else:
            self._loop.remove_writer(fd)

    def _readable(self) -> None:
        proc = self._proc
        if proc is None or proc.stdout is None:
            return
        try:
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            self._lost(proc)
            return
        self._pending += chunk
        *lines, self._pending = self._pending.split(b"\n")
        for line in lines:
            if line:
                self._dispatch(orjson.loads(line))

    def _dispatch(self, reply: list[Any]) -> None:
        kind, cid, value = reply
        self._starting.pop(cid, None)
        if kind == "p":
            self.starting -= 1
            self._pids[cid] = int(value)
            self._on_started(cid, int(value))
        elif kind == "e":
            self.starting -= 1
            self._pids.pop(cid, None)
            self._on_failed(cid, str(value))
        elif kind == "x":
            self._pids.pop(cid, None)
            self._on_exited(cid, int(value))

    def _detach(self, proc: subprocess.Popen[bytes]) -> None:
        loop = self._loop
        if loop is None:
            return
        with contextlib.suppress(Exception):
            assert proc.stdout is not None and proc.stdin is not None
            loop.remove_reader(proc.stdout.fileno())
            loop.remove_writer(proc.stdin.fileno())

    def _started_unreported(self) -> dict[str, int]:
        """Containers the dead shim started but had not reported yet (their starts wait for the end of a burst):
        their pids, so that they are killed too, as containerd's clean-up after a dead shim kills its containers
        (`runc delete --force`) whatever it had reported. A start is journaled as soon as its process exists;
        the one start the shim was making when it died (it is blocked in `posix_spawn` until the child has
        exec'd, most of its time in a burst) is found as the process it must be: a session leader started
        since the shim, in the container's directory, with exactly the container's environment, or with none yet
        (the shim's own, empty: a child killed with its shim before its `exec` is still between the two)."""
        waiting = {cid for cid, pid in self._pids.items() if pid is None}
        found: dict[str, int] = {}
        if self._journal is not None:
            with contextlib.suppress(OSError):
                for line in self._journal.read_bytes().splitlines():
                    with contextlib.suppress(ValueError, TypeError, IndexError, OSError):
                        entry = orjson.loads(line)
                        if entry[0] == "p" and entry[1] in waiting and os.getsid(int(entry[2])) == int(entry[2]):
                            found[entry[1]] = int(entry[2])
        unresolved = {
            cid: (os.path.realpath(self._starting[cid][0]), _environ({**self._base_env, **self._starting[cid][1]}))
            for cid in waiting - found.keys()
            if cid in self._starting
        }
        if unresolved:
            known = {pid for pid in self._pids.values() if pid is not None} | set(found.values())
            for pid in _session_leaders_since(self._shim_started):
                if pid in known:
                    continue
                try:
                    cwd = os.readlink(f"/proc/{pid}/cwd")
                    environ = frozenset(Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")) - {b""}
                except OSError:
                    continue
                for cid, (where, env) in list(unresolved.items()):
                    if cwd == where and environ in (env, frozenset()):  # empty: the shim's, not yet exec'd
                        found[cid] = pid
                        del unresolved[cid]
                        break
        return found

    def _lost(self, proc: subprocess.Popen[bytes]) -> None:
        """The shim died: end what it ran and report each container killed."""
        log.warning("process shim exited unexpectedly (%s); its containers are killed", proc.poll())
        self._detach(proc)
        self._proc = None
        self._pending = b""
        self.starting = 0
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=1)
        if None in self._pids.values():
            self._pids.update(self._started_unreported())
        self._starting.clear()
        for cid, pid in list(self._pids.items()):
            if pid is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
            self._pids.pop(cid, None)
            self._on_exited(cid, -signal.SIGKILL)


def _environ(env: Mapping[str, str]) -> frozenset[bytes]:
    """An environment as /proc/<pid>/environ lists it, as a set of its `NAME=value` entries."""
    return frozenset(f"{k}={v}".encode() for k, v in env.items())


def _session_leaders_since(started: int) -> list[int]:
    """Live processes leading their own session that started no earlier than `started` (clock ticks)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) <= 19 or fields[0] in (b"Z", b"X"):
            continue
        if int(fields[3]) == int(entry) and int(fields[19]) >= started:  # its own session, started since
            found.append(int(entry))
    return found


SHIMS = 2
"""Shims per runtime. A shim's `posix_spawn` returns only once the child has reached `exec` (glibc spawns with
`CLONE_VFORK`), and on a busy machine a new process first waits for a CPU: measured with a 5,000-pod run of
`sh -c true` on the shared 2-core machine, a start blocked its shim about 2 ms, the one shim spent 85 % of the
run blocked and started at most ~500 processes a second (`xargs -P`, which forks, does not wait for its child).
With two shims the waits overlap: 14-21 % more pods/s in interleaved rounds, for one more small process, which
starts with the first container (a cluster that runs no pod, as many tests' do, pays for one shim only)."""


class SpawnerPool:
    """The runtime's side of its shims: each container is started by the shim with the fewest starts awaiting
    their answer, the next in turn on a tie (see `SHIMS`): a shim blocked in a spawn gets the next start last.

    Signals go to the shim that started the container. Each shim keeps its own journal and `leftovers` records,
    which `kjobs.node.adoption` already reads per shim, and a shim that dies takes only its own containers
    (`Spawner._lost`). The interface is `Spawner`'s."""

    def __init__(
        self,
        *,
        shims: int = SHIMS,
        base_env: Mapping[str, str],
        procs_dir: Path | None,
        journal_dir: Path | None = None,
        agent_id: str = "",
        on_started: Callable[[str, int], None],
        on_failed: Callable[[str, str], None],
        on_exited: Callable[[str, int], None],
        die_with_agent: bool = False,
        log_max_size: int = DEFAULT_LOG_MAX_SIZE,
        log_max_files: int = DEFAULT_LOG_MAX_FILES,
        pods_dir: Path | None = None,
    ) -> None:
        self._on_failed = on_failed
        self._on_exited = on_exited
        self._owner: dict[str, Spawner] = {}  # live container ids -> the shim that runs them
        self._shims = [
            Spawner(
                base_env=base_env,
                procs_dir=procs_dir,
                journal_dir=journal_dir,
                agent_id=agent_id,
                on_started=on_started,
                on_failed=self._failed,
                on_exited=self._exited,
                die_with_agent=die_with_agent,
                log_max_size=log_max_size,
                log_max_files=log_max_files,
                pods_dir=pods_dir,
            )
            for _ in range(max(1, shims))
        ]
        self._next = 0
        self._idle = True

    def _failed(self, cid: str, message: str) -> None:
        self._owner.pop(cid, None)
        self._on_failed(cid, message)

    def _exited(self, cid: str, returncode: int) -> None:
        self._owner.pop(cid, None)
        self._on_exited(cid, returncode)

    def start(self) -> None:
        """Start the first shim now (see `Spawner.start`); the others start with the first container."""
        self._shims[0].start()

    def spawn(
        self,
        cid: str,
        argv: list[str],
        env: Mapping[str, str],
        cwd: str,
        log_path: str,
        which: tuple[str, str, int] = ("", "", 0),
        *,
        owner: tuple[int, int] | None = None,
        started_at: float | None = None,
        stdin: str | None = None,
        tty: bool = False,
        handover: bool = False,
    ) -> None:
        """`Spawner.spawn` on the shim with the fewest starts awaiting their answer (the next in turn on a tie)."""
        shims, first = self._shims, self._next
        shim = shims[first]
        for k in range(1, len(shims)):
            other = shims[(first + k) % len(shims)]
            if other.starting < shim.starting:
                shim = other
        self._next = (first + 1) % len(shims)
        if self._idle:  # the first container: the other shims come up now, on another core
            self._idle = False
            for other in shims:
                other.start()  # one that cannot start now reports it at its first container
        self._owner[cid] = shim
        shim.spawn(
            cid,
            argv,
            env,
            cwd,
            log_path,
            which,
            owner=owner,
            started_at=started_at,
            stdin=stdin,
            tty=tty,
            handover=handover,
        )

    def admitted(self, uid: str) -> None:
        """`Spawner.admitted` on the first shim (any one removes what it was told of)."""
        self._shims[0].admitted(uid)

    def started_at(self, cid: str, at: float) -> None:
        """`Spawner.started_at` through the shim that started the container."""
        shim = self._owner.get(cid)
        if shim is not None:
            shim.started_at(cid, at)

    def signal(self, cid: str, signum: int, scope: str = stopsignal.GROUP) -> None:
        """`Spawner.signal` through the shim that started the container."""
        shim = self._owner.get(cid)
        if shim is not None:
            shim.signal(cid, signum, scope)

    def resize(self, cid: str, width: int, height: int) -> None:
        """`Spawner.resize` through the shim that started the container."""
        shim = self._owner.get(cid)
        if shim is not None:
            shim.resize(cid, width, height)

    def type_in(self, cid: str, data: bytes) -> None:
        """`Spawner.type_in` through the shim that started the container."""
        shim = self._owner.get(cid)
        if shim is not None:
            shim.type_in(cid, data)

    def pid(self, cid: str) -> int | None:
        """The container's main process id, once started."""
        shim = self._owner.get(cid)
        return shim.pid(cid) if shim is not None else None

    def processes(self) -> list[subprocess.Popen[bytes]]:
        """The shims' processes now running (for tools and tests)."""
        return [shim.process for shim in self._shims if shim.process is not None]

    def process_of(self, cid: str) -> subprocess.Popen[bytes] | None:
        """The process of the shim that runs container `cid`."""
        shim = self._owner.get(cid)
        return shim.process if shim is not None else None

    def close(self, *, wait: bool = True) -> None:
        """`Spawner.close` of every shim: all are told to go, then (with `wait`) waited for."""
        for shim in self._shims:
            shim.close(wait=False)
        if wait:
            self.wait_closed()

    def wait_closed(self, timeout: float = 5.0) -> None:
        """`Spawner.wait_closed` of every shim."""
        for shim in self._shims:
            shim.wait_closed(timeout)
