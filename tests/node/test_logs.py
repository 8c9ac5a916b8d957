"""Log files: tail, byte limits, follow until the attempt ends."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kjobs.node.logs import attempt_log_path, pod_log_paths, prune_old_logs, read_log, tail_offset


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
