"""Kubernetes' closed URL grammar, parsed into a `Route` (pure; no I/O).

    /version  /healthz  /livez  /readyz  /metrics
    /api                                   /apis                /apis/{group}
    /api/v1                                /apis/{group}/{version}
    /openapi/v3                            /openapi/v3/api/v1   /openapi/v3/apis/{group}/{version}
    /openapi/v2
    {prefix}/{plural}[/{name}[/{subresource}]]                       (cluster scope, or all namespaces)
    {prefix}/namespaces/{namespace}/{plural}[/{name}[/{subresource}]]
where {prefix} is `/api/v1` or `/apis/{group}/{version}`. Namespaces are themselves a core resource, so
`/api/v1/namespaces/{name}` and `/api/v1/namespaces/{name}/status` are items of `namespaces`.
"""

from __future__ import annotations

from dataclasses import dataclass

from kjobs.server.registry import Resource, lookup
from kjobs.server.resourcemetrics import GROUP as METRICS_GROUP
from kjobs.server.resourcemetrics import RESOURCES as METRICS_RESOURCES
from kjobs.server.resourcemetrics import VERSION as METRICS_VERSION

_NAMESPACE_SUBRESOURCES = ("status", "finalize")


@dataclass(frozen=True)
class Route:
    """What a path addresses. `kind` is one of: version, health, metrics, api, apis, group, resources, openapi-index,
    openapi, openapi-v2, resource (with `resource`, `namespace`, `name`, `subresource`), resourcemetrics
    (`metrics.k8s.io`: `name` is the item, `subresource` the plural), or notfound."""

    kind: str
    group: str = ""
    version: str = ""
    resource: Resource | None = None
    namespace: str | None = None
    name: str = ""
    subresource: str = ""


NOT_FOUND = Route("notfound")


def parse(path: str) -> Route:
    """Route a request path (already percent-decoded)."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        return NOT_FOUND
    head = parts[0]
    if head == "version" and len(parts) == 1:
        return Route("version")
    if head in ("healthz", "livez", "readyz") and len(parts) <= 2:  # `name` the endpoint, `subresource` a check
        return Route("health", name=head, subresource=parts[1] if len(parts) == 2 else "")
    if head == "metrics" and len(parts) == 1:
        return Route("metrics")
    if head == "openapi":
        return _openapi(parts[1:])
    if head == "api":
        if len(parts) == 1:
            return Route("api")
        return _group_version("", parts[1], parts[2:])
    if head == "apis":
        if len(parts) == 1:
            return Route("apis")
        if len(parts) == 2:
            return Route("group", group=parts[1])
        return _group_version(parts[1], parts[2], parts[3:])
    return NOT_FOUND


def _openapi(parts: list[str]) -> Route:
    if parts == ["v2"]:
        return Route("openapi-v2")
    if parts[:1] != ["v3"]:
        return NOT_FOUND
    rest = parts[1:]
    if not rest:
        return Route("openapi-index")
    if rest[0] == "api" and len(rest) == 2:
        return Route("openapi", version=rest[1])
    if rest[0] == "apis" and len(rest) == 3:
        return Route("openapi", group=rest[1], version=rest[2])
    return NOT_FOUND


def _group_version(group: str, version: str, rest: list[str]) -> Route:
    if not rest:
        return Route("resources", group=group, version=version)
    if group == METRICS_GROUP:
        return _resource_metrics(version, rest)
    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in _NAMESPACE_SUBRESOURCES:
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3 and rest[2] == "proxy":  # `{name}/proxy/{path...}`: the path is the proxy's (kjobs.server.proxy)
        rest = rest[:3]
    if len(rest) > 3:
        return NOT_FOUND
    resource = lookup(group, version, rest[0])
    if resource is None:
        return NOT_FOUND
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    if namespace is not None and not resource.namespaced:
        return NOT_FOUND
    if namespace is None and name and resource.namespaced:
        return NOT_FOUND
    if sub and sub not in resource.subresources:
        return NOT_FOUND
    return Route(
        "resource", group=group, version=version, resource=resource, namespace=namespace, name=name, subresource=sub
    )


def _resource_metrics(version: str, rest: list[str]) -> Route:
    """`/apis/metrics.k8s.io/v1beta1/[namespaces/{ns}/]{nodes,pods}[/{name}]` (`kjobs.server.resourcemetrics`)."""
    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    namespaced = {plural: scoped for plural, _, scoped in METRICS_RESOURCES}
    if version != METRICS_VERSION or len(rest) > 2 or rest[0] not in namespaced:
        return NOT_FOUND
    if namespace is not None and not namespaced[rest[0]]:
        return NOT_FOUND
    name = rest[1] if len(rest) > 1 else ""
    if name and namespace is None and namespaced[rest[0]]:
        return NOT_FOUND
    return Route(
        "resourcemetrics", group=METRICS_GROUP, version=version, namespace=namespace, name=name, subresource=rest[0]
    )
