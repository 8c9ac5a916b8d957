"""Upstream test/integration/disruption/disruption_test.go, run against kjobs' API and disruption controller.

Upstream starts kube-apiserver with the disruption controller and writes pod statuses by hand; here kjobs'
in-process API on virtual time, kjobs' real `DisruptionController`, and the same writes through the API.
`TestStalePodDisruption` is in tests/controllers/test_upstream_disruption.py. The v1beta1 rows, which upstream
writes into etcd under the removed policy/v1beta1 API, create through policy/v1 the selector a v1 reader sees for
that stored object (pkg/apis/policy/v1beta1/conversion.go). Rows, and those left out:
docs/upstream-components.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import NAMESPACES, NODES, PDBS, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.disruption import DisruptionController
from kjobs.controllers.scheduler import Scheduler
from kjobs.server.app import create_app
from kjobs.store import MemoryStore
from tests.support import INTEGRATION_ADMISSION, local_api, settle

PDB_V1BETA1_LABEL = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"
NON_V1BETA1_MATCH_NONE = {"matchExpressions": [{"key": PDB_V1BETA1_LABEL, "operator": "Exists"}]}
"""What a v1 reader gets for a stored v1beta1 PDB whose selector is `{}` (v1beta1: matches no pod)
(pkg/apis/policy/helpers.go `NonV1beta1MatchNoneSelector`, pkg/apis/policy/v1beta1/conversion.go)."""
DOES_NOT_EXIST = {"matchExpressions": [{"key": "DoesNotExist", "operator": "DoesNotExist"}]}


@dataclass
class Cluster:
    """`setup`: the API and the disruption controller on virtual time."""

    clock: FakeClock
    client: LocalClient
    controller: DisruptionController
    namespace: str

    async def create_pod(self, name: str, labels: Obj) -> None:
        """`createPod`: no node, then status Running with Ready=True (`addPodConditionReady`)."""
        body: Obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": self.namespace, "labels": labels},
            "spec": {"containers": [{"name": "fake-name", "image": "fakeimage"}]},
        }
        created = await self.client.create(PODS, self.namespace, body)
        status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        await self.client.update(PODS, self.namespace, dict(created, status=status), subresource="status")

    async def create_pdb(self, name: str, min_available: int, selector: Obj) -> None:
        spec = {"minAvailable": min_available, "selector": selector}
        body = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name}, "spec": spec}
        await self.client.create(PDBS, self.namespace, body)

    async def wait_to_observe_pods(self, count: int, phase: str) -> None:
        """`waitToObservePods`: the controller's pod informer holds `count` pods in `phase`."""

        def seen() -> bool:
            pods = self.controller.pods.list(self.namespace)
            return len(pods) == count and all((p.get("status") or {}).get("phase") == phase for p in pods)

        await settle(self.clock, seen, max_virtual=60)

    async def wait_pdb_stable(self, healthy: int, name: str) -> Obj:
        """`waitPDBStable`: polled every 2 s (virtual) for 60 s: observed, with currentHealthy == `healthy`."""
        found: dict[str, Obj] = {}

        async def poll() -> None:
            while True:
                pdb = await self.client.get(PDBS, self.namespace, name)
                status = pdb.get("status") or {}
                if status.get("observedGeneration") and status.get("currentHealthy") == healthy:
                    found["pdb"] = pdb
                    return
                await self.clock.sleep(2)

        task = asyncio.get_running_loop().create_task(poll())
        try:
            await settle(self.clock, task.done, max_virtual=60)
        finally:
            task.cancel()
        return found["pdb"]


@asynccontextmanager
async def setup(namespace: str) -> AsyncIterator[Cluster]:
    clock = FakeClock()
    client = await local_api(clock, admission=INTEGRATION_ADMISSION)
    await client.create(NAMESPACES, None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    controller = DisruptionController(client, clock=clock)
    await controller.start()
    try:
        yield Cluster(clock, client, controller, namespace)
    finally:
        await controller.stop()


def run(namespace: str, scenario: Callable[[Cluster], Any]) -> None:
    async def main() -> None:
        async with setup(namespace) as cluster:
            await scenario(cluster)

    asyncio.run(main())


# --------------------------------------------------------------------------------------------- TestEmptySelector

EMPTY_SELECTOR = [
    pytest.param(NON_V1BETA1_MATCH_NONE, 0, id="v1beta1 should not target any pods"),
    pytest.param({}, 4, id="v1 should target all pods"),
]


@pytest.mark.parametrize(("selector", "expected_current_healthy"), EMPTY_SELECTOR)
def test_empty_selector(selector: Obj, expected_current_healthy: int) -> None:
    """TestEmptySelector: a v1 PDB's empty selector selects every pod of its namespace; a v1beta1 one none."""

    async def scenario(c: Cluster) -> None:
        for j in range(4):
            await c.create_pod(f"pod-{j}", {"app": "test-crd"})
        await c.wait_to_observe_pods(4, "Running")
        await c.create_pdb("test-pdb", 2, selector)
        pdb = await c.wait_pdb_stable(expected_current_healthy, "test-pdb")
        assert pdb["status"]["currentHealthy"] == expected_current_healthy

    run("pdb-empty-selector", scenario)


# ----------------------------------------------------------------------------------- TestSelectorsForPodsWithoutLabels

WITHOUT_LABELS = [
    pytest.param({}, 1, id="pods with no labels can be targeted by v1 PDBs with empty selector"),
    pytest.param(DOES_NOT_EXIST, 1, id="pods with no labels can be targeted by v1 PDBs with DoesNotExist selector"),
    pytest.param(
        DOES_NOT_EXIST, 1, id="pods with no labels can be targeted by v1beta1 PDBs with DoesNotExist selector"
    ),
]


@pytest.mark.parametrize(("selector", "expected_current_healthy"), WITHOUT_LABELS)
def test_selectors_for_pods_without_labels(selector: Obj, expected_current_healthy: int) -> None:
    """TestSelectorsForPodsWithoutLabels: a pod without labels that arrives after its budget is counted by it
    (the pod's event must reach the budgets whose selectors match an empty label set)."""

    async def scenario(c: Cluster) -> None:
        await c.create_pdb("test-pdb", 1, selector)
        await c.wait_pdb_stable(0, "test-pdb")
        await c.create_pod("pod", {})
        await c.wait_to_observe_pods(1, "Running")
        pdb = await c.wait_pdb_stable(1, "test-pdb")
        assert pdb["status"]["currentHealthy"] == expected_current_healthy

    run("pdb-selectors", scenario)


# --------------------------------------------------------------------------------------------- TestPatchCompatibility

PATCH = (
    '{"spec":{"selector":{"matchLabels":{"patchmatch":"true"},'
    '"matchExpressions":[{"key":"patchexpression","operator":"In","values":["true"]}]}}}'
)
APPLY = (
    '{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","spec":{"selector":{"matchLabels":{"patchmatch":"true"},'
    '"matchExpressions":[{"key":"patchexpression","operator":"In","values":["true"]}]}}}'
)
PATCH_EXPRESSIONS = [{"key": "patchexpression", "operator": "In", "values": ["true"]}]

CONTENT_TYPES = {
    "strategic": "application/strategic-merge-patch+json",
    "merge": "application/merge-patch+json",
    "apply": "application/apply-patch+yaml",
}
PATCH_ROWS = [
    # matchLabels and matchExpressions are both replaced (selector's patchStrategy=replace in v1)
    pytest.param(
        "strategic",
        PATCH,
        {},
        {"matchLabels": {"patchmatch": "true"}, "matchExpressions": PATCH_EXPRESSIONS},
        id="v1-smp",
    ),
    # matchLabels merged, matchExpressions replaced (a list)
    pytest.param(
        "merge",
        PATCH,
        {},
        {"matchLabels": {"basematch": "true", "patchmatch": "true"}, "matchExpressions": PATCH_EXPRESSIONS},
        id="v1-mergepatch",
    ),
    # the entire selector replaced (structType=atomic)
    pytest.param(
        "apply",
        APPLY,
        {"force": "true", "fieldManager": "test"},
        {"matchLabels": {"patchmatch": "true"}, "matchExpressions": PATCH_EXPRESSIONS},
        id="v1-apply",
    ),
]


@pytest.mark.parametrize(("patch_type", "patch", "params", "expect_selector"), PATCH_ROWS)
def test_patch_compatibility(patch_type: str, patch: str, params: dict[str, str], expect_selector: Obj) -> None:
    """TestPatchCompatibility: how each patch type, sent over HTTP as a client sends it, changes a v1 PDB's
    selector."""
    base = {
        "matchLabels": {"basematch": "true"},
        "matchExpressions": [{"key": "baseexpression", "operator": "In", "values": ["true"]}],
    }
    body = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "test-pdb"},
        "spec": {"maxUnavailable": 2, "selector": base},
    }
    url = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"

    async def main() -> None:
        store = MemoryStore()
        app = create_app(store, resource_version_wait=0.05)
        await app.startup()
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://kjobs") as http:
            assert (await http.post(url, json=body)).status_code == 201
            headers = {"content-type": CONTENT_TYPES[patch_type]}
            result = await http.patch(f"{url}/test-pdb", content=patch, headers=headers, params=params)
            assert result.status_code == 200, result.text
            assert result.json()["spec"]["selector"] == expect_selector
            assert (await http.delete(f"{url}/test-pdb")).status_code == 200
        store.close()

    asyncio.run(main())


# ------------------------------------------------------------------------------------------------ TestPDBInPreemption
# test/integration/scheduler/preemption/preemption_test.go: the scheduler and the disruption controller together.

LOW, MEDIUM, HIGH = 100, 200, 300  # lowPriority, mediumPriority, highPriority


@dataclass(frozen=True)
class Pause:
    """`initPausePod`'s config: name, priority, node (empty: the scheduler places it), labels, requests."""

    name: str
    priority: int
    node: str = ""
    labels: Obj | None = None
    cpu: str = "100m"
    memory: str = "100"


@dataclass(frozen=True)
class PreemptionRow:
    node_count: int
    pdbs: tuple[tuple[str, Obj], ...]  # (name, matchLabels), each minAvailable 2
    pdb_pod_num: tuple[int, ...]
    existing: tuple[Pause, ...]
    preemptor: Pause
    preempted: frozenset[int]


FOO = {"foo": "bar"}
PREEMPTION_ROWS = [
    pytest.param(
        PreemptionRow(
            1,
            (("pdb-1", FOO),),
            (2,),
            (Pause("low-pod1", LOW, labels=FOO), Pause("low-pod2", LOW, labels=FOO), Pause("mid-pod3", MEDIUM)),
            Pause("preemptor-pod", HIGH, cpu="300m", memory="200"),
            frozenset({2}),
        ),
        id="A non-PDB violating pod is preempted despite its higher priority",
    ),
    pytest.param(
        PreemptionRow(
            2,
            (("pdb-1", FOO),),
            (1,),
            (Pause("low-pod1", LOW, "node-1", FOO), Pause("mid-pod2", MEDIUM, "node-2")),
            Pause("preemptor-pod", HIGH, cpu="500m", memory="200"),
            frozenset({1}),
        ),
        id="A node without any PDB violating pods is preferred for preemption",
    ),
    pytest.param(
        PreemptionRow(
            3,
            (("pdb-1", {"foo1": "bar"}), ("pdb-2", {"foo2": "bar"})),
            (1, 5),
            (
                Pause("low-pod1", LOW, "node-1", {"foo1": "bar"}),
                Pause("mid-pod1", MEDIUM, "node-1"),
                Pause("low-pod2", LOW, "node-2", {"foo2": "bar"}),
                Pause("mid-pod2", MEDIUM, "node-2", {"foo2": "bar"}),
                Pause("low-pod4", LOW, "node-3", {"foo2": "bar"}),
                Pause("low-pod5", LOW, "node-3", {"foo2": "bar"}),
                Pause("low-pod6", LOW, "node-3", {"foo2": "bar"}),
            ),
            Pause("preemptor-pod", HIGH, cpu="500m", memory="400"),
            # node-3: no budget violated there, and its victims are of lower priority than node-2's
            frozenset({4, 5, 6}),
        ),
        id="A node with fewer PDB violating pods is preferred for preemption",
    ),
]


def pause_pod(p: Pause, namespace: str) -> Obj:
    spec: Obj = {
        "priority": p.priority,
        "containers": [
            {"name": p.name, "image": "pause", "resources": {"requests": {"cpu": p.cpu, "memory": p.memory}}}
        ],
    }
    if p.node:
        spec["nodeName"] = p.node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": p.name, "namespace": namespace, "labels": p.labels or {}},
        "spec": spec,
    }


@pytest.mark.parametrize("row", PREEMPTION_ROWS)
def test_pdb_in_preemption(row: PreemptionRow) -> None:
    """TestPDBInPreemption: preemption spares the pods whose budget allows no disruption, and prefers the node
    where no budget is violated; the preemptor is nominated there."""

    async def scenario(c: Cluster) -> None:
        sched = Scheduler(c.client, clock=c.clock)
        await sched.start()
        try:
            for i in range(1, row.node_count + 1):
                allocatable = {"pods": "32", "cpu": "500m", "memory": "500"}
                await c.client.create(
                    NODES,
                    None,
                    {
                        "apiVersion": "v1",
                        "kind": "Node",
                        "metadata": {"name": f"node-{i}"},
                        "status": {
                            "capacity": allocatable,
                            "allocatable": allocatable,
                            "conditions": [{"type": "Ready", "status": "True"}],
                        },
                    },
                )
            for p in row.existing:  # runPausePod, then addPodConditionReady
                await c.client.create(PODS, c.namespace, pause_pod(p, c.namespace))
                await settle(c.clock, lambda p=p: bool(_node_of(sched, c.namespace, p.name)), max_virtual=60)
                pod = await c.client.get(PODS, c.namespace, p.name)
                pod["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
                await c.client.update(PODS, c.namespace, pod, subresource="status")
            await c.wait_to_observe_pods(len(row.existing), "Running")
            for (name, labels), healthy in zip(row.pdbs, row.pdb_pod_num, strict=True):
                await c.create_pdb(name, 2, {"matchLabels": labels})
                await c.wait_pdb_stable(healthy, name)
            await c.client.create(PODS, c.namespace, pause_pod(row.preemptor, c.namespace))
            want = {row.existing[i].name for i in row.preempted}

            async def evicted() -> set[str]:
                pods, _ = await c.client.list(PODS, c.namespace)
                return {p["metadata"]["name"] for p in pods if p["metadata"].get("deletionTimestamp")}

            found: dict[str, set[str]] = {}

            async def poll() -> None:  # podIsGettingEvicted, every second
                while (found.setdefault("evicted", set()) & want) != want:
                    found["evicted"] = await evicted()
                    await c.clock.sleep(1)

            task = asyncio.get_running_loop().create_task(poll())
            await settle(c.clock, task.done, max_virtual=30)
            assert await evicted() == want  # and no other pod
            preemptor = await c.client.get(PODS, c.namespace, row.preemptor.name)
            victim_nodes = {_node_of(sched, c.namespace, n) for n in want}
            assert preemptor["status"].get("nominatedNodeName") in victim_nodes
        finally:
            await sched.stop()

    run("preemption-pdb", scenario)


def _node_of(sched: Scheduler, namespace: str, name: str) -> str:
    pod = sched.pods.get(namespace, name)
    return str((pod or {}).get("spec", {}).get("nodeName") or "")
