"""The kubelet endpoints of a node agent (`kjobs.node.kubeletapi`): what each path answers, and the same answers
from an agent in another process through its HTTPS endpoint (`LogServer` + `RemoteLogs.kubelet`), which only the
API server's kubelet client certificate may read. tests/e2e/test_proxy.py reads them through kubectl."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

import httpx
import orjson
import pytest

from kjobs.api.types import Obj
from kjobs.node import kubeletapi
from kjobs.node.agent import NodeAgentSettings
from kjobs.node.logserver import LogServer, serving_context
from kjobs.node.logsource import AgentLogs, RemoteLogs
from kjobs.node.runtime import ContainerRuntime
from kjobs.server import tls
from kjobs.server.resourcemetrics import Sample
from tests.support import shared_pki

POD: Obj = {"metadata": {"namespace": "default", "name": "p", "uid": "u1"}, "status": {"phase": "Running"}}


class _Pods:
    def list(self) -> list[Obj]:
        return [POD]


class _Runtime:
    """A runtime without processes (as the simulated one): no figures."""

    def get(self, uid: str) -> object | None:
        return None


class _Agent:
    name = "n1"
    runtime = cast(ContainerRuntime, _Runtime())
    pods = _Pods()
    settings = NodeAgentSettings(max_pods=30)

    class machine:
        max_pods = 30


class _NoUsage:
    def pod_usage(self, pods: Sequence[Obj]) -> dict[str, Sample]:
        return {}

    def node_usage(self, names: Sequence[str]) -> dict[str, Sample]:
        return {}


def _answer(method: str, path: str) -> kubeletapi.Answer | None:
    return kubeletapi.answer(cast(Any, _Agent()), _NoUsage(), method, path, now=0.0)


@pytest.mark.parametrize("path", ["/healthz", "/healthz/ping", "/healthz/log", "/healthz/syncloop"])
def test_healthz(path: str) -> None:
    assert _answer("GET", path) == (200, kubeletapi.TEXT, b"ok")


@pytest.mark.parametrize("path", ["/spec", "/spec/", "/metrics", "/metrics/cadvisor", "/logs/", "/runningpods/", "/x"])
def test_what_is_not_served_is_gos_404(path: str) -> None:
    assert _answer("GET", path) == (404, kubeletapi.TEXT, b"404 page not found\n")


def test_pods_configz_and_methods() -> None:
    status, content_type, body = _answer("GET", "/pods") or (0, b"", b"")
    assert (status, content_type) == (200, kubeletapi.JSON)
    assert orjson.loads(body) == {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [POD]}
    config = orjson.loads((_answer("GET", "/configz") or (0, b"", b""))[2])["kubeletconfig"]
    assert config["maxPods"] == 30
    assert config["evictionHard"] == {"memory.available": "100Mi"}
    assert config["shutdownGracePeriod"] == "30s"
    assert list(config)[-2:] == ["kind", "apiVersion"]
    assert _answer("POST", "/pods") == (405, kubeletapi.TEXT, b"405: Method Not Allowed")
    assert _answer("GET", "/containerLogs/default/p/c") is None  # the caller's: pods/log


def test_without_processes_there_are_no_figures() -> None:
    summary = orjson.loads((_answer("GET", "/stats/summary") or (0, b"", b""))[2])
    assert summary == {"node": {"nodeName": "n1"}, "pods": []}
    assert (_answer("GET", "/metrics/resource") or (0, b"", b""))[2] == (
        b"# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise\n"
        b"# TYPE resource_scrape_error gauge\nresource_scrape_error 0\n"
    )


def _serve(scenario: Callable[[int], Awaitable[None]]) -> None:
    async def main() -> None:
        context = serving_context(shared_pki().ca_pem, node="n1", address="127.0.0.1")
        server = LogServer(
            cast(ContainerRuntime, _Runtime()), uid_of=lambda ns, n: None, ssl_context=context, kubelet=_answer
        )
        port = await server.start()
        try:
            await scenario(port)
        finally:
            await server.stop()

    asyncio.run(main())


def _node(port: int) -> Obj:
    return {
        "status": {
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
        }
    }


def test_a_joined_agents_endpoints_answer_the_api_servers_certificate_only() -> None:
    async def scenario(port: int) -> None:
        remote = RemoteLogs(lambda name: _node(port), ssl_context=tls.kubelet_client_context(shared_pki()))
        source = AgentLogs(remote=remote)
        assert await source.kubelet_answer("n1", "GET", "/healthz") == (200, kubeletapi.TEXT, b"ok")
        missing = await source.kubelet_answer("n1", "GET", "/spec")
        assert missing is not None and missing[0] == 404 and missing[2] == b"404 page not found\n"
        pods = await source.kubelet_answer("n1", "GET", "/pods")
        assert pods is not None and orjson.loads(pods[2])["items"] == [POD]
        async with httpx.AsyncClient(verify=False) as http:
            response = await http.get(f"https://127.0.0.1:{port}/pods")
        assert response.status_code == 401 and "items" not in response.text

    _serve(scenario)


def test_an_agent_that_cannot_be_reached_is_a_503() -> None:
    async def scenario() -> None:
        from tests.support import free_port

        remote = RemoteLogs(lambda name: _node(free_port()), ssl_context=tls.kubelet_client_context(shared_pki()))
        with pytest.raises(Exception) as caught:
            await AgentLogs(remote=remote).kubelet_answer("n1", "GET", "/healthz")
        assert getattr(caught.value, "code", None) == 503
        assert str(getattr(caught.value, "message", "")).startswith("error trying to reach service: ")

    asyncio.run(scenario())
