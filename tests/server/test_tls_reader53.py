"""A TLS connection's reads reach the HTTP protocol through `_TlsReader` (kjobs.server.protocol): decrypted into one
buffer of the connection's (the SSL layer's buffered path) instead of a 256-KiB bytes object a read, and handed on
as the bytes the SSL layer handed a plain protocol before. The old form is the HTTP protocol as the SSL transport's
own protocol; these tests compare the two (the same `data_received` calls, the same answers), and check that the
server takes the buffered path at all."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import httpx
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.server.protocol import _READ_SIZE, BoundedHttpToolsProtocol, _TlsReader
from tests.server.conftest import Server, pod_manifest
from tests.support import client_tls

PODS = "/api/v1/namespaces/default/pods"


class _Calls(asyncio.Protocol):
    """Records every callback an SSL transport makes on its protocol."""

    def __init__(self, keep_open: bool | None = None) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.keep_open = keep_open

    def data_received(self, data: bytes) -> None:
        self.calls.append(("data", data))

    def eof_received(self) -> bool | None:
        self.calls.append(("eof", None))
        return self.keep_open

    def connection_lost(self, exc: Exception | None) -> None:
        self.calls.append(("lost", exc))

    def pause_writing(self) -> None:
        self.calls.append(("pause", None))

    def resume_writing(self) -> None:
        self.calls.append(("resume", None))


def _as_the_ssl_layer_reads(reader: asyncio.BufferedProtocol, data: bytes) -> None:
    """What `_do_read__buffered` does with `data` pending: fill the buffer, hand it over, again while data remains."""
    while data:
        buffer = reader.get_buffer(len(data) + 256)
        taken = min(len(buffer), len(data))
        memoryview(buffer)[:taken] = data[:taken]
        reader.buffer_updated(taken)
        data = data[taken:]


_CHUNK = st.binary(min_size=1, max_size=3 * _READ_SIZE) | st.binary(min_size=1, max_size=64)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("data"), _CHUNK),
            st.tuples(st.sampled_from(["pause", "resume"]), st.none()),
        ),
        max_size=12,
    ),
    st.sampled_from([None, True, False]),
    st.booleans(),
)
def test_the_reader_hands_on_what_a_plain_protocol_got(events: list[tuple[str, Any]], keep: Any, eof: bool) -> None:
    """The same callbacks, in order, as the SSL layer made on the protocol itself: a read as bytes of the same
    content (split at the buffer's size where a read is larger, as the SSL layer splits it for any buffered
    protocol), `eof_received`'s answer passed back, `connection_lost` once, and nothing after it."""
    plain, behind = _Calls(keep), _Calls(keep)
    reader = _TlsReader(behind)
    for kind, value in events:
        if kind == "data":
            plain.data_received(value)
            _as_the_ssl_layer_reads(reader, value)
        elif kind == "pause":
            plain.pause_writing()
            reader.pause_writing()
        else:
            plain.resume_writing()
            reader.resume_writing()
    if eof:
        assert reader.eof_received() == plain.eof_received()
    lost = ConnectionResetError("gone")
    plain.connection_lost(lost)
    reader.connection_lost(lost)
    reader.connection_lost(None)  # a second call, and callbacks after it, reach nobody
    _as_the_ssl_layer_reads(reader, b"late")
    reader.pause_writing()

    def joined(calls: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        for kind, value in calls:
            if kind == "data" and out and out[-1][0] == "data":
                out[-1] = ("data", out[-1][1] + value)
            else:
                out.append((kind, value))
        return out

    assert all(type(value) is bytes for kind, value in behind.calls if kind == "data")
    assert all(len(value) <= _READ_SIZE for kind, value in behind.calls if kind == "data")
    assert joined(behind.calls) == joined(plain.calls)
    small = [value for kind, value in plain.calls if kind == "data" and len(value) <= _READ_SIZE]
    assert all(("data", value) in behind.calls for value in small)  # a read that fits is handed on whole


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), _CHUNK), max_size=12))
def test_readers_of_one_thread_share_a_buffer_and_keep_their_own_bytes(reads: list[tuple[int, bytes]]) -> None:
    """Three connections' readers in one thread read into one buffer (not 64 KiB held by each idle connection),
    and each protocol still gets exactly its own connection's bytes, in order."""
    protocols = [_Calls() for _ in range(3)]
    readers = [_TlsReader(protocol) for protocol in protocols]
    assert len({id(reader.get_buffer(1).obj) for reader in readers}) == 1
    for which, value in reads:
        _as_the_ssl_layer_reads(readers[which], value)
    for which, protocol in enumerate(protocols):
        got = b"".join(value for kind, value in protocol.calls if kind == "data")
        assert got == b"".join(value for index, value in reads if index == which)


def test_the_tls_connection_reads_through_the_buffered_path(server: Server) -> None:
    """The SSL transport of a served connection has a `_TlsReader` in front of the HTTP protocol (uvloop's buffered
    path is taken only for a protocol that is not an `asyncio.Protocol`)."""
    seen: list[Any] = []
    original = BoundedHttpToolsProtocol.data_received

    def spy(self: BoundedHttpToolsProtocol, data: bytes) -> None:
        transport = getattr(self.transport, "_transport", None)
        seen.append(transport.get_protocol() if transport is not None else None)
        original(self, data)

    BoundedHttpToolsProtocol.data_received = spy  # type: ignore[method-assign]
    try:
        with httpx.Client(base_url=server.url, timeout=10, verify=client_tls(server.pki)) as client:
            assert client.get("/api/v1/namespaces/default").status_code == 200
    finally:
        BoundedHttpToolsProtocol.data_received = original  # type: ignore[method-assign]
    assert seen and all(isinstance(protocol, _TlsReader) for protocol in seen)


def test_bodies_larger_than_the_buffer_and_pipelined_requests_are_answered_as_before(server: Server) -> None:
    """A body several times the reader's buffer (read in several turns) is stored whole, and requests sent in one
    write are answered whole and in order, over TLS."""
    big = pod_manifest("big")
    big["metadata"]["annotations"] = {f"k{i}": "v" * 1000 for i in range(2 * _READ_SIZE // 1000)}
    with httpx.Client(base_url=server.url, timeout=10, verify=client_tls(server.pki)) as client:
        created = client.post(PODS, json=big)
        assert created.status_code == 201, created.text
        assert client.get(f"{PODS}/big").json()["metadata"]["annotations"] == big["metadata"]["annotations"]

    async def pipelined() -> list[bytes]:
        host, port = server.url.removeprefix("https://").split(":")
        tls: ssl.SSLContext = client_tls(server.pki)
        reader, writer = await asyncio.open_connection(host, int(port), ssl=tls)
        body = orjson.dumps({"metadata": {"annotations": {"x": "y" * (3 * _READ_SIZE // 2)}}})
        patch = (
            f"PATCH {PODS}/big HTTP/1.1\r\nHost: x\r\nContent-Type: application/merge-patch+json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        writer.write(patch + b"GET /api/v1/namespaces/default HTTP/1.1\r\nHost: x\r\n\r\n")
        await writer.drain()
        bodies = []
        for _ in range(2):
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.startswith(b"content-length")
            )
            bodies.append(await reader.readexactly(length))
        writer.close()
        return bodies

    patched, namespace = asyncio.run(asyncio.wait_for(pipelined(), 20))
    assert orjson.loads(patched)["metadata"]["annotations"]["x"] == "y" * (3 * _READ_SIZE // 2)
    assert orjson.loads(namespace)["metadata"]["name"] == "default"
