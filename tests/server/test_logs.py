"""The pods/log endpoint over a `LogSource`: chunks are flushed as they come, and the stream ends with the log."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from kjobs.api.types import Obj
from kjobs.server import kubeconfig
from kjobs.server.app import create_app
from kjobs.server.logs import LogOptions, waiting_error
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.server.conftest import pod_manifest
from tests.support import client_tls, shared_pki

PODS = "/api/v1/namespaces/default/pods"


class ScriptedLogs:
    """A log source for pod `p`: two lines, then (when following) one more after `release` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.seen: list[LogOptions] = []
        self.silent_open = False

    def open(self, pod: Obj, options: LogOptions) -> AsyncIterator[bytes]:
        if pod["metadata"]["name"] == "silent":
            return self._silent()
        if pod["metadata"]["name"] == "steps":
            return self._said(options.container)
        if pod["metadata"]["name"] != "p":
            raise waiting_error(pod, options.container)
        self.seen.append(options)
        return self._lines(options)

    async def _silent(self) -> AsyncIterator[bytes]:
        """A followed log that says nothing (a container that sleeps): open until closed."""
        self.silent_open = True
        try:
            await asyncio.sleep(3600)
            yield b""
        finally:
            self.silent_open = False

    async def _said(self, container: str) -> AsyncIterator[bytes]:
        yield f"{container} ran\n".encode()

    async def _lines(self, options: LogOptions) -> AsyncIterator[bytes]:
        lines = [b"first\n", b"second\n"]
        if options.tail_lines is not None:
            lines = lines[-options.tail_lines :]
        for line in lines:
            yield line
        if options.follow:
            await asyncio.to_thread(self.release.wait, 10)
            yield b"last\n"


@pytest.fixture
def logs_server() -> Iterator[tuple[str, ScriptedLogs]]:
    store = MemoryStore()
    source = ScriptedLogs()
    with serve(store, app=create_app(store, logs=source), pki=shared_pki()) as url:
        with httpx.Client(base_url=url, verify=client_tls()) as http:
            for name in ("p", "q", "silent"):
                assert http.post(PODS, json=pod_manifest(name, node="n1")).status_code == 201
        yield url, source
    store.close()


def test_follow_streams_each_chunk_then_ends(logs_server: tuple[str, ScriptedLogs]) -> None:
    url, source = logs_server
    with (
        httpx.Client(base_url=url, timeout=10, verify=client_tls()) as http,
        http.stream("GET", f"{PODS}/p/log", params={"follow": "true", "container": "main"}) as response,
    ):
        assert response.status_code == 200 and response.headers["content-type"] == "text/plain"
        lines = response.iter_lines()
        assert [next(lines), next(lines)] == ["first", "second"]  # delivered while the source is still open
        source.release.set()
        assert list(lines) == ["last"]
    assert source.seen[0].container == "main" and source.seen[0].follow


def test_plain_log_tail_and_default_container(logs_server: tuple[str, ScriptedLogs]) -> None:
    url, source = logs_server
    with httpx.Client(base_url=url, verify=client_tls()) as http:
        assert http.get(f"{PODS}/p/log", params={"tailLines": "1"}).text == "second\n"
        assert source.seen[-1].container == "main"  # the only container is the default
        wrong = http.get(f"{PODS}/p/log", params={"container": "sidecar"})
        assert wrong.status_code == 400 and wrong.json()["message"] == "container sidecar is not valid for pod p"
        waiting = http.get(f"{PODS}/q/log")
        assert waiting.status_code == 400
        assert waiting.json()["message"] == 'container "main" in pod "q" is waiting to start: ContainerCreating'


def test_a_pod_no_node_runs_has_no_log_yet(logs_server: tuple[str, ScriptedLogs]) -> None:
    # An unscheduled pod has no kubelet to ask: the API server answers 204 No Content (kubectl logs prints nothing
    # and exits 0; the JavaScript client's Log throws its status), after the same container checks.
    url, _ = logs_server
    with httpx.Client(base_url=url, verify=client_tls()) as http:
        assert http.post(PODS, json=pod_manifest("pending")).status_code == 201
        for query in ({}, {"follow": "true"}):
            empty = http.get(f"{PODS}/pending/log", params=query)
            assert (empty.status_code, empty.content) == (204, b"")
        wrong = http.get(f"{PODS}/pending/log", params={"container": "sidecar"})
        assert wrong.status_code == 400 and wrong.json()["message"] == "container sidecar is not valid for pod pending"


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_logs_follow(logs_server: tuple[str, ScriptedLogs], tmp_path: Path) -> None:
    url, source = logs_server
    kubeconfig.write(tmp_path / "kc", url, pki=shared_pki())
    env = {"HOME": str(tmp_path), "KUBECONFIG": str(tmp_path / "kc"), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    tail = subprocess.run(["kubectl", "logs", "p", "--tail=1"], capture_output=True, text=True, env=env, timeout=30)
    assert tail.stdout == "second\n"
    proc = subprocess.Popen(["kubectl", "logs", "-f", "p"], stdout=subprocess.PIPE, text=True, env=env)
    lines: list[str] = []
    first = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            first.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert first.wait(20)  # printed while the container is still running
    assert lines[0] == "first\n"
    source.release.set()
    assert proc.wait(30) == 0
    reader.join(10)
    assert lines == ["first\n", "second\n", "last\n"]


def _with_init_container(name: str) -> dict[str, object]:
    pod = pod_manifest(name, node="n1")
    spec: dict[str, object] = pod["spec"]  # type: ignore[assignment]
    spec["initContainers"] = [{"name": "setup", "image": "busybox:1.36"}]
    spec["containers"] = [{"name": "main", "image": "busybox:1.36"}, {"name": "side", "image": "busybox:1.36"}]
    return pod


def test_an_init_containers_log_is_served(logs_server: tuple[str, ScriptedLogs]) -> None:
    # pkg/registry/core/pod/strategy.go validateContainer: any container of the pod may be named, init ones too,
    # and without a name the choices listed are every container, init containers first.
    url, _ = logs_server
    with httpx.Client(base_url=url, verify=client_tls()) as http:
        assert http.post(PODS, json=_with_init_container("steps")).status_code == 201
        assert http.get(f"{PODS}/steps/log", params={"container": "setup"}).text == "setup ran\n"
        unnamed = http.get(f"{PODS}/steps/log")
        assert unnamed.status_code == 400
        assert (
            unnamed.json()["message"]
            == "a container name must be specified for pod steps, choose one of: [setup main side]"
        )


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_logs_all_containers_includes_init_containers(
    logs_server: tuple[str, ScriptedLogs], tmp_path: Path
) -> None:
    # `kubectl logs --all-containers` asks for each init container's log first; a 400 for it failed the command.
    url, _ = logs_server
    with httpx.Client(base_url=url, verify=client_tls()) as http:
        assert http.post(PODS, json=_with_init_container("steps")).status_code == 201
    kubeconfig.write(tmp_path / "kc", url, pki=shared_pki())
    env = {"HOME": str(tmp_path), "KUBECONFIG": str(tmp_path / "kc"), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    args = ["kubectl", "logs", "steps", "--all-containers", "--prefix"]
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=30)
    assert (done.returncode, done.stderr) == (0, "")
    assert sorted(done.stdout.splitlines()) == [  # kubectl keeps the requests in a map: any order
        "[pod/steps/main] main ran",
        "[pod/steps/setup] setup ran",
        "[pod/steps/side] side ran",
    ]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"tailLines": "-1"}, "tailLines: Invalid value: -1: must be greater than or equal to 0"),
        ({"limitBytes": "0"}, "limitBytes: Invalid value: 0: must be greater than 0"),
        ({"sinceSeconds": "0"}, "sinceSeconds: Invalid value: 0: must be greater than 0"),
        (
            {"sinceSeconds": "5", "sinceTime": "2026-01-01T00:00:00Z"},
            ": Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified",
        ),
    ],
)
def test_log_options_are_validated_as_the_apiserver_does(
    logs_server: tuple[str, ScriptedLogs], query: dict[str, str], message: str
) -> None:
    url, source = logs_server
    with httpx.Client(base_url=url, verify=client_tls()) as http:
        response = http.get(f"{PODS}/p/log", params=query)
    assert response.status_code == 422
    assert response.json()["reason"] == "Invalid"
    assert response.json()["message"] == f'PodLogOptions "p" is invalid: {message}'
    assert source.seen == []  # rejected before any log is opened


def test_timestamps_and_since_reach_the_log_source(logs_server: tuple[str, ScriptedLogs]) -> None:
    url, source = logs_server
    with httpx.Client(base_url=url, verify=client_tls()) as http:
        assert http.get(f"{PODS}/p/log", params={"timestamps": "true", "sinceSeconds": "60"}).status_code == 200
        assert http.get(f"{PODS}/p/log", params={"sinceTime": "2026-12-02T08:00:01.5Z"}).status_code == 200
        assert http.get(f"{PODS}/p/log", params={"sinceTime": "yesterday"}).status_code == 400
    assert [(o.timestamps, o.since_seconds, o.since_time) for o in source.seen] == [
        (True, 60, None),
        (False, None, 1796198401.5),
    ]


def test_a_log_request_leaves_no_reference_cycle(logs_server: tuple[str, ScriptedLogs]) -> None:
    """The end of a log was raised through the handler's frame from the task that read it, so the task's
    exception held the frame that held the task: each log request (with its connection) waited for the cyclic
    GC, which `kjobs up` runs every 100,000 objects (docs/soak41.md)."""
    import gc
    import types

    url, _ = logs_server
    with httpx.Client(base_url=url, verify=client_tls()) as http:
        gc.collect()
        gc.disable()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            for _ in range(3):
                assert http.get(f"{PODS}/p/log").text == "first\nsecond\n"
            gc.collect()
            handlers = [o for o in gc.garbage if isinstance(o, types.FrameType) and o.f_code.co_name == "_log"]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
    assert handlers == []


def test_a_follower_that_leaves_before_the_log_says_anything_closes_it(logs_server: tuple[str, ScriptedLogs]) -> None:
    """`kubectl logs -f` of a silent container, stopped: the server used to wait for the log's first output
    before it watched for the client going, so the read and its open log file stayed for ever (docs/soak41.md)."""
    url, source = logs_server
    host, port = url.removeprefix("https://").rsplit(":", 1)
    raw = socket.create_connection((host, int(port)), timeout=10)
    with client_tls().wrap_socket(raw, server_hostname=host) as tls:
        tls.sendall(f"GET {PODS}/silent/log?follow=true HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        deadline = time.monotonic() + 10
        while not source.silent_open and time.monotonic() < deadline:
            time.sleep(0.02)
        assert source.silent_open  # the read is under way; now the client leaves
    deadline = time.monotonic() + 10
    while source.silent_open and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not source.silent_open
