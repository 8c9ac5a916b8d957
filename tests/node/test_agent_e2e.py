"""The node agent with real processes: in process over LocalClient, and as `kjobs node join` over HTTP."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from kjobs.api.errors import ApiError
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.client.resources import PODS
from kjobs.node.agent import NodeAgentSettings
from kjobs.node.logsource import RemoteLogs
from kjobs.node.process_runtime import mounting_enabled
from kjobs.server import kubeconfig, tls
from kjobs.server.logs import LogOptions
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.node.helpers import process_node
from tests.support import client_tls, shared_pki

pytestmark = pytest.mark.e2e
DEADLINE = 20.0
STARTS = 60.0
"""The bound on what waits for a process to start: a joined agent registering its node (a `kjobs node join` is a
Python start: imports, TLS, a list of its pods), a pod's first container running (its process shim is one too), the
`kjobs node shutdown` command. A machine running four test workers on two cores (docs/ci-time.md) stretched the
agent's start past DEADLINE (docs/chaos55.md); each wait counts from the start it waits for."""


def pod_manifest(name: str, node: str, command: list[str], **spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "restartPolicy": "Never",
            "nodeName": node,
            "containers": [{"name": "main", "image": "busybox:1.36", "command": command}],
            **spec,
        },
    }


async def eventually(check: Callable[[], Any], *, timeout: float = DEADLINE) -> Any:
    """Poll an async or sync check until it returns something truthy, within a bounded deadline."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.05)


def test_process_pods_run_log_and_are_deleted_in_process(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with process_node(tmp_path) as node:
            service, client = node.service, node.client

            async def phase(name: str) -> str:
                pod = await client.get(PODS, "default", name)
                return str(pod.get("status", {}).get("phase", ""))

            await client.create(PODS, "default", pod_manifest("ok", "local", ["sh", "-c", "echo one; echo two"]))
            await client.create(PODS, "default", pod_manifest("bad", "local", ["sh", "-c", "exit 42"]))
            assert await eventually(lambda: _is(phase("ok"), "Succeeded"))
            assert await eventually(lambda: _is(phase("bad"), "Failed"))
            bad = await client.get(PODS, "default", "bad")
            assert bad["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 42
            _, chunks = service.open_log("default", "ok", LogOptions(container="main"))
            assert b"".join([c async for c in chunks]) == b"one\ntwo\n"
            _, chunks = service.open_log("default", "ok", LogOptions(container="main", tail_lines=1))
            assert b"".join([c async for c in chunks]) == b"two\n"

            # The container prints `second` only once the test has read `first` (it waits for a file the test
            # makes): the line is shown while the container still runs, however slowly the machine starts `sh`.
            release = tmp_path / "release-stream"
            stream_command = ["sh", "-c", f"echo first; while [ ! -e {release} ]; do sleep 0.05; done; echo second"]
            await client.create(PODS, "default", pod_manifest("stream", "local", stream_command))
            assert await eventually(lambda: _is(phase("stream"), "Running"))
            _, chunks = service.open_log("default", "stream", LogOptions(container="main", follow=True))
            iterator = aiter(chunks)
            first = await asyncio.wait_for(anext(iterator), timeout=DEADLINE)  # streamed while still running
            assert first == b"first\n"
            assert await phase("stream") == "Running"
            release.touch()
            rest = b"".join([chunk async for chunk in iterator])
            assert first + rest == b"first\nsecond\n"

            await client.create(
                PODS, "default", pod_manifest("long", "local", ["sleep", "300"], terminationGracePeriodSeconds=1)
            )
            assert await eventually(lambda: _is(phase("long"), "Running"))
            started = time.monotonic()
            await client.delete(PODS, "default", "long")

            async def gone() -> bool:
                try:
                    await client.get(PODS, "default", "long")
                except Exception:
                    return True
                return False

            assert await eventually(gone)
            # `sleep` has no SIGTERM handler: as a container's PID 1 it runs out its grace period, then SIGKILL
            assert 1 <= time.monotonic() - started < 5

    asyncio.run(scenario())


async def _is(value: Any, expected: str) -> bool:
    return bool(await value == expected)


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    store = MemoryStore()
    with serve(store, pki=shared_pki()) as url:
        config = tmp_path / "kubeconfig.yaml"
        kubeconfig.write(config, url, pki=shared_pki())  # the agent authenticates with the admin certificate
        _as_controllers_would(url)
        yield url, config
    store.close()


def _as_controllers_would(url: str) -> None:
    """What a cluster's controllers make for pods in `default`, on a bare API server: a joined agent fills their
    `kube-api-access-*` volumes with a token of the account and the published root CA
    (docs/service-account-tokens.md)."""
    with httpx.Client(base_url=url, timeout=10, verify=client_tls()) as http:
        root_ca = {"metadata": {"name": "kube-root-ca.crt"}, "data": {"ca.crt": shared_pki().ca_pem.decode()}}
        http.post("/api/v1/namespaces/default/configmaps", json=root_ca)
        http.post("/api/v1/namespaces/default/serviceaccounts", json={"metadata": {"name": "default"}})


def _kjobs(*args: str) -> list[str]:
    return [sys.executable, "-c", "from kjobs.cli import main; main()", *args]


def _wait_http(
    check: Callable[[], Any], timeout: float = DEADLINE, *, agent: subprocess.Popen[bytes] | None = None
) -> Any:
    """Poll `check` until it returns something truthy; checked once more at the deadline (a check that took long
    still gets its last look), and given up at once, with the agent's output, when the `agent` it waits on
    exited."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if agent is not None and agent.poll() is not None:
            raise AssertionError(f"the node agent exited ({agent.returncode}): {_output_of(agent)}")
        if time.monotonic() > deadline:
            output = f": the node agent's output: {_output_of(agent)}" if agent is not None else ""
            raise AssertionError(f"condition not reached in time ({timeout:g}s){output}")
        time.sleep(0.1)


def _output_of(agent: subprocess.Popen[bytes]) -> str:
    log = Path(str(agent.args[-1]) + ".log")  # `_joined`'s log, beside the agent's root directory
    return log.read_text(errors="replace")[-3000:] if log.exists() else "(not kept)"


@contextmanager
def _joined(config: Path, root: Path, name: str, **popen: Any) -> Iterator[subprocess.Popen[bytes]]:
    """`kjobs node join` as node `name` (its files under `root/name`); killed at the end if still running. Its
    output goes to `root/name.log` unless `popen` says otherwise: never to a pipe nobody reads, which blocks an
    agent once it has written a pipe's worth."""
    argv = _kjobs("node", "join", "--kubeconfig", str(config), "--name", name, "--root-dir", str(root / name))
    with open(root / f"{name}.log", "wb") as log:
        agent = subprocess.Popen(argv, **{"stdout": log, "stderr": subprocess.STDOUT, **popen})
    try:
        yield agent
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()


def test_node_join_runs_pods_and_shuts_down_gracefully(api: tuple[str, Path], tmp_path: Path) -> None:
    url, config = api
    with _joined(config, tmp_path, "n1", env={**os.environ, "PYTHONUNBUFFERED": "1"}) as agent:
        with httpx.Client(base_url=url, timeout=10, verify=client_tls()) as http:

            def ready() -> bool:
                response = http.get("/api/v1/nodes/n1")
                if response.status_code != 200:
                    return False
                conditions = response.json()["status"].get("conditions") or []
                return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

            _wait_http(ready, STARTS, agent=agent)  # from the agent's start
            lease_path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1"
            _wait_http(lambda: http.get(lease_path).status_code == 200, agent=agent)
            assert http.get(lease_path).json()["spec"]["holderIdentity"] == "n1"

            def phase(name: str) -> str:
                return str(http.get(f"/api/v1/namespaces/default/pods/{name}").json().get("status", {}).get("phase"))

            http.post("/api/v1/namespaces/default/pods", json=pod_manifest("quick", "n1", ["sh", "-c", "exit 3"]))
            # `sleep`, PID 1 with no SIGTERM handler, runs out its grace period: 1 s, to keep the test short
            long = pod_manifest("long", "n1", ["sleep", "300"], terminationGracePeriodSeconds=1)
            http.post("/api/v1/namespaces/default/pods", json=long)
            # both created now: each waits for its own container's start (a shim's)
            _wait_http(lambda: phase("quick") == "Failed", STARTS, agent=agent)
            _wait_http(lambda: phase("long") == "Running", STARTS, agent=agent)

            result = subprocess.run(
                _kjobs("node", "shutdown", "n1", "--kubeconfig", str(config), "--timeout", str(STARTS)),
                capture_output=True,
                text=True,
                timeout=2 * STARTS,  # the command's own start, then its wait
            )
            assert result.returncode == 0, result.stderr
            assert "node/n1 shut down" in result.stdout
            pod = http.get("/api/v1/namespaces/default/pods/long").json()
            assert pod["status"]["phase"] == "Failed"
            assert pod["status"]["reason"] == "Terminated"
            target = next(c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget")
            assert (target["status"], target["reason"]) == ("True", "TerminationByKubelet")
            node = http.get("/api/v1/nodes/n1").json()
            ready_condition = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
            assert (ready_condition["status"], ready_condition["message"]) == ("False", "node is shutting down")
        agent.send_signal(signal.SIGTERM)
        assert agent.wait(timeout=STARTS) == 0


def test_a_joined_agents_restarted_container_reads_the_changed_config_map(
    api: tuple[str, Path], tmp_path: Path
) -> None:
    """Over HTTP too, the agent watches the ConfigMap: the container succeeds only once it starts with MODE=new."""
    url, config = api
    with _joined(config, tmp_path, "n1", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as agent:
        with httpx.Client(base_url=url, timeout=10, verify=client_tls()) as http:
            cm_path = "/api/v1/namespaces/default/configmaps"
            assert http.post(cm_path, json={"metadata": {"name": "app"}, "data": {"MODE": "old"}}).status_code == 201
            env = [{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "MODE"}}}]
            pod = pod_manifest("reads", "n1", ["sh", "-c", '[ "$MODE" = new ]'], restartPolicy="OnFailure")
            pod["spec"]["containers"][0]["env"] = env
            assert http.post("/api/v1/namespaces/default/pods", json=pod).status_code == 201

            def container() -> Obj:
                found = http.get("/api/v1/namespaces/default/pods/reads").json()
                return dict(((found.get("status") or {}).get("containerStatuses") or [{}])[0])

            # failed twice with "old" (the first restart is at once), the next restart is 10 s away
            _wait_http(lambda: "CrashLoopBackOff" in str(container().get("state")), STARTS, agent=agent)
            patch = http.patch(
                f"{cm_path}/app",
                json={"data": {"MODE": "new"}},
                headers={"Content-Type": "application/merge-patch+json"},
            )
            assert patch.status_code == 200
            _wait_http(lambda: "Completed" in str(container().get("state")), timeout=40)
            assert container()["restartCount"] >= 2
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)


def test_sigterm_to_a_joined_agent_terminates_its_pods(api: tuple[str, Path], tmp_path: Path) -> None:
    url, config = api
    with (
        _joined(config, tmp_path, "n2") as agent,
        httpx.Client(base_url=url, timeout=10, verify=client_tls()) as http,
    ):
        _wait_http(lambda: http.get("/api/v1/nodes/n2").status_code == 200, STARTS, agent=agent)
        work = pod_manifest("work", "n2", ["sleep", "300"], terminationGracePeriodSeconds=1)  # as above: 1 s
        http.post("/api/v1/namespaces/default/pods", json=work)

        def phase() -> str:
            return str(http.get("/api/v1/namespaces/default/pods/work").json().get("status", {}).get("phase"))

        _wait_http(lambda: phase() == "Running", STARTS, agent=agent)
        agent.send_signal(signal.SIGTERM)
        assert agent.wait(timeout=STARTS) == 0
        pod = http.get("/api/v1/namespaces/default/pods/work").json()
        assert pod["status"]["phase"] == "Failed"
        assert pod["status"]["message"] == "Pod was terminated in response to imminent node shutdown."


def test_real_memory_pressure_evicts_a_process_pod(tmp_path: Path) -> None:
    async def scenario() -> None:
        # Every machine is "low on memory" below 100% of its memory: the real monitor, a real process, evicted.
        settings = NodeAgentSettings(eviction_hard="memory.available<100%", eviction_monitoring_interval=0.2)
        async with process_node(tmp_path, settings) as node:
            client = node.client
            container = {
                "name": "main",
                "image": "busybox",
                "command": ["sleep", "300"],
                "resources": {"requests": {"cpu": "10m"}},  # Burstable: admitted under memory pressure
            }

            async def evict(name: str) -> Obj:
                manifest = pod_manifest(name, "local", [])
                manifest["spec"]["containers"] = [container]
                await client.create(PODS, "default", manifest)

                async def evicted() -> Obj | None:
                    pod = await client.get(PODS, "default", name)
                    failed = pod["status"].get("reason") == "Evicted" and pod["status"]["phase"] == "Failed"
                    return pod if failed else None

                return await eventually(evicted)

            # A pod the monitor sees before its container runs has no stats, and the kubelet's message then names
            # no container (eviction_message); on a loaded machine that can happen, so a few pods are tried.
            for attempt in range(4):
                pod = await evict(f"victim-{attempt}")
                message = pod["status"]["message"]
                assert message.startswith("The node was low on resource: memory. Threshold quantity: ")
                target = next(c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget")
                assert (target["reason"], target["message"]) == ("TerminationByKubelet", message)
                if "Container main was using " in message:
                    break
            assert "Container main was using " in message
            assert "request is 0, has larger consumption of memory. " in message

    asyncio.run(scenario())


def test_logs_of_an_agent_in_another_process_stream_through_the_api(tmp_path: Path) -> None:
    store = MemoryStore()

    def node(name: str) -> Obj | None:
        try:
            return store.get("nodes", "", name)
        except ApiError:
            return None

    logs = RemoteLogs(node, ssl_context=tls.kubelet_client_context(shared_pki()))
    with serve(store, logs=logs, pki=shared_pki()) as url:
        config = tmp_path / "kubeconfig.yaml"
        kubeconfig.write(config, url, pki=shared_pki())
        _as_controllers_would(url)
        with (
            _joined(config, tmp_path, "n3") as agent,
            httpx.Client(base_url=url, timeout=10, verify=client_tls()) as http,
        ):

            def port() -> int:
                response = http.get("/api/v1/nodes/n3")
                if response.status_code != 200:
                    return 0
                return int(response.json()["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"])

            assert _wait_http(port, STARTS, agent=agent) > 0  # from the agent's start
            unauthenticated = httpx.get(f"https://127.0.0.1:{port()}/containerLogs/default/talk/main", verify=False)
            assert unauthenticated.status_code == 401  # the agent's endpoint answers only the API server
            # `second` comes only once the test has read `first` (the container waits for a file the test makes),
            # then 1.6 s later: the line is streamed while the container runs, however slowly a loaded machine
            # opens the stream
            release = tmp_path / "release-talk"
            wait = f"while [ ! -e {release} ]; do sleep 0.05; done"
            command = ["sh", "-c", f"echo first; {wait}; sleep 1.6; echo second"]
            http.post("/api/v1/namespaces/default/pods", json=pod_manifest("talk", "n3", command))

            def phase() -> str:
                return str(http.get("/api/v1/namespaces/default/pods/talk").json().get("status", {}).get("phase"))

            _wait_http(lambda: phase() == "Running", STARTS, agent=agent)
            with http.stream("GET", "/api/v1/namespaces/default/pods/talk/log", params={"follow": "true"}) as log:
                assert log.status_code == 200
                lines = log.iter_lines()
                assert next(lines) == "first"
                assert phase() == "Running"  # streamed, not buffered: the container waits for the test
                release.touch()
                assert list(lines) == ["second"]
            tail = http.get("/api/v1/namespaces/default/pods/talk/log", params={"tailLines": "1"})
            assert tail.text == "second\n"
            # Each line with the time the agent's shim read it; `sinceTime`/`sinceSeconds` pass through.
            timed = http.get("/api/v1/namespaces/default/pods/talk/log", params={"timestamps": "true"}).text
            (t1, first), (t2, second) = (line.split(" ", 1) for line in timed.splitlines())
            assert (first, second) == ("first", "second")
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z", t1) and t1 < t2
            assert 1.5 < parse_time(t2) - parse_time(t1) < STARTS  # read as written, not stamped at once
            since = http.get("/api/v1/namespaces/default/pods/talk/log", params={"sinceTime": t2})
            assert since.text == "second\n"
            recent = http.get("/api/v1/namespaces/default/pods/talk/log", params={"sinceSeconds": "3600"})
            assert recent.text == "first\nsecond\n"
            previous = http.get("/api/v1/namespaces/default/pods/talk/log", params={"previous": "true"})
            assert previous.status_code == 400
            assert previous.json()["message"] == 'previous terminated container "main" in pod "talk" not found'
            agent.send_signal(signal.SIGTERM)
            assert agent.wait(timeout=30) == 0
    store.close()


@pytest.mark.skipif(not mounting_enabled(), reason="no mount namespace can be made here")
def test_a_relative_root_directory_still_runs_pods_in_a_mount_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kjobs up --data-dir data` or `kjobs node join --root-dir root` gave the runtime a relative root: a pod with a
    volume (so in a mount namespace, which starts elsewhere) failed 128 "mount tmpfs on root/mnt: No such file"."""
    monkeypatch.chdir(tmp_path)

    async def scenario() -> None:
        async with process_node(Path("noderoot")) as node:
            manifest = pod_manifest("vol", "local", ["sh", "-c", "echo hi > /data/f && cat /data/f"])
            manifest["spec"]["volumes"] = [{"name": "d", "emptyDir": {}}]
            manifest["spec"]["containers"][0]["volumeMounts"] = [{"name": "d", "mountPath": "/data"}]
            await node.client.create(PODS, "default", manifest)

            async def ended() -> Obj | None:
                pod = await node.client.get(PODS, "default", "vol")
                return pod if pod.get("status", {}).get("phase") in ("Succeeded", "Failed") else None

            pod = await eventually(ended)
            _, chunks = node.service.open_log("default", "vol", LogOptions(container="main"))
            output = b"".join([c async for c in chunks])
            assert (pod["status"]["phase"], output) == ("Succeeded", b"hi\n")

    asyncio.run(scenario())
