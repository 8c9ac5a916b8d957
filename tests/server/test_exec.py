"""pods/exec over WebSocket against an `ExecSource` that scripts the command: subprotocol negotiation, the framing
of each (binary, base64, pre-v4 status text), and the answers given before the upgrade (the API server's checks,
a v4 client refused by the kubelet, a request that is no upgrade). kubectl and the Python client against real
processes: tests/e2e/test_exec.py."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
from collections.abc import Iterator
from http import HTTPStatus
from urllib.parse import urlencode

import httpx
import pytest
import websocket

from kjobs.api.types import Obj
from kjobs.server.app import create_app
from kjobs.server.remotecommand import ExecOptions, ExecProcess, UpgradeFailed, terminal_size
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.server.conftest import pod_manifest
from tests.support import client_tls, shared_pki

PODS = "/api/v1/namespaces/default/pods"


class Scripted:
    """A command that writes `out` on stdout, echoes stdin back upper-cased on stderr until it ends, then exits 2."""

    def __init__(self, out: bytes) -> None:
        self.output: asyncio.Queue[tuple[int, bytes] | None] = asyncio.Queue()
        self.output.put_nowait((1, out))
        self.ended = asyncio.Event()

    async def write(self, data: bytes) -> None:
        await self.output.put((2, data.upper()))

    def close_stdin(self) -> None:
        self.output.put_nowait(None)

    def resize(self, width: int, height: int) -> None:
        self.output.put_nowait((1, f"{width}x{height}".encode()))

    async def wait(self) -> int:
        return 2

    def kill(self) -> None:
        self.output.put_nowait(None)


class ScriptedExec:
    """Runs `Scripted` in container `main`; every other container does not run."""

    def __init__(self) -> None:
        self.seen: list[ExecOptions] = []

    async def start_exec(self, pod: Obj, options: ExecOptions) -> ExecProcess:
        if options.container != "main":
            raise UpgradeFailed(f'container not found ("{options.container}")')
        self.seen.append(options)
        process = Scripted(" ".join(options.command).encode())
        if not options.stdin:
            process.output.put_nowait(None)
        return process


@pytest.fixture
def exec_server() -> Iterator[tuple[str, ScriptedExec]]:
    store = MemoryStore()
    source = ScriptedExec()
    with serve(store, app=create_app(store, exec_source=source), pki=shared_pki()) as url:
        with httpx.Client(base_url=url, verify=client_tls()) as http:
            pair = pod_manifest("pair", node="n1")
            pair["spec"]["containers"].append({"name": "side", "image": "busybox:1.36"})  # type: ignore[index]
            for manifest in (pod_manifest("p", node="n1"), pod_manifest("pending"), pair):
                assert http.post(PODS, json=manifest).status_code == 201
        yield url, source
    store.close()


def _connect(url: str, pod: str, query: list[tuple[str, str]], protocols: list[str]) -> websocket.WebSocket:
    target = url.replace("https://", "wss://") + f"{PODS}/{pod}/exec?" + urlencode(query)
    return websocket.create_connection(target, subprotocols=protocols, sslopt={"context": client_tls()}, timeout=10)


def _frames(ws: websocket.WebSocket) -> list[bytes | str]:
    frames: list[bytes | str] = []
    while True:
        opcode, data = ws.recv_data()
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            return frames
        frames.append(data.decode() if opcode == websocket.ABNF.OPCODE_TEXT else data)


COMMAND = [("command", "echo"), ("command", "hi")]


def test_v5_streams_stdin_until_the_close_signal_then_the_exit_status(exec_server: tuple[str, ScriptedExec]) -> None:
    url, source = exec_server
    query = [*COMMAND, ("stdin", "true"), ("stdout", "true"), ("stderr", "true")]
    ws = _connect(url, "p", query, ["v5.channel.k8s.io", "v4.channel.k8s.io"])
    assert ws.getsubprotocol() == "v5.channel.k8s.io"
    ws.send_binary(b"\x00abc")
    ws.send_binary(b'\x04{"Width":80,"Height":24}')
    ws.send_binary(b"\xff\x00")  # v5: stdin ends
    frames = _frames(ws)
    assert frames[:4] == [b"\x01", b"\x01echo hi", b"\x02ABC", b"\x0180x24"]
    status = json.loads(frames[4][1:])
    assert frames[4][:1] == b"\x03" and len(frames) == 5
    assert status == {
        "metadata": {},
        "status": "Failure",
        "message": "command terminated with non-zero exit code: error executing command [echo hi], exit code 2",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": "2"}]},
    }
    assert source.seen[0] == ExecOptions("main", ("echo", "hi"), stdin=True, stdout=True, stderr=True)


class GatedExec(ScriptedExec):
    """Starts its command only once the test says so: after the test's client has read the upgrade."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Event()

    async def start_exec(self, pod: Obj, options: ExecOptions) -> ExecProcess:
        if not await asyncio.to_thread(self.go.wait, 10):
            raise UpgradeFailed("the test never let the command start")
        return await super().start_exec(pod, options)


def test_v5_starts_the_command_after_the_upgrade() -> None:
    """As the API server's stream translator does, and as kubectl 1.32 needs: its client-go reads the connection
    before it has made its streams, and drops what comes first (kubernetes#131189). A v4 command starts before the
    upgrade (the kubelet's refusal is the upgrade's 500): the client waits for it."""
    store = MemoryStore()
    source = GatedExec()
    with serve(store, app=create_app(store, exec_source=source), pki=shared_pki()) as url:
        with httpx.Client(base_url=url, verify=client_tls()) as http:
            assert http.post(PODS, json=pod_manifest("p", node="n1")).status_code == 201
        ws = _connect(url, "p", [*COMMAND, ("stdout", "true")], ["v5.channel.k8s.io"])
        assert ws.getsubprotocol() == "v5.channel.k8s.io" and source.seen == []
        source.go.set()
        frames = _frames(ws)
        assert frames[:2] == [b"\x01", b"\x01echo hi"]
        source.go.clear()
        pending = threading.Thread(target=lambda: (time.sleep(0.3), source.go.set()))
        pending.start()
        began = time.monotonic()
        ws = _connect(url, "p", [*COMMAND, ("stdout", "true")], ["v4.channel.k8s.io"])
        assert time.monotonic() - began >= 0.3 and len(source.seen) == 2
        assert _frames(ws)[:2] == [b"\x01", b"\x01echo hi"]
        pending.join()
    store.close()


def test_base64_and_pre_v4_protocols(exec_server: tuple[str, ScriptedExec]) -> None:
    url, _ = exec_server
    ws = _connect(url, "p", [*COMMAND, ("stdout", "1")], ["v4.base64.channel.k8s.io"])
    frames = _frames(ws)
    assert frames[:2] == ["1", "1" + base64.b64encode(b"echo hi").decode()]
    assert json.loads(base64.b64decode(str(frames[2])[1:]))["reason"] == "NonZeroExitCode"
    ws = _connect(url, "p", [*COMMAND, ("stdout", "true")], ["channel.k8s.io"])
    assert (
        _frames(ws)[-1]
        == b"\x03command terminated with non-zero exit code: error executing command [echo hi], exit code 2"
    )


def test_refusals_before_the_upgrade(exec_server: tuple[str, ScriptedExec]) -> None:
    url, _ = exec_server
    cases = [
        ("missing", [*COMMAND, ("stdout", "true")], ["v4.channel.k8s.io"], 404, 'pods "missing" not found'),
        ("p", [*COMMAND, ("stdout", "true"), ("container", "nope")], [], 400, "container nope is not valid for pod p"),
        (
            "pair",
            [*COMMAND, ("stdout", "true")],
            [],
            400,
            "a container name must be specified for pod pair, choose one of: [main side]",
        ),
        ("pending", [*COMMAND, ("stdout", "true")], [], 400, "pod pending does not have a host assigned"),
        ("p", COMMAND, [], 400, "you must specify at least 1 of stdin, stdout, stderr"),
        (
            "pair",
            [*COMMAND, ("stdout", "true"), ("container", "side")],
            ["v4.channel.k8s.io"],
            500,
            'container not found ("side")',
        ),
        ("p", [*COMMAND, ("stdout", "true")], ["v9.channel.k8s.io"], 400, "requested protocol(s) are not supported"),
    ]
    for pod, query, protocols, code, message in cases:
        with pytest.raises(websocket.WebSocketBadStatusException) as refused:
            _connect(url, pod, query, protocols)
        assert refused.value.status_code == code, (pod, query)
        # written as Go's net/http writes any response: the status line's reason phrase and a Date header
        assert str(refused.value).startswith(f"Handshake status {code} {HTTPStatus(code).phrase} -+-+- ")
        assert "date" in (refused.value.resp_headers or {})
        status = json.loads(refused.value.resp_body or b"{}")
        assert status["kind"] == "Status" and status["code"] == code
        assert str(status["message"]).startswith(message), status


def test_without_a_websocket_upgrade(exec_server: tuple[str, ScriptedExec]) -> None:
    url, _ = exec_server
    with httpx.Client(base_url=url, verify=client_tls()) as http:
        plain = http.post(f"{PODS}/p/exec", params=[*COMMAND, ("stdout", "true")])
        assert (plain.status_code, plain.json()["message"]) == (400, "Upgrade request required")
        spdy = http.post(f"{PODS}/p/exec", params=[*COMMAND, ("stdout", "true")], headers={"Upgrade": "SPDY/3.1"})
        assert spdy.json()["message"] == "pods/exec is served over WebSocket only, not SPDY/3.1"
        assert http.post(f"{PODS}/missing/exec", params=COMMAND).status_code == 404
        resources = http.get("/api/v1").json()["resources"]
        exec_ = next(r for r in resources if r["name"] == "pods/exec")
        assert (exec_["kind"], exec_["verbs"]) == ("PodExecOptions", ["create", "get"])


def test_a_websocket_needs_credentials(exec_server: tuple[str, ScriptedExec]) -> None:
    url, _ = exec_server
    import ssl

    anonymous = ssl.create_default_context(cafile=str(shared_pki().ca_file))
    target = url.replace("https://", "wss://") + f"{PODS}/p/exec?" + urlencode([*COMMAND, ("stdout", "true")])
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        websocket.create_connection(target, sslopt={"context": anonymous}, timeout=10)
    assert refused.value.status_code == 401
    someone = {"Impersonate-User": "someone"}  # not in system:masters: RBAC's bootstrap policy grants no exec
    target = url.replace("https://", "wss://") + f"{PODS}/p/exec?" + urlencode([*COMMAND, ("stdout", "true")])
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        websocket.create_connection(target, header=someone, sslopt={"context": client_tls()}, timeout=10)
    assert refused.value.status_code == 403
    forbidden = 'User "someone" cannot create resource "pods/exec" in API group "" in the namespace "default"'
    assert json.loads(refused.value.resp_body or b"{}")["message"] == f'pods "p" is forbidden: {forbidden}'


def test_a_resize_is_read_as_go_decodes_it() -> None:
    # kubectl sends {"Width":..,"Height":..}, the JavaScript client {"height":..,"width":..}: Go's encoding/json
    # matches keys to TerminalSize's fields ignoring case, and refuses what a uint16 cannot hold.
    assert terminal_size(b'{"Width":80,"Height":24}') == (80, 24)
    assert terminal_size(b'{"height":30,"width":100}') == (100, 30)
    assert terminal_size(b'{"WIDTH":1,"width":2,"Height":null}') == (2, 0)
    assert [terminal_size(b) for b in (b'{"Width":70000}', b'{"Width":8.5}', b'{"Width":-1}', b"[80]", b"{")] == [
        None
    ] * 5


def test_attach_has_execs_checks_and_its_own_discovery_entry_and_verb(exec_server: tuple[str, ScriptedExec]) -> None:
    # pods/attach (kubectl attach, kubectl run -i): the API server's checks of exec, PodAttachOptions in
    # discovery, and the create verb for its WebSocket GET; the default source (no agent) has no running container.
    url, _ = exec_server
    with httpx.Client(base_url=url, verify=client_tls()) as http:
        plain = http.post(f"{PODS}/p/attach", params=[("stdout", "true")])
        assert (plain.status_code, plain.json()["message"]) == (400, "Upgrade request required")
        assert http.post(f"{PODS}/missing/attach", params=[("stdout", "true")]).status_code == 404
        resources = http.get("/api/v1").json()["resources"]
        attach = next(r for r in resources if r["name"] == "pods/attach")
        assert (attach["kind"], attach["verbs"]) == ("PodAttachOptions", ["create", "get"])
    target = url.replace("https://", "wss://") + f"{PODS}/pending/attach?stdout=true"
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        websocket.create_connection(target, sslopt={"context": client_tls()}, timeout=10)
    assert refused.value.status_code == 400
    assert json.loads(refused.value.resp_body or b"{}")["message"] == "pod pending does not have a host assigned"
    target = url.replace("https://", "wss://") + f"{PODS}/p/attach?stdout=true"
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        websocket.create_connection(
            target, header={"Impersonate-User": "someone"}, sslopt={"context": client_tls()}, timeout=10
        )
    forbidden = 'User "someone" cannot create resource "pods/attach" in API group "" in the namespace "default"'
    assert json.loads(refused.value.resp_body or b"{}")["message"] == f'pods "p" is forbidden: {forbidden}'


def test_no_websocket_compression_is_negotiated(exec_server: tuple[str, ScriptedExec]) -> None:
    """The JavaScript client's `ws` (and browsers) offer `permessage-deflate`; kube-apiserver's WebSocket server
    (golang.org/x/net/websocket, under wsstream) implements no extension and answers without
    `Sec-WebSocket-Extensions`, so frames stay uncompressed: so here."""
    url, _ = exec_server
    target = url.replace("https://", "wss://") + f"{PODS}/p/exec?" + urlencode([*COMMAND, ("stdout", "true")])
    offer = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits"
    ws = websocket.create_connection(
        target, subprotocols=["v5.channel.k8s.io"], header=[offer], sslopt={"context": client_tls()}, timeout=10
    )
    assert ws.getsubprotocol() == "v5.channel.k8s.io"
    assert "sec-websocket-extensions" not in {name.lower() for name in ws.getheaders()}
    assert _frames(ws)[:2] == [b"\x01", b"\x01echo hi"]
