"""Who a request acts as, and what that user may do: impersonation and authorization (pure).

Every credential `kjobs up` issues belongs to `system:masters` (README, "Who can use the API"), which
kube-apiserver's privileged-group authorizer allows everything, impersonation included, before RBAC is asked.
`kubectl --as=NAME [--as-group=G]` then acts as another user (the `Impersonate-*` headers: staging/src/k8s.io/
apiserver/pkg/endpoints/filters/impersonation.go in kubernetes/kubernetes), who may do what the stored RBAC
roles and bindings grant it (`kjobs.server.rbac`; the bootstrap policy gives every authenticated user
`system:basic-user`, `system:discovery` and `system:public-info-viewer`). Anything else is 403 Forbidden,
worded as kube-apiserver words it (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/
errors.go).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
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


Authorizer = Callable[[UserInfo, Attributes], bool]
"""Whether a user may do something: `kjobs.server.rbac.RbacAuthorizer.allowed`."""


def forbidden(user: UserInfo, attrs: Attributes, reason: str = "") -> ApiError:
    """kube-apiserver's 403 for a request its authorizer did not allow (`responsewriters.Forbidden`), with the
    authorizer's reason after a colon when it gave one."""
    suffix = f": {reason}" if reason else ""
    if not attrs.is_resource:
        message = f'forbidden: User "{user.username}" cannot {attrs.verb} path "{attrs.path}"{suffix}'
        return ApiError(403, "Forbidden", message, details={})
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    denied = f'User "{user.username}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.group}" {where}'
    qualified = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    details: Obj = {"name": attrs.name, "kind": attrs.resource} if attrs.name else {"kind": attrs.resource}
    if attrs.group:
        details["group"] = attrs.group
    return ApiError(403, "Forbidden", f"{subject} is forbidden: {denied}{suffix}", details=details)


def impersonate(requestor: UserInfo, headers: list[tuple[str, str]], allowed: Authorizer) -> UserInfo:
    """The user a request acts as after its `Impersonate-User`/`-Group`/`-Uid`/`-Extra-*` headers (lower-cased
    names), each of which `requestor` must be `allowed` to impersonate. Groups or extras without a user are refused
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
