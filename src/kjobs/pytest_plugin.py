"""The kjobs pytest plugin (entry point `pytest11`): a working Job cluster per test, in milliseconds.

Fixtures (README "kjobs in tests"):
- `kjobs_cluster`: a `kjobs.testing.KjobsCluster`, an in-process cluster (memory store, every controller, node
  agents running local processes, or the simulated runtime in virtual time) serving its API over TLS on a free
  loopback port, with helpers (`apply`, `wait_for`, `logs`, disruptions, node faults);
- `kjobs_kubeconfig`: its kubeconfig's path, also set as `$KUBECONFIG` for the test, so code that calls
  `kubernetes.config.load_kube_config()` runs unmodified;
- `kjobs_api_client`: the official `kubernetes` client's `ApiClient` for it.

`@pytest.mark.kjobs(runtime="simulated", nodes=2, virtual_time="manual", outcome=fn, settings=...)` chooses the
test's cluster (`kjobs.testing.ClusterOptions`). `--kjobs-scope session` (or the ini option `kjobs_scope`)
keeps one cluster for the session, removing what each test created (and remaking it after a test that disturbed
a node); `--kjobs-kubeconfig PATH` runs the same tests against another cluster (`kjobs up`, kind, a real one),
where the tests that need the in-process cluster (virtual time, node agent faults) are skipped.

The plugin is loaded into every pytest run of an environment where kjobs is installed, so it only adds options,
a marker and fixtures: kjobs itself is imported by the first test that asks for a fixture.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kjobs.testing import ClusterOptions, KjobsCluster

SCOPES = ("function", "session")


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--kjobs-kubeconfig`, `--kjobs-scope` and the `kjobs_scope` ini option."""
    group = parser.getgroup("kjobs", "kjobs Job cluster fixtures")
    group.addoption(
        "--kjobs-kubeconfig",
        default=None,
        metavar="PATH",
        help="run the kjobs_cluster tests against the cluster of this kubeconfig instead of an in-process one",
    )
    group.addoption("--kjobs-scope", default=None, choices=SCOPES, help="kjobs_cluster's lifetime (default: function)")
    parser.addini("kjobs_scope", "kjobs_cluster's lifetime: function (default) or session", default="function")


def pytest_configure(config: pytest.Config) -> None:
    """Register the `kjobs` marker."""
    config.addinivalue_line(
        "markers",
        "kjobs(runtime='process'|'simulated', nodes=1, virtual_time='auto'|'manual', outcome=None, settings=None): "
        "the kjobs_cluster this test gets",
    )
    kubeconfig = config.getoption("kjobs_kubeconfig", None)
    if kubeconfig is not None and not os.path.isfile(kubeconfig):
        # Said once, before any test runs, rather than as the same traceback in the setup of every test.
        raise pytest.UsageError(f"--kjobs-kubeconfig: {kubeconfig} does not exist")


class Terminated(KeyboardInterrupt):
    """SIGTERM reached a pytest run that holds a kjobs cluster: pytest stops as after Ctrl-C, tearing the
    fixtures down (each cluster stops its pods' processes and removes its files), then the run ends by that
    signal (exit status 143), as it would have."""


_terminated: list[int] = []
_previous_handler: list[Any] = []


def _on_sigterm(signum: int, frame: Any) -> None:
    _terminated.append(signum)
    raise Terminated(f"signal {signum} (SIGTERM): stopping the kjobs clusters")


def _take_sigterm() -> None:
    """From the first cluster on: SIGTERM (`timeout 600 pytest`, a CI job's end, `kill`) interrupts the run so the
    clusters stop, instead of killing the process at once and leaving their pods' processes and temporary
    directories behind. Only when nobody else handles SIGTERM, and only on the main thread (signals are not a
    worker thread's to take)."""
    if _previous_handler:
        return
    try:
        if signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
            return
        signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread
        return
    _previous_handler.append(signal.SIG_DFL)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Give SIGTERM back; after an interruption by it, end by it (the fixtures are torn down by now)."""
    if not _previous_handler:
        return
    previous = _previous_handler.pop()
    if signal.getsignal(signal.SIGTERM) is _on_sigterm:  # not one the tests installed since
        signal.signal(signal.SIGTERM, previous)
    if _terminated:
        from kjobs.testing.embedded import remove_session_pki

        remove_session_pki()  # a process ended by a signal runs no `atexit`
        # nor flushes its buffers: pytest's report (and why it stopped) would be lost when stdout is a pipe
        sys.stdout.flush()
        sys.stderr.flush()
        os.kill(os.getpid(), _terminated[0])


def _scope(fixture_name: str, config: pytest.Config) -> str:
    scope = config.getoption("kjobs_scope") or config.getini("kjobs_scope") or "function"
    if scope not in SCOPES:
        raise pytest.UsageError(f"kjobs_scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    return str(scope)


class _Clusters:
    """The cluster(s) a fixture scope keeps: one at a time, remade when a test asks for other options or the
    previous test disturbed its nodes."""

    def __init__(self, config: pytest.Config) -> None:
        self.kubeconfig: str | None = config.getoption("kjobs_kubeconfig")
        self.current: KjobsCluster | None = None
        self.options: ClusterOptions | None = None

    @property
    def remote(self) -> bool:
        return self.kubeconfig is not None

    def get(self, options: ClusterOptions) -> KjobsCluster:
        from kjobs.testing import KjobsCluster

        if self.kubeconfig is not None:
            if options.runtime == "simulated":
                pytest.skip("virtual time needs the in-process cluster (not --kjobs-kubeconfig)")
            if self.current is None:
                self.current = KjobsCluster.connect(self.kubeconfig)
            return self.current
        if self.current is not None and (self.options != options or self.current.disturbed):
            self.close()
        if self.current is None:
            _take_sigterm()
            self.current = KjobsCluster.start(options)
            self.options = options
        return self.current

    def close(self) -> None:
        if self.current is not None:
            cluster, self.current = self.current, None
            cluster.stop()


def _options(node: pytest.Item) -> ClusterOptions:
    from kjobs.testing import ClusterOptions

    marker = node.get_closest_marker("kjobs")
    if marker is None:
        return ClusterOptions()
    if marker.args:
        raise pytest.UsageError("@pytest.mark.kjobs takes keywords only (runtime=, nodes=, ...)")
    given = {key: value for key, value in marker.kwargs.items() if value is not None}
    return ClusterOptions(**given)


@pytest.fixture(scope=_scope)  # type: ignore[arg-type]  # pytest accepts a callable scope
def _kjobs_clusters(request: pytest.FixtureRequest) -> Iterator[_Clusters]:
    clusters = _Clusters(request.config)
    yield clusters
    clusters.close()


@pytest.fixture
def kjobs_cluster(request: pytest.FixtureRequest, _kjobs_clusters: _Clusters) -> Iterator[KjobsCluster]:
    """A working Job cluster for this test (see the module note)."""
    cluster = _kjobs_clusters.get(_options(request.node))
    shared = _kjobs_clusters.remote or _scope("kjobs_cluster", request.config) == "session"
    if shared:
        cluster.mark()
    yield cluster
    if shared and not cluster.disturbed:
        cluster.clean()


@pytest.fixture
def kjobs_kubeconfig(kjobs_cluster: KjobsCluster, monkeypatch: pytest.MonkeyPatch) -> str:
    """The path of the cluster's kubeconfig; `$KUBECONFIG` names it for the test's duration.

    The official client reads `$KUBECONFIG` once, when `kubernetes.config` is imported
    (`KUBE_CONFIG_DEFAULT_LOCATION` in kubernetes/config/kube_config.py), so that default is set too."""
    path = os.fspath(kjobs_cluster.kubeconfig)
    monkeypatch.setenv("KUBECONFIG", path)
    try:
        from kubernetes.config import kube_config
    except ImportError:
        return path
    monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", path)
    return path


@pytest.fixture
def kjobs_api_client(kjobs_cluster: KjobsCluster) -> Any:
    """The official `kubernetes` client's `ApiClient`, configured for the cluster."""
    return kjobs_cluster.api_client
