"""`AgentLogs`: the server's `LogSource` over the node agents running in the same process.

Design note: `pods/{name}/log` is answered by the kubelet of the pod's node; here the API service asks this
source, which picks the agent named by the pod's `spec.nodeName` and reads its runtime's log files (follow,
tail, previous, limitBytes, timestamps, sinceSeconds and sinceTime are the runtime's, `kjobs.node.logs`). A pod
no agent here runs — not scheduled yet, on a node in another process, or never started — gets the kubelet's
`waiting to start` 400. A pod that ended before its agent started (`kjobs up` stopped and started again) is not
run by it, but the logs its containers left on the node are served (`ended_log`), as a restarted kubelet's are.

`AgentLogs` is also the server's `ExecSource` (`kjobs.server.remotecommand`): `pods/{name}/exec` and
`pods/{name}/attach` are the kubelet's too. The pod's agent runtime gives how its container runs
(`ProcessRuntime.exec_spec`) and `kjobs.node.execution` starts the command that way; an attach follows the
container's log (`kjobs.node.attach`). Exec or attach to a pod on an agent in another process (`kjobs node join`)
is not served: the agent's endpoint serves logs only, and such a request gets a 500 saying so.

`RemoteLogs` is the source for agents in other processes: it reads the pod's Node (InternalIP and
`daemonEndpoints.kubeletEndpoint.Port`) and streams from that agent's `LogServer` (`kjobs.node.logserver`),
passing the agent's errors on. `AgentLogs(agents, remote=RemoteLogs(...))` serves both kinds. Given a TLS
context (`kjobs.server.tls.kubelet_client_context`: the API server's kubelet client certificate, the agent's
serving certificate not verified, as kube-apiserver without `--kubelet-certificate-authority`) it speaks HTTPS.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Protocol, cast
from urllib.parse import quote

from kjobs.api.errors import ApiError, bad_request
from kjobs.api.types import Obj
from kjobs.node import execution, kubeletapi
from kjobs.node.attach import Attached
from kjobs.node.kubeletapi import Answer
from kjobs.node.logs import log_time
from kjobs.node.portforward import PodPorts, pod_listener
from kjobs.node.runtime import ContainerRuntime
from kjobs.node.supervisor import find_container
from kjobs.node.usage import AgentUsage
from kjobs.server.logs import LogOptions, LogSource, waiting_error
from kjobs.server.portforward import PortTarget, pod_does_not_exist
from kjobs.server.remotecommand import ExecOptions, ExecProcess, UpgradeFailed
from kjobs.server.resourcemetrics import Sample


class _Agent(Protocol):
    name: str
    runtime: ContainerRuntime


class AgentLogs:
    """Dispatches log reads to the agent of each pod's node."""

    def __init__(self, agents: Iterable[_Agent] = (), *, remote: LogSource | None = None) -> None:
        self._remote = remote
        self._agents: dict[str, _Agent] = {}
        self._usage = AgentUsage(self._agents)
        for agent in agents:
            self.add(agent)

    def add(self, agent: _Agent) -> None:
        """Serve the logs (and the resource usage) of `agent`'s pods."""
        self._agents[agent.name] = agent
        if callable(getattr(agent.runtime, "container_pids", None)):
            self._usage.prime()

    def pod_usage(self, pods: Sequence[Obj]) -> dict[str, Sample]:
        """The server's `UsageSource` (`kjobs.node.usage`): figures of the pods of this process's agents."""
        return self._usage.pod_usage(pods)

    def node_usage(self, names: Sequence[str]) -> dict[str, Sample]:
        """Figures of the nodes of this process's agents that run processes (`kjobs.node.usage`)."""
        return self._usage.node_usage(names)

    def open(self, pod: Obj, options: LogOptions) -> AsyncIterator[bytes]:
        """The container's log from its node's runtime, or the kubelet's 400 when there is none yet."""
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        agent = self._agents.get(node)
        uid = str((pod.get("metadata") or {}).get("uid") or "")
        if agent is None and self._remote is not None and node:
            return self._remote.open(pod, options)
        if agent is None:
            raise waiting_error(pod, options.container)
        if agent.runtime.get(uid) is None:
            return ended_log(agent.runtime, pod, options)
        return runtime_log(agent.runtime, uid, options.container, options)

    def keep(self, pod: Obj) -> None:
        """Have the pod's node keep its log files after it forgets the pod, until `release` (see the runtime's
        `keep_logs`; a runtime that writes no files, or a node in another process, keeps nothing)."""
        keep = self._runtime_call(pod, "keep_logs")
        if keep is not None:
            keep(str(pod["metadata"]["uid"]))

    def release(self, pod: Obj) -> None:
        """End `keep`: the files of a pod forgotten meanwhile are removed."""
        release = self._runtime_call(pod, "release_logs")
        if release is not None:
            release(str(pod["metadata"]["uid"]))

    def _runtime_call(self, pod: Obj, name: str) -> Callable[[str], None] | None:
        agent = self._agents.get(str((pod.get("spec") or {}).get("nodeName") or ""))
        return None if agent is None else getattr(agent.runtime, name, None)

    def _local_agent(self, pod: Obj, container: str, verb: str) -> tuple[_Agent, str]:
        """The agent of this process running the pod, and the pod's uid, for an exec or an attach: a pod on a
        node joined from another process (its agent serves logs only) or a container not running is refused
        with the upgrade failure kubectl prints."""
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        agent = self._agents.get(node)
        if agent is None:
            if self._remote is not None and node:
                raise UpgradeFailed(
                    f"{verb} is not supported for pods on node {node}: kjobs serves {verb} only for nodes of the "
                    "server's own process (kjobs up, kjobs run), not for agents joined with kjobs node join"
                )
            raise UpgradeFailed(f'container not found ("{container}")')
        uid = str((pod.get("metadata") or {}).get("uid") or "")
        if agent.runtime.get(uid) is None:
            raise UpgradeFailed(f'container not found ("{container}")')
        return agent, uid

    async def start_exec(self, pod: Obj, options: ExecOptions) -> ExecProcess:
        """Run an exec command in the pod's container on its node (see the module note)."""
        agent, uid = self._local_agent(pod, options.container, "exec")
        spec_of = getattr(agent.runtime, "exec_spec", None)
        if spec_of is None:
            raise UpgradeFailed(f'container not found ("{options.container}")')
        spec = spec_of(uid, options.container, list(options.command))
        return await execution.start(spec, stdin=options.stdin, tty=options.tty, size=options.size)

    async def start_attach(self, pod: Obj, options: ExecOptions) -> ExecProcess:
        """Attach to the pod's running container on its node (`kjobs.node.attach`)."""
        agent, uid = self._local_agent(pod, options.container, "attach")
        log_of = getattr(agent.runtime, "attach_log", None)
        if log_of is None:
            raise UpgradeFailed(f'container not found ("{options.container}")')
        path, ended = log_of(uid, options.container)
        replay_of = getattr(agent.runtime, "attach_replay", None)
        replay = replay_of(uid, options.container) if replay_of is not None else False
        stdin_of = getattr(agent.runtime, "attach_stdin", None)
        stdin = stdin_of(uid, options.container) if stdin_of is not None and options.stdin else None
        terminal_of = getattr(agent.runtime, "attach_terminal", None)
        resize = terminal_of(uid, options.container) if terminal_of is not None else None
        # The container's tty, not the request's (the kubelet's `GetAttach`): see `kjobs.node.attach`.
        tty = (find_container(pod, options.container) or {}).get("tty") is True
        return Attached(path, ended, tty=tty, stdin=stdin, resize=resize, size=options.size, replay=replay)

    def port_target(self, pod: Obj) -> PortTarget:
        """The ports of a pod this process's agent runs (`kjobs.node.portforward`); the kubelet's `pod does not
        exist` for one it does not run, and a refusal naming the limit for a pod on an agent joined from another
        process (its endpoint serves logs only)."""
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        agent = self._agents.get(node)
        uid = str((pod.get("metadata") or {}).get("uid") or "")
        if agent is None and self._remote is not None and node:
            raise ApiError(
                500,
                "InternalError",
                f"portforward is not supported for pods on node {node}: kjobs serves portforward only for nodes of "
                "the server's own process (kjobs up, kjobs run), not for agents joined with kjobs node join",
            )
        groups_of = getattr(agent.runtime, "pod_process_groups", None) if agent is not None else None
        if agent is None or groups_of is None or agent.runtime.get(uid) is None:
            raise pod_does_not_exist()
        runtime = agent.runtime

        def running() -> bool:
            handle = runtime.get(uid)
            return handle is not None and not handle.terminal

        return PodPorts(uid, lambda: groups_of(uid), running)

    async def kubelet_answer(self, node: str, method: str, path: str) -> Answer | None:
        """The answer of the kubelet endpoints of `node`'s agent (`kjobs.node.kubeletapi`): this process's, or a
        joined agent's endpoint asked over HTTPS (`RemoteLogs.kubelet`); None when neither answers."""
        agent = self._agents.get(node)
        if agent is None:
            ask = getattr(self._remote, "kubelet", None)
            return await ask(node, method, path) if ask is not None else None
        return kubeletapi.answer(agent, self._usage, method, path)

    async def proxy_host(self, pod: Obj, port: int) -> str | None:
        """The address a proxy to `port` of `pod` connects to (`127.0.0.1` or `::1`), when one of the pod's own
        processes listens there (the port-forward check, `kjobs.node.portforward`); None otherwise."""
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        agent = self._agents.get(node)
        uid = str((pod.get("metadata") or {}).get("uid") or "")
        if agent is None and self._remote is not None and node:
            from kjobs.server.proxy import unreachable  # the proxy module (and html.parser) only for a proxy

            raise unreachable(
                f"kjobs proxies only to pods on the nodes of the server's own process (kjobs up, kjobs run), not to "
                f"pods on node {node}, joined with kjobs node join"
            )
        groups_of = getattr(agent.runtime, "pod_process_groups", None) if agent is not None else None
        if agent is None or groups_of is None or agent.runtime.get(uid) is None:
            return None
        groups = groups_of(uid)
        loop = asyncio.get_running_loop()
        host: str | None = await loop.run_in_executor(None, pod_listener, groups, port)
        return host


def runtime_log(runtime: ContainerRuntime, uid: str, container: str, options: LogOptions) -> AsyncIterator[bytes]:
    """`runtime.logs` of a pod's container with every `PodLogOptions` field the runtimes take."""
    return runtime.logs(
        uid,
        container,
        follow=options.follow,
        tail_lines=options.tail_lines,
        previous=options.previous,
        limit_bytes=options.limit_bytes,
        timestamps=options.timestamps,
        since_seconds=options.since_seconds,
        since_time=options.since_time,
    )


def ended_log(runtime: ContainerRuntime, pod: Obj, options: LogOptions) -> AsyncIterator[bytes]:
    """The log a container of a pod the runtime does not run (it ended before its agent started) left on the
    node; the kubelet's 400 when it left none: `previous terminated container ... not found` for `--previous`,
    else `waiting to start` (the container never started)."""
    uid = str((pod.get("metadata") or {}).get("uid") or "")
    ended_logs = getattr(runtime, "ended_logs", None)  # a runtime that keeps no files has none
    chunks = None
    if ended_logs is not None:
        chunks = ended_logs(
            uid,
            options.container,
            tail_lines=options.tail_lines,
            previous=options.previous,
            limit_bytes=options.limit_bytes,
            timestamps=options.timestamps,
            since_seconds=options.since_seconds,
            since_time=options.since_time,
        )
    if chunks is not None:
        return cast(AsyncIterator[bytes], chunks)
    if options.previous:
        name = (pod.get("metadata") or {}).get("name", "")
        raise bad_request(f'previous terminated container "{options.container}" in pod "{name}" not found')
    raise waiting_error(pod, options.container)


NodeLookup = Callable[[str], Obj | None]
"""Node name -> the Node object (None when there is none)."""


def kubelet_endpoint(node: Obj | None, *, scheme: str = "http") -> str | None:
    """`<scheme>://<InternalIP>:<kubeletEndpoint.Port>` of a Node whose agent serves logs, else None."""
    status = (node or {}).get("status") or {}
    port = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
    address = next((a.get("address") for a in status.get("addresses") or [] if a.get("type") == "InternalIP"), None)
    if not isinstance(port, int) or port <= 0 or not address:
        return None
    host = f"[{address}]" if ":" in str(address) else str(address)
    return f"{scheme}://{host}:{port}"


class RemoteLogs:
    """A `LogSource` that streams from the log endpoint of the pod's node agent over HTTP (HTTPS with `ssl_context`,
    which should present a client certificate the agent's CA signed)."""

    def __init__(
        self, nodes: NodeLookup, *, connect_timeout: float = 5.0, ssl_context: ssl.SSLContext | None = None
    ) -> None:
        self._nodes = nodes
        self._connect_timeout = connect_timeout
        self._ssl = ssl_context

    def open(self, pod: Obj, options: LogOptions) -> AsyncIterator[bytes]:
        """Chunks from the agent; the agent's error Status (or the waiting-to-start 400) when there is none."""
        node_name = str((pod.get("spec") or {}).get("nodeName") or "")
        scheme = "https" if self._ssl is not None else "http"
        endpoint = kubelet_endpoint(self._nodes(node_name), scheme=scheme) if node_name else None
        if endpoint is None:
            raise waiting_error(pod, options.container)
        meta = pod.get("metadata") or {}
        path = "/containerLogs/" + "/".join(
            quote(str(part), safe="") for part in (meta.get("namespace", ""), meta.get("name", ""), options.container)
        )
        query = {"follow": "true" if options.follow else "false", "previous": "true" if options.previous else "false"}
        if options.tail_lines is not None:
            query["tailLines"] = str(options.tail_lines)
        if options.limit_bytes is not None:
            query["limitBytes"] = str(options.limit_bytes)
        if options.timestamps:
            query["timestamps"] = "true"
        if options.since_seconds is not None:
            query["sinceSeconds"] = str(options.since_seconds)
        elif options.since_time is not None:
            query["sinceTime"] = log_time(options.since_time).decode()
        return self._stream(pod, options, endpoint + path, query)

    async def kubelet(self, node_name: str, method: str, path: str) -> Answer | None:
        """The joined agent's answer to `method path` (`kjobs.node.logserver`); None when its Node names no
        endpoint; the 503 of an agent that cannot be reached."""
        scheme = "https" if self._ssl is not None else "http"
        endpoint = kubelet_endpoint(self._nodes(node_name), scheme=scheme)
        if endpoint is None:
            return None
        import aiohttp

        try:
            return await _kubelet_request(endpoint + quote(path), method, self._ssl, self._connect_timeout)
        except (aiohttp.ClientError, TimeoutError) as exc:
            from kjobs.server.proxy import unreachable

            raise unreachable(str(exc) or type(exc).__name__) from None

    async def _stream(self, pod: Obj, options: LogOptions, url: str, query: dict[str, str]) -> AsyncIterator[bytes]:
        import aiohttp  # only servers that proxy logs pay for the import

        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self._connect_timeout)
        started = False
        try:
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.get(url, params=query, ssl=self._ssl if self._ssl is not None else True) as response,
            ):
                if response.status != 200:
                    raise _error(response.status, await response.read())
                async for chunk in response.content.iter_any():
                    started = True
                    yield chunk
        except aiohttp.ClientConnectionError:
            if not started:  # an agent that cannot be reached has nothing to show yet
                raise waiting_error(pod, options.container) from None


KUBELET_ANSWER_LIMIT = 16 * 1024 * 1024
"""Bytes of a joined agent's kubelet answer passed on (a node's `/pods` of many pods is a few MiB)."""


async def _kubelet_request(url: str, method: str, ssl_context: ssl.SSLContext | None, timeout: float) -> Answer:
    import aiohttp

    limits = aiohttp.ClientTimeout(total=60.0, sock_connect=timeout)
    async with (
        aiohttp.ClientSession(timeout=limits) as session,
        session.request(method, url, ssl=ssl_context if ssl_context is not None else True) as response,
    ):
        body = await response.content.read(KUBELET_ANSWER_LIMIT)
        content_type = response.headers.get("Content-Type", "text/plain; charset=utf-8")
        return response.status, content_type.encode("latin-1"), body


def _error(code: int, raw: bytes) -> ApiError:
    import orjson

    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        body = None
    if isinstance(body, dict) and body.get("kind") == "Status":
        return ApiError.from_status(body)
    return ApiError(code, "InternalError", raw.decode("utf-8", "replace").strip() or f"kubelet answered HTTP {code}")
