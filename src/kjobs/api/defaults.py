"""Defaulting and registry preparation for Jobs, CronJobs and Pods, as the Kubernetes API server applies them.

Owns what a manifest gains between the request body and validation: batch/v1 Job and CronJob defaults
(`pkg/apis/batch/v1/defaults.go`), core/v1 pod-spec defaults (`pkg/apis/core/v1/defaults.go`:
policies, grace period, scheduler, container pull policy and termination message, port protocol, probe timings,
volume source and modes, quantities rounded to milli precision), the Pod-only defaults plus the priority the
Priority admission plugin sets, and the Job registry strategy's `PrepareForCreate` (cleared status, generation 1,
generated selector and labels). Every function returns a new object and leaves its argument untouched; fields of
the wrong type are left as they are for validation to report.
"""

from __future__ import annotations

import contextlib
from typing import Any

import orjson

from kjobs.api import names
from kjobs.api.quantity import QuantityError, canonical
from kjobs.api.types import Obj
from kjobs.api.validation_meta import semantic_equal
from kjobs.memo import Memo

DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30
DEFAULT_SCHEDULER_NAME = "default-scheduler"
TERMINATION_MESSAGE_PATH = "/dev/termination-log"
_DEFAULT_MODE = 0o644

_VOLUME_SOURCE_KEYS = (
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
)


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (orjson round trip; a structural copy for what orjson cannot encode)."""
    try:
        return orjson.loads(orjson.dumps(value))
    except TypeError:
        return _copy(value)


def _copy(value: Any) -> Any:
    """Structural copy of dicts and lists without recursion (any nesting depth)."""
    if type(value) is not dict and type(value) is not list:
        return value
    root: Any = {} if type(value) is dict else []
    stack = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if type(source) is dict else enumerate(source)
        for key, item in items:
            if type(item) is dict or type(item) is list:
                child: Any = {} if type(item) is dict else []
                stack.append((item, child))
            else:
                child = item
            if type(target) is dict:
                target[key] = child
            else:
                target.append(child)
    return root


def _dict(parent: Obj, key: str, *, create: bool = False) -> Obj | None:
    """The object under `key` (created empty when asked and absent); None when absent or of another type."""
    value = parent.get(key)
    if value is None and create:
        value = parent[key] = {}
    return value if type(value) is dict else None


def _dicts(parent: Obj, key: str) -> list[Obj]:
    value = parent.get(key)
    if type(value) is not list:
        return []
    return [item for item in value if type(item) is dict]


def _set_default(obj: Obj, key: str, value: Any) -> None:
    """Set `key` when it is absent, null or the empty string (Go's zero value for the field)."""
    if obj.get(key) is None or obj.get(key) == "":
        obj[key] = value


def _pull_policy(image: Any) -> str:
    """Always for `:latest` (or no tag and no digest), else IfNotPresent; unparsable images get IfNotPresent."""
    if type(image) is not str or not image or any(c.isspace() for c in image):
        return "IfNotPresent"
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    repository, _, tag = last.partition(":")
    if not repository or repository != repository.lower():
        return "IfNotPresent"
    if not tag and not digest:
        tag = "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def _default_resource_list(resources: Obj, key: str) -> None:
    values = _dict(resources, key)
    if not values:
        return
    for name, raw in values.items():
        if type(raw) in (str, int, float):
            with contextlib.suppress(QuantityError):
                values[name] = canonical(raw)


def _default_handler(handler: Obj | None) -> None:
    if handler is None:
        return
    http_get = _dict(handler, "httpGet")
    if http_get is not None:
        _set_default(http_get, "path", "/")
        _set_default(http_get, "scheme", "HTTP")


def _default_probe(probe: Obj | None) -> None:
    if probe is None:
        return
    for key, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3)):
        if not probe.get(key):
            probe[key] = value
    _default_handler(probe)


def _default_container(container: Obj) -> None:
    _set_default(container, "imagePullPolicy", _pull_policy(container.get("image")))
    _set_default(container, "terminationMessagePath", TERMINATION_MESSAGE_PATH)
    _set_default(container, "terminationMessagePolicy", "File")
    for port in _dicts(container, "ports"):
        _set_default(port, "protocol", "TCP")
    for var in _dicts(container, "env"):
        value_from = _dict(var, "valueFrom")
        field_ref = _dict(value_from, "fieldRef") if value_from is not None else None
        if field_ref is not None:
            _set_default(field_ref, "apiVersion", "v1")
    resources = _dict(container, "resources", create=True)  # a non-pointer struct: Go writes `resources: {}`
    if resources is not None:
        _default_resource_list(resources, "limits")
        _default_resource_list(resources, "requests")
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        _default_probe(_dict(container, kind))
    lifecycle = _dict(container, "lifecycle")
    if lifecycle is not None:
        _default_handler(_dict(lifecycle, "postStart"))
        _default_handler(_dict(lifecycle, "preStop"))


def _default_volume(volume: Obj) -> None:
    if all(volume.get(key) is None for key in _VOLUME_SOURCE_KEYS):
        volume["emptyDir"] = {}
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        source = _dict(volume, key)
        if source is not None and source.get("defaultMode") is None:
            source["defaultMode"] = _DEFAULT_MODE
    downward = _dict(volume, "downwardAPI")
    for item in _dicts(downward, "items") if downward is not None else []:
        field_ref = _dict(item, "fieldRef")
        if field_ref is not None:
            _set_default(field_ref, "apiVersion", "v1")
    host_path = _dict(volume, "hostPath")
    if host_path is not None and host_path.get("type") is None:
        host_path["type"] = ""
    empty_dir = _dict(volume, "emptyDir")
    if empty_dir is not None and type(empty_dir.get("sizeLimit")) in (str, int, float):
        with contextlib.suppress(QuantityError):
            empty_dir["sizeLimit"] = canonical(empty_dir["sizeLimit"])
    _default_volume_sources(volume)


def _default_volume_sources(volume: Obj) -> None:
    """The defaults of the other sources: a projected token's hour (`SetDefaults_ServiceAccountTokenProjection`),
    projected downward API `fieldRef.apiVersion`, an image volume's pull policy from its reference
    (`SetDefaults_Volume`, ImageVolume), an ephemeral claim's `volumeMode: Filesystem`, an iSCSI interface and an
    Azure disk's caching mode, kind, file system and read-only flag."""
    projected = _dict(volume, "projected")
    for source in _dicts(projected, "sources") if projected is not None else []:
        token = _dict(source, "serviceAccountToken")
        if token is not None and token.get("expirationSeconds") is None:
            token["expirationSeconds"] = 3600
        downward = _dict(source, "downwardAPI")
        for item in _dicts(downward, "items") if downward is not None else []:
            field_ref = _dict(item, "fieldRef")
            if field_ref is not None:
                _set_default(field_ref, "apiVersion", "v1")
    image = _dict(volume, "image")
    if image is not None:
        _set_default(image, "pullPolicy", _pull_policy(image.get("reference")))
    ephemeral = _dict(volume, "ephemeral")
    template = _dict(ephemeral, "volumeClaimTemplate") if ephemeral is not None else None
    claim_spec = _dict(template, "spec") if template is not None else None
    if claim_spec is not None and claim_spec.get("volumeMode") is None:
        claim_spec["volumeMode"] = "Filesystem"
    iscsi = _dict(volume, "iscsi")
    if iscsi is not None:
        _set_default(iscsi, "iscsiInterface", "default")
    azure_disk = _dict(volume, "azureDisk")
    if azure_disk is not None:
        for key, value in (("cachingMode", "ReadWrite"), ("kind", "Shared"), ("fsType", "ext4"), ("readOnly", False)):
            if azure_disk.get(key) is None:
                azure_disk[key] = value


def _default_pod_spec(spec: Obj) -> None:
    """`SetDefaults_PodSpec` and the nested container/volume/probe defaults (in place)."""
    _set_default(spec, "dnsPolicy", "ClusterFirst")
    _set_default(spec, "restartPolicy", "Always")
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
    _set_default(spec, "schedulerName", DEFAULT_SCHEDULER_NAME)
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for container in _dicts(spec, key):
            _default_container(container)
    for volume in _dicts(spec, "volumes"):
        _default_volume(volume)


def _default_pod_template(template: Obj | None) -> None:
    if template is None:
        return
    spec = _dict(template, "spec", create=True)
    if spec is not None:
        _default_pod_spec(spec)


def default_pod(pod: Obj) -> Obj:
    """A copy of `pod` with the core/v1 defaults an API server applies to a created Pod.

    Pod-only on top of the pod-spec defaults: requests default to limits, `enableServiceLinks: true`, container
    ports take the container port as host port on the host network, and (Priority admission) `priority: 0`
    with `preemptionPolicy: PreemptLowerPriority` when no priority class is named.
    """
    return default_pod_in_place(copy_json(pod))


def default_pod_update_in_place(pod: Obj, old: Obj) -> Obj:
    """An update's defaults. None are added to a spec that is the stored one itself (a patch of metadata or
    status shares it, copy on write): that spec was defaulted when it was stored. The priority is the Priority
    admission plugin's to keep (`kjobs.server.admission.admit_pod_priority`)."""
    if type(pod) is dict and type(old) is dict and pod.get("spec") is not None and pod.get("spec") is old.get("spec"):
        return pod
    return default_pod_in_place(pod, priority=False)


_Change = tuple[tuple[str | int, ...], str | int, Any, bytes | None]
"""What defaulting did at one place of a spec: (the path to the object or list changed, its key or index, the value
set, or None and the value's JSON when it is a map or list, decoded afresh for each pod)."""

_DEFAULTED_SPECS: Memo[bytes, tuple[_Change, ...] | bytes] = Memo(256)
"""What defaulting does to a pod spec, by the spec's JSON (`hostname` blanked): the changes it makes, or (when they
do not reproduce it) the defaulted spec's JSON. See `default_api_pod_in_place`."""

_ABSENT = object()


def default_api_pod_in_place(pod: Obj) -> Obj:
    """A created pod's defaults in the API server: those of `default_pod` but the priority, which the Priority
    admission plugin sets from the pod's PriorityClass after defaulting (`kjobs.server.admission`).

    The defaults are a function of the spec alone, and a Job's pods repeat one spec but for their `hostname`
    (`<job>-<index>`), which no default reads or sets. So what defaulting did to a spec (the fields it added or
    set, which are few: a Job's template was defaulted when the Job was stored) is remembered by the JSON of the
    spec with the hostname blanked, and the next pod whose spec has that JSON gets those changes made to its own
    spec, each map or list they set decoded afresh (docs/create50.md: a fraction of decoding the whole defaulted
    spec, as stop 46 did). Changes that would not make the very JSON defaulting made (a default that removes a
    field, or puts a key elsewhere) are not used: that spec's defaulted JSON is remembered and decoded instead.
    A spec that does not encode is defaulted in place. As for the remembered validation (`validate_pod_spec`), a
    body is JSON: decoded from a request, or built of JSON's types by kjobs' components (a tuple where a list
    belongs would share a list's key)."""
    spec = pod.get("spec") if type(pod) is dict else None
    if type(spec) is not dict:
        return default_pod_in_place(pod, priority=False)
    hostname = spec.get("hostname", _ABSENT)
    try:
        key = orjson.dumps(spec if hostname is _ABSENT else {**spec, "hostname": ""})
    except TypeError:
        return default_pod_in_place(pod, priority=False)
    done = _DEFAULTED_SPECS.get(key)
    if isinstance(done, tuple):
        _apply_changes(spec, done)
        return pod
    if done is not None:
        fresh: Obj = orjson.loads(done)
        if hostname is not _ABSENT:
            fresh["hostname"] = hostname
        pod["spec"] = fresh
        return pod
    default_pod_in_place(pod, priority=False)
    defaulted = pod["spec"]  # `spec` itself, defaulted in place
    with contextlib.suppress(TypeError):
        after = orjson.dumps(defaulted if hostname is _ABSENT else {**defaulted, "hostname": ""})
        _DEFAULTED_SPECS.put(key, _reproducing_changes(key, after))
    return pod


def _reproducing_changes(before: bytes, after: bytes) -> tuple[_Change, ...] | bytes:
    """The changes that make the spec of JSON `before` into the spec of JSON `after`, if made to a copy decoded
    from `before` they give `after` byte for byte (keys in the same order); else `after` itself."""
    changes: list[_Change] = []
    old, new = orjson.loads(before), orjson.loads(after)
    if type(old) is dict and type(new) is dict:
        _collect_changes(old, new, (), changes)
        trial: Obj = orjson.loads(before)
        _apply_changes(trial, tuple(changes))
        if orjson.dumps(trial) == after:
            return tuple(changes)
    return after


def _collect_changes(old: Obj, new: Obj, path: tuple[str | int, ...], changes: list[_Change]) -> None:
    """The keys `new` adds to `old` or sets otherwise, into maps and equally long lists they both have (a key
    `new` lacks is not seen: `_reproducing_changes` then finds that the changes do not reproduce `new`)."""
    for key, value in new.items():
        was = old.get(key, _ABSENT)
        if type(was) is dict and type(value) is dict:
            _collect_changes(was, value, (*path, key), changes)
        elif type(was) is list and type(value) is list and len(was) == len(value):
            for i, (item_was, item) in enumerate(zip(was, value, strict=True)):
                if type(item_was) is dict and type(item) is dict:
                    _collect_changes(item_was, item, (*path, key, i), changes)
                elif type(item_was) is not type(item) or item_was != item:
                    changes.append(_change((*path, key), i, item))
        elif type(was) is not type(value) or was != value:
            changes.append(_change(path, key, value))


def _change(path: tuple[str | int, ...], key: str | int, value: Any) -> _Change:
    if type(value) is dict or type(value) is list:
        return (path, key, None, orjson.dumps(value))
    return (path, key, value, None)


def _apply_changes(spec: Obj, changes: tuple[_Change, ...]) -> None:
    for path, key, value, raw in changes:
        target: Any = spec
        for step in path:
            target = target[step]
        target[key] = value if raw is None else orjson.loads(raw)


def default_pod_in_place(out: Obj, *, priority: bool = True) -> Obj:
    """`default_pod` without the copy, for the API server, which owns the object it defaults (`priority`: also
    the Priority plugin's result when no PriorityClass exists)."""
    if type(out) is not dict:
        return out
    spec = _dict(out, "spec", create=True)
    if spec is None:
        return out
    _default_pod_spec(spec)
    for key in ("containers", "initContainers"):
        for container in _dicts(spec, key):
            resources = _dict(container, "resources")
            limits = _dict(resources, "limits") if resources is not None else None
            if resources is None or not limits:
                continue
            requests = _dict(resources, "requests", create=True)
            if requests is not None:
                for name, value in limits.items():
                    requests.setdefault(name, value)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork") is True:
        for key in ("containers", "initContainers"):
            for container in _dicts(spec, key):
                for port in _dicts(container, "ports"):
                    if not port.get("hostPort"):
                        port["hostPort"] = port.get("containerPort")
    if priority:
        if not spec.get("priorityClassName") and spec.get("priority") is None:
            spec["priority"] = 0
        if spec.get("preemptionPolicy") is None:
            spec["preemptionPolicy"] = "PreemptLowerPriority"
    return out


def default_job(job: Obj) -> Obj:
    """A copy of `job` with batch/v1 Job defaults and pod-template defaults applied
    (`pkg/apis/batch/v1/defaults.go`)."""
    return default_job_in_place(copy_json(job))


def default_job_in_place(out: Obj) -> Obj:
    """`default_job` without the copy, for the API server, which owns the object it defaults."""
    if type(out) is not dict:
        return out
    spec = _dict(out, "spec", create=True)
    if spec is None:
        return out
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = names.MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    template = _dict(spec, "template", create=True)
    template_meta = _dict(template, "metadata") if template is not None else None
    template_labels = template_meta.get("labels") if template_meta is not None else None
    if template_labels is not None:
        meta = _dict(out, "metadata", create=True)
        if meta is not None and not meta.get("labels"):
            meta["labels"] = copy_json(template_labels)
    if spec.get("completionMode") is None:
        spec["completionMode"] = "NonIndexed"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    policy = _dict(spec, "podFailurePolicy")
    if policy is not None:
        for rule in _dicts(policy, "rules"):
            for pattern in _dicts(rule, "onPodConditions"):
                _set_default(pattern, "status", "True")
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if spec.get("podFailurePolicy") is not None else "TerminatingOrFailed"
    # `SetDefaults_Job` also stores an unset manualSelector as false (pkg/apis/batch/v1/defaults.go).
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    _default_pod_template(template)
    return out


def default_cronjob_in_place(out: Obj) -> Obj:
    """`SetObjectDefaults_CronJob` (pkg/apis/batch/v1): `SetDefaults_CronJob` (concurrencyPolicy Allow, suspend
    false, history limits 3 successful and 1 failed) and the pod defaults of the job template's pod template. The
    job template's own spec is not defaulted: its Jobs are, when the controller creates them."""
    if type(out) is not dict:
        return out
    spec = _dict(out, "spec", create=True)
    if spec is None:
        return out
    _set_default(spec, "concurrencyPolicy", "Allow")
    _set_default(spec, "suspend", False)
    _set_default(spec, "successfulJobsHistoryLimit", 3)
    _set_default(spec, "failedJobsHistoryLimit", 1)
    job_template = _dict(spec, "jobTemplate")
    job_spec = _dict(job_template, "spec") if job_template is not None else None
    if job_spec is not None:
        _default_pod_template(_dict(job_spec, "template"))
    return out


def labels_from_template(job: Obj) -> bool:
    """Whether defaulting a created Job gives it its pod template's labels (`SetDefaults_Job`: template labels set,
    even `{}`, and the Job's own empty). In Go the Job then holds the template's very map, so the labels the
    registry strategy generates into the template land in the Job's `metadata.labels` too, before validation: a
    Job name over 63 characters is then refused under `metadata.labels` as well as under `spec.template.labels`.
    Without template labels the Job's stay empty until it is read back from storage, and only the template's
    are refused."""
    meta, spec = job.get("metadata"), job.get("spec")
    if type(meta) is not dict or type(spec) is not dict or meta.get("labels"):
        return False
    template = spec.get("template")
    template_meta = template.get("metadata") if type(template) is dict else None
    return type(template_meta) is dict and type(template_meta.get("labels")) is dict


def prepare_job_for_create(job: Obj, *, uid: str, labels_from_template: bool = False) -> Obj:
    """The Job registry strategy's `PrepareForCreate` on a copy: system fields, cleared status, generated selector.

    Sets `metadata.uid` and `metadata.generation: 1`, replaces `status` by `{}` and, unless `spec.manualSelector`
    is true, adds the job-name and controller-uid labels (prefixed and legacy) to the pod template where missing
    and `batch.kubernetes.io/controller-uid: <uid>` to `spec.selector.matchLabels` where missing. Conflicting
    values a user wrote are kept, for validation to reject.

    Kubernetes re-applies defaults whenever it reads the object back from storage, so a created Job ends up with
    its (generated) template labels as `metadata.labels` when it had none: call `default_job` again on the
    validated object before storing it to get what Kubernetes returns. `labels_from_template` (see
    `labels_from_template`, asked of the request before defaulting): the Job's labels are the template's, the
    generated ones included, already for validation.
    """
    out = copy_json(job)
    if type(out) is not dict:
        return out  # type: ignore[no-any-return]
    meta = _dict(out, "metadata", create=True)
    if meta is not None:
        meta["uid"] = uid
        meta["generation"] = 1
    out["status"] = {}
    spec = _dict(out, "spec", create=True)
    if spec is None or spec.get("manualSelector") is True:
        return out
    name = meta.get("name") if meta is not None and type(meta.get("name")) is str else ""
    template = _dict(spec, "template", create=True)
    template_meta = _dict(template, "metadata", create=True) if template is not None else None
    labels = _dict(template_meta, "labels", create=True) if template_meta is not None else None
    if labels is not None:
        for key in (names.LEGACY_JOB_NAME_LABEL, names.JOB_NAME_LABEL):
            labels.setdefault(key, name)
        for key in (names.LEGACY_CONTROLLER_UID_LABEL, names.CONTROLLER_UID_LABEL):
            labels.setdefault(key, uid)
        if labels_from_template and meta is not None:
            meta["labels"] = copy_json(labels)
    selector = _dict(spec, "selector", create=True)
    match_labels = _dict(selector, "matchLabels", create=True) if selector is not None else None
    if match_labels is not None:
        match_labels.setdefault(names.CONTROLLER_UID_LABEL, uid)
    return out


def prepare_job_for_update(job: Obj, old: Obj) -> Obj:
    """The strategy's `PrepareForUpdate` on a copy: status kept from `old`, generation +1 when the spec changed."""
    out = copy_json(job)
    if type(out) is not dict or type(old) is not dict:
        return out  # type: ignore[no-any-return]
    if "status" in old:
        out["status"] = copy_json(old["status"])
    else:
        out.pop("status", None)
    meta = _dict(out, "metadata", create=True)
    old_meta = _dict(old, "metadata") or {}
    raw_generation = old_meta.get("generation")
    old_generation = raw_generation if type(raw_generation) is int else 0
    if meta is not None:
        changed = not semantic_equal(out.get("spec"), old.get("spec"))
        meta["generation"] = old_generation + 1 if changed else old_generation
    return out


def prepare_job_status_update(job: Obj, old: Obj) -> Obj:
    """The status strategy's `PrepareForUpdate` on a copy: the spec is kept from `old`."""
    out = copy_json(job)
    if type(out) is not dict or type(old) is not dict:
        return out  # type: ignore[no-any-return]
    out["spec"] = copy_json(old.get("spec"))
    return out


NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""The label the apiserver keeps equal to a Namespace's name (so selectors can pick namespaces by name)."""
NAMESPACE_FINALIZER = "kubernetes"


def default_namespace_in_place(out: Obj) -> Obj:
    """A created Namespace: the `kubernetes` finalizer in `spec.finalizers` (namespace strategy
    `PrepareForCreate`) and the `kubernetes.io/metadata.name` label (`SetDefaults_Namespace`, `Canonicalize`)."""
    if type(out) is not dict:
        return out
    spec = _dict(out, "spec", create=True)
    if spec is not None:
        finalizers = spec.get("finalizers")
        if not isinstance(finalizers, list):
            finalizers = []
        if NAMESPACE_FINALIZER not in finalizers:
            spec["finalizers"] = [*finalizers, NAMESPACE_FINALIZER]
    _label_namespace(out)
    return out


def default_namespace_update_in_place(out: Obj, old: Obj) -> Obj:
    """An updated Namespace keeps its spec (finalizers change only through `/finalize`, `PrepareForUpdate`) and
    its name label; its status is defaulted as a status write's is."""
    if type(out) is not dict:
        return out
    if "spec" in old:
        out["spec"] = old["spec"]
    else:
        out.pop("spec", None)
    default_namespace_status_in_place(out)
    _label_namespace(out)
    return out


def default_namespace_finalize_in_place(out: Obj) -> Obj:
    """A Namespace written through `/finalize` keeps the `spec.finalizers` it was sent (`FinalizeStrategy` takes
    status alone from the stored one) and its name label."""
    if type(out) is dict:
        _label_namespace(out)
    return out


def default_namespace_status_in_place(out: Obj) -> Obj:
    """A status without a phase is `Active`: `SetDefaults_NamespaceStatus` runs whenever a Namespace body is
    decoded (pkg/apis/core/v1/defaults.go), so a status write of `{}` stores `Active`, and on a deleting
    namespace is refused as an explicit `Active` would be."""
    if type(out) is not dict:
        return out
    status = out.get("status")
    if status is None:
        out["status"] = {"phase": "Active"}
    elif type(status) is dict and not status.get("phase"):
        status["phase"] = "Active"
    return out


def _label_namespace(out: Obj) -> None:
    meta = _dict(out, "metadata", create=True)
    if meta is None or not isinstance(meta.get("name"), str):
        return
    labels = meta.get("labels")
    if not isinstance(labels, dict):
        labels = {}
    meta["labels"] = {**labels, NAMESPACE_NAME_LABEL: meta["name"]}
