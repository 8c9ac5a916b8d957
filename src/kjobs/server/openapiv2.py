"""The OpenAPI v2 (Swagger 2.0) document: `GET /openapi/v2`, as JSON or as gnostic protobuf.

kube-apiserver 1.32 still serves it and clients still read it: client-go's `DiscoveryClient.OpenAPISchema()`
(asks for the protobuf form: helm's manifest validation, `kubectl explain --output=plaintext-openapiv2`,
kubectl's client-side validation fallback) and JSON readers (the Python client, swagger tools).

One source of truth with `/openapi/v3`: the paths come from the registry's resource rows, the definitions
from the same 1.32 schemas (`schema.schemas`, with the gates that are on), converted the way kube-openapi's
v2 and v3 builders differ: `#/definitions/` refs, a bare `$ref` beside its siblings where v3 wraps it in
`allOf`, a request body as an `in: body` parameter, `consumes`/`produces` instead of `content`. The shape
follows upstream's api/openapi-spec/swagger.json (kube-openapi pkg/builder): operation ids such as
`listBatchV1NamespacedJob`, shared `parameters` under their upstream names, `x-kubernetes-action`,
`x-kubernetes-group-version-kind`, the `BearerToken` security definition. Deprecated `/watch/` paths are
not published (the `watch` parameter of a list operation is).
"""

from __future__ import annotations

import copy
import functools
import gzip
import hashlib
from typing import Any

import orjson

from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj
from kjobs.server import discovery, gnostic, registry, schema
from kjobs.server.openapi import METRICS_RESOURCES
from kjobs.server.registry import BUILT_IN, RESOURCES, SUBRESOURCE_KINDS, Resource

JSON_TYPE = "application/json"
PROTOBUF_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
PROTOBUF_SUBTYPES = ("com.github.proto-openapi.spec.v2@v1.0+protobuf", "com.github.proto-openapi.spec.v2.v1.0+protobuf")
"""kube-openapi's handler: the deprecated `@` subtype (client-go's) and the current one, both answered with the
current media type."""

_DEFS = "#/definitions/"
_STATUS = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
_PATCH = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
_PRODUCES = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]
_WATCH_PRODUCES = [*_PRODUCES, "application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch"]
_PATCH_CONSUMES = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
]
_RETURNS_DELETED = {("", "pods"), ("", "services")}
"""Registries whose delete answers the deleted object, not a Status (`ReturnDeletedObject`)."""


def _query(name: str, kind: str, description: str) -> Obj:
    return {"description": description, "in": "query", "name": name, "type": kind, "uniqueItems": True}


_LIST_DOC = (
    "limit is a maximum number of responses to return for a list call. If more items exist, the server will set "
    "the `continue` field on the list metadata to a value that can be used with the same initial query to "
    "retrieve the next set of results. Setting a limit may return fewer than the requested amount of items (up "
    "to zero items) in the event all requested objects are filtered out and clients should only use the presence "
    "of the continue field to determine whether more results are available. Servers may choose not to support "
    "the limit argument and will return all of the available results. If limit is specified and the continue "
    "field is empty, clients may assume that no more results are available. This field is not supported if "
    "watch is true.\n\nThe server guarantees that the objects returned when using continue will be identical to "
    "issuing a single list call without a limit - that is, no objects created, modified, or deleted after the "
    "first request is issued will be included in any subsequent continued requests. This is sometimes referred "
    "to as a consistent snapshot, and ensures that a client that is using limit to receive smaller chunks of a "
    "very large result can ensure they see all possible objects. If objects are updated during a chunked list "
    "the version of the object that was present at the time the first list result was calculated is returned."
)
_CONTINUE_DOC = (
    "The continue option should be set when retrieving more results from the server. Since this value is "
    "server defined, clients may only use the continue value from a previous query result with identical query "
    "parameters (except for the value of continue) and the server may reject a continue value it does not "
    "recognize. If the specified continue value is no longer valid whether due to expiration (generally five to "
    "fifteen minutes) or a configuration change on the server, the server will respond with a 410 "
    "ResourceExpired error together with a continue token. If the client needs a consistent list, it must "
    "restart their list without the continue field. Otherwise, the client may send another list request with "
    "the token received with the 410 error, the server will respond with a list starting from the next key, but "
    "from the latest snapshot, which is inconsistent from the previous list results - objects that are created, "
    "modified, or deleted after the first list request will be included in the response, as long as their keys "
    'are after the "next key".\n\nThis field is not supported when watch is true. Clients may start a watch from '
    "the last resourceVersion value returned by the server and not miss any modifications."
)
_SEND_INITIAL_DOC = (
    "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin "
    "with synthetic events to produce the current state of objects in the collection. Once all such events have "
    'been sent, a synthetic "Bookmark" event  will be sent. The bookmark will report the ResourceVersion (RV) '
    'corresponding to the set of objects, and be marked with `"k8s.io/initial-events-end": "true"` annotation. '
    "Afterwards, the watch stream will proceed as usual, sending watch events corresponding to changes "
    "(subsequent to the RV) to objects watched.\n\nWhen `sendInitialEvents` option is set, we require "
    "`resourceVersionMatch` option to also be set. The semantic of the watch request is as following: - "
    '`resourceVersionMatch` = NotOlderThan\n  is interpreted as "data at least as new as the provided '
    '`resourceVersion`"\n  and the bookmark event is send when the state is synced\n  to a `resourceVersion` at '
    "least as fresh as the one provided by the ListOptions.\n  If `resourceVersion` is unset, this is interpreted "
    'as "consistent read" and the\n  bookmark event is send when the state is synced at least to the moment\n  '
    "when request started being processed.\n- `resourceVersionMatch` set to any other value or unset\n  Invalid "
    'error is returned.\n\nDefaults to true if `resourceVersion=""` or `resourceVersion="0"` (for backward '
    "compatibility reasons) and to false otherwise."
)

PARAMETERS: dict[str, Obj] = {
    "allowWatchBookmarks-HC2hJt-J": _query(
        "allowWatchBookmarks",
        "boolean",
        'allowWatchBookmarks requests watch events with type "BOOKMARK". Servers that do not implement bookmarks '
        "may ignore this flag and bookmarks are sent at the server's discretion. Clients should not assume "
        "bookmarks are returned at any specific interval, nor may they assume the server will send any BOOKMARK "
        "event during a session. If this is not a watch, this field is ignored.",
    ),
    "body-2Y1dVQaQ": {
        "in": "body",
        "name": "body",
        "schema": {"$ref": _DEFS + "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"},
    },
    "body-78PwaGsr": {"in": "body", "name": "body", "required": True, "schema": {"$ref": _DEFS + _PATCH}},
    "command-Py3eQybp": _query(
        "command", "string", "Command is the remote command to execute. argv array. Not executed within a shell."
    ),
    "container-1GeXxFDC": _query(
        "container",
        "string",
        "The container for which to stream logs. Defaults to only container if there is one container in the pod.",
    ),
    "container-_Q-EJ3nR": _query(
        "container",
        "string",
        "The container in which to execute the command. Defaults to only container if there is only one "
        "container in the pod.",
    ),
    "container-i5dOmRiM": _query(
        "container",
        "string",
        "Container in which to execute the command. Defaults to only container if there is only one container in "
        "the pod.",
    ),
    "continue-QfD61s0i": _query("continue", "string", _CONTINUE_DOC),
    "fieldManager-7c6nTn1T": _query(
        "fieldManager",
        "string",
        "fieldManager is a name associated with the actor or entity that is making these changes. The value must "
        "be less than or 128 characters long, and only contain printable characters, as defined by "
        "https://golang.org/pkg/unicode/#IsPrint. This field is required for apply requests "
        "(application/apply-patch) but optional for non-apply patch types (JsonPatch, MergePatch, "
        "StrategicMergePatch).",
    ),
    "fieldManager-Qy4HdaTW": _query(
        "fieldManager",
        "string",
        "fieldManager is a name associated with the actor or entity that is making these changes. The value must "
        "be less than or 128 characters long, and only contain printable characters, as defined by "
        "https://golang.org/pkg/unicode/#IsPrint.",
    ),
    "fieldSelector-xIcQKXFG": _query(
        "fieldSelector",
        "string",
        "A selector to restrict the list of returned objects by their fields. Defaults to everything.",
    ),
    "follow-9OIXh_2R": _query("follow", "boolean", "Follow the log stream of the pod. Defaults to false."),
    "force-tOGGb0Yi": _query(
        "force",
        "boolean",
        'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other '
        "people. Force flag must be unset for non-apply patch requests.",
    ),
    "gracePeriodSeconds--K5HaBOS": _query(
        "gracePeriodSeconds",
        "integer",
        "The duration in seconds before the object should be deleted. Value must be non-negative integer. The "
        "value zero indicates delete immediately. If this value is nil, the default grace period for the specified "
        "type will be used. Defaults to a per object value if not specified. zero means delete immediately.",
    ),
    "insecureSkipTLSVerifyBackend-gM00jVbe": _query(
        "insecureSkipTLSVerifyBackend",
        "boolean",
        "insecureSkipTLSVerifyBackend indicates that the apiserver should not confirm the validity of the serving "
        "certificate of the backend it is connecting to.  This will make the HTTPS connection between the "
        "apiserver and the backend insecure. This means the apiserver cannot verify the log data it is receiving "
        "came from the real kubelet.  If the kubelet is configured to verify the apiserver's TLS credentials, it "
        "does not mean the connection to the real kubelet is vulnerable to a man in the middle attack (e.g. an "
        "attacker could not intercept the actual log data coming from the real kubelet).",
    ),
    "labelSelector-5Zw57w4C": _query(
        "labelSelector",
        "string",
        "A selector to restrict the list of returned objects by their labels. Defaults to everything.",
    ),
    "limit-1NfNmdNH": _query("limit", "integer", _LIST_DOC),
    "limitBytes-zwd1RXuc": _query(
        "limitBytes",
        "integer",
        "If set, the number of bytes to read from the server before terminating the log output. This may not "
        "display a complete final line of logging, and may return slightly more or slightly less than the "
        "specified limit.",
    ),
    "namespace-vgWSWtn3": {
        "description": "object name and auth scope, such as for teams and projects",
        "in": "path",
        "name": "namespace",
        "required": True,
        "type": "string",
        "uniqueItems": True,
    },
    "orphanDependents-uRB25kX5": _query(
        "orphanDependents",
        "boolean",
        "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent "
        'objects be orphaned. If true/false, the "orphan" finalizer will be added to/removed from the object\'s '
        "finalizers list. Either this field or PropagationPolicy may be set, but not both.",
    ),
    "ports-91KROJmm": _query("ports", "integer", "List of ports to forward Required when using WebSockets"),
    "pretty-tJGM1-ng": _query(
        "pretty",
        "string",
        "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a "
        "browser or command-line HTTP tool (curl and wget).",
    ),
    "previous-1jxDPu3y": _query("previous", "boolean", "Return previous terminated container logs. Defaults to false."),
    "propagationPolicy-6jk3prlO": _query(
        "propagationPolicy",
        "string",
        "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, "
        "but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and "
        "the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; "
        "'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a "
        "cascading policy that deletes all dependents in the foreground.",
    ),
    "resourceVersion-5WAnf1kx": _query(
        "resourceVersion",
        "string",
        "resourceVersion sets a constraint on what resource versions a request may be served from. See "
        "https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\n"
        "Defaults to unset",
    ),
    "resourceVersionMatch-t8XhRHeC": _query(
        "resourceVersionMatch",
        "string",
        "resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended "
        "that resourceVersionMatch be set for list calls where resourceVersion is set See "
        "https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\n"
        "Defaults to unset",
    ),
    "sendInitialEvents-rLXlEK_k": _query("sendInitialEvents", "boolean", _SEND_INITIAL_DOC),
    "sinceSeconds-vE2NLdnP": _query(
        "sinceSeconds",
        "integer",
        "A relative time in seconds before the current time from which to show logs. If this value precedes the "
        "time a pod was started, only logs since the pod start will be returned. If this value is in the future, "
        "no logs will be returned. Only one of sinceSeconds or sinceTime may be specified.",
    ),
    "stderr-26jJhFUR": _query(
        "stderr",
        "boolean",
        "Stderr if true indicates that stderr is to be redirected for the attach call. Defaults to true.",
    ),
    "stderr-W_1TNlWc": _query("stderr", "boolean", "Redirect the standard error stream of the pod for this call."),
    "stdin-PSzNhyUC": _query(
        "stdin", "boolean", "Redirect the standard input stream of the pod for this call. Defaults to false."
    ),
    "stdin-sEFnN3IS": _query(
        "stdin",
        "boolean",
        "Stdin if true, redirects the standard input stream of the pod for this call. Defaults to false.",
    ),
    "stdout--EZLRwV1": _query("stdout", "boolean", "Redirect the standard output stream of the pod for this call."),
    "stdout-005YMKE6": _query(
        "stdout",
        "boolean",
        "Stdout if true indicates that stdout is to be redirected for the attach call. Defaults to true.",
    ),
    "tailLines-2fRTNzbP": _query(
        "tailLines",
        "integer",
        "If set, the number of lines from the end of the logs to show. If not specified, logs are shown from the "
        "creation of the container or sinceSeconds or sinceTime",
    ),
    "timeoutSeconds-yvYezaOC": _query(
        "timeoutSeconds",
        "integer",
        "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or "
        "inactivity.",
    ),
    "timestamps-c17fW1w_": _query(
        "timestamps",
        "boolean",
        "If true, add an RFC3339 or RFC3339Nano timestamp at the beginning of every line of log output. Defaults "
        "to false.",
    ),
    "tty-g7MlET_l": _query(
        "tty",
        "boolean",
        "TTY if true indicates that a tty will be allocated for the attach call. This is passed through the "
        "container runtime so the tty is allocated on the worker node by the container runtime. Defaults to false.",
    ),
    "tty-s0flW37O": _query(
        "tty", "boolean", "TTY if true indicates that a tty will be allocated for the exec call. Defaults to false."
    ),
    "watch-XNNPZGbK": _query(
        "watch",
        "boolean",
        "Watch for changes to the described resources and return them as a stream of add, update, and remove "
        "notifications. Specify resourceVersion.",
    ),
}
"""kube-openapi's shared parameters, under the names upstream's swagger.json gives them."""

_DRY_RUN = _query(
    "dryRun",
    "string",
    "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun "
    "directive will result in an error response and no further processing of the request. Valid values are: - "
    "All: all dry run stages will be processed",
)
_FIELD_VALIDATION = _query(
    "fieldValidation",
    "string",
    "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing "
    "unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are "
    "silently dropped from the object, and will ignore all but the last duplicate field that the decoder "
    "encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard "
    "warning response header for each unknown field that is dropped from the object, and for each duplicate field "
    "that is encountered. The request will still succeed if there are no other errors, and will only persist the "
    "last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a "
    "BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are "
    "present. The error returned from the server will contain all unknown and duplicate fields encountered.",
)
_LIST_PARAMS = [
    "allowWatchBookmarks-HC2hJt-J",
    "continue-QfD61s0i",
    "fieldSelector-xIcQKXFG",
    "labelSelector-5Zw57w4C",
    "limit-1NfNmdNH",
    "resourceVersion-5WAnf1kx",
    "resourceVersionMatch-t8XhRHeC",
    "sendInitialEvents-rLXlEK_k",
    "timeoutSeconds-yvYezaOC",
    "watch-XNNPZGbK",
]


def _p(name: str) -> Obj:
    return {"$ref": f"#/parameters/{name}"}


def _ignore_store_read_error(defs: dict[str, Any]) -> list[Obj]:
    """DeleteOptions' 1.32 `ignoreStoreReadErrorWithClusterBreakingPotential`, a query parameter of deletes."""
    prop = defs["io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"]["properties"].get(
        "ignoreStoreReadErrorWithClusterBreakingPotential"
    )
    if prop is None:
        return []
    return [_query("ignoreStoreReadErrorWithClusterBreakingPotential", "boolean", prop.get("description", ""))]


def _group_words(group: str) -> list[str]:
    return group.removesuffix(".k8s.io").split(".") if group else ["core"]


def _tag(group: str, version: str) -> str:
    """`batch_v1`, `core_v1`, `rbacAuthorization_v1` (the endpoint installer's tag of a group version)."""
    words = _group_words(group)
    return words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:]) + "_" + version


def _op_prefix(group: str, version: str) -> str:
    """`BatchV1`, `CoreV1`, `RbacAuthorizationV1` (the middle of an operation id)."""
    return "".join(w[:1].upper() + w[1:] for w in _group_words(group)) + version[:1].upper() + version[1:]


def _ok(ref: str | None, *codes: str) -> Obj:
    names = {"200": "OK", "201": "Created", "202": "Accepted"}
    schema_: Obj = {"$ref": _DEFS + ref} if ref else {"type": "string"}
    out: Obj = {code: {"description": names[code], "schema": schema_} for code in codes}
    out["401"] = {"description": "Unauthorized"}
    return out


def _operation(
    r: Resource,
    action: str,
    op_id: str,
    description: str,
    params: list[Obj],
    responses: Obj,
    *,
    gvk: tuple[str, str, str] | None = None,
    consumes: list[str] | None = None,
    produces: list[str] | None = None,
) -> Obj:
    group, version, kind = gvk or (r.group, r.version, r.kind)
    op: Obj = {
        "consumes": consumes or ["*/*"],
        "description": description,
        "operationId": op_id,
        "produces": produces or _PRODUCES,
        "responses": responses,
        "schemes": ["https"],
        "tags": [_tag(r.group, r.version)],
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": group, "kind": kind, "version": version},
    }
    if params:
        op["parameters"] = params
    return op


def _body(name: str | None) -> Obj:
    return {"in": "body", "name": "body", "required": True, "schema": {"$ref": _DEFS + name} if name else {}}


def _name_param(kind: str) -> Obj:
    return {
        "description": f"name of the {kind}",
        "in": "path",
        "name": "name",
        "required": True,
        "type": "string",
        "uniqueItems": True,
    }


def _paths(r: Resource, defs: dict[str, Any]) -> dict[str, Obj]:
    """The path items of one resource and its subresources, as the endpoint installer publishes them."""
    gv = f"/apis/{r.group}/{r.version}" if r.group else f"/api/{r.version}"
    prefix = _op_prefix(r.group, r.version)
    name = r.schema_name
    writes = [_DRY_RUN, _p("fieldManager-Qy4HdaTW"), _FIELD_VALIDATION]
    if r.review:  # created, never stored: one POST-only path
        post = _operation(
            r, "post", f"create{prefix}{r.kind}", f"create a {r.kind}", [_body(name)], _ok(name, "200", "201", "202")
        )
        return {f"{gv}/{r.plural}": {"parameters": [*writes, _p("pretty-tJGM1-ng")], "post": post}}
    scope = "Namespaced" if r.namespaced else ""
    base = f"{gv}/namespaces/{{namespace}}/{r.plural}" if r.namespaced else f"{gv}/{r.plural}"
    ns = [_p("namespace-vgWSWtn3")] if r.namespaced else []
    verbs = set(r.verbs)
    deletes = [_p("body-2Y1dVQaQ"), _DRY_RUN, _p("gracePeriodSeconds--K5HaBOS"), *_ignore_store_read_error(defs)]
    paths: dict[str, Obj] = {}

    collection: Obj = {"parameters": [*ns, _p("pretty-tJGM1-ng")]}
    if "list" in verbs:
        collection["get"] = _operation(
            r,
            "list",
            f"list{prefix}{scope}{r.kind}",
            f"list or watch objects of kind {r.kind}",
            [_p(p) for p in _LIST_PARAMS],
            _ok(f"{name}List" if name else None, "200"),
            produces=_WATCH_PRODUCES,
        )
    if "create" in verbs:
        collection["post"] = _operation(
            r,
            "post",
            f"create{prefix}{scope}{r.kind}",
            f"create a {r.kind}",
            [_body(name), *writes],
            _ok(name, "200", "201", "202"),
        )
    if "deletecollection" in verbs:
        collection["delete"] = _operation(
            r,
            "deletecollection",
            f"delete{prefix}Collection{scope}{r.kind}",
            f"delete collection of {r.kind}",
            sorted(
                [
                    *deletes,
                    *(_p(p) for p in [*_LIST_PARAMS[1:-1], "orphanDependents-uRB25kX5", "propagationPolicy-6jk3prlO"]),
                ],
                key=_param_order,
            ),
            _ok(_STATUS, "200"),
        )
    paths[base] = collection
    if r.namespaced and "list" in verbs:
        paths[f"{gv}/{r.plural}"] = {
            "get": _operation(
                r,
                "list",
                f"list{prefix}{r.kind}ForAllNamespaces",
                f"list or watch objects of kind {r.kind}",
                [],
                _ok(f"{name}List" if name else None, "200"),
                produces=_WATCH_PRODUCES,
            ),
            "parameters": sorted([_p(p) for p in [*_LIST_PARAMS, "pretty-tJGM1-ng"]], key=_param_order),
        }

    item: Obj = {"parameters": [_name_param(r.kind), *ns, _p("pretty-tJGM1-ng")]}
    item.update(_object_ops(r, prefix, scope, "", verbs))
    if "delete" in verbs:
        deleted = name if (r.group, r.plural) in _RETURNS_DELETED else _STATUS
        item["delete"] = _operation(
            r,
            "delete",
            f"delete{prefix}{scope}{r.kind}",
            f"delete a {r.kind}",
            [*deletes, _p("orphanDependents-uRB25kX5"), _p("propagationPolicy-6jk3prlO")],
            _ok(deleted, "200", "202"),
        )
    paths[f"{base}/{{name}}"] = item

    for sub in r.subresources:
        path = f"{base}/{{name}}/{sub}"
        suffix = sub[:1].upper() + sub[1:]
        if sub in ("status", "ephemeralcontainers"):
            entry: Obj = {"parameters": [_name_param(r.kind), *ns, _p("pretty-tJGM1-ng")]}
            entry.update(_object_ops(r, prefix, scope, suffix, {"get", "update", "patch"}, sub=sub))
            paths[path] = entry
        elif sub == "finalize":
            put = _operation(
                r,
                "put",
                f"replace{prefix}{scope}{r.kind}Finalize",
                f"replace finalize of the specified {r.kind}",
                [_body(name)],
                _ok(name, "200", "201"),
            )
            paths[path] = {
                "parameters": [*writes, _name_param(r.kind), *ns, _p("pretty-tJGM1-ng")],
                "put": put,
            }
        elif sub == "log":
            get = _operation(
                r,
                "get",
                f"read{prefix}{scope}{r.kind}Log",
                f"read log of the specified {r.kind}",
                [],
                _ok(None, "200"),
                produces=["text/plain", *_PRODUCES],
            )
            params = [
                _p("container-1GeXxFDC"),
                _p("follow-9OIXh_2R"),
                _p("insecureSkipTLSVerifyBackend-gM00jVbe"),
                _p("limitBytes-zwd1RXuc"),
                _name_param(r.kind),
                *ns,
                _p("pretty-tJGM1-ng"),
                _p("previous-1jxDPu3y"),
                _p("sinceSeconds-vE2NLdnP"),
                _p("tailLines-2fRTNzbP"),
                _p("timestamps-c17fW1w_"),
            ]
            paths[path] = {"get": get, "parameters": params}
        elif sub in ("exec", "attach", "portforward"):
            group, version, kind = SUBRESOURCE_KINDS[sub]
            entry = {
                verb: _operation(
                    r,
                    "connect",
                    f"connect{prefix}{verb.capitalize()}{scope}{r.kind}{suffix}",
                    f"connect {verb.upper()} requests to {sub} of {r.kind}",
                    [],
                    _ok(None, "200"),
                    gvk=(group, version, kind),
                    produces=["*/*"],
                )
                for verb in ("get", "post")
            }
            entry["parameters"] = sorted(
                [*(_p(p) for p in _CONNECT_PARAMS[sub]), _name_param(kind), *ns], key=_param_order
            )
            paths[path] = entry
        elif sub in ("eviction", "binding", "token"):
            group, version, kind = SUBRESOURCE_KINDS[sub]
            target = schema.schema_name(group, version, kind)
            post = _operation(
                r,
                "post",
                f"create{prefix}{scope}{r.kind}{suffix}",
                f"create {sub} of a {r.kind}",
                [_body(target)],
                _ok(target, "200", "201", "202"),
                gvk=(group, version, kind),
            )
            paths[path] = {"parameters": [*writes, _name_param(kind), *ns, _p("pretty-tJGM1-ng")], "post": post}
    return paths


_CONNECT_PARAMS = {
    "exec": [
        "command-Py3eQybp",
        "container-_Q-EJ3nR",
        "stderr-W_1TNlWc",
        "stdin-PSzNhyUC",
        "stdout--EZLRwV1",
        "tty-s0flW37O",
    ],
    "attach": ["container-i5dOmRiM", "stderr-26jJhFUR", "stdin-sEFnN3IS", "stdout-005YMKE6", "tty-g7MlET_l"],
    "portforward": ["ports-91KROJmm"],
}


def _param_order(param: Obj) -> str:
    """Upstream lists an operation's parameters by name (the body first)."""
    ref = param.get("$ref")
    name = PARAMETERS[ref.rsplit("/", 1)[-1]]["name"] if ref else param["name"]
    return "" if name == "body" else name


def _object_ops(r: Resource, prefix: str, scope: str, suffix: str, verbs: set[str], sub: str = "") -> Obj:
    """read / replace / patch of the object itself or of its `status`/`ephemeralcontainers`."""
    name = r.schema_name
    what = f"{sub} of the specified {r.kind}" if sub else f"the specified {r.kind}"
    ops: Obj = {}
    if "get" in verbs:
        ops["get"] = _operation(r, "get", f"read{prefix}{scope}{r.kind}{suffix}", f"read {what}", [], _ok(name, "200"))
    if "update" in verbs:
        ops["put"] = _operation(
            r,
            "put",
            f"replace{prefix}{scope}{r.kind}{suffix}",
            f"replace {what}",
            [_body(name), _DRY_RUN, _p("fieldManager-Qy4HdaTW"), _FIELD_VALIDATION],
            _ok(name, "200", "201"),
        )
    if "patch" in verbs:
        ops["patch"] = _operation(
            r,
            "patch",
            f"patch{prefix}{scope}{r.kind}{suffix}",
            f"partially update {what}",
            [_p("body-78PwaGsr"), _DRY_RUN, _p("fieldManager-7c6nTn1T"), _FIELD_VALIDATION, _p("force-tOGGb0Yi")],
            _ok(name, "200", "201"),
            consumes=_PATCH_CONSUMES,
        )
    return ops


_QUANTITY_DOC = (
    "Quantity is a fixed-point representation of a number. It provides convenient marshaling/unmarshaling in "
    "JSON and YAML, in addition to String() and Int64() accessors.\n\nThe serialization format is:\n\n"
    '<quantity>        ::= <signedNumber><suffix>\n  (Note that <suffix> may be empty, from the "" case in '
    "<decimalSI>.)\n<digit>           ::= 0 | 1 | ... | 9 <digits>          ::= <digit> | <digit><digits> "
    '<number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits> <sign>            ::= "+" | '
    '"-" <signedNumber>    ::= <number> | <sign><number> <suffix>          ::= <binarySI> | <decimalExponent> | '
    "<decimalSI> <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei\n  (International System of units; See: "
    'http://physics.nist.gov/cuu/Units/binary.html)\n<decimalSI>       ::= m | "" | k | M | G | T | P | E\n  '
    '(Note that 1024 = 1Ki but 1000 = 1k; I didn\'t choose the capitalization.)\n<decimalExponent> ::= "e" '
    '<signedNumber> | "E" <signedNumber>\n\nNo matter which of the three exponent forms is used, no quantity '
    "may represent a number greater than 2^63-1 in magnitude, nor may it have more than 3 decimal places. "
    "Numbers larger or more precise will be capped or rounded up. (E.g.: 0.1m will rounded up to 1m.) This may "
    "be extended in the future if we require larger or smaller quantities.\n\nWhen a Quantity is parsed from a "
    "string, it will remember the type of suffix it had, and will use the same type again when it is "
    'serialized.\n\nBefore serializing, Quantity will be put in "canonical form". This means that '
    "Exponent/suffix will be adjusted up or down (with a corresponding increase or decrease in Mantissa) such "
    "that:\n  a. No precision is lost\n  b. No fractional digits will be emitted\n  c. The exponent (or suffix) "
    "is as large as possible.\nThe sign will be omitted unless the number is negative.\n\nExamples:\n  1.5 will "
    'be serialized as "1500m"\n  1.5Gi will be serialized as "1536Mi"\n\nNote that the quantity will NEVER '
    "be internally represented by a floating point number. That is the whole point of this exercise.\n\n"
    "Non-canonical values will still parse as long as they are well formed, but will be re-emitted in their "
    "canonical form. (So always use canonical form, or don't diff.)\n\nThis format is intended to make it "
    "difficult to use these numbers without writing some sort of special handling code in the hopes that that "
    "will cause implementors to also use a fixed point implementation."
)

_UPSTREAM_DEFINITIONS: dict[str, Obj] = {
    # the shipped schemas describe these two as JSON-schema `oneOf`s (kubernetes-validate's conversion);
    # kube-openapi publishes them as strings
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {"description": _QUANTITY_DOC, "type": "string"},
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
        "description": "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML "
        "marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, for "
        "example, a JSON field that can accept a name or number.",
        "format": "int-or-string",
        "type": "string",
    },
    _PATCH: {
        "description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
        "type": "object",
    },
}


def _v2_schema(node: Any, *, in_properties: bool = False) -> Any:
    """One v3 schema node as Swagger 2.0 writes it."""
    if isinstance(node, list):
        return [_v2_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    if in_properties:
        return {key: _v2_schema(value) for key, value in node.items()}
    out: Obj = {}
    for key, value in node.items():
        if key.startswith("x-"):
            out[key] = copy.deepcopy(value)
        elif key == "$ref":
            out[key] = _DEFS + str(value).rsplit("/", 1)[-1]
        elif key == "properties":
            props = _v2_schema(value, in_properties=True)
            for field in ("apiVersion", "kind"):  # kubernetes-validate's strict-mode enums, not Kubernetes'
                if field in props and "enum" in props[field]:
                    props[field] = {k: v for k, v in props[field].items() if k != "enum"}
            out[key] = props
        else:
            out[key] = _v2_schema(value)
    wrapped = out.get("allOf")
    if isinstance(wrapped, list) and len(wrapped) == 1 and set(wrapped[0]) == {"$ref"}:
        del out["allOf"]
        out["$ref"] = wrapped[0]["$ref"]
    return out


@functools.cache
def definitions(features: FeatureGates = DEFAULT) -> dict[str, Any]:
    """Every schema of `/openapi/v3`, keyed as upstream (`io.k8s.api.batch.v1.Job`) and in v2 form."""
    defs = {name: _v2_schema(value) for name, value in schema.schemas(features).items()}
    defs.update(copy.deepcopy(_UPSTREAM_DEFINITIONS))
    return defs


def build(features: FeatureGates = DEFAULT) -> Obj:
    """The Swagger 2.0 document as a JSON object."""
    from kjobs.server.customresources import openapi_schemas

    custom = openapi_schemas(RESOURCES[len(BUILT_IN) :])  # the CRDs' kinds: definitions only (no paths)
    defs = {**definitions(features), **{name: _v2_schema(value) for name, value in custom.items()}}
    paths: dict[str, Obj] = {}
    for r in [*BUILT_IN, *METRICS_RESOURCES]:
        paths.update(_paths(r, defs))
    for item in paths.values():
        item["parameters"] = sorted(item["parameters"], key=_param_order)
    return {
        "definitions": defs,
        "info": {"title": "Kubernetes", "version": discovery.VERSION["gitVersion"]},
        "parameters": PARAMETERS,
        "paths": paths,
        "security": [{"BearerToken": []}],
        "securityDefinitions": {
            "BearerToken": {
                "description": "Bearer Token authentication",
                "in": "header",
                "name": "authorization",
                "type": "apiKey",
            }
        },
        "swagger": "2.0",
    }


class Document:
    """The document in each form it is served, built once (on first request) per gate set."""

    def __init__(self, features: FeatureGates) -> None:
        self.json = orjson.dumps(build(features), option=orjson.OPT_SORT_KEYS)
        self.etag = hashlib.sha512(self.json).hexdigest().upper()
        self._protobuf: bytes | None = None
        self._gzipped: dict[str, bytes] = {}

    @property
    def protobuf(self) -> bytes:
        """The gnostic `openapi.v2.Document` message (what kube-openapi's `ToProtoBinary` writes)."""
        if self._protobuf is None:
            self._protobuf = gnostic.encode_document(orjson.loads(self.json))
        return self._protobuf

    def body(self, media: str) -> bytes:
        """The bytes of one media type."""
        return self.protobuf if media == PROTOBUF_TYPE else self.json

    def gzipped(self, media: str) -> bytes:
        """The same bytes gzip-compressed (kube-openapi wraps its handler in a gzip handler)."""
        if media not in self._gzipped:
            self._gzipped[media] = gzip.compress(self.body(media), mtime=0)
        return self._gzipped[media]


@functools.cache
def document(features: FeatureGates = DEFAULT) -> Document:
    """The served document (lazily built, then kept)."""
    return Document(features)


def negotiate(accept: str) -> str | None:
    """kube-openapi's handler: the first clause of `Accept` (highest q first) that names JSON or a protobuf
    subtype, with wildcards; None (406) when none does. An empty `Accept` is `*/*`."""
    clauses: list[tuple[float, int, str, str]] = []
    for index, entry in enumerate((accept or "*/*").split(",")):
        parts = [p.strip() for p in entry.split(";")]
        media = parts[0].lower()
        if "/" not in media:
            continue
        q = 1.0
        for param in parts[1:]:
            key, _, value = param.partition("=")
            if key.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        main, _, sub = media.partition("/")
        # goautoneg orders by q, then by specificity (a wildcard after a concrete type), then as written
        specificity = (main == "*") + (sub == "*")
        clauses.append((-q, specificity * 1000 + index, main, sub))
    for _, _, main, sub in sorted(clauses):
        for subtype, media in (("json", JSON_TYPE), *((s, PROTOBUF_TYPE) for s in PROTOBUF_SUBTYPES)):
            if main in ("application", "*") and sub in (subtype, "*"):
                return media
    return None


registry.on_change(document.cache_clear)
