"""Upstream rows of the disruption controller's stale DisruptionTarget worker, run against kjobs'.

pkg/controller/disruption/disruption_test.go `TestStalePodDisruption` (unit) and
test/integration/disruption/disruption_test.go `TestStalePodDisruption` (which pods are skipped): a pod made
with the condition, time moved past (or short of) the 2-minute timeout, then the controller's view of it.
Rows, and those left out: docs/upstream-components.md.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.resources import PODS
from kjobs.clock import FakeClock
from kjobs.controllers.disruption import DisruptionController
from tests.controllers.disruption_support import pod_manifest
from tests.controllers.upstream_support import Recording, run_for
from tests.support import local_api

MINUTE = 60.0


@dataclass(frozen=True)
class Row:
    time_passed: float
    condition: Obj | None
    want: list[tuple[str, str, str | None]] | None
    deleting: bool = False
    phase: str = "Running"


STALE = [
    pytest.param(
        Row(2 * MINUTE + 1, {"status": "True"}, [("DisruptionTarget", "False", None)]), id="stale pod disruption"
    ),
    pytest.param(
        Row(2 * MINUTE - 1, {"status": "True"}, [("DisruptionTarget", "True", None)]), id="pod disruption in progress"
    ),
    pytest.param(
        Row(2 * MINUTE + 1, {"status": "True"}, [("DisruptionTarget", "True", None)], deleting=True),
        id="pod disruption actuated",
    ),
    pytest.param(Row(2 * MINUTE + 1, None, None, deleting=True), id="no pod disruption"),
    pytest.param(
        Row(2 * MINUTE + 1, {"status": "False"}, [("DisruptionTarget", "False", None)], deleting=True),
        id="pod disruption cleared",
    ),
    # test/integration/disruption TestStalePodDisruption: (pods the worker must leave alone)
    pytest.param(
        Row(2 * MINUTE + 1, {"status": "True"}, [("DisruptionTarget", "False", None)]),
        id="integration: stale-condition",
    ),
    pytest.param(
        Row(2 * MINUTE + 1, {"status": "True"}, [("DisruptionTarget", "True", None)], deleting=True),
        id="integration: deleted-pod",
    ),
    pytest.param(
        Row(
            2 * MINUTE + 1,
            {"status": "True", "reason": "TerminationByKubelet"},
            [("DisruptionTarget", "True", "TerminationByKubelet")],
            phase="Failed",
        ),
        id="integration: disruption-condition-by-kubelet",
    ),
    pytest.param(
        Row(2 * MINUTE + 1, {"status": "True"}, [("DisruptionTarget", "True", None)], phase="Failed"),
        id="integration: disruption-condition-on-failed-pod",
    ),
]


@pytest.mark.parametrize("row", STALE)
def test_stale_pod_disruption(row: Row) -> None:
    async def scenario() -> None:
        clock = FakeClock()
        raw = await local_api(clock)
        body = pod_manifest("foo", "n1")
        body["metadata"]["finalizers"] = ["example.com/hold"]  # a deleted pod stays, as upstream's made-up one
        await raw.create(PODS, "default", body)
        pod = await raw.get(PODS, "default", "foo")
        pod["status"]["phase"] = row.phase
        if row.condition is not None:
            pod["status"]["conditions"] = [
                {"type": "DisruptionTarget", "lastTransitionTime": format_time(clock.now()), **row.condition}
            ]
        await raw.update(PODS, "default", pod, subresource="status")
        if row.deleting:
            await raw.delete(PODS, "default", "foo")
        client = Recording(raw)
        controller = DisruptionController(client, clock=clock)  # type: ignore[arg-type]
        clock.advance(row.time_passed)  # upstream: dc.clock.Sleep(timePassed), then the pod reaches the informer
        await controller.start()
        await run_for(clock, 0.5)
        got = await raw.get(PODS, "default", "foo")
        conditions = [
            (c["type"], c["status"], c.get("reason"))
            for c in got["status"].get("conditions") or []
            if c["type"] == "DisruptionTarget"
        ]
        assert conditions == (row.want or [])
        if row.want and row.want[0][1] == "False" and (row.condition or {}).get("status") == "True":
            assert client.names("update") | client.names("patch") == {"foo"}  # one write, by this worker
            target = next(c for c in got["status"]["conditions"] if c["type"] == "DisruptionTarget")
            assert "message" not in target
        else:
            assert client.names("update") | client.names("patch") == set()  # a pod it skips is not written
        await controller.stop()

    asyncio.run(scenario())


def test_stale_pod_disruption_in_progress_becomes_stale_at_two_minutes() -> None:
    """The "in progress" row carried on: the same pod is reset once the 2 minutes are up, not before."""

    async def scenario() -> None:
        clock = FakeClock()
        raw = await local_api(clock)
        await raw.create(PODS, "default", pod_manifest("foo", "n1"))
        pod = await raw.get(PODS, "default", "foo")
        pod["status"].update(
            phase="Running",
            conditions=[
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "EvictionByEvictionAPI",
                    "message": "Eviction API: evicting",
                    "lastTransitionTime": format_time(clock.now()),
                }
            ],
        )
        await raw.update(PODS, "default", pod, subresource="status")
        start = clock.now()
        controller = DisruptionController(raw, clock=clock)
        await controller.start()
        await run_for(clock, 2 * MINUTE - 1)
        assert (await raw.get(PODS, "default", "foo"))["status"]["conditions"][0]["status"] == "True"
        await run_for(clock, 1.5)
        target = (await raw.get(PODS, "default", "foo"))["status"]["conditions"][0]
        assert (target["status"], target.get("reason"), target.get("message")) == ("False", None, None)
        assert target["lastTransitionTime"] == format_time(start + 2 * MINUTE)
        await controller.stop()

    asyncio.run(scenario())
