"""Upstream rows that pin the scheduler's victim marking, run against kjobs' scheduler.

pkg/scheduler/framework/preemption/preemption_test.go `TestPrepareCandidate` (the condition rows) and the
check pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go makes of every preemption:
the patched pods are the deleted ones, each with `DisruptionTarget` `PreemptionByScheduler` and the message
"<preemptor's schedulerName>: preempting to accommodate a higher priority pod". Upstream calls
`prepareCandidate` on a made-up candidate; here a preemptor that does not fit makes the scheduler choose the
same victim. Rows, and those left out: docs/upstream-components.md.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kjobs.api.types import Obj
from kjobs.client.resources import NODES, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.scheduler import Scheduler
from tests.controllers.test_scheduler_controller import node, pod, priority_class
from tests.controllers.upstream_support import Recording, run_for
from tests.support import local_api, settle

MESSAGE = "default-scheduler: preempting to accommodate a higher priority pod"


async def cluster(victim_conditions: list[Obj] | None = None) -> tuple[FakeClock, Any, Recording, Scheduler]:
    """node1 (1 CPU) running victim1 (mid priority, 1 CPU), optionally with status conditions already."""
    clock = FakeClock()
    raw = await local_api(clock)
    await raw.create(NODES, None, node("node1", cpu="1"))
    await raw.create(PODS, "default", pod("victim1", nodeName="node1"))
    victim = await raw.get(PODS, "default", "victim1")
    victim["status"]["phase"] = "Running"
    if victim_conditions:
        victim["status"]["conditions"] = victim_conditions
    await raw.update(PODS, "default", victim, subresource="status")
    client = Recording(raw)
    sched = Scheduler(client, clock=clock)  # type: ignore[arg-type]
    await sched.start()
    return clock, raw, client, sched


async def preempt(clock: FakeClock, raw: Any, client: Recording, *, cpu: str = "1") -> None:
    class Env:
        pass

    env = Env()
    env.client = raw  # type: ignore[attr-defined]
    await priority_class(env, "high", 1000)  # type: ignore[arg-type]
    await raw.create(PODS, "default", pod("preemptor", cpu=cpu, priorityClassName="high"))
    await settle(clock, lambda: bool(client.of("delete")) or bool(client.of("post")), max_virtual=30)
    await run_for(clock, 1)


def test_prepare_candidate_no_victims() -> None:
    """Row "no victims": a preemptor that fits without preemption marks and deletes nobody."""

    async def scenario() -> None:
        clock, raw, client, sched = await cluster()
        await raw.create(NODES, None, node("node2", cpu="1"))
        await preempt(clock, raw, client)
        assert client.names("delete") == set()
        assert client.names("patch") - {"preemptor"} == set()
        await sched.stop()

    asyncio.run(scenario())


def test_prepare_candidate_one_victim_without_condition() -> None:
    async def scenario() -> None:
        clock, raw, client, sched = await cluster()
        await preempt(clock, raw, client)
        marks = [a for a in client.of("patch") if a.name == "victim1"]
        assert len(marks) == 1 and marks[0].subresource == "status"
        (target,) = [c for c in marks[0].body["status"]["conditions"] if c["type"] == "DisruptionTarget"]
        assert (target["status"], target["reason"], target["message"]) == ("True", "PreemptionByScheduler", MESSAGE)
        assert client.names("delete") == {"victim1"}
        verbs = [(a.verb, a.name) for a in client.actions if a.resource == "pods" and a.name == "victim1"]
        assert verbs.index(("patch", "victim1")) < verbs.index(("delete", "victim1"))
        await sched.stop()

    asyncio.run(scenario())


def test_prepare_candidate_one_victim_with_same_condition() -> None:
    """Row "one victim with same condition": `UpdatePodCondition` finds nothing to change, so no patch; the
    victim is still deleted."""

    async def scenario() -> None:
        same = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "message": MESSAGE}
        clock, raw, client, sched = await cluster([same])
        await preempt(clock, raw, client)
        assert [a.name for a in client.of("patch") if a.name == "victim1"] == []
        assert client.names("delete") == {"victim1"}
        await sched.stop()

    asyncio.run(scenario())


def test_prepare_candidate_victim_marked_by_another_scheduler_is_marked_again() -> None:
    """The same condition check, from `UpdatePodCondition`: a DisruptionTarget True with another message (here
    another scheduler's) is not "the same condition"; the victim gets this scheduler's message, and the
    transition time of the condition, already True, is kept."""

    async def scenario() -> None:
        other = {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "PreemptionByScheduler",
            "message": "other-scheduler: preempting to accommodate a higher priority pod",
            "lastTransitionTime": "2025-12-31T23:00:00Z",
        }
        clock, raw, client, sched = await cluster([other])
        await preempt(clock, raw, client)
        marks = [a for a in client.of("patch") if a.name == "victim1"]
        assert len(marks) == 1
        (target,) = [c for c in marks[0].body["status"]["conditions"] if c["type"] == "DisruptionTarget"]
        assert (target["message"], target["lastTransitionTime"]) == (MESSAGE, "2025-12-31T23:00:00Z")
        assert client.names("delete") == {"victim1"}
        await sched.stop()

    asyncio.run(scenario())
