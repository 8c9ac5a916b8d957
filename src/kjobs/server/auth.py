"""Who may use the API: kube-apiserver's authentication, reduced to what `kjobs up` issues.

A request is authenticated by a client certificate the TLS handshake verified against the cluster CA
(`--client-ca-file`; the runner puts its subject in the ASGI TLS extension, `scope["extensions"]["tls"]`) or by
the bearer token (`--token-auth-file`). Without either it gets 401 `Unauthorized`, as kube-apiserver answers
when anonymous authentication is off, except on the health and version routes: there a request without any
credential is `system:anonymous`, whom the `system:public-info-viewer` ClusterRole lets `get` exactly `/healthz`,
`/livez`, `/readyz`, `/version` and `/version/` (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go in
kubernetes/kubernetes); a single check (`/readyz/etcd`) is 403 Forbidden, as kube-apiserver answers it.
A ServiceAccount token the server issued (`kjobs.server.satokens`) authenticates its account, which RBAC then
confines to what its bindings grant.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kjobs.api.errors import ApiError
from kjobs.server.authz import AUTHENTICATED, MASTERS, UserInfo, certificate_user

TOKEN_USER = UserInfo("kjobs-admin", (MASTERS, AUTHENTICATED))

PUBLIC_ROUTES = frozenset({"health", "version"})
"""Route kinds (`kjobs.server.routing`) `system:public-info-viewer` lets anyone read."""


def unauthorized() -> ApiError:
    """kube-apiserver's 401 (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go)."""
    return ApiError(401, "Unauthorized", "Unauthorized")


def client_cert_name(scope: dict[str, Any]) -> str | None:
    """The verified client certificate's subject from the ASGI TLS extension (None without one)."""
    tls = (scope.get("extensions") or {}).get("tls") or {}
    name = tls.get("client_cert_name")
    return str(name) if name else None


@dataclass(frozen=True)
class Authenticator:
    """Accepts a CA-verified client certificate (when `client_certs`) or the bearer `token` (when set)."""

    token: str | None = None
    client_certs: bool = True

    def check(
        self, authorization: str, client_cert: str | None, tokens: Callable[[str], UserInfo | None] | None = None
    ) -> UserInfo:
        """The request's user; 401 unless it carries a credential this server issued (`client_cert`: the verified
        certificate's subject, from `client_cert_name`). The bearer token is the admin's, as kind's admin
        kubeconfig is: `kjobs-admin` in `system:masters`, or one `tokens` accepts (a ServiceAccount token:
        `kjobs.server.tokenrest.token_user`)."""
        if self.client_certs and client_cert:
            return certificate_user(client_cert)
        scheme, _, presented = authorization.partition(" ")
        if scheme.lower() == "bearer":
            presented = presented.strip()
            if self.token and hmac.compare_digest(presented.encode(), self.token.encode()):  # '' is no token
                return TOKEN_USER
            user = tokens(presented) if tokens is not None and presented.count(".") == 2 else None
            if user is not None:
                return user
        raise unauthorized()
