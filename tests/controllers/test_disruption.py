"""Disruption controller on virtual time: PDB status numbers and stale DisruptionTarget cleanup."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.resources import JOBS, PDBS, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.disruption import DisruptionController, format_selector
from kjobs.controllers.pdbstatus import Counts, expected_and_desired, no_scale, scaled_value, status_for
from tests.controllers.disruption_support import condition, events_about, pod_manifest
from tests.support import local_api, settle

SERVED = no_scale({("batch", "Job"): "jobs", ("", "Pod"): "pods"})


async def ready_pod(client: Any, name: str, *, ready: bool = True, owner: Obj | None = None) -> None:
    body = pod_manifest(name, "n1")
    if owner is not None:
        body["metadata"]["ownerReferences"] = [owner]
    await client.create(PODS, "default", body)
    pod = await client.get(PODS, "default", name)
    pod["status"].update(phase="Running", conditions=[{"type": "Ready", "status": "True" if ready else "False"}])
    await client.update(PODS, "default", pod, subresource="status")


def pdb_manifest(**spec: Any) -> Obj:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "budget", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
    }


async def start() -> tuple[FakeClock, Any, DisruptionController]:
    clock = FakeClock()
    client = await local_api(clock)
    controller = DisruptionController(client, clock=clock)
    await controller.start()
    return clock, client, controller


def pdb_status(controller: DisruptionController) -> Obj:
    pdb = controller.pdbs.get("default", "budget")
    return (pdb or {}).get("status") or {}


def test_min_available_integer_counts_ready_pods_and_allows_the_surplus() -> None:
    async def scenario() -> None:
        clock, client, controller = await start()
        for name in ("a", "b", "c"):
            await ready_pod(client, name)
        await ready_pod(client, "d", ready=False)
        await client.create(PDBS, "default", pdb_manifest(minAvailable=2))
        await settle(clock, lambda: pdb_status(controller).get("expectedPods") == 4, max_virtual=5)
        status = pdb_status(controller)
        assert {k: status[k] for k in ("currentHealthy", "desiredHealthy", "disruptionsAllowed", "expectedPods")} == {
            "currentHealthy": 3,
            "desiredHealthy": 2,
            "disruptionsAllowed": 1,
            "expectedPods": 4,
        }
        assert status["observedGeneration"] == 1
        cond = condition({"status": status}, "DisruptionAllowed")
        assert cond is not None and (cond["status"], cond["reason"], cond["message"]) == ("True", "SufficientPods", "")
        # A pod being deleted no longer counts: no disruption left.
        await client.delete(PODS, "default", "a")
        await settle(clock, lambda: pdb_status(controller).get("currentHealthy") == 2, max_virtual=5)
        status = pdb_status(controller)
        assert status["disruptionsAllowed"] == 0
        cond = condition({"status": status}, "DisruptionAllowed")
        assert cond is not None and (cond["status"], cond["reason"]) == ("False", "InsufficientPods")
        await controller.stop()

    asyncio.run(scenario())


def test_percentage_for_job_pods_fails_safe_with_kubernetes_message() -> None:
    async def scenario() -> None:
        clock, client, controller = await start()
        job = await client.create(
            JOBS,
            "default",
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "j", "namespace": "default"},
                "spec": {
                    "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
                },
            },
        )
        owner = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": "j",
            "uid": job["metadata"]["uid"],
            "controller": True,
        }
        await ready_pod(client, "a", owner=owner)
        await client.create(PDBS, "default", pdb_manifest(maxUnavailable="50%"))

        def failed() -> bool:
            cond = condition({"status": pdb_status(controller)}, "DisruptionAllowed")
            return cond is not None and cond.get("reason") == "SyncFailed"

        await settle(clock, failed, max_virtual=5)
        cond = condition({"status": pdb_status(controller)}, "DisruptionAllowed")
        assert cond is not None
        assert (cond["status"], cond["message"]) == ("False", "jobs.batch does not implement the scale subresource")
        assert pdb_status(controller)["disruptionsAllowed"] == 0
        await controller.events.flush()
        events = await events_about(client, "budget", "CalculateExpectedPodCountFailed")
        assert events and events[0]["message"] == (
            "Failed to calculate the number of expected pods: jobs.batch does not implement the scale subresource"
        )
        await controller.stop()

    asyncio.run(scenario())


def test_stale_disruption_target_is_set_false_after_two_minutes() -> None:
    async def scenario() -> None:
        clock, client, controller = await start()
        await ready_pod(client, "kept")
        await ready_pod(client, "kubelet")
        marked = clock.now()
        for name, reason in (("kept", "EvictionByEvictionAPI"), ("kubelet", "TerminationByKubelet")):
            pod = await client.get(PODS, "default", name)
            pod["status"]["conditions"].append(
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": reason,
                    "message": "going away",
                    "lastTransitionTime": format_time(marked),
                }
            )
            await client.update(PODS, "default", pod, subresource="status")

        def reset() -> bool:
            cond = condition(controller.pods.get("default", "kept") or {}, "DisruptionTarget")
            return cond is not None and cond["status"] == "False"

        await settle(clock, reset)
        assert clock.now() - marked == pytest.approx(120, abs=1)
        pod = await client.get(PODS, "default", "kept")
        cond = condition(pod, "DisruptionTarget")
        now = format_time(clock.now())
        assert cond == {"type": "DisruptionTarget", "status": "False", "lastProbeTime": None, "lastTransitionTime": now}
        clock.advance(600)
        await settle(clock, lambda: True)
        kubelet = condition(await client.get(PODS, "default", "kubelet"), "DisruptionTarget")
        assert kubelet is not None and kubelet["status"] == "True"
        await controller.stop()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("spec", "pods", "expected"),
    [
        pytest.param({"minAvailable": 3}, 5, Counts(5, 3), id="min-int"),
        pytest.param({"minAvailable": 0}, 0, Counts(0, 0), id="min-zero-no-pods"),
        pytest.param({"minAvailable": "50%"}, 0, Counts(0, 0), id="min-percent-no-pods"),
        pytest.param({"maxUnavailable": 1}, 0, Counts(0, 0), id="max-int-no-pods"),
    ],
)
def test_expected_and_desired(spec: Obj, pods: int, expected: Counts) -> None:
    selected = [{"metadata": {"name": f"p{i}"}} for i in range(pods)]
    assert expected_and_desired({"spec": spec}, selected, SERVED) == expected


def managed(n: int, uid: str) -> list[Obj]:
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": uid, "uid": uid, "controller": True}
    return [{"metadata": {"name": f"{uid}-{i}", "ownerReferences": [ref]}} for i in range(n)]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({"maxUnavailable": 1}, Counts(10, 9), id="max-int"),
        pytest.param({"maxUnavailable": "25%"}, Counts(10, 7), id="max-percent-rounds-up"),
        pytest.param({"maxUnavailable": 20}, Counts(10, 0), id="max-above-scale"),
        pytest.param({"minAvailable": "25%"}, Counts(10, 3), id="min-percent-rounds-up"),
        pytest.param({"minAvailable": 4}, Counts(5, 4), id="min-int-counts-pods-not-scale"),
    ],
)
def test_scale_based_counts(spec: Obj, expected: Counts) -> None:
    """Two controllers (scales 6 and 4) over five selected pods."""
    pods = managed(3, "rs-a") + managed(2, "rs-b")
    scales = {"rs-a": 6, "rs-b": 4}
    assert expected_and_desired({"spec": spec}, pods, lambda ref: scales[ref["uid"]]) == expected


def test_unmanaged_pods_are_listed_and_unknown_controllers_fail() -> None:
    loose = [{"metadata": {"name": "loose"}}]
    assert expected_and_desired({"spec": {"minAvailable": "50%"}}, loose, SERVED) == Counts(0, 0, ("loose",))
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "u", "controller": True}
    with pytest.raises(Exception, match='no matches for kind "ReplicaSet" in version "apps/v1"'):
        expected_and_desired(
            {"spec": {"maxUnavailable": 1}}, [{"metadata": {"name": "x", "ownerReferences": [rs]}}], SERVED
        )


@pytest.mark.parametrize(
    ("value", "total", "result"),
    [("50%", 3, 2), ("10%", 10, 1), ("0%", 7, 0), (4, 10, 4), ("100%", 3, 3), ("33%", 10, 4)],
)
def test_percentages_round_up(value: object, total: int, result: int) -> None:
    assert scaled_value(value, total) == result


def test_no_expected_pods_allows_no_disruption_and_unchanged_status_is_not_rewritten() -> None:
    pdb: Obj = {"metadata": {"generation": 2}, "status": {}}
    status = status_for(pdb, Counts(0, 0), 0, {}, 1000.0)
    assert status is not None and status["disruptionsAllowed"] == 0
    assert status_for(dict(pdb, status=status), Counts(0, 0), 0, {}, 2000.0) is None


def test_selector_rendering_matches_go() -> None:
    selector = {
        "matchLabels": {"b": "2", "a": "1"},
        "matchExpressions": [{"key": "k", "operator": "In", "values": ["x", "y"]}],
    }
    assert format_selector(selector) == (
        "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},"
        "MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}"
    )
