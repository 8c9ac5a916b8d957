"""The `kjobs run` session: an embedded cluster, one Job, live progress, and the final explanation.

Progress comes from two informers (the Job, and the pods it owns) feeding a `RunView`; on a terminal it is a
rich live table, otherwise one plain line per change. The session ends when the Job has a terminal condition
(Complete → exit 0, Failed → exit 1) or the timeout passes (exit 1). With `serve_port` the same API is served
over HTTPS on loopback, with a PKI made for this run (`kjobs.server.tls`, removed when it ends) whose admin
certificate the written kubeconfig carries, so `kubectl get pods -w` can watch the run (and, with `keep_serving`,
inspect it afterwards); its pods then reach that API with their ServiceAccount tokens, as on `kjobs up`
(docs/service-account-tokens.md). `disruptions` are applied by a `kjobs.disrupt.Disruptor` while the Job runs; what they
do is told in the same stream of lines as the failure decisions they lead to.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import os
import select
import shutil
import signal
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, cast

from kjobs.api.errors import ApiError, forbidden
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.names import CONTROLLER_UID_LABEL
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import JOBS, PODS
from kjobs.cluster import ClusterSettings, LocalCluster, create_configs, metric_registries, sparse_gc, tune_gc
from kjobs.controllers import CONTROLLER_NAMES, EMBEDDED_CONTROLLERS
from kjobs.disrupt import Disruption, Disruptor
from kjobs.job import pods as P
from kjobs.node.logsource import AgentLogs
from kjobs.progress import RunView
from kjobs.server.admission import (
    DEFAULT_SERVICE_ACCOUNT,
    AdmissionSettings,
    service_account,
    service_account_refusal,
)
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore
from kjobs.store.packing import COLD_AFTER, PACK_ABOVE


@dataclass
class RunOptions:
    """How to run: back-off base, nodes, output, optional API serving."""

    backoff: float = 10.0
    nodes: int = 1
    show_logs: bool = False
    serve_port: int | None = None
    kubeconfig: str | None = None
    live: bool = False
    timeout: float | None = None
    batch_period: float = 0.002  # the Job controller's pod-event batching: 1 s in Kubernetes; shorter here
    # only changes timing. Measured, 1,000 pods of `true`, interleaved rounds: 2 ms makes 4-5 % more pods/s
    # than 10 ms for ~10 % more control-plane CPU per pod (a freed slot waits ~7 ms for its replacement, not ~17)
    out: TextIO = field(default_factory=lambda: sys.stdout)
    disruptions: tuple[Disruption, ...] = ()
    keep_serving: bool = False
    """With `serve_port`: keep serving after the Job ended, until SIGINT/SIGTERM."""
    node_options: dict[str, Any] = field(default_factory=dict)
    admission: AdmissionSettings = field(default_factory=lambda: AdmissionSettings(service_account_lookup=True))
    features: FeatureGates = DEFAULT
    """The `--feature-gates` (API fields, and later the controllers' and node agent's gated behaviour)."""
    configs: tuple[Obj, ...] = ()
    """ConfigMaps and Secrets created before the Job (its pods read them); in the Job's namespace unless they
    name their own."""


def run(job: Obj, options: RunOptions) -> int:
    """`run_job` on a uvloop event loop, as `kjobs run` does (measured: about 5 % less CPU per pod than the
    standard loop, whose per-callback overhead is in Python)."""
    import uvloop

    return uvloop.run(run_job(job, options))


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that stop a run cleanly besides Ctrl-C (SIGINT, asyncio's `KeyboardInterrupt`): SIGTERM (`timeout 60
kjobs run ...`, `kill`, a CI job's end) and SIGHUP (its terminal closed). The run then exits 128 + the signal's
number, as a shell reports a process that signal killed (143, 129; Ctrl-C 130), never 0 or 1, which tell the
Job's outcome."""

TERMINATED = 128 + signal.SIGTERM
"""The exit status of a run SIGTERM ended: a shell's for a process SIGTERM killed."""

BROKEN_PIPE = 128 + signal.SIGPIPE
"""The exit status of a run whose output's reader went away (`kjobs run job.yaml | head -1`): 141, what a shell
reports for a filter SIGPIPE ended (`yes | head -1`), and not 1 (the Job failed)."""


async def run_job(job: Obj, options: RunOptions) -> int:
    """Run `job` to its end on a fresh embedded cluster; returns the process exit code.

    Without `--serve` no client waits on the process, so the cyclic GC's young passes are few (`sparse_gc`).
    A signal of `STOP_SIGNALS` cancels the run, whose cluster then stops as after Ctrl-C, stopping its containers
    and removing their files: before, the process died at once and its containers outlived it (a `sleep 20` ran
    on) with their directories left in $XDG_RUNTIME_DIR. A second such signal does not cancel that clean-up (a
    closed terminal sends SIGHUP, then often SIGTERM). When the output's reader goes away (a broken pipe), the
    run stops the same way, silently, and returns `BROKEN_PIPE`: what it was asked to show can no longer be
    shown, and a pipeline's reader that took what it wanted (`| head -1`) expects its writer to end, as a filter
    does on SIGPIPE. A run killed outright (SIGKILL) leaves nothing running either: its shims kill their
    containers when its pipe to them closes (`ClusterSettings.containers_die_with_agent`)."""
    tune_gc()
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    stopped_by = 0

    def stop(code: int) -> None:
        nonlocal stopped_by
        if stopped_by:
            return
        stopped_by = code
        if task is not None:
            task.cancel()

    # (thread-safe: rich's live display writes from a thread of its own)
    guarded = _Output(options.out, lambda: loop.call_soon_threadsafe(stop, BROKEN_PIPE))
    options = dataclasses.replace(options, out=cast(TextIO, guarded))
    unwatch = _watch_reader(guarded, lambda: stop(BROKEN_PIPE))
    previous: dict[signal.Signals, Any] = {}
    for signum in STOP_SIGNALS:
        handler = signal.getsignal(signum)
        try:
            loop.add_signal_handler(signum, stop, 128 + signum)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread: signals are not ours
            break
        previous[signum] = handler
    try:
        with sparse_gc() if options.serve_port is None else contextlib.nullcontext():
            return await _run_job(job, options)
    except asyncio.CancelledError:
        if not stopped_by:
            raise
        return stopped_by
    finally:
        unwatch()
        for signum, handler in previous.items():
            loop.remove_signal_handler(signum)
            signal.signal(signum, handler)


def _watch_reader(out: _Output, gone: Callable[[], None]) -> Callable[[], None]:
    """When `out` is a pipe, call `gone` as soon as its reader closes it, not at the next write, which may be
    minutes away (pods that run long print nothing meanwhile); returns what stops watching. An epoll set that
    waits for no event on the pipe's write end still reports EPOLLERR, which Linux raises there once no reader
    is left (fs/pipe.c `pipe_poll`): the event loop waits on that set, and the pipe, always writable, never
    wakes it."""
    try:
        fd = out.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return lambda: None
    except (AttributeError, OSError, ValueError):  # not a file (a test's StringIO), or closed
        return lambda: None
    loop = asyncio.get_running_loop()
    watcher = select.epoll()
    watcher.register(fd, 0)

    def unwatch() -> None:
        if not watcher.closed:
            loop.remove_reader(watcher.fileno())
            watcher.close()

    def readable() -> None:
        if watcher.poll(0):
            unwatch()
            out.broken = True
            gone()

    loop.add_reader(watcher.fileno(), readable)
    return unwatch


class _Output:
    """The run's output, which may go away (a pipe whose reader exited, a closed terminal): the first write that
    fails calls `gone` (for a broken pipe) and every later one is dropped, so that the run's clean-up, which still
    writes its last lines, is not cut short by an exception from each of them."""

    def __init__(self, out: TextIO, gone: Callable[[], object]) -> None:
        self._out = out
        self._gone = gone
        self.broken = False

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                return self._out.write(text)
            except OSError as exc:
                self._lost(exc)
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._out.flush()
            except OSError as exc:
                self._lost(exc)

    def _lost(self, exc: OSError) -> None:
        self.broken = True
        if isinstance(exc, BrokenPipeError):
            self._gone()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding: the stream's (rich asks for them)
        return getattr(self._out, name)


async def _run_job(job: Obj, options: RunOptions) -> int:
    # Served, its pods are `kjobs up`'s (token volume, managedFields): cold ones are packed as `kjobs up`'s are.
    store = MemoryStore(cold_after=COLD_AFTER if options.serve_port is not None else 0, pack_above=PACK_ABOVE)
    logs = AgentLogs()
    # the provisioned volumes live as long as the run's cluster, whose claims and volumes are in memory
    storage_dir = Path(tempfile.mkdtemp(prefix="kjobs-run-storage-"))
    # Served, pods reach the API as `kjobs up`'s do (its address and CA are known before any agent starts).
    serving = await _prepare_serving(options) if options.serve_port is not None else None
    settings = ClusterSettings(
        nodes=options.nodes,
        pod_failure_backoff=options.backoff,
        job_batch_period=options.batch_period,
        node_options={"forget_pods_on_stop": True, **options.node_options},
        # nothing adopts a run's containers after it: its shims kill them if it dies without stopping them
        containers_die_with_agent=True,
        admission=options.admission,
        features=options.features,
        field_managers=options.serve_port is not None,
        events=options.serve_port is not None,
        leader_election=options.serve_port is not None,  # served, a `kjobs controller` could point at it
        storage_dir=str(storage_dir),
        root_ca=serving.pki.ca_pem.decode() if serving is not None else "",
        controllers=_SERVED_CONTROLLERS if serving is not None else EMBEDDED_CONTROLLERS,
        pod_api=f"127.0.0.1:{serving.port}" if serving is not None else "",
        # its PKI and kubeconfig are the run's admin credentials: pods in a mount namespace do not see them
        hidden_paths=_hidden(serving, options),
    )
    app, service = _api(store, logs, settings)
    cluster = LocalCluster(service, settings=settings, logs=logs)
    if app is not None:  # served: /metrics has the controllers' metrics, as `kjobs up`'s has
        from prometheus_client import REGISTRY

        app.metrics = metric_registries(cluster.controllers, first=[REGISTRY])
    out = options.out
    server: Any = None
    try:
        await cluster.start()  # in the `try`: a signal while it starts stops what has started
        if serving is not None:
            server = await _serve(app, serving, options, out)
        namespace = str((job.get("metadata") or {}).get("namespace") or "default")
        try:
            user = LocalClient(service, manager="kjobs-run", typed=False)  # the manifest is checked as JSON
            created_namespaces = await create_configs(user, namespace, options.configs)
            for created_namespace in created_namespaces:
                print(f"namespace/{created_namespace} created", file=out, flush=True)
            await cluster.ensure_service_accounts([namespace, *created_namespaces])
            if service.admission.service_account_lookup:
                refused = missing_service_account(
                    job, namespace, lambda where, name: service.store.exists("serviceaccounts", where, name)
                )
                if refused is not None:
                    raise refused
            created = await user.create(JOBS, namespace, job)
        except ApiError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 2
        code = await _follow(cluster, user, created, options)
        if server is not None and options.keep_serving:
            await _serve_until_signal(server, out)
        return code
    finally:
        if server is not None:
            # End open watches (`kubectl get pods -w`) first, as `kjobs up` does: uvicorn's shutdown waits for
            # open streams, then cancels them with a traceback each.
            app.close_streams()
            server.should_exit = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.task, 5)
        elif serving is not None:  # the cluster failed to start: the socket was never served
            serving.sock.close()
        await cluster.stop()
        if serving is not None:
            shutil.rmtree(serving.private, ignore_errors=True)
        store.close()
        shutil.rmtree(storage_dir, ignore_errors=True)


_SERVED_CONTROLLERS = tuple(
    name for name in CONTROLLER_NAMES if name in EMBEDDED_CONTROLLERS or name == "rootcacertpublisher"
)
"""Served, the run's pods verify its TLS with the CA the root CA publisher puts in `kube-root-ca.crt`, which their
`kube-api-access-*` volumes project."""


def missing_service_account(job: Obj, namespace: str, exists: Callable[[str, str], bool]) -> ApiError | None:
    """The 403 the Job's pods would get when their ServiceAccount is not in the cluster (`exists(namespace,
    name)`), with what to do about it; None when it is there.

    On a cluster the Job would be created and its pods refused one after another (a `FailedCreate` event each,
    ServiceAccount admission's 403) until someone creates the account; `kjobs run` and `kjobs simulate` have
    nobody to do that, and show no events, so they would wait silently for ever: they say it once instead."""
    template = (job.get("spec") or {}).get("template") or {}
    spec = template.get("spec")
    if not isinstance(spec, dict):
        return None
    account = service_account(spec, create=True, mirror=False)
    if account is None or exists(namespace, account):
        return None
    name = str((job.get("metadata") or {}).get("name") or "")
    error = forbidden("pods", f"{name}-", service_account_refusal(namespace, account))
    error.message += (
        f"\nthe Job's pods cannot be created: add a ServiceAccount named {account} (namespace {namespace}) to the "
        "manifest, or remove serviceAccountName from the pod template"
    )
    return error


def manifest_accounts(job: Obj, configs: Iterable[Obj]) -> Callable[[str, str], bool]:
    """Which accounts a fresh cluster has once a manifest's objects are created: each namespace's `default`
    (the ServiceAccounts controller's) and the manifest's ServiceAccounts (in the Job's namespace unless they
    name another)."""
    namespace = str((job.get("metadata") or {}).get("namespace") or "default")
    made = {
        (str((c.get("metadata") or {}).get("namespace") or namespace), str((c.get("metadata") or {}).get("name")))
        for c in configs
        if c.get("kind") == "ServiceAccount"
    }
    return lambda where, name: name == DEFAULT_SERVICE_ACCOUNT or (where, name) in made


def _api(store: MemoryStore, logs: AgentLogs, settings: ClusterSettings) -> tuple[Any, ApiService]:
    """The API the cluster talks to, and the HTTP application over it when the run serves it (`--serve`).

    Without `--serve` nobody but this process reads the API, and this process never reads `managedFields` or
    Events (the run's lines come from the Job and its pods), so `run_job` turns both off, as `kjobs simulate`
    does (`ClusterSettings.field_managers`); tests/cli/test_run_shortcuts.py shows the Job's status and every
    pod's final state are the same either way. Measured, 5,000 `sh -c true` pods: about 13 % less CPU in the
    `kjobs run` process. For the same reason the ServiceAccount plugin adds no `kube-api-access-*` volume (no pod
    here reaches an API server, so the node would not mount it): validating, storing and copying it cost 7 % of
    `bench/bench_run_xargs.py`'s throughput (docs/service-account-tokens.md).
    """
    if settings.field_managers and settings.events:
        from kjobs.server.app import create_app  # the HTTP side's routes and tables: imported only to serve

        app = create_app(
            store,
            clock=time.time,
            logs=logs,
            exec_source=logs,
            usage=logs,
            admission=settings.admission,
            features=settings.features,
        )
        return app, app.service
    service = ApiService(
        Storage(store),
        clock=time.time,
        logs=logs,
        admission=settings.admission,
        features=settings.features,
        field_managers=settings.field_managers,
        record_events=settings.events,
        token_volumes=False,  # no pod reaches this API, and nobody reads the pods' specs
    )
    return None, service


async def _serve_until_signal(server: Any, out: TextIO) -> None:
    """Keep the API up after the Job ended, until Ctrl-C, SIGTERM or SIGHUP (then the run's exit code stands)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, *STOP_SIGNALS):
        loop.add_signal_handler(signum, stop.set)
    print(f"still serving the API on {server.url}; Ctrl-C to stop", file=out, flush=True)
    try:
        await stop.wait()
    finally:
        for signum in (signal.SIGINT, *STOP_SIGNALS):
            loop.remove_signal_handler(signum)
    print("stopped serving the API", file=out, flush=True)


async def _follow(cluster: LocalCluster, user: LocalClient, job: Obj, options: RunOptions) -> int:
    meta = job["metadata"]
    view = RunView(job, show_restarts=True, show_blocked=True)
    cluster.container_events = view.container_event  # why a probe killed a container (no Events recorded here)
    out = options.out
    changed = asyncio.Event()
    lines: list[str] = []
    logged: set[str] = set()
    printing: set[asyncio.Task[None]] = set()
    # With --logs, each pod's node keeps its log files from the moment the pod is seen on it until its log is
    # printed: the print task may run after the Job controller deleted the pod (a successPolicy met, a deadline)
    # and the node, seeing it gone, forgot it.
    kept: dict[str, Obj] = {}
    logs = cluster.logs if options.show_logs else None

    def on_job(_old: Obj | None, new: Obj | None) -> None:
        if new is not None and new["metadata"].get("uid") == meta["uid"]:
            lines.extend(view.update_job(new))
            changed.set()

    namespace, job_uid = meta["namespace"], meta["uid"]

    def on_pod(old: Obj | None, new: Obj | None) -> None:
        said = _pod_lines(view, namespace, job_uid, old, new)
        if said is None:
            return
        lines.extend(said)
        if new is None:
            changed.set()
            return
        if logs is not None:
            uid = new["metadata"]["uid"]
            if uid not in kept and uid not in logged and (new.get("spec") or {}).get("nodeName"):
                kept[uid] = new
                logs.keep(new)
        finished = new.get("status", {}).get("phase") in ("Succeeded", "Failed")
        if finished and options.show_logs and new["metadata"]["uid"] not in logged:
            logged.add(new["metadata"]["uid"])
            task = asyncio.get_running_loop().create_task(_print_logs(cluster, new, out))
            printing.add(task)
            task.add_done_callback(printing.discard)
            if logs is not None and (held := kept.pop(new["metadata"]["uid"], None)) is not None:
                task.add_done_callback(functools.partial(_release_logs, logs, held))
        changed.set()

    # The controllers' own informers: no watch of its own to filter and wake for every pod change.
    jobs, pods = cluster.informers.informer(JOBS), cluster.informers.informer(PODS)
    jobs.add_handler(on_job)
    pods.add_handler(on_pod)
    jobs.start()
    pods.start()

    def running() -> list[Obj]:
        alive = [p for p in view.pods.values() if P.phase(p) == "Running" and not P.is_deleting(p)]
        return sorted(alive, key=lambda p: str(p["metadata"].get("name")))

    def say(line: str) -> None:
        lines.append(line)
        changed.set()

    disruptor = Disruptor(user, running, say)
    start = time.monotonic()
    disrupting = [asyncio.get_running_loop().create_task(disruptor.apply_at(d, start)) for d in options.disruptions]
    deadline = None if options.timeout is None else time.monotonic() + options.timeout
    live = _live(view, out) if options.live else None
    try:
        if live is not None:
            live.start()
        while view.finished() is None:
            if deadline is not None and time.monotonic() > deadline:
                break
            # `asyncio.timeout`, not `wait_for`: Python 3.11's `wait_for` loses a cancellation that comes as the
            # event is set (gh-86296), and the run's stop (a signal, a broken pipe) is that cancellation.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.5):
                    await changed.wait()
            changed.clear()
            if live is not None:
                for line in lines:
                    live.console.print(line)
                live.update(view.renderable())
            else:
                _print_lines(lines, out)
            lines.clear()
    finally:
        for task, disruption in zip(disrupting, options.disruptions, strict=True):
            if not task.done():
                task.cancel()
                if not disruptor.started(disruption):
                    lines.append(f"disrupt {disruption.text}: not applied, the Job ended first")
        if live is not None:
            for line in lines:
                live.console.print(line)
        else:
            _print_lines(lines, out)
        if live is not None:
            live.stop()
        jobs.remove_handler(on_job)
        pods.remove_handler(on_pod)
        await jobs.stop()
        await pods.stop()
        # The logs of the last pods are printed before the summary (and before the node removes the files).
        try:
            await asyncio.gather(*printing, return_exceptions=True)
        finally:
            if logs is not None:  # pods that never ended (the run timed out): their files go as the cluster stops
                for pod in kept.values():
                    logs.release(pod)
    print("", file=out)
    print(view.summary(), file=out, flush=True)
    return 0 if view.finished() == "Complete" else 1


def _pod_lines(view: RunView, namespace: str, job_uid: str, old: Obj | None, new: Obj | None) -> list[str] | None:
    """The view's lines for a pod event (`RunView.update_pod`), or None when the pod is not the Job's (another
    namespace, or not labelled with the Job's `controller-uid`). It runs for every event of every pod of the
    cluster: a changed pod's metadata is read once, and handed to `RunView.pod_changed` as `update_pod` would."""
    pod_meta = ((old or {}) if new is None else new).get("metadata") or {}
    if pod_meta.get("namespace") != namespace or (pod_meta.get("labels") or {}).get(CONTROLLER_UID_LABEL) != job_uid:
        return None
    if new is None:
        return view.update_pod(None, deleted=old)
    return view.pod_changed(
        new, P.uid(new), str(pod_meta.get("name")), P.phase(new), bool(pod_meta.get("deletionTimestamp"))
    )


def _live(view: RunView, out: TextIO) -> Any:
    """The rich live table of a terminal (rich is imported only for it: piped output does without)."""
    from rich.console import Console
    from rich.live import Live

    return Live(view.renderable(), console=Console(file=out), refresh_per_second=8)


def _print_lines(lines: list[str], out: TextIO) -> None:
    """The plain lines of one wake-up in one write, flushed: the same text as a print and a flush per line,
    without a system call per pod change (a 5,000-pod Job prints some 15,000 lines)."""
    if lines:
        out.write("\n".join(lines) + "\n")
        out.flush()


def _release_logs(logs: AgentLogs, pod: Obj, _printed: asyncio.Task[None]) -> None:
    logs.release(pod)


async def _print_logs(cluster: LocalCluster, pod: Obj, out: TextIO) -> None:
    from kjobs.server.logs import LogOptions

    meta = pod["metadata"]
    spec = pod.get("spec") or {}
    # Init containers (sidecars among them) first, as they ran. Read from the pod's node, as the API server's
    # log endpoint does, with the pod as last seen: a pod the Job controller deleted (its deadline, a success
    # policy) is gone from the API by now, while its node still holds its logs.
    for container in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]:
        try:
            if cluster.logs is None:  # pragma: no cover - kjobs run always gives its cluster the node logs
                _, chunks = cluster.service.open_log(
                    meta["namespace"], meta["name"], LogOptions(container=container["name"])
                )
            else:
                chunks = cluster.logs.open(pod, LogOptions(container=container["name"]))
            text = b"".join([chunk async for chunk in chunks]).decode("utf-8", "replace")
        except ApiError as exc:
            text = f"(no log: {exc.message})\n"
        for line in text.splitlines():
            print(f"[{meta['name']}/{container['name']}] {line}", file=out, flush=True)


@dataclass(eq=False, repr=False)
class _Serving:
    """What `--serve` serves with, made before the cluster starts: its pods' `KUBERNETES_SERVICE_*` and
    `kube-root-ca.crt` name the port and the CA."""

    private: Path
    """The PKI and the kubeconfig (mode 0700): removed at the end."""
    pki: Any
    sock: Any
    port: int


def _hidden(serving: _Serving | None, options: RunOptions) -> tuple[str, ...]:
    """What the run's pods must not see beside their node's directory: the served run's PKI directory and the
    kubeconfig it writes (docs/security.md)."""
    if serving is None:
        return ()
    return (str(serving.private), *([str(options.kubeconfig)] if options.kubeconfig else []))


async def _prepare_serving(options: RunOptions) -> _Serving:
    from kjobs.server import tls
    from kjobs.server.runner import bind

    private = Path(tempfile.mkdtemp(prefix="kjobs-run-"))  # mode 0700
    pki = await asyncio.to_thread(tls.ensure, private / "pki", "127.0.0.1")
    sock = bind("127.0.0.1", options.serve_port or 0)
    return _Serving(private=private, pki=pki, sock=sock, port=int(sock.getsockname()[1]))


async def _serve(app: Any, serving: _Serving, options: RunOptions, out: TextIO) -> Any:
    """Serve the API over TLS on loopback in this event loop and write a kubeconfig for it."""
    import uvicorn

    from kjobs.server import kubeconfig as kubeconfig_file
    from kjobs.server.runner import server_config

    url = f"https://127.0.0.1:{serving.port}"
    server = uvicorn.Server(server_config(app, pki=serving.pki, lifespan="off"))
    server.config.setup_event_loop = lambda: None  # type: ignore[method-assign]
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[serving.sock]))
    path = Path(options.kubeconfig or serving.private / "kubeconfig")
    kubeconfig_file.write(path, url, pki=serving.pki)
    print(f"serving the API on {url}; to watch: export KUBECONFIG={path}", file=out, flush=True)
    server.task = task  # type: ignore[attr-defined]
    server.url = url  # type: ignore[attr-defined]
    return server
