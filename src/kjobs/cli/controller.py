"""`kjobs controller --kubeconfig FILE`: kjobs' controllers alone, against any Kubernetes API server.

By default only the Job controller runs. On a real cluster, which runs its own Job controller, give
`--managed-by NAME` (for example `kjobs.io/job-controller`): kjobs then reconciles exactly the Jobs whose
`spec.managedBy` is NAME, and the cluster's controller leaves those alone — Kubernetes' own hand-over mechanism.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Any

import click

from kjobs.api.features import FeatureGates
from kjobs.cli.features import feature_gates_option
from kjobs.cli.params import FloatRange
from kjobs.controllers import CONTROLLER_NAMES as CONTROLLERS
from kjobs.controllers import select_controllers
from kjobs.stopping import held, on_loop

terminated_pod_gc_threshold_option = click.option(
    "--terminated-pod-gc-threshold",
    type=int,
    default=12500,
    show_default=True,
    help=(
        "Number of terminated pods that can exist before the terminated pod garbage collector starts deleting "
        "terminated pods. If <= 0, the terminated pod garbage collector is disabled."
    ),
)
"""kube-controller-manager's flag, with its default and help (cmd/kube-controller-manager), for `kjobs controller`
and `kjobs up`."""


@click.command("controller")
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="Kubeconfig of the API server [default: $KUBECONFIG or ~/.kube/config].",
)
@click.option("--context", default=None, help="Kubeconfig context [default: the current context].")
@click.option(
    "--controllers",
    default="job",
    show_default=True,
    help=(
        f"Comma-separated controllers to run ({', '.join(CONTROLLERS)}); "
        "'*' or 'all' for every one, '-NAME' to leave one out."
    ),
)
@click.option(
    "--managed-by",
    default=None,
    help="Reconcile only Jobs whose spec.managedBy is this value [default: Jobs of the built-in controller].",
)
@click.option(
    "--backoff",
    type=FloatRange(min=0),
    default=10.0,
    show_default=True,
    help="Pod-failure back-off base, seconds.",
)
@click.option(
    "--metrics-port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Serve Prometheus metrics on this port of 127.0.0.1.",
)
@click.option(
    "--leader-elect/--no-leader-elect",
    default=True,
    show_default=True,
    help=(
        "Run each controller only while it holds its Lease, kube-system/kjobs-<controller> (kube-controller-manager's "
        "--leader-elect): a second instance against the same API server waits instead of doing the same work."
    ),
)
@click.option(
    "--leader-elect-resource-namespace",
    default="kube-system",
    show_default=True,
    help="Namespace of the Leases (on a cluster where you may not write Leases in kube-system, one you may).",
)
@terminated_pod_gc_threshold_option
@feature_gates_option
def controller_command(
    kubeconfig: str | None,
    context: str | None,
    controllers: str,
    managed_by: str | None,
    backoff: float,
    metrics_port: int | None,
    leader_elect: bool,
    leader_elect_resource_namespace: str,
    features: FeatureGates,
    terminated_pod_gc_threshold: int = 12500,
) -> None:
    """Run kjobs' controllers against a Kubernetes API server until interrupted."""
    # From here a stop signal (SIGINT, SIGTERM, SIGHUP) is a graceful stop, exit 0, even while starting.
    click.get_current_context().with_resource(held())
    from kjobs.client.kubeconfig import KubeconfigError, load

    try:
        names = select_controllers(controllers)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if not names:
        raise click.UsageError(f"no controller selected; choose from {', '.join(CONTROLLERS)}")
    try:
        connection = load(kubeconfig, context=context)
    except KubeconfigError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    with contextlib.suppress(KeyboardInterrupt):
        from kjobs.cluster import ClusterSettings
        from kjobs.controllers.podgc import PodGCSettings

        # the root CA publisher's bundle: the kubeconfig's CA, as kube-controller-manager's without --root-ca-file
        root_ca = (connection.ca_pem or b"").decode()
        pod_gc = PodGCSettings(terminated_pod_threshold=max(terminated_pod_gc_threshold, 0))
        settings = ClusterSettings(pod_failure_backoff=backoff, features=features, root_ca=root_ca, pod_gc=pod_gc)
        lost = asyncio.run(
            _run(
                connection,
                names,
                managed_by=managed_by,
                settings=settings,
                metrics_port=metrics_port,
                leader_elect=leader_elect,
                lease_namespace=leader_elect_resource_namespace,
            )
        )
        if lost:
            click.echo(f"error: leaderelection lost: {lost}", err=True)
            sys.exit(1)


async def _run(
    connection: Any,
    names: tuple[str, ...],
    *,
    managed_by: str | None,
    settings: Any,
    metrics_port: int | None,
    leader_elect: bool = True,
    lease_namespace: str = "kube-system",
) -> str:
    """Run until SIGINT/SIGTERM/SIGHUP (then ""), or until a controller's Lease is lost (then which: kube-controller-
    manager exits then too, and whoever restarts it campaigns again)."""
    from prometheus_client import REGISTRY

    from kjobs.client.http import HttpClient
    from kjobs.clock import RealClock
    from kjobs.cluster import build_controllers, metric_registries, tune_gc
    from kjobs.job.metrics import JobMetrics
    from kjobs.server import exposition

    tune_gc()
    client = HttpClient(connection, user_agent="kjobs-controller")
    clock = RealClock()
    named = build_controllers(
        client,
        clock,
        names=names,
        settings=settings,
        job_metrics=JobMetrics(REGISTRY),
        managed_by=managed_by,
    )
    components = list(named.values())
    if metrics_port is not None:
        exposition.serve(metrics_port, metric_registries(components, first=[REGISTRY]))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    on_loop(loop, stop.set)  # given back when the loop closes, at the end of `asyncio.run`
    if leader_elect:
        try:
            return await _elected(client, clock, named, managed_by, stop, f"{connection.server}", lease_namespace)
        finally:
            await client.close()
    started: list[Any] = []

    async def start_all() -> None:
        for component in components:
            await component.start()
            started.append(component)
        click.echo(f"kjobs controllers running against {connection.server}: {', '.join(names)}", err=True)

    # A controller starts once its informers have listed; one whose credentials may not list (403, retried) never
    # would, so Ctrl-C or SIGTERM must end the start too, not only what has started.
    starting = loop.create_task(start_all())
    stopping = loop.create_task(stop.wait())
    try:
        done, _ = await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if starting in done:
            starting.result()
            await stopping
    finally:
        for task in (starting, stopping):
            task.cancel()
        for component in reversed(started):
            with contextlib.suppress(Exception):
                await component.stop()
        await client.close()
    return ""


async def _elected(
    client: Any, clock: Any, named: dict[str, Any], managed_by: str | None, stop: Any, server: str, namespace: str
) -> str:
    """Each controller campaigns for its Lease and runs while it holds it (`kjobs.controllers.leaderelection`)."""
    from kjobs.client.events import EventRecorder
    from kjobs.cluster import CONTROLLER_MANAGER
    from kjobs.controllers.leaderelection import LeaderElector, lead, lease_name, new_identity

    identity = new_identity()
    recorder = EventRecorder(client, component=CONTROLLER_MANAGER, clock=clock)
    lost: list[str] = []
    click.echo(f"kjobs controllers against {server}: {', '.join(named)} (identity {identity})", err=True)

    def campaign(name: str, component: Any) -> Any:
        elector = LeaderElector(
            client, clock, lease_name(name, managed_by), identity=identity, namespace=namespace, recorder=recorder
        )

        async def start() -> None:
            await component.start()
            click.echo(f"controller {name}: leading (lease {elector.lock})", err=True)

        def waiting(holder: str) -> None:
            click.echo(f"controller {name}: waiting, lease {elector.lock} is held by {holder}", err=True)

        def gone() -> None:
            lost.append(f"controller {name}: lease {elector.lock} was taken by {elector.holder}")
            stop.set()

        return lead(elector, start, component.stop, on_wait=waiting, on_lost=gone)

    tasks = [asyncio.get_running_loop().create_task(campaign(n, c)) for n, c in named.items()]
    try:
        await stop.wait()
    finally:
        for task in tasks:  # each stops what it leads and releases its Lease
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await recorder.flush()
    return "; ".join(lost)
