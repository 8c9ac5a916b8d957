"""The node log source's two 503s, now built with `kjobs.server.proxy` imported where they are raised (so a
`kjobs run` does not import the proxy module and `html.parser`): the same errors as `proxy.unreachable` gives."""

from __future__ import annotations

import asyncio
import socket

import pytest

from kjobs.api.errors import ApiError
from kjobs.node.logsource import AgentLogs, RemoteLogs
from kjobs.server.proxy import unreachable


def _same(found: ApiError, expected: ApiError) -> None:
    assert (found.code, found.reason, str(found)) == (expected.code, expected.reason, str(expected))


def test_a_proxy_to_a_joined_node_s_pod_is_unreachable() -> None:
    logs = AgentLogs(remote=RemoteLogs(lambda name: None))
    with pytest.raises(ApiError) as caught:
        asyncio.run(logs.proxy_host({"spec": {"nodeName": "n"}, "metadata": {"uid": "u"}}, 80))
    _same(
        caught.value,
        unreachable(
            "kjobs proxies only to pods on the nodes of the server's own process (kjobs up, kjobs run), not to "
            "pods on node n, joined with kjobs node join"
        ),
    )


def test_a_kubelet_that_cannot_be_reached_is_a_503() -> None:
    with socket.socket() as sock:  # a port nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    node = {
        "status": {
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
        }
    }
    remote = RemoteLogs(lambda name: node, connect_timeout=2.0)
    with pytest.raises(ApiError) as caught:
        asyncio.run(remote.kubelet("n", "GET", "/healthz"))
    assert (caught.value.code, caught.value.reason) == (503, "ServiceUnavailable")
    assert str(caught.value).startswith(str(unreachable("")))
