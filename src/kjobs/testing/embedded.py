"""The in-process cluster of a test: `kjobs run --serve`'s assembly (a memory store, `create_app`, a
`LocalCluster` with every controller, the API served over TLS on a free loopback port with a kubeconfig) on a
`Background` loop, with either runtime:

- `process` (default): node agents whose pods are local processes, on wall time, with every period shortened
  as tests/e2e/support.py `fast_settings` does so that node loss, taint eviction and pod GC take a second;
- `simulated`: `LocalCluster(runtime="sim")` (node agents on `kjobs.node.sim_runtime.SimulatedRuntime`) on a
  `kjobs.virtualtime.VirtualTimeLoop` whose `FakeClock` every component reads, with Kubernetes' own periods
  (10 s pod back-off, 50 s node grace, 300 s tolerations); when that clock may move is
  `kjobs.testing.virtual.TimeGate`'s rule (`virtual_time="auto"`, or `"manual"`: only `advance`).

The PKI is made once per test session (`openssl` costs more than a whole cluster start) and shared by every
cluster, as `kjobs up` keeps one per data directory.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kjobs.clock import Clock, FakeClock, RealClock
from kjobs.cluster import ClusterSettings, LocalCluster, metric_registries
from kjobs.controllers.disruption import DisruptionSettings
from kjobs.controllers.nodelifecycle import NodeLifecycleSettings
from kjobs.controllers.podgc import PodGCSettings
from kjobs.controllers.scheduler import SchedulerSettings
from kjobs.node.logsource import AgentLogs
from kjobs.node.sim_runtime import OutcomeFn
from kjobs.server.admission import AdmissionSettings
from kjobs.server.tls import Pki
from kjobs.store import MemoryStore
from kjobs.testing import tempdirs, virtual
from kjobs.testing.virtual import VirtualTime

Runtime = Literal["process", "simulated"]


@dataclass(frozen=True)
class ClusterOptions:
    """How a test's cluster is made (the `kjobs` marker's keywords)."""

    runtime: Runtime = "process"
    nodes: int = 1
    virtual_time: VirtualTime = "auto"
    """`simulated` only: whether virtual time runs by itself (`auto`) or only through `advance()`."""
    outcome: OutcomeFn = virtual.command_outcome
    """`simulated` only: each container attempt's fate (default: read from its shell command)."""
    settings: ClusterSettings | None = None
    """Replaces the runtime's default settings (`fast_settings`/`simulated_settings`) entirely."""


def fast_settings(
    root: Path, nodes: int = 1, *, job_batch_period: float = 0.01, **node_options: Any
) -> ClusterSettings:
    """Wall-time settings with every period and grace shortened to (sub)seconds, nodes keeping their files under
    `root`; `node_options` override the node agents' (the project's e2e tests use this too)."""
    return ClusterSettings(
        nodes=nodes,
        job_batch_period=job_batch_period,
        pod_failure_backoff=0.1,
        container_restart_backoff=0.1,
        root_dir=str(root),
        node_options={
            "node_status_update_frequency": 0.5,
            "node_lease_renew_interval": 0.5,
            "eviction_monitoring_interval": 0.2,
            "shutdown_grace_period": 3.0,
            "forget_pods_on_stop": True,
            **node_options,
        },
        scheduler=SchedulerSettings(initial_backoff=0.1, max_backoff=0.5, unschedulable_flush_period=1.0),
        node_lifecycle=NodeLifecycleSettings(
            monitor_period=0.2, grace_period=2.0, startup_grace_period=2.0, eviction_qps=100.0
        ),
        pod_gc=PodGCSettings(period=0.2, quarantine=0.5),
        disruption=DisruptionSettings(stale_timeout=1.0),
        # pods tolerate an unreachable node for 1 s instead of 300 (DefaultTolerationSeconds), a not-ready one for
        # 10 s: longer than the 3 s shutdown grace period, as 300 s is than a cluster's, so a node shutting down
        # (Ready=False before its pods are marked, as the kubelet's shutdown manager does) ends its pods itself
        admission=AdmissionSettings(
            default_not_ready_toleration_seconds=10,
            default_unreachable_toleration_seconds=1,
            service_account_lookup=True,
        ),
    )


def simulated_settings(nodes: int = 1, outcome: OutcomeFn = virtual.command_outcome) -> ClusterSettings:
    """Kubernetes' defaults (in virtual time they cost nothing) on the simulated runtime."""
    return ClusterSettings(
        nodes=nodes, runtime="sim", sim_outcome=outcome, admission=AdmissionSettings(service_account_lookup=True)
    )


@functools.cache
def session_pki() -> Pki:
    """One PKI for every cluster of this process, in a private temporary directory removed at exit."""
    import atexit

    from kjobs.server import tls

    directory = tempdirs.make(tempdirs.PKI_PREFIX)
    _pki_dirs.append(directory)
    atexit.register(shutil.rmtree, directory, True)
    return tls.ensure(directory / "pki", "127.0.0.1")


_pki_dirs: list[Path] = []


def remove_session_pki() -> None:
    """Remove the session's PKI now, for a process about to end by a signal (no `atexit` then)."""
    while _pki_dirs:
        shutil.rmtree(_pki_dirs.pop(), ignore_errors=True)
    session_pki.cache_clear()


def node_names(settings: ClusterSettings) -> list[str]:
    """The names `LocalCluster.node_names` gives (`kjobs-node`, `kjobs-node-2`, ...)."""
    prefix = settings.node_prefix
    return [prefix if i == 0 else f"{prefix}-{i + 1}" for i in range(settings.nodes)]


class Embedded:
    """A running in-process cluster: its components, clock, agents, URL and kubeconfig (all made on the loop of
    `new_loop()`; call `start`/`stop` there)."""

    def __init__(self, options: ClusterOptions, workdir: Path) -> None:
        self.options = options
        self.workdir = workdir
        simulated = options.runtime == "simulated"
        self.clock: Clock = FakeClock(start=time.time()) if simulated else RealClock()
        self.time_gate = virtual.TimeGate(options.virtual_time) if simulated else None
        """When virtual time may move (simulated only)."""
        if not simulated:
            # pods die with the test process, however it ends: nothing could adopt them after it (settings a
            # test gives included)
            self.settings = dataclasses.replace(
                options.settings or fast_settings(workdir / "nodes", options.nodes), containers_die_with_agent=True
            )
        elif options.settings is None:
            self.settings = simulated_settings(options.nodes, options.outcome)
        else:
            sim_outcome = options.settings.sim_outcome or options.outcome
            self.settings = dataclasses.replace(options.settings, runtime="sim", sim_outcome=sim_outcome)
        self.kubeconfig = workdir / "kubeconfig"
        self.url = ""
        self.agents: dict[str, Any] = {}
        """Node name → its `NodeAgent` (killed ones stay, stopped)."""
        self._store = MemoryStore()
        self._logs = AgentLogs()
        self._cluster: LocalCluster | None = None
        self._served: Any = None

    def new_loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop to run on: a gated `VirtualTimeLoop` on `clock` for the simulated runtime, else None (the
        default, uvloop)."""
        if self.time_gate is None or not isinstance(self.clock, FakeClock):
            return None
        from kjobs.virtualtime import VirtualTimeLoop

        return VirtualTimeLoop(self.clock, may_advance=self.time_gate.may_advance)

    @property
    def service(self) -> Any:
        """The `ApiService` (for in-process clients)."""
        assert self._cluster is not None
        return self._cluster.service

    async def start(self) -> None:
        """Start the components, serve the API and write the kubeconfig."""
        from kjobs.server import kubeconfig
        from kjobs.server.app import create_app
        from kjobs.server.runner import bind

        settings = self.settings
        app = create_app(
            self._store,
            clock=self.clock.now,
            logs=self._logs,
            exec_source=self._logs,
            usage=self._logs,
            admission=settings.admission,
            features=settings.features,
        )
        self._cluster = LocalCluster(app.service, settings=settings, clock=self.clock, logs=self._logs)
        app.metrics = metric_registries(self._cluster.controllers)  # the cluster's own, not the test process's
        await self._cluster.start()
        self.agents.update({agent.name: agent for agent in self._cluster.agents})
        pki = session_pki()
        sock = bind("127.0.0.1", 0)
        self._served = await _serve(app, sock, pki, self.time_gate)
        self.url = f"https://127.0.0.1:{sock.getsockname()[1]}"
        kubeconfig.write(self.kubeconfig, self.url, pki=pki)

    async def wait(self, work: Any) -> Any:
        """Await `work` as the test waiting for the cluster (virtual time may move meanwhile: `TimeGate`)."""
        if self.time_gate is None:
            return await work
        return await self.time_gate.waiting_for(work)

    async def advance(self, seconds: float) -> None:
        """Move virtual time forward (a `simulated` cluster), letting every component react on the way."""
        if self.time_gate is None:
            raise TypeError("advance() needs the simulated runtime: this cluster runs on wall time")
        await self.time_gate.advance(seconds)

    async def stop(self) -> None:
        """Stop serving, then the controllers and node agents; remove the work files."""
        if self._served is not None:
            await _stop_serving(self._served)
        if self._cluster is not None:
            await self._cluster.stop()
        self._store.close()


@dataclass
class _Served:
    app: Any
    server: Any


async def _serve(app: Any, sock: Any, pki: Pki, gate: virtual.TimeGate | None) -> _Served:
    """Serve `app` over TLS on the bound `sock`, as `kjobs run --serve` does (`kjobs.run._serve`) but without
    lifespan (the cluster made the namespaces) and without uvicorn's main loop, whose 0.1 s tick (it only
    refreshes the Date header and looks for a stop request) would be the next timer of a virtual-time loop for
    ever; the Date header is set once. With a `gate`, watch and follow requests count as the test waiting."""
    import uvicorn

    from kjobs.server.runner import server_config

    config = server_config(app, pki=pki, lifespan="off")
    if gate is not None:
        config.app = gate.count_streams(app)
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)
    await server.startup(sockets=[sock])
    await server.on_tick(0)
    return _Served(app, server)


async def _stop_serving(served: _Served) -> None:
    """Close the listener and every connection at once: uvicorn's graceful stop (`Served.stop`) waits out
    two 0.1 s ticks, the whole budget of a test cluster's start and stop, for clients the test has already
    closed."""
    served.app.close_streams()
    server = served.server
    for listener in server.servers:
        listener.close()
    for connection in list(server.server_state.connections):
        transport = getattr(connection, "transport", None)
        if transport is not None:
            transport.abort()
