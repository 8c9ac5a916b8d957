"""The disruption machinery over HTTP against kjobs' API server, on the real clock with short periods:
node silence → Unknown + unreachable taint → taint eviction; node deleted → pod GC; PDB status; GC of dependents."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.http import HttpClient
from kjobs.client.kubeconfig import Connection
from kjobs.client.resources import JOBS, LEASES, NODES, PDBS, PODS
from kjobs.clock import RealClock
from kjobs.controllers.disruption import DisruptionController
from kjobs.controllers.garbagecollector import GarbageCollector, GarbageCollectorSettings
from kjobs.controllers.nodelifecycle import NodeLifecycleController, NodeLifecycleSettings
from kjobs.controllers.podgc import PodGCController, PodGCSettings
from kjobs.controllers.tainteviction import TaintEvictionController
from kjobs.server.admission import AdmissionSettings
from kjobs.server.app import create_app
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.support import client_tls, shared_pki


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 10.0) -> None:
    """Poll `check` until it holds, failing after `timeout` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.05)


def node(name: str, clock: RealClock) -> Obj:
    stamp = format_time(clock.now())
    ready = {"type": "Ready", "status": "True", "lastHeartbeatTime": stamp, "lastTransitionTime": stamp}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"conditions": [ready]}}


def pod(name: str, node_name: str, **meta: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}, **meta},
        "spec": {"nodeName": node_name, "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
    }


def cond(obj: Obj, cond_type: str) -> Obj:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == cond_type), {})


@pytest.mark.e2e
def test_disruption_controllers_over_http() -> None:
    store = MemoryStore()
    # kube-apiserver --default-unreachable-toleration-seconds=0: the dead node's pod is evicted at once
    admission = AdmissionSettings(default_unreachable_toleration_seconds=0)
    with serve(store, app=create_app(store, admission=admission), pki=shared_pki()) as url:

        async def scenario() -> None:
            clock = RealClock()
            client = HttpClient(Connection(url, ssl_context=client_tls()))
            for name in ("alive", "dead"):
                await client.create(NODES, None, node(name, clock))
            await client.create(PODS, "default", pod("victim", "dead"))
            await client.create(PODS, "default", pod("bystander", "alive"))
            controllers: list[Any] = [
                NodeLifecycleController(
                    client, clock=clock, settings=NodeLifecycleSettings(monitor_period=0.2, grace_period=2.0)
                ),
                TaintEvictionController(client, clock=clock),
                PodGCController(client, clock=clock, settings=PodGCSettings(period=0.2, quarantine=0.3)),
                DisruptionController(client, clock=clock),
                GarbageCollector(
                    client, clock=clock, settings=GarbageCollectorSettings(resources=(PODS, JOBS, LEASES))
                ),
            ]
            for controller in controllers:
                await controller.start()
            stop_beating = asyncio.Event()

            async def kubelet() -> None:  # keeps "alive" posting heartbeats
                while not stop_beating.is_set():
                    alive = await client.get(NODES, None, "alive")
                    alive["status"]["conditions"][0]["lastHeartbeatTime"] = format_time(clock.now() + 1)
                    await client.update(NODES, None, alive, subresource="status")
                    await asyncio.sleep(0.2)

            beat = asyncio.get_running_loop().create_task(kubelet())
            try:
                # Node lifecycle + taint eviction.
                async def evicted() -> bool:
                    victim = await client.get(PODS, "default", "victim")
                    return bool(victim["metadata"].get("deletionTimestamp"))

                await eventually(evicted)
                dead = await client.get(NODES, None, "dead")
                assert cond(dead, "Ready")["reason"] == "NodeStatusUnknown"
                assert any(t["key"] == "node.kubernetes.io/unreachable" for t in dead["spec"]["taints"])
                victim = await client.get(PODS, "default", "victim")
                assert cond(victim, "DisruptionTarget")["reason"] == "DeletionByTaintManager"
                assert not cond(await client.get(NODES, None, "alive"), "Ready").get("reason", "").startswith("Node")

                # Pod GC: the dead node goes away, its pod is failed and force-deleted.
                await client.delete(NODES, None, "dead")

                async def removed() -> bool:
                    try:
                        await client.get(PODS, "default", "victim")
                    except ApiError as exc:
                        return exc.code == 404
                    return False

                await eventually(removed)

                # Disruption controller: a PDB over the one remaining pod.
                by = await client.get(PODS, "default", "bystander")
                by["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
                await client.update(PODS, "default", by, subresource="status")
                await client.create(
                    PDBS,
                    "default",
                    {
                        "apiVersion": "policy/v1",
                        "kind": "PodDisruptionBudget",
                        "metadata": {"name": "budget"},
                        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
                    },
                )

                async def budget_counted() -> bool:
                    status = (await client.get(PDBS, "default", "budget")).get("status") or {}
                    return status.get("currentHealthy") == 1 and status.get("expectedPods") == 1

                await eventually(budget_counted)
                status = (await client.get(PDBS, "default", "budget"))["status"]
                assert status["disruptionsAllowed"] == 0 and cond({"status": status}, "DisruptionAllowed")[
                    "reason"
                ] == ("InsufficientPods")

                # Garbage collector: a Lease owned by a Job goes with it.
                job = await client.create(
                    JOBS,
                    "default",
                    {
                        "apiVersion": "batch/v1",
                        "kind": "Job",
                        "metadata": {"name": "owner"},
                        "spec": {
                            "template": {
                                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
                            }
                        },
                    },
                )
                ref = {"apiVersion": "batch/v1", "kind": "Job", "name": "owner", "uid": job["metadata"]["uid"]}
                await client.create(
                    LEASES,
                    "default",
                    {
                        "apiVersion": "coordination.k8s.io/v1",
                        "kind": "Lease",
                        "metadata": {"name": "dependent", "ownerReferences": [ref]},
                        "spec": {},
                    },
                )
                await client.delete(JOBS, "default", "owner", propagation_policy="Background")

                async def lease_gone() -> bool:
                    items, _ = await client.list(LEASES, "default")
                    return not items

                await eventually(lease_gone)
            finally:
                stop_beating.set()
                beat.cancel()
                for controller in reversed(controllers):
                    await controller.stop()
                await client.close()

        asyncio.run(scenario())
