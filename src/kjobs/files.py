"""Private files and directories: what kjobs keeps (the store, node roots, credentials) only its own user reads.

Design note: kjobs runs pods as local processes, and with a securityContext as other users
(`kjobs.node.security`); those users must not read the store, the credentials or other pods' files and logs.
So a data directory and a node's root are 0700 and the store's files 0600, as kubeadm keeps `/etc/kubernetes/pki`
and a kubelet its root directory. Modes are set explicitly (not through the umask, which pods inherit), and an
existing directory or file of this user is tightened when it is opened (one made by an older kjobs was 0755/0644);
one owned by another user is left alone, except a node's root (`owned_dir`), which may be a name in a shared
directory (`/dev/shm/kjobs-<uid>`) that another user could have made first.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: str | os.PathLike[str]) -> Path:
    """Create `path` (and its parents) if missing, and make it 0700 when it is this user's."""
    path = Path(path)
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    _tighten(path, DIR_MODE)
    return path


def private_file(path: str | os.PathLike[str]) -> Path:
    """Create `path` empty if missing, 0600; make an existing one of this user 0600."""
    path = Path(path)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE))
    _tighten(path, FILE_MODE)
    return path


def _tighten(path: Path, mode: int) -> None:
    info = path.stat()
    if info.st_uid == os.geteuid() and info.st_mode & 0o777 != mode:
        path.chmod(mode)


class NotOwned(PermissionError):
    """A directory kjobs would keep private files in, or the directory holding it, belongs to another user."""


def owned_dir(path: str | os.PathLike[str]) -> Path:
    """`private_dir`, refusing (`NotOwned`) a `path` that, or whose parent, belongs to a user other than this one
    or root (a symlink by its own owner): a node's default root is a name in a directory everyone may write
    (`/dev/shm/kjobs-<uid>/NODE`, `/tmp/kjobs-<uid>/NODE`), and another user who made that name first could read
    the pods' tokens and Secrets there, or swap what it holds (tmux refuses a socket directory so)."""
    path = Path(path).absolute()
    me = os.geteuid()
    for entry in (path.parent, path):  # the parent first: nothing is made in a directory of another user
        entry.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        owner = entry.lstat().st_uid
        if owner not in (me, 0):
            raise NotOwned(
                f"{entry} belongs to uid {owner}, not to this user (uid {me}): refusing to keep pods' files there"
            )
    _tighten(path, DIR_MODE)
    return path
