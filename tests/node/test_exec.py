"""`kubectl exec`'s side of the process runtime: a command runs as its container runs (environment, directory,
cgroup) and dies with the container; a container that does not run, or a command that is not found, is refused
as the kubelet and containerd refuse them."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest

from kjobs.node import execution
from kjobs.node.cgroups import probe_memory_guard
from kjobs.node.logsource import AgentLogs, RemoteLogs
from kjobs.node.process_runtime import ProcessRuntime
from kjobs.node.runtime import PodHandle
from kjobs.server.remotecommand import ExecFailed, ExecOptions, UpgradeFailed
from tests.node.helpers import make_pod
from tests.node.test_process_runtime import eventually, sh, with_runtime

pytestmark = pytest.mark.e2e


async def _running(runtime: ProcessRuntime, pod: dict[str, object], container: str = "main") -> PodHandle:
    handle = await runtime.run_pod(pod)
    await eventually(lambda: _in_state(handle, container, "running"), f"{container} to run")
    return handle


def _in_state(handle: PodHandle, container: str, state: str) -> bool:
    return any(s["name"] == container and state in s["state"] for s in handle.status.get("containerStatuses") or [])


async def _output(process: execution.ExecProcess) -> tuple[bytes, bytes, int]:
    out, err = b"", b""
    while (item := await process.output.get()) is not None:
        if item[0] == execution.STDOUT:
            out += item[1]
        else:
            err += item[1]
    return out, err, await process.wait()


def test_exec_runs_with_the_containers_environment_and_directory(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        env = [{"name": "A", "value": "1"}, {"name": "B", "value": "$(A)2"}]
        await _running(runtime, make_pod([sh("sleep 30", env=env, workingDir=str(tmp_path))]))
        spec = runtime.exec_spec("uid-1", "main", ["sh", "-c", 'echo "$A $B $HOSTNAME $(pwd)"; echo e >&2; exit 5'])
        process = await execution.start(spec, stdin=False, tty=False)
        assert await _output(process) == (f"1 12 job-0-abcde {tmp_path}\n".encode(), b"e\n", 5)

    with_runtime(tmp_path / "root", body)


def test_stdin_and_its_end_reach_the_command(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        await _running(runtime, make_pod([sh("sleep 30")]))
        process = await execution.start(runtime.exec_spec("uid-1", "main", ["cat"]), stdin=True, tty=False)
        await process.write(b"piped\n")
        process.close_stdin()
        assert await _output(process) == (b"piped\n", b"", 0)

    with_runtime(tmp_path, body)


def test_exec_commands_die_with_their_container(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        await _running(runtime, make_pod([sh("sleep 30")]))
        process = await execution.start(runtime.exec_spec("uid-1", "main", ["sleep", "60"]), stdin=False, tty=False)
        await runtime.kill_pod("uid-1", grace_seconds=0)
        code = await asyncio.wait_for(process.wait(), 5)
        assert code == 128 + 9

    with_runtime(tmp_path, body)


def test_a_container_that_does_not_run_and_a_missing_command_are_refused(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        handle = await _running(runtime, make_pod([sh("sleep 30"), sh("true", "quick")]))
        # `main` running says nothing of `quick`: on a busy machine it may not have exited yet
        await eventually(lambda: _in_state(handle, "quick", "terminated"), "quick to exit")
        with pytest.raises(UpgradeFailed, match=r'^container not found \("quick"\)$'):
            runtime.exec_spec("uid-1", "quick", ["true"])
        spec = runtime.exec_spec("uid-1", "main", ["no-such-command"])
        with pytest.raises(ExecFailed, match=r'exec: "no-such-command": executable file not found in \$PATH: unknown$'):
            await execution.start(spec, stdin=False, tty=False)

    with_runtime(tmp_path, body)


def test_a_terminal_is_the_commands_controlling_terminal(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        await _running(runtime, make_pod([sh("sleep 30")]))
        spec = runtime.exec_spec("uid-1", "main", ["sh", "-c", "tty; read line; stty size"])
        process = await execution.start(spec, stdin=True, tty=True)
        process.resize(100, 30)
        await process.write(b"go\n")  # after the resize
        out, _, code = await _output(process)
        assert re.search(rb"^/dev/pts/\d+\r$", out, re.M) and out.endswith(b"30 100\r\n") and code == 0, out

    with_runtime(tmp_path, body)


@pytest.mark.skipif(os.geteuid() != 0, reason="cgroup limits need a delegated cgroup (root here)")
def test_exec_joins_the_containers_memory_cgroup(tmp_path: Path) -> None:
    guard = probe_memory_guard()
    if not guard.mechanism.startswith("cgroup"):
        pytest.skip(f"memory guard is {guard.mechanism}")

    async def body(runtime: ProcessRuntime) -> None:
        limited = sh("sleep 30", resources={"limits": {"memory": "64Mi"}})
        await _running(runtime, make_pod([limited]))
        spec = runtime.exec_spec("uid-1", "main", ["cat", "/proc/self/cgroup"])
        out, _, _ = await _output(await execution.start(spec, stdin=False, tty=False))
        main_pid = next(r.pid for r in runtime._running.values() if r.pid)
        assert out == Path(f"/proc/{main_pid}/cgroup").read_bytes()

    with_runtime(tmp_path, body, memory_guard=guard)


def test_exec_into_a_pod_of_a_joined_node_is_refused_saying_why() -> None:
    logs = AgentLogs(remote=RemoteLogs(lambda name: None))
    pod = make_pod([sh("sleep 30")], nodeName="far-away")
    options = ExecOptions("main", ("true",), stdout=True)
    with pytest.raises(UpgradeFailed, match=r"^exec is not supported for pods on node far-away: kjobs serves exec"):
        asyncio.run(logs.start_exec(pod, options))
    with pytest.raises(UpgradeFailed, match=r'^container not found \("main"\)$'):
        asyncio.run(AgentLogs().start_exec(pod, options))
