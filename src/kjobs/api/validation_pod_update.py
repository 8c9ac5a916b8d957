"""Pod updates (`ValidatePodUpdate`, pkg/apis/core/validation/validation.go): after creation a pod's spec is
fixed except for a few fields.

Allowed: container and init-container images (the containers themselves may not be added or removed:
`ValidateContainerUpdates`), `activeDeadlineSeconds` (set, or lowered — never raised nor removed), additional
tolerations and new `tolerationSeconds` on existing ones (an existing toleration changed otherwise or removed is
its own Forbidden error on `spec.tolerations`, `validateOnlyAddedTolerations`), removed `schedulingGates` (a
gate added is Forbidden at `spec.schedulingGates[i].name`, `validateOnlyDeletedSchedulingGates`), and
`terminationGracePeriodSeconds` from a negative value to 1. While the stored pod still has scheduling gates,
`spec.nodeSelector` may gain entries and the required node affinity terms may gain requirements
(`validateNodeSelectorMutation`, `validateNodeAffinityMutation`): nothing existing may change or go. Anything
else is Kubernetes' Forbidden error on `spec`, whose text lists the updatable fields and then the difference
(kjobs writes the difference as changed field paths rather than Go's `cmp.Diff`). The mirror-pod and AppArmor
annotations may not be added, changed or removed (`ValidatePodSpecificAnnotationUpdates`).
"""

from __future__ import annotations

from typing import Any

from kjobs.api.disabled_fields import features_for_update
from kjobs.api.errors import ErrorType, FieldError, go_quote
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj, unchanged
from kjobs.api.validation_affinity import REQUIRED_NODE_VALUE_PATH, has_invalid_required_node_label_value
from kjobs.api.validation_meta import validate_object_meta_update
from kjobs.api.validation_pod import _validate_pod_annotations, uses_indivisible_hugepages, validate_pod

MAX_INT32 = 2**31 - 1
UPDATABLE = ",".join(
    (
        "`spec.containers[*].image`",
        "`spec.initContainers[*].image`",
        "`spec.activeDeadlineSeconds`",
        "`spec.tolerations` (only additions to existing tolerations)",
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
    )
)


ADD_OR_REMOVE = "pod updates may not add or remove containers"
MIRROR = "kubernetes.io/config.mirror"
APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
# `ValidatePodCreate`'s own rules, which `validate_pod` applies and an update (`validatePodMetadataAndSpec`) does
# not: there, ephemeral containers are a spec change like any other, and the node name cannot change at all.
_CREATE_ONLY = (
    ("spec.ephemeralContainers", "cannot be set on create"),
    ("spec.nodeName", "cannot be set until all schedulingGates have been cleared"),
)


def validate_pod_update(pod: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """The errors Kubernetes returns for updating `old` to `pod` (the spec rules above, plus the pod's own
    metadata and spec rules); a gated field the stored pod already uses stays valid with its gate off."""
    # A spec equal to the stored one passed validation when it was stored: re-checking it cannot find more.
    same_spec = unchanged(pod.get("spec"), old.get("spec"))
    new_meta, old_meta = pod.get("metadata"), old.get("metadata")
    if not same_spec:  # gates only matter to the spec's validation, which an unchanged spec skips
        old_spec_for_gates = old.get("spec")
        features = features_for_update(features, old_spec_for_gates if isinstance(old_spec_for_gates, dict) else {})
    stored_meta = old_meta if isinstance(old_meta, dict) else None
    errors = validate_pod(
        pod,
        spec_validated=same_spec,
        stored_meta=stored_meta,
        features=features,
        allow_indivisible_hugepages=not same_spec and uses_indivisible_hugepages(old.get("spec")),
    )
    # No error at all: the metadata's collections passed `validate_object_meta` against the stored metadata,
    # the very check `validate_object_meta_update` would repeat below (a pod's finalizer removal: every write).
    collections_passed = not errors
    if not same_spec:
        errors = [e for e in errors if (e.field, e.detail) not in _CREATE_ONLY]
        if has_invalid_required_node_label_value(old.get("spec")):
            # `AllowInvalidLabelValueInRequiredNodeAffinity`: the stored pod already had such a value
            errors = [
                e
                for e in errors
                if not (e.type is ErrorType.FieldValueInvalid and REQUIRED_NODE_VALUE_PATH.fullmatch(e.field))
            ]
    if isinstance(new_meta, dict) and isinstance(old_meta, dict):
        errors.extend(validate_object_meta_update(new_meta, old_meta, collections_passed=collections_passed))
        errors.extend(_annotation_change_errors(new_meta, old_meta))
    spec, old_spec = pod.get("spec"), old.get("spec")
    if same_spec or not isinstance(spec, dict) or not isinstance(old_spec, dict):
        return errors  # an unchanged spec changes nothing forbidden (most updates: metadata or status only)
    for key in ("containers", "initContainers"):
        new_list, old_list = spec.get(key) or [], old_spec.get(key) or []
        if isinstance(new_list, list) and isinstance(old_list, list) and len(new_list) != len(old_list):
            # `ValidateContainerUpdates` stops the update's checks here
            return [*errors, FieldError(f"spec.{key}", ErrorType.FieldValueForbidden, ADD_OR_REMOVE)]
    deadline = _active_deadline_errors(spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds"))
    if deadline:
        return errors + deadline
    errors.extend(_toleration_errors(spec.get("tolerations"), old_spec.get("tolerations")))
    errors.extend(_scheduling_gate_errors(spec.get("schedulingGates"), old_spec.get("schedulingGates")))
    munged = _munge(spec, old_spec)
    if old_spec.get("schedulingGates"):
        munged = _munge_gated(munged, old_spec, errors)
    if munged != old_spec:
        changed = ", ".join(_differences(old_spec, munged, "spec")) or "spec"
        errors.append(
            FieldError(
                "spec",
                ErrorType.FieldValueForbidden,
                f"pod updates may not change fields other than {UPDATABLE}\n{changed}",
            )
        )
    return errors


def validate_pod_specific_annotation_updates(meta: Obj, old_meta: Obj, spec: Obj) -> list[FieldError]:
    """`ValidatePodSpecificAnnotationUpdates`: no mirror-pod or AppArmor annotation added, changed or removed,
    and the pod's annotations valid for its spec (`ValidatePodSpecificAnnotations`)."""
    errors = _annotation_change_errors(meta, old_meta)
    annotations = meta.get("annotations")
    _validate_pod_annotations(
        annotations if isinstance(annotations, dict) else None, spec, "metadata.annotations", errors
    )
    return errors


def _annotation_change_errors(meta: Obj, old_meta: Obj) -> list[FieldError]:
    """The update half of `ValidatePodSpecificAnnotationUpdates`: a static (mirror) pod stays one, and the
    kubelet applied AppArmor profiles at start, so neither annotation may change afterwards."""
    new, old = meta.get("annotations"), old_meta.get("annotations")
    new = new if isinstance(new, dict) else {}
    old = old if isinstance(old, dict) else {}
    if new is old or (MIRROR not in new and MIRROR not in old and not _has_apparmor(new) and not _has_apparmor(old)):
        return []  # the common case: neither has a protected key
    errors: list[FieldError] = []
    forbidden = ErrorType.FieldValueForbidden
    for key in sorted(old):
        if key in new and new[key] == old[key]:
            continue
        if key.startswith(APPARMOR_PREFIX):
            errors.append(
                FieldError(f"metadata.annotations[{key}]", forbidden, "may not remove or update AppArmor annotations")
            )
        if key == MIRROR:
            errors.append(
                FieldError(f"metadata.annotations[{key}]", forbidden, "may not remove or update mirror pod annotation")
            )
    for key in sorted(new):
        if key in old:
            continue
        if key.startswith(APPARMOR_PREFIX):
            errors.append(FieldError(f"metadata.annotations[{key}]", forbidden, "may not add AppArmor annotations"))
        if key == MIRROR:
            errors.append(FieldError(f"metadata.annotations[{key}]", forbidden, "may not add mirror pod annotation"))
    return errors


def _has_apparmor(annotations: dict[str, Any]) -> bool:
    return any(key.startswith(APPARMOR_PREFIX) for key in annotations)


def _scheduling_gate_errors(new: Any, old: Any) -> list[FieldError]:
    """`validateOnlyDeletedSchedulingGates`: every gate must have been there before."""
    if not isinstance(new, list) or not new:
        return []
    old_names = {g.get("name") for g in old if isinstance(g, dict)} if isinstance(old, list) else set()
    added: dict[Any, int] = {}
    for i, gate in enumerate(new):
        name = gate.get("name") if isinstance(gate, dict) else None
        if name not in old_names:
            added[name] = i  # Go keeps the last index of a name
    return [
        FieldError(
            f"spec.schedulingGates[{i}].name",
            ErrorType.FieldValueForbidden,
            f"only deletion is allowed, but found new scheduling gate '{name}'",
        )
        for name, i in added.items()
    ]


def _munge_gated(munged: Obj, old: Obj, errors: list[FieldError]) -> Obj:
    """`ValidatePodUpdate`'s branch for a pod whose stored spec has scheduling gates: node selector entries and
    required node affinity requirements may be added (errors otherwise), and are undone like the other allowed
    changes. Pod (anti-)affinity stays immutable."""
    out = dict(munged)
    selector, old_selector = out.get("nodeSelector") or {}, old.get("nodeSelector") or {}
    if selector != old_selector:
        if not isinstance(selector, dict) or any(selector.get(k) != v for k, v in old_selector.items()):
            detail = "only additions to spec.nodeSelector are allowed (no mutations or deletions)"
            errors.append(FieldError("spec.nodeSelector", ErrorType.FieldValueInvalid, detail, selector))
        _restore(out, old, "nodeSelector")
    affinity, old_affinity = out.get("affinity"), old.get("affinity")
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    old_node_affinity = old_affinity.get("nodeAffinity") if isinstance(old_affinity, dict) else None
    if node_affinity != old_node_affinity:  # Go compares pointers: an empty node affinity is not a nil one
        errors.extend(_node_affinity_errors(node_affinity, old_node_affinity))
        if not isinstance(affinity, dict):
            if old_node_affinity is not None:
                out["affinity"] = {"nodeAffinity": old_node_affinity}
        elif old_affinity is None and not affinity.get("podAffinity") and not affinity.get("podAntiAffinity"):
            out.pop("affinity", None)
        else:
            rest = {k: v for k, v in affinity.items() if k != "nodeAffinity"}
            out["affinity"] = rest if old_node_affinity is None else {**rest, "nodeAffinity": old_node_affinity}
    return out


_TERMS = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"


def _node_affinity_errors(new: Any, old: Any) -> list[FieldError]:
    """`validateNodeAffinityMutation`: with required terms stored, their number is fixed and each may only
    gain requirements; an empty term (which selects nothing) may gain none."""
    old_required = old.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(old, dict) else None
    if not isinstance(old_required, dict):
        return []
    old_terms = old_required.get("nodeSelectorTerms") or []
    new_required = new.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(new, dict) else None
    new_terms = (new_required.get("nodeSelectorTerms") if isinstance(new_required, dict) else None) or []
    if old_terms and len(old_terms) != len(new_terms):
        detail = "no additions/deletions to non-empty NodeSelectorTerms list are allowed"
        return [FieldError(_TERMS, ErrorType.FieldValueInvalid, detail, _go_terms(new_terms))]
    return [
        FieldError(
            f"{_TERMS}[{i}]",
            ErrorType.FieldValueInvalid,
            "only additions are allowed (no mutations or deletions)",
            _go_term(new_term),
        )
        for i, (new_term, old_term) in enumerate(zip(new_terms, old_terms, strict=True))
        if not _term_only_adds(new_term, old_term)
    ]


def _term_only_adds(new: Any, old: Any) -> bool:
    new, old = new if isinstance(new, dict) else {}, old if isinstance(old, dict) else {}
    old_exprs, old_fields = old.get("matchExpressions") or [], old.get("matchFields") or []
    new_exprs, new_fields = new.get("matchExpressions") or [], new.get("matchFields") or []
    if not old_exprs and not old_fields:
        return not new_exprs and not new_fields
    return new_exprs[: len(old_exprs)] == old_exprs and new_fields[: len(old_fields)] == old_fields


def _go_terms(terms: list[Any]) -> Any:
    """A bad `[]NodeSelectorTerm` as Kubernetes renders it: the internal type's JSON, which has no tags (field
    names capitalised, every field present)."""
    return [_go_term(t) for t in terms] if terms else None


def _go_term(term: Any) -> Any:
    if not isinstance(term, dict):
        return term
    return {
        "MatchExpressions": _go_reqs(term.get("matchExpressions")),
        "MatchFields": _go_reqs(term.get("matchFields")),
    }


def _go_reqs(reqs: Any) -> Any:
    if not isinstance(reqs, list) or not reqs:
        return None
    return [
        {"Key": r.get("key", ""), "Operator": r.get("operator", ""), "Values": r.get("values") or None}
        if isinstance(r, dict)
        else r
        for r in reqs
    ]


def _active_deadline_errors(new: Any, old: Any) -> list[FieldError]:
    path = "spec.activeDeadlineSeconds"
    if new is not None:
        if not isinstance(new, int) or new < 0 or new > MAX_INT32:
            return [FieldError(path, ErrorType.FieldValueInvalid, f"must be between 0 and {MAX_INT32}, inclusive", new)]
        if isinstance(old, int) and old < new:
            return [FieldError(path, ErrorType.FieldValueInvalid, "must be less than or equal to previous value", new)]
    elif old is not None:
        return [
            FieldError(path, ErrorType.FieldValueInvalid, "must not update from a positive integer to nil value", None)
        ]
    return []


def _toleration_errors(new: Any, old: Any) -> list[FieldError]:
    """`validateOnlyAddedTolerations`: every existing toleration must still be there, but for its
    `tolerationSeconds` (which the taint eviction controller then honours as the new bound)."""
    if not isinstance(old, list) or not old:
        return []
    kept = [_without_seconds(t) for t in new] if isinstance(new, list) else []
    if all(_without_seconds(t) in kept for t in old):
        return []
    detail = "existing toleration can not be modified except its tolerationSeconds"
    return [FieldError("spec.tolerations", ErrorType.FieldValueForbidden, detail)]


def _without_seconds(toleration: Any) -> Any:
    """A toleration as Go's DeepEqual sees it with TolerationSeconds cleared (an absent field is its zero value)."""
    if not isinstance(toleration, dict):
        return toleration
    return {k: v for k, v in toleration.items() if k != "tolerationSeconds" and v not in (None, "")}


def _munge(spec: Obj, old: Obj) -> Obj:
    """`spec` with every allowed change undone, so that equality with `old` means only allowed changes."""
    out = dict(spec)
    for key in ("containers", "initContainers"):
        new_list, old_list = spec.get(key), old.get(key)
        if isinstance(new_list, list) and isinstance(old_list, list) and len(new_list) == len(old_list):
            out[key] = [
                dict(n, image=o.get("image")) if isinstance(n, dict) and isinstance(o, dict) else n
                for n, o in zip(new_list, old_list, strict=True)
            ]
    _restore(out, old, "activeDeadlineSeconds")
    _restore(out, old, "tolerations")  # judged by `_toleration_errors`, as Kubernetes munges them before its diff
    _restore(out, old, "schedulingGates")  # judged by `_scheduling_gate_errors`, as Kubernetes munges them
    grace, old_grace = spec.get("terminationGracePeriodSeconds"), old.get("terminationGracePeriodSeconds")
    if isinstance(old_grace, int) and old_grace < 0 and grace == 1:
        _restore(out, old, "terminationGracePeriodSeconds")
    return out


def _restore(out: Obj, old: Obj, key: str) -> None:
    if key in old:
        out[key] = old[key]
    else:
        out.pop(key, None)


def _differences(old: Any, new: Any, path: str) -> list[str]:
    """Field paths where `new` differs from `old`."""
    if isinstance(old, dict) and isinstance(new, dict):
        found: list[str] = []
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                found.extend(_differences(old.get(key), new.get(key), f"{path}.{key}"))
        return found
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        found = []
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            if a != b:
                found.extend(_differences(a, b, f"{path}[{i}]"))
        return found
    return [path]


STATIC_POD_EPHEMERAL = "static pods do not support ephemeral containers"


def validate_pod_ephemeral_containers_update(
    pod: Obj, old: Obj, *, features: FeatureGates = DEFAULT
) -> list[FieldError]:
    """`ValidatePodEphemeralContainersUpdate` (pkg/apis/core/validation/validation.go), for a write through
    `pods/{name}/ephemeralcontainers`, whose strategy kept everything of `old` but `spec.ephemeralContainers`:
    the pod's metadata and spec rules (ephemeral containers allowed, unlike on create), nothing on a mirror
    pod, and no existing ephemeral container removed or changed (matched by name: a patch may reorder them).
    A change is described by the changed field paths where Kubernetes prints Go's `cmp.Diff`."""
    new_meta, old_meta = pod.get("metadata"), old.get("metadata")
    stored_meta = old_meta if isinstance(old_meta, dict) else None
    old_spec = old.get("spec")
    gates = features_for_update(features, old_spec if isinstance(old_spec, dict) else {})
    errors = [
        e for e in validate_pod(pod, stored_meta=stored_meta, features=gates) if (e.field, e.detail) not in _CREATE_ONLY
    ]
    if isinstance(new_meta, dict) and isinstance(old_meta, dict):
        errors = [*validate_object_meta_update(new_meta, old_meta), *errors]
        errors.extend(_annotation_change_errors(new_meta, old_meta))
    annotations = old_meta.get("annotations") if isinstance(old_meta, dict) else None
    if isinstance(annotations, dict) and MIRROR in annotations:
        return [FieldError("", ErrorType.FieldValueForbidden, STATIC_POD_EPHEMERAL)]
    spec = pod.get("spec")
    new_list = spec.get("ephemeralContainers") if isinstance(spec, dict) else None
    old_list = old_spec.get("ephemeralContainers") if isinstance(old_spec, dict) else None
    by_name = {c.get("name"): c for c in new_list or [] if isinstance(c, dict)} if isinstance(new_list, list) else {}
    for container in old_list if isinstance(old_list, list) else []:
        if not isinstance(container, dict):
            continue
        name = str(container.get("name", ""))
        quoted = go_quote(name)
        if name not in by_name:
            detail = f"existing ephemeral containers {quoted} may not be removed\n"
        elif by_name[name] != container:
            changed = ", ".join(d.lstrip(".") for d in _differences(container, by_name[name], ""))
            detail = f"existing ephemeral containers {quoted} may not be changed\n{changed}"
        else:
            continue
        errors.append(FieldError("spec.ephemeralContainers", ErrorType.FieldValueForbidden, detail))
    return errors
