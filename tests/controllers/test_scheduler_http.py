"""The scheduler over HTTP against kjobs' API server (what it does against any API server): binding, an
unschedulable pod's condition, and a preemption whose victims terminate at once (grace 0)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from kjobs.api.types import Obj
from kjobs.client.http import HttpClient
from kjobs.client.kubeconfig import Connection
from kjobs.client.resources import EVENTS, NODES, PODS, PRIORITY_CLASSES
from kjobs.clock import RealClock
from kjobs.controllers.scheduler import Scheduler, SchedulerSettings
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.support import client_tls, shared_pki


def node(name: str, cpu: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {
            "allocatable": {"cpu": cpu, "memory": "4Gi", "pods": "10"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(name: str, cpu: str, **spec: object) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}],
            **spec,
        },
    }


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 10.0) -> None:
    """Poll `check` until it holds, failing after `timeout` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


@pytest.mark.e2e
def test_scheduler_over_http_binds_reports_and_preempts() -> None:
    store = MemoryStore()
    with serve(store, pki=shared_pki()) as url:

        async def scenario() -> None:
            client = HttpClient(Connection(url, ssl_context=client_tls()))
            sched = Scheduler(
                client, clock=RealClock(), settings=SchedulerSettings(initial_backoff=0.05, max_backoff=0.2)
            )
            await client.create(NODES, None, node("n1", "2"))
            await client.create(
                PRIORITY_CLASSES,
                None,
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": "high"},
                    "value": 100,
                },
            )
            await sched.start()
            try:
                await client.create(PODS, "default", pod("low", "2"))

                async def bound(name: str) -> bool:
                    return bool((await client.get(PODS, "default", name))["spec"].get("nodeName"))

                await eventually(lambda: bound("low"))
                await client.create(PODS, "default", pod("too-big", "3"))

                async def unschedulable() -> bool:
                    conditions = (await client.get(PODS, "default", "too-big")).get("status", {}).get("conditions", [])
                    return any(c["type"] == "PodScheduled" and c["reason"] == "Unschedulable" for c in conditions)

                await eventually(unschedulable)
                await client.create(PODS, "default", pod("urgent", "1", priorityClassName="high"))
                await eventually(lambda: bound("urgent"))
                pods, _ = await client.list(PODS, "default")
                assert sorted(p["metadata"]["name"] for p in pods) == ["too-big", "urgent"]
                await sched.events.flush()
                events, _ = await client.list(EVENTS, "default")
                reasons = {(e["involvedObject"]["name"], e["reason"]) for e in events}
                assert {("low", "Scheduled"), ("low", "Preempted"), ("too-big", "FailedScheduling")} <= reasons
                assert ("urgent", "Scheduled") in reasons
            finally:
                await sched.stop()
                await client.close()

        asyncio.run(scenario())
    store.close()
