"""Graceful node shutdown: how it is requested across processes, and the kubelet's rules for it.

Design note: a real kubelet learns of a shutdown from systemd's inhibitor lock; a kjobs node agent learns of it
from its SIGTERM (a standalone `kjobs node join` process) or from its own Node object: `kjobs node shutdown NAME`
sets the annotation `SHUTDOWN_ANNOTATION` on the Node, and the agent, which watches its Node anyway, starts the
shutdown when it sees the annotation. That works wherever the agent runs, needs no second port, and the
request is visible (`kubectl describe node`). The rest is the kubelet's `nodeshutdown` manager: Ready becomes
False (`KubeletNotReady`, `node is shutting down`), every pod is killed with a grace period of
min(terminationGracePeriodSeconds, shutdownGracePeriod) and ends Failed (unless already Succeeded) with
reason `Terminated` and a `DisruptionTarget` condition (`TerminationByKubelet`); pods bound meanwhile are
rejected (`NodeShutdown`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from kjobs.api.types import Obj
from kjobs.node.observations import NODE_SHUTDOWN
from kjobs.node.resources import qos_class
from kjobs.node.supervisor import DEFAULT_GRACE_SECONDS

if TYPE_CHECKING:
    from kjobs.client.base import Client

SHUTDOWN_ANNOTATION = "node.kjobs.io/shutdown-requested"
"""Set (to the request time) on a Node to ask its agent for a graceful shutdown."""
DEFAULT_SHUTDOWN_GRACE_SECONDS = 30.0
SHUTDOWN_REASON = NODE_SHUTDOWN.reason
SHUTDOWN_MESSAGE = NODE_SHUTDOWN.message
NOT_ADMITTED_REASON = "NodeShutdown"
NOT_ADMITTED_MESSAGE = "Pod was rejected as the node is shutting down."


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


def shutdown_grace_seconds(pod: Obj, shutdown_grace_period: float) -> float:
    """The kubelet's override: the pod's terminationGracePeriodSeconds when shorter than the shutdown's."""
    value = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    own = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else DEFAULT_GRACE_SECONDS
    return min(own, shutdown_grace_period)


def rejected_status(pod: Obj, reason: str, message: str) -> Obj:
    """The kubelet's `rejectPod` status: Failed with the admission reason, message prefixed `Pod was rejected: `."""
    return {"phase": "Failed", "reason": reason, "message": f"Pod was rejected: {message}", "qosClass": qos_class(pod)}
