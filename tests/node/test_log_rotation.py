"""Container logs rotate as a kubelet rotates them (pkg/kubelet/logs/container_log_manager.go): at most
`containerLogMaxFiles` files of about `containerLogMaxSize` each, the current file holding the newest lines, and
`kubectl logs -f` following across a rotation."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kjobs.node import spawner
from kjobs.node.logs import read_log, render
from kjobs.node.shim import MAX_LINE

pytestmark = pytest.mark.e2e

MI = 1024 * 1024


def _shim(log_max_size: int, log_max_files: int) -> subprocess.Popen[bytes]:
    """A shim told the rotation limits as its agent tells them (the "b" request)."""
    shim = subprocess.Popen(
        [sys.executable, "-E", "-s", "-S", spawner._SHIM], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert shim.stdin is not None
    base = ["b", {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, "", "", "", False, log_max_size, log_max_files]
    shim.stdin.write(json.dumps(base).encode() + b"\n")
    shim.stdin.flush()
    return shim


def _run(shim: subprocess.Popen[bytes], cid: str, script: str, log: Path, last: str | None = None) -> list[str]:
    """Start `sh -c script` logging to `log`; once it has written everything (and, with `last`, once the shim has
    logged that line at the end of the current file: the container's last writes may still be in the pipe when it
    says it is done), the names of its log files (before it exits: the rotated ones are removed then); return after
    its exit is reported."""
    assert shim.stdin is not None and shim.stdout is not None
    done, end = log.parent / "written", log.parent / "end"
    script = f"{script}; touch {done}; while [ ! -e {end} ]; do sleep 0.01; done"
    shim.stdin.write(json.dumps(["s", cid, ["sh", "-c", script], {}, str(log.parent), str(log)]).encode() + b"\n")
    shim.stdin.flush()
    assert json.loads(shim.stdout.readline())[:2] == ["p", cid]
    deadline = time.monotonic() + 60
    while not done.exists():
        assert time.monotonic() < deadline, "the container did not finish writing"
        time.sleep(0.01)
    while last is not None and render(log.read_bytes()).decode().splitlines()[-1:] != [last]:
        assert time.monotonic() < deadline, f"the shim did not log {last!r}"
        time.sleep(0.01)
    names = sorted(f.name for f in log.parent.glob(f"{log.name}*"))
    copies = log.parent / "copies"
    copies.mkdir()
    for name in names:
        (copies / name).write_bytes((log.parent / name).read_bytes())
    end.touch()
    assert json.loads(shim.stdout.readline()) == ["x", cid, 0]
    return names


def _lines(count: int, start: int = 0) -> str:
    """A script printing `line-<n>` padded to 100 bytes for n in [start, start+count)."""
    return f"seq -f 'line-%098g' {start} {start + count - 1}"


def test_a_log_past_its_max_size_rotates_keeping_max_files_and_the_newest_lines_current(tmp_path: Path) -> None:
    """~3 MB written with a max size of 1Mi and max files 3: at most 3 files for the container, none larger
    than the limit plus one entry, rotated ones named `<log>.<YYYYMMDD-HHMMSS>[.n]`, the current file ending
    with the last line written, and every kept file's lines in order with no line cut across two files."""
    log = tmp_path / "uid_main_0.log"
    shim = _shim(MI, 3)
    try:
        # 30,000 lines of 100 bytes (+ the entry's head: ~4.3 MB)
        names = _run(shim, "c", _lines(30000), log, last=f"line-{29999:098d}")
    finally:
        shim.kill()
        shim.wait()
    log = tmp_path / "copies" / log.name  # as they were before the exit
    files = [tmp_path / "copies" / name for name in names]
    assert len(files) == 3, files
    rotated = [f for f in files if f != log]
    for f in rotated:
        suffix = f.name.removeprefix("uid_main_0.log.")
        stamp = suffix.split(".")[0]
        assert len(stamp) == 15 and stamp[8] == "-" and suffix.replace("-", "").replace(".", "").isdigit()
    entry = 36 + 100  # `<time> stdout F ` and a line
    for f in files:
        assert f.stat().st_size <= MI + entry + MAX_LINE, f
    current = render(log.read_bytes()).decode().splitlines()
    assert current[-1] == f"line-{29999:098d}"
    order = sorted(
        rotated, key=lambda f: (f.name.split(".")[2], int(f.name.split(".")[3] if f.name.count(".") > 2 else 0))
    )
    kept = [render(f.read_bytes()).decode().splitlines() for f in order]
    numbers = [int(line.removeprefix("line-")) for chunk in [*kept, current] for line in chunk]
    assert numbers == list(range(numbers[0], 30000))  # the newest lines, whole, in order
    assert numbers[0] > 0  # the oldest were removed


def test_a_max_size_of_zero_never_rotates(tmp_path: Path) -> None:
    log = tmp_path / "uid_main_0.log"
    shim = _shim(0, 2)
    try:
        assert _run(shim, "c", _lines(3000), log) == ["uid_main_0.log"]
    finally:
        shim.kill()
        shim.wait()
    assert len(render(log.read_bytes()).splitlines()) == 3000


def test_following_a_log_across_rotations_yields_every_line_exactly_once(tmp_path: Path) -> None:
    """`read_log` with follow, while a container writes ~2 MB through a shim rotating at 64 KiB with 2 files
    kept: each rotated file is read to its end before the new one, so the lines come out once each, in order
    (a file removed before the reader got to it would lose lines; the reader is kept close behind)."""
    log = tmp_path / "uid_main_0.log"
    shim = _shim(64 * 1024, 5)
    assert shim.stdin is not None and shim.stdout is not None
    total = 20000
    log.touch()  # the reader opens it at once (as it would an attempt's log the shim made)
    # The container writes in bursts and waits for the reader to catch up (it touches `go` files), so that
    # rotations happen while the reader follows, and no rotated file is removed before it is read.
    burst = total // 40
    script = f"while [ ! -e {tmp_path}/go.start ]; do sleep 0.01; done; i=0; "
    script += f"while [ $i -lt 40 ]; do seq -f 'line-%098g' $((i*{burst})) $((i*{burst}+{burst - 1})); "
    script += f"while [ ! -e {tmp_path}/go.$i ]; do sleep 0.01; done; i=$((i+1)); done"
    got: list[str] = []
    rotated: list[int] = []

    async def follow() -> None:
        exited = False

        def finished() -> bool:
            (tmp_path / "go.start").touch()  # the reader has the log open: the container may write
            return exited

        async def reader() -> None:
            buffer = ""
            async for out in read_log(log, follow=True, finished=finished):
                buffer += out.decode()
                *lines, buffer = buffer.split("\n")
                got.extend(lines)
                done = len(got) // burst
                if len(got) == total:
                    rotated.append(len(list(tmp_path.glob("uid_main_0.log.*"))))  # before its exit
                for i in range(done):
                    (tmp_path / f"go.{i}").touch()

        task = asyncio.ensure_future(reader())
        shim.stdin.write(json.dumps(["s", "c", ["sh", "-c", script], {}, str(tmp_path), str(log)]).encode() + b"\n")
        shim.stdin.flush()
        loop = asyncio.get_running_loop()
        assert json.loads(await loop.run_in_executor(None, shim.stdout.readline))[:2] == ["p", "c"]
        assert json.loads(await asyncio.wait_for(loop.run_in_executor(None, shim.stdout.readline), 60)) == ["x", "c", 0]
        exited = True
        await asyncio.wait_for(task, 60)

    try:
        asyncio.run(follow())
    finally:
        shim.kill()
        shim.wait()
    assert rotated == [4]  # it did rotate, and often
    assert got == [f"line-{n:098d}" for n in range(total)]


def test_rotated_files_go_when_the_container_ends_and_the_current_log_stays(tmp_path: Path) -> None:
    """Only the current file is read once the container has ended (`kubectl logs`, `--previous`), and the agent
    removes a pod's logs by name: the shim removes the rotated ones when the output ends."""
    log = tmp_path / "uid_main_0.log"
    shim = _shim(64 * 1024, 3)
    assert shim.stdin is not None and shim.stdout is not None
    try:
        script = f"{_lines(2000)}; touch {tmp_path}/written; while [ ! -e {tmp_path}/end ]; do sleep 0.01; done"
        shim.stdin.write(json.dumps(["s", "c", ["sh", "-c", script], {}, str(tmp_path), str(log)]).encode() + b"\n")
        shim.stdin.flush()
        assert json.loads(shim.stdout.readline())[:2] == ["p", "c"]
        deadline = time.monotonic() + 30
        while len(list(tmp_path.glob("uid_main_0.log.*"))) < 2:  # rotated while it runs
            assert time.monotonic() < deadline, list(tmp_path.iterdir())
            time.sleep(0.01)
        (tmp_path / "end").touch()
        assert json.loads(shim.stdout.readline()) == ["x", "c", 0]
    finally:
        shim.kill()
        shim.wait()
    assert sorted(f.name for f in tmp_path.glob("uid_main_0.log*")) == ["uid_main_0.log"]
    assert render(log.read_bytes()).decode().splitlines()[-1] == f"line-{1999:098d}"
