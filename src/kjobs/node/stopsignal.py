"""How a stop signal (SIGTERM) reaches a container: as it reaches a container's first process on a cluster.

Design note: a kubelet stopping a container (`killContainer`, pkg/kubelet/kuberuntime/kuberuntime_container.go)
asks the runtime to stop it; containerd's CRI sends the stop signal to the container's init process only (the
runc shim's `Kill` without `All`; containerd internal/cri/server/container_stop.go), then SIGKILL once the grace
period is over. With its own PID namespace (the default), that process is PID 1 there, and the kernel drops
every signal sent to a namespace's init from inside or outside it for which it has no handler
(pid_namespaces(7); kernel/signal.c: `sig_task_ignored` ignores a `SIG_DFL` signal to a `SIGNAL_UNKILLABLE`
task, and `get_signal` drops one still `SIG_DFL` when delivered). So `sleep 3600`, `sh -c "sleep 30"` or a bare
`python train.py` wait out the grace period and end 137; a script that traps TERM gets it, its children do not
(they die with it: a namespace's processes are SIGKILLed when its init exits, as kjobs' shim kills the group).

A local container is not PID 1, so the shim (`kjobs.node.shim`, request `k` with a scope) looks for the
handler itself in `/proc/PID/status` and sends the signal to the main process only when its `SigCgt` bit is
set. A signal the process blocks (`SigBlk`, or waits for in `sigwait`, `_in_sigwait`) is sent too: the kernel
queues a blocked signal even to an init (`sig_ignored`: "Blocked signals are never ignored"), for a process
waiting for it with `sigwait` or a signalfd (tini, dumb-init, systemd) or installing a handler before it
unblocks it. (One that unblocks it still without a handler would die of it here, where an init drops it.) One
ignored (`SigIgn`) is not sent: it would change nothing.
The process the shim knows is the user's command: kjobs' wrappers (the
cgroup trampoline, `kjobs.node.mountns`, `setpriv`) each exec the next one in the same process. The shim reports
such a container started only once the trampoline or `mountns` has exec'd what follows it, and holds a stop that
comes before until then (`kjobs.node.shim`, `HANDOVER_FD`), as a kubelet stops a container only after its
runtime's `StartContainer` returned, which is after runc's init exec'd the user's process; the handler is looked
for at that moment. `setpriv`, a C program that execs at once, is not waited for.

A container that does not have its own PID namespace (`spec.shareProcessNamespace: true`, whose PID 1 is the
pause container; `spec.hostPID: true`) is not an init: the signal goes to its first process whatever it does
with it (the default kills it: 143), still not to its children, which containerd SIGKILLs when that process
exits (`ShouldKillAllOnExit`), as the shim does. Stdlib only: the shim imports it by path.
"""

from __future__ import annotations

import contextlib
import os
import signal

INIT = "init"
"""The container's first process is PID 1 of its own namespace: signalled only if it takes the signal."""

MAIN = "main"
"""It shares a PID namespace (pod's or host's): signalled, whatever its disposition."""

GROUP = "group"
"""Its whole process group (SIGKILL at the end of the grace period; and requests of an older agent)."""


def scope_of(pod_spec: dict[str, object], signum: int) -> str:
    """Whom `signum` reaches in a container of a pod with `pod_spec`: SIGKILL the whole group, any other signal
    (the stop signal) the first process only, as an init (`INIT`) unless the pod shares a PID namespace
    (`MAIN`)."""
    if signum == signal.SIGKILL:
        return GROUP
    if pod_spec.get("shareProcessNamespace") is True or pod_spec.get("hostPID") is True:
        return MAIN
    return INIT


def _mask(status: str, field: str) -> int:
    """A signal mask line of /proc/PID/status (`SigCgt:\t0000000000004002`) as an int (0 if missing)."""
    start = status.find(f"\n{field}:")
    if start < 0:
        return 0
    end = status.find("\n", start + 1)
    try:
        return int(status[start + len(field) + 2 : end if end >= 0 else None].strip(), 16)
    except ValueError:
        return 0


_BLOCKABLE = (1 << 31) - 1 & ~(1 << (signal.SIGKILL - 1)) & ~(1 << (signal.SIGSTOP - 1))
"""Signals 1-31 but SIGKILL and SIGSTOP: a mask holding them all is a shell's (or glibc's `posix_spawn`) short
window around a fork or exec, not a process waiting for one signal; read as blocked, a stop arriving then was
queued and killed the command once it unblocked (143, where an init drops it). A process that blocks everything
to wait for signals (tini) sleeps in `sigtimedwait`: `_in_sigwait` tells it."""


def takes(pid: int, signum: int) -> bool:
    """Whether the process `pid` would receive `signum` as a namespace's init: it has a handler for it, or it
    blocks it (see the module note). False if it cannot be read (it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            status = f.read()
    except OSError:
        return False
    bit = 1 << (signum - 1)
    blocked = _mask(status, "SigBlk")
    if blocked & _BLOCKABLE == _BLOCKABLE:
        blocked = 0  # everything blocked: a moment of a fork or exec (dash does it), not a wait for the signal
    return bool((_mask(status, "SigCgt") | blocked) & bit) or _in_sigwait(pid)


def _in_sigwait(pid: int) -> bool:
    """Whether `pid` sleeps in `sigwait`/`sigtimedwait`: the kernel then unblocks the awaited signals while it
    waits (`do_sigtimedwait` keeps the mask it had in `real_blocked`, which /proc does not show, and which
    `sig_ignored` honours), so `SigBlk` no longer shows them. Its wait channel says so."""
    try:
        with open(f"/proc/{pid}/wchan", encoding="ascii", errors="replace") as f:
            return f.read().startswith("do_sigtimedwait")
    except OSError:
        return False


def send(pid: int, pidfd: int, signum: int, scope: str) -> bool:
    """Signal a running container whose first process is `pid` (`pidfd` its pidfd, -1 if none) as `scope` says;
    True if a signal was sent."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if scope == GROUP:
            os.killpg(pid, signum)
            return True
        if scope == INIT and not takes(pid, signum):
            return False
        if pidfd >= 0:
            signal.pidfd_send_signal(pidfd, signum)
        else:
            os.kill(pid, signum)
        return True
    return False
