"""Upstream's PodDisruptionBudget-status tests of the disruption controller, run against kjobs'.

pkg/controller/disruption/disruption_test.go (rows left out, and why: docs/upstream-pdb.md). Upstream fills the
informers' stores by hand, calls `dc.sync` and reads the status its fake updater kept (`VerifyPdbStatus`:
disruptionsAllowed, currentHealthy, desiredHealthy, expectedPods, disruptedPods, observedGeneration equal to
the generation, and `DisruptionAllowed` True exactly when a disruption is allowed). These ports create the
row's pods and budget through kjobs' in-process API on virtual time, let the real controller sync them, and
check the status the API then holds, and the Events the controller recorded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.resources import PDBS, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.disruption import SERVED, DisruptionController
from kjobs.controllers.pdbstatus import expected_scale, no_scale
from tests.controllers.disruption_support import condition, events_about, pod_manifest
from tests.controllers.upstream_support import run_for
from tests.support import local_api

MINUTE = 60.0
NAME = "foobar"


def budget(**spec: Any) -> Obj:
    """`newMinAvailablePodDisruptionBudget` / `newMaxUnavailablePodDisruptionBudget`: selects foo=bar."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": NAME, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"foo": "bar"}}, **spec},
    }


async def add_pod(client: Any, name: str, *, ready: bool = True, **meta: Any) -> Obj:
    """`newPod`: labelled foo=bar, Ready (or with no conditions)."""
    body = pod_manifest(name, "n1")
    body["metadata"]["labels"] = {"foo": "bar"}
    body["metadata"].update(meta)
    await client.create(PODS, "default", body)
    pod = await client.get(PODS, "default", name)
    pod["status"].update(phase="Running", conditions=[{"type": "Ready", "status": "True"}] if ready else [])
    result: Obj = await client.update(PODS, "default", pod, subresource="status")
    return result


class Rig:
    """A controller on an in-process API; `sync()` lets it settle (upstream: `dc.sync(ctx, pdbName)`)."""

    def __init__(self, client: Any, clock: FakeClock, controller: DisruptionController) -> None:
        self.client, self.clock, self.controller = client, clock, controller

    async def sync(self) -> None:
        await run_for(self.clock, 1.0)

    async def pdb(self) -> Obj:
        result: Obj = await self.client.get(PDBS, "default", NAME)
        return result

    async def verify_pdb_status(
        self, allowed: int, healthy: int, desired: int, expected: int, disrupted: dict[str, str] | None = None
    ) -> None:
        """`VerifyPdbStatus`."""
        pdb = await self.pdb()
        status = pdb.get("status") or {}
        got = {k: status.get(k, 0) for k in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")}
        assert got == {
            "disruptionsAllowed": allowed,
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "expectedPods": expected,
        }
        assert (status.get("disruptedPods") or {}) == (disrupted or {})
        assert status.get("observedGeneration", 0) == pdb["metadata"].get("generation", 0)
        cond = condition(pdb, "DisruptionAllowed")
        assert cond is not None, "Expected condition DisruptionAllowed"
        assert cond["status"] == ("True" if allowed > 0 else "False")

    async def verify_disruption_allowed(self, allowed: int) -> None:
        """`VerifyDisruptionAllowed`."""
        assert ((await self.pdb()).get("status") or {}).get("disruptionsAllowed", 0) == allowed

    async def verify_event_emitted(self, reason: str) -> Obj:
        """`verifyEventEmitted` (the fake recorder's line holds the reason)."""
        await self.controller.events.flush()
        events = await events_about(self.client, NAME, reason) + await events_about(self.client, "naked", reason)
        assert events, f"expected event not generated: {reason}"
        return events[0]


def run(scenario: Callable[[Rig], Awaitable[None]]) -> None:
    async def main() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        controller = DisruptionController(client, clock=clock)
        await controller.start()
        try:
            await scenario(Rig(client, clock, controller))
        finally:
            await controller.stop()

    asyncio.run(main())


def test_no_selector() -> None:
    """TestNoSelector: an empty selector matches every pod of the namespace."""

    async def scenario(rig: Rig) -> None:
        body = budget(minAvailable=3)
        body["spec"]["selector"] = {}
        await rig.client.create(PDBS, "default", body)
        await rig.sync()
        await rig.verify_pdb_status(0, 0, 3, 0)
        await add_pod(rig.client, "yo-yo-yo")
        await rig.sync()
        await rig.verify_pdb_status(0, 1, 3, 1)

    run(scenario)


def test_unavailable() -> None:
    """TestUnavailable: counts go up as pods are added, healthy goes down when one turns unready."""

    async def scenario(rig: Rig) -> None:
        await rig.client.create(PDBS, "default", budget(minAvailable=3))
        await rig.sync()
        for i in range(4):
            await rig.verify_pdb_status(0, i, 3, i)
            await add_pod(rig.client, f"yo-yo-yo-{i}")
            await rig.sync()
        await rig.verify_pdb_status(1, 4, 3, 4)
        pod = await rig.client.get(PODS, "default", "yo-yo-yo-0")
        pod["status"]["conditions"] = []
        await rig.client.update(PODS, "default", pod, subresource="status")
        await rig.sync()
        await rig.verify_pdb_status(0, 3, 3, 4)

    run(scenario)


def test_integer_max_unavailable() -> None:
    """TestIntegerMaxUnavailable: an integer maxUnavailable allows no disruption of a pod without controller."""

    async def scenario(rig: Rig) -> None:
        await rig.client.create(PDBS, "default", budget(maxUnavailable=1))
        await rig.sync()
        await rig.verify_disruption_allowed(0)  # a PDB with 0 pods allows no disruption
        await add_pod(rig.client, "naked")
        await rig.sync()
        await rig.verify_disruption_allowed(0)
        await rig.verify_event_emitted("UnmanagedPods")

    run(scenario)


def test_naked_pod() -> None:
    """TestNakedPod: a percentage minAvailable allows no disruption of a pod without controller."""

    async def scenario(rig: Rig) -> None:
        await rig.client.create(PDBS, "default", budget(minAvailable="28%"))
        await rig.sync()
        await rig.verify_disruption_allowed(0)
        await add_pod(rig.client, "naked")
        await rig.sync()
        await rig.verify_disruption_allowed(0)
        await rig.verify_event_emitted("UnmanagedPods")

    run(scenario)


def test_unsupported_controller_pod() -> None:
    """TestUnsupportedControllerPod: a controller whose kind the server does not know fails the count."""

    async def scenario(rig: Rig) -> None:
        await rig.client.create(PDBS, "default", budget(minAvailable="28%"))
        await rig.sync()
        await rig.verify_disruption_allowed(0)
        owner = {
            "apiVersion": "apps.test.io/v1",
            "kind": "TestWorkload",
            "name": "fake-controller",
            "uid": "b7329742-8daa-493a-8881-6ca07139172b",
            "controller": True,
        }
        await add_pod(rig.client, "naked", ownerReferences=[owner])
        await rig.sync()
        await rig.verify_disruption_allowed(0)
        event = await rig.verify_event_emitted("CalculateExpectedPodCountFailed")
        assert event["message"] == (
            'Failed to calculate the number of expected pods: no matches for kind "TestWorkload" in version '
            '"apps.test.io/v1"'
        )
        cond = condition(await rig.pdb(), "DisruptionAllowed")
        assert cond is not None and (cond["status"], cond["reason"]) == ("False", "SyncFailed")

    run(scenario)


def test_status_for_unmanaged_pod() -> None:
    """TestStatusForUnmanagedPod: unmanaged pods are an Event, not a sync error (`VerifyNoStatusError`)."""

    async def scenario(rig: Rig) -> None:
        await rig.client.create(PDBS, "default", budget(minAvailable="28%"))
        await rig.sync()
        await rig.verify_disruption_allowed(0)
        await add_pod(rig.client, "unmanaged")
        await rig.sync()
        for cond in (await rig.pdb())["status"].get("conditions") or []:
            assert not ("found no controller ref" in cond.get("message", "") and cond.get("reason") == "SyncFailed")
        await rig.verify_event_emitted("UnmanagedPods")

    run(scenario)


def test_total_unmanaged_pods() -> None:
    """TestTotalUnmanagedPods: `getExpectedScale` collects the one unmanaged pod."""

    async def scenario(rig: Rig) -> None:
        await rig.client.create(PDBS, "default", budget(minAvailable="28%"))
        await rig.sync()
        await rig.verify_disruption_allowed(0)
        pod = await add_pod(rig.client, "unmanaged")
        await rig.sync()
        _, unmanaged = expected_scale([pod], no_scale(SERVED))
        assert len(unmanaged) == 1, f"expected one pod to be unmanaged pod but found {len(unmanaged)}"
        for cond in (await rig.pdb())["status"].get("conditions") or []:
            assert cond.get("reason") != "SyncFailed"
        await rig.verify_event_emitted("UnmanagedPods")

    run(scenario)


def test_pdb_not_exist() -> None:
    """TestPDBNotExist: syncing a key with no budget is no error."""

    async def scenario(rig: Rig) -> None:
        await rig.client.create(PDBS, "default", budget(minAvailable="67%"))
        await rig.sync()
        await rig.controller.sync(("default", "notExist"))

    run(scenario)


def test_update_disrupted_pods() -> None:
    """TestUpdateDisruptedPods: disruptedPods keeps only entries of pods neither being deleted, gone, nor
    disrupted more than 2 minutes ago."""

    async def scenario(rig: Rig) -> None:
        now = rig.clock.now()
        await add_pod(rig.client, "p1", finalizers=["example.com/hold"])
        await rig.client.delete(PODS, "default", "p1")  # p1: deletion started
        await add_pod(rig.client, "p2")
        await add_pod(rig.client, "p3")
        created = await rig.client.create(PDBS, "default", budget(minAvailable=1))
        disrupted = {
            "p1": format_time(now),  # Should be removed, pod deletion started.
            "p2": format_time(now - 3 * MINUTE),  # Should be removed, expired.
            "p3": format_time(now - MINUTE),  # Should remain, pod untouched.
            "notthere": format_time(now),  # Should be removed, pod deleted.
        }
        await rig.client.update(
            PDBS, "default", dict(created, status={"disruptedPods": disrupted}), subresource="status"
        )
        await rig.sync()
        await rig.verify_pdb_status(0, 1, 1, 3, {"p3": format_time(now - MINUTE)})

    run(scenario)


class EvictOnFirstStatusWrite:
    """A client that, on the first PDB status write once armed, lets two evictions land first (the budget's
    status decremented, the pods in disruptedPods and deleted), so the write it passes on is stale (409)."""

    def __init__(self, client: Any, clock: FakeClock, victims: list[str]) -> None:
        self.client, self.clock, self.victims = client, clock, victims
        self.armed = False
        self.conflicts = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def update(self, resource: Any, namespace: str | None, obj: Obj, **kw: Any) -> Obj:
        if self.armed and resource is PDBS and kw.get("subresource") == "status":
            self.armed = False
            stored = await self.client.get(PDBS, "default", NAME)
            status = dict(stored["status"])
            status["disruptionsAllowed"] = status["disruptionsAllowed"] - len(self.victims)
            status["disruptedPods"] = {name: format_time(self.clock.now()) for name in self.victims}
            await self.client.update(PDBS, "default", dict(stored, status=status), subresource="status")
            for name in self.victims:
                await self.client.delete(PODS, "default", name)
            try:
                result: Obj = await self.client.update(resource, namespace, obj, **kw)
            except ApiError as exc:
                self.conflicts += exc.code == 409
                raise
            return result
        result = await self.client.update(resource, namespace, obj, **kw)
        return result


def test_update_pdb_status_retries() -> None:
    """TestUpdatePDBStatusRetries: a status write that lost a race with evictions is not forced through; the
    budget ends with no disruption allowed."""

    async def main() -> None:
        clock = FakeClock()
        raw = await local_api(clock)
        client = EvictOnFirstStatusWrite(raw, clock, ["larry", "curly"])
        controller = DisruptionController(client, clock=clock)  # type: ignore[arg-type]
        await controller.start()
        rig = Rig(raw, clock, controller)
        await raw.create(PDBS, "default", budget(minAvailable=1))
        for name in ("moe", "larry", "curly"):
            await add_pod(raw, name)
        await rig.sync()
        await rig.verify_disruption_allowed(2)
        client.armed = True
        await raw.delete(PODS, "default", "moe")  # (A) delete one pod
        await run_for(clock, 30.0)
        assert client.conflicts == 1  # (B) the controller's write met the evictions
        await rig.verify_disruption_allowed(0)  # (C)
        await controller.stop()

    asyncio.run(main())


@pytest.mark.parametrize(
    "selector",
    [
        pytest.param({"matchLabels": {"k8s.io/too/many/slashes": "value"}}, id="illegal value key"),
        pytest.param(
            {"matchExpressions": [{"key": "foo", "operator": "illegal", "values": ["bar"]}]}, id="illegal operator"
        ),
    ],
)
def test_invalid_selectors(selector: Obj) -> None:
    """TestInvalidSelectors: a budget whose selector cannot be parsed fails safe (nothing allowed).

    The API refuses such a selector (docs/upstream-pdb.md), so the row's budget is put in storage as it stands,
    as one an older server accepted, without a generation like the row's."""

    async def scenario(rig: Rig) -> None:
        await rig.client.create(PDBS, "default", budget(minAvailable=3))
        await rig.sync()
        stored = rig.client.service.store.get("poddisruptionbudgets.policy", "default", NAME)
        legacy = dict(stored, spec=dict(stored["spec"], selector=selector), status={})
        legacy["metadata"] = {k: v for k, v in stored["metadata"].items() if k != "generation"}
        await rig.client.service.store.update(
            "poddisruptionbudgets.policy", legacy, expected_rv=stored["metadata"]["resourceVersion"]
        )
        await rig.sync()
        await rig.verify_pdb_status(0, 0, 0, 0)
        cond = condition(await rig.pdb(), "DisruptionAllowed")
        assert cond is not None and cond["reason"] == "SyncFailed"
        await rig.controller.events.flush()
        assert [e["message"][:18] for e in await events_about(rig.client, NAME, "NoPods")][-1] == "Failed to get pods"

    run(scenario)


def test_keep_existing_pdb_condition_during_sync() -> None:
    """TestKeepExistingPDBConditionDuringSync: a condition someone else set stays beside DisruptionAllowed."""

    async def scenario(rig: Rig) -> None:
        body = budget(minAvailable=3)
        body["spec"]["selector"] = {}
        created = await rig.client.create(PDBS, "default", body)
        existing = {
            "type": "ExistingTestCondition",
            "status": "True",
            "message": "This is a test condition",
            "reason": "Test",
            "lastTransitionTime": format_time(rig.clock.now()),
        }
        await rig.client.update(PDBS, "default", dict(created, status={"conditions": [existing]}), subresource="status")
        await rig.sync()
        await rig.verify_pdb_status(0, 0, 3, 0)
        conditions = (await rig.pdb())["status"]["conditions"]
        assert len(conditions) == 2
        assert condition(await rig.pdb(), "ExistingTestCondition") is not None

    run(scenario)
