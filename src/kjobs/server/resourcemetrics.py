"""The resource Metrics API (`metrics.k8s.io/v1beta1`: PodMetrics and NodeMetrics), served as metrics-server does.

On a cluster metrics-server serves this group through the aggregator; here the API server answers it itself,
from a `UsageSource` (the node agents of its process, `kjobs.node.logsource.AgentLogs`) asked when a request
comes, so nothing is computed on a pod's path. As metrics-server's storage (metrics-server pkg/api/pod.go,
node.go): a list is of the pods (or nodes) matching the label and field selectors, sorted by namespace and name,
keeping only Running pods the source has figures for; a GET of a pod or node without figures is 404
`pods.metrics.k8s.io "ns/name" not found`; each item's `creationTimestamp` is the time of the answer and its
labels are the object's. Only get and list are served (no watch).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

from kjobs.api.errors import ApiError, not_found
from kjobs.api.quantity import Format, format_quantity
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.node.podstatus import go_duration

GROUP = "metrics.k8s.io"
VERSION = "v1beta1"
GROUP_VERSION = f"{GROUP}/{VERSION}"
RESOURCES: tuple[tuple[str, str, bool], ...] = (("nodes", "NodeMetrics", False), ("pods", "PodMetrics", True))
"""(plural, kind, namespaced), in metrics-server's discovery order."""
VERBS = ["get", "list"]


@dataclass(frozen=True)
class ContainerUsage:
    """One container's CPU (cores) and memory (bytes)."""

    name: str
    cpu: float
    memory: int


@dataclass(frozen=True)
class Sample:
    """Figures collected over `window` seconds ending at `timestamp` (epoch seconds)."""

    timestamp: float
    window: float
    containers: tuple[ContainerUsage, ...]
    """A pod's containers; a node's single entry is its own usage."""


class UsageSource(Protocol):
    """Where figures come from: the agents owning the processes."""

    def pod_usage(self, pods: Sequence[Obj]) -> dict[str, Sample]:
        """Figures of those of `pods` it has any for, by pod uid."""
        ...

    def node_usage(self, names: Sequence[str]) -> dict[str, Sample]:
        """Figures of those of the nodes named it has any for, by name."""
        ...


class NoUsage:
    """A source without figures (a server without agents): every list is empty, every GET 404."""

    def pod_usage(self, pods: Sequence[Obj]) -> dict[str, Sample]:
        return {}

    def node_usage(self, names: Sequence[str]) -> dict[str, Sample]:
        return {}


def cpu_quantity(cores: float) -> str:
    """Cores as nanocores, as metrics-server writes them (`resource.NewScaledQuantity(n, resource.Nano)`)."""
    return format_quantity(Fraction(round(cores * 1e9), 10**9))


def memory_quantity(size: int) -> str:
    """Bytes as a binary-SI quantity (`resource.NewQuantity(n, resource.BinarySI)`)."""
    return format_quantity(Fraction(size), Format.BINARY_SI)


def _usage(c: ContainerUsage) -> Obj:
    return {"cpu": cpu_quantity(c.cpu), "memory": memory_quantity(c.memory)}


def _meta(obj: Obj, now: float) -> Obj:
    source = obj.get("metadata") or {}
    meta: Obj = {"name": source.get("name", "")}
    if source.get("namespace"):
        meta["namespace"] = source["namespace"]
    meta["creationTimestamp"] = format_time(now)
    if source.get("labels"):
        meta["labels"] = dict(source["labels"])
    return meta


def pod_metrics(pod: Obj, sample: Sample, now: float) -> Obj:
    """A PodMetrics object."""
    return {
        "kind": "PodMetrics",
        "apiVersion": GROUP_VERSION,
        "metadata": _meta(pod, now),
        "timestamp": format_time(sample.timestamp),
        "window": go_duration(round(sample.window, 3)),
        "containers": [{"name": c.name, "usage": _usage(c)} for c in sample.containers],
    }


def node_metrics(node: Obj, sample: Sample, now: float) -> Obj:
    """A NodeMetrics object."""
    return {
        "kind": "NodeMetrics",
        "apiVersion": GROUP_VERSION,
        "metadata": _meta(node, now),
        "timestamp": format_time(sample.timestamp),
        "window": go_duration(round(sample.window, 3)),
        "usage": _usage(sample.containers[0]),
    }


def _running(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running"


def _sorted(objs: list[Obj]) -> list[Obj]:
    return sorted(objs, key=lambda o: ((o["metadata"].get("namespace") or ""), o["metadata"]["name"]))


def pod_items(pods: Sequence[Obj], source: UsageSource, now: float) -> list[Obj]:
    """The PodMetrics of the Running pods among `pods` that `source` has figures for."""
    running = [p for p in pods if _running(p)]
    samples = source.pod_usage(running) if running else {}
    items = []
    for pod in _sorted(list(running)):
        sample = samples.get(str(pod["metadata"].get("uid") or ""))
        if sample is not None:
            items.append(pod_metrics(pod, sample, now))
    return items


def node_items(nodes: Sequence[Obj], source: UsageSource, now: float) -> list[Obj]:
    """The NodeMetrics of the nodes `source` has figures for."""
    names = [str(n["metadata"]["name"]) for n in nodes]
    samples = source.node_usage(names) if names else {}
    return [
        node_metrics(n, samples[n["metadata"]["name"]], now)
        for n in _sorted(list(nodes))
        if n["metadata"]["name"] in samples
    ]


def metrics_not_found(plural: str, namespace: str, name: str) -> ApiError:
    """metrics-server's 404: the name is `namespace/name` for a pod (`errors.NewNotFound(groupResource, ...)`)."""
    return not_found(plural, f"{namespace}/{name}" if namespace else name, group=GROUP)


def item_list(kind: str, items: list[Obj]) -> Obj:
    """A PodMetricsList or NodeMetricsList."""
    return {"kind": f"{kind}List", "apiVersion": GROUP_VERSION, "metadata": {}, "items": items}
