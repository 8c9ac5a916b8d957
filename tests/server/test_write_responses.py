"""What a write answers over HTTP: the object as stored, byte for byte what a GET then streams (the server sends the
stored bytes when the result is the stored object itself), and, where nothing or something else is stored (a dry
run, a no-op update, a removal, a Status), the object the write produced, as before. Pipelined requests are answered
whole and in order (a response's head is held for its body and both sent as one write)."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterator

import httpx
import orjson
import pytest

from kjobs.server.protocol import _CoalescingTransport
from tests.server.conftest import Server, pod_manifest
from tests.support import client_tls

PODS = "/api/v1/namespaces/default/pods"
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture
def stored(server: Server) -> Iterator[tuple[httpx.Client, Server]]:
    with httpx.Client(base_url=server.url, timeout=10, verify=_tls(server)) as client:
        yield client, server


def _tls(server: Server) -> ssl.SSLContext:
    return client_tls(server.pki)


def _same_as_get(http: httpx.Client, response: httpx.Response, name: str) -> None:
    assert response.status_code in (200, 201), response.text
    got = http.get(f"{PODS}/{name}")
    assert response.content == got.content  # the stored bytes, as a GET streams them
    assert response.headers["content-length"] == str(len(got.content))


def test_writes_answer_the_stored_object(stored: tuple[httpx.Client, Server]) -> None:
    http, _ = stored
    _same_as_get(http, http.post(PODS, json=pod_manifest("a")), "a")
    patched = http.patch(f"{PODS}/a", json={"metadata": {"labels": {"x": "y"}}}, headers=MERGE)
    _same_as_get(http, patched, "a")
    assert patched.json()["metadata"]["labels"] == {"x": "y"}
    status = http.patch(f"{PODS}/a/status", json={"status": {"phase": "Running"}}, headers=MERGE)
    _same_as_get(http, status, "a")
    assert status.json()["status"]["phase"] == "Running"
    body = http.get(f"{PODS}/a").json()
    body["metadata"]["annotations"] = {"note": "n"}
    _same_as_get(http, http.put(f"{PODS}/a", json=body), "a")


def test_what_is_not_stored_is_answered_as_written(stored: tuple[httpx.Client, Server]) -> None:
    http, _ = stored
    created = http.post(PODS, json=pod_manifest("b")).json()
    before = http.get(f"{PODS}/b").content

    dry = http.patch(f"{PODS}/b?dryRun=All", json={"metadata": {"labels": {"dry": "run"}}}, headers=MERGE)
    assert dry.status_code == 200 and dry.json()["metadata"]["labels"] == {"dry": "run"}
    dry_create = http.post(f"{PODS}?dryRun=All", json=pod_manifest("never"))
    assert dry_create.status_code == 201 and dry_create.json()["metadata"]["name"] == "never"
    assert http.get(f"{PODS}/b").content == before and http.get(f"{PODS}/never").status_code == 404

    # A no-op update (the same object, keys in another order) stores nothing: its answer is the object it sent.
    reordered = {key: created[key] for key in reversed(list(created))}
    same = http.put(f"{PODS}/b", json=reordered)
    assert same.status_code == 200 and same.json() == orjson.loads(before)
    assert http.get(f"{PODS}/b").content == before

    # The last finalizer of a deleted pod removed: the pod is gone; the answer is the object the patch made, at the
    # revision it was read at (`deleteWithoutFinalizers`, store.go), so kopf sees its finalizer gone.
    held = http.patch(f"{PODS}/b", json={"metadata": {"finalizers": ["example.com/hold"]}}, headers=MERGE)
    deleting = http.request("DELETE", f"{PODS}/b", json={"gracePeriodSeconds": 0})
    assert held.status_code == 200 and deleting.status_code == 200
    gone = http.patch(f"{PODS}/b", json={"metadata": {"finalizers": None}}, headers=MERGE)
    assert gone.status_code == 200 and gone.json()["metadata"]["name"] == "b"
    assert "finalizers" not in gone.json()["metadata"] and gone.json()["metadata"]["deletionTimestamp"]
    assert gone.json()["metadata"]["resourceVersion"] == deleting.json()["metadata"]["resourceVersion"]
    assert http.get(f"{PODS}/b").status_code == 404

    evicted = http.post(PODS, json=pod_manifest("c"))
    assert evicted.status_code == 201
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "c", "namespace": "default"}}
    status = http.post(f"{PODS}/c/eviction", json=eviction)
    assert status.status_code == 201 and status.json()["kind"] == "Status"


def test_requests_in_one_turn_are_answered_whole_and_in_order(server: Server) -> None:
    # HTTP/1.1 pipelining: all requests in one read, so their answers are written within a few turns of the loop.
    async def scenario() -> list[bytes]:
        host, port = server.url.removeprefix("https://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port), ssl=_tls(server))
        names = ["default", "kube-system", "kube-public"]
        writer.write(b"".join(f"GET /api/v1/namespaces/{n} HTTP/1.1\r\nHost: x\r\n\r\n".encode() for n in names))
        await writer.drain()
        bodies = []
        for _ in names:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.startswith(b"content-length")
            )
            bodies.append(await reader.readexactly(length))
        writer.close()
        return bodies

    bodies = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert [orjson.loads(b)["metadata"]["name"] for b in bodies] == ["default", "kube-system", "kube-public"]


class _Recorder:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.events: list[str] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.events.append("close")

    def abort(self) -> None:
        self.events.append("abort")

    def get_extra_info(self, name: str) -> str:
        return f"info:{name}"


def test_a_head_goes_out_with_its_body_and_nothing_waits_past_the_turn() -> None:
    async def scenario() -> None:
        raw = _Recorder()
        transport = _CoalescingTransport(raw)  # type: ignore[arg-type]
        transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
        assert raw.writes == []  # held for its body
        transport.write(b"body")
        assert raw.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody"]  # at once, as one
        transport.write(b"more")
        assert raw.writes[-1] == b"more"  # anything else goes straight through
        transport.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        await asyncio.sleep(0)
        assert raw.writes[-1].endswith(b"chunked\r\n\r\n")  # no body in this turn (a watch): sent at its end
        big = b"x" * (128 * 1024)
        transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
        transport.write(big)
        assert raw.writes[-2:] == [b"HTTP/1.1 200 OK\r\n\r\n", big]  # a large body is not copied
        transport.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        transport.close()
        assert raw.writes[-1].startswith(b"HTTP/1.1 204") and raw.events == ["close"]
        transport.write(b"HTTP/1.1 500 Dropped\r\n\r\n")
        transport.abort()
        await asyncio.sleep(0)
        assert raw.writes[-1].startswith(b"HTTP/1.1 204") and raw.events == ["close", "abort"]
        raw.closing = True
        transport.write(b"HTTP/1.1 200 Lost\r\n\r\n")
        await asyncio.sleep(0)
        assert raw.writes[-1].startswith(b"HTTP/1.1 204")  # the connection was lost meanwhile
        assert transport.get_extra_info("peername") == "info:peername"

    asyncio.run(scenario())
