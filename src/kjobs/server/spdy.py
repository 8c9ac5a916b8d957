"""SPDY/3.1 framing, as much of it as the server side of `kubectl port-forward` needs.

Design note: kubectl's port-forward speaks SPDY/3.1 (the `portforward.k8s.io` stream protocol) over the connection
an `Upgrade: SPDY/3.1` request hands over, or tunneled in the binary messages of a WebSocket (KEP-4006). Its
implementation is moby/spdystream (`spdy/types.go`, `read.go`, `write.go`, `dictionary.go`, which follow the
SPDY/3 draft): a frame is 8 bytes of head and its payload. A control frame's head is the control bit, the
version (3) and the type (16 bits), then flags (8) and the payload's length (24); a data frame's is the stream id
(31 bits, control bit clear), then flags and length. Header blocks (SYN_STREAM, SYN_REPLY, HEADERS) are a count
and length-prefixed names and values (32-bit big-endian lengths, several values of a name joined by NUL), zlib
compressed with SPDY/3's dictionary in one stream per direction for the connection's life, each block ending
with a sync flush (Go's `zlib.Writer.Flush`).

What is left out, as spdystream leaves it: flow control (spdystream sends no WINDOW_UPDATE and ignores those it
gets; a WINDOW_UPDATE is decoded and dropped), SETTINGS beyond decoding, server push and CREDENTIAL frames.
`FrameReader` bounds what a peer can make the server hold: a frame's payload (`MAX_FRAME`) and a header block's
decompressed size (`MAX_HEADER_BLOCK`).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

VERSION = 3

SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 0x01
FLAG_UNIDIRECTIONAL = 0x02

# RST_STREAM status codes (spdy/types.go RstStreamStatus)
PROTOCOL_ERROR, INVALID_STREAM, REFUSED_STREAM, UNSUPPORTED_VERSION, CANCEL, INTERNAL_ERROR = 1, 2, 3, 4, 5, 6
FLOW_CONTROL_ERROR, STREAM_IN_USE, STREAM_ALREADY_CLOSED = 7, 8, 9

# GOAWAY status codes
GOAWAY_OK, GOAWAY_PROTOCOL_ERROR, GOAWAY_INTERNAL_ERROR = 0, 1, 2

MAX_FRAME = 1 << 20
"""Largest payload accepted (spdystream's limit is the 24-bit length; Go's io.Copy writes 32 KiB frames)."""
MAX_HEADER_BLOCK = 64 * 1024
"""Largest decompressed header block accepted (port-forward's streams carry three short headers)."""

_WORD_LIST = (
    "options|head|post|put|delete|trace|accept|accept-charset|accept-encoding|accept-language|accept-ranges|age|"
    "allow|authorization|cache-control|connection|content-base|content-encoding|content-language|content-length|"
    "content-location|content-md5|content-range|content-type|date|etag|expect|expires|from|host|if-match|"
    "if-modified-since|if-none-match|if-range|if-unmodified-since|last-modified|location|max-forwards|pragma|"
    "proxy-authenticate|proxy-authorization|range|referer|retry-after|server|te|trailer|transfer-encoding|upgrade|"
    "user-agent|vary|via|warning|www-authenticate|method|get|status|200 OK|version|HTTP/1.1|url|public|set-cookie|"
    "keep-alive|origin"
)
_WORDS = _WORD_LIST.split("|")
_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
    "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable"
    "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT"
    "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
    "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)
DICTIONARY = b"".join(struct.pack(">I", len(w)) + w.encode() for w in _WORDS) + _TAIL.encode()
"""SPDY/3's zlib dictionary (spdy/dictionary.go): 65 length-prefixed words, then status lines, dates and types."""

Headers = dict[str, list[str]]


class ProtocolError(Exception):
    """The peer broke the framing: the connection ends (GOAWAY with PROTOCOL_ERROR)."""


@dataclass(frozen=True)
class SynStream:
    stream_id: int
    associated_id: int
    priority: int
    flags: int
    headers: Headers


@dataclass(frozen=True)
class SynReply:
    stream_id: int
    flags: int
    headers: Headers


@dataclass(frozen=True)
class RstStream:
    stream_id: int
    status: int


@dataclass(frozen=True)
class Settings:
    values: list[tuple[int, int, int]] = field(default_factory=list)
    """(flag, id, value) entries."""


@dataclass(frozen=True)
class Ping:
    ping_id: int


@dataclass(frozen=True)
class GoAway:
    last_good_id: int
    status: int


@dataclass(frozen=True)
class HeadersFrame:
    stream_id: int
    flags: int
    headers: Headers


@dataclass(frozen=True)
class WindowUpdate:
    stream_id: int
    delta: int


@dataclass(frozen=True)
class Data:
    stream_id: int
    flags: int
    data: bytes


Frame = SynStream | SynReply | RstStream | Settings | Ping | GoAway | HeadersFrame | WindowUpdate | Data


def encode_header_block(headers: Headers) -> bytes:
    """The uncompressed block: names lower-cased, several values joined by NUL (`writeHeaderValueBlock`)."""
    parts = [struct.pack(">I", len(headers))]
    for name, values in headers.items():
        raw_name = name.lower().encode()
        value = "\x00".join(values).encode()
        parts += [struct.pack(">I", len(raw_name)), raw_name, struct.pack(">I", len(value)), value]
    return b"".join(parts)


def decode_header_block(raw: bytes) -> Headers:
    """The names and values of an uncompressed block (`parseHeaderValueBlock`); ProtocolError if malformed."""
    try:
        (count,) = struct.unpack_from(">I", raw, 0)
        offset = 4
        headers: Headers = {}
        for _ in range(count):
            (size,) = struct.unpack_from(">I", raw, offset)
            name = raw[offset + 4 : offset + 4 + size].decode("latin-1").lower()
            offset += 4 + size
            (size,) = struct.unpack_from(">I", raw, offset)
            value = raw[offset + 4 : offset + 4 + size]
            if len(value) != size:
                raise ProtocolError("truncated header block")
            offset += 4 + size
            headers.setdefault(name, []).extend(value.decode("latin-1").split("\x00"))
    except struct.error:
        raise ProtocolError("truncated header block") from None
    return headers


class HeaderCompressor:
    """One direction's compression context (zlib, best compression, SPDY's dictionary, a sync flush a block)."""

    def __init__(self) -> None:
        self._z = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS, 8, zlib.Z_DEFAULT_STRATEGY, DICTIONARY)

    def compress(self, headers: Headers) -> bytes:
        return self._z.compress(encode_header_block(headers)) + self._z.flush(zlib.Z_SYNC_FLUSH)


class HeaderDecompressor:
    """The peer's compression context, read block by block, each bounded by `MAX_HEADER_BLOCK`."""

    def __init__(self) -> None:
        self._z = zlib.decompressobj(zlib.MAX_WBITS, zdict=DICTIONARY)

    def decompress(self, block: bytes) -> Headers:
        try:
            raw = self._z.decompress(block, MAX_HEADER_BLOCK + 1)
        except zlib.error as exc:
            raise ProtocolError(f"bad header block: {exc}") from None
        if len(raw) > MAX_HEADER_BLOCK or self._z.unconsumed_tail:
            raise ProtocolError("header block too large")
        return decode_header_block(raw)


def _control(frame_type: int, flags: int, payload: bytes) -> bytes:
    return struct.pack(">HHI", 0x8000 | VERSION, frame_type, (flags << 24) | len(payload)) + payload


class FrameWriter:
    """Encodes the frames a server sends; owns the outgoing header compression context."""

    def __init__(self) -> None:
        self._compressor = HeaderCompressor()

    def syn_reply(self, stream_id: int, headers: Headers, *, fin: bool = False) -> bytes:
        block = self._compressor.compress(headers)
        return _control(SYN_REPLY, FLAG_FIN if fin else 0, struct.pack(">I", stream_id) + block)

    def headers(self, stream_id: int, headers: Headers, *, fin: bool = False) -> bytes:
        block = self._compressor.compress(headers)
        return _control(HEADERS, FLAG_FIN if fin else 0, struct.pack(">I", stream_id) + block)

    def syn_stream(self, stream_id: int, headers: Headers, *, fin: bool = False, priority: int = 0) -> bytes:
        """A SYN_STREAM (a server opens none for port-forward; tests play the client with it)."""
        block = self._compressor.compress(headers)
        head = struct.pack(">IIBB", stream_id, 0, (priority & 7) << 5, 0)
        return _control(SYN_STREAM, FLAG_FIN if fin else 0, head + block)

    @staticmethod
    def data(stream_id: int, data: bytes, *, fin: bool = False) -> bytes:
        return struct.pack(">II", stream_id & 0x7FFFFFFF, ((FLAG_FIN if fin else 0) << 24) | len(data)) + data

    @staticmethod
    def rst_stream(stream_id: int, status: int) -> bytes:
        return _control(RST_STREAM, 0, struct.pack(">II", stream_id, status))

    @staticmethod
    def ping(ping_id: int) -> bytes:
        return _control(PING, 0, struct.pack(">I", ping_id))

    @staticmethod
    def goaway(last_good_id: int, status: int = GOAWAY_OK) -> bytes:
        return _control(GOAWAY, 0, struct.pack(">II", last_good_id, status))

    @staticmethod
    def window_update(stream_id: int, delta: int) -> bytes:
        return _control(WINDOW_UPDATE, 0, struct.pack(">II", stream_id, delta))

    @staticmethod
    def settings(values: list[tuple[int, int, int]]) -> bytes:
        body = struct.pack(">I", len(values)) + b"".join(
            struct.pack(">II", (flag << 24) | ident, value) for flag, ident, value in values
        )
        return _control(SETTINGS, 0, body)


class FrameReader:
    """Decodes a byte stream into frames; owns the incoming header decompression context."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._decompressor = HeaderDecompressor()

    def feed(self, data: bytes) -> list[Frame]:
        """The frames completed by `data` (a partial frame stays buffered); ProtocolError on bad framing."""
        self._buffer += data
        frames: list[Frame] = []
        while len(self._buffer) >= 8:
            first, second = struct.unpack_from(">II", self._buffer, 0)
            length = second & 0xFFFFFF
            if length > MAX_FRAME:
                raise ProtocolError(f"frame of {length} bytes is too large")
            if len(self._buffer) < 8 + length:
                break
            payload = bytes(self._buffer[8 : 8 + length])
            del self._buffer[: 8 + length]
            flags = second >> 24
            if first & 0x80000000:
                frame = self._control((first >> 16) & 0x7FFF, first & 0xFFFF, flags, payload)
                if frame is not None:
                    frames.append(frame)
            else:
                stream_id = first & 0x7FFFFFFF
                if stream_id == 0:
                    raise ProtocolError("stream id zero is disallowed")
                frames.append(Data(stream_id, flags, payload))
        return frames

    def _control(self, version: int, frame_type: int, flags: int, payload: bytes) -> Frame | None:
        if version != VERSION:
            raise ProtocolError(f"unsupported SPDY version {version}")
        try:
            if frame_type == SYN_STREAM:
                stream_id, associated, priority, _slot = struct.unpack_from(">IIBB", payload, 0)
                headers = self._decompressor.decompress(payload[10:])
                if stream_id & 0x7FFFFFFF == 0:
                    raise ProtocolError("stream id zero is disallowed")
                return SynStream(stream_id & 0x7FFFFFFF, associated & 0x7FFFFFFF, priority >> 5, flags, headers)
            if frame_type in (SYN_REPLY, HEADERS):
                (stream_id,) = struct.unpack_from(">I", payload, 0)
                headers = self._decompressor.decompress(payload[4:])
                kind = SynReply if frame_type == SYN_REPLY else HeadersFrame
                return kind(stream_id & 0x7FFFFFFF, flags, headers)
            if frame_type == RST_STREAM:
                stream_id, status = struct.unpack_from(">II", payload, 0)
                return RstStream(stream_id & 0x7FFFFFFF, status)
            if frame_type == SETTINGS:
                (count,) = struct.unpack_from(">I", payload, 0)
                if len(payload) != 4 + 8 * count:
                    raise ProtocolError("invalid SETTINGS frame")
                values = []
                for index in range(count):
                    ident, value = struct.unpack_from(">II", payload, 4 + 8 * index)
                    values.append((ident >> 24, ident & 0xFFFFFF, value))
                return Settings(values)
            if frame_type == PING:
                (ping_id,) = struct.unpack_from(">I", payload, 0)
                return Ping(ping_id)
            if frame_type == GOAWAY:
                last, status = struct.unpack_from(">II", payload, 0)
                return GoAway(last & 0x7FFFFFFF, status)
            if frame_type == WINDOW_UPDATE:
                stream_id, delta = struct.unpack_from(">II", payload, 0)
                return WindowUpdate(stream_id & 0x7FFFFFFF, delta & 0x7FFFFFFF)
        except struct.error:
            raise ProtocolError(f"invalid control frame of type {frame_type}") from None
        return None  # an unknown control frame type is ignored, as the SPDY draft asks
