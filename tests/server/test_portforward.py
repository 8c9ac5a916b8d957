"""pods/portforward against a `PortForwardSource` whose pod "listens" on one echo port: the answers given before any
upgrade (credentials, the API server's and the kubelet's checks), the WebSocket channel protocol, SPDY/3.1 over an
upgraded connection and SPDY tunneled over WebSocket, spoken here frame by frame. kubectl, the Python client and
kr8s against real pods: tests/e2e/test_portforward.py."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import socket
import socketserver
import ssl
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import websocket

from kjobs.api.types import Obj
from kjobs.server import portforward, spdy
from kjobs.server.app import create_app
from kjobs.server.portforward import ForwardRefused, PortTarget, pod_does_not_exist, refused_message
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.server.conftest import pod_manifest
from tests.support import client_tls, shared_pki

PODS = "/api/v1/namespaces/default/pods"
REFUSED = 1  # a port nothing of the pod listens on


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(65536):
            self.request.sendall(data.upper())


class FakePorts:
    """A pod whose only listener is the test's echo server."""

    def __init__(self, pod_id: str, echo_port: int) -> None:
        self.pod_id = pod_id
        self._echo = echo_port

    def running(self) -> bool:
        return True

    async def connect(self, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if port != self._echo:
            raise ForwardRefused(refused_message(port, self.pod_id))
        return await asyncio.open_connection("127.0.0.1", port)


class FakeSource:
    """Runs pod `p` (uid `uid-p`); knows no other pod."""

    def __init__(self, echo_port: int) -> None:
        self.echo_port = echo_port

    def port_target(self, pod: Obj) -> PortTarget:
        if pod["metadata"]["name"] != "p":
            raise pod_does_not_exist()
        return FakePorts("uid-p", self.echo_port)


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    echo = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    echo.daemon_threads = True
    threading.Thread(target=echo.serve_forever, daemon=True).start()
    echo_port = echo.server_address[1]
    store = MemoryStore()
    app = create_app(store, portforward_source=FakeSource(echo_port))
    with serve(store, app=app, pki=shared_pki()) as url:
        with httpx.Client(base_url=url, verify=client_tls()) as http:
            for manifest in (pod_manifest("p", node="n1"), pod_manifest("pending"), pod_manifest("other", node="n1")):
                assert http.post(PODS, json=manifest).status_code == 201
        yield url, echo_port
    echo.shutdown()
    store.close()


def _wss(url: str, path: str) -> str:
    return url.replace("https://", "wss://") + path


def _ws(url: str, path: str, **kwargs: Any) -> websocket.WebSocket:
    return websocket.create_connection(
        _wss(url, path), sslopt={"context": kwargs.pop("context", client_tls())}, timeout=10, **kwargs
    )


def _refused(url: str, path: str, **kwargs: Any) -> tuple[int, str]:
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        _ws(url, path, **kwargs)
    body = json.loads(refused.value.resp_body or b"{}")
    return refused.value.status_code, body.get("message", "")


def _error_text(port: int) -> str:
    return (
        f"error forwarding port {port} to pod uid-p, uid : failed to execute portforward in network namespace "
        f'"host": failed to connect to localhost:{port} inside namespace "uid-p", IPv4: dial tcp4 127.0.0.1:{port}: '
        f"connect: connection refused IPv6 dial tcp6 [::1]:{port}: connect: connection refused "
    )


# ------------------------------------------------------------------------------------------- before any upgrade


def test_discovery_lists_pods_portforward(server: tuple[str, int]) -> None:
    url, _ = server
    with httpx.Client(base_url=url, verify=client_tls()) as http:
        resources = http.get("/api/v1").json()["resources"]
    entry = next(r for r in resources if r["name"] == "pods/portforward")
    assert (entry["kind"], entry["verbs"], entry["namespaced"]) == ("PodPortForwardOptions", ["create", "get"], True)


def _raw_upgrade(
    url: str, path: str, context: ssl.SSLContext, protocols: str = "portforward.k8s.io"
) -> tuple[bytes, ssl.SSLSocket]:
    """Send an `Upgrade: SPDY/3.1` request; the response head and the socket (whose rest may be SPDY)."""
    host, port = url.removeprefix("https://").split(":")
    raw = socket.create_connection((host, int(port)), timeout=10)
    conn = context.wrap_socket(raw, server_hostname=host)
    request = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n"
        + (f"X-Stream-Protocol-Version: {protocols}\r\n" if protocols else "")
        + "Content-Length: 0\r\n\r\n"
    )
    conn.sendall(request.encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = conn.recv(1)
        if not chunk:
            break
        head += chunk
    return head, conn


def test_no_credentials_is_401_before_any_upgrade(server: tuple[str, int]) -> None:
    url, echo = server
    anonymous = ssl.create_default_context(cafile=str(shared_pki().ca_file))
    assert _refused(url, f"{PODS}/p/portforward?ports={echo}", context=anonymous)[0] == 401
    tunnel = ["SPDY/3.1+portforward.k8s.io"]
    assert _refused(url, f"{PODS}/p/portforward", context=anonymous, subprotocols=tunnel)[0] == 401
    head, conn = _raw_upgrade(url, f"{PODS}/p/portforward", anonymous)
    with conn:
        assert head.startswith(b"HTTP/1.1 401 ")
        body = b""
        while chunk := conn.recv(4096):  # the server closes the connection after the refusal
            body += chunk
        assert json.loads(body)["reason"] == "Unauthorized"


def test_the_checks_of_the_api_server_and_the_kubelet_come_before_the_upgrade(server: tuple[str, int]) -> None:
    url, echo = server
    with httpx.Client(base_url=url, verify=client_tls()) as http:
        plain = http.post(f"{PODS}/p/portforward", params={"ports": echo})
        assert (plain.status_code, plain.json()["message"]) == (400, "Upgrade request required")
        assert http.put(f"{PODS}/p/portforward").status_code == 405
    assert _refused(url, f"{PODS}/missing/portforward?ports=80") == (404, 'pods "missing" not found')
    assert _refused(url, f"{PODS}/pending/portforward?ports=80") == (400, "pod pending does not have a host assigned")
    assert _refused(url, f"{PODS}/p/portforward") == (400, 'query parameter "port" is required')
    assert _refused(url, f"{PODS}/p/portforward?ports=x") == (
        400,
        'unable to parse "x" as a port: strconv.ParseUint: parsing "x": invalid syntax',
    )
    assert _refused(url, f"{PODS}/p/portforward?ports=80,70000")[1].endswith('parsing "70000": value out of range')
    assert _refused(url, f"{PODS}/p/portforward?ports=0") == (400, 'port "0" must be > 0')
    assert _refused(url, f"{PODS}/other/portforward?ports=80") == (404, "pod does not exist")
    code, message = _refused(url, f"{PODS}/p/portforward?ports=80", subprotocols=["v5.channel.k8s.io"])
    assert (code, message) == (
        400,
        "unable to upgrade websocket connection: requested protocol(s) are not supported: [v5.channel.k8s.io]; "
        "supports [ v4.channel.k8s.io v4.base64.channel.k8s.io]",
    )
    someone = {"Impersonate-User": "someone"}
    forbidden = 'User "someone" cannot create resource "pods/portforward" in API group "" in the namespace "default"'
    assert _refused(url, f"{PODS}/p/portforward?ports=80", header=someone) == (
        403,
        f'pods "p" is forbidden: {forbidden}',
    )
    head, conn = _raw_upgrade(url, f"{PODS}/p/portforward", client_tls(), "v9, v8")
    with conn:
        assert head.startswith(b"HTTP/1.1 403 ")
        body = json.loads(conn.recv(65536))
    assert body["message"] == (
        "unable to upgrade: unable to negotiate protocol: client supports [v9 v8], server accepts [portforward.k8s.io]"
    )


# ------------------------------------------------------------------------------------------- WebSocket channels


def test_websocket_channels_forward_each_port_and_report_a_refused_one(server: tuple[str, int]) -> None:
    url, echo = server
    offered = ["v5.channel.k8s.io", "v4.channel.k8s.io"]
    with contextlib.closing(_ws(url, f"{PODS}/p/portforward?ports={echo},{REFUSED}", subprotocols=offered)) as ws:
        assert ws.subprotocol == "v4.channel.k8s.io"
        prefix, refused = echo.to_bytes(2, "little"), REFUSED.to_bytes(2, "little")
        first = {ws.recv_data_frame(True)[1].data for _ in range(4)}
        assert first == {b"\x00" + prefix, b"\x01" + prefix, b"\x02" + refused, b"\x03" + refused}
        assert ws.recv_data_frame(True)[1].data == b"\x03" + _error_text(REFUSED).encode()
        ws.send_binary(b"\x00hello")  # the refused port's error leaves the other forwarding
        assert ws.recv_data_frame(True)[1].data == b"\x00HELLO"


def test_websocket_base64_channels(server: tuple[str, int]) -> None:
    url, echo = server
    offered = ["v4.base64.channel.k8s.io"]
    with contextlib.closing(_ws(url, f"{PODS}/p/portforward?ports={echo}", subprotocols=offered)) as ws:
        prefix = base64.b64encode(echo.to_bytes(2, "little")).decode()
        assert {ws.recv(), ws.recv()} == {"0" + prefix, "1" + prefix}
        ws.send("0" + base64.b64encode(b"abc").decode())
        assert ws.recv() == "0" + base64.b64encode(b"ABC").decode()


# ------------------------------------------------------------------------------------------- SPDY


class SpdyClient:
    """A port-forward client speaking SPDY frame by frame, as client-go's does: an error stream, then a data
    stream, per forwarded connection."""

    def __init__(self, send: Any, recv: Any) -> None:
        self._send, self._recv = send, recv
        self.writer = spdy.FrameWriter()
        self.reader = spdy.FrameReader()
        self.frames: list[spdy.Frame] = []
        self.next_id = 1

    def open(self, port: str, kind: str, request: str) -> int:
        stream_id, self.next_id = self.next_id, self.next_id + 2
        headers = {"streamType": [kind], "port": [port], "requestID": [request]}
        self._send(self.writer.syn_stream(stream_id, headers))
        return stream_id

    def frame(self) -> spdy.Frame:
        while not self.frames:
            data = self._recv()
            assert data, "the server closed the connection"
            self.frames += self.reader.feed(data)
        return self.frames.pop(0)

    def until(self, wanted: Any) -> spdy.Frame:
        while True:
            frame = self.frame()
            if wanted(frame):
                return frame


def _forward_and_refuse(client: SpdyClient, echo: int) -> None:
    error = client.open(str(echo), "error", "0")
    data = client.open(str(echo), "data", "0")
    assert client.frame() == spdy.SynReply(error, 0, {})
    assert client.frame() == spdy.SynReply(data, 0, {})
    client._send(client.writer.data(data, b"over spdy"))
    assert client.frame() == spdy.Data(data, 0, b"OVER SPDY")
    client._send(client.writer.data(data, b"", fin=True))  # the pod's side ends after the client's FIN
    assert client.until(lambda f: isinstance(f, spdy.Data) and f.stream_id == data and f.flags) == spdy.Data(
        data, spdy.FLAG_FIN, b""
    )
    # a port nothing of the pod listens on: the error text on the error stream, then both closed
    error = client.open(str(REFUSED), "error", "1")
    data = client.open(str(REFUSED), "data", "1")
    text = client.until(lambda f: isinstance(f, spdy.Data) and f.stream_id == error and f.data)
    assert text == spdy.Data(error, 0, _error_text(REFUSED).encode())
    # a stream with a bad header is reset (the handler's error: spdystream's Reset, CANCEL)
    bad = client.open("0", "data", "2")
    assert client.until(lambda f: isinstance(f, spdy.RstStream)) == spdy.RstStream(bad, spdy.CANCEL)
    client._send(client.writer.ping(5))  # the client's ping comes back
    assert client.until(lambda f: isinstance(f, spdy.Ping)) == spdy.Ping(5)
    # the connection still forwards after all that
    error = client.open(str(echo), "error", "3")
    data = client.open(str(echo), "data", "3")
    client._send(client.writer.data(data, b"again"))
    assert client.until(lambda f: isinstance(f, spdy.Data) and f.stream_id == data and f.data) == spdy.Data(
        data, 0, b"AGAIN"
    )


def test_spdy_over_an_upgraded_connection(server: tuple[str, int]) -> None:
    url, echo = server
    head, conn = _raw_upgrade(url, f"{PODS}/p/portforward", client_tls())
    with conn:
        lines = head.decode().split("\r\n")
        assert lines[0] == "HTTP/1.1 101 Switching Protocols"
        assert {"Connection: Upgrade", "Upgrade: SPDY/3.1", "X-Stream-Protocol-Version: portforward.k8s.io"} <= set(
            lines
        )
        _forward_and_refuse(SpdyClient(conn.sendall, lambda: conn.recv(65536)), echo)


def test_spdy_tunneled_over_websocket(server: tuple[str, int]) -> None:
    url, echo = server
    offered = ["SPDY/3.1+portforward.k8s.io"]
    with contextlib.closing(_ws(url, f"{PODS}/p/portforward", subprotocols=offered)) as ws:
        assert ws.subprotocol.lower() == "spdy/3.1+portforward.k8s.io"  # websocket-client lower-cases it
        _forward_and_refuse(SpdyClient(ws.send_binary, lambda: ws.recv_data_frame(True)[1].data), echo)


def test_spdy_stream_pairs_are_capped(server: tuple[str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    url, echo = server
    monkeypatch.setattr(portforward, "MAX_STREAM_PAIRS", 1)
    head, conn = _raw_upgrade(url, f"{PODS}/p/portforward", client_tls())
    with conn:
        assert head.startswith(b"HTTP/1.1 101 ")
        client = SpdyClient(conn.sendall, lambda: conn.recv(65536))
        client.open(str(echo), "error", "0")
        refused = client.open(str(echo), "error", "1")  # a second pair while the first is incomplete
        assert client.until(lambda f: isinstance(f, spdy.RstStream)) == spdy.RstStream(refused, spdy.REFUSED_STREAM)
