"""The self reviews `kubectl auth whoami` and `kubectl auth can-i [--list]` create (pure; nothing is stored).

kube-apiserver answers them from the request's user (pkg/registry/authentication/selfsubjectreview/rest.go,
pkg/registry/authorization/selfsubjectaccessreview/rest.go, .../selfsubjectrulesreview/rest.go in
kubernetes/kubernetes); what a user may do is `kjobs.server.authz`'s.
"""

from __future__ import annotations

from kjobs.api.errors import ErrorType, FieldError, bad_request, invalid
from kjobs.api.types import Obj
from kjobs.server.authz import Attributes, UserInfo
from kjobs.server.rbac import RbacAuthorizer


def review(kind: str, body: Obj, user: UserInfo, now: str, rbac: RbacAuthorizer) -> Obj:
    """The answer to creating a self review of `kind` (the body has passed the schema's field checks); what the
    user may do is `rbac`'s answer."""
    if kind == "SelfSubjectReview":
        return {
            "kind": kind,
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": now},
            "status": {"userInfo": user.to_json()},
        }
    if kind == "SelfSubjectAccessReview":
        return _access_review(body, user, rbac)
    if kind == "SelfSubjectRulesReview":
        return _rules_review(body, user, rbac)
    raise bad_request(f"not a self review: {kind}")


def _access_review(body: Obj, user: UserInfo, rbac: RbacAuthorizer) -> Obj:
    spec = body.get("spec") or {}
    if not isinstance(spec, dict):
        spec = {}
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    errors: list[FieldError] = []
    if resource is not None and non_resource is not None:
        errors.append(
            FieldError(
                "spec.nonResourceAttributes",
                ErrorType.FieldValueInvalid,
                "cannot be specified in combination with resourceAttributes",
                non_resource,
            )
        )
    if resource is None and non_resource is None:
        errors.append(
            FieldError(
                "spec.resourceAttributes",
                ErrorType.FieldValueInvalid,
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
                None,
            )
        )
    meta = {
        k: v for k, v in (body.get("metadata") or {}).items() if k != "managedFields" and v not in (None, "", {}, [])
    }
    if meta:
        errors.append(FieldError("metadata", ErrorType.FieldValueInvalid, "must be empty", meta))
    if errors:
        raise invalid("SelfSubjectAccessReview", "", errors, group="authorization.k8s.io")
    kept = {k: v for k, v in spec.items() if v is not None}
    return {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": kept,
        "status": _decision(*rbac.authorize(user, _attributes(kept))),
    }


def _decision(allowed: bool, reason: str) -> Obj:
    """`SubjectAccessReviewStatus`: `allowed`, and the authorizer's reason when it gave one."""
    return {"allowed": allowed, "reason": reason} if reason else {"allowed": allowed}


def _rules_review(body: Obj, user: UserInfo, rbac: RbacAuthorizer) -> Obj:
    """`RulesFor` in the namespace asked, split as `getResourceRules` / `getNonResourceRules` split the rules; a
    missing role makes it `incomplete`, with the errors as `evaluationError` (an aggregate's text)."""
    spec = body.get("spec") or {}
    if not isinstance(spec, dict) or not spec.get("namespace"):
        raise bad_request("no namespace on request")
    found = rbac.rules_for(user, str(spec["namespace"]))
    resource_rules: list[Obj] = []
    non_resource_rules: list[Obj] = []
    for rule in found.rules:
        verbs = list(rule.get("verbs") or [])
        if rule.get("nonResourceURLs"):
            non_resource_rules.append({"verbs": verbs, "nonResourceURLs": list(rule["nonResourceURLs"])})
            continue
        out: Obj = {"verbs": verbs}
        for key in ("apiGroups", "resources", "resourceNames"):
            if rule.get(key):
                out[key] = list(rule[key])
        resource_rules.append(out)
    status: Obj = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": False}
    if found.errors:
        status["incomplete"] = True
        errors = found.errors
        status["evaluationError"] = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return {
        "kind": "SelfSubjectRulesReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {},
        "status": status,
    }


def _attributes(spec: Obj) -> Attributes:
    """What an access review asks about (`ResourceAttributesFrom` / `NonResourceAttributesFrom`)."""
    resource = spec.get("resourceAttributes")
    if isinstance(resource, dict):
        return Attributes(
            str(resource.get("verb") or ""),
            str(resource.get("resource") or ""),
            group=str(resource.get("group") or ""),
            subresource=str(resource.get("subresource") or ""),
            namespace=str(resource.get("namespace") or ""),
            name=str(resource.get("name") or ""),
        )
    path = spec.get("nonResourceAttributes") or {}
    return Attributes(str(path.get("verb") or ""), path=str(path.get("path") or ""), is_resource=False)
