"""The scheduler's VolumeBinding plugin, the part a local cluster needs (pkg/scheduler/framework/plugins/
volumebinding/volume_binding.go and binder.go).

PreFilter: every claim a pod's volumes name must exist (`persistentvolumeclaim "x" not found`) and not be
being deleted (`persistentvolumeclaim "x" is being deleted`), both UnschedulableAndUnresolvable; a claim of an
`Immediate` class (or of no class) that the PV controller has not bound yet keeps the pod waiting (`pod has
unbound immediate PersistentVolumeClaims`). Filter: a node is refused when a volume bound to one of the pod's
claims has node affinity that excludes it (`node(s) had volume node affinity conflict`). PreBind: each unbound
claim of a `WaitForFirstConsumer` class gets the chosen node in `volume.kubernetes.io/selected-node`, and the pod
is bound only once the PV controller (and the provisioner) have bound every one of its claims.

Not done: matching pre-provisioned volumes to WFFC claims in the scheduler (the binder does it once the node is
selected), CSI capacity and volume limits, generic ephemeral volumes.
"""

from __future__ import annotations

from collections.abc import Callable

from kjobs.api.storage import SELECTED_NODE_ANNOTATION as SELECTED_NODE_ANNOTATION
from kjobs.api.storage import WAIT_FOR_FIRST_CONSUMER
from kjobs.api.storage import pod_claim_names as pod_claim_names
from kjobs.api.types import Obj
from kjobs.controllers.volumes import claim_class, volume_fits_node

ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

GetClaim = Callable[[str, str], Obj | None]
GetByName = Callable[[str], Obj | None]


def _namespace(pod: Obj) -> str:
    return str((pod.get("metadata") or {}).get("namespace") or "")


def _bound(claim: Obj) -> bool:
    return bool((claim.get("spec") or {}).get("volumeName"))


def _delays_binding(claim: Obj, get_class: GetByName) -> bool:
    """`IsDelayBindingMode`: the claim's class exists and waits for the first consumer."""
    name = claim_class(claim)
    sc = get_class(name) if name else None
    return sc is not None and sc.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER


def prefilter(pod: Obj, get_claim: GetClaim, get_class: GetByName) -> str | None:
    """Why the pod cannot be scheduled anywhere because of its claims, or None."""
    names = pod_claim_names(pod)
    if not names:
        return None
    namespace = _namespace(pod)
    unbound_immediate = False
    for name in names:
        claim = get_claim(namespace, name)
        if claim is None:
            return f'persistentvolumeclaim "{name}" not found'
        if (claim.get("metadata") or {}).get("deletionTimestamp"):
            return f'persistentvolumeclaim "{name}" is being deleted'
        if not _bound(claim) and not _delays_binding(claim, get_class):
            unbound_immediate = True
    return ERR_UNBOUND_IMMEDIATE if unbound_immediate else None


def node_conflict(pod: Obj, labels: dict[str, str], node_name: str, get_claim: GetClaim, get_volume: GetByName) -> bool:
    """Whether a volume bound to one of the pod's claims cannot be used on this node (`FindPodVolumes`'
    `checkBoundClaims`)."""
    namespace = _namespace(pod)
    for name in pod_claim_names(pod):
        claim = get_claim(namespace, name)
        if claim is None or not _bound(claim):
            continue
        pv = get_volume(str((claim.get("spec") or {}).get("volumeName")))
        if pv is not None and not volume_fits_node(pv, labels, node_name):
            return True
    return False


def selected_elsewhere(pod: Obj, node_name: str, get_claim: GetClaim, get_class: GetByName) -> bool:
    """Whether an unbound WaitForFirstConsumer claim of the pod already names another node in `selected-node`
    (`FindPodVolumes`' fast path, "skip unmatched node"): every pod sharing the claim must go where its volume
    is being provisioned."""
    return any(selected_node(claim) not in ("", node_name) for claim in claims_to_provision(pod, get_claim, get_class))


def claims_to_provision(pod: Obj, get_claim: GetClaim, get_class: GetByName) -> list[Obj]:
    """The pod's unbound claims whose class waits for the first consumer: the scheduler names the node in them."""
    namespace = _namespace(pod)
    claims = (get_claim(namespace, name) for name in pod_claim_names(pod))
    return [c for c in claims if c is not None and not _bound(c) and _delays_binding(c, get_class)]


def all_bound(pod: Obj, get_claim: GetClaim) -> bool:
    """Whether every claim of the pod is bound (`checkBindings`: PreBind waits for it)."""
    namespace = _namespace(pod)
    for name in pod_claim_names(pod):
        claim = get_claim(namespace, name)
        if claim is None or not _bound(claim) or (claim.get("status") or {}).get("phase") != "Bound":
            return False
    return True


def selected_node(claim: Obj) -> str:
    """The node already named in the claim (`volume.kubernetes.io/selected-node`), or ""."""
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(SELECTED_NODE_ANNOTATION) or "")
