"""Faults a test injects into an in-process cluster through its real components (beyond `kjobs.disrupt`'s,
which go through the API): a node agent dying, a Node removed, a container exiting with a chosen code.

- `kill_node_agent`: the agent stops with its pods' processes and nothing tells the API, as when a kubelet's
  machine dies: the node lifecycle controller marks the Node unreachable and the taint eviction controller
  deletes its pods (`DisruptionTarget`/`DeletionByTaintManager`), which stay terminating with no kubelet to
  finish them (tests/e2e/test_disruptions.py `test_node_agent_killed_mid_job`).
- `delete_node`: the machine is gone, then its Node object; pod GC fails its pods (`DeletionByPodGC`,
  pkg/controller/podgc/gc_controller.go `gcOrphaned`).
- `fail_container`: the running container ends with `exit_code` as the runtime reports any exit, so the
  kubelet's status, restart policy and the Job's podFailurePolicy see an ordinary container exit.
"""

from __future__ import annotations

from typing import Any

from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.resources import NODES


class FaultError(RuntimeError):
    """A fault that cannot be applied as asked (no such node or container, or it is not running)."""


def fail_container(agent: Any, pod: Obj, container: str | None, exit_code: int) -> None:
    """End the running `container` (default: the pod's first) of `pod` on `agent`'s runtime with `exit_code`
    (`kjobs.node.supervisor.Supervisor.fail`: the process, if any, is killed and the exit reported as any)."""
    from kjobs.node.supervisor import NotRunning

    meta = pod.get("metadata") or {}
    if str(meta.get("uid") or "") not in agent.runtime.records:
        raise FaultError(f"pod {meta.get('namespace')}/{meta.get('name')} does not run on node {agent.name}")
    name = container or str(((pod.get("spec") or {}).get("containers") or [{}])[0].get("name") or "")
    try:
        agent.runtime.fail(str(meta["uid"]), name, exit_code)
    except NotRunning as exc:
        raise FaultError(f"pod {meta.get('name')}: {exc}") from exc


async def kill_node_agent(agent: Any) -> None:
    """Stop `agent` and its pods' processes without telling the API (its Node and pods stay as they were)."""
    await agent.stop()


async def delete_node(client: Client, agent: Any | None, node: str) -> None:
    """Stop the node's agent unless it is None (already killed): the machine is gone; then delete its Node."""
    if agent is not None:
        await agent.stop()
    await client.delete(NODES, None, node)
