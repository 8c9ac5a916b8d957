"""The scheduler's Prometheus metrics, with kube-scheduler's names, help texts, labels and buckets
(`pkg/scheduler/metrics/metrics.go`, the STABLE ones that apply here).

Like `JobMetrics`, each instance owns a registry (tests get a fresh one; `kjobs up` can pass the one it serves).
`scheduler_pending_pods` is collected at scrape time from the scheduler's queue state. The per-pod counts
(`scheduler_schedule_attempts_total`, `scheduler_pod_scheduling_attempts`) are tallied as plain ints and added to
their metrics when the registry collects them (`kjobs.metrictally`): the exposition is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from kjobs.metrictally import Deferred

_NS = "scheduler"
PENDING_HELP = (
    "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means "
    "number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler "
    "attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never "
    "attempted to schedule because they are gated."
)
QUEUES = ("active", "backoff", "unschedulable", "gated")


class _PendingPods(Collector):
    def __init__(self, source: Callable[[], dict[str, int]]) -> None:
        self._source = source

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(f"{_NS}_pending_pods", PENDING_HELP, labels=["queue"])
        counts = self._source()
        for queue in QUEUES:
            family.add_metric([queue], counts.get(queue, 0))
        yield family


class SchedulerMetrics:
    """scheduler_* metrics on one registry; `bind_queue` attaches the pending-pods gauge to a scheduler."""

    def __init__(self, registry: CollectorRegistry | None = None, *, profile: str = "default-scheduler") -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        reg = self.registry
        attempts = Counter(
            "schedule_attempts",
            "[STABLE] Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be "
            "scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            namespace=_NS,
            registry=None,
        )
        deferred = Deferred(attempts, reg)
        self.scheduled = deferred.tally(attempts.labels("scheduled", profile))
        self.unschedulable = deferred.tally(attempts.labels("unschedulable", profile))
        self.errors = deferred.tally(attempts.labels("error", profile))
        self.preemption_attempts = Counter(
            "preemption_attempts",
            "[STABLE] Total preemption attempts in the cluster till now",
            namespace=_NS,
            registry=reg,
        )
        self.preemption_victims = Histogram(
            "preemption_victims",
            "[STABLE] Number of selected preemption victims",
            namespace=_NS,
            registry=reg,
            buckets=[float(2**i) for i in range(7)],
        )
        self.pod_scheduling_attempts = Histogram(
            "pod_scheduling_attempts",
            "[STABLE] Number of attempts to successfully schedule a pod.",
            namespace=_NS,
            registry=None,
            buckets=[float(2**i) for i in range(5)],
        )
        self.scheduling_attempts = Deferred(self.pod_scheduling_attempts, reg).observations(
            self.pod_scheduling_attempts
        )
        self._pending: Callable[[], dict[str, int]] = dict

    def bind_queue(self, source: Callable[[], dict[str, int]]) -> None:
        """Report `scheduler_pending_pods` from `source()` (queue name → count) at scrape time."""
        if self._pending is dict:
            self.registry.register(_PendingPods(lambda: self._pending()))
        self._pending = source
