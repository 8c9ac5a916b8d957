"""Reconciliation of RBAC's bootstrap policy at start, as kube-apiserver's `rbac/bootstrap-roles` hook does it (pure).

kube-apiserver (pkg/registry/rbac/rest/storage_rbac.go, `ensureRBACPolicy`) runs `ReconcileRoleOptions` and
`ReconcileRoleBindingOptions` (pkg/registry/rbac/reconciliation/reconcile_role.go, reconcile_rolebindings.go in
kubernetes/kubernetes) with `Confirm` on and nothing extra removed, over every bootstrap object:

- a missing one is created;
- one annotated `rbac.authorization.kubernetes.io/autoupdate: "false"` is left as it is (`Protected`);
- otherwise its labels and annotations get the expected ones it lacks (its own values win), a role gets the
  expected rules its rules do not cover, broken down one verb and resource per rule as `Covers` returns them (its
  extra rules stay), and the expected aggregation selectors it lacks (an aggregation rule where none is expected
  is removed); a binding gets the expected subjects it lacks (its extra subjects stay), and one whose `roleRef`
  differs is deleted and made again (a roleRef cannot be changed) with the expected reference and the union of
  subjects.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from kjobs.api.types import Obj
from kjobs.api.validation_meta import semantic_equal
from kjobs.server.rbac import covers
from kjobs.server.rbacpolicy import AUTOUPDATE_ANNOTATION


@dataclass
class Reconciled:
    """What to do to one stored bootstrap object: nothing (`obj` None), update it, or delete and create it."""

    obj: Obj | None
    recreate: bool = False


def protected(existing: Obj) -> bool:
    """`autoupdate: "false"`: the cluster's admin keeps this object as it is."""
    annotations = (existing.get("metadata") or {}).get("annotations") or {}
    return annotations.get(AUTOUPDATE_ANNOTATION) == "false"


def _merged_metadata(existing: Obj, expected: Obj) -> Obj:
    meta = dict(existing.get("metadata") or {})
    want = expected.get("metadata") or {}
    for key in ("labels", "annotations"):
        merged = {**(want.get(key) or {}), **(meta.get(key) or {})}
        if merged:
            meta[key] = merged
    return meta


def reconcile_role(existing: Obj, expected: Obj) -> Reconciled:
    """`computeReconciledRole` without removal of extra permissions (a ClusterRole or a Role)."""
    if protected(existing):
        return Reconciled(None)
    out = copy.deepcopy(existing)
    out["metadata"] = _merged_metadata(existing, expected)
    rules = [r for r in existing.get("rules") or () if type(r) is dict]
    missing = covers(rules, list(expected.get("rules") or ()))
    if missing:
        out["rules"] = rules + missing
    want_rule, have_rule = expected.get("aggregationRule"), existing.get("aggregationRule")
    if want_rule is None and have_rule is not None:
        out.pop("aggregationRule", None)
    elif want_rule is not None:
        have = list((have_rule or {}).get("clusterRoleSelectors") or [])
        lacking = [
            s for s in want_rule.get("clusterRoleSelectors") or () if not any(semantic_equal(s, h) for h in have)
        ]
        if lacking:
            out["aggregationRule"] = {**(have_rule or {}), "clusterRoleSelectors": have + lacking}
    return Reconciled(None if semantic_equal(out, existing) else out)


def _subject_key(subject: Obj) -> tuple[str, str, str, str]:
    return (
        str(subject.get("kind") or ""),
        str(subject.get("apiGroup") or ""),
        str(subject.get("name") or ""),
        str(subject.get("namespace") or ""),
    )


def reconcile_binding(existing: Obj, expected: Obj) -> Reconciled:
    """`computeReconciledRoleBinding` without removal of extra subjects (a ClusterRoleBinding or a RoleBinding)."""
    if protected(existing):
        return Reconciled(None)
    out = copy.deepcopy(existing)
    out["metadata"] = _merged_metadata(existing, expected)
    subjects = [s for s in existing.get("subjects") or () if type(s) is dict]
    have = {_subject_key(s) for s in subjects}
    lacking = [s for s in expected.get("subjects") or () if _subject_key(s) not in have]
    if lacking:
        out["subjects"] = subjects + copy.deepcopy(lacking)
    if not semantic_equal(existing.get("roleRef"), expected.get("roleRef")):
        out["roleRef"] = copy.deepcopy(expected["roleRef"])
        return Reconciled(out, recreate=True)
    return Reconciled(None if semantic_equal(out, existing) else out)
