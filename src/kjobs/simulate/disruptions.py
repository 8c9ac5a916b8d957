"""The disruption processes of a failure model, applied in virtual time through the cluster's real components.

Each event goes where `kjobs run --disrupt` (`kjobs.disrupt.Disruptor`) and the test faults
(`kjobs.testing.faults`) go, so pods carry Kubernetes' `DisruptionTarget` reasons:
* `preempt` → the scheduler (`PreemptionByScheduler`), `drain`/`evict` → the Eviction API
  (`EvictionByEvictionAPI`), `taint` → the taint eviction controller (`DeletionByTaintManager`);
* `node-shutdown` → the node agent's graceful shutdown (`TerminationByKubelet`), `node-loss` → the agent stops and
  its Node is deleted, pod GC (`DeletionByPodGC`); either way a replacement node joins at once, as a cluster
  autoscaler or a spot pool brings one;
* `node-pressure` → the node agent's eviction manager, which sees `memory.available` at 0 with the victim using
  all the node's memory, evicts it (`TerminationByKubelet`, reason Evicted) and keeps MemoryPressure for its
  transition period (pkg/kubelet/eviction/eviction_manager.go).

Schedules come from the seed alone: a `ratePerHour` process draws exponential gaps from
`Random("SEED/disruptions/I")` and a victim among the running pods (ordered by completion index and attempt);
a `ratePerPodHour` process draws each pod's time to disruption from `Random("SEED/disruptions/I/INDEX/ATTEMPT")`
when it starts running; an `at` disruption draws nothing (the first running pod at its time). Two Jobs
simulated with one seed therefore meet the same disruptions (`--compare`).
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.clock import Clock, tick
from kjobs.cluster import LocalCluster
from kjobs.disrupt import Disruptor, _requests_cpu
from kjobs.simulate.model import AttemptSlots, Model, ModelError
from kjobs.testing import faults


def unused_overrides(model: Model, jobs: Sequence[Obj]) -> list[str]:
    """The overrides no pod of `jobs` (the Job, and the `--compare` one) can match, each named by its field: a
    container name none of them has (a typo would leave every container to `containers`, silently), or indexes
    where no Job is Indexed or every index is past each Job's completions. Said, not refused: one model file may
    serve several Jobs (examples/models/unreliable-nodes.yaml slows index 0, also beside NonIndexed Jobs)."""
    names: set[str] = set()
    indexed: list[int] = []
    for job in jobs:
        spec = job.get("spec") or {}
        pod_spec = (spec.get("template") or {}).get("spec") or {}
        for key in ("initContainers", "containers"):
            names.update(str(c.get("name")) for c in pod_spec.get(key) or () if isinstance(c, dict))
        if spec.get("completionMode") == "Indexed":
            indexed.append(int(spec.get("completions") or 0))
    unused = []
    for i, override in enumerate(model.overrides):
        where = f"model.overrides[{i}]"
        if override.container is not None and override.container not in names:
            unused.append(
                f"{where}.container: the Job has no container {override.container!r} "
                f"(containers: {', '.join(sorted(names))}): this override never applies"
            )
        elif override.indexes and not indexed:
            unused.append(
                f"{where}.indexes: the Job is not Indexed (spec.completionMode): its pods have no completion "
                "index, so this override never applies"
            )
        elif override.indexes and min(override.indexes) >= max(indexed):
            unused.append(
                f"{where}.indexes: every index is past the Job's completions ({max(indexed)}: indexes 0 to "
                f"{max(indexed) - 1}): this override never applies"
            )
    return unused


def check(model: Model, job: Obj) -> None:
    """Refuse a model whose disruptions could not happen to this Job (`ModelError` naming the field)."""
    for i, process in enumerate(model.disruptions):
        if process.kind == "preempt" and not _requests_cpu(job):
            name = (job.get("metadata") or {}).get("name")
            raise ModelError(
                f"model.disruptions[{i}].kind: preempt needs the Job's containers to request cpu "
                f"(resources.requests.cpu): Job {name}'s do not, so a higher-priority pod fits beside them and "
                "nothing is preempted"
            )


class DisruptionDriver:
    """Runs a model's disruption processes against one simulated cluster; `applied` counts events by kind."""

    def __init__(
        self,
        cluster: LocalCluster,
        model: Model,
        seed: int,
        slots: AttemptSlots,
        running: Callable[[], list[Obj]],
        clock: Clock,
    ) -> None:
        self.cluster = cluster
        self.model = model
        self.seed = seed
        self.slots = slots
        self.running = running
        self.clock = clock
        self.client = LocalClient(cluster.service, manager="kjobs-simulate", typed=False)
        self.applied: Counter[str] = Counter()
        self.log: list[str] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._watched: set[str] = set()
        self._replacements = 0
        self._preemptions = 0
        self._runs = asyncio.Event()
        """Set when a pod runs (`pod_running`): what a disruption `at` a time waits for, if none runs then."""

    def start(self) -> None:
        """Start each `ratePerHour` process and each disruption `at` a time (the Job has just been created)."""
        for i, process in enumerate(self.model.disruptions):
            if process.per == "hour" and process.rate > 0:
                self._spawn(self._cluster_wide(i, process.kind, process.rate))
            elif process.per == "at":
                self._spawn(self._at(process.kind, process.rate))

    def pod_running(self, pod: Obj) -> None:
        """A pod of the Job runs: start its own clock for each `ratePerPodHour` process."""
        self._runs.set()
        uid = str(pod["metadata"].get("uid"))
        slot = self.slots.slot(pod)
        if uid in self._watched or slot is None:
            return
        self._watched.add(uid)
        index, attempt = slot
        for i, process in enumerate(self.model.disruptions):
            if process.per == "pod-hour" and process.rate > 0:
                rng = random.Random(f"{self.seed}/disruptions/{i}/{index if index is not None else 'pod'}/{attempt}")
                self._spawn(self._per_pod(process.kind, uid, rng.expovariate(process.rate / 3600.0)))

    async def stop(self) -> None:
        """Cancel whatever is still scheduled."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _ordered(self) -> list[Obj]:
        def order(pod: Obj) -> tuple[int, int]:
            index, attempt = self.slots.slot(pod) or (None, 0)
            return (index if index is not None else -1, attempt)

        return sorted(self.running(), key=order)

    async def _cluster_wide(self, number: int, kind: str, rate: float) -> None:
        rng = random.Random(f"{self.seed}/disruptions/{number}")
        while True:
            await tick(self.clock, rng.expovariate(rate / 3600.0))  # a no-op while no pod runs
            pick = rng.random()
            pods = self._ordered()
            if pods:
                self._spawn(self.apply(kind, pods[int(pick * len(pods))]))

    async def _at(self, kind: str, delay: float) -> None:
        """`kjobs run --disrupt KIND@TIME`'s `apply_at` on virtual time: at `delay`, or once a pod runs after it,
        the first running pod (by completion index and attempt)."""
        await self.clock.sleep(delay)
        while not (pods := self._ordered()):
            self._runs.clear()
            await self._runs.wait()
        await self.apply(kind, pods[0])

    async def _per_pod(self, kind: str, uid: str, delay: float) -> None:
        await self.clock.sleep(delay)
        pod = next((p for p in self.running() if p["metadata"].get("uid") == uid), None)
        if pod is not None:
            await self.apply(kind, pod)

    async def apply(self, kind: str, pod: Obj) -> None:
        """Disrupt `pod` (its node for node-wide kinds) now, through the component that does it on a cluster."""
        node = str(pod["spec"].get("nodeName") or "")
        agent = next((a for a in self.cluster.agents if a.name == node), None)
        if agent is None:
            return
        self.applied[kind] += 1
        disruptor = Disruptor(self.client, self.running, self.log.append, self.clock)
        try:
            if kind == "node-loss":
                self.cluster.agents.remove(agent)
                await faults.delete_node(self.client, agent, node)
                await self._replace()
            elif kind == "node-pressure":
                await self._pressure(agent, pod)
            elif kind == "preempt":
                self._preemptions += 1
                disruptor.number = self._preemptions
                await disruptor.preempt(node)
            else:
                await disruptor.apply(kind, pod)
                if kind == "node-shutdown":
                    await self._replace()
        except ApiError as exc:
            self.log.append(f"{kind} on node/{node}: {exc.message}")

    async def _replace(self) -> None:
        self._replacements += 1
        await self.cluster.add_node(f"{self.cluster.settings.node_prefix}-replacement-{self._replacements}")

    async def _pressure(self, agent: Any, pod: Obj) -> None:
        monitor = agent.memory_monitor
        capacity = monitor.capacity_bytes
        containers = (pod.get("spec") or {}).get("containers") or ()
        monitor.available_bytes = 0
        monitor.pods = {str(pod["metadata"]["uid"]): {str(c.get("name")): capacity for c in containers}}
        try:
            await agent.check_memory()
        finally:
            monitor.available_bytes = capacity
            monitor.pods = {}
