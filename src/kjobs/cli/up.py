"""`kjobs up`: run the API server, every controller and the local node agents in the foreground.

One process, one event loop: the HTTP API (for kubectl and the Python client) and the embedded cluster
(`kjobs.cluster.LocalCluster`: Job controller, scheduler, node lifecycle, taint eviction, pod GC,
disruption, garbage collector, TTL, and `--nodes` node agents running pods as local processes) share one
`ApiService`; pod logs come from the agents (`AgentLogs`), or from agents that joined from other processes
(`kjobs node join`) through their log endpoint. `/metrics` serves the controllers' metrics.
Writes a kubeconfig (context `kjobs`), says on stderr what it serves (URL, kubeconfig, data directory, nodes) and
prints the `export KUBECONFIG=...` line on stdout once everything runs; SIGINT/SIGTERM stop it (exit 0) with a
last line saying so.
On 127.0.0.1 it serves plain http without authentication (kubectl sends no credentials over http anyway);
on any other address it serves TLS with a self-signed certificate and requires the generated bearer token.
The data directory keeps the objects (SQLite), so a second `kjobs up` resumes where the first stopped.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.cli.features import feature_gates_option

if TYPE_CHECKING:
    from kjobs.server.admission import AdmissionSettings

DEFAULT_PORT = 6443


def default_data_dir() -> Path:
    """`$XDG_DATA_HOME/kjobs`, or `~/.local/share/kjobs`."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "kjobs"


def _loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


@click.command("up")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True, help="Port to listen on."
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; anything but loopback gets TLS and a bearer token.",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where objects are kept [default: $XDG_DATA_HOME/kjobs].",
)
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Kubeconfig file to write [default: ~/.kube/kjobs.yaml].",
)
@click.option(
    "--nodes",
    type=click.IntRange(0, 64),
    default=1,
    show_default=True,
    help="Local node agents to run (0: the API and controllers only).",
)
@click.option(
    "--backoff",
    type=float,
    default=10.0,
    show_default=True,
    help="Base pod-failure back-off in seconds (Kubernetes: 10 s, doubling to 10 min).",
)
@click.option(
    "--default-not-ready-toleration-seconds",
    type=int,
    default=300,
    show_default=True,
    help="The tolerationSeconds of the not-ready:NoExecute toleration added to every pod without one.",
)
@click.option(
    "--default-unreachable-toleration-seconds",
    type=int,
    default=300,
    show_default=True,
    help="The tolerationSeconds of the unreachable:NoExecute toleration added to every pod without one.",
)
@feature_gates_option
def up(
    port: int,
    host: str,
    data_dir: Path | None,
    kubeconfig: Path | None,
    nodes: int,
    default_not_ready_toleration_seconds: int,
    default_unreachable_toleration_seconds: int,
    backoff: float,
    features: FeatureGates,
) -> None:
    """Start kjobs: the Kubernetes API server, the controllers and a local node."""
    from kjobs.api.errors import ApiError
    from kjobs.server import kubeconfig as kubeconfig_file
    from kjobs.server import tls
    from kjobs.server.admission import AdmissionSettings
    from kjobs.server.runner import bind, run_forever
    from kjobs.store import open_store

    data = data_dir or default_data_dir()
    config_path = kubeconfig or Path(os.path.expanduser("~")) / ".kube" / "kjobs.yaml"
    try:
        store = open_store(str(data))
    except (ApiError, OSError) as exc:
        raise click.ClickException(f"cannot open the data directory {data}: {exc}") from None
    try:
        sock = bind(host, port)
    except OSError as exc:
        store.close()
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    actual_port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    certfile = keyfile = None
    token = ca = None
    if _loopback(host):
        url = f"http://{shown}:{actual_port}"
    else:
        creds = tls.ensure(data / "pki", host)
        certfile, keyfile, token, ca = str(creds.certfile), str(creds.keyfile), creds.token, creds.cert_pem
        url = f"https://{shown}:{actual_port}"
    kubeconfig_file.write(config_path, url, ca_pem=ca, token=token)
    admission = AdmissionSettings(
        default_not_ready_toleration_seconds=default_not_ready_toleration_seconds,
        default_unreachable_toleration_seconds=default_unreachable_toleration_seconds,
    )
    cluster, app = _assemble(
        store, token=token, nodes=nodes, data=data, backoff=backoff, admission=admission, features=features
    )

    def ready() -> None:
        names = ", ".join(cluster.node_names()) or "none (the API and controllers only; add one with kjobs node join)"
        click.echo(f"kjobs API server listening on {url}", err=True)
        click.echo(f"  kubeconfig: {config_path} (context kjobs)", err=True)
        click.echo(f"  data:       {data}", err=True)
        click.echo(f"  nodes:      {names}", err=True)
        click.echo(f"export KUBECONFIG={config_path}")
        sys.stdout.flush()

    try:
        run_forever(app, sock, ssl_certfile=certfile, ssl_keyfile=keyfile, on_ready=ready, components=[cluster])
    finally:
        store.close()
        sock.close()
    click.echo(f"kjobs API server on {url} stopped", err=True)


def _assemble(
    store: Any,
    *,
    token: str | None,
    nodes: int,
    data: Path,
    backoff: float = 10.0,
    admission: AdmissionSettings | None = None,
    features: FeatureGates = DEFAULT,
) -> tuple[Any, Any]:
    """The app and the embedded cluster around its `ApiService`, with logs and metrics wired between them
    (`admission`: the `AdmissionSettings` from the kube-apiserver flags; Kubernetes' defaults when None)."""
    from prometheus_client import REGISTRY

    from kjobs.cluster import ClusterSettings, LocalCluster
    from kjobs.job.metrics import JobMetrics
    from kjobs.node.logsource import AgentLogs, RemoteLogs
    from kjobs.server.app import create_app

    app_ref: list[Any] = []

    def node_of(name: str) -> Any:
        return app_ref[0].storage.get("nodes", "", name)

    logs = AgentLogs(remote=RemoteLogs(node_of))
    settings = ClusterSettings(
        nodes=nodes, root_dir=str(data / "nodes"), pod_failure_backoff=backoff, features=features
    )
    if admission is not None:
        settings = replace(settings, admission=admission)
    app = create_app(store, token=token, logs=logs, admission=settings.admission, features=features)
    app_ref.append(app)
    cluster = LocalCluster(app.service, settings=settings, job_metrics=JobMetrics(REGISTRY), logs=logs)
    registries = [REGISTRY]
    for component in cluster.controllers:
        registry = getattr(getattr(component, "metrics", None), "registry", None)
        if registry is not None and registry not in registries:
            registries.append(registry)
    app.metrics = registries
    return cluster, app
