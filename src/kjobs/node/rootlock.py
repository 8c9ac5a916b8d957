"""Who else uses a node's root directory: a lock file in it, `node.lock`.

A runtime that sweeps the files of pods it does not know (`ProcessRuntime.owns_root`, the kubelet's
`cleanupOrphanedPodDirs`) must be the root's only user, or it removes another process's live pods' files. So the
owner (`kjobs up`'s nodes, `kjobs node join --root-dir`) holds an exclusive lock on `node.lock` while it runs, and
a runtime that shares its root (`kjobs run` sessions under the default root) a shared one: an owner started while
another process uses the root is refused, and so is a sharer while an owner runs. POSIX record locks (`lockf`)
belong to a process, so the clusters of one process (tests) never refuse each other; they end when the process
does, however it ends.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from kjobs.files import FILE_MODE, owned_dir

LOCK_FILE = "node.lock"


class RootInUse(Exception):
    """The root is used by another process in a way this claim cannot share."""


def claim(root: str | os.PathLike[str], *, exclusive: bool) -> int:
    """Lock `root`'s `node.lock` (created 0700/0600 as needed), exclusively for an owner; the open descriptor,
    which holds the lock until it is closed or the process ends. Raises `RootInUse` when another process holds a
    lock that conflicts."""
    owned_dir(root)
    fd = os.open(Path(root) / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        fcntl.lockf(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        if exclusive:
            why = f"{root} is in use by another process: a node's own root (--root-dir, kjobs up's) is not shared"
        else:
            why = f"{root} is another process's own node root (kjobs node join --root-dir, kjobs up): not shared"
        raise RootInUse(why) from None
    return fd


NODE_ENTRIES = (LOCK_FILE, "pods", "journal", "procs")
"""What a node's root holds once a node has run there (`ProcessRuntime` makes them, `claim` the lock)."""


def foreign(root: str | os.PathLike[str]) -> bool:
    """Whether `root` is a directory with something in it but nothing of a node's: not a root to sweep (a
    `--root-dir` naming a home or project directory by mistake would lose its `logs/` to the orphan sweep)."""
    try:
        names = set(os.listdir(root))
    except (FileNotFoundError, NotADirectoryError):
        return False
    return bool(names) and names.isdisjoint(NODE_ENTRIES)
