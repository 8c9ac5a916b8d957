"""Container log files: one file per container attempt, read back with tail, byte limit, times and follow.

Design note: a container's stdout and stderr are one pipe that the process shim reads (`kjobs.node.shim`), so
output stays in write order; the shim writes each line in the CRI log format the kubelet reads, `<time>
<stream> <F|P> <text>` (F: a whole line, its newline dropped; P: part of one), with the time it read the line
as RFC 3339 with nine fraction digits, the form `kubectl logs --timestamps` prints. Those times make
`sinceSeconds`/`sinceTime` exact: fixed-width UTC times compare as text. `tailLines` counts the file's entries,
as the kubelet's tail does (a line cut in parts counts once per part). A line in no such form (a log written
before the shim timed its lines) is shown as it is. All files sit flat
in one directory (`<pod uid>_<container>_<restartCount>.log`; uids and container names contain no `_`),
because each directory created or removed per pod is a measurable share of a pod start (≈0.3–0.6 ms per
mkdir here). The kubelet keeps the current and the previous attempt (`--previous`); older files are removed.
Following polls the file's size until the attempt has finished, then drains what is left — the stream ends
when the container exits, which is what `kubectl logs -f` waits for.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from pathlib import Path
from typing import BinaryIO

FOLLOW_POLL_SECONDS = 0.05
_CHUNK = 64 * 1024


def attempt_log_path(log_dir: Path, uid: str, container: str, number: int) -> Path:
    """Where attempt `number` of the pod's `container` writes its output."""
    return log_dir / attempt_log_name(uid, container, number)


def attempt_log_name(uid: str, container: str, number: int) -> str:
    """The file name of `attempt_log_path` (a start joins it to the directory as text: Path costs show there)."""
    return f"{uid}_{container}_{number}.log"


def pod_log_paths(log_dir: Path, uid: str) -> list[Path]:
    """Every log file of the pod, rotated ones (`<name>.log.<time>`) too (to delete them with the pod)."""
    return list(log_dir.glob(f"{uid}_*.log*"))


def prune_old_logs(log_dir: Path, uid: str, container: str, keep_from: int) -> None:
    """Remove log files of attempts older than `keep_from` (the kubelet keeps current + previous; their rotated
    files are gone already: the shim removes them when the attempt's output ends)."""
    for number in range(keep_from - 1, -1, -1):
        path = attempt_log_path(log_dir, uid, container, number)
        if not path.exists():
            return
        path.unlink()


def tail_offset(path: Path, tail_lines: int | None) -> int:
    """Byte offset where the last `tail_lines` lines of the file start (0 for the whole file)."""
    if tail_lines is None or tail_lines < 0:
        return 0
    size = path.stat().st_size if path.exists() else 0
    if tail_lines == 0:
        return size
    with open(path, "rb") as handle:
        position = size
        newlines = 0
        handle.seek(max(size - 1, 0))
        ends_with_newline = size > 0 and handle.read(1) == b"\n"
        # A final line without its newline: an entry still being written is not counted, as the kubelet's
        # `tail.FindTailLineStartIndex` counts no incomplete last line (pkg/util/tail/tail.go), and is not shown
        # (`read_log`); the last line of a log written before lines were timed is shown and counts.
        last_counted = not ends_with_newline and not _torn_entry(handle, size)
        wanted = tail_lines + (0 if last_counted else 1)  # the newline that ends the last counted line is skipped
        while position > 0:
            step = min(_CHUNK, position)
            position -= step
            handle.seek(position)
            block = handle.read(step)
            for index in range(len(block) - 1, -1, -1):
                if block[index] == 0x0A:
                    newlines += 1
                    if newlines == wanted:
                        return position + index + 1
    return 0


def log_time(seconds: float) -> bytes:
    """A time as the log entries carry it and `--timestamps` prints it: `2006-01-02T15:04:05.000000000Z`."""
    whole = math.floor(seconds)
    nanos = min(round((seconds - whole) * 1e9), 999_999_999)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)).encode() + b".%09dZ" % nanos


def since_stamp(seconds: float) -> bytes:
    """The `log_time` from which `--since`/`--since-time` keep entries: the time rounded down to whole
    microseconds, so that a time read back from an entry (a float has no nanoseconds to spare at today's epoch, and
    `parse_time` keeps microseconds) never lands after that entry."""
    whole = math.floor(seconds)
    micros = int((seconds - whole) * 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)).encode() + b".%06d000Z" % micros


def render(entries: bytes, *, timestamps: bool = False, since: bytes | None = None) -> bytes:
    """The output of whole log entries (each ending in a newline): their text, a newline after each whole
    line, the entry's time first with `timestamps` (`render_from`), entries older than `since` (a `log_time`)
    left out."""
    return render_from(entries, timestamps=timestamps, since=since)[0]


def render_from(
    entries: bytes, *, timestamps: bool = False, since: bytes | None = None, line_start: bool = True
) -> tuple[bytes, bool]:
    """`render`, and whether the next entry starts a line. With `timestamps` only an entry that starts a line
    gets its time: the part after a partial (`P`) entry continues that line (the kubelet's `ReadLogs` passes
    `isNewLine`, whether the previous entry's text ended in a newline, to `logWriter.write`:
    pkg/kubelet/kuberuntime/logs/logs.go since kubernetes#113481). `line_start` says whether the first entry
    does (True at the start of a read, as the kubelet's `isNewLine := true`); an entry `since` leaves out
    still decides it for the next."""
    out: list[bytes] = []
    for entry in entries.split(b"\n")[:-1]:
        parts = entry.split(b" ", 3)
        if not _is_entry(entry, parts):
            out.append(entry + b"\n")  # a line of a log written before lines were timed
            line_start = True
            continue
        stamp = parts[0]
        whole = parts[2] == b"F"
        starts = line_start
        line_start = whole or not parts[3]  # the kubelet: an empty text continues nothing
        if since is not None and stamp < since:
            continue
        text = parts[3] + b"\n" if whole else parts[3]
        out.append(stamp + b" " + text if timestamps and starts else text)
    return b"".join(out), line_start


def streams(entries: bytes) -> list[tuple[bytes, bytes]]:
    """Whole log entries (each ending in a newline) as (stream, text) pairs: `stdout` or `stderr` and what the
    container wrote, a newline after each whole line (a line from before lines were timed counts as stdout)."""
    out: list[tuple[bytes, bytes]] = []
    for entry in entries.split(b"\n")[:-1]:
        parts = entry.split(b" ", 3)
        if not _is_entry(entry, parts):
            out.append((b"stdout", entry + b"\n"))
            continue
        out.append((parts[1], parts[3] + b"\n" if parts[2] == b"F" else parts[3]))
    return out


def _torn_entry(handle: BinaryIO, size: int) -> bool:
    """Whether the file's last line (no newline after it) begins as a CRI log entry does (its time)."""
    start = max(size - _CHUNK, 0)
    handle.seek(start)
    block = handle.read(size - start)
    line = block[block.rfind(b"\n") + 1 :]  # an entry is at most MAX_LINE and its head: well within a chunk
    return len(line) >= 31 and line[29:31] == b"Z " and line[:4].isdigit()


def _is_entry(line: bytes, parts: list[bytes] | None = None) -> bool:
    """Whether `line` is a CRI log entry (`<log_time> <stream> <F|P> <text>`)."""
    parts = parts if parts is not None else line.split(b" ", 3)
    return len(parts) == 4 and len(parts[0]) == 30 and parts[0][-1:] == b"Z" and parts[2] in (b"F", b"P")


async def read_log(
    path: Path,
    *,
    tail_lines: int | None = None,
    limit_bytes: int | None = None,
    follow: bool = False,
    finished: Callable[[], bool] = lambda: True,
    timestamps: bool = False,
    since: float | None = None,
) -> AsyncIterator[bytes]:
    """Yield the log's output from the tail offset (`render`); with `follow`, keep yielding until `finished()`.
    `limit_bytes` counts output bytes, as the kubelet's does."""
    reader = LogReader(path, tail_offset(path, tail_lines) if path.exists() else 0)
    outputs = _read(reader, limit_bytes, follow, finished, timestamps, since)
    try:
        async for out in outputs:
            yield out
    finally:
        await outputs.aclose()
        reader.close()


async def _read(
    reader: LogReader,
    limit_bytes: int | None,
    follow: bool,
    finished: Callable[[], bool],
    timestamps: bool,
    since: float | None,
) -> AsyncGenerator[bytes, None]:
    """`read_log`'s reading, from `reader`."""
    remaining = limit_bytes if limit_bytes is not None and limit_bytes > 0 else None
    since_time = since_stamp(since) if since is not None else None
    torn = b""  # an entry whose write was still under way when read
    line_start = True
    while True:
        done = finished()  # read the flag first so output written before the exit is drained below
        chunk = reader.read()
        if chunk:
            data = torn + chunk
            end = data.rfind(b"\n") + 1
            torn = data[end:]
            out, line_start = render_from(data[:end], timestamps=timestamps, since=since_time, line_start=line_start)
            if remaining is not None:
                out = out[:remaining]
                remaining -= len(out)
            if out:
                yield out
            if remaining == 0:
                return
            continue
        if not follow or done:
            if torn and not _is_entry(torn):  # a log written before lines were timed may end mid-line
                yield torn if remaining is None else torn[:remaining]
            return  # (an entry being written as the log was read is whole at the next read)
        await asyncio.sleep(FOLLOW_POLL_SECONDS)


class LogReader:
    """A container's log file read as it grows, across rotations (`kjobs.node.shim` renames a full log to
    `<name>.<time>` and opens a new one at its path): the open file is read to its end, and only once nothing more
    is in it is the path looked at again; a new file there (another inode) means the open one is written no more,
    so what is left in it is read, then the new one from its start, so that `kubectl logs -f` keeps following
    without losing or repeating an entry, as the kubelet's follow reopens the log on a rename
    (pkg/kubelet/kuberuntime/logs/logs.go, `waitLogs`). A file that does not exist yet is opened once it does;
    one removed (its pod was) reads as ended."""

    def __init__(self, path: Path, offset: int | None = 0) -> None:
        """From byte `offset` of the current file, or with None from its end."""
        self.path = path
        self.offset = 0
        self._fd = -1
        self._file: tuple[int, int] | None = None  # (device, inode) of the open file
        if self._open() and offset is None:
            self.offset = os.fstat(self._fd).st_size
        elif offset is not None:
            self.offset = offset

    def _open(self) -> bool:
        try:
            self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False
        info = os.fstat(self._fd)
        self._file = (info.st_dev, info.st_ino)
        return True

    def read(self) -> bytes:
        """Up to 64 KiB more of the log (nothing: nothing new yet)."""
        if self._fd < 0 and not self._open():
            return b""
        chunk = os.pread(self._fd, _CHUNK, self.offset)
        if chunk:
            self.offset += len(chunk)
            return chunk
        try:
            info = os.stat(self.path)
        except OSError:
            return b""
        if (info.st_dev, info.st_ino) == self._file:
            return b""
        chunk = os.pread(self._fd, _CHUNK, self.offset)  # written between the read above and the rotation
        if chunk:
            self.offset += len(chunk)
            return chunk
        self.close()
        self.offset = 0
        following = self._next_file()
        if following is None:
            return self.read()  # the new file at the path, from its start
        try:
            self._fd = os.open(following, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return b""  # removed as it was found: looked for again at the next read
        info = os.fstat(self._fd)
        self._file = (info.st_dev, info.st_ino)
        return self.read()

    def _next_file(self) -> Path | None:
        """The rotated file written after the one that was open, if the log rotated more than once since it was
        last looked at (None: the current file). Rotated files are named `<log>.<YYYYMMDD-HHMMSS>[.<n>]` and
        removed oldest first, so when the open one is gone every one left is newer."""
        rotated: list[tuple[tuple[str, int], Path, tuple[int, int]]] = []
        for candidate in self.path.parent.glob(f"{self.path.name}.*"):
            stamp, _, counter = candidate.name[len(self.path.name) + 1 :].partition(".")
            try:
                info = candidate.stat()
                order = (stamp, int(counter or 0))
            except (OSError, ValueError):
                continue
            rotated.append((order, candidate, (info.st_dev, info.st_ino)))
        rotated.sort()
        files = [file for _, _, file in rotated]
        newer = rotated[files.index(self._file) + 1 :] if self._file in files else rotated
        return newer[0][1] if newer else None

    def close(self) -> None:
        """Let go of the open file."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


TERMINATION_MESSAGE_LOG_LINES = 80
TERMINATION_MESSAGE_LOG_BYTES = 2048
"""The kubelet's `MaxContainerTerminationMessageLogLines`/`...LogLength` (pkg/kubelet/container/runtime.go)."""


def fallback_message(output: bytes) -> str:
    """`terminationMessagePolicy: FallbackToLogsOnError`: the message of a failed container whose output (as
    `render` gives it) is `output`: its last 80 lines, at most their last 2,048 bytes (the kubelet's
    `readLastStringFromContainerLogs`, pkg/kubelet/kuberuntime/kuberuntime_container.go)."""
    lines = output.splitlines(keepends=True)[-TERMINATION_MESSAGE_LOG_LINES:]
    return b"".join(lines)[-TERMINATION_MESSAGE_LOG_BYTES:].decode("utf-8", "replace")
