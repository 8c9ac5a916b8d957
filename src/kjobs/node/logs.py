"""Container log files: one file per container attempt, read back with tail, byte limit and follow.

Design note: a container's stdout and stderr are the same file descriptor, opened on its attempt's log
file, so output is interleaved in write order and costs the runtime nothing to collect. All files sit flat
in one directory (`<pod uid>_<container>_<restartCount>.log`; uids and container names contain no `_`),
because each directory created or removed per pod is a measurable share of a pod start (≈0.3–0.6 ms per
mkdir here). The kubelet keeps the current and the previous attempt (`--previous`); older files are removed.
Following polls the file's size until the attempt has finished, then drains what is left — the stream ends
when the container exits, which is what `kubectl logs -f` waits for.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path

FOLLOW_POLL_SECONDS = 0.05
_CHUNK = 64 * 1024


def attempt_log_path(log_dir: Path, uid: str, container: str, number: int) -> Path:
    """Where attempt `number` of the pod's `container` writes its output."""
    return log_dir / attempt_log_name(uid, container, number)


def attempt_log_name(uid: str, container: str, number: int) -> str:
    """The file name of `attempt_log_path` (a start joins it to the directory as text: Path costs show there)."""
    return f"{uid}_{container}_{number}.log"


def pod_log_paths(log_dir: Path, uid: str) -> list[Path]:
    """Every log file of the pod (to delete them with the pod)."""
    return list(log_dir.glob(f"{uid}_*.log"))


def prune_old_logs(log_dir: Path, uid: str, container: str, keep_from: int) -> None:
    """Remove log files of attempts older than `keep_from` (the kubelet keeps current + previous)."""
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
        # A final line without its newline still counts as a line.
        handle.seek(max(size - 1, 0))
        ends_with_newline = size > 0 and handle.read(1) == b"\n"
        wanted = tail_lines + (1 if ends_with_newline else 0)
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


async def read_log(
    path: Path,
    *,
    tail_lines: int | None = None,
    limit_bytes: int | None = None,
    follow: bool = False,
    finished: Callable[[], bool] = lambda: True,
) -> AsyncIterator[bytes]:
    """Yield the log's bytes from the tail offset; with `follow`, keep yielding until `finished()`."""
    offset = tail_offset(path, tail_lines) if path.exists() else 0
    remaining = limit_bytes if limit_bytes is not None and limit_bytes > 0 else None
    while True:
        done = finished()  # read the flag first so output written before the exit is drained below
        chunk = _read_from(path, offset, remaining)
        if chunk:
            offset += len(chunk)
            if remaining is not None:
                remaining -= len(chunk)
            yield chunk
            if remaining == 0:
                return
            continue
        if not follow or done:
            return
        await asyncio.sleep(FOLLOW_POLL_SECONDS)


def _read_from(path: Path, offset: int, limit: int | None) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return b""
    try:
        size = _CHUNK if limit is None else min(_CHUNK, limit)
        return os.pread(fd, size, offset)
    finally:
        os.close(fd)
