"""The pure parts of the proxy subresources (`kjobs.server.proxy`): the id grammar, the backend path, the pod,
Service and node locations, and the headers each way. tests/e2e/test_proxy.py drives them through kubectl."""

from __future__ import annotations

import random

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.server import proxy, routing

# staging/src/k8s.io/apimachinery/pkg/util/net/port_split_test.go TestSplitSchemeNamePort: (in, scheme, name, port)
SPLIT_ROWS = [
    ("aoeu:asdf", ("", "aoeu", "asdf")),
    ("http:aoeu:asdf", ("http", "aoeu", "asdf")),
    ("https:aoeu:", ("https", "aoeu", "")),
    ("https:aoeu:asdf", ("https", "aoeu", "asdf")),
    ("aoeu:", ("", "aoeu", "")),
    ("aoeu", ("", "aoeu", "")),
    (":asdf", None),
    ("aoeu:asdf:htns", None),
    ("http::asdf", None),
    ("http::", None),
    ("", None),
]


@pytest.mark.parametrize(("id_", "expected"), SPLIT_ROWS, ids=[row[0] or "empty" for row in SPLIT_ROWS])
def test_split_scheme_name_port(id_: str, expected: tuple[str, str, str] | None) -> None:
    assert proxy.split_scheme_name_port(id_) == expected


@pytest.mark.parametrize(
    ("request_path", "location"),
    [
        ("/api/v1/namespaces/ns/pods/web/proxy", ""),
        ("/api/v1/namespaces/ns/pods/web/proxy/", "/"),
        ("/api/v1/namespaces/ns/pods/web:8080/proxy/index.html", "/index.html"),
        ("/api/v1/namespaces/ns/pods/web/proxy/a/b/", "/a/b/"),
        ("/api/v1/namespaces/ns/pods/web/proxy/a/../../../etc", "/etc"),
        ("/api/v1/namespaces/ns/pods/web/proxy/a//b", "/a/b"),
        ("/api/v1/nodes/n1/proxy/stats/summary", "/stats/summary"),
        ("/api/v1/namespaces/proxy/services/proxy/proxy/x", "/x"),
    ],
)
def test_location_path(request_path: str, location: str) -> None:
    """`getRequestOptions` then `JoinPreservingTrailingSlash`: cleaned, the trailing slash kept; `..` never
    climbs out of the backend's root."""
    assert proxy.location_path(request_path) == location


def test_routing_keeps_the_proxy_path_out_of_the_route() -> None:
    route = routing.parse("/api/v1/namespaces/ns/pods/web:8080/proxy/a/b/c")
    assert (route.kind, route.namespace, route.name, route.subresource) == ("resource", "ns", "web:8080", "proxy")
    assert routing.parse("/api/v1/nodes/n1/proxy/metrics/resource").subresource == "proxy"
    assert routing.parse("/api/v1/namespaces/ns/pods/web/log/extra").kind == "notfound"


def test_redirect_of_an_empty_path_keeps_the_query() -> None:
    path = "/api/v1/namespaces/ns/pods/web/proxy"
    assert proxy.redirect_location(path, b"a=b") == path + "/?a=b"
    assert proxy.redirect_location(path, b"") == path + "/"


def _pod(name: str = "web", *, ip: str | None = "127.0.0.1", ports: list[int] | None = None) -> Obj:
    containers: list[Obj] = [
        {"name": "sidecar"},
        {"name": "main", "ports": [{"containerPort": p} for p in ports or []]},
    ]
    status: Obj = {"podIPs": [{"ip": ip}]} if ip else {}
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": {"containers": containers}, "status": status}


def test_pod_target_takes_the_first_declared_port_or_the_schemes_default() -> None:
    pod = _pod(ports=[8080, 9090])
    assert proxy.pod_target(lambda _: pod, "web").port == 8080
    assert proxy.pod_target(lambda _: pod, "web:7000").port == 7000
    plain = _pod()
    assert proxy.pod_target(lambda _: plain, "web").port == 80
    target = proxy.pod_target(lambda _: plain, "https:web:")
    assert (target.scheme, target.port) == ("https", 443)


@pytest.mark.parametrize(
    ("pod", "id_", "code", "message"),
    [
        (_pod(ip=None), "web:80", 400, "address not allowed"),
        (_pod(ip="224.0.0.1"), "web:80", 400, "address not allowed"),
        (_pod(), "ftp:web:80", 400, 'invalid pod request "ftp:web:80"'),
        (_pod(), "web:http", 503, "error trying to reach service: dial tcp: address tcp/http: unknown port"),
        (_pod(), "web:70000", 503, "error trying to reach service: dial tcp: address 127.0.0.1:70000: invalid port"),
    ],
)
def test_pod_target_errors(pod: Obj, id_: str, code: int, message: str) -> None:
    with pytest.raises(ApiError) as caught:
        proxy.pod_target(lambda _: pod, id_)
    assert (caught.value.code, caught.value.message) == (code, message)


def _endpoints(*subsets: Obj) -> Obj:
    return {"metadata": {"name": "svc", "namespace": "ns"}, "subsets": list(subsets)}


def _address(pod: str, ip: str = "127.0.0.1", namespace: str = "ns") -> Obj:
    return {"ip": ip, "targetRef": {"kind": "Pod", "name": pod, "namespace": namespace}}


def _one(*addresses: Obj) -> Obj:
    """Endpoints of one subset with port `http`."""
    return _endpoints({"addresses": list(addresses), "ports": [{"name": "http", "port": 1}]})


SERVICE: Obj = {"spec": {"ports": [{"name": "http", "port": 80}, {"name": "", "port": 81}]}}


def _service_target(id_: str, endpoints: Obj | None, pods: dict[str, Obj]) -> proxy.PodTarget:
    return proxy.service_target(
        id_,
        get_service=lambda _: SERVICE,
        get_endpoints=lambda _: endpoints,
        get_pod=pods.get,
        namespace="ns",
        rng=random.Random(1),
    )


def test_service_target_by_port_number_name_and_unnamed_port() -> None:
    endpoints = _endpoints(
        {"addresses": [_address("a")], "ports": [{"name": "http", "port": 8080}, {"name": "", "port": 9090}]}
    )
    pods = {"a": _pod("a")}
    assert _service_target("svc:80", endpoints, pods).port == 8080
    assert _service_target("svc:http", endpoints, pods).port == 8080
    assert _service_target("svc", endpoints, pods).port == 9090  # no port: the unnamed one
    assert _service_target("svc:81", endpoints, pods).port == 9090
    assert _service_target("https:svc:http", endpoints, pods).scheme == "https"


@pytest.mark.parametrize(
    ("id_", "endpoints", "code", "message"),
    [
        ("svc:82", _endpoints(), 503, 'no service port 82 found for service "svc"'),
        ("svc:http", None, 404, 'endpoints "svc" not found'),
        ("svc:http", _endpoints(), 503, 'no endpoints available for service "svc"'),
        ("svc:http", _one(), 503, "no endpoints"),
        ("svc:http", _one(_address("gone")), 503, "no endpoints"),
        ("svc:http", _one(_address("a", "10.0.0.9")), 503, "no endpoints"),
        ("svc:http", _one(_address("a", namespace="other")), 503, "no endpoints"),
        ("svc:other", _one(_address("a")), 503, "no endpoints"),
        ("a:b:c:d", _endpoints(), 400, 'invalid service request "a:b:c:d"'),
    ],
    ids=["no-such-port", "no-endpoints-object", "no-subsets", "no-addresses", "pod-gone", "ip-not-the-pods",
         "other-namespace", "port-name-not-found", "malformed"],
)  # fmt: skip
def test_service_target_errors(id_: str, endpoints: Obj | None, code: int, message: str) -> None:
    """`isValidAddress` skips an address whose pod is gone, has another IP or lives elsewhere."""
    with pytest.raises(ApiError) as caught:
        _service_target(id_, endpoints, {"a": _pod("a")})
    assert caught.value.code == code
    assert caught.value.message.startswith(message)


def test_node_target_is_the_kubelet_port() -> None:
    node: Obj = {"status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}}}
    assert proxy.node_target(node, "n1") == 10250
    assert proxy.node_target(node, "https:n1:10250") == 10250
    with pytest.raises(ApiError) as caught:
        proxy.node_target(node, "n1:22")
    assert caught.value.code == 503 and "not to port 22 of node n1" in caught.value.message


def test_request_headers_drop_credentials_and_hop_by_hop_headers() -> None:
    headers = [
        (b"authorization", b"Bearer secret"),
        (b"impersonate-user", b"jane"),
        (b"connection", b"keep-alive"),
        (b"x-forwarded-for", b"10.0.0.1"),
        (b"accept", b"text/html"),
    ]
    out = proxy.request_headers(headers, forwarded_uri="/api/v1/x/proxy/y", client="127.0.0.1")
    assert out == [
        ("accept", "text/html"),
        ("X-Forwarded-For", "10.0.0.1, 127.0.0.1"),
        ("X-Forwarded-Uri", "/api/v1/x/proxy/y"),
    ]


@pytest.mark.parametrize(
    ("location", "rewritten"),
    [
        ("/login", "/api/v1/namespaces/ns/pods/web/proxy/login"),
        ("/dir/", "/api/v1/namespaces/ns/pods/web/proxy/dir/"),
        ("http://127.0.0.1:8080/a?b=c", "/api/v1/namespaces/ns/pods/web/proxy/a?b=c"),
        ("http://example.com/a", "http://example.com/a"),
        ("relative/path", "relative/path"),
        ("/api/v1/namespaces/ns/pods/web/proxy/x", "/api/v1/namespaces/ns/pods/web/proxy/x"),
    ],
)
def test_rewrite_location(location: str, rewritten: str) -> None:
    """transport.go `rewriteURL`: same-host absolute paths go under the proxy path; other hosts and relative
    paths are left alone."""
    prefix = "/api/v1/namespaces/ns/pods/web/proxy"
    result = proxy.rewrite_location(location, prefix=prefix, backend_host="127.0.0.1:8080", request_host="k:6443")
    assert result == rewritten


def test_response_headers_drop_cors_and_hop_by_hop() -> None:
    out = proxy.response_headers(
        [("Access-Control-Allow-Origin", "*"), ("Transfer-Encoding", "chunked"), ("X-App", "1")],
        prefix="/p",
        backend_host="h:1",
        request_host="k",
    )
    assert out == [(b"X-App", b"1")]


PAGE = """<!DOCTYPE html>
<html><head><link rel="stylesheet" href="/static/app.css"></head>
<body background=/bg.png>
<a href="/jobs/?page=2&amp;x=1">jobs</a> <a href='relative/'>rel</a> <a href="http://example.com/x">out</a>
<img alt="/not-a-url" src="/img/logo.png" /><A HREF="/upper">u</A>
<script>document.write('<a href="/in-script">');</script>
<!-- <a href="/in-comment"> -->
<p title="/p">text</p>
</body></html>
"""


def test_rewrite_html_puts_absolute_links_under_the_proxy_path() -> None:
    """transport.go `rewriteHTML`: only URL attributes of the tags `atomsToAttrs` names, not script or comments."""
    prefix = "/api/v1/namespaces/ns/services/web/proxy"
    rewritten = proxy.rewrite_html(
        PAGE.encode(),
        lambda url: proxy.rewrite_location(url, prefix=prefix, backend_host="127.0.0.1:80", request_host="k"),
    ).decode()
    assert rewritten == (
        PAGE.replace('href="/static/app.css"', f'href="{prefix}/static/app.css"')
        .replace("background=/bg.png", f"background={prefix}/bg.png")
        .replace('href="/jobs/?page=2&amp;x=1"', f'href="{prefix}/jobs/?page=2&amp;x=1"')
        .replace('src="/img/logo.png"', f'src="{prefix}/img/logo.png"')
        .replace('HREF="/upper"', f'HREF="{prefix}/upper"')
    )


def test_rewrite_html_leaves_what_it_cannot_parse() -> None:
    assert proxy.rewrite_html(b"\xff\xfe<a href='/x'>", lambda url: "/p" + url) == b"\xff\xfe<a href='/p/x'>"
    assert proxy.rewrite_html(b"plain text", lambda url: "/p" + url) == b"plain text"


def test_compressed_html_is_rewritten_and_compressed_again() -> None:
    import gzip
    import zlib

    page = b"<a href='/x'>x</a>"
    assert gzip.decompress(proxy._html_body(gzip.compress(page), "gzip", lambda u: "/p" + u) or b"") == (
        b"<a href='/p/x'>x</a>"
    )
    assert zlib.decompress(proxy._html_body(zlib.compress(page), "deflate", lambda u: "/p" + u) or b"") == (
        b"<a href='/p/x'>x</a>"
    )
    assert proxy._html_body(page, "br", lambda u: "/p" + u) is None  # passed unchanged
