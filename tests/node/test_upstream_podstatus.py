"""Rows of the kubelet status manager's TestMergePodStatus, on kjobs' pod status (pure) and node agent.

Upstream: pkg/kubelet/status/status_manager_test.go (TestMergePodStatus). kjobs computes the status the kubelet
generates and merges in one function (`compute_pod_status`): "there might still be running containers" is a
killed pod whose containers have not all stopped. docs/upstream-kubelet.md lists the rows.
"""

from __future__ import annotations

import asyncio

from kjobs.api.types import Obj
from kjobs.client.resources import PODS
from kjobs.node.observations import Attempt, KillRequest, PodRecord, eviction
from kjobs.node.podstatus import compute_pod_status
from kjobs.node.sim_runtime import Outcome
from tests.node.helpers import T0, attempt, make_pod, record
from tests.node.test_agent import condition, start_node
from tests.support import settle

EVICTED = eviction("Was Evicted")
RUNNING_BEFORE: Obj = {"phase": "Running", "reason": "Unknown", "message": "Message"}


def killed(running: bool, *, api_conditions: list[Obj] | None = None) -> PodRecord:
    """A pod evicted at T0 whose container still runs, or was killed at T0 + 1."""
    pod = make_pod()
    if api_conditions:
        pod["status"] = {"conditions": api_conditions}
    last: Attempt = attempt() if running else attempt(end=T0 + 1, code=137, signal=9)
    rec = record(pod, last)
    rec.kill = KillRequest(requested_at=T0, grace_seconds=30, reason=EVICTED)
    rec.killed_phase = "Failed"
    return rec


def conditions(status: Obj) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c.get("reason", "")) for c in status["conditions"]}


def by_api(reason: str) -> list[Obj]:
    return [{"type": "DisruptionTarget", "status": "True", "reason": reason}]


def test_add_disruption_target_condition_when_transitioning_into_failed_phase() -> None:
    status = compute_pod_status(killed(False), T0 + 2, previous=RUNNING_BEFORE)
    assert status["phase"] == "Failed"
    got = conditions(status)
    assert got["DisruptionTarget"] == ("True", "TerminationByKubelet")
    assert got["Ready"] == got["ContainersReady"] == ("False", "PodFailed")


def test_dont_add_disruption_target_condition_when_transitioning_into_failed_phase_but_containers_may_run() -> None:
    status = compute_pod_status(killed(True), T0 + 2, previous=RUNNING_BEFORE)
    assert status["phase"] == "Running"
    assert "DisruptionTarget" not in conditions(status)


def test_preserve_disruption_target_condition() -> None:
    pod = make_pod()
    pod["status"] = {"conditions": by_api("TerminationByKubelet")}
    status = compute_pod_status(record(pod, attempt()), T0 + 2)
    assert (status["phase"], conditions(status)["DisruptionTarget"]) == ("Running", ("True", "TerminationByKubelet"))


def test_override_disruption_target_condition() -> None:
    status = compute_pod_status(killed(False, api_conditions=by_api("EvictedByEvictionAPI")), T0 + 2)
    assert status["phase"] == "Failed"
    assert conditions(status)["DisruptionTarget"] == ("True", "TerminationByKubelet")
    assert [c["type"] for c in status["conditions"]].count("DisruptionTarget") == 1


def test_dont_override_disruption_target_condition_when_remaining_in_running_phase() -> None:
    pod = make_pod()
    pod["status"] = {"conditions": by_api("EvictedByEvictionAPI")}
    status = compute_pod_status(record(pod, attempt()), T0 + 2)
    assert (status["phase"], conditions(status)["DisruptionTarget"]) == ("Running", ("True", "EvictedByEvictionAPI"))


def test_dont_override_disruption_target_condition_when_transitioning_to_failed_but_containers_may_run() -> None:
    status = compute_pod_status(killed(True, api_conditions=by_api("EvictedByEvictionAPI")), T0 + 2)
    assert (status["phase"], conditions(status)["DisruptionTarget"]) == ("Running", ("True", "EvictedByEvictionAPI"))


def test_additional_pod_condition() -> None:
    pod = make_pod()
    pod["status"] = {"conditions": [{"type": "example.com/feature", "status": "True"}]}
    status = compute_pod_status(record(pod, attempt()), T0)
    assert conditions(status)["example.com/feature"] == ("True", "")


def test_phase_is_transitioning_to_failed_and_no_containers_running() -> None:
    status = compute_pod_status(killed(False), T0 + 2, previous=RUNNING_BEFORE)
    assert (status["phase"], status["reason"], status["message"]) == ("Failed", "Evicted", "Was Evicted")


def test_phase_is_transitioning_to_failed_and_containers_running() -> None:
    status = compute_pod_status(killed(True), T0 + 2, previous=RUNNING_BEFORE)
    assert (status["phase"], status["reason"], status["message"]) == ("Running", "Unknown", "Message")


def test_an_evicted_pod_stays_running_without_disruption_target_until_its_containers_stop() -> None:
    """What the API shows of an evicted pod whose container takes its grace period to stop: Running, no reason,
    no DisruptionTarget, then Failed / Evicted / DisruptionTarget together (mergePodStatus)."""

    async def scenario() -> None:
        node = await start_node({"slow": Outcome(duration=3600, term_delay=3600)})
        try:
            await node.create_pod("slow")
            await settle(node.clock, lambda: node.phase("slow") == "Running")
            pod = node.pod("slow")
            assert pod is not None
            evicted_at = node.clock.now()
            await node.runtime.kill_pod(pod["metadata"]["uid"], grace_seconds=30, reason=EVICTED)
            await settle(node.clock, lambda: node.clock.now() - evicted_at >= 20)
            during = await node.client.get(PODS, "default", "slow")
            assert during["status"]["phase"] == "Running"
            assert "reason" not in during["status"]
            assert all(c["type"] != "DisruptionTarget" for c in during["status"]["conditions"])
            await settle(node.clock, lambda: node.phase("slow") == "Failed")
            assert node.clock.now() - evicted_at >= 30
            after = await node.client.get(PODS, "default", "slow")
            assert (after["status"]["reason"], after["status"]["message"]) == ("Evicted", "Was Evicted")
            assert condition(after, "DisruptionTarget")["reason"] == "TerminationByKubelet"
        finally:
            await node.agent.stop()

    asyncio.run(scenario())
