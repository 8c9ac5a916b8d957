"""Mutating admission the API server applies to writes before validation.

Only the plugins whose effect a user sees in kjobs are here. ServiceAccount
(plugin/pkg/admission/serviceaccount/admission.go), on create only: a pod without `spec.serviceAccountName` runs as
the namespace's `default` ServiceAccount (what `fieldRef: spec.serviceAccountName` and `kubectl describe pod` show),
and, where `AdmissionSettings.service_account_lookup` is on, the account a pod names must exist
(`service_account_refusal`, `mirror_pod_refusal`); its token volume (`kube-api-access-*`) is added by
`ApiService._mount_token` (`kjobs.api.token_requests`, docs/service-account-tokens.md). Its imagePullSecrets
merging and its mountable-secrets enforcement are not done: kjobs pulls no images. With it, the v1 conversion's
mirror of the name in the deprecated `spec.serviceAccount` (pkg/apis/core/v1/conversion.go: the old field is read
when the new one is empty, and always written). And DefaultTolerationSeconds
(plugin/pkg/admission/defaulttolerationseconds/admission.go). It gives every pod that does not already
tolerate the `node.kubernetes.io/not-ready` and `node.kubernetes.io/unreachable` NoExecute taints an
`Exists` toleration for each, bounded by `tolerationSeconds` (300 unless kube-apiserver's
`--default-not-ready-toleration-seconds` / `--default-unreachable-toleration-seconds` say otherwise), so a
pod outlives a short node outage instead of being evicted by the taint-eviction controller at once.
And Priority (plugin/pkg/admission/priority/admission.go): a created pod's `spec.priority` and
`spec.preemptionPolicy` come from its PriorityClass, or from the global default class (whose name it then
takes), or are 0 and PreemptLowerPriority; a class that does not exist, or a priority or policy in the pod that
differs from the class's, is refused (403). A PriorityClass may not be marked `globalDefault` while another
one is. `--disable-admission-plugins=Priority` (`AdmissionSettings.disabled_plugins`) turns it off, as
Kubernetes' scheduler integration tests do to give pods a bare `spec.priority`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kjobs.api.errors import forbidden
from kjobs.api.taints import NO_EXECUTE, TAINT_NOT_READY, TAINT_UNREACHABLE
from kjobs.api.types import Obj

DEFAULT_TOLERATION_SECONDS = 300
"""kube-apiserver's default for both `--default-*-toleration-seconds` flags."""


@dataclass(frozen=True)
class AdmissionSettings:
    """The kube-apiserver flags that configure admission (names as the flags, without the dashes)."""

    default_not_ready_toleration_seconds: int = DEFAULT_TOLERATION_SECONDS
    default_unreachable_toleration_seconds: int = DEFAULT_TOLERATION_SECONDS
    disabled_plugins: frozenset[str] = field(default_factory=frozenset)
    """`--disable-admission-plugins` (`admission_plugins`): of kjobs' plugins, ServiceAccount,
    DefaultTolerationSeconds and Priority can be turned off."""
    service_account_lookup: bool = False
    """Whether the ServiceAccount plugin refuses a pod whose account does not exist (kube-apiserver always does).
    On in the clusters kjobs assembles (`kjobs up`, `kjobs run`, `kjobs simulate`, the pytest plugin), where a
    ServiceAccounts controller makes every namespace's `default`; off for a bare `ApiService`, as unit tests
    build one, which has no controller-manager beside it to make any."""

    def enabled(self, plugin: str) -> bool:
        return plugin not in self.disabled_plugins


PRIORITY = "Priority"
SERVICE_ACCOUNT = "ServiceAccount"
DEFAULT_TOLERATION_SECONDS_PLUGIN = "DefaultTolerationSeconds"
NAMESPACE_LIFECYCLE = "NamespaceLifecycle"
LIMIT_RANGER = "LimitRanger"
RESOURCE_QUOTA = "ResourceQuota"

ALL_PLUGINS = (
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    NAMESPACE_LIFECYCLE,
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    LIMIT_RANGER,
    SERVICE_ACCOUNT,
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    PRIORITY,
    DEFAULT_TOLERATION_SECONDS_PLUGIN,
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    RESOURCE_QUOTA,
    "AlwaysDeny",
)
"""kube-apiserver v1.32's registered admission plugins, in its order (pkg/kubeapiserver/options/plugins.go
`AllOrderedPlugins`): the names `--enable-admission-plugins` and `--disable-admission-plugins` accept."""

DEFAULT_ON_PLUGINS = frozenset(
    {
        NAMESPACE_LIFECYCLE,
        LIMIT_RANGER,
        SERVICE_ACCOUNT,
        "DefaultStorageClass",
        "PersistentVolumeClaimResize",
        DEFAULT_TOLERATION_SECONDS_PLUGIN,
        "MutatingAdmissionWebhook",
        "ValidatingAdmissionWebhook",
        RESOURCE_QUOTA,
        "StorageObjectInUseProtection",
        PRIORITY,
        "TaintNodesByCondition",
        "RuntimeClass",
        "CertificateApproval",
        "CertificateSigning",
        "ClusterTrustBundleAttest",
        "CertificateSubjectRestriction",
        "DefaultIngressClass",
        "PodSecurity",
        "MutatingAdmissionPolicy",
        "ValidatingAdmissionPolicy",
    }
)
"""The plugins kube-apiserver runs unless disabled (`DefaultOffAdmissionPlugins`' complement). Of these kjobs
does NamespaceLifecycle, ServiceAccount, DefaultTolerationSeconds, Priority, LimitRanger and ResourceQuota
(`kjobs.server.quota`: LimitRanger for pods only), PodSecurity (`kjobs.server.podsecurity`) and the storage ones;
the others act on objects kjobs does not serve (RuntimeClasses, webhook and policy configurations,
CertificateSigningRequests, IngressClasses), so turning them off changes nothing here."""

TOGGLED_PLUGINS = frozenset(
    {SERVICE_ACCOUNT, DEFAULT_TOLERATION_SECONDS_PLUGIN, PRIORITY, LIMIT_RANGER, RESOURCE_QUOTA, "PodSecurity"}
)
"""The plugins kjobs does that `--disable-admission-plugins` turns off."""


def admission_plugins(enable: Iterable[str], disable: Iterable[str]) -> tuple[frozenset[str], list[str]]:
    """The plugins kjobs leaves off for kube-apiserver's `--enable-admission-plugins` and
    `--disable-admission-plugins` (comma-separated lists, each item trimmed), and the errors that stop the start.

    Unknown names and names in both lists are refused with `AdmissionOptions.Validate`'s words
    (staging/src/k8s.io/apiserver/pkg/server/options/admission.go). kjobs refuses further, naming kjobs: enabling
    a default-off plugin (kjobs does none of them, and running without one asked for would mislead), and
    disabling NamespaceLifecycle (kjobs' namespace deletion empties a namespace once, relying on nothing new being
    created in it after)."""
    enabled = [name for name in enable if name]
    disabled = [name for name in disable if name]
    registered = set(ALL_PLUGINS)
    errors = [f'enable-admission-plugins plugin "{name}" is unknown' for name in enabled if name not in registered]
    errors += [f'disable-admission-plugins plugin "{name}" is unknown' for name in disabled if name not in registered]
    both = sorted(set(enabled) & set(disabled))
    if both:
        errors.append(f"[{' '.join(both)}] in enable-admission-plugins and disable-admission-plugins overlapped")
    for name in enabled:
        if name in registered and name not in DEFAULT_ON_PLUGINS:
            errors.append(f'enable-admission-plugins plugin "{name}" is not implemented by kjobs')
    if NAMESPACE_LIFECYCLE in disabled:
        errors.append(f'disable-admission-plugins plugin "{NAMESPACE_LIFECYCLE}" cannot be turned off in kjobs')
    return frozenset(name for name in disabled if name in registered and name not in enabled), errors


DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS = 0
"""pkg/apis/scheduling/types.go `DefaultPriorityWhenNoDefaultClassExists`."""
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"


def _uncovered(tolerations: list[Obj]) -> tuple[bool, bool]:
    """Whether no toleration covers not-ready's key, and whether none covers unreachable's, read in one pass
    (every create and update of a pod asks, and nearly every one has both already). A toleration covers a key
    when it has that key or none, and NoExecute or no effect; the plugin does not look at its operator, value or
    tolerationSeconds."""
    not_ready = unreachable = True
    for toleration in tolerations:
        if isinstance(toleration, dict) and (toleration.get("effect") or "") in ("", NO_EXECUTE):
            key = toleration.get("key") or ""
            if key in ("", TAINT_NOT_READY):
                not_ready = False
            if key in ("", TAINT_UNREACHABLE):
                unreachable = False
    return not_ready, unreachable


def _default_toleration(key: str, seconds: int) -> Obj:
    return {"key": key, "operator": "Exists", "effect": NO_EXECUTE, "tolerationSeconds": seconds}


def default_tolerations(tolerations: list[Obj], settings: AdmissionSettings) -> list[Obj]:
    """A pod's `spec.tolerations` after DefaultTolerationSeconds: the given ones, then not-ready's and
    unreachable's (in that order) for the keys none of them covers."""
    return _with_default_tolerations(tolerations, *_uncovered(tolerations), settings)


def _with_default_tolerations(
    tolerations: list[Obj], not_ready: bool, unreachable: bool, settings: AdmissionSettings
) -> list[Obj]:
    """`default_tolerations` once `_uncovered` has been read."""
    result = list(tolerations)
    if not_ready:
        result.append(_default_toleration(TAINT_NOT_READY, settings.default_not_ready_toleration_seconds))
    if unreachable:
        result.append(_default_toleration(TAINT_UNREACHABLE, settings.default_unreachable_toleration_seconds))
    return result


DEFAULT_SERVICE_ACCOUNT = "default"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


def service_account(spec: Obj, *, create: bool, mirror: bool) -> str | None:
    """The pod's `serviceAccountName` after conversion and the ServiceAccount plugin (None: leave it as it is)."""
    name = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if not name and create and not mirror:
        name = DEFAULT_SERVICE_ACCOUNT
    return name if isinstance(name, str) and name else None


SERVICE_ACCOUNT_LOOKUP_ATTEMPTS = 10
"""`getServiceAccount`: a `default` account missing from the cache is looked up this many times (the controller
is expected to make it); any other name once."""
SERVICE_ACCOUNT_RETRY_INTERVAL = (0.1, 0.2)
"""The seconds between those lookups: `rand.Int63n(100)+100` milliseconds, drawn once per admission."""


def service_account_refusal(namespace: str, account: str) -> str:
    """Why a pod naming a missing account is refused (`Admit`: `error looking up service account %s/%s: %v` of
    the `NotFound` error `getServiceAccount` returns, on resource `serviceaccount`)."""
    return f'error looking up service account {namespace}/{account}: serviceaccount "{account}" not found'


_SECRET_REF_VOLUMES = ("azureFile", "cephfs", "cinder", "flexVolume", "iscsi", "rbd", "scaleIO", "storageos")
"""Volume sources naming a Secret (pkg/api/pod/util.go `VisitPodSecretNames`): `secretName` (azureFile) or
`secretRef.name` (the others); `csi.nodePublishSecretRef.name`, `secret.secretName` and projected secrets too."""


def _references_secrets(spec: Obj) -> bool:
    """`VisitPodSecretNames` over every container kind: does the pod name any Secret?"""
    if any(isinstance(ref, dict) and ref.get("name") for ref in spec.get("imagePullSecrets") or ()):
        return True
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(kind) or ():
            if not isinstance(container, dict):
                continue
            for source in container.get("envFrom") or ():
                if isinstance(source, dict) and isinstance(source.get("secretRef"), dict):
                    return True
            for env in container.get("env") or ():
                value_from = env.get("valueFrom") if isinstance(env, dict) else None
                if isinstance(value_from, dict) and isinstance(value_from.get("secretKeyRef"), dict):
                    return True
    for volume in spec.get("volumes") or ():
        if not isinstance(volume, dict):
            continue
        if isinstance(volume.get("secret"), dict):
            return True
        azure = volume.get("azureFile")
        if isinstance(azure, dict) and azure.get("secretName"):
            return True
        for kind in _SECRET_REF_VOLUMES[1:]:
            source = volume.get(kind)
            if isinstance(source, dict) and isinstance(source.get("secretRef"), dict):
                return True
        csi = volume.get("csi")
        if isinstance(csi, dict) and isinstance(csi.get("nodePublishSecretRef"), dict):
            return True
        for projection in _projections(volume):
            if isinstance(projection.get("secret"), dict):
                return True
    return False


def _projections(volume: Obj) -> list[Obj]:
    projected = volume.get("projected")
    sources = projected.get("sources") if isinstance(projected, dict) else None
    return [s for s in sources or () if isinstance(s, dict)]


def mirror_pod_refusal(spec: Obj) -> str | None:
    """The plugin's `Validate` of a mirror pod (which it never mutates): no account, no Secret, no token
    projection; the refusal's message, or None."""
    if spec.get("serviceAccountName") or spec.get("serviceAccount"):
        return "a mirror pod may not reference service accounts"
    if _references_secrets(spec):
        return "a mirror pod may not reference secrets"
    for volume in spec.get("volumes") or ():
        if isinstance(volume, dict) and any("serviceAccountToken" in p for p in _projections(volume)):
            return "a mirror pod may not use ServiceAccountToken volume projections"
    return None


def admit_pod(pod: Obj, settings: AdmissionSettings, *, create: bool = True) -> Obj:
    """The pod with its ServiceAccount and the default tolerations (for a create or update of the pod itself,
    never a subresource).

    Copy on write: `spec` is replaced, not changed, so a pod that shares parts with a stored object can be
    passed. Malformed tolerations are left for validation to report."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return pod
    changes: Obj = {}
    mirror = MIRROR_POD_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {})
    disabled = settings.disabled_plugins  # `enabled`, read inline: every create and update of a pod asks
    defaulted_account = create and SERVICE_ACCOUNT not in disabled  # the conversion's mirroring stays
    account = service_account(spec, create=defaulted_account, mirror=mirror)
    if account is not None and (spec.get("serviceAccountName"), spec.get("serviceAccount")) != (account, account):
        changes["serviceAccountName"] = changes["serviceAccount"] = account
    tolerations = spec.get("tolerations")
    if tolerations is None:
        tolerations = []
    if isinstance(tolerations, list) and DEFAULT_TOLERATION_SECONDS_PLUGIN not in disabled:
        not_ready, unreachable = _uncovered(tolerations)
        if not_ready or unreachable:
            changes["tolerations"] = _with_default_tolerations(tolerations, not_ready, unreachable, settings)
    if not changes:
        return pod
    return {**pod, "spec": {**spec, **changes}}


# ------------------------------------------------------------------------------------------------ Priority


def default_priority_class(classes: Iterable[Obj]) -> Obj | None:
    """`getDefaultPriorityClass`: the `globalDefault` class; if a race left several, the lowest-valued one."""
    found: Obj | None = None
    for pc in classes:
        if pc.get("globalDefault") is True and (found is None or _value(pc) < _value(found)):
            found = pc
    return found


def admit_pod_priority(
    pod: Obj, old: Obj | None, classes: Iterable[Obj], *, generated: bool = False, owned: bool = False
) -> Obj:
    """The pod after the Priority plugin's `admitPod` (`old`: the stored pod of an update).

    On create the pod gets its class's value and preemption policy (no class named: the global default class,
    whose name it takes, else 0 and PreemptLowerPriority); a pod that names a missing class, or carries a
    priority or policy other than the computed one, is refused with 403 Forbidden, naming the pod as
    `admission.NewForbidden` does before a name is generated (`generated`: the name came from `generateName`,
    which is named instead). On update the stored priority and policy are kept when the new object leaves them
    out. Copy on write, as `admit_pod`, but for a create whose pod and spec are the caller's own copies (`owned`:
    made by the plugins before this one), which get the fields in place (the same keys in the same order)."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return pod
    changes: Obj = {}
    if old is not None:
        stored = old.get("spec")
        old_spec: Obj = stored if isinstance(stored, dict) else {}
        for key in ("priority", "preemptionPolicy"):
            if spec.get(key) is None and old_spec.get(key) is not None:
                changes[key] = old_spec[key]
        return {**pod, "spec": {**spec, **changes}} if changes else pod
    class_name = spec.get("priorityClassName")
    policy: object = PREEMPT_LOWER_PRIORITY
    if not class_name:
        pc = default_priority_class(classes)
        priority = DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS
        if pc is not None:
            changes["priorityClassName"] = (pc.get("metadata") or {}).get("name")
            priority, policy = _value(pc), pc.get("preemptionPolicy")
    else:
        pc = next((c for c in classes if (c.get("metadata") or {}).get("name") == class_name), None)
        if pc is None:
            raise forbidden("pods", _pod_name(pod, generated), f"no PriorityClass with name {class_name} was found")
        priority, policy = _value(pc), pc.get("preemptionPolicy")
    given = spec.get("priority")
    if given is not None and given != priority:
        raise forbidden(
            "pods",
            _pod_name(pod, generated),
            f"the integer value of priority ({given}) must not be provided in pod spec; priority admission "
            f"controller computed {priority} from the given PriorityClass name",
        )
    changes["priority"] = priority
    if policy is not None:
        given_policy = spec.get("preemptionPolicy")
        if given_policy is not None and given_policy != policy:
            raise forbidden(
                "pods",
                _pod_name(pod, generated),
                f"the string value of PreemptionPolicy ({given_policy}) must not be provided in pod spec; priority "
                f"admission controller computed {policy} from the given PriorityClass name",
            )
        changes["preemptionPolicy"] = policy
    if owned:
        spec.update(changes)
        return pod
    return {**pod, "spec": {**spec, **changes}}


def check_priority_class(pc: Obj, classes: Iterable[Obj], *, create: bool) -> None:
    """The Priority plugin's `validatePriorityClass`: a class may be marked `globalDefault` only while no other
    is (an update of the default class itself passes); 403 Forbidden otherwise."""
    if pc.get("globalDefault") is not True:
        return
    current = default_priority_class(classes)
    if current is None:
        return
    name = str((pc.get("metadata") or {}).get("name") or "")
    current_name = str((current.get("metadata") or {}).get("name") or "")
    if create or current_name != name:
        raise forbidden(
            "priorityclasses",
            name,
            f"PriorityClass {current_name} is already marked as default. Only one default can exist",
            group="scheduling.k8s.io",
        )


def _pod_name(pod: Obj, generated: bool) -> str:
    """`name_for_errors` of a pod: read only for a refusal."""
    return name_for_errors(pod.get("metadata") or {}, generated)


def name_for_errors(meta: Obj, generated: bool) -> str:
    """staging/src/k8s.io/apiserver/pkg/admission/errors.go `extractResourceName`: admission runs before a name
    is generated, so a refusal names `generateName`, or `Unknown` when the pod has neither."""
    name = "" if generated else meta.get("name")
    return str(name or meta.get("generateName") or "Unknown")


def _value(pc: Obj) -> int:
    value = pc.get("value")
    return value if type(value) is int else 0


# ------------------------------------------------------------------------------------------------ storage

DEFAULT_STORAGE_CLASS = "DefaultStorageClass"
STORAGE_OBJECT_IN_USE_PROTECTION = "StorageObjectInUseProtection"
PERSISTENT_VOLUME_CLAIM_RESIZE = "PersistentVolumeClaimResize"


def default_storage_class(classes: Iterable[Obj]) -> Obj | None:
    """`GetDefaultClass` (pkg/volume/util/storageclass.go): of the classes annotated default, the newest
    (then the first by name, as upstream sorts equal times by name); None when there is none."""
    from kjobs.api.storage import is_default_class

    defaults = [sc for sc in classes if is_default_class(sc)]
    if not defaults:
        return None
    defaults.sort(key=lambda sc: str((sc.get("metadata") or {}).get("name") or ""))
    defaults.sort(key=lambda sc: str((sc.get("metadata") or {}).get("creationTimestamp") or ""), reverse=True)
    return defaults[0]


def admit_claim(pvc: Obj, classes: Iterable[Obj], settings: AdmissionSettings) -> Obj:
    """A created claim after DefaultStorageClass (plugin/pkg/admission/storage/storageclass/setdefault: a claim
    that names no class, neither in `spec.storageClassName` nor in the beta annotation, gets the default class's
    name) and StorageObjectInUseProtection (plugin/pkg/admission/storage/storageobjectinuseprotection: the
    `kubernetes.io/pvc-protection` finalizer)."""
    from kjobs.api.storage import BETA_STORAGE_CLASS_ANNOTATION, PVC_PROTECTION_FINALIZER

    spec = pvc.get("spec")
    meta = pvc.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    if (
        settings.enabled(DEFAULT_STORAGE_CLASS)
        and isinstance(spec, dict)
        and spec.get("storageClassName") is None
        and BETA_STORAGE_CLASS_ANNOTATION not in annotations
    ):
        default = default_storage_class(classes)
        if default is not None:
            pvc = {**pvc, "spec": {**spec, "storageClassName": (default.get("metadata") or {}).get("name")}}
    if settings.enabled(STORAGE_OBJECT_IN_USE_PROTECTION):
        pvc = with_finalizer(pvc, PVC_PROTECTION_FINALIZER)
    return pvc


def admit_volume(pv: Obj, settings: AdmissionSettings) -> Obj:
    """A created PersistentVolume after StorageObjectInUseProtection: the `kubernetes.io/pv-protection`
    finalizer."""
    from kjobs.api.storage import PV_PROTECTION_FINALIZER

    if not settings.enabled(STORAGE_OBJECT_IN_USE_PROTECTION):
        return pv
    return with_finalizer(pv, PV_PROTECTION_FINALIZER)


def with_finalizer(obj: Obj, finalizer: str) -> Obj:
    """`obj` with `finalizer` appended to `metadata.finalizers` unless there already."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return obj
    finalizers = meta.get("finalizers")
    current = list(finalizers) if isinstance(finalizers, list) else []
    if finalizer in current:
        return obj
    return {**obj, "metadata": {**meta, "finalizers": [*current, finalizer]}}


def claim_resize_refusal(pvc: Obj, old: Obj, classes: Iterable[Obj]) -> str | None:
    """PersistentVolumeClaimResize (plugin/pkg/admission/storage/persistentvolume/resize): a claim's storage
    request may grow only once it is Bound, and only when its class allows volume expansion; the refusal's
    text, or None."""
    from kjobs.api.storage import storage_of

    def size(claim: Obj) -> Any:
        spec = claim.get("spec") if isinstance(claim.get("spec"), dict) else {}
        resources = spec.get("resources") if isinstance(spec, dict) else None
        quantity = storage_of(resources.get("requests") if isinstance(resources, dict) else None)
        return quantity.value if quantity is not None else 0

    if size(pvc) <= size(old):
        return None
    if (old.get("status") or {}).get("phase") != "Bound":
        return "Only bound persistent volume claims can be expanded"
    name = ((old.get("spec") or {}).get("storageClassName")) or ""
    for sc in classes:
        if (sc.get("metadata") or {}).get("name") == name and name and sc.get("allowVolumeExpansion") is True:
            return None
    return (
        "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support "
        "resize"
    )
