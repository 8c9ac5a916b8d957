"""Pod builders and an in-process node shared by the node tests."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.clock import RealClock
from kjobs.node.agent import NodeAgent, NodeAgentSettings
from kjobs.node.logsource import AgentLogs
from kjobs.node.observations import Attempt, PodRecord
from kjobs.node.process_runtime import ProcessRuntime
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore

T0 = 1_700_000_000.0


def make_pod(
    containers: list[Obj] | None = None,
    *,
    init: list[Obj] | None = None,
    policy: str = "Never",
    uid: str = "uid-1",
    name: str = "job-0-abcde",
    **spec: Any,
) -> Obj:
    pod_spec: Obj = {"restartPolicy": policy, "containers": containers or [{"name": "main", "image": "busybox"}]}
    if init:
        pod_spec["initContainers"] = init
    pod_spec.update(spec)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "uid": uid, "labels": {}, "annotations": {}},
        "spec": pod_spec,
    }


def attempt(
    container: str = "main",
    number: int = 0,
    *,
    start: float = T0,
    end: float | None = None,
    code: int | None = None,
    signal: int | None = None,
    oom: bool = False,
) -> Attempt:
    return Attempt(
        container=container,
        number=number,
        container_id=f"kjobs://{container}-{number}",
        started_at=start,
        finished_at=end,
        exit_code=code,
        signal=signal,
        oom=oom,
    )


def record(pod: Obj, *attempts: Attempt) -> PodRecord:
    rec = PodRecord(pod=pod, admitted_at=T0)
    for a in attempts:
        rec.attempts.setdefault(a.container, []).append(a)
    return rec


@dataclass
class ProcessNode:
    """An in-process API on a memory store and one node agent ("local") whose pods are real processes."""

    service: ApiService
    client: LocalClient
    agent: NodeAgent


@contextlib.asynccontextmanager
async def process_node(root: Path, settings: NodeAgentSettings | None = None) -> AsyncIterator[ProcessNode]:
    """A started `ProcessNode` whose runtime keeps its files under `root`; stopped on exit."""
    clock = RealClock()
    service = ApiService(Storage(MemoryStore()), clock=clock.now)
    await service.ensure_namespaces()
    client = LocalClient(service)
    agent = NodeAgent(
        client,
        name="local",
        clock=clock,
        settings=settings or NodeAgentSettings(),
        runtime_factory=lambda on_status: ProcessRuntime(root_dir=root, clock=clock, on_status=on_status),
    )
    service.logs = AgentLogs([agent])
    await agent.start()
    try:
        yield ProcessNode(service, client, agent)
    finally:
        await agent.stop()
