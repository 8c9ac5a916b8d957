"""The stray scan of a runtime restarted after a node crash (`adoption.kill_strays`) finds a dead shim's containers
by the tag each holds (`leftovers.CONTAINER_TAG`), wherever they work: a container whose `workingDir` is outside
the pod directories is killed too, and nothing that is not a container is."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from kjobs.api.types import Obj
from kjobs.node import adoption, leftovers
from kjobs.node.process_runtime import ProcessRuntime
from tests.node.helpers import make_pod
from tests.node.test_adoption import _AGENT, REPO, _running, _until, _wait_for
from tests.node.test_process_runtime import sh, state
from tests.node.test_shim_death import _children

SLEEPER = [sys.executable, "-c", "import sys, time; print('ready', flush=True); time.sleep(60)"]


def _start(*, tag: str | None = None, session: bool = True, cwd: str = "/tmp") -> subprocess.Popen[bytes]:
    """A process (its own session's leader unless `session` is False) holding a memfd named `tag`, once ready."""
    fds: tuple[int, ...] = ()
    if tag is not None:
        fds = (os.memfd_create(tag, 0),)
    try:
        proc = subprocess.Popen(SLEEPER, stdout=subprocess.PIPE, start_new_session=session, pass_fds=fds, cwd=cwd)
    finally:
        for fd in fds:
            os.close(fd)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    return proc


def _ticks_now() -> int:
    """A start time (clock ticks since boot) no later than that of any process this test starts: this one's."""
    return int(leftovers.start_time(os.getpid()) or 0)


def _stop(*procs: subprocess.Popen[bytes]) -> None:
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()


def _shim() -> str:
    """A shim identity no other test names (tests run side by side, and a scan looks at every process)."""
    return f"1-{uuid.uuid4().int}"


def test_a_tagged_session_leader_of_a_dead_shim_is_killed_and_nothing_else() -> None:
    dead, other, live = _shim(), _shim(), adoption.identity(os.getpid())
    since = _ticks_now()
    stray = _start(tag=leftovers.tag_name(dead, "kjobs://0123"))
    other_node = _start(tag=leftovers.tag_name(other, "kjobs://4567"))  # another runtime's shim: not ours
    live_shims = _start(tag=leftovers.tag_name(live, "kjobs://89ab"))  # a live shim's container, named as dead
    untagged = _start()  # a session leader that is no container, wherever it works
    leader = _start()
    try:
        assert leftovers.container_tag(stray.pid) == (dead, "kjobs://0123")
        assert leftovers.container_tag(untagged.pid) is None
        killed = adoption.kill_strays({dead}, since)
        assert killed == [stray.pid]
        assert stray.wait(timeout=20) == -signal.SIGKILL
        assert all(p.poll() is None for p in (other_node, live_shims, untagged, leader))
        assert adoption.kill_strays({other}, since) == [other_node.pid]
    finally:
        _stop(stray, other_node, live_shims, untagged, leader)


def test_a_tag_passed_to_a_process_that_leads_no_session_kills_nothing() -> None:
    """A container can hand its tag (or a forged one) to another process, but the scan kills only session
    leaders holding one, by their group: a process in someone else's session is never a target, nor its leader."""
    since, dead = _ticks_now(), _shim()
    holder = _start(tag=leftovers.tag_name(dead, "kjobs://0123"), session=False)  # in this test's group
    try:
        assert leftovers.container_tag(holder.pid) == (dead, "kjobs://0123")
        assert adoption.kill_strays({dead}, since) == []
        assert holder.poll() is None
    finally:
        _stop(holder)


def test_a_process_started_before_the_oldest_dead_shim_is_not_looked_at() -> None:
    dead = _shim()
    old = _start(tag=leftovers.tag_name(dead, "kjobs://0123"))
    try:
        started = int(leftovers.start_time(old.pid) or 0)
        assert adoption.kill_strays({dead}, started + 1) == []
        assert old.poll() is None
    finally:
        _stop(old)


# -- a node crash --------------------------------------------------------------------------------------------


def _as_if_never_journaled(root: Path) -> None:
    """What a shim killed between its `posix_spawn` and its journal's start entry leaves: its creation entry only,
    no pid, no `leftovers` record (`kill_lost` and `kill_leftovers` cannot find the process)."""
    for journal in (root / "journal").glob("*.jsonl*"):
        lines = [line for line in journal.read_bytes().splitlines() if json.loads(line)[0] != "p"]
        journal.write_bytes(b"".join(line + b"\n" for line in lines))
    for record in (root / "procs").glob("*/*"):
        record.unlink()


def _crash(root: Path, container: Obj) -> None:
    """Run `container` in pod `stray` under an agent, then SIGKILL its shims and the agent (a node crash)."""
    specs = [{"uid": "stray", "container": container}]
    agent = subprocess.Popen(
        [sys.executable, "-c", _AGENT, str(root), json.dumps(specs)], stdout=subprocess.PIPE, cwd=REPO
    )
    try:
        assert agent.stdout is not None and agent.stdout.readline() == b"started\n"
        os.kill(agent.pid, signal.SIGSTOP)  # the agent must not see its shims die (it would kill their containers)
        _until(lambda: _state(agent.pid) == "T", "the agent never stopped")
        shims = _children(agent.pid)
        for shim in shims:
            os.kill(shim, signal.SIGKILL)
        for shim in shims:  # dead, not dying: a restarted runtime takes a shim still exiting for a live one
            _until(lambda shim=shim: not _running(shim), "a shim survived SIGKILL")  # type: ignore[misc]
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait()


def _diagnosis(root: Path, pid: int) -> str:
    """What the scan saw of the container `pid` and the journals' shims, for a failure's message."""
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rfind(")") + 2 :].split()
        journals = adoption.scan(root / "journal", me="")
        shims = {j.shim: adoption.shim_alive(j) for j in journals}
        fds = {e.name: os.readlink(e.path) for e in os.scandir(f"/proc/{pid}/fd")}
        return f"tag {leftovers.container_tag(pid)}, pgrp {fields[3]}, started {fields[19]}, shims {shims}, fds {fds}"
    return ""


def _state(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rfind(")") + 2]


def _security_contexts() -> list[object]:
    cases = [
        pytest.param({}, id="plain"),
        pytest.param({"securityContext": {"allowPrivilegeEscalation": False}}, id="setpriv"),
    ]
    if os.geteuid() == 0:  # another user: setpriv changes the process's user, which makes it not dumpable
        cases.append(pytest.param({"securityContext": {"runAsUser": 65534, "runAsGroup": 65534}}, id="other-user"))
    return cases


@pytest.mark.e2e
@pytest.mark.parametrize("extra", _security_contexts())
def test_a_crashed_nodes_container_working_outside_the_pod_directories_is_killed(
    tmp_path: Path, extra: dict[str, object]
) -> None:
    """A container with `workingDir: /tmp` (a shell that `exec`s its command, through `setpriv` when it has a
    securityContext) runs when the agent and its shim are SIGKILLed, and no journal nor record names it: the
    restarted runtime kills it."""
    root = tmp_path / "node"
    marks = Path(tempfile.mkdtemp(prefix="kjobs-stray-"))  # in /tmp, writable by another user
    marks.chmod(0o777)
    mark = marks / "pid"
    script = f'[ "$(pwd)" = /tmp ] || exit 9; echo $$$$ > {mark}.tmp; mv {mark}.tmp {mark}; exec sleep 60'
    container = sh(script, workingDir="/tmp", **extra)
    pid = 0
    try:
        _crash(root, container)
        _wait_for(mark, 20)
        pid = int(mark.read_text())
        logs = "".join(p.read_text() for p in (root / "logs").glob("*.log"))
        assert _running(pid), f"the container ended before the restart: {logs}"
        assert os.readlink(f"/proc/{pid}/cwd") == "/tmp"
        _as_if_never_journaled(root)

        async def restart() -> None:
            runtime = ProcessRuntime(root_dir=root)
            await runtime.shutdown(forget=True)

        asyncio.run(restart())
        _until(lambda: not _running(pid), f"the crashed node's container still runs: {_diagnosis(root, pid)}", 20)
    finally:
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
        for path in marks.iterdir():
            path.unlink()
        marks.rmdir()


@pytest.mark.e2e
def test_a_container_that_ran_to_its_end_while_its_shim_died_in_the_spawn_is_lost_not_started_again(
    tmp_path: Path,
) -> None:
    """A node crash (agent and shim SIGKILLed) while the shim is in `posix_spawn` leaves a container running that
    no start entry names; it runs to its end before the agent is back (chaos seed 12 found this: the restarted
    agent, knowing nothing of it, started a `restartPolicy: Never` container a second time and reported that run's
    exit 0 for a pod whose container had failed). The creation entry the shim journals before spawning makes the
    restarted runtime adopt the pod with its container lost (`ContainerStatusUnknown`), and start nothing."""
    root, marks = tmp_path / "node", tmp_path / "marks"
    marks.mkdir()
    script = f"echo run >> {marks}/runs; while [ ! -e {marks}/go ]; do sleep 0.01; done; exit 3"
    container = sh(script)
    _crash(root, container)
    _wait_for(marks / "runs")
    _as_if_never_journaled(root)
    (marks / "go").touch()  # it ends, with 3, while no agent runs
    _until(lambda: not any(_running(p) for p in _sessions_in(root)), "the container never ended")

    async def restart() -> Obj:
        runtime = ProcessRuntime(root_dir=root)
        try:
            handle = runtime.adopt(make_pod([container], uid="stray", name="stray"))
            assert handle is not None, "the restarted runtime knows nothing of a container that ran"
            return await asyncio.wait_for(handle.wait(), 10)
        finally:
            await runtime.shutdown(forget=True)

    status = asyncio.run(restart())
    terminated = state(status)["state"]["terminated"]
    assert (status["phase"], terminated["exitCode"], terminated["reason"]) == ("Failed", 137, "ContainerStatusUnknown")
    assert (marks / "runs").read_text() == "run\n", "the container ran again"


def _sessions_in(root: Path) -> list[int]:
    """Session leaders working in one of `root`'s pod directories (the containers of its pods)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if os.getsid(int(entry)) == int(entry) and os.readlink(f"/proc/{entry}/cwd").startswith(
                    str(root / "pods")
                ):
                    found.append(int(entry))
    return found
