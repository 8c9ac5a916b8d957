"""Upstream rows of pkg/controller/podgc/gc_controller_test.go, run against kjobs' pod GC.

As upstream, the controller's informer caches are filled by hand (the pods are also in the API, so its writes
land), one pass `gc()` runs, and the pods it patched and deleted are read from the recorded client actions.
Upstream's `testPod` on `deletedNode` are `test-pod` on `deleted-node` here: a real API server validates names,
the fake clientset does not. Rows, and those left out: docs/upstream-components.md.
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.resources import NODES, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.podgc import PodGCController, PodGCSettings
from kjobs.controllers.podgc import _sort as sort_pods
from tests.controllers.disruption_support import condition, node_manifest, pod_manifest
from tests.controllers.upstream_support import Recording
from tests.support import local_api

QUARANTINE = 40.0


@dataclass(frozen=True)
class P:
    """A pod of a row: name, phase ("" = as created), node, whether it is terminating, its status reason."""

    name: str
    phase: str = ""
    node: str = "node"
    deleting: bool = False
    reason: str = ""


@dataclass
class Cluster:
    clock: FakeClock
    client: Recording
    controller: PodGCController
    pods: dict[str, Obj] = field(default_factory=dict)


async def cluster(threshold: int, pods: list[P], *, api_nodes: tuple[str, ...] = ()) -> Cluster:
    """An API holding `pods` (created an hour apart, as upstream) and `api_nodes`; a controller whose pod cache
    holds the pods (terminating ones marked so) and whose node cache is empty (`informer_nodes` fills it)."""
    clock = FakeClock()
    raw = await local_api(clock)
    for name in api_nodes:
        await raw.create(NODES, None, node_manifest(name, clock))
    client = Recording(raw)
    controller = PodGCController(client, clock=clock, settings=PodGCSettings(terminated_pod_threshold=threshold))  # type: ignore[arg-type]
    made = Cluster(clock, client, controller)
    for spec in pods:
        clock.advance(3600)
        await raw.create(PODS, "default", pod_manifest(spec.name, spec.node or None))
        pod = await raw.get(PODS, "default", spec.name)
        if spec.phase and spec.phase != "Pending":
            pod["status"]["phase"] = spec.phase
            if spec.reason:
                pod["status"]["reason"] = spec.reason
            pod = await raw.update(PODS, "default", pod, subresource="status")
        cached = copy.deepcopy(pod)
        if spec.deleting:
            cached["metadata"]["deletionTimestamp"] = format_time(clock.now())
        controller.pods.cache[("default", spec.name)] = cached
        made.pods[spec.name] = cached
    return made


def informer_nodes(made: Cluster, *nodes: Obj) -> None:
    for node in nodes:
        made.controller.nodes.cache[("", node["metadata"]["name"])] = node


def forced(made: Cluster, reason: str) -> float:
    value = made.controller.metrics.registry.get_sample_value(
        "pod_gc_collector_force_delete_pods_total", {"namespace": "default", "reason": reason}
    )
    return value or 0.0


def check(made: Cluster, deleted: set[str], patched: set[str], reason: str) -> None:
    """`verifyDeletedAndPatchedPods` and `testDeletingPodsMetrics`."""
    assert made.client.names("delete") == deleted
    assert made.client.names("patch") == patched
    assert forced(made, reason) == len(deleted)
    for action in made.client.of("delete"):
        assert action.options.get("grace_period_seconds") == 0  # metav1.NewDeleteOptions(0)


# ------------------------------------------------------------------------------------------ TestGCTerminated

EVICTED = "Evicted"  # pkg/kubelet/eviction.Reason

GC_TERMINATED = [
    pytest.param(
        [P("a", "Failed"), P("b", "Succeeded"), P("c", "Failed")],
        1,
        {"a", "b"},
        id="delete pod a which is PodFailed and pod b which is PodSucceeded",
    ),
    pytest.param(
        [P("a", "Failed"), P("b", "Succeeded")], 0, set(), id="threshold = 0, disables terminated pod deletion"
    ),
    pytest.param(
        [P("a", "Failed"), P("b", "Succeeded"), P("c", "Failed")],
        1,
        {"a", "b"},
        id="threshold = 1, delete pod a which is PodFailed and pod b which is PodSucceeded",
    ),
    pytest.param(
        [P("a", "Running"), P("b", "Succeeded"), P("c", "Failed")],
        1,
        {"b"},
        id="threshold = 1, delete pod b which is PodSucceeded",
    ),
    pytest.param(
        [P("a", "Failed"), P("b", "Succeeded")], 1, {"a"}, id="threshold = 1, delete pod a which is PodFailed"
    ),
    pytest.param([P("a", "Failed"), P("b", "Succeeded")], 5, set(), id="threshold = 5, don't delete pod"),
    pytest.param(
        [P("a", "Failed"), P("b", "Succeeded"), P("c", "Failed", reason=EVICTED)],
        1,
        {"c", "a"},
        id="unnamed row 7: an evicted pod goes first",
    ),
    pytest.param(
        [P("a", "Running"), P("b", "Succeeded"), P("c", "Failed", reason=EVICTED)],
        1,
        {"c"},
        id="unnamed row 8: the evicted pod goes before an older succeeded one",
    ),
]


@pytest.mark.parametrize(("pods", "threshold", "deleted"), GC_TERMINATED)
def test_gc_terminated(pods: list[P], threshold: int, deleted: set[str]) -> None:
    async def scenario() -> None:
        made = await cluster(threshold, pods, api_nodes=("node",))
        informer_nodes(made, node_manifest("node", made.clock))
        await made.controller.gc()
        check(made, deleted, set(), "terminated")  # terminal pods are deleted without a status patch

    asyncio.run(scenario())


# ------------------------------------------------------------------------------------------- TestGCOrphaned


@dataclass(frozen=True)
class OrphanRow:
    pods: list[P]
    delay: float
    deleted: set[str] = field(default_factory=set)
    patched: set[str] = field(default_factory=set)
    client_nodes: tuple[str, ...] = ()
    informer_nodes: tuple[str, ...] = ()
    added_client: tuple[str, ...] = ()
    deleted_client: tuple[str, ...] = ()
    added_informer: tuple[str, ...] = ()
    deleted_informer: tuple[str, ...] = ()


GC_ORPHANED = [
    pytest.param(
        OrphanRow(
            [P("a", "Running", "existing1"), P("b", "Failed", "existing2"), P("c", "Succeeded", "existing2")],
            2 * QUARANTINE,
            informer_nodes=("existing1", "existing2"),
        ),
        id="nodes present in lister",
    ),
    pytest.param(
        OrphanRow(
            [P("a", "Running", "existing1"), P("b", "Failed", "existing2"), P("c", "Succeeded", "existing2")],
            2 * QUARANTINE,
            client_nodes=("existing1", "existing2"),
        ),
        id="nodes present in client",
    ),
    pytest.param(
        OrphanRow([P("a", "Failed", "deleted"), P("b", "Succeeded", "deleted")], 2 * QUARANTINE, {"a", "b"}),
        id="no nodes",
    ),
    pytest.param(
        OrphanRow(
            [P("a", "Failed", "deleted"), P("b", "Succeeded", "deleted"), P("c", "Running", "deleted")],
            2 * QUARANTINE,
            {"a", "b", "c"},
            {"c"},
        ),
        id="no nodes, one running pod",
    ),
    pytest.param(OrphanRow([P("a", "Failed", "deleted")], QUARANTINE / 2), id="quarantine not finished"),
    pytest.param(
        OrphanRow([P("a", "Running", "deleted")], 2 * QUARANTINE, {"a"}, {"a"}, informer_nodes=("existing",)),
        id="wrong nodes",
    ),
    pytest.param(
        OrphanRow(
            [
                P("a", "Failed", "deleted"),
                P("b", "Failed", "existing"),
                P("c", "Succeeded", "deleted"),
                P("d", "Running", "deleted"),
            ],
            2 * QUARANTINE,
            {"a", "c", "d"},
            {"d"},
            informer_nodes=("existing",),
        ),
        id="some nodes missing",
    ),
    pytest.param(
        OrphanRow([P("a", "Running", "node")], 2 * QUARANTINE, added_client=("node",)),
        id="node added to client after quarantine",
    ),
    pytest.param(
        OrphanRow([P("a", "Failed", "node")], 2 * QUARANTINE, added_informer=("node",)),
        id="node added to informer after quarantine",
    ),
    pytest.param(
        OrphanRow([P("a", "Failed", "node")], 2 * QUARANTINE, {"a"}, client_nodes=("node",), deleted_client=("node",)),
        id="node deleted from client after quarantine",
    ),
    pytest.param(
        OrphanRow([P("a", "Succeeded", "node")], 2 * QUARANTINE, informer_nodes=("node",), deleted_informer=("node",)),
        id="node deleted from informer after quarantine",
    ),
]


@pytest.mark.parametrize("row", GC_ORPHANED)
def test_gc_orphaned(row: OrphanRow) -> None:
    async def scenario() -> None:
        made = await cluster(-1, row.pods, api_nodes=row.client_nodes)
        informer_nodes(made, *(node_manifest(n, made.clock) for n in row.informer_nodes))
        await made.controller.gc()
        assert made.client.names("delete") == set()  # a missing node is quarantined first
        made.clock.advance(row.delay)
        for name in row.added_client:
            await made.client.client.create(NODES, None, node_manifest(name, made.clock))
        for name in row.deleted_client:
            await made.client.client.delete(NODES, None, name)
        informer_nodes(made, *(node_manifest(n, made.clock) for n in row.added_informer))
        for name in row.deleted_informer:
            del made.controller.nodes.cache[("", name)]
        await made.controller.gc()
        check(made, row.deleted, row.patched, "orphaned")
        for name in row.patched:  # a pod not yet terminal is failed, with the reason it was killed
            patch = next(a.body for a in made.client.of("patch") if a.name == name)
            assert patch["status"]["phase"] == "Failed"
            target = next(c for c in patch["status"]["conditions"] if c["type"] == "DisruptionTarget")
            assert (target["status"], target["reason"], target["message"]) == (
                "True",
                "DeletionByPodGC",
                "PodGC: node no longer exists",
            )

    asyncio.run(scenario())


# ------------------------------------------------------------------------------ TestGCUnscheduledTerminating

GC_UNSCHEDULED_TERMINATING = [
    pytest.param(
        [P("a", "Failed", "", True), P("b", "Succeeded", "", True), P("c", "Running", "", True)],
        {"a", "b", "c"},
        {"c"},
        id="Unscheduled pod in any phase must be deleted",
    ),
    pytest.param(
        [P("a", "Failed", ""), P("b", "Succeeded", "node"), P("c", "Running", "node", True)],
        set(),
        set(),
        id="Scheduled pod in any phase must not be deleted",
    ),
]


@pytest.mark.parametrize(("pods", "deleted", "patched"), GC_UNSCHEDULED_TERMINATING)
def test_gc_unscheduled_terminating(pods: list[P], deleted: set[str], patched: set[str]) -> None:
    async def scenario() -> None:
        made = await cluster(-1, pods)
        await made.controller._gc_unscheduled_terminating(sort_pods(made.controller.pods.list()).deleting)
        check(made, deleted, patched, "unscheduled")
        for name in patched:  # no node died: failed, but no DisruptionTarget
            patch = next(a.body for a in made.client.of("patch") if a.name == name)
            assert patch["status"] == {"phase": "Failed"}

    asyncio.run(scenario())


# ----------------------------------------------------------------------------------------- TestGCTerminating

OOS = "node.kubernetes.io/out-of-service"


def _worker_pods(n: int, node: str) -> list[P]:
    return [
        P(f"a{n}", "", node),
        P(f"b{n}", "", node, True),
        P(f"c{n}", "Pending", node),
        P(f"d{n}", "Running", node),
        P(f"e{n}", "Unknown", node),
    ]


MIXED_NODES = [
    ("worker-0", "False", [{"key": OOS, "effect": "NoExecute"}]),
    ("worker-1", "False", []),
    ("worker-2", "True", []),
    ("worker-3", "False", [{"key": OOS, "effect": "NoSchedule"}]),
    ("worker-4", "False", [{"key": OOS, "effect": "PreferNoSchedule"}]),
    ("worker-5", "False", [{"key": OOS, "value": "any-value", "effect": "NoExecute"}]),
]
MIXED_PODS = [p for i, (node, _, _) in enumerate(MIXED_NODES) for p in _worker_pods(i + 1, node)]
MIXED_PODS[20] = P("a5", "", "worker-3")  # upstream's row puts a5 on worker-3 ("pods a5 ... are on node worker-4")

GC_TERMINATING = [
    pytest.param(
        [("worker-0", "False", []), ("worker-1", "False", [])],
        [P("a", "", "worker-0", True), P("b", "", "worker-1", True)],
        set(),
        set(),
        id="pods have deletion timestamp set and the corresponding nodes are not ready",
    ),
    pytest.param(
        MIXED_NODES,
        MIXED_PODS,
        {"b1", "b4", "b5", "b6"},
        {"b1", "b4", "b5", "b6"},
        id="some pods have deletion timestamp and/or phase set and some of the corresponding nodes have an"
        "outofservice taint that are not ready",
    ),
    pytest.param(
        [("worker", "False", [{"key": OOS, "effect": "NoExecute"}])],
        [P("a", "Running", "worker", True), P("b", "Failed", "worker", True), P("c", "Succeeded", "worker", True)],
        {"a", "b", "c"},
        {"a"},
        id="pods deleted from node tainted out-of-service",
    ),
]


@pytest.mark.parametrize(("nodes", "pods", "deleted", "patched"), GC_TERMINATING)
def test_gc_terminating(
    nodes: list[tuple[str, str, list[Obj]]], pods: list[P], deleted: set[str], patched: set[str]
) -> None:
    async def scenario() -> None:
        made = await cluster(-1, pods)
        for name, ready, taints in nodes:
            node = node_manifest(name, made.clock, ready=ready)
            node["spec"] = {"taints": taints}
            informer_nodes(made, node)
        await made.controller.gc()
        check(made, deleted, patched, "out-of-service")

    asyncio.run(scenario())


# ---------------------------------------------------------------------- TestGCInspectingPatchedPodBeforeDeletion


def test_gc_inspecting_patched_pod_before_deletion_orphaned_pod_should_have_disruption_target_condition_added() -> None:
    """Row "orphaned pod should have DisruptionTarget condition added before deletion": the patched pod keeps
    its other conditions, gains the DisruptionTarget, is Failed, and is then deleted with grace 0."""

    async def scenario() -> None:
        made = await cluster(-1, [P("test-pod", "Running", "deleted-node")])
        raw: Any = made.client.client
        pod = await raw.get(PODS, "default", "test-pod")
        pod["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
        await raw.update(PODS, "default", pod, subresource="status")
        made.controller.pods.cache[("default", "test-pod")] = await raw.get(PODS, "default", "test-pod")
        made.controller.settings = PodGCSettings(quarantine=-1)
        await made.controller.gc()
        patches = made.client.of("patch")
        assert [a.name for a in patches] == ["test-pod"]
        status = patches[0].body["status"]
        assert status["phase"] == "Failed"
        merged = {c["type"]: c for c in pod["status"]["conditions"]}
        for c in status.get("conditions") or []:
            merged[c["type"]] = c
        assert {t: (c["status"], c.get("reason"), c.get("message")) for t, c in merged.items()} == {
            "Ready": ("True", None, None),
            "DisruptionTarget": ("True", "DeletionByPodGC", "PodGC: node no longer exists"),
        }
        assert [(a.name, a.options) for a in made.client.of("delete")] == [("test-pod", {"grace_period_seconds": 0})]
        assert made.client.actions.index(patches[0]) < made.client.actions.index(made.client.of("delete")[0])

    asyncio.run(scenario())


def test_gc_inspecting_patched_pod_before_deletion_the_api_keeps_the_condition_on_a_held_pod() -> None:
    """The same row read back from the API instead of the patch: a pod a finalizer holds shows what PodGC did."""

    async def scenario() -> None:
        clock = FakeClock()
        raw = await local_api(clock)
        body = pod_manifest("test-pod", "deleted-node")
        body["metadata"]["finalizers"] = ["example.com/hold"]
        await raw.create(PODS, "default", body)
        pod = await raw.get(PODS, "default", "test-pod")
        pod["status"].update(phase="Running", conditions=[{"type": "Ready", "status": "True"}])
        pod = await raw.update(PODS, "default", pod, subresource="status")
        controller = PodGCController(raw, clock=clock, settings=PodGCSettings(quarantine=-1))
        controller.pods.cache[("default", "test-pod")] = pod
        await controller.gc()
        after = await raw.get(PODS, "default", "test-pod")
        assert after["status"]["phase"] == "Failed"
        unset = {"lastProbeTime": None, "lastTransitionTime": None}  # Go's zero times (`kjobs.server.zerotimes`)
        assert condition(after, "Ready") == {"type": "Ready", "status": "True", **unset}
        target = condition(after, "DisruptionTarget")
        assert target is not None
        assert (target["status"], target["reason"], target["message"]) == (
            "True",
            "DeletionByPodGC",
            "PodGC: node no longer exists",
        )
        assert after["metadata"]["deletionGracePeriodSeconds"] == 0

    asyncio.run(scenario())
