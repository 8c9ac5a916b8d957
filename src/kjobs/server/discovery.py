"""Discovery documents: `/version`, legacy (`/api`, `/apis`, `/api/v1`, …) and aggregated (apidiscovery v2).

All are derived from the registry, so a resource added there appears everywhere at once. The aggregated
form is only sent when the client's `Accept` asks for `g=apidiscovery.k8s.io;v=v2` (kubectl ≤1.29 asks only
for v2beta1 and must get the legacy form). Documents are built once and kept as encoded bytes.
"""

from __future__ import annotations

import functools

import orjson

from kjobs.api.types import Obj
from kjobs.server import registry, resourcemetrics
from kjobs.server.proxy import KINDS as PROXY_KINDS
from kjobs.server.registry import GROUPS, SUBRESOURCE_KINDS, SUBRESOURCE_VERBS, Resource, resources_of

VERSION: Obj = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0+kjobs",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2024-12-11T00:00:00Z",
    "goVersion": "go1.23.4",
    "compiler": "gc",
    "platform": "linux/amd64",
}

AGGREGATED_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def wants_aggregated(accept: str) -> bool:
    """Whether the Accept header asks for aggregated discovery v2."""
    for part in accept.split(","):
        params = {p.strip() for p in part.split(";")}
        if "g=apidiscovery.k8s.io" in params and "v=v2" in params:
            return True
    return False


GROUP_PRIORITIES: dict[str, int] = {
    "": 18000,
    "events.k8s.io": 17750,
    "authentication.k8s.io": 17700,
    "authorization.k8s.io": 17600,
    "batch": 17400,
    "policy": 17100,
    "rbac.authorization.k8s.io": 17000,
    "storage.k8s.io": 16800,
    "apiextensions.k8s.io": 16700,
    "scheduling.k8s.io": 16600,
    "coordination.k8s.io": 16500,
    "discovery.k8s.io": 16200,
}
"""Each served built-in group's `GroupPriorityMinimum`, as kube-apiserver registers its APIServices: the generic
groups' from `DefaultGenericAPIServicePriorities` (pkg/controlplane/apiserver/aggregator.go), the others' from
`apiVersionPriorities` (cmd/kube-apiserver/app/aggregator.go). A custom resource's group has 1000
(pkg/controlplane/controller/crdregistration/patch.go `getGroupPriorityMin`); metrics-server's APIService asks for
100. kube-aggregator lists groups by that priority, highest first, then by APIService name (`v1.batch`)
(`SortedByGroupAndVersion`, staging/src/k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper/helpers.go), so
`/apis` and `kubectl api-resources` show apps, events.k8s.io, ..., batch, ..., custom groups, metrics.k8s.io."""
CUSTOM_GROUP_PRIORITY = 1000


def served_groups() -> list[str]:
    """The served groups but the core one, in kube-aggregator's order (metrics.k8s.io, priority 100, comes after
    them all and is added by the callers)."""

    def key(group: str) -> tuple[int, str]:
        return -GROUP_PRIORITIES.get(group, CUSTOM_GROUP_PRIORITY), min(f"{v}.{group}" for v in GROUPS[group])

    return sorted((g for g in GROUPS if g), key=key)


def _group_versions(group: str) -> list[Obj]:
    return [{"groupVersion": f"{group}/{v}", "version": v} for v in GROUPS[group]]


def api_group(group: str) -> Obj:
    """`GET /apis/{group}`."""
    versions = _group_versions(group)
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": versions,
        "preferredVersion": versions[0],
    }


@functools.cache
def legacy_api(server_address: str = "127.0.0.1:6443") -> bytes:
    """`GET /api`."""
    return orjson.dumps(
        {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
        }
    )


@functools.cache
def legacy_apis() -> bytes:
    """`GET /apis`."""
    groups = [api_group(g) for g in served_groups()] + [metrics_api_group_obj()]
    for g in groups:
        del g["kind"], g["apiVersion"]
    return orjson.dumps({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})


def _resource_entries(r: Resource) -> list[Obj]:
    entry: Obj = {
        "name": r.plural,
        "singularName": r.singular,
        "namespaced": r.namespaced,
        "kind": r.kind,
        "verbs": r.verbs,
    }
    if r.short_names:
        entry["shortNames"] = list(r.short_names)
    if r.categories:
        entry["categories"] = list(r.categories)
    entries = [entry]
    for sub in r.subresources:
        item: Obj = {
            "name": f"{r.plural}/{sub}",
            "singularName": "",
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": SUBRESOURCE_VERBS[sub],
        }
        if sub in SUBRESOURCE_KINDS:
            group, version, kind = SUBRESOURCE_KINDS[sub]
            if group:
                item["group"], item["version"] = group, version
            item["kind"] = kind
        elif sub == "proxy":
            item["kind"] = PROXY_KINDS[r.plural]
        entries.append(item)
    return entries


@functools.cache
def resource_list(group: str, version: str) -> bytes | None:
    """`GET /api/v1` or `/apis/{group}/{version}`: an APIResourceList (None if the group version is unknown)."""
    if group == resourcemetrics.GROUP and version == resourcemetrics.VERSION:
        return _metrics_resource_list()
    if group not in GROUPS or version not in GROUPS[group]:
        return None
    resources = [e for r in resources_of(group, version) for e in _resource_entries(r)]
    gv = f"{group}/{version}" if group else version
    return orjson.dumps({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources})


def _aggregated_resource(r: Resource) -> Obj:
    item: Obj = {
        "resource": r.plural,
        "responseKind": {"group": "", "version": "", "kind": r.kind},
        "scope": "Namespaced" if r.namespaced else "Cluster",
        "singularResource": r.singular,
        "verbs": r.verbs,
    }
    if r.short_names:
        item["shortNames"] = list(r.short_names)
    if r.categories:
        item["categories"] = list(r.categories)
    subs = []
    for sub in r.subresources:
        group, version, kind = SUBRESOURCE_KINDS.get(sub, ("", "", PROXY_KINDS[r.plural] if sub == "proxy" else r.kind))
        subs.append(
            {
                "subresource": sub,
                "responseKind": {"group": group, "version": version, "kind": kind},
                "verbs": SUBRESOURCE_VERBS[sub],
            }
        )
    if subs:
        item["subresources"] = subs
    return item


def _aggregated_group(group: str) -> Obj:
    return {
        "metadata": {"name": group} if group else {},
        "versions": [
            {
                "version": v,
                "freshness": "Current",
                "resources": [_aggregated_resource(r) for r in resources_of(group, v)],
            }
            for v in GROUPS[group]
        ],
    }


@functools.cache
def aggregated(core: bool) -> bytes:
    """Aggregated discovery for `/api` (core=True) or `/apis`."""
    groups = [""] if core else served_groups()
    return orjson.dumps(
        {
            "kind": "APIGroupDiscoveryList",
            "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {},
            "items": [_aggregated_group(g) for g in groups] + ([] if core else [_aggregated_metrics_group()]),
        }
    )


# metrics.k8s.io: served by the API server itself (`kjobs.server.resourcemetrics`), not a registry resource; listed
# last, as an aggregated APIService's group is. Entries as metrics-server's apiserver builds them: no singular
# name (metrics-server's storage provides none), verbs get and list.


def metrics_api_group_obj() -> Obj:
    """`GET /apis/metrics.k8s.io` as an object."""
    version = {"groupVersion": resourcemetrics.GROUP_VERSION, "version": resourcemetrics.VERSION}
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": resourcemetrics.GROUP,
        "versions": [version],
        "preferredVersion": version,
    }


def metrics_api_group() -> bytes:
    """`GET /apis/metrics.k8s.io`."""
    return orjson.dumps(metrics_api_group_obj())


@functools.cache
def _metrics_resource_list() -> bytes:
    resources = [
        {"name": plural, "singularName": "", "namespaced": namespaced, "kind": kind, "verbs": resourcemetrics.VERBS}
        for plural, kind, namespaced in resourcemetrics.RESOURCES
    ]
    return orjson.dumps(
        {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": resourcemetrics.GROUP_VERSION,
            "resources": resources,
        }
    )


def _aggregated_metrics_group() -> Obj:
    return {
        "metadata": {"name": resourcemetrics.GROUP},
        "versions": [
            {
                "version": resourcemetrics.VERSION,
                "freshness": "Current",
                "resources": [
                    {
                        "resource": plural,
                        "responseKind": {"group": "", "version": "", "kind": kind},
                        "scope": "Namespaced" if namespaced else "Cluster",
                        "singularResource": "",
                        "verbs": resourcemetrics.VERBS,
                    }
                    for plural, kind, namespaced in resourcemetrics.RESOURCES
                ],
            }
        ],
    }


def _forget() -> None:
    """The served resources changed (a CRD became Established or went away): build the documents again."""
    legacy_apis.cache_clear()
    resource_list.cache_clear()
    aggregated.cache_clear()


registry.on_change(_forget)
