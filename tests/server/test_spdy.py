"""SPDY/3.1 frames (`kjobs.server.spdy`) against bytes: what kubectl v1.32 sent for one forwarded connection
(captured from `kubectl port-forward` with KUBECTL_PORT_FORWARD_WEBSOCKETS=false), the frames a server writes as
moby/spdystream's framer lays them out, header blocks, and the bounds on what a peer can make the server hold."""

from __future__ import annotations

import hashlib
import struct
import zlib

import pytest

from kjobs.server import spdy

# kubectl's first reads, one per line as they arrived: the error stream's SYN_STREAM (id 1), then its FIN (kubectl
# writes nothing on it) with the data stream's SYN_STREAM (id 3, its header block compressed in the same zlib
# stream), then an HTTP request on the data stream and its FIN.
KUBECTL = [
    "80030001000000400000000100000000000078f9e3c6a7c202253a060606ce2248fc6482d22da30138e59514a526e6420b17d654"
    "50d0430aea2250a266353231373604000000ffff",
    "0000000101000000800300010000001c0000000300000000000082ea46550b2a8812b12945b304000000ffff",
    "000000030000004f474554202f20485454502f312e310d0a486f73743a203132372e302e302e313a32343832310d0a557365722d"
    "4167656e743a206375726c2f372e38382e310d0a4163636570743a202a2f2a0d0a0d0a",
    "0000000301000000",
]


def test_the_dictionary_is_spdy3s() -> None:
    # spdy/dictionary.go's headerDictionary: 1423 bytes
    assert len(spdy.DICTIONARY) == 1423
    digest = hashlib.sha256(spdy.DICTIONARY).hexdigest()
    assert digest == "51d27341373f923f3cd88e1eb7162aeaa3723d7585ff2399201dc06498407f02"
    assert spdy.DICTIONARY.startswith(b"\x00\x00\x00\x07options\x00\x00\x00\x04head")
    assert spdy.DICTIONARY.endswith(b"charset=iso-8859-1,utf-,*,enq=0.")


def test_kubectls_frames_decode() -> None:
    reader = spdy.FrameReader()
    frames = [reader.feed(bytes.fromhex(chunk)) for chunk in KUBECTL]
    assert frames == [
        [spdy.SynStream(1, 0, 0, 0, {"requestid": ["0"], "streamtype": ["error"], "port": ["24731"]})],
        [
            spdy.Data(1, spdy.FLAG_FIN, b""),
            spdy.SynStream(3, 0, 0, 0, {"streamtype": ["data"], "port": ["24731"], "requestid": ["0"]}),
        ],
        [spdy.Data(3, 0, b"GET / HTTP/1.1\r\nHost: 127.0.0.1:24821\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n")],
        [spdy.Data(3, spdy.FLAG_FIN, b"")],
    ]


def test_frames_split_anywhere_decode_the_same() -> None:
    whole = b"".join(bytes.fromhex(chunk) for chunk in KUBECTL)
    reader = spdy.FrameReader()
    frames = [frame for i in range(len(whole)) for frame in reader.feed(whole[i : i + 1])]
    assert [type(f).__name__ for f in frames] == ["SynStream", "Data", "SynStream", "Data", "Data"]


def test_the_frames_a_server_writes() -> None:
    w = spdy.FrameWriter
    assert w.data(3, b"hi") == bytes.fromhex("00000003 00000002 6869")
    assert w.data(3, b"", fin=True) == bytes.fromhex("00000003 01000000")
    # control frames: 0x8003 (control bit, version 3), the type, flags and a 24-bit length
    assert w.rst_stream(5, spdy.CANCEL) == bytes.fromhex("80030003 00000008 00000005 00000005")
    assert w.ping(7) == bytes.fromhex("80030006 00000004 00000007")
    assert w.goaway(9, spdy.GOAWAY_PROTOCOL_ERROR) == bytes.fromhex("80030007 00000008 00000009 00000001")
    assert w.window_update(1, 65536) == bytes.fromhex("80030009 00000008 00000001 00010000")
    assert w.settings([(0, 7, 65536)]) == bytes.fromhex("80030004 0000000c 00000001 00000007 00010000")


def test_a_syn_reply_carries_a_compressed_header_block() -> None:
    writer = spdy.FrameWriter()
    frame = writer.syn_reply(1, {})
    kind, flags_length, stream_id = struct.unpack_from(">III", frame)
    assert (kind, flags_length >> 24, flags_length & 0xFFFFFF, stream_id) == (0x80030002, 0, len(frame) - 8, 1)
    # any zlib with SPDY's dictionary reads it: an empty block is a zero count
    inflate = zlib.decompressobj(zdict=spdy.DICTIONARY)
    assert inflate.decompress(frame[12:]) == b"\x00\x00\x00\x00"
    second = writer.syn_reply(3, {"X-Thing": ["a", "b"]}, fin=True)
    assert second[4] == spdy.FLAG_FIN
    assert (
        inflate.decompress(second[12:])
        == bytes.fromhex("00000001 00000007") + b"x-thing" + bytes.fromhex("00000003") + b"a\x00b"
    )
    # and our reader (a client's view) decodes both in turn
    reader = spdy.FrameReader()
    assert reader.feed(frame + second) == [
        spdy.SynReply(1, 0, {}),
        spdy.SynReply(3, spdy.FLAG_FIN, {"x-thing": ["a", "b"]}),
    ]


def test_header_blocks_encode_as_spdystream_writes_them() -> None:
    block = spdy.encode_header_block({"Port": ["8080"], "streamType": ["data"]})
    assert (
        block
        == bytes.fromhex("00000002 00000004")
        + b"port"
        + bytes.fromhex("00000004")
        + b"8080"
        + bytes.fromhex("0000000a")
        + b"streamtype"
        + bytes.fromhex("00000004")
        + b"data"
    )
    assert spdy.decode_header_block(block) == {"port": ["8080"], "streamtype": ["data"]}
    with pytest.raises(spdy.ProtocolError):
        spdy.decode_header_block(block[:-2])


def test_what_a_peer_can_make_the_server_hold_is_bounded() -> None:
    with pytest.raises(spdy.ProtocolError, match="too large"):
        spdy.FrameReader().feed(struct.pack(">II", 1, spdy.MAX_FRAME + 1))
    # a header block that inflates beyond the bound (a zip bomb of a SYN_STREAM)
    bomb = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS, 8, zlib.Z_DEFAULT_STRATEGY, spdy.DICTIONARY)
    block = bomb.compress(struct.pack(">I", 1) + struct.pack(">I", 1) + b"a" + struct.pack(">I", 1 << 20))
    block += bomb.compress(b"\x00" * (1 << 20)) + bomb.flush(zlib.Z_SYNC_FLUSH)
    payload = struct.pack(">IIBB", 1, 0, 0, 0) + block
    frame = struct.pack(">HHI", 0x8003, spdy.SYN_STREAM, len(payload)) + payload
    with pytest.raises(spdy.ProtocolError, match="header block too large"):
        spdy.FrameReader().feed(frame)
    with pytest.raises(spdy.ProtocolError, match="unsupported SPDY version 2"):
        spdy.FrameReader().feed(bytes.fromhex("80020006 00000004 00000001"))
    with pytest.raises(spdy.ProtocolError, match="stream id zero"):
        spdy.FrameReader().feed(bytes.fromhex("00000000 00000000"))
    # an unknown control frame type is skipped
    assert spdy.FrameReader().feed(bytes.fromhex("8003000a 00000000") + spdy.FrameWriter.ping(1)) == [spdy.Ping(1)]
