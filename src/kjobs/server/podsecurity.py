"""The PodSecurity admission plugin (staging/src/k8s.io/pod-security-admission/admission/admission.go, v1.32), as
kube-apiserver runs it with its default configuration: no exemptions, enforce/audit/warn `privileged:latest`, so
only namespaces labelled `pod-security.kubernetes.io/<mode>[-version]` are checked (the checks themselves are
`kjobs.api.podsecurity`).

- Pods (`ValidatePod`), on create and on updates that change something the checks read (`isSignificantPodUpdate`:
  images, seccomp annotations, the number of containers, an added ephemeral container), including through
  `pods/ephemeralcontainers`; other subresources (status, binding, eviction, exec, ...) are ignored. The enforce
  level refuses with 403 `pods "x" is forbidden: violates PodSecurity "restricted:latest": ...`; the warn level
  adds a `Warning: would violate PodSecurity ...` header (not when the request is refused anyway).
- Pod controllers (`ValidatePodController`: here Jobs and CronJobs, whose pod template is checked) are never
  refused, only warned about.
- Namespaces (`ValidateNamespace`): labels that do not parse are refused (422, one cause per label) on create,
  and on update when they changed; an update that makes the enforce level stricter answers with warnings naming
  the existing pods that would now be refused (`EvaluatePodsInNamespace`: at most 3000 pods and one second).

The audit level writes audit annotations upstream; kjobs keeps no audit log, so it is parsed and validated but has
no other effect.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from functools import partial

from kjobs.api.errors import FieldError, forbidden, invalid
from kjobs.api.podsecurity import (
    PRIVILEGED,
    LevelVersion,
    Policy,
    compare_levels,
    evaluate,
    forbidden_detail,
    forbidden_reason,
    has_policy_labels,
    policy_to_evaluate,
)
from kjobs.api.types import Obj, section

PLUGIN = "PodSecurity"

IGNORED_POD_SUBRESOURCES = frozenset({"exec", "attach", "binding", "eviction", "log", "portforward", "proxy", "status"})
"""admission.go `ignoredPodSubresources`: any other pod subresource carries a pod and is evaluated."""

NAMESPACE_MAX_PODS_TO_CHECK = 3000
"""admission.go `defaultNamespaceMaxPodsToCheck`."""
NAMESPACE_POD_CHECK_TIMEOUT = 1.0
"""admission.go `defaultNamespacePodCheckTimeout` (seconds)."""

_SECCOMP_CONTAINER_ANNOTATION = "container.seccomp.security.alpha.kubernetes.io/"


_meta = partial(section, key="metadata")
_spec = partial(section, key="spec")


def namespace_policy(namespace: Obj | None) -> tuple[Policy, list[FieldError]] | None:
    """The namespace's policy and label errors, or None when it has no PodSecurity label (the defaults, which are
    privileged everywhere, let everything through: the plugin's cost on an unlabelled namespace is this look)."""
    labels = _meta(namespace).get("labels") if namespace is not None else None
    if not has_policy_labels(labels):
        return None
    return policy_to_evaluate(labels)


def pod_template(kind: str, obj: Obj) -> tuple[Obj, Obj] | None:
    """`DefaultPodSpecExtractor.ExtractPodSpec`: the template's metadata and spec of a Job or CronJob."""
    spec = _spec(obj)
    if kind == "CronJob":
        job_template = spec.get("jobTemplate")
        spec = _spec(job_template) if isinstance(job_template, dict) else {}
    template = spec.get("template")
    if not isinstance(template, dict):
        return None
    return _meta(template), _spec(template)


def _message(prefix: str, lv: LevelVersion, results: list[tuple[str, str]]) -> str:
    return f'{prefix} PodSecurity "{lv}": {forbidden_detail(results)}'


def evaluate_pod(policy: Policy, meta: Obj, spec: Obj, *, enforce: bool) -> tuple[str | None, list[str]]:
    """admission.go `EvaluatePod`: the refusal (`violates PodSecurity ...`, when `enforce` and the enforce level
    forbids the pod) and the warnings (`would violate PodSecurity ...`, only when not refused)."""
    cached: dict[LevelVersion, list[tuple[str, str]]] = {}
    if enforce:
        results = cached[policy.enforce] = evaluate(policy.enforce, meta, spec)
        if results:
            return _message("violates", policy.enforce, results), []
    results = cached[policy.warn] if policy.warn in cached else evaluate(policy.warn, meta, spec)
    return None, [_message("would violate", policy.warn, results)] if results else []


def significant_update(pod: Obj, old: Obj) -> bool:
    """admission.go `isSignificantPodUpdate`: whether a pod update changes what the checks see (the fields of a
    pod that validation lets change: images, a container's seccomp annotation, ephemeral containers).

    Written as plain loops: every pod update not through a subresource (the Job controller's finalizer removal,
    label changes) asks it, in every namespace.

    For two validated pods (the plugin runs after validation, on a stored pod): an update that keeps the very
    `spec` object and the very annotations (a finalizer's removal, merged copy on write) changes nothing here —
    each container is compared with itself (a validated image is a string, equal to itself; container names are
    unique, so each ephemeral container finds itself) and no seccomp annotation can differ — so it is not
    walked."""
    spec, old_spec = _spec(pod), _spec(old)
    raw_annotations, old_raw_annotations = _meta(pod).get("annotations"), _meta(old).get("annotations")
    if spec is old_spec and raw_annotations is old_raw_annotations:
        return False
    annotations, old_annotations = raw_annotations or {}, old_raw_annotations or {}
    seccomp_may_differ = annotations != old_annotations
    for kind in ("containers", "initContainers"):
        new_list, old_list = spec.get(kind) or (), old_spec.get(kind) or ()
        if len(new_list) != len(old_list):
            return True
        for container, previous in zip(new_list, old_list, strict=True):
            if (
                isinstance(container, dict)
                and isinstance(previous, dict)
                and _changed(container, previous, annotations, old_annotations, seccomp_may_differ)
            ):
                return True
    ephemeral = spec.get("ephemeralContainers")
    if not ephemeral:
        return False
    old_ephemeral = {str(c.get("name")): c for c in old_spec.get("ephemeralContainers") or () if isinstance(c, dict)}
    for container in ephemeral:
        if not isinstance(container, dict):
            continue
        previous = old_ephemeral.get(str(container.get("name")))
        if previous is None or _changed(container, previous, annotations, old_annotations, seccomp_may_differ):
            return True
    return False


def _changed(container: Obj, previous: Obj, annotations: Obj, old_annotations: Obj, seccomp_may_differ: bool) -> bool:
    """`isSignificantContainerUpdate`: another image, or another `container.seccomp...` annotation for it."""
    if container.get("image") != previous.get("image"):
        return True
    if not seccomp_may_differ:
        return False
    key = _SECCOMP_CONTAINER_ANNOTATION + str(container.get("name") or "")
    return bool(annotations.get(key) != old_annotations.get(key))


def check_pod(namespace: Obj | None, pod: Obj, old: Obj | None, subresource: str, warnings: list[str] | None) -> None:
    """`ValidatePod` for a pod create (`old` None) or update: raises 403 Forbidden when the enforce level refuses
    it, else adds the warn level's warning to `warnings` (None: nobody reads them)."""
    if subresource in IGNORED_POD_SUBRESOURCES:
        return
    found = namespace_policy(namespace)
    if found is None:
        return
    policy, errors = found
    if not errors and all(lv.level == PRIVILEGED for lv in (policy.enforce, policy.warn, policy.audit)):
        return
    if old is not None and not significant_update(pod, old):
        return
    refusal, warned = evaluate_pod(policy, _meta(pod), _spec(pod), enforce=True)
    if refusal is not None:
        raise forbidden("pods", str(_meta(pod).get("name") or ""), refusal)
    if warnings is not None:
        warnings.extend(warned)


def check_pod_controller(kind: str, namespace: Obj | None, obj: Obj, warnings: list[str]) -> None:
    """`ValidatePodController` for a Job or CronJob create or update: the warn level's warning about its pod
    template (never a refusal: the pods it makes are checked when they are created)."""
    found = namespace_policy(namespace)
    if found is None:
        return
    policy, errors = found
    if not errors and policy.warn.level == PRIVILEGED and policy.audit.level == PRIVILEGED:
        return
    template = pod_template(kind, obj)
    if template is None:
        return
    _, warned = evaluate_pod(policy, template[0], template[1], enforce=False)
    warnings.extend(warned)


def check_namespace_labels(namespace: Obj, old: Obj | None) -> None:
    """`ValidateNamespace`'s refusal: 422 Invalid for PodSecurity labels that do not parse, on create, and on
    update unless the same errors were already there."""
    labels = _meta(namespace).get("labels")
    if not has_policy_labels(labels):
        return
    _, errors = policy_to_evaluate(labels)
    if not errors:
        return
    if old is not None:
        _, old_errors = policy_to_evaluate(_meta(old).get("labels"))
        if [str(e) for e in old_errors] == [str(e) for e in errors]:
            return
    raise invalid("Namespace", str(_meta(namespace).get("name") or ""), errors)


def namespace_update_warnings(namespace: Obj, old: Obj, pods: Callable[[], Iterable[Obj]]) -> list[str]:
    """`ValidateNamespace` on update: when the enforce level becomes stricter (not privileged, not relaxed at the
    same version), the existing pods it would refuse, grouped by their reasons (`EvaluatePodsInNamespace`)."""
    new_policy, _ = policy_to_evaluate(_meta(namespace).get("labels"))
    old_policy, _ = policy_to_evaluate(_meta(old).get("labels"))
    enforce, previous = new_policy.enforce, old_policy.enforce
    if enforce == previous or enforce.level == PRIVILEGED:
        return []
    if enforce.version == previous.version and compare_levels(enforce.level, previous.level) < 1:
        return []
    return pods_warnings(str(_meta(namespace).get("name") or ""), enforce, pods())


def prioritize(pods: Iterable[Obj]) -> list[Obj]:
    """admission.go `prioritizePods`: one pod per controller first (in their order), then the other pods of the
    controllers already seen, so that the first pods checked cover as many workloads as they can."""
    first, repeated, seen = [], [], set()
    for pod in pods:
        owner = next(
            (o for o in _meta(pod).get("ownerReferences") or () if isinstance(o, dict) and o.get("controller") is True),
            None,
        )
        if owner is None:
            first.append(pod)
        elif owner.get("uid") in seen:
            repeated.append(pod)
        else:
            seen.add(owner.get("uid"))
            first.append(pod)
    return first + repeated


def pods_warnings(namespace: str, enforce: LevelVersion, pods: Iterable[Obj]) -> list[str]:
    """admission.go `EvaluatePodsInNamespace`: one warning per distinct set of reasons, prefixed with the first
    pod's name (by name) and how many others share it, sorted; after a note when not every pod was checked and
    one naming the namespace and level."""
    listed = prioritize(pods)
    total = len(listed)
    listed = listed[:NAMESPACE_MAX_PODS_TO_CHECK]
    checked = len(listed)
    deadline = time.monotonic() + NAMESPACE_POD_CHECK_TIMEOUT
    counts: dict[str, tuple[str, int]] = {}
    for index, pod in enumerate(listed):
        results = evaluate(enforce, _meta(pod), _spec(pod))
        if results:
            reason = forbidden_reason(results)
            name = str(_meta(pod).get("name") or "")
            first, count = counts.get(reason, (name, 0))
            counts[reason] = (min(first, name), count + 1)
        if time.monotonic() > deadline:
            checked = index + 1
            break
    warnings = []
    if checked < total:
        warnings.append(
            f"new PodSecurity enforce level only checked against the first {checked} of {total} existing pods"
        )
    if counts:
        warnings.append(
            f'existing pods in namespace "{namespace}" violate the new PodSecurity enforce level "{enforce}"'
        )
    decorated = []
    for reason, (first, count) in counts.items():
        if count == 1:
            decorated.append(f"{first}: {reason}")
        elif count == 2:
            decorated.append(f"{first} (and 1 other pod): {reason}")
        else:
            decorated.append(f"{first} (and {count - 1} other pods): {reason}")
    return warnings + sorted(decorated)
