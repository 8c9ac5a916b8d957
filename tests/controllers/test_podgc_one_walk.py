"""Pod GC's pass reads the listed pods in one walk (`_sort`, docs/perf47.md): it makes the same calls, in the same
order, with the same bodies, and leaves the same quarantine as the pass that walked the pods once per step (kept
below as `PlainPodGC`, the code it replaced), over pods of every phase, being deleted or not, bound to ready, not
ready, out-of-service, missing and deleted nodes or to none, with fields absent, null or of odd values."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.conditions import DELETION_BY_POD_GC, disruption_target
from kjobs.api.errors import ApiError
from kjobs.api.taints import TAINT_OUT_OF_SERVICE, taints_of
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.informer import key_of
from kjobs.clock import FakeClock
from kjobs.controllers.nodehealth import is_ready
from kjobs.controllers.podgc import (
    REASON_ORPHANED,
    REASON_TERMINATED,
    REASON_TERMINATING_OUT_OF_SERVICE,
    REASON_TERMINATING_UNSCHEDULED,
    PodGCController,
    PodGCSettings,
    collection_order,
    is_terminated,
)
from kjobs.job import pods as P
from tests.hypothesis_budget import examples


class PlainPodGC(PodGCController):
    """The pass as it was before `_sort`: each step walks every listed pod itself."""

    async def gc(self) -> None:
        pods = self.pods.list()
        nodes = {key_of(n)[1]: n for n in self.nodes.list()}
        if self.settings.terminated_pod_threshold > 0:
            terminated = [p for p in pods if is_terminated(p)]
            excess = len(terminated) - self.settings.terminated_pod_threshold
            if excess > 0:
                terminated.sort(key=collection_order)
                await asyncio.gather(*(self._collect(p, REASON_TERMINATED) for p in terminated[:excess]))
        chosen = []
        for pod in pods:
            if not P.is_deleting(pod):
                continue
            node = nodes.get(str((pod.get("spec") or {}).get("nodeName") or ""))
            if node is None:
                continue
            if not is_ready(node) and any(t.get("key") == TAINT_OUT_OF_SERVICE for t in taints_of(node)):
                chosen.append(pod)
        chosen.sort(key=collection_order)
        await asyncio.gather(*(self._collect(p, REASON_TERMINATING_OUT_OF_SERVICE) for p in chosen))
        now = self.clock.now()
        for pod in pods:
            node_name = str((pod.get("spec") or {}).get("nodeName") or "")
            if node_name and node_name not in nodes:
                self.quarantined.setdefault(node_name, now + self.settings.quarantine)
        deleted: set[str] = set()
        for name, due in sorted(self.quarantined.items()):
            if due > now:
                continue
            del self.quarantined[name]
            if name in nodes:
                continue
            try:
                await self.client.get(None, None, name)  # type: ignore[arg-type]
            except ApiError as exc:
                if exc.code == 404:
                    deleted.add(name)
        for pod in pods:
            if str((pod.get("spec") or {}).get("nodeName") or "") in deleted:
                await self._collect(pod, REASON_ORPHANED, disruption_target(DELETION_BY_POD_GC))
        for pod in pods:
            if P.is_deleting(pod) and not (pod.get("spec") or {}).get("nodeName"):
                await self._collect(pod, REASON_TERMINATING_UNSCHEDULED)


class Listed:
    """An informer's `list()` (and nothing else the pass reads)."""

    def __init__(self, objects: list[Obj]) -> None:
        self.objects = objects

    def list(self) -> list[Obj]:
        return list(self.objects)


class Calls:
    """A client noting each call; a node GET answers 404 for `gone`, 500 for `failing`, else the node."""

    def __init__(self, pods: list[Obj]) -> None:
        self.pods = pods
        self.calls: list[tuple[Any, ...]] = []

    async def get(self, _resource: Any, _namespace: str | None, name: str) -> Obj:
        self.calls.append(("get", name))
        if name.startswith("gone"):
            raise ApiError(404, "NotFound", f'nodes "{name}" not found')
        if name.startswith("failing"):
            raise ApiError(500, "InternalError", "no")
        return {"metadata": {"name": name}}

    async def patch(self, _resource: Any, namespace: str | None, name: str, patch: Obj, **kw: Any) -> Obj:
        self.calls.append(("patch", namespace, name, repr(patch), repr(sorted(kw.items()))))
        return {}

    async def delete(self, _resource: Any, namespace: str | None, name: str, **kw: Any) -> Obj:
        known = kw.pop("known", None)
        which = next((i for i, p in enumerate(self.pods) if p is known), None)
        self.calls.append(("delete", namespace, name, repr(sorted(kw.items())), which))
        return {}


NODE_NAMES = ["n-ready", "n-down", "n-down-oos", "n-ready-oos", "gone-1", "gone-2", "failing-1"]
"""Nodes the informer holds (`n-...`: Ready or not, with the out-of-service taint or not) and nodes it does not."""


def node(name: str) -> Obj:
    ready = "ready" in name
    taints = [{"key": TAINT_OUT_OF_SERVICE, "effect": "NoExecute"}] if name.endswith("oos") else []
    return {
        "metadata": {"name": name},
        "spec": {"taints": taints},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


ABSENT = object()

values = st.sampled_from


@st.composite
def pod(draw: st.DrawFn, number: int) -> Obj:
    metadata: Obj = {"name": draw(values([f"p{number}", f"q{number}"])), "namespace": "default"}
    created = draw(values([ABSENT, None, "", 100.0, 200.0, 300.0]))
    if created is not ABSENT:
        metadata["creationTimestamp"] = format_time(created) if isinstance(created, float) else created
    deletion = draw(values([ABSENT, None, "", "2026-01-01T00:00:00Z"]))
    if deletion is not ABSENT:
        metadata["deletionTimestamp"] = deletion
    obj: Obj = {"metadata": metadata}
    spec = draw(values([ABSENT, None, "empty", *NODE_NAMES, "", 0]))
    if spec == "empty":
        obj["spec"] = {}
    elif spec is not ABSENT:
        obj["spec"] = {"nodeName": spec}
    phase = draw(values([ABSENT, None, "", "Pending", "Running", "Unknown", "Succeeded", "Failed", "Odd"]))
    if phase is not ABSENT:
        obj["status"] = {"phase": phase}
        if draw(st.booleans()):
            obj["status"]["reason"] = "Evicted"
    elif draw(st.booleans()):
        obj["status"] = None
    return obj


@st.composite
def cluster(draw: st.DrawFn) -> tuple[list[Obj], list[Obj], int, dict[str, float]]:
    count = draw(st.integers(0, 14))
    pods = [draw(pod(i)) for i in range(count)]
    nodes = [node(n) for n in NODE_NAMES if n.startswith("n-") and draw(st.booleans())]
    threshold = draw(values([0, 1, 2, 5]))
    quarantined = {n: draw(values([0.0, 1e12])) for n in draw(st.lists(values(NODE_NAMES), max_size=3))}
    return pods, nodes, threshold, quarantined


def run(kind: type[PodGCController], pods: list[Obj], nodes: list[Obj], threshold: int, held: dict[str, float]):
    async def passes() -> tuple[list[tuple[Any, ...]], dict[str, float]]:
        clock = FakeClock()
        client = Calls(pods)
        controller = kind(client, clock=clock, settings=PodGCSettings(terminated_pod_threshold=threshold))  # type: ignore[arg-type]
        controller.pods, controller.nodes = Listed(pods), Listed(nodes)  # type: ignore[assignment]
        controller.quarantined = {n: (clock.now() if due == 0.0 else due) for n, due in held.items()}
        await controller.gc()
        clock.advance(41)  # past the quarantine of what the first pass found
        await controller.gc()
        return client.calls, controller.quarantined

    return asyncio.run(passes())


@settings(max_examples=examples(400), deadline=None)
@given(cluster())
def test_a_pass_makes_the_calls_the_walk_per_step_made(
    case: tuple[list[Obj], list[Obj], int, dict[str, float]],
) -> None:
    pods, nodes, threshold, quarantined = case
    assert run(PodGCController, pods, nodes, threshold, quarantined) == run(
        PlainPodGC, pods, nodes, threshold, quarantined
    )
