"""What a restarted node agent learns from the shims its killed predecessor left: containers to adopt or report.

Design note: the process shim outlives its agent (`kjobs.node.shim`) and journals every container's start and
end to `<root>/journal/<agent>.<shim>.jsonl` before it tells the agent, where `<agent>` and `<shim>` are
`<pid>-<start time>` (the process's start time in clock ticks, so that a reused pid is never taken for the
old process). A runtime starting on the same root reads the journals of agents that are gone (never those of
a live agent: two `kjobs run` sessions may share a root) and, per container, knows one of:
- it ended: exit code or signal and times, as the shim saw them (or it could not start, with containerd's
  message) — reported as it really ended;
- it runs: its shim is alive and still its parent — adopted, signalled directly, its end read from the
  journal as the old shim reaps it;
- it is lost: its shim is gone without journaling its end (the shim was killed, the machine rebooted), or it was
  journaled as created and its shim died in the spawn, so it may have run — reported as the kubelet reports a
  container it cannot find (`ContainerStatusUnknown`, 137), never started again.
A container is identified by its container id, pod uid, container name and restart count (the journal's
start entry), its process by pid, parent shim and start time (`leftovers` records). Parsing is pure
(`apply`, `read_new`); `scan` reads a directory.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from kjobs.node import leftovers

JOURNAL_SUFFIX = ".jsonl"


@dataclass(slots=True)
class Recorded:
    """One container attempt as a shim journaled it."""

    container_id: str
    uid: str
    container: str
    number: int
    pid: int
    started_at: float
    finished_at: float | None = None
    returncode: int | None = None
    """As `waitpid` gives it, in Python's form: negative when killed by that signal."""
    start_error: str = ""
    lost: bool = False
    handed_over_at: float | None = None
    """For a container behind wrappers, the start time its agent reported at the handover ("h"); `started_at`
    is the spawn's."""

    @property
    def reported_start(self) -> float:
        """The `startedAt` its agent reported."""
        return self.started_at if self.handed_over_at is None else self.handed_over_at

    @property
    def running(self) -> bool:
        return self.finished_at is None and not self.lost


@dataclass(slots=True)
class Journal:
    """One shim's journal, read up to `offset` (the end of its last complete line)."""

    path: Path
    shim: str
    """The shim's `<pid>-<start time>`."""
    offset: int = 0
    containers: dict[str, Recorded] = field(default_factory=dict)

    @property
    def shim_pid(self) -> int:
        return int(self.shim.partition("-")[0])


def owners(name: str) -> tuple[str, str] | None:
    """(agent, shim) identities from a journal's file name, None for a file that is not a journal."""
    if not name.endswith(JOURNAL_SUFFIX):
        return None
    agent, _, shim = name.removesuffix(JOURNAL_SUFFIX).partition(".")
    if not agent or not shim:
        return None
    return agent, shim


def apply(containers: dict[str, Recorded], entry: list[Any]) -> None:
    """Take one journal entry (see `kjobs.node.shim`); malformed entries are skipped."""
    try:
        kind, cid = entry[0], str(entry[1])
        if kind == "c":  # created: its process may exist (the shim died in its spawn), pid unknown until "p"
            _, _, uid, name, number, at = entry
            containers.setdefault(cid, Recorded(cid, str(uid), str(name), int(number), 0, float(at)))
        elif kind == "p":
            _, _, pid, uid, name, number, at = entry
            created = containers.get(cid)
            if created is not None and created.running:  # the same object an adopter may hold already
                created.pid = int(pid)
            else:
                containers[cid] = Recorded(cid, str(uid), str(name), int(number), int(pid), float(at))
        elif kind == "h" and cid in containers:
            containers[cid].handed_over_at = float(entry[2])
        elif kind == "x" and cid in containers:
            recorded = containers[cid]
            recorded.returncode, recorded.finished_at = int(entry[2]), float(entry[3])
        elif kind == "e":  # a failed start: no pid, no start entry, nothing ran
            uid, name, number = entry[4:7] if len(entry) >= 7 else ("", "", 0)
            recorded = Recorded(cid, str(uid), str(name), int(number), 0, float(entry[3]))
            recorded.start_error, recorded.finished_at = str(entry[2]), float(entry[3])
            containers[cid] = recorded
    except (IndexError, TypeError, ValueError):
        return


def read_new(journal: Journal) -> list[Recorded]:
    """Read what was appended since the last read (complete lines only); returns the containers that ended."""
    try:
        with open(journal.path, "rb") as f:
            f.seek(journal.offset)
            data = f.read()
    except OSError:
        return []
    end = data.rfind(b"\n") + 1
    journal.offset += end
    ended = []
    for line in data[:end].splitlines():
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(entry, list) and len(entry) >= 2:
            apply(journal.containers, entry)
            recorded = journal.containers.get(str(entry[1]))
            if entry[0] in ("x", "e") and recorded is not None:
                ended.append(recorded)
    return ended


def remove(journal: Journal) -> None:
    """Remove a journal and the one before its last rotation."""
    for path in (journal.path, journal.path.with_name(journal.path.name + ".1")):
        with contextlib.suppress(OSError):
            path.unlink()


def shim_alive(journal: Journal) -> bool:
    """The journal's shim still runs (same pid and start time)."""
    return leftovers.alive(journal.shim)


class ShimControl:
    """What a restarted agent sends a previous agent's shim for the tty containers it adopted: their attaches'
    input ("i") and resizes ("w"), on the shim's control socket (`kjobs.node.shim.control_address`). Connected
    at the first message, to a peer that must be that shim (its pid, this user); a message that cannot be sent
    is dropped, as input to a terminal whose container does not read it is."""

    def __init__(self, shim: str) -> None:
        self.shim = shim
        self._sock: socket.socket | None = None

    def type_in(self, cid: str, data: bytes) -> None:
        self._send(["i", cid, data.decode("latin-1")])

    def resize(self, cid: str, width: int, height: int) -> None:
        self._send(["w", cid, width, height])

    def _send(self, message: list[Any]) -> None:
        line = orjson.dumps(message) + b"\n"
        for _ in range(2):  # once more on a fresh connection when the kept one broke
            sock = self._sock or self._connect()
            if sock is None:
                return
            try:
                sock.sendall(line)
                return
            except OSError:
                self.close()

    def _connect(self) -> socket.socket | None:
        from kjobs.node.shim import control_address

        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        sock.settimeout(2.0)  # a local shim reads at once; bounded so an agent never hangs on one
        try:
            sock.connect(control_address(self.shim))
            pid, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        except OSError:
            sock.close()
            return None
        if pid != int(self.shim.partition("-")[0]) or uid != os.getuid():  # someone else holds the name
            sock.close()
            return None
        self._sock = sock
        return sock

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def mark_lost(journal: Journal) -> list[Recorded]:
    """The shim is gone: every container it did not journal the end of is lost; returns those."""
    lost = [r for r in journal.containers.values() if r.running]
    for recorded in lost:
        recorded.lost = True
    return lost


def kill_lost(journal: Journal, lost: list[Recorded]) -> list[int]:
    """SIGKILL the process groups of containers lost with their shim that `leftovers` had no record of (a shim
    records a container once it has run `shim.RECORD_AFTER`; one that died with its agent sooner left none):
    a kubelet whose runtime lost a container reports it `ContainerStatusUnknown` and the Job replaces it, so it
    must not run on, as containerd's clean-up kills a dead shim's containers. The journaled pid is taken only
    while it is that container still: its own session's leader, started after the shim, within seconds of the
    start the journal gives. Returns the pids of the groups killed."""
    shim_started = int(journal.shim.partition("-")[2] or 0)
    booted = leftovers.boot_time()
    killed = []
    for recorded in lost:
        if not leftovers.still_container(recorded.pid, shim_started, recorded.started_at, booted):
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(recorded.pid, signal.SIGKILL)
            killed.append(recorded.pid)
    return killed


def kill_strays(dead: set[str], since: int) -> list[int]:
    """SIGKILL the containers of the shims `dead` (identities: shims that died with their agent) that are still
    running: what a shim was starting when it died (its `posix_spawn` returned no pid to journal, and no agent
    was left to look for it), and any other of its containers still leading a session. They are found by the tag
    each holds (`leftovers.container_tag`: a memfd naming its shim and container id, inherited through `exec`
    and `setpriv`), wherever they work (a `workingDir` outside the pod directories), among the session leaders
    started since the oldest of those shims (`since`, clock ticks). A process holds a tag only by its own choice
    and a session's group holds only its leader's descendants, so nothing but a container (or what it started)
    is killed; a live shim's containers name a live shim. A restarted kubelet's runtime has no container it does
    not know of: one left running would do its pod's work beside the replacement. Returns the pids of the groups
    killed."""
    killed: list[int] = []
    if not dead:
        return killed
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) < 20 or fields[0] in (b"Z", b"X") or int(fields[3]) != pid or int(fields[19]) < since:
                continue
            tag = leftovers.container_tag(pid)
            if tag is None or tag[0] not in dead:
                continue
            os.killpg(pid, signal.SIGKILL)
        except (OSError, ValueError):
            continue
        killed.append(pid)
    return killed


def still_ours(journal: Journal, recorded: Recorded, procs: Path) -> bool:
    """The process `recorded.pid` is still this container's: its shim lives and is its parent (a zombie it
    has not reaped keeps the pid), and its start time is the one recorded, when one was."""
    if not recorded.running or not shim_alive(journal):
        return False
    try:
        stat = Path(f"/proc/{recorded.pid}/stat").read_bytes()
    except OSError:
        return False
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 20 or int(fields[1]) != journal.shim_pid:
        return False
    with contextlib.suppress(OSError):
        started = (procs / journal.shim / str(recorded.pid)).read_text().strip()
        if started and started != fields[19].decode():
            return False
    return True


def scan(directory: Path, *, me: str) -> list[Journal]:
    """The journals under `directory` left by agents that are gone, read, with the containers of shims that are
    gone marked lost. `me` is this agent's identity (its journals are never read)."""
    journals = []
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    for name in names:
        found = owners(name)
        if found is None or found[0] == me or leftovers.alive(found[0]):
            continue
        journal = Journal(path=directory / name, shim=found[1])
        alive = shim_alive(journal)  # before reading: a shim that dies after this is seen by the next poll
        rotated = Journal(path=directory / f"{name}.1", shim=found[1], containers=journal.containers)
        read_new(rotated)  # the one before the last rotation, first
        read_new(journal)
        if not alive:
            mark_lost(journal)
        journals.append(journal)
    return journals


def identity(pid: int) -> str:
    """A process's `<pid>-<start time>`, as journals and `leftovers` name owners."""
    return f"{pid}-{leftovers.start_time(pid) or 0}"
