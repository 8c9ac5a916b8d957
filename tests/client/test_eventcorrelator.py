"""client-go's event correlation, as pure logic: aggregation, deduplication (counts) and the spam filter."""

from __future__ import annotations

import re

import pytest

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.eventcorrelator import (
    DEFAULT_AGGREGATE_INTERVAL_IN_SECONDS,
    DEFAULT_AGGREGATE_MAX_EVENTS,
    DEFAULT_SPAM_BURST,
    MAX_LRU_CACHE_ENTRIES,
    CorrelatorOptions,
    EventCorrelator,
    EventNamer,
    LRUCache,
    get_event_key,
    get_spam_key,
)

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


class Recorder:
    """Builds events as the recorder does, feeds them to a correlator and plays a server that assigns versions."""

    def __init__(self, **options: int) -> None:
        self.names = EventNamer()
        self.correlator = EventCorrelator(namer=self.names, options=CorrelatorOptions(**options))
        self.now = T0
        self.version = 0

    def make(self, message: str, *, reason: str = "SuccessfulCreate", obj: str = "work", uid: str = "u1") -> Obj:
        stamp = format_time(self.now)
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": self.names.name(obj, self.now), "namespace": "default"},
            "involvedObject": {
                "kind": "Job",
                "namespace": "default",
                "name": obj,
                "uid": uid,
                "apiVersion": "batch/v1",
            },
            "reason": reason,
            "message": message,
            "source": {"component": "job-controller"},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "type": "Normal",
            "reportingComponent": "job-controller",
            "reportingInstance": "",
        }

    def record(self, message: str, **kw: str) -> tuple[str, Obj | None, Obj | None]:
        """(action, event, patch), with the written event's state reported back as the recorder does."""
        result = self.correlator.event_correlate(self.make(message, **kw), self.now)
        if result.event is not None:
            self.version += 1
            written = dict(result.event, metadata=dict(result.event["metadata"], resourceVersion=str(self.version)))
            if result.patch is not None:
                written.update(result.patch)
            self.correlator.update_state(written)
        return result.action, result.event, result.patch


def test_an_identical_event_patches_the_first_with_a_count_and_the_new_last_timestamp() -> None:
    rec = Recorder()
    action, first, patch = rec.record("Created pod: work-a")
    assert (action, patch) == ("create", None)
    assert first is not None and first["count"] == 1
    rec.now += 42
    action, second, patch = rec.record("Created pod: work-a")
    assert action == "patch"
    assert second is not None
    assert second["metadata"]["name"] == first["metadata"]["name"]
    assert second["firstTimestamp"] == "2026-01-01T00:00:00Z"
    assert patch == {"count": 2, "lastTimestamp": "2026-01-01T00:00:42Z", "message": "Created pod: work-a"}
    rec.now += 1
    assert rec.record("Created pod: work-a")[2] == {
        "count": 3,
        "lastTimestamp": "2026-01-01T00:00:43Z",
        "message": "Created pod: work-a",
    }


@pytest.mark.parametrize(
    "other",
    [
        pytest.param({"reason": "Completed"}, id="another reason"),
        pytest.param({"obj": "other"}, id="another object"),
        pytest.param({"uid": "u2"}, id="a recreated object (new uid)"),
    ],
)
def test_events_about_other_things_are_not_counted_together(other: dict[str, str]) -> None:
    rec = Recorder()
    rec.record("Created pod: work-a")
    action, event, _ = rec.record("Created pod: work-a", **other)
    assert action == "create" and event is not None and event["count"] == 1


def test_the_tenth_similar_event_becomes_an_aggregate_that_later_ones_update() -> None:
    rec = Recorder()
    names = set()
    for i in range(DEFAULT_AGGREGATE_MAX_EVENTS - 1):
        action, event, _ = rec.record(f"Created pod: work-{i}")
        assert action == "create" and event is not None and event["message"] == f"Created pod: work-{i}"
        names.add(event["metadata"]["name"])
        rec.now += 1
    action, aggregate, _ = rec.record("Created pod: work-9")
    assert action == "create" and aggregate is not None
    assert aggregate["message"] == "(combined from similar events): Created pod: work-9"
    assert aggregate["metadata"]["name"] not in names
    assert re.fullmatch(r"work\.[0-9a-f]+", aggregate["metadata"]["name"])
    assert aggregate["reportingComponent"] == "" and aggregate["source"] == {"component": "job-controller"}
    assert (aggregate["reason"], aggregate["type"], aggregate["count"]) == ("SuccessfulCreate", "Normal", 1)
    rec.now += 5
    action, updated, patch = rec.record("Created pod: work-10")
    assert action == "patch" and updated is not None
    assert updated["metadata"]["name"] == aggregate["metadata"]["name"]
    assert patch == {
        "count": 2,
        "lastTimestamp": "2026-01-01T00:00:14Z",
        "message": "(combined from similar events): Created pod: work-10",
    }


def test_similar_events_further_apart_than_the_interval_are_not_aggregated() -> None:
    rec = Recorder()
    for i in range(DEFAULT_AGGREGATE_MAX_EVENTS - 1):
        rec.record(f"Created pod: work-{i}")
    rec.now += DEFAULT_AGGREGATE_INTERVAL_IN_SECONDS + 1
    action, event, _ = rec.record("Created pod: work-9")
    assert action == "create" and event is not None and event["message"] == "Created pod: work-9"
    # Exactly the interval apart still counts as similar.
    rec = Recorder()
    for i in range(DEFAULT_AGGREGATE_MAX_EVENTS - 1):
        rec.record(f"Created pod: work-{i}")
        rec.now += DEFAULT_AGGREGATE_INTERVAL_IN_SECONDS
    event = rec.record("Created pod: work-9")[1]
    assert event is not None and event["message"].startswith("(combined from similar events): ")


def test_a_source_gets_25_events_about_an_object_then_one_per_300_seconds() -> None:
    rec = Recorder()
    outcomes = [rec.record("Back-off restarting failed container")[0] for _ in range(DEFAULT_SPAM_BURST + 5)]
    assert outcomes == ["create"] + ["patch"] * (DEFAULT_SPAM_BURST - 1) + ["drop"] * 5
    # Another object (or another source) has its own bucket.
    assert rec.record("Back-off restarting failed container", obj="other")[0] == "create"
    rec.now += 299
    assert rec.record("Back-off restarting failed container")[0] == "drop"
    rec.now += 1
    action, event, patch = rec.record("Back-off restarting failed container")
    assert action == "patch"
    # The dropped occurrences were still counted, as client-go counts them before filtering.
    assert event is not None and patch is not None and patch["count"] == DEFAULT_SPAM_BURST + 5 + 1 + 1
    assert rec.record("Back-off restarting failed container")[0] == "drop"
    rec.now += 3 * 300
    assert [rec.record("Back-off restarting failed container")[0] for _ in range(4)] == ["patch"] * 3 + ["drop"]


def test_the_spam_bucket_holds_at_most_the_burst() -> None:
    rec = Recorder()
    rec.record("first")
    rec.now += 100 * 24 * 3600
    outcomes = [rec.record(f"distinct reason {i}", reason=f"R{i}")[0] for i in range(DEFAULT_SPAM_BURST + 1)]
    assert outcomes.count("drop") == 1 and outcomes[-1] == "drop"


def test_patches_use_the_resource_version_and_name_the_server_returned() -> None:
    rec = Recorder()
    rec.record("same")
    result = rec.correlator.event_correlate(rec.make("same"), rec.now)
    assert result.event is not None and result.event["metadata"]["resourceVersion"] == "1"


def test_an_answer_arriving_after_a_later_occurrence_keeps_the_higher_count() -> None:
    names = EventNamer()
    correlator = EventCorrelator(namer=names)
    rec = Recorder()
    first = correlator.event_correlate(rec.make("same"), T0).event
    second = correlator.event_correlate(rec.make("same"), T0 + 1).event
    assert first is not None and second is not None and second["count"] == 2
    correlator.update_state(dict(first, metadata=dict(first["metadata"], resourceVersion="7")))
    third = correlator.event_correlate(rec.make("same"), T0 + 2)
    assert third.patch is not None and third.patch["count"] == 3
    assert third.event is not None and third.event["metadata"]["resourceVersion"] == "7"


def test_the_caches_are_bounded_least_recently_used_first() -> None:
    rec = Recorder(lru_cache_size=2)
    rec.record("m", obj="a")
    rec.record("m", obj="b")
    assert rec.record("m", obj="a")[0] == "patch"  # a is now the most recent
    rec.record("m", obj="c")  # evicts b
    assert rec.record("m", obj="a")[0] == "patch"
    assert rec.record("m", obj="b")[0] == "create"
    assert MAX_LRU_CACHE_ENTRIES == 4096
    cache: LRUCache[int, int] = LRUCache(MAX_LRU_CACHE_ENTRIES)
    for i in range(10_000):
        cache.add(i, i)
    assert len(cache) == MAX_LRU_CACHE_ENTRIES and cache.get(0) is None and cache.get(9_999) == 9_999


def test_names_are_client_go_style_and_unique_within_one_instant() -> None:
    names = EventNamer()
    first, second = names.name("work", T0), names.name("work", T0)
    assert first == f"work.{int(T0 * 1_000_000_000):x}"
    assert second != first and second.startswith("work.")
    assert int(second.split(".")[1], 16) == int(first.split(".")[1], 16) + 1


def test_the_field_path_tells_events_apart_but_shares_the_spam_bucket() -> None:
    rec = Recorder()
    a = rec.make("Started container main")
    b = rec.make("Started container main")
    b["involvedObject"] = dict(b["involvedObject"], fieldPath="spec.containers{main}")
    assert get_event_key(a) != get_event_key(b)
    assert get_spam_key(a) == get_spam_key(b)
