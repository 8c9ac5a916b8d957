"""Upstream rows of pkg/controller/tainteviction/taint_eviction_test.go, run against kjobs' taint eviction.

Upstream calls the controller's `PodUpdated`/`NodeUpdated` handlers with objects it made up; here the same
changes go through the API (create, bind, update) and reach the controller by its informers, on virtual time.
The `enablePodDisruptionConditions: false` rows expect no status patch: that gate is GA and locked on in the
Kubernetes kjobs follows, so every eviction here is a `DisruptionTarget` patch and then a delete.
Rows, and those left out: docs/upstream-components.md.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from kjobs.api.taints import FOREVER, min_toleration_seconds, no_execute_taints
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.resources import NODES, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.tainteviction import TaintEvictionController
from tests.controllers.disruption_support import condition, events_about, node_manifest, pod_manifest
from tests.controllers.upstream_support import Recording, run_for
from tests.support import local_api, settle


def no_execute_taint(index: int, clock: FakeClock) -> Obj:
    """`createNoExecuteTaint`."""
    return {
        "key": f"testTaint{index}",
        "value": f"test{index}",
        "effect": "NoExecute",
        "timeAdded": format_time(clock.now()),
    }


def toleration(index: int, seconds: int) -> Obj:
    """`addToleration`'s toleration: for `seconds` < 0, without tolerationSeconds (forever)."""
    tol: Obj = {"key": f"testTaint{index}", "value": f"test{index}", "effect": "NoExecute"}
    if seconds >= 0:
        tol["tolerationSeconds"] = seconds
    return tol


def pod(name: str, node: str | None, *tolerations: Obj) -> Obj:
    body = pod_manifest(name, node)
    if tolerations:
        body["spec"]["tolerations"] = list(tolerations)
    return body


@dataclass
class Cluster:
    clock: FakeClock
    raw: Any
    client: Recording
    controller: TaintEvictionController
    started: float = 0.0
    notes: list[str] = field(default_factory=list)

    async def node(self, name: str, *taint_indices: int) -> None:
        body = node_manifest(name, self.clock)
        body["spec"] = {"taints": [no_execute_taint(i, self.clock) for i in taint_indices]}
        await self.raw.create(NODES, None, body)

    async def taint(self, name: str, *taint_indices: int) -> None:
        node = await self.raw.get(NODES, None, name)
        node["spec"] = {"taints": [no_execute_taint(i, self.clock) for i in taint_indices]}
        await self.raw.update(NODES, None, node)

    async def bind(self, name: str, node: str) -> None:
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"name": node}}
        await self.raw.post_subresource(PODS, "default", name, "binding", binding)

    def patched(self) -> bool:
        return bool(self.client.names("patch"))

    def deleted(self) -> bool:
        return bool(self.client.names("delete"))


async def cluster() -> Cluster:
    clock = FakeClock()
    raw = await local_api(clock)
    client = Recording(raw)
    controller = TaintEvictionController(client, clock=clock)  # type: ignore[arg-type]
    return Cluster(clock, raw, client, controller)


async def start(made: Cluster) -> None:
    await made.controller.start()
    made.started = made.clock.now()
    await run_for(made.clock, 0)


async def verify_pod_actions(made: Cluster, expect_patch: bool, expect_delete: bool, *, within: float = 5) -> None:
    """`verifyPodActions`: upstream polls 5 s of wall time for the actions; here 5 s of virtual time pass."""
    if expect_delete:
        await settle(made.clock, made.deleted, max_virtual=within)
    else:
        await run_for(made.clock, within)
    assert (made.patched(), made.deleted()) == (expect_patch, expect_delete)
    if expect_delete:  # the condition is patched before the delete is sent
        verbs = [a.verb for a in made.client.actions if a.resource == "pods"]
        assert verbs.index("patch") < verbs.index("delete")
        target = made.client.of("patch")[0].body["status"]["conditions"][0]
        assert (target["type"], target["status"], target["reason"], target["message"]) == (
            "DisruptionTarget",
            "True",
            "DeletionByTaintManager",
            "Taint manager: deleting due to NoExecute taint",
        )
    await made.controller.stop()


# ------------------------------------------------------------------------------------------------ TestCreatePod

CREATE_POD = [
    pytest.param(None, (), (), False, id="not scheduled - ignore"),
    pytest.param("node1", (), (), False, id="scheduled on untainted Node"),
    pytest.param("node1", (1,), (), True, id="schedule on tainted Node"),
    pytest.param("node1", (1,), (), True, id="schedule on tainted Node; PodDisruptionConditions enabled"),
    pytest.param("node1", (1,), ((1, 100),), False, id="schedule on tainted Node with finite toleration"),
    pytest.param("node1", (1,), ((1, -1),), False, id="schedule on tainted Node with infinite toleration"),
    pytest.param("node1", (1,), ((2, -1),), True, id="schedule on tainted Node with infinite ivalid toleration"),
]


@pytest.mark.parametrize(("node", "taints", "tolerations", "evicted"), CREATE_POD)
def test_create_pod(
    node: str | None, taints: tuple[int, ...], tolerations: tuple[tuple[int, int], ...], evicted: bool
) -> None:
    async def scenario() -> None:
        made = await cluster()
        await made.node("node1", *taints)
        await start(made)
        await made.raw.create(PODS, "default", pod("pod1", node, *(toleration(i, s) for i, s in tolerations)))
        await verify_pod_actions(made, evicted, evicted)

    asyncio.run(scenario())


def test_create_pod_schedule_on_tainted_node_with_finite_toleration_goes_when_it_runs_out() -> None:
    """The finite-toleration row past upstream's 5 s window: the pod goes 100 s after it met the taint."""

    async def scenario() -> None:
        made = await cluster()
        await made.node("node1", 1)
        await start(made)
        await made.raw.create(PODS, "default", pod("pod1", "node1", toleration(1, 100)))
        await settle(made.clock, made.deleted, max_virtual=101)
        assert made.clock.now() - made.started == 100
        await made.controller.stop()

    asyncio.run(scenario())


def test_delete_pod() -> None:
    """TestDeletePod: a pod deleted from a tainted node is forgotten without trouble."""

    async def scenario() -> None:
        made = await cluster()
        await made.node("node1", 1)
        await made.raw.create(PODS, "default", pod("pod1", "node1", toleration(1, 100)))
        await start(made)
        assert made.controller.scheduled("default", "pod1") == made.started + 100
        await made.raw.delete(PODS, "default", "pod1", grace_period_seconds=0)
        await run_for(made.clock, 200)
        assert made.controller.scheduled("default", "pod1") is None
        assert made.client.of("patch") + made.client.of("delete") == []
        await made.controller.stop()

    asyncio.run(scenario())


# ------------------------------------------------------------------------------------------------ TestUpdatePod


@pytest.mark.parametrize(
    ("tolerations", "evicted"),
    [
        pytest.param(
            (), True, id="scheduling onto tainted Node results in patch and delete when PodDisruptionConditions enabled"
        ),
        pytest.param((), True, id="scheduling onto tainted Node"),
        pytest.param(((1, -1),), False, id="scheduling onto tainted Node with toleration"),
    ],
)
def test_update_pod_scheduling(tolerations: tuple[tuple[int, int], ...], evicted: bool) -> None:
    async def scenario() -> None:
        made = await cluster()
        await made.node("node1", 1)
        await made.raw.create(PODS, "default", pod("pod1", None, *(toleration(i, s) for i, s in tolerations)))
        await start(made)
        await made.bind("pod1", "node1")
        await verify_pod_actions(made, evicted, evicted)

    asyncio.run(scenario())


def test_update_pod_lengthening_toleration_shouldnt_work() -> None:
    """Row "lengthening toleration shouldn't work": the eviction scheduled at 1 s keeps its time when the
    toleration grows to 100 s (`processPodOnNode` keeps a scheduled eviction that fires sooner)."""

    async def scenario() -> None:
        made = await cluster()
        await made.node("node1", 1)
        await made.raw.create(PODS, "default", pod("pod1", "node1", toleration(1, 1)))
        await start(made)
        assert made.controller.scheduled("default", "pod1") == made.started + 1  # awaitForScheduledEviction
        await run_for(made.clock, 0.5)
        current = await made.raw.get(PODS, "default", "pod1")
        current["spec"]["tolerations"] = [toleration(1, 100)]
        await made.raw.update(PODS, "default", current)
        await verify_pod_actions(made, True, True)
        assert made.clock.now() - made.started == 1

    asyncio.run(scenario())


# ----------------------------------------------------------------------------------------------- TestCreateNode

CREATE_NODE = [
    pytest.param((), (), False, id="Creating Node matching already assigned Pod"),
    pytest.param((1,), (), True, id="Creating tainted Node matching already assigned Pod"),
    pytest.param((1,), ((1, -1),), False, id="Creating tainted Node matching already assigned tolerating Pod"),
]


@pytest.mark.parametrize(("taints", "tolerations", "evicted"), CREATE_NODE)
def test_create_node(taints: tuple[int, ...], tolerations: tuple[tuple[int, int], ...], evicted: bool) -> None:
    async def scenario() -> None:
        made = await cluster()
        await made.raw.create(PODS, "default", pod("pod1", "node1", *(toleration(i, s) for i, s in tolerations)))
        await start(made)
        await made.node("node1", *taints)
        await verify_pod_actions(made, evicted, evicted)

    asyncio.run(scenario())


def test_delete_node() -> None:
    """TestDeleteNode: a deleted node's taints are forgotten (a pod bound to that name later is not evicted)."""

    async def scenario() -> None:
        made = await cluster()
        await made.node("node1", 1)
        await start(made)
        assert "node1" in made.controller.tainted
        await made.raw.delete(NODES, None, "node1")
        await run_for(made.clock, 0)
        assert "node1" not in made.controller.tainted
        await made.raw.create(PODS, "default", pod("pod1", "node1"))
        await verify_pod_actions(made, False, False)

    asyncio.run(scenario())


# ----------------------------------------------------------------------------------------------- TestUpdateNode

UPDATE_NODE = [
    pytest.param(
        (), (), (1,), 0, 5, id="Added taint, expect node patched and deleted when PodDisruptionConditions is enabled"
    ),
    pytest.param((), (), (1,), 0, 5, id="Added taint"),
    pytest.param(((1, 100),), (), (1,), None, 5, id="Added tolerated taint"),
    pytest.param(((1, 100),), (), (1, 2), 0, 5, id="Only one added taint tolerated"),
    pytest.param(((1, 1),), (1,), (), None, 1.5, id="Taint removed"),
    pytest.param(
        ((1, 1), (2, 100)), (), (1, 2), 1, 5, id="Pod with multiple tolerations are evicted when first one runs out"
    ),
]


@pytest.mark.parametrize(("tolerations", "old_taints", "new_taints", "evicted_after", "window"), UPDATE_NODE)
def test_update_node(
    tolerations: tuple[tuple[int, int], ...],
    old_taints: tuple[int, ...],
    new_taints: tuple[int, ...],
    evicted_after: float | None,
    window: float,
) -> None:
    """`additionalSleep` (1.5 s for "Taint removed") is the window in which nothing may happen."""

    async def scenario() -> None:
        made = await cluster()
        await made.node("node1", *old_taints)
        await made.raw.create(PODS, "default", pod("pod1", "node1", *(toleration(i, s) for i, s in tolerations)))
        await start(made)
        await made.taint("node1", *new_taints)
        await verify_pod_actions(made, evicted_after is not None, evicted_after is not None, within=window)
        if evicted_after is not None:  # at once, or when the smallest tolerationSeconds of those used runs out
            assert made.clock.now() - made.started == evicted_after

    asyncio.run(scenario())


def test_update_node_with_multiple_taints() -> None:
    """TestUpdateNodeWithMultipleTaints: forever-tolerated taint, then a 60 s one added (queued), then removed
    again (unqueued); nothing is deleted."""

    async def scenario() -> None:
        made = await cluster()
        await made.node("node1")
        tolerations = [
            {"key": "testTaint1", "operator": "Exists", "effect": "NoExecute"},
            {"key": "testTaint2", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60},
        ]
        await made.raw.create(PODS, "default", pod("pod1", "node1", *tolerations))
        await start(made)
        assert made.controller.scheduled("default", "pod1") is None  # no taint
        await made.taint("node1", 1)
        await run_for(made.clock, 0)
        assert made.controller.scheduled("default", "pod1") is None  # permanently tolerated taint
        await made.taint("node1", 1, 2)
        await run_for(made.clock, 0)
        assert made.controller.scheduled("default", "pod1") is not None  # temporarily tolerated taint
        await made.taint("node1", 1)
        await run_for(made.clock, 0)
        assert made.controller.scheduled("default", "pod1") is None
        await run_for(made.clock, 120)
        assert made.client.names("delete") == set()
        await made.controller.stop()

    asyncio.run(scenario())


# -------------------------------------------------------------------------------- TestUpdateNodeWithMultiplePods

MULTIPLE_PODS = [
    pytest.param(
        (1,), {0.0: {"pod1"}, 1.0: {"pod2"}}, id="Pods with different toleration times are evicted appropriately"
    ),
    pytest.param((1, 2), {0.0: {"pod1", "pod2", "pod3"}}, id="Evict all pods not matching all taints instantly"),
]


@pytest.mark.parametrize(("taints", "expected"), MULTIPLE_PODS)
def test_update_node_with_multiple_pods(taints: tuple[int, ...], expected: dict[float, set[str]]) -> None:
    async def scenario() -> None:
        made = await cluster()
        await made.node("node1")
        await made.raw.create(PODS, "default", pod("pod1", "node1"))
        await made.raw.create(PODS, "default", pod("pod2", "node1", toleration(1, 1)))
        await made.raw.create(PODS, "default", pod("pod3", "node1", toleration(1, -1)))
        await start(made)
        await made.taint("node1", *taints)
        seen: dict[float, set[str]] = {}
        done: set[str] = set()
        await run_for(made.clock, 0)
        for _ in range(20):  # upstream sleeps to each expected time (+ half the gap) and reads the deletes
            deleted = made.client.names("delete") - done
            if deleted:
                seen[made.clock.now() - made.started] = deleted
                done |= deleted
            await run_for(made.clock, 0.25)
        assert seen == expected
        await made.controller.stop()

    asyncio.run(scenario())


# --------------------------------------------------------------------------------------- TestGetMinTolerationTime


@pytest.mark.parametrize(
    ("tolerations", "expected"),
    [
        ([], 0.0),
        ([{"tolerationSeconds": None}], FOREVER),
        ([{"tolerationSeconds": 1}, {"tolerationSeconds": 2}], 1.0),
        ([{"tolerationSeconds": 1}, {"tolerationSeconds": None}], 1.0),
        ([{"tolerationSeconds": None}, {"tolerationSeconds": 1}], 1.0),
    ],
)
def test_get_min_toleration_time(tolerations: list[Obj], expected: float) -> None:
    assert min_toleration_seconds(tolerations) == expected


def test_filter_no_execute_taints() -> None:
    """TestFilterNoExecuteTaints."""
    taints = [
        {"key": "one", "value": "one", "effect": "NoExecute"},
        {"key": "two", "value": "two", "effect": "NoSchedule"},
    ]
    assert [t["key"] for t in no_execute_taints(taints)] == ["one"]


# --------------------------------------------------------------------------------------- TestEventualConsistency

EVENTUAL = [
    pytest.param(True, (), True, id="existing pod2 scheduled onto tainted Node"),
    pytest.param(True, ((1, 100),), True, id="existing pod2 with taint toleration scheduled onto tainted Node"),
    pytest.param(False, (), True, id="new pod2 created on tainted Node"),
    pytest.param(False, ((1, 100),), True, id="new pod2 with tait toleration created on tainted Node"),
]


@pytest.mark.parametrize(("existing", "tolerations", "evicted"), EVENTUAL)
def test_eventual_consistency(existing: bool, tolerations: tuple[tuple[int, int], ...], evicted: bool) -> None:
    """pod1 goes when the node is tainted; pod2, which reaches the node afterwards, is then handled too (at once,
    or when its 100 s toleration runs out)."""

    async def scenario() -> None:
        made = await cluster()
        await made.node("node1")
        await made.raw.create(PODS, "default", pod("pod1", "node1"))
        tols = [toleration(i, s) for i, s in tolerations]
        if existing:
            await made.raw.create(PODS, "default", pod("pod2", None, *tols))
        await start(made)
        await made.taint("node1", 1)
        await settle(made.clock, made.deleted, max_virtual=5)
        assert made.client.names("delete") == {"pod1"}
        assert made.client.names("patch") == {"pod1"}
        if existing:
            await made.bind("pod2", "node1")
        else:
            await made.raw.create(PODS, "default", pod("pod2", "node1", *tols))
        bound = made.clock.now()
        await settle(made.clock, lambda: "pod2" in made.client.names("delete"), max_virtual=101)
        assert made.clock.now() - bound == (100 if tols else 0)
        await made.controller.stop()

    asyncio.run(scenario())


# ----------------------------------------------------------------------------------------- TestPodDeletionEvent


def test_pod_deletion_event() -> None:
    """emitPodDeletionEvent / emitCancelPodDeletionEvent: Normal `TaintManagerEviction` events on the pod."""

    async def scenario() -> None:
        made = await cluster()
        await made.raw.create(NODES, None, node_manifest("node1", made.clock))
        await made.raw.create(PODS, "default", pod("test", "node1", toleration(1, 100)))
        await made.raw.create(PODS, "default", pod("gone", "node1"))
        await start(made)
        await made.taint("node1", 1)
        await settle(made.clock, made.deleted, max_virtual=5)
        await made.taint("node1")
        await run_for(made.clock, 0)
        await made.controller.events.flush()
        events = await events_about(made.raw, "test") + await events_about(made.raw, "gone")
        got = sorted(
            (e["involvedObject"]["name"], e["type"], e["reason"], e["message"], e["count"], e["source"]["component"])
            for e in events
        )
        assert got == [
            (
                "gone",
                "Normal",
                "TaintManagerEviction",
                "Marking for deletion Pod default/gone",
                1,
                "taint-eviction-controller",
            ),
            (
                "test",
                "Normal",
                "TaintManagerEviction",
                "Cancelling deletion of Pod default/test",
                1,
                "taint-eviction-controller",
            ),
        ]
        for e in events:
            assert {k: e["involvedObject"].get(k) for k in ("kind", "apiVersion", "namespace")} == {
                "kind": "Pod",
                "apiVersion": "v1",
                "namespace": "default",
            }
        pod_gone = await made.raw.get(PODS, "default", "gone")
        assert condition(pod_gone, "DisruptionTarget") is not None
        await made.controller.stop()

    asyncio.run(scenario())
