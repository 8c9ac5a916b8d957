"""Container processes left behind by a process shim that died without reaping them.

Design note: the shim (`kjobs.node.shim`) starts every container as its own session and outlives its agent, so
a restarted agent adopts what a killed agent left running (`adoption`). When the shim itself dies (SIGKILL, a
crash) its containers keep running, re-parented to init, and their exits are known to no one: a restarted
agent reports such pods lost (`recovery`), and the Job controller replaces them — while the old processes
would still run, doing the same work twice and holding their resources. A kubelet never leaves containers it
has declared lost behind, so neither does kjobs.

Records: under `<root>/procs`, each shim process has a directory named `<pid>-<start time>` (itself), and in
it one file per running container process group, named by the leader's pid and holding its start time (field
22 of `/proc/<pid>/stat`), removed when the process is reaped. The shim writes a record once a container has
run for a moment (`shim.RECORD_AFTER`), and for every container it leaves running when it exits: a container
that ends sooner, as most of a Job of short tasks do, costs no record at all. A runtime starting on the same
root kills the recorded groups of every owner (shim) that is no longer alive — never those of a live owner (two
`kjobs run` sessions share a root), and never a reused pid (the start time must match).
"""

from __future__ import annotations

import contextlib
import os
import signal

TYPE_CHECKING = False
if TYPE_CHECKING:  # at run time paths are used through `os` only: the shim imports this module, and starts fast
    from pathlib import Path

CONTAINER_TAG = "kjobs-container:"
"""The name of the tag every container process is started holding, before `<shim identity>/<container id>`: an
empty memfd (`memfd_create`) the shim opens for the start and the container inherits (`shim.Shim._spawn`), so
that the process can be told a container, and whose, from outside wherever it works (`container_tag`). An open
descriptor survives `exec` (the `setpriv` prefix, a shell's `exec`, the mount namespace's entry point) and gives
the container nothing (no path on the host); no process can be made to hold one except by its own choice, and
the stray scan kills only session leaders (`adoption.kill_strays`), whose groups hold only their own
descendants."""

MAX_TAG_FDS = 4096
"""Descriptors of one process looked at for its tag: a process may hold a great many."""


def _stat_fields(pid: int) -> list[bytes] | None:
    """`/proc/<pid>/stat` after "pid (comm) " (its fields 3 onwards: state first); None if the process is gone."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        stat = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    return stat[stat.rfind(b")") + 2 :].split()


def start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22); None if it is gone."""
    fields = _stat_fields(pid)
    return fields[19].decode() if fields is not None and len(fields) > 19 else None


def _alive(pid: int, started: str) -> bool:
    """Same pid, same start time, and not a zombie: a process killed with SIGKILL stays in /proc, state `Z`,
    until its parent (often init) reaps it, which after a big process's exit can take a second or two, while the
    data directory's lock it held is already free. A restarted agent must see its predecessor as gone then."""
    if not started:
        return False
    fields = _stat_fields(pid)
    return fields is not None and len(fields) > 19 and fields[0] not in (b"Z", b"X") and fields[19].decode() == started


def owner_dir(procs: Path) -> Path:
    """This process's record directory under `procs` (created)."""
    pid = os.getpid()
    directory = procs / f"{pid}-{start_time(pid) or 0}"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def owner_path(procs: str, pid: int) -> str:
    """The record directory of process `pid` under `procs` (created), as text: a shim names its own."""
    directory = f"{procs}/{pid}-{start_time(pid) or 0}"
    with contextlib.suppress(OSError):
        private_dirs(directory)
    return directory


def private_dirs(path: str) -> None:
    """Make `path` and the missing directories above it 0700 (`os.makedirs`'s errors otherwise): what someone
    removed under a running node (its root, `procs`, `pods`, `logs`) is made again as private as the node's
    root is made at its start (`kjobs.files.owned_dir`), not with the default mode: pods started as other users
    must not read other pods' files and logs. Used by the shim too, so the standard library only."""
    missing: list[str] = []
    directory = path
    while directory and not os.path.isdir(directory) and directory != os.path.dirname(directory):
        missing.append(directory)
        directory = os.path.dirname(directory)
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, 0o700)
    if not os.path.isdir(path):
        os.makedirs(path, exist_ok=True)  # raises as it would have (a file in the way)


def alive(identity: str) -> bool:
    """Whether the process named `<pid>-<start time>` (an owner directory's name) still runs."""
    pid, _, started = identity.partition("-")
    return pid.isdigit() and _alive(int(pid), started)


def boot_time() -> float:
    """When the machine booted (seconds since the epoch; /proc/stat's `btime`)."""
    with contextlib.suppress(OSError, ValueError), open("/proc/stat") as stat:
        for line in stat:
            if line.startswith("btime "):
                return float(line.split()[1])
    return 0.0


def still_container(pid: int, shim_started: int, started_at: float, booted: float) -> bool:
    """Whether `pid` is still the container a dead shim's journal started with it: not a zombie, its own
    session's leader (a shim starts each container so), started no earlier than the shim (`shim_started`, clock
    ticks) and within 5 s of the journaled start (`started_at`, seconds since the epoch; `booted`: `boot_time`).
    A reused pid fails one of these."""
    fields = _stat_fields(pid)
    if fields is None or len(fields) < 20 or fields[0] in (b"Z", b"X") or int(fields[3]) != pid:
        return False
    started = int(fields[19])
    return started >= shim_started and -5 < booted + started / os.sysconf("SC_CLK_TCK") - started_at < 5


def record(directory: Path | str, pid: int) -> None:
    """Remember the process group led by `pid` (a container's main process); with `forget`, ~26 µs on tmpfs."""
    started = start_time(pid)
    if started is None:
        return
    path = f"{directory}/{pid}"
    for _ in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        except FileNotFoundError:  # removed by a runtime of this process that shut down meanwhile
            with contextlib.suppress(OSError):
                private_dirs(str(directory))
            continue
        except OSError:
            return
        try:
            os.write(fd, started.encode())
        except OSError:  # a full disk (ENOSPC): no record, rather than an empty one or a shim that dies of it
            with contextlib.suppress(OSError):
                os.unlink(path)
        finally:
            os.close(fd)
        return


def release(directory: Path | str) -> None:
    """Remove this owner's directory once nothing it recorded runs (a clean shutdown)."""
    with contextlib.suppress(OSError):
        os.rmdir(directory)


def forget(directory: Path | str, pid: int) -> None:
    """The process was reaped: nothing is left to kill."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(f"{directory}/{pid}")


def kill_leftovers(procs: Path) -> list[int]:
    """SIGKILL the recorded process groups of owners that died; returns the pids of the groups killed."""
    import shutil  # only here: see the imports

    killed: list[int] = []
    try:
        owners = [entry for entry in os.scandir(procs) if entry.is_dir()]
    except FileNotFoundError:
        return killed
    for owner in owners:
        owner_pid, _, owner_started = owner.name.partition("-")
        if not owner_pid.isdigit() or _alive(int(owner_pid), owner_started):
            continue
        with contextlib.suppress(OSError):
            for entry in os.scandir(owner.path):
                killed.extend(_kill_recorded(entry.path, entry.name))
        shutil.rmtree(owner.path, ignore_errors=True)
    return killed


def _kill_recorded(path: str, name: str) -> list[int]:
    if not name.isdigit():
        return []
    try:
        with open(path) as f:
            recorded = f.read().strip()
    except OSError:
        return []
    pid = int(name)
    if not _alive(pid, recorded):
        return []
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return []
    return [pid]


def tag_name(shim: str, container_id: str) -> str:
    """The name of a container's tag (`CONTAINER_TAG`); the kernel keeps 249 bytes of it."""
    return f"{CONTAINER_TAG}{shim}/{container_id}"[:249]


def container_tag(pid: int) -> tuple[str, str] | None:
    """(shim identity, container id) named by the tag process `pid` holds (`CONTAINER_TAG`), read from
    `/proc/<pid>/fd` (the first `MAX_TAG_FDS` descriptors); None if it holds none or cannot be read."""
    prefix = "/memfd:" + CONTAINER_TAG
    try:
        with os.scandir(f"/proc/{pid}/fd") as entries:
            for i, entry in enumerate(entries):
                if i >= MAX_TAG_FDS:
                    return None
                try:
                    target = os.readlink(entry.path)
                except OSError:
                    continue
                if target.startswith(prefix):
                    shim, _, container_id = target[len(prefix) :].removesuffix(" (deleted)").partition("/")
                    return shim, container_id
    except OSError:
        return None
    return None
