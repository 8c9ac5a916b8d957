"""The apiextensions controllers kube-apiserver runs for CRDs, in the API server process.

* naming + establishing (pkg/controller/status/naming_controller.go, pkg/controller/establish): a CRD's
  `status.acceptedNames` and its `NamesAccepted`/`Established` conditions; once Established its resources
  are served (`customresources.sync`).
* finalizer (pkg/controller/finalizer/crd_finalizer.go): a deleted CRD carries
  `customresourcecleanup.apiextensions.k8s.io` (its DELETE adds it, pkg/registry/customresourcedefinition/etcd.go);
  its resources stop being served, condition `Terminating` says so, every custom object is deleted, and then
  the finalizer is removed, which deletes the CRD.

Each CRD write (`Service._written`) re-serves the Established CRDs at once and schedules one reconcile pass.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any

import orjson

from kjobs.api import crds
from kjobs.api.errors import ApiError
from kjobs.api.types import Obj

if TYPE_CHECKING:
    from kjobs.server.service import ApiService

KEY = "customresourcedefinitions.apiextensions.k8s.io"
_CLEANUP_POLL = 0.2
"""How often a deleted CRD whose objects still have finalizers looks again."""


class CrdController:
    """Keeps the CRDs' status and the served custom resources in step with the stored CRDs."""

    def __init__(self, service: ApiService) -> None:
        self.service = service
        self._task: asyncio.Task[None] | None = None
        self._again = False

    def _crds(self) -> list[Obj]:
        items, _ = self.service.store.list(KEY, None)
        return items

    def sync_now(self) -> None:
        """Serve the Established CRDs' resources (at start: a restart serves what was served)."""
        _sync(self._crds())

    def changed(self) -> None:
        """A CRD was written: serve what is Established now, and reconcile in the background."""
        items = self._crds()
        _sync(items)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = loop.create_task(self._run())

    async def _run(self) -> None:
        while True:
            self._again = False
            try:
                await self.reconcile()
            except ApiError:
                self._again = True  # a conflict with a concurrent write: the next pass reads again
            if not self._again:
                return

    async def reconcile(self) -> None:
        """One pass: status of every CRD, then the cleanup of the deleted ones."""
        items = sorted(
            self._crds(),
            key=lambda c: (str((c.get("metadata") or {}).get("creationTimestamp") or ""), str(c["metadata"]["name"])),
        )
        now = self.service.now()
        settled: list[Obj] = []
        for crd in items:
            crd = orjson.loads(orjson.dumps(crd))
            status = crds.computed_status(crd, settled, now)
            if status != crd.get("status"):
                crd["status"] = status
                crd = await self.service.store.update(KEY, crd, expected_rv=crd["metadata"].get("resourceVersion"))
            settled.append(crd)
        _sync(self._crds())
        for crd in settled:
            meta = crd.get("metadata") or {}
            if meta.get("deletionTimestamp") and crds.CLEANUP_FINALIZER in (meta.get("finalizers") or []):
                await self._clean_up(crd)
        _sync(self._crds())

    async def _clean_up(self, crd: Obj) -> None:
        """Delete every object of the CRD's resource, then drop the finalizer (deleting the CRD)."""
        from kjobs.server import customresources
        from kjobs.server.service import DeleteOptions

        rows = customresources.resources_of_crd(crd)
        if rows:
            row = rows[0]
            while True:
                objects, _ = self.service.store.list(row.store_key, None)
                if not objects:
                    break
                waiting = False
                for obj in objects:
                    meta = obj.get("metadata") or {}
                    if meta.get("deletionTimestamp"):
                        waiting = True
                        continue
                    try:
                        await self.service.delete(
                            row, str(meta.get("namespace") or ""), str(meta["name"]), _options(DeleteOptions)
                        )
                    except ApiError as exc:
                        if exc.code != 404:
                            raise
                if waiting:  # finalizers of others hold some objects: the finalizer controller requeues
                    await asyncio.sleep(_CLEANUP_POLL)
        current = self.service.store.get(KEY, "", str(crd["metadata"]["name"]))
        if current is None:
            return
        meta = current["metadata"]
        finalizers = [f for f in meta.get("finalizers") or [] if f != crds.CLEANUP_FINALIZER]
        if finalizers:
            meta["finalizers"] = finalizers
            await self.service.store.update(KEY, current, expected_rv=meta.get("resourceVersion"))
        else:
            await self.service.store.delete(KEY, "", meta["name"], expected_rv=meta.get("resourceVersion"))


def _sync(items: list[Obj]) -> None:
    """`customresources.sync(items)`. Only that module serves custom resources (their rows, printers and field
    labels), so while it was never imported nothing is served that a sync of no CRDs would withdraw: a process
    that stores no CRD (`kjobs run`, `kjobs simulate`) never imports it, nor the CRD schemas and printers it needs."""
    if not items and "kjobs.server.customresources" not in sys.modules:
        return
    from kjobs.server import customresources

    customresources.sync(items)


def _options(cls: Any) -> Any:
    return cls.parse(None, {})


def add_cleanup_finalizer(meta: Obj) -> None:
    """The CRD registry's Delete: the cleanup finalizer goes on before the deletion timestamp."""
    finalizers = list(meta.get("finalizers") or [])
    if crds.CLEANUP_FINALIZER not in finalizers:
        finalizers.append(crds.CLEANUP_FINALIZER)
    meta["finalizers"] = finalizers
