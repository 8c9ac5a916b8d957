"""The plugin as pytest loads it (the `pytest11` entry point of the installed package) in a pytest run of its
own: function and session scope, and `--kjobs-kubeconfig` against `kjobs up` running the example tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import kjobs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "pytest"
KJOBS = [sys.executable, "-c", "from kjobs.cli import main; main()"]

SCOPED = """
import os
from pathlib import Path

JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "same"}, "spec": {"template": {"spec": {
    "restartPolicy": "Never", "containers": [{"name": "m", "image": "x", "command": ["true"]}]}}}}


def seen(cluster):
    with Path(os.environ["KJOBS_SEEN"]).open("a") as out:
        out.write(cluster.embedded.url + "\\n")


def test_one(kjobs_cluster):
    seen(kjobs_cluster)
    kjobs_cluster.apply(JOB)
    kjobs_cluster.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "kept", "finalizers": ["a.b/c"]},
        "spec": {"containers": [{"name": "m", "image": "x", "command": ["sleep", "1000"]}]}})
    kjobs_cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    kjobs_cluster.wait_for("job", "same", "Complete")


def test_two_sees_nothing_of_test_one(kjobs_cluster):
    seen(kjobs_cluster)
    assert kjobs_cluster.objects("job") == [] and kjobs_cluster.objects("pod", None) == []
    assert "team" not in [ns["metadata"]["name"] for ns in kjobs_cluster.objects("namespace")]
    kjobs_cluster.apply(JOB)
    kjobs_cluster.wait_for("job", "same", "Complete")


def test_three_disturbs_a_node(kjobs_cluster):
    seen(kjobs_cluster)
    kjobs_cluster.taint("kjobs-node", "example.com/broken", "yes")


def test_four_gets_a_whole_cluster(kjobs_cluster):
    seen(kjobs_cluster)
    assert not kjobs_cluster.get("node", "kjobs-node")["spec"].get("taints")
"""


def pytest_run(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize("scope", ["function", "session"])
def test_scope(tmp_path: Path, scope: str) -> None:
    (tmp_path / "test_scoped.py").write_text(SCOPED)
    seen = tmp_path / "seen"
    result = pytest_run(tmp_path, "--kjobs-scope", scope, "test_scoped.py", env={"KJOBS_SEEN": str(seen)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout
    urls = seen.read_text().split()
    if scope == "function":
        assert len(set(urls)) == 4
    else:  # one cluster, cleaned between tests, remade after the test that tainted its node
        assert urls[0] == urls[1] == urls[2] != urls[3]


def test_a_bad_scope_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "test_scoped.py").write_text(SCOPED)
    (tmp_path / "pytest.ini").write_text("[pytest]\nkjobs_scope = module\n")
    result = pytest_run(tmp_path, "test_scoped.py")
    assert result.returncode != 0
    assert "kjobs_scope must be one of function, session, not 'module'" in result.stdout + result.stderr


def test_a_missing_other_kubeconfig_is_a_usage_error_before_any_test(tmp_path: Path) -> None:
    (tmp_path / "test_scoped.py").write_text(SCOPED)
    result = pytest_run(tmp_path, "--kjobs-kubeconfig", str(tmp_path / "nowhere.yaml"), "test_scoped.py")
    assert result.returncode == 4  # pytest's usage error
    assert f"--kjobs-kubeconfig: {tmp_path / 'nowhere.yaml'} does not exist" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "passed" not in result.stdout


@pytest.mark.e2e
def test_the_example_passes_against_kjobs_up(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    up = subprocess.Popen(
        [
            *KJOBS,
            "up",
            "--port",
            "0",
            "--data-dir",
            str(tmp_path / "data"),
            "--kubeconfig",
            str(kubeconfig),
            "--backoff",
            "0.1",
            "--job-batch-period",
            "0.1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HOME": str(tmp_path / "home")},
    )
    try:
        assert up.stdout is not None
        assert up.stdout.readline().strip() == f"export KUBECONFIG={kubeconfig}"  # printed once it serves
        result = pytest_run(tmp_path, str(EXAMPLES), "--kjobs-kubeconfig", str(kubeconfig), "-rs")
        assert result.returncode == 0, result.stdout + result.stderr
        assert "3 passed, 2 skipped" in result.stdout
        assert "virtual time needs the in-process cluster" in result.stdout
    finally:
        up.send_signal(signal.SIGTERM)
        try:
            up.wait(10)
        except subprocess.TimeoutExpired:
            up.kill()
            up.wait()


TERMINATED = """
import time
from pathlib import Path


def test_runs_until_terminated(kjobs_cluster, tmp_path):
    pid_file = tmp_path / "pid"  # $$$$: the shell's $$ (Kubernetes reads $$ as an escaped $)
    kjobs_cluster.apply({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "long"}, "spec": {
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "m", "image": "x",
        "command": ["sh", "-c", f"echo $$$$ > {pid_file}.tmp; mv {pid_file}.tmp {pid_file}; exec sleep 1000"]}]}}}})
    kjobs_cluster.pod_of("long")
    deadline = time.monotonic() + 30
    while not pid_file.exists() and time.monotonic() < deadline:  # the container's write, a moment after it runs
        time.sleep(0.01)
    print("READY", pid_file.read_text().strip(), kjobs_cluster.embedded.workdir, flush=True)
    kjobs_cluster.wait_for("job", "long", "Complete", timeout=600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _run_until_its_pod_runs(tmp_path: Path, tmp: Path | None = None) -> tuple[subprocess.Popen[str], int, Path]:
    """A pytest run whose test waits on a running pod: the run, the pod's pid, the cluster's directory (its
    temporary directories under `tmp`, else tmp_path/tmp)."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "test_terminated.py").write_text(TERMINATED)
    scratch = tmp or tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # this kjobs, from any cwd; its temporary directories under tmp_path, where a killed run's stay
        # and its stdout a buffered pipe, as `pytest | tee` has it, whatever PYTHONUNBUFFERED this run has
        env={
            **{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},
            "PYTHONPATH": str(Path(kjobs.__file__).parents[1]),
            "TMPDIR": str(scratch),
        },
    )
    assert run.stdout is not None
    ready = next((line for line in run.stdout if line.startswith("READY")), "")
    if not ready:
        run.kill()
        run.wait()
        pytest.fail("the test never got its pod running")
    _, pid, workdir = ready.split()
    assert _alive(int(pid))
    return run, int(pid), Path(workdir)


def test_sigterm_stops_the_clusters_pods_and_ends_the_run_by_it(tmp_path: Path) -> None:
    run, pid, workdir = _run_until_its_pod_runs(tmp_path)
    try:
        run.send_signal(signal.SIGTERM)  # `timeout 600 pytest`, a CI job's end
        # before, the pod's node shim lived on, holding this pipe (its stderr) open: communicate timed out
        rest, _ = run.communicate(timeout=60)
        assert run.returncode == -signal.SIGTERM, rest  # ended by the signal, as without the plugin
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert "Terminated: signal 15 (SIGTERM): stopping the kjobs clusters" in rest
    assert not _alive(pid)  # before, the pod's process ran on, orphaned ...
    assert not workdir.exists()  # ... and the cluster's directory stayed in /tmp, as did the session's PKI
    assert [p.name for p in (tmp_path / "tmp").iterdir() if p.name.startswith("kjobs-")] == []


def test_a_killed_run_takes_its_pods_with_it(tmp_path: Path) -> None:
    run, pid, workdir = _run_until_its_pod_runs(tmp_path)
    run.kill()  # SIGKILL: no teardown runs; the node shims see their agent's pipe close without a goodbye
    run.communicate(timeout=60)  # EOF: the shims, which held the run's output pipe, have exited
    assert not _alive(pid)  # before, `sleep 1000` ran on, and the shim with it
    assert workdir.exists()  # nothing removes a killed run's files (here under tmp_path, for pytest to)


NEXT = """
def test_next(kjobs_cluster):
    assert kjobs_cluster.objects("job") == []
"""


def test_the_next_run_removes_what_a_killed_run_left_and_nothing_of_a_live_one(tmp_path: Path) -> None:
    live, _, live_workdir = _run_until_its_pod_runs(tmp_path / "live")
    try:
        killed, _, workdir = _run_until_its_pod_runs(tmp_path / "killed", tmp=tmp_path / "live" / "tmp")
        killed.kill()
        killed.communicate(timeout=60)
        left = sorted(p.name for p in (tmp_path / "live" / "tmp").iterdir())
        assert workdir.name in left and any(name.startswith("kjobs-pytest-") for name in left)
        (tmp_path / "test_next.py").write_text(NEXT)
        env = {"PYTHONPATH": str(Path(kjobs.__file__).parents[1]), "TMPDIR": str(tmp_path / "live" / "tmp")}
        result = pytest_run(tmp_path, "test_next.py", env=env)
        assert result.returncode == 0, result.stdout + result.stderr
        assert not workdir.exists()  # before, every SIGKILLed run's directories stayed
        assert live_workdir.exists()  # the live run's cluster and PKI are untouched
        kept = sorted(p.name for p in (tmp_path / "live" / "tmp").iterdir())
        assert kept == [name for name in left if f"-{killed.pid}-" not in name]
        assert [name for name in kept if name.startswith("kjobs-")] == sorted(
            [live_workdir.name, *(name for name in kept if name.startswith("kjobs-pytest-"))]
        )
    finally:
        live.kill()
        live.communicate(timeout=60)


STRICT = """
def test_a_job_under_strict_warnings(kjobs_cluster):
    container = {"name": "m", "image": "x", "command": ["true"]}
    kjobs_cluster.apply({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "strict"}, "spec": {
        "template": {"spec": {"restartPolicy": "Never", "containers": [container]}}}})
    kjobs_cluster.wait_for("job", "strict", "Complete")


def test_after():
    import gc
    gc.collect()  # what the last cluster left unclosed is found now, inside a test
"""


def test_a_cluster_leaves_nothing_unclosed_for_a_strict_run(tmp_path: Path) -> None:
    # projects run with `filterwarnings = error`: a ResourceWarning of kjobs' own would fail their tests
    (tmp_path / "test_strict.py").write_text(STRICT)
    env = {"PYTHONPATH": str(Path(kjobs.__file__).parents[1])}
    result = pytest_run(tmp_path, "-W", "error", "-W", "always::ResourceWarning", "test_strict.py", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ResourceWarning" not in result.stdout + result.stderr
