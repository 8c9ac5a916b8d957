"""Log files: entries in the CRI format, tail, byte limits, times, follow until the attempt ends."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.node.logs import (
    attempt_log_path,
    log_time,
    pod_log_paths,
    prune_old_logs,
    read_log,
    render,
    tail_offset,
)
from tests.hypothesis_budget import examples


def collect(path: Path, **kwargs: object) -> bytes:
    async def run() -> bytes:
        return b"".join([chunk async for chunk in read_log(path, **kwargs)])  # type: ignore[arg-type]

    return asyncio.run(run())


@pytest.mark.parametrize(
    ("content", "tail", "expected"),
    [
        pytest.param(b"a\nb\nc\n", 2, b"b\nc\n", id="last-two"),
        pytest.param(b"a\nb\nc", 1, b"c", id="unterminated-last-line"),
        pytest.param(b"a\nb\nc\n", 10, b"a\nb\nc\n", id="more-than-available"),
        pytest.param(b"a\nb\n", 0, b"", id="zero"),
        pytest.param(b"a\nb\n", None, b"a\nb\n", id="all"),
        pytest.param(b"", 3, b"", id="empty"),
    ],
)
def test_tail(tmp_path: Path, content: bytes, tail: int | None, expected: bytes) -> None:
    path = tmp_path / "0.log"
    path.write_bytes(content)
    assert content[tail_offset(path, tail) :] == expected
    assert collect(path, tail_lines=tail) == expected


def test_limit_bytes(tmp_path: Path) -> None:
    path = tmp_path / "0.log"
    path.write_bytes(b"0123456789")
    assert collect(path, limit_bytes=4) == b"0123"


def test_follow_streams_until_finished(tmp_path: Path) -> None:
    path = tmp_path / "0.log"
    path.write_bytes(b"first\n")
    state = {"done": False}

    async def run() -> list[bytes]:
        chunks: list[bytes] = []
        async for chunk in read_log(path, follow=True, finished=lambda: state["done"]):
            chunks.append(chunk)
            if len(chunks) == 1:
                with open(path, "ab") as handle:
                    handle.write(b"second\n")
                state["done"] = True
        return chunks

    assert b"".join(asyncio.run(asyncio.wait_for(run(), 5))) == b"first\nsecond\n"


def test_prune_keeps_current_and_previous(tmp_path: Path) -> None:
    for number in range(4):
        attempt_log_path(tmp_path, "uid", "main", number).write_bytes(b"x")
    attempt_log_path(tmp_path, "uid", "main-2", 0).write_bytes(b"x")
    prune_old_logs(tmp_path, "uid", "main", keep_from=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["uid_main-2_0.log", "uid_main_2.log", "uid_main_3.log"]
    assert len(pod_log_paths(tmp_path, "uid")) == 3


T1 = b"2026-12-02T08:00:00.000000001Z"
T2 = b"2026-12-02T08:00:01.500000000Z"
CRI = T1 + b" stdout F one\n" + T1 + b" stdout P tw\n" + T2 + b" stdout F o\n" + T2 + b" stdout P three"
"""Entries as the shim writes them: a whole line, a line in two parts, and a last part without its newline."""


def test_entries_render_as_the_container_wrote_them(tmp_path: Path) -> None:
    path = tmp_path / "0.log"
    path.write_bytes(CRI + b"\n")
    assert collect(path) == b"one\ntwo\nthree"
    # a time starts each line only: "o" continues "tw" (the kubelet's `isNewLine`, kubernetes#113481)
    assert collect(path, timestamps=True) == T1 + b" one\n" + T1 + b" two\n" + T2 + b" three"
    assert collect(path, limit_bytes=6) == b"one\ntw"  # output bytes, not file bytes
    assert collect(path, tail_lines=1) == b"three"  # entries, as the kubelet counts them


def test_partial_entries_with_tail_limit_bytes_and_timestamps(tmp_path: Path) -> None:
    """The kubelet's `ReadLogs` over parts: `--tail` counts entries (the partial last line is one; so is each
    part of a long line), a read that starts at a continuation still stamps its first entry (`isNewLine` starts
    true), and `--limit-bytes` counts the stamps it prints."""
    path = tmp_path / "0.log"
    path.write_bytes(CRI + b"\n")
    assert collect(path, tail_lines=1, timestamps=True) == T2 + b" three"
    assert collect(path, tail_lines=2, timestamps=True) == T2 + b" o\n" + T2 + b" three"
    assert collect(path, tail_lines=3, timestamps=True) == T1 + b" two\n" + T2 + b" three"
    assert collect(path, tail_lines=3, timestamps=True, limit_bytes=34) == T1 + b" two"
    assert collect(path, tail_lines=3, limit_bytes=4) == b"two\n"


def test_a_time_starts_only_a_line_across_reads_and_since(tmp_path: Path) -> None:
    """A line whose parts arrive in two reads of a follow gets one time; a part left out by `since` still
    makes the next entry a continuation."""
    path = tmp_path / "0.log"
    path.write_bytes(T1 + b" stdout P tw\n")
    state = {"done": False}

    async def run() -> bytes:
        chunks: list[bytes] = []
        async for chunk in read_log(path, follow=True, timestamps=True, finished=lambda: state["done"]):
            chunks.append(chunk)
            if len(chunks) == 1:
                with open(path, "ab") as handle:
                    handle.write(T2 + b" stdout F o\n")
                state["done"] = True
        return b"".join(chunks)

    assert asyncio.run(asyncio.wait_for(run(), 5)) == T1 + b" two\n"
    assert collect(path, timestamps=True, since=1796198401.5) == b"o\n"


def test_tail_does_not_count_an_entry_still_being_written(tmp_path: Path) -> None:
    """`tail.FindTailLineStartIndex` (pkg/util/tail/tail.go): an incomplete last line is not counted, so the
    last whole entry is still shown while the next one's write is under way."""
    path = tmp_path / "0.log"
    path.write_bytes(T1 + b" stdout F one\n" + T1 + b" stdout F two\n" + T2 + b" stdout F thr")
    assert collect(path, tail_lines=1) == b"two\n"
    assert collect(path, tail_lines=2) == b"one\ntwo\n"


def test_since_leaves_out_older_entries(tmp_path: Path) -> None:
    path = tmp_path / "0.log"
    path.write_bytes(CRI + b"\n")
    at_t2 = 1796198401.5  # T2 as epoch seconds
    assert log_time(at_t2) == T2
    assert collect(path, since=at_t2) == b"o\nthree"
    assert collect(path, since=at_t2 + 2e-6) == b""  # since keeps whole microseconds
    assert collect(path, since=at_t2 - 1.5) == b"one\ntwo\nthree"


def test_a_torn_entry_waits_for_its_end_and_raw_lines_pass_through(tmp_path: Path) -> None:
    path = tmp_path / "0.log"
    path.write_bytes(T1 + b" stdout F one\n" + T1 + b" stdout F tw")  # the shim's write still under way
    assert collect(path) == b"one\n"
    path.write_bytes(b"written before lines were timed\nlast")
    assert collect(path) == b"written before lines were timed\nlast"
    assert collect(path, timestamps=True) == b"written before lines were timed\nlast"


@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\x00", b"\n")), max_size=8))
@settings(max_examples=examples(200), deadline=None)
def test_what_the_shim_writes_renders_back_byte_for_byte(chunks: list[bytes]) -> None:
    """However the container's output arrives in reads, the log renders to exactly what it wrote (with a
    MAX_LINE of 7 bytes, so that long lines and parts are common)."""
    import os
    import tempfile

    from kjobs.node import shim

    with tempfile.TemporaryFile() as log, pytest.MonkeyPatch.context() as patch:
        patch.setattr(shim, "MAX_LINE", 7)
        partial = bytearray()
        for chunk in chunks:
            partial += chunk
            shim.Shim.write_lines(log.fileno(), partial, final=False)
        shim.Shim.write_lines(log.fileno(), partial, final=True)
        assert not partial
        written = os.pread(log.fileno(), 1 << 20, 0)
    assert render(written) == b"".join(chunks)
    assert all(len(entry.split(b" ", 3)[3]) <= 7 for entry in written.split(b"\n")[:-1])


@given(st.integers(min_value=1_700_000_000 * 10**9, max_value=2_100_000_000 * 10**9))
def test_an_entrys_own_time_read_back_as_since_keeps_it(nanos: int) -> None:
    """`--since-time` set to an entry's time (parsed with microseconds, held as a float) keeps that entry."""
    from kjobs.api.timeutil import parse_time
    from kjobs.node.logs import since_stamp

    seconds, rest = divmod(nanos, 10**9)
    stamp = log_time(seconds)[:-11] + b".%09dZ" % rest
    assert since_stamp(parse_time(stamp.decode())) <= stamp
