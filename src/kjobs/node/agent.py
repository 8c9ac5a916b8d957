"""`NodeAgent`: the kubelet of kjobs — one per node, between the API and a `ContainerRuntime`.

Design note: the agent owns the conversation with the API about its node; the runtime owns processes and
computes every pod status (`supervisor`/`podstatus`). The agent
- registers its Node (creating it, or adopting one that exists: labels merged, spec kept), renews the Lease
  `kube-node-lease/<node>` every 10 s and posts the Node status (conditions with heartbeat) every 10 s;
- watches pods with `spec.nodeName=<node>` and its own Node; each pod event and each runtime status change
  queues the pod's key on one de-duplicating `WorkQueue`, so a burst of changes becomes one status write;
- `_sync` decides per pod: admit and start it, pass a newer version to the runtime, kill it when it has a
  deletionTimestamp, write the runtime's status when it changed (strategic merge on `status`), and once a
  deleted pod's processes are gone and its terminal status is written, finish the deletion with a DELETE
  (grace 0, precondition uid) as the kubelet's status manager does;
- adopts the containers a killed predecessor left, running or ended, as its runtime found them (`adoption`);
  reports pods it knows nothing of but that ran before as lost (`recovery`), never reruns them;
- evicts under memory pressure (`eviction`, one pod per monitoring interval) and shuts the node down
  gracefully on request (`shutdown`).
Time comes from the injected clock, so heartbeats, eviction and grace periods all run in virtual time in tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections import ChainMap
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kjobs.api.errors import ApiError
from kjobs.api.storage import pod_claim_names
from kjobs.api.taints import NO_SCHEDULE, TAINT_MEMORY_PRESSURE, taints_of, with_taints
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.events import EventRecorder
from kjobs.client.informer import Informer, Key
from kjobs.client.resources import LEASES, NODES, PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, PODS, SERVICES
from kjobs.client.workqueue import WorkQueue
from kjobs.clock import Clock, tick
from kjobs.node import nodestatus
from kjobs.node.admission import Load, LoadBook, Rejection, admit, pod_requests, shortfalls
from kjobs.node.configsources import ConfigSources
from kjobs.node.envvars import (
    EnvSources,
    env_references,
    kubernetes_service_env,
    service_ip_set,
    service_link_env,
)
from kjobs.node.eviction import (
    DEFAULT_THRESHOLD,
    EVICTED,
    IMMEDIATE_EVICTION_GRACE_SECONDS,
    MemoryMonitor,
    ProcMemoryMonitor,
    Threshold,
    eviction_grace_seconds,
    eviction_message,
    is_critical,
    rank_for_memory_pressure,
    threshold_met,
)
from kjobs.node.handlers import NOT_RUN, not_run, not_run_message
from kjobs.node.observations import CRITICAL_POD_PREEMPTION, NODE_SHUTDOWN, KillReason, PodRecord, eviction
from kjobs.node.poddns import ClusterRecords
from kjobs.node.podstatus import TERMINAL_PHASES, compute_pod_status, equal_by_kubelet
from kjobs.node.preemption import (
    PREEMPTING_MESSAGE,
    PREEMPTING_REASON,
    UNEXPECTED_REASON,
    NoPodsToPreempt,
    pods_to_preempt,
    subtract,
    unexpected_admission_message,
)
from kjobs.node.recovery import lost_pod_status, ran_before
from kjobs.node.recursive_read_only import runtime_handlers
from kjobs.node.resync import requires_refresh, resync_delay, token_jitter
from kjobs.node.runtime import ContainerRuntime, PodHandle, StatusCallback
from kjobs.node.security import NOT_ENFORCED, unenforced, unenforced_message
from kjobs.node.shutdown import (
    DEFAULT_SHUTDOWN_GRACE_SECONDS,
    SHUTDOWN_ANNOTATION,
    PriorityGrace,
    group_by_priority,
    rejected_status,
    shutdown_grace_seconds,
    shutdown_groups,
    shutdown_requested,
)
from kjobs.node.supervisor import deletion_grace_seconds
from kjobs.node.volumes import NOT_MOUNTED, unmounted, unmounted_message
from kjobs.node.volumesetup import (
    CLAIM,
    FAILED_MOUNT,
    TOKEN,
    api_data_volumes,
    mounting_containers,
    token_keys,
    unsupported,
    unsupported_message,
    volume_references,
)

if TYPE_CHECKING:
    from kjobs.node.kubeletapi import Answer
    from kjobs.node.logserver import LogServer
    from kjobs.node.usage import AgentUsage

log = logging.getLogger(__name__)

TokenSource = Callable[[str, str, Obj], Awaitable[Obj]]
"""(namespace, ServiceAccount, TokenRequest) -> the created TokenRequest (`ApiService.create_token`'s object)."""
ContainerEvents = Callable[[Obj, str, str, str, str], None]
"""(pod, type, reason, message, container) of an event about one of a pod's containers."""

NODE_LEASE_NAMESPACE = "kube-node-lease"
COMPONENT = "kubelet"
MEMORY_PRESSURE_TAINT: Obj = {"key": TAINT_MEMORY_PRESSURE, "effect": NO_SCHEDULE}
CLAIM_RETRY_INTERVAL = 1.0
"""Seconds between a waiting pod's checks of its claims."""
PREEMPTION_RETRY_INTERVAL = 0.5
"""Seconds between a critical pod's admission attempts while the pods it preempted stop."""
_SHUTDOWN_STATUS_MARGIN = 10.0
"""Seconds a shutdown waits, after the last group's period, for the killed pods' final statuses to be written."""
_OWNED_STATUS_KEYS = ("reason", "message")
MOUNT_RETRY_INITIAL = 0.5
MOUNT_RETRY_CAP = 122.0
"""The volume manager's retry back-off: pkg/util/goroutinemap/exponentialbackoff `initialDurationBeforeRetry`
and `maxDurationBeforeRetry` (2 m 2 s)."""
"""Status keys the agent removes (with null) when a newer status no longer has them."""


@dataclass(frozen=True)
class NodeAgentSettings:
    """The kubelet knobs kjobs honours (names follow KubeletConfiguration)."""

    node_status_update_frequency: float = 10.0
    node_lease_duration_seconds: int = 40
    node_lease_renew_interval: float = 10.0
    """The kubelet renews at a quarter of the lease duration (10 s for 40 s)."""
    eviction_hard: str = DEFAULT_THRESHOLD
    eviction_monitoring_interval: float = 10.0
    eviction_pressure_transition_period: float = 300.0
    eviction_soft: str = ""
    """A soft threshold (`memory.available<1Gi`; empty: none), acted on once met for `eviction_soft_grace_period`."""
    eviction_soft_grace_period: str = ""
    """`memory.available=1m30s`: how long the soft threshold must hold before a pod is evicted for it."""
    eviction_max_pod_grace_period: float = 0.0
    """The longest grace period a soft-threshold eviction gives a pod (`evictionMaxPodGracePeriod`)."""
    shutdown_grace_period: float = DEFAULT_SHUTDOWN_GRACE_SECONDS
    shutdown_grace_period_critical_pods: float = 0.0
    """Of `shutdown_grace_period`, the seconds kept for critical pods (priority 2000000000 and up), killed after
    the others (`shutdownGracePeriodCriticalPods`)."""
    shutdown_grace_period_by_pod_priority: tuple[PriorityGrace, ...] = ()
    """Priority groups with their own periods, replacing the two above when given
    (`shutdownGracePeriodByPodPriority`)."""
    event_record_qps: float = 50.0
    """Event writes a second (0: no limit), as the kubelet's `eventRecordQPS`; `event_burst` above it."""
    event_burst: int = 100
    address: str = "127.0.0.1"
    workers: int = 4
    max_pods: int | None = None
    """The kubelet's `maxPods` (`--max-pods`): pods this node admits, its capacity and allocatable `pods`
    (None: the machine's, 110 unless `machine` says otherwise)."""
    pod_api: str = ""
    """`HOST:PORT` where this node's pods reach the API server (`kjobs up`'s listen address): their
    `KUBERNETES_SERVICE_HOST`/`PORT`, and the server whose tokens fill their `serviceAccountToken` projections.
    Empty: no API server is reachable by pods (`kjobs run`, `kjobs simulate`, tests), so the `kube-api-access-*`
    volume is not mounted and no token is requested."""
    log_port: int | None = None
    """Serve container logs over HTTP on this port of `address` (0: any free port; None: do not serve)."""
    log_client_ca: bytes | None = None
    """The cluster CA (PEM): with it the log endpoint serves HTTPS and answers only client certificates it signed
    (`kjobs.node.logserver`); without it, plain HTTP open to anyone who can reach `address`."""
    machine: nodestatus.MachineInfo | None = None
    """Machine facts for the Node; probed from this machine when None."""
    labels: dict[str, str] = field(default_factory=dict)
    container_log_max_size: int = 10 * 1024 * 1024
    container_log_max_files: int = 5
    """The kubelet's `containerLogMaxSize` (10Mi; 0 or less: no rotation) and `containerLogMaxFiles`: a
    container's log is rotated past that size, and at most that many files kept (`kjobs.node.shim`)."""
    sync_frequency: float = 60.0
    """The kubelet's `syncFrequency` (1 minute): how often a running pod is synced again even when nothing about
    it changed; what brings its mounted ConfigMaps, Secrets and projections up to date (`_remount_volumes`), and
    when a failed token refresh is tried again. Jittered by up to half, as the pod worker's requeue is
    (`kjobs.node.resync.resync_delay`): 60 to 90 s by default."""
    config_retry_interval: float = 10.0
    """How long a container waiting for a ConfigMap or Secret (`CreateContainerConfigError`) waits before its
    references are read again: the kubelet's pod worker retries a failed sync after `backOffPeriod`, 10 s."""
    forget_pods_on_stop: bool = False
    """Remove every pod's files (scratch directory, logs) when the agent stops: for `kjobs run`, whose API lives
    in memory and goes with it, so that nothing could ever read them again."""


def status_patch(api_status: Obj, status: Obj, last_written: Obj) -> Obj:
    """The strategic-merge body that makes the API's status `status`, as the status manager's patch does: the
    keys and conditions that differ from `api_status` (the agent's view of the API's).

    Strategic merge keeps keys the patch omits, so keys the agent wrote that the new status no longer has
    (`reason`/`message`) and stale keys of the conditions the kubelet owns are sent as null; conditions
    others own and keys others set (`nominatedNodeName`, a controller's `reason`) are left alone.
    """
    # Like the status manager's two-way patch, only what differs from the API's status: a key the patch omits
    # keeps its value, which is already the one wanted (picked in one pass over the status, in its order).
    body: Obj = {}
    for key, value in status.items():
        if key == "conditions" or value is None or api_status.get(key) != value:
            body[key] = value
    if last_written:
        for key in _OWNED_STATUS_KEYS:  # only what this agent wrote: a controller's reason on a pod it failed stays
            if key in last_written and key not in status:
                body[key] = None
    before: dict[str, set[str]] = {}
    for source in (api_status, last_written):
        for condition in source.get("conditions") or []:
            before.setdefault(str(condition.get("type")), set()).update(condition)
    in_api = {str(c.get("type")): c for c in api_status.get("conditions") or [] if isinstance(c, dict)}
    conditions = []
    wanted = []
    for condition in status.get("conditions") or []:
        kind = condition.get("type")
        wanted.append(kind)
        named = str(kind)
        known = before.get(named)
        stale = known.difference(condition) if known else None
        if stale:
            conditions.append({**condition, **dict.fromkeys(sorted(stale))})
        elif in_api.get(named) != condition:
            conditions.append(condition)
    if conditions:
        body["conditions"] = conditions
        # The status manager's two-way patch orders the list as the kubelet's status has it (the conditions
        # others own first, then its own, PodScheduled last); a merge alone would keep the API's order, with the
        # scheduler's PodScheduled first. Sent when the merge would not give that order.
        kept = set(wanted)
        merged = []  # the order a merge gives: loops, not two comprehensions (each a call on this Python)
        for t in in_api:
            if t in kept:
                merged.append(t)
        for t in wanted:
            if t not in in_api:
                merged.append(t)
        if merged != wanted:
            body["$setElementOrder/conditions"] = [{"type": t} for t in wanted]
    else:
        body.pop("conditions", None)
    return body


def container_path(pod: Obj, name: str) -> str:
    """Where a container is in its pod, as the kubelet's events about it name it (`involvedObject.fieldPath`,
    `kubectl get events -o wide`'s SUBOBJECT): `spec.containers{NAME}`, else `spec.initContainers{NAME}`, else
    `spec.ephemeralContainers{NAME}` (pkg/kubelet/container/ref.go `fieldPath`)."""
    spec = pod.get("spec") or {}
    for field_name in ("containers", "initContainers", "ephemeralContainers"):
        if any(c.get("name") == name for c in spec.get(field_name) or []):
            return f"spec.{field_name}{{{name}}}"
    return ""


def backoff_message(pod: Obj, container: str) -> str:
    """The kubelet's BackOff event: `Back-off restarting failed container C in pod NAME_NS(UID)`."""
    meta = pod.get("metadata") or {}
    pod_ref = f"{meta.get('name', '')}_{meta.get('namespace', '')}({meta.get('uid', '')})"
    return f"Back-off restarting failed container {container} in pod {pod_ref}"


def _statuses(status: Obj) -> list[Obj]:
    """Every container status of a pod status: init, regular and ephemeral (`kubectl debug`'s) containers, each
    of which the kubelet starts with the same `startContainer` and stops with the same `killContainer`, and so
    records the same events about (pkg/kubelet/kuberuntime/kuberuntime_manager.go `SyncPod`)."""
    return [
        *(status.get("initContainerStatuses") or []),
        *(status.get("containerStatuses") or []),
        *(status.get("ephemeralContainerStatuses") or []),
    ]


def _restarts(status: Obj, name: str) -> int:
    """A container's restartCount in a pod status (0 if it has none yet)."""
    for cs in _statuses(status):
        if cs.get("name") == name:
            return int(cs.get("restartCount") or 0)
    return 0


def _ids(pod: Obj) -> set[str]:
    """The container IDs a pod's API status names (the containers some agent already reported)."""
    status = pod.get("status") or {}
    return {str(cs.get("containerID")) for cs in _statuses(status) if cs.get("containerID")}


def _key(pod: Obj) -> Key:
    meta = pod.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _uid(pod: Obj) -> str:
    return str((pod.get("metadata") or {}).get("uid") or "")


def _waits_for_config(status: Obj) -> bool:
    """Whether a container of the pod waits with `CreateContainerConfigError`."""
    for group in ("initContainerStatuses", "containerStatuses"):
        for cs in status.get(group) or ():
            if ((cs.get("state") or {}).get("waiting") or {}).get("reason") == "CreateContainerConfigError":
                return True
    return False


def _ended_containers(status: Obj) -> dict[str, int]:
    """Container name -> restartCount of each container whose state is terminated."""
    return {
        str(cs.get("name")): cs.get("restartCount") or 0
        for key in ("initContainerStatuses", "containerStatuses")
        for cs in status.get(key) or ()
        if "terminated" in (cs.get("state") or {})
    }


def _exit_lost(exited: Obj, newest: Obj) -> bool:
    """Whether `newest` no longer shows an exit `exited` shows: the container has run again and, since, ended
    too (waiting in back-off with the newer exit as lastState) or restarted more than once. The kubelet writes
    the status of each sync, so every exit of an instantly failing container is seen (state terminated, then
    lastState); the runtime reports both runs before this agent's write, which takes only the newest."""
    counts = {
        str(cs.get("name")): (cs.get("restartCount") or 0, "running" in (cs.get("state") or {}))
        for key in ("initContainerStatuses", "containerStatuses")
        for cs in newest.get(key) or ()
    }
    for name, count in _ended_containers(exited).items():
        now, running = counts.get(name, (count, False))
        if now > count + 1 or (now == count + 1 and not running):
            return True
    return False


def _expiry(answer: Obj) -> float | None:
    """A TokenRequest answer's `status.expirationTimestamp` (the requested lifetime, not the extended one), in
    epoch seconds: after it the kubelet's token manager counts the token expired (token_manager.go `expired`)."""
    from kjobs.api.timeutil import parse_time

    try:
        return parse_time(str((answer.get("status") or {}).get("expirationTimestamp") or ""))
    except ValueError:
        return None


def _written_meta(pod: Obj) -> Obj:
    """What of a running pod its downward-API volume files can show and an update can change."""
    meta = pod.get("metadata") or {}
    return {"labels": meta.get("labels") or {}, "annotations": meta.get("annotations") or {}}


def _deleting(pod: Obj) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def _phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


class NodeAgent:
    """Runs the pods bound to node `name` through a container runtime; see the module note."""

    coalesce_syncs = True
    """Leave out the syncs that would do nothing (see `_settled` and `_on_runtime_status`); False queues every
    pod event and runtime status change, as before (the tests compare the two)."""

    def __init__(
        self,
        client: Client,
        *,
        name: str,
        clock: Clock,
        runtime: ContainerRuntime | None = None,
        runtime_factory: Callable[[StatusCallback], ContainerRuntime] | None = None,
        settings: NodeAgentSettings | None = None,
        memory_monitor: MemoryMonitor | None = None,
        tokens: TokenSource | None = None,
        rng: random.Random | None = None,
    ) -> None:
        """`tokens`: how the agent creates a pod's ServiceAccount tokens (`serviceaccounts/NAME/token`), with
        `settings.pod_api` set. `rng`: the random source of the resync and token-refresh jitter (`resync`); a
        test in virtual time gives a seeded or fixed one."""
        if (runtime is None) == (runtime_factory is None):
            raise ValueError("give exactly one of runtime and runtime_factory")
        self.client = client
        self.name = name
        self.clock = clock
        self.settings = settings or NodeAgentSettings()
        self.rng = rng or random.Random()
        self.threshold = Threshold.parse(self.settings.eviction_hard)
        self.soft_threshold = (
            Threshold.parse_soft(self.settings.eviction_soft, self.settings.eviction_soft_grace_period)
            if self.settings.eviction_soft
            else None
        )
        if runtime_factory is not None:
            self.runtime: ContainerRuntime = runtime_factory(self._on_runtime_status)
        else:
            assert runtime is not None
            self.runtime = runtime
            if hasattr(runtime, "on_status"):
                runtime.on_status = self._on_runtime_status  # the Supervisor's callback attribute
        self.machine = self.settings.machine or nodestatus.MachineInfo.probe()
        if self.settings.max_pods is not None:
            self.machine = replace(self.machine, max_pods=self.settings.max_pods)
        # Both are fixed for the agent's life, and admission reads them for every pod.
        self._reserved = self.threshold.bytes_for(self.machine.memory_bytes)
        self._allocatable = nodestatus.allocatable(self.machine, memory_reserved_bytes=self._reserved)
        self.memory_monitor: MemoryMonitor = memory_monitor or ProcMemoryMonitor(usage=self._runtime_usage)
        self.events = EventRecorder(
            client,
            component=COMPONENT,
            clock=clock,
            host=name,
            qps=self.settings.event_record_qps,
            burst=self.settings.event_burst,
        )
        self.pods = Informer(client, PODS, field_selector=f"spec.nodeName={name}", clock=clock)
        self.node_informer = Informer(client, NODES, field_selector=f"metadata.name={name}", clock=clock)
        self.queue: WorkQueue[Key] = WorkQueue(clock=clock)
        self.state = nodestatus.NodeState()
        self.node: Obj = {}
        self._unschedulable = False
        """`spec.unschedulable` as the last status update saw it (for NodeSchedulable/NodeNotSchedulable)."""
        self._uid_of: dict[Key, str] = {}
        self._key_of: dict[str, Key] = {}
        self._ended: dict[Key, str] = {}
        """Pods found ended (no agent of this session ran them): their files are removed with them."""
        self._live: dict[str, Key] = {}
        """Pods admitted and not yet in their final phase (what admission and eviction look at)."""
        self._requests: dict[str, dict[str, int]] = {}  # per admitted pod uid, for admission
        self._load = LoadBook()
        """What the pods of `_live` whose handle is not final take (admission's `Load`, kept as they change)."""
        self._written: dict[str, Obj] = {}
        # Keys whose sync runs and has not reached its status write: True once the runtime reported a change
        # meanwhile (that write will carry it, see `_on_runtime_status`).
        self._before_publish: dict[Key, bool] = {}
        self._exit_seen: dict[str, Obj] = {}
        """Per pod uid, the runtime's newest status that shows a container ended and about to start again: written
        before a newer status that no longer shows that exit (see `_exit_lost`)."""
        self._announced: dict[str, set[str]] = {}
        self._starts: dict[str, dict[str, int]] = {}  # uid -> container -> starts announced (restartCount + 1)
        self._killing: set[str] = set()
        self._finishing: set[str] = set()
        self._env_refs: dict[str, frozenset[tuple[str, str]]] = {}
        self._claim_volumes: dict[str, dict[tuple[str, str], Obj | None]] = {}  # see `_bound_volumes`
        """Per admitted pod uid, the ConfigMaps and Secrets its containers read (only pods that read any)."""
        self._remount: dict[str, tuple[float, Obj | None]] = {}
        """Per running pod with configMap, secret, downwardAPI or projected volumes: when its periodic remount is
        due, and the labels and annotations its downward-API files were last written from (`_remount_volumes`)."""
        self._config_retry: dict[str, float] = {}
        """Per pod of `_env_refs` whose container waits with CreateContainerConfigError, when it is tried again."""
        self._mount_waiting: dict[Key, tuple[str, float, float, float]] = {}
        """Pods whose volumes could not be set up yet: key -> (uid, first seen waiting, the delay after the next
        failure, when the next set-up is due)."""
        self.config_sources = ConfigSources(client, clock=clock)
        self.cluster_records = ClusterRecords(client, clock=clock)
        """Headless Services' DNS names in the hosts files of this node's pods (`kjobs.node.poddns`)."""
        if hasattr(self.runtime, "cluster_records"):  # the process runtime writes hosts files; others do not
            setattr(self.runtime, "cluster_records", self.cluster_records)  # noqa: B010
        self.tokens = tokens
        self.api_access = bool(self.settings.pod_api) and tokens is not None
        """Whether this node's pods reach an API server: their `kube-api-access-*` volumes are mounted."""
        if self.api_access and hasattr(self.runtime, "pod_api"):
            setattr(self.runtime, "pod_api", self.settings.pod_api)  # noqa: B010
        self._kubernetes_env = kubernetes_service_env(self.settings.pod_api) if self.api_access else {}
        """The `kubernetes` Service's variables every container gets (pointed at the API server itself)."""
        self.services: Informer | None = None
        """Every Service, as the kubelet's service lister has them: the service-link variables of containers
        (`_service_env`). Only for a runtime that starts processes (the simulated one reads no environment)."""
        if hasattr(self.runtime, "on_event"):  # probe and hook events (`kjobs.node.handlerrunner`)
            setattr(self.runtime, "on_event", self._container_event)  # noqa: B010
        self.container_events: ContainerEvents | None = None
        """Also told of each container event (`kjobs run`, which records no Events, says why a probe killed a
        container from them: `kjobs.progress.RunView.container_event`)."""
        if hasattr(self.runtime, "pod_api") and hasattr(self.runtime, "service_env"):
            self.services = Informer(client, SERVICES, clock=clock)
            setattr(self.runtime, "service_env", self._service_env)  # noqa: B010
        """Watches of what the pods of `_env_refs` read, so that each container start reads current values."""
        self._pressure_seen_at: float | None = None
        self._soft_met_since: float | None = None
        self._watched_node: Obj | None = None
        """The Node as last watched (a user's `kubectl label node` or taint included): what admission checks."""
        self._shutdown_task: asyncio.Task[None] | None = None
        self._handlers: list[Obj] | None = None
        """The Node's `runtimeHandlers` once the runtime said (`_runtime_handlers`)."""
        self._handlers_probe: asyncio.Task[None] | None = None
        self._registered = asyncio.Event()
        self._changed = asyncio.Event()
        self._kubelet_usage: AgentUsage | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._running = False
        self.log_server: LogServer | None = None

    # ----------------------------------------------------------------------------------------- lifecycle

    async def start(self, *, registered: bool = False) -> None:
        """Serve logs, register the Node (unless `registered`: the caller did, after `serve_logs`) and its Lease,
        relist this node's pods, then run workers and heartbeats. Once registered, an API server that goes away
        stops nothing: the first Lease is retried by the heartbeat loop (the kubelet's lease controller retries as
        well, pkg/kubelet/nodelease's `ensureLease`), and the informers relist until it answers again."""
        await self.serve_logs()
        self.events.event(self._node_ref(), "Normal", "Starting", "Starting kubelet.")
        if not registered:
            await self.register()
        try:
            await self.renew_lease()
        except Exception as exc:  # refused, disconnected, 5xx: the heartbeat loop renews it in 10 s
            log.warning("node %s: creating its Lease failed, retrying with the next heartbeat: %s", self.name, exc)
        self.pods.add_handler(self._on_pod)
        self.node_informer.add_handler(self._on_node)
        self.pods.start()
        self.node_informer.start()
        waits = [self.pods.synced.wait(), self.node_informer.synced.wait()]
        if self.services is not None:  # the kubelet builds no environment before its Services were listed once
            self.services.start()
            waits.append(self.services.synced.wait())
        await asyncio.gather(*waits)
        # What a previous agent started for pods deleted while no agent ran is stopped, as the kubelet's
        # housekeeping stops containers of pods it is no longer bound to.
        self.runtime.release_unclaimed({_uid(pod) for pod in self.pods.list()})
        loop = asyncio.get_running_loop()
        self._running = True
        self._tasks = [
            loop.create_task(self._worker(), name=f"node-{self.name}-worker-{i}") for i in range(self.settings.workers)
        ]
        self._tasks.append(loop.create_task(self._every(self.settings.node_lease_renew_interval, self.renew_lease)))
        self._tasks.append(loop.create_task(self._every(self.settings.node_status_update_frequency, self.post_status)))
        self._tasks.append(loop.create_task(self._every(self.settings.eviction_monitoring_interval, self.check_memory)))
        drive = getattr(self.runtime, "drive", None)
        if callable(drive):  # the simulated runtime runs its virtual-time events as a task
            self._tasks.append(loop.create_task(drive(), name=f"node-{self.name}-runtime"))

    async def serve_logs(self) -> None:
        """Start the log endpoint (`settings.log_port`), once: its port goes into the Node that `register` writes
        (`daemonEndpoints`), so it is up before the first registration."""
        if self.settings.log_port is None or self.log_server is not None:
            return
        from kjobs.node.logserver import LogServer, serving_context  # aiohttp: only for agents serving logs

        ca, address = self.settings.log_client_ca, self.settings.address
        self.log_server = LogServer(
            self.runtime,
            uid_of=self._uid_of_pod,
            host=address,
            port=self.settings.log_port,
            ssl_context=serving_context(ca, node=self.name, address=address) if ca is not None else None,
            kubelet=self._kubelet_answer,
        )
        await self.log_server.start()

    def _kubelet_answer(self, method: str, path: str) -> Answer | None:
        """The kubelet endpoints besides the logs (`kjobs.node.kubeletapi`), for `nodes/{name}/proxy`."""
        from kjobs.node import kubeletapi
        from kjobs.node.usage import AgentUsage

        if self._kubelet_usage is None:
            self._kubelet_usage = AgentUsage({self.name: self})
            if callable(getattr(self.runtime, "container_pids", None)):
                self._kubelet_usage.prime()
        return kubeletapi.answer(self, self._kubelet_usage, method, path)

    async def stop(self) -> None:
        """Stop watching and working, then stop every container (statuses are reported by the next agent)."""
        self._running = False
        self.queue.shutdown()
        tasks = self._tasks + ([self._shutdown_task] if self._shutdown_task else [])
        if self._handlers_probe is not None:
            tasks.append(self._handlers_probe)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        await self.pods.stop()
        await self.node_informer.stop()
        if self.services is not None:
            await self.services.stop()
        await self.config_sources.stop()
        await self.cluster_records.stop()
        if self.log_server is not None:
            await self.log_server.stop()
        with contextlib.suppress(Exception):
            # Forgetting removes each pod's files; the runtime does it while its shim exits.
            await self.runtime.shutdown(forget=self.settings.forget_pods_on_stop)
        await self.events.shutdown()

    async def _every(self, interval: float, action: Callable[[], Any]) -> None:
        while True:
            await tick(self.clock, interval)
            try:
                await action()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("node %s: %s failed: %s", self.name, getattr(action, "__name__", action), exc)

    # ------------------------------------------------------------------------------------ node and lease

    async def register(self) -> None:
        """Create the Node, or adopt the existing one (labels merged, spec and taints kept), and post status."""
        reserved = self._reserved_memory()
        body = nodestatus.new_node(
            self.name,
            self.machine,
            self.state,
            self.clock.now(),
            memory_reserved_bytes=reserved,
            runtime_handlers=self._runtime_handlers(),
        )
        body["metadata"]["labels"].update(self.settings.labels)
        try:
            self.node = await self.client.create(NODES, None, body)
            self._record_node_status([], self.node)
        except ApiError as exc:
            if exc.code != 409:
                raise
            # A fresh agent is a fresh boot: a shutdown request addressed to the previous one is done with.
            meta_patch = {"labels": body["metadata"]["labels"], "annotations": {SHUTDOWN_ANNOTATION: None}}
            self.node = await self.client.patch(NODES, None, self.name, {"metadata": meta_patch})
            if not self.state.memory_pressure:  # the taint is this agent's; a previous one may have left it
                await self._set_taint(MEMORY_PRESSURE_TAINT, False)
        await self.post_status()
        self._registered.set()

    async def post_status(self) -> None:
        """Write the Node's status: capacity, nodeInfo, and conditions with a fresh heartbeat."""
        previous = (self.node.get("status") or {}) if self.node else {}
        status = nodestatus.node_status(
            self.machine,
            self.state,
            self.clock.now(),
            name=self.name,
            previous=previous,
            memory_reserved_bytes=self._reserved_memory(),
            address=self.settings.address,
            kubelet_port=self.log_server.port if self.log_server is not None else 0,
            runtime_handlers=self._runtime_handlers(),
        )
        current = self.node_informer.get("", self.name) or self.node  # as the kubelet, its lister's copy first
        self.node = await self.client.patch(NODES, None, self.name, {"status": status}, subresource="status")
        self._record_node_status(previous.get("conditions") or [], {**current, "status": status})

    def _runtime_handlers(self) -> list[Obj] | None:
        """The Node's `runtimeHandlers`, as the runtime says; None until it has (then the Node has none yet, as a
        kubelet's before its runtime's first status). A runtime that starts processes finds out by a probe (a child
        process, `kjobs.node.mountns --probe`), run off the event loop beside the start-up: its answer is posted
        when it comes, so registration never waits for it."""
        if self._handlers is not None or self._handlers_probe is not None:
            return self._handlers
        supports = getattr(self.runtime, "supports_recursive_read_only", None)
        if supports is None:
            return None
        if not hasattr(self.runtime, "pod_api"):  # nothing to probe (the simulated runtime): known at once
            self._handlers = runtime_handlers(bool(supports()))
            return self._handlers
        self._handlers_probe = asyncio.get_running_loop().create_task(self._probe_handlers(supports))
        return None

    async def _probe_handlers(self, supports: Callable[[], bool]) -> None:
        self._handlers = runtime_handlers(bool(await asyncio.to_thread(supports)))
        await self._registered.wait()  # registration posts its status: this one follows it, never beside it
        if (self.node.get("status") or {}).get("runtimeHandlers") != self._handlers:
            try:
                await self.post_status()
            except Exception as exc:  # the next periodic status carries them
                log.warning("node %s: posting its runtime handlers failed: %s", self.name, exc)

    def _record_node_status(self, before: list[Obj], node: Obj) -> None:
        """The kubelet's node status events: one per condition that changed status since `before`
        (`nodestatus.status_events`), and NodeSchedulable/NodeNotSchedulable when `spec.unschedulable` differs
        from what this agent last saw, as `kubectl cordon`/`uncordon` change it (`recordNodeSchedulableEvent`,
        pkg/kubelet/kubelet_node_status.go, which starts from schedulable)."""
        if not self.events.recording:  # a simulation's: nobody reads them, so nothing is worked out
            return
        after = (node.get("status") or {}).get("conditions") or []
        happened = nodestatus.status_events(before, after)
        unschedulable = bool((node.get("spec") or {}).get("unschedulable"))
        if unschedulable != self._unschedulable:
            self._unschedulable = unschedulable
            happened.append("NodeNotSchedulable" if unschedulable else "NodeSchedulable")
        for event in happened:
            self.events.event(self._node_ref(), "Normal", event, nodestatus.status_event_message(self.name, event))

    async def renew_lease(self) -> None:
        """Create or renew `kube-node-lease/<node>` (holder = node, 40 s, renewTime = now)."""
        renew = nodestatus.micro_time(self.clock.now())
        try:
            await self.client.patch(
                LEASES,
                NODE_LEASE_NAMESPACE,
                self.name,
                {"spec": {"holderIdentity": self.name, "renewTime": renew}},
                patch_type="merge",
            )
            return
        except ApiError as exc:
            if exc.code != 404:
                raise
        owner = []
        node_uid = (self.node.get("metadata") or {}).get("uid")
        if node_uid:
            owner = [{"apiVersion": "v1", "kind": "Node", "name": self.name, "uid": node_uid}]
        lease: Obj = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": NODE_LEASE_NAMESPACE, "ownerReferences": owner},
            "spec": {
                "holderIdentity": self.name,
                "leaseDurationSeconds": self.settings.node_lease_duration_seconds,
                "renewTime": renew,
            },
        }
        try:
            await self.client.create(LEASES, NODE_LEASE_NAMESPACE, lease)
        except ApiError as exc:
            if exc.code != 409:  # 409: created meanwhile, renewed next time
                log.warning("node %s: cannot create its Lease: %s", self.name, exc)

    async def _set_taint(self, taint: Obj, present: bool) -> None:
        for _ in range(5):
            node = await self.client.get(NODES, None, self.name)
            current = taints_of(node)
            wanted = with_taints(current, [taint] if present else [], [] if present else [taint])
            if wanted == current:
                return
            node.setdefault("spec", {})["taints"] = wanted
            try:
                self.node = await self.client.update(NODES, None, node)
                return
            except ApiError as exc:
                if exc.code != 409:
                    raise

    def _on_node(self, old: Obj | None, new: Obj | None) -> None:
        if new is None:
            return
        self._watched_node = new
        if shutdown_requested(new) and self._shutdown_task is None and self._running:
            self._shutdown_task = asyncio.get_running_loop().create_task(self.shutdown_node())

    # ------------------------------------------------------------------------------------------------ pods

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        pod = new or old
        if pod is None:
            return
        if new is None:  # gone: what a previous agent left for it and nothing adopted is killed at once
            self.runtime.stop_recovered(_uid(pod), 0)
        if old is not None and new is not None and self.coalesce_syncs and self._settled(old, new):
            # The runtime keeps the newest version, as the sync would have given it (and holds no older copy).
            self.runtime.update_pod(new)
            return
        self.queue.add(_key(pod))

    def _settled(self, old: Obj, new: Obj) -> bool:
        """Whether an update of a pod leaves its sync nothing to do: the pod ended here and its final status is
        written (most often this is that write coming back, or the Job controller's removal of its tracking
        finalizer), and it is not being deleted. Its sync would pass the new version to a runtime whose pod is
        over (`Supervisor.sync` returns for a terminal handle; `_on_pod` passes it), find the status written and
        stop.

        The kubelet's pod workers likewise coalesce the updates of a pod (`podWorkers.UpdatePod`,
        pkg/kubelet/pod_workers.go) and its status manager skips a status it already wrote
        (`needsUpdate`, pkg/kubelet/status/status_manager.go)."""
        meta = new.get("metadata") or {}  # what `_uid`, `_key` and `_deleting` read, read here once
        uid = str(meta.get("uid") or "")
        if (
            str((old.get("metadata") or {}).get("uid") or "") != uid
            or self._uid_of.get((str(meta.get("namespace") or ""), str(meta.get("name") or ""))) != uid
            or meta.get("deletionTimestamp")
        ):
            return False
        handle = self.runtime.get(uid)
        if handle is None or not handle.terminal or uid in self._env_refs:
            return False
        written = self._written.get(uid)
        return written is not None and (written is handle.status or written == handle.status)

    def _uid_of_pod(self, namespace: str, name: str) -> str | None:
        return self._uid_of.get((namespace, name)) or self._ended.get((namespace, name))

    def _on_runtime_status(self, uid: str, status: Obj) -> None:
        key = self._key_of.get(uid)
        if key is None:
            return
        if status.get("phase") not in TERMINAL_PHASES and _ended_containers(status):
            self._exit_seen[uid] = status
        if key in self._before_publish:
            # Reported inside the pod's own sync before its status write (the runtime started the pod and, for
            # an instant container, ended it): that write takes the runtime's newest status, so the sync that
            # this would queue after it would find nothing to do. `_sync` queues it if it writes nothing, unless the
            # write waits for a start in flight (`_sync_pod`), whose answer queues the sync.
            self._before_publish[key] = True
            return
        self.queue.add(key)

    async def _worker(self) -> None:
        while True:
            key = await self.queue.get()
            if key is None:
                return
            try:
                await self._sync(key)
                self.queue.forget(key)
            except asyncio.CancelledError:
                raise
            except (ApiError, OSError) as exc:  # OSError: the API server is unreachable (e.g. restarting)
                log.info("node %s: sync %s/%s: %s", self.name, key[0], key[1], exc)
                self.queue.add_rate_limited(key)
            except Exception:
                log.exception("node %s: sync %s/%s failed", self.name, key[0], key[1])
                self.queue.add_rate_limited(key)
            finally:
                self.queue.done(key)
                self._changed.set()

    async def _sync(self, key: Key) -> None:
        """Bring one pod's processes and API status in line (see the module note)."""
        if not self.coalesce_syncs:
            await self._sync_pod(key)
            return
        self._before_publish[key] = False
        try:
            await self._sync_pod(key)
        finally:
            if self._before_publish.pop(key, False):  # a change no status write of this sync took: sync again
                self.queue.add(key)

    async def _sync_pod(self, key: Key) -> None:
        pod = self.pods.get(*key)
        waiting = self._mount_waiting.get(key)
        if waiting is not None and (pod is None or _uid(pod) != waiting[0]):  # gone while its volumes were not ready
            del self._mount_waiting[key]
            self._drop_env_sources(waiting[0])
            self.runtime.forget(waiting[0])
        tracked = self._uid_of.get(key)
        if tracked and (pod is None or _uid(pod) != tracked):
            self._release(tracked)
        ended = self._ended.get(key)
        if ended and (pod is None or _uid(pod) != ended):  # the logs it left go with it, as the kubelet's GC does
            del self._ended[key]
            self.runtime.forget(ended)
        if pod is None:
            return
        uid = _uid(pod)
        handle = self.runtime.get(uid)
        if handle is None:
            handle = await self._admit(pod)
            if handle is None:
                return
        else:
            self.runtime.update_pod(pod)
            if uid in self._remount:
                if handle.terminal:
                    del self._remount[uid]
                else:
                    await self._remount_volumes(pod)
        deleting = _deleting(pod)  # the informer's object, never changed: read once
        stop = deleting or _phase(pod) in TERMINAL_PHASES  # a terminal phase in the API is final too
        if stop and not handle.terminal and uid not in self._killing:
            self._killing.add(uid)
            self._record_killing(pod, handle)
            await self.runtime.kill_pod(uid, grace_seconds=deletion_grace_seconds(pod))
        if handle.terminal or not self.runtime.starting(uid):
            # A start in flight is answered within milliseconds, with a status of its own: like the kubelet's
            # status manager, which writes only the latest status, the agent skips the one in between.
            self._before_publish.pop(key, None)  # this write takes what the runtime reported until now
            exited = self._exit_seen.pop(uid, None)
            if exited is not None and _exit_lost(exited, handle.status):
                await self._publish(pod, exited, terminal=False)
            await self._publish(pod, handle.status, terminal=handle.terminal)
        elif uid not in self._remount and uid not in self._env_refs:
            # The write waits for the start's answer (Running, or the container's end): a status change the
            # runtime reports after this sync, which queues the sync that writes it. A sync queued now for what
            # was reported during this one (the admission's Pending) would find the start in flight and do
            # nothing, or run after the answer, whose sync it is. (A pod that remounts volumes or reads
            # ConfigMaps and Secrets keeps that sync: it may re-arm their timers.)
            self._before_publish.pop(key, None)
        if handle.terminal:
            self._live.pop(uid, None)
            self._requests.pop(uid, None)
            self._load.remove(uid)
            if uid in self._env_refs:  # no container of it starts again
                self._drop_env_sources(uid)
        if deleting and handle.terminal and self._written.get(uid, {}).get("phase") in TERMINAL_PHASES:
            await self._finish_deletion(pod)
        if uid in self._env_refs:
            if not handle.terminal and _waits_for_config(handle.status):
                await self._retry_config(pod, handle)
            else:
                self._config_retry.pop(uid, None)

    async def _env_sources(self, pod: Obj, refs: frozenset[tuple[str, str]]) -> EnvSources:
        """The ConfigMaps and Secrets `refs` names in the pod's namespace, as the watches `config_sources` keeps
        for the pod see them now and at every later read (a missing one is None); waits for their first list,
        and a watch that cannot list in time fails this sync, which is retried."""
        sources = self.config_sources.register(_uid(pod), _key(pod)[0], refs)
        await self.config_sources.synced(_uid(pod))
        claimed = self._claim_volumes.get(_uid(pod))
        return sources if claimed is None else ChainMap(claimed, sources)  # type: ignore[arg-type]

    async def _retry_config(self, pod: Obj, handle: PodHandle) -> None:
        """A container waits with `CreateContainerConfigError`: try it again `config_retry_interval` after it
        failed, as the kubelet's pod worker syncs a pod whose sync failed again after its back-off period — not
        at each status change (a restart tried at once would only step its crash-loop back-off)."""
        uid, key = _uid(pod), _key(pod)
        due = self._config_retry.get(uid)
        now = self.clock.now()
        if due is not None and now < due:  # a sync before the retry is due; this also re-arms one woken early
            self.queue.add_after(key, due - now)
            return
        if due is not None:  # the pod's next sync: what is missing may exist now (the watches have it)
            self.runtime.provide_env_sources(uid, await self._env_sources(pod, self._env_refs[uid]))
            if not _waits_for_config(handle.status):
                del self._config_retry[uid]
                return
        self._config_retry[uid] = now + self.settings.config_retry_interval
        self.queue.add_after(key, self.settings.config_retry_interval)

    def _drop_env_sources(self, uid: str) -> None:
        """No container of the pod starts here any more: stop watching what it reads, and forget it."""
        self._claim_volumes.pop(uid, None)
        self._remount.pop(uid, None)
        if self._env_refs.pop(uid, None) is not None:
            self._config_retry.pop(uid, None)
            self.config_sources.release(uid)
            self.runtime.provide_env_sources(uid, None)

    async def _claims_unbound(self, pod: Obj) -> bool:
        """Whether a claim the pod's volumes name is missing or not yet Bound: the kubelet's volume manager
        (`WaitForAttachAndMount`) keeps such a pod from starting, Pending, until the claim is bound."""
        for name in pod_claim_names(pod):
            try:
                claim = await self.client.get(PERSISTENT_VOLUME_CLAIMS, _key(pod)[0], name)
            except ApiError as exc:
                if exc.code == 404:
                    return True
                raise
            if (claim.get("status") or {}).get("phase") != "Bound":
                return True
        return False

    async def _bound_volumes(self, pod: Obj, claims: list[str]) -> dict[tuple[str, str], Obj | None]:
        """The PersistentVolume bound to each of the pod's claims, keyed as `volumesetup.CLAIM` entries of its
        sources (None where the claim or its volume is gone: the set-up then fails with FailedMount)."""
        found: dict[tuple[str, str], Obj | None] = {}
        for name in claims:
            pv: Obj | None = None
            try:
                claim = await self.client.get(PERSISTENT_VOLUME_CLAIMS, _key(pod)[0], name)
                volume = (claim.get("spec") or {}).get("volumeName")
                if volume and (claim.get("status") or {}).get("phase") == "Bound":
                    pv = await self.client.get(PERSISTENT_VOLUMES, "", str(volume))
            except ApiError as exc:
                if exc.code != 404:
                    raise
            found[(CLAIM, name)] = pv
        return found

    async def _admit(self, pod: Obj) -> PodHandle | None:
        """Start a new pod, or settle one this runtime does not run; returns the handle when it runs here."""
        uid = _uid(pod)
        if _phase(pod) in TERMINAL_PHASES:
            # What a previous agent left running for it is stopped, not adopted: the kubelet's pod worker takes a
            # pod terminal in the API as terminating (pod_workers.go `UpdatePod`) and kills its containers.
            self.runtime.stop_recovered(uid, deletion_grace_seconds(pod))
            self._ended[_key(pod)] = uid
            if _deleting(pod):
                await self._finish_deletion(pod)
            return None
        ran, deleting = ran_before(pod), _deleting(pod)  # the pod is the informer's, never changed: read once
        # (a pod whose volumes name no claim does not wait for one: no coroutine to make and await)
        if not ran and not deleting and pod_claim_names(pod) and await self._claims_unbound(pod):
            self.queue.add_after(_key(pod), CLAIM_RETRY_INTERVAL)  # the kubelet's volume manager waits too
            return None
        refs = env_references(pod)
        mounts = mounting_containers(pod, self.api_access) and getattr(self.runtime, "mounts_volumes", False)
        if mounts:  # the ConfigMaps and Secrets its volumes hold are watched with those its env reads
            refs = refs | volume_references(pod, self.api_access)
        claims = pod_claim_names(pod) if mounts else []
        tokens = bool(token_keys(pod)) if mounts and self.api_access else False
        if claims or tokens:  # handed over with them: the volumes bound to its claims, read once (a binding is
            # final), and its tokens (requested as its volumes are set up, `_fetch_tokens`)
            self._claim_volumes[uid] = await self._bound_volumes(pod, claims) if claims else {}
        sources: EnvSources | None = None
        if refs or claims or tokens:  # watched before the runtime needs them: to start the containers, to restart
            # adopted ones
            self._env_refs[uid] = refs
            try:
                sources = await self._env_sources(pod, refs)
            except BaseException:  # not listed in time (retried), or the agent stops: nothing is left watching
                self._drop_env_sources(uid)
                raise
            self.runtime.provide_env_sources(uid, sources)
        adopted = self.runtime.adopt(pod)
        if adopted is not None:
            # Tracked before anything is awaited: the runtime holds its handle from now on, so a retried sync takes
            # it as admitted, and without the tracking the ends of its containers would reach no sync.
            self._track(pod)
            self._counted(adopted)
            if mounts and api_data_volumes(pod):  # brought up to date at its first sync
                self._plan_remount(pod, None)
            if tokens:  # its volume is on disk; a container restarted here mounts it (`volumesetup._skipped`)
                await self._fetch_tokens(pod)
            return adopted
        if ran or deleting:
            self._ended[_key(pod)] = uid
            self._drop_env_sources(uid)
            await self._publish(pod, lost_pod_status(pod, self.clock.now()), terminal=True, announce=False)
            if deleting:
                await self._finish_deletion(pod)
            return None
        rejection = admit(
            pod,
            self._admitted_load(uid),
            self._allocatable,
            memory_pressure=self.state.memory_pressure,
            shutting_down=self.state.shutting_down,
            requests_of=self._requests_of,
            node_labels=self._node_labels(),
            node_name=self.name,
            node_taints=taints_of(self._watched_node or self.node),
        )
        if rejection is not None and rejection.reason.startswith("OutOf") and is_critical(pod):
            rejection = await self._preempt_for(pod)
            if rejection is None:  # admitted once the pods it preempted have stopped
                self.queue.add_after(_key(pod), PREEMPTION_RETRY_INTERVAL)
                return None
        if rejection is not None:
            self._drop_env_sources(uid)
            self.events.event(pod, "Warning", rejection.reason, rejection.message)
            status = rejected_status(pod, rejection.reason, rejection.message)
            await self._publish(pod, status, terminal=True, announce=False)
            return None
        if mounts and not await self._volumes_ready(pod, sources):
            return None
        if mounts and api_data_volumes(pod):
            self._plan_remount(pod, _written_meta(pod))
        self._track(pod)
        not_enforced = unenforced(pod)
        if not_enforced:  # what kjobs cannot honour is said on the pod, not ignored in silence
            self.events.event(pod, "Warning", NOT_ENFORCED, unenforced_message(not_enforced))
        if mounts:
            left_out = unsupported(pod, self.api_access)
            if left_out:
                self.events.event(pod, "Warning", NOT_MOUNTED, unsupported_message(left_out))
        else:
            not_mounted = unmounted(pod)
            if not_mounted:
                self.events.event(pod, "Warning", NOT_MOUNTED, unmounted_message(not_mounted))
        runs_handlers = bool(getattr(self.runtime, "runs_handlers", False))
        handlers = not_run(pod, runs_handlers=runs_handlers)
        if handlers:
            self.events.event(pod, "Warning", NOT_RUN, not_run_message(handlers, runs_handlers=runs_handlers))
        return self._counted(await self.runtime.run_pod(pod))

    async def _preempt_for(self, pod: Obj) -> Rejection | None:
        """The kubelet's critical-pod admission (pkg/kubelet/preemption `HandleAdmissionFailure`): a critical pod
        refused for resources only is not refused; pods are stopped until it fits (None: wait for them). Refused
        for another reason too, it gets that reason; when no set of pods can make room, `UnexpectedAdmissionError`.
        The kubelet blocks its sync loop until the pods are killed; kjobs retries the admission instead, counting
        the pods already being stopped as room to come, so none is stopped twice or in their place."""
        uid = _uid(pod)
        other = admit(
            pod,
            Load(0, {}),
            self._allocatable,
            shutting_down=self.state.shutting_down,
            node_labels=self._node_labels(),
            node_name=self.name,
            node_taints=taints_of(self._watched_node or self.node),
            check_resources=False,
        )
        if other is not None:
            return other
        stopping = [p for p, _ in self._running_pods() if _uid(p) in self._killing]
        needed = subtract(
            shortfalls(pod, self._admitted_load(uid), self._allocatable, self._requests_of), stopping, self._requests_of
        )
        if not needed:
            return None
        candidates = [p for p, _ in self._active() if _uid(p) != uid]
        try:
            victims = pods_to_preempt(pod, candidates, needed, self._requests_of)
        except NoPodsToPreempt as exc:
            return Rejection(UNEXPECTED_REASON, unexpected_admission_message(exc))
        for victim in victims:
            grace = deletion_grace_seconds(victim)
            await self._stop_for_node(victim, PREEMPTING_REASON, PREEMPTING_MESSAGE, grace, CRITICAL_POD_PREEMPTION)
        return None

    async def _volumes_ready(self, pod: Obj, sources: EnvSources | None) -> bool:
        """Set up the pod's volumes before any container starts (the kubelet's `WaitForAttachAndMount`). A volume
        that cannot be (a ConfigMap or Secret not there yet, a hostPath of the wrong type) gets the kubelet's
        `FailedMount` Warning; the pod stays Pending, its containers ContainerCreating, and the set-up is tried
        again with the volume manager's back-off (pkg/volume/util/nestedpendingoperations: 500 ms doubling up to
        2 m 2 s), reading the ConfigMaps and Secrets through the pod's watches."""
        key, uid = _key(pod), _uid(pod)
        now = self.clock.now()
        waiting = self._mount_waiting.get(key)
        if waiting is not None and now < waiting[3]:  # a sync before the retry is due (its own status write)
            self.queue.add_after(key, waiting[3] - now)
            return False
        await self._fetch_tokens(pod)
        failures = self.runtime.prepare_volumes(pod, sources)  # type: ignore[attr-defined]
        if not failures:
            self._mount_waiting.pop(key, None)
            return True
        _, since, delay, _ = waiting or (uid, now, MOUNT_RETRY_INITIAL, now)
        for message in failures:
            self.events.event(pod, "Warning", FAILED_MOUNT, message)
        self._mount_waiting[key] = (uid, since, min(delay * 2, MOUNT_RETRY_CAP), now + delay)
        rro = getattr(self.runtime, "recursive_read_only_mounts", None)
        status = compute_pod_status(
            PodRecord(pod=pod, admitted_at=since),
            now,
            host_ip=self._host_ip(),
            recursive_read_only=bool(rro(pod)) if rro is not None else False,
        )
        for field_name in ("podIP", "podIPs"):  # no sandbox yet: the kubelet creates it once volumes are ready
            status.pop(field_name, None)
        await self._publish(pod, status, terminal=False, announce=False)
        self.queue.add_after(key, delay)
        return False

    async def _fetch_tokens(self, pod: Obj) -> None:
        """The kubelet's token manager for the pod's `serviceAccountToken` projections (pkg/kubelet/token,
        pkg/volume/projected/projected.go): a TokenRequest for its account bound to the pod, with the projection's
        audience (none: the API's) and `expirationSeconds`, for each token not yet had; a failure is kept as the
        set-up's error (`failed to fetch token: ...`) and asked again at the next set-up or remount. A token held
        is asked for again by `_refresh_tokens`, at a remount that finds it due."""
        extra = self._claim_volumes.get(_uid(pod))
        if extra is None or self.tokens is None:
            return
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        account = str(spec.get("serviceAccountName") or "default")
        for key, projection in token_keys(pod):
            held = extra.get((TOKEN, key))
            if held is not None and not held.get("error"):
                continue
            audience = projection.get("audience")
            body: Obj = {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {
                    "audiences": [audience] if audience else [],
                    "expirationSeconds": projection.get("expirationSeconds") or 3600,
                    "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": meta.get("name"), "uid": _uid(pod)},
                },
            }
            try:
                answer = await self.tokens(str(meta.get("namespace") or ""), account, body)
            except ApiError as exc:
                extra[(TOKEN, key)] = {"error": exc.message}
                continue
            except OSError as exc:  # a joined node that cannot reach the API server
                extra[(TOKEN, key)] = {"error": str(exc.strerror or exc)}
                continue
            status = answer.get("status") or {}
            lifetime = int((answer.get("spec") or {}).get("expirationSeconds") or 0)
            extra[(TOKEN, key)] = {
                "token": str(status.get("token") or ""),
                "expires": _expiry(answer),
                "life": lifetime,
            }

    def _tokens_due(self, uid: str) -> list[tuple[str, str]]:
        """The pod's tokens the token manager would ask for again now: those it has none of (a failed request,
        or expired and dropped), and each held one for which `requiresRefresh` says yes, with a jitter drawn for
        this check (token_manager.go; `resync.requires_refresh`)."""
        extra = self._claim_volumes.get(uid) or {}
        now, due = self.clock.now(), []
        for entry in [k for k in extra if k[0] == TOKEN]:
            had = extra[entry] or {}
            expires, life = had.get("expires"), had.get("life")
            if had.get("error") or (
                isinstance(expires, float) and life and requires_refresh(now, expires, life, token_jitter(self.rng))
            ):
                due.append(entry)
        return due

    async def _refresh_tokens(self, pod: Obj) -> None:
        """At a remount of a running pod (its periodic resync, a change of its labels or annotations), ask again
        for the tokens that are due (`_tokens_due`), as the projected volume's set-up does through the kubelet's
        token manager at each sync (`GetServiceAccountToken`): a token is refreshed at the first such sync past
        80 % of its lifetime (or 24 hours) less the jitter, so its file changes then, not at that point. A refresh
        that fails keeps the old token in place while it has not expired ("Couldn't update token") and is tried
        at the next sync; an expired one is an error, and the volume's remount fails with it until a refresh
        succeeds."""
        uid = _uid(pod)
        extra = self._claim_volumes.get(uid)
        if extra is None or self.tokens is None or uid not in self._env_refs:
            return
        now = self.clock.now()
        held = {entry: extra.pop(entry) for entry in self._tokens_due(uid)}
        if not held:
            return
        await self._fetch_tokens(pod)
        key = _key(pod)
        for entry, had in held.items():
            error = (extra.get(entry) or {}).get("error")
            expires = (had or {}).get("expires")
            if not error or (had or {}).get("error") or (isinstance(expires, float) and now > expires):
                # refreshed; or (never had, or expired) the token manager has no token to give, and the projected
                # volume's remount fails with its error (`failed to fetch token: ...`) until a refresh succeeds
                continue
            # GetServiceAccountToken: "Couldn't update token", the old one is kept while it has not expired
            log.warning("pod %s/%s: couldn't update token %s: %s", key[0], key[1], entry[1], error)
            extra[entry] = had

    def _plan_remount(self, pod: Obj, written: Obj | None) -> None:
        """The pod's next periodic remount, `sync_frequency` from now jittered by up to half as the pod worker's
        requeue is (`resync.resync_delay`); `written`: the labels and annotations its volumes now hold (None: not
        known, so its next sync remounts)."""
        delay = resync_delay(self.settings.sync_frequency, self.rng)
        self._remount[_uid(pod)] = (self.clock.now() + delay, written)
        self.queue.add_after(_key(pod), delay)

    async def _remount_volumes(self, pod: Obj) -> None:
        """Bring a running pod's configMap, secret, downwardAPI and projected volumes up to date, as the kubelet's
        volume manager remounts them at each sync of the pod (`WaitForAttachAndMount` → the populator's
        `ReprocessPod` → the reconciler's remount of every volume whose plugin `RequiresRemount`): at its periodic
        resync (`sync_frequency`, what brings ConfigMap and Secret changes the watches saw) and at an update of
        its labels or annotations (what its downward-API files may show). The atomic writer rewrites only what
        changed; a volume that fails (its ConfigMap deleted) keeps its files and gets `FailedMount`, as on a
        cluster. `subPath` mounts bind one file of the old payload and do not change."""
        uid, key = _uid(pod), _key(pod)
        due, written = self._remount[uid]
        now, meta = self.clock.now(), _written_meta(pod)
        if now < due and meta == written:
            self.queue.add_after(key, due - now)  # an earlier sync: the periodic one stays armed
            return
        await self._remount_now(pod)

    async def _remount_now(self, pod: Obj) -> None:
        """Rewrite the pod's API-data volumes that changed (`_remount_volumes`), with its tokens asked for again
        first where due (`_refresh_tokens`); each that fails gets the kubelet's `FailedMount` Warning and keeps
        its files. Its next periodic remount is a period from now."""
        uid = _uid(pod)
        sources: EnvSources | None = None
        if uid in self._env_refs:
            await self._refresh_tokens(pod)
            sources = await self._env_sources(pod, self._env_refs[uid])
        failures = self.runtime.prepare_volumes(pod, sources, remount=True)  # type: ignore[attr-defined]
        for message in failures:
            self.events.event(pod, "Warning", FAILED_MOUNT, message)
        if uid in self._remount:
            self._plan_remount(pod, _written_meta(pod))

    def _service_env(self, pod: Obj) -> Mapping[str, str]:
        """The Services' variables for a container of `pod` starting now (the kubelet's `getServiceEnvVarMap`):
        the `kubernetes` Service's (pointed at the API server, `kubernetes_service_env`) always, and unless the pod
        sets `enableServiceLinks: false`, those of every Service of its namespace with a cluster IP
        (`service_link_env`; a namespace's own `kubernetes` Service replaces the API server's, as there). A
        namespace without Services costs a scan of the cached ones."""
        base = self._kubernetes_env
        services = self.services
        if services is None or not services.cache or (pod.get("spec") or {}).get("enableServiceLinks") is False:
            return base
        namespace = str((pod.get("metadata") or {}).get("namespace") or "")
        found = [
            service
            for service in services.list(namespace)
            if service_ip_set(service)
            and not (namespace == "default" and (service.get("metadata") or {}).get("name") == "kubernetes")
        ]
        if not found:
            return base
        if any((service.get("metadata") or {}).get("name") == "kubernetes" for service in found):
            base = {}
        return {**base, **service_link_env(found)}

    def _host_ip(self) -> str:
        return str(getattr(self.runtime, "host_ip", "127.0.0.1"))

    def _node_labels(self) -> dict[str, str]:
        """This Node's labels for admission: as watched, else as registered (the kubelet reads its node lister)."""
        labels: dict[str, str] = ((self._watched_node or self.node).get("metadata") or {}).get("labels") or {}
        return labels

    def _track(self, pod: Obj) -> None:
        """Remember a pod this agent runs, by key and uid, and count it for admission (runtimes register its
        handle as soon as they are asked to run or adopt it, so it counts from then on, as it always did)."""
        key, uid = _key(pod), _uid(pod)
        self._uid_of[key] = uid
        self._key_of[uid] = key
        self._live[uid] = key
        known = self._requests.get(uid)  # `_requests_of`, with the uid just read
        if known is None:
            known = self._requests[uid] = pod_requests(pod)
        self._load.add(uid, known)

    def _counted(self, handle: PodHandle) -> PodHandle:
        """Stop counting the pod for admission once its handle is final (now, or when it gets there)."""
        if handle.terminal:
            self._load.remove(handle.uid)
        else:
            handle.on_terminal = self._load.remove
        return handle

    def _release(self, uid: str) -> None:
        """The pod object is gone (or replaced): stop what is left of it and forget it."""
        key = self._key_of.pop(uid, None)
        if key is not None and self._uid_of.get(key) == uid:
            del self._uid_of[key]
        self.runtime.forget(uid)
        self._live.pop(uid, None)
        self._requests.pop(uid, None)
        self._load.remove(uid)
        for book in (self._written, self._announced, self._starts, self._exit_seen):
            book.pop(uid, None)
        if uid in self._env_refs:
            self._drop_env_sources(uid)
        self._killing.discard(uid)
        self._finishing.discard(uid)

    async def _publish(self, pod: Obj, status: Obj, *, terminal: bool, announce: bool = True) -> None:
        """Write `status` to the pod's status subresource unless it is what was last written."""
        uid = _uid(pod)
        last = self._written.get(uid)
        if not status or status == last or (last is not None and equal_by_kubelet(last, status)):
            return
        api_status = pod.get("status") or {}
        if terminal is False and _phase(pod) in TERMINAL_PHASES and status.get("phase") not in TERMINAL_PHASES:
            return  # never move a pod out of a terminal phase
        if announce and self.events.recording:  # the announcements are events and nothing else
            self._announce(pod, status)
        body = status_patch(api_status, status, self._written.get(uid) or {})
        if not body:  # the API's status (as this agent sees it) is already the one wanted
            self._written[uid] = status
            return
        namespace, name = _key(pod)
        try:
            # Handed over: a status, once computed, is never changed (each sync computes a new one); the result is
            # not read (the informer sees the pod as written), so an HTTP client need not decode it.
            await self.client.patch(
                PODS, namespace, name, {"status": body}, subresource="status", handover=True, discard=True
            )
        except ApiError as exc:
            if exc.code == 404:
                return
            raise
        self._written[uid] = status
        self._changed.set()

    async def _finish_deletion(self, pod: Obj) -> None:
        uid = _uid(pod)
        if uid in self._finishing:
            return
        self._finishing.add(uid)
        namespace, name = _key(pod)
        try:
            await self.client.delete(PODS, namespace, name, grace_period_seconds=0, preconditions={"uid": uid})
        except ApiError as exc:
            if exc.code not in (404, 409):
                self._finishing.discard(uid)
                raise

    # ---------------------------------------------------------------------------------------------- events

    def _announce(self, pod: Obj, status: Obj) -> None:
        """Pulled/Created/Started (or Failed) events for container attempts not announced before."""
        seen = self._announced.setdefault(_uid(pod), set())
        spec = pod.get("spec") or {}
        specs = {
            c.get("name"): c
            for field_name in ("ephemeralContainers", "initContainers", "containers")
            for c in spec.get(field_name) or []
        }
        for cs in _statuses(status):
            name = str(cs.get("name") or "")
            where = container_path(pod, name)  # every event below is about this container
            waiting = (cs.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") == "CreateContainerConfigError":
                # The kubelet's FailedToCreateContainer event: "Failed", "Error: <why>", once per cause here. The
                # kubelet's startContainer has made sure of the image first (`Pulled`), as for any start.
                config_key = f"config:{cs.get('name')}:{waiting.get('message')}"
                if config_key not in seen:
                    seen.add(config_key)
                    image = str((specs.get(name) or {}).get("image") or cs.get("image") or "")
                    pulled = f'Container image "{image}" already present on machine'
                    self.events.event(pod, "Normal", "Pulled", pulled, field_path=where)
                    self.events.event(
                        pod, "Warning", "Failed", f"Error: {waiting.get('message', '')}", field_path=where
                    )
            if waiting.get("reason") == "CrashLoopBackOff":
                backoff_key = f"backoff:{cs.get('containerID')}"
                if backoff_key not in seen:
                    seen.add(backoff_key)
                    self.events.event(pod, "Warning", "BackOff", backoff_message(pod, name), field_path=where)
            container_id = cs.get("containerID")
            if not container_id or container_id in seen:
                continue
            seen.add(container_id)
            image = str((specs.get(name) or {}).get("image") or cs.get("image") or "")
            pulled = f'Container image "{image}" already present on machine'
            # Attempts that started and ended between two status reports (a fast OnFailure crash loop) were never
            # in a status: the kubelet announces each start as it makes it, so each gets its events here too.
            counted = self._starts.setdefault(_uid(pod), {})
            if name not in counted:
                if container_id in _ids(pod):  # an agent before this one reported it, and announced it
                    counted[name] = _restarts(pod.get("status") or {}, name) + 1
                    continue
                counted[name] = 0
            # The attempt `containerID` names ended as `state.terminated` says, or, waiting to restart, as its
            # `lastState.terminated` does. A start that failed is created, then fails (the kubelet's startContainer,
            # pkg/kubelet/kuberuntime/kuberuntime_container.go): `Failed` "Error: <why>", never `Started`. Starts
            # no status showed are taken to have gone as this one did (the same spec starts the same way).
            state = cs.get("state") or {}
            ended = state.get("terminated") or (
                (cs.get("lastState") or {}).get("terminated") if "waiting" in state else None
            )
            failed = (
                ended.get("message", "") if isinstance(ended, dict) and ended.get("reason") == "StartError" else None
            )
            starts = int(cs.get("restartCount") or 0) + 1
            for _ in range(max(starts - counted[name], 1)):
                self.events.event(pod, "Normal", "Pulled", pulled, field_path=where)
                self.events.event(pod, "Normal", "Created", f"Created container: {name}", field_path=where)
                if failed is None:
                    self.events.event(pod, "Normal", "Started", f"Started container {name}", field_path=where)
                else:
                    self.events.event(pod, "Warning", "Failed", f"Error: {failed}", field_path=where)
            counted[name] = max(counted[name], starts)

    def _container_event(self, pod: Obj, kind: str, reason: str, message: str, container: str) -> None:
        """An event the runtime records about a container (a failed probe or hook, a probe's kill)."""
        self.events.event(pod, kind, reason, message, field_path=container_path(pod, container))
        if self.container_events is not None:
            self.container_events(pod, kind, reason, message, container)

    def _record_killing(self, pod: Obj, handle: PodHandle) -> None:
        for cs in _statuses(handle.status):
            if "running" in (cs.get("state") or {}):
                name = str(cs.get("name") or "")
                where = container_path(pod, name)
                self.events.event(pod, "Normal", "Killing", f"Stopping container {name}", field_path=where)

    # ------------------------------------------------------------------------------------ memory pressure

    def _requests_of(self, pod: Obj) -> dict[str, int]:
        """A pod's requests for admission, computed once per pod (container resources are immutable)."""
        uid = _uid(pod)
        known = self._requests.get(uid)
        if known is None:
            known = self._requests[uid] = pod_requests(pod)
        return known

    def _admitted_load(self, uid: str) -> Load:
        """The pods admitted here, but `uid`, that have not reached their final phase, as admission counts them:
        from the requests remembered at their own admission, with no walk of their objects. A pod whose object
        is gone but whose containers the agent has not yet stopped still counts, as the kubelet's active pods
        include those that could still have running containers."""
        return self._load.without(uid)

    def _running_pods(self) -> list[tuple[Obj, PodHandle]]:
        """Pods admitted here that have not reached their final phase, in a stable order."""
        result = []
        for uid, key in sorted(self._live.items(), key=lambda item: item[1]):
            handle = self.runtime.get(uid)
            pod = self.pods.get(*key)
            if handle is None or pod is None or handle.terminal:
                continue
            result.append((pod, handle))
        return result

    def _active(self) -> list[tuple[Obj, PodHandle]]:
        """Running pods not already being stopped."""
        return [(pod, handle) for pod, handle in self._running_pods() if _uid(pod) not in self._killing]

    def _reserved_memory(self) -> int:
        return self._reserved

    def _runtime_usage(self) -> dict[str, dict[str, int]]:
        usage = getattr(self.runtime, "memory_usage", None)
        return usage() if callable(usage) else {}

    async def check_memory(self) -> None:
        """One eviction-manager pass: observe, update MemoryPressure (and its taint), evict at most one pod.

        MemoryPressure follows every threshold met; a pod is evicted only for a threshold met for its grace
        period, the hard one first (`managerImpl.synchronize`: nodeConditions before thresholdsMetGracePeriod)."""
        observation = self.memory_monitor.observe()
        now = self.clock.now()
        hard_met = threshold_met(self.threshold, observation)
        soft = self.soft_threshold
        soft_met = soft is not None and threshold_met(soft, observation)
        if not soft_met:
            self._soft_met_since = None
        elif self._soft_met_since is None:
            self._soft_met_since = now
        met = hard_met or soft_met
        if met:
            self._pressure_seen_at = now
        pressure = self._pressure_seen_at is not None and (
            met or now - self._pressure_seen_at < self.settings.eviction_pressure_transition_period
        )
        if pressure != self.state.memory_pressure:
            self.state = nodestatus.NodeState(memory_pressure=pressure, shutting_down=self.state.shutting_down)
            await self.post_status()
            await self._set_taint(MEMORY_PRESSURE_TAINT, pressure)
        since = self._soft_met_since
        soft_due = soft is not None and since is not None and now - since >= soft.grace_period
        threshold = self.threshold if hard_met else (soft if soft_due else None)
        if threshold is None:
            return
        self.events.event(self._node_ref(), "Warning", "EvictionThresholdMet", "Attempting to reclaim memory")
        candidates = [(pod, handle) for pod, handle in self._active() if not is_critical(pod)]
        if not candidates:
            return
        ranked = rank_for_memory_pressure([pod for pod, _ in candidates], observation)
        victim = ranked[0]
        message = eviction_message(victim, threshold, observation)
        grace = eviction_grace_seconds(victim, threshold, self.settings.eviction_max_pod_grace_period)
        await self.evict(victim, message, grace_seconds=grace)

    async def evict(self, pod: Obj, message: str, *, grace_seconds: float = IMMEDIATE_EVICTION_GRACE_SECONDS) -> None:
        """Kill `pod` for node pressure: Failed, reason Evicted, DisruptionTarget TerminationByKubelet."""
        await self._stop_for_node(pod, EVICTED, message, grace_seconds, eviction(message))

    async def _stop_for_node(
        self, pod: Obj, event_reason: str, message: str, grace_seconds: float, reason: KillReason
    ) -> None:
        """Kill a running pod the node itself stops (node-pressure eviction, critical-pod preemption), once: a
        Warning event, the Killing record, then the kill whose `reason` gives its status and DisruptionTarget."""
        uid = _uid(pod)
        handle = self.runtime.get(uid)
        if handle is None or handle.terminal or uid in self._killing:
            return
        self._killing.add(uid)
        self.events.event(pod, "Warning", event_reason, message)
        self._record_killing(pod, handle)
        await self.runtime.kill_pod(uid, grace_seconds=grace_seconds, reason=reason)
        self.queue.add(_key(pod))

    def _node_ref(self) -> Obj:
        # The kubelet's node reference: no namespace (its events land in "default"), the node's name as uid.
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": self.name, "uid": self.name}}

    # ------------------------------------------------------------------------------------------- shutdown

    async def shutdown_node(self, *, wait: bool = True) -> None:
        """Graceful node shutdown: Ready=False, then the pods killed by priority group (Failed, Terminated,
        DisruptionTarget), lowest priority first.

        Each group's pods get the group's period (`shutdown_grace_seconds`); the next group is killed once every
        pod of this one has its terminal status written, or the group's period has passed on the agent's clock
        (`podManager.killPods`). Without `wait`, every group is killed at once.
        """
        if not self.state.shutting_down:
            self.state = nodestatus.NodeState(memory_pressure=self.state.memory_pressure, shutting_down=True)
            self.events.event(self._node_ref(), "Normal", "Shutdown", "Shutdown manager detected shutdown event")
            await self.post_status()
        settings = self.settings
        groups = shutdown_groups(
            settings.shutdown_grace_period,
            settings.shutdown_grace_period_critical_pods,
            settings.shutdown_grace_period_by_pod_priority,
        )
        running = self._active()
        handles = {_uid(pod): handle for pod, handle in running}
        killed: list[str] = []

        def stopped(uids: list[str]) -> Callable[[], bool]:
            return lambda: all(
                self._written.get(u, {}).get("phase") in TERMINAL_PHASES or u not in self._key_of for u in uids
            )

        for group, pods in group_by_priority(groups, [pod for pod, _ in running]):
            uids = []
            for pod in pods:
                uid = _uid(pod)
                if handles[uid].terminal or uid in self._killing:  # ended, or evicted, while a group before stopped
                    continue
                self._killing.add(uid)
                self._record_killing(pod, handles[uid])
                grace = shutdown_grace_seconds(pod, group.seconds)
                await self.runtime.kill_pod(uid, grace_seconds=grace, reason=NODE_SHUTDOWN)
                self.queue.add(_key(pod))
                uids.append(uid)
            killed += uids
            if wait and uids:
                await self._wait_until(stopped(uids), timeout=group.seconds)
        if wait:
            # kjobs' margin: the last statuses written before a `kjobs node join` process exits
            await self._wait_until(stopped(killed), timeout=_SHUTDOWN_STATUS_MARGIN)

    async def _wait_until(self, done: Callable[[], bool], *, timeout: float) -> bool:
        deadline = self.clock.now() + timeout
        while not done():
            remaining = deadline - self.clock.now()
            if remaining <= 0:
                return False
            self._changed.clear()
            changed = asyncio.ensure_future(self._changed.wait())
            timer = asyncio.ensure_future(self.clock.sleep(min(remaining, 1.0)))
            try:
                await asyncio.wait((changed, timer), return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()
                timer.cancel()
        return True

    # --------------------------------------------------------------------------------------------- queries

    def handles(self) -> Iterable[PodHandle]:
        """Handles of the pods this agent runs (for log sources and tools)."""
        for uid in list(self._key_of):
            handle = self.runtime.get(uid)
            if handle is not None:
                yield handle

    def status_written(self, uid: str) -> Obj | None:
        """The status last written for pod `uid` (None if none yet)."""
        return self._written.get(uid)

    @property
    def shutting_down(self) -> bool:
        """A graceful shutdown was started."""
        return self.state.shutting_down
