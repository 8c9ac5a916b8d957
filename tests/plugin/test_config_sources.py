"""A restarted container reads its ConfigMaps as they are at its restart, as on a cluster: a changed value is
the new one (process runtime: what the container prints), a deleted ConfigMap keeps the restart waiting with
CreateContainerConfigError until it is back (simulated runtime, virtual time)."""

from __future__ import annotations

import time

import pytest
from kubernetes import client

from kjobs.api.types import Obj
from kjobs.node.sim_runtime import Outcome
from kjobs.testing import KjobsCluster


def config_map(mode: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app"}, "data": {"MODE": mode}}


def job(name: str, script: str) -> Obj:
    """An OnFailure Job whose container reads MODE from ConfigMap `app`."""
    env = [{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "MODE"}}}]
    container = {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", script], "env": env}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"template": {"spec": {"restartPolicy": "OnFailure", "containers": [container]}}},
    }


def waiting(pod: Obj) -> Obj:
    statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
    return dict((statuses[0].get("state") or {}).get("waiting") or {})


@pytest.mark.kjobs(runtime="process")
def test_a_restarted_container_prints_the_config_maps_new_value(kjobs_cluster: KjobsCluster) -> None:
    kjobs_cluster.apply([config_map("old"), job("reads-mode", 'echo "mode=$MODE"; [ "$MODE" = new ] || sleep 600')])
    pod = kjobs_cluster.pod_of("reads-mode")
    deadline = time.monotonic() + 10
    while kjobs_cluster.logs(pod) != "mode=old\n":  # the first attempt started with the old value
        assert time.monotonic() < deadline, kjobs_cluster.logs(pod)
        time.sleep(0.05)
    kjobs_cluster.apply(config_map("new"))
    kjobs_cluster.fail_container(pod, 1)  # OnFailure: the container restarts
    kjobs_cluster.wait_for("job", "reads-mode", "Complete")
    assert kjobs_cluster.logs(pod) == "mode=new\n"
    core = client.CoreV1Api(kjobs_cluster.api_client)
    previous = core.read_namespaced_pod_log(pod["metadata"]["name"], "default", previous=True)
    assert previous == "mode=old\n"


def fails_first(pod: Obj, container: Obj, attempt: int) -> Outcome:
    """The first attempt runs 5 s and exits 1; the next ones succeed at once."""
    return Outcome(duration=5, exit_code=1) if attempt == 0 else Outcome()


@pytest.mark.kjobs(runtime="simulated", outcome=fails_first)
def test_a_restart_waits_for_its_deleted_config_map(kjobs_cluster: KjobsCluster) -> None:
    kjobs_cluster.apply([config_map("old"), job("needs-app", 'echo "mode=$MODE"')])
    name = kjobs_cluster.pod_of("needs-app")["metadata"]["name"]  # the first attempt runs (virtual time stands)
    client.CoreV1Api(kjobs_cluster.api_client).delete_namespaced_config_map("app", "default")
    pod = kjobs_cluster.wait_for("pod", name, lambda p: waiting(p).get("reason") == "CreateContainerConfigError")
    assert waiting(pod) == {"reason": "CreateContainerConfigError", "message": 'configmap "app" not found'}
    status = pod["status"]["containerStatuses"][0]
    assert (status["restartCount"], status["lastState"]["terminated"]["exitCode"]) == (0, 1)
    assert pod["status"]["phase"] == "Running"
    kjobs_cluster.apply(config_map("back"))
    kjobs_cluster.wait_for("job", "needs-app", "Complete")
    assert kjobs_cluster.get("pod", name)["status"]["containerStatuses"][0]["restartCount"] == 1
