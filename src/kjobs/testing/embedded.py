"""The in-process cluster of a test: `kjobs run --serve`'s assembly (a memory store, `create_app`, a
`LocalCluster` with every controller, the API served over TLS on a free loopback port with a kubeconfig) on a
`Background` loop, with either runtime:

- `process` (default): node agents whose pods are local processes, on wall time, with every period shortened
  as tests/e2e/support.py `fast_settings` does so that node loss, taint eviction and pod GC take a second;
- `simulated`: node agents on `kjobs.node.sim_runtime.SimulatedRuntime` and one `FakeClock` for every
  component, with Kubernetes' own periods (10 s pod back-off, 50 s node grace, 300 s tolerations); the clock is
  driven by `kjobs.testing.virtual.drive` (`virtual_time="auto"`) or only by the test (`"manual"`).

The PKI is made once per test session (`openssl` costs more than a whole cluster start) and shared by every
cluster, as `kjobs up` keeps one per data directory.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kjobs.client.local import LocalClient
from kjobs.clock import Clock, FakeClock, RealClock
from kjobs.cluster import KUBELET_MANAGER, ClusterSettings, LocalCluster
from kjobs.controllers.disruption import DisruptionSettings
from kjobs.controllers.nodelifecycle import NodeLifecycleSettings
from kjobs.controllers.podgc import PodGCSettings
from kjobs.controllers.scheduler import SchedulerSettings
from kjobs.node.logsource import AgentLogs
from kjobs.node.sim_runtime import OutcomeFn
from kjobs.server.admission import AdmissionSettings
from kjobs.server.tls import Pki
from kjobs.store import MemoryStore
from kjobs.testing import virtual

Runtime = Literal["process", "simulated"]
VirtualTime = Literal["auto", "manual"]


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


def fast_settings(root: Path, nodes: int = 1) -> ClusterSettings:
    """Wall-time settings with every period and grace shortened to (sub)seconds (tests/e2e/support.py's)."""
    return ClusterSettings(
        nodes=nodes,
        job_batch_period=0.01,
        pod_failure_backoff=0.1,
        root_dir=str(root),
        node_options={
            "node_status_update_frequency": 0.5,
            "node_lease_renew_interval": 0.5,
            "eviction_monitoring_interval": 0.2,
            "shutdown_grace_period": 3.0,
            "forget_pods_on_stop": True,
        },
        scheduler=SchedulerSettings(initial_backoff=0.1, max_backoff=0.5, unschedulable_flush_period=1.0),
        node_lifecycle=NodeLifecycleSettings(
            monitor_period=0.2, grace_period=2.0, startup_grace_period=2.0, eviction_qps=100.0
        ),
        pod_gc=PodGCSettings(period=0.2, quarantine=0.5),
        disruption=DisruptionSettings(stale_timeout=1.0),
        # pods tolerate an unreachable or not-ready node for 1 s instead of 300 (DefaultTolerationSeconds)
        admission=AdmissionSettings(default_not_ready_toleration_seconds=1, default_unreachable_toleration_seconds=1),
    )


def simulated_settings(nodes: int = 1) -> ClusterSettings:
    """Kubernetes' defaults: in virtual time they cost nothing."""
    return ClusterSettings(nodes=nodes)


@functools.cache
def session_pki() -> Pki:
    """One PKI for every cluster of this process, in a private temporary directory removed at exit."""
    import atexit

    from kjobs.server import tls

    directory = Path(tempfile.mkdtemp(prefix="kjobs-pytest-"))
    atexit.register(shutil.rmtree, directory, True)
    return tls.ensure(directory / "pki", "127.0.0.1")


def node_names(settings: ClusterSettings) -> list[str]:
    """The names `LocalCluster.node_names` gives (`kjobs-node`, `kjobs-node-2`, ...)."""
    prefix = settings.node_prefix
    return [prefix if i == 0 else f"{prefix}-{i + 1}" for i in range(settings.nodes)]


class Embedded:
    """A running in-process cluster: its components, clock, agents, URL and kubeconfig (all made on the
    `Background` loop; call `start`/`stop` there)."""

    def __init__(self, options: ClusterOptions, workdir: Path) -> None:
        self.options = options
        self.workdir = workdir
        simulated = options.runtime == "simulated"
        self.clock: Clock = FakeClock(start=time.time()) if simulated else RealClock()
        base = simulated_settings(options.nodes) if simulated else fast_settings(workdir / "nodes", options.nodes)
        self.settings = options.settings or base
        self.kubeconfig = workdir / "kubeconfig"
        self.url = ""
        self.agents: dict[str, Any] = {}
        """Node name → its `NodeAgent` (killed ones stay, stopped)."""
        self._store = MemoryStore()
        self._logs = AgentLogs()
        self._cluster: LocalCluster | None = None
        self._served: Any = None
        self._sim_agents: list[Any] = []
        self._driver: asyncio.Task[None] | None = None

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
        simulated = self.options.runtime == "simulated"
        if simulated and isinstance(self.clock, FakeClock) and self.options.virtual_time == "auto":
            self._driver = asyncio.get_running_loop().create_task(virtual.drive(self.clock))
        app = create_app(
            self._store, clock=self.clock.now, logs=self._logs, admission=settings.admission, features=settings.features
        )
        own = dataclasses.replace(settings, nodes=0) if simulated else settings
        self._cluster = LocalCluster(app.service, settings=own, clock=self.clock, logs=self._logs)
        await self._cluster.start()
        if simulated:
            await self._start_simulated_agents()
        self.agents.update({agent.name: agent for agent in [*self._cluster.agents, *self._sim_agents]})
        pki = session_pki()
        sock = bind("127.0.0.1", 0)
        self._served = _serve(app, sock, pki)
        self.url = f"https://127.0.0.1:{sock.getsockname()[1]}"
        kubeconfig.write(self.kubeconfig, self.url, pki=pki)

    async def _start_simulated_agents(self) -> None:
        from kjobs.node.agent import NodeAgent, NodeAgentSettings
        from kjobs.node.sim_runtime import SimulatedRuntime

        clock, outcome = self.clock, self.options.outcome
        node_settings = NodeAgentSettings(**self.settings.node_options)
        for name in node_names(self.settings):
            agent = NodeAgent(
                LocalClient(self.service, manager=KUBELET_MANAGER, shared_results=True),
                name=name,
                clock=clock,
                runtime_factory=lambda on_status: SimulatedRuntime(clock=clock, outcome=outcome, on_status=on_status),
                settings=node_settings,
            )
            await agent.start()
            self._sim_agents.append(agent)
            self._logs.add(agent)

    async def advance(self, seconds: float) -> None:
        """Move virtual time forward (a `simulated` cluster), letting every component react on the way."""
        if not isinstance(self.clock, FakeClock):
            raise TypeError("advance() needs the simulated runtime: this cluster runs on wall time")
        await virtual.advance(self.clock, seconds)

    async def stop(self) -> None:
        """Stop serving, then the controllers and node agents, then virtual time; remove the work files."""
        if self._served is not None:
            await _stop_serving(self._served)
        for agent in reversed(self._sim_agents):
            with contextlib.suppress(Exception):
                await agent.stop()
        if self._cluster is not None:
            await self._cluster.stop()
        if self._driver is not None:
            self._driver.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._driver
        self._store.close()


@dataclass
class _Served:
    app: Any
    server: Any
    task: asyncio.Task[None]


def _serve(app: Any, sock: Any, pki: Pki) -> _Served:
    """Serve `app` over TLS on the bound `sock` as a task of this loop, as `kjobs run --serve` does
    (`kjobs.run._serve`): no lifespan (the cluster made the namespaces); connections wait in the listen backlog
    until the task accepts them, so the URL is usable at once."""
    import uvicorn

    from kjobs.server.runner import server_config

    server = uvicorn.Server(server_config(app, pki=pki, lifespan="off"))
    server.config.setup_event_loop = lambda: None  # type: ignore[method-assign]
    return _Served(app, server, asyncio.get_running_loop().create_task(server.serve(sockets=[sock])))


async def _stop_serving(served: _Served) -> None:
    """Close the listener and every connection and end the server task at once: uvicorn's graceful stop
    (`Served.stop`) waits out two 0.1 s ticks, the whole budget of a test cluster's start and stop, for
    clients the test has already closed."""
    served.app.close_streams()
    server = served.server
    for listener in server.servers:
        listener.close()
    for connection in list(server.server_state.connections):
        transport = getattr(connection, "transport", None)
        if transport is not None:
            transport.abort()
    served.task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await served.task
