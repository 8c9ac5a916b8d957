"""What a kubectl user tried on `kjobs up` beyond the acceptance script, and found different from a cluster
(docs/kubectl-trial.md): each test is the command as a user types it and what a cluster prints."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_config_objects import Up, kubectl_on_up
from tests.e2e.test_python_clients import _until
from tests.server.test_up import _up
from tests.support import free_port

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("kubectl-trial")) as kubectl:
        yield kubectl


def test_a_container_that_cannot_start_has_a_failed_event_not_started(up: Up) -> None:
    # `kubectl run web --image=nginx`: no command, and kjobs runs no image's entrypoint, so every start fails
    # (StartError). The kubelet records Created then Warning Failed "Error: <why>" for such a start, never
    # Started; kjobs said "Started container web" once the container waited in CrashLoopBackOff.
    assert up.ok("run", "web", "--image=nginx") == "pod/web created"
    up.ok(
        "wait",
        "--for=jsonpath={.status.containerStatuses[0].state.waiting.reason}=CrashLoopBackOff",
        "pod/web",
        "--timeout=60s",
    )
    why = up.ok("get", "pod", "web", "-o", "jsonpath={.status.containerStatuses[0].lastState.terminated.message}")
    assert why.startswith("no command specified")

    def reasons() -> list[str] | None:
        columns = "-o=custom-columns=TYPE:.type,REASON:.reason,MESSAGE:.message"
        rows = up.ok("get", "events", "--field-selector", "involvedObject.name=web", columns, "--no-headers")
        found = [" ".join(row.split(None, 2)) for row in rows.splitlines()]
        return found if f"Warning Failed Error: {why}" in found else None

    found = _until(reasons, "the Failed event")
    assert "Normal Created Created container: web" in found
    assert not [row for row in found if " Started " in row]
    up.ok("delete", "pod", "web", "--wait=false")


def test_server_side_apply_takes_over_a_client_side_applied_job(up: Up) -> None:
    # `kubectl apply --server-side` after `kubectl apply` moves the client-side apply's fields to its own manager
    # and applies again. kjobs had the creator own the selector and pod template labels the Job strategy
    # generates, so that apply dropped them: "Warning: failed to re-apply configuration ..." and every later
    # server-side apply was refused as Invalid (spec.template.metadata.labels[controller-uid]: Required value).
    manifest = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrated\nspec:\n  backoffLimit: 2\n  template:\n"
        "    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n        image: busybox\n"
        "        command: [sleep, '30']\n"
    )
    assert up.ok("apply", "-f", "-", stdin=manifest) == "job.batch/migrated created"
    for _ in range(2):
        assert up.ok("apply", "--server-side", "-f", "-", stdin=manifest) == "job.batch/migrated serverside-applied"
    changed = manifest.replace("backoffLimit: 2", "backoffLimit: 3")
    assert up.ok("apply", "--server-side", "-f", "-", stdin=changed) == "job.batch/migrated serverside-applied"
    assert up.ok("get", "job", "migrated", "-o", "jsonpath={.spec.backoffLimit}") == "3"
    up.ok("delete", "job", "migrated", "--wait=false")


def test_kubectl_run_i_rm_streams_the_output_of_a_running_container(up: Up, tmp_path: Path) -> None:
    # `kubectl run -i --rm` attaches to the container (pods/attach) and prints what it writes from then on; kjobs
    # served no pods/attach (404), so kubectl fell back to the log as it was at that moment and printed nothing
    # written later. The container ticks until the test has seen a tick (the attach streams), then ends.
    gate = tmp_path / "gate"
    script = f"while [ ! -e {gate} ]; do echo tick; sleep 0.1; done; echo done; echo oops >&2; exit 3"
    args = ["kubectl", "run", "attached", "-i", "--rm", "--restart=Never", "--image=busybox", "--", "sh", "-c", script]
    env = {"HOME": str(up.home), "KUBECONFIG": str(up.config), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [
        threading.Thread(target=lambda: out.extend(iter(proc.stdout.readline, b"")), daemon=True),  # type: ignore[union-attr]
        threading.Thread(target=lambda: err.extend(iter(proc.stderr.readline, b"")), daemon=True),  # type: ignore[union-attr]
    ]
    for reader in readers:
        reader.start()
    try:
        _until(lambda: True if b"tick\n" in out else None, "a tick streamed by the attach", timeout=60)
        gate.touch()
        assert proc.wait(60) == 3  # kubectl run exits with the container's code
    finally:
        gate.touch()
        if proc.poll() is None:
            proc.kill()
    for reader in readers:
        reader.join(10)
    done = out.index(b"done\n")
    # A kjobs container's stdout and stderr are one pipe (kjobs.node.shim): both reach kubectl's stdout.
    assert set(out[:done]) == {b"tick\n"} and out[done + 1 :] == [b"oops\n", b'pod "attached" deleted\n']
    assert "couldn't attach" not in b"".join(err).decode()
    code, gone = up("get", "pod", "attached")
    assert code == 1 and 'pods "attached" not found' in gone


def _up_args(tmp: Path, config: Path) -> tuple[str, ...]:
    data = ("--data-dir", str(tmp / "data"), "--kubeconfig", str(config), "--job-batch-period", "0.1")
    return ("--port", str(free_port()), *data)


def test_logs_of_a_pod_that_ended_before_kjobs_up_restarted(tmp_path: Path) -> None:
    # A kubelet that restarts still serves its exited containers' logs; kjobs said `waiting to start:
    # ContainerCreating` for a Completed pod once `kjobs up` had stopped and started again, and kept its files.
    config, home = tmp_path / "kc.yaml", tmp_path / "kubectl-home"
    home.mkdir()
    kubectl = Up(config, home)
    with _up(tmp_path, *_up_args(tmp_path, config)) as (proc, line, _elapsed):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        kubectl.ok("create", "job", "said", "--image=busybox", "--", "sh", "-c", "echo kept across restarts")
        kubectl.ok("wait", "--for=condition=Complete", "job/said", "--timeout=60s")
        pod, uid = kubectl.ok(
            "get", "pods", "-l", "job-name=said", "-o", "jsonpath={.items[0].metadata.name} {.items[0].metadata.uid}"
        ).split()
    logs = tmp_path / "data" / "nodes" / "kjobs-node" / "logs"
    assert [p.name for p in logs.glob(f"{uid}_*")] == [f"{uid}_said_0.log"]

    with _up(tmp_path, *_up_args(tmp_path, config)) as (proc, line, _elapsed):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        assert kubectl.ok("logs", "job/said") == "kept across restarts"
        assert kubectl.ok("logs", pod, "--timestamps").endswith("Z kept across restarts")
        assert kubectl("logs", pod, "--previous") == (
            1,
            f'Error from server (BadRequest): previous terminated container "said" in pod "{pod}" not found',
        )
        kubectl.ok("delete", "job", "said", "--cascade=foreground")
        # Its log goes with the pod, as the kubelet's garbage collection removes a deleted pod's logs.
        _until(lambda: True if not list(logs.glob(f"{uid}_*")) else None, "the deleted pod's log file removed")
