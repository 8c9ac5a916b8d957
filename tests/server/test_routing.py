"""Kubernetes' URL grammar, parsed (pure)."""

from __future__ import annotations

import pytest

from kjobs.server import routing
from kjobs.server.service import DeleteOptions


@pytest.mark.parametrize(
    ("path", "kind", "plural", "namespace", "name", "sub"),
    [
        ("/api/v1/namespaces/default/pods", "resource", "pods", "default", "", ""),
        ("/api/v1/pods", "resource", "pods", None, "", ""),
        ("/api/v1/namespaces/default/pods/p/log", "resource", "pods", "default", "p", "log"),
        ("/api/v1/namespaces/default/pods/p/eviction", "resource", "pods", "default", "p", "eviction"),
        ("/apis/batch/v1/namespaces/ns/jobs/j/status", "resource", "jobs", "ns", "j", "status"),
        ("/apis/batch/v1/jobs", "resource", "jobs", None, "", ""),
        ("/api/v1/namespaces", "resource", "namespaces", None, "", ""),
        ("/api/v1/namespaces/team", "resource", "namespaces", None, "team", ""),
        ("/api/v1/namespaces/team/status", "resource", "namespaces", None, "team", "status"),
        ("/api/v1/nodes/n1/status", "resource", "nodes", None, "n1", "status"),
        ("/apis/scheduling.k8s.io/v1/priorityclasses/high", "resource", "priorityclasses", None, "high", ""),
        (
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1",
            "resource",
            "leases",
            "kube-node-lease",
            "n1",
            "",
        ),
    ],
)
def test_resource_paths(path: str, kind: str, plural: str, namespace: str | None, name: str, sub: str) -> None:
    route = routing.parse(path)
    assert route.kind == kind and route.resource is not None
    assert (route.resource.plural, route.namespace, route.name, route.subresource) == (plural, namespace, name, sub)


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/version", "version"),
        ("/healthz", "health"),
        ("/readyz/ping", "health"),
        ("/api", "api"),
        ("/apis", "apis"),
        ("/apis/batch", "group"),
        ("/api/v1", "resources"),
        ("/apis/batch/v1", "resources"),
        ("/openapi/v3", "openapi-index"),
        ("/openapi/v3/api/v1", "openapi"),
        ("/openapi/v3/apis/batch/v1", "openapi"),
        ("/openapi/v2", "openapi-v2"),
        ("/openapi/v2/api/v1", "notfound"),
        ("/", "notfound"),
        ("/api/v1/widgets", "notfound"),
        ("/api/v1/pods/p", "notfound"),  # a namespaced item needs its namespace
        ("/api/v1/namespaces/default/nodes", "notfound"),  # nodes are cluster-scoped
        ("/api/v1/namespaces/default/configmaps/c/proxy", "notfound"),  # only pods, services and nodes have one
        ("/api/v1/namespaces/default/pods/p/log/x", "notfound"),
    ],
)
def test_other_paths(path: str, kind: str) -> None:
    assert routing.parse(path).kind == kind


@pytest.mark.parametrize(
    ("body", "query", "expected"),
    [
        (None, {}, DeleteOptions()),
        ({"propagationPolicy": "Background"}, {}, DeleteOptions(propagation="Background")),
        (
            None,
            {"propagationPolicy": "Foreground", "gracePeriodSeconds": "0"},
            DeleteOptions(grace_period=0, propagation="Foreground"),
        ),
        ({"orphanDependents": True}, {}, DeleteOptions(propagation="Orphan", orphan_dependents=True)),
        ({"orphanDependents": False}, {}, DeleteOptions(propagation="Background", orphan_dependents=False)),
        (
            {"preconditions": {"uid": "u", "resourceVersion": "7"}},
            {},
            DeleteOptions(precondition_uid="u", precondition_rv="7"),
        ),
        ({"dryRun": ["All"]}, {}, DeleteOptions(dry_run=True)),
    ],
)
def test_delete_options(body: dict[str, object] | None, query: dict[str, str], expected: DeleteOptions) -> None:
    assert DeleteOptions.parse(body, query) == expected


def test_delete_options_rejects_unknown_policy() -> None:
    from kjobs.api.errors import ApiError

    with pytest.raises(ApiError) as bad:
        DeleteOptions.parse({"propagationPolicy": "Sometimes"}, {})
    assert bad.value.code == 422
