"""The OpenAPI schemas of `metrics.k8s.io/v1beta1` (PodMetrics, NodeMetrics), which the shipped schemas lack.

On a cluster metrics-server publishes them (its generated openapi, from k8s.io/metrics
pkg/apis/metrics/v1beta1/types.go), and the aggregator lists `apis/metrics.k8s.io/v1beta1` in `/openapi/v3`
and merges them into `/openapi/v2`, so `kubectl explain podmetrics` works. They are written here in the
v3 form of the shipped schemas (`#/components/schemas/` refs, a `$ref` with siblings wrapped in `allOf`), with
the types' Go comments as descriptions, as openapi-gen makes them.
"""

from __future__ import annotations

from typing import Any

_PREFIX = "io.k8s.metrics.pkg.apis.metrics.v1beta1."
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_REF = "#/components/schemas/"

_API_VERSION = {
    "description": "APIVersion defines the versioned schema of this representation of an object. Servers should "
    "convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
    "type": "string",
}
_KIND = {
    "description": "Kind is a string value representing the REST resource this object represents. Servers may "
    "infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
    "type": "string",
}
_WINDOW_DOC = (
    "The following fields define time interval from which metrics were collected from the interval "
    "[Timestamp-Window, Timestamp]."
)
_USAGE = {
    "additionalProperties": {"$ref": _REF + "io.k8s.apimachinery.pkg.api.resource.Quantity"},
    "description": "The memory usage is the memory working set.",
    "type": "object",
}


def _gvk(kind: str) -> list[dict[str, str]]:
    return [{"group": "metrics.k8s.io", "kind": kind, "version": "v1beta1"}]


def _item(kind: str, description: str, last: str, last_schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "description": description,
        "properties": {
            "apiVersion": _API_VERSION,
            "kind": _KIND,
            "metadata": {"$ref": _REF + _META + "ObjectMeta"},
            "timestamp": {"allOf": [{"$ref": _REF + _META + "Time"}], "description": _WINDOW_DOC},
            "window": {"$ref": _REF + _META + "Duration"},
            last: last_schema,
        },
        "required": ["timestamp", "window", last],
        "type": "object",
        "x-kubernetes-group-version-kind": _gvk(kind),
    }


def _list(kind: str, description: str, items: str) -> dict[str, Any]:
    return {
        "description": description,
        "properties": {
            "apiVersion": _API_VERSION,
            "items": {"description": items, "items": {"$ref": _REF + _PREFIX + kind}, "type": "array"},
            "kind": _KIND,
            "metadata": {
                "allOf": [{"$ref": _REF + _META + "ListMeta"}],
                "description": "Standard list metadata. More info: "
                "https://git.k8s.io/community/contributors/devel/api-conventions.md#types-kinds",
            },
        },
        "required": ["items"],
        "type": "object",
        "x-kubernetes-group-version-kind": _gvk(kind + "List"),
    }


SCHEMAS: dict[str, Any] = {
    _PREFIX + "ContainerMetrics": {
        "description": "ContainerMetrics sets resource usage metrics of a container.",
        "properties": {
            "name": {
                "description": "Container name corresponding to the one from pod.spec.containers.",
                "type": "string",
            },
            "usage": _USAGE,
        },
        "required": ["name", "usage"],
        "type": "object",
    },
    _PREFIX + "NodeMetrics": _item(
        "NodeMetrics", "NodeMetrics sets resource usage metrics of a node.", "usage", _USAGE
    ),
    _PREFIX + "NodeMetricsList": _list(
        "NodeMetrics", "NodeMetricsList is a list of NodeMetrics.", "List of node metrics."
    ),
    _PREFIX + "PodMetrics": _item(
        "PodMetrics",
        "PodMetrics sets resource usage metrics of a pod.",
        "containers",
        {
            "description": "Metrics for all containers are collected within the same time window.",
            "items": {"$ref": _REF + _PREFIX + "ContainerMetrics"},
            "type": "array",
        },
    ),
    _PREFIX + "PodMetricsList": _list("PodMetrics", "PodMetricsList is a list of PodMetrics.", "List of pod metrics."),
    _META + "Duration": {
        "description": "Duration is a wrapper around time.Duration which supports correct marshaling to YAML and "
        "JSON. In particular, it marshals into strings, which can be used as map keys in json.",
        "type": "string",
    },
}
