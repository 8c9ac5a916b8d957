"""The LimitRanger and ResourceQuota admission plugins, as the API service runs them on creates.

LimitRanger (plugin/pkg/admission/limitranger/admission.go) fills a created pod's container defaults from the
namespace's LimitRanges (mutating, before validation) and refuses one out of their range (validating, after);
ResourceQuota (staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota) runs last: it checks the
created object against the namespace's quotas and records the new usage in their `status.used` before the
object is stored, as kube-apiserver does (the quota controller, `kjobs.controllers.resourcequota`, recomputes
it from the objects, so an object whose store write then fails is charged only until the next recount).

Cost: both plugins first look the namespace up in a dict of the namespaces that have any LimitRange or
ResourceQuota (built by one list, dropped at each write of either kind), so a namespace without them costs a pod
create one dict lookup each. Quota checks of one namespace take turns (an asyncio lock per namespace), as
upstream's evaluator works one namespace's admissions in one goroutine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from kjobs.api import limitranger
from kjobs.api import quota as q
from kjobs.api.errors import ApiError, forbidden
from kjobs.api.types import Obj
from kjobs.server.storage import Storage

_QUOTAS = "resourcequotas"
_LIMIT_RANGES = "limitranges"
_UPDATE_ATTEMPTS = 3


class QuotaAdmission:
    """The namespaces' LimitRanges and ResourceQuotas as admission sees them."""

    def __init__(self, store: Storage, clock: Callable[[], float]) -> None:
        self.store = store
        self.clock = clock
        self._names: dict[str, dict[str, list[str]] | None] = {_QUOTAS: None, _LIMIT_RANGES: None}
        self._locks: dict[str, asyncio.Lock] = {}

    def written(self, kind: str) -> None:
        """An object of `kind` was written: the next admission lists that kind again."""
        if kind == "ResourceQuota":
            self._names[_QUOTAS] = None
        elif kind == "LimitRange":
            self._names[_LIMIT_RANGES] = None

    def _objects(self, resource: str, namespace: str) -> list[Obj]:
        names = self._names[resource]
        if names is None:
            items, _ = self.store.list(resource, None)
            names = {}
            for item in items:
                meta = item.get("metadata") or {}
                names.setdefault(str(meta.get("namespace") or ""), []).append(str(meta.get("name") or ""))
            self._names[resource] = names
        listed = names.get(namespace)
        if not listed:
            return []
        found = (self.store.get(resource, namespace, name) for name in listed)
        return [obj for obj in found if obj is not None]

    def limit_ranges(self, namespace: str) -> list[Obj]:
        return self._objects(_LIMIT_RANGES, namespace)

    def admit_pod(self, pod: Obj, namespace: str) -> Obj:
        """LimitRanger's mutating half: the pod with its namespace's defaults (itself when none apply)."""
        ranges = self._objects(_LIMIT_RANGES, namespace)  # `limit_ranges`, without its call (a pod create's)
        return limitranger.mutate_pod(pod, ranges) if ranges else pod

    def validate_pod(self, pod: Obj, namespace: str, name: str) -> None:
        """LimitRanger's validating half: 403 on the first LimitRange the pod breaks."""
        for limit_range in self._objects(_LIMIT_RANGES, namespace):
            refusal = limitranger.validate_pod(pod, limit_range)
            if refusal is not None:
                raise forbidden("pods", name, refusal)

    def validate_claim(self, claim: Obj, namespace: str, name: str) -> None:
        """LimitRanger's check of a created PersistentVolumeClaim against PersistentVolumeClaim items."""
        for limit_range in self.limit_ranges(namespace):
            refusal = limitranger.validate_claim(claim, limit_range)
            if refusal is not None:
                raise forbidden("persistentvolumeclaims", name, refusal)

    def applies(self, group: str, plural: str, namespace: str) -> bool:
        """Whether `check` has anything to do: a create of a counted resource in a namespace with a ResourceQuota.
        Asked first, so the create of a namespace without one (every pod of a simulation) makes no coroutine."""
        return (
            (group, plural) not in q.IGNORED_RESOURCES and bool(namespace) and bool(self._objects(_QUOTAS, namespace))
        )

    async def check(self, group: str, plural: str, obj: Obj, namespace: str, name: str, *, dry_run: bool) -> None:
        """ResourceQuota: refuse a create that exceeds a quota (403), else charge it to the quotas it matches."""
        if not self.applies(group, plural, namespace):
            return
        resource = f"{plural}.{group}" if group else plural
        lock = self._locks.setdefault(namespace, asyncio.Lock())
        async with lock:
            for attempt in range(_UPDATE_ATTEMPTS):
                quotas = self._objects(_QUOTAS, namespace)
                changed, refusal = q.check_request(group, plural, obj, quotas, now=self.clock(), dry_run=dry_run)
                if refusal is not None:
                    raise forbidden(resource, name, refusal)
                try:
                    for new in changed:
                        meta = new.get("metadata") or {}
                        await self.store.update(_QUOTAS, new, expected_rv=meta.get("resourceVersion"))
                    return
                except ApiError as exc:
                    if exc.reason not in ("Conflict", "NotFound") or attempt == _UPDATE_ATTEMPTS - 1:
                        raise
