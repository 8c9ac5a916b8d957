"""The agent's log endpoint: the kubelet's `GET /containerLogs/{namespace}/{pod}/{container}`, over HTTP.

Design note: when the API server and a node agent run in different processes (`kjobs node join`), the server
cannot read the agent's log files; like the kube-apiserver, it asks the node. The agent serves its runtime's
logs on `daemonEndpoints.kubeletEndpoint.Port` of its Node (an ephemeral port unless one is set), on the
Node's InternalIP, and `kjobs.node.logsource.RemoteLogs` is the server-side `LogSource` that proxies to it.
Query parameters are the kubelet's (`follow`, `tailLines`, `previous`, `limitBytes`, `timestamps`, `sinceSeconds`,
`sinceTime`, read by `kjobs.server.logs.log_options`). Given `kubelet`, the same port serves the kubelet's other
endpoints (`/healthz`, `/pods`, `/configz`, `/stats/summary`, `/metrics/resource`, Go's 404 for the rest:
`kjobs.node.kubeletapi`), which `nodes/{name}/proxy` reaches (`RemoteLogs.kubelet`). Errors are Kubernetes
`Status` bodies with the runtime's code and message, so the server passes them on unchanged.

Given the cluster CA (`client_ca`, which `kjobs node join` takes from its kubeconfig), it serves HTTPS as a
kubelet does: with a self-signed serving certificate made at start (a kubelet without `--tls-cert-file`,
`InitializeTLS` in cmd/kubelet/app/server.go; the key lives only in memory), and it answers only requests whose
client certificate that CA signed (the kubelet's `authentication.x509.clientCAFile` with anonymous access off):
the API server presents its `apiserver-kubelet-client` certificate (`kjobs.server.tls`). A certificate from
another CA fails the handshake; no certificate gets the kubelet's 401 `Unauthorized`. Without `client_ca`
(agents of an API server that itself serves plain http) it serves plain HTTP without authentication.
"""

from __future__ import annotations

import contextlib
import dataclasses
import ssl
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import orjson
from aiohttp import web

from kjobs.api.errors import ApiError, not_found
from kjobs.api.types import Obj
from kjobs.node.kubeletapi import NOT_FOUND, Answer
from kjobs.node.logsource import ended_log, runtime_log
from kjobs.node.runtime import ContainerRuntime
from kjobs.server import tls
from kjobs.server.auth import unauthorized
from kjobs.server.logs import log_options

KubeletAnswers = Callable[[str, str], Answer | None]
"""(method, path) -> the answer of the agent's other kubelet endpoints (`kjobs.node.kubeletapi`)."""

UidOf = Callable[[str, str], str | None]
"""(namespace, pod name) -> the uid of that pod on this node (running, or ended before the agent started), or
None."""


def serving_context(client_ca: bytes, *, node: str, address: str) -> ssl.SSLContext:
    """TLS for the log endpoint: a fresh self-signed certificate for `address` (CN `<node>@<unix time>`, as the
    kubelet names its own), asking for a client certificate verified against `client_ca` (PEM)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cadata=client_ca.decode("ascii", "replace"))
    context.verify_mode = ssl.CERT_OPTIONAL  # a missing certificate is answered with 401, as the kubelet does
    with tempfile.TemporaryDirectory(prefix="kjobs-kubelet-") as tmp:
        extensions = [
            f"subjectAltName={tls.alt_names(address)}",
            "extendedKeyUsage=serverAuth",
            "basicConstraints=critical,CA:FALSE",
        ]
        cert, key = tls.self_signed(Path(tmp), "kubelet", f"/CN={node}@{int(time.time())}", extensions)
        context.load_cert_chain(str(cert), str(key))
    return context


class LogServer:
    """Serves container logs of one agent's runtime."""

    def __init__(
        self,
        runtime: ContainerRuntime,
        *,
        uid_of: UidOf,
        host: str = "127.0.0.1",
        port: int = 0,
        ssl_context: ssl.SSLContext | None = None,
        kubelet: KubeletAnswers | None = None,
    ) -> None:
        self._runtime = runtime
        self._kubelet = kubelet
        self._uid_of = uid_of
        self._host, self._port = host, port
        self._ssl = ssl_context
        self._runner: web.AppRunner | None = None
        self.port = 0

    async def start(self) -> int:
        """Listen; returns the bound port."""
        app = web.Application()
        app.router.add_get("/containerLogs/{namespace}/{name}/{container}", self._handle)
        if self._kubelet is not None:  # `nodes/{name}/proxy/...` of a joined agent (kjobs.server.proxy)
            app.router.add_route("*", "/{path:.*}", self._answer)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, self._port, ssl_context=self._ssl)
        await site.start()
        server = site._server  # aiohttp exposes the bound sockets only here
        sockets = getattr(server, "sockets", None) or []
        self.port = int(sockets[0].getsockname()[1]) if sockets else self._port
        return self.port

    async def stop(self) -> None:
        """Stop listening (open streams end)."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        """The kubelet's other endpoints (`kjobs.node.kubeletapi`), to the same clients as the logs."""
        if self._ssl is not None and not (request.transport and request.transport.get_extra_info("peercert")):
            exc = unauthorized()
            return web.Response(status=exc.code, body=orjson.dumps(exc.status()), content_type="application/json")
        assert self._kubelet is not None
        answered = self._kubelet(request.method, request.path) or NOT_FOUND
        status, content_type, body = answered
        return web.Response(status=status, body=body, headers={"Content-Type": content_type.decode()})

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        container = request.match_info["container"]
        try:
            if self._ssl is not None and not (request.transport and request.transport.get_extra_info("peercert")):
                raise unauthorized()
            uid = self._uid_of(namespace, name)
            if uid is None:
                raise not_found("pods", name)
            options = log_options(request.query, name)
            if self._runtime.get(uid) is None:  # ended before this agent started: the log its container left
                pod: Obj = {"metadata": {"namespace": namespace, "name": name, "uid": uid}}
                chunks = ended_log(self._runtime, pod, dataclasses.replace(options, container=container))
            else:
                chunks = runtime_log(self._runtime, uid, container, options)
            iterator = aiter(chunks)
            first = await anext(iterator, b"")
        except ApiError as exc:
            return web.Response(status=exc.code, body=orjson.dumps(exc.status()), content_type="application/json")
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        try:
            if first:
                await response.write(first)
            async for chunk in iterator:
                await response.write(chunk)
        except (ConnectionResetError, ApiError):
            return response
        finally:
            await _close(iterator)
        with contextlib.suppress(ConnectionResetError):
            await response.write_eof()
        return response


async def _close(iterator: AsyncIterator[bytes]) -> None:
    closer = getattr(iterator, "aclose", None)
    if closer is not None:
        with contextlib.suppress(Exception):
            await closer()
