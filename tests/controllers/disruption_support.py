"""Shared test builders for the disruption machinery: nodes with heartbeats, leases, bound pods."""

from __future__ import annotations

import asyncio
from typing import Any

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.resources import EVENTS, LEASES
from kjobs.clock import FakeClock


def node_manifest(name: str, clock: FakeClock, *, ready: str = "True", labels: dict[str, str] | None = None) -> Obj:
    stamp = format_time(clock.now())
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": ready,
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                    "lastHeartbeatTime": stamp,
                    "lastTransitionTime": stamp,
                }
            ]
        },
    }


def pod_manifest(name: str, node: str | None, **spec: Any) -> Obj:
    body: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}], **spec},
    }
    if node:
        body["spec"]["nodeName"] = node
    return body


async def create_lease(client: Any, node: str, clock: FakeClock) -> None:
    await client.create(
        LEASES,
        "kube-node-lease",
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": node, "namespace": "kube-node-lease"},
            "spec": {"holderIdentity": node, "leaseDurationSeconds": 40, "renewTime": _micro(clock.now())},
        },
    )


def _micro(seconds: float) -> str:
    return format_time(seconds).replace("Z", ".000000Z")


class Heartbeats:
    """A kubelet stand-in renewing node leases every 10 s of virtual time until told to stop."""

    def __init__(self, client: Any, clock: FakeClock) -> None:
        self.client, self.clock = client, clock
        self.alive: set[str] = set()
        self._task: asyncio.Task[None] | None = None

    async def add(self, node: str) -> None:
        await create_lease(self.client, node, self.clock)
        self.alive.add(node)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            await self.clock.sleep(10)
            for node in sorted(self.alive):
                lease = await self.client.get(LEASES, "kube-node-lease", node)
                lease["spec"]["renewTime"] = _micro(self.clock.now())
                await self.client.update(LEASES, "kube-node-lease", lease)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


async def events_about(client: Any, name: str, reason: str | None = None) -> list[Obj]:
    items, _ = await client.list(EVENTS, None)
    return [
        e for e in items if e["involvedObject"].get("name") == name and (reason is None or e.get("reason") == reason)
    ]


def condition(obj: Obj, cond_type: str) -> Obj | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == cond_type), None)


async def get_or_none(client: Any, resource: Any, namespace: str | None, name: str) -> Obj | None:
    from kjobs.api.errors import ApiError

    try:
        obj: Obj = await client.get(resource, namespace, name)
        return obj
    except ApiError as exc:
        if exc.code == 404:
            return None
        raise
