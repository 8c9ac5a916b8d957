"""`pods/{name}/exec` over WebSocket: the Kubernetes remote-command protocol, as kubectl and clients speak it.

Design note: a client upgrades `GET /api/v1/namespaces/NS/pods/NAME/exec?command=..&container=..&stdin=true&
stdout=true&stderr=true&tty=false` to a WebSocket, offering subprotocols in its order of preference; the first one
served is taken (`wsstream.handshake`, k8s.io/apimachinery/pkg/util/httpstream/wsstream/conn.go). Each message is
one channel byte and data (`channel.k8s.io`; the `base64.` variants send a digit and base64 in text messages):
0 stdin, 1 stdout, 2 stderr, 3 the error channel, 4 resize (`{"Width":..,"Height":..}`, keys in any case). The
error channel carries, once, how the command ended: from v4 a JSON `metav1.Status` — `Success`, or `Failure` with
reason `NonZeroExitCode` and an `ExitCode` cause holding the code (pkg/kubelet/cri/streaming/remotecommand/exec.go
`ServeExec`), which kubectl turns into `command terminated with exit code N` and its own exit status; before v4
only a failure's message.
v5 (`v5.channel.k8s.io`, KEP-3396) adds the close signal: a message on channel 255 whose data is a channel number
ends that stream (kubectl sends it for stdin at EOF, so `kubectl exec -i` with piped input ends). The server
writes an empty message on the first output channel once the streams are up, as the kubelet does
(`createWebSocketStreams`), and closes the connection after the status.

Errors follow where they arise on a cluster. The API server's checks come before the upgrade as HTTP Status
answers: 404 for a missing pod, 400 for `container X is not valid for pod P`, for a pod without a node (`pod P does
not have a host assigned`) and for no stream asked for (the kubelet's `NewOptions`). The kubelet's — the container
does not run: `container not found ("c")` — reach a v5 client after the upgrade as the API server's stream
translator sends them (an InternalError Status, `unable to upgrade connection: ...`), and an older client as the
failed upgrade (500). A command that cannot be started is an InternalError on the error channel (`error executing
command in container: ...`), as containerd reports it.

`pods/{name}/attach` is served the same way with the same checks (`kubectl attach`, `kubectl run -i`): its
"process" is the container itself, whose output from the moment of the attach is streamed (stdout and stderr
apart, as its log entries record them) until it exits, then `Success`, as the kubelet's `ServeAttach` ends; what
the client sends reaches a container whose spec asks for stdin, and a container with `tty: true` is attached to its
terminal whatever the request's `tty` (`kjobs.node.attach`).

SPDY (kubectl's fallback when the WebSocket upgrade fails) is not served: such a request gets the same HTTP
errors, else a 400 naming WebSocket.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qsl

import orjson

from kjobs.api.errors import ApiError, bad_request
from kjobs.api.types import Obj
from kjobs.server.logs import validate_container

V5 = "v5.channel.k8s.io"
V4 = "v4.channel.k8s.io"
V4_BASE64 = "v4.base64.channel.k8s.io"
V1 = "channel.k8s.io"
V1_BASE64 = "base64.channel.k8s.io"
SUBPROTOCOLS = (V5, V4, V4_BASE64, V1, V1_BASE64)
"""What the kubelet serves (v1-v4), and v5, which kube-apiserver serves itself (TranslateStreamCloseWebsocketRequests
gate, on since 1.30)."""

STDIN, STDOUT, STDERR, ERROR, RESIZE = 0, 1, 2, 3, 4
CLOSE = 255
"""v5's close signal channel (k8s.io/apimachinery/pkg/util/remotecommand: `StreamClose`)."""

NON_ZERO_EXIT_CODE = "NonZeroExitCode"
EXIT_CODE_CAUSE = "ExitCode"


class UpgradeFailed(Exception):
    """The kubelet refused the stream before it began (`container not found ("c")`)."""


class ExecFailed(Exception):
    """The runtime could not run the command (the kubelet's `error executing command in container`)."""


@dataclass(frozen=True)
class ExecOptions:
    """`PodExecOptions` from the query: the command, its container and the streams asked for."""

    container: str
    command: tuple[str, ...]
    stdin: bool = False
    stdout: bool = False
    stderr: bool = False
    tty: bool = False
    size: tuple[int, int] | None = None
    """(width, height) of the terminal the client sent before the command started (`initial_size`)."""


def exec_options(raw_query: bytes, pod: Obj) -> ExecOptions:
    """The options of an exec request on `pod`, with the API server's container checks (`validateContainer` in
    pkg/registry/core/pod/strategy.go: the only container when none is named) and the kubelet's stream check."""
    pairs = parse_qsl(raw_query.decode("latin-1"), keep_blank_values=True)
    values: dict[str, str] = {key: value for key, value in pairs}

    def flag(key: str) -> bool:  # as `Request.flag`: absent, false or 0 is false, anything else true
        value = values.get(key)
        return value is not None and value.lower() not in ("false", "0")

    name = str((pod.get("metadata") or {}).get("name") or "")
    spec = pod.get("spec") or {}
    container = validate_container(pod, values.get("container", ""))
    if not spec.get("nodeName"):
        raise bad_request(f"pod {name} does not have a host assigned")
    options = ExecOptions(
        container=container,
        command=tuple(value for key, value in pairs if key == "command"),
        stdin=flag("stdin"),
        stdout=flag("stdout"),
        stderr=flag("stderr"),
        tty=flag("tty"),
    )
    if options.tty and options.stderr:  # the kubelet drops stderr under a tty (its output goes to the terminal)
        options = ExecOptions(options.container, options.command, options.stdin, options.stdout, False, True)
    if not (options.stdin or options.stdout or options.stderr):
        raise bad_request("you must specify at least 1 of stdin, stdout, stderr")
    return options


class ExecProcess(Protocol):
    """A command started for an exec request."""

    output: asyncio.Queue[tuple[int, bytes] | None]
    """(channel, data) chunks in order; None once the output has ended."""

    async def write(self, data: bytes) -> None:
        """Pass stdin on."""
        ...

    def close_stdin(self) -> None:
        """End stdin."""
        ...

    def resize(self, width: int, height: int) -> None:
        """Set the terminal's size."""
        ...

    async def wait(self) -> int:
        """The exit code, once the command exited and its output was read."""
        ...

    def kill(self) -> None:
        """Stop the command (the client went away)."""
        ...


class ExecSource(Protocol):
    """Starts exec commands on pods' nodes."""

    async def start_exec(self, pod: Obj, options: ExecOptions) -> ExecProcess:
        """Start the command; `UpgradeFailed` when the container does not run, `ExecFailed` when the command
        cannot be started."""
        ...

    async def start_attach(self, pod: Obj, options: ExecOptions) -> ExecProcess:
        """Attach to the running container; `UpgradeFailed` when it does not run."""
        ...


class NoExec:
    """The default `ExecSource`: no node agent here, so no container runs."""

    async def start_exec(self, pod: Obj, options: ExecOptions) -> ExecProcess:
        """Always the kubelet's container-not-found."""
        raise UpgradeFailed(f'container not found ("{options.container}")')

    async def start_attach(self, pod: Obj, options: ExecOptions) -> ExecProcess:
        """Always the kubelet's container-not-found."""
        raise UpgradeFailed(f'container not found ("{options.container}")')


def negotiate(offered: list[str]) -> str | None:
    """The first offered subprotocol served ('' when none was offered: binary, v1); None when none is served."""
    if not offered:
        return ""
    return next((p for p in offered if p in SUBPROTOCOLS), None)


def unsupported_protocols(offered: list[str]) -> ApiError:
    """wsstream's handshake error for a client offering no served subprotocol."""
    return bad_request(
        f"requested protocol(s) are not supported: [{' '.join(offered)}]; supports [{' '.join(SUBPROTOCOLS)}]"
    )


def exit_status(code: int, command: tuple[str, ...]) -> Obj:
    """The error channel's Status for a command that exited with `code` (v4 and later)."""
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {
        "metadata": {},
        "status": "Failure",
        "message": (
            f"command terminated with non-zero exit code: error executing command [{' '.join(command)}], "
            f"exit code {code}"
        ),
        "reason": NON_ZERO_EXIT_CODE,
        "details": {"causes": [{"reason": EXIT_CODE_CAUSE, "message": str(code)}]},
    }


def internal_error(message: str) -> Obj:
    """`apierrors.NewInternalError` as the error channel carries it."""
    return {
        "metadata": {},
        "status": "Failure",
        "message": f"Internal error occurred: {message}",
        "reason": "InternalError",
        "details": {"causes": [{"message": message}]},
        "code": 500,
    }


Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


class Channels:
    """The framing of one negotiated subprotocol over an accepted ASGI WebSocket."""

    def __init__(self, protocol: str, send: Send) -> None:
        self.protocol = protocol
        self.base64 = protocol in (V4_BASE64, V1_BASE64)
        self._send = send
        self.gone = False

    async def write(self, channel: int, data: bytes) -> None:
        """One message on `channel` (nothing once the client is gone)."""
        if self.gone:
            return
        message: dict[str, Any]
        if self.base64:
            message = {"type": "websocket.send", "text": chr(ord("0") + channel) + base64.b64encode(data).decode()}
        else:
            message = {"type": "websocket.send", "bytes": bytes([channel]) + data}
        try:
            await self._send(message)
        except Exception:  # the connection went away under us: uvicorn's ClientDisconnected, OSError
            self.gone = True

    def read(self, message: dict[str, Any]) -> tuple[int, bytes] | None:
        """(channel, data) of a received message; None for an empty or undecodable one."""
        if message.get("bytes") is not None:
            raw: bytes = message["bytes"]
            if not raw:
                return None
            return raw[0], raw[1:]
        text = message.get("text") or ""
        if not text:
            return None
        if self.base64:
            try:
                return ord(text[0]) - ord("0"), base64.b64decode(text[1:])
            except ValueError:
                return None
        raw = text.encode()
        return raw[0], raw[1:]

    async def opened(self, options: ExecOptions) -> None:
        """The empty message on the first output channel asked for (else the error channel) that tells the client
        the streams are up (`createWebSocketStreams`)."""
        await self.write(STDOUT if options.stdout else STDERR if options.stderr else ERROR, b"")

    async def status(self, status: Obj) -> None:
        """How the command ended, on the error channel: the JSON Status from v4, a failure's message before."""
        if self.protocol in (V5, V4, V4_BASE64):
            await self.write(ERROR, orjson.dumps(status))
        elif status.get("status") != "Success":
            await self.write(ERROR, str(status.get("message", "")).encode())

    async def close(self) -> None:
        if not self.gone:
            with contextlib.suppress(Exception):
                await self._send({"type": "websocket.close", "code": 1000})
            self.gone = True


def terminal_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) of a resize message, None if it is not one. The kubelet and the API server's stream
    translator decode it into client-go's `TerminalSize{Width, Height uint16}` (no JSON tags) with Go's
    encoding/json, which matches a key to a field ignoring case: the JavaScript client sends `{"height":..,
    "width":..}`, kubectl `{"Width":..,"Height":..}`; a later key for a field wins, as in Go."""
    with contextlib.suppress(ValueError):
        size = orjson.loads(data)
        if isinstance(size, dict):
            found = {"width": 0, "height": 0}
            for key, value in size.items():
                field = key.lower()
                if field in found and value is not None:  # Go leaves a field a JSON null names as it was
                    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 0xFFFF:
                        return None  # Go refuses a value its uint16 cannot hold
                    found[field] = value
            return found["width"], found["height"]
    return None


INITIAL_SIZE_WAIT = 0.5
"""Seconds a v5 tty session waits for the client's first size before the command starts without one."""


async def initial_size(channels: Channels, receive: Receive) -> tuple[tuple[int, int] | None, Receive]:
    """The first terminal size a client sends on a tty session opened (upgraded, streams up) before its command
    starts, and a `receive` that hands back what was read meanwhile first.

    On a cluster the size a client sends as soon as the streams are up (kubectl, the JavaScript client) reaches the
    container runtime before the command runs: the API server's stream translator connects to the kubelet after
    the upgrade, and containerd applies resizes to the exec's console before it starts the process
    (`execInternal`). A command such as `stty size` sees it, where one started before the upgrade saw 0x0."""
    held: list[dict[str, Any]] = []
    size: tuple[int, int] | None = None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + INITIAL_SIZE_WAIT
    while size is None and (left := deadline - loop.time()) > 0:
        try:
            message = await asyncio.wait_for(receive(), left)
        except TimeoutError:
            break
        held.append(message)
        if message["type"] == "websocket.disconnect":
            break
        frame = channels.read(message)
        if frame is not None and frame[0] == RESIZE:
            size = terminal_size(frame[1])

    async def replay() -> dict[str, Any]:
        return held.pop(0) if held else await receive()

    return size, replay


async def stream(
    channels: Channels, process: ExecProcess, options: ExecOptions, receive: Receive, *, opened: bool = False
) -> None:
    """Copy the client's stdin and resizes to the command and its output to the client, then send how it ended and
    close; a client that goes away kills the command. `opened`: the client was told the streams are up already."""
    if not opened:
        await channels.opened(options)
    wanted = {STDOUT} if options.stdout else set()
    if options.stderr:
        wanted.add(STDERR)
    reader = asyncio.ensure_future(_from_client(channels, process, options, receive))
    ended = False
    try:
        while True:
            item = await process.output.get()
            if item is None:
                break
            if item[0] in wanted:
                await channels.write(*item)
        code = await process.wait()
        ended = True
        await channels.status(exit_status(code, options.command))
    finally:
        reader.cancel()
        if not ended:  # the client went away, or the server is stopping: nobody will read the command's output
            process.kill()
        await channels.close()


async def _from_client(channels: Channels, process: ExecProcess, options: ExecOptions, receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            channels.gone = True
            process.kill()
            return
        frame = channels.read(message)
        if frame is None:
            continue
        channel, data = frame
        if channel == STDIN and options.stdin:
            await process.write(data)
        elif channel == RESIZE:
            size = terminal_size(data)
            if size is not None:
                process.resize(*size)
        elif channel == CLOSE and channels.protocol == V5 and data[:1] == bytes([STDIN]):
            process.close_stdin()
