"""Build-time generator for `kjobs/server/data/schemas-v1.32.json.gz` (not imported at run time).

Kubernetes' own OpenAPI definitions are the source of truth for three things the server does: the
`components.schemas` of the OpenAPI v3 documents (`kubectl explain`), strict unknown-field validation, and
the per-field strategic-merge strategies. The PyPI package `kubernetes-validate` ships them (as JSON schema
`$defs`, 108 MB installed), so we convert the closure of the types we serve once and commit the output:

    python -m kjobs.server.schemagen  # needs `pip install kubernetes-validate` in that interpreter

Conversion (what kubectl explain and the Python client read in `/openapi/v3`): `$defs` → `components.schemas`,
`$ref`s rewritten, `"type": [T, "null"]` → `T`, `additionalProperties: false` dropped, and a `$ref` with siblings
wrapped in `allOf`.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

ROOTS = [
    "io.k8s.api.batch.v1.Job",
    "io.k8s.api.batch.v1.JobList",
    "io.k8s.api.batch.v1.CronJob",
    "io.k8s.api.batch.v1.CronJobList",
    "io.k8s.api.core.v1.Pod",
    "io.k8s.api.core.v1.PodList",
    "io.k8s.api.core.v1.Node",
    "io.k8s.api.core.v1.NodeList",
    "io.k8s.api.core.v1.Event",
    "io.k8s.api.core.v1.EventList",
    # the same Events, as events.k8s.io/v1 serves them (kjobs.api.events_v1)
    "io.k8s.api.events.v1.Event",
    "io.k8s.api.events.v1.EventList",
    "io.k8s.api.core.v1.Namespace",
    "io.k8s.api.core.v1.NamespaceList",
    "io.k8s.api.core.v1.Binding",
    "io.k8s.api.policy.v1.Eviction",
    "io.k8s.api.policy.v1.PodDisruptionBudget",
    "io.k8s.api.policy.v1.PodDisruptionBudgetList",
    "io.k8s.api.coordination.v1.Lease",
    "io.k8s.api.coordination.v1.LeaseList",
    "io.k8s.api.scheduling.v1.PriorityClass",
    "io.k8s.api.scheduling.v1.PriorityClassList",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    # stored and validated, never routed (kjobs.api.services)
    "io.k8s.api.core.v1.Service",
    "io.k8s.api.core.v1.ServiceList",
    # the addresses behind a Service, kept by the endpoint controllers (kjobs.api.endpoints)
    "io.k8s.api.core.v1.Endpoints",
    "io.k8s.api.core.v1.EndpointsList",
    "io.k8s.api.discovery.v1.EndpointSlice",
    "io.k8s.api.discovery.v1.EndpointSliceList",
    # what a pod's env and envFrom read (kjobs.node.envvars)
    "io.k8s.api.core.v1.ConfigMap",
    "io.k8s.api.core.v1.ConfigMapList",
    "io.k8s.api.core.v1.Secret",
    "io.k8s.api.core.v1.SecretList",
    # the accounts a pod runs as (the ServiceAccount admission plugin checks them; their TokenRequests' schemas
    # are kjobs.server.authn_schema's)
    "io.k8s.api.core.v1.ServiceAccount",
    "io.k8s.api.core.v1.ServiceAccountList",
    # RBAC's roles and bindings, which the authorizer reads (kjobs.api.rbac, kjobs.server.rbac)
    "io.k8s.api.rbac.v1.Role",
    "io.k8s.api.rbac.v1.RoleList",
    "io.k8s.api.rbac.v1.ClusterRole",
    "io.k8s.api.rbac.v1.ClusterRoleList",
    "io.k8s.api.rbac.v1.RoleBinding",
    "io.k8s.api.rbac.v1.RoleBindingList",
    "io.k8s.api.rbac.v1.ClusterRoleBinding",
    "io.k8s.api.rbac.v1.ClusterRoleBindingList",
    # the self reviews `kubectl auth can-i` and `kubectl auth whoami` create (kjobs.server.reviews)
    "io.k8s.api.authorization.v1.SelfSubjectAccessReview",
    "io.k8s.api.authorization.v1.SelfSubjectRulesReview",
    "io.k8s.api.authentication.v1.SelfSubjectReview",
    # storage: claims, the volumes bound to them and the classes that provision them (kjobs.api.storage)
    "io.k8s.api.core.v1.PersistentVolume",
    "io.k8s.api.core.v1.PersistentVolumeList",
    "io.k8s.api.core.v1.PersistentVolumeClaim",
    "io.k8s.api.core.v1.PersistentVolumeClaimList",
    "io.k8s.api.storage.v1.StorageClass",
    "io.k8s.api.storage.v1.StorageClassList",
    # the reviews about another user (kjobs.server.reviews), which delegating authorizers create
    "io.k8s.api.authorization.v1.SubjectAccessReview",
    "io.k8s.api.authorization.v1.LocalSubjectAccessReview",
    # quotas and limit ranges, which admission enforces on creates (kjobs.server.quota)
    "io.k8s.api.core.v1.ResourceQuota",
    "io.k8s.api.core.v1.ResourceQuotaList",
    "io.k8s.api.core.v1.LimitRange",
    "io.k8s.api.core.v1.LimitRangeList",
]

OUTPUT = Path(__file__).parent / "data" / "schemas-v1.32.json.gz"


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.add(ref.rsplit("/", 1)[-1])
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def _convert(node: Any) -> Any:
    if isinstance(node, list):
        return [_convert(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "additionalProperties" and value is False:
            continue
        if key == "type" and isinstance(value, list):
            kinds = [v for v in value if v != "null"]
            out[key] = kinds[0] if len(kinds) == 1 else kinds
            continue
        if key == "$ref":
            out[key] = "#/components/schemas/" + str(value).rsplit("/", 1)[-1]
            continue
        out[key] = _convert(value)
    if "$ref" in out and len(out) > 1:
        ref = out.pop("$ref")
        out["allOf"] = [{"$ref": ref}]
    return out


def generate(definitions: dict[str, Any]) -> dict[str, Any]:
    """The converted closure of `ROOTS` inside `definitions` (a `$defs` mapping)."""
    keep: set[str] = set()
    todo = list(ROOTS)
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep.add(name)
        found: set[str] = set()
        _refs(definitions[name], found)
        todo.extend(found - keep)
    return {name: _convert(definitions[name]) for name in sorted(keep)}


def main() -> None:
    """Read kubernetes-validate's 1.32 definitions and write the compressed schema file."""
    import kubernetes_validate  # type: ignore[import-not-found]

    base = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / "v1.32.0-local-strict"
    definitions = json.loads((base / "_definitions.json").read_text())["$defs"]
    schemas = generate(definitions)
    OUTPUT.parent.mkdir(exist_ok=True)
    data = json.dumps(schemas, separators=(",", ":"), sort_keys=True).encode()
    OUTPUT.write_bytes(gzip.compress(data, mtime=0))
    print(f"{len(schemas)} schemas, {len(data)} bytes -> {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
