"""The process shim: containers start, are signalled and reaped in a helper process; its failures are reported."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.node import adoption, leftovers
from kjobs.node.logs import log_time, render
from kjobs.node.process_runtime import ProcessRuntime
from tests.hypothesis_budget import examples
from tests.node.helpers import make_pod
from tests.node.test_process_runtime import eventually, finish, sh, state, with_runtime

pytestmark = pytest.mark.e2e


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_containers_are_children_of_the_shim_not_of_the_agent(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        pod = make_pod([sh("sleep 30")])
        await runtime.run_pod(pod)
        await eventually(lambda: bool(runtime.memory_usage()), "the container's pid")
        uid = pod["metadata"]["uid"]
        pid = next(r.pid for r in runtime._running.values() if r.uid == uid)
        assert pid is not None
        ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        assert ppid != os.getpid()
        assert ppid in {shim.pid for shim in runtime._spawner.processes()}

    with_runtime(tmp_path, body)


def test_a_program_removed_after_its_first_start_fails_to_start(tmp_path: Path) -> None:
    tool = tmp_path / "bin" / "tool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\nexit 0\n")
    tool.chmod(0o755)
    path = f"{tool.parent}:{os.environ.get('PATH', '')}"

    async def body(runtime: ProcessRuntime) -> None:
        container = {"name": "main", "image": "x", "command": ["tool"], "env": [{"name": "PATH", "value": path}]}
        first = await finish(runtime, make_pod([container], uid="uid-a", name="a"))
        assert first["phase"] == "Succeeded"
        tool.unlink()  # the lookup was remembered: the shim's exec is what fails now
        second = await finish(runtime, make_pod([container], uid="uid-b", name="b"))
        terminated = state(second)["state"]["terminated"]
        assert (terminated["reason"], terminated["exitCode"]) == ("StartError", 128)
        assert terminated["message"].startswith("failed to start container process:")
        assert second["phase"] == "Failed"

    with_runtime(tmp_path, body)


def test_a_dead_shim_kills_its_containers_and_reports_them_killed(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        pod = make_pod([sh("sleep 30")])
        handle = await runtime.run_pod(pod)
        await eventually(lambda: bool(runtime.memory_usage()), "the container's pid")
        cid, pid = next((cid, r.pid) for cid, r in runtime._running.items())
        assert pid is not None
        runtime._spawner.process_of(cid).kill()  # type: ignore[union-attr]
        status = await handle.wait()
        terminated = state(status)["state"]["terminated"]
        assert (terminated["exitCode"], terminated.get("signal")) == (137, 9)
        assert status["phase"] == "Failed"
        await eventually(lambda: not _alive(pid), "the orphaned container to be killed")
        # the next start brings a new shim up
        again = await finish(runtime, make_pod([sh("exit 0")], uid="uid-2", name="p2"))
        assert again["phase"] == "Succeeded"

    with_runtime(tmp_path, body)


def test_shutdown_stops_the_shim(tmp_path: Path) -> None:
    async def run() -> None:
        runtime = ProcessRuntime(root_dir=tmp_path, minimum_grace_seconds=0.0)
        status = await asyncio.wait_for(finish(runtime, make_pod([sh("exit 0")])), 10)
        assert status["phase"] == "Succeeded"
        shims = runtime._spawner.processes()
        assert len(shims) == 2
        await runtime.shutdown()
        assert all(shim.poll() is not None for shim in shims)

    asyncio.run(run())


def test_a_container_reads_running_only_once_the_shim_has_started_it(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        handle = await runtime.run_pod(make_pod([sh("sleep 30")]))
        # The start was asked for; the shim has not answered (no loop turn since): the container is being created.
        assert handle.status["phase"] == "Pending"
        assert state(handle.status)["state"] == {"waiting": {"reason": "ContainerCreating"}}
        await eventually(lambda: "running" in state(handle.status)["state"], "the container to run")
        assert handle.status["phase"] == "Running"
        (running,) = runtime._running.values()
        assert running.pid is not None and _alive(running.pid)

    with_runtime(tmp_path, body)


def test_the_shim_creates_a_missing_working_directory_and_a_blocked_one_is_a_start_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")

    async def body(runtime: ProcessRuntime) -> None:
        made = await finish(runtime, make_pod([sh("pwd > where", workingDir=str(tmp_path / "new" / "dir"))]))
        assert made["phase"] == "Succeeded"
        assert (tmp_path / "new" / "dir" / "where").read_text().strip() == str(tmp_path / "new" / "dir")
        blocked = await finish(runtime, make_pod([sh("true", workingDir=str(blocker / "sub"))], uid="uid-2", name="p2"))
        terminated = state(blocked)["state"]["terminated"]
        assert (terminated["reason"], terminated["exitCode"]) == ("StartError", 128)
        assert terminated["message"] == "failed to start container process: Not a directory"

    with_runtime(tmp_path, body)


def test_a_log_directory_removed_under_the_runtime_is_made_again(tmp_path: Path) -> None:
    """Someone cleaned the data (or runtime) directory while kjobs ran: the next pods still start and log, as the
    kubelet makes each pod's log directory when it creates its sandbox. Before, every later start was a
    `StartError` ("failed to create container log ...: No such file or directory") and the Job failed."""
    import shutil

    async def body(runtime: ProcessRuntime) -> None:
        first = await finish(runtime, make_pod([sh("echo one")], uid="uid-1", name="p1"))
        assert first["phase"] == "Succeeded"
        shutil.rmtree(tmp_path / "logs")
        shutil.rmtree(tmp_path / "pods", ignore_errors=True)
        second = await finish(runtime, make_pod([sh("echo two")], uid="uid-2", name="p2"))
        assert second["phase"] == "Succeeded", state(second)
        assert list((tmp_path / "logs").glob("uid-2_main_*.log"))
        assert (tmp_path / "logs").stat().st_mode & 0o077 == 0

    with_runtime(tmp_path, body)


def test_a_shim_that_cannot_be_started_is_a_start_error_of_the_container(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No process left to fork a shim with (EAGAIN under `ulimit -u`, ENOMEM, EMFILE for its pipes): the container
    ends 128 `StartError` naming why, as containerd's CRI plugin ends a start that failed, and the next start
    works once there is room. Before, the OSError rose out of the node agent's pod sync (a traceback)."""
    import errno
    import subprocess

    from kjobs.node import spawner

    real = subprocess.Popen

    def refused(*_: object, **__: object) -> None:
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(spawner.subprocess, "Popen", refused)

    async def body(runtime: ProcessRuntime) -> None:
        first = await finish(runtime, make_pod([sh("echo one")], uid="uid-1", name="p1"))
        terminated = state(first)["state"]["terminated"]
        assert (terminated["reason"], terminated["exitCode"]) == ("StartError", 128)
        assert terminated["message"] == (
            "failed to create containerd task: failed to start shim: Resource temporarily unavailable"
        )
        assert first["phase"] == "Failed"
        monkeypatch.setattr(spawner.subprocess, "Popen", real)
        second = await finish(runtime, make_pod([sh("echo two")], uid="uid-2", name="p2"))
        assert second["phase"] == "Succeeded"

    with_runtime(tmp_path, body)


def test_in_a_burst_of_starts_an_exit_is_reported_before_the_burst_ends(tmp_path: Path) -> None:
    """The shim takes one request at a time and reaps in between: a container that ended does not wait for
    the rest of a burst of starts to be reported (which is what keeps a busy node's pods flowing)."""
    import subprocess
    import sys

    from kjobs.node import spawner

    shim = subprocess.Popen(
        [sys.executable, "-E", "-s", "-S", spawner._SHIM], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert shim.stdin is not None and shim.stdout is not None
    starts = [["s", f"c{i}", ["true"], {}, str(tmp_path), str(tmp_path / f"c{i}.log")] for i in range(60)]
    lines = [["b", {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, ""], *starts]
    shim.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    shim.stdin.flush()
    replies: list[list[object]] = []
    while sum(1 for r in replies if r[0] == "x") < len(starts):
        replies.append(json.loads(shim.stdout.readline()))
    shim.stdin.close()
    shim.wait(timeout=10)
    kinds = [r[0] for r in replies]
    last_start = len(kinds) - 1 - kinds[::-1].index("p")
    assert kinds.index("x") < last_start


def test_every_container_of_many_concurrent_starts_ends_with_its_own_exit(tmp_path: Path) -> None:
    """2,000 containers, 50 running at a time (new starts for the exits of each read, as an agent keeps a Job's
    parallelism), each reported with the exit status it chose: none is reaped for another. The shim unregisters
    each container's pidfd and output pipe from its epoll set before closing them; left to the close, a
    registration outlived it while a container spawned just before still held a copy of the descriptor, and fired
    for the number's next pidfd, which SIGKILLed a running container (tens in 2,000 on a 2-core machine). A timing
    race: this test caught that version in about half of its runs on a busy machine, fewer on a quiet one;
    tests/node/test_process_runtime.py::test_many_pods_concurrently in four of ten under load."""
    import subprocess
    import sys

    from kjobs.node import spawner

    for name in ("procs", "journal", "pods", "logs"):
        (tmp_path / name).mkdir()
    shim = subprocess.Popen(
        [sys.executable, "-E", "-s", "-S", spawner._SHIM],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={},
        cwd=tmp_path,
        start_new_session=True,
    )
    assert shim.stdin is not None and shim.stdout is not None
    total, parallel = 2000, 50

    def start(i: int) -> bytes:
        uid = f"uid-{i}"
        request = ["s", f"c{i}", ["sh", "-c", f"exit {i % 3}"], {"JOB_COMPLETION_INDEX": str(i)}]
        request += [str(tmp_path / "pods" / uid), str(tmp_path / "logs" / f"{uid}_main_0.log"), uid, "main", 0]
        request.append(time.time())
        return json.dumps(request).encode() + b"\n"

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/", "LANG": "C.UTF-8"}
    base = ["b", env, str(tmp_path / "procs"), str(tmp_path / "journal"), "agent", True, 10 << 20, 5]
    base += [str(tmp_path / "pods"), 0]
    shim.stdin.write(json.dumps(base).encode() + b"\n" + b"".join(start(i) for i in range(parallel)))
    shim.stdin.flush()
    exits: dict[str, int] = {}
    sent, pending = parallel, b""
    try:
        while len(exits) < total:
            chunk = os.read(shim.stdout.fileno(), 1 << 16)
            assert chunk, "the shim ended"
            *lines, pending = (pending + chunk).split(b"\n")
            more = []
            for line in lines:
                reply = json.loads(line)
                assert reply[0] in ("p", "x"), reply
                if reply[0] == "x":
                    exits[reply[1]] = reply[2]
                    if sent < total:
                        more.append(start(sent))
                        sent += 1
            if more:
                shim.stdin.write(b"".join(more))
                shim.stdin.flush()
    finally:
        shim.stdin.close()
        shim.wait(timeout=30)
    wrong = {cid: code for cid, code in exits.items() if code != int(cid[1:]) % 3}
    assert not wrong


def _shim_with_records(tmp_path: Path, *rest: object) -> tuple[Any, Path]:
    """A shim recording in `tmp_path/procs`; `rest`: the "b" request's further items."""
    import subprocess
    import sys

    from kjobs.node import spawner

    procs = tmp_path / "procs"
    procs.mkdir(parents=True)
    shim = subprocess.Popen(
        [sys.executable, "-E", "-s", "-S", spawner._SHIM], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert shim.stdin is not None
    base = ["b", {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, str(procs), *rest]
    shim.stdin.write(json.dumps(base).encode() + b"\n")
    shim.stdin.flush()
    return shim, procs / adoption.identity(shim.pid)  # the shim records in a directory of its own


def _start(shim: Any, cid: str, argv: list[str], tmp_path: Path) -> int:
    shim.stdin.write(json.dumps(["s", cid, argv, {}, str(tmp_path), str(tmp_path / f"{cid}.log")]).encode() + b"\n")
    shim.stdin.flush()
    reply = json.loads(shim.stdout.readline())
    assert reply[:2] == ["p", cid], reply
    return int(reply[2])


def test_a_container_is_recorded_for_leftovers_once_it_has_run_a_while(tmp_path: Path) -> None:
    """A short container is never recorded (most of a Job of `true`s); one still running is, soon after."""
    from kjobs.node import shim as shim_module

    shim, procs = _shim_with_records(tmp_path)
    try:
        quick = _start(shim, "quick", ["true"], tmp_path)
        assert json.loads(shim.stdout.readline())[:2] == ["x", "quick"]
        sleeper = _start(shim, "sleeper", ["sleep", "30"], tmp_path)
        deadline = time.monotonic() + 20  # bounded; generous for a loaded 2-core CI machine
        while not (procs / str(sleeper)).exists():
            assert time.monotonic() < deadline, "the running container was never recorded"
            time.sleep(0.01)
        assert time.monotonic() < deadline
        assert not (procs / str(quick)).exists()
        assert shim_module.RECORD_AFTER < 1
    finally:
        shim.kill()
        shim.wait()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sleeper, signal.SIGKILL)


def test_a_terminated_shim_records_what_it_leaves_running(tmp_path: Path) -> None:
    """It is terminated: containers not yet recorded are, before it exits (left to `leftovers`)."""
    shim, procs = _shim_with_records(tmp_path)
    sleeper = _start(shim, "sleeper", ["sleep", "30"], tmp_path)
    try:
        shim.terminate()  # at once: well before the container's record time
        assert shim.wait(timeout=10) == 128 + signal.SIGTERM
        assert (procs / str(sleeper)).read_text() == leftovers.start_time(sleeper)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sleeper, signal.SIGKILL)


def test_a_shim_whose_agent_is_gone_records_and_reaps_what_runs_then_exits(tmp_path: Path) -> None:
    """Its stdin closes (the agent was killed): it records what runs at once, keeps it running, reaps it when
    it ends, and exits only then, leaving no record behind."""
    shim, procs = _shim_with_records(tmp_path)
    sleeper = _start(shim, "sleeper", ["sleep", "30"], tmp_path)
    try:
        shim.stdin.close()
        deadline = time.monotonic() + 20  # bounded; generous for a loaded 2-core CI machine
        # The record is made, then written (`leftovers.record`): read once it holds something.
        while not (procs / str(sleeper)).exists() or not (procs / str(sleeper)).read_text():
            assert time.monotonic() < deadline, "the running container was never recorded"
            time.sleep(0.01)
        assert (procs / str(sleeper)).read_text() == leftovers.start_time(sleeper)
        assert shim.poll() is None, "the shim outlives its agent while a container runs"
        os.killpg(sleeper, signal.SIGTERM)
        assert shim.wait(timeout=10) == 0
        assert not procs.exists()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sleeper, signal.SIGKILL)


def test_a_container_starts_with_default_signal_dispositions(tmp_path: Path) -> None:
    """The shim ignores SIGINT (a terminal's Ctrl-C is for the agent); its containers do not inherit that."""
    shim, _ = _shim_with_records(tmp_path)
    try:
        script = "grep SigIgn /proc/$$/status"
        pid = _start(shim, "c", ["sh", "-c", script], tmp_path)
        assert json.loads(shim.stdout.readline())[:2] == ["x", "c"]
        ignored = int(render((tmp_path / "c.log").read_bytes()).split()[1], 16)
        assert pid > 0 and not ignored & (1 << (signal.SIGINT - 1))
    finally:
        shim.stdin.close()
        shim.wait(timeout=10)


def test_relative_paths_are_read_from_the_directory_the_shim_started_in(tmp_path: Path) -> None:
    """The shim changes its working directory for every start: a relative record directory or log path must not
    follow it there."""
    import subprocess
    import sys

    from kjobs.node import spawner

    (tmp_path / "procs").mkdir()
    shim = subprocess.Popen(
        [sys.executable, "-E", "-s", "-S", spawner._SHIM], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tmp_path
    )
    assert shim.stdin is not None and shim.stdout is not None
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    lines = [["b", env, "procs"], ["s", "c", ["sleep", "30"], {}, "work", "c.log"]]
    shim.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    shim.stdin.flush()
    pid = int(json.loads(shim.stdout.readline())[2])
    records = tmp_path / "procs" / adoption.identity(shim.pid)
    try:
        shim.terminate()  # the shim records what it leaves running, then exits
        shim.wait(timeout=10)
        assert (records / str(pid)).exists()
        assert (tmp_path / "c.log").exists() and (tmp_path / "work").is_dir()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_starts_go_to_the_shims_in_turn_and_signals_to_the_one_that_started_each(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        script = "trap 'exit 3' TERM; touch trapped; sleep 30 & wait"  # takes SIGTERM, as PID 1 only a handler does
        handles = [await runtime.run_pod(make_pod([sh(script)], uid=f"u{i}", name=f"p{i}")) for i in range(4)]
        await eventually(lambda: all(r.pid is not None for r in runtime._running.values()), "every container's pid")
        await eventually(lambda: all((runtime.pod_dir(h.uid) / "trapped").exists() for h in handles), "the traps")
        shims = {shim.pid for shim in runtime._spawner.processes()}
        assert len(shims) == 2
        parents = [_parent(r.pid) for r in runtime._running.values() if r.pid is not None]
        assert sorted(parents) == sorted([*shims, *shims])  # two containers in each shim
        # A deletion's SIGTERM reaches each container through the shim that started it: each trap exits 3.
        for handle in handles:
            await runtime.kill_pod(handle.uid, grace_seconds=30)
        statuses = [await handle.wait() for handle in handles]
        for status in statuses:
            terminated = state(status)["state"]["terminated"]
            assert (terminated["exitCode"], terminated.get("signal")) == (3, None)

    with_runtime(tmp_path, body)


def test_a_dead_shim_takes_only_its_own_containers(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        first = await runtime.run_pod(make_pod([sh("sleep 30")], uid="u1", name="p1"))
        second = await runtime.run_pod(make_pod([sh("sleep 30")], uid="u2", name="p2"))
        await eventually(lambda: all(r.pid is not None for r in runtime._running.values()), "both pids")
        cid = next(cid for cid, r in runtime._running.items() if r.uid == "u1")
        other = next(r.pid for r in runtime._running.values() if r.uid == "u2")
        assert other is not None
        runtime._spawner.process_of(cid).kill()  # type: ignore[union-attr]
        status = await first.wait()
        assert state(status)["state"]["terminated"]["exitCode"] == 137
        await asyncio.sleep(0.1)
        assert "running" in state(second.status)["state"] and _alive(other)

    with_runtime(tmp_path, body)


def test_one_shim_when_asked(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        statuses = [await finish(runtime, make_pod([sh("exit 0")], uid=f"u{i}", name=f"p{i}")) for i in range(3)]
        assert [s["phase"] for s in statuses] == ["Succeeded"] * 3
        assert len(runtime._spawner.processes()) == 1

    with_runtime(tmp_path, body, shims=1)


def test_output_is_logged_in_cri_entries_timed_as_read_and_whole_by_the_exit(tmp_path: Path) -> None:
    """Each line an entry `<time> stdout F <line>`; a line longer than MAX_LINE and a last line without its
    newline are parts (`P`) that render back byte for byte; stdout and stderr in write order; everything the
    container wrote (here 300 KB just before it exits) is in the log when the exit is reported."""
    from kjobs.node.shim import MAX_LINE

    shim, _ = _shim_with_records(tmp_path, "", "", False, 0, 2)  # ~11 MB logged: past the default 10Mi, unrotated
    try:
        long = MAX_LINE + 100
        script = (
            f"echo out; echo err >&2; head -c {long} /dev/zero | tr '\\0' x; echo; "
            "head -c 300000 /dev/zero | tr '\\0' '\\n' | sed 's/^/y/'; printf end"
        )
        before = time.time()
        _start(shim, "c", ["sh", "-c", script], tmp_path)
        assert json.loads(shim.stdout.readline())[:2] == ["x", "c"]
        after = time.time()
        raw = (tmp_path / "c.log").read_bytes()
    finally:
        shim.kill()
    expected = b"out\nerr\n" + b"x" * long + b"\n" + b"y\n" * 300000 + b"end"
    assert render(raw) == expected
    entries = raw.split(b"\n")[:-1]
    assert entries[0].split(b" ", 1)[1] == b"stdout F out" and entries[1].split(b" ", 1)[1] == b"stdout F err"
    assert [e.split(b" ")[2] for e in entries[2:4]] == [b"P", b"F"]  # the long line: a part, then its end
    assert len(entries[2].split(b" ", 3)[3]) == MAX_LINE
    assert entries[-1].endswith(b" stdout P end")
    times = sorted({e.split(b" ", 1)[0] for e in entries})
    assert log_time(before) <= times[0] and times[-1] <= log_time(after)


@settings(max_examples=examples(300), deadline=None)
@given(
    kind=st.sampled_from(["c", "p", "x", "e"]),
    parts=st.lists(st.one_of(st.text(), st.integers(), st.booleans(), st.floats(), st.none()), max_size=7),
)
def test_journal_and_reply_lines_are_the_json_of_their_lists(kind: str, parts: list[object]) -> None:
    """The shim writes its creation and start journal entries, its start and exit replies and its exit entries
    from their parts: the same bytes as `json.dumps` of the list, which the agent and `kjobs.node.adoption` parse
    (NaN and infinities, booleans and nulls included, though a start sends none)."""
    from kjobs.node.shim import _line

    expected = json.dumps([kind, *parts], separators=(",", ":"))
    assert _line(kind, *parts) == expected


def test_a_journal_is_kept_for_the_next_agent_only_when_it_holds_something(tmp_path: Path) -> None:
    """A shim whose agent dies leaves its journal for the next agent; one that never wrote to it (the agent died
    as the shim came up) removes it as it exits: the next agent may have looked before it existed, and an empty
    journal tells nobody anything (a clean stop's test found one left under load)."""
    import subprocess
    import sys

    from kjobs.node import spawner

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    journals = tmp_path / "journal"

    def shim_with_journal(agent: str) -> Any:
        shim = subprocess.Popen(
            [sys.executable, "-E", "-s", "-S", spawner._SHIM], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert shim.stdin is not None
        shim.stdin.write(json.dumps(["b", env, "", str(journals), agent]).encode() + b"\n")
        shim.stdin.flush()
        return shim

    idle = shim_with_journal("1-1")
    busy = shim_with_journal("2-2")
    assert _start(busy, "c", ["true"], tmp_path)
    assert json.loads(busy.stdout.readline())[:2] == ["x", "c"]
    deadline = time.monotonic() + 20  # bounded; generous for a loaded 2-core CI machine
    while len(list(journals.glob("*.jsonl"))) < 2:  # each shim made its journal as it took "b"
        assert time.monotonic() < deadline, list(journals.iterdir())
        time.sleep(0.01)
    for shim in (idle, busy):  # their agent is gone
        shim.stdin.close()
        shim.wait(timeout=20)
        shim.stdout.close()
    left = [path.name for path in journals.iterdir()]
    assert left == [f"2-2.{busy.pid}.jsonl"], left  # named `<agent>.<shim>` (its pid: it keeps no records here)
    assert b'["x","c"' in (journals / left[0]).read_bytes().replace(b" ", b"")


def test_a_node_root_removed_under_the_runtime_is_made_again_private(tmp_path: Path) -> None:
    """The node's root (0700 at its start, `owned_dir`) and its `pods` removed while the node runs are made again
    0700, by the agent's volume set-up and by the shim, which makes a container's missing working directory
    (docs/exhaust41.md). Before, they came back with the default mode (0755): readable by pods of other users."""
    import shutil
    import stat

    root = tmp_path / "node"

    async def body(runtime: ProcessRuntime) -> None:
        # The shim, started with the runtime, makes its journal and record directories a few ms later: removed
        # before that, the tree could gain them while `rmtree` walked it ("Directory not empty").
        await eventually(lambda: _has_files(root / "journal") and _has_files(root / "procs"), "the shim's start")
        shutil.rmtree(root)
        runtime.prepare_volumes(make_pod([sh("true")], uid="uid-v", name="pv"), None)
        assert stat.S_IMODE(root.stat().st_mode) == stat.S_IMODE((root / "pods").stat().st_mode) == 0o700
        shutil.rmtree(root)
        # Running past the shim's `RECORD_AFTER`, so that its record is made, under `procs`, made again too. (The
        # journal keeps going to the file the shim has open; its directory is made again at its next rotation.)
        done = await finish(runtime, make_pod([sh("sleep 0.3")], uid="uid-2", name="p2"))
        assert done["phase"] == "Succeeded", state(done)
        made_again = [root, root / "pods", root / "logs", root / "procs"]
        assert {d.name: stat.S_IMODE(d.stat().st_mode) for d in made_again} == {d.name: 0o700 for d in made_again}
        assert (root / "pods" / "uid-2").is_dir()

    root.mkdir(mode=0o700)
    with_runtime(root, body)


def _has_files(directory: Path) -> bool:
    """Whether `directory` exists and holds anything."""
    return directory.is_dir() and any(directory.iterdir())


def test_a_container_is_journaled_as_created_before_its_process_runs(tmp_path: Path) -> None:
    """The journal names a pod's container (pod uid, container, restart count) before its process can exist, so
    a shim killed inside `posix_spawn` leaves a record of what may have run (`kjobs.node.adoption`): the container
    reads the journal as its first act and finds its own creation entry there."""
    import subprocess
    import sys

    from kjobs.node import spawner

    journals = tmp_path / "journal"
    shim = subprocess.Popen(
        [sys.executable, "-E", "-s", "-S", spawner._SHIM], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert shim.stdin is not None and shim.stdout is not None
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    try:
        shim.stdin.write(json.dumps(["b", env, "", str(journals), "1-1"]).encode() + b"\n")
        seen = tmp_path / "seen"
        argv = ["sh", "-c", f"cat {journals}/*.jsonl > {seen}"]
        start = ["s", "cid-1", argv, {}, str(tmp_path), str(tmp_path / "c.log"), "uid-1", "main", 2, 5.0]
        shim.stdin.write(json.dumps(start).encode() + b"\n")
        shim.stdin.flush()
        assert json.loads(shim.stdout.readline())[:2] == ["p", "cid-1"]
        assert json.loads(shim.stdout.readline())[:3] == ["x", "cid-1", 0]
        entries = [json.loads(line) for line in seen.read_text().splitlines()]
        assert ["c", "cid-1", "uid-1", "main", 2, 5.0] in entries
    finally:
        shim.stdin.close()
        shim.wait(timeout=20)
        shim.stdout.close()
