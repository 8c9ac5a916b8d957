"""Jobs end to end on virtual time: Job controller + scheduler + node agent (simulated runtime)."""

from __future__ import annotations

import asyncio
from typing import Any

from kjobs.api.types import Obj
from kjobs.client.resources import JOBS
from kjobs.clock import FakeClock
from kjobs.controllers.job import JobController, JobControllerSettings
from kjobs.controllers.scheduler import Scheduler
from kjobs.node.agent import NodeAgent, NodeAgentSettings
from kjobs.node.eviction import FakeMemoryMonitor
from kjobs.node.nodestatus import MachineInfo
from kjobs.node.sim_runtime import Outcome, SimulatedRuntime
from tests.support import local_api, settle

MACHINE = MachineInfo(cpu_cores=4, memory_bytes=8 << 30, kernel_version="6.1.0", os_image="Test Linux")


def job(**spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "work", "namespace": "default"},
        "spec": {
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}},
            **spec,
        },
    }


class Cluster:
    def __init__(self, first: Outcome, later: Outcome) -> None:
        self.clock = FakeClock()
        self.first, self.later = first, later
        self.started: list[str] = []
        self.start_times: list[float] = []

    def outcome(self, pod: Obj, container: Obj, attempt: int) -> Outcome:
        name = pod["metadata"]["name"]
        if name not in self.started:
            self.started.append(name)
            self.start_times.append(self.clock.now())
        return self.first if self.started.index(name) == 0 else self.later

    async def start(self) -> None:
        self.client = await local_api(self.clock)
        self.monitor = FakeMemoryMonitor(available_bytes=4 << 30)
        self.agent = NodeAgent(
            self.client,
            name="node-1",
            clock=self.clock,
            runtime=SimulatedRuntime(clock=self.clock, outcome=self.outcome),
            settings=NodeAgentSettings(machine=MACHINE),
            memory_monitor=self.monitor,
        )
        self.jobs = JobController(self.client, clock=self.clock, settings=JobControllerSettings())
        self.scheduler = Scheduler(self.client, clock=self.clock)
        for component in (self.agent, self.scheduler, self.jobs):
            await component.start()

    async def stop(self) -> None:
        for component in (self.jobs, self.scheduler, self.agent):
            await component.stop()

    def job(self) -> Obj:
        return self.jobs.jobs.get("default", "work") or {}

    def condition(self, ctype: str) -> bool:
        return any(
            c["type"] == ctype and c["status"] == "True" for c in self.job().get("status", {}).get("conditions") or []
        )


def test_job_completes_through_the_agent_and_counts_a_failed_pod() -> None:
    async def scenario() -> None:
        cluster = Cluster(Outcome(duration=5, exit_code=1), Outcome(duration=5))
        await cluster.start()
        try:
            await cluster.client.create(JOBS, "default", job(backoffLimit=2))
            await settle(cluster.clock, lambda: cluster.condition("Complete"))
            status = cluster.job()["status"]
            assert (status.get("succeeded"), status.get("failed")) == (1, 1)
            assert len(cluster.started) == 2
        finally:
            await cluster.stop()

    asyncio.run(scenario())


def test_an_evicted_pod_is_ignored_by_a_disruption_rule_and_replaced() -> None:
    async def scenario() -> None:
        cluster = Cluster(Outcome(duration=3600), Outcome(duration=5))
        await cluster.start()
        try:
            policy = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
            await cluster.client.create(JOBS, "default", job(backoffLimit=0, podFailurePolicy=policy))
            await settle(cluster.clock, lambda: cluster.job().get("status", {}).get("active") == 1)
            await settle(cluster.clock, lambda: bool(cluster.started))
            cluster.monitor.available_bytes = 10 << 20  # below memory.available<100Mi: the agent evicts
            await settle(
                cluster.clock, lambda: any(p["status"].get("reason") == "Evicted" for p in cluster.agent.pods.list())
            )
            cluster.monitor.available_bytes = 4 << 30  # relieved; the taint stays for the transition period
            relieved = cluster.clock.now()
            await settle(cluster.clock, lambda: cluster.condition("Complete"), max_virtual=1800)
            status = cluster.job()["status"]
            assert (status.get("succeeded"), status.get("failed", 0)) == (1, 0)  # the eviction was not counted
            assert len(cluster.started) == 2
            # The replacement waited for the memory-pressure taint to go (evictionPressureTransitionPeriod 5m).
            assert cluster.start_times[1] >= relieved + 280
        finally:
            await cluster.stop()

    asyncio.run(scenario())
