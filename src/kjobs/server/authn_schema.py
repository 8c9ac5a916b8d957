"""The OpenAPI schemas of `authentication.k8s.io/v1` TokenRequest and TokenReview, which the shipped schemas lack.

Written, like `kjobs.server.metrics_schema`, in the v3 form of the shipped schemas, from
staging/src/k8s.io/api/authentication/v1/types.go (the Go comments shortened to their first sentences), so that
strict field validation and `kubectl explain` know the bodies `serviceaccounts/NAME/token` and `tokenreviews`
take (`kjobs.server.satokens`).
"""

from __future__ import annotations

from typing import Any

_PREFIX = "io.k8s.api.authentication.v1."
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_REF = "#/components/schemas/"

_API_VERSION_DOC = (
    "APIVersion defines the versioned schema of this representation of an object. Servers should convert "
    "recognized schemas to the latest internal value, and may reject unrecognized values. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
)
_KIND_DOC = (
    "Kind is a string value representing the REST resource this object represents. Servers may infer this from "
    "the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)
_METADATA_DOC = (
    "Standard object's metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)


def _wrapped(ref: str, description: str) -> dict[str, Any]:
    return {"allOf": [{"$ref": _REF + ref}], "description": description}


def _string_list(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "items": {"type": "string"},
        "type": "array",
        "x-kubernetes-list-type": "atomic",
    }


def _top(kind: str, description: str, spec_doc: str, status_doc: str) -> dict[str, Any]:
    return {
        "description": description,
        "properties": {
            "apiVersion": {"description": _API_VERSION_DOC, "type": "string"},
            "kind": {"description": _KIND_DOC, "type": "string"},
            "metadata": _wrapped(_META + "ObjectMeta", _METADATA_DOC),
            "spec": _wrapped(_PREFIX + kind + "Spec", spec_doc),
            "status": _wrapped(_PREFIX + kind + "Status", status_doc),
        },
        "required": ["spec"],
        "type": "object",
        "x-kubernetes-group-version-kind": [{"group": "authentication.k8s.io", "kind": kind, "version": "v1"}],
    }


SCHEMAS: dict[str, Any] = {
    _PREFIX + "TokenRequest": _top(
        "TokenRequest",
        "TokenRequest requests a token for a given service account.",
        "Spec holds information about the request being evaluated",
        "Status is filled in by the server and indicates whether the token can be authenticated.",
    ),
    _PREFIX + "TokenRequestSpec": {
        "description": "TokenRequestSpec contains client provided parameters of a token request.",
        "properties": {
            "audiences": _string_list(
                "Audiences are the intendend audiences of the token. A recipient of a token must identify "
                "themself with an identifier in the list of audiences of the token, and otherwise should reject "
                "the token. A token issued for multiple audiences may be used to authenticate against any of the "
                "audiences listed but implies a high degree of trust between the target audiences."
            ),
            "boundObjectRef": _wrapped(
                _PREFIX + "BoundObjectReference",
                "BoundObjectRef is a reference to an object that the token will be bound to. The token will only "
                "be valid for as long as the bound object exists.",
            ),
            "expirationSeconds": {
                "description": "ExpirationSeconds is the requested duration of validity of the request. The token "
                "issuer may return a token with a different validity duration so a client needs to check the "
                "'expiration' field in a response.",
                "format": "int64",
                "type": "integer",
            },
        },
        "required": ["audiences"],
        "type": "object",
    },
    _PREFIX + "TokenRequestStatus": {
        "description": "TokenRequestStatus is the result of a token request.",
        "properties": {
            "expirationTimestamp": _wrapped(
                _META + "Time", "ExpirationTimestamp is the time of expiration of the returned token."
            ),
            "token": {"description": "Token is the opaque bearer token.", "type": "string"},
        },
        "required": ["token", "expirationTimestamp"],
        "type": "object",
    },
    _PREFIX + "BoundObjectReference": {
        "description": "BoundObjectReference is a reference to an object that a token is bound to.",
        "properties": {
            "apiVersion": {"description": "API version of the referent.", "type": "string"},
            "kind": {"description": "Kind of the referent. Valid kinds are 'Pod' and 'Secret'.", "type": "string"},
            "name": {"description": "Name of the referent.", "type": "string"},
            "uid": {"description": "UID of the referent.", "type": "string"},
        },
        "type": "object",
    },
    _PREFIX + "TokenReview": _top(
        "TokenReview",
        "TokenReview attempts to authenticate a token to a known user. Note: TokenReview requests may be cached by "
        "the webhook token authenticator plugin in the kube-apiserver.",
        "Spec holds information about the request being evaluated",
        "Status is filled in by the server and indicates whether the request can be authenticated.",
    ),
    _PREFIX + "TokenReviewSpec": {
        "description": "TokenReviewSpec is a description of the token authentication request.",
        "properties": {
            "audiences": _string_list(
                "Audiences is a list of the identifiers that the resource server presented with the token "
                "identifies as. Audience-aware token authenticators will verify that the token was intended for at "
                "least one of the audiences in this list. If no audiences are provided, the audience will default "
                "to the audience of the Kubernetes apiserver."
            ),
            "token": {"description": "Token is the opaque bearer token.", "type": "string"},
        },
        "type": "object",
    },
    _PREFIX + "TokenReviewStatus": {
        "description": "TokenReviewStatus is the result of the token authentication request.",
        "properties": {
            "audiences": _string_list(
                "Audiences are audience identifiers chosen by the authenticator that are compatible with both the "
                "TokenReview and token."
            ),
            "authenticated": {
                "description": "Authenticated indicates that the token was associated with a known user.",
                "type": "boolean",
            },
            "error": {"description": "Error indicates that the token couldn't be checked", "type": "string"},
            "user": _wrapped(_PREFIX + "UserInfo", "User is the UserInfo associated with the provided token."),
        },
        "type": "object",
    },
}
