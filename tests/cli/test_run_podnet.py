"""`kjobs run` of pods that are named: the docs' "Job with Pod-to-Pod Communication" completes (its pods find each
other as `<hostname>.<headless Service>`), a container sees its pod's hostname and the kubelet's hosts file with
its hostAliases, and without mount namespaces (turned off here) a container starts as before, on the host's."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kjobs.node.process_runtime import mounting_enabled

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
pytestmark = pytest.mark.e2e
needs_mounts = pytest.mark.skipif(not mounting_enabled(), reason="no mount namespace can be made here")

PING = """#!/bin/sh
# this machine has no ping: a name that resolves is reachable (every pod's IP is 127.0.0.1)
for name; do :; done
exec getent hosts "$name"
"""


def kjobs_run(manifest: Path, *, mount: bool = True, path: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("KJOBS_MOUNT_VOLUMES", None)
    if not mount:
        env["KJOBS_MOUNT_VOLUMES"] = "0"
    if path:
        env["PATH"] = f"{path}:{env.get('PATH', '/usr/bin:/bin')}"
    argv = [sys.executable, "-m", "kjobs", "run", str(manifest), "--plain", "--logs", "--timeout", "60"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=90, check=False, env=env)


def lines_of(out: str, container: str) -> list[str]:
    return [line.split("] ", 1)[1] for line in out.splitlines() if f"/{container}] " in line]


@needs_mounts
def test_the_pod_to_pod_docs_example_completes(tmp_path: Path) -> None:
    ping = tmp_path / "bin" / "ping"
    ping.parent.mkdir()
    ping.write_text(PING)
    ping.chmod(0o755)
    result = kjobs_run(EXAMPLES / "job-pod-to-pod.yaml", path="" if shutil.which("ping") else str(ping.parent))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Job default/example-job: Complete" in result.stdout
    assert "succeeded: 3  failed: 0  completedIndexes: 0-2" in result.stdout
    found = [line for line in lines_of(result.stdout, "example-workload") if line.startswith("Successfully")]
    assert sorted(found) == sorted([f"Successfully pinged pod: example-job-{i}.headless-svc" for i in range(3)] * 3)


NAMED = """apiVersion: v1
kind: Service
metadata: {name: workers}
spec:
  clusterIP: None
  selector: {job-name: named}
---
apiVersion: batch/v1
kind: Job
metadata: {name: named}
spec:
  completions: 2
  parallelism: 2
  completionMode: Indexed
  template:
    spec:
      subdomain: workers
      restartPolicy: Never
      hostAliases:
      - ip: 10.1.2.3
        hostnames: [foo.remote, bar.remote]
      containers:
      - name: main
        image: busybox
        command:
        - sh
        - -c
        - |
          echo "hostname=$(hostname) env=$HOSTNAME"
          head -1 /etc/hosts
          grep -F "	named-$JOB_COMPLETION_INDEX" /etc/hosts | head -1
          getent hosts foo.remote | tr -s ' ' ' '
          for i in 0 1; do  # itself too, as the docs' Job: none ends before the other was named
            until getent hosts named-$i.workers.default.svc.cluster.local >/dev/null; do sleep 0.1; done
            [ $i = $JOB_COMPLETION_INDEX ] || echo "found named-$i"
          done
"""


@needs_mounts
def test_a_container_sees_its_hostname_its_hosts_file_and_the_other_pod(tmp_path: Path) -> None:
    manifest = tmp_path / "named.yaml"
    manifest.write_text(NAMED)
    result = kjobs_run(manifest)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = lines_of(result.stdout, "main")
    for i in range(2):
        assert f"hostname=named-{i} env=named-{i}" in lines
        assert f"127.0.0.1\tnamed-{i}.workers.default.svc.cluster.local\tnamed-{i}" in lines
        assert f"found named-{1 - i}" in lines
    assert lines.count("# Kubernetes-managed hosts file.") == 2
    assert lines.count("10.1.2.3 foo.remote bar.remote") == 2


@needs_mounts
def test_set_hostname_as_fqdn_gives_the_kernel_the_fqdn(tmp_path: Path) -> None:
    manifest = tmp_path / "fqdn.yaml"
    manifest.write_text(
        NAMED.replace("completions: 2", "completions: 1")
        .replace("parallelism: 2", "parallelism: 1")
        .replace("subdomain: workers", "subdomain: workers\n      setHostnameAsFQDN: true")
        .split("          for i in")[0]
    )
    result = kjobs_run(manifest)
    assert result.returncode == 0, result.stdout + result.stderr
    fqdn = "named-0.workers.default.svc.cluster.local"
    assert f"hostname={fqdn} env={fqdn}" in lines_of(result.stdout, "main")


def test_without_mount_namespaces_a_container_sees_the_hosts_name_and_file(tmp_path: Path) -> None:
    manifest = tmp_path / "plain.yaml"
    manifest.write_text(NAMED.replace("completions: 2", "completions: 1").split("          for i in")[0])
    result = kjobs_run(manifest, mount=False)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = lines_of(result.stdout, "main")
    assert lines[0] == f"hostname={socket.gethostname()} env=named-0"  # the env var, as before
    assert lines[1] == Path("/etc/hosts").read_text().splitlines()[0]


@needs_mounts
def test_a_host_network_pod_keeps_the_machines_name_and_file_plus_its_aliases(tmp_path: Path) -> None:
    manifest = tmp_path / "host.yaml"
    manifest.write_text(
        NAMED.split("---\n")[1]  # the Job alone: no Service names it
        .replace("completions: 2", "completions: 1")
        .replace("subdomain: workers", "hostNetwork: true")
        .replace("head -1 /etc/hosts", "cat /etc/hosts")
        .split("          grep -F")[0]
    )
    result = kjobs_run(manifest)
    assert result.returncode == 0, result.stdout + result.stderr
    machine = Path("/etc/hosts").read_text()
    expected = (
        f"hostname={socket.gethostname()} env=named-0\n# Kubernetes-managed hosts file (host network).\n{machine}"
        "\n# Entries added by HostAliases.\n10.1.2.3\tfoo.remote\tbar.remote"
    )
    assert "\n".join(lines_of(result.stdout, "main")) == expected
