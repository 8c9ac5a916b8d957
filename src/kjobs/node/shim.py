"""The process shim: a small helper process that starts, signals and reaps a node's container processes.

Design note: a kubelet does not fork containers itself; containerd and its shims do, in other processes.
kjobs does the same for the same reason: starting a process costs its parent CPU time (measured here about
0.5 ms per Popen), and on the node agent's own thread that time is taken from the control plane. The shim
runs on another core. It is started by `kjobs.node.spawner.Spawner` as `python -E -s -S shim.py` (standard
library only, so it is up in milliseconds) and speaks JSON lines over its stdin/stdout:

    → ["b", base_env, procs_root, journal_dir, agent_id(, die_with_agent(, log_max_size, log_max_files(,
       pods_dir(, nofile))))]
                                                    once, first: every container's base environment, where to
                                                    record running groups and where to keep the journal; with
                                                    die_with_agent, stdin closing without a "q" (the agent's
                                                    process died) SIGKILLs every container first, and once
                                                    they are reaped the shim removes what the agent would
                                                    have at its stop: its journal, and the scratch directories
                                                    (under pods_dir) and log files of the pods it started
                                                    containers for; the log rotation limits (below; default
                                                    10Mi and 5); nofile, if not 0, the soft open-files limit
                                                    containers start with (the shim's own may be higher:
                                                    `kjobs.rlimits`)
    → ["s", id, argv, env, cwd, log_path, uid, name, number, time(, owner(, stdin(, tty(, handover))))]
                                                    start a container process (env on top of base_env) in cwd,
                                                    created if missing (and given to owner, [uid, gid], if
                                                    sent), output appended to log_path; uid, name and number
                                                    (restart count) say which container it is, time the start
                                                    time the agent reports (null: the shim's clock); stdin a
                                                    FIFO to read as stdin (opened, then removed), else
                                                    /dev/null; tty true: a new pseudo-terminal instead
                                                    (below; stdin null); handover true: its argv begins
                                                    with kjobs' wrappers, started is reported once the
                                                    last of them hands over (below)
    → ["a", uid]                                    with die_with_agent: pod uid has a scratch directory (removed
                                                    as a served pod's, though no container of it started)
    → ["k", id, signum(, scope)]                    signal it (ignored once reaped): its process group, or
                                                    with scope "init" its first process if that takes the
                                                    signal as a PID namespace's init would, "main" its first
                                                    process (`kjobs.node.stopsignal`)
    → ["t", id, time]                               the start time the agent reports for a container started
                                                    with handover (journaled: ["h", id, time])
    → ["w", id, width, height]                      set the size of its terminal (ignored without one)
    → ["i", id, data]                               write data (bytes as a latin-1 string) to its terminal
    → ["q"]                                         the agent stops cleanly: remove the journal at exit
On the control socket (below), from the first tty container on: only "i" and "w".
    ← ["p", id, pid]                                started (its command runs, past any wrapper)
    ← ["e", id, message]                            could not start (message as containerd words it)
    ← ["x", id, returncode]                         exited and reaped (negative: killed by that signal)

A container with `tty: true` gets instead a new pseudo-terminal, as runc gives one to a container whose OCI
spec says `process.terminal` (the kubelet sets it from the container's `tty`,
pkg/kubelet/kuberuntime/kuberuntime_container.go): the container's session leader opens the terminal's other
side as its stdin, stdout and stderr, which makes it its controlling terminal (posix_spawn starts the session
before its file actions); the shim keeps the terminal's master, logs what it reads there as `stdout` (containerd's
CRI logs a tty container's one stream so, internal/cri/io/container_io.go) and writes to it what attaches send
("i", in order with the resizes, "w": a key typed after a resize is read at the new size), so that the
terminal's line discipline echoes and edits input as a terminal does. Output read from a terminal is logged as
it comes, a line not yet ended as a `P` entry: an attach follows the log and must show a prompt or an echoed key
at once. The master is closed with the container's output.

A container started through kjobs' wrappers (the cgroup trampoline, `kjobs.node.mountns`: "s" with handover) is
reported started only once the last of them hands over to the next program, as a runtime reports a container
started once its own process runs (runc's `init` execs the user's process when `runc start` opens its exec fifo,
libcontainer/standard_init_linux.go; containerd then publishes `TaskStart`): the container gets the write end of a
pipe as descriptor `HANDOVER_FD`, which the last wrapper closes at its exec (`exec "$@" 3>&-` in the trampoline,
close-on-exec in `mountns`), and the shim reports "p" at the pipe's EOF. A wrapper that exits first (it could not
exec: a command missing in a volume) closes it by its exit, and is reported started then ended, as before. The
pid is journaled at the spawn all the same (a container the shim started must be found and killed whatever
happens). A stop signal ("k", not SIGKILL) that comes before the handover is held and sent at it: the wrappers do
not handle it as the container's command would (`kjobs.node.stopsignal`); a SIGKILL is sent at once.

A container's stdout and stderr are one pipe the shim reads, as containerd's shim does, so that each line is
written to its log file in the CRI format the kubelet reads (`<time> stdout F <line>`: the time the shim read
it, RFC 3339 with nanoseconds, `P` for a part of a line longer than `MAX_LINE` or cut by the container's exit;
`kjobs.node.logs` reads it back for `kubectl logs --timestamps/--since`). What is in the pipe when the
container's main process exits is written before the exit is reported, so its log is whole by then.

Each container is its own session and process group, started with `posix_spawn` (its environment encoded in C, no
error pipe to read and no PATH walk per start, unlike `Popen`: measured, about a fifth less of the shim's time
per start); when its main process
exits, the rest of its group is SIGKILLed while the leader is still an unreaped zombie (so the group id
cannot have been reused), then it is reaped. Requests are taken one at a time, with a look for exits in
between, so that in a burst of starts an exit is reported at once; starts are reported with the next exit
or once no request waits. A container still running `RECORD_AFTER` seconds after its start is recorded for
`leftovers` in the shim's own directory under procs_root (pid and start time). Every container is started
holding a tag naming this shim and its id (`_tag`, `leftovers.CONTAINER_TAG`), by which a runtime restarted
after a crash finds what a dead shim was starting (`adoption.kill_strays`).

The shim outlives its agent, as containerd's shims outlive a kubelet: it is its own session (a terminal's
signals and the agent's death do not reach it), and when its stdin closes (after a "q" nothing runs any more)
it records every container still running, keeps reaping them until none is left, then exits. What a restarted
agent needs to report them exactly is in the journal, `<journal_dir>/<agent_id>.<shim pid>-<start time>.jsonl`:
one JSON line per creation (`["c", id, uid, name, number, time]`, written before `posix_spawn`, as containerd
keeps a container's record before its task starts), start (`["p", id, pid, uid, name, number, time]`), exit
(`["x", id, returncode, time]`) and failed start (`["e", id, message, time, uid, name, number]`), appended before
the agent is told (a creation and a start at once, other entries one write per batch), so that the journal always
knows at least what the agent knew, every container that may have run even if the shim dies inside its spawn (a
restarted agent then reports it lost rather than start it again: a `restartPolicy: Never` container runs at most
once), and the pid of every container this shim started even if it dies before reporting it (its agent kills them
then, `Spawner._lost`); `kjobs.node.adoption` reads it. Every `ROTATE_AFTER` starts the journal is
renamed to `<name>.1` (replacing the one before) and a new one begins with the start entries of the containers
still running, so its size stays bounded while an exit stays readable long after its agent has reported it. On
SIGTERM the shim records what still runs and exits, leaving those containers
to `leftovers` (lost, as a killed shim's are).

When its agent dies (stdin closes without a "q"), a shim also plays containerd's part for its agent's other shims,
found by their journals' names: one already dead, or dying later while its journal shows containers running (the
shim watches it with a pidfd, staying up for it, and reads its journal every `SIBLING_CHECK` to stop watching one
whose containers all ended), has its containers SIGKILLed and journaled as killed (`["x", id, -9, time]`), as
containerd's `cleanupAfterDeadShim` kills a dead shim's containers and reports 128 + SIGKILL whether the kubelet
runs or not (`Shim.watch_siblings`). Without it, a shim killed just before or after its agent left its containers
running until an agent started again, which reported them lost (`ContainerStatusUnknown`, docs/chaos44.md).

A tty container's terminal master is the shim's alone, so from its first tty container on the shim also listens
on the abstract Unix socket `control_address(<pid>-<start time>)` for "i" and "w" lines (JSON, as on stdin),
accepting only connections from its own user (`SO_PEERCRED`): once its agent is gone, the restarted agent, which
learns the shim's identity from the journal's name, sends its attaches' input and resizes there
(`kjobs.node.adoption.ShimControl`), as containerd's shims keep serving a restarted kubelet. Listening from the
start, not from the agent's end, leaves no moment in which the new agent finds no socket.

Container logs rotate as a kubelet rotates them (pkg/kubelet/logs/container_log_manager.go, its
`containerLogMaxSize` and `containerLogMaxFiles`): once a log file holds `log_max_size` bytes, it is renamed to
`<name>.<YYYYMMDD-HHMMSS>` (local time, Go's layout "20060102-150405"; `.1`, `.2`... after it when that name is
taken: several rotations in one second), a new file is opened at its path, and the oldest rotated files beyond
`log_max_files` - 1 are removed, so that a container keeps at most `log_max_files` files. The kubelet looks at the
sizes every 10 s and asks the runtime to reopen; the shim, which writes the file, rotates between two writes of
whole entries, before the write that would take the file past the limit (a single write larger than the limit goes
to a file of its own). When the container's output ends, its rotated files are removed: `kubectl logs` reads only
the current file, and the agent removes a pod's logs by their names, with no listing of the log directory (a kubelet
keeps them until it removes the container). The kubelet gzips the older rotated files; the shim does not
(compressing 10 MiB would stall every container's output and starts on the shim's one thread). A size of 0 or less:
no rotation. Per write this costs one addition and one comparison."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import time
from collections import deque

TYPE_CHECKING = False  # `typing` is not imported at run time: every import delays the first container
if TYPE_CHECKING:
    from typing import Any

if __package__:
    from kjobs.node import leftovers, stopsignal
else:  # run by path, light: this directory is sys.path[0]
    import leftovers  # type: ignore[import-not-found, no-redef]
    import stopsignal  # type: ignore[import-not-found, no-redef]


_DEFAULT_SIGNALS = tuple(sorted(set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP}))
"""Reset for a container: every signal, as a container starts with the default dispositions whatever ignored
what above kjobs (`nohup`'s SIGHUP, a background job's SIGINT and SIGQUIT, Python's and this shim's SIGPIPE); an
ignored SIGTERM would also change what a stop does (`kjobs.node.stopsignal`)."""

HANDOVER_FD = 3
"""The descriptor on which a container with wrappers gets the handover pipe's write end (see the module note):
the trampoline's script names it, so it is fixed."""

ROTATE_AFTER = 100_000
"""Starts journaled before the journal is rotated (a creation, a start and an exit take about 310 bytes: some 31 MB)."""

_encode = json.JSONEncoder(separators=(",", ":")).encode
"""`json.dumps(x, separators=(",", ":"))` without building an encoder per call."""

_quote = json.encoder.encode_basestring_ascii
"""What that encoder writes for a string (in C, with no encoder at all): each container's start and exit
replies and its exit's journal entry are written from their parts, the same bytes as `_encode` of the list."""


def _line(*parts: Any) -> str:
    """`_encode(list(parts))` written from the parts when each is a string, an int or a finite float (strings
    quoted in C, no encoder built): the creation, start and exit lines every container's start writes to the
    journal and to the agent, the same bytes as `_encode` gives (which the agent and `kjobs.node.adoption` parse)."""
    out = []
    for part in parts:
        kind = type(part)
        if kind is str:
            out.append(_quote(part))
        elif kind is int or (kind is float and part - part == 0.0):
            out.append(repr(part))
        else:
            return _encode(list(parts))
    return "[" + ",".join(out) + "]"


NO_ROTATION = 1 << 62
"""The log size limit when logs do not rotate: never reached."""

DEFAULT_LOG_MAX_SIZE = 10 * 1024 * 1024
DEFAULT_LOG_MAX_FILES = 5
"""The kubelet's `containerLogMaxSize` (10Mi) and `containerLogMaxFiles` defaults (pkg/kubelet/apis/config)."""


class _Output:
    """An open output pipe's container and log: its id, log file (fd and path), the rest of a line not yet
    logged, the bytes in the current log file and its rotated files, oldest first."""

    __slots__ = ("cid", "fd", "last_rotation", "partial", "path", "rotated", "written")

    def __init__(self, cid: str, fd: int, path: str, written: int) -> None:
        self.cid = cid
        self.fd = fd
        self.path = path
        self.partial = bytearray()
        self.written = written
        self.rotated: list[str] = []
        self.last_rotation = ("", 0)  # the time in the last rotated file's name, and its number


MAX_LINE = 16 * 1024
"""A line longer than this is written in parts (containerd's shim cuts at its 16 KiB buffer too)."""

SIBLING_CHECK = 1.0
"""Seconds between two reads of the journals of the sibling shims a shim whose agent died watches
(`Shim.watch_siblings`), to stop watching those whose containers have all ended."""

RECORD_AFTER = 0.05
"""Seconds a container runs before it is recorded for `leftovers`: most short ones (a Job of `true`s) end first,
and reading their start time and writing and removing their record was a third of the shim's time per start."""


class Shim:
    """The shim's state: running children by id, and the pending output."""

    def __init__(self, out_fd: int) -> None:
        self.out_fd = out_fd
        self.base_env: dict[str, str] = {}
        self.procs_dir = ""
        self.journal_path = ""
        self.journal_fd = -1
        self.journal: list[Any] = []  # entries not yet appended to the journal (a list, or already its JSON)
        self.start_entries: dict[str, str] = {}  # id -> its journal start entry (its JSON), while it runs
        self.journaled_starts = 0
        self.journal_written = False  # an entry reached the journal: the next agent may need it
        self.agent_gone = False  # stdin closed: no more requests, no one to reply to
        self.clean_quit = False
        self.die_with_agent = False  # a test cluster's: nobody will adopt what outlives its agent
        self.pods_dir = ""  # where the agent keeps each pod's scratch directory, named by its uid
        self.nofile: tuple[tuple[int, int], tuple[int, int]] | None = None  # (containers', own) if they differ
        self.served: set[str] = set()  # with die_with_agent: uids of the pods it started containers for
        self.log_dir = ""  # with die_with_agent: the directory of their log files
        self.running: dict[str, tuple[int, int]] = {}  # id -> (pid, pidfd)
        self.executables: dict[tuple[str, str], str] = {}
        self.home = os.getcwd()
        self.by_pidfd: dict[int, str] = {}
        # epoll itself rather than `selectors`: its keys and maps cost the shim a few microseconds per event.
        self.poll = select.epoll()
        self.kinds: dict[int, str] = {}  # registered fd -> "requests", "output" or "child"
        self.devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        self.replies: list[str] = []  # JSON lines, not yet written
        self.urgent = False  # an exit or a failed start waits in `replies`
        self.unrecorded: dict[int, float] = {}  # pid -> when to record it for `leftovers`, in start order
        self.outputs: dict[int, _Output] = {}  # open output pipe -> its container and log
        self.log_max_size = DEFAULT_LOG_MAX_SIZE  # NO_ROTATION: never rotated
        self.log_max_files = DEFAULT_LOG_MAX_FILES
        self.output_of: dict[str, int] = {}  # id -> its output pipe, while open
        self.handovers: dict[int, str] = {}  # a handover pipe's read end -> its container, until the handover
        self.held: dict[str, list[tuple[int, str]]] = {}  # id -> stop signals held until its handover
        self.terminals: set[int] = set()  # the terminal masters of tty containers (their output fds)
        self.control_reads: dict[int, bytes] = {}  # connected control client -> its unfinished line
        self.control: Any = None  # the listening control socket, once the agent is gone (see the module note)
        self.siblings: dict[int, _Sibling] = {}  # once the agent is gone: pidfd -> a live sibling with containers
        self.next_sibling_check = 0.0

    def handle(self, message: list[Any]) -> None:
        """Act on one request."""
        kind = message[0]
        if kind == "s":
            cid, argv, env, cwd, log_path = message[1:6]
            if self.die_with_agent and len(message) > 6 and message[6]:
                self.served.add(str(message[6]))
                self.log_dir = os.path.dirname(log_path)
            owner = message[10] if len(message) > 10 else None
            stdin_path = message[11] if len(message) > 11 else None
            # The agent's start time, so that an agent adopting the container reports the same startedAt.
            stamp = message[9] if len(message) > 9 and message[9] is not None else time.time()
            if len(message) > 8:  # a pod's container: journaled as created before its process can exist
                if self.journaled_starts >= ROTATE_AFTER:
                    self.rotate_journal()
                self.journaled_starts += 1
                self.journal.append(_line("c", cid, *message[6:9], stamp))
                self.write_journal()
            tty = len(message) > 12 and bool(message[12])
            handover = len(message) > 13 and bool(message[13])
            self.spawn(cid, argv, env, cwd, log_path, owner, stdin_path, tty, handover)
            if cid in self.running:
                entry = _line("p", cid, self.running[cid][0], *message[6:9], stamp)
                self.start_entries[cid] = entry
                self.journal.append(entry)
                # Journaled at once, not with the batch's replies: if this shim is killed before it reports the
                # start, its agent still finds the pid here and kills the container (`Spawner._lost`).
                self.write_journal()
            elif self.journal and self.journal[-1][:2] == ["e", message[1]]:
                self.journal[-1].extend(message[6:9])  # which container could not start
        elif kind == "a":
            if self.die_with_agent:
                self.served.add(str(message[1]))
        elif kind == "k":
            self.kill(message[1], message[2], str(message[3]) if len(message) > 3 else stopsignal.GROUP)
        elif kind == "t":
            self.handover_time(str(message[1]), float(message[2]))
        elif kind == "w":
            self.resize(message[1], message[2], message[3])
        elif kind == "i":
            self.type_in(message[1], message[2])
        elif kind == "b":
            # Paths are taken from the directory the shim started in: it changes directory for every start.
            self.base_env = dict(message[1])
            if message[2]:
                self.procs_dir = leftovers.owner_path(os.path.join(self.home, str(message[2])), os.getpid())
            if len(message) > 4 and message[3]:
                self.open_journal(os.path.join(self.home, str(message[3])), str(message[4]))
            self.die_with_agent = len(message) > 5 and bool(message[5])
            if len(message) > 7:
                self.log_max_size = int(message[6]) if int(message[6]) > 0 else NO_ROTATION
                self.log_max_files = max(int(message[7]), 2)
            if len(message) > 8 and message[8]:
                self.pods_dir = os.path.join(self.home, str(message[8]))
            if len(message) > 9 and message[9]:
                import resource  # only here: the shim imports little, to start fast

                own = resource.getrlimit(resource.RLIMIT_NOFILE)
                if 0 < int(message[9]) < own[0]:
                    self.nofile = ((int(message[9]), own[1]), own)
        elif kind == "q":
            self.clean_quit = True

    def open_journal(self, directory: str, agent_id: str) -> None:
        """Create this shim's journal (see the module note); without one, exits are known to the agent only."""
        self.journal_path = os.path.join(directory, f"{agent_id}.{self.identity()}.jsonl")
        try:
            leftovers.private_dirs(directory)
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
            self.journal_fd = os.open(self.journal_path, flags, 0o600)
        except OSError:
            self.journal_path, self.journal_fd = "", -1

    def rotate_journal(self) -> None:
        """Keep the journal as `<name>.1` and begin a new one with the start entries of what runs."""
        self.write_journal()
        self.journaled_starts = 0
        if self.journal_fd < 0:
            return
        os.close(self.journal_fd)
        self.journal_fd = -1
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
        with contextlib.suppress(OSError):
            os.replace(self.journal_path, self.journal_path + ".1")
            self.journal_fd = os.open(self.journal_path, flags, 0o600)
        self.journal.extend(self.start_entries.values())

    def write_journal(self) -> None:
        """Append the pending entries in one write (an append of a few hundred bytes is not split)."""
        if not self.journal:
            return
        if self.journal_fd >= 0:
            data = "".join((e if type(e) is str else _encode(e)) + "\n" for e in self.journal).encode()
            with contextlib.suppress(OSError):
                os.write(self.journal_fd, data)
            self.journal_written = True
        self.journal.clear()

    def watch_siblings(self) -> None:
        """The agent died without a "q": this agent's other shims that die without it leave containers nobody
        ends (`Spawner._lost` does while the agent lives, `adoption.kill_lost` only once one starts again), so
        their surviving siblings do, as containerd, which outlives a kubelet and its shims, does for a shim whose
        connection closed (`cleanupAfterDeadShim`: the shim's `delete`, `runc delete --force`, and `TaskExit`
        with 128 + SIGKILL): a sibling found dead is ended now (`_Sibling.end`), one alive whose journal shows
        containers running is watched (a pidfd) and ended when it exits, this shim staying up for it. A
        restarted agent then reports those containers as a kubelet would, exit 137, not lost. Not covered: a
        node whose every shim died (a machine crash: the next agent's `adoption.kill_lost` and `kill_strays`)."""
        if not self.journal_path:
            return
        directory, own = os.path.split(self.journal_path)
        prefix = own.partition(".")[0] + "."
        try:
            names = os.listdir(directory)
        except OSError:
            return
        for name in names:
            if name == own or not name.startswith(prefix) or not name.endswith(".jsonl"):
                continue
            sibling = _Sibling(name[len(prefix) : -len(".jsonl")], os.path.join(directory, name))
            pid = sibling.identity.partition("-")[0]
            try:
                pidfd = os.pidfd_open(int(pid)) if pid.isdigit() else -1
            except OSError:
                pidfd = -1
            if pidfd >= 0 and leftovers.alive(sibling.identity):  # alive once its pidfd is open: that shim's
                if sibling.unended:
                    self.siblings[pidfd] = sibling
                    self.watch(pidfd, "sibling")
                else:
                    os.close(pidfd)  # nothing of it to end: it exits by itself
                continue
            if pidfd >= 0:
                os.close(pidfd)
            sibling.end()
        self.next_sibling_check = time.monotonic() + SIBLING_CHECK

    def sibling_ended(self, pidfd: int) -> None:
        """A watched sibling shim exited: what it left running is ended (`_Sibling.end`)."""
        sibling = self.siblings.pop(pidfd)
        self.unwatch(pidfd)
        os.close(pidfd)
        sibling.end()

    def check_siblings(self) -> None:
        """Stop watching the siblings whose containers have all ended (they exit by themselves): two idle shims
        must not keep each other up."""
        self.next_sibling_check = time.monotonic() + SIBLING_CHECK
        for pidfd, sibling in list(self.siblings.items()):
            sibling.read()
            if not sibling.unended:
                del self.siblings[pidfd]
                self.unwatch(pidfd)
                os.close(pidfd)

    def close(self) -> None:
        """Leave nothing behind once no container runs: the record directory, and the journal after a clean
        stop (after a crash of the agent the journal is what the next agent reads) or when nothing was ever
        written to it (a shim whose agent died before its first start, as it came up: the next agent may have
        looked before the journal existed, and no one would remove it)."""
        self.write_journal()
        if self.procs_dir:
            leftovers.release(self.procs_dir)
        orphaned = self.die_with_agent and self.agent_gone and not self.clean_quit
        if orphaned:
            self.remove_scratch()
        if (self.clean_quit or orphaned or not self.journal_written) and self.journal_path:
            for path in (self.journal_path, self.journal_path + ".1"):
                with contextlib.suppress(OSError):
                    os.unlink(path)

    def _spawn_with_limit(self, program: str, argv: list[str], env: dict[str, str], stdio: list[Any]) -> int:
        """`posix_spawn` with the containers' soft open-files limit, the shim's own restored after: a child
        inherits its parent's limits at the spawn, and the descriptors the shim holds above the lower limit stay
        valid while it is lowered (the container's tag among them). glibc refuses a `dup2` action from a
        descriptor at or above the limit in force (EBADF, `posix_spawn_file_actions_adddup2`), so such a one is
        opened anew in the child from `/proc/self/fd` instead (a pipe, a FIFO or /dev/null, as the shim gives)."""
        import resource

        assert self.nofile is not None
        limit = self.nofile[0][0]
        actions = [
            (os.POSIX_SPAWN_OPEN, a[2], f"/proc/self/fd/{a[1]}", os.O_RDONLY if a[2] == 0 else os.O_WRONLY, 0)
            if a[0] == os.POSIX_SPAWN_DUP2 and a[1] >= limit
            else a
            for a in stdio
        ]
        resource.setrlimit(resource.RLIMIT_NOFILE, self.nofile[0])
        try:
            return os.posix_spawn(program, argv, env, file_actions=actions, setsid=True, setsigdef=_DEFAULT_SIGNALS)
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, self.nofile[1])

    def remove_scratch(self) -> None:
        """Remove the scratch directories and log files of the pods this shim served, after a die-with-agent
        agent died without stopping them (a SIGKILLed `kjobs run`): its containers were killed and nothing will
        adopt or read them, and the agent that would have removed them at its stop (`ProcessRuntime.forget`) is
        gone. Without this every killed run left them in the node's directory, in RAM under /dev/shm."""
        if not self.served:
            return
        import shutil  # only here: the shim imports little, to start fast

        if self.pods_dir:
            for uid in self.served:
                shutil.rmtree(os.path.join(self.pods_dir, uid), ignore_errors=True)
        if self.log_dir:
            try:
                names = os.listdir(self.log_dir)
            except OSError:
                names = []
            for name in names:  # `<uid>_<container>_<restart>.log`, and its rotated files after it
                if name.split("_", 1)[0] in self.served:
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(self.log_dir, name))

    def spawn(
        self,
        cid: str,
        argv: list[str],
        env: dict[str, str],
        cwd: str,
        log_path: str,
        owner: list[int] | None = None,
        stdin_path: str | None = None,
        tty: bool = False,
        handover: bool = False,
    ) -> None:
        """Start one container process in `cwd` (created if missing, and given to `owner` when the container runs
        as another user) with its output appended to its log file, its stdin the FIFO `stdin_path` if given; with
        `tty`, on a new terminal instead (its input comes in "i" requests); with `handover`, reported started once
        its wrappers have handed over (see the module note)."""
        stdin = self.devnull
        if stdin_path is not None:
            try:
                # the agent holds the FIFO open for writing already: this open does not wait
                stdin = os.open(os.path.join(self.home, stdin_path), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
                os.set_blocking(stdin, True)
            except OSError as exc:
                self.failed(cid, f"failed to open container stdin: {exc.strerror or exc}")
                return
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self.home, stdin_path))
        if tty:
            self._spawn_on_terminal(cid, argv, env, cwd, log_path, owner, handover)
            return
        try:
            self._spawn(cid, argv, env, cwd, log_path, owner, stdin, handover=handover)
        finally:
            if stdin != self.devnull:
                os.close(stdin)

    def _spawn_on_terminal(
        self,
        cid: str,
        argv: list[str],
        env: dict[str, str],
        cwd: str,
        log_path: str,
        owner: list[int] | None,
        handover: bool,
    ) -> None:
        """`_spawn` on a new pseudo-terminal: its other side is the container's stdio and controlling terminal,
        the shim reads its master as the container's output and writes the attach input ("i") to it."""
        try:
            master, child = os.openpty()  # neither is inherited; the child is opened without becoming ours
        except OSError as exc:
            self.failed(cid, f"failed to start container process: could not allocate a terminal: {exc.strerror}")
            return
        try:
            terminal = os.ttyname(child)
            self._spawn(cid, argv, env, cwd, log_path, owner, -1, terminal=(terminal, master), handover=handover)
        finally:
            os.close(child)
        if cid not in self.output_of:  # it did not start
            os.close(master)
            return
        self.terminals.add(master)
        if self.control is None:
            self.listen_for_control()  # before the agent can be gone: its successor finds it at once

    def terminal_of(self, cid: str) -> int | None:
        """A running tty container's terminal master."""
        master = self.output_of.get(cid)
        return master if master is not None and master in self.terminals else None

    def resize(self, cid: str, width: int, height: int) -> None:
        """Size a tty container's terminal (its foreground process group gets SIGWINCH)."""
        master = self.terminal_of(cid)
        if master is not None and width > 0 and height > 0:
            # Imported here only: every import delays a shim's start, and most shims never size a terminal.
            import fcntl
            import struct
            import termios

            with contextlib.suppress(OSError, struct.error):
                fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))

    def type_in(self, cid: str, data: str) -> None:
        """What an attach sent to a tty container, to its terminal (dropped when the terminal's input is full: the
        container does not read it)."""
        master = self.terminal_of(cid)
        if master is not None:
            with contextlib.suppress(OSError, UnicodeEncodeError):
                os.write(master, data.encode("latin-1"))

    def _spawn(
        self,
        cid: str,
        argv: list[str],
        env: dict[str, str],
        cwd: str,
        log_path: str,
        owner: list[int] | None,
        stdin: int,
        *,
        terminal: tuple[str, int] | None = None,
        handover: bool = False,
    ) -> None:
        cwd, log_path = _under(self.home, cwd), _under(self.home, log_path)
        try:
            _make_dir(cwd)
            if owner is not None:
                os.chown(cwd, owner[0], owner[1])
        except OSError as exc:
            self.failed(cid, f"failed to start container process: {exc.strerror or exc}")
            return
        try:
            fd = _open_log(log_path)
        except OSError as exc:
            self.failed(cid, f"failed to create container log {log_path}: {exc.strerror or exc}")
            return
        if terminal is not None:  # the container opens the terminal (its controlling one: after setsid)
            pipe_read, pipe_write = terminal[1], -1
            stdio = [(os.POSIX_SPAWN_OPEN, 0, terminal[0], os.O_RDWR, 0), (os.POSIX_SPAWN_DUP2, 0, 1)]
            stdio.append((os.POSIX_SPAWN_DUP2, 0, 2))
        else:
            try:
                pipe_read, pipe_write = os.pipe2(os.O_CLOEXEC)
            except OSError as exc:
                os.close(fd)
                self.failed(cid, f"failed to create container log pipe: {exc.strerror or exc}")
                return
            stdio = [(os.POSIX_SPAWN_DUP2, stdin, 0), (os.POSIX_SPAWN_DUP2, pipe_write, 1)]
            stdio.append((os.POSIX_SPAWN_DUP2, pipe_write, 2))
        handed, handing = -1, -1
        if handover:
            try:
                handed, handing = os.pipe2(os.O_CLOEXEC)
            except OSError as exc:
                os.close(fd)
                if terminal is None:
                    os.close(pipe_read)
                    os.close(pipe_write)
                self.failed(cid, f"failed to start container process: {exc.strerror or exc}")
                return
            stdio.append((os.POSIX_SPAWN_DUP2, handing, HANDOVER_FD))
        full_env = {**self.base_env, **env}
        search = full_env.get("PATH", os.defpath)
        tag = -1
        try:
            # The shim is single-threaded, so its own working directory can be the child's, set just before the
            # spawn (posix_spawn has no chdir action); every descriptor of the shim is close-on-exec but the
            # container's tag (`_tag`).
            os.chdir(cwd)
            program = self.executable(argv[0], search) if argv else None
            if program is None:
                name = argv[0] if argv else ""
                message = f'exec: "{name}": executable file not found in $PATH'
                self.failed(cid, f"failed to start container process: {message}")
                if terminal is None:
                    os.close(pipe_read)
                if handed >= 0:
                    os.close(handed)
                os.close(fd)
                return
            tag = _tag(self.identity(), cid)
            if tag == HANDOVER_FD and handing >= 0:
                tag = _moved(tag)  # the handover's descriptor would replace it in the child
            if self.nofile is None:
                pid = os.posix_spawn(
                    program, argv, full_env, file_actions=stdio, setsid=True, setsigdef=_DEFAULT_SIGNALS
                )
            else:
                pid = self._spawn_with_limit(program, argv, full_env, stdio)
        except OSError as exc:
            self.executables.pop((argv[0], search), None)
            self.failed(cid, f"failed to start container process: {exc.strerror or exc}")
            if terminal is None:
                os.close(pipe_read)
            if handed >= 0:
                os.close(handed)
            os.close(fd)
            return
        finally:
            if pipe_write >= 0:
                os.close(pipe_write)
            if handing >= 0:
                os.close(handing)
            if tag >= 0:
                os.close(tag)
        os.set_blocking(pipe_read, False)
        try:
            written = os.lseek(fd, 0, os.SEEK_END)  # a file that exists already (appended to) counts
        except OSError:
            written = 0
        self.outputs[pipe_read] = _Output(cid, fd, log_path, written)
        self.output_of[cid] = pipe_read
        self.watch(pipe_read, "output")
        if self.procs_dir:
            self.unrecorded[pid] = time.monotonic() + RECORD_AFTER
        pidfd = os.pidfd_open(pid)
        self.running[cid] = (pid, pidfd)
        self.by_pidfd[pidfd] = cid
        self.watch(pidfd, "child")
        if handed >= 0:
            self.handovers[handed] = cid
            self.held[cid] = []
            self.watch(handed, "handover")
        else:
            self.replies.append(_line("p", cid, pid))

    def handed_over(self, pipe: int) -> None:
        """A container's last wrapper exec'd its next program (or exited): it is started; stop signals held
        meanwhile are sent now."""
        cid = self.handovers.pop(pipe)
        self.unwatch(pipe)
        os.close(pipe)
        self.replies.append(_line("p", cid, self.running[cid][0]))
        for signum, scope in self.held.pop(cid, ()):
            self.kill(cid, signum, scope)

    def handover_time(self, cid: str, at: float) -> None:
        """Journal the start time the agent reported at a container's handover: the "p" entry holds the spawn's
        (which `leftovers.still_container` compares with the process's own start time), and an adopting agent
        reports this one. Kept with the start entry, so that a rotated journal still has it."""
        if cid in self.start_entries:
            entry = _encode(["h", cid, at])
            self.start_entries[cid] = self.start_entries[cid].split("\n", 1)[0] + "\n" + entry
            self.journal.append(entry)
            self.write_journal()

    def identity(self) -> str:
        """`<pid>-<start time>`: the name of this shim's record directory, journal and control socket."""
        return os.path.basename(self.procs_dir) if self.procs_dir else str(os.getpid())

    def listen_for_control(self) -> None:
        """Take tty containers' input and resizes from a later agent, on the abstract socket `control_address`
        (see the module note), from the first tty container on. Nothing if it cannot be bound."""
        import socket  # only here: most shims never listen

        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK)
        try:
            sock.bind(control_address(self.identity()))
            sock.listen(8)
        except OSError:
            sock.close()
            return
        self.control = sock  # kept referenced: the socket closes when the shim exits
        self.watch(sock.fileno(), "control")

    def accept_control(self) -> None:
        """A connection to the control socket: kept only from a process of this shim's own user."""
        import socket
        import struct

        try:
            conn, _ = self.control.accept()
        except OSError:
            return
        _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        if uid != os.getuid():
            conn.close()
            return
        fd = conn.detach()
        os.set_blocking(fd, False)
        self.control_reads[fd] = b""
        self.watch(fd, "client")

    def read_control(self, fd: int) -> None:
        """Input ("i") and resizes ("w") from a control client; anything else is ignored. Its end: closed."""
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.unwatch(fd)
            os.close(fd)
            del self.control_reads[fd]
            return
        *lines, self.control_reads[fd] = (self.control_reads[fd] + chunk).split(b"\n")
        for line in lines:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, list) and message and message[0] in ("i", "w"):
                with contextlib.suppress(IndexError, TypeError, ValueError):
                    self.handle(message)

    def watch(self, fd: int, kind: str) -> None:
        """Wait for `fd` to be readable in the main loop, which then handles it as `kind`."""
        self.poll.register(fd, select.EPOLLIN)
        self.kinds[fd] = kind

    def unwatch(self, fd: int) -> None:
        """Stop waiting for `fd` (before it is closed). Not left to the close: a container spawned just before may
        still hold a copy of the descriptor (`posix_spawn` returns once the child's exec has begun, before the
        child closes its close-on-exec copies), so the epoll registration would outlive the close and report
        for the descriptor number's next owner (epoll(7)): a reused pidfd's number reaped the wrong container."""
        self.poll.unregister(fd)
        del self.kinds[fd]

    def read_output(self, pipe: int, *, drain: bool = False) -> None:
        """Log what a container wrote: one read (or, with `drain`, all there is now); at the end of the pipe, or
        after a drain, the rest of a line is logged as a part and the pipe and log file are closed."""
        out = self.outputs[pipe]
        partial = out.partial
        ended = False
        while True:
            try:
                chunk = os.read(pipe, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            if not chunk:
                ended = True
                break
            partial += chunk
            self.log(out, self.entries(partial, final=pipe in self.terminals))  # a terminal's: logged at once
            if not drain:
                break
        if ended or drain:
            self.log(out, self.entries(partial, final=True))
            self.unwatch(pipe)
            os.close(pipe)
            os.close(out.fd)
            for rotated in out.rotated:  # read by nothing once it ended (see the module note)
                with contextlib.suppress(OSError):
                    os.unlink(rotated)
            del self.outputs[pipe], self.output_of[out.cid]
            self.terminals.discard(pipe)

    def log(self, out: _Output, data: bytes) -> None:
        """Append log entries to a container's log, rotating it first if they would take it past the limit."""
        if not data:
            return
        out.written += len(data)
        if out.written > self.log_max_size and out.written > len(data):
            self.rotate_log(out)
            out.written = len(data)
        with contextlib.suppress(OSError):
            os.write(out.fd, data)

    def rotate_log(self, out: _Output) -> None:
        """Rename the log file to `<name>.<YYYYMMDD-HHMMSS>`, open a new one at its path, remove the rotated files
        beyond `log_max_files` - 1 (see the module note). If it cannot be renamed or reopened, the old file
        stays the log (tried again at the next write past the limit)."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        # Several rotations in one second: numbered after the last one (not the first free name: the oldest of
        # them may be removed already), so that names sort in rotation order (`logs.LogReader` relies on it).
        n = out.last_rotation[1] + 1 if out.last_rotation[0] == stamp else 0
        target = f"{out.path}.{stamp}.{n}" if n else f"{out.path}.{stamp}"
        while os.path.lexists(target):
            n += 1
            target = f"{out.path}.{stamp}.{n}"
        try:
            os.rename(out.path, target)
        except OSError:
            return
        try:
            fd = os.open(out.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        except OSError:
            with contextlib.suppress(OSError):
                os.rename(target, out.path)
            return
        os.close(out.fd)
        out.fd = fd
        out.last_rotation = (stamp, n)
        out.rotated.append(target)
        while len(out.rotated) > self.log_max_files - 1:
            with contextlib.suppress(OSError):
                os.unlink(out.rotated.pop(0))

    @staticmethod
    def write_lines(fd: int, partial: bytearray, *, final: bool) -> None:
        """Append the whole lines of `partial` to the log in the CRI format (`entries`), without rotation."""
        data = Shim.entries(partial, final=final)
        if data:
            with contextlib.suppress(OSError):
                os.write(fd, data)

    @staticmethod
    def entries(partial: bytearray, *, final: bool) -> bytes:
        """The whole lines of `partial` as CRI log entries, a line longer than MAX_LINE as parts of MAX_LINE and
        its end; the rest of the last line is kept in `partial` (all of it is taken if `final`)."""
        end = partial.rfind(b"\n") + 1
        rest = len(partial) - end
        if not end and rest < MAX_LINE and not (final and rest):
            return b""
        seconds, nanos = divmod(time.time_ns(), 1_000_000_000)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)).encode() + b".%09dZ stdout " % nanos
        whole, part = stamp + b"F ", stamp + b"P "
        out = []
        for line in partial[: end - 1].split(b"\n") if end else ():
            while len(line) > MAX_LINE:
                out.append(part + line[:MAX_LINE] + b"\n")
                line = line[MAX_LINE:]
            out.append(whole + line + b"\n")
        cut = len(partial) if final else len(partial) - rest % MAX_LINE
        out.extend(part + partial[i : min(i + MAX_LINE, cut)] + b"\n" for i in range(end, cut, MAX_LINE))
        del partial[:cut]
        return b"".join(out)

    def failed(self, cid: str, message: str) -> None:
        """A container could not start: journal it and tell the agent."""
        self.journal.append(["e", cid, message, time.time()])
        self.replies.append(_encode(["e", cid, message]))
        self.urgent = True

    def executable(self, name: str, path: str) -> str | None:
        """`name` looked up in `path` as execvp would (a name with a slash is a path, from the working directory);
        a lookup that found an absolute path is remembered (a program removed since fails at exec)."""
        if "/" in name:
            return name
        key = (name, path)
        found = self.executables.get(key)
        if found is None:
            found = _which(name, path)
            if found is not None and os.path.isabs(found):
                self.executables[key] = found
        return found

    def record_due(self, now: float | None) -> None:
        """Record for `leftovers` the containers still running at their record time (all of them when `now` is
        None: the shim is about to exit and leave them running)."""
        unrecorded = self.unrecorded
        while unrecorded:  # in start order, so in order of their record times: no copy of the map per turn
            pid, due = next(iter(unrecorded.items()))
            if now is not None and due > now:
                break
            del unrecorded[pid]
            leftovers.record(self.procs_dir, pid)

    def next_record(self) -> float | None:
        """When the oldest container not yet recorded is due to be."""
        return next(iter(self.unrecorded.values()), None)

    def kill(self, cid: str, signum: int, scope: str = stopsignal.GROUP) -> None:
        """Signal a running container: its process group, or its first process as `scope` says."""
        entry = self.running.get(cid)
        if entry is None:
            return
        if signum != signal.SIGKILL and cid in self.held:
            self.held[cid].append((signum, scope))  # its command does not run yet (see the module note)
            return
        stopsignal.send(entry[0], entry[1], signum, scope)

    def reap(self, pidfd: int) -> None:
        """A container's main process exited: end its group, reap it, report its status."""
        cid = self.by_pidfd.pop(pidfd)
        if cid in self.held:  # a wrapper that ended before its handover: started, then ended, as before
            self.handed_over(next(p for p, c in self.handovers.items() if c == cid))
        pid, _ = self.running.pop(cid)
        self.unwatch(pidfd)
        os.close(pidfd)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        returncode = os.waitstatus_to_exitcode(status)
        pipe = self.output_of.get(cid)
        if pipe is not None:  # what the container wrote is logged before its exit is told
            self.read_output(pipe, drain=True)
        if self.procs_dir and self.unrecorded.pop(pid, None) is None:
            leftovers.forget(self.procs_dir, pid)
        self.start_entries.pop(cid, None)
        self.journal.append(_line("x", cid, returncode, time.time()))
        self.replies.append(_line("x", cid, returncode))
        self.urgent = True

    def flush(self) -> None:
        """Journal what happened, then write the pending replies (blocking: the agent reads them promptly)."""
        self.write_journal()
        if not self.replies:
            return
        data = "".join(r + "\n" for r in self.replies).encode()
        self.replies.clear()
        self.urgent = False
        if self.agent_gone:
            return
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.out_fd, view) :]
        except OSError:  # the agent died: what it did not read is in the journal
            self.agent_gone = True


class _Sibling:
    """Another shim of this shim's agent (`Shim.watch_siblings`): its identity, its journal and, from what that
    says so far, its containers not yet ended (id -> pid, 0 while only created, and the journaled start)."""

    def __init__(self, identity: str, path: str) -> None:
        self.identity, self.path, self.offset = identity, path, 0
        self.unended: dict[str, tuple[int, float]] = {}
        try:  # the journal before its last rotation, then the journal (which repeats what still ran then)
            with open(path + ".1", "rb") as rotated:
                self.take(rotated.read())
        except OSError:
            pass
        self.read()

    def read(self) -> None:
        """Take the journal's complete lines written since the last read (none once it is removed: its shim
        stopped cleanly, nothing of it runs)."""
        try:
            with open(self.path, "rb") as journal:
                journal.seek(self.offset)
                data = journal.read()
        except OSError:
            self.unended.clear()
            return
        whole = data.rfind(b"\n") + 1
        self.offset += whole
        self.take(data[:whole])

    def take(self, data: bytes) -> None:
        for line in data.split(b"\n"):
            try:
                entry = json.loads(line)
                if entry[0] == "c":
                    self.unended.setdefault(str(entry[1]), (0, float(entry[5])))
                elif entry[0] == "p":
                    self.unended[str(entry[1])] = (int(entry[2]), float(entry[6]))
                elif entry[0] in ("x", "e"):
                    self.unended.pop(str(entry[1]), None)
            except (ValueError, TypeError, IndexError, KeyError):
                continue  # a malformed line, or the empty one after the last: skipped, as `adoption` does

    def end(self) -> None:
        """The shim is dead: SIGKILL each container it started and saw no end of, where the pid is still that
        container (`leftovers.still_container`), and journal each as killed (-SIGKILL), as containerd reports a
        dead shim's tasks whatever they did. One only created (the shim died in its `posix_spawn`: no pid) is
        left to the next agent, which finds it by its tag (`adoption.kill_strays`)."""
        self.read()
        started = {cid: ran for cid, ran in self.unended.items() if ran[0]}
        if not started:
            return
        shim_started, booted = int(self.identity.partition("-")[2] or 0), leftovers.boot_time()
        doomed = [pid for pid, at in started.values() if leftovers.still_container(pid, shim_started, at, booted)]
        now = time.time()
        ends = "".join(_line("x", cid, -int(signal.SIGKILL), now) + "\n" for cid in started)
        with contextlib.suppress(OSError):
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    ends = "\n" + ends  # after a line the dead shim cut short, not glued to it
                os.write(fd, ends.encode())
            finally:
                os.close(fd)
        # Killed once journaled: whoever sees a container gone (a restarted agent's scan) finds its end written.
        for pid in doomed:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        for cid in started:
            del self.unended[cid]


def _tag(shim: str, cid: str) -> int:
    """The container's tag (`leftovers.CONTAINER_TAG`): an empty memfd named for this shim and the container,
    inheritable for the one spawn it is made for (the shim is single-threaded), closed here right after it; -1
    where none can be made (the container starts untagged)."""
    try:  # without MFD_CLOEXEC: inheritable as made, with no `set_inheritable` (a system call a start)
        return os.memfd_create(leftovers.tag_name(shim, cid), 0)
    except (OSError, AttributeError):
        return -1


def _moved(fd: int) -> int:
    """`fd` moved to another number, still inheritable."""
    import fcntl  # only here: a tag lands on `HANDOVER_FD` only in a shim run in-process, without its own fd 3

    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, HANDOVER_FD + 1)
    os.close(fd)
    return moved


def control_address(identity: str) -> bytes:
    """The abstract Unix socket a shim whose agent is gone takes tty input and resizes on (identity: its
    `<pid>-<start time>`; abstract, so no path length limit and nothing to remove)."""
    return b"\0kjobs-shim-control." + identity.encode()


def _under(home: str, path: str) -> str:
    """`os.path.join(home, path)`: an absolute path (what an agent sends) as it is, without the join's work."""
    return path if path[:1] == "/" else os.path.join(home, path)


def _make_dir(path: str) -> None:
    """`os.makedirs(path, exist_ok=True)` with one `mkdir` in the usual case (the parent exists, the directory
    does not), and the same errors otherwise; missing parents are made private (`_make_parents`)."""
    try:
        os.mkdir(path)
    except FileExistsError:
        if not os.path.isdir(path):
            os.makedirs(path, exist_ok=True)  # raises as it would have
    except FileNotFoundError:
        _make_parents(path)
        os.makedirs(path, exist_ok=True)


def _make_parents(path: str) -> None:
    """Make the missing directories above `path` 0700 (`leftovers.private_dirs`): a node's root, `pods` or `logs`
    someone removed under a running node is not made again readable by pods started as other users."""
    leftovers.private_dirs(os.path.dirname(path))


def _open_log(path: str) -> int:
    """Open a container's log for appending; a log directory removed meanwhile (someone cleaned the data or
    runtime directory) is made again, private to this user, as the kubelet makes each pod's log directory at
    its sandbox's creation (pkg/kubelet/kuberuntime/kuberuntime_sandbox.go `createPodSandbox`)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
    try:
        return os.open(path, flags, 0o644)
    except FileNotFoundError:
        _make_parents(path)
        return os.open(path, flags, 0o644)


def _which(name: str, path: str) -> str | None:
    """The first executable file `name` in the directories of `path`, as execvp searches them."""
    for directory in path.split(os.pathsep):
        candidate = os.path.join(directory, name)  # an empty entry is the working directory, as for execvp
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return None


def main() -> None:
    """Serve requests from stdin until it closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is for the agent, which stops us
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a dead agent's pipe: EPIPE, handled in `flush`
    shim = Shim(sys.stdout.fileno())

    def terminated(signum: int, frame: object) -> None:
        shim.record_due(None)  # what runs on is left to `leftovers`: containers of a killed shim are lost
        shim.write_journal()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, terminated)
    in_fd = sys.stdin.fileno()
    os.set_blocking(in_fd, False)
    shim.watch(in_fd, "requests")
    pending = b""
    requests: deque[bytes] = deque()
    while not (shim.agent_gone and not shim.running and not requests and not shim.siblings):
        # One request at a time, looking for exits in between (select with no wait): in a burst of starts, a
        # container that ended is reaped and reported at once, not after the whole burst.
        due = shim.next_record()
        timeout = 0.0 if requests else None if due is None else max(due - time.monotonic(), 0.0)
        if shim.siblings:
            check = max(shim.next_sibling_check - time.monotonic(), 0.0)
            timeout = check if timeout is None else min(timeout, check)
        for fd, _ in shim.poll.poll(-1 if timeout is None else timeout):
            kind = shim.kinds.get(fd)  # None: closed by a reap earlier in this round
            if kind == "child":
                shim.reap(fd)
                continue
            if kind == "output":
                shim.read_output(fd)
                continue
            if kind == "handover":
                shim.handed_over(fd)
                continue
            if kind == "control":
                shim.accept_control()
                continue
            if kind == "client":
                shim.read_control(fd)
                continue
            if kind == "sibling":
                shim.sibling_ended(fd)
                continue
            if kind is None:
                continue
            try:
                chunk = os.read(in_fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                # The agent is gone (stopped, or killed): keep and reap what runs, for the next agent.
                shim.agent_gone = True
                shim.unwatch(in_fd)
                if not shim.clean_quit:
                    shim.watch_siblings()
                if shim.die_with_agent and not shim.clean_quit:
                    for cid in list(shim.running):
                        shim.kill(cid, signal.SIGKILL)
                shim.record_due(None)
                # Starts not yet made are dropped: the next agent, finding no journal entry, makes them (made
                # now, they could be journaled after it looked, and run twice).
                requests = deque(r for r in requests if not r.startswith(b'["s"'))
                continue
            pending += chunk
            *lines, pending = pending.split(b"\n")
            requests.extend(line for line in lines if line)
        if requests:
            shim.handle(json.loads(requests.popleft().decode()))  # a str: no encoding detection per request
        if due is not None:
            shim.record_due(time.monotonic())
        if shim.siblings and time.monotonic() >= shim.next_sibling_check:
            shim.check_siblings()
        # Starts are reported with the next exit or once no request waits: fewer writes, each waking the agent.
        if shim.urgent or not requests:
            shim.flush()
    shim.close()


if __name__ == "__main__":
    main()
