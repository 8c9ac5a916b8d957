"""kube-apiserver's own upkeep of the objects every cluster has, while it runs.

kube-apiserver creates its system namespaces and the `kubernetes` Service at start, and keeps creating them
again when they go missing: the system namespaces controller every minute
(pkg/controlplane/controller/systemnamespaces/system_namespaces_controller.go: `default`, `kube-system`,
`kube-public`, `kube-node-lease`), the kubernetes Service controller every `EndpointInterval`, 10 s by default
(pkg/controlplane/controller/kubernetesservice/controller.go `Run`, which creates the Service when it is missing
and, after the first run, leaves an existing one as it is). So `kubectl delete ns kube-node-lease` or
`kubectl delete svc kubernetes` is undone within a minute, as on a cluster; without it a node's Lease could not
be written again until kjobs restarts.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

KUBERNETES_SERVICE_INTERVAL = 10.0
"""Seconds between the kubernetes Service controller's runs (`DefaultEndpointReconcilerInterval`)."""
SYSTEM_NAMESPACES_INTERVAL = 60.0
"""Seconds between the system namespaces controller's runs (`NewController`'s interval)."""


async def every(
    interval: float,
    work: Callable[[], Awaitable[None]],
    what: str,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> None:
    """Run `work` every `interval` seconds until cancelled, the first time after one interval (the start has
    just done it); a failure is logged and the next run tries again, as `wait.Until` and `HandleError` do."""
    while True:
        await sleep(interval)
        try:
            await work()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a store or validation failure: said, and tried again at the next run
            log.warning("unable to sync %s: %s", what, exc)


def upkeep_tasks(
    ensure_namespaces: Callable[[], Awaitable[None]],
    ensure_kubernetes_service: Callable[[], Awaitable[None]],
    *,
    service_interval: float = KUBERNETES_SERVICE_INTERVAL,
    namespaces_interval: float = SYSTEM_NAMESPACES_INTERVAL,
) -> list[asyncio.Task[None]]:
    """Start the two loops on the running event loop; the caller cancels the tasks when it stops serving."""
    loop = asyncio.get_running_loop()
    return [
        loop.create_task(every(namespaces_interval, ensure_namespaces, "system namespaces")),
        loop.create_task(every(service_interval, ensure_kubernetes_service, "kubernetes service")),
    ]
