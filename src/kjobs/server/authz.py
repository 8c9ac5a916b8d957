"""Who a request acts as, and what that user may do: impersonation and authorization (pure).

Every credential `kjobs up` issues belongs to `system:masters` (README, "Who can use the API"), which
kube-apiserver's authorizer allows everything, impersonation included. `kubectl --as=NAME [--as-group=G]` then
acts as another user (the `Impersonate-*` headers: staging/src/k8s.io/apiserver/pkg/endpoints/filters/
impersonation.go in kubernetes/kubernetes), who holds what RBAC's bootstrap policy grants when no other binding
exists, since kjobs serves no RBAC objects: `cluster-admin` to `system:masters`, and to every authenticated user
`system:basic-user` (the self reviews), `system:discovery` and `system:public-info-viewer`
(plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go). Anything else is 403 Forbidden, worded as
kube-apiserver words it (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from kjobs.api.errors import ApiError, bad_request
from kjobs.api.types import Obj

MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"


@dataclass(frozen=True)
class UserInfo:
    """Who made a request, as authentication (and impersonation) report it (`user.Info`)."""

    username: str
    groups: tuple[str, ...]
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()
    uid: str = ""

    def to_json(self) -> Obj:
        """`authentication.k8s.io/v1` UserInfo (empty `uid` and `extra` omitted, as Go's JSON omits them)."""
        out: Obj = {"username": self.username}
        if self.uid:
            out["uid"] = self.uid
        out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {key: list(values) for key, values in self.extra}
        return out


ANONYMOUS_USER = UserInfo(ANONYMOUS, (UNAUTHENTICATED,))
"""A request without credentials on a path anyone may read (the anonymous authenticator's user)."""
UNSECURED = UserInfo("system:unsecured", (MASTERS, AUTHENTICATED))
"""The user of a server without authentication (`--insecure-http-loopback`, in-process), as kube-apiserver's
former insecure port named it."""


@functools.lru_cache(maxsize=64)
def certificate_user(subject: str) -> UserInfo:
    """The user of a verified client certificate: its common name, its organizations as groups (x509 request
    authentication: staging/src/k8s.io/apiserver/pkg/authentication/request/x509/x509.go), plus
    `system:authenticated`. `subject` is the runner's `commonName=...,organizationName=...`."""
    name, groups = "", []
    for part in subject.split(","):
        key, _, value = part.partition("=")
        if key in ("commonName", "CN"):
            name = value
        elif key in ("organizationName", "O"):
            groups.append(value)
    return UserInfo(name, (*groups, AUTHENTICATED))


@dataclass(frozen=True)
class Attributes:
    """What a request asks to do (`authorizer.Attributes`): a verb on a resource, or on a non-resource path."""

    verb: str
    resource: str = ""
    group: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""
    is_resource: bool = True
    """A resource request (else a non-resource one, named by `path`)."""


ALL_RESOURCES: Obj = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
ALL_URLS: Obj = {"verbs": ["*"], "nonResourceURLs": ["*"]}
BASIC_USER: list[Obj] = [
    {
        "verbs": ["create"],
        "apiGroups": ["authorization.k8s.io"],
        "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
    },
    {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]},
]
DISCOVERY: Obj = {
    "verbs": ["get"],
    "nonResourceURLs": [
        "/livez", "/readyz", "/healthz", "/version", "/version/", "/openapi", "/openapi/*", "/api", "/api/*",
        "/apis", "/apis/*",
    ],
}  # fmt: skip
PUBLIC_INFO: Obj = {"verbs": ["get"], "nonResourceURLs": ["/livez", "/readyz", "/healthz", "/version", "/version/"]}


def rules(user: UserInfo) -> tuple[list[Obj], list[Obj]]:
    """The (resource, non-resource) rules RBAC's bootstrap bindings give `user`."""
    masters = MASTERS in user.groups
    authenticated = AUTHENTICATED in user.groups
    resource = [*([ALL_RESOURCES] if masters else []), *(BASIC_USER if authenticated else [])]
    non_resource = [*([ALL_URLS] if masters else []), *([DISCOVERY] if authenticated else []), PUBLIC_INFO]
    return resource, non_resource


def _url_matches(pattern: str, path: str) -> bool:
    if pattern == "*" or pattern == path:
        return True
    return pattern.endswith("*") and path.startswith(pattern[:-1])


def allowed(user: UserInfo, attrs: Attributes) -> bool:
    """Whether `user` may do `attrs` (RBAC's rule matching: `*` for any verb, group, resource or URL suffix)."""
    resource_rules, url_rules = rules(user)
    if not attrs.is_resource:
        return any(
            (attrs.verb in r["verbs"] or "*" in r["verbs"])
            and any(_url_matches(u, attrs.path) for u in r["nonResourceURLs"])
            for r in url_rules
        )
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    return any(
        (attrs.verb in r["verbs"] or "*" in r["verbs"])
        and (attrs.group in r["apiGroups"] or "*" in r["apiGroups"])
        and (resource in r["resources"] or "*" in r["resources"])
        and (not r.get("resourceNames") or attrs.name in r["resourceNames"])
        for r in resource_rules
    )


def forbidden(user: UserInfo, attrs: Attributes) -> ApiError:
    """kube-apiserver's 403 for a request its authorizer did not allow (`responsewriters.Forbidden`)."""
    if not attrs.is_resource:
        message = f'forbidden: User "{user.username}" cannot {attrs.verb} path "{attrs.path}"'
        return ApiError(403, "Forbidden", message, details={})
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    reason = f'User "{user.username}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.group}" {where}'
    qualified = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    details: Obj = {"name": attrs.name, "kind": attrs.resource} if attrs.name else {"kind": attrs.resource}
    if attrs.group:
        details["group"] = attrs.group
    return ApiError(403, "Forbidden", f"{subject} is forbidden: {reason}", details=details)


def impersonate(requestor: UserInfo, headers: list[tuple[str, str]]) -> UserInfo:
    """The user a request acts as after its `Impersonate-User`/`-Group`/`-Uid`/`-Extra-*` headers (lower-cased
    names), each of which `requestor` must be allowed to impersonate. Groups or extras without a user are refused
    with 400 (kube-apiserver answers 500 there; a malformed request is the client's error)."""
    user, uid = "", ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for name, value in headers:
        if name == "impersonate-user":
            user = user or value
        elif name == "impersonate-group":
            groups.append(value)
        elif name == "impersonate-uid":
            uid = uid or value
        elif name.startswith("impersonate-extra-"):
            extra.setdefault(name[len("impersonate-extra-") :], []).append(value)
    if not (user or groups or extra or uid):
        return requestor
    if not user:
        raise bad_request("requested impersonation of groups, extras or a uid without impersonating a user")
    for attrs in _acting_as(user, groups, uid, extra):
        if not allowed(requestor, attrs):
            raise forbidden(requestor, attrs)
    parts = user.split(":")
    if len(parts) == 4 and parts[:2] == ["system", "serviceaccount"] and not groups:
        groups = ["system:serviceaccounts", f"system:serviceaccounts:{parts[2]}"]
    if user == ANONYMOUS:
        if UNAUTHENTICATED not in groups:
            groups.append(UNAUTHENTICATED)
    elif AUTHENTICATED not in groups and UNAUTHENTICATED not in groups:
        groups.append(AUTHENTICATED)
    return UserInfo(user, tuple(groups), tuple((k, tuple(v)) for k, v in extra.items()), uid)


def _acting_as(user: str, groups: list[str], uid: str, extra: dict[str, list[str]]) -> list[Attributes]:
    parts = user.split(":")
    if len(parts) == 4 and parts[:2] == ["system", "serviceaccount"]:
        acting = [Attributes("impersonate", "serviceaccounts", namespace=parts[2], name=parts[3])]
    else:
        acting = [Attributes("impersonate", "users", name=user)]
    acting += [Attributes("impersonate", "groups", name=g) for g in groups]
    if uid:
        acting.append(Attributes("impersonate", "uids", group="authentication.k8s.io", name=uid))
    acting += [
        Attributes("impersonate", "userextras", group="authentication.k8s.io", subresource=k, name=v)
        for k, values in extra.items()
        for v in values
    ]
    return acting
