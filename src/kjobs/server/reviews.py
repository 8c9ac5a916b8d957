"""The self reviews `kubectl auth whoami` and `kubectl auth can-i [--list]` create (pure; nothing is stored).

kube-apiserver answers them from the request's user (pkg/registry/authentication/selfsubjectreview/rest.go,
pkg/registry/authorization/selfsubjectaccessreview/rest.go, .../selfsubjectrulesreview/rest.go in
kubernetes/kubernetes); what a user may do is `kjobs.server.authz`'s.
"""

from __future__ import annotations

from kjobs.api.errors import ErrorType, FieldError, bad_request, invalid
from kjobs.api.types import Obj
from kjobs.server.authz import Attributes, UserInfo, allowed, rules


def review(kind: str, body: Obj, user: UserInfo, now: str) -> Obj:
    """The answer to creating a self review of `kind` (the body has passed the schema's field checks)."""
    if kind == "SelfSubjectReview":
        return {
            "kind": kind,
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": now},
            "status": {"userInfo": user.to_json()},
        }
    if kind == "SelfSubjectAccessReview":
        return _access_review(body, user)
    if kind == "SelfSubjectRulesReview":
        return _rules_review(body, user)
    raise bad_request(f"not a self review: {kind}")


def _access_review(body: Obj, user: UserInfo) -> Obj:
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
        "status": {"allowed": allowed(user, _attributes(kept))},
    }


def _rules_review(body: Obj, user: UserInfo) -> Obj:
    spec = body.get("spec") or {}
    if not isinstance(spec, dict) or not spec.get("namespace"):
        raise bad_request("no namespace on request")
    resource_rules, non_resource_rules = rules(user)
    return {
        "kind": "SelfSubjectRulesReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {},
        "status": {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": False},
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
