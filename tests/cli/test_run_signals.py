"""No pod process outlives `kjobs run`, whatever ends it (src/kjobs/run.py, docs/orphans.md).

Before: SIGHUP (the terminal closed) killed the run with its pods and both shims left running for good, SIGKILL
(an OOM kill, a CI runner's timeout) the same, and a closed output pipe (`kjobs run job.yaml | head -1`) was
noticed only at the next line written, then ended the run with status 1, the status of a failed Job. Each pod
here writes a file named for its process group (its shell's pid, the container's session leader) and sleeps in
two processes, one in the background: "nothing left" means no live process in any of those groups and no live
shim of the run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

pytestmark = pytest.mark.e2e

PODS = 3
DEADLINE = 60.0


def _job(tmp_path: Path) -> tuple[Path, Path]:
    marks = tmp_path / "marks"
    marks.mkdir()
    job = tmp_path / "sleepers.yaml"
    command = f"echo > {marks}/$$$$; sleep 300 & sleep 301; wait"  # $$$$: the shell's $$ (`$$` escapes `$`)
    job.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: sleepers}\n"
        f"spec:\n  parallelism: {PODS}\n  completions: {PODS}\n  template:\n    spec:\n"
        "      restartPolicy: Never\n"
        f"      containers: [{{name: main, image: busybox, command: [sh, -c, '{command}']}}]\n"
    )
    return job, marks


def _stat(pid: int | str) -> list[str] | None:
    """/proc/<pid>/stat's fields after the command name (state first), or None for a process gone or a zombie."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()
    return None if fields[0] in ("Z", "X") else fields


def _members(groups: set[int]) -> list[int]:
    """Live processes in any of the process groups `groups`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(entry)) is not None and int(fields[2]) in groups:
            found.append(int(entry))
    return found


def _shims_of(pid: int) -> list[int]:
    """The live shim processes `pid` started (its children running `shim.py`)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(entry)) is not None and int(fields[1]) == pid:
            try:
                if b"shim.py" in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


def _until(condition: Callable[[], object], what: str, proc: subprocess.Popen[Any] | None = None) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"kjobs run exited ({proc.returncode}) before {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"not within {DEADLINE:.0f} s: {what}")
        time.sleep(0.05)


def _env(tmp_path: Path) -> dict[str, str]:
    """The node's files in a directory of their own (hidden from its pods, which write their marks beside it)."""
    (tmp_path / "runtime").mkdir(exist_ok=True)
    return dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path / "runtime"))


@pytest.fixture
def running() -> Iterator[list[subprocess.Popen[bytes]]]:
    """The runs a test starts: stopped (SIGTERM, so that they stop their pods) if a failed test left them."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=DEADLINE)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _start(
    tmp_path: Path, stdout: int | IO[Any], running: list[subprocess.Popen[bytes]]
) -> tuple[subprocess.Popen[bytes], set[int], list[int], Path]:
    """`kjobs run` of the sleepers, once all its pods run: the process, the pods' groups, its shims."""
    job, marks = _job(tmp_path)
    errors = tmp_path / "stderr"
    with errors.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kjobs", "run", str(job), "--plain"], stdout=stdout, stderr=err, env=_env(tmp_path)
        )
    running.append(proc)
    _until(lambda: len(os.listdir(marks)) == PODS, f"{PODS} pods run", proc)
    groups = {int(name) for name in os.listdir(marks)}
    shims = _shims_of(proc.pid)
    assert shims, "no shim found"
    return proc, groups, shims, errors


def _assert_nothing_left(groups: set[int], shims: list[int]) -> None:
    _until(lambda: not _members(groups), f"the pods' processes end (left: {_members(groups)})")
    _until(lambda: all(_stat(pid) is None for pid in shims), "the shims exit")


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGHUP, 129), (signal.SIGTERM, 143)], ids=["SIGHUP", "SIGTERM"])
def test_a_stop_signal_stops_the_pods_and_exits_128_plus_its_number(
    tmp_path: Path, signum: signal.Signals, status: int, running: list[subprocess.Popen[bytes]]
) -> None:
    proc, groups, shims, errors = _start(tmp_path, subprocess.DEVNULL, running)
    proc.send_signal(signum)
    assert proc.wait(timeout=DEADLINE) == status, errors.read_text()
    assert "Traceback" not in errors.read_text()
    _assert_nothing_left(groups, shims)


def _node_files(tmp_path: Path) -> list[str]:
    """The files and directories in the node's pod, log and journal directories (`default_root_dir`)."""
    node = tmp_path / "runtime" / "kjobs" / "kjobs-node"
    return sorted(f"{part}/{name}" for part in ("pods", "logs", "journal") for name in os.listdir(node / part))


def test_sigkill_of_the_run_leaves_no_pod_running(tmp_path: Path, running: list[subprocess.Popen[bytes]]) -> None:
    """Killed outright, the run stops nothing itself: its shims see its end (their request pipe closes without a
    goodbye) and kill their containers' groups, since nothing could adopt them. They also remove the pods'
    scratch directories, logs and their own journals, as the run would have at a clean stop: before, each killed
    run left them in the node's directory (in RAM, under /dev/shm)."""
    proc, groups, shims, _ = _start(tmp_path, subprocess.DEVNULL, running)
    assert len([name for name in _node_files(tmp_path) if name.startswith("pods/")]) == PODS
    proc.kill()
    assert proc.wait(timeout=DEADLINE) == -signal.SIGKILL
    _assert_nothing_left(groups, shims)
    assert _node_files(tmp_path) == []


def test_sigkill_leaves_no_directory_of_a_pod_whose_containers_never_started(
    tmp_path: Path, running: list[subprocess.Popen[bytes]]
) -> None:
    """A pod admitted but waiting for a volume (a ConfigMap the manifest lacks: `FailedMount`, ContainerCreating)
    has its scratch directory and no container: the run's shims are told of it when it is made, so they remove
    it too when the run is killed. Before, it was left (docs/orphans.md)."""
    job = tmp_path / "waiting.yaml"
    job.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: waiting}\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n"
        "      volumes: [{name: cfg, configMap: {name: absent}}]\n"
        "      containers: [{name: main, image: busybox, command: ['true'],\n"
        "                    volumeMounts: [{name: cfg, mountPath: /cfg}]}]\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "kjobs", "run", str(job), "--plain"],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "stderr").open("wb"),
        env=_env(tmp_path),
    )
    running.append(proc)
    node = tmp_path / "runtime" / "kjobs" / "kjobs-node"
    _until(lambda: (node / "pods").is_dir() and os.listdir(node / "pods"), "the pod's directory is made", proc)
    shims = _shims_of(proc.pid)
    proc.kill()
    assert proc.wait(timeout=DEADLINE) == -signal.SIGKILL
    _until(lambda: all(_stat(pid) is None for pid in shims), "the shims exit")
    assert _node_files(tmp_path) == []


def test_a_closed_output_pipe_stops_the_run_at_once_with_status_141(
    tmp_path: Path, running: list[subprocess.Popen[bytes]]
) -> None:
    """The reader goes away while the pods sleep and nothing is being written: the run notices at once (not at its
    next line, minutes later), stops its pods and exits 141 (a filter's status after SIGPIPE), silently."""
    proc, groups, shims, errors = _start(tmp_path, subprocess.PIPE, running)
    assert proc.stdout is not None
    proc.stdout.close()
    assert proc.wait(timeout=DEADLINE) == 141, errors.read_text()
    assert errors.read_text() == ""
    _assert_nothing_left(groups, shims)


def test_head_1_ends_the_run_with_status_141_and_no_traceback(tmp_path: Path) -> None:
    """`kjobs run job.yaml | head -1`: the first line is printed, then the run stops (exit 141, not 1: the Job did
    not fail), with no traceback and no pod left."""
    job, marks = _job(tmp_path)
    env = _env(tmp_path)
    script = f'"{sys.executable}" -m kjobs run "{job}" --plain | head -1; echo "status ${{PIPESTATUS[0]}}"'
    # its own session, so that a run left behind by a failure is stopped with the shell
    shell = subprocess.Popen(
        ["bash", "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = shell.communicate(timeout=DEADLINE)
    finally:
        if shell.poll() is None:
            os.killpg(shell.pid, signal.SIGTERM)
            shell.communicate()
    assert out.splitlines()[0].startswith("pod sleepers-"), out
    assert out.splitlines()[-1] == "status 141", out + err
    assert err == ""
    groups = {int(name) for name in os.listdir(marks)}  # the pods that had started by then, if any
    _until(lambda: not _members(groups), "the pods' processes end")


def test_containers_start_with_default_dispositions_whatever_kjobs_inherited(tmp_path: Path) -> None:
    """A container starts as a runtime starts it: no signal ignored. Before, what was ignored above kjobs (here
    SIGQUIT and SIGUSR2, as a background job's SIGQUIT or `nohup`'s SIGHUP) was ignored in every container."""
    job = tmp_path / "sigs.yaml"
    job.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: sigs}\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n"
        "      containers: [{name: c, image: busybox, command: [sh, -c, 'grep SigIgn /proc/self/status']}]\n"
    )

    def ignore() -> None:
        signal.signal(signal.SIGQUIT, signal.SIG_IGN)
        signal.signal(signal.SIGUSR2, signal.SIG_IGN)

    done = subprocess.run(
        [sys.executable, "-m", "kjobs", "run", str(job), "--plain", "--logs"],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        preexec_fn=ignore,  # dispositions for the child only
    )
    line = next(x for x in done.stdout.splitlines() if "SigIgn:" in x)
    ignored = int(line.split()[-1], 16) & ~(3 << 31)  # bits 32 and 33: glibc's own signals, not resettable
    assert ignored & (1 << (signal.SIGQUIT - 1) | 1 << (signal.SIGUSR2 - 1)) == 0, line
