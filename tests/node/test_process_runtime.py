"""ProcessRuntime end to end: real processes, real signals, real memory limits (each test well under 2 s)."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.node.cgroups import RssWatchdog
from kjobs.node.logs import render
from kjobs.node.process_runtime import ProcessRuntime
from kjobs.node.runtime import PodHandle
from kjobs.node.supervisor import NotRunning
from tests.node.helpers import make_pod

pytestmark = pytest.mark.e2e
DEADLINE = 10.0


def sh(script: str, name: str = "main", **extra: object) -> Obj:
    return {"name": name, "image": "busybox:1.36", "command": ["sh", "-c", script], **extra}


def with_runtime(tmp_path: Path, body: Callable[[ProcessRuntime], Awaitable[None]], **kwargs: object) -> None:
    async def run() -> None:
        runtime = ProcessRuntime(
            root_dir=tmp_path,
            backoff_base=0.05,
            minimum_grace_seconds=0.0,
            **kwargs,  # type: ignore[arg-type]
        )
        try:
            await asyncio.wait_for(body(runtime), DEADLINE)
        finally:
            await runtime.shutdown()

    asyncio.run(run())


async def finish(runtime: ProcessRuntime, pod: Obj) -> Obj:
    handle = await runtime.run_pod(pod)
    return await handle.wait()


async def eventually(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE / 2
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def _log(runtime: ProcessRuntime) -> bytes:
    """The main container's first log so far, as `kubectl logs` shows it (none before the shim creates it)."""
    path = runtime.log_dir / "uid-1_main_0.log"
    return render(path.read_bytes()) if path.exists() else b""


def state(status: Obj, name: str = "main", *, init: bool = False) -> Obj:
    key = "initContainerStatuses" if init else "containerStatuses"
    return next(s for s in status[key] if s["name"] == name)


def test_exit_zero_completes(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        status = await finish(runtime, make_pod([sh("exit 0")]))
        assert status["phase"] == "Succeeded"
        terminated = state(status)["state"]["terminated"]
        assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
        assert terminated["containerID"].startswith("kjobs://")
        assert state(status)["image"] == "busybox:1.36"

    with_runtime(tmp_path, body)


def test_fallback_to_logs_on_error_ends_a_failed_containers_message_with_its_log(tmp_path: Path) -> None:
    """The kubelet's FallbackToLogsOnError: the last 80 lines of a failed container's log, at most 2,048 bytes of
    them; nothing for a success or for the default `File` policy (whose file a process cannot write here)."""
    fallback = {"terminationMessagePolicy": "FallbackToLogsOnError"}
    lines = "for i in $(seq 1 100); do echo line $i; done; echo boom >&2"
    wide = "for i in $(seq 1 90); do printf '%099d\\n' $i; done"

    async def body(runtime: ProcessRuntime) -> None:
        failed = await finish(runtime, make_pod([sh(f"{lines}; exit 3", **fallback)], uid="u1", name="p1"))
        message = state(failed)["state"]["terminated"]["message"]
        assert message == "".join(f"line {i}\n" for i in range(22, 101)) + "boom\n"
        capped = await finish(runtime, make_pod([sh(f"{wide}; exit 1", **fallback)], uid="u2", name="p2"))
        message = state(capped)["state"]["terminated"]["message"]
        assert len(message) == 2048 and message.endswith(f"{90:099d}\n")
        succeeded = await finish(runtime, make_pod([sh(f"{lines}; exit 0", **fallback)], uid="u3", name="p3"))
        assert "message" not in state(succeeded)["state"]["terminated"]
        by_file = await finish(runtime, make_pod([sh(f"{lines}; exit 3")], uid="u4", name="p4"))
        assert "message" not in state(by_file)["state"]["terminated"]

    with_runtime(tmp_path, body)


def test_exit_42_is_error(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        status = await finish(runtime, make_pod([sh("exit 42")]))
        assert status["phase"] == "Failed"
        terminated = state(status)["state"]["terminated"]
        assert (terminated["exitCode"], terminated["reason"], terminated.get("signal")) == (42, "Error", None)

    with_runtime(tmp_path, body)


def test_init_containers_run_in_order_in_shared_workdir(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        pod = make_pod(
            [sh("cat order > result")],
            init=[sh("echo one >> order", "first"), sh("sleep 0.05; echo two >> order", "second")],
        )
        status = await finish(runtime, pod)
        assert status["phase"] == "Succeeded"
        assert (runtime.pod_dir("uid-1") / "result").read_text() == "one\ntwo\n"
        assert [s["ready"] for s in status["initContainerStatuses"]] == [True, True]

    with_runtime(tmp_path, body)


def test_init_failure_fails_pod_and_skips_containers(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        pod = make_pod([sh("touch ran")], init=[sh("exit 3", "setup")])
        status = await finish(runtime, pod)
        assert status["phase"] == "Failed"
        assert state(status, "setup", init=True)["state"]["terminated"]["exitCode"] == 3
        assert state(status)["state"] == {"waiting": {"reason": "PodInitializing"}}
        assert not (runtime.pod_dir("uid-1") / "ran").exists()

    with_runtime(tmp_path, body)


def test_on_failure_restarts_with_back_off(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        script = 'echo x >> runs; n=$(wc -l < runs); echo "run $n"; [ "$n" -ge 3 ]'
        seen: list[Obj] = []
        runtime.on_status = lambda uid, status: seen.append(status)
        status = await finish(runtime, make_pod([sh(script)], policy="OnFailure"))
        assert status["phase"] == "Succeeded"
        main = state(status)
        assert main["restartCount"] == 2
        assert main["lastState"]["terminated"]["exitCode"] == 1
        waits = [state(s)["state"].get("waiting", {}) for s in seen]
        assert any(w.get("reason") == "CrashLoopBackOff" and "back-off 50ms" in w["message"] for w in waits)
        # Pending while the first container is created, as the kubelet reports it; never Pending again after.
        phases = [s["phase"] for s in seen]
        assert phases[0] == "Pending" and "Pending" not in phases[phases.index("Running") :]
        logs = b"".join([c async for c in runtime.logs("uid-1", "main")])
        previous = b"".join([c async for c in runtime.logs("uid-1", "main", previous=True)])
        assert (logs, previous) == (b"run 3\n", b"run 2\n")

    with_runtime(tmp_path, body)


def test_sigterm_handled_within_grace(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        handle = await runtime.run_pod(make_pod([sh("trap 'echo bye; exit 3' TERM; echo up; sleep 30 & wait")]))
        await eventually(lambda: _log(runtime) == b"up\n", "start")
        started = time.monotonic()
        await runtime.kill_pod(handle.uid, grace_seconds=5)
        status = await handle.wait()
        assert time.monotonic() - started < 2
        assert status["phase"] == "Failed"
        terminated = state(status)["state"]["terminated"]
        assert (terminated["exitCode"], terminated.get("signal")) == (3, None)
        assert b"".join([c async for c in runtime.logs("uid-1", "main")]) == b"up\nbye\n"

    with_runtime(tmp_path, body)


def test_sigkill_after_grace(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        handle = await runtime.run_pod(make_pod([sh("trap '' TERM; echo up; while :; do sleep 0.02; done")]))
        await eventually(lambda: _log(runtime) == b"up\n", "start")
        started = time.monotonic()
        await runtime.kill_pod(handle.uid, grace_seconds=0.3)
        status = await handle.wait()
        assert time.monotonic() - started >= 0.3
        terminated = state(status)["state"]["terminated"]
        assert (terminated["exitCode"], terminated["signal"], terminated["reason"]) == (137, 9, "Error")
        assert status["phase"] == "Failed"

    with_runtime(tmp_path, body)


def test_all_zero_exits_during_deletion_succeed(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        handle = await runtime.run_pod(make_pod([sh("trap 'exit 0' TERM; echo up; sleep 30 & wait")], policy="Always"))
        await eventually(lambda: _log(runtime) == b"up\n", "start")
        await runtime.kill_pod(handle.uid, grace_seconds=5)
        assert (await handle.wait())["phase"] == "Succeeded"

    with_runtime(tmp_path, body)


OOM_SCRIPT = "import time; b = bytearray(200 * 1024 * 1024); time.sleep(5)"


@pytest.mark.parametrize("guard", ["probed", "watchdog"])
def test_memory_limit_oom_killed(tmp_path: Path, guard: str) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        container = {
            "name": "main",
            "image": "python:3.11",
            "command": [sys.executable, "-c", OOM_SCRIPT],
            "resources": {"limits": {"memory": "50Mi"}},
        }
        status = await finish(runtime, make_pod([container]))
        terminated = state(status)["state"]["terminated"]
        assert (terminated["reason"], terminated["exitCode"], terminated["signal"]) == ("OOMKilled", 137, 9)
        assert status["phase"] == "Failed"

    kwargs = {"memory_guard": RssWatchdog(interval=0.01)} if guard == "watchdog" else {}
    with_runtime(tmp_path, body, **kwargs)


def test_sigkill_is_not_oom_without_the_counter(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        container = sh("kill -9 $$$$", resources={"limits": {"memory": "50Mi"}})
        terminated = state(await finish(runtime, make_pod([container])))["state"]["terminated"]
        assert (terminated["reason"], terminated["exitCode"]) == ("Error", 137)

    with_runtime(tmp_path, body)


def test_env_downward_api_and_working_dir(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        workdir = tmp_path / "custom"
        pod = make_pod(
            [
                {
                    "name": "main",
                    "image": "busybox",
                    "command": ["sh", "-c", 'echo "$JOB_COMPLETION_INDEX $(GREETING) $POD_NAME $(pwd)"'],
                    "workingDir": str(workdir),
                    "env": [
                        {
                            "name": "JOB_COMPLETION_INDEX",
                            "valueFrom": {
                                "fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}
                            },
                        },
                        {"name": "GREETING", "value": "hi-$(JOB_COMPLETION_INDEX)"},
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    ],
                }
            ]
        )
        pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] = "4"
        await finish(runtime, pod)
        output = b"".join([c async for c in runtime.logs("uid-1", "main")])
        assert output == f"4 hi-4 job-0-abcde {workdir}\n".encode()

    with_runtime(tmp_path, body)


def test_logs_follow_streams_while_running(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        handle = await runtime.run_pod(make_pod([sh("echo one; sleep 0.3; echo two 1>&2")]))
        await eventually(lambda: handle.phase == "Running", "running")
        chunks: list[tuple[bytes, bool]] = []
        async for chunk in runtime.logs(handle.uid, "main", follow=True):
            chunks.append((chunk, handle.terminal))
        assert b"".join(c for c, _ in chunks) == b"one\ntwo\n"
        assert chunks[0] == (b"one\n", False)
        tail = b"".join([c async for c in runtime.logs(handle.uid, "main", tail_lines=1)])
        assert tail == b"two\n"

    with_runtime(tmp_path, body)


def test_logs_before_start_is_400(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        handle = await runtime.run_pod(make_pod([sh("exit 0")], init=[sh("sleep 0.2", "init")]))
        with pytest.raises(ApiError) as error:
            runtime.logs(handle.uid, "main")
        assert error.value.message == 'container "main" in pod "job-0-abcde" is waiting to start: PodInitializing'
        await handle.wait()

    with_runtime(tmp_path, body)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_no_orphans_after_kill(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        handle = await runtime.run_pod(make_pod([sh("sleep 300 & echo $! > child.pid; wait")]))
        pid_file = runtime.pod_dir("uid-1") / "child.pid"
        await eventually(lambda: pid_file.exists() and pid_file.read_text().strip() != "", "child pid")
        child = int(pid_file.read_text())
        assert _alive(child)
        await runtime.kill_pod(handle.uid, grace_seconds=1)
        await handle.wait()
        await eventually(lambda: not _alive(child), "the background child to die")

    with_runtime(tmp_path, body)


def test_background_children_die_with_the_main_process(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        status = await finish(runtime, make_pod([sh("sleep 300 & echo $! > child.pid")]))
        assert status["phase"] == "Succeeded"
        child = int((runtime.pod_dir("uid-1") / "child.pid").read_text())
        await eventually(lambda: not _alive(child), "the background child to die")

    with_runtime(tmp_path, body)


@pytest.mark.parametrize(
    ("container", "fragment"),
    [
        pytest.param(
            {"name": "main", "image": "x", "command": ["no-such-binary-kjobs"]},
            'exec: "no-such-binary-kjobs": executable file not found in $PATH',
            id="missing-executable",
        ),
        pytest.param({"name": "main", "image": "busybox"}, 'entrypoint of image "busybox"', id="no-command"),
    ],
)
def test_start_errors(tmp_path: Path, container: Obj, fragment: str) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        status = await finish(runtime, make_pod([container]))
        terminated = state(status)["state"]["terminated"]
        assert (terminated["reason"], terminated["exitCode"]) == ("StartError", 128)
        assert fragment in terminated["message"]
        assert status["phase"] == "Failed"

    with_runtime(tmp_path, body)


def test_config_error_keeps_pod_pending_until_deleted(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        container = sh("exit 0", env=[{"name": "X", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "k"}}}])
        handle = await runtime.run_pod(make_pod([container]))
        waiting = state(handle.status)["state"]["waiting"]
        assert (waiting["reason"], waiting["message"]) == ("CreateContainerConfigError", 'secret "creds" not found')
        assert handle.phase == "Pending"
        await runtime.kill_pod(handle.uid, grace_seconds=30)
        assert (await handle.wait())["phase"] == "Failed"

    with_runtime(tmp_path, body)


def test_forget_removes_pod_files(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        handle: PodHandle = await runtime.run_pod(make_pod([sh("echo x")]))
        await handle.wait()
        assert runtime.pod_dir(handle.uid).exists()
        assert list(runtime.log_dir.iterdir())
        runtime.forget(handle.uid)
        assert not runtime.pod_dir(handle.uid).exists()
        assert not list(runtime.log_dir.iterdir())
        assert runtime.get(handle.uid) is None

    with_runtime(tmp_path, body)


def test_shutdown_with_forget_removes_every_pods_files_and_stops_the_shim(tmp_path: Path) -> None:
    async def run() -> None:
        runtime = ProcessRuntime(root_dir=tmp_path, backoff_base=0.05)
        done = await runtime.run_pod(make_pod([sh("echo done")], uid="u-done", name="done"))
        await done.wait()
        running = await runtime.run_pod(make_pod([sh("echo up; sleep 30")], uid="u-run", name="run"))
        await eventually(lambda: (runtime.log_dir / "u-run_main_0.log").exists(), "start")
        shims = runtime._spawner.processes()
        assert shims
        await asyncio.wait_for(runtime.shutdown(forget=True), DEADLINE)
        assert running.phase == "Failed"
        assert os.listdir(runtime.root_dir / "pods") == []
        assert list(runtime.log_dir.iterdir()) == []
        assert runtime.get("u-done") is None and runtime.get("u-run") is None
        assert all(shim.poll() is not None for shim in shims)  # the shims were waited for, not left behind

    asyncio.run(run())


def test_many_pods_concurrently(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        pods = [make_pod([sh(f"exit {i % 2}")], uid=f"u{i}", name=f"p{i}") for i in range(40)]
        handles = [await runtime.run_pod(p) for p in pods]
        statuses = await asyncio.gather(*(h.wait() for h in handles))
        assert [s["phase"] for s in statuses] == ["Succeeded", "Failed"] * 20
        assert os.listdir(runtime.root_dir / "pods")

    with_runtime(tmp_path, body)


def test_shutdown_kills_without_restarting(tmp_path: Path) -> None:
    async def run() -> None:
        runtime = ProcessRuntime(root_dir=tmp_path, backoff_base=0.05)
        handle = await runtime.run_pod(make_pod([sh("echo up; sleep 30")], policy="Always"))
        await eventually(lambda: _log(runtime) == b"up\n", "start")
        await asyncio.wait_for(runtime.shutdown(), DEADLINE)
        assert handle.terminal
        assert handle.phase == "Failed"
        assert len(runtime.records["uid-1"].attempts["main"]) == 1

    asyncio.run(run())


def test_relative_command_resolves_in_working_dir(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        writer = sh("printf '#!/bin/sh\\necho from-script\\n' > run.sh; chmod +x run.sh", "write")
        pod = make_pod([{"name": "main", "image": "x", "command": ["./run.sh"]}], init=[writer])
        status = await finish(runtime, pod)
        assert status["phase"] == "Succeeded"
        assert b"".join([c async for c in runtime.logs("uid-1", "main")]) == b"from-script\n"

    with_runtime(tmp_path, body)


def test_without_pidfd_a_waiting_thread_reaps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kjobs.node.process_runtime as module

    monkeypatch.setattr(module, "_HAVE_PIDFD", False)

    async def body(runtime: ProcessRuntime) -> None:
        assert state(await finish(runtime, make_pod([sh("exit 42")])))["state"]["terminated"]["exitCode"] == 42
        handle = await runtime.run_pod(make_pod([sh("sleep 30")], uid="u2"))
        await runtime.kill_pod(handle.uid, grace_seconds=0.3)  # no SIGTERM handler: SIGKILL at the grace end
        terminated = state(await handle.wait())["state"]["terminated"]
        assert (terminated["exitCode"], terminated["signal"]) == (137, 9)

    with_runtime(tmp_path, body)


def test_default_root_dir_prefers_runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kjobs.node.process_runtime import default_root_dir

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert default_root_dir() == tmp_path / "kjobs"
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "missing"))
    assert default_root_dir() != tmp_path / "missing" / "kjobs"


def _reported(statuses: list[Obj]) -> list[str]:
    """The main container's reported states, in order, repeats folded."""
    seen: list[str] = []
    for status in statuses:
        current = next(iter(state(status)["state"])) if status.get("containerStatuses") else "none"
        if not seen or seen[-1] != current:
            seen.append(current)
    return seen


def test_a_container_that_ends_within_the_start_report_delay_is_reported_once_ended(tmp_path: Path) -> None:
    statuses: list[Obj] = []

    async def body(runtime: ProcessRuntime) -> None:
        status = await finish(runtime, make_pod([sh("exit 0")]))
        assert status["phase"] == "Succeeded"
        assert "running" not in _reported(statuses)  # like a start and an end within one PLEG relist
        assert _reported(statuses)[-1] == "terminated"

    with_runtime(tmp_path, body, start_report_delay=5.0, on_status=lambda _uid, s: statuses.append(s))


def test_a_container_still_running_after_the_start_report_delay_reads_running(tmp_path: Path) -> None:
    statuses: list[Obj] = []

    async def body(runtime: ProcessRuntime) -> None:
        handle = await runtime.run_pod(make_pod([sh("sleep 30")]))
        await eventually(lambda: "running" in _reported(statuses), "the Running report")
        assert _reported(statuses)[-2:] == ["waiting", "running"]
        await runtime.kill_pod(handle.uid, grace_seconds=0)
        await handle.wait()

    with_runtime(tmp_path, body, start_report_delay=0.05, on_status=lambda _uid, s: statuses.append(s))


def test_fail_ends_a_running_container_with_the_given_exit_code(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        handle = await runtime.run_pod(make_pod([sh("sleep 30")]))
        await eventually(lambda: "running" in state(handle.status)["state"], "the container to run")
        runtime.fail("uid-1", "main", 42)
        status = await handle.wait()
        terminated = state(status)["state"]["terminated"]
        assert (status["phase"], terminated["exitCode"], terminated["reason"]) == ("Failed", 42, "Error")
        with pytest.raises(NotRunning):
            runtime.fail("uid-1", "main", 1)

    with_runtime(tmp_path, body)
