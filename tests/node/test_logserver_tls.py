"""The agent's log endpoint over TLS: only the API server's kubelet client certificate (any certificate the
cluster CA signed) may read logs, as a kubelet with `clientCAFile` and anonymous access off."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import httpx
import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.node.logserver import LogServer, serving_context
from kjobs.node.logsource import RemoteLogs
from kjobs.node.runtime import ContainerRuntime
from kjobs.server import tls
from kjobs.server.logs import LogOptions
from tests.support import shared_pki

POD: Obj = {"metadata": {"namespace": "default", "name": "talk", "uid": "u1"}, "spec": {"nodeName": "n1"}}


class _Runtime:
    """The two calls the log endpoint makes: pod `u1` exists and says hello."""

    def get(self, uid: str) -> object | None:
        return object() if uid == "u1" else None

    async def logs(self, uid: str, container: str, **options: Any) -> AsyncIterator[bytes]:
        yield b"hello\n"


def _node(port: int) -> Obj:
    return {
        "status": {
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
        }
    }


def _serve(scenario: Callable[[int], Awaitable[None]]) -> None:
    async def main() -> None:
        context = serving_context(shared_pki().ca_pem, node="n1", address="127.0.0.1")
        uid_of = {("default", "talk"): "u1"}
        server = LogServer(
            cast(ContainerRuntime, _Runtime()), uid_of=lambda ns, n: uid_of.get((ns, n)), ssl_context=context
        )
        port = await server.start()
        try:
            await scenario(port)
        finally:
            await server.stop()

    asyncio.run(main())


def _client_tls(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    context.load_cert_chain(str(cert), str(key))
    return context


def test_a_request_without_a_client_certificate_gets_401() -> None:
    async def scenario(port: int) -> None:
        async with httpx.AsyncClient(verify=False) as http:
            response = await http.get(f"https://127.0.0.1:{port}/containerLogs/default/talk/main")
        assert response.status_code == 401
        assert response.json()["reason"] == "Unauthorized"
        assert "hello" not in response.text

    _serve(scenario)


def test_plain_http_gets_no_logs() -> None:
    async def scenario(port: int) -> None:
        async with httpx.AsyncClient() as http:
            with pytest.raises(httpx.TransportError):
                await http.get(f"http://127.0.0.1:{port}/containerLogs/default/talk/main")

    _serve(scenario)


def test_a_client_certificate_from_another_ca_is_refused(tmp_path: Path) -> None:
    other = tls.ensure(tmp_path / "other", "127.0.0.1")

    async def scenario(port: int) -> None:
        verify = _client_tls(other.kubelet_client_cert, other.kubelet_client_key)
        async with httpx.AsyncClient(verify=verify) as http:
            with pytest.raises(httpx.TransportError):
                await http.get(f"https://127.0.0.1:{port}/containerLogs/default/talk/main")

    _serve(scenario)


def test_the_api_servers_kubelet_client_certificate_reads_logs() -> None:
    async def scenario(port: int) -> None:
        remote = RemoteLogs(lambda name: _node(port), ssl_context=tls.kubelet_client_context(shared_pki()))
        chunks = remote.open(POD, LogOptions(container="main"))
        assert b"".join([chunk async for chunk in chunks]) == b"hello\n"
        missing = remote.open({**POD, "metadata": {**POD["metadata"], "name": "gone"}}, LogOptions(container="main"))
        with pytest.raises(ApiError) as caught:
            await anext(aiter(missing))
        assert caught.value.code == 404

    _serve(scenario)


def test_the_kubelet_client_certificate_is_kubeadms() -> None:
    subject = ssl._ssl._test_decode_cert(str(shared_pki().kubelet_client_cert))["subject"]  # type: ignore[attr-defined]
    assert dict(rdn[0] for rdn in subject) == {
        "commonName": "kube-apiserver-kubelet-client",
        "organizationName": "system:masters",
    }


class _EndedRuntime:
    """A runtime that runs no pod: `u1` ended before the agent started and left a log, `u2` left none."""

    def get(self, uid: str) -> object | None:
        return None

    def ended_logs(self, uid: str, container: str, **options: Any) -> AsyncIterator[bytes] | None:
        if uid != "u1" or options.get("previous"):
            return None

        async def left() -> AsyncIterator[bytes]:
            yield f"{container} left this\n".encode()

        return left()


def test_the_log_of_a_pod_that_ended_before_the_agent_started_is_served() -> None:
    # A restarted kubelet serves its exited containers' logs; a pod it knows of whose container left none gets
    # the kubelet's 400s (`previous terminated container ... not found`, `waiting to start`), not a 404.
    async def main() -> None:
        uid_of = {("default", "talk"): "u1", ("default", "mute"): "u2"}
        server = LogServer(cast(ContainerRuntime, _EndedRuntime()), uid_of=lambda ns, n: uid_of.get((ns, n)))
        port = await server.start()
        try:
            remote = RemoteLogs(lambda name: _node(port))
            chunks = remote.open(POD, LogOptions(container="main"))
            assert b"".join([chunk async for chunk in chunks]) == b"main left this\n"
            for pod, options, message in [
                (POD, LogOptions(container="main", previous=True), 'previous terminated container "main" in pod'),
                ({**POD, "metadata": {**POD["metadata"], "name": "mute"}}, LogOptions(container="main"), "waiting"),
            ]:
                with pytest.raises(ApiError) as caught:
                    await anext(aiter(remote.open(pod, options)))
                assert caught.value.code == 400 and message in caught.value.message
        finally:
            await server.stop()

    asyncio.run(main())
