"""The scheduler with the Job controller and a node agent (simulated runtime), on virtual time: a high-priority
Job preempts a low-priority Job's pods; the low Job's podFailurePolicy ignores those disruptions, its
replacements wait while the node is full, and both Jobs complete."""

from __future__ import annotations

import asyncio
from typing import Any

from kjobs.api.types import Obj
from kjobs.client.resources import EVENTS, JOBS, PRIORITY_CLASSES
from kjobs.clock import FakeClock
from kjobs.controllers.job import JobController
from kjobs.controllers.scheduler import Scheduler
from kjobs.node.agent import NodeAgent, NodeAgentSettings
from kjobs.node.eviction import FakeMemoryMonitor
from kjobs.node.nodestatus import MachineInfo
from kjobs.node.sim_runtime import Outcome, SimulatedRuntime
from tests.support import local_api, settle

MACHINE = MachineInfo(
    cpu_cores=4,
    memory_bytes=8 << 30,
    ephemeral_storage_bytes=100 << 30,
    machine_id="m",
    system_uuid="s",
    boot_id="b",
    kernel_version="6.1.0",
    os_image="Test Linux",
)


def job(name: str, *, parallelism: int, seconds: int, cpu: str = "1", **pod_spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "backoffLimit": 0,
            "podFailurePolicy": {
                "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
            },
            "template": {
                "metadata": {"annotations": {"sim/seconds": str(seconds)}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}
                    ],
                    **pod_spec,
                },
            },
        },
    }


def outcome(pod: Obj, container: Obj, attempt: int) -> Outcome:
    return Outcome(duration=float(pod["metadata"]["annotations"]["sim/seconds"]))


def test_high_priority_job_preempts_and_both_jobs_complete() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        agent = NodeAgent(
            client,
            name="node-1",
            clock=clock,
            runtime=SimulatedRuntime(clock=clock, outcome=outcome),
            settings=NodeAgentSettings(machine=MACHINE),
            memory_monitor=FakeMemoryMonitor(available_bytes=6 << 30),
        )
        jobs = JobController(client, clock=clock)
        sched = Scheduler(client, clock=clock)
        for component in (agent, jobs, sched):
            await component.start()
        await client.create(
            PRIORITY_CLASSES,
            None,
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "high"},
                "value": 1000,
            },
        )

        def pods_of(name: str) -> list[Obj]:
            return [p for p in sched.pods.list("default") if p["metadata"]["labels"].get("job-name") == name]

        def running(name: str) -> int:
            return sum(1 for p in pods_of(name) if p.get("status", {}).get("phase") == "Running")

        def condition(name: str, kind: str) -> bool:
            found = jobs.jobs.get("default", name) or {}
            return any(
                c["type"] == kind and c["status"] == "True" for c in found.get("status", {}).get("conditions", [])
            )

        await client.create(JOBS, "default", job("batch", parallelism=4, seconds=100))
        await settle(clock, lambda: running("batch") == 4)
        await client.create(
            JOBS, "default", job("urgent", parallelism=1, seconds=60, cpu="2", priorityClassName="high")
        )
        await settle(clock, lambda: running("urgent") == 1)
        scheduled = next(c for c in pods_of("urgent")[0]["status"]["conditions"] if c["type"] == "PodScheduled")
        assert scheduled["status"] == "True" and not scheduled.get("reason")
        # Two batch pods were preempted (marked, terminated by the node, removed): not counted against
        # backoffLimit 0 thanks to the Ignore rule on DisruptionTarget.
        batch = await client.get(JOBS, "default", "batch")
        assert not condition("batch", "Failed") and batch["status"].get("failed", 0) == 0

        # The Job controller replaces them; the replacements wait (Unschedulable) while the urgent Job runs.
        def waiting() -> list[Obj]:
            return [
                p
                for p in pods_of("batch")
                if not p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp")
            ]

        def unschedulable(p: Obj) -> bool:
            return any(
                c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
                for c in p.get("status", {}).get("conditions", [])
            )

        await settle(clock, lambda: len(waiting()) == 2 and all(unschedulable(p) for p in waiting()))
        assert running("urgent") == 1 and running("batch") == 2
        await settle(clock, lambda: condition("urgent", "Complete") and condition("batch", "Complete"))
        batch = await client.get(JOBS, "default", "batch")
        assert batch["status"]["succeeded"] == 4 and batch["status"].get("failed", 0) == 0
        await sched.events.flush()
        events, _ = await client.list(EVENTS, "default")
        preempted = [e["involvedObject"]["name"] for e in events if e["reason"] == "Preempted"]
        assert len(set(preempted)) == 2 and all(name.startswith("batch-") for name in preempted)
        for component in (sched, jobs, agent):
            await component.stop()

    asyncio.run(scenario())
