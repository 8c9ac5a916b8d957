"""The ResourceQuota controller (pkg/controller/resourcequota/resource_quota_controller.go, v1.32).

kube-controller-manager's `resourcequota-controller`: each quota's `status.hard` is its `spec.hard` and
`status.used` what the objects in its namespace use (`syncResourceQuota`, by `kjobs.api.quota.calculate_status`).
A quota is synced when it is added, when its `spec.hard` changes, at every full resync (`--resource-quota-sync-
period`, 5 minutes), and when an object it counts is given back (the QuotaMonitor's replenishment): a pod that
is deleted or whose usage changes (it ended: terminal pods use no compute quota), a Job that is deleted.
The status is written only when it changed.

kjobs' own: other counted resources (`count/configmaps`, `secrets`, ...) are recounted at the full resync and
whenever a pod or Job change triggers one in their namespace, not on their own deletions (kjobs watches only
the resources its controllers already share); `count/*` names of groups outside the built-in ones are left as
admission charged them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kjobs.api import quota as q
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.informer import InformerFactory, Key, key_of
from kjobs.client.resources import JOBS, PODS, RESOURCE_QUOTAS, ResourceRef
from kjobs.client.workqueue import WorkerPool, WorkQueue
from kjobs.clock import Clock

log = logging.getLogger(__name__)

NAME = "resourcequota-controller"
"""kube-controller-manager's name for it (cmd/kube-controller-manager/names: `ResourceQuotaController`)."""

_VERSIONS = {
    "": "v1",
    "batch": "v1",
    "apps": "v1",
    "policy": "v1",
    "coordination.k8s.io": "v1",
    "discovery.k8s.io": "v1",
    "scheduling.k8s.io": "v1",
    "storage.k8s.io": "v1",
    "rbac.authorization.k8s.io": "v1",
    "events.k8s.io": "v1",
}
"""The groups whose objects a `count/*` name is recounted for, and the version listed."""


@dataclass(frozen=True)
class ResourceQuotaSettings:
    """`--concurrent-resource-quota-syncs` (5) and `--resource-quota-sync-period` (5m)."""

    workers: int = 5
    resync_period: float = 300.0


@dataclass(eq=False, repr=False)
class ResourceQuotaController:
    """Keeps every ResourceQuota's status."""

    client: Client
    clock: Clock
    settings: ResourceQuotaSettings = field(default_factory=ResourceQuotaSettings)
    shared: InformerFactory | None = None

    def __post_init__(self) -> None:
        factory = self.shared or InformerFactory(self.client, clock=self.clock)
        self.quotas = factory.informer(RESOURCE_QUOTAS)
        self.pods = factory.informer(PODS)
        self.jobs = factory.informer(JOBS)
        self.queue: WorkQueue[Key] = WorkQueue(clock=self.clock)
        self._workers = WorkerPool(self.queue, self.sync, name="resourcequota", workers=self.settings.workers)
        self._namespaces: dict[str, int] = {}
        """How many quotas each namespace has: a pod or Job event elsewhere costs one dict lookup."""

    async def start(self) -> None:
        self.quotas.add_handler(self._on_quota)
        self.pods.add_handler(self._on_pod)
        self.jobs.add_handler(self._on_job)
        for informer in (self.quotas, self.pods, self.jobs):
            informer.start()
        for informer in (self.quotas, self.pods, self.jobs):
            await informer.synced.wait()
        self._workers.start()
        self.queue.add_after(("", ""), self.settings.resync_period, periodic=True)  # the full resync's marker key

    async def stop(self) -> None:
        await self._workers.stop()
        for informer in (self.jobs, self.pods, self.quotas):
            await informer.stop()

    def _on_quota(self, old: Obj | None, new: Obj | None) -> None:
        """`addQuota` / `updateQuota` (when `spec.hard` changed) / delete."""
        if new is None:
            if old is not None:
                ns = str((old.get("metadata") or {}).get("namespace") or "")
                left = self._namespaces.get(ns, 0) - 1
                if left > 0:
                    self._namespaces[ns] = left
                else:
                    self._namespaces.pop(ns, None)
            return
        if old is None:
            ns = str((new.get("metadata") or {}).get("namespace") or "")
            self._namespaces[ns] = self._namespaces.get(ns, 0) + 1
            self.queue.add(key_of(new))
            return
        spec, status = new.get("spec") or {}, new.get("status") or {}
        if (old.get("spec") or {}).get("hard") != spec.get("hard") or status.get("used") is None:
            self.queue.add(key_of(new))

    def _replenish(self, obj: Obj, group: str, plural: str) -> None:
        """`replenishQuota`: requeue the namespace's quotas that count this resource."""
        ns = str((obj.get("metadata") or {}).get("namespace") or "")
        if ns not in self._namespaces:
            return
        for quota in self.quotas.list(ns):
            hard = ((quota.get("status") or {}).get("hard") or {}).keys()
            if q.matching_resources(group, plural, hard):
                self.queue.add(key_of(quota))

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        """A deleted pod, or one whose usage changed, gives quota back."""
        if old is None or str((old.get("metadata") or {}).get("namespace") or "") not in self._namespaces:
            return
        if new is not None:
            now = self.clock.now()
            if q.pod_usage(old, now) == q.pod_usage(new, now):
                return
        self._replenish(old, "", "pods")

    def _on_job(self, old: Obj | None, new: Obj | None) -> None:
        if new is None and old is not None and self._namespaces:
            self._replenish(old, "batch", "jobs")

    async def sync(self, key: Key) -> None:
        """`syncResourceQuotaFromKey` (the empty key: the full resync, which requeues every quota)."""
        if key == ("", ""):
            for quota in self.quotas.list():
                self.queue.add(key_of(quota))
            self.queue.add_after(key, self.settings.resync_period, periodic=True)
            return
        cached = self.quotas.get(*key)
        if cached is None:
            return
        quota = cached
        namespace = key[0]
        hard = ((quota.get("spec") or {}).get("hard") or {}).keys()
        objects: dict[tuple[str, str], list[Obj]] = {}
        for group, plural in q.counted_resources(hard):
            if (group, plural) == ("", "pods"):
                objects[(group, plural)] = self.pods.list(namespace)
            elif (group, plural) == ("batch", "jobs"):
                objects[(group, plural)] = self.jobs.list(namespace)
            elif group in _VERSIONS:
                ref = ResourceRef(group, _VERSIONS[group], plural, "")
                items, _ = await self.client.list(ref, namespace)
                objects[(group, plural)] = items
        status = q.calculate_status(quota, objects, self.clock.now())
        current = quota.get("status") or {}
        if current.get("hard") == status["hard"] and current.get("used") == status["used"]:
            return
        await self.client.update(RESOURCE_QUOTAS, namespace, {**quota, "status": status}, subresource="status")
