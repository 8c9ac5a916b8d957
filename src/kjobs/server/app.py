"""The ASGI application: HTTP framing of the Kubernetes API over `ApiService`.

Owns everything that is about HTTP rather than about objects: routing (`routing.parse`), body decoding (JSON, or
YAML for `application/yaml` / apply patches; a missing Content-Type means JSON; any other type is 415, all in
`Request.decoded`, bounded as `limits` says), content negotiation
(`negotiation`: Table, PartialObjectMetadata; aggregated discovery), query parameters, `Warning` headers,
`Status` error bodies for every failure (never a traceback), authentication (`auth`), streaming (watch as
chunked JSON lines, pod logs as chunked text) with client-disconnect detection, and the lifespan hook that
creates the built-in namespaces. Reads of plain objects stream the store's JSON bytes without decoding them.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import functools
import hashlib
import html
import logging
import math
import posixpath
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast
from urllib.parse import parse_qsl, unquote

import orjson
import yaml

from kjobs.api.errors import ApiError, bad_request, not_found
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.selectors import parse_field_selector, parse_label_selector
from kjobs.api.types import Obj
from kjobs.server import (
    authz,
    bootstrap,
    compression,
    crscale,
    discovery,
    eventttl,
    gojson,
    gozero,
    health,
    limits,
    listoptions,
    negotiation,
    openapi,
    openapiv2,
    params,
    portforward,
    pretty,
    protobuf,
    proxy,
    registry,
    remotecommand,
    resourcemetrics,
    routing,
    tables,
    tokenrest,
    writeoptions,
)
from kjobs.server.admission import AdmissionSettings
from kjobs.server.auth import PUBLIC_ROUTES, Authenticator, client_cert_name
from kjobs.server.customresources import CustomResource
from kjobs.server.gotypes import go_json_syntax_error
from kjobs.server.listitems import untyped, untyped_raws
from kjobs.server.logs import LogSource, log_options
from kjobs.server.metrics import ApiMetrics, clean_verb
from kjobs.server.patch import PATCH_MEDIA, apply_patch, unsupported_patch_type
from kjobs.server.portforward import NoPortForward, PortForwardSource
from kjobs.server.protocol import HIJACK
from kjobs.server.rbac import REQUEST_USER
from kjobs.server.registry import Resource
from kjobs.server.remotecommand import ExecSource, NoExec
from kjobs.server.resourcemetrics import NoUsage, UsageSource
from kjobs.server.service import ORPHAN_WARNING, ApiService, DeleteOptions, Result
from kjobs.server.storage import Storage
from kjobs.store import Store
from kjobs.store.events import Event

log = logging.getLogger("kjobs.server")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

JSON = b"application/json"
METRICS_CONTENT_TYPE = b"text/plain; version=0.0.4; charset=utf-8"
BOOKMARK_INTERVAL = 60.0
"""Seconds between the periodic bookmarks of a watch that allows them, counted from its start and from each
bookmark, events or not (the cacher's `defaultBookmarkFrequency`, `cacheWatcher.nextBookmarkTime`)."""
PRE_DEADLINE_BOOKMARK = 2.0
"""Seconds before a watch's `timeoutSeconds` runs out that it gets a bookmark (apiserver cacher)."""
RESOURCE_VERSION_WAIT = 3.0
"""Seconds a LIST or a `sendInitialEvents` watch from a resourceVersion newer than the store's waits for a write
to reach it before the 504 `Too large resource version` (the watch cache's `blockTimeout`)."""
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
"""The annotation of the bookmark that ends a `sendInitialEvents` watch's initial events (metav1)."""


def _headers(content_type: bytes = JSON, warnings: list[str] | None = None) -> list[tuple[bytes, bytes]]:
    headers = [(b"content-type", content_type), (b"cache-control", b"no-cache, private")]
    for text in warnings or ():
        headers.append((b"warning", warning_header(text)))
    return headers


def warning_header(text: str) -> bytes:
    """A `Warning: 299 - "text"` value: quotes and backslashes escaped, control characters blanked."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    clean = "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in escaped)
    return f'299 - "{clean}"'.encode()


async def _respond(
    send: Send,
    code: int,
    body: bytes,
    content_type: bytes = JSON,
    warnings: list[str] | None = None,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    headers = _headers(content_type, warnings)
    if extra:
        names = {k for k, _ in extra}
        headers = [h for h in headers if h[0] not in names] + extra
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": code, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _moved(send: Send, location: str) -> None:
    """Go's http.Redirect with 301 for a GET: the Location and its short HTML body."""
    body = f'<a href="{html.escape(location)}">Moved Permanently</a>.\n\n'.encode()
    await _respond(send, 301, body, b"text/html; charset=utf-8", extra=[(b"location", location.encode())])


def _error(exc: ApiError) -> bytes:
    return orjson.dumps(exc.status())


def not_found_resource() -> ApiError:
    """The apiserver's 404 for a path it does not serve."""
    return ApiError(404, "NotFound", "the server could not find the requested resource", details={})


def method_not_allowed() -> ApiError:
    """405 for a verb the path does not support."""
    return ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")


_PROTOBUF = "application/vnd.kubernetes.protobuf"
_YAML_MEDIA = ("application/yaml", "application/apply-patch+yaml")
_TEXT_MEDIA = ("application/json", "application/yaml")
_BODY_MEDIA = (*_TEXT_MEDIA, _PROTOBUF)
"""What a create, update, eviction or DeleteOptions body may be (the apiserver's serializers; no Content-Type
means the first, JSON: apiserver `negotiation.NegotiateInputSerializerForMediaType`)."""


STRATEGIC = "application/strategic-merge-patch+json"
CUSTOM_RESOURCE_PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
)


def unsupported_media_type(accepted: Sequence[str]) -> ApiError:
    """415, as apiserver's `negotiation.NewUnsupportedMediaTypeError` renders it."""
    return ApiError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: " + ", ".join(accepted),
    )


class _JsonValues:
    """Constructors that give only what JSON can hold, as apimachinery's YAML-to-JSON conversion does
    (sigs.k8s.io/yaml `convertToJSONableObject`, over go-yaml): timestamps stay the strings they were written as,
    `!!binary` is its decoded text, a `!!set` a map of nulls, a key that is a number or boolean its text, and a
    null key, NaN or an infinity refuse to parse (`unsupported map key`, `json: unsupported value`)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if not isinstance(node, yaml.MappingNode):
            raise yaml.YAMLError(f"expected a mapping, found {node.id}")
        self.flatten_mapping(node)  # type: ignore[attr-defined]
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)  # type: ignore[attr-defined]
            if isinstance(key, bool):
                key = "true" if key else "false"
            elif isinstance(key, (int, float)) and math.isfinite(key):
                key = str(key)
            elif not isinstance(key, str):
                raise yaml.YAMLError(f"unsupported map key of type: {type(key).__name__}, key: {key!r}")
            out[key] = self.construct_object(value_node, deep=deep)  # type: ignore[attr-defined]
        return out

    def construct_yaml_timestamp(self, node: Any) -> Any:
        return str(node.value)

    def construct_yaml_binary(self, node: Any) -> Any:
        data: bytes = yaml.SafeLoader.construct_yaml_binary(self, node)  # type: ignore[arg-type]
        return data.decode("utf-8", "replace")

    def construct_yaml_set(self, node: Any) -> Any:
        yield from yaml.SafeLoader.construct_yaml_map(self, node)  # type: ignore[arg-type]

    def construct_yaml_float(self, node: Any) -> float:
        value: float = yaml.SafeLoader.construct_yaml_float(self, node)  # type: ignore[arg-type]
        if not math.isfinite(value):
            raise yaml.YAMLError(f"json: unsupported value: {node.value}")
        return value


def _json_constructors(loader: Any) -> None:
    for tag, name in (
        ("timestamp", "construct_yaml_timestamp"),
        ("binary", "construct_yaml_binary"),
        ("set", "construct_yaml_set"),
        ("float", "construct_yaml_float"),
    ):
        loader.add_constructor(f"tag:yaml.org,2002:{tag}", getattr(loader, name))


class _NoAliasLoader(_JsonValues, yaml.SafeLoader):
    """YAML without anchors/aliases (a few bytes of aliases can expand to gigabytes, a "billion laughs") and no
    deeper than `limits.MAX_DEPTH` (PyYAML composes recursively: deeper input would exhaust Python's stack). The
    pure-Python loader, used only where PyYAML was built without libyaml (see `load_yaml`)."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError("aliases are not supported")
        self._depth += 1
        try:
            if self._depth > limits.MAX_DEPTH:
                raise yaml.YAMLError(f"exceeded max depth of {limits.MAX_DEPTH}")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_json_constructors(_NoAliasLoader)
_C_LOADER: Any = None
if getattr(yaml, "CSafeLoader", None) is not None:

    class _CLoader(_JsonValues, yaml.CSafeLoader):
        """libyaml's safe loader with `_JsonValues`' constructors (aliases and depth are checked before it runs)."""

    _json_constructors(_CLoader)
    _C_LOADER = _CLoader
_COLLECTION_START = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_COLLECTION_END = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def load_yaml(raw: bytes) -> Any:
    """A YAML (or JSON) request body as a value: what apimachinery's `yaml.ToJSON` reads, bounded.

    Bodies that are JSON (kubectl's server-side apply sends JSON as `application/apply-patch+yaml`) are read by
    orjson. Other YAML is read by libyaml after a first pass over its events, which refuses aliases and nesting
    deeper than `limits.MAX_DEPTH` before anything is built: the pure-Python loader takes about 15 s of CPU for a
    megabyte of `[1,1,1,...]`, libyaml a fifth of that. Raises `yaml.YAMLError` for what does not parse."""
    head = raw.lstrip()[:1]
    if head in (b"{", b"["):
        with contextlib.suppress(orjson.JSONDecodeError):
            return orjson.loads(raw)
    if _C_LOADER is None:  # pragma: no cover - PyYAML without libyaml
        return yaml.load(raw, Loader=_NoAliasLoader)
    depth = 0
    try:
        for event in yaml.parse(raw, Loader=_C_LOADER):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise yaml.YAMLError("aliases are not supported")
            if isinstance(event, _COLLECTION_START):
                depth += 1
                if depth > limits.MAX_DEPTH:
                    raise yaml.YAMLError(f"exceeded max depth of {limits.MAX_DEPTH}")
            elif isinstance(event, _COLLECTION_END):
                depth -= 1
        return yaml.load(raw, Loader=_C_LOADER)
    except (ValueError, UnicodeError) as exc:  # what libyaml's reader raises beside YAMLError
        raise yaml.YAMLError(str(exc)) from None


YAML_IN_THREAD_BYTES = 64 * 1024
"""YAML bodies beyond this size are read in a worker thread, so one large body does not stall every other request
while it is read (a 3 MiB one takes seconds of CPU)."""


FIELD_MANAGER_MAX_LENGTH = 128


@functools.lru_cache(maxsize=256)  # a server sees a handful of user agents, once per request each
def manager_from_user_agent(user_agent: str) -> str:
    """Kubernetes' `prefixFromUserAgent`: what precedes the first `/`, its unprintable characters dropped, cut to
    the 128 bytes a field manager may have."""
    out: list[str] = []
    size = 0
    for char in user_agent.split("/", 1)[0]:
        if not char.isprintable():
            continue
        size += len(char.encode())
        if size > FIELD_MANAGER_MAX_LENGTH:
            break
        out.append(char)
    return "".join(out)


class Request:
    """The parts of an HTTP request the handlers read."""

    __slots__ = (
        "accept",
        "accept_encoding",
        "auth",
        "client_cert",
        "content_type",
        "headers",
        "hijack",
        "if_none_match",
        "impersonation",
        "method",
        "path",
        "peer",
        "query",
        "raw_query",
        "receive",
        "stream_protocols",
        "upgrade",
        "user_agent",
    )

    def __init__(self, scope: Scope, receive: Receive) -> None:
        self.method: str = scope["method"]
        self.path: str = unquote(scope["path"]) if "%" in scope["path"] else scope["path"]
        raw_query: bytes = scope.get("query_string", b"")
        self.raw_query = raw_query
        """The query as sent: pods/exec repeats `command`."""
        self.query: dict[str, str] = dict(parse_qsl(raw_query.decode("latin-1"), keep_blank_values=True))
        self.upgrade = ""
        self.accept = ""
        self.content_type = ""
        self.auth = ""
        self.client_cert = client_cert_name(scope)
        self.user_agent = ""
        self.accept_encoding = ""
        self.if_none_match = ""
        self.impersonation: list[tuple[str, str]] = []
        self.stream_protocols: list[str] = []
        """X-Stream-Protocol-Version values (an SPDY upgrade's sub-protocols)."""
        self.hijack: Callable[..., Any] | None = (scope.get("extensions") or {}).get(HIJACK)
        """Takes over the connection of an `Upgrade: SPDY/3.1` request (`kjobs.server.protocol`)."""
        for key, value in scope.get("headers", ()):
            if key == b"accept":
                self.accept = value.decode("latin-1")
            elif key == b"accept-encoding":
                self.accept_encoding = value.decode("latin-1")
            elif key == b"content-type":
                self.content_type = value.decode("latin-1")
            elif key == b"authorization":
                self.auth = value.decode("latin-1")
            elif key == b"user-agent":
                self.user_agent = value.decode("utf-8", "replace")
            elif key == b"upgrade":
                self.upgrade = value.decode("latin-1")
            elif key == b"if-none-match":
                self.if_none_match = value.decode("latin-1")
            elif key == b"x-stream-protocol-version":
                self.stream_protocols.append(value.decode("latin-1"))
            elif key.startswith(b"impersonate-"):
                self.impersonation.append((key.decode("latin-1"), value.decode("utf-8", "replace")))
        self.receive = receive
        self.headers: Sequence[tuple[bytes, bytes]] = scope.get("headers", ())
        """The headers as sent (a proxy passes them on)."""
        self.peer: Any = scope.get("client")

    @property
    def host(self) -> str:
        """The `Host` header (a proxied `Location` naming it is rewritten)."""
        return next((v.decode("latin-1") for k, v in self.headers if k == b"host"), "")

    @property
    def client(self) -> str | None:
        """The client's address, for `X-Forwarded-For`."""
        return str(self.peer[0]) if self.peer else None

    @property
    def manager(self) -> str | None:
        """Who a create, update or non-apply patch records in `managedFields`: the `fieldManager` parameter,
        else the User-Agent's product (`managerOrUserAgent`: `OpenAPI-Generator` for the Python client)."""
        return self.query.get("fieldManager") or manager_from_user_agent(self.user_agent) or None

    async def body(self) -> bytes:
        """The whole request body (413 beyond `limits.MAX_BODY`; `ClientGone` when the client leaves first)."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                raise ClientGone
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limits.MAX_BODY:
                raise limits.body_too_large()
            chunks.append(chunk)
            if not message.get("more_body"):
                return b"".join(chunks)

    @property
    def media(self) -> str:
        """The Content-Type's media type, lower-cased, without parameters (empty when there is none)."""
        return self.content_type.split(";", 1)[0].strip().lower()

    async def decoded(self, *, patch: bool = False, into: str | None = None) -> Any:
        """The body as JSON (or YAML when so declared); 415 for a media type the verb does not accept (`patch`:
        the patch types), 400 BadRequest when it does not parse or nests deeper than `limits.MAX_DEPTH`.

        `into`: the kind a create or update decodes the body into. Its JSON that does not parse is then the
        handlers' `transformDecodeError` (apiserver pkg/endpoints/handlers/rest.go): no kind could be read, so
        `the object provided is unrecognized (must be of type KIND): ...` with a summary of the body."""
        media = self.media
        if patch and media not in PATCH_MEDIA:
            raise unsupported_patch_type()
        raw = await self.body()
        if not patch and media and media not in _BODY_MEDIA and (raw or self.method != "DELETE"):
            raise unsupported_media_type(_BODY_MEDIA)
        if media == _PROTOBUF and raw:
            return protobuf.decode(raw)  # what kubectl's typed client sends for `kubectl create job`
        if media == _PROTOBUF:
            return None
        if not raw.strip():
            return None
        try:
            if media in _YAML_MEDIA:
                if len(raw) > YAML_IN_THREAD_BYTES:
                    value = await asyncio.to_thread(load_yaml, raw)
                else:
                    value = load_yaml(raw)
            else:
                try:
                    value = orjson.loads(raw)
                except orjson.JSONDecodeError as refused:
                    value = gojson.loads(raw, refused)  # what Go stores as U+FFFD, or the refusal again
        except (orjson.JSONDecodeError, yaml.YAMLError) as exc:
            if into is not None and media not in _YAML_MEDIA:
                reason = f"couldn't get version/kind; json parse error: {go_json_syntax_error(raw)}"
                raise bad_request(
                    f"the object provided is unrecognized (must be of type {into}): {reason} ({_summarize(raw)})"
                ) from None
            raise bad_request(f"couldn't get version/kind; json parse error: {_first_line(exc)}") from None
        if limits.too_deep(value, raw):
            raise bad_request(f"couldn't get version/kind; json parse error: exceeded max depth of {limits.MAX_DEPTH}")
        return value

    def flag(self, name: str) -> bool:
        """A boolean query parameter as apimachinery decodes one (`Convert_Slice_string_To_bool`): absent, `false`
        or `0` is false, any other value (`true`, `1`, `yes`, even empty) true."""
        value = self.query.get(name)
        return value is not None and value.lower() not in ("false", "0")

    def integer(self, name: str) -> int | None:
        """An integer query parameter (None: absent or empty); 400 BadRequest with `strconv.ParseInt`'s error
        when it is not one, as the handlers answer a `DecodeParameters` failure."""
        text = self.query.get(name, "")
        return params.parse_int64(text) if text else None

    @property
    def target(self) -> negotiation.Target | None:
        """The `meta.k8s.io` transformation the client asked for (Table, PartialObjectMetadata[List]), if any."""
        return negotiation.target(self.accept) if "as=" in self.accept else None

    @property
    def wants_table(self) -> bool:
        """Whether the client asked for a `meta.k8s.io` Table."""
        wanted = self.target
        return wanted is not None and wanted.kind == negotiation.TABLE

    def metadata_only(self, r: Resource, *, is_list: bool) -> negotiation.Target | None:
        """The `PartialObjectMetadata[List]` target asked for (406 when its arity does not suit the response)."""
        wanted = self.target
        if wanted is None or wanted.kind == negotiation.TABLE:
            return None
        negotiation.require(wanted, list_kind=r.list_kind if is_list else None, api_version=r.api_version, kind=r.kind)
        return wanted


class ClientGone(Exception):
    """The client closed the connection before its request was read: nobody to answer, nothing to log."""


def _summarize(raw: bytes, limit: int = 30) -> str:
    """handlers/rest.go `summarizeData`: a body that starts as JSON as text, any other in hex; 30 bytes."""
    if not raw:
        return "<empty>"
    shown = raw[:limit]
    text = shown.decode("utf-8", "replace") if raw[:1] == b"{" else shown.hex()
    return text + " ..." if len(raw) > limit else text


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


UPKEEP_INTERVALS = (bootstrap.KUBERNETES_SERVICE_INTERVAL, bootstrap.SYSTEM_NAMESPACES_INTERVAL)

DEFAULT_SECURE_PORT = 6443
"""kube-apiserver's `--secure-port` default: the `kubernetes` Service's target port when the port is not known."""


class App:
    """The Kubernetes API as an ASGI application (see `create_app`)."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Callable[[], float],
        logs: LogSource | None,
        exec_source: ExecSource | None = None,
        portforward_source: PortForwardSource | None = None,
        usage: UsageSource | None = None,
        authenticator: Authenticator | None,
        bookmark_interval: float = BOOKMARK_INTERVAL,
        metrics: Sequence[Any] | None = None,
        admission: AdmissionSettings | None = None,
        watch_buffer: int = limits.WATCH_BUFFER,
        features: FeatureGates = DEFAULT,
        min_request_timeout: float = limits.MIN_REQUEST_TIMEOUT,
        resource_version_wait: float = RESOURCE_VERSION_WAIT,
        upkeep_intervals: tuple[float, float] = UPKEEP_INTERVALS,
        event_ttl: float = eventttl.EVENT_TTL,
    ) -> None:
        self.storage = Storage(store)
        self.resource_version_wait = resource_version_wait
        self.watch_buffer = watch_buffer
        self.min_request_timeout = min_request_timeout
        self.service = ApiService(self.storage, clock=clock, logs=logs, admission=admission, features=features)
        self.clock = clock
        self.exec_source: ExecSource = exec_source or NoExec()
        if portforward_source is None and callable(getattr(exec_source, "port_target", None)):
            portforward_source = cast(PortForwardSource, exec_source)  # the node agents' source serves both
        self.portforward_source: PortForwardSource = portforward_source or NoPortForward()
        self.portforwards = portforward.Sessions()
        self.usage: UsageSource = usage or NoUsage()
        self.authenticator = authenticator
        self.bookmark_interval = bookmark_interval
        self.metrics = metrics
        self.api_metrics = ApiMetrics()
        self.started = False
        self.api_port: int | None = None
        """The port this application is served on, once bound: the `kubernetes` Service's target port."""
        self._watches: set[Any] = set()
        self._streams_closed = False
        self.upkeep_intervals = upkeep_intervals
        """Seconds between re-creations of the `kubernetes` Service and of the system namespaces when missing."""
        self._upkeep: list[asyncio.Task[None]] = []
        self.event_expiry = eventttl.EventExpiry(store, clock, ttl=event_ttl) if event_ttl > 0 else None
        """Deletes Events `event_ttl` seconds after their last write while the application is served."""

    async def startup(self) -> None:
        """Create the built-in namespaces, system PriorityClasses, RBAC's bootstrap roles and bindings and the
        `kubernetes` Service (idempotent; a resumed data directory already has them)."""
        if not self.started:
            await self.service.ensure_namespaces()
            await self.service.ensure_system_priority_classes()
            await self.service.ensure_rbac_bootstrap()
            await self.service.ensure_kubernetes_service(self.api_port or DEFAULT_SECURE_PORT)
            self.started = True

    def start_upkeep(self) -> None:
        """Begin the loops that create the `kubernetes` Service and the system namespaces again when they go
        missing (`kjobs.server.bootstrap`): the lifespan's start, so while the application is served."""
        if not self._upkeep:
            self._upkeep = bootstrap.upkeep_tasks(
                self.service.ensure_namespaces,
                lambda: self.service.ensure_kubernetes_service(self.api_port or DEFAULT_SECURE_PORT, reconcile=False),
                service_interval=self.upkeep_intervals[0],
                namespaces_interval=self.upkeep_intervals[1],
            )
            if self.event_expiry is not None:
                expiry = self.event_expiry
                self._upkeep.append(asyncio.create_task(bootstrap.every(expiry.period, expiry.sweep, "event expiry")))

    def shutdown(self) -> None:
        """Stop the upkeep loops (the lifespan's shutdown; a later start begins them again)."""
        for task in self._upkeep:
            task.cancel()
        self._upkeep = []

    def open_streams(self) -> None:
        """Serve watches again (a server started anew over this application after `close_streams`)."""
        self._streams_closed = False

    def close_streams(self) -> None:
        """End every open watch stream cleanly, and any opened from now on at once (thread-safe; used before
        shutting the server down, which waits for open streams: a client that re-watches meanwhile, as an
        informer does when its watch ends, must not hold the shutdown up)."""
        self._streams_closed = True
        for watch in list(self._watches):
            watch.close()
        self.portforwards.close_all()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.startup()
                except Exception as exc:  # pragma: no cover - reported to the server, which exits
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                self.start_upkeep()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        route = routing.parse(request.path)
        proxied = route.subresource == "proxy"  # a backend's answer is passed on as it is
        if request.path.startswith("/api") and not proxied and compression.accepts_gzip(request.accept_encoding):
            send = compression.gzipping(send)  # outermost: what is gzipped is the answer as written
        if pretty.wanted(request.path, request.query, request.user_agent) and not proxied:
            send = pretty.indenting(send)  # curl's and browsers' answers are indented, as kube-apiserver's
        if route.kind != "resource":
            await self._guarded(request, route, send)
            return
        start = time.perf_counter()
        status = [500]

        async def tracking_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            elif message["type"] == UPGRADED:  # the connection was taken over (pods/portforward over SPDY)
                status[0] = 101
                return
            await send(message)

        try:
            if not proxied and ("yaml" in request.accept.lower() or request.accept.startswith("text/")):
                await self._negotiated(request, route, tracking_send)
                return
            await self._guarded(request, route, tracking_send)
        finally:
            self.api_metrics.observe(_metric_labels(request, route), status[0], time.perf_counter() - start)

    async def _negotiated(self, request: Request, route: routing.Route, send: Send) -> None:
        """A resource request whose `Accept` is not simply JSON (`negotiation.wants_yaml`): 406 for what is not
        served, else the answer, rendered as YAML (its Status too) when YAML was asked for."""
        try:
            yaml_out = negotiation.wants_yaml(request.accept, stream=request.flag("watch"))
        except ApiError as exc:
            await _respond(send, exc.code, _error(exc))
            return
        if not yaml_out:
            await self._guarded(request, route, send)
            return
        started: dict[str, Any] = {}

        async def as_yaml(message: dict[str, Any]) -> None:
            """Hold a JSON answer's head until its (single) body can be rendered; pass anything else on (logs)."""
            if message["type"] == "http.response.start":
                if dict(message.get("headers", [])).get(b"content-type") == JSON:
                    started.update(message)
                    return
            elif started and not message.get("more_body"):
                head = [(k, v) for k, v in started["headers"] if k not in (b"content-type", b"content-length")]
                body = yaml.safe_dump(orjson.loads(message.get("body") or b"null"), default_flow_style=False).encode()
                head += [(b"content-type", negotiation.YAML.encode()), (b"content-length", str(len(body)).encode())]
                await send({**started, "headers": head})
                message = {"type": "http.response.body", "body": body}
            await send(message)

        await self._guarded(request, route, as_yaml)

    async def _guarded(self, request: Request, route: routing.Route, send: Send) -> None:
        try:
            await self._dispatch(request, route, send)
        except ApiError as exc:
            retry = (exc.details or {}).get("retryAfterSeconds")
            extra = [(b"retry-after", str(retry).encode())] if retry else None
            await _respond(send, exc.code, _error(exc), extra=extra)
        except ClientGone:
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("internal error serving %s %s", request.method, request.path)
            err = ApiError(500, "InternalError", f"Internal error occurred: {exc}")
            with contextlib.suppress(Exception):  # the response may already have started
                await _respond(send, 500, _error(err))

    # ------------------------------------------------------------------------------------------- dispatch

    def _authorize(self, request: Request, route: routing.Route) -> authz.UserInfo:
        """Who makes the request (401 without a credential this server issued), if they may (403). Without any
        credential, the health and version routes are asked as `system:anonymous`, whom RBAC lets `get` only
        `/healthz`, `/livez`, `/readyz`, `/version` and `/version/` (`system:public-info-viewer`): a single check
        such as `/readyz/etcd` is 403, as kube-apiserver answers it."""
        user = authz.UNSECURED
        if self.authenticator is not None:
            if route.kind in PUBLIC_ROUTES and not request.auth and not request.client_cert:
                user = authz.ANONYMOUS_USER
            else:
                user = self.authenticator.check(request.auth, request.client_cert, self._token_user)
        if request.impersonation:
            user = authz.impersonate(user, request.impersonation, self.service.rbac.allowed)
        if authz.MASTERS not in user.groups:  # the privileged-group authorizer: no RBAC lookup at all
            attrs = _attributes(request, route)
            allowed, reason = self.service.rbac.authorize(user, attrs, explain=False)
            if not allowed:
                raise authz.forbidden(user, attrs, reason)
        return user

    def _token_user(self, token: str) -> authz.UserInfo | None:
        """The user of a ServiceAccount token this server issued (`kjobs.server.tokenrest.token_user`)."""
        return tokenrest.token_user(self.service, token)

    async def _dispatch(self, request: Request, route: routing.Route, send: Send) -> None:
        user = self._authorize(request, route)
        token = REQUEST_USER.set(user)  # whom RBAC's escalation checks of a role or binding write ask about
        try:
            await self._dispatch_as(request, route, send, user)
        finally:
            REQUEST_USER.reset(token)

    async def _dispatch_as(self, request: Request, route: routing.Route, send: Send, user: authz.UserInfo) -> None:
        kind = route.kind
        if kind == "health":
            answered = health.answer(route.name, route.subresource, request.raw_query, self._health_checks)
            if answered is None:
                raise not_found_resource()
            await _respond(send, answered[0], answered[1], health.TEXT, extra=[(b"x-content-type-options", b"nosniff")])
            return
        if kind == "version":
            if request.method != "GET":  # a GET-only route of the apiserver's (pkg/server/routes/version.go)
                raise method_not_allowed()
            # written as `WriteRawJSON` writes it: indented by two spaces (`kubectl get --raw /version` shows it so)
            await _respond(send, 200, orjson.dumps(discovery.VERSION, option=orjson.OPT_INDENT_2))
            return
        if kind == "resource":
            if route.resource is not None and route.resource.review:
                await self._review(request, route, user, send)
                return
            await self._resource(request, route, send)
            return
        if kind == "metrics":
            await _respond(send, 200, self._metrics(), METRICS_CONTENT_TYPE)
            return
        if kind == "resourcemetrics":
            if request.method != "GET" or request.flag("watch"):
                raise method_not_allowed()
            await _respond(send, 200, orjson.dumps(self._resource_metrics(request, route)))
            return
        if request.method != "GET":
            raise method_not_allowed() if kind != "notfound" else not_found_resource()
        if kind == "openapi-v2":
            await self._openapi_v2(request, send)
            return
        body = self._discovery(request, route)
        if body is None:
            raise not_found_resource()
        if kind in ("api", "apis") and discovery.wants_aggregated(request.accept):
            await _respond(send, 200, discovery.aggregated(kind == "api"), discovery.AGGREGATED_CONTENT_TYPE.encode())
            return
        extra = None
        if kind == "openapi-index":
            # handler3's HandleDiscovery: the index's SHA-512 as its ETag, through http.ServeContent, which
            # answers a matching If-None-Match with 304 and no body.
            etag = f'"{hashlib.sha512(body).hexdigest().upper()}"'
            tags = {t.strip().removeprefix("W/") for t in request.if_none_match.split(",")}
            if etag in tags or "*" in tags:
                await send({"type": "http.response.start", "status": 304, "headers": [(b"etag", etag.encode())]})
                await send({"type": "http.response.body", "body": b""})
                return
            extra = [(b"etag", etag.encode())]
        if kind == "openapi":
            digest = openapi.document_hash(route.group, route.version, self.service.features)
            extra = [(b"etag", f'"{digest}"'.encode())]
            if request.query.get("hash"):
                if request.query["hash"] != digest:
                    # kube-openapi's handler3 HandleGroupVersion: a stale hash is moved permanently to the current
                    # one, so a client's HTTP cache never keeps another document under an immutable link.
                    await _moved(send, f"{request.path.rstrip('/')}?hash={digest}")
                    return
                extra.append((b"cache-control", b"public, immutable"))
        await _respond(send, 200, body, extra=extra)

    async def _openapi_v2(self, request: Request, send: Send) -> None:
        """kube-openapi's handler (pkg/handler/handler.go): JSON or gnostic protobuf by `Accept` (406 for
        neither), `Vary: Accept`, the SHA-512 of the JSON as the ETag of both, `If-None-Match` answered 304
        (http.ServeContent), gzip when the client accepts it (its gziphandler, from 1400 bytes)."""
        media = openapiv2.negotiate(request.accept)
        vary = (b"vary", b"Accept")
        if media is None:
            await _respond(send, 406, b"", b"text/plain; charset=utf-8", extra=[vary])
            return
        doc = await asyncio.to_thread(openapiv2.document, self.service.features)
        etag = f'"{doc.etag}"'.encode()
        tags = {t.strip().removeprefix("W/") for t in request.if_none_match.split(",")}
        if etag.decode() in tags or "*" in tags:
            await send({"type": "http.response.start", "status": 304, "headers": [vary, (b"etag", etag)]})
            await send({"type": "http.response.body", "body": b""})
            return
        extra = [vary, (b"etag", etag)]
        body = doc.body(media)
        if len(body) >= 1400 and _accepts_gzip(request.accept_encoding):
            body = await asyncio.to_thread(doc.gzipped, media)
            extra += [(b"content-encoding", b"gzip"), (b"vary", b"Accept-Encoding")]
        await _respond(send, 200, body, media.encode(), extra=extra)

    @property
    def _health_checks(self) -> dict[str, health.Check]:
        """The checks `/healthz`, `/livez` and `/readyz` run (`kjobs.server.health`)."""
        return {"etcd": self._store_answers, "etcd-readiness": self._store_answers, "shutdown": self._not_stopping}

    def _store_answers(self) -> str | None:
        try:
            self.storage.exists("namespaces", "", "default")
        except Exception as exc:
            return str(exc) or type(exc).__name__
        return None

    def _not_stopping(self) -> str | None:
        return "process is shutting down" if self._streams_closed else None

    def _metrics(self) -> bytes:
        """The registries in the text a Kubernetes component serves (`kjobs.server.exposition`)."""
        from prometheus_client import REGISTRY

        from kjobs.server.exposition import exposition

        registries = list(self.metrics) if self.metrics is not None else [REGISTRY]
        registries.append(self.api_metrics.registry)
        return exposition(registries)

    def _resource_metrics(self, request: Request, route: routing.Route) -> Obj:
        """A `metrics.k8s.io` get or list (`kjobs.server.resourcemetrics`), from the usage source."""
        now = self.clock()
        pods = route.subresource == "pods"
        plural, kind = ("pods", "PodMetrics") if pods else ("nodes", "NodeMetrics")
        namespace = route.namespace if pods else ""
        if route.name:
            obj = self.storage.get(plural, namespace or "", route.name)
            if obj is None:
                raise not_found(plural, route.name)
            found = (resourcemetrics.pod_items if pods else resourcemetrics.node_items)([obj], self.usage, now)
            if not found:
                raise resourcemetrics.metrics_not_found(plural, namespace or "", route.name)
            return found[0]
        objs, _ = self.storage.list(
            plural,
            namespace,
            label_selector=parse_label_selector(request.query.get("labelSelector")),
            field_selector=parse_field_selector(request.query.get("fieldSelector")),
        )
        items = (resourcemetrics.pod_items if pods else resourcemetrics.node_items)(objs, self.usage, now)
        return resourcemetrics.item_list(kind, items)

    def _discovery(self, request: Request, route: routing.Route) -> bytes | None:
        kind = route.kind
        if kind == "api":
            return discovery.legacy_api()
        if kind == "apis":
            return discovery.legacy_apis()
        if kind == "group":
            if route.group == resourcemetrics.GROUP:
                return discovery.metrics_api_group()
            if route.group not in registry.GROUPS or not route.group:
                return None
            return orjson.dumps(discovery.api_group(route.group))
        if kind == "resources":
            return discovery.resource_list(route.group, route.version)
        if kind == "openapi-index":
            return openapi.index(self.service.features)
        if kind == "openapi":
            return openapi.group_version_document(route.group, route.version, self.service.features)
        return None

    async def _resource(self, request: Request, route: routing.Route, send: Send) -> None:
        r = route.resource
        assert r is not None
        method, sub = request.method, route.subresource
        if r.only and _verb(method, bool(route.name), request.flag("watch")) not in r.only:
            raise method_not_allowed()
        namespace = route.namespace if r.namespaced else ""
        if not route.name:
            if method == "GET":
                if request.flag("watch"):
                    await self._watch(request, r, route.namespace, send)
                else:
                    await self._list(request, r, route.namespace, send)
                return
            if method == "POST" and (route.namespace is not None or not r.namespaced):
                writeoptions.check(request.query, "CreateOptions")
                body = await request.decoded(into=r.kind)
                result = await self.service.create(
                    r,
                    namespace or "",
                    body,
                    field_validation=request.query.get("fieldValidation", ""),
                    manager=request.manager,
                    dry_run=bool(request.query.get("dryRun")),
                )
                await self._send_result(send, result, r)
                return
            if method == "DELETE":
                await self._delete_collection(request, r, route.namespace, send)
                return
            raise method_not_allowed()
        name = route.name
        ns = namespace or ""
        if sub == "proxy":
            await self._proxy(request, r, ns, name, send)
            return
        if sub == "log":
            if method != "GET":
                raise method_not_allowed()
            await self._log(request, ns, name, send)
            return
        if sub in ("exec", "attach"):
            if method not in ("GET", "POST"):  # connect subresources: GET and POST only
                raise method_not_allowed()
            # reached only without a WebSocket upgrade: the checks a cluster makes first, then what is missing
            remotecommand.exec_options(request.raw_query, self.service.get_pod(ns, name))
            if request.upgrade:
                raise bad_request(f"pods/{sub} is served over WebSocket only, not {request.upgrade}")
            raise bad_request("Upgrade request required")
        if sub == "portforward":
            if method not in ("GET", "POST"):
                raise method_not_allowed()
            await self._portforward_spdy(request, ns, name, send)
            return
        if sub == "token":  # a ServiceAccount's TokenRequest (kjobs.server.tokenrest)
            if method != "POST":
                raise method_not_allowed()
            writeoptions.check(request.query, "CreateOptions")
            body = await request.decoded()
            result = await self.service.create_token(ns, name, body, dry_run=bool(request.query.get("dryRun")))
            await self._send_result(send, result, r)
            return
        if sub in ("eviction", "binding"):
            if method != "POST":
                raise method_not_allowed()
            writeoptions.check(request.query, "CreateOptions")
            body = await request.decoded()
            result = await (
                self.service.evict(ns, name, body, dry_run=bool(request.query.get("dryRun")))
                if sub == "eviction"
                else self.service.bind(ns, name, body, dry_run=bool(request.query.get("dryRun")))
            )
            await self._send_result(send, result, r)
            return
        if sub == "scale" and isinstance(r, CustomResource):
            await self._scale(request, r, ns, name, send)
            return
        if sub == "finalize" and method != "PUT":
            raise method_not_allowed()
        if method == "GET":
            partial = request.metadata_only(r, is_list=False)
            if partial is not None:
                obj = self.service.get(r, ns, name)
                await _respond(send, 200, orjson.dumps(negotiation.partial(obj, partial)))
                return
            if request.wants_table:
                obj = self.service.get(r, ns, name)
                table = tables.to_table(
                    [obj],
                    kind=r.kind,
                    api_version=r.api_version,
                    now=self.clock(),
                    include_object=request.query.get("includeObject", "Metadata"),
                )
                await _respond(send, 200, orjson.dumps(table))
                return
            await _respond(send, 200, self.storage.get_raw(r.store_key, ns, name))
            return
        query = request.query
        if method == "PUT":
            writeoptions.check(query, "UpdateOptions")
            body = await request.decoded(into=r.kind)
            result = await self.service.update(
                r,
                ns,
                name,
                body,
                subresource=sub,
                field_validation=query.get("fieldValidation", ""),
                manager=request.manager,
                dry_run=bool(query.get("dryRun")),
            )
        elif method == "PATCH":
            if isinstance(r, CustomResource) and request.content_type.split(";", 1)[0].strip().lower() == STRATEGIC:
                # a custom resource has no Go struct to carry patch strategies (customresource_handler.go)
                raise unsupported_media_type(CUSTOM_RESOURCE_PATCH_TYPES)
            writeoptions.check(query, "PatchOptions", patch_type=request.content_type.split(";", 1)[0].strip().lower())
            body = await request.decoded(patch=True)
            result = await self.service.patch(
                r,
                ns,
                name,
                request.content_type,
                body,
                subresource=sub,
                field_validation=query.get("fieldValidation", ""),
                # Server-side apply needs the parameter itself; the User-Agent stands in for other patches only.
                manager=query.get("fieldManager") or None
                if request.content_type.split(";", 1)[0].strip().lower() == "application/apply-patch+yaml"
                else request.manager,
                force=request.flag("force"),
                dry_run=bool(query.get("dryRun")),
            )
        elif method == "DELETE" and not sub:
            body = await request.decoded()
            if body is not None and not isinstance(body, dict):
                raise bad_request("DeleteOptions must be a JSON object")
            result = await self.service.delete(r, ns, name, DeleteOptions.parse(body, query))
        else:
            raise method_not_allowed()
        await self._send_result(send, result, r)

    async def _scale(self, request: Request, r: CustomResource, namespace: str, name: str, send: Send) -> None:
        """A custom resource's `/scale` (`kjobs.server.crscale`): read and written as an autoscaling/v1 Scale."""
        current = self.service.get(r, namespace, name)
        if request.method == "GET":
            await _respond(send, 200, orjson.dumps(crscale.scale_of(r, current)))
            return
        if request.method == "PUT":
            writeoptions.check(request.query, "UpdateOptions")
            wanted = await request.decoded()
        elif request.method == "PATCH":
            media = request.content_type.split(";", 1)[0].strip().lower()
            writeoptions.check(request.query, "PatchOptions", patch_type=media)
            body = await request.decoded(patch=True)
            wanted = apply_patch(media, crscale.scale_of(r, current), body)
        else:
            raise method_not_allowed()
        replicas = crscale.replicas_of(wanted, name)
        result = await self.service.update(
            r,
            namespace,
            name,
            crscale.with_replicas(r, current, replicas),
            manager=request.manager,
            dry_run=bool(request.query.get("dryRun")),
        )
        await _respond(send, 200, orjson.dumps(crscale.scale_of(r, result.obj)), warnings=result.warnings)

    async def _review(self, request: Request, route: routing.Route, user: authz.UserInfo, send: Send) -> None:
        """A review: only POST to its collection (405 for another method there, 404 for an item's path, and for a
        namespaced review's collection outside a namespace, where kube-apiserver serves no create)."""
        r = route.resource
        assert r is not None
        if route.name or (r.namespaced and route.namespace is None):
            raise not_found_resource()
        if request.method != "POST":
            raise method_not_allowed()
        if not negotiation.allows_without_table(request.accept):
            raise negotiation.not_acceptable(
                "only the following media types are accepted: application/json, application/yaml, "
                "application/vnd.kubernetes.protobuf"
            )
        body = await request.decoded()
        result = self.service.review(
            r,
            body,
            user,
            field_validation=request.query.get("fieldValidation", ""),
            namespace=route.namespace or "",
        )
        await self._send_result(send, result, r)

    async def _send_result(self, send: Send, result: Result, r: Resource) -> None:
        """The result's object as JSON: the stored bytes when it is the stored object itself (`stored_raw`), which
        are what encoding it would give (the store encoded them from it), else encoded now."""
        body = self.storage.stored_raw(r.store_key, result.obj)
        await _respond(send, result.code, orjson.dumps(result.obj) if body is None else body, warnings=result.warnings)

    # ------------------------------------------------------------------------------------------- list / watch

    async def _list(self, request: Request, r: Resource, namespace: str | None, send: Send) -> None:
        labels = parse_label_selector(request.query.get("labelSelector"))
        fields = parse_field_selector(request.query.get("fieldSelector")).converted(r.store_key)
        partial = request.metadata_only(r, is_list=True)
        limit = max(request.integer("limit") or 0, 0)  # a negative limit is no limit
        if request.query.get("resourceVersion") == "0" and not request.query.get("continue"):
            # served from the watch cache, which does not page: the limit is ignored (cacher.go `shouldDelegateList`
            # "Serve paginated requests about revision "0" from watch cache", and its GetList returns every match)
            limit = 0
        request.integer("timeoutSeconds")  # a list takes no time worth bounding, but the parameter must decode
        await self._caught_up(listoptions.fresh_from(request.query))
        pinned = listoptions.read_at(request.query, self.storage.revision)
        at, after = _continue_key(request.query.get("continue"))
        if after is None:
            at = pinned
        try:
            raws, revision, last, remaining = self.storage.list_page(
                r.store_key,
                namespace,
                label_selector=labels,
                field_selector=fields,
                limit=limit,
                continue_after=after,
                at_revision=at,
            )
        except ApiError as exc:
            if exc.code != 410:
                raise
            if after is None:
                raise listoptions.list_too_old() from None
            raise continue_expired(_continue_token(INCONSISTENT, after)) from None
        meta: Obj = {"resourceVersion": str(revision)}
        if last is not None:
            meta["continue"] = _continue_token(revision, last)
            if remaining is not None:
                meta["remainingItemCount"] = remaining
        if partial is not None:
            items = [orjson.loads(raw) for raw in raws]
            await _respond(send, 200, orjson.dumps(negotiation.partial_list(items, meta, partial)))
            return
        if request.wants_table:
            table = tables.to_table(
                [orjson.loads(raw) for raw in raws],
                kind=r.kind,
                api_version=r.api_version,
                now=self.clock(),
                resource_version=str(revision),
                include_object=request.query.get("includeObject", "Metadata"),
            )
            table["metadata"] = meta
            await _respond(send, 200, orjson.dumps(table))
            return
        head = f'{{"kind":"{r.list_kind}","apiVersion":"{r.api_version}","metadata":'
        # a built-in kind's items without their apiVersion and kind, as kube-apiserver writes them
        joined = b",".join(raws) if isinstance(r, CustomResource) else untyped_raws(raws, r.api_version, r.kind)
        await _respond(send, 200, head.encode() + orjson.dumps(meta) + b',"items":[' + joined + b"]}")

    async def _delete_collection(self, request: Request, r: Resource, namespace: str | None, send: Send) -> None:
        labels = parse_label_selector(request.query.get("labelSelector"))
        fields = parse_field_selector(request.query.get("fieldSelector")).converted(r.store_key)
        body = await request.decoded()
        if body is not None and not isinstance(body, dict):
            raise bad_request("DeleteOptions must be a JSON object")
        options = DeleteOptions.parse(body, request.query)
        # The Job registry's DeleteCollection warns as its Delete does, once, when no propagation is asked for
        # (pkg/registry/batch/job/storage/storage.go); the items' own deletes add nothing more.
        warnings = [ORPHAN_WARNING] if r.orphan_warning and options.propagation is None else []
        items, _ = self.storage.list(r.store_key, namespace, label_selector=labels, field_selector=fields)
        deleted: list[Obj] = []
        for obj in items:
            meta = obj.get("metadata") or {}
            try:
                result = await self.service.delete(
                    r, str(meta.get("namespace") or ""), str(meta.get("name")), options, collection=True
                )
            except ApiError as exc:
                if exc.code == 404:
                    continue
                raise
            deleted.append(result.obj if result.obj.get("kind") != "Status" else obj)
        body_out = {
            "kind": r.list_kind,
            "apiVersion": r.api_version,
            "metadata": {"resourceVersion": str(self.storage.revision)},
            "items": deleted if isinstance(r, CustomResource) else [untyped(obj) for obj in deleted],
        }
        await _respond(send, 200, orjson.dumps(body_out), warnings=warnings)

    async def _caught_up(self, wanted: int) -> bool:
        """Whether the store reaches revision `wanted` within `resource_version_wait` seconds: the watch cache's
        `waitUntilFreshAndBlock`, which a write made meanwhile (by another client) ends."""
        if self.storage.revision >= wanted:
            return True
        end = time.monotonic() + self.resource_version_wait
        while self.storage.revision < wanted:
            left = end - time.monotonic()
            if left <= 0:
                return False
            await asyncio.sleep(min(0.02, left))
        return True

    def _next_bookmark(self, now: float, deadline: float | None) -> float | None:
        """When a watch's next bookmark is due: `bookmark_interval` from now, or 2 s before the deadline if that
        is sooner; None when even that has passed (the cacher's `cacheWatcher.nextBookmarkTime`)."""
        due = now + self.bookmark_interval
        if deadline is not None:
            due = min(due, deadline - PRE_DEADLINE_BOOKMARK)
        return None if due <= now else due

    async def _watch(self, request: Request, r: Resource, namespace: str | None, send: Send) -> None:
        labels = parse_label_selector(request.query.get("labelSelector"))
        fields = parse_field_selector(request.query.get("fieldSelector")).converted(r.store_key)
        start = listoptions.watch_from(request.query, self.storage.revision)
        since, initial_end = start.since, start.initial_end
        timeout: float | None = request.integer("timeoutSeconds")
        if not timeout and self.min_request_timeout > 0:  # no watch runs for ever (`limits.MIN_REQUEST_TIMEOUT`)
            timeout = self.min_request_timeout * (1.0 + random.random())
        deadline = time.monotonic() + timeout if timeout else None
        table = request.wants_table
        partial = request.metadata_only(r, is_list=False)
        include = request.query.get("includeObject", "Metadata")
        bookmarks = request.flag("allowWatchBookmarks")
        watch = None
        refused: ApiError | None = None
        if start.fresh_from and not await self._caught_up(start.fresh_from):
            # A `sendInitialEvents` watch waits for the state it asked for; past the wait it is refused with an
            # ERROR event in a 200 stream, not an HTTP error (cacher `Watch`, `newErrWatcher`); client-go's
            # reflector then starts again from the current state (`watchList`, `isTooLargeResourceVersionError`).
            refused = listoptions.too_large_resource_version(start.fresh_from, self.storage.revision)
        else:
            # The watch starts before the response does: a client that has the response's headers sees every
            # change made after it, as kubectl's single-object watch relies on (it skips the watch's first event).
            try:
                watch = self.storage.watch(
                    r.store_key,
                    namespace,
                    since=since,
                    label_selector=labels,
                    field_selector=fields,
                    max_queue=None,  # the store's bound: this server's own loop falling behind drops no watch
                )
            except ApiError as exc:
                refused = exc
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", JSON), (b"cache-control", b"no-cache, private")],
                }
            )
        except BaseException:
            if watch is not None:
                watch.close()
            raise
        if watch is None:
            status = refused.status() if refused is not None else {}
            line = orjson.dumps({"type": "ERROR", "object": status}) + b"\n"
            await send({"type": "http.response.body", "body": line, "more_body": False})
            return
        self._watches.add(watch)
        if self._streams_closed:  # after `close_streams` saw the set: the server is shutting down
            watch.close()
        disconnected = asyncio.ensure_future(_wait_disconnect(request.receive))
        first_table = True
        last_rv = since if since else self.storage.revision
        # A watch from a revision the store has not reached gets no bookmark until the store has passed it (the
        # cacher's `process` sends only what is newer than the revision asked for); any other gets one even
        # when nothing was written since it started (a cluster's revision never stands still that long).
        bookmark_floor = since + 1 if since > self.storage.revision else since

        # A bookmark carries the kind's zero object (the cacher's `newFunc()`) with the revision: a Pod's is
        # `{"metadata": {"resourceVersion": "N", "creationTimestamp": null}, "spec": {"containers": null},
        # "status": {}}`, as Go encodes it; a custom resource's has only its metadata (an empty Unstructured).
        zero = gozero.zero_object(r.group, r.kind) or {}
        zero_meta = zero.get("metadata") or {}

        def bookmark(revision: int, *, initial_end: bool = False) -> bytes:
            meta: Obj = {"resourceVersion": str(revision), **zero_meta}
            if initial_end:
                meta["annotations"] = {INITIAL_EVENTS_END: "true"}
            marked: Obj = {"kind": r.kind, "apiVersion": r.api_version, "metadata": meta}
            marked.update((key, value) for key, value in zero.items() if key != "metadata")
            if partial is not None:
                marked = negotiation.partial(marked, partial)
            return orjson.dumps({"type": "BOOKMARK", "object": marked}) + b"\n"

        # Bookmarks come every `bookmark_interval` from the start, events or not, and 2 s before the deadline (the
        # cacher's `nextBookmarkTime`; none when the watch is too short for that one). Each carries the store's
        # revision, not the last event's: a watch with selectors resumes from as late a revision as a
        # cluster's does (the cacher's bookmark carries the watch cache's, which etcd's progress notifications
        # keep moving whatever is written).
        next_bookmark = self._next_bookmark(time.monotonic(), deadline) if bookmarks else None
        # With sendInitialEvents, a bookmark follows the ADDED events of the state the watch started from.
        initial_left = watch.initial_count if initial_end and bookmarks else None
        if initial_left == 0:
            initial_left = None
            last_rv = watch.initial_revision
            await send({"type": "http.response.body", "body": bookmark(last_rv, initial_end=True), "more_body": True})
        behind: list[Event] = []  # what came while a chunk was being sent
        nxt: asyncio.Future[Event] | None = None
        try:
            while True:
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    break
                events = behind + watch.drain()
                behind = []
                bookmark_due = next_bookmark is not None and now >= next_bookmark and initial_left is None
                if not events and not bookmark_due:
                    if watch.closed:
                        break
                    wait = None if deadline is None else deadline - now
                    if next_bookmark is not None and (wait is None or next_bookmark - now < wait):
                        wait = next_bookmark - now
                    nxt = asyncio.ensure_future(watch.__anext__())
                    done, _ = await asyncio.wait({nxt, disconnected}, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
                    if disconnected in done:
                        nxt.cancel()
                        return
                    if nxt not in done:  # a bookmark is due, or the deadline has come
                        nxt.cancel()
                        continue
                    if isinstance(nxt.exception(), StopAsyncIteration):  # read, not raised: as in `_log`
                        break
                    events = [nxt.result()]
                    events.extend(watch.drain())
                mark: int | None = None
                if bookmark_due:
                    next_bookmark = self._next_bookmark(now, deadline)
                    mark = self.storage.delivered_revision()
                    events.extend(watch.drain())  # every event up to `mark` is queued by now
                    if mark < bookmark_floor:
                        mark = None
                chunks: list[bytes] = []
                for event in events:
                    if event.revision <= since:  # from a revision newer than the store's: only what follows it
                        continue
                    last_rv = max(last_rv, event.revision)
                    if table:
                        obj = tables.to_table(
                            [event.object],
                            kind=r.kind,
                            api_version=r.api_version,
                            now=self.clock(),
                            include_object=include,
                            with_headers=first_table,
                        )
                        first_table = False
                        chunks.append(orjson.dumps({"type": event.type.value, "object": obj}) + b"\n")
                    elif partial is not None:
                        obj = negotiation.partial(event.object, partial)
                        chunks.append(orjson.dumps({"type": event.type.value, "object": obj}) + b"\n")
                    else:
                        chunks.append(b'{"type":"' + event.type.value.encode() + b'","object":' + event.raw + b"}\n")
                    if initial_left is not None:
                        initial_left -= 1
                        if initial_left == 0:
                            initial_left = None
                            last_rv = watch.initial_revision
                            chunks.append(bookmark(last_rv, initial_end=True))
                if mark is not None:
                    last_rv = max(last_rv, mark)
                    chunks.append(bookmark(last_rv))
                if not chunks:
                    continue
                message = {"type": "http.response.body", "body": b"".join(chunks), "more_body": True}
                if not await _send_unless_dropped(send, message, watch, disconnected, behind, self.watch_buffer):
                    if len(behind) > self.watch_buffer or watch.overflowed:
                        log.warning(
                            "dropped a watch of %s whose client fell %d events behind", r.plural, self.watch_buffer
                        )
                    return
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            if nxt is not None:  # this handler cancelled mid-wait (server shutdown): no orphaned task to log
                nxt.cancel()
            self._watches.discard(watch)
            watch.close()
            disconnected.cancel()

    # ------------------------------------------------------------------------------------------- exec

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        """pods/exec over WebSocket (`remotecommand`): the API server's checks answered before the upgrade, as
        HTTP Status responses; then the command's streams."""
        request = Request({**scope, "method": "GET"}, receive)
        route = routing.parse(request.path)
        offered = list(scope.get("subprotocols") or [])
        protocol = remotecommand.negotiate(offered)
        channels: remotecommand.Channels | None = None  # once the upgrade is accepted
        try:
            self._authorize(request, route)
            if route.subresource == "proxy" and route.resource is not None:  # kjobs.server.proxy
                raise bad_request(f"{route.resource.plural}/proxy does not serve upgrades (websocket) on kjobs")
            if route.kind != "resource" or route.resource is None or route.resource.plural != "pods" or not route.name:
                raise not_found_resource()
            if route.subresource == "portforward":
                await self._portforward_websocket(scope, request, route, send, receive)
                return
            if route.subresource not in ("exec", "attach"):
                raise bad_request(
                    f"{route.subresource or 'pods'} is not served over WebSocket; pods/exec, pods/attach and "
                    "pods/portforward are"
                )
            attach = route.subresource == "attach"
            pod = self.service.get_pod(route.namespace or "", route.name)
            options = remotecommand.exec_options(request.raw_query, pod)
            if protocol is None:
                raise remotecommand.unsupported_protocols(offered)
            if protocol == remotecommand.V5:
                # As the API server's stream translator: the upgrade first, then the kubelet is asked to start the
                # command, whose failure comes as a status. The client-go of kubectl 1.32 reads the connection
                # before it has made its streams and drops a message that comes first (kubernetes#131189, fixed by
                # #131203): a command started before the upgrade could have its output sent with the 101 and lost.
                channels = await _accept(send, protocol)
                await channels.opened(options)
                if options.tty:
                    size, receive = await remotecommand.initial_size(channels, receive)
                    options = dataclasses.replace(options, size=size)
            try:
                start = self.exec_source.start_attach if attach else self.exec_source.start_exec
                process = await start(pod, options)
            except remotecommand.UpgradeFailed as exc:
                if protocol != remotecommand.V5:  # the kubelet's failed upgrade, passed on by the API server
                    raise ApiError(500, "InternalError", str(exc)) from None
                channels = channels or await _accept_opened(send, protocol, options)
                await channels.status(remotecommand.internal_error(f"unable to upgrade connection: {exc}"))
                await channels.close()
                return
            except remotecommand.ExecFailed as exc:
                channels = channels or await _accept_opened(send, protocol, options)
                await channels.status(remotecommand.internal_error(f"error executing command in container: {exc}"))
                await channels.close()
                return
        except ApiError as exc:
            await _deny(scope, send, exc)
            return
        except Exception as exc:
            log.exception("internal error serving exec %s", request.path)
            with contextlib.suppress(Exception):  # the upgrade may have been accepted already
                await _deny(scope, send, ApiError(500, "InternalError", f"Internal error occurred: {exc}"))
            return
        opened = channels is not None
        channels = channels or await _accept(send, protocol)
        await remotecommand.stream(channels, process, options, receive, opened=opened)

    # ------------------------------------------------------------------------------------------- portforward

    async def _portforward_spdy(self, request: Request, namespace: str, name: str, send: Send) -> None:
        """pods/portforward over an `Upgrade: SPDY/3.1` connection (`kjobs.server.portforward`): the API server's
        and the kubelet's checks answered as HTTP responses, then the SPDY session on the connection."""
        pod = self.service.get_pod(namespace, name)
        portforward.check_pod(pod)
        if request.hijack is None or request.upgrade.lower() != "spdy/3.1":
            if request.upgrade:
                raise bad_request(f"pods/portforward is served over SPDY/3.1 and WebSocket, not {request.upgrade}")
            raise bad_request("Upgrade request required")
        target = self.portforward_source.port_target(pod)
        agreed = portforward.spdy_handshake(request.stream_protocols)
        headers = [(b"Connection", b"Upgrade"), (b"Upgrade", b"SPDY/3.1")]
        headers.append((b"X-Stream-Protocol-Version", agreed.encode()))
        reader, writer = request.hijack(headers)
        await send({"type": UPGRADED})

        async def write(data: bytes) -> None:
            writer.write(data)
            await writer.drain()

        async def read() -> bytes:
            data: bytes = await reader.read(portforward.CHUNK)
            return data

        with self.portforwards.track() as stop:
            try:
                await portforward.SpdySession(target, write).run(read, stop)
            finally:
                writer.close()

    async def _portforward_websocket(
        self, scope: Scope, request: Request, route: routing.Route, send: Send, receive: Receive
    ) -> None:
        """pods/portforward over WebSocket: the v4 channels, or SPDY tunneled in binary messages."""
        offered = list(scope.get("subprotocols") or [])
        pod = self.service.get_pod(route.namespace or "", route.name or "")
        portforward.check_pod(pod)
        protocol = portforward.negotiate_websocket(offered)
        # the kubelet's order: the ports, the pod, then the WebSocket handshake (server.go `getPortForward`)
        ports = [] if protocol == portforward.TUNNEL else portforward.websocket_ports(request.raw_query)
        target = self.portforward_source.port_target(pod)
        if protocol is None:
            raise portforward.unsupported_protocols(offered)
        channels = await _accept(send, protocol)
        with self.portforwards.track() as stop:
            if protocol != portforward.TUNNEL:
                await portforward.serve_channels(channels, ports, target, receive, stop)
                return

            async def write(data: bytes) -> None:
                await send({"type": "websocket.send", "bytes": data})

            async def read() -> bytes:
                while True:
                    message = await receive()
                    if message["type"] == "websocket.disconnect":
                        return b""
                    data: bytes | None = message.get("bytes")
                    if data:
                        return data

            try:
                await portforward.SpdySession(target, write).run(read, stop)
            finally:
                await channels.close()

    # ------------------------------------------------------------------------------------------- proxy

    async def _proxy(self, request: Request, r: Resource, namespace: str, id_: str, send: Send) -> None:
        """pods/proxy, services/proxy, nodes/proxy (`kjobs.server.proxy`)."""
        if request.method not in proxy.METHODS:
            raise method_not_allowed()
        if request.upgrade:
            raise bad_request(f"{r.plural}/proxy does not serve upgrades ({request.upgrade}) on kjobs")
        location = proxy.location_path(request.path)
        if not location and request.method in ("GET", "HEAD"):
            moved = proxy.redirect_location(request.path, request.raw_query)
            await send({"type": "http.response.start", "status": 301, "headers": [(b"location", moved.encode())]})
            await send({"type": "http.response.body", "body": b""})
            return
        source = self.exec_source
        if r.plural == "nodes":
            await self._node_proxy(request, id_, location or "/", send)
            return
        if r.plural == "pods":
            target = proxy.pod_target(lambda name: self.service.get_pod(namespace, name), id_)
        else:
            target = proxy.service_target(
                id_,
                get_service=lambda name: self.service.get(r, namespace, name),
                get_endpoints=lambda name: self.storage.get("endpoints", namespace, name),
                get_pod=lambda name: self.storage.get("pods", namespace, name),
                namespace=namespace,
            )
        finder = getattr(source, "proxy_host", None)
        host = await finder(target.pod, target.port) if finder is not None else None
        if host is None:  # none of the pod's own processes listens there: the dial a cluster would see refused
            raise proxy.refused(target.ip, target.port)
        body = await request.body()
        prefix = request.path[: len(request.path) - len(location)] if location else request.path
        headers = proxy.request_headers(
            list(request.headers), forwarded_uri=proxy.forwarded_uri(prefix, location), client=request.client
        )
        where = f"[{host}]:{target.port}" if ":" in host else f"{host}:{target.port}"
        await proxy.forward(
            send,
            method=request.method,
            url=proxy.backend_url(target.scheme, host, target.port, location, request.raw_query),
            headers=headers,
            body=body,
            prefix=prefix.rstrip("/"),
            request_host=request.host,
            backend_host=where,
        )

    async def _node_proxy(self, request: Request, id_: str, path: str, send: Send) -> None:
        """nodes/proxy: the node agent's kubelet endpoints (`kjobs.node.kubeletapi`), for agents of this process."""
        parsed = proxy.split_scheme_name_port(id_)
        if parsed is None:
            raise bad_request(f'invalid node request "{id_}"')
        nodes = registry.lookup("", "v1", "nodes")
        assert nodes is not None
        node = self.service.get(nodes, "", parsed[1])
        proxy.node_target(node, id_)
        answer_of = getattr(self.exec_source, "kubelet_answer", None)
        answered = await answer_of(parsed[1], request.method, path) if answer_of is not None else None
        if answered is None and path.startswith("/containerLogs/") and answer_of is not None:
            answered = await self._kubelet_log(path, request)
        if answered is None:
            raise proxy.unreachable(
                f"no node agent answers for node {parsed[1]}: kjobs serves nodes/proxy for the nodes of kjobs up and "
                "kjobs run, and for agents joined with kjobs node join that serve their kubelet endpoint"
            )
        status, content_type, body = answered
        headers = [(b"content-type", content_type)]
        if content_type.startswith(b"text/plain") and status == 200:
            headers.append((b"x-content-type-options", b"nosniff"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        if request.method != "HEAD":
            await send({"type": "http.response.body", "body": body, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    async def _kubelet_log(self, path: str, request: Request) -> tuple[int, bytes, bytes]:
        """The kubelet's `/containerLogs/{ns}/{pod}/{container}`: the container's log, whole (not followed)."""
        parts = path.split("/")[2:]
        if len(parts) != 3 or not all(parts):
            return 404, b"text/plain; charset=utf-8", b"404 page not found\n"
        namespace, name, container = parts
        query = {k: v for k, v in request.query.items() if k != "follow"}
        options = dataclasses.replace(log_options(query, name), container=container)
        try:
            _, chunks = self.service.open_log(namespace, name, options)
            data = bytearray()
            async for chunk in chunks:
                data += chunk
                if len(data) > limits.MAX_BODY:
                    break
        except ApiError as exc:
            return exc.code, JSON, _error(exc)
        return 200, b"text/plain", bytes(data)

    # ------------------------------------------------------------------------------------------- logs

    async def _log(self, request: Request, namespace: str, name: str, send: Send) -> None:
        options = log_options(request.query, name)
        pod, chunks = self.service.open_log(namespace, name, options)
        if not (pod.get("spec") or {}).get("nodeName"):
            # A pod not scheduled has no log location (pkg/registry/core/pod/strategy.go `LogLocation`): the
            # API server streams nothing and answers 204 No Content (responsewriters `StreamObject`).
            await send(
                {"type": "http.response.start", "status": 204, "headers": [(b"cache-control", b"no-cache, private")]}
            )
            await send({"type": "http.response.body", "body": b""})
            return
        iterator = chunks.__aiter__()
        # The client may go before the log says anything (`kubectl logs -f` of a silent container, stopped): the
        # first read races the disconnect too, or the read, its open log file and this request stayed for ever
        # (one descriptor per such follow; docs/soak41.md).
        disconnected = asyncio.ensure_future(_wait_disconnect(request.receive))
        opening = asyncio.ensure_future(iterator.__anext__())
        try:
            done, _ = await asyncio.wait({opening, disconnected}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            opening.cancel()
            disconnected.cancel()
            raise
        if opening not in done:
            opening.cancel()
            await asyncio.wait({opening})  # the read ends (and the log closes) before the request does
            closer = getattr(iterator, "aclose", None)
            if closer is not None:
                await closer()
            return
        if isinstance(opening.exception(), StopAsyncIteration):  # read, not raised: see below
            first = b""
        else:
            try:
                first = opening.result()
            except BaseException:
                disconnected.cancel()
                raise
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/plain"), (b"cache-control", b"no-cache, private")],
            }
        )
        try:
            if first:
                await send({"type": "http.response.body", "body": first, "more_body": True})
            while True:
                nxt = asyncio.ensure_future(iterator.__anext__())
                try:
                    done, _ = await asyncio.wait({nxt, disconnected}, return_when=asyncio.FIRST_COMPLETED)
                except asyncio.CancelledError:
                    nxt.cancel()  # cancelled mid-wait (server shutdown): leave no orphaned task to log
                    raise
                if disconnected in done:
                    nxt.cancel()
                    return
                # Read, not raised: `result()` would raise the end through this frame, and the task keeping that
                # exception (its traceback holding this frame, which holds the task) made every log request a
                # reference cycle left to the cyclic GC, with its connection (docs/soak41.md).
                if isinstance(nxt.exception(), StopAsyncIteration):
                    break
                await send({"type": "http.response.body", "body": nxt.result(), "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            disconnected.cancel()
            closer = getattr(iterator, "aclose", None)
            if closer is not None:
                await closer()


_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


def _attributes(request: Request, route: routing.Route) -> authz.Attributes:
    """What a request asks to do, for authorization (kube-apiserver's `RequestInfo`)."""
    r = route.resource
    if route.kind == "resourcemetrics":  # metrics.k8s.io's pods and nodes: read-only, RBAC'd as any resource
        verb = "get" if route.name else "list"
        return authz.Attributes(
            verb, route.subresource, group=route.group, namespace=route.namespace or "", name=route.name
        )
    if route.kind != "resource" or r is None:
        return authz.Attributes(request.method.lower(), path=request.path, is_resource=False)
    verb = _verb(request.method, bool(route.name), request.flag("watch"))
    if route.subresource == "proxy":  # RequestInfo: HEAD is a get, a method outside the verbs none
        verb = {"HEAD": "get", "OPTIONS": ""}.get(request.method, verb)
    if route.subresource in ("exec", "attach", "portforward"):
        verb = "create"  # a connect verb: a WebSocket's GET needs create (AuthorizePodWebsocketUpgradeCreatePermission)
    return authz.Attributes(
        verb,
        r.plural,
        group=r.group,
        subresource=route.subresource,
        namespace=route.namespace or "",
        name=route.name,
    )


def _accepts_gzip(accept_encoding: str) -> bool:
    """Whether `Accept-Encoding` names gzip with a q above 0."""
    for entry in accept_encoding.split(","):
        coding, _, params = entry.strip().partition(";")
        if coding.strip().lower() in ("gzip", "*"):
            q = params.strip().removeprefix("q=").strip() if params.strip().startswith("q=") else "1"
            try:
                return float(q) > 0
            except ValueError:
                return False
    return False


def _verb(method: str, named: bool, watch: bool) -> str:
    """The API verb of a request on a resource (kube-apiserver's RequestInfo): get/list/watch, create, update,
    patch, delete/deletecollection."""
    if method == "GET":
        return "get" if named else ("watch" if watch else "list")
    if method == "DELETE":
        return "delete" if named else "deletecollection"
    return _VERBS.get(method, method.lower())


UPGRADED = "kjobs.upgraded"
"""The message a handler sends once it took the connection over (recorded as a 101 in the API metrics)."""

INCONSISTENT = -1
"""A continue token's revision that means "the current one": what a 410 Expired hands back to finish a list."""


def continue_expired(token: str) -> ApiError:
    """410 Expired for a continue token whose revision the store no longer holds, carrying a token that resumes
    at the same key at the current revision (etcd3 store.go `GetList`, errors.go `inconsistentContinue`)."""
    return ApiError(
        410,
        "Expired",
        "The provided continue parameter is too old to display a consistent list result. You can start a new "
        "list without the continue parameter, or use the continue token in this response to retrieve the "
        "remainder of the results. Continuing with the provided token results in an inconsistent list - objects "
        "that were created, modified, or deleted between the time the first chunk was returned and now may show "
        "up in the list.",
        metadata={"continue": token},
    )


def _continue_token(revision: int, last_key: str) -> str:
    """An opaque continue token: the revision every page is read at and the key the next page starts after
    (the apiserver's is base64 JSON too)."""
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": revision, "start": last_key})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _continue_key(token: str | None) -> tuple[int | None, str | None]:
    """The revision to read at (None: the current one) and the key a continue token resumes after; 400 BadRequest
    `invalid continue token: ...` for one this server did not issue, with storage `DecodeContinue`'s reasons
    (staging/src/k8s.io/apiserver/pkg/storage/continue.go): an unknown version, a revision of 0, an empty start
    key, or one that `path.Clean` would change (`../x`: it could range beyond its resource). A negative revision
    reads the current state, as etcd3's `GetList` reads a `continueRV` below 0."""
    if not token:
        return None, None
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        decoded = orjson.loads(raw)
        key, revision = decoded["start"], decoded.get("rv", INCONSISTENT)
        if not isinstance(key, str) or not isinstance(revision, int) or isinstance(revision, bool):
            raise TypeError("start")
    except (ValueError, TypeError, KeyError, AttributeError, orjson.JSONDecodeError):
        raise _bad_continue("continue key is not valid: the continue token could not be decoded") from None
    version = decoded.get("v", "meta.k8s.io/v1")
    if version != "meta.k8s.io/v1":
        raise _bad_continue(f"continue key is not valid: server does not recognize this encoded version {version}")
    if revision == 0:
        raise _bad_continue(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        )
    if not key:
        raise _bad_continue("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")
    rooted = key if key.startswith("/") else "/" + key
    if posixpath.normpath(rooted) != rooted or rooted.startswith("//"):
        raise _bad_continue(f"continue key is not valid: {key}")
    return (None if revision < 0 else revision), key


def _bad_continue(reason: str) -> ApiError:
    """etcd3 `GetList`'s answer to a continue token `DecodeContinue` refuses."""
    return bad_request(f"invalid continue token: {reason}")


def _metric_labels(request: Request, route: routing.Route) -> tuple[str, ...]:
    """The `apiserver_request_*` labels of a resource request (verb, dry_run, group, ..., scope, component)."""
    r = route.resource
    assert r is not None
    method, named = request.method, bool(route.name)
    verb = clean_verb(
        method,
        has_name=named,
        watch=method == "GET" and not named and request.flag("watch"),
        apply=method == "PATCH" and request.content_type.startswith("application/apply-patch"),
    )
    scope = "resource" if named else ("namespace" if route.namespace is not None else "cluster")
    dry_run = "All" if request.query and request.query.get("dryRun") else ""
    return (verb, dry_run, r.group, r.version, r.plural, route.subresource, scope, "apiserver")


async def _send_unless_dropped(
    send: Send,
    message: dict[str, Any],
    watch: Any,
    disconnected: asyncio.Future[None],
    behind: list[Event],
    limit: int,
) -> bool:
    """Send a watch chunk, gathering into `behind` the events that come meanwhile; False, with the send abandoned,
    once more than `limit` (`watch_buffer`) came while the client did not read, as the cacher's
    `cacheWatcher.add` terminates a watcher it cannot hand events to, or when the client leaves or the watch was
    dropped by the store. The response is then left unfinished and the connection closed, so the client sees the
    stream break and lists again, and nothing more is kept for it.

    Only a client that does not read counts: the events wait in the store's queue, not here, while this loop is
    busy elsewhere (the controllers share it), as Kubernetes' cacher dispatches in a goroutine of its own."""
    sending = asyncio.ensure_future(send(message))
    while not sending.done():
        nxt = asyncio.ensure_future(watch.__anext__())
        try:
            done, _ = await asyncio.wait({sending, nxt, disconnected}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            nxt.cancel()  # cancelled mid-wait (server shutdown): leave no orphaned task to log
            sending.cancel()
            raise
        if nxt not in done:
            nxt.cancel()
        else:
            if isinstance(nxt.exception(), StopAsyncIteration):  # read, not raised: as in `_log`
                # closed: by the server (shutdown), finish the chunk; dropped, abandon it
                if watch.overflowed:
                    break
                await sending
                return True
            behind.append(nxt.result())
            behind.extend(watch.drain())
            if len(behind) > limit:
                break
        if disconnected in done:
            break
    if sending.done():
        sending.result()
        return True
    sending.cancel()
    return False


async def _accept(send: Send, protocol: str) -> remotecommand.Channels:
    message: dict[str, Any] = {"type": "websocket.accept"}
    if protocol:
        message["subprotocol"] = protocol
    await send(message)
    return remotecommand.Channels(protocol, send)


async def _accept_opened(send: Send, protocol: str, options: remotecommand.ExecOptions) -> remotecommand.Channels:
    """The upgrade accepted and the client told the streams are up."""
    channels = await _accept(send, protocol)
    await channels.opened(options)
    return channels


async def _deny(scope: Scope, send: Send, exc: ApiError) -> None:
    """Refuse a WebSocket upgrade with the error's HTTP Status response (a 403 close where the server cannot)."""
    if "websocket.http.response" not in (scope.get("extensions") or {}):
        await send({"type": "websocket.close", "code": 1008})
        return
    body = _error(exc)
    headers = [*_headers(), (b"content-length", str(len(body)).encode())]
    await send({"type": "websocket.http.response.start", "status": exc.code, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})


async def _wait_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


def create_app(
    store: Store,
    *,
    clock: Callable[[], float] = time.time,
    logs: LogSource | None = None,
    exec_source: ExecSource | None = None,
    portforward_source: PortForwardSource | None = None,
    usage: UsageSource | None = None,
    authenticator: Authenticator | None = None,
    bookmark_interval: float = BOOKMARK_INTERVAL,
    metrics: Sequence[Any] | None = None,
    admission: AdmissionSettings | None = None,
    watch_buffer: int = limits.WATCH_BUFFER,
    features: FeatureGates = DEFAULT,
    min_request_timeout: float = limits.MIN_REQUEST_TIMEOUT,
    resource_version_wait: float = RESOURCE_VERSION_WAIT,
    upkeep_intervals: tuple[float, float] = UPKEEP_INTERVALS,
    event_ttl: float = eventttl.EVENT_TTL,
) -> App:
    """The API server application over `store` (call `startup()` or run it with lifespan to create namespaces).

    `usage` gives the figures `metrics.k8s.io` serves (`kjobs.server.resourcemetrics`; default: none). `/metrics`
    serves the given Prometheus registries (default: the process-wide one); `admission` carries
    kube-apiserver's admission flags (default: Kubernetes' defaults); `authenticator` decides who may call it
    (None: everyone, for a server no one else can reach); `watch_buffer` is how many events a watch may fall
    behind a client that does not read before it is dropped (`limits.WATCH_BUFFER`); `features` the
    `--feature-gates`; a watch without `timeoutSeconds` ends after 1 to 2 times `min_request_timeout` seconds
    (`limits.MIN_REQUEST_TIMEOUT`; 0: never); a watch that allows bookmarks gets one every `bookmark_interval`
    seconds (`BOOKMARK_INTERVAL`); a read from a resourceVersion the store has not reached waits
    `resource_version_wait` seconds for it (`RESOURCE_VERSION_WAIT`); the `kubernetes` Service and the system
    namespaces are created again when missing every `upkeep_intervals` seconds (`kjobs.server.bootstrap`);
    Events are deleted `event_ttl` seconds after their last write (kube-apiserver's `--event-ttl`; 0: never;
    `kjobs.server.eventttl`).
    """
    return App(
        store,
        clock=clock,
        logs=logs,
        exec_source=exec_source,
        portforward_source=portforward_source,
        usage=usage,
        authenticator=authenticator,
        bookmark_interval=bookmark_interval,
        metrics=metrics,
        admission=admission,
        watch_buffer=watch_buffer,
        features=features,
        min_request_timeout=min_request_timeout,
        resource_version_wait=resource_version_wait,
        upkeep_intervals=upkeep_intervals,
        event_ttl=event_ttl,
    )
