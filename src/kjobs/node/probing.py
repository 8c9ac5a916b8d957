"""Probe and lifecycle-hook actions (`exec`, `httpGet`, `tcpSocket`, `sleep`) run against a local container.

Design note: the kubelet's prober (pkg/kubelet/prober/prober.go `runProbe`, pkg/probe/exec, pkg/probe/http,
pkg/probe/tcp) and its hook runner (pkg/kubelet/lifecycle/handlers.go `Run`) each turn one action into a result
and an output text; that text is what a user reads in the `Unhealthy`, `FailedPostStartHook` events. Here an
`exec` action runs as `kubectl exec` runs (`kjobs.node.execution`, with what the container was started with), an
`httpGet` or `tcpSocket` one connects to the pod's IP (this machine) or its `host`. `grpc` probes are not run
(`kjobs.node.handlers` says so on the pod). The loop that decides when to probe and what a result does lives
in `kjobs.node.process_runtime` (`_probe_loop`), the bookkeeping in `kjobs.node.supervisor`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from kjobs.api.errors import go_quote
from kjobs.api.types import Obj
from kjobs.node.execution import ExecSpec, start
from kjobs.server.remotecommand import ExecFailed, UpgradeFailed
from kjobs.server.tls import unverified_client_context

Result = Literal["success", "failure", "error"]
PROBES = ("startupProbe", "livenessProbe", "readinessProbe")
PROBE_NAMES = {"startupProbe": "Startup", "livenessProbe": "Liveness", "readinessProbe": "Readiness"}
MAX_EXEC_OUTPUT = 10 * 1024
"""pkg/probe/exec: the kubelet keeps at most 10 KiB of an exec probe's output."""
RUNNABLE_PROBE_ACTIONS = ("exec", "httpGet", "tcpSocket")
RUNNABLE_HOOK_ACTIONS = ("exec", "httpGet", "sleep")


@dataclass(frozen=True, slots=True)
class Timing:
    """A probe's schedule and thresholds, with the API's defaults (core/v1 `SetDefaults_Probe`)."""

    initial_delay: float = 0.0
    period: float = 10.0
    timeout: float = 1.0
    success_threshold: int = 1
    failure_threshold: int = 3
    grace: float | None = None
    """The probe's own `terminationGracePeriodSeconds` (liveness and startup), else the pod's is used."""


def timing(probe: Obj) -> Timing:
    """The probe's `Timing`; fields left out (or 0 where 0 is not allowed) take the API's defaults."""

    def number(name: str, default: float, least: float) -> float:
        value = probe.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= least:
            return float(value)
        return default

    grace = probe.get("terminationGracePeriodSeconds")
    return Timing(
        initial_delay=number("initialDelaySeconds", 0.0, 0),
        period=number("periodSeconds", 10.0, 1),
        timeout=number("timeoutSeconds", 1.0, 1),
        success_threshold=int(number("successThreshold", 1, 1)),
        failure_threshold=int(number("failureThreshold", 3, 1)),
        grace=float(grace) if isinstance(grace, int) and not isinstance(grace, bool) else None,
    )


def action_of(handler: Obj, runnable: tuple[str, ...]) -> str | None:
    """Which of `runnable` the probe or hook uses (None: one kjobs does not run, such as `grpc`)."""
    return next((name for name in runnable if isinstance(handler.get(name), dict)), None)


def runnable_probe(probe: object) -> bool:
    """Whether `probe` is one kjobs runs (a grpc probe is not: its container reads started and ready as if it had
    none, as `kjobs.node.handlers` says on the pod)."""
    return isinstance(probe, dict) and action_of(probe, RUNNABLE_PROBE_ACTIONS) is not None


def runnable_hook(hook: object) -> bool:
    """Whether the lifecycle hook is one kjobs runs (a `tcpSocket` one is not)."""
    return isinstance(hook, dict) and action_of(hook, RUNNABLE_HOOK_ACTIONS) is not None


def resolve_port(port: object, container: Obj) -> int | None:
    """A port by number, by a number in a string, or by the name of one of the container's `ports`."""
    if isinstance(port, int) and not isinstance(port, bool):
        return port if 0 < port < 65536 else None
    if isinstance(port, str):
        if port.isdigit():
            return resolve_port(int(port), container)
        for spec in container.get("ports") or ():
            if spec.get("name") == port:
                return resolve_port(spec.get("containerPort"), container)
    return None


ExecIn = Callable[[list[str]], ExecSpec]
"""How to run a command in the container (`ProcessRuntime.exec_spec` for it)."""


async def run_exec(exec_in: ExecIn, command: list[str], timeout: float | None) -> tuple[Result, str, int | None]:
    """Run `command` in the container: success when it exits 0, with its output (stdout and stderr together, at
    most 10 KiB); a command that runs out of `timeout` is killed and fails with `command "..." timed out`, as
    the CRI's ExecSync reports it; one that cannot be started is an error. The exit code is third."""
    try:
        process = await start(exec_in(command), stdin=False, tty=False)
    except (ExecFailed, UpgradeFailed) as exc:  # cannot start, or the container is gone
        return "error", str(exc), None
    chunks: list[bytes] = []

    async def collect() -> int:
        while (item := await process.output.get()) is not None:
            if sum(map(len, chunks)) < MAX_EXEC_OUTPUT:
                chunks.append(item[1])
        return await process.wait()

    try:
        code = await asyncio.wait_for(collect(), timeout)
    except asyncio.CancelledError:  # a preStop hook cut short: the command does not outlive it
        process.kill()
        raise
    except TimeoutError:
        process.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(process.wait(), 1.0)
        return "failure", f"command {go_quote(' '.join(command))} timed out", None
    output = b"".join(chunks)[:MAX_EXEC_OUTPUT].decode("utf-8", "replace")
    return ("success" if code == 0 else "failure"), output, code


async def run_http(action: Obj, container: Obj, pod_ip: str, timeout: float) -> tuple[Result, str]:
    """GET the action's URL: success for a status from 200 to 399, else `HTTP probe failed with statuscode: N`;
    a connection that fails or times out fails with Go's text for it (pkg/probe/http `DoHTTPProbe`). As the
    kubelet, an HTTPS endpoint's certificate is not verified and redirects are not followed."""
    port = resolve_port(action.get("port"), container)
    scheme = str(action.get("scheme") or "HTTP").lower()
    host = str(action.get("host") or pod_ip)
    path = str(action.get("path") or "/")
    if not path.startswith("/"):
        path = "/" + path
    url = f"{scheme}://{host}:{port}{path}"
    if port is None:
        return "error", f"unable to resolve port {action.get('port')!r}"
    headers = {"Host": f"{host}:{port}", "User-Agent": "kube-probe/1.32", "Accept": "*/*"}
    for header in action.get("httpHeaders") or ():
        if isinstance(header, dict) and header.get("name"):
            headers[str(header["name"])] = str(header.get("value", ""))
    context = None
    if scheme == "https":
        context = unverified_client_context()  # the prober's `InsecureSkipVerify` (pkg/probe/http/http.go)

    async def get() -> int:
        reader, writer = await asyncio.open_connection(host, port, ssl=context)
        try:
            lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
            writer.write(f"GET {path} HTTP/1.1\r\n{lines}Connection: close\r\n\r\n".encode("latin-1"))
            await writer.drain()
            status_line = await reader.readline()
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
        parts = status_line.split()
        if len(parts) < 2 or not parts[1].isdigit():
            raise ConnectionError("malformed HTTP response")
        return int(parts[1])

    try:
        code = await asyncio.wait_for(get(), timeout)
    except TimeoutError:
        return "failure", f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    except OSError as exc:
        return "failure", f'Get "{url}": {_dial_error(host, port, exc)}'
    if 200 <= code < 400:
        return "success", ""
    return "failure", f"HTTP probe failed with statuscode: {code}"


async def run_tcp(action: Obj, container: Obj, pod_ip: str, timeout: float) -> tuple[Result, str]:
    """Open a TCP connection and close it (pkg/probe/tcp `DoTCPProbe`)."""
    port = resolve_port(action.get("port"), container)
    host = str(action.get("host") or pod_ip)
    if port is None:
        return "error", f"unable to resolve port {action.get('port')!r}"
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except TimeoutError:
        return "failure", f"dial tcp {host}:{port}: i/o timeout"
    except OSError as exc:
        return "failure", _dial_error(host, port, exc)
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()
    return "success", ""


def _dial_error(host: str, port: int, exc: OSError) -> str:
    """Go's `dial tcp HOST:PORT: connect: connection refused` for a refused (or otherwise failed) connection."""
    what = (os.strerror(exc.errno) if exc.errno else str(exc)).lower()  # asyncio words ECONNREFUSED its own way
    return f"dial tcp {host}:{port}: connect: {what}"


async def run_probe(probe: Obj, container: Obj, exec_in: ExecIn, pod_ip: str, timeout: float) -> tuple[Result, str]:
    """One run of a probe's action (success, failure or error, and the output the kubelet shows)."""
    action = action_of(probe, RUNNABLE_PROBE_ACTIONS)
    if action == "exec":
        result, output, _ = await run_exec(exec_in, list(probe["exec"].get("command") or []), timeout)
        return result, output
    if action == "httpGet":
        return await run_http(probe["httpGet"], container, pod_ip, timeout)
    if action == "tcpSocket":
        return await run_tcp(probe["tcpSocket"], container, pod_ip, timeout)
    return "error", "unsupported probe action"


async def run_hook(
    hook: Obj,
    container: Obj,
    exec_in: ExecIn,
    pod_ip: str,
    pod_name: str,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> str:
    """Run a lifecycle hook to its end; '' when it succeeded, else the kubelet's message for its failure
    (pkg/kubelet/lifecycle/handlers.go `Run`). `pod_name` is `NAME_NAMESPACE(UID)`."""
    action = action_of(hook, RUNNABLE_HOOK_ACTIONS)
    name = container.get("name", "")
    if action == "exec":
        command = [str(part) for part in hook["exec"].get("command") or []]
        result, output, code = await run_exec(exec_in, command, None)
        if result == "success":
            return ""
        error = f"command '{' '.join(command)}' exited with {code}: " if code is not None else output
        return (
            f"Exec lifecycle hook ({_go_list(command)}) for Container {go_quote(name)} in Pod "
            f"{go_quote(pod_name)} failed - error: {error}, message: {go_quote(output if code is not None else '')}"
        )
    if action == "httpGet":
        result, output = await run_http(hook["httpGet"], container, pod_ip, 10.0)
        if result == "success" or output.startswith("HTTP probe failed"):  # the hook runner does not read the status
            return ""
        return (
            f"HTTP lifecycle hook ({hook['httpGet'].get('path', '')}) for Container {go_quote(name)} in Pod "
            f"{go_quote(pod_name)} failed - error: {output}"
        )
    if action == "sleep":
        seconds = hook["sleep"].get("seconds")
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds > 0:
            await sleep(float(seconds))
        return ""
    return ""


def _go_list(items: list[str]) -> str:
    """Go's `%v` of a []string: `[sh -c exit 1]`."""
    return "[" + " ".join(items) + "]"
