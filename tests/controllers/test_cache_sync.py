"""No controller writes anything before every informer it reads has synced (client-go's `WaitForCacheSync`).

Each controller is started against a scene with work in it for several of them (a pending pod, a pod on a node
with a NoExecute taint it does not tolerate, a pod whose Job is gone, a PodDisruptionBudget) while the LIST of
one resource it reads is held back. Until that list is released its handlers may index and enqueue, but nothing
may be written (events aside, which Kubernetes' handlers also record); once released, the work gets done.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kjobs.api.names import JOB_TRACKING_FINALIZER
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import (
    CLUSTER_ROLES,
    CONFIG_MAPS,
    CRONJOBS,
    ENDPOINT_SLICES,
    ENDPOINTS,
    EVENTS,
    JOBS,
    LEASES,
    NAMESPACES,
    NODES,
    PDBS,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    PODS,
    PRIORITY_CLASSES,
    RESOURCE_QUOTAS,
    SERVICE_ACCOUNTS,
    SERVICES,
    STORAGE_CLASSES,
    ResourceRef,
)
from kjobs.clock import FakeClock
from kjobs.cluster import build_controllers
from kjobs.controllers import CONTROLLER_NAMES
from tests.support import local_api, settle

READS: dict[str, tuple[ResourceRef, ...]] = {
    "job": (JOBS, PODS),
    "scheduler": (PRIORITY_CLASSES, PDBS, NODES, PODS),
    "nodelifecycle": (NODES, PODS, LEASES),
    "tainteviction": (NODES, PODS),
    "podgc": (NODES, PODS),
    "disruption": (PODS, PDBS),
    "garbagecollector": (PODS, JOBS, CRONJOBS),
    "ttl": (JOBS,),
    "cronjob": (CRONJOBS, JOBS),
    "rootcacertpublisher": (CONFIG_MAPS, NAMESPACES),
    "serviceaccount-controller": (SERVICE_ACCOUNTS, NAMESPACES),
    "clusterrole-aggregation-controller": (CLUSTER_ROLES,),
    "endpoint-controller": (SERVICES, PODS, ENDPOINTS),
    "endpointslice-controller": (SERVICES, PODS, ENDPOINT_SLICES),
    "persistentvolume-binder": (STORAGE_CLASSES, PERSISTENT_VOLUMES, PERSISTENT_VOLUME_CLAIMS),
    "persistentvolumeclaim-protection": (PERSISTENT_VOLUME_CLAIMS, PODS),
    "persistentvolume-protection": (PERSISTENT_VOLUMES,),
    "resourcequota-controller": (RESOURCE_QUOTAS, PODS, JOBS),
}
"""The resources each controller watches (its informers), as in its constructor."""

ACTS_AT_ONCE = {"job", "garbagecollector", "tainteviction", "rootcacertpublisher", "serviceaccount-controller"}
"""Controllers the scene gives immediate work: the test shows it is done once the caches have synced."""


class HeldList(LocalClient):
    """A client whose LIST of `held` waits for `release`, and which records its writes (events aside)."""

    def __init__(self, base: LocalClient, held: ResourceRef) -> None:
        super().__init__(base.service)
        self.held = held
        self.release = asyncio.Event()
        self.writes: list[str] = []

    async def list(
        self, resource: ResourceRef, namespace: str | None = None, **selectors: Any
    ) -> tuple[list[Obj], str]:
        if resource == self.held:
            await self.release.wait()
        return await super().list(resource, namespace, **selectors)

    def _record(self, verb: str, resource: ResourceRef, name: str) -> None:
        if resource != EVENTS:
            self.writes.append(f"{verb} {resource.plural}/{name}")

    async def create(self, resource: ResourceRef, namespace: str | None, obj: Obj, **kw: Any) -> Obj:
        self._record("create", resource, str(obj.get("metadata", {}).get("name")))
        return await super().create(resource, namespace, obj, **kw)

    async def update(self, resource: ResourceRef, namespace: str | None, obj: Obj, **kw: Any) -> Obj:
        self._record("update", resource, str(obj.get("metadata", {}).get("name")))
        return await super().update(resource, namespace, obj, **kw)

    async def patch(self, resource: ResourceRef, namespace: str | None, name: str, patch: Any, **kw: Any) -> Obj:
        self._record("patch", resource, name)
        return await super().patch(resource, namespace, name, patch, **kw)

    async def delete(self, resource: ResourceRef, namespace: str | None, name: str, **kw: Any) -> Any:
        self._record("delete", resource, name)
        return await super().delete(resource, namespace, name, **kw)

    async def post_subresource(self, resource: ResourceRef, namespace: str | None, name: str, *a: Any) -> Obj:
        self._record("post", resource, name)
        return await super().post_subresource(resource, namespace, name, *a)


def _pod(name: str, **spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "scene"}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}], **spec},
    }


async def _scene(client: LocalClient) -> None:
    await client.create(NODES, None, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "ready-node"}})
    tainted = {"taints": [{"key": "example.com/evict", "effect": "NoExecute"}]}
    await client.create(
        NODES, None, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "tainted-node"}, "spec": tainted}
    )
    await client.create(PODS, "default", _pod("pending"))
    await client.create(PODS, "default", _pod("on-tainted-node", nodeName="tainted-node"))
    dangling = _pod("dangling")
    dangling["metadata"]["finalizers"] = [JOB_TRACKING_FINALIZER]
    dangling["metadata"]["ownerReferences"] = [
        {"apiVersion": "batch/v1", "kind": "Job", "name": "gone", "uid": "6f0c1a52-0000-4000-8000-0000000000ff"}
        | {"controller": True, "blockOwnerDeletion": True}
    ]
    await client.create(PODS, "default", dangling)
    budget = {"minAvailable": 1, "selector": {"matchLabels": {"app": "scene"}}}
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "budget"}, "spec": budget}
    await client.create(PDBS, "default", pdb)


@pytest.mark.parametrize("name", CONTROLLER_NAMES)
def test_nothing_is_written_before_every_informer_has_synced(name: str) -> None:
    async def held_back(held: ResourceRef) -> None:
        clock = FakeClock()
        base = await local_api(clock)
        await _scene(base)
        client = HeldList(base, held)
        controller = build_controllers(client, clock, names=(name,))[name]
        starting = asyncio.get_running_loop().create_task(controller.start())
        for _ in range(500):
            await asyncio.sleep(0)
        assert not starting.done(), f"{name} started with {held.plural} not listed"
        assert client.writes == [], f"{name} wrote before {held.plural} was listed"
        client.release.set()
        await settle(clock, starting.done)
        if name in ACTS_AT_ONCE:
            await settle(clock, lambda: bool(client.writes), max_virtual=60)
        await controller.stop()

    async def scenario() -> None:
        for held in READS[name]:
            await held_back(held)

    asyncio.run(scenario())


@pytest.mark.parametrize("held", [PODS, NODES], ids=["pods", "node"])
def test_the_node_agent_runs_no_pod_before_its_informers_have_synced(held: ResourceRef) -> None:
    """The agent registers its Node and Lease first (as the kubelet does), but starts and reports no pod
    before both its pod and node informers have listed."""
    from kjobs.node.agent import NodeAgent
    from kjobs.node.sim_runtime import Outcome, SimulatedRuntime

    async def scenario() -> None:
        clock = FakeClock()
        base = await local_api(clock)
        await base.create(PODS, "default", _pod("bound", nodeName="node-1"))
        client = HeldList(base, held)
        runtime = SimulatedRuntime(clock=clock, outcome=lambda pod, container, attempt: Outcome(duration=5))
        agent = NodeAgent(client, name="node-1", clock=clock, runtime=runtime)
        starting = asyncio.get_running_loop().create_task(agent.start())
        for _ in range(500):
            await asyncio.sleep(0)
        assert not starting.done()
        assert [w for w in client.writes if " pods/" in w] == []
        client.release.set()
        await settle(clock, starting.done)

        def running() -> bool:
            pod = agent.pods.get("default", "bound") or {}
            return (pod.get("status") or {}).get("phase") == "Running"

        await settle(clock, running, max_virtual=60)
        await agent.stop()

    asyncio.run(scenario())
