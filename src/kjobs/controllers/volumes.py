"""PersistentVolume binding, local-path provisioning, and the pvc/pv protection controllers.

Three of kube-controller-manager's volume controllers, to the degree a local cluster needs them, plus the
provisioner a kind cluster runs:

* `persistentvolume-binder` (pkg/controller/volume/persistentvolume/pv_controller.go `syncClaim`,
  `syncUnboundClaim`, `syncBoundClaim`, `syncVolume`, `bind`): an unbound claim of an `Immediate` class (or of
  no class) is bound to the smallest Available volume that fits it (class, access modes, volume mode, capacity,
  selector: `findBestMatchForClaim`), or provisioned by its class's provisioner; a claim of a
  `WaitForFirstConsumer` class waits (event `WaitForFirstConsumer`) until the scheduler names a node in its
  `volume.kubernetes.io/selected-node` annotation. Binding writes, in upstream's order, the volume's `claimRef`,
  its phase Bound, the claim's `volumeName` with `pv.kubernetes.io/bind-completed` and
  `pv.kubernetes.io/bound-by-controller`, then the claim's phase Bound with the volume's capacity and access
  modes. A volume whose claim is gone is Released, then reclaimed: `Delete` deletes it (and the provisioner
  removes its directory), `Retain` keeps it Released.
* The provisioner of the `standard` class (`rancher.io/local-path`, as kind's local-path-provisioner is named):
  kjobs' own, in-process. It answers a claim with a `hostPath` volume `pvc-<claim uid>` whose directory,
  `<storage dir>/pvc-<claim uid>`, it makes (`kjobs up`: `<data-dir>/storage`), with node affinity to the selected
  node, as local-path-provisioner does; events `ExternalProvisioning` (from the binder), `Provisioning` and
  `ProvisioningSucceeded` (from the provisioner).
* `persistentvolumeclaim-protection` (pkg/controller/volume/pvcprotection): a claim being deleted keeps its
  `kubernetes.io/pvc-protection` finalizer while a scheduled pod that has not finished uses it.
* `persistentvolume-protection` (pkg/controller/volume/pvprotection): a volume being deleted keeps
  `kubernetes.io/pv-protection` while it is Bound.

Not done: CSI, attach/detach, expansion, snapshots and data sources, the Recycle reclaim policy (deprecated),
volume attributes classes, and the scheduler-side binding of pre-provisioned volumes to WFFC claims (the binder
does it once the node is selected).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from pathlib import Path

from kjobs.api.errors import ApiError
from kjobs.api.nodeaffinity import match_term
from kjobs.api.storage import (
    BETA_STORAGE_CLASS_ANNOTATION,
    BETA_STORAGE_PROVISIONER_ANNOTATION,
    BIND_COMPLETED_ANNOTATION,
    BOUND_BY_CONTROLLER_ANNOTATION,
    PROVISIONED_BY_ANNOTATION,
    PV_PROTECTION_FINALIZER,
    PVC_PROTECTION_FINALIZER,
    SELECTED_NODE_ANNOTATION,
    STORAGE_PROVISIONER_ANNOTATION,
    WAIT_FOR_FIRST_CONSUMER,
    host_path,
    is_default_class,
    pod_claim_names,
    storage_of,
)
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj, section
from kjobs.api.validation_meta import selector_matches
from kjobs.client.base import Client
from kjobs.client.events import EventRecorder
from kjobs.client.informer import InformerFactory
from kjobs.client.resources import (
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    PODS,
    STORAGE_CLASSES,
    ResourceRef,
)
from kjobs.client.workqueue import WorkerPool, WorkQueue
from kjobs.clock import Clock

log = logging.getLogger(__name__)

BINDER = "persistentvolume-binder"
PVC_PROTECTION = "persistentvolumeclaim-protection"
PV_PROTECTION = "persistentvolume-protection"
EVENT_COMPONENT = "persistentvolume-controller"
"""The binder's events' source (`EventRecorder` of `NewController`)."""

LOCAL_PATH_PROVISIONER = "rancher.io/local-path"
PROVISIONER_COMPONENT = f"{LOCAL_PATH_PROVISIONER}_kjobs-local-path-provisioner"
"""The provisioner's events' source: an external provisioner's `<provisioner>_<identity>`."""
STORAGE_DIR_MODE = 0o777
"""local-path-provisioner makes every volume directory world-writable, so any pod's user can write to it."""


# ------------------------------------------------------------------------------------------------ helpers


_meta = partial(section, key="metadata")
_spec = partial(section, key="spec")


def _phase(obj: Obj) -> str:
    status = obj.get("status")
    return str(status.get("phase") or "") if isinstance(status, dict) else ""


def _annotations(obj: Obj) -> dict[str, str]:
    annotations = _meta(obj).get("annotations")
    return annotations if isinstance(annotations, dict) else {}


def claim_class(claim: Obj) -> str:
    """`GetPersistentVolumeClaimClass`: the beta annotation first, then `spec.storageClassName`."""
    annotations = _annotations(claim)
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        return str(annotations[BETA_STORAGE_CLASS_ANNOTATION])
    return str(_spec(claim).get("storageClassName") or "")


def has_class(claim: Obj) -> bool:
    """`PersistentVolumeClaimHasClass`: the beta annotation, or `spec.storageClassName` set (even to "")."""
    return BETA_STORAGE_CLASS_ANNOTATION in _annotations(claim) or _spec(claim).get("storageClassName") is not None


def default_class(classes: list[Obj]) -> Obj | None:
    """`GetDefaultClass` (pkg/volume/util/storageclass.go): the newest class annotated default (equal times: the
    first by name), as the DefaultStorageClass admission plugin picks it."""
    defaults = sorted((sc for sc in classes if is_default_class(sc)), key=lambda sc: str(_meta(sc).get("name")))
    defaults.sort(key=lambda sc: str(_meta(sc).get("creationTimestamp") or ""), reverse=True)
    return defaults[0] if defaults else None


def volume_class(pv: Obj) -> str:
    """`GetPersistentVolumeClass`: the beta annotation first, then `spec.storageClassName`."""
    annotations = _annotations(pv)
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        return str(annotations[BETA_STORAGE_CLASS_ANNOTATION])
    return str(_spec(pv).get("storageClassName") or "")


def _request(claim: Obj) -> Fraction:
    resources = _spec(claim).get("resources")
    quantity = storage_of(resources.get("requests") if isinstance(resources, dict) else None)
    return quantity.value if quantity is not None else Fraction(0)


def _capacity(pv: Obj) -> Fraction | None:
    quantity = storage_of(_spec(pv).get("capacity"))
    return quantity.value if quantity is not None else None


def volume_fits_node(pv: Obj, labels: dict[str, str], node_name: str) -> bool:
    """`CheckNodeAffinity` (pkg/volume/util): a volume without required node affinity fits every node."""
    affinity = _spec(pv).get("nodeAffinity")
    required = affinity.get("required") if isinstance(affinity, dict) else None
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    if not isinstance(terms, list) or not terms:
        return True
    return any(isinstance(t, dict) and match_term(t, labels, node_name) for t in terms)


def volume_matches(claim: Obj, pv: Obj, *, node: tuple[dict[str, str], str] | None = None) -> bool:
    """Whether an unclaimed (or pre-bound to this claim) volume can serve the claim (`FindMatchingVolume`'s
    checks): class, volume mode, access modes (a superset), capacity, selector, node affinity when a node is
    chosen, and not being deleted."""
    spec, claim_spec = _spec(pv), _spec(claim)
    if _meta(pv).get("deletionTimestamp"):
        return False
    ref = spec.get("claimRef")
    if isinstance(ref, dict) and ref:
        if ref.get("name") != _meta(claim).get("name") or ref.get("namespace") != _meta(claim).get("namespace"):
            return False
        if ref.get("uid") and ref.get("uid") != _meta(claim).get("uid"):
            return False
    elif _phase(pv) not in ("Available", "Pending", ""):
        return False
    if volume_class(pv) != claim_class(claim):
        return False
    if (spec.get("volumeMode") or "Filesystem") != (claim_spec.get("volumeMode") or "Filesystem"):
        return False
    wanted = set(claim_spec.get("accessModes") or [])
    if not wanted <= set(spec.get("accessModes") or []):
        return False
    capacity = _capacity(pv)
    if capacity is None or capacity < _request(claim):
        return False
    selector = claim_spec.get("selector")
    if isinstance(selector, dict) and not selector_matches(selector, _meta(pv).get("labels") or {}):
        return False
    return node is None or volume_fits_node(pv, node[0], node[1])


def best_match(claim: Obj, volumes: list[Obj], node: tuple[dict[str, str], str] | None = None) -> Obj | None:
    """`findBestMatchForClaim`: a volume pre-bound to this claim first, else the smallest that fits."""
    fitting = [pv for pv in volumes if volume_matches(claim, pv, node=node)]
    for pv in fitting:
        ref = _spec(pv).get("claimRef")
        if isinstance(ref, dict) and ref:
            return pv
    fitting = [pv for pv in fitting if not _spec(pv).get("claimRef")]
    if not fitting:
        return None
    return min(fitting, key=lambda pv: (_capacity(pv) or Fraction(0), str(_meta(pv).get("name") or "")))


_TERMINAL_PHASES = ("Succeeded", "Failed")


def _terminal(pod: Obj) -> bool:
    return _phase(pod) in _TERMINAL_PHASES


def _claim_key(claim: Obj) -> str:
    return f"claim:{_meta(claim).get('namespace') or ''}/{_meta(claim).get('name') or ''}"


# ------------------------------------------------------------------------------------------------ binder


@dataclass(eq=False, repr=False)
class PersistentVolumeController:
    """Binds claims to volumes, provisions `rancher.io/local-path` volumes, releases and reclaims volumes."""

    client: Client
    clock: Clock
    storage_dir: Path | None = None
    """Where provisioned volumes' directories go (None: a `kjobs-storage` directory in the temp dir)."""
    shared: InformerFactory | None = None
    workers: int = 1
    queue: WorkQueue[str] = field(init=False)

    def __post_init__(self) -> None:
        factory = self.shared or InformerFactory(self.client, clock=self.clock)
        self.claims = factory.informer(PERSISTENT_VOLUME_CLAIMS)
        self.volumes = factory.informer(PERSISTENT_VOLUMES)
        self.classes = factory.informer(STORAGE_CLASSES)
        self.queue = WorkQueue(clock=self.clock, base_delay=0.1, max_delay=30.0)
        self._workers = WorkerPool(self.queue, self.sync, name="persistentvolume", workers=self.workers)
        self.events = EventRecorder(self.client, component=EVENT_COMPONENT, clock=self.clock)
        self.provisioner_events = EventRecorder(self.client, component=PROVISIONER_COMPONENT, clock=self.clock)
        self._waiting_logged: set[str] = set()

    @property
    def directory(self) -> Path:
        if self.storage_dir is not None:
            return self.storage_dir
        import tempfile

        return Path(tempfile.gettempdir()) / f"kjobs-storage-{os.getuid()}"

    async def start(self) -> None:
        self.claims.add_handler(self._on_claim)
        self.volumes.add_handler(self._on_volume)
        self.classes.add_handler(self._on_class)
        for informer in (self.classes, self.volumes, self.claims):
            informer.start()
        await asyncio.gather(self.classes.synced.wait(), self.volumes.synced.wait(), self.claims.synced.wait())
        self._workers.start()

    async def stop(self) -> None:
        await self._workers.stop()
        for informer in (self.claims, self.volumes, self.classes):
            await informer.stop()
        await self.events.shutdown()
        await self.provisioner_events.shutdown()

    def _on_claim(self, old: Obj | None, new: Obj | None) -> None:
        obj = new if new is not None else old
        assert obj is not None
        self.queue.add(_claim_key(obj))
        name = _spec(obj).get("volumeName")
        if new is None and name:
            self.queue.add(f"volume:{name}")
        elif new is None:
            # Deleted before its `volumeName` was written (a bind cut short): a volume whose claimRef names it is
            # released all the same. Upstream's periodic resync (`--pvclaimbinder-sync-period`, 15 s) finds it.
            uid = _meta(obj).get("uid")
            for pv in self.volumes.list():
                ref = _spec(pv).get("claimRef")
                if uid and isinstance(ref, dict) and ref.get("uid") == uid:
                    self.queue.add(f"volume:{_meta(pv).get('name') or ''}")

    def _on_volume(self, old: Obj | None, new: Obj | None) -> None:
        obj = new if new is not None else old
        assert obj is not None
        if new is not None:
            self.queue.add(f"volume:{_meta(obj).get('name') or ''}")
        ref = _spec(obj).get("claimRef")
        if isinstance(ref, dict) and ref.get("name"):
            self.queue.add(f"claim:{ref.get('namespace') or ''}/{ref['name']}")
        elif new is not None and old is None:
            for claim in self.claims.list():  # a new volume may fit a waiting claim
                if not _spec(claim).get("volumeName"):
                    self.queue.add(_claim_key(claim))

    def _on_class(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None and old is None:
            for claim in self.claims.list():
                if not _spec(claim).get("volumeName"):
                    self.queue.add(_claim_key(claim))

    async def sync(self, key: str) -> None:
        kind, _, rest = key.partition(":")
        if kind == "claim":
            namespace, _, name = rest.partition("/")
            claim = self.claims.get(namespace, name)
            if claim is not None:
                await self.sync_claim(claim)
        else:
            pv = self.volumes.get("", rest)
            if pv is not None:
                await self.sync_volume(pv)

    # ------------------------------------------------------------------------------------------ claims

    async def sync_claim(self, claim: Obj) -> None:
        """`syncClaim`: an unbound claim is matched or provisioned; a bound one is completed."""
        if _annotations(claim).get(BIND_COMPLETED_ANNOTATION) != "yes" or not _spec(claim).get("volumeName"):
            await self._sync_unbound(claim)
        else:
            await self._sync_bound(claim)

    def _class(self, name: str) -> Obj | None:
        return self.classes.get("", name) if name else None

    async def _sync_unbound(self, claim: Obj) -> None:
        name = str(_spec(claim).get("volumeName") or "")
        if name:  # pre-bound by the user to a volume: bind it if it is free (`syncUnboundClaim`'s second half)
            pv = self.volumes.get("", name)
            if pv is None:
                await self._claim_phase(claim, "Pending")
                return
            ref = _spec(pv).get("claimRef")
            if isinstance(ref, dict) and ref and not volume_matches(claim, pv):
                return  # bound to another claim: this one waits
            await self.bind(claim, pv, claim_bound_by_controller=False)
            return
        if _meta(claim).get("deletionTimestamp"):
            return
        class_name = claim_class(claim)
        sc = self._class(class_name)
        node: tuple[dict[str, str], str] | None = None
        if sc is not None and sc.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER:
            selected = _annotations(claim).get(SELECTED_NODE_ANNOTATION)
            if not selected:
                self.events.event(
                    claim,
                    "Normal",
                    "WaitForFirstConsumer",
                    "waiting for first consumer to be created before binding",
                )
                return
            node = ({"kubernetes.io/hostname": selected}, selected)
        pv = best_match(claim, self.volumes.list(), node)
        if pv is not None:
            await self.bind(claim, pv, claim_bound_by_controller=True)
            return
        default = default_class(self.classes.list()) if not has_class(claim) else None
        if default is not None:
            # `assignDefaultStorageClass` (RetroactiveDefaultStorageClass, GA since 1.28): a claim made while no
            # default class existed, or with DefaultStorageClass admission off, gets it now; its update syncs it.
            spec = {**_spec(claim), "storageClassName": _meta(default).get("name")}
            await self.client.update(PERSISTENT_VOLUME_CLAIMS, _meta(claim).get("namespace"), {**claim, "spec": spec})
            return
        if sc is None:
            if not class_name:
                self.events.event(
                    claim,
                    "Normal",
                    "FailedBinding",
                    "no persistent volumes available for this claim and no storage class is set",
                )
            else:
                self.events.event(
                    claim, "Warning", "ProvisioningFailed", f'storageclass.storage.k8s.io "{class_name}" not found'
                )
            return
        await self._provision(claim, sc, node[1] if node is not None else "")

    async def _claim_phase(self, claim: Obj, phase: str) -> Obj:
        if _phase(claim) == phase:
            return claim
        updated = {**claim, "status": {**(claim.get("status") or {}), "phase": phase}}
        result: Obj = await self.client.update(
            PERSISTENT_VOLUME_CLAIMS, _meta(claim).get("namespace"), updated, subresource="status"
        )
        return result

    async def _sync_bound(self, claim: Obj) -> None:
        """`syncBoundClaim`: the volume is gone → Lost; bound to us → the claim's status says Bound."""
        pv = self.volumes.get("", str(_spec(claim).get("volumeName")))
        if pv is None:
            if _phase(claim) != "Lost":
                await self._claim_phase(claim, "Lost")
                self.events.event(
                    claim,
                    "Warning",
                    "ClaimLost",
                    "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!",
                )
            return
        ref = _spec(pv).get("claimRef")
        if not isinstance(ref, dict) or not ref:
            await self.bind(claim, pv, claim_bound_by_controller=True)
            return
        if ref.get("uid") == _meta(claim).get("uid"):
            if _phase(claim) != "Bound":
                await self._claim_status_bound(claim, pv)
            return
        if _phase(claim) != "Lost":
            await self._claim_phase(claim, "Lost")
            self.events.event(
                claim,
                "Warning",
                "ClaimMisbound",
                "Two claims are bound to the same volume, this one is bound incorrectly",
            )

    async def bind(self, claim: Obj, pv: Obj, *, claim_bound_by_controller: bool) -> None:
        """`bind`: the volume's claimRef and phase, then the claim's volumeName and phase."""
        meta = _meta(claim)
        ref = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "resourceVersion": meta.get("resourceVersion"),
            "uid": meta.get("uid"),
        }
        current = _spec(pv).get("claimRef")
        if not (isinstance(current, dict) and current.get("uid") == meta.get("uid")):
            pv_meta = dict(_meta(pv))
            if not (isinstance(current, dict) and current):
                pv_meta["annotations"] = {**_annotations(pv), BOUND_BY_CONTROLLER_ANNOTATION: "yes"}
            pv = await self.client.update(
                PERSISTENT_VOLUMES, None, {**pv, "metadata": pv_meta, "spec": {**_spec(pv), "claimRef": ref}}
            )
        if _phase(pv) != "Bound":
            pv = await self._volume_phase(pv, "Bound")
        annotations = dict(_annotations(claim))
        changed = False
        if annotations.get(BIND_COMPLETED_ANNOTATION) != "yes":
            annotations[BIND_COMPLETED_ANNOTATION] = "yes"
            changed = True
        if claim_bound_by_controller and annotations.get(BOUND_BY_CONTROLLER_ANNOTATION) != "yes":
            annotations[BOUND_BY_CONTROLLER_ANNOTATION] = "yes"
            changed = True
        volume_name = _meta(pv).get("name")
        if changed or _spec(claim).get("volumeName") != volume_name:
            claim = await self.client.update(
                PERSISTENT_VOLUME_CLAIMS,
                meta.get("namespace"),
                {
                    **claim,
                    "metadata": {**meta, "annotations": annotations},
                    "spec": {**_spec(claim), "volumeName": volume_name},
                },
            )
        await self._claim_status_bound(claim, pv)

    async def _claim_status_bound(self, claim: Obj, pv: Obj) -> None:
        status = dict(claim.get("status") or {})
        wanted = {
            "phase": "Bound",
            "accessModes": list(_spec(pv).get("accessModes") or []),
            "capacity": dict(_spec(pv).get("capacity") or {}),
        }
        if all(status.get(k) == v for k, v in wanted.items()):
            return
        status.update(wanted)
        await self.client.update(
            PERSISTENT_VOLUME_CLAIMS, _meta(claim).get("namespace"), {**claim, "status": status}, subresource="status"
        )

    # ------------------------------------------------------------------------------------------ volumes

    async def _volume_phase(self, pv: Obj, phase: str, message: str = "") -> Obj:
        """`updateVolumePhase`, with the strategy's `lastPhaseTransitionTime` on a change of phase."""
        status: Obj = {**(pv.get("status") or {}), "phase": phase}
        if _phase(pv) != phase:
            status["lastPhaseTransitionTime"] = format_time(self.clock.now())
        if message:
            status["message"] = message
        else:
            status.pop("message", None)
        result: Obj = await self.client.update(PERSISTENT_VOLUMES, None, {**pv, "status": status}, subresource="status")
        return result

    async def sync_volume(self, pv: Obj) -> None:
        """`syncVolume`: unclaimed → Available; claim gone → Released, then reclaimed."""
        ref = _spec(pv).get("claimRef")
        if not isinstance(ref, dict) or not ref:
            if _phase(pv) not in ("Available",) and not _meta(pv).get("deletionTimestamp"):
                await self._volume_phase(pv, "Available")
            return
        claim = self.claims.get(str(ref.get("namespace") or ""), str(ref.get("name") or ""))
        if claim is not None and ref.get("uid") and _meta(claim).get("uid") != ref.get("uid"):
            claim = None  # a new claim of the same name: ours is gone
        if claim is not None:
            if _spec(claim).get("volumeName") != _meta(pv).get("name"):
                if _phase(pv) != "Available" and not _spec(claim).get("volumeName"):
                    self.queue.add(_claim_key(claim))  # pre-bound volume: the claim's sync binds it
                return
            if _phase(pv) != "Bound":
                await self._volume_phase(pv, "Bound")
            return
        if not ref.get("uid"):  # pre-bound to a claim not yet created: Available, for it only
            if _phase(pv) != "Available":
                await self._volume_phase(pv, "Available")
            return
        if _phase(pv) not in ("Released", "Failed"):
            pv = await self._volume_phase(pv, "Released")
        await self._reclaim(pv)

    async def _reclaim(self, pv: Obj) -> None:
        """`reclaimVolume`: Retain keeps it; Delete deletes it (the provisioner removes its directory first, as
        an external provisioner deletes the asset before the volume object)."""
        policy = _spec(pv).get("persistentVolumeReclaimPolicy") or "Retain"
        if policy != "Delete" or _meta(pv).get("deletionTimestamp"):
            return
        if _annotations(pv).get(PROVISIONED_BY_ANNOTATION) == LOCAL_PATH_PROVISIONER:
            path = host_path(pv)
            if path is not None and Path(path).parent == self.directory:
                await asyncio.to_thread(shutil.rmtree, path, True)
        elif _annotations(pv).get(PROVISIONED_BY_ANNOTATION):
            return  # another provisioner's volume: it deletes it
        with contextlib.suppress(ApiError):
            await self.client.delete(PERSISTENT_VOLUMES, None, str(_meta(pv).get("name")))

    # ---------------------------------------------------------------------------------------- provision

    async def _provision(self, claim: Obj, sc: Obj, node: str) -> None:
        """`provisionClaim` for an external provisioner, then kjobs' local-path provisioner's own work."""
        provisioner = str(sc.get("provisioner") or "")
        annotations = _annotations(claim)
        if annotations.get(STORAGE_PROVISIONER_ANNOTATION) != provisioner:
            meta = {
                **_meta(claim),
                "annotations": {
                    **annotations,
                    STORAGE_PROVISIONER_ANNOTATION: provisioner,
                    BETA_STORAGE_PROVISIONER_ANNOTATION: provisioner,
                },
            }
            claim = await self.client.update(
                PERSISTENT_VOLUME_CLAIMS, _meta(claim).get("namespace"), {**claim, "metadata": meta}
            )
        self.events.event(
            claim,
            "Normal",
            "ExternalProvisioning",
            f"Waiting for a volume to be created either by the external provisioner '{provisioner}' or manually by "
            "the system administrator. If volume creation is delayed, please verify that the provisioner is "
            "running and correctly registered.",
        )
        if provisioner != LOCAL_PATH_PROVISIONER:
            return
        meta = _meta(claim)
        name = f"pvc-{meta.get('uid')}"
        if self.volumes.get("", name) is not None:
            return  # made already; its informer event binds it
        self.provisioner_events.event(
            claim,
            "Normal",
            "Provisioning",
            f'External provisioner is provisioning volume for claim "{meta.get("namespace")}/{meta.get("name")}"',
        )
        directory = self.directory / name
        await asyncio.to_thread(_make_directory, directory)
        spec: Obj = {
            "accessModes": list(_spec(claim).get("accessModes") or []),
            "capacity": {"storage": ((_spec(claim).get("resources") or {}).get("requests") or {}).get("storage", "0")},
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "name": meta.get("name"),
                "namespace": meta.get("namespace"),
                "resourceVersion": meta.get("resourceVersion"),
                "uid": meta.get("uid"),
            },
            "hostPath": {"path": str(directory), "type": "DirectoryOrCreate"},
            "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
            "storageClassName": str(_meta(sc).get("name") or ""),
            "volumeMode": _spec(claim).get("volumeMode") or "Filesystem",
        }
        if node:
            spec["nodeAffinity"] = {
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}
                    ]
                }
            }
        pv_annotations = {PROVISIONED_BY_ANNOTATION: LOCAL_PATH_PROVISIONER}
        if node:
            pv_annotations["local.path.provisioner/selected-node"] = node
        body: Obj = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": pv_annotations},
            "spec": spec,
        }
        try:
            pv = await self.client.create(PERSISTENT_VOLUMES, None, body, handover=True)
        except ApiError as exc:
            if exc.reason != "AlreadyExists":
                self.provisioner_events.event(
                    claim, "Warning", "ProvisioningFailed", f"failed to provision volume: {exc}"
                )
                raise
            return
        self.provisioner_events.event(
            claim, "Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {name}"
        )
        await self.bind(claim, pv, claim_bound_by_controller=True)


async def _protect(
    client: Client, resource: ResourceRef, namespace: str | None, obj: Obj, finalizer: str, in_use: Callable[[], bool]
) -> None:
    """The protection controllers' one step (pkg/controller/volume/pvcprotection, pvprotection): a live object
    gets `finalizer` if it lacks it; one being deleted loses it once `in_use()` is false (a 404: gone already)."""
    meta = _meta(obj)
    finalizers = list(meta.get("finalizers") or [])
    if not meta.get("deletionTimestamp"):
        if finalizer not in finalizers:
            await client.update(
                resource, namespace, {**obj, "metadata": {**meta, "finalizers": [*finalizers, finalizer]}}
            )
        return
    if finalizer not in finalizers or in_use():
        return
    rest = [f for f in finalizers if f != finalizer]
    new_meta = {**meta, "finalizers": rest} if rest else {k: v for k, v in meta.items() if k != "finalizers"}
    try:
        await client.update(resource, namespace, {**obj, "metadata": new_meta})
    except ApiError as exc:
        if exc.code != 404:
            raise


def _make_directory(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, STORAGE_DIR_MODE)


# ---------------------------------------------------------------------------------------------- protection


@dataclass(eq=False, repr=False)
class PVCProtectionController:
    """Adds `kubernetes.io/pvc-protection` where it is missing, and removes it from a claim being deleted once
    no scheduled, unfinished pod uses the claim (`processPVC`, `isBeingUsed`, `podUsesPVC`)."""

    client: Client
    clock: Clock
    shared: InformerFactory | None = None
    workers: int = 1
    queue: WorkQueue[str] = field(init=False)

    def __post_init__(self) -> None:
        factory = self.shared or InformerFactory(self.client, clock=self.clock)
        self.claims = factory.informer(PERSISTENT_VOLUME_CLAIMS)
        self.pods = factory.informer(PODS)
        self.queue = WorkQueue(clock=self.clock, base_delay=0.1, max_delay=30.0)
        self._workers = WorkerPool(self.queue, self.sync, name="pvc-protection", workers=self.workers)

    async def start(self) -> None:
        self.claims.add_handler(self._on_claim)
        self.pods.add_handler(self._on_pod)
        self.claims.start()
        self.pods.start()
        await asyncio.gather(self.claims.synced.wait(), self.pods.synced.wait())
        self._workers.start()

    async def stop(self) -> None:
        await self._workers.stop()
        await self.claims.stop()
        await self.pods.stop()

    def _on_claim(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None:
            self.queue.add(f"{_meta(new).get('namespace') or ''}/{_meta(new).get('name') or ''}")

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        """`podAddedDeletedUpdated`: a pod gone or finished may free its claims. Every event of every pod comes
        here and nearly all are of unfinished pods: `_terminal` is read in place (a JSON phase is a string or
        never one of the two), and a pod without claims stops before its namespace is read."""
        if new is not None:
            status = new.get("status")
            if not isinstance(status, dict) or status.get("phase") not in _TERMINAL_PHASES:
                return
        obj = new if new is not None else old
        assert obj is not None
        names = pod_claim_names(obj)
        if names:
            namespace = _meta(obj).get("namespace") or ""
            for name in names:
                self.queue.add(f"{namespace}/{name}")

    def _in_use(self, namespace: str, name: str) -> bool:
        for pod in self.pods.list(namespace):
            if _spec(pod).get("nodeName") and not _terminal(pod) and name in pod_claim_names(pod):
                return True
        return False

    async def sync(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        claim = self.claims.get(namespace, name)
        if claim is None:
            return
        await _protect(
            self.client,
            PERSISTENT_VOLUME_CLAIMS,
            namespace,
            claim,
            PVC_PROTECTION_FINALIZER,
            lambda: self._in_use(namespace, name),
        )


@dataclass(eq=False, repr=False)
class PVProtectionController:
    """Adds `kubernetes.io/pv-protection` where it is missing, and removes it from a volume being deleted once
    it is not Bound (`processPV`, `isBeingUsed`)."""

    client: Client
    clock: Clock
    shared: InformerFactory | None = None
    workers: int = 1
    queue: WorkQueue[str] = field(init=False)

    def __post_init__(self) -> None:
        factory = self.shared or InformerFactory(self.client, clock=self.clock)
        self.volumes = factory.informer(PERSISTENT_VOLUMES)
        self.queue = WorkQueue(clock=self.clock, base_delay=0.1, max_delay=30.0)
        self._workers = WorkerPool(self.queue, self.sync, name="pv-protection", workers=self.workers)

    async def start(self) -> None:
        self.volumes.add_handler(self._on_volume)
        self.volumes.start()
        await self.volumes.synced.wait()
        self._workers.start()

    async def stop(self) -> None:
        await self._workers.stop()
        await self.volumes.stop()

    def _on_volume(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None:
            self.queue.add(str(_meta(new).get("name") or ""))

    async def sync(self, name: str) -> None:
        pv = self.volumes.get("", name)
        if pv is None:
            return
        await _protect(
            self.client, PERSISTENT_VOLUMES, None, pv, PV_PROTECTION_FINALIZER, lambda: _phase(pv) == "Bound"
        )
