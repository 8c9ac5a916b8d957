"""A container's mount namespace: its volumes bound at their mountPaths, then its command exec'd.

Design note: run by file path before a container's argv (`python -I -S mountns.py PLAN -- argv...`, the way the
`setpriv` and cgroup prefixes run; stdlib only, so it needs neither kjobs on `sys.path` nor `site`). In one
process, before the exec — capabilities held in a user namespace do not survive an exec — it:
1. unshares a mount namespace (root: `CLONE_NEWNS`; anyone else: `CLONE_NEWUSER|CLONE_NEWNS`, mapping the user's
   uid and gid to themselves, never to root, so `id -u` in the container is what it is outside), and makes `/`
   private recursively, so nothing done here reaches the host; with the plan's `hostname`, a UTS namespace too
   (`CLONE_NEWUTS`), whose hostname it sets (the pod's, as a sandbox has it);
2. mounts a tmpfs on the plan's staging directory (the runtime's `<root>/mnt`, private to this namespace) and
   binds every top-level entry of `/` into it recursively (symlinks such as `/bin -> usr/bin` are copied);
3. hides the plan's `hide` paths (kjobs' data directory, the kubeconfig it wrote, the node's directory with
   every pod's files: `kjobs.node.process_runtime`) behind an empty read-only tmpfs (a directory) or an empty
   read-only file, then binds each `keep` path (the pod's own directory) back at its place, so the container
   reads neither the server's keys nor another pod's token (docs/security.md); and binds the plan's `protect`
   paths (the node's entries in the pod's directory: volume contents, termination-message files, the hosts
   file) over themselves read-only, so no symlink the container puts there is followed by the node later;
4. binds each volume (`Bind` of `kjobs.node.volumesetup`, shallowest first) at its mountPath, read-only ones
   remounted read-only: the top mount only, as runc's `ro` (a mount below it, in a hostPath, stays writable),
   or with `recursiveReadOnly` every mount below it too, as runc's `rro`, through `mount_setattr(2)` with
   `AT_RECURSIVE` and `MOUNT_ATTR_RDONLY` (Linux 5.12; `kjobs.node.recursive_read_only`). A mountPath that
   does not exist is made without touching the host's filesystem: its nearest existing directory is shadowed
   by a tmpfs into which that directory's entries are bound again, and the missing directories (or, for a
   file, an empty file) are made on that tmpfs. Symlinks in a mountPath are resolved inside the container's
   view (as runc's securejoin does);
5. pivots into the new root (`pivot_root(".", ".")`, as runc), detaches the old one, chdirs to the container's
   working directory and execs the command, which may still be `setpriv`. The plan's `handover` descriptor (the
   shim's handover pipe, `kjobs.node.shim`) is close-on-exec from the start, so this exec is what tells the shim
   the container's command runs, as runc's init execs the user's process.
A failure before the exec is written to stderr (the container's log) and ends the process with 128, as a start
error does. `--probe DIR` does steps 1-2 on DIR and exits 0: whether this machine lets a process do this; it
then makes DIR (its binds of the host's entries below) read-only recursively in that throwaway namespace and
prints `rro` when that worked. Python 3.11 has no `os.unshare`, `os.mount` nor `mount_setattr`: libc's (or the
system call's number) are called through ctypes.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import platform
import stat
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWUSER = 0x10000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MNT_DETACH = 2
_ST_TO_MS = ((1, MS_RDONLY), (2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC), (1024, MS_NOATIME),
             (2048, MS_NODIRATIME), (4096, MS_RELATIME))  # fmt: skip
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}
_MOUNT_SETATTR = 442  # every architecture's since Linux 5.12 (the unified table; alpha aside, unsupported here)
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
RECURSIVE_READ_ONLY = "rro"
"""What `--probe` prints when a mount could be made read-only recursively."""
_SHADOW = "/..kjobs-shadow"
_EMPTY = "/..kjobs-hidden"
_MAX_LINKS = 40

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = [None if v is None else os.fsencode(v) for v in (source, target, fstype, data)]
    _check(_libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]), f"mount {source or ''} on {target}")


def _umount(target: str) -> None:
    _check(_libc.umount2(os.fsencode(target), MNT_DETACH), f"umount {target}")


class _MountAttr(ctypes.Structure):
    """`struct mount_attr` (linux/mount.h, MOUNT_ATTR_SIZE_VER0: four u64)."""

    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64), ("propagation", ctypes.c_uint64),
                ("userns_fd", ctypes.c_uint64)]  # fmt: skip


def read_only_recursively(target: str) -> None:
    """Make the mount at `target` and every mount below it read-only (runc's `rro`: `mount_setattr(2)` with
    `AT_RECURSIVE`); glibc's wrapper where it has one (2.36), else the system call."""
    attr = _MountAttr(attr_set=MOUNT_ATTR_RDONLY)
    path, size = os.fsencode(target), ctypes.c_size_t(ctypes.sizeof(attr))
    call = getattr(_libc, "mount_setattr", None)
    if call is not None:
        result = call(ctypes.c_int(AT_FDCWD), path, ctypes.c_uint(AT_RECURSIVE), ctypes.byref(attr), size)
    else:  # syscall(2) is variadic: every argument a long
        number, dfd, flags = (ctypes.c_long(v) for v in (_MOUNT_SETATTR, AT_FDCWD, AT_RECURSIVE))
        result = _libc.syscall(number, dfd, path, flags, ctypes.byref(attr), size)
    _check(result, f"mount_setattr {target}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as out:
        out.write(text)


def enter(hostname: str | None = None) -> None:
    """Step 1: a private mount namespace (in a user namespace that maps the user to themselves when not root),
    and, given a hostname, a UTS namespace with that hostname (the pod sandbox's, `kjobs.node.hostsfile`)."""
    uid, gid = os.getuid(), os.getgid()
    uts = CLONE_NEWUTS if hostname is not None else 0
    if uid == 0:
        _check(_libc.unshare(CLONE_NEWNS | uts), "unshare")
    else:
        _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWUSER | uts), "unshare")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    if hostname is not None:
        name = os.fsencode(hostname)
        _check(_libc.sethostname(name, ctypes.c_size_t(len(name))), "sethostname")


def _bind(source: str, target: str) -> None:
    _mount(source, target, None, MS_BIND | MS_REC)


def _mount_point_like(source: str, target: str) -> None:
    """Make `target` (absent) the kind of mount point `source` needs: a directory or an empty file."""
    if os.path.isdir(source):
        os.mkdir(target, 0o755)
    else:
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))


def _copy_entries(source_dir: str, target_dir: str) -> None:
    """Re-create `source_dir`'s entries in `target_dir`: symlinks copied, everything else bound."""
    for name in os.listdir(source_dir):
        source, target = f"{source_dir}/{name}", f"{target_dir.rstrip('/')}/{name}"
        if os.path.islink(source):
            os.symlink(os.readlink(source), target)
            continue
        try:
            _mount_point_like(source, target)
            _bind(source, target)
        except OSError:
            continue  # an entry that cannot be bound (vanished, not permitted) is left out of the view


def build_root(root: str) -> None:
    """Step 2: a tmpfs at `root` holding the host's top-level entries."""
    _mount("tmpfs", root, "tmpfs", MS_NOSUID, "mode=0755")
    _copy_entries("/", root)


def _resolve(root: str, path: str) -> tuple[str, list[str]]:
    """`path` (absolute, in the container's view) resolved under `root`: the deepest existing directory's host
    path and the components after it that do not exist."""
    parts = [p for p in path.split("/") if p]
    current = root
    links = 0
    while parts:
        part = parts.pop(0)
        if part == "..":
            current = os.path.dirname(current) if current != root else root
            continue
        candidate = f"{current}/{part}"
        if os.path.islink(candidate):
            links += 1
            if links > _MAX_LINKS:
                raise OSError(40, f"too many levels of symbolic links: {path}")
            link = os.readlink(candidate)
            if link.startswith("/"):
                current = root
            parts = [p for p in link.split("/") if p] + parts
            continue
        if not os.path.lexists(candidate):
            return current, [part, *parts]
        current = candidate
    return current, []


def _flags(path: str) -> int:
    """The mount flags `path`'s mount has (a remount in a user namespace must keep the locked ones)."""
    have = os.statvfs(path).f_flag
    return sum(ms for st, ms in _ST_TO_MS if have & st)


def _shadow(root: str, directory: str) -> None:
    """Make `directory` writable without writing to the host: a tmpfs over it holding its entries again."""
    spare = root + _SHADOW
    os.mkdir(spare, 0o700)
    _bind(directory, spare)
    info = os.stat(directory)
    mode = f"mode={stat.S_IMODE(info.st_mode):o}"
    try:
        _mount("tmpfs", directory, "tmpfs", 0, f"{mode},uid={info.st_uid},gid={info.st_gid}")
    except OSError:
        _mount("tmpfs", directory, "tmpfs", 0, mode)  # its owner is not mapped in this user namespace
    _copy_entries(spare, directory)
    _umount(spare)
    os.rmdir(spare)


def safe_open(source: str, within: str) -> int:
    """An `O_PATH` descriptor of `source`, reached from the directory `within` one component at a time, none of
    them a symlink (pkg/volume/util/subpath/subpath_linux.go `doSafeOpen`): what a subPath bind mounts, through
    `/proc/self/fd/N`, so a symlink swapped in after the node checked the path is not followed."""
    relative = os.path.relpath(source, within)
    if relative == ".." or relative.startswith("../"):
        raise OSError(1, f"subpath {source!r} not within volume path {within!r}")
    fd = os.open(within, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC)
    current = within
    for part in [] if relative == "." else relative.split("/"):
        current = f"{current}/{part}"
        try:
            child = os.open(part, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        except OSError as exc:
            os.close(fd)
            raise OSError(exc.errno, f"cannot open {current}: {exc.strerror}") from None
        os.close(fd)
        fd = child
        if stat.S_ISLNK(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(40, f"unexpected symlink found {current}")
    return fd


def bind_volume(
    root: str, source: str, target: str, read_only: bool, made: set[str], within: str = "", recursive: bool = False
) -> None:
    """Step 4 for one volume: `source` at `target` (container path) in the view under `root`; a subPath's
    (`within`: its volume's directory) opened by `safe_open` and bound by its descriptor; a read-only one made
    read-only with its sub-mounts when `recursive`."""
    fd = safe_open(source, within) if within else -1
    try:
        _bind_volume(root, source if fd < 0 else f"/proc/self/fd/{fd}", target, read_only, made, recursive)
    finally:
        if fd >= 0:
            os.close(fd)


def _bind_volume(root: str, source: str, target: str, read_only: bool, made: set[str], recursive: bool) -> None:
    parent, missing = _resolve(root, target)
    if missing:
        if parent not in made:
            _shadow(root, parent)
            made.add(parent)
        for part in missing[:-1]:
            parent = f"{parent}/{part}"
            os.mkdir(parent, 0o755)
            made.add(parent)
        where = f"{parent}/{missing[-1]}"
        _mount_point_like(source, where)
        if os.path.isdir(where):
            made.add(where)
    else:
        where = parent
    _bind(source, where)
    made.discard(where)  # a volume is not ours to shadow: a mount below it shadows it again
    if read_only and recursive:
        read_only_recursively(where)
    elif read_only:
        _mount(None, where, None, MS_BIND | MS_REMOUNT | MS_RDONLY | _flags(where))


def _ancestors(path: str, root: str) -> list[str]:
    """`path`'s directories under `root` (the view's path of each), outermost first, `path` included."""
    out, current = [], root
    for part in (p for p in path.split("/") if p):
        current = f"{current}/{part}"
        out.append(current)
    return out


def _under(path: str, directories: list[str]) -> bool:
    """Whether `path` is one of `directories` or inside one."""
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in directories)


def hide(root: str, hidden: list[str], keep: list[str], made: set[str]) -> None:
    """Step 3: each `hidden` host path (absolute, symlinks resolved by the runtime) that exists is covered in the
    view under `root`: a directory by an empty tmpfs, read-only once the `keep` paths under it are bound back; a
    file by an empty read-only file (`_EMPTY`, unlinked by `run` once the volumes are bound: nothing can be
    mounted over an unlinked file, and a volume may be bound over a hidden path). `keep` paths (the pod's own
    directory, its working directory) are bound from the host at their place, so the container keeps reaching
    them."""
    covered: list[str] = []
    empty = ""
    if hidden:  # the staging tmpfs's copy, seen through the bound host directories (`pivot` detaches it too)
        with contextlib.suppress(OSError):
            _umount(root + root)
    for path in sorted(hidden, key=len):  # outermost first; one under a covered directory is covered already
        view = root + path
        if _under(path, covered) or os.path.islink(view) or not os.path.lexists(view):
            continue
        if os.path.isdir(view):
            _mount("tmpfs", view, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700,size=64k,nr_inodes=1024")
            covered.append(path)
            made.add(view)
            continue
        if not empty:
            empty = root + _EMPTY
            os.close(os.open(empty, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o400))
        _mount(empty, view, None, MS_BIND)
        _mount(None, view, None, MS_BIND | MS_REMOUNT | MS_RDONLY | _flags(view))
    for path in dict.fromkeys(keep):
        if not os.path.isdir(path) or not _under(path, covered):
            continue
        for directory in _ancestors(path, root):
            if not os.path.lexists(directory):
                os.mkdir(directory, 0o711)
        _bind(path, root + path)
    for path in covered:
        view = root + path
        _mount(None, view, None, MS_BIND | MS_REMOUNT | MS_RDONLY | _flags(view))
        made.discard(view)  # read-only now: a volume under it shadows it again with a tmpfs of its own


def protect(root: str, paths: list[str]) -> None:
    """Step 3 too: each of `paths` (the node's entries in the pod's directory: volume contents, termination-message
    files, the hosts file) that exists is bound over itself read-only in the view, so the container cannot swap
    in a symlink that the node, writing or reading there later as the user, would follow."""
    for path in paths:
        view = root + path
        if os.path.islink(view) or not os.path.lexists(view):
            continue
        _mount(view, view, None, MS_BIND | MS_REC)
        _mount(None, view, None, MS_BIND | MS_REMOUNT | MS_RDONLY | _flags(view))


def pivot(root: str) -> None:
    """Step 5: `root` becomes `/`; the old root is detached."""
    number = _PIVOT_ROOT.get(platform.machine())
    old = os.open("/", os.O_DIRECTORY | os.O_RDONLY)
    try:
        os.chdir(root)
        if number is None or _libc.syscall(ctypes.c_long(number), b".", b".") != 0:
            os.chroot(".")  # an architecture whose pivot_root number is not known here
            return
        os.fchdir(old)
        _umount(".")
    finally:
        os.close(old)
        os.chdir("/")
    with contextlib.suppress(OSError):
        _umount(root)  # the staging tmpfs's copy, seen again through the bound host directories


def run(plan: dict[str, object], argv: list[str]) -> None:
    handover = plan.get("handover")
    if handover is not None:  # closed by the exec below, which starts the container's command (or `setpriv`)
        with contextlib.suppress(OSError):
            os.set_inheritable(int(handover), False)  # type: ignore[call-overload]
    root = str(plan["root"])
    hostname = plan.get("hostname")
    enter(None if hostname is None else str(hostname))
    build_root(root)
    made = {root}
    hide(root, [str(p) for p in plan.get("hide") or []], [str(p) for p in plan.get("keep") or []], made)  # type: ignore[attr-defined]
    protect(root, [str(p) for p in plan.get("protect") or []])  # type: ignore[attr-defined]
    for bind in plan.get("binds") or []:  # type: ignore[attr-defined]
        source, target, within = str(bind["source"]), str(bind["target"]), str(bind.get("within") or "")
        recursive = bool(bind.get("recursiveReadOnly"))
        bind_volume(root, source, target, bool(bind.get("readOnly")), made, within, recursive)
    with contextlib.suppress(OSError):  # busy where a volume is bound over a hidden file: then it stays, empty
        os.unlink(root + _EMPTY)  # the hidden files' source: the binds keep its inode
    pivot(root)
    cwd = str(plan.get("cwd") or "/")
    try:
        os.chdir(cwd)
    except OSError as exc:
        message = f"chdir to cwd ({json.dumps(cwd)}) set in config.json failed: {exc.strerror}"
        raise OSError(exc.errno, message) from None
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        where = "executable file not found in $PATH" if "/" not in argv[0] else (exc.strerror or "").lower()
        raise OSError(exc.errno, f'exec: "{argv[0]}": {where}') from None


def main(args: list[str]) -> int:
    if len(args) == 2 and args[0] == "--probe":
        enter(os.uname().nodename)  # a UTS namespace too: a pod's hostname is set in one
        build_root(args[1])
        with contextlib.suppress(OSError):  # no mount_setattr (before Linux 5.12: ENOSYS), or not allowed
            read_only_recursively(args[1])
            sys.stdout.write(RECURSIVE_READ_ONLY + "\n")
        return 0
    if len(args) < 3 or args[1] != "--":
        sys.stderr.write("usage: mountns.py PLAN -- COMMAND [ARG...] | --probe DIR\n")
        return 2
    try:
        run(json.loads(args[0]), args[2:])
    except OSError as exc:
        sys.stderr.write(f"failed to start container process: {exc.strerror or exc}\n")
        return 128
    return 128  # pragma: no cover - execvp returns only by raising


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
