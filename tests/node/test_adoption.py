"""A restarted agent adopts what its killed predecessor's shim kept running and reports what ended as it ended."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.node import adoption
from kjobs.node.process_runtime import ProcessRuntime
from tests.node.helpers import make_pod
from tests.node.test_process_runtime import eventually, sh, state, with_runtime

REPO = Path(__file__).resolve().parents[2]


# -- the journal, pure ---------------------------------------------------------------------------------------


def _journal(tmp_path: Path, lines: list[list[object]], *, tail: bytes = b"") -> adoption.Journal:
    path = tmp_path / "1-1.2-2.jsonl"
    path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines) + tail)
    return adoption.Journal(path=path, shim="2-2")


def test_journal_entries_give_each_containers_end(tmp_path: Path) -> None:
    journal = _journal(
        tmp_path,
        [
            ["p", "c1", 101, "uid-a", "main", 0, 10.0],
            ["p", "c2", 102, "uid-b", "main", 1, 11.0],
            ["e", "c3", "failed to start container process: boom", 12.0, "uid-d", "main", 0],
            ["x", "c1", 3, 13.5],
            ["p", "c4", 104, "uid-c", "main", 0, 14.0],
            ["x", "c4", -9, 15.0],
        ],
        tail=b'["x","c2",0,',  # a line being written: not read yet
    )
    ended = adoption.read_new(journal)
    assert [r.container_id for r in ended] == ["c3", "c1", "c4"]  # in journal order
    c1, c2, c3, c4 = (journal.containers[c] for c in ("c1", "c2", "c3", "c4"))
    assert (c1.uid, c1.container, c1.number, c1.pid, c1.started_at) == ("uid-a", "main", 0, 101, 10.0)
    assert (c1.returncode, c1.finished_at, c1.running) == (3, 13.5, False)
    assert (c2.number, c2.running) == (1, True)
    assert (c3.start_error, c3.uid, c3.running) == ("failed to start container process: boom", "uid-d", False)
    assert c4.returncode == -9
    with journal.path.open("ab") as f:
        f.write(b"16.0]\n")
    assert [r.container_id for r in adoption.read_new(journal)] == ["c2"]
    assert (c2.returncode, c2.finished_at) == (0, 16.0)


def test_a_dead_shims_unfinished_containers_are_lost(tmp_path: Path) -> None:
    journal = _journal(tmp_path, [["p", "c1", 101, "u", "main", 0, 1.0], ["p", "c2", 102, "u", "side", 0, 1.0]])
    journal.path.open("ab").write(b'["x","c2",0,2.0]\n')
    adoption.read_new(journal)
    assert [r.container_id for r in adoption.mark_lost(journal)] == ["c1"]
    assert journal.containers["c1"].lost and not journal.containers["c2"].lost


def test_a_created_container_is_lost_with_its_shim_and_its_start_fills_in_its_pid(tmp_path: Path) -> None:
    """A creation entry ("c") is written before the shim spawns: a container with no start entry after it may have
    run (the shim died inside `posix_spawn`), so with its shim gone it is lost like a running one; a start entry
    gives the same record its pid (an adopter holds that record), a failed start ends it."""
    journal = _journal(
        tmp_path,
        [
            ["c", "c1", "uid-a", "main", 0, 10.0],
            ["c", "c2", "uid-b", "main", 2, 11.0],
            ["c", "c3", "uid-c", "main", 0, 12.0],
            ["e", "c3", "failed to start container process: boom", 12.5, "uid-c", "main", 0],
        ],
    )
    adoption.read_new(journal)
    c1, c2 = journal.containers["c1"], journal.containers["c2"]
    assert (c1.uid, c1.container, c1.number, c1.pid, c1.started_at, c1.running) == ("uid-a", "main", 0, 0, 10.0, True)
    assert journal.containers["c3"].start_error and not journal.containers["c3"].running
    with journal.path.open("ab") as f:
        f.write(b'["p","c2",202,"uid-b","main",2,11.0]\n')
    adoption.read_new(journal)
    assert journal.containers["c2"] is c2 and c2.pid == 202
    assert [r.container_id for r in adoption.mark_lost(journal)] == ["c1", "c2"]


def test_malformed_lines_are_skipped(tmp_path: Path) -> None:
    journal = _journal(tmp_path, [["p", "c1"], ["x", "unknown", 0, 1.0], ["q"]], tail=b"not json\n")
    assert adoption.read_new(journal) == []
    assert journal.containers == {}


def test_only_journals_of_agents_that_are_gone_are_read(tmp_path: Path) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    me = adoption.identity(os.getpid())
    for agent in (me, f"{gone.pid}-1"):
        (tmp_path / f"{agent}.{gone.pid}-1.jsonl").write_text('["p","c",5,"u","main",0,1.0]\n')
    (tmp_path / "unrelated.txt").write_text("")
    journals = adoption.scan(tmp_path, me=me)
    assert [j.path.name for j in journals] == [f"{gone.pid}-1.{gone.pid}-1.jsonl"]
    assert journals[0].containers["c"].lost  # its shim is gone too
    assert adoption.owners("a.b.jsonl") == ("a", "b") and adoption.owners("ab.jsonl") is None


# -- a real agent killed with SIGKILL --------------------------------------------------------------------------

_AGENT = """
import asyncio, json, sys
from pathlib import Path
from kjobs.node.process_runtime import ProcessRuntime
from tests.node.helpers import make_pod

async def main():
    runtime = ProcessRuntime(root_dir=Path(sys.argv[1]))
    for spec in json.loads(sys.argv[2]):
        await runtime.run_pod(make_pod([spec["container"]], uid=spec["uid"], name=spec["uid"]))
    while any(runtime.starting(spec["uid"]) for spec in json.loads(sys.argv[2])):
        await asyncio.sleep(0.01)
    print("started", flush=True)
    await asyncio.sleep(60)

asyncio.run(main())
"""


def _kill_agent_after_start(root: Path, pods: dict[str, Obj]) -> None:
    specs = [{"uid": uid, "container": container} for uid, container in pods.items()]
    agent = subprocess.Popen(
        [sys.executable, "-c", _AGENT, str(root), json.dumps(specs)], stdout=subprocess.PIPE, cwd=REPO
    )
    try:
        assert agent.stdout is not None and agent.stdout.readline() == b"started\n"
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait()


def _until(done: Callable[[], bool], message: str, seconds: float = 20.0) -> None:
    """Wait until `done()`; bounded, and generous for a loaded 2-core CI machine."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, message
        time.sleep(0.01)


def _wait_for(path: Path, seconds: float = 10.0) -> None:
    _until(path.exists, f"{path} never appeared", seconds)


def _until_gone(pid: int, message: str) -> None:
    """Wait until `pid` no longer runs."""
    _until(lambda: not _running(pid), message)


def _running(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def _written_journals(directory: Path) -> list[Path]:
    """The journals in `directory` with entries. An idle shim of a dead agent removes its empty journal as it
    exits (`kjobs.node.shim`), so a file listed may be gone by the time it is looked at."""
    written = []
    for path in directory.iterdir():
        try:
            if path.stat().st_size:
                written.append(path)
        except FileNotFoundError:
            continue
    return written


def _shim_pid(root: Path) -> int:
    """The shim that started the (one) container: its journal is the one with entries (a runtime has several
    shims, each with a journal of its own)."""
    (journal,) = _written_journals(root / "journal")
    found = adoption.owners(journal.name)
    assert found is not None
    return int(found[1].partition("-")[0])


async def _settled(runtime: ProcessRuntime, uid: str) -> Obj:
    handle = runtime.get(uid)
    assert handle is not None
    return await asyncio.wait_for(handle.wait(), 10)


def _adopted_long_is_lost_and_gone(root: Path, container: Obj, long_pid: int) -> None:
    """A runtime restarted on `root` adopts pod `long`, reports its container lost as a kubelet whose runtime lost
    it (`ContainerStatusUnknown`, 137), and that container no longer runs."""
    _adopted_long_ended_as(root, container, long_pid, "ContainerStatusUnknown")
    _until_gone(long_pid, "the lost container still runs")


def _killed_at_once_and_read_137_error(root: Path, container: Obj, long_pid: int, what: str) -> None:
    """Pod `long`'s container, whose shim died while no agent ran, is killed within seconds (`what` otherwise),
    and a runtime restarted on `root` reports it ended with 137, `Error`, as a kubelet after containerd's clean-up
    of a dead shim."""
    try:
        _until(lambda: not _running(long_pid), what, 10)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(long_pid, signal.SIGKILL)  # only when it still runs: the check above failed
    _adopted_long_ended_as(root, container, long_pid, "Error")


def _adopted_long_ended_as(root: Path, container: Obj, long_pid: int, reason: str) -> None:
    """A runtime restarted on `root` adopts pod `long` and reports its container ended with 137 and `reason`
    (whatever happens, the container's group is killed at the end)."""

    async def body() -> None:
        runtime = ProcessRuntime(root_dir=root)
        try:
            assert runtime.adopt(make_pod([container], uid="long", name="long")) is not None
            ended = await _settled(runtime, "long")
            terminated = state(ended)["state"]["terminated"]
            assert (ended["phase"], terminated["exitCode"], terminated["reason"]) == ("Failed", 137, reason)
        finally:
            await runtime.shutdown(forget=True)

    try:
        asyncio.run(body())
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(long_pid, signal.SIGKILL)


@pytest.mark.e2e
def test_a_restarted_runtime_reports_what_ended_as_it_ended_and_adopts_what_runs(tmp_path: Path) -> None:
    root, marks = tmp_path / "node", tmp_path / "marks"
    marks.mkdir()
    pods = {
        "failed": sh("exit 3"),
        "later": sh(f"while [ ! -e {marks}/go ]; do sleep 0.01; done; touch {marks}/later; exit 0"),
        "long": sh(f"echo $$$$ > {marks}/long.tmp; mv {marks}/long.tmp {marks}/long; exec sleep 30"),
    }
    _kill_agent_after_start(root, pods)
    _wait_for(marks / "long")
    long_pid = int((marks / "long").read_text())
    (marks / "go").touch()  # `later` ends while no agent runs
    _wait_for(marks / "later")

    async def body() -> None:
        runtime = ProcessRuntime(root_dir=root)
        try:
            adopted = {uid: runtime.adopt(make_pod([c], uid=uid, name=uid)) for uid, c in pods.items()}
            assert all(handle is not None for handle in adopted.values())
            failed, later = await _settled(runtime, "failed"), await _settled(runtime, "later")
            assert (failed["phase"], state(failed)["state"]["terminated"]["exitCode"]) == ("Failed", 3)
            assert state(failed)["state"]["terminated"]["reason"] == "Error"
            assert later["phase"] == "Succeeded"
            assert state(later)["state"]["terminated"]["reason"] == "Completed"
            long = runtime.get("long")
            assert long is not None and long.status["phase"] == "Running"
            running_since = state(long.status)["state"]["running"]["startedAt"]
            assert runtime.adopt(make_pod([pods["long"]], uid="long", name="long")) is None  # once
            await runtime.kill_pod("long", grace_seconds=0)
            ended = await _settled(runtime, "long")
            terminated = state(ended)["state"]["terminated"]
            # its real end: `sleep` takes no SIGTERM (as PID 1), SIGKILL after the minimum grace period
            assert (terminated["exitCode"], terminated["reason"]) == (137, "Error")
            assert terminated["startedAt"] == running_since
        finally:
            await runtime.shutdown(forget=True)
        assert not list((root / "journal").iterdir()), "a clean stop leaves no journal"

    try:
        asyncio.run(body())
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(long_pid, signal.SIGKILL)


@pytest.mark.e2e
def test_the_containers_of_a_shim_killed_while_its_agent_is_dead_are_killed_and_reported_137(tmp_path: Path) -> None:
    """A shim SIGKILLed while its agent is dead: containerd, which outlives both, kills its containers at once
    (`cleanupAfterDeadShim`) and the restarted kubelet reports exit 137, `Error` (docs/chaos.md). The agent's
    other shim, still up, does that here (`shim.Shim.watch_siblings`); before, the container ran on until an
    agent started again and was reported `ContainerStatusUnknown`."""
    root, marks = tmp_path / "node", tmp_path / "marks"
    marks.mkdir()
    pods = {"long": sh(f"echo $$$$ > {marks}/long.tmp; mv {marks}/long.tmp {marks}/long; exec sleep 30")}
    _kill_agent_after_start(root, pods)
    _wait_for(marks / "long")
    long_pid = int((marks / "long").read_text())
    shim = _shim_pid(root)
    # A container is recorded for `leftovers` once it has run RECORD_AFTER (50 ms; `kjobs.node.shim`): the shim
    # killed now is one killed after that, however slowly a loaded machine let it get there.
    _until(lambda: any((root / "procs").glob(f"*/{long_pid}")), "the shim never recorded its running container")
    os.kill(shim, signal.SIGKILL)
    _until_gone(shim, "the shim survived SIGKILL")
    _killed_at_once_and_read_137_error(root, pods["long"], long_pid, "the dead shim's container runs on")


@pytest.mark.e2e
def test_containers_of_pods_no_longer_bound_here_are_stopped(tmp_path: Path) -> None:
    root, marks = tmp_path / "node", tmp_path / "marks"
    marks.mkdir()
    pods = {"gone": sh(f"echo $$$$ > {marks}/gone.tmp; mv {marks}/gone.tmp {marks}/gone; exec sleep 30")}
    _kill_agent_after_start(root, pods)
    _wait_for(marks / "gone")
    pid = int((marks / "gone").read_text())

    async def body() -> None:
        runtime = ProcessRuntime(root_dir=root)
        try:
            runtime.release_unclaimed(set())
            deadline = time.monotonic() + 20  # bounded; generous for a loaded 2-core CI machine
            while _running(pid):
                assert time.monotonic() < deadline, "the unclaimed container still runs"
                await asyncio.sleep(0.01)
        finally:
            await runtime.shutdown(forget=True)

    try:
        asyncio.run(body())
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


def test_a_rotated_journal_still_names_what_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shim rotates its journal every `ROTATE_AFTER` starts; the new one repeats what still runs, and a reader
    sees the containers of both."""
    from kjobs.node import shim as shim_module

    monkeypatch.setattr(shim_module, "ROTATE_AFTER", 2)
    monkeypatch.chdir(tmp_path)  # the shim changes directory for every start
    out = os.open(os.devnull, os.O_WRONLY)
    shim = shim_module.Shim(out)
    gone_agent = "999999999-1"  # above any pid_max: never alive
    shim.handle(["b", {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, "procs", "journal", gone_agent])
    work, log = str(tmp_path), str(tmp_path / "c.log")
    try:
        for cid, argv in (("long", ["sleep", "30"]), ("a", ["true"]), ("b", ["true"])):
            shim.handle(["s", cid, argv, {}, work, log, f"uid-{cid}", "main", 0])
            shim.flush()
        (current,) = (tmp_path / "journal").glob("*.jsonl")
        found = adoption.owners(current.name)
        assert found is not None and (tmp_path / "journal" / f"{current.name}.1").exists()
        rotated = current.with_name(current.name + ".1")
        first = [json.loads(line)[:2] for line in rotated.read_text().splitlines()]
        assert first == [["c", "long"], ["p", "long"], ["c", "a"], ["p", "a"]]
        then = [json.loads(line)[:2] for line in current.read_text().splitlines()]
        assert then == [["p", "long"], ["p", "a"], ["c", "b"], ["p", "b"]]  # what runs, then the next start
        (journal,) = adoption.scan(tmp_path / "journal", me=adoption.identity(os.getpid()))
        assert sorted(journal.containers) == ["a", "b", "long"]
    finally:
        for pid, _ in shim.running.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)  # the shim ran in this process: its children are ours
        os.close(out)


def test_the_journal_keeps_the_start_time_the_agent_reported(tmp_path: Path) -> None:
    """An adopting agent reports `startedAt` from the journal, so the journal holds the time the first agent
    reported (its clock), not the shim's later reading of its own: under load those straddled a second."""
    clock = FakeClock(1_000_000_000.25)  # 2001-09-09T01:46:40Z, far from the wall clock

    async def body(runtime: ProcessRuntime) -> None:
        handle = await runtime.run_pod(make_pod([sh("exec sleep 30")], uid="uid-1", name="p"))
        await eventually(lambda: "running" in state(handle.status)["state"], "the container to run")
        assert state(handle.status)["state"]["running"]["startedAt"] == "2001-09-09T01:46:40Z"
        (journal,) = _written_journals(tmp_path / "journal")
        (start,) = [entry for entry in map(json.loads, journal.read_text().splitlines()) if entry[0] == "p"]
        assert start[3:] == ["uid-1", "main", 0, 1_000_000_000.25]
        await runtime.kill_pod("uid-1", grace_seconds=0)

    with_runtime(tmp_path, body, clock=clock)


def test_a_start_without_a_reported_time_is_journaled_at_the_shims_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kjobs.node import shim as shim_module

    monkeypatch.chdir(tmp_path)  # the shim changes directory for every start
    out = os.open(os.devnull, os.O_WRONLY)
    shim = shim_module.Shim(out)
    shim.handle(["b", {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, "procs", "journal", "999999999-1"])
    before = time.time()
    try:
        shim.handle(["s", "c", ["true"], {}, str(tmp_path), str(tmp_path / "c.log"), "uid-c", "main", 0, None])
        shim.flush()
        (journal,) = (tmp_path / "journal").glob("*.jsonl")
        (start,) = [entry for entry in map(json.loads, journal.read_text().splitlines()) if entry[0] == "p"]
        assert start[3:6] == ["uid-c", "main", 0] and before <= start[6] <= time.time()
    finally:
        for pid, _ in shim.running.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
        os.close(out)


@pytest.mark.e2e
def test_an_adopted_tty_container_takes_input_and_resizes_through_its_shim(tmp_path: Path) -> None:
    """The restarted agent's attaches reach the terminal the previous agent's shim holds (its control socket):
    typed input is echoed and run, a resize is seen by `stty size`, and the shell's exit is its pod's end."""
    from kjobs.node.attach import Attached
    from kjobs.server.remotecommand import STDOUT

    root = tmp_path / "node"
    shell: Obj = {"name": "main", "image": "busybox", "command": ["sh"], "stdin": True, "tty": True}
    _kill_agent_after_start(root, {"tty": shell})
    shim_pid = _shim_pid(root)

    async def until(attached: Attached, pattern: bytes, seen: bytearray) -> None:
        while pattern not in seen:
            item = await asyncio.wait_for(attached.output.get(), 10)
            assert item is not None and item[0] == STDOUT, f"the attach ended before {pattern!r}: {bytes(seen)!r}"
            seen += item[1]

    async def body() -> None:
        runtime = ProcessRuntime(root_dir=root)
        try:
            assert runtime.adopt(make_pod([shell], uid="tty", name="tty")) is not None
            log, ended = runtime.attach_log("tty", "main")
            stdin, resize = runtime.attach_stdin("tty", "main"), runtime.attach_terminal("tty", "main")
            assert stdin is not None and stdin.tty and resize is not None
            attached = Attached(log, ended, tty=True, stdin=stdin, resize=resize, size=(100, 30))
            seen = bytearray()
            await attached.write(b"echo typed-$((6*7)); stty size\r")
            await until(attached, b"typed-42\r\n30 100\r\n", seen)
            attached.resize(120, 40)
            await attached.write(b"stty size; exit 4\r")
            await until(attached, b"40 120\r\n", seen)
            status = await _settled(runtime, "tty")
            assert state(status)["state"]["terminated"]["exitCode"] == 4
        finally:
            await runtime.shutdown(forget=True)

    try:
        asyncio.run(body())
        _until_gone(shim_pid, "the previous agent's shim never exited after its last container")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(shim_pid, signal.SIGKILL)


def test_a_control_connection_to_a_name_another_process_holds_is_refused(tmp_path: Path) -> None:
    """The agent sends terminal input only to the shim the journal names: a socket bound to that name by any
    other process (here this test's, whose pid is not the shim's) gets nothing."""
    import socket

    from kjobs.node.shim import control_address

    identity = f"{os.getpid() + 1}-1"
    squatter = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    squatter.bind(control_address(identity))
    squatter.listen(1)
    squatter.settimeout(5)
    control = adoption.ShimControl(identity)
    try:
        control.type_in("c", b"secret\r")
        conn, _ = squatter.accept()
        conn.settimeout(5)
        assert conn.recv(100) == b""  # closed by the agent before anything was sent
        conn.close()
    finally:
        control.close()
        squatter.close()


@pytest.mark.e2e
def test_an_adopted_container_is_probed_again(tmp_path: Path) -> None:
    """After an agent restart the kubelet's probe workers start anew: an adopted container whose liveness probe
    fails is killed (`sleep`, with no SIGTERM handler, at the end of its 1 s grace period: 137; the pod Failed
    under restartPolicy Never). Before, nothing probed it any more."""
    root, marks = tmp_path / "node", tmp_path / "marks"
    marks.mkdir()
    container = {
        **sh(f"echo $$$$ > {marks}/pid.tmp; mv {marks}/pid.tmp {marks}/pid; exec sleep 30"),
        "livenessProbe": {
            "exec": {"command": ["test", "-e", str(marks / "alive")]},
            "initialDelaySeconds": 1,
            "periodSeconds": 1,
            "failureThreshold": 1,
        },
    }
    _kill_agent_after_start(root, {"probed": container})
    _wait_for(marks / "pid")
    pid = int((marks / "pid").read_text())

    async def body() -> None:
        runtime = ProcessRuntime(root_dir=root)
        try:
            pod = make_pod([container], uid="probed", name="probed", terminationGracePeriodSeconds=1)
            assert runtime.adopt(pod) is not None
            ended = await asyncio.wait_for(_settled(runtime, "probed"), 15)
            terminated = state(ended)["state"]["terminated"]
            assert (ended["phase"], terminated["exitCode"]) == ("Failed", 137)
        finally:
            await runtime.shutdown(forget=True)

    try:
        asyncio.run(body())
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
