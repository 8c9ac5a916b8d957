"""`pods/{name}/portforward`: `kubectl port-forward` and the clients' port-forwards, as a kubelet on containerd
answers them.

Design note: a kjobs pod's processes share the host's network (pod IP 127.0.0.1), so forwarding a stream to port N
of a pod connects to localhost:N on this machine. A kubelet's runtime connects inside the pod's network namespace,
where only the pod's own listeners exist; kjobs forwards only to a port one of the pod's own processes listens on
(`PortTarget.connect`, `kjobs.node.portforward`), and answers any other port as containerd answers a refused
connection (`sandbox_portforward_linux.go` `portForward`, containerd 1.7/2.0) wrapped by the kubelet's streaming
server (pkg/kubelet/cri/streaming/portforward/{httpstream,websocket}.go `portForward`): `error forwarding port N to
pod SANDBOX, uid : failed to execute portforward in network namespace "host": failed to connect to localhost:N
inside namespace "SANDBOX", IPv4: dial tcp4 127.0.0.1:N: connect: connection refused IPv6 dial tcp6 [::1]:N:
connect: connection refused ` (the trailing space is containerd's). kjobs has no sandbox; the pod's UID stands for
its id, and its network namespace is the host's.

Three framings are served:
- WebSocket channels (`v4.channel.k8s.io`, its base64 variant, or none: binary; the Python client and kr8s),
  websocket.go: ports from the query (`ports=8080,9090`, repeatable), two channels per port (data 2i, error 2i+1),
  each opened by the port as 2 bytes little-endian; every port is connected at once, an error goes on its error
  channel, and the connection closes when every port's forward has ended.
- SPDY/3.1 (`kjobs.server.spdy`) over the connection of an `Upgrade: SPDY/3.1` request (kubectl with
  KUBECTL_PORT_FORWARD_WEBSOCKETS=false, older kubectl), sub-protocol `portforward.k8s.io`: httpstream.go. Per
  forwarded connection the client opens an error stream and a data stream (headers `streamType`, `port`,
  `requestID`); a stream with a bad header is reset, a complete pair is forwarded and both streams are closed
  (FIN) when the forward ends, after the error text, if any, on the error stream.
- SPDY tunneled in a WebSocket's binary messages (sub-protocol `SPDY/3.1+portforward.k8s.io`, KEP-4006, the default
  of kubectl since 1.30): the API server's `TunnelingHandler` (staging/src/k8s.io/apiserver/pkg/util/proxy/
  streamtunnel.go) ends the WebSocket and speaks SPDY to the kubelet; here the same SPDY session reads the
  messages' bytes.

Bounds: `MAX_STREAM_PAIRS` forwards at once per connection (a stream beyond is refused, RST_STREAM
REFUSED_STREAM), `CHUNK` bytes read from a pod's socket at a time and sent before the next read, the client's
data written to the pod before its next frame is read, streams whose pair does not complete within
`STREAM_CREATION_TIMEOUT` dropped, and every connection ended when its pod stops running (`POD_POLL_SECONDS`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qsl

from kjobs.api.errors import ApiError, bad_request
from kjobs.api.types import Obj
from kjobs.server.remotecommand import V4, V4_BASE64, Channels

if TYPE_CHECKING:
    from kjobs.server import spdy

log = logging.getLogger(__name__)

PROTOCOL = "portforward.k8s.io"
"""The SPDY stream protocol (`PortForwardProtocolV1Name`), sent back in X-Stream-Protocol-Version."""
TUNNEL = "SPDY/3.1+" + PROTOCOL
"""The WebSocket sub-protocol that tunnels it (`WebsocketsSPDYTunnelingPrefix` + the protocol)."""
WEBSOCKET_PROTOCOLS = (V4, V4_BASE64)
"""What the kubelet's websocket.go serves besides no sub-protocol at all (binary)."""

STREAM_TYPE, PORT, REQUEST_ID = "streamtype", "port", "requestid"
"""The SPDY stream headers (`api.StreamType`, `api.PortHeader`, `api.PortForwardRequestIDHeader`), lower-cased."""
DATA, ERROR = "data", "error"

MAX_STREAM_PAIRS = 128
CHUNK = 32 * 1024
PENDING_LIMIT = 64 * 1024
"""Bytes kept of a data stream whose error stream has not come yet (kubectl opens the error stream first)."""
STREAM_CREATION_TIMEOUT = 30.0
"""The kubelet's `DefaultStreamCreationTimeout`."""
CLOSE_GRACE = 1.0
"""Seconds containerd lets the other direction finish once one has ended (socat's default, `portForward`)."""
POD_POLL_SECONDS = 1.0


class ForwardRefused(Exception):
    """The runtime could not connect to the port (the message is containerd's, without the kubelet's prefix)."""


class PortTarget(Protocol):
    """A running pod's ports, as its node's runtime reaches them."""

    pod_id: str
    """What stands for the sandbox id in errors (the pod's UID)."""

    async def connect(self, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to the pod's listener on `port`; `ForwardRefused` when none of its processes listens."""
        ...

    def running(self) -> bool:
        """Whether the pod still runs on its node (a forward ends when it stops)."""
        ...


class PortForwardSource(Protocol):
    """Finds a pod's node runtime for a port-forward (`AgentLogs`)."""

    def port_target(self, pod: Obj) -> PortTarget:
        """The pod's ports; an `ApiError` (the kubelet's 404 `pod does not exist`) when its node runs no such pod."""
        ...


class NoPortForward:
    """The default source: no node agent here, so no pod runs."""

    def port_target(self, pod: Obj) -> PortTarget:
        raise pod_does_not_exist()


def pod_does_not_exist() -> ApiError:
    """The kubelet's answer for a pod it does not run (server.go `getPortForward`), passed on by the API server;
    kubectl prints `error upgrading connection: unable to upgrade connection: pod does not exist`."""
    return ApiError(404, "NotFound", "pod does not exist")


def refused_message(port: int, sandbox: str) -> str:
    """containerd's error for a port nothing of the pod listens on (dialLocalhost failing both families)."""
    return (
        f'failed to execute portforward in network namespace "host": failed to connect to localhost:{port} inside '
        f'namespace "{sandbox}", IPv4: dial tcp4 127.0.0.1:{port}: connect: connection refused IPv6 dial tcp6 '
        f"[::1]:{port}: connect: connection refused "
    )


def forward_error(port: int, sandbox: str, message: str) -> str:
    """The kubelet's wrapping of a runtime error, written on the error stream (`portForward`; the uid is empty:
    the CRI streaming server passes none)."""
    return f"error forwarding port {port} to pod {sandbox}, uid : {message}"


def check_pod(pod: Obj) -> None:
    """The API server's check before it asks the kubelet (`PortForwardLocation`, pkg/registry/core/pod/strategy.go)."""
    name = str((pod.get("metadata") or {}).get("name") or "")
    if not (pod.get("spec") or {}).get("nodeName"):
        raise bad_request(f"pod {name} does not have a host assigned")


def websocket_ports(raw_query: bytes) -> list[int]:
    """The ports of a WebSocket request (`NewV4Options`): `ports` (the API server's `PodPortForwardOptions`, which
    it passes on as the kubelet's `port`), repeatable and comma-separated, each 1..65535."""
    values = [value for key, value in parse_qsl(raw_query.decode("latin-1"), keep_blank_values=True) if key == "ports"]
    if not values:
        raise bad_request('query parameter "port" is required')
    ports: list[int] = []
    for value in values:
        if not value:
            raise bad_request('query parameter "port" cannot be empty')
        for part in value.split(","):
            ports.append(_parse_port(part, value))
    if len(ports) > MAX_STREAM_PAIRS:
        raise bad_request(f"at most {MAX_STREAM_PAIRS} ports can be forwarded at once")
    return ports


def _parse_port(text: str, whole: str) -> int:
    """`strconv.ParseUint(text, 10, 16)` with the kubelet's messages around its errors."""
    if not text.isascii() or not text.isdigit():
        raise bad_request(f'unable to parse "{whole}" as a port: strconv.ParseUint: parsing "{text}": invalid syntax')
    port = int(text)
    if port > 0xFFFF:
        raise bad_request(
            f'unable to parse "{whole}" as a port: strconv.ParseUint: parsing "{text}": value out of range'
        )
    if port < 1:
        raise bad_request(f'port "{whole}" must be > 0')
    return port


def negotiate_websocket(offered: list[str]) -> str | None:
    """The sub-protocol served for a WebSocket port-forward: the SPDY tunnel when offered (the API server looks
    for it first), else the first channel protocol offered ('' when none is offered); None when none is served."""
    if TUNNEL in offered:
        return TUNNEL
    if not offered:
        return ""
    return next((p for p in offered if p in WEBSOCKET_PROTOCOLS), None)


def unsupported_protocols(offered: list[str]) -> ApiError:
    """wsstream's handshake error (the kubelet's answer, passed on)."""
    return bad_request(
        f"unable to upgrade websocket connection: requested protocol(s) are not supported: [{' '.join(offered)}]; "
        f"supports [ {' '.join(WEBSOCKET_PROTOCOLS)}]"
    )


def spdy_handshake(offered: list[str]) -> str:
    """httpstream.Handshake (staging/src/k8s.io/apimachinery/pkg/util/httpstream/httpstream.go): the protocol
    agreed from X-Stream-Protocol-Version; 403 when the client speaks no served one. The kubelet writes nothing
    when the header is missing; kjobs answers that with a 400 carrying Handshake's error."""
    protocols = [p.strip(" ") for value in offered for p in value.split(",") if p.strip(" ")]
    if not protocols:
        raise bad_request("unable to upgrade: X-Stream-Protocol-Version is required")
    if PROTOCOL in protocols:
        return PROTOCOL
    raise ApiError(
        403,
        "Forbidden",
        f"unable to upgrade: unable to negotiate protocol: client supports {_go_list(protocols)}, "
        f"server accepts {_go_list([PROTOCOL])}",
    )


def _go_list(items: list[str]) -> str:
    return "[" + " ".join(items) + "]"


class Sessions:
    """The port-forward connections open now, so a server stopping can end them (its shutdown waits for them)."""

    def __init__(self) -> None:
        self._open: set[asyncio.Event] = set()

    @contextlib.contextmanager
    def track(self) -> Any:
        stop = asyncio.Event()
        self._open.add(stop)
        try:
            yield stop
        finally:
            self._open.discard(stop)

    def close_all(self) -> None:
        for stop in list(self._open):
            stop.set()


async def _until_pod_ends(target: PortTarget, stop: asyncio.Event) -> None:
    """Returns when the pod stops running or the server stops."""
    while not stop.is_set():
        if not target.running():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), POD_POLL_SECONDS)


async def _close_writer(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(writer.wait_closed(), CLOSE_GRACE)


# ---------------------------------------------------------------------------------------------- WebSocket channels

Receive = Callable[[], Awaitable[dict[str, Any]]]


async def serve_channels(
    channels: Channels, ports: list[int], target: PortTarget, receive: Receive, stop: asyncio.Event
) -> None:
    """The v4 channel protocol over an accepted WebSocket (`handleWebSocketStreams`)."""
    for index, port in enumerate(ports):
        prefix = port.to_bytes(2, "little")
        await channels.write(2 * index, prefix)
        await channels.write(2 * index + 1, prefix)
    loop = asyncio.get_running_loop()
    # each port's connection to the pod: its writer once connected, None once refused or ended
    writers: list[asyncio.Future[asyncio.StreamWriter | None]] = [loop.create_future() for _ in ports]
    forwards = [asyncio.ensure_future(_channel_forward(channels, i, p, target, writers)) for i, p in enumerate(ports)]
    everything: asyncio.Future[Any] = asyncio.ensure_future(asyncio.gather(*forwards, return_exceptions=True))
    reader = asyncio.ensure_future(_channels_from_client(channels, receive, writers))
    ended = asyncio.ensure_future(_until_pod_ends(target, stop))
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({everything, reader, ended, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (reader, ended, stopped, *forwards):
            task.cancel()
        with contextlib.suppress(BaseException):
            await everything
        await channels.close()


async def _channel_forward(
    channels: Channels,
    index: int,
    port: int,
    target: PortTarget,
    writers: list[asyncio.Future[asyncio.StreamWriter | None]],
) -> None:
    try:
        reader, writer = await target.connect(port)
    except ForwardRefused as exc:
        writers[index].set_result(None)
        await channels.write(2 * index + 1, forward_error(port, target.pod_id, str(exc)).encode())
        return
    writers[index].set_result(writer)
    try:
        while True:
            chunk = await reader.read(CHUNK)
            if not chunk or channels.gone:
                break
            await channels.write(2 * index, chunk)
    except OSError:
        pass
    finally:
        writers[index] = asyncio.get_running_loop().create_future()
        writers[index].set_result(None)
        await _close_writer(writer)


async def _channels_from_client(
    channels: Channels, receive: Receive, writers: list[asyncio.Future[asyncio.StreamWriter | None]]
) -> None:
    """The client's data to each port's connection, in order, each written before the next message is read (what
    arrives while a port is still being connected waits for it)."""
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            channels.gone = True
            return
        frame = channels.read(message)
        if frame is None:
            continue
        channel, data = frame
        if channel % 2 or channel >= 2 * len(writers) or not data:
            continue  # error channels are the server's to write
        writer = await writers[channel // 2]
        if writer is None:
            continue
        try:
            writer.write(data)
            await writer.drain()
        except OSError:
            continue


# ---------------------------------------------------------------------------------------------- SPDY


@dataclass(eq=False, repr=False)
class _Pair:
    request_id: str
    port: int
    data: int = 0
    error: int = 0
    writer: asyncio.StreamWriter | None = None
    pending: bytearray = field(default_factory=bytearray)
    """What the client sent on the data stream before its error stream came (at most `PENDING_LIMIT` bytes)."""
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the pod's side is connected or refused."""
    client_done: bool = False
    task: asyncio.Task[None] | None = None
    timeout: asyncio.TimerHandle | None = None


class SpdySession:
    """The server side of one port-forward SPDY connection (`handleHTTPStreams`), over any byte transport."""

    def __init__(self, target: PortTarget, send: Callable[[bytes], Awaitable[None]]) -> None:
        # The SPDY framing (and its frames' dataclasses) is imported by a session's methods, not with this
        # module: every node agent imports this module, and `kjobs run` serves no port-forward without --serve.
        from kjobs.server import spdy

        self._target = target
        self._send_bytes = send
        self._reader = spdy.FrameReader()
        self._writer = spdy.FrameWriter()
        self._lock = asyncio.Lock()
        self._pairs: dict[str, _Pair] = {}
        self._streams: dict[int, _Pair] = {}
        self._last_id = 0
        self._closed = False

    async def _send(self, make: Callable[[], bytes]) -> None:
        """Frames go out one at a time, in the order their header blocks were compressed."""
        if self._closed:
            return
        async with self._lock:
            if self._closed:
                return
            try:
                await self._send_bytes(make())
            except Exception:  # the client went away
                self._closed = True

    async def run(self, read: Callable[[], Awaitable[bytes]], stop: asyncio.Event) -> None:
        """Read frames until the client leaves, sends GOAWAY, breaks the framing, the pod ends or the server
        stops; then end every forward."""
        from kjobs.server import spdy

        ended = asyncio.ensure_future(_until_pod_ends(self._target, stop))
        stopped = asyncio.ensure_future(stop.wait())
        try:
            while True:
                reading = asyncio.ensure_future(read())
                done, _ = await asyncio.wait({reading, ended, stopped}, return_when=asyncio.FIRST_COMPLETED)
                if reading not in done:
                    reading.cancel()
                    await self._send(lambda: self._writer.goaway(self._last_id))
                    return
                try:
                    data = reading.result()
                except (OSError, EOFError):
                    return
                if not data:
                    return
                try:
                    frames = self._reader.feed(data)
                except spdy.ProtocolError:
                    await self._send(lambda: self._writer.goaway(self._last_id, spdy.GOAWAY_PROTOCOL_ERROR))
                    return
                for frame in frames:
                    if not await self._handle(frame):
                        return
        finally:
            ended.cancel()
            stopped.cancel()
            await self._end_all()

    async def _handle(self, frame: spdy.Frame) -> bool:
        """Act on one frame; False when the connection ends."""
        from kjobs.server import spdy

        if isinstance(frame, spdy.SynStream):
            await self._new_stream(frame)
        elif isinstance(frame, spdy.Data):
            await self._data(frame)
        elif isinstance(frame, spdy.RstStream):
            pair = self._streams.get(frame.stream_id)
            if pair is not None:
                self._end_pair(pair)
        elif isinstance(frame, spdy.Ping):
            if frame.ping_id % 2 == 1:  # the client's: answered with the same id (ours would be even)
                ping_id = frame.ping_id
                await self._send(lambda: self._writer.ping(ping_id))
        elif isinstance(frame, spdy.GoAway):
            return False
        return True  # SETTINGS, WINDOW_UPDATE, HEADERS, SYN_REPLY: nothing a port-forward server acts on

    async def _new_stream(self, frame: spdy.SynStream) -> None:
        from kjobs.server import spdy

        stream_id = frame.stream_id
        if stream_id % 2 == 0 or stream_id <= self._last_id:  # spdystream's validateStreamId
            await self._send(lambda: self._writer.rst_stream(stream_id, spdy.PROTOCOL_ERROR))
            return
        self._last_id = stream_id
        headers = {name: values[0] if values else "" for name, values in frame.headers.items()}
        try:
            port = _stream_port(headers)
        except ValueError:
            await self._send(lambda: self._writer.rst_stream(stream_id, spdy.CANCEL))  # the handler's Reset
            return
        kind = headers[STREAM_TYPE]
        request_id = headers.get(REQUEST_ID, "")
        if not request_id:  # an old client: the kubelet's pseudo request id from the stream ids
            request_id = str(stream_id if kind == ERROR else stream_id - 2)
        pair = self._pairs.get(request_id)
        if pair is None:
            if len(self._pairs) >= MAX_STREAM_PAIRS:
                await self._send(lambda: self._writer.rst_stream(stream_id, spdy.REFUSED_STREAM))
                return
            pair = self._pairs[request_id] = _Pair(request_id, port)
            loop = asyncio.get_running_loop()
            pair.timeout = loop.call_later(STREAM_CREATION_TIMEOUT, self._timed_out, pair)
        await self._send(lambda: self._writer.syn_reply(stream_id, {}))
        self._streams[stream_id] = pair
        if kind == DATA:
            if pair.data:
                await self._error_text(
                    pair, f"error processing stream for request {request_id}: data stream already assigned"
                )
                return
            pair.data = stream_id
            pair.port = port
        else:
            if pair.error:
                await self._error_text(
                    pair, f"error processing stream for request {request_id}: error stream already assigned"
                )
                return
            pair.error = stream_id
        if frame.flags & spdy.FLAG_FIN and kind == DATA:
            pair.client_done = True
        if pair.data and pair.error and pair.task is None:
            if pair.timeout is not None:
                pair.timeout.cancel()
            pair.task = asyncio.ensure_future(self._forward(pair))

    def _timed_out(self, pair: _Pair) -> None:
        if pair.task is None:
            pair.task = asyncio.ensure_future(
                self._error_text(pair, f"(request={pair.request_id}) timed out waiting for streams")
            )
            self._end_pair(pair)

    async def _error_text(self, pair: _Pair, text: str) -> None:
        if pair.error:
            stream_id = pair.error
            await self._send(lambda: self._writer.data(stream_id, text.encode()))

    async def _data(self, frame: spdy.Data) -> None:
        from kjobs.server import spdy

        pair = self._streams.get(frame.stream_id)
        if pair is None or frame.stream_id != pair.data:
            return  # the error stream is the server's to write; a stream gone or unknown is dropped
        if frame.data:
            if pair.task is not None and not pair.connected.is_set():
                await pair.connected.wait()  # the pod's side is being connected (bounded by the dial's timeout)
            if pair.writer is not None:
                try:
                    pair.writer.write(frame.data)
                    await pair.writer.drain()
                except OSError:
                    pass
            elif pair.task is None and len(pair.pending) + len(frame.data) <= PENDING_LIMIT:
                pair.pending += frame.data
        if frame.flags & spdy.FLAG_FIN:
            pair.client_done = True
            if pair.writer is not None and pair.writer.can_write_eof():
                with contextlib.suppress(OSError):
                    pair.writer.write_eof()

    async def _forward(self, pair: _Pair) -> None:
        """Connect and copy the pod's side to the data stream; the error text on the error stream if the runtime
        could not connect; both streams closed at the end (`portForward`'s deferred Closes)."""
        data_id, error_id = pair.data, pair.error
        try:
            try:
                reader, writer = await self._target.connect(pair.port)
            except ForwardRefused as exc:
                pair.connected.set()
                await self._error_text(pair, forward_error(pair.port, self._target.pod_id, str(exc)))
                return
            pair.writer = writer
            pair.connected.set()
            try:
                if pair.pending:
                    writer.write(bytes(pair.pending))
                    pair.pending.clear()
                    await writer.drain()
                if pair.client_done and writer.can_write_eof():
                    writer.write_eof()
                while not self._closed:
                    chunk = await reader.read(CHUNK)
                    if not chunk:
                        break
                    await self._send(lambda chunk=chunk: self._writer.data(data_id, chunk))  # type: ignore[misc]
            except OSError:
                pass
            finally:
                pair.writer = None
                await _close_writer(writer)
        finally:
            pair.connected.set()
            await self._send(lambda: self._writer.data(data_id, b"", fin=True))
            await self._send(lambda: self._writer.data(error_id, b"", fin=True))
            self._forget(pair)

    def _end_pair(self, pair: _Pair) -> None:
        if pair.task is not None and not pair.task.done():
            pair.task.cancel()
        self._forget(pair)

    def _forget(self, pair: _Pair) -> None:
        if pair.timeout is not None:
            pair.timeout.cancel()
        if self._pairs.get(pair.request_id) is pair:
            del self._pairs[pair.request_id]
        for stream_id in (pair.data, pair.error):
            if self._streams.get(stream_id) is pair:
                del self._streams[stream_id]

    async def _end_all(self) -> None:
        tasks = [p.task for p in self._pairs.values() if p.task is not None]
        for pair in list(self._pairs.values()):
            self._end_pair(pair)
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        self._closed = True


def _stream_port(headers: dict[str, str]) -> int:
    """The checks of `httpStreamReceived`: a valid `port` and a `streamType` of data or error."""
    text = headers.get(PORT, "")
    if not text or not text.isascii() or not text.isdigit() or not 0 < int(text) <= 0xFFFF:
        raise ValueError(text)
    if headers.get(STREAM_TYPE) not in (DATA, ERROR):
        raise ValueError(headers.get(STREAM_TYPE))
    return int(text)
