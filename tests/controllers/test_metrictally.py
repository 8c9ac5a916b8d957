"""The tallied metrics (`kjobs.metrictally`) against the form they replaced: each metric registered on its registry
and counted with prometheus_client's `inc()`/`observe()` at once. `Direct` below is that form; patched in for
`Deferred`, `SchedulerMetrics` and `JobMetrics` build their registries as they did. After the same counts, with
collections between them, both registries give the same families in the same order, the same samples (a `_created`
sample's timestamp aside) and the same text, prometheus_client's and Kubernetes' (`kjobs.server.exposition`)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from kjobs.controllers import scheduler_metrics
from kjobs.controllers.scheduler_metrics import SchedulerMetrics
from kjobs.job import metrics as job_metrics
from kjobs.job.metrics import JobMetrics
from kjobs.metrictally import Deferred, ObservationTally, Tally
from kjobs.server.exposition import exposition
from tests.hypothesis_budget import examples


class Direct:
    """The replaced form: the metric on the registry itself, each count made on its series at once."""

    def __init__(self, metric: Counter | Histogram, registry: CollectorRegistry) -> None:
        self.metric = metric
        registry.register(metric)

    def tally(self, series: Counter) -> Counter:
        return series

    def observations(self, series: Histogram) -> Histogram:
        return series


def snapshot(registry: CollectorRegistry) -> tuple[Any, ...]:
    """Families, samples and both texts, with `_created` timestamps (the time a series was made) masked."""
    families = [
        (
            f.name,
            f.documentation,
            f.type,
            f.unit,
            [(s.name, s.labels, None if s.name.endswith("_created") else s.value) for s in f.samples],
        )
        for f in registry.collect()
    ]
    text = re.sub(r"(?m)^(\S+_created(?:\{[^}]*\})?) \S+$", r"\1 T", generate_latest(registry).decode())
    return families, text, exposition([registry])


# An operation: ("scheduled" | "unschedulable" | "errors", None), ("attempts", n), ("finalizer", event) or
# ("collect", None), a scrape between counts.
OPS = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["scheduled", "unschedulable", "errors", "collect"]), st.none()),
        st.tuples(st.just("attempts"), st.integers(1, 40)),
        st.tuples(st.just("finalizer"), st.sampled_from(["add", "delete"])),
    ),
    max_size=60,
)


def run(ops: list[tuple[str, Any]]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The snapshots of a scheduler's and a Job controller's registries at each collection and at the end."""
    scheduler = SchedulerMetrics(profile="default-scheduler")
    job = JobMetrics()
    finalizer: dict[str, Any] = {}  # as JobController._count_tracking_finalizer keeps them
    seen: tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]] = ([], [])
    for op, arg in ops:
        if op == "attempts":
            scheduler.scheduling_attempts.observe(arg)
        elif op == "finalizer":
            if arg not in finalizer:
                finalizer[arg] = job.tracking_finalizer_counts.tally(job.tracking_finalizer.labels(arg))
            finalizer[arg].inc()
        elif op == "collect":
            seen[0].append(snapshot(scheduler.registry))
            seen[1].append(snapshot(job.registry))
        else:
            getattr(scheduler, op).inc()
    seen[0].append(snapshot(scheduler.registry))
    seen[1].append(snapshot(job.registry))
    return seen


@settings(max_examples=examples(300), deadline=None)
@given(ops=OPS)
def test_tallied_metrics_collect_as_the_direct_ones(ops: list[tuple[str, Any]]) -> None:
    tallied = run(ops)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scheduler_metrics, "Deferred", Direct)
        patch.setattr(job_metrics, "Deferred", Direct)
        direct = run(ops)
    assert tallied == direct


def test_a_tally_adds_what_it_gained_once() -> None:
    registry = CollectorRegistry()
    counter = Counter("c", "help", ["l"], registry=None)
    histogram = Histogram("h", "help", registry=None, buckets=[1.0, 2.0])
    counts = Deferred(counter, registry)
    series: Tally = counts.tally(counter.labels("a"))
    observed: ObservationTally = Deferred(histogram, registry).observations(histogram)
    for _ in range(3):
        series.inc()
        observed.observe(2)
    assert registry.get_sample_value("c_total", {"l": "a"}) == 3
    assert registry.get_sample_value("c_total", {"l": "a"}) == 3
    observed.observe(1)
    series.inc()
    assert registry.get_sample_value("c_total", {"l": "a"}) == 4
    assert registry.get_sample_value("h_count") == 4
    assert registry.get_sample_value("h_sum") == 7
    assert registry.get_sample_value("h_bucket", {"le": "1.0"}) == 1
