"""Counts a hot path keeps as plain ints, added to their prometheus_client metric when a registry collects it.

A prometheus_client `inc()` or `observe()` costs a few thousand instructions (the observability check, a lock a
value, a histogram's bucket loop): the scheduler's binding and the Job controller's finalizer count paid about 20,000
a pod for them (docs/sched55.md). A `Tally` is a plain int the one thread that counts adds to; the `Deferred`
collector wrapping the metric adds what its tallies gained since the last collection through the metric's public
`inc()`/`observe()`, then yields the metric's own families. So a scrape shows what it showed before: the same
families, series, HELP/TYPE, buckets and `_created` samples (a series is still made, by `labels()`, when first
counted), at the same place in the registry, and the same values, as integer amounts add exactly in a float.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.metrics_core import Metric


class Tally:
    """One counter series' increments, written only by the thread that counts (so `+=` loses none); the collector
    reads `count` from any thread and remembers what it has added."""

    __slots__ = ("_added", "_series", "count")

    def __init__(self, series: Counter) -> None:
        self.count = 0
        self._added = 0
        self._series = series

    def inc(self) -> None:
        """Count one (`Counter.inc()`, added at the next collection)."""
        self.count += 1

    def flush(self) -> None:
        """Add to the series what was counted since the last flush (the collector's lock held)."""
        count = self.count
        if count != self._added:
            self._series.inc(count - self._added)
            self._added = count


class ObservationTally:
    """A histogram series' integer observations, as counts by value (written only by the thread that observes)."""

    __slots__ = ("_added", "_series", "counts")

    def __init__(self, series: Histogram) -> None:
        self.counts: dict[int, int] = {}
        self._added: dict[int, int] = {}
        self._series = series

    def observe(self, value: int) -> None:
        """Observe `value` (`Histogram.observe`, made at the next collection). Integers only: their sum in a float is
        exact in any order, so the series' `_sum` is the one the observations in their order would give."""
        counts = self.counts
        counts[value] = counts.get(value, 0) + 1

    def flush(self) -> None:
        """Observe each value as many times as it was observed since the last flush (the collector's lock held)."""
        added = self._added
        for value, count in list(self.counts.items()):
            for _ in range(count - added.get(value, 0)):
                self._series.observe(value)
            added[value] = count


class Deferred:
    """A collector for one prometheus_client metric (made with `registry=None`) whose counts are partly tallied:
    registered where the metric would have been, it flushes the tallies, then yields the metric's families."""

    def __init__(self, metric: Counter | Histogram, registry: CollectorRegistry) -> None:
        self.metric = metric
        self._tallies: list[Tally | ObservationTally] = []
        self._lock = threading.Lock()
        registry.register(self)

    def tally(self, series: Counter) -> Tally:
        """A tally of `series` (a child of the metric, or the metric itself when it has no labels)."""
        tally = Tally(series)
        with self._lock:
            self._tallies.append(tally)
        return tally

    def observations(self, series: Histogram) -> ObservationTally:
        """A tally of integer observations of `series` (a child of the histogram, or the histogram itself)."""
        tally = ObservationTally(series)
        with self._lock:
            self._tallies.append(tally)
        return tally

    def describe(self) -> Iterable[Metric]:
        """The metric's description, so the registry knows its names (as it knew them when it held the metric)."""
        return self.metric.describe()

    def collect(self) -> Iterable[Metric]:
        """Flush the tallies, then collect the metric."""
        with self._lock:
            for tally in self._tallies:
                tally.flush()
            return self.metric.collect()
