"""`kubectl exec` against `kjobs up`, as a cluster's users run it: output and exit codes, stdin, the container flag,
the errors a cluster gives, `kubectl cp` from a pod, credentials, and the official Python client's
`kubernetes.stream.stream` (WebSocket v4), a terminal included."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.test_config_objects import _KLOG_LINE, Up, kubectl_on_up
from tests.e2e.test_python_clients import _until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


def _pod(name: str, *containers: dict[str, Any], **spec: Any) -> str:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"restartPolicy": "Never", "containers": list(containers), **spec},
    }
    return json.dumps(body)


def _sleeper(name: str, script: str = "sleep 600", **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox", "command": ["sh", "-c", script], **fields}


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("exec")) as kubectl:
        main = _sleeper(
            "main",
            "echo 42 > progress; sleep 600",
            env=[{"name": "GREETING", "value": "hello"}, {"name": "NAME_AGAIN", "value": "$(GREETING)-again"}],
        )
        kubectl.ok("apply", "-f", "-", stdin=_pod("worker", main))
        side = _sleeper("side", env=[{"name": "WHO", "value": "side"}])
        quick = _sleeper("quick", "true")
        kubectl.ok("apply", "-f", "-", stdin=_pod("pair", _sleeper("main"), side, quick))
        kubectl.ok("wait", "--for=condition=Ready", "pod/worker", "--timeout=60s", timeout=70)
        quick_ended = "jsonpath={.status.containerStatuses[?(@.name=='quick')].state.terminated.reason}"
        _until(lambda: kubectl.ok("get", "pod", "pair", "-o", quick_ended) or None, "pod pair's quick container to end")
        yield kubectl


def test_exec_runs_a_command_with_the_containers_environment_and_directory(up: Up) -> None:
    out = up.ok("exec", "worker", "--", "sh", "-c", 'echo "$GREETING $NAME_AGAIN $HOSTNAME"; cat progress')
    assert out.splitlines() == ["hello hello-again worker", "42"]
    code, out = up("exec", "worker", "--", "sh", "-c", "echo to-stderr >&2")
    assert (code, out) == (0, "to-stderr")


def test_exec_propagates_the_commands_exit_code(up: Up) -> None:
    code, out = up("exec", "worker", "--", "sh", "-c", "echo before; exit 3")
    assert code == 3
    assert out.splitlines() == ["before", "command terminated with exit code 3"]


def test_exec_with_stdin_passes_the_input_and_its_end(up: Up) -> None:
    out = up.ok("exec", "-i", "worker", "--", "sh", "-c", "tr a-z A-Z; echo done", stdin="hello\nworld\n")
    assert out.splitlines() == ["HELLO", "WORLD", "done"]


@pytest.mark.skipif(shutil.which("script") is None, reason="script (util-linux) gives kubectl a terminal")
def test_exec_it_gives_the_command_a_terminal(up: Up) -> None:
    env = {"HOME": str(up.home), "KUBECONFIG": str(up.config), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    # kubectl sends its terminal's size as the streams come up: the command sees it from its start, as on a cluster
    kubectl = (
        "stty rows 33 cols 111; kubectl exec -it worker -- stty size; kubectl exec -it worker -- sh -c 'tty; echo 42'"
    )
    proc = subprocess.run(
        ["script", "-qec", kubectl, "/dev/null"], capture_output=True, text=True, env=env, input="", timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # text mode reads the terminal's \r\n as \n; script echoes the end of its own input (^@) at some point, and
    # kubectl's own log lines (klog, on the same terminal) are not the command's output
    out = _KLOG_LINE.sub("", proc.stdout.replace("^@", ""))
    assert re.search(r"33 111\n/dev/pts/\d+\n42\n", out), proc.stdout


def test_exec_picks_the_named_container(up: Up) -> None:
    assert up.ok("exec", "pair", "-c", "side", "--", "sh", "-c", "echo $WHO") == "side"
    code, out = up("exec", "pair", "-c", "nope", "--", "true")
    assert code == 1
    assert out == "Error from server (BadRequest): container nope is not valid for pod pair"


def test_exec_errors_are_the_clusters(up: Up) -> None:
    code, out = up("exec", "missing", "--", "true")
    assert (code, out) == (1, 'Error from server (NotFound): pods "missing" not found')
    code, out = up("exec", "pair", "-c", "quick", "--", "true")
    refused = 'error: Internal error occurred: unable to upgrade connection: container not found ("quick")'
    assert (code, out) == (1, refused)
    code, out = up("exec", "worker", "--", "no-such-command")
    assert code == 1
    assert out.startswith("error: Internal error occurred: error executing command in container: failed to exec in")
    assert out.endswith('exec: "no-such-command": executable file not found in $PATH: unknown')
    unschedulable = _sleeper("main")
    up.ok("apply", "-f", "-", stdin=_pod("nowhere", unschedulable, nodeSelector={"kjobs.io/no-such-node": "x"}))
    code, out = up("exec", "nowhere", "--", "true")
    assert (code, out) == (1, "Error from server (BadRequest): pod nowhere does not have a host assigned")


def test_kubectl_cp_copies_a_file_out_of_a_pod(up: Up) -> None:
    out = up.ok("cp", "worker:progress", "copied.txt")
    copied = up.home / "copied.txt"
    assert copied.exists(), f"kubectl cp exited 0 without the file; it printed: {out!r}"
    assert copied.read_text() == "42\n"


def test_exec_requires_credentials(up: Up, tmp_path: Path) -> None:
    doc = yaml.safe_load(up.config.read_text())
    doc["users"][0]["user"] = {"token": "not-a-token-kjobs-issued"}
    stranger = tmp_path / "stranger.yaml"
    stranger.write_text(yaml.safe_dump(doc))
    code, out = Up(stranger, up.home)("exec", "worker", "--", "echo", "let me in")
    assert (code, out) == (1, "error: You must be logged in to the server (Unauthorized)")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="runAsUser needs root and setpriv")
def test_exec_runs_as_the_containers_user(up: Up) -> None:
    as_nobody = _sleeper("main", securityContext={"runAsUser": 65534, "runAsGroup": 65534})
    up.ok("apply", "-f", "-", stdin=_pod("nobody", as_nobody))
    up.ok("wait", "--for=condition=Ready", "pod/nobody", "--timeout=60s", timeout=70)
    assert up.ok("exec", "nobody", "--", "id", "-u") == "65534"


def test_the_python_clients_stream_runs_commands(up: Up) -> None:
    from kubernetes import client as k8s
    from kubernetes import config as k8s_config
    from kubernetes.client.rest import ApiException
    from kubernetes.stream import stream
    from kubernetes.stream.ws_client import ERROR_CHANNEL

    core = k8s.CoreV1Api(k8s_config.new_client_from_config(str(up.config)))
    exec_ = core.connect_get_namespaced_pod_exec
    script = ["sh", "-c", "echo out; echo err >&2; exit 4"]
    response = stream(exec_, "worker", "default", command=script, stderr=True, stdout=True, _preload_content=False)
    response.run_forever(timeout=30)
    assert (response.read_stdout(), response.read_stderr(), response.returncode) == ("out\n", "err\n", 4)
    assert stream(exec_, "worker", "default", command=["cat", "progress"], stdout=True, stderr=True) == "42\n"
    terminal = {"stdin": True, "stdout": True, "tty": True, "_preload_content": False}
    shell = stream(exec_, "worker", "default", command=["sh"], **terminal)
    shell.write_stdin("tty; exit 7\n")
    shell.run_forever(timeout=30)
    assert "/dev/pts/" in shell.read_stdout()
    assert shell.returncode == 7
    # the client offers v5 first: the kubelet's refusal comes on the error channel, as kube-apiserver sends it
    ended = stream(exec_, "pair", "default", command=["true"], container="quick", stdout=True, _preload_content=False)
    ended.run_forever(timeout=30)
    status = json.loads(ended.read_channel(ERROR_CHANNEL))
    assert (status["reason"], status["message"]) == (
        "InternalError",
        'Internal error occurred: unable to upgrade connection: container not found ("quick")',
    )
    with pytest.raises(ApiException) as refused:
        stream(exec_, "pair", "default", command=["true"], container="nope", stdout=True)
    assert refused.value.status == 0  # the websocket client's failed handshake: its text carries the Status
    assert "container nope is not valid for pod pair" in str(refused.value)
