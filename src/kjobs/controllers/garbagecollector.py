"""The garbage collector for `ownerReferences` (`pkg/controller/garbagecollector`).

It watches the configured resources (by default each kind kjobs serves that users give owners: Pods, Jobs, CronJobs,
ConfigMaps, Secrets, Services, PodDisruptionBudgets, ServiceAccounts, and Namespaces; Kubernetes' graph builder
watches every deletable resource but core Events, `ignoredResources` in
pkg/controller/garbagecollector/graph_builder.go), indexes every object by uid and every owner by its dependents,
and works a queue of two actions, as Kubernetes' GC does:
* attempt to delete an object: read it live; if it is being deleted it is left alone, unless it waits for its
  dependents (`foregroundDeletion` finalizer), in which case the finalizer is removed once no dependent with
  `blockOwnerDeletion` remains, and the blocking ones are queued. Otherwise its owners are classified with
  live GETs: solid (exists), dangling (gone or another uid) or waiting (being deleted in the foreground). With
  a solid owner, dangling and waiting references are removed; with only waiting owners and dependents of its
  own it is deleted in the foreground (its references made non-blocking first when a dependent waits too, which
  would be a cycle); otherwise it is deleted, honouring its own orphan/foreground finalizer
  (Background by default). Deletes carry uid and resourceVersion preconditions; a conflict re-reads the
  object and gives up if its owners changed.
* orphan: strip the owner's reference from each dependent, then remove the owner's `orphan` finalizer.
kjobs' API service also cascades Job deletions in process (`ApiService._cascade`): it marks a Job's pods for
deletion (Background/Foreground; a pod with another owner is left to this collector) or strips their
references (Orphan) itself, and finishes foreground deletions when the node agent removes the last blocking
pod. The collector then finds those pods already being deleted or unowned and does nothing; it is what makes
deletion cascade for every other owner/dependent pair, for pods removed without the node agent, and against a
real API server (which only adds the finalizers).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import dataclass, field
from typing import Any

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client import resources as R
from kjobs.client.base import Client
from kjobs.client.informer import Handler, InformerFactory, key_of
from kjobs.client.resources import (
    CONFIG_MAPS,
    CRONJOBS,
    JOBS,
    NAMESPACES,
    PDBS,
    PODS,
    SECRETS,
    SERVICE_ACCOUNTS,
    SERVICES,
    ResourceRef,
)
from kjobs.client.workqueue import WorkerPool, WorkQueue
from kjobs.clock import Clock

log = logging.getLogger(__name__)

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
KNOWN: tuple[ResourceRef, ...] = (
    R.PODS,
    R.NODES,
    R.EVENTS,
    R.CONFIG_MAPS,
    R.SECRETS,
    R.SERVICES,
    R.NAMESPACES,
    R.JOBS,
    R.CRONJOBS,
    R.LEASES,
    R.PDBS,
    R.PRIORITY_CLASSES,
    R.SERVICE_ACCOUNTS,
)

CRDS = ResourceRef(
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", namespaced=False
)
"""Watched to follow the custom resources as CRDs are Established and deleted (the graph builder's discovery
resync, pkg/controller/garbagecollector/graph_builder.go `syncMonitors`)."""

Item = tuple[str, ResourceRef, str, str, str]
"""(action, resource, namespace, name, uid); action is "delete" or "orphan"."""


@dataclass(frozen=True)
class GarbageCollectorSettings:
    """Which resources to watch (dependents and owners) and how many workers."""

    resources: tuple[ResourceRef, ...] = (
        PODS,
        JOBS,
        CRONJOBS,
        CONFIG_MAPS,
        SECRETS,
        SERVICES,
        PDBS,
        SERVICE_ACCOUNTS,
        NAMESPACES,
    )
    """Every kind kjobs serves that users give owners (the module docstring's), and Namespaces: a namespace
    deleted with propagation Orphan or Foreground carries the `orphan`/`foregroundDeletion` finalizer, which
    only this collector removes (pkg/registry/core/namespace/storage/storage.go `Delete`)."""
    workers: int = 4
    custom_resources: bool = True
    """Also watch the resources of every Established CustomResourceDefinition (Kubernetes watches every
    deletable resource)."""


def _meta(obj: Obj) -> Obj:
    meta: Obj = obj.get("metadata") or {}
    return meta


def _refs(obj: Obj | None) -> list[Obj]:
    return [r for r in _meta(obj or {}).get("ownerReferences") or [] if isinstance(r, dict)]


def _finalizers(obj: Obj) -> list[str]:
    return [str(f) for f in _meta(obj).get("finalizers") or []]


def _same_graph_facts(old: Obj, new: Obj) -> bool:
    """Whether an update leaves what the graph acts on as it was: owners, deletion, and the two finalizers the
    collector acts on (`orphan`, `foregroundDeletion`). Other finalizers are not its business: the Job
    controller's removal of a pod's tracking finalizer (one per pod) changes nothing here, as the graph builder
    only looks for those two (`startsWaitingForDependentsDeleted`/`...Orphaned`,
    pkg/controller/garbagecollector/graph_builder.go)."""
    before, after = old.get("metadata") or {}, new.get("metadata") or {}  # `_meta` inline: every update's path
    if before.get("ownerReferences") != after.get("ownerReferences"):
        return False
    if before.get("deletionTimestamp") != after.get("deletionTimestamp"):
        return False
    old_finalizers, new_finalizers = before.get("finalizers"), after.get("finalizers")
    if old_finalizers == new_finalizers:
        return True
    return _collector_finalizers(old_finalizers) == _collector_finalizers(new_finalizers)


def _collector_finalizers(finalizers: Any) -> tuple[bool, bool]:
    """Which of `orphan` and `foregroundDeletion` a finalizer list holds (a malformed one: both, to be safe)."""
    if not isinstance(finalizers, list):
        return (True, True) if finalizers else (False, False)
    return ORPHAN in finalizers, FOREGROUND in finalizers


def _unblocked(old: Obj | None, new: Obj | None) -> list[str]:
    """Uids of owners whose reference went from blocking (`blockOwnerDeletion: true`) to not blocking."""
    if old is None or new is None:
        return []
    blocking = {str(r.get("uid")) for r in _refs(old) if r.get("blockOwnerDeletion")}
    return [str(r.get("uid")) for r in _refs(new) if str(r.get("uid")) in blocking and not r.get("blockOwnerDeletion")]


def is_deleting_dependents(obj: Obj) -> bool:
    """Being deleted in the foreground: deletionTimestamp and the `foregroundDeletion` finalizer."""
    return bool(_meta(obj).get("deletionTimestamp")) and FOREGROUND in _finalizers(obj)


def is_orphaning(obj: Obj) -> bool:
    """Being deleted with propagation Orphan: deletionTimestamp and the `orphan` finalizer."""
    return bool(_meta(obj).get("deletionTimestamp")) and ORPHAN in _finalizers(obj)


def resource_for(ref: Obj, known: tuple[ResourceRef, ...] = KNOWN) -> ResourceRef | None:
    """The resource an ownerReference points at (by apiVersion and kind), if kjobs knows it."""
    return next((r for r in known if r.api_version == ref.get("apiVersion") and r.kind == ref.get("kind")), None)


def _custom_ref(crd: Obj) -> ResourceRef | None:
    """The storage version's resource of an Established CRD."""
    status = crd.get("status") or {}
    if not any(c.get("type") == "Established" and c.get("status") == "True" for c in status.get("conditions") or []):
        return None
    spec = crd.get("spec") or {}
    names = status.get("acceptedNames") or spec.get("names") or {}
    for version in spec.get("versions") or []:
        if version.get("storage") and version.get("served"):
            namespaced = spec.get("scope") == "Namespaced"
            return ResourceRef(
                str(spec.get("group")),
                str(version["name"]),
                str(names.get("plural")),
                str(names.get("kind")),
                namespaced,
            )
    return None


@dataclass
class _Node:
    resource: ResourceRef
    namespace: str
    name: str
    obj: Obj


@dataclass(eq=False, repr=False)
class GarbageCollector:
    """Deletes dependents whose owners are gone, and carries out Foreground and Orphan deletions."""

    client: Client
    clock: Clock
    settings: GarbageCollectorSettings = field(default_factory=GarbageCollectorSettings)
    shared: InformerFactory | None = None
    """Informers shared with other controllers (a private set when None)."""

    def __post_init__(self) -> None:
        factory = self.shared or InformerFactory(self.client, clock=self.clock)
        self._factory = factory
        self.informers = {r: factory.informer(r) for r in self.settings.resources}
        self.custom: dict[str, ResourceRef] = {}
        """The custom resources watched, by CRD name."""
        self.nodes: dict[str, _Node] = {}
        self.dependents: dict[str, set[str]] = {}
        self.queue: WorkQueue[Item] = WorkQueue(clock=self.clock)
        self._workers = WorkerPool(self.queue, self._attempt, name="gc", workers=self.settings.workers)

    async def start(self) -> None:
        """Start informers, wait for their first list, then the workers."""
        for resource, informer in self.informers.items():
            informer.add_handler(self._handler(resource))
            informer.start()
        await asyncio.gather(*(i.synced.wait() for i in self.informers.values()))
        if self.settings.custom_resources:
            crds = self._factory.informer(CRDS)
            crds.add_handler(self._crd_changed)
            crds.start()
            self._crds = crds
        self._workers.start()

    async def stop(self) -> None:
        """Stop workers and informers."""
        await self._workers.stop()
        if getattr(self, "_crds", None) is not None:
            await self._crds.stop()
        for informer in self.informers.values():
            await informer.stop()

    def _crd_changed(self, old: Obj | None, new: Obj | None) -> None:
        """Watch the storage version of an Established CRD's resource; stop when the CRD goes or terminates."""
        crd = new or old
        assert crd is not None
        name = str(_meta(crd).get("name") or "")
        ref = _custom_ref(new) if new is not None and not _meta(new).get("deletionTimestamp") else None
        current = self.custom.get(name)
        if ref == current:
            return
        if current is not None:
            del self.custom[name]
            informer = self.informers.pop(current, None)
            if informer is not None:
                asyncio.get_running_loop().create_task(informer.stop())
        if ref is not None:
            self.custom[name] = ref
            informer = self._factory.informer(ref)
            informer.add_handler(self._handler(ref))
            informer.start()
            self.informers[ref] = informer

    def _known(self) -> tuple[ResourceRef, ...]:
        return (*KNOWN, *self.custom.values())

    # ------------------------------------------------------------------------------------------- graph

    def _handler(self, resource: ResourceRef) -> Handler:
        # A partial rather than a closure: one Python frame less on every event of every watched resource.
        return functools.partial(self._observe, resource)

    def _observe_gone(self, uid: str, old: Obj | None) -> None:
        """`_observe` of a delete: the object leaves its owners' dependents (an owner deleting its dependents in
        the foreground may be done) and the graph, and its own dependents are looked at again. The update's
        steps it has no use for (its name, the new owners, `_unblocked`, which is empty without a new version)
        are left out: a pod GC pass deletes thousands of pods."""
        if old is not None:
            for owner in {str(r.get("uid")) for r in _refs(old)}:  # `old_owners - new_owners`, no new owners
                dependents = self.dependents.get(owner)
                if dependents is not None:
                    dependents.discard(uid)
                    if not dependents:
                        del self.dependents[owner]
                owner_node = self.nodes.get(owner)
                if owner_node is not None and is_deleting_dependents(owner_node.obj):
                    self._enqueue("delete", owner_node)
        self.nodes.pop(uid, None)
        own = self.dependents.get(uid)
        if own:
            for dependent in sorted(own):
                node = self.nodes.get(dependent)
                if node is not None:
                    self._enqueue("delete", node)

    def _enqueue(self, action: str, node: _Node) -> None:
        self.queue.add((action, node.resource, node.namespace, node.name, str(_meta(node.obj).get("uid") or "")))

    def _observe(self, resource: ResourceRef, old: Obj | None, new: Obj | None) -> None:
        obj = new or old
        assert obj is not None
        uid = (obj.get("metadata") or {}).get("uid") or ""
        if type(uid) is not str:
            uid = str(uid)
        if not uid:
            return
        if old is not None and new is not None and _same_graph_facts(old, new):
            known = self.nodes.get(uid)
            if known is not None:
                # Most updates (status, labels) change nothing the graph holds: keep the newest object, no more.
                known.obj = new
                return
        if new is None:
            self._observe_gone(uid, old)
            return
        namespace, name = key_of(obj)
        new_owners = {str(r.get("uid")) for r in _refs(new)}
        old_owners: set[str] = set()
        if old is not None:  # an add (every object once) has no owners before, and no reference that stopped blocking
            old_owners = {str(r.get("uid")) for r in _refs(old)}
            for owner in old_owners - new_owners:
                dependents = self.dependents.get(owner)
                if dependents is not None:
                    dependents.discard(uid)
                    if not dependents:  # an owner's last dependent gone: no empty set per owner ever seen
                        del self.dependents[owner]
                owner_node = self.nodes.get(owner)
                if owner_node is not None and is_deleting_dependents(owner_node.obj):
                    self._enqueue("delete", owner_node)
            for owner in _unblocked(old, new):
                # a reference no longer blocks: an owner waiting for its dependents may be done
                # (`addUnblockedOwnersToDeleteQueue`, pkg/controller/garbagecollector/graph_builder.go)
                owner_node = self.nodes.get(owner)
                if owner_node is not None and is_deleting_dependents(owner_node.obj):
                    self._enqueue("delete", owner_node)
        node = _Node(resource, namespace, name, new)
        self.nodes[uid] = node
        for owner in new_owners:
            self.dependents.setdefault(owner, set()).add(uid)
        if new_owners and (old is None or new_owners != old_owners):
            for owner in new_owners:  # an owner not in the graph, or being deleted: `any`, with no generator
                owner_node = self.nodes.get(owner)
                if owner_node is None or (owner_node.obj.get("metadata") or {}).get("deletionTimestamp"):
                    self._enqueue("delete", node)
                    break
        deleting = bool(_meta(new).get("deletionTimestamp"))  # what both tests below read first
        if deleting and is_orphaning(new) and not (old is not None and is_orphaning(old)):
            self._enqueue("orphan", node)
        if deleting and is_deleting_dependents(new) and not (old is not None and is_deleting_dependents(old)):
            self._enqueue("delete", node)
            for dependent in sorted(self.dependents.get(uid, ())):
                dep = self.nodes.get(dependent)
                if dep is not None:
                    self._enqueue("delete", dep)

    def _blocking_dependents(self, uid: str) -> list[_Node]:
        blocking = []
        for dependent in sorted(self.dependents.get(uid, ())):
            node = self.nodes.get(dependent)
            if node is None:
                continue
            if any(str(r.get("uid")) == uid and r.get("blockOwnerDeletion") for r in _refs(node.obj)):
                blocking.append(node)
        return blocking

    # ---------------------------------------------------------------------------------------- workers

    async def _attempt(self, item: Item) -> None:
        if item[0] == "orphan":
            await self.attempt_to_orphan(item)
        else:
            await self.attempt_to_delete(item)

    async def _get(self, resource: ResourceRef, namespace: str, name: str) -> Obj | None:
        try:
            obj: Obj = await self.client.get(resource, namespace if resource.namespaced else None, name)
            return obj
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise

    async def attempt_to_delete(self, item: Item) -> None:
        """`attemptToDeleteItem`."""
        _, resource, namespace, name, uid = item
        latest = await self._get(resource, namespace, name)
        if latest is None or _meta(latest).get("uid") != uid:
            return
        if _meta(latest).get("deletionTimestamp"):
            if is_deleting_dependents(latest):
                await self._process_deleting_dependents(resource, latest)
            return
        refs = _refs(latest)
        if not refs:
            return
        solid, dangling, waiting = await self._classify(latest, refs)
        if solid:
            drop = {str(r.get("uid")) for r in dangling + waiting}
            if drop:
                await self._patch_refs(resource, latest, [r for r in refs if str(r.get("uid")) not in drop])
            return
        if waiting and self.dependents.get(uid):
            if any(
                (dep := self.nodes.get(d)) is not None and is_deleting_dependents(dep.obj) for d in self.dependents[uid]
            ):
                # a dependent waits for its own dependents too: a possible cycle of foreground deletions, broken
                # by making this object's owner references non-blocking (`unblockOwnerReferences`,
                # pkg/controller/garbagecollector/garbagecollector.go `attemptToDeleteItem`)
                unblocked = [dict(r, blockOwnerDeletion=False) if r.get("blockOwnerDeletion") else r for r in refs]
                if unblocked != refs:
                    patched = await self._patch_refs(resource, latest, unblocked)
                    if patched is None:
                        return
                    latest = patched
            await self._delete(resource, latest, "Foreground")
            return
        if ORPHAN in _finalizers(latest):
            policy = "Orphan"
        elif FOREGROUND in _finalizers(latest):
            policy = "Foreground"
        else:
            policy = "Background"
        await self._delete(resource, latest, policy)

    async def _process_deleting_dependents(self, resource: ResourceRef, owner: Obj) -> None:
        uid = str(_meta(owner).get("uid"))
        blocking = self._blocking_dependents(uid)
        if not blocking:
            await self._remove_finalizer(resource, owner, FOREGROUND)
            return
        for dependent in blocking:
            if not is_deleting_dependents(dependent.obj):
                self._enqueue("delete", dependent)

    async def _classify(self, item: Obj, refs: list[Obj]) -> tuple[list[Obj], list[Obj], list[Obj]]:
        solid: list[Obj] = []
        dangling: list[Obj] = []
        waiting: list[Obj] = []
        namespace = str(_meta(item).get("namespace") or "")
        for ref in refs:
            owner_resource = resource_for(ref, self._known())
            if owner_resource is None:
                raise LookupError(f"unable to get REST mapping for {ref.get('apiVersion')}/{ref.get('kind')}")
            if owner_resource.namespaced and not namespace:
                raise LookupError("cluster-scoped object refers to a namespaced owner")
            owner = await self._get(owner_resource, namespace, str(ref.get("name") or ""))
            if owner is None or _meta(owner).get("uid") != ref.get("uid"):
                dangling.append(ref)
            elif is_deleting_dependents(owner):
                waiting.append(ref)
            else:
                solid.append(ref)
        return solid, dangling, waiting

    async def _delete(self, resource: ResourceRef, latest: Obj, policy: str) -> None:
        meta = _meta(latest)
        namespace = str(meta.get("namespace") or "") or None
        preconditions = {"uid": meta.get("uid"), "resourceVersion": meta.get("resourceVersion")}
        try:
            await self.client.delete(
                resource, namespace, str(meta["name"]), propagation_policy=policy, preconditions=preconditions
            )
            return
        except ApiError as exc:
            if exc.code == 404:
                return
            if exc.code != 409:
                raise
        live = await self._get(resource, namespace or "", str(meta["name"]))
        if live is None or _meta(live).get("uid") != meta.get("uid"):
            return
        if _refs(live) != _refs(latest):
            return  # its owners changed since we decided: it will be looked at again
        try:
            await self.client.delete(
                resource,
                namespace,
                str(meta["name"]),
                propagation_policy=policy,
                preconditions={"uid": meta.get("uid")},
            )
        except ApiError as exc:
            if exc.code != 404:
                raise

    async def _patch_refs(self, resource: ResourceRef, obj: Obj, refs: list[Obj]) -> Obj | None:
        """Replace the object's ownerReferences (resourceVersion as a precondition); the object written, or None
        if it is gone."""
        meta = _meta(obj)
        patch: Obj = {"metadata": {"ownerReferences": refs or None, "resourceVersion": meta.get("resourceVersion")}}
        try:
            written: Obj = await self.client.patch(
                resource, str(meta.get("namespace") or "") or None, str(meta["name"]), patch, patch_type="merge"
            )
            return written
        except ApiError as exc:
            if exc.code != 404:
                raise
        return None

    async def _remove_finalizer(self, resource: ResourceRef, obj: Obj, finalizer: str) -> None:
        meta = _meta(obj)
        rest = [f for f in _finalizers(obj) if f != finalizer]
        if len(rest) == len(_finalizers(obj)):
            return
        patch: Obj = {"metadata": {"finalizers": rest or None, "resourceVersion": meta.get("resourceVersion")}}
        try:
            await self.client.patch(
                resource, str(meta.get("namespace") or "") or None, str(meta["name"]), patch, patch_type="merge"
            )
        except ApiError as exc:
            if exc.code != 404:
                raise

    async def attempt_to_orphan(self, item: Item) -> None:
        """`attemptToOrphanWorker`: remove the owner from its dependents' references, then its `orphan` finalizer."""
        _, resource, namespace, name, uid = item
        for dependent in sorted(self.dependents.get(uid, ())):
            node = self.nodes.get(dependent)
            if node is None:
                continue
            latest = await self._get(node.resource, node.namespace, node.name)
            if latest is None or str(_meta(latest).get("uid")) != dependent:
                continue
            refs = _refs(latest)
            if any(str(r.get("uid")) == uid for r in refs):
                await self._patch_refs(node.resource, latest, [r for r in refs if str(r.get("uid")) != uid])
        owner = await self._get(resource, namespace, name)
        if owner is not None and _meta(owner).get("uid") == uid:
            await self._remove_finalizer(resource, owner, ORPHAN)
