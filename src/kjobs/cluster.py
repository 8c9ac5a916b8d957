"""An embedded cluster: store, API service, every controller and N node agents in one asyncio process.

`kjobs run` and `kjobs up` both assemble their cluster here, so they run the same control plane: the Job
controller, the scheduler, node lifecycle, taint eviction, pod GC, the disruption controller, the garbage
collector, TTL-after-finished, CronJob, and node agents whose pods are local processes. Components talk through
`LocalClient` (no HTTP); `kjobs up` additionally serves the same `ApiService` over HTTP for kubectl.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.events import EventRecorder
from kjobs.client.informer import InformerFactory
from kjobs.client.local import LocalClient
from kjobs.clock import Clock, RealClock, ScaledClock
from kjobs.controllers import CONTROLLER_NAMES, EMBEDDED_CONTROLLERS
from kjobs.controllers.clusterroleaggregation import ClusterRoleAggregationController
from kjobs.controllers.cronjob import CronJobController
from kjobs.controllers.disruption import DisruptionController, DisruptionSettings
from kjobs.controllers.endpoints import EndpointsController, EndpointSliceController
from kjobs.controllers.garbagecollector import GarbageCollector
from kjobs.controllers.job import JobController, JobControllerSettings
from kjobs.controllers.nodelifecycle import NodeLifecycleController, NodeLifecycleSettings
from kjobs.controllers.podgc import PodGCController, PodGCSettings
from kjobs.controllers.resourcequota import ResourceQuotaController
from kjobs.controllers.rootcacertpublisher import RootCACertPublisher
from kjobs.controllers.scheduler import Scheduler, SchedulerSettings
from kjobs.controllers.serviceaccounts import NAME as SERVICE_ACCOUNT_CONTROLLER
from kjobs.controllers.serviceaccounts import ServiceAccountsController
from kjobs.controllers.tainteviction import TaintEvictionController
from kjobs.controllers.ttl import TTLAfterFinishedController
from kjobs.controllers.volumes import PersistentVolumeController, PVCProtectionController, PVProtectionController
from kjobs.gctuning import SERVER_GC_THRESHOLDS as SERVER_GC_THRESHOLDS  # re-exported: its callers' name
from kjobs.gctuning import tune_gc as tune_gc
from kjobs.job.config import SyncConfig
from kjobs.job.metrics import JobMetrics
from kjobs.node.logsource import AgentLogs
from kjobs.node.nodestatus import MachineInfo
from kjobs.node.restart import DEFAULT_BACKOFF_BASE
from kjobs.node.runtime import ContainerRuntime, StatusCallback
from kjobs.server.admission import AdmissionSettings
from kjobs.server.service import NAMESPACES as STANDARD_NAMESPACES
from kjobs.server.service import ApiService

log = logging.getLogger(__name__)


class Component(Protocol):
    """Anything with an async start/stop."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


@dataclass(frozen=True)
class ClusterSettings:
    """What differs between `kjobs run`, `kjobs up` and tests."""

    nodes: int = 1
    node_prefix: str = "kjobs-node"
    pod_failure_backoff: float = 10.0
    job_batch_period: float = 1.0
    container_restart_backoff: float = DEFAULT_BACKOFF_BASE
    """With `runtime="process"`: the node agents' initial crash-loop back-off before a container restarts in place
    (the kubelet's 10 s, doubling up to 5 min; `kjobs.node.restart`)."""
    container_start_report_delay: float | None = None
    """With `runtime="process"`: seconds between a container's process starting and the node agent reading it
    Running, which is also when a sidecar counts as started and the next container may start (None: the
    runtime's `START_REPORT_DELAY`; the kubelet's PLEG relists every second)."""
    containers_die_with_agent: bool = False
    """With `runtime="process"`: a node's shims kill its containers when the agent's process dies without
    stopping them (SIGKILL, `os._exit`), for a test cluster nothing could adopt them from; by default they run on
    for a restarted agent to adopt, as containerd's shims outlive a kubelet."""
    runtime: str = "process"
    """`process` (local processes) or `sim` (`kjobs.node.sim_runtime`: no processes, outcomes from `sim_outcome`)."""
    sim_outcome: Callable[[Any, Any, int], Any] | None = None
    """With `runtime="sim"`: the `OutcomeFn` of every container attempt (default: succeed at once)."""
    root_dir: str | None = None
    owns_root_dir: bool = False
    """Whether no other process runs pods under `root_dir` (`kjobs up`, whose data directory one process holds):
    its nodes then remove the files of pods they find but no longer have (`ProcessRuntime.owns_root`)."""
    storage_dir: str | None = None
    """Where the local-path provisioner makes volume directories (`kjobs up`: `<data-dir>/storage`; None: a
    directory in the temp dir, `kjobs.controllers.volumes`)."""
    node_options: dict[str, Any] = field(default_factory=dict)
    scheduler: SchedulerSettings = field(default_factory=SchedulerSettings)
    node_lifecycle: NodeLifecycleSettings = field(default_factory=NodeLifecycleSettings)
    pod_gc: PodGCSettings = field(default_factory=PodGCSettings)
    disruption: DisruptionSettings = field(default_factory=DisruptionSettings)
    """Per-controller knobs (Kubernetes' defaults unless a caller, usually a test, shortens them)."""
    admission: AdmissionSettings = field(default_factory=AdmissionSettings)
    """The API server's admission flags: whoever builds the cluster's `ApiService` (`create_app`) passes them."""
    controllers: tuple[str, ...] = EMBEDDED_CONTROLLERS
    """The controllers to run (`kjobs up --controllers`); another process may run the rest (`kjobs controller`)."""
    root_ca: str = ""
    """The CA bundle (PEM) the root CA publisher puts in every namespace's `kube-root-ca.crt`: the CA clients
    verify the API server with (`kjobs up`'s `pki/ca.crt`; none over plain http)."""
    hidden_paths: tuple[str, ...] = ()
    """Host paths a pod's container in a mount namespace does not see, beside its node's root directory
    (`kjobs up`: its data directory and the kubeconfig it wrote; `kjobs.node.process_runtime.hidden_from_pods`)."""
    pod_api: str = ""
    """`HOST:PORT` where pods reach the API server with their ServiceAccount tokens (`kjobs up`: its listen
    address, loopback for a wildcard; `kjobs run --serve`: its loopback port; `NodeAgentSettings.pod_api`); empty
    where nothing serves the API to pods."""
    features: FeatureGates = DEFAULT
    """The `--feature-gates` of every component (`kjobs.api.features`); `create_app` takes them too."""
    leader_election: bool = False
    """Whether each controller runs only while it holds its Lease (`kjobs.controllers.leaderelection`), so that
    a second instance pointed at this API server (`kjobs controller`) waits instead of doing the same work. `kjobs
    up` and `kjobs run --serve` turn it on; a cluster nobody else can reach (`kjobs run`, `kjobs simulate`, tests)
    has no one to elect."""
    field_managers: bool = True
    events: bool = True
    """Whether the API records `managedFields` and the components write Events. `kjobs simulate`, and `kjobs run`
    without `--serve`, turn them off: their only reader is a human at a terminal, and
    tests/simulate/test_shortcuts.py and tests/cli/test_run_shortcuts.py show that the Job's status and every
    pod's final state are the same without them (issue #15 item 4). Whoever builds the `ApiService`
    (`kjobs.simulate.session.virtual_cluster`, `kjobs.run._api`) passes them."""
    cronjob_clock_rate: float = 1.0
    """How many times faster than the others' clock the CronJob controller's runs (`kjobs up
    --cronjob-clock-rate`, for tests: at 60 a `*/1 * * * *` schedule fires every wall-clock second). 1: the
    same clock. kube-controller-manager has no such setting; nothing else reads the faster clock."""


SPARSE_GC_THRESHOLD = 1_000_000
"""Net allocations between the cyclic GC's young-generation passes under `sparse_gc`."""

INTERPRETER_FROZEN = gc.get_freeze_count()
"""What the permanent generation held before kjobs froze anything: 0 on CPython 3.11 and 3.13, but CPython 3.12
starts with its statically allocated tuples there (375 on 3.12.1), so "nothing frozen yet" is "no more than this",
not 0 (`sparse_gc`; tests/cli/test_entry_cli.py)."""


@contextlib.contextmanager
def sparse_gc(threshold: int = SPARSE_GC_THRESHOLD) -> Iterator[None]:
    """Run the cyclic GC's young generation at most every `threshold` net allocations, then restore the settings.

    Almost every object a control plane in one process allocates lives on in a cache (informers, the store, the
    scheduler) until its pod is replaced or deleted, and hardly any is in a cycle (53 collected in a 100,000-pod
    simulation), so each young-generation pass at `tune_gc`'s 100,000 re-scans survivors for nothing: 8.5 s of a
    76 s simulation, against 1.3 s at 1,000,000, for the same peak memory; 0.16 s against 0.02 s of a 5,000-pod
    `kjobs run`. `tune_gc` keeps the smaller threshold for servers, where a longer pass is a pause a client
    waits through; `kjobs simulate` (virtual time) and `kjobs run` without `--serve` (no client but its own
    progress lines) use this. Frees nothing different: what the GC collects decides nothing."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], threshold), *before[1:])
    try:
        yield
    finally:
        if gc.get_freeze_count() <= INTERPRETER_FROZEN:  # nobody (`kjobs up`'s `settle_heap`) froze a heap
            # What the run left young (up to a million objects, most of them the stopped cluster) goes to the
            # old generation unscanned, where the passes at `tune_gc`'s threshold would have moved it, rather than
            # being scanned by the first young pass after the restore (0.5 s of CPU after a 10,000-pod run).
            gc.freeze()
            gc.unfreeze()
        gc.set_threshold(*before)


async def create_configs(client: Client, namespace: str, configs: Iterable[Obj]) -> list[str]:
    """Create a manifest's Namespaces, then the namespaces the Job (in `namespace`) and its namespaced objects
    need that are still missing (`create_namespaces`), then those objects (ConfigMaps, Secrets, ServiceAccounts,
    RBAC roles and bindings, StorageClasses, PersistentVolumes and PersistentVolumeClaims, in the manifest's
    order); returns the namespaces created for want of one. An object the cluster already has (the `default`
    ServiceAccount its controller made at start) takes the manifest's version, as `kubectl apply` of it would
    configure the cluster's."""
    from kjobs.client.resources import (
        CLUSTER_ROLE_BINDINGS,
        CLUSTER_ROLES,
        CONFIG_MAPS,
        NAMESPACES,
        PERSISTENT_VOLUME_CLAIMS,
        PERSISTENT_VOLUMES,
        ROLE_BINDINGS,
        ROLES,
        SECRETS,
        SERVICE_ACCOUNTS,
        SERVICES,
        STORAGE_CLASSES,
    )

    resources = {
        "ConfigMap": CONFIG_MAPS,
        "Secret": SECRETS,
        "ServiceAccount": SERVICE_ACCOUNTS,
        "Role": ROLES,
        "RoleBinding": ROLE_BINDINGS,
        "ClusterRole": CLUSTER_ROLES,
        "ClusterRoleBinding": CLUSTER_ROLE_BINDINGS,
        "PersistentVolumeClaim": PERSISTENT_VOLUME_CLAIMS,
        "PersistentVolume": PERSISTENT_VOLUMES,
        "StorageClass": STORAGE_CLASSES,
        "Service": SERVICES,
    }
    configs = list(configs)
    for config in configs:
        if config.get("kind") == "Namespace":
            await client.create(NAMESPACES, None, config)
    others = [c for c in configs if c.get("kind") != "Namespace"]
    wanted = [
        str((c.get("metadata") or {}).get("namespace") or namespace)
        if resources[str(c.get("kind"))].namespaced
        else None
        for c in others
    ]
    created = await create_namespaces(client, [namespace, *(w for w in wanted if w is not None)])
    for config, where in zip(others, wanted, strict=True):
        await _create_or_configure(client, resources[str(config.get("kind"))], where, config)
    return created


async def _create_or_configure(client: Client, resource: Any, namespace: str | None, config: Obj) -> None:
    from kjobs.api.errors import ApiError

    try:
        await client.create(resource, namespace, config)
    except ApiError as exc:
        if exc.code != 409:
            raise
        meta = config["metadata"]
        current = await client.get(resource, namespace, str(meta["name"]))
        meta = {**meta, "resourceVersion": current["metadata"]["resourceVersion"]}
        await client.update(resource, namespace, {**config, "metadata": meta})


async def create_namespaces(client: Client, names: Iterable[str]) -> list[str]:
    """Create those of `names` the cluster does not have yet; returns the ones created, in order.

    `kjobs run` and `kjobs simulate` make a fresh cluster for one manifest, which has only `default`,
    `kube-system`, `kube-public` and `kube-node-lease`: a Job written for a namespace of its own (`namespace:
    analytics`) would be refused with `namespaces "analytics" not found` where on a cluster its user would have
    created that namespace first, and a user of these commands has no chance to."""
    from kjobs.api.errors import ApiError
    from kjobs.client.resources import NAMESPACES

    created: list[str] = []
    for name in dict.fromkeys(names):
        try:
            await client.get(NAMESPACES, None, name)
        except ApiError as exc:
            if exc.code != 404:
                raise
            await client.create(NAMESPACES, None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
            created.append(name)
    return created


def _process_runtime(
    root: Path,
    clock: Clock,
    backoff_base: float,
    die_with_agent: bool = False,
    start_report_delay: float | None = None,
    hidden_paths: tuple[str, ...] = (),
    log_rotation: tuple[int, int] | None = None,
    owns_root: bool = False,
) -> Callable[[StatusCallback], ContainerRuntime]:
    from kjobs.node.process_runtime import START_REPORT_DELAY, ProcessRuntime
    from kjobs.node.shim import DEFAULT_LOG_MAX_FILES, DEFAULT_LOG_MAX_SIZE

    rotation = log_rotation or (DEFAULT_LOG_MAX_SIZE, DEFAULT_LOG_MAX_FILES)

    def make(on_status: StatusCallback) -> ContainerRuntime:
        return ProcessRuntime(
            root_dir=root,
            clock=clock,
            on_status=on_status,
            backoff_base=backoff_base,
            containers_die_with_agent=die_with_agent,
            start_report_delay=START_REPORT_DELAY if start_report_delay is None else start_report_delay,
            hidden_paths=hidden_paths,
            log_max_size=rotation[0],
            log_max_files=rotation[1],
            owns_root=owns_root,
        )

    return make


def _sim_runtime(clock: Clock, outcome: Callable[[Any, Any, int], Any] | None) -> Callable[[StatusCallback], Any]:
    from kjobs.node.sim_runtime import SimulatedRuntime, succeed_at_once

    def make(on_status: StatusCallback) -> ContainerRuntime:
        return SimulatedRuntime(clock=clock, outcome=outcome or succeed_at_once, on_status=on_status)

    return make


def _sim_memory(settings: Any) -> Any:
    """Simulated pods use no memory: the node never reports pressure from this machine's /proc/meminfo."""
    from kjobs.node.eviction import FakeMemoryMonitor

    total = settings.machine.memory_bytes
    return FakeMemoryMonitor(available_bytes=total, capacity_bytes=total)


SIM_MACHINE = MachineInfo(
    cpu_cores=64,
    memory_bytes=256 << 30,
    ephemeral_storage_bytes=1 << 40,
    machine_id="kjobs-sim",
    system_uuid="kjobs-sim",
    boot_id="kjobs-sim",
    kernel_version="6.1.0",
    os_image="kjobs simulated node",
)
"""The machine of a simulated node (`runtime="sim"`): 64 cores and 256 GiB, `MAX_PODS` (110) pods."""


CONTROLLER_MANAGER = "kube-controller-manager"
SCHEDULER_MANAGER = "kube-scheduler"
KUBELET_MANAGER = "kubelet"
"""The field managers of an embedded cluster's components: their Kubernetes counterparts' names."""


def metric_registries(components: Iterable[object], first: Iterable[Any] = ()) -> list[Any]:
    """The registries to serve at /metrics: `first` (the process's default one, where `kjobs up` and `kjobs
    controller` put the Job controller's), then each component's own, once each (as kube-controller-manager serves
    every controller's metrics from its one registry)."""
    registries = list(first)
    for component in components:
        registry = getattr(getattr(component, "metrics", None), "registry", None)
        if registry is not None and registry not in registries:
            registries.append(registry)
    return registries


def build_controllers(
    client: Client,
    clock: Clock,
    *,
    names: tuple[str, ...] = CONTROLLER_NAMES,
    settings: ClusterSettings | None = None,
    job_metrics: JobMetrics | None = None,
    managed_by: str | None = None,
    informers: InformerFactory | None = None,
    scheduler_client: Client | None = None,
    metrics: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The named controllers over one client, sharing one informer per resource — one watch and one decoded
    object per change, as kube-controller-manager shares client-go informers. `managed_by` makes the Job
    controller own the Jobs with that `spec.managedBy` instead of the built-in controller's. The scheduler writes
    through `scheduler_client` when given (kube-scheduler is a component of its own). `metrics`: a controller's
    metrics to carry on with, by name (those of an instance this one replaces)."""
    reused = {name: found for name, found in (metrics or {}).items() if found is not None}
    cfg = settings or ClusterSettings()
    shared = informers if informers is not None else InformerFactory(client, clock=clock)
    sync = SyncConfig(pod_failure_backoff=cfg.pod_failure_backoff)
    if managed_by is not None:
        sync = SyncConfig(pod_failure_backoff=cfg.pod_failure_backoff, controller_name=managed_by)
    makers: dict[str, Callable[[], Any]] = {
        "job": lambda: JobController(
            client,
            clock=clock,
            settings=JobControllerSettings(sync=sync, batch_period=cfg.job_batch_period),
            metrics=job_metrics,
            shared=shared,
        ),
        "scheduler": lambda: Scheduler(
            scheduler_client or client,
            clock=clock,
            settings=cfg.scheduler,
            shared=shared,
            metrics=reused.get("scheduler"),
        ),
        "nodelifecycle": lambda: NodeLifecycleController(client, clock, cfg.node_lifecycle, shared=shared),
        "tainteviction": lambda: TaintEvictionController(client, clock, shared=shared),
        "podgc": lambda: PodGCController(client, clock, cfg.pod_gc, shared=shared),
        "disruption": lambda: DisruptionController(client, clock, cfg.disruption, shared=shared),
        "garbagecollector": lambda: GarbageCollector(client, clock, shared=shared),
        "ttl": lambda: TTLAfterFinishedController(client, clock, shared=shared),
        "cronjob": lambda: CronJobController(client, _cronjob_clock(clock, cfg.cronjob_clock_rate), shared=shared),
        "rootcacertpublisher": lambda: RootCACertPublisher(client, clock, cfg.root_ca, shared=shared),
        "serviceaccount-controller": lambda: ServiceAccountsController(client, clock, shared=shared),
        "clusterrole-aggregation-controller": lambda: ClusterRoleAggregationController(client, clock, shared=shared),
        "endpoint-controller": lambda: EndpointsController(client, clock, shared=shared),
        "endpointslice-controller": lambda: EndpointSliceController(client, clock, shared=shared),
        "persistentvolume-binder": lambda: PersistentVolumeController(
            client, clock, Path(cfg.storage_dir) if cfg.storage_dir else None, shared=shared
        ),
        "persistentvolumeclaim-protection": lambda: PVCProtectionController(client, clock, shared=shared),
        "persistentvolume-protection": lambda: PVProtectionController(client, clock, shared=shared),
        "resourcequota-controller": lambda: ResourceQuotaController(client, clock, shared=shared),
    }
    built = {name: makers[name]() for name in names}
    for name, found in reused.items():
        if name not in ("job", "scheduler") and name in built and hasattr(built[name], "metrics"):
            built[name].metrics = found  # made in the constructor, read only while it runs
    return built


def _cronjob_clock(clock: Clock, rate: float) -> Clock:
    """The CronJob controller's clock: the cluster's, or wall time `rate` times faster (`cronjob_clock_rate`)."""
    return clock if rate == 1.0 else ScaledClock(rate)


def _late_start(name: str, elector: Any, controller: Component) -> Callable[[], Awaitable[None]]:
    """Start a controller that waited for its Lease, and say so (its wait was logged)."""

    async def start() -> None:
        await controller.start()
        log.warning("controller %s runs: lease %s acquired", name, elector.lock)

    return start


def _lost_notice(name: str, elector: Any) -> Callable[[], None]:
    """What a cluster logs when a controller lost its Lease (this one has stopped it): taken by another
    instance, or not renewed within the renew deadline (the API server could not store it: a full disk)."""

    def notice() -> None:
        if elector.holder and elector.holder != elector.identity:
            why = f"was taken by {elector.holder}"
        else:
            why = f"could not be renewed for {elector.timing.renew_deadline:g}s ({elector.last_error or 'no answer'})"
        log.error("controller %s stopped: lease %s %s; it campaigns again", name, elector.lock, why)

    return notice


class LocalCluster:
    """All components of a one-machine cluster around one `ApiService`."""

    def __init__(
        self,
        service: ApiService,
        *,
        settings: ClusterSettings | None = None,
        clock: Clock | None = None,
        job_metrics: JobMetrics | None = None,
        logs: AgentLogs | None = None,
    ) -> None:
        self.service = service
        self.logs = logs
        self.settings = settings or ClusterSettings()
        self.clock = clock or RealClock()
        # The components treat what their writes return as read-only, like their informers' objects. Each
        # writes under its Kubernetes counterpart's name, the one `managedFields` shows on a real cluster (the
        # apiserver takes it from the component's User-Agent).
        self.client = LocalClient(service, manager=CONTROLLER_MANAGER, shared_results=True)
        self.informers = InformerFactory(self.client, clock=self.clock)
        self._scheduler_client = LocalClient(service, manager=SCHEDULER_MANAGER, shared_results=True)
        """The controllers' shared informers, for anything else in this process that watches the cluster."""
        components = build_controllers(
            self.client,
            self.clock,
            names=self.settings.controllers,
            settings=self.settings,
            job_metrics=job_metrics,
            informers=self.informers,
            scheduler_client=self._scheduler_client,
        )
        self.job_controller: JobController | None = components.get("job")
        self._job_metrics = job_metrics
        self.controllers: list[Component] = list(components.values())
        self._named = components
        self.agents: list[Any] = []
        self._started: list[Component] = []
        self._campaigns: list[asyncio.Task[None]] = []
        self.container_events: Callable[[Obj, str, str, str, str], None] | None = None
        """Told of every node agent's container events (`NodeAgent.container_events`), nodes added later too."""
        self._root_locks: list[int] = []
        """The `kjobs.node.rootlock` claims of the process runtimes' roots, released by `stop`."""

    def node_names(self) -> list[str]:
        """Names of the local nodes (`kjobs-node`, `kjobs-node-2`, ...)."""
        prefix = self.settings.node_prefix
        return [prefix if i == 0 else f"{prefix}-{i + 1}" for i in range(self.settings.nodes)]

    async def start(self) -> None:
        """Create the standard namespaces and system PriorityClasses, then start node agents and controllers."""
        await self.service.ensure_namespaces()
        await self.service.ensure_system_priority_classes()
        if "persistentvolume-binder" in self.settings.controllers:
            await self.service.ensure_default_storage_class()
        for agent in self._make_agents():
            await agent.start()
            self._started.append(agent)
            self.agents.append(agent)
            if self.logs is not None:
                self.logs.add(agent)  # type: ignore[arg-type]
        if self.settings.leader_election:
            await self._elect()
            await self.ensure_service_accounts(STANDARD_NAMESPACES)
            return
        for controller in self.controllers:
            await controller.start()
            self._started.append(controller)
        await self.ensure_service_accounts(STANDARD_NAMESPACES)

    async def _elect(self) -> None:
        """Start each controller whose Lease is free now, in order; campaign in the background for the others
        (held by a live `kjobs controller`), starting each once its Lease is won."""
        from kjobs.controllers.leaderelection import LeaderElector, lease_name, new_identity

        identity = new_identity()
        recorder = EventRecorder(self.client, component=CONTROLLER_MANAGER, clock=self.clock)
        for name, controller in self._named.items():
            elector = LeaderElector(self.client, self.clock, lease_name(name), identity=identity, recorder=recorder)
            won = await elector.try_acquire_or_renew()
            if won:
                await controller.start()
            else:
                log.warning("controller %s waits: lease %s is held by %s", name, elector.lock, elector.holder)
            task = asyncio.get_running_loop().create_task(self._campaign(name, elector, controller, won))
            self._campaigns.append(task)

    async def _campaign(self, name: str, elector: Any, controller: Component, won: bool) -> None:
        """Lead `name` while holding its Lease; when the Lease is lost, stop it and campaign again with a new
        instance. kube-controller-manager exits on a lost Lease and its supervisor (the kubelet of its static
        pod, systemd) starts it again, to campaign anew (cmd/kube-controller-manager/app/controllermanager.go
        `OnStoppedLeading`); `kjobs up` serves the API in the same process, so it restarts the one controller
        instead. Before, the controller stayed stopped until `kjobs up` was restarted: a disk full for 10 s
        (every Lease renewal refused) left the cluster without a Job controller or a scheduler for good."""
        from kjobs.controllers.leaderelection import lead

        while True:
            await lead(
                elector,
                _late_start(name, elector, controller),
                controller.stop,
                on_lost=_lost_notice(name, elector),
                started=won,
            )
            controller, won = self._restarted(name, controller), False

    def _restarted(self, name: str, old: Component) -> Component:
        """A new instance of controller `name` in place of `old` (stopped): `old`'s handlers leave the shared
        informers, and its metrics carry on in the new one (they are served at /metrics since the start)."""
        self.informers.remove_handlers_of(old)
        new: Component = build_controllers(
            self.client,
            self.clock,
            names=(name,),
            settings=self.settings,
            job_metrics=self._job_metrics,
            informers=self.informers,
            scheduler_client=self._scheduler_client,
            metrics={name: getattr(old, "metrics", None)},
        )[name]
        self._named[name] = new
        self.controllers = [new if c is old else c for c in self.controllers]
        if isinstance(new, JobController):
            self.job_controller = new
        return new

    async def ensure_service_accounts(self, namespaces: Iterable[str]) -> None:
        """Have the ServiceAccounts controller, when this cluster runs it, create now the accounts `namespaces`
        lack (`ServiceAccountsController.ensure`): `start` does it for the standard namespaces, `kjobs run` and
        `kjobs simulate` for their Job's, so its first pods find `default` there without waiting for it."""
        controller = self._named.get(SERVICE_ACCOUNT_CONTROLLER)
        if isinstance(controller, ServiceAccountsController):
            await controller.ensure(namespaces)

    def _make_agents(self) -> list[Component]:
        if self.settings.nodes <= 0:
            return []
        return [self._make_agent(name) for name in self.node_names()]

    def _make_agent(self, name: str) -> Component:
        from pathlib import Path

        from kjobs.node.agent import NodeAgent, NodeAgentSettings
        from kjobs.node.process_runtime import default_root_dir

        root = Path(self.settings.root_dir) if self.settings.root_dir else default_root_dir()
        sim = self.settings.runtime == "sim"
        options = dict(self.settings.node_options)
        if sim:  # a fixed machine, not this one's, so a simulation decides the same everywhere
            options.setdefault("machine", SIM_MACHINE)
        elif self.settings.pod_api:
            options.setdefault("pod_api", self.settings.pod_api)
        settings = NodeAgentSettings(**options)
        service = self.service
        if not sim:  # an owned root is this node's alone, a shared one is not any process's (`owns_root_dir`)
            from kjobs.node.rootlock import claim

            self._root_locks.append(claim(root / name, exclusive=self.settings.owns_root_dir))

        async def tokens(namespace: str, account: str, body: Obj) -> Obj:
            return (await service.create_token(namespace, account, body)).obj

        agent = NodeAgent(
            LocalClient(self.service, manager=KUBELET_MANAGER, shared_results=True),
            name=name,
            runtime_factory=(
                _sim_runtime(self.clock, self.settings.sim_outcome)
                if sim
                else _process_runtime(
                    root / name,
                    self.clock,
                    self.settings.container_restart_backoff,
                    self.settings.containers_die_with_agent,
                    self.settings.container_start_report_delay,
                    self.settings.hidden_paths,
                    (settings.container_log_max_size, settings.container_log_max_files),
                    self.settings.owns_root_dir,
                )
            ),
            clock=self.clock,
            settings=settings,
            memory_monitor=_sim_memory(settings) if sim else None,
            tokens=tokens if settings.pod_api else None,
        )
        agent.container_events = self._container_event
        return agent

    def _container_event(self, pod: Obj, kind: str, reason: str, message: str, container: str) -> None:
        if self.container_events is not None:
            self.container_events(pod, kind, reason, message, container)

    async def add_node(self, name: str) -> Any:
        """Start one more node agent named `name` (a replacement for a lost node, as an autoscaler adds one)."""
        agent = self._make_agent(name)
        await agent.start()
        self._started.insert(len(self.agents), agent)  # stopped after the controllers, with the other agents
        self.agents.append(agent)
        if self.logs is not None:
            self.logs.add(agent)  # type: ignore[arg-type]
        return agent

    async def stop(self) -> None:
        """Stop everything, newest first (controllers, then node agents, which stop their pods)."""
        campaigns, self._campaigns = self._campaigns, []
        for task in campaigns:  # each stops what it leads and releases its Lease
            task.cancel()
        await asyncio.gather(*campaigns, return_exceptions=True)
        while self._started:
            component = self._started.pop()
            with contextlib.suppress(Exception):
                await component.stop()
        locks, self._root_locks = self._root_locks, []
        for fd in locks:
            with contextlib.suppress(OSError):
                os.close(fd)
