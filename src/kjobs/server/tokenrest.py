"""`serviceaccounts/NAME/token` and `tokenreviews`: issuing ServiceAccount tokens and answering who one is.

`create_token` is pkg/registry/core/serviceaccount/storage/token.go `TokenREST.Create` as of 1.32: the body's
name and namespace must match the URL's, the account must exist, the request is defaulted and validated
(`kjobs.api.token_requests`), a `boundObjectRef` must name a Pod running as the account (its node's name and uid
are added to the claims: `ServiceAccountTokenPodNodeInfo`), a Secret or a Node (`ServiceAccountTokenNodeBinding`,
beta and on), with a matching uid when one is given; the audiences default to the API's, and a pod-bound 3607 s
token for the API's audiences is valid a year, with `warnafter` at 3607 s (`--service-account-extend-token-
expiration`, on by default). The answer's `status.expirationTimestamp` is the requested lifetime from now, as
upstream writes it (not the extended one). `--service-account-max-token-expiration` is unset, as kubeadm leaves it.

`token_review` is pkg/registry/authentication/tokenreview/storage.go: `spec.token` is required; the status says
whether the token authenticates (`authenticated`, `user`, the `audiences` it is good for, or `error`). Only the
tokens this server issues are reviewed: the admin's bearer token and client certificates are not tokens a
TokenReview is asked about (kube-apiserver's static-token file would be; kjobs' admin token is answered as
unauthenticated).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kjobs.api.errors import ApiError, ErrorType, FieldError, bad_request, conflict, invalid, not_found
from kjobs.api.timeutil import format_time
from kjobs.api.token_requests import (
    EXPIRATION_EXTENSION_SECONDS,
    WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS,
    default_token_request,
    validate_token_request,
)
from kjobs.api.types import Obj
from kjobs.server.authz import UserInfo
from kjobs.server.gotypes import first_type_error
from kjobs.server.satokens import BoundObjects, TokenInvalid, validate

if TYPE_CHECKING:
    from kjobs.server.service import ApiService

GROUP = "authentication.k8s.io"


def _getter(service: ApiService) -> Any:
    def get(resource: str, namespace: str, name: str) -> Obj | None:
        return service.store.get(resource, namespace, name, shared=True)

    return get


def create_token(service: ApiService, namespace: str, name: str, body: Any) -> Obj:
    """POST serviceaccounts/NAME/token: the TokenRequest with its `status.token` (see the module note)."""
    if not isinstance(body, dict):
        raise bad_request(
            'TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot unmarshal '
            "into Go value of type struct"
        )
    api_version = body.get("apiVersion")
    if api_version not in (None, "", f"{GROUP}/v1"):
        raise bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version ({GROUP}/v1)"
        )
    mistyped = first_type_error(body, "TokenRequest", group=GROUP)  # decoded into the Go struct
    if mistyped is not None:
        raise bad_request(f'TokenRequest in version "v1" cannot be handled as a TokenRequest: {mistyped}')
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    if meta.get("name") and meta["name"] != name:
        error = FieldError(
            "metadata.name",
            ErrorType.FieldValueInvalid,
            "must match the service account name if specified",
            meta["name"],
        )
        raise invalid("TokenRequest", name, [error], group=GROUP)
    if meta.get("namespace") and meta["namespace"] != namespace:
        error = FieldError(
            "metadata.namespace",
            ErrorType.FieldValueInvalid,
            "must match the service account namespace if specified",
            meta["namespace"],
        )
        raise invalid("TokenRequest", name, [error], group=GROUP)
    account = service.store.get("serviceaccounts", namespace, name, shared=True)
    if account is None:
        raise not_found("serviceaccounts", name)
    request = default_token_request(body)
    spec: Obj = dict(request.get("spec") or {})
    errors = validate_token_request(request)
    if errors:
        raise invalid("TokenRequest", "", errors, group=GROUP)
    bound = _bound_objects(service, namespace, name, spec.get("boundObjectRef"))
    if not spec.get("audiences"):
        spec["audiences"] = list(service.tokens.audiences)
    seconds = int(spec["expirationSeconds"])
    exp, warn_after = seconds, 0
    if (
        bound.pod is not None
        and seconds == WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS
        and all(a in service.tokens.audiences for a in spec["audiences"])
    ):
        exp, warn_after = EXPIRATION_EXTENSION_SECONDS, seconds
    now = service.clock()
    claims = service.tokens.claims(account, bound, exp, warn_after, list(spec["audiences"]), now)
    account_meta = account.get("metadata") or {}
    out_meta = {k: v for k, v in meta.items() if v not in (None, "", {}, [])}
    out_meta.setdefault("name", account_meta.get("name"))
    out_meta.setdefault("namespace", account_meta.get("namespace"))
    out_meta["creationTimestamp"] = format_time(now)
    return {
        "kind": "TokenRequest",
        "apiVersion": f"{GROUP}/v1",
        "metadata": out_meta,
        "spec": spec,
        "status": {"token": service.tokens.sign(claims), "expirationTimestamp": format_time(int(now) + seconds)},
    }


def _bound_objects(service: ApiService, namespace: str, account: str, ref: Any) -> BoundObjects:
    """The objects `boundObjectRef` names, checked as `TokenREST.Create` checks them."""
    if not isinstance(ref, dict):
        return BoundObjects()
    kind, api_version = str(ref.get("kind") or ""), str(ref.get("apiVersion") or "")
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    version = api_version.rpartition("/")[2]
    ref_name = str(ref.get("name") or "")
    store = service.store
    bound: BoundObjects
    if group == "" and kind == "Pod":
        pod = store.get("pods", namespace, ref_name, shared=True)
        if pod is None:
            raise not_found("pods", ref_name)
        if (pod.get("spec") or {}).get("serviceAccountName") != account:
            raise bad_request(
                f'cannot bind token for serviceaccount "{account}" to pod running with different serviceaccount name.'
            )
        node_name = str((pod.get("spec") or {}).get("nodeName") or "")
        node = None
        if node_name:  # a missing node still names the node, without a uid
            node = store.get("nodes", "", node_name, shared=True) or {"metadata": {"name": node_name}}
        bound = BoundObjects(pod=pod, node=node)
        target = pod
    elif group == "" and kind == "Node":
        found = store.get("nodes", "", ref_name, shared=True)
        if found is None:
            raise not_found("nodes", ref_name)
        bound, target = BoundObjects(node=found), found
    elif group == "" and kind == "Secret":
        secret = store.get("secrets", namespace, ref_name, shared=True)
        if secret is None:
            raise not_found("secrets", ref_name)
        bound, target = BoundObjects(secret=secret), secret
    else:
        shown = f"{group}/{version}, Kind={kind}" if group else f"/{version}, Kind={kind}"
        raise bad_request(f"cannot bind token to object of type {shown}")
    uid = str((target.get("metadata") or {}).get("uid") or "")
    if ref.get("uid") and ref["uid"] != uid:
        error = conflict(kind, ref_name, group=group)
        raise ApiError(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {kind} "{ref_name}": the UID in the bound object reference '
            f"({ref['uid']}) does not match the UID in record. The object might have been deleted and then recreated",
            details=error.details,
        )
    return bound


def authenticate(service: ApiService, token: str, audiences: tuple[str, ...] = ()) -> tuple[UserInfo, list[str]] | None:
    """The user a ServiceAccount token authenticates and the audiences it is good for; None for a token this
    server did not issue; `TokenInvalid` for one it did that no longer authenticates anyone."""
    verified = service.tokens.verified_claims(token, audiences)
    if verified is None:
        return None
    claims, good = verified
    return validate(claims, _getter(service), service.clock()), good


def token_user(service: ApiService, token: str) -> UserInfo | None:
    """The bearer token's user for a request to this API (None: not authenticated)."""
    try:
        found = authenticate(service, token)
    except TokenInvalid:
        return None
    return found[0] if found is not None else None


def token_review(service: ApiService, body: Obj) -> Obj:
    """The answer to a TokenReview (see the module note)."""
    spec = body.get("spec") if isinstance(body.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    token = str(spec.get("token") or "")
    if not token:
        raise bad_request("token is required for TokenReview in authentication")
    audiences = tuple(str(a) for a in spec.get("audiences") or ())
    status: Obj = {"authenticated": False, "user": {}}
    try:
        found = authenticate(service, token, audiences)
    except TokenInvalid as exc:
        status["error"] = str(exc)
        found = None
    if found is not None:
        user, good = found
        status = {"authenticated": True, "user": user.to_json(), "audiences": good}
    meta = {k: v for k, v in (body.get("metadata") or {}).items() if v not in (None, "", {}, [])}
    meta["creationTimestamp"] = None
    out_spec: Obj = {"token": token}
    if audiences:
        out_spec["audiences"] = list(audiences)
    return {"kind": "TokenReview", "apiVersion": f"{GROUP}/v1", "metadata": meta, "spec": out_spec, "status": status}
