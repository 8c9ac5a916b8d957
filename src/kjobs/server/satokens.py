"""ServiceAccount tokens: JWTs issued by `serviceaccounts/NAME/token` and the authenticator that accepts them.

The claims are pkg/serviceaccount/claims.go `Claims`: `iss`, `sub` (`system:serviceaccount:NS:NAME`), `aud`,
`exp`, `iat`, `nbf`, `jti` (`ServiceAccountTokenJTI`, on in 1.32) and the private `kubernetes.io` claim with the
namespace, the account's name and uid, and the bound pod's or secret's (with a pod, its node's:
`ServiceAccountTokenPodNodeInfo`) or the bound node's, plus `warnafter` for an extended token. Validation is
pkg/serviceaccount/jwt.go (`jwtTokenAuthenticator.AuthenticateToken`: the issuer, the signature, the audiences
against the API's) then claims.go's validator: the token's time, the account and any bound object still there
with the same uid (a deleted pod's token is refused). The user is apiserver's `ServiceAccountInfo.UserInfo`
(staging/src/k8s.io/apiserver/pkg/authentication/serviceaccount/util.go): `system:serviceaccount:NS:NAME`, uid the
account's, groups `system:serviceaccounts` and `system:serviceaccounts:NS` (then `system:authenticated`, which
the authenticator union adds), and `extra` naming the pod, the node and the credential (`JTI=<jti>`).

kjobs signs with HS256 (stdlib `hmac`) under a 256-bit key kept in `<data-dir>/pki/sa.key` (kubeadm's file name)
where kube-apiserver signs with RS256/ES256: only this server verifies its tokens, and it publishes no
`/openid/v1/jwks` for anyone else to.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from kjobs.api.token_requests import API_AUDIENCE
from kjobs.api.types import Obj
from kjobs.server.authz import AUTHENTICATED, UserInfo

ISSUER = API_AUDIENCE
"""kubeadm's `--service-account-issuer`."""
SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"
USERNAME_PREFIX = "system:serviceaccount:"
POD_NAME_KEY = "authentication.kubernetes.io/pod-name"
POD_UID_KEY = "authentication.kubernetes.io/pod-uid"
NODE_NAME_KEY = "authentication.kubernetes.io/node-name"
NODE_UID_KEY = "authentication.kubernetes.io/node-uid"
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"
DEFAULT_LEEWAY = 60
"""go-jose's `jwt.DefaultLeeway`: the seconds of clock skew the time checks allow."""
KEY_FILE = "sa.key"


class TokenInvalid(Exception):
    """A token this issuer signed that does not authenticate anyone: the message is upstream's error text."""


def username(namespace: str, name: str) -> str:
    """apiserver's `MakeUsername`."""
    return f"{USERNAME_PREFIX}{namespace}:{name}"


def load_or_create_key(directory: Path) -> bytes:
    """The signing key in `directory/sa.key` (made once, mode 0600, 32 random bytes as hex).

    A key file that is there but not such a key (another release's format, damage) raises `OSError` naming it,
    as kube-apiserver refuses a `--service-account-key-file` it cannot read: making a new key over it would
    silently void every token signed so far, and the key of the release that wrote it. Only a missing or empty file
    (a start killed between creating and writing it, before any token was signed) gets a new key.
    """
    path = directory / KEY_FILE
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as err:
        raise OSError(f"cannot read the ServiceAccount signing key {path}: {err}") from None
    if text:
        try:
            if len(text) < 64:
                raise ValueError("too short")
            return bytes.fromhex(text)
        except ValueError:
            raise OSError(
                f"the ServiceAccount signing key {path} is not the 64 or more hex digits this kjobs reads (a newer"
                " kjobs wrote it, or it is damaged): restore it, or remove it to sign with a new key (every"
                " ServiceAccount token issued so far is then refused)"
            ) from None
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(key.hex() + "\n")
    return key


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _ref(obj: Obj) -> Obj:
    meta = obj.get("metadata") or {}
    out: Obj = {}
    if meta.get("name"):
        out["name"] = meta["name"]
    if meta.get("uid"):
        out["uid"] = meta["uid"]
    return out


@dataclass(frozen=True)
class BoundObjects:
    """What a token is bound to: a pod (with its node, when known), a secret, or a node alone."""

    pod: Obj | None = None
    secret: Obj | None = None
    node: Obj | None = None


Getter = Callable[[str, str, str], Obj | None]
"""(resource, namespace, name) -> the stored object, or None."""


class TokenIssuer:
    """Issues and verifies the server's ServiceAccount tokens under one key."""

    def __init__(self, key: bytes | None = None, *, audiences: tuple[str, ...] = (API_AUDIENCE,)) -> None:
        self.key = key if key is not None else secrets.token_bytes(32)
        self.audiences = audiences
        self.key_id = _b64(hashlib.sha256(self.key).digest()[:16])

    # -- issuing ---------------------------------------------------------------------------------------------

    def claims(
        self,
        account: Obj,
        bound: BoundObjects,
        expiration_seconds: int,
        warn_after: int,
        audiences: list[str],
        now: float,
    ) -> Obj:
        """claims.go `Claims`, as the JSON the token carries."""
        meta = account.get("metadata") or {}
        namespace = str(meta.get("namespace") or "")
        issued = int(now)
        private: Obj = {"namespace": namespace, "serviceaccount": _ref(account)}
        if bound.pod is not None:
            private["pod"] = _ref(bound.pod)
            if bound.node is not None:
                private["node"] = _ref(bound.node)
        elif bound.secret is not None:
            private["secret"] = _ref(bound.secret)
        elif bound.node is not None:
            private["node"] = _ref(bound.node)
        if warn_after:
            private["warnafter"] = issued + warn_after
        return {
            "aud": list(audiences),
            "exp": issued + expiration_seconds,
            "iat": issued,
            "iss": ISSUER,
            "jti": str(uuid.uuid4()),
            "kubernetes.io": private,
            "nbf": issued,
            "sub": username(namespace, str(meta.get("name") or "")),
        }

    def sign(self, claims: Obj) -> str:
        """The compact JWS of `claims` (HS256)."""
        header = _b64(orjson.dumps({"alg": "HS256", "kid": self.key_id}))
        payload = _b64(orjson.dumps(claims, option=orjson.OPT_SORT_KEYS))
        signature = hmac.new(self.key, f"{header}.{payload}".encode(), hashlib.sha256).digest()
        return f"{header}.{payload}.{_b64(signature)}"

    # -- verifying ---------------------------------------------------------------------------------------------

    def verified_claims(self, token: str, requested: tuple[str, ...] = ()) -> tuple[Obj, list[str]] | None:
        """jwt.go's checks before the validator: None for a token that is not one of this issuer's (another
        authenticator's to answer); `TokenInvalid` for a bad signature or audience. Returns the claims and the
        audiences the token is good for (its own intersected with `requested`, default the API's)."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            payload = orjson.loads(_unb64(parts[1]))
            signature = _unb64(parts[2])
        except (binascii.Error, ValueError, orjson.JSONDecodeError):
            return None
        if not isinstance(payload, dict) or payload.get("iss") != ISSUER:  # `hasCorrectIssuer`
            return None
        expected = hmac.new(self.key, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(expected, signature):
            raise TokenInvalid("go-jose/go-jose: error in cryptographic primitive")
        audience: Any = payload.get("aud")
        token_audiences = [audience] if isinstance(audience, str) else [str(a) for a in audience or ()]
        if not token_audiences:  # a legacy token: the API's audiences only
            token_audiences = list(self.audiences)
        wanted = list(requested) or list(self.audiences)
        good = [a for a in token_audiences if a in wanted]
        if not good:
            raise TokenInvalid(
                f"token audiences {_go_quoted(token_audiences)} is invalid for the target audiences "
                f"{_go_quoted(wanted)}"
            )
        return payload, good


def _go_quoted(values: list[str]) -> str:
    """Go's `%q` of a string slice: `["a" "b"]`."""
    return "[" + " ".join(orjson.dumps(v).decode() for v in values) + "]"


def _deleted_before(obj: Obj, limit: float) -> bool:
    from kjobs.api.timeutil import parse_time

    stamp = (obj.get("metadata") or {}).get("deletionTimestamp")
    if not stamp:
        return False
    try:
        return parse_time(str(stamp)) < limit
    except ValueError:
        return False


def validate(claims: Obj, get: Getter, now: float | None = None) -> UserInfo:
    """claims.go's validator over verified `claims`: the time window, then the account and the bound objects
    as stored now (`get`); the user on success, `TokenInvalid` with upstream's text otherwise."""
    now = time.time() if now is None else now
    exp, nbf = claims.get("exp"), claims.get("nbf")
    if isinstance(exp, (int, float)) and now > exp + DEFAULT_LEEWAY:
        raise TokenInvalid("service account token has expired")
    if isinstance(nbf, (int, float)) and now < nbf - DEFAULT_LEEWAY:
        raise TokenInvalid("service account token is not valid yet")
    private = claims.get("kubernetes.io")
    if not isinstance(private, dict):
        raise TokenInvalid("service account token claims could not be validated due to unexpected private claim")
    invalid_if_deleted_before = now - DEFAULT_LEEWAY
    namespace = str(private.get("namespace") or "")
    sa_ref = private.get("serviceaccount") or {}
    sa_name, sa_uid = str(sa_ref.get("name") or ""), str(sa_ref.get("uid") or "")
    account = get("serviceaccounts", namespace, sa_name)
    if account is None:
        raise TokenInvalid(f'serviceaccounts "{sa_name}" not found')
    if _deleted_before(account, invalid_if_deleted_before):
        raise TokenInvalid(f"service account {namespace}/{sa_name} has been deleted")
    stored_uid = str((account.get("metadata") or {}).get("uid") or "")
    if stored_uid != sa_uid:
        raise TokenInvalid(f"service account UID ({stored_uid}) does not match claim ({sa_uid})")
    secret_ref, pod_ref, node_ref = private.get("secret"), private.get("pod"), private.get("node")
    if isinstance(secret_ref, dict):
        secret = get("secrets", namespace, str(secret_ref.get("name") or ""))
        if secret is None or _deleted_before(secret, invalid_if_deleted_before):
            raise TokenInvalid("service account token has been invalidated")
        uid = str((secret.get("metadata") or {}).get("uid") or "")
        if uid != secret_ref.get("uid"):
            claimed = secret_ref.get("uid")
            raise TokenInvalid(f"secret UID ({uid}) does not match service account secret ref claim ({claimed})")
    extra: dict[str, str] = {}
    if isinstance(pod_ref, dict):
        pod = get("pods", namespace, str(pod_ref.get("name") or ""))
        if pod is None or _deleted_before(pod, invalid_if_deleted_before):
            raise TokenInvalid("service account token has been invalidated")
        uid = str((pod.get("metadata") or {}).get("uid") or "")
        if uid != pod_ref.get("uid"):
            raise TokenInvalid(f"pod UID ({uid}) does not match service account pod ref claim ({pod_ref.get('uid')})")
        extra[POD_NAME_KEY], extra[POD_UID_KEY] = str(pod_ref.get("name") or ""), uid
    if isinstance(node_ref, dict):
        if not isinstance(pod_ref, dict):  # a node-bound token: the node must still be there
            node = get("nodes", "", str(node_ref.get("name") or ""))
            if node is None or _deleted_before(node, invalid_if_deleted_before):
                raise TokenInvalid("service account token has been invalidated")
            uid = str((node.get("metadata") or {}).get("uid") or "")
            if uid != node_ref.get("uid"):
                claimed = node_ref.get("uid")
                raise TokenInvalid(f"node UID ({uid}) does not match service account node ref claim ({claimed})")
        if node_ref.get("name"):
            extra[NODE_NAME_KEY] = str(node_ref["name"])
            if node_ref.get("uid"):
                extra[NODE_UID_KEY] = str(node_ref["uid"])
    if claims.get("jti"):
        extra[CREDENTIAL_ID_KEY] = f"JTI={claims['jti']}"
    return UserInfo(
        username(namespace, sa_name),
        (SERVICE_ACCOUNTS_GROUP, f"{SERVICE_ACCOUNTS_GROUP}:{namespace}", AUTHENTICATED),
        tuple((key, (extra[key],)) for key in sorted(extra)),
        uid=sa_uid,
    )
