"""`kjobs run --disrupt KIND@TIME`: disrupt a running Job through the cluster's real components.

Each kind does what an administrator or the cluster itself does, through the API, and lets the controllers and
node agents react as they do in tests/e2e/test_disruptions.py:
* `drain`: what `kubectl drain` does (cordon, then the Eviction API on each pod of the node), then
  `kubectl uncordon` once the evicted pods have stopped, so that replacements can run on a single node;
* `evict`: the Eviction API on one running pod of the Job (`DisruptionTarget`/`EvictionByEvictionAPI`);
* `taint`: a NoExecute taint on a node → the taint eviction controller (`DeletionByTaintManager`), removed again
  once the node's pods have stopped;
* `preempt`: a pod of a higher PriorityClass asking for the node's whole CPU → the scheduler preempts
  (`PreemptionByScheduler`); the Job's pods must request some CPU, or it fits beside them;
* `node-shutdown`: the graceful node shutdown of `kjobs node shutdown` (`TerminationByKubelet`); that node takes
  no pods afterwards, so it needs a second node.
TIME counts from the Job's creation; a disruption waits for a running pod of the Job to land on.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.resources import NODES, PODS, PRIORITY_CLASSES
from kjobs.clock import Clock, RealClock
from kjobs.node.nodestatus import HOSTNAME_LABEL
from kjobs.node.shutdown import request_shutdown

KINDS = ("drain", "evict", "taint", "preempt", "node-shutdown")
TAINT_KEY = "kjobs.io/disruption"
PREEMPTOR_CLASS = "kjobs-preemptor"
PREEMPTOR_PRIORITY = 1_000_000
STOP_TIMEOUT = 60.0
"""Seconds a drain or taint waits for the pods it disrupted to stop before it undoes the cordon or taint."""

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


class DisruptionError(ValueError):
    """A `--disrupt` value that cannot be applied (unknown kind, bad time, a Job it cannot work on)."""


@dataclass(frozen=True)
class Disruption:
    """One `--disrupt KIND@TIME`."""

    kind: str
    at: float
    text: str


def parse_duration(text: str) -> float:
    """Seconds in a Go-style duration (`1s`, `500ms`, `1m30s`) or a plain number of seconds."""
    try:
        value = float(text)
    except ValueError:
        pass
    else:
        if value >= 0:
            return value
        raise DisruptionError(f"invalid time {text!r}: must not be negative")
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise DisruptionError(f"invalid time {text!r}: use a duration such as 1s, 500ms or 1m30s")
    return sum(float(number) * _UNITS[unit] for number, unit in parts)


def parse(text: str) -> Disruption:
    """`drain@1s` → Disruption("drain", 1.0, "drain@1s"); a bare KIND applies at once."""
    kind, _, at = text.partition("@")
    if kind not in KINDS:
        raise DisruptionError(f"unknown disruption {kind!r}: choose from {', '.join(KINDS)}")
    return Disruption(kind, parse_duration(at) if at else 0.0, text)


def check(disruptions: list[Disruption], job: Obj, nodes: int) -> None:
    """Refuse disruptions that could not do what they promise on this Job and cluster."""
    kinds = {d.kind for d in disruptions}
    if "node-shutdown" in kinds and nodes < 2:
        raise DisruptionError("node-shutdown needs --nodes 2 or more: a node that shut down takes no new pods")
    if "preempt" in kinds and not _requests_cpu(job):
        raise DisruptionError(
            "preempt needs the Job's containers to request cpu (resources.requests.cpu): "
            "otherwise a higher-priority pod fits beside them and nothing is preempted"
        )


def _requests_cpu(job: Obj) -> bool:
    spec = ((job.get("spec") or {}).get("template") or {}).get("spec") or {}
    containers = list(spec.get("containers") or ()) + list(spec.get("initContainers") or ())
    return any(((c.get("resources") or {}).get("requests") or {}).get("cpu") for c in containers)


class Disruptor:
    """Applies disruptions to the running pods `running()` returns, telling `say` each step as kubectl would."""

    def __init__(
        self,
        client: Client,
        running: Callable[[], list[Obj]],
        say: Callable[[str], None],
        clock: Clock | None = None,
    ) -> None:
        self.client = client
        self.clock: Clock = clock or RealClock()
        """Times the bounded waits for disrupted pods to stop (a `FakeClock` in `kjobs simulate`)."""
        self.running = running
        self.say = say
        self.number = 1
        """Names this disruption's own objects (the preemptor pod)."""
        self._started: set[Disruption] = set()

    def started(self, disruption: Disruption) -> bool:
        """Whether `disruption` has begun (found its running pod)."""
        return disruption in self._started

    async def apply_at(self, disruption: Disruption, start: float) -> None:
        """Wait until `disruption.at` seconds after `start` (time.monotonic) and a running pod, then apply it,
        each line it says prefixed with `disrupt KIND@TIME:`."""
        await asyncio.sleep(max(0.0, start + disruption.at - time.monotonic()))
        while not (pods := self.running()):
            await asyncio.sleep(0.05)
        self._started.add(disruption)
        say = self.say
        step = Disruptor(self.client, self.running, lambda line: say(f"disrupt {disruption.text}: {line}"), self.clock)
        step.number = len(self._started)
        try:
            await step.apply(disruption.kind, pods[0])
        except ApiError as exc:
            step.say(f"error: {exc.message}")

    async def apply(self, kind: str, pod: Obj) -> None:
        """Disrupt `pod` (and, for node-wide kinds, its node) now."""
        node = str(pod["spec"]["nodeName"])
        if kind == "drain":
            await self.drain(node)
        elif kind == "evict":
            await self.evict(pod)
        elif kind == "taint":
            await self.taint(node)
        elif kind == "preempt":
            await self.preempt(node)
        else:
            await request_shutdown(self.client, node)
            self.say(f"node/{node} shutdown requested (graceful node shutdown)")

    async def evict(self, pod: Obj) -> bool:
        """POST an Eviction, as `kubectl drain` does for each pod; False when the API refuses it."""
        meta = pod["metadata"]
        self.say(f"evicting pod {meta['namespace']}/{meta['name']}")
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {k: meta[k] for k in ("name", "namespace")}}
        try:
            await self.client.post_subresource(PODS, meta["namespace"], meta["name"], "eviction", body)
        except ApiError as exc:
            self.say(f'error when evicting pods/"{meta["name"]}" -n "{meta["namespace"]}": {exc.message}')
            return False
        return True

    async def drain(self, node: str) -> None:
        """`kubectl drain NODE` then, once its pods have stopped, `kubectl uncordon NODE`."""
        await self.client.patch(NODES, None, node, {"spec": {"unschedulable": True}})
        self.say(f"node/{node} cordoned")
        evicted = [pod for pod in await self._live_pods(node) if await self.evict(pod)]
        await self._stopped(evicted, announce=True, deleted=True)
        self.say(f"node/{node} drained")
        await self.client.patch(NODES, None, node, {"spec": {"unschedulable": None}})
        self.say(f"node/{node} uncordoned")

    async def taint(self, node: str) -> None:
        """A NoExecute taint (`kubectl taint node NODE kjobs.io/disruption=taint:NoExecute`), removed again once
        the pods it evicts have stopped."""
        pods = await self._live_pods(node)
        taint = {"key": TAINT_KEY, "value": "taint", "effect": "NoExecute"}
        await self._set_taints(node, lambda taints: [*taints, taint])
        self.say(f"node/{node} tainted {TAINT_KEY}=taint:NoExecute")
        await self._stopped(pods, announce=False, deleted=False)
        await self._set_taints(node, lambda taints: [t for t in taints if t.get("key") != TAINT_KEY])
        self.say(f"node/{node} untainted")

    async def preempt(self, node: str) -> None:
        """Create a pod of priority `PREEMPTOR_PRIORITY` that asks for all of `node`'s CPU for a second."""
        try:
            await self.client.create(
                PRIORITY_CLASSES,
                None,
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": PREEMPTOR_CLASS},
                    "value": PREEMPTOR_PRIORITY,
                    "description": "kjobs run --disrupt preempt",
                },
            )
        except ApiError as exc:
            if exc.reason != "AlreadyExists":
                raise
        cpu = str(((await self.client.get(NODES, None, node)).get("status") or {}).get("allocatable", {}).get("cpu"))
        name = f"kjobs-preemptor-{self.number}"
        spec: Obj = {
            "restartPolicy": "Never",
            "priorityClassName": PREEMPTOR_CLASS,
            "nodeSelector": {HOSTNAME_LABEL: node},
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "main",
                    "image": "docker.io/library/bash:5",
                    "command": ["sh", "-c", "sleep 1"],
                    "resources": {"requests": {"cpu": cpu}},
                }
            ],
        }
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}
        await self.client.create(PODS, "default", pod)
        self.say(f"pod/{name} created (priority {PREEMPTOR_PRIORITY}, cpu {cpu} on node/{node})")

    async def _live_pods(self, node: str) -> list[Obj]:
        pods, _ = await self.client.list(PODS, None, field_selector=f"spec.nodeName={node}")
        return [p for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]

    async def _set_taints(self, node: str, change: Callable[[list[Obj]], list[Obj]]) -> None:
        current = await self.client.get(NODES, None, node)
        taints = list((current.get("spec") or {}).get("taints") or ())
        await self.client.patch(NODES, None, node, {"spec": {"taints": change(taints) or None}})

    async def _stopped(self, pods: list[Obj], *, announce: bool, deleted: bool) -> None:
        """Wait (bounded) until each pod is gone or, unless `deleted` is asked, has ended (Succeeded/Failed);
        `announce` says so per pod, as kubectl drain prints `pod/NAME evicted`.

        A drain waits for deletion as kubectl's `waitForDelete` does (k8s.io/kubectl/pkg/drain/drain.go: the pod
        is not found, or a new one has its name): a Job's pod is gone only once the Job controller has counted it
        and removed its tracking finalizer, so the drain is over after the Job has seen what it did."""
        deadline = self.clock.now() + STOP_TIMEOUT
        waiting = list(pods)
        while waiting and self.clock.now() < deadline:
            for pod in list(waiting):
                meta = pod["metadata"]
                try:
                    current = await self.client.get(PODS, meta["namespace"], meta["name"])
                except ApiError as exc:
                    if exc.reason != "NotFound":
                        raise
                    current = None
                ended = current is None or current["metadata"].get("uid") != meta.get("uid")
                if ended or (not deleted and (current or {}).get("status", {}).get("phase") in ("Succeeded", "Failed")):
                    waiting.remove(pod)
                    if announce:
                        self.say(f"pod/{meta['name']} evicted")
            if waiting:
                await self.clock.sleep(0.1)
