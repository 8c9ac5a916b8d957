"""Each fault of `kjobs_cluster` goes through the real components and leaves the `DisruptionTarget` reason
Kubernetes gives it, on both runtimes (wall time with processes, virtual time with the simulated runtime).

The pods carry a finalizer of the test's own, so that the disrupted pod is still there to be read after the
controllers are done with it; `wait_for` then sees its last condition, whatever the timing.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.disrupt import STOP_TIMEOUT
from kjobs.testing import FaultError, KjobsCluster

RUNTIMES = [
    pytest.param("process", marks=pytest.mark.kjobs(runtime="process", nodes=2), id="process"),
    pytest.param("simulated", marks=pytest.mark.kjobs(runtime="simulated", nodes=2), id="simulated"),
]
KEEP = "example.com/keep"


def sleeper(name: str, node: str = "kjobs-node") -> Obj:
    """A pod that runs until it is stopped, kept (by a finalizer) after it is deleted."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "finalizers": [KEEP]},
        "spec": {
            "restartPolicy": "Never",
            "nodeName": node,
            "terminationGracePeriodSeconds": 1,
            "containers": [
                {
                    "name": "main",
                    "image": "docker.io/library/busybox:1.36",
                    "command": ["sh", "-c", "sleep 100000"],
                    "resources": {"requests": {"cpu": "100m"}},
                }
            ],
        },
    }


def running(cluster: KjobsCluster, name: str, node: str = "kjobs-node") -> Obj:
    cluster.apply(sleeper(name, node))
    return cluster.wait_for("pod", name, "phase=Running")


def disruption_reason(pod: Obj) -> Any:
    conditions = (pod.get("status") or {}).get("conditions") or []
    found = [c for c in conditions if c.get("type") == "DisruptionTarget" and c.get("status") == "True"]
    return found[0].get("reason") if found else None


def disrupted(cluster: KjobsCluster, name: str) -> Obj:
    return cluster.wait_for("pod", name, lambda pod: disruption_reason(pod) is not None, timeout=60)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_evict(kjobs_cluster: KjobsCluster, runtime: str) -> None:
    pod = running(kjobs_cluster, "evicted")
    kjobs_cluster.evict(pod)
    assert disruption_reason(disrupted(kjobs_cluster, "evicted")) == "EvictionByEvictionAPI"


def release_when_disrupted(cluster: KjobsCluster, name: str, seen: list[Obj]) -> None:
    """Watch pod `name` (the official client, from the test's own thread) and, once it carries its
    `DisruptionTarget`, keep that version in `seen` and take off the finalizer that holds it, as the finalizer's
    owner would once done: the pod can then go."""
    from kubernetes import client, watch

    core = client.CoreV1Api(cluster.api_client)
    stream = watch.Watch().stream(
        core.list_namespaced_pod, "default", field_selector=f"metadata.name={name}", timeout_seconds=60
    )
    for event in stream:
        pod = cluster.api_client.sanitize_for_serialization(event["object"])
        if disruption_reason(pod) is not None:
            seen.append(pod)
            core.patch_namespaced_pod(name, "default", {"metadata": {"finalizers": None}})
            return


@pytest.mark.kjobs(runtime="process", nodes=2)
def test_drain_evicts_and_uncordons_once_its_pods_are_gone(kjobs_cluster: KjobsCluster) -> None:
    """As kubectl's drain (`waitForDelete`): a pod counts as evicted once it is gone, then the node is uncordoned.
    The pod's finalizer is released while the drain waits (on the simulated runtime a held pod makes the drain wait
    out its bound: test_a_drain_on_virtual_time_waits_on_virtual_time)."""
    running(kjobs_cluster, "drained")
    seen: list[Obj] = []
    releaser = threading.Thread(target=release_when_disrupted, args=(kjobs_cluster, "drained", seen), daemon=True)
    releaser.start()
    wall = time.monotonic()
    kjobs_cluster.drain("kjobs-node")
    releaser.join(timeout=5)
    assert time.monotonic() - wall < STOP_TIMEOUT / 2
    assert [disruption_reason(pod) for pod in seen] == ["EvictionByEvictionAPI"]
    assert kjobs_cluster.objects("pod") == []
    assert not kjobs_cluster.get("node", "kjobs-node")["spec"].get("unschedulable")
    assert kjobs_cluster.disruption_log[-3:] == [
        "pod/drained evicted",
        "node/kjobs-node drained",
        "node/kjobs-node uncordoned",
    ]


@pytest.mark.kjobs(runtime="simulated", nodes=2)
def test_a_drain_on_virtual_time_waits_on_virtual_time(kjobs_cluster: KjobsCluster) -> None:
    """The pod's finalizer keeps it from ever going, so the drain waits out its bound (`STOP_TIMEOUT`) before it
    uncordons: on the simulated runtime that bound is virtual time, not a wall minute (it was the wall clock's)."""
    running(kjobs_cluster, "held")
    wall, virtual = time.monotonic(), kjobs_cluster.clock.now()
    kjobs_cluster.drain("kjobs-node")
    assert kjobs_cluster.clock.now() - virtual >= STOP_TIMEOUT
    assert time.monotonic() - wall < STOP_TIMEOUT / 2
    assert kjobs_cluster.disruption_log[-2:] == ["node/kjobs-node drained", "node/kjobs-node uncordoned"]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_noexecute_taint(kjobs_cluster: KjobsCluster, runtime: str) -> None:
    running(kjobs_cluster, "tainted")
    kjobs_cluster.taint("kjobs-node", "example.com/maintenance", "now")
    assert disruption_reason(disrupted(kjobs_cluster, "tainted")) == "DeletionByTaintManager"
    kjobs_cluster.untaint("kjobs-node", "example.com/maintenance")
    assert not kjobs_cluster.get("node", "kjobs-node")["spec"].get("taints")


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_preempt(kjobs_cluster: KjobsCluster, runtime: str) -> None:
    pod = running(kjobs_cluster, "preempted")
    kjobs_cluster.preempt(pod)
    assert disruption_reason(disrupted(kjobs_cluster, "preempted")) == "PreemptionByScheduler"


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_node_shutdown(kjobs_cluster: KjobsCluster, runtime: str) -> None:
    running(kjobs_cluster, "shut-down")
    kjobs_cluster.node_shutdown("kjobs-node")
    final = kjobs_cluster.wait_for("pod", "shut-down", "phase=Failed", timeout=60)
    assert disruption_reason(final) == "TerminationByKubelet"


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_kill_node_agent(kjobs_cluster: KjobsCluster, runtime: str) -> None:
    running(kjobs_cluster, "lost")
    kjobs_cluster.kill_node_agent("kjobs-node")
    assert disruption_reason(disrupted(kjobs_cluster, "lost")) == "DeletionByTaintManager"
    ready = [c for c in kjobs_cluster.get("node", "kjobs-node")["status"]["conditions"] if c["type"] == "Ready"]
    assert ready[0]["status"] == "Unknown"


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_delete_node(kjobs_cluster: KjobsCluster, runtime: str) -> None:
    running(kjobs_cluster, "orphaned")
    kjobs_cluster.delete_node("kjobs-node")
    assert disruption_reason(disrupted(kjobs_cluster, "orphaned")) == "DeletionByPodGC"


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_fail_container_fails_a_job_through_its_pod_failure_policy(kjobs_cluster: KjobsCluster, runtime: str) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "failing"},
        "spec": {
            "backoffLimit": 6,
            "podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]},
            "template": {"spec": sleeper("unused")["spec"] | {"nodeName": None}},
        },
    }
    kjobs_cluster.apply(job)
    kjobs_cluster.fail_container(kjobs_cluster.pod_of("failing"), 42)
    done = kjobs_cluster.wait_for("job", "failing", "Failed")
    failed = next(c for c in done["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "PodFailurePolicy"
    assert "exit code 42" in failed["message"]
    pod = kjobs_cluster.pod_of("failing", "phase=Failed")
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 42


@pytest.mark.kjobs(runtime="process")
def test_faults_on_what_is_not_there_are_refused(kjobs_cluster: KjobsCluster) -> None:
    finished = sleeper("finished")
    finished["spec"]["containers"][0]["command"] = ["true"]
    kjobs_cluster.apply(finished)
    kjobs_cluster.wait_for("pod", "finished", "phase=Succeeded")
    with pytest.raises(FaultError, match="is not running"):
        kjobs_cluster.fail_container("finished", 1)
    with pytest.raises(FaultError, match="no node 'elsewhere'"):
        kjobs_cluster.kill_node_agent("elsewhere")
