"""Graceful node shutdown: how it is requested across processes, and the kubelet's rules for it.

Design note: a real kubelet learns of a shutdown from systemd's inhibitor lock; a kjobs node agent learns of it
from its SIGTERM (a standalone `kjobs node join` process) or from its own Node object: `kjobs node shutdown NAME`
sets the annotation `SHUTDOWN_ANNOTATION` on the Node, and the agent, which watches its Node anyway, starts the
shutdown when it sees the annotation. That works wherever the agent runs, needs no second port, and the
request is visible (`kubectl describe node`). The rest is the kubelet's `nodeshutdown` manager: Ready becomes
False (`KubeletNotReady`, `node is shutting down`); the pods are split into priority groups
(`shutdownGracePeriodByPodPriority`, or the two groups `shutdownGracePeriod` minus
`shutdownGracePeriodCriticalPods` for ordinary pods and `shutdownGracePeriodCriticalPods` for critical ones);
the groups are killed lowest priority first, each pod with its group's period (its own
terminationGracePeriodSeconds when shorter), the next group once the last one has stopped or its period has
passed. Every pod ends Failed (unless already Succeeded) with reason `Terminated` and a `DisruptionTarget`
condition (`TerminationByKubelet`); pods bound meanwhile are rejected (`NodeShutdown`).
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kjobs.api.types import Obj
from kjobs.node.observations import NODE_SHUTDOWN
from kjobs.node.resources import qos_class

if TYPE_CHECKING:
    from kjobs.client.base import Client

SHUTDOWN_ANNOTATION = "node.kjobs.io/shutdown-requested"
"""Set (to the request time) on a Node to ask its agent for a graceful shutdown."""
DEFAULT_SHUTDOWN_GRACE_SECONDS = 30.0
SHUTDOWN_REASON = NODE_SHUTDOWN.reason
SHUTDOWN_MESSAGE = NODE_SHUTDOWN.message
NOT_ADMITTED_REASON = "NodeShutdown"
NOT_ADMITTED_MESSAGE = "Pod was rejected as the node is shutting down."
DEFAULT_PRIORITY = 0
"""`scheduling.DefaultPriorityWhenNoDefaultClassExists`: the ordinary pods' group."""
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
"""`scheduling.SystemCriticalPriority`: the critical pods' group."""


@dataclass(frozen=True)
class PriorityGrace:
    """One `shutdownGracePeriodByPodPriority` entry: pods from `priority` up (to the next entry) get `seconds`."""

    priority: int
    seconds: float


def migrate_config(requested: float, critical_pods: float) -> list[PriorityGrace] | None:
    """`migrateConfig` (pkg/kubelet/nodeshutdown/nodeshutdown_manager.go): shutdownGracePeriod and
    shutdownGracePeriodCriticalPods as two priority groups; None when there is nothing to split (0, or more for
    critical pods than in all). kjobs keeps fractions of a second (the kubelet truncates to whole seconds)."""
    if requested == 0:
        return None
    ordinary = requested - critical_pods
    if ordinary < 0:
        return None
    return [PriorityGrace(DEFAULT_PRIORITY, ordinary), PriorityGrace(SYSTEM_CRITICAL_PRIORITY, requested - ordinary)]


def shutdown_groups(
    requested: float, critical_pods: float = 0.0, by_priority: Sequence[PriorityGrace] = ()
) -> list[PriorityGrace]:
    """The kubelet's groups for a node's settings, lowest priority first (`newPodManager`): `by_priority` when
    given, else `migrate_config`. Where the kubelet would disable graceful shutdown (no group), a kjobs node still
    honours a request: one group for every pod with `requested` seconds."""
    groups = list(by_priority) or migrate_config(requested, critical_pods)
    if not groups:
        groups = [PriorityGrace(SYSTEM_CRITICAL_PRIORITY, max(requested, 0.0))]
    return sorted(groups, key=lambda group: group.priority)


def _priority(pod: Obj) -> int:
    value = (pod.get("spec") or {}).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def group_by_priority(groups: Sequence[PriorityGrace], pods: Iterable[Obj]) -> list[tuple[PriorityGrace, list[Obj]]]:
    """`groupByPriority`: each pod into the group with the highest priority not above its own (below the lowest:
    the lowest; above the highest: the highest). `groups` sorted by priority, as `shutdown_groups` returns them."""
    result: list[tuple[PriorityGrace, list[Obj]]] = [(group, []) for group in groups]
    if not result:
        return result
    priorities = [group.priority for group in groups]
    for pod in pods:
        priority = _priority(pod)
        index = bisect.bisect_left(priorities, priority)
        if index == len(priorities) or (index > 0 and priorities[index] > priority):
            index -= 1
        result[index][1].append(pod)
    return result


async def request_shutdown(client: Client, node: str, *, now: float | None = None) -> None:
    """Ask the agent of `node` for a graceful shutdown: set `SHUTDOWN_ANNOTATION` to now (`kjobs node shutdown`,
    `kjobs run --disrupt node-shutdown`)."""
    from kjobs.api.timeutil import format_time
    from kjobs.client.resources import NODES

    stamp = time.time() if now is None else now  # a caller on a virtual clock passes its time
    annotations = {SHUTDOWN_ANNOTATION: format_time(stamp)}
    await client.patch(NODES, None, node, {"metadata": {"annotations": annotations}})


def shutdown_requested(node: Obj | None) -> bool:
    """The Node carries the shutdown request annotation."""
    annotations = ((node or {}).get("metadata") or {}).get("annotations") or {}
    return SHUTDOWN_ANNOTATION in annotations


def shutdown_grace_seconds(pod: Obj, group_seconds: float) -> float:
    """The kubelet's override (`podManager.killPods`): the group's period, or the pod's
    terminationGracePeriodSeconds when that is set and not longer."""
    value = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    if isinstance(value, int | float) and not isinstance(value, bool) and value <= group_seconds:
        return float(value)
    return group_seconds


def rejected_status(pod: Obj, reason: str, message: str) -> Obj:
    """The kubelet's `rejectPod` status: Failed with the admission reason, message prefixed `Pod was rejected: `."""
    return {"phase": "Failed", "reason": reason, "message": f"Pod was rejected: {message}", "qosClass": qos_class(pod)}
