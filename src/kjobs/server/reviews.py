"""The self reviews `kubectl auth whoami` and `kubectl auth can-i [--list]` create (pure; nothing is stored).

kube-apiserver answers them from the request's user (pkg/registry/authentication/selfsubjectreview/rest.go,
pkg/registry/authorization/selfsubjectaccessreview/rest.go, .../selfsubjectrulesreview/rest.go in
kubernetes/kubernetes). Every credential `kjobs up` issues belongs to the group `system:masters` (README, "Who can
use the API"), which kube-apiserver's authorizer allows everything, so an access review is allowed for them; the
rules a rules review lists are those RBAC's bootstrap policy binds to `system:masters` (`cluster-admin`) and to
every authenticated user (`system:basic-user`, `system:discovery`, `system:public-info-viewer`:
plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go).
"""

from __future__ import annotations

from dataclasses import dataclass

from kjobs.api.errors import ErrorType, FieldError, bad_request, invalid
from kjobs.api.types import Obj

MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"


@dataclass(frozen=True)
class UserInfo:
    """Who made a request, as an authenticator reports it (`user.Info`)."""

    username: str
    groups: tuple[str, ...]

    def to_json(self) -> Obj:
        """`authentication.k8s.io/v1` UserInfo (empty `uid` and `extra` omitted, as Go's JSON omits them)."""
        return {"username": self.username, "groups": list(self.groups)}


UNSECURED = UserInfo("system:unsecured", (MASTERS, AUTHENTICATED))
"""The user of a server without authentication (`--insecure-http-loopback`, in-process), as kube-apiserver's
former insecure port named it."""


def certificate_user(subject: str) -> UserInfo:
    """The user of a verified client certificate: its common name, its organizations as groups (x509 request
    authentication, staging/src/k8s.io/apiserver/pkg/authentication/request/x509/x509.go), plus
    `system:authenticated`. `subject` is the runner's `commonName=...,organizationName=...`."""
    name, groups = "", []
    for part in subject.split(","):
        key, _, value = part.partition("=")
        if key in ("commonName", "CN"):
            name = value
        elif key in ("organizationName", "O"):
            groups.append(value)
    return UserInfo(name, (*groups, AUTHENTICATED))


_ALL_RESOURCES: Obj = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
_ALL_URLS: Obj = {"verbs": ["*"], "nonResourceURLs": ["*"]}
_BASIC_USER: list[Obj] = [
    {
        "verbs": ["create"],
        "apiGroups": ["authorization.k8s.io"],
        "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
    },
    {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]},
]
_DISCOVERY: Obj = {
    "verbs": ["get"],
    "nonResourceURLs": [
        "/livez", "/readyz", "/healthz", "/version", "/version/", "/openapi", "/openapi/*", "/api", "/api/*",
        "/apis", "/apis/*",
    ],
}  # fmt: skip
_PUBLIC_INFO: Obj = {"verbs": ["get"], "nonResourceURLs": ["/livez", "/readyz", "/healthz", "/version", "/version/"]}


def _allowed(user: UserInfo) -> bool:
    return MASTERS in user.groups


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
        "status": {"allowed": True} if _allowed(user) else {"allowed": False},
    }


def _rules_review(body: Obj, user: UserInfo) -> Obj:
    spec = body.get("spec") or {}
    if not isinstance(spec, dict) or not spec.get("namespace"):
        raise bad_request("no namespace on request")
    resource_rules = [*([_ALL_RESOURCES] if _allowed(user) else []), *_BASIC_USER]
    non_resource_rules = [*([_ALL_URLS] if _allowed(user) else []), _DISCOVERY, _PUBLIC_INFO]
    return {
        "kind": "SelfSubjectRulesReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {},
        "status": {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": False},
    }
