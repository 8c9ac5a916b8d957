"""Every failed pod's decision explained: Events on the Job, the kjobs metric, and `kjobs explain job NAME`.

Jobs run on virtual time with the Job controller, the scheduler and a node agent whose simulated runtime decides
each container's exit code (as in tests/node/test_agent_jobs.py); the API is also served over HTTP so that the
CLI reads it as it reads any cluster.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER
from kjobs.api.types import Obj
from kjobs.cli import main
from kjobs.client.local import LocalClient
from kjobs.client.resources import EVENTS, JOBS, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.job import JobController, JobControllerSettings
from kjobs.controllers.scheduler import Scheduler
from kjobs.explain_job import explain_job
from kjobs.job.bookkeeping import BookkeepingStore
from kjobs.job.config import SyncConfig
from kjobs.job.decisions import REASONS
from kjobs.job.execute import sync_job
from kjobs.job.metrics import JobMetrics
from kjobs.node.agent import NodeAgent, NodeAgentSettings
from kjobs.node.eviction import FakeMemoryMonitor
from kjobs.node.nodestatus import MachineInfo
from kjobs.node.sim_runtime import Outcome, SimulatedRuntime
from kjobs.server import kubeconfig
from kjobs.server.app import create_app
from kjobs.server.runner import bind, start_in_loop
from kjobs.store import MemoryStore
from tests.conformance.harness import RecordingEvents, RecordingPodControl, RecordingStatusWriter
from tests.support import settle

MACHINE = MachineInfo(cpu_cores=64, memory_bytes=64 << 30, kernel_version="6.1.0", os_image="Test Linux")
DECISIONS = "kjobs_job_pod_failure_policy_decisions_total"


def on_exit(action: str, code: int) -> Obj:
    return {"action": action, "onExitCodes": {"containerName": "main", "operator": "In", "values": [code]}}


POLICY = {"rules": [on_exit("Ignore", 10), on_exit("FailIndex", 20), on_exit("Count", 30), on_exit("FailJob", 42)]}

# Exit codes of each index's attempts (pods), in order; the last one repeats. Index 3 fails the Job last.
SCRIPT = {0: [(5, 10), (5, 0)], 1: [(5, 20)], 2: [(5, 30), (5, 0)], 3: [(300, 42)], 4: [(5, 1), (5, 0)]}


def job_manifest(name: str, **spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}},
            **spec,
        },
    }


class Cluster:
    """API (in process, and over HTTP on demand), Job controller, scheduler, one node with a scripted runtime."""

    def __init__(self, script: dict[int, list[tuple[float, int]]]) -> None:
        self.clock = FakeClock()
        self.script = script
        self.attempts: Counter[int] = Counter()
        self.seen: dict[str, Outcome] = {}
        self.pods_by_index: dict[int, list[str]] = {}
        self.metrics = JobMetrics()
        self.app = create_app(MemoryStore(), clock=self.clock.now)

    def outcome(self, pod: Obj, container: Obj, attempt: int) -> Outcome:
        name = pod["metadata"]["name"]
        if name not in self.seen:
            index = int(pod["metadata"].get("annotations", {}).get(JOB_COMPLETION_INDEX_ANNOTATION, 0))
            runs = self.script[index]
            duration, code = runs[min(self.attempts[index], len(runs) - 1)]
            self.attempts[index] += 1
            self.pods_by_index.setdefault(index, []).append(name)
            self.seen[name] = Outcome(duration=duration, exit_code=code)
        return self.seen[name]

    async def start(self) -> None:
        await self.app.service.ensure_namespaces()
        self.client = LocalClient(self.app.service)
        self.agent = NodeAgent(
            self.client,
            name="node-1",
            clock=self.clock,
            runtime=SimulatedRuntime(clock=self.clock, outcome=self.outcome),
            settings=NodeAgentSettings(machine=MACHINE),
            memory_monitor=FakeMemoryMonitor(available_bytes=32 << 30),
        )
        self.scheduler = Scheduler(self.client, clock=self.clock)
        self.jobs = self.job_controller()
        for component in (self.agent, self.scheduler, self.jobs):
            await component.start()

    def job_controller(self) -> JobController:
        settings = JobControllerSettings()
        return JobController(self.client, clock=self.clock, settings=settings, metrics=self.metrics)

    async def restart_job_controller(self) -> None:
        """A new controller process: fresh caches, correlator and bookkeeping; the metric registry is kept so
        that its totals show whether anything was reported twice."""
        await self.jobs.stop()
        self.jobs = self.job_controller()
        await self.jobs.start()

    async def stop(self) -> None:
        for component in (self.jobs, self.scheduler, self.agent):
            await component.stop()

    def job(self, name: str) -> Obj:
        return self.jobs.jobs.get("default", name) or {}

    def condition(self, name: str, ctype: str) -> bool:
        conds = self.job(name).get("status", {}).get("conditions") or []
        return any(c["type"] == ctype and c["status"] == "True" for c in conds)

    def decisions(self) -> dict[tuple[str, str], float]:
        found: dict[tuple[str, str], float] = {}
        for family in self.metrics.registry.collect():
            for sample in family.samples:
                if sample.name == DECISIONS:
                    found[(sample.labels["action"], sample.labels["rule"])] = sample.value
        return found

    async def job_events(self, name: str) -> list[Obj]:
        await self.jobs.events.flush()
        events, _ = await self.client.list(EVENTS, "default")
        return [e for e in events if e["involvedObject"]["kind"] == "Job" and e["involvedObject"]["name"] == name]

    async def explain(self, root: Path, *args: str) -> tuple[int, str, str]:
        """Run `kjobs explain job ...` against this API served over HTTP, as a user would."""
        sock = bind("127.0.0.1", 0)
        served = await start_in_loop(self.app, sock)
        config = root / "kubeconfig"
        kubeconfig.write(config, f"http://127.0.0.1:{sock.getsockname()[1]}")
        try:
            argv = ["explain", "job", *args, "--kubeconfig", str(config)]
            result = await asyncio.to_thread(CliRunner().invoke, main, argv)
        finally:
            await served.stop()
        return result.exit_code, result.stdout, result.stderr


def test_each_decision_is_recorded_once_and_explained(tmp_path: Path) -> None:
    async def scenario() -> None:
        cluster = Cluster(SCRIPT)
        await cluster.start()
        try:
            spec = {"completions": 5, "parallelism": 5, "completionMode": "Indexed", "backoffLimitPerIndex": 1}
            await cluster.client.create(JOBS, "default", job_manifest("work", **spec, podFailurePolicy=POLICY))
            # The four early failures are counted; then the controller restarts before the FailJob pod ends.
            await settle(cluster.clock, lambda: sum(cluster.decisions().values()) == 4)
            await cluster.restart_job_controller()
            await settle(cluster.clock, lambda: cluster.condition("work", "Failed"))
            assert cluster.decisions() == {
                ("Ignore", "0"): 1,
                ("FailIndex", "1"): 1,
                ("Count", "2"): 1,
                ("FailJob", "3"): 1,
                ("NoRuleMatched", "none"): 1,
            }
            # Kubernetes' own metric counts the rule actions (not the pods no rule matched).
            handled = "job_controller_pod_failures_handled_by_failure_policy"
            for action in ("Ignore", "FailIndex", "Count", "FailJob"):
                assert cluster.metrics.value(handled, {"action": action}) == 1, action

            events = await cluster.job_events("work")
            decided = sorted((e["reason"], e["type"], e["message"]) for e in events if e["reason"] in REASONS.values())
            first = {index: names[0] for index, names in cluster.pods_by_index.items()}
            assert [(r, t) for r, t, _ in decided] == [
                ("PodFailurePolicyCount", "Normal"),
                ("PodFailurePolicyFailIndex", "Warning"),
                ("PodFailurePolicyFailJob", "Warning"),
                ("PodFailurePolicyIgnore", "Normal"),
                ("PodFailurePolicyNoMatch", "Normal"),
            ]
            messages = {r: m for r, _, m in decided}
            assert messages["PodFailurePolicyIgnore"] == (
                f"Pod {first[0]} (index 0) failed (exit main=10): rule 0 (Ignore): not counted toward any backoff limit"
            )
            assert messages["PodFailurePolicyFailIndex"] == (
                f"Pod {first[1]} (index 1) failed (exit main=20): rule 1 (FailIndex): index 1 failed"
            )
            assert messages["PodFailurePolicyNoMatch"] == (
                f"Pod {first[4]} (index 4) failed (exit main=1): no rule matched: "
                "counted toward backoffLimitPerIndex of index 4"
            )

            # The Ignore pod is gone: its row comes from its Event.
            await cluster.client.delete(PODS, "default", first[0], grace_period_seconds=0)
            await settle(cluster.clock, lambda: cluster.jobs.pods.get("default", first[0]) is None)
            code, out, err = await cluster.explain(tmp_path, "work")
            assert code == 0, err
            lines = out.splitlines()
            assert lines[0].split() == ["POD", "INDEX", "FAILURE", "RULE", "ACTION", "EFFECT"]
            rows = {line.split()[0]: line.split() for line in lines[1:6]}
            assert rows[first[0] + "*"][1:6] == ["0", "exit", "main=10", "0", "Ignore"]
            assert rows[first[1]][1:6] == ["1", "exit", "main=20", "1", "FailIndex"]
            assert rows[first[2]][1:6] == ["2", "exit", "main=30", "2", "Count"]
            assert rows[first[3]][1:7] == ["3", "exit", "main=42", "3", "FailJob", "Job"]
            assert rows[first[4]][1:6] == ["4", "exit", "main=1", "-", "NoRuleMatched"]
            assert "* the pod is gone: its decision is read from the Job's Events" in out

            code, out, err = await cluster.explain(tmp_path, "work", "-n", "default", "-o", "json")
            assert code == 0, err
            body = orjson.loads(out)
            by_pod = {p["pod"]: p for p in body["failedPods"]}
            assert by_pod[first[0]] == {
                "pod": first[0],
                "index": 0,
                "failure": "exit main=10",
                "rule": 0,
                "ruleName": None,
                "action": "Ignore",
                "effect": "not counted toward any backoff limit",
                "source": "event",
            }
            assert by_pod[first[2]]["effect"] == "counted toward backoffLimitPerIndex of index 2"
            assert by_pod[first[3]]["effect"] == "Job failed"
            assert len(body["failedPods"]) == 5
        finally:
            await cluster.stop()

    asyncio.run(scenario())


def test_many_failed_pods_aggregate_into_one_event() -> None:
    async def scenario() -> None:
        cluster = Cluster({0: [(5, 42)]})
        await cluster.start()
        try:
            policy = {"rules": [on_exit("FailJob", 42)]}
            await cluster.client.create(
                JOBS, "default", job_manifest("wide", completions=11, parallelism=11, podFailurePolicy=policy)
            )
            await settle(cluster.clock, lambda: cluster.condition("wide", "Failed"))
            assert cluster.decisions() == {("FailJob", "0"): 11}
            events = [e for e in await cluster.job_events("wide") if e["reason"] == "PodFailurePolicyFailJob"]
            # client-go's aggregation (maxEvents 10): nine events with their own message, then one combined event.
            single = [e for e in events if not e["message"].startswith("(combined from similar events): ")]
            combined = [e for e in events if e["message"].startswith("(combined from similar events): ")]
            assert len(single) == 9
            assert len(combined) == 1 and combined[0]["count"] == 2
            assert combined[0]["message"].endswith("rule 0 (FailJob): Job failed")
            failures = await explain_job(cluster.client, "default", "wide")
            assert len(failures.pods) == 11
            assert [(c.reason, c.count) for c in failures.combined] == [("PodFailurePolicyFailJob", 2)]
        finally:
            await cluster.stop()

    asyncio.run(scenario())


def test_a_decision_waits_for_the_finalizer_removal_that_succeeds() -> None:
    """Counted in write 1, its finalizer patch failing: the pod is reported by the sync whose patch succeeds,
    and never again."""

    async def scenario() -> None:
        policy = {"rules": [on_exit("Count", 3)]}
        job = job_manifest("work", completions=1, parallelism=1, backoffLimit=5, podFailurePolicy=policy)
        job["metadata"].update(uid="job-uid", resourceVersion="1")
        job["spec"].update(podReplacementPolicy="Failed", completionMode="NonIndexed", selector={})
        job["status"] = {"startTime": "2025-01-01T00:00:00Z", "uncountedTerminatedPods": {}}
        pod = {
            "metadata": {
                "name": "work-a",
                "namespace": "default",
                "uid": "pod-uid",
                "finalizers": [JOB_TRACKING_FINALIZER],
                "ownerReferences": [{"kind": "Job", "uid": "job-uid", "controller": True, "name": "work"}],
            },
            "status": {
                "phase": "Failed",
                "containerStatuses": [{"name": "main", "state": {"terminated": {"exitCode": 3}}}],
            },
        }
        metrics, book, events = JobMetrics(), BookkeepingStore(), RecordingEvents()
        pods = RecordingPodControl(patch_error=True)
        writer = RecordingStatusWriter()

        async def sync(job: Obj, pod: Obj) -> Obj:
            await sync_job(
                job,
                [pod],
                now=1.0e9,
                book=book,
                config=SyncConfig(),
                pod_control=pods,
                status_writer=writer,
                events=events,
                metrics=metrics,
            )
            return dict(job, status=writer.writes[-1]) if writer.writes else job

        job = await sync(job, pod)
        assert pods.finalizer_patches == 1
        assert [r for _, r, _ in events.items if r.startswith("PodFailure")] == []
        pods.patch_error = False
        job = await sync(job, pod)
        job = await sync(job, dict(pod, metadata=dict(pod["metadata"], finalizers=[])))
        assert [r for _, r, _ in events.items if r.startswith("PodFailure")] == ["PodFailurePolicyCount"]
        assert metrics.value(DECISIONS, {"action": "Count", "rule": "0"}) == 1
        assert job["status"]["failed"] == 1

    asyncio.run(scenario())
