"""Disruptions end to end: real process pods, every controller, the API — and the Job outcome they lead to.

Each scenario runs on a fresh `LocalCluster` (see `tests/e2e/support.py`) and asserts what a user sees: the
disrupted pod's phase and exact `DisruptionTarget` condition (Kubernetes' reasons and messages), the
Job's terminal condition, `status.failed`/`succeeded`, that an Ignore'd disruption did not count, and that a
replacement pod ran (on another node when the first one became unusable).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kjobs.api.taints import TAINT_OUT_OF_SERVICE, TAINT_UNREACHABLE
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.resources import NODES, PODS, PRIORITY_CLASSES
from kjobs.node.agent import NodeAgent
from kjobs.node.eviction import FakeMemoryMonitor
from kjobs.node.nodestatus import MachineInfo
from kjobs.node.process_runtime import ProcessRuntime
from kjobs.node.shutdown import SHUTDOWN_ANNOTATION
from tests.e2e.support import (
    IGNORE_DISRUPTIONS,
    Scenario,
    condition,
    disruption,
    eventually,
    fast_settings,
    gone,
    job_manifest,
    phase,
    run,
    terminal_condition,
    terminated,
)

pytestmark = pytest.mark.e2e

COMPLETE = {"type": "Complete", "status": "True", "reason": "CompletionsReached"}


def first_waits(s: Scenario, gate: str = "never") -> str:
    """The first pod to run blocks on `gate`; every later one exits 0 at once."""
    marker = s.gates.path("first.ran")
    return f"if [ ! -e {marker} ] && touch {marker}; then {s.gates.wait(gate)}; fi; exit 0"


def outcome(job: Obj) -> dict[str, Any]:
    cond = terminal_condition(job)
    status = job.get("status") or {}
    return {
        "type": cond.get("type"),
        "status": cond.get("status"),
        "reason": cond.get("reason"),
        "failed": status.get("failed", 0),
        "succeeded": status.get("succeeded", 0),
    }


async def ignored_disruption(
    s: Scenario,
    disrupt: Callable[[Obj], Awaitable[None]],
    expected: dict[str, Any],
    *,
    name: str,
    replacement_elsewhere: bool = True,
) -> tuple[Obj, Obj]:
    """Run a one-pod Job that ignores DisruptionTarget, disrupt its pod, and check the common outcome.

    Returns (the disrupted pod's final version, the finished Job).
    """
    job = await s.create_job(job_manifest(name, first_waits(s), podFailurePolicy=IGNORE_DISRUPTIONS))
    victim = await s.running_pod(job)
    await disrupt(victim)
    final = await s.final_pod(victim["metadata"]["uid"])
    assert phase(final) == "Failed"
    assert disruption(final) == {"type": "DisruptionTarget", "status": "True", **expected}
    done = await s.finished(job)
    assert outcome(done) == {**COMPLETE, "failed": 0, "succeeded": 1}  # the disruption did not count
    pods = s.history.of_job(job)
    assert len(pods) == 2
    assert pods[0]["metadata"]["uid"] == victim["metadata"]["uid"]
    replacement = pods[1]
    assert phase(replacement) == "Succeeded"
    if replacement_elsewhere:
        assert replacement["spec"]["nodeName"] != victim["spec"]["nodeName"]
    return final, done


def test_failjob_rule_on_exit_42_fails_the_job(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Scenario(tmp_path, fast_settings(tmp_path, nodes=1)) as s:
            policy = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}
            job = await s.create_job(job_manifest("fail42", "exit 42", backoffLimit=6, podFailurePolicy=policy))
            done = await s.finished(job)
            (pod,) = s.history.of_job(job)
            assert phase(pod) == "Failed"
            assert terminated(pod)["exitCode"] == 42
            assert outcome(done) == {
                "type": "Failed",
                "status": "True",
                "reason": "PodFailurePolicy",
                "failed": 1,
                "succeeded": 0,
            }
            assert terminal_condition(done)["message"] == (
                f"Container main for pod default/{pod['metadata']['name']} failed with exit code 42 "
                "matching FailJob rule at index 0"
            )

    run(scenario)


def test_drain_eviction_is_ignored_and_the_pod_replaced_elsewhere(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Scenario(tmp_path, fast_settings(tmp_path)) as s:

            async def drain(pod: Obj) -> None:  # what `kubectl drain` does: cordon, then evict each pod
                await s.client.patch(NODES, None, pod["spec"]["nodeName"], {"spec": {"unschedulable": True}})
                meta = {"name": pod["metadata"]["name"], "namespace": "default"}
                body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": meta}
                await s.client.post_subresource(PODS, "default", meta["name"], "eviction", body)

            expected = {"reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}
            await ignored_disruption(s, drain, expected, name="drained")

    run(scenario)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed on this machine")
def test_kubectl_drain_evicts_through_the_served_api(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Scenario(tmp_path, fast_settings(tmp_path), serve=True) as s:

            async def kubectl_drain(pod: Obj) -> None:
                node = pod["spec"]["nodeName"]
                env = {**os.environ, "KUBECONFIG": str(s.kubeconfig), "HOME": str(tmp_path)}
                args = ["drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=30s"]
                proc = await asyncio.create_subprocess_exec(
                    "kubectl", *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
                )
                output, _ = await asyncio.wait_for(proc.communicate(), 40)
                text = output.decode()
                assert proc.returncode == 0, text
                assert f"node/{node} cordoned" in text
                assert f"evicting pod default/{pod['metadata']['name']}" in text
                assert f"node/{node} drained" in text
                drained = await s.client.get(NODES, None, node)
                assert drained["spec"].get("unschedulable") is True

            expected = {"reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}
            await ignored_disruption(s, kubectl_drain, expected, name="kubectl-drained")

    run(scenario)


def test_noexecute_taint_eviction_is_ignored(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Scenario(tmp_path, fast_settings(tmp_path)) as s:

            async def taint(pod: Obj) -> None:
                taints = [{"key": "example.com/maintenance", "value": "now", "effect": "NoExecute"}]
                await s.client.patch(NODES, None, pod["spec"]["nodeName"], {"spec": {"taints": taints}})

            expected = {"reason": "DeletionByTaintManager", "message": "Taint manager: deleting due to NoExecute taint"}
            await ignored_disruption(s, taint, expected, name="tainted")

    run(scenario)


def test_node_deleted_pod_gc_failure_is_ignored(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Scenario(tmp_path, fast_settings(tmp_path)) as s:

            async def remove_node(pod: Obj) -> None:  # the machine is gone, then its Node object
                node = pod["spec"]["nodeName"]
                await s.agent(node).stop()
                await s.client.delete(NODES, None, node)

            expected = {"reason": "DeletionByPodGC", "message": "PodGC: node no longer exists"}
            final, _ = await ignored_disruption(s, remove_node, expected, name="orphaned")
            assert await gone(s.client, PODS, "default", final["metadata"]["name"])

    run(scenario)


def test_priority_preemption_is_ignored_and_the_pod_runs_again_later(tmp_path: Path) -> None:
    machine = MachineInfo(cpu_cores=2, memory_bytes=8 << 30, kernel_version="6.1.0", os_image="Test Linux")

    async def scenario() -> None:
        async with Scenario(tmp_path, fast_settings(tmp_path, nodes=1, machine=machine)) as s:
            high = {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "high"},
                "value": 1000,
            }
            await s.client.create(PRIORITY_CLASSES, None, high)
            requests = {"resources": {"requests": {"cpu": "1500m"}}}
            job = job_manifest("low", first_waits(s), podFailurePolicy=IGNORE_DISRUPTIONS)
            job["spec"]["template"]["spec"]["containers"][0].update(requests)
            job = await s.create_job(job)
            victim = await s.running_pod(job)
            urgent = job_manifest("urgent", "sleep 0.5")["spec"]["template"]
            urgent["spec"]["containers"][0].update(requests)
            urgent["spec"]["priorityClassName"] = "high"
            await s.client.create(
                PODS, "default", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "urgent"}, **urgent}
            )
            final = await s.final_pod(victim["metadata"]["uid"])
            assert phase(final) == "Failed"
            assert disruption(final) == {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "PreemptionByScheduler",
                "message": "default-scheduler: preempting to accommodate a higher priority pod",
            }
            done = await s.finished(job)
            assert outcome(done) == {**COMPLETE, "failed": 0, "succeeded": 1}
            urgent_pod = await s.client.get(PODS, "default", "urgent")
            assert phase(urgent_pod) == "Succeeded"
            pods = s.history.of_job(job)
            assert len(pods) == 2 and phase(pods[1]) == "Succeeded"
            # the replacement could only start once the preemptor had finished and freed the CPU
            started = pods[1]["status"]["containerStatuses"][0]["state"]["terminated"]["startedAt"]
            assert started >= terminated(urgent_pod)["finishedAt"]

    run(scenario)


def test_node_pressure_eviction_is_ignored(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Scenario(tmp_path, fast_settings(tmp_path)) as s:
            monitors: dict[str, FakeMemoryMonitor] = {}

            async def pressure(pod: Obj) -> None:
                monitor = FakeMemoryMonitor(available_bytes=50 << 20, capacity_bytes=8 << 30)
                monitors[pod["spec"]["nodeName"]] = monitor
                s.agent(pod["spec"]["nodeName"]).memory_monitor = monitor

            expected = {
                "reason": "TerminationByKubelet",
                "message": "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. ",
            }
            final, _ = await ignored_disruption(s, pressure, expected, name="pressured")
            assert final["status"]["reason"] == "Evicted"
            assert final["status"]["message"] == expected["message"]

    run(scenario)


def test_graceful_node_shutdown_is_ignored(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Scenario(tmp_path, fast_settings(tmp_path)) as s:

            async def shutdown(pod: Obj) -> None:  # what `kjobs node shutdown NODE` asks for
                annotations = {SHUTDOWN_ANNOTATION: format_time(time.time())}
                await s.client.patch(NODES, None, pod["spec"]["nodeName"], {"metadata": {"annotations": annotations}})

            expected = {
                "reason": "TerminationByKubelet",
                "message": "Pod was terminated in response to imminent node shutdown.",
            }
            final, _ = await ignored_disruption(s, shutdown, expected, name="shutdown")
            assert final["status"]["reason"] == "Terminated"
            node = await s.client.get(NODES, None, final["spec"]["nodeName"])
            assert condition(node, "Ready")["status"] == "False"
            assert condition(node, "Ready")["message"] == "node is shutting down"

    run(scenario)


def test_failindex_with_backoff_limit_per_index(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Scenario(tmp_path, fast_settings(tmp_path)) as s:
            retried = s.gates.path("index2.ran")
            command = (
                'case "$JOB_COMPLETION_INDEX" in '
                "1) exit 42;; "
                f"2) if [ ! -e {retried} ] && touch {retried}; then exit 3; fi;; "
                "esac; exit 0"
            )
            policy = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [42]}}]}
            manifest = job_manifest(
                "perindex",
                command,
                completionMode="Indexed",
                completions=3,
                parallelism=3,
                backoffLimitPerIndex=1,
                podFailurePolicy=policy,
            )
            job = await s.create_job(manifest)
            done = await s.finished(job)
            assert outcome(done) == {
                "type": "Failed",
                "status": "True",
                "reason": "FailedIndexes",
                "failed": 2,
                "succeeded": 2,
            }
            assert terminal_condition(done)["message"] == "Job has failed indexes"
            assert done["status"]["failedIndexes"] == "1"
            assert done["status"]["completedIndexes"] == "0,2"
            by_index: dict[str, list[Obj]] = {}
            for pod in s.history.of_job(job):
                by_index.setdefault(
                    pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"], []
                ).append(pod)
            assert [phase(p) for p in by_index["1"]] == ["Failed"]  # FailIndex: no retry
            assert [phase(p) for p in by_index["2"]] == ["Failed", "Succeeded"]  # counted, retried once
            assert [terminated(p)["exitCode"] for p in by_index["2"]] == [3, 0]

    run(scenario)


def test_count_rule_counts_towards_backoff_limit(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Scenario(tmp_path, fast_settings(tmp_path, nodes=1)) as s:
            policy = {
                "rules": [
                    {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [4]}},
                    {"action": "Count", "onExitCodes": {"operator": "In", "values": [3]}},
                ]
            }
            first = s.gates.path("first.ran")
            command = f"if [ ! -e {first} ] && touch {first}; then exit 4; fi; exit 3"
            job = await s.create_job(job_manifest("counted", command, backoffLimit=1, podFailurePolicy=policy))
            done = await s.finished(job)
            assert outcome(done) == {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "failed": 2,
                "succeeded": 0,
            }
            assert terminal_condition(done)["message"] == "Job has reached the specified backoff limit"
            pods = s.history.of_job(job)
            assert [terminated(p)["exitCode"] for p in pods] == [4, 3, 3]  # the Ignore'd exit 4 did not count

    run(scenario)


def test_oomkilled_container_matches_an_exit_code_rule(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Scenario(tmp_path, fast_settings(tmp_path, nodes=1)) as s:
            policy = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [137]}}]}
            manifest = job_manifest("oom", "", backoffLimit=6, podFailurePolicy=policy)
            container = manifest["spec"]["template"]["spec"]["containers"][0]
            container["command"] = [sys.executable, "-c", "import time; x = b'x' * (400 << 20); time.sleep(30)"]
            container["resources"] = {"limits": {"memory": "50Mi"}}
            job = await s.create_job(manifest)
            done = await s.finished(job)
            (pod,) = s.history.of_job(job)
            assert phase(pod) == "Failed"
            assert {k: terminated(pod)[k] for k in ("exitCode", "reason")} == {"exitCode": 137, "reason": "OOMKilled"}
            assert outcome(done) == {
                "type": "Failed",
                "status": "True",
                "reason": "PodFailurePolicy",
                "failed": 1,
                "succeeded": 0,
            }
            assert terminal_condition(done)["message"] == (
                f"Container main for pod default/{pod['metadata']['name']} failed with exit code 137 "
                "matching FailJob rule at index 0"
            )

    run(scenario)


def test_stale_disruption_target_is_cleared_and_the_pod_keeps_running(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Scenario(tmp_path, fast_settings(tmp_path, nodes=1)) as s:
            job = await s.create_job(job_manifest("stale", s.gates.wait("finish"), podFailurePolicy=IGNORE_DISRUPTIONS))
            pod = await s.running_pod(job)
            name = pod["metadata"]["name"]
            announced = {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "EvictionByEvictionAPI",
                "message": "Eviction API: evicting",
                "lastTransitionTime": format_time(time.time()),
            }
            await s.client.patch(PODS, "default", name, {"status": {"conditions": [announced]}}, subresource="status")

            async def cleared() -> Obj | None:
                current = await s.client.get(PODS, "default", name)
                return current if condition(current, "DisruptionTarget").get("status") == "False" else None

            current = await eventually(cleared, what="stale DisruptionTarget cleared")
            assert disruption(current) == {
                "type": "DisruptionTarget",
                "status": "False",
                "reason": None,
                "message": None,
            }
            assert phase(current) == "Running" and not current["metadata"].get("deletionTimestamp")
            s.gates.open("finish")
            done = await s.finished(job)
            assert outcome(done) == {**COMPLETE, "failed": 0, "succeeded": 1}
            assert [p["metadata"]["uid"] for p in s.history.of_job(job)] == [pod["metadata"]["uid"]]

    run(scenario)


@pytest.mark.parametrize("recovery", ["out-of-service-taint", "agent-restarts"])
def test_node_agent_killed_mid_job(tmp_path: Path, recovery: str) -> None:
    """The agent dies with its processes → Unknown + unreachable taint → taint eviction → the pod stays
    terminating until an administrator taints the node out-of-service (pod GC fails and removes it) or the
    agent comes back (it reports the lost pod Failed and finishes the deletion) → replacement, nothing counted."""

    async def scenario() -> None:
        async with Scenario(tmp_path, fast_settings(tmp_path)) as s:
            job = await s.create_job(job_manifest("lostnode", first_waits(s), podFailurePolicy=IGNORE_DISRUPTIONS))
            victim = await s.running_pod(job)
            node = victim["spec"]["nodeName"]
            await s.agent(node).stop()  # the agent and its processes are gone; nothing tells the API

            async def unreachable() -> Obj | None:
                current = await s.client.get(NODES, None, node)
                keys = {t.get("key") for t in current["spec"].get("taints") or []}
                return current if TAINT_UNREACHABLE in keys else None

            lost = await eventually(unreachable, what="unreachable taint")
            assert condition(lost, "Ready")["status"] == "Unknown"
            assert condition(lost, "Ready")["reason"] == "NodeStatusUnknown"

            async def evicted() -> Obj | None:
                current = await s.client.get(PODS, "default", victim["metadata"]["name"])
                return current if current["metadata"].get("deletionTimestamp") else None

            terminating = await eventually(evicted, what="taint eviction")
            assert disruption(terminating) == {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "DeletionByTaintManager",
                "message": "Taint manager: deleting due to NoExecute taint",
            }
            assert phase(terminating) == "Running"  # no kubelet left to finish it: the Job waits (Failed policy)

            async def counted_terminating() -> bool:
                return bool((await s.job(job))["status"].get("terminating") == 1)

            await eventually(counted_terminating, what="status.terminating 1")
            revived: NodeAgent | None = None
            if recovery == "out-of-service-taint":  # non-graceful node shutdown, declared by an administrator
                taint = {"key": TAINT_OUT_OF_SERVICE, "value": "nodeshutdown", "effect": "NoExecute"}
                taints = lost["spec"]["taints"] + [taint]
                await s.client.patch(NODES, None, node, {"spec": {"taints": taints}})
            else:
                old = s.agent(node)
                revived = NodeAgent(
                    s.client,
                    name=node,
                    clock=old.clock,
                    settings=old.settings,
                    runtime_factory=lambda on_status: ProcessRuntime(
                        root_dir=tmp_path / "nodes" / f"{node}-again", clock=old.clock, on_status=on_status
                    ),
                )
                await revived.start()
            try:
                final = await s.final_pod(victim["metadata"]["uid"])
                assert phase(final) == "Failed"
                assert disruption(final) == disruption(terminating)  # the taint manager's condition is what stays
                if revived is not None:  # what the kubelet reports for a container it cannot find
                    lost_container = terminated(final)
                    assert (lost_container["exitCode"], lost_container["reason"]) == (137, "ContainerStatusUnknown")
                done = await s.finished(job)
                assert outcome(done) == {**COMPLETE, "failed": 0, "succeeded": 1}
                pods = s.history.of_job(job)
                assert len(pods) == 2 and phase(pods[1]) == "Succeeded"
                if revived is None:
                    assert pods[1]["spec"]["nodeName"] != node
                assert await eventually(lambda: gone(s.client, PODS, "default", victim["metadata"]["name"]))
            finally:
                if revived is not None:
                    await revived.stop()

    run(scenario)


def test_without_a_policy_an_eviction_counts_as_a_failure(tmp_path: Path) -> None:
    """The contrast to the Ignore scenarios: no podFailurePolicy (replacement policy TerminatingOrFailed)."""

    async def scenario() -> None:
        async with Scenario(tmp_path, fast_settings(tmp_path)) as s:
            job = await s.create_job(job_manifest("counted-eviction", first_waits(s), backoffLimit=6))
            victim = await s.running_pod(job)
            meta = {"name": victim["metadata"]["name"], "namespace": "default"}
            body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": meta}
            await s.client.post_subresource(PODS, "default", meta["name"], "eviction", body)
            done = await s.finished(job)
            assert outcome(done) == {**COMPLETE, "failed": 1, "succeeded": 1}
            final = await s.final_pod(victim["metadata"]["uid"])
            assert phase(final) == "Failed"
            assert disruption(final) == {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "EvictionByEvictionAPI",
                "message": "Eviction API: evicting",
            }
            pods = s.history.of_job(job)
            assert len(pods) == 2 and phase(pods[1]) == "Succeeded"

    run(scenario)
