"""ConfigMaps and Secrets on `kjobs up`, as a cluster's users handle them: the real kubectl (create from
literals and files, get, describe, apply, patch, delete), the official `kubernetes` client and lightkube, and a
Job whose pods read their environment from them, also one that waits for a ConfigMap created after it, and a
restarted container that reads its ConfigMap again."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.test_python_clients import _until
from tests.server.test_up import _up
from tests.support import free_port

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


_KLOG_LINE = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [\w.-]+:\d+\] .*\n", re.MULTILINE)
"""A line kubectl's own client logs (klog). kubectl up to 1.32 reads an exec's WebSocket before it has made its
streams and logs `Unknown stream id 1, discarding message` for the server's first (empty) message, against a
cluster too (client-go's tools/remotecommand/websocket.go waits for its streams since): noise, not output."""


@dataclass
class Up:
    """One `kjobs up` and a kubectl with a private HOME pointed at it."""

    config: Path
    home: Path

    def __call__(self, *args: str, stdin: str | None = None, timeout: float = 60) -> tuple[int, str]:
        env = {"HOME": str(self.home), "KUBECONFIG": str(self.config), "PATH": "/usr/local/bin:/usr/bin:/bin"}
        proc = subprocess.run(
            ["kubectl", *args], capture_output=True, text=True, env=env, input=stdin, timeout=timeout, cwd=self.home
        )
        return proc.returncode, _KLOG_LINE.sub("", proc.stdout + proc.stderr).rstrip()

    def ok(self, *args: str, stdin: str | None = None, timeout: float = 60) -> str:
        code, out = self(*args, stdin=stdin, timeout=timeout)
        assert code == 0, out
        return out


@contextmanager
def kubectl_on_up(tmp: Path) -> Iterator[Up]:
    """A `kjobs up` (back-off 1 s) with its files in `tmp`, and a kubectl pointed at it."""
    config = tmp / "kc.yaml"
    args = ("--port", str(free_port()), "--data-dir", str(tmp / "data"), "--kubeconfig", str(config), "--backoff", "1")
    with _up(tmp, *args, "--job-batch-period", "0.1") as (proc, line, _elapsed):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        home = tmp / "kubectl-home"
        home.mkdir()
        yield Up(config, home)


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("config-objects")) as kubectl:
        yield kubectl


def _columns(table: str) -> list[list[str]]:
    return [re.split(r"\s{2,}", line.strip()) for line in table.splitlines()]


def test_kubectl_creates_gets_describes_patches_and_deletes_config_maps(up: Up) -> None:
    settings = up.home / "settings.txt"
    settings.write_text("level=3\n")
    out = up.ok("create", "configmap", "kc-app", "--from-literal=MODE=fast", f"--from-file={settings}")
    assert out == "configmap/kc-app created"
    rows = _columns(up.ok("get", "cm", "kc-app"))
    assert rows[0] == ["NAME", "DATA", "AGE"]
    assert rows[1][:2] == ["kc-app", "2"]
    described = up.ok("describe", "configmap", "kc-app")
    assert re.search(r"^Name:\s+kc-app$", described, re.M)
    assert "MODE:\n----\nfast" in described
    assert "settings.txt:\n----\nlevel=3" in described
    assert up.ok("patch", "cm", "kc-app", "-p", '{"data":{"MODE":"slow"}}') == "configmap/kc-app patched"
    assert up.ok("get", "cm", "kc-app", "-o", "jsonpath={.data.MODE}") == "slow"
    assert up.ok("delete", "cm", "kc-app") == 'configmap "kc-app" deleted'
    code, out = up("get", "cm", "kc-app")
    assert code == 1 and 'configmaps "kc-app" not found' in out


def test_kubectl_applies_a_config_map_manifest(up: Up) -> None:
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kc-applied\ndata:\n  A: '1'\n"
    assert up.ok("apply", "-f", "-", stdin=manifest) == "configmap/kc-applied created"
    assert up.ok("apply", "-f", "-", stdin=manifest) == "configmap/kc-applied unchanged"
    assert up.ok("apply", "-f", "-", stdin=manifest.replace("'1'", "'2'")) == "configmap/kc-applied configured"
    assert up.ok("get", "configmap", "kc-applied", "-o", "jsonpath={.data.A}") == "2"
    frozen = manifest.replace("kc-applied", "kc-frozen") + "immutable: true\n"
    assert up.ok("apply", "--server-side", "-f", "-", stdin=frozen) == "configmap/kc-frozen serverside-applied"
    code, out = up("apply", "--server-side", "-f", "-", stdin=frozen.replace("'1'", "'9'"))
    assert code == 1
    assert 'ConfigMap "kc-frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set' in out


def test_kubectl_creates_and_describes_secrets(up: Up) -> None:
    assert up.ok("create", "secret", "generic", "kc-creds", "--from-literal=token=s3cr3t") == (
        "secret/kc-creds created"
    )
    rows = _columns(up.ok("get", "secret", "kc-creds"))
    assert rows[0] == ["NAME", "TYPE", "DATA", "AGE"]
    assert rows[1][:3] == ["kc-creds", "Opaque", "1"]
    described = up.ok("describe", "secret", "kc-creds")
    assert re.search(r"^Type:\s+Opaque$", described, re.M)
    assert re.search(r"^token:\s+6 bytes$", described, re.M)
    assert up.ok("get", "secret", "kc-creds", "-o", "jsonpath={.data.token}") == base64.b64encode(b"s3cr3t").decode()
    registry = ("--docker-server=registry.example", "--docker-username=u", "--docker-password=p")
    assert up.ok("create", "secret", "docker-registry", "kc-registry", *registry) == "secret/kc-registry created"
    rows = _columns(up.ok("get", "secret", "kc-registry", "--no-headers"))
    assert rows[0][:3] == ["kc-registry", "kubernetes.io/dockerconfigjson", "1"]
    assert up.ok("delete", "secret", "kc-creds") == 'secret "kc-creds" deleted'


def test_a_job_reads_its_environment_from_a_config_map_and_a_secret(up: Up) -> None:
    out = up.ok("apply", "-f", str(EXAMPLES / "settings-from-configmap.yaml"))
    assert out.splitlines() == [
        "configmap/app-settings created",
        "secret/app-credentials created",
        "job.batch/settings-from-configmap created",
    ]
    up.ok("wait", "--for=condition=complete", "job/settings-from-configmap", "--timeout=60s", timeout=70)
    assert "mode=fast items=3 token-length=12" in up.ok("logs", "job/settings-from-configmap")


def test_a_pod_waits_for_a_missing_config_map_then_runs(up: Up) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "kc-waits"},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "busybox",
                            "command": ["sh", "-c", 'echo "late=$LATE"'],
                            "env": [
                                {"name": "LATE", "valueFrom": {"configMapKeyRef": {"name": "kc-late", "key": "v"}}}
                            ],
                        }
                    ],
                }
            },
        },
    }
    up.ok("create", "-f", "-", stdin=json.dumps(job))

    def waiting() -> str | None:
        code, out = up("get", "pods", "-l", "job-name=kc-waits", "--no-headers")
        return out if code == 0 and "CreateContainerConfigError" in out else None

    _until(waiting, "the pod to wait with CreateContainerConfigError", timeout=40)
    pod = up.ok("get", "pods", "-l", "job-name=kc-waits", "-o", "jsonpath={.items[0].metadata.name}")
    state = up.ok("get", "pod", pod, "-o", "jsonpath={.status.phase} {.status.containerStatuses[0].state.waiting}")
    assert state.startswith("Pending ")
    assert json.loads(state.split(" ", 1)[1]) == {
        "reason": "CreateContainerConfigError",
        "message": 'configmap "kc-late" not found',
    }
    selector = f"involvedObject.name={pod},reason=Failed"

    def failed_events() -> list[dict[str, object]] | None:
        # the node records its Events in the background: the waiting status can be stored a moment before
        return json.loads(up.ok("get", "events", "--field-selector", selector, "-o", "json"))["items"] or None

    [event] = _until(failed_events, "the Failed event", timeout=20)
    assert (event["type"], event["message"]) == ("Warning", 'Error: configmap "kc-late" not found')
    up.ok("create", "configmap", "kc-late", "--from-literal=v=now")
    up.ok("wait", "--for=condition=complete", "job/kc-waits", "--timeout=40s", timeout=50)
    assert up.ok("logs", "job/kc-waits") == "late=now"


def test_a_restarted_container_reads_the_config_map_again(up: Up) -> None:
    """The first two attempts print the old value and fail; the ConfigMap is deleted before the next restart,
    which waits with CreateContainerConfigError, then created again with a new value, which the restart prints."""
    up.ok("create", "configmap", "kc-mode", "--from-literal=MODE=old")
    script = 'echo "mode=$MODE"; [ "$MODE" = new ]'
    env = [{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "kc-mode", "key": "MODE"}}}]
    container = {"name": "main", "image": "busybox", "command": ["sh", "-c", script], "env": env}
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "kc-restarts"},
        "spec": {"template": {"spec": {"restartPolicy": "OnFailure", "containers": [container]}}},
    }
    up.ok("create", "-f", "-", stdin=json.dumps(job))

    def backing_off() -> str | None:  # restarted once at once, failed again: the next restart is 10 s away
        code, out = up("get", "pods", "-l", "job-name=kc-restarts", "-o", "jsonpath={.items[0].metadata.name}")
        if code != 0 or not out:
            return None
        code, reason = up("get", "pod", out, "-o", "jsonpath={.status.containerStatuses[0].state.waiting.reason}")
        return out if code == 0 and reason == "CrashLoopBackOff" else None

    pod = _until(backing_off, "the container to back off", timeout=30)
    up.ok("delete", "configmap", "kc-mode")
    assert up.ok("logs", pod) == "mode=old"

    def config_error() -> str | None:
        code, out = up("get", "pod", pod, "--no-headers")
        return out if code == 0 and "CreateContainerConfigError" in out else None

    row = _columns(_until(config_error, "the restart to wait with CreateContainerConfigError", timeout=40))[0]
    assert row[:3] == [pod, "0/1", "CreateContainerConfigError"]  # NAME READY STATUS
    assert row[3].startswith("1 (")  # RESTARTS: no container was created for the failed restart
    status = json.loads(up.ok("get", "pod", pod, "-o", "jsonpath={.status.containerStatuses[0]}"))
    assert status["state"] == {
        "waiting": {"reason": "CreateContainerConfigError", "message": 'configmap "kc-mode" not found'}
    }
    assert (status["restartCount"], status["lastState"]["terminated"]["exitCode"]) == (1, 1)
    up.ok("create", "configmap", "kc-mode", "--from-literal=MODE=new")
    up.ok("wait", "--for=condition=complete", "job/kc-restarts", "--timeout=60s", timeout=70)
    assert up.ok("logs", pod) == "mode=new"
    assert up.ok("logs", pod, "--previous") == "mode=old"


def test_the_official_client_reads_and_writes_config_maps_and_secrets(up: Up) -> None:
    from kubernetes import client as k8s
    from kubernetes import config as k8s_config
    from kubernetes.client.rest import ApiException

    core = k8s.CoreV1Api(k8s_config.new_client_from_config(str(up.config)))
    core.create_namespaced_config_map(
        "default", k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="py-cm"), data={"A": "1"}, immutable=True)
    )
    assert core.read_namespaced_config_map("py-cm", "default").data == {"A": "1"}
    assert "py-cm" in [c.metadata.name for c in core.list_namespaced_config_map("default").items]
    with pytest.raises(ApiException) as raised:
        core.patch_namespaced_config_map("py-cm", "default", {"data": {"A": "2"}})
    assert raised.value.status == 422
    assert json.loads(raised.value.body)["details"]["causes"][0]["field"] == "data"
    secret = k8s.V1Secret(metadata=k8s.V1ObjectMeta(name="py-secret"), string_data={"password": "hunter2"})
    created = core.create_namespaced_secret("default", secret)
    assert (created.type, created.string_data) == ("Opaque", None)
    assert base64.b64decode(core.read_namespaced_secret("py-secret", "default").data["password"]) == b"hunter2"
    core.delete_namespaced_secret("py-secret", "default")
    core.delete_namespaced_config_map("py-cm", "default")
    with pytest.raises(ApiException) as raised:
        core.read_namespaced_secret("py-secret", "default")
    assert raised.value.status == 404


def test_lightkube_reads_and_writes_config_maps_and_secrets(up: Up) -> None:
    from lightkube import ApiError, Client, KubeConfig
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap, Secret

    c = Client(config=KubeConfig.from_file(str(up.config)))
    c.create(ConfigMap(metadata=ObjectMeta(name="lk-cm"), data={"B": "2"}))
    assert c.get(ConfigMap, "lk-cm").data == {"B": "2"}
    c.create(Secret(metadata=ObjectMeta(name="lk-secret"), stringData={"k": "v"}, type="Opaque"))
    listed = {s.metadata.name: s for s in c.list(Secret, namespace="default")}
    assert listed["lk-secret"].data == {"k": base64.b64encode(b"v").decode()}
    with pytest.raises(ApiError) as raised:
        c.create(Secret(metadata=ObjectMeta(name="lk-tls"), type="kubernetes.io/tls", data={}))
    assert raised.value.status.code == 422
    c.delete(ConfigMap, "lk-cm")
    c.delete(Secret, "lk-secret")
    with pytest.raises(ApiError) as raised:
        c.get(ConfigMap, "lk-cm")
    assert raised.value.status.code == 404
