"""`kubectl port-forward` and the clients' port-forwards against `kjobs up`: a Job's pod serving HTTP
(`python3 -m http.server`) reached through kubectl's default WebSocket tunnel and its plain SPDY fallback,
concurrent connections, the error a port nobody listens on gives, the official Python client's
`kubernetes.stream.portforward`, kr8s, a listener that is not the pod's, and the forward ending with its pod."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml

from tests.e2e.test_config_objects import Up, kubectl_on_up
from tests.e2e.test_python_clients import _until
from tests.support import free_port

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

PORT = free_port()
"""Where the pod's HTTP server listens (pods share the host's network)."""
UNUSED = free_port()


def _job(name: str, port: int) -> str:
    command = ["python3", "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    container = {"name": "web", "image": "python", "command": command}
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        # http.server has no SIGTERM handler: as a container's PID 1 it ignores SIGTERM and a deleted pod stops at
        # the end of its grace period, a second here
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 1, "containers": [container]}
            }
        },
    }
    return json.dumps(body)


def _listening(port: int) -> bool | None:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return None


def _start_web(up: Up, name: str, port: int) -> str:
    up.ok("apply", "-f", "-", stdin=_job(name, port))
    pod = _until(lambda: up.ok("get", "pods", "-l", f"job-name={name}", "-o", "jsonpath={.items[0].metadata.name}")
                 or None, f"job {name}'s pod")  # fmt: skip
    up.ok("wait", "--for=condition=Ready", f"pod/{pod}", "--timeout=60s", timeout=70)
    _until(lambda: _listening(port), f"pod {pod} to listen on {port}")
    return pod


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Up, str]]:
    with kubectl_on_up(tmp_path_factory.mktemp("portforward")) as kubectl:
        yield kubectl, _start_web(kubectl, "web", PORT)


@contextlib.contextmanager
def _port_forward(up: Up, pod: str, *mappings: str, websockets: bool = True) -> Iterator[subprocess.Popen[str]]:
    """`kubectl port-forward pod/POD MAPPINGS...`, once it says it listens."""
    env = {"HOME": str(up.home), "KUBECONFIG": str(up.config), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if not websockets:
        env["KUBECTL_PORT_FORWARD_WEBSOCKETS"] = "false"
    proc = subprocess.Popen(
        ["kubectl", "port-forward", f"pod/{pod}", *mappings],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        waiting = {f"Forwarding from 127.0.0.1:{m.split(':')[0]} -> {m.split(':')[1]}" for m in mappings}
        while waiting:  # each mapping is announced for 127.0.0.1, then for [::1]
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else ""
            waiting.discard(line.strip())
        yield proc
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _get(port: int) -> tuple[int, bytes]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as answer:
        return answer.status, answer.read()


def _error_text(port: int, uid: str) -> str:
    return (
        f"error forwarding port {port} to pod {uid}, uid : failed to execute portforward in network namespace "
        f'"host": failed to connect to localhost:{port} inside namespace "{uid}", IPv4: dial tcp4 127.0.0.1:{port}: '
        f"connect: connection refused IPv6 dial tcp6 [::1]:{port}: connect: connection refused "
    )


@pytest.mark.parametrize("websockets", [True, False], ids=["websocket-tunnel", "spdy"])
def test_kubectl_port_forward_serves_http_and_concurrent_connections(up: tuple[Up, str], websockets: bool) -> None:
    kubectl, pod = up
    local = free_port()
    with _port_forward(kubectl, pod, f"{local}:{PORT}", websockets=websockets):
        status, body = _get(local)
        assert status == 200 and b"Directory listing" in body
        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(_get, [local, local]))
        assert [a[0] for a in answers] == [200, 200]
        assert _get(local)[0] == 200


def test_a_port_nobody_listens_on_gives_kubectls_error(up: tuple[Up, str]) -> None:
    # kubectl v1.32 prints the error the kubelet wrote on the error stream and, since 1.31, ends the forward
    # (client-go's handleConnection closes the connection on an error); the other port served until then.
    kubectl, pod = up
    uid = kubectl.ok("get", "pod", pod, "-o", "jsonpath={.metadata.uid}")
    good, bad = free_port(), free_port()
    with _port_forward(kubectl, pod, f"{good}:{PORT}", f"{bad}:{UNUSED}") as proc:
        assert _get(good)[0] == 200
        with socket.create_connection(("127.0.0.1", bad), timeout=10) as conn:
            conn.settimeout(10)
            assert conn.recv(100) == b""  # the forwarded connection ends with nothing read
        proc.wait(15)
        assert proc.stderr is not None
        err = proc.stderr.read()
    assert f'"an error occurred forwarding {bad} -> {UNUSED}: {_error_text(UNUSED, uid)}"' in err.replace('\\"', '"')
    assert err.rstrip().endswith("error: lost connection to pod")


def test_the_python_client_round_trips_and_a_refused_port_leaves_the_other(up: tuple[Up, str]) -> None:
    from kubernetes import client, config
    from kubernetes.stream import portforward

    kubectl, pod = up
    uid = kubectl.ok("get", "pod", pod, "-o", "jsonpath={.metadata.uid}")
    api = client.CoreV1Api(config.new_client_from_config(str(kubectl.config)))
    forward = portforward(api.connect_get_namespaced_pod_portforward, pod, "default", ports=f"{UNUSED},{PORT}")
    refused = forward.socket(UNUSED)
    refused.settimeout(10)
    assert refused.recv(10) == b""
    assert forward.error(UNUSED) == _error_text(UNUSED, uid)
    web = forward.socket(PORT)
    web.settimeout(10)
    web.sendall(b"GET / HTTP/1.0\r\n\r\n")
    answer = b""
    while chunk := web.recv(65536):
        answer += chunk
    assert answer.startswith(b"HTTP/1.0 200 OK") and b"Directory listing" in answer
    assert forward.error(PORT) is None
    forward.close()


def test_kr8s_port_forward(up: tuple[Up, str]) -> None:
    import asyncio

    import kr8s.asyncio

    kubectl, pod_name = up

    async def fetch() -> bytes:
        api = await kr8s.asyncio.api(kubeconfig=str(kubectl.config))
        pod = await kr8s.asyncio.objects.Pod.get(pod_name, namespace="default", api=api)
        async with pod.portforward(remote_port=PORT, local_port=free_port()) as local:
            reader, writer = await asyncio.open_connection("127.0.0.1", local)
            writer.write(b"GET / HTTP/1.0\r\n\r\n")
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(), 10)
            writer.close()
            return answer

    assert (asyncio.run(fetch())).startswith(b"HTTP/1.0 200 OK")


def test_a_listener_that_is_not_the_pods_is_refused(up: tuple[Up, str]) -> None:
    # The port is open on this machine, but by the test, not by a process of the pod: a kubelet's pod would not
    # see it in its network namespace, so the forward is refused as a connection to a closed port.
    from kubernetes import client, config
    from kubernetes.stream import portforward

    kubectl, pod = up
    uid = kubectl.ok("get", "pod", pod, "-o", "jsonpath={.metadata.uid}")
    with socket.socket() as foreign:
        foreign.bind(("127.0.0.1", 0))
        foreign.listen()
        port = foreign.getsockname()[1]
        api = client.CoreV1Api(config.new_client_from_config(str(kubectl.config)))
        forward = portforward(api.connect_get_namespaced_pod_portforward, pod, "default", ports=str(port))
        sock = forward.socket(port)
        sock.settimeout(10)
        assert sock.recv(10) == b""
        assert forward.error(port) == _error_text(port, uid)
        foreign.settimeout(0.2)
        with pytest.raises(TimeoutError):
            foreign.accept()  # nothing reached the test's listener
        forward.close()


def test_without_credentials_the_upgrade_is_refused(up: tuple[Up, str]) -> None:
    kubectl, pod = up
    config = yaml.safe_load(kubectl.config.read_text())
    server = config["clusters"][0]["cluster"]["server"]
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    request = urllib.request.Request(
        f"{server}/api/v1/namespaces/default/pods/{pod}/portforward",
        method="POST",
        headers={"Connection": "Upgrade", "Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": "portforward.k8s.io"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, context=context, timeout=10)
    assert refused.value.code == 401


def test_the_forward_ends_when_the_pod_ends(up: tuple[Up, str]) -> None:
    # A kubelet's forward ends with its pod's network namespace; kjobs ends the connection when the pod stops.
    from kubernetes import client, config
    from kubernetes.stream import portforward

    kubectl, _ = up
    port = free_port()
    pod = _start_web(kubectl, "short", port)
    api = client.CoreV1Api(config.new_client_from_config(str(kubectl.config)))
    forward = portforward(api.connect_get_namespaced_pod_portforward, pod, "default", ports=str(port))
    sock = forward.socket(port)
    sock.settimeout(10)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # HTTP/1.1: the server keeps the connection open
    assert re.match(rb"HTTP/1.0 200 OK", sock.recv(65536))
    ended = threading.Event()

    def wait_closed() -> None:
        with contextlib.suppress(OSError):
            while sock.recv(65536):
                pass
        ended.set()

    threading.Thread(target=wait_closed, daemon=True).start()
    with _port_forward(kubectl, pod, f"{free_port()}:{port}") as proc:  # kubectl's tunnel ends with the pod too
        kubectl.ok("delete", "pod", pod, "--wait=false")
        _until(lambda: (not forward.connected) or None, "the forward's WebSocket to close")
        assert ended.wait(15)
        assert proc.wait(15) == 1
        assert proc.stderr is not None
        assert proc.stderr.read().rstrip().endswith("error: lost connection to pod")
