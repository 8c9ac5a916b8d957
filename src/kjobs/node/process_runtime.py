"""`ProcessRuntime`: containers as local processes (the `ContainerRuntime` that really runs Jobs).

Design note: processes are started, signalled and reaped by a shim process (`kjobs.node.shim`, driven
through `kjobs.node.spawner`), as containerd's shims do for a kubelet: a process start costs its parent
CPU, and in the shim that cost runs beside the agent instead of on its thread. The shim spawns the way that
measured fastest here (docs/performance.md) — `subprocess.Popen` without `preexec_fn` (vfork path),
`start_new_session=True` so every container is its own process group (SIGKILL reaches the whole tree; the stop
signal only its first process, as a container's init gets it: `kjobs.node.stopsignal`), reaping through a
pidfd. When a container's main process exits its group is SIGKILLed before it is reaped,
as a container's processes die with its PID 1 and so the group id cannot be reused meanwhile.
A runtime has `shims` shims (two by default) and hands each start to the one with the fewer unanswered starts: a
spawn blocks its shim until the child has reached `exec`, and with two those waits overlap
(`kjobs.node.spawner.SHIMS`).

Per pod: `<root>/pods/<uid>` is the default working directory (shared by its containers, like an
emptyDir), `<root>/logs/<uid>_<container>_<n>.log` holds each attempt's interleaved stdout+stderr.
The image is recorded in the status, never pulled: the command must exist on this machine. A missing
command or executable ends the attempt at once as `StartError`, exit code 128, like containerd.
Memory limits go through the `MemoryGuard` probed at start (`cgroups.probe_memory_guard`). A container with a
securityContext starts through a `setpriv` prefix that gives it its user, groups and capabilities, and its pod's
directory is given to that user (`kjobs.node.security`); a node's root is private (0700, `kjobs.files`).
A container with volumeMounts starts through the `kjobs.node.mountns` prefix, which gives it a mount namespace
with its volumes (set up under `<pod_dir>/volumes` by `prepare_volumes` before the pod starts), where one can be
made (`mounts_volumes`, probed once; docs/volumes.md).
Each running container's process group is recorded under `<root>/procs`, and a runtime starting on a root
kills the groups that a shim which died (SIGKILL, crash) left running (`leftovers`). The shim outlives an agent
that is killed and journals every start and exit under `<root>/journal`: a runtime starting on the root adopts
what still runs and reports what ended as it ended (`adopt`, `kjobs.node.adoption`); a clean `shutdown` kills
everything and leaves no journal.

The injected clock stamps times; timers (back-off, grace periods) run on the asyncio loop in real time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal as signals
import stat
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from kjobs.api.errors import go_quote
from kjobs.api.types import Obj
from kjobs.api.uids import random_uuid
from kjobs.clock import Clock, RealClock
from kjobs.files import owned_dir
from kjobs.node import adoption, hostsfile, leftovers, mountns, recursive_read_only, security, stopsignal, volumesetup
from kjobs.node.cgroups import MemoryGuard, Placement, probe_memory_guard, read_group_rss
from kjobs.node.envvars import ConfigError, EnvSources, container_env
from kjobs.node.execution import ExecSpec
from kjobs.node.handlerrunner import HandlerRunner
from kjobs.node.logs import (
    TERMINATION_MESSAGE_LOG_LINES,
    attempt_log_name,
    attempt_log_path,
    fallback_message,
    pod_log_paths,
    prune_old_logs,
    read_log,
    render,
    tail_offset,
)
from kjobs.node.observations import Attempt, KillReason, PodRecord
from kjobs.node.poddns import ClusterRecords
from kjobs.node.podstatus import CONTAINER_STATUS_UNKNOWN
from kjobs.node.probing import runnable_probe
from kjobs.node.recovery import UNKNOWN_EXIT_CODE, UNKNOWN_MESSAGE
from kjobs.node.resources import memory_limit_bytes
from kjobs.node.restart import DEFAULT_BACKOFF_BASE, DEFAULT_BACKOFF_CAP
from kjobs.node.runtime import PodHandle, StatusCallback
from kjobs.node.shim import DEFAULT_LOG_MAX_FILES, DEFAULT_LOG_MAX_SIZE, HANDOVER_FD
from kjobs.node.spawner import SHIMS, SpawnerPool
from kjobs.node.stdin import AttachStdin, ContainerStdin, TerminalStdin
from kjobs.node.supervisor import MINIMUM_GRACE_SECONDS, Cancel, NotRunning, Supervisor, find_container, ignore_status
from kjobs.server.remotecommand import ExecFailed, UpgradeFailed

log = logging.getLogger(__name__)
_HAVE_PIDFD = hasattr(os, "pidfd_open")
START_ERROR = "StartError"
START_ERROR_EXIT_CODE = 128
_SHUTDOWN_WAIT_SECONDS = 5.0
ADOPTED_POLL_SECONDS = 0.05
"""How often the journals of a previous agent's shims are read while containers adopted from them run."""
MOUNT_VOLUMES_ENV = "KJOBS_MOUNT_VOLUMES"
"""`0` here turns volume mounting off (containers start unmounted, with the `VolumesNotMounted` warning)."""
_OFF = ("0", "false", "no", "off")
DEFAULT_TERMINATION_MESSAGE_PATH = "/dev/termination-log"
MAX_TERMINATION_MESSAGE_BYTES = 4096
MOUNTNS_PROBE_SECONDS = 10.0
_MOUNTNS = os.path.abspath(mountns.__file__)
_mount_probes: dict[str, tuple[bool, bool]] = {}
"""Whether a mount namespace could be made, and a mount made read-only recursively in it, by staging directory:
probed once per process and root."""


def _probe_mounts(staging: str) -> tuple[bool, bool]:
    known = _mount_probes.get(staging)
    if known is not None:
        return known
    ok = recursive = False
    if sys.platform.startswith("linux"):
        try:
            done = subprocess.run(
                [sys.executable, "-I", "-S", _MOUNTNS, "--probe", staging],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                timeout=MOUNTNS_PROBE_SECONDS,
                check=False,
            )
            ok = done.returncode == 0
            recursive = ok and done.stdout.decode(errors="replace").split() == [mountns.RECURSIVE_READ_ONLY]
        except (OSError, subprocess.SubprocessError):
            ok = False
    _mount_probes[staging] = (ok, recursive)
    return ok, recursive


def probe_mount_namespaces(staging: str) -> bool:
    """Whether a process started here can make its own mount namespace (`kjobs.node.mountns --probe`, run once
    in a throwaway child): not where unprivileged user namespaces are off (or AppArmor-restricted), nor off Linux."""
    return _probe_mounts(staging)[0]


def probe_recursive_read_only(staging: str) -> bool:
    """Whether, in such a namespace, a mount can be made read-only with its sub-mounts (`mount_setattr(2)`,
    Linux 5.12; the same probe): what `kjobs.node.recursive_read_only` calls runtime support."""
    return _probe_mounts(staging)[1]


def mounting_enabled() -> bool:
    """Whether a runtime made now would mount volumes: not turned off by `KJOBS_MOUNT_VOLUMES=0`, and a mount
    namespace can be made here (probed in a throwaway directory, once per process)."""
    if os.environ.get(MOUNT_VOLUMES_ENV, "1").strip().lower() in _OFF:
        return False
    staging = tempfile.mkdtemp(prefix="kjobs-probe-")
    try:
        return probe_mount_namespaces(staging)
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(staging)


def _same_namespace(pid: int, kind: str) -> bool:
    """Whether process `pid` is in this process's namespace of `kind` (`mnt`, `user`); True when unknown."""
    try:
        return os.readlink(f"/proc/{pid}/ns/{kind}") == os.readlink(f"/proc/self/ns/{kind}")
    except OSError:
        return True


@dataclass(slots=True)
class _Running:
    uid: str
    attempt: Attempt
    pid: int | None  # known once the shim reports the start
    placement: Placement | None
    env: dict[str, str] | None = None
    """The environment the container was started with, on top of the base environment (None: adopted)."""
    cwd: str = ""
    prefix: tuple[str, ...] = ()
    """The `setpriv` prefix that gave it its securityContext."""
    execs: set[int] = field(default_factory=set)
    """Process groups `kubectl exec` started in it: they end with it, as processes in a container do."""
    stdin: ContainerStdin | TerminalStdin | None = None
    """Its stdin, when its spec asks for one (`stdin: true`); else it reads /dev/null (or, under a tty, a terminal
    nobody types into)."""
    tty: bool = False
    """It runs on a terminal of its own (`tty: true`), which `resize` sizes."""
    termination_log: str = ""
    """The file bound at its `terminationMessagePath`, when it runs in a mount namespace of its own."""
    replay: bool = False
    """No attach has come yet to this `stdin`+`stdinOnce` container (`kubectl run -i`): the first gets what it
    wrote before (`kjobs.node.attach`)."""
    wrapped: bool = False
    """It starts behind kjobs' wrappers: reported started when they hand over to its command (`kjobs.node.shim`),
    and its `startedAt` is that time."""


START_REPORT_DELAY = 0.02
"""Seconds between a container process starting and its Running state being reported. A kubelet learns of
container state changes from its pod lifecycle event generator, which relists every second, so a container
that starts and ends within a relist is reported once, already ended. kjobs waits far less, to the same end:
a container that ends within this delay costs its pod one status write instead of two."""


def default_root_dir() -> Path:
    """Where a node keeps pod scratch dirs and logs: a RAM-backed dir when there is one.

    Measured here: mkdir 0.3 ms on the ext4 /tmp against 5 µs on tmpfs, which decides whether a pod start
    costs ≈2× or ≈1× a bare process start. `$XDG_RUNTIME_DIR/kjobs`, else `/dev/shm/kjobs-<uid>`, else the
    temp dir. Pod files there live as long as the pod object (`forget`) or the machine.
    """
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    if runtime_dir and os.path.isdir(runtime_dir) and os.access(runtime_dir, os.W_OK):
        return Path(runtime_dir) / "kjobs"
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return Path("/dev/shm") / f"kjobs-{os.getuid()}"
    return Path(tempfile.gettempdir()) / f"kjobs-{os.getuid()}"


def default_base_env() -> dict[str, str]:
    """Variables every container gets before the pod spec's own (PATH and locale from this process)."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TZ")
    env = {key: os.environ[key] for key in keep if key in os.environ}
    env.setdefault("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    return env


PROTECTED_ENTRIES = ("volumes", "containers", "etc-hosts")
"""The node's entries in a pod's directory (its volumes' contents, termination-message files, hosts file), which a
container in a mount namespace sees read-only though the directory, its default working directory, is writable."""


def hidden_from_pods(root_dir: str | os.PathLike[str], extra: Sequence[str | os.PathLike[str]] = ()) -> list[str]:
    """What a container in a mount namespace must not see (`kjobs.node.mountns` covers each): the node's root
    directory, with every pod's volumes (their ServiceAccount tokens, Secrets), logs and journals, and `extra`
    (`kjobs up`'s data directory, with the CA, admin and ServiceAccount signing keys and the database, and the
    kubeconfig it wrote). Symlinks resolved; a path that is `/` or holds the home directory is left visible, as
    hiding it would hide the user's own files (docs/security.md)."""
    home = os.path.realpath(os.path.expanduser("~"))
    out: list[str] = []
    for path in (root_dir, *extra):
        real = os.path.realpath(path)
        if real == "/" or home == real or home.startswith(real.rstrip("/") + "/") or real in out:
            continue
        out.append(real)
    return out


class ProcessRuntime(Supervisor):
    """Runs each container attempt as a local process group; see the module note."""

    runs_handlers = True

    def __init__(
        self,
        *,
        root_dir: Path,
        clock: Clock | None = None,
        on_status: StatusCallback = ignore_status,
        memory_guard: MemoryGuard | None = None,
        backoff_base: float = DEFAULT_BACKOFF_BASE,
        backoff_cap: float = DEFAULT_BACKOFF_CAP,
        host_ip: str = "127.0.0.1",
        pod_ip: str = "127.0.0.1",
        base_env: Mapping[str, str] | None = None,
        minimum_grace_seconds: float = MINIMUM_GRACE_SECONDS,
        start_report_delay: float = START_REPORT_DELAY,
        shims: int = SHIMS,
        containers_die_with_agent: bool = False,
        mount_volumes: bool | None = None,
        log_max_size: int = DEFAULT_LOG_MAX_SIZE,
        log_max_files: int = DEFAULT_LOG_MAX_FILES,
        hidden_paths: Sequence[str] = (),
        owns_root: bool = False,
    ) -> None:
        super().__init__(
            clock=clock or RealClock(),
            on_status=on_status,
            backoff_base=backoff_base,
            backoff_cap=backoff_cap,
            host_ip=host_ip,
            pod_ip=pod_ip,
            minimum_grace_seconds=minimum_grace_seconds,
        )
        self.start_report_delay = start_report_delay
        self.owns_root = owns_root
        """No other runtime uses this root (a node of `kjobs up`, whose data directory one process holds): files
        of pods it does not know are left over, and `release_unclaimed` removes them. `kjobs run` sessions share
        the default root, so theirs is not owned."""
        self.root_dir = Path(root_dir).absolute()  # a relative one would name other places from pods' working dirs
        self.log_dir = self.root_dir / "logs"
        owned_dir(self.root_dir)  # pods started as other users must not read other pods' files and logs
        (self.root_dir / "pods").mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(exist_ok=True)
        self._log_dir_text, self._pods_dir_text = str(self.log_dir), str(self.root_dir / "pods")
        self._logs_kept: dict[str, list[str]] = {}
        """Pods whose log files `forget` leaves for a reader (`keep_logs`): uid -> the files it left."""
        self.procs_root = self.root_dir / "procs"
        self.journal_dir = self.root_dir / "journal"
        self._me = adoption.identity(os.getpid())
        self._journals = adoption.scan(self.journal_dir, me=self._me)
        leftovers.kill_leftovers(self.procs_root)  # after the scan: what it found lost no longer runs
        for journal in self._journals:  # and what died too young to be recorded for it
            adoption.kill_lost(journal, [r for r in journal.containers.values() if r.lost])
        dead = {j.shim for j in self._journals if not adoption.shim_alive(j)}
        if dead:  # and what a shim that died with its agent was starting (no journal names it), by its tag
            adoption.kill_strays(dead, min(int(shim.partition("-")[2] or 0) for shim in dead))
        self._recovered: dict[str, list[tuple[adoption.Journal, adoption.Recorded]]] = {}
        for journal in self._journals:
            for recorded in journal.containers.values():
                if recorded.uid:
                    self._recovered.setdefault(recorded.uid, []).append((journal, recorded))
        self._adopted: dict[str, tuple[adoption.Journal, adoption.Recorded]] = {}
        self._stopping: list[tuple[adoption.Journal, adoption.Recorded]] = []
        """Recovered containers sent SIGTERM by `stop_recovered`, until their SIGKILL is due."""
        self._controls: dict[str, adoption.ShimControl] = {}
        """Per previous shim (identity): where the input and resizes of the tty containers adopted from it go."""
        self._polling = False
        self.memory_guard = memory_guard if memory_guard is not None else probe_memory_guard()
        self.base_env = dict(base_env) if base_env is not None else default_base_env()
        self._running: dict[str, _Running] = {}
        self._found: set[tuple[str, str]] = set()
        self._setpriv: str | None = None  # found at the first container with a securityContext
        self._staging = str(self.root_dir / "mnt")
        self.hidden_paths = hidden_from_pods(self.root_dir, hidden_paths)
        """Host paths a container in a mount namespace does not see (`hidden_from_pods`)."""
        self.cluster_records: ClusterRecords | None = None
        """Set by the node agent: keeps the DNS lines of the pods' hosts files current (`kjobs.node.poddns`)."""
        self.pod_api = ""
        """Set by the node agent: `HOST:PORT` of the API server this node's pods reach with their ServiceAccount
        token (`KUBERNETES_SERVICE_HOST`/`PORT`, the `kube-api-access-*` volume); empty: none reachable."""
        if mount_volumes is None:
            mount_volumes = os.environ.get(MOUNT_VOLUMES_ENV, "1").strip().lower() not in _OFF
        self._mount_volumes: bool | None = None if mount_volumes else False  # None: probed at the first pod asking
        self._loop: asyncio.AbstractEventLoop | None = None
        self.handlers = HandlerRunner(self)
        """Probes and lifecycle hooks (`kjobs.node.handlerrunner`)."""
        self._spawner = SpawnerPool(
            shims=shims,
            base_env=self.base_env,
            procs_dir=self.procs_root,
            journal_dir=self.journal_dir,
            agent_id=self._me,
            on_started=self._started,
            on_failed=self._failed_to_start,
            on_exited=self._exited,
            die_with_agent=containers_die_with_agent,
            log_max_size=log_max_size,
            log_max_files=log_max_files,
            pods_dir=self.root_dir / "pods",
        )
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass  # made outside an event loop: the shim starts with the first container
        else:
            self._spawner.start()  # a node agent starting: its shim comes up while the rest of the cluster does

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop the runtime's timers and tasks run on (known once a pod is admitted)."""
        return self._loop

    def _pre_stop(self, record: PodRecord, attempt: Attempt, timeout: float, done: Callable[[], None]) -> bool:
        return self.handlers.pre_stop(record, attempt, timeout, done)

    # -- ContainerRuntime ----------------------------------------------------------------------------------
    async def run_pod(self, pod: Obj) -> PodHandle:
        """Admit the pod and start its first containers."""
        self._loop = asyncio.get_running_loop()
        return self.admit(pod)

    async def kill_pod(self, uid: str, *, grace_seconds: float, reason: KillReason | None = None) -> None:
        """SIGTERM the pod's process groups, SIGKILL them after `grace_seconds`."""
        self._loop = asyncio.get_running_loop()
        self.request_kill(uid, grace_seconds=grace_seconds, reason=reason)

    def logs(
        self,
        uid: str,
        container: str,
        *,
        follow: bool = False,
        tail_lines: int | None = None,
        previous: bool = False,
        limit_bytes: int | None = None,
        timestamps: bool = False,
        since_seconds: int | None = None,
        since_time: float | None = None,
    ) -> AsyncIterator[bytes]:
        """The chosen attempt's log file, tailed and optionally followed until the attempt exits."""
        attempt = self.log_attempt(uid, container, previous=previous)
        path = attempt_log_path(self.log_dir, uid, container, attempt.number)
        return read_log(
            path,
            tail_lines=tail_lines,
            limit_bytes=limit_bytes,
            follow=follow,
            finished=lambda: not attempt.running,
            timestamps=timestamps,
            since=self.log_since(since_seconds, since_time),
        )

    def ended_logs(
        self,
        uid: str,
        container: str,
        *,
        tail_lines: int | None = None,
        previous: bool = False,
        limit_bytes: int | None = None,
        timestamps: bool = False,
        since_seconds: int | None = None,
        since_time: float | None = None,
    ) -> AsyncIterator[bytes] | None:
        """The log a container of a pod this runtime does not run left on the node (the pod ended before this
        agent started, as after `kjobs up` restarts), or None when it left none (it never started).

        A kubelet that restarts still serves the logs of its pods' exited containers: the runtime keeps them,
        and their files under /var/log/pods stay until the pod is deleted (pkg/kubelet/kuberuntime,
        `GetContainerLogs`). The newest attempt is the current one, the one before it `--previous`.
        """
        prefix = attempt_log_name(uid, container, 0)[: -len("0.log")]
        numbers = sorted(
            int(name[len(prefix) : -len(".log")])
            for name in os.listdir(self.log_dir)
            if name.startswith(prefix) and name.endswith(".log") and name[len(prefix) : -len(".log")].isdigit()
        )
        if not numbers:
            return None
        if previous and len(numbers) < 2:
            return None
        number = numbers[-2] if previous else numbers[-1]
        return read_log(
            attempt_log_path(self.log_dir, uid, container, number),
            tail_lines=tail_lines,
            limit_bytes=limit_bytes,
            timestamps=timestamps,
            since=self.log_since(since_seconds, since_time),
        )

    def attach_log(self, uid: str, container: str) -> tuple[Path, Callable[[], bool]]:
        """What `kubectl attach` follows (`kjobs.node.attach`): the running container's log file and whether it
        has exited; the kubelet's `container not found ("c")` when it does not run."""
        running = next(
            (r for r in self._running.values() if r.uid == uid and r.attempt.container == container and r.pid),
            None,
        )
        if running is None:
            raise UpgradeFailed(f"container not found ({go_quote(container)})")
        attempt = running.attempt
        return attempt_log_path(self.log_dir, uid, container, attempt.number), lambda: not attempt.running

    def attach_replay(self, uid: str, container: str) -> bool:
        """Whether this attach is the first to a running `stdinOnce` container, and so starts at its log's
        beginning (`kjobs.node.attach`); later ones start at the attach."""
        running = next(
            (r for r in self._running.values() if r.uid == uid and r.attempt.container == container and r.pid),
            None,
        )
        if running is None or not running.replay:
            return False
        running.replay = False
        return True

    def attach_stdin(self, uid: str, container: str) -> AttachStdin | None:
        """The running container's stdin for an attach, or None when its spec asks for none (`stdin: false`)."""
        running = next(
            (r for r in self._running.values() if r.uid == uid and r.attempt.container == container and r.pid),
            None,
        )
        return running.stdin if running is not None else None

    def attach_terminal(self, uid: str, container: str) -> Callable[[int, int], None] | None:
        """What sizes the running container's terminal (width, height), or None when it has none (`tty: false`).
        One adopted from a previous agent is sized through that agent's shim, which holds its terminal."""
        running = next(
            (r for r in self._running.values() if r.uid == uid and r.attempt.container == container and r.pid),
            None,
        )
        if running is None or not running.tty:
            return None
        container_id = running.attempt.container_id
        adopted = self._adopted.get(container_id)
        if adopted is not None:
            control = self._controls.get(adopted[0].shim)
            if control is None:
                return None
            return lambda width, height: control.resize(container_id, width, height)
        return lambda width, height: self._spawner.resize(container_id, width, height)

    def exec_spec(self, uid: str, container: str, command: list[str]) -> ExecSpec:
        """How `kubectl exec` runs `command` in the pod's running `container` (`kjobs.node.execution`): with what
        the container was started with; the kubelet's `container not found ("c")` when it does not run."""
        running = next(
            (r for r in self._running.values() if r.uid == uid and r.attempt.container == container and r.pid),
            None,
        )
        if running is None or running.pid is None:
            raise UpgradeFailed(f"container not found ({go_quote(container)})")
        env = running.env
        if env is None:  # adopted from a previous agent: the environment its spec gives now
            record = self.records[uid]
            spec_container = find_container(record.pod, container) or {}
            try:
                services = self.service_env(record.pod) if self.service_env is not None else None
                env = container_env(
                    record.pod, spec_container, host_ip=self.host_ip, pod_ip=self.pod_ip, services=services
                )
            except ConfigError as exc:
                raise ExecFailed(str(exc)) from None
            env = {"HOSTNAME": record.pod["metadata"].get("name", ""), **(services or {}), **env}
        full_env = {**self.base_env, **env}
        cwd = running.cwd or str(self.pod_dir(uid))
        cgroup = list(running.placement.argv_prefix) if running.placement is not None else []
        enter = self._enter_prefix(running.pid)
        return ExecSpec(
            argv=[*cgroup, *enter, *running.prefix, *command],
            env=full_env,
            cwd=cwd,
            command=list(command),
            groups=running.execs,
            in_view=bool(enter),
        )

    def _enter_prefix(self, pid: int) -> list[str]:
        """The `nsenter` prefix that runs an exec in the container's mount namespace (and user namespace, when
        it has one of its own), rooted and in its working directory as the container is; none when it shares
        this process's (a container without volumeMounts)."""
        if _same_namespace(pid, "mnt"):
            return []
        nsenter = shutil.which("nsenter") or "nsenter"
        argv = [nsenter, f"--target={pid}", "--mount"]
        if not _same_namespace(pid, "uts"):
            argv.append("--uts")  # the pod's hostname
        if not _same_namespace(pid, "user"):
            argv += ["--user", "--preserve-credentials"]
        # `--wd=DIR` would open DIR in this process's view, before entering: the target's working directory is
        # the container's (its entry point chdir'd there), as util-linux 2.38 has no `--wdns`.
        return [*argv, "--root", "--wd"]

    def forget(self, uid: str) -> None:
        """Drop the pod's records and remove its directory."""
        record = self.records.get(uid)
        super().forget(uid)
        if self.cluster_records is not None:
            self.cluster_records.release(uid)
        # Paths as text: a run forgets a thousand pods at its stop, and Path joins cost more than the syscalls.
        pod_dir = f"{self._pods_dir_text}/{uid}"
        try:
            os.rmdir(pod_dir)  # the common case: containers left nothing behind
        except FileNotFoundError:
            pass
        except OSError:
            shutil.rmtree(pod_dir, ignore_errors=True)
        if record is None:
            paths = [str(path) for path in pod_log_paths(self.log_dir, uid)]
        else:
            paths = [
                f"{self._log_dir_text}/{attempt_log_name(uid, name, attempt.number)}"
                for name, attempts in record.attempts.items()
                for attempt in attempts[-2:]
            ]
        if uid in self._logs_kept:
            self._logs_kept[uid].extend(paths)
            return
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)

    def keep_logs(self, uid: str) -> None:
        """Leave the pod's log files when it is forgotten, until `release_logs`: `kjobs run --logs` reads the log
        of a pod once it has ended, and on a busy machine the Job controller may have deleted the pod (and this
        node removed its files) first. A reader of the API gets no such promise: the kubelet too removes the
        logs of a deleted pod."""
        self._logs_kept.setdefault(uid, [])

    def release_logs(self, uid: str) -> None:
        """End `keep_logs`: remove the files a `forget` since then left."""
        for path in self._logs_kept.pop(uid, ()):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)

    def pod_process_groups(self, uid: str) -> set[int]:
        """The process groups of the pod's running containers and of the commands `kubectl exec` started in them
        (`kjobs.node.portforward`: whose listeners a port-forward reaches)."""
        groups: set[int] = set()
        for r in self._running.values():
            if r.uid == uid and r.pid is not None:
                groups.add(r.pid)
                groups.update(r.execs)
        return groups

    def container_pids(self) -> dict[str, dict[str, int]]:
        """The main process of each running container: pod uid -> container -> pid (its process group's id too)."""
        result: dict[str, dict[str, int]] = {}
        for r in self._running.values():
            if r.pid is not None:
                result.setdefault(r.uid, {})[r.attempt.container] = r.pid
        return result

    def memory_usage(self) -> dict[str, dict[str, int]]:
        """Resident memory of each running container's process group: pod uid -> container -> bytes."""
        running = [r for r in self._running.values() if r.pid is not None]
        usage = read_group_rss({r.pid for r in running if r.pid is not None})
        result: dict[str, dict[str, int]] = {}
        for r in running:
            result.setdefault(r.uid, {})[r.attempt.container] = usage.get(r.pid or 0, 0)
        return result

    async def shutdown(self, *, forget: bool = False) -> None:
        """Kill every pod at once (no restarts), wait (bounded) until all are reaped, release cgroups; with
        `forget`, also remove every pod's files (as `forget` does), while the shim exits."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        for uid in list(self.records):
            self.request_kill(uid, grace_seconds=0, exact=True)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _SHUTDOWN_WAIT_SECONDS
        while self._running and loop.time() < deadline:
            await asyncio.sleep(0.01)
        for container_id, running in list(self._running.items()):  # pragma: no cover - only if reaping hung
            if running.pid is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(running.pid, signals.SIGKILL)
            self._exited(container_id, -signals.SIGKILL)
        self.handlers.close()
        self._spawner.close(wait=False)
        if forget:
            for uid in list(self.records):
                self.forget(uid)
        self._spawner.wait_closed()
        self.memory_guard.close()
        # What previous agents left that this one neither adopted nor stopped yet ends with it: the journals
        # naming it are removed next, and no later agent would find it.
        self._kill_recovered([item for found in self._recovered.values() for item in found] + self._stopping)
        for journal in self._journals:  # all it started was stopped: nothing is left to adopt
            adoption.remove(journal)
        self._journals, self._recovered = [], {}
        for control in self._controls.values():
            control.close()
        self._controls.clear()

    # -- adoption (see `kjobs.node.adoption`) ----------------------------------------------------------------
    def adopt(self, pod: Obj) -> PodHandle | None:
        """Admit a pod a previous agent ran here, with its containers as the journals say: running ones adopted
        (their end is read from the journal), ended ones as they ended, lost ones `ContainerStatusUnknown`."""
        uid = str(pod.get("metadata", {}).get("uid", ""))
        found = self._recovered.pop(uid, None)
        if not found or uid in self.records:
            return None
        self._loop = asyncio.get_running_loop()
        attempts: dict[str, list[Attempt]] = {}
        for journal, recorded in sorted(found, key=lambda item: item[1].number):
            attempt = Attempt(
                container=recorded.container,
                number=recorded.number,
                container_id=recorded.container_id,
                started_at=recorded.reported_start,
            )
            attempts.setdefault(recorded.container, []).append(attempt)
            if recorded.running:  # its shim lives (else `scan` found it lost): its end will be journaled
                running = _Running(uid=uid, attempt=attempt, pid=recorded.pid, placement=None)
                spec = find_container(pod, recorded.container) or {}
                if spec.get("tty") is True:  # its shim holds the terminal: input and resizes go through it
                    control = self._controls.setdefault(journal.shim, adoption.ShimControl(journal.shim))
                    running.tty = True
                    if spec.get("stdin") is True:
                        running.stdin = TerminalStdin(partial(control.type_in, recorded.container_id))
                self._running[recorded.container_id] = running
                self._adopted[recorded.container_id] = (journal, recorded)
            else:
                self._settle(attempt, recorded)
        handle = self.admit(pod, attempts=attempts)
        record = self.records[uid]
        for runs in attempts.values():
            if runs[-1].running and runs[-1].container_id in self._adopted:
                # The kubelet's probe workers start anew with it: liveness probes again at once, readiness reads
                # not ready until its probe's first success (prober_manager.go `UpdatePodStatus`).
                spec = find_container(pod, runs[-1].container) or {}
                runs[-1].probe_ready = not runnable_probe(spec.get("readinessProbe"))
                self.handlers.started(record, runs[-1])
        self._poll_adopted()
        hosts = f"{self._pods_dir_text}/{uid}/etc-hosts"
        if self.cluster_records is not None and os.path.exists(hosts):  # its containers still read this file
            with contextlib.suppress(OSError, ValueError):
                self._ensure_hosts_file(self.records[uid], self.pod_dir(uid))
        return handle

    def release_unclaimed(self, uids: set[str]) -> None:
        """Kill what previous agents started for pods that are not bound here any more (deleted meanwhile, bound
        to another node, or another pod of the same name), and remove the journals of gone shims that name none
        of the pods that are (nothing in them is needed)."""
        for uid in [u for u in self._recovered if u not in uids]:
            self.stop_recovered(uid, 0)
        for journal in list(self._journals):
            needed = any(r.uid in uids for r in journal.containers.values())
            if not needed and not adoption.shim_alive(journal):
                adoption.remove(journal)
                self._journals.remove(journal)
        if self.owns_root:
            self.remove_orphaned_files(uids)

    def remove_orphaned_files(self, uids: set[str]) -> list[str]:
        """Remove the working directories and log files of pods that are neither in `uids` (bound here) nor run
        by this runtime: a pod deleted while no agent ran here (or between its deletion and `forget`, when
        `kjobs up` was killed) leaves them, and nothing would ever name them again. The kubelet's housekeeping
        does the same (`cleanupOrphanedPodDirs`, pkg/kubelet/kubelet_volumes.go; the container GC's
        `evictPodLogsDirectories`, pkg/kubelet/kuberuntime/kuberuntime_gc.go). Returns the uids removed."""
        known = uids | self.records.keys() | self._logs_kept.keys()
        removed: set[str] = set()
        with contextlib.suppress(FileNotFoundError):
            for name in os.listdir(self._pods_dir_text):
                if name not in known:
                    shutil.rmtree(f"{self._pods_dir_text}/{name}", ignore_errors=True)
                    removed.add(name)
        with contextlib.suppress(FileNotFoundError):
            for name in os.listdir(self._log_dir_text):
                uid = name.partition("_")[0]
                if uid not in known:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(f"{self._log_dir_text}/{name}")
                    removed.add(uid)
        if removed:
            log.info("removed the files of %d pods no longer on this node", len(removed))
        return sorted(removed)

    def stop_recovered(self, uid: str, grace_seconds: float) -> None:
        """Stop what previous agents left running for a pod this agent will not run nor adopt: its process groups
        get SIGTERM (their first processes, as `kjobs.node.stopsignal` sends it) and, `grace_seconds` later
        (at least `minimum_grace_seconds`, as the kubelet's `killContainer` gives), SIGKILL; with 0, SIGKILL at once.
        Once its containers are reaped, a shim with
        nothing left exits (`kjobs.node.shim`)."""
        found = self._recovered.pop(uid, None) or []
        live = [
            (journal, recorded)
            for journal, recorded in found
            if adoption.still_ours(journal, recorded, self.procs_root)
        ]
        if not live:
            return
        if grace_seconds <= 0:
            self._kill_recovered(live)
            return
        for _, recorded in live:  # as a container's init (the pod's spec is not known here)
            stopsignal.send(recorded.pid, -1, signals.SIGTERM, stopsignal.INIT)
        self._stopping.extend(live)
        self._call_later(max(grace_seconds, self.minimum_grace_seconds), partial(self._kill_recovered, live))

    def _kill_recovered(self, found: list[tuple[adoption.Journal, adoption.Recorded]]) -> None:
        """SIGKILL the process groups of `found` that still run as the journals recorded them."""
        for item in found:
            journal, recorded = item
            if item in self._stopping:
                self._stopping.remove(item)
            if adoption.still_ours(journal, recorded, self.procs_root):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(recorded.pid, signals.SIGKILL)

    def _settle(self, attempt: Attempt, recorded: adoption.Recorded) -> None:
        """Fill in how a journaled attempt ended: as it did, or lost."""
        if recorded.start_error:
            self._start_error(attempt, recorded.start_error)
            return
        if recorded.returncode is not None and recorded.finished_at is not None:
            exit_code, signum = _exit_status(recorded.returncode)
            attempt.finished_at, attempt.exit_code, attempt.signal = recorded.finished_at, exit_code, signum
            return
        attempt.finished_at = self.clock.now()
        attempt.exit_code = UNKNOWN_EXIT_CODE
        attempt.reason = CONTAINER_STATUS_UNKNOWN
        attempt.message = UNKNOWN_MESSAGE

    def _poll_adopted(self) -> None:
        """Read the journals of adopted containers' shims: report the ends they journaled; containers of a shim
        that died without journaling their end are lost (and their processes killed, as `leftovers` does)."""
        if self._polling:
            return
        for journal in {id(j): j for j, _ in self._adopted.values()}.values():
            alive = adoption.shim_alive(journal)
            for recorded in adoption.read_new(journal):
                if recorded.container_id in self._adopted:
                    self._adopted_ended(recorded)
            if not alive:
                leftovers.kill_leftovers(self.procs_root)
                lost = adoption.mark_lost(journal)
                adoption.kill_lost(journal, lost)
                for recorded in lost:
                    if recorded.container_id in self._adopted:
                        self._adopted_ended(recorded)
        if self._adopted:
            self._polling = True
            self._call_later(ADOPTED_POLL_SECONDS, self._poll_again)

    def _poll_again(self) -> None:
        self._polling = False
        self._poll_adopted()

    def _adopted_ended(self, recorded: adoption.Recorded) -> None:
        ended = self._adopted.pop(recorded.container_id, None)
        if ended is not None and not any(j.shim == ended[0].shim for j, _ in self._adopted.values()):
            control = self._controls.pop(ended[0].shim, None)
            if control is not None:
                control.close()
        running = self._running.pop(recorded.container_id, None)
        if running is None:
            return
        _end_execs(running)
        self._settle(running.attempt, recorded)
        self.sync(running.uid)

    # -- Supervisor hooks ----------------------------------------------------------------------------------
    def pod_dir(self, uid: str) -> Path:
        """The pod's scratch directory: its containers' default working directory."""
        return self.root_dir / "pods" / uid

    # -- volumes (see `kjobs.node.volumesetup` and `kjobs.node.mountns`) -----------------------------------
    @property
    def mounts_volumes(self) -> bool:
        """Whether containers with volumeMounts get their volumes (probed once, at the first pod that asks)."""
        if self._mount_volumes is None:
            os.makedirs(self._staging, mode=0o700, exist_ok=True)
            self._mount_volumes = probe_mount_namespaces(self._staging)
        return self._mount_volumes

    def supports_recursive_read_only(self) -> bool:
        """Whether read-only volumes can be mounted recursively read-only here: volumes are mounted at all, in a
        mount namespace where `mount_setattr(2)` works (probed with `mounts_volumes`)."""
        return self.mounts_volumes and probe_recursive_read_only(self._staging)

    def prepare_volumes(self, pod: Obj, sources: EnvSources | None, *, remount: bool = False) -> list[str]:
        """Set up the pod's volumes under its directory before any of its containers starts (the kubelet's
        `WaitForAttachAndMount`), or with `remount` rewrite a running pod's API-data volumes whose contents
        changed; the FailedMount message of each volume that could not be (empty: all ready)."""
        uid = str(pod.get("metadata", {}).get("uid", ""))
        pod_dir = self.pod_dir(uid)
        if not remount:
            # Before the directory exists: a throw-away node's shims remove it if the agent dies, even killed
            # right after making it (docs/orphans.md).
            self._spawner.admitted(uid)
        try:
            pod_dir.mkdir(exist_ok=True)
        except FileNotFoundError:  # the node's root or `pods` removed under it: made again private, as the shim does
            leftovers.private_dirs(str(pod_dir.parent))
            pod_dir.mkdir(exist_ok=True)
        return volumesetup.set_up(pod, pod_dir, sources, host_ip=self.host_ip, pod_ip=self.pod_ip, remount=remount)

    def _mount_prefix(
        self, record: PodRecord, container: Obj, env: dict[str, str], workdir: str
    ) -> tuple[list[str], str]:
        """The `kjobs.node.mountns` prefix that gives a container its volumes, and the file bound at its
        `terminationMessagePath`; `ConfigError` for a bad subPath.

        The termination-message file is made as the kubelet makes it (pkg/kubelet/kuberuntime/
        kuberuntime_container.go `makeMounts`): a new empty file, mode 0666, per container instance under
        `<pod_dir>/containers/<name>/`, bound at the path (default `/dev/termination-log`)."""
        pod_dir = self.pod_dir(record.uid)
        sources = self._env_sources.get(record.uid)
        rro = self.recursive_read_only_mounts(record.pod)
        binds = volumesetup.container_mounts(record.pod, container, pod_dir, env, sources, recursive_read_only=rro)
        message_path = str(container.get("terminationMessagePath") or DEFAULT_TERMINATION_MESSAGE_PATH)
        try:
            directory = pod_dir / "containers" / str(container["name"])
            directory.mkdir(parents=True, exist_ok=True)
            log = directory / random_uuid().replace("-", "")[:8]
            log.touch()
            log.chmod(0o666)
        except OSError as exc:
            raise ConfigError(f"failed to create termination message file: {exc.strerror or exc}") from None
        binds.append(volumesetup.Bind(source=str(log), target=os.path.normpath(message_path), read_only=False))
        spec = record.pod.get("spec") or {}
        hostname: str | None = None
        try:
            if spec.get("hostNetwork") is not True:  # a host-network pod has the node's hostname
                hostname = hostsfile.pod_kernel_hostname(record.pod)
            if not hostsfile.mounts_etc_hosts(container):
                hosts = self._ensure_hosts_file(record, pod_dir)
                binds.insert(0, volumesetup.Bind(source=hosts, target=hostsfile.ETC_HOSTS_PATH, read_only=False))
        except (OSError, ValueError) as exc:
            raise ConfigError(str(exc) if isinstance(exc, ValueError) else f"{exc.strerror or exc}") from None
        plan: dict[str, object] = {
            "root": self._staging,
            "cwd": workdir,
            "hide": self.hidden_paths,
            "keep": [os.path.realpath(pod_dir), os.path.realpath(workdir)],
            # what the node writes in the pod's directory, read-only in the view, so that no symlink put there
            # turns a write or read of the node's onto a file the container cannot reach (docs/security.md)
            "protect": [os.path.realpath(pod_dir / name) for name in PROTECTED_ENTRIES],
            "binds": [
                {
                    "source": b.source,
                    "target": b.target,
                    "readOnly": b.read_only,
                    **({"recursiveReadOnly": True} if b.recursive_read_only else {}),
                    **({"within": b.within} if b.within else {}),
                }
                for b in binds
            ],
        }
        if hostname is not None:
            plan["hostname"] = hostname
        plan["handover"] = HANDOVER_FD
        return [sys.executable, "-I", "-S", _MOUNTNS, json.dumps(plan, separators=(",", ":")), "--"], str(log)

    def _ensure_hosts_file(self, record: PodRecord, pod_dir: Path) -> str:
        """The kubelet's `<pod dir>/etc-hosts` (`ensureHostsFile`), written at each container start as the kubelet
        writes it, with the namespace's cluster DNS lines below (`kjobs.node.poddns`), kept current."""
        path = f"{pod_dir}/etc-hosts"
        pod_ips = [str(p.get("ip")) for p in (record.pod.get("status") or {}).get("podIPs") or () if p.get("ip")]
        base = hostsfile.pod_hosts_file_content(record.pod, pod_ips or [self.pod_ip])
        if self.cluster_records is None:
            hostsfile.write_in_place(path, base)
        else:
            namespace = str(record.pod["metadata"].get("namespace") or "default")
            self.cluster_records.register(record.uid, namespace, path, base)
        return path

    def _call_later(self, delay: float, callback: Callable[[], None]) -> Cancel:
        loop = self._loop or asyncio.get_running_loop()
        return loop.call_later(delay, callback).cancel

    def _abandon(self, attempt: Attempt) -> None:
        """`fail`: SIGKILL the attempt's process; it leaves `_running` first, so its real exit is not reported."""
        if attempt.container_id not in self._running or self._spawner.pid(attempt.container_id) is None:
            raise NotRunning(f"container {attempt.container!r} has not started yet (or was adopted)")
        running = self._running.pop(attempt.container_id)
        self._spawner.signal(attempt.container_id, signals.SIGKILL)
        _end_execs(running)
        if running.placement is not None:
            self.memory_guard.release(running.placement)

    def _signal(self, record: PodRecord, attempt: Attempt, signum: int) -> None:
        """SIGKILL to the container's process group; the stop signal to its first process, as a cluster's runtime
        sends it to the container's init (`kjobs.node.stopsignal`)."""
        scope = stopsignal.scope_of(record.pod.get("spec") or {}, signum)
        adopted = self._adopted.get(attempt.container_id)
        if adopted is not None:
            if adoption.still_ours(*adopted, self.procs_root):
                stopsignal.send(adopted[1].pid, -1, signum, scope)
        elif attempt.container_id in self._running:
            self._spawner.signal(attempt.container_id, signum, scope)

    def _spawn(self, record: PodRecord, container: Obj, number: int, env: dict[str, str], argv: list[str]) -> Attempt:
        # A pod without a securityContext (the common case) pays two dict lookups per container here.
        run_as = security.run_as(record.pod, container)
        prefix = self._run_as_prefix(run_as) if run_as is not None else []
        name = str(container["name"])
        now = self.clock.now()
        container_id = f"kjobs://{random_uuid().replace('-', '')}"
        attempt = Attempt(container=name, number=number, container_id=container_id, started_at=now, started=False)
        log_path = f"{self._log_dir_text}/{attempt_log_name(record.uid, name, number)}"
        if number >= 2:
            prune_old_logs(self.log_dir, record.uid, name, number - 1)
        own_network = hostsfile.wants_own_network(record.pod)
        own_env = {
            "HOSTNAME": str(record.pod.get("spec", {}).get("hostname") or record.pod["metadata"].get("name", ""))
        }
        own_env.update(env)
        if run_as is not None and run_as.home is not None and "HOME" not in env:
            own_env["HOME"] = run_as.home  # as containerd sets it from the user's passwd entry
        custom_workdir = container.get("workingDir")
        # The working directory (the pod's scratch directory unless the container names one) and the log are
        # created by the shim, on its core, before the process starts; nobody reads a log before that.
        workdir = str(custom_workdir) if custom_workdir else f"{self._pods_dir_text}/{record.uid}"
        mount_prefix: list[str] = []
        termination_log = ""
        if (volumesetup.has_mounts(container, bool(self.pod_api)) or own_network) and self.mounts_volumes:
            # The mount namespace's entry point chdirs to the working directory, which may be in a volume: the
            # shim starts it in the pod's directory. A program in a volume is looked up there, not here.
            mount_prefix, termination_log = self._mount_prefix(record, container, env, workdir)
            if own_network and record.pod.get("spec", {}).get("hostNetwork") is not True:
                own_env["HOSTNAME"] = hostsfile.pod_kernel_hostname(record.pod)  # as containerd sets it
            workdir = f"{self._pods_dir_text}/{record.uid}"
            custom_workdir = None
        elif container.get("volumeMounts"):  # none mounted: an `Enabled` one still fails where there is no support
            recursive_read_only.check_container(container, self.recursive_read_only_mounts(record.pod))
        path = own_env.get("PATH", self.base_env.get("PATH", ""))
        if not mount_prefix or not argv or "/" not in argv[0]:
            problem = self._start_problem(container, argv, path, workdir)
        else:
            problem = ""  # a program named by its path may be in a volume: exec'd (or not) in the container's view
        if problem:
            return self._start_error(attempt, problem)
        placement: Placement | None = None
        try:
            limit = memory_limit_bytes(container)
            if limit is not None:
                placement = self.memory_guard.place(attempt.container_id.removeprefix("kjobs://"), limit)
        except OSError as exc:
            return self._start_error(attempt, f"failed to start container process: {exc.strerror or exc}")
        stdin: ContainerStdin | TerminalStdin | None = None
        tty = container.get("tty") is True
        if container.get("stdin") is True and tty:
            container_id = attempt.container_id
            stdin = TerminalStdin(lambda data: self._spawner.type_in(container_id, data))
        elif container.get("stdin") is True:
            stdin_path = f"{self._log_dir_text}/{attempt_log_name(record.uid, name, number)[: -len('.log')]}.stdin"
            try:
                stdin = ContainerStdin(stdin_path, once=container.get("stdinOnce") is True)
            except OSError as exc:
                if placement is not None:
                    self.memory_guard.release(placement)
                return self._start_error(attempt, f"failed to create container stdin: {exc.strerror or exc}")
        # Behind the cgroup trampoline or `mountns` its command runs later: started once they hand over to it.
        wrapped = bool(mount_prefix) or bool(placement is not None and placement.argv_prefix)
        self._running[attempt.container_id] = _Running(
            uid=record.uid,
            attempt=attempt,
            pid=None,
            placement=placement,
            env=own_env,
            cwd=workdir,
            prefix=tuple(prefix),
            stdin=stdin,
            tty=tty,
            termination_log=termination_log,
            replay=container.get("stdin") is True and container.get("stdinOnce") is True,
            wrapped=wrapped,
        )
        if prefix:
            argv = [*prefix, *argv]
        if mount_prefix:
            argv = [*mount_prefix, *argv]
        # The pod's scratch directory belongs to the user its container runs as (a named workingDir is left alone).
        owner = run_as.owner if run_as is not None and not custom_workdir else None
        if placement is not None and placement.argv_prefix:
            cgroup = placement.argv_prefix_before_wrapper() if mount_prefix else placement.argv_prefix
            argv = [*cgroup, *argv]
        self._spawner.spawn(
            attempt.container_id,
            argv,
            own_env,
            workdir,
            log_path,
            (record.uid, name, number),
            owner=owner,
            started_at=now,
            stdin=stdin.path if isinstance(stdin, ContainerStdin) else None,
            tty=tty,
            handover=wrapped,
        )
        return attempt

    def _run_as_prefix(self, run_as: security.RunAs) -> list[str]:
        """The `setpriv` prefix that gives a container its securityContext (see `kjobs.node.security`)."""
        if self._setpriv is None:
            self._setpriv = security.setpriv_path()
            if self._setpriv is None:
                raise ConfigError("securityContext cannot be applied: setpriv (util-linux) is not installed")
        return run_as.argv(self._setpriv)

    # -- the shim's reports ----------------------------------------------------------------------------------
    def _started(self, container_id: str, pid: int) -> None:
        running = self._running.get(container_id)
        if running is None:
            return
        running.pid = pid
        if running.wrapped:  # its command runs from now on (`startedAt`, as a runtime's task start time)
            running.attempt.started_at = self.clock.now()
            self._spawner.started_at(container_id, running.attempt.started_at)  # before any status carries it
        if running.placement is not None:
            self.memory_guard.attach(running.placement, pid)
        if self.start_report_delay <= 0:
            self._report_started(container_id)
        else:
            self._call_later(self.start_report_delay, lambda: self._report_started(container_id))

    def _report_started(self, container_id: str) -> None:
        """The container reads Running from now on, unless its exit was reported first (then it read its end)."""
        running = self._running.get(container_id)
        if running is None or running.attempt.started:
            return
        record = self.records.get(running.uid)
        then = partial(self._confirm_started, container_id)
        if record is not None and self.handlers.post_start(record, running.attempt, then):
            return  # it reads as being created until its postStart hook has run
        then()

    def _confirm_started(self, container_id: str) -> None:
        running = self._running.get(container_id)
        if running is None or running.attempt.started:
            return
        running.attempt.started = True
        record = self.records.get(running.uid)
        if record is not None:
            self.handlers.started(record, running.attempt)
        self.sync(running.uid)

    def _failed_to_start(self, container_id: str, message: str) -> None:
        running = self._running.pop(container_id, None)
        if running is None:
            return
        if running.placement is not None:
            self.memory_guard.release(running.placement)
        if running.stdin is not None:
            running.stdin.close()
        self.handlers.ended(running.attempt)
        self._start_error(running.attempt, message)
        self.exited(running.uid, running.attempt, exit_code=START_ERROR_EXIT_CODE, signal=None, oom=False)

    def _exited(self, container_id: str, returncode: int) -> None:
        running = self._running.pop(container_id, None)
        if running is None:
            return
        _end_execs(running)
        self.handlers.ended(running.attempt)
        if running.stdin is not None:
            running.stdin.close()
        oom = False
        if running.placement is not None:
            oom = self.memory_guard.oom_killed(running.placement)
            self.memory_guard.release(running.placement)
        exit_code, signum = _exit_status(returncode)
        running.attempt.started = True  # it ran (a start and an exit may arrive together)
        if not self._message_from_file(running) and exit_code != 0:
            self._message_from_log(running.uid, running.attempt)
        self.exited(running.uid, running.attempt, exit_code=exit_code, signal=signum, oom=oom)

    def _message_from_file(self, running: _Running) -> bool:
        """What a container in a mount namespace wrote to its `terminationMessagePath`, its last 4,096 bytes, is
        its termination message, whatever its exit code (pkg/kubelet/kuberuntime/kuberuntime_container.go
        `getTerminationMessage`, `MaxContainerTerminationMessageLength`); True when there was one (then the log
        is not read for `FallbackToLogsOnError`)."""
        if not running.termination_log:
            return False
        try:  # not through a symlink or into a FIFO put in its place: the file is in the pod's working directory
            fd = os.open(running.termination_log, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            with open(fd, "rb") as file:
                info = os.fstat(file.fileno())
                if not stat.S_ISREG(info.st_mode):
                    return False
                size = info.st_size
                file.seek(max(0, size - MAX_TERMINATION_MESSAGE_BYTES))
                data = file.read(MAX_TERMINATION_MESSAGE_BYTES)
        except OSError:
            return False
        if not data:
            return False
        text = data.decode("utf-8", "replace")
        attempt = running.attempt
        attempt.message = f"{attempt.message}: {text}" if attempt.message else text
        return True

    def _message_from_log(self, uid: str, attempt: Attempt) -> None:
        """`terminationMessagePolicy: FallbackToLogsOnError`: a container that failed says why with the end of
        its log (`kjobs.node.logs.fallback_message`), unless it wrote a message to its `terminationMessagePath`
        (only a container in a mount namespace of its own can: `_message_from_file`)."""
        record = self.records.get(uid)
        container = find_container(record.pod, attempt.container) if record is not None else None
        if container is None or container.get("terminationMessagePolicy") != "FallbackToLogsOnError":
            return
        path = attempt_log_path(self.log_dir, uid, attempt.container, attempt.number)
        try:
            with open(path, "rb") as log:
                log.seek(tail_offset(path, TERMINATION_MESSAGE_LOG_LINES))
                data = log.read()
        except OSError:
            return
        text = fallback_message(render(data))
        if text:
            attempt.message = f"{attempt.message}: {text}" if attempt.message else text

    def _start_problem(self, container: Obj, argv: list[str], path: str, workdir: str) -> str:
        if not argv:
            return (
                f'no command specified: container "{container["name"]}" has no command and the entrypoint of '
                f'image "{container.get("image", "")}" is not available to the local runtime'
            )
        program = argv[0]
        if "/" in program:
            target = Path(workdir) / program  # an absolute program ignores workdir
            found = os.access(target, os.X_OK) and not target.is_dir()
        else:
            # Found once, a command is not looked up again for every start (a program removed since fails
            # at exec, with the same StartError); a missing one is looked up each time.
            found = (program, path) in self._found or shutil.which(program, path=path) is not None
            if found:
                self._found.add((program, path))
        if not found:
            where = "executable file not found in $PATH" if "/" not in program else "no such file or directory"
            return f'failed to start container process: exec: "{program}": {where}'
        return ""

    def _start_error(self, attempt: Attempt, message: str) -> Attempt:
        attempt.started = True  # settled: it ended before it began
        attempt.finished_at = attempt.started_at
        attempt.exit_code = START_ERROR_EXIT_CODE
        attempt.reason = START_ERROR
        attempt.message = message
        return attempt


def _end_execs(running: _Running) -> None:
    """Kill what `kubectl exec` started in a container that ended."""
    for pgid in running.execs:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signals.SIGKILL)
    running.execs.clear()


def _exit_status(returncode: int) -> tuple[int, int | None]:
    """(exit code, signal) from a return code in Python's form (negative: killed by that signal)."""
    return (128 - returncode, -returncode) if returncode < 0 else (returncode, None)
