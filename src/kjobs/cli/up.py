"""`kjobs up`: run the API server, every controller and the local node agents in the foreground.

One process, one event loop: the HTTP API (for kubectl and the Python client) and the embedded cluster
(`kjobs.cluster.LocalCluster`: Job controller, scheduler, node lifecycle, taint eviction, pod GC,
disruption, garbage collector, TTL, and `--nodes` node agents running pods as local processes) share one
`ApiService`; pod logs come from the agents (`AgentLogs`), or from agents that joined from other processes
(`kjobs node join`) through their log endpoint. `/metrics` serves the controllers' metrics. `--controllers`
selects the controllers as kube-controller-manager's flag does (`*,-job`: all but the Job controller, which
`kjobs controller` may then run in a process of its own).
Writes a kubeconfig (context `kjobs`), says on stderr what it serves (URL, kubeconfig, data directory, nodes) and
prints the `export KUBECONFIG=...` line on stdout once everything runs; SIGINT/SIGTERM/SIGHUP stop it (exit 0) with
a last line saying so, also when one comes while it starts (`kjobs.stopping`).
It serves HTTPS on every address, loopback included, with the PKI it keeps in `<data-dir>/pki`
(`kjobs.server.tls`: a CA, a serving certificate, the admin's and the kubelet client certificates, a bearer token), and
authenticates every request (`kjobs.server.auth`); the kubeconfig carries the CA and the admin certificate.
`--insecure-http-loopback` serves plain http without authentication instead, on loopback only: anyone on the
machine (or a web page that makes the browser post to it) can then run commands as this user.
The data directory keeps the objects (SQLite), so a second `kjobs up` resumes where the first stopped; a damaged
data file is refused, naming the damaged objects (`kjobs.store.integrity`), unless `--repair` deletes them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.cli.controller import terminated_pod_gc_threshold_option
from kjobs.cli.features import feature_gates_option
from kjobs.cli.params import FloatRange

if TYPE_CHECKING:
    from kjobs.controllers.nodelifecycle import NodeLifecycleSettings
    from kjobs.server.admission import AdmissionSettings
    from kjobs.server.auth import Authenticator
    from kjobs.server.tls import Pki
    from kjobs.store import StoreDamaged

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_PORT = 6443
DEFAULT_SYNC_FREQUENCY = "1m0s"
"""The kubelet's `--sync-frequency` default, as its help prints it."""


def _sync_frequency(_ctx: click.Context, _param: click.Parameter, value: str) -> float:
    """`--sync-frequency`: a Go duration (`30s`, `1m`, `1m30s`; Go's `time.ParseDuration`), greater than zero (a
    zero period would resync every pod without pause)."""
    from kjobs.api.cron import CronError, parse_go_duration

    try:
        seconds = parse_go_duration(value)
    except CronError as exc:
        raise click.BadParameter(str(exc)) from None
    if seconds <= 0:
        raise click.BadParameter(f"{value} must be greater than zero")
    return seconds


sync_frequency_option = click.option(
    "--sync-frequency",
    default=DEFAULT_SYNC_FREQUENCY,
    show_default=True,
    callback=_sync_frequency,
    metavar="DURATION",
    help=(
        "Max period between synchronizing running containers and config, as the kubelet's flag: how often the "
        "node agent remounts a running pod's configMap, secret, downwardAPI and projected volumes (jittered up to "
        "1.5 times, as the kubelet's pod workers)."
    ),
)
"""The kubelet's `--sync-frequency`, on `kjobs up` (its local node agents) and `kjobs node join`."""


def _container_log_max_size(_ctx: click.Context, _param: click.Parameter, value: str) -> int:
    """`--container-log-max-size`: a quantity (`10Mi`) that is a whole number of bytes, as the kubelet's
    `parseMaxSize` takes it (pkg/kubelet/logs/container_log_manager.go); 0 or less: no rotation."""
    from kjobs.api.quantity import QuantityError, parse_quantity

    try:
        size = parse_quantity(value).value
    except QuantityError as exc:
        raise click.BadParameter(f"failed to parse container log max size {value!r}: {exc}") from None
    if size.denominator != 1 or not -(2**63) <= size.numerator < 2**63:
        raise click.BadParameter(f"failed to parse container log max size {value!r}: invalid max log size")
    return int(size)


def _container_log_max_files(_ctx: click.Context, _param: click.Parameter, value: int) -> int:
    """`--container-log-max-files`: more than one (the kubelet's `NewContainerLogManager` refuses fewer)."""
    if value <= 1:
        raise click.BadParameter(f"invalid MaxFiles {value}, must be > 1")
    return value


container_log_options = (
    click.option(
        "--container-log-max-size",
        default="10Mi",
        show_default=True,
        callback=_container_log_max_size,
        metavar="QUANTITY",
        help="Set the maximum size (e.g. 10Mi) of container log file before it is rotated, as the kubelet's flag "
        "(0: never rotated).",
    ),
    click.option(
        "--container-log-max-files",
        type=int,
        default=5,
        show_default=True,
        callback=_container_log_max_files,
        metavar="INT",
        help="Set the maximum number of container log files that can be present for a container. The number must "
        "be >= 2.",
    ),
)
"""The kubelet's log rotation flags, on `kjobs up` (its local node agents) and `kjobs node join`."""


def container_log_flags(function: F) -> F:
    """Add `container_log_options` to a command."""
    for option in reversed(container_log_options):
        function = option(function)
    return function


def _event_ttl(_ctx: click.Context, _param: click.Parameter, value: str) -> float:
    """`--event-ttl`: a Go duration, 0 or more (0: Events never expire, as kube-apiserver stores them without a
    lease then, `TTLFunc` answering 0)."""
    from kjobs.api.cron import CronError, parse_go_duration

    try:
        seconds = parse_go_duration(value)
    except CronError as exc:
        raise click.BadParameter(str(exc)) from None
    if seconds < 0:
        raise click.BadParameter(f"{value} must not be negative")
    return seconds


def duration_option(name: str, default: str, help_text: str, **extra: Any) -> Callable[[F], F]:
    """A Go-duration flag (`40s`, `1m0s`) greater than zero, in seconds, as `--sync-frequency`."""
    return click.option(
        name, default=default, show_default=True, callback=_sync_frequency, metavar="DURATION", help=help_text, **extra
    )


node_monitor_options = (
    duration_option(
        "--node-monitor-period",
        "5s",
        "The period for syncing NodeStatus in cloud-node-lifecycle-controller.",
    ),
    duration_option(
        "--node-monitor-grace-period",
        "50s",
        "Amount of time which we allow running Node to be unresponsive before marking it unhealthy. Must be N times "
        "more than kubelet's nodeStatusUpdateFrequency, where N means number of retries allowed for kubelet to post "
        "node status.",
    ),
    duration_option(
        "--node-startup-grace-period",
        "1m0s",
        "Amount of time which we allow starting Node to be unresponsive before marking it unhealthy.",
    ),
    click.option(
        "--node-eviction-rate",
        type=float,
        default=0.1,
        show_default=True,
        help="Number of nodes per second on which pods are deleted in case of node failure when a zone is healthy "
        "(see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in "
        "non-multizone clusters.",
    ),
    click.option(
        "--pod-gc-period",
        type=FloatRange(0, min_open=True),
        default=None,
        hidden=True,
        help="Testing only: seconds between the pod GC's passes (Kubernetes: 20 s, a constant); a node gone from the "
        "API is confirmed gone after twice as long (Kubernetes' quarantine: 40 s), so a test sees a deleted node's "
        "pods collected in seconds.",
    ),
)
"""kube-controller-manager's node lifecycle flags (their help as cmd/kube-controller-manager prints it; the first is
shared by the cloud and the built-in node lifecycle controllers, hence its wording), and a testing-only pod GC
period: a node lost for good is seen, tainted and its pods collected within a test's time."""


def _node_monitor(func: F) -> F:
    for option in reversed(node_monitor_options):
        func = option(func)
    return func


DEFAULT_STORE_PACK_ABOVE = 25_000
"""`kjobs.store.packing.PACK_ABOVE`, written out so that the CLI does not import the store to show its help."""


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
    help="Address to listen on (HTTPS with client certificates or a bearer token, on every address).",
)
@click.option(
    "--insecure-http-loopback",
    is_flag=True,
    default=False,
    help="INSECURE: serve plain http without authentication (loopback only); anyone on this machine can then "
    "run commands as you.",
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
    type=FloatRange(min=0),
    default=10.0,
    show_default=True,
    help="Base pod-failure back-off in seconds (Kubernetes: 10 s, doubling to 10 min).",
)
@click.option(
    "--job-batch-period",
    type=FloatRange(0, min_open=True),
    default=1.0,
    show_default=True,
    help="Seconds the Job controller gathers a Job's pod events before syncing it (Kubernetes: 1 s; timing only).",
)
@click.option(
    "--cronjob-clock-rate",
    type=FloatRange(0, min_open=True),
    default=1.0,
    hidden=True,
    help="Testing only: run the CronJob controller's clock this many times faster than wall time (60: a minute "
    "a second), so a test sees minute schedules fire in seconds. kube-controller-manager has no such flag.",
)
@click.option(
    "--history-size",
    type=click.IntRange(min=1),
    default=None,
    hidden=True,
    help="Testing only: changes of each resource kept for watches and continue tokens, past which an older "
    "resourceVersion answers 410 Expired (kube-apiserver's etcd compacts by time instead, every "
    "--etcd-compaction-interval, 5 minutes), so a test sees a token expire after a few hundred writes.",
)
@click.option(
    "--repair",
    is_flag=True,
    help="Start even if the store is damaged, deleting the damaged objects (each is named on stderr).",
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
@click.option(
    "--enable-admission-plugins",
    "enable_admission_plugins",
    multiple=True,
    metavar="NAME,...",
    help=(
        "Admission plugins to enable beside the default ones, as kube-apiserver's flag (kjobs does only default "
        "ones: NamespaceLifecycle, ServiceAccount, DefaultTolerationSeconds, Priority)."
    ),
)
@click.option(
    "--disable-admission-plugins",
    "disable_admission_plugins",
    multiple=True,
    metavar="NAME,...",
    help=(
        "Admission plugins to disable although they are on by default, as kube-apiserver's flag "
        "(for example Priority, ServiceAccount, DefaultTolerationSeconds)."
    ),
)
@click.option(
    "--controllers",
    default="*",
    show_default=True,
    help=(
        "Controllers to run, as kube-controller-manager's flag: '*' for every one, '-NAME' to leave one out "
        "(for example '*,-job' to run the Job controller apart with `kjobs controller`)."
    ),
)
@click.option(
    "--min-request-timeout",
    type=int,
    default=1800,
    show_default=True,
    help=(
        "An optional field indicating the minimum number of seconds a handler must keep a request open before "
        "timing it out. Currently only honored by the watch request handler, which picks a randomized value above "
        "this number as the connection timeout, to spread out load."
    ),
)
@click.option(
    "--event-ttl",
    default="1h0m0s",
    show_default=True,
    callback=_event_ttl,
    metavar="DURATION",
    help="Amount of time to retain events.",
)
@sync_frequency_option
@container_log_flags
@click.option(
    "--store-pack-above",
    type=click.IntRange(min=0),
    default=DEFAULT_STORE_PACK_ABOVE,
    show_default=True,
    metavar="OBJECTS",
    help=(
        "Pack (compress in memory) a resource's cold stored objects only while it holds at least this many "
        "(0: from the first object): less memory for large stores, some CPU per write. kjobs only."
    ),
)
@terminated_pod_gc_threshold_option
@_node_monitor
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
    job_batch_period: float,
    cronjob_clock_rate: float,
    controllers: str,
    insecure_http_loopback: bool,
    features: FeatureGates,
    repair: bool = False,
    min_request_timeout: int = 1800,
    terminated_pod_gc_threshold: int = 12500,
    history_size: int | None = None,
    enable_admission_plugins: tuple[str, ...] = (),
    disable_admission_plugins: tuple[str, ...] = (),
    sync_frequency: float = 60.0,
    container_log_max_size: int = 10 * 1024 * 1024,
    container_log_max_files: int = 5,
    store_pack_above: int = DEFAULT_STORE_PACK_ABOVE,
    node_monitor_period: float = 5.0,
    node_monitor_grace_period: float = 50.0,
    node_startup_grace_period: float = 60.0,
    node_eviction_rate: float = 0.1,
    pod_gc_period: float | None = None,
    event_ttl: float = 3600.0,
) -> None:
    """Start kjobs: the Kubernetes API server, the controllers and a local node."""
    from kjobs import stopping

    # From here a stop signal is a graceful stop, exit 0, even before the server takes it (`kjobs.stopping`).
    click.get_current_context().with_resource(stopping.held())
    from kjobs.api.errors import ApiError
    from kjobs.controllers import select_controllers
    from kjobs.controllers.nodelifecycle import NodeLifecycleSettings
    from kjobs.server import kubeconfig as kubeconfig_file
    from kjobs.server import tls
    from kjobs.server.admission import AdmissionSettings, admission_plugins
    from kjobs.server.auth import Authenticator
    from kjobs.server.runner import bind, run_forever
    from kjobs.server.satokens import load_or_create_key
    from kjobs.store import StoreDamaged, open_store

    if min_request_timeout < 0:  # kube-apiserver's ServerRunOptions.Validate
        raise click.UsageError("--min-request-timeout can not be negative value")
    disabled_plugins, errors = admission_plugins(_split(enable_admission_plugins), _split(disable_admission_plugins))
    if errors:  # kube-apiserver's aggregate of `Validate`'s errors: one as it is, several in brackets
        raise click.UsageError(errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]")
    try:
        names = select_controllers(controllers)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if insecure_http_loopback and not _loopback(host):
        raise click.BadParameter(
            f"{host} is not a loopback address; plain http is only served on loopback", param_hint="--host"
        )
    # Absolute from here on: pods' mount namespaces and processes start in other working directories.
    data = (data_dir or default_data_dir()).absolute()
    config_path = (kubeconfig or Path(os.path.expanduser("~")) / ".kube" / "kjobs.yaml").absolute()
    try:
        history = {} if history_size is None else {"history_size": history_size}  # the store's own default
        store = open_store(str(data), repair=repair, pack_above=store_pack_above, **history)
    except StoreDamaged as exc:
        raise click.ClickException(damage_report(exc, data)) from None
    except (ApiError, OSError) as exc:
        raise click.ClickException(f"cannot open the data directory {data}: {exc}") from None
    try:
        sock = bind(host, port)
    except OSError as exc:
        store.close()
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    actual_port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    pki = authenticator = None
    if insecure_http_loopback:
        url = f"http://{shown}:{actual_port}"
    else:
        try:
            pki = tls.ensure(data / "pki", host)
        except OSError as exc:
            store.close()
            sock.close()
            raise click.ClickException(f"cannot create the certificates in {data / 'pki'}: {exc}") from None
        try:
            load_or_create_key(pki.directory)  # an unreadable key is refused here, before anything starts
        except OSError as exc:
            store.close()
            sock.close()
            raise click.ClickException(str(exc)) from None
        authenticator = Authenticator(pki.token)
        url = f"https://{shown}:{actual_port}"
    try:
        kubeconfig_file.write(config_path, url, pki=pki)
    except OSError as exc:
        store.close()
        sock.close()
        raise click.ClickException(f"cannot write the kubeconfig {config_path}: {exc.strerror or exc}") from None
    admission = AdmissionSettings(
        default_not_ready_toleration_seconds=default_not_ready_toleration_seconds,
        default_unreachable_toleration_seconds=default_unreachable_toleration_seconds,
        disabled_plugins=disabled_plugins,
        service_account_lookup=True,
    )
    cluster, app = _assemble(
        store,
        authenticator=authenticator,
        pki=pki,
        pod_api=f"{_pod_host(host)}:{actual_port}" if pki is not None else "",
        nodes=nodes,
        data=data,
        backoff=backoff,
        job_batch_period=job_batch_period,
        cronjob_clock_rate=cronjob_clock_rate,
        admission=admission,
        controllers=names,
        features=features,
        min_request_timeout=min_request_timeout,
        terminated_pod_gc_threshold=terminated_pod_gc_threshold,
        kubeconfig=config_path,
        sync_frequency=sync_frequency,
        container_log_rotation=(container_log_max_size, container_log_max_files),
        node_lifecycle=NodeLifecycleSettings(
            monitor_period=node_monitor_period,
            grace_period=node_monitor_grace_period,
            startup_grace_period=node_startup_grace_period,
            eviction_qps=node_eviction_rate,
        ),
        pod_gc_period=pod_gc_period,
        event_ttl=event_ttl,
    )

    def ready() -> None:
        if insecure_http_loopback:
            click.echo(
                "WARNING: --insecure-http-loopback: plain http, no authentication; anyone on this machine "
                "(or a web page in your browser) can create pods and run commands as this user",
                err=True,
            )
        names = ", ".join(cluster.node_names()) or "none (the API and controllers only; add one with kjobs node join)"
        click.echo(f"kjobs API server listening on {url}", err=True)
        click.echo(f"  kubeconfig: {config_path} (context kjobs)", err=True)
        click.echo(f"  data:       {data}", err=True)
        if pki is not None:
            click.echo(f"  pki:        {pki.directory} (CA ca.crt, admin certificate, bearer token)", err=True)
        click.echo(f"  nodes:      {names}", err=True)
        click.echo(f"export KUBECONFIG={config_path}")
        sys.stdout.flush()
        settle_heap()

    from kjobs.cluster import tune_gc

    tune_gc()  # a long-lived control plane, as `kjobs run` and `kjobs controller`
    try:
        run_forever(app, sock, pki=pki, on_ready=ready, components=[cluster])
    finally:
        store.close()
        sock.close()
    click.echo(f"kjobs API server on {url} stopped", err=True)


def settle_heap() -> None:
    """Move start-up's heap (modules, schemas, OpenAPI documents, the objects read from the data directory) to the
    permanent generation (`gc.freeze`), where the cyclic collector no longer walks it: a full collection of a
    serving process then scans only what serving made, not start-up's heap too (CPython's `gc.freeze`
    documentation suggests it for long-lived processes after start-up).

    Frozen as it is, without a collection first: start-up's garbage is the classes imports make and drop (the
    first class of each `dataclass(slots=True)`, the enums `ssl`, `socket` and `signal` convert), some 700 objects
    and 170 KB, fresh or resumed, and a full collection to free them walked the whole start-up heap (about 95,000
    objects): 55 to 90 ms of CPU at every start (docs/upstart57.md)."""
    import gc

    gc.freeze()


def damage_report(exc: StoreDamaged, data: Path) -> str:
    """Why `kjobs up` refuses a damaged store, what is damaged (`kjobs.store.integrity`) and how to recover."""
    if exc.repairable:
        how = (
            f"To start without the objects named (they are deleted: controllers recreate what they own, such as a"
            f" Job's pods; the rest is lost), run: kjobs up --data-dir {data} --repair\n"
            f"Or restore {exc.path} from a copy."
        )
    else:
        how = (
            f"It cannot be repaired in place: restore {exc.path} from a copy (or recover rows with sqlite3's .recover)."
        )
    return f"{exc.message}\n{how}"


def _assemble(
    store: Any,
    *,
    authenticator: Authenticator | None,
    nodes: int,
    data: Path,
    backoff: float = 10.0,
    job_batch_period: float = 1.0,
    cronjob_clock_rate: float = 1.0,
    admission: AdmissionSettings | None = None,
    controllers: tuple[str, ...] | None = None,
    features: FeatureGates = DEFAULT,
    pki: Pki | None = None,
    min_request_timeout: float = 1800.0,
    terminated_pod_gc_threshold: int = 12500,
    pod_api: str = "",
    kubeconfig: Path | None = None,
    sync_frequency: float = 60.0,
    node_lifecycle: NodeLifecycleSettings | None = None,
    container_log_rotation: tuple[int, int] = (10 * 1024 * 1024, 5),
    pod_gc_period: float | None = None,
    event_ttl: float = 3600.0,
) -> tuple[Any, Any]:
    """The app and the embedded cluster around its `ApiService`, with logs and metrics wired between them
    (`admission`: the `AdmissionSettings` from the kube-apiserver flags; Kubernetes' defaults when None;
    `controllers`: those to run, every one when None; `pki`: whose kubelet client certificate reads the logs of
    agents in other processes, over HTTPS; `min_request_timeout`: `--min-request-timeout`, the seconds after one
    to two times which a watch without `timeoutSeconds` ends; `cronjob_clock_rate`: the CronJob controller's
    clock speed, `ClusterSettings.cronjob_clock_rate`; `terminated_pod_gc_threshold`: kube-controller-manager's
    `--terminated-pod-gc-threshold`, the terminated pods kept before the pod GC deletes the oldest, none deleted
    when <= 0; `pod_api`: where pods reach this server with their ServiceAccount tokens, signed with the key in
    `pki`'s directory; `kubeconfig`: the file written for the admin, which pods in a mount namespace do not see,
    nor `data`: docs/security.md; `sync_frequency`: the kubelet's `--sync-frequency` of the local node agents;
    `node_lifecycle`: the node lifecycle controller's flags (`--node-monitor-period`, `--node-monitor-grace-period`,
    `--node-startup-grace-period`, `--node-eviction-rate`), Kubernetes' defaults when None; `pod_gc_period`: the
    pod GC's period, its quarantine twice that, Kubernetes' 20 s and 40 s when None; `container_log_rotation`: the
    kubelet's `--container-log-max-size` and `--container-log-max-files` of the local node agents; `event_ttl`:
    kube-apiserver's `--event-ttl`, seconds an Event is kept after its last write, 0: for ever)."""
    from prometheus_client import REGISTRY

    from kjobs.cluster import ClusterSettings, LocalCluster, metric_registries
    from kjobs.controllers import CONTROLLER_NAMES
    from kjobs.controllers.nodelifecycle import NodeLifecycleSettings
    from kjobs.controllers.podgc import PodGCSettings
    from kjobs.job.metrics import JobMetrics
    from kjobs.node.logsource import AgentLogs, RemoteLogs
    from kjobs.server.app import create_app
    from kjobs.server.tls import kubelet_client_context

    app_ref: list[Any] = []

    def node_of(name: str) -> Any:
        return app_ref[0].storage.get("nodes", "", name)

    gc_timing = {} if pod_gc_period is None else {"period": pod_gc_period, "quarantine": 2 * pod_gc_period}
    logs = AgentLogs(remote=RemoteLogs(node_of, ssl_context=kubelet_client_context(pki) if pki else None))
    settings = ClusterSettings(
        nodes=nodes,
        root_dir=str(data / "nodes"),
        owns_root_dir=True,
        storage_dir=str(data / "storage"),
        pod_failure_backoff=backoff,
        job_batch_period=job_batch_period,
        cronjob_clock_rate=cronjob_clock_rate,
        features=features,
        leader_election=True,
        root_ca=pki.ca_pem.decode() if pki is not None else "",
        pod_api=pod_api,
        hidden_paths=(str(data), *([str(kubeconfig)] if kubeconfig is not None else [])),
        pod_gc=PodGCSettings(terminated_pod_threshold=max(terminated_pod_gc_threshold, 0), **gc_timing),
        node_lifecycle=node_lifecycle or NodeLifecycleSettings(),
        node_options={
            "sync_frequency": sync_frequency,
            "container_log_max_size": container_log_rotation[0],
            "container_log_max_files": container_log_rotation[1],
        },
    )
    if admission is not None:
        settings = replace(settings, admission=admission)
    settings = replace(settings, controllers=CONTROLLER_NAMES if controllers is None else controllers)
    app = create_app(
        store,
        authenticator=authenticator,
        logs=logs,
        exec_source=logs,
        usage=logs,
        admission=settings.admission,
        features=features,
        min_request_timeout=float(min_request_timeout),
        event_ttl=event_ttl,
    )
    app_ref.append(app)
    if pki is not None:  # tokens outlive a restart, as kube-apiserver's signed with `--service-account-key-file`
        from kjobs.server.satokens import TokenIssuer, load_or_create_key

        app.service.tokens = TokenIssuer(load_or_create_key(pki.directory))
    cluster = LocalCluster(app.service, settings=settings, job_metrics=JobMetrics(REGISTRY), logs=logs)
    app.metrics = metric_registries(cluster.controllers, first=[REGISTRY])
    return cluster, app


def _pod_host(host: str) -> str:
    """The address pods use to reach a server listening on `host`: loopback for a wildcard address."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "::1"
    return host


def _split(values: tuple[str, ...]) -> list[str]:
    """A repeatable comma-separated flag's items, trimmed (pflag's `StringSlice`)."""
    return [item.strip() for value in values for item in value.split(",")]
