"""The temporary directories of the test helpers, and those a killed test run left behind.

A test run removes its clusters' directories (`kjobs-test-*`) and its session PKI (`kjobs-pytest-*`) as it ends,
by teardown, `atexit` or its SIGTERM handler; a run killed outright (SIGKILL, `pytest-timeout
--timeout-method=thread`, `os._exit`) cannot. So each directory's name carries its owner's identity,
`<prefix><pid>-<start time>-<random>`, as the node's container records do (`kjobs.node.leftovers`), and the first
directory a process makes removes those of owners that are gone: the pid no longer runs, or runs a later process
(its start time differs). A live run's directories are never removed, nor one of another user, nor one named in
the older form without an identity (nothing says whether its owner lives).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from pathlib import Path

from kjobs.node import leftovers

CLUSTER_PREFIX = "kjobs-test-"
"""A test cluster's working directory (nodes' pods, the kubeconfig)."""
PKI_PREFIX = "kjobs-pytest-"
"""The PKI shared by a test process's clusters."""

_OWNED = re.compile(rf"^(?:{re.escape(CLUSTER_PREFIX)}|{re.escape(PKI_PREFIX)})(\d+-\d+)-")
_swept = False
_lock = threading.Lock()


def make(prefix: str) -> Path:
    """A new private directory under the temporary root, named with this process's identity; the first call of a
    process first removes what dead owners left (`sweep`)."""
    global _swept
    with _lock:
        if not _swept:
            _swept = True
            sweep()
    pid = os.getpid()
    started = leftovers.start_time(pid)
    tag = f"{pid}-{started}-" if started else ""  # no /proc: no identity, and nothing is swept either
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{tag}"))


def sweep(root: str | Path | None = None) -> list[Path]:
    """Remove the directories under `root` (the temporary root) whose owning process is gone; the removed."""
    if leftovers.start_time(os.getpid()) is None:  # cannot tell a live owner from a dead one here
        return []
    removed: list[Path] = []
    uid = os.getuid()
    try:
        entries = list(os.scandir(root if root is not None else tempfile.gettempdir()))
    except OSError:
        return []
    for entry in entries:
        found = _OWNED.match(entry.name)
        if found is None or leftovers.alive(found[1]):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != uid:
                continue
        except OSError:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed
