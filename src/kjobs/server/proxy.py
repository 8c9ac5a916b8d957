"""The proxy subresources: `pods/{name}/proxy`, `services/{name}/proxy` and `nodes/{name}/proxy`, as kube-apiserver
serves them.

Sources (kubernetes/kubernetes v1.32): pkg/registry/core/pod/rest/subresources.go and pod/strategy.go
`ResourceLocation` (a pod's `[scheme:]name[:port]`, its first declared container port, `address not allowed`),
pkg/registry/core/service/proxy.go and service/storage/storage.go `ResourceLocation` (a numbered port turned into
the Service port's name, a random ready endpoint address backed by a pod whose IP it is, `no endpoints available
for service "x"`), pkg/registry/core/node/rest/proxy.go and node/strategy.go `ResourceLocation` (the kubelet's
port), apimachinery pkg/util/net `SplitSchemeNamePort` and `JoinPreservingTrailingSlash`, apiserver
pkg/endpoints/handlers/rest.go `getRequestOptions` (the sub-path after `proxy`, its trailing slash kept), and
apimachinery pkg/util/proxy/{upgradeaware.go,transport.go} (the 301 to `.../proxy/` for an empty path, the
`X-Forwarded-Uri` header, a backend's `Location` rewritten under the proxy path, CORS headers dropped, and a
backend that cannot be reached: 503 `error trying to reach service: ...`).

Design note: kjobs' pods are processes sharing this machine's network (pod IP 127.0.0.1, docs/pod-network.md).
kube-apiserver refuses a pod IP that is not global unicast; kjobs accepts its own loopback pod IP instead, but only
reaches a port one of the pod's own processes listens on (the check `pods/portforward` makes,
`kjobs.node.portforward`), so a proxy never reaches some other program of the machine: any other port is the
refused dial a cluster answers. A node's proxy is answered by its agent's kubelet endpoints in process
(`kjobs.node.kubeletapi`).

Bounds: the request body is read whole under `limits.MAX_BODY`; a backend must accept the connection within
`CONNECT_TIMEOUT`, and each read of its answer must come within `READ_TIMEOUT`, the whole answer within
`TOTAL_TIMEOUT`. Upgrades (WebSocket, SPDY) through a proxy are refused with a 400 saying so.
"""

from __future__ import annotations

import functools
import gzip
import ipaddress
import random
import re
import zlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import quote, urlsplit, urlunsplit

from kjobs.api.errors import ApiError, bad_request, not_found
from kjobs.api.types import Obj

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
"""`proxyMethods` of the three ProxyRESTs; any other method is 405."""
VERBS = ["create", "delete", "get", "patch", "update"]
"""What discovery lists for `pods/proxy`, `services/proxy` and `nodes/proxy` (the connect methods' verbs)."""
KINDS = {"pods": "PodProxyOptions", "services": "ServiceProxyOptions", "nodes": "NodeProxyOptions"}

CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 60.0
TOTAL_TIMEOUT = 600.0

HOP_BY_HOP = frozenset(
    (
        "connection",
        "proxy-connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    )
)
"""The headers Go's `httputil.ReverseProxy` drops both ways (`hopHeaders`)."""
CORS = frozenset(
    (
        "access-control-allow-credentials",
        "access-control-allow-headers",
        "access-control-allow-methods",
        "access-control-allow-origin",
    )
)
"""What `removeCORSHeaders` drops from a backend's answer."""


def split_scheme_name_port(id_: str) -> tuple[str, str, str] | None:
    """`name`, `name:port` or `scheme:name:port` (scheme `http`, `https` or empty) -> (scheme, name, port), or None
    when the id is none of these (utilnet `SplitSchemeNamePort`)."""
    parts = id_.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        return None
    if not name or scheme not in ("", "http", "https"):
        return None
    return scheme, name, port


def _go_clean(path: str) -> str:
    """Go's `path.Clean`."""
    if not path:
        return "."
    rooted = path.startswith("/")
    out: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if out and out[-1] != "..":
                out.pop()
            elif not rooted:
                out.append("..")
            continue
        out.append(part)
    cleaned = ("/" if rooted else "") + "/".join(out)
    return cleaned or "."


def join_preserving_trailing_slash(*elems: str) -> str:
    """apimachinery `JoinPreservingTrailingSlash`: Go's `path.Join`, with the last non-empty element's trailing `/`."""
    nonempty = [e for e in elems if e]
    result = _go_clean("/".join(nonempty)) if nonempty else ""
    if nonempty and nonempty[-1].endswith("/") and not result.endswith("/"):
        result += "/"
    return result


def sub_path(request_path: str) -> str:
    """The `path` option of a proxy request: what follows `{name}/proxy` in the (decoded) request path, with a
    leading `/`, and a trailing `/` when the request had one (`getRequestOptions`)."""
    parts = request_path.strip("/").split("/") if request_path.strip("/") else []
    index = 2 if parts[:1] == ["api"] else 3  # past `/api/v1` or `/apis/{group}/{version}`
    if parts[index : index + 1] == ["namespaces"] and len(parts) >= index + 5:
        index += 2  # `namespaces/{ns}/{plural}/{name}/proxy`
    p = "/".join(parts[index + 3 :])  # past `{plural}/{name}/proxy`
    if p and not p.startswith("/"):
        p = "/" + p
    if request_path.endswith("/") and not p.endswith("/"):
        p += "/"
    return p


def location_path(request_path: str) -> str:
    """The backend path: the sub-path joined onto the location's empty path, then `/` added when the request's
    path ends in one (`UpgradeAwareHandler.ServeHTTP`)."""
    loc = join_preserving_trailing_slash("", sub_path(request_path))
    if not loc.endswith("/") and request_path.endswith("/"):
        loc += "/"
    return loc


def redirect_location(request_path: str, raw_query: bytes) -> str:
    """Where an empty backend path of a GET or HEAD is sent: the request's path plus `/` (`proxyRedirectsforRootPath`,
    issue 4958)."""
    query = raw_query.decode("latin-1")
    return request_path + "/" + (f"?{query}" if query else "")


def unreachable(reason: str) -> ApiError:
    """transport.go's 503 for a backend that could not be reached."""
    return ApiError(503, "ServiceUnavailable", f"error trying to reach service: {reason}")


def refused(host: str, port: int | str) -> ApiError:
    """The 503 a refused dial gives (Go's `dial tcp HOST:PORT: connect: connection refused`)."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return unreachable(f"dial tcp {where}: connect: connection refused")


def service_unavailable(message: str) -> ApiError:
    """`errors.NewServiceUnavailable`."""
    return ApiError(503, "ServiceUnavailable", message)


@dataclass(frozen=True)
class PodTarget:
    """Where a pod proxy goes: the pod, its IP, the port (a number), and the scheme."""

    pod: Obj
    ip: str
    port: int
    scheme: str


def pod_ip(pod: Obj) -> str:
    """The pod's primary IP (`getPodIP`), empty when it has none."""
    ips = (pod.get("status") or {}).get("podIPs") or []
    return str((ips[0] or {}).get("ip") or "") if ips else ""


def _allowed(ip: str) -> bool:
    """kube-apiserver's `IsGlobalUnicast` check, with kjobs' own loopback pod IPs allowed (see the module note)."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return False
    if address.is_loopback:
        return True
    return not (address.is_multicast or address.is_link_local or address.is_unspecified) and not (
        isinstance(address, ipaddress.IPv4Address) and address == ipaddress.IPv4Address("255.255.255.255")
    )


def _port_number(text: str, ip: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise unreachable(f"dial tcp: address tcp/{text}: unknown port") from None
    if not 0 < number < 65536:
        where = f"[{ip}]:{text}" if ":" in ip else f"{ip}:{text}"
        raise unreachable(f"dial tcp: address {where}: invalid port")
    return number


def pod_target(get_pod: Callable[[str], Obj], id_: str) -> PodTarget:
    """pod/strategy.go `ResourceLocation`: 400 `invalid pod request` for a malformed id, the pod's 404, a port
    taken from the first container that declares one (else the scheme's default), and 400 `address not allowed`
    when the pod has no usable IP (not running yet)."""
    parsed = split_scheme_name_port(id_)
    if parsed is None:
        raise bad_request(f'invalid pod request "{id_}"')
    scheme, name, port = parsed
    pod = get_pod(name)
    if not port:
        for container in (pod.get("spec") or {}).get("containers") or []:
            ports = container.get("ports") or []
            if ports:
                port = str(ports[0].get("containerPort"))
                break
    ip = pod_ip(pod)
    if not _allowed(ip):
        raise bad_request("address not allowed")
    scheme = scheme or "http"
    return PodTarget(pod, ip, _port_number(port, ip) if port else (443 if scheme == "https" else 80), scheme)


def service_target(
    id_: str,
    *,
    get_service: Callable[[str], Obj],
    get_endpoints: Callable[[str], Obj | None],
    get_pod: Callable[[str], Obj | None],
    namespace: str,
    rng: random.Random | None = None,
) -> PodTarget:
    """service/storage.go `ResourceLocation`: a numbered port becomes its Service port's name (503 `no service port
    N found for service "x"`), then a random subset with that port name and a random address of it whose pod
    exists here and has that IP; 404 for Endpoints that do not exist, 503 `no endpoints available for service "x"`
    when no address qualifies."""
    parsed = split_scheme_name_port(id_)
    if parsed is None:
        raise bad_request(f'invalid service request "{id_}"')
    scheme, name, port = parsed
    chance = rng or random.Random()
    # a number as Go's strconv.Atoi reads one: ASCII digits, an optional sign (`str.isdigit` also takes "¹")
    if port.isascii() and (port.isdigit() or (port[:1] in "+-" and port[1:].isdigit())):
        service = get_service(name)
        for service_port in (service.get("spec") or {}).get("ports") or []:
            if int(service_port.get("port") or 0) == int(port):
                port = str(service_port.get("name") or "")
                break
        else:
            raise service_unavailable(f'no service port {int(port)} found for service "{name}"')
    endpoints = get_endpoints(name)
    if endpoints is None:
        raise not_found("endpoints", name)
    subsets: Sequence[Obj] = endpoints.get("subsets") or []
    if not subsets:
        raise service_unavailable(f'no endpoints available for service "{name}"')
    seed = chance.randrange(len(subsets))
    for i in range(len(subsets)):
        subset = subsets[(seed + i) % len(subsets)]
        addresses: Sequence[Obj] = subset.get("addresses") or []
        if not addresses:
            continue
        for subset_port in subset.get("ports") or []:
            if str(subset_port.get("name") or "") != port:
                continue
            start = chance.randrange(len(addresses))
            for j in range(len(addresses)):
                address = addresses[(start + j) % len(addresses)]
                pod = _address_pod(address, namespace, get_pod)
                if pod is None:
                    continue
                number = int(subset_port.get("port") or 0)
                return PodTarget(pod, str(address.get("ip") or ""), number, scheme or "http")
    raise service_unavailable(f'no endpoints available for service "{name}"')


def _address_pod(address: Obj, namespace: str, get_pod: Callable[[str], Obj | None]) -> Obj | None:
    """`isValidAddress`: the address's target pod, in the Service's namespace, holding the address's IP."""
    ref = address.get("targetRef") or {}
    if ref.get("kind") != "Pod" or ref.get("namespace") != namespace:
        return None
    pod = get_pod(str(ref.get("name") or ""))
    if pod is None:
        return None
    ips = [str((p or {}).get("ip") or "") for p in (pod.get("status") or {}).get("podIPs") or []]
    return pod if address.get("ip") in ips else None


def node_target(node: Obj, id_: str) -> int:
    """node/strategy.go `ResourceLocation`: the node's kubelet port (0 when it has none); a request for another
    port of the node is refused here (a cluster would proxy to that port of the node's address)."""
    parsed = split_scheme_name_port(id_)
    if parsed is None:
        raise bad_request(f'invalid node request "{id_}"')
    _, name, port = parsed
    status = node.get("status") or {}
    kubelet = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port") or 0
    if port and port != str(kubelet):
        raise unreachable(
            f"kjobs proxies nodes/proxy only to the node agent's kubelet endpoints (port {kubelet}), not to port "
            f"{port} of node {name}"
        )
    return int(kubelet)


def request_headers(
    headers: Sequence[tuple[bytes, bytes]], *, forwarded_uri: str, client: str | None
) -> list[tuple[str, str]]:
    """What goes to the backend: the client's headers without the hop-by-hop ones, without its credentials (the
    authentication and impersonation filters remove `Authorization` and `Impersonate-*`), with `X-Forwarded-Uri`
    (transport.go) and `X-Forwarded-For` (ReverseProxy)."""
    out: list[tuple[str, str]] = []
    forwarded_for = ""
    for raw_key, raw_value in headers:
        key = raw_key.decode("latin-1").lower()
        if key in HOP_BY_HOP or key in ("authorization", "content-length", "x-forwarded-uri"):
            continue
        if key.startswith("impersonate-"):
            continue
        if key == "x-forwarded-for":
            forwarded_for = raw_value.decode("latin-1")
            continue
        out.append((raw_key.decode("latin-1"), raw_value.decode("latin-1")))
    if client:
        out.append(("X-Forwarded-For", f"{forwarded_for}, {client}" if forwarded_for else client))
    out.append(("X-Forwarded-Uri", forwarded_uri))
    return out


def forwarded_uri(prefix: str, path: str) -> str:
    """transport.go: `path.Join(PathPrepend, path)`, `/` kept."""
    uri = _go_clean(prefix + "/" + path) if prefix or path else ""
    return uri + "/" if path.endswith("/") and not uri.endswith("/") else uri


def rewrite_location(target: str, *, prefix: str, backend_host: str, request_host: str) -> str:
    """transport.go `rewriteURL` of a backend's `Location`: an absolute path on the backend's (or the request's)
    host is put under the proxy path; other URLs pass unchanged."""
    try:
        parts = urlsplit(target)
    except ValueError:
        return target
    different = bool(parts.netloc) and parts.netloc not in (backend_host, request_host)
    if different or not parts.path.startswith("/"):
        return target
    if parts.path.startswith(prefix):
        return urlunsplit(("", "", parts.path, parts.query, parts.fragment))
    joined = _go_clean(prefix + "/" + parts.path)
    if parts.path.endswith("/") and not joined.endswith("/"):
        joined += "/"
    return urlunsplit(("", "", joined, parts.query, parts.fragment))


def backend_url(scheme: str, host: str, port: int, path: str, raw_query: bytes) -> str:
    """The URL the backend is asked for (Go's `url.URL.String()`: the path escaped, the query as sent)."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    query = raw_query.decode("latin-1")
    escaped = quote(path, safe="/:@!$&'()*+,;=-._~")
    return f"{scheme}://{where}{escaped}" + (f"?{query}" if query else "")


def response_headers(
    headers: Sequence[tuple[str, str]], *, prefix: str, backend_host: str, request_host: str
) -> list[tuple[bytes, bytes]]:
    """The backend's headers as the client gets them: hop-by-hop and CORS headers dropped, `Location` rewritten."""
    out: list[tuple[bytes, bytes]] = []
    for key, value in headers:
        low = key.lower()
        if low in HOP_BY_HOP or low in CORS or low in ("content-length", "date"):  # the server writes its own Date
            continue
        if low == "location":
            value = rewrite_location(value, prefix=prefix, backend_host=backend_host, request_host=request_host)
        out.append((key.encode("latin-1"), value.encode("latin-1", "replace")))
    return out


URL_ATTRIBUTES: dict[str, frozenset[str]] = {
    tag: frozenset(names.split())
    for tag, names in {
        "a": "href", "applet": "codebase", "area": "href", "audio": "src", "base": "href", "blockquote": "cite",
        "body": "background", "button": "formaction", "command": "icon", "del": "cite", "embed": "src",
        "form": "action", "frame": "longdesc src", "head": "profile", "html": "manifest", "iframe": "longdesc src",
        "img": "longdesc src usemap", "input": "src usemap formaction", "ins": "cite", "link": "href",
        "object": "classid codebase data usemap", "q": "cite", "script": "src", "source": "src",
        "video": "poster src",
    }.items()
}  # fmt: skip
"""transport.go `atomsToAttrs`: the attributes of which tags hold URLs."""
HTML_LIMIT = 16 * 1024 * 1024
"""Bytes of an HTML answer buffered to rewrite its links; a longer page passes unchanged."""

_ATTRIBUTE = re.compile(r"""(\s)([^\s=/>"']+)(\s*=\s*)("[^"]*"|'[^']*'|[^\s"'>]+)""")


class _Tags(HTMLParser):
    """Finds the start tags whose URL attributes are rewritten, as (offset, raw text)."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=False)
        self.found: list[tuple[int, str]] = []
        self._starts = [0]
        for line in text.split("\n"):  # the parser counts lines by "\n" alone
            self._starts.append(self._starts[-1] + len(line) + 1)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        raw = self.get_starttag_text()
        if tag in URL_ATTRIBUTES and raw:
            line, column = self.getpos()
            self.found.append((self._starts[line - 1] + column, raw))

    handle_startendtag = handle_starttag


def rewrite_html(data: bytes, rewrite: Callable[[str], str]) -> bytes:
    """transport.go `rewriteHTML`: each URL attribute of the tags `URL_ATTRIBUTES` names passed through `rewrite`,
    everything else as sent (kjobs keeps the tags' own spelling; Go writes them back normalised)."""
    text = data.decode("utf-8", "surrogateescape")
    tags = _Tags(text)
    try:
        tags.feed(text)
        tags.close()
    except Exception:  # a page the parser gives up on passes unchanged
        return data
    out: list[str] = []
    done = 0
    for offset, raw in tags.found:
        if text[offset : offset + len(raw)] != raw:
            continue
        name = raw[1:].split(None, 1)[0].rstrip("/>").lower()
        wanted = URL_ATTRIBUTES.get(name, frozenset())

        def one(match: re.Match[str], wanted: frozenset[str] = wanted) -> str:
            if match.group(2).lower() not in wanted:
                return match.group(0)
            value = match.group(4)
            quote_mark = value[0] if value[0] in "\"'" else ""
            inner = value[1:-1] if quote_mark else value
            return f"{match.group(1)}{match.group(2)}{match.group(3)}{quote_mark}{rewrite(inner)}{quote_mark}"

        out.append(text[done:offset])
        out.append(_ATTRIBUTE.sub(one, raw))
        done = offset + len(raw)
    out.append(text[done:])
    return "".join(out).encode("utf-8", "surrogateescape")


def _html_body(data: bytes, encoding: str, rewrite: Callable[[str], str]) -> bytes | None:
    """An HTML body with its links rewritten, compressed again as it came (`rewriteResponse`); None for an
    encoding other than none, gzip or deflate (then passed unchanged)."""
    if encoding == "":
        return rewrite_html(data, rewrite)
    try:
        if encoding == "gzip":
            return gzip.compress(rewrite_html(gzip.decompress(data), rewrite))
        if encoding == "deflate":
            return zlib.compress(rewrite_html(zlib.decompress(data), rewrite), 9)
    except (OSError, zlib.error, EOFError):
        return None
    return None


Send = Callable[[dict[str, object]], Awaitable[None]]


async def forward(
    send: Send,
    *,
    method: str,
    url: str,
    headers: list[tuple[str, str]],
    body: bytes,
    prefix: str,
    request_host: str,
    backend_host: str,
) -> None:
    """Ask the backend and stream its answer to the client (see the module note for the bounds); a backend that
    cannot be reached is the 503 `unreachable`, raised before anything is sent."""
    import aiohttp  # only servers that proxy pay for the import
    import yarl

    timeout = aiohttp.ClientTimeout(total=TOTAL_TIMEOUT, sock_connect=CONNECT_TIMEOUT, sock_read=READ_TIMEOUT)
    connector = aiohttp.TCPConnector(ssl=False, force_close=True)  # a pod's certificate is not checked, as upstream
    async with aiohttp.ClientSession(timeout=timeout, connector=connector, auto_decompress=False) as session:
        try:
            response = await session.request(
                method,
                yarl.URL(url, encoded=True),
                headers=headers,
                data=body if body else None,
                allow_redirects=False,
                skip_auto_headers=("Accept-Encoding", "User-Agent", "Content-Type"),
            )
        except aiohttp.ClientSSLError as exc:  # `https:` to a plain HTTP listener, as Go's TLS client words it
            text = str(exc.os_error)
            if "WRONG_VERSION_NUMBER" in text:
                text = "first record does not look like a TLS handshake"
            raise unreachable(f"tls: {text}") from None
        except aiohttp.ClientConnectorError as exc:
            raise unreachable(f"dial tcp {backend_host}: connect: {exc.os_error.strerror or exc}") from None
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise unreachable(str(exc) or type(exc).__name__) from None
        async with response:
            head = response_headers(
                list(response.headers.items()), prefix=prefix, backend_host=backend_host, request_host=request_host
            )
            media = response.headers.get("Content-Type", "").split(";", 1)[0].strip()
            if media == "text/html" and "Location" not in response.headers and method != "HEAD":
                try:
                    data = await response.content.read(HTML_LIMIT + 1)
                except (aiohttp.ClientError, TimeoutError) as exc:
                    raise unreachable(str(exc) or type(exc).__name__) from None
                if len(data) <= HTML_LIMIT:
                    encoding = response.headers.get("Content-Encoding", "")
                    links = functools.partial(
                        rewrite_location, prefix=prefix, backend_host=backend_host, request_host=request_host
                    )
                    rewritten = _html_body(data, encoding, links)
                    data = data if rewritten is None else rewritten
                await send({"type": "http.response.start", "status": response.status, "headers": head})
                await send({"type": "http.response.body", "body": data, "more_body": True})
            else:
                await send({"type": "http.response.start", "status": response.status, "headers": head})
            try:
                async for chunk in response.content.iter_any():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            except (aiohttp.ClientError, TimeoutError):
                pass  # the answer has begun: it ends where the backend stopped
            await send({"type": "http.response.body", "body": b""})
