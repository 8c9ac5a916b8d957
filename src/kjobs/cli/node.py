"""`kjobs node join` (run a node agent against any API server) and `kjobs node shutdown` (ask one to stop).

`join` runs in the foreground until SIGTERM/SIGINT/SIGHUP (even one that came while it started), which trigger
the graceful node shutdown (pods end Failed with `DisruptionTarget`/`TerminationByKubelet`) before the process
exits 0. `shutdown` reaches an agent wherever it runs by annotating its Node (see `kjobs.node.shutdown`) and,
unless `--no-wait`, waits until the Node reports `node is shutting down` and none of its pods is still running.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click

from kjobs import stopping
from kjobs.cli.params import FloatRange
from kjobs.cli.up import container_log_flags, duration_option, settle_heap, sync_frequency_option

_RUNTIMES = ("process", "sim")
HTTP_WORKERS = 64
"""Pod syncs in flight: each status write is an HTTP round trip here, so as many as the client has connections
(the kubelet runs one worker per pod; 4 suit an agent whose writes complete in its own process)."""


@click.group("node")
def node_group() -> None:
    """Run or stop a node agent (the kjobs kubelet)."""


def _connection(kubeconfig: Path | None) -> Any:
    from kjobs.client.kubeconfig import KubeconfigError, load

    try:
        return load(kubeconfig)
    except KubeconfigError as exc:
        raise click.ClickException(str(exc)) from None


@node_group.command("join")
@click.option("--kubeconfig", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Kubeconfig file.")
@click.option("--name", required=True, help="The Node's name.")
@click.option(
    "--runtime", type=click.Choice(_RUNTIMES), default="process", show_default=True, help="Container runtime."
)
@click.option(
    "--root-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help="Pod directories and logs."
)
@click.option("--eviction-hard", default="memory.available<100Mi", show_default=True, help="Hard eviction threshold.")
@click.option("--eviction-soft", default="", help="Soft eviction threshold (memory.available<1Gi): evicts once held.")
@click.option(
    "--eviction-soft-grace-period", default="", help="How long the soft threshold must hold (memory.available=1m30s)."
)
@click.option(
    "--eviction-max-pod-grace-period",
    type=FloatRange(0),
    default=0.0,
    show_default=True,
    help="Longest grace period, in seconds, a soft-threshold eviction gives a pod.",
)
@click.option("--shutdown-grace-period", type=FloatRange(0), default=30.0, show_default=True, help="Seconds for pods.")
@click.option(
    "--shutdown-grace-period-critical-pods",
    type=FloatRange(0),
    default=0.0,
    show_default=True,
    help="Of --shutdown-grace-period, the seconds for critical pods, stopped after the others.",
)
@click.option("--address", default="127.0.0.1", show_default=True, help="The Node's InternalIP; logs served there.")
@click.option(
    "--log-port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port for container logs (the kubelet endpoint; 0: any free port).",
)
@click.option(
    "--max-pods",
    type=click.IntRange(1),
    default=110,
    show_default=True,
    help="Pods this node runs at most (the kubelet's --max-pods: the Node's capacity and allocatable pods).",
)
@click.option(
    "--model",
    "model_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --runtime sim: the containers' failure model (kjobs simulate's format, without disruptions).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the --model's random draws.")
@sync_frequency_option
@container_log_flags
@duration_option(
    "--node-status-update-frequency",
    "10s",
    "Specifies how often kubelet posts node status to master. Note: be cautious when changing the constant, it must "
    "work with nodeMonitorGracePeriod in nodecontroller.",
)
def join(
    kubeconfig: Path | None,
    name: str,
    runtime: str,
    root_dir: Path | None,
    eviction_hard: str,
    eviction_soft: str,
    eviction_soft_grace_period: str,
    eviction_max_pod_grace_period: float,
    shutdown_grace_period: float,
    shutdown_grace_period_critical_pods: float,
    address: str,
    log_port: int,
    max_pods: int = 110,
    model_path: Path | None = None,
    seed: int = 0,
    sync_frequency: float = 60.0,
    node_status_update_frequency: float = 10.0,
    container_log_max_size: int = 10 * 1024 * 1024,
    container_log_max_files: int = 5,
) -> None:
    """Register node NAME with the API server of KUBECONFIG and run the pods bound to it."""
    # From here a stop signal is the graceful node shutdown, exit 0, even before the agent runs (`kjobs.stopping`).
    click.get_current_context().with_resource(stopping.held())
    import uvloop

    from kjobs.gctuning import tune_gc  # not through kjobs.cluster: an agent needs none of the controllers
    from kjobs.node.agent import NodeAgentSettings
    from kjobs.node.eviction import Threshold, ThresholdError

    try:
        Threshold.parse(eviction_hard)
    except ThresholdError as exc:
        raise click.BadParameter(str(exc), param_hint="--eviction-hard") from None
    if eviction_soft:
        try:
            Threshold.parse_soft(eviction_soft, eviction_soft_grace_period)
        except ThresholdError as exc:
            raise click.BadParameter(str(exc), param_hint="--eviction-soft") from None
    if shutdown_grace_period_critical_pods > shutdown_grace_period:
        # the kubelet turns graceful shutdown off for this configuration (migrateConfig returns nothing)
        raise click.BadParameter(
            "must not exceed --shutdown-grace-period", param_hint="--shutdown-grace-period-critical-pods"
        )
    outcome = _sim_outcome(model_path, seed) if model_path is not None else None
    if outcome is not None and runtime != "sim":
        raise click.BadParameter("a failure model needs --runtime sim", param_hint="--model")
    connection = _connection(kubeconfig)
    if connection.server.startswith("https") and connection.ca_pem is None:
        # the log endpoint could verify no client: like a kubelet with no client CA and anonymous access off
        raise click.ClickException("the kubeconfig's cluster has no certificate-authority to verify log readers with")
    try:
        settings = NodeAgentSettings(
            eviction_hard=eviction_hard,
            eviction_soft=eviction_soft,
            eviction_soft_grace_period=eviction_soft_grace_period,
            eviction_max_pod_grace_period=eviction_max_pod_grace_period,
            shutdown_grace_period=shutdown_grace_period,
            shutdown_grace_period_critical_pods=shutdown_grace_period_critical_pods,
            address=address,
            log_port=log_port,
            log_client_ca=connection.ca_pem,
            max_pods=max_pods,
            workers=HTTP_WORKERS,
            sync_frequency=sync_frequency,
            node_status_update_frequency=node_status_update_frequency,
            container_log_max_size=container_log_max_size,
            container_log_max_files=container_log_max_files,
        )
        if runtime == "process":
            # A root of its own (`--root-dir`) is this node's alone while it runs, so it removes the files of pods
            # it no longer has at start; the default root is shared, left as it is (`kjobs.node.rootlock`).
            from kjobs.node.process_runtime import default_root_dir
            from kjobs.node.rootlock import RootInUse, claim, foreign

            if root_dir is not None and foreign(root_dir):
                raise click.BadParameter(
                    f"{root_dir} holds files but no node's: give a new or empty directory (its pods' files "
                    "not of this node are removed at start)",
                    param_hint="--root-dir",
                )
            try:
                lock = claim(root_dir or default_root_dir() / name, exclusive=root_dir is not None)
            except RootInUse as exc:
                raise click.ClickException(f"node {name}: {exc}") from None
            click.get_current_context().call_on_close(partial(os.close, lock))
        tune_gc()  # a long-lived agent whose informer keeps every pod of the node
        hidden = (str(kubeconfig),) if kubeconfig is not None else ()  # the agent's credentials: not its pods'
        uvloop.run(_join(connection, name, runtime, root_dir, settings, outcome, hidden))  # as kjobs run and kjobs up
    except _Failed as exc:
        raise click.ClickException(str(exc)) from None


class _Failed(Exception):
    pass


def _sim_outcome(path: Path, seed: int) -> Any:
    """The simulated runtime's `OutcomeFn` from a `kjobs simulate` model file. Its disruptions are refused: they
    are applied by a simulation's cluster-side components, which a node agent alone does not have."""
    from kjobs.simulate.model import ModelError, load_model

    try:
        model = load_model(path)
    except ModelError as exc:
        raise click.BadParameter(str(exc), param_hint="--model") from None
    if model.disruptions:
        raise click.BadParameter(f"{path}: a node agent cannot apply disruptions", param_hint="--model")
    return model.outcome(seed)


async def _join(
    connection: Any,
    name: str,
    runtime: str,
    root_dir: Path | None,
    settings: Any,
    outcome: Any = None,
    hidden: tuple[str, ...] = (),
) -> None:
    from aiohttp import ClientError

    from kjobs.api.errors import ApiError
    from kjobs.api.types import Obj
    from kjobs.client.http import HttpClient
    from kjobs.client.resources import SERVICE_ACCOUNTS
    from kjobs.clock import RealClock
    from kjobs.node.agent import NodeAgent, TokenSource
    from kjobs.node.runtime import ContainerRuntime, StatusCallback

    clock = RealClock()

    def make_runtime(on_status: StatusCallback) -> ContainerRuntime:
        if runtime == "sim":
            from kjobs.node.process_runtime import START_REPORT_DELAY
            from kjobs.node.sim_runtime import SimulatedRuntime, succeed_at_once

            # on wall time, a container reads Running as late as a process's would (one status for a short one)
            return SimulatedRuntime(
                clock=clock,
                outcome=outcome or succeed_at_once,
                on_status=on_status,
                start_report_delay=START_REPORT_DELAY,
            )
        from kjobs.node.process_runtime import ProcessRuntime, default_root_dir

        return ProcessRuntime(
            root_dir=root_dir or default_root_dir() / name,
            clock=clock,
            on_status=on_status,
            hidden_paths=hidden,
            log_max_size=settings.container_log_max_size,
            log_max_files=settings.container_log_max_files,
            owns_root=root_dir is not None,
        )

    client = HttpClient(connection, user_agent=f"kjobs-node/{name}")
    tokens: TokenSource | None = None
    pod_api = pod_api_of(connection.server)
    if pod_api:  # the kubelet's token manager: TokenRequests with the node's own credentials

        async def create_token(namespace: str, account: str, body: Obj) -> Obj:
            return await client.post_subresource(SERVICE_ACCOUNTS, namespace, account, "token", body)

        tokens = create_token
        settings = replace(settings, pod_api=pod_api)
    agent = NodeAgent(client, name=name, clock=clock, runtime_factory=make_runtime, settings=settings, tokens=tokens)
    stop = asyncio.Event()
    release = stopping.on_loop(asyncio.get_running_loop(), stop.set)
    try:
        try:
            await agent.serve_logs()  # its port is in the Node the registration writes
            if not await _register_until_reachable(agent, name, connection.server, stop):
                click.echo(f"node {name}: stopped before it registered", err=True)
                return
            await agent.start(registered=True)
        except (ApiError, OSError, ClientError) as exc:
            raise _Failed(f"cannot register node {name} with {connection.server}: {exc}") from None
        click.echo(f"node {name} joined {connection.server}", err=True)
        settle_heap()  # as kjobs up: start-up's heap out of the collector's way
        await stop.wait()
        click.echo(f"node {name}: shutting down", err=True)
        with contextlib.suppress(Exception):
            await agent.shutdown_node()
    finally:
        await agent.stop()
        await client.close()
        release()


REGISTER_FIRST_STEP = 0.1
REGISTER_MAX_STEP = 7.0
"""The kubelet's registration back-off (pkg/kubelet/kubelet_node_status.go `registerWithAPIServer`): 100 ms,
doubled after each attempt, at most 7 s."""


def transient(exc: Exception) -> bool:
    """Whether a registration error is one the kubelet outlasts by trying again: no connection (the API server
    not up yet, or restarting), a connection it closed before answering, a 5xx or 429 answer. A refused
    certificate or a 4xx answer (bad credentials, an invalid node name) is a mistake no retry mends, so `kjobs
    node join` says so and exits, where a kubelet would log it forever."""
    import ssl

    from aiohttp import ClientError, ServerFingerprintMismatch

    from kjobs.api.errors import ApiError

    if isinstance(exc, ApiError):
        return exc.code >= 500 or exc.code == 429
    if isinstance(exc, ssl.SSLError | ServerFingerprintMismatch):
        return False
    return isinstance(exc, OSError | ClientError)


async def _register_until_reachable(agent: Any, name: str, server: str, stop: asyncio.Event) -> bool:
    """Register the node, retrying with the kubelet's back-off while the API server cannot be reached, so an
    agent started before `kjobs up` (or during its restart) joins once it serves. False if stopped first."""
    from aiohttp import ClientError

    from kjobs.api.errors import ApiError

    step = REGISTER_FIRST_STEP
    while True:
        try:
            await agent.register()
            return True
        except (ApiError, OSError, ClientError) as exc:
            if not transient(exc):
                raise
            click.echo(f"node {name}: cannot register with {server}: {exc}; retrying in {step:g}s", err=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), step)
            return False
        step = min(step * 2, REGISTER_MAX_STEP)


def pod_api_of(server: str) -> str:
    """`HOST:PORT` where a joined agent's pods reach the API server: the address the agent itself reaches it at
    (the kubeconfig's `server`, port 443 unless it names one), which the server's certificate names when it is
    `kjobs up`'s (its `--host` or loopback). Empty for plain http (`kjobs up --insecure-http-loopback`): no
    token authenticates there, so no token is requested (docs/service-account-tokens.md)."""
    parts = urlsplit(server)
    if parts.scheme != "https" or not parts.hostname:
        return ""
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    try:
        port = parts.port or 443
    except ValueError:
        return ""
    return f"{host}:{port}"


@node_group.command("shutdown")
@click.argument("name")
@click.option("--kubeconfig", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Kubeconfig file.")
@click.option("--wait/--no-wait", default=True, show_default=True, help="Wait until the node's pods have stopped.")
@click.option("--timeout", type=FloatRange(0), default=120.0, show_default=True, help="Seconds to wait.")
def shutdown(name: str, kubeconfig: Path | None, wait: bool, timeout: float) -> None:
    """Ask the agent of node NAME for a graceful node shutdown."""
    connection = _connection(kubeconfig)
    from kjobs.api.errors import ApiError

    try:
        done = asyncio.run(_shutdown(connection, name, wait, timeout))
    except _Failed as exc:
        raise click.ClickException(str(exc)) from None
    except ApiError as exc:
        raise click.ClickException(exc.message) from None
    except OSError as exc:
        raise click.ClickException(f"cannot reach {connection.server}: {exc}") from None
    if not done:
        raise click.ClickException(f"node {name} did not finish shutting down within {timeout:g}s")
    click.echo(f"node/{name} shut down" if wait else f"node/{name} shutdown requested")


async def _shutdown(connection: Any, name: str, wait: bool, timeout: float) -> bool:
    from kjobs.api.errors import ApiError
    from kjobs.client.http import HttpClient
    from kjobs.client.resources import NODES, PODS
    from kjobs.node.nodestatus import SHUTTING_DOWN_MESSAGE
    from kjobs.node.shutdown import request_shutdown

    client = HttpClient(connection, user_agent="kjobs-node-shutdown")
    try:
        try:
            await request_shutdown(client, name)
        except ApiError as exc:
            raise _Failed(exc.message) from None
        if not wait:
            return True
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            node = await client.get(NODES, None, name)
            conditions = node.get("status", {}).get("conditions") or []
            ready: dict[str, Any] = next((c for c in conditions if c.get("type") == "Ready"), {})
            if ready.get("message") == SHUTTING_DOWN_MESSAGE:
                pods, _ = await client.list(PODS, None, field_selector=f"spec.nodeName={name}")
                if all((p.get("status") or {}).get("phase") in ("Succeeded", "Failed") for p in pods):
                    return True
            await asyncio.sleep(0.2)
        return False
    finally:
        await client.close()
