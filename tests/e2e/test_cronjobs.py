"""CronJobs against `kjobs up` as a user drives them: the real kubectl, the official client and lightkube."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from lightkube import Client as LightClient
from lightkube import KubeConfig
from lightkube.resources.batch_v1 import CronJob as LightCronJob

from kjobs.cronjob.jobs import SCHEDULED_TIMESTAMP_ANNOTATION
from tests.server.test_up import _up
from tests.support import free_port

pytestmark = pytest.mark.e2e

T = TypeVar("T")


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("cronjobs")
    config = tmp / "kc.yaml"
    args = ("--port", str(free_port()), "--data-dir", str(tmp / "data"), "--kubeconfig", str(config), "--backoff", "1")
    with _up(tmp, *args, "--job-batch-period", "0.1") as (proc, line, _elapsed):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        yield config


def kubectl(kubeconfig: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    done = subprocess.run(["kubectl", *args], capture_output=True, text=True, env=env, timeout=60)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def until(probe: Callable[[], T | None], what: str, timeout: float = 30.0) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found is not None:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_kubectl_creates_lists_describes_triggers_and_deletes_a_cronjob(kubeconfig: Path) -> None:
    create = ("create", "cronjob", "tick", "--image=busybox", "--schedule=@every 2s", "--", "sh", "-c", "echo tick")
    kubectl(kubeconfig, *create)
    table = kubectl(kubeconfig, "get", "cronjobs").stdout.splitlines()
    assert table[0].split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"]
    assert table[1].split()[:6] == ["tick", "@every", "2s", "<none>", "False", "0"]

    def scheduled_job() -> str | None:
        out = kubectl(kubeconfig, "get", "jobs", "-o", "name").stdout.split()
        return out[0].removeprefix("job.batch/") if out else None

    name = until(scheduled_job, "the first scheduled Job")
    assert name.startswith("tick-")
    annotations = kubectl(kubeconfig, "get", "job", name, "-o", "jsonpath={.metadata.annotations}").stdout
    assert SCHEDULED_TIMESTAMP_ANNOTATION in annotations
    kubectl(kubeconfig, "wait", "--for=condition=complete", f"job/{name}", "--timeout=30s")
    assert kubectl(kubeconfig, "logs", f"job/{name}").stdout == "tick\n"

    def described() -> str | None:
        text = kubectl(kubeconfig, "describe", "cronjob", "tick").stdout
        return text if "SawCompletedJob" in text else None

    text = until(described, "SawCompletedJob in kubectl describe")
    assert f"Created job {name}" in text and "Last Schedule Time:" in text

    kubectl(kubeconfig, "create", "job", "by-hand", "--from=cronjob/tick")
    owner = kubectl(kubeconfig, "get", "job", "by-hand", "-o", "jsonpath={.metadata.ownerReferences[0].kind}").stdout
    assert owner == "CronJob"
    kubectl(kubeconfig, "delete", "cronjob", "tick")
    until(lambda: True if not kubectl(kubeconfig, "get", "jobs", "-o", "name").stdout else None, "the Jobs deleted")


def test_kubectl_delete_cronjob_cascade_orphan_keeps_its_jobs(kubeconfig: Path) -> None:
    kubectl(kubeconfig, "create", "cronjob", "keeper", "--image=busybox", "--schedule=@daily", "--", "true")
    kubectl(kubeconfig, "create", "job", "kept", "--from=cronjob/keeper")
    kubectl(kubeconfig, "delete", "cronjob", "keeper", "--cascade=orphan")
    time.sleep(2)  # the garbage collector's turn: the Job has no owner left to be collected with
    refs = kubectl(kubeconfig, "get", "job", "kept", "-o", "jsonpath={.metadata.ownerReferences}").stdout
    assert refs == ""
    kubectl(kubeconfig, "delete", "job", "kept", "--cascade=background")


def test_kubectl_shows_the_api_servers_validation_errors(kubeconfig: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "bad.yaml"
    manifest.write_text(
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: bad}\nspec:\n  schedule: '61 * * * *'\n"
        "  concurrencyPolicy: Sometimes\n  jobTemplate:\n    spec:\n      template:\n        spec:\n"
        "          restartPolicy: Never\n          containers: [{name: c, image: busybox, command: [sh]}]\n"
    )
    done = kubectl(kubeconfig, "apply", "-f", str(manifest), check=False)
    assert done.returncode == 1
    assert 'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61' in done.stderr
    assert 'spec.concurrencyPolicy: Unsupported value: "Sometimes"' in done.stderr


def test_the_official_client_and_lightkube_read_and_change_a_cronjob(kubeconfig: Path) -> None:
    api = k8s.BatchV1Api(k8s_config.new_client_from_config(str(kubeconfig)))
    container = k8s.V1Container(name="main", image="busybox", command=["true"])
    body = k8s.V1CronJob(
        metadata=k8s.V1ObjectMeta(name="nightly"),
        spec=k8s.V1CronJobSpec(
            schedule="0 3 * * *",
            time_zone="Europe/Paris",
            job_template=k8s.V1JobTemplateSpec(
                spec=k8s.V1JobSpec(
                    template=k8s.V1PodTemplateSpec(spec=k8s.V1PodSpec(restart_policy="Never", containers=[container]))
                )
            ),
        ),
    )
    created = api.create_namespaced_cron_job("default", body)
    assert created.spec.concurrency_policy == "Allow" and created.spec.successful_jobs_history_limit == 3
    light = LightClient(config=KubeConfig.from_file(str(kubeconfig)))
    fetched: Any = light.get(LightCronJob, "nightly", namespace="default")
    assert fetched.spec.timeZone == "Europe/Paris"
    light.patch(LightCronJob, "nightly", {"spec": {"suspend": True}}, namespace="default")
    assert api.read_namespaced_cron_job("nightly", "default").spec.suspend is True
    assert [c.metadata.name for c in api.list_namespaced_cron_job("default").items] == ["nightly"]
    api.delete_namespaced_cron_job("nightly", "default")
