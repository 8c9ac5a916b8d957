"""The open-files limit kjobs runs with: the soft limit raised to the hard one at start, as every Kubernetes
component has it.

Go raises a process's soft `RLIMIT_NOFILE` to its hard limit when the program starts (Go 1.19, `os` package,
`rlimit.go`), so kube-apiserver, the kubelet and containerd's shims never run out of descriptors at a shell's
1024 while the system allows far more. kjobs' API server, node agents and process shims hold a descriptor or
three per container and one per client connection: at 1024 (a laptop's usual soft limit) a wide Job's pods
failed to start (`StartError`, "Too many open files") and clients were cut off (libuv accepts and closes what
it cannot serve: `Unable to connect to the server: EOF`). Containers get the soft limit kjobs started with, as Go
gives a child the limit its parent started with (Go 1.21, `syscall` restores the original rlimit in the child), so
that a container under containerd 2.x (whose unit no longer sets `LimitNOFILE`) starts with the usual 1024: the
process shim lowers its soft limit around each start (`kjobs.node.shim`, `containers_open_files_limit`). A program
that loops over every possible descriptor, or uses `select()`, is not handed a million.
"""

from __future__ import annotations

import resource

_started_with: int | None = None
"""The soft open-files limit before `raise_open_files_limit` raised it (None: never raised)."""


def containers_open_files_limit() -> int:
    """The soft open-files limit containers start with: the one this process started with (0: as it runs)."""
    return _started_with or 0


def raise_open_files_limit() -> int:
    """Raise the soft open-files limit to the hard one; return the soft limit now in force."""
    global _started_with
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == hard:
        return soft
    target = hard
    if hard == resource.RLIM_INFINITY:  # Linux caps it at fs.nr_open
        try:
            with open("/proc/sys/fs/nr_open") as f:
                target = int(f.read())
        except (OSError, ValueError):
            return soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (OSError, ValueError):
        return soft
    if _started_with is None:
        _started_with = soft
    return target
