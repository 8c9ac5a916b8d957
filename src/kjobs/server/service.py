"""Kubernetes' generic registry semantics, per verb, over the `Storage` seam.

This is what the apiserver's `genericregistry.Store` plus the per-resource strategies do, in one place:
create (name generation, uid/creationTimestamp/generation, status reset, defaulting, validation, strict
field validation), update and the three patch types (status-subresource split, immutable metadata,
generation bumps, no-op detection, conflict checks, patch retries), server-side apply (simplified: merge of
the applied configuration, managedFields entry), delete (preconditions, propagation policy, graceful pod
deletion, finalizers, cascading to dependents), the pod subresources (binding, eviction) and watch (initial
ADDED events, selector filtering, bookmarks on request). HTTP framing lives in `app`; this module raises
`ApiError`s and returns objects plus warnings.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import math
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import orjson

from kjobs.api import services
from kjobs.api.conditions import EVICTION_BY_EVICTION_API, disruption_target, update_pod_condition
from kjobs.api.crds import GROUP as CRD_GROUP
from kjobs.api.defaults import NAMESPACE_FINALIZER
from kjobs.api.errors import (
    ApiError,
    ErrorType,
    FieldError,
    already_exists,
    bad_request,
    conflict,
    forbidden,
    invalid,
    not_found,
    not_supported,
)
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.goints import go_seconds
from kjobs.api.podsecurity import has_policy_labels
from kjobs.api.selectors import FieldSelector, LabelSelector
from kjobs.api.timeutil import format_time, parse_time
from kjobs.api.token_requests import mount_service_account_token, should_automount
from kjobs.api.types import Obj
from kjobs.api.uids import random_uuid
from kjobs.api.validation_scheduling import SYSTEM_PRIORITY_CLASSES
from kjobs.server import (
    apply,
    fieldtrees,
    gozero,
    limits,
    params,
    podsecurity,
    schema,
    zerotimes,
)
from kjobs.server.admission import (
    DEFAULT_SERVICE_ACCOUNT,
    LIMIT_RANGER,
    MIRROR_POD_ANNOTATION,
    PRIORITY,
    RESOURCE_QUOTA,
    SERVICE_ACCOUNT,
    SERVICE_ACCOUNT_LOOKUP_ATTEMPTS,
    SERVICE_ACCOUNT_RETRY_INTERVAL,
    AdmissionSettings,
    admit_claim,
    admit_pod,
    admit_pod_priority,
    admit_volume,
    check_priority_class,
    claim_resize_refusal,
    mirror_pod_refusal,
    name_for_errors,
    service_account,
    service_account_refusal,
)
from kjobs.server.apply import FieldPath
from kjobs.server.authz import UserInfo
from kjobs.server.crdcontroller import CrdController, add_cleanup_finalizer
from kjobs.server.decoding import check_listed_unknown_fields, check_unknown_fields
from kjobs.server.gotypes import converter_type_error, first_type_error, go_format, well_typed
from kjobs.server.logs import LogOptions, LogSource, NoLogs, validate_container
from kjobs.server.patch import PATCH_MEDIA, apply_patch, media_base
from kjobs.server.quota import QuotaAdmission
from kjobs.server.rbac import RbacAuthorizer, check_escalation
from kjobs.server.registry import STORED, Resource, core_hook, lookup
from kjobs.server.satokens import TokenIssuer
from kjobs.server.serviceips import KUBERNETES_SERVICE_IP, Allocation, ServiceAllocator
from kjobs.server.storage import Storage

Warnings = list[str]
T = TypeVar("T")

NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""The alphabet of `generateName` suffixes (apimachinery `utilrand.String`)."""

ORPHAN_WARNING = (
    "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove "
    "them or set propagationPolicy=Orphan to suppress this warning"
)
_SERVER_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")
_SET_BY_SERVER_ON_CREATE = (*_SERVER_META, "resourceVersion", "selfLink")
_SUBRESOURCE_VALIDATION = {sub: f"validate_{sub}_update" for sub in ("status", "finalize", "ephemeralcontainers")}
"""The hook validating a write through each subresource that has its own (`ApiService._validate`)."""
_KEPT_ON_UPDATE = (*_SERVER_META, "namespace", "name")
"""The metadata an update keeps from the stored object (`_merge_update`)."""
"""What a create's body may not set (`rest.BeforeCreate` clears or sets them)."""
_PATCH_RETRIES = 5
_CONFLICT_RETRIES = 16
_EVICTION_RETRIES = 20
"""`EvictionsRetry.Steps` (pkg/registry/core/pod/storage/eviction.go): tries at a pod the budget is not asked
about (terminal, pending, being deleted) before its conflict is returned; kjobs retries at once, without the 0.5 s
pauses, as the rest of its in-process storage does."""
"""How often `_guaranteed` reads again after its write lost the compare-and-swap to another writer (Kubernetes'
`GuaranteedUpdate` retries until the request's deadline; a bound keeps a pathological loop finite)."""

NAMESPACES = ("default", "kube-system", "kube-node-lease", "kube-public")
_PRIORITY_CLASSES = "priorityclasses.scheduling.k8s.io"
_PODS = "pods"
_POD_SECURITY_KINDS = frozenset({"Pod", "Job", "CronJob", "Namespace"})
"""The kinds the PodSecurity plugin looks at: pods, the pod controllers kjobs serves, namespaces."""
_SERVICES = "services"
KUBERNETES_SERVICE = "kubernetes"
"""kube-apiserver's own Service in `default` (`ensure_kubernetes_service`)."""
SYSTEM_PRIORITY_CLASS_DESCRIPTIONS = {
    "system-node-critical": "Used for system critical pods that must not be moved from their current node.",
    "system-cluster-critical": (
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."
    ),
}
"""pkg/apis/scheduling/helpers.go `systemPriorityClasses` (values: `validation_scheduling.SYSTEM_PRIORITY_CLASSES`)."""
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
"""Namespaces the NamespaceLifecycle admission plugin refuses to delete."""


@dataclass
class Result:
    """A handler's answer: the body object, the HTTP status and any `Warning` headers."""

    obj: Obj
    code: int = 200
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class DeleteOptions:
    """`metav1.DeleteOptions`, merged from the body and the query."""

    grace_period: int | None = None
    propagation: str | None = None
    precondition_uid: str | None = None
    precondition_rv: str | None = None
    dry_run: bool = False
    orphan_dependents: bool | None = None
    """The deprecated `orphanDependents` as sent: false asks for 202 Accepted while dependents go."""

    @classmethod
    def parse(cls, body: Obj | None, query: dict[str, str], struct: str = "DeleteOptions") -> DeleteOptions:
        """Read DeleteOptions from a JSON body and/or query parameters (the Python client uses the query).

        The body decodes into `metav1.DeleteOptions` (`gotypes`): a value of another JSON type is 400 BadRequest
        with the decoder's error (`gracePeriodSeconds` an int64, `preconditions` an object of strings, `dryRun` a
        list of strings); `struct` other than `DeleteOptions`: the body is part of one already decoded (an
        Eviction's). The values are checked as `ValidateDeleteOptions` checks them (apimachinery
        pkg/apis/meta/v1/validation): 422 Invalid for a `propagationPolicy` that is none of the three, for it set
        beside `orphanDependents`, or for a `dryRun` other than `All`."""
        body = body or {}
        kind = struct
        if struct == "DeleteOptions":
            mistyped = first_type_error(body, "DeleteOptions", group="meta.k8s.io")
            if mistyped is not None:
                raise bad_request(mistyped)
        grace: int | None = None
        if body.get("gracePeriodSeconds") is not None:
            grace = int(body["gracePeriodSeconds"])
        elif query.get("gracePeriodSeconds"):
            grace = params.parse_int64(query["gracePeriodSeconds"])
        propagation = body.get("propagationPolicy") or query.get("propagationPolicy")
        orphan = body.get("orphanDependents")
        if orphan is None:
            orphan = query.get("orphanDependents")
        errors: list[FieldError] = []
        if propagation is not None and orphan is not None:
            errors.append(
                FieldError(
                    "propagationPolicy",
                    ErrorType.FieldValueInvalid,
                    "orphanDependents and deletionPropagation cannot be both set",
                    propagation,
                )
            )
        if propagation is None and orphan is not None:
            propagation = "Orphan" if str(orphan).lower() == "true" else "Background"
        if propagation is not None and propagation not in ("Orphan", "Background", "Foreground"):
            errors.append(
                FieldError(
                    "propagationPolicy",
                    ErrorType.FieldValueNotSupported,
                    'supported values: "Foreground", "Background", "Orphan", "nil"',
                    propagation,
                )
            )
        pre = body.get("preconditions") or {}
        dry = body.get("dryRun")
        dry_values = list(dry) if dry else [query["dryRun"]] if "dryRun" in query else []
        if any(v != "All" for v in dry_values):
            errors.append(not_supported("dryRun", dry_values, ["All"]))
        if errors:
            raise invalid(kind, "", errors)
        sent = None if orphan is None else str(orphan).lower() == "true"
        return cls(grace, propagation, pre.get("uid"), pre.get("resourceVersion"), bool(dry_values), sent)


_COPY_ON_WRITE_PATCHES = ("application/strategic-merge-patch+json", "application/merge-patch+json")
_GENERATE_NAME_ATTEMPTS = 8
"""Kubernetes' apiserver tries a generated name up to 8 times before answering AlreadyExists."""


def _random_suffix() -> str:
    """generateName's five characters (Kubernetes uses a non-cryptographic generator for them too): the draws of
    `random.choices(NAME_ALPHABET, k=5)`, one `random()` a character scaled and floored as it does, without its
    call's list and loop (half its cost, on every generated name)."""
    draw, f = random.random, math.floor
    a, n = NAME_ALPHABET, _NAME_ALPHABET_SIZE
    return a[f(draw() * n)] + a[f(draw() * n)] + a[f(draw() * n)] + a[f(draw() * n)] + a[f(draw() * n)]


_NAME_ALPHABET_SIZE = float(len(NAME_ALPHABET))
"""`random.choices` scales each draw by the population's size as a float."""


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
        obj["metadata"] = meta
    return meta


def _mark_deleting(meta: Obj, *, grace: int = 0, stamp: str) -> None:
    """Set `deletionTimestamp` (and its grace) on an object's metadata, bumping `generation` the first time.

    An object that tracks a generation (> 0) gets one more when it is first marked for deletion, graceful or
    held by finalizers: its controllers must stop acting on it (staging/src/k8s.io/apiserver/pkg/registry/rest/
    delete.go `BeforeDelete`, .../generic/registry/store.go `markAsDeleting`)."""
    if not meta.get("deletionTimestamp"):
        generation = meta.get("generation")
        if type(generation) is int and generation > 0:
            meta["generation"] = generation + 1
    meta["deletionTimestamp"] = stamp
    meta["deletionGracePeriodSeconds"] = grace


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
KUBECTL_APPLY_MANAGER = "kubectl"
"""The field manager of `kubectl apply --server-side`: the one whose applies the field manager keeps in step with
client-side apply's annotation (apimachinery pkg/util/managedfields/internal/lastappliedupdater.go,
lastappliedmanager.go)."""


def _last_applied_json(config: Obj) -> str:
    """`buildLastApplied`: the applied configuration without the annotation, as the unstructured JSON encoder
    writes it (sorted keys, compact, HTML characters escaped, a final newline)."""
    copy = dict(config)
    meta = config.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("annotations"), dict):
        annotations = {k: v for k, v in meta["annotations"].items() if k != LAST_APPLIED}
        copy["metadata"] = {**meta, "annotations": annotations}
    text = json.dumps(copy, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escaped)
    return text + "\n"


def _sync_last_applied(new: Obj, config: Obj) -> None:
    """lastAppliedUpdater: a server-side apply by `kubectl` rewrites a client-side apply annotation the object
    carries to the configuration applied, so a later client-side apply diffs against it (`kubectl apply
    --server-side` then `kubectl apply` removes what the server-side apply dropped)."""
    annotations = (new.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict) and annotations.get(LAST_APPLIED):
        _meta(new)["annotations"] = {**annotations, LAST_APPLIED: _last_applied_json(config)}


def _allowed_by_last_applied(r: Resource, live: Obj) -> set[FieldPath] | None:
    """lastAppliedManager's `allowedConflictsFromLastApplied`: the fields of the client-side apply annotation
    whose value the object still has (None without a usable annotation). A server-side apply by `kubectl` may
    take those from their owners without --force-conflicts: the upgrade from client-side apply."""
    text = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    if not isinstance(text, str) or not text:
        return None
    try:
        last = json.loads(text)
    except ValueError:
        return None
    if not isinstance(last, dict) or last.get("apiVersion") != r.api_version:
        return None
    fields = apply.field_set(last, schema.strategies_for(r.schema_name))
    return {path for path in fields if not apply.differs(last, live, path)}


def _requested_rv(obj: Obj) -> str | None:
    """The resourceVersion an update, patch or apply asks for, or None for an unconditional write. The registry
    store's Update parses it (`Versioner().ObjectResourceVersion`) and writes unconditionally when it is 0, as
    when it is absent, for a kind whose strategy has `AllowUnconditionalUpdate` (all kjobs serves but Lease and
    PodDisruptionBudget: `Resource.conditional_update`):
    staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go. `kubectl replace` of an object with
    `resourceVersion: "0"` therefore replaces it instead of failing with 409 Conflict."""
    rv = (obj.get("metadata") or {}).get("resourceVersion") if isinstance(obj.get("metadata"), dict) else None
    # ASCII digits only, as Go's strconv.ParseUint reads them (`str.isdigit` is also true of "¹" and "٠")
    if not rv or (isinstance(rv, str) and rv.isascii() and rv.isdigit() and int(rv) == 0):
        return None
    return str(rv)


def _patched_rv(patched: Obj, old_rv: Any) -> Any:
    """The resourceVersion a patch writes at: the one its result asks for (`_requested_rv`), else the stored one
    `old_rv`. A patch that left the stored string in place (nearly all: it is the very object) asks for that one,
    or for none when it is empty or zero, and either way writes at it: answered without parsing it."""
    meta = patched.get("metadata")
    if type(old_rv) is str and type(meta) is dict and meta.get("resourceVersion") is old_rv:
        return old_rv
    return _requested_rv(patched) or old_rv


_OMITTED_WHEN_EMPTY = ("labels", "annotations", "finalizers", "ownerReferences", "managedFields")
_ABSENT = object()


def _omit_empty(meta: Obj) -> None:
    """Go's `omitempty` on ObjectMeta: an empty map or list is not stored (a patch that removes the last
    finalizer leaves no `finalizers`, as a real API server shows it, not `[]`)."""
    for key in _OMITTED_WHEN_EMPTY:
        # `None`, `[]` or `{}`; read once, with no list or dict built to compare with (four writes a pod), and
        # its type asked only of a falsy value (most are present and not empty: an `isinstance` call apiece)
        value = meta.get(key, _ABSENT)
        if not value and (value is None or isinstance(value, (list, dict))):
            del meta[key]


_ADMISSION_VALIDATED = frozenset({"PriorityClass", "Namespace"})
"""The kinds `ApiService._validate_admission` checks: the only ones it is called for."""

_WRITE_NOTED = frozenset({"PriorityClass", "ResourceQuota", "LimitRange", "CustomResourceDefinition"})
"""The kinds whose writes `ApiService._written` notes: the only ones it is called for."""


async def _released(held: Allocation, write: Coroutine[Any, Any, Obj]) -> Obj:
    """`write`, then the Service IP and ports `held` for it released, whatever its outcome."""
    try:
        return await write
    finally:
        held.release()


def _spec_finalizers(r: Resource, obj: Obj) -> list[Any]:
    """A Namespace's `spec.finalizers`, which hold its deletion as `metadata.finalizers` do
    (pkg/registry/core/namespace/storage `ShouldDeleteNamespaceDuringUpdate`); [] for any other kind."""
    spec = obj.get("spec") if r.kind == "Namespace" else None
    finalizers = spec.get("finalizers") if type(spec) is dict else None
    return finalizers if type(finalizers) is list else []


def _copy(obj: Obj) -> Obj:
    result: Obj = orjson.loads(orjson.dumps(obj))
    return result


def _qos_class(pod: Obj) -> str:
    """`GetPodQOS` (pkg/apis/core/helper/qos): BestEffort without any request or limit; Guaranteed when every
    container limits cpu and memory and requests no other amount than its limits; Burstable otherwise."""
    spec = pod.get("spec") or {}
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    guaranteed = bool(containers)
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        requests.update(req)
        limits.update(lim)
        if type(lim) is dict and type(req) is dict:  # as decoded: read without the generators below
            if "cpu" not in lim or "memory" not in lim:
                guaranteed = False
            else:
                for k, v in lim.items():
                    if req.get(k, v) != v:
                        guaranteed = False
                        break
        elif not all(k in lim for k in ("cpu", "memory")) or any(req.get(k, lim[k]) != lim[k] for k in lim):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _merge_affinity_label_keys(pod: Obj) -> Obj:
    """`mutatePodAffinity` (pkg/registry/core/pod/strategy.go, `MatchLabelKeysInPodAffinity`, on since v1.31):
    on create, each pod (anti-)affinity term's `matchLabelKeys` become `In` and its `mismatchLabelKeys` `NotIn`
    requirements of its labelSelector, with this pod's values of those labels; a key the pod has no label for,
    and a term without labelSelector (it matches nothing), are left alone. The terms changed are copies: a
    controller's pod may share them with its template."""
    spec = pod.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("affinity"), dict):
        return pod
    affinity: Obj = spec["affinity"]
    labels = (pod.get("metadata") or {}).get("labels") or {}
    labels = labels if type(labels) is dict else {}

    def merged(term: Any) -> Any:
        if type(term) is not dict or type(term.get("labelSelector")) is not dict:
            return term
        added = []
        for keys_field, operator in (("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn")):
            keys = term.get(keys_field)
            for key in keys if isinstance(keys, list) else []:
                if type(key) is str and key in labels:
                    added.append({"key": key, "operator": operator, "values": [labels[key]]})
        if not added:
            return term
        selector = term["labelSelector"]
        expressions = selector.get("matchExpressions")
        expressions = list(expressions) if type(expressions) is list else []
        return {**term, "labelSelector": {**selector, "matchExpressions": expressions + added}}

    new_affinity = dict(affinity)
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind)
        if type(terms) is not dict:
            continue
        new_terms = dict(terms)
        preferred = terms.get("preferredDuringSchedulingIgnoredDuringExecution")
        if type(preferred) is list:
            new_terms["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {**w, "podAffinityTerm": merged(w.get("podAffinityTerm"))} if type(w) is dict else w for w in preferred
            ]
        required = terms.get("requiredDuringSchedulingIgnoredDuringExecution")
        if type(required) is list:
            new_terms["requiredDuringSchedulingIgnoredDuringExecution"] = [merged(t) for t in required]
        new_affinity[kind] = new_terms
    if new_affinity == affinity:
        return pod
    return {**pod, "spec": {**spec, "affinity": new_affinity}}


def _initial_status(r: Resource, obj: Obj, now: Callable[[], str]) -> Any:
    """The status an object starts with, as each strategy's PrepareForCreate sets it; a pod with scheduling
    gates starts PodScheduled=False, reason SchedulingGated (`applySchedulingGatedCondition`,
    pkg/registry/core/pod/strategy.go), which `kubectl get` shows as its STATUS. `now`: the time, asked only
    where a status holds it."""
    if r.kind == "Pod":
        status: Obj = {"phase": "Pending", "qosClass": _qos_class(obj)}
        spec = obj.get("spec")
        if type(spec) is dict and spec.get("schedulingGates"):
            status["conditions"] = [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "lastProbeTime": None,
                    "lastTransitionTime": now(),
                    "reason": "SchedulingGated",
                    "message": "Scheduling is blocked due to non-empty scheduling gates",
                }
            ]
        return status
    if r.kind == "Namespace":
        return {"phase": "Active"}
    if r.kind == "Service":  # PrepareForCreate's empty ServiceStatus, whose loadBalancer struct JSON keeps
        return {"loadBalancer": {}}
    if r.kind in ("Node",):
        return obj.get("status") or {}
    if r.kind == "PersistentVolume":  # pkg/registry/core/persistentvolume/strategy.go
        return {"phase": "Pending", "lastPhaseTransitionTime": now()}
    if r.kind == "PersistentVolumeClaim":
        return {"phase": "Pending"}
    return gozero.zero_status(r.group, r.kind)  # a PodDisruptionBudget's four counters, written at 0 by Go


def _same_but_bookkeeping(new: Obj, old: Obj) -> bool:
    """Whether an update changes nothing but `resourceVersion` and the times of managedFields entries (a no-op
    write). Compared part by part so a real change (the usual case) is found at the first differing field.

    A member that is the stored object's own dict (a patch merged copy on write keeps `spec`, and a finalizer's
    removal `status` too) is equal without a walk (`unchanged`). The metadata is compared key by key, as `==` of
    the two dicts without the bookkeeping keys compares them, without building those dicts
    (tests/server/test_same_but_bookkeeping.py). `unchanged` is written out in the loop: a call a member of every
    update is most of the loop's cost."""
    if new.keys() != old.keys():
        return False
    for key, value in new.items():
        if key != "metadata":
            other = old[key]
            if not ((value is other and (type(value) is dict or type(value) is list)) or value == other):
                return False
    meta, old_meta = new.get("metadata"), old.get("metadata")
    if not isinstance(meta, dict) or not isinstance(old_meta, dict):
        return meta == old_meta
    kept = 0
    for key, value in meta.items():
        if key == "resourceVersion" or key == "managedFields":
            continue
        if key not in old_meta:
            return False
        other = old_meta[key]
        if value is not other and value != other:  # what `==` of two dicts does for each value
            return False
        kept += 1
    if kept != len(old_meta) - ("resourceVersion" in old_meta) - ("managedFields" in old_meta):
        return False
    return bool(_untimed(meta.get("managedFields")) == _untimed(old_meta.get("managedFields")))


def _entry_order(entry: Obj) -> tuple[str, str, str, str, str]:
    """Where an entry stands in `managedFields`: Apply entries before Update ones, each by time (to the second),
    manager, apiVersion and subresource (managedfields.go `sortEncodedManagedFields`, run at every write). The
    times are RFC 3339 to the second, so their text sorts as their instants; an entry without one comes first."""
    return (
        str(entry.get("operation") or ""),
        str(entry.get("time") or ""),
        str(entry.get("manager") or ""),
        str(entry.get("apiVersion") or ""),
        str(entry.get("subresource") or ""),
    )


_OPERATIONS = ("Apply", "Update")


def _decodable(entries: Any) -> bool:
    """Whether `managedFields` decode as `DecodeManagedFields` reads them: every entry an Apply or Update with an
    apiVersion and `fieldsType: FieldsV1` (managedfields.go); `fieldsV1` an object when given."""
    if type(entries) is not list:
        return False
    for entry in entries:
        if type(entry) is not dict or entry.get("operation") not in _OPERATIONS or not entry.get("apiVersion"):
            return False
        if entry.get("fieldsType") != "FieldsV1" or not isinstance(entry.get("fieldsV1", {}), dict | None):
            return False
    return True


def _start_ownership(meta: Obj, live: Any, subresource: str) -> None:
    """The managedFields a create or update starts from, as fieldmanager.go `decodeLiveOrNew` picks them: a
    subresource write keeps the live object's; `[]` or one empty entry asks for a reset (`isResetManagedFields`);
    otherwise the request's when there are some and they decode, else the live object's, "to prevent clients who
    don't understand managedFields from deleting it accidentally" (a `kubectl replace -f` of a file written by
    `kubectl get`, which leaves them out)."""
    requested = meta.get("managedFields")
    if requested is live:
        return
    start = live if _decodable(live) else []
    if not subresource and type(requested) is list:
        if not requested or (len(requested) == 1 and type(requested[0]) is dict and not any(requested[0].values())):
            start = []
        elif _decodable(requested):
            start = requested
    if start:
        meta["managedFields"] = start
    else:
        meta.pop("managedFields", None)


def _untimed(entries: Any) -> Any:
    """managedFields without the entries' times: ownership changes count, timestamps do not."""
    if not isinstance(entries, list):
        return entries
    return [{k: v for k, v in e.items() if k != "time"} if isinstance(e, dict) else e for e in entries]


class ApiService:
    """The API's behaviour, independent of HTTP. Collaborators are injected by keyword."""

    def __init__(
        self,
        store: Storage,
        *,
        clock: Callable[[], float],
        logs: LogSource | None = None,
        new_uid: Callable[[], str] = random_uuid,
        admission: AdmissionSettings | None = None,
        features: FeatureGates = DEFAULT,
        field_managers: bool = True,
        record_events: bool = True,
        token_volumes: bool = True,
    ) -> None:
        self.store = store
        self.features = features
        """The `--feature-gates`: which gated fields the API has (`kjobs.api.features`)."""
        self.field_managers = field_managers
        """Whether creates and updates record `metadata.managedFields` (False only where nobody else reads the
        objects: `kjobs simulate`, `kjobs run` without `--serve`; `ClusterSettings.field_managers`). Server-side
        apply records its own either way."""
        self.record_events = record_events
        """Whether this process's components write Events through a `LocalClient` of this service
        (`ClusterSettings.events`; `kjobs.client.events.EventRecorder`)."""
        self.token_volumes = token_volumes
        """Whether the ServiceAccount plugin gives created pods the `kube-api-access-*` volume (False only where no
        pod reaches this API and nobody reads the pods: `kjobs run` without `--serve`, `kjobs simulate`)."""
        self.clock = clock
        self.logs = logs or NoLogs()
        self.new_uid = new_uid
        self.admission = admission or AdmissionSettings()
        self._background: set[asyncio.Task[Any]] = set()
        self._classes: list[Obj] | None = None
        """The PriorityClasses, as the Priority plugin's lister sees them; None after a write of one."""
        self.service_allocator = ServiceAllocator(lambda: self.store.list(_SERVICES, None), lambda: self.store.revision)
        """Cluster IPs and node ports of Services, read from the stored Services (`kjobs.server.serviceips`)."""
        self.rbac = RbacAuthorizer(store.store)
        """Who may do what, by the stored roles and bindings (its watches open at its first use)."""
        self.crds = CrdController(self)
        """The CRDs' status, their resources' serving and cleanup (`kjobs.server.crdcontroller`)."""
        self.quota = QuotaAdmission(store, clock)
        """The LimitRanger and ResourceQuota admission plugins (`kjobs.server.quota`)."""
        self.crds.sync_now()
        self.tokens = TokenIssuer()
        """Signs and verifies ServiceAccount tokens (`kjobs.server.satokens`): a key of this process unless the
        server keeps one in its data directory (`kjobs up`: `<data-dir>/pki/sa.key`)."""

    # ------------------------------------------------------------------------------------------- helpers

    def now(self) -> str:
        """The current time as Kubernetes writes it."""
        return format_time(self.clock())

    def _get_or_404(
        self, r: Resource, namespace: str, name: str, *, shared: bool = False, known: Obj | None = None
    ) -> Obj:
        obj = self.store.get(r.store_key, namespace, name, shared=shared, known=known)
        if obj is None:
            raise not_found(r.plural, name, group=r.group)
        return obj

    def check_namespace(self, namespace: str, r: Resource | None = None, name: str = "") -> Obj:
        """404 `namespaces "x" not found` when a namespaced create targets a missing namespace; 403 Forbidden for
        a create of `r` named `name` in one being deleted (the NamespaceLifecycle admission plugin). Returns the
        namespace (shared: not to be changed), which the PodSecurity plugin reads next."""
        ns = self.store.get("namespaces", "", namespace, shared=True)
        if ns is None:
            raise not_found("namespaces", namespace)
        if r is not None and (ns.get("metadata") or {}).get("deletionTimestamp"):
            resource = f"{r.plural}.{r.group}" if r.group else r.plural
            details: Obj = {"name": name, "kind": r.plural}
            if r.group:
                details["group"] = r.group
            details["causes"] = [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {namespace} is being terminated",
                    "field": "metadata.namespace",
                }
            ]
            raise ApiError(
                403,
                "Forbidden",
                f'{resource} "{name}" is forbidden: unable to create new content in namespace {namespace} '
                "because it is being terminated",
                details=details,
            )
        return ns

    async def ensure_namespaces(self) -> None:
        """Create the namespaces every cluster has (`default`, `kube-system`, `kube-node-lease`, ...)."""
        r = lookup("", "v1", "namespaces")
        assert r is not None
        for name in NAMESPACES:
            if self.store.get("namespaces", "", name) is None:
                try:
                    await self.create(r, "", {"metadata": {"name": name}}, field_validation="Ignore")
                except ApiError as exc:
                    if exc.reason != "AlreadyExists":
                        raise

    def _decode_check(
        self,
        r: Resource,
        body: Any,
        field_validation: str,
        kind: str | None = None,
        *,
        typed: bool = False,
        patch: Obj | None = None,
        patching: bool = False,
        strategic: bool = False,
    ) -> list[str]:
        """Type/version checks and strict field validation of a request body; returns warnings.

        A `typed` body was built in this process by code that only knows the API's fields (kjobs' own
        controllers): like a protobuf body in Kubernetes it cannot carry unknown fields, so the schema walk
        that looks for them is skipped, and so is the check of its values' Go types. `patch`: the merge patch
        `body` results from; only what it names is walked (`gotypes.first_type_error`, `schema.unknown_fields`).
        `strategic`: `body` is a strategic merge patch's result, converted from its map rather than decoded
        (`gotypes.converter_type_error`): a mistyped value is 422 against `patch` with the patch's `%+v`."""
        kind = kind or r.kind
        if not isinstance(body, dict):
            raise bad_request(
                f'{kind} in version "{r.version}" cannot be handled as a {kind}: '
                f"json: cannot unmarshal {_json_type(body)} into Go value of type struct"
            )
        api_version, body_kind = body.get("apiVersion"), body.get("kind")
        if api_version not in (None, "", r.api_version) and kind == r.kind:
            raise bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version ({r.api_version})"
            )
        if body_kind not in (None, "", kind):
            raise bad_request(f"the kind in the data ({body_kind}) does not match the expected kind ({kind})")
        if typed:
            return []
        # Go's decoder, before the strict field check: a value its type cannot hold is refused before anything
        # else (a pod status condition of "x" was once stored, and broke every later eviction of that pod). A
        # create or update is 400 (handlers/create.go, `transformDecodeError`); a patch whose result does not
        # decode is 422 against the field `patch` (handlers/patch.go, `applyPatchToCurrentObject`).
        # `well_typed` answers most bodies in one walk; the two checks say what is wrong when it does not.
        plain = kind == r.kind and well_typed(body, kind, group=r.group, within=patch)
        if strategic and kind == r.kind and not plain:
            mistyped = converter_type_error(body, kind, group=r.group, within=patch)
            if mistyped is not None:
                raise invalid("", "", [FieldError("patch", ErrorType.FieldValueInvalid, mistyped, go_format(patch))])
        mistyped = first_type_error(body, kind, group=r.group, within=patch) if kind == r.kind and not plain else None
        if mistyped is not None:
            if patching:
                text = orjson.dumps(body).decode()
                raise invalid("", "", [FieldError("patch", ErrorType.FieldValueInvalid, mistyped, text)])
            raise bad_request(f'{kind} in version "{r.version}" cannot be handled as a {kind}: {mistyped}')
        custom = r.unknown_fields(body) if kind == r.kind else None
        if custom is not None:
            return check_listed_unknown_fields(custom, kind, r.version, field_validation)
        schema_name = r.schema_name if kind == r.kind else None
        return check_unknown_fields(body, schema_name, kind, r.version, field_validation, self.features, patch=patch)

    def _default(self, r: Resource, obj: Obj, old: Obj | None = None) -> Obj:
        drop = r.found.get("drop_disabled") or r.hook("drop_disabled")
        if drop is not None:
            drop(obj, old, self.features)
        update_hook = (r.found.get("default_update") or r.hook("default_update")) if old is not None else None
        if update_hook is not None:
            result: Obj = update_hook(obj, old)
        else:
            hook = r.found.get("default") or r.hook("default")
            if hook is None:
                return obj
            result = hook(obj)
        return result if isinstance(result, dict) else obj

    def _admit(
        self, r: Resource, obj: Obj, subresource: str, *, create: bool, old: Obj | None = None, generated: bool = False
    ) -> Obj:
        """Mutating admission, after defaulting and before validation, on creates and updates of the object
        itself (the admission plugins skip subresources): see `kjobs.server.admission`."""
        if r.kind == "Pod" and not subresource:
            given = obj
            obj = admit_pod(obj, self.admission, create=create)
            if create and self.token_volumes and SERVICE_ACCOUNT not in self.admission.disabled_plugins:
                obj = self._mount_token(obj)
            if PRIORITY not in self.admission.disabled_plugins:  # `enabled`, inline: every pod write asks
                classes = self._priority_classes() if create else ()
                # Both plugins above copy the pod and its spec when they change it: a copy is this request's own
                owned = create and obj is not given
                obj = admit_pod_priority(obj, None if create else old, classes, generated=generated, owned=owned)
        elif r.kind == "PersistentVolumeClaim" and not subresource:
            if create:
                obj = admit_claim(obj, self._storage_classes(), self.admission)
            elif old is not None:
                refusal = claim_resize_refusal(obj, old, self._storage_classes())
                if refusal is not None and self.admission.enabled("PersistentVolumeClaimResize"):
                    raise forbidden("persistentvolumeclaims", str(_meta(obj).get("name") or ""), refusal)
        elif r.kind == "PersistentVolume" and not subresource and create:
            obj = admit_volume(obj, self.admission)
        return obj

    def _mount_token(self, pod: Obj) -> Obj:
        """The ServiceAccount plugin's token volume (`kjobs.api.token_requests.mount_service_account_token`) for a
        created pod that is not a mirror pod and whose automounting neither it nor its account turns off (the
        account as stored now; a missing one, which the lookup refuses where it is on, does not turn it off)."""
        spec = pod.get("spec")
        meta = pod.get("metadata") or {}
        if not isinstance(spec, dict) or MIRROR_POD_ANNOTATION in (meta.get("annotations") or {}):
            return pod
        account = None
        if not isinstance(spec.get("automountServiceAccountToken"), bool):
            name = str(spec.get("serviceAccountName") or DEFAULT_SERVICE_ACCOUNT)
            account = self.store.get("serviceaccounts", str(meta.get("namespace") or ""), name, shared=True)
        if not should_automount(spec, account):
            return pod
        changes = mount_service_account_token(spec)
        return pod if changes is None else {**pod, "spec": {**spec, **changes}}

    async def create_token(self, namespace: str, name: str, body: Any, *, dry_run: bool = False) -> Result:
        """POST serviceaccounts/{name}/token (`kjobs.server.tokenrest.create_token`); nothing is stored, so a dry
        run is answered the same."""
        from kjobs.server import tokenrest  # imported by the first token request (`kjobs run` makes none)

        return Result(tokenrest.create_token(self, namespace, name, body), 201)

    def _storage_classes(self) -> list[Obj]:
        """The StorageClasses, for the storage admission plugins (few; listed when a claim is written)."""
        classes, _ = self.store.list("storageclasses.storage.k8s.io", None)
        return list(classes)

    async def ensure_default_storage_class(self) -> None:
        """kind's default StorageClass `standard` (its `local-path-provisioner` manifest): `rancher.io/local-path`,
        WaitForFirstConsumer, reclaim Delete, annotated the default class. Created, like kind's, once: when the
        cluster has no StorageClass at all, so one a user deleted or replaced stays as they left it."""
        r = lookup("storage.k8s.io", "v1", "storageclasses")
        assert r is not None
        if self._storage_classes():
            return
        body: Obj = {
            "metadata": {
                "name": "standard",
                "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
            },
            "provisioner": "rancher.io/local-path",
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
        try:
            await self.create(r, "", body, field_validation="Ignore")
        except ApiError as exc:
            if exc.reason != "AlreadyExists":
                raise

    async def _check_service_account(self, pod: Obj, namespace: str, generated: bool) -> None:
        """The ServiceAccount plugin's checks of a created pod (plugin/pkg/admission/serviceaccount/admission.go,
        run before the Priority plugin as kube-apiserver orders them): a mirror pod may reference no account nor
        Secret; any other pod's account (`default` when it names none) must exist, else 403 Forbidden.

        `getServiceAccount` reads its informer's cache, then GETs the account; `default` up to ten times, 100 to
        200 ms apart, since the ServiceAccounts controller is making it. Here the store is both the cache and the
        live object: one O(1) `exists` per pod, and the waits only while `default` is missing. A namespace that
        is missing or terminating is left to the NamespaceLifecycle check (`check_namespace`), which kube-apiserver
        runs first."""
        spec = pod.get("spec")
        if not isinstance(spec, dict):
            return
        meta = pod.get("metadata") or {}
        if MIRROR_POD_ANNOTATION in (meta.get("annotations") or {}):
            refusal = mirror_pod_refusal(spec)
            if refusal is not None:
                raise forbidden("pods", name_for_errors(meta, generated), refusal)
            return
        account = service_account(spec, create=True, mirror=False) or DEFAULT_SERVICE_ACCOUNT
        store = self.store
        if store.exists("serviceaccounts", namespace, account):
            return
        ns = store.get("namespaces", "", namespace, shared=True)
        if ns is None or (ns.get("metadata") or {}).get("deletionTimestamp"):
            return
        attempts = SERVICE_ACCOUNT_LOOKUP_ATTEMPTS if account == DEFAULT_SERVICE_ACCOUNT else 1
        interval = random.uniform(*SERVICE_ACCOUNT_RETRY_INTERVAL)
        for _ in range(1, attempts):
            await asyncio.sleep(interval)
            if store.exists("serviceaccounts", namespace, account):
                return
        raise forbidden("pods", name_for_errors(meta, generated), service_account_refusal(namespace, account))

    def _validate_admission(self, r: Resource, obj: Obj, subresource: str, *, create: bool) -> None:
        """Validating admission, after validation: the Priority plugin's one-default rule for PriorityClasses;
        PodSecurity's refusal of a created namespace's unparseable labels. Callers call it only for
        `_ADMISSION_VALIDATED` kinds (a call a write of every pod, for nothing)."""
        if r.kind == "PriorityClass" and not subresource and self.admission.enabled(PRIORITY):
            check_priority_class(obj, self._priority_classes(), create=create)
        elif r.kind == "Namespace" and create and not subresource and self.admission.enabled(podsecurity.PLUGIN):
            podsecurity.check_namespace_labels(obj, None)

    def _pod_security(
        self, r: Resource, obj: Obj, old: Obj | None, subresource: str, ns: Obj | None, warnings: Warnings | None
    ) -> None:
        """The PodSecurity plugin (`kjobs.server.podsecurity`) on a write of a pod, a Job or CronJob (whose pod
        template it warns about), or a namespace update; `ns`: the namespace when the caller has it at hand.
        Only the namespace's labels are read unless they name a PodSecurity level."""
        if r.kind == "Namespace":
            if old is None or subresource:
                return
            podsecurity.check_namespace_labels(obj, old)
            if warnings is not None:
                name = str(_meta(obj).get("name") or "")
                pods = lambda: self.store.list(_PODS, name)[0]  # noqa: E731  (listed only when the level tightens)
                warnings.extend(podsecurity.namespace_update_warnings(obj, old, pods))
            return
        if r.kind == "Pod" and subresource in podsecurity.IGNORED_POD_SUBRESOURCES:
            return  # first: a pod's status writes are the most frequent writes there are
        if r.kind != "Pod" and (warnings is None or subresource):
            return
        if r.kind == "Pod" and old is not None and not podsecurity.significant_update(obj, old):
            return  # before the namespace is read: most pod updates (finalizers, labels) end here
        if ns is None:
            ns = self.store.get("namespaces", "", str(_meta(obj).get("namespace") or ""), shared=True)
        if r.kind == "Pod":
            podsecurity.check_pod(ns, obj, None, subresource, warnings)  # an update found significant above
        elif warnings is not None:
            podsecurity.check_pod_controller(r.kind, ns, obj, warnings)

    def _priority_classes(self) -> list[Obj]:
        if self._classes is None:
            classes, _ = self.store.list(_PRIORITY_CLASSES, None)
            self._classes = list(classes)
        return self._classes

    def _written(self, r: Resource) -> None:
        """An object of `r` was written: a PriorityClass write makes the next pod admission list them again.
        Writers call it only for `_WRITE_NOTED` kinds."""
        if r.kind == "PriorityClass":
            self._classes = None
        elif r.kind in ("ResourceQuota", "LimitRange"):
            self.quota.written(r.kind)
        elif r.kind == "CustomResourceDefinition" and r.group == CRD_GROUP:
            self.crds.changed()

    async def ensure_kubernetes_service(self, port: int, *, reconcile: bool = True) -> None:
        """The `kubernetes` Service (`_ensure_kubernetes_service_object`), then its Endpoints and EndpointSlice
        (`ensure_kubernetes_endpoints`), at start and at each periodic run."""
        await self._ensure_kubernetes_service_object(port, reconcile=reconcile)
        await self.ensure_kubernetes_endpoints(port)

    async def ensure_kubernetes_endpoints(self, port: int, address: str = "127.0.0.1") -> None:
        """kube-apiserver's endpoint reconciler for its own Service (pkg/controlplane/reconcilers: the default
        `lease` reconciler's `ReconcileEndpoints`, written through `EndpointsAdapter`): the Endpoints `kubernetes`
        in `default` lists the API server's advertise address (here 127.0.0.1, the only one) at its secure port,
        named `https`, labelled `endpointslice.kubernetes.io/skip-mirror: "true"`, and the EndpointSlice
        `kubernetes` the same endpoint, ready; each is created when missing and rewritten when it differs."""
        subsets = [{"addresses": [{"ip": address}], "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}]
        endpoints_meta = {"name": KUBERNETES_SERVICE, "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}}
        slice_body: Obj = {
            "addressType": "IPv4",
            "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
        }
        slice_meta = {"name": KUBERNETES_SERVICE, "labels": {"kubernetes.io/service-name": KUBERNETES_SERVICE}}
        for plural, group, meta, content in (
            ("endpoints", "", endpoints_meta, {"subsets": subsets}),
            ("endpointslices", "discovery.k8s.io", slice_meta, slice_body),
        ):
            r = lookup(group, "v1", plural)
            assert r is not None
            existing = self.store.get(r.store_key, "default", KUBERNETES_SERVICE)
            if existing is None:
                try:
                    await self.create(
                        r, "default", {"metadata": dict(meta), **content}, field_validation="Ignore",
                        manager="kube-apiserver",
                    )  # fmt: skip
                except ApiError as exc:
                    if exc.reason != "AlreadyExists":
                        raise
                continue
            if all(existing.get(k) == v for k, v in content.items()):
                continue
            updated = {**existing, **content}
            await self.update(
                r, "default", KUBERNETES_SERVICE, updated, field_validation="Ignore", manager="kube-apiserver"
            )

    async def _ensure_kubernetes_service_object(self, port: int, *, reconcile: bool = True) -> None:
        """The `kubernetes` Service in `default`, as kube-apiserver's own controller keeps it
        (pkg/controlplane/controller/kubernetesservice/controller.go `CreateOrUpdateMasterServiceIfNeeded`,
        `getMasterServiceUpdateIfNeeded`): cluster IP 10.96.0.1, port `https` 443 to the API server's port;
        created when missing; with `reconcile` (at start: a restart on another port) its ports and type are reset
        when they differ, while the periodic runs (`kjobs.server.bootstrap`) leave an existing one alone."""
        r = lookup("", "v1", "services")
        assert r is not None
        ports = [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}]
        existing = self.store.get(_SERVICES, "default", KUBERNETES_SERVICE)
        if existing is None:
            body = {
                "metadata": {
                    "name": KUBERNETES_SERVICE,
                    "labels": {"component": "apiserver", "provider": "kubernetes"},
                },
                "spec": {
                    "ports": ports,
                    "clusterIP": KUBERNETES_SERVICE_IP,
                    "sessionAffinity": "None",
                    "type": "ClusterIP",
                },
            }
            try:
                await self.create(r, "default", body, field_validation="Ignore", manager="kube-apiserver")
            except ApiError as exc:
                if exc.reason != "AlreadyExists":
                    raise
            return
        spec = existing.get("spec") or {}
        if not reconcile or (
            spec.get("type") == "ClusterIP"
            and [{k: p.get(k) for k in ("name", "protocol", "port", "targetPort")} for p in spec.get("ports") or []]
            == ports
        ):
            return
        updated = {**existing, "spec": {**spec, "type": "ClusterIP", "ports": ports}}
        await self.update(
            r, "default", KUBERNETES_SERVICE, updated, field_validation="Ignore", manager="kube-apiserver"
        )

    def _begin_service_write(self, svc: Obj, old: Obj | None) -> Allocation:
        """What the Service REST storage's `beginCreate`/`beginUpdate` and the strategy's `PrepareForUpdate` do
        before validation (pkg/registry/core/service/storage/storage.go, strategy.go): values the update left
        out kept, `clusterIP`/`clusterIPs` in step, families, cluster IP and node ports allocated (held until the
        write is stored or fails), and fields of a type the Service left dropped."""
        if old is not None:
            services.patch_allocated_values(svc, old)
        services.normalize_cluster_ips(svc, old)
        held = self.service_allocator.allocate(svc, old)
        if old is not None:
            services.drop_type_dependent_fields(svc, old)
        return held

    async def ensure_rbac_bootstrap(self) -> None:
        """Reconcile RBAC's bootstrap policy, as kube-apiserver's `rbac/bootstrap-roles` post-start hook does
        (pkg/registry/rbac/rest/storage_rbac.go; the objects: `kjobs.server.rbacpolicy`, the rules of
        reconciliation: `kjobs.server.rbacreconcile`): a missing object is created, one annotated
        `autoupdate: "false"` left alone, any other given back what it lacks (nothing it has is removed)."""
        from kjobs.server.rbacpolicy import bootstrap_objects
        from kjobs.server.rbacreconcile import reconcile_binding, reconcile_role

        for plural, namespace, expected in bootstrap_objects():
            r = lookup("rbac.authorization.k8s.io", "v1", plural)
            assert r is not None
            name = expected["metadata"]["name"]
            existing = self.store.get(r.store_key, namespace, name)
            try:
                if existing is None:
                    await self.create(r, namespace, copy.deepcopy(expected), field_validation="Ignore")
                    continue
                is_role = plural in ("clusterroles", "roles")
                answer = reconcile_role(existing, expected) if is_role else reconcile_binding(existing, expected)
                if answer.obj is None:
                    continue
                if answer.recreate:
                    await self.delete(r, namespace, name, DeleteOptions())
                    fresh = {k: v for k, v in answer.obj.items() if k != "metadata"}
                    meta = answer.obj.get("metadata") or {}
                    fresh["metadata"] = {k: meta[k] for k in ("name", "labels", "annotations") if k in meta}
                    await self.create(r, namespace, fresh, field_validation="Ignore")
                else:
                    await self.update(r, namespace, name, answer.obj, field_validation="Ignore")
            except ApiError as exc:
                if exc.reason not in ("AlreadyExists", "Conflict", "NotFound"):
                    raise

    async def ensure_system_priority_classes(self) -> None:
        """Create `system-node-critical` and `system-cluster-critical` when missing, as kube-apiserver's
        `scheduling/bootstrap-system-priority-classes` post-start hook does
        (pkg/registry/scheduling/rest/storage_scheduling.go, pkg/apis/scheduling/helpers.go)."""
        r = lookup("scheduling.k8s.io", "v1", "priorityclasses")
        assert r is not None
        for name, value in SYSTEM_PRIORITY_CLASSES.items():
            if self.store.get(_PRIORITY_CLASSES, "", name) is None:
                description = SYSTEM_PRIORITY_CLASS_DESCRIPTIONS[name]
                body = {"metadata": {"name": name}, "value": value, "description": description}
                try:
                    await self.create(r, "", body, field_validation="Ignore")
                except ApiError as exc:
                    if exc.reason != "AlreadyExists":
                        raise

    def _validate(self, r: Resource, obj: Obj, old: Obj | None, subresource: str) -> None:
        if r.group == "rbac.authorization.k8s.io":  # the policy-based storages check before they store
            check_escalation(self.rbac, r.kind, str(_meta(obj).get("namespace") or ""), obj, old)
        errors: list[FieldError] = []
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = _meta(obj)  # its `{}`, set before the hooks read the object, as they always saw it
        name = meta.get("name", "")  # read before the hooks, made a string only for an error (most writes pass)
        if subresource in ("status", "finalize", "ephemeralcontainers") and old is not None:
            hook_name = _SUBRESOURCE_VALIDATION[subresource]
            hook = r.found.get(hook_name) or r.hook(hook_name)
            if hook is not None:
                errors = hook(obj, old)
        elif old is not None and (update := (r.found.get("validate_update") or r.hook("validate_update"))) is not None:
            errors = update(obj, old, features=self.features)
        else:
            validate = r.found.get("validate") or r.hook("validate")
            if validate is not None:
                errors = validate(obj, features=self.features)
            else:
                meta_hook = core_hook("kjobs.api.validation_meta", "validate_object_meta")
                if meta_hook is not None:
                    errors = meta_hook(_meta(obj), namespaced=r.namespaced)
            if old is not None:  # a kind without its own update validation
                update_hook = core_hook("kjobs.api.validation_meta", "validate_object_meta_update")
                if update_hook is not None:
                    errors = errors + update_hook(_meta(obj), old.get("metadata") or {})
        if errors:
            raise invalid(r.kind, str(name), errors, group=r.group)

    def _object_warnings(self, r: Resource, new: Obj, old: Obj | None) -> list[str]:
        """The strategy's `WarningsOnCreate`/`WarningsOnUpdate` (a pod create's: pkg/api/pod/warnings.go, about
        10 µs). They only ever reach a client as `Warning` headers, so a caller that drops them (`warn=False`:
        `LocalClient`, kjobs' in-process components) does not have them computed; nothing else reads them."""
        hook = r.hook("warnings")
        if hook is None:
            return []
        result: list[str] = hook(new, old)
        return result

    def _scoped(self, r: Resource, paths: set[FieldPath], subresource: str) -> set[FieldPath]:
        """The paths a write may own: only status through /status, everything else otherwise."""
        if subresource == "status":
            return {p for p in paths if p[0] == "f:status"}
        if r.has_status:
            return {p for p in paths if p[0] != "f:status"}
        return paths

    def _managed(
        self,
        r: Resource,
        obj: Obj,
        old: Obj | None,
        manager: str | None,
        operation: str,
        subresource: str,
        *,
        decoded: Obj | None = None,
        admitted_from: Obj | None = None,
    ) -> None:
        """Record that `manager` now owns the fields this create/update set or changed (taking them from others).

        `admitted_from`: a created object as mutating admission found it (decoded and defaulted). The create
        handler updates the managed fields before admission runs, so nobody owns what the admission plugins set
        (a pod's `serviceAccountName`, its default tolerations): a `kubectl apply --server-side` that took a
        client-side apply's fields would otherwise drop them, and the pod update would be Forbidden.

        `decoded`: a created Job as its request decoded it, before the strategy's `PrepareForCreate` generated its
        selector and pod template labels. kube-apiserver's create handler updates the managed fields before
        `r.Create` runs the strategy (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go), so nobody
        owns what the strategy generates; a manager owning them would drop them at its next server-side apply
        (as `kubectl apply --server-side` does after migrating a client-side apply's fields to itself)."""
        if not manager or not self.field_managers:
            return
        strategies = schema.strategies_for(r.schema_name)
        meta = _meta(obj)
        if old is None:
            _start_ownership(meta, None, subresource)
        if old is None and not subresource and not meta.get("managedFields"):
            # A create with no ownership yet: the manager owns every field it set, encoded in one walk.
            source = self._default(r, decoded) if decoded is not None else (admitted_from or obj)
            # Go decodes the zero times too: a template's `creationTimestamp: null` is the creator's field
            source = zerotimes.fill(source, r.group, r.kind)
            tree = apply.fields_v1_of(source, strategies, include_status=not r.has_status)
            if tree:
                meta["managedFields"] = [self._entry(r, manager, operation, subresource, tree)]
            return
        status = True if subresource == "status" else (False if r.has_status else None)
        lost: Obj = {}
        if old is not None:
            change = fieldtrees.changed_fields_v1(old, obj, strategies, status=status)
            # What `old` sets that `obj` no longer does (or sets otherwise): nobody owns a removed field any more
            # (merge/update.go `update` takes `compare.Removed` from every manager); the changed ones are taken
            # by `change` anyway.
            lost = fieldtrees.changed_fields_v1(obj, old, strategies, status=status)
        else:  # a create that names owners already: everything it sets is its change
            change = apply.fields_v1_of(obj, strategies, include_status=status is not False)
            if status:
                change = {k: v for k, v in change.items() if k == "f:status"}
        self._take_ownership(obj, r, manager, operation, subresource, change, take=change, lost=lost)

    def _take_ownership(
        self,
        obj: Obj,
        r: Resource,
        manager: str,
        operation: str,
        subresource: str,
        owned: Obj,
        *,
        take: Obj,
        replace: bool = False,
        lost: Obj | None = None,
    ) -> None:
        """Update `metadata.managedFields`: `manager` owns the `owned` tree (only it, with `replace`; else in
        addition to what it owned); other managers lose the leaves of `take`, and every manager those of `lost`
        (fields the write removed)."""
        meta = _meta(obj)
        entries: list[Obj] = []
        mine_tree: Any = None
        for entry in meta.get("managedFields") or []:
            if not isinstance(entry, dict):
                continue
            tree = entry.get("fieldsV1")
            if (entry.get("manager"), entry.get("operation"), entry.get("subresource", "")) == (
                manager,
                operation,
                subresource,
            ):
                if lost and isinstance(tree, dict) and fieldtrees.overlaps(tree, lost):
                    tree = fieldtrees.without(tree, lost)
                mine_tree = tree
                continue
            for gone in (take, lost):
                if gone and isinstance(tree, dict) and fieldtrees.overlaps(tree, gone):  # rebuilt only when it loses
                    tree = fieldtrees.without(tree, gone)
                    entry = {**entry, "fieldsV1": tree}
            if tree:  # a manager left owning nothing loses its entry, an applier's too (merge/update.go `update`)
                entries.append(entry)
        if replace:
            fields_v1 = owned
        elif mine_tree and fieldtrees.covers(mine_tree, owned):
            fields_v1 = mine_tree  # the manager already owns all of it: nothing to re-encode
        else:
            fields_v1 = fieldtrees.union(mine_tree, owned)
        if fields_v1:  # a manager that owns nothing has no entry (stripmeta.go drops an empty applier's)
            entries.append(self._entry(r, manager, operation, subresource, fields_v1))
        if entries:
            meta["managedFields"] = sorted(entries, key=_entry_order)
        else:
            meta.pop("managedFields", None)

    def _entry(self, r: Resource, manager: str, operation: str, subresource: str, fields_v1: Obj) -> Obj:
        entry = {
            "manager": manager,
            "operation": operation,
            "apiVersion": r.api_version,
            "time": self.now(),
            "fieldsType": "FieldsV1",
            "fieldsV1": fields_v1,
        }
        if subresource:
            entry["subresource"] = subresource
        return entry

    # ------------------------------------------------------------------------------------------- read

    def get(self, r: Resource, namespace: str, name: str) -> Obj:
        """GET an item."""
        return self._get_or_404(r, namespace, name)

    def list(
        self, r: Resource, namespace: str | None, labels: LabelSelector, fields: FieldSelector
    ) -> tuple[list[Obj], int]:
        """LIST a collection (objects in name order, and the revision)."""
        items, revision = self.store.list(r.store_key, namespace, label_selector=labels, field_selector=fields)
        return items, revision

    # ------------------------------------------------------------------------------------------- create

    def review(
        self, r: Resource, body: Any, user: UserInfo, *, field_validation: str = "", namespace: str = ""
    ) -> Result:
        """POST of a review (`kubectl auth whoami`, `kubectl auth can-i`, a SubjectAccessReview; a
        LocalSubjectAccessReview in `namespace`): answered from `user` or the user it names, not stored."""
        from kjobs.server import reviews, tokenrest  # imported by the first review (`kjobs run` makes none)

        warnings = self._decode_check(r, body, field_validation)
        if r.kind == "TokenReview":
            return Result(tokenrest.token_review(self, body), 201, warnings)
        if r.namespaced:
            meta = body.get("metadata")
            if isinstance(meta, dict) and meta.get("namespace") not in (None, "", namespace):
                raise bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
        return Result(reviews.review(r.kind, body, user, self.now(), self.rbac, namespace), 201, warnings)

    async def create(
        self,
        r: Resource,
        namespace: str,
        body: Any,
        *,
        field_validation: str = "",
        manager: str | None = None,
        dry_run: bool = False,
        typed: bool = False,
        warn: bool = True,
    ) -> Result:
        """POST to a collection (`typed`: see `_decode_check`; `warn`: see `_object_warnings`)."""
        warnings = self._decode_check(r, body, field_validation, typed=typed)
        obj: Obj = body
        obj["apiVersion"], obj["kind"] = r.api_version, r.kind
        meta = _meta(obj)
        if r.namespaced:
            if meta.get("namespace") not in (None, "", namespace):
                raise bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        # rest.BeforeCreate (staging/src/k8s.io/apiserver/pkg/registry/rest/create.go): a name is generated only
        # when none is set; a set name is the name, even when it starts with generateName.
        generated = not meta.get("name") and bool(meta.get("generateName"))
        if generated:
            meta["name"] = f"{meta['generateName']}{_random_suffix()}"
        for key in _SET_BY_SERVER_ON_CREATE:
            meta.pop(key, None)
        meta["uid"] = self.new_uid()
        meta["creationTimestamp"] = self.now()
        if r.tracks_generation:
            meta["generation"] = 1
        if r.has_status:
            obj["status"] = _initial_status(r, obj, self.now)
        decoded: Obj | None = None
        unlabelled = False
        if r.kind == "Job":
            prepare = _core_job_prepare()
            if prepare is not None:
                decoded = obj  # as the request decoded it: what its manager owns (see `_managed`)
                # Defaulted at decode, before the strategy generates template labels, a Job without labels nor
                # template labels is validated with none (`labels_from_template`); the defaults below run after
                # the strategy and give it the generated ones, which it gets from storage on a cluster.
                unlabelled = not meta.get("labels") and not _template_labelled(obj)
                obj = prepare(obj, uid=meta["uid"])
        defaulted = self._default(r, obj)
        disabled = self.admission.disabled_plugins  # `enabled`'s set, read inline: every create asks
        if r.kind == "Pod" and self.admission.service_account_lookup and SERVICE_ACCOUNT not in disabled:
            await self._check_service_account(defaulted, namespace, generated)
        # copy on write: `defaulted` is as admission found it
        obj = self._admit(r, defaulted, "", create=True, generated=generated)
        if r.kind == "Pod" and LIMIT_RANGER not in disabled:
            limited = self.quota.admit_pod(obj, namespace)
            if limited is not obj and isinstance(limited.get("status"), dict):
                limited["status"]["qosClass"] = _qos_class(limited)  # PrepareForCreate runs after admission
            obj = limited
        held: Allocation | None = None
        if r.kind == "Service":
            obj = {**obj}  # what the strategy and allocation add is nobody's field (`_managed`'s `admitted_from`)
            held = self._begin_service_write(obj, None)
        try:
            return await self._create_checked(
                r,
                namespace,
                obj,
                meta,
                warnings,
                generated,
                decoded,
                defaulted,
                manager=manager,
                dry_run=dry_run,
                unlabelled=unlabelled,
                warn=warn,
            )
        finally:
            if held is not None:
                held.release()

    async def _create_checked(
        self,
        r: Resource,
        namespace: str,
        obj: Obj,
        meta: Obj,
        warnings: Warnings,
        generated: bool,
        decoded: Obj | None,
        defaulted: Obj,
        *,
        manager: str | None,
        dry_run: bool,
        unlabelled: bool = False,
        warn: bool = True,
    ) -> Result:
        """The rest of `create`, once a Service's IP and ports are held (`unlabelled`: validate the object without
        its `metadata.labels`, which only defaulting after the strategy gave it)."""
        if r.kind == "Pod":
            obj = _merge_affinity_label_keys(obj)
        obj = zerotimes.fill(obj, r.group, r.kind)
        stored_meta = _meta(obj)
        if not stored_meta.get("name"):
            raise invalid(
                r.kind,
                "",
                [FieldError("metadata.name", ErrorType.FieldValueRequired, "name or generateName is required")],
                group=r.group,
            )
        _omit_empty(stored_meta)
        if meta is not stored_meta:  # a Job's stored object is the strategy's copy of the request
            _omit_empty(meta)
        if unlabelled:
            self._validate(r, {**obj, "metadata": {k: v for k, v in _meta(obj).items() if k != "labels"}}, None, "")
        else:
            self._validate(r, obj, None, "")
        if r.kind in _ADMISSION_VALIDATED:
            self._validate_admission(r, obj, "", create=True)
        if warn:
            warnings.extend(self._object_warnings(r, obj, None))
        if r.namespaced:
            name = str(_meta(obj).get("name") or "")
            ns = self.check_namespace(namespace, r, name)
            disabled = self.admission.disabled_plugins  # `enabled`'s set, read inline: every create asks
            if r.kind == "Pod" and LIMIT_RANGER not in disabled:
                self.quota.validate_pod(obj, namespace, name)
            elif r.kind == "PersistentVolumeClaim" and self.admission.enabled(LIMIT_RANGER):
                self.quota.validate_claim(obj, namespace, name)
            if (
                r.kind in _POD_SECURITY_KINDS
                and has_policy_labels((ns.get("metadata") or {}).get("labels"))  # else: privileged, nothing to do
                and self.admission.enabled(podsecurity.PLUGIN)
            ):
                self._pod_security(r, obj, None, "", ns, warnings if warn else None)
            if RESOURCE_QUOTA not in disabled and self.quota.applies(r.group, r.plural, namespace):
                await self.quota.check(r.group, r.plural, obj, namespace, name, dry_run=dry_run)
        if manager and self.field_managers:  # `_managed`'s own test, without a call a write
            self._managed(r, obj, None, manager, "Update", "", decoded=decoded, admitted_from=defaulted)
        if dry_run:
            # DryRunnableStorage.Create: a dry run fails as the write would if the name is taken (409
            # AlreadyExists), after the same regeneration of a generated name (`createWithGenerateNameRetry`).
            namespace_of = str(_meta(obj).get("namespace") or "")
            for attempt in range(_GENERATE_NAME_ATTEMPTS):
                if not self.store.exists(r.store_key, namespace_of, str(_meta(obj)["name"])):
                    return Result(obj, 201, warnings)
                if not generated or attempt == _GENERATE_NAME_ATTEMPTS - 1:
                    break
                _meta(obj)["name"] = f"{meta['generateName']}{_random_suffix()}"
            raise already_exists(r.plural, str(_meta(obj)["name"]), group=r.group)
        for attempt in range(_GENERATE_NAME_ATTEMPTS):
            try:
                created = await self.store.create(r.store_key, obj)
                if r.kind in _WRITE_NOTED:
                    self._written(r)
                if r.kind == "Service":
                    self.service_allocator.written(created)
            except ApiError as exc:
                # RetryGenerateName (GA in 1.32): a generated name that is taken is generated again.
                if exc.reason != "AlreadyExists" or not generated or attempt == _GENERATE_NAME_ATTEMPTS - 1:
                    raise
                _meta(obj)["name"] = f"{meta['generateName']}{_random_suffix()}"
                continue
            return Result(created, 201, warnings)
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------------------------------- update / patch

    def _merge_update(self, r: Resource, old: Obj, new: Obj, subresource: str) -> Obj:
        """Apply the status split and keep server-owned metadata, as the strategies' PrepareForUpdate do."""
        if subresource == "status":
            # A shallow copy: only status (replaced) and metadata (copied; its server fields change) differ
            # from `old`, which is left unchanged (a status patch may read the store's shared object).
            old_meta = old.get("metadata")
            merged = {**old, "metadata": dict(old_meta)} if isinstance(old_meta, dict) else _copy(old)
            if "status" in new:
                merged["status"] = new["status"]
            else:
                merged.pop("status", None)
            if r.kind == "Pod":
                _keep_qos_class(merged, old)
            _status_write_metadata(r, _meta(merged), new.get("metadata") or {})
            return merged
        if subresource == "ephemeralcontainers":
            return _ephemeral_containers_write(old, new)
        merged = new
        if merged.get("metadata") is old.get("metadata"):  # a patch that left metadata alone: it changes here
            merged["metadata"] = dict(merged["metadata"])
        merged["apiVersion"], merged["kind"] = r.api_version, r.kind
        if r.has_status:
            if "status" in old:
                merged["status"] = old["status"]
            else:
                merged.pop("status", None)
        meta, old_meta = _meta(merged), old.get("metadata") or {}
        for key in _KEPT_ON_UPDATE:
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        return merged

    async def _write_unless_lost(
        self,
        r: Resource,
        old: Obj,
        new: Obj,
        *,
        subresource: str,
        expected_rv: str | None,
        manager: str | None,
        operation: str,
        dry_run: bool,
        warnings: Warnings | None = None,
    ) -> Obj | None:
        """`_write`, or None when another writer changed the object since `old` was read and the request named no
        resourceVersion of its own: the caller reads again and retries, as the apiserver's GuaranteedUpdate does
        (with a resourceVersion of the request's, 409 Conflict)."""
        try:
            return await self._write(
                r,
                old,
                new,
                subresource=subresource,
                expected_rv=expected_rv,
                manager=manager,
                operation=operation,
                dry_run=dry_run,
                warnings=warnings,
            )
        except ApiError as exc:
            if exc.reason == "Conflict" and expected_rv == (old.get("metadata") or {}).get("resourceVersion"):
                return None
            raise

    def _write(
        self,
        r: Resource,
        old: Obj,
        new: Obj,
        *,
        subresource: str,
        expected_rv: str | None,
        manager: str | None,
        operation: str,
        dry_run: bool,
        warnings: Warnings | None = None,
    ) -> Awaitable[Obj]:
        """Default and admit an update, then `_write_checked`, for the caller to await at once. Not a coroutine
        itself: it hands back `_write_checked`'s (a Service's in `_released`), one coroutine fewer a write."""
        if subresource == "finalize":  # the namespace's spec.finalizers, written as given (FinalizeStrategy)
            if (finalize_hook := r.hook("default_finalize")) is not None:
                new = finalize_hook(new)
        elif subresource != "status":  # a status write keeps the stored (defaulted) object apart from status
            new = self._admit(r, self._default(r, new, old), subresource, create=False, old=old)
        elif (status_hook := (r.found.get("default_status") or r.hook("default_status"))) is not None:
            new = status_hook(new)
        held = self._begin_service_write(new, old) if r.kind == "Service" and not subresource else None
        # by position: keywords are matched to the parameters one by one (about 500 instructions a write more)
        write = self._write_checked(r, old, new, subresource, expected_rv, manager, operation, dry_run, warnings)
        return write if held is None else _released(held, write)

    async def _write_checked(
        self,
        r: Resource,
        old: Obj,
        new: Obj,
        subresource: str,
        expected_rv: str | None,
        manager: str | None,
        operation: str,
        dry_run: bool,
        warnings: Warnings | None,
    ) -> Obj:
        """The rest of `_write`, once a Service's IP and ports are held."""
        if expected_rv and expected_rv != (old.get("metadata") or {}).get("resourceVersion"):
            # A stale write is a Conflict before it is validated: store.go `Update` compares the resourceVersions
            # before `BeforeUpdate` (the strategy's validation) and the validating admission. Validated first, a
            # status PUT read before the Job controller deleted the pod and took its finalizer answered 422 ("no
            # new finalizers can be added if the object is being deleted"), which RetryOnConflict does not retry.
            raise conflict(r.plural, str((old.get("metadata") or {}).get("name", "")), group=r.group)
        new = zerotimes.fill(new, r.group, r.kind)
        if manager and self.field_managers:  # before the no-op check: a body without them changes nothing
            _start_ownership(_meta(new), (old.get("metadata") or {}).get("managedFields"), subresource)
        if r.tracks_generation and subresource != "status" and r.spec_changed(new, old):
            _meta(new)["generation"] = int((old.get("metadata") or {}).get("generation") or 0) + 1
        self._validate(r, new, old, subresource)
        if r.kind in _ADMISSION_VALIDATED:
            self._validate_admission(r, new, subresource, create=False)
        if warnings is not None and subresource != "status":
            warnings.extend(self._object_warnings(r, new, old))
        if (
            subresource != "status"
            and r.kind in _POD_SECURITY_KINDS
            and podsecurity.PLUGIN not in self.admission.disabled_plugins  # `enabled`, inline (every write)
        ):
            self._pod_security(r, new, old, subresource, None, warnings)  # status writes: the plugin ignores them
        if _same_but_bookkeeping(new, old):
            return old
        meta = _meta(new)
        _omit_empty(meta)  # first: labels a patch emptied are gone, not a field its manager now owns
        if manager and self.field_managers:  # `_managed`'s own test, without a call a write
            self._managed(r, new, old, manager, operation, subresource)
        meta["resourceVersion"] = expected_rv or (old.get("metadata") or {}).get("resourceVersion")
        if dry_run:
            return new
        zero_grace = not r.graceful or meta.get("deletionGracePeriodSeconds") == 0
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and zero_grace and not _spec_finalizers(r, new):
            # The registry's ShouldDeleteDuringUpdate: the last finalizer of an object whose grace is over. The
            # object is deleted as stored (watchers' DELETED event carries its finalizers), and the write answers
            # the object it made, without finalizers and at the revision it was read at (`deleteWithoutFinalizers`,
            # store.go: "clients are expecting an updated object"); kopf reads that as the deletion going ahead.
            gone = await self.store.delete(
                r.store_key, meta.get("namespace", ""), meta["name"], expected_rv=meta["resourceVersion"]
            )
            if r.kind in _WRITE_NOTED:
                self._written(r)
            await self._on_dependent_gone(gone)
            return new
        written = await self.store.update(r.store_key, new, expected_rv=meta["resourceVersion"])
        if r.kind in _WRITE_NOTED:
            self._written(r)
        if r.kind == "Service":
            self.service_allocator.written(written)
        return written

    async def update(
        self,
        r: Resource,
        namespace: str,
        name: str,
        body: Any,
        *,
        subresource: str = "",
        field_validation: str = "",
        manager: str | None = None,
        dry_run: bool = False,
        typed: bool = False,
        warn: bool = True,
    ) -> Result:
        """PUT an item or its status (`typed`: see `_decode_check`; `warn`: see `_object_warnings`)."""
        warnings = self._decode_check(r, body, field_validation, typed=typed)
        meta = _meta(body)
        if meta.get("name") not in (None, name):
            raise bad_request(
                f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})"
            )
        if r.namespaced and meta.get("namespace") not in (None, "", namespace):
            raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
        expected = _requested_rv(body)
        if expected is None and not r.conditional_update:
            return await self._unconditional_update(
                r, namespace, name, body, subresource=subresource, manager=manager, dry_run=dry_run, warnings=warnings,
                warn=warn,
            )  # fmt: skip
        old = self._get_or_404(r, namespace, name)
        new = self._merge_update(r, old, body, subresource)
        written = await self._write(
            r,
            old,
            new,
            subresource=subresource,
            expected_rv=expected,
            manager=manager,
            operation="Update",
            dry_run=dry_run,
            warnings=warnings if warn else None,
        )
        return Result(written, 200, warnings)

    async def _unconditional_update(
        self,
        r: Resource,
        namespace: str,
        name: str,
        body: Obj,
        *,
        subresource: str,
        manager: str | None,
        dry_run: bool,
        warnings: Warnings,
        warn: bool = True,
    ) -> Result:
        """A PUT without a resourceVersion of a kind whose strategy's `AllowUnconditionalUpdate` is true (every
        served kind but Lease and PodDisruptionBudget): it updates whatever version is stored, retried on a
        fresh read when another writer wins, as registry/store.go `Update` does (`doUnconditionalUpdate` inside
        `GuaranteedUpdate`) instead of answering 422 "must be specified for an update"."""
        for _ in range(_CONFLICT_RETRIES):
            old = self._get_or_404(r, namespace, name)
            current = (old.get("metadata") or {}).get("resourceVersion")
            new = self._merge_update(r, old, _copy(body), subresource)
            _meta(new)["resourceVersion"] = current
            found: Warnings | None = [] if warn else None  # this attempt's object warnings only
            written = await self._write_unless_lost(
                r,
                old,
                new,
                subresource=subresource,
                expected_rv=current,
                manager=manager,
                operation="Update",
                dry_run=dry_run,
                warnings=found,
            )
            if written is not None:
                return Result(written, 200, [*warnings, *(found or ())])
        raise conflict(r.plural, name, group=r.group)

    async def patch(
        self,
        r: Resource,
        namespace: str,
        name: str,
        content_type: str,
        patch: Any,
        *,
        subresource: str = "",
        field_validation: str = "",
        manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        typed: bool = False,
        warn: bool = True,
    ) -> Result:
        """PATCH an item or its status (strategic merge, JSON merge, JSON patch or server-side apply;
        `typed`: see `_decode_check`; `warn`: see `_object_warnings`)."""
        base = content_type if content_type in PATCH_MEDIA else media_base(content_type)
        if base == "application/apply-patch+yaml":
            return await self._apply(
                r,
                namespace,
                name,
                patch,
                subresource=subresource,
                field_validation=field_validation,
                manager=manager,
                force=force,
                dry_run=dry_run,
            )
        # A patch merged copy-on-write changes nothing it read, so it may read the store's shared object instead
        # of a decode: a status patch (the status split copies metadata and replaces status; no defaulting), or
        # one that leaves the spec alone (its metadata is copied before it is changed, and defaulting, which
        # Kubernetes applies on every decode, sets nothing on an already defaulted spec).
        read_only = base in _COPY_ON_WRITE_PATCHES and (
            subresource == "status" or (isinstance(patch, dict) and "spec" not in patch)
        )
        for _ in range(_PATCH_RETRIES):
            old = self._get_or_404(r, namespace, name, shared=read_only)
            patched = apply_patch(
                base,
                old,
                patch,
                strategies=schema.strategies_for(r.schema_name),
                strict_decode=field_validation.capitalize() != "Ignore",
            )
            if not isinstance(patched, dict):
                raise bad_request("the patched object is not a JSON object")
            if base == "application/json-patch+json":  # merges nest no deeper than the object or the patch
                limits.check_depth(patched, "the patched object")
            merged = patch if base in _COPY_ON_WRITE_PATCHES and isinstance(patch, dict) else None
            strategic = base == "application/strategic-merge-patch+json" and isinstance(patch, dict)
            warnings = self._decode_check(
                r, patched, field_validation, typed=typed, patch=merged, patching=True, strategic=strategic
            )
            old_rv = (old.get("metadata") or {}).get("resourceVersion")
            expected = _patched_rv(patched, old_rv)
            new = self._merge_update(r, old, patched, subresource)
            try:
                written = await self._write(
                    r,
                    old,
                    new,
                    subresource=subresource,
                    expected_rv=expected,
                    manager=manager,
                    operation="Update",
                    dry_run=dry_run,
                    warnings=warnings if warn else None,
                )
            except ApiError as exc:
                # `_write_unless_lost`, inline (a coroutine and a call with keywords fewer a patch): another writer
                # changed the object since it was read, and the patch named no other resourceVersion: read again
                if exc.reason == "Conflict" and expected == old_rv:
                    continue
                raise
            return Result(written, 200, warnings)
        raise conflict(r.plural, name, group=r.group)

    async def _apply(
        self,
        r: Resource,
        namespace: str,
        name: str,
        config: Any,
        *,
        subresource: str,
        field_validation: str,
        manager: str | None,
        force: bool,
        dry_run: bool,
    ) -> Result:
        if not manager:
            raise bad_request("PATCH, application/apply-patch+yaml requires fieldManager to be set")
        if not isinstance(config, dict):
            raise bad_request("the body of an apply patch must be a YAML or JSON object")
        _check_applied_type(r, config)
        meta = _meta(config)
        if meta.get("managedFields") is not None:
            raise bad_request("metadata.managedFields must be nil")
        _check_typed_patch(r, config, self.features)
        if meta.get("name") not in (None, name):
            raise bad_request(
                f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})"
            )
        strategies = schema.strategies_for(r.schema_name)
        applied = self._scoped(r, apply.field_set(config, strategies, include_status=True), subresource)
        old = self.store.get(r.store_key, namespace if r.namespaced else "", name)
        if old is None:
            meta["name"] = name
            result = await self.create(
                r, namespace, config, field_validation=field_validation, manager=None, dry_run=dry_run
            )
            obj = result.obj
            for attempt in range(_PATCH_RETRIES):
                # A controller may write the new object (a Job's status) before its applier is recorded: the
                # record goes on the object as it then is.
                owned = _copy(obj)  # the stored object is shared with watchers: read-only
                self._take_ownership(
                    owned, r, manager, "Apply", subresource, apply.to_fields_v1(applied), take={}, replace=True
                )
                if dry_run:
                    return Result(owned, 201, result.warnings)
                try:
                    owned = await self.store.update(
                        r.store_key, owned, expected_rv=owned["metadata"]["resourceVersion"]
                    )
                except ApiError as exc:
                    if exc.reason == "Conflict" and attempt < _PATCH_RETRIES - 1:
                        obj = self._get_or_404(r, namespace, name, shared=True)
                        continue
                    raise
                return Result(owned, 201, result.warnings)
        # As for any patch, the apiserver applies again to the object as it is when its write lost to another
        # writer (GuaranteedUpdate's retry), unless the configuration names the resourceVersion it was made for.
        for attempt in range(_PATCH_RETRIES):
            if old is None or attempt:
                old = self._get_or_404(r, namespace, name, shared=True)
            outcome = await self._apply_to(
                r,
                old,
                config,
                applied,
                subresource=subresource,
                field_validation=field_validation,
                manager=manager,
                force=force,
                dry_run=dry_run,
            )
            if outcome is not None:
                return outcome
        raise conflict(r.plural, name, group=r.group)

    async def _apply_to(
        self,
        r: Resource,
        old: Obj,
        config: Obj,
        applied: set[FieldPath],
        *,
        subresource: str,
        field_validation: str,
        manager: str,
        force: bool,
        dry_run: bool,
    ) -> Result | None:
        """One attempt of server-side apply of `config` to the object as read (`old`): None when another writer
        changed the object since it was read (409 Conflict instead when `config` names its resourceVersion)."""
        strategies = schema.strategies_for(r.schema_name)
        warnings = self._decode_check(r, config, field_validation)
        entries = [e for e in (old.get("metadata") or {}).get("managedFields") or [] if isinstance(e, dict)]
        key = (manager, "Apply", subresource)
        previous: set[FieldPath] = set()
        others: list[tuple[Obj, set[FieldPath]]] = []
        for entry in entries:
            owned = apply.from_fields_v1(entry.get("fieldsV1"))
            if (entry.get("manager"), entry.get("operation"), entry.get("subresource", "")) == key:
                previous = owned
            else:
                others.append((entry, owned))
        found = apply.conflicts(old, config, applied, others)
        if found and not force and manager == KUBECTL_APPLY_MANAGER:
            allowed = _allowed_by_last_applied(r, old)
            if allowed is not None:
                found = [(entry, path) for entry, path in found if path not in allowed] or found
                force = all(path in allowed for _, path in found)
        if found and not force:
            raise apply.conflict_error(found)
        forced = {path for _, path in found}
        still_owned = set().union(*(owned - forced for _, owned in others)) if others else set()
        from kjobs.server import applymerge  # imported by the first server-side apply (`kjobs run` makes none)

        merged = applymerge.merge(old, config, strategies)  # by list and map types, as typed/merge.go
        kept = still_owned | applied
        dropped = previous - applied - still_owned
        if dropped:  # the merge shares what it did not change with `old`, which the store shares: read-only
            merged = _copy(merged)
        # Whole elements and maps first (a key the element loses would no longer name it: `protocol` of a port),
        # then fields, the deepest first (RemoveItems drops a listed element whole).
        for path in sorted(dropped, key=lambda p: (p[-1] != ".", -len(p))):
            if path[-1] == "." and any(len(p) > len(path) - 1 and p[: len(path) - 1] == path[:-1] for p in kept):
                continue  # a map or element someone still owns a field of stays (merge/update.go addBackOwnedItems)
            apply.remove_at(merged, path)
        new = self._merge_update(r, old, merged, subresource)
        if manager == KUBECTL_APPLY_MANAGER:
            _sync_last_applied(new, config)
        _meta(new)["managedFields"] = entries
        applied_tree = apply.to_fields_v1(applied)
        self._take_ownership(
            new, r, manager, "Apply", subresource, applied_tree, take=apply.to_fields_v1(forced), replace=True
        )
        written = await self._write_unless_lost(
            r,
            old,
            new,
            subresource=subresource,
            expected_rv=_requested_rv(config) or (old.get("metadata") or {}).get("resourceVersion"),
            manager=None,
            operation="Apply",
            dry_run=dry_run,
            warnings=warnings,
        )
        return None if written is None else Result(written, 200, warnings)

    # ------------------------------------------------------------------------------------------- delete

    async def delete(
        self,
        r: Resource,
        namespace: str,
        name: str,
        options: DeleteOptions,
        *,
        collection: bool = False,
        known: Obj | None = None,
    ) -> Result:
        """DELETE an item: preconditions, graceful deletion, finalizers and propagation.

        A system PriorityClass is not deleted (403), except by a delete-collection (`collection`), which upstream
        runs through the generic store's `Delete`, not the PriorityClass registry's
        (pkg/registry/scheduling/priorityclass/storage/storage.go `REST.Delete`).

        The registry's read-modify-write is retried on a fresh read when another writer (the scheduler, the
        node agent) changed the object between the read and the compare-and-swap, as `GuaranteedUpdate` does
        (staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go `Delete`). Preconditions are
        checked against each read, so only a caller that sent them can get 409 Conflict.

        `known`: an in-process caller's read-only copy of a pod (its informer's), read instead of decoding the
        stored pod when it is at the stored revision (pod GC's deletes, docs/perf45.md); a pod's DELETE changes
        what it read copy on write only (`_delete_pod`), where other kinds' may change it (a CRD's finalizers).
        """
        if r.kind != "Pod":
            known = None
        if r.kind == "PriorityClass" and not collection and name in SYSTEM_PRIORITY_CLASSES:
            raise forbidden(
                "priorityclasses", name, "this is a system priority class and cannot be deleted", group=r.group
            )
        try:
            result = await self._guaranteed(
                r,
                namespace,
                name,
                lambda old: self._delete_read(r, namespace, name, old, options),
                check=_delete_preconditions(r, name, options),
                known=known,
            )
        finally:
            if r.kind in _WRITE_NOTED:
                self._written(r)
        if options.orphan_dependents is False and result.code == 200:
            # handlers/delete.go: 202 Accepted when not deleted at once and orphanDependents=false was sent
            uid = (result.obj.get("metadata") or {}).get("uid")
            still = self.store.get(r.store_key, namespace if r.namespaced else "", name)
            if uid and still is not None and (still.get("metadata") or {}).get("uid") == uid:
                result.code = 202
        return result

    async def _guaranteed(
        self,
        r: Resource,
        namespace: str,
        name: str,
        step: Callable[[Obj], Awaitable[T]],
        *,
        check: Callable[[Obj], None] | None = None,
        known: Obj | None = None,
    ) -> T:
        """storage's `GuaranteedUpdate`: run `step` on a fresh read of the object; when its compare-and-swap
        lost to another writer (409 Conflict), read again and retry. `check` (the caller's preconditions) runs
        on every read and its failure is final (staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go).
        `known`: the caller's read-only copy, the first read if still current (etcd3's `origStateIsCurrent`
        starts from the watch cache's object too); `step` must then not change what it is given."""
        for attempt in range(_CONFLICT_RETRIES):
            current = self._get_or_404(r, namespace, name, known=known if attempt == 0 else None)
            if check is not None:
                check(current)
            try:
                return await step(current)
            except ApiError as exc:
                if exc.reason != "Conflict" or attempt == _CONFLICT_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    async def _delete_read(self, r: Resource, namespace: str, name: str, old: Obj, options: DeleteOptions) -> Result:
        """One attempt of `delete` on the object as read; a Conflict means it changed since."""
        meta = old.get("metadata") or {}
        if r.kind == "Namespace" and name in IMMORTAL_NAMESPACES:
            raise ApiError(
                403,
                "Forbidden",
                f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                details={"name": name, "kind": "namespaces"},
            )
        if r.kind == "Namespace" and options.dry_run:
            terminating = old if meta.get("deletionTimestamp") else _terminating_namespace(old, options, self.now())
            return Result(terminating, 200)
        if r.kind == "Namespace":
            # A namespace's DELETE answers with it Terminating, as the namespace registry does; the namespace
            # controller's work is done here: emptying it, then `finalizeNamespace` once nothing is left (pods
            # still terminating hold it until the last goes, `_on_dependent_gone`, as `deleteAllContent` requeues).
            # Its `orphan`/`foregroundDeletion` finalizer (this DELETE's policy) is the garbage collector's to act on.
            terminating = await self._terminate_namespace(old, options)
            await self._empty_namespace(name)
            left = await self._finish_namespace(name)
            return Result(left if left is not None else terminating, 200)
        warnings: list[str] = []
        propagation = options.propagation
        if propagation is None:
            propagation = _propagation_from_finalizers(meta.get("finalizers")) or r.default_propagation
            if r.orphan_warning:
                warnings.append(ORPHAN_WARNING)
        if r.kind == "Event":  # the event strategy's GC policy is `Unsupported`: neither finalizer is added
            propagation = "Background"
        if options.dry_run:
            return Result(self._dry_run_deleted(r, name, old, options, propagation), 200, warnings)
        if r.graceful and _graceful_pending(meta, options.grace_period):
            # BeforeDelete's gracefulPending: the finalizers cannot be changed by this DELETE either
            return Result(old, 200, warnings)
        uid = str(meta.get("uid", ""))
        if propagation == "Foreground":
            new = _copy(old)
            new_meta = _meta(new)
            finalizers = [f for f in new_meta.get("finalizers") or [] if f != "orphan"]
            if "foregroundDeletion" not in finalizers:
                finalizers.append("foregroundDeletion")
            new_meta["finalizers"] = finalizers
            if r.graceful:  # a pod keeps its grace period beside the finalizer (updateForGracefulDeletionAndFinalizers)
                written = (await self._delete_pod(r, new, options, finalizers_changed=True)).obj
            else:
                if not new_meta.get("deletionTimestamp"):
                    _mark_deleting(new_meta, stamp=self.now())
                written = await self.store.update(r.store_key, new, expected_rv=meta.get("resourceVersion"))
            await self._cascade(r, namespace, uid, "Foreground")
            await self._finish_foreground(r, namespace, name)  # answered as written, as before the collector acts
            return Result(written, 200, warnings)
        kept = _gc_finalizers_kept(meta.get("finalizers"), propagation)
        if r.kind == "CustomResourceDefinition" and r.group == CRD_GROUP and not meta.get("deletionTimestamp"):
            old = _copy(old) if kept is None else old
            meta = _meta(old)
            if kept is not None:
                meta["finalizers"] = kept
            add_cleanup_finalizer(meta)
            kept = list(meta["finalizers"])
        if kept is not None:
            # deletionFinalizersForGarbageCollection: this DELETE's policy replaces the orphan/foregroundDeletion
            # finalizer the object had (store.go): Orphan adds `orphan`, which `_finish_orphan` acts on below
            old = _copy(old)
            meta = _meta(old)
            if kept:
                meta["finalizers"] = kept
            else:
                meta.pop("finalizers", None)
        if r.graceful:
            result = await self._delete_pod(r, old, options, finalizers_changed=kept is not None)
        elif meta.get("finalizers"):
            new = _copy(old)
            new_meta = _meta(new)
            if not new_meta.get("deletionTimestamp") or kept is not None:
                if not new_meta.get("deletionTimestamp"):
                    _mark_deleting(new_meta, stamp=self.now())
                new = await self.store.update(r.store_key, new, expected_rv=meta.get("resourceVersion"))
            result = Result(new, 200)
        else:
            key = namespace if r.namespaced else ""
            # `old` is the read as made unless this DELETE's policy changed its finalizers (`kept`)
            gone = await self.store.delete(r.store_key, key, name, last=old, untouched=kept is None)
            result = Result(_success_status(r, name, gone), 200)
        result.warnings.extend(warnings)
        if uid and (propagation == "Orphan" or r.kind == "Job"):  # what `_cascade` acts on: no coroutine else
            await self._cascade(r, namespace, uid, propagation)
        if propagation == "Orphan":  # answered as written (200, the object held by `orphan`), then let go
            await self._finish_orphan(r, namespace, name, uid)
        return result

    async def _finish_orphan(self, r: Resource, namespace: str, name: str, uid: str) -> None:
        """The garbage collector's `attemptToOrphan` for an owner deleted with propagation Orphan, done in process
        once `_cascade` has stripped its dependents' references (pkg/controller/garbagecollector/
        garbagecollector.go `orphanDependents`, then `removeFinalizer`): its `orphan` finalizer is removed, and
        with nothing else holding it (no other finalizer, its grace over) it is deleted, as the registry's
        `ShouldDeleteDuringUpdate` deletes it on that update. The garbage collector controller, where it runs,
        finds nothing left to do."""
        try:
            await self._guaranteed(r, namespace, name, lambda owner: self._unorphan(r, owner, uid))
        except ApiError as exc:
            if exc.code != 404:  # gone already: someone else finished it
                raise

    async def _unorphan(self, r: Resource, owner: Obj, uid: str) -> None:
        """One attempt of `_finish_orphan` on the owner as read."""
        meta = owner.get("metadata") or {}
        finalizers = [str(f) for f in meta.get("finalizers") or []]
        if meta.get("uid") != uid or not meta.get("deletionTimestamp") or "orphan" not in finalizers:
            return
        new = _copy(owner)
        new_meta = _meta(new)
        rest = [f for f in finalizers if f != "orphan"]
        if rest:
            new_meta["finalizers"] = rest
        else:
            new_meta.pop("finalizers", None)
        zero_grace = not r.graceful or new_meta.get("deletionGracePeriodSeconds") == 0
        if not rest and zero_grace and not _spec_finalizers(r, new):
            namespace = str(meta.get("namespace") or "")
            name, rv = str(meta.get("name", "")), meta.get("resourceVersion")
            gone = await self.store.delete(r.store_key, namespace, name, expected_rv=rv, last=owner)
            await self._on_dependent_gone(gone)
            return
        await self.store.update(r.store_key, new, expected_rv=meta.get("resourceVersion"))

    def _dry_run_deleted(self, r: Resource, name: str, old: Obj, options: DeleteOptions, propagation: str) -> Obj:
        """What a dry-run DELETE answers: the answer of the DELETE it stands for, nothing written (the apiserver's
        DryRunnableStorage computes the graceful/finalizer update or reads the deleted object, and stores
        neither): the object marked for deletion when finalizers or a grace period hold it, else the deleted
        object (pods) or the Success Status."""
        meta = old.get("metadata") or {}
        if r.graceful and _graceful_pending(meta, options.grace_period):
            return old
        finalizers = _gc_finalizers_kept(meta.get("finalizers"), propagation)
        if finalizers is None:
            finalizers = [str(f) for f in meta.get("finalizers") or []]
        if propagation == "Foreground":
            finalizers = [f for f in meta.get("finalizers") or [] if f != "orphan"]
            finalizers += [] if "foregroundDeletion" in finalizers else ["foregroundDeletion"]
        grace: int | None = 0
        current: int | None = None
        if r.graceful:
            grace, current = _pod_deletion_grace(old, options)
            if grace is None or (meta.get("deletionTimestamp") and not current and not finalizers):
                return old
        if not finalizers and not grace:
            return _success_status(r, name, old)
        new = _copy(old)
        new_meta = _meta(new)
        new_meta["finalizers"] = finalizers
        _omit_empty(new_meta)
        if grace:  # a shortened grace moves the deletionTimestamp back by the difference, as `_delete_pod`
            pending = current and meta.get("deletionTimestamp")
            start = parse_time(str(meta["deletionTimestamp"])) - go_seconds(current or 0) if pending else self.clock()
            _mark_deleting(new_meta, grace=grace, stamp=format_time(start + go_seconds(grace)))
        elif not new_meta.get("deletionTimestamp"):
            _mark_deleting(new_meta, stamp=self.now())
        return new

    async def _terminate_namespace(self, ns: Obj, options: DeleteOptions) -> Obj:
        """Mark a namespace Terminating (deletionTimestamp, `status.phase`, the finalizers of the DELETE's
        policy), as its DELETE does in Kubernetes, so watchers see it and nothing new is created in it while it
        is emptied. A namespace already Terminating is answered as it is."""
        meta = ns.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            return ns
        new = _terminating_namespace(ns, options, self.now())
        written: Obj = await self.store.update("namespaces", new, expected_rv=meta.get("resourceVersion"))
        return written

    async def _empty_namespace(self, namespace: str) -> None:
        """Delete everything in a namespace (what the namespace controller does before the namespace goes)."""
        for resource in STORED:
            if not resource.namespaced:
                continue
            items, _ = self.store.list(resource.store_key, namespace)
            for obj in items:
                try:
                    await self.delete(
                        resource, namespace, obj["metadata"]["name"], DeleteOptions(propagation="Background")
                    )
                except ApiError as exc:
                    if exc.code not in (404, 409):
                        raise

    async def _delete_pod(
        self, r: Resource, pod: Obj, options: DeleteOptions, *, finalizers_changed: bool = False
    ) -> Result:
        """A pod's DELETE (`rest.BeforeDelete` with the pod strategy's `CheckGracefulDelete`): a negative grace
        period counts as 1s; a pod already being deleted may only have its grace shortened, its
        deletionTimestamp moved back by the difference; one whose deletion grace is 0 goes now (unless it has
        finalizers). The caller has answered a pending graceful deletion already (`_graceful_pending`)."""
        meta = pod.get("metadata") or {}
        grace, current = _pod_deletion_grace(pod, options)
        if grace is None:
            return Result(pod, 200)  # pending (the caller answers this case first)
        if grace == 0 and not meta.get("finalizers"):
            # `pod` is this attempt's own read (`_guaranteed`), used for nothing after: the store stamps it, and
            # unless this DELETE changed its finalizers it is the read as made (the store reuses its bytes).
            namespace, name = meta.get("namespace", ""), meta["name"]
            gone = await self.store.delete(r.store_key, namespace, name, last=pod, untouched=not finalizers_changed)
            await self._on_dependent_gone(gone)
            return Result(gone, 200)
        if meta.get("deletionTimestamp") and not current:
            if not finalizers_changed:
                return Result(pod, 200)
            written = await self.store.update(r.store_key, _copy(pod), expected_rv=meta.get("resourceVersion"))
            return Result(written, 200)
        new = _copy(pod)
        new_meta = _meta(new)
        if meta.get("deletionTimestamp") and current:
            stamp = parse_time(str(meta["deletionTimestamp"])) - go_seconds(current) + go_seconds(grace)
        else:
            stamp = self.clock() + go_seconds(grace)  # Go's Duration wraps: never a year past 9999
        _mark_deleting(new_meta, grace=grace, stamp=format_time(stamp))
        written = await self.store.update(r.store_key, new, expected_rv=meta.get("resourceVersion"))
        return Result(written, 200)

    async def finalize_pod_deletion(self, namespace: str, name: str, *, uid: str | None = None) -> bool:
        """Remove a pod marked for deletion once its containers are gone (called by the node agent).

        Returns False if the pod is absent, not marked, has another uid, or still has finalizers.
        """
        pod = self.store.get("pods", namespace, name)
        if pod is None:
            return False
        meta = pod.get("metadata") or {}
        if not meta.get("deletionTimestamp") or meta.get("finalizers") or (uid and meta.get("uid") != uid):
            return False
        rv = meta.get("resourceVersion")
        pod = await self.store.delete("pods", namespace, name, expected_rv=rv, last=pod, untouched=True)
        await self._on_dependent_gone(pod)
        return True

    async def _cascade(self, owner: Resource, namespace: str, uid: str, propagation: str) -> None:
        """Act on dependents (objects whose ownerReferences name `uid`) as the garbage collector would: its
        writes name the dependent's uid as a precondition and are retried when they race another writer.
        Orphan lets go of every dependent, whatever its kind (a CronJob's Jobs too); deleting them is done here
        for a Job's pods only, and for other owners by the garbage collector controller."""
        if not uid:
            return
        if propagation == "Orphan":
            for resource in STORED:
                if resource.namespaced:
                    await self._orphan_dependents(resource, namespace, uid)
            return
        if owner.kind != "Job":
            return
        pods = lookup("", "v1", "pods")
        assert pods is not None
        for pod in _dependents(self.store.list(pods.store_key, namespace)[0], uid):
            meta = pod.get("metadata") or {}
            if any(ref.get("uid") != uid for ref in meta.get("ownerReferences") or []):
                # another owner may be solid: the garbage collector decides (it drops this owner's reference
                # if so, TestCascadingDeletion / TestSolidOwnerDoesNotBlockWaitingOwner in
                # test/integration/garbagecollector)
                continue
            try:
                await self.delete(
                    pods, namespace, str(meta.get("name", "")), DeleteOptions(precondition_uid=str(meta.get("uid")))
                )
            except ApiError as exc:
                if exc.code not in (404, 409):  # gone, or replaced by another pod of the same name
                    raise

    async def _orphan_dependents(self, r: Resource, namespace: str, uid: str) -> None:
        for dependent in _dependents(self.store.list(r.store_key, namespace)[0], uid):
            meta = dependent.get("metadata") or {}
            name, same = str(meta.get("name", "")), DeleteOptions(precondition_uid=str(meta.get("uid", "")))
            try:
                await self._guaranteed(
                    r,
                    namespace,
                    name,
                    partial(self._orphan, r, owner_uid=uid),
                    check=partial(_check_preconditions, r, name, options=same),
                )
            except ApiError as exc:
                if exc.code not in (404, 409):  # gone, or replaced by another object of the same name
                    raise

    async def _orphan(self, r: Resource, dependent: Obj, owner_uid: str) -> Obj:
        """Drop the owner reference to `owner_uid` (the orphan finalizer's write)."""
        refs = (dependent.get("metadata") or {}).get("ownerReferences") or []
        kept = [ref for ref in refs if ref.get("uid") != owner_uid]
        if len(kept) == len(refs):
            return dependent
        new = _copy(dependent)
        if kept:
            _meta(new)["ownerReferences"] = kept
        else:
            del _meta(new)["ownerReferences"]
        return await self.store.update(r.store_key, new, expected_rv=dependent["metadata"].get("resourceVersion"))

    async def _on_dependent_gone(self, dependent: Obj) -> None:
        """A pod went away: an owner Job being deleted in the foreground may now be removable, and so may its
        namespace, Terminating while it waited for its pods. The namespace is finished only when its stored
        JSON holds a deletionTimestamp, as `_finish_namespace` would first read: no coroutine a delete else."""
        namespace_name = str((dependent.get("metadata") or {}).get("namespace") or "")
        try:
            raw = self.store.get_raw("namespaces", "", namespace_name)
        except ApiError:
            raw = b""  # gone: `_finish_namespace` would answer None
        if b'"deletionTimestamp"' in raw:
            await self._finish_namespace(namespace_name)
        for ref in (dependent.get("metadata") or {}).get("ownerReferences") or []:
            if ref.get("kind") == "Job" and ref.get("apiVersion", "batch/v1") == "batch/v1":
                jobs = lookup("batch", "v1", "jobs")
                assert jobs is not None
                namespace, name = dependent["metadata"].get("namespace", ""), ref.get("name", "")
                try:
                    if self._awaits_foreground(jobs, namespace, name):
                        await self._finish_foreground(jobs, namespace, name)
                except ApiError as exc:  # someone else (the garbage collector) got there first
                    if exc.code not in (404, 409):
                        raise

    async def _finish_namespace(self, name: str) -> Obj | None:
        """A Terminating namespace with nothing left in it: the namespace controller's `finalizeNamespace` (its
        `kubernetes` finalizer removed, and the namespace deleted unless other finalizers remain, in `spec` or
        `metadata`). Returns the namespace as it is then (None: gone); one not Terminating is left as it is."""
        r = lookup("", "v1", "namespaces")
        assert r is not None
        try:
            raw = self.store.get_raw("namespaces", "", name)
        except ApiError:
            return None
        ns = self.store.get("namespaces", "", name) if b'"deletionTimestamp"' in raw else None
        if ns is None or not (ns.get("metadata") or {}).get("deletionTimestamp") or self._holds_objects(name):
            return ns
        held = [f for f in _spec_finalizers(r, ns) if f != NAMESPACE_FINALIZER]
        expected = (ns.get("metadata") or {}).get("resourceVersion")
        try:
            if held or (ns.get("metadata") or {}).get("finalizers"):
                if held == _spec_finalizers(r, ns):
                    return ns
                new = _copy(ns)
                new["spec"]["finalizers"] = held
                written: Obj = await self.store.update("namespaces", new, expected_rv=expected)
                return written
            await self.store.delete("namespaces", "", name, expected_rv=expected, last=ns)
        except ApiError as exc:  # changed or gone meanwhile: whoever changed it finishes it
            if exc.code not in (404, 409):
                raise
            return self.store.get("namespaces", "", name)
        return None

    def _holds_objects(self, namespace: str) -> bool:
        """Whether anything is still stored in the namespace (pods terminating, objects with finalizers): a page of
        one undecoded object per kind, so the last pods of a large namespace do not each decode all the rest."""
        return any(self.store.list_page(res.store_key, namespace, limit=1)[0] for res in STORED if res.namespaced)

    def _awaits_foreground(self, r: Resource, namespace: str, name: str) -> bool:
        """Whether the owner may carry the `foregroundDeletion` finalizer, read off its stored JSON: the name
        appears there verbatim whenever it is in `metadata.finalizers`, so its absence settles it without a
        decode. Every pod deletion asks this of its Job, the largest object stored (its index lists), and
        almost never is the Job being deleted in the foreground. 404 when the owner is gone."""
        return b'"foregroundDeletion"' in self.store.get_raw(r.store_key, namespace, name)

    async def _finish_foreground(self, r: Resource, namespace: str, name: str) -> Obj | None:
        """Remove a foreground-deleted owner once no dependents remain; returns it if it still exists."""
        try:
            return await self._guaranteed(r, namespace, name, lambda owner: self._finish_read(r, owner))
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise

    async def _finish_read(self, r: Resource, owner: Obj) -> Obj | None:
        """One attempt of `_finish_foreground` on the owner as read."""
        meta = owner.get("metadata") or {}
        if "foregroundDeletion" not in (meta.get("finalizers") or []):
            return owner
        uid, namespace = str(meta.get("uid") or ""), str(meta.get("namespace") or "")
        # a blocking dependent of any kind keeps it (a CronJob's Jobs: the garbage collector finishes it once they
        # are gone); one without blockOwnerDeletion does not (`blockingDependents`,
        # pkg/controller/garbagecollector/graph.go; TestNonBlockingOwnerRefDoesNotBlock)
        if any(_blocking(self.store.list(d.store_key, namespace)[0], uid) for d in STORED if d.namespaced):
            return owner
        new = _copy(owner)
        rest = [f for f in _meta(new).get("finalizers") or [] if f != "foregroundDeletion"]
        if rest or (r.graceful and meta.get("deletionGracePeriodSeconds") != 0):
            # a pod still in its grace period is left to its node, which deletes it once its containers stopped
            if rest:
                _meta(new)["finalizers"] = rest
            else:
                _meta(new).pop("finalizers", None)
            return await self.store.update(r.store_key, new, expected_rv=meta.get("resourceVersion"))
        name = str(meta.get("name", ""))
        await self.store.delete(r.store_key, namespace, name, expected_rv=meta.get("resourceVersion"))
        return None

    # ------------------------------------------------------------------------------------------- pod subresources

    async def bind(self, namespace: str, name: str, body: Any, *, dry_run: bool = False, typed: bool = False) -> Result:
        """POST pods/{name}/binding, as `BindingREST.Create` (pkg/registry/core/pod/storage/storage.go): the
        Binding names the pod of the URL (else 400); what `ValidatePodBinding` refuses is a 422 Invalid Status
        with its field errors (kube-apiserver answers it 500, a plain aggregate error through `ErrorToAPIStatus`;
        it is the client's error, and kjobs answers bad input 4xx); its uid and resourceVersion are
        preconditions on the pod; `setPodNodeAndMetadata` refuses a pod being deleted, already bound or with
        scheduling gates (409), and sets `spec.nodeName`, the binding's annotations and PodScheduled=True. A
        `dry_run` checks all and writes nothing; a `typed` body (kjobs' own scheduler's, see `_decode_check`)
        skips the decoder's type check."""
        pods = lookup("", "v1", "pods")
        assert pods is not None
        if not isinstance(body, dict):
            raise bad_request('Binding in version "v1" cannot be handled as a Binding')
        # decoded into core/v1 Binding: a field of another JSON type does not decode (nor reach the pod)
        mistyped = None if typed else first_type_error(body, "Binding", group="")
        if mistyped is not None:
            raise bad_request(f'Binding in version "v1" cannot be handled as a Binding: {mistyped}')
        meta = body.get("metadata") or {}
        if meta.get("name", "") != name:
            raise bad_request("name in URL does not match name in Binding object")
        target = body.get("target") or {}
        problems = []
        if target.get("kind") not in (None, "", "Node"):
            problems.append(not_supported("target.kind", target["kind"], ("Node", "<empty>")))
        if not target.get("name"):
            problems.append(FieldError("target.name", ErrorType.FieldValueRequired))
        if problems:  # kube-apiserver: a plain aggregate, so 500; the client's error, so 422 here
            raise invalid("Binding", name, problems)
        pod = self._get_or_404(pods, namespace, name, shared=True)  # read-only: `new` is built beside it
        pod_meta = pod.get("metadata") or {}
        self._check_binding_preconditions(namespace, name, pod_meta, meta)

        def refused(why: str) -> ApiError:
            return ApiError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on pods/binding "{name}": {why}',
                details={"name": name, "kind": "pods/binding"},
            )

        if pod_meta.get("deletionTimestamp"):
            raise refused(f"pod {name} is being deleted, cannot be assigned to a host")
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            raise refused(f'pod {name} is already assigned to node "{node}"')
        if (pod.get("spec") or {}).get("schedulingGates"):
            raise refused(f"pod {name} has non-empty .spec.schedulingGates")
        status = pod.get("status") or {}
        conditions = list(status.get("conditions") or [])
        annotations = {**(pod_meta.get("annotations") or {}), **(meta.get("annotations") or {})}
        new = {
            **pod,
            "metadata": {**pod_meta, **({"annotations": annotations} if annotations else {})},
            "spec": {**(pod.get("spec") or {}), "nodeName": target["name"]},
            "status": {**status, "conditions": conditions},
        }
        # As setPodNodeAndMetadata: binding also sets PodScheduled=True, replacing an Unschedulable condition.
        scheduled: Obj = {"type": "PodScheduled", "status": "True", "lastProbeTime": None}
        index = None
        for at, condition in enumerate(conditions):  # a loop, not `next` of a generator (a frame a binding)
            if condition.get("type") == "PodScheduled":
                index = at
                break
        if index is None:
            conditions.append(dict(scheduled, lastTransitionTime=self.now()))
        else:
            kept = conditions[index].get("status") == "True" and conditions[index].get("lastTransitionTime")
            conditions[index] = dict(scheduled, lastTransitionTime=kept or self.now())
        if not dry_run:
            await self.store.update("pods", new, expected_rv=pod_meta.get("resourceVersion"))
        return Result({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}, 201)

    @staticmethod
    def _check_binding_preconditions(namespace: str, name: str, pod_meta: Obj, binding_meta: Obj) -> None:
        """The binding's uid and resourceVersion as `storage.Preconditions` on the pod: a mismatch is the storage
        layer's invalid-object error, which `InterpretUpdateError` makes a 409 Conflict on pods."""
        checks = (
            ("UID", binding_meta.get("uid"), pod_meta.get("uid", "")),
            ("ResourceVersion", binding_meta.get("resourceVersion"), pod_meta.get("resourceVersion", "")),
        )
        for what, want, have in checks:
            if want and want != have:
                raise ApiError(
                    409,
                    "Conflict",
                    f'Operation cannot be fulfilled on pods "{name}": StorageError: invalid object, Code: 4, '
                    f"Key: /registry/pods/{namespace}/{name}, ResourceVersion: 0, AdditionalErrorMsg: "
                    f"Precondition failed: {what} in precondition: {want}, {what} in object meta: {have}",
                    details={"name": name, "kind": "pods"},
                )

    async def evict(self, namespace: str, name: str, body: Any, *, dry_run: bool = False) -> Result:
        """POST pods/{name}/eviction: the disruption-budget check-and-decrement, then condition + delete.

        As the apiserver's EvictionREST: terminal, pending or already deleting pods go without a budget check;
        otherwise the one matching PodDisruptionBudget must allow a disruption (429 when not), which is used
        up and recorded in its `status.disruptedPods` before the pod gets `DisruptionTarget` and is deleted.
        A pending pod is deleted only at the version judged pending: when it changed meanwhile it is read and
        judged again (`canIgnorePDB`, `shouldEnforceResourceVersion`), so one that started running meets its
        budget; a resourceVersion the caller gave is not retried.
        """
        pods = lookup("", "v1", "pods")
        assert pods is not None
        if not isinstance(body, dict):
            raise bad_request('Eviction in version "v1" cannot be handled as an Eviction')
        _check_eviction_kind(body)
        # decoded into policy/v1 Eviction: a field of another JSON type does not decode
        mistyped = first_type_error(body, "Eviction", group="policy")
        if mistyped is not None:
            raise bad_request(f'Eviction in version "v1" cannot be handled as a Eviction: {mistyped}')
        # EvictionREST.Create (eviction.go) compares names before anything else: an Eviction without a name
        # matches no URL either
        if (body.get("metadata") or {}).get("name") != name:
            raise bad_request("name in URL does not match name in Eviction object")
        options = DeleteOptions.parse(body.get("deleteOptions"), {}, "Eviction.deleteOptions")
        dry_run = dry_run or options.dry_run
        success = Result({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}, 201)
        for attempt in range(_EVICTION_RETRIES):
            pod = self._get_or_404(pods, namespace, name)
            meta, phase = pod.get("metadata") or {}, (pod.get("status") or {}).get("phase")
            if not (phase in ("Succeeded", "Failed", "Pending") or meta.get("deletionTimestamp")):
                break  # the budget decides
            if dry_run:
                return success
            pinned = options
            if phase == "Pending" and not meta.get("deletionTimestamp") and options.precondition_rv is None:
                # shouldEnforceResourceVersion: a pending pod that turns ready meanwhile must face the budget
                pinned = dataclasses.replace(options, precondition_rv=meta.get("resourceVersion"))
            try:
                await self._mark_and_delete(pods, pod, pinned, pinned_by=None)
                return success
            except ApiError as exc:
                if exc.reason != "Conflict" or options.precondition_rv is not None or attempt + 1 == _EVICTION_RETRIES:
                    raise
        try:
            pinned_by = await self._use_disruption_budget(pod, dry_run=dry_run)
        except _MultipleBudgets:
            # eviction.go answers this with a Status object, not an error: the create handler writes it with
            # HTTP 201 (handlers/create.go keeps a Status' own code), so only a client that reads the Status'
            # `status` (client-go does) sees the failure
            failure = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
            return Result({**failure, "message": MULTIPLE_BUDGETS, "code": 500}, 201)
        if not dry_run:
            await self._mark_and_delete(pods, pod, options, pinned_by=pinned_by)
        return success

    async def _use_disruption_budget(self, pod: Obj, *, dry_run: bool) -> str | None:
        """Check (and, unless dry run, decrement) the pod's budget; the budget's name when the delete must pin
        the pod's resourceVersion (an unready pod let through without using the budget)."""
        from kjobs.api.selectors import label_selector_from_object

        namespace = pod["metadata"].get("namespace", "")
        matching = []
        for pdb in self.store.list("poddisruptionbudgets.policy", namespace)[0]:
            try:
                selector = label_selector_from_object((pdb.get("spec") or {}).get("selector"))
            except ApiError:
                continue  # an invalid selector matches nothing
            if selector.matches(pod):
                matching.append(pdb)
        if not matching:
            return None
        if len(matching) > 1:
            raise _MultipleBudgets
        pdb = matching[0]
        status = pdb.get("status") or {}
        if not _pod_ready(pod):
            policy = (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy")
            desired, healthy = int(status.get("desiredHealthy") or 0), int(status.get("currentHealthy") or 0)
            if policy == "AlwaysAllow" or (healthy >= desired > 0):
                return str(pdb["metadata"]["name"])  # an unready pod does not count towards the budget
        for _ in range(_PATCH_RETRIES):
            try:
                await self._check_and_decrement(pdb, pod["metadata"]["name"], dry_run=dry_run)
                return None
            except ApiError as exc:
                if exc.reason != "Conflict":
                    raise
            fresh = self.store.get("poddisruptionbudgets.policy", namespace, pdb["metadata"]["name"])
            if fresh is None:
                return None
            pdb = fresh
        raise ApiError(
            504,
            "Timeout",
            f'couldn\'t update PodDisruptionBudget "{pdb["metadata"]["name"]}" due to conflicts',
            details={"retryAfterSeconds": 10},
        )

    async def _check_and_decrement(self, pdb: Obj, pod_name: str, *, dry_run: bool) -> None:
        meta, status = pdb.get("metadata") or {}, dict(pdb.get("status") or {})
        name = str(meta.get("name", ""))
        allowed = int(status.get("disruptionsAllowed") or 0)
        if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
            raise _budget_busy(name, f"The disruption budget {name} is still being processed by the server.", 10)
        if allowed < 0:
            raise _pdb_forbidden(name, "pdb disruptions allowed is negative")
        if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
            raise _pdb_forbidden(name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller")
        if allowed == 0:
            raise _budget_busy(
                name,
                f"The disruption budget {name} needs {int(status.get('desiredHealthy') or 0)} healthy pods and has "
                f"{int(status.get('currentHealthy') or 0)} currently",
                0,
            )
        if dry_run:
            return
        status["disruptionsAllowed"] = allowed - 1
        if allowed - 1 == 0:
            conditions = [c for c in status.get("conditions") or [] if c.get("type") != "DisruptionAllowed"]
            old = next((c for c in status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None)
            changed = old is None or old.get("status") != "False"
            conditions.append(
                {
                    "type": "DisruptionAllowed",
                    "status": "False",
                    "reason": "InsufficientPods",
                    "message": "",
                    "observedGeneration": status.get("observedGeneration", 0),
                    "lastTransitionTime": self.now() if changed else old.get("lastTransitionTime"),  # type: ignore[union-attr]
                }
            )
            status["conditions"] = conditions
        status["disruptedPods"] = {**(status.get("disruptedPods") or {}), pod_name: self.now()}
        new = _copy(pdb)
        new["status"] = status
        await self.store.update("poddisruptionbudgets.policy", new, expected_rv=meta.get("resourceVersion"))

    async def _mark_and_delete(
        self, pods: Resource, pod: Obj, options: DeleteOptions, *, pinned_by: str | None
    ) -> None:
        """Add `DisruptionTarget` to the latest pod, then delete it with `options`.

        The condition goes on whatever the phase, terminal pods too, as `UpdatePodCondition` puts it (an unchanged
        status keeps its lastTransitionTime; an identical condition is not written again).

        As eviction.go's `addConditionAndDeletePod`: the condition is written with `GuaranteedUpdate` (`_guaranteed`),
        so a write another client lands between the read and the compare-and-swap (the node agent's status) makes
        it read again rather than fail; only the caller's preconditions (or, for a pod let through a budget
        unused, the version the budget was judged on: 429) end it with a conflict.
        """
        meta = pod.get("metadata") or {}
        name, namespace = str(meta.get("name", "")), str(meta.get("namespace", ""))
        pinned_here = bool(pinned_by) and options.precondition_rv is None
        if pinned_here:
            options = dataclasses.replace(options, precondition_rv=meta.get("resourceVersion"))

        def check(latest: Obj) -> None:
            latest_meta = latest.get("metadata") or {}
            uid, rv = latest_meta.get("uid"), latest_meta.get("resourceVersion")
            if options.precondition_uid and options.precondition_uid != uid:
                raise _precondition_conflict(
                    name,
                    f"the UID in the precondition ({options.precondition_uid}) does not match the UID in record "
                    f"({uid}). The object might have been deleted and then recreated",
                )
            if options.precondition_rv and options.precondition_rv != rv:
                if pinned_by:
                    raise _budget_busy(
                        pinned_by, f"The disruption budget {pinned_by} is still being processed by the server.", 10
                    )
                raise _precondition_conflict(
                    name,
                    f"the ResourceVersion in the precondition ({options.precondition_rv}) does not match the "
                    f"ResourceVersion in record ({rv}). The object might have been modified",
                )

        async def mark(latest: Obj) -> Obj:
            status = dict(latest.get("status") or {})
            if not update_pod_condition(status, disruption_target(EVICTION_BY_EVICTION_API), self.clock()):
                return latest  # already so: GuaranteedUpdate writes nothing
            new = _copy(latest)
            new["status"] = status
            new = zerotimes.fill(new, "", "Pod")  # the condition's zero `lastProbeTime`, null as Go writes it
            expected = (latest.get("metadata") or {}).get("resourceVersion")
            return await self.store.update("pods", new, expected_rv=expected)

        marked = await self._guaranteed(pods, namespace, name, mark, check=check)
        if options.precondition_rv:  # we made the newest version ourselves
            options = dataclasses.replace(options, precondition_rv=marked["metadata"].get("resourceVersion"))
        try:
            await self.delete(pods, namespace, name, options)
        except ApiError as exc:
            # Written again between the condition and the delete (a node's status): for the resourceVersion the
            # eviction pinned itself, the 429 to retry, as for a change before the condition (eviction.go's
            # `Create`: a conflict of addConditionAndDeletePod becomes createTooManyRequestsError)
            if pinned_by and pinned_here and exc.reason == "Conflict":
                raise _budget_busy(
                    pinned_by, f"The disruption budget {pinned_by} is still being processed by the server.", 10
                ) from exc
            raise

    def get_pod(self, namespace: str, name: str) -> Obj:
        """The pod a streaming subresource (pods/exec) acts on, or 404."""
        pods = lookup("", "v1", "pods")
        assert pods is not None
        return self._get_or_404(pods, namespace, name)

    def open_log(self, namespace: str, name: str, options: LogOptions) -> tuple[Obj, AsyncIterator[bytes]]:
        """GET pods/{name}/log: the pod and an async iterator of its log chunks."""
        pods = lookup("", "v1", "pods")
        assert pods is not None
        pod = self._get_or_404(pods, namespace, name)
        container = validate_container(pod, options.container)
        if container != options.container:
            options = dataclasses.replace(options, container=container)
        if not (pod.get("spec") or {}).get("nodeName"):
            return pod, _no_log()  # no kubelet to ask: `LogLocation` gives no location, the API server no stream
        return pod, self.logs.open(pod, options)


async def _no_log() -> AsyncIterator[bytes]:
    """The log of a pod no node runs yet: nothing."""
    return
    yield  # an async generator that ends at once


def _check_applied_type(r: Resource, config: Obj) -> None:
    """400 unless an apply configuration names the endpoint's own group, version and kind: the field manager
    checks this before anything else, whether the object exists or not (apimachinery `versionCheckManager`), so
    a configuration without `apiVersion` or `kind` is refused rather than merged."""
    api_version, kind = config.get("apiVersion"), config.get("kind")
    if api_version == r.api_version and kind == r.kind:
        return
    text = api_version if isinstance(api_version, str) else ""
    group_version = text if text.count("/") == 1 else f"/{text}" if "/" not in text else "/"  # ParseGroupVersion
    gvk = f"{group_version}, Kind={kind if isinstance(kind, str) else ''}"
    raise bad_request(f"invalid object type: {gvk}")


def _dollar_keys(value: Any, prefix: str) -> list[str]:
    """The paths of a configuration's `$`-keys (`$patch`, `$retainKeys`, ...), the first of each map: no
    Kubernetes type declares one as a field, so the field manager's typed object refuses them (a label key
    `$patch` is refused by validation instead, 422 there). kjobs merges an apply configuration into the object
    with its strategic merge, which would read them as directives (`$patch: true` was a 500)."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and key.startswith("$"):
                return [*found, f"{prefix}.{key}"]
            found += _dollar_keys(item, f"{prefix}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _dollar_keys(item, f"{prefix}[{i}]")
    return found


def _check_typed_patch(r: Resource, config: Obj, features: FeatureGates) -> None:
    """Refuse an apply configuration with a field the kind's schema does not declare, whatever the request's
    `fieldValidation`: the field manager makes a typed object of it before anything else is done with it, and
    that fails (apimachinery managedfields/internal/structuredmerge.go `Apply`: `failed to create typed patch
    object (NAMESPACE/NAME; GROUP/VERSION, Kind=KIND): .spec.backofLimit: field not declared in schema`). A
    plain error there makes kube-apiserver's answer a 500 without a reason (kubernetes/kubernetes#122480, open);
    the error is the client's, and kjobs answers bad input 4xx, so it is a 400 BadRequest with that message.
    A custom resource is typed by its CRD's structural schema (apiextensions-apiserver gives the field manager
    a converter made from it), with the same outcome."""
    crd_schema = getattr(r, "schema", None) if r.schema_name is None else None
    if isinstance(crd_schema, dict) and crd_schema:
        undeclared = schema.undeclared_custom_fields(config, crd_schema, features)
    else:
        undeclared = schema.undeclared_fields(config, r.schema_name, features)
    if not undeclared:  # kjobs has no schema of the kind (CustomResourceDefinition), or the schema of the place
        # takes any key (labels) or no map at all (a MicroTime): a `$`-key is still no field, and must not reach
        # the strategic merge below as a directive
        undeclared = [f"{path}: field not declared in schema" for path in _dollar_keys(config, "")]
    if not undeclared:
        return
    meta = _meta(config)
    where = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
    group_version = r.api_version if "/" in r.api_version else f"/{r.api_version}"
    errors = undeclared[0] if len(undeclared) == 1 else "\n  ".join(["errors:", *undeclared])
    raise bad_request(f"failed to create typed patch object ({where}; {group_version}, Kind={r.kind}): {errors}")


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return "null"


MAX_DISRUPTED_PODS = 2000
"""The apiserver refuses evictions while a budget has more unconfirmed disruptions than this."""


def _pod_ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _budget_busy(name: str, message: str, retry_after: int) -> ApiError:
    """The eviction API's 429 (with a `DisruptionBudget` cause; a Retry-After only when `retry_after`)."""
    details: Obj = {"causes": [{"reason": "DisruptionBudget", "message": message}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return ApiError(
        429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.", details=details
    )


def _precondition_conflict(name: str, why: str) -> ApiError:
    """The 409 eviction.go's `addConditionAndDeletePod` answers for a precondition the latest pod fails (it names
    the resource `Pod`, and says which precondition and what the pod has instead)."""
    return ApiError(
        409, "Conflict", f'Operation cannot be fulfilled on Pod "{name}": {why}', details={"name": name, "kind": "Pod"}
    )


def _pdb_forbidden(name: str, why: str) -> ApiError:
    return ApiError(
        403,
        "Forbidden",
        f'poddisruptionbudget.policy "{name}" is forbidden: {why}',
        details={"name": name, "group": "policy", "kind": "poddisruptionbudget"},
    )


def _dependents(items: Iterable[Obj], uid: str) -> list[Obj]:
    """The objects among `items` whose ownerReferences name `uid`."""
    return [
        item
        for item in items
        if any(ref.get("uid") == uid for ref in (item.get("metadata") or {}).get("ownerReferences") or [])
    ]


def _blocking(items: Iterable[Obj], uid: str) -> bool:
    """Whether an object among `items` names `uid` as an owner with `blockOwnerDeletion: true`."""
    return any(
        ref.get("uid") == uid and ref.get("blockOwnerDeletion") is True
        for item in items
        for ref in (item.get("metadata") or {}).get("ownerReferences") or []
    )


def _check_preconditions(r: Resource, name: str, obj: Obj, options: DeleteOptions) -> None:
    """The storage layer's `Preconditions.Check` on a read after the first (the object changed since
    `BeforeDelete` passed): its invalid-object error, which `InterpretUpdateError`/`InterpretDeleteError` make a
    409 Conflict (staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go, storage/errors.go)."""
    meta = obj.get("metadata") or {}
    for what, want, have in (
        ("UID", options.precondition_uid, meta.get("uid", "")),
        ("ResourceVersion", options.precondition_rv, meta.get("resourceVersion", "")),
    ):
        if want and want != have:
            namespace = meta.get("namespace")
            key = f"/registry/{r.plural}/{namespace}/{name}" if r.namespaced else f"/registry/{r.plural}/{name}"
            raise ApiError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {_qualified(r)} "{name}": StorageError: invalid object, Code: 4, '
                f"Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: "
                f"Precondition failed: {what} in precondition: {want}, {what} in object meta: {have}",
                details=_details(r, name),
            )


def _delete_preconditions(r: Resource, name: str, options: DeleteOptions) -> Callable[[Obj], None]:
    """A DELETE's preconditions on each read: `rest.BeforeDelete` checks the first read, naming the kind
    (staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go); a later read, after another writer won the
    compare-and-swap, fails with the storage layer's error (`_check_preconditions`)."""
    reads = 0

    def check(obj: Obj) -> None:
        nonlocal reads
        reads += 1
        if reads > 1:
            _check_preconditions(r, name, obj, options)
            return
        meta = obj.get("metadata") or {}
        uid, rv = meta.get("uid", ""), meta.get("resourceVersion", "")
        if options.precondition_uid and options.precondition_uid != uid:
            reason = (
                f"the UID in the precondition ({options.precondition_uid}) does not match the UID in record ({uid}). "
                "The object might have been deleted and then recreated"
            )
        elif options.precondition_rv and options.precondition_rv != rv:
            reason = (
                f"the ResourceVersion in the precondition ({options.precondition_rv}) does not match the "
                f"ResourceVersion in record ({rv}). The object might have been modified"
            )
        else:
            return
        # errors.NewConflict with the kind as the resource: `Pod "x"`, `Job.batch "x"`
        kind = f"{r.kind}.{r.group}" if r.group else r.kind
        details: Obj = {"name": name, "kind": r.kind}
        if r.group:
            details["group"] = r.group
        raise ApiError(409, "Conflict", f'Operation cannot be fulfilled on {kind} "{name}": {reason}', details=details)

    return check


def _details(r: Resource, name: str) -> Obj:
    details: Obj = {"name": name, "kind": r.plural}
    if r.group:
        details["group"] = r.group
    return details


def _qualified(r: Resource) -> str:
    return f"{r.plural}.{r.group}" if r.group else r.plural


_STATUS_WRITABLE_META = ("labels", "annotations", "finalizers", "ownerReferences")
_STATUS_RESET_META = {"pods": ("ownerReferences",)}
"""Metadata a status write carries: a status strategy's PrepareForUpdate resets the spec (and, for pods,
`ownerReferences`, pkg/registry/core/pod/strategy.go podStatusStrategy, as old kubelets corrupted them) and keeps
the rest of the new object, so `PATCH .../status` with labels or annotations sets them, as test/e2e/apps/job.go
"should apply changes to a job status" patches an annotation through /status
(pkg/registry/batch/job/strategy.go jobStatusStrategy)."""


def _status_write_metadata(r: Resource, merged: Obj, new: Obj) -> None:
    """Give `merged` (the stored object's metadata) the labels, annotations, finalizers and owner references of
    the status write's object `new`, except those the resource's status strategy resets."""
    reset = _STATUS_RESET_META.get(r.store_key, ())
    for key in _STATUS_WRITABLE_META:
        if key in reset:
            continue
        if new.get(key):
            merged[key] = new[key]
        else:
            merged.pop(key, None)


def _ephemeral_containers_write(old: Obj, new: Obj) -> Obj:
    """A write through `pods/{name}/ephemeralcontainers` changes only `spec.ephemeralContainers`: everything else,
    labels and annotations included, is the stored pod's (pkg/registry/core/pod/strategy.go
    `dropNonEphemeralContainerUpdates`, whose ResetObjectMetaForStatus resets the metadata a write may change)."""
    merged = _copy(old)
    spec = merged.setdefault("spec", {})
    new_spec = new.get("spec")
    containers = new_spec.get("ephemeralContainers") if isinstance(new_spec, dict) else None
    if containers is None:
        spec.pop("ephemeralContainers", None)
    else:
        spec["ephemeralContainers"] = containers
    return merged


def _keep_qos_class(merged: Obj, old: Obj) -> None:
    """A Pod status write without `qosClass` keeps the stored one: it is set once, on create, and old kubelets
    dropped it (pkg/registry/core/pod/strategy.go podStatusStrategy.PrepareForUpdate)."""
    status, old_status = merged.get("status"), old.get("status")
    if type(old_status) is not dict or not old_status.get("qosClass"):
        return
    if status is None:
        merged["status"] = {"qosClass": old_status["qosClass"]}
    elif type(status) is dict and not status.get("qosClass"):
        merged["status"] = {**status, "qosClass": old_status["qosClass"]}


_RETURNS_DELETED = frozenset({"Service"})
"""Kinds whose registry answers a DELETE with the deleted object rather than a Status (`ReturnDeletedObject`,
pkg/registry/core/service/storage/storage.go), as their clients' generated code expects (the Python client's
`delete_namespaced_service` decodes a `V1Service`); pods too (`graceful`)."""


def _pod_deletion_grace(pod: Obj, options: DeleteOptions) -> tuple[int | None, int | None]:
    """A pod DELETE's grace period (None: a pending graceful deletion this one does not shorten) and the one it
    is being deleted with already, as `rest.BeforeDelete` with the pod strategy's `CheckGracefulDelete` reckon
    them: a negative grace counts as 1 s, an unscheduled or finished pod goes at once."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    grace = options.grace_period
    if grace is not None and grace < 0:
        grace = 1
    current = meta.get("deletionGracePeriodSeconds")
    if current is not None and current < 0:
        current = 1
    if meta.get("deletionTimestamp"):
        if not current:
            grace = 0  # BeforeDelete: not graceful, deleted now unless finalizers hold it
        elif grace is None or grace >= current:
            return None, current
    else:
        if grace is None:
            grace = spec.get("terminationGracePeriodSeconds")
        if grace is None:
            grace = 30
        if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            grace = 0
        if grace < 0:  # the pod's own negative terminationGracePeriodSeconds too (CheckGracefulDelete)
            grace = 1
    return grace, current


def _success_status(r: Resource, name: str, gone: Obj) -> Obj:
    if r.graceful or r.kind in _RETURNS_DELETED:
        return gone
    details: Obj = {"name": name, "kind": r.plural, "uid": (gone.get("metadata") or {}).get("uid", "")}
    if r.group:
        details["group"] = r.group
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


def _template_labelled(job: Obj) -> bool:
    """Whether a Job's request sets its pod template's labels (`{}` included), which its defaulting copies."""
    template = (job.get("spec") or {}).get("template") if type(job.get("spec")) is dict else None
    template_meta = template.get("metadata") if type(template) is dict else None
    return type(template_meta) is dict and type(template_meta.get("labels")) is dict


def _core_job_prepare() -> Any:
    return core_hook("kjobs.api.defaults", "prepare_job_for_create")


def _propagation_from_finalizers(finalizers: Any) -> str | None:
    """A DELETE without a policy: the object's own `orphan`/`foregroundDeletion` finalizer overrides the
    resource's default (`shouldOrphanDependents`/`shouldDeleteDependents`,
    staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go)."""
    for f in finalizers or []:
        if f == "orphan":
            return "Orphan"
        if f == "foregroundDeletion":
            return "Foreground"
    return None


def _terminating_namespace(ns: Obj, options: DeleteOptions, now: str) -> Obj:
    """A namespace as its first DELETE leaves it (pkg/registry/core/namespace/storage/storage.go `Delete`):
    deletionTimestamp, phase Terminating, and `metadata.finalizers` holding `orphan` when the DELETE asks for
    Orphan (or `orphanDependents: true`) and `foregroundDeletion` when it asks for Foreground (or
    `orphanDependents: false`), the other dropped; a DELETE without a policy keeps the ones the namespace has
    (`shouldHaveOrphanFinalizer`, `shouldHaveDeleteDependentsFinalizer`). Kubernetes rebuilds the list from a
    map (any order); here the namespace's own come first, in their order. The contents are deleted in the
    background whatever the policy: the policy is about the namespace's own dependents (objects whose
    ownerReferences name it), which the garbage collector orphans or deletes before removing its finalizer."""
    new = _copy(ns)
    meta = _meta(new)
    if not meta.get("deletionTimestamp"):
        meta["deletionTimestamp"] = now
        meta["deletionGracePeriodSeconds"] = 0
    new["status"] = {**(new.get("status") or {}), "phase": "Terminating"}
    have = [str(f) for f in meta.get("finalizers") or []]
    policy = options.propagation  # `orphanDependents` was turned into Orphan/Background by `DeleteOptions.parse`
    if options.orphan_dependents is False:
        policy = "Foreground"  # the namespace registry reads `orphanDependents: false` as foreground
    if policy is None:
        return new
    wanted = {"orphan": policy == "Orphan", "foregroundDeletion": policy == "Foreground"}
    kept = [f for f in have if wanted.get(f, True)]
    kept += [f for f, on in wanted.items() if on and f not in kept]
    if kept != have:
        if kept:
            meta["finalizers"] = kept
        else:
            meta.pop("finalizers", None)
    return new


def _gc_finalizers_kept(finalizers: Any, propagation: str) -> list[str] | None:
    """The finalizers after a Background or Orphan DELETE, or None when they stay as they are
    (`deletionFinalizersForGarbageCollection`, store.go): both GC finalizers are taken out, and Orphan appends
    `orphan` (TestDoubleDeletionWithFinalizer, TestStoreDeleteWithOrphanDependents); unchanged when the set is
    the same. None at once for no finalizers and no Orphan: every pod GC delete's case."""
    if not finalizers and propagation != "Orphan":
        return None
    names = [str(f) for f in finalizers or []]
    kept = [f for f in names if f not in ("orphan", "foregroundDeletion")]
    if propagation == "Orphan":
        kept.append("orphan")
    return None if set(kept) == set(names) else kept


def _graceful_pending(meta: Obj, grace: int | None) -> bool:
    """`rest.BeforeDelete`'s gracefulPending: the pod is being deleted with a grace period this DELETE does
    not shorten (staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go)."""
    current = meta.get("deletionGracePeriodSeconds")
    if not meta.get("deletionTimestamp") or not current:
        return False
    if current < 0:
        current = 1  # a stored negative grace counts as 1s, as a requested one does
    if grace is not None and grace < 0:
        grace = 1
    return grace is None or grace >= current


EVICTION_VERSIONS = ("policy/v1", "policy/v1beta1")
"""The versions of Eviction kube-apiserver's scheme knows (pkg/apis/policy/install): the body of
`pods/eviction` may be either, or name no version at all (then it is read as policy/v1)."""


MULTIPLE_BUDGETS = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


class _MultipleBudgets(Exception):
    """The pod to evict matches more than one PodDisruptionBudget (eviction.go's `len(pdbs) > 1`)."""


def _check_eviction_kind(body: Obj) -> None:
    """Refuse an Eviction of a version or kind the scheme does not know, as the create handler's decoder does
    (apiserver handlers/create.go `transformDecodeError` around the scheme's not-registered error)."""
    api_version, kind = body.get("apiVersion") or "policy/v1", body.get("kind") or "Eviction"
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return  # a mistyped field: the Go-type check answers it
    if api_version in EVICTION_VERSIONS and kind == "Eviction":
        return
    version = api_version.rpartition("/")[2]
    raise bad_request(
        f'{kind} in version "{version}" cannot be handled as a Eviction: no kind "{kind}" is registered for '
        f'version "{api_version}" in scheme "pkg/api/legacyscheme/scheme.go:30"'
    )
