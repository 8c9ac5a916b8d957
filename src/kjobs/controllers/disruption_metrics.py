"""Prometheus metrics of the controllers other than the Job controller and the scheduler, with Kubernetes' names,
help texts and labels.

One class per controller, each on its own registry unless given one (as `JobMetrics` does):
`node_collector_*` (node lifecycle), `taint_eviction_controller_*`, `pod_gc_collector_*`,
`ttl_after_finished_controller_*` and `cronjob_controller_*`. The disruption controller and the garbage collector
export none of their own.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


def _exponential(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


class NodeLifecycleMetrics:
    """`node_collector_*`: zone health and size, unhealthy nodes, evictions (taints added), health-check durations."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        reg = self.registry
        self.zone_health = Gauge(
            "node_collector_zone_health",
            "[ALPHA] Gauge measuring percentage of healthy nodes per zone.",
            ["zone"],
            registry=reg,
        )
        self.zone_size = Gauge(
            "node_collector_zone_size",
            "[ALPHA] Gauge measuring number of registered Nodes per zones.",
            ["zone"],
            registry=reg,
        )
        self.unhealthy_nodes = Gauge(
            "node_collector_unhealthy_nodes_in_zone",
            "[ALPHA] Gauge measuring number of not Ready Nodes per zones.",
            ["zone"],
            registry=reg,
        )
        self.evictions = Counter(
            "node_collector_evictions",
            "[STABLE] Number of Node evictions that happened since current instance of NodeController started.",
            ["zone"],
            registry=reg,
        )
        self.update_node_health = Histogram(
            "node_collector_update_node_health_duration_seconds",
            "[ALPHA] Duration in seconds for NodeController to update the health of a single node.",
            buckets=_exponential(0.001, 4, 8),
            registry=reg,
        )
        self.update_all_nodes_health = Histogram(
            "node_collector_update_all_nodes_health_duration_seconds",
            "[ALPHA] Duration in seconds for NodeController to update the health of all nodes.",
            buckets=_exponential(0.01, 4, 8),
            registry=reg,
        )


class TaintEvictionMetrics:
    """`taint_eviction_controller_pod_deletions_total` and `..._pod_deletion_duration_seconds`."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.deletions = Counter(
            "taint_eviction_controller_pod_deletions",
            "[ALPHA] Total number of Pods deleted by TaintEvictionController since its start.",
            registry=self.registry,
        )
        self.deletion_latency = Histogram(
            "taint_eviction_controller_pod_deletion_duration_seconds",
            "[ALPHA] Latency, in seconds, between the time when a taint effect has been activated for the Pod and its "
            "deletion via TaintEvictionController.",
            buckets=[0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30, 60, 120, 180, 240],
            registry=self.registry,
        )


class PodGCMetrics:
    """`pod_gc_collector_force_delete_pods_total` / `..._force_delete_pod_errors_total` {namespace, reason}."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.deleting = Counter(
            "pod_gc_collector_force_delete_pods",
            "[ALPHA] Number of pods that are being forcefully deleted since the Pod GC Controller started.",
            ["namespace", "reason"],
            registry=self.registry,
        )
        self.errors = Counter(
            "pod_gc_collector_force_delete_pod_errors",
            "[ALPHA] Number of errors encountered when forcefully deleting the pods since the Pod GC Controller "
            "started.",
            ["namespace", "reason"],
            registry=self.registry,
        )


class TTLMetrics:
    """`ttl_after_finished_controller_job_deletion_duration_seconds`."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.deletion_duration = Histogram(
            "ttl_after_finished_controller_job_deletion_duration_seconds",
            "[ALPHA] The time it took to delete the job since it became eligible for deletion",
            buckets=_exponential(0.1, 2, 14),
            registry=self.registry,
        )


class CronJobMetrics:
    """`cronjob_controller_job_creation_skew_duration_seconds` (pkg/controller/cronjob/metrics)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.creation_skew = Histogram(
            "cronjob_controller_job_creation_skew_duration_seconds",
            "[STABLE] Time between when a cronjob is scheduled to be run, and when the corresponding job is created",
            buckets=_exponential(1, 2, 10),
            registry=self.registry,
        )
