"""The API server's own request metrics, named and labelled as kube-apiserver's (`apiserver_request_*`).

`apiserver_request_total` counts every resource request by verb, dry run, group, version, resource,
subresource, scope, component and response code; `apiserver_request_duration_seconds` is the latency
histogram of the same requests without the code, and long-running WATCH requests are left out of it, as
Kubernetes does. Label children are bound once per label set, so a request costs one dict lookup.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram

DURATION_BUCKETS = (
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
)  # fmt: skip
_LABELS = ("verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component")


def clean_verb(method: str, *, has_name: bool, watch: bool, apply: bool) -> str:
    """kube-apiserver's verb label: LIST/WATCH for collection GETs, APPLY, DELETECOLLECTION, else the method."""
    if method == "GET" and not has_name:
        return "WATCH" if watch else "LIST"
    if method == "PATCH" and apply:
        return "APPLY"
    if method == "DELETE" and not has_name:
        return "DELETECOLLECTION"
    return method


class ApiMetrics:
    """Request counters and latencies on one registry."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.requests = Counter(
            "apiserver_request_total",
            "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, "
            "scope, component, and HTTP response code.",
            [*_LABELS, "code"],
            registry=self.registry,
        )
        self.duration = Histogram(
            "apiserver_request_duration_seconds",
            "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, "
            "subresource, scope and component.",
            list(_LABELS),
            buckets=DURATION_BUCKETS,
            registry=self.registry,
        )
        self._counters: dict[tuple[str, ...], Any] = {}
        self._histograms: dict[tuple[str, ...], Any] = {}

    def observe(self, labels: tuple[str, ...], code: int, seconds: float) -> None:
        """Record one request (`labels` in `_LABELS` order)."""
        key = (*labels, str(code))
        counter = self._counters.get(key)
        if counter is None:
            counter = self._counters[key] = self.requests.labels(*key)
        counter.inc()
        if labels[0] == "WATCH":
            return
        histogram = self._histograms.get(labels)
        if histogram is None:
            histogram = self._histograms[labels] = self.duration.labels(*labels)
        histogram.observe(seconds)
