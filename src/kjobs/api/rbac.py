"""RBAC's roles and bindings (`rbac.authorization.k8s.io/v1`): defaulting and validation, as kube-apiserver runs them.

Design note: pure, like the rest of `kjobs.api`. Defaults are pkg/apis/rbac/v1/defaults.go (a binding's
`roleRef.apiGroup`, and each subject's `apiGroup` by its kind); validation is pkg/apis/rbac/validation/
validation.go in kubernetes/kubernetes at v1.32: `ValidateRole`, `ValidateClusterRole` (with its
`aggregationRule`), `ValidateRoleBinding`, `ValidateClusterRoleBinding` and their updates (a binding's `roleRef`
never changes). Names of roles and bindings follow `ValidateRBACName`, which only refuses what cannot be one
path segment (`.`, `..`, `/`, `%`), so `system:basic-user` is a valid name. The registry strategies
(pkg/registry/rbac/*/strategy.go) add nothing else but the label-selector ratchet of a ClusterRole update: values
that were already invalid in the stored `aggregationRule` stay accepted.
"""

from __future__ import annotations

from typing import Any

from kjobs.api.errors import ApiError, ErrorType, FieldError, not_supported
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.selectors import label_selector_from_object
from kjobs.api.types import Obj
from kjobs.api.validation_formats import name_is_dns_subdomain
from kjobs.api.validation_meta import (
    selector_has_invalid_label_value,
    validate_label_selector,
    validate_object_meta,
    validate_object_meta_update,
)

GROUP = "rbac.authorization.k8s.io"
SERVICE_ACCOUNT_KIND = "ServiceAccount"
USER_KIND = "User"
GROUP_KIND = "Group"

Required = ErrorType.FieldValueRequired
Invalid = ErrorType.FieldValueInvalid


def rbac_name(name: str, prefix: bool = False) -> list[str]:
    """`ValidateRBACName`: `path.IsValidPathSegmentName` whether a name or a generateName prefix."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


# ------------------------------------------------------------------------------------------------ defaults


def _default_subjects(obj: Obj) -> None:
    """`SetDefaults_Subject`: a User or Group subject without `apiGroup` gets RBAC's group."""
    subjects = obj.get("subjects")
    if type(subjects) is not list:
        return
    for subject in subjects:
        if type(subject) is dict and not subject.get("apiGroup") and subject.get("kind") in (USER_KIND, GROUP_KIND):
            subject["apiGroup"] = GROUP


def default_binding_in_place(binding: Obj) -> Obj:
    """`SetDefaults_RoleBinding` / `SetDefaults_ClusterRoleBinding`: `roleRef.apiGroup` defaults to RBAC's
    group; the subjects' `apiGroup` as `SetDefaults_Subject` says."""
    if type(binding) is not dict:
        return binding
    ref = binding.get("roleRef")
    if type(ref) is dict and not ref.get("apiGroup"):
        ref["apiGroup"] = GROUP
    _default_subjects(binding)
    return binding


# ------------------------------------------------------------------------------------------------ roles


def _list(obj: Any, key: str) -> list[Any]:
    value = obj.get(key) if type(obj) is dict else None
    return value if type(value) is list else []


def validate_policy_rule(rule: Any, namespaced: bool, path: str) -> list[FieldError]:
    """`ValidatePolicyRule`: verbs always; then either non-resource URLs (cluster roles only, and alone) or API
    groups and resources."""
    errs: list[FieldError] = []
    if not _list(rule, "verbs"):
        errs.append(FieldError(f"{path}.verbs", Required, "verbs must contain at least one value"))
    urls = _list(rule, "nonResourceURLs")
    if urls:
        if namespaced:
            errs.append(
                FieldError(
                    f"{path}.nonResourceURLs", Invalid, "namespaced rules cannot apply to non-resource URLs", urls
                )
            )
        if _list(rule, "apiGroups") or _list(rule, "resources") or _list(rule, "resourceNames"):
            errs.append(
                FieldError(
                    f"{path}.nonResourceURLs",
                    Invalid,
                    "rules cannot apply to both regular resources and non-resource URLs",
                    urls,
                )
            )
        return errs
    if not _list(rule, "apiGroups"):
        errs.append(FieldError(f"{path}.apiGroups", Required, "resource rules must supply at least one api group"))
    if not _list(rule, "resources"):
        errs.append(FieldError(f"{path}.resources", Required, "resource rules must supply at least one resource"))
    return errs


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata") if type(obj) is dict else None
    return meta if type(meta) is dict else {}


def validate_role(role: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateRole`: namespaced metadata with an RBAC name, and each rule."""
    errs = validate_object_meta(_meta(role), namespaced=True, name_fn=rbac_name)
    for i, rule in enumerate(_list(role, "rules")):
        errs += validate_policy_rule(rule, True, f"rules[{i}]")
    return errs


def validate_role_update(role: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateRoleUpdate`."""
    return validate_role(role) + validate_object_meta_update(_meta(role), _meta(old))


def _validate_cluster_role(role: Obj, allow_invalid_label_value: bool) -> list[FieldError]:
    errs = validate_object_meta(_meta(role), namespaced=False, name_fn=rbac_name)
    for i, rule in enumerate(_list(role, "rules")):
        errs += validate_policy_rule(rule, False, f"rules[{i}]")
    aggregation = role.get("aggregationRule") if type(role) is dict else None
    if type(aggregation) is dict:
        selectors = _list(aggregation, "clusterRoleSelectors")
        base = "aggregationRule.clusterRoleSelectors"
        if not selectors:
            errs.append(
                FieldError(base, Required, "at least one clusterRoleSelector required if aggregationRule is non-nil")
            )
        for i, selector in enumerate(selectors):
            path = f"{base}[{i}]"
            validate_label_selector(selector, path, errs, allow_invalid_label_value=allow_invalid_label_value)
            try:
                label_selector_from_object(selector if type(selector) is dict else {})
            except ApiError:
                # `LabelSelectorAsSelector` failed: its nil selector is the value shown
                errs.append(FieldError(path, Invalid, "invalid label selector.", None))
    return errs


def validate_cluster_role(role: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateClusterRole`: cluster-scoped metadata, rules (non-resource URLs allowed) and the aggregation
    rule's selectors."""
    return _validate_cluster_role(role, False)


def validate_cluster_role_update(role: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateClusterRoleUpdate`, with the strategy's `AllowInvalidLabelValueInSelector` when the stored
    aggregation rule already had such a value."""
    old_rule = old.get("aggregationRule") if type(old) is dict else None
    allow = any(selector_has_invalid_label_value(s) for s in _list(old_rule, "clusterRoleSelectors"))
    return _validate_cluster_role(role, allow) + validate_object_meta_update(_meta(role), _meta(old))


# ------------------------------------------------------------------------------------------------ bindings


def validate_subject(subject: Any, namespaced: bool, path: str) -> list[FieldError]:
    """`ValidateRoleBindingSubject`: a name always; per kind, the API group it must have, a ServiceAccount's name
    a DNS subdomain and, in a cluster binding, its namespace."""
    subject = subject if type(subject) is dict else {}
    errs: list[FieldError] = []
    name = subject.get("name") or ""
    api_group = subject.get("apiGroup") or ""
    kind = subject.get("kind") or ""
    if not name:
        errs.append(FieldError(f"{path}.name", Required))
    if kind == SERVICE_ACCOUNT_KIND:
        if name:
            errs += [FieldError(f"{path}.name", Invalid, msg, name) for msg in name_is_dns_subdomain(str(name), False)]
        if api_group:
            errs.append(not_supported(f"{path}.apiGroup", api_group, [""]))
        if not namespaced and not subject.get("namespace"):
            errs.append(FieldError(f"{path}.namespace", Required))
    elif kind in (USER_KIND, GROUP_KIND):
        if api_group != GROUP:
            errs.append(not_supported(f"{path}.apiGroup", api_group, [GROUP]))
    else:
        errs.append(not_supported(f"{path}.kind", kind, [SERVICE_ACCOUNT_KIND, USER_KIND, GROUP_KIND]))
    return errs


def _validate_binding(binding: Obj, namespaced: bool) -> list[FieldError]:
    errs = validate_object_meta(_meta(binding), namespaced=namespaced, name_fn=rbac_name)
    ref = binding.get("roleRef") if type(binding) is dict else None
    ref = ref if type(ref) is dict else {}
    api_group = ref.get("apiGroup") or ""
    if api_group != GROUP:
        errs.append(not_supported("roleRef.apiGroup", api_group, [GROUP]))
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    kind = ref.get("kind") or ""
    if kind not in kinds:
        errs.append(not_supported("roleRef.kind", kind, kinds))
    name = ref.get("name") or ""
    if not name:
        errs.append(FieldError("roleRef.name", Required))
    else:
        errs += [FieldError("roleRef.name", Invalid, msg, name) for msg in rbac_name(str(name))]
    for i, subject in enumerate(_list(binding, "subjects")):
        errs += validate_subject(subject, namespaced, f"subjects[{i}]")
    return errs


def _role_ref_value(ref: Any) -> Obj:
    """The internal `rbac.RoleRef` as the error shows it (a Go struct without JSON tags: its field names)."""
    ref = ref if type(ref) is dict else {}
    return {"APIGroup": ref.get("apiGroup") or "", "Kind": ref.get("kind") or "", "Name": ref.get("name") or ""}


def _role_ref_unchanged(binding: Obj, old: Obj) -> list[FieldError]:
    new_ref, old_ref = _role_ref_value(binding.get("roleRef")), _role_ref_value(old.get("roleRef"))
    if new_ref != old_ref:
        return [FieldError("roleRef", Invalid, "cannot change roleRef", new_ref)]
    return []


def validate_role_binding(binding: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateRoleBinding`: a Role or ClusterRole of RBAC's group, and the subjects."""
    return _validate_binding(binding, True)


def validate_role_binding_update(binding: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateRoleBindingUpdate`: as a create, the metadata update rules, and `cannot change roleRef`."""
    errs = _validate_binding(binding, True) + validate_object_meta_update(_meta(binding), _meta(old))
    return errs + _role_ref_unchanged(binding, old)


def validate_cluster_role_binding(binding: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateClusterRoleBinding`: a ClusterRole only, and ServiceAccount subjects with a namespace."""
    return _validate_binding(binding, False)


def validate_cluster_role_binding_update(
    binding: Obj, old: Obj, *, features: FeatureGates = DEFAULT
) -> list[FieldError]:
    """`ValidateClusterRoleBindingUpdate`."""
    errs = _validate_binding(binding, False) + validate_object_meta_update(_meta(binding), _meta(old))
    return errs + _role_ref_unchanged(binding, old)


def subjects_strings(subjects: Any) -> tuple[list[str], list[str], list[str]]:
    """`SubjectsStrings` (pkg/apis/rbac/helpers.go): users, groups and `namespace/name` of service accounts, for
    `kubectl get rolebinding -o wide` and `kubectl describe`."""
    users: list[str] = []
    groups: list[str] = []
    accounts: list[str] = []
    for subject in subjects if type(subjects) is list else []:
        if type(subject) is not dict:
            continue
        kind, name = subject.get("kind"), str(subject.get("name") or "")
        if kind == SERVICE_ACCOUNT_KIND:
            accounts.append(f"{subject.get('namespace') or ''}/{name}")
        elif kind == USER_KIND:
            users.append(name)
        elif kind == GROUP_KIND:
            groups.append(name)
    return users, groups, accounts
