"""A process shim SIGKILLed in the middle of a burst of starts (docs/chaos.md): every container it had started
must be killed, also those whose start the agent had not heard of yet, as containerd's clean-up after a dead shim
(`runc delete --force`) kills the container whatever the shim had reported."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from kjobs.api.types import Obj
from kjobs.node.process_runtime import ProcessRuntime
from kjobs.node.spawner import Spawner
from tests.node.test_adoption import (
    _AGENT,
    REPO,
    _adopted_long_is_lost_and_gone,
    _killed_at_once_and_read_137_error,
    _running,
    _wait_for,
)
from tests.node.test_process_runtime import sh

pytestmark = pytest.mark.e2e


def _marked(marker: bytes) -> list[int]:
    """Live processes whose environment holds `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if marker in environ.split(b"\0") and stat[stat.rfind(")") + 2] not in "ZX":
            found.append(int(entry))
    return found


def test_a_shim_killed_mid_burst_leaves_no_container_running(tmp_path: Path) -> None:
    marker = f"KJOBS_TEST_MARK={uuid.uuid4().hex}".encode()
    exited: dict[str, int] = {}
    count = 40

    async def scenario() -> None:
        spawner = Spawner(
            base_env={
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                marker.decode().split("=")[0]: marker.decode().split("=")[1],
            },
            procs_dir=tmp_path / "procs",
            journal_dir=tmp_path / "journal",
            agent_id="agent",
            on_started=lambda cid, pid: None,
            on_failed=lambda cid, message: exited.__setitem__(cid, -1),
            on_exited=exited.__setitem__,
        )
        (tmp_path / "procs").mkdir()
        (tmp_path / "journal").mkdir()
        spawner.start()
        for i in range(count):
            spawner.spawn(f"c{i}", ["sleep", "30"], {}, str(tmp_path), str(tmp_path / f"c{i}.log"))
        deadline = time.monotonic() + 10
        while not _marked(marker):  # the shim is in the burst: some started, their starts not yet reported
            assert time.monotonic() < deadline
            await asyncio.sleep(0)
        shim = spawner.process
        assert shim is not None
        os.kill(shim.pid, signal.SIGKILL)
        while len(exited) < count:
            assert time.monotonic() < deadline, f"{len(exited)} of {count} reported"
            await asyncio.sleep(0.01)
        spawner.close(wait=False)

    try:
        asyncio.run(asyncio.wait_for(scenario(), 20))
        assert set(exited.values()) == {-signal.SIGKILL}  # every container reported killed, as containerd does
        deadline = time.monotonic() + 2
        while (left := _marked(marker)) and time.monotonic() < deadline:
            time.sleep(0.05)
        details = [(pid, os.readlink(f"/proc/{pid}/cwd"), Path(f"/proc/{pid}/stat").read_text()) for pid in left]
        assert left == [], f"{len(left)} containers of the dead shim still run: {details}"
    finally:
        for pid in _marked(marker):
            os.killpg(pid, signal.SIGKILL)


def _agent_running(root: Path, pods: dict[str, Obj]) -> subprocess.Popen[bytes]:
    """An agent process on `root` starting `pods` (uid -> its one container); it prints `started` once they run."""
    specs = [{"uid": uid, "container": container} for uid, container in pods.items()]
    return subprocess.Popen(
        [sys.executable, "-c", _AGENT, str(root), json.dumps(specs)], stdout=subprocess.PIPE, cwd=REPO
    )


def _children(parent: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{entry}/stat").read_text()
            if entry.isdigit() and stat[stat.rfind(")") + 2 :].split()[1] == str(parent):
                found.append(int(entry))
    return found


def test_a_node_crash_right_after_a_start_leaves_no_container_running(tmp_path: Path) -> None:
    """The agent and its shims SIGKILLed together (a crash of kubelet and containerd) a moment after a container
    started, before its shim recorded it for `leftovers` (`shim.RECORD_AFTER`): the restarted agent reports it
    lost (`ContainerStatusUnknown`, as a kubelet whose runtime lost the container) and it must not run on."""
    root, marks = tmp_path / "node", tmp_path / "marks"
    marks.mkdir()
    pods = {"long": sh(f"echo $$$$ > {marks}/long.tmp; mv {marks}/long.tmp {marks}/long; exec sleep 30")}
    agent = _agent_running(root, pods)
    try:
        assert agent.stdout is not None and agent.stdout.readline() == b"started\n"
        for shim in _children(agent.pid):  # the shims first: the agent must not see them die
            os.kill(shim, signal.SIGKILL)
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait()
    _wait_for(marks / "long")
    long_pid = int((marks / "long").read_text())

    _adopted_long_is_lost_and_gone(root, pods["long"], long_pid)


def test_a_node_crash_mid_burst_leaves_no_container_running(tmp_path: Path) -> None:
    """The agent and its shims SIGKILLed together in a burst of starts: the start a shim was making has no
    journal line yet (and no agent is left to look for it); the restarted agent must still kill it, as a
    kubelet's runtime restarted after a crash has no container it does not know of."""
    root, marks = tmp_path / "node", tmp_path / "marks"
    marks.mkdir()
    pods = {
        f"p{i}": sh(f"echo $$$$ > {marks}/p{i}.tmp; mv {marks}/p{i}.tmp {marks}/p{i}; exec sleep 30") for i in range(20)
    }
    specs = [{"uid": uid, "container": container} for uid, container in pods.items()]
    agent = subprocess.Popen(
        [sys.executable, "-c", _AGENT, str(root), json.dumps(specs)], stdout=subprocess.PIPE, cwd=REPO
    )
    try:
        deadline = time.monotonic() + 20
        while not any(marks.glob("p*[0-9]")):
            assert time.monotonic() < deadline, "no container started"
            time.sleep(0.001)
        for shim in _children(agent.pid):
            os.kill(shim, signal.SIGKILL)
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait()
    time.sleep(0.5)  # what was being started has written its mark by now
    pids = [int(p.read_text()) for p in marks.glob("p*[0-9]")]

    async def body() -> None:
        runtime = ProcessRuntime(root_dir=root)
        await runtime.shutdown(forget=True)

    try:
        asyncio.run(body())
        deadline = time.monotonic() + 5
        while left := [pid for pid in pids if _running(pid)]:
            assert time.monotonic() < deadline, f"{len(left)} of {len(pids)} containers of the crashed node still run"
            time.sleep(0.05)
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def test_a_shim_killed_just_before_its_agent_still_has_its_containers_killed(tmp_path: Path) -> None:
    """A shim SIGKILLed, then its agent before the agent could see it die (docs/chaos.md, chaos seed 13 on three
    nodes): containerd, which outlives both, kills the dead shim's containers at once (`cleanupAfterDeadShim`:
    `runc delete --force`, `TaskExit` 128 + SIGKILL) and the restarted kubelet reports exit 137, `Error`. Before,
    the container ran on until an agent started again, which then reported it `ContainerStatusUnknown`; now the
    agent's surviving shim kills it as its agent's pipe closes and journals it killed."""
    root, marks = tmp_path / "node", tmp_path / "marks"
    marks.mkdir()
    pods = {"long": sh(f"echo $$$$ > {marks}/long.tmp; mv {marks}/long.tmp {marks}/long; exec sleep 30")}
    agent = _agent_running(root, pods)
    long_pid = 0
    try:
        assert agent.stdout is not None and agent.stdout.readline() == b"started\n"
        _wait_for(marks / "long")
        long_pid = int((marks / "long").read_text())
        stat = Path(f"/proc/{long_pid}/stat").read_text()
        shim = int(stat[stat.rfind(")") + 2 :].split()[1])
        assert len(_children(agent.pid)) >= 2, "the agent has one shim: none would survive"
        agent.send_signal(signal.SIGSTOP)  # it must not see its shim die
        os.kill(shim, signal.SIGKILL)
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait()
    _killed_at_once_and_read_137_error(root, pods["long"], long_pid, "the dead shim's container runs on")
